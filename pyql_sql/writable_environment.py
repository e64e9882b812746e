"""A table environment whose episodes may also change the table: ``insert_row`` and ``update_rows``.

:class:`WritableTableEnvironment` is a :class:`~pyql_sql.environment.TableEnvironment`
whose action set (:class:`MutationActions`) adds two terminal steps:

``insert_row(Column = value; Column = value)``
    inserts one row into a writable copy of the table (:class:`~pyql_sql.mutation.TableState`).
``update_rows(Column = value; ...)``
    sets those columns in the rows that meet the query's conditions
    (``add_condition`` steps first pick the rows).

Each ends the episode; its observation says how many rows changed and shows
them as they now are. The episode's final result is then the table's state:
one answer ``table-state:<md5>`` (AgentBench's table hash,
:meth:`~pyql_sql.mutation.TableState.fingerprint`) and the statements as its SQL.
The user's table is never written: the copy is made when the first change runs.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Nation", "Total"], [["Japan", "22.1"], ["Russia", "22.950"]], name="Scores")
    >>> env = WritableTableEnvironment(t, question="Japan's total is now 22.950.")
    >>> _ = env.step("add_condition(Nation, =, Japan)")
    >>> print(env.step("update_rows(Total = 22.950)").observation)
    1 row updated: {'Nation': 'Japan', 'Total': '22.950'}
    >>> env.final_json()["answers"][0]["value"].startswith("table-state:")
    True
    >>> env.step("insert_row(Nation = Peru)").error  # the episode has ended
    'bad_query'
"""

from __future__ import annotations

from typing import Any, ClassVar

from grammars.vocabulary import TABLE_ACTION_ORDER
from pyql.action_parser import ActionCall, Arg, split_args
from pyql.environment.actions import StepResult, action
from pyql.environment import FinalResult
from pyql.environment.grounding import Grounding
from pyql.environment.next_steps import NextStep

from .actions import TableActions, TableContext
from .environment import TableEnvironment
from .errors import MutationError
from .mutation import TableState, parse_assignments
from .steps import AnswerStep, ConditionStep
from .mutation_steps import asks_change, mutation_next_steps

__all__ = ["MUTATION_ACTIONS", "STATE_PREFIX", "MutationActions", "WritableTableEnvironment"]

#: the actions that change the table
MUTATION_ACTIONS: tuple[str, ...] = ("insert_row", "update_rows")

#: the answer of an episode that changed the table starts with this
STATE_PREFIX = "table-state:"


class MutationActions(TableActions):
    """The table actions plus ``insert_row`` and ``update_rows`` (on a writable copy)."""

    title = "PyQL actions (SQL version, with changes to the table)"

    def order(self) -> list[str]:
        return [*TABLE_ACTION_ORDER, *MUTATION_ACTIONS]

    @action("terminate", values="value")
    def insert_row(self, env: TableContext, values: str) -> StepResult:
        """Insert one new row into the table, and end.

        Write each value as Column = value, separated by ';' (values may contain commas; quotes are optional, but a value holding ';' is quoted: Notes = "a; b"). Columns not given stay empty.

        Args:
            values: the new row, e.g. Club = FK Trakai; Points = 29.

        Example: insert_row(Club = FK Trakai; Points = 29)
        """
        state = _state(env)
        done = state.insert(parse_assignments(env.table, values))
        return StepResult(result=done, observation=str(done), empty=done.count == 0, done=True)

    @action("terminate", values="value")
    def update_rows(self, env: TableContext, values: str) -> StepResult:
        """Change columns of the rows that meet the query's conditions (add_condition first), and end.

        Write each new value as Column = value, separated by ';' (a value holding ';' is quoted: Notes = "a; b"). Only the rows the conditions keep are changed.

        Args:
            values: the new values, e.g. E Score = 7.400; Total = 22.950.

        Example: update_rows(Total = 22.950)
        """
        beyond = [s.action() for s in env.query.steps if not isinstance(s, AnswerStep) and (
            not isinstance(s, ConditionStep) or s.column.index >= len(env.table.columns))]
        if beyond:
            raise MutationError(
                "update_rows changes the rows that add_condition steps on the table's own columns pick; the query also has "
                f"{', '.join(beyond)}. Undo those steps, then pick the rows with add_condition(column, op, value)."
            )
        state = _state(env)
        done = state.update(parse_assignments(env.table, values), env.query.conditions)
        return StepResult(result=done, observation=str(done), empty=done.count == 0, done=True)


