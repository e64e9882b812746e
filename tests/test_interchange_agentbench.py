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
from pyql.profiles import FREEBASE
from pyql.terms import IRI

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
