"""The strategy registry: a new strategy is one registration, and pyql eval, its flags and the run file follow.

The toy strategy below is registered here only (the registry is not told
of it anywhere else): ``pyql eval --method toy-echo`` runs it, its option
is a flag (checked: out of its range is a usage error naming the range),
and the run file records the method and the option. The built-in names
come from the registry too: ``greedy`` (``queryagent`` is its alias, and a
run file written with that name resumes) and ``readi``; docs/agent.md's
table lists every registered strategy.
"""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import pytest

from agent.evaluation.runner import RunSettings, run_fingerprint, settings_differences, solver
from agent.llm.scripted import ScriptedLLM
from agent.methods.episode import AgentResult
from agent.methods.strategies import registry
from agent.methods.strategies.registry import Option, strategy
from pyql.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
DEMO = Path(str(resources.files("pyql") / "data" / "demo_questions.jsonl"))


def toy_echo(llm: Any, env: Any, question: str, config: Any, toy_repeat: int = 1) -> AgentResult:
    """Answers with the question's first linked entity, ``toy_repeat`` times, in one step of its environment."""
    entity = next(iter(env.memory.entities.values()), "")
    record = env.step(f"get_relation({entity})")
    answers = [{"value": entity, "label": None}] * toy_repeat
    return AgentResult(question, answers, [], True, False, "", kb_queries=record.kb_queries)


@pytest.fixture()
def toy() -> Iterator[None]:
    strategy(
        "toy-echo",
        description="answers with the first linked entity",
        cites="nobody",
        options=(Option("toy_repeat", int, 1, "times the answer is given", minimum=1, maximum=3),),
        rank=900,
    )(toy_echo)
    try:
        yield
    finally:
        registry._STRATEGIES.pop("toy-echo", None)


def test_a_strategy_registered_here_runs_through_pyql_eval(toy: None, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    args = build_parser().parse_args(
        ["eval", str(DEMO), "--kb", "demo", "--out", str(out), "--limit", "2", "--method", "toy-echo", "--toy-repeat", "2"]
    )
    assert args.func(args, io.StringIO(), llm=ScriptedLLM([]), progress=io.StringIO()) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["method"] for r in records] == ["toy-echo", "toy-echo"]
    assert records[0]["settings"]["options"] == {"toy_repeat": 2}
    assert records[0]["answers"] == [{"value": "m.0crbvqz", "label": None}] * 2 and records[0]["kb_queries"] == 1


def test_its_option_is_a_flag_checked_against_its_range(toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["eval"].format_help().split())  # type: ignore[union-attr]
    assert "toy-echo: answers with the first linked entity" in help_text and "--toy-repeat" in help_text
    said = io.StringIO()
    argv = ["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--method", "toy-echo", "--toy-repeat"]
    assert main([*argv, "9"], out=said) == 2
    message = said.getvalue() + capsys.readouterr().err
    assert "--toy-repeat must be a whole number from 1 to 3, got '9'" in message
    assert main([*argv, "two"], out=said) == 2
    assert not (tmp_path / "r.jsonl").exists()


def test_an_option_of_another_strategy_is_refused(toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said = io.StringIO()
    code = main(["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--toy-repeat", "2"], out=said)
    assert code == 2
    assert "--toy-repeat (--method toy-echo): not an option of --method greedy" in said.getvalue() + capsys.readouterr().err


def test_options_are_checked_in_code_too(toy: None) -> None:
    from agent.errors import EvalError

    assert solver("toy-echo", {"toy_repeat": 3}).keywords == {"toy_repeat": 3}  # type: ignore[attr-defined]
    with pytest.raises(EvalError, match="from 1 to 3"):
        solver("toy-echo", {"toy_repeat": 0})
    with pytest.raises(EvalError, match="not an option of --method greedy"):
        solver("greedy", {"toy_repeat": 2})


def test_queryagent_is_the_greedy_strategy_and_old_run_files_resume() -> None:
    settings = RunSettings(kb="demo", method="queryagent")
    assert settings.method == "greedy" and solver("queryagent").__name__ == "solve_greedy"
    old = {"id": "q1", "settings": {**run_fingerprint(settings), "method": "queryagent"}}
    assert settings_differences([old], run_fingerprint(settings)) == []
    assert settings_differences([{"id": "q1", "method": "queryagent"}], {"method": "greedy"}) == []  # before settings were recorded
    assert settings_differences([old], run_fingerprint(RunSettings(kb="demo", method="readi"))) == [
        "method: 'greedy' in the run file, 'readi' now"
    ]
    assert "options" not in run_fingerprint(settings) and "options" not in settings.describe()


def test_method_choices_and_help_come_from_the_registry() -> None:
    parser = build_parser()
    for command in ("ask", "eval"):
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        method = sub._option_string_actions["--method"]
        assert method.choices == registry.method_choices()
        assert method.choices[:3] == ["greedy", "queryagent", "readi"] and {"beam", "vote", "generate-execute", "tog"} <= set(method.choices)
        assert method.default == "greedy" and "greedy (alias queryagent)" in method.help


@pytest.fixture()
def budgeted() -> Iterator[None]:
    """A strategy for tables only whose ``max_llm_calls`` is the flag ``tog`` has, with another default and range."""
    strategy(
        "toy-budget",
        description="answers nothing, within a budget",
        options=(Option("max_llm_calls", int, 7, "calls at most", minimum=1, maximum=9),),
        rank=901,
        sides=("sql",),
    )(lambda llm, env, question, config, max_llm_calls=7: AgentResult(question, [], [], True, False, ""))
    try:
        yield
    finally:
        registry._STRATEGIES.pop("toy-budget", None)


def test_strategies_share_a_flag_each_with_its_range_and_refuse_the_sides_they_do_not_apply_to(
    budgeted: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    owners = [(e.name, o.default, o.maximum) for e, o in registry.flags()["max_llm_calls"]]
    assert owners == [("beam", 500, 100000), ("tog", 60, 10000), ("generate-execute", 500, 100000), ("vote", 500, 100000),
                      ("toy-budget", 7, 9)]
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["eval"].format_help().split())  # type: ignore[union-attr]
    assert "--method tog: LLM calls at most per question" in help_text and "calls at most (default 7; a whole number from 1 to 9)" in help_text
    base = ["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--limit", "1"]
    assert main([*base, "--method", "toy-budget", "--max-llm-calls", "12"]) == 2
    assert "--max-llm-calls must be a whole number from 1 to 9, got 12" in capsys.readouterr().err
    assert main([*base, "--method", "toy-budget", "--max-llm-calls", "5"]) == 2  # in range, but the demo is a KB
    assert "--method toy-budget applies to a table (--db, --table-json, a data set of tables), not to a KB (--kb)" in capsys.readouterr().err
    assert solver("tog", {"max_llm_calls": 12}).keywords["max_llm_calls"] == 12  # type: ignore[attr-defined]
    assert not (tmp_path / "r.jsonl").exists()


def test_docs_list_every_registered_strategy() -> None:
    """docs/agent.md's table of strategies is the registry's (:func:`registry.markdown_table`)."""
    text = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")
    assert registry.markdown_table() in text
    for name in registry.names():
        assert f"| `{name}` |" in text
