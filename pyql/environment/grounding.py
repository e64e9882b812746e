"""The values a question names, grounded: numbers, dates, quantities, quoted and capitalised spans, and cue words.

One module for both twins: the KB side (filters, time spans, argmax) and the
table side (conditions matched against a column's cells, aggregations) read
the same :class:`Grounding`. Every grounded value keeps its span in the
question (``question[start:end] == text``), so a consumer can tell which
words a value used, and which cue word stands before it.

What is found:

* numbers: ``17``, ``9.626``, ``-3``, ``1,174`` (thousands separators),
  number words (``two``, ``twenty-one``, ``three hundred``), percentages
  (``45%``, ``45 percent``: unit ``%``);
* quantities: a number with a unit after it (``5 km``, ``3.5 million``) or a
  currency before it (``$12``, ``£8.5m``);
* dates at their precision: a day (``August 15, 2000``, ``15 August 2000``,
  ``2000-08-15``), a month (``March 1998``), a year (``1998``: a four-digit
  number between 1000 and 2199 is also a year), a decade (``the 1990s``,
  ``the 90s``), and
  ``last year`` / ``this year`` / ``next year`` relative to a given day; each
  a range :attr:`DateValue.first` .. :attr:`DateValue.last`;
* quoted strings (``'FK Trakai'``, ``"Rio"``, curly quotes, backticks) and
  capitalised spans (``Takashi Kogure``, ``Presentation of Credentials``);
* cue words: a comparison with its operator (``more than`` → ``>``, ``at
  least`` → ``>=``, ``before`` → ``<``, ``until`` → ``<=``, ``between``), an
  order with its direction (``highest``/``latest``/``last`` → ``max``,
  ``least``/``earliest``/``first`` → ``min``), an aggregation (``how many`` →
  ``COUNT``, ``total`` → ``SUM``, ``average`` → ``AVG``), an ordinal
  (``second`` → ``2``, ``3rd`` → ``3``, ``second to last`` → ``-2``; *first*
  and *last* are orders), a neighbour (``before``/``above``/``previous`` →
  ``before``, ``after``/``below``/``next`` → ``after``: the row before or after
  another), a difference (``difference``, ``how many more`` → ``-``), a
  comparative of two things (``more``/``higher``/``longer`` → ``max``,
  ``fewer``/``lower``/``shorter`` → ``min``: "which is deeper, A or B"), a
  distinct count (``different``, ``distinct``, ``unique``) and a grouping
  (``each``, ``per``, ``every``). A word may give two cues (``before`` is a
  comparison and a neighbour; ``how many more`` a difference and a count).

Example:
    >>> g = ground("Which Score has a Goal smaller than 1,174 since March 1998?")
    >>> [(v.kind, v.text, v.value) for v in g.values if v.kind == "number"]
    [('number', '1,174', 1174.0)]
    >>> d = g.dates()[0]; (d.text, d.value.precision, str(d.value.first), str(d.value.last))
    ('March 1998', 'month', '1998-03-01', '1998-03-31')
    >>> [(c.text, c.op) for c in g.cues if c.kind == "comparison"]
    [('smaller than', '<'), ('since', '>=')]
    >>> [(c.text, v.text) for c, v in g.comparisons()]
    [('smaller than', '1,174'), ('since', 'March 1998')]
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

from grammars.vocabulary import ORDINALS
from pyql.errors import PyQLError

__all__ = ["DIMENSIONS", "Cue", "DateValue", "dimension_words", "Grounded", "Grounding", "GroundingError", "ground", "number_words", "parse_date"]


class GroundingError(PyQLError, ValueError):
    """A question that cannot be grounded (not a string).

    Example:
        >>> GroundingError("x").kind
        'bad_question'
    """

    kind = "bad_question"


@dataclass(frozen=True)
class DateValue:
    """A date at its precision: the first and last day it covers.

    Attributes:
        first: the first day.
        last: the last day.
        precision: ``day``, ``month``, ``year`` or ``decade``.
    """

    first: _dt.date
    last: _dt.date
    precision: str

    def contains(self, other: DateValue) -> bool:
        """Whether ``other`` lies within this date (``March 1998`` contains ``March 19, 1998``).

        Example:
            >>> parse_date("1998").contains(parse_date("March 19, 1998"))
            True
        """
        return self.first <= other.first and other.last <= self.last


@dataclass(frozen=True)
class Grounded:
    """One value of the question and where it is.

    Attributes:
        kind: ``number``, ``quantity``, ``date``, ``quoted`` or ``span`` (capitalised words).
        text: ``question[start:end]``.
        start, end: the span in the question.
        value: a float (number, quantity), a :class:`DateValue` (date) or the text (quoted: without its quotes).
        unit: a quantity's unit (``km``, ``%``, ``£``, ``million`` ...), else "".
    """

    kind: str
    text: str
    start: int
    end: int
    value: Any
    unit: str = ""


@dataclass(frozen=True)
class Cue:
    """A cue word of the question: a comparison, an order, an aggregation, an ordinal, a neighbour, a difference,
    a comparative, a distinct count or a grouping.

    Attributes:
        kind: ``comparison``, ``order``, ``aggregate``, ``ordinal``, ``neighbour``, ``difference``, ``comparative``,
            ``distinct`` or ``each``.
        text: ``question[start:end]``.
        start, end: the span in the question.
        op: a comparison's operator (``> < >= <= between``), an order's or a comparative's direction
            (``max``, ``min``), an aggregation's function (``COUNT``, ``SUM``, ``AVG``), an ordinal's position
            (``2``; ``-2`` second to last), a neighbour's side (``before``, ``after``), a difference's ``-``,
            ``COUNT DISTINCT``, ``group``.
    """

    kind: str
    text: str
    start: int
    end: int
    op: str


@dataclass(frozen=True)
class Grounding:
    """What :func:`ground` found in one question (values and cues in the order of the question)."""

    question: str
    values: tuple[Grounded, ...] = ()
    cues: tuple[Cue, ...] = ()
    today: _dt.date = field(default_factory=_dt.date.today)

    def numbers(self) -> list[Grounded]:
        """The numbers and quantities (years written as numbers included).

        Example:
            >>> [v.value for v in ground("two goals in 1998").numbers()]
            [2.0, 1998.0]
        """
        return [v for v in self.values if v.kind in ("number", "quantity")]

    def dates(self) -> list[Grounded]:
        """The dates (a bare year too).

        Example:
            >>> [v.value.precision for v in ground("between 1990 and the 2000s").dates()]
            ['year', 'decade']
        """
        return [v for v in self.values if v.kind == "date"]

    def texts(self) -> list[Grounded]:
        """The quoted strings and capitalised spans.

        Example:
            >>> [v.value for v in ground("Which club is 'FK Trakai' in Lower Saxony?").texts()]
            ['FK Trakai', 'Lower Saxony']
        """
        return [v for v in self.values if v.kind in ("quoted", "span")]

    def cue(self, kind: str) -> list[Cue]:
        """The cues of one kind.

        Example:
            >>> [c.op for c in ground("how many games at most 3 goals?").cue("aggregate")]
            ['COUNT']
        """
        return [c for c in self.cues if c.kind == kind]

    def comparisons(self) -> list[tuple[Cue, Grounded]]:
        """Each comparison cue with the value right after it (numbers and dates; a few words may stand between).

        Example:
            >>> [(c.op, v.value) for c, v in ground("games with more than 3 goals").comparisons()]
            [('>', 3.0)]
        """
        out = []
        for cue in self.cue("comparison"):
            after = [v for v in self.values if v.kind in ("number", "quantity", "date") and v.start >= cue.end]
            if after and len(_WORDS.findall(self.question[cue.end : after[0].start])) <= 3:
                out.append((cue, after[0]))
        return out


# ---------------------------------------------------------------------------
# numbers

_UNITS_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS_WORDS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_WORDS = re.compile(r"[A-Za-z0-9]+")
_NUMBER_WORD = "|".join(sorted([*_UNITS_WORDS, *_TENS_WORDS, *_SCALE_WORDS], key=len, reverse=True))
_WORD_NUMBER = re.compile(rf"\b(?:{_NUMBER_WORD})(?:(?:[- ]|\s+and\s+)(?:{_NUMBER_WORD}))*\b", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\w.,\-\u2013])([-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![\d\-\u2013]|[.,]\d)")
_CURRENCY = "$£€¥"
_UNITS = (
    "%", "percent", "per cent", "km", "kilometres", "kilometers", "m", "metres", "meters", "cm", "mm", "kg", "g", "lb", "lbs",
    "miles", "mile", "mph", "km/h", "ft", "feet", "foot", "inches", "mhz", "khz", "ghz", "w", "kw", "mw", "hz",
    "years", "year", "months", "days", "hours", "minutes", "seconds", "points", "goals", "million", "billion", "thousand",
    "bn", "k", "tonnes", "tons", "acres", "hectares", "°c", "°f", "sq mi", "km2", "km²",
)
_UNIT = re.compile(r"\s?(" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True)) + r")(?![\w²])", re.IGNORECASE)


def number_words(text: str) -> float | None:
    """The value of a number written in words (``twenty-one``, ``three hundred and five``), else None.

    Example:
        >>> number_words("twenty-one"), number_words("three hundred and five"), number_words("two thousand"), number_words("lots")
        (21.0, 305.0, 2000.0, None)
    """
    words = [w for w in re.split(r"[-\s]+", text.lower().strip()) if w and w != "and"]
    if not words:
        return None
    total, current = 0, 0
    for word in words:
        if word in _UNITS_WORDS:
            current += _UNITS_WORDS[word]
        elif word in _TENS_WORDS:
            current += _TENS_WORDS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALE_WORDS:
            total += max(current, 1) * _SCALE_WORDS[word]
            current = 0
        else:
            return None
    return float(total + current)


def _digit_numbers(question: str) -> list[Grounded]:
    out = []
    for m in _DIGITS.finditer(question):
        start, end = m.span(1)
        value = float(m.group(1).replace(",", "").replace("\u2212", "-"))
        kind, unit = "number", ""
        if start > 0 and question[start - 1] in _CURRENCY:
            start, kind, unit = start - 1, "quantity", question[start - 1]
        after = _UNIT.match(question, end)
        if after is None and end < len(question) and question[end].isalpha():
            continue  # a code such as 04x25 or 3rd, not a number
        if after is not None:
            kind, end = "quantity", after.end()
            written = after.group(1).lower()
            unit = unit + written if unit else ("%" if written in ("percent", "per cent") else written)
        out.append(Grounded(kind, question[start:end], start, end, value, unit))
    return out


def _word_numbers(question: str) -> list[Grounded]:
    out = []
    for m in _WORD_NUMBER.finditer(question):
        text = m.group().strip()
        if text.lower() in ("one",) and re.match(r"\s+(of|another|that|who|which)\b", question[m.end() :]):
            continue  # "one of the ..." is not a count
        value = number_words(text)
        if value is not None:
            out.append(Grounded("number", text, m.start(), m.start() + len(text), value))
    return out


# ---------------------------------------------------------------------------
# dates

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>[12]\d{3})"
_DATE_FORMS = [
    ("day", re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.IGNORECASE)),
    ("day", re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("day", re.compile(r"\b(?P<year>[12]\d{3})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b")),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)),
    ("decade", re.compile(r"\b(?:the\s+)?(?P<year>[12]\d{2}0)'?s\b", re.IGNORECASE)),
    ("short_decade", re.compile(r"\b(?:the\s+)?'?(?P<short>[1-9]0)'?s\b", re.IGNORECASE)),
    ("relative", re.compile(r"\b(?P<which>last|this|next|previous)\s+year\b", re.IGNORECASE)),
    ("year", re.compile(r"(?<![\w.,$£€])(?P<year>1\d{3}|2[01]\d{2})(?![\w]|[.,]\d)")),
]


def _month_number(text: str) -> int:
    return int(text) if text.isdigit() else _MONTHS[text.lower().rstrip(".")]


def _date_of(form: str, m: re.Match[str], today: _dt.date) -> DateValue | None:
    if form == "relative":
        year = today.year + {"last": -1, "previous": -1, "this": 0, "next": 1}[m.group("which").lower()]
        return DateValue(_dt.date(year, 1, 1), _dt.date(year, 12, 31), "year")
    if form == "short_decade":  # "the 90s": a decade of the last century
        year = 1900 + int(m.group("short"))
        return DateValue(_dt.date(year, 1, 1), _dt.date(year + 9, 12, 31), "decade")
    year = int(m.group("year"))
    if form == "decade":
        return DateValue(_dt.date(year, 1, 1), _dt.date(year + 9, 12, 31), "decade")
    if form == "year":
        return DateValue(_dt.date(year, 1, 1), _dt.date(year, 12, 31), "year")
    month = _month_number(m.group("month"))
    if not 1 <= month <= 12:
        return None
    if form == "month":
        return DateValue(_dt.date(year, month, 1), _dt.date(year, month, calendar.monthrange(year, month)[1]), "month")
    try:
        day = _dt.date(year, month, int(m.group("day")))
    except ValueError:
        return None
    return DateValue(day, day, "day")


def _dates(question: str, today: _dt.date) -> list[Grounded]:
    out: list[Grounded] = []
    taken: list[tuple[int, int]] = []
    for form, pattern in _DATE_FORMS:
        for m in pattern.finditer(question):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue  # inside a more precise date found before
            value = _date_of(form, m, today)
            if value is not None:
                taken.append(m.span())
                out.append(Grounded("date", m.group(), m.start(), m.end(), value))
    return out


def parse_date(text: str, today: _dt.date | None = None) -> DateValue | None:
    """The date a whole text writes (a table cell, a value), at its precision; None when it is not one date.

    Example:
        >>> parse_date("August 15, 2000")
        DateValue(first=datetime.date(2000, 8, 15), last=datetime.date(2000, 8, 15), precision='day')
        >>> parse_date("8 March 2007").first, parse_date("1998").precision, parse_date("Rio")
        (datetime.date(2007, 3, 8), 'year', None)
    """
    stripped = text.strip()
    found = _dates(stripped, today or _dt.date.today())
    whole = [d for d in found if d.start == 0 and d.end == len(stripped)]
    return whole[0].value if whole else None


# ---------------------------------------------------------------------------
# quoted strings and capitalised spans

_QUOTED = re.compile(r"""(?:(?<![\w])'(?P<a>[^'\n]+?)'(?![\w]))|"(?P<b>[^"\n]+?)"|“(?P<c>[^”\n]+?)”|‘(?P<d>[^’\n]+?)’|`(?P<e>[^`\n]+?)`""")
_CONNECTORS = {"of", "the", "de", "la", "le", "du", "del", "da", "van", "von", "&"}
_OPENERS = {
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "name", "tell", "list", "give", "is", "are",
    "was", "were", "did", "do", "does", "in", "on", "of", "the", "a", "an", "for", "with", "at", "by", "from", "and",
    "if", "that", "this", "there", "it", "i", "count", "find", "show", "insert", "update", "change", "record", "after",
    "set", "modify", "add", "alter", "edit", "replace", "correct", "delete", "remove",
    "before", "during", "since", "until", "between", "what's", "which's", "who's", "when's", "where's", "how's",
}
_TOKEN = re.compile(r"[^\s,;:?!()\[\]]+")


