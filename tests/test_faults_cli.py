"""Fault injection through the command line, end to end (issue 13, "Done when").

Loopback fake servers (:mod:`tests.fault_servers`) play the SPARQL endpoint
(refused, HTTP 500, garbage, a slow trickle, killed mid-run, and a working
one serving the demo KB) and the LLM (429/500 bursts, bodies that are not
JSON or not UTF-8, replies with lone surrogates, a server that always says
429 or hangs). ``pyql run``, ``ask`` and ``eval`` run as subprocesses, and
every test checks what a user relies on:

* no traceback on stderr, and what stderr says fits on one line;
* every stdout line and run-file line is valid UTF-8 JSON;
* the exit status is the documented one (``pyql.cli``: 0 done, 2 usage,
  3 a service failed);
* nothing is scored that did not run, and a resumed run (after the endpoint
  comes back) ends with every question answered exactly once.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.runner import RunSettings, read_run, run_question
from agent.faults import FAILED_TO_RUN, FINISHED, failed_to_run, infra_failure
from agent.llm.scripted import ScriptedLLM
from pyql.cli import EXIT_OK, EXIT_SERVICE, EXIT_STEPS_FAILED, EXIT_USAGE, main
from pyql.errors import EngineTimeout
from tests.fault_servers import (
    DemoSparqlEndpoint,
    FakeLLMServer,
    GoldResponder,
    Reply,
    chat_body,
    refused_port,
    sparql_json,
)

ROOT = Path(__file__).resolve().parents[1]
DEMO_QUESTIONS = ROOT / "pyql" / "data" / "demo_questions.jsonl"
JSON = "application/sparql-results+json"
RACHEL = '{"Tropical Storm Rachel": "m.0crbvqz"}'
RACHEL_ACTIONS = (
    "get_relation(m.0crbvqz)\n"
    "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)\n"
    "execute()\n"
)


def demo_items(*ids: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_id = {row["id"]: row for row in rows}
    return [by_id[i] for i in ids]


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def pyql(*args: str, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """The real command in a subprocess; output kept as bytes, to check that it is UTF-8."""
    return subprocess.run([sys.executable, "-m", "pyql.cli", *args], input=stdin, capture_output=True, cwd=ROOT,
                          timeout=timeout, env=cli_env(), check=False)


def _no_nan(value: str) -> Any:
    raise AssertionError(f"not strict JSON: {value}")


def json_lines(data: bytes) -> list[dict[str, Any]]:
    """Every line valid UTF-8 (strict) and strict JSON (no NaN), one object per line."""
    text = data.decode("utf-8")  # raises on invalid UTF-8, lone surrogates included
    out = []
    for line in text.splitlines():
        value = json.loads(line, parse_constant=_no_nan)
        assert isinstance(value, dict), line
        out.append(value)
    return out


def stderr_of(result: subprocess.CompletedProcess[bytes]) -> str:
    text = result.stderr.decode("utf-8")
    assert "Traceback" not in text, text
    return text


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


# ---------------------------------------------------------------------------
# pyql run against a failing endpoint


def _trickle() -> Reply:
    bindings = [{"r": {"type": "uri", "value": f"http://rdf.freebase.com/ns/r.{i}"}} for i in range(40)]
    return Reply(200, sparql_json(["r"], bindings), content_type=JSON, trickle=0.1)


_FAULTY: dict[str, Any] = {
    "500": lambda: DemoSparqlEndpoint(fail=lambda q: Reply(500, b"<html><body>Internal Server Error</body></html>", content_type="text/html")),
    "garbage": lambda: DemoSparqlEndpoint(fail=lambda q: Reply(200, b"<html>a proxy page</html>", content_type=JSON)),
    "not UTF-8": lambda: DemoSparqlEndpoint(fail=lambda q: Reply(200, b'{"head": {"vars": []}, "results": \xff\xfe', content_type=JSON)),
    "trickle": lambda: DemoSparqlEndpoint(fail=lambda q: _trickle()),
    # killed mid-run: get_relation is answered, the endpoint dies on the add_fact query
    "killed": lambda: DemoSparqlEndpoint(die_when=lambda q: "tropical_cyclone.category" in q),
}


@pytest.mark.cli
@pytest.mark.parametrize(
    ("fault", "kind", "said", "at"),
    [
        ("refused", "engine_unavailable", "connection refused", 1),
        ("500", "engine_unavailable", "HTTP 500", 1),
        ("garbage", "engine_unavailable", "did not answer with SPARQL JSON results", 1),
        ("not UTF-8", "engine_unavailable", "not UTF-8", 1),
        ("trickle", "engine_timeout", "within 0.5 s", 1),
        ("killed", "engine_unavailable", "", 2),
    ],
)
def test_run_stops_at_an_unreachable_endpoint_with_exit_3(fault: str, kind: str, said: str, at: int) -> None:
    make = _FAULTY.get(fault)
    server = make() if make is not None else None
    url = f"http://127.0.0.1:{refused_port()}/sparql" if server is None else server.start().url
    try:
        timeout = "0.5" if fault == "trickle" else "20"  # rdflib answers slowly on a busy machine
        result = pyql("run", "--kb", url, "--kb-timeout", timeout, "--entities", RACHEL, "--actions", "-", "--json",
                      stdin=RACHEL_ACTIONS.encode())
    finally:
        if server is not None and not getattr(server, "dead", False):
            server.stop()
    assert result.returncode == EXIT_SERVICE, (result.stdout, result.stderr)
    message = one_line(stderr_of(result))
    assert message.startswith(f"pyql run: stopped at action {at}: the KB could not be used: {kind}:"), message
    assert said in message and "/sparql" in message
    lines = json_lines(result.stdout)
    steps, final = lines[:-1], lines[-1]
    assert len(steps) == at and all(s["ok"] for s in steps[:-1]) and not steps[-1]["ok"]
    assert final["answers"] == [] and final["error"]["kind"] == kind and said in final["error"]["message"]


@pytest.mark.cli
def test_run_on_a_live_endpoint_that_times_out_once_is_the_query_s_fault() -> None:
    """A time-out whose endpoint still answers a trivial query is advice for the step, not a failure to run."""
    slow = DemoSparqlEndpoint(fail=lambda q: _trickle() if "tropical_cyclone.category" in q else None)
    with slow:
        result = pyql("run", "--kb", slow.url, "--kb-timeout", "4", "--entities", RACHEL, "--actions", "-", "--json",
                      stdin=RACHEL_ACTIONS.encode())
        assert any(q.strip().startswith("ASK") for q in slow.answered), "the time-out was probed"
    assert result.returncode == EXIT_STEPS_FAILED, stderr_of(result)  # a step failed, not the service (issue 25)
    steps = json_lines(result.stdout)
    assert steps[0]["ok"] and not steps[1]["ok"]
    assert steps[1]["error"] == "engine_error" and "timed out" in steps[1]["observation"]
    assert steps[-1]["error"] is None


@pytest.mark.cli
def test_run_on_the_demo_endpoint_answers_as_the_file_does() -> None:
    with DemoSparqlEndpoint() as ep:
        remote = pyql("run", "--kb", ep.url, "--default-graph", "http://pyql.test/g", "--entities", RACHEL,
                      "--actions", "-", "--json", stdin=RACHEL_ACTIONS.encode())
        assert "default-graph-uri" in ep.form(0)
    local = pyql("run", "--kb", "demo", "--entities", RACHEL, "--actions", "-", "--json", stdin=RACHEL_ACTIONS.encode())
    assert remote.returncode == local.returncode == EXIT_OK, stderr_of(remote)
    assert json_lines(remote.stdout)[-1]["answers"] == json_lines(local.stdout)[-1]["answers"] == [
        {"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}
    ]


def test_kb_timeout_is_kept_below_one_second_and_said(tmp_path: Path) -> None:
    """--kb-timeout 0.3 is 0.3 s (not raised to 1 s) and the message says 0.3 s."""
    out = io.StringIO()
    with DemoSparqlEndpoint(fail=lambda q: Reply(200, sparql_json([], []), content_type=JSON, delay=3.0)) as ep:
        started = time.monotonic()
        code = main(["run", "--kb", ep.url, "--kb-timeout", "0.3", "--entities", RACHEL, "--actions",
                     str(_write(tmp_path / "a.txt", RACHEL_ACTIONS)), "--json"], out=out)
        elapsed = time.monotonic() - started
    final = json.loads(out.getvalue().splitlines()[-1])
    assert code == EXIT_SERVICE and final["error"]["kind"] == "engine_timeout"
    assert "within 0.3 s (timeout=0.3)" in final["error"]["message"]
    assert elapsed < 1.9  # the query and the probe: 2 x 0.3 s; a 1 s floor would make it 2 s or more


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--kb", "demo", "--kb-timeout", "0.5"], "--kb-timeout apply to a SPARQL endpoint"),
        (["--kb", "demo", "--default-graph", "http://g"], "--default-graph apply to a SPARQL endpoint"),
        (["--kb", "http://127.0.0.1:9/sparql", "--kb-timeout", "0"], "positive number of seconds"),
        (["--kb", "http://127.0.0.1:9/sparql", "--kb-timeout", "soon"], "number of seconds"),
    ],
)
def test_kb_options_misused_exit_2_with_one_line(args: list[str], said: str) -> None:
    err = io.StringIO()
    assert main(["run", *args, "--actions", "/dev/null"], out=err) == EXIT_USAGE
    assert said in one_line(err.getvalue())


def _write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ---------------------------------------------------------------------------
# Input that is not UTF-8: one rule for files and standard input


@pytest.mark.cli
def test_non_utf8_actions_are_refused_alike_from_stdin_and_from_a_file(tmp_path: Path) -> None:
    data = b'get_relation(m.0crbvqz)\nadd_fact(m.0crbvqz, common.topic.alias, "caf\xe9")\n'
    piped = pyql("run", "--kb", "demo", "--entities", RACHEL, "--actions", "-", "--json", stdin=data)
    filed = pyql("run", "--kb", "demo", "--entities", RACHEL, "--actions", str(_write(tmp_path / "a.txt", data)), "--json")
    for result, where in ((piped, "standard input (actions)"), (filed, "actions file")):
        message = one_line(stderr_of(result))
        assert result.returncode == EXIT_USAGE and result.stdout == b""
        assert where in message and "is not UTF-8: byte 0xe9 at line 2, column 45" in message, message


# ---------------------------------------------------------------------------
# pyql ask with an LLM that fails


@pytest.mark.cli
@pytest.mark.parametrize(
    ("always", "flags", "said"),
    [
        (Reply(429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}), ["--max-retries", "1"], "429"),
        (Reply(200, chat_body(), delay=20.0), ["--llm-timeout", "0.3", "--max-retries", "0"], "timed out"),
    ],
    ids=["always-429", "hangs"],
)
def test_ask_json_says_why_the_llm_failed(always: Reply, flags: list[str], said: str) -> None:
    with FakeLLMServer(GoldResponder(demo_items("q01"), always=always)) as llm:
        result = pyql("ask", "what category is tropical storm rachel?", "--kb", "demo", "--entities", RACHEL, "--json",
                      "--base-url", llm.url, "--model", "fake", *flags)
    message = one_line(stderr_of(result))
    assert result.returncode == EXIT_SERVICE, message
    final = json_lines(result.stdout)[-1]
    assert final["status"] == FAILED_TO_RUN and final["answers"] == []
    assert final["error"]["kind"] == "llm_error" and said in final["error"]["message"].lower()
    assert message.startswith("pyql ask: the question failed to run: the LLM at " + llm.url)
    assert said in message.lower()
    assert ("`pyql llm serve`" in message) == (said == "timed out")  # the hint only when the server did not answer


@pytest.mark.cli
def test_ask_survives_llm_bursts_garbage_and_surrogates() -> None:
    """429/500 bursts, a body that is not JSON, one that is not UTF-8: retried; a lone surrogate: replaced."""
    faults = {
        1: Reply(429, {"error": {"message": "slow down"}}),
        2: Reply(500, {"error": {"message": "overloaded"}}),
        4: Reply(200, b"<html>proxy error</html>", content_type="application/json"),
        6: Reply(200, b'{"choices": [{"message": {"content": "caf\xe9"}}]}'),
    }
    responder = GoldResponder(demo_items("q01"), faults=faults, thought="Rachel \ud800 category.")
    with FakeLLMServer(responder) as llm:
        result = pyql("ask", "what category is tropical storm rachel?", "--kb", "demo", "--entities", RACHEL, "--json",
                      "--base-url", llm.url, "--model", "fake")
        posts = len(llm.posts)
    assert result.returncode == EXIT_OK, stderr_of(result)
    lines = json_lines(result.stdout)
    assert lines[-1]["status"] == FINISHED and lines[-1]["error"] is None
    assert lines[-1]["answers"] == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]
    assert posts == 4 + len(faults)  # every fault was retried, once


# ---------------------------------------------------------------------------
# pyql eval: failed to run, not scored, stopped, resumed


def _data(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    return _write(tmp_path / "data.jsonl", "".join(json.dumps(item) + "\n" for item in items))


@pytest.mark.cli
def test_eval_endpoint_killed_mid_run_then_resumed(tmp_path: Path) -> None:
    items = demo_items("q01", "q03", "q24", "q33")
    data, out = _data(tmp_path, items), tmp_path / "run.jsonl"
    responder = GoldResponder(items)
    with FakeLLMServer(responder) as llm:
        common = [str(data), "--out", str(out), "--base-url", llm.url, "--model", "fake", "--max-infra-failures", "2"]
        dying = DemoSparqlEndpoint(die_when=lambda q: "m.03_r3" in q).start()  # dies on q03's first query
        port = dying.port
        first = pyql("eval", *common, "--kb", dying.url)
        assert dying.dead
        stderr = stderr_of(first)
        assert first.returncode == EXIT_SERVICE, stderr
        stopped = stderr.strip().splitlines()[-1]
        assert stopped.startswith("pyql eval: stopped: 2 questions in a row failed to run (last: q24: engine_unavailable")
        assert "--resume" in stopped

        records = json_lines(out.read_bytes())
        assert [(r["id"], r["status"]) for r in records] == [("q01", FINISHED), ("q03", FAILED_TO_RUN), ("q24", FAILED_TO_RUN)]
        assert records[0]["metrics"]["f1"] == 1.0
        assert all(r["metrics"] == {} and r["answers"] == [] and not r["forced"] for r in records[1:])
        summary = json.loads((tmp_path / "run.summary.json").read_text(encoding="utf-8"))
        assert (summary["answered"], summary["failed_to_run"], summary["failed_ids"]) == (1, 2, ["q03", "q24"])
        assert summary["metrics"]["questions"] == 1 and summary["metrics"]["f1"] == 1.0  # nothing scored that did not run
        assert "2 failed to run" in (tmp_path / "run.summary.md").read_text(encoding="utf-8")
        assert "| failed to run (not scored; run again with --resume) | 2 |" in first.stdout.decode("utf-8")

        before = dict(responder.calls)
        with DemoSparqlEndpoint(port=port) as back:  # the endpoint comes back on its port
            second = pyql("eval", *common, "--kb", back.url, "--resume")
    assert second.returncode == EXIT_OK, stderr_of(second)
    assert responder.calls["q01"] == before["q01"], "a finished question is not run again"
    lines = json_lines(out.read_bytes())
    answered = Counter(r["id"] for r in lines if r["status"] == FINISHED)
    assert answered == {"q01": 1, "q03": 1, "q24": 1, "q33": 1}  # every question answered exactly once
    assert "| questions | 4 |" in second.stdout.decode("utf-8") and "| answer F1 | 1.000 |" in second.stdout.decode("utf-8")
    summary = json.loads((tmp_path / "run.summary.json").read_text(encoding="utf-8"))
    assert summary["failed_to_run"] == 0 and summary["metrics"]["f1"] == 1.0


@pytest.mark.cli
@pytest.mark.parametrize("service", ["endpoint refused", "endpoint silent", "LLM not JSON", "LLM not UTF-8"])
def test_eval_stops_when_a_service_is_down_from_the_start(tmp_path: Path, service: str) -> None:
    items = demo_items("q01", "q03", "q24")
    data, out = _data(tmp_path, items), tmp_path / "run.jsonl"
    always = {"LLM not JSON": Reply(200, b"<html>502 Bad Gateway</html>"), "LLM not UTF-8": Reply(200, b'{"x": "\xff"}')}
    silent = DemoSparqlEndpoint(fail=lambda q: Reply(200, sparql_json([], []), content_type=JSON, delay=5.0))
    kb = {"endpoint refused": f"http://127.0.0.1:{refused_port()}/sparql", "endpoint silent": silent.start().url}.get(service, "demo")
    try:
        with FakeLLMServer(GoldResponder(items, always=always.get(service))) as llm:
            result = pyql("eval", str(data), "--kb", kb, "--out", str(out), "--base-url", llm.url, "--model", "fake",
                          "--max-retries", "0", "--max-infra-failures", "2", *(["--kb-timeout", "0.3"] if "endpoint" in service else []))
    finally:
        silent.stop()
    stderr = stderr_of(result)
    assert result.returncode == EXIT_SERVICE, stderr
    kind = {"endpoint refused": "engine_unavailable", "endpoint silent": "engine_timeout"}.get(service, "llm_error")
    assert f"2 questions in a row failed to run (last: q03: {kind}" in stderr.strip().splitlines()[-1]
    records = json_lines(out.read_bytes())
    assert [r["status"] for r in records] == [FAILED_TO_RUN, FAILED_TO_RUN]
    assert all(r["metrics"] == {} for r in records)
    if service == "endpoint silent":  # --kb-timeout reached the endpoint of every question, as given
        assert all("within 0.3 s (timeout=0.3)" in r["error"] for r in records)
    summary = json.loads((tmp_path / "run.summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["questions"] == 0 and summary["failed_to_run"] == 2


# ---------------------------------------------------------------------------
# The same rules in process: Readi, tables, old run files


def test_readi_on_an_unreachable_kb_failed_to_run() -> None:
    from pyql.kb import KB

    item = demo_items("q03")[0]
    kb = KB.open(f"http://127.0.0.1:{refused_port()}/sparql", timeout=2)
    llm = ScriptedLLM(["Path: Jamaica -> location.country.languages_spoken", "So {Jamaican English}."])
    record = run_question(item, llm, RunSettings(kb="demo", method="readi"), kb)
    assert record["status"] == FAILED_TO_RUN and record["error"].startswith("engine_unavailable: cannot reach")
    assert record["metrics"] == {} and failed_to_run(record)


def test_a_table_time_out_is_the_query_s_fault() -> None:
    from pyql_sql.errors import SQLTimeout

    assert infra_failure(SQLTimeout("slow", timeout=0.1), None) is None
    assert infra_failure(EngineTimeout("slow"), None) is None  # no KB to probe: the query's fault


def test_force_answer_on_a_dead_llm_does_not_guess() -> None:
    """At the step limit the agent asks the LLM which variable is the answer; a dead LLM ends the question unrun."""
    from agent.errors import LLMError
    from agent.methods.query_agent import AgentConfig, QueryAgent
    from pyql.kb import KB
    from pyql.environment.sparql import SparqlEnvironment

    env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    llm = ScriptedLLM([" Category.\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
                       LLMError("LLM request failed after 5 attempts: HTTP 503")])
    result = QueryAgent(llm, AgentConfig(feedback="raw", max_steps=1)).run(env, "what category is tropical storm rachel?")
    assert result.status == FAILED_TO_RUN and result.answers == [] and result.error.startswith("llm_error")
    assert [s.action for s in result.steps] == ["add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)"]


class _FirstStepLLM:
    """Thread-safe: always the first gold action of the question in the (chat) prompt."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        from agent.llm.config import LLMConfig

        self.config = LLMConfig(mode="chat")
        self.model = "first-step"
        self.by_question = {item["question"]: item for item in items}

    def complete(self, prompt: Any, **kwargs: Any) -> Any:
        from agent.llm.replies import LLMReply

        user = next(m["content"] for m in prompt if m["role"] == "user")
        item = self.by_question[user.split("Question:", 1)[1].strip().splitlines()[0].strip()]
        return LLMReply(text=f"Thought 1: go.\nAction 1: {item['actions'][0]}", model=self.model)


