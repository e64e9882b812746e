"""The valid next steps of a table episode: what an agent may do now, enumerated and ranked.

The table twin of :mod:`pyql.environment.next_steps` (``--action-mode choose`` on a
table). From the question's grounded values (:func:`pyql.environment.grounding.ground`)
and the table's real cells it lists:

* ``add_condition(column, =, cell)`` for each cell of a column that the
  question writes (case and whitespace aside: ``athlone town`` is the cell
  ``Athlone Town``), for each number of the question a numeric column holds
  (``1174`` is the cell ``1,174``), for each date of the question a column
  holds at the same day, month or year (``2000-08-15`` is ``August 15, 2000``);
* ``add_condition(column, op, number)`` for each comparison of the question
  (``smaller than 17`` → ``<``) on the numeric columns, the column the
  question names next to it first;
* ``set_answer(column, aggregation)`` for the columns ranked by the words of
  their header in the question (or a model's scores of the headers, given as
  ``scores``), the aggregation from the cue words (``how many`` → COUNT,
  ``total`` → SUM, ``average`` → AVG, ``highest``/``most`` → MAX,
  ``least``/``earliest`` → MIN; a cue word that is a header's own word, as in
  "Which Average ...", does not count);
* ``execute()`` once an answer is set (first then).

Every condition is checked on the table before it is listed (one COUNT per
candidate): a condition no row meets together with the query's conditions is
left out. Conditions that fit the question come first, strongest first, while
the query has none on their column; then the answers.

Example:
    >>> from pyql_sql.table import Table
    >>> from pyql_sql.environment import TableEnvironment
    >>> t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
    >>> env = TableEnvironment(t, question="What is the total game number with athlone town as the opponent?")
    >>> [s.action for s in table_next_steps(env)][:2]
    ['add_condition(Opponent, =, Athlone Town)', 'set_answer(Game, COUNT)']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


from pyql.errors import PyQLError
from pyql.environment.grounding import Grounding, ground
from pyql.environment.next_steps import NextStep

from .shapes import Plan, in_table_order, question_plans
from .question_match import (  # noqa: F401 (ABBREVIATIONS, column_words, who_column: re-exported, named here before)
    _STOP,
    _WORD,
    ABBREVIATIONS,
    SYNONYMS,
    _stem,
    ConditionCandidate,
    _after,
    _all_candidates,
    _asked_column,
    _best_per_span,
    _cells,
    _column_text,
    action_value,
    column_words,
    condition_candidates,
    header_mentions,
    measure_words,
    table_ground,
    who_column,
)
from .numbers import mostly_numbers
from .summary_rows import summary_row
from .table import Column, Table

__all__ = [
    "ABBREVIATIONS", "ConditionCandidate", "answer_candidates", "column_words", "grounded_conditions", "argmax_order", "condition_candidates", "grounded_steps",
    "header_mentions", "measure_column", "own_number", "plan_steps", "scores_could_change", "standardized", "table_next_steps", "SCORE_CLIP",
    "ANSWER_WEIGHT",
]

_AGGREGATE_OF = {"COUNT": "COUNT", "SUM": "SUM", "AVG": "AVG", "max": "MAX", "min": "MIN"}


def _aggregation(question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]], table: Table | None = None) -> str | None:
    """The aggregation the cue words ask for (the cue of :func:`_aggregation_cue`); "how many <numeric column> ...
    total" is its sum."""
    cue = _aggregation_cue(question, g, mentions)
    if cue is None:
        return None
    if cue.op == "SUM" and re.match(r"\s+(?:\w+\s+)?(?:number\b|(?:amount\s+of\s+)?times\b)", question[cue.end :], re.IGNORECASE):
        return "COUNT"  # "the total number of ...", "the total game number", "the total amount of times"
    if cue.op == "COUNT" and table is not None and any(
            cue.end <= m[0] and len(_WORD.findall(question[cue.end : m[0]])) <= 1 and table.columns[i].is_numeric
            and any(c.op == "SUM" and c.start >= m[1] for c in g.cue("aggregate")) for i, m in mentions.items()):
        return "SUM"  # "how many rebounds were there total": the sum of a column named right after the count
    return _AGGREGATE_OF[cue.op]


def _aggregation_cue(question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]) -> Any:
    """The first aggregate or order cue word, or None; a cue that is a header's own word does not count."""
    whole = [m for m in mentions.values() if m[2] >= 3]
    starts = {m[0] for m in mentions.values()}
    for cue in g.cues:
        if cue.kind not in ("aggregate", "order") or re.match(r"\s*\d", question[cue.end :]):
            continue  # "the top 50", "the first 3": a number of rows, not a superlative
        before_header = any(question[cue.end : s].strip() == "" for s in starts if s >= cue.end)
        if any(s <= cue.start and cue.end <= e for s, e, _ in whole) and not before_header:
            continue  # a header's own word ("Which Average ..."), unless it stands before a header ("the average Total")
        return cue
    return None


_COUNTED_BY = frozenset(["the", "of", "number", "total", "all"])


def _same_word(word: str, header_word: str) -> bool:
    """Whether a question's word is a header's word as written, or its other spelling (``kilometers``, ``Kilometres``)."""
    return word == header_word or _stem(word) in SYNONYMS.get(_stem(header_word), frozenset()) and _plural(word) == _plural(header_word)


