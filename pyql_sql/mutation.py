"""Table mutations: INSERT and UPDATE steps on a writable copy of a table, and the table's state.

A :class:`TableState` is a writable in-memory SQLite copy of a table: one
table with the real headers as columns, every column TEXT (as AgentBench's
dbbench builds its MySQL tables), holding each cell as the table shows it.
It is always a copy: the user's file and the sealed connection of a
:class:`~pyql_sql.table.Table` are never written.

Steps:

``insert(assignments)``
    one row; the columns not given are NULL.
``update(assignments, conditions)``
    the rows meeting every condition get the new values. The conditions
    are those of the read side (:class:`~pyql_sql.steps.ConditionStep`):
    text compared case- and space-insensitively, numbers written as text
    (``1,174``) compared as numbers. An update without a condition is refused
    unless ``all_rows=True``.

Each statement is built with sqlglot, its values bound as parameters (the
display SQL shows them as sqlglot literals), and returns a
:class:`MutationResult`: rows affected and the rows as they now are.

Assignments come from :func:`parse_assignments` (``Club = FK Trakai; Points =
29``, or the values alone in column order) or are built directly as
:class:`Assignment`. A value that does not fit is a
:class:`~pyql_sql.errors.MutationTypeError` (not a scalar, or no digit at all
for a column whose cells are all numbers); a row by position with the wrong
number of values is a :class:`~pyql_sql.errors.MutationArityError`; an
unknown column is the table's :class:`~pyql_sql.errors.UnknownColumnError`.

:meth:`TableState.fingerprint` is AgentBench's table hash: the first five hex
digits of ``MD5(CONCAT_WS(',', cells))`` of each row (NULL cells left out),
sorted, joined with commas, MD5 of that. Row order does not matter.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Nation", "Total"], [["Japan", "22.1"], ["Russia", "22.950"]], name="Scores")
    >>> state = TableState.of_table(t)
    >>> print(state.update(parse_assignments(t, "Total = 22.950"), t.query().add_condition("Nation", "=", "japan").conditions))
    1 row updated: {'Nation': 'Japan', 'Total': '22.950'}
    >>> print(state.insert(parse_assignments(t, "Nation = Peru; Total = 1,174")))
    1 row inserted: {'Nation': 'Peru', 'Total': '1,174'}
    >>> state.statements[0]
    'UPDATE "Scores" SET "Total" = \\'22.950\\' WHERE LOWER(TRIM("Nation")) = LOWER(TRIM(\\'japan\\'))'
    >>> len(state.fingerprint())
    32
"""

from __future__ import annotations

import bisect
import hashlib
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from .compile import literal, words_contain
from .errors import MutationArityError, MutationError, MutationTypeError, SQLExecutionError
from .numbers import parse_number
from .parts import install as install_parts
from .steps import ConditionStep
from .tabledata import Column, TableData

__all__ = [
    "Assignment",
    "MutationResult",
    "TableState",
    "parse_assignments",
    "split_assignments",
    "state_fingerprint",
]

_NUM_FN = "pyql_number"


@dataclass(frozen=True)
class Assignment:
    """One ``column = value`` of an INSERT or UPDATE.

    Attributes:
        column: the table's column.
        value: the cell text to store (numbers are stored as their text).
    """

    column: Column
    value: str


@dataclass(frozen=True)
class MutationResult:
    """What one INSERT/UPDATE did.

    Attributes:
        kind: ``"insert"`` or ``"update"``.
        count: rows affected.
        rows: the affected rows as they now are (header → cell), at most ``shown``.
        sql: the statement, values as literals.
    """

    kind: str
    count: int
    rows: tuple[dict[str, Any], ...]
    sql: str

    def __str__(self) -> str:
        verb = "inserted" if self.kind == "insert" else "updated"
        noun = "row" if self.count == 1 else "rows"
        if self.count == 0:
            return "0 rows match the conditions: nothing was updated"
        shown = "; ".join(str(r) for r in self.rows)
        more = f" (first {len(self.rows)})" if len(self.rows) < self.count else ""
        return f"{self.count} {noun} {verb}{more}: {shown}"


