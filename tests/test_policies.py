"""The policy registry: a new action mode is one registration, and ``--action-mode`` and the agent follow.

The toy policy below is registered here only: it proposes a look at the
first linked entity, a fact with the first relation found, then
``execute()``, without asking the LLM. ``pyql eval
--action-mode toy-look`` runs the greedy strategy with it, and the history
and trace it writes are what the run file holds. The built-in modes'
candidates are checked too: a written action is a list of one, the choose
mode lists every step, the LLM's pick first.
"""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import pytest

from agent.errors import AgentConfigError
from agent.llm.config import LLMConfig
from agent.llm.scripted import ScriptedLLM
from agent.methods.config import AgentConfig
from agent.methods.episode import Episode, StepTrace, Turn
from agent.methods.policies import registry
from agent.methods.policies.registry import BasePolicy, Candidate, Proposal, policy
from agent.methods.sides import side_for
from pyql.cli import build_parser
from pyql.environment.sparql import SparqlEnvironment
from pyql.kb import KB

DEMO = Path(str(resources.files("pyql") / "data" / "demo_questions.jsonl"))


class ToyLook(BasePolicy):
    """Looks at the first linked entity, adds the first relation it has, then executes; asks the LLM nothing."""

    def head(self, env: Any, side: Any, question: str) -> str:
        return question

    def propose(self, env: Any, episode: Episode, step: int) -> Proposal:
        entity = next(iter(env.memory.entities.values()))
        if step == 1:
            return Proposal([Candidate(f"get_relation({entity})", score=1.0)])
        if step == 2:
            relation = env.memory.relations[entity].forward[0]
            return Proposal([Candidate(f"add_fact({entity}, {relation}, ?x)", score=1.0)])
        return Proposal([Candidate("execute()", score=1.0)])

    def taken(self, env: Any, episode: Episode, step: int, proposal: Proposal, candidate: Candidate, record: Any) -> tuple[Turn, StepTrace]:
        trace = StepTrace(step, "", "", candidate.action, record.ok, record.error, record.observation, kb_queries=record.kb_queries)
        return Turn(step, f"Action {step}: {candidate.action}", record.observation), trace


@pytest.fixture()
def toy() -> Iterator[None]:
    policy("toy-look", help="looks at the first linked entity, adds its first relation, executes", rank=900)(ToyLook)
    try:
        yield
    finally:
        registry._POLICIES.pop("toy-look", None)


def test_an_action_mode_registered_here_runs_through_pyql_eval(toy: None, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    args = build_parser().parse_args(
        ["eval", str(DEMO), "--kb", "demo", "--out", str(out), "--limit", "1", "--feedback", "raw", "--action-mode", "toy-look"]
    )
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["eval"].format_help().split())  # type: ignore[union-attr]
    assert "toy-look: looks at the first linked entity, adds its first relation, executes" in help_text
    assert args.func(args, io.StringIO(), llm=ScriptedLLM([]), progress=io.StringIO()) == 0
    record = json.loads(out.read_text().splitlines()[0])
    actions = [s["action"] for s in record["steps"]]
    assert actions[0] == "get_relation(m.0crbvqz)" and actions[1].startswith("add_fact(m.0crbvqz, ") and actions[2:] == ["execute()"]
    assert record["settings"]["action_mode"] == "toy-look" and record["llm_calls"] == 0 and record["done"]


def test_unknown_action_modes_are_named_with_the_registered_ones(toy: None) -> None:
    with pytest.raises(AgentConfigError, match="use text, tools, grammar, choose or toy-look"):
        AgentConfig(action_mode="guess")
    assert registry.modes_for("agentbench") == ("text", "tools", "toy-look")


def _episode(policy_name: str, replies: list[str]) -> tuple[Any, Any, Episode]:
    env = SparqlEnvironment(KB.open("demo"), question="what category is tropical storm rachel?", entities={"Rachel": "m.0crbvqz"})
    made = registry.make(policy_name, ScriptedLLM(replies, config=LLMConfig(mode="completion")), AgentConfig(action_mode=policy_name, feedback="raw"))
    side = side_for(env)
    return env, made, Episode(head=made.head(env, side, str(env.question)), side=side)


def test_a_written_action_is_one_candidate() -> None:
    env, text, episode = _episode("text", [" look.\nAction 1: get_relation(m.0crbvqz)"])  # the prompt ends in "Thought 1:"
    proposal = text.propose(env, episode, 1)
    assert [(c.action, c.score) for c in proposal.candidates] == [("Thought 1: look.\nAction 1: get_relation(m.0crbvqz)", None)]
    assert episode.calls == 1 and proposal.fields["prompt_sha256"]


def test_choose_lists_every_step_the_pick_first() -> None:
    env, choose, episode = _episode("choose", ["2"])
    proposal = choose.propose(env, episode, 1)
    assert [t.action for t in episode.traces] == ["get_relation(m.0crbvqz)"]  # the environment's own look, traced
    listed = proposal.prompt.rsplit("Choices 1:\n", 1)[1].splitlines()  # the question's list (the example has one too)
    picked = listed[1].split(". ", 1)[1].split(" → ")[0]
    assert proposal.candidates[0].action == picked and len(proposal.candidates) == len(listed) - 1  # the last line: "Choice 1:"
    assert {c.action for c in proposal.candidates} == {line.split(". ", 1)[1].split(" → ")[0] for line in listed[:-1]}


def test_a_failed_llm_call_is_no_candidate_and_ends_the_episode() -> None:
    env, text, episode = _episode("text", [])
    proposal = text.propose(env, episode, 1)
    assert proposal.candidates == [] and proposal.outcome == "llm_error" and not proposal.go_on
    assert episode.error is not None and episode.error.startswith("llm_error:")
