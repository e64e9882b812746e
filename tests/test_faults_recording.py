"""A failing recording, KB cache or endpoint is never scored (issue 35, items 1-4 and 6).

Through the real command (``python -m pyql.cli``), with loopback servers
(:mod:`tests.fault_servers`) and, for a full disk, a real 200 KB tmpfs
(mounted here; skipped, saying why, where mounting is not allowed), as the
issue's repros ran:

1. ``--record`` on a full disk: was exit 0, every question ``finished``
   with F1 0 (``recording_error: ... database or disk is full``), skipped by
   ``--resume``. Now each fails to run (``recording_unavailable``), the run
   stops (exit 3), and ``--resume`` on a disk with room answers each once.
2. ``--kb-cache`` on a full disk against an endpoint: was shown to the model
   as an engine error, with ERASER's guideline. Now the same as 1, and the
   model is never told.
3. A recording entry that is not JSON (or not what pyql writes): was a
   finished question with F1 0. Now one line naming the file and the entry,
   exit 2: before any question when the file is opened (every entry is
   checked), or when the entry is read.
4. An endpoint answering with variables the query did not select: was read
   as empty rows, scored, and cached. Now ``engine_unavailable``, and
   nothing that failed is cached.
6. A value that is not UTF-8 in a recording or a cache: was a traceback
   (after scoring every question, for ``--replay``). Now one line, exit 2,
   before any question, for ``pyql recording info``, ``--replay`` and
   ``--kb-cache`` alike.
15. (in part; the rest in ``tests/test_faults_smaller.py``) A replay stopped
   by a damaged entry at its first question left an empty run file; now none.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from agent.evaluation.runner import latest_records
from pyql.cli import EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from pyql.errors import RecordingDamaged, RecordingUnavailable
from pyql.recording_store import RecordingStore
from tests.fault_servers import DemoSparqlEndpoint, FakeLLMServer, GoldResponder, Reply
from tests.test_faults_cli import RACHEL, RACHEL_ACTIONS, demo_items, json_lines, one_line, pyql, stderr_of

#: Whole runs against loopback servers (and a mounted tmpfs): the default tier, not the quick one.
pytestmark = pytest.mark.e2e

IDS = ("q01", "q02", "q03", "q04", "q05", "q06")
JSON = "application/sparql-results+json"
WRONG_VARIABLES = b'{"head":{"vars":["zzz"]},"results":{"bindings":[{"zzz":{"type":"literal","value":"x"}}]}}'


def _data(tmp_path: Path, ids: tuple[str, ...] = IDS) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in demo_items(*ids)), encoding="utf-8")
    return path


@contextlib.contextmanager
def tiny_disk(path: Path, size: str = "200k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` (the issue's ``mount -t tmpfs -o size=200k tmpfs tiny``), unmounted after."""
    path.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command: the disk-full repro needs a small tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.decode(errors='replace').strip() or 'not root'}): "
                    "the disk-full repro needs one")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def _grow(disk: Path, size: str = "64m") -> None:
    """Give the full disk room (the user freeing space) without unmounting it."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True, capture_output=True)


def _told_the_model(llm: FakeLLMServer, *words: str) -> list[str]:
    """The words any prompt sent to the LLM holds (a fault must never be shown to the model)."""
    sent = b"\n".join(r["body"] for r in llm.posts).decode("utf-8", errors="replace")
    return [w for w in words if w in sent]


def _all_answered_once(out: Path, ids: tuple[str, ...]) -> list[dict[str, Any]]:
    records = latest_records(json_lines(out.read_bytes()))
    assert sorted(r["id"] for r in records) == sorted(ids)
    assert all(r["status"] == "finished" and r["error"] is None for r in records), [r["error"] for r in records]
    return records


# ---------------------------------------------------------------------------
# 1, 2: a full disk


def test_record_on_a_full_disk_fails_to_run_stops_and_resumes(tmp_path: Path) -> None:
    data, out = _data(tmp_path), tmp_path / "run.jsonl"
    with tiny_disk(tmp_path / "tiny") as disk, FakeLLMServer(GoldResponder(demo_items(*IDS))) as llm:
        command = ["eval", str(data), "--kb", "demo", "--base-url", llm.url, "--model", "fake", "--out", str(out),
                   "--record", str(disk / "rec")]
        first = pyql(*command)
        assert first.returncode == EXIT_SERVICE, stderr_of(first)
        last = stderr_of(first).strip().splitlines()[-1]
        assert "stopped: 3 questions in a row failed to run" in last and "recording_unavailable" in last, last
        assert "database or disk is full" in last and str(disk / "rec") in last and "--resume" in last
        records = json_lines(out.read_bytes())
        assert len(records) == 3 and all(r["status"] == "failed_to_run" and r["metrics"] == {} for r in records)
        assert all(r["error"].startswith("recording_unavailable: --record ") for r in records)
        summary = json.loads(out.with_name("run.summary.json").read_text(encoding="utf-8"))
        assert (summary["answered"], summary["failed_to_run"]) == (0, 3)
        assert _told_the_model(llm, "disk is full", "RecordingError", "recording_unavailable", "cannot write") == []
        _grow(disk)
        second = pyql(*command, "--resume")
        assert second.returncode == EXIT_OK, stderr_of(second)
        _all_answered_once(out, IDS)
        replay = pyql("eval", str(data), "--kb", "demo", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake",
                      "--out", str(tmp_path / "replay.jsonl"), "--replay", str(disk / "rec"))
    assert replay.returncode == EXIT_OK, stderr_of(replay)  # the recording holds every call the answers came from
    _all_answered_once(tmp_path / "replay.jsonl", IDS)


def test_a_kb_cache_on_a_full_disk_is_never_shown_to_the_model(tmp_path: Path) -> None:
    data, out = _data(tmp_path), tmp_path / "run.jsonl"
    with tiny_disk(tmp_path / "tiny") as disk, DemoSparqlEndpoint() as ep, FakeLLMServer(GoldResponder(demo_items(*IDS))) as llm:
        command = ["eval", str(data), "--kb", ep.url, "--kb-timeout", "30", "--base-url", llm.url, "--model", "fake",
                   "--out", str(out), "--kb-cache", str(disk / "cache")]
        first = pyql(*command)
        assert first.returncode == EXIT_SERVICE, stderr_of(first)
        records = json_lines(out.read_bytes())
        failed = [r for r in records if r["status"] == "failed_to_run"]
        assert failed and all(r["error"].startswith("recording_unavailable: --kb-cache ") for r in failed)
        assert all(r["error"] is None for r in records if r["status"] == "finished")  # a finished one ran whole
        steps = [s for r in records for s in r["steps"]]
        assert not any(s.get("rule") == "engine_error" for s in steps)
        assert _told_the_model(llm, "disk is full", "RecordingError", "kb-cache", "cannot write") == []
        _grow(disk)
        second = pyql(*command, "--resume")
    assert second.returncode == EXIT_OK, stderr_of(second)
    _all_answered_once(out, IDS)


def test_a_store_that_cannot_write_is_unavailable_not_damaged(tmp_path: Path) -> None:
    """SQLite's own disk-full error (SQLITE_FULL, made here with a page cap), without a tmpfs."""
    store = RecordingStore.open(tmp_path, "record")
    store._db.execute("PRAGMA max_page_count = 8")  # the file cannot grow past what it has: SQLITE_FULL
    with pytest.raises(RecordingUnavailable, match="cannot write it: database or disk is full") as info:
        for i in range(200):
            store.put("kb", "demo", {"query": f"ASK {{ <urn:{i}> ?p ?o }}"}, {"boolean": True, "pad": "x" * 2000})
    assert info.value.kind == "recording_unavailable" and store.damage is None
    assert store.get("kb", {"query": "ASK { <urn:0> ?p ?o }"}) == {"boolean": True, "pad": "x" * 2000}  # still read
    store.close()


