"""Credentials in URLs are used and never said (issue 35, item 5).

``--kb http://alice:s3cret@127.0.0.1:P/sparql`` sent no Authorization
header (the server answered 401), and then ``s3cret`` was on stderr, in the
run file (``settings.kb``, errors, observations), in ``summary.json`` and in
the recording's names table, the file the docs say to publish; the same for
``--base-url http://bob:pw@...``. Here both loopback servers demand HTTP
basic authentication; every command runs with the credentials in its URLs,
on the working path and on failing ones (a wrong password, a dead LLM), and
every byte a run writes (stdout, stderr, every file under its directory:
run files, summaries, the recording, the cache, the HTML trace) is searched
for the passwords.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pyql.cli import EXIT_OK, EXIT_SERVICE
from pyql.echo import redact_credentials
from tests.fault_servers import DemoSparqlEndpoint, FakeLLMServer, GoldResponder, Reply, refused_port
from tests.test_faults_cli import RACHEL, RACHEL_ACTIONS, demo_items, json_lines, pyql, stderr_of

#: Whole runs against loopback servers (and a mounted tmpfs): the default tier, not the quick one.
pytestmark = pytest.mark.e2e

KB_USER, KB_PASSWORD = "alice", "s3cret@kb-9271"  # an @ in a password: percent-encoded in the URL
LLM_USER, LLM_PASSWORD = "bob", "pw-llm-5518"
SECRETS = ("s3cret", "kb-9271", "pw-llm-5518", "s3cret%40kb")
IDS = ("q01", "q03")


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _guarded(answer: Callable[[dict[str, Any]], Reply], user: str, password: str) -> Callable[[dict[str, Any]], Reply]:
    """A responder that answers only requests with the user's basic authentication (401 otherwise), counting both."""

    def respond(request: dict[str, Any]) -> Reply:
        if request["headers"].get("Authorization") != _basic(user, password):
            respond.refused += 1  # type: ignore[attr-defined]
            return Reply(401, b"Unauthorized", content_type="text/plain", headers={"WWW-Authenticate": 'Basic realm="x"'})
        respond.allowed += 1  # type: ignore[attr-defined]
        return answer(request)

    respond.refused = respond.allowed = 0  # type: ignore[attr-defined]
    return respond


def _with_credentials(url: str, user: str, password: str) -> str:
    return url.replace("://", f"://{user}:{password.replace('@', '%40')}@", 1)


def _leaks(tmp_path: Path, *results: Any) -> list[str]:
    """Every place a password shows: a command's stdout or stderr, or a file under ``tmp_path`` (the SQLite files too)."""
    found = []
    for number, result in enumerate(results):
        for stream in ("stdout", "stderr"):
            data = getattr(result, stream)
            found += [f"command {number} {stream}: {secret}" for secret in SECRETS if secret.encode() in data]
    for path in sorted(p for p in tmp_path.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(tmp_path)}: {secret}" for secret in SECRETS if secret.encode() in data]
    return found


def test_credentials_in_the_urls_are_used_and_written_nowhere(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in demo_items(*IDS)), encoding="utf-8")
    endpoint = DemoSparqlEndpoint()
    endpoint.responder = _guarded(endpoint.responder, KB_USER, KB_PASSWORD)  # type: ignore[arg-type]
    gold = _guarded(GoldResponder(demo_items(*IDS)), LLM_USER, LLM_PASSWORD)
    with endpoint as ep, FakeLLMServer(gold) as llm:
        kb, base = _with_credentials(ep.url, KB_USER, KB_PASSWORD), _with_credentials(llm.url, LLM_USER, LLM_PASSWORD)
        common = ["--kb", kb, "--kb-timeout", "30", "--base-url", base, "--model", "fake"]
        out = tmp_path / "run.jsonl"
        done = [pyql("eval", str(data), *common, "--out", str(out), "--record", str(tmp_path / "rec"),
                     "--kb-cache", str(tmp_path / "cache"))]
        assert done[0].returncode == EXIT_OK, stderr_of(done[0])
        done.append(pyql("eval", str(data), *common, "--out", str(tmp_path / "replay.jsonl"), "--replay", str(tmp_path / "rec")))
        done.append(pyql("ask", "what category is tropical storm rachel?", "--entities", RACHEL, *common, "--json",
                         "--out", str(tmp_path / "ask.jsonl")))
        done.append(pyql("run", "--kb", kb, "--entities", RACHEL, "--actions", "-", "--json", stdin=RACHEL_ACTIONS.encode()))
        done.append(pyql("recording", "info", str(tmp_path / "rec")))
        done.append(pyql("recording", "info", str(tmp_path / "rec"), "--json"))
        done.append(pyql("trace", str(out), "--html", str(tmp_path / "trace.html")))
        assert all(result.returncode == EXIT_OK for result in done), [stderr_of(r) for r in done]
        assert endpoint.responder.refused == 0 and endpoint.responder.allowed > 0  # type: ignore[attr-defined]
        assert gold.refused == 0 and gold.allowed > 0  # type: ignore[attr-defined]
        # the wrong password and a dead LLM: their errors name the URLs, never the passwords
        wrong = kb.replace("9271", "0000")
        failed = [pyql("eval", str(data), "--kb", wrong, "--kb-timeout", "30", "--base-url", base, "--model", "fake",
                       "--out", str(tmp_path / "wrong.jsonl"))]
        dead = _with_credentials(f"http://127.0.0.1:{refused_port()}/v1", LLM_USER, LLM_PASSWORD)
        failed.append(pyql("ask", "what category is tropical storm rachel?", "--entities", RACHEL, "--kb", kb,
                           "--base-url", dead, "--model", "fake", "--max-retries", "0", "--json"))
        failed.append(pyql("run", "--kb", wrong, "--entities", RACHEL, "--actions", "-", stdin=RACHEL_ACTIONS.encode()))
    assert [r.returncode for r in failed] == [EXIT_SERVICE] * 3, [stderr_of(r) for r in failed]
    assert "refused access (HTTP 401" in stderr_of(failed[0]) and f"{KB_USER}:***@127.0.0.1" in stderr_of(failed[0])
    assert f"{LLM_USER}:***@127.0.0.1" in stderr_of(failed[1])
    records = json_lines(out.read_bytes())
    assert all(r["metrics"]["f1"] == 1.0 for r in records)  # the endpoint and the LLM were used, with the credentials
    assert records[0]["settings"]["kb"] == redact_credentials(kb) == kb.split("://")[0] + f"://{KB_USER}:***@" + kb.split("@")[-1]
    assert _leaks(tmp_path, *done, *failed) == []


def test_a_resume_with_another_password_is_the_same_kb(tmp_path: Path) -> None:
    """The password is not a setting: the run file holds the URL without it, so a changed password resumes."""
    from agent.evaluation.runner import RunSettings, run_fingerprint

    first = run_fingerprint(RunSettings(kb="http://alice:one@127.0.0.1:8890/sparql"))
    second = run_fingerprint(RunSettings(kb="http://alice:two@127.0.0.1:8890/sparql"))
    assert first["kb"] == second["kb"] == "http://alice:***@127.0.0.1:8890/sparql"
