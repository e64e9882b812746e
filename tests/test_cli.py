"""The ``pyql`` command line, run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cli  # the tests run the pyql command

ROOT = Path(__file__).resolve().parents[1]


def pyql(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyql.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


KATRINA = '{"Hurricane Katrina": "m.0dkl7"}'

ACTIONS = """get_relation(m.0crbvqz)
add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)
add_fact(?x, ?y)
add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)
add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)
add_max(?time)
set_answer(?cyclone)
execute()
"""


@pytest.mark.parametrize("kb", ["demo", "oxigraph:demo"])
def test_run_json_contract(tmp_path: Path, kb: str) -> None:
    actions = tmp_path / "actions.txt"
    actions.write_text(ACTIONS)
    result = pyql("run", "--kb", kb, "--entities", '{"Tropical Storm Rachel": "m.0crbvqz"}', "--actions", str(actions), "--json")
    # a step failed: the answers are those of the query without it, exit 4 (issue 25)
    assert result.returncode == 4, result.stderr
    assert result.stderr.strip() == "pyql run: 1 step failed (action 3) and was undone: these are the answers of the query without it (give --keep-going to exit 0)"
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    steps, final = lines[:-1], lines[-1]
    assert [s["step"] for s in steps] == list(range(1, 9))
    for s in steps:
        assert set(s) >= {"step", "action", "ok", "error", "observation"}
        assert isinstance(s["ok"], bool) and isinstance(s["observation"], str)
    assert steps[2]["ok"] is False and steps[2]["error"] == "wrong_arity"
    assert all(s["ok"] for i, s in enumerate(steps) if i != 2)
    assert final["answers"] == [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]
    assert "SELECT DISTINCT ?cyclone" in final["sparql"]
    assert (final["failed_steps"], final["complete"]) == (1, False)
    going = pyql("run", "--kb", kb, "--entities", '{"Tropical Storm Rachel": "m.0crbvqz"}', "--actions", str(actions), "--keep-going")
    assert going.returncode == 0 and going.stderr == "", going.stderr
    assert "Answers: m.0107j2dw (Tropical Storm Dolly) [INCOMPLETE: 1 step failed (action 3) and was undone: these are the answers of the query without it]" in going.stdout


def test_run_where_every_step_ran_is_complete() -> None:
    result = pyql("run", "--kb", "demo", "--entities", KATRINA, "--actions", "-", "--json",
                  stdin="add_fact(m.0dkl7, meteorology.tropical_cyclone.highest_winds, ?w)\nexecute()\n")
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert (final["failed_steps"], final["complete"]) == (0, True)


def test_run_reads_stdin_and_prints_a_transcript() -> None:
    result = pyql("run", "--kb", "demo", "--entities", KATRINA, "--feedback", "raw", "--actions", "-", stdin="add_fact(m.0dkl7, meteorology.tropical_cyclone.highest_winds, ?w)\n")
    assert result.returncode == 0, result.stderr
    assert "Action 1: add_fact(m.0dkl7" in result.stdout
    assert "280.0" in result.stdout
    assert "execute() was not called" in result.stdout


def test_run_literal_answers_are_lexical_forms(tmp_path: Path) -> None:
    result = pyql("run", "--kb", "demo", "--entities", KATRINA, "--feedback", "raw", "--actions", "-", "--json", stdin="add_fact(m.0dkl7, meteorology.tropical_cyclone.highest_winds, ?w)\nexecute()\n")
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["answers"] == [{"value": "280.0", "label": None}]


def test_feedback_modes_change_the_error_field() -> None:
    line = "add_fact(m.0notinkb, meteorology.tropical_cyclone.highest_winds, ?w)\n"  # not linked, not in the KB
    eraser = json.loads(pyql("run", "--kb", "demo", "--actions", "-", "--json", stdin=line).stdout.splitlines()[0])
    raw = json.loads(pyql("run", "--kb", "demo", "--actions", "-", "--json", "--feedback", "raw", stdin=line).stdout.splitlines()[0])
    assert (eraser["ok"], eraser["error"]) == (False, "unlinked_entity")
    # pyql run has no LLM and no thoughts: the guideline asks to correct the action instead
    assert eraser["observation"].endswith("Correct this action and run it again.")
    assert "Thought" not in eraser["observation"]
    assert raw["error"] != "unlinked_entity", "without ERASER the unlinked entity is simply tried (and finds nothing)"


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "--kb", "missing.ttl", "--actions", "-"], "no such RDF file"),
        (["run", "--actions", "-"], "--kb"),
        (["run", "--kb", "demo", "--actions", "nope.txt"], "actions file not found"),
        (["run", "--kb", "demo", "--actions", "-", "--entities", "[1, 2]"], "--entities"),
        (["run", "--kb", "demo", "--actions", "-", "--profile", "dbpedia"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        (["compile", "nope.pyql"], "program file not found"),
    ],
)
def test_bad_usage_exits_2_with_one_line(args: list[str], message: str) -> None:
    result = pyql(*args, stdin="")
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_compile_and_actions_for_legacy_programs(tmp_path: Path) -> None:
    program = tmp_path / "p.pyql"
    program.write_text(
        "a=PyQL()\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\na.set_answer('x0')\n"
    )
    compiled = pyql("compile", str(program))
    assert compiled.returncode == 0
    assert "SELECT DISTINCT ?x0" in compiled.stdout and compiled.stdout.startswith("PREFIX")
    actions = pyql("actions", str(program))
    assert actions.stdout.splitlines() == ["add_fact(m.03_r3, location.country.languages_spoken, ?x0)", "set_answer(?x0)"]
    broken = pyql("compile", "-", stdin="a=PyQL()\na.add_fact('m.0', \n")
    assert broken.returncode == 2 and "line 2" in broken.stderr


def test_docs_formats() -> None:
    prompt = pyql("docs", "--format", "prompt")
    assert prompt.stdout.startswith("You can only choose actions from these")
    tools = json.loads(pyql("docs", "--format", "openai-tools").stdout)
    assert tools[0]["type"] == "function"
    assert "## `add_fact(head, relation, tail)`" in pyql("docs").stdout


def test_demo_runs_on_the_embedded_default() -> None:
    result = pyql("demo")
    assert result.returncode == 0, result.stderr
    assert "Answer: m.0107j2dw (Tropical Storm Dolly)" in result.stdout
    assert "Answer: m.02ml0h (Kathleen Blanco)" in result.stdout
    assert "SPARQL:" in result.stdout


def test_run_says_when_execute_failed_instead_of_not_called() -> None:
    result = pyql("run", "--kb", "demo", "--feedback", "raw", "--actions", "-", stdin="execute()\n")
    assert result.returncode == 4, result.stderr  # the step failed (issue 25)
    assert "execute() was not called" not in result.stdout
    assert "(execute() failed at action 1: bad_query; see its observation)" in result.stdout
    assert "the query is empty" in result.stdout


def test_run_help_names_every_kb_spec_and_the_endpoint_options() -> None:
    from pyql.kb import kb_backends

    text = " ".join(pyql("run", "--help").stdout.split())
    forms = [e.form for e in kb_backends.spec_forms()]
    for form in (*forms, "Turtle/N-Triples", "--kb-timeout", "--default-graph"):
        assert form in text, form


def test_count_cap_flag_caps_the_counts_of_every_kb() -> None:
    fact = "add_fact(?c, meteorology.tropical_cyclone.highest_winds, ?w)\n"
    capped = pyql("run", "--kb", "demo", "--count-cap", "2", "--feedback", "raw", "--actions", "-", stdin=fact)
    assert capped.returncode == 0, capped.stderr
    assert "more than 2" in capped.stdout
    exact = pyql("run", "--kb", "demo", "--feedback", "raw", "--actions", "-", stdin=fact)
    assert "more than" not in exact.stdout
    bad = pyql("run", "--kb", "demo", "--count-cap", "0", "--actions", "-", stdin=fact)
    assert bad.returncode == 2 and "--count-cap" in bad.stderr and "Traceback" not in bad.stderr


def test_run_uses_an_unlinked_id_that_is_in_the_kb_and_says_how_to_link_one_that_is_not() -> None:
    # issue 25: m.0crbvqz (the demo's own entity) was refused as unlinked_entity without --entities
    ok = pyql("run", "--kb", "demo", "--actions", "-", "--json",
              stdin="add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)\nexecute()\n")
    assert ok.returncode == 0, ok.stderr
    lines = [json.loads(line) for line in ok.stdout.splitlines()]
    assert lines[0]["ok"] and lines[-1]["answers"] == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]
    missing = pyql("run", "--kb", "demo", "--actions", "-", "--json", stdin="get_relation(m.0notinkb)\n")
    step = json.loads(missing.stdout.splitlines()[0])
    assert step["error"] == "unlinked_entity" and "m.0notinkb is not in the KB" in step["observation"]
    assert "--entities" in step["observation"] and "choose from: none" not in step["observation"]
    assert "An id that is in the KB can be used" in " ".join(pyql("run", "--help").stdout.split())


def test_agents_keep_the_linking_rule() -> None:
    from correction import Eraser
    from pyql.kb import KB
    from pyql.environment.sparql import SparqlEnvironment

    env = SparqlEnvironment(KB.open("demo"), analyzer=Eraser())  # as an agent's environment: entities_from_kb is False
    record = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    assert (record.ok, record.error) == (False, "unlinked_entity")
    assert "not in the KB" not in record.observation and "--entities" not in record.observation
