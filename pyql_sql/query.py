"""The immutable step-by-step SQL query (the SQL version of PyQL).

The tools of QueryAgent's Table 10 (SQL version) that *construct* the query:

* ``add_condition(column, op, value)`` — keep rows where ``column op value``;
* ``set_answer(column, aggregation)`` — what to return (``None``, ``MAX``,
  ``MIN``, ``COUNT``, ``SUM``, ``AVG``);
* ``add_order(column, direction, limit)`` — keep only the ``limit`` rows with
  the largest (``DESC``) or smallest (``ASC``) value of a column (ORDER BY ...
  LIMIT: "which season had the most episodes" returns another column of the
  row with the most episodes);

plus ``undo()``. Every step returns a *new* :class:`TableQuery`; the old one
is unchanged, so an agent can branch and backtrack freely. Steps are checked
when they are added (column resolved against the table's headers, operator,
aggregation and value validated) so mistakes surface at the step that made
them. The tools that only *observe* (``get_column``, ``execute``) are on
:class:`pyql_sql.executor.Executor`.

Layering (see :mod:`pyql_sql.tabledata`): this module builds on the table
data (:mod:`pyql_sql.tabledata`), the step dataclasses (:mod:`pyql_sql.steps`,
re-exported here) and the compiler (:mod:`pyql_sql.compile`, for ``sql()``
and friends); it imports neither :mod:`pyql_sql.executor` nor
:mod:`pyql_sql.table`, which build on it.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Opponent", "Attendance"], [["Ajax", "19,768"], ["UCD", "—"]])
    >>> q = t.query().add_condition("opponent", "=", "ajax").set_answer("Attendance")
    >>> q.actions()
    ['add_condition(Opponent, =, ajax)', 'set_answer(Attendance, None)']
    >>> print(q.sql())
    SELECT "c1" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER('ajax')
    >>> q.undo().undo().steps
    ()
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlglot import exp

from grammars.vocabulary import AGGREGATIONS as VOCABULARY_AGGREGATIONS
from grammars.vocabulary import (
    COMPARISON_OPERATORS,
    ORDERING_OPERATORS,
    canonical_operator,
)

from .compile import compile_query, logical_expression
from .errors import (
    BadAggregationError,
    BadOperatorError,
    BadValueError,
    SQLQueryError,
)
from .numbers import parse_number
from .steps import AnswerStep, ConditionStep, OrderStep, Step
from .tabledata import TableData

__all__ = [
    "OPERATORS",
    "AGGREGATIONS",
    "ConditionStep",
    "AnswerStep",
    "OrderStep",
    "Step",
    "DIRECTIONS",
    "TableQuery",
    "normalize_operator",
    "normalize_aggregation",
    "normalize_direction",
]

#: Condition operators accepted by :meth:`TableQuery.add_condition` (the action language's).
OPERATORS: tuple[str, ...] = COMPARISON_OPERATORS

#: Aggregations accepted by :meth:`TableQuery.set_answer` (besides None).
AGGREGATIONS: tuple[str, ...] = VOCABULARY_AGGREGATIONS

_ORDERING = frozenset(ORDERING_OPERATORS)

#: The directions of :meth:`TableQuery.add_order` (MAX and MIN are read as DESC and ASC).
DIRECTIONS: tuple[str, ...] = ("DESC", "ASC")
_DIRECTION_ALIASES = {"DESC": True, "ASC": False, "MAX": True, "MIN": False}

#: The most rows :meth:`TableQuery.add_order` keeps.
MAX_ORDER_LIMIT = 1000


def normalize_direction(direction: object) -> bool:
    """Check an order direction: True for DESC (largest first), False for ASC.

    Raises:
        BadValueError: anything but DESC, ASC, MAX or MIN (any case).

    Example:
        >>> normalize_direction("desc"), normalize_direction(" MIN ")
        (True, False)
        >>> normalize_direction("up")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadValueError: Unknown order direction 'up'. Allowed: DESC (the largest first) or ASC (the smallest first); MAX and MIN mean the same.
    """
    key = direction.strip().upper() if isinstance(direction, str) else None
    if key not in _DIRECTION_ALIASES:
        raise BadValueError(
            f"Unknown order direction {direction!r}. Allowed: DESC (the largest first) or ASC (the smallest first); "
            "MAX and MIN mean the same."
        )
    return _DIRECTION_ALIASES[key]


def _order_limit(limit: object) -> int:
    """A row count for :meth:`TableQuery.add_order`: a whole number from 1 to :data:`MAX_ORDER_LIMIT`."""
    number = parse_number(limit) if isinstance(limit, (str, int, float)) and not isinstance(limit, bool) else None
    if number is None or not number.is_integer() or not 1 <= number <= MAX_ORDER_LIMIT:
        raise BadValueError(f"The limit of add_order must be a whole number from 1 to {MAX_ORDER_LIMIT}, not {limit!r}.")
    return int(number)


def normalize_operator(op: object) -> str:
    """Check a condition operator.

    Args:
        op: one of ``> < >= <= = !=`` or a spelling of the vocabulary
            (``==``, ``<>``, ``=>``, ``=<``); surrounding spaces are ignored.

    Raises:
        BadOperatorError: anything else; the message lists the allowed operators.

    Example:
        >>> normalize_operator(" >= "), normalize_operator("<>")
        ('>=', '!=')
        >>> normalize_operator("LIKE")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadOperatorError: Unknown operator 'LIKE'. Allowed operators: >, <, >=, <=, =, !=.
    """
    canonical = canonical_operator(op)
    if canonical is None:
        raise BadOperatorError(op, allowed=OPERATORS)
    return canonical


def normalize_aggregation(aggregation: object) -> str | None:
    """Check an aggregation; return it upper-cased, or None for no aggregation.

    Args:
        aggregation: None, ``''``, ``'None'`` (any case) for none; else one of
            MAX, MIN, COUNT, SUM, AVG in any case.

    Raises:
        BadAggregationError: anything else.

    Example:
        >>> [normalize_aggregation(a) for a in (None, "", "none", "max", " Count ")]
        [None, None, None, 'MAX', 'COUNT']
    """
    if aggregation is None:
        return None
    if isinstance(aggregation, str):
        key = aggregation.strip().upper()
        if key in ("", "NONE"):
            return None
        if key in AGGREGATIONS:
            return key
    raise BadAggregationError(aggregation, allowed=("None",) + AGGREGATIONS)


@dataclass(frozen=True, eq=False)
class TableQuery:
    """An immutable query on one :class:`~pyql_sql.table.Table`, built step by step.

    Attributes:
        table: the table the query runs on.
        steps: the steps so far, oldest first.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Round", "Fastest Lap"], [["5", "Takashi Kogure"], ["13", "Takashi Kogure"]])
        >>> q0 = t.query()
        >>> q1 = q0.add_condition("Fastest Lap", "=", "takashi kogure")
        >>> q2 = q1.set_answer("Round", "min")
        >>> (len(q0.steps), len(q1.steps), len(q2.steps))
        (0, 1, 2)
        >>> print(q2.display_sql())
        SELECT MIN("Round") FROM "table" WHERE "Fastest Lap" = 'takashi kogure'
    """

    table: TableData
    steps: tuple[Step, ...] = ()

    # ---------------------------------------------------------------- steps
    def add_condition(self, column: str | int, op: str, value: str | int | float) -> TableQuery:
        """Keep only the rows where ``column op value``.

        Text equality is case-insensitive (``LOWER(TRIM(cell)) = LOWER(value)``).
        A numeric value is compared as a number: ``"1,174"``, ``1174`` and
        ``"1174.0"`` are the same value, in the cells and in ``value``.

        Args:
            column: a header as an LLM wrote it (matched loosely, see
                :meth:`Table.resolve_column`) or a 0-based column index.
            op: one of ``= > < >= <= !=``.
            value: a str, int or float.

        Returns:
            A new query with the condition added.

        Raises:
            UnknownColumnError: no such column (with suggestions).
            AmbiguousColumnError: several columns match.
            BadOperatorError: unknown operator.
            BadValueError: the value is not str/int/float, or ``>``/``<``/``>=``/``<=``
                on a numeric column with a value that is not a number.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Season"], [["1996"]])
            >>> t.query().add_condition("Season", "<", "2001").conditions[0].number
            2001.0
            >>> t.query().add_condition("Season", "<", "last year")
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadValueError: Column 'Season' holds numbers, so '<' needs a number, but got 'last year'. Give a number such as 17, 9.626 or 1,174 (or use = to match text).
        """
        col = self.table.resolve_column(column)
        op_ = normalize_operator(op)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise BadValueError(
                f"The value of a condition must be a string or a number, not {type(value).__name__} "
                f"({value!r})."
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise BadValueError(f"The value {value!r} is not a finite number.")
        number = parse_number(value)
        if op_ in _ORDERING and col.is_numeric and number is None:
            raise BadValueError(
                f"Column {col.header!r} holds numbers, so {op_!r} needs a number, but got "
                f"{value!r}. Give a number such as 17, 9.626 or 1,174 (or use = to match text)."
            )
        return TableQuery(self.table, self.steps + (ConditionStep(col, op_, value, number),))

    def set_answer(self, column: str | int, aggregation: str | None = None) -> TableQuery:
        """Choose what the query returns: a column, maybe aggregated.

        A later ``set_answer`` replaces an earlier one.

        Args:
            column: a header as an LLM wrote it or a 0-based column index.
            aggregation: None (or ``''``/``'None'``), MAX, MIN, COUNT, SUM, AVG — any case.

        Returns:
            A new query with the answer set.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadAggregationError: unknown aggregation.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Ends"], [["2011"]])
            >>> t.query().set_answer("ends", "sum").answer.aggregation
            'SUM'
            >>> t.query().set_answer("Ends", "total")
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadAggregationError: Unknown aggregation 'total'. Allowed aggregations: None, MAX, MIN, COUNT, SUM, AVG (case-insensitive; None or '' for no aggregation).
        """
        col = self.table.resolve_column(column)
        agg = normalize_aggregation(aggregation)
        return TableQuery(self.table, self.steps + (AnswerStep(col, agg),))

    def add_order(self, column: str | int, direction: str = "DESC", limit: int | str = 1) -> TableQuery:
        """Keep only the ``limit`` rows with the largest (DESC) or smallest (ASC) value of ``column``.

        It applies after all the query's conditions (whenever they were added):
        "which season had the most episodes" is ``add_order(Episodes, DESC)``
        then ``set_answer(Season)``. A numeric column orders by number (cells
        that are not numbers are left out); a text column by its text. Ties keep
        the rows in table order. A later ``add_order`` replaces an earlier one.

        Args:
            column: a header as an LLM wrote it or a 0-based column index.
            direction: DESC or ASC (MAX and MIN are read as DESC and ASC), any case.
            limit: how many rows to keep, 1 to 1000 (default 1).

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadValueError: bad direction or limit.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Season", "Episodes"], [["Season 1", "26"], ["Season 2", "52"], ["Season 3", "—"]])
            >>> q = t.query().add_order("episodes", "max").set_answer("Season")
            >>> q.actions(), t.executor().execute(q)[0].value
            (['add_order(Episodes, DESC, 1)', 'set_answer(Season, None)'], 'Season 2')
            >>> t.query().add_order("Episodes", "DESC", 0)
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadValueError: The limit of add_order must be a whole number from 1 to 1000, not 0.
        """
        col = self.table.resolve_column(column)
        step = OrderStep(col, normalize_direction(direction), _order_limit(limit))
        return TableQuery(self.table, self.steps + (step,))

    def undo(self) -> TableQuery:
        """Drop the last step.

        Raises:
            SQLQueryError: there is no step to undo.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], []).query().undo()
            Traceback (most recent call last):
            ...
            pyql_sql.errors.SQLQueryError: Nothing to undo: the query has no steps yet.
        """
        if not self.steps:
            raise SQLQueryError("Nothing to undo: the query has no steps yet.")
        return TableQuery(self.table, self.steps[:-1])

    # ------------------------------------------------------------- accessors
    @property
    def conditions(self) -> tuple[ConditionStep, ...]:
        """The condition steps, in order.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a"], [["1"]]).query().add_condition("a", ">", "0").set_answer("a")
            >>> [(c.column.header, c.op, c.value, c.number) for c in q.conditions]
            [('a', '>', '0', 0.0)]
        """
        return tuple(s for s in self.steps if isinstance(s, ConditionStep))

    @property
    def order(self) -> OrderStep | None:
        """The last ``add_order`` step, or None.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a"], [["1"]]).query()
            >>> q.order is None, q.add_order("a", "ASC", 2).order.action()
            (True, 'add_order(a, ASC, 2)')
        """
        for s in reversed(self.steps):
            if isinstance(s, OrderStep):
                return s
        return None

    @property
    def answer(self) -> AnswerStep | None:
        """The last ``set_answer`` step, or None.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a", "b"], [["1", "2"]]).query()
            >>> q.answer is None, q.set_answer("a").set_answer("b", "max").answer.action()
            (True, 'set_answer(b, MAX)')
        """
        for s in reversed(self.steps):
            if isinstance(s, AnswerStep):
                return s
        return None

    @property
    def variables(self) -> tuple[()]:
        """The query's variables: none (a table query names columns, not variables).

        Part of the step kernel's query protocol (:class:`pyql.environment.StepQuery`).

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], []).query().variables
            ()
        """
        return ()

    def text(self) -> str:
        """The query's text: :meth:`display_sql` in the SQLite dialect.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], [], name="T").query().set_answer("a").text()
            'SELECT "a" FROM "T"'
        """
        return self.display_sql("sqlite")

    def actions(self) -> list[str]:
        """The steps in the paper's action syntax.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["Opponent"], []).query().add_condition("opponent", "=", "Ajax").actions()
            ['add_condition(Opponent, =, Ajax)']
        """
        return [s.action() for s in self.steps]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableQuery):
            return NotImplemented
        return self.table is other.table and self.steps == other.steps

    def __hash__(self) -> int:
        return hash((id(self.table), self.steps))

    def __repr__(self) -> str:
        return f"TableQuery(table={self.table.name!r}, steps={self.actions()!r})"

    # ------------------------------------------------------------- rendering
    def expression(self, *, bind: str = "literal") -> tuple[exp.Select, list[object]]:
        """The query as a sqlglot expression over the table's physical columns.

        Args:
            bind: ``"literal"`` to inline values as SQL literals, ``"param"`` to
                use placeholders (the values are returned, in placeholder order).

        Returns:
            ``(expression, params)``; ``params`` is empty for ``"literal"``.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Gold", "Nation"], [["0", "Iran"]])
            >>> e, params = t.query().add_condition("Gold", "=", 0).set_answer("Nation").expression(bind="param")
            >>> type(e).__name__, params
            ('Select', [0])
        """
        return compile_query(self, bind=bind)

    def sql(self, dialect: str = "sqlite", params: bool = False) -> str:
        """Render the executable SQL in any sqlglot dialect.

        Args:
            dialect: a sqlglot dialect name (sqlite, duckdb, postgres, spark, trino ...).
            params: True to render placeholders instead of literal values
                (use :meth:`sql_with_params` to get the values too).

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Silver", "Bronze"], [["0", "4"]])
            >>> t.query().add_condition("Silver", "=", 0).set_answer("Bronze", "MAX").sql("postgres", params=True)
            'SELECT MAX("n1") FROM "t" WHERE "n0" = %s'
        """
        expression, _ = self.expression(bind="param" if params else "literal")
        return expression.sql(dialect=dialect)

    def sql_with_params(self) -> tuple[str, list[object]]:
        """SQLite text with ``?`` placeholders, and the values to bind, in order.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Class", "ERP W"], [["D", "200"]])
            >>> t.query().add_condition("Class", "=", "d").add_condition("ERP W", "<", "232").set_answer("Class").sql_with_params()
            ('SELECT "c0" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER(?) AND "n1" < ?', ['d', 232])
        """
        expression, values = self.expression(bind="param")
        return expression.sql(dialect="sqlite"), values

    def display_sql(self, dialect: str = "sqlite") -> str:
        """A readable SQL with the original headers and table name (not executed).

        Text equality is case-insensitive when executed; the display does not show that.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["W-L-T", "Average"], [["5-1", "7,804"]], name="Football Team Performance")
            >>> print(t.query().add_condition("W-L-T", "=", "5-1").set_answer("Average").display_sql())
            SELECT "Average" FROM "Football Team Performance" WHERE "W-L-T" = '5-1'
        """
        return logical_expression(self).sql(dialect=dialect)
