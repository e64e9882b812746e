"""The valid next steps of a table episode: what an agent may do now, enumerated and ranked.

The table twin of :mod:`pyql.next_steps` (``--action-mode choose`` on a
table). From the question's grounded values (:func:`pyql.grounding.ground`)
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

from pyql.errors import PyQLError
from pyql.grounding import Grounding, ground, parse_date
from pyql.next_steps import NextStep

from .numbers import format_number, parse_number
from .table import Column, Table

__all__ = ["ConditionCandidate", "answer_candidates", "condition_candidates", "header_mentions", "table_next_steps"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "are", "was", "were", "be", "been", "has", "have", "had", "what", "which", "who", "whom", "whose", "when", "where", "how", "that", "this", "it", "its", "as", "name", "tell", "me"])
#: Words between a header and its value ("Goal of 17", "Nation is Iran", "listed as August 15, 2000").
_LINK = frozenset(["of", "is", "was", "are", "were", "as", "listed", "at", "has", "have", "had", "with", "for", "equal", "equals", "to", "being", "named", "called", "a", "an", "the"])
_COMPARING = frozenset(["than", "smaller", "larger", "less", "more", "greater", "fewer", "bigger", "lower", "higher", "over", "under", "least", "most", "at"])
_AGGREGATE_OF = {"COUNT": "COUNT", "SUM": "SUM", "AVG": "AVG", "max": "MAX", "min": "MIN"}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _stems(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower())]


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
    per word. Stop words alone name nothing.

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
        best: tuple[int, int, float] | None = None
        for i in range(len(words)):
            n = 0
            while i + n < len(words) and n < len(target) and words[i + n][2] == target[n]:
                n += 1
            if n == 0 or all(words[i + k][2] in _STOP for k in range(n)):
                continue
            strength = (3.0 + n) if n == len(target) else float(n)
            if best is None or strength > best[2]:
                best = (words[i][0], words[i + n - 1][1], strength)
        if best is None:  # the header's words anywhere (not in a run)
            loose = [w for w in words if w[2] in set(target) - _STOP]
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


def _text_matches(question: str, cells: list[str]) -> list[tuple[str, int, int]]:
    out = []
    for cell in cells:
        words = cell.split()
        if not words or len(cell) > 80:
            continue
        pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
        m = re.search(pattern, question, re.IGNORECASE)
        if m is not None:
            out.append((cell, m.start(), m.end()))
    return out


def condition_candidates(table: Table, question: str, grounding: Grounding | None = None) -> list[ConditionCandidate]:
    """The conditions the question grounds on this table, strongest first (not yet checked against rows).

    Long because: the three sources of a condition (cells written in the question, its numbers and dates
    matched to cells, its comparisons) are scored together against the same header mentions.

    Example:
        >>> t = Table.from_rows(["Goal", "Result", "Competition"], [["16", "2–1", "Friendly"], ["18", "2–1", "Cup"]])
        >>> q = "Which Score has a Result of 2–1, and a Competition of friendly, and a Goal smaller than 17?"
        >>> [(t.columns[c.column].header, c.op, c.value) for c in condition_candidates(t, q)]
        [('Goal', '<', '17'), ('Competition', '=', 'Friendly'), ('Result', '=', '2–1')]
    """
    g = grounding or ground(question)
    mentions = header_mentions(table, question)
    compared = {(v.start, v.end) for _, v in g.comparisons()}
    out: list[ConditionCandidate] = []
    for col, cells in _cells(table):
        mention = mentions.get(col.index)
        for cell, start, end in _text_matches(question, cells):
            if mention and mention[0] <= start and end <= mention[1] and mention[2] >= 3:
                continue  # the header itself, not a value
            near = _near(question, mention, start, end)
            length = len(cell.strip())
            if (length < 3 and near == 0) or (start, end) in compared or cell.lower() in _STOP:
                continue
            out.append(ConditionCandidate(col.index, "=", cell, start, end, 1.0 + min(length, 20) / 5 + 2 * near))
        by_number = {parse_number(c): c for c in cells} if col.is_numeric else {}
        by_date = {}
        for c in cells:
            d = parse_date(c) if not col.is_numeric else None
            if d is not None:
                by_date[(d.first, d.last)] = c
        for v in g.values:
            near = _near(question, mention, v.start, v.end)
            if v.kind in ("number", "quantity") and (v.start, v.end) not in compared and v.value in by_number:
                out.append(ConditionCandidate(col.index, "=", by_number[v.value], v.start, v.end, 1.5 + 2 * near))
            elif v.kind == "date" and (v.value.first, v.value.last) in by_date:
                out.append(ConditionCandidate(col.index, "=", by_date[(v.value.first, v.value.last)], v.start, v.end, 3.0 + 2 * near))
    for cue, v in g.comparisons():
        if cue.op == "between" or v.kind not in ("number", "quantity", "date"):
            continue
        number = v.value if v.kind != "date" else float(v.value.first.year)
        for col in table.columns:
            if col.is_numeric:
                near = max(_near(question, mentions.get(col.index), cue.start, v.end), 0.0)
                out.append(ConditionCandidate(col.index, cue.op, format_number(number), cue.start, v.end, 2.0 + 2.5 * near))
    return _best_per_span(out)


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
    """The aggregation the cue words ask for (a cue that is a header's own word does not count)."""
    whole = [m for m in mentions.values() if m[2] >= 3]
    starts = {m[0] for m in mentions.values()}
    for cue in g.cues:
        if cue.kind not in ("aggregate", "order"):
            continue
        before_header = any(question[cue.end : s].strip() == "" for s in starts if s >= cue.end)
        if any(s <= cue.start and cue.end <= e for s, e, _ in whole) and not before_header:
            continue  # a header's own word ("Which Average ..."), unless it stands before a header ("the average Total")
        if cue.op == "SUM" and re.match(r"\s+(?:\w+\s+)?number\b", question[cue.end :], re.IGNORECASE):
            return "COUNT"  # "the total number of ...", "the total game number"
        return _AGGREGATE_OF[cue.op]
    return None


def answer_candidates(
    table: Table, question: str, *, used: Mapping[int, float] | None = None, scores: Mapping[str, float] | None = None,
    grounding: Grounding | None = None,
) -> list[tuple[int, str | None, float]]:
    """The answer columns, best first, each with its aggregation: (column index, aggregation, score).

    A column scores by how the question names it (:func:`header_mentions`; named
    earlier scores a little higher), less when a condition of the question is
    on it (``used``: column → how strongly), plus a model's score of its header
    (``scores``, header → score, weighted 0.5) when given. The aggregation
    comes from the cue words (COUNT on any column, the others on numbers).

    Example:
        >>> t = Table.from_rows(["Player", "Touchdowns", "Points"], [["A", "2", "11"]])
        >>> answer_candidates(t, "Name the least touchdowns for 11 points", used={2: 4.0})[0]
        (1, 'MIN', 7.308)
    """
    g = grounding or ground(question)
    mentions = header_mentions(table, question)
    aggregation = _aggregation(question, g, mentions)
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
        score -= min(used.get(col.index, 0.0), 4.0)
        if scores and col.header in scores:
            score += 0.5 * scores[col.header]
        agg = aggregation if aggregation == "COUNT" or (aggregation and col.is_numeric) else None
        if aggregation and agg is None:
            score -= 1.0  # the question asks for an aggregate this column cannot give
        out.append((col.index, agg, round(score, 3)))
    return sorted(out, key=lambda t: (-t[2], t[0]))


def _column_text(table: Table, index: int) -> str:
    header = table.columns[index].header
    same = [c for c in table.columns if c.header.strip().lower() == header.strip().lower()]
    return f"#{index}" if len(same) > 1 or not header.strip() else header


def _condition_action(table: Table, c: ConditionCandidate) -> str:
    return f"add_condition({_column_text(table, c.column)}, {c.op}, {c.value})"


def _checked(env: Any, candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """The candidates some row meets together with the query's conditions, not on a column already conditioned."""
    on = {s.column.index for s in env.query.conditions}
    out = []
    for c in candidates:
        if c.column in on:
            continue
        try:
            if env.executor.count(env.query.add_condition(c.column, c.op, c.value)) > 0:
                out.append(c)
        except PyQLError:  # a condition the table refuses (a bad number) is not offered
            continue
    return out


def table_next_steps(env: Any, *, scores: Mapping[str, float] | None = None, limit: int = 8) -> list[NextStep]:
    """The valid next steps of a table episode, ranked (see the module's docstring); at most ``limit``.

    Args:
        env: a :class:`~pyql_sql.environment.TableEnvironment` with its question.
        scores: a model's score of each header (higher: more about the question), or None.
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
    table, question = env.table, env.question or ""
    g = ground(question)
    candidates = condition_candidates(table, question, g)
    used: dict[int, float] = {}
    for c in candidates:
        used[c.column] = max(used.get(c.column, 0.0), c.score if c.op == "=" else c.score / 2)
    for s in env.query.conditions:
        used[s.column.index] = max(used.get(s.column.index, 0.0), 4.0)
    conditions = [NextStep(_condition_action(table, c), "constrain") for c in _checked(env, candidates) if c.score >= 2.0]
    answers = [
        NextStep(f"set_answer({_column_text(table, i)}{', ' + agg if agg else ''})", "answer")
        for i, agg, _ in answer_candidates(table, question, used=used, scores=scores, grounding=g)
    ]
    current = env.query.answer
    if current is not None:
        written = f"set_answer({_column_text(table, current.column.index)}{', ' + current.aggregation if current.aggregation else ''})"
        answers = [a for a in answers if a.action != written]
        if current.aggregation:  # the same column without its aggregation, next
            plain = f"set_answer({_column_text(table, current.column.index)})"
            answers = [NextStep(plain, "answer")] + [a for a in answers if a.action != plain]
        steps = [NextStep("execute()", "execute"), *answers[:2], *conditions]
    else:
        steps = [*conditions, *answers]
    change_steps = getattr(env, "change_steps", None)  # a writable table (pyql_sql.writable_environment)
    changes = change_steps(g) if change_steps is not None else []  # a question asking for a change: those first
    if changes:
        steps = [*changes, *[s for s in steps if s.action not in {c.action for c in changes}]]
    return steps[:limit]
