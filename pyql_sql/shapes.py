"""The step plans a question's shape asks for on a table: the choose list's steps beyond conditions and one answer.

WikiTableQuestions asks what one condition and one ``set_answer`` cannot say:
"which is deeper, Lake Tuz or Lake Palas Tuzla", "how many more seats does
AT&T Stadium have than Ford Field", "what team comes before Hank Stein",
"the first person eliminated", "which town is listed the most", "how many
different countries", "how many games in January" (the month inside a date
written as text). :func:`question_plans` reads the question's cue words
(:func:`pyql.environment.grounding.ground`: comparatives, differences,
neighbours, ordinals, orders, distinct counts) and the cells it names
(:mod:`pyql_sql.question_match`) and returns, for each shape it finds, the
steps that say it, in order:

==============  ===================================================================================
shape           steps
==============  ===================================================================================
``words``       two answer words joined by *or* (*more or less*, *above or below*, *before or after*) and two
                named rows, each one row of the table: ``compare_rows(column, key, A, B, DESC, more, less)``,
                A the row asked about, the first word the one saying A has the larger number (a rank's
                *above* is its smaller number); *before/after* only on a column of numbers (a Pick, a Year)
``compare``     two cells of one column joined by *or/and/than* and a comparative:
                ``compare_rows(column, key, A, B, DESC)`` (the compared column named, or measured by
                the adjective; a rank's "higher" is its smaller number)
``choice``      *was it A or B?*: options of one column joined by commas and *or* after a yes/no word, no
                comparative: ``set_answer(column)`` of the row the other conditions keep
``same``        *the same <column> as <cell>*: ``add_condition(column, =, <the cell's row's value>)`` (read off the
                table), ``add_condition(key, !=, cell)``, then the column asked (else the key)
``than``        *a comparative than <cell>*: ``add_condition(column, >, <the cell's row's value>)`` (read off
                the table); the count or column asked follows
``count_compare``  two cells of one column and *more/less* counting rows ("did they play at A or B more"):
                ``add_group(key)``, ``compare_rows(Count, key, A, B, DESC)``
``difference``  a difference (or a total) of two such cells: ``set_calculation(column, -, key, A, B)``,
                the larger first (``+`` for a total)
``adjacent``    a neighbour word right before a cell: ``add_adjacent(column, cell, before)``, then
                the column asked (the cell's own column when none is named)
``group``       *the most/least* with no numeric column named, asking for a column whose values
                repeat: ``add_group(column)``, ``add_order(Count, DESC)``, ``set_answer(column)``
``distinct``    *how many different ...*, or how many of a column of names that repeat:
                ``set_answer(column, COUNT DISTINCT)``
``order_part``  *the earliest/latest/highest* before a column of dates or numbers written as text:
                ``add_part(column, date)`` (or ``number``), ``add_order(column date, ASC)``
``position``    *first/last/second/top of the list* with no numeric column after it: ``add_row(n)``
``part``        a month, a year or a compared number the cells write inside text: ``add_part(Date,
                month)``, ``add_condition(Date month, =, January)``; conditions, listed first
``top``         *in the top N* with a rank column: ``add_condition(Rank, <=, N)``; a condition listed
                after the question's grounded ones
==============  ===================================================================================

A plan's steps are checked on the table when they are listed
(:mod:`pyql_sql.next_steps`); the conditions a plan replaces (its two rows,
its anchor cell) are left out of the list.

Example:
    >>> from pyql_sql.table import Table
    >>> t = Table.from_rows(["Name", "Goals"], [["Ross Jenkins", "142"], ["Nigel Gibbs", "5"]])
    >>> [(p.shape, [s.action for s in p.steps]) for p in question_plans(t, "who had more goals, ross jenkins or nigel gibbs?")]
    [('compare', ['compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC)'])]
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from pyql.environment.grounding import Cue, Grounding, ground

from .numbers import format_number, mostly_numbers, parse_number
from .pairing import word_norm
from .parts import cell_date, cell_part, cell_words
from .query import TableQuery
from .question_match import (
    MONTH_DAY,
    PERSON_HEADERS,
    action_value,
    ConditionCandidate,
    asked_column,
    column_text,
    compared_op,
    condition_candidates,
    duration_seconds,
    header_mentions,
    measure_words,
    stems,
    table_cells,
    table_ground,
    text_matches,
    timed_cells,
    who_column,
    words_between,
)
from .table import Column, Table

__all__ = ["Plan", "PlanStep", "answer_words", "cue_hints", "in_table_order", "question_plans", "RANK_WORDS", "MEASURES"]

Mentions = Mapping[int, tuple[int, int, float]]
_WORD = re.compile(r"[a-z0-9]+")
_YES_NO = re.compile(r"^\s*(?:is|was|are|were|did|does|do|has|have|had|can|could|will|would)\b", re.IGNORECASE)
_JOIN = re.compile(r"^[\s,]*(?:or|and|vs\.?|versus|,)?[\s,]*(?:the\s+)?$", re.IGNORECASE)
_MONTH_NAMES = [m for m in calendar.month_name if m]

#: Header words of a column whose smaller number is the better place ("the higher rank" is rank 1).
RANK_WORDS = frozenset(["rank", "ranking", "pos", "position", "place", "placing", "finish", "seed", "standing"])

#: What a comparative measures: the header words of the column it compares ("deeper" compares a Depth).
MEASURES: dict[str, tuple[str, ...]] = {
    "deep": ("depth", "deep"), "long": ("length", "long", "duration", "time", "km", "mi", "year"),
    "tall": ("height", "tall", "m", "ft"), "high": ("height", "elevation", "altitude", "m", "ft"),
    "old": ("age", "born", "birth", "year", "founded", "established"), "young": ("age", "born", "birth", "year"),
    "fast": ("speed", "time"), "big": ("area", "size", "capacity", "population"), "large": ("area", "size", "capacity", "population"),
    "heavy": ("weight", "mass", "tonnage"), "wide": ("width", "wide"), "populous": ("population",),
}
_COMPARATIVE_STEM = {"deeper": "deep", "longer": "long", "taller": "tall", "higher": "high", "older": "old", "younger": "young",
                     "faster": "fast", "slower": "fast", "bigger": "big", "larger": "large", "heavier": "heavy",
                     "lighter": "heavy", "wider": "wide", "shorter": "long", "smaller": "large", "lower": "high"}
_RANK_FLIP = frozenset(["higher", "lower", "better", "worse", "top", "best", "worst", "highest", "lowest"])
_AGE_FLIP = frozenset(["older", "younger", "oldest", "youngest"])


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan: the action as the list writes it and the same step made on a query.

    Attributes:
        action: the action text (it parses back to the same step).
        build: the step made on a query (raises a :class:`pyql.errors.PyQLError` when it cannot be made).
        kind: the list's kind of it: ``constrain`` or ``answer``.
        done: whether a query has taken it already (an answer: whether the query has one).
    """

    action: str
    build: Callable[[TableQuery], TableQuery] = field(compare=False)
    kind: str = "constrain"
    done: Callable[[TableQuery], bool] = field(compare=False, default=lambda q: False)


def _same(a: object, b: object) -> bool:
    return str(a).strip().lower() == str(b).strip().lower()


def _answer(action: str, build: Callable[[TableQuery], TableQuery]) -> PlanStep:
    return PlanStep(action, build, "answer", lambda q: q.result is not None)


def _part(table: Table, column: Column, part: str, separator: str = "") -> PlanStep:
    written = f", {action_value(separator)}" if separator else ""
    return PlanStep(f"add_part({_col(table, column)}, {part}{written})", lambda q: q.add_part(column, part, separator), "constrain",
                    lambda q: any(d.kind == "part" and d.sources[0] == column and d.part == part for d in q.derived_columns))


def _condition(header: str, op: str, value: str) -> PlanStep:
    return PlanStep(f"add_condition({header}, {op}, {action_value(value)})", lambda q: q.add_condition(header, op, value), "constrain",
                    lambda q: any(_same(c.column.header, header) and c.op == op and _same(c.value, value) for c in q.conditions))


def _order(header: str, direction: str) -> PlanStep:
    def build(q: TableQuery) -> TableQuery:
        return q.add_order(q.group.count if q.group is not None and header == "Count" else header, direction)

    return PlanStep(f"add_order({header}, {direction})", build, "constrain",
                    lambda q: q.order is not None and _same(q.order.column.header, header) and q.order.descending == (direction == "DESC"))


@dataclass(frozen=True)
class Plan:
    """The steps one shape of the question asks for, in order, and the conditions they replace.

    Attributes:
        shape: its name (see the module's table).
        steps: the steps, in order; the last one answers when ``answers``.
        drops: the conditions it replaces, as ``(column index, cell in lower case)``.
        answers: whether its last step says the answer.
        exclusive: whether the question's other conditions are left out (they describe the anchor row, not the answer's).
    """

    shape: str
    steps: tuple[PlanStep, ...]
    drops: frozenset[tuple[int, str]] = frozenset()
    answers: bool = False
    exclusive: bool = False


def _value_text(value: str) -> str:
    """A value as an action argument (:func:`pyql_sql.question_match.action_value`)."""
    return action_value(value)


def _col(table: Table, column: Column) -> str:
    return column_text(table, column.index) if column.index < len(table.columns) else column.header


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class _Ctx:
    """What every shape reads: the table, the question, its grounding, the header mentions, the cells, the candidates."""

    table: Table
    question: str
    g: Grounding
    mentions: Mentions
    cells: list[tuple[Column, list[str]]]
    candidates: list[ConditionCandidate]

    def values(self, col: Column) -> list[str]:
        """The cells of one column of :attr:`cells` (none when the column has none there)."""
        return next((v for c, v in self.cells if c.index == col.index), [])


