"""The ``vote`` strategy (self-consistency): samples of another strategy, each with its own seed, their answers voted;
through ``pyql eval`` (in process and over HTTP), its options as flags, its budget and a replay byte for byte.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.llm.replies import LLMReply, Sampling
from agent.llm.scripted import ScriptedLLM
from agent.methods.config import AgentConfig
from agent.methods.strategies.vote import solve_vote
from pyql.cli import main
from tests.fault_servers import FakeLLMServer, GoldResponder
from tests.test_beam import run_eval, without_times
from tests.test_eval import DEMO, ROOT, GoldLLM, cli_env, demo_items
from tests.demo import DemoEnv


class SeededGold(GoldLLM):
    """The gold action of each step, except for the samples whose seed is in ``astray``: their fact names another
    relation of the same entity (a wrong answer, still one that runs)."""

    def __init__(self, items: list[dict[str, Any]], astray: set[int], **kwargs: Any) -> None:
        super().__init__(items, **kwargs)
        self.astray = astray
        self.seeds: list[int | None] = []

    def complete(self, prompt: Any, *, stop: Any = None, tools: Any = None, grammar: Any = None,
                 sampling: Sampling | None = None) -> LLMReply:
        self.seeds.append(sampling.seed if sampling is not None else None)
        reply = super().complete(prompt, stop=stop, tools=tools, grammar=grammar)
        if sampling is not None and sampling.seed in self.astray and "add_fact(" in reply.text:
            reply.text = reply.text.replace("meteorology.tropical_cyclone.category", "meteorology.tropical_cyclone.formed")
            reply.text = reply.text.replace("location.country.languages_spoken", "location.country.official_language")
        return reply


def test_vote_through_pyql_eval_gives_the_majority_and_a_branch_per_sample(tmp_path: Path) -> None:
    items = demo_items(1)
    llm = SeededGold(items, astray={1})
    records = run_eval(tmp_path, "vote", llm, "--method", "vote", "--samples", "3", "--action-mode", "text", limit=1)
    record = records[0]
    assert record["method"] == "vote" and record["settings"]["options"] == {"samples": 3}
    assert record["metrics"]["f1"] == 1.0
    votes = record["extra"]["vote"]
    assert [(v["count"], v["samples"]) for v in votes["votes"]] == [(2, [1, 3]), (1, [2])]
    assert votes["seeds"] == [0, 1, 2] and votes["chosen"] == 1 and votes["of"] == "greedy"
    steps = record["steps"]
    roots = [i for i, s in enumerate(steps, 1) if s["parent"] is None]
    assert len(roots) == 3  # one branch per sample
    second = steps[roots[1] - 1: roots[2] - 1]
    assert second[-1]["pruned"] == "outvoted: 1 of 3 samples answered this, 2 the chosen answer"
    assert all(s["pruned"] is None for s in steps[: roots[1] - 1])
    assert record["llm_calls"] == len(llm.seeds) == 12 and sorted(set(llm.seeds)) == [0, 1, 2]


def test_a_tie_goes_to_the_answer_given_first(demo_env: DemoEnv) -> None:
    env = demo_env(entities={"Tropical Storm Rachel": "m.0crbvqz"})
    formed = ["Action 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)", "Action 2: execute()"]
    category = ["Action 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", "Action 2: execute()"]
    result = solve_vote(ScriptedLLM(formed + category), env, "when did rachel form?", AgentConfig(feedback="raw"), samples=2)
    assert result.extra["vote"]["chosen"] == 1 and [v["count"] for v in result.extra["vote"]["votes"]] == [1, 1]
    assert "formed" in result.query


def test_a_sample_without_answer_votes_only_when_none_answered(demo_env: DemoEnv) -> None:
    env = demo_env(entities={"Tropical Storm Rachel": "m.0crbvqz"})
    config = AgentConfig(feedback="raw", max_steps=1)  # the step limit forces an answer after one step
    script = ["Action 1: execute()", "Action 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", "?c"]
    result = solve_vote(ScriptedLLM(script), env, "what category is rachel?", config, samples=2)
    assert [a["label"] for a in result.answers] == ["Tropical storm (SSHS)"]
    assert result.extra["vote"]["votes"] == [{"answers": ["m.05f4r3k"], "count": 1, "samples": [2]}]
    assert result.extra["vote"]["chosen"] == 2
    nothing = solve_vote(ScriptedLLM(["Action 1: execute()"] * 2), env, "q?", config, samples=2)
    assert nothing.answers == [] and nothing.extra["vote"]["votes"][0]["count"] == 2


def test_its_options_are_flags_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--method", "vote"]
    for flag, value, said in (("--samples", "0", "--samples must be a whole number from 1 to 64, got '0'"),
                              ("--vote-of", "vote", "--vote-of must be one of greedy, queryagent, readi, beam"),
                              ("--vote-temperature", "5", "--vote-temperature must be a number from 0.05 to 2")):
        out = io.StringIO()
        assert main([*base, flag, value], out=out) == 2
        assert said in out.getvalue() + capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


def test_vote_of_an_alias_is_recorded_as_its_strategy(tmp_path: Path) -> None:
    records = run_eval(tmp_path, "alias", SeededGold(demo_items(1), astray=set()), "--method", "vote", "--samples", "2",
                       "--vote-of", "queryagent", "--action-mode", "text", limit=1)
    assert records[0]["settings"]["options"] == {"samples": 2, "vote_of": "greedy"} and records[0]["extra"]["vote"]["of"] == "greedy"


def test_a_budget_run_out_cuts_the_sample_under_way_and_votes_the_others(tmp_path: Path) -> None:
    llm = SeededGold(demo_items(1), astray=set())
    records = run_eval(tmp_path, "budget", llm, "--method", "vote", "--samples", "3", "--max-llm-calls", "6",
                       "--action-mode", "text", limit=1)
    record = records[0]
    assert record["stopped"] == "budget" and record["extra"]["budget"] == {"ran_out": "llm_calls", "limit": 6, "used": 6}
    assert record["llm_calls"] == 6 == len(llm.seeds) and record["metrics"]["f1"] == 1.0  # the first sample's answer
    cut = [s for s in record["steps"] if s["error"] == "budget"]
    assert len(cut) == 1 and cut[0]["pruned"] == "the LLM budget ran out during this sample" and cut[0]["tokens_in"] > 0
    assert record["extra"]["vote"]["seeds"] == [0, 1]


def test_a_vote_replays_byte_for_byte_from_its_recording(tmp_path: Path) -> None:
    items = demo_items(2)
    flags = ["--method", "vote", "--samples", "3", "--action-mode", "text", "--llm-mode", "completion"]
    live = run_eval(tmp_path, "live", SeededGold(items, astray={1}), *flags, "--record", str(tmp_path / "rec"), limit=2)
    replayed = run_eval(tmp_path, "again", SeededGold(items, astray=set()), *flags, "--replay", str(tmp_path / "rec"), limit=2)
    assert [without_times(r) for r in live] == [without_times(r) for r in replayed]
    assert replayed[0]["recording"]["mode"] == "replay" and live[0]["extra"]["vote"]["votes"][1]["samples"] == [2]


@pytest.mark.e2e
def test_vote_through_pyql_eval_on_a_loopback_server(tmp_path: Path) -> None:
    items = demo_items(2)
    out = tmp_path / "run.jsonl"
    with FakeLLMServer(GoldResponder(items)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "pyql.cli", "eval", str(DEMO), "--limit", "2", "--kb", "demo", "--base-url", server.url,
             "--model", "fake", "--action-mode", "text", "--method", "vote", "--samples", "2", "--seed", "10", "--out", str(out)],
            capture_output=True, text=True, cwd=ROOT, env=cli_env(), timeout=300,
        )
        bodies = [json.loads(r["body"]) for r in server.posts]
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["metrics"]["f1"] for r in records] == [1.0, 1.0]
    assert {b["temperature"] for b in bodies} == {0.7} and {b["seed"] for b in bodies} == {10, 11}
    assert sum(r["llm_calls"] for r in records) == len(bodies)


def test_a_strategy_that_samples_itself_gets_its_own_seeds_per_sample(demo_env: DemoEnv) -> None:
    env = demo_env(question="what category is rachel?", entities={"Rachel": "m.0crbvqz"})
    program = "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)\nexecute()"
    llm = ScriptedLLM([program] * 2)
    result = solve_vote(llm, env, env.question, AgentConfig(feedback="raw"), vote_of="generate-execute", samples=2, seed=5)
    assert [c.kwargs["sampling"].seed for c in llm.calls] == [5, 1005]  # the program's own seed wins over the vote's
    assert [v["count"] for v in result.extra["vote"]["votes"]] == [2]
