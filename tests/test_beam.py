"""The ``beam`` strategy: a beam over PyQL steps, through ``pyql eval`` (in process and over HTTP), its options as
flags, its pruned branches, its budget, its scores (the list's order, the reply's log-probabilities, the written
modes' samples) and a replay byte for byte from a recording.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply
from agent.llm.scripted import ScriptedLLM
from agent.methods.config import AgentConfig
from agent.methods.strategies.beam import solve_beam
from pyql.cli import build_parser, main
from pyql.environment.sparql import SparqlEnvironment
from pyql.kb import KB
from tests.fault_servers import FakeLLMServer, Reply, chat_body
from tests.test_eval import DEMO, ROOT, cli_env, demo_items
from tests.demo import DemoEnv

#: What differs between two runs of the same questions: the times, and the recording's mode.
TIMES = {"seconds", "finished_at", "llm_seconds", "kb_seconds", "model_seconds", "recording", "latency"}


def without_times(value: Any) -> Any:
    """A record with its times (and the recording's stamp) left out, for comparing two runs."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def run_eval(tmp_path: Path, name: str, llm: Any, *flags: str, limit: int = 3) -> list[dict[str, Any]]:
    out = tmp_path / f"{name}.jsonl"
    args = build_parser().parse_args(["eval", str(DEMO), "--kb", "demo", "--out", str(out), "--limit", str(limit), *flags])
    assert args.func(args, io.StringIO(), llm=llm, progress=io.StringIO()) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def rachel() -> SparqlEnvironment:
    return SparqlEnvironment(KB.open("demo"), question="what category is tropical storm rachel?",
                             entities={"Tropical Storm Rachel": "m.0crbvqz"})


def test_beam_through_pyql_eval_answers_traces_a_tree_and_records_its_options(tmp_path: Path) -> None:
    llm = ScriptedLLM(["1"] * 400)
    records = run_eval(tmp_path, "beam", llm, "--method", "beam", "--action-mode", "choose", "--beam-width", "2",
                       "--beam-scoring", "rank")
    assert [r["method"] for r in records] == ["beam"] * 3
    assert records[0]["settings"]["options"] == {"beam_width": 2, "beam_scoring": "rank"}
    assert [r["metrics"]["f1"] for r in records] == [1.0, 1.0, 1.0]
    for record in records:
        steps = record["steps"]
        assert record["extra"]["beam"]["width"] == 2 and record["extra"]["beam"]["scoring"] == "rank"
        assert any(s["pruned"] and s["pruned"].startswith("outside the beam") for s in steps)
        # every LLM call is traced once: with the first step run from its list
        assert sum(1 for s in steps if s["prompt_sha256"]) == record["llm_calls"]
        roots = [s for s in steps if s["parent"] is None]
        assert len(roots) == 1 and max(s["parent"] or 0 for s in steps) < len(steps)
        answer = record["extra"]["beam"]["answer"]["step"]
        assert steps[answer - 1]["action"] == "execute()" and steps[answer - 1]["pruned"] is None
    assert sum(r["llm_calls"] for r in records) == len(llm.calls)


def test_its_options_are_flags_checked_against_their_ranges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--method", "beam"]
    for flag, value, said in (("--beam-width", "0", "--beam-width must be a whole number from 1 to 16, got '0'"),
                              ("--beam-scoring", "magic", "--beam-scoring must be one of auto, policy, likelihood, logprobs, rank"),
                              ("--max-llm-calls", "0", "--max-llm-calls must be a whole number from 1 to 100000"),
                              ("--beam-temperature", "0", "--beam-temperature must be a number from 0.05 to 2")):
        out = io.StringIO()
        assert main([*base, flag, value], out=out) == 2
        assert said in out.getvalue() + capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["eval"].format_help().split())  # type: ignore[union-attr]
    assert "beam: a beam over PyQL steps" in help_text and "--beam-width" in help_text


def test_failed_and_empty_steps_are_pruned_by_execution() -> None:
    # text mode, two samples per state: the first sample's wrong relation gives an empty result
    llm = ScriptedLLM([
        " Look.\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone_season.tropical_cyclones, ?s)",
        " Right.\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
        " Done.\nAction 2: execute()",
        " Done.\nAction 2: execute()",
    ], config=LLMConfig(mode="completion"))
    env = rachel()
    result = solve_beam(llm, env, env.question, AgentConfig(feedback="raw"), beam_samples=2, beam_width=2)
    assert [a["label"] for a in result.answers] == ["Tropical storm (SSHS)"]
    pruned = {s.action: s.pruned for s in result.steps}
    assert pruned["add_fact(m.0crbvqz, meteorology.tropical_cyclone_season.tropical_cyclones, ?s)"] == "empty result"
    seeds = [c.kwargs["sampling"] for c in llm.calls]
    assert [s.seed for s in seeds] == [0, 1, 2, 3] and {s.temperature for s in seeds} == {0.7}
    assert result.extra["beam"]["scoring"] == "samples" and result.llm_calls == 4


