"""Rules on numbers: MarkQA's arithmetic, units, time points and rank (issue 21, item 5).

MarkQA's functions (``add_quantity``, ``add_bind``, ``add_rank`` ...) fail
in ways the KB's answer hides: arithmetic on a variable that holds an
entity, or no value, gives no value; amounts in kilometres and in metres
subtract without complaint; a quantity with one statement per census year
multiplies every later row; a division by zero, ``year`` of a number and a
rank among nothing all give a number or nothing without saying why. These
rules tell those cases apart before the step runs (``add_quantity``'s time
points after it), each with its own guideline and candidates drawn from the
memory and the KB.

What a rule cannot see in the memory it asks the KB in one bounded probe
(:mod:`pyql.kb.probes`: the first 1,000 rows of the query, never more):
what the operands hold (:func:`~pyql.kb.probes.operand_stats_query`, sent
once per step and shared by the rules), the units of the quantities
combined (:func:`~pyql.kb.probes.quantity_units_query`) and the time points
of a quantity's statements (:func:`~pyql.kb.probes.time_points_query`).

Example:
    >>> from correction import registry
    >>> [registry.get(i).kind for i in ("bind_unbound_variable", "quantity_several_time_points")]
    ['error', 'error']
"""

from __future__ import annotations

import difflib
import re
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

from correction.facts import Facts, KBRules, facts, kb_side, value_kind
from correction.kb_rules import kb_probe, observation_of
from correction.registry import Trigger, rule
from pyql.errors import PyQLError
from pyql.builder.expressions import DateLit, Expression, Func, Num, Op, Var, operand
from pyql.kb import probes
from pyql.kb.observation import Value
from pyql.builder.kinds.quantity import Quantity, QuantityBase, quantity_call
from pyql.builder.kinds.type_constraint import TypeConstraint
from pyql.builder.terms import IRI, Literal, Variable

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord
    from pyql.builder.query import Query

__all__ = ["expression_of", "arithmetic_operands", "divisors", "date_operands", "unit_conflicts"]

#: The actions that compare two operands (a unit mismatch makes them wrong).
COMPARING = ("add_compare", "add_filter")
_DIVIDE = ("/",)
_ADDITIVE = ("+", "-")
_T = TypeVar("_T")
_KIND_TEXT = {"number": "numbers", "date": "dates", "node": "entities", "text": "text", "unbound": "no value"}


def _numeric_rule(rule_id: str, *, phase: str = "before", **details: Any) -> Callable[[Trigger], Trigger]:
    """:func:`~correction.registry.rule` with what every rule here shares: an error on a KB, read from the KB's
    feedback and the memory, that may send one bounded probe; checked before the step unless ``phase`` says after."""
    return rule(rule_id, kind="error", env="kb", phase=phase, feedback=("kb", "memory"), kb_queries=1, **details)


# ---------------------------------------------------------------------------
# Reading an expression


def expression_of(value: Any) -> Expression | None:
    """The expression of an ``add_bind`` argument (a bare variable or number as its operand), or None.

    Example:
        >>> expression_of("?pop"), expression_of(None)
        (Var(name='pop'), None)
    """
    if isinstance(value, Expression):
        return value
    if isinstance(value, str) and value.strip():
        try:
            return operand(value)
        except PyQLError:
            return None
    return None


def _expression(f: Facts) -> Expression | None:
    """The expression of the step's ``add_bind`` (None for another action or an unreadable one)."""
    return expression_of(f.term("expression"))


def _bind_expression(record: StepRecord, env: Environment) -> tuple[Facts, Expression | None]:
    """The facts of a step and the expression of its ``add_bind``: what every rule on ``add_bind`` reads first."""
    f = facts(record, env)
    return f, _expression(f)


def arithmetic_operands(expr: Expression) -> list[str]:
    """Variables used as numbers (under ``+ - * /``, ABS, CEIL, FLOOR; not under YEAR, MONTH or the decimal cast).

    Example:
        >>> from pyql.builder.expressions import sub, year
        >>> arithmetic_operands(sub("b", year("t")))
        ['b']
    """
    if isinstance(expr, Var):
        return [expr.name]
    if isinstance(expr, Func) and expr.name in ("YEAR", "MONTH", "xsd:decimal"):
        return []
    out: list[str] = []
    for child in expr.children():
        out += arithmetic_operands(child)
    return list(dict.fromkeys(out))


