"""AgentBench's knowledge-graph functions as a pyql action set (``--action-set agentbench``).

The seven functions of AgentBench's knowledge-graph task (THUDM/AgentBench,
``src/server/tasks/knowledgegraph``), with its parameter names
(``TOOLS_PARAM_ORDER``), its variable semantics (each set a call makes is
the next ``#k``) and its preconditions, plus the final answer, which the
task reads from a reply's ``Final Answer: #k`` (here also the terminate
action ``final_answer(#k)``). They run on an
:class:`~pyql.environment.agentbench.AgentBenchEnvironment`, which compiles
each variable to a pyql chain. The docstrings are what a model reads
(``pyql docs --side agentbench``, the agent's prompt and tool schemas).

``union(#a, #b)``, AgentBench's OR, runs as AgentBench's task runs it
(its ``api.py`` has it and the task calls any function of ``api.py`` by
name) but is not offered, as AgentBench's prompt and tool schemas do not
offer it: it is not in :attr:`AgentBenchActions.names`, the docs or the
schemas. Its chain is an ``add_union``.

Example:
    >>> AgentBenchActions().names
    ('get_relations', 'get_neighbors', 'intersection', 'get_attributes', 'argmax', 'argmin', 'count', 'final_answer')
    >>> AgentBenchActions().spec("union").signature
    'union(variable1, variable2)'
"""

from __future__ import annotations

from typing import Any

from grammars.vocabulary import AGENTBENCH_FUNCTIONS as FUNCTIONS
from pyql.action_parser import Arg
from pyql.environment.actions import ActionSet, ActionSpec, StepResult, action
from pyql.errors import ArgumentError, QueryError
from pyql.builder.terms import IRI

__all__ = ["AgentBenchActions", "FINAL_ANSWER", "OBSERVE_MODES", "ORDER"]

#: The terminate action (AgentBench's ``Final Answer: #k``).
FINAL_ANSWER = "final_answer"
#: How a new variable is observed: its values (pyql) or its type only (AgentBench).
OBSERVE_MODES = ("rows", "type")
#: The order the actions are documented in: AgentBench's tools (``union`` left out, as its prompt does), then the final answer.
ORDER = [name for name in FUNCTIONS if name != "union"] + [FINAL_ANSWER]
#: Actions that run when called but are not offered (AgentBench's ``api.py`` has them, its prompt does not).
UNLISTED = ("union",)


def _text(arg: Any) -> str:
    """An argument's text as written (a quoted name without its quotes)."""
    if isinstance(arg, Arg):
        return arg.value if arg.kind in ("string", "text", "name") else arg.raw
    return str(arg)


