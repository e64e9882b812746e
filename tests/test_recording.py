"""``--record``, ``--replay`` and ``--kb-cache`` (issue 24): the store, the KB and LLM sides, the command line.

The LLM is the scripted gold LLM of ``tests/test_eval.py`` behind a tiny
OpenAI-compatible server on loopback. A replay runs in a subprocess whose
sockets and subprocesses are refused (:data:`GUARD`), with ``--base-url``
on a closed port and ``--kb`` naming a file that has been deleted: it can
only answer from the recording.
"""

from __future__ import annotations

import io
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent.cli import eval_command
from agent.errors import LLMReplayMiss
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply
from agent.llm.scripted import ScriptedLLM
from agent.llm.recording import RecordedLLM
from pyql.cli import build_parser, main
from pyql.errors import EngineError, RecordingError, ReplayMiss
from pyql.kb import KB
from pyql.kb.opening import demo_kb_path
from pyql.kb.recording import kb_identity, recorded_kbs
from pyql.recording_store import RecordingStore
from tests.fault_servers import refused_port
from tests.test_eval import DEMO, GoldLLM, cli_env, demo_items, fake_server

ROOT = Path(__file__).resolve().parents[1]

#: Run ``pyql.cli`` with every outgoing connection and every subprocess refused.
GUARD = r"""
import socket, subprocess, sys
def refuse(*args, **kwargs):
    raise RuntimeError("NETWORK OR PROCESS USED DURING A REPLAY")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
subprocess.Popen.__init__ = refuse
from pyql.cli import main
sys.exit(main(sys.argv[1:]))
"""


def pyql(*args: str, guard: bool = False, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", GUARD, *args] if guard else [sys.executable, "-m", "pyql.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=cli_env())


def records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip())}


# ---------------------------------------------------------------------------
# The store


def test_entries_are_content_addressed_and_the_first_answer_stays(tmp_path: Path) -> None:
    with RecordingStore.open(tmp_path, "record") as store:
        assert store.put("llm", "m", {"prompt": "Q", "stop": ["x"]}, {"text": "first"}) is True
        assert store.put("llm", "m", {"stop": ["x"], "prompt": "Q"}, {"text": "second"}) is False  # same request, other key order
        assert store.get("llm", {"prompt": "Q", "stop": ["x"]}) == {"text": "first"}
        assert store.get("llm", {"prompt": "Q", "stop": ["y"]}) is None
        assert dict(store.stats["llm"]) == {"writes": 1, "duplicates": 1, "hits": 1, "misses": 1}
        first = store.fingerprint()
    with RecordingStore.open(tmp_path / "other", "record") as store:
        store.put("llm", "m", {"prompt": "Q", "stop": ["x"]}, {"text": "first"})
        assert store.fingerprint() == first  # the same entries, the same fingerprint
        store.put("kb", "k", {"query": "ASK {}"}, {"boolean": True})
        assert store.fingerprint() != first


