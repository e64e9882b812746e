"""Integration test against a real OpenAI-compatible HTTP server: llama-cpp-python with Gemma 3 270M.

Marked ``llm``. Skipped (with the install hint) when llama-cpp-python's server
or the model package is missing, unless ``PYQL_REQUIRE_LLM=1`` (as in
``.ci/run``, which installs the ``local`` extra), in which case it fails.

The prompt is a one-shot completion in the paper's Thought/Action/Observation
format, with observations produced by the real environment on the demo KB.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent.llm import LLMError, OpenAILLM, complete_action
from pyql.action_parser import extract_action
from pyql.actions import render_docs
from pyql.sparql_actions import SparqlActions

pytestmark = pytest.mark.llm

DEMO = Path(__file__).resolve().parent.parent / "pyql" / "data" / "demo_questions.jsonl"


def _require_local() -> None:
    from agent.local import INSTALL_HINT, missing_local_packages

    missing = missing_local_packages()
    if missing:
        if os.environ.get("PYQL_REQUIRE_LLM", "").strip() not in ("", "0"):
            pytest.fail(f"PYQL_REQUIRE_LLM is set but {INSTALL_HINT} (missing: {', '.join(missing)})", pytrace=False)
        pytest.skip(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


@pytest.fixture(scope="module")
def server():
    _require_local()
    from agent.local import LocalServer, model_path

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


def one_shot_prompt() -> tuple[str, list[str]]:
    """A one-shot prompt: task, docs, a solved example (q01), then q03 after its first step.

    Observations come from the real environment on the demo KB. Returns the
    prompt (ending with ``Thought 2:``) and the gold action of step 2.
    """
    from pyql.environment import SparqlEnvironment
    from pyql.kb import KB

    qs = _questions()
    kb = KB.open("demo", "freebase")
    thoughts = {
        "get_relation": "I need the relations of {arg} first.",
        "add_fact": "The relation {rel} gives what the question asks for.",
        "set_answer": "{arg} is the answer.",
        "execute": "Run the query to get the answer.",
    }

    def steps(q: dict, count: int) -> list[str]:
        env = SparqlEnvironment(kb, question=q["question"], entities=q["entities"])
        out = []
        for i, line in enumerate(q["actions"][:count], 1):
            call = extract_action(line)
            arg = call.raw_args[0] if call.args else ""
            rel = call.raw_args[1] if len(call.args) > 1 else ""
            record = env.step(line)
            out.append(f"Thought {i}: {thoughts[call.name].format(arg=arg, rel=rel)}")
            out.append(f"Action {i}: {line}")
            out.append(f"Observation {i}: {record.observation}")
        return out

    example, new = qs["q01"], qs["q03"]
    parts = [
        "Build a SPARQL query step by step to answer the question. At each step write one Thought and one Action.",
        "",
        render_docs(SparqlActions(), "prompt").strip(),
        "",
        "Example:",
        f"Question: {example['question']}",
        f"Entities: {json.dumps(example['entities'])}",
        *steps(example, len(example["actions"])),
        "",
        "Now the new question.",
        f"Question: {new['question']}",
        f"Entities: {json.dumps(new['entities'])}",
        *steps(new, 1),
        "Thought 2:",
    ]
    return "\n".join(parts), new["actions"][1]


def test_server_answers_on_loopback(server) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.running and server.startup_seconds < 90


def test_one_shot_completion_gives_an_action(server) -> None:
    prompt, gold = one_shot_prompt()
    llm = OpenAILLM(server.config(max_tokens=96, stop=["\nObservation", "\nQuestion"]))
    reply = llm.complete(prompt)
    text = "Thought 2:" + reply.text
    print(f"\n[local llm] {reply.latency:.2f} s, {reply.usage_in} tokens in, {reply.usage_out} out: {reply.text!r}")
    call = extract_action(text)  # the reply parses as one action
    assert call.name in SparqlActions().names
    assert reply.usage_in > 500 and reply.usage_out > 0 and reply.attempts == 1
    assert reply.latency < 45
    # Gemma 3 270M at temperature 0 writes the gold step here; report rather than fail if it drifts.
    if call != extract_action(gold):
        pytest.xfail(f"the small model's action {call.text!r} differs from the gold {gold!r}")


def test_grammar_constrained_action_is_valid(server) -> None:
    prompt, _ = one_shot_prompt()
    actions = SparqlActions()
    llm = OpenAILLM(server.config(max_tokens=96))
    text, reply = complete_action(llm, prompt, actions, mode="grammar", step=2, resume="thought")
    print(f"\n[local llm, grammar] {reply.latency:.2f} s: {reply.text!r}")
    call = extract_action("Thought 2:" + text)
    assert call.name in actions.names
    spec = actions.spec(call.name)
    assert spec.min_args <= len(call.args) <= spec.max_args
    assert call.step == 2


def test_bad_request_is_not_retried(server) -> None:
    llm = OpenAILLM(server.config(max_tokens=8))
    with pytest.raises(LLMError) as info:
        llm.complete("Action 1:", grammar='root ::= "unclosed')
    assert info.value.attempts == 1
