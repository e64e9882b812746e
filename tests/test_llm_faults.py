"""Undecodable and failing LLM replies (issue 13, part B), against a real loopback server.

The server (``tests/fault_servers.py``) is an ``http.server`` on 127.0.0.1
that answers from a plan: 429/500 bursts, an HTTP 200 whose body is not JSON,
a body that is not UTF-8, and a valid JSON reply holding a lone surrogate.
Every case must end as a reply or an :class:`LLMError` (retried where a
retry can help, with its attempts counted), and every record written must
be valid UTF-8 JSON.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.errors import LLMError
from agent.jsonlines import count_unsafe, dumps_line, safe_json, safe_text
from agent.llm.client import OpenAILLM
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply, ToolCall, UsageMeter
from agent.llm.scripted import ScriptedLLM
from agent.methods.readi import Readi, ReadiConfig
from pyql.kb import KB
from tests.fault_servers import FakeLLMServer, Reply, chat_body


def _llm(server: FakeLLMServer, **config: object) -> OpenAILLM:
    settings_ = {"base_url": server.url, "model": "fake", "max_retries": 2, "timeout": 5.0, **config}
    return OpenAILLM(LLMConfig(**settings_), sleep=lambda s: None)  # type: ignore[arg-type]


def test_429_and_500_burst_is_retried_and_counted() -> None:
    plan = [Reply(429, {"error": {"message": "slow down"}}), Reply(500, {"error": {"message": "oops"}}),
            Reply(503, b"<html>busy</html>", content_type="text/html"), Reply(200, chat_body("Action 1: execute()"))]
    with FakeLLMServer(plan) as server:
        llm = _llm(server, max_retries=3)
        reply = llm.complete("Q")
    assert reply.text == "Action 1: execute()" and reply.attempts == 4
    assert len(server.posts) == 4 and llm.meter.attempts == 4


def test_burst_longer_than_the_retries_is_an_llm_error() -> None:
    with FakeLLMServer([Reply(500, {"error": {"message": "down"}})]) as server:
        with pytest.raises(LLMError, match="after 3 attempts") as info:
            _llm(server).complete("Q")
    assert info.value.attempts == 3 and info.value.status == 500 and len(server.posts) == 3


@pytest.mark.parametrize(
    "reply,match",
    [
        (Reply(200, b"this is not json"), "not JSON"),
        (Reply(200, b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"), "not a JSON completion"),
        (Reply(200, b'{"choices": [{"message": {"role": "assistant", "content": "caf\xe9"}}]}'), "not UTF-8"),
        (Reply(200, b'{"choices": [{"message": {"role": "assistant", "content": "\xff\xfe'), "not UTF-8"),
    ],
    ids=["non-json", "html", "latin-1", "bad-bytes"],
)
def test_undecodable_200_is_a_retried_llm_error(reply: Reply, match: str) -> None:
    with FakeLLMServer([reply]) as server:
        with pytest.raises(LLMError, match=match) as info:
            _llm(server).complete("Q")
    error = info.value
    assert error.status == 200 and error.attempts == 3 and len(server.posts) == 3, "retried, and counted"
    assert server.url in str(error)
    str(error).encode("utf-8")


def test_undecodable_200_then_a_good_reply() -> None:
    with FakeLLMServer([Reply(200, b"garbage"), Reply(200, chat_body("fine"))]) as server:
        reply = _llm(server).complete("Q")
    assert reply.text == "fine" and reply.attempts == 2


def test_lone_surrogate_in_valid_json_is_replaced_and_reported() -> None:
    body = json.dumps(chat_body("Final Path: Jamaica\ud800 -> location.country.languages_spoken"))
    assert "\\ud800" in body, "valid JSON: the surrogate is an escape"
    with FakeLLMServer([Reply(200, body)]) as server:
        reply = _llm(server).complete("Q")
    assert reply.text == "Final Path: Jamaica\ufffd -> location.country.languages_spoken"
    assert reply.replaced == 1
    reply.text.encode("utf-8")


def test_lone_surrogate_in_tool_call_arguments_is_replaced() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c\ud800", "type": "function", "function": {"name": "add_max", "arguments": json.dumps({"max_var": "?t\udfff"})}}],
    }
    body = dict(chat_body(), choices=[{"index": 0, "message": message, "finish_reason": "tool_calls"}])
    with FakeLLMServer([Reply(200, json.dumps(body))]) as server:
        reply = _llm(server).complete("Q", tools=[{"type": "function", "function": {"name": "add_max", "parameters": {"type": "object"}}}])
    [call] = reply.tool_calls
    assert call.arguments == {"max_var": "?t\ufffd"} and call.id == "c\ufffd" and reply.replaced == 2
    json.loads(call.raw_arguments)
    dumps_line({"args": call.raw_arguments, "id": call.id}).encode("utf-8")


def test_scripted_llm_repairs_surrogates_too() -> None:
    llm = ScriptedLLM(["Action 1: execute(\ud83d)", LLMReply("", tool_calls=[ToolCall("x", {"a": "\udc80"})])])
    first, second = llm.complete("Q"), llm.complete("Q")
    assert first.text == "Action 1: execute(\ufffd)" and first.replaced == 1
    assert second.tool_calls[0].arguments == {"a": "\ufffd"} and second.replaced == 1


def test_readi_run_with_undecodable_server_is_an_llm_error_not_a_traceback() -> None:
    with FakeLLMServer([Reply(200, b"\xff garbage")]) as server:
        result = Readi(_llm(server, max_retries=1), ReadiConfig(skip_qa=True)).run(
            KB.open("demo"), "what languages are spoken in jamaica?", {"Jamaica": "m.03_r3"}
        )
    assert result.error.startswith("llm_error: LLM request failed after 2 attempts (1 retries) to " + server.url)  # the real message
    assert "not UTF-8" in result.error and not result.done and result.answers == []
    dumps_line(result.to_dict()).encode("utf-8")


def test_readi_run_with_a_lone_surrogate_reply_writes_valid_utf8() -> None:
    reply = 'Path: {"Jamaica": [Jamaica -> location.country.languages_spoken]}\nThought: done \ud800'
    with FakeLLMServer([Reply(200, json.dumps(chat_body(reply)))]) as server:
        result = Readi(_llm(server), ReadiConfig(skip_qa=True)).run(
            KB.open("demo"), "what languages are spoken in jamaica?", {"Jamaica": "m.03_r3"}
        )
    assert result.done and sorted(a["value"] for a in result.answers) == ["m.01428y", "m.04ygk0"]
    line = dumps_line(result.to_dict())
    assert json.loads(line.encode("utf-8").decode("utf-8"))["question"] == result.question


def test_usage_meter_counts_failed_attempts_only_on_success() -> None:
    meter = UsageMeter()
    with FakeLLMServer([Reply(429, {}), Reply(200, chat_body("ok"))]) as server:
        OpenAILLM(LLMConfig(base_url=server.url, model="fake", max_retries=2), meter=meter, sleep=lambda s: None).complete("Q")
    assert (meter.calls, meter.attempts) == (1, 2)


# -- dumps_line --------------------------------------------------------------------------

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())
# st.text() never yields surrogates, so strings are joined from characters that include them.
TEXT = st.lists(st.characters(codec=None) | SURROGATES | st.sampled_from("\u2028\x85\n\"\\"), max_size=20).map("".join)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_dumps_line_is_always_one_line_of_valid_utf8_json(value: object) -> None:
    line = dumps_line(value)
    data = line.encode("utf-8")  # never UnicodeEncodeError
    assert len(line.splitlines()) <= 1
    decoded = json.loads(data.decode("utf-8"))
    assert decoded == json.loads(json.dumps(safe_json(value)))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_dumps_line_keeps_clean_text_exactly(text: str) -> None:
    if count_unsafe(text) == 0:
        assert json.loads(dumps_line({"t": text})) == {"t": safe_text(text)}


def test_dumps_line_examples() -> None:
    assert dumps_line({"a": "x\ud800"}) == '{"a": "x\ufffd"}'
    assert dumps_line({"a": float("nan"), "b": math.inf}) == '{"a": null, "b": null}'
    assert dumps_line("\u2028") == '"\\u2028"'
    assert dumps_line({"a": "é"}, ensure_ascii=True) == '{"a": "\\u00e9"}'
