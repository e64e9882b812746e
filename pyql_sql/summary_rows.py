"""A table's summary row: the ``Total`` at the bottom of a medal table or an election result.

Tables copied from the web often end with a row that sums the others
(``Total``, ``Totals``, ``Grand total``). It is not one of the things the
table lists: "how many nations won more than 2 gold medals" must not count
it, "which nation won the most golds" must not answer it, "the last nation
listed" is the row above it. The choose list therefore offers, first, the
condition that leaves it out (``add_condition(Nation, !=, Total)``) when a
question counts, orders, aggregates or reads a row by its place, unless
the question names the summary row itself ("how many total medals were
given out" reads it).
"""

from __future__ import annotations

import re
import weakref

from .table import Column, Table

#: A cell that names a summary row (its whole text, case aside).
SUMMARY_CELL = re.compile(r"^\s*(?:grand\s+|overall\s+)?totals?\s*:?\s*$|^\s*sum\s*:?\s*$", re.IGNORECASE)
#: How many of the table's first columns may hold the summary row's name (``Rank`` or ``Nation``).
LABEL_COLUMNS = 2

_FOUND: weakref.WeakKeyDictionary[Table, tuple[Column, str] | None] = weakref.WeakKeyDictionary()


def summary_row(table: Table) -> tuple[Column, str] | None:
    """The column and cell that name the table's summary row, or None: its last row, when a cell in one of its
    first two columns reads ``Total`` (``Totals``, ``Grand total``, ``Total:``, ``Sum``) and no other row's
    cell there does (a lifts table naming its ``Total`` event on each athlete's rows is no summary).

    One query of the last row and one count of the label's rows, once a table.

    Example:
        >>> t = Table.from_rows(["Nation", "Gold"], [["Peru", "3"], ["Chile", "1"], ["Total", "4"]])
        >>> column, cell = summary_row(t)
        >>> column.header, cell
        ('Nation', 'Total')
        >>> summary_row(Table.from_rows(["Nation", "Gold"], [["Peru", "3"], ["Chile", "1"]])) is None
        True
    """
    if table in _FOUND:
        return _FOUND[table]
    found = find_summary_row(table)
    _FOUND[table] = found
    return found


def find_summary_row(table: Table) -> tuple[Column, str] | None:
    """:func:`summary_row` read off the table each time (no cache): what ``benchmarks/bench_sql.py`` times.

    Example:
        >>> find_summary_row(Table.from_rows(["Rank", "Gold"], [["1", "3"], ["2", "1"], ["Totals", "4"]]))[1]
        'Totals'
    """
    if table.row_count < 3:
        return None
    executor = table.executor()
    last = executor.rows(table.query().add_row(-1), limit=1).rows
    if not last:
        return None
    for column in table.columns[:LABEL_COLUMNS]:
        cell = last[0][column.index]
        if isinstance(cell, str) and SUMMARY_CELL.match(cell):
            if executor.count(table.query().add_condition(column.index, "=", cell.strip())) == 1:
                return column, cell.strip()
    return None
