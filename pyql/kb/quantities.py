"""The quantities of an observation: units, time qualifiers and entities of what a step computed.

A Wikidata quantity is a statement (``wd:Q64 p:P1082 ?statement``) whose
value node holds an amount and a unit, and whose qualifiers hold when it
was true (``pq:P585`` point in time, ``pq:P580``/``pq:P582`` start and end).
The observation lists of a quantity step (``The value of variable ?pop is
[3292365, 3520031, 3677472]``) say none of that: not which entity each
amount belongs to, not that one is in feet and one in metres, not which
census year it is. This module reads it for the variables the last step
is about (:func:`quantity_focus`), in one bounded query
(:func:`quantity_query`: the first rows of the query, then a constant number
of look-ups per row), into :class:`~pyql.kb.observation.QuantityRows`
(:func:`read_quantity_rows`), which the observation prints after its lists.

Which variables a step is about is its kind's ``focus`` hook
(:class:`pyql.builder.kind.StepKind`), and what a variable is its kind's
``described`` hook, each in the kind's module:

* ``add_quantity``, ``add_quantity_with_qualifier``, ``add_quantity_by_qualifier``: its tag;
* ``add_bind``: its result and its operands (which amounts gave which result);
* ``add_rank``: the value ranked and the values it is ranked among, and
  ``add_compare``: the values compared (both read on the query before the
  step, whose rows they are);
* ``add_time``, ``add_start_time``, ``add_end_time``: the date, with its entity;
* any other step (``add_filter``, ``add_max``, ``set_answer``; a kind without a
  ``focus`` hook): the quantities and dates it mentions.

A query with none of these (every Freebase query) costs nothing more.

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query("wikidata").add_type_constrain("Q515", "city").add_quantity("city", "P1082", "pop", 2021)
    >>> base, focus = quantity_focus(q)
    >>> [(str(d.var), d.kind, str(d.entity)) for d in focus]
    [('?pop', 'quantity', '?city')]
    >>> text = quantity_query(base, focus, 10)
    >>> "LIMIT 11" in text, "wikibase:quantityUnit ?__q0_unit" in text, "pq:P585 ?__q0_time" in text
    (True, True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pyql.builder.escape as escape
from pyql.builder.compiler import INDENT, prefix_lines, term_sparql
from pyql.builder.kind import kind_of
from pyql.errors import EngineError
from pyql.kb.observation import Amount, Observation, QuantityRows, Value
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.kinds.quantity import WIKIBASE, Described, Focus
from pyql.builder.terms import IRI, Literal, Term, Variable

__all__ = ["Described", "SAMPLE_ROWS", "quantity_focus", "quantity_query", "read_quantity_rows", "observe_quantities"]

#: Rows of the query read to find the rows shown (the engine stops there: the cost does not grow with the KB).
SAMPLE_ROWS = 1000
#: Rows of the answer read per row shown (a statement with two labels or two points in time gives two).
ROWS_PER_SHOWN = 8

_PROP = "http://www.wikidata.org/prop/"
_QUALIFIERS = (("time", "P585"), ("start", "P580"), ("end", "P582"))
_RANKS = {WIKIBASE + "PreferredRank": "preferred", WIKIBASE + "DeprecatedRank": "deprecated"}

Row = Mapping[str, Term]
ValueOf = Callable[[Term, "Term | None"], Value]


def _described(steps: Sequence[Step], visible: Sequence[Variable]) -> dict[Variable, Described]:
    """Every describable variable of the steps (their kinds' ``described`` hooks), by variable (the helper
    variables kept only when visible)."""
    seen = set(visible)
    keep = lambda v: v if v in seen else None  # noqa: E731
    out: dict[Variable, Described] = {}
    for step in steps:
        kind = kind_of(step)
        if kind is None or kind.described is None:
            continue
        for d in kind.described(step):
            out[d.var] = replace(d, statement=keep(d.statement), value_node=keep(d.value_node), stored=keep(d.stored))
    return out


def _focus(step: Step) -> Focus:
    """What a quantity observation after the step is about: its kind's ``focus`` hook, else the variables it mentions."""
    kind = kind_of(step)
    return kind.focus(step) if kind is not None and kind.focus is not None else Focus(step.variables())


def quantity_focus(query: Any) -> tuple[Any, tuple[Described, ...]] | None:
    """The query whose rows are read and the variables the last step is about, or None (nothing to describe).

    ``add_rank`` is read on the query before it (afterwards only the rank is
    visible); the result of ``add_bind`` comes first, then its operands.

    Example:
        >>> from pyql.builder.query import Query
        >>> from pyql.builder.expressions import sub
        >>> q = Query("wikidata").add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021)
        >>> [str(d.var) for d in quantity_focus(q.add_bind(sub("b", "a"), "d"))[1]]
        ['?d', '?b', '?a']
        >>> quantity_focus(Query().add_fact("?x", "a.b.c", "?y")) is None
        True
    """
    if not query.steps:
        return None
    focus = _focus(query.steps[-1])
    # A rank, a yes/no comparison: their rows are gone afterwards (or are none when the answer is no).
    base = query.undo() if focus.before else query
    visible = base.scope.block.variables
    described = _described(base.steps, visible)
    chosen = tuple(described[v] for v in dict.fromkeys(focus.wanted) if v in described and v in visible)
    if not any(d.kind != "value" for d in chosen):
        return None
    return base, chosen


