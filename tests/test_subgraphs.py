"""Per-question subgraphs (``--kb subgraphs:FILE``): RoG's and NSM's shapes, through the KB API and ``pyql eval``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.datasets import load_dataset
from agent.evaluation.runner import KBProvider
from pyql.errors import EngineError, KBError
from pyql.kb import KB, kb_backends
from pyql.kb.subgraphs import SubgraphSet, entity_id, read_subgraphs
from pyql.builder.query import Query
from tests.fault_servers import FakeLLMServer, GoldResponder

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "subgraphs"
ROG = DATA / "rog.jsonl"
NSM = DATA / "nsm" / "test_simple.json"

#: The gold steps of the fixture's questions, as an LLM writes them.
GOLD = {
    "WebQTest-12": ["add_fact(sg:Justin_Bieber, people.person.sibling_s, ?c)",
                    "add_fact(?c, people.sibling_relationship.sibling, ?x)", "set_answer(?x)", "execute()"],
    "WebQTest-100": ["add_fact(sg:Grand_Bahama, location.location.containedby, ?x)", "execute()"],
    "WebQTest-575": ["add_fact(sg:Grand_Bahama_International_Airport, aviation.airport.opened, ?d)", "execute()"],
}


def _values(kb: KB, query: Query) -> list[str]:
    return str(kb.execute(query)).splitlines()[1:]


# ---------------------------------------------------------------------------
# The KB API


def test_each_question_sees_only_its_own_triples() -> None:
    bieber = KB.open(f"subgraphs:{ROG}#WebQTest-12")
    bahama = KB.open(f"subgraphs:{ROG}#WebQTest-100")
    assert bieber.has_entity("sg:Justin_Bieber") and not bahama.has_entity("sg:Justin_Bieber")
    assert bahama.has_entity("sg:Grand_Bahama") and not bieber.has_entity("sg:Grand_Bahama")
    q = Query(profile=bahama.profile).add_fact("sg:Grand_Bahama", "location.location.containedby", "?x")
    assert _values(bahama, q) == ["'Bahamas' (sg:Bahamas)"]
    assert _values(bieber, Query(profile=bieber.profile).add_fact("sg:Grand_Bahama", "location.location.containedby", "?x")) == []


def test_names_are_labelled_cvts_unnamed_values_typed() -> None:
    kb = KB.open(f"subgraphs:{ROG}#WebQTest-12")
    chain = (Query(profile=kb.profile).add_fact("sg:Justin_Bieber", "people.person.sibling_s", "?c")
             .add_fact("?c", "people.sibling_relationship.sibling", "?x"))
    assert str(kb.observe(chain)) == ("The value of variable ?c is [m.0gxnnwc (unnamed node)]. "
                                 "The value of variable ?x is ['Jaxon Bieber' (sg:Jaxon_Bieber)]")
    rows = kb.select("SELECT ?d WHERE { <http://pyql.org/subgraph/entity/Justin_Bieber> "
                     "<http://rdf.freebase.com/ns/people.person.date_of_birth> ?d }")
    assert rows[0]["d"].datatype == "http://www.w3.org/2001/XMLSchema#date"
    relations = kb.relations("sg:Justin_Bieber")
    assert "people.person.sibling_s" in relations.forward and not any("type.object.name" in r for r in relations.forward)


def test_nsm_indexed_subgraphs_read_through_the_vocabularies_beside_the_file() -> None:
    kb = KB.open(f"subgraphs:{NSM}#WebQTest-12")
    chain = (Query(profile=kb.profile).add_fact("m.06w2sn5", "people.person.sibling_s", "?c")
             .add_fact("?c", "people.sibling_relationship.sibling", "?x"))
    # no names in NSM's graphs: each entity is labelled with its id, so none is taken for a CVT
    assert str(kb.observe(chain)) == ("The value of variable ?c is ['m.0gxnnwc' (m.0gxnnwc)]. "
                                      "The value of variable ?x is ['m.0gxnnwq' (m.0gxnnwq)]")
    assert not kb.has_entity("m.0160w")  # the other question's entity
    assert read_subgraphs(NSM).shape == "indexed" and read_subgraphs(ROG).shape == "triples"


def test_graftnet_objects_give_ids_and_labels(tmp_path: Path) -> None:
    file = tmp_path / "graftnet.json"
    tuples = [[{"kb_id": "m.06w2sn5", "text": "Justin Bieber"}, {"rel_id": "people.person.parents", "text": "people.person.parents"},
               {"kb_id": "m.0c1g9n5", "text": "Jeremy Bieber"}]]
    file.write_text(json.dumps({"id": "q1", "question": "q", "subgraph": {"entities": [], "tuples": tuples}}) + "\n")
    kb = KB.open(f"subgraphs:{file}#q1")
    q = Query(profile=kb.profile).add_fact("m.06w2sn5", "people.person.parents", "?p")
    assert _values(kb, q) == ["'Jeremy Bieber' (m.0c1g9n5)"]


def test_the_whole_file_names_its_questions_and_answers_no_query() -> None:
    whole = KB.open(f"subgraphs:{ROG}")
    assert isinstance(whole, SubgraphSet) and whole.ids() == ["WebQTest-12", "WebQTest-100", "WebQTest-575"]
    with pytest.raises(EngineError, match=r"one subgraph per question.*#WebQTest-12"):
        whole.select("SELECT * WHERE { ?s ?p ?o }")
    with pytest.raises(KBError, match=r"no subgraph for question 'WebQTest-9' \(it holds 3: WebQTest-12, WebQTest-100"):
        whole.question("WebQTest-9")
    entry = kb_backends.backend_for(f"subgraphs:{ROG}")
    assert entry is not None and entry.per_question and entry.form == "subgraphs:FILE"
    assert "subgraphs:FILE" in kb_backends.hint() and "subgraphs:FILE" in (KB.open.__doc__ or "")


def test_the_provider_opens_each_items_own_kb() -> None:
    provider = KBProvider(f"subgraphs:{ROG}")
    first, second = provider.get({"id": "WebQTest-12"}), provider.get({"id": "WebQTest-100"})
    assert first is not second and first.has_entity("sg:Jaxon_Bieber") and not second.has_entity("sg:Jaxon_Bieber")
    with pytest.raises(KBError, match="no subgraph for question 'nope'"):
        provider.get({"id": "nope"})


def test_the_rog_format_links_question_entities_to_the_subgraph_ids() -> None:
    ds = load_dataset(ROG)
    assert ds.format == "rog" and [i["id"] for i in ds] == list(GOLD)
    assert ds[0]["entities"] == {"Justin Bieber": "sg:Justin_Bieber"} and ds[0]["answers"] == ["Jaxon Bieber"]
    assert entity_id("m.0gxnnwc") == "m.0gxnnwc" and "graph" not in ds[0]


# ---------------------------------------------------------------------------
# pyql eval with a scripted loopback LLM


def _eval(tmp_path: Path, data: Path, kb: str, items: list[dict[str, Any]], *extra: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    out = tmp_path / "run.jsonl"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    with FakeLLMServer(GoldResponder(items)) as server:
        result = subprocess.run(
            [sys.executable, "-m", "pyql.cli", "eval", str(data), "--kb", kb, "--base-url", server.url, "--model", "fake",
             "--action-mode", "text", "--out", str(out), *extra],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
        )
    records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result, records


@pytest.mark.cli
def test_pyql_eval_on_the_data_file_that_carries_the_graphs(tmp_path: Path) -> None:
    items = [dict(item, actions=GOLD[item["id"]]) for item in load_dataset(ROG)]
    result, records = _eval(tmp_path, ROG, f"subgraphs:{ROG}", items, "--concurrency", "2")
    assert result.returncode == 0, result.stderr
    got = {r["id"]: (r["status"], [a.get("label") or a["value"] for a in r["answers"]], r["metrics"]["f1"]) for r in records}
    assert got == {"WebQTest-12": ("finished", ["Jaxon Bieber"], 1.0), "WebQTest-100": ("finished", ["Bahamas"], 1.0),
                   "WebQTest-575": ("finished", ["1965"], 1.0)}
    assert "| answer F1 | 1.000 |" in result.stdout


@pytest.mark.cli
def test_a_question_without_a_subgraph_is_its_own_error_and_others_see_only_theirs(tmp_path: Path) -> None:
    data = tmp_path / "questions.jsonl"
    rows = [
        # WebQTest-100's KB has no Justin Bieber: the gold steps of another question find nothing there
        {"id": "WebQTest-100", "question": "who is justin bieber's brother?", "answers": ["Jaxon Bieber"],
         "entities": {"Justin Bieber": "sg:Justin_Bieber"}, "actions": GOLD["WebQTest-12"]},
        {"id": "WebQTest-12", "question": "what is the name of justin bieber brother", "answers": ["Jaxon Bieber"],
         "entities": {"Justin Bieber": "sg:Justin_Bieber"}, "actions": GOLD["WebQTest-12"]},
        {"id": "WebQTest-999", "question": "who is not in the file?", "answers": ["x"], "entities": {}, "actions": ["execute()"]},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result, records = _eval(tmp_path, data, f"subgraphs:{ROG}", rows, "--max-steps", "5")
    assert result.returncode == 0, result.stderr
    by_id = {r["id"]: r for r in records}
    assert by_id["WebQTest-12"]["metrics"]["f1"] == 1.0
    assert by_id["WebQTest-100"]["metrics"]["f1"] == 0.0 and by_id["WebQTest-100"]["answers"] == []
    missing = by_id["WebQTest-999"]
    # the data's fault, not the service's: finished (scored, as unanswered), with the error that says which id
    assert missing["status"] == "finished" and missing["metrics"]["f1"] == 0.0
    assert missing["error"].startswith("kb_error: ") and "no subgraph for question 'WebQTest-999'" in missing["error"]


@pytest.mark.cli
def test_record_then_replay_without_the_subgraph_file(tmp_path: Path) -> None:
    data = tmp_path / "rog.jsonl"
    shutil.copy(ROG, data)
    items = [dict(item, actions=GOLD[item["id"]]) for item in load_dataset(ROG)]
    recorded, first = _eval(tmp_path, data, f"subgraphs:{data}", items, "--record", str(tmp_path / "rec"))
    assert recorded.returncode == 0, recorded.stderr
    questions = tmp_path / "questions.jsonl"
    questions.write_text(ROG.read_text())
    data.unlink()  # the KB is gone: the replay answers from the recording
    (tmp_path / "run.jsonl").rename(tmp_path / "recorded.jsonl")
    replayed, second = _eval(tmp_path, questions, f"subgraphs:{data}", items, "--replay", str(tmp_path / "rec"))
    assert replayed.returncode == 0, replayed.stderr
    assert [r["answers"] for r in second] == [r["answers"] for r in first] and all(r["status"] == "finished" for r in second)


@pytest.mark.cli
def test_pyql_run_needs_the_question_id(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    base = [sys.executable, "-m", "pyql.cli", "run", "--actions", "-"]
    steps = "add_fact(sg:Grand_Bahama, location.location.containedby, ?x)\nexecute()\n"
    whole = subprocess.run(base + ["--kb", f"subgraphs:{ROG}"], input=steps, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert whole.returncode == 2 and "one subgraph per question" in whole.stderr and f"subgraphs:{ROG}#ID" in whole.stderr
    one = subprocess.run(base + ["--kb", f"subgraphs:{ROG}#WebQTest-100"], input=steps, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert one.returncode == 0, one.stderr
    assert "'Bahamas' (sg:Bahamas)" in one.stdout


# ---------------------------------------------------------------------------
# Bad files: one line, exit 2


def _bad(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


_GOOD = json.loads(ROG.read_text().splitlines()[0])
BAD_FILES = {
    "not JSON": (b"this is not json\n", r"line 1 is not JSON"),
    "truncated last line": (ROG.read_bytes() + b'{"id": "WebQTest-7", "question": "cut', r"line 4 is not JSON \(the last line, without its newline: the file is cut short\)"),
    "record without its graph": (json.dumps({**_GOOD, "graph": None}).encode() + b"\n", r"line 1: the record's graph is missing or not a list"),
    "foreign file": ((ROOT / "pyql" / "data" / "demo_questions.jsonl").read_bytes(), r"line 1: no subgraph in this record \(keys: id, kind, question"),
    "a triple of two terms": (json.dumps({**_GOOD, "graph": [["a", "b"]]}).encode() + b"\n", r"triple 0: expected \[head, relation, tail\]"),
    "repeated id": (json.dumps(_GOOD).encode() + b"\n" + json.dumps(_GOOD).encode() + b"\n", r"line 2: the id 'WebQTest-12' repeats"),
    "gzipped": (b"\x1f\x8b\x08\x00rest", r"is gzipped: decompress it first"),
    "parquet": (b"PAR1\x15\x04", r"is a Parquet file .*to_json"),
    "empty": (b"\n", r"holds no record"),
}


@pytest.mark.cli
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_subgraph_file_is_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    content, message = BAD_FILES[case]
    bad = _bad(tmp_path, "sub.jsonl", content)
    with pytest.raises(KBError, match=message):
        KB.open(f"subgraphs:{bad}")
    result, records = _eval(tmp_path, ROG, f"subgraphs:{bad}", [dict(i, actions=GOLD[i["id"]]) for i in load_dataset(ROG)])
    assert result.returncode == 2 and not records, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pyql") and "Traceback" not in result.stderr, result.stderr


def test_nsm_integers_without_the_vocabularies_are_refused(tmp_path: Path) -> None:
    lone = tmp_path / "test_simple.json"
    shutil.copy(NSM, lone)
    with pytest.raises(KBError, match=r"NSM's entities.txt and relations.txt must lie beside it; not found: .*entities.txt"):
        KB.open(f"subgraphs:{lone}")
    shutil.copy(DATA / "nsm" / "entities.txt", tmp_path / "entities.txt")
    (tmp_path / "relations.txt").write_text("people.person.sibling_s\n")
    with pytest.raises(KBError, match=r"the relation index 1 is not in NSM's relation vocabulary \(1 lines\)"):
        KB.open(f"subgraphs:{lone}")