def _is_capitalised(token: str) -> bool:
    head = token.lstrip("\"'“‘(")
    return bool(head) and (head[0].isupper() or (head[0].isdigit() and any(c.isupper() for c in head)))


def _quoted(question: str) -> list[Grounded]:
    out = []
    for m in _QUOTED.finditer(question):
        inner = next(g for g in m.groups() if g is not None)
        if inner.strip():
            out.append(Grounded("quoted", m.group(), m.start(), m.end(), inner.strip()))
    return out


def _spans(question: str) -> list[Grounded]:
    """Runs of capitalised words (connectors such as "of" inside), a question's opening word left out."""
    tokens = [(m.start(), m.end(), m.group().rstrip(".'’\"”")) for m in _TOKEN.finditer(question)]
    out, run = [], []
    for i, (start, end, word) in enumerate(tokens + [(len(question), len(question), "")]):
        capital = bool(word) and _is_capitalised(word) and not (i == 0 and word.lower() in _OPENERS)
        if capital and (not run or tokens[run[-1]][1] + 2 >= start or _gap_is_connector(question, tokens, run[-1], i)):
            run.append(i)
            continue
        if word.lower() in _CONNECTORS and run:
            continue
        if run:
            out.append(_span_of(question, tokens, run))
        run = [i] if capital else []
    return [g for g in out if g is not None]


