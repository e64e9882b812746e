"""Messages a newcomer tripped on (issue 25, item 6): each names what is wrong and what to do."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from correction import Eraser
from pyql.cli import main
from pyql.echo import plural
from pyql.errors import KBError
from pyql.kb.store import load_store, open_store
from pyql_sql.environment import TableEnvironment
from pyql_sql import Table
from tests.demo import DemoEnv


def test_a_misspelled_flag_is_named_before_the_missing_required_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--kb", "demo", "--actoins", "a.txt"]) == 2
    assert capsys.readouterr().err.strip() == "pyql run: unrecognized argument: --actoins (did you mean --actions?)"
    assert main(["run", "--kb", "demo", "--actions", "-", "--jsn"]) == 2
    assert capsys.readouterr().err.strip() == "pyql run: unrecognized argument: --jsn (did you mean --json?)"
    assert main(["run", "--kb", "demo"]) == 2  # nothing misspelled: the required flag is named as before
    assert capsys.readouterr().err.strip() == "pyql run: the following arguments are required: --actions"


def test_a_store_whose_load_failed_on_a_parse_error_says_to_fix_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text('<a> <b> "x .\n')
    with pytest.raises(KBError, match="cannot load"):
        load_store([bad], tmp_path / "store", progress=False)
    with pytest.raises(KBError) as err:
        open_store(tmp_path / "store")
    assert "loading " + str(bad) + " failed (cannot load" in str(err.value)
    assert "fix the file, then run `pyql kb load" in str(err.value) and "still running" not in str(err.value)
    bad.write_text("<http://x/a> <http://x/b> \"c\" .\n")  # fixed: the same command finishes the store
    load_store([bad], tmp_path / "store", progress=False)
    open_store(tmp_path / "store")


def test_get_relation_of_an_entity_not_in_the_kb_says_so_and_is_not_suggested_again(demo_env: DemoEnv) -> None:
    env = demo_env(entities={"X": "m.0nothere"}, analyzer=Eraser())
    first = env.step("get_relation(m.0nothere)")
    assert first.error == "get_relation_empty"
    assert "m.0nothere is not in the knowledge base" in first.observation and "Choose from: none" not in first.observation
    second = env.step("add_fact(m.0nothere, a.b.c, ?x)")
    assert not second.ok and "use get_relation(m.0nothere) first" not in second.observation
    assert "m.0nothere is not in the knowledge base" in second.observation
    third = env.step("get_relation(1999)")
    assert "get_relation(m.0nothere)" not in third.observation


def test_average_of_a_text_column_does_not_suggest_avg() -> None:
    env = TableEnvironment(Table.from_rows(["Player", "Score"], [["A", "3"], ["B", "5"]]), analyzer=Eraser())
    text = env.step("set_answer(Player, AVERAGE)")
    assert text.error == "sql_bad_aggregation" and "set_answer(Player, AVG)" not in text.observation
    assert "holds no number" in text.observation and "set_answer(Player, COUNT)" in text.observation
    numeric = env.step("set_answer(Score, AVERAGE)")
    assert "write set_answer(Score, AVG)" in numeric.observation


def test_rdflib_parse_errors_show_text_not_byte_strings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix : <http://x/> .\n:a :b "café \n', encoding="utf-8")
    assert main(["run", "--kb", f"rdflib:{bad}", "--actions", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 2: newline found in string literal" in err and "café" in err
    assert "b'" not in err and "\\xc3" not in err


def test_counts_are_pluralised(tmp_path: Path) -> None:
    assert (plural(1, "step"), plural(1, "query", "queries"), plural(2, "object")) == ("1 step", "1 query", "2 objects")
    out = io.StringIO()
    rachel = '{"Tropical Storm Rachel": "m.0crbvqz"}'
    assert main(["run", "--kb", "demo", "--entities", rachel, "--actions", str(_actions(tmp_path, "get_relation(m.0crbvqz)\n"))], out=out) == 0
    assert "[1 step, 1 query, " in out.getvalue()
    lines = tmp_path / "t.jsonl"
    lines.write_text(json.dumps({"header": ["a"], "rows": [["1"]]}) + "\n")
    out = io.StringIO()
    assert main(["run", "--table-json", str(lines), "--table", "3", "--actions", str(_actions(tmp_path, "execute()\n"))], out=out) == 2
    assert "has only 1 object (0..0)" in out.getvalue()


def _actions(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "actions.txt"
    path.write_text(text)
    return path
