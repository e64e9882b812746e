"""The SQL twin's steps beyond WikiSQL's: row position and neighbours, parts of cells, calculations, groups.

Each step is a method of the immutable :class:`~pyql_sql.query.TableQuery`
(a new query each time), compiled with sqlglot and run on the sealed SQLite
connection; after every step the query compiles and runs, with values bound
or written as literals alike.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyql.action_parser import parse_action
from pyql.errors import ArityError, PyQLError
from pyql_sql import Table
from pyql_sql.actions import TableActions
from pyql_sql.environment import TableEnvironment
from pyql_sql.errors import BadValueError, GroupError, PositionError
from pyql_sql.parts import cell_date, cell_part
from pyql_sql.numbers import parse_duration

GAMES = Table.from_rows(
    ["Date", "Opponent", "Score", "Attendance", "Venue"],
    [
        ["June 5, 2004", "Ajax", "2–1", "12,000", "Home"],
        ["5 July 2004", "PSV", "0–1", "9,500", "Away"],
        ["March 11, 2005", "ajax ", "3–3", "15,200 (sold out)", "Home"],
        ["2006-04-02", "Feyenoord", "1–0", "8,100", "Away"],
        ["2-3-2006", "PSV", "4–2", "—", "Home"],
    ],
    name="Games",
)


def values(query: object) -> list[object]:
    return [a.value for a in GAMES.executor().execute(query)]  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# parts of cells


@pytest.mark.parametrize(
    "cell, year, month, day",
    [
        ("June 5, 2004", "2004", "June", "5"),
        ("5 June 2004", "2004", "June", "5"),
        ("5th of June, 2004", "2004", "June", "5"),
        ("2004-06-05", "2004", "June", "5"),
        ("2-3-1957", "1957", "March", "2"),  # day first with a dash (WTQ's European tables)
        ("10/16/1988", "1988", "October", "16"),  # month first with a slash
        ("Sept. 3, 1999", "1999", "September", "3"),
        ("October 31, 2004 (Sunday)", "2004", "October", "31"),
        ("1998–99", "1998", None, None),
        ("March 11", None, "March", "11"),
        ("June 2010", "2010", "June", None),
        ("Rio de Janeiro", None, None, None),
    ],
)
def test_date_parts_of_cells_as_wtq_and_dbbench_write_them(cell: str, year: str | None, month: str | None, day: str | None) -> None:
    assert (cell_part(cell, "year"), cell_part(cell, "month"), cell_part(cell, "day")) == (year, month, day)


def test_other_parts_of_cells() -> None:
    assert cell_date("March 11").iso() == "xxxx-03-11" and cell_part("June 5, 2004", "date") == "2004-06-05"
    assert [cell_part(c, "number") for c in ("18 (59)", "≈ 600 mm", "$1,200", "-3 pts", "U-209", "none")] == ["18", "600", "1,200", "-3", "209", None]
    assert (cell_part("2–1", "before"), cell_part("2 - 1", "after", "-"), cell_part("Lyon (France)", "before", "(")) == ("2", "1", "Lyon")
    assert cell_part("Lyon", "after", "(") is None and cell_part(None, "year") is None


def test_a_part_is_a_column_later_steps_name() -> None:
    q = GAMES.query().add_part("Date", "year")
    assert q.derived_columns[0].header == "Date year" and len(GAMES.query().steps) == 0  # a new query, the old one as it was
    assert values(q.add_condition("Date year", "=", 2004).set_answer("Opponent")) == ["Ajax", "PSV"]
    assert values(q.add_group("Date year").add_order("Count", "DESC").set_answer("Date year")) == ["2004"]
    month = GAMES.query().add_part("date", "MONTHS")
    assert values(month.add_condition("date month", "=", "june").set_answer("Score")) == ["2–1"]
    number = GAMES.query().add_part("Attendance", "number").add_order("Attendance number", "DESC").set_answer("Opponent")
    assert values(number) == ["ajax "]  # 15,200 (sold out) is the largest number
    with pytest.raises(PyQLError, match="Unknown part 'week'"):
        GAMES.query().add_part("Date", "week")


def test_an_order_by_a_date_written_as_text() -> None:
    by_date = GAMES.query().add_part("Date", "date")
    assert values(by_date.add_order("Date date", "ASC").set_answer("Opponent")) == ["Ajax"]
    assert values(by_date.add_order("Date date", "DESC").set_answer("Opponent")) == ["Feyenoord"]  # 2-3-2006 is 2 March
    assert cell_part("2-3-2006", "date") == "2006-03-02"


def test_an_order_by_times_orders_durations_not_their_first_number() -> None:
    races = Table.from_rows(["Name", "Time"], [["a", "2:01.33"], ["b", "1:59.8"], ["c", "10:02.1"], ["d", "59.5"], ["e", "1:02:03"], ["f", "DNF"]])
    ex = races.executor()
    listed = lambda q: [a.value for a in ex.execute(q)]  # noqa: E731
    assert listed(races.query().add_order("Time", "ASC", limit=6).set_answer("Name")) == ["d", "b", "a", "c", "e", "f"]
    assert listed(races.query().add_order("Time", "DESC").set_answer("Name")) == ["e"]  # an hour beats 10 minutes
    assert listed(races.query().add_order("Time", "ASC").add_row(2).set_answer("Time")) == ["1:59.8"]
    assert [parse_duration(c) for c in ("1:59.8", "2:01.33 (WR)", "1:02:03", "3-1", "2:1")] == [119.8, 121.33, 3723.0, None, None]



def test_the_seconds_of_times_compare_as_numbers_and_a_cell_without_a_time_has_none() -> None:
    races = Table.from_rows(["Name", "Time"], [["a", "1:59.8"], ["b", "1:02:03"], ["c", "4:25"], ["d", "DNF"], ["e", "3m 37s"]])
    ex = races.executor()
    seconds = races.query().add_part("Time", "seconds")
    assert [a.value for a in ex.execute(seconds.set_answer("Time seconds"))] == ["119.8", "3723", "265", None, "217"]
    over = seconds.add_condition("Time seconds", ">", "240")
    assert "PYQL_NUMBER(PYQL_PART(\"Time\", 'seconds', ''))" in over.display_sql() and over.sql_with_params()[1] == [240.0]
    assert [a.value for a in ex.execute(over.set_answer("Name"))] == ["b", "c"]
    assert [a.value for a in ex.execute(seconds.add_condition("Time seconds", "<=", "240").set_answer("Name", "COUNT"))] == [2]

# ---------------------------------------------------------------------------
# a row's place and its neighbours


def test_rows_by_their_place() -> None:
    assert values(GAMES.query().add_row(1).set_answer("Opponent")) == ["Ajax"]
    assert values(GAMES.query().add_row("last").set_answer("Opponent")) == ["PSV"]
    assert values(GAMES.query().add_condition("Opponent", "=", "PSV").add_row("first").set_answer("Date")) == ["5 July 2004"]
    assert values(GAMES.query().add_condition("Venue", "=", "Home").add_row(-2).set_answer("Date")) == ["March 11, 2005"]
    second_largest = GAMES.query().add_part("Attendance", "number").add_order("Attendance number", "DESC").add_row(2)
    assert values(second_largest.set_answer("Opponent")) == ["Ajax"]
    with pytest.raises(PositionError, match="past the table's end: the table has 5 rows"):
        GAMES.query().add_row(6)
    with pytest.raises(PositionError, match="Unknown row position 0"):
        GAMES.query().add_row(0)


def test_the_row_before_or_after_another() -> None:
    assert values(GAMES.query().add_adjacent("Opponent", "feyenoord", "before").set_answer("Opponent")) == ["ajax "]
    assert values(GAMES.query().add_adjacent("Opponent", "Feyenoord", "next").set_answer("Date")) == ["2-3-2006"]
    assert values(GAMES.query().add_adjacent("Opponent", "PSV", "after").set_answer("Date")) == ["March 11, 2005"]  # after each PSV row
    assert values(GAMES.query().add_adjacent("Opponent", "Twente", "after").set_answer("Date")) == []


def test_the_row_order_of_a_wikisql_file_is_its_rowid(tmp_path: Path) -> None:
    path = tmp_path / "dev.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE table_1_2 (col0 text, col1 real)")
    conn.executemany("INSERT INTO table_1_2 VALUES (?, ?)", [("a", 1.0), ("b", 2.0), ("c", 3.0)])
    conn.commit()
    conn.close()
    t = Table.from_wikisql_db(path, "1-2", header=["Name", "N"])
    assert [a.value for a in t.executor().execute(t.query().add_row(-1).set_answer("Name"))] == ["c"]
    assert [a.value for a in t.executor().execute(t.query().add_adjacent("Name", "a", "after").set_answer("N"))] == [2.0]


# ---------------------------------------------------------------------------
# arithmetic, two rows compared, groups, distinct counts


def test_calculations_of_cells_and_of_rows() -> None:
    scores = GAMES.query().add_part("Score", "before").add_part("Score", "after")
    margin = scores.add_calculation("Score before", "-", "Score after")
    assert values(margin.add_order("Score before - Score after", "DESC").set_answer("Opponent")) == ["PSV"]
    assert values(margin.set_answer("Score before - Score after", "SUM")) == [3.0]
    assert values(GAMES.query().set_calculation("Attendance", "-", "Opponent", "Ajax", "PSV")) == [2500.0]  # the first row of each
    assert values(GAMES.query().set_calculation("Attendance", "ratio", "Opponent", "Feyenoord", "PSV")) == [pytest.approx(8100 / 9500)]
    assert values(GAMES.query().set_calculation("Attendance", "+", "Date", "June 5, 2004", "2006-04-02")) == [20100.0]
    assert values(GAMES.query().set_calculation("Attendance", "-", "Opponent", "Ajax", "Twente")) == [None]


def test_which_of_two_rows_has_more() -> None:
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Feyenoord")) == ["PSV"]
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Feyenoord", "ASC")) == ["Feyenoord"]
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Twente")) == []  # a missing row: no answer


def test_which_of_two_rows_has_more_in_two_words() -> None:
    words = ("more", "less")
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Feyenoord", "DESC", words)) == ["more"]
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "Feyenoord", "PSV", "DESC", words)) == ["less"]
    # ASC: the first row wins with the smaller value
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "Feyenoord", "PSV", "ASC", ("fewer", "more"))) == ["fewer"]
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Twente", "DESC", words)) == []  # a missing row
    # a tie: neither word is true, no answer (without words the row the table lists first answers, as before)
    tied = Table.from_rows(["Team", "Points"], [["Ajax", "3"], ["PSV", "3"], ["Twente", "1"]])
    assert [a.value for a in tied.executor().execute(tied.query().compare_rows("Points", "Team", "PSV", "Ajax", "DESC", words))] == []
    assert [a.value for a in tied.executor().execute(tied.query().compare_rows("Points", "Team", "PSV", "Ajax"))] == ["Ajax"]
    # a row without a number (PSV's second game writes "—"): its best number compares
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "Ajax", "PSV", "ASC", ("lower", "higher"))) == ["higher"]
    for bad in (("more",), ("more", "MORE"), ("", "less"), "more"):
        with pytest.raises(BadValueError, match="two different words"):
            GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Ajax", "DESC", bad)  # type: ignore[arg-type]


def test_the_answer_words_are_bound_not_formatted() -> None:
    words = ("it's more", "less'); DROP TABLE t; --")
    q = GAMES.query().compare_rows("Attendance", "Opponent", "PSV", "Feyenoord", "DESC", words)
    sql, params = q.sql_with_params()
    assert "DROP" not in sql and "more" not in sql and params[:3] == ["PSV", *words]  # CASE WHEN <first row> THEN ? ELSE ?
    assert sql.startswith('SELECT CASE WHEN LOWER(TRIM("c1")) = LOWER(?) THEN ? ELSE ? END FROM "t" WHERE ')
    assert values(q) == ["it's more"] and [r[0] for r in GAMES.executor().execute_sql(q.sql())] == ["it's more"]  # literals escaped
    assert values(GAMES.query().compare_rows("Attendance", "Opponent", "Feyenoord", "PSV", "DESC", words)) == [words[1]]


def test_the_seven_argument_action_reads_back_as_the_same_step() -> None:
    for text in ("compare_rows(Attendance, Opponent, PSV, Feyenoord, DESC, more, less)",
                 'compare_rows(Attendance, Opponent, PSV, Feyenoord, ASC, "more, by far", \'it"s less\')'):
        env = TableEnvironment(GAMES, question="q")
        record = env.step(text)
        assert record.ok, record.observation
        step = env.query.result
        assert len(parse_action(text).args) == 7 and parse_action(step.action()).args == parse_action(text).args
        again = TableEnvironment(GAMES, question="q")
        assert again.step(step.action()).ok and again.query.result == step  # the action text parses back to the same step
    assert step.words == ("more, by far", 'it"s less')
    assert env.step("execute()").observation == "The answer is ['it\"s less']"


@pytest.mark.parametrize("args, given", [("DESC, more", 6), ("DESC, more, less, most", 8)])
def test_one_answer_word_or_three_is_a_wrong_number_of_arguments(args: str, given: int) -> None:
    env = TableEnvironment(GAMES, question="q")
    record = env.step(f"compare_rows(Attendance, Opponent, PSV, Feyenoord, {args})")
    assert not record.ok and record.error == "wrong_arity" and isinstance(record.exception, ArityError)
    assert str(record.exception) == (f"compare_rows(column, key, first, second, direction, if_first, if_second) should have 4, 5 or 7 "
                                     f"parameters. You have {given} parameters.")
    assert env.query.result is None
    with pytest.raises(ArityError, match="should have 4, 5 or 7 parameters. You have 6"):
        TableActions().compare_rows(env, GAMES.columns[3], GAMES.columns[1], "PSV", "Ajax", "DESC", "more")


def test_groups_and_distinct_counts() -> None:
    grouped = GAMES.query().add_group("Opponent")
    assert [c.header for c in grouped.columns][-1] == "Count"
    assert values(grouped.set_answer("Opponent", "COUNT")) == [3]  # Ajax and 'ajax ' are one group
    assert values(grouped.add_order("Count", "DESC").set_answer("Opponent")) == ["Ajax"]
    assert values(grouped.add_condition("Count", ">=", 2).set_answer("Opponent")) == ["Ajax", "PSV"]
    assert values(grouped.set_answer("Count")) == [2, 2, 1]
    assert values(grouped.add_order("Attendance", "ASC").set_answer("Opponent")) == ["Feyenoord"]  # by the sum of each group
    assert values(GAMES.query().set_answer("Opponent", "COUNT DISTINCT")) == [3]
    with pytest.raises(GroupError, match="give an aggregation"):
        grouped.set_answer("Venue")
    with pytest.raises(GroupError, match="already grouped"):
        grouped.add_group("Venue")


def test_display_and_bound_values() -> None:
    q = GAMES.query().add_adjacent("Opponent", "x'); DROP TABLE t; --", "after").set_answer("Date")
    sql, params = q.sql_with_params()
    assert "DROP" not in sql and params == ["x'); DROP TABLE t; --"]
    assert GAMES.query().add_row(1).set_answer("Venue").display_sql().startswith('SELECT "Venue" FROM "Games" WHERE "rowid" IN')
    assert GAMES.query().add_part("Date", "year").set_answer("Date year").display_sql() == (
        "SELECT PYQL_PART(\"Date\", 'year', '') FROM \"Games\"")
    assert GAMES.query().add_part("Score", "before", "'").actions() == ["add_part(Score, before, ')"]


# ---------------------------------------------------------------------------
# every step compiles and runs after every step


_BUILDERS = [
    lambda q: q.add_condition("Venue", "=", "Home"),
    lambda q: q.add_condition("Attendance", ">", 9000),
    lambda q: q.add_order("Attendance", "DESC", 2),
    lambda q: q.add_row(1),
    lambda q: q.add_row(-2),
    lambda q: q.add_adjacent("Opponent", "PSV", "after"),
    lambda q: q.add_part("Date", "year"),
    lambda q: q.add_part("Score", "before"),
    lambda q: q.add_condition("Date year", ">=", 2005),
    lambda q: q.add_calculation("Attendance", "/", "Score before"),
    lambda q: q.add_group("Venue"),
    lambda q: q.add_order("Count", "ASC"),
    lambda q: q.set_answer("Opponent"),
    lambda q: q.set_answer("Attendance", "SUM"),
    lambda q: q.set_answer("Opponent", "COUNT DISTINCT"),
    lambda q: q.set_calculation("Attendance", "-", "Opponent", "Ajax", "PSV"),
    lambda q: q.compare_rows("Attendance", "Opponent", "PSV", "Ajax"),
    lambda q: q.compare_rows("Attendance", "Opponent", "Feyenoord", "PSV", "ASC", ("fewer", "it's more")),
    lambda q: q.undo(),
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, len(_BUILDERS) - 1), max_size=7))
def test_every_chain_of_steps_compiles_and_runs(picks: list[int]) -> None:
    query, executor = GAMES.query(), GAMES.executor()
    for pick in picks:
        try:
            nxt = _BUILDERS[pick](query)
        except PyQLError:
            continue  # a step this query cannot take is refused when it is made
        assert nxt is not query and len(query.steps) == len(nxt.steps) + (1 if pick == len(_BUILDERS) - 1 else -1)
        query = nxt
        sql, params = query.sql_with_params()
        assert sql.count("?") == len(params)
        executor.count(query)
        query.display_sql()
        if query.result is not None:
            bound = [a.value for a in executor.execute(query)]
            assert bound == [r[0] for r in executor.execute_sql(query.sql())]  # literal values: the same answers


def test_the_actions_run_in_an_episode() -> None:
    env = TableEnvironment(GAMES, question="q")
    steps = ["add_part(Date, year)", "add_condition(Date year, =, 2004)", "add_row(last)", "set_answer(Opponent)", "execute()"]
    assert [env.step(s).ok for s in steps] == [True] * 5 and env.final_json()["answers"] == [{"value": "PSV", "label": None}]
    env = TableEnvironment(GAMES, question="q")
    assert env.step("add_adjacent(Date, June 5, 2004, after)").ok  # the value's commas stay in the value
    assert env.step("set_answer(Opponent)").observation == "The column Opponent has 1 value in the rows kept: ['PSV']"
    env = TableEnvironment(GAMES, question="q")
    record = env.step('compare_rows(Attendance, Date, "June 5, 2004", 2006-04-02, DESC)')
    assert record.ok and record.observation == "Of June 5, 2004 and 2006-04-02, 'June 5, 2004' has the larger Attendance"
    assert env.step("execute()").observation == "The answer is ['June 5, 2004']"
