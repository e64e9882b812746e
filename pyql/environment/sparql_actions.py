"""The SPARQL action set: the PyQL functions an LLM calls on a knowledge base.

The docstrings below are what the LLM reads (``pyql docs``); keep them
short, concrete and true. Each action runs on a
:class:`~pyql.environment.sparql.SparqlEnvironment` and returns a
:class:`~pyql.environment.actions.StepResult`.

Example:
    >>> SparqlActions().names[:3]
    ('get_relation', 'add_fact', 'add_type_constrain')
    >>> SparqlActions(["get_relation", "execute"]).names
    ('get_relation', 'execute')
"""

from __future__ import annotations

import dataclasses
import importlib
from contextvars import ContextVar
from typing import Any, Callable, Mapping, Protocol

from grammars.vocabulary import (
    COMPARISON_OPERATORS,
    EXPRESSION_FUNCTIONS,
    MARKQA_ACTION_ORDER,
    MAX_EXPRESSION_DEPTH,
    SPARQL_ACTION_ORDER,
    SPARQL_ALL_ACTIONS,
)
from pyql.action_parser import Arg, parse_action
from pyql.environment.actions import ActionSet, ActionSpec, StepResult, action
from pyql.errors import ArgumentError, PyQLError, QueryError, TermError
from pyql.kb.observation import BoundedRows, Relations
from pyql.builder.query import Query
from pyql.builder.steps import normalize_operator
from pyql.builder.terms import IRI, Literal, Term, Variable, parse_term, resolve_datatype

__all__ = ["SparqlActions", "KBContext", "arg_to_term", "convert_argument", "markqa_argument", "ORDER", "MARKQA_KINDS"]

#: The order the actions are documented in (the vocabulary's): the default ones, MarkQA's, execute.
ORDER = list(SPARQL_ALL_ACTIONS)

#: Parameter kinds of MarkQA's actions (see :func:`markqa_argument`).
MARKQA_KINDS = ("markqa", "flag", "time", "expression", "values", "whole")
#: How deep ``query(...)`` arguments may nest (a sub-query of a sub-query ...).
MAX_SUB_QUERY_DEPTH = 8
_SUB_QUERY_DEPTH: ContextVar[int] = ContextVar("pyql_sub_query_depth", default=0)


class KBContext(Protocol):
    """What a SPARQL action reads from its environment
    (:class:`~pyql.environment.sparql.SparqlEnvironment` offers it)."""

    kb: Any
    query: Query
    question: str | None
    relation_ranker: Callable[[str | None, list[str]], list[str]] | None
    max_relations: int
    max_answers: int
    count_cap: int | None
    #: False while a step is only tried (choose mode's check of a candidate): observations skip the quantity look-up.
    describe_quantities: bool

    @property
    def bounded_rows(self) -> BoundedRows | None:
        """All rows of the current query when they are bounded and known (reused by the next step)."""

    @property
    def looked(self) -> Mapping[Term, Relations]:
        """Relations of entities already read for the coming looks (a look at one of them sends no query)."""


