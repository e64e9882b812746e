"""The step environment of AgentBench's knowledge-graph actions: ``#k`` variables compiled to pyql chains.

AgentBench's knowledge-graph task (THUDM/AgentBench,
``src/server/tasks/knowledgegraph``) lets a model build sets of entities
one call at a time; each set is a variable ``#0``, ``#1``, ... numbered in
the order the calls made them, and ``Final Answer: #k`` answers with one.
:class:`AgentBenchEnvironment` runs those calls
(:class:`~pyql.environment.agentbench_actions.AgentBenchActions`) on any pyql KB: every
variable is a :class:`BenchVariable` whose chain (a :class:`~pyql.builder.query.Query`)
is compiled from the variables it was made from, and whose S-expression is
the one AgentBench's ``api.py`` builds (what :mod:`pyql.interchange.agentbench`
reads). A step observes the new variable through the KB's bounded
observation path (:meth:`pyql.kb.KB.observe`), so no step costs more than
a pyql step; with ``observe="type"`` the model sees what AgentBench shows,
the variable's type only ("variable #0, which are instances of film.film"),
and the set is not run until the final answer.

Types: a variable made by ``get_neighbors(x, r)`` has the range of ``r``
when the KB states it (Freebase's ``type.property.expected_type``, else
``rdfs:range``); ``intersection`` refuses two variables of different known
types, as AgentBench does, and lets them through when a type is unknown
(a KB without ranges: the check is skipped, and the observation says the
type is not given). ``argmax``/``argmin`` keep their operand's type and
``count`` makes a number (``type.int``) that only ``Final Answer`` takes.

A variable made by ``argmax``/``argmin`` and used again (its neighbors, an
intersection) becomes a sub-query (``add_sub_query``): its order and
``LIMIT 1`` stay inside it, so the outer chain gets the top entity.

Example:
    >>> from pyql.kb import KB
    >>> env = AgentBenchEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> env.step("get_relations(Tropical Storm Rachel)").observation[:40]
    '[meteorology.tropical_cyclone.category, '
    >>> env.step("get_neighbors(Tropical Storm Rachel, meteorology.tropical_cyclone.category)").observation
    "variable #0, whose type the KB does not give. The value of variable ?v0 is ['Tropical storm (SSHS)' (m.05f4r3k)]"
    >>> env.variables[0].form
    '(JOIN (R meteorology.tropical_cyclone.category) m.0crbvqz)'
    >>> env.step("Final Answer: #0").observation
    "The answer is ['Tropical storm (SSHS)' (m.05f4r3k)]"
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from pyql.action_parser import ActionCall, Arg, parse_action  # noqa: F401 (parse_action: the doctests use it)
from pyql.environment.agentbench_actions import FINAL_ANSWER, OBSERVE_MODES, AgentBenchActions
from pyql.environment import Analyzer, Environment, FinalResult, StepRecord
from pyql.errors import ArgumentError, PyQLError, QueryError
from pyql.kb import probes
from pyql.kb.observation import ResultSet, Value
from pyql.builder.profiles import RDFS
from pyql.builder.query import Query
from pyql.builder.terms import IRI, Term, Variable

__all__ = ["AgentBenchEnvironment", "BenchVariable", "NUMBER_TYPE", "RANGE_RELATIONS"]

#: The type of a ``count`` variable, as AgentBench names it.
NUMBER_TYPE = "type.int"
#: The relation that gives a relation's range, by profile (others: ``rdfs:range``).
RANGE_RELATIONS: dict[str, str] = {"freebase": "type.property.expected_type"}
_RDFS_RANGE = "<http://www.w3.org/2000/01/rdf-schema#range>"
#: ``Final Answer: #k`` (``Find Answer`` too), as the task reads a reply.
_FINAL = re.compile(r"(?:Find|Final)\s+Answer\s*:\s*(#\s*\d+|\S+)")
#: Lines of a pasted trajectory that are no actions (skipped by ``pyql run``).
NOT_ACTIONS = ("Thought", "Observation", "Question", "Entities")


@dataclass(frozen=True)
class BenchVariable:
    """One AgentBench variable ``#index``: how it was made, its type, its S-expression and its chain.

    Attributes:
        index: k of ``#k``.
        op: ``join`` (get_neighbors), ``and`` (intersection), ``or`` (union), ``argmax``, ``argmin`` or ``count``.
        args: join: (relation, entity or variable); and, or: (variable, variable);
            argmax/argmin: (variable, attribute); count: (variable,).
        type: its type (a class name such as ``film.film``), None when the KB does not give it.
        form: the S-expression AgentBench builds for it.
        query: its chain; the answer variable is ``?v{index}``.
    """

    index: int
    op: str
    args: tuple[Any, ...]
    type: str | None
    form: str
    query: Query

    @property
    def is_number(self) -> bool:
        """A count: a number, not a set of entities."""
        return self.op == "count"

    def describe(self) -> str:
        """``variable #k, which are instances of T`` (AgentBench's observation, without ``Observation:``).

        Example:
            >>> BenchVariable(2, "count", (), NUMBER_TYPE, "(COUNT x)", Query()).describe()
            'variable #2, which is a number'
        """
        if self.is_number:
            return f"variable #{self.index}, which is a number"
        if self.type is None:
            return f"variable #{self.index}, whose type the KB does not give"
        return f"variable #{self.index}, which are instances of {self.type}"


class _Chain:
    """Compiles a variable's derivation into one query (see the module docstring), fresh names ``?v{k}``, ``?v{k}_2``."""

    def __init__(self, profile: Any, native: Callable[[Variable, Query], bool], used: Counter[int] | None = None) -> None:
        self.query = Query(profile)
        self.native = native
        self.used: Counter[int] = used if used is not None else Counter()

    def name(self, var: BenchVariable) -> Variable:
        self.used[var.index] += 1
        n = self.used[var.index]
        return Variable(f"v{var.index}" if n == 1 else f"v{var.index}_{n}")

    def into(self, var: BenchVariable, target: Variable) -> None:
        """Add the steps that make ``target`` a member of ``var``'s set."""
        if var.op == "join":
            relation, source = var.args
            if isinstance(source, BenchVariable):
                held = self.name(source)
                self.into(source, held)
                source = held
            self.query = self.query.add_fact(source, relation, target)
        elif var.op == "and":
            for operand in var.args:
                self.into(operand, target)
        elif var.op == "or":
            branches = []
            for operand in var.args:
                inner = _Chain(self.query.profile, self.native, self.used)
                inner.into(operand, target)
                branches.append(inner.query)
            self.query = self.query.add_union(target, *branches)
        elif var.op in ("argmax", "argmin"):
            inner = _Chain(self.query.profile, self.native, self.used)
            self.query = self.query.add_sub_query(inner.top(var, target))
        else:
            raise QueryError(f"#{var.index} is a number (a count), not a set of entities")

    def top(self, var: BenchVariable, answer: Variable) -> Query:
        """The chain whose answer ``answer`` is ``var`` itself."""
        if var.op == "count":
            counted = self.name(var.args[0])
            self.into(var.args[0], counted)
            return self.query.add_count(counted, answer)
        if var.op in ("argmax", "argmin"):
            operand, attribute = var.args
            self.into(operand, answer)
            value = Variable(f"{answer.name}_value")
            self.query = self.query.add_fact(answer, attribute, value)
            order = self.query.add_max if var.op == "argmax" else self.query.add_min
            return order(value, native=self.native(value, self.query)).set_answer(answer)
        self.into(var, answer)
        return self.query.set_answer(answer)


