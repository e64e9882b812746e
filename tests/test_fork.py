"""Environment.fork(): two branches of one environment never see each other's steps.

Each side's test takes a common start, forks it twice, steps the two forks
in alternation, and checks each fork against an environment of its own that
took the start and that fork's steps alone: the same query, history,
memory, final result (and, for a writable table, the same rows; for
AgentBench's functions, the same ``#k`` variables). The environment forked
from is left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from itertools import zip_longest
from typing import Any, Callable

import pytest

from pyql.environment import Environment, Memory, StepRecord
from pyql.environment.actions import ActionSet, StepResult, action
from pyql.environment.agentbench import AgentBenchEnvironment
from pyql.environment.sparql import SparqlEnvironment
from pyql.kb import KB
from pyql_sql import Table
from pyql_sql.environment import TableEnvironment
from pyql_sql.writable_environment import WritableTableEnvironment

RACHEL = {"Rachel": "m.0crbvqz"}


def _memory(env: Environment) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(env.memory):
        value = getattr(env.memory, f.name)
        out[f.name] = [(r.index, r.text, r.ok) for r in value] if f.name == "steps" else value
    return out


def _state(env: Environment) -> dict[str, Any]:
    """What a branch has: its query, its steps as recorded, its memory, its end (and a side's own state)."""
    out = {
        "query": env.query.text(),
        "history": [(r.index, r.text, r.ok, r.error, r.observation, r.repeats, r.escalation) for r in env.history],
        "memory": _memory(env),
        "done": env.done,
        "final": env.final_json(),
    }
    if isinstance(env, WritableTableEnvironment):
        out["rows"] = env.state.rows() if env.state is not None else None
    if isinstance(env, AgentBenchEnvironment):
        out["variables"] = [(v.index, v.form) for v in env.variables]
    return out


def _run(env: Environment, actions: list[str]) -> Environment:
    for line in actions:
        env.step(line)
    return env


def _check_alternation(make: Callable[[], Environment], start: list[str], left: list[str], right: list[str]) -> None:
    env = _run(make(), start)
    before = _state(env)
    a, b = env.fork(), env.fork()
    assert type(a) is type(env) and a is not env and a.memory is not env.memory
    for one, other in zip_longest(left, right):
        if one is not None:
            a.step(one)
        if other is not None:
            b.step(other)
    assert _state(a) == _state(_run(make(), start + left))
    assert _state(b) == _state(_run(make(), start + right))
    assert _state(env) == before  # the environment forked from took none of their steps


def test_sparql_forks_step_apart(demo_kb: KB) -> None:
    _check_alternation(
        lambda: SparqlEnvironment(demo_kb, question="what category is tropical storm rachel?", entities=RACHEL),
        ["get_relation(m.0crbvqz)"],
        [
            "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
            "add_fact(?x, no.such.relation, ?y)",
            "add_fact(?x, no.such.relation, ?y)",  # a repeat on this branch only: escalates here, not on the other
            "set_answer(?c)",
            "execute()",
        ],
        [
            "add_fact(m.0crbvqz, meteorology.tropical_cyclone.tropical_cyclone_season, ?s)",
            "get_relation(?s)",
            "add_fact(?x, no.such.relation, ?y)",
            "execute()",
        ],
    )


def test_sparql_forks_keep_their_own_bounded_rows(demo_kb: KB) -> None:
    env = SparqlEnvironment(demo_kb)
    _run(env, ["add_fact(?c, meteorology.tropical_cyclone.formed, ?t)", "add_max(?t)"])
    rows = env.bounded_rows
    twin = env.fork()
    twin.step("add_fact(?c, meteorology.tropical_cyclone.category, ?k)")
    assert rows is not None and env.bounded_rows is rows and twin.bounded_rows is not rows


def test_table_forks_step_apart() -> None:
    table = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"], ["8", "Athlone Town"]], name="Games")
    _check_alternation(
        lambda: TableEnvironment(table, question="How many games with athlone town as the opponent?"),
        ["get_column(Game)"],
        ["get_column(Opponent)", "add_condition(Opponent, =, athlone town)", "set_answer(Game, COUNT)", "execute()"],
        ["add_condition(Game, >, 6)", "add_condition(Oponent, =, x)", "set_answer(Opponent)", "execute()"],
    )


def test_writable_table_forks_write_their_own_copy() -> None:
    table = Table.from_rows(["Nation", "Total"], [["Japan", "22.1"], ["Russia", "22.950"]], name="Scores")
    make = lambda: WritableTableEnvironment(table, question="Japan's total is now 22.950.")  # noqa: E731
    _check_alternation(
        make,
        ["get_column(Nation)"],
        ["add_condition(Nation, =, Japan)", "update_rows(Total = 22.950)"],
        ["insert_row(Nation = Peru; Total = 1.5)"],
    )
    # a branch forked after a change writes on its own copy of the changed table
    env = _run(make(), ["insert_row(Nation = Peru; Total = 1.5)"])
    twin = env.fork()
    twin.state.run_sql("UPDATE Scores SET Total = '0' WHERE Nation = 'Peru'")  # type: ignore[union-attr]
    assert ("Peru", "1.5") in env.state.rows() and ("Peru", "0") in twin.state.rows()  # type: ignore[union-attr]


def test_agentbench_forks_number_their_own_variables(demo_kb: KB) -> None:
    _check_alternation(
        lambda: AgentBenchEnvironment(demo_kb, question="what category is tropical storm rachel?", entities=RACHEL),
        ["get_relations(Rachel)"],
        ["get_neighbors(Rachel, meteorology.tropical_cyclone.category)", "get_relations(#0)", "Final Answer: #0"],
        ["get_neighbors(Rachel, meteorology.tropical_cyclone.tropical_cyclone_season)", "get_relations(#0)", "count(#0)", "Final Answer: #1"],
    )


# a memory whose steps change nested containers in place


@dataclass
class _NotesMemory(Memory):
    notes: dict[str, list[set[int]]] = field(default_factory=dict)


class _Notes:
    steps = ()
    variables = ()
    answer = None

    def undo(self) -> _Notes:
        return self

    def actions(self) -> list[str]:
        return []

    def text(self) -> str:
        return "notes"


class _NoteActions(ActionSet):
    @action("construct")
    def note(self, env: Any, key: str) -> StepResult:
        """Note one more step under a key.

        Args:
            key: where.
        """
        return StepResult(query=env.query, observation=f"noted {key}")


class _NoteEnvironment(Environment):
    side = language = "notes"
    memory: _NotesMemory

    def new_memory(self, entities: dict[str, str]) -> _NotesMemory:
        return _NotesMemory(entities=entities)

    def empty_query(self) -> _Notes:
        return _Notes()

    def remember(self, record: StepRecord) -> None:
        super().remember(record)
        bucket = self.memory.notes.setdefault(record.args["key"].value, [set()])
        bucket[0].add(record.index)  # in place, two containers deep
        bucket.append({record.index})


@pytest.mark.parametrize("first", ["a", "b"])
def test_nested_containers_changed_in_place_stay_apart(first: str) -> None:
    env = _run(_NoteEnvironment(_NoteActions()), ["note(a)"])
    a, b = env.fork(), env.fork()
    for branch in (a, b) if first == "a" else (b, a):
        branch.step("note(a)")
    a.step("note(a)")
    assert env.memory.notes == {"a": [{1}, {1}]}
    assert b.memory.notes == {"a": [{1, 2}, {1}, {2}]}
    assert a.memory.notes == {"a": [{1, 2, 3}, {1}, {2}, {3}]}
