"""The steps of a :class:`~pyql_sql.query.TableQuery`: one validated clause each.

A step is plain data: the resolved :class:`~pyql_sql.tabledata.Column` and
the checked operator, value or aggregation. :mod:`pyql_sql.query` builds
and validates steps (``add_condition``, ``set_answer``);
:mod:`pyql_sql.compile` turns them into SQL. Both import this module, and
this module imports neither, which is what keeps the query builder and the
compiler apart (layering: ``tabledata`` -> ``steps`` -> ``compile`` ->
``query`` -> ``executor`` -> ``table``; see :mod:`pyql_sql.tabledata`).

The names are re-exported by :mod:`pyql_sql.query` and :mod:`pyql_sql`.

Example:
    >>> from pyql_sql.tabledata import Column
    >>> year = Column(0, "Year", "real", "c0", "n0")
    >>> [s.action() for s in (ConditionStep(year, ">", 2001, 2001.0), AnswerStep(year, None))]
    ['add_condition(Year, >, 2001)', 'set_answer(Year, None)']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from .numbers import value_text
from .tabledata import Column

__all__ = [
    "ConditionStep", "AnswerStep", "OrderStep", "DerivedColumn", "PartStep", "CalculationStep", "PositionStep",
    "AdjacentStep", "GroupStep", "RowsCalculationStep", "CompareStep", "ResultStep", "Step", "action_value",
]


def action_value(value: str) -> str:
    """A cell as an action's value argument, so that it reads back as written: quoted when it holds quotes of its
    own (``'"Dalek"'``), a comma, a parenthesis, or spaces at its ends (a separator ``" "``); the empty cell as ``""``.

    Example:
        >>> print(action_value("Ajax"), action_value('"Dalek"'), action_value("Smith, John"), action_value(" "), action_value(""))
        Ajax '"Dalek"' "Smith, John" " " ""
    """
    if not value:
        return '""'
    if '"' in value and "'" not in value:
        return f"'{value}'"
    if re.search(r"[,()]", value) or (value[:1] in "'`" and value[-1:] == value[:1] and len(value) > 1) or value != value.strip():
        return '"' + value.replace('"', "'") + '"' if '"' not in value else value
    return value


def _show(value: object) -> str:
    """A condition value as the action syntax shows it.

    Example:
        >>> _show("Ajax"), _show(1174.0), _show(17), _show("")
        ('Ajax', '1174', '17', '""')
    """
    return value_text(value) if not isinstance(value, str) else (value or '""')


@dataclass(frozen=True)
class ConditionStep:
    """``add_condition(column, op, value)``.

    Attributes:
        column: the resolved column.
        op: the operator.
        value: the value as given (str, int or float).
        number: the value read as a number, or None if it is not one.
    """

    column: Column
    op: str
    value: str | int | float
    number: float | None

    def action(self) -> str:
        """The step in the paper's action syntax.

        Example:
            >>> from pyql_sql.table import Column
            >>> ConditionStep(Column(0, "Lyrics theme/style", "text", "c0", "n0"), "=", "Romance", None).action()
            'add_condition(Lyrics theme/style, =, Romance)'
        """
        return f"add_condition({self.column.header}, {self.op}, {_show(self.value)})"


@dataclass(frozen=True)
class AnswerStep:
    """``set_answer(column, aggregation)``.

    Attributes:
        column: the resolved column.
        aggregation: ``'MAX'``, ``'MIN'``, ``'COUNT'``, ``'SUM'``, ``'AVG'`` or None.
    """

    column: Column
    aggregation: str | None

    def action(self) -> str:
        """The step in the paper's action syntax.

        Example:
            >>> from pyql_sql.table import Column
            >>> AnswerStep(Column(1, "Round", "real", "c1", "n1"), "MIN").action()
            'set_answer(Round, MIN)'
        """
        return f"set_answer({self.column.header}, {self.aggregation or 'None'})"


@dataclass(frozen=True)
class OrderStep:
    """``add_order(column, direction, limit)``: keep the ``limit`` rows with the largest (DESC) or smallest (ASC) value.

    Attributes:
        column: the resolved column the rows are ordered by.
        descending: True for DESC (the largest first), False for ASC.
        limit: how many rows are kept (at least 1).
    """

    column: Column
    descending: bool
    limit: int = 1

    def action(self) -> str:
        """The step in the action syntax.

        Example:
            >>> from pyql_sql.table import Column
            >>> OrderStep(Column(1, "Episodes", "real", "c1", "n1"), True).action()
            'add_order(Episodes, DESC, 1)'
        """
        return f"add_order({self.column.header}, {'DESC' if self.descending else 'ASC'}, {self.limit})"


@dataclass(frozen=True)
class DerivedColumn(Column):
    """A column a step derives from the table's: a part of a cell, a calculation of two cells, a group's row count.

    Its ``index`` follows the table's columns; it has no physical column
    (``text_sql`` is empty): :mod:`pyql_sql.compile` computes it.

    Attributes:
        kind: ``part`` (:class:`PartStep`), ``calculation`` (:class:`CalculationStep`) or ``count``
            (the rows of each group, :class:`GroupStep`).
        sources: the columns it is computed from.
        part: a part's name (:data:`pyql_sql.parts.PARTS`).
        separator: a part's separator (``before``/``after``).
        op: a calculation's operator (``-``, ``+``, ``*``, ``/``).

    Example:
        >>> date = Column(0, "Date", "text", "c0", "n0")
        >>> DerivedColumn(2, "Date (year)", "real", "", None, kind="part", sources=(date,), part="year").header
        'Date (year)'
    """

    kind: str = "part"
    sources: tuple[Column, ...] = ()
    part: str | None = None
    separator: str = ""
    op: str | None = None


@dataclass(frozen=True)
class PartStep:
    """``add_part(column, part, separator)``: a new column holding one part of each cell (:mod:`pyql_sql.parts`).

    Example:
        >>> date = Column(0, "Date", "text", "c0", "n0")
        >>> PartStep(DerivedColumn(1, "Date (year)", "real", "", None, sources=(date,), part="year")).action()
        'add_part(Date, year)'
    """

    column: DerivedColumn

    def action(self) -> str:
        """The step in the action syntax (the separator only for ``before``/``after``, written as :func:`action_value`
        writes a value, so that it reads back)."""
        source = self.column.sources[0].header
        sep = self.column.separator
        written = f", {action_value(sep)}" if self.column.part in ("before", "after") and sep else ""
        return f"add_part({source}, {self.column.part}{written})"


@dataclass(frozen=True)
class CalculationStep:
    """``add_calculation(column, op, column)``: a new column, the two cells of each row combined (``-``, ``+``, ``*``, ``/``).

    Example:
        >>> a, b = Column(0, "Home", "real", "c0", "n0"), Column(1, "Away", "real", "c1", "n1")
        >>> CalculationStep(DerivedColumn(2, "Home - Away", "real", "", None, kind="calculation", sources=(a, b), op="-")).action()
        'add_calculation(Home, -, Away)'
    """

    column: DerivedColumn

    def action(self) -> str:
        """The step in the action syntax."""
        first, second = self.column.sources
        return f"add_calculation({first.header}, {self.column.op}, {second.header})"


@dataclass(frozen=True)
class PositionStep:
    """``add_row(position)``: keep only the n-th row (1 the first, -1 the last) of those kept, in the table's order
    (or in an ``add_order``'s order when there is one).

    Example:
        >>> PositionStep(1).action(), PositionStep(-1).action()
        ('add_row(1)', 'add_row(-1)')
    """

    position: int

    def action(self) -> str:
        """The step in the action syntax."""
        return f"add_row({self.position})"


@dataclass(frozen=True)
class AdjacentStep:
    """``add_adjacent(column, value, direction)``: keep the rows right after (or before) a row where ``column = value``.

    Attributes:
        match: the condition that finds the row the others are next to.
        after: True for the row after it, False for the row before.

    Example:
        >>> c = ConditionStep(Column(0, "Player", "text", "c0", "n0"), "=", "Hank Stein", None)
        >>> AdjacentStep(c, False).action()
        'add_adjacent(Player, Hank Stein, before)'
    """

    match: ConditionStep
    after: bool

    def action(self) -> str:
        """The step in the action syntax."""
        return f"add_adjacent({self.match.column.header}, {_show(self.match.value)}, {'after' if self.after else 'before'})"


@dataclass(frozen=True)
class GroupStep:
    """``add_group(column)``: group the rows kept by a column's value; each group has a row count (``count``).

    Example:
        >>> team = Column(0, "Team", "text", "c0", "n0")
        >>> GroupStep(team, DerivedColumn(1, "Count", "real", "", None, kind="count", sources=(team,))).action()
        'add_group(Team)'
    """

    column: Column
    count: DerivedColumn

    def action(self) -> str:
        """The step in the action syntax."""
        return f"add_group({self.column.header})"


@dataclass(frozen=True)
class RowsCalculationStep:
    """``set_calculation(column, op, key, first, second)``: the answer is the column's value in the row
    where ``key = first``, combined (``-``, ``+``, ``*``, ``/``) with its value where ``key = second``.

    Example:
        >>> gold, nation = Column(1, "Gold", "real", "c1", "n1"), Column(0, "Nation", "text", "c0", "n0")
        >>> RowsCalculationStep(gold, "-", ConditionStep(nation, "=", "Japan", None), ConditionStep(nation, "=", "China", None)).action()
        'set_calculation(Gold, -, Nation, Japan, China)'
    """

    column: Column
    op: str
    first: ConditionStep
    second: ConditionStep

    def action(self) -> str:
        """The step in the action syntax."""
        return (f"set_calculation({self.column.header}, {self.op}, {self.first.column.header}, "
                f"{_show(self.first.value)}, {_show(self.second.value)})")


@dataclass(frozen=True)
class CompareStep:
    """``compare_rows(column, key, first, second, direction[, if_first, if_second])``: the answer is the key (``first``
    or ``second``) of the row with the larger (DESC) or smaller (ASC) value of the column, or, with a pair of
    ``words``, the first word when the first row wins and the second word when the second row wins.

    Attributes:
        column: the column compared.
        first: the condition of the first row (its key column and value).
        second: the condition of the second row.
        descending: True for DESC (the larger wins), False for ASC (the smaller wins).
        words: the two words answered instead of a key (``("more", "less")``), or None.

    Example:
        >>> goals, name = Column(1, "Goals", "real", "c1", "n1"), Column(0, "Name", "text", "c0", "n0")
        >>> a, b = ConditionStep(name, "=", "Ross Jenkins", None), ConditionStep(name, "=", "Nigel Gibbs", None)
        >>> CompareStep(goals, a, b, True).action()
        'compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC)'
        >>> CompareStep(goals, a, b, True, ("more", "less")).action()
        'compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC, more, less)'
    """

    column: Column
    first: ConditionStep
    second: ConditionStep
    descending: bool
    words: tuple[str, str] | None = None

    def action(self) -> str:
        """The step in the action syntax (the words only when set, written as :func:`action_value` writes a value)."""
        words = f", {action_value(self.words[0])}, {action_value(self.words[1])}" if self.words is not None else ""
        return (f"compare_rows({self.column.header}, {self.first.column.header}, {_show(self.first.value)}, "
                f"{_show(self.second.value)}, {'DESC' if self.descending else 'ASC'}{words})")


#: A step that says what the query returns (a later one replaces an earlier one).
ResultStep = Union[AnswerStep, RowsCalculationStep, CompareStep]

#: Any step of a :class:`~pyql_sql.query.TableQuery`.
Step = Union[ConditionStep, AnswerStep, OrderStep, PartStep, CalculationStep, PositionStep, AdjacentStep, GroupStep,
             RowsCalculationStep, CompareStep]