def question_plans(table: Table, question: str, grounding: Grounding | None = None) -> list[Plan]:
    """The plans the question's shapes ask for on this table (the module's table), the shape first, then its parts.

    At most one plan of the shapes that answer or order (the first that fits, in the table's order),
    and the ``part`` plans of the conditions.

    Example:
        >>> t = Table.from_rows(["Date", "Opponent"], [["January 5, 2004", "Ajax"], ["May 1, 2004", "PSV"]])
        >>> [[s.action for s in p.steps] for p in question_plans(t, "how many games were played in january?")]
        [['add_part(Date, month)', 'add_condition(Date month, =, January)']]
    """
    g = grounding or table_ground(question)
    cells = table_cells(table)
    ctx = _Ctx(table, question, g, header_mentions(table, question), cells, condition_candidates(table, question, g))
    plans: list[Plan] = []
    for shape in (_words_plan, _count_compare_plan, _compare_plan, _choice_plan, _same_plan, _than_row_plan, _difference_plan, _adjacent_plan, _capacity_plan, _total_plan, _group_plan, _distinct_plan, _order_part_plan, _measured_plan,
                  _position_plan):
        plan = shape(ctx)
        if plan is not None:
            plans.append(plan)
            break
    if not any(p.answers for p in plans):
        plans += [p for p in (_answer_part_plan(ctx),) if p is not None]
    return [*plans, *_part_plans(ctx)]


# ---------------------------------------------------------------------------
# two named rows: compare, difference


def _two_rows(ctx: _Ctx, joins: re.Pattern[str] = _JOIN) -> tuple[ConditionCandidate, ConditionCandidate] | None:
    """Two cells of one text column the question names one after the other, joined by or/and/vs/a comma."""
    cells = sorted((c for c in ctx.candidates if c.op == "=" and not ctx.table.columns[c.column].is_numeric), key=lambda c: c.start)
    for i, a in enumerate(cells):
        for b in cells[i + 1 :]:
            if b.column == a.column and b.start >= a.end and b.value.lower() != a.value.lower() and joins.match(ctx.question[a.end : b.start]):
                return a, b
    return None


_THAN = re.compile(r"^(?:'s)?(?:\s+\w+){0,6}?\s+(?:than|that|and|or|to|with|vs\.?|versus)\s+(?:the\s+)?$", re.IGNORECASE)


def _measured(ctx: _Ctx, key: int, cue: Cue | None) -> Column | None:
    """The numeric column two rows are compared on: named in the question (right after the cue first), else
    measured by the comparative ("deeper": a Depth column), else a rank for "first/ahead", else the only one."""
    numeric = [c for c in ctx.table.columns if c.index != key and _has_numbers(ctx, c)]
    named = sorted((m[0] - (cue.end if cue else 0) if cue and m[0] >= cue.end else 1000 + m[0], i)
                   for i, m in ctx.mentions.items() if i != key and i < len(ctx.table.columns) and ctx.table.columns[i] in numeric)
    if named:
        return ctx.table.columns[named[0][1]]
    following = _words(ctx.question[cue.end :])[:1] if cue else []
    measured = measure_words(following[0], ctx.question) if following else None  # "attended by more people": Attendance
    if measured:
        column = next((c for c in numeric if set(_words(c.header)) & measured), None)
        if column is not None:
            return column
    stem = _COMPARATIVE_STEM.get(cue.text.lower()) if cue else None
    for col in numeric:
        if stem and set(_words(col.header)) & set(MEASURES.get(stem, ())):
            return col
    ranks = [c for c in numeric if set(stems(c.header)) & (RANK_WORDS | {"#", "no", "number"}) or not c.header.strip()]
    if cue is not None and cue.text.lower() in ("first", "earlier", "before", "ahead", "better", "higher", "lower", "worse", "last", "later"):
        if ranks:
            return ranks[0]
    measures = [c for c in numeric if c not in ranks]
    totals = [c for c in measures if set(_words(c.header)) & {"total", "overall"}]
    if len(measures) == 1 or totals:
        return (totals or measures)[0]
    return None


def _names(ctx: _Ctx) -> list[Column]:
    """The text columns a question naming no column may ask for, in table order: those whose cells are not mostly
    numbers (a ``#`` of ``1.``, ``2.`` is text, but numbers the rows), else every text column.

    Example:
        >>> t = Table.from_rows(["#", "Show", "Opened"], [["1.", "Cats", "1982"], ["2.", "Evita", "1979"]])
        >>> [c.header for c in _names(_Ctx(t, "", ground(""), {}, table_cells(t), []))]
        ['Show']
    """
    text = [c for c in ctx.table.columns if not c.is_numeric]
    return [c for c in text if not _has_numbers(ctx, c)] or text


def _has_numbers(ctx: _Ctx, col: Column) -> bool:
    """Whether most of a column's cells are numbers (or start with one)."""
    values = ctx.values(col)
    if col.is_numeric:
        return bool(values)
    numbered = sum(cell_part(v, "number") is not None and re.match(r"\s*[-\u2212$£€]?\d", v) is not None for v in values)
    return bool(values) and numbered >= 0.8 * len(values)


def _direction(cue: Cue, column: Column) -> bool:
    """DESC (True) for "more/higher/longer", ASC for "less/earlier"; a rank's "higher" and a birth year's "older" flip."""
    descending = cue.op == "max"
    words = set(stems(column.header)) | set(_words(column.header))
    if cue.text.lower() in _RANK_FLIP and words & RANK_WORDS:
        descending = not descending
    if cue.text.lower() in _AGE_FLIP and words & {"born", "birth", "year", "founded", "established", "date"}:
        descending = not descending
    return descending


def _compare_plan(ctx: _Ctx) -> Plan | None:
    """Which of two named rows has more: ``compare_rows`` (not a yes/no question, but "did A or B make more": a choice)."""
    rows = _two_rows(ctx)
    if _YES_NO.match(ctx.question) and (rows is None or not re.search(r"\bor\b", ctx.question[rows[0].end : rows[1].start], re.I)):
        return None
    cues = [c for c in ctx.g.cues if c.kind in ("comparative", "order")]
    if rows is None or not cues or any(c.kind == "difference" for c in ctx.g.cues):
        return None
    a, b = rows
    cue = min(cues, key=lambda c: abs(c.start - a.start))
    column = _measured(ctx, a.column, cue)
    if column is None:
        return None
    key, direction = ctx.table.columns[a.column], "DESC" if _direction(cue, column) else "ASC"
    action = f"compare_rows({_col(ctx.table, column)}, {_col(ctx.table, key)}, {_value_text(a.value)}, {_value_text(b.value)}, {direction})"
    step = _answer(action, lambda q: q.compare_rows(column, key, a.value, b.value, direction))
    return Plan("compare", (step,), frozenset({(a.column, a.value.lower()), (b.column, b.value.lower())}), True)


#: Pairs of answer words a question offers ("more or less"): each word and its opposite.
_OPPOSITES: dict[str, frozenset[str]] = {}
for _a, _b in (("more", "less"), ("more", "fewer"), ("above", "below"), ("higher", "lower"), ("larger", "smaller"),
               ("bigger", "smaller"), ("greater", "less"), ("greater", "smaller"), ("longer", "shorter"), ("taller", "shorter"),
               ("before", "after"), ("earlier", "later"), ("older", "younger"), ("heavier", "lighter")):
    _OPPOSITES[_a] = _OPPOSITES.get(_a, frozenset()) | {_b}
    _OPPOSITES[_b] = _OPPOSITES.get(_b, frozenset()) | {_a}
_ANSWER_WORDS = re.compile(r"\b(" + "|".join(sorted(_OPPOSITES)) + r")\s+or\s+(" + "|".join(sorted(_OPPOSITES)) + r")\b", re.IGNORECASE)
#: The answer words that say the larger number (a rank's "above" and a birth year's "older" flip, see :func:`_says_larger`).
_LARGER = frozenset(["more", "above", "higher", "larger", "bigger", "greater", "longer", "taller", "after", "later", "older", "heavier"])
#: Answer words of a place in an order: they need a column of numbers that orders the rows (a Pick, a Year).
_ORDER_WORDS = frozenset(["before", "after", "earlier", "later"])
#: The comparative an answer word measures a column by (:func:`_measured`): "above" is "higher" (a Height, else a rank).
_MEASURED_AS = {"above": "higher", "below": "lower", "greater": "bigger", "after": "later"}
#: Words before the row a question compares with, not the one it asks about: "compared to B, A holds more or less".
_REFERENCE = re.compile(r"\b(?:compared\s+(?:to|with)|relative\s+to|in\s+comparison\s+(?:to|with)|versus|vs\.?|than)\s+(?:the\s+)?$",
                        re.IGNORECASE)
#: What a noun of the question measures when it names no column: "more money" is a Gross (or an earning).
_NOUN_MEASURES = {"money": ("gross", "grossed", "earnings", "revenue", "income", "sales", "box", "prize")}
_MAX_GAP_WORDS = 12


def answer_words(question: str) -> tuple[str, str, int, int] | None:
    """The two answer words a question offers, joined by *or* ("more or less", "below or above"), lower case, with
    their span; None when it offers none.

    Example:
        >>> answer_words("did a score more or less goals than b?")
        ('more', 'less', 12, 24)
        >>> answer_words("which is larger, a or b?") is None, answer_words("is it more or after?") is None
        (True, True)
    """
    for m in _ANSWER_WORDS.finditer(question):
        first, second = m.group(1).lower(), m.group(2).lower()
        if second in _OPPOSITES[first]:
            return first, second, m.start(), m.end()
    return None


