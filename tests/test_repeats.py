"""Issue 27: every kind of repeat ends a loop at ``--max-repeats``, and the profile follows the KB."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.environments import feedback_options, open_kb_for
from agent.evaluation.metrics import aggregate
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply
from agent.llm.scripted import ScriptedLLM
from agent.methods.query_agent import AgentConfig, QueryAgent
from pyql.errors import EngineError, TermError, UsageError
from pyql.kb import KB
from pyql.builder.profiles import FREEBASE, infer_profile
from pyql.environment.sparql import SparqlEnvironment
from pyql.builder.terms import parse_term

ROOT = Path(__file__).resolve().parents[1]
COMPLETION = LLMConfig(mode="completion")
Q01 = "what category is tropical storm rachel?"
RACHEL = {"Tropical Storm Rachel": "m.0crbvqz"}

#: One refused (or idle) action per kind of repeat: the reply (``{n}`` is the step) and the kind expected.
KINDS = {
    "parse": (" I cannot tell.\nAction {n}: Since no relation fits, I will stop here", "no_action"),
    "arity": (" Look.\nAction {n}: get_relation(m.0crbvqz, ?x)", "wrong_arity"),
    "bad argument": (" Look at Berlin.\nAction {n}: get_relation(Q64)", "bad_argument"),
    "eraser": (" Rachel's damage.\nAction {n}: add_fact(m.0crbvqz, meteorology.tropical_cyclone.damage, ?c)", None),
    "no-op look": (" Look again.\nAction {n}: get_relation(m.0crbvqz)", "no_change"),
}


@pytest.fixture()
def kb() -> KB:
    return KB.open("oxigraph:demo")


def _run(env: SparqlEnvironment, reply: str, max_repeats: int, **config: Any) -> Any:
    llm = ScriptedLLM([reply.format(n=i) for i in range(1, 13)] + ["?c"], config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(max_repeats=max_repeats, **config)).run(env, Q01)
    return result, llm


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("max_repeats", [1, 3])
def test_each_kind_of_repeat_ends_the_loop_at_max_repeats(kb: KB, kind: str, max_repeats: int) -> None:
    reply, expected = KINDS[kind]
    env = SparqlEnvironment(kb, question=Q01, entities=RACHEL, **feedback_options("eraser", agent=True))
    result, llm = _run(env, reply, max_repeats)
    tried = [s for s in result.steps if not s.forced]
    assert len(tried) == max_repeats + 1  # the first try and its repeats (the no-op look succeeds each time)
    assert result.stopped == "repeated_mistake" and result.status == "finished"
    assert result.stopped_by == (expected or tried[0].error) and result.stopped_by
    assert [s.escalation for s in tried][-1] == min(max_repeats, 3)
    assert result.llm_calls <= len(tried) + 1 and len(llm.prompts) == result.llm_calls
    assert result.answers == []  # nothing was built: scored as the agent's failure


def test_a_kb_error_repeated_ends_the_loop(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine error that is the query's (not a service failure) counts like any refusal."""
    env = SparqlEnvironment(kb, question=Q01, entities=RACHEL, **feedback_options("raw", agent=True))

    def broken(sparql: str) -> list[dict[str, Any]]:
        raise EngineError("the engine rejected the query")

    monkeypatch.setattr(kb, "_select", broken)
    result, _ = _run(env, KINDS["no-op look"][0], 2, feedback="raw")
    tried = [s for s in result.steps if not s.forced]
    assert [s.error for s in tried] == ["engine_error"] * 3
    assert result.stopped == "repeated_mistake" and result.stopped_by == "engine_error" and result.error is None


def test_a_no_op_look_escalates_but_is_kept(kb: KB) -> None:
    env = SparqlEnvironment(kb, question=Q01, entities=RACHEL)
    records = [env.step("get_relation(m.0crbvqz)") for _ in range(3)]
    assert all(r.ok for r in records)
    assert [(r.repeats, r.repeat_kind, r.escalation) for r in records] == [(0, None, 0), (1, "no_change", 1), (2, "no_change", 2)]
    assert "already run at step 1" in records[1].observation and "do not write it again" in records[2].observation
    # a look after the query changed is not a repeat; a fact that changes the query never is
    assert env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)").repeats == 0
    assert env.step("get_relation(?c)").repeats == 0


def test_choose_mode_stops_a_look_that_keeps_failing() -> None:
    """The reported case: Q64 on the Freebase demo, choose mode, picking 1 each time: 12 calls before, now a few."""
    env = SparqlEnvironment(KB.open("demo"), entities={"Berlin": "Q64"}, **feedback_options("eraser", agent=True))
    result = QueryAgent(ScriptedLLM(["1"] * 30), AgentConfig(action_mode="choose")).run(env, "how many people live in berlin?")
    assert result.stopped == "repeated_mistake" and result.stopped_by == "bad_argument"
    assert result.llm_calls <= 3 and len(result.steps) <= 3 + 2


def test_choose_mode_stops_on_repeated_invalid_choices(kb: KB) -> None:
    env = SparqlEnvironment(kb, question=Q01, entities=RACHEL, **feedback_options("eraser", agent=True))
    llm = ScriptedLLM([LLMReply("none of them")] * 40)
    result = QueryAgent(llm, AgentConfig(action_mode="choose", max_repeats=2)).run(env, Q01)
    assert result.stopped_by == "invalid_choice"
    assert sum(s.error == "invalid_choice" for s in result.steps) == 3


