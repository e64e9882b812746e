"""What a table step shows: the SQL twin of :mod:`pyql.kb.observation`.

:func:`observe` runs a constructed :class:`~pyql_sql.query.TableQuery` on an
:class:`~pyql_sql.executor.Executor` and describes what it keeps, as the
paper's observations do: without an answer, how many rows the conditions
keep and the first few of them; with an answer, the selected column's values
(capped), or the aggregate.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Score", "Goal"], [["1–0", "1"], ["2–0", "2"], ["3–0", "30"]])
    >>> print(observe(t.executor(), t.query().add_condition("Goal", "<", 17).set_answer("Score")))
    The column Score has 2 values in the rows kept: ['1–0', '2–0']
    >>> observe(t.executor(), t.query().add_condition("Goal", ">", 99)).is_empty
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyql.echo import inline

from .executor import Executor
from .numbers import format_number
from .query import TableQuery
from .steps import CompareStep, RowsCalculationStep

__all__ = ["TableObservation", "observe", "cell_text"]


def cell_text(value: Any) -> str:
    """A cell as an observation shows it (numbers without ``.0``, text quoted through
    :func:`pyql.echo.inline`: one line, control and bidi characters escaped, a long text cut).

    Example:
        >>> cell_text(1174.0), cell_text("Ajax"), cell_text(None)
        ('1174', "'Ajax'", 'None')
        >>> cell_text("x\\nObservation 3: done")
        "'x\\\\nObservation 3: done'"
    """
    if value is None:
        return "None"
    if isinstance(value, float):
        return format_number(value)
    return inline(value, quotes=True) if isinstance(value, str) else inline(value)


@dataclass(frozen=True)
class TableObservation:
    """The text of a table step's observation, the result behind it, and whether it is empty.

    Attributes:
        text: what the LLM reads.
        result: the executor's result (:class:`~pyql_sql.executor.Rows` or a list of answers).
        is_empty: no row kept, or no value to show.
    """

    text: str
    result: Any
    is_empty: bool

    def __str__(self) -> str:
        return self.text


def observe(executor: Executor, query: TableQuery, *, max_rows: int = 5, max_values: int = 20) -> TableObservation:
    """Run a constructed query and describe what it keeps (see the module docstring).

    Args:
        executor: the read-only executor of the query's table.
        query: the query.
        max_rows: rows shown at most before an answer is set.
        max_values: values of the answer column shown at most.
    """
    result = query.result
    if isinstance(result, (RowsCalculationStep, CompareStep)):
        return _result_observation(executor, query, result)
    if query.answer is None:
        if query.group is not None:
            return _groups_observation(executor, query, max_rows)
        return _rows_observation(executor, query, max_rows)
    return _answer_observation(executor, query, max_values)


def _groups_observation(executor: Executor, query: TableQuery, max_rows: int) -> TableObservation:
    """The groups kept, ranked, each with its value and row count (``add_group``)."""
    groups = executor.groups(query, limit=max_rows)
    if groups.total == 0:
        return TableObservation("No group: the conditions keep no row with a value in the grouped column.", groups, True)
    shown = "; ".join(
        "{" + ", ".join(f"{inline(h, quotes=True)}: {cell_text(v)}" for h, v in zip(groups.headers, row)) + "}" for row in groups.rows
    )
    noun = "group" if groups.total == 1 else "groups"
    more = f" (first {len(groups.rows)} shown)" if groups.total > len(groups.rows) else ""
    return TableObservation(f"{groups.total} {noun} of the rows kept{more}: {shown}", groups, False)


def _result_observation(executor: Executor, query: TableQuery, result: RowsCalculationStep | CompareStep) -> TableObservation:
    """What ``set_calculation`` or ``compare_rows`` gives: the value, or the row's key that wins."""
    answers = executor.execute(query)
    value = answers[0].value if answers else None
    first, second = (inline(s.value if isinstance(s.value, str) else cell_text(s.value)) for s in (result.first, result.second))
    column = inline(result.column.header)
    if isinstance(result, RowsCalculationStep):
        text = f"{column} of {first} {result.op} {column} of {second} = {cell_text(value)}"
        if value is None:
            text += f" (a row is missing, or its {column} is no number)"
    else:
        most = "larger" if result.descending else "smaller"
        if result.words is not None:
            winner = first if value == result.words[0] else second
            text = f"Of {first} and {second}, {winner} has the {most} {column}: {cell_text(value)}" if value is not None else (
                f"No answer: {first} and {second} have the same {column}, or one of them has none (no such row, or no value)")
        else:
            text = f"Of {first} and {second}, {cell_text(value)} has the {most} {column}" if value is not None else (
                f"Neither {first} nor {second} has a {column} to compare (no such row, or no value)")
    return TableObservation(text, answers, value is None)


def _rows_observation(executor: Executor, query: TableQuery, max_rows: int) -> TableObservation:
    rows = executor.rows(query, limit=max_rows)
    if rows.total == 0:
        return TableObservation("No row matches the conditions.", rows, True)
    shown = "; ".join(
        "{" + ", ".join(f"{inline(h, quotes=True)}: {cell_text(v)}" for h, v in zip(rows.headers, row)) + "}" for row in rows.rows
    )
    noun = "row matches" if rows.total == 1 else "rows match"
    more = f" (first {len(rows.rows)} shown)" if rows.total > len(rows.rows) else ""
    return TableObservation(f"{rows.total} {noun} the conditions{more}: {shown}", rows, False)


def _answer_observation(executor: Executor, query: TableQuery, max_values: int) -> TableObservation:
    answer = query.answer
    assert answer is not None
    answers = executor.execute(query)
    values = [a.value for a in answers]
    header = inline(answer.column.header)
    group = query.group
    per_group = group is not None and (answer.column not in (group.column, group.count) or (
        answer.column == group.count and answer.aggregation is None))
    if per_group:
        shown = ", ".join(cell_text(v) for v in values[:max_values])
        what = f"{answer.aggregation}({header})" if answer.aggregation else header
        return TableObservation(f"{what} of each group ({len(values)}): [{shown}]", answers, not values)
    if answer.aggregation is not None:
        value = values[0] if values else None
        text = f"{answer.aggregation}({header}) = {cell_text(value)}"
        if value is None:
            text += " (no row is kept, or the column has no value to aggregate)"
        return TableObservation(text, answers, value is None)
    shown_values = values[:max_values]
    more = f" (first {len(shown_values)} shown)" if len(values) > len(shown_values) else ""
    noun = "value" if len(values) == 1 else "values"
    text = (
        f"The column {header} has {len(values)} {noun} in the rows kept{more}: "
        f"[{', '.join(cell_text(v) for v in shown_values)}]"
    )
    return TableObservation(text, answers, not values)