def divisors(expr: Expression) -> list[Expression]:
    """Every expression something is divided by (``div``, ``ceil_div``, ``floor_div``), outermost first.

    Example:
        >>> from pyql.builder.expressions import div, sub
        >>> [d.sparql() for d in divisors(div("a", sub("b", "c")))]
        ['(?b - ?c)']
    """
    out: list[Expression] = []
    if isinstance(expr, Op) and expr.op in _DIVIDE:
        out += list(expr.operands[1:])
    for child in expr.children():
        out += divisors(child)
    return out


def date_operands(expr: Expression) -> list[tuple[str, str]]:
    """(function, variable) for every ``year``/``month`` of a variable.

    Example:
        >>> from pyql.builder.expressions import sub, year
        >>> date_operands(sub(year("end"), year("start")))
        [('year', 'end'), ('year', 'start')]
    """
    out: list[tuple[str, str]] = []
    if isinstance(expr, Func) and expr.name in ("YEAR", "MONTH") and isinstance(expr.args[0], Var):
        out.append((expr.name.lower(), expr.args[0].name))
    for child in expr.children():
        out += date_operands(child)
    return out


def unit_conflicts(expr: Expression, units: dict[str, set[str]], si: dict[str, str | None]) -> list[tuple[str, str, str]]:
    """Operands combined in different units: (operator, left variable, right variable).

    ``units`` maps a quantity variable to the units of its amounts, ``si``
    a unit to the SI unit it converts to. Added, subtracted, or divided
    amounts of the same dimension (km² by ha) must be in the same unit;
    a product or a quotient of different dimensions (people per km²) is fine.

    Example:
        >>> from pyql.builder.expressions import div, sub
        >>> units, si = {"a": {"km"}, "b": {"m"}, "p": {"1"}}, {"km": "m", "m": "m", "1": None}
        >>> unit_conflicts(sub("a", "b"), units, si), unit_conflicts(div("p", "a"), units, si)
        ([('-', 'a', 'b')], [])
    """
    found: list[tuple[str, str, str]] = []
    _unit_of(expr, units, si, found)
    return found


def _unit_of(expr: Expression, units: dict[str, set[str]], si: dict[str, str | None], found: list) -> tuple[str, frozenset[str]] | None:
    """(a variable carrying it, its units) of an expression's result, recording conflicts on the way."""
    if isinstance(expr, Var):
        return (expr.name, frozenset(units[expr.name])) if expr.name in units else None
    if isinstance(expr, Func):
        inner = _unit_of(expr.args[0], units, si, found)
        return inner if expr.name in ("ABS", "CEIL", "FLOOR") else None
    if not isinstance(expr, Op):
        return None
    parts = [_unit_of(child, units, si, found) for child in expr.operands]
    known = [p for p in parts if p is not None]
    for left, right in zip(known, known[1:]):
        if left[1] == right[1]:
            continue
        bases = [si.get(u) for u in left[1] | right[1]]
        same_dimension = None not in bases and len(set(bases)) == 1
        if expr.op in _ADDITIVE or (same_dimension and expr.op in _DIVIDE):
            found.append((expr.op, left[0], right[0]))
    return known[0] if expr.op in _ADDITIVE and known else None


# ---------------------------------------------------------------------------
# The memory and the probes


def quantity_steps(query: Query | None) -> dict[str, QuantityBase]:
    """The quantity steps of a query by the name of their amount's variable (``pop`` for ``?pop``).

    Example:
        >>> from pyql.builder.query import Query
        >>> list(quantity_steps(Query("wikidata").add_quantity("Q64", "P1082", "pop")))
        ['pop']
    """
    if query is None:
        return {}
    return {s.tag.name: s for s in query.steps if isinstance(s, QuantityBase)}


def _quantities(f: Facts) -> dict[str, QuantityBase]:
    """The quantity steps of the query the rules read (none without a KB)."""
    return quantity_steps(f.kb_env.query if f.kb_env is not None else None)


