"""WikiSQL: gold form <-> step chains, gold SQL parsing, denotation accuracy on dbbench dev.jsonl.

The dev file (AgentBench dbbench, WikiSQL items) has 34 items: 14 SELECT
questions with a gold SQL text in ``sql.query`` and 20 INSERT/UPDATE tasks
(no ``sql`` key; the statement itself is the label). Every SELECT text of
WikiSQL's shape is parsed into WikiSQL's ``{"sel", "agg", "conds"}`` form,
turned into a PyQL step chain, executed by pyql_sql, and compared with the
gold ``label``. Every item that does not reach a match is listed below with
its reason; nothing in the library knows about any item.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyql_sql import (
    Answer,
    Executor,
    Table,
    WikiSQLFormatError,
    denotation_equal,
    execution_match,
    label_match,
    parse_gold_sql,
    query_from_wikisql,
    query_to_wikisql,
)
from tests.shared_data import needs_shared, shared_path

DEV = shared_path("dbbench")
#: The dbbench WikiSQL items (empty without the shared data: the tests that read them skip).
ITEMS: list[dict[str, Any]] = (
    [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines()] if DEV.is_file() else []
)
needs_dev = needs_shared("dbbench")


def gold_sql_text(item: dict[str, Any]) -> str:
    """The gold SQL text: ``sql.query``, or for dbbench's INSERT/UPDATE items the label itself."""
    if "sql" in item:
        return item["sql"]["query"]
    return item["label"][0]


SELECTS = list(range(0, 14))
MUTATIONS = list(range(14, 34))  # INSERT (14-23) and UPDATE (24-33): not queries

# status of every item when the gold SQL is parsed strictly, and with repair=True
STRICT = {
    "ok": [0, 1, 2, 4, 5, 8, 9, 10, 11, 12],
    "malformed": [3, 7, 13],
    "not_wikisql_shape": [6],
    "not_select": MUTATIONS,
}
REPAIRED = {
    "ok": [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13],
    "malformed": [],
    "not_wikisql_shape": [6, 7],
    "not_select": MUTATIONS,
}

#: why an item is not usable (not WikiSQL-shaped or malformed gold SQL)
NOT_USABLE_REASONS = {
    3: "malformed gold SQL: 'AverageFROM' (missing space); parses after repair",
    6: "not WikiSQL shape: ORDER BY ... LIMIT 1 selecting Player; the label 2.0 is MIN(Touchdowns) WHERE Points = 11",
    7: "malformed gold SQL ('DateFROM', 'DESCLIMIT') and not WikiSQL shape: three select columns, ORDER BY, LIMIT; "
    "the label 21000.0 is the Crowd WHERE Home team score = 13.17 (95)",
    13: "malformed gold SQL: 'Olympic_medal_countsWHERE' (missing space); parses after repair",
    **{i: "not a query: dbbench INSERT task (the label is the statement)" for i in range(14, 24)},
    **{i: "not a query: dbbench UPDATE task (the label is the statement)" for i in range(24, 34)},
}

#: WikiSQL-shaped items whose executed gold query does not give the label
MISMATCH_REASONS = {
    0: "label quirk: the inline table (AgentBench's sample of rows) has no row with Termination of Mission = "
    "'August 15, 2000', so the gold query returns nothing; the label 'March 19, 1998' is not in the table either",
    9: "label quirk: SUM(Try bonus) WHERE Points = 51 is 5 on this table; the label 1.0 is what COUNT gives, "
    "so the label was made with another aggregation than the gold SQL says",
    11: "gold SQL contradicts question and label: the question asks for 'less than 0 Silvers' (no such row, "
    "label 'none'); the SQL says Silver = 0, whose MAX(Bronze) is 5",
}


def _table(i: int) -> Table:
    return Table.from_dbbench(ITEMS[i])


def _statuses(repair: bool) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {"ok": [], "malformed": [], "not_wikisql_shape": [], "not_select": []}
    for i, item in enumerate(ITEMS):
        headers = [c["name"] for c in item["table"]["table_info"]["columns"]]
        out[parse_gold_sql(gold_sql_text(item), headers, repair=repair).status].append(i)
    return out


@needs_dev
def test_dev_file_layout() -> None:
    assert len(ITEMS) == 34
    assert [i for i, it in enumerate(ITEMS) if "sql" in it] == SELECTS
    assert all(ITEMS[i]["type"][0] in ("INSERT", "UPDATE") for i in MUTATIONS)


