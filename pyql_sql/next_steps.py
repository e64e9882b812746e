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
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from pyql.errors import PyQLError
from pyql.environment.grounding import Grounding, ground, parse_date
from pyql.environment.next_steps import NextStep

from .numbers import format_number, parse_number
from .table import Column, Table

__all__ = [
    "ABBREVIATIONS", "ConditionCandidate", "answer_candidates", "column_words", "grounded_conditions", "argmax_order", "condition_candidates", "grounded_steps",
    "header_mentions", "own_number", "scores_could_change", "standardized", "table_next_steps", "SCORE_CLIP", "ANSWER_WEIGHT",
]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "are", "was", "were", "be", "been", "has", "have", "had", "what", "which", "who", "whom", "whose", "when", "where", "how", "that", "this", "it", "its", "as", "name", "tell", "me"])
#: Words between a header and its value ("Goal of 17", "Nation is Iran", "listed as August 15, 2000").
_LINK = frozenset(["of", "is", "was", "are", "were", "as", "listed", "at", "has", "have", "had", "with", "for", "equal", "equals", "to", "being", "named", "called", "a", "an", "the"])
_COMPARING = frozenset(["than", "smaller", "larger", "less", "more", "greater", "fewer", "bigger", "lower", "higher", "over", "under", "least", "most", "at"])
_AGGREGATE_OF = {"COUNT": "COUNT", "SUM": "SUM", "AVG": "AVG", "max": "MAX", "min": "MIN"}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("sses"):
        return word[:-2]  # "losses" is "loss", "classes" is "class"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


#: Header abbreviations and the word a question writes for them ("No." is "number", "Pts" is "points").
ABBREVIATIONS: dict[str, str] = {
    "no": "number", "num": "number", "nr": "number", "#": "number", "pos": "position", "pts": "point",
    "pt": "point", "yr": "year", "yrs": "year", "avg": "average", "pct": "percentage", "att": "attendance",
    "pop": "population", "elev": "elevation", "ht": "height", "wt": "weight", "dist": "district",
    "gp": "game", "apps": "appearance", "app": "appearance", "gls": "goal", "ep": "episode", "eps": "episode",
    "seas": "season", "mgr": "manager", "dir": "director", "approx": "approximate", "est": "established",
    "won": "win", "w": "win", "lost": "loss", "l": "loss", "drawn": "draw", "d": "draw",
}


def _stems(text: str) -> list[str]:
    """The stemmed words of a header or question, abbreviations spelt out (``No.`` → ``number``, ``#`` → ``number``)."""
    words = _WORD.findall(text.lower())
    if not words and text.strip() == "#":
        words = ["#"]
    return [ABBREVIATIONS.get(w, _stem(w)) if len(words) <= 3 else _stem(w) for w in words]


def column_words(header: str) -> str:
    """A header as words a model scores (abbreviations spelt out): what :class:`agent.llm.likelihood.RelationPMI` reads.

    Example:
        >>> column_words("No."), column_words("School/Club Team"), column_words("Pts")
        ('number', 'school club team', 'points')
    """
    words = _WORD.findall(header.lower()) or (["#"] if header.strip() == "#" else [])
    spelt = {"point": "points", "goal": "goals", "game": "games", "year": "years", "episode": "episodes", "appearance": "appearances"}
    out = [spelt.get(ABBREVIATIONS[w], ABBREVIATIONS[w]) if w in ABBREVIATIONS and len(words) <= 3 else w for w in words]
    return " ".join(out)


@dataclass(frozen=True)
class ConditionCandidate:
    """A condition the question grounds: column, operator, value, where in the question, how strong.

    Attributes:
        column: the column index.
        op: the operator.
        value: the value as the action writes it (a cell as the table writes it, or the question's number).
        start, end: the span of the value in the question.
        score: how strongly the question asks for it (higher first).
    """

    column: int
    op: str
    value: str
    start: int
    end: int
    score: float