def _plural(word: str) -> bool:
    """Whether a word reads as a plural noun: ``votes``, ``medals``, not ``class``, ``bonus``, ``status``.

    Example:
        >>> [_plural(w) for w in ("votes", "class", "bonus", "status", "basis")]
        [True, False, False, False, False]
    """
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


def own_number(
    table: Table, question: str, index: int, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]
) -> bool:
    """Whether a count cue asks for a numeric cell's own number rather than COUNT of rows.

    True when the counted thing is the column itself, its header a plural noun
    ("the total number of helipads", header ``Helipads``) or a word before one
    ("how many total medals", header ``Total``; "how many gold medals", ``Gold``), or when the words
    after the cue name no column and this numeric column is named whole
    elsewhere ("how many people were murdered in 1940/41", header ``1940/41``).

    Example:
        >>> t = Table.from_rows(["Name", "Helipads", "Game"], [["Hama", "10", "1"]])
        >>> q = "the total number of helipads at hama?"
        >>> g = ground(q); m = header_mentions(t, q)
        >>> own_number(t, q, 1, g, m), own_number(t, "the total game number at hama?", 2, ground("x"), header_mentions(t, "the total game number"))
        (True, False)
        >>> t = Table.from_rows(["Nation", "Gold", "Total"], [["Belarus", "1", "6"]])
        >>> q = "how many total medals did belarus win?"
        >>> own_number(t, q, 2, ground(q), header_mentions(t, q)), own_number(t, "how many nations won gold?", 1, ground("how many nations won gold?"), header_mentions(t, "how many nations won gold?"))
        (True, False)
        >>> t = Table.from_rows(["Name", "Goals"], [["Ann", "0"]])
        >>> own_number(t, "how many people have no goals?", 1, ground("how many people have no goals?"), header_mentions(t, "how many people have no goals?"))
        False
        >>> t = Table.from_rows(["Country", "PGA", "Episode number"], [["Zimbabwe", "2", "1"]])
        >>> q = "what are the number of pga winning golfers that zimbabwe has?"
        >>> own_number(t, q, 1, ground(q), header_mentions(t, q))  # the header qualifies a plural noun after a participle
        True
        >>> own_number(t, "how many episodes are there?", 2, ground("how many episodes are there?"), header_mentions(t, "how many episodes are there?"))
        False
    """
    col, mention = table.columns[index], mentions.get(index)
    cue = _aggregation_cue(question, g, mentions)
    if mention is None or cue is None or cue.kind != "aggregate" or not (col.is_numeric or _mostly_numbers(table, col)):
        return False  # a column of numbers (mostly: ``36,271`` with one ``WIN``)
    if any(min(abs(c.start - mention[1]), abs(mention[0] - v.end)) < 30 for c, v in g.comparisons()):
        return False  # "how many games had more than 10,000 in attendance": the rows that meet it are counted
    if re.search(r"\b(?:no|zero|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+$", question[: mention[0]], re.IGNORECASE):
        return False  # "how many people have no goals": a value of the column picks the rows counted
    ends = [c.end for c in g.cues if c.kind == "aggregate"]
    if any(_after(question, e, mention[0], _COUNTED_BY) for e in ends):
        last = _WORD.findall(col.header.lower())
        numbering = bool(set(last) & {"number", "no", "nr", "num"}) or "#" in col.header  # ``Episode number`` numbers the rows
        named = [w for w in _WORD.findall(question[mention[0] : mention[1]].lower())[-1:]
                 if not numbering and _plural(w) and any(_same_word(w, h) for h in last)]  # "how many days": ``Days held``
        # (a header of "Game" numbers the games counted: its word is not the plural the question writes)
        counted = _WORD.findall(question[mention[1] :].lower())[:1]  # "how many total medals": the header qualifies a plural noun
        if any(_plural(w[-1]) and w[-1] not in _STOP for w in (last, named, counted) if w):
            return True
        following = _WORD.findall(question[mention[1] :].lower())[:2]  # "the number of pga winning golfers"
        return len(following) == 2 and following[0].endswith("ing") and _plural(following[1])
    counted = _WORD.findall(question[max(ends) :].lower())[:1]
    names_column = any(m[0] >= max(ends) and m[0] - max(ends) <= len(" ".join(counted)) + 2 for m in mentions.values())
    return bool(counted) and not names_column and mention[2] >= 3 and mention[0] > max(ends)


