"""Line breaks: only \\n, \\r\\n and a lone \\r end a line (pyql.lines), everywhere actions are split."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.evaluation.datasets import load_dataset
from agent.methods.query_agent import _thought_action
from agent.methods.readi_table import _answers
from pyql.action_parser import Arg, extract_action, parse_action, render_action
from pyql.lines import split_lines
from pyql_sql.loaders import load_table_json

ROOT = Path(__file__).resolve().parents[1]

#: Every code point str.splitlines breaks at, besides \n and \r.
OTHER_SEPARATORS = ["\u2028", "\u2029", "\x0c", "\x0b", "\x85", "\x1c", "\x1d", "\x1e"]


def test_split_lines_breaks_only_at_newlines() -> None:
    for sep in OTHER_SEPARATORS:
        assert split_lines(f"a{sep}b\nc") == [f"a{sep}b", "c"]
    assert split_lines("a\r\nb\rc\n") == ["a", "b", "c"]
    assert split_lines("") == [] and split_lines("\n\n") == ["", ""]


def test_split_lines_agrees_with_splitlines_on_plain_text() -> None:
    text = "one\ntwo\r\nthree\r\rfive\n"
    assert split_lines(text) == text.splitlines()


SEPARATOR_TEXT = st.lists(
    st.sampled_from(OTHER_SEPARATORS) | st.text(alphabet="ab ,()'\"\\é", max_size=3), min_size=1, max_size=8
).map("".join)


@settings(max_examples=200, database=None)
@given(st.lists(SEPARATOR_TEXT, min_size=1, max_size=4), st.sampled_from(["\n", "\r\n"]))
def test_string_literals_with_separators_survive_render_split_parse(values: list[str], newline: str) -> None:
    """A program of rendered actions, split into lines, gives back each action whole."""
    calls = [parse_action(render_action("add_fact", "?x", "r.s", Arg("string", v))) for v in values]
    program = newline.join(render_action(c) for c in calls) + newline
    lines = split_lines(program)
    assert len(lines) == len(calls)
    assert [parse_action(line) for line in lines] == calls
    # an LLM reply holding the action line reads back the same too
    for call in calls:
        reply = f"Thought 1: go.{newline}Action 1: {render_action(call)}{newline}"
        assert extract_action(reply) == call


@pytest.mark.cli
def test_pyql_run_keeps_a_u2028_literal_in_one_step() -> None:
    stdin = 'get_relation(m.0crbvqz)\nadd_fact(m.0crbvqz, meteorology.tropical_cyclone.category, "a\u2028b")\n'
    result = subprocess.run(
        [sys.executable, "-m", "pyql.cli", "run", "--kb", "demo", "--actions", "-", "--json", "--keep-going"],
        input=stdin.encode("utf-8"),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    records = [json.loads(line) for line in result.stdout.decode("utf-8").split("\n") if line]
    steps = records[:-1]
    assert len(steps) == 2
    assert steps[1]["action"].startswith("add_fact(")
    assert "a\u2028b" in steps[1]["action"] or "a\\u2028b" in steps[1]["action"]


def test_query_agent_keeps_a_thought_with_u2028_whole() -> None:
    reply = "Thought 2: the name is a\u2028b, so look it up.\nAction 2: get_relation(m.1)"
    assert _thought_action(reply, 2, "get_relation(m.1)").split("\n")[0] == "Thought 2: the name is a\u2028b, so look it up."


def test_readi_table_answer_line_with_u2028() -> None:
    assert _answers("Thought: x\nAnswer: ['a\u2028b']") == ["a\u2028b"]


def test_jsonl_items_may_hold_a_raw_u2028(tmp_path: Path) -> None:
    """JSON allows U+2028 unescaped; a JSON Lines file holding one is still one item per line."""
    demo = (ROOT / "pyql" / "data" / "demo_questions.jsonl").read_text(encoding="utf-8").split("\n")[:2]
    first = json.loads(demo[0])
    first["question"] = "what category\u2028is tropical storm rachel?"
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(first, ensure_ascii=False) + "\n" + demo[1] + "\n", encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")
    items = list(load_dataset(path))
    assert len(items) == 2
    assert items[0]["question"] == "what category\u2028is tropical storm rachel?"


def test_table_jsonl_may_hold_a_raw_u2028(tmp_path: Path) -> None:
    table = {"header": ["Name", "Note"], "rows": [["x", "a\u2028b"]], "name": "t"}
    other = {"header": ["Name", "Note"], "rows": [["y", "c"]], "name": "u"}
    path = tmp_path / "tables.jsonl"
    path.write_text(json.dumps(table, ensure_ascii=False) + "\n" + json.dumps(other) + "\n", encoding="utf-8")
    assert load_table_json(str(path), "0")[0].name == "t"
    assert load_table_json(str(path), "1")[0].name == "u"


@pytest.mark.parametrize("sep", OTHER_SEPARATORS)
def test_separators_inside_an_action_line_do_not_split_it(sep: str) -> None:
    line = f'add_fact(?x, r.s, "a{sep}b")'
    assert split_lines(line) == [line]
    assert parse_action(split_lines(line)[0]).args[2].value == f"a{sep}b"
