"""TableQuery: steps -> SQL, immutability, comparison semantics, dialects, step errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlglot
from sqlglot import exp

from pyql_sql import (
    BadAggregationError,
    BadOperatorError,
    BadValueError,
    Executor,
    IncompleteQueryError,
    SQLQueryError,
    Table,
    TableQuery,
)

HEADER = ["Player", "Position", "Touchdowns", "Points", "Ends"]
ROWS = [
    ["Curtis", "Left tackle", "6", "49", "2011"],
    ["Magoffin", "Right halfback", "2", "11", "2010"],
    ["Smith", "Quarterback", "4", "1,174", "Retired"],
    ["smith", "Center", "0", "0", "2009"],
    ["Ünal", "Center", "1", "5", "2011"],
]


@pytest.fixture(scope="module")
def table() -> Table:
    return Table.from_rows(HEADER, ROWS, name="football_stats")


@pytest.fixture(scope="module")
def ex(table: Table) -> Executor:
    return Executor(table)


def test_fixture_types(table: Table) -> None:
    assert table.types == ("text", "text", "real", "real", "text")


Build = Callable[[TableQuery], TableQuery]

# steps -> expected SQLite SQL (compared as parsed sqlglot expressions)
CASES: list[tuple[str, Build, str]] = [
    ("empty query selects every column", lambda q: q, 'SELECT c0, c1, c2, c3, c4 FROM t'),
    ("answer only", lambda q: q.set_answer("Player"), "SELECT c0 FROM t"),
    (
        "text equality is case-insensitive",
        lambda q: q.add_condition("Position", "=", "Center").set_answer("Player"),
        "SELECT c0 FROM t WHERE LOWER(TRIM(c1)) = LOWER('Center')",
    ),
    (
        "numeric column compares the shadow, value normalized",
        lambda q: q.add_condition("Points", ">", "1,000").set_answer("Player"),
        "SELECT c0 FROM t WHERE n3 > 1000",
    ),
    (
        "numeric column, float value",
        lambda q: q.add_condition("Points", "<=", 9.5).set_answer("Player"),
        "SELECT c0 FROM t WHERE n3 <= 9.5",
    ),
    (
        "numeric column, text value with =",
        lambda q: q.add_condition("Points", "=", "n/a").set_answer("Player"),
        "SELECT c0 FROM t WHERE LOWER(TRIM(c3)) = LOWER('n/a')",
    ),
    (
        "text column, numeric value, equality: number where the cell is one, else text",
        lambda q: q.add_condition("Ends", "=", 2011).set_answer("Player"),
        "SELECT c0 FROM t WHERE COALESCE(n4 = 2011, LOWER(TRIM(c4)) = LOWER('2011'))",
    ),
    (
        "text column, numeric value, ordering: only numeric cells",
        lambda q: q.add_condition("Ends", "<", "2011").set_answer("Player"),
        "SELECT c0 FROM t WHERE n4 < 2011",
    ),
    (
        "text column, text value, ordering is text order",
        lambda q: q.add_condition("Player", ">=", "M").set_answer("Player"),
        "SELECT c0 FROM t WHERE LOWER(TRIM(c0)) >= LOWER('M')",
    ),
    (
        "!= on text",
        lambda q: q.add_condition("Position", "!=", "Center").set_answer("Player"),
        "SELECT c0 FROM t WHERE COALESCE(LOWER(TRIM(c1)) <> LOWER('Center'), TRUE)",
    ),
    (
        "conditions are AND-ed in order",
        lambda q: q.add_condition("Position", "=", "center").add_condition("Touchdowns", ">", 0).set_answer("Player"),
        "SELECT c0 FROM t WHERE LOWER(TRIM(c1)) = LOWER('center') AND n2 > 0",
    ),
    ("COUNT counts the text", lambda q: q.set_answer("Points", "count"), "SELECT COUNT(c3) FROM t"),
    ("MAX of numeric uses the shadow", lambda q: q.set_answer("Points", "MAX"), "SELECT MAX(n3) FROM t"),
    ("MIN of text is text order", lambda q: q.set_answer("Player", "Min"), "SELECT MIN(c0) FROM t"),
    ("SUM of a text column sums its numbers", lambda q: q.set_answer("Ends", "SUM"), "SELECT SUM(n4) FROM t"),
    ("AVG", lambda q: q.set_answer("Touchdowns", "avg"), "SELECT AVG(n2) FROM t"),
    ("None aggregation spelled 'None'", lambda q: q.set_answer("Player", "None"), "SELECT c0 FROM t"),
    ("None aggregation spelled ''", lambda q: q.set_answer("Player", ""), "SELECT c0 FROM t"),
    (
        "a later set_answer replaces an earlier one",
        lambda q: q.set_answer("Player").set_answer("Points", "SUM"),
        "SELECT SUM(n3) FROM t",
    ),
    (
        "undo drops the last step",
        lambda q: q.add_condition("Points", ">", 1).set_answer("Player").undo().set_answer("Position"),
        "SELECT c1 FROM t WHERE n3 > 1",
    ),
    (
        "column by index",
        lambda q: q.add_condition(1, "=", "Center").set_answer(0),
        "SELECT c0 FROM t WHERE LOWER(TRIM(c1)) = LOWER('Center')",
    ),
]


def _unquote(e: exp.Expression) -> exp.Expression:
    def f(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Identifier):
            return exp.to_identifier(node.name, quoted=False)
        return node

    return e.transform(f)


@pytest.mark.parametrize(("name", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_steps_to_sql(table: Table, ex: Executor, name: str, build: Build, expected: str) -> None:
    q = build(table.query())
    got = sqlglot.parse_one(q.sql(), read="sqlite")
    assert _unquote(got) == sqlglot.parse_one(expected, read="sqlite"), q.sql()
    # the parameterised text has the same structure, with one ? per value
    text, params = q.sql_with_params()
    assert text.count("?") == len(params)
    assert Executor(table).execute_sql(text, params) == ex.execute_sql(q.sql())


def test_immutability(table: Table) -> None:
    q1 = table.query().add_condition("Position", "=", "Center")
    sql1, steps1, actions1 = q1.sql(), q1.steps, q1.actions()
    q2 = q1.add_condition("Touchdowns", ">", 0)
    q3 = q1.set_answer("Player", "COUNT")
    q4 = q3.undo().undo()
    assert (q1.sql(), q1.steps, q1.actions()) == (sql1, steps1, actions1)
    assert len(q2.steps) == len(q3.steps) == 2 and len(q4.steps) == 0
    assert q3.undo() == q1 and q3.undo() is not q1
    with pytest.raises(Exception):
        q1.steps = ()  # type: ignore[misc]
    with pytest.raises(Exception):
        q1.steps[0].op = ">"  # type: ignore[misc]
    assert q1.sql() == sql1


def test_actions_and_display(table: Table) -> None:
    q = table.query().add_condition("points", "=", "11").set_answer("Touchdowns", "min")
    assert q.actions() == ["add_condition(Points, =, 11)", "set_answer(Touchdowns, MIN)"]
    assert q.display_sql() == 'SELECT MIN("Touchdowns") FROM "football_stats" WHERE "Points" = 11'
    assert "TableQuery(table='football_stats'" in repr(q)


# ----------------------------------------------------------------- semantics
def _values(ex: Executor, q: TableQuery) -> list[object]:
    return [a.value for a in ex.execute(q)]


def test_case_insensitive_text_equality(table: Table, ex: Executor) -> None:
    q = table.query().add_condition("Player", "=", "SMITH").set_answer("Position")
    assert _values(ex, q) == ["Quarterback", "Center"]
    # Unicode case folding too (SQLite's own LOWER is ASCII-only; the sealed connection's is not)
    assert _values(ex, table.query().add_condition("Player", "=", "ünal").set_answer("Points")) == ["5"]
    assert _values(ex, table.query().add_condition("Player", "=", "  curtis ").set_answer("Points")) == ["49"]


def test_numbers_written_as_text(table: Table, ex: Executor) -> None:
    base = table.query().set_answer("Player")
    # "1,174" in the cell, 1174 / "1174.0" / "1,174" from the LLM
    for value in (1174, "1174.0", "1,174", 1174.0, "+1174"):
        assert _values(ex, base.add_condition("Points", "=", value)) == ["Smith"], value
    assert _values(ex, base.add_condition("Points", ">", "100")) == ["Smith"]  # not text order ("49" > "100")
    assert _values(ex, base.add_condition("Points", "<", 11)) == ["smith", "Ünal"]
    assert _values(ex, base.add_condition("Points", "<=", "11.0")) == ["Magoffin", "smith", "Ünal"]
    assert _values(ex, base.add_condition("Points", "!=", 0)) == ["Curtis", "Magoffin", "Smith", "Ünal"]
    assert _values(ex, base.add_condition("Points", ">", "\u22121")) == ["Curtis", "Magoffin", "Smith", "smith", "Ünal"]
    # a text column with numbers and words
    assert _values(ex, base.add_condition("Ends", "=", "2011.0")) == ["Curtis", "Ünal"]
    assert _values(ex, base.add_condition("Ends", "=", "retired")) == ["Smith"]
    assert _values(ex, base.add_condition("Ends", "<", 2011)) == ["Magoffin", "smith"]


def test_aggregations(table: Table, ex: Executor) -> None:
    q = table.query()
    assert _values(ex, q.set_answer("Points", "MAX")) == [1174.0]
    assert _values(ex, q.set_answer("Points", "MIN")) == [0.0]
    assert _values(ex, q.set_answer("Points", "SUM")) == [1239.0]
    assert _values(ex, q.set_answer("Touchdowns", "AVG")) == [2.6]
    assert _values(ex, q.set_answer("Player", "COUNT")) == [5]
    assert _values(ex, q.set_answer("Ends", "SUM")) == [8041.0]  # 'Retired' is skipped
    assert _values(ex, q.set_answer("Player", "MAX")) == ["Ünal"]
    assert _values(ex, q.add_condition("Points", ">", 10_000).set_answer("Points", "MAX")) == [None]
    assert _values(ex, q.add_condition("Points", ">", 10_000).set_answer("Points", "COUNT")) == [0]
    assert _values(ex, q.add_condition("Points", ">", 10_000).set_answer("Points")) == []
    assert [a.to_dict() for a in ex.execute(q.set_answer("Points", "MAX"))] == [{"value": 1174.0, "label": None}]


# ----------------------------------------------------------------- dialects
DIALECTS = ["sqlite", "duckdb", "postgres", "spark", "trino", "mysql", "bigquery", "snowflake"]


def _conjuncts(e: exp.Expression) -> int:
    where = e.args.get("where")
    if where is None:
        return 0
    cond = where.this
    return len(list(cond.flatten())) if isinstance(cond, exp.And) else 1


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("params", [False, True])
def test_dialect_rendering(table: Table, dialect: str, params: bool) -> None:
    q = (
        table.query()
        .add_condition("Position", "=", "it's -- a; \"test\"")
        .add_condition("Ends", "=", 2011)
        .add_condition("Points", "<", "1,174")
        .set_answer("Touchdowns", "AVG")
    )
    text = q.sql(dialect=dialect, params=params)
    parsed = sqlglot.parse_one(text, read=dialect)
    assert isinstance(parsed, exp.Select)
    assert _conjuncts(parsed) == 3
    assert parsed.sql(dialect=dialect) == text  # stable round trip
    assert len(list(parsed.find_all(exp.Avg))) == 1
    if not params:
        strings = {s.this for s in parsed.find_all(exp.Literal) if s.is_string}
        assert "it's -- a; \"test\"" in strings


def test_params_sqlite(table: Table) -> None:
    q = table.query().add_condition("Ends", "=", 2011).add_condition("Player", "=", "x").set_answer("Player")
    text, params = q.sql_with_params()
    assert text == (
        'SELECT "c0" FROM "t" WHERE COALESCE("n4" = ?, LOWER(TRIM("c4")) = LOWER(?)) '
        'AND LOWER(TRIM("c0")) = LOWER(?)'
    )
    assert params == [2011, "2011", "x"]
    assert q.sql(params=True) == text


# ----------------------------------------------------------------- step errors
@pytest.mark.parametrize("op", ["LIKE", "=!", "><", "", "in", None, 1])
def test_bad_operator(table: Table, op: object) -> None:
    with pytest.raises(BadOperatorError) as info:
        table.query().add_condition("Player", op, "x")  # type: ignore[arg-type]
    assert info.value.kind == "bad_operator"
    assert info.value.allowed == [">", "<", ">=", "<=", "=", "!=", "contains"]
    assert "Allowed operators: >, <, >=, <=, =, !=, contains" in str(info.value)


@pytest.mark.parametrize(("written", "meant"), [("==", "="), ("<>", "!="), ("=>", ">="), ("=<", "<=")])
def test_operator_spellings_of_the_vocabulary(table: Table, written: str, meant: str) -> None:
    # the same spellings the action parser, the SPARQL builder and the GBNF grammar read
    assert table.query().add_condition("Player", written, "x").conditions[0].op == meant


@pytest.mark.parametrize("agg", ["MEDIAN", "total", "count(*)", 3, "sum "])
def test_bad_aggregation(table: Table, agg: object) -> None:
    if agg == "sum ":  # surrounding spaces are fine
        assert table.query().set_answer("Points", agg).answer.aggregation == "SUM"  # type: ignore[union-attr,arg-type]
        return
    with pytest.raises(BadAggregationError) as info:
        table.query().set_answer("Points", agg)  # type: ignore[arg-type]
    assert info.value.allowed == ["None", "MAX", "MIN", "COUNT", "SUM", "AVG", "COUNT DISTINCT"]


@pytest.mark.parametrize("value", [None, True, ["x"], float("nan"), float("inf")])
def test_bad_value_type(table: Table, value: object) -> None:
    with pytest.raises(BadValueError):
        table.query().add_condition("Player", "=", value)  # type: ignore[arg-type]


def test_ordering_needs_a_number_on_numeric_columns(table: Table) -> None:
    with pytest.raises(BadValueError, match="holds numbers"):
        table.query().add_condition("Points", ">", "many")
    # equality with text is allowed (it just compares text)
    table.query().add_condition("Points", "=", "many")


def test_undo_empty_and_incomplete(table: Table, ex: Executor) -> None:
    with pytest.raises(SQLQueryError, match="Nothing to undo"):
        table.query().undo()
    with pytest.raises(IncompleteQueryError, match="set_answer"):
        ex.execute(table.query().add_condition("Player", "=", "x"))


def test_query_on_other_table_is_refused(table: Table) -> None:
    other = Table.from_rows(HEADER, ROWS)
    with pytest.raises(SQLQueryError, match="built on table"):
        Executor(other).execute(table.query().set_answer("Player"))


# ----------------------------------------------------------------- contains: words inside a cell
WORDS = Table.from_rows(
    ["Opponent", "Venue", "Game"],
    [["Atlanta Braves", "Turner Field", "1"], ["@ Atlanta Braves", "Home", "2"], ["Bravest Team", "Away", "3"],
     ["Montréal Expos", "Stade Olympique", "4"], ["50% Club", "Home", "5"], ["a_b", "Joji Kato\n Japan", "6"],
     ["AxB", "Ostrava, Czech Republic", "7"]],
)


def _kept(op_value: tuple[str, str], column: str = "Opponent") -> list[str]:
    q = WORDS.query().add_condition(column, "contains", op_value[1]).set_answer("Game")
    return [str(a.value) for a in WORDS.executor().execute(q)]


@pytest.mark.parametrize(
    ("column", "value", "games"),
    [
        ("Opponent", "Braves", ["1", "2"]),  # whole words: not "Bravest"
        ("Opponent", "BRAVES", ["1", "2"]),  # case aside
        ("Opponent", "atlanta braves", ["1", "2"]),  # several words, in order
        ("Opponent", "braves atlanta", []),
        ("Opponent", "brave", []),  # a part of a word is no word
        ("Opponent", "montreal", ["4"]),  # accents aside
        ("Venue", "japan", ["6"]),  # a line break separates words
        ("Venue", "Ostrava", ["7"]),  # so does punctuation
        ("Venue", "czech republic", ["7"]),
    ],
)
def test_contains_keeps_the_cells_holding_the_words(column: str, value: str, games: list[str]) -> None:
    assert _kept(("contains", value), column) == games


def test_contains_binds_its_value_and_has_no_wildcards() -> None:
    q = WORDS.query().add_condition("Opponent", "contains", "a%b").set_answer("Game")
    text, params = q.sql_with_params()
    assert text == 'SELECT "c2" FROM "t" WHERE INSTR(PYQL_WORDS("c0"), PYQL_WORDS(?)) > 0' and params == ["a%b"]
    ex = WORDS.executor()
    # % and _ are separators, never wildcards: "a%b" and "a_b" are the words "a b" (the cell a_b), never "AxB"
    assert [a.value for a in ex.execute(q)] == ["6"]
    assert [a.value for a in ex.execute(WORDS.query().add_condition("Opponent", "contains", "a_b").set_answer("Game"))] == ["6"]
    assert ex.execute(WORDS.query().add_condition("Opponent", "contains", "a_").set_answer("Game", "COUNT"))[0].value == 1  # the word a
    assert ex.execute(WORDS.query().add_condition("Opponent", "contains", "50%").set_answer("Game"))[0].value == "5"
    hostile = "x') OR 1=1 --"
    assert ex.execute(WORDS.query().add_condition("Opponent", "contains", hostile).set_answer("Game")) == []
    assert "1=1" not in WORDS.query().add_condition("Opponent", "contains", hostile).sql(params=True)


def test_contains_shows_in_the_action_the_display_and_other_dialects() -> None:
    q = WORDS.query().add_condition("opponent", "Contains", "Braves").set_answer("Game", "COUNT")
    assert q.actions() == ["add_condition(Opponent, contains, Braves)", "set_answer(Game, COUNT)"]
    assert q.display_sql() == 'SELECT COUNT("Game") FROM "table" WHERE INSTR(PYQL_WORDS("Opponent"), PYQL_WORDS(\'Braves\')) > 0'
    assert sqlglot.parse_one(q.sql("duckdb"), read="duckdb").find(exp.StrPosition) is not None
    assert q.conditions[0].number is None


def test_contains_is_refused_on_numbers_and_without_a_word() -> None:
    with pytest.raises(BadValueError, match=r"Column 'Game' holds numbers \(e.g. 1\), and contains matches words inside text. "
                       r"Use =, !=, >, <, >= or <= with a number, e.g. add_condition\(Game, =, 1\)."):
        WORDS.query().add_condition("Game", "contains", "1")
    for value in ("%", " ", "--"):
        with pytest.raises(BadValueError, match="has no letter or digit"):
            WORDS.query().add_condition("Opponent", "contains", value)
    assert WORDS.query().add_condition("Opponent", "contains", 50).conditions[0].value == 50  # a number is its text


def test_not_equal_keeps_rows_whose_cell_is_empty() -> None:
    """``!=``: an empty cell is not the value (SQL's ``NULL <> 'Total'`` is unknown and would drop the row),
    on a text column and on a column of numbers."""
    t = Table.from_rows(["Nation", "Gold"], [["Peru", "3"], [None, "1"], ["Chile", None], ["Total", "4"]])
    ex = Executor(t)
    assert _values(ex, t.query().add_condition("Nation", "!=", "total").set_answer("Gold")) == ["3", "1", None]
    assert _values(ex, t.query().add_condition("Gold", "!=", 4).set_answer("Nation")) == ["Peru", None, "Chile"]
    assert _values(ex, t.query().add_condition("Nation", "=", "Total").set_answer("Gold")) == ["4"]  # = is unchanged