def _quantity_call(
    step: QuantityBase, f: Facts, tag: str | None = None, time: object = None, unit: bool | None = None, entity: str | None = None
) -> str:
    """The action that makes a quantity step again, with another tag, time, unit or entity (the quantity kind's
    :func:`~pyql.builder.kinds.quantity.quantity_call`, entities written as MarkQA's actions take them)."""
    return quantity_call(step, lambda term: _entity_text(f, term), tag, time, unit, entity)


def _entity_text(f: Facts, term: Any) -> str:
    """An entity as MarkQA's actions take it (``Q64``, not ``wd:Q64``), or a variable."""
    return f.short(term).removeprefix("wd:") if isinstance(term, IRI) else str(term)


class _ProbeCache(threading.local):
    key: tuple[int, str, int] | None = None
    record: Any = None
    stats: probes.OperandStats | None = None
    names: tuple[str, ...] = ()


_PROBED = _ProbeCache()


def _select(kb_env: KBRules, text: str, read: Callable[[Any], _T]) -> _T | None:
    """What ``read`` makes of the rows of one bounded probe (:func:`~correction.kb_rules.kb_probe`: None when the KB failed)."""
    return kb_probe(lambda: read(kb_env.kb.select(text)))


def _query_of(env: Environment) -> tuple[KBRules | None, Query | None]:
    kb_env = kb_side(env)
    query = kb_env.query if kb_env is not None else None
    return kb_env, (query if query is not None and query.steps else None)


def _plan(record: StepRecord, f: Facts) -> tuple[list[str], list[Expression], list[tuple[str, str]]]:
    """The variables, divisors and pairs a step's operand probe asks about (only those in the query)."""
    present = set(f.visible)
    if record.action == "add_bind":
        expr = _expression(f)
        if expr is None:
            return [], [], []
        names = [n for n in expr.variables() if f"?{n}" in present]
        return names, _probed_divisors(expr, present), []
    if record.action == "add_rank":
        rank, values = _rank_operands(f)
        names = [n for n in (rank, values) if f"?{n}" in present]
        return list(dict.fromkeys(names)), [], ([(values, rank)] if len(set(names)) == 2 else [])
    return [], [], []


def _probed_divisors(expr: Expression, present: set[str]) -> list[Expression]:
    """The divisors the operand probe asks about, in its order: those whose variables are all in the query."""
    return [d for d in divisors(expr) if all(f"?{n}" in present for n in d.variables())]


def operand_stats(record: StepRecord, env: Environment) -> tuple[probes.OperandStats | None, tuple[str, ...]]:
    """What the step's operands hold in the first rows of the query: one bounded probe per step, shared by the rules.

    Returns the stats (None without a KB, a query or anything to ask) and
    the variable names, in the order of ``stats.variables``.
    """
    key = (id(record), record.phase, id(env))
    if _PROBED.key == key and _PROBED.record is record:
        return _PROBED.stats, _PROBED.names
    kb_env, query = _query_of(env)
    stats: probes.OperandStats | None = None
    f = facts(record, env)
    names, divided, pairs = _plan(record, f)
    if kb_env is not None and query is not None and (names or divided):
        variables = [Variable(n) for n in names]
        text = probes.operand_stats_query(query, variables, divided, [(Variable(a), Variable(b)) for a, b in pairs])
        stats = _select(kb_env, text, lambda rows: probes.read_operand_stats(rows, len(variables), len(divided), len(pairs)))
    _PROBED.key, _PROBED.record, _PROBED.stats, _PROBED.names = key, record, stats, tuple(names)
    return stats, tuple(names)


def _name(term: Any) -> str:
    return str(term).strip().lstrip("?$") if term is not None else ""


def _rank_operands(f: Facts) -> tuple[str, str]:
    """The names of ``add_rank``'s ranked variable and of the list it is ranked among."""
    return _name(f.term("rank_var")), _name(f.term("var_list"))


