"""Executor: read-only enforcement, timeouts, get_column, rows, error mapping."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pyql.errors import PyQLError
from pyql_sql import (
    Answer,
    Executor,
    ReadOnlyError,
    SQLExecutionError,
    SQLTimeout,
    Table,
    UnknownColumnError,
)


@pytest.fixture()
def table() -> Table:
    return Table.from_rows(
        ["Opponent", "Attendance", "Venue"],
        [["Ajax", "19,768", "Home"], ["UCD", "—", "Away"], ["Ajax", "24,691", "Away"], ["Porto", "", "Home"]],
    )


WRITES = [
    ('INSERT INTO "t" ("c0") VALUES (\'x\')', "INSERT"),
    ('UPDATE "t" SET "c0" = \'x\'', "UPDATE"),
    ('DELETE FROM "t"', "DELETE"),
    ('DROP TABLE "t"', "DROP"),
    ('CREATE TABLE "u" (a)', "CREATE"),
    ('CREATE VIEW v AS SELECT 1', "CREATE"),
    ('CREATE INDEX i ON "t" ("c0")', "CREATE"),
    ('ALTER TABLE "t" ADD COLUMN z', "ALTER"),
    ("ATTACH DATABASE ':memory:' AS other", "ATTACH"),
    ("ATTACH DATABASE '/tmp/pyql_sql_should_not_exist.db' AS other", "ATTACH"),
    ("PRAGMA query_only=OFF", "PRAGMA"),
    ("PRAGMA writable_schema=ON", "PRAGMA"),
    ("PRAGMA journal_mode=DELETE", "PRAGMA"),
    ("VACUUM", "VACUUM"),
    ("BEGIN", "BEGIN"),
    ("SELECT load_extension('x')", "SELECT"),
    ("-- a comment\nINSERT INTO \"t\" (\"c0\") VALUES ('x')", "INSERT"),
]


@pytest.mark.parametrize(("sql", "keyword"), WRITES, ids=[w[0][:40] for w in WRITES])
def test_writes_are_refused(table: Table, sql: str, keyword: str) -> None:
    ex = Executor(table)
    before = ex.execute_sql('SELECT * FROM "t"')
    with pytest.raises(ReadOnlyError) as info:
        ex.execute_sql(sql)
    err = info.value
    assert err.kind == "read_only" and isinstance(err, SQLExecutionError) and isinstance(err, PyQLError)
    assert f"the {keyword} statement was refused" in str(err)
    assert "Only SELECT queries run here" in str(err)
    assert err.sql == sql
    # nothing changed, and the connection still works and is still sealed
    assert ex.execute_sql('SELECT * FROM "t"') == before
    with pytest.raises(ReadOnlyError):
        ex.execute_sql('DELETE FROM "t"')
    assert ex.execute_sql("SELECT COUNT(*) FROM t") == [(4,)]
    assert not Path("/tmp/pyql_sql_should_not_exist.db").exists()


def test_query_only_stays_on(table: Table) -> None:
    ex = Executor(table)
    with pytest.raises(ReadOnlyError):
        ex.execute_sql("PRAGMA query_only=OFF")
    # even with the authorizer removed, query_only still blocks writes
    table.connection.set_authorizer(None)
    with pytest.raises(ReadOnlyError, match="INSERT statement was refused"):
        ex.execute_sql('INSERT INTO "t" ("c0") VALUES (\'x\')')
    assert table.row_count == 4 and ex.count() == 4


def test_reads_are_allowed(table: Table) -> None:
    ex = Executor(table)
    assert ex.execute_sql("SELECT c0 FROM t WHERE n1 > ? ORDER BY n1", [20000]) == [("Ajax",)]
    assert ex.execute_sql("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT SUM(n) FROM r") == [(15,)]
    assert ex.execute_sql("SELECT name FROM sqlite_master") == [("t",)]
    assert ex.execute_sql("SELECT upper(c0), length(c0) FROM t LIMIT 1") == [("AJAX", 4)]


def test_other_sql_errors(table: Table) -> None:
    ex = Executor(table)
    with pytest.raises(SQLExecutionError, match="no such column") as info:
        ex.execute_sql("SELECT nope FROM t")
    assert type(info.value) is SQLExecutionError
    with pytest.raises(SQLExecutionError, match="syntax error"):
        ex.execute_sql("SELEC 1")
    with pytest.raises(SQLExecutionError, match="one statement"):
        ex.execute_sql("SELECT 1; SELECT 2")
    with pytest.raises(SQLExecutionError):
        ex.execute_sql("SELECT ?", [])


SLOW = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r"


def test_timeout(table: Table) -> None:
    ex = Executor(table, timeout=0.2)
    start = time.monotonic()
    with pytest.raises(SQLTimeout) as info:
        ex.execute_sql(SLOW)
    elapsed = time.monotonic() - start
    assert 0.15 < elapsed < 2.0
    err = info.value
    assert err.kind == "sql_timeout" and err.timeout == 0.2 and err.sql == SLOW
    assert "0.2 s timeout" in str(err)
    # the connection is usable afterwards, and the progress handler is gone
    assert ex.execute_sql("SELECT COUNT(*) FROM t", timeout=None) == [(4,)]
    # a per-call timeout overrides the executor's
    with pytest.raises(SQLTimeout):
        Executor(table, timeout=None).execute_sql(SLOW, timeout=0.1)


def test_timeout_on_a_cross_join() -> None:
    big = Table.from_rows(["a"], [[str(i)] for i in range(2000)])
    with pytest.raises(SQLTimeout):
        Executor(big, timeout=0.2).execute_sql("SELECT COUNT(*) FROM t x, t y, t z")


def test_get_column(table: Table) -> None:
    ex = Executor(table)
    cv = ex.get_column("opponent")
    assert (cv.column, cv.type, cv.values, cv.distinct_count, cv.row_count, cv.truncated) == (
        "Opponent",
        "text",
        ["Ajax", "UCD", "Porto"],
        3,
        4,
        False,
    )
    assert cv.to_dict()["values"] == ["Ajax", "UCD", "Porto"]
    assert str(cv) == "Column 'Opponent' (text): 3 distinct values in 4 rows: ['Ajax', 'UCD', 'Porto']"
    capped = ex.get_column("Attendance", limit=2)
    assert capped.values == ["19,768", "—"] and capped.distinct_count == 4 and capped.truncated
    assert "(first 2 shown)" in str(capped)
    within = ex.get_column("Venue", query=table.query().add_condition("Opponent", "=", "ajax"))
    assert (within.values, within.distinct_count, within.row_count) == (["Home", "Away"], 2, 2)
    with pytest.raises(UnknownColumnError, match="Did you mean 'Venue'"):
        ex.get_column("venu")
    with pytest.raises(ValueError):
        ex.get_column("Venue", limit=-1)


def test_rows_and_count(table: Table) -> None:
    ex = Executor(table)
    q = table.query().add_condition("Venue", "=", "home")
    rows = ex.rows(q)
    assert rows.total == 2 and ex.count(q) == 2
    assert rows.to_dicts() == [
        {"Opponent": "Ajax", "Attendance": "19,768", "Venue": "Home"},
        {"Opponent": "Porto", "Attendance": "", "Venue": "Home"},
    ]
    assert ex.rows(limit=1).rows == [("Ajax", "19,768", "Home")]
    assert ex.rows(limit=1).total == 4


def test_answers(table: Table) -> None:
    ex = Executor(table)
    got = ex.execute(table.query().add_condition("Opponent", "=", "AJAX").set_answer("Attendance"))
    assert got == [Answer("19,768"), Answer("24,691")]
    assert [a.to_dict() for a in got] == [{"value": "19,768", "label": None}, {"value": "24,691", "label": None}]
