"""The table stack of pyql_sql is layered without import cycles, and its public names still work.

Layering: ``tabledata -> steps -> compile -> query -> executor -> table``
(each module imports only modules to its left, plus ``errors``, ``numbers``,
``parts``, ``readonly``). Imports inside functions and under ``if TYPE_CHECKING:`` count.
"""

from __future__ import annotations

import ast
import json
import sqlite3
from pathlib import Path

import pytest

import pyql_sql
from pyql_sql import Executor, Table, TableLoadError, TableQuery
from pyql_sql.errors import ReadOnlyError, SQLExecutionError, SQLTimeout

PACKAGE = Path(pyql_sql.__file__).parent

#: Each module of the table stack, and the pyql_sql modules it may import.
LAYERS: dict[str, set[str]] = {
    "numbers": set(),
    "readonly": {"errors"},
    "parts": {"errors", "numbers"},
    "tabledata": {"errors", "numbers", "parts", "readonly"},
    "steps": {"numbers", "tabledata"},
    "compile": {"errors", "numbers", "steps", "tabledata"},
    "query": {"compile", "errors", "numbers", "parts", "steps", "tabledata"},
    "executor": {"compile", "errors", "numbers", "query", "readonly", "steps", "tabledata"},
    "table": {"errors", "executor", "numbers", "query", "readonly", "steps", "tabledata", "compile"},
}


