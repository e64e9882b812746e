"""LLM replies that are malformed, slow or huge, through the command line (issue 26, items 2, 4, 7, 8, 10).

A loopback OpenAI-compatible server (:mod:`tests.fault_servers`) answers
``content: null``, trickles its body, sends megabytes, or sends tool calls
whose arguments are not JSON; ``pyql ask`` and ``pyql eval`` run as
subprocesses. What a user relies on: a reply the service failed to give is
``llm_error`` → ``failed_to_run`` (never scored), ``--llm-timeout`` bounds
the whole request, nothing unbounded reaches the prompt or the run file,
and every message says what happened and where.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from agent.faults import FAILED_TO_RUN, FINISHED
from agent.methods.episode import RECORD_TEXT_LIMIT
from pyql.cli import EXIT_OK, EXIT_SERVICE
from tests.fault_servers import (
    FakeLLMServer,
    GoldResponder,
    Reply,
    chat_body,
    chat_null_content,
    chat_tool_call,
    huge_body,
    refused_port,
    slow_body,
)
from tests.test_faults_cli import RACHEL, demo_items, json_lines, one_line, pyql, stderr_of

pytestmark = pytest.mark.cli  # every test runs pyql ask or eval against a fake LLM server

QUESTION = "what category is tropical storm rachel?"
SERVE_HINT = "`pyql llm serve`"


def ask(llm_url: str, *flags: str) -> tuple[Any, list[dict[str, Any]], str]:
    """``pyql ask --json`` on the demo KB: the process, its JSON lines, its (one-line, traceback-free) stderr."""
    result = pyql("ask", QUESTION, "--kb", "demo", "--entities", RACHEL, "--json", "--base-url", llm_url, "--model", "fake", *flags)
    stderr = stderr_of(result)
    return result, json_lines(result.stdout), stderr


# ---------------------------------------------------------------------------
# Item 2: content null is a malformed reply, in every mode


@pytest.mark.parametrize("mode", ["text", "tools", "grammar", "choose", "readi"])
def test_content_null_is_retried_then_failed_to_run(mode: str, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    flags = ["--method", "readi"] if mode == "readi" else ["--action-mode", mode]
    with FakeLLMServer([Reply(200, chat_null_content())]) as llm:
        result, lines, stderr = ask(llm.url, "--max-retries", "1", "--out", str(out), *flags)
        posts = len(llm.posts)
    assert result.returncode == EXIT_SERVICE, stderr
    assert posts == 2  # the malformed reply was retried once, then the question stopped
    final = lines[-1]
    assert final["status"] == FAILED_TO_RUN and final["answers"] == []
    assert final["error"]["kind"] == "llm_error"
    message = final["error"]["message"]
    assert "content is null and that has no tool call (a malformed reply)" in message and llm.url in message
    assert "ChatCompletion(" not in message  # the body as JSON, never a Python repr
    line = one_line(stderr)
    assert line.startswith(f"pyql ask: the question failed to run: the LLM at {llm.url} failed:")
    assert SERVE_HINT not in line  # the server answered: no hint to start one
    record = json_lines(out.read_bytes())[-1]
    assert record["status"] == FAILED_TO_RUN and record["metrics"] == {}
    assert record["error"].startswith("llm_error: LLM request failed after 2 attempts (1 retries) to " + llm.url)


def test_eval_stops_on_content_null_naming_the_url_and_scores_nothing(tmp_path: Path) -> None:
    items = demo_items("q01", "q03", "q24")
    data, out = tmp_path / "data.jsonl", tmp_path / "run.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    for method in ("queryagent", "readi"):
        with FakeLLMServer([Reply(200, chat_null_content())]) as llm:
            result = pyql("eval", str(data), "--kb", "demo", "--out", str(out), "--base-url", llm.url, "--model", "fake",
                          "--method", method, "--max-retries", "0", "--max-infra-failures", "2")
        stderr = stderr_of(result)
        assert result.returncode == EXIT_SERVICE, stderr
        stopped = stderr.strip().splitlines()[-1]
        assert stopped.startswith("pyql eval: stopped: 2 questions in a row failed to run (last: q03: llm_error: ")
        assert f"to {llm.url}: the LLM server at {llm.url} answered with a choice" in stopped  # names the service
        records = json_lines(out.read_bytes())[-2:]
        assert [(r["id"], r["status"], r["metrics"]) for r in records] == [("q01", FAILED_TO_RUN, {}), ("q03", FAILED_TO_RUN, {})]
        assert all(r["error"] != "llm_error" and "malformed reply" in r["error"] for r in records)  # Readi too: the real message
        summary = json.loads((tmp_path / "run.summary.json").read_text(encoding="utf-8"))
        assert summary["metrics"]["questions"] == 0 and summary["answered"] == 0
        out.unlink()


@pytest.mark.parametrize("mode", ["text", "tools", "grammar"])
def test_empty_replies_are_the_model_s_and_end_at_max_repeats(mode: str, tmp_path: Path) -> None:
    """An empty string is a (useless) reply of the model: no_action steps, ended by --max-repeats, scored."""
    out = tmp_path / "run.jsonl"
    with FakeLLMServer([Reply(200, chat_body(""))]) as llm:
        result, lines, stderr = ask(llm.url, "--action-mode", mode, "--max-repeats", "2", "--out", str(out))
        posts = len(llm.posts)
    assert result.returncode == EXIT_OK, stderr
    assert posts == 3  # the first no_action, then 2 repeats: the line stops (was: 12 calls)
    record = json_lines(out.read_bytes())[-1]
    assert record["status"] == FINISHED and (record["stopped"], record["stopped_by"]) == ("repeated_mistake", "no_action")
    assert [s["error"] for s in record["steps"][:3]] == ["no_action"] * 3


# ---------------------------------------------------------------------------
# Item 4: --llm-timeout bounds the whole request


def test_a_slow_body_is_cut_at_the_llm_timeout() -> None:
    with FakeLLMServer([slow_body(per_byte=1 / 40)]) as llm:  # the body would take about 8 s
        started = time.monotonic()
        result, lines, stderr = ask(llm.url, "--llm-timeout", "2", "--max-retries", "0")
        wall = time.monotonic() - started
        posts = len(llm.posts)
    assert result.returncode == EXIT_SERVICE, stderr
    final = lines[-1]
    assert final["status"] == FAILED_TO_RUN and posts == 1
    assert "timed out: no complete reply within 2 s (--llm-timeout 2)" in final["error"]["message"]
    assert final["seconds"] < 2.6, final  # the question's own clock: the time-out and a little
    assert wall < 2 + 20, wall  # the process: start-up (imports, KB) and the time-out
    assert SERVE_HINT in one_line(stderr)  # a server on loopback that did not answer in time


def test_a_slow_body_within_the_timeout_is_read(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    action = "get_relation(m.0crbvqz)"
    with FakeLLMServer([slow_body(f"Thought 1: look.\nAction 1: {action}", per_byte=1 / 400)]) as llm:  # about 1 s
        result, lines, stderr = ask(llm.url, "--llm-timeout", "5", "--max-retries", "0", "--max-steps", "1", "--out", str(out))
    assert result.returncode == EXIT_OK, stderr
    record = json_lines(out.read_bytes())[-1]
    assert record["status"] == FINISHED and record["steps"][0]["action"] == action and record["steps"][0]["ok"]


# ---------------------------------------------------------------------------
# Item 7: unbounded replies


def test_a_huge_body_is_a_malformed_reply_read_only_up_to_the_cap() -> None:
    with FakeLLMServer([huge_body(50_000_000)]) as llm:
        result, lines, stderr = ask(llm.url, "--max-retries", "0")
        sent = llm.sent[0]
    assert result.returncode == EXIT_SERVICE, stderr
    message = lines[-1]["error"]["message"]
    assert "sent a body of more than 1048576 bytes (a malformed reply" in message
    assert sent < 25_000_000, sent  # the client stopped reading near the cap (loopback socket buffers aside)


@pytest.mark.parametrize(("size", "flags", "limit"), [(300_000, [], 65536), (30_000, ["--max-reply-chars", "1000"], 1000)])
def test_a_long_reply_is_cut_before_the_prompt_and_the_run_file(size: int, flags: list[str], limit: int, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with FakeLLMServer([huge_body(size)]) as llm:
        result, lines, stderr = ask(llm.url, "--out", str(out), "--max-steps", "2", *flags)
        prompts = [json.loads(p["body"]) for p in llm.posts]
    assert result.returncode == EXIT_OK, stderr
    record = json_lines(out.read_bytes())[-1]
    reply = record["steps"][0]["reply"]
    assert f"[cut: the reply had {size + len('Thought 1: ') + len(chr(10) + 'Action 1: execute()')} characters]" in reply
    assert len(reply) < limit + 100
    assert max(len(out.read_bytes().splitlines()[-1]), *(len(json.dumps(p)) for p in prompts)) < 8 * limit + 40_000


def test_a_one_megabyte_literal_answer_is_capped_in_the_run_file(tmp_path: Path) -> None:
    big = "word " * 199_999 + "word"  # 1 MB
    kb = tmp_path / "kb.nt"
    kb.write_text(
        f'<http://rdf.freebase.com/ns/m.0big> <http://rdf.freebase.com/ns/common.topic.description> "{big}" .\n'
        '<http://rdf.freebase.com/ns/m.0big> <http://rdf.freebase.com/ns/type.object.name> "Big"@en .\n',
        encoding="utf-8",
    )
    item = {"id": "big", "question": "what is the description of big?", "entities": {"Big": "m.0big"}, "answers": [big],
            "actions": ["get_relation(m.0big)", "add_fact(m.0big, common.topic.description, ?d)", "execute()"]}
    data, out = tmp_path / "data.jsonl", tmp_path / "run.jsonl"
    data.write_text(json.dumps(item) + "\n", encoding="utf-8")
    with FakeLLMServer(GoldResponder([item])) as llm:
        result = pyql("eval", str(data), "--kb", str(kb), "--out", str(out), "--base-url", llm.url, "--model", "fake")
    assert result.returncode == EXIT_OK, stderr_of(result)
    line = out.read_bytes().splitlines()[-1]
    record = json_lines(line)[-1]
    assert record["status"] == FINISHED and record["metrics"]["f1"] == 1.0  # scored on the whole answer
    assert record["answers"][0]["value"].endswith(f"... [cut: {len(big)} characters in all]")
    # the answer, the observations, the query and the gold are capped (before: 1 MB each; the gold was kept whole)
    assert record["gold"][0] == record["answers"][0]["value"]  # cut the same way: still equal
    assert len(line) < 4 * RECORD_TEXT_LIMIT + 50_000
    summary = json.loads(out.with_suffix(".summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["f1"] == 1.0  # recomputed from the file: the capped answer still matches the capped gold


def test_every_field_a_data_set_item_brings_is_capped_in_run_file_and_summary(tmp_path: Path) -> None:
    """A huge question, gold answer, entity mention, gold action and kind: each cut with its length said, never silently."""
    huge = "x" * 1_000_000
    item = {**demo_items("q01")[0], "question": "what is " + huge + "?", "kind": "kind " + huge,
            "actions": [*demo_items("q01")[0]["actions"], "# " + huge]}
    item["answers"] = [*item["answers"], "gold " + huge]
    item["entities"] = {**item["entities"], "mention " + huge: "m.0crbvqz"}
    data, out = tmp_path / "data.jsonl", tmp_path / "run.jsonl"
    data.write_text(json.dumps(item) + "\n", encoding="utf-8")
    with FakeLLMServer(GoldResponder(demo_items("q01"))) as llm:
        result = pyql("eval", str(data), "--kb", "demo", "--out", str(out), "--base-url", llm.url, "--model", "fake", "--by", "type")
    assert result.returncode == EXIT_OK, stderr_of(result)
    line = out.read_bytes().splitlines()[-1]
    assert len(line) < 8 * RECORD_TEXT_LIMIT + 60_000, len(line)  # five item fields, each cut to 64 KB; before: over 5 MB
    record = json_lines(line)[-1]
    noted = [record["question"], record["gold"][-1], record["kind"], record["gold_actions"][-1],
             next(k for k in record["entities"] if k.startswith("mention "))]
    lengths = [len(item["question"]), len(item["answers"][-1]), len(item["kind"]), len(item["actions"][-1]), 1_000_008]
    for text, length in zip(noted, lengths):
        assert text.endswith(f"... [cut: {length} characters in all]"), text[-80:]
        assert len(text) < RECORD_TEXT_LIMIT + 60
    assert record["id"] == item["id"]
    summary_bytes = out.with_suffix(".summary.json").read_bytes()
    assert len(summary_bytes) < 4 * RECORD_TEXT_LIMIT + 60_000, len(summary_bytes)
    assert len(out.with_suffix(".summary.md").read_bytes()) < 4 * RECORD_TEXT_LIMIT + 60_000
    assert len(result.stdout) < 4 * RECORD_TEXT_LIMIT + 60_000  # the --by type table names the capped kind


# ---------------------------------------------------------------------------
# Item 8: tool calls whose arguments are not JSON


def test_tool_arguments_that_are_not_json_are_said_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with FakeLLMServer([Reply(200, chat_tool_call("get_relation", "{entity: m.0crbvqz"))]) as llm:
        result, lines, stderr = ask(llm.url, "--action-mode", "tools", "--max-repeats", "2", "--out", str(out))
        posts = len(llm.posts)
    assert result.returncode == EXIT_OK, stderr
    record = json_lines(out.read_bytes())[-1]
    first = record["steps"][0]
    assert first["error"] == "tool_arguments_not_json" and not first["ok"]
    assert "were not JSON (arguments are not a JSON object: Expecting property name" in first["observation"]
    assert "{entity: m.0crbvqz" in first["observation"] and '"entity_or_variable"' in first["observation"]
    assert "should have 1 parameter" not in first["observation"]
    assert first["action"] == "get_relation({entity: m.0crbvqz)" and "{entity: m.0crbvqz" in first["reply"]  # kept as sent
    assert posts == 3 and record["stopped_by"] == "tool_arguments_not_json"
    assert first["kb_queries"] == 0  # nothing was run


def test_a_tool_call_in_text_mode_is_read_as_text(tmp_path: Path) -> None:
    """No tools were sent: a tool call the server sends anyway is the reply's text, parsed as any text."""
    out = tmp_path / "run.jsonl"
    with FakeLLMServer([Reply(200, chat_tool_call("get_relation", "{entity: m.0crbvqz"))]) as llm:
        result, lines, stderr = ask(llm.url, "--action-mode", "text", "--max-repeats", "1", "--out", str(out))
    assert result.returncode == EXIT_OK, stderr
    first = json_lines(out.read_bytes())[-1]["steps"][0]
    assert first["error"] != "tool_arguments_not_json" and not first["ok"]  # the parser's error, as for written text
    assert "get_relation({entity: m.0crbvqz)" in first["reply"]


# ---------------------------------------------------------------------------
# Item 10: messages


def test_the_serve_hint_only_when_the_server_did_not_answer() -> None:
    with FakeLLMServer([Reply(429, {"error": {"message": "Rate limit reached"}})]) as llm:
        _, answered, stderr = ask(llm.url, "--max-retries", "0")
    assert "429" in answered[-1]["error"]["message"] and SERVE_HINT not in one_line(stderr)
    url = f"http://127.0.0.1:{refused_port()}/v1"
    result, refused, stderr = ask(url, "--max-retries", "0")
    assert result.returncode == EXIT_SERVICE
    assert SERVE_HINT in refused[-1]["error"]["message"] and SERVE_HINT in one_line(stderr) and url in one_line(stderr)


def test_no_choice_is_said_as_json() -> None:
    empty = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []}
    with FakeLLMServer([Reply(200, empty)]) as llm:
        result, lines, stderr = ask(llm.url, "--max-retries", "0")
    message = lines[-1]["error"]["message"]
    assert result.returncode == EXIT_SERVICE and "answered with no choice (a malformed reply)" in message
    assert '"choices": []' in message and "ChatCompletion(" not in message and "choices=[]" not in message