class AgentBenchEnvironment(Environment):
    """The step environment of AgentBench's knowledge-graph actions on a KB.

    Args:
        kb: the knowledge base.
        question: the question, if any.
        entities: the question's entities, name → id (AgentBench names them; an argument may be the name or the id).
        analyzer: a correction analyzer, or None (ERASER has no rules for this side: it leaves steps as they are).
        observe: "rows" (the default: pyql's observation of the new variable's chain, its values) or
            "type" (AgentBench's: its type only; the set runs at the final answer).
        max_answers: answers the final answer returns at most.
        undo_empty: without an analyzer, whether an empty set fails the step (rows mode).
        count_cap: distinct values an observation counts exactly (default: the KB's).
        run_advice, escalate: see :class:`pyql.environment.Environment`.

    Raises:
        QueryError: an unknown observe mode.
    """

    side: ClassVar[str] = "agentbench"
    language: ClassVar[str] = "sparql"

    def __init__(
        self,
        kb: Any,
        question: str | None = None,
        entities: Mapping[str, str] | None = None,
        analyzer: Analyzer | None = None,
        observe: str = "rows",
        max_answers: int = 1000,
        undo_empty: bool = True,
        count_cap: int | None = None,
        *,
        run_advice: bool = True,
        escalate: bool = True,
    ) -> None:
        if observe not in OBSERVE_MODES:
            raise QueryError(f"unknown observe mode {observe!r}; use one of {', '.join(OBSERVE_MODES)}")
        self.kb = kb
        self.observe = observe
        self.max_answers = max_answers
        self.count_cap = count_cap
        self.variables: list[BenchVariable] = []
        self.relation_lists: dict[str, tuple[tuple[str, ...], bool]] = {}
        self.attribute_lists: dict[int, tuple[str, ...]] = {}
        self._ranges: dict[str, str | None] = {}
        self._kinds: dict[str, bool] = {}
        super().__init__(AgentBenchActions(), question, entities, analyzer, undo_empty, run_advice=run_advice, escalate=escalate)

    def fork_state(self, twin: Any) -> None:
        """A fork has its own variables (``#k`` of one fork is not another's) and the relation lists read of them;
        the KB's own facts (ranges, value kinds) are shared.

        Example:
            >>> from pyql.kb import KB
            >>> env = AgentBenchEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
            >>> twin = env.fork()
            >>> twin.step("get_neighbors(Rachel, meteorology.tropical_cyclone.category)").ok, len(twin.variables), len(env.variables)
            (True, 1, 0)
        """
        super().fork_state(twin)
        twin.variables = list(self.variables)
        twin.relation_lists = dict(self.relation_lists)
        twin.attribute_lists = dict(self.attribute_lists)

    def empty_query(self) -> Query:
        return Query(self.kb.profile)

    def backend_counters(self) -> tuple[int, float]:
        return (self.kb.stats.queries, self.kb.stats.seconds)

    # -- reading the model's text ----------------------------------------------
    def step(self, text: str | ActionCall) -> StepRecord:
        """Run one call; ``Final Answer: #k`` (as AgentBench reads a reply) is ``final_answer(#k)``."""
        if isinstance(text, str):
            said = text.split("Observation")[0] if not text.lstrip().startswith("Observation") else text
            final = _FINAL.search(said.replace("\\_", "_"))
            if final:
                arg = Arg("text", final.group(1).replace(" ", ""), raw=final.group(1))
                return super().step(ActionCall(FINAL_ANSWER, (arg,), text=f"Final Answer: {final.group(1)}"))
        return super().step(text)

    def arguments(self, call: ActionCall) -> list[Arg]:
        """The call's arguments; for a two-parameter call, a name with commas is what comes before the last one.

        Example:
            >>> from pyql.kb import KB
            >>> env = AgentBenchEnvironment(KB.open("demo"))
            >>> [a.raw for a in env.arguments(parse_action("get_neighbors(Tom, Dick and Harry, a.b.c)"))]
            ['Tom, Dick and Harry', 'a.b.c']
        """
        args = list(call.args)
        if call.name not in self.actions.names or len(args) <= 2:
            return args
        params = self.actions.spec(call.name).params
        if len(params) != 2 or params[0].kind != "operand":  # only an entity's name may hold commas
            return args
        joined = ", ".join(a.raw for a in args[:-1])
        return [Arg("text", joined, raw=joined), args[-1]]

    # -- operands --------------------------------------------------------------
    def variable(self, text: str, where: str) -> BenchVariable:
        """The variable ``#k`` names, or an ArgumentError saying which exist."""
        match = re.fullmatch(r"#\s*(\d+)", text.strip())
        if not match:
            raise ArgumentError(f"{where} must be a variable #k made by an earlier call, not {text!r}")
        index = int(match.group(1))
        if index >= len(self.variables):
            made = f"#0 to #{len(self.variables) - 1}" if self.variables else "none yet"
            raise ArgumentError(f"{where}: #{index} does not exist (variables made so far: {made})")
        return self.variables[index]

    def entity(self, text: str, where: str) -> IRI:
        """A question entity by name, or an entity id, as the task's environment reads an argument."""
        name = text.strip()
        ident = self.memory.entities.get(name, name)
        try:
            term: Term | None = self.query.term(ident, "entity")
        except PyQLError:
            term = None
        if not isinstance(term, IRI) or " " in ident:
            names = ", ".join(sorted(self.memory.entities)) or "none given"
            raise ArgumentError(
                f"{where}: {name!r} is neither a variable #k, a question entity ({names}) nor an entity id such as m.0crbvqz"
            )
        return term

    def key(self, operand: BenchVariable | IRI) -> str:
        """The cache key of an operand: ``#k`` or the entity's short id."""
        if isinstance(operand, BenchVariable):
            return f"#{operand.index}"
        return self.kb.profile.shorten(operand.value)

    # -- what the KB says ------------------------------------------------------
    def relations_of(self, operand: BenchVariable | IRI) -> tuple[tuple[str, ...], bool]:
        """The relations out of an entity or a variable's members (one bounded query, cached), and whether complete;
        labels left out (:meth:`is_label`)."""
        key = self.key(operand)
        if key not in self.relation_lists:
            if isinstance(operand, BenchVariable):
                found = self.kb.relations(Variable(f"v{operand.index}"), operand.query)
            else:
                found = self.kb.relations(operand)
            self.relation_lists[key] = (tuple(r for r in found.forward if not self.is_label(r)), found.complete)
        return self.relation_lists[key]

    def is_label(self, relation: str) -> bool:
        """Whether a relation (as the profile shortens it) gives names: ``rdfs:label`` or a label predicate of the profile
        (Freebase's ``type.object.name``). AgentBench's ``get_relations`` lists the KB's schema relations only, never a
        label, so neither lists nor follows one here.

        Example:
            >>> from pyql.kb import KB
            >>> env = AgentBenchEnvironment(KB.open("demo"))
            >>> env.is_label("rdfs:label"), env.is_label("type.object.name"), env.is_label("meteorology.tropical_cyclone.category")
            (True, True, False)
        """
        profile = self.kb.profile
        return relation in {profile.shorten(p) for p in (*profile.label_predicates, RDFS + "label")}

    def has_relation(self, operand: BenchVariable | IRI, relation: IRI) -> bool:
        """Whether the relation goes out of the operand: listed, or (a list read from a sample) one bounded ASK; never a label."""
        listed, complete = self.relations_of(operand)
        if self.kb.profile.shorten(relation.value) in listed:
            return True
        if complete or self.is_label(self.kb.profile.shorten(relation.value)):
            return False
        if isinstance(operand, BenchVariable):
            return bool(self.kb.has_relation(Variable(f"v{operand.index}"), relation, "forward", operand.query))
        return bool(self.kb.has_relation(operand, relation, "forward"))

    def attributes_of(self, var: BenchVariable) -> tuple[str, ...]:
        """The relations of a variable whose values are numbers or dates (cached)."""
        if var.index not in self.attribute_lists:
            listed, _ = self.relations_of(var)
            self.attribute_lists[var.index] = tuple(r for r in listed if self.is_attribute(r))
        return self.attribute_lists[var.index]

    def is_attribute(self, relation: str) -> bool:
        """Whether a relation's values are numbers or dates (its first 20 edges read, one bounded query, cached)."""
        if relation not in self._kinds:
            iri = self.query.term(relation, "relation")
            rows = self.kb.select(probes.value_kinds_query(iri, self.kb.profile, 20))
            kinds, _ = probes.read_value_kinds(rows, 20)
            self._kinds[relation] = bool(kinds) and all(k in probes.NATIVE_ORDER_KINDS for k in kinds)
        return self._kinds[relation]

    def range_of(self, relation: IRI) -> str | None:
        """The type a relation leads to, when the KB states it (one bounded query, cached); None otherwise."""
        key = relation.value
        if key not in self._ranges:
            profile = self.kb.profile
            predicate = RANGE_RELATIONS.get(profile.name, _RDFS_RANGE)
            query = Query(profile).add_fact(relation, predicate, "?range").set_answer("?range")
            found = [v for v in self.kb.execute(query, limit=1).answers() if isinstance(v.term, IRI)]
            self._ranges[key] = profile.shorten(found[0].term.value) if found else None
        return self._ranges[key]

    # -- making variables --------------------------------------------------------
    def make(self, op: str, args: tuple[Any, ...], type: str | None, form: str) -> BenchVariable:
        """The next variable (not kept until the step is), its chain compiled."""
        index = len(self.variables)
        draft = BenchVariable(index, op, args, type, form, Query(self.kb.profile))
        query = _Chain(self.kb.profile, self.kb.native_order).top(draft, Variable(f"v{index}"))
        return BenchVariable(index, op, args, type, form, query)

    def remember(self, record: StepRecord) -> None:
        super().remember(record)
        made = getattr(record.result, "variable", None)
        if isinstance(made, BenchVariable) and made.index == len(self.variables):
            self.variables.append(made)

    def answers(self) -> list[Value]:
        """The answers after the final answer (empty before)."""
        return self.final.answers() if isinstance(self.final, ResultSet) else []

    def final_result(self) -> FinalResult:
        """The answers and the SPARQL of the chain answered with (of the last variable before that)."""
        return FinalResult([v.to_dict() for v in self.answers()], self.language, self.query.sparql())


def short(term: Term, profile: Any) -> str:
    """A term as an S-expression writes it: an IRI by its short name.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> short(IRI("http://rdf.freebase.com/ns/m.0a"), FREEBASE)
        'm.0a'
    """
    return profile.shorten(term.value) if isinstance(term, IRI) else str(term)
