"""The step environment on a table: the SQL twin of :class:`pyql.environment.sparql.SparqlEnvironment`.

:class:`TableEnvironment` is an :class:`pyql.environment.Environment` (same
``step()``, :class:`~pyql.environment.StepRecord`, analyzer protocol, JSON
lines) whose backend is a :class:`~pyql_sql.table.Table` and an
:class:`~pyql_sql.executor.Executor` (read-only, with a timeout), whose
actions are :class:`~pyql_sql.actions.TableActions` and whose query is an
immutable :class:`~pyql_sql.query.TableQuery`.

Observations follow the paper: ``get_column`` shows the distinct values of a
column (capped) and how many there are; ``add_condition`` / ``set_answer``
show the rows the query keeps (capped), or the selected column's values
once an answer is set; ``execute()`` gives the answer list. A step that
fails (unknown column, bad operator, an empty result without an analyzer
...) leaves the query unchanged, exactly as on the SPARQL side.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]], name="Games")
    >>> env = TableEnvironment(t)
    >>> print(env.step("get_column(opponent)").observation)
    Column 'Opponent' (text): 2 distinct values in 2 rows: ['Athlone Town', 'Shamrock Rovers']
    >>> print(env.step("add_condition(Opponent, =, athlone town)").observation)
    1 row matches the conditions: {'Game': '6', 'Opponent': 'Athlone Town'}
    >>> env.step("add_condition(Oponent, =, x)").error
    'unknown_column'
    >>> print(env.step("set_answer(Game, COUNT)").observation)
    COUNT(Game) = 1
    >>> env.step("execute()").observation
    'The answer is [1]'
    >>> env.final_json()
    {'answers': [{'value': '1', 'label': None}], 'sql': 'SELECT COUNT("Game") FROM "Games" WHERE "Opponent" = \\'athlone town\\''}
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pyql.action_parser import ActionCall, Arg
from pyql.environment import Analyzer, Environment, FinalResult, Memory, StepRecord
from pyql.errors import PyQLError

from .actions import TableActions, regroup_arguments
from .errors import TableInputError
from .executor import Answer, ColumnValues, Executor
from .numbers import format_number
from .observation import TableObservation, observe
from .query import AnswerStep, ConditionStep, TableQuery
from .question_match import QUESTION_STYLES
from .table import Column, Table

__all__ = ["TableEnvironment", "TableMemory", "CountingExecutor", "answer_text"]


def answer_text(value: Any) -> str:
    """An answer value as text, as the SPARQL side gives answers (numbers without ``.0``).

    Example:
        >>> answer_text(32502.0), answer_text(1), answer_text("1–0"), answer_text(9.626)
        ('32502', '1', '1–0', '9.626')
    """
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return format_number(float(value)) if isinstance(value, float) else str(value)
    return str(value)


class CountingExecutor(Executor):
    """An :class:`~pyql_sql.executor.Executor` that counts its statements and their time.

    Example:
        >>> from pyql_sql import Table
        >>> ex = CountingExecutor(Table.from_rows(["a"], [["1"]]))
        >>> _ = ex.get_column("a"); ex.queries
        1
    """

    def __init__(self, table: Table, timeout: float | None = 5.0, progress_steps: int = 1000) -> None:
        super().__init__(table, timeout=timeout, progress_steps=progress_steps)
        self.queries = 0
        self.seconds = 0.0

    def execute_sql(
        self,
        sql: str,
        params: Sequence[object] = (),
        *,
        timeout: float | None | str = "default",
    ) -> list[tuple[Any, ...]]:
        start = time.perf_counter()
        try:
            return super().execute_sql(sql, params, timeout=timeout)
        finally:
            self.queries += 1
            self.seconds += time.perf_counter() - start


@dataclass
class TableMemory(Memory):
    """The reasoning memory of a table episode.

    Attributes:
        columns: column index → what ``get_column`` showed (accepted steps).
        conditions: the conditions of the current query.
        answer: the current ``set_answer`` step, or None.
    """

    columns: dict[int, ColumnValues] = field(default_factory=dict)
    conditions: list[ConditionStep] = field(default_factory=list)
    answer: AnswerStep | None = None

    def looked_at(self, column: Column | int) -> bool:
        """Whether an accepted ``get_column`` showed this column.

        Example:
            >>> TableMemory().looked_at(0)
            False
        """
        index = column.index if isinstance(column, Column) else column
        return index in self.columns


class TableEnvironment(Environment):
    """The step environment on a table.

    Args:
        table: the table.
        question: the question, if any.
        entities: linked entities (unused by the SQL actions; kept for symmetry).
        analyzer: a correction analyzer (ERASER), or None.
        actions: restrict to these action names (default: all four).
        timeout: seconds a statement may run (None: no limit).
        max_values: distinct values ``get_column`` shows at most.
        max_rows: rows a construct step shows at most.
        max_answers: answers ``execute()`` returns at most.
        undo_empty: without an analyzer, whether an empty result fails the step.
        run_advice, escalate: see :class:`pyql.environment.Environment` (ablation switches).
        question_style: how the question is written (:data:`~pyql_sql.question_match.QUESTION_STYLES`):
            ``"natural"`` (people's questions, WTQ) or ``"sql"`` (written from a SQL query: WikiSQL, dbbench).

    Raises:
        TableInputError: ``question_style`` is not one of :data:`~pyql_sql.question_match.QUESTION_STYLES`.

    Attributes:
        table: the table.
        executor: the read-only :class:`CountingExecutor` every step uses.
        memory: a :class:`TableMemory`.
        describe_quantities: kept for symmetry with :class:`~pyql.environment.sparql.SparqlEnvironment`
            (a table has no quantities to describe; :func:`pyql.environment.batch_trials.trial` switches it off on both).
    """

    side: ClassVar[str] = "sql"
    language: ClassVar[str] = "sql"
    #: the action set class (a subclass may offer more actions: :mod:`pyql_sql.writable_environment`)
    action_set: ClassVar[type[TableActions]] = TableActions
    memory: TableMemory

    def __init__(
        self,
        table: Table,
        question: str | None = None,
        entities: Mapping[str, str] | None = None,
        analyzer: Analyzer | None = None,
        actions: Iterable[str] | None = None,
        timeout: float | None = 5.0,
        max_values: int = 20,
        max_rows: int = 5,
        max_answers: int = 1000,
        undo_empty: bool = True,
        *,
        run_advice: bool = True,
        escalate: bool = True,
        question_style: str = "natural",
    ) -> None:
        if question_style not in QUESTION_STYLES:
            raise TableInputError(f"question_style {question_style!r} is not known: give one of {', '.join(QUESTION_STYLES)}")
        self.table = table
        #: how the question is written (:data:`~pyql_sql.question_match.QUESTION_STYLES`), which the choose list reads
        self.question_style = question_style
        self.executor = CountingExecutor(table, timeout=timeout)
        self.max_values = max_values
        self.max_rows = max_rows
        self.max_answers = max_answers
        self.describe_quantities = True
        super().__init__(self.action_set(actions), question, entities, analyzer, undo_empty, run_advice=run_advice, escalate=escalate)

    # -- Environment hooks -----------------------------------------------------
    def new_memory(self, entities: dict[str, str]) -> TableMemory:
        return TableMemory(entities=entities)

    def empty_query(self) -> TableQuery:
        return self.table.query()

    def backend_counters(self) -> tuple[int, float]:
        return (self.executor.queries, self.executor.seconds)

    def arguments(self, call: ActionCall) -> list[Arg]:
        """The call's arguments, re-split for the SQL actions (see :func:`~pyql_sql.actions.regroup_arguments`)."""
        return regroup_arguments(call, self.table)

    def remember(self, record: StepRecord) -> None:
        super().remember(record)
        if record.action == "get_column" and isinstance(record.result, ColumnValues):
            column = record.args.get("column")
            if isinstance(column, Column):
                self.memory.columns[column.index] = record.result
        self._sync()

    def undo(self) -> None:
        super().undo()
        self._sync()

    def look(self, targets: Iterable[Any]) -> list[str]:
        """Run ``get_column`` of each target column for the agent, keeping what it shows in the memory.

        Example:
            >>> from pyql_sql import Table
            >>> env = TableEnvironment(Table.from_rows(["Club"], [["Barcelona"], ["Sevilla"]]))
            >>> env.look([env.table.columns[0]]), env.memory.looked_at(0)
            (["get_column(Club): Column 'Club' (text): 2 distinct values in 2 rows: ['Barcelona', 'Sevilla']"], True)
        """
        out: list[str] = []
        if "get_column" not in self.actions.names:
            return out
        for column in targets:
            if not isinstance(column, Column):
                continue
            values = self.memory.columns.get(column.index)
            if values is None:
                try:
                    values = self.executor.get_column(column.index, limit=self.max_values)
                except PyQLError:
                    continue
                self.memory.columns[column.index] = values
                self.memory.version += 1
            out.append(f"get_column({column.header}): {values}")
        return out

    def suggested_looks(self, record: StepRecord) -> list[Any]:
        """The looks for a failed step: the column it names (its values show how they are written)."""
        column = record.args.get("column")
        return [column] if isinstance(column, Column) else []

    def _sync(self) -> None:
        self.memory.conditions = list(self.query.conditions)
        self.memory.answer = self.query.answer

    # -- observations ------------------------------------------------------------
    def observe(self, query: TableQuery) -> TableObservation:
        """Run a constructed query and describe what it keeps (see :func:`pyql_sql.observation.observe`).

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Score", "Goal"], [["1–0", "1"], ["2–0", "2"], ["3–0", "30"]])
            >>> env = TableEnvironment(t)
            >>> print(env.observe(t.query().add_condition("Goal", "<", 17).set_answer("Score")))
            The column Score has 2 values in the rows kept: ['1–0', '2–0']
            >>> env.observe(t.query().add_condition("Goal", ">", 99)).is_empty
            True
        """
        return observe(self.executor, query, max_rows=self.max_rows, max_values=self.max_values)

    # -- results -------------------------------------------------------------------
    def answers(self) -> list[Answer]:  # type: ignore[override]
        """The answers after ``execute()`` (empty before; NULL results left out).

        Example:
            >>> from pyql_sql import Table
            >>> env = TableEnvironment(Table.from_rows(["a"], [["x"]]))
            >>> env.answers()
            []
        """
        if not isinstance(self.final, list):
            return []
        return [a for a in self.final if isinstance(a, Answer) and a.value is not None]

    def final_result(self) -> FinalResult:
        """The answers (as on the SPARQL side) and the SQL.

        The SQL is the display form in the SQLite dialect: the table's real
        headers and name, values as literals (text equality is case-insensitive
        when executed; the display does not show that).

        Example:
            >>> from pyql_sql import Table
            >>> env = TableEnvironment(Table.from_rows(["a"], [["x"]], name="T"))
            >>> env.final_json()
            {'answers': [], 'sql': 'SELECT "a" FROM "T"'}
        """
        return FinalResult(
            [{"value": answer_text(a.value), "label": a.label} for a in self.answers()],
            self.language,
            self.query.text(),
        )

    def describe_table(self) -> str:
        """The table's description for a prompt (name, rows, headers and types).

        Example:
            >>> from pyql_sql import Table
            >>> TableEnvironment(Table.from_rows(["Game"], [["6"]], name="Games")).describe_table()
            "Table 'Games' (1 rows). Columns: 'Game' (real)."
        """
        return self.table.describe()
