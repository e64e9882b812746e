"""The choose enumerator's change steps: ``insert_row`` / ``update_rows`` grounded in the question.

:func:`mutation_next_steps` is what a
:class:`~pyql_sql.writable_environment.WritableTableEnvironment` offers
through its ``change_steps``, which :func:`pyql_sql.next_steps.table_next_steps`
lists first. It offers
steps only when the question asks for a change: a cue word (insert, add,
record, new row, update, change, set ... to, modify) or a statement (no
question mark, no question word) that reports facts.

Values are the question's grounded spans (:func:`pyql.environment.grounding.ground`:
quoted strings, numbers, dates, capitalised spans), paired with columns by
:func:`pyql_sql.pairing.pair_values`: enumerations (``the values for Round,
Pick ... which are '33', '336' ...``), list items holding one column and one
value (``total score '290'``), a value next to a column's name (``club 'FK
Trakai'``, ``5 wins``), ``... to 'USDA'``, and the shape of the cells; each
value and each column once. An update's rows are picked by a condition
grounded against the real cells
(:func:`pyql_sql.next_steps.condition_candidates`: ``Japan`` is a cell of
``Nation``), offered as ``add_condition`` first; then ``update_rows`` with
the other pairs. An insert is one ``insert_row`` step, offered only when it
fills the row (:func:`complete`), before any condition.

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

from pyql.environment.grounding import Grounded, Grounding, ground
from pyql.environment.next_steps import NextStep

from pyql.errors import PyQLError

from .next_steps import _checked, _column_text, _condition_action, condition_candidates
from .question_match import action_value, fold
from .pairing import absent_pairs, column_cells, head_pair, last_pair, pair_values, value_text
from .table import Table

__all__ = ["asks_change", "complete", "value_pairs", "mutation_next_steps"]

_INSERT = re.compile(r"\b(insert(ed|ing)?|add(ed|ing)?|record(ed)?|new (row|record|entry))\b", re.I)
_UPDATE = re.compile(r"\b(updat(e|ed|ing)|chang(e|ed|ing)|modif(y|ied)|set .* to|now)\b", re.I)
_UPDATE_FIRST = re.compile(r"^\s*(?:please\s+)?(update|set|change|modify|alter|edit|replace|correct)\b", re.I)
_INSERT_FIRST = re.compile(r"^\s*(?:please\s+)?(insert|add)\b", re.I)
#: An update's rows written out: "where the Nationality column equals Spain", "where the value in column 'Rank' is equal to '29'".
_WHERE = re.compile(
    r"\bwhere\s+(?:the\s+)?(?:value\s+(?:in|of)\s+)?(?:(?:the\s+)?column\s+)?[`'\"]?(?P<col>[^`'\"]+?)[`'\"]?\s*(?:column\s+)?"
    r"(?:equals|(?:is|are)\s+equal\s+to|(?:is|are)\s+set\s+to|is|are|=)\s+[`'\"]?(?P<val>[^`'\"]+?)[`'\"]?\s*(?:[.;,]|\band\b|$)",
    re.I,
)
_QUESTION = re.compile(r"^\s*(what|which|who|whom|whose|when|where|why|how|name|list|give|tell|show|find|is|are|was|were|do|does|did|can|count)\b", re.I)


def asks_change(question: str) -> str | None:
    """``"insert"``, ``"update"``, ``"either"`` (a statement without a cue) or None (a question).

    Example:
        >>> asks_change("Insert a new row"), asks_change("Change the source to 'USDA'"), asks_change("How many games?")
        ('insert', 'update', None)
        >>> asks_change("Tiger Woods won in 1997 with a total of 270.")
        'either'
        >>> asks_change("For the 'Credits' table, insert a record with values for Title and Year, where Title is 'Up', Year is '2021'.")
        'insert'
        >>> asks_change("Set the Total to 40 where the Nation is Spain."), asks_change("Update the record where Year is 2021, adding a note.")
        ('update', 'update')
    """
    if _UPDATE_FIRST.match(question):
        return "update"
    where = _WHERE.search(question)
    if where is not None:  # "Set the Total column to 40 ... where the Nationality column equals Spain"
        cue = _INSERT.search(question[: where.start()])
        if cue is None or re.search(r"\b(updat|chang|modif)", question, re.I):
            return "update"
        return "insert"  # "insert a record with values for Title and Year, where Title is 'A', Year is '2021'": the values
    if _INSERT_FIRST.match(question):
        return "insert"
    if _INSERT.search(question):
        return "insert" if not re.search(r"\b(updat|chang|modif)", question, re.I) else "either"
    if _UPDATE.search(question):
        return "update"
    if question.strip().endswith("?") or _QUESTION.match(question):
        return None
    return "either"


def value_pairs(
    table: Table,
    question: str,
    g: Grounding | None = None,
    skip: frozenset[str] = frozenset(),
    exclude: frozenset[int] = frozenset(),
    *,
    resemble: bool = True,
) -> list[tuple[int, Grounded]]:
    """(column index, value) pairs of a change question (:func:`pyql_sql.pairing.pair_values`).

    ``skip``: values (lower case) that are not to be assigned (an update's
    condition values): every place the question writes one is left out.
    ``exclude``: columns not to be assigned (an update's condition columns).
    ``resemble``: whether values no column is named for are placed by the cells they resemble.

    Example:
        >>> t = Table.from_rows(["Club", "Wins", "Points"], [["A", "1", "3"]], name="Standings")
        >>> q = "Insert into 'Standings' the club 'FK Trakai' with 9 wins, and points 29."
        >>> [(t.columns[c].header, v.text) for c, v in value_pairs(t, q)]
        [('Club', "'FK Trakai'"), ('Wins', '9'), ('Points', '29')]
    """
    lower = fold(question).lower()  # "Montreal" in the question is the cell "Montréal"
    spans = [(m.start(), m.end()) for text in skip if text for m in re.finditer(rf"(?<!\w){re.escape(fold(text))}(?!\w)", lower)]  # 'Berat', not 'Beratënsis'
    return pair_values(table, question, g, skip=spans, exclude=exclude, resemble=resemble)


def _quote(text: str) -> str | None:
    """A value as the assignment text writes it (:func:`pyql_sql.mutation.split_assignments` reads it back): quoted,
    with a quote it does not hold, when it holds ';' or has quotes or spaces at its ends; None if every quote is in it.

    Example:
        >>> print(_quote("FK Trakai"), _quote("a; b"), _quote("'90s"))
        FK Trakai 'a; b' "'90s"
    """
    t = text.strip()
    if ";" in text or (t and (t[0] in "'\"`" or t[-1] in "'\"`" or t != text)):
        for q in ("'", '"', "`"):
            if q not in text:
                return f"{q}{text}{q}"
        return None
    return text


def _assignments(table: Table, pairs: list[tuple[int, Grounded]]) -> str | None:
    """``Col = value; ...`` of the pairs; None when a value cannot be written (it holds ';' and every quote)."""
    cells = column_cells(table)
    parts = []
    for c, v in pairs:
        text = _quote(value_text(v, cells[c]))
        if text is None:
            return None
        parts.append(f"{_column_text(table, c)} = {text}")
    return "; ".join(parts)


def complete(table: Table, pairs: list[tuple[int, Grounded]]) -> bool:
    """Whether an insert of these pairs fills the row: every column is given, or already has empty cells.

    AgentBench's gold inserts give every column, so a row missing a column
    the table always fills is not a row the question describes in full.

    Example:
        >>> from pyql.environment.grounding import ground
        >>> t = Table.from_rows(["A", "B"], [["1", ""], ["2", "x"]])
        >>> complete(t, [(0, ground("3").values[0])]), complete(t, [(1, ground("3").values[0])])
        (True, False)
    """
    given = {c for c, _ in pairs}
    cells = column_cells(table)
    return bool(given) and all(i in given or any(not x.strip() for x in cells[i]) for i in range(len(table.columns)))


def _where_condition(env: Any, question: str) -> NextStep | None:
    """The condition an update's ``where <column> equals <value>`` writes out, checked on the table (None when none)."""
    m = _WHERE.search(question)
    if m is None:
        return None
    try:
        column = env.table.resolve_column(m.group("col").strip())
        query = env.query.add_condition(column, "=", m.group("val").strip())
        if env.executor.count(query) == 0:
            return None
    except PyQLError:
        return None
    return NextStep(f"add_condition({_column_text(env.table, column.index)}, =, {action_value(m.group('val').strip())})", "constrain")


#: "Change the rank of <row> to 19": the column set, the row named, the value.
_OF_TO = re.compile(r"^\s*(?:change|set|update|modify)\s+the\s+(?P<col>[\w /#%()'`-]+?)\s+(?:of|for)\s+(?P<row>.+?)\s+to\s+(?:be\s+)?\S", re.I)


def _of_condition(env: Any, question: str, g: Grounding) -> NextStep | None:
    """"Change the <column> of <row> to <value>": the condition of the cell the row part names (the strongest, checked)."""
    m = _OF_TO.search(question)
    if m is None:
        return None
    try:
        env.table.resolve_column(m.group("col").strip().strip("`'"))
    except PyQLError:
        return None
    inside = [c for c in condition_candidates(env.table, question, g) if c.op == "=" and m.start("row") <= c.start and c.end <= m.end("row")]
    checked = _checked(env, sorted(inside, key=lambda c: -c.score))
    return NextStep(_condition_action(env.table, checked[0]), "constrain") if checked else None


_SET_BEFORE = re.compile(r"\b(?:to|as)\s+(?:be\s+)?['\"`]?$", re.IGNORECASE)


def _narrowing(env: Any, question: str, pairs: list[tuple[int, Grounded]]) -> NextStep | None:
    """The condition of a pair whose value some but not all of the rows kept already hold, unless the value is
    what the column is set *to*: a value the rows have names rows ("in 2009"), a new value is one they lack.

    Example:
        >>> from pyql_sql.writable_environment import WritableTableEnvironment
        >>> t = Table.from_rows(["Year", "Competition", "Notes"], [["2007", "Worlds", "2.30 m"], ["2009", "Worlds", "2.35 m"]])
        >>> q = "Change the Notes of the Worlds in 2009 to '2.40 m'."
        >>> env = WritableTableEnvironment(t, question=q)
        >>> _ = env.step("add_condition(Competition, =, Worlds)")
        >>> [s.action for s in mutation_next_steps(env)]
        ['add_condition(Year, =, 2009)']
        >>> _ = env.step("add_condition(Year, =, 2009)")
        >>> [s.action for s in mutation_next_steps(env)]
        ['update_rows(Notes = 2.40 m)']
    """
    table = env.table
    try:
        kept = env.executor.count(env.query)
    except PyQLError:
        return None
    for c, v in pairs:
        if _SET_BEFORE.search(question[: v.start]) or any(s.column.index == c for s in env.query.conditions):
            continue
        value = value_text(v, [])
        try:
            held = env.executor.count(env.query.add_condition(table.columns[c], "=", value))
        except PyQLError:
            continue
        if 0 < held < kept:
            return NextStep(f"add_condition({_column_text(table, c)}, =, {action_value(value)})", "constrain")
    return None


def _from_to(table: Table, question: str, g: Grounding, conditions: Any) -> list[tuple[int, Grounded]]:
    """"the name ... from 'John Smith' to 'Johnny Smith'": the value after *to* is the new value of the column whose
    condition holds the value after *from* (the rows are picked by the old value; the column is set to the new one).

    Example:
        >>> t = Table.from_rows(["Name", "Pick"], [["John Smith", "1"]])
        >>> q = "Modify the name from 'John Smith' to 'Johnny Smith'."
        >>> [(t.headers[c], v.text) for c, v in _from_to(t, q, ground(q), t.query().add_condition("Name", "=", "John Smith").conditions)]
        [('Name', "'Johnny Smith'")]
    """
    values = [v for v in g.values if v.kind in ("quoted", "span", "number", "date", "quantity")]
    out: list[tuple[int, Grounded]] = []
    for step in conditions:
        old = re.escape(str(step.value).strip())
        ends = [m.end() for m in re.finditer(rf"\bfrom\s+[`'\"]?{old}[`'\"]?\s+to\s+(?:be\s+)?", question, re.IGNORECASE)]
        if step.column.index < len(table.columns):  # "... where Notes are '-' and change ... Notes to 'Video'": the column set again
            header = re.escape(step.column.header)
            ends += [m.end() for m in re.finditer(rf"[`'\"]?\b{header}[`'\"]?\s+to\s+(?:be\s+)?", question, re.IGNORECASE)
                     if not re.match(rf"[`'\"]?{old}[`'\"]?(?!\w)", question[m.end() :], re.IGNORECASE)]
        for end in ends:
            new = [v for v in values if v.start == end]
            if new and step.column.index < len(table.columns) and step.column.index not in {c for c, _ in out}:
                out.append((step.column.index, max(new, key=lambda v: v.end - v.start)))
    return out


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
    if env.query.conditions and kind == "insert":  # a read, not a change
        return []
    if env.query.conditions:  # the rows to change are picked: the update itself
        on = frozenset(s.column.index for s in env.query.conditions)
        skip = frozenset(str(s.value).strip().lower() for s in env.query.conditions)
        moved = _from_to(table, question, g, env.query.conditions)
        taken = {(v.start, v.end) for _, v in moved}
        rest = [(c, v) for c, v in value_pairs(table, question, g, skip, exclude=on) if (v.start, v.end) not in taken]
        narrower = _narrowing(env, question, rest)
        if narrower is not None:  # "... of the World Championships in 2009 to '2.40 m'": 2009 picks rows too
            return [narrower]
        text = _assignments(table, sorted([*moved, *rest], key=lambda p: p[1].start))
        return [NextStep(f"update_rows({text})", "execute")] if text else []
    where = _where_condition(env, question) or _of_condition(env, question, g)
    if where is not None:  # the rows written out: that condition first
        return [where]
    pairs = value_pairs(table, question, g)
    named = value_pairs(table, question, g, resemble=False)  # a value placed by its cells may well pick the rows
    if kind == "update" and len({c for c, _ in named}) == len(table.columns) > 1:
        kind = "either"  # "should be updated with the following data: Year: 1998, Stage: 20, ...": every column, a whole row
    steps: list[NextStep] = []
    if kind in ("update", "either"):  # not on a column the question assigns another value to
        conditions = [
            c for c in condition_candidates(table, question, g)
            if c.op == "=" and (all(col != c.column or (v.start <= c.start and c.end <= v.end) for col, v in named)
                                or re.search(r"\bfrom\s+['\"`]?$", question[: c.start]))  # "from 'A' to 'B'": A picks the rows
            and not re.search(r"\bto\s+(?:be\s+)?['\"`]?$", question[: c.start])  # "... to 11": a value set, not a row picked
        ]
        spans = [(v.start, v.end) for _, v in named]  # a quoted value's span holds its cell's
        owner = lambda c: not re.match(r"['’]s\b", question[c.end : c.end + 3])  # noqa: E731 - "Anthony Davis's height": his row
        after_for = lambda c: not re.search(r"\bfor\s+(?:the\s+)?['\"`]?$", question[: c.start])  # noqa: E731 - "... for County Kildare": the row
        conditions.sort(key=lambda c: (any(s <= c.start and c.end <= e for s, e in spans), owner(c), after_for(c)))  # a span that is no assigned value first, an owner first
        steps += [NextStep(_condition_action(table, c), "constrain") for c in _checked(env, conditions)[:limit]]
    if kind in ("insert", "either") and not complete(table, pairs):
        pairs = [*pairs, *absent_pairs(table, question, pairs, g)]  # "with no additional notes": the column's mark for none
        head = head_pair(table, question, pairs, g) if not complete(table, pairs) else None
        pairs = [*pairs, head] if head is not None else pairs  # "Insert 'Lambeau Field' into ...": the row's name
        if not complete(table, pairs) and (last := last_pair(table, question, pairs, g)) is not None:
            pairs = [*pairs, last]  # the one value left names the one column left
    text = _assignments(table, pairs) if kind in ("insert", "either") and complete(table, pairs) else None
    if text:  # a whole row: before the update's conditions, which a statement of new facts does not pick
        steps.insert(0, NextStep(f"insert_row({text})", "execute"))
    return steps
