"""The SPARQL action set: the PyQL functions an LLM calls on a knowledge base.

The docstrings below are what the LLM reads (``pyql docs``); keep them
short, concrete and true. Each action runs on a
:class:`~pyql.sparql_environment.SparqlEnvironment` and returns a
:class:`~pyql.actions.StepResult`.

Example:
    >>> SparqlActions().names[:3]
    ('get_relation', 'add_fact', 'add_type_constrain')
    >>> SparqlActions(["get_relation", "execute"]).names
    ('get_relation', 'execute')
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from grammars.vocabulary import COMPARISON_OPERATORS, SPARQL_ACTION_ORDER
from pyql.action_parser import Arg
from pyql.actions import ActionSet, StepResult, action
from pyql.errors import ArgumentError, QueryError, TermError
from pyql.observation import BoundedRows, Relations
from pyql.query import Query
from pyql.steps import normalize_operator
from pyql.terms import IRI, Literal, Term, Variable, parse_term, resolve_datatype

__all__ = ["SparqlActions", "KBContext", "arg_to_term", "convert_argument", "ORDER"]

#: The order the actions are documented in (the vocabulary's).
ORDER = list(SPARQL_ACTION_ORDER)


class KBContext(Protocol):
    """What a SPARQL action reads from its environment
    (:class:`~pyql.sparql_environment.SparqlEnvironment` offers it)."""

    kb: Any
    query: Query
    question: str | None
    relation_ranker: Callable[[str | None, list[str]], list[str]] | None
    max_relations: int
    max_answers: int
    count_cap: int | None

    @property
    def bounded_rows(self) -> BoundedRows | None:
        """All rows of the current query when they are bounded and known (reused by the next step)."""


def arg_to_term(arg: Arg, profile: Any, role: str = "any") -> Term:
    """A parsed action argument as a term of the profile.

    Raises:
        TermError: when the argument is an operator or text no term form reads.

    Example:
        >>> from pyql.action_parser import parse_action
        >>> from pyql.profiles import FREEBASE
        >>> [arg_to_term(a, FREEBASE) for a in parse_action('f(?x, m.0a, "2011"^^xsd:gYear)').args][2].datatype
        'http://www.w3.org/2001/XMLSchema#gYear'
    """
    kind = arg.kind
    if kind == "variable":
        return Variable(arg.value)
    if kind == "string":
        return Literal(arg.value)
    if kind == "lang_string":
        return Literal(arg.value, lang=arg.lang)
    if kind == "typed":
        return Literal(arg.value, resolve_datatype(arg.datatype or "", profile))
    if kind == "operator":
        raise TermError(f"{arg.raw!r} is an operator, not an entity, variable or value")
    return parse_term(arg.value if kind in ("name", "text") else arg.raw, profile, role)


def convert_argument(profile: Any, kind: str, arg: Arg, action_name: str, name: str, position: int) -> Any:
    """Convert one parsed argument for a parameter kind of a SPARQL action.

    Kinds: "operator" (a comparison operator), "variable", "relation" (a
    relation name or a variable), "node" (an entity, a variable or a value).

    Raises:
        ArgumentError: naming the action, the parameter and what is allowed.

    Example:
        >>> from pyql.action_parser import parse_action
        >>> from pyql.profiles import FREEBASE
        >>> call = parse_action("add_filter(?w, >, 200)")
        >>> convert_argument(FREEBASE, "operator", call.args[1], "add_filter", "op", 1)
        '>'
        >>> convert_argument(FREEBASE, "operator", call.args[0], "add_filter", "op", 1)
        Traceback (most recent call last):
        ...
        pyql.errors.ArgumentError: You used ?w as the operator of add_filter, which is invalid; the operator must be one of >, <, >=, <=, =, !=.
    """

    def fail(message: str) -> ArgumentError:
        return ArgumentError(message, action=action_name, parameter=name, position=position, value=arg.raw)

    if kind == "operator":
        if arg.kind != "operator":
            raise fail(
                f"You used {arg.raw} as the operator of {action_name}, which is invalid; "
                f"the operator must be one of {', '.join(COMPARISON_OPERATORS)}."
            )
        try:
            return normalize_operator(arg.value)
        except QueryError as exc:
            raise fail(str(exc)) from None
    role = "relation" if kind == "relation" else "entity"
    try:
        term = arg_to_term(arg, profile, role)
    except TermError as exc:
        raise fail(f"argument {position + 1} ({name}) of {action_name}: {exc}") from None
    if kind == "variable" and not isinstance(term, Variable):
        raise fail(f"argument {position + 1} ({name}) of {action_name} must be a variable such as ?x, not {arg.raw}")
    if kind == "relation" and not isinstance(term, (IRI, Variable)):
        raise fail(f"argument {position + 1} ({name}) of {action_name} must be a relation such as a.b.c, not {arg.raw}")
    return term


class SparqlActions(ActionSet):
    """The PyQL functions for knowledge bases (SPARQL version)."""

    title = "PyQL actions (SPARQL version)"

    def order(self) -> list[str]:
        return ORDER

    def convert(self, env: KBContext, kind: str, arg: Arg, action_name: str, name: str, position: int) -> Any:
        """Convert one argument for a parameter kind (see :func:`convert_argument`)."""
        return convert_argument(env.kb.profile, kind, arg, action_name, name, position)

    def _observe(self, env: KBContext, query: Any) -> StepResult:
        # One query, or none when only the projection of bounded rows changes (set_answer after add_max).
        observation = env.kb.observe(query, count_cap=env.count_cap, reuse=env.bounded_rows)
        return StepResult(query=query, result=observation, observation=str(observation), empty=observation.is_empty)

    # -- interacting with the KB ---------------------------------------------
    @action("interact", entity_or_variable="node")
    def get_relation(self, env: KBContext, entity_or_variable: Term) -> StepResult:
        """Get the one-hop relations of an entity or a variable.

        The parameter is an entity id (m.02x1bx) of the question or of an earlier result, or a variable (?computer) created by an earlier step. Forward relations go out of it, backward relations come into it.

        Args:
            entity_or_variable: an entity id such as m.0crbvqz, or an existing variable such as ?cyclone.

        Example: get_relation(m.0crbvqz)
        """
        if isinstance(entity_or_variable, Variable):
            # After an argmax, the variable's values come from the rows already read.
            relations = env.kb.relations(entity_or_variable, env.query, reuse=env.bounded_rows)
        else:
            relations = env.kb.relations(entity_or_variable)
        if env.relation_ranker is not None:
            forward = list(relations.forward)
            backward = list(relations.backward)
            if len(forward) > env.max_relations:
                forward = env.relation_ranker(env.question, forward)[: env.max_relations]
            if len(backward) > env.max_relations:
                backward = env.relation_ranker(env.question, backward)[: env.max_relations]
            relations = Relations(tuple(forward), tuple(backward), relations.truncated)
        # An empty list read from a capped sample (only hidden relations in it) is no empty result.
        return StepResult(result=relations, observation=str(relations), empty=relations.is_empty and relations.complete)

    # -- constructing the query ------------------------------------------------
    @action("construct", head="node", relation="relation", tail="node")
    def add_fact(self, env: KBContext, head: Term, relation: Term, tail: Term) -> StepResult:
        """Add a triple pattern (head, relation, tail) to the query.

        Use a relation returned by get_relation; a forward relation of X is written add_fact(X, relation, ?new), a backward one add_fact(?new, relation, X).

        Args:
            head: an entity id or a variable.
            relation: a relation such as meteorology.tropical_cyclone.category.
            tail: an entity id, a variable or a value.

        Example: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)
        """
        return self._observe(env, env.query.add_fact(head, relation, tail))

    @action("construct", type="relation", var="variable")
    def add_type_constrain(self, env: KBContext, type: Term, var: Variable) -> StepResult:
        """Constrain a variable to be of a type.

        Args:
            type: a type such as meteorology.tropical_cyclone.
            var: an existing variable.

        Example: add_type_constrain(meteorology.tropical_cyclone, ?cyclone)
        """
        return self._observe(env, env.query.add_type_constrain(type, var))

    @action("construct", max_var="variable")
    def add_max(self, env: KBContext, max_var: Variable) -> StepResult:
        """Constrain the query to return only the result where max_var is the biggest.

        Args:
            max_var: an existing variable holding numbers or dates.

        Example: add_max(?time)
        """
        # The engine's own order when the KB knows the values are of one kind (an index can answer it).
        return self._observe(env, env.query.add_max(max_var, native=env.kb.native_order(max_var, env.query)))

    @action("construct", min_var="variable")
    def add_min(self, env: KBContext, min_var: Variable) -> StepResult:
        """Constrain the query to return only the result where min_var is the smallest.

        Args:
            min_var: an existing variable holding numbers or dates.

        Example: add_min(?time)
        """
        return self._observe(env, env.query.add_min(min_var, native=env.kb.native_order(min_var, env.query)))

    @action("construct", count_var="variable", new_var="variable")
    def add_count(self, env: KBContext, count_var: Variable, new_var: Variable) -> StepResult:
        """Count the distinct values of count_var and store the number in the new variable new_var.

        Args:
            count_var: an existing variable.
            new_var: a new variable for the count.

        Example: add_count(?cyclone, ?number)
        """
        return self._observe(env, env.query.add_count(count_var, new_var))

    @action("construct", sum_var="variable", new_var="variable")
    def add_sum(self, env: KBContext, sum_var: Variable, new_var: Variable) -> StepResult:
        """Sum the values of sum_var and store the total in the new variable new_var.

        Args:
            sum_var: an existing variable holding numbers.
            new_var: a new variable for the sum.

        Example: add_sum(?fatalities, ?total)
        """
        return self._observe(env, env.query.add_sum(sum_var, new_var))

    @action("construct", avg_var="variable", new_var="variable")
    def add_avg(self, env: KBContext, avg_var: Variable, new_var: Variable) -> StepResult:
        """Average the values of avg_var and store the mean in the new variable new_var.

        Args:
            avg_var: an existing variable holding numbers.
            new_var: a new variable for the average.

        Example: add_avg(?wind, ?mean)
        """
        return self._observe(env, env.query.add_avg(avg_var, new_var))

    @action("construct", ob1="node", op="operator", ob2="node")
    def add_filter(self, env: KBContext, ob1: Term, op: str, ob2: Term) -> StepResult:
        """Add a filter constraint: the result must satisfy "ob1 op ob2".

        ob1 and ob2 can be variables, numbers or dates; op is one of {operators}. For example, if ?length must be greater than 10, use add_filter(?length, >, 10).

        Args:
            ob1: a variable (or a value).
            op: one of {operators}.
            ob2: a variable, a number (10, 0.3) or a date (2005-08-23).

        Example: add_filter(?length, >, 10)
        """
        # The engine's own comparison when the variable's dates all have the literal's type (cheaper per row).
        native = env.kb.native_compare(ob1, ob2, env.query)
        return self._observe(env, env.query.add_filter(ob1, op, ob2, native=native))

    @action(
        "construct",
        var="variable",
        start_relation="relation",
        end_relation="relation",
        start_before="node",
        end_after="node",
    )
    def add_time_constrain(
        self,
        env: KBContext,
        var: Variable,
        start_relation: Term,
        end_relation: Term,
        start_before: Term,
        end_after: Term,
    ) -> StepResult:
        """Keep var only when it was in force at some time between end_after and start_before.

        var has a start date (start_relation) and an end date (end_relation); a missing date counts as open. To ask about the year 2005, use start_before 2005-12-31 and end_after 2005-01-01.

        Args:
            var: an existing variable, e.g. a position held.
            start_relation: the relation to its start date.
            end_relation: the relation to its end date.
            start_before: the latest allowed start date.
            end_after: the earliest allowed end date.

        Example: add_time_constrain(?position, government.government_position_held.from, government.government_position_held.to, 2005-12-31, 2005-01-01)
        """
        return self._observe(
            env, env.query.add_time_constrain(var, start_relation, end_relation, start_before, end_after)
        )

    @action("construct", ob1="node", op="operator", ob2="node")
    def add_compare(self, env: KBContext, ob1: Term, op: str, ob2: Term) -> StepResult:
        """For a yes/no question: check whether "ob1 op ob2" holds; the query then answers yes or no.

        Args:
            ob1: a variable or a value.
            op: one of {operators}.
            ob2: a variable or a value.

        Example: add_compare(?wind1, >, ?wind2)
        """
        query = env.query.add_compare(ob1, op, ob2)
        observation = env.kb.observe(query, count_cap=env.count_cap)
        return StepResult(query=query, result=observation, observation=str(observation))

    @action("construct", answer_var="variable")
    def set_answer(self, env: KBContext, answer_var: Variable) -> StepResult:
        """Set the variable the query returns; it must be an existing variable.

        Args:
            answer_var: an existing variable.

        Example: set_answer(?cyclone)
        """
        return self._observe(env, env.query.set_answer(answer_var))

    @action("terminate")
    def execute(self, env: KBContext) -> StepResult:
        """Run the finished query and get the final answer.

        Use it when you think the query is completely built.

        Example: execute()
        """
        if not env.query.steps:
            raise QueryError("the query is empty; add facts before execute()")
        result = env.kb.execute(env.query, limit=env.max_answers, reuse=env.bounded_rows)
        if result.boolean is not None:
            text = "The answer is " + ("yes" if result.boolean else "no")
            empty = False
        else:
            answers = result.answers()
            text = "The answer is [" + ", ".join(v.display() for v in answers) + "]"
            if result.truncated:
                text += f" (first {len(answers)})"
            empty = not answers
        return StepResult(result=result, observation=text, empty=empty, done=True)
