"""pyql_sql: the SQL twin of pyql — build table queries one executable step at a time.

QueryAgent's SQL-version PyQL (Huang et al., 2024, Table 10) for WikiSQL-style
tables: load a table (:class:`Table`), build an immutable :class:`TableQuery`
with ``add_condition`` / ``set_answer`` / ``undo``, observe with
``get_column`` and ``execute`` on an :class:`Executor` (read-only SQLite, with
a timeout), and evaluate against WikiSQL gold queries (:mod:`pyql_sql.wikisql`).

Example:
    >>> from pyql_sql import Table, Executor
    >>> t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
    >>> q = t.query().add_condition("opponent", "=", "athlone town").set_answer("Game", "COUNT")
    >>> [a.to_dict() for a in Executor(t).execute(q)]
    [{'value': 1, 'label': None}]
"""

from .errors import (
    AmbiguousColumnError,
    BadAggregationError,
    BadOperatorError,
    BadValueError,
    IncompleteQueryError,
    ReadOnlyError,
    SQLError,
    SQLExecutionError,
    SQLQueryError,
    SQLTimeout,
    TableLoadError,
    UnknownColumnError,
    WikiSQLFormatError,
)
from .executor import Answer, ColumnValues, Executor, Rows
from .numbers import parse_number
from .query import AGGREGATIONS, OPERATORS, AnswerStep, ConditionStep, TableQuery
from .table import Column, Table
from .wikisql import (
    AGG_OPS,
    COND_OPS,
    GoldParse,
    denotation_equal,
    execution_match,
    label_match,
    parse_gold_sql,
    query_from_wikisql,
    query_to_wikisql,
)

__all__ = [
    "AGGREGATIONS",
    "AGG_OPS",
    "COND_OPS",
    "OPERATORS",
    "AmbiguousColumnError",
    "Answer",
    "AnswerStep",
    "BadAggregationError",
    "BadOperatorError",
    "BadValueError",
    "Column",
    "ColumnValues",
    "ConditionStep",
    "Executor",
    "GoldParse",
    "IncompleteQueryError",
    "ReadOnlyError",
    "Rows",
    "SQLError",
    "SQLExecutionError",
    "SQLQueryError",
    "SQLTimeout",
    "Table",
    "TableLoadError",
    "TableQuery",
    "UnknownColumnError",
    "WikiSQLFormatError",
    "denotation_equal",
    "execution_match",
    "label_match",
    "parse_gold_sql",
    "parse_number",
    "query_from_wikisql",
    "query_to_wikisql",
]