def _state(env: Any) -> TableState:
    """The environment's writable copy, made on first use."""
    if getattr(env, "state", None) is None:
        env.state = TableState.of_table(env.table, shown=env.max_rows)
    return env.state  # type: ignore[no-any-return]


class WritableTableEnvironment(TableEnvironment):
    """A :class:`~pyql_sql.environment.TableEnvironment` that may also insert and update rows (on a copy).

    Attributes:
        state: the writable copy once a change ran, else None.
    """

    action_set: ClassVar[type[TableActions]] = MutationActions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.state: TableState | None = None
        super().__init__(*args, **kwargs)

    def fork_state(self, twin: Any) -> None:
        """A fork writes its own copy of the table (:meth:`~pyql_sql.mutation.TableState.copy`): a change in one never shows in the other.

        Example:
            >>> from pyql_sql import Table
            >>> env = WritableTableEnvironment(Table.from_rows(["a"], [["1"]], name="T"))
            >>> twin = env.fork()
            >>> twin.step("insert_row(a = 2)").ok, env.state is None, twin.state.rows()
            (True, True, [('1',), ('2',)])
        """
        super().fork_state(twin)
        if self.state is not None:
            twin.state = self.state.copy()

    def arguments(self, call: ActionCall) -> list[Arg]:
        """A change's values are one argument, commas and all; other actions as the table side splits them.

        Example:
            >>> from pyql_sql import Table
            >>> from pyql.action_parser import parse_action
            >>> env = WritableTableEnvironment(Table.from_rows(["a", "b"], [["1", "2"]]))
            >>> [a.value for a in env.arguments(parse_action("insert_row(a = 1, 2; b = 3)"))]
            ['a = 1, 2; b = 3']
        """
        if call.name in MUTATION_ACTIONS and len(call.args) > 1:
            text = split_args(call, 1)[0]
            return [Arg("text", text, raw=text, span=(call.args[0].span[0], call.args[-1].span[1]))]
        return super().arguments(call)

    def change_steps(self, grounding: Grounding | None = None) -> list[NextStep]:
        """The change steps the question asks for now (:func:`~pyql_sql.mutation_steps.mutation_next_steps`).

        Example:
            >>> from pyql_sql import Table
            >>> env = WritableTableEnvironment(Table.from_rows(["Club", "Points"], [["A", "3"]]),
            ...     question="Insert a new row with club 'FK Trakai' and points 29.")
            >>> [s.action for s in env.change_steps()]
            ['insert_row(Club = FK Trakai; Points = 29)']
        """
        return mutation_next_steps(self, grounding)

    def asks_change(self) -> bool:
        """Whether the question asks for a change of the table (:func:`~pyql_sql.mutation_steps.asks_change`): the
        choose list then plans no question shape (a part, a row's place) before the change.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Club"], [["A"]])
            >>> WritableTableEnvironment(t, question="Insert a club.").asks_change(), WritableTableEnvironment(t, question="Which club?").asks_change()
            (True, False)
        """
        return asks_change(self.question or "") is not None

    def final_result(self) -> FinalResult:
        """After a change: the table's state (``table-state:<md5>``) and the statements; else the answers.

        Example:
            >>> from pyql_sql import Table
            >>> WritableTableEnvironment(Table.from_rows(["a"], [["x"]], name="T")).final_json()
            {'answers': [], 'sql': 'SELECT "a" FROM "T"'}
        """
        if self.state is None or not self.state.statements:
            return super().final_result()
        value = STATE_PREFIX + self.state.fingerprint()
        return FinalResult([{"value": value, "label": "the table after the changes"}], self.language, "; ".join(self.state.statements))