def _label(subject: str, label: Variable, profile: Profile) -> str:
    """``OPTIONAL { subject label ?label }`` in the profile's language; ``subject`` is bound where it is used."""
    path = "|".join(profile.sparql_iri(p) for p in profile.label_predicates)
    lang = escape.literal(profile.label_lang)
    return (
        f"OPTIONAL {{ {subject} {path} {label.sparql()} . "
        f'FILTER(LANG({label.sparql()}) = "" || LANGMATCHES(LANG({label.sparql()}), {lang})) }}'
    )


#: The hops from a value node to the SI unit its amount converts to: its unit, the unit's conversion
#: statement (P2370), that statement's value, the value's unit.
_SI_HOPS = (WIKIBASE + "quantityUnit", _PROP + "P2370", _PROP + "statement/value/P2370", WIKIBASE + "quantityUnit")


def _si_unit(value_node: Variable, name: str, i: int, profile: Profile) -> str:
    """The SI unit of a converted amount (and its label), one OPTIONAL per hop, each nested in the one before.

    One hop at a time from the bound value node, never the path at once:
    an engine (pyoxigraph) evaluates a path or a join inside an OPTIONAL
    before it knows the value node, over every unit conversion of the KB
    (seconds at 10^6 statements), while a single triple whose subject is
    bound is one look-up.

    Example:
        >>> from pyql.builder.profiles import WIKIDATA
        >>> text = _si_unit(Variable("v"), "?__q0_", 0, WIKIDATA)
        >>> text.split(" . ")[:2]
        ['OPTIONAL { ?v wikibase:quantityUnit ?__q0_si1', 'OPTIONAL { ?__q0_si1 p:P2370 ?__q0_si2']
        >>> text.count("OPTIONAL"), "?__q0_si3 wikibase:quantityUnit ?__q0_si ." in text
        (5, True)
    """
    label = _label(name + "si", Variable(f"__q{i}_silabel"), profile)
    subject = value_node.sparql()
    text = label
    for hop, relation in reversed(list(enumerate(_SI_HOPS, 1))):
        target = f"{name}si" if hop == len(_SI_HOPS) else f"{name}si{hop}"
        source = subject if hop == 1 else f"{name}si{hop - 1}"
        text = f"OPTIONAL {{ {source} {term_sparql(IRI(relation), profile)} {target} . {text} }}"
    return text


def _look_ups(d: Described, i: int, profile: Profile) -> list[str]:
    """The OPTIONAL look-ups of one described variable: entity label, unit and its label, qualifiers, rank, SI unit."""
    name = f"?__q{i}_"
    iri = lambda value: term_sparql(IRI(value), profile)  # noqa: E731
    lines = []
    if d.entity is not None and not isinstance(d.entity, Literal):
        lines.append(_label(term_sparql(d.entity, profile), Variable(f"__q{i}_elabel"), profile))
    if d.value_node is not None:
        unit = f"{d.value_node.sparql()} {iri(WIKIBASE + 'quantityUnit')} {name}unit"
        lines.append(f"OPTIONAL {{ {unit} . {_label(name + 'unit', Variable(f'__q{i}_unitlabel'), profile)} }}")
        if d.converted:
            lines.append(_si_unit(d.value_node, name, i, profile))
    if d.statement is not None:
        for key, pid in _QUALIFIERS:
            lines.append(f"OPTIONAL {{ {d.statement.sparql()} {iri(_PROP + 'qualifier/' + pid)} {name}{key} }}")
        lines.append(f"OPTIONAL {{ {d.statement.sparql()} {iri(WIKIBASE + 'rank')} {name}rank }}")
    return lines


def quantity_query(query: Any, focus: Sequence[Described], shown: int) -> str:
    """One bounded query: the first ``shown + 1`` distinct rows over the focus (among the first
    :data:`SAMPLE_ROWS` rows of ``query``), then for each row its units, qualifiers, ranks and labels.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("wikidata").add_quantity("Q130018", "P2044", "elevation", unit=True)
        >>> text = quantity_query(*quantity_focus(q), 5)
        >>> "?non_si_value_st_elevation wikibase:quantityUnit/p:P2370" in text, "LIMIT 1000" in text
        (True, True)
    """
    profile = query.profile
    needed = list(dict.fromkeys(v for d in focus for v in d.needed()))
    names = " ".join(v.sparql() for v in needed)
    core = query.scope.block.pattern(profile)
    first = f"SELECT {names} WHERE\n{core}\nLIMIT {SAMPLE_ROWS}"
    rows = f"SELECT DISTINCT {names} WHERE {{\n" + _indent(first) + f"}}\nLIMIT {int(shown) + 1}"
    look_ups = [line for i, d in enumerate(focus) for line in _look_ups(d, i, profile)]
    body = "{\n" + _indent(rows) + "}\n" + "\n".join(look_ups)
    limit = (int(shown) + 1) * ROWS_PER_SHOWN
    return prefix_lines(profile) + "SELECT * WHERE {\n" + _indent(body) + f"}}\nLIMIT {limit}\n"