def test_the_written_modes_score_an_action_by_the_share_of_samples_that_wrote_it() -> None:
    wrong = " W.\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)"
    right = " R.\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)"
    done = " D.\nAction 2: execute()"
    llm = ScriptedLLM([wrong, right, right, done, done, done, done, done, done], config=LLMConfig(mode="completion"))
    env = rachel()
    result = solve_beam(llm, env, env.question, AgentConfig(feedback="raw"), beam_samples=3, beam_width=2)
    assert [a["label"] for a in result.answers] == ["Tropical storm (SSHS)"]  # 2 of 3 samples: the better score
    first = [s for s in result.steps if s.parent is None]
    assert [s.action for s in first] == ["add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
                                         "add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)"]
    assert first[0].tokens_in > 0 and first[1].tokens_in == 0 and "sample(s) are traced with" in (first[1].without_call or "")
    assert result.steps[result.extra["beam"]["answer"]["step"] - 1].parent == 1


def test_log_probabilities_of_the_choice_order_the_candidates() -> None:
    """A server's top log-probabilities: the second listed step is far likelier, so its branch is tried first."""
    def likes(number: str) -> LLMReply:
        return LLMReply("1", top_logprobs=[{"1": -3.0, number: -0.05, "3": -4.0}])

    llm = ScriptedLLM([likes("2"), likes("2"), likes("2"), likes("2")], model="remote")
    env = rachel()
    result = solve_beam(llm, env, env.question, AgentConfig(action_mode="choose", feedback="raw"), beam_width=1)
    assert result.extra["beam"]["scoring"] == "logprobs"
    assert all(c.kwargs["sampling"].top_logprobs == 20 for c in llm.calls)  # a chat LLM: up to 20
    facts = [s.action for s in result.steps if s.action and s.action.startswith("add_fact") and s.parent == 1]
    assert facts == ["add_fact(?tropical_cyclone_category, meteorology.tropical_cyclone_category.tropical_cyclones, m.0crbvqz)"]


@pytest.mark.parametrize("width", [1, 3])
def test_policy_scoring_follows_the_order_greedy_follows(width: int) -> None:
    """``policy``: the model's PMI where the choose policy scored the list (the first facts), the list's order after;
    a beam's best branch is greedy's path when that path finishes. ``likelihood`` scores every list of facts by the
    PMI, which took another path on the same question (held-out WebQSP: the dates greedy keeps were dropped)."""
    from agent.llm.likelihood import RelationPMI
    from agent.methods.strategies.greedy import QueryAgent
    from tests.test_query_agent import _WordScorer

    config = AgentConfig(action_mode="choose", feedback="raw", first_relation="model", max_steps=5)

    def llm_with(scorer: RelationPMI) -> ScriptedLLM:
        llm = ScriptedLLM(["1"] * 40, model="remote")
        llm.relation_scorer = scorer  # type: ignore[attr-defined]
        return llm

    greedy_pmi = RelationPMI(_WordScorer("formed"))
    env = rachel()
    greedy = QueryAgent(llm_with(greedy_pmi), config, scorer=greedy_pmi).run(env, env.question)
    runs = {}
    for scoring in ("policy", "likelihood"):
        pmi = RelationPMI(_WordScorer("formed"))
        env = rachel()
        result = solve_beam(llm_with(pmi), env, env.question, config, beam_width=width, beam_scoring=scoring)
        answer = result.extra["beam"]["answer"]["step"]
        path, step = [], answer
        while step is not None:
            path.append(result.steps[step - 1])
            step = result.steps[step - 1].parent
        runs[scoring] = (result, [s.action for s in reversed(path) if s.action], pmi.requests)
    policy, policy_path, policy_requests = runs["policy"]
    assert policy.extra["beam"]["scoring"] == "policy"
    assert [a["label"] for a in policy.answers] == [a["label"] for a in greedy.answers]
    assert policy_path == [s.action for s in greedy.steps if s.action]
    assert policy_requests == greedy_pmi.requests  # only the first list was scored, as greedy scores it


