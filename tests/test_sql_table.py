"""Tables: loading (inline, CSV, WikiSQL jsonl, official .db, dbbench), types, headers."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from pyql.errors import PyQLError
from pyql_sql import (
    AmbiguousColumnError,
    Executor,
    ReadOnlyError,
    SQLError,
    Table,
    TableLoadError,
    UnknownColumnError,
)
from pyql_sql.numbers import parse_number
from pyql_sql.table import infer_type
from tests.shared_data import needs_shared, shared_path

DEV = shared_path("dbbench")

WIKISQL_RECORD = {
    "id": "1-1000181-1",
    "header": ["State/territory", "Text/background colour", "Format", "Current slogan", "Current series", "Notes"],
    "types": ["text", "text", "text", "text", "text", "text"],
    "rows": [
        ["Australian Capital Territory", "blue/white", "Yaa·nna", "ACT · CELEBRATION OF A CENTURY 2013", "YIL·00A", "Slogan screenprinted on plate"],
        ["New South Wales", "black/yellow", "aa·nn·aa", "NEW SOUTH WALES", "BX·99·HI", "No slogan on current series"],
        ["New South Wales", "black/white", "aaa·nna", "NSW", "CPX·12A", "Optional white slimline series"],
        ["Northern Territory", "ochre/white", "Ca·nn·aa", "NT · OUTBACK AUSTRALIA", "CB·06·ZZ", "New series began in June 2011"],
    ],
}


# ----------------------------------------------------------------- numbers / types
@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("1,174", 1174.0),
        ("1174.0", 1174.0),
        ("\u22123", -3.0),
        ("-3", -3.0),
        ("+2", 2.0),
        ("12,500,000", 12_500_000.0),
        (".5", 0.5),
        ("1.", 1.0),
        (" 9.626 ", 9.626),
        (17, 17.0),
        (2.5, 2.5),
        ("1,17", None),
        ("1 174", None),
        ("£8.5m", None),
        ("45%", None),
        ("3–1", None),
        ("1e5", None),
        ("nan", None),
        ("", None),
        (None, None),
        (True, None),
        (float("inf"), None),
        (10**400, None),
    ],
)
def test_parse_number(text: object, number: float | None) -> None:
    assert parse_number(text) == number


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "2", "3"], "real"),
        (["1,174", "", None, "−3", "0.5"], "real"),
        (["24,000", "9,500"], "real"),
        (["12,573", "—"], "text"),  # a dash for "no data" makes the column text
        (["2011", "Retired"], "text"),
        (["", None], "text"),
        ([], "text"),
        (["1.", "2.", "31."], "real"),
    ],
)
def test_infer_type(values: list[object], expected: str) -> None:
    assert infer_type(values) == expected


def test_types_inferred_and_given() -> None:
    t = Table.from_rows(["Name", "Crowd", "Ends"], [["a", "24,000", "2011"], ["b", "9,500", "Retired"]])
    assert t.types == ("text", "real", "text")
    forced = Table.from_rows(["Name", "Crowd"], [["a", "1"]], types=["TEXT", "text"])
    assert forced.types == ("text", "text")
    with pytest.raises(TableLoadError, match="Unknown column type"):
        Table.from_rows(["a"], [["1"]], types=["date"])
    with pytest.raises(TableLoadError, match="one type per column"):
        Table.from_rows(["a"], [["1"]], types=["real", "text"])


# ----------------------------------------------------------------- headers
AWKWARD = ["Name", "Year(s) won", 'Say "hi"', "a;b -- c", "W-L-T", "Name", "", "Café / Bar"]


@pytest.fixture()
def awkward() -> Table:
    return Table.from_rows(AWKWARD, [["x", "1990", "q", "r", "5-1", "y", "z", "é"]])


def test_awkward_headers_are_kept(awkward: Table) -> None:
    assert awkward.headers == tuple(AWKWARD)
    assert [c.text_sql for c in awkward.columns] == [f"c{i}" for i in range(len(AWKWARD))]
    # headers never reach the SQL text
    sql = awkward.query().add_condition('Say "hi"', "=", "q").set_answer("a;b -- c").sql()
    assert "hi" not in sql and "--" not in sql


@pytest.mark.parametrize(
    ("asked", "index"),
    [
        ("Year(s) won", 1),  # exact
        ("year(s) WON", 1),  # case-insensitive
        ("  year(s)   won ", 1),  # whitespace-insensitive
        ("years won", 1),  # punctuation-insensitive
        ("Year won", None),  # not close enough for any level
        ("wlt", 4),
        ('say "HI"', 2),
        ("say hi", 2),
        ("a;b -- c", 3),
        ("CAFÉ / BAR", 7),
        ("cafe bar", None),  # accents are not dropped
        ("", 6),
        (6, 6),
        (0, 0),
    ],
)
def test_resolve_column(awkward: Table, asked: str | int, index: int | None) -> None:
    if index is None:
        with pytest.raises(UnknownColumnError):
            awkward.resolve_column(asked)
    else:
        assert awkward.resolve_column(asked).index == index


def test_unknown_column_suggests_closest(awkward: Table) -> None:
    with pytest.raises(UnknownColumnError) as info:
        awkward.resolve_column("Year won")
    err = info.value
    assert err.kind == "unknown_column"
    assert err.suggestions[0] == "Year(s) won"
    assert "Did you mean" in str(err) and "The columns are:" in str(err)
    assert isinstance(err, SQLError) and isinstance(err, PyQLError)
    with pytest.raises(UnknownColumnError, match="index out of range"):
        awkward.resolve_column(42)


def test_duplicate_headers_are_ambiguous(awkward: Table) -> None:
    with pytest.raises(AmbiguousColumnError) as info:
        awkward.resolve_column("name")
    assert [i for i, _ in info.value.candidates] == [0, 5]
    assert "Pass the column index" in str(info.value)
    assert awkward.resolve_column(5).header == "Name"


# ----------------------------------------------------------------- loaders
def test_from_rows_validates_shape() -> None:
    with pytest.raises(TableLoadError, match="Row 1 has 3 cells"):
        Table.from_rows(["a", "b"], [["1", "2"], ["1", "2", "3"]])
    with pytest.raises(TableLoadError, match="at least one column"):
        Table.from_rows([], [])
    empty = Table.from_rows(["a", "b"], [])
    assert empty.row_count == 0 and empty.types == ("text", "text")


def test_from_rows_python_values() -> None:
    t = Table.from_rows(["n", "s"], [[1, None], [2.5, "x"], [None, "y"]])
    assert t.types == ("real", "text")
    assert Executor(t).execute(t.query().set_answer("n", "SUM"))[0].value == 3.5
    assert [a.value for a in Executor(t).execute(t.query().set_answer("n"))] == ["1", "2.5", None]


def test_from_csv(tmp_path: Path) -> None:
    p = tmp_path / "matches.csv"
    p.write_text(
        'Home team,Home team score,Crowd,"Venue, city"\n'
        'Geelong,20.15 (135),"24,000","Kardinia Park, Geelong"\n'
        'Melbourne,13.17 (95),"21,000","MCG, Melbourne"\n',
        encoding="utf-8",
    )
    t = Table.from_csv(p)
    assert t.name == "matches"
    assert t.headers == ("Home team", "Home team score", "Crowd", "Venue, city")
    assert t.types == ("text", "text", "real", "text")
    q = t.query().add_condition("home team score", "=", "13.17 (95)").set_answer("Crowd", "MAX")
    assert Executor(t).execute(q)[0].value == 21000.0
    with pytest.raises(TableLoadError, match="No CSV file"):
        Table.from_csv(tmp_path / "missing.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(TableLoadError, match="empty"):
        Table.from_csv(tmp_path / "empty.csv")


def test_from_wikisql_jsonl(tmp_path: Path) -> None:
    other = dict(WIKISQL_RECORD, id="1-2-3", rows=[["a"] * 6])
    p = tmp_path / "dev.tables.jsonl"
    p.write_text(json.dumps(other) + "\n" + json.dumps(WIKISQL_RECORD) + "\n", encoding="utf-8")
    t = Table.from_wikisql_jsonl(p, "1-1000181-1")
    assert t.name == "1-1000181-1" and t.row_count == 4
    assert t.headers == tuple(WIKISQL_RECORD["header"])
    t2 = Table.from_wikisql_jsonl(p, "table_1_1000181_1")
    assert t2.row_count == 4
    q = t.query().add_condition("state/territory", "=", "new south wales").set_answer("Format", "COUNT")
    assert Executor(t).execute(q)[0].value == 2
    with pytest.raises(TableLoadError, match="No table with id"):
        Table.from_wikisql_jsonl(p, "9-9-9")
    with pytest.raises(TableLoadError, match="lacks 'rows'"):
        Table.from_wikisql_record({"id": "x", "header": ["a"]})


def _official_db(path: Path) -> Path:
    """A .db in WikiSQL's official layout: table_<id> with col0..colN typed text/real."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE table_1_1000181_1 (col0 text, col1 text, col2 real, col3 real)"
    )
    conn.executemany(
        "INSERT INTO table_1_1000181_1 VALUES (?, ?, ?, ?)",
        [
            ("australian capital territory", "blue/white", 2013.0, 1.5),
            ("new south wales", "black/yellow", 1999.0, 2.0),
            ("new south wales", "black/white", 2004.0, 3.25),
            ("northern territory", "ochre/white", 2011.0, None),
        ],
    )
    conn.commit()
    conn.close()
    return path


