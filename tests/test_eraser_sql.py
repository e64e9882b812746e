"""ERASER on the SQL side: each SQL rule (and the shared ones) fires on its mistake, not on the fix.

Each :class:`Case` is a table (a dbbench WikiSQL item of
``shared/data/wikisql_dbbench/dev.jsonl``, or an inline table) and the
action lines up to and including a faulty step; every earlier line must be
accepted, the faulty (last) step must fire exactly the case's rule with a
guideline that names the mistake and ends with "Please re-generate only
Thought N and Action N.", and the step must be undone. The ``fixed`` lines
are the same episode with the mistake corrected: they fire nothing.

A SQL rule registered without a case here fails :func:`test_every_sql_rule_has_a_case`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from correction import Eraser, markdown_table, registry
from correction.guidelines import renderer
from pyql_sql import Table
from pyql_sql.environment import TableEnvironment
from tests.shared_data import missing_reason, shared_path

ROOT = Path(__file__).resolve().parents[1]
DEV = shared_path("dbbench")

#: Rules shared with the SPARQL side that must work on tables too.
SHARED = ("no_action", "multiple_actions", "syntax_error", "invalid_action", "wrong_arity", "query_error")


def dev_table(i: int) -> Table:
    if not DEV.is_file():
        pytest.skip(missing_reason("dbbench"))
    return Table.from_dbbench(json.loads(DEV.read_text(encoding="utf-8").splitlines()[i]))


def inline_table() -> Table:
    return Table.from_rows(
        ["Name", "Club", "Goals"],
        [["Smith, John", "Ajax", "12"], ["Doe, Jane", "UCD", "7"], ["Roe, Rick", "Ajax", "3"]],
        name="Scorers",
    )


@dataclass(frozen=True)
class Case:
    rule: str
    table: Any  # dev item number, or "inline"
    lines: list[str]
    fixed: list[str]
    mention: str

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.table}-{len(self.lines)}"

    def load(self) -> Table:
        if self.table == "games":
            return games_table()
        return inline_table() if self.table == "inline" else dev_table(self.table)


def games_table() -> Table:
    """A WTQ-like table: dates and scores written as text, a team that repeats (the steps beyond WikiSQL's)."""
    return Table.from_rows(
        ["Date", "Opponent", "Score", "Attendance", "Venue"],
        [["June 5, 2004", "Ajax", "2–1", "12,000", "Home"], ["5 July 2004", "PSV", "0–1", "9,500", "Away"],
         ["March 11, 2005", "Ajax", "3–3", "15,200", "Home"], ["2006-04-02", "Feyenoord", "1–0", "8,100", "Away"]],
        name="Games",
    )


CASES: list[Case] = [
    # -- interpreter: SQL rules ---------------------------------------------------
    Case("sql_unknown_column", 2, ["get_column(Results)"], ["get_column(Result)"], "did you mean 'Result'?"),
    Case(
        "sql_unknown_column",
        1,
        ["get_column(Opponent)", "add_condition(Athlone Town, =, Opponent)"],
        ["get_column(Opponent)", "add_condition(Opponent, =, Athlone Town)"],
        "swapped, e.g. add_condition(Opponent, =, Athlone Town)",
    ),
    Case(
        "sql_bad_operator",
        2,
        ["get_column(Competition)", "add_condition(Competition, LIKE, friend)"],
        ["get_column(Competition)", "add_condition(Competition, =, Friendly)"],
        "LIKE is not a valid operator",
    ),
    Case(
        "sql_bad_operator",
        5,
        ["add_condition(Frequency MHz, smaller than, 107.7)"],
        ["add_condition(Frequency MHz, <, 107.7)"],
        "write add_condition(Frequency MHz, <, 107.7)",
    ),
    Case(
        "sql_bad_aggregation",
        1,
        ["get_column(Opponent)", "add_condition(Opponent, =, Athlone Town)", "set_answer(Game, number)"],
        ["get_column(Opponent)", "add_condition(Opponent, =, Athlone Town)", "set_answer(Game, COUNT)"],
        "write set_answer(Game, COUNT)",
    ),
    Case(
        "sql_bad_aggregation",
        2,
        ["get_column(Result)", "add_condition(Result, =, 2–1)", "set_answer(Score, SUM)"],
        ["get_column(Result)", "add_condition(Result, =, 2–1)", "set_answer(Score, COUNT)"],
        "the column Score, but it holds no number",
    ),
    Case(
        "sql_type_mismatch",
        5,
        ["get_column(Class)", "add_condition(Class, =, D)", "add_condition(Frequency MHz, <, 107.7 MHz)"],
        ["get_column(Class)", "add_condition(Class, =, D)", "add_condition(Frequency MHz, <, 107.7)"],
        "Write the number alone: add_condition(Frequency MHz, <, 107.7)",
    ),
    Case(
        "sql_type_mismatch",
        2,
        ["get_column(Date)", "add_condition(Date, >, June 2005)"],
        ["get_column(Date)", "add_condition(Date, =, June 16, 2005)"],
        "compare them alphabetically",
    ),
    Case("sql_type_mismatch", "games", ["add_condition(Attendance, contains, 12,000)"], ["add_condition(Attendance, =, 12,000)"],
         "contains looks for words inside text, so it does not apply to Attendance"),
    Case("sql_type_mismatch", "games", ["add_condition(Opponent, contains, %)"], ["add_condition(Opponent, contains, PSV)"],
         "the value % has no letter or digit"),
    Case("sql_bad_operator", "games", ["add_condition(Opponent, LIKE, %jax%)"], ["add_condition(Opponent, contains, Ajax)"],
         "use contains with the words as the cells write them (add_condition(Opponent, contains, jax)"),
    # -- memory -------------------------------------------------------------------------
    Case(
        "sql_duplicate_equality",
        2,
        ["get_column(Result)", "add_condition(Result, =, 2–1)", "add_condition(Result, =, 5–2)"],
        ["get_column(Result)", "add_condition(Result, =, 2–1)", "add_condition(Competition, =, Friendly)"],
        "already requires Result = 2–1 (step 2)",
    ),
    Case(
        "sql_condition_before_get_column",
        10,
        ["add_condition(Fastest Lap, =, Kogure)"],
        ["get_column(Fastest Lap)", "add_condition(Fastest Lap, =, Takashi Kogure)"],
        "The closest values in Fastest Lap are: 'Takashi Kogure'",  # the guideline carries its candidates
    ),
    Case(
        "sql_value_not_in_column",
        10,
        ["get_column(Fastest Lap)", "add_condition(Fastest Lap, =, Kogure)"],
        ["get_column(Fastest Lap)", "add_condition(Fastest Lap, =, Takashi Kogure)"],
        "The closest values in Fastest Lap are: 'Takashi Kogure'",
    ),
    Case(
        "sql_value_not_in_column",
        10,
        ["get_column(Winning Team)", "add_condition(Winning Team, =, Takashi Kogure)"],
        ["get_column(Winning Team)", "add_condition(Winning Team, =, Nakajima Racing)"],
        "is in the column 'Pole Position' and 'Fastest Lap' and 'Winning Driver'",
    ),
    Case(
        "sql_value_not_in_column",
        "inline",
        ["get_column(Name)", "add_condition(Name, =, John Smith)"],
        ["get_column(Name)", "add_condition(Name, =, Smith, John)"],
        "'Smith, John'",
    ),
    Case("sql_words_not_in_column", "games", ["add_condition(Opponent, contains, Feyenord)"],
         ["add_condition(Opponent, contains, feyenoord)"], "The closest words in Opponent are: feyenoord (in 'Feyenoord')"),
    Case("sql_words_not_in_column", "games", ["add_condition(Venue, contains, Ajax)"], ["add_condition(Opponent, contains, Ajax)"],
         "The words Ajax are in the column 'Opponent'"),
    # -- the table's feedback ---------------------------------------------------------
    Case(
        "sql_empty_result",
        2,
        ["get_column(Result)", "add_condition(Result, =, 8–0)", "get_column(Competition)", "add_condition(Competition, =, Friendly)"],
        [
            "get_column(Result)",
            "add_condition(Result, =, 8–0)",
            "get_column(Competition)",
            "add_condition(Competition, =, 2006 FIFA World Cup qualification)",
        ],
        "no row of the table meets all the conditions together (Result = 8–0 AND Competition = Friendly)",
    ),
    # -- the steps beyond WikiSQL's ---------------------------------------------------
    Case("sql_position_past_end", "games", ["add_row(9)"], ["add_row(-1)"], "the table has 4 rows"),
    Case(
        "sql_position_past_end",
        "games",
        ["add_condition(Opponent, =, Ajax)", "add_row(3)"],
        ["add_condition(Opponent, =, Ajax)", "add_row(2)"],
        "the conditions Opponent = Ajax keep 2 of them. Use a position from 1 to 2",
    ),
    Case("sql_no_neighbour", "games", ["add_adjacent(Opponent, Feyenoord, after)"], ["add_adjacent(Opponent, Feyenoord, before)"],
         "is the last row of the table"),
    Case("sql_no_neighbour", "games", ["add_adjacent(Opponent, Twente, after)"], ["add_adjacent(Opponent, PSV, after)"],
         "no row of the column Opponent holds Twente"),
    Case("sql_part_missing", "games", ["add_part(Opponent, year)"], ["add_part(Date, year)"],
         "no cell of the column Opponent writes a date with a year (it holds 'Ajax', 'PSV', 'Feyenoord')"),
    Case("sql_part_missing", "games", ["add_part(Opponent, seconds)"], ["add_part(Date, year)"],
         "no cell of the column Opponent writes a time such as 4:25 or 1:02:03 (minutes:seconds, hours:minutes:seconds) "
         "(it holds 'Ajax', 'PSV', 'Feyenoord')"),
    Case("sql_arithmetic_on_text", "games", ["set_calculation(Venue, -, Opponent, Ajax, PSV)"],
         ["set_calculation(Attendance, -, Opponent, Ajax, PSV)"], "the column Venue holds text ('Home', 'Away')"),
    Case("sql_arithmetic_on_text", "games", ["compare_rows(Attendance, Opponent, Ajax, Twente)"],
         ["compare_rows(Attendance, Opponent, Ajax, PSV)"], "found no row where Opponent is Twente"),
    Case("sql_arithmetic_on_text", "games", ["add_calculation(Opponent, -, Venue)"],
         ["add_part(Score, before)", "add_part(Score, after)", "add_calculation(Score before, -, Score after)"],
         "add_calculation needs numbers, but the column Opponent holds text"),
    Case("sql_grouped_answer", "games", ["add_group(Opponent)", "set_answer(Attendance)"],
         ["add_group(Opponent)", "set_answer(Attendance, SUM)"], "give an aggregation"),
    # -- shared with the SPARQL side ------------------------------------------------
    Case(
        "invalid_action",
        1,
        ["get_relation(Opponent)"],
        ["get_column(Opponent)"],
        "choose an action from: get_column(), add_condition(), add_order(), add_row(), add_adjacent(), add_part(), "
        "add_calculation(), add_group(), set_answer(), set_calculation(), compare_rows(), execute()",
    ),
    Case(
        "wrong_arity",
        1,
        ["get_column(Opponent)", "add_condition(Opponent, Athlone Town)"],
        ["get_column(Opponent)", "add_condition(Opponent, =, Athlone Town)"],
        "add_condition(column, op, value) should have 3 parameters. You have 2 parameters: Opponent, Athlone Town.",
    ),
    Case(
        "wrong_arity",
        "inline",
        ["set_answer(Goals, SUM, Club)"],
        ["set_answer(Goals, SUM)"],
        "set_answer(column, aggregation) should have 1 to 2 parameters. You have 3",
    ),
    Case(
        "no_action",
        "inline",
        ["Thought 1: I should look at the clubs.\nAction 1: I will look at the Club column."],
        ["Thought 1: I should look at the clubs.\nAction 1: get_column(Club)"],
        "I will look at the Club column",
    ),
    Case(
        "multiple_actions",
        "inline",
        ["Action 1: get_column(Club)\nObservation 1: ...\nAction 2: add_condition(Club, =, Ajax)"],
        ["Action 1: get_column(Club)"],
        "get_column(Club)",
    ),
    Case(
        "syntax_error",
        "inline",
        ["add_condition(Club, =, Ajax"],
        ["add_condition(Club, =, Ajax)"],
        "add_condition(Club, =, Ajax",
    ),
    Case(
        "query_error",
        "inline",
        ["add_condition(Club, =, Ajax)", "execute()"],
        ["add_condition(Club, =, Ajax)", "set_answer(Goals, SUM)", "execute()"],
        "call set_answer(column, aggregation) (or set_calculation, compare_rows) before execute()",
    ),
]


def run(table: Table, lines: list[str], eraser: Eraser) -> tuple[TableEnvironment, list[Any]]:
    env = TableEnvironment(table, analyzer=eraser)
    return env, [env.step(line) for line in lines]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fires_on_its_mistake(case: Case) -> None:
    eraser = Eraser()
    env, records = run(case.load(), case.lines, eraser)
    *before, faulty = records
    for record in before:
        assert record.ok, f"setup step {record.index} {record.text!r} failed: {record.error}: {record.observation}"
    assert faulty.error == case.rule, faulty.observation
    assert not faulty.ok
    assert faulty.observation == faulty.guideline
    assert case.mention in faulty.guideline, faulty.guideline
    assert faulty.guideline.endswith(
        f"Please re-generate only Thought {faulty.index + 1} and Action {faulty.index + 1}."
    ), faulty.guideline
    assert eraser.stats.counts == {case.rule: 1}
    assert env.query is faulty.query_before  # undone
    assert faulty.to_json()["error"] == case.rule


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_does_not_fire_on_the_fix(case: Case) -> None:
    eraser = Eraser()
    _, records = run(case.load(), case.fixed, eraser)
    for record in records:
        assert record.ok, f"step {record.index} {record.text!r}: {record.error}: {record.observation}"
    assert not eraser.stats.counts


def test_every_sql_rule_has_a_case() -> None:
    covered = {c.rule for c in CASES}
    sql_only = [r.id for r in registry.ordered("sql") if r.sides == frozenset({"sql"})]
    assert sql_only == [
        "sql_unknown_column",
        "sql_bad_operator",
        "sql_bad_aggregation",
        "sql_type_mismatch",
        "sql_position_past_end",
        "sql_grouped_answer",
        "sql_duplicate_equality",
        "sql_condition_before_get_column",
        "sql_value_not_in_column",
        "sql_words_not_in_column",
        "sql_empty_result",
        "sql_no_neighbour",
        "sql_part_missing",
        "sql_arithmetic_on_text",
    ]
    missing = [r for r in sql_only + list(SHARED) if r not in covered]
    assert not missing, f"rules without a SQL case: {missing}"
    assert all(registry.get(r).applies_to("sql") for r in SHARED)


def test_sql_rules_stay_on_their_side_and_have_templates() -> None:
    sparql = {r.id for r in registry.ordered("sparql")}
    assert not {i for i in sparql if i.startswith("sql_")}
    templates = set(renderer().templates())
    for r in registry.ordered("sql"):
        assert r.template in templates, r.id
        assert r.doc and r.suggests, r.id
    table = markdown_table(side="sql")
    assert "`sql_value_not_in_column`" in table and "`wrong_arity`" in table and "`add_fact`" not in table


def test_no_rule_fires_on_a_clean_dev_episode() -> None:
    eraser = Eraser()
    _, records = run(
        dev_table(9),
        ["get_column(Points)", "add_condition(Points, =, 51)", "set_answer(Try bonus, SUM)", "execute()"],
        eraser,
    )
    assert [r.ok for r in records] == [True] * 4, [r.observation for r in records]
    assert records[-1].observation == "The answer is [5]"  # SUM of a text column that holds numbers
    assert not eraser.stats.counts


def test_memory_rules_read_the_table_not_the_kb() -> None:
    eraser = Eraser()
    env, records = run(inline_table(), ["add_condition(Club, =, ajax)", "add_condition(Goals, >, 5)"], eraser)
    assert all(r.ok for r in records)
    assert not eraser.stats.kb_queries  # the SQL rules declare and send no KB query
    assert env.counters["kb_queries"] >= 3  # the table lookups are counted by the environment


def test_disabling_a_sql_rule_falls_back_to_the_next_check() -> None:
    eraser = Eraser(disabled={"sql_condition_before_get_column", "sql_value_not_in_column"})
    _, records = run(inline_table(), ["add_condition(Club, =, Barcelona)"], eraser)
    assert records[0].error == "sql_empty_result"
    assert "no row of the table meets all the conditions together (Club = Barcelona)" in records[0].observation
    assert "get_column(Club)" in records[0].observation


def test_docs_list_every_sql_rule() -> None:
    text = (ROOT / "docs" / "sql.md").read_text(encoding="utf-8")
    for r in registry.ordered("sql"):
        assert f"`{r.id}`" in text, f"docs/sql.md does not mention {r.id}"


def test_bad_new_steps_leave_the_table_file_unchanged(tmp_path: Path) -> None:
    """A position past the end, a part no cell has, arithmetic on text: a guideline each, no traceback, the file as it was."""
    import hashlib
    import sqlite3

    from pyql_sql.loaders import load_sqlite_table

    path = tmp_path / "games.db"
    conn = sqlite3.connect(path)
    conn.execute('CREATE TABLE games ("Date" TEXT, "Opponent" TEXT, "Attendance" TEXT)')
    conn.executemany("INSERT INTO games VALUES (?, ?, ?)", [("June 5, 2004", "Ajax", "12,000"), ("5 July 2004", "PSV", "9,500")])
    conn.commit()
    conn.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    env = TableEnvironment(load_sqlite_table(path, "games"), analyzer=Eraser())
    records = [env.step(line) for line in ("add_row(5)", "add_part(Opponent, month)", "set_calculation(Opponent, /, Date, \"June 5, 2004\", 5 July 2004)",
                                            "add_group(Opponent)", "set_answer(Date)")]
    assert [r.error for r in records] == ["sql_position_past_end", "sql_part_missing", "sql_arithmetic_on_text", None, "sql_grouped_answer"]
    assert all(r.guideline and "Traceback" not in r.guideline for r in records if r.error)
    assert "Opponent" in records[1].guideline and "Opponent" in records[2].guideline
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