def test_a_list_the_policy_did_not_score_is_scored_by_its_order_not_the_pmi() -> None:
    """A later list of facts (no model scores): ``policy`` keeps the list's order, ``likelihood`` asks the PMI."""
    from agent.llm.likelihood import RelationPMI
    from agent.methods.policies.registry import Candidate, Proposal
    from agent.methods.search import Branch
    from agent.methods.strategies.beam import Beam
    from tests.test_query_agent import _WordScorer

    facts = [Candidate(f"add_fact(?x, {r}, ?y)", kind="fact") for r in ("a.b.category", "a.b.formed", "a.b.date")]
    env = rachel()
    scores = {}
    for scoring in ("policy", "likelihood"):
        llm = ScriptedLLM([], model="remote")
        pmi = RelationPMI(_WordScorer("formed"))
        llm.relation_scorer = pmi  # type: ignore[attr-defined]
        beam = Beam(llm, AgentConfig(action_mode="choose", feedback="raw"), scoring=scoring)
        listed = beam.scored(Proposal(facts, fields={}), Branch(env, None), [])  # type: ignore[arg-type]
        scores[scoring] = ([str(item.candidate.action) for item in listed], [round(item.score, 3) for item in listed], pmi.requests)
    assert scores["policy"] == ([str(c.action) for c in facts], [0.0, -0.693, -1.099], 0)
    assert scores["likelihood"][0][0] == "add_fact(?x, a.b.formed, ?y)" and scores["likelihood"][2] > 0


@pytest.mark.parametrize("max_repeats", [1, 2])
def test_a_line_stopped_by_a_failing_look_answers_with_what_it_has_as_greedy(max_repeats: int) -> None:
    """A date of the question that no entity has: its look fails at every step until the line stops (repeated
    mistake). Greedy then answers with what it has; the beam's branch does the same (it was pruned, leaving no answer)."""
    from agent.evaluation.environments import feedback_options
    from agent.methods.strategies.greedy import QueryAgent

    question = "what category was tropical storm rachel in 2015?"
    entities = {"Tropical Storm Rachel": "m.0crbvqz", "2015": '"2015-08-10"^^<http://www.w3.org/2001/XMLSchema#dateTime>'}
    config = AgentConfig(action_mode="choose", max_steps=8, max_repeats=max_repeats)
    answers = {}
    for method in ("greedy", "beam"):
        env = SparqlEnvironment(KB.open("demo"), question=question, entities=entities, **feedback_options("eraser", agent=True))
        llm = ScriptedLLM(["1"] * 40, model="remote")
        result = (QueryAgent(llm, config).run(env, question) if method == "greedy"
                  else solve_beam(llm, env, question, config, beam_width=2, beam_scoring="rank"))
        assert result.stopped == "repeated_mistake"
        answers[method] = [a["label"] for a in result.answers]
    assert answers["beam"] == answers["greedy"] == ["Tropical storm (SSHS)"]


def test_a_budget_run_out_answers_with_what_it_has(tmp_path: Path) -> None:
    records = run_eval(tmp_path, "budget", ScriptedLLM(["1"] * 50), "--method", "beam", "--action-mode", "choose",
                       "--beam-scoring", "rank", "--max-llm-calls", "2", limit=2)
    for record in records:
        assert record["stopped"] == "budget" and record["llm_calls"] == 2
        assert record["extra"]["budget"] == {"ran_out": "llm_calls", "limit": 2, "used": 2}
        assert any(s["pruned"] == "the LLM budget ran out" for s in record["steps"]) or record["forced"]
    assert records[0]["metrics"]["f1"] == 1.0  # q01: the best branch left is forced to answer, without a call


def test_a_beam_replays_byte_for_byte_from_its_recording(tmp_path: Path) -> None:
    scripted = [LLMReply("1", top_logprobs=[{"1": -0.5, "2": -1.0, "3": -1.5}])] * 200
    flags = ["--method", "beam", "--action-mode", "choose", "--beam-width", "2"]
    live = run_eval(tmp_path, "live", ScriptedLLM(scripted, model="remote"), *flags, "--record", str(tmp_path / "rec"))
    again = run_eval(tmp_path, "again", ScriptedLLM([], model="remote"), *flags, "--replay", str(tmp_path / "rec"))
    assert live[0]["extra"]["beam"]["scoring"] == "logprobs" and live[0]["recording"]["mode"] == "record"
    assert [without_times(r) for r in live] == [without_times(r) for r in again]
    assert again[0]["recording"]["mode"] == "replay"


def test_a_beam_on_a_table() -> None:
    from pyql_sql import Table
    from pyql_sql.environment import TableEnvironment

    table = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"], ["8", "Athlone Town"]])
    env = TableEnvironment(table, question="How many games with athlone town as the opponent?")
    result = solve_beam(ScriptedLLM(["1"] * 30), env, env.question, AgentConfig(action_mode="choose", feedback="raw"),
                        beam_scoring="rank")
    assert [a["value"] for a in result.answers] in (["2"], [2]) and result.done