def test_threads_and_processes_write_one_store_without_losing_an_entry(tmp_path: Path) -> None:
    writer = (
        "import sys; from pyql.recording_store import RecordingStore\n"
        "s = RecordingStore.open(sys.argv[1], 'cache')\n"
        "for i in range(200): s.put('kb', 'k', {'p': sys.argv[2], 'i': i}, {'boolean': True})\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", writer, str(tmp_path), str(p)], cwd=ROOT, env=cli_env()) for p in range(2)]
    with RecordingStore.open(tmp_path, "cache") as store:
        threads = [threading.Thread(target=lambda t=t: [store.put("kb", "k", {"t": t, "i": i}, []) for i in range(100)])
                   for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [p.wait(120) for p in procs] == [0, 0]
        assert store.counts() == {"kb": 2 * 200 + 4 * 100}


def test_a_process_killed_while_recording_loses_no_returned_entry_and_leaves_no_half_entry(tmp_path: Path) -> None:
    writer = (
        "import sys; from pyql.recording_store import RecordingStore\n"
        "s = RecordingStore.open(sys.argv[1], 'record')\n"
        "i = 0\n"
        "while True:\n"
        "    s.put('llm', 'm', {'i': i}, {'text': 'x' * 5000, 'i': i}); print(i, flush=True); i += 1\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", writer, str(tmp_path)], cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    returned = []
    for line in proc.stdout:
        returned.append(int(line))
        if len(returned) >= 300:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    with RecordingStore.open(tmp_path, "replay") as store:
        assert store.counts()["llm"] >= len(returned)
        for i in returned:
            assert store.get("llm", {"i": i}) == {"text": "x" * 5000, "i": i}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign", "cache-as-recording", "other-version", "empty-dir"])
def test_a_damaged_or_foreign_file_is_one_clear_error_and_exit_2(tmp_path: Path, damage: str) -> None:
    rec = tmp_path / "rec"
    with RecordingStore.open(rec, "record") as store:
        for i in range(300):
            store.put("kb", "k", {"i": i}, {"rows": "y" * 400})
    file = rec / "recording.sqlite"
    expected = {"garbage": "not an SQLite database", "truncated": "damaged", "foreign": "another program",
                "cache-as-recording": "is a kb-cache", "other-version": "version", "empty-dir": "no recording at"}[damage]
    if damage == "garbage":
        file.write_bytes(b"this is not a database at all" * 50)
    elif damage == "truncated":
        data = file.read_bytes()
        file.write_bytes(data[: len(data) // 2])
    elif damage == "foreign":
        file.unlink()
        with sqlite3.connect(file) as db:
            db.execute("CREATE TABLE songs (title TEXT)")
    elif damage == "cache-as-recording":
        shutil.rmtree(rec)
        with RecordingStore.open(rec / "recording.sqlite", "cache"):
            pass
    elif damage == "other-version":
        with sqlite3.connect(file) as db:
            db.execute("UPDATE meta SET value = '99' WHERE name = 'version'")
    else:
        shutil.rmtree(rec)
        rec.mkdir()
    err = io.StringIO()  # main() prints its one-line error to the stream it is given
    actions = tmp_path / "a.txt"
    actions.write_text("get_relation(m.0crbvqz)\n")
    assert main(["run", "--kb", "demo", "--actions", str(actions), "--replay", str(rec)], out=err) == 2
    message = err.getvalue().strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert expected in message and "--replay" in message, message
    if damage in ("garbage", "truncated", "foreign", "other-version"):  # the same for a cache and for record
        with pytest.raises(RecordingError, match=expected):
            RecordingStore.open(file, "cache" if damage != "other-version" else "record")


def test_record_and_replay_together_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    actions = tmp_path / "a.txt"
    actions.write_text("get_relation(m.0crbvqz)\n")
    assert main(["run", "--kb", "demo", "--actions", str(actions), "--record", str(tmp_path / "r"), "--replay", str(tmp_path / "r")]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["run", "--kb", "demo", "--actions", str(actions), "--kb-cache", str(tmp_path / "c"), "--replay", str(tmp_path / "r")]) == 2


# ---------------------------------------------------------------------------
# The KB side


def test_kb_identity_names_the_endpoint_or_the_content(tmp_path: Path) -> None:
    a = kb_identity("http://127.0.0.1:9/sparql")
    assert a == {"endpoint": "http://127.0.0.1:9/sparql", "default_graph": None}
    assert kb_identity("http://127.0.0.1:9/sparql", {"default_graph": "http://g"}) != a
    copy = tmp_path / "kb.ttl"
    shutil.copy(demo_kb_path(), copy)
    assert kb_identity(str(copy)) == kb_identity("demo")  # the same content under another name
    assert kb_identity(f"rdflib:{copy}")["engine"] == "rdflib:FILE"
    with copy.open("a") as handle:
        handle.write("\n<http://rdf.freebase.com/ns/m.x> <http://rdf.freebase.com/ns/a.b> <http://rdf.freebase.com/ns/m.y> .\n")
    assert kb_identity(str(copy)) != kb_identity("demo")
    with pytest.raises(RecordingError, match="cannot be recorded"):
        kb_identity(object())


@pytest.mark.cli
def test_the_kb_cache_is_shared_between_runs_and_invalidated_by_a_changed_file(tmp_path: Path) -> None:
    copy = tmp_path / "kb.ttl"
    shutil.copy(demo_kb_path(), copy)
    cache = tmp_path / "cache"
    actions = tmp_path / "a.txt"
    actions.write_text("get_relation(m.0crbvqz)\nadd_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)\nexecute()\n")
    runs = []
    for _ in range(2):
        runs.append(pyql("run", "--kb", str(copy), "--actions", str(actions), "--kb-cache", str(cache)))
    first, second = runs
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "misses" in first.stderr and "hits" not in first.stderr
    assert "hits" in second.stderr and "misses" not in second.stderr and "writes" not in second.stderr
    assert first.stdout.split("[")[0] == second.stdout.split("[")[0]  # the same transcript and answers
    with copy.open("a") as handle:
        handle.write("\n")  # another content: another identity, nothing is reused
    third = pyql("run", "--kb", str(copy), "--actions", str(actions), "--kb-cache", str(cache))
    assert third.returncode == 0 and "hits" not in third.stderr and "misses" in third.stderr, third.stderr


def test_recorded_engine_errors_are_replayed_and_a_missing_query_is_a_replay_miss(tmp_path: Path) -> None:
    with RecordingStore.open(tmp_path, "record") as store, recorded_kbs(store):
        kb = KB.open("demo")
        with pytest.raises(EngineError) as live:
            kb.select("SELECT ?x WHERE { ?x ?p }")
        assert kb.ask("ASK { ?s ?p ?o }") is True
    with RecordingStore.open(tmp_path, "replay") as store, recorded_kbs(store):
        kb = KB.open("demo")
        with pytest.raises(EngineError) as replayed:
            kb.select("SELECT ?x WHERE { ?x ?p }")
        assert type(replayed.value) is type(live.value) and str(replayed.value) == str(live.value)
        assert kb.ask("ASK { ?s ?p ?o }") is True
        with pytest.raises(ReplayMiss, match=r"not in the recording .*ASK \{ \?s \?p \?x \}"):
            kb.ask("ASK { ?s ?p ?x }")
        assert kb.stats.queries == 3


# ---------------------------------------------------------------------------
# The LLM side


def test_llm_replies_and_usage_are_replayed_and_a_new_prompt_is_a_replay_miss(tmp_path: Path) -> None:
    live = ScriptedLLM([LLMReply("Action 1: execute()", usage_in=120, usage_out=7, model="gpt-x-2024")], model="gpt-x")
    with RecordingStore.open(tmp_path, "record") as store:
        recorded = RecordedLLM(store, live, inner=live)
        assert recorded.complete([{"role": "user", "content": "Q?"}], stop=["\nObs"]).text == "Action 1: execute()"
    with RecordingStore.open(tmp_path, "replay") as store:
        replay = RecordedLLM(store, ScriptedLLM([], model="gpt-x"))
        reply = replay.complete([{"role": "user", "content": "Q?"}], stop=["\nObs"])
        assert (reply.text, reply.usage_in, reply.usage_out, reply.model) == ("Action 1: execute()", 120, 7, "gpt-x-2024")
        assert (replay.meter.calls, replay.meter.tokens_in, replay.model) == (1, 120, "gpt-x")
        with pytest.raises(LLMReplayMiss, match="made with stop .*ending 'Q\\?'\\) is not in the recording"):
            replay.complete([{"role": "user", "content": "Q?"}], stop=["\nObservation"])  # other stop sequences
        with pytest.raises(LLMReplayMiss):
            RecordedLLM(store, LLMConfig(model="gpt-y")).complete([{"role": "user", "content": "Q?"}], stop=["\nObs"])


# ---------------------------------------------------------------------------
# The command line: record once, replay offline


def _record_demo(tmp_path: Path, n: int, *extra: str) -> tuple[Path, Path]:
    items = demo_items(n)
    kb = tmp_path / "kb.ttl"
    shutil.copy(demo_kb_path(), kb)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"fake-model": [1.0, 2.0]}))
    with fake_server(GoldLLM(items, mode="chat")) as (url, _):
        live = pyql("eval", str(DEMO), "--limit", str(n), "--kb", str(kb), "--base-url", url, "--model", "fake-model",
                    "--prices", str(prices), "--out", str(tmp_path / "live.jsonl"), "--record", str(tmp_path / "rec"), *extra)
    assert live.returncode == 0, live.stderr
    return kb, prices


