"""The SPARQL action set: the PyQL functions an LLM calls on a knowledge base.

The actions that add a step are declared by their step kinds
(:mod:`pyql.builder.kinds`: name, parameters with their kinds and defaults,
the docstring the LLM reads, the place in the action order); the set
offers every declaration (:meth:`SparqlActions.declarations`) and runs one
by calling the :class:`~pyql.builder.query.Query` method of its name and
observing the new query (:meth:`SparqlActions.run_declared`). Four have a
hand-written body because they do more: ``add_max``/``add_min`` and
``add_filter`` ask the KB whether the engine's own order or comparison is
right for the variable's values (cheaper, and index-backed), and
``add_compare`` observes a yes/no query. ``get_relation`` (a look) and
``execute()`` (the end) are no step kind: they are methods here, marked
``@action``. Docstrings are what the LLM reads (``pyql docs``); keep them
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

from grammars.parameter_kinds import PARAMETER_KINDS
from grammars.vocabulary import COMPARISON_OPERATORS, EXPRESSION_FUNCTIONS, MAX_EXPRESSION_DEPTH
from pyql.action_parser import Arg, parse_action
from pyql.builder.kind import ActionDecl, action_order, declarations, sparql_action_order
from pyql.environment.actions import ActionSet, ActionSpec, StepResult, action, action_body
from pyql.errors import ArgumentError, PyQLError, QueryError, TermError
from pyql.kb.observation import BoundedRows, Relations
from pyql.builder.query import Query
from pyql.builder.steps import normalize_operator
from pyql.builder.terms import IRI, Literal, Term, Variable, parse_term, resolve_datatype

__all__ = [
    "SparqlActions",
    "KBContext",
    "arg_to_term",
    "convert_argument",
    "markqa_argument",
    "ORDER",
    "MARKQA_KINDS",
    "SPARQL_ACTION_ORDER",
    "SPARQL_EXTRA_ACTION_ORDER",
    "MARKQA_ACTION_ORDER",
    "SPARQL_ALL_ACTIONS",
]

#: QueryAgent's SPARQL actions (the step kinds' ``default`` group between ``get_relation`` and
#: ``execute``): the set an environment offers unless told otherwise.
SPARQL_ACTION_ORDER: tuple[str, ...] = sparql_action_order(("default",))
#: The step kinds' actions offered by name beyond QueryAgent's set (``add_union``, S-expressions' ``OR``).
SPARQL_EXTRA_ACTION_ORDER: tuple[str, ...] = action_order(("extra",))
#: MarkQA's numeric functions on Wikidata's statement model (offered on a profile with a statement model).
MARKQA_ACTION_ORDER: tuple[str, ...] = action_order(("markqa",))
#: Every SPARQL action, in the order they are documented: the default ones, the extra ones, MarkQA's, ``execute`` last.
SPARQL_ALL_ACTIONS: tuple[str, ...] = sparql_action_order()

#: The order the actions are documented in (see :meth:`SparqlActions.order`).
ORDER = list(SPARQL_ALL_ACTIONS)

#: Parameter kinds of MarkQA's actions (see :func:`markqa_argument`): those the table marks as MarkQA's.
MARKQA_KINDS = tuple(name for name, kind in PARAMETER_KINDS.items() if kind.markqa)
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
    relation name or a variable), "node" (an entity, a variable or a value;
    or a call of MarkQA's expression functions, ``year(?t)``, a compared side
    of ``add_filter``/``add_compare``).

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
        return _operator(arg, action_name, fail)
    if kind == "node" and _is_expression_call(arg):  # MarkQA's add_filter(year(?t), >, 2001): a side computed
        try:
            return _expression(arg, 1)
        except (QueryError, TermError) as exc:
            raise fail(f"argument {position + 1} ({name}) of {action_name}: {exc}") from None
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


def _operator(arg: Arg, action_name: str, fail: Callable[[str], ArgumentError]) -> str:
    """A comparison operator argument, in its SPARQL form."""
    if arg.kind != "operator":
        raise fail(
            f"You used {arg.raw} as the operator of {action_name}, which is invalid; "
            f"the operator must be one of {', '.join(COMPARISON_OPERATORS)}."
        )
    try:
        return normalize_operator(arg.value)
    except QueryError as exc:
        raise fail(str(exc)) from None


def _is_expression_call(arg: Arg) -> bool:
    """Whether an argument is a call of one of MarkQA's expression functions (``year(?t)``, ``sub(?a, ?b)``)."""
    head = arg.raw.split("(", 1)[0].strip() if arg.kind == "text" and arg.raw.rstrip().endswith(")") else ""
    return head in EXPRESSION_FUNCTIONS


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