def measure_column(table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]) -> int | None:
    """The column of numbers a count measures, not counts rows of: "how many people attended the game on june 24" is
    the game's Attendance, "how many people live in santa maria" its Population, "how many feet above sea level is k2"
    its ``Height (ft)``. None when the noun after *how many* names a column itself or measures nothing here, or when
    a comparison follows it ("how many people scored more than 10" counts rows).

    Example:
        >>> t = Table.from_rows(["Date", "Opponent", "Attendance"], [["June 24", "Ajax", "6,662"], ["June 28", "PSV", "7,001"]])
        >>> q = "how many people attended the game on june 24?"
        >>> measure_column(t, q, ground(q), header_mentions(t, q))
        2
        >>> q = "how many people were born in june?"
        >>> measure_column(t, q, ground(q), header_mentions(t, q)) is None
        True
        >>> t = Table.from_rows(["Mountain", "Height (m)", "Height (ft)"], [["K2", "8,611", "28,251"]])
        >>> q = "how many feet above sea level is k2?"
        >>> measure_column(t, q, ground(q), header_mentions(t, q))
        2
    """
    cue = next((c for c in g.cue("aggregate") if c.op == "COUNT"), None)
    if cue is None:
        return None
    following = _WORD.findall(question[cue.end :].lower())
    following = following[1:] if following[:1] == ["total"] else following
    if not following or any(m[0] >= cue.end and len(_WORD.findall(question[cue.end : m[0]])) <= 1 for m in mentions.values()):
        return None  # "how many votes": a column's own number (own_number), not a measure
    words = measure_words(following[0], " ".join(following[1:]))
    if words is None or any(c.start >= cue.end for c, _ in g.comparisons()):
        return None
    for col in table.columns:
        if set(_WORD.findall(col.header.lower())) & words and (col.is_numeric or _mostly_numbers(table, col)):
            return col.index
    return None


def _mostly_numbers(table: Table, col: Column) -> bool:
    """Whether most of a text column's cells are numbers (``36,271`` with one ``WIN``)."""
    return mostly_numbers([str(v) for v in table.executor().get_column(col.index, limit=200).values if v is not None and str(v).strip()])


def argmax_order(
    table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]], style: str = "natural"
) -> tuple[int, bool, int] | None:
    """An argmax/argmin the question asks for: (column ordered by, descending, answer column), or None.

    "which season had the most episodes": an order cue right before a
    column (``Episodes``) while the question's *which/what* names another
    column (``Season``): the answer is that column of the row with the most,
    not the most itself (``MAX(Episodes)``). A *who* question answers with its
    person column (:func:`who_column`); in people's questions (``style``
    ``"natural"``, :data:`~pyql_sql.question_match.QUESTION_STYLES`) a *which
    <noun>* naming no column answers with the row's name (:func:`_unnamed_target`).

    Example:
        >>> t = Table.from_rows(["Season", "Episodes"], [["Season 1", "26"]])
        >>> q = "which season had the most episodes in it?"
        >>> argmax_order(t, q, ground(q), header_mentions(t, q))
        (1, True, 0)
        >>> t = Table.from_rows(["Place", "Team", "Won"], [["1", "Águila", "20"]])
        >>> q = "who had the most wins?"
        >>> argmax_order(t, q, ground(q), header_mentions(t, q))
        (2, True, 1)
        >>> t = Table.from_rows(["#", "Employer", "# of Employees"], [["1", "Medline", "1,200"]])
        >>> q = "which employer had the least number of employees?"
        >>> argmax_order(t, q, ground(q), header_mentions(t, q))
        (2, False, 1)
    """
    wh = re.search(r"\b(?:which|what|who)\b", question, re.IGNORECASE)
    if wh is None:
        return None
    target = [i for i, m in mentions.items() if _after(question, wh.end(), m[0], frozenset(["the", "is", "was"]))]
    if not target:
        target = _unnamed_target(table, question, wh, mentions, style)
    for cue in g.cue("order"):
        ordered = [i for i, m in mentions.items() if _after(question, cue.end, m[0], frozenset(["the", "number", "of", "in"]))]
        ordered.sort(key=lambda i: -mentions[i][2])  # "the least number of employees": '# of Employees', not '#' ("number")
        if ordered and target and target[0] != ordered[0] and cue.start > wh.end():
            return ordered[0], cue.op == "max", target[0]
    return None


#: Words after *which/what* that are not the thing asked for ("what is the most", "which of these").
_NOT_ASKED = frozenset(["is", "was", "are", "were", "the", "a", "an", "of", "one", "did", "does", "do", "has", "had", "have", "kind",
                        "type", "number", "amount", "total", "most", "least", "highest", "lowest", "largest", "smallest", "top"])


def _unnamed_target(
    table: Table, question: str, wh: re.Match[str], mentions: Mapping[int, tuple[int, int, float]], style: str = "natural"
) -> list[int]:
    """The answer column of a question naming none after its *who/which/what*: a *who* question's person column;
    in people's questions (``style`` ``"natural"``), for *which/what <noun>* ("which game had the most in attendance",
    "which city had the least people"), the row's name: its first text column that is not numbers (a date, a name).
    Questions written from SQL (``"sql"``: WikiSQL, dbbench) ask for the most itself ("which match had the largest
    crowd": ``MAX(Crowd)``).

    Example:
        >>> t = Table.from_rows(["Date", "Opponent", "Attendance"], [["7 April", "Leeds", "46000"]])
        >>> q = "which game had the largest attendance?"
        >>> wh = re.search("which", q)
        >>> _unnamed_target(t, q, wh, header_mentions(t, q)), _unnamed_target(t, q, wh, header_mentions(t, q), "sql")
        ([0], [])
    """
    if wh.group().lower() == "who":
        who = who_column(table, question, mentions)
        return [] if who is None else [who]
    noun = _WORD.findall(question[wh.end() :].lower())[:1]
    if style != "natural" or not noun or noun[0] in _NOT_ASKED:
        return []
    name = next((c.index for c in table.columns if not c.is_numeric and not _mostly_numbers(table, c)), None)
    return [] if name is None else [name]  # the first such column: the others' cells are not read