def _gap_is_connector(question: str, tokens: list[tuple[int, int, str]], last: int, current: int) -> bool:
    between = question[tokens[last][1] : tokens[current][0]].split()
    return 0 < len(between) <= 2 and all(w.lower() in _CONNECTORS for w in between)


def _span_of(question: str, tokens: list[tuple[int, int, str]], run: list[int]) -> Grounded | None:
    start, end = tokens[run[0]][0], tokens[run[-1]][0] + len(tokens[run[-1]][2])
    start += len(question[start:end]) - len(question[start:end].lstrip("\"'“‘("))
    text = question[start:end]
    if not text or (len(run) == 1 and text.lower() in _OPENERS):
        return None
    return Grounded("span", text, start, end, text)


# ---------------------------------------------------------------------------
# cue words

_CUE_WORDS: list[tuple[str, str, str]] = [
    # comparisons
    *[(w, "comparison", ">") for w in ("more than", "greater than", "larger than", "bigger than", "higher than", "over",
                                        "above", "exceeding", "exceeds", "later than", "longer than", "after", "older than",
                                        "taller than", "heavier than")],
    *[(w, "comparison", "<") for w in ("less than", "fewer than", "smaller than", "lower than", "under", "below",
                                        "earlier than", "shorter than", "before", "younger than", "prior to")],
    *[(w, "comparison", ">=") for w in ("at least", "or more", "no less than", "not less than", "no fewer than", "not fewer than",
                                         "no earlier than", "not earlier than", "no lower than", "no smaller than", "since", "from")],
    *[(w, "comparison", "<=") for w in ("at most", "or less", "or fewer", "no more than", "not more than", "no later than",
                                         "not later than", "no higher than", "no greater than", "no larger than", "up to", "until",
                                         "till")],
    ("between", "comparison", "between"),
    # orders
    *[(w, "order", "max") for w in ("most", "highest", "largest", "biggest", "greatest", "maximum", "latest", "last", "longest",
                                     "most recent", "most recently", "top", "later", "newest", "max")],
    *[(w, "order", "min") for w in ("least", "lowest", "smallest", "fewest", "minimum", "earliest", "first", "shortest",
                                     "earlier", "min")],
    # aggregations
    *[(w, "aggregate", "COUNT") for w in ("how many", "number of", "count")],
    *[(w, "aggregate", "SUM") for w in ("total", "sum", "combined", "altogether")],
    *[(w, "aggregate", "AVG") for w in ("average", "mean")],
    # a row's place, its neighbours, a difference, two things compared, distinct values, groups
    *[(w, "ordinal", str(n)) for w, n in ORDINALS.items() if w not in ("first", "last", "final")],
    *[(w, "neighbour", "before") for w in ("before", "above", "previous", "preceding", "prior to", "preceded", "previously",
                                            "just before", "right before", "immediately before", "ahead of")],
    *[(w, "neighbour", "after") for w in ("after", "below", "next", "following", "followed", "succeeded", "just after",
                                           "right after", "immediately after", "behind")],
    *[(w, "difference", "-") for w in ("difference", "how many more", "how much more", "how many fewer", "how many less",
                                        "how much less", "how much longer", "how much higher", "how many years")],
    *[(w, "aggregate", "COUNT") for w in ("how many more", "how many fewer", "how many less", "how many years")],
    *[(w, "comparative", "max") for w in ("more", "higher", "larger", "bigger", "greater", "longer", "taller", "deeper",
                                           "heavier", "older", "faster", "farther", "further", "better", "wider", "later")],
    *[(w, "comparative", "min") for w in ("less", "fewer", "lower", "smaller", "shorter", "younger", "slower", "worse",
                                           "earlier", "lighter", "narrower")],
    *[(w, "distinct", "COUNT DISTINCT") for w in ("different", "distinct", "unique")],
    *[(w, "each", "group") for w in ("each", "per", "every")],
]
_CUE_RE = re.compile(
    r"\b(" + "|".join(re.escape(w) for w in sorted({w for w, _, _ in _CUE_WORDS}, key=lambda w: -len(w))) + r")\b",
    re.IGNORECASE,
)
_ORDINAL_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_CUE_OF: dict[str, list[tuple[str, str]]] = {}
for _w, _kind, _op in _CUE_WORDS:
    _CUE_OF.setdefault(_w, []).append((_kind, _op))


