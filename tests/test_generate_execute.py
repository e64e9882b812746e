"""The ``generate-execute`` strategy: whole programs written by the LLM, run in order until one returns rows; through
``pyql eval`` (in process and over HTTP), its options as flags, its pruned programs, its budget, S-expressions and tables.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.llm.replies import LLMReply, Sampling
from agent.llm.scripted import ScriptedLLM
from agent.methods.config import AgentConfig
from agent.methods.strategies.generate_execute import solve_generate_execute
from pyql.cli import main
from tests.fault_servers import FakeLLMServer, Reply, chat_body
from tests.test_beam import run_eval, without_times
from tests.test_eval import DEMO, ROOT, cli_env, demo_items
from tests.demo import DemoEnv


def gold_program(item: dict[str, Any]) -> str:
    """A demo item's gold actions as a program: the steps that build the query (no looks)."""
    return "\n".join(a for a in item["actions"] if not a.startswith("get_relation("))


class ProgramLLM:
    """Writes the gold program of the question in the prompt, except for the seeds in ``wrong``: a program whose
    first relation is another of the entity's (empty) or that names a variable it never made (refused)."""

    def __init__(self, items: list[dict[str, Any]], wrong: set[int]) -> None:
        self.by_question = {item["question"]: item for item in items}
        self.wrong = wrong
        self.seeds: list[int | None] = []
        self.prompts: list[str] = []
        self.model = "programs"

    def complete(self, prompt: Any, *, stop: Any = None, tools: Any = None, grammar: Any = None,
                 sampling: Sampling | None = None) -> LLMReply:
        seed = sampling.seed if sampling is not None else None
        self.seeds.append(seed)
        self.prompts.append(prompt)
        question = re.findall(r"^Question: (.*)$", prompt, re.M)[-1].strip()
        program = gold_program(self.by_question[question])
        if seed in self.wrong:
            program = "set_answer(?nothing)\nexecute()"
        return LLMReply(program, usage_in=len(prompt) // 4, usage_out=len(program) // 4, model=self.model)


def test_generate_execute_through_pyql_eval_runs_programs_until_one_answers(tmp_path: Path) -> None:
    items = demo_items(3)
    llm = ProgramLLM(items, wrong={0})
    records = run_eval(tmp_path, "ge", llm, "--method", "generate-execute", "--programs", "3", "--seed", "0")
    assert [r["metrics"]["f1"] for r in records] == [1.0, 1.0, 1.0]
    for record in records:
        extra = record["extra"]["generate_execute"]
        assert extra == {"format": "actions", "programs": 3, "temperature": 0.3, "written": 2, "answered_by": 2}
        assert record["llm_calls"] == 2 and record["settings"]["options"] == {"programs": 3, "seed": 0}
        steps = record["steps"]
        assert steps[0]["action"].startswith("get_relation(") and not steps[0]["prompt_sha256"]  # the environment's look
        programs = [s for s in steps if s["prompt_sha256"]]
        assert len(programs) == 2 and all(p["parent"] == 1 for p in programs)  # each a branch from the looked-at state
        assert any(s["pruned"] and s["pruned"].startswith("program 1: ") for s in steps)
    assert llm.seeds == [0, 1] * 3
    prompt = llm.prompts[0]
    assert "1. `get_relation(entity_or_variable)`" in prompt  # the action docs, generated from the action set
    assert "Program:\nadd_fact(m.02xry, meteorology.cyclone_affected_area.cyclones, ?cyclone)" in prompt  # the example
    assert "get_relation(m.02xry)" not in prompt.split("Let's start with an example.")[1]  # its looks left out
    assert "m.0crbvqz: {'forward': ['meteorology.tropical_cyclone.category'" in prompt


def test_a_program_like_an_earlier_one_is_not_run_again_and_no_program_is_pruned(demo_env: DemoEnv) -> None:
    env = demo_env(question="what category is rachel?", entities={"Rachel": "m.0crbvqz"})
    empty = "add_fact(m.0crbvqz, meteorology.tropical_cyclone_season.tropical_cyclones, ?s)"
    llm = ScriptedLLM([empty, "", "```\n" + empty + "\n```"])
    result = solve_generate_execute(llm, env, env.question, AgentConfig(feedback="raw"), programs=3)
    assert result.answers == [] and not result.done and result.llm_calls == 3
    assert [s.pruned for s in result.steps if s.pruned] == [
        "program 1: empty result", "the reply has no program", "the same program as program 1"]
    assert result.extra["generate_execute"]["answered_by"] is None


def test_s_expressions_are_read_by_pyqls_converter(demo_env: DemoEnv) -> None:
    env = demo_env(question="what category is rachel?", entities={"Rachel": "m.0crbvqz"})
    llm = ScriptedLLM(["(JOIN (R meteorology.tropical_cyclone.category) m.0crbvqz)"])
    result = solve_generate_execute(llm, env, env.question, AgentConfig(feedback="raw"), program_format="sexpr")
    assert [a["label"] for a in result.answers] == ["Tropical storm (SSHS)"]
    assert llm.calls[0].kwargs["stop"] == ["\n"] and "(ARGMAX (JOIN (R meteorology.cyclone_affected_area.cyclones) m.02xry)" in llm.prompts[0]
    bad = solve_generate_execute(ScriptedLLM(["(JOIN (R"]), env, env.question, AgentConfig(feedback="raw"), programs=1,
                                 program_format="sexpr")
    assert bad.steps[-1].pruned.startswith("the S-expression does not read: ")


def test_a_program_on_a_table() -> None:
    from pyql_sql import Table
    from pyql_sql.environment import TableEnvironment

    table = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"], ["8", "Athlone Town"]])
    env = TableEnvironment(table, question="How many games with athlone town as the opponent?")
    llm = ScriptedLLM(["add_condition(Opponent, =, Athlone Town)\nset_answer(Game, COUNT)"])
    result = solve_generate_execute(llm, env, env.question, AgentConfig(feedback="raw"))
    assert [a["value"] for a in result.answers] in (["2"], [2])
    prompt = llm.prompts[0]
    assert "Table: Table " in prompt and "add_condition(Category, =, Category 5)" in prompt  # the table example's program
    assert result.steps[-1].action == "execute()" and "without execute()" in (result.steps[-1].without_call or "")


def test_its_options_and_sides_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--method", "generate-execute"]
    for extra, said in ((["--programs", "0"], "--programs must be a whole number from 1 to 32, got '0'"),
                        (["--program-format", "sql"], "--program-format must be one of actions, sexpr"),
                        (["--action-set", "agentbench"], "--method generate-execute applies to a KB (--kb) or a table (--db, --table-json, "
                                                         "a data set of tables), not to AgentBench's actions on a KB")):
        out = io.StringIO()
        assert main([*base, *extra], out=out) == 2
        assert said in out.getvalue() + capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


def test_a_budget_run_out_stops_the_writing(tmp_path: Path) -> None:
    records = run_eval(tmp_path, "budget", ProgramLLM(demo_items(1), wrong={0, 1, 2}), "--method", "generate-execute",
                       "--max-llm-calls", "2", limit=1)
    record = records[0]
    assert record["stopped"] == "budget" and record["llm_calls"] == 2 and record["answers"] == []
    assert record["extra"]["budget"] == {"ran_out": "llm_calls", "limit": 2, "used": 2}


def test_generate_execute_replays_byte_for_byte(tmp_path: Path) -> None:
    items = demo_items(2)
    flags = ["--method", "generate-execute"]
    live = run_eval(tmp_path, "live", ProgramLLM(items, wrong={0}), *flags, "--record", str(tmp_path / "rec"), limit=2)
    again = run_eval(tmp_path, "again", ProgramLLM(items, wrong=set()), *flags, "--replay", str(tmp_path / "rec"), limit=2)
    assert [without_times(r) for r in live] == [without_times(r) for r in again]


def _program_server(items: list[dict[str, Any]]) -> Any:
    by_question = {item["question"]: item for item in items}

    def respond(request: dict[str, Any]) -> Reply:
        if request["method"] == "GET":
            return Reply(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        user = json.loads(request["body"])["messages"][-1]["content"]
        question = re.findall(r"^Question: (.*)$", user, re.M)[-1].strip()
        return Reply(200, chat_body(gold_program(by_question[question])))

    return respond


@pytest.mark.e2e
def test_generate_execute_through_pyql_eval_on_a_loopback_server(tmp_path: Path) -> None:
    items = demo_items(3)
    out = tmp_path / "run.jsonl"
    with FakeLLMServer(_program_server(items)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "pyql.cli", "eval", str(DEMO), "--limit", "3", "--kb", "demo", "--base-url", server.url,
             "--model", "fake", "--method", "generate-execute", "--out", str(out)],
            capture_output=True, text=True, cwd=ROOT, env=cli_env(), timeout=300,
        )
        bodies = [json.loads(r["body"]) for r in server.posts]
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["metrics"]["f1"] for r in records] == [1.0, 1.0, 1.0]
    assert [(b["temperature"], b["seed"], b["stop"]) for b in bodies] == [(0.3, 0, ["\nQuestion:", "\n\n"])] * 3