def header_mentions(table: Table, question: str) -> dict[int, tuple[int, int, float]]:
    """Where the question names each column: column index → (start, end, strength).

    A header written whole (case aside, ``Frequency MHz``) has strength 3 plus
    its length in words; otherwise the longest run of its words (stems:
    ``touchdowns`` names ``Touchdowns``, ``Silvers`` names ``Silver``) scores one
    per word. A header's abbreviation is matched as written and spelt out
    (``No.`` is named by "no." and by "number", :data:`ABBREVIATIONS`). Stop words alone name nothing.

    Example:
        >>> t = Table.from_rows(["Frequency MHz", "Class", "Call sign"], [["1", "D", "K"]])
        >>> header_mentions(t, "Class of d with a Frequency MHz smaller than 107.7 has what call signs?")
        {0: (18, 31, 5.0), 1: (0, 5, 4.0), 2: (60, 70, 5.0)}
    """
    words = [(m.start(), m.end(), _stem(m.group())) for m in _WORD.finditer(question.lower())]
    out: dict[int, tuple[int, int, float]] = {}
    for col in table.columns:
        target = _stems(col.header)
        if not target:
            continue
        written = [_stem(w) for w in _WORD.findall(col.header.lower())]
        options = [{t, w} for t, w in zip(target, written)] if len(written) == len(target) else [{t} for t in target]
        best: tuple[int, int, float] | None = None
        for i in range(len(words)):
            n = 0  # a word as the header writes it or spelt out ("No." is "no" and "number")
            while i + n < len(words) and n < len(target) and words[i + n][2] in options[n]:
                n += 1
            if n == 0 or all(words[i + k][2] in _STOP for k in range(n)):
                continue
            strength = (3.0 + n) if n == len(target) else float(n)
            if best is None or strength > best[2]:
                best = (words[i][0], words[i + n - 1][1], strength)
        if best is None:  # the header's words anywhere (not in a run)
            loose = [w for w in words if w[2] in set().union(*options) - _STOP]
            if loose:
                best = (loose[0][0], loose[0][1], 0.5 * len({w[2] for w in loose}))
        if best is not None:
            out[col.index] = best
    whole = {i: m for i, m in out.items() if m[2] >= 3}
    for i, m in list(out.items()):  # "home team" inside "home team score": the longer header is named, not this one
        if any(j != i and o[0] <= m[0] and m[1] <= o[1] and (o[1] - o[0]) > (m[1] - m[0]) for j, o in whole.items()):
            del out[i]
    return out


def _near(question: str, mention: tuple[int, int, float] | None, start: int, end: int) -> float:
    """How close a header mention is to a value span: 2 when only linking words stand between, else 0."""
    if mention is None:
        return 0.0
    m_start, m_end, _ = mention
    if m_end <= start:
        between = _WORD.findall(question[m_end:start].lower())
    elif end <= m_start:
        between = _WORD.findall(question[end:m_start].lower())
    else:
        return 0.0
    if len(between) > 3:
        return 0.0
    if all(w in _LINK or w in _COMPARING for w in between):
        return 2.0
    return 1.0  # a few other words between ("Takashi Kogure got the fastest lap")


#: The most distinct cells of one column matched against a question.
MAX_CELLS = 5000


def _cells(table: Table) -> list[tuple[Column, list[str]]]:
    """Each column with its distinct non-empty cells (read through the table's read-only executor)."""
    executor = table.executor()
    out = []
    for col in table.columns:
        values = executor.get_column(col.index, limit=MAX_CELLS).values
        out.append((col, [str(v) for v in values if v is not None and str(v).strip()]))
    return out


_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"
_DASH = re.compile(f"[{_DASHES}]")


def _word_pattern(word: str) -> str:
    """A cell's word as a pattern: any dash matches any dash (``1996-97`` is the cell ``1996–97``)."""
    return f"[{_DASHES}]".join(re.escape(part) for part in _DASH.split(word))


def _text_matches(question: str, cells: list[str]) -> list[tuple[str, int, int]]:
    """The cells the question writes (case, spacing and the kind of dash aside), with their spans."""
    out = []
    for cell in cells:
        words = cell.split()
        if not words or len(cell) > 80:
            continue
        pattern = r"(?<!\w)" + r"\s+".join(_word_pattern(w) for w in words) + r"(?!\w)"
        m = re.search(pattern, question, re.IGNORECASE)
        if m is not None:
            out.append((cell, m.start(), m.end()))
    return out