#: What follows "last" as a verb of duration: "last for", "last longer than", "last over three minutes".
_LAST_VERB = re.compile(r"\s+(?:for|longer|shorter|more|less|over|under|at\s+(?:least|most)|about|around|between)\b", re.IGNORECASE)


def _cues(question: str, dates: list[Grounded]) -> list[Cue]:
    out = []
    for m in _CUE_RE.finditer(question):
        if any(d.start <= m.start() < d.end for d in dates):
            continue  # "last" of "last year" is a date, not an order
        if m.group().lower() == "last" and _LAST_VERB.match(question, m.end()):
            continue  # "tracks that last for more than three minutes": a duration, not an order
        for kind, op in _CUE_OF[m.group().lower()]:
            if op == "max" and m.group().lower() == "most" and question[max(0, m.start() - 3) : m.start()].lower() == "at ":
                continue
            out.append(Cue(kind, m.group(), m.start(), m.end(), op))
    for m in _ORDINAL_RE.finditer(question):
        if not any(d.start <= m.start() < d.end for d in dates) and int(m.group(1)) > 0:
            out.append(Cue("ordinal", m.group(), m.start(), m.end(), m.group(1)))
    return sorted(out, key=lambda c: c.start)


#: What a comparative or superlative adjective measures: words a relation that holds the measure is named with
#: ("stronger than" compares winds or a category, "deadlier" fatalities); read by the KB's ranking.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("stronger", "strongest", "weaker", "weakest", "powerful", "intense"), ("winds", "wind", "category", "intensity", "strength")),
    **dict.fromkeys(("deadlier", "deadliest"), ("fatalities", "deaths")),
    **dict.fromkeys(("costlier", "costliest"), ("damages", "damage", "cost")),
    **dict.fromkeys(("taller", "tallest", "shorter", "shortest"), ("height", "elevation")),
    **dict.fromkeys(("heavier", "heaviest", "lighter", "lightest"), ("weight", "mass")),
    **dict.fromkeys(("older", "oldest", "younger", "youngest"), ("born", "birth", "age", "founded")),
    **dict.fromkeys(("faster", "fastest", "slower", "slowest"), ("speed",)),
    **dict.fromkeys(("populous", "crowded"), ("population",)),
    **dict.fromkeys(("wetter", "wettest", "rainier", "rainiest"), ("rainfall", "precipitation")),
}


