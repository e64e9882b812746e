"""Loaders of the papers' benchmarks on fixtures in their published formats (tests/data, see its README)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.datasets import (
    FORMATS,
    DatasetError,
    dataset_format,
    detect_format,
    formats,
    get_format,
    graph_query_actions,
    load_dataset,
    load_linking,
    metaqa_actions,
    read_wtq_table,
    sparql_actions,
)
from agent.evaluation.datasets.reading import first_line, read_records
from agent.evaluation.datasets.registry import Registry, Source, registry
from agent.evaluation.metrics import wtq_denotation_match

DATA = Path(__file__).resolve().parent / "data"
GRAILQA = DATA / "grailqa" / "grailqa_v1.0_dev.json"
LINKING = DATA / "grailqa" / "grail_pangu_tiara.json"
CWQ = DATA / "cwq" / "ComplexWebQuestions_sample.json"
METAQA1 = DATA / "metaqa" / "1-hop" / "vanilla" / "qa_test.txt"
METAQA2 = DATA / "metaqa" / "2-hop" / "vanilla" / "qa_test.txt"
METAQA3 = DATA / "metaqa" / "3-hop" / "vanilla" / "qa_test.txt"
WIKISQL = DATA / "wikisql" / "dev.jsonl"
WTQ = DATA / "wtq" / "data" / "training-before300.tsv"
WEBQSP = DATA / "webqsp" / "WebQSP_test_processed.json"


# ---------------------------------------------------------------------------
# WebQSP: gold action chains from the gold SPARQL


def test_webqsp_items_get_a_gold_chain_from_their_sparql() -> None:
    ds = load_dataset(WEBQSP)
    assert ds.format == "webqsp" and [i["id"] for i in ds] == ["WebQTest-0", "WebQTest-3", "WebQTest-6", "WebQTest-7", "WebQTest-9"]
    assert ds[1]["actions"] == [
        "get_relation(m.01_2n)",
        "add_fact(m.01_2n, tv.tv_program.regular_cast, ?y)",
        "get_relation(?y)",
        "add_fact(?y, tv.regular_tv_appearance.actor, ?x)",
        "add_fact(?y, tv.regular_tv_appearance.character, m.015lwh)",
        "set_answer(?x)",
        "execute()",
    ]
    assert ds[0]["gold_query"]["sparql"].startswith("PREFIX ns:")


# ---------------------------------------------------------------------------
# GrailQA, GraphQ and entity linking


def test_grailqa_items_keep_qid_answers_level_and_gold_entities() -> None:
    ds = load_dataset(GRAILQA)
    assert ds.format == "grailqa"
    assert [i["id"] for i in ds] == ["3200431003000", "4302314002000", "5400160015000", "4303841006000", "4300535011000"]
    assert [i["kind"] for i in ds] == ["i.i.d.", "compositional", "i.i.d.", "zero-shot", "i.i.d."]
    last = ds[4]
    assert last["answers"] == [{"value": "m.04558rf", "label": "Welcome to Hong Kong"}]
    assert last["entities"] == {"Hong Kong": "m.03h64", "Marketplace": "m.051ywy"}  # gold linking: the graph query's entities
    assert last["actions"] == [
        "get_relation(m.03h64)",
        "add_fact(?x0, broadcast.content.location, m.03h64)",
        "get_relation(?x0)",
        "add_fact(?x0, broadcast.content.genre, ?x1)",
        "get_relation(?x1)",
        "add_fact(?x1, broadcast.genre.content, m.051ywy)",
        "set_answer(?x0)",
        "execute()",
    ]
    assert last["gold_query"]["s_expression"].startswith("(AND broadcast.content")


def test_grailqa_superlatives_and_comparisons_become_add_max_and_add_filter() -> None:
    ds = load_dataset(GRAILQA)
    assert ds[3]["actions"][-3:] == ["add_max(?x2, *, 0, 1, true)", "set_answer(?x0)", "execute()"]  # ARGMAX on the release date, ties kept
    assert "add_filter(?x4, >=, 2.916e+06)" in ds[2]["actions"]  # (ge spaceflight.rocket.mass 2.916e+06)
    assert ds[0]["actions"] is None  # no topic entity: no chain starts anywhere
    assert ds[1]["actions"][-3] == "add_max(?x3, *, 0, 1, true)"  # ARGMAX with two tied answers: both kept


def test_ids_are_stable_across_loads() -> None:
    for path in (WEBQSP, GRAILQA, CWQ, METAQA1, WIKISQL, WTQ):
        assert [i["id"] for i in load_dataset(path)] == [i["id"] for i in load_dataset(path)]


def test_entity_linking_file_replaces_the_entities() -> None:
    ds = load_dataset(GRAILQA, linking=LINKING)
    assert ds[0]["entities"] == {"date": "m.020_g"}  # what Pangu/TIARA linked, right or wrong
    assert ds[2]["entities"] == {
        "saturn v rocket": "m.07932",
        "boeing company": "m.0178g",
        "2.916e+06": "2.916e+06^^http://www.w3.org/2001/XMLSchema#float",
    }
    assert ds[3]["entities"] == {} and ds.unlinked == 1  # 4303841006000 is left out of the fixture


def test_linking_shapes_literals_and_freebase_escapes() -> None:
    links = load_linking(LINKING)
    assert links["3205993004000"]["1000.0"] == "1000.0^^http://www.w3.org/2001/XMLSchema#float"
    assert links["2101146006000"] == {"4": "m.0d95dk6"}  # the first id, as QueryAgent takes it
    first = load_linking(DATA / "graphq" / "graphq_el.json")  # GrailQA's first release: {qid: {mid: name}}
    assert first["255000001"] == {"paul": "m.0114x9dj", "st. paul": "m.060nc"}
    assert first["256000300"] == {}
    current = load_linking(DATA / "graphq" / "graphq_el_results.json")  # its current one: mentions with spans
    assert current["255000001"] == {"paul": "m.0114x9dj"}  # one mention, two mids: the first, as QueryAgent's lists
    assert current["268000000"] == {"francis bacon": "m.030dr"} and current["256000300"] == {}
    queryagent = load_linking(DATA / "graphq" / "graphq_test.json")  # what QueryAgent reads for GraphQ
    assert {qid: queryagent[qid] for qid in current} == current


def test_a_bad_mention_entry_says_what_is_expected(tmp_path: Path) -> None:
    bad = tmp_path / "el.json"
    bad.write_text(json.dumps({"1": {"question": "q", "entities": {"m.0x": {"start": 0}}}}))
    with pytest.raises(DatasetError, match="mention"):
        load_linking(bad)


def test_bad_linking_files_say_what_is_expected(tmp_path: Path) -> None:
    bad = tmp_path / "el.json"
    bad.write_text("[1, 2]")
    with pytest.raises(DatasetError, match="must be a JSON object"):
        load_linking(bad)
    bad.write_text(json.dumps({"1": ["m.0"]}))
    with pytest.raises(DatasetError, match="must be an object"):
        load_linking(bad)
    with pytest.raises(DatasetError, match="not found"):
        load_linking(tmp_path / "missing.json")


def test_graphq_is_the_grailqa_format_without_levels(tmp_path: Path) -> None:
    records = json.loads(GRAILQA.read_text())
    for r in records:
        r.pop("level")
    path = tmp_path / "graphquestions_v1_fb15_test_091420.json"
    path.write_text(json.dumps(records))
    ds = load_dataset(path)
    assert ds.format == "graphq" and all(i["kind"] is None and i["source"] == "graphq" for i in ds)
    assert ds[4]["answers"] == [{"value": "m.04558rf", "label": "Welcome to Hong Kong"}]


def test_graphquestions_original_answers_are_names(tmp_path: Path) -> None:
    # The fields of ysu1989/GraphQuestions' specification (freebase13/graphquestions.*.json): answers are
    # Freebase names, not mids; no real record could be had here, so this record is built from that spec.
    record = {
        "qid": 251000000,
        "question": "xtracycle is which type of bicycle?",
        "answer": ["Longtail"],
        "function": "none",
        "commonness": -19.635822428214723,
        "num_node": 2,
        "num_edge": 1,
        "graph_query": {"nodes": [], "edges": []},
        "sparql_query": "",
    }
    path = tmp_path / "graphquestions.testing.json"
    path.write_text(json.dumps([record]))
    ds = load_dataset(path, linking=DATA / "graphq" / "graphq_test.json")
    assert ds.format == "graphq" and ds[0]["id"] == "251000000" and ds[0]["answers"] == ["Longtail"]
    assert ds[0]["entities"] == {"xtracycle": "m.0gx1q5"}


def test_graph_queries_that_cannot_be_replayed_have_no_gold_chain() -> None:
    record = json.loads(GRAILQA.read_text())[4]
    assert graph_query_actions(record["graph_query"], "count") is None
    gq = json.loads(json.dumps(record["graph_query"]))
    gq["nodes"][1]["node_type"] = "literal"  # a literal without a function
    assert graph_query_actions(gq) is None
    assert graph_query_actions(json.loads(GRAILQA.read_text())[0]["graph_query"], "argmax") is None  # no entity to start from
    tied = json.loads(GRAILQA.read_text())[1]  # GrailQA's ARGMAX with two answers: the chain keeps ties
    assert len(tied["answer"]) == 2
    assert graph_query_actions(tied["graph_query"], "argmax")[-3:] == ["add_max(?x3, *, 0, 1, true)", "set_answer(?x0)", "execute()"]


def test_a_grailqa_answer_without_argument_is_reported(tmp_path: Path) -> None:
    records = json.loads(GRAILQA.read_text())
    records[0]["answer"] = [{"answer_type": "Entity", "entity_name": "Alphabet"}]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(records))
    with pytest.raises(DatasetError, match="answer_argument"):
        load_dataset(path)


# ---------------------------------------------------------------------------
# ComplexWebQuestions


def test_cwq_answers_keep_aliases_and_the_compositionality_type() -> None:
    ds = load_dataset(CWQ)
    item = ds[0]
    assert ds.format == "cwq" and item["id"] == "WebQTrn-3513_7c4117891abf63781b892537979054c6"
    assert item["answers"] == [{"value": "m.0rh6k", "label": "Washington, D.C.", "aliases": ["Washington D.C.", "Washington", "The District"]}]
    assert item["kind"] == "composition"
    assert item["entities"] == {"m.03d0l76": "m.03d0l76"}  # the gold query's topic entity
    assert item["actions"][-2:] == ["set_answer(?x)", "execute()"]


def test_cwq_test_file_has_no_answers_and_superlatives_have_no_chain() -> None:
    item = load_dataset(DATA / "cwq" / "ComplexWebQuestions_test_sample.json")[0]
    assert item["answers"] == [] and item["actions"] is None  # ORDER BY ... LIMIT 1: not a plain conjunctive query
    assert sparql_actions("SELECT ?x WHERE {\n?x ns:a.b.c ?y .\n}") is None  # not connected to an entity


def test_cwq_as_tog_ships_it_covers_every_compositionality_type() -> None:
    ds = load_dataset(DATA / "cwq" / "cwq_tog.json")  # ToG's data/cwq.json: the test records plus topic_entity and answer
    assert ds.format == "cwq" and [i["kind"] for i in ds] == ["composition", "conjunction", "comparative", "superlative"]
    assert [i["answers"] for i in ds] == [
        ["Belmont University"], ["University of Northern Colorado"], ["Kunsthistorisches Museum"], ["Albert Gallatin"]
    ]
    assert ds[0]["entities"] == {"Country Nation World Tour": "m.010qhfmm", "Bachelor's degree": "m.019v9k"}
    assert ds[1]["actions"][:2] == ["get_relation(m.0rczx)", "add_fact(m.0rczx, location.location.contains, ?x)"]
    assert ds[2]["actions"] is None and ds[3]["actions"] is None  # a dateTime FILTER, an ORDER BY: no plain chain


# ---------------------------------------------------------------------------
# MetaQA


def test_metaqa_entity_from_brackets_answers_and_question_types() -> None:
    ds = load_dataset(METAQA1)
    assert ds.format == "metaqa" and len(ds) == 5
    item = ds[2]
    assert item["id"] == "1-hop-qa_test-2"
    assert item["entities"] == {"Michelle Trachtenberg": "mq:Michelle_Trachtenberg"}
    assert item["answers"] == ["Inspector Gadget", "Black Christmas", "Ice Princess", "Harriet the Spy", "The Scribbler"]
    assert item["kind"] == "actor_to_movie"
    two = load_dataset(METAQA2)
    assert [i["kind"] for i in two] == ["actor_to_movie_to_director", "director_to_movie_to_director", "director_to_movie_to_language"]
    assert "add_filter(?x2, !=, mq:Delbert_Mann)" in two[1]["actions"]  # co-directors leave the topic director out
    three = load_dataset(METAQA3)
    assert [i["id"] for i in three] == ["3-hop-qa_test-0", "3-hop-qa_test-1", "3-hop-qa_test-2"]
    assert three[0]["entities"] == {"Catch Me If You Can": "mq:Catch_Me_If_You_Can"}
    assert three[0]["answers"] == ["German", "Polish", "Mende", "Japanese"] and len(three[1]["answers"]) == 20
    assert three[2]["kind"] == "movie_to_actor_to_movie_to_language"
    assert three[0]["actions"][-3:] == ["add_fact(?x2, mqr:in_language, ?x3)", "set_answer(?x3)", "execute()"]


def test_metaqa_question_types_are_optional_but_must_match(tmp_path: Path) -> None:
    lonely = tmp_path / "qa_test_3hop.txt"  # QueryAgent's renamed copy, no qtype file
    shutil.copy(METAQA1, lonely)
    ds = load_dataset(lonely)
    assert ds[0]["kind"] is None and ds[0]["actions"] is None and ds[0]["id"] == "3-hop-qa_test_3hop-0"
    (tmp_path / "qa_test_3hop_qtype.txt").write_text("actor_to_movie\n")
    with pytest.raises(DatasetError, match="1 question types for the 5 questions"):
        load_dataset(lonely)


def test_metaqa_wrong_files_get_a_hint(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="question-type file"):
        load_dataset(DATA / "metaqa" / "1-hop" / "qa_test_qtype.txt")
    with pytest.raises(DatasetError, match="--kb metaqa:"):
        load_dataset(DATA / "metaqa" / "kb.txt")
    bad = tmp_path / "qa.txt"
    bad.write_text("what does [Helen Mack] star in\tThe Son of Kong\nno entity here\tX\n")
    with pytest.raises(DatasetError, match="question 2"):
        load_dataset(bad)


def test_metaqa_actions_follow_the_question_type() -> None:
    assert metaqa_actions("movie_to_writer_to_movie_to_year", "Kismet") == [
        "get_relation(mq:Kismet)",
        "add_fact(mq:Kismet, mqr:written_by, ?x1)",
        "get_relation(?x1)",
        "add_fact(?x2, mqr:written_by, ?x1)",
        "get_relation(?x2)",
        "add_fact(?x2, mqr:release_year, ?x3)",
        "set_answer(?x3)",
        "execute()",
    ]


# ---------------------------------------------------------------------------
# WikiSQL (original form)


def test_wikisql_gold_answers_come_from_executing_the_logical_form() -> None:
    ds = load_dataset(WIKISQL)
    assert ds.format == "wikisql" and [i["id"] for i in ds] == ["dev-0", "dev-1", "dev-2", "dev-3", "dev-4"]
    assert [i["answers"] for i in ds] == [["Guard-Forward"], [1], ["Duke"], ["Art Long"], ["John Long"]]
    assert ds[1]["actions"] == ["add_condition(No., =, 3)", "set_answer(School/Club Team, COUNT)", "execute()"]
    assert ds[0]["table"]["header"][5] == "School/Club Team" and len(ds[0]["table"]["rows"]) == 7


def test_wikisql_text_conditions_are_case_insensitive(tmp_path: Path) -> None:
    shutil.copy(DATA / "wikisql" / "dev.tables.jsonl", tmp_path / "test.tables.jsonl")
    q = {"phase": 1, "table_id": "1-10015132-11", "question": "q", "sql": {"sel": 0, "conds": [[3, 0, "guard"], [4, 0, "1996-97"]], "agg": 0}}
    (tmp_path / "test.jsonl").write_text(json.dumps(q) + "\n")
    assert load_dataset(tmp_path / "test.jsonl")[0]["answers"] == ["John Long"]


def test_wikisql_reads_the_official_db_when_there_is_no_tables_file(tmp_path: Path) -> None:
    table = json.loads((DATA / "wikisql" / "dev.tables.jsonl").read_text())
    conn = sqlite3.connect(tmp_path / "dev.db")  # WikiSQL's layout: table_<id>, columns col0..colN
    conn.execute("CREATE TABLE table_1_10015132_11 (col0 text, col1 text, col2 text, col3 text, col4 text, col5 text)")
    conn.executemany("INSERT INTO table_1_10015132_11 VALUES (?, ?, ?, ?, ?, ?)", [[c.lower() for c in row] for row in table["rows"]])
    conn.commit()
    conn.close()
    shutil.copy(WIKISQL, tmp_path / "dev.jsonl")
    ds = load_dataset(tmp_path / "dev.jsonl")
    assert [i["answers"] for i in ds] == [["guard-forward"], [1], ["duke"], ["art long"], ["john long"]]
    assert ds[0]["table"]["header"] == ["col0", "col1", "col2", "col3", "col4", "col5"]


def test_wikisql_without_tables_says_where_to_put_them(tmp_path: Path) -> None:
    shutil.copy(WIKISQL, tmp_path / "dev.jsonl")
    with pytest.raises(DatasetError, match="dev.tables.jsonl or dev.db"):
        load_dataset(tmp_path / "dev.jsonl")


# ---------------------------------------------------------------------------
# WikiTableQuestions


def test_wtq_examples_and_tables() -> None:
    ds = load_dataset(WTQ)
    assert ds.format == "wtq" and [i["id"] for i in ds] == ["nt-64", "nt-112", "nt-153"]
    assert ds[2]["answers"] == ["10"] and ds[2]["table"]["name"] == "csv/204-csv/102.csv"
    table = ds[1]["table"]
    assert table["header"][:2] == ["Name", "Location served"] and len(table["rows"]) == 21
    assert table["rows"][0][7] == "678 Squadron MiG-23MS\n2 Squadron L-39ZO\n? Squadron L-39ZO"  # WTQ's \n escape
    assert ds[0]["table"]["header"][3] == "First\nelected"


def test_wtq_target_lists_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    shutil.copytree(DATA / "wtq" / "csv", tmp_path / "csv")
    (tmp_path / "data" / "x.tsv").write_text(
        "id\tutterance\tcontext\ttargetValue\nnt-9\ta \\p b?\tcsv/204-csv/102.csv\tHama|Tiyas\\pX\n"
    )
    item = load_dataset(tmp_path / "data" / "x.tsv")[0]
    assert item["question"] == "a | b?" and item["answers"] == ["Hama", "Tiyas|X"]
    (tmp_path / "data" / "y.tsv").write_text("id\tutterance\tcontext\ttargetValue\nnt-1\tq\tcsv/204-csv/999.csv\t1\n")
    with pytest.raises(DatasetError, match="keep WTQ's layout"):
        load_dataset(tmp_path / "data" / "y.tsv")
    (tmp_path / "data" / "z.tsv").write_text("id\tutterance\tcontext\ttargetValue\nnt-1\tq\n")
    with pytest.raises(DatasetError, match="line 2: expected 4 tab-separated fields"):
        load_dataset(tmp_path / "data" / "z.tsv")
    assert read_wtq_table(DATA / "wtq" / "csv" / "204-csv" / "109.csv")["rows"][21][0] == "Virginia 22"


WTQ_UNSEEN = DATA / "wtq" / "data" / "pristine-unseen-tables.tsv"
WTQ_TAGGED = DATA / "wtq" / "tagged" / "data" / "pristine-unseen-tables.tagged"


def test_wtq_gold_values_carry_their_canonical_form_from_the_tagged_files() -> None:
    ds = load_dataset(WTQ_UNSEEN)
    assert [i["id"] for i in ds] == ["nu-1", "nu-66", "nu-914", "nu-1475"] and ds.notes == []
    assert [i["answers"] for i in ds] == [
        [{"value": "100,000", "canon": "100000.0"}],
        [{"value": "December 6, 2010", "canon": "2010-12-06"}],
        [{"value": "October", "canon": "xxxx-10-xx"}],
        [{"value": "Season 2", "canon": "2.0"}],
    ]
    assert ds[1]["table"]["name"] == "csv/203-csv/714.csv" and ds[1]["table"]["rows"][5][3] == "December 6, 2010"
    tagged = load_dataset(WTQ_TAGGED)  # the tagged file itself is a data set too (its csv/ is two folders up)
    assert tagged.format == "wtq" and [i["answers"] for i in tagged] == [i["answers"] for i in ds]
    assert tagged[0]["table"]["name"] == "csv/204-csv/149.csv"


def test_wtq_without_tagged_values_falls_back_to_the_raw_target_with_a_note(tmp_path: Path) -> None:
    ds = load_dataset(WTQ)  # training-before300: its examples are in training.tagged, which the fixtures lack
    assert ds[0]["answers"] == ["22"] and "3 examples have no targetCanon" in ds.notes[0]
    shutil.copytree(DATA / "wtq" / "csv", tmp_path / "csv")
    (tmp_path / "data").mkdir()
    shutil.copy(WTQ_UNSEEN, tmp_path / "data")
    alone = load_dataset(tmp_path / "data" / "pristine-unseen-tables.tsv")
    assert alone[3]["answers"] == ["Season 2"] and "compared by their raw targetValue" in alone.notes[0]
    (tmp_path / "tagged" / "data").mkdir(parents=True)
    (tmp_path / "tagged" / "data" / "x.tagged").write_text("id\tutterance\tcontext\ttargetValue\ttokens\nnu-1\tq\tc\t1\tq\n")
    with pytest.raises(DatasetError, match="no targetCanon column"):
        load_dataset(tmp_path / "data" / "pristine-unseen-tables.tsv")


def test_detection_does_not_confuse_the_new_formats_with_webqsp() -> None:
    webqsp = {"qid": "WebQTest-0", "question": "q", "entity_linking": {}, "answer": [], "sparql_query": "", "PyQL": ""}
    assert detect_format(webqsp) == "webqsp"
    assert detect_format(json.loads(GRAILQA.read_text())[0]) == "grailqa"
    assert detect_format(json.loads(CWQ.read_text())[0]) == "cwq"
    assert detect_format(json.loads(WIKISQL.read_text().splitlines()[0])) == "wikisql"


# ---------------------------------------------------------------------------
# The registry: every format is one entry, detected and loaded on its fixture


def _graphq_fixture(tmp_path: Path) -> Path:
    records = json.loads(GRAILQA.read_text())
    for r in records:
        r.pop("level")
    path = tmp_path / "graphq_test.json"
    path.write_text(json.dumps(records))
    return path


def _webqsp_raw_fixture(tmp_path: Path) -> Path:
    raw = {"Version": "1.0", "Questions": [{"QuestionId": "WebQTest-9", "ProcessedQuestion": "what does jamaican people speak",
           "Parses": [{"TopicEntityMid": "m.03_r3", "TopicEntityName": "Jamaica",
                       "Answers": [{"AnswerType": "Entity", "AnswerArgument": "m.01428y", "EntityName": "Jamaican English"}]}]}]}
    path = tmp_path / "WebQSP.test.json"
    path.write_text(json.dumps(raw))
    return path


def _dbbench_fixture(tmp_path: Path) -> Path:
    table = {"table_name": "T", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"], ["2"]]}}
    rows = [{"description": "How many rows?", "label": ["2"], "table": table, "sql": {"query": "SELECT COUNT(a) FROM T"}, "type": ["counting"]},
            {"description": "Add a row.", "label": ["INSERT ..."], "table": table, "type": ["INSERT"]}]
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


#: Format → its fixture (tests/data, or written from the published layout where tests/data has none).
FIXTURES = {
    "pyql": lambda tmp: Path(str(resources.files("pyql") / "data" / "demo_questions.jsonl")),
    "webqsp": lambda tmp: WEBQSP,
    "webqsp-raw": _webqsp_raw_fixture,
    "dbbench": _dbbench_fixture,
    "grailqa": lambda tmp: GRAILQA,
    "graphq": _graphq_fixture,
    "cwq": lambda tmp: CWQ,
    "rog": lambda tmp: DATA / "subgraphs" / "rog.jsonl",
    "wikisql": lambda tmp: WIKISQL,
    "metaqa": lambda tmp: METAQA3,
    "wtq": lambda tmp: WTQ,
    "agentbench-kg": lambda tmp: DATA / "agentbench" / "kg_dev.json",
    "markqa": lambda tmp: Path(__file__).parent / "data" / "markqa" / "mark_dev_sample.json",
}


def test_every_registered_format_has_a_fixture_here() -> None:
    assert FORMATS == tuple(f.name for f in formats()) and sorted(FORMATS) == sorted(FIXTURES)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_format_is_detected_and_loaded_on_its_fixture(name: str, tmp_path: Path) -> None:
    fmt = get_format(name)
    assert fmt is not None and fmt.name == name and fmt.gold
    path = FIXTURES[name](tmp_path)
    text = path.read_text(encoding="utf-8")
    if fmt.shape == "records":
        records, _ = read_records(path, text)
        assert detect_format(records[0]) == name
    else:
        assert registry.detect_text(first_line(text), path) == name
    ds = load_dataset(path)
    assert ds.format == name and len(ds) > 0
    assert all(item["source"] == name for item in ds) and any(item["answers"] for item in ds)
    assert set(ds[0]) >= {"id", "question", "entities", "answers", "actions", "table", "source", "kind"}


def test_detection_priorities_are_explicit_and_distinct() -> None:
    for shape in ("records", "text"):
        priorities = [f.priority for f in formats() if f.shape == shape]
        assert len(priorities) == len(set(priorities)), shape
    # the more specific formats go first: GrailQA before GraphQ (same fields plus level), pyql last
    order = [f.name for f in registry.by_priority("records")]
    assert order.index("grailqa") < order.index("graphq") and order[-1] == "pyql"


def test_the_known_formats_message_names_every_family() -> None:
    message = registry.known()
    families = {f.family for f in formats()}
    assert all(any(f.known and f.known in message for f in formats() if f.family == family) for family in families)
    assert message.startswith("known formats: pyql JSON Lines") and " and AgentBench knowledge-graph JSON" in message


def test_metric_hooks_come_from_the_formats() -> None:
    wtq = get_format("wtq")
    assert wtq is not None and wtq.denotation is wtq_denotation_match
    assert [f.name for f in formats() if f.denotation is not None] == ["dbbench", "markqa", "wtq"]
    grail = get_format("grailqa")
    assert grail is not None and grail.category == "level" and grail.category_order[0] == "i.i.d."
    benchmarks = {f.name: f.benchmark([{"id": "2-hop-qa_test-0"}]) for f in formats() if f.benchmark is not None}
    assert benchmarks == {"webqsp-raw": "webqsp", "dbbench": "wikisql", "metaqa": "metaqa-2hop"}


def test_a_new_format_registers_into_a_registry_of_its_own(tmp_path: Path) -> None:
    mine = Registry()

    @dataset_format("mine", shape="records", priority=5, detect=lambda r: "q" in r, known="my JSON (q, a)", into=mine)
    def load_mine(source: Source) -> Iterator[dict[str, Any]]:
        for index, rec in source.each():
            yield {"id": f"{source.stem}-{index}", "answers": [rec["a"]]}

    src = Source(tmp_path / "x.jsonl", "", "mine", [{"q": "?", "a": 1}, {"q": "!", "a": 2}], registry=mine)
    assert [i["answers"] for i in mine.get("mine").load(src)] == [[1], [2]]
    assert mine.known() == "known formats: my JSON (q, a)" and "mine" not in registry
    with pytest.raises(ValueError, match="registered twice"):
        dataset_format("mine", shape="records", priority=6, detect=bool, into=mine)(load_mine)
