"""Run queries on a table: read-only, with a timeout.

:class:`Executor` holds the tools of QueryAgent's Table 10 (SQL version) that
*interact* with the database without adding clauses: ``execute()`` and
``get_column(column)``; plus :meth:`Executor.rows` (the rows a query keeps,
for observations) and :meth:`Executor.execute_sql` (any SQL text, e.g.
written by an agent — it still cannot change anything: the connection is
sealed, see :mod:`pyql_sql.readonly`).

Every statement runs under a deadline enforced by SQLite's progress handler;
when it passes, SQLite aborts the statement and :class:`~pyql_sql.errors.SQLTimeout`
is raised.

Answers are shaped like the SPARQL side: :class:`Answer` with ``value`` and
``label`` (tables have no labels, so ``label`` is None); ``to_dict()`` gives
``{"value": ..., "label": None}``. Values are the cells as the table shows
them; numeric aggregations give numbers.

Layering (see :mod:`pyql_sql.tabledata`): this module builds on the table
data (:mod:`pyql_sql.tabledata`) and the query (:mod:`pyql_sql.query`, whose
``sql_with_params()`` and ``expression()`` give the SQL to run). It does not
import :mod:`pyql_sql.table`; :class:`~pyql_sql.table.Table` imports this
module for ``Table.executor()`` and ``Table.get_column()``.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Date", "Attendance", "Record"],
    ...                     [["May 20", "32,502", "15-28"], ["May 21", "32,152", "16-28"]])
    >>> ex = Executor(t)
    >>> q = t.query().add_condition("Record", "=", "15-28").set_answer("Attendance", "MAX")
    >>> [a.to_dict() for a in ex.execute(q)]
    [{'value': 32502.0, 'label': None}]
    >>> ex.execute(q.set_answer("Attendance"))[0].value
    '32,502'
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from pyql.echo import inline

from .errors import (
    IncompleteQueryError,
    ReadOnlyError,
    SQLExecutionError,
    SQLQueryError,
    SQLTimeout,
)
from .compile import group_listing, row_filter, text_of
from .query import TableQuery
from .readonly import ReadOnlyGuard
from .steps import DerivedColumn
from .tabledata import Column, TableData

__all__ = ["Answer", "ColumnValues", "Rows", "Executor"]


@dataclass(frozen=True)
class Answer:
    """One answer value, shaped like the SPARQL side's answers.

    Example:
        >>> Answer("March 19, 1998").to_dict()
        {'value': 'March 19, 1998', 'label': None}
    """

    value: Any
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"value": ..., "label": ...}``."""
        return {"value": self.value, "label": self.label}


