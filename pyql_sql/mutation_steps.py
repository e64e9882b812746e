"""The choose enumerator's change steps: ``insert_row`` / ``update_rows`` grounded in the question.

:func:`mutation_next_steps` is what a
:class:`~pyql_sql.writable_environment.WritableTableEnvironment` offers
through its ``change_steps``, which :func:`pyql_sql.next_steps.table_next_steps`
lists first. It offers
steps only when the question asks for a change: a cue word (insert, add,
record, new row, update, change, set ... to, modify) or a statement (no
question mark, no question word) that reports facts.

Values are the question's grounded spans (:func:`pyql.grounding.ground`:
quoted strings, numbers, dates, capitalised spans). A value goes to the
column named next to it: after the header (``club 'FK Trakai'``, ``Episode #
as 'S4'``, ``for column 'Rank' is '7'``) or just before it (``5 wins``,
``7 matches played``); each value and each column once, the closest pairs
first. An update's rows are picked by a condition grounded against the real
cells (:func:`pyql_sql.next_steps.condition_candidates`: ``Japan`` is a cell
of ``Nation``), offered as ``add_condition`` first; then ``update_rows`` with
the other pairs. An insert is offered as one ``insert_row`` step.

Example:
    >>> from pyql_sql.table import Table
    >>> from pyql_sql.writable_environment import WritableTableEnvironment
    >>> t = Table.from_rows(["Nation", "E Score", "Total"], [["Japan", "7.1", "22.1"], ["Peru", "7.0", "21.0"]])
    >>> env = WritableTableEnvironment(t, question="The score table for Japan has been updated with an E Score of 7.400 and a total of 22.950.")
    >>> [s.action for s in mutation_next_steps(env)]
    ['add_condition(Nation, =, Japan)']
    >>> _ = env.step("add_condition(Nation, =, Japan)")
    >>> [s.action for s in mutation_next_steps(env)]
    ['update_rows(E Score = 7.400; Total = 22.950)']
"""

from __future__ import annotations

import re
from typing import Any

from pyql.grounding import Grounded, Grounding, ground
from pyql.next_steps import NextStep

from .next_steps import _checked, _column_text, _condition_action, condition_candidates, header_mentions
from .table import Table

__all__ = ["asks_change", "value_pairs", "mutation_next_steps"]

_INSERT = re.compile(r"\b(insert(ed)?|add(ed)?|record(ed)?|new (row|record|entry))\b", re.I)
_UPDATE = re.compile(r"\b(updat(e|ed|ing)|chang(e|ed|ing)|modif(y|ied)|set .* to|now)\b", re.I)
_QUESTION = re.compile(r"^\s*(what|which|who|whom|whose|when|where|why|how|name|list|give|tell|show|find|is|are|was|were|do|does|did|can|count)\b", re.I)
_CONNECT = {"of", "as", "is", "to", "be", "the", "with", "an", "a", "for", "column", "value", "values", "at", "was", "being", "set", "equal", "its", "and", "=", ":"}


def asks_change(question: str) -> str | None:
    """``"insert"``, ``"update"``, ``"either"`` (a statement without a cue) or None (a question).

    Example:
        >>> asks_change("Insert a new row"), asks_change("Change the source to 'USDA'"), asks_change("How many games?")
        ('insert', 'update', None)
        >>> asks_change("Tiger Woods won in 1997 with a total of 270.")
        'either'
    """
    if _INSERT.search(question):
        return "insert" if not re.search(r"\b(updat|chang|modif)", question, re.I) else "either"
    if _UPDATE.search(question):
        return "update"
    if question.strip().endswith("?") or _QUESTION.match(question):
        return None
    return "either"


def _values(g: Grounding, table: Table) -> list[Grounded]:
    """The question's values, one per span (a quoted string over what it holds, a number over a date); not the table's name."""
    out: list[Grounded] = []
    names = {table.name.strip().lower(), *(h.strip().lower() for h in table.headers)}
    rank = {"quoted": 0, "number": 1, "quantity": 1, "date": 2, "span": 3}
    for v in sorted(g.values, key=lambda v: (v.start, rank.get(v.kind, 4))):
        text = str(v.value) if v.kind == "quoted" else v.text
        if text.strip().lower() in names:  # the table's name or a header, not a value
            continue
        if any(o.start <= v.start and v.end <= o.end for o in out):
            continue
        out.append(v)
    return out


def _gap(question: str, start: int, end: int) -> int | None:
    """Words between two spans when they are all connectors (None otherwise, or when there are more than four)."""
    between = question[start:end]
    if re.search(r"[,;.!?]\s", between + " "):  # a clause ends between them
        return None
    words = re.findall(r"[\w#'=:]+", between.replace("'", " "))
    if len(words) > 4 or any(w.lower() not in _CONNECT for w in words):
        return None
    return len(words)


