"""The SQL step environment and ``pyql run --db/--table-json``, as an LLM and a user use them.

Episodes run on the tables of AgentBench's dbbench WikiSQL items
(``shared/data/wikisql_dbbench/dev.jsonl`` next to the repository; those
tests skip when it is absent) and on small inline tables.
"""

from __future__ import annotations

import inspect
import io
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grammars.vocabulary import TABLE_ACTION_ORDER
from pyql.action_parser import parse_action
from pyql.environment.actions import render_docs
from pyql.cli import main
from pyql_sql import Table, label_match
from pyql_sql.actions import TableActions
from pyql_sql.environment import TableEnvironment, TableMemory
from pyql_sql.loaders import load_sqlite_table, load_table_json
from tests.shared_data import needs_shared, shared_path

ROOT = Path(__file__).resolve().parents[1]
DEV = shared_path("dbbench")
needs_dev = needs_shared("dbbench")

STEP_KEYS = {"step", "action", "ok", "error", "observation"}


def dev_item(i: int) -> dict[str, Any]:
    return json.loads(DEV.read_text(encoding="utf-8").splitlines()[i])


def pyql(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyql.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def people() -> Table:
    return Table.from_rows(
        ["Name", "Goals, total", "Lyrics theme/style", "Club"],
        [
            ["Smith, John", "1,174", "Romance", "Ajax"],
            ["Doe, Jane", "12", "Love", "UCD"],
            ["Roe, Rick", "7", "Romance", "Ajax"],
        ],
        name="People",
    )


# ---------------------------------------------------------------------------
# Whole episodes


@needs_dev
def test_full_episode_on_a_dev_table_matches_the_label() -> None:
    item = dev_item(5)  # Class of d, Frequency MHz < 107.7, ERP W < 232 -> call signs
    env = TableEnvironment(Table.from_dbbench(item), question=item["description"])
    replies = [
        "Thought 1: I need the values of Class.\nAction 1: get_column(class)",
        "Thought 2: d is written D.\nAction 2: add_condition(Class, =, D)",
        "Action 3: add_condition(Frequency MHz, <, 107.7)",
        "Action 4: `add_condition(ERP W, <, 232)`",
        "Action 5: set_answer(Call sign, None)",
        "Thought 6: done.\nAction 6: execute()",
    ]
    records = env.run(replies)
    assert [r.ok for r in records] == [True] * 6, [r.observation for r in records if not r.ok]
    assert env.done
    assert label_match(env.answers(), item["label"])
    final = env.final_json()
    assert set(final) == {"answers", "sql"}
    assert all(set(a) == {"value", "label"} and isinstance(a["value"], str) for a in final["answers"])
    assert final["sql"] == (
        'SELECT "Call sign" FROM "Radio Stations" WHERE "Class" = \'D\' AND "Frequency MHz" < 107.7 AND "ERP W" < 232'
    )


@needs_dev
@pytest.mark.parametrize(
    ("i", "lines"),
    [
        (10, ["get_column(Fastest Lap)", "add_condition(fastest lap, =, takashi kogure)", "set_answer(Round, MIN)", "execute()"]),
        (12, ["add_condition(Record, =, 15-28)", "set_answer(attendance, max)", "execute()"]),
        (1, ["add_condition(Opponent, =, athlone town)", "set_answer(Game, COUNT)", "execute()"]),
    ],
)
def test_dev_episodes_give_the_label(i: int, lines: list[str]) -> None:
    item = dev_item(i)
    env = TableEnvironment(Table.from_dbbench(item))
    records = env.run(lines)
    assert all(r.ok for r in records), [r.observation for r in records]
    assert label_match(env.answers(), item["label"])


@pytest.mark.cli
@needs_dev
def test_pyql_run_table_json_contract(tmp_path: Path) -> None:
    item_file = tmp_path / "item.json"
    item_file.write_text(json.dumps(dev_item(2)), encoding="utf-8")
    actions = tmp_path / "actions.txt"
    actions.write_text(
        "get_column(Result)\n"
        "add_condition(Result, =, 2–1)\n"
        "add_condition(Competition, =, friendly)\n"
        "add_condition(Goal, <, seventeen)\n"
        "add_condition(Goal, <, 17)\n"
        "set_answer(Score)\n"
        "execute()\n",
        encoding="utf-8",
    )
    result = pyql("run", "--table-json", str(item_file), "--actions", str(actions), "--json")
    assert result.returncode == 4, result.stderr  # a step failed (issue 25): its answers are those without it
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    steps, final = lines[:-1], lines[-1]
    assert [s["step"] for s in steps] == list(range(1, 8))
    for s in steps:
        assert set(s) == STEP_KEYS  # the same keys as the SPARQL side
        assert isinstance(s["ok"], bool) and isinstance(s["observation"], str)
    assert [s["ok"] for s in steps] == [True, True, True, False, True, True, True]
    assert steps[3]["error"] == "sql_type_mismatch"
    assert "the value seventeen is not a number" in steps[3]["observation"]
    assert final["answers"] == [{"value": "1–0", "label": None}, {"value": "2–0", "label": None}]
    assert final["sql"] == (
        'SELECT "Score" FROM "Football Matches" WHERE "Result" = \'2–1\' AND "Competition" = \'friendly\' AND "Goal" < 17'
    )
    assert final["counters"]["steps"] == 7 and final["counters"]["kb_queries"] > 0


@pytest.mark.cli
def test_pyql_run_table_json_transcript_and_raw_feedback(tmp_path: Path) -> None:
    table = tmp_path / "t.json"
    table.write_text(json.dumps({"header": ["Name", "Goals"], "rows": [["Smith, John", "3"], ["Doe", "4"]], "name": "G"}))
    result = pyql(
        "run", "--table-json", str(table), "--actions", "-", "--feedback", "raw",
        stdin="add_condition(Name, =, Smith, John)\nadd_condition(Nmae, =, x)\nset_answer(Goals, SUM)\nexecute()\n",
    )
    assert result.returncode == 4, result.stderr  # a step failed (issue 25): its answers are those without it
    assert "Action 1: add_condition(Name, =, Smith, John)" in result.stdout
    assert "Observation 2 (error: unknown_column): Error: Unknown column 'Nmae'. Did you mean 'Name'?" in result.stdout
    assert "Answers: 3 [INCOMPLETE: 1 step failed (action 2) and was undone: these are the answers of the query without it]\n" in result.stdout
    assert """SELECT SUM("Goals") FROM "G" WHERE "Name" = 'Smith, John'""" in result.stdout


# ---------------------------------------------------------------------------
# Arguments as an LLM writes them


@pytest.mark.parametrize(
    "written",
    [
        "Lyrics theme/style",
        "lyrics THEME/style",
        "`Lyrics theme/style`",
        '"Lyrics theme/style"',
        "'lyrics theme/style'",
        "Lyrics  theme / style",
        "LyricsThemeStyle",
    ],
)
def test_columns_are_matched_against_real_headers(written: str) -> None:
    env = TableEnvironment(people())
    record = env.step(f"add_condition({written}, =, Romance)")
    assert record.ok, record.observation
    assert record.args["column"].header == "Lyrics theme/style"
    assert record.observation.startswith("2 rows match the conditions")


def test_values_and_columns_with_commas() -> None:
    env = TableEnvironment(people())
    r1 = env.step("add_condition(Name, =, Smith, John)")
    assert r1.ok and r1.args["value"] == "Smith, John"
    assert env.query.conditions[0].value == "Smith, John"
    r2 = env.step("get_column(Goals, total)")
    assert r2.ok and r2.args["column"].header == "Goals, total"
    r3 = env.step("set_answer(Goals, total, SUM)")
    assert r3.ok and r3.observation == "SUM(Goals, total) = 1174"
    env2 = TableEnvironment(people())
    r4 = env2.step("add_condition(Goals, total, >, 1,000)")
    assert r4.ok and (r4.args["column"].header, r4.args["op"], r4.args["value"]) == ("Goals, total", ">", "1,000")
    assert r4.observation.startswith("1 row matches")
    assert TableEnvironment(people()).step('add_condition(Name, =, "Doe, Jane")').ok


def test_operators_and_aggregations_as_written() -> None:
    env = TableEnvironment(people())
    assert env.step("add_condition(Club, ==, ajax)").args["op"] == "="
    assert env.step("add_condition(Goals total, <>, 7)").args["op"] == "!="
    record = env.step("set_answer(Name)")  # the aggregation may be left out
    assert record.ok and record.args == {"column": people().columns[0].__class__(0, "Name", "text", "c0", "n0")}
    assert env.step("set_answer(Name, none)").args["aggregation"] is None
    assert env.step('set_answer(Name, "count")').args["aggregation"] == "COUNT"
    assert env.step("execute()").observation == "The answer is [1]"


def test_duplicated_headers_are_named_by_number() -> None:
    table = Table.from_rows(["Name", "Name", "Year"], [["a", "b", "2001"], ["c", "d", "2002"]])
    env = TableEnvironment(table)
    record = env.step("get_column(Name)")
    assert record.error == "ambiguous_column"
    assert "#0, #1" in record.observation
    record = env.step("get_column(#1)")
    assert record.ok and record.observation.endswith("['b', 'd']")


# ---------------------------------------------------------------------------
# Failures are undone; observations; memory


def test_failed_steps_leave_the_query_unchanged() -> None:
    env = TableEnvironment(people())
    assert env.step("add_condition(Club, =, Ajax)").ok
    before = env.query
    failures = {
        "add_condition(Clubs and teams, =, Ajax)": "unknown_column",
        "add_condition(Club, LIKE, Aj)": "bad_operator",
        "set_answer(Name, MEDIAN)": "bad_aggregation",
        "add_condition(Goals total, <, many)": "bad_value",
        "add_condition(Club, =, Nowhere)": "empty_result",
        "add_condition(Club)": "wrong_arity",
        "drop_table(Club)": "invalid_action",
        "add_condition(Club, =, Ajax": "action_syntax",
        # text after the call is an error, not the call before it run alone
        "add_condition(Club, =, x'); DROP TABLE games; --)": "action_syntax",
        "add_condition(Club, =, Ajax) and more": "action_syntax",
        "execute()": "incomplete_query",
    }
    for line, error in failures.items():
        record = env.step(line)
        assert (record.ok, record.error) == (False, error), (line, record.observation)
        assert env.query is before, line
        assert record.query_before is before
    assert env.query.actions() == ["add_condition(Club, =, Ajax)"]
    assert [s.index for s in env.memory.steps] == [1]
    assert not env.done


def test_observations_are_capped_and_counted() -> None:
    rows = [[f"Player {i}", str(i % 7)] for i in range(50)]
    env = TableEnvironment(Table.from_rows(["Player", "Goals"], rows, name="T"), max_values=3, max_rows=2)
    obs = env.step("get_column(Player)").observation
    assert obs == "Column 'Player' (text): 50 distinct values in 50 rows (first 3 shown): ['Player 0', 'Player 1', 'Player 2']"
    obs = env.step("add_condition(Goals, >, 4)").observation
    assert obs.startswith("14 rows match the conditions (first 2 shown): {'Player': 'Player 5', 'Goals': '5'}; ")
    obs = env.step("set_answer(Player)").observation
    assert obs == "The column Player has 14 values in the rows kept (first 3 shown): ['Player 5', 'Player 6', 'Player 12']"
    assert env.step("set_answer(Goals, AVG)").observation == "AVG(Goals) = 5.5"
    record = env.step("execute()")
    assert record.ok and record.done and record.observation == "The answer is [5.5]"
    assert env.final_json()["answers"] == [{"value": "5.5", "label": None}]
    assert env.step("get_column(Player)").error == "bad_query"  # the episode is over


def test_memory_keeps_columns_conditions_and_answer() -> None:
    env = TableEnvironment(people())
    assert isinstance(env.memory, TableMemory)
    env.step("get_column(Club)")
    env.step("add_condition(Club, =, Ajax)")
    env.step("set_answer(Name, COUNT)")
    assert env.memory.looked_at(3) and not env.memory.looked_at(0)
    assert env.memory.columns[3].values == ["Ajax", "UCD"]
    assert [c.action() for c in env.memory.conditions] == ["add_condition(Club, =, Ajax)"]
    assert env.memory.answer is not None and env.memory.answer.action() == "set_answer(Name, COUNT)"
    env.undo()
    assert env.memory.answer is None and len(env.memory.conditions) == 1
    assert env.counters["kb_queries"] > 0


def test_restricted_actions_are_rejected() -> None:
    env = TableEnvironment(people(), actions=["add_condition", "set_answer", "execute"])
    assert env.step("get_column(Club)").error == "invalid_action"
    assert "get_column" not in render_docs(env.actions, "prompt")


# ---------------------------------------------------------------------------
# Documentation = accepted actions


@pytest.mark.cli
def test_docs_list_exactly_the_accepted_actions() -> None:
    result = pyql("docs", "--side", "sql", "--format", "prompt")
    assert result.returncode == 0, result.stderr
    documented = re.findall(r"^\d+\. `(\w+)\(", result.stdout, flags=re.M)
    marked = {
        name for name, fn in inspect.getmembers(TableActions, inspect.isfunction) if getattr(fn, "__pyql_action__", None)
    }
    assert set(documented) == marked == set(TableActions().names) == set(TABLE_ACTION_ORDER)
    assert len(documented) == len(marked)
    assert result.stdout.startswith(f"You can only choose actions from these {len(TABLE_ACTION_ORDER)} actions:")
    tools = json.loads(pyql("docs", "--side", "sql", "--format", "openai-tools").stdout)
    assert {t["function"]["name"] for t in tools} == marked
    condition = next(t for t in tools if t["function"]["name"] == "add_condition")
    assert condition["function"]["parameters"]["properties"]["op"]["enum"] == [">", "<", ">=", "<=", "=", "!=", "contains"]
    # every documented example parses and runs on a table with those columns (each on a fresh episode)
    table = Table.from_rows(
        ["Lyrics theme/style", "Game", "Player", "Date", "Won", "Lost", "Winner", "Gold", "Nation", "Goals", "Name"],
        [["Romance", "6", "Ann", "June 5, 2004", "10", "4", "Ajax", "5", "Japan", "142", "Ross Jenkins"],
         ["Love", "7", "Hank Stein", "May 1, 2005", "7", "9", "Ajax", "2", "China", "5", "Nigel Gibbs"]],
    )
    for spec in TableActions().specs():
        assert spec.summary and all(p.description for p in spec.params), spec.name
        assert parse_action(spec.example).name == spec.name
        env = TableEnvironment(table)
        if spec.name == "execute":
            env.step("set_answer(Game)")
        record = env.step(spec.example)
        assert record.ok, (spec.example, record.observation)
    # nothing else is accepted
    env = TableEnvironment(table)
    for name in ("convert", "order", "spec", "method", "observe", "__init__", "names", "get_relation", "add_fact"):
        assert env.step(f"{name}()").error == "invalid_action", name


# ---------------------------------------------------------------------------
# Loading tables for `pyql run`


def _write_db(path: Path, table: str, header: list[str], rows: list[list[Any]]) -> None:
    conn = sqlite3.connect(path)
    quoted = ", ".join('"' + h.replace('"', '""') + '"' for h in header)
    conn.execute(f'CREATE TABLE "{table}" ({quoted})')
    conn.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" for _ in header)})', rows)
    conn.commit()
    conn.close()


@pytest.mark.cli
@needs_dev
def test_pyql_run_db_with_real_headers(tmp_path: Path) -> None:
    item = dev_item(12)
    info = item["table"]["table_info"]
    db = tmp_path / "baseball.db"
    _write_db(db, "Baseball Team Record", [c["name"] for c in info["columns"]], info["rows"])
    _write_db(db, "other", ["x"], [["1"]])
    actions = tmp_path / "a.txt"
    actions.write_text("add_condition(Record, =, 15-28)\nset_answer(Attendance, MAX)\nexecute()\n")
    result = pyql("run", "--db", str(db), "--table", "Baseball Team Record", "--actions", str(actions), "--json")
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["answers"] == [{"value": "32502", "label": None}]
    assert label_match([a["value"] for a in final["answers"]], item["label"])
    assert final["sql"] == 'SELECT MAX("Attendance") FROM "Baseball Team Record" WHERE "Record" = \'15-28\''


@pytest.mark.cli
def test_wikisql_db_layout_reads_headers_from_the_sibling_tables_jsonl(tmp_path: Path) -> None:
    db = tmp_path / "dev.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE table_1_10015132_11 (col0 text, col1 real)")
    conn.execute("INSERT INTO table_1_10015132_11 VALUES ('antonio lang', 21.0)")
    conn.commit()
    conn.close()
    result = pyql("run", "--db", str(db), "--table", "table_1_10015132_11", "--actions", "-", stdin="get_column(col0)\n")
    assert result.returncode == 2
    assert "WikiSQL's anonymous columns col0..col1" in result.stderr and "dev.tables.jsonl" in result.stderr
    record = {"id": "1-10015132-11", "header": ["Player", "No."], "types": ["text", "real"], "rows": [["Antonio Lang", 21]]}
    (tmp_path / "dev.tables.jsonl").write_text(json.dumps(record) + "\n")
    table = load_sqlite_table(str(db), "table_1_10015132_11")
    assert (table.headers, table.layout) == (("Player", "No."), "wikisql_db")
    result = pyql("run", "--db", str(db), "--actions", "-", "--json", stdin="add_condition(No., =, 21)\nset_answer(player)\nexecute()\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["answers"] == [{"value": "antonio lang", "label": None}]


def test_table_json_forms(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"id": "1-2-3", "header": ["A", "B"], "types": ["text", "text"], "rows": [["1", "x"]]}))
    table, question = load_table_json(str(plain))
    assert (table.name, table.types, question) == ("1-2-3", ("text", "text"), None)
    lines = tmp_path / "items.jsonl"
    items = [
        {"description": "q0", "table": {"table_name": "T0", "table_info": {"columns": [{"name": "a"}], "rows": [["1"]]}}},
        {"description": "q1", "table": {"table_name": "T1", "table_info": {"columns": [{"name": "b"}], "rows": [["2"]]}}},
    ]
    lines.write_text("\n".join(json.dumps(i) for i in items) + "\n")
    assert load_table_json(str(lines), "1")[0].name == "T1"
    assert load_table_json(str(lines), "T0")[1] == "q0"