def _row_place(table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]) -> bool:
    """Whether the question's first/last is a row's place: its aggregation cue is *first/last/latest* and no numeric
    header follows it ("which u-boat was the first to sink": the first row, not the smallest number)."""
    cue = _aggregation_cue(question, g, mentions)
    if cue is None or cue.text.lower() not in _POSITION_CUES:
        return False
    starts = [m[0] for i, m in mentions.items() if table.columns[i].is_numeric]
    return not any(_after(question, cue.end, s, frozenset(["the", "of"])) for s in starts)


#: Order cues that mean a row's place in the table when no header follows them ("the first person eliminated").
_POSITION_CUES = frozenset(["first", "last", "earliest", "latest"])


def position_order(
    table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]
) -> tuple[int, bool] | None:
    """The first or last row the question asks for: (a column rising in table order, descending), or None.

    "the first person eliminated was who?": *first*/*last* (or *earliest*/*latest*)
    with no header after it means the table's first or last row (of those
    the conditions keep); the list says it as ``add_order`` on a numeric
    column whose numbers rise down the table (a year, a number, a date as a
    number), ASC for the first, DESC for the last. Not when a numeric header
    follows the cue ("the first round": a minimum; "the last single" is a
    row), nor "last place", nor without such a column.

    Example:
        >>> t = Table.from_rows(["Year", "Single"], [["1998", "A"], ["2001", "B"], ["2004", "C"]])
        >>> q = "what was the last single released?"
        >>> position_order(t, q, ground(q), header_mentions(t, q))
        (0, True)
        >>> q = "what was the last year?"
        >>> position_order(t, q, ground(q), header_mentions(t, q)) is None
        True
    """
    starts = [m[0] for i, m in mentions.items() if table.columns[i].is_numeric]
    for cue in g.cue("order"):
        if cue.text.lower() not in _POSITION_CUES:
            continue
        following = _WORD.findall(question[cue.end :].lower())[:1]
        if any(_after(question, cue.end, s, frozenset(["the", "of"])) for s in starts) or following in (["place"], ["placed"]):
            return None
        rising = next((c.index for c in table.columns if in_table_order(table, c)), None)  # one query a column, up to the first
        return (rising, cue.op == "max") if rising is not None else None
    return None


def answer_candidates(
    table: Table, question: str, *, used: Mapping[int, float] | None = None, scores: Mapping[str, float] | None = None,
    grounding: Grounding | None = None, style: str = "natural",
) -> list[tuple[int, str | None, float]]:
    """The answer columns, best first, each with its aggregation: (column index, aggregation, score).

    A column scores by how the question names it (:func:`header_mentions`; named
    earlier scores a little higher), less when a condition of the question is
    on it (``used``: column → how strongly), plus a model's score of its header
    (``scores``, header → score, weighted 0.5) when given. The aggregation
    comes from the cue words (COUNT on any column, the others on numbers); a
    count of a column that holds the count itself is the cell's own number
    (:func:`own_number`), and an argmax (:func:`argmax_order`, which reads
    ``style``: how the question is written) answers with the other column, unaggregated.

    Example:
        >>> t = Table.from_rows(["Player", "Touchdowns", "Points"], [["A", "2", "11"]])
        >>> answer_candidates(t, "Name the least touchdowns for 11 points", used={2: 4.0})[0]
        (1, 'MIN', 7.308)
    """
    g = grounding or table_ground(question)
    mentions = header_mentions(table, question)
    aggregation = _aggregation(question, g, mentions, table)
    order = argmax_order(table, question, g, mentions, style)
    position = position_order(table, question, g, mentions) if order is None else None
    if (position is not None or _row_place(table, question, g, mentions)) and aggregation in ("MAX", "MIN"):
        aggregation = None  # "the first person eliminated": a row's place, not a minimum
    asked = _asked_column(question, mentions, g, table)
    place_or_time = re.match(r"\s*(?:where|when)\b", question, re.IGNORECASE) is not None
    measured = measure_column(table, question, g, mentions) if aggregation == "COUNT" else None
    used = used or {}
    out = []
    for col in table.columns:
        mention = mentions.get(col.index)
        score = 0.0
        if mention is not None:
            score = mention[2] + 0.5 * (1.0 - mention[0] / max(len(question), 1))
            if any(c.kind in ("aggregate", "order") and c.end <= mention[0] and set(_WORD.findall(question[c.end : mention[0]].lower())) <= {"the"}
                   for c in g.cues):
                score += 3.0  # right after its cue word: "the largest crowd", "the average Total"
        score += (8.0 if place_or_time else 3.0) if col.index == asked else 0.0  # named right after which/what, a who question's person
        # column, a where/when question's place or date (above the thing it is asked of: "where was the last competition")
        score -= min(used.get(col.index, 0.0), 4.0)
        if scores and col.header in scores:
            score += ANSWER_WEIGHT * scores[col.header]
        agg = aggregation if aggregation == "COUNT" or (aggregation and col.is_numeric) else None
        if agg == "COUNT" and own_number(table, question, col.index, g, mentions):
            agg = None
        if col.index == measured:
            agg, score = None, score + 6.0  # "how many people attended": the Attendance of the rows kept
        if order is not None:
            agg = None
            score += 6.0 if col.index == order[2] else (-3.0 if col.index == order[0] else 0.0)
        elif position is not None and col.index == position[0]:
            score -= 3.0  # the column that orders the rows is rarely the one asked
        elif aggregation and agg is None and not (aggregation == "COUNT" and col.is_numeric):
            score -= 1.0  # the question asks for an aggregate this column cannot give
        out.append((col.index, agg, round(score, 3)))
    return sorted(out, key=lambda t: (-t[2], t[0]))