def arg_to_term(arg: Arg, profile: Any, role: str = "any") -> Term:
    """A parsed action argument as a term of the profile.

    Raises:
        TermError: when the argument is an operator or text no term form reads.

    Example:
        >>> from pyql.action_parser import parse_action
        >>> from pyql.builder.profiles import FREEBASE
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
        >>> from pyql.builder.profiles import FREEBASE
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

    if kind == "query":
        try:
            return sub_query_argument(profile, arg)
        except (QueryError, TermError) as exc:
            raise fail(f"argument {position + 1} ({name}) of {action_name}: {exc}") from None
    if kind in MARKQA_KINDS:
        try:
            return markqa_argument(kind, arg)
        except (QueryError, TermError) as exc:
            raise fail(f"argument {position + 1} ({name}) of {action_name}: {exc}") from None
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


def _markqa_text(arg: Arg) -> str:
    """An argument as MarkQA's functions read it: ``?x`` for a variable, a string's text, else as written."""
    if arg.kind == "variable":
        return "?" + arg.value
    return arg.value if arg.kind == "string" else arg.raw


def _expression(arg: Arg, depth: int) -> Any:
    """An expression argument: MarkQA's functions nested as calls, built by :mod:`pyql.builder.expressions`."""
    if depth > MAX_EXPRESSION_DEPTH:
        raise QueryError(f"the expression nests deeper than {MAX_EXPRESSION_DEPTH} calls; bind a part to a variable first")
    if arg.kind != "text":
        return _markqa_text(arg)
    try:
        call = parse_action(arg.raw)
    except Exception:
        raise QueryError(f"{arg.raw!r} is not an expression; write e.g. mul(div(sub(?b, ?a), ?a), 100)") from None
    if call.name not in EXPRESSION_FUNCTIONS:
        raise QueryError(f"unknown expression function {call.name!r}; use one of {', '.join(EXPRESSION_FUNCTIONS)}")
    try:
        functions = importlib.import_module("pyql.builder.expressions")
    except ImportError:  # pragma: no cover - the module comes with issue 21's expression tree
        raise QueryError("expressions need pyql.builder.expressions, which this installation lacks") from None
    operands = [_expression(a, depth + 1) for a in call.args]
    try:
        return getattr(functions, call.name)(*operands)
    except TypeError:
        raise QueryError(f"{call.name}() does not take {len(operands)} operand(s)") from None


def markqa_argument(kind: str, arg: Arg) -> Any:
    """Convert an argument of one of MarkQA's actions (the query method then reads it as MarkQA does).

    Kinds: "markqa" (an id, a variable, a name: its text), "flag" (true/false),
    "time" (a year, a date, a variable, true/false), "expression" (nested
    calls of MarkQA's expression functions), "values" (``(Q1, Q2)``).

    Raises:
        QueryError: for a value of the wrong shape, an unknown function, an expression nested too deep.

    Example:
        >>> markqa_argument("values", parse_action("f((Q1, Q2))").args[0])
        ['Q1', 'Q2']
        >>> markqa_argument("time", parse_action("f(2011)").args[0])
        2011
    """
    text = _markqa_text(arg)
    if kind in ("flag", "time") and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "flag":
        raise QueryError(f"{arg.raw!r} is not true or false")
    if kind == "time" and arg.kind == "number" and text.isdigit():
        return int(text)
    if kind == "expression":
        return _expression(arg, 1)
    if kind == "whole":
        if text.lower() == "none":
            return None
        if arg.kind != "number" or not text.isdigit():
            raise QueryError(f"{arg.raw!r} is not a whole number such as 0, 1 or 3")
        return int(text)
    if kind == "values":
        inner = arg.raw.strip()
        if not (inner.startswith("(") and inner.endswith(")")):
            raise QueryError(f"write the values in parentheses, e.g. (Q319, Q2347978), not {arg.raw!r}")
        return [_markqa_text(a) for a in parse_action("values" + inner).args]
    return text


def sub_query_argument(profile: Any, arg: Arg) -> Query:
    """A sub-query written as ``query(action, action, ...)``: its action lines replayed on a new query.

    Only actions that build the query are allowed inside; sub-queries may
    nest up to :data:`MAX_SUB_QUERY_DEPTH` levels.

    Raises:
        QueryError: not a ``query(...)``, an action that does not build the
            query, or one the query cannot take (naming it).

    Example:
        >>> from pyql.builder.profiles import WIKIDATA
        >>> arg = parse_action("add_sub_query(query(add_quantity(Q64, P1082, ?pop), add_max(?pop)))").args[0]
        >>> sub_query_argument(WIKIDATA, arg).actions()
        ['add_quantity(wd:Q64, P1082, ?pop)', 'add_max(?pop)']
    """
    try:
        call = parse_action(arg.raw) if arg.kind == "text" else None
    except Exception:
        call = None
    if call is None or call.name != "query" or not call.args:
        raise QueryError(f"write a sub-query as query(action, action, ...), e.g. query(add_quantity(Q64, P1082, ?pop)), not {arg.raw!r}")
    depth = _SUB_QUERY_DEPTH.get() + 1
    if depth > MAX_SUB_QUERY_DEPTH:
        raise QueryError(f"sub-queries nest deeper than {MAX_SUB_QUERY_DEPTH} levels; join fewer levels")
    token = _SUB_QUERY_DEPTH.set(depth)
    try:
        return _replay(profile, call.args)
    finally:
        _SUB_QUERY_DEPTH.reset(token)


