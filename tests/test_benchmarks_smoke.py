"""Smoke runs: each benchmark's fixture items through the whole eval pipeline, on a KB built from their gold queries.

The LLM replays each item's gold action chain (agent.evaluation.smoke), so every item
must score 1: a loader, KB builder, environment or metric that breaks an item
shows here. No Freebase, no network, a few seconds each.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from agent.evaluation.datasets import formats, load_dataset
from agent.evaluation.smoke import (
    SMOKE,
    SmokeError,
    gold_replies,
    gold_turtle,
    main,
    metaqa_kb_lines,
    readi_replies,
    smoke_run,
)
from agent.evaluation.metrics import readi_metrics
from agent.llm.config import LLMConfig
from agent.llm.scripted import ScriptedLLM
from agent.methods.instantiate import Instantiator
from agent.methods.reasoning_path import parse_paths
from pyql.cli import build_parser
from pyql.cli import main as pyql_main
from pyql.kb import KB, metaqa

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
    assert "as in the papers' tables" in table and "| this run: greedy, gold-replay | pyql | 100.0 |" in table


def test_the_smoke_runs_are_the_fixtures_the_formats_register() -> None:
    registered = {benchmark: fmt.name for fmt in formats() for benchmark in fmt.smoke}
    assert sorted(SMOKE) == sorted(registered) == [
        "cwq", "grailqa", "metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "webqsp", "wikisql", "wtq"
    ]
    for benchmark, name in registered.items():
        assert load_dataset(DATA / SMOKE[benchmark]["data"], limit=1).format == name


def test_grailqa_replays_superlatives_and_comparisons_and_leaves_out_what_cannot_be_replayed(tmp_path: Path) -> None:
    outcome = smoke_run("grailqa", tmp_path)
    assert [r["id"] for r in outcome.records] == ["4302314002000", "5400160015000", "4303841006000", "4300535011000"]
    assert {r["kind"] for r in outcome.records} == {"i.i.d.", "compositional", "zero-shot"}
    assert "FILTER" in outcome.records[1]["query"]
    for tied in (outcome.records[0], outcome.records[2]):  # GrailQA's ARGMAX keeps ties: a MAX sub-select, not LIMIT 1
        assert "(MAX(" in tied["query"] and "LIMIT" not in tied["query"]
        assert not [s["error"] for s in tied["steps"] if s["error"]]  # add_max(?v, *, 0, 1, true) ran, not undone
    assert len(outcome.records[0]["gold"]) == len(outcome.records[0]["answers"]) == 2  # both tied answers


def test_grailqa_with_the_linking_file_the_unlinked_question_fails(tmp_path: Path) -> None:
    outcome = smoke_run("grailqa", tmp_path, linking=DATA / "grailqa" / "grail_pangu_tiara.json")
    f1 = {r["id"]: r["metrics"].get("f1") for r in outcome.records}
    assert f1["5400160015000"] == f1["4300535011000"] == 1.0  # linked by Pangu/TIARA as the gold query needs
    unlinked = next(r for r in outcome.records if r["id"] == "4303841006000")
    assert unlinked["entities"] == {}
    assert unlinked["steps"][0]["error"] == unlinked["steps"][1]["error"] == "unlinked_entity"  # ERASER refuses it
    assert "m.0jt3c5q" not in unlinked["query"]  # the publisher constraint never makes it into the query


READI = ["webqsp", "cwq", "grailqa", "metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "wtq"]


@pytest.mark.parametrize("benchmark", READI)
def test_readi_smoke_run_instantiates_every_path(benchmark: str, tmp_path: Path) -> None:
    outcome = smoke_run(benchmark, tmp_path, method="readi")
    assert outcome.metrics.questions >= 3 or benchmark == "cwq"
    for r in outcome.records:
        assert r["method"] == "readi" and r["done"] and not r["error"], r.get("error")
        assert r["extra"]["isr"] is True and r["extra"]["edits"] == 0  # every gold path instantiates first time
        assert r["metrics"]["f1"] == 1.0
        if benchmark.startswith("metaqa"):  # the answers come out of the instances, not only the QA reply
            assert {metaqa.entity_id(a) for a in r["gold"]} <= set(r["extra"]["instance_values"])
        elif r["table"] is None:
            assert {a["value"] if isinstance(a, dict) else a for a in r["gold"]} <= set(r["extra"]["instance_values"])
    if benchmark == "wtq":
        assert outcome.metrics.denotation == 1.0 and [r["id"] for r in outcome.records] == ["nt-64", "nt-112", "nt-153"]


@pytest.mark.parametrize("benchmark", ["metaqa-3hop", "wtq"])
def test_readi_answer_coverage_compares_like_with_like(benchmark: str, tmp_path: Path) -> None:
    # issue 25: instance values were ids (mq:German) and gold labels (German): coverage 0.000 with Hit@1 1.0
    outcome = smoke_run(benchmark, tmp_path, method="readi")
    readi = readi_metrics(outcome.records)
    assert outcome.metrics.hit1 == 1.0 and readi is not None and readi["coverage"] > 0
    if benchmark == "metaqa-3hop":  # every answer is among the instantiated entities, by label as by id
        assert readi["coverage"] == 1.0
        assert all({a["label"] for a in r["extra"]["instance_answers"]} >= set(r["gold"]) for r in outcome.records)
    else:  # a table's instance is its selected rows; a count ("how many districts", 22) is in none of their cells
        covered = {r["id"]: bool(set(r["extra"]["instance_values"]) & {str(g) for g in r["gold"]}) for r in outcome.records}
        assert covered["nt-64"] is False and sum(covered.values()) == 2


def test_readi_walks_back_along_a_relation_only_when_the_path_names_it_twice(tmp_path: Path) -> None:
    kb_file = tmp_path / "kb.txt"
    item = {"id": "q", "kind": "director_to_movie_to_director", "answers": ["Cary Fukunaga"], "entities": {"Delbert Mann": "mq:Delbert_Mann"}}
    kb_file.write_text("\n".join(metaqa_kb_lines([item])) + "\n")
    kb = KB.open(f"metaqa:{kb_file}", "generic")
    inst = Instantiator(kb)
    twice = parse_paths("Path: Delbert Mann -> mqr:directed_by -> mqr:directed_by", topics=["Delbert Mann"])
    [r] = inst.instantiate(twice, item["entities"], "who are movie co-directors of [Delbert Mann]")
    assert r.complete and r.bound == ("^mqr:directed_by", "mqr:directed_by")
    assert {v.label for v in r.values} == {"Delbert Mann", "Cary Fukunaga"}
    other = parse_paths("Path: Delbert Mann -> mqr:directed_by -> director", topics=["Delbert Mann"])
    [r] = inst.instantiate(other, item["entities"], "who are movie co-directors of [Delbert Mann]")
    assert not r.complete and r.error == "relation_not_instantiated"  # another relation never walks straight back


def test_metaqa_kb_from_items_and_readi_replies_need_what_they_build_from() -> None:
    with pytest.raises(SmokeError, match="question type"):
        metaqa_kb_lines([{"id": "x", "kind": None, "answers": ["a"], "entities": {"e": "mq:e"}}])
    with pytest.raises(SmokeError, match="has no actor → year hop"):
        metaqa_kb_lines([{"id": "x", "kind": "actor_to_year", "answers": ["a"], "entities": {"e": "mq:e"}}])
    with pytest.raises(SmokeError, match="no reasoning path"):
        readi_replies([{"id": "x", "entities": {}, "answers": [], "actions": ["set_answer(?x)"], "table": None}])
    with pytest.raises(SmokeError, match="Chosen Headers"):
        readi_replies([{"id": "x", "entities": {}, "answers": [], "table": {"header": []}}], {})


def test_unknown_benchmark_and_missing_fixtures(tmp_path: Path) -> None:
    with pytest.raises(SmokeError, match="choose one of"):
        smoke_run("freebaseqa", tmp_path)
    with pytest.raises(SmokeError, match="give --data"):
        smoke_run("grailqa", tmp_path, data_dir=tmp_path)
    with pytest.raises(SmokeError, match="choose one of queryagent, readi"):
        smoke_run("grailqa", tmp_path, method="tog")
    with pytest.raises(SmokeError, match="no gold graph_query or SPARQL"):
        gold_turtle([{"id": "x", "answers": []}])


def test_one_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cwq", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| answer F1 | 1.000 |" in out and str(tmp_path / "cwq" / "smoke.jsonl") in out
    assert main(["wtq", "--out", str(tmp_path), "--data", str(tmp_path)]) == 2
    assert main(["metaqa-3hop", "--out", str(tmp_path), "--method", "readi"]) == 0
    assert (tmp_path / "metaqa-3hop-readi" / "kb.txt").read_text().startswith("Catch Me If You Can|directed_by|smoke director")


def test_without_out_the_run_goes_to_the_user_cache_not_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["cwq"]) == 0
    assert (tmp_path / "cache" / "pyql" / "smoke-runs" / "cwq" / "smoke.jsonl").exists()
    assert not (tmp_path / "smoke-runs").exists()


def test_eval_command_with_linking_by_level_and_summary_md(tmp_path: Path) -> None:
    from agent.cli import eval_command  # registers ask/eval/trace

    linking = DATA / "grailqa" / "grail_pangu_tiara.json"
    # The fixture's records with a gold chain to replay, the unlinked one (4303841006000) last.
    records = {r["qid"]: r for r in json.loads((DATA / "grailqa" / "grailqa_v1.0_dev.json").read_text())}
    grailqa = tmp_path / "grailqa_v1.0_dev.json"
    grailqa.write_text(json.dumps([records[q] for q in (5400160015000, 4300535011000, 4303841006000)]))
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
    # The unlinked zero-shot question still reaches its answer here: on a KB of only the gold facts, the one
    # cvg.game_version.regions edge answers it without the publisher constraint ERASER refused.
    assert "| level | questions | F1 |" in text and "| i.i.d. | 2 | 100.0 |" in text and "| zero-shot | 1 | 100.0 |" in text
    md = (tmp_path / "run.summary.md").read_text()
    assert "| QueryAgent, gpt-3.5-turbo | QueryAgent Tables 2, 4 | 60.5 |" in md and "## Per level" in md
    trace = io.StringIO()
    assert pyql_main(["trace", str(out), "--by", "level"], out=trace) == 0
    assert "| overall | 3 | 100.0 |" in trace.getvalue()
    bad = io.StringIO()
    assert pyql_main(["eval", str(grailqa), "--kb", str(kb), "--out", str(tmp_path / "x.jsonl"), "--by", "hop"], out=bad) == 2


def test_eval_says_when_wtq_gold_values_have_no_canonical_form(tmp_path: Path) -> None:
    from agent.cli import eval_command  # registers ask/eval/trace

    shutil.copytree(DATA / "wtq" / "csv", tmp_path / "csv")
    (tmp_path / "data").mkdir()
    lines = (DATA / "wtq" / "data" / "training-before300.tsv").read_text().splitlines()
    data = tmp_path / "data" / "training-before300.tsv"
    data.write_text("\n".join(lines[:2]) + "\n")  # the header and nt-64
    chain = json.loads((DATA / "wtq" / "gold_actions.json").read_text())["nt-64"]
    llm = ScriptedLLM(gold_replies([{"id": "nt-64", "actions": chain}]), config=LLMConfig(mode="completion"))
    args = build_parser().parse_args(["eval", str(data), "--out", str(tmp_path / "run.jsonl")])
    progress = io.StringIO()
    assert eval_command(args, io.StringIO(), llm=llm, progress=progress) == 0
    assert "gold values are compared by their raw targetValue" in progress.getvalue()


def _bench_agent_modes():  # type: ignore[no-untyped-def]
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("bench_agent_modes", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_agent_modes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_agent_modes"] = module
    spec.loader.exec_module(module)
    return module


def test_heldout_webqsp_kb_from_the_pool_and_the_first_choice_stub(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench_agent_modes --dataset webqsp: one KB from every pool item's gold query, the stub that always answers 1."""
    from agent.evaluation.runner import read_run

    bench = _bench_agent_modes()
    records = json.loads((DATA / "webqsp" / "WebQSP_test_processed.json").read_text())
    # a pool item after the asked ones that gives Jamaica (WebQTest-0's entity) a second relation: a distractor
    currency = dict(records[0], qid="currency", question="what currency does jamaica use", answer=["m.04xc2m"],
                    sparql_query=records[0]["sparql_query"].replace("location.country.languages_spoken", "location.country.currency_used"))
    webqsp = tmp_path / "WebQSP_test_processed.json"
    webqsp.write_text(json.dumps([*records, currency]))
    out = tmp_path / "runs"
    args = ["run", "choose", "--llm", "first", "--dataset", "webqsp", "--data", str(webqsp), "--items", "3", "--out-dir", str(out)]
    assert bench.main(args) == 0
    run = read_run(out / "choose-first-no-llm.jsonl")
    assert [r["id"] for r in run] == ["WebQTest-0", "WebQTest-3", "WebQTest-6"]  # the first usable items, in file order
    assert all(r["done"] and not r["error"] for r in run)
    calls = sum(r["llm_calls"] for r in run)
    assert calls >= 9 and bench.picks(run) == {"1": calls}  # one reply per call, always 1
    kb = (out / "webqsp_gold_kb.ttl").read_text()
    assert "people.marriage.spouse" in kb and "location.country.currency_used" in kb  # pool items not asked are in the KB too
    split = bench.by_choice(run, out / "webqsp_gold_kb.ttl")
    assert {k: n for k, (_, n) in split.items()} == {"one relation": 2, "2+ relations": 1, "no linked entity": 0}  # Jamaica has two now
    capsys.readouterr()
    assert bench.main(["report", "--out-dir", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| choose-first-no-llm | 3 |" in text and f"- choose-first-no-llm: {calls} choices, 0 not `1`" in text
    assert "- choose-first-no-llm: F1 = 1 by the most relations a linked entity has in webqsp_gold_kb.ttl: one relation " in text
    with pytest.raises(SystemExit):  # the stub answers numbers: only the choose mode can use it
        bench.main(["run", "text", "--llm", "first", "--dataset", "webqsp", "--data", str(webqsp), "--out-dir", str(out)])


def test_heldout_leaves_out_what_gold_turtle_cannot_read_and_says_why(tmp_path: Path) -> None:
    bench = _bench_agent_modes()
    records = json.loads((DATA / "webqsp" / "WebQSP_test_processed.json").read_text())
    no_answer = dict(records[0], qid="no-answer", answer=[])
    comment = dict(records[2], qid="comment", sparql_query=records[2]["sparql_query"].replace(" ?x .\n", " ?x . # JaMarcus\n"))
    elsewhere = dict(records[3], qid="elsewhere", entity_linking={"Somebody": "m.0nobody"})
    data = tmp_path / "WebQSP_test_processed.json"
    data.write_text(json.dumps([no_answer, comment, elsewhere, *records]))
    items, kb, skipped = bench.heldout(data, 2)
    assert [i["id"] for i in items] == ["WebQTest-0", "WebQTest-3"]
    assert skipped == {"no gold answer": 1, "no linked entity in the gold query": 1,
                       "gold query with patterns gold_turtle cannot read (comments, ; lists, braces)": 1}
    assert "people.person.place_of_birth" in kb  # WebQTest-6/7's relation: the KB is the whole pool's
    _, small, _ = bench.heldout(data, 2, pool=5)  # the three left out + WebQTest-0, -3
    assert "people.person.place_of_birth" not in small and "tv.tv_program.regular_cast" in small