class AgentBenchActions(ActionSet):
    """AgentBench's knowledge-graph functions (see the module docstring)."""

    title = "AgentBench's knowledge-graph actions"

    def __init__(self, only: Any = None) -> None:
        super().__init__(only)
        self._unlisted = {name: self._specs.pop(name) for name in UNLISTED if name in self._specs}

    def order(self) -> list[str]:
        return ORDER

    def spec(self, name: str) -> ActionSpec:
        """The spec of an action, an unlisted one (``union``) included; an unknown name lists the vocabulary."""
        if name in getattr(self, "_unlisted", {}):
            return self._unlisted[name]
        return super().spec(name)

    def convert(self, env: Any, kind: str, arg: Any, action_name: str, name: str, position: int) -> Any:
        """Read an argument: ``operand`` (a ``#k`` or an entity), ``set`` (a ``#k``), ``relation``.

        Raises:
            ArgumentError: naming the action, the parameter and what is allowed.
        """
        text = _text(arg).strip()
        where = f"argument {position + 1} ({name}) of {action_name}"
        try:
            if kind == "set" or (kind == "operand" and text.startswith("#")):
                return env.variable(text, where)
            if kind == "operand":
                return env.entity(text, where)
            term = env.query.term(text, "relation")
        except ArgumentError as exc:
            raise ArgumentError(str(exc), action=action_name, parameter=name, position=position, value=text) from None
        except QueryError as exc:
            raise ArgumentError(f"{where}: {exc}", action=action_name, parameter=name, position=position, value=text) from None
        if not isinstance(term, IRI) or " " in text:
            raise ArgumentError(
                f"{where} must be a relation such as film.film.directed_by, not {text!r}",
                action=action_name, parameter=name, position=position, value=text,
            )
        return term

    def _made(self, env: Any, var: Any) -> StepResult:
        """The step that makes ``var``: observed by type only, or by the KB's bounded observation of its chain."""
        if env.observe == "type":
            return StepResult(query=var.query, result=_Made(var, None), observation=var.describe())
        observation = env.kb.observe(var.query, count_cap=env.count_cap)
        text = f"{var.describe()}. {observation}"
        return StepResult(query=var.query, result=_Made(var, observation), observation=text, empty=observation.is_empty)

    @action("interact", variable="operand")
    def get_relations(self, env: Any, variable: Any) -> StepResult:
        """Fetches all relations associated with a given entity or variable, which helps in navigating the Knowledge Base (KB) to find useful connections.

        The relations go out of the entity (or of the variable's members): get_neighbors follows one of them.

        Args:
            variable: The entity or variable whose relations are to be fetched: a question entity (by name or id) or a variable #k made earlier.

        Example: get_relations(Gas-generator cycle)
        """
        listed, complete = env.relations_of(variable)
        text = f"[{', '.join(listed)}]"
        if not complete:
            text += " (only a sample of the edges was read; a relation not listed can still be used)"
        return StepResult(result=listed, observation=text, empty=not listed and complete)

    @action("construct", variable="operand", relation="relation")
    def get_neighbors(self, env: Any, variable: Any, relation: IRI) -> StepResult:
        """Returns all entities connected to a given variable through a specified relation, can only be used after identifying valid relations with get_relations().

        The result is a new variable #k: the objects of the relation.

        Args:
            variable: The subject entity or variable to find neighbors for.
            relation: The relationship through which neighbors are connected to the subject, one that get_relations(variable) returned.

        Example: get_neighbors(Gas-generator cycle, spaceflight.rocket_engine_cycle.rocket_engines)
        """
        rel = env.kb.profile.shorten(relation.value)
        if getattr(variable, "is_number", False):
            raise ArgumentError(f"get_neighbors: #{variable.index} is a number (a count), not a set of entities")
        if not env.has_relation(variable, relation):
            listed, _ = env.relations_of(variable)
            shown = ", ".join(listed[:30]) + (f" and {len(listed) - 30} more" if len(listed) > 30 else "")
            raise ArgumentError(
                f"get_neighbors: {rel} is not a relation of {env.key(variable)}; its relations are [{shown}]",
                action="get_neighbors", parameter="relation", position=1, value=rel,
            )
        source = variable.form if hasattr(variable, "form") else env.key(variable)
        made = env.make("join", (relation, variable), env.range_of(relation), f"(JOIN (R {rel}) {source})")
        return self._made(env, made)

    @action("construct", variable1="set", variable2="set")
    def intersection(self, env: Any, variable1: Any, variable2: Any) -> StepResult:
        """Computes the intersection of two sets of entities or variables of the same type.

        Both are variables #k; when the KB gives both their types, they must be the same.

        Args:
            variable1: The first set of entities or a variable.
            variable2: The second set of entities or a variable.

        Example: intersection(#0, #1)
        """
        return self._combine(env, "intersection", "and", variable1, variable2)

    @action("construct", variable1="set", variable2="set")
    def union(self, env: Any, variable1: Any, variable2: Any) -> StepResult:
        """Computes the union of two sets of entities or variables of the same type (AgentBench's api.py; not in its prompt).

        Both are variables #k; when the KB gives both their types, they must be the same.

        Args:
            variable1: The first set of entities or a variable.
            variable2: The second set of entities or a variable.

        Example: union(#0, #1)
        """
        return self._combine(env, "union", "or", variable1, variable2)

    def _combine(self, env: Any, name: str, op: str, variable1: Any, variable2: Any) -> StepResult:
        """``intersection``/``union``: two sets of the same type made into ``(AND ...)``/``(OR ...)``."""
        for var in (variable1, variable2):
            if var.is_number:
                raise ArgumentError(f"{name}: #{var.index} is a number (a count), not a set of entities")
        if variable1.type and variable2.type and variable1.type != variable2.type:
            raise ArgumentError(
                f"{name}: two variables must have the same type; #{variable1.index} are instances of "
                f"{variable1.type}, #{variable2.index} of {variable2.type}"
            )
        form = f"({op.upper()} {variable1.form} {variable2.form})"
        return self._made(env, env.make(op, (variable1, variable2), variable1.type or variable2.type, form))

    @action("interact", variable="set")
    def get_attributes(self, env: Any, variable: Any) -> StepResult:
        """Retrieves all numerical attributes of a given variable, especially valuable when seeking for entities with extreme attributes (max or min).

        Attributes are the variable's relations whose values are numbers or dates.

        Args:
            variable: The variable whose numerical attributes are to be fetched.

        Example: get_attributes(#0)
        """
        if variable.is_number:
            raise ArgumentError(f"get_attributes: #{variable.index} is a number (a count), not a set of entities")
        found = env.attributes_of(variable)
        return StepResult(result=found, observation=f"[{', '.join(found)}]", empty=not found)

    def _superlative(self, env: Any, op: str, variable: Any, attribute: IRI) -> StepResult:
        name = env.kb.profile.shorten(attribute.value)
        if variable.is_number:
            raise ArgumentError(f"{op}: #{variable.index} is a number (a count), not a set of entities")
        found = env.attributes_of(variable)
        if name not in found:
            raise ArgumentError(
                f"{op}: attribute must be an attribute of the variable; {name} is not one of #{variable.index}'s [{', '.join(found)}]",
                action=op, parameter="attribute", position=1, value=name,
            )
        made = env.make(op, (variable, attribute), variable.type, f"({op.upper()} {variable.form} {name})")
        return self._made(env, made)

    @action("construct", variable="set", attribute="relation")
    def argmax(self, env: Any, variable: Any, attribute: IRI) -> StepResult:
        """Finds the entity with the maximum value of the specified attribute, can be used after identifying valid attributes with get_attributes().

        Args:
            variable: The variable or set of entities among which to find the maximum.
            attribute: The attribute to maximize over the entities, one that get_attributes(variable) returned.

        Example: argmax(#0, meteorology.tropical_cyclone.direct_fatalities)
        """
        return self._superlative(env, "argmax", variable, attribute)

    @action("construct", variable="set", attribute="relation")
    def argmin(self, env: Any, variable: Any, attribute: IRI) -> StepResult:
        """Finds the entity with the minimum value of the specified attribute, can be used after identifying valid attributes with get_attributes().

        Args:
            variable: The variable or set of entities among which to find the minimum.
            attribute: The attribute to minimize over the entities, one that get_attributes(variable) returned.

        Example: argmin(#0, meteorology.tropical_cyclone.lowest_pressure)
        """
        return self._superlative(env, "argmin", variable, attribute)

    @action("construct", variable="set")
    def count(self, env: Any, variable: Any) -> StepResult:
        """Counts the number of entities within a given variable.

        The result is a new variable #k holding a number.

        Args:
            variable: The variable or set of entities to count.

        Example: count(#0)
        """
        if variable.is_number:
            raise ArgumentError(f"count: #{variable.index} is a number (a count), not a set of entities")
        return self._made(env, env.make("count", (variable,), "type.int", f"(COUNT {variable.form})"))

    @action("terminate", variable="set")
    def final_answer(self, env: Any, variable: Any) -> StepResult:
        """Answer the question with a variable: write Final Answer: #k (or call final_answer(#k)).

        Once you identify the final answer, respond with 'Final Answer: #id', where id is the variable you determine to be the answer.

        Args:
            variable: the variable #k that answers the question.

        Example: Final Answer: #3
        """
        result = env.kb.execute(variable.query, limit=env.max_answers)
        answers = result.answers()
        text = "The answer is [" + ", ".join(v.display() for v in answers) + "]"
        if result.truncated:
            text += f" (first {len(answers)})"
        return StepResult(query=variable.query, result=result, observation=text, empty=not answers, done=True)


class _Made:
    """What a step that made a variable returns: the variable, and its observation (None: type only)."""

    def __init__(self, variable: Any, observation: Any) -> None:
        self.variable = variable
        self.observation = observation

    @property
    def rows(self) -> Any:
        return getattr(self.observation, "rows", None)
