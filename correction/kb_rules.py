"""Rules on the knowledge base's feedback: what this step's query returned.

They run *after* the action, on ``record.result`` (an
:class:`~pyql.kb.observation.Observation`, :class:`~pyql.kb.observation.Relations`
or :class:`~pyql.kb.observation.ResultSet`) or on the engine's exception, and
combine it with the reasoning memory to tell apart errors that all look like
"empty result" (the paper's ``add_fact`` with or without a relation that
``get_relation`` returned). The two unnamed-answer rules may send a KB
query, one, and only when the memory lacks the relations to suggest; the two
empty-fact rules one bounded ASK, only when the end's relation list was read
from a capped sample of a hub's edges and misses the relation.

Example:
    >>> from correction import registry
    >>> sorted(r.id for r in registry if r.kb_queries and r.env == "kb" and r.trigger.__module__ == __name__)
    ['answer_unnamed_node', 'execute_unnamed_answer', 'fact_empty_known_relation', 'fact_empty_unknown_relation']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from correction.facts import Facts, facts, insists_on_empty, insists_on_execute, message_text
from correction.registry import rule
from pyql.errors import EngineError, EngineTimeout, EngineUnavailable, PyQLError
from pyql.kb.observation import Observation, Relations, ResultSet
from pyql.builder.terms import IRI, Literal, Variable

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord

__all__ = ["kb_probe", "observation_of"]

_T = TypeVar("_T")


def observation_of(record: StepRecord) -> Observation | None:
    """The observation a step returned, or None (the step failed or returned something else).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"))
        >>> observation_of(env.step("get_relation(m.0crbvqz)")) is None
        True
    """
    result = record.result
    return result if record.exception is None and isinstance(result, Observation) else None


def kb_probe(ask: Callable[[], _T]) -> _T | None:
    """What a rule's one bounded KB query returns, or None when the KB could not answer (the rule then judges
    without it: a failing probe is no advice about the step).

    Example:
        >>> from pyql.errors import EngineError
        >>> def fails():
        ...     raise EngineError("unreachable")
        >>> kb_probe(lambda: 3), kb_probe(fails)
        (3, None)
    """
    try:
        return ask()
    except PyQLError:
        return None


def _empty_observation(record: StepRecord) -> bool:
    observation = observation_of(record)
    return observation is not None and observation.is_empty


@rule(
    "engine_error",
    kind="error",
    env="kb",
    phase="after",
    sides=("sparql", "sql"),
    doc="The query engine rejected the step's query or timed out.",
    suggests="What the engine said; simplify or change the step (timeouts: a more selective constraint first).",
)
def engine_error(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, EngineError) or isinstance(exc, EngineUnavailable):
        return None  # an engine that cannot be reached is no advice about the step: kind engine_unavailable
    return {
        "timeout": isinstance(exc, EngineTimeout),
        "message": message_text(str(exc), 240),
        "text": record.call.text if record.call is not None else record.text,
    }


@rule(
    "get_relation_empty",
    kind="error",
    env="kb",
    phase="after",
    actions=("get_relation",),
    feedback=("kb", "memory"),
    doc="`get_relation` yields no relation (the entity or value is not in the KB, or not as written).",
    suggests="`get_relation` of the linked entities and existing variables.",
)
def get_relation_empty(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    result = record.result
    if record.exception is not None or not isinstance(result, Relations) or not result.is_empty:
        return None
    if not result.complete:
        return None  # a capped sample held only hidden relations: the entity is there, with many edges
    f = facts(record, env)
    value = f.raw("entity_or_variable")
    term = f.term("entity_or_variable")
    return {
        "value": value,
        "is_value": isinstance(term, Literal),
        "choices": f.get_relation_choices(exclude=(value, f.short(term), *f.empty_get_relations)),
    }


def _fact_relations(f: Facts) -> tuple[list[tuple[str, Relations]], bool]:
    """The ends with get_relation results, and whether the fact's relation is among them.

    When neither end was queried, "known" means some ``get_relation`` of the
    episode returned the relation. When an end's list may be incomplete (read
    from a capped sample of a hub's edges) and does not have it, one bounded
    ASK says whether that end has the relation in the fact's direction.
    """
    owners: list[tuple[str, Relations]] = []
    open_ends: list[tuple[Any, str]] = []
    for param, direction in (("head", "forward"), ("tail", "backward")):
        term = f.term(param)
        if isinstance(term, Variable) and not f.is_created(term):
            continue
        key = f.short(term)
        rels = f.relations_of(key)
        if rels is not None:
            owners.append((f.raw(param) or key, rels))
            if not rels.complete:
                open_ends.append((term, direction))
    relation = f.term("relation")
    if not isinstance(relation, IRI):
        return owners, False
    name = f.short(relation)
    if owners:
        if any(name in rels.all() for _, rels in owners):
            return owners, True
        if open_ends:  # one ASK, for the first end whose list may miss it
            end, direction = open_ends[0]
            return owners, bool(f.relation_in_kb(end, relation, direction))
        return owners, False
    return owners, name in f.known_relations


def _queryable_ends(f: Facts) -> list[str]:
    """The ends of the fact whose ``get_relation`` is worth suggesting: existing ones, not one whose ``get_relation`` already came back empty."""
    out = []
    for param in ("head", "tail"):
        term = f.term(param)
        if isinstance(term, Variable) and not f.is_created(term):
            continue
        if f.short(term) in f.empty_get_relations:
            continue
        out.append(f.raw(param))
    return out


@rule(
    "fact_empty_known_relation",
    kind="error",
    env="kb",
    phase="after",
    actions=("add_fact",),
    feedback=("kb", "memory"),
    kb_queries=1,
    doc="`add_fact` gives no result although its relation came from `get_relation` (Table 11; "
    "a relation a capped list of a hub missed counts when one bounded ASK finds it at that end).",
    suggests="Whether the triple is needed; the other end (variable or entity) may be the wrong one.",
)
def fact_empty_known_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if not _empty_observation(record):
        return None
    f = facts(record, env)
    owners, known = _fact_relations(f)
    if not known:
        return None
    return {
        "head": f.raw("head"),
        "relation": f.raw("relation"),
        "tail": f.raw("tail"),
        "owner": owners[0][0] if owners else "",
        "variables": f.variables_or_none(),
    }


@rule(
    "fact_empty_unknown_relation",
    kind="error",
    env="kb",
    phase="after",
    actions=("add_fact",),
    feedback=("kb", "memory"),
    kb_queries=1,
    doc="`add_fact` gives no result and its relation is not among those `get_relation` returned "
    "(for the head or tail; for any entity if neither was queried; where a hub's list was capped, "
    "one bounded ASK confirms it).",
    suggests="The relations of the head/tail that `get_relation` returned (GraphQ trace), or `get_relation` of them first.",
)
def fact_empty_unknown_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if not _empty_observation(record):
        return None
    f = facts(record, env)
    owners, known = _fact_relations(f)
    if known:
        return None
    ends = _queryable_ends(f)
    return {
        "relation": f.raw("relation"),
        "owners": [{"name": name, "forward": f.ranked(r.forward), "backward": f.ranked(r.backward)} for name, r in owners],
        "choices": [f"get_relation({e})" for e in ends],
        "dead_ends": [f.raw(p) for p in ("head", "tail") if f.raw(p) and f.raw(p) not in ends and not f.raw(p).startswith("?")],
    }


@rule(
    "filter_empty",
    kind="error",
    env="kb",
    phase="after",
    actions=("add_filter",),
    doc="`add_filter` gives an empty result while all its arguments are valid (Table 11).",
    suggests="Whether a comparison is needed at all; check the two operands and the operator.",
)
def filter_empty(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if not _empty_observation(record):
        return None
    f = facts(record, env)
    return {"ob1": f.raw("ob1"), "op": f.raw("op"), "ob2": f.raw("ob2")}


def _types_of(rels: Relations | None) -> list[str]:
    if rels is None:
        return []
    out = []
    for name in rels.forward:
        parts = name.split(".")
        if len(parts) >= 3:
            out.append(".".join(parts[:2]))
    return list(dict.fromkeys(out))


@rule(
    "type_constraint_empty",
    kind="error",
    env="kb",
    phase="after",
    actions=("add_type_constrain",),
    feedback=("kb", "memory"),
    doc="`add_type_constrain` gives an empty result: no value of the variable has that type.",
    suggests="Types suggested by the variable's forward relations (from `get_relation`, no query).",
)
def type_constraint_empty(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if not _empty_observation(record):
        return None
    f = facts(record, env)
    var = f.term("var")
    return {
        "type": f.raw("type"),
        "var": f.raw("var"),
        "types": _types_of(f.relations_of(str(var))),
        "created": f.is_created(var),
    }


@rule(
    "time_constraint_empty",
    kind="error",
    env="kb",
    phase="after",
    actions=("add_time_constrain",),
    doc="`add_time_constrain` gives an empty result.",
    suggests="How start_before/end_after work (for 2005: 2005-12-31, 2005-01-01); check the dates and relations.",
)
def time_constraint_empty(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if not _empty_observation(record):
        return None
    f = facts(record, env)
    return {"var": f.raw("var"), "start_before": f.raw("start_before"), "end_after": f.raw("end_after")}


def _relations_for(f: Facts, var: Variable, query: Any) -> tuple[list[str], bool]:
    """Forward relations of a variable: from the memory, else one KB query. (relations, queried)."""
    rels = f.relations_of(str(var))
    if rels is not None:
        return f.ranked(rels.forward), False
    if f.kb_env is None or query is None:
        return [], False
    kb = f.kb_env.kb
    fetched = kb_probe(lambda: kb.relations(var, query))
    return (f.ranked(fetched.forward) if fetched is not None else []), True


@rule(
    "answer_unnamed_node",
    kind="error",
    env="kb",
    phase="after",
    actions=("set_answer",),
    feedback=("kb", "memory"),
    kb_queries=1,
    doc="The answer variable holds only unnamed relationship nodes (CVTs), not entities or values (Table 11).",
    suggests="The forward relations of the variable, to reach a named entity or a value "
    "(from the memory; one `relations` query if `get_relation` of it was never run).",
)
def answer_unnamed_node(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    result = observation_of(record)
    if result is None:
        return None
    var = facts(record, env).term("answer_var")
    if not isinstance(var, Variable):
        return None
    values = result.get(var)
    if values is None or not values.all_unnamed:
        return None
    f = facts(record, env)
    relations, _ = _relations_for(f, var, record.query_after)
    return {"var": str(var), "examples": ", ".join(v.display() for v in values.values[:2]), "relations": relations}


@rule(
    "execute_unnamed_answer",
    kind="error",
    env="kb",
    phase="after",
    actions=("execute",),
    feedback=("kb", "memory"),
    kb_queries=1,
    doc="`execute()` returns only unnamed relationship nodes as answers.",
    suggests="The forward relations of the answer variable (from the memory, else one `relations` query).",
)
def execute_unnamed_answer(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    result = record.result
    if record.exception is not None or not isinstance(result, ResultSet) or result.boolean is not None:
        return None
    answers = result.answers()
    if not answers or not all(a.unnamed for a in answers) or not result.variables:
        return None
    var = result.variables[0]
    f = facts(record, env)
    relations, _ = _relations_for(f, var, env.query)
    return {"var": str(var), "examples": ", ".join(a.display() for a in answers[:2]), "relations": relations}


@rule(
    "execute_empty_result",
    kind="error",
    env="kb",
    phase="after",
    actions=("execute",),
    doc="`execute()` returns no answer (an agent that executes the same query again right after is taken at its word).",
    suggests="Undoing the last constraints; checking each step's observation.",
)
def execute_empty_result(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    result = record.result
    if record.exception is not None or not isinstance(result, ResultSet) or result.boolean is not None:
        return None
    if result.answers() or insists_on_execute(record, env, "execute_empty_result"):
        return None
    return {"steps": [s.call.text for s in env.memory.steps if s.call is not None and s.query_after is not None][-3:]}


@rule(
    "empty_result",
    kind="error",
    env="kb",
    phase="after",
    sides=("sparql", "sql"),
    fallback=True,
    doc="Any other step whose result is empty (when no more specific rule fired).",
    suggests="Check the step's arguments; choose another constraint.",
)
def empty_result(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None or not record.empty:
        return None
    if insists_on_execute(record, env, "execute_empty_result", "sql_empty_result", "empty_result"):
        return None
    if env.side == "sql" and insists_on_empty(record, env, "sql_empty_result", "empty_result"):
        return None
    return {"text": record.call.text if record.call is not None else record.text}