def _imported_modules(name: str) -> set[str]:
    """Every pyql_sql module ``name`` imports, anywhere in the file."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif node.module and node.module.split(".")[0] == "pyql_sql":
                parts = node.module.split(".")
                found.add(parts[1] if len(parts) > 1 else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "pyql_sql":
                    found.add(parts[1] if len(parts) > 1 else "__init__")
    found.discard(name)
    return found


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_each_module_imports_only_lower_layers(name: str) -> None:
    assert _imported_modules(name) <= LAYERS[name]


def test_the_table_stack_has_no_cycle() -> None:
    graph = {name: _imported_modules(name) & set(LAYERS) for name in LAYERS}
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"import cycle: {' -> '.join(path + (node,))}"
        if node in done:
            return
        for nxt in graph[node]:
            visit(nxt, path + (node,))
        done.add(node)

    for name in graph:
        visit(name, ())


def test_public_names_still_importable() -> None:
    from pyql_sql import compile as compile_module
    from pyql_sql import query, steps, table, tabledata

    assert table.Column is tabledata.Column
    assert table.infer_type is tabledata.infer_type
    assert table.normalize_type is tabledata.normalize_type
    assert table.wikisql_table_name is tabledata.wikisql_table_name
    assert table.PYQL_TABLE == tabledata.PYQL_TABLE == "t"
    assert query.ConditionStep is steps.ConditionStep is pyql_sql.ConditionStep
    assert query.AnswerStep is steps.AnswerStep is pyql_sql.AnswerStep
    assert query.Step is steps.Step
    assert pyql_sql.Table is table.Table and issubclass(Table, tabledata.TableData)
    for name in ("compile_query", "logical_expression", "condition_expression", "literal"):
        assert callable(getattr(compile_module, name))


def test_loaders_build_tables(tmp_path: Path) -> None:
    csv_path = tmp_path / "m.csv"
    csv_path.write_text("Home team,Crowd\nGeelong,\"24,000\"\n", encoding="utf-8")
    rec = {"id": "1-1-1", "header": ["A", "B"], "types": ["text", "real"], "rows": [["x", 1]]}
    jsonl = tmp_path / "dev.tables.jsonl"
    jsonl.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    db_path = tmp_path / "dev.db"
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE table_1_1_1 (col0 text, col1 real)")
    conn.execute("INSERT INTO table_1_1_1 VALUES ('x', 1.0)")
    conn.commit()
    conn.close()
    item = {"table": {"table_name": "T", "table_info": {"columns": [{"name": "A", "type": "TEXT"}], "rows": [["1"]]}}}
    tables = [
        Table.from_rows(["A"], [["1"]]),
        Table.from_csv(csv_path),
        Table.from_wikisql_record(rec),
        Table.from_wikisql_jsonl(jsonl, "1-1-1"),
        Table.from_wikisql_db(db_path, "1-1-1", header=["A", "B"]),
        Table.from_dbbench(item),
    ]
    for t in tables:
        assert type(t) is Table
        assert isinstance(t.query(), TableQuery) and t.query().table is t
        assert t.executor(timeout=1.0).timeout == 1.0
        assert t.get_column(0).values
        assert t.get_column(0) == t.get_column(0)  # the cached executor is reused
        with t:
            pass


def test_query_rendering_still_works() -> None:
    t = Table.from_rows(["Class", "ERP W"], [["D", "200"]], name="Radio")
    q = t.query().add_condition("Class", "=", "d").add_condition("ERP W", "<", "232").set_answer("Class")
    assert q.sql_with_params() == (
        'SELECT "c0" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER(?) AND "n1" < ?',
        ["d", 232],
    )
    assert q.sql() == 'SELECT "c0" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER(\'d\') AND "n1" < 232'
    assert q.display_sql() == 'SELECT "Class" FROM "Radio" WHERE "Class" = \'d\' AND "ERP W" < 232'
    expression, params = q.expression(bind="param")
    assert type(expression).__name__ == "Select" and params == ["d", 232]
    assert [a.value for a in Executor(t).execute(q)] == ["D"]


@pytest.mark.parametrize(
    ("header", "rows", "types", "message"),
    [
        ([], [], None, "A table needs at least one column; the header is empty."),
        (["a", "b"], [["1"]], None, "Row 0 has 1 cells but the header has 2 columns ('a', 'b')."),
        (["a"], [["1"], ["1", "2"]], None, "Row 1 has 2 cells but the header has 1 columns ('a')."),
        (["a"], [["1"]], ["real", "text"], "Got 2 types for 1 columns; give one type per column."),
        (["a"], [["1"]], ["date"], "Unknown column type 'date': use 'real' (numbers) or 'text'."),
    ],
)
def test_from_rows_errors_unchanged(header: list[str], rows: list[list[str]], types: list[str] | None, message: str) -> None:
    with pytest.raises(TableLoadError) as info:
        Table.from_rows(header, rows, types=types)
    assert str(info.value) == message


def test_from_rows_cells_and_shadows() -> None:
    rows = (r for r in [("a", 1174, None), ("b", 2.5, "")])  # a generator of tuples
    t = Table.from_rows(["x", None, "z"], rows, types=["TEXT", "number", "varchar(3)"])
    assert t.headers == ("x", "", "z") and t.types == ("text", "real", "text")
    assert t.db.execute('SELECT * FROM "t"').fetchall() == [
        (1, "a", None, "1174", 1174.0, None, None),
        (2, "b", None, "2.5", 2.5, "", None),
    ]  # the row's place in the table first (r), then each column's text and number
    assert Table.from_rows(["a"], []).row_count == 0


def test_execute_sql_errors_unchanged() -> None:
    t = Table.from_rows(["a"], [["x"]])
    ex = Executor(t)
    with pytest.raises(ValueError, match=r"^timeout must be a number of seconds or None, not 'soon'$"):
        ex.execute_sql("SELECT 1", timeout="soon")
    with pytest.raises(ReadOnlyError) as info:
        ex.execute_sql('UPDATE "t" SET "c0" = 1')
    assert info.value.action == "UPDATE" and str(info.value).startswith(
        "The table is read-only: the UPDATE statement was refused (SQLite action UPDATE). "
    )
    with pytest.raises(SQLExecutionError) as info2:
        ex.execute_sql('SELECT nope FROM "t"')
    assert str(info2.value) == "SQLite rejected the query: no such column: nope."
    assert type(info2.value) is SQLExecutionError
    with pytest.raises(SQLExecutionError, match=r"^Cannot run the query: "):
        ex.execute_sql("SELECT ?", [2**70])  # too big for SQLite
    slow = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT COUNT(*) FROM c"
    with pytest.raises(SQLTimeout) as info3:
        ex.execute_sql(slow, timeout=0.1)
    assert str(info3.value).startswith("The query ran longer than the 0.1 s timeout and was stopped.")
    # the deadline and the guard are cleared after every statement
    assert ex.execute_sql('SELECT "c0" FROM "t"', timeout=None) == [("x",)]
    assert t.guard.denied == []
