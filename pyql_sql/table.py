"""Tables: WikiSQL-style tables loaded into read-only SQLite, ready to query.

:class:`Table` is the table users and agents work with: everything of
:class:`~pyql_sql.tabledata.TableData` (the loaders ``from_rows``,
``from_csv``, ``from_wikisql_record``, ``from_wikisql_jsonl``,
``from_wikisql_db``, ``from_dbbench``; ``headers``, ``types``,
``resolve_column``, ``describe`` ...; the physical layouts are described
there) plus the conveniences that need the higher layers: :meth:`Table.query`
(an empty :class:`~pyql_sql.query.TableQuery`), :meth:`Table.executor` and
:meth:`Table.get_column` (through an :class:`~pyql_sql.executor.Executor`).

Layering: this module is the top of the table stack; it imports
:mod:`pyql_sql.tabledata`, :mod:`pyql_sql.query` and
:mod:`pyql_sql.executor`, and none of them imports it::

    tabledata -> steps -> compile -> query -> executor -> table

:class:`Column`, :func:`infer_type`, :func:`normalize_type`,
:func:`wikisql_table_name` and ``PYQL_TABLE`` are re-exported from
:mod:`pyql_sql.tabledata`, so ``from pyql_sql.table import Column`` keeps working.

Example:
    >>> t = Table.from_rows(["Player", "Goals (total)"], [["Ann", "1,174"], ["Bob", "12"]])
    >>> t.headers, t.types, t.row_count
    (('Player', 'Goals (total)'), ('text', 'real'), 2)
    >>> t.resolve_column("goals total").header
    'Goals (total)'
    >>> t.query().add_condition("Player", "=", "ann").set_answer("Goals (total)").sql()
    'SELECT "c1" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER(\\'ann\\')'
"""

from __future__ import annotations

from .executor import ColumnValues, Executor
from .query import TableQuery
from .tabledata import PYQL_TABLE as PYQL_TABLE  # re-exported
from .tabledata import Column, TableData, infer_type, normalize_type, wikisql_table_name

__all__ = ["Column", "Table", "infer_type", "normalize_type", "wikisql_table_name"]


class Table(TableData):
    """A table loaded into a sealed (read-only) SQLite connection.

    Build one with :meth:`from_rows`, :meth:`from_csv`,
    :meth:`from_wikisql_record`, :meth:`from_wikisql_jsonl`,
    :meth:`from_wikisql_db` or :meth:`from_dbbench` (inherited from
    :class:`~pyql_sql.tabledata.TableData`, which documents the attributes;
    called on :class:`Table` they build a :class:`Table`).

    Example:
        >>> t = Table.from_rows(["Name", "Name", ""], [["a", "b", "c"]], name="dups")
        >>> [(c.index, c.header, c.text_sql) for c in t.columns]
        [(0, 'Name', 'c0'), (1, 'Name', 'c1'), (2, '', 'c2')]
        >>> type(t).__name__, t
        ('Table', Table(name='dups', columns=3, rows=1, layout='pyql'))
    """

    #: The executor :meth:`get_column` uses, made on first use.
    _executor: Executor | None = None

    def query(self) -> TableQuery:
        """An empty :class:`~pyql_sql.query.TableQuery` on this table.

        Example:
            >>> Table.from_rows(["a"], [["1"]]).query().steps
            ()
        """
        return TableQuery(self)

    def executor(self, timeout: float | None = 5.0) -> Executor:
        """A new :class:`~pyql_sql.executor.Executor` on this table.

        Example:
            >>> Table.from_rows(["a"], [["1"]]).executor(timeout=1.0).timeout
            1.0
        """
        return Executor(self, timeout=timeout)

    def get_column(self, column: str | int, limit: int = 20) -> ColumnValues:
        """Distinct values of a column (see :meth:`pyql_sql.executor.Executor.get_column`).

        Example:
            >>> Table.from_rows(["a"], [["x"], ["y"], ["x"]]).get_column("a").values
            ['x', 'y']
        """
        if self._executor is None:
            self._executor = self.executor()
        return self._executor.get_column(column, limit=limit)