def _replay(profile: Any, lines: tuple[Arg, ...]) -> Query:
    """The query the actions of a ``query(...)`` build, each converted as its action converts it."""
    actions = _all_actions()
    query = Query(profile)
    for number, line in enumerate(lines, 1):
        try:
            inner = parse_action(line.raw)
        except Exception:
            raise QueryError(f"action {number} of the sub-query, {line.raw!r}, is not an action call") from None
        try:
            spec = actions.check_arity(inner.name, len(inner.args))
            if spec.kind != "construct":
                raise QueryError(f"a sub-query holds actions that build a query; {inner.name} does not")
            params = zip(spec.params, inner.args)
            query = getattr(query, inner.name)(*[convert_argument(profile, p.kind, a, inner.name, p.name, i) for i, (p, a) in enumerate(params)])
        except PyQLError as exc:
            raise QueryError(f"action {number} of the sub-query ({line.raw}): {exc}") from None
    return query


_ALL: list[Any] = []


def _all_actions() -> Any:
    """Every SPARQL action (MarkQA's included), made once."""
    if not _ALL:
        _ALL.append(SparqlActions(SPARQL_ALL_ACTIONS))
    return _ALL[0]


def _without_markqa_extras(spec: ActionSpec) -> ActionSpec:
    """The spec without its optional parameters of MarkQA's kinds (those QueryAgent's action has not)."""
    params = tuple(p for p in spec.params if p.required or p.kind not in MARKQA_KINDS)
    return spec if params == spec.params else dataclasses.replace(spec, params=params)