def _cell(value: object, column: Column) -> str:
    """A value as the cell text to store; a value that is no scalar, or no number for a column of numbers, is refused."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise MutationTypeError(
            f"The value for column {column.header!r} is a {type(value).__name__}; give text or a number."
        )
    text = value if isinstance(value, str) else (str(int(value)) if float(value).is_integer() else repr(value))
    if column.type == "real" and text.strip() and not re.search(r"\d", text):
        raise MutationTypeError(
            f"Column {column.header!r} holds numbers, and {text!r} has no number in it. "
            f"Give a number for {column.header!r}, or put {text!r} in the column it belongs to."
        )
    return text


def _unquote(text: str) -> str:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"`":
        return t[1:-1]
    return t


_QUOTES = "'\"`"
#: a quote that may close a quoted field: followed by spaces, then ';', '=' or the end
_CLOSER = re.compile(r"""(['"`])(?=\s*(?:[;=]|\Z))""")


def split_assignments(text: str) -> list[list[str]]:
    """``Col = value; Col = value`` cut at each ``;`` and each part at its first ``=``, never inside a quoted field.

    A quote (``'``, ``"`` or a backtick) that starts a field (a column or a
    value, spaces aside) quotes it up to the same quote followed by ``;``,
    ``=`` or the end: ``Nation = "a; b"`` is one value, ``a; b``. A quote
    inside a value, or one that never closes so, is text as written. Parts
    holding only spaces are left out; the fields keep their spaces and quotes
    (:func:`parse_assignments` removes them).

    Example:
        >>> split_assignments('Nation = "a; b"; Total = 3')
        [['Nation ', ' "a; b"'], [' Total ', ' 3']]
        >>> split_assignments("Name = O'Brien; Note = 'x = y'")
        [['Name ', " O'Brien"], [' Note ', " 'x = y'"]]
        >>> split_assignments("'a; b'; 3;")
        [["'a; b'"], [' 3']]
    """
    closers: dict[str, list[int]] = {q: [] for q in _QUOTES}  # each quote's closing places, found once: linear
    for m in _CLOSER.finditer(text):
        closers[m.group(1)].append(m.start())
    parts: list[list[str]] = []
    fields: list[str] = []
    start = i = 0
    opening = True  # the next character that is no space starts a field
    while i < len(text):
        ch = text[i]
        k = bisect.bisect_right(closers[ch], i) if opening and ch in _QUOTES else -1
        if 0 <= k < len(closers[ch]):  # the field is quoted up to the next place its quote may close
            i, opening = closers[ch][k] + 1, False
            continue
        if ch == ";" or (ch == "=" and not fields):
            fields.append(text[start:i])
            if ch == ";":
                parts.append(fields)
                fields = []
            start, opening = i + 1, True
        elif not ch.isspace():
            opening = False
        i += 1
    parts.append([*fields, text[start:]])
    return [p for p in parts if "=".join(p).strip()]


def parse_assignments(table: TableData, text: str | Mapping[str, object]) -> tuple[Assignment, ...]:
    """Assignments from ``Col = value; Col2 = value`` (or a mapping), or values alone in column order.

    Values may be quoted (one layer of matching quotes is removed); ``;``
    separates the pairs, so values may contain commas, and a quoted value may
    hold ``;`` and ``=`` too (:func:`split_assignments`). Values alone (no
    ``=``) must be one per column.

    Raises:
        UnknownColumnError: a column that is not in the table.
        MutationArityError: values by position, not one per column.
        MutationTypeError: a value that does not fit its column.
        MutationError: empty text, a column given twice.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Player", "Year(s) won"], [["Ann", "2003"]])
        >>> [(a.column.header, a.value) for a in parse_assignments(t, "player = 'Bernhard Langer'; Year(s) won = 1985, 1993")]
        [('Player', 'Bernhard Langer'), ('Year(s) won', '1985, 1993')]
        >>> [a.value for a in parse_assignments(t, 'Player = "Ann; Bob"; Year(s) won = 2003')]
        ['Ann; Bob', '2003']
        >>> parse_assignments(t, "Bob")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.MutationArityError: The table has 2 columns ('Player', 'Year(s) won'); got 1 value by position. Give one value per column, or name them: Player = ...; Year(s) won = ...
    """
    if isinstance(text, Mapping):
        pairs = [(str(k), v) for k, v in text.items()]
    else:
        parts = split_assignments(text or "")
        if not parts:
            raise MutationError("No values given: write them as Column = value; Column = value.")
        if all(len(p) == 1 for p in parts):
            return _positional(table, [_unquote(p[0]) for p in parts])
        pairs = []
        for part in parts:
            if len(part) == 1:
                raise MutationError(
                    f"{part[0].strip()!r} has no '=': write each value as Column = value, separated by ';' "
                    "(quote a value that holds ';' or '=': Column = \"a; b\")."
                )
            pairs.append((_unquote(part[0]), _unquote(part[1])))
    out: list[Assignment] = []
    for name, value in pairs:
        column = table.resolve_column(name)
        if any(a.column.index == column.index for a in out):
            raise MutationError(f"Column {column.header!r} is given twice; give each column once.")
        out.append(Assignment(column, _cell(value, column)))
    return tuple(out)


def _positional(table: TableData, values: Sequence[str]) -> tuple[Assignment, ...]:
    if len(values) != len(table.columns):
        names = ", ".join(repr(h) for h in table.headers)
        hint = "; ".join(f"{h} = ..." for h in table.headers[:3])
        raise MutationArityError(
            f"The table has {len(table.columns)} columns ({names}); got {len(values)} "
            f"value{'s' if len(values) != 1 else ''} by position. Give one value per column, or name them: {hint}"
        )
    return tuple(Assignment(c, _cell(v, c)) for c, v in zip(table.columns, values))


def state_fingerprint(rows: Iterable[Sequence[object]]) -> str:
    """AgentBench's dbbench table hash of some rows (order-insensitive; NULL cells left out).

    Example:
        >>> state_fingerprint([("a", "1"), ("b", None)]) == state_fingerprint([("b", None), ("a", "1")])
        True
        >>> state_fingerprint([("a", "1")]) == state_fingerprint([("a", "2")])
        False
    """
    hashes = sorted(
        hashlib.md5(",".join(str(v) for v in row if v is not None).encode("utf-8")).hexdigest()[:5] for row in rows
    )
    return hashlib.md5(",".join(hashes).encode("utf-8")).hexdigest()


def _number(value: object) -> float | None:
    return parse_number(value)


def _quoted(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


class TableState:
    """A writable in-memory copy of a table (every column TEXT), changed by INSERT/UPDATE steps.

    Args:
        name: the table's name.
        headers: its headers (the copy's column names).
        rows: its cells (converted to text; None stays NULL).
        columns: the :class:`~pyql_sql.tabledata.Column` of each header (their types
            check values), or None to take every column as text.
        shown: rows an observation shows at most.

    Attributes:
        statements: the statements run so far, values as literals.
    """

    def __init__(
        self,
        name: str,
        headers: Sequence[str],
        rows: Iterable[Sequence[object]],
        columns: Sequence[Column] | None = None,
        shown: int = 5,
    ) -> None:
        self.name = name
        self.headers = tuple(str(h) for h in headers)
        self.columns = tuple(columns) if columns is not None else tuple(
            Column(i, h, "text", f"c{i}", None) for i, h in enumerate(self.headers)
        )
        self.shown = shown
        self.statements: list[str] = []
        self.conn = sqlite3.connect(":memory:")
        install_parts(self.conn)  # pyql_words, for a contains condition
        self.conn.create_function(_NUM_FN, 1, _number, deterministic=True)  # this module's reading of a number
        cols = [exp.ColumnDef(this=_quoted(h), kind=exp.DataType.build("TEXT")) for h in self.headers]
        create = exp.Create(this=exp.Schema(this=exp.table_(name, quoted=True), expressions=cols), kind="TABLE")
        self.conn.execute(create.sql("sqlite"))
        holes = ", ".join("?" for _ in self.headers)
        insert = exp.insert(f"VALUES ({holes})" if holes else "DEFAULT VALUES", exp.table_(name, quoted=True)).sql("sqlite")
        self.conn.executemany(insert, [[None if v is None else str(v) for v in row] for row in rows])

    @classmethod
    def of_table(cls, table: TableData, shown: int = 5) -> TableState:
        """A copy of a table's cells as the table shows them.

        Example:
            >>> from pyql_sql import Table
            >>> TableState.of_table(Table.from_rows(["a"], [["1,174"]])).rows()
            [('1,174',)]
        """
        cells = ", ".join(f'"{c.text_sql}"' for c in table.columns)
        rows = table.connection.execute(f'SELECT {cells} FROM "{table.sql_name}"').fetchall()
        return cls(table.name, table.headers, rows, columns=table.columns, shown=shown)

    @classmethod
    def from_dbbench(cls, item: Mapping[str, Any]) -> TableState:
        """The table of an AgentBench dbbench item, as AgentBench builds it (every cell as text).

        Example:
            >>> s = TableState.from_dbbench({"table": {"table_name": "T", "table_info": {
            ...     "columns": [{"name": "a", "type": "TEXT"}], "rows": [[1], ["x"]]}}})
            >>> s.rows()
            [('1',), ('x',)]
        """
        table = item["table"]
        info = table["table_info"]
        headers = [c["name"] for c in info["columns"]]
        return cls(str(table["table_name"]), headers, [[str(v) for v in row] for row in info["rows"]])

    def copy(self) -> TableState:
        """A copy with its own in-memory database (the rows read and written again, in their order): a change to one
        never shows in the other.

        Example:
            >>> s = TableState("T", ["a"], [["1"]])
            >>> twin = s.copy()
            >>> _ = twin.run_sql("UPDATE T SET a = '2'")
            >>> s.rows(), twin.rows(), s.statements, len(twin.statements)
            ([('1',)], [('2',)], [], 1)
        """
        twin = TableState(self.name, self.headers, self.rows(), columns=self.columns, shown=self.shown)
        twin.statements = list(self.statements)
        return twin

    def rows(self) -> list[tuple[Any, ...]]:
        """Every row, in storage order."""
        cols = ", ".join(_quoted(h).sql("sqlite") for h in self.headers)
        return self.conn.execute(f"SELECT {cols} FROM {exp.table_(self.name, quoted=True).sql('sqlite')}").fetchall()

    def fingerprint(self) -> str:
        """The table's state as AgentBench hashes it (:func:`state_fingerprint`)."""
        return state_fingerprint(self.rows())

    def insert(self, assignments: Sequence[Assignment]) -> MutationResult:
        """Insert one row (the columns not assigned are NULL); see the module's example.

        Raises:
            MutationError: no assignment.
        """
        if not assignments:
            raise MutationError("insert_row needs at least one value: Column = value; Column = value.")
        table = exp.Schema(this=exp.table_(self.name, quoted=True), expressions=[_quoted(a.column.header) for a in assignments])
        values = exp.values([tuple(exp.Placeholder() for _ in assignments)])
        statement = exp.Insert(this=table, expression=values)
        params = [a.value for a in assignments]
        cur = self._run(statement, params)
        rows = self._rows_where(f"rowid = {int(cur.lastrowid or 0)}", [])
        return MutationResult("insert", cur.rowcount, tuple(rows), self.statements[-1])

    def update(
        self, assignments: Sequence[Assignment], conditions: Sequence[ConditionStep], *, all_rows: bool = False
    ) -> MutationResult:
        """Set the assigned columns of the rows meeting every condition; see the module's example.

        Raises:
            MutationError: no assignment, or no condition without ``all_rows``.
        """
        if not assignments:
            raise MutationError("update_rows needs at least one value: Column = value; Column = value.")
        if not conditions and not all_rows:
            raise MutationError(
                "update_rows changes the rows that meet the conditions, and there are none: "
                "add_condition(column, =, value) first to pick the rows to change."
            )
        where, where_params = self._where(conditions)
        matched = [r[0] for r in self.conn.execute(f"SELECT rowid FROM {self._table_sql()} WHERE {where.sql('sqlite')}", where_params)]
        sets = [exp.EQ(this=exp.column(_quoted(a.column.header)), expression=exp.Placeholder()) for a in assignments]
        statement = exp.Update(this=exp.table_(self.name, quoted=True), expressions=sets, where=exp.Where(this=where))
        cur = self._run(statement, [a.value for a in assignments] + where_params)
        ids = ", ".join(str(int(i)) for i in matched[: self.shown]) or "NULL"
        return MutationResult("update", cur.rowcount, tuple(self._rows_where(f"rowid IN ({ids})", [])), self.statements[-1])

    def run_sql(self, sql: str, dialect: str = "mysql") -> int:
        """Run one statement written in ``dialect`` (a gold INSERT/UPDATE), read by sqlglot; rows affected.

        Raises:
            SQLExecutionError: the statement does not parse or SQLite rejects it.

        Example:
            >>> s = TableState("T", ["a b"], [["1"]])
            >>> s.run_sql("UPDATE T SET `a b` = '2' WHERE `a b` = '1'"), s.rows()
            (1, [('2',)])
        """
        try:
            statements = [e for e in sqlglot.parse(sql, read=dialect) if e is not None]
            if len(statements) != 1:
                raise SQLExecutionError(f"Expected one statement, got {len(statements)}: {sql!r}.", sql=sql)
            text = statements[0].sql("sqlite")
            cur = self.conn.execute(text)
        except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as exc:
            raise SQLExecutionError(f"The statement does not parse as {dialect} SQL ({exc}): {sql!r}.", sql=sql) from None
        except sqlite3.Error as exc:
            raise SQLExecutionError(f"SQLite rejected the statement ({exc}): {sql!r}.", sql=sql) from None
        self.statements.append(text)
        return cur.rowcount

    # -- helpers ----------------------------------------------------------------------
    def _table_sql(self) -> str:
        return exp.table_(self.name, quoted=True).sql("sqlite")

    def _run(self, statement: exp.Expression, params: Sequence[object]) -> sqlite3.Cursor:
        try:
            cur = self.conn.execute(statement.sql("sqlite"), list(params))
        except sqlite3.Error as exc:
            raise SQLExecutionError(f"SQLite rejected the statement: {exc}.", sql=statement.sql("sqlite"), params=params) from None
        shown = statement.copy()
        values = iter(params)
        shown = shown.transform(lambda node: literal(next(values)) if isinstance(node, exp.Placeholder) else node)
        self.statements.append(shown.sql("sqlite"))
        return cur

    def _rows_where(self, where: str, params: Sequence[object]) -> list[dict[str, Any]]:
        cols = ", ".join(_quoted(h).sql("sqlite") for h in self.headers)
        found = self.conn.execute(f"SELECT {cols} FROM {self._table_sql()} WHERE {where} LIMIT {int(self.shown)}", list(params))
        return [dict(zip(self.headers, row)) for row in found]

    def _where(self, conditions: Sequence[ConditionStep]) -> tuple[exp.Expression, list[object]]:
        """The WHERE of an update: text equality case- and space-insensitive, numbers as numbers, ``contains`` by words."""
        parts: list[exp.Expression] = []
        params: list[object] = []
        for step in conditions:
            col = exp.column(_quoted(self.headers[step.column.index]))
            if step.op == "contains":
                parts.append(words_contain(col, exp.Placeholder()))
                params.append(str(step.value))
                continue
            number = parse_number(step.value)
            if step.op in ("=", "!=") and (number is None or step.column.type != "real"):
                lower = exp.Lower(this=exp.Trim(this=col))
                cmp: exp.Expression = exp.EQ(this=lower, expression=exp.Lower(this=exp.Trim(this=exp.Placeholder())))
                parts.append(exp.Not(this=cmp) if step.op == "!=" else cmp)
                params.append(str(step.value))
                continue
            if number is None:
                raise MutationTypeError(f"The condition {step.action()} compares with {step.value!r}, which is not a number.")
            ops = {"=": exp.EQ, "!=": exp.NEQ, "<": exp.LT, ">": exp.GT, "<=": exp.LTE, ">=": exp.GTE}
            parts.append(ops[step.op](this=exp.Anonymous(this=_NUM_FN, expressions=[col]), expression=exp.Placeholder()))
            params.append(number)
        where = parts[0] if parts else exp.true()
        for p in parts[1:]:
            where = exp.And(this=where, expression=p)
        return where, params