def _says_larger(word: str, column: Column) -> bool:
    """Whether an answer word says the larger number of the column: "more", "above" (a rank's "above" is its smaller
    number, as "higher"), "older" (of a birth year or a founding year, the smaller number).

    Example:
        >>> rank, height = Column(0, "Rank", "real", "c0", "n0"), Column(1, "Height (m)", "real", "c1", "n1")
        >>> _says_larger("above", height), _says_larger("above", rank), _says_larger("below", rank)
        (True, False, True)
    """
    larger = word in _LARGER
    words = set(stems(column.header)) | set(_words(column.header))
    if word in ("above", "below", "higher", "lower") and words & RANK_WORDS:
        larger = not larger
    if word in ("older", "younger") and words & {"born", "birth", "year", "founded", "established", "date"}:
        larger = not larger
    return larger


def _single_row(ctx: _Ctx, key: Column, value: str) -> bool:
    """Whether exactly one row of the table holds the value in the key column (a row to compare, not a group of them)."""
    try:
        got = ctx.table.executor().execute(ctx.table.query().add_condition(key, "=", value).set_answer(key, "COUNT"))
    except Exception:  # noqa: BLE001 - a value the table cannot match names no row
        return False
    return bool(got) and got[0].value == 1


def _word_rows(ctx: _Ctx, span: tuple[int, int]) -> tuple[ConditionCandidate, ConditionCandidate] | None:
    """The two rows a question offering answer words compares: two cells of one text column, the second at most
    :data:`_MAX_GAP_WORDS` words after the first, the words after the first, each cell written whole or grounded strongly
    enough to be listed; the one asked about first (the other is the one after "compared to", "than")."""
    cells = sorted((c for c in ctx.candidates if c.op == "=" and not ctx.table.columns[c.column].is_numeric
                    and (c.score >= 2.0 or _same(ctx.question[c.start : c.end], c.value))), key=lambda c: c.start)
    for i, a in enumerate(cells):
        for b in cells[i + 1 :]:
            if (b.column != a.column or b.start < a.end or b.value.lower() == a.value.lower() or span[0] < a.end
                    or b.start < span[1] <= b.end or len(_words(ctx.question[a.end : b.start])) > _MAX_GAP_WORDS):
                continue
            return (b, a) if _REFERENCE.search(ctx.question[: a.start]) else (a, b)
    return None


def _words_plan(ctx: _Ctx) -> Plan | None:
    """"did A win more or less medals than B", "is A above or below B", "compared to B, A holds more or less": the
    answer is one of the two words the question offers, ``compare_rows(column, key, A, B, DESC, more, less)``, the
    first word the one that says A has the larger number; A is the row asked about, each of A and B one row of the
    table. Not for a table's own order ("listed above or below"): a column of numbers is compared."""
    offered = answer_words(ctx.question)
    if offered is None:
        return None
    first_word, second_word, start, end = offered
    if {first_word, second_word} & {"above", "below", "before", "after", "earlier", "later", "higher", "lower"} and re.search(
            r"\blist(?:ed|s)?\b|\bon\s+the\s+(?:table|chart)\b", ctx.question, re.IGNORECASE):
        return None
    rows = _word_rows(ctx, (start, end))
    if rows is None:
        return None
    a, b = rows
    key = ctx.table.columns[a.column]
    cue = Cue("comparative", _MEASURED_AS.get(first_word, first_word), start, end, "max")
    column = _measured_by_words(ctx, a.column, end) or _measured(ctx, a.column, cue)
    if column is None or (first_word in _ORDER_WORDS and not (column.is_numeric or _mostly_numbers(ctx, column))):
        return None
    if not (_single_row(ctx, key, a.value) and _single_row(ctx, key, b.value)):
        return None
    words = (first_word, second_word) if _says_larger(first_word, column) else (second_word, first_word)
    action = (f"compare_rows({_col(ctx.table, column)}, {_col(ctx.table, key)}, {_value_text(a.value)}, {_value_text(b.value)}, DESC, "
              f"{_value_text(words[0])}, {_value_text(words[1])})")
    step = _answer(action, lambda q: q.compare_rows(column, key, a.value, b.value, "DESC", words))
    return Plan("words", (step,), frozenset({(a.column, a.value.lower()), (b.column, b.value.lower())}), True)


def _measured_by_words(ctx: _Ctx, key: int, after: int) -> Column | None:
    """The numeric column the question's words measure when it names none as a header: the only one whose header
    shares a word stem with the question ("picked": a Pick #), else one a noun after the answer words measures
    ("more money": a Gross); None otherwise."""
    numeric = [c for c in ctx.table.columns if c.index != key and _has_numbers(ctx, c)]
    if any(i != key and i < len(ctx.table.columns) and ctx.table.columns[i] in numeric for i in ctx.mentions):
        return None  # a column named: :func:`_measured` takes it
    said = {word_norm(w) for w in _words(ctx.question) if len(w) > 3}
    shared = [c for c in numeric if {word_norm(w) for w in _words(c.header) if len(w) > 3} & said]
    if len(shared) == 1:
        return shared[0]
    nouns = set(_words(ctx.question[after:]))
    for noun, headers in _NOUN_MEASURES.items():
        if noun in nouns:
            hits = [c for c in numeric if set(_words(c.header)) & set(headers)]
            if hits:
                return hits[0]
    return None


_OPTIONS_JOIN = re.compile(r"^[\s,]*(?:or\s+)?(?:the\s+)?$", re.IGNORECASE)


def _choice_plan(ctx: _Ctx) -> Plan | None:
    """"was big bang 2 recorded in japanese or korean?", "did they begin in 1950, 1968, or 1969?": a yes/no word
    before options of one column joined by commas and *or*, and no comparative: the answer is that column of the row
    the question's other conditions keep (``set_answer(Language)``), the options left out of the conditions."""
    if not _YES_NO.match(ctx.question) or any(c.kind in ("comparative", "order", "difference") for c in ctx.g.cues):
        return None
    cells = sorted((c for c in ctx.candidates if c.op == "="), key=lambda c: c.start)
    for i, a in enumerate(cells):
        run = [a]
        for b in cells[i + 1 :]:
            gap = ctx.question[run[-1].end : b.start]
            if b.column == a.column and b.start >= run[-1].end and _OPTIONS_JOIN.match(gap) and b.value.lower() != run[-1].value.lower():
                run.append(b)
        if len(run) < 2 or not re.search(r"\bor\b", ctx.question[run[-2].end : run[-1].start], re.IGNORECASE):
            continue
        if not any(c.column != a.column and c.op == "=" for c in cells):
            return None  # no other condition names the row: the options are the question's only cells
        column = ctx.table.columns[a.column]
        step = _answer(f"set_answer({_col(ctx.table, column)})", lambda q: q.set_answer(column))
        return Plan("choice", (step,), frozenset((c.column, c.value.lower()) for c in run), True)
    return None


_MORE_OFTEN = re.compile(r"^\s*(?:often|times|frequently|(?:number\s+of\s+)?(?:\w+\s+)?(?P<noun>[a-z]+s)\b|\W*$)", re.IGNORECASE)


def _count_compare_plan(ctx: _Ctx) -> Plan | None:
    """"did they play at A or B more?", "who won more races, A or B": two cells of one column and *more/most/less*
    counting rows (*often*, *times*, a plural no column of numbers is named by, or nothing after it): the one with
    more rows, ``add_group(key)``, ``compare_rows(Count, key, A, B, DESC)``."""
    rows = _two_rows(ctx, re.compile(f"{_JOIN.pattern}|{_THAN.pattern}", re.IGNORECASE))
    cues = [c for c in ctx.g.cues if c.kind in ("comparative", "order") and c.text.lower() in ("more", "most", "less", "fewer", "least")]
    if rows is None or not cues:
        return None
    a, b = rows
    cue = min(cues, key=lambda c: abs(c.start - a.start))
    after = _MORE_OFTEN.match(ctx.question[cue.end :])
    if after is None:
        return None
    numeric = [i for i, m in ctx.mentions.items() if i < len(ctx.table.columns) and _has_numbers(ctx, ctx.table.columns[i])
               and not ctx.table.columns[i].index == a.column and abs(m[0] - cue.end) <= 25]
    noun = after.group("noun")
    if numeric or (noun and (noun.lower() in _MEASURED or noun.lower() in _NOT_COUNTED)):
        return None  # "more goals" (a column), "more points": a measure, not a count of rows
    key = ctx.table.columns[a.column]
    direction = "DESC" if cue.op == "max" else "ASC"
    group = PlanStep(f"add_group({_col(ctx.table, key)})", lambda q: q.add_group(key), "constrain",
                     lambda q: q.group is not None and q.group.column == key)
    offered = answer_words(ctx.question)  # "did A win more or less than B": the word that says it
    words = None if offered is None else (offered[:2] if offered[0] in _LARGER else (offered[1], offered[0]))
    written = f", {_value_text(words[0])}, {_value_text(words[1])}" if words else ""
    direction = "DESC" if words else direction
    action = f"compare_rows(Count, {_col(ctx.table, key)}, {_value_text(a.value)}, {_value_text(b.value)}, {direction}{written})"
    compare = _answer(action, lambda q: q.compare_rows(q.group.count, key, a.value, b.value, direction, words))
    return Plan("count_compare", (group, compare), frozenset({(a.column, a.value.lower()), (b.column, b.value.lower())}), True)


