"""Smoke runs: each benchmark's fixture items through the whole eval pipeline, on a KB built from their gold queries.

The LLM replays each item's gold action chain (agent.smoke), so every item
must score 1: a loader, KB builder, environment or metric that breaks an item
shows here. No Freebase, no network, a few seconds each.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agent.datasets import load_dataset
from agent.llm import LLMConfig, ScriptedLLM
from agent.smoke import SMOKE, SmokeError, gold_replies, gold_turtle, main, smoke_run
from pyql.cli import build_parser
from pyql.cli import main as pyql_main

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("benchmark", sorted(SMOKE))
def test_smoke_run_scores_every_item(benchmark: str, tmp_path: Path) -> None:
    outcome = smoke_run(benchmark, tmp_path)
    m = outcome.metrics
    assert m.questions >= 1 and m.errors == 0
    assert all(r["done"] and not r["error"] for r in outcome.records), [r.get("error") for r in outcome.records]
    if benchmark in ("wikisql", "wtq"):
        assert m.denotation == 1.0
    else:
        assert (m.f1, m.hit1, m.em) == (1.0, 1.0, 1.0)
    summary = json.loads(outcome.summary_file.read_text())
    assert summary["questions"] == m.questions and summary["metrics"]["em"] == 1.0
    table = (tmp_path / "smoke.summary.md").read_text()  # the paper-layout table next to the summary JSON
    assert "as in the papers' tables" in table and "| this run: queryagent, gold-replay | pyql | 100.0 |" in table


def test_grailqa_with_the_linking_file_the_unlinked_question_fails(tmp_path: Path) -> None:
    outcome = smoke_run("grailqa", tmp_path, linking=DATA / "grailqa" / "grail_pangu_tiara.json")
    f1 = {r["id"]: r["metrics"].get("f1") for r in outcome.records}
    assert f1["3202959008000"] == f1["2100654013000"] == 1.0  # linked by Pangu/TIARA as the gold query needs
    unlinked = next(r for r in outcome.records if r["id"] == "2100001002000")
    assert not unlinked["answers"] and unlinked["entities"] == {}
    assert unlinked["steps"][0]["error"] == "unlinked_entity"  # ERASER refuses an entity the question was not linked to


def test_unknown_benchmark_and_missing_fixtures(tmp_path: Path) -> None:
    with pytest.raises(SmokeError, match="choose one of"):
        smoke_run("freebaseqa", tmp_path)
    with pytest.raises(SmokeError, match="give --data"):
        smoke_run("grailqa", tmp_path, data_dir=tmp_path)
    with pytest.raises(SmokeError, match="no gold graph_query or SPARQL"):
        gold_turtle([{"id": "x", "answers": []}])


def test_one_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cwq", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| answer F1 | 1.000 |" in out and str(tmp_path / "cwq" / "smoke.jsonl") in out
    assert main(["wtq", "--out", str(tmp_path), "--data", str(tmp_path)]) == 2


def test_eval_command_with_linking_by_level_and_summary_md(tmp_path: Path) -> None:
    from agent.cli import eval_command  # registers ask/eval/trace

    grailqa, linking = DATA / "grailqa" / "grailqa_v1.0_dev.json", DATA / "grailqa" / "grail_pangu_tiara.json"
    items = load_dataset(grailqa, linking=linking).items
    kb = tmp_path / "kb.ttl"
    kb.write_text(gold_turtle(items))
    out = tmp_path / "run.jsonl"
    args = build_parser().parse_args(["eval", str(grailqa), "--kb", str(kb), "--out", str(out), "--linking", str(linking), "--by", "level"])
    stdout, progress = io.StringIO(), io.StringIO()
    # The unlinked question's gold actions are refused; the model then keeps trying until the step
    # limit (and names no variable when forced). Without these replies the scripted LLM would run
    # out, an LLM failure: that question would fail to run, not score 0 (issue 13).
    stuck = [" I cannot find the entity.\nAction 1: execute()"] * 13
    llm = ScriptedLLM(gold_replies(items) + stuck, config=LLMConfig(mode="completion"))
    assert eval_command(args, stdout, llm=llm, progress=progress) == 0
    assert "1 items have no entry in" in progress.getvalue()
    assert "[i.i.d. 1.00 (1)" in progress.getvalue()  # per-category progress
    text = stdout.getvalue()
    assert "| level | questions | F1 |" in text and "| i.i.d. | 1 | 100.0 |" in text and "| compositional | 1 | 0.0 |" in text
    md = (tmp_path / "run.summary.md").read_text()
    assert "| QueryAgent, gpt-3.5-turbo | QueryAgent Tables 2, 4 | 60.5 |" in md and "## Per level" in md
    trace = io.StringIO()
    assert pyql_main(["trace", str(out), "--by", "level"], out=trace) == 0
    assert "| overall | 3 | 66.7 |" in trace.getvalue()
    bad = io.StringIO()
    assert pyql_main(["eval", str(grailqa), "--kb", str(kb), "--out", str(tmp_path / "x.jsonl"), "--by", "hop"], out=bad) == 2
