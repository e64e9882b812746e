"""``pyql eval --shard K/N`` and ``--merge``: a run spread over machines, read back as one run; recordings merged."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent.cli import eval_command
from agent.evaluation.compare import compare_runs
from agent.evaluation.runner import latest_records, read_run
from pyql.cli import build_parser, main
from pyql.errors import UsageError
from pyql.recording_store import RecordingStore
from tests.fault_servers import refused_port
from tests.test_eval import DEMO, GoldLLM, demo_items, fake_server
from tests.test_recording import pyql, records

#: What differs between two runs of the same questions: the times.
TIMES = ("finished_at", "seconds")
STEP_TIMES = ("llm_seconds", "kb_seconds")


def _eval(out: Path, *flags: str, n: int = 6) -> tuple[int, str, str]:
    args = build_parser().parse_args(["eval", str(DEMO), "--kb", "demo", "--out", str(out), "--limit", str(n), *flags])
    stdout, progress = io.StringIO(), io.StringIO()
    return eval_command(args, stdout, llm=GoldLLM(demo_items(n)), progress=progress), stdout.getvalue(), progress.getvalue()


def _without_times(record: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k not in TIMES}
    out["steps"] = [{k: v for k, v in s.items() if k not in STEP_TIMES} for s in record["steps"]]
    out["cost"] = {k: v for k, v in record["cost"].items() if k not in ("model_seconds", "kb_seconds")}
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("shards")
    files = {"whole": d / "whole.jsonl", "0": d / "s0.jsonl", "1": d / "s1.jsonl"}
    assert _eval(files["whole"])[0] == 0
    assert _eval(files["0"], "--shard", "0/2")[0] == 0
    assert _eval(files["1"], "--shard", "1/2")[0] == 0
    return files


def test_a_shard_takes_every_nth_question_and_says_so_in_its_settings(shards: dict[str, Path]) -> None:
    ids = [item["id"] for item in demo_items(6)]
    for k in (0, 1):
        recs = latest_records(read_run(shards[str(k)]))
        assert [r["id"] for r in recs] == ids[k::2]
        assert all(r["settings"]["shard"] == f"{k}/2" for r in recs)
    summary = json.loads(shards["0"].with_name("s0.summary.json").read_text())
    assert summary["settings"]["shard"] == "0/2" and summary["questions"] == 3
    assert "shard" not in latest_records(read_run(shards["whole"]))[0]["settings"]  # a whole run, written as before


def test_merged_shards_are_the_run_unsharded_but_for_the_times(shards: dict[str, Path], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    merged = tmp_path / "merged.jsonl"
    out = io.StringIO()
    assert main(["eval", "--merge", str(shards["1"]), str(shards["0"]), "--out", str(merged)], out=out) == 0
    assert "merged 2 run files (shards 0/2, 1/2)" in capsys.readouterr().err and "| answer F1 | 1.000 |" in out.getvalue()
    whole, again = latest_records(read_run(shards["whole"])), latest_records(read_run(merged))
    assert [r["id"] for r in again] == [r["id"] for r in whole]  # in the data set's order
    assert [_without_times(r) for r in again] == [_without_times(r) for r in whole]
    summary = json.loads(merged.with_name("merged.summary.json").read_text())
    whole_summary = json.loads(shards["whole"].with_name("whole.summary.json").read_text())
    assert summary["metrics"]["f1"] == whole_summary["metrics"]["f1"] and summary["missing_shards"] == []
    assert [m["shard"] for m in summary["merged_from"]] == ["1/2", "0/2"] and "shard" not in summary["settings"]
    assert {k: v for k, v in summary["cost"]["in_all"].items() if "seconds" not in k} == \
        {k: v for k, v in whole_summary["cost"]["in_all"].items() if "seconds" not in k}
    c = compare_runs([shards["0"], shards["whole"], shards["1"]])  # the shards are read as one run
    assert [r.label for r in c.runs] == ["greedy [s0]", "greedy [whole]"] and len(c.shared) == 6
    assert c.runs[0].run.shards == ["0/2", "1/2"] and all(p.difference == 0 for p in c.pairs)


@pytest.mark.parametrize("bad", ["x", "2/2", "1/0", "-1/2", "1/2/3", ""])
def test_a_bad_shard_is_a_usage_error_naming_the_form(bad: str, tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), f"--shard={bad}"], out=out) == 2
    assert "K/N: the K-th of N shards, 0 <= K < N" in out.getvalue() and not (tmp_path / "r.jsonl").exists()
    with pytest.raises(UsageError):
        build_parser().parse_args(["eval", str(DEMO), "--out", "x", f"--shard={bad}"])


def test_resume_continues_a_shard_with_its_shard_only(tmp_path: Path) -> None:
    run = tmp_path / "s0.jsonl"
    assert _eval(run, "--shard", "0/2", n=4)[0] == 0  # 2 of the first 4 questions
    status, _, progress = _eval(run, "--shard", "0/2", "--resume")  # 3 of the first 6: one new
    assert status == 0 and "1 answered now, 2 already in" in progress
    assert [r["id"] for r in latest_records(read_run(run))] == [item["id"] for item in demo_items(6)][0::2]
    for flags, said in ((("--shard", "1/2"), "shard: '0/2' in the run file, '1/2' now"),
                        ((), "shard: '0/2' in the run file, the whole data set now (no --shard)")):
        out = io.StringIO()
        assert main(["eval", str(DEMO), "--kb", "demo", "--out", str(run), "--limit", "6", "--resume", *flags], out=out) == 2
        assert said in out.getvalue(), out.getvalue()
    whole = tmp_path / "whole.jsonl"
    assert _eval(whole, n=2)[0] == 0
    out = io.StringIO()
    assert main(["eval", str(DEMO), "--kb", "demo", "--out", str(whole), "--resume", "--shard", "0/2"], out=out) == 2
    assert "shard: the whole data set (no --shard) in the run file, '0/2' now" in out.getvalue()


def test_merging_what_is_not_one_run_is_refused(shards: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def merge(*files: Path, extra: tuple[str, ...] = ()) -> tuple[int, str]:
        out = tmp_path / f"m{len(list(tmp_path.iterdir()))}.jsonl"
        status = main(["eval", "--merge", *map(str, files), "--out", str(out), *extra])
        return status, capsys.readouterr().err

    status, err = merge(shards["0"], shards["0"])
    assert status == 2 and f"shard 0/2 is given twice: {shards['0']} and {shards['0']}" in err
    status, err = merge(shards["0"], shards["whole"])
    assert status == 2 and f"{shards['0']} is shard 0/2 but {shards['whole']} was written without --shard" in err
    other = tmp_path / "other.jsonl"
    other.write_text(shards["whole"].read_text())
    status, err = merge(shards["whole"], other)
    first = demo_items(1)[0]["id"]
    assert status == 2 and f"question {first} is in two files: {shards['whole']}, line 1, and {other}, line 1" in err
    raw = tmp_path / "raw1.jsonl"
    raw.write_text("".join(json.dumps({**r, "settings": {**r["settings"], "feedback": "raw"}}) + "\n"
                           for r in latest_records(read_run(shards["1"]))))
    status, err = merge(shards["0"], raw)
    assert status == 2 and f"{raw} was answered with other settings than {shards['0']}: feedback: 'raw' in it, 'eraser' in {shards['0']}" in err
    status, err = merge(shards["0"], raw, extra=("--allow-mixed",))
    assert status == 0 and "other settings" in err
    status, err = merge(shards["1"])
    assert status == 0 and "shard 0/2 is missing: the merged run lacks its questions" in err
    status, err = merge(tmp_path / "nothing.jsonl")
    assert status == 2 and "run file not found" in err
    assert main(["eval", str(DEMO), "--merge", str(shards["0"]), "--out", str(tmp_path / "z.jsonl")]) == 2
    assert "give no DATA with it" in capsys.readouterr().err
    assert main(["eval", "--out", str(tmp_path / "z.jsonl")]) == 2
    assert "give the data set to answer (DATA), or --merge RUN" in capsys.readouterr().err
    assert main(["eval", "--merge", str(shards["0"]), str(shards["1"]), "--out", str(shards["0"])]) == 2
    assert "is one of the files merged" in capsys.readouterr().err


@pytest.mark.cli  # runs the pyql command in a subprocess (not in the quick tier)
def test_the_recordings_of_shards_merge_into_one_that_replays_the_whole_run(tmp_path: Path) -> None:
    items = demo_items(4)
    with fake_server(GoldLLM(items, mode="chat")) as (url, _):
        for k in (0, 1):
            live = pyql("eval", str(DEMO), "--limit", "4", "--kb", "demo", "--base-url", url, "--model", "fake-model",
                        "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}.jsonl"), "--record", str(tmp_path / f"rec{k}"))
            assert live.returncode == 0, live.stderr
    merged = pyql("recording", "merge", str(tmp_path / "rec0"), str(tmp_path / "rec1"), "--out", str(tmp_path / "rec"))
    assert merged.returncode == 0, merged.stderr
    assert f"wrote {tmp_path / 'rec' / 'recording.sqlite'}" in merged.stdout and "added" in merged.stdout
    with RecordingStore.open(tmp_path / "rec0", "replay") as a, RecordingStore.open(tmp_path / "rec1", "replay") as b, \
            RecordingStore.open(tmp_path / "rec", "replay") as m:
        assert m.counts()["llm"] == a.counts()["llm"] + b.counts()["llm"]  # every LLM call of both shards
    dead = f"http://127.0.0.1:{refused_port()}/v1"
    replay = pyql("eval", str(DEMO), "--limit", "4", "--kb", "demo", "--base-url", dead, "--model", "fake-model",
                  "--out", str(tmp_path / "replay.jsonl"), "--replay", str(tmp_path / "rec"), guard=True)
    assert replay.returncode == 0, replay.stderr
    again = records(tmp_path / "replay.jsonl")
    for k in (0, 1):
        for qid, record in records(tmp_path / f"s{k}.jsonl").items():
            assert again[qid]["answers"] == record["answers"] and again[qid]["llm_calls"] == record["llm_calls"]
    same = pyql("recording", "merge", str(tmp_path / "rec"), "--out", str(tmp_path / "rec"))
    assert same.returncode == 2 and "is one of the recordings merged" in same.stderr


def test_the_runner_answers_its_shard_only_and_an_empty_shard_is_refused(tmp_path: Path) -> None:
    from agent.evaluation.runner import RunSettings, run_eval

    items = demo_items(5)
    outcome = run_eval(items, tmp_path / "lib.jsonl", GoldLLM(items), RunSettings(kb="demo", shard="1/2"), progress=None)
    assert [r["id"] for r in outcome.records] == [item["id"] for item in items[1::2]] and outcome.summary["settings"]["shard"] == "1/2"
    status, _, progress = _eval(tmp_path / "s.jsonl", "--shard", "2/3", n=6)
    assert status == 0 and "shard 2/3: 2 of the 6 questions" in progress
    out = io.StringIO()
    assert main(["eval", str(DEMO), "--kb", "demo", "--limit", "1", "--shard", "1/2", "--out", str(tmp_path / "e.jsonl")], out=out) == 2
    assert "shard 1/2 of" in out.getvalue() and "has no question (it has 1)" in out.getvalue()