#: Plurals after *more* that measure rather than count rows ("more money", "more votes").
_NOT_COUNTED = frozenset(["points", "votes", "goals", "seats", "people", "fans", "spectators", "viewers", "runs", "yards", "dollars",
                          "medals", "laps", "kills", "sales", "copies", "passengers"])


_TOTAL = frozenset(["total", "combined", "together", "altogether", "sum", "added"])


def _difference_plan(ctx: _Ctx) -> Plan | None:
    """The difference (or the total) of a column between two named rows: ``set_calculation``, the larger first."""
    difference = [c for c in ctx.g.cues if c.kind == "difference"]
    total = [w for w in _words(ctx.question) if w in _TOTAL]
    if not difference and not total:
        return None
    rows = _two_rows(ctx, re.compile(f"{_JOIN.pattern}|{_THAN.pattern}", re.IGNORECASE))
    if rows is None:
        return None
    a, b = rows
    op = "-" if difference else "+"
    cue = difference[0] if difference else None
    column = _measured(ctx, a.column, cue)
    if column is None:
        return None
    key = ctx.table.columns[a.column]
    first, second = (a, b) if op == "+" or _larger(ctx.table, column, key, a.value, b.value) else (b, a)
    action = f"set_calculation({_col(ctx.table, column)}, {op}, {_col(ctx.table, key)}, {_value_text(first.value)}, {_value_text(second.value)})"
    step = _answer(action, lambda q: q.set_calculation(column, op, key, first.value, second.value))
    return Plan("difference", (step,), frozenset({(a.column, a.value.lower()), (b.column, b.value.lower())}), True)


def _larger(table: Table, column: Column, key: Column, a: str, b: str) -> bool:
    """Whether row ``a``'s value of the column is at least row ``b``'s (a difference is given as a positive number)."""
    try:
        got = table.executor().execute(table.query().set_calculation(column, "-", key, a, b))
    except Exception:  # noqa: BLE001 - a value the table cannot compare keeps the question's order
        return True
    return not got or got[0].value is None or got[0].value >= 0


# ---------------------------------------------------------------------------
# a row's neighbour, its place


_ANCHOR_GAP = frozenset(["the", "a", "an", "to", "of", "listed", "is", "was", "that", "this", "one", "song", "game", "team"])


def _adjacent_answer(ctx: _Ctx, anchor: Column) -> Column:
    """The column a neighbour question asks for: the one named after *what/which*, a *who* or *what name* question's
    name column (else the first text column), else the anchor's own column ("what song is after X")."""
    asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
    if asked is not None:
        return ctx.table.columns[asked]
    if re.search(r"\b(?:who|whom|what\s+(?:is\s+the\s+)?name)\b", ctx.question, re.IGNORECASE):
        texts = [c for c in ctx.table.columns if not c.is_numeric]
        people = [c for c in texts if set(stems(c.header)) & PERSON_HEADERS]
        return (people or texts or [anchor])[0]
    return anchor


def _anchor_gap(ctx: _Ctx, start: int, c: ConditionCandidate) -> bool:
    """Whether only a few filler words, or the words of the cell's own header, stand between a neighbour word and the
    cell ("after the song X", "before the town/village of Argir")."""
    gap = _words(ctx.question[start : c.start])
    header = set(stems(ctx.table.columns[c.column].header))
    return len(gap) <= 5 and all(w in _ANCHOR_GAP or set(stems(w)) & header for w in gap) and len([w for w in gap if w not in _ANCHOR_GAP]) <= 2


def _anchor_cell(ctx: _Ctx, c: ConditionCandidate) -> bool:
    """Whether a candidate can anchor a neighbour: a text cell that is not a number nor a year ("after 2008" compares)."""
    return not ctx.table.columns[c.column].is_numeric and parse_number(c.value) is None and not re.fullmatch(r"\s*[12]\d{3}\s*", c.value)


#: What may follow a neighbour word that ends a question ("who won the month before?", "what country is ranked next?").
_TERMINAL = re.compile(r"^\s*(?:(?:one|year|month|week|day|time|season|character|role|film|song|album|game|race|title|to\s+that|that)\b\s*)?[?.!]?\s*$",
                       re.IGNORECASE)


def _anchors_before(ctx: _Ctx, cue: Cue) -> list[ConditionCandidate]:
    """The cell a neighbour word ending the question looks from: the question names it first ("gabon is ranked 32,
    what country is ranked next?", "eoin cadogan won in may 2009, who won the month before?")."""
    if not _TERMINAL.match(ctx.question[cue.end :]):
        return []
    before = [c for c in ctx.candidates if c.op == "=" and c.end <= cue.start and _anchor_cell(ctx, c)]
    return [min(before, key=lambda c: c.start)] if before else []


def _adjacent_plan(ctx: _Ctx) -> Plan | None:
    """The row right before or after a named cell: ``add_adjacent``, then the column asked (else the cell's column).
    Not for a yes/no question nor "before or after": they ask which, not what."""
    if _YES_NO.match(ctx.question) or re.search(r"\b(?:before|above)\s+or\s+(?:after|below)\b|\b(?:after|below)\s+or\s+(?:before|above)\b",
                                                ctx.question, re.IGNORECASE):
        return None
    for cue in ctx.g.cue("neighbour"):
        if re.match(r"\s+to\b", ctx.question[cue.end :]) and cue.text.lower() == "next":
            continue  # "what year is next to the title X": the cell beside it, in its own row
        anchors = [c for c in ctx.candidates if c.op == "=" and c.start >= cue.end and _anchor_gap(ctx, cue.end, c)]
        anchors = [c for c in anchors if _anchor_cell(ctx, c)]
        if not anchors:
            anchors = _anchors_before(ctx, cue)
        if not anchors:
            continue
        anchor = min(anchors, key=lambda c: c.start)
        column = ctx.table.columns[anchor.column]
        answer = _adjacent_answer(ctx, column)
        direction = cue.op
        steps = (
            PlanStep(f"add_adjacent({_col(ctx.table, column)}, {_value_text(anchor.value)}, {direction})",
                     lambda q: q.add_adjacent(column, anchor.value, direction), "constrain",
                     lambda q: any(a.match.column == column and _same(a.match.value, anchor.value) for a in q.adjacents)),
            _answer(f"set_answer({_col(ctx.table, answer)})", lambda q: q.set_answer(answer)),
        )
        return Plan("adjacent", steps, frozenset({(anchor.column, anchor.value.lower())}), True, exclusive=True)
    return None


_SAME = re.compile(r"\b(?:the\s+)?same\s+(?P<what>(?:[\w#.'-]+\s+){0,5}?)(?:as|like)\s+", re.IGNORECASE)


def _row_cells(ctx: _Ctx, key: Column, value: str, column: Column) -> list[str]:
    """The cells of ``column`` in the rows whose ``key`` is ``value`` (read off the table when the list is made); none
    when the table cannot read them."""
    try:
        got = ctx.table.executor().execute(ctx.table.query().add_condition(key, "=", value).set_answer(column))
    except Exception:  # noqa: BLE001 - a value the table cannot match or read names no row
        return []
    return [str(a.value) for a in got if a.value is not None]


def _same_plan(ctx: _Ctx) -> Plan | None:
    """"which city has the same number of barangays as teresa": the rows whose named column holds what the anchor
    row's does (read off the table when the list is made), the anchor left out: ``add_condition(No. of Barangays, =,
    9)``, ``add_condition(City, !=, Teresa)``, then the column asked (else the anchor's column)."""
    m = _SAME.search(ctx.question)
    if m is None:
        return None
    anchors = [c for c in ctx.candidates if c.op == "=" and c.start >= m.end() and not ctx.table.columns[c.column].is_numeric]
    named = [i for i, mention in ctx.mentions.items() if i < len(ctx.table.columns) and m.start("what") <= mention[0] < m.end("what")]
    if not anchors or not named:
        return None
    anchor = min(anchors, key=lambda c: c.start)
    key, column = ctx.table.columns[anchor.column], ctx.table.columns[max(named, key=lambda i: ctx.mentions[i][2])]
    if column.index == key.index:
        return None
    values = {v for v in _row_cells(ctx, key, anchor.value, column) if v.strip()}
    if len(values) != 1:
        return None
    value = values.pop()
    asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
    answer = ctx.table.columns[asked] if asked is not None and asked != column.index else key
    steps = (_condition(_col(ctx.table, column), "=", value), _condition(_col(ctx.table, key), "!=", anchor.value),
             _answer(f"set_answer({_col(ctx.table, answer)})", lambda q: q.set_answer(answer)))
    return Plan("same", steps, frozenset({(anchor.column, anchor.value.lower())}), True)


_THAN_ROW = re.compile(r"\bthan\s+(?:that\s+of\s+|the\s+)?", re.IGNORECASE)


def _than_row_plan(ctx: _Ctx) -> Plan | None:
    """"how many cities have populations greater than arquata scrivia": a comparative, *than* and a named row: the
    rows whose measured column is beyond that row's value (read off the table when the list is made),
    ``add_condition(Population, >, 6000)``; the count or the column asked follows as the list ranks it."""
    m = _THAN_ROW.search(ctx.question)
    cues = [c for c in ctx.g.cues if c.kind in ("comparative", "comparison") and c.start < m.start() and c.end <= m.end() + 1
            and c.op in ("max", "min", ">", "<", ">=", "<=")] if m is not None else []
    if m is None or not cues:
        return None
    anchors = [c for c in ctx.candidates if c.op == "=" and c.start >= m.end() and c.start - m.end() <= 4
               and not ctx.table.columns[c.column].is_numeric]
    if not anchors:
        return None
    anchor, cue = anchors[0], cues[-1]
    column = _measured(ctx, anchor.column, cue)
    if column is None or not column.is_numeric:
        return None
    key = ctx.table.columns[anchor.column]
    values = {n for v in _row_cells(ctx, key, anchor.value, column) if (n := parse_number(v)) is not None}
    if len(values) != 1:
        return None
    value = format_number(values.pop())
    op = (">" if cue.op in (">", ">=") else "<") if cue.kind == "comparison" else (">" if _direction(cue, column) else "<")
    return Plan("than", (_condition(_col(ctx.table, column), op, value),), frozenset({(anchor.column, anchor.value.lower())}))


