"""Errors raised by :mod:`pyql_sql`, the SQL twin of pyql.

Every error is a :class:`SQLError`, itself a :class:`pyql.errors.PyQLError`,
so a caller (an agent loop) can catch one type for both the SPARQL and the SQL
side. Each class has a machine-readable ``kind`` and a message that says what
was wrong and what is allowed instead, so it can be shown to an LLM as-is.

Example:
    >>> from pyql.errors import EngineError, EngineTimeout, PyQLError
    >>> issubclass(UnknownColumnError, PyQLError)
    True
    >>> e = BadOperatorError("~", allowed=("=", ">"))
    >>> (e.kind, str(e))
    ('bad_operator', "Unknown operator '~'. Allowed operators: =, >.")
"""

from __future__ import annotations

from collections.abc import Sequence

from pyql.errors import EngineError, EngineTimeout, PyQLError

__all__ = [
    "SQLError",
    "SQLQueryError",
    "UnknownColumnError",
    "AmbiguousColumnError",
    "BadOperatorError",
    "BadAggregationError",
    "BadValueError",
    "IncompleteQueryError",
    "PositionError",
    "GroupError",
    "TableLoadError",
    "TableInputError",
    "SQLExecutionError",
    "ReadOnlyError",
    "SQLTimeout",
    "WikiSQLFormatError",
    "MutationError",
    "MutationArityError",
    "MutationTypeError",
]


def _quote_list(items: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in items)


class SQLError(PyQLError):
    """Base class of every error :mod:`pyql_sql` raises on purpose.

    Example:
        >>> SQLError("boom").kind
        'sql_error'
    """

    kind = "sql_error"


class SQLQueryError(SQLError, ValueError):
    """A query step is not valid (bad column, operator, aggregation, value ...).

    Example:
        >>> SQLQueryError("nothing to undo").kind
        'bad_sql_step'
    """

    kind = "bad_sql_step"


class UnknownColumnError(SQLQueryError):
    """A column name matches no header of the table, even loosely.

    Attributes:
        column: the name that was asked for.
        suggestions: the closest headers (best first, maybe empty).
        headers: all headers of the table.

    Example:
        >>> e = UnknownColumnError("Oponent", suggestions=["Opponent"], headers=["Date", "Opponent"])
        >>> print(e)
        Unknown column 'Oponent'. Did you mean 'Opponent'? The columns are: 'Date', 'Opponent'.
        >>> e.suggestions
        ['Opponent']
    """

    kind = "unknown_column"

    def __init__(
        self,
        column: str,
        *,
        suggestions: Sequence[str] = (),
        headers: Sequence[str] = (),
    ) -> None:
        self.column = column
        self.suggestions = list(suggestions)
        self.headers = list(headers)
        msg = f"Unknown column {column!r}."
        if self.suggestions:
            if len(self.suggestions) == 1:
                msg += f" Did you mean {self.suggestions[0]!r}?"
            else:
                msg += f" Did you mean one of {_quote_list(self.suggestions)}?"
        if self.headers:
            msg += f" The columns are: {_quote_list(self.headers)}."
        super().__init__(msg)


class AmbiguousColumnError(SQLQueryError):
    """A column name matches several headers (duplicated or near-identical).

    Attributes:
        column: the name that was asked for.
        candidates: ``(index, header)`` of every matching column.

    Example:
        >>> print(AmbiguousColumnError("Name", candidates=[(1, "Name"), (4, "Name")]))
        Column 'Name' is ambiguous: it matches columns 1 ('Name'), 4 ('Name'). Pass the column index (an int) instead.
    """

    kind = "ambiguous_column"

    def __init__(self, column: str, *, candidates: Sequence[tuple[int, str]]) -> None:
        self.column = column
        self.candidates = list(candidates)
        listed = ", ".join(f"{i} ({h!r})" for i, h in self.candidates)
        super().__init__(
            f"Column {column!r} is ambiguous: it matches columns {listed}. "
            "Pass the column index (an int) instead."
        )


class BadOperatorError(SQLQueryError):
    """A condition operator is not one of the allowed ones.

    Attributes:
        op: the operator that was given.
        allowed: the operators that are accepted.

    Example:
        >>> BadOperatorError("LIKE", allowed=["=", "<"]).allowed
        ['=', '<']
    """

    kind = "bad_operator"

    def __init__(self, op: object, *, allowed: Sequence[str]) -> None:
        self.op = op
        self.allowed = list(allowed)
        super().__init__(
            f"Unknown operator {op!r}. Allowed operators: {', '.join(self.allowed)}."
        )