@pytest.mark.cli
def test_a_replay_opens_no_connection_and_gives_the_recorded_answers_metrics_and_costs(tmp_path: Path) -> None:
    kb, prices = _record_demo(tmp_path, 4, "--concurrency", "3")
    kb.unlink()  # the KB named at record time is gone
    dead = f"http://127.0.0.1:{refused_port()}/v1"
    replay = pyql("eval", str(DEMO), "--limit", "4", "--kb", str(kb), "--base-url", dead, "--model", "fake-model",
                  "--prices", str(prices), "--out", str(tmp_path / "replay.jsonl"), "--replay", str(tmp_path / "rec"), guard=True)
    assert replay.returncode == 0, replay.stderr
    assert "NETWORK OR PROCESS" not in replay.stderr and "misses" not in replay.stderr
    live, again = records(tmp_path / "live.jsonl"), records(tmp_path / "replay.jsonl")
    assert sorted(live) == sorted(again) and len(live) == 4
    for qid, record in live.items():
        for key in ("answers", "metrics", "tokens_in", "tokens_out", "cost_usd", "kb_queries", "llm_calls", "model", "status"):
            assert again[qid][key] == record[key], (qid, key)
        assert record["recording"]["mode"] == "record" and again[qid]["recording"]["mode"] == "replay"
        assert again[qid]["recording"]["id"] == record["recording"]["id"]
    assert sum(r["cost_usd"] for r in again.values()) > 0
    summary = json.loads((tmp_path / "replay.summary.json").read_text())
    live_summary = json.loads((tmp_path / "live.summary.json").read_text())
    assert summary["recording"]["fingerprint"] == live_summary["recording"]["fingerprint"]
    assert set(summary["recording"]["stats"]["kb"]) == {"hits"}  # the questions' queries and the profile probe
    assert summary["recording"]["stats"]["kb"]["hits"] >= sum(r["kb_queries"] for r in live.values())
    assert summary["metrics"]["f1"] == live_summary["metrics"]["f1"]
    trace = pyql("trace", str(tmp_path / "replay.jsonl"))
    assert f"recording: replay of {tmp_path / 'rec' / 'recording.sqlite'} (id {summary['recording']['id']}), 4 of 4 questions" in trace.stdout