@needs_dev
def test_gold_sql_shapes() -> None:
    assert _statuses(repair=False) == STRICT
    assert _statuses(repair=True) == REPAIRED
    # every item that is not usable has a reason, and vice versa
    usable = set(REPAIRED["ok"]) - {3, 13}
    assert set(NOT_USABLE_REASONS) == set(range(34)) - usable


def _run_dev(repair: bool) -> tuple[list[int], list[int]]:
    shaped, matched = [], []
    for i, item in enumerate(ITEMS):
        table = _table(i)
        parsed = parse_gold_sql(gold_sql_text(item), table.headers, repair=repair)
        if not parsed.ok:
            continue
        shaped.append(i)
        query = query_from_wikisql(table, parsed.gold)  # type: ignore[arg-type]
        if label_match(Executor(table).execute(query), item["label"]):
            matched.append(i)
    return shaped, matched


@needs_dev
def test_dev_denotation_accuracy() -> None:
    shaped, matched = _run_dev(repair=True)
    assert len(shaped) == 12 and len(matched) == 9
    assert sorted(set(shaped) - set(matched)) == sorted(MISMATCH_REASONS)
    strict_shaped, strict_matched = _run_dev(repair=False)
    assert len(strict_shaped) == 10 and len(strict_matched) == 7
    assert sorted(set(strict_shaped) - set(strict_matched)) == sorted(MISMATCH_REASONS)
    print(
        f"\ndbbench WikiSQL dev: {len(ITEMS)} items, {len(SELECTS)} SELECT; WikiSQL-shaped "
        f"{len(strict_shaped)} strict / {len(shaped)} with repair; label matches "
        f"{len(strict_matched)} / {len(matched)}; mismatches: {MISMATCH_REASONS}"
    )


def _values(i: int, build: Any) -> list[Any]:
    t = _table(i)
    return [a.value for a in Executor(t).execute(build(t.query()))]


@needs_dev
def test_mismatch_reasons_hold() -> None:
    """Each stated reason is checked against the data, not just asserted."""
    t0 = _table(0)
    assert "August 15, 2000" not in t0.get_column("Termination of Mission", limit=100).values
    assert "March 19, 1998" not in t0.get_column("Presentation of Credentials", limit=100).values
    count = _values(9, lambda q: q.add_condition("Points", "=", 51).set_answer("Try bonus", "COUNT"))
    assert label_match(count, ITEMS[9]["label"]) and _values(
        9, lambda q: q.add_condition("Points", "=", 51).set_answer("Try bonus", "SUM")
    ) == [5.0]
    less = _values(11, lambda q: q.add_condition("Silver", "<", 0).set_answer("Bronze", "MAX"))
    assert less == [None] and label_match(less, ITEMS[11]["label"])
    assert "less than 0 Silvers" in ITEMS[11]["description"]


@needs_dev
def test_not_shaped_labels_come_from_wikisql_shaped_queries() -> None:
    six = _values(6, lambda q: q.add_condition("Points", "=", "11").set_answer("Touchdowns", "MIN"))
    assert label_match(six, ITEMS[6]["label"])
    seven = _values(7, lambda q: q.add_condition("Home team score", "=", "13.17 (95)").set_answer("Crowd"))
    assert label_match(seven, ITEMS[7]["label"])


@needs_dev
@pytest.mark.parametrize("i", REPAIRED["ok"])
def test_gold_roundtrip(i: int) -> None:
    table = _table(i)
    gold = parse_gold_sql(gold_sql_text(ITEMS[i]), table.headers, repair=True).gold
    query = query_from_wikisql(table, gold)  # type: ignore[arg-type]
    back = query_to_wikisql(query)
    assert back["sel"] == gold["sel"] and back["agg"] == gold["agg"]  # type: ignore[index]
    assert [c[:2] for c in back["conds"]] == [c[:2] for c in gold["conds"]]  # type: ignore[index]
    ex = Executor(table)
    assert execution_match(ex, query, query_from_wikisql(table, back))


# ----------------------------------------------------------------- gold SQL parser
H = ["Player", "No.", "Points", "Points for", "Year(s) won", "W-L-T", "From", "Order"]

