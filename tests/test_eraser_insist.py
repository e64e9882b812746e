"""An empty answer can be right: executing again right after the guideline is accepted."""

from __future__ import annotations

from correction import Eraser
from pyql.kb import KB
from pyql.environment.sparql import SparqlEnvironment
from pyql_sql import Table
from pyql_sql.environment import TableEnvironment

SETUP = [
    "get_relation(m.0crbvqz)",
    "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
    "add_filter(?c, =, m.0dkl7)",  # keeps nothing
]


def _empty_env() -> SparqlEnvironment:
    # The analyzer is fixed when the environment is built: the rules that would
    # stop the set-up (an unlinked filter value that keeps nothing) are off.
    eraser = Eraser(disabled={"unlinked_entity", "filter_empty", "empty_result"})
    env = SparqlEnvironment(
        KB.open("oxigraph:demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=eraser, undo_empty=False
    )
    assert all(r.ok for r in env.run(SETUP))
    return env


def test_sparql_execute_empty_then_insist() -> None:
    env = _empty_env()
    first = env.step("execute()")
    assert (first.ok, first.error) == (False, "execute_empty_result")
    second = env.step("execute()")
    assert second.ok and env.done and env.final_json()["answers"] == []


def test_a_step_in_between_means_execute_is_checked_again() -> None:
    """Only ``execute()`` right after the guideline insists; after other steps the empty answer is questioned again."""
    env = _empty_env()
    assert env.step("execute()").error == "execute_empty_result"
    look = env.step("get_relation(?c)")  # a failed look in between (?c has no values)
    assert (look.ok, look.error) == (False, "get_relation_empty")
    assert env.step("set_answer(?c)").ok  # a kept step in between
    again = env.step("execute()")
    assert (again.ok, again.error, env.done) == (False, "execute_empty_result", False)


def test_sql_execute_empty_then_insist() -> None:
    # The kept row has no team: the set-up is not empty, the answer is.
    table = Table.from_rows(["Team", "Silver"], [[None, "0"], ["B", "2"]])
    env = TableEnvironment(table, analyzer=Eraser(), undo_empty=False)
    assert all(r.ok for r in env.run(["get_column(Silver)", "add_condition(Silver, <, 1)", "set_answer(Team, None)"]))
    first = env.step("execute()")
    assert (first.ok, first.error) == (False, "sql_empty_result")
    assert env.step("execute()").ok and env.done and env.final_json()["answers"] == []
