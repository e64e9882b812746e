"""Rules on the Python interpreter's feedback: the action cannot run as written.

They read the exception of a step that failed to parse or validate
(``no_action``, ``invalid_action``, ``wrong_arity`` ...) and the kinds of its
arguments (a relation where an entity is expected, a value as the head of a
fact ...). Rules shared with the SQL side (``sides={"sparql", "sql"}``) only
use what every environment has: the exception, the call and
``env.actions``. None of these rules sends a KB query.

Example:
    >>> from correction import registry
    >>> registry.get("invalid_action").env, registry.get("invalid_action").kb_queries
    ('interpreter', 0)
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from correction.facts import env_side, facts, is_relation_name, message_text, term_kind
from correction.registry import rule
from grammars.vocabulary import COMPARISON_OPERATORS, ORDERING_OPERATORS
from pyql.action_parser import ActionSyntaxError, MultipleActionsError, NoActionError
from pyql.errors import (
    ActionError,
    ArgumentError,
    ArityError,
    EngineError,
    InvalidActionError,
    ParseError,
    PyQLError,
)
from pyql.builder.expressions import Expression
from pyql.builder.terms import IRI, Literal, Variable

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord

__all__: list[str] = []

BOTH = ("sparql", "sql")
ORDERING = ORDERING_OPERATORS


def _snippet(text: str, start: int, width: int = 60) -> str:
    piece = " ".join(text[start : start + width].split())
    return piece + ("..." if len(text) - start > width else "")


def _actions(env: Environment) -> list[str]:
    return [f"{name}()" for name in env.actions.names]


def _example(env: Environment, name: str | None = None) -> str:
    """An example call: the named action's, else the first action with parameters."""
    specs = list(env.actions.specs())
    if name is not None:
        specs = [s for s in specs if s.name == name] or specs
    for spec in specs:
        if spec.example and spec.params:
            return spec.example
    return specs[0].example if specs and specs[0].example else "name(arg1, arg2)"


def _argument_error(record: StepRecord, action: str) -> ArgumentError | None:
    """The step's ArgumentError, if it is one raised for this action."""
    exc = record.exception
    if not isinstance(exc, ArgumentError) or record.action != action:
        return None
    return exc


def _param_kind(env: Environment, action: str | None, parameter: str) -> str | None:
    if action is None:
        return None
    try:
        spec = env.actions.spec(action)
    except PyQLError:
        return None
    for param in spec.params:
        if param.name == parameter:
            return param.kind
    return None


def _variables(record: StepRecord, env: Environment) -> list[str]:
    return facts(record, env).variables_or_none()


# ---------------------------------------------------------------------------
# Reading the reply


@rule(
    "no_action",
    kind="error",
    env="interpreter",
    phase="before",
    sides=BOTH,
    doc="No action can be found in the reply (e.g. `Action 3:` followed by prose).",
    suggests="Write one action `Action N: name(args)`; lists the available actions.",
)
def no_action(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, NoActionError):
        return None
    text = exc.text or record.text
    start = exc.position if exc.position is not None and exc.position < len(text) else 0
    return {"excerpt": _snippet(text, start), "actions": _actions(env)}


@rule(
    "multiple_actions",
    kind="error",
    env="interpreter",
    phase="before",
    sides=BOTH,
    doc="The reply contains more than one action.",
    suggests="Give only the next action; names the actions found.",
)
def multiple_actions(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, MultipleActionsError):
        return None
    text = exc.text or record.text
    found = []
    for pos in exc.positions:
        piece = text[pos:]
        end = piece.find(")")
        found.append(" ".join((piece[: end + 1] if end >= 0 else piece[:40]).split()))
    return {"found": found, "count": len(exc.positions)}


@rule(
    "syntax_error",
    kind="error",
    env="interpreter",
    phase="before",
    sides=BOTH,
    doc="The action looks like a call but is malformed (unclosed parenthesis or quote, empty argument, text after the call on its line).",
    suggests="Says where reading failed and what was expected; shows a well-formed example.",
)
def syntax_error(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, ActionSyntaxError):
        return None
    text = exc.text or record.text
    pos = exc.position if exc.position is not None else len(text)
    found = text[pos : pos + 15].strip()
    start = max(0, pos - 30)
    return {
        "snippet": ("..." if start else "") + " ".join(text[start : pos + 20].split()),
        "found": repr(found) if found else "end of the action",
        "expected": list(exc.expected),
        "example": _example(env),
    }