_ALL: dict[tuple[str, ...], Any] = {}


def _all_actions() -> Any:
    """Every SPARQL action (MarkQA's included), made once per set of declared actions."""
    names = sparql_action_order()
    actions = _ALL.get(names)
    if actions is None:
        actions = SparqlActions(names)
        _ALL.clear()  # a kind registered or dropped since (a test's scope): the old set is stale
        _ALL[names] = actions
    return actions


def _without_markqa_extras(spec: ActionSpec) -> ActionSpec:
    """The spec without its optional parameters of MarkQA's kinds (those QueryAgent's action has not)."""
    params = tuple(p for p in spec.params if p.required or p.kind not in MARKQA_KINDS)
    return spec if params == spec.params else dataclasses.replace(spec, params=params)


class SparqlActions(ActionSet):
    """The PyQL functions for knowledge bases (SPARQL version): ``get_relation``, the step kinds' actions, ``execute``."""

    title = "PyQL actions (SPARQL version)"

    def __init__(self, only: Any = None) -> None:
        # The default set is QueryAgent's; MarkQA's actions are offered by name (SPARQL_ALL_ACTIONS: all).
        super().__init__(sparql_action_order(("default",)) if only is None else only)
        markqa = action_order(("markqa",))
        if not any(name in markqa for name in self.names):
            # Without MarkQA's actions, QueryAgent's add_max(max_var), add_count(count_var, new_var) ...
            # keep their own signatures: MarkQA's optional extras (return_obj, offset, limit, group_obj) go.
            self._specs = {name: _without_markqa_extras(spec) for name, spec in self._specs.items()}

    def order(self) -> list[str]:
        """The look, the step kinds' actions in their declared order, ``execute``."""
        return list(sparql_action_order())

    def declarations(self) -> tuple[ActionDecl, ...]:
        """Every action a step kind declares (:func:`pyql.builder.kind.declarations`)."""
        return declarations()

    def run_declared(self, env: KBContext, decl: ActionDecl, args: tuple[Any, ...]) -> StepResult:
        """A declared action: the :class:`~pyql.builder.query.Query` method of its name, then the observation of the new query."""
        return self._observe(env, getattr(env.query, decl.name)(*args))

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

    # -- the hand-written bodies of declared actions (their declarations: pyql/builder/kinds/) -----
    @action_body
    def add_max(self, env: KBContext, max_var: Variable, return_obj: Any = None, offset: int = 0, limit: int | None = 1, ties: bool = False) -> StepResult:
        """``add_max`` (:mod:`pyql.builder.kinds.argmax`) with the engine's own order when the KB knows the values
        are of one kind (an index can answer it: :meth:`pyql.kb.KB.native_order`)."""
        native = env.kb.native_order(max_var, env.query)
        return self._observe(env, env.query.add_max(max_var, return_obj, offset, limit, ties, native=native))

    @action_body
    def add_min(self, env: KBContext, min_var: Variable, return_obj: Any = None, offset: int = 0, limit: int | None = 1, ties: bool = False) -> StepResult:
        """``add_min``, with the engine's own order where it is right (as :meth:`add_max`)."""
        native = env.kb.native_order(min_var, env.query)
        return self._observe(env, env.query.add_min(min_var, return_obj, offset, limit, ties, native=native))

    @action_body
    def add_filter(self, env: KBContext, ob1: Term, op: str, ob2: Term) -> StepResult:
        """``add_filter`` (:mod:`pyql.builder.kinds.comparison`) with the engine's own comparison when the variable's
        dates all have the literal's type (cheaper per row: :meth:`pyql.kb.KB.native_compare`)."""
        native = env.kb.native_compare(ob1, ob2, env.query)
        return self._observe(env, env.query.add_filter(ob1, op, ob2, native=native))

    @action_body
    def add_compare(self, env: KBContext, ob1: Term, op: str, ob2: Term) -> StepResult:
        """``add_compare``: a yes/no query is observed as it is (no rows to reuse or describe, and "no" is no empty result)."""
        query = env.query.add_compare(ob1, op, ob2)
        observation = env.kb.observe(query, count_cap=env.count_cap)
        return StepResult(query=query, result=observation, observation=str(observation))

    # -- the end -----------------------------------------------------------------------------
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
