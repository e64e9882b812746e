"""INSERT/UPDATE steps on a table copy, their errors, the dbbench state scoring and the choose list's change steps."""

from __future__ import annotations

import json
import sqlite3
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.evaluation.datasets.dbbench import gold_state, state_denotation
from agent.evaluation.datasets.loading import load_dataset
from agent.evaluation.environments import open_environment
from pyql_sql import Table
from pyql_sql.errors import MutationArityError, MutationError, MutationTypeError, SQLExecutionError, UnknownColumnError
from pyql_sql.loaders import load_sqlite_table
from pyql_sql.mutation import TableState, parse_assignments, state_fingerprint
from pyql_sql.mutation_steps import asks_change, mutation_next_steps, value_pairs
from pyql_sql.next_steps import table_next_steps
from pyql_sql.environment import TableEnvironment
from pyql_sql.writable_environment import STATE_PREFIX, WritableTableEnvironment
from tests.shared_data import needs_shared, shared_path
from tests.test_table_choose import follow_first_steps


def _standings() -> Table:
    return Table.from_rows(
        ["Position", "Club", "Wins", "Points"],
        [["1", "FSK Anyksciai", "12", "37"], ["2", "Vidzgiris Alytus", "11", "35"]],
        name="Football Standings",
    )


def _item(rows: list[list[str]], gold: str, kind: str = "INSERT") -> dict:
    return {
        "description": "Change it.",
        "label": [gold],
        "type": [kind],
        "table": {"table_name": "Scores", "table_info": {
            "columns": [{"name": "Nation", "type": "TEXT"}, {"name": "Total", "type": "TEXT"}], "rows": rows}},
    }


def test_insert_binds_values_and_shows_the_row() -> None:
    t = _standings()
    state = TableState.of_table(t)
    done = state.insert(parse_assignments(t, "Position = 10; Club = O'Brien FC; ; Points = 29"))
    assert done.count == 1 and done.rows == ({"Position": "10", "Club": "O'Brien FC", "Wins": None, "Points": "29"},)
    assert "'O''Brien FC'" in done.sql  # a sqlglot literal, not pasted text
    assert len(state.rows()) == 3
    assert t.row_count == 2  # the sealed table is untouched


def test_update_changes_only_matching_rows_case_insensitively() -> None:
    t = _standings()
    state = TableState.of_table(t)
    done = state.update(parse_assignments(t, "Points = 40"), t.query().add_condition("Club", "=", "vidzgiris alytus").conditions)
    assert done.count == 1 and state.rows()[1][3] == "40" and state.rows()[0][3] == "37"
    bigger = state.update(parse_assignments(t, "Wins = 0"), t.query().add_condition("Points", ">", 38).conditions)
    assert bigger.count == 1 and state.rows()[1][2] == "0"


def test_update_without_condition_is_refused_unless_asked() -> None:
    t = _standings()
    state = TableState.of_table(t)
    with pytest.raises(MutationError, match="add_condition"):
        state.update(parse_assignments(t, "Points = 0"), ())
    assert state.update(parse_assignments(t, "Points = 0"), (), all_rows=True).count == 2


def test_errors_are_specific() -> None:
    t = _standings()
    with pytest.raises(UnknownColumnError, match="Club"):
        parse_assignments(t, "Clubb = x")
    with pytest.raises(MutationArityError, match="4 columns"):
        parse_assignments(t, "1; x; 3")
    with pytest.raises(MutationTypeError, match="holds numbers"):
        parse_assignments(t, "Wins = many")
    with pytest.raises(MutationTypeError, match="list"):
        parse_assignments(t, {"Wins": [1]})
    with pytest.raises(MutationError, match="twice"):
        parse_assignments(t, "Wins = 1; wins = 2")
    assert [a.value for a in parse_assignments(t, "Wins = 1985, 1993")] == ["1985, 1993"]  # digits: a number format


def test_user_file_is_never_written(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    conn = sqlite3.connect(db)
    conn.execute('CREATE TABLE "Scores" ("Nation" TEXT, "Total" TEXT)')
    conn.execute("INSERT INTO Scores VALUES ('Japan', '1')")
    conn.commit()
    conn.close()
    env = WritableTableEnvironment(load_sqlite_table(str(db)), question="Add Peru.")
    assert env.step("insert_row(Nation = Peru; Total = 2)").error is None
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM Scores").fetchone()[0] == 1


def test_environment_steps_and_final_state() -> None:
    env = WritableTableEnvironment(_standings())
    assert env.step("update_rows(Points = 1)").error == "bad_mutation"
    env.step("add_condition(Club, =, FSK Anyksciai)")
    record = env.step("update_rows(Points = 38; Wins = 13)")
    assert record.error is None and "1 row updated" in record.observation
    final = env.final_json()
    assert final["answers"][0]["value"] == STATE_PREFIX + env.state.fingerprint()
    assert final["sql"].startswith('UPDATE "Football Standings" SET')


def test_read_only_environment_has_no_change_actions() -> None:
    assert "insert_row" not in TableEnvironment(_standings()).actions.names
    env = TableEnvironment(_standings(), question="Insert a new row with club 'X' and points 3.")
    assert not any(s.action.startswith("insert_row") for s in table_next_steps(env))


def test_gold_state_matches_the_agents_state_and_agentbench_hash() -> None:
    rows = [["Japan", "22.1"], ["Russia", "22.950"]]
    gold = gold_state(_item(rows, "UPDATE `Scores` SET `Total` = '22.950' WHERE `Nation` = 'Japan'", "UPDATE"))
    t = TableState.from_dbbench(_item(rows, ""))
    t.run_sql("UPDATE Scores SET Total = '22.950' WHERE Nation = 'Japan'", dialect="sqlite")
    assert gold == STATE_PREFIX + t.fingerprint()
    # AgentBench: md5 over the sorted first five hex digits of each row's md5(CONCAT_WS(',', ...))
    assert t.fingerprint() == state_fingerprint([("Russia", "22.950"), ("Japan", "22.950")])
    assert state_denotation([{"value": gold}], [gold]) and not state_denotation([{"value": "Japan"}], [gold])


def test_malformed_gold_is_unscorable_not_wrong(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    good = _item([["Japan", "1"]], "INSERT INTO `Scores` VALUES ('Peru', '2')")
    bad = _item([["Japan", "1"]], "INSERT INTO `Scores` (`Nope`) VALUES ('2')")
    p.write_text("\n".join(json.dumps(r) for r in (good, bad)))
    ds = load_dataset(str(p))
    assert [i["id"] for i in ds] == ["d-0"] and ds.skipped == 1
    assert any("unscorable" in n and "Nope" in n for n in ds.notes)
    with pytest.raises(SQLExecutionError):
        TableState.from_dbbench(bad).run_sql("UPDATE", dialect="mysql")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=6), st.one_of(st.none(), st.text(max_size=6))), max_size=8), st.randoms())