class BadAggregationError(SQLQueryError):
    """An aggregation is not one of None, MAX, MIN, COUNT, SUM, AVG.

    Attributes:
        aggregation: what was given.
        allowed: the accepted aggregations.

    Example:
        >>> print(BadAggregationError("MEDIAN", allowed=["None", "MAX"]))
        Unknown aggregation 'MEDIAN'. Allowed aggregations: None, MAX (case-insensitive; None or '' for no aggregation).
    """

    kind = "bad_aggregation"

    def __init__(self, aggregation: object, *, allowed: Sequence[str]) -> None:
        self.aggregation = aggregation
        self.allowed = list(allowed)
        super().__init__(
            f"Unknown aggregation {aggregation!r}. Allowed aggregations: "
            f"{', '.join(self.allowed)} (case-insensitive; None or '' for no aggregation)."
        )


class BadValueError(SQLQueryError):
    """A condition value cannot be used (wrong Python type, or not a number
    where the comparison needs one).

    Example:
        >>> BadValueError("not a number").kind
        'bad_value'
    """

    kind = "bad_value"


class IncompleteQueryError(SQLQueryError):
    """The query cannot run yet (typically: no answer column was set).

    Example:
        >>> IncompleteQueryError("no answer").kind
        'incomplete_query'
    """

    kind = "incomplete_query"


class PositionError(BadValueError):
    """A row position that is no position, or one past the table's end (``add_row``).

    Example:
        >>> PositionError("Row 12 is past the table's end: the table has 10 rows.").kind
        'bad_position'
    """

    kind = "bad_position"


class GroupError(SQLQueryError):
    """A step a grouped query cannot take (a second ``add_group``, a column answered without an aggregation).

    Example:
        >>> GroupError("The rows are already grouped by 'Team'.").kind
        'bad_group'
    """

    kind = "bad_group"


class TableLoadError(SQLError):
    """A table cannot be loaded (missing file, bad layout, ragged rows ...).

    Example:
        >>> TableLoadError("no such file").kind
        'table_load_error'
    """

    kind = "table_load_error"


class TableInputError(TableLoadError, ValueError):
    """A table file or object given as input (``--db``, ``--table-json``, a data set item's table)
    cannot be read as a table; the message says what is wrong, in one line.

    Example:
        >>> TableInputError("table JSON file not found: t.json").kind
        'bad_table_input'
    """

    kind = "bad_table_input"


class SQLExecutionError(SQLError, EngineError):
    """SQLite rejected a statement or failed while running it.

    It is an :class:`pyql.errors.EngineError`, as the SPARQL engines' errors
    are, so what handles a failing engine handles both sides.

    Attributes:
        sql: the SQL text that was run, when known.
        params: its bound parameters.

    Example:
        >>> e = SQLExecutionError("no such column: x", sql="SELECT x")
        >>> e.sql, e.query, isinstance(e, EngineError)
        ('SELECT x', 'SELECT x', True)
    """

    kind = "sql_execution_error"

    def __init__(
        self, message: str, *, sql: str | None = None, params: Sequence[object] = ()
    ) -> None:
        super().__init__(message, query=sql)
        self.sql = sql
        self.params = list(params)


class ReadOnlyError(SQLExecutionError):
    """A statement tried to change the database (or its settings): tables are read-only.

    Attributes:
        action: the SQLite action that was denied (e.g. ``'INSERT'``), when known.

    Example:
        >>> ReadOnlyError("denied", action="INSERT").action
        'INSERT'
    """

    kind = "read_only"

    def __init__(
        self,
        message: str,
        *,
        action: str | None = None,
        sql: str | None = None,
        params: Sequence[object] = (),
    ) -> None:
        super().__init__(message, sql=sql, params=params)
        self.action = action


class SQLTimeout(SQLExecutionError, EngineTimeout):
    """A statement ran longer than the executor's timeout and was aborted (an :class:`~pyql.errors.EngineTimeout`).

    Attributes:
        timeout: the limit in seconds.

    Example:
        >>> SQLTimeout("slow", timeout=0.2).timeout
        0.2
    """

    kind = "sql_timeout"

    def __init__(
        self,
        message: str,
        *,
        timeout: float | None = None,
        sql: str | None = None,
        params: Sequence[object] = (),
    ) -> None:
        super().__init__(message, sql=sql, params=params)
        self.timeout = timeout


class WikiSQLFormatError(SQLError, ValueError):
    """A WikiSQL gold query dict (``sel``/``agg``/``conds``) is not well formed.

    Example:
        >>> WikiSQLFormatError("sel out of range").kind
        'bad_wikisql'
    """

    kind = "bad_wikisql"


class MutationError(SQLQueryError):
    """An INSERT/UPDATE step is not valid (bad assignment text, no condition for an update ...).

    Example:
        >>> MutationError("update_rows needs a condition").kind
        'bad_mutation'
    """

    kind = "bad_mutation"


class MutationArityError(MutationError):
    """A row given by position has more or fewer values than the table has columns.

    Example:
        >>> MutationArityError("3 values for 2 columns").kind
        'mutation_arity'
    """

    kind = "mutation_arity"


class MutationTypeError(MutationError):
    """A value does not fit its column: not a scalar, or no number at all for a column of numbers.

    Example:
        >>> MutationTypeError("'abc' is not a number").kind
        'mutation_type'
    """

    kind = "mutation_type"