_TOP = re.compile(r"\b(?:at\s+the\s+top|on\s+top|top\s+of\s+the\s+(?:list|chart|table|page)|listed\s+first|first\s+listed)\b", re.I)
_BOTTOM = re.compile(r"\b(?:at\s+the\s+bottom|bottom\s+of\s+the\s+(?:list|chart|table|page)|listed\s+last|last\s+listed)\b", re.I)
_PLACE_WORDS = frozenset(["place", "placed", "position", "round", "leg", "stage", "half", "quarter", "time", "times", "term", "season"])


def _position_plan(ctx: _Ctx) -> Plan | None:
    """The n-th, first or last row the question asks for: ``add_row`` (no numeric column right after the word)."""
    if any(c.kind == "aggregate" and c.op == "COUNT" for c in ctx.g.cues):
        return None
    place = _place(ctx)
    if place is None:
        return _place_rank_plan(ctx)
    later = _later_measure(ctx, place)
    if later is not None:
        return later
    ranks = [c for c in ctx.table.columns if (c.is_numeric or _mostly_numbers(ctx, c)) and set(stems(c.header)) & RANK_WORDS]
    if place > 0 and ranks and _FINISHED.search(ctx.question):  # "who finished third": the row ranked 3, not the third listed
        return Plan("position", (_condition(_col(ctx.table, ranks[0]), "=", str(place)),))
    return Plan("position", (PlanStep(f"add_row({place})", lambda q: q.add_row(place), "constrain", lambda q: q.position is not None),))


_PLACE_RANK = re.compile(r"\b(?P<which>first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last)\s+(?:place|position)\b", re.IGNORECASE)
_PLACE_NUMBER = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}


def _place_rank_plan(ctx: _Ctx) -> Plan | None:
    """"which team took first place", "which nation came in last place": no cell writes the place, a column of
    numbered ranks does: ``add_condition(Position, =, 1)``; the last place is the largest rank (``add_order(Rank, DESC)``)."""
    m = _PLACE_RANK.search(ctx.question)
    if m is None or any(c.start <= m.start() < c.end for c in ctx.candidates if c.op == "="):
        return None
    ranks = [c for c in ctx.table.columns if c.is_numeric and set(stems(c.header)) & RANK_WORDS]
    if not ranks:
        return None
    rank, which = ranks[0], m.group("which").lower()
    if which == "last":  # the last row, when the ranks rise down the table (ties listed in their order), else the largest rank
        rising = in_table_order(ctx.table, rank)
        step = PlanStep("add_row(-1)", lambda q: q.add_row(-1), "constrain", lambda q: q.position is not None) if rising else _order(rank.header, "DESC")
        return Plan("position", (step,))
    return Plan("position", (_condition(_col(ctx.table, rank), "=", str(_PLACE_NUMBER[which])),))


_FINISHED = re.compile(r"\b(?:finish(?:ed|es)?|plac(?:ed|es)|came(?:\s+in)?|ranked|rank)\b", re.IGNORECASE)


#: Headers of columns that order rows in time: a first/last named by one of them is its smallest/largest value.
_TIME_HEADER = re.compile(r"year|date|formed|founded|establish|born|birth|release|open|built|season|elect|start|launch|premier|air",
                          re.IGNORECASE)


def _later_measure(ctx: _Ctx, place: int) -> Plan | None:
    """"the last state to be formed": a first/last whose column (a number or a date) is named later in the question
    is the row with the smallest/largest value of it, the column asked being another."""
    if abs(place) != 1:
        return None
    asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
    cue_end = min((c.end for c in ctx.g.cues if c.kind in ("order", "ordinal")), default=0)
    for i, m in sorted(ctx.mentions.items(), key=lambda kv: kv[1][0]):
        column = ctx.table.columns[i] if i < len(ctx.table.columns) else None
        if column is None or m[0] < cue_end or i == asked or not _TIME_HEADER.search(column.header):
            continue  # "the last coach to only have 1 loss": Losses does not order the rows in time
        part = None if column.is_numeric else ("date" if _dated(ctx, column) else None)
        if not column.is_numeric and part is None:
            continue
        direction = "DESC" if place < 0 else "ASC"
        steps = [_part(ctx.table, column, part), _order(f"{column.header} {part}", direction)] if part else [_order(column.header, direction)]
        if asked is None and _asked_part(ctx) is None:  # "what was the last state to be formed": the row's name, the first text column
            asked = next((c.index for c in _names(ctx) if c.index != i), None)
        if asked is not None:
            answer = ctx.table.columns[asked]
            steps.append(_answer(f"set_answer({_col(ctx.table, answer)})", lambda q: q.set_answer(answer)))
        return Plan("position", tuple(steps), answers=asked is not None)
    return None


def _place(ctx: _Ctx) -> int | None:
    """The row position the question's words ask for, or None."""
    if _TOP.search(ctx.question):
        return 1
    if _BOTTOM.search(ctx.question):
        return -1
    numeric_starts = [m[0] for i, m in ctx.mentions.items() if i < len(ctx.table.columns) and ctx.table.columns[i].is_numeric]
    taken = [(c.start, c.end) for c in ctx.candidates if c.op == "="]
    for cue in ctx.g.cues:
        word = cue.text.lower()
        if cue.kind == "ordinal":
            position = int(cue.op)
        elif cue.kind == "order" and word in ("first", "last", "final", "latest", "most recent"):
            position = 1 if word == "first" else -1
        else:
            continue
        following = _words(ctx.question[cue.end :])[:1]
        if any(s <= cue.start < e for s, e in taken) or following and following[0] in _PLACE_WORDS:
            continue  # "2nd" is a cell; "second place" a value of a place column
        if any(words_between(ctx.question, cue.end, s, frozenset(["the", "of"])) for s in numeric_starts):
            return None  # "the first round": a minimum of the Round column
        return position
    return None


# ---------------------------------------------------------------------------
# groups, distinct counts


_OFTEN = re.compile(r"\b(?:the\s+)?(?:most|least|fewest)\s*(?:times|often|frequently|number\s+of\s+times)?\s*[?.]?\s*$", re.I)


def _repeats(ctx: _Ctx, col: Column) -> bool:
    """Whether a column's values repeat (fewer distinct values than rows)."""
    values = ctx.values(col)
    return 0 < len(values) < ctx.table.row_count


_ASKS_PART = re.compile(r"\b(?:what|which)\s+(?:(?:was|is|were)\s+the\s+)?(year|month)s?\b", re.IGNORECASE)


def _asked_part(ctx: _Ctx) -> tuple[Column, str] | None:
    """"what year", "which month" on a table with no such column: a column of dates written as text and that part
    (the one the question names first, else one named *date*)."""
    m = _ASKS_PART.search(ctx.question)
    if m is None:
        return None
    part = m.group(1).lower()
    if any(re.search(part, c.header, re.IGNORECASE) for c in ctx.table.columns):
        return None  # a Year column answers it
    dated = [c for c in ctx.table.columns if _dated(ctx, c, 0.5, year=part == "year")]
    dated.sort(key=lambda c: (c.index not in ctx.mentions, not re.search(r"date|when", c.header, re.IGNORECASE), c.index))
    return (dated[0], part) if dated else None


def _answer_part_plan(ctx: _Ctx) -> Plan | None:
    """"what year was the first success": ``add_part(Launch date, year)``, ``set_answer(Launch date year)``."""
    asked = _asked_part(ctx)
    if asked is None:
        return None
    column, part = asked
    derived = f"{column.header} {part}"
    steps = (_part(ctx.table, column, part), _answer(f"set_answer({derived})", lambda q: q.set_answer(derived)))
    return Plan("answer_part", steps, answers=True)


#: What a superlative with no header after it measures: the header words of its column, and whether the smallest
#: value is the one asked for in a column of times ("the fastest": the smallest time, the largest speed).
_SUPERLATIVE_MEASURES = {
    "fastest": ("time", "speed"), "quickest": ("time", "speed"), "slowest": ("time", "speed"), "tallest": ("height", "tall"),
    "deepest": ("depth", "deep"), "heaviest": ("weight", "mass"), "lightest": ("weight", "mass"),
    "shortest": ("length", "duration", "runtime", "time"), "longest": ("length", "duration", "runtime", "time"),
}


def _measured_plan(ctx: _Ctx) -> Plan | None:
    """"who was the fastest swimmer": a superlative naming no column orders the rows by the column it measures
    (a Time column: the fastest is the smallest; a Speed column: the largest), then the column asked."""
    for cue in ctx.g.cue("order"):
        words = _SUPERLATIVE_MEASURES.get(cue.text.lower())
        if words is None:
            continue
        column = next((c for c in ctx.table.columns if set(_words(c.header)) & set(words)), None)
        if column is None or column.index in ctx.mentions and ctx.mentions[column.index][0] >= cue.end:
            return None  # "the fastest time" names its column: an argmax of the choose list's own
        descending = cue.op == "max"
        if "speed" in _words(column.header):
            descending = not descending
        asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
        if asked is None:
            asked = who_column(ctx.table, ctx.question, ctx.mentions) or next(
                (c.index for c in _names(ctx) if c.index != column.index), None)
        if asked is None:
            return None
        answer = ctx.table.columns[asked]
        steps = (_order(column.header, "DESC" if descending else "ASC"),
                 _answer(f"set_answer({_col(ctx.table, answer)})", lambda q: q.set_answer(answer)))
        return Plan("order_part", steps, answers=True)
    return None