def condition_candidates(
    table: Table, question: str, grounding: Grounding | None = None, *, scores: Mapping[str, float] | None = None,
) -> list[ConditionCandidate]:
    """The conditions the question grounds on this table, strongest first (not yet checked against rows).

    Three sources, scored against the same header mentions: the cells the
    question writes, its numbers and dates matched to cells, and its
    comparisons (``between`` gives a ``>=`` and a ``<=``). A number the
    question writes with no header next to it is matched to a numeric column
    the model rates for the question (``scores``, header → PMI) a little
    higher. A number or date inside a longer cell the question writes
    (``1996`` in ``1996-97``) is that cell, not a value of its own.

    Example:
        >>> t = Table.from_rows(["Goal", "Result", "Competition"], [["16", "2–1", "Friendly"], ["18", "2–1", "Cup"]])
        >>> q = "Which Score has a Result of 2–1, and a Competition of friendly, and a Goal smaller than 17?"
        >>> [(t.columns[c.column].header, c.op, c.value) for c in condition_candidates(t, q)]
        [('Goal', '<', '17'), ('Competition', '=', 'Friendly'), ('Result', '=', '2–1')]
    """
    g = grounding or ground(question)
    return _best_per_span(_all_candidates(table, question, g, scores, _cells(table)))


def _all_candidates(
    table: Table, question: str, g: Grounding, scores: Mapping[str, float] | None, cells: list[tuple[Column, list[str]]],
) -> list[ConditionCandidate]:
    """Every grounded condition, before the strongest of each span is chosen (numbers inside a cell left out)."""
    mentions = header_mentions(table, question)
    compared = {(v.start, v.end) for _, v in g.comparisons()}
    out: list[ConditionCandidate] = []
    for col, values in cells:
        mention = mentions.get(col.index)
        out += _cell_candidates(question, col, values, mention, compared)
        bonus = 0.0 if mention is not None else min(max((scores or {}).get(col.header, 0.0), 0.0), 2.0) / 2
        out += _value_candidates(question, g, col, values, mention, compared, bonus)
    out += _comparison_candidates(table, question, g, mentions)
    return _outside_cells(out)


#: Words right before a cell that turn its condition into ``!=``: "not from ethiopia", "other than italy".
_NEGATED = re.compile(r"(?:\bnot|n't|\bother\s+than|except(?:\s+for)?|besides|excluding|apart\s+from)\s+(?:(?:from|in|at|by|on|for|of|the|a|an|those|ones|people)\s+){0,2}$", re.IGNORECASE)


def _cell_candidates(
    question: str, col: Column, cells: list[str], mention: tuple[int, int, float] | None, compared: set[tuple[int, int]]
) -> list[ConditionCandidate]:
    """``column = cell`` for each cell of the column the question writes (not the header itself); ``!=`` after a negation (:data:`_NEGATED`).

    Example:
        >>> col = Table.from_rows(["Nationality"], [["Ethiopia"], ["Kenya"]]).columns[0]
        >>> [(c.op, c.value) for c in _cell_candidates("who was the only medalist not from ethiopia?", col, ["Ethiopia", "Kenya"], None, set())]
        [('!=', 'Ethiopia')]
    """
    out = []
    for cell, start, end in _text_matches(question, cells):
        if mention and mention[0] <= start and end <= mention[1] and mention[2] >= 3:
            continue  # the header itself, not a value
        near = _near(question, mention, start, end)
        length = len(cell.strip())
        if (length < 3 and near == 0) or (start, end) in compared or cell.lower() in _STOP:
            continue
        op = "!=" if _NEGATED.search(question[max(0, start - 30) : start]) else "="
        out.append(ConditionCandidate(col.index, op, cell, start, end, 1.0 + min(length, 20) / 5 + 2 * near))
    for cell, start, end in _first_word_matches(question, cells, {c.value for c in out}):
        if any(c.start < end and start < c.end for c in out):
            continue  # the word is part of a cell the question writes whole
        out.append(ConditionCandidate(col.index, "=", cell, start, end, 2.0 + 2 * _near(question, mention, start, end)))
    return out


