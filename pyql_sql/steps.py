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

from dataclasses import dataclass
from typing import Union

from .numbers import value_text
from .tabledata import Column

__all__ = ["ConditionStep", "AnswerStep", "OrderStep", "Step"]


def _show(value: object) -> str:
    """A condition value as the action syntax shows it.

    Example:
        >>> _show("Ajax"), _show(1174.0), _show(17)
        ('Ajax', '1174', '17')
    """
    return value_text(value) if not isinstance(value, str) else value


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


#: Any step of a :class:`~pyql_sql.query.TableQuery`.
Step = Union[ConditionStep, AnswerStep, OrderStep]