@dataclass(frozen=True)
class ColumnValues:
    """The observation returned by ``get_column``.

    Attributes:
        column: the header.
        type: ``'real'`` or ``'text'``.
        values: distinct values, most frequent first (ties: first seen first), capped.
        distinct_count: number of distinct values in all (NULL counts as one).
        row_count: number of rows considered.
    """

    column: str
    type: str
    values: list[Any]
    distinct_count: int
    row_count: int

    @property
    def truncated(self) -> bool:
        """True when :attr:`values` does not list every distinct value."""
        return len(self.values) < self.distinct_count

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON)."""
        return {
            "column": self.column,
            "type": self.type,
            "values": list(self.values),
            "distinct_count": self.distinct_count,
            "row_count": self.row_count,
            "truncated": self.truncated,
        }

    def __str__(self) -> str:
        shown = ", ".join(inline(v, quotes=isinstance(v, str)) for v in self.values)
        more = f" (first {len(self.values)} shown)" if self.truncated else ""
        return (
            f"Column {inline(self.column, quotes=True)} ({self.type}): {self.distinct_count} distinct values "
            f"in {self.row_count} rows{more}: [{shown}]"
        )


@dataclass(frozen=True)
class Rows:
    """Rows kept by a query (an observation).

    Attributes:
        headers: the original headers.
        rows: the first rows, as tuples of cells as shown.
        total: how many rows match in all.
    """

    headers: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    total: int = 0

    def to_dicts(self) -> list[dict[str, Any]]:
        """Rows as ``{header: cell}`` dicts (a later duplicate header wins)."""
        return [dict(zip(self.headers, r)) for r in self.rows]


def _leading_keyword(sql: str) -> str:
    """The first keyword of a statement, upper-cased (comments skipped), or ``'?'``.

    Example:
        >>> _leading_keyword("  -- note\\n drop table t"), _leading_keyword("/* x */ Update t"), _leading_keyword("")
        ('DROP', 'UPDATE', '?')
    """
    m = re.match(r"\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*([A-Za-z]+)", sql, re.S)
    return m.group(1).upper() if m else "?"


def _sqlite_failure(
    error: sqlite3.Error,
    sql: str,
    params: Sequence[object],
    *,
    limit: float | None,
    deadline: float | None,
    guard: ReadOnlyGuard,
) -> SQLExecutionError:
    """The error to raise for a SQLite error: timeout, refused write, or any other.

    Args:
        error: what SQLite raised.
        sql: the statement.
        params: its values.
        limit: the time limit in seconds (None: none).
        deadline: the :func:`time.monotonic` deadline (None: none).
        guard: the connection's guard (read before it is reset).

    Returns:
        :class:`~pyql_sql.errors.SQLTimeout` when the deadline passed and SQLite
        was interrupted; :class:`~pyql_sql.errors.ReadOnlyError` when the guard
        denied something or SQLite says the database is read-only; else
        :class:`~pyql_sql.errors.SQLExecutionError`.

    Example:
        >>> import sqlite3
        >>> from pyql_sql.readonly import ReadOnlyGuard
        >>> e = _sqlite_failure(sqlite3.OperationalError("no such column: x"), "SELECT x", (),
        ...                     limit=None, deadline=None, guard=ReadOnlyGuard())
        >>> type(e).__name__, str(e)
        ('SQLExecutionError', 'SQLite rejected the query: no such column: x.')
    """
    message = str(error)
    if deadline is not None and "interrupt" in message.lower() and time.monotonic() > deadline:
        return SQLTimeout(
            f"The query ran longer than the {limit:g} s timeout and was stopped. "
            "Make it cheaper (fewer joins or recursion) or raise the timeout.",
            timeout=float(limit),  # type: ignore[arg-type]
            sql=sql,
            params=params,
        )
    if guard.denied or "readonly" in message.lower() or "read-only" in message.lower():
        action = guard.denied[0] if guard.denied else None
        keyword = _leading_keyword(sql)
        detail = f" (SQLite action {action})" if action else ""
        return ReadOnlyError(
            f"The table is read-only: the {keyword} statement was refused{detail}. "
            "Only SELECT queries run here; narrow rows with add_condition and "
            "choose the output with set_answer.",
            action=action,
            sql=sql,
            params=params,
        )
    return SQLExecutionError(f"SQLite rejected the query: {message}.", sql=sql, params=params)


class Executor:
    """Runs queries on one :class:`~pyql_sql.table.Table`.

    Args:
        table: the table.
        timeout: seconds a statement may run (None: no limit).
        progress_steps: SQLite VM instructions between two deadline checks.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Opponent"], [["Ajax"], ["UCD"], ["Ajax"]])
        >>> print(Executor(t).get_column("opponent"))
        Column 'Opponent' (text): 2 distinct values in 3 rows: ['Ajax', 'UCD']
    """

    def __init__(
        self, table: TableData, timeout: float | None = 5.0, progress_steps: int = 1000
    ) -> None:
        self.table = table
        self.timeout = timeout
        self.progress_steps = progress_steps

    # ----------------------------------------------------------- low level
    def execute_sql(
        self,
        sql: str,
        params: Sequence[object] = (),
        *,
        timeout: float | None | str = "default",
    ) -> list[tuple[Any, ...]]:
        """Run one SQL statement (read-only) and return all its rows.

        Args:
            sql: SQLite SQL text, with ``?`` placeholders for ``params``.
            params: the values to bind.
            timeout: seconds, None for no limit; default: the executor's timeout.

        Raises:
            ReadOnlyError: the statement would change the database or its settings.
            SQLTimeout: it ran longer than the timeout.
            SQLExecutionError: any other SQLite error (syntax, unknown column ...).

        Example:
            >>> from pyql_sql import Table
            >>> ex = Executor(Table.from_rows(["a"], [["x"]]))
            >>> ex.execute_sql('SELECT "c0" FROM "t"')
            [('x',)]
            >>> ex.execute_sql('DELETE FROM "t"')
            Traceback (most recent call last):
            ...
            pyql_sql.errors.ReadOnlyError: The table is read-only: the DELETE statement was refused (SQLite action DELETE). Only SELECT queries run here; narrow rows with add_condition and choose the output with set_answer.
        """
        limit = self._timeout_seconds(timeout)
        guard = self.table.guard
        deadline = self._arm_deadline(limit)
        guard.reset()
        try:
            cursor = self.table.db.execute(sql, list(params))
            return [tuple(r) for r in cursor.fetchall()]
        except sqlite3.Error as e:
            raise _sqlite_failure(e, sql, params, limit=limit, deadline=deadline, guard=guard) from e
        except (ValueError, OverflowError) as e:  # e.g. several statements, huge ints
            raise SQLExecutionError(f"Cannot run the query: {e}.", sql=sql, params=params) from e
        finally:
            if deadline is not None:
                self.table.connection.set_progress_handler(None, 0)
            guard.reset()

    def _timeout_seconds(self, timeout: float | None | str) -> float | None:
        """The time limit of one statement: ``timeout``, or the executor's for ``"default"``.

        Raises:
            ValueError: neither a number nor None.

        Example:
            >>> from pyql_sql import Table
            >>> ex = Executor(Table.from_rows(["a"], [["x"]]), timeout=2.5)
            >>> ex._timeout_seconds("default"), ex._timeout_seconds(None), ex._timeout_seconds(1)
            (2.5, None, 1)
        """
        limit = self.timeout if timeout == "default" else timeout
        if limit is not None and not isinstance(limit, (int, float)):
            raise ValueError(f"timeout must be a number of seconds or None, not {limit!r}")
        return limit

    def _arm_deadline(self, limit: float | None) -> float | None:
        """Make SQLite abort statements after ``limit`` seconds from now; return the deadline.

        The progress handler stays until the caller removes it
        (``set_progress_handler(None, 0)``); with no limit nothing is installed.

        Example:
            >>> from pyql_sql import Table
            >>> ex = Executor(Table.from_rows(["a"], [["x"]]))
            >>> ex._arm_deadline(None) is None
            True
        """
        deadline = None if limit is None else time.monotonic() + float(limit)
        if deadline is not None:
            self.table.connection.set_progress_handler(
                lambda: 1 if time.monotonic() > deadline else 0, self.progress_steps
            )
        return deadline

    def _run(self, expression: exp.Expression, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.execute_sql(expression.sql(dialect="sqlite"), params)

    # --------------------------------------------------------------- tools
    def execute(self, query: TableQuery) -> list[Answer]:
        """``execute()``: run the query and return its answers.

        Raises:
            IncompleteQueryError: no ``set_answer`` step yet.
            SQLTimeout, SQLExecutionError: see :meth:`execute_sql`.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Round", "Fastest Lap"], [["13", "Takashi Kogure"], ["5", "takashi kogure"]])
            >>> ex = Executor(t)
            >>> ex.execute(t.query().add_condition("Fastest Lap", "=", "Takashi Kogure").set_answer("Round", "MIN"))
            [Answer(value=5.0, label=None)]
        """
        self._check_table(query)
        if query.result is None:
            raise IncompleteQueryError(
                "The query has no answer yet: call set_answer(column, aggregation) "
                "(aggregation one of None, MAX, MIN, COUNT, SUM, AVG, COUNT DISTINCT), set_calculation or "
                "compare_rows before execute()."
            )
        sql, params = query.sql_with_params()
        return [Answer(row[0]) for row in self.execute_sql(sql, params)]

    def count(self, query: TableQuery | None = None) -> int:
        """How many rows the query's conditions keep (all rows when None).

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["a"], [["1"], ["2"], ["3"]])
            >>> Executor(t).count(t.query().add_condition("a", ">=", 2))
            2
        """
        where, params = self._where(query)
        select = exp.select(exp.Count(this=exp.Star())).from_(self._from())
        if where is not None:
            select = select.where(where, copy=False)
        return int(self._run(select, params)[0][0])

    def rows(self, query: TableQuery | None = None, limit: int = 20) -> Rows:
        """The rows the query's conditions keep (all columns), at most ``limit``.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["a", "b"], [["1", "x"], ["2", "y"]])
            >>> Executor(t).rows(t.query().add_condition("b", "=", "Y")).to_dicts()
            [{'a': '2', 'b': 'y'}]
        """
        columns = [c for c in (query.columns if query is not None else self.table.columns)
                   if not (isinstance(c, DerivedColumn) and c.kind == "count")]
        select = exp.select(*[text_of(c) for c in columns]).from_(self._from())
        where, params = self._where(query)
        if where is not None:
            select = select.where(where, copy=False)
        select = select.limit(exp.Placeholder(), copy=False)
        got = self._run(select, [*params, int(limit)])
        return Rows(tuple(c.header for c in columns), got, self.count(query))

    def groups(self, query: TableQuery, limit: int = 20) -> Rows:
        """The groups of a grouped query (``add_group``), ranked: each group's value and row count, at most ``limit``.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Winner"], [["Ajax"], ["PSV"], ["Ajax"]])
            >>> g = Executor(t).groups(t.query().add_group("Winner"))
            >>> g.headers, g.rows, g.total
            (('Winner', 'Count'), [('Ajax', 2), ('PSV', 1)], 2)
        """
        self._check_table(query)
        group = query.group
        if group is None:
            raise SQLQueryError("The query has no add_group step: there are no groups to show.")
        listing, params = group_listing(query, bind="param")
        got = self._run(listing, params)
        return Rows((group.column.header, group.count.header), got[:limit], len(got))

    def get_column(
        self, column: str | int | Column, limit: int = 20, query: TableQuery | None = None
    ) -> ColumnValues:
        """``get_column(column)``: the values stored in a column (an observation, not a clause).

        Args:
            column: a header as an LLM wrote it, or a 0-based index.
            limit: at most this many distinct values are listed (most frequent first).
            query: if given, only rows kept by its conditions are considered.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Class"], [["D"], ["A"], ["D"], ["C3"]])
            >>> cv = Executor(t).get_column("class", limit=2)
            >>> (cv.values, cv.distinct_count, cv.row_count, cv.truncated)
            (['D', 'A'], 3, 4, True)
        """
        col = column if isinstance(column, DerivedColumn) else (query if query is not None else self.table).resolve_column(column)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ValueError(f"limit must be a non-negative int, not {limit!r}")
        if isinstance(col, DerivedColumn) and col.kind == "count":
            raise SQLQueryError(f"{col.header!r} counts the rows of each group: add_group shows it; it has no cells to list.")
        cell = text_of(col)
        where, params = self._where(query)
        freq = exp.Count(this=exp.Star())
        first = exp.Min(this=exp.column("rowid"))
        # one GROUP BY pass: the windows count the groups and their rows before LIMIT applies
        listing = exp.select(
            cell,
            exp.Window(this=exp.Count(this=exp.Star())),
            exp.Window(this=exp.Sum(this=exp.Count(this=exp.Star()))),
        ).from_(self._from())
        if where is not None:
            listing = listing.where(where, copy=False)
        listing = (
            listing.group_by(cell.copy(), copy=False)
            .order_by(exp.Ordered(this=freq, desc=True), exp.Ordered(this=first), copy=False)
            .limit(exp.Placeholder(), copy=False)
        )
        got = self._run(listing, [*params, max(limit, 1)])
        values = [r[0] for r in got[:limit]]
        distinct = int(got[0][1]) if got else 0
        total = int(got[0][2]) if got else 0
        return ColumnValues(col.header, col.type, values, distinct, total)

    # ------------------------------------------------------------- helpers
    def _from(self) -> exp.Table:
        return exp.table_(self.table.sql_name, quoted=True)

    def _check_table(self, query: TableQuery) -> None:
        if query.table is not self.table:
            raise SQLQueryError(
                f"The query was built on table {query.table.name!r}, not on {self.table.name!r}; "
                "run it with that table's executor."
            )

    def _where(self, query: TableQuery | None) -> tuple[exp.Expression | None, list[object]]:
        """The condition of the rows a query keeps (before grouping), with its values to bind."""
        if query is None:
            return None, []
        self._check_table(query)
        params: list[object] = []

        def to_param(value: object) -> exp.Expression:
            params.append(value)
            return exp.Placeholder()

        return row_filter(query, to_param), params