def _first_word_matches(question: str, cells: list[str], whole: set[str]) -> list[tuple[str, int, int]]:
    """The cells the question names by their first word alone ("atlanta" for ``Atlanta Falcons``), with its span.

    Only a first word of 4 letters or more that no other cell of the column
    starts with, of a cell of two words or more the question does not write whole,
    and not followed in the question by another word than the cell's second.

    Example:
        >>> _first_word_matches("how many draft picks did atlanta have?", ["Atlanta Falcons", "Houston Texans", "Atlanta"], set())
        []
        >>> _first_word_matches("how many draft picks did atlanta have?", ["Atlanta Falcons", "Houston Texans"], set())
        [('Atlanta Falcons', 25, 32)]
        >>> _first_word_matches("last opponent for manchester united?", ["Manchester City", "Everton"], set())
        []
    """
    by_first: dict[str, set[str]] = {}
    for cell in cells:
        words = cell.split()
        if words:
            by_first.setdefault(words[0].lower(), set()).add(cell.strip())
    out = []
    for first, same in by_first.items():
        cell = next(iter(same))
        if len(same) != 1 or len(cell.split()) < 2 or cell in whole or len(first) < 4 or not first.isalpha() or first in _STOP:
            continue
        m = re.search(rf"(?<!\w){re.escape(first)}(?!\w)", question, re.IGNORECASE)
        following = _WORD.findall(question[m.end() :].lower())[:1] if m is not None else []
        second = _WORD.findall(cell.lower())[1:2]
        if m is not None and not (following and following[0] not in _STOP and following != second):
            out.append((cell, m.start(), m.end()))  # "manchester united" does not name Manchester City
    return out


def _value_candidates(
    question: str, g: Grounding, col: Column, cells: list[str], mention: tuple[int, int, float] | None,
    compared: set[tuple[int, int]], bonus: float,
) -> list[ConditionCandidate]:
    """``column = cell`` for each number of the question the column holds, and each date at its precision (a year also in a numeric column).

    Example:
        >>> col = Table.from_rows(["Year completed"], [["1931"], ["1922"]]).columns[0]
        >>> q = "how many bridges were built in 1931?"
        >>> [(c.op, c.value) for c in _value_candidates(q, ground(q), col, ["1931", "1922"], None, set(), 0.0)]
        [('=', '1931')]
    """
    by_number = {parse_number(c): c for c in cells} if col.is_numeric else {}
    by_date = {}
    for c in cells:
        d = parse_date(c) if not col.is_numeric else None
        if d is not None:
            by_date[(d.first, d.last)] = c
    out = []
    years = {(v.start, v.end) for v in g.values if v.kind == "date" and v.value.precision == "year"}
    numbers = {(v.start, v.end) for v in g.values if v.kind in ("number", "quantity")}
    for v in g.values:
        near = _near(question, mention, v.start, v.end)
        if v.kind in ("number", "quantity") and (v.start, v.end) not in compared and v.value in by_number:
            base = 2.5 if (v.start, v.end) in years else 1.5  # "built in 1931": a year is a stronger value than a bare number
            out.append(ConditionCandidate(col.index, "=", by_number[v.value], v.start, v.end, base + 2 * near + bonus))
        elif v.kind == "date" and v.value.precision == "year" and (v.start, v.end) not in numbers and float(v.value.first.year) in by_number:
            out.append(ConditionCandidate(col.index, "=", by_number[float(v.value.first.year)], v.start, v.end, 2.5 + 2 * near + bonus))  # "built in 1931", a Year column
        elif v.kind == "date" and (v.value.first, v.value.last) in by_date:
            out.append(ConditionCandidate(col.index, "=", by_date[(v.value.first, v.value.last)], v.start, v.end, 3.0 + 2 * near))
    return out


def _number_of(v: Any) -> float | None:
    if v.kind in ("number", "quantity"):
        return float(v.value)
    return float(v.value.first.year) if v.kind == "date" else None


def _comparison_candidates(
    table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]
) -> list[ConditionCandidate]:
    """``column op number`` on the numeric columns for each comparison (``between a and b``: ``>= a`` and ``<= b``)."""
    out = []
    for cue, v in g.comparisons():
        low = _number_of(v)
        if low is None:
            continue
        bounds: list[tuple[str, float, int]] = [(cue.op, low, v.end)]
        if cue.op == "between":
            high = next((w for w in g.values if w.start >= v.end and _number_of(w) is not None
                         and re.fullmatch(r"\s*(?:and|to|-|–)\s*", question[v.end : w.start])), None)
            if high is None:
                continue
            bounds = [(">=", low, v.end), ("<=", float(_number_of(high) or 0.0), high.end)]
        for col in table.columns:
            if not col.is_numeric:
                continue
            near = max(_near(question, mentions.get(col.index), cue.start, v.end), 0.0)
            digits = re.match(r"[\d,.]*\d", question[v.start : v.end])
            if near == 0 and _counts_another_thing(question, v.start + digits.end() if digits else v.end, col):
                continue  # "more than 3 candidates" is not a condition on Votes
            for op, number, end in bounds:
                out.append(ConditionCandidate(col.index, op, format_number(number), cue.start, end, 2.0 + 2.5 * near))
    return out