def dimension_words(question: str) -> list[str]:
    """The words of what the question's comparative or superlative adjectives measure (:data:`DIMENSIONS`).

    Example:
        >>> dimension_words("was hurricane katrina stronger than tropical storm rachel?")[:2]
        ['winds', 'wind']
        >>> dimension_words("which city is largest?")
        []
    """
    words = [w.lower() for w in _WORDS.findall(question or "")]
    return list(dict.fromkeys(d for w in words for d in DIMENSIONS.get(w, ())))


# ---------------------------------------------------------------------------


def ground(question: str, today: _dt.date | None = None) -> Grounding:
    """Ground the values and cue words of a question (see the module's docstring).

    Args:
        question: the question.
        today: the day "last year" / "this year" count from (default: today).

    Raises:
        GroundingError: ``question`` is not a string.

    Example:
        >>> g = ground("How many games did FK Trakai win in the 1990s, at least twenty-one?")
        >>> [(v.kind, v.text) for v in g.values]
        [('span', 'FK Trakai'), ('date', 'the 1990s'), ('number', 'twenty-one')]
        >>> [(c.kind, c.op) for c in g.cues]
        [('aggregate', 'COUNT'), ('comparison', '>=')]
        >>> ground("wins last year", today=_dt.date(2024, 5, 1)).dates()[0].value.first
        datetime.date(2023, 1, 1)
    """
    if not isinstance(question, str):
        raise GroundingError(f"a question to ground must be a string, not {type(question).__name__} ({question!r:.60})")
    today = today or _dt.date.today()
    dates = _dates(question, today)
    numbers = [n for n in _digit_numbers(question) if not any(d.start <= n.start and n.end <= d.end and
                                                             d.value.precision != "year" for d in dates)]
    words = [n for n in _word_numbers(question) if not any(d.start <= n.start < d.end for d in dates)]
    quoted = _quoted(question)
    masked = question
    for v in [*quoted, *dates]:  # spans are looked for outside quotes and dates (same length: the spans stay true)
        masked = masked[: v.start] + " " * (v.end - v.start) + masked[v.end :]
    spans = [Grounded("span", question[s.start : s.end], s.start, s.end, question[s.start : s.end]) for s in _spans(masked)]
    values = sorted([*dates, *numbers, *words, *quoted, *spans], key=lambda v: (v.start, -v.end, v.kind))
    return Grounding(question, tuple(values), tuple(_cues(question, dates)), today)
