"""A call's own sampling (temperature, seed, top log-probabilities) through every LLM backend and the recording.

Searches that sample (``vote``, ``generate-execute``, a ``beam`` in the
written modes) send each sample with its own seed, and a beam in choose
mode asks for the top log-probabilities of the choice. Without a
``sampling``, every request stays byte for byte what it was before
(the HTTP body, the recording's key), so existing recordings replay.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.errors import BudgetSpent, LLMReplayMiss
from agent.llm.client import OpenAILLM
from agent.llm.config import LLMConfig
from agent.llm.recording import RecordedLLM
from agent.llm.replies import LLMReply, Sampling
from agent.llm.sampling import CallBudget, SampledLLM
from agent.llm.scripted import ScriptedLLM
from pyql.recording_store import RecordingStore, request_key
from tests.test_llm import FakeOpenAI, fake_server, make_llm  # noqa: F401 (the fixture)

#: The body of a completion request before per-call sampling existed (its keys and values).
OLD_COMPLETION_KEYS = {"model", "temperature", "max_tokens", "stop", "prompt", "cache_prompt"}


def test_without_sampling_the_request_is_the_one_it_was(fake_server: FakeOpenAI) -> None:  # noqa: F811
    llm, _ = make_llm(fake_server, mode="completion")
    llm.complete("Q?", stop=["\n"])
    llm.complete("Q?", stop=["\n"], sampling=None)
    first, second = (r["body"] for r in fake_server.posts)
    assert first == second and set(first) == OLD_COMPLETION_KEYS and first["temperature"] == 0.0


def test_a_calls_sampling_is_sent_on_both_endpoints(fake_server: FakeOpenAI) -> None:  # noqa: F811
    completion, _ = make_llm(fake_server, mode="completion")
    completion.complete("Q?", sampling=Sampling(temperature=0.7, seed=3, top_logprobs=5))
    body = fake_server.posts[-1]["body"]
    assert (body["temperature"], body["seed"], body["logprobs"]) == (0.7, 3, 5) and "top_logprobs" not in body
    chat, _ = make_llm(fake_server, mode="chat")
    chat.complete("Q?", sampling=Sampling(seed=9, top_logprobs=4))
    body = fake_server.posts[-1]["body"]
    assert (body["temperature"], body["seed"], body["logprobs"], body["top_logprobs"]) == (0.0, 9, True, 4)


def test_the_servers_log_probabilities_are_read_from_both_shapes(fake_server: FakeOpenAI) -> None:  # noqa: F811
    fake_server.plan = [(200, {
        "id": "c", "object": "text_completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "text": " 2", "finish_reason": "stop",
                     "logprobs": {"tokens": [" 2"], "token_logprobs": [-0.2], "top_logprobs": [{" 2": -0.2, " 1": -1.8}]}}],
    }, 0), (200, {
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "3"}, "finish_reason": "stop",
                     "logprobs": {"content": [{"token": "3", "logprob": -0.1, "bytes": None,
                                               "top_logprobs": [{"token": "3", "logprob": -0.1, "bytes": None},
                                                                {"token": "1", "logprob": -2.5, "bytes": None}]}]}}],
    }, 0)]
    completion, _ = make_llm(fake_server, mode="completion")
    assert completion.complete("Q?", sampling=Sampling(top_logprobs=2)).top_logprobs == [{" 2": -0.2, " 1": -1.8}]
    chat, _ = make_llm(fake_server, mode="chat")
    assert chat.complete("Q?", sampling=Sampling(top_logprobs=2)).top_logprobs == [{"3": -0.1, "1": -2.5}]
    assert completion.complete("Q?").top_logprobs is None  # not asked, not given


def test_a_recordings_key_without_sampling_is_unchanged_and_each_seed_is_an_entry(tmp_path: Path) -> None:
    live = ScriptedLLM(["a", "b", "c", LLMReply("1", top_logprobs=[{"1": -0.1}])], model="m")
    with RecordingStore.open(tmp_path, "record") as store:
        recorded = RecordedLLM(store, live, inner=live)
        assert [recorded.complete("Q?").text, recorded.complete("Q?", sampling=Sampling(temperature=0.7, seed=1)).text,
                recorded.complete("Q?", sampling=Sampling(temperature=0.7, seed=2)).text] == ["a", "b", "c"]
        recorded.complete("L?", sampling=Sampling(top_logprobs=5))
        cfg = LLMConfig()
        old_request = {"model": "m", "mode": cfg.mode, "temperature": cfg.temperature, "max_tokens": cfg.max_tokens,
                       "extra_body": {}, "stop": list(cfg.stop), "prompt": "Q?", "tools": None, "grammar": None}
        assert store.get("llm", old_request) is not None  # the key of a call without sampling is the key it always was
        assert store.counts()["llm"] == 4
    assert "sampling" in live.calls[1].kwargs and "sampling" not in live.calls[0].kwargs
    with RecordingStore.open(tmp_path, "replay") as store:
        replay = RecordedLLM(store, ScriptedLLM([], model="m"))
        assert replay.complete("Q?", sampling=Sampling(temperature=0.7, seed=2)).text == "c"  # any order: keyed by seed
        assert replay.complete("Q?", sampling=Sampling(temperature=0.7, seed=1)).text == "b"
        assert replay.complete("L?", sampling=Sampling(top_logprobs=5)).top_logprobs == [{"1": -0.1}]
        with pytest.raises(LLMReplayMiss):
            replay.complete("Q?", sampling=Sampling(temperature=0.7, seed=3))
    assert request_key("llm", {"a": 1}) == request_key("llm", {"a": 1})


def test_a_sampled_llm_adds_its_sampling_and_stops_at_its_budget() -> None:
    inner = ScriptedLLM(["x", "y", "z"])
    budget = CallBudget(2)
    one, two = SampledLLM(inner, Sampling(temperature=0.5, seed=1), budget), SampledLLM(inner, Sampling(seed=2), budget)
    one.complete("Q", sampling=Sampling(top_logprobs=3))
    two.complete("Q")
    assert inner.calls[0].kwargs["sampling"] == Sampling(temperature=0.5, seed=1, top_logprobs=3)
    assert inner.calls[1].kwargs["sampling"] == Sampling(seed=2)
    with pytest.raises(BudgetSpent):
        one.complete("Q")
    assert (budget.used, budget.spent, len(inner.calls)) == (2, True, 2)
    assert budget.report() == {"ran_out": "llm_calls", "limit": 2, "used": 2}
    assert SampledLLM(inner).complete("Q").text == "z" and "sampling" not in inner.calls[-1].kwargs


def test_an_openai_llm_with_sampling_through_the_wrapper(fake_server: FakeOpenAI) -> None:  # noqa: F811
    llm = OpenAILLM(LLMConfig(base_url=fake_server.base_url, model="m", mode="completion"))
    SampledLLM(llm, Sampling(temperature=0.9, seed=7)).complete("Q?")
    body = fake_server.posts[-1]["body"]
    assert (body["temperature"], body["seed"]) == (0.9, 7)
    assert json.dumps(body, sort_keys=True)  # a plain JSON body