PARSES = [
    ("SELECT Player FROM t", {"sel": 0, "agg": 0, "conds": []}),
    ("select player from t;", {"sel": 0, "agg": 0, "conds": []}),
    ("SELECT Points for FROM t WHERE Points > 10", {"sel": 3, "agg": 0, "conds": [[2, 1, 10]]}),
    ("SELECT COUNT(No.) AS n FROM `a table` WHERE W-L-T = '5-1'", {"sel": 1, "agg": 3, "conds": [[5, 0, "5-1"]]}),
    ('SELECT max ( "Points for" ) FROM "x" WHERE Year(s) won = 1990 AND Player = O\'Neil',
     {"sel": 3, "agg": 1, "conds": [[4, 0, 1990], [0, 0, "O'Neil"]]}),
    ("SELECT [Year(s) won] FROM [t] WHERE [From] < 2.5 AND Order = 'it''s'",
     {"sel": 4, "agg": 0, "conds": [[6, 2, 2.5], [7, 0, "it's"]]}),
    ("SELECT Player FROM table WHERE Points for = 12 (5)", {"sel": 0, "agg": 0, "conds": [[3, 0, "12 (5)"]]}),
    ("SELECT AVG(Points)FROM t WHERE Player=\"Ann\"", {"sel": 2, "agg": 5, "conds": [[0, 0, "Ann"]]}),
    ("SELECT Player FROM US Ambassadors to Colombia WHERE Points = -3",
     {"sel": 0, "agg": 0, "conds": [[2, 0, -3]]}),
]


@pytest.mark.parametrize(("sql", "gold"), PARSES)
def test_parse_gold_sql_ok(sql: str, gold: dict[str, Any]) -> None:
    p = parse_gold_sql(sql, H)
    assert (p.status, p.reason, p.gold) == ("ok", None, gold)


REJECTS = [
    ("UPDATE t SET Player = 'x'", "not_select", "an UPDATE statement, not a SELECT query"),
    ("", "not_select", "empty text"),
    ("SELECT * FROM t", "not_wikisql_shape", "it selects * instead of one column"),
    ("SELECT Player, Points FROM t", "not_wikisql_shape", "it selects several columns"),
    ("SELECT DISTINCT Player FROM t", "not_wikisql_shape", "it has SELECT DISTINCT"),
    ("SELECT COUNT(*) FROM t", "not_wikisql_shape", "COUNT(*) has no column"),
    ("SELECT Player FROM t WHERE Points = 1 OR Points = 2", "not_wikisql_shape", "it has OR-ed conditions"),
    ("SELECT Player FROM t WHERE Points >= 1", "not_wikisql_shape", "operator '>=' is not one of WikiSQL's =, >, <"),
    ("SELECT Player FROM t WHERE Player LIKE 'A%'", "not_wikisql_shape", "it uses the LIKE operator"),
    ("SELECT Player FROM t GROUP BY Player", "not_wikisql_shape", "it has a GROUP BY clause"),
    ("SELECT Player FROM t LIMIT 1", "not_wikisql_shape", "it has a LIMIT clause"),
    ("SELECT UPPER(Player) FROM t", "not_wikisql_shape", "it selects UPPER(...), not a column"),
    ("SELECT Nobody FROM t", "malformed", "no header of the table at 'Nobody FROM t' in the select clause"),
    ("SELECT `Nobody` FROM t", "malformed", "unknown column 'Nobody' in the select clause"),
    ("SELECT Player FROM t WHERE Player = 'open", "malformed", "unclosed quote ' at \"'open\""),
    ("SELECT Player t", "malformed", "expected FROM at 't'"),
    ("SELECT PlayerFROM t", "malformed", "keyword FROM glued to the preceding word in 'PlayerFROM'"),
    ("SELECT Player FROM t WHERE Points ~ 3", "malformed", "expected an operator at '~ 3'"),
    ("SELECT MAX(Points FROM t", "malformed", "expected ')' at 'FROM t'"),
]


@pytest.mark.parametrize(("sql", "status", "reason"), REJECTS)
def test_parse_gold_sql_rejects(sql: str, status: str, reason: str) -> None:
    p = parse_gold_sql(sql, H)
    assert (p.status, p.reason, p.gold) == (status, reason, None)


def test_bare_values_with_and() -> None:
    h = ["Team", "Points", "Venue"]
    p = parse_gold_sql("SELECT Venue FROM t WHERE Team = Brighton and Hove Albion AND Points = 3", h)
    assert p.gold == {"sel": 2, "agg": 0, "conds": [[0, 0, "Brighton and Hove Albion"], [1, 0, 3]]}
    p = parse_gold_sql("SELECT Venue FROM t WHERE Team = Law and Order", h)
    assert p.gold == {"sel": 2, "agg": 0, "conds": [[0, 0, "Law and Order"]]}
    p = parse_gold_sql("SELECT Venue FROM t WHERE Team = A or B ORDER BY Venue", h)
    assert (p.status, p.reason) == ("not_wikisql_shape", "it has an ORDER BY clause")