def question_style(env: Any) -> str:
    """How the environment's question is written (:data:`~pyql_sql.question_match.QUESTION_STYLES`): its
    ``question_style``, ``"natural"`` for an environment that has none.

    Example:
        >>> from types import SimpleNamespace
        >>> question_style(SimpleNamespace(question_style="sql")), question_style(SimpleNamespace())
        ('sql', 'natural')
    """
    return str(getattr(env, "question_style", "natural"))


def _condition_action(table: Table, c: ConditionCandidate) -> str:
    return f"add_condition({_column_text(table, c.column)}, {c.op}, {action_value(c.value)})"


#: How strongly the question must ask for a condition for it to be listed although it keeps no row
#: (a header right next to its value: "less than 0 Silvers", "a W-L-T of 5-1"; a long cell: "South Carolina").
EMPTY_STRENGTH = 3.5


def _checked(env: Any, candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """The candidates some row meets together with the query's conditions (see :func:`_checked_split`)."""
    return _checked_split(env, candidates)[0]


def _checked_split(env: Any, candidates: list[ConditionCandidate]) -> tuple[list[ConditionCandidate], list[ConditionCandidate]]:
    """The candidates some row meets together with the query's conditions, and the strong ones no row meets.

    Candidates on a column already conditioned are left out (but the other
    bound of a range: ``>= 10000`` then ``<= 20000``), and so is a ``contains`` on a
    column a part of which is conditioned (``Venue after = Dublin``). A strong candidate
    (:data:`EMPTY_STRENGTH`) that keeps no row is kept apart: the question's
    conditions together may keep no row, and then the answer is that there is none.
    """
    asked = _asked_conditions(env)
    on = {(s.column.index, s.op) for s in asked}
    on |= {(c.index, "contains") for s in asked for c in getattr(s.column, "sources", ())}
    kept, empty = [], []
    rows_now = env.executor.count(env.query) if env.query.conditions else 1
    for c in candidates:
        if any(i == c.column and (op == c.op or "=" in (op, c.op)) for i, op in on):
            continue  # one equality per column; a range may have its two bounds
        try:
            if env.executor.count(env.query.add_condition(c.column, c.op, c.value)) > 0:
                kept.append(c)
            elif c.score >= EMPTY_STRENGTH and rows_now > 0:
                empty.append(c)
        except PyQLError:  # a condition the table refuses (a bad number) is not offered
            continue
    return kept, empty


def grounded_conditions(env: Any, *, scores: Mapping[str, float] | None = None) -> list[ConditionCandidate]:
    """The conditions the choose mode lists: grounded, strong enough, checked on the table's rows (see :func:`_checked`).

    Those some row meets with the query's conditions come first, then the
    strong ones that keep no row. Table Readi takes its row constraints from here.

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Opponent", "Game"], [["Athlone Town", "6"]])
        >>> [(c.column, c.value) for c in grounded_conditions(TableEnvironment(t, question="games against athlone town?"))]
        [(0, 'Athlone Town')]
    """
    candidates = condition_candidates(env.table, env.question or "", scores=scores)
    kept, empty = _checked_split(env, [c for c in candidates if c.score >= 2.0])
    return [*kept, *empty]


def _dropped(table: Table, action: str, drops: frozenset[tuple[int, str]]) -> bool:
    """Whether a listed condition is one a plan replaces (its rows compared, its anchor)."""
    if (-1, "*") in drops:
        return action.startswith("add_condition(")
    return any(action.lower() == f"add_condition({_column_text(table, i)}, =, {action_value(value)})".lower() for i, value in drops)


def _answer_steps(env: Any, answers: list[NextStep]) -> list[NextStep]:
    """Once an answer is set: ``execute()``, then the other answers (the same column unaggregated first)."""
    table, current = env.table, env.query.answer
    if current is None:  # set_calculation, compare_rows: nothing but to run it
        return [NextStep("execute()", "execute")]
    name = _column_text(table, current.column.index) if current.column.index < len(table.columns) else current.column.header
    written = f"set_answer({name}{', ' + current.aggregation if current.aggregation else ''})"
    answers = [a for a in answers if a.action != written]
    if current.aggregation:  # the same column without its aggregation, next
        plain = f"set_answer({name})"
        answers = [NextStep(plain, "answer")] + [a for a in answers if a.action != plain]
    return [NextStep("execute()", "execute"), *answers[:2]]


def grounded_steps(env: Any, *, scores: Mapping[str, float] | None = None) -> tuple[list[NextStep], list[NextStep]]:
    """The conditions (and an argmax order) the question grounds, checked on the table, and the answers, ranked.

    The one list the choose mode (:func:`table_next_steps`) and Table Readi
    (:mod:`agent.methods.readi_table`) both draw from. Conditions come
    strongest first; a strong condition that keeps no row with the others
    comes after those that keep some; an ``add_order`` (:func:`argmax_order`)
    comes after the conditions.

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Season", "Episodes"], [["Season 1", "26"], ["Season 2", "52"]])
        >>> conditions, answers = grounded_steps(TableEnvironment(t, question="which season had the most episodes?"))
        >>> [s.action for s in conditions], answers[0].action
        (['add_order(Episodes, DESC)'], 'set_answer(Season)')
    """
    table, question = env.table, env.question or ""
    g = table_ground(question)
    candidates = condition_candidates(table, question, g, scores=scores)
    used = _used(env, candidates)
    kept, empty = _checked_split(env, [c for c in candidates if c.score >= 2.0])  # as grounded_conditions, reusing the candidates
    conditions = [NextStep(_condition_action(table, c), "constrain") for c in [*kept, *empty]]
    mentions = header_mentions(table, question)
    style = question_style(env)
    order = argmax_order(table, question, g, mentions, style)
    by = order[:2] if order is not None else position_order(table, question, g, mentions)
    if by is not None and getattr(env.query, "order", None) is None and "add_order" in env.actions.names:
        conditions.append(NextStep(f"add_order({_column_text(table, by[0])}, {'DESC' if by[1] else 'ASC'})", "constrain"))
    ranked = answer_candidates(table, question, used=used, scores=scores, grounding=g, style=style)
    ranked = [(i, _summed(env, g, mentions, i, agg) if not conditions else agg, score) for i, agg, score in ranked]  # rows yet to pick
    answers = [NextStep(f"set_answer({_column_text(table, i)}{', ' + agg if agg else ''})", "answer") for i, agg, _ in ranked]
    return conditions, answers


def _summed(env: Any, g: Grounding, mentions: Mapping[int, tuple[int, int, float]], index: int, agg: str | None) -> str | None:
    """A count's own number over several rows is their sum: "what is the number of poles daly has won in his career"
    on a table of his seasons is SUM(Poles); on the one row the conditions keep it is that row's number (and while
    the question's conditions are still to add, the number alone).

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Season", "Poles"], [["1990", "1"], ["1991", "9"], ["1992", "2"]])
        >>> env = TableEnvironment(t, question="what is the number of poles that daly has won in his career?")
        >>> grounded_steps(env)[1][0].action
        'set_answer(Poles, SUM)'
    """
    table, question = env.table, env.question or ""
    cue = _aggregation_cue(question, g, mentions)
    if agg is not None or cue is None or cue.op != "COUNT" or not table.columns[index].is_numeric:
        return agg
    if not own_number(table, question, index, g, mentions) and index != measure_column(table, question, g, mentions):
        return agg
    try:
        return "SUM" if env.executor.count(env.query) > 1 else agg
    except PyQLError:
        return agg


def _used(env: Any, candidates: list[ConditionCandidate]) -> dict[int, float]:
    """How strongly a condition of the question (or of the query: 4, :func:`_asked_conditions`) is on each column: an
    answer there scores less."""
    used: dict[int, float] = {}
    for c in candidates:
        used[c.column] = max(used.get(c.column, 0.0), c.score if c.op == "=" else c.score / 2)
    for s in _asked_conditions(env):
        used[s.column.index] = max(used.get(s.column.index, 0.0), 4.0)
    return used


def _asked_conditions(env: Any) -> list[Any]:
    """The query's conditions but the one leaving out the table's summary row (:func:`_summary_left_out`): that one
    says nothing of the question, so it neither turns the answer away from its column nor stands for the question's
    own condition there ("how many people were murdered": ``Description != Total`` and ``Description = Murdered``).

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Nation", "Gold"], [["Peru", "3"], ["Chile", "1"], ["Total", "4"]])
        >>> env = TableEnvironment(t, question="how many gold did peru win?")
        >>> _ = env.step("add_condition(Nation, !=, Total)")
        >>> _asked_conditions(env)
        []
    """
    conditions = list(env.query.conditions)
    summary = summary_row(env.table) if any(s.op == "!=" for s in conditions) else None
    if summary is None:
        return conditions
    column, cell = summary
    return [s for s in conditions if not (s.op == "!=" and s.column.index == column.index and str(s.value).strip().lower() == cell.lower())]


#: How far a standardized model score reaches either way (:func:`standardized`), and its weight on an answer column.
SCORE_CLIP = 1.5
ANSWER_WEIGHT = 0.5


def scores_could_change(env: Any, steps: list[NextStep]) -> str | None:
    """Why a model's header scores could change the first of ``steps`` (listed without scores), or None: the words decide.

    The scores (standardized, within ``±SCORE_CLIP``) enter the list in two
    places only (:func:`table_next_steps`): ``ANSWER_WEIGHT`` times a header's
    score on its answer column, and a bonus of up to ``SCORE_CLIP / 2`` for a
    number of the question written with no header next to it, on a numeric
    column that holds it. So they cannot change the first step when it is
    ``execute()`` or a change of the table; when it is a condition and no such
    number could be listed or reorder its span (:func:`_bonus_open`); when it
    is an answer, no such number is open, and the best answer leads the next
    by more than the widest swing of the scores (``2 * ANSWER_WEIGHT * SCORE_CLIP``,
    plus ``SCORE_CLIP / 2`` when a number with no header could shift an answer
    column's conditions). The agent asks the model for the scores only when this
    gives a reason (``docs/agent.md``, "On a table").

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
        >>> env = TableEnvironment(t, question="What is the total game number with athlone town as the opponent?")
        >>> scores_could_change(env, table_next_steps(env)) is None
        True
        >>> env = TableEnvironment(t, question="Which one was it?")
        >>> scores_could_change(env, table_next_steps(env))
        "the answer columns tie: 'Game' leads 'Opponent' by 0.0 (the scores may swing 1.5)"
    """
    if not steps or steps[0].kind not in ("constrain", "answer"):
        return None
    table, question = env.table, env.question or ""
    g, cells = table_ground(question), _cells(table)
    plain = _all_candidates(table, question, g, None, cells)
    most = _all_candidates(table, question, g, {c.header: SCORE_CLIP for c in table.columns}, cells)
    open_number, shifted = _bonus_open(plain, most)
    if open_number is not None:
        number = question[open_number.start : open_number.end]
        return f"the number {number!r} has no header next to it: the scores say which numeric column holds it"
    if steps[0].kind != "answer":
        return None
    ranked = answer_candidates(table, question, used=_used(env, _best_per_span(plain)), grounding=g, style=question_style(env))
    if len(ranked) < 2:
        return None
    lead, swing = ranked[0][2] - ranked[1][2], 2 * ANSWER_WEIGHT * SCORE_CLIP + (SCORE_CLIP / 2 if shifted else 0.0)
    if lead > swing:
        return None
    first, second = (table.columns[i].header for i, _, _ in ranked[:2])
    return f"the answer columns tie: {first!r} leads {second!r} by {lead:.1f} (the scores may swing {swing:.1f})"


def _bonus_open(
    plain: list[ConditionCandidate], most: list[ConditionCandidate]
) -> tuple[ConditionCandidate | None, bool]:
    """A number the scores could list or move (``plain``/``most``: the candidates at no bonus and at the most), and
    whether any such number exists at all (then an answer column's conditions may shift by up to the bonus).

    A bonus candidate cannot matter when a candidate without a bonus on an
    overlapping span always outranks it (it is then always demoted below the
    listing threshold) and no other candidate on its span or with its key
    scores inside its range (their order is then the same at any score).
    """
    moving = [(lo, hi) for lo, hi in zip(plain, most) if hi.score != lo.score]
    fixed = [c for c, m in zip(plain, most) if m.score == c.score]
    for lo, hi in moving:
        def near(o: ConditionCandidate, c: ConditionCandidate = lo) -> bool:
            return (o.start < c.end and c.start < o.end) or (o.column, o.op, o.value.lower()) == (c.column, c.op, c.value.lower())
        beaten = any(near(o) and o.score > hi.score for o in fixed)
        crossing = any(near(o) and lo.score <= o.score <= hi.score for o in fixed) or any(
            near(o) for o, _ in moving if o is not lo)
        if not beaten or crossing:
            return lo, True
    return None, bool(moving)


def standardized(scores: Mapping[str, float] | None, clip: float = SCORE_CLIP) -> dict[str, float] | None:
    """A model's header scores as z-scores clipped to ``±clip``: a tie-breaker next to the words the question shares.

    Raw PMI runs from about -1 to 8 and differs between questions; standardized,
    the best header of a table gains at most ``0.5 * clip`` on an answer column and
    ``clip / 2`` on a number with no header next to it (see :func:`answer_candidates`).

    Example:
        >>> standardized({"Game": 6.6, "Opponent": 7.3, "Date": -0.3})
        {'Game': 0.6, 'Opponent': 0.81, 'Date': -1.41}
        >>> standardized({"Game": 1.0}), standardized(None)
        ({'Game': 0.0}, None)
    """
    if not scores:
        return None
    values = list(scores.values())
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {h: round(max(-clip, min(clip, (v - mean) / spread)) if spread else 0.0, 2) for h, v in scores.items()}


def _pending(env: Any, plan: Plan) -> NextStep | None:
    """A plan's next step not taken yet, checked on the table (it keeps rows, or gives an answer); None when the plan
    is done, cannot be made on this query, or its next step keeps nothing."""
    query = env.query
    for step in plan.steps:
        if step.done(query):
            continue
        try:
            built = step.build(query)
        except PyQLError:
            return None
        try:
            if step.kind == "answer":
                ok = any(a.value is not None for a in env.executor.execute(built))
            else:
                ok = env.executor.count(built) > 0
        except PyQLError:
            return None
        return NextStep(step.action, step.kind) if ok else None
    return None


def plan_steps(env: Any, g: Grounding) -> tuple[list[NextStep], list[NextStep], frozenset[tuple[int, str]], bool, list[NextStep]]:
    """The question's plans (:func:`pyql_sql.shapes.question_plans`) on this episode: the next steps of its ``part``
    conditions, the next step of its shape, the conditions the shape replaces, whether a shape applies, and the next
    steps of its ``top`` conditions (plain conditions, listed after the grounded ones).

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Player", "Team"], [["Ann", "Knicks"], ["Hank Stein", "Hawks"]])
        >>> env = TableEnvironment(t, question="what team comes before hank stein?")
        >>> parts, shape, drops, shaped, later = plan_steps(env, ground(env.question))
        >>> [s.action for s in shape], sorted(drops), shaped  # (-1, "*"): the question's other conditions are left out too
        (['add_adjacent(Player, Hank Stein, before)'], [(-1, '*'), (0, 'hank stein')], True)
    """
    asks_change = getattr(env, "asks_change", None)  # a writable table (pyql_sql.writable_environment)
    if "add_part" not in env.actions.names or (asks_change is not None and asks_change()):
        return [], [], frozenset(), False, []
    parts: list[NextStep] = []
    later: list[NextStep] = []
    shape: list[NextStep] = []
    drops: frozenset[tuple[int, str]] = frozenset()
    shaped = False
    for plan in question_plans(env.table, env.question or "", g):
        step = _pending(env, plan)
        drops |= plan.drops
        if plan.shape in ("part", "top"):
            (parts if plan.shape == "part" else later).extend([step] if step is not None else [])
            continue
        shaped = True
        shape += [step] if step is not None else []
        if plan.exclusive and step is not None:
            drops |= {(-1, "*")}  # the question's other conditions describe the anchor row: none is listed
    return parts, shape, drops, shaped, later


#: Cue words of a question that reads rows by their place (the summary row would be the last).
_PLACE_CUES = re.compile(r"\b(?:first|last|next|previous|before|after|above|below|top|bottom|listed)\b", re.IGNORECASE)


def _summary_left_out(env: Any, g: Grounding, offered: list[NextStep]) -> list[NextStep]:
    """The step leaving out the table's summary row (:func:`pyql_sql.summary_rows.summary_row`), as a list of one,
    when the question counts, orders, aggregates or reads a row by its place and does not name that row itself
    (no step offered keeps it: "how many total medals were given out" reads the ``Total`` row); else none.

    Example:
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Nation", "Gold"], [["Peru", "3"], ["Chile", "1"], ["Total", "4"]])
        >>> env = TableEnvironment(t, question="which nation won the most gold?")
        >>> [s.action for s in _summary_left_out(env, ground(env.question), [])]
        ['add_condition(Nation, !=, Total)']
    """
    if env.query.result is not None or "add_condition" not in env.actions.names or not env.question:
        return []
    if not (g.cue("order") or g.cue("aggregate") or _PLACE_CUES.search(env.question)):
        return []
    found = summary_row(env.table)
    if found is None:
        return []
    column, cell = found
    if any(c.column.index == column.index or str(c.value).strip().lower() == cell.lower() for c in env.query.conditions):
        return []  # left out already, or a condition reads that row
    name = _column_text(env.table, column.index)
    keeps = re.compile(r"add_condition\(.*, (?:=|contains), " + re.escape(action_value(cell)) + r"\)", re.IGNORECASE)
    if any(keeps.fullmatch(s.action) for s in offered):
        return []  # a condition offered reads the summary row ("how many total medals": Nation = Total)
    return [NextStep(f"add_condition({name}, !=, {action_value(cell)})", "constrain")]


def table_next_steps(env: Any, *, scores: Mapping[str, float] | None = None, limit: int = 8) -> list[NextStep]:
    """The valid next steps of a table episode, ranked (see the module's docstring); at most ``limit``.

    Args:
        env: a :class:`~pyql_sql.environment.TableEnvironment` with its question.
        scores: a model's score of each header (higher: more about the question; the model's PMI), or
            None; standardized first (:func:`standardized`).
        limit: the most steps listed.

    Example:
        >>> from pyql_sql.table import Table
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Round", "Fastest Lap"], [["5", "Takashi Kogure"], ["13", "Takashi Kogure"], ["2", "Other"]])
        >>> env = TableEnvironment(t, question="What was the earlier round where Takashi Kogure got the fastest lap?")
        >>> table_next_steps(env, limit=2)[0].action
        'add_condition(Fastest Lap, =, Takashi Kogure)'
        >>> _ = env.step("add_condition(Fastest Lap, =, Takashi Kogure)")
        >>> table_next_steps(env, limit=2)[0].action
        'set_answer(Round, MIN)'
        >>> _ = env.step("set_answer(Round, MIN)")
        >>> [s.action for s in table_next_steps(env, limit=2)]
        ['execute()', 'set_answer(Round)']
    """
    conditions, answers = grounded_steps(env, scores=standardized(scores))
    g = table_ground(env.question or "")
    parts, shape, drops, shaped, later = plan_steps(env, g)
    if drops or shaped:
        conditions = [s for s in conditions if not _dropped(env.table, s.action, drops) and not (shaped and s.action.startswith("add_order("))]
    summary = _summary_left_out(env, g, [*parts, *conditions, *shape])
    if env.query.result is not None:
        steps = [*_answer_steps(env, answers), *conditions]
    else:
        shape_answer = [s for s in shape if s.kind == "answer"]
        shape_steps = [s for s in shape if s.kind != "answer"]
        taken = {s.action for s in conditions}
        shaped_answers = {s.action for s in shape_answer}
        steps = [*parts, *conditions, *[s for s in later if s.action not in taken], *shape_steps, *shape_answer,
                 *[s for s in answers if s.action not in shaped_answers]]
    steps = [*summary, *steps]
    change_steps = getattr(env, "change_steps", None)  # a writable table (pyql_sql.writable_environment)
    changes = change_steps(ground(env.question or "")) if change_steps is not None else []  # a question asking for a change: those first
    if changes:
        steps = [*changes, *[s for s in steps if s.action not in {c.action for c in changes}]]
    return steps[:limit]
