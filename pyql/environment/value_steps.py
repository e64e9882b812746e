"""The choose enumerator's steps that carry a value of the question: filters on numbers and dates.

The question's values are grounded once (:func:`pyql.environment.grounding.ground`:
numbers, dates at their precision, comparison cue words with their
direction). On every numeric or date variable of the query, whatever hop
bound it, :func:`value_filters` offers ``add_filter`` with those values, as
literals of the variable's own datatype (the values it was seen with:
``xsd:date``, ``xsd:dateTime``, ``xsd:gYear``, integers, decimals), written
through :func:`pyql.builder.escape.literal`:

* a value after a comparison cue takes the cue's direction: "more than 3"
  is ``> 3``, "at least 3" ``>= 3``, "before March 1998" ``< 1998-03-01``,
  "after 1998" ``>= 1999-01-01``, "until 1998" ``< 1999-01-01``; "between"
  two values is ``>=`` the first and then ``<`` (dates) or ``<=`` (numbers) the second;
* a date without a cue is the range it covers: a day is an equality; a
  month or a decade is ``>=`` its first day, then, once that is built,
  ``<`` the first day after it — so "March 1998" is never an equality with
  the year; a year is one equality with ``"1998"^^xsd:gYear``, which the
  compiler matches at the year's precision on a full date too (on an
  ``xsd:gYear`` variable a month is its year, a decade the range of its years);
* a number without a cue is offered with ``>``, ``<`` and ``=`` (the
  ranking picks by the question's words).

Example:
    >>> from pyql.environment.grounding import ground
    >>> from pyql.builder.terms import Literal, XSD
    >>> g = ground("cyclones formed in March 1998")
    >>> seen = {"?formed": (Literal("1998-03-05", XSD + "date"),)}
    >>> [s for s in value_filters(g, seen, built=set())]
    ['add_filter(?formed, >=, "1998-03-01"^^xsd:date)']
    >>> [s for s in value_filters(g, seen, built={'add_filter(?formed, >=, 1998-03-01)'})]
    ['add_filter(?formed, <, "1998-04-01"^^xsd:date)']
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from pyql.builder import escape
from pyql.environment.grounding import Cue, DateValue, Grounded, Grounding, ground
from pyql.builder.terms import XSD, Literal

__all__ = ["date_literal", "number_literal", "prompt_values", "question_value_fit", "value_filters", "value_hints"]

_XSD_IRI = "<" + XSD
#: The datatypes a date variable may hold, as the KB writes them.
_DATE_TYPES = ("date", "dateTime", "gYear", "gYearMonth")
#: A cue's operator for a date as a range [first, next): the comparison on the range's ends.
_DATE_BOUND = {">": (">=", "next"), ">=": (">=", "first"), "<": ("<", "first"), "<=": ("<", "next")}


def _short(text: str) -> str:
    """An escaped literal with the XML Schema namespace written ``xsd:`` (as the action language reads it)."""
    if "^^" + _XSD_IRI in text and text.endswith(">"):
        return text.replace("^^" + _XSD_IRI, "^^xsd:")[:-1]
    return text


def date_literal(day: _dt.date, datatype: str) -> str:
    """A day as an action's literal of a date variable's datatype (``date``, ``dateTime``, ``gYear``, ``gYearMonth``).

    Example:
        >>> date_literal(_dt.date(1998, 3, 1), "date"), date_literal(_dt.date(1998, 3, 1), "gYear")
        ('"1998-03-01"^^xsd:date', '"1998"^^xsd:gYear')
        >>> date_literal(_dt.date(1998, 3, 1), "dateTime")
        '"1998-03-01T00:00:00"^^xsd:dateTime'
    """
    lexical = {
        "date": day.isoformat(),
        "dateTime": day.isoformat() + "T00:00:00",
        "gYear": f"{day.year:04d}",
        "gYearMonth": f"{day.year:04d}-{day.month:02d}",
    }[datatype]
    return _short(escape.literal(lexical, XSD + datatype))


def number_literal(value: float) -> str:
    """A number as an action's literal: an integer when it is whole, else a decimal (bare, as SPARQL writes them;
    both compare with every numeric datatype a variable may hold, and keep the value exact).

    Example:
        >>> number_literal(1174.0), number_literal(9.5), number_literal(1.5e-07)
        ('1174', '9.5', '0.00000015')
    """
    if float(value).is_integer():
        return escape.literal(str(int(value)), XSD + "integer")
    return escape.literal(format(Decimal(repr(float(value))), "f"), XSD + "decimal")  # never an exponent


def _date_type(terms: Sequence[Literal]) -> str:
    """The datatype of a date variable's values (``date`` when they differ or are not typed)."""
    found = {(t.datatype or "").removeprefix(XSD) for t in terms}
    return found.pop() if len(found) == 1 and next(iter(found)) in _DATE_TYPES else "date"


