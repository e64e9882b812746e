"""The search strategies with the bundled model (Gemma 3 270M behind the local llama.cpp server) on a demo question,
through ``pyql eval`` in process: ``beam`` (scored by the model's likelihood in process), ``vote`` (seeded samples of
greedy in choose mode) and ``generate-execute`` (programs the base model writes).

What these check is the strategies' run over a real model and server (the calls, their traces, the scores), not the
model's skill; ``docs/results.md`` has the measured figures.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from pyql.cli import build_parser
from tests.test_agent_local import local_server  # noqa: F401 (the module's server)
from tests.test_beam import without_times
from tests.test_eval import DEMO

pytestmark = pytest.mark.llm


def run_first_question(tmp_path: Path, server: Any, *flags: str, max_tokens: int = 8) -> dict[str, Any]:
    from agent.llm.client import OpenAILLM

    out = tmp_path / "run.jsonl"
    args = build_parser().parse_args(["eval", str(DEMO), "--kb", "oxigraph:demo", "--limit", "1", "--out", str(out), *flags])
    llm = OpenAILLM(server.config(max_tokens=max_tokens))
    assert args.func(args, io.StringIO(), llm=llm, progress=io.StringIO()) == 0
    record = json.loads(out.read_text().splitlines()[0])
    assert record["status"] == "finished" and record["error"] is None
    assert record["llm_calls"] == llm.meter.calls > 0
    return record


def test_beam_with_the_bundled_model_scores_by_the_policys_order(tmp_path: Path, local_server: Any) -> None:  # noqa: F811
    record = run_first_question(tmp_path, local_server, "--method", "beam", "--beam-width", "2", "--max-steps", "7")
    assert record["settings"]["action_mode"] == "choose"
    beam = record["extra"]["beam"]
    assert beam["scoring"] == "policy" and beam["answer"] is not None
    steps = record["steps"]
    assert sum(s["scoring_requests"] for s in steps) > 0  # the policy scored the first facts in process
    assert sum(1 for s in steps if s["prompt_sha256"]) == record["llm_calls"]  # every call traced once
    assert record["metrics"]["f1"] == 1.0  # q01, as greedy answers it with this model


def test_vote_with_the_bundled_model_samples_with_seeds(tmp_path: Path, local_server: Any) -> None:  # noqa: F811
    record = run_first_question(tmp_path, local_server, "--method", "vote", "--samples", "2", "--max-steps", "7")
    vote = record["extra"]["vote"]
    assert vote["seeds"] == [0, 1] and vote["of"] == "greedy" and sum(v["count"] for v in vote["votes"]) == 2
    assert sum(1 for s in record["steps"] if s["parent"] is None) >= 2  # a branch per sample (each with its looks)
    assert record["answers"]


def test_generate_execute_with_the_bundled_model_traces_each_program(tmp_path: Path, local_server: Any) -> None:  # noqa: F811
    record = run_first_question(tmp_path, local_server, "--method", "generate-execute", "--programs", "2", max_tokens=160)
    extra = record["extra"]["generate_execute"]
    assert record["llm_calls"] == extra["written"] >= 1
    steps = record["steps"]
    programs = [s for s in steps if s["prompt_sha256"]]
    assert len(programs) == extra["written"] and all(s["parent"] == 1 for s in programs)
    if extra["answered_by"] is None:  # the base model copies its example's add_max: each program says why it failed
        assert all(any(t["pruned"] for t in steps[steps.index(p):]) for p in programs)


def test_a_beam_recorded_with_no_llm_flags_runs_as_unrecorded_and_replays_with_none(
    tmp_path: Path, local_server: Any, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    """With no LLM configured the bundled model is started; ``--record`` must not change how the run asks it (the
    recorder once took the unconfigured settings: chat mode, no context, a beam scored by log-probabilities the
    model does not give), and ``--replay`` with no flags must ask what the recorded run asked."""
    import contextlib

    from agent import cli as agent_cli
    from agent.llm.client import OpenAILLM
    from agent.llm.local import _local_settings

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL"):
        monkeypatch.delenv(name, raising=False)

    @contextlib.contextmanager
    def started(config: Any, **_: Any) -> Any:  # what configured_llm gives when nothing is configured
        yield OpenAILLM(local_server.config(**_local_settings(config, None)))

    monkeypatch.setattr(agent_cli, "configured_llm", started)

    def run(name: str, *more: str) -> dict[str, Any]:
        out = tmp_path / f"{name}.jsonl"
        args = build_parser().parse_args(["eval", str(DEMO), "--kb", "oxigraph:demo", "--limit", "1", "--out", str(out),
                                          "--max-tokens", "8", "--method", "beam", "--beam-width", "2", "--max-steps", "7",
                                          *more])
        assert args.func(args, io.StringIO(), progress=io.StringIO()) == 0
        return json.loads(out.read_text().splitlines()[0])

    plain = run("plain")
    live = run("live", "--record", str(tmp_path / "rec"))
    again = run("again", "--replay", str(tmp_path / "rec"))
    assert plain["extra"]["beam"]["scoring"] == live["extra"]["beam"]["scoring"] == "policy"
    assert plain["settings"]["action_mode"] == live["settings"]["action_mode"] == "choose"
    assert [s["prompt_sha256"] for s in plain["steps"]] == [s["prompt_sha256"] for s in live["steps"]]
    assert [s["action"] for s in plain["steps"]] == [s["action"] for s in live["steps"]]
    assert live["recording"]["mode"] == "record" and again["recording"]["mode"] == "replay"
    assert without_times(live) == without_times(again)