class SparqlActions(ActionSet):
    """The PyQL functions for knowledge bases (SPARQL version)."""

    title = "PyQL actions (SPARQL version)"

    def __init__(self, only: Any = None) -> None:
        # The default set is QueryAgent's; MarkQA's actions are offered by name (SPARQL_ALL_ACTIONS: all).
        super().__init__(SPARQL_ACTION_ORDER if only is None else only)
        if not any(name in MARKQA_ACTION_ORDER for name in self.names):
            # Without MarkQA's actions, QueryAgent's add_max(max_var), add_count(count_var, new_var) ...
            # keep their own signatures: MarkQA's optional extras (return_obj, offset, limit, group_obj) go.
            self._specs = {name: _without_markqa_extras(spec) for name, spec in self._specs.items()}

    def order(self) -> list[str]:
        return ORDER

    def convert(self, env: KBContext, kind: str, arg: Arg, action_name: str, name: str, position: int) -> Any:
        """Convert one argument for a parameter kind (see :func:`convert_argument`)."""
        return convert_argument(env.kb.profile, kind, arg, action_name, name, position)

    def _observe(self, env: KBContext, query: Any) -> StepResult:
        # One query, or none when only the projection of bounded rows changes (set_answer after add_max).
        observation = env.kb.observe(
            query, count_cap=env.count_cap, reuse=env.bounded_rows, describe_quantities=env.describe_quantities
        )
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
            looked = env.looked.get(entity_or_variable)  # read ahead with other entities' (choose mode's looks)
            relations = looked if looked is not None else env.kb.relations(entity_or_variable)
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

    @action("construct", max_var="variable", return_obj="markqa", offset="whole", limit="whole", ties="flag")
    def add_max(
        self, env: KBContext, max_var: Variable, return_obj: Any = None, offset: int = 0, limit: int | None = 1, ties: bool = False
    ) -> StepResult:
        """Constrain the query to return only the result where max_var is the biggest.

        Args:
            max_var: an existing variable holding numbers or dates.
            return_obj: optional (MarkQA's): the variable returned afterwards.
            offset: optional: rows skipped first (the third largest: 2).
            limit: optional: rows kept (default 1; none keeps all).
            ties: optional: true keeps every row whose max_var equals the largest value (offset 0, limit 1), not one.

        Example: add_max(?time)
        """
        # The engine's own order when the KB knows the values are of one kind (an index can answer it).
        native = env.kb.native_order(max_var, env.query)
        return self._observe(env, env.query.add_max(max_var, return_obj, offset, limit, ties, native=native))

    @action("construct", min_var="variable", return_obj="markqa", offset="whole", limit="whole", ties="flag")
    def add_min(
        self, env: KBContext, min_var: Variable, return_obj: Any = None, offset: int = 0, limit: int | None = 1, ties: bool = False
    ) -> StepResult:
        """Constrain the query to return only the result where min_var is the smallest.

        Args:
            min_var: an existing variable holding numbers or dates.
            return_obj: optional (MarkQA's): the variable returned afterwards.
            offset: optional: rows skipped first.
            limit: optional: rows kept (default 1; none keeps all).
            ties: optional: true keeps every row whose min_var equals the smallest value (offset 0, limit 1), not one.

        Example: add_min(?time)
        """
        native = env.kb.native_order(min_var, env.query)
        return self._observe(env, env.query.add_min(min_var, return_obj, offset, limit, ties, native=native))

    @action("construct", count_var="variable", new_var="variable", group_obj="markqa")
    def add_count(self, env: KBContext, count_var: Variable, new_var: Variable, group_obj: Any = None) -> StepResult:
        """Count the distinct values of count_var and store the number in the new variable new_var.

        Args:
            count_var: an existing variable.
            new_var: a new variable for the count.
            group_obj: optional (MarkQA's): count per value of this variable.

        Example: add_count(?cyclone, ?number)
        """
        return self._observe(env, env.query.add_count(count_var, new_var, group_obj))

    @action("construct", sum_var="variable", new_var="variable", group_obj="markqa")
    def add_sum(self, env: KBContext, sum_var: Variable, new_var: Variable, group_obj: Any = None) -> StepResult:
        """Sum the values of sum_var and store the total in the new variable new_var.

        Args:
            sum_var: an existing variable holding numbers.
            new_var: a new variable for the sum.
            group_obj: optional (MarkQA's): sum per value of this variable.

        Example: add_sum(?fatalities, ?total)
        """
        return self._observe(env, env.query.add_sum(sum_var, new_var, group_obj))

    @action("construct", avg_var="variable", new_var="variable", group_obj="markqa")
    def add_avg(self, env: KBContext, avg_var: Variable, new_var: Variable, group_obj: Any = None) -> StepResult:
        """Average the values of avg_var and store the mean in the new variable new_var.

        Args:
            avg_var: an existing variable holding numbers.
            new_var: a new variable for the average.
            group_obj: optional (MarkQA's): average per value of this variable.

        Example: add_avg(?wind, ?mean)
        """
        return self._observe(env, env.query.add_avg(avg_var, new_var, group_obj))

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

    # -- MarkQA's functions (Wikidata) -------------------------------------------
    @action("construct", entity="markqa", prop="markqa", tag="markqa", time="time", unit="flag")
    def add_quantity(self, env: KBContext, entity: str, prop: str, tag: str, time: Any = False, unit: bool = False) -> StepResult:
        """Get the amount of a quantity statement of an entity into ?tag (Wikidata's p:/psv:/wikibase:quantityAmount).

        time: a year (the statement's point in time P585 is in that year), a date, a variable to bind the point in time to, or true to get it as ?time_tag. unit: true converts the amount to SI units.

        Args:
            entity: an entity id such as Q64, or a variable.
            prop: a quantity property such as P1082.
            tag: the new variable for the amount, e.g. pop_2011.
            time: optional: a year, a date, a variable or true.
            unit: optional: true to convert to SI units.

        Example: add_quantity(Q64, P1082, pop_2011, 2011)
        """
        return self._observe(env, env.query.add_quantity(entity, prop, tag, time, unit))

    @action("construct", entity="markqa", main_prop="markqa", qualifier_prop="markqa", qualifier_obj="markqa", tag="markqa", unit="flag")
    def add_quantity_with_qualifier(
        self, env: KBContext, entity: str, main_prop: str, qualifier_prop: str, qualifier_obj: str, tag: str, unit: bool = False
    ) -> StepResult:
        """Get the amount of a quantity statement whose qualifier qualifier_prop is qualifier_obj.

        Args:
            entity: an entity id or a variable.
            main_prop: the quantity property.
            qualifier_prop: the qualifier property, e.g. P518 (applies to part).
            qualifier_obj: the qualifier's value.
            tag: the new variable for the amount.
            unit: optional: true to convert to SI units.

        Example: add_quantity_with_qualifier(Q1, P2069, P518, Q2, perf)
        """
        query = env.query.add_quantity_with_qualifier(entity, main_prop, qualifier_prop, qualifier_obj, tag, unit)
        return self._observe(env, query)

    @action("construct", entity="markqa", main_prop="markqa", main_obj="markqa", qualifier_prop="markqa", tag="markqa", unit="flag")
    def add_quantity_by_qualifier(
        self, env: KBContext, entity: str, main_prop: str, main_obj: str, qualifier_prop: str, tag: str, unit: bool = False
    ) -> StepResult:
        """Get the amount held by the qualifier qualifier_prop of the statement (entity, main_prop, main_obj).

        Args:
            entity: an entity id or a variable.
            main_prop: the statement's property, e.g. P186 (made from material).
            main_obj: the statement's value.
            qualifier_prop: the quantity qualifier, e.g. P2067 (mass).
            tag: the new variable for the amount.
            unit: optional: true to convert to SI units.

        Example: add_quantity_by_qualifier(Q1, P186, Q2, P2067, mass)
        """
        query = env.query.add_quantity_by_qualifier(entity, main_prop, main_obj, qualifier_prop, tag, unit)
        return self._observe(env, query)

    @action("construct", expression="expression", var="markqa")
    def add_bind(self, env: KBContext, expression: Any, var: str) -> StepResult:
        """Compute an expression over existing variables and numbers into the new variable var.

        Expression functions: add, sub, mul, div, abs, ceil_mul, ceil_div, floor_mul, floor_div, avg, year, month, to_date, to_decimal.

        Args:
            expression: nested calls such as mul(div(sub(?b, ?a), ?a), 100).
            var: the new variable.

        Example: add_bind(mul(div(sub(?pop_2021, ?pop_2011), ?pop_2011), 100), ?ans)
        """
        return self._observe(env, env.query.add_bind(expression, var))

    @action("construct", rank_var="markqa", var_list="markqa", new_var="markqa")
    def add_rank(self, env: KBContext, rank_var: str, var_list: str, new_var: str) -> StepResult:
        """Rank a value among values (largest first): 1 + the number of distinct values of var_list greater than rank_var.

        Args:
            rank_var: the variable holding the value ranked.
            var_list: the variable holding every value it is ranked among.
            new_var: the new variable for the rank.

        Example: add_rank(?berlin_area, ?area, ?rank)
        """
        return self._observe(env, env.query.add_rank(rank_var, var_list, new_var))

    @action("construct", sub_query="query", sub_query_2="query", sub_query_3="query", sub_query_4="query")
    def add_sub_query(
        self, env: KBContext, sub_query: Query, sub_query_2: Query | None = None, sub_query_3: Query | None = None,
        sub_query_4: Query | None = None,
    ) -> StepResult:
        """Join independent queries (up to four) with the query on their shared variables; each is written query(action, ...).

        Args:
            sub_query: query(...) holding the actions that build it.
            sub_query_2: optional: another query(...).
            sub_query_3: optional: another query(...).
            sub_query_4: optional: another query(...).

        Example: add_sub_query(query(add_quantity(Q64, P1082, ?a, 2021)), query(add_quantity(Q90, P1082, ?b, 2021)))
        """
        queries = [q for q in (sub_query, sub_query_2, sub_query_3, sub_query_4) if q is not None]
        return self._observe(env, env.query.add_sub_query(*queries))

    @action("construct", var="variable", branch="query", branch_2="query", branch_3="query", branch_4="query")
    def add_union(
        self, env: KBContext, var: Variable, branch: Query, branch_2: Query, branch_3: Query | None = None,
        branch_4: Query | None = None,
    ) -> StepResult:
        """var takes its values from any of the branches (up to four; SPARQL UNION); each branch is written query(action, ...) and binds var, and only var joins the query.

        Args:
            var: the variable the branches bind.
            branch: query(...) of the first way to reach var.
            branch_2: query(...) of the second way.
            branch_3: optional: a third query(...).
            branch_4: optional: a fourth query(...).

        Example: add_union(?x, query(add_fact(m.0j6tr, sports.team.championships, ?x)), query(add_fact(?x, sports.event.runner_up, m.0j6tr)))
        """
        branches = [q for q in (branch, branch_2, branch_3, branch_4) if q is not None]
        return self._observe(env, env.query.add_union(var, *branches))

    @action("construct", values="values", var="markqa")
    def add_assignment(self, env: KBContext, values: list[str], var: str) -> StepResult:
        """Let a variable take each of some values (VALUES).

        Args:
            values: entity ids or values in parentheses.
            var: the variable.

        Example: add_assignment((Q319, Q2347978), ?car)
        """
        return self._observe(env, env.query.add_assignment(values, var))

    def _time_of(self, env: KBContext, add: Callable[[Query, str, str], Query], entity: str, new_var: str) -> StepResult:
        """The step of MarkQA's time actions: the query with one time property of an entity (``add`` is the
        :class:`~pyql.builder.query.Query` method writing it: start time P580, end time P582, point in time P585) into new_var."""
        return self._observe(env, add(env.query, entity, new_var))

    @action("construct", entity="markqa", new_var="markqa")
    def add_start_time(self, env: KBContext, entity: str, new_var: str) -> StepResult:
        """Get the start time (P580) of an entity into new_var.

        Args:
            entity: an entity id or a variable.
            new_var: the new variable.

        Example: add_start_time(Q8, ?start)
        """
        return self._time_of(env, Query.add_start_time, entity, new_var)

    @action("construct", entity="markqa", new_var="markqa")
    def add_end_time(self, env: KBContext, entity: str, new_var: str) -> StepResult:
        """Get the end time (P582) of an entity into new_var.

        Args:
            entity: an entity id or a variable.
            new_var: the new variable.

        Example: add_end_time(Q8, ?end)
        """
        return self._time_of(env, Query.add_end_time, entity, new_var)

    @action("construct", entity="markqa", new_var="markqa")
    def add_time(self, env: KBContext, entity: str, new_var: str) -> StepResult:
        """Get the point in time (P585) of an entity into new_var.

        Args:
            entity: an entity id or a variable.
            new_var: the new variable.

        Example: add_time(Q8, ?when)
        """
        return self._time_of(env, Query.add_time, entity, new_var)

    @action("construct", head="markqa")
    def set_head(self, env: KBContext, head: Any) -> StepResult:
        """Set what the query returns, as MarkQA's set_head: SELECT ?var (or SELECT *); raw SPARQL is refused.

        Args:
            head: SELECT ?var or SELECT *.

        Example: set_head(SELECT ?ans)
        """
        text = head.raw if isinstance(head, Arg) else str(head)
        return self._observe(env, env.query.set_head(text))

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