def test_from_wikisql_db(tmp_path: Path) -> None:
    db = _official_db(tmp_path / "dev.db")
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    header = ["State/territory", "Text/background colour", "Year", "Score"]
    t = Table.from_wikisql_db(db, "1-1000181-1", header=header)
    assert t.layout == "wikisql_db"
    assert t.headers == tuple(header)
    assert t.types == ("text", "text", "real", "real")
    assert [c.text_sql for c in t.columns] == ["col0", "col1", "col2", "col3"]
    assert t.row_count == 4
    ex = Executor(t)
    q = t.query().add_condition("state/territory", "=", "New South Wales").set_answer("Year", "MAX")
    assert q.sql() == (
        'SELECT MAX("col2") FROM "table_1_1000181_1" '
        "WHERE LOWER(TRIM(\"col0\")) = LOWER('New South Wales')"
    )
    assert ex.execute(q)[0].value == 2004.0
    assert [a.value for a in ex.execute(t.query().add_condition("Year", ">", "2,000").set_answer("Score"))] == [
        1.5,
        3.25,
        None,
    ]
    # default header: col0..colN
    assert Table.from_wikisql_db(db, "table_1_1000181_1").headers == ("col0", "col1", "col2", "col3")
    # read-only, twice over: the authorizer, and the file opened with mode=ro
    with pytest.raises(ReadOnlyError):
        ex.execute_sql('DELETE FROM "table_1_1000181_1"')
    t.connection.set_authorizer(None)
    t.connection.execute("PRAGMA query_only=OFF")
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        t.connection.execute('DELETE FROM "table_1_1000181_1"')
    t.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest


def test_from_wikisql_db_errors(tmp_path: Path) -> None:
    db = _official_db(tmp_path / "dev.db")
    with pytest.raises(TableLoadError, match="No table 'table_9_9_9'"):
        Table.from_wikisql_db(db, "9-9-9")
    with pytest.raises(TableLoadError, match="Got 2 headers"):
        Table.from_wikisql_db(db, "1-1000181-1", header=["a", "b"])
    with pytest.raises(TableLoadError, match="No SQLite file"):
        Table.from_wikisql_db(tmp_path / "missing.db", "1-1000181-1")
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(TableLoadError, match="not a readable SQLite database"):
        Table.from_wikisql_db(bad, "1-1000181-1")
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE table_1_2_3 (a text, b real)")
    conn.commit()
    conn.close()
    with pytest.raises(TableLoadError, match="col0..colN"):
        Table.from_wikisql_db(tmp_path / "other.db", "1-2-3")


@needs_shared("dbbench")
def test_from_dbbench_item() -> None:
    item = json.loads(DEV.read_text(encoding="utf-8").splitlines()[12])
    t = Table.from_dbbench(item)
    assert t.name == "Baseball Team Record"
    assert t.headers == ("Date", "Opponent", "Score", "Loss", "Attendance", "Record")
    # dbbench says TEXT for everything; inference finds the numeric column
    assert t.types == ("text", "text", "text", "text", "real", "text")
    assert t.row_count == 39
    with pytest.raises(TableLoadError, match="table_info"):
        Table.from_dbbench({"table": {}})


def test_describe_and_get_column() -> None:
    t = Table.from_rows(["Class", "ERP W"], [["D", "200"], ["A", "3,000"], ["D", "170"]], name="Radio")
    assert t.describe() == "Table 'Radio' (3 rows). Columns: 'Class' (text), 'ERP W' (real)."
    cv = t.get_column("class")
    assert (cv.values, cv.distinct_count, cv.row_count) == (["D", "A"], 2, 3)
    assert repr(t) == "Table(name='Radio', columns=2, rows=3, layout='pyql')"
    with t:
        pass
    with pytest.raises(sqlite3.ProgrammingError):
        t.connection.execute("SELECT 1")