@pytest.mark.cli
@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["--table-json", "{tmp}/missing.json"], "table JSON file not found"),
        ("notjson", ["--table-json", "{tmp}/bad.json"], "is not valid JSON"),
        ("noheader", ["--table-json", "{tmp}/bad.json"], 'has neither "header" and "rows"'),
        ("ragged", ["--table-json", "{tmp}/bad.json"], "Row 0 has 1 cells but the header has 2 columns"),
        ("jsonl", ["--table-json", "{tmp}/bad.json"], "choose one with --table"),
        (None, ["--db", "{tmp}/missing.db"], "database file not found"),
        ("notdb", ["--db", "{tmp}/bad.db"], "is not a readable SQLite database"),
        ("db", ["--db", "{tmp}/two.db", "--table", "nope"], "no table 'nope'"),
        ("db", ["--db", "{tmp}/two.db"], "has 2 tables; choose one with --table"),
        ("db", ["--db", "{tmp}/two.db", "--table-json", "{tmp}/x.json"], "either --db or --table-json"),
    ],
)
def test_bad_table_inputs_exit_2(tmp_path: Path, setup: str | None, args: list[str], message: str) -> None:
    bad_json = tmp_path / "bad.json"
    if setup == "notjson":
        bad_json.write_text("{header: [A]}")
    elif setup == "noheader":
        bad_json.write_text(json.dumps({"columns": ["A"]}))
    elif setup == "ragged":
        bad_json.write_text(json.dumps({"header": ["A", "B"], "rows": [["1"]]}))
    elif setup == "jsonl":
        bad_json.write_text('{"header": ["A"], "rows": []}\n{"header": ["B"], "rows": []}\n')
    elif setup == "notdb":
        (tmp_path / "bad.db").write_text("this is not a database\n" * 100)
    elif setup == "db":
        _write_db(tmp_path / "two.db", "one", ["a"], [["1"]])
        _write_db(tmp_path / "two.db", "two", ["b"], [["2"]])
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    actions = tmp_path / "actions.txt"
    actions.write_text("execute()\n")
    if setup in (None, "notdb"):  # as a user runs it
        result = pyql("run", *argv, "--actions", str(actions))
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert result.stdout == ""
        code, said = result.returncode, result.stderr
    else:
        out = io.StringIO()
        code, said = main(["run", *argv, "--actions", str(actions)], out=out), out.getvalue()
    assert code == 2, said
    assert message in said, said
    assert len(said.strip().splitlines()) == 1