#: A bound written as a year (``"2014"^^xsd:gYear``) whatever the variable's datatype.
_YEAR_MARK = "year:"


def _bound_literal(day: _dt.date | str, datatype: str) -> str:
    """A bound of :func:`_date_bounds` as an action's literal (a year bound as ``xsd:gYear``)."""
    if isinstance(day, str):
        return date_literal(_dt.date.fromisoformat(day.removeprefix(_YEAR_MARK)), "gYear")
    return date_literal(day, datatype)


def _next_day(value: DateValue) -> _dt.date:
    return value.last + _dt.timedelta(days=1)


def _cue_of(grounding: Grounding) -> dict[int, Cue]:
    """Each grounded value's comparison cue, by the value's start ("between" gives its cue to both values)."""
    out: dict[int, Cue] = {}
    for cue, value in grounding.comparisons():
        out[value.start] = cue
        if cue.op == "between":
            later = [v for v in grounding.values if v.kind == value.kind and v.start > value.end]
            if later:
                out[later[0].start] = Cue(cue.kind, cue.text, cue.start, cue.end, "between-end")
    return out


def _date_bounds(value: DateValue, cue: Cue | None, datatype: str) -> list[tuple[str, _dt.date | str]]:
    """The comparisons one grounded date makes on a variable: (operator, day or a year bound), in the order they are built."""
    op = cue.op if cue else None
    if op == "between":
        op = ">="
    elif op == "between-end":
        op = "<="
    if datatype == "gYear" and value.precision in ("year", "decade", "month", "day") and op is None:
        if value.first.year == value.last.year:
            return [("=", value.first)]
        return [(">=", value.first), ("<", _next_day(value))]
    if op is None:
        if value.precision == "day":
            return [("=", value.first)]
        if value.precision == "year":  # written as a gYear: the query compares a date with it at the year's precision
            return [("=", _YEAR_MARK + value.first.isoformat())]
        return [(">=", value.first), ("<", _next_day(value))]
    bound, end = _DATE_BOUND[op]
    return [(bound, _next_day(value) if end == "next" else value.first)]


def _number_ops(cue: Cue | None) -> tuple[str, ...]:
    if cue is None:
        return (">", "<", "=")
    return {"between": (">=",), "between-end": ("<=",)}.get(cue.op, (cue.op,))


_TYPED = re.compile(r'"([^"]*)"\^\^[^,)\s]+')


def _bare(line: str) -> str:
    """An action line with its typed literals written bare, as a query lists the actions it was built from."""
    return _TYPED.sub(r"\1", line)


def _range_steps(var: str, bounds: list[tuple[str, str]], built: set[str]) -> list[str]:
    """A range's comparisons one at a time: the first not built yet (the next once the one before is built)."""
    done = {_bare(line) for line in built}
    for op, text in bounds:
        line = f"add_filter({var}, {op}, {text})"
        if _bare(line) not in done:
            return [line]
    return []


def _dates_on(var: str, terms: Sequence[Literal], dates: list[Grounded], cues: dict[int, Cue], built: set[str]) -> list[str]:
    datatype = _date_type(terms)
    out: list[str] = []
    for date in dates:
        bounds = [(op, _bound_literal(day, datatype)) for op, day in _date_bounds(date.value, cues.get(date.start), datatype)]
        out += _range_steps(var, bounds, built)
    return out


def value_filters(grounding: Grounding, seen: Mapping[str, Sequence[Literal]], built: set[str]) -> list[str]:
    """The ``add_filter`` steps the question's values make on the numeric and date variables ``seen`` (see the module).

    Args:
        grounding: the question, grounded.
        seen: each numeric or date variable (any hop) with the literals it was seen with.
        built: the actions already in the query (a range's second comparison follows its first).

    Example:
        >>> from pyql.environment.grounding import ground
        >>> from pyql.builder.terms import Literal, XSD
        >>> value_filters(ground("cyclones with winds of more than 200 km/h"), {"?w": (Literal("280", XSD + "integer"),)}, set())
        ['add_filter(?w, >, 200)']
    """
    cues = _cue_of(grounding)
    dates = grounding.dates()
    date_starts = {d.start for d in dates if d.value.precision != "year"}
    numbers = [n for n in grounding.numbers() if n.start not in date_starts]
    out: list[str] = []
    for var, terms in seen.items():
        if not terms:
            continue
        if all(t.is_date for t in terms):
            out += _dates_on(var, terms, dates, cues, built)
        elif all(t.is_numeric for t in terms):
            for number in numbers:
                if any(d.start == number.start for d in dates) and number.start not in cues:
                    continue  # a bare year is a date, not a threshold
                text = number_literal(number.value)
                out += [f"add_filter({var}, {op}, {text})" for op in _number_ops(cues.get(number.start))]
    done = {_bare(line) for line in built}
    return [line for line in dict.fromkeys(out) if _bare(line) not in done]