def test_the_summary_counts_what_ended_questions() -> None:
    base = {"answers": [], "gold": ["m.1"], "done": True, "steps": [], "llm_calls": 4, "rules": {}}
    records = [
        {**base, "stopped": "repeated_mistake", "stopped_by": "bad_argument"},
        {**base, "stopped": "repeated_mistake", "stopped_by": "bad_argument"},
        {**base, "stopped": "repeated_mistake", "stopped_by": "no_action"},
        base,
    ]
    m = aggregate(records)
    assert m.stopped == 3 and m.ended_by_repeats == {"bad_argument": 2, "no_action": 1}
    assert ("ended by repeats", "bad_argument 2, no_action 1") in m.rows()
    assert "ended by repeats" not in dict(aggregate([base]).rows())


# ---------------------------------------------------------------------------
# The profile follows the KB

WIKIDATA_TTL = """\
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix wds: <http://www.wikidata.org/entity/statement/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
wd:Q64 rdfs:label "Berlin"@en ; wdt:P1082 3645000 ; p:P1082 wds:Q64-1 .
wds:Q64-1 ps:P1082 3645000 .
wd:P1082 rdfs:label "population"@en .
"""
BERLIN = '{"Berlin": "Q64"}'


def pyql(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyql.cli", *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.fixture()
def wikidata_kb(tmp_path: Path) -> Path:
    path = tmp_path / "berlin.ttl"
    path.write_text(WIKIDATA_TTL)
    return path


@pytest.mark.cli
def test_run_on_a_wikidata_file_picks_the_wikidata_profile(tmp_path: Path, wikidata_kb: Path) -> None:
    actions = tmp_path / "a.txt"
    actions.write_text("get_relation(Q64)\nadd_fact(Q64, wdt:P1082, ?n)\nset_answer(?n)\nexecute()\n")
    result = pyql("run", "--kb", str(wikidata_kb), "--entities", BERLIN, "--actions", str(actions), "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(s["ok"] for s in lines[:-1]), lines
    assert "wdt:P1082" in lines[0]["observation"]
    assert [a["value"] for a in lines[-1]["answers"]] == ["3645000"]
    assert "PREFIX wd: <http://www.wikidata.org/entity/>" in lines[-1]["sparql"]


def test_ask_on_a_wikidata_file_picks_the_wikidata_profile(wikidata_kb: Path) -> None:
    from agent.cli import ask_command
    from pyql.cli import build_parser

    args = build_parser().parse_args(["ask", "how many people live in berlin?", "--kb", str(wikidata_kb), "--json",
                                      "--entities", BERLIN, "--action-mode", "text"])
    llm = ScriptedLLM([" Look.\nAction 1: get_relation(Q64)", " Population.\nAction 2: add_fact(Q64, wdt:P1082, ?n)",
                       " Answer.\nAction 3: set_answer(?n)", " Done.\nAction 4: execute()"], config=COMPLETION)
    out = io.StringIO()
    assert ask_command(args, out, llm=llm) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [s["ok"] for s in lines[:-1]] == [True] * 4, lines
    assert [a["value"] for a in lines[-1]["answers"]] == ["3645000"]


def test_the_demo_and_a_given_profile_are_kept(wikidata_kb: Path) -> None:
    assert open_kb_for("demo", None).profile.name == "freebase"
    assert open_kb_for("demo", None, ["m.0crbvqz"]).profile.name == "freebase"
    assert open_kb_for(str(wikidata_kb), None).profile.name == "wikidata"
    assert open_kb_for(str(wikidata_kb), "freebase").profile.name == "freebase"
    assert open_kb_for("demo", "wikidata", ["Q64"]).profile.name == "wikidata"  # --profile is never second-guessed


@pytest.mark.cli
def test_a_kb_and_entities_of_different_profiles_are_a_usage_error(wikidata_kb: Path) -> None:
    with pytest.raises(UsageError, match=r"freebase's .* wikidata ids \(Q64\): give --profile freebase or --profile wikidata"):
        open_kb_for("demo", None, ["Q64"])
    with pytest.raises(UsageError, match=r"mix"):
        infer_profile(None, ["Q64", "m.0crbvqz"])
    result = pyql("run", "--kb", str(wikidata_kb), "--entities", '{"Rachel": "m.0crbvqz"}', "--actions", "-", stdin="get_relation(m.0crbvqz)\n")
    assert result.returncode == 2
    assert "wikidata's" in result.stderr and "freebase ids (m.0crbvqz)" in result.stderr and "--profile" in result.stderr


@pytest.mark.cli
def test_a_wikidata_id_on_the_freebase_profile_names_the_profile_and_flag() -> None:
    with pytest.raises(TermError, match=r"cannot read 'Q64' as a term: it is a name of the wikidata profile, "
                                        r"not of the freebase profile in use \(give --profile wikidata\)"):
        parse_term("Q64", FREEBASE)
    with pytest.raises(TermError) as plain:
        parse_term("Hurricane Katrina", FREEBASE)
    assert "profile in use" not in str(plain.value)
    result = pyql("run", "--kb", "demo", "--profile", "freebase", "--entities", BERLIN, "--actions", "-", "--json", stdin="get_relation(Q64)\n")
    assert "give --profile wikidata" in result.stdout
