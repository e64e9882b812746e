"""MarkQA data (issue 21, item 7): the loader, MarkQA's answer rule, and ``pyql eval --by comp_level``.

The fixture ``tests/data/markqa/mark_dev_sample.json`` is in MarkQA's shape
with questions of pyql's Wikidata demo (see ``tests/data/markqa/README.md``),
so its gold programs and SPARQL run on ``pyql/data/wikidata_demo.ttl``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest

from agent.errors import DatasetError
from agent.evaluation.datasets import detect_format, load_dataset
from agent.evaluation.metrics import (
    CATEGORY_KEYS,
    aggregate,
    by_category,
    category_of,
    category_table,
    markqa_answer_match,
    summary_markdown,
)
from tests.fault_servers import FakeLLMServer, GoldResponder
from pyql.interchange.markqa import program_to_query

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "markqa" / "mark_dev_sample.json"
KB = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
PREFIXES = "".join(
    f"PREFIX {p}: <{iri}>\n"
    for p, iri in (
        ("wd", "http://www.wikidata.org/entity/"),
        ("wdt", "http://www.wikidata.org/prop/direct/"),
        ("p", "http://www.wikidata.org/prop/"),
        ("ps", "http://www.wikidata.org/prop/statement/"),
        ("psv", "http://www.wikidata.org/prop/statement/value/"),
        ("pq", "http://www.wikidata.org/prop/qualifier/"),
        ("pqv", "http://www.wikidata.org/prop/qualifier/value/"),
        ("wikibase", "http://wikiba.se/ontology#"),
        ("xsd", "http://www.w3.org/2001/XMLSchema#"),
        ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    )
)


def records() -> list[dict[str, Any]]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def write(tmp_path: Path, recs: Any, name: str = "mark_dev.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(recs), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# Detection and loading


def test_detection() -> None:
    assert detect_format({"ID": "17162215568_all_17", "question": "q", "comp_level": "iid"}) == "markqa"
    # a MarkQA train record has ID, question and sparql, as a CWQ record does: comp_level decides
    assert detect_format({"ID": "1_all_2", "question": "q", "comp_level": "iid", "sparql": "SELECT ..."}) == "markqa"
    assert detect_format({"ID": "WebQTrn-1_x", "question": "q", "sparql": "SELECT ..."}) == "cwq"


def test_the_sample_loads() -> None:
    ds = load_dataset(SAMPLE)
    assert ds.format == "markqa" and len(ds) == 9
    by_id = {item["id"]: item for item in ds}
    w28 = by_id["w28"]
    assert w28["kind"] == "compositional" and w28["source"] == "markqa"
    assert w28["groups"] == {"comp_level": "compositional", "composition": "no_composition"}
    assert w28["entities"] == {"city": "Q515", "Germany": "Q183"}  # gold_entity_label_map, inverted
    assert w28["answers"][0] == "http://www.wikidata.org/entity/Q1055"
    assert set(w28["gold_query"]) == {"sparql", "PyQL"}
    # w16's PyQL has no print line (MarkQA's evaluation prints the last object): its chain is the count
    assert by_id["w16"]["actions"] == [
        "add_type_constrain(wd:Q1549591, ?city)", "add_fact(?city, wdt:P17, wd:Q183)",
        "add_count(?city, ?number_of_cities)", "execute()"]
    # every program's action lines now read back to the same query (quantities, binds, sub-queries included)
    assert sum(item["actions"] is None for item in ds) == 0
    assert all(item["actions"][-1] == "execute()" for item in ds)
    assert not any("no action lines build the same query" in n for n in ds.notes)


def test_test_file_shape_without_answers(tmp_path: Path) -> None:
    recs = [{"ID": "17162215568_all_17-1-entities(1)-hops(2)", "question": "What is ...?", "comp_level": "iid"},
            {"ID": "5222957795_all_18", "question": "Which ...?", "comp_level": "zero-shot"}]
    ds = load_dataset(write(tmp_path, recs, "mark_test.json"))
    assert [i["answers"] for i in ds] == [None, None]
    assert [i["groups"]["composition"] for i in ds] == ["composition", "no_composition"]
    assert [i["entities"] for i in ds] == [{}, {}]
    assert any("2 of 2 items have no answer" in n for n in ds.notes)


def test_entities_fall_back_to_the_qids_of_the_program(tmp_path: Path) -> None:
    rec = {k: v for k, v in records()[0].items() if k != "gold_entity_label_map"}
    (item,) = load_dataset(write(tmp_path, [rec]))
    assert item["entities"] == {"Q1055": "Q1055", "Q1726": "Q1726"}


def test_unknown_levels_and_broken_programs_are_noted(tmp_path: Path) -> None:
    recs = [{"ID": "a", "question": "q", "comp_level": "hard", "PyQL": "a = PyQL()\na.add_fact('Q64', 'P17')", "answer": ["x"]},
            {"ID": "b", "question": "q", "comp_level": "iid", "answer": []}]
    ds = load_dataset(write(tmp_path, recs))
    assert ds[0]["actions"] is None
    assert any("1 of 2 PyQL programs do not import (first: ID a: MarkQA program, line 2, column 1: add_fact()" in n for n in ds.notes)
    assert any("comp_level values other than MarkQA's iid, compositional, zero-shot: hard (1)" in n for n in ds.notes)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("comp_level"), "item 1 (ID w02): comp_level is missing; a MarkQA record needs ID, question and comp_level"),
        (lambda r: r.pop("question"), "item 1 (ID w02): question is missing"),
        (lambda r: r.update(comp_level=2), "item 1 (ID w02): comp_level must be a non-empty string, got int"),
        (lambda r: r.update(question="  "), "item 1 (ID w02): question must be a non-empty string, got an empty string"),
        (lambda r: r.update(ID=["w02"]), "item 1: ID must be a non-empty string, got list"),
        (lambda r: r.update(answer="2.87"), "item 1 (ID w02): answer must be a list of values (strings or numbers), got str"),
        (lambda r: r.update(answer=["2.87", {"ratio": "2.87"}]), "item 1 (ID w02): answer[1] must be a string, number or boolean"),
        (lambda r: r.update(answer=[None]), "item 1 (ID w02): answer[0] must be a string, number or boolean (a value MarkQA's executor returns), got null"),
        (lambda r: r.update(PyQL=["a = PyQL()"]), "item 1 (ID w02): PyQL must be a non-empty string, got list"),
        (lambda r: r.update(sparql=7), "item 1 (ID w02): sparql must be a non-empty string, got int"),
        (lambda r: r.update(gold_entity_label_map=["Q64"]), "item 1 (ID w02): gold_entity_label_map must map QIDs to labels"),
    ],
)
def test_bad_records_name_the_item_and_field(tmp_path: Path, change: Any, message: str) -> None:
    recs = records()[:3]
    change(recs[1])
    with pytest.raises(DatasetError) as info:
        load_dataset(write(tmp_path, recs))
    assert message in str(info.value) and "mark_dev.json" in str(info.value)


def test_a_record_that_is_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"item 1: not a JSON object \(a MarkQA record is \{ID, question, comp_level, \.\.\.\}\), got list"):
        load_dataset(write(tmp_path, [records()[0], ["w02"]]))


def test_an_integer_id_is_read_as_text(tmp_path: Path) -> None:
    rec = dict(records()[0], ID=17162215568)
    assert load_dataset(write(tmp_path, [rec]))[0]["id"] == "17162215568"


# ---------------------------------------------------------------------------
# MarkQA's answer rule


@pytest.mark.parametrize(
    ("predicted", "gold", "ok"),
    [
        # numbers as strings, JSON numbers, other spellings of the same number
        (["366227.0"], ["366227"], True),
        (["366227"], [366227], True),
        (["3.6622700E5"], ["366227"], True),
        ([{"value": "2.868104280656581911", "label": None}], ["2.868104"], True),  # |diff| = 2.8e-7 <= 1e-5
        # rounding: an absolute tolerance of 1e-5, no relative one, no rounding
        (["2.87"], ["2.868104280656581911"], False),
        (["1641487.53"], ["1641488"], False),
        (["0.000012"], ["0.000001"], False),
        (["0.000009"], ["0.000001"], True),
        (["1e21"], ["1000000000000000000001"], True),  # both floats: 1e21 (MarkQA's float(), too)
        # yes/no: MarkQA binds TRUE/FALSE; pyql's ASK answers yes/no; JSON has true/false
        ([{"value": "yes", "label": None}], ["TRUE"], True),
        ([{"value": "no", "label": None}], ["TRUE"], False),
        (["FALSE"], [False], True),
        (["True"], [True], True),
        (["1"], [True], False),  # MarkQA's code would call a JSON true equal to 1; here it is TRUE
        # dates: the same UTC dateTime however an engine writes it; a date is not a dateTime
        (["2021-08-08T00:00:00+00:00"], ["2021-08-08T00:00:00Z"], True),
        (['"2021-08-08T00:00:00.000Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'], ["2021-08-08T00:00:00Z"], True),
        (["2021-08-08"], ["2021-08-08T00:00:00Z"], False),
        (["2021-08-09T00:00:00Z"], ["2021-08-08T00:00:00Z"], False),
        # strings: case and spaces count, as in MarkQA
        (["berlin"], ["Berlin"], False),
        ([" Berlin"], ["Berlin"], False),
        # lists: sets of values, the same size, paired in string order
        (["wd:Q64", {"value": "Q1055", "label": "Hamburg"}], ["http://www.wikidata.org/entity/Q1055", "http://www.wikidata.org/entity/Q64"], True),
        (["Q64", "Q64", "Q1055"], ["Q1055", "Q64"], True),
        (["Q64"], ["Q1055", "Q64"], False),
        (["Q64", "Q1055", "Q1"], ["Q1055", "Q64"], False),
        (["5.0", "9.999999"], ["5", "10"], False),  # MarkQA's pairing: "10" meets "5.0"
        (["5.0", "10.000001"], ["5", "10"], True),
        (["5", "5.0"], ["5"], False),  # two strings, two values
        # no answer is never right (MarkQA: UNEXECUTABLE)
        ([], [], False),
        ([], ["5"], False),
        # not-a-number compares as text (MarkQA's code would call NaN equal to every number)
        (["NaN"], ["5"], False),
        (["nan"], ["nan"], True),
    ],
)
def test_markqa_answer_rule(predicted: list[Any], gold: list[Any], ok: bool) -> None:
    assert markqa_answer_match(predicted, gold) is ok


def test_the_format_hook_scores_denotation_and_the_runs_table() -> None:
    recs = [
        {"source": "markqa", "kind": "iid", "groups": {"comp_level": "iid", "composition": "no_composition"},
         "answers": [{"value": "366227.000001", "label": None}], "gold": ["366227"]},
        {"source": "markqa", "kind": "iid", "groups": {"comp_level": "iid", "composition": "composition"},
         "answers": [{"value": "366228", "label": None}], "gold": ["366227"]},
        {"source": "markqa", "kind": "zero-shot", "groups": {"comp_level": "zero-shot", "composition": "composition"},
         "answers": [{"value": "yes", "label": None}], "gold": ["TRUE"]},
        {"source": "markqa", "kind": "zero-shot", "answers": [], "gold": None},  # the test file: no gold
    ]
    m = aggregate(recs)
    assert (m.denotation, m.denotation_questions, m.table_questions) == (2 / 3, 3, 0)
    assert "| denotation accuracy (3 questions) | 0.667 |" in m.table()
    assert {k: v.denotation for k, v in by_category(recs, "comp_level").items()} == {"iid": 0.5, "zero-shot": 1.0}
    assert {k: v.denotation for k, v in by_category(recs, "composition").items()} == {
        "composition": 0.5, "no_composition": 1.0, "(none)": None}
    table = category_table(recs, "comp_level")
    assert table.splitlines()[2].startswith("| iid | 2 |") and "| 50.0 |" in table.splitlines()[2]
    summary = summary_markdown(recs)
    assert "## MarkQA, as in the papers' tables" in summary and "## Per comp_level" in summary and "## Per composition" in summary


def test_grouping_keys_come_from_the_formats() -> None:
    assert {"level", "type", "comp_level", "composition"} <= set(CATEGORY_KEYS)
    assert category_of({"kind": "iid", "source": "markqa"}, "comp_level") == "iid"
    # a groups-only key is not answered by another format's kind
    assert category_of({"kind": "conjunction", "source": "cwq"}, "composition") == "(none)"


# ---------------------------------------------------------------------------
# The fixture's gold runs on the Wikidata demo


@pytest.fixture(scope="module")
def store() -> pyoxigraph.Store:
    s = pyoxigraph.Store()
    s.load(path=str(KB), format=pyoxigraph.RdfFormat.TURTLE)
    return s


def _values(store: pyoxigraph.Store, sparql: str) -> list[str]:
    solutions = store.query(sparql)
    if isinstance(solutions, pyoxigraph.QueryBoolean):
        return ["TRUE" if bool(solutions) else "FALSE"]
    first = solutions.variables[0]
    return [row[first].value for row in solutions if row[first] is not None]


@pytest.mark.parametrize("rec", records(), ids=lambda r: r["ID"])
def test_gold_sparql_and_program_give_the_gold_answer(store: pyoxigraph.Store, rec: dict[str, Any]) -> None:
    assert markqa_answer_match(_values(store, PREFIXES + rec["sparql"]), rec["answer"])
    program = rec["PyQL"] if "print(" in rec["PyQL"] else rec["PyQL"] + "\nprint(a.sparql)"
    assert markqa_answer_match(_values(store, program_to_query(program).sparql()), rec["answer"])


# ---------------------------------------------------------------------------
# pyql eval --by comp_level, end to end through a loopback LLM

#: What the scripted model does per question, with the actions the agent offers today:
#: right on w11, w09, w28 (truthy values, a comparison, a filter) and w16 (its gold chain);
#: wrong on the others (it reads one value where MarkQA's program computes one).
SCRIPT = {
    "w01": ["add_fact(wd:Q1055, wdt:P1082, ?population)", "execute()"],
    "w02": ["add_fact(wd:Q64, wdt:P2046, ?area)", "execute()"],
    "w11": ["add_fact(wd:Q1726, wdt:P1082, ?population)", "add_compare(?population, >, 1400000)", "execute()"],
    "w04": ["add_fact(wd:Q64, wdt:P1082, ?population)", "execute()"],
    "w09": ["add_fact(wd:Q1055, wdt:P2046, ?hamburg)", "add_fact(wd:Q64, wdt:P2046, ?berlin)",
            "add_compare(?hamburg, >, ?berlin)", "execute()"],
    "w28": ["add_type_constrain(wd:Q515, ?city)", "add_fact(?city, wdt:P17, wd:Q183)", "add_fact(?city, wdt:P1082, ?population)",
            "add_filter(?population, >, 1000000)", "set_answer(?city)", "execute()"],
    "w16": None,  # the gold chain the loader made from its PyQL
    "w22": ["add_type_constrain(wd:Q8502, ?mountain)", "execute()"],
    "w30": ["add_fact(wd:Q365, wdt:P1082, ?population)", "execute()"],
}


@pytest.mark.cli
def test_pyql_eval_by_comp_level_end_to_end(tmp_path: Path) -> None:
    items = [dict(item, actions=SCRIPT[item["id"]] or item["actions"]) for item in load_dataset(SAMPLE)]
    out = tmp_path / "run.jsonl"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    with FakeLLMServer(GoldResponder(items)) as server:
        result = subprocess.run(
            [sys.executable, "-m", "pyql.cli", "eval", str(SAMPLE), "--kb", str(KB), "--profile", "wikidata",
             "--base-url", server.url, "--model", "fake", "--action-mode", "text", "--out", str(out), "--by", "comp_level"],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
        )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    got = {r["id"]: r["metrics"]["denotation"] for r in lines}
    assert got == {"w01": 0.0, "w02": 0.0, "w11": 1.0, "w04": 0.0, "w09": 1.0, "w28": 1.0, "w16": 1.0, "w22": 0.0, "w30": 0.0}
    assert all(r["groups"]["comp_level"] == r["kind"] for r in lines)
    text = result.stdout
    assert "| denotation accuracy (9 questions) | 0.444 |" in text
    table = text[text.index("| comp_level |"):].splitlines()
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in table[2:6]}
    assert list(rows) == ["iid", "compositional", "zero-shot", "overall"]
    assert [(rows[k][0], rows[k][4]) for k in rows] == [("3", "33.3"), ("3", "66.7"), ("3", "33.3"), ("9", "44.4")]
    summary_md = (tmp_path / "run.summary.md")
    md = summary_md.read_text() if summary_md.exists() else next(tmp_path.glob("*.md")).read_text()
    assert "## Per comp_level" in md and "## Per composition" in md
    trace = subprocess.run([sys.executable, "-m", "pyql.cli", "trace", str(out), "--by", "composition"],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert trace.returncode == 0 and "| no_composition | 9 |" in trace.stdout, trace.stderr


@pytest.mark.cli
def test_by_rejects_an_unknown_key() -> None:
    result = subprocess.run([sys.executable, "-m", "pyql.cli", "trace", "x.jsonl", "--by", "difficulty"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2 and "invalid choice: 'difficulty'" in result.stderr and "comp_level" in result.stderr