_HOLDS = re.compile(r"\b(?:hold|holds|held|seat|seats|seated|accommodate|accommodates|fit|fits)\s+(?:the\s+)?$", re.IGNORECASE)


def _capacity_plan(ctx: _Ctx) -> Plan | None:
    """*which stadium holds the most people*, *which venue can seat the fewest*: a superlative right after a verb of
    holding orders the rows by the table's capacity column (its header says capacity, seats or seating), then the
    column asked."""
    for cue in ctx.g.cue("order"):
        if not _HOLDS.search(ctx.question[: cue.start]):
            continue
        columns = [c for c in ctx.table.columns if set(_words(c.header)) & {"capacity", "seats", "seating"} and _has_numbers(ctx, c)]
        if len(columns) != 1:
            return None
        column = columns[0]
        asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
        if asked is None or asked == column.index:
            asked = next((c.index for c in _names(ctx) if c.index != column.index), None)
        if asked is None:
            return None
        answer = ctx.table.columns[asked]
        steps: list[PlanStep] = []
        header = column.header
        if not column.is_numeric:  # "90,000 (all-seated)": its first number
            steps.append(_part(ctx.table, column, "number"))
            header = f"{column.header} number"
        steps += [_order(header, "DESC" if cue.op == "max" else "ASC"),
                  _answer(f"set_answer({_col(ctx.table, answer)})", lambda q: q.set_answer(answer))]
        return Plan("order_part", tuple(steps), answers=True)
    return None


def _total_plan(ctx: _Ctx) -> Plan | None:
    """*what country won the most medals*: *most/least/fewest* before a plural noun no column is named for, on a table
    with one numeric ``Total`` column (the sum of the columns it counts): the rows ordered by it, then the column asked."""
    for cue in ctx.g.cue("order"):
        if cue.text.lower() not in ("most", "least", "fewest"):
            continue
        following = _words(ctx.question[cue.end :])[:1]
        if not following or not following[0].endswith("s") or following[0].endswith("ss"):
            continue  # "the most recent", "the most goals" (a column: below)
        named = [i for i, m in ctx.mentions.items() if i < len(ctx.table.columns) and m[0] >= cue.end
                 and words_between(ctx.question, cue.end, m[0], frozenset(["the", "number", "of", "amount"]))]
        totals = [c for c in ctx.table.columns if c.is_numeric and _words(c.header) == ["total"]]
        if named or len(totals) != 1:
            return None
        asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
        if asked is None:
            asked = who_column(ctx.table, ctx.question, ctx.mentions) or next(
                (c.index for c in _names(ctx)), None)
        if asked is None or asked == totals[0].index:
            return None
        answer = ctx.table.columns[asked]
        steps = (_order(totals[0].header, "DESC" if cue.op == "max" else "ASC"),
                 _answer(f"set_answer({_col(ctx.table, answer)})", lambda q: q.set_answer(answer)))
        return Plan("order_part", steps, answers=True)
    return None


def _numbering(ctx: _Ctx, col: Column) -> bool:
    """Whether a numeric column numbers the rows (``Episode``: 1, 2, 3 ... down the table, one by one):
    "the least number of episodes" counts its rows, it measures nothing.

    Example:
        >>> t = Table.from_rows(["Episode", "Goals"], [["1", "3"], ["2", "1"], ["3", "3"]])
        >>> ctx = _Ctx(t, "", ground(""), {}, table_cells(t), [])
        >>> _numbering(ctx, t.columns[0]), _numbering(ctx, t.columns[1])
        (True, False)
    """
    if not col.is_numeric or col.num_sql is None:
        return False
    select = exp.select(exp.column(col.num_sql, quoted=True)).from_(exp.table_(ctx.table.sql_name, quoted=True)).order_by(exp.column("rowid"))
    numbers = [r[0] for r in ctx.table.connection.execute(select.sql(dialect="sqlite")).fetchall() if r[0] is not None]
    return len(numbers) >= 3 and numbers[0] in (0, 1) and all(b - a == 1 for a, b in zip(numbers, numbers[1:]))


def in_table_order(table: Table, col: Column) -> bool:
    """Whether a numeric column's numbers rise down the table (most rows hold one; ties allowed): it orders the rows
    as listed.

    Example:
        >>> t = Table.from_rows(["Year", "Age", "Rank"], [["1990", "26", "1"], ["1994", "28", "2"], ["1999", "21", "2"]])
        >>> in_table_order(t, t.columns[0]), in_table_order(t, t.columns[1]), in_table_order(t, t.columns[2])
        (True, False, True)
    """
    if not col.is_numeric or col.num_sql is None:
        return False
    select = exp.select(exp.column(col.num_sql, quoted=True)).from_(exp.table_(table.sql_name, quoted=True)).order_by(exp.column("rowid"))
    numbers = [r[0] for r in table.connection.execute(select.sql(dialect="sqlite")).fetchall()]
    present = [n for n in numbers if n is not None]
    if len(present) < 2 or len(present) < 0.8 * len(numbers):
        return False
    return all(a <= b for a, b in zip(present, present[1:])) and present[0] < present[-1]


def _group_plan(ctx: _Ctx) -> Plan | None:
    """*which X ... the most* where no numeric column is named after *most*: ``add_group(X)`` and its Count ordered."""
    cues = [c for c in ctx.g.cue("order") if c.text.lower() in ("most", "least", "fewest")]
    if not cues:
        return None
    cue = cues[0]
    after = [i for i, m in ctx.mentions.items() if i < len(ctx.table.columns) and m[0] >= cue.end
             and words_between(ctx.question, cue.end, m[0], frozenset(["the", "number", "of", "amount", "total"]))]
    if any(_has_numbers(ctx, c) and not _numbering(ctx, c) and not _dated(ctx, c) for c in (ctx.table.columns[i] for i in after)):
        return None  # "the most goals": an argmax of the Goals column ("the least number of episodes" counts rows)
    following = _words(ctx.question[cue.end :])[:3]
    if following and following[0] in ("amount", "number") and following[1:2] == ["of"]:
        following = following[2:]  # "the least amount of awards": what the amount is of
    if following and following[0] in _MEASURED:
        return None  # "the least amount of time": a measure, not a count of rows
    direction = "DESC" if cue.op == "max" else "ASC"
    asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
    by_part = _asked_part(ctx)  # "which month had the most air dates": groups of a date's month
    if by_part is not None and not re.match(r"\s*(?:in\s+)?(?:which|what)\s+(?:month|year|day)\b", ctx.question, re.IGNORECASE):
        by_part = None if asked is not None else by_part
    elif by_part is not None:
        asked = None  # "which month": the month asked, whatever column the question names after
    if asked is None and by_part is None and (not following or following[0] in _COUNTED):
        asked = _named_people(ctx)  # "which team won the most titles": the Winner column
    if asked is None:
        if by_part is None:
            return None
        column, part = by_part
        derived = f"{column.header} {part}"
        group = PlanStep(f"add_group({derived})", lambda q: q.add_group(derived), "constrain",
                         lambda q: q.group is not None and _same(q.group.column.header, derived))
        steps = (_part(ctx.table, column, part), group, _order("Count", direction),
                 _answer(f"set_answer({derived})", lambda q: q.set_answer(derived)))
        return Plan("group", steps, answers=True)
    column = ctx.table.columns[asked]
    if column.is_numeric and not re.search(r"\b(?:year|season)", column.header, re.I) or not _repeats(ctx, column):
        return None
    steps = (
        PlanStep(f"add_group({_col(ctx.table, column)})", lambda q: q.add_group(column), "constrain",
                 lambda q: q.group is not None and q.group.column == column),
        _order("Count", direction),
        _answer(f"set_answer({_col(ctx.table, column)})", lambda q: q.set_answer(column)),
    )
    return Plan("group", steps, answers=True)


#: Words after *the most/least* that measure (the question is an argmax, not a count of rows).
_MEASURED = frozenset(["time", "money", "points", "distance", "height", "weight", "length", "population", "area",
                       "votes", "goals", "speed", "value", "percentage", "score", "capacity", "people", "spectators"])
#: Words after *the most/least* that count rows ("listed the most", "the most titles", "the most times").
_COUNTED = frozenset(["times", "often", "frequently", "entries", "appearances", "titles", "wins", "championships", "awards",
                      "medals", "listed", "matches", "games", "races", "events", "competitions", "players", "members"])


def _named_people(ctx: _Ctx) -> int | None:
    """The column of names a *which/who* question means when it names no column ("which team", "how many different
    teams" on a Winner column): the first text column of person words whose values repeat."""
    if not re.search(r"\b(?:which|who|what|different|distinct)\b", ctx.question, re.IGNORECASE):
        return None
    people = [c for c in ctx.table.columns if not c.is_numeric and set(stems(c.header)) & PERSON_HEADERS and _repeats(ctx, c)]
    return people[0].index if people else None