def _counts_another_thing(question: str, end: int, col: Column) -> bool:
    """Whether the word right after a compared number is a noun this column's header does not hold ("3 candidates", "18 meters").

    Example:
        >>> col = Table.from_rows(["Votes"], [["10"]]).columns[0]
        >>> _counts_another_thing("more than 3 candidates", 11, col), _counts_another_thing("more than 3 votes", 11, col)
        (True, False)
        >>> _counts_another_thing("a score over 70?", 15, col)
        False
    """
    after = re.match(r"\s*([a-z]+)\b", question[end:].lower())
    if after is None or after.group(1) in _STOP or after.group(1) in _LINK or after.group(1) in _COMPARING:
        return False
    return _stem(after.group(1)) not in set(_stems(col.header)) | {_stem(w) for w in _WORD.findall(col.header.lower())}


def _outside_cells(candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """Without the numbers and dates written inside a longer cell of the question (``1996`` in ``1996-97``)."""
    cells = [c for c in candidates if c.op == "="]
    return [
        c for c in candidates
        if not any(o.start <= c.start and c.end <= o.end and (o.end - o.start) > (c.end - c.start) and o.op == "="
                   and (c.op == "=" and c.value != o.value) for o in cells)
    ]


def _best_per_span(candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """Strongest first; of candidates whose spans overlap, the weaker ones lose 2 (they stay listed)."""
    ranked = sorted(candidates, key=lambda c: (-c.score, c.start, c.column))
    out: list[ConditionCandidate] = []
    seen: set[tuple[int, str, str]] = set()
    for c in ranked:
        key = (c.column, c.op, c.value.lower())
        if key in seen:
            continue
        seen.add(key)
        if any(o.start < c.end and c.start < o.end for o in out):
            c = ConditionCandidate(c.column, c.op, c.value, c.start, c.end, c.score - 2.0)
        out.append(c)
    return sorted(out, key=lambda c: (-c.score, c.start, c.column))


def _aggregation(question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]) -> str | None:
    """The aggregation the cue words ask for (the cue of :func:`_aggregation_cue`)."""
    cue = _aggregation_cue(question, g, mentions)
    if cue is None:
        return None
    if cue.op == "SUM" and re.match(r"\s+(?:\w+\s+)?number\b", question[cue.end :], re.IGNORECASE):
        return "COUNT"  # "the total number of ...", "the total game number"
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


def _after(question: str, cue_end: int, start: int, allowed: frozenset[str]) -> bool:
    """Whether only ``allowed`` words stand between a cue's end and ``start``."""
    return cue_end <= start and set(_WORD.findall(question[cue_end:start].lower())) <= allowed


_COUNTED_BY = frozenset(["the", "of", "number", "total", "all"])


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
    """
    col, mention = table.columns[index], mentions.get(index)
    cue = _aggregation_cue(question, g, mentions)
    if not col.is_numeric or mention is None or cue is None or cue.kind != "aggregate":
        return False
    ends = [c.end for c in g.cues if c.kind == "aggregate"]
    if any(_after(question, e, mention[0], _COUNTED_BY) for e in ends):
        last = _WORD.findall(col.header.lower())
        counted = _WORD.findall(question[mention[1] :].lower())[:1]  # "how many total medals": the header qualifies a plural noun
        return any(w[-1].endswith("s") and not w[-1].endswith("ss") and w[-1] not in _STOP for w in (last, counted) if w)
    counted = _WORD.findall(question[max(ends) :].lower())[:1]
    names_column = any(m[0] >= max(ends) and m[0] - max(ends) <= len(" ".join(counted)) + 2 for m in mentions.values())
    return bool(counted) and not names_column and mention[2] >= 3 and mention[0] > max(ends)


def argmax_order(
    table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]]
) -> tuple[int, bool, int] | None:
    """An argmax/argmin the question asks for: (column ordered by, descending, answer column), or None.

    "which season had the most episodes": an order cue right before a
    column (``Episodes``) while the question's *which/what* names another
    column (``Season``): the answer is that column of the row with the most,
    not the most itself (``MAX(Episodes)``). A *who* question answers with its
    person column (:func:`who_column`).

    Example:
        >>> t = Table.from_rows(["Season", "Episodes"], [["Season 1", "26"]])
        >>> q = "which season had the most episodes in it?"
        >>> argmax_order(t, q, ground(q), header_mentions(t, q))
        (1, True, 0)
        >>> t = Table.from_rows(["Place", "Team", "Won"], [["1", "Águila", "20"]])
        >>> q = "who had the most wins?"
        >>> argmax_order(t, q, ground(q), header_mentions(t, q))
        (2, True, 1)
    """
    wh = re.search(r"\b(?:which|what|who)\b", question, re.IGNORECASE)
    if wh is None:
        return None
    target = [i for i, m in mentions.items() if _after(question, wh.end(), m[0], frozenset(["the", "is", "was"]))]
    if not target:
        target = _unnamed_target(table, question, wh, mentions)
    for cue in g.cue("order"):
        ordered = [i for i, m in mentions.items() if _after(question, cue.end, m[0], frozenset(["the", "number", "of"]))]
        if ordered and target and target[0] != ordered[0] and cue.start > wh.end():
            return ordered[0], cue.op == "max", target[0]
    return None


def _unnamed_target(table: Table, question: str, wh: re.Match[str], mentions: Mapping[int, tuple[int, int, float]]) -> list[int]:
    """The answer column of a *who* question naming no column: its person column (none for *which <noun>*:
    "which match had the largest crowd" asks for the crowd)."""
    who = who_column(table, question, mentions) if wh.group().lower() == "who" else None
    return [] if who is None else [who]


#: Order cues that mean a row's place in the table when no header follows them ("the first person eliminated").
_POSITION_CUES = frozenset(["first", "last", "earliest", "latest"])


def _in_table_order(table: Table, col: Column) -> bool:
    """Whether a numeric column's numbers rise down the table (most rows hold one): it orders the rows as listed.

    Example:
        >>> t = Table.from_rows(["Year", "Age"], [["1990", "26"], ["1994", "28"], ["1999", "21"]])
        >>> _in_table_order(t, t.columns[0]), _in_table_order(t, t.columns[1])
        (True, False)
    """
    if not col.is_numeric or col.num_sql is None:
        return False
    select = exp.select(exp.column(col.num_sql, quoted=True)).from_(exp.table_(table.sql_name, quoted=True)).order_by(exp.column("rowid"))
    numbers = [r[0] for r in table.connection.execute(select.sql(dialect="sqlite")).fetchall()]
    present = [n for n in numbers if n is not None]
    if len(present) < 2 or len(present) < 0.8 * len(numbers):
        return False
    return all(a <= b for a, b in zip(present, present[1:])) and present[0] < present[-1]


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
        rising = next((c.index for c in table.columns if _in_table_order(table, c)), None)  # one query a column, up to the first
        return (rising, cue.op == "max") if rising is not None else None
    return None


#: Header words that name who a row is about: the column a *who* question asks for when it names none.
PERSON_HEADERS = frozenset([
    "name", "player", "athlete", "driver", "rider", "coach", "finalist", "contestant", "candidate", "artist",
    "winner", "nation", "country", "team", "club", "person", "member", "manager", "actor", "actress",
    "character", "director", "author", "composer", "singer", "skater", "swimmer", "cyclist", "runner",
    "jockey", "pilot", "captain", "owner", "president", "governor", "mayor", "leader", "holder", "recipient",
    "nominee", "champion", "performer", "writer", "producer", "competitor", "entrant", "representative",
    "incumbent", "senator", "delegate", "chairman", "rank holder", "skier", "boxer", "wrestler", "musician",
])


def who_column(table: Table, question: str, mentions: Mapping[int, tuple[int, int, float]]) -> int | None:
    """The column a *who* question asks for when it names none right after *who*, or None.

    "who was the only medalist not from ethiopia?" asks for the row's person:
    the first text column whose header is a person word (:data:`PERSON_HEADERS`:
    ``Name``, ``Athlete``, ``Nation`` ...). "who was the opponent" names its
    column (``Opponent``), so it has no *who* column; a question without *who* neither.

    Example:
        >>> t = Table.from_rows(["Rank", "Name", "Nationality"], [["1", "Sule Utura", "Ethiopia"]])
        >>> who_column(t, "who was the only medalist not from ethiopia?", {})
        1
        >>> who_column(t, "who was the nationality of rank 1?", header_mentions(t, "who was the nationality of rank 1?"))
    """
    who = re.search(r"\bwho\b", question, re.IGNORECASE)
    if who is None or any(_after(question, who.end(), m[0], frozenset(["the", "is", "was", "are", "were"])) for m in mentions.values()):
        return None
    for col in table.columns:
        if not col.is_numeric and set(_stems(col.header)) & PERSON_HEADERS:
            return col.index
    return None


def _asked_column(question: str, mentions: Mapping[int, tuple[int, int, float]], g: Grounding, table: Table | None = None) -> int | None:
    """The column the question's *which/what* names right after it ("What school did ..."), or None.

    A cue word that is also a header ("What is the average Total", header ``Average``) is the cue, not the column asked.
    Without one, a *who* question asks for its person column (:func:`who_column`, when ``table`` is given).
    """
    wh = re.search(r"\b(?:which|what)\b", question, re.IGNORECASE)
    if wh is None:
        return who_column(table, question, mentions) if table is not None else None
    cues = [(c.start, c.end) for c in g.cues]
    named = sorted((m[0], i) for i, m in mentions.items()
                   if _after(question, wh.end(), m[0], frozenset(["the", "is", "was", "are", "were"]))
                   and not any(s <= m[0] < e for s, e in cues))
    return named[0][1] if named else None


def answer_candidates(
    table: Table, question: str, *, used: Mapping[int, float] | None = None, scores: Mapping[str, float] | None = None,
    grounding: Grounding | None = None,
) -> list[tuple[int, str | None, float]]:
    """The answer columns, best first, each with its aggregation: (column index, aggregation, score).

    A column scores by how the question names it (:func:`header_mentions`; named
    earlier scores a little higher), less when a condition of the question is
    on it (``used``: column → how strongly), plus a model's score of its header
    (``scores``, header → score, weighted 0.5) when given. The aggregation
    comes from the cue words (COUNT on any column, the others on numbers); a
    count of a column that holds the count itself is the cell's own number
    (:func:`own_number`), and an argmax (:func:`argmax_order`) answers with
    the other column, unaggregated.

    Example:
        >>> t = Table.from_rows(["Player", "Touchdowns", "Points"], [["A", "2", "11"]])
        >>> answer_candidates(t, "Name the least touchdowns for 11 points", used={2: 4.0})[0]
        (1, 'MIN', 7.308)
    """
    g = grounding or ground(question)
    mentions = header_mentions(table, question)
    aggregation = _aggregation(question, g, mentions)
    order = argmax_order(table, question, g, mentions)
    position = position_order(table, question, g, mentions) if order is None else None
    if position is not None and aggregation in ("MAX", "MIN"):
        aggregation = None  # "the first person eliminated": a row's place, not a minimum
    asked = _asked_column(question, mentions, g, table)
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
        score += 3.0 if col.index == asked else 0.0  # named right after which/what, or a who question's person column
        score -= min(used.get(col.index, 0.0), 4.0)
        if scores and col.header in scores:
            score += ANSWER_WEIGHT * scores[col.header]
        agg = aggregation if aggregation == "COUNT" or (aggregation and col.is_numeric) else None
        if agg == "COUNT" and own_number(table, question, col.index, g, mentions):
            agg = None
        if order is not None:
            agg = None
            score += 6.0 if col.index == order[2] else (-3.0 if col.index == order[0] else 0.0)
        elif position is not None and col.index == position[0]:
            score -= 3.0  # the column that orders the rows is rarely the one asked
        elif aggregation and agg is None and not (aggregation == "COUNT" and col.is_numeric):
            score -= 1.0  # the question asks for an aggregate this column cannot give
        out.append((col.index, agg, round(score, 3)))
    return sorted(out, key=lambda t: (-t[2], t[0]))


def _column_text(table: Table, index: int) -> str:
    header = table.columns[index].header
    same = [c for c in table.columns if c.header.strip().lower() == header.strip().lower()]
    return f"#{index}" if len(same) > 1 or not header.strip() else header


def _condition_action(table: Table, c: ConditionCandidate) -> str:
    return f"add_condition({_column_text(table, c.column)}, {c.op}, {c.value})"


#: How strongly the question must ask for a condition for it to be listed although it keeps no row
#: (a header right next to its value: "less than 0 Silvers", "a W-L-T of 5-1"; a long cell: "South Carolina").
EMPTY_STRENGTH = 3.5


def _checked(env: Any, candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """The candidates some row meets together with the query's conditions (see :func:`_checked_split`)."""
    return _checked_split(env, candidates)[0]


def _checked_split(env: Any, candidates: list[ConditionCandidate]) -> tuple[list[ConditionCandidate], list[ConditionCandidate]]:
    """The candidates some row meets together with the query's conditions, and the strong ones no row meets.

    Candidates on a column already conditioned are left out (but the other
    bound of a range: ``>= 10000`` then ``<= 20000``). A strong candidate
    (:data:`EMPTY_STRENGTH`) that keeps no row is kept apart: the question's
    conditions together may keep no row, and then the answer is that there is none.
    """
    on = {(s.column.index, s.op) for s in env.query.conditions}
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


def _answer_steps(env: Any, answers: list[NextStep]) -> list[NextStep]:
    """Once an answer is set: ``execute()``, then the other answers (the same column unaggregated first)."""
    table, current = env.table, env.query.answer
    written = f"set_answer({_column_text(table, current.column.index)}{', ' + current.aggregation if current.aggregation else ''})"
    answers = [a for a in answers if a.action != written]
    if current.aggregation:  # the same column without its aggregation, next
        plain = f"set_answer({_column_text(table, current.column.index)})"
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
    g = ground(question)
    candidates = condition_candidates(table, question, g, scores=scores)
    used = _used(env, candidates)
    kept, empty = _checked_split(env, [c for c in candidates if c.score >= 2.0])  # as grounded_conditions, reusing the candidates
    conditions = [NextStep(_condition_action(table, c), "constrain") for c in [*kept, *empty]]
    mentions = header_mentions(table, question)
    order = argmax_order(table, question, g, mentions)
    by = order[:2] if order is not None else position_order(table, question, g, mentions)
    if by is not None and getattr(env.query, "order", None) is None and "add_order" in env.actions.names:
        conditions.append(NextStep(f"add_order({_column_text(table, by[0])}, {'DESC' if by[1] else 'ASC'})", "constrain"))
    answers = [
        NextStep(f"set_answer({_column_text(table, i)}{', ' + agg if agg else ''})", "answer")
        for i, agg, _ in answer_candidates(table, question, used=used, scores=scores, grounding=g)
    ]
    return conditions, answers


def _used(env: Any, candidates: list[ConditionCandidate]) -> dict[int, float]:
    """How strongly a condition of the question (or of the query: 4) is on each column: an answer there scores less."""
    used: dict[int, float] = {}
    for c in candidates:
        used[c.column] = max(used.get(c.column, 0.0), c.score if c.op == "=" else c.score / 2)
    for s in env.query.conditions:
        used[s.column.index] = max(used.get(s.column.index, 0.0), 4.0)
    return used


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
        >>> env = TableEnvironment(t, question="Who won?")
        >>> scores_could_change(env, table_next_steps(env))
        "the answer columns tie: 'Game' leads 'Opponent' by 0.0 (the scores may swing 1.5)"
    """
    if not steps or steps[0].kind not in ("constrain", "answer"):
        return None
    table, question = env.table, env.question or ""
    g, cells = ground(question), _cells(table)
    plain = _all_candidates(table, question, g, None, cells)
    most = _all_candidates(table, question, g, {c.header: SCORE_CLIP for c in table.columns}, cells)
    open_number, shifted = _bonus_open(plain, most)
    if open_number is not None:
        number = question[open_number.start : open_number.end]
        return f"the number {number!r} has no header next to it: the scores say which numeric column holds it"
    if steps[0].kind != "answer":
        return None
    ranked = answer_candidates(table, question, used=_used(env, _best_per_span(plain)), grounding=g)
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
    if env.query.answer is not None:
        steps = [*_answer_steps(env, answers), *conditions]
    else:
        steps = [*conditions, *answers]
    change_steps = getattr(env, "change_steps", None)  # a writable table (pyql_sql.writable_environment)
    changes = change_steps(ground(env.question or "")) if change_steps is not None else []  # a question asking for a change: those first
    if changes:
        steps = [*changes, *[s for s in steps if s.action not in {c.action for c in changes}]]
    return steps[:limit]