def _choosing_server(request: dict[str, Any]) -> Reply:
    """Answers every choice with 1; with the log-probabilities a request asks for (chat's shape)."""
    if request["method"] == "GET":
        return Reply(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
    body = json.loads(request["body"])
    reply = chat_body("1", model="fake")
    if body.get("logprobs"):
        top = [{"token": "1", "logprob": -0.2, "bytes": None}, {"token": "2", "logprob": -1.7, "bytes": None}]
        reply["choices"][0]["logprobs"] = {"content": [{"token": "1", "logprob": -0.2, "bytes": None, "top_logprobs": top}]}
    return Reply(200, reply)


@pytest.mark.e2e
def test_beam_through_pyql_eval_on_a_loopback_server(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with FakeLLMServer(_choosing_server) as server:
        done = subprocess.run(
            [sys.executable, "-m", "pyql.cli", "eval", str(DEMO), "--limit", "2", "--kb", "demo", "--base-url", server.url,
             "--model", "fake", "--action-mode", "choose", "--method", "beam", "--beam-width", "2", "--out", str(out)],
            capture_output=True, text=True, cwd=ROOT, env=cli_env(), timeout=300,
        )
        bodies = [json.loads(r["body"]) for r in server.posts]
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["metrics"]["f1"] for r in records] == [1.0, 1.0]
    assert all(r["extra"]["beam"]["scoring"] == "logprobs" for r in records)
    assert bodies and all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in bodies)
    assert sum(r["llm_calls"] for r in records) == len(bodies)
    assert demo_items(1)[0]["question"] == records[0]["question"]


@pytest.mark.parametrize("qid", ["q02", "q04", "q14"])
def test_a_beam_of_width_one_is_greedy_at_greedys_kb_cost(qid: str, demo_env: DemoEnv) -> None:
    """Its forks share what the episode read of the KB (the checks' labels and entity facts), so the same steps cost
    the same queries; a beam's cost over greedy's is its branches, not its forks."""
    item = next(i for i in demo_items(37) if i["id"] == qid)
    runs = {}
    for method, options in (("greedy", {}), ("beam", {"beam_width": 1, "beam_scoring": "rank"})):
        from agent.evaluation.environments import feedback_options
        from agent.methods.strategies.registry import entry

        env = demo_env(item["question"], item["entities"], **feedback_options("eraser", agent=True))
        result = entry(method).bind(options)(ScriptedLLM(["1"] * 30), env, item["question"], AgentConfig(action_mode="choose", max_steps=7))
        runs[method] = (result.answers, [s.action for s in result.steps], result.llm_calls, env.counters["kb_queries"])
    assert runs["beam"] == runs["greedy"]


def test_pyql_ask_takes_the_beam_and_its_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entities = json.dumps({"Tropical Storm Rachel": "m.0crbvqz"})
    base = ["ask", "what category is tropical storm rachel?", "--kb", "demo", "--entities", entities, "--action-mode", "choose"]
    args = build_parser().parse_args([*base, "--method", "beam", "--beam-width", "2", "--out", str(tmp_path / "a.jsonl"), "--json"])
    out = io.StringIO()
    assert args.func(args, out, llm=ScriptedLLM(["1"] * 30)) == 0
    record = json.loads((tmp_path / "a.jsonl").read_text())
    assert record["method"] == "beam" and record["settings"]["options"] == {"beam_width": 2}
    assert json.loads(out.getvalue().splitlines()[-1])["answers"][0]["label"] == "Tropical storm (SSHS)"
    said = io.StringIO()
    assert main([*base, "--method", "beam", "--beam-width", "99"], out=said) == 2
    assert "--beam-width must be a whole number from 1 to 16, got '99'" in said.getvalue() + capsys.readouterr().err
    assert main(["ask", "q?", "--kb", "demo", "--action-set", "agentbench", "--method", "generate-execute"], out=said) == 2
    assert "--method generate-execute applies to a KB (--kb) or a table" in said.getvalue() + capsys.readouterr().err


def test_the_list_alone_bench_runs_each_method_and_counts_where_they_differ(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``benchmarks/bench_search_list.py``: no model, every reply ``1``; scored by the list's order the beam's best
    branch is greedy's path, so on the demo questions it answers as greedy does."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_search_list
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert bench_search_list.main([str(DEMO), "--kb", "demo", "--limit", "6", "--out-dir", str(tmp_path / "runs")]) == 0
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in capsys.readouterr().out.splitlines()
            if line.startswith(("| greedy", "| beam"))}
    assert rows["greedy"][1] == rows["beam"][1] == "6" and rows["beam"][-1].strip(" |") == "0"
    beam = [json.loads(line) for line in (tmp_path / "runs" / "beam.jsonl").read_text().splitlines()]
    assert {r["settings"]["options"]["beam_scoring"] for r in beam} == {"rank"}