# ---------------------------------------------------------------------------
# 3, 6: a damaged recording or cache


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of three demo questions on the demo KB (``--record``)."""
    root = tmp_path_factory.mktemp("recorded")
    data = _data(root, IDS[:3])
    with FakeLLMServer(GoldResponder(demo_items(*IDS[:3]))) as llm:
        done = pyql("eval", str(data), "--kb", "demo", "--base-url", llm.url, "--model", "fake",
                    "--out", str(root / "run.jsonl"), "--record", str(root / "rec"))
    assert done.returncode == EXIT_OK, stderr_of(done)
    return root / "rec" / "recording.sqlite"


def _damaged(recording: Path, tmp_path: Path, statement: str, name: str = "recording.sqlite") -> Path:
    copy = tmp_path / "store" / name
    copy.parent.mkdir(exist_ok=True)
    shutil.copy(recording, copy)
    with contextlib.closing(sqlite3.connect(copy)) as db:
        db.execute(statement)
        db.commit()
        assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"  # SQLite's own check finds nothing
    return copy


def _replay(tmp_path: Path, store: Path, *flags: str, ids: tuple[str, ...] = IDS[:3]) -> subprocess.CompletedProcess[bytes]:
    return pyql("eval", str(_data(tmp_path, ids)), "--kb", "demo", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake",
                "--out", str(tmp_path / "replay.jsonl"), *(flags or ("--replay", str(store))))


def _first_key(store: Path, kind: str) -> str:
    with contextlib.closing(sqlite3.connect(store)) as db:
        return str(db.execute("SELECT key FROM entries WHERE kind = ? ORDER BY rowid LIMIT 1", (kind,)).fetchone()[0])


@pytest.mark.parametrize("kind", ["kb", "llm"])
def test_an_entry_that_is_not_json_stops_before_any_question_naming_file_and_entry(
    recording: Path, tmp_path: Path, kind: str
) -> None:
    key = _first_key(recording, kind)
    store = _damaged(recording, tmp_path, f"UPDATE entries SET response = 'not json {{' WHERE key = '{key}'")
    done = _replay(tmp_path, store)
    assert done.returncode == EXIT_USAGE
    line = one_line(stderr_of(done))
    assert str(store) in line and f"the entry {key[:12]} ({kind}) has an answer that is not JSON" in line, line
    assert "damaged" in line and not (tmp_path / "replay.jsonl").exists()  # nothing ran, no run file


@pytest.mark.parametrize(("kind", "value"), [("kb", "[1, 2]"), ("kb", '{"error": "x"}'), ("llm", "[1, 2]"), ("llm", "{}")])
def test_an_entry_pyql_did_not_write_stops_the_run_when_read(recording: Path, tmp_path: Path, kind: str, value: str) -> None:
    key = _first_key(recording, kind)
    store = _damaged(recording, tmp_path, f"UPDATE entries SET response = '{value}' WHERE key = '{key}'")
    done = _replay(tmp_path, store)
    assert done.returncode == EXIT_USAGE
    line = stderr_of(done).strip().splitlines()[-1]
    assert line.startswith("pyql: --replay ") and str(store) in line, line
    assert f"the entry {key[:12]} ({kind}) is not what pyql writes" in line and "the file is damaged" in line, line
    records = json_lines((tmp_path / "replay.jsonl").read_bytes()) if (tmp_path / "replay.jsonl").exists() else []
    assert not [r for r in records if r["error"] and "damaged" in r["error"]]  # never a question's error, never scored


@pytest.mark.cli
@pytest.mark.parametrize("kind", ["kb", "llm"])
def test_a_replay_stopped_at_its_first_question_leaves_no_run_file(recording: Path, tmp_path: Path, kind: str) -> None:
    """Issue 35, item 15: the run file made for a replay that stopped before any question was answered is removed."""
    key = _first_key(recording, kind)  # read by the first question
    store = _damaged(recording, tmp_path, f"UPDATE entries SET response = '[1, 2]' WHERE key = '{key}'")
    done = _replay(tmp_path, store)
    assert done.returncode == EXIT_USAGE and "is not what pyql writes" in stderr_of(done)
    assert not (tmp_path / "replay.jsonl").exists() and not (tmp_path / "replay.jsonl.lock").exists()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE entries SET response = CAST(X'7B22FF22' AS TEXT) WHERE rowid = (SELECT min(rowid) FROM entries)",  # the issue's
        "UPDATE entries SET request = CAST(X'7B22C3' AS TEXT) WHERE rowid = (SELECT max(rowid) FROM entries)",
        "UPDATE names SET value = CAST(X'FF' AS TEXT)",
        "UPDATE meta SET value = CAST(X'C328' AS TEXT) WHERE name = 'created'",
    ],
)
def test_a_value_that_is_not_utf8_is_one_line_and_exit_2_before_any_question(recording: Path, tmp_path: Path, statement: str) -> None:
    store = _damaged(recording, tmp_path, statement)
    info = pyql("recording", "info", str(store))
    assert info.returncode == EXIT_USAGE and "not UTF-8" in one_line(stderr_of(info)) and str(store) in stderr_of(info)
    replay = _replay(tmp_path, store)
    assert replay.returncode == EXIT_USAGE and "not UTF-8" in one_line(stderr_of(replay))
    assert not (tmp_path / "replay.jsonl").exists()


def test_a_cache_that_is_not_utf8_stops_a_live_run_before_any_question(recording: Path, tmp_path: Path) -> None:
    cache = _damaged(recording, tmp_path, "UPDATE meta SET value = 'kb-cache' WHERE name = 'purpose'", "kb-cache.sqlite")
    with contextlib.closing(sqlite3.connect(cache)) as db:
        db.execute("UPDATE entries SET response = CAST(X'7B22FF22' AS TEXT) WHERE rowid = (SELECT min(rowid) FROM entries)")
        db.commit()
    with FakeLLMServer(GoldResponder(demo_items(*IDS[:3]))) as llm:
        done = _replay(tmp_path, cache, "--kb-cache", str(cache.parent), "--base-url", llm.url)
        assert not llm.posts
    assert done.returncode == EXIT_USAGE
    line = one_line(stderr_of(done))
    assert line.startswith(f"pyql: --kb-cache {cache}") and "not UTF-8" in line, line


@pytest.mark.parametrize("command", ["ask", "run"])
def test_ask_and_run_stop_on_a_damaged_entry_too(recording: Path, tmp_path: Path, command: str) -> None:
    key = _first_key(recording, "kb")
    store = _damaged(recording, tmp_path, f"UPDATE entries SET response = '[1, 2]' WHERE key = '{key}'")
    if command == "ask":
        done = pyql("ask", "what category is tropical storm rachel?", "--entities", RACHEL, "--kb", "demo",
                    "--base-url", "http://127.0.0.1:9/v1", "--model", "fake", "--replay", str(store))
    else:
        done = pyql("run", "--kb", "demo", "--entities", RACHEL, "--actions", "-", "--replay", str(store),
                    stdin=RACHEL_ACTIONS.encode())
    assert done.returncode == EXIT_USAGE, done
    line = stderr_of(done).strip().splitlines()[-1]
    assert "the file is damaged" in line and str(store) in line, line


# ---------------------------------------------------------------------------
# 4: an endpoint answering with variables the query did not select; nothing that failed is cached


def test_an_answer_with_unselected_variables_fails_to_run_and_is_never_cached(tmp_path: Path) -> None:
    broken = {"on": True}
    ids = IDS[:3]
    data, out, cache = _data(tmp_path, ids), tmp_path / "run.jsonl", tmp_path / "cache"
    endpoint = DemoSparqlEndpoint(fail=lambda q: Reply(200, WRONG_VARIABLES, content_type=JSON) if broken["on"] else None)
    with endpoint as ep, FakeLLMServer(GoldResponder(demo_items(*ids))) as llm:
        command = ["eval", str(data), "--kb", ep.url, "--kb-timeout", "30", "--base-url", llm.url, "--model", "fake",
                   "--out", str(out), "--kb-cache", str(cache)]
        first = pyql(*command)
        assert first.returncode == EXIT_SERVICE, stderr_of(first)
        records = json_lines(out.read_bytes())
        assert records and all(r["status"] == "failed_to_run" and r["metrics"] == {} for r in records)
        said = records[0]["error"]
        assert said.startswith(f"engine_unavailable: the SPARQL endpoint {ep.url} answered a SELECT with variables the query "
                               "does not select (?zzz; it selects "), said
        assert _told_the_model(llm, "not in the knowledge base", "zzz") == []
        with RecordingStore.open(cache, "inspect") as store:
            assert store.counts() == {}  # nothing that failed is cached
        broken["on"] = False  # the endpoint is fixed
        second = pyql(*command, "--resume")
    assert second.returncode == EXIT_OK, stderr_of(second)
    records = _all_answered_once(out, ids)
    assert all(r["metrics"]["f1"] == 1.0 for r in records)  # the gold answers, not the empty ones of the broken endpoint


# ---------------------------------------------------------------------------
# found on the fresh pass: answers a store could not encode


def test_a_literal_holding_a_lone_surrogate_is_the_endpoint_s_fault_not_the_query_s(tmp_path: Path) -> None:
    """An endpoint's literal may hold a lone surrogate (JSON's ``"\\ud800"``), which no term holds: it was an engine
    error "rejected the query: TermError ...", shown to the model with ERASER's advice. Now a malformed answer,
    ``engine_unavailable``, and nothing is cached."""
    from pyql.errors import EngineUnavailable
    from pyql.kb import KB
    from pyql.kb.recording import recorded_kbs
    from tests.fault_servers import FakeSparqlEndpoint

    body = b'{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "literal", "value": "a\\ud800b"}}]}}'
    with FakeSparqlEndpoint([Reply(200, body, content_type=JSON)]) as ep:
        with RecordingStore.open(tmp_path, "cache") as store, recorded_kbs(store):
            with pytest.raises(EngineUnavailable, match="answered a SELECT with a cell that is no term"):
                KB.open(ep.url, timeout=5).select("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
            assert store.counts() == {}


def test_a_request_holding_a_lone_surrogate_is_kept_escaped(tmp_path: Path) -> None:
    """UTF-8 cannot hold a lone surrogate: a request or answer holding one was a UnicodeEncodeError in the store."""
    store = RecordingStore.open(tmp_path, "record")
    request = {"prompt": "Q" + chr(0xD800)}
    assert store.put("llm", "m" + chr(0xDC00), request, {"text": "A" + chr(0xDFFF)})
    assert store.get("llm", request) == {"text": "A" + chr(0xDFFF)}
    store.close()


def test_an_answer_no_json_holds_is_unavailable_not_a_crash(tmp_path: Path) -> None:
    store = RecordingStore.open(tmp_path, "record")
    with pytest.raises(RecordingUnavailable, match="cannot keep the answer"):
        store.put("score", "m", {"prefix": "Q", "continuation": " r"}, float("-inf"))  # a log-probability of 0
    store.close()