def _held(f: Facts, name: str, stats: probes.OperandStats | None, names: Sequence[str]) -> tuple[set[str], str]:
    """What a variable holds ({"number", "date", "node", "text", "unbound"}) and an example, from the probe, else the memory."""
    if stats is not None and name in names and stats.rows:
        seen = stats.variables[names.index(name)]
        example = seen.example
        return seen.kinds(), _display(f, example) if isinstance(example, (IRI, Literal)) else ""
    values = f.values_of(f"?{name}")
    kinds = {_memory_kind(v) for v in values}
    return kinds, ", ".join(v.display() for v in values[:2])


def _memory_kind(value: Value) -> str:
    kind = value_kind(value)
    return "node" if kind in ("entity", "unnamed") else kind


def _display(f: Facts, term: IRI | Literal) -> str:
    return term.lexical if isinstance(term, Literal) else f.short(term)


def _kinds_text(kinds: Iterable[str]) -> str:
    return " and ".join(_KIND_TEXT[k] for k in sorted(kinds))


def numeric_variables(f: Facts, skip: Iterable[str] = ()) -> list[str]:
    """Existing variables holding numbers (quantity amounts first), none of ``skip``."""
    left_out = {f"?{_name(s)}" for s in skip}
    amounts = [f"?{n}" for n in _quantities(f)]
    shown = f.variables_of_kind(("number",))
    visible = set(f.visible)
    return [v for v in dict.fromkeys(amounts + shown) if v in visible and v not in left_out]


def _date_variables(f: Facts) -> list[str]:
    visible = set(f.visible)
    timed = [
        str(s.time_var) for s in _quantities(f).values()
        if isinstance(s, Quantity) and s.time_var is not None
    ]
    return [v for v in dict.fromkeys(timed + f.variables_of_kind(("date",))) if v in visible]


# ---------------------------------------------------------------------------
# Arithmetic on an unbound or non-numeric variable


def _quantity_suggestions(f: Facts, missing: str) -> list[str]:
    """``add_quantity`` calls that would create ``?missing``, from the existing quantities: the same entity at a
    year the name or the question mentions, then each linked entity they do not use."""
    steps = [s for s in _quantities(f).values() if isinstance(s, Quantity)]
    used = {_entity_text(f, s.entity) for s in steps}
    years = re.findall(r"(?<![0-9])(1[0-9]{3}|20[0-9]{2})(?![0-9])", missing) + _question_years(f)
    out = [
        _quantity_call(step, f, tag=missing, time=int(year))
        for year in dict.fromkeys(years)
        for step in steps
        if isinstance(step.time, int) and step.time != int(year)
    ]
    out += [_quantity_call(step, f, tag=missing, entity=e.removeprefix("wd:")) for step in steps for e in f.linked if e.removeprefix("wd:") not in used]
    return list(dict.fromkeys(out))