def _distinct_plan(ctx: _Ctx) -> Plan | None:
    """*how many different X*: ``COUNT DISTINCT`` (WTQ counts rows otherwise, even of names that repeat)."""
    counts = [c for c in ctx.g.cue("aggregate") if c.op == "COUNT"]
    if not counts:
        return None
    distinct = ctx.g.cue("distinct")
    start = distinct[0].end if distinct else counts[0].end
    if not distinct:
        return None
    named = [i for i, m in ctx.mentions.items() if i < len(ctx.table.columns) and m[0] >= start
             and words_between(ctx.question, start, m[0], frozenset(["the", "different", "distinct", "unique", "of"]))]
    people = _named_people(ctx)
    if not named and people is None:
        return None
    column = ctx.table.columns[named[0] if named else people]  # type: ignore[index]
    step = _answer(f"set_answer({_col(ctx.table, column)}, COUNT DISTINCT)", lambda q: q.set_answer(column, "COUNT DISTINCT"))
    return Plan("distinct", (step,), answers=True)


# ---------------------------------------------------------------------------
# parts of cells: an order by a date or number written as text, conditions on a month, a year, a number


def _dated(ctx: _Ctx, col: Column, share: float = 0.6, year: bool = True) -> bool:
    """Whether most of a text column's cells write a date (with a year, unless ``year`` is False)."""
    values = ctx.values(col)
    dated = sum(1 for v in values if (d := cell_date(v)) is not None and (d.year is not None or not year) and d.month is not None)
    return bool(values) and not col.is_numeric and dated >= share * len(values)


def _timed(ctx: _Ctx, col: Column, share: float = 0.6) -> bool:
    """Whether most of a text column's cells are times (``1:59.8``, ``1:02:03``), which an order sorts as durations."""
    return not col.is_numeric and timed_cells(ctx.values(col), share)


#: A question asking for a row by a noun, not a value: "the ship with the most tonnage is named after whom", "the species
#: with the least height".
_NAMED_ROW = re.compile(r"\bwhom?\b|^\s*(?:name\s+)?the\s+\w+\s+(?:with|that|which)\b", re.IGNORECASE)
#: Words asking for a number itself, not the cell that writes it: "the top score" (``6`` of ``6-3``), "the number of votes".
_COUNTED_NUMBER = re.compile(r"\b(?:number|score|scored|points|goals|how\s+many|amount|total)\b", re.IGNORECASE)


def _order_part_plan(ctx: _Ctx) -> Plan | None:
    """*the earliest/latest/highest <column>* on a text column of dates or of numbers inside text:
    ``add_part`` then ``add_order`` on the part, then the column asked. A column of times (``1:59.8``) is ordered
    itself, as durations (*the fastest time*: its smallest; not by the minutes, its first number)."""
    for cue in ctx.g.cue("order"):
        named = [i for i, m in ctx.mentions.items() if i < len(ctx.table.columns) and m[0] >= cue.end
                 and words_between(ctx.question, cue.end, m[0], frozenset(["the", "of", "number"]))]
        for i in named:
            column = ctx.table.columns[i]
            if _timed(ctx, column):
                asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
                if asked is None and re.match(r"\s*(?:which|who)\b", ctx.question, re.IGNORECASE):  # "which chinese athlete"
                    asked = who_column(ctx.table, ctx.question, ctx.mentions) or next(
                        (c.index for c in _names(ctx) if c.index != i), None)
                answer = ctx.table.columns[asked if asked is not None else i]
                steps = [_order(column.header, "DESC" if cue.op == "max" else "ASC"),
                         _answer(f"set_answer({_col(ctx.table, answer)})", lambda q, a=answer: q.set_answer(a))]
                return Plan("order_part", tuple(steps), answers=True)
            part = "date" if _dated(ctx, column) else ("number" if not column.is_numeric and _has_numbers(ctx, column) else None)
            if part is None:
                continue
            asked = asked_column(ctx.question, ctx.mentions, ctx.g, ctx.table)
            direction = "DESC" if cue.op == "max" else "ASC"
            derived = f"{column.header} {part}"
            steps = [_part(ctx.table, column, part), _order(derived, direction)]
            if asked is None and (re.match(r"\s*(?:which|who)\b", ctx.question, re.IGNORECASE) or _NAMED_ROW.search(ctx.question)):
                asked = next((c.index for c in _names(ctx) if c.index != i), None)  # "which show", "the ship with the most ... whom"
            if asked is not None and asked != i:
                answer = ctx.table.columns[asked]
                steps.append(_answer(f"set_answer({_col(ctx.table, answer)})", lambda q, a=answer: q.set_answer(a)))
            elif part == "number" and _COUNTED_NUMBER.search(ctx.question):  # "the top score": the number itself ("6" of "6-3")
                steps.append(_answer(f"set_answer({derived})", lambda q, d=derived: q.set_answer(d)))
            elif part == "number":  # "the biggest depth": the cell ("451 m"), ordered by its number
                steps.append(_answer(f"set_answer({_col(ctx.table, column)})", lambda q, c=column: q.set_answer(c)))
            return Plan("order_part", tuple(steps), answers=len(steps) == 3)
    return None


def _part_plans(ctx: _Ctx) -> list[Plan]:
    """Conditions on a part of a text column's cells: a month the question names, a year or a month of a year
    no cell holds whole, a number compared with one inside text."""
    durations = _duration_plans(ctx)
    numbers = [] if durations else _number_plans(ctx)  # "over five minutes" on 5:23: its seconds, not its first number
    plans = [*_month_plans(ctx), *_year_plans(ctx), *durations, *numbers, *_after_comma_plans(ctx), *_after_marker_plans(ctx),
             *_before_parenthesis_plans(ctx)]
    return [*plans[:2], *_top_plans(ctx)]


_TOP_N = re.compile(r"\btop\s+(?P<n>\d{1,3}|ten|five|three|twenty|fifty)\b", re.IGNORECASE)
_TOP_WORDS = {"three": 3, "five": 5, "ten": 10, "twenty": 20, "fifty": 50}


def _mostly_numbers(ctx: _Ctx, col: Column) -> bool:
    """Whether a text column's cells are numbers but for a few (a Rank with "DNF"): its numbers compare (``<=``)."""
    return mostly_numbers(ctx.values(col))


def _top_plans(ctx: _Ctx) -> list[Plan]:
    """"in the top 50": ``add_condition(Rank, <=, 50)`` on the table's rank column (a place, a position); a plain
    condition on a column the table has, so listed after the question's grounded conditions (shape ``top``)."""
    m = _TOP_N.search(ctx.question)
    ranks = [c for c in ctx.table.columns if (c.is_numeric or _mostly_numbers(ctx, c)) and set(stems(c.header)) & RANK_WORDS]
    if m is None or not ranks:
        return []
    n = m.group("n").lower()
    return [Plan("top", (_condition(_col(ctx.table, ranks[0]), "<=", str(_TOP_WORDS.get(n, n))),))]