# ---------------------------------------------------------------------------
# The action and its arity (shared by both sides)


@rule(
    "invalid_action",
    kind="error",
    env="interpreter",
    phase="before",
    sides=BOTH,
    doc="The action is not one of the available functions.",
    suggests="Lists the available actions (`env.actions.names`) and the closest name.",
)
def invalid_action(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, InvalidActionError):
        return None
    name = exc.action or record.action or ""
    close = difflib.get_close_matches(name, env.actions.names, n=1, cutoff=0.6)
    return {"name": name, "actions": _actions(env), "close": close[0] if close else ""}


def _relation_owners(f: Any, raw_args: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The relations (ranked) of the entities/variables a relation could start from, and those still to look at.

    The known entities and existing variables among the call's arguments,
    else the linked entities (two at most). Those no ``get_relation`` has
    shown are returned as looks for the environment to make (rules never query).
    """
    ends = [a.strip() for a in raw_args if a.strip() in f.known_ids or f.is_created(a.strip())]
    ends = list(dict.fromkeys(ends or f.linked))[:2]
    owners, looks = [], []
    for key in ends:
        rels = f.relations_of(key)
        if rels is None:
            looks.append(key)
        else:
            owners.append({"name": key, "forward": f.ranked(rels.forward), "backward": f.ranked(rels.backward)})
    return owners, looks


@rule(
    "wrong_arity",
    kind="error",
    env="interpreter",
    phase="before",
    sides=BOTH,
    doc="The action has the wrong number of arguments.",
    suggests="The signature, how many arguments are expected and were given, and an example; on a KB the "
    "entities of the question and the existing variables to fill it with, and for a triple pattern the relations "
    "of its entity (the environment looks them up when no `get_relation` has).",
)
def wrong_arity(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, ArityError):
        return None
    spec = env.actions.spec(exc.action or record.action or "")
    low, high = exc.expected
    call = record.call
    takes_nodes = env_side(env) == "sparql" and any(p.kind in ("node", "variable") for p in spec.params)
    f = facts(record, env)
    owners, looks = _relation_owners(f, list(call.raw_args) if call is not None else []) if spec.name == "add_fact" else ([], [])
    return {
        "owners": owners,
        "looks": looks,
        "entities": f.linked if takes_nodes else [],
        "variables": f.variables_or_none() if takes_nodes else [],
        "signature": spec.signature,
        # "4, 5 or 7" when optional parameters are written together (the spec's counts, when the error is the spec's)
        "expected": spec.counts_text if (low, high) == (spec.min_args, spec.max_args) else str(high) if low == high else f"{low} to {high}",
        "plural": high != 1,
        "given": exc.given,
        "args": list(call.raw_args) if call is not None else [],
        "example": spec.example or spec.signature,
    }


# ---------------------------------------------------------------------------
# Operators and argument kinds


def _operator_context(record: StepRecord, env: Environment, exc: ArgumentError) -> dict[str, Any]:
    f = facts(record, env)
    value = exc.value
    profile = f.profile
    relation = bool(profile is not None and is_relation_name(value, profile))
    return {
        "value": value,
        "operators": list(COMPARISON_OPERATORS),
        "is_relation": relation,
        "ob1": f.raw("ob1"),
        "ob2": f.raw("ob2"),
    }


@rule(
    "filter_bad_operator",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("add_filter",),
    feedback=("python", "memory"),
    doc="The operator of `add_filter` is not a comparison operator (e.g. a relation in its place).",
    suggests="Whether a filter is needed at all; the valid operators; `add_fact` when a relation was given.",
)
def filter_bad_operator(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = _argument_error(record, "add_filter")
    if exc is None or exc.parameter != "op":
        return None
    return _operator_context(record, env, exc)


@rule(
    "compare_bad_operator",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("add_compare",),
    feedback=("python", "memory"),
    doc="The operator of `add_compare` is not a comparison operator.",
    suggests="The valid operators; `add_fact` when a relation was given.",
)
def compare_bad_operator(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = _argument_error(record, "add_compare")
    if exc is None or exc.parameter != "op":
        return None
    return _operator_context(record, env, exc)


@rule(
    "answer_not_variable",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("set_answer",),
    feedback=("python", "memory"),
    doc='`set_answer` is given something that is not a variable (`set_answer("yes")`).',
    suggests="The existing variables; `add_compare` for a yes/no question.",
)
def answer_not_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = _argument_error(record, "set_answer")
    if exc is None:
        return None
    value = exc.value
    bare = value.strip("\"'`").lower()
    return {
        "value": value,
        "variables": _variables(record, env),
        "yes_no": bare in ("yes", "no", "true", "false"),
        "compare": "add_compare" in env.actions.names,
    }


@rule(
    "variable_expected",
    kind="error",
    env="interpreter",
    phase="before",
    feedback=("python", "memory"),
    doc="An entity or value is given where the action takes a variable (`add_max(m.0dkl7)`).",
    suggests="The existing variables.",
)
def variable_expected(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, ArgumentError) or record.action == "set_answer":
        return None
    if _param_kind(env, record.action, exc.parameter) != "variable":
        return None
    return {
        "value": exc.value,
        "param": exc.parameter,
        "signature": facts(record, env).signature,
        "variables": _variables(record, env),
    }


def _type_guesses(relations: Any) -> list[str]:
    out = []
    for name in relations:
        parts = name.split(".")
        if len(parts) >= 3:
            out.append(".".join(parts[:2]))
    return list(dict.fromkeys(out))


@rule(
    "relation_expected",
    kind="error",
    env="interpreter",
    phase="before",
    feedback=("python", "memory"),
    doc="Something that is not a relation name is given where the action takes a relation or a type.",
    suggests="Relations that `get_relation` returned for the other arguments (or types derived from them).",
)
def relation_expected(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, ArgumentError):
        return None
    if _param_kind(env, record.action, exc.parameter) != "relation":
        return None
    f = facts(record, env)
    relations: list[str] = []
    owners = []
    looks = []
    for param in ("head", "tail", "var"):
        key = f.raw(param)
        rels = f.relations_of(key) if key else None
        if rels is not None:
            owners.append(key)
            relations.extend(rels.all())
        elif key and (key in f.known_ids or f.is_created(key)):
            looks.append(key)  # the environment looks, then the guideline lists what it found
    is_type = record.action == "add_type_constrain"
    if is_type:
        relations = _type_guesses(relations)
    return {
        "looks": looks,
        "value": exc.value,
        "param": exc.parameter,
        "signature": f.signature,
        "is_type": is_type,
        "owners": owners,
        "relations": list(dict.fromkeys(relations)) if is_type else f.ranked(dict.fromkeys(relations)),
        "get_relation": [
            f"get_relation({k})" for k in (f.raw("head"), f.raw("tail"), f.raw("var")) if k in f.known_ids or f.is_created(k)
        ],
    }


@rule(
    "relation_as_argument",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("get_relation", "add_fact"),
    feedback=("python", "memory"),
    doc="A relation name is used where an entity or a variable is expected "
    "(`get_relation(measurement_unit.inverse_temperature_unit.measurement_system)`).",
    suggests="Never get relations of a relation; the entities and variables to use instead, and how to use the relation.",
)
def relation_as_argument(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None:
        return None
    f = facts(record, env)
    profile = f.profile
    if profile is None:
        return None
    params = ("entity_or_variable",) if record.action == "get_relation" else ("head", "tail")
    for param in params:
        term = f.term(param)
        if isinstance(term, IRI) and is_relation_name(f.short(term), profile):
            return {
                "value": f.raw(param) or f.short(term),
                "param": param,
                "choices": f.get_relation_choices(),
                "variables": f.variables_or_none(),
                "entities": f.linked,
            }
    return None


@rule(
    "fact_literal_head",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("add_fact",),
    doc="The head of `add_fact` is a value (number, date, string); values can only be tails.",
    suggests="The same fact with head and tail swapped.",
)
def fact_literal_head(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None:
        return None
    f = facts(record, env)
    if not isinstance(f.term("head"), Literal):
        return None
    return {"head": f.raw("head"), "relation": f.raw("relation"), "tail": f.raw("tail")}


@rule(
    "type_constraint_relation",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("add_type_constrain",),
    doc="`add_type_constrain` is given a relation (`a.b.c`) instead of a type (`a.b`).",
    suggests="The type the relation belongs to.",
)
def type_constraint_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None:
        return None
    f = facts(record, env)
    term = f.term("type")
    if not isinstance(term, IRI) or f.profile is None or not is_relation_name(f.short(term), f.profile):
        return None
    name = f.short(term)
    return {"value": f.raw("type") or name, "guess": ".".join(name.split(".")[:2]), "var": f.raw("var")}


def _is_date_like(term: Any) -> bool:
    if not isinstance(term, Literal):
        return False
    if term.is_date:
        return True
    return bool(term.datatype and term.datatype.endswith("#integer") and len(term.lexical) == 4)


@rule(
    "time_constraint_bad_date",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("add_time_constrain",),
    feedback=("python", "memory"),
    doc="`start_before` or `end_after` of `add_time_constrain` is not a date (a variable, an entity, text).",
    suggests="The date forms accepted; the dates a variable held, to copy one.",
)
def time_constraint_bad_date(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None:
        return None
    f = facts(record, env)
    for param in ("start_before", "end_after"):
        term = f.term(param)
        if term is None or _is_date_like(term):
            continue
        values = [v.display() for v in f.values_of(term)] if isinstance(term, Variable) else []
        return {"param": param, "value": f.raw(param), "is_variable": isinstance(term, Variable), "values": values}
    return None


def _bad_operand(f: Any, op: str) -> tuple[str, str, str] | None:
    """(position, value, reason) of the first invalid operand of a filter, or None."""
    profile = f.profile
    terms = [("first", "ob1", f.term("ob1")), ("second", "ob2", f.term("ob2"))]
    for position, param, term in terms:
        if isinstance(term, IRI) and profile is not None and is_relation_name(f.short(term), profile):
            return position, f.raw(param), "it is a relation, not a value: a relation belongs in add_fact"
    if not any(isinstance(t, Variable) or (isinstance(t, Expression) and t.variables()) for _, _, t in terms):
        position, param, _ = terms[0]
        return position, f.raw(param), "neither side is a variable, so the filter does not constrain the query"
    for position, param, term in terms:
        kind = term_kind(term)
        if op in ORDERING and kind == "entity":
            return position, f.raw(param), f"an entity cannot be ordered with {op}; only = and != compare entities"
        if op in ORDERING and kind == "text":
            return position, f.raw(param), f"text cannot be compared with {op}; write a number (10) or a date (2005-08-23)"
    return None


@rule(
    "filter_bad_operand",
    kind="error",
    env="interpreter",
    phase="before",
    actions=("add_filter",),
    feedback=("python", "memory"),
    doc="An operand of `add_filter` is invalid: unreadable, a relation, text or an entity "
    "ordered with > or <, or no side is a variable.",
    suggests="Which operand is wrong and why; the existing variables; the forms of numbers and dates.",
)
def filter_bad_operand(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    exc = record.exception
    if exc is not None:
        if not isinstance(exc, ArgumentError) or exc.parameter not in ("ob1", "ob2"):
            return None
        found: tuple[str, str, str] | None = (
            "first" if exc.parameter == "ob1" else "second",
            exc.value,
            "it is not a variable, a number or a date",
        )
    else:
        found = _bad_operand(f, str(f.term("op")))
    if found is None:
        return None
    position, value, reason = found
    return {"position": position, "value": value, "reason": reason, "variables": f.variables_or_none()}


# ---------------------------------------------------------------------------
# Fallbacks (shared)


@rule(
    "bad_argument",
    kind="error",
    env="interpreter",
    phase="before",
    sides=BOTH,
    fallback=True,
    doc="Any other argument that cannot be read or has the wrong kind (an operator as an entity, ...).",
    suggests="The parameter, what it must be, and the action's example.",
)
def bad_argument(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, ActionError):
        return None
    name = record.action or ""
    try:
        spec = env.actions.spec(name)
        signature, example = spec.signature, spec.example or spec.signature
    except PyQLError:
        signature, example = name, _example(env)
    return {
        "value": (exc.value if isinstance(exc, ArgumentError) else "")
        or (record.call.text if record.call is not None else record.text),
        "param": exc.parameter if isinstance(exc, ArgumentError) else "",
        "signature": signature,
        "message": message_text(str(exc), 300),
        "example": example,
    }


@rule(
    "query_error",
    kind="error",
    env="interpreter",
    phase="any",
    sides=BOTH,
    fallback=True,
    doc="The step raised any other pyql error (the query builder refused it, the episode is over, ...).",
    suggests="The error message, in the step's terms.",
)
def query_error(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if exc is None or isinstance(exc, EngineError) or not isinstance(exc, PyQLError):
        return None
    if isinstance(exc, ParseError):
        text = record.text
    else:
        text = record.call.text if record.call is not None else record.text
    return {"message": message_text(str(exc), 300), "text": message_text(text, 120), "done": env.done}