@pytest.mark.cli
def test_a_call_not_in_the_recording_fails_that_question_as_replay_miss(tmp_path: Path) -> None:
    kb, prices = _record_demo(tmp_path, 2)
    dead = f"http://127.0.0.1:{refused_port()}/v1"
    replay = pyql("eval", str(DEMO), "--limit", "3", "--kb", str(kb), "--base-url", dead, "--model", "fake-model",
                  "--out", str(tmp_path / "replay.jsonl"), "--replay", str(tmp_path / "rec"), guard=True)
    assert replay.returncode == 3, replay.stderr
    again = records(tmp_path / "replay.jsonl")
    third = demo_items(3)[2]["id"]
    assert [again[q]["status"] for q in sorted(again)].count("finished") == 2
    assert again[third]["status"] == "failed_to_run" and again[third]["metrics"] == {}
    assert again[third]["error"].startswith("replay_miss: the LLM call is not in the recording")
    assert "NETWORK OR PROCESS" not in replay.stderr


@pytest.mark.cli
def test_recording_info_counts_entries_models_and_kb_identities(tmp_path: Path) -> None:
    _record_demo(tmp_path, 2)
    out = pyql("recording", "info", str(tmp_path / "rec"), "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    live = records(tmp_path / "live.jsonl")
    assert info["entries"]["llm"] == sum(r["llm_calls"] for r in live.values())
    assert info["models"] == {"fake-model": info["entries"]["llm"]} and info["models_asked"] == {"fake-model": "fake-model"}
    (identity,) = info["kbs"]
    assert json.loads(identity)["sha256"] == kb_identity("demo")["sha256"]
    text = pyql("recording", "info", str(tmp_path / "rec" / "recording.sqlite")).stdout
    assert f"fingerprint: {info['fingerprint']}" in text and "model fake-model:" in text


def test_ask_records_and_replays_in_process(tmp_path: Path) -> None:
    item = demo_items(1)[0]
    parser = build_parser()
    base = ["ask", item["question"], "--kb", "demo", "--entities", json.dumps(item["entities"]), "--json"]
    out = io.StringIO()
    args = parser.parse_args([*base, "--record", str(tmp_path / "r"), "--out", str(tmp_path / "a.jsonl")])
    assert args.func(args, out, llm=GoldLLM([item], mode="chat")) == 0
    replayed = io.StringIO()
    args = parser.parse_args([*base, "--replay", str(tmp_path / "r"), "--base-url", "http://127.0.0.1:9/v1"])
    unused = GoldLLM([item], mode="chat")  # the same LLM names the same keys; a replay never calls it
    assert args.func(args, replayed, llm=unused) == 0 and unused.calls == {}
    assert out.getvalue().splitlines()[-1].split('"seconds"')[0] == replayed.getvalue().splitlines()[-1].split('"seconds"')[0]
    assert json.loads((tmp_path / "a.jsonl").read_text())["recording"]["mode"] == "record"


def test_eval_in_process_with_concurrency_records_each_call_once(tmp_path: Path) -> None:
    items = demo_items(6)
    args = build_parser().parse_args(["eval", str(DEMO), "--limit", "6", "--kb", "demo", "--out", str(tmp_path / "r.jsonl"),
                                      "--record", str(tmp_path / "rec"), "--concurrency", "4"])
    assert eval_command(args, io.StringIO(), llm=GoldLLM(items, mode="chat"), progress=io.StringIO()) == 0
    live = records(tmp_path / "r.jsonl")
    with RecordingStore.open(tmp_path / "rec", "replay") as store:
        counts = store.counts()
    assert counts["llm"] == sum(r["llm_calls"] for r in live.values())  # every prompt of the gold runs differs
    assert 0 < counts["kb"] <= sum(r["kb_queries"] for r in live.values())


# ---------------------------------------------------------------------------
# Virtuoso: a second live run is answered by the cache


@pytest.mark.virtuoso
def test_kb_cache_on_virtuoso_second_run_is_all_hits_with_the_same_answers(virtuoso_server: Any, tmp_path: Path) -> None:
    graph = "http://pyql.test/recording-demo"
    virtuoso_server.load_turtle(demo_kb_path(), graph)
    items = demo_items(3)
    runs = []
    for n in range(2):
        args = build_parser().parse_args([
            "eval", str(DEMO), "--limit", "3", "--kb", virtuoso_server.endpoint, "--default-graph", graph,
            "--profile", "freebase", "--out", str(tmp_path / f"run{n}.jsonl"), "--kb-cache", str(tmp_path / "cache")])
        started = time.perf_counter()
        assert eval_command(args, io.StringIO(), llm=GoldLLM(items, mode="chat"), progress=io.StringIO()) == 0
        runs.append((records(tmp_path / f"run{n}.jsonl"), json.loads((tmp_path / f"run{n}.summary.json").read_text()),
                     time.perf_counter() - started))
    (first, s1, _), (second, s2, _) = runs
    assert s1["kb_cache"]["stats"]["kb"].get("misses", 0) > 0
    assert set(s2["kb_cache"]["stats"]["kb"]) == {"hits"}
    assert s2["kb_cache"]["stats"]["kb"]["hits"] == sum(r["kb_queries"] for r in second.values())
    for qid in first:
        assert first[qid]["answers"] == second[qid]["answers"] and first[qid]["metrics"] == second[qid]["metrics"]
    assert s2["kb_cache"]["entries"] == s1["kb_cache"]["entries"]  # nothing new was asked of the endpoint


def test_an_unreachable_kb_is_not_recorded(tmp_path: Path) -> None:
    from pyql.errors import EngineUnavailable

    url = f"http://127.0.0.1:{refused_port()}/sparql"
    with RecordingStore.open(tmp_path, "record") as store, recorded_kbs(store):
        kb = KB.open(url)
        with pytest.raises(EngineUnavailable):
            kb.ask("ASK { ?s ?p ?o }")
        assert store.counts() == {}  # a --resume with the endpoint back records the real answer
        assert store.names("kb-spec") == {url: '{"default_graph":null,"endpoint":"%s"}' % url}