def test_parse_gold_sql_repair() -> None:
    p = parse_gold_sql("SELECT PlayerFROM [t]WHERE PointsWHERE = 1", H, repair=True)
    # 'PointsWHERE' is glued too, but what follows is not SQL any more
    assert p.repairs == (
        "inserted a space before FROM in 'PlayerFROM'",
        "inserted a space before WHERE in 'PointsWHERE'",
    )
    assert p.status == "malformed"
    ok = parse_gold_sql("SELECT PlayerFROM t WHERE Points = 'xFROM y'", H, repair=True)
    assert ok.gold == {"sel": 0, "agg": 0, "conds": [[2, 0, "xFROM y"]]}  # quoted text is never touched
    # a header that ends in a keyword is not "glued"
    assert parse_gold_sql("SELECT GameFROM FROM t", ["GameFROM"]).gold == {"sel": 0, "agg": 0, "conds": []}


# ----------------------------------------------------------------- gold dict -> chain
def test_query_from_wikisql_and_errors() -> None:
    t = Table.from_rows(["Player", "Points"], [["Ann", "11"], ["Bob", "49"]])
    q = query_from_wikisql(t, {"sel": 0, "agg": 0, "conds": [[1, 1, 10], [1, 2, "40"]]})
    assert q.actions() == ["add_condition(Points, >, 10)", "add_condition(Points, <, 40)", "set_answer(Player, None)"]
    assert [a.value for a in Executor(t).execute(q)] == ["Ann"]
    for bad, msg in [
        ({"agg": 0, "conds": []}, "'sel' is missing"),
        ({"sel": 2, "agg": 0, "conds": []}, "sel must be an int in 0..1"),
        ({"sel": 0, "agg": 6, "conds": []}, "agg must be an int in 0..5"),
        ({"sel": 0, "agg": 0, "conds": [[0, 3, "x"]]}, "op"),
        ({"sel": 0, "agg": 0, "conds": [[0, 0]]}, "must be \\[column, op, value\\]"),
    ]:
        with pytest.raises(WikiSQLFormatError, match=msg):
            query_from_wikisql(t, bad)
    # WikiSQL's DBEngine fallback: a non-number on a real column becomes its first number
    w = query_from_wikisql(t, {"sel": 0, "agg": 0, "conds": [[1, 0, "49 (3)"]]})
    assert w.conditions[0].value == "49" and [a.value for a in Executor(t).execute(w)] == ["Bob"]
    with pytest.raises(WikiSQLFormatError, match="no answer"):
        query_to_wikisql(t.query())
    with pytest.raises(WikiSQLFormatError, match="only has =, >, <"):
        query_to_wikisql(t.query().add_condition("Points", ">=", 1).set_answer("Player"))


def test_denotation_comparisons() -> None:
    assert denotation_equal([Answer("32,502")], ["32502.0"])
    assert denotation_equal(["K255AZ", "K228EE"], ["k228ee", "k255az"])
    assert not denotation_equal(["K255AZ", "K228EE"], ["k228ee", "k255az"], ordered=True)
    assert not denotation_equal(["a"], ["a", "a"])
    assert denotation_equal([1 / 3], [0.333333333333333])
    assert label_match([], ["none"]) and label_match([None], ["None"])
    assert not label_match([0], ["none"])
    assert label_match(["none"], ["none"])


def test_execution_match_is_wikisql_list_equality() -> None:
    t = Table.from_rows(["a", "b"], [["1", "x"], ["2", "y"], ["3", "y"]])
    ex = Executor(t)
    gold = t.query().add_condition("b", "=", "y").set_answer("a")
    assert execution_match(ex, t.query().add_condition("a", ">", "1").set_answer("a"), gold)
    assert not execution_match(ex, t.query().add_condition("a", ">", "2").set_answer("a"), gold)
    assert not execution_match(ex, t.query().add_condition("b", "=", "y").set_answer("a", "MAX"), gold)
    # a prediction that cannot run is wrong (here: no answer column)
    assert not execution_match(ex, t.query(), gold)