def test_fingerprint_ignores_row_order(rows: list[tuple[str, str | None]], rnd) -> None:
    # deliberate: NULL cells are left out of a row's text (MySQL's CONCAT_WS), so ('a', None) and ('a',) hash alike
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert state_fingerprint(rows) == state_fingerprint(shuffled)


def test_change_cues() -> None:
    assert asks_change("Insert into the table the club 'X'.") == "insert"
    assert asks_change("Update the score of Japan to 3.") == "update"
    assert asks_change("Which club has 3 wins?") is None


def test_value_pairs_name_before_and_after() -> None:
    t = _standings()
    q = "Insert a new record with position 10, club 'FK Trakai', 9 wins and points 29."
    assert [(t.columns[c].header, v.text) for c, v in value_pairs(t, q)] == [
        ("Position", "10"), ("Club", "'FK Trakai'"), ("Wins", "9"), ("Points", "29")]


def test_update_offers_grounded_condition_then_update() -> None:
    env = WritableTableEnvironment(_standings(), question="Change the points of Vidzgiris Alytus to 36.")
    first = mutation_next_steps(env)
    assert first[0].action == "add_condition(Club, =, Vidzgiris Alytus)"
    env.step(first[0].action)
    assert [s.action for s in mutation_next_steps(env)] == ["update_rows(Points = 36)"]
    assert table_next_steps(env)[0].action == "update_rows(Points = 36)"


@needs_shared("dbbench")
def test_dbbench_dev_changes_first_choices() -> None:
    """The 20 INSERT/UPDATE items of dbbench dev (in-sample), taking the first listed step every time."""
    right = 0
    changes = [i for i in load_dataset(str(shared_path("dbbench"))) if i["kind"] in ("INSERT", "UPDATE")]
    for item in changes:
        env = open_environment(types.SimpleNamespace(feedback="eraser"), item, agent=True)
        assert isinstance(env, WritableTableEnvironment)
        follow_first_steps(env)
        right += state_denotation(env.final_result().answers if env.done else [], item["answers"])
    assert len(changes) == 20 and right >= 14


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Insert into Standings (Club, Points) values ('FK Trakai', '29')", [("Club", "FK Trakai"), ("Points", "29")]),
        ("Add ('11', 'FK Trakai', '9', '29') to the table.", [("Position", "11"), ("Club", "FK Trakai"), ("Wins", "9"), ("Points", "29")]),
        ("Insert a row with Club: FK Trakai, Wins: 9, and Points: 29.", [("Club", "FK Trakai"), ("Wins", "9"), ("Points", "29")]),
        ("Insert 'FK Trakai' for Club, '9' for Wins and '29' for Points.", [("Club", "FK Trakai"), ("Wins", "9"), ("Points", "29")]),
        ("Insert values for Club, Wins, and Points as 'FK Trakai', '9', and '29'.", [("Club", "FK Trakai"), ("Wins", "9"), ("Points", "29")]),
        ("Add a row with Club as FK Trakai and Points as 29.", [("Club", "FK Trakai"), ("Points", "29")]),
    ],
)
def test_rows_written_out_as_lists(question: str, expected: list[tuple[str, str]]) -> None:
    t = _standings()
    assert [(t.columns[c].header, str(v.value)) for c, v in value_pairs(t, question) if v.kind == "quoted"] == expected


def test_update_rows_written_with_where_or_of_to() -> None:
    env = WritableTableEnvironment(_standings(), question="Set the Points column to 40 where the Club column equals Vidzgiris Alytus.")
    assert [s.action for s in mutation_next_steps(env)] == ["add_condition(Club, =, Vidzgiris Alytus)"]
    env = WritableTableEnvironment(_standings(), question="Change the points of Vidzgiris Alytus to 36 in the table.")
    assert [s.action for s in mutation_next_steps(env)] == ["add_condition(Club, =, Vidzgiris Alytus)"]
    env = WritableTableEnvironment(_standings(), question="Update the Points to 29 for the club with position 2.")
    assert not any("Points, =, 29" in s.action for s in mutation_next_steps(env))  # a value set is no row's condition


def test_update_rows_refuses_steps_it_cannot_honour() -> None:
    env = WritableTableEnvironment(_standings(), question="q")
    assert env.step("add_row(1)").ok
    record = env.step("update_rows(Points = 1)")
    assert not record.ok and "add_row(1)" in record.observation and "Undo those steps" in record.observation