@_numeric_rule(
    "bind_unbound_variable",
    actions=("add_bind",),
    doc="An operand of `add_bind` is a variable no step has created, or one that has no value in any row "
    "of the query (one bounded probe of the first 1,000 rows).",
    suggests="The variable and why it has no value; the variables holding numbers, the closest name, and the "
    "`add_quantity` calls (the existing quantities' property for the other linked entities) that would create it.",
)
def bind_unbound_variable(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f, expr = _bind_expression(record, env)
    if expr is None:
        return None
    present = set(f.visible)
    missing = [n for n in expr.variables() if f"?{n}" not in present]
    reason = "missing"
    if not missing:
        stats, names = operand_stats(record, env)
        missing = [n for n in names if _held(f, n, stats, names)[0] == {"unbound"}]
        reason = "unbound"
    if not missing:
        return None
    name = missing[0]
    numbers = numeric_variables(f, skip=[name])
    close = difflib.get_close_matches(f"?{name}", numbers, n=1, cutoff=0.6)
    hidden = reason == "missing" and f.is_created(f"?{name}")
    return {
        "var": f"?{name}",
        "reason": "hidden" if hidden else reason,
        "numbers": numbers,
        "close": close[0] if close else "",
        "quantities": _quantity_suggestions(f, name) if reason == "missing" and not hidden else [],
    }


@_numeric_rule(
    "bind_non_numeric",
    actions=("add_bind",),
    doc="An arithmetic operand of `add_bind` (under add, sub, mul, div, abs ...) holds entities, dates or text, "
    "not numbers (the memory's values, else the operand probe).",
    suggests="The variable, what it holds and an example; the variables holding numbers; `year()`/`month()` for a "
    "date, `add_quantity` of an entity.",
)
def bind_non_numeric(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f, expr = _bind_expression(record, env)
    if expr is None:
        return None
    stats, names = operand_stats(record, env)
    for name in arithmetic_operands(expr):
        kinds, example = _held(f, name, stats, names)
        if not kinds or "number" in kinds or kinds == {"unbound"}:
            continue
        steps = _quantities(f)
        return {
            "var": f"?{name}",
            "kinds": _kinds_text(kinds - {"unbound"}),
            "example": example,
            "numbers": numeric_variables(f, skip=[name]),
            "is_date": "date" in kinds,
            "is_entity": "node" in kinds and not name.startswith(("statement_", "value_st_")),
            "quantity_of": [f"add_quantity(?{name}, {s.prop}, {name}_amount)" for s in steps.values() if isinstance(s, Quantity)][:1],
        }
    return None


@_numeric_rule(
    "date_function_non_date",
    actions=("add_bind",),
    doc="`year()` or `month()` in `add_bind` is applied to a variable that holds no dates (an amount, an entity, text).",
    suggests="The variable and what it holds; the variables holding dates (a quantity's ?time_<tag>), and how to get "
    "a point in time: `add_quantity(..., true)`, `add_time`, `add_start_time`, `add_end_time`.",
)
def date_function_non_date(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f, expr = _bind_expression(record, env)
    if expr is None:
        return None
    stats, names = operand_stats(record, env)
    for function, name in date_operands(expr):
        kinds, example = _held(f, name, stats, names)
        if not kinds or "date" in kinds or kinds == {"unbound"}:
            continue
        step = _quantities(f).get(name)
        timed = _quantity_call(step, f, time=True) if isinstance(step, Quantity) and step.time_var is None else ""
        time_var = str(step.time_var) if isinstance(step, Quantity) and step.time_var is not None else ""
        return {
            "function": function,
            "var": f"?{name}",
            "kinds": _kinds_text(kinds - {"unbound"}),
            "example": example,
            "dates": _date_variables(f),
            "time_var": time_var,
            "timed": timed,
            "entities": [e for e in f.linked][:2],
        }
    return None


# ---------------------------------------------------------------------------
# Division


@_numeric_rule(
    "division_by_zero",
    actions=("add_bind",),
    doc="A `div`/`ceil_div`/`floor_div` of `add_bind` divides by the number 0, or by a denominator that is zero "
    "or has no value in every row of the query (the operand probe: first 1,000 rows).",
    suggests="The denominator, whether it is zero or empty and in how many rows; the variables holding non-zero numbers.",
)
def division_by_zero(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f, expr = _bind_expression(record, env)
    if expr is None:
        return None
    found = _zero_divisor(record, env, expr)
    if found is None:
        return None
    divisor, reason, rows = found
    return {
        "divisor": divisor.sparql(f.profile) if f.profile is not None else divisor.sparql(),
        "reason": reason,
        "rows": rows,
        "numbers": [v for v in numeric_variables(f) if f"?{v.lstrip('?')}" != divisor.sparql()],
        "values": _values_text(f, divisor),
    }


def _zero_divisor(record: StepRecord, env: Environment, expr: Expression) -> tuple[Expression, str, int] | None:
    """The first divisor that is 0, or zero / empty in every row read (reason "zero" / "empty"), with the rows read."""
    for divisor in divisors(expr):
        if isinstance(divisor, Num) and divisor.value == 0:
            return divisor, "zero", 0
    stats, _ = operand_stats(record, env)
    if stats is None or not stats.rows:
        return None
    probed = _probed_divisors(expr, set(facts(record, env).visible))
    for divisor, seen in zip(probed, stats.divisors):
        if seen["zero"] == stats.rows:
            return divisor, "zero", stats.rows
        if seen["empty"] == stats.rows and not isinstance(divisor, DateLit):
            return divisor, "empty", stats.rows
    return None


def _values_text(f: Facts, divisor: Expression) -> str:
    if not isinstance(divisor, Var):
        return ""
    return ", ".join(v.display() for v in f.values_of(f"?{divisor.name}")[:3])


# ---------------------------------------------------------------------------
# Units


def _units_of(record: StepRecord, env: Environment, names: Sequence[str]) -> tuple[dict[str, set[str]], dict[str, str | None], dict[str, str]]:
    """Units of the quantities named (amounts not converted with unit=True), from one bounded probe.

    Returns variable → unit IRIs, unit → its SI unit, unit → label.
    """
    kb_env, query = _query_of(env)
    steps = quantity_steps(query)
    wanted = [n for n in dict.fromkeys(names) if n in steps and not steps[n].unit]
    if kb_env is None or query is None or len(wanted) < 1:
        return {}, {}, {}
    nodes = [steps[n].value_node_var for n in wanted]
    kb = kb_env.kb  # the units query is built inside the probe: a query it cannot write is no advice either
    found = kb_probe(lambda: probes.read_quantity_units(kb.select(probes.quantity_units_query(query, nodes)), len(nodes)))
    if found is None:
        return {}, {}, {}
    units: dict[str, set[str]] = {}
    si: dict[str, str | None] = {}
    labels: dict[str, str] = {}
    for name, seen in zip(wanted, found):
        if seen:
            units[name] = {u.value for u, _, _ in seen}
        for unit, label, base in seen:
            si[unit.value] = base.value if base is not None else None
            labels[unit.value] = label or kb_env.kb.profile.shorten(unit.value)
    return units, si, labels


def _unit_pairs(record: StepRecord, f: Facts) -> tuple[list[str], Expression | None]:
    """The quantity variables a step combines or compares, and the expression combining them (for add_bind)."""
    if record.action == "add_bind":
        expr = _expression(f)
        return (list(expr.variables()) if expr is not None else []), expr
    if record.action == "add_rank":
        return list(_rank_operands(f)), None
    terms = [f.term("ob1"), f.term("ob2")]
    computed = next((t for t in terms if isinstance(t, (Op, Func))), None)  # MarkQA's add_filter(sub('a', 'b'), '>', 0)
    names = [v for t in terms for v in ((t.name,) if isinstance(t, Variable) else t.variables() if isinstance(t, Expression) else ())]
    return list(dict.fromkeys(names)), computed


@_numeric_rule(
    "quantity_unit_mismatch",
    actions=("add_bind", "add_rank", *COMPARING),
    doc="Quantities in different units (km and m, km² and ha) are added, subtracted, divided as the same dimension, "
    "compared or ranked together, or one quantity holds amounts in several units, without `unit=True` "
    "(the units of the amounts in the first 1,000 rows, one bounded probe).",
    suggests="The units seen for each quantity; the quantity steps again with unit=true (amounts converted to SI "
    "units), to use instead.",
)
def quantity_unit_mismatch(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    names, expr = _unit_pairs(record, f)
    if not any(names):
        return None
    units, si, labels = _units_of(record, env, names)
    if not units:
        return None
    mixed = [n for n in names if len(units.get(n, ())) > 1]
    if expr is not None:
        pairs = [(a, b) for _, a, b in unit_conflicts(expr, units, si)]
    else:
        known = [n for n in names if n in units]
        pairs = [(known[0], known[1])] if len(known) == 2 and units[known[0]] != units[known[1]] else []
    if not pairs and not mixed:
        return None
    involved = list(dict.fromkeys([*mixed, *(v for p in pairs for v in p)]))
    steps = _quantities(f)
    return {
        "seen": [{"var": f"?{n}", "units": sorted(labels[u] for u in units.get(n, ()))} for n in involved],
        "mixed": [f"?{n}" for n in mixed],
        "pairs": [f"?{a} and ?{b}" for a, b in pairs],
        "converted": [_quantity_call(steps[n], f, tag=f"{n}_si", unit=True) for n in involved if n in steps],
    }


# ---------------------------------------------------------------------------
# Time points


def _question_years(f: Facts) -> list[str]:
    question = f.kb_env.question if f.kb_env is not None else None
    return re.findall(r"\b(1[0-9]{3}|20[0-9]{2})\b", question or "")


@_numeric_rule(
    "quantity_several_time_points",
    phase="after",
    actions=("add_quantity",),
    doc="`add_quantity` of an entity (not a variable) without a time gives several amounts because the entity has "
    "statements at several points in time (P585; one bounded probe of the statements read).",
    suggests="The time points with their amounts; `add_quantity` with the year (the question's years first), or "
    "time=true to keep the point in time as ?time_<tag>.",
)
def quantity_several_time_points(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    result = observation_of(record)
    query = record.query_after
    if result is None or query is None or not query.steps:
        return None
    step = query.steps[-1]
    if not isinstance(step, Quantity) or step.time is not None or not isinstance(step.entity, IRI):
        return None  # a class's members (an entity variable) may each have their own time points: that is no error
    shown = result.get(step.tag)
    kb_env = kb_side(env)
    if kb_env is None or shown is None or shown.total < 2:
        return None
    text = probes.time_points_query(query, step.statement_var, step.entity, step.tag)
    points = _select(kb_env, text, probes.read_time_points)
    if points is None:
        return None
    entity, timed = next(((e, p) for e, p in points.items() if len({t.lexical for t, _ in p}) > 1), (None, None))
    if entity is None or timed is None:
        return None
    f = facts(record, env)
    years = list(dict.fromkeys(t.lexical.lstrip("+")[:4] for t, _ in timed))
    asked = [y for y in _question_years(f) if y in years]
    ordered = asked + [y for y in reversed(years) if y not in asked]
    return {
        "tag": f"?{step.tag.name}",
        "entity": _entity_text(f, entity),
        "points": [f"{t.lexical[:10]}: {a.lexical if isinstance(a, Literal) else a}" for t, a in timed],
        "by_year": [_quantity_call(step, f, time=int(y)) for y in ordered],
        "with_time": _quantity_call(step, f, time=True),
    }


# ---------------------------------------------------------------------------
# Rank


def _rank_problem(record: StepRecord, env: Environment, f: Facts) -> tuple[str, str, str] | None:
    """(rank_var, var_list, reason) when the list ranked among is empty: missing, the ranked variable itself,
    no value, or no value other than the ranked one in the rows read."""
    rank, values = _rank_operands(f)
    if not rank or not values:
        return None
    present = set(f.visible)
    if f"?{values}" not in present:
        return rank, values, "missing"
    if values == rank:
        return rank, values, "itself"
    if f"?{rank}" not in present:
        return None
    stats, names = operand_stats(record, env)
    if stats is None or not stats.rows:
        return None
    if stats.variables[names.index(values)].bound == 0:
        return rank, values, "unbound"
    if stats.differ and stats.differ[0] == 0:
        return rank, values, "only"
    return None


def _classes(f: Facts) -> list[str]:
    """The classes the query constrains to already (``add_type_constrain``)."""
    return [_entity_text(f, s.type) for s in f.query_steps if isinstance(s, TypeConstraint) and isinstance(s.type, IRI)]


@_numeric_rule(
    "rank_empty_list",
    actions=("add_rank",),
    doc="`add_rank` ranks among an empty list: var_list is not in the query, is rank_var itself, has no value, or "
    "holds no value but the ranked one in the rows read (the rank would be 1 whatever the data).",
    suggests="Why the list is empty; the variables holding numbers; how to build the list: `add_type_constrain` of "
    "a class, then `add_quantity` of its members with the ranked quantity's property.",
)
def rank_empty_list(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    f = facts(record, env)
    found = _rank_problem(record, env, f)
    if found is None:
        return None
    rank, values, reason = found
    step = _quantities(f).get(rank)
    build = []
    if isinstance(step, Quantity):
        name = values if reason == "missing" else f"{values}_list"
        build = [f"add_quantity(?item, {step.prop}, {name}{', false, true' if step.unit else ''})"]
    return {
        "entity": _entity_text(f, step.entity) if step is not None else "",
        "classes": _classes(f),
        "rank": f"?{rank}",
        "list": f"?{values}",
        "reason": reason,
        "numbers": numeric_variables(f, skip=[rank]),
        "build": build,
    }