def value_pairs(
    table: Table, question: str, g: Grounding | None = None, skip: frozenset[str] = frozenset()
) -> list[tuple[int, Grounded]]:
    """(column index, value) pairs: a value next to the column's name in the question, closest pairs first.

    ``skip``: values (lower case) that are not to be assigned (an update's condition values).

    Example:
        >>> t = Table.from_rows(["Club", "Wins", "Points"], [["A", "1", "3"]], name="Standings")
        >>> q = "Insert into 'Standings' the club 'FK Trakai' with 9 wins, and points 29."
        >>> [(t.columns[c].header, v.text) for c, v in value_pairs(t, q)]
        [('Club', "'FK Trakai'"), ('Wins', '9'), ('Points', '29')]
    """
    g = g or ground(question)
    mentions = {i: m for i, m in header_mentions(table, question).items() if m[2] >= 1}
    scored: list[tuple[float, int, Grounded]] = []
    values = [v for v in _values(g, table) if _text(v).strip().lower() not in skip]
    for v in values:
        for col, (start, end, strength) in mentions.items():
            if start <= v.start and v.end <= end:
                continue  # the header itself
            after = _gap(question, end, v.start) if v.start >= end else None
            before = _gap(question, v.end, start) if v.end <= start else None
            best = min((x for x in (after, None if before is None else before + 0.5) if x is not None), default=None)
            if best is not None:
                scored.append((best - strength / 10, col, v))
    pairs: list[tuple[int, Grounded]] = []
    for _, col, v in sorted(scored, key=lambda s: s[0]):
        if all(c != col and (u.start, u.end) != (v.start, v.end) for c, u in pairs):
            pairs.append((col, v))
    pairs += _set_to(question, mentions, pairs, values)
    return sorted(pairs, key=lambda p: p[1].start)


def _set_to(
    question: str, mentions: dict[int, tuple[int, int, float]], pairs: list[tuple[int, Grounded]], values: list[Grounded]
) -> list[tuple[int, Grounded]]:
    """``change the source ... to 'USDA'``: a value right after "to" goes to the last column named before it, if both are free."""
    out: list[tuple[int, Grounded]] = []
    used_cols = {c for c, _ in pairs}
    used_spans = {(v.start, v.end) for _, v in pairs}
    for v in values:
        if (v.start, v.end) in used_spans or not re.search(r"\bto\s*$", question[: v.start]):
            continue
        before = [(m[1], c) for c, m in mentions.items() if m[1] <= v.start and c not in used_cols]
        if before:
            col = max(before)[1]
            out.append((col, v))
            used_cols.add(col)
    return out


def _text(v: Grounded) -> str:
    return str(v.value) if v.kind == "quoted" else v.text


def _assignments(table: Table, pairs: list[tuple[int, Grounded]]) -> str:
    return "; ".join(f"{_column_text(table, c)} = {_text(v)}" for c, v in pairs)


def mutation_next_steps(env: Any, g: Grounding | None = None, *, limit: int = 3) -> list[NextStep]:
    """The change steps to offer now (see the module's docstring); [] when the question asks for none.

    Args:
        env: a table environment; only a writable one (it has ``insert_row``) gets steps.
        g: the question's grounding, if already made.
        limit: the most condition steps offered for an update.
    """
    if "insert_row" not in env.actions.names:
        return []
    table, question = env.table, env.question or ""
    kind = asks_change(question)
    if kind is None:
        return []
    g = g or ground(question)
    if env.query.conditions:  # the rows to change are picked: the update itself
        on = {s.column.index for s in env.query.conditions}
        skip = frozenset(str(s.value).strip().lower() for s in env.query.conditions)
        rest = [(c, v) for c, v in value_pairs(table, question, g, skip) if c not in on]
        return [NextStep(f"update_rows({_assignments(table, rest)})", "execute")] if rest else []
    pairs = value_pairs(table, question, g)
    steps: list[NextStep] = []
    if kind in ("update", "either"):  # not on a column the question assigns another value to
        conditions = [
            c for c in condition_candidates(table, question, g)
            if c.op == "=" and all(col != c.column or (v.start, v.end) == (c.start, c.end) for col, v in pairs)
        ]
        spans = {(v.start, v.end) for _, v in pairs}
        conditions.sort(key=lambda c: (c.start, c.end) in spans)  # a span that is no assigned value first
        steps += [NextStep(_condition_action(table, c), "constrain") for c in _checked(env, conditions)[:limit]]
    if kind in ("insert", "either") and pairs:
        steps.append(NextStep(f"insert_row({_assignments(table, pairs)})", "execute"))
    return steps
