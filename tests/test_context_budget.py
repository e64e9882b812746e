"""The context budget (issue 22, item 4): no prompt exceeds the model's context.

A prompt over the budget is shortened (older observations first, then older
steps summarised; the task, the one-shot example, the question and the
current state stay whole); one that still cannot fit ends the question with
the agent's own ``context_overflow``: finished and scored as failed, never
*failed to run*, counted in the summary and not run again on ``--resume``.
A server's context-length refusal is the same error, and the budget learns
the size it says. Through the real command with a loopback LLM server that
refuses prompts above its context, and with the bundled local model on the
long dbbench table question that overflowed before.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.errors import ContextOverflow, LLMError
from agent.evaluation.metrics import aggregate
from agent.evaluation.runner import RunSettings, make_record, run_question
from agent.faults import FINISHED, failed_to_run
from agent.llm.client import OpenAILLM
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply
from agent.llm.scripted import ScriptedLLM
from agent.methods.context_budget import SLACK_TOKENS, ContextBudget, EstimateCounter, budget_for
from agent.methods.episode import load_example
from agent.methods.query_agent import AgentConfig, QueryAgent
from agent.methods.readi import Readi
from agent.methods.readi_table import TableReadi
from pyql.kb import KB
from pyql_sql import Table
from tests.fault_servers import FakeLLMServer, GoldResponder, Reply
from tests.shared_data import needs_shared, shared_path
from tests.rachel_script import CORRECT, QUESTION, env_for
from tests.test_faults_cli import demo_items, json_lines, pyql, stderr_of

DOLLY = [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]


@pytest.fixture(scope="module")
def kb() -> KB:
    return KB.open("oxigraph:demo")


def estimate(prompt: Any) -> int:
    """What the budget counts for a ScriptedLLM (no tokenizer to ask): the documented estimate."""
    return ContextBudget(None, 0, EstimateCounter()).count(prompt)


def run(kb: KB, context: int | None, mode: str = "completion") -> tuple[Any, ScriptedLLM]:
    llm = ScriptedLLM(CORRECT, config=LLMConfig(mode=mode, context_tokens=context))
    return QueryAgent(llm, AgentConfig(token_budget=None)).run(env_for(kb), QUESTION), llm


def context_for(limit: int) -> int:
    """The context that leaves ``limit`` tokens for the prompt (the reply's 256 and the slack kept)."""
    return limit + 256 + SLACK_TOKENS


def observations(prompt: str) -> dict[int, str]:
    return {int(n): text for n, text in re.findall(r"^Observation (\d+): (.*)$", prompt, flags=re.M)}


# ---------------------------------------------------------------------------
# Shortened, summarised, overflowed: QueryAgent


def test_a_prompt_over_the_budget_has_its_older_observations_shortened_first(kb: KB) -> None:
    whole_result, whole = run(kb, None)
    last_whole = whole.prompts[-1]
    limit = estimate(last_whole) - 60  # the last prompt is 60 tokens too long; the others fit
    result, llm = run(kb, context_for(limit))
    assert result.answers == whole_result.answers == DOLLY and result.error is None and result.status == FINISHED
    assert all(estimate(p) <= limit for p in llm.prompts)
    assert len(llm.prompts) == len(whole.prompts)
    for sent, full in zip(llm.prompts, whole.prompts):  # what fitted was not touched
        assert (sent == full) == (estimate(full) <= limit)
    last = llm.prompts[-1]
    assert last != last_whole and "[summarised]" not in last  # shortening was enough
    head = whole.prompts[0].rpartition("Thought 1:")[0]
    assert last.startswith(head)  # the task, the action docs, the one-shot example and the question, unchanged
    assert load_example("freebase") in last and f"Question: {QUESTION}" in last
    old, new = observations(last_whole[len(head):]), observations(last[len(head):])
    assert sorted(new) == sorted(old) == list(range(1, 9))
    assert new[8] == old[8]  # the current state: the last step's observation, whole
    assert last.endswith("Thought 9:")
    changed = [n for n in old if new[n] != old[n]]
    assert changed and changed == sorted(changed) and changed[0] == min(n for n in old if len(old[n]) > 160)  # oldest first
    for n in changed:  # the first line kept (cut), and what was left out said
        kept, cut = re.fullmatch(r"(.*) \[shortened: (\d+) chars\]", new[n]).groups()
        assert old[n].startswith(kept) and int(cut) == len(old[n]) - len(kept)
    for n in range(1, 9):  # every thought and action is still there
        assert f"Action {n}: " + CORRECT[n - 1].split(f"Action {n}: ")[1] in last
        assert f"Thought {n}: " + CORRECT[n - 1].split("\n")[0].strip() in last


def test_then_older_steps_are_summarised_and_the_current_state_stays(kb: KB) -> None:
    _, whole = run(kb, None)
    head = whole.prompts[0].rpartition("Thought 1:")[0]
    limit = estimate(head) + 560  # room for the head, the longest step and little more
    result, llm = run(kb, context_for(limit))
    assert result.error is None and result.answers == DOLLY
    assert all(estimate(p) <= limit for p in llm.prompts)
    last, last_whole = llm.prompts[-1], whole.prompts[-1]
    assert last.startswith(head) and "[summarised]" in last
    old, new = observations(last_whole[len(head):]), observations(last[len(head):])
    assert new[8] == old[8] and f"Thought 8: {CORRECT[7].split(chr(10))[0].strip()}" in last  # the last step whole
    history = last[len(head):]  # (the one-shot example has thoughts of its own)
    summarised = [n for n in new if f"Thought {n}:" not in history]  # a summarised step has its action, not its thought
    assert summarised and summarised == list(range(1, len(summarised) + 1))  # the oldest ones
    for n in summarised:
        assert f"Action {n}: " + CORRECT[n - 1].split(f"Action {n}: ")[1] in history
        assert len(new[n]) <= 80 + len("... [summarised]")
        assert new[n] == old[n] or new[n].endswith("[summarised]")


def test_a_chat_prompt_is_shortened_the_same_way(kb: KB) -> None:
    _, whole = run(kb, None, mode="chat")
    limit = estimate(whole.prompts[-1]) - 60
    result, llm = run(kb, context_for(limit), mode="chat")
    assert result.error is None and result.answers == DOLLY
    assert all(estimate(p) <= limit for p in llm.prompts)
    last, last_whole = llm.prompts[-1], whole.prompts[-1]
    assert last[:2] == last_whole[:2]  # the system message (task, docs, example) and the question
    assert last[-2:] == last_whole[-2:]  # the last step
    assert [m["role"] for m in last] == [m["role"] for m in last_whole]
    assert any("[shortened: " in m["content"] for m in last if m["role"] == "user")


def test_a_prompt_that_cannot_fit_is_context_overflow_not_a_failure_to_run(kb: KB) -> None:
    _, whole = run(kb, None)
    limit = estimate(whole.prompts[0]) - 1  # not even the head fits
    result, llm = run(kb, context_for(limit))
    assert llm.prompts == []  # nothing is sent that cannot fit
    assert result.status == FINISHED and not result.failed_to_run and not result.forced
    assert result.error.startswith(f"context_overflow: the prompt needs {estimate(whole.prompts[0])} tokens")
    assert f"room for {limit}" in result.error and "--context-tokens" in result.error
    assert result.answers == [] and result.error_json()["kind"] == "context_overflow"
    record = make_record({"id": "q", "question": QUESTION, "answers": ["m.0107j2dw"]}, result, llm, RunSettings())
    assert not failed_to_run(record) and record["metrics"]["f1"] == 0.0  # scored, as failed
    metrics = aggregate([record])
    assert (metrics.questions, metrics.failed_to_run, metrics.context_overflow) == (1, 0, 1)
    assert "| context overflow (the prompt did not fit the model's context; scored as failed) | 1 |" in metrics.table()


def test_an_overflow_later_in_the_episode_ends_it_with_the_steps_so_far(kb: KB) -> None:
    _, whole = run(kb, None)
    limit = estimate(whole.prompts[2])  # the head and two steps fit; the shortest third prompt does not
    result, llm = run(kb, context_for(limit))
    assert 3 <= len(llm.prompts) < len(CORRECT) and all(estimate(p) <= limit for p in llm.prompts)
    assert result.error.startswith("context_overflow:") and result.status == FINISHED
    assert len(result.steps) == len(llm.prompts) and not result.forced and result.answers == []


def test_the_agent_token_cap_applies_below_the_context(kb: KB) -> None:
    _, whole = run(kb, None)
    cap = estimate(whole.prompts[-1]) - 60
    llm = ScriptedLLM(CORRECT, config=LLMConfig(mode="completion", context_tokens=100_000))
    result = QueryAgent(llm, AgentConfig(token_budget=cap)).run(env_for(kb), QUESTION)
    assert result.answers == DOLLY and all(estimate(p) <= cap for p in llm.prompts)
    assert "[shortened: " in llm.prompts[-1]


def test_the_tools_modes_schemas_take_context_too(kb: KB) -> None:
    from agent.llm.replies import ToolCall
    from agent.llm.gbnf import StateVocabulary, state_tools
    from pyql.environment.actions import openai_tools

    first = [LLMReply("", tool_calls=[ToolCall("get_relation", {"entity_or_variable": "m.0crbvqz"})])]
    probe = ScriptedLLM(list(first), config=LLMConfig(mode="chat"))
    QueryAgent(probe, AgentConfig(action_mode="tools", max_steps=1, token_budget=None)).run(env_for(kb), QUESTION)
    env = env_for(kb)
    tools = state_tools(openai_tools(env.actions), env.actions, StateVocabulary.from_env(env))
    schemas = estimate(json.dumps(tools, ensure_ascii=False))
    need = estimate(probe.prompts[0]) + schemas  # the prompt and the schemas sent with it
    for room, sent in ((need, True), (need - 2, False)):
        llm = ScriptedLLM(list(first), config=LLMConfig(mode="chat", context_tokens=context_for(room)))
        result = QueryAgent(llm, AgentConfig(action_mode="tools", max_steps=1, token_budget=None)).run(env_for(kb), QUESTION)
        assert bool(llm.prompts) == sent and (result.error is None) == sent


# ---------------------------------------------------------------------------
# The server's refusal


def _refusal(n_ctx: int, prompt_tokens: int, max_tokens: int = 256) -> Reply:
    """llama-cpp-python's answer to a prompt longer than its context (its exact words)."""
    return Reply(400, {"error": {
        "message": f"This model's maximum context length is {n_ctx} tokens, however you requested "
                   f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in your prompt; {max_tokens} for the completion). "
                   "Please reduce your prompt; or completion length.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})


@pytest.mark.parametrize(
    ("reply", "limit", "needed"),
    [
        (_refusal(4096, 4197), 4096, 4197),
        # llama.cpp's server
        (Reply(400, {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                               "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}), 4096, 5000),
        # vLLM
        (Reply(400, {"object": "error", "message": "This model's maximum context length is 2048 tokens. However, you requested "
                     "2300 tokens (2044 in the messages, 256 in the completion). Please reduce the length of the messages or "
                     "completion.", "type": "BadRequestError", "param": None, "code": 400}), 2048, 2044),
    ],
)
def test_a_servers_context_length_error_is_context_overflow_and_not_retried(reply: Reply, limit: int, needed: int) -> None:
    with FakeLLMServer([reply]) as server:
        llm = OpenAILLM(LLMConfig(base_url=server.url, model="m", max_retries=3), sleep=lambda s: None)
        with pytest.raises(ContextOverflow) as caught:
            llm.complete("a long prompt")
    assert len(server.posts) == 1  # the same prompt would be refused again
    error = caught.value
    assert not isinstance(error, LLMError) and error.kind == "context_overflow" and error.source == "server"
    assert (error.limit, error.needed) == (limit, needed)
    assert server.url in str(error) and "\n" not in str(error)


def test_another_400_stays_an_llm_error() -> None:
    with FakeLLMServer([Reply(400, {"error": {"message": "model 'x' not found", "code": "model_not_found"}})]) as server:
        with pytest.raises(LLMError, match="model 'x' not found"):
            OpenAILLM(LLMConfig(base_url=server.url, model="x")).complete("q")


def test_the_budget_learns_the_servers_size_and_fits_the_retry(kb: KB) -> None:
    _, whole = run(kb, None)
    n_ctx = estimate(whole.prompts[-1]) + 256 - 40  # the server refuses the last prompt as the budget counts it
    refused = ContextOverflow("refused", needed=estimate(whole.prompts[-1]), limit=n_ctx, source="server")
    script: list[Any] = [*CORRECT[:-1], refused, CORRECT[-1]]
    llm = ScriptedLLM(script, config=LLMConfig(mode="completion"))
    result = QueryAgent(llm, AgentConfig(token_budget=None)).run(env_for(kb), QUESTION)
    assert result.error is None and result.answers == DOLLY
    assert llm.prompts[-2] == whole.prompts[-1]  # sent whole: the size was not known
    assert "[shortened: " in llm.prompts[-1] and estimate(llm.prompts[-1]) <= n_ctx - 256 - SLACK_TOKENS
    assert budget_for(llm).context_tokens == n_ctx


# ---------------------------------------------------------------------------
# Readi


def test_table_readi_cuts_the_items_of_its_qa_prompt_to_fit() -> None:
    rows = [[f"player {i}", str(1990 + i % 30), "x" * 40] for i in range(50)]
    table = Table.from_rows(["Player", "Year", "Notes"], rows, name="Players")
    path = 'Thought: I need players.\nChosen Headers: ["Player", "Year", "Notes"]\nConstrains: '
    whole = ScriptedLLM([path, "Answer: ['player 1']"], config=LLMConfig(mode="completion"))
    TableReadi(whole).run(table, "which player?")
    limit = estimate(whole.prompts[-1]) // 2
    llm = ScriptedLLM([path, "Answer: ['player 1']"], config=LLMConfig(mode="completion", context_tokens=context_for(limit)))
    result = TableReadi(llm).run(table, "which player?")
    assert result.error is None and result.answers == [{"value": "player 1", "label": None}]
    qa = llm.prompts[-1]
    assert estimate(qa) <= limit < estimate(whole.prompts[-1])
    kept = len(re.findall(r"^item \d+:", qa.split("Question: which player?")[1], flags=re.M))
    assert 0 < kept < 50 and f"(and {50 - kept} more items, left out: the model's context is full)" in qa
    assert qa.startswith(whole.prompts[-1].split("item 1:")[0])  # the instructions, the example and the question stay


def test_readi_whose_prompt_cannot_fit_is_context_overflow(kb: KB) -> None:
    llm = ScriptedLLM([], config=LLMConfig(mode="completion", context_tokens=300, max_tokens=64))
    result = Readi(llm).run(kb, "what languages are spoken in jamaica?", {"Jamaica": "m.03_r3"})
    assert llm.prompts == [] and result.status == FINISHED and result.error.startswith("context_overflow: the prompt needs ")
    assert result.error_json()["kind"] == "context_overflow" and "tokens" in result.error_json()["message"]
    assert result.llm_calls == 0 and result.steps[0].error == "context_overflow"


# ---------------------------------------------------------------------------
# Through the command line, with a server that refuses what is over its context


class LimitedServer:
    """A loopback LLM server with a context of ``n_ctx`` tokens (it counts 4 characters a token, and says so in
    its usage), refusing longer prompts as llama-cpp-python does; the rest is answered by the gold responder."""

    def __init__(self, items: list[dict[str, Any]], n_ctx: int) -> None:
        self.gold = GoldResponder(items)
        self.n_ctx = n_ctx
        self.refused: list[int] = []
        self.answered: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        if request["method"] == "GET":
            return self.gold(request)
        body = json.loads(request["body"])
        text = body.get("prompt") or "\n".join(m["content"] for m in body["messages"])
        tokens, max_tokens = math.ceil(len(text) / 4), int(body.get("max_tokens") or 256)
        if tokens >= self.n_ctx or tokens + max_tokens > self.n_ctx:
            with self.lock:
                self.refused.append(tokens)
            return _refusal(self.n_ctx, tokens, max_tokens)
        with self.lock:
            self.answered.append(tokens)
        reply = self.gold(request)
        answer = json.loads(reply.data())
        answer["usage"] = {"prompt_tokens": tokens, "completion_tokens": 5, "total_tokens": tokens + 5}
        return Reply(200, answer)


def _data(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def _sizes(items: list[dict[str, Any]], tmp_path: Path) -> list[int]:
    """The prompt sizes (server tokens) of the items' gold episodes when nothing is refused."""
    server = LimitedServer(items, n_ctx=10**6)
    with FakeLLMServer(server) as llm:
        done = pyql("eval", str(_data(tmp_path, items)), "--kb", "demo", "--out", str(tmp_path / "sizes.jsonl"),
                    "--base-url", llm.url, "--model", "fake")
    assert done.returncode == 0, stderr_of(done)
    return server.answered


@pytest.mark.cli
def test_eval_learns_the_servers_context_and_answers_within_it(tmp_path: Path) -> None:
    items = demo_items("q02")
    sizes = _sizes(items, tmp_path)
    n_ctx = max(sizes) + 256 - 100  # the last prompts of q02 are too long for this server, the first fit
    server = LimitedServer(items, n_ctx)
    out = tmp_path / "run.jsonl"
    with FakeLLMServer(server) as llm:
        done = pyql("eval", str(_data(tmp_path, items)), "--kb", "demo", "--out", str(out), "--base-url", llm.url, "--model", "fake")
    assert done.returncode == 0, stderr_of(done)
    assert len(server.refused) == 1  # refused once, then every prompt fitted what the refusal said
    assert all(t + 256 <= n_ctx for t in server.answered)
    (record,) = json_lines(out.read_bytes())
    assert (record["status"], record["error"], record["metrics"]["f1"]) == (FINISHED, None, 1.0)


@pytest.mark.cli
def test_eval_a_question_that_cannot_fit_is_scored_as_failed_counted_and_not_resumed(tmp_path: Path) -> None:
    items = demo_items("q01", "q03")
    server = LimitedServer(items, n_ctx=1500)  # the server would refuse the head of every prompt
    out = tmp_path / "run.jsonl"
    args = ["eval", str(_data(tmp_path, items)), "--kb", "demo", "--out", str(out), "--context-tokens", "1500"]
    with FakeLLMServer(server) as llm:
        first = pyql(*args, "--base-url", llm.url, "--model", "fake")
        posts = len(llm.posts)
        again = pyql(*args, "--base-url", llm.url, "--model", "fake", "--resume")
        assert len(llm.posts) == posts == 0  # nothing sent that cannot fit; nothing run again
    assert first.returncode == 0, stderr_of(first)  # not a service failure (that is exit 3)
    records = json_lines(out.read_bytes())
    assert [(r["id"], r["status"]) for r in records] == [("q01", FINISHED), ("q03", FINISHED)]
    for r in records:
        assert r["error"].startswith("context_overflow: the prompt needs ") and r["metrics"]["f1"] == 0.0
    summary = json.loads((tmp_path / "run.summary.json").read_text(encoding="utf-8"))
    assert (summary["answered"], summary["failed_to_run"], summary["metrics"]["context_overflow"]) == (2, 0, 2)
    assert "| context overflow (the prompt did not fit the model's context; scored as failed) | 2 |" in first.stdout.decode()
    assert again.returncode == 0 and "0 answered now, 2 already in" in stderr_of(again)


@pytest.mark.cli
def test_ask_json_says_context_overflow_with_exit_0(tmp_path: Path) -> None:
    items = demo_items("q01")
    with FakeLLMServer(LimitedServer(items, n_ctx=900)) as llm:
        done = pyql("ask", items[0]["question"], "--kb", "demo", "--entities", json.dumps(items[0]["entities"]), "--json",
                    "--base-url", llm.url, "--model", "fake", "--context-tokens", "900")
        assert llm.posts == []
    assert done.returncode == 0, stderr_of(done)
    last = json_lines(done.stdout)[-1]
    assert last["status"] == FINISHED and last["error"]["kind"] == "context_overflow"
    assert "room for" in last["error"]["message"]


@pytest.mark.cli
@pytest.mark.parametrize("value", ["0", "-5", "many"])
def test_a_bad_context_tokens_is_a_usage_error(value: str) -> None:
    done = pyql("ask", "q?", "--kb", "demo", "--context-tokens", value)
    assert done.returncode == 2 and "--context-tokens" in stderr_of(done)


@pytest.mark.cli
def test_a_context_no_larger_than_the_reply_is_refused() -> None:
    done = pyql("ask", "q?", "--kb", "demo", "--base-url", "http://127.0.0.1:9/v1", "--context-tokens", "200", "--max-tokens", "256")
    assert done.returncode == 2, stderr_of(done)
    assert "must be larger than the reply's max_tokens (256)" in stderr_of(done)


# ---------------------------------------------------------------------------
# The bundled local model on the long table question that overflowed


@pytest.fixture(scope="module")
def local_server():
    from agent.llm.local import INSTALL_HINT, LocalServer, missing_local_packages

    missing = missing_local_packages()
    if missing:
        if os.environ.get("PYQL_REQUIRE_LLM", "").strip() not in ("", "0"):
            pytest.fail(f"PYQL_REQUIRE_LLM is set but {INSTALL_HINT} (missing: {', '.join(missing)})", pytrace=False)
        pytest.skip(f"{INSTALL_HINT} (missing: {', '.join(missing)})")
    with LocalServer() as server:
        yield server


@pytest.mark.slow  # twelve steps of the real model on a 4,096-token context: minutes on 2 cores (CI runs the slow tier)
@pytest.mark.llm
@needs_shared("dbbench")
def test_the_local_model_does_not_overflow_on_dbbench_dev_1(local_server) -> None:
    """dbbench dev-1 failed with `maximum context length is 4096 tokens, however you requested 4453` (exit 3)."""
    from agent.evaluation.datasets import load_dataset

    path = shared_path("dbbench")
    (item,) = [i for i in load_dataset(path, limit=2).items if i["id"] == "dev-1"]
    llm = OpenAILLM(local_server.config())
    budget = budget_for(llm)
    assert budget.context_tokens == local_server.n_ctx and type(budget.counter).__name__ == "LocalTokenizer"
    record = run_question(item, llm, RunSettings(action_mode="text", max_steps=12, trace_prompts="full"))
    assert record["status"] == FINISHED and not (record["error"] or "").startswith(("context_overflow", "llm_error")), record["error"]
    asked = [s for s in record["steps"] if s["prompt"]]
    assert asked and record["tokens_in"] > 0
    for s in asked:  # counted as the server counts, and within its context with the reply's tokens
        assert abs(budget.count(s["prompt"]) - s["tokens_in"]) <= 1
        assert s["tokens_in"] + 256 <= local_server.n_ctx