def test_eval_with_concurrency_stops_on_a_dead_endpoint_and_scores_nothing(tmp_path: Path) -> None:
    from agent.evaluation.runner import run_eval

    items = demo_items("q01", "q03", "q24", "q33", "q36")
    out = tmp_path / "run.jsonl"
    dead = f"http://127.0.0.1:{refused_port()}/sparql"
    outcome = run_eval(items, out, _FirstStepLLM(items), RunSettings(kb=dead, kb_timeout=2), progress=None,
                       concurrency=2, max_infra_failures=2)
    assert outcome.aborted and "in a row failed to run" in outcome.aborted
    records = read_run(out)
    assert records and all(r["status"] == FAILED_TO_RUN and r["metrics"] == {} for r in records)
    assert all(r["error"].startswith("engine_unavailable: cannot reach the endpoint") for r in records)
    assert outcome.metrics.questions == 0 and outcome.metrics.failed_to_run == len(records)


class _ProbedKB:
    """A KB whose probe query answers, is refused, or fails."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.asked: list[str] = []

    def ask(self, sparql: str) -> bool:
        self.asked.append(sparql)
        if self.error is not None:
            raise self.error
        return True


def test_a_time_out_fails_to_run_only_when_the_probe_gets_no_answer() -> None:
    from pyql.errors import EngineError, EngineUnavailable

    slow = EngineTimeout("the endpoint http://kb/sparql did not answer within 2 s (timeout=2)")
    alive, refusing = _ProbedKB(None), _ProbedKB(EngineError("ASK is not supported"))
    assert infra_failure(slow, alive) is None and alive.asked == ["ASK {}"]
    assert infra_failure(slow, refusing) is None  # a refusal is an answer: the KB is up
    for down in (EngineUnavailable("connection refused"), EngineTimeout("did not answer within 2 s")):
        failure = infra_failure(slow, _ProbedKB(down))
        assert failure is not None and failure.kind == "engine_timeout" and "the KB is not answering" in failure.message