def _indent(text: str) -> str:
    return "".join(INDENT + line + "\n" for line in text.split("\n") if line)


def _amount(row: Row, d: Described, i: int, value: ValueOf) -> Amount | None:
    """The cell of one described variable in one row (None: unbound)."""
    term = row.get(d.var.name)
    if term is None:
        return None
    get = lambda key: row.get(f"__q{i}_{key}")  # noqa: E731
    wrap = lambda key, label=None: value(get(key), get(label) if label else None) if get(key) is not None else None  # noqa: E731
    entity = None
    if isinstance(d.entity, Variable) and row.get(d.entity.name) is not None:
        entity = value(row[d.entity.name], get("elabel"))
    elif isinstance(d.entity, IRI):
        entity = value(d.entity, get("elabel"))
    rank = get("rank")
    stored = value(row[d.stored.name], None) if d.stored is not None and row.get(d.stored.name) is not None else None
    return Amount(
        value(term, None),
        unit=wrap("si", "silabel") if d.converted else wrap("unit", "unitlabel"),
        stored=stored,
        stored_unit=wrap("unit", "unitlabel") if d.converted else None,
        point_in_time=wrap("time"), start=wrap("start"), end=wrap("end"),
        rank=_RANKS.get(rank.value) if isinstance(rank, IRI) else None,
        entity=entity if d.kind != "value" else None,
    )


def read_quantity_rows(rows: Iterable[Row], focus: Sequence[Described], value: ValueOf, shown: int) -> QuantityRows:
    """The rows of :func:`quantity_query`: one row per distinct focus row (the first look-up found kept), at most ``shown``.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> d = Described(Variable("pop"), "quantity", IRI("http://www.wikidata.org/entity/Q64"))
        >>> rows = [{"pop": Literal("5", XSD + "decimal"), "__q0_elabel": Literal("Berlin", None, "en")}]
        >>> print(read_quantity_rows(rows, [d], lambda t, l: Value(t, l.lexical if l else None, False, str(t)[-3:]), 10))
        Quantities of ?pop by entity: 'Berlin' (Q64): 5
    """
    needed = list(dict.fromkeys(v.name for d in focus for v in d.needed()))
    found: dict[tuple[Term | None, ...], tuple[Amount | None, ...]] = {}
    for row in rows:
        key = tuple(row.get(name) for name in needed)
        if key not in found:
            found[key] = tuple(_amount(row, d, i, value) for i, d in enumerate(focus))
    distinct = list(dict.fromkeys(found.values()))
    return QuantityRows(tuple(d.var for d in focus), tuple(distinct[:shown]), more=len(distinct) > shown)


def _paired_already(observation: Observation, focus: Sequence[Described]) -> bool:
    """Only dates, each already beside its entity in the observation's joined rows: nothing to add."""
    joined = observation.joined
    if joined is None or any(d.kind != "date" for d in focus):
        return False
    return all(d.var in joined.variables and isinstance(d.entity, Variable) and d.entity in joined.variables for d in focus)


def observe_quantities(kb: Any, query: Any, observation: Observation, shown: int) -> Observation:
    """``observation`` with the quantities of the query's last step (:class:`QuantityRows`), one more query;
    unchanged when the step is about no quantity or the query has no result.

    The look-up failing (an endpoint's time-out) does not fail the step: the
    observation says the units and times were not read, and why.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.builder.query import Query
        >>> kb = KB.open("wikidata-demo")
        >>> q = Query("wikidata").add_quantity("Q1374", "P2044", "elevation")
        >>> print(kb.observe(q).quantities)  # KB.observe calls it
        Quantities of ?elevation by entity: 'Matterhorn' (wd:Q1374): 4,478 metre
    """
    if observation.is_empty:
        return observation
    found = quantity_focus(query)
    if found is None:
        return observation
    base, focus = found
    if _paired_already(observation, focus):
        return observation
    try:
        rows = kb.select(quantity_query(base, focus, shown))
    except EngineError as exc:
        table = QuantityRows(tuple(d.var for d in focus), (), error=str(exc))
    else:
        table = read_quantity_rows(rows, focus, kb.value, shown)
    return replace(observation, quantities=table, queries=observation.queries + 1)