def _after_comma_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Venue, after, ",")``, ``add_condition(Venue after, =, Japan)`` for a name the question writes that is
    the part after a comma of a column's cells ("Tokyo, Japan"), no cell being that name whole."""
    whole = [(c.start, c.end) for c in ctx.candidates if c.op == "=" and ctx.question[c.start : c.end].lower() == c.value.lower()]
    for col, values in ctx.cells:
        if col.is_numeric or sum(", " in v for v in values) < max(2, len(values) // 2):
            continue
        tails = sorted({t for v in values if (t := cell_part(v, "after", ",")) and len(t) >= 3})
        for tail, start, end in text_matches(ctx.question, tails):
            if not any(s <= start < e for s, e in whole):
                return [_part_condition(ctx, col, "after", tail, separator=",")]
    return []


def _before_parenthesis_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Runner-up, before, "(")``, ``add_condition(Runner-up before, =, Sweden)`` for a name the question writes
    that two or more different cells of a column write before a parenthesis ("Sweden (35 pts)", "Sweden (31 pts)"),
    no cell being that name whole: every row of that name, not the one cell a plain condition keeps."""
    whole = [(c.start, c.end) for c in ctx.candidates if c.op == "=" and ctx.question[c.start : c.end].lower() == c.value.lower()]
    for col, values in ctx.cells:
        if col.is_numeric or sum(" (" in v for v in values) < max(2, len(values) // 2):
            continue
        heads: dict[str, set[str]] = {}
        for v in values:
            head = cell_part(v, "before", "(")
            if head and len(head) >= 3 and head != v.strip():
                heads.setdefault(head, set()).add(v.strip().lower())
        shared = sorted(h for h, cells in heads.items() if len(cells) >= 2)
        for head, start, end in text_matches(ctx.question, shared):
            if not any(s <= start < e for s, e in whole):
                drops = frozenset((col.index, cell) for cell in heads[head])  # the plain conditions on one of those cells
                return [_part_condition(ctx, col, "before", head, drops=drops, separator="(")]
    return []


#: A cell's first word that says where a game was played, before the opponent's name: "at Ajax", "vs. PSV", "@ Ajax".
_MARKER = re.compile(r"^(?:at|vs\.?|v\.?|versus|@)\s+\S", re.IGNORECASE)


def _written_otherwise(values: list[str], value: str) -> bool:
    """Whether another cell writes the same words as ``value`` with marks around them: a marker of where a game was
    played (``@ Braves``, ``at Braves``, ``vs. Braves``) or a footnote's sign (``1st*``, ``Braves†``).

    Example:
        >>> _written_otherwise(["Braves", "@ Braves", "Mets"], "Braves"), _written_otherwise(["1st", "1st*"], "1st")
        (True, True)
        >>> _written_otherwise(["Braves", "Atlanta Braves"], "Braves"), _written_otherwise(["Braves", "braves"], "Braves")
        (False, False)
    """
    words = cell_words(value)
    for v in values:
        if _same(v, value):
            continue
        bare = cell_part(v.strip(), "after", " ") if _MARKER.match(v.strip()) else v
        if cell_words(bare or "") == words:
            return True
    return False


def _after_marker_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Opponent, after, " ")``, ``add_condition(Opponent after, =, Edmonton Eskimos)`` for a name the question
    writes that a column's cells write after *at*/*vs.* ("at Edmonton Eskimos", "vs. Edmonton Eskimos"), no cell being
    that name whole: the games against it, wherever they were played. When some cells are the name whole and others
    write it after a marker or with a footnote mark (``Braves``, ``@ Braves``; ``1st``, ``1st*``),
    ``add_condition(Opponent, contains, Braves)`` keeps them all."""
    for c in ctx.candidates:
        col = ctx.table.columns[c.column]
        if c.op == "=" and not col.is_numeric and re.search(r"[^\W\d_]", c.value) and _written_otherwise(ctx.values(col), c.value):
            return [Plan("part", (_condition(_col(ctx.table, col), "contains", c.value),), frozenset({(col.index, c.value.lower())}))]
    whole = [(c.start, c.end) for c in ctx.candidates if c.op == "=" and ctx.question[c.start : c.end].lower() == c.value.lower()]
    for col, values in ctx.cells:
        marked = [v for v in values if _MARKER.match(v.strip())]
        if col.is_numeric or len(marked) < max(2, len(values) // 3):
            continue
        tails = sorted({t for v in marked if (t := cell_part(v.strip(), "after", " ")) and len(t) >= 3})
        for tail, start, end in text_matches(ctx.question, tails):
            if not any(s <= start < e for s, e in whole):
                return [_part_condition(ctx, col, "after", tail, separator=" ")]
    return []


def _number_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Elevation, number)``, ``add_condition(Elevation number, >, 3300)`` for a number compared with a
    text column whose cells start with numbers ("above 3,300 ft" on ``3,563 ft``), named near the comparison or
    writing the same unit."""
    out = []
    for cue, v in ctx.g.comparisons():
        if v.kind not in ("number", "quantity") or cue.op not in ("<", ">", "<=", ">="):
            continue
        for col in ctx.table.columns:
            if col.is_numeric or not _has_numbers(ctx, col):
                continue
            mention = ctx.mentions.get(col.index)
            near = mention is not None and min(abs(mention[0] - v.end), abs(cue.start - mention[1])) < 40
            values = next((vs for c, vs in ctx.cells if c.index == col.index), [])
            unit = bool(v.unit) and sum(v.unit.lower() in x.lower() for x in values) >= 0.5 * len(values)
            if near or unit:
                out.append(_part_condition(ctx, col, "number", f"{v.value:g}", cue.op))
                break
    return out


#: Headers that name a duration (the column a time is compared with first), then a time of day or of a race.
_DURATION_HEADER = re.compile(r"duration|length|long|running|run\s*time", re.IGNORECASE)


def _duration_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Length, seconds)``, ``add_condition(Length seconds, >, 300)`` for a duration compared with a text
    column of times ("over five minutes", "at least 4:32" on ``5:23``); the column the question names first, then
    one whose header names a duration.

    Example:
        >>> t = Table.from_rows(["Title", "Length"], [["A", "5:23"], ["B", "3:02"]])
        >>> plan_actions(question_plans(t, "how many tracks were not longer than five minutes?"))
        [['add_part(Length, seconds)', 'add_condition(Length seconds, <=, 300)']]
    """
    timed = [c for c in ctx.table.columns if _timed(ctx, c)]
    if not timed:
        return []
    timed.sort(key=lambda c: (c.index not in ctx.mentions, not _DURATION_HEADER.search(c.header), c.index))
    hours = any(v.count(":") > 1 or re.search(r"\dh", v) for v in ctx.values(timed[0]))
    out = []
    for cue, v in ctx.g.comparisons():
        seconds = duration_seconds(ctx.question, v, hours)
        if seconds is None or cue.op not in ("<", ">", "<=", ">="):
            continue
        out.append(_part_condition(ctx, timed[0], "seconds", format_number(seconds), compared_op(ctx.question, cue)))
    return out[:1]


def _date_column(ctx: _Ctx, wanted: Callable[[Any], bool], year: bool = True) -> Column | None:
    """The text column of dates (the one named *date* first) some of whose cells have the part asked for."""
    columns = [c for c in ctx.table.columns if _dated(ctx, c, 0.3, year)]
    columns.sort(key=lambda c: (c.index not in ctx.mentions, not re.search(r"date|when|day", c.header, re.I), c.index))
    for col in columns:
        values = ctx.values(col)
        if any(wanted(cell_date(v)) for v in values):
            return col
    return None


_MONTH_RE = re.compile(r"\b(" + "|".join(_MONTH_NAMES) + r")\b", re.IGNORECASE)


def _month_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Date, month)``, ``add_condition(Date month, =, January)`` for a month named without a day."""
    whole = [(c.start, c.end) for c in ctx.candidates if c.op == "=" and ctx.question[c.start : c.end].lower() == c.value.lower()]
    days = [(v.start, v.end) for v in ctx.g.dates() if v.value.precision == "day"]
    days += [(c.start, c.end) for c in ctx.candidates if c.op == "=" and MONTH_DAY.fullmatch(ctx.question[c.start : c.end])]  # "september 17th"
    for m in _MONTH_RE.finditer(ctx.question):
        if any(s <= m.start() < e for s, e in [*whole, *days]) or (m.group(1).lower() == "may" and not m.group(1)[0].isupper()):
            continue
        month = m.group(1).capitalize()
        number = _MONTH_NAMES.index(month) + 1
        column = _date_column(ctx, lambda d: d is not None and d.month == number, year=False)
        if column is None:
            return []
        named_by_month = frozenset((c.column, c.value.lower()) for c in ctx.candidates if c.start <= m.start() < c.end)
        return [_part_condition(ctx, column, "month", month, drops=named_by_month)]
    return []


def _year_plans(ctx: _Ctx) -> list[Plan]:
    """``add_part(Date, year)``, ``add_condition(Date year, op, 2004)`` for a year no column holds whole."""
    whole = {c.value for c in ctx.candidates}
    compared = {(v.start, v.end): compared_op(ctx.question, cue) for cue, v in ctx.g.comparisons() if cue.op in ("<", ">", "<=", ">=")}
    for v in ctx.g.dates():
        if v.value.precision != "year" or v.text in whole or any(ctx.table.columns[c.column].is_numeric and c.start == v.start for c in ctx.candidates):
            continue
        year = v.value.first.year
        column = _date_column(ctx, lambda d: d is not None and d.year is not None)
        if column is None or any(col.is_numeric and (re.search(r"year|season", col.header, re.I) or col.index in ctx.mentions)
                                 for col in ctx.table.columns):
            return []  # a column of years (or a numeric column the question names) holds the year whole
        return [_part_condition(ctx, column, "year", str(year), compared.get((v.start, v.end), "="))]
    return []


def _part_condition(
    ctx: _Ctx, column: Column, part: str, value: str, op: str = "=", drops: frozenset[tuple[int, str]] = frozenset(),
    separator: str = "",
) -> Plan:
    return Plan("part", (_part(ctx.table, column, part, separator), _condition(f"{column.header} {part}", op, value)), drops)


def plan_actions(plans: Sequence[Plan]) -> list[list[str]]:
    """The plans' actions (for tracing and tests).

    Example:
        >>> plan_actions([Plan("position", (PlanStep("add_row(1)", lambda q: q.add_row(1)),))])
        [['add_row(1)']]
    """
    return [[s.action for s in p.steps] for p in plans]



#: What each cue kind of the question asks for on a table, as a prompt says it (:func:`cue_hints`).
_CUE_STEPS = {
    "ordinal": "a row at a place: add_row",
    "neighbour": "the row before or after another: add_adjacent",
    "difference": "two rows' values combined: set_calculation",
    "comparative": "which of two rows has more: compare_rows",
    "distinct": "the different values: set_answer(column, COUNT DISTINCT)",
    "each": "one value per group: add_group",
}


#: What two answer words the question offers ask for (:func:`cue_hints`).
_WORDS_STEP = "one of two words: compare_rows with if_first, if_second"


def cue_hints(question: str | None, grounding: Grounding | None = None) -> str:
    """The question's cue words for the steps beyond a condition and an answer, as one prompt line (empty when none):
    the table prompts show it as the KB prompts show the grounded values.

    Example:
        >>> cue_hints("what team comes before hank stein, and how many more wins than the second one?")
        "'before' (the row before or after another: add_adjacent); 'how many more' (two rows' values combined: set_calculation); 'second' (a row at a place: add_row)"
        >>> cue_hints("how many games?")
        ''
        >>> cue_hints("was a picked before or after b?")
        "'before or after' (one of two words: compare_rows with if_first, if_second)"
    """
    if not question:
        return ""
    g = grounding or ground(question)
    seen: dict[str, str] = {}
    offered = answer_words(question)
    if offered is not None:  # "more or less": the answer is one of the words, not a neighbour nor a row's key
        seen[question[offered[2] : offered[3]].lower()] = f"{question[offered[2] : offered[3]]!r} ({_WORDS_STEP})"
    for cue in g.cues:
        if offered is not None and offered[2] <= cue.start and cue.end <= offered[3]:
            continue
        if cue.kind in _CUE_STEPS and cue.text.lower() not in seen:
            seen[cue.text.lower()] = f"{cue.text!r} ({_CUE_STEPS[cue.kind]})"
    return "; ".join(seen.values())