def _parse_literal(text: str) -> tuple[str, str] | None:
    """An action's literal as (datatype local name, lexical): ``"1998"^^xsd:gYear`` → ("gYear", "1998"), ``200`` → ("number", "200")."""
    text = text.strip()
    if text.startswith('"') and '"^^' in text:
        lexical, datatype = text[1:].split('"^^', 1)
        local = datatype.removeprefix("xsd:").removeprefix(_XSD_IRI).rstrip(">")
        return local, lexical
    try:
        float(text)
    except ValueError:
        return None
    return "number", text


def question_value_fit(grounding: Grounding, op: str, value: str) -> int:
    """How well a filter ``op value`` says what the question's values say: 2 the value and its direction,
    1 the value with another direction, 0 not a value of the question.

    Example:
        >>> from pyql.environment.grounding import ground
        >>> g = ground("cyclones that formed after 1998 with more than 200 deaths")
        >>> question_value_fit(g, ">=", '"1999-01-01"^^xsd:date'), question_value_fit(g, ">", "200"), question_value_fit(g, "<", "200")
        (2, 2, 1)
        >>> question_value_fit(g, "=", "7")
        0
    """
    parsed = _parse_literal(value)
    if parsed is None:
        return 0
    datatype, lexical = parsed
    cues = _cue_of(grounding)
    best = 0
    if datatype == "number":
        for number in grounding.numbers():
            if float(lexical) == float(number.value):
                best = max(best, 2 if op in _number_ops(cues.get(number.start)) else 1)
        return best
    if datatype not in _DATE_TYPES:
        return 0
    for date in grounding.dates():
        bounds = [(o, _bound_literal(day, datatype)) for o, day in _date_bounds(date.value, cues.get(date.start), datatype)]
        if (op, _short(escape.literal(lexical, XSD + datatype))) in bounds:
            return 2
        if any(text == _short(escape.literal(lexical, XSD + datatype)) for _, text in bounds):
            best = 1
    return best


def _hint(value: Grounded, cue: Cue | None) -> tuple[str, list[str]]:
    """One grounded value as the prompt lists it, and the literals a filter or time span may take from it."""
    said = f'"{value.text}"' + (f' after "{cue.text}"' if cue and not cue.op.startswith("between") else "")
    if value.kind == "date":
        bounds = _date_bounds(value.value, cue, "date")
        literals = [_bound_literal(day, "date") for _, day in bounds]
        shown = " and ".join(f"{op} {day.removeprefix(_YEAR_MARK)[:4] if isinstance(day, str) else day.isoformat()}" for op, day in bounds)
        return f"{said}: a {value.value.precision}, {shown}", literals
    text = number_literal(value.value)
    ops = _number_ops(cue)
    return f"{said}: {text}" + (f", {' or '.join(ops)}" if cue else ""), [text]


def value_hints(grounding: Grounding) -> list[tuple[str, list[str]]]:
    """The question's values as a prompt lists them (with the comparison their cue word makes), each with
    the literals an ``add_filter`` or ``add_time_constrain`` may write for it (dates as ``xsd:date``).

    A bare year stands once, as a date; capitalised spans and quoted strings are names, not values, and are left out.

    Example:
        >>> from pyql.environment.grounding import ground
        >>> [line for line, _ in value_hints(ground("cyclones with more than 200 deaths since March 1998"))]
        ['"200" after "more than": 200, >', '"March 1998" after "since": a month, >= 1998-03-01']
        >>> value_hints(ground("governors in 2005"))[0]
        ('"2005": a year, = 2005', ['"2005"^^xsd:gYear'])
        >>> value_hints(ground("storms of the 1990s"))[0]
        ('"the 1990s": a decade, >= 1990-01-01 and < 2000-01-01', ['"1990-01-01"^^xsd:date', '"2000-01-01"^^xsd:date'])
    """
    cues = _cue_of(grounding)
    dates = {d.start for d in grounding.dates()}
    out = []
    for value in grounding.values:
        if value.kind in ("number", "quantity") and value.start in dates:
            continue
        if value.kind in ("number", "quantity", "date"):
            out.append(_hint(value, cues.get(value.start)))
    return out


def prompt_values(question: str | None, mentions: Iterable[str] = ()) -> str:
    """The question's values on one line for a text or grammar prompt ("" when it has none); the names of
    linked entities are left out first (a year in "2005 Atlantic hurricane season" is a name, not a value).

    Example:
        >>> prompt_values("which cyclones of the 2005 Atlantic hurricane season formed before 2005-09-01?",
        ...               ["2005 Atlantic hurricane season"])
        '"2005-09-01" after "before": a day, < 2005-09-01'
        >>> prompt_values("what category is rachel?")
        ''
    """
    text = question or ""
    for mention in mentions:
        text = re.sub(re.escape(mention), " " * len(mention), text, flags=re.IGNORECASE)
    return "; ".join(line for line, _ in value_hints(ground(text)))
