"""Rules on the reasoning memory: the action is well formed but does not fit the episode.

They compare the step's arguments with what accepted steps established
(``env.memory``: linked entities, entities seen in results, variables
created, relations ``get_relation`` returned, the values of each variable)
and with the current query. They run *before* the action, so a step they
stop costs no KB query, and they send none themselves, except where the
memory's relation list was read from a capped sample of a hub's edges and
may be incomplete: before calling a relation misdirected or unknown, the two
relation rules ask the KB (one bounded ASK per relation, ``Facts.relation_in_kb``),
and ``unlinked_entity`` asks whether an unlinked id is in the KB when the
environment accepts such ids (``pyql run``).

Example:
    >>> from correction import registry
    >>> sorted((r.id, r.kb_queries) for r in registry if r.env == "memory" and r.kb_queries)
    [('fact_wrong_direction', 1), ('time_constraint_unknown_relation', 2), ('unlinked_entity', 2)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from correction.facts import Facts, facts, is_entity_name, kb_side, looks_unnamed_text, term_kind
from correction.registry import rule
from grammars.vocabulary import ORDERING_OPERATORS
from pyql.kb.observation import Relations
from pyql.builder.expressions import Expression
from pyql.builder.kinds.aggregate import Aggregate
from pyql.environment.sparql_actions import SPARQL_ACTION_ORDER
from pyql.builder.steps import expression_variables
from pyql.builder.terms import IRI, Literal, Variable

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord

__all__: list[str] = []

ORDERING = ORDERING_OPERATORS
AGGREGATIONS = ("add_count", "add_sum", "add_avg")
ORDER_ACTIONS = ("add_max", "add_min")
#: The parameters holding an entity, a variable or a value, per action.
NODE_PARAMS: dict[str, tuple[str, ...]] = {
    "get_relation": ("entity_or_variable",),
    "add_fact": ("head", "tail"),
    "add_filter": ("ob1", "ob2"),
    "add_compare": ("ob1", "ob2"),
}
#: The parameter holding the variable an action works on.
FIRST_VARIABLE: dict[str, str] = {
    "get_relation": "entity_or_variable",
    "add_max": "max_var",
    "add_min": "min_var",
    "add_count": "count_var",
    "add_sum": "sum_var",
    "add_avg": "avg_var",
}
_KIND_WORDS = {
    "entity": "entities",
    "unnamed": "unnamed nodes",
    "number": "numbers",
    "date": "dates",
    "text": "text",
}


def _kinds_text(kinds: set[str]) -> str:
    return " and ".join(_KIND_WORDS[k] for k in sorted(kinds))


def _example_values(f: Facts, var: Any, limit: int = 3) -> str:
    return ", ".join(v.display() for v in f.values_of(var)[:limit])


def _relations_lists(rels: Relations | None, f: Facts) -> dict[str, list[str]]:
    """Forward and backward relations, each ranked against the question."""
    if rels is None:
        return {"forward": [], "backward": []}
    return {"forward": f.ranked(rels.forward), "backward": f.ranked(rels.backward)}


# ---------------------------------------------------------------------------
# Entities and variables


@rule(
    "unnamed_node_argument",
    kind="error",
    env="memory",
    phase="before",
    actions=tuple(NODE_PARAMS),
    doc="An unnamed relationship node (a CVT id from an earlier result, or the text `UnName_Entity`) "
    "is used as an argument.",
    suggests="The variable that holds the node, the existing variables and the linked entities.",
)
def unnamed_node_argument(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    for param in NODE_PARAMS.get(record.action or "", ()):
        term = f.term(param)
        holder = None
        if isinstance(term, IRI):
            holder = f.unnamed_holders.get(f.short(term))
            if holder is None:
                continue
        elif not looks_unnamed_text(f.call_args.get(param)):
            continue
        return {
            "value": f.raw(param),
            "holder": holder or "",
            "variables": f.variables_or_none(),
            "entities": f.linked,
        }
    return None


@rule(
    "unlinked_entity",
    kind="error",
    env="memory",
    phase="before",
    actions=tuple(NODE_PARAMS),
    doc="An entity id that is neither linked for this question nor seen in an earlier result (where the "
    "environment takes entities from the KB, as `pyql run` does, one that is in the KB passes: one cached ASK).",
    suggests="`get_relation` of the linked entities and the existing variables (Table 13); in `pyql run`, "
    "that the id is not in the KB and how to link entities (`--entities`).",
    kb_queries=2,
)
def unlinked_entity(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    """An id shaped like an entity that is not linked, not seen, and (where the environment allows it) not in the KB.

    ``env.entities_from_kb`` (``pyql run``: a script, not an agent) lets an
    id that is in the KB pass (:meth:`pyql.kb.KB.has_entity`, cached); agents
    keep the paper's rule: only linked or seen entities.
    """
    f = facts(record, env)
    profile = f.profile
    if profile is None:
        return None
    kb_env = kb_side(env)
    from_kb = kb_env is not None and kb_env.entities_from_kb
    for param in NODE_PARAMS.get(record.action or "", ()):
        term = f.term(param)
        if not isinstance(term, IRI):
            continue
        short = f.short(term)
        if not is_entity_name(short, profile) or short in f.known_ids:
            continue
        if from_kb and kb_env is not None and kb_env.kb.has_entity(term):
            continue
        return {
            "from_kb": from_kb,
            "value": f.raw(param) or short,
            "param": param,
            "is_get_relation": record.action == "get_relation",
            "choices": f.get_relation_choices(),
            "variables": f.variables_or_none(),
            "entities": f.linked,
        }
    return None


@rule(
    "variable_hidden_by_aggregate",
    kind="error",
    env="memory",
    phase="before",
    doc="A variable created before an aggregation (`add_count` ...) is used after it, when only the "
    "aggregate is visible.",
    suggests="The variables still visible; aggregate last, or set the answer to the aggregate.",
)
def variable_hidden_by_aggregate(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    aggregate = None
    for step in reversed(f.query_steps):
        if isinstance(step, Aggregate):
            aggregate = step
            break
    if aggregate is None:
        return None
    visible = set(f.visible)
    params = env.actions.spec(record.action).params if record.action else ()
    for param in params:
        if param.kind == "variable" and param.name == "new_var":
            continue
        term = f.term(param.name)
        if isinstance(term, Variable) and f.is_created(term) and str(term) not in visible:
            args = ", ".join(str(a) for a in aggregate.arguments())
            return {
                "var": str(term),
                "aggregate": f"{aggregate.action}({args})",
                "visible": sorted(visible),
                "is_answer": record.action == "set_answer",
            }
    return None


@rule(
    "unbound_variable",
    kind="error",
    env="memory",
    phase="before",
    actions=tuple(FIRST_VARIABLE),
    doc="`get_relation` or an aggregation (`add_max`, `add_count` ...) on a variable that no step has created.",
    suggests="`get_relation` of the linked entities and existing variables, or the existing variables.",
)
def unbound_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    param = FIRST_VARIABLE[record.action or ""]
    term = f.term(param)
    if not isinstance(term, Variable) or f.is_created(term):
        return None
    return {
        "var": str(term),
        "is_get_relation": record.action == "get_relation",
        "choices": f.get_relation_choices(),
        "variables": f.variables_or_none(),
    }


@rule(
    "answer_unknown_variable",
    kind="error",
    env="memory",
    phase="before",
    actions=("set_answer",),
    doc="`set_answer` names a variable that no step has created (`set_answer(?boat)`).",
    suggests="The existing variables (Table 13).",
)
def answer_unknown_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    term = f.term("answer_var")
    if not isinstance(term, Variable) or f.is_created(term):
        return None
    return {"var": str(term), "variables": f.variables_or_none()}


@rule(
    "time_constraint_unbound_variable",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_time_constrain",),
    doc="`add_time_constrain` constrains a variable that no step has created.",
    suggests="The existing variables (the one holding e.g. the position held).",
)
def time_constraint_unbound_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    term = f.term("var")
    if not isinstance(term, Variable) or f.is_created(term):
        return None
    return {"var": str(term), "variables": f.variables_or_none()}


# ---------------------------------------------------------------------------
# Facts


def _end_keys(f: Facts) -> list[str]:
    """Short names of the ends of an add_fact that can have relations (entities, created variables, values)."""
    keys = []
    for param in ("head", "tail"):
        term = f.term(param)
        if isinstance(term, Variable) and not f.is_created(term):
            continue
        if isinstance(term, (Variable, IRI, Literal)):
            keys.append(f.short(term))
    return keys


@rule(
    "fact_two_new_variables",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_fact",),
    doc="`add_fact` whose head and tail are both variables that no step has created (except as the first "
    "step of a question without linked entities, which has nothing to connect to).",
    suggests="Start from a linked entity or an existing variable (`get_relation` first if none was queried); "
    "`add_type_constrain` when the question names no entity.",
)
def fact_two_new_variables(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    head, tail = f.term("head"), f.term("tail")
    if not (isinstance(head, Variable) and isinstance(tail, Variable)):
        return None
    if f.is_created(head) or f.is_created(tail):
        return None
    if not f.linked and not f.query_steps:
        return None  # an entity-less question has to start somewhere: nothing exists to connect to
    return {
        "head": str(head),
        "tail": str(tail),
        "got_relations": f.got_relations,
        "choices": f.get_relation_choices(),
        "variables": f.variables_or_none(),
        "type_constrain": not f.linked and "add_type_constrain" in env.actions.names,
    }


@rule(
    "fact_before_get_relation",
    kind="advice",
    env="memory",
    phase="before",
    actions=("add_fact",),
    doc="`add_fact` before any `get_relation` on either end, with a relation that no `get_relation` "
    "returned (a guessed relation). Advice: the environment runs `get_relation` of the ends itself, "
    "then the step (an error rule may still stop it, e.g. `fact_empty_unknown_relation`).",
    suggests="A note: call `get_relation` of the head or tail first (Table 13); the step is not blocked.",
)
def fact_before_get_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    keys = _end_keys(f)
    if not keys or any(f.relations_of(k) is not None for k in keys):
        return None
    relation = f.term("relation")
    if isinstance(relation, IRI) and f.short(relation) in f.known_relations:
        return None
    return {
        "relation": f.raw("relation"),
        "choices": [f"get_relation({k})" for k in keys],
        "looks": [t for t in (f.term("head"), f.term("tail")) if f.short(t) in keys],
    }


@rule(
    "fact_relation_variable",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_fact",),
    doc="The relation of `add_fact` is a variable (`add_fact(m.0bj4p9h, ?relation, ?x)`) although "
    "`get_relation` returned names to choose from.",
    suggests="The relations `get_relation` returned for the head or tail.",
)
def fact_relation_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    relation = f.term("relation")
    if not isinstance(relation, Variable):
        return None
    owners = [(k, f.relations_of(k)) for k in _end_keys(f)]
    owners = [(k, r) for k, r in owners if r is not None]
    if not owners:
        return None
    key, rels = owners[0]
    return {"relation": str(relation), "end": key, **_relations_lists(rels, f)}


@rule(
    "fact_wrong_direction",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_fact",),
    kb_queries=1,
    doc="`add_fact` uses a relation in the wrong direction: a backward relation of the head "
    "(or a forward relation of the tail), according to its `get_relation` result (a list capped on a hub "
    "is completed by one bounded ASK first).",
    suggests="The same fact with head and tail swapped.",
)
def fact_wrong_direction(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    head, relation, tail = f.term("head"), f.term("relation"), f.term("tail")
    if not isinstance(relation, IRI) or isinstance(head, Literal) or isinstance(tail, Literal):
        return None
    name = f.short(relation)
    contradicted = None
    for end, term, right, wrong in (("head", head, "forward", "backward"), ("tail", tail, "backward", "forward")):
        if isinstance(term, Variable) and not f.is_created(term):
            continue
        rels = f.relations_of(f.short(term))
        if rels is None:
            continue
        listed = {"forward": rels.forward, "backward": rels.backward}
        if name in listed[right]:
            return None  # one end confirms the direction
        if name in listed[wrong] and contradicted is None:
            contradicted = (end, wrong, term, rels)
    if contradicted is None:
        return None
    end, direction, term, rels = contradicted
    right = "backward" if direction == "forward" else "forward"
    if not rels.complete and f.relation_in_kb(term, relation, right):
        return None  # the capped list missed the relation in the right direction
    return {
        "relation": f.raw("relation"),
        "end": f.raw(end),
        "direction": direction,
        "head": f.raw("head"),
        "tail": f.raw("tail"),
    }


@rule(
    "fact_duplicate",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_fact",),
    doc="`add_fact` adds a triple pattern the query already has.",
    suggests="Go on with the next constraint, or `set_answer`/`execute` when the query is complete.",
)
def fact_duplicate(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    triple = (f.term("head"), f.term("relation"), f.term("tail"))
    if triple not in f.query_facts:
        return None
    earlier = next(
        (
            s.index
            for s in env.memory.steps
            if s.action == "add_fact" and (s.args.get("head"), s.args.get("relation"), s.args.get("tail")) == triple
        ),
        None,
    )
    return {"text": record.call.text if record.call else record.text, "earlier": earlier or 0}


@rule(
    "repeated_action",
    kind="error",
    env="memory",
    phase="before",
    actions=tuple(a for a in SPARQL_ACTION_ORDER if a not in ("get_relation", "add_fact", "execute")),
    doc="A construct action identical to an accepted earlier step (`add_max(?time)` twice).",
    suggests="Go on with the next step instead of repeating one.",
)
def repeated_action(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    call = record.call
    if call is None:
        return None
    for step in env.memory.steps:
        if step.call == call and step.args == record.args:
            return {"text": call.text or record.text, "earlier": step.index}
    return None


# ---------------------------------------------------------------------------
# Aggregations and ordering


def _fresh(f: Facts, action: str) -> str:
    base = {"add_count": "number", "add_sum": "total", "add_avg": "average"}.get(action, "result")
    taken = set(f.created) | set(f.visible)
    name, n = f"?{base}", 1
    while name in taken:
        n += 1
        name = f"?{base}{n}"
    return name


@rule(
    "aggregate_new_variable_exists",
    kind="error",
    env="memory",
    phase="before",
    actions=AGGREGATIONS,
    doc="The result variable of `add_count`/`add_sum`/`add_avg` already exists.",
    suggests="A fresh variable name for the result.",
)
def aggregate_new_variable_exists(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    new = f.term("new_var")
    params = env.actions.spec(record.action or "").params
    first = f.term(params[0].name) if params else None
    if not isinstance(new, Variable) or not (f.is_created(new) or str(new) in f.visible or new == first):
        return None
    return {"var": str(new), "first": str(first), "fresh": _fresh(f, record.action or "")}


@rule(
    "argmax_non_comparable",
    kind="error",
    env="memory",
    phase="before",
    actions=ORDER_ACTIONS,
    doc="`add_max`/`add_min` on a variable whose values are entities or unnamed nodes, not numbers or dates.",
    suggests="The variables holding numbers or dates; `get_relation` of the variable to reach one.",
)
def argmax_non_comparable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    var = f.term("max_var" if record.action == "add_max" else "min_var")
    kinds = f.value_kinds(var) if isinstance(var, Variable) else set()
    if not kinds or not kinds <= {"entity", "unnamed"}:
        return None
    return {
        "var": str(var),
        "kinds": _kinds_text(kinds),
        "examples": _example_values(f, var),
        "comparable": f.variables_of_kind(("number", "date")),
    }


@rule(
    "aggregate_non_numeric",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_sum", "add_avg"),
    doc="`add_sum`/`add_avg` on a variable whose values are not numbers.",
    suggests="The variables holding numbers; `add_count` to count entities.",
)
def aggregate_non_numeric(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    var = f.term("sum_var" if record.action == "add_sum" else "avg_var")
    kinds = f.value_kinds(var) if isinstance(var, Variable) else set()
    if not kinds or "number" in kinds:
        return None
    return {
        "var": str(var),
        "kinds": _kinds_text(kinds),
        "examples": _example_values(f, var),
        "numeric": f.variables_of_kind(("number",)),
        "count": "add_count" in env.actions.names,
    }


# ---------------------------------------------------------------------------
# Filters and comparisons


@rule(
    "filter_before_get_relation",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_filter",),
    doc="`add_filter` before any `get_relation` in the episode, on a variable no step has created "
    "(Table 9: get_relation has not been invoked before add_filter).",
    suggests="`get_relation` of the linked entities first (Appendix G: 'Choose a parameter from [1.0]').",
)
def filter_before_get_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    if f.got_relations:
        return None
    variables = [v for t in (f.term("ob1"), f.term("ob2")) for v in _operand_variables(t)]
    if variables and all(f.is_created(v) for v in variables):
        return None  # the variables exist (an entity-less question built them): the filter has something to filter
    return {
        "choices": [f"get_relation({e})" for e in f.linked],
        "entities": f.linked,
        "type_constrain": not f.linked and "add_type_constrain" in env.actions.names,
    }


def _operand_variables(term: Any) -> tuple[Variable, ...]:
    """The variables of a compared side: the variable, or those of an expression MarkQA computes (``year(?t)``)."""
    if isinstance(term, Variable):
        return (term,)
    return expression_variables(term) if isinstance(term, Expression) else ()


def _unknown_variable(f: Facts) -> str | None:
    for param in ("ob1", "ob2"):
        for var in _operand_variables(f.term(param)):
            if not f.is_created(var):
                return str(var)
    return None


@rule(
    "filter_unknown_variable",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_filter",),
    doc="An operand of `add_filter` is a variable that no step has created.",
    suggests="The existing variables (the one holding the number or date to compare).",
)
def filter_unknown_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    var = _unknown_variable(f)
    if var is None:
        return None
    return {"var": var, "variables": f.variables_or_none(), "comparable": f.variables_of_kind(("number", "date"))}


def _year_hint(term: Any) -> str:
    if isinstance(term, Literal) and term.datatype and term.datatype.endswith("#integer") and len(term.lexical) == 4:
        return f'{term.lexical}-01-01, {term.lexical}-12-31 or "{term.lexical}"^^xsd:gYear'
    return ""


_ONE = {"number": "a number", "date": "a date", "text": "text", "entity": "an entity", "unnamed": "an unnamed node"}


def _describe(f: Facts, param: str, term: Any, kinds: set[str]) -> str:
    if isinstance(term, Variable):
        return f"{f.raw(param)} holds {_kinds_text(kinds)}"
    return f"{f.raw(param)} is {_ONE.get(term_kind(term), 'a value')}"


def _mismatch(f: Facts) -> dict[str, Any] | None:
    """Why the two operands of a filter/compare cannot be compared, from the variables' values."""
    op = str(f.term("op"))
    sides = []
    for param in ("ob1", "ob2"):
        term = f.term(param)
        kinds = f.value_kinds(term) if isinstance(term, Variable) else {term_kind(term)}
        sides.append((param, term, kinds))
    if not sides[0][2] or not sides[1][2]:
        return None
    for param, term, kinds in sides:
        if isinstance(term, Variable) and op in ORDERING and kinds <= {"entity", "unnamed"}:
            return {
                "reason": "entities",
                "op": op,
                "var": str(term),
                "kinds": _kinds_text(kinds),
                "examples": _example_values(f, term),
                "comparable": f.variables_of_kind(("number", "date")),
            }
    comparable = {"number", "date"}
    (p1, t1, k1), (p2, t2, k2) = sides
    if not ((k1 & comparable) and (k2 & comparable)) or (k1 & k2):
        return None
    var_side, other_side = (sides[0], sides[1]) if isinstance(t1, Variable) else (sides[1], sides[0])
    var_kinds = var_side[2] & comparable
    examples = {"number": "100", "date": "2005-01-01"}
    replacements = [
        v for v in f.variables_of_kind(tuple(var_kinds)) if v not in (str(var_side[1]), str(other_side[1]))
    ]
    return {
        "reason": "types",
        "op": op,
        "var": f.raw(var_side[0]),
        "kinds": _kinds_text(var_side[2]),
        "examples": _example_values(f, var_side[1]) if isinstance(var_side[1], Variable) else "",
        "other_desc": _describe(f, other_side[0], other_side[1], other_side[2]),
        "other_is_variable": isinstance(other_side[1], Variable),
        "hint": _year_hint(other_side[1]) if "date" in var_kinds else "",
        "value_example": " or ".join(examples[k] for k in sorted(var_kinds)),
        "comparable": replacements,
    }


