"""``pyql trace RUN.jsonl --question ID``: one question's steps as text, a search's as the tree it explored."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from pyql.cli import main
from tests.test_trace_html import TREE, beam_steps, tree_record


def _trace(tmp_path: Path, records: list[dict], qid: str) -> tuple[int, str]:
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = io.StringIO()
    return main(["trace", str(run), "--question", qid], out=out), out.getvalue()


def test_a_tree_is_drawn_with_its_pruned_branch_and_why(tmp_path: Path) -> None:
    status, text = _trace(tmp_path, [tree_record(llm_calls=3)], "tree")
    assert status == 0
    assert text.splitlines() == [
        "tree: which category?",
        "gold: m.05f4r3k · answers: m.05f4r3k · F1 1.00 · Hits@1 1",
        "method beam · 4 steps · cost: 3 LLM calls, 0 / 0 tokens, 0.00 s model, 0 KB queries, 0.000 s KB, 2 branches",
        "1 get_relation(m.0crbvqz) · ok · 2 branches below: 3 steps, 1 pruned",
        "│     observation: after get_relation(m.0crbvqz)",
        "├── 2 add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f) · failed: empty_result · PRUNED: no rows",
        "│         observation: after add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)",
        "└── 2 add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c) · ok",
        "          observation: after add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
        "    3 execute() · ok",  # no split: the branch goes on at the same place
        "          observation: after execute()",
    ]


def test_a_beam_of_width_3_and_depth_3_as_text(tmp_path: Path) -> None:
    status, text = _trace(tmp_path, [{**tree_record(), "steps": beam_steps()}], "tree")
    assert status == 0 and "10 steps" in text and "7 branches" in text
    assert sum("PRUNED: outside the beam" in line for line in text.splitlines()) == 6
    kept = [line for line in text.splitlines() if re.search(r"\d add_fact\(m\.0c, rel\d_0, ", line)]
    assert len(kept) == 3
    assert [line.index("add_fact") for line in kept] == sorted(line.index("add_fact") for line in kept)  # deeper, further in
    lines = text.splitlines()
    answer = next(i for i, line in enumerate(lines) if "4 execute() · ok" in line)
    assert answer == lines.index(kept[2]) + 2  # the kept path's last step, then its observation, then the answer


def test_a_linear_run_is_listed_step_by_step(tmp_path: Path) -> None:
    steps = [{k: v for k, v in s.items() if k not in ("parent", "pruned")} for s in TREE[:1] + TREE[2:]]
    steps[0]["reply"] = "Thought 1: look first.\nAction 1: get_relation(m.0crbvqz)"
    steps[1]["observation"] = "evil\u202etext\nsecond line"
    status, text = _trace(tmp_path, [{**tree_record(), "steps": steps, "method": "greedy"}], "tree")
    lines = text.splitlines()
    assert status == 0 and not any(glyph in text for glyph in "├└│")
    assert lines[3:6] == ["1 get_relation(m.0crbvqz) · ok", "    thought: look first.", "    observation: after get_relation(m.0crbvqz)"]
    assert "    observation: evil\\u202etext second line" in lines  # one line, nothing hidden


def test_an_unknown_question_names_some_it_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(tree_record()) + "\n", encoding="utf-8")
    assert main(["trace", str(run), "--question", "q9"]) == 2
    assert f"{run} has no question 'q9' (it has 1: tree)" in capsys.readouterr().err
