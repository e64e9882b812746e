"""Tests of agent/llm/: config, ScriptedLLM, retries, the action modes, and OpenAILLM against a loopback fake server.

No network: the OpenAI-compatible server is an ``http.server`` in a thread on
127.0.0.1, made here, that records every request and answers from a plan.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from agent.errors import LLMConfigError, LLMError
from agent.llm.client import OpenAILLM
from agent.llm.config import DEFAULT_STOP, LLMConfig, config_from_args
from agent.llm.decoding import complete_action, reply_action, reply_action_text, tool_call_action
from agent.llm.replies import LLMReply, ToolCall, UsageMeter
from agent.llm.retries import is_retryable, retry_delay, with_retries
from agent.llm.scripted import ScriptedLLM
from pyql.action_parser import extract_action, parse_action
from pyql.environment.actions import openai_tools
from pyql.errors import PyQLError
from pyql.environment.sparql_actions import SparqlActions

try:  # the HTTP library the installed openai package is built on
    import httpx2 as _httpx  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older openai releases
    import httpx as _httpx  # type: ignore[no-redef]


# ---------------------------------------------------------------------------
# A fake OpenAI-compatible server on loopback


class FakeOpenAI:
    """Records requests; answers each from ``plan`` (status, body, delay) or a default reply."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.plan: list[tuple[int, Any, float]] = []
        self.chat_message: dict[str, Any] = {"role": "assistant", "content": "Thought 1: ok.\nAction 1: execute()"}
        self.completion_text = " look at the relations.\nAction 1: get_relation(m.0crbvqz)"
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:  # noqa: N802
                with fake.lock:
                    fake.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers)})
                if self.path.endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "me"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake.lock:
                    fake.requests.append({"method": "POST", "path": self.path, "body": body, "headers": dict(self.headers)})
                    step = fake.plan.pop(0) if fake.plan else None
                if step is not None:
                    status, payload, delay = step
                    if delay:
                        time.sleep(delay)
                    if status != 200:
                        headers = {"Retry-After": "0"} if status == 429 else None
                        self._send(status, payload or {"error": {"message": f"status {status}", "type": "test"}}, headers)
                        return
                    if payload is not None:
                        self._send(200, payload)
                        return
                model = body.get("model", "fake-model")
                usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
                if self.path.endswith("/chat/completions"):
                    self._send(200, {
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                        "choices": [{"index": 0, "message": fake.chat_message,
                                     "finish_reason": "tool_calls" if fake.chat_message.get("tool_calls") else "stop"}],
                        "usage": usage,
                    })
                elif self.path.endswith("/completions"):
                    self._send(200, {
                        "id": "cmpl-1", "object": "text_completion", "created": 0, "model": model,
                        "choices": [{"index": 0, "text": fake.completion_text, "finish_reason": "stop", "logprobs": None}],
                        "usage": usage,
                    })
                else:
                    self._send(404, {"error": {"message": "not found"}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=lambda: self.server.serve_forever(poll_interval=0.05), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def posts(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST"]


@pytest.fixture()
def fake_server():
    fake = FakeOpenAI()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()


def make_llm(fake: FakeOpenAI, **overrides: Any) -> tuple[OpenAILLM, list[float]]:
    sleeps: list[float] = []
    values: dict[str, Any] = {"base_url": fake.base_url, "model": "test-model", "backoff_base": 0.5, "backoff_max": 4.0}
    values.update(overrides)
    return OpenAILLM(LLMConfig(**values), sleep=sleeps.append), sleeps


# ---------------------------------------------------------------------------
# Configuration


def test_config_from_env_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("PYQL_MODEL", "env-model")
    c = LLMConfig.from_env(model=None, temperature=0.5, stop=["\nObs"])
    assert (c.base_url, c.api_key, c.model, c.temperature, c.stop) == (
        "http://127.0.0.1:8000/v1", "sk-test", "env-model", 0.5, ("\nObs",))
    assert LLMConfig.from_env(model="flag-model").model == "flag-model"
    monkeypatch.setenv("PYQL_LLM_MODE", "completion")
    assert LLMConfig.from_env().mode == "completion" and LLMConfig.from_env(mode="chat").mode == "chat"


def test_config_defaults_and_dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    c = LLMConfig.from_env(base_url="http://127.0.0.1:8000/v1")
    assert c.api_key is None and c.resolved().api_key == "sk-no-key"
    assert (c.temperature, c.stop, c.max_retries, c.mode) == (0.0, DEFAULT_STOP, 4, "chat")


def test_unconfigured_error_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(LLMConfigError) as info:
        OpenAILLM(LLMConfig.from_env())
    message = str(info.value)
    for hint in ("--base-url", "OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL", "pyql llm serve"):
        assert hint in message
    assert isinstance(info.value, PyQLError)
    with pytest.raises(LLMConfigError, match="PYQL_MODEL"):
        OpenAILLM(LLMConfig(api_key="sk-x"))  # OpenAI's API needs a model name


@pytest.mark.parametrize(
    "kwargs, match",
    [({"mode": "both"}, "mode"), ({"max_retries": -1}, "max_retries"), ({"max_tokens": 0}, "max_tokens")],
)
def test_config_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(LLMConfigError, match=match):
        LLMConfig(**kwargs)
    with pytest.raises(LLMConfigError, match="unknown LLM setting"):
        LLMConfig.from_env(colour="red")


def test_config_from_args_keeps_env_when_flag_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from agent.llm.config import add_llm_arguments

    monkeypatch.setenv("PYQL_MODEL", "env-model")
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    c = config_from_args(parser.parse_args(["--base-url", "http://127.0.0.1:1/v1", "--llm-mode", "completion"]))
    assert (c.model, c.mode, c.temperature) == ("env-model", "completion", 0.0)


# ---------------------------------------------------------------------------
# ScriptedLLM


def test_scripted_replays_and_records() -> None:
    llm = ScriptedLLM(["first", LLMReply("second", usage_in=3, usage_out=2, model="m")])
    r1 = llm.complete("prompt one", stop=["\nObservation"], grammar="root ::= \"x\"")
    r2 = llm.complete([{"role": "user", "content": "prompt two"}], tools=[{"type": "function"}])
    assert (r1.text, r2.text) == ("first", "second")
    assert llm.prompts == ["prompt one", [{"role": "user", "content": "prompt two"}]]
    assert llm.calls[0].kwargs == {"stop": ["\nObservation"], "tools": None, "grammar": 'root ::= "x"'}
    assert llm.calls[1].kwargs["tools"] == [{"type": "function"}]
    assert llm.meter.calls == 2 and llm.meter.tokens_in >= 3 and llm.remaining == 0


def test_scripted_runs_out_with_clear_error() -> None:
    llm = ScriptedLLM(["only"])
    llm.complete("a")
    with pytest.raises(LLMError, match="ran out of replies after 1"):
        llm.complete("b")


def test_scripted_malformed_replies_pass_through() -> None:
    """Malformed replies are the agent's business: the LLM layer returns them as they are."""
    llm = ScriptedLLM(["Action 1: add_fact(m.1, r", "", "I think the answer is 42."])
    texts = [llm.complete("q").text for _ in range(3)]
    assert texts == ["Action 1: add_fact(m.1, r", "", "I think the answer is 42."]
    from pyql.action_parser import ActionSyntaxError, NoActionError

    with pytest.raises(ActionSyntaxError):
        extract_action(texts[0])
    with pytest.raises(NoActionError):
        extract_action(texts[2])


def test_scripted_non_retryable_exception_propagates() -> None:
    llm = ScriptedLLM([ValueError("bug in the test"), "never"])
    with pytest.raises(ValueError, match="bug in the test"):
        llm.complete("q")
    assert len(llm.prompts) == 1


# ---------------------------------------------------------------------------
# Retries (fake sleep)


def _rate_limit() -> openai.RateLimitError:
    request = _httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.RateLimitError("rate limited", response=_httpx.Response(429, request=request), body=None)


def _status_error(status: int) -> openai.APIStatusError:
    request = _httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.APIStatusError(f"status {status}", response=_httpx.Response(status, request=request), body=None)


def test_retry_429_then_success() -> None:
    llm = ScriptedLLM([_rate_limit(), "ok"], config=LLMConfig(backoff_base=1.0, backoff_max=8.0))
    reply = llm.complete("q")
    assert (reply.text, reply.attempts, len(llm.sleeps)) == ("ok", 2, 1)
    assert 0.5 <= llm.sleeps[0] <= 1.0
    assert llm.meter.attempts == 2 and llm.meter.calls == 1


def test_retry_500_twice_then_success_backs_off() -> None:
    llm = ScriptedLLM([_status_error(500), _status_error(503), "ok"], config=LLMConfig(backoff_base=1.0))
    reply = llm.complete("q")
    assert reply.attempts == 3
    assert len(llm.sleeps) == 2 and 0.5 <= llm.sleeps[0] <= 1.0 and 1.0 <= llm.sleeps[1] <= 2.0


def test_400_is_not_retried() -> None:
    llm = ScriptedLLM([_status_error(400), "never"])
    with pytest.raises(LLMError, match="not retried") as info:
        llm.complete("q")
    assert info.value.status == 400 and info.value.attempts == 1
    assert llm.sleeps == [] and llm.remaining == 1


def test_exhausting_retries_names_attempts() -> None:
    llm = ScriptedLLM([_status_error(502)] * 10, config=LLMConfig(max_retries=3, backoff_base=1.0, backoff_max=3.0))
    with pytest.raises(LLMError, match=r"after 4 attempts \(3 retries\)") as info:
        llm.complete("q")
    assert info.value.attempts == 4 and info.value.status == 502
    assert len(llm.sleeps) == 3 and max(llm.sleeps) <= 3.0


def test_with_retries_counts_and_reports() -> None:
    events: list[tuple[int, float]] = []
    calls = iter([LLMError("x", retryable=True), LLMError("y", retryable=True), 42])

    def fn() -> int:
        item = next(calls)
        if isinstance(item, Exception):
            raise item
        return item

    result, attempts = with_retries(fn, LLMConfig(backoff_base=0.1), sleep=lambda s: None,
                                    on_retry=lambda n, e, d: events.append((n, d)))
    assert (result, attempts, [n for n, _ in events]) == (42, 3, [1, 2])


def test_classification() -> None:
    request = _httpx.Request("POST", "http://127.0.0.1/v1/completions")
    assert is_retryable(_rate_limit())
    assert is_retryable(_status_error(500)) and is_retryable(_status_error(503))
    assert not is_retryable(_status_error(400)) and not is_retryable(_status_error(401)) and not is_retryable(_status_error(404))
    assert is_retryable(openai.APITimeoutError(request=request))
    assert is_retryable(openai.APIConnectionError(request=request))
    assert not is_retryable(KeyError("x"))


def test_retry_delay_is_bounded_exponential() -> None:
    c = LLMConfig(backoff_base=1.0, backoff_max=10.0)
    for n in range(1, 12):
        d = retry_delay(n, c)
        assert 0.5 * min(10.0, 2 ** (n - 1)) <= d <= min(10.0, 2 ** (n - 1))


# ---------------------------------------------------------------------------
# OpenAILLM over real HTTP (loopback fake server)


def test_chat_request_and_reply(fake_server: FakeOpenAI) -> None:
    llm, _ = make_llm(fake_server, temperature=0.0, max_tokens=77, extra_body={"top_k": 1})
    reply = llm.complete("Question: what languages are spoken in jamaica?")
    req = fake_server.posts[-1]
    assert req["path"] == "/v1/chat/completions"
    body = req["body"]
    assert body["model"] == "test-model" and body["temperature"] == 0.0 and body["max_tokens"] == 77
    assert body["stop"] == ["\nObservation"] and body["top_k"] == 1
    assert body["messages"] == [{"role": "user", "content": "Question: what languages are spoken in jamaica?"}]
    headers = {k.lower(): v for k, v in req["headers"].items()}
    assert headers.get("authorization") == "Bearer sk-no-key"
    assert reply.text == "Thought 1: ok.\nAction 1: execute()"
    assert (reply.usage_in, reply.usage_out, reply.finish_reason, reply.attempts) == (11, 7, "stop", 1)
    assert reply.model == "test-model" and reply.latency > 0
    assert llm.meter.as_dict()["tokens_in"] == 11


def test_completion_request_with_grammar_and_stop(fake_server: FakeOpenAI) -> None:
    llm, _ = make_llm(fake_server, mode="completion")
    grammar = 'root ::= "Action 1: execute()"'
    reply = llm.complete([{"role": "system", "content": "Rules."}, {"role": "user", "content": "Thought 1:"}],
                         stop=["\nObservation", "\nQuestion"], grammar=grammar)
    req = fake_server.posts[-1]
    assert req["path"] == "/v1/completions"
    assert req["body"]["prompt"] == "Rules.\n\nThought 1:"
    assert req["body"]["grammar"] == grammar and req["body"]["stop"] == ["\nObservation", "\nQuestion"]
    assert req["body"]["cache_prompt"] is True  # a loopback server keeps the evaluated prompt prefix
    assert reply.text.endswith("get_relation(m.0crbvqz)") and reply.usage_out == 7
    assert extract_action("Thought 1:" + reply.text).name == "get_relation"


def test_tools_request_and_tool_calls(fake_server: FakeOpenAI) -> None:
    fake_server.chat_message = {
        "role": "assistant", "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "add_fact", "arguments": json.dumps({"head": "m.03_r3", "relation": "location.country.languages_spoken", "tail": "?language"})}},
            {"id": "call_2", "type": "function", "function": {"name": "add_max", "arguments": "{\"max_var\": "}},
        ],
    }
    actions = SparqlActions()
    llm, _ = make_llm(fake_server)
    reply = llm.complete("q", tools=openai_tools(actions))
    body = fake_server.posts[-1]["body"]
    assert [t["function"]["name"] for t in body["tools"]] == list(actions.names)
    assert reply.text == "" and reply.finish_reason == "tool_calls"
    name, args = reply.tool_calls[0]
    assert name == "add_fact" and args["tail"] == "?language" and reply.tool_calls[0].id == "call_1"
    assert reply.tool_calls[1].arguments == {} and "not a JSON object" in (reply.tool_calls[1].error or "")
    text = reply_action_text(LLMReply("", tool_calls=reply.tool_calls[:1]), actions, step=2)
    assert text == "Action 2: add_fact(m.03_r3, location.country.languages_spoken, ?language)"
    assert extract_action(text).values == ("m.03_r3", "location.country.languages_spoken", "language")


def test_model_from_server_when_not_configured(fake_server: FakeOpenAI) -> None:
    llm, _ = make_llm(fake_server, model=None)
    llm.complete("q")
    assert fake_server.posts[-1]["body"]["model"] == "fake-model"


def test_http_retries_429_and_500(fake_server: FakeOpenAI) -> None:
    fake_server.plan = [(429, None, 0), (500, None, 0), (200, None, 0)]
    llm, sleeps = make_llm(fake_server)
    reply = llm.complete("q")
    assert reply.attempts == 3 and len(fake_server.posts) == 3 and len(sleeps) == 2
    assert llm.meter.attempts == 3


def test_http_400_not_retried(fake_server: FakeOpenAI) -> None:
    fake_server.plan = [(400, {"error": {"message": "bad grammar", "type": "invalid_request_error"}}, 0)]
    llm, sleeps = make_llm(fake_server)
    with pytest.raises(LLMError, match="HTTP 400") as info:
        llm.complete("q")
    assert info.value.status == 400 and len(fake_server.posts) == 1 and sleeps == []


def test_http_timeout_retried(fake_server: FakeOpenAI) -> None:
    fake_server.plan = [(200, None, 1.0), (200, None, 0)]
    llm, sleeps = make_llm(fake_server, timeout=0.3)
    reply = llm.complete("q")
    assert reply.attempts == 2 and len(sleeps) == 1


def test_connection_error_exhausts(fake_server: FakeOpenAI) -> None:
    from agent.llm.local import free_port

    llm = OpenAILLM(LLMConfig(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", max_retries=2), sleep=lambda s: None)
    with pytest.raises(LLMError, match="after 3 attempts") as info:
        llm.complete("q")
    assert info.value.attempts == 3


def test_no_choices_is_an_error(fake_server: FakeOpenAI) -> None:
    fake_server.plan = [(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}, 0)]
    llm, _ = make_llm(fake_server, max_retries=0)  # a malformed reply: retried (issue 26), so no retry here
    with pytest.raises(LLMError, match="no choice"):
        llm.complete("q")


def test_client_retries_are_ours() -> None:
    llm = OpenAILLM(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert llm.client.max_retries == 0


# ---------------------------------------------------------------------------
# Action modes and usage


def test_complete_action_modes() -> None:
    actions = SparqlActions()
    llm = ScriptedLLM([
        "Thought 1: relations first.\nAction 1: get_relation(m.03_r3)",
        LLMReply("", tool_calls=[ToolCall("set_answer", {"answer_var": "?language"})]),
        "Action 3: execute()",
    ])
    text, _ = complete_action(llm, "q", actions, mode="text")
    assert extract_action(text).name == "get_relation" and llm.calls[0].kwargs["tools"] is None
    text, _ = complete_action(llm, "q", actions, mode="tools", step=2)
    assert text == "Action 2: set_answer(?language)" and len(llm.calls[1].kwargs["tools"]) == len(actions.names)
    text, _ = complete_action(llm, "q", actions, mode="grammar", step=3)
    assert '"Action " "3" ": " call' in llm.calls[2].kwargs["grammar"]
    with pytest.raises(LLMConfigError, match="unknown action mode"):
        complete_action(llm, "q", actions, mode="telepathy")


def test_a_tool_call_is_a_structured_action() -> None:
    """Tools mode: one tool call becomes the ActionCall itself; what is no action stays text for the parser."""
    actions = SparqlActions()
    call = tool_call_action(ToolCall("add_fact", {"tail": "?x", "relation": "r.s", "head": "m.1"}), actions)
    assert call == parse_action("add_fact(m.1, r.s, ?x)") and call.text == "add_fact(m.1, r.s, ?x)"
    assert [(a.kind, a.value) for a in tool_call_action(ToolCall("add_filter", {"ob1": "?n", "op": ">", "ob2": 10}), actions).args] == [
        ("variable", "n"), ("operator", ">"), ("number", "10")]
    # a value that needs quotes is a string literal; true/null as the words (as the text path always did)
    tail = tool_call_action(ToolCall("add_fact", {"head": "m.1", "relation": "r.s", "tail": "Smith, John"}), actions).args[2]
    assert (tail.kind, tail.value, tail.raw) == ("string", "Smith, John", '"Smith, John"')
    assert tool_call_action(ToolCall("f", {"a": True, "b": None})).text == "f(true, null)"
    # bad JSON: never a call without arguments (issue 26): the arguments as sent, as text (QueryAgent says they are not JSON)
    assert reply_action(LLMReply("", tool_calls=[ToolCall.from_json("add_max", '{"max_var": ')]), actions) == 'Action: add_max({"max_var": )'
    # several calls, a name that is no identifier, a list value: the text, which the parser rejects as before
    two = LLMReply("", tool_calls=[ToolCall("execute", {}), ToolCall("execute", {})])
    assert reply_action(two, actions, step=3) == "Action 3: execute()\nAction 3: execute()"
    assert reply_action(LLMReply("", tool_calls=[ToolCall("functions.execute", {})]), actions, step=1) == "Action 1: functions.execute()"
    listed = LLMReply("", tool_calls=[ToolCall("add_max", {"max_var": ["?a", "?b"]})])
    assert reply_action(listed, actions, step=2) == 'Action 2: add_max(["?a", "?b"])'
    # a plain reply is its text
    assert reply_action(LLMReply("Action 1: execute()"), actions, step=1) == "Action 1: execute()"


def test_usage_meter_prices() -> None:
    meter = UsageMeter(prices={"big": (2.5, 10.0)})
    meter.record(LLMReply("x", usage_in=2_000_000, usage_out=100_000, model="big"))
    meter.record(LLMReply("y", usage_in=5, usage_out=5, model="gemma-3-270m"))
    assert meter.cost == pytest.approx(5.0 + 1.0)
    assert meter.as_dict()["calls"] == 2


class _Recorder:
    """Stands in for the openai client: records the keyword arguments of a completion request."""

    def __init__(self) -> None:
        self.kwargs: dict[str, Any] = {}
        outer = self

        class Completions:
            def create(self, **kw: Any) -> Any:
                outer.kwargs = kw
                return {"choices": [{"text": " 1", "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}

        self.completions = Completions()


def test_cache_prompt_only_for_local_servers() -> None:
    assert LLMConfig(base_url="http://localhost:8000/v1").local and LLMConfig(base_url="http://[::1]:8000/v1").local
    assert not LLMConfig(base_url="https://api.example.com/v1").local and not LLMConfig(api_key="sk-x").local
    hosted = _Recorder()
    OpenAILLM(LLMConfig(base_url="https://api.example.com/v1", model="m", mode="completion"), client=hosted).complete("q")
    assert "cache_prompt" not in (hosted.kwargs.get("extra_body") or {})
    local = _Recorder()
    OpenAILLM(LLMConfig(base_url="http://127.0.0.1:8000/v1", model="m", mode="completion"), client=local).complete("q")
    assert local.kwargs["extra_body"] == {"cache_prompt": True}


def test_complete_action_refuses_choose() -> None:
    with pytest.raises(LLMConfigError, match="by number"):
        complete_action(ScriptedLLM(["1"]), "q", SparqlActions(), mode="choose")
