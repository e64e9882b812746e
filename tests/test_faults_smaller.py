"""The smaller faults of the third pass (issue 35, items 11-15), each as its repro ran.

11. A quoted value holding ``;`` (``insert_row(Nation = "a; b")``) was split at the ``;``: the step failed, and
    the choose mode never offered such a value. Now a quote that starts a field quotes it up to its closing quote.
12. ``--out`` naming a directory said "already exists: give --resume", and with ``--resume`` "not a regular
    file". Now both say at once that it is a directory.
13. ``pyql ask --table-json`` on a dbbench item offered no ``insert_row``/``update_rows``; only ``pyql eval``
    did. Now the same item gets the same actions from both.
14. The AgentBench action set listed ``rdfs:label`` among an entity's relations, which AgentBench's
    ``get_relations`` never does. Now labels are neither listed nor followed.
15. A failed start left an empty run file (and the directories made for it) behind, and so did a replay
    stopped by a damaged recording entry at its first question. Now what the run made and never wrote is
    removed; a file the user had is kept.

The services are loopback servers (:mod:`tests.fault_servers`); the commands run as subprocesses, except the
one start that needs the local model to be missing (in process, as ``tests/test_eval.py`` does).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyql.cli import EXIT_OK, EXIT_USAGE, main
from pyql.kb import KB
from pyql.environment.agentbench import AgentBenchEnvironment
from pyql_sql import Table
from pyql_sql.mutation import parse_assignments, split_assignments
from pyql_sql.mutation_steps import mutation_next_steps
from pyql_sql.writable_environment import WritableTableEnvironment
from tests.fault_servers import FakeLLMServer, GoldResponder
from tests.test_faults_cli import demo_items, json_lines, one_line, pyql, stderr_of

FB = "http://rdf.freebase.com/ns/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def _lines(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def _scores() -> Table:
    return Table.from_rows(["Nation", "Total"], [["Japan", "22.1"], ["Peru", "21.0"]], name="Scores")


def _dbbench_item(description: str, gold: str, kind: str) -> dict[str, Any]:
    """A dbbench change item on the Scores table (AgentBench's shape: every column TEXT)."""
    return {
        "description": description,
        "label": [gold],
        "type": [kind],
        "table": {"table_name": "Scores", "table_info": {
            "columns": [{"name": "Nation", "type": "TEXT"}, {"name": "Total", "type": "TEXT"}],
            "rows": [["Japan", "22.1"], ["Peru", "21.0"]]}},
    }


def _prompts(llm: FakeLLMServer) -> list[str]:
    out = []
    for request in llm.posts:
        body = json.loads(request["body"])
        out.append(body["prompt"] if "prompt" in body else "\n".join(m["content"] for m in body["messages"]))
    return out


# ---------------------------------------------------------------------------
# 11. A quoted value holding ';'


@pytest.mark.parametrize(
    ("action", "row"),
    [
        ('insert_row(Nation = "a; b")', ("a; b", None)),
        ("insert_row(Nation = 'a; b'; Total = 3)", ("a; b", "3")),
        ('insert_row(Nation = `x = y; z`; Total = "1; 2")', ("x = y; z", "1; 2")),
        ('insert_row("a; b"; 3)', ("a; b", "3")),  # by position
        ("insert_row(Nation = O'Brien; Total = 3)", ("O'Brien", "3")),  # a quote inside a value is text
    ],
)
def test_a_quoted_value_holding_a_semicolon_is_one_value(action: str, row: tuple[str, str | None]) -> None:
    env = WritableTableEnvironment(_scores())
    step = env.step(action)
    assert step.ok, step.observation
    assert env.state is not None and env.state.rows()[-1] == row


def test_update_rows_sets_a_value_holding_a_semicolon() -> None:
    env = WritableTableEnvironment(_scores(), question="Japan's nation is now 'Japan; JPN'.")
    assert env.step("add_condition(Nation, =, Japan)").ok
    step = env.step('update_rows(Nation = "Japan; JPN")')
    assert step.ok, step.observation
    assert env.state is not None and env.state.rows()[0] == ("Japan; JPN", "22.1")


def test_an_unclosed_quote_is_text_and_a_bad_part_says_how_to_quote() -> None:
    assert split_assignments("Nation = 'tis; Total = 3") == [["Nation ", " 'tis"], [" Total ", " 3"]]
    env = WritableTableEnvironment(_scores())
    step = env.step('insert_row(Nation = "a; b" c; Total = 3)')  # the quote does not close before ';': split there
    assert step.error == "bad_mutation" and "quote a value that holds ';'" in step.observation


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ;=,'\"`xé")), min_size=1, max_size=12))
def test_what_the_choose_mode_writes_reads_back_whole(value: str) -> None:
    """The enumerator's quoting (``_quote``) and the reader (``split_assignments``) agree on every value it writes."""
    from pyql_sql.mutation_steps import _quote

    written = _quote(value)
    if written is None:  # holds every quote and needs one: not offered
        return
    t = Table.from_rows(["Notes", "Other"], [["x", "y"]], name="T")
    got = parse_assignments(t, f"Notes = {written}; Other = 1")
    assert [a.value for a in got] == [value.strip() if written == value else value, "1"]


def test_the_choose_mode_offers_a_value_holding_a_semicolon() -> None:
    env = WritableTableEnvironment(_scores(), question="Insert a new row with nation 'Peru; Lima' and total 5.")
    steps = [s.action for s in mutation_next_steps(env)]
    assert steps == ["insert_row(Nation = 'Peru; Lima'; Total = 5)"]
    assert env.step(steps[0]).ok and env.state is not None and env.state.rows()[-1] == ("Peru; Lima", "5")


@pytest.mark.cli
def test_eval_scores_an_insert_of_a_value_holding_a_semicolon(tmp_path: Path) -> None:
    """The repro through ``pyql eval``: the gold statement inserts 'a; b'; the model's insert_row is the same row."""
    question = "Insert a new row for the nation 'a; b' with a total of 3."
    data = _lines(tmp_path / "dev.jsonl", [_dbbench_item(question, "INSERT INTO Scores VALUES ('a; b', '3')", "INSERT")])
    plan = [{"question": question, "id": "dev-0", "actions": ['insert_row(Nation = "a; b"; Total = 3)']}]
    out = tmp_path / "run.jsonl"
    with FakeLLMServer(GoldResponder(plan)) as llm:
        done = pyql("eval", str(data), "--out", str(out), "--base-url", llm.url, "--model", "fake")
    assert done.returncode == EXIT_OK, stderr_of(done)
    record = json_lines(out.read_bytes())[0]
    assert record["steps"][0]["ok"], record["steps"][0]
    assert record["metrics"]["f1"] == 1.0 and record["answers"][0]["value"] == record["gold"][0]


# ---------------------------------------------------------------------------
# 12. --out naming a directory


@pytest.mark.cli
@pytest.mark.parametrize("resume", [False, True])
def test_eval_out_naming_a_directory_says_so_at_once(tmp_path: Path, resume: bool) -> None:
    out = tmp_path / "runs"
    out.mkdir()
    (out / "old.jsonl").write_text('{"id": "q01"}\n', encoding="utf-8")  # a directory with files in it
    data = _lines(tmp_path / "data.jsonl", demo_items("q01"))
    with FakeLLMServer(GoldResponder(demo_items("q01"))) as llm:
        done = pyql("eval", str(data), "--kb", "demo", "--out", str(out), "--base-url", llm.url, "--model", "fake",
                    *(["--resume"] if resume else []))
        asked = len(llm.posts)
    assert done.returncode == EXIT_USAGE and asked == 0
    line = one_line(stderr_of(done))
    assert f"the run file {out} is a directory: give --out a file path, such as {out / 'run.jsonl'}" in line, line
    assert "already exists" not in line and "--resume" not in line
    assert sorted(p.name for p in out.iterdir()) == ["old.jsonl"]  # nothing written into it, no lock left


@pytest.mark.cli
def test_ask_out_naming_a_directory_says_so_before_asking(tmp_path: Path) -> None:
    with FakeLLMServer(GoldResponder(demo_items("q01"))) as llm:
        done = pyql("ask", "what category is tropical storm rachel?", "--kb", "demo", "--base-url", llm.url,
                    "--model", "fake", "--out", str(tmp_path))
        asked = len(llm.posts)
    assert done.returncode == EXIT_USAGE and asked == 0
    assert f"the run file {tmp_path} is a directory" in one_line(stderr_of(done))


# ---------------------------------------------------------------------------
# 13. pyql ask and pyql eval give a dbbench item the same actions

_ACTION_LINE = re.compile(r"^\d+\. `([a-z_]+)\(", re.M)


def _offered(prompt: str) -> list[str]:
    """The actions a prompt lists (``6. `insert_row(values)```), in order."""
    return _ACTION_LINE.findall(prompt)


@pytest.mark.cli
@pytest.mark.parametrize("kind", ["INSERT", "UPDATE"])
def test_ask_and_eval_offer_a_dbbench_item_the_same_actions(tmp_path: Path, kind: str) -> None:
    if kind == "INSERT":
        question = "Insert a new row for the nation Chile with a total of 20.5."
        item = _dbbench_item(question, "INSERT INTO Scores VALUES ('Chile', '20.5')", kind)
        actions = ["insert_row(Nation = Chile; Total = 20.5)"]
    else:
        question = "Japan's total is now 22.950."
        item = _dbbench_item(question, "UPDATE Scores SET Total = '22.950' WHERE Nation = 'Japan'", kind)
        actions = ["add_condition(Nation, =, Japan)", "update_rows(Total = 22.950)"]
    data = _lines(tmp_path / "dev.jsonl", [item])
    (tmp_path / "item.json").write_text(json.dumps(item), encoding="utf-8")
    plan = [{"question": question, "id": "dev-0", "actions": actions}]
    with FakeLLMServer(GoldResponder(plan)) as llm:
        asked = pyql("ask", question, "--table-json", str(tmp_path / "item.json"), "--base-url", llm.url,
                     "--model", "fake", "--json")
        ask_prompts = _prompts(llm)
        evaluated = pyql("eval", str(data), "--out", str(tmp_path / "run.jsonl"), "--base-url", llm.url, "--model", "fake")
        eval_prompts = _prompts(llm)[len(ask_prompts):]
    assert asked.returncode == EXIT_OK, stderr_of(asked)
    assert evaluated.returncode == EXIT_OK, stderr_of(evaluated)
    offered = _offered(ask_prompts[0])
    assert {"insert_row", "update_rows"} <= set(offered), offered
    assert offered == _offered(eval_prompts[0])
    summary = json.loads(asked.stdout.decode("utf-8").splitlines()[-1])
    record = json_lines((tmp_path / "run.jsonl").read_bytes())[0]
    assert record["metrics"]["f1"] == 1.0
    assert [a["value"] for a in summary["answers"]] == [a["value"] for a in record["answers"]] == record["gold"]


@pytest.mark.cli
def test_run_table_json_on_a_dbbench_item_may_change_its_copy(tmp_path: Path) -> None:
    item = _dbbench_item("Add Chile.", "INSERT INTO Scores VALUES ('Chile', '1')", "INSERT")
    (tmp_path / "item.json").write_text(json.dumps(item), encoding="utf-8")
    done = pyql("run", "--table-json", str(tmp_path / "item.json"), "--actions", "-", "--json",
                stdin=b"insert_row(Nation = Chile; Total = 1)\n")
    assert done.returncode == EXIT_OK, stderr_of(done)
    assert json.loads(done.stdout.decode("utf-8").splitlines()[-1])["answers"][0]["value"].startswith("table-state:")
    assert json.loads((tmp_path / "item.json").read_text(encoding="utf-8")) == item  # the user's file is untouched


# ---------------------------------------------------------------------------
# 14. AgentBench's get_relations lists no label


def _labelled_kb(tmp_path: Path) -> Path:
    path = tmp_path / "labelled.nt"
    path.write_text(
        f'<{FB}m.01> <{RDFS_LABEL}> "Thing One"@en .\n'
        f'<{FB}m.01> <{FB}type.object.name> "Thing One"@en .\n'
        f"<{FB}m.01> <{FB}a.b.c> <{FB}m.02> .\n"
        f'<{FB}m.02> <{RDFS_LABEL}> "Thing Two"@en .\n'
        f"<{FB}m.02> <{FB}a.b.d> <{FB}m.01> .\n",
        encoding="utf-8",
    )
    return path


def test_agentbench_lists_and_follows_no_label(tmp_path: Path) -> None:
    env = AgentBenchEnvironment(KB.open(str(_labelled_kb(tmp_path)), "freebase"), entities={"Thing One": "m.01"})
    assert env.step("get_relations(Thing One)").observation == "[a.b.c]"
    refused = env.step("get_neighbors(Thing One, rdfs:label)")
    assert refused.error == "bad_argument" and "rdfs:label is not a relation of m.01; its relations are [a.b.c]" in refused.observation
    assert env.step("get_neighbors(Thing One, a.b.c)").ok
    assert env.step("get_relations(#0)").observation == "[a.b.d]"  # a variable's relations alike


@pytest.mark.cli
def test_pyql_run_agentbench_lists_no_label(tmp_path: Path) -> None:
    done = pyql("run", "--kb", str(_labelled_kb(tmp_path)), "--profile", "freebase", "--action-set", "agentbench",
                "--entities", json.dumps({"Thing One": "m.01"}), "--actions", "-", "--json",
                stdin=b"get_relations(Thing One)\n")
    assert done.returncode == EXIT_OK, stderr_of(done)
    first = json.loads(done.stdout.decode("utf-8").splitlines()[0])
    assert first["observation"] == "[a.b.c]"


# ---------------------------------------------------------------------------
# 15. A failed start leaves no run file


@pytest.mark.cli
def test_a_failed_start_leaves_no_run_file_nor_its_directories(tmp_path: Path) -> None:
    data = _lines(tmp_path / "data.jsonl", demo_items("q01"))
    out = tmp_path / "results" / "today" / "run0.jsonl"
    done = pyql("eval", str(data), "--kb", str(tmp_path / "no-such.nt"), "--out", str(out),
                "--base-url", "http://127.0.0.1:9/v1", "--model", "fake")
    assert done.returncode == EXIT_USAGE and "no such RDF file" in one_line(stderr_of(done))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl"]  # no run file, no lock, no directory


@pytest.mark.cli
def test_a_failed_start_keeps_the_file_the_user_had(tmp_path: Path) -> None:
    data = _lines(tmp_path / "data.jsonl", demo_items("q01"))
    out = tmp_path / "run0.jsonl"
    out.touch()  # the user's, empty
    done = pyql("eval", str(data), "--kb", str(tmp_path / "no-such.nt"), "--out", str(out),
                "--base-url", "http://127.0.0.1:9/v1", "--model", "fake")
    assert done.returncode == EXIT_USAGE
    assert out.exists() and out.read_bytes() == b""
    assert not out.with_name("run0.jsonl.lock").exists()


def test_eval_without_an_llm_leaves_no_run_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's repro: no LLM configured and no local model: exit 2, and no ``run0.jsonl``."""
    import agent.llm.local

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(agent.llm.local, "local_available", lambda: False)  # as on a machine without pyql[local]
    monkeypatch.setattr(agent.llm.local, "running_server", lambda: None)  # nor a `pyql llm serve` running
    data = _lines(tmp_path / "data.jsonl", demo_items("q01"))
    out = tmp_path / "run0.jsonl"
    err = io.StringIO()
    assert main(["eval", str(data), "--kb", "demo", "--out", str(out)], out=err) == EXIT_USAGE
    assert "no LLM is configured" in err.getvalue()
    assert not out.exists() and not out.with_name("run0.jsonl.lock").exists()
