"""The cost of every question and of a run: in the run file, in the summary, from an old run file, through a replay."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent.cli import eval_command
from agent.evaluation.cost import COST_FIELDS, SECONDS_FIELDS, question_cost, run_cost
from agent.evaluation.metrics import aggregate
from agent.evaluation.runner import latest_records, read_run
from pyql.cli import build_parser, main
from tests.fault_servers import refused_port
from tests.test_eval import DEMO, GoldLLM, demo_items
from tests.test_recording import _record_demo, pyql, records


def _eval(out: Path, n: int) -> str:
    args = build_parser().parse_args(["eval", str(DEMO), "--kb", "demo", "--out", str(out), "--limit", str(n)])
    stdout = io.StringIO()
    assert eval_command(args, stdout, llm=GoldLLM(demo_items(n)), progress=io.StringIO()) == 0
    return stdout.getvalue()


def test_every_record_carries_its_cost_and_the_summary_sums_them(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    table = _eval(out, 3)
    recs = latest_records(read_run(out))
    for r in recs:
        steps = r["steps"]
        assert list(r["cost"]) == list(COST_FIELDS)
        assert (r["cost"]["llm_calls"], r["cost"]["tokens_in"], r["cost"]["tokens_out"], r["cost"]["kb_queries"]) == \
            (r["llm_calls"], r["tokens_in"], r["tokens_out"], r["kb_queries"])  # the counters, kept as they are
        assert r["cost"]["model_seconds"] == round(sum(s["llm_seconds"] for s in steps), 6)
        assert r["cost"]["kb_seconds"] == round(sum(s["kb_seconds"] for s in steps), 6) > 0
        assert r["cost"]["branches"] == 1 and r["llm_calls"] == len(steps) > 0  # greedy: one branch, a call a step
    summary = json.loads((tmp_path / "run.summary.json").read_text())
    in_all = summary["cost"]["in_all"]
    assert in_all["questions"] == 3 and in_all["llm_calls"] == sum(r["llm_calls"] for r in recs)
    assert in_all["kb_queries"] == sum(r["kb_queries"] for r in recs) and in_all["branches"] == 3
    assert in_all["kb_seconds"] == round(sum(r["cost"]["kb_seconds"] for r in recs), 6)
    assert summary["cost"]["per_question"]["branches"] == 1.0 and summary["metrics"]["cost"] == in_all
    assert summary["cost"]["per_question"]["llm_calls"] == round(in_all["llm_calls"] / 3, 4)
    assert "| branches explored per question | 1.00 |" in table and "| model seconds / KB seconds per question |" in table
    assert f"| cost in all (every question, those that failed to run included) | {in_all['llm_calls']} LLM calls, " in table


def test_an_old_run_file_without_costs_gives_the_same_costs(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _eval(out, 2)
    recs = latest_records(read_run(out))
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "cost"}) + "\n" for r in recs), encoding="utf-8")
    assert aggregate(latest_records(read_run(old))).cost == aggregate(recs).cost == run_cost(recs)
    text = io.StringIO()
    assert main(["trace", str(old)], out=text) == 0 and "| branches explored per question | 1.00 |" in text.getvalue()
    # a record of before parents and costs: its steps are one branch
    bare = {"llm_calls": 2, "steps": [{"llm_seconds": 0.5, "kb_seconds": 0.25}, {"llm_seconds": 0.5}]}
    assert question_cost(bare) == {"llm_calls": 2, "tokens_in": 0, "tokens_out": 0, "model_seconds": 1.0, "kb_queries": 0,
                                   "kb_seconds": 0.25, "branches": 1}


def test_a_search_counts_its_leaves_as_branches() -> None:
    steps: list[dict[str, Any]] = [{"parent": None}, {"parent": 1, "pruned": "empty result"}, {"parent": 1},
                                   {"parent": 3, "pruned": "outside the beam (score -3.2 < -1.1)"}, {"parent": 3}, {"parent": None}]
    assert question_cost({"steps": steps})["branches"] == 4  # steps 2, 4, 5 and 6 are leaves
    assert question_cost({"steps": []})["branches"] == 0


@pytest.mark.cli  # runs the pyql command in a subprocess (not in the quick tier)
def test_a_replay_gives_the_same_costs_but_the_seconds(tmp_path: Path) -> None:
    kb, prices = _record_demo(tmp_path, 3)
    dead = f"http://127.0.0.1:{refused_port()}/v1"
    replay = pyql("eval", str(DEMO), "--limit", "3", "--kb", str(kb), "--base-url", dead, "--model", "fake-model",
                  "--prices", str(prices), "--out", str(tmp_path / "replay.jsonl"), "--replay", str(tmp_path / "rec"), guard=True)
    assert replay.returncode == 0, replay.stderr
    live, again = records(tmp_path / "live.jsonl"), records(tmp_path / "replay.jsonl")
    assert sorted(live) == sorted(again)
    for qid, record in live.items():
        same = {k: v for k, v in record["cost"].items() if k not in SECONDS_FIELDS}
        assert same == {k: v for k, v in again[qid]["cost"].items() if k not in SECONDS_FIELDS}, qid
        assert same["llm_calls"] > 0 and same["tokens_in"] > 0 and same["kb_queries"] > 0 and same["branches"] == 1
    live_summary = json.loads((tmp_path / "live.summary.json").read_text())["cost"]["in_all"]
    replay_summary = json.loads((tmp_path / "replay.summary.json").read_text())["cost"]["in_all"]
    assert {k: v for k, v in live_summary.items() if k not in SECONDS_FIELDS} == \
        {k: v for k, v in replay_summary.items() if k not in SECONDS_FIELDS}
