"""The ``agentbench`` format and the ``agentbench-kg`` data set: AgentBench's knowledge-graph actions to chains."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.evaluation.datasets import detect_format, load_dataset
from pyql.errors import ConversionError, InvalidActionError, ParseError, PyQLError
from pyql.interchange import convert
from pyql.interchange.agentbench import agentbench_form, read_agentbench
from pyql.interchange.sexpr import read_sexpr
from pyql.kb import KB
from pyql.builder.profiles import FREEBASE
from pyql.builder.terms import IRI

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "agentbench" / "kg_dev.json"


def test_each_function_makes_the_variable_agentbench_makes() -> None:
    text = "\n".join(
        [
            "get_relations(m.0a)",
            "get_neighbors(m.0a, a.b.c)",  # #0
            "get_neighbors(m.0b, a.b.d)",  # #1
            "intersection(#0, #1)",  # #2
            "get_attributes(#2)",
            "argmax(#2, a.b.year)",  # #3
            "count(#2)",  # #4
            "union(#0, #1)",  # #5
        ]
    )
    forms = [agentbench_form(text + f"\nFinal Answer: #{k}", {}) for k in range(6)]
    assert forms == [
        "(JOIN (R a.b.c) m.0a)",
        "(JOIN (R a.b.d) m.0b)",
        "(AND (JOIN (R a.b.c) m.0a) (JOIN (R a.b.d) m.0b))",
        "(ARGMAX (AND (JOIN (R a.b.c) m.0a) (JOIN (R a.b.d) m.0b)) a.b.year)",
        "(COUNT (AND (JOIN (R a.b.c) m.0a) (JOIN (R a.b.d) m.0b)))",
        "(OR (JOIN (R a.b.c) m.0a) (JOIN (R a.b.d) m.0b))",
    ]
    assert read_agentbench(text + "\nFinal Answer: #5", {}, FREEBASE).actions()[0].startswith("add_union(?x0, query(")
    with pytest.raises(ConversionError, match="ARGMAX must be the outermost"):
        read_agentbench(text + "\nget_neighbors(#3, a.b.e)\nFinal Answer: #6", {}, FREEBASE)


def test_an_agentinstruct_style_trajectory_with_names_parses_and_replays(tmp_path: Path) -> None:
    """Names with apostrophes and commas, thoughts and observations between, the answer on the KB."""
    conversation = {
        "conversations": [
            {"from": "human", "value": "Question: which films did O'Neil, Jr. direct in 2001?\nEntities: [O'Neil, Jr.]"},
            {"from": "gpt", "value": "Thought: I need his films.\nAction: get_relations(O'Neil, Jr.)"},
            {"from": "human", "value": "Observation: [film.director.film, people.person.nationality]"},
            {"from": "gpt", "value": "Thought: films he directed.\nAction: get_neighbors(O'Neil, Jr., film.director.film)"},
            {"from": "human", "value": "Observation: variable #0, which are instances of film.film"},
            {"from": "gpt", "value": "Thought: #0 is the answer.\nFinal Answer: #0"},
        ]
    }
    entities = {"O'Neil, Jr.": "m.0d"}
    query = read_agentbench(json.dumps(conversation), entities, FREEBASE)
    assert query.actions() == ["add_fact(m.0d, film.director.film, ?x0)", "set_answer(?x0)"]
    path = tmp_path / "kb.ttl"
    path.write_text(
        "@prefix ns: <http://rdf.freebase.com/ns/> .\n"
        "ns:m.0d ns:film.director.film ns:m.0f1, ns:m.0f2 .\nns:m.0e ns:film.director.film ns:m.0f3 .\n"
    )
    rows = KB.open(str(path)).select(query.sparql())
    assert {FREEBASE.shorten(v.value) for row in rows for v in row.values() if isinstance(v, IRI)} == {"m.0f1", "m.0f2"}


@pytest.mark.parametrize(
    "text,error,words",
    [
        ("get_entities_of_type(film.film)\nFinal Answer: #0", InvalidActionError, ["line 1", "get_entities_of_type", "get_neighbors"]),
        ("get_neighbors(m.0a, a.b.c)\nintersection(#0, #3)\nFinal Answer: #1", ParseError, ["line 2", "#3 does not exist", "#0..#0"]),
        ("get_neighbors(m.0a, a.b.c)", ParseError, ["no 'Final Answer"]),
        ("get_neighbors(common.topic, a.b.c)\nFinal Answer: #0", ParseError, ["'common.topic' is neither"]),
        ("get_neighbors(m.0a, a b)\nFinal Answer: #0", ParseError, ["'a b' is not a relation"]),
        ("get_neighbors(m.0a)\nFinal Answer: #0", PyQLError, ["takes 2 arguments"]),
        ("count(m.0a)\nFinal Answer: #0", ParseError, ["expected a variable #k"]),
        ("Final Answer: #0", ParseError, ["#0 does not exist", "none yet"]),
    ],
)
def test_bad_trajectories_name_the_line(text: str, error: type, words: list[str]) -> None:
    with pytest.raises(error) as caught:
        read_agentbench(text, {}, FREEBASE)
    for word in words:
        assert word in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_chain_or_one_pyql_error(text: str) -> None:
    try:
        read_agentbench(text, {"A, b": "m.0a"}, FREEBASE)
    except PyQLError as exc:
        assert str(exc)


def test_agentbench_data_loads_with_its_gold_chains() -> None:
    records = json.loads(DEV.read_text())
    assert detect_format(json.loads(DEV.read_text())[0]) == "agentbench-kg"
    dataset = load_dataset(DEV)
    items = list(dataset.items)
    assert len(items) == len(records) == 11
    by_id = {item["id"]: item for item in items}
    for record in records:
        item = by_id[record["qid"]]
        assert item["entities"] == record["entities"] and item["kind"] == record["source"]
        assert [a["value"] if isinstance(a, dict) else a for a in item["answers"]] == [a["answer_argument"] for a in record["answer"]]
        if "common.topic" in json.dumps(record["actions"]):  # a class given as an entity: AgentBench's api refuses it too
            assert item["actions"] is None
            continue
        # the gold chain is the chain of the record's actions, and its form is theirs
        assert item["actions"][-1] == "execute()"
        assert convert("\n".join(item["actions"][:-1]), "actions", "sexpr") == convert(
            "\n".join(record["actions"]) + f"\nFinal Answer: #{_made(record['actions']) - 1}", "agentbench", "sexpr"
        )


def _made(actions: list[str]) -> int:
    return sum(not a.startswith(("get_relations", "get_attributes")) for a in actions)


def test_the_gold_forms_of_the_fixture_read_to_chains_too() -> None:
    for record in json.loads(DEV.read_text()):
        if "common.topic" not in record["s_expression"]:
            assert read_sexpr(record["s_expression"], {}, FREEBASE).steps


@pytest.mark.cli
def test_convert_command_reads_agentbench_jsonl_with_entities() -> None:
    item = {"id": "a", "input": "Action: get_neighbors(Goat, b.c.d)\nFinal Answer: #0", "entities": {"Goat": "m.03fwl"}}
    done = subprocess.run(
        [sys.executable, "-m", "pyql.cli", "convert", "--from", "agentbench", "--to", "sexpr", "--jsonl"],
        input=(json.dumps(item) + "\n").encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"id": "a", "output": "(JOIN (R b.c.d) m.03fwl)"}


def _tool_turn(thought: str, name: str, arguments: str) -> list[dict[str, object]]:
    call = {"function": {"arguments": arguments, "name": name}, "id": "call_bl80SGcnZhRLsKtoFIUNR80D", "type": "function"}
    tool = {"role": "tool", "tool_call_id": "call_bl80SGcnZhRLsKtoFIUNR80D", "content": "Observation: ..."}
    return [{"role": "assistant", "content": thought, "tool_calls": [call]}, tool]


#: The one-shot demo of AgentBench's knowledge-graph task in its function-calling form, as the task
#: writes it (THUDM/AgentBench, src/server/tasks/knowledgegraph/const.py, ONE_SHOT; Apache-2.0), the
#: observations shortened: its arguments as written, a stray brace inside two relations included.
AGENTBENCH_ONE_SHOT: list[dict[str, object]] = [
    {"role": "user", "content": "Question: the bipropellant rocket engine with kerosene and gas-generator cycle is designed by who? \nEntities: [Gas-generator cycle, Kerosene]"},
    *_tool_turn("Thought: I need to first find engines with gas-generator cycle.", "get_relations", '{"variable":"Gas-generator cycle"}'),
    *_tool_turn("Thought: From the above relations, I might use ...", "get_neighbors",
                '{"variable":"Gas-generator cycle", "relation": "spaceflight.rocket_engine_cycle.rocket_engines}"}'),
    *_tool_turn("Thought: I also need to find engines with kerosene.", "get_relations", '{"variable":"Kerosene"}'),
    *_tool_turn("Thought: From the above relations, I might use ...", "get_neighbors",
                '{"variable":"Kerosene", "relation": "spaceflight.rocket_engine_cycle.rocket_engines}"}'),
    *_tool_turn("Thought: From the above relations, I might use ...", "intersection", '{"variable1":"#0", "variable2": "#2"}'),
    *_tool_turn("Thought: From the above relations, I might use ...", "get_neighbors", '{"variable":"#2", "relation": "spaceflight.rocket_engine.designed_by"}'),
    {"role": "assistant", "content": "Thought: #3 is the final answer to the question, which represents the target rocket engine designer. Final Answer: #3"},
]
DEMO_ENTITIES = {"Gas-generator cycle": "m.04qqvv", "Kerosene": "m.kerosene"}


def test_agentbench_one_shot_demo_in_tool_calls_is_read_and_its_own_slip_is_named() -> None:
    """The task's demo intersects #0 with #2 before #2 exists (#1 was meant): the reader says so, naming the line (the fifth of the model's calls)."""
    with pytest.raises(ParseError, match=r"line 5: #2 does not exist \(variables made so far: #0\.\.#1\)"):
        agentbench_form(json.dumps(AGENTBENCH_ONE_SHOT), DEMO_ENTITIES)


def test_agentbench_tool_calls_read_as_the_task_runs_them() -> None:
    """With #1 intersected, the demo is the engines' designers; braces slipped into a relation are dropped."""
    mended = json.loads(json.dumps(AGENTBENCH_ONE_SHOT).replace('"variable2\\": \\"#2\\"', '"variable2\\": \\"#1\\"'))
    rocket = "spaceflight.rocket_engine_cycle.rocket_engines"
    assert agentbench_form(json.dumps(mended), DEMO_ENTITIES) == (
        f"(JOIN (R spaceflight.rocket_engine.designed_by) (AND (JOIN (R {rocket}) m.04qqvv) (JOIN (R {rocket}) m.kerosene)))"
    )
    (line,) = convert(json.dumps(mended), "agentbench", "actions", entities=DEMO_ENTITIES).splitlines()[-1:]
    assert line.startswith("set_answer(")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        ({"function": {"name": "get_entities_of_type", "arguments": '{"type": "film.film"}'}}, InvalidActionError, "not one of AgentBench's functions"),
        ({"function": {"name": "get_neighbors", "arguments": '{"variable": "#0"}'}}, ParseError, "missing relation"),
        ({"function": {"name": "get_relations", "arguments": "{variable: Kerosene"}}, ParseError, "are not JSON"),
        ({"function": {"name": "count", "arguments": "[1, 2]"}}, ParseError, "not a JSON object"),
        ({"function": {"arguments": "{}"}}, ParseError, "without a function name"),
    ],
)
def test_agentbench_bad_tool_calls_name_the_turn(call: dict[str, object], error: type[Exception], message: str) -> None:
    turns = [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "assistant", "content": "Final Answer: #0"}]
    with pytest.raises(error, match=message):
        agentbench_form(json.dumps(turns), {"Kerosene": "m.kerosene"})