@rule(
    "filter_type_mismatch",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_filter",),
    doc="`add_filter` compares values of different types (dates with a number such as 2005, numbers with a date) "
    "or orders entities.",
    suggests="The type the variable holds and how to write a matching value (2005-12-31, \"2005\"^^xsd:gYear).",
)
def filter_type_mismatch(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    return _mismatch(facts(record, env))


@rule(
    "compare_unknown_variable",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_compare",),
    doc="An operand of `add_compare` is a variable that no step has created.",
    suggests="The existing variables; `add_fact` to create the second value first.",
)
def compare_unknown_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    var = _unknown_variable(f)
    if var is None:
        return None
    return {"var": var, "variables": f.variables_or_none()}


@rule(
    "compare_type_mismatch",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_compare",),
    doc="`add_compare` compares values of different types or orders entities.",
    suggests="The type each side holds; variables holding comparable values.",
)
def compare_type_mismatch(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    return _mismatch(facts(record, env))


# ---------------------------------------------------------------------------
# Time constraints


def _time_relations(f: Facts) -> tuple[Any, Relations | None, list[str]]:
    """The constrained variable, its ``get_relation`` result, and the start/end parameters whose relation it lacks."""
    var = f.term("var")
    rels = f.relations_of(str(var)) if isinstance(var, Variable) else None
    allowed = set(rels.all()) if rels is not None else f.known_relations
    missing = [
        param
        for param in ("start_relation", "end_relation")
        if isinstance(f.term(param), IRI) and f.short(f.term(param)) not in allowed
    ]
    return var, rels, missing


@rule(
    "time_constraint_before_get_relation",
    kind="advice",
    env="memory",
    phase="before",
    actions=("add_time_constrain",),
    doc="`add_time_constrain` on a variable no `get_relation` has looked at, with a start/end relation no "
    "`get_relation` returned (guessed relations). Advice: the environment runs `get_relation` of the variable "
    "itself; `time_constraint_unknown_relation` then judges the relations.",
    suggests="A note: call `get_relation` of the variable first; the step is not blocked.",
)
def time_constraint_before_get_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    var, rels, missing = _time_relations(f)
    if rels is not None or not missing or not isinstance(var, Variable) or not f.is_created(var):
        return None
    return {"relation": f.raw(missing[0]), "var": str(var), "looks": [var]}


@rule(
    "time_constraint_unknown_relation",
    kind="error",
    env="memory",
    phase="before",
    actions=("add_time_constrain",),
    kb_queries=2,
    doc="A start/end relation of `add_time_constrain` is not among the relations `get_relation` returned "
    "for the variable (a missing date counts as open, so a wrong relation would silently keep everything; "
    "where a list was capped on a hub, one bounded ASK per relation confirms it).",
    suggests="The relations of the variable, ranked against the question.",
)
def time_constraint_unknown_relation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    var, rels, missing = _time_relations(f)
    if rels is None or not missing:
        return None  # not looked at yet: time_constraint_before_get_relation (advice) makes the look
    if not rels.complete and isinstance(var, Variable):
        # a capped list on a hub may have missed it: the KB has the last word (one bounded ASK each)
        missing = [p for p in missing if not f.relation_in_kb(var, f.term(p), "forward")]
        if not missing:
            return None
    return {
        "relation": f.raw(missing[0]),
        "param": missing[0],
        "var": str(var),
        "relations": f.ranked(rels.forward),
    }


# ---------------------------------------------------------------------------
# execute()


@rule(
    "execute_empty_query",
    kind="error",
    env="memory",
    phase="before",
    actions=("execute",),
    doc="`execute()` before any step was added to the query.",
    suggests="Build the query first: `get_relation` of the linked entities.",
)
def execute_empty_query(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    if f.query_steps:
        return None
    return {"choices": f.get_relation_choices()}


@rule(
    "execute_multiple_variables",
    kind="error",
    env="memory",
    phase="before",
    actions=("execute",),
    doc="`execute()` on a query with several variables and no `set_answer` (the answer would be an arbitrary one).",
    suggests="`set_answer` with the variable the question asks for.",
)
def execute_multiple_variables(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    if not f.query_steps:
        return None
    shape = f.shape
    if shape.ask or shape.answer is not None or len(shape.visible) <= 1:
        return None
    return {"variables": list(shape.visible)}