def test_a_repeated_failed_condition_escalates_to_get_column() -> None:
    """Issue 11: the same failed action again; at level 2 the environment runs get_column itself."""
    table = Table.from_rows(["Club", "Points"], [["FC Barcelona", "51"], ["Sevilla FC", "40"]], name="Clubs")
    env = TableEnvironment(table)
    records = [env.step("add_condition(Club, =, Barca)") for _ in range(4)]
    assert [r.ok for r in records] == [False] * 4
    assert [r.escalation for r in records] == [0, 1, 2, 3]
    assert "already failed at step 1" in records[1].observation
    assert "The environment looked for you: get_column(Club): Column 'Club' (text): 2 distinct values" in records[2].observation
    assert "'FC Barcelona'" in records[2].observation and env.memory.looked_at(0)
    assert "do not write it again" in records[3].observation
    assert env.step("add_condition(Club, =, FC Barcelona)").ok


def test_contains_is_an_action_operator_that_reads_back() -> None:
    """``add_condition(column, contains, words)``: parsed, run, written back as the same action, in the LLM's docs,
    tool schema and grammar (a table operator: the KB side's operators have no contains)."""
    from agent.llm.gbnf import action_gbnf, gbnf_to_regex
    from grammars.vocabulary import COMPARISON_OPERATORS, TABLE_OPERATORS
    from pyql.environment.actions import openai_tools

    env = TableEnvironment(people())
    record = env.step("add_condition(Name, contains, smith, john)")
    assert record.ok and (record.args["op"], record.args["value"]) == ("contains", "smith, john")
    assert record.observation.startswith("1 row matches")
    (action,) = env.query.actions()
    assert action == "add_condition(Name, contains, smith, john)"
    again = TableEnvironment(people())
    assert again.step(action).ok and again.query.actions() == [action]
    assert TableEnvironment(people()).step("add_condition(Club, CONTAINS, ajax)").args["op"] == "contains"
    assert "contains" not in COMPARISON_OPERATORS
    (tool,) = [t for t in openai_tools(TableActions()) if t["function"]["name"] == "add_condition"]
    assert tool["function"]["parameters"]["properties"]["op"]["enum"] == list(TABLE_OPERATORS)
    assert "op can be one of >, <, >=, <=, =, !=, contains" in render_docs(TableActions(), "prompt")
    grammar = gbnf_to_regex(action_gbnf(TableActions(), resume="action"))
    assert grammar.fullmatch("add_condition(Opponent, contains, Atlanta Braves)")
    assert not grammar.fullmatch("add_condition(Opponent, like, Atlanta Braves)")
    refused = TableEnvironment(people()).step("add_condition(Goals, total, contains, 12)")
    assert not refused.ok and "holds numbers" in refused.observation
