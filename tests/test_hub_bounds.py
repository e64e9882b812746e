"""Issue 12: a step's cost must not grow with the size of a hub.

Bounded observations (counts exact up to a cap, "more than" beyond it),
bounded relation lists that say when they may be incomplete and are
completed by one bounded ASK (in the KB, the ERASER rules and Readi), one
evaluation per argmax (set_answer / execute() reuse the bounded rows), and
observations that never echo a giant argument or value whole.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent.methods.instantiate import Instantiator
from agent.methods.reasoning_path import PathSpec
from correction import Eraser
from pyql import Query
from pyql.kb import KB, demo_kb_path
from pyql.kb.base import KB as BaseKB
from pyql.kb.endpoint_backend import EndpointKB
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.kb.rdflib_backend import RdflibKB
from pyql.kb.observation import Observation, Relations, VariableValues
from pyql.environment.sparql import SparqlEnvironment
from pyql.builder.terms import IRI, Literal, Term, Variable

FB = "http://rdf.freebase.com/ns/"
HUB = "m.0hub"
PERSONS = 30
SOURCES = 50  # distinct backward relations of the hub besides the persons' gender
XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"


def _hub_ntriples() -> str:
    """A small hub: 30 persons point at it by test.person.gender, 50 other
    entities by 50 distinct relations; it has one forward relation too."""
    lines = [f'<{FB}{HUB}> <{FB}type.object.name> "Hub"@en .']
    for i in range(PERSONS):
        p = f"<{FB}m.0p{i:02d}>"
        lines.append(f'{p} <{FB}type.object.name> "Person {i:02d}"@en .')
        lines.append(f"{p} <{FB}test.person.gender> <{FB}{HUB}> .")
        lines.append(f'{p} <{FB}test.person.born> "{1950 + i}-01-0{1 + i % 9}"^^<{XSD_DATE}> .')
        lines.append(f'{p} <{FB}test.person.from> "{1990 + i}-01-01"^^<{XSD_DATE}> .')
        lines.append(f'{p} <{FB}test.person.to> "{2000 + i}-01-01"^^<{XSD_DATE}> .')
    for i in range(SOURCES):
        s = f"<{FB}m.0s{i:02d}>"
        lines.append(f'{s} <{FB}type.object.name> "Source {i:02d}"@en .')
        lines.append(f"{s} <{FB}test.rel{i:02d}.link> <{FB}{HUB}> .")
    lines.append(f"<{FB}{HUB}> <{FB}test.rel00.link> <{FB}m.0s00> .")  # test.rel00.link both ways
    lines += [f'<{FB}m.0hidden> <{FB}common.topic.alias> "alias {i}"@en .' for i in range(5)]  # hidden relations only
    return "\n".join(lines) + "\n"


ALL_BACKWARD = {"test.person.gender"} | {f"test.rel{i:02d}.link" for i in range(SOURCES)}


@pytest.fixture(scope="module")
def hub_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hub") / "hub.nt"
    path.write_text(_hub_ntriples(), encoding="utf-8")
    return path


HUB_GRAPH = "http://pyql.test/hub"


@pytest.fixture(scope="module", params=["rdflib", "oxigraph", pytest.param("virtuoso", marks=pytest.mark.virtuoso)])
def engine(request: pytest.FixtureRequest, hub_file: Path) -> Any:
    if request.param == "virtuoso":
        server = request.getfixturevalue("virtuoso_server")
        server.load_turtle(hub_file, HUB_GRAPH)
        return server
    return str(request.param)


def open_hub(engine: Any, path: Path, **options: Any) -> KB:
    if engine == "rdflib":
        return RdflibKB(path, **options)
    if engine == "oxigraph":
        return OxigraphKB(path, **options)
    return EndpointKB(engine.endpoint, default_graph=HUB_GRAPH, timeout=30, **options)


# ---------------------------------------------------------------------------
# 1. Bounded observations


def test_counts_are_exact_up_to_the_cap_and_more_than_beyond(engine: Any, hub_file: Path) -> None:
    q = Query().add_fact("?p", "test.person.gender", HUB)
    for cap, capped, total in ((10, True, 10), (PERSONS - 1, True, PERSONS - 1), (PERSONS, False, PERSONS), (1000, False, PERSONS)):
        kb = open_hub(engine, hub_file, count_cap=cap)
        obs = kb.observe(q)
        p = obs.get("?p")
        assert p is not None and (p.capped, p.total) == (capped, total), cap
        assert kb.stats.queries == 1  # still one query per construction step
        assert not obs.is_empty and len(p.values) == 10
        text = str(obs)
        assert (f"(more than {cap:,} in total)" in text) == capped
        assert (f"({PERSONS} in total)" in text) == (not capped)
        assert obs.to_dict()["?p"].get("capped", False) == capped


def test_few_values_over_a_long_join_are_counted_over_the_first_rows(engine: Any, hub_file: Path) -> None:
    # ?g has one value over 30 rows (and ?p 30): read 12 rows at most, the counts say "at least".
    q = Query().add_fact("?p", "test.person.gender", "?g")
    kb = open_hub(engine, hub_file, count_cap=5, row_cap=12)
    obs = kb.observe(q)
    g, p = obs.get("?g"), obs.get("?p")
    assert g is not None and p is not None
    assert (g.total, g.capped, g.partial) == (1, False, True)
    assert [v.short for v in g.values] == [HUB]
    assert (p.total, p.capped, p.partial) == (5, True, False)  # beyond the cap: "more than", not "at least"
    assert "(at least 1 in total)" in str(obs) and obs.to_dict()["?g"]["partial"] is True
    assert kb.stats.queries == 1 and not obs.is_empty
    # a join no longer than the rows read: exact counts
    whole = open_hub(engine, hub_file, count_cap=5, row_cap=PERSONS).observe(q).get("?g")
    assert whole is not None and (whole.total, whole.partial) == (1, False)
    # the default reads count_cap + 1 rows
    assert open_hub(engine, hub_file, count_cap=5).observe(q).get("?g").partial is True  # type: ignore[union-attr]


def test_the_count_query_stops_at_the_cap(hub_file: Path) -> None:
    kb = OxigraphKB(hub_file, count_cap=7)
    seen: list[str] = []
    select = kb._select
    kb._select = lambda text: seen.append(text) or select(text)  # type: ignore[method-assign]
    kb.observe(Query().add_fact("?p", "test.person.gender", HUB))
    # the count reads cap + 2 rows at most: cap + 1 rows, and one more to know whether the join is longer
    assert "LIMIT 9\n" in seen[0] and "COUNT(DISTINCT ?p)" in seen[0]
    assert all(int(n) <= 1000 for n in re.findall(r"LIMIT (\d+)", seen[0]))


def test_the_environment_passes_its_count_cap(hub_file: Path) -> None:
    kb = OxigraphKB(hub_file)
    env = SparqlEnvironment(kb, entities={"Hub": HUB}, count_cap=5)
    record = env.step(f"add_fact(?p, test.person.gender, {HUB})")
    assert record.ok and "(more than 5 in total)" in record.observation
    assert "(30 in total)" in SparqlEnvironment(kb, entities={"Hub": HUB}).step(f"add_fact(?p, test.person.gender, {HUB})").observation


def test_a_capped_count_is_never_empty_and_an_unbound_aggregate_still_is() -> None:
    capped = VariableValues(Variable("x"), (), 1000, capped=True)
    assert capped.at_least == 1001 and capped.total_text() == "more than 1,000"
    kb = KB.open("oxigraph:demo")
    # A SUM over dates is an error in SPARQL: ?total is unbound in every group, so no value.
    q = Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t").add_sum("?t", "?total", group_by=["?c"])
    obs = kb.observe(q)
    total = obs.get("?total")
    assert total is not None and total.total == 0 and obs.is_empty


def test_parity_of_capped_and_exact_observations_on_the_demo_chains() -> None:
    """With a cap above every count, the observations are the same text as exact counts."""
    questions = [json.loads(line) for line in (demo_kb_path().parent / "demo_questions.jsonl").read_text().splitlines() if line.strip()]
    kb = KB.open("oxigraph:demo")
    small = KB.open("oxigraph:demo", count_cap=3)
    differing = 0
    for question in questions:
        big = SparqlEnvironment(kb, entities=question["entities"])
        capped = SparqlEnvironment(small, entities=question["entities"])
        for line in question["actions"]:
            a, b = big.step(line), capped.step(line)
            assert a.ok == b.ok and a.error == b.error
            if a.observation == b.observation:
                continue
            # They differ only where a count is above 3 or the join is longer than the 4 rows counted:
            # the same values, "more than 3" or "at least n" instead of the number.
            differing += 1
            assert isinstance(a.result, Observation) and isinstance(b.result, Observation)
            for va, vb in zip(a.result.variables, b.result.variables):
                assert va.values == vb.values
                if vb.capped:
                    assert va.total > 3 and vb.total == 3
                elif vb.partial:
                    assert 1 <= vb.total <= va.total
                else:
                    assert vb.total == va.total
        assert big.final_json()["answers"] == capped.final_json()["answers"]
    assert differing > 0


# ---------------------------------------------------------------------------
# 2. Bounded relation lists


def test_a_hub_relation_list_is_read_from_a_capped_sample_and_says_so(engine: Any, hub_file: Path) -> None:
    kb = open_hub(engine, hub_file, relation_edges=5)
    rels = kb.relations(HUB)
    assert kb.stats.queries == 1
    assert rels.truncated and not rels.complete
    assert 0 < len(rels.backward) <= 6 and set(rels.backward) < ALL_BACKWARD  # the cap + the one edge that says there are more
    assert "may be incomplete" in str(rels) and rels.to_dict()["complete"] is False
    small = kb.relations("m.0p00")  # 4 visible forward edges, one backward none
    assert small.complete and "may be incomplete" not in str(small) and "complete" not in small.to_dict()
    assert set(small.forward) == {"test.person.gender", "test.person.born", "test.person.from", "test.person.to"}
    full = open_hub(engine, hub_file).relations(HUB)
    assert full.complete and set(full.backward) == ALL_BACKWARD and full.forward == ("test.rel00.link",)


def test_hidden_relations_count_as_read_but_are_not_listed(hub_file: Path) -> None:
    kb = OxigraphKB(hub_file, relation_edges=1)
    rels = kb.relations("m.0p00")  # its first edge may be type.object.name: hidden, but it was read
    assert rels.truncated and not any(r.startswith("type.") for r in rels.all())


def test_has_relation_is_one_bounded_ask(engine: Any, hub_file: Path) -> None:
    kb = open_hub(engine, hub_file, relation_edges=5)
    for relation in sorted(ALL_BACKWARD):
        before = kb.stats.queries
        assert kb.has_relation(HUB, relation, "backward")
        assert kb.stats.queries - before == 1
    assert kb.has_relation(HUB, "test.rel00.link", "forward")
    assert not kb.has_relation(HUB, "test.rel01.link", "forward")
    assert kb.has_relation(HUB, "test.rel01.link")  # either direction
    assert not kb.has_relation(HUB, "test.nothing.here", None)
    q = Query().add_fact("?p", "test.person.gender", HUB)
    assert kb.has_relation("?p", "test.person.born", "forward", q)
    assert not kb.has_relation("?p", "test.rel01.link", "forward", q)


def _missed(kb: KB, target: str = HUB) -> str:
    """A test.relNN.link the capped list of the hub does not show (from m.0sNN)."""
    listed = set(kb.relations(target).all())
    return min(r for r in ALL_BACKWARD - listed if r.startswith("test.rel"))


@pytest.mark.parametrize("feedback", ["eraser", "none"])
def test_add_fact_with_a_relation_the_capped_list_missed_is_accepted(hub_file: Path, feedback: str) -> None:
    kb = OxigraphKB(hub_file, relation_edges=5)
    missed = _missed(kb)
    env = SparqlEnvironment(kb, entities={"Hub": HUB}, analyzer=Eraser() if feedback == "eraser" else None)
    assert env.step(f"get_relation({HUB})").ok
    assert missed not in env.memory.known_relations()
    record = env.step(f"add_fact(?x, {missed}, {HUB})")
    assert record.ok, record.observation


@pytest.mark.parametrize("feedback", ["eraser", "none"])
def test_an_empty_but_capped_list_is_no_empty_result(hub_file: Path, feedback: str) -> None:
    """A sample holding only hidden relations: the list is empty but may be incomplete, so
    neither the empty-result check nor get_relation_empty ("not in the KB") rejects the step."""
    kb = OxigraphKB(hub_file, relation_edges=1)
    found = kb.relations("m.0hidden")
    assert found.is_empty and found.truncated
    env = SparqlEnvironment(kb, entities={"Hidden": "m.0hidden"}, analyzer=Eraser() if feedback == "eraser" else None)
    record = env.step("get_relation(m.0hidden)")
    assert record.ok and record.error is None and "may be incomplete" in record.observation
    complete = OxigraphKB(hub_file).relations("m.0hidden")
    assert complete.is_empty and complete.complete
    env = SparqlEnvironment(OxigraphKB(hub_file), entities={"Hidden": "m.0hidden"}, analyzer=Eraser() if feedback == "eraser" else None)
    assert env.step("get_relation(m.0hidden)").error == ("get_relation_empty" if feedback == "eraser" else "empty_result")


def _with_relations(env: SparqlEnvironment, key: str, rels: Relations) -> None:
    """The memory as a get_relation of a hub would leave it (a capped list)."""
    env.memory.relations[key] = rels


@pytest.mark.parametrize("truncated", [True, False])
def test_wrong_direction_asks_the_kb_when_the_list_is_capped(hub_file: Path, truncated: bool) -> None:
    kb = OxigraphKB(hub_file)
    eraser = Eraser()
    env = SparqlEnvironment(kb, entities={"Hub": HUB}, analyzer=eraser)
    # test.rel00.link goes both ways; a capped list showed it backward only.
    _with_relations(env, HUB, Relations((), ("test.rel00.link",), truncated=truncated))
    q0 = kb.stats.queries
    record = env.step(f"add_fact({HUB}, test.rel00.link, ?x)")
    if truncated:
        assert record.ok, record.observation
        assert eraser.stats.kb_queries["fact_wrong_direction"] == 1
        assert kb.stats.queries - q0 == 2  # the ASK and the step's own observation
    else:
        assert record.error == "fact_wrong_direction"
        assert kb.stats.queries == q0  # a complete list needs no ASK, and the step never ran


@pytest.mark.parametrize(("relation", "truncated", "fires"), [
    ("test.person.from", True, False),
    ("test.person.from", False, True),
    ("test.person.nope", True, True),
])
def test_time_constraint_asks_the_kb_when_the_list_is_capped(hub_file: Path, relation: str, truncated: bool, fires: bool) -> None:
    kb = OxigraphKB(hub_file)
    env = SparqlEnvironment(kb, entities={"Hub": HUB}, analyzer=Eraser())
    assert env.step(f"get_relation({HUB})").ok
    assert env.step(f"add_fact(?p, test.person.gender, {HUB})").ok
    _with_relations(env, "?p", Relations(("test.person.gender", "test.person.to"), (), truncated=truncated))
    record = env.step(f"add_time_constrain(?p, {relation}, test.person.to, 2005-12-31, 2005-01-01)")
    assert (record.error == "time_constraint_unknown_relation") == fires, record.observation
    if not fires:
        assert record.ok


@pytest.mark.parametrize(("truncated", "rule"), [(True, "fact_empty_known_relation"), (False, "fact_empty_unknown_relation")])
def test_an_empty_fact_is_told_apart_with_one_ask_when_the_list_is_capped(hub_file: Path, truncated: bool, rule: str) -> None:
    kb = OxigraphKB(hub_file)
    env = SparqlEnvironment(kb, entities={"Hub": HUB}, analyzer=Eraser())
    _with_relations(env, HUB, Relations(("test.other.one",), ("test.person.gender",), truncated=truncated))
    record = env.step(f'add_fact({HUB}, test.rel00.link, "nothing")')  # the relation exists, this tail not
    assert record.error == rule


def test_readi_instantiates_a_relation_the_capped_list_missed(hub_file: Path) -> None:
    kb = OxigraphKB(hub_file, relation_edges=5)
    missed = _missed(kb)
    inst = Instantiator(kb, vocabulary=sorted(ALL_BACKWARD))
    [result] = inst.instantiate([PathSpec("Hub", ("^" + missed,))], {"Hub": HUB}, "which source links to the hub")
    assert result.error is None and result.bound == ("^" + missed,)
    assert [v.short for v in result.values] == [f"m.0s{int(missed[8:10]):02d}"]


# ---------------------------------------------------------------------------
# 3. One pass per argmax

CHAIN = [
    f"get_relation({HUB})",
    f"add_fact(?p, test.person.gender, {HUB})",
    "get_relation(?p)",
    "add_fact(?p, test.person.born, ?dob)",
    "add_max(?dob)",
    "set_answer(?p)",
    "execute()",
]


def _spy(kb: KB) -> list[str]:
    sent: list[str] = []
    select, ask = kb._select, kb._ask
    kb._select = lambda text: sent.append(text) or select(text)  # type: ignore[method-assign]
    kb._ask = lambda text: sent.append(text) or ask(text)  # type: ignore[method-assign]
    return sent


def test_the_argmax_join_is_evaluated_once(engine: Any, hub_file: Path) -> None:
    kb = open_hub(engine, hub_file)
    sent = _spy(kb)
    env = SparqlEnvironment(kb, entities={"Hub": HUB})
    per_step = []
    for line in CHAIN:
        record = env.step(line)
        assert record.ok, (line, record.observation)
        per_step.append(record.kb_queries)
    # add_max: the argmax, plus (once per relation and KB) the kinds of the relation's values:
    # its first 20 edges, then (one kind there) all 30
    assert per_step == [1, 1, 1, 1, 3, 0, 0]
    assert sum("ORDER BY" in text for text in sent) == 1
    # every ?dob is an xsd:date, so the engine's own order is used (an index can answer it)
    assert sum("ORDER BY DESC(?dob)" in text for text in sent) == 1
    assert [a["label"] for a in env.final_json()["answers"]] == [f"Person {PERSONS - 1}"]
    # the same answer as running the final query on its own
    assert [v.label for v in kb.execute(env.query).answers()] == [f"Person {PERSONS - 1}"]
    # the kinds are kept: the same chain again costs one query per step
    again = SparqlEnvironment(kb, entities={"Hub": HUB})
    assert [again.step(line).kb_queries for line in CHAIN] == [1, 1, 1, 1, 1, 0, 0]


def test_a_relation_too_large_to_check_keeps_the_order_key(hub_file: Path) -> None:
    kb = OxigraphKB(hub_file, kind_edges=PERSONS - 1)
    sent = _spy(kb)
    assert kb.value_kind("test.person.born") is None
    assert len(sent) == 2  # the first 20 edges, then kind_edges of the 30: not all of them
    env = SparqlEnvironment(kb, entities={"Hub": HUB})
    for line in CHAIN:
        assert env.step(line).ok, line
    assert sum("IF(isNumeric(?dob)" in text for text in sent) == 1
    assert [a["label"] for a in env.final_json()["answers"]] == [f"Person {PERSONS - 1}"]
    assert OxigraphKB(hub_file, kind_edges=PERSONS).value_kind("test.person.born") == XSD_DATE


def test_get_relation_of_a_variable_after_an_argmax_reuses_its_rows(engine: Any, hub_file: Path) -> None:
    kb = open_hub(engine, hub_file)
    env = SparqlEnvironment(kb, entities={"Hub": HUB})
    for line in CHAIN[1:2] + CHAIN[3:5]:
        assert env.step(line).ok
    sent = _spy(kb)
    record = env.step("get_relation(?p)")
    assert record.ok and record.kb_queries == 1
    assert "ORDER BY" not in sent[0] and "VALUES ?p" in sent[0]
    # the same relations as sampling the values from the query itself
    assert record.result == kb.relations("?p", env.query)
    assert set(record.result.forward) == {"test.person.gender", "test.person.born", "test.person.from", "test.person.to"}


def test_rows_are_reused_only_for_the_same_bounded_pattern(hub_file: Path) -> None:
    kb = OxigraphKB(hub_file)
    env = SparqlEnvironment(kb, entities={"Hub": HUB})
    for line in CHAIN[1:2] + CHAIN[3:5]:
        assert env.step(line).ok
    assert env.bounded_rows is not None
    argmax_rows = env.bounded_rows
    assert argmax_rows is not None
    # a new fact changes the pattern (the argmax now orders the new join): queried again
    record = env.step("add_fact(?p, test.person.from, ?from)")
    assert record.ok and record.kb_queries == 1
    assert env.bounded_rows is not None and env.bounded_rows is not argmax_rows
    # undo goes back to the argmax query, but the rows kept are the other pattern's: not reused
    env.undo()
    record = env.step("set_answer(?dob)")
    assert record.ok and record.kb_queries == 1
    assert record.observation == "The value of variable ?dob is [1979-01-03]"
    record = env.step("set_answer(?p)")
    assert record.ok and record.kb_queries == 0 and record.observation == "The value of variable ?p is ['Person 29' (m.0p29)]"
    # a count without GROUP BY is bounded too: execute() after it reuses its row
    env2 = SparqlEnvironment(kb, entities={"Hub": HUB})
    for line in (CHAIN[1], "add_count(?p, ?n)"):
        assert env2.step(line).ok
    record = env2.step("execute()")
    assert record.kb_queries == 0 and env2.final_json()["answers"] == [{"value": str(PERSONS), "label": None}]


def test_answers_and_observations_are_the_same_without_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every demo question's gold chain gives the same observations and answers with and without reuse.

    Reuse happens above the engine (the rows an engine returned), so one engine
    shows it; tests/test_kb_backends.py runs the chains (with reuse) on all three.
    """
    questions = [json.loads(line) for line in (demo_kb_path().parent / "demo_questions.jsonl").read_text().splitlines() if line.strip()]
    kb = OxigraphKB(demo_kb_path())

    def run() -> list[tuple[list[tuple[bool, str]], list[dict[str, Any]], int]]:
        out = []
        for question in questions:
            env = SparqlEnvironment(kb, question=question["question"], entities=question["entities"])
            records = env.run(question["actions"])
            out.append(([(r.ok, r.observation) for r in records], env.final_json()["answers"], env.counters["kb_queries"]))
        return out

    with_reuse = run()
    monkeypatch.setattr(SparqlEnvironment, "bounded_rows", property(lambda self: None))
    without = run()
    assert [(steps, answers) for steps, answers, _ in with_reuse] == [(steps, answers) for steps, answers, _ in without]
    saved = sum(b - a for (_, _, a), (_, _, b) in zip(with_reuse, without))
    assert saved > 0  # some gold chains end with an argmax or a count


# ---------------------------------------------------------------------------
# Issue 13 item 8: what an observation echoes is capped

BIG = "a" * 1_048_576


@pytest.mark.parametrize("feedback", ["eraser", "none"])
@pytest.mark.parametrize(
    "line",
    [
        f'add_filter(?t, =, "{BIG}")',
        f"get_relation(m.0{BIG})",
        f"add_fact(m.0{BIG}, meteorology.tropical_cyclone.formed, ?x)",
        f'add_fact(?t, meteorology.tropical_cyclone.formed, "{BIG}")',
        f"set_answer(?{BIG})",
        f"add_fact(?t, a.b.{BIG}, ?y)",
        "Thought: " + BIG,
    ],
    ids=["filter-literal", "get_relation-id", "fact-id", "fact-literal", "variable", "relation", "reply"],
)
def test_a_giant_argument_is_not_echoed_whole(line: str, feedback: str) -> None:
    env = SparqlEnvironment(
        KB.open("oxigraph:demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=Eraser() if feedback == "eraser" else None
    )
    assert env.step("get_relation(m.0crbvqz)").ok
    assert env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?t)").ok
    record = env.step(line)
    assert not record.ok
    assert len(record.observation) < 5000, record.observation[:300]
    assert "a" * 1000 not in record.observation
    if record.error not in ("empty_result", "no_action"):
        assert "characters)" in record.observation  # the argument is shown by its beginning


def test_a_giant_value_is_shown_by_its_beginning_but_answered_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.nt"
    path.write_text(f'<{FB}m.0x> <{FB}test.thing.text> "{BIG}" .\n', encoding="utf-8")
    env = SparqlEnvironment(OxigraphKB(path), entities={"X": "m.0x"})
    record = env.step("add_fact(m.0x, test.thing.text, ?text)")
    assert record.ok and len(record.observation) < 1000 and "(1,048,576 characters)" in record.observation
    record = env.step("execute()")
    assert len(record.observation) < 1000
    assert env.final_json()["answers"][0]["value"] == BIG


class _IgnoresLimit(BaseKB):
    """An engine that ignores every LIMIT: it returns 5,000 rows, whatever was asked."""

    name = "ignores-limit"

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        return [
            {"x": IRI(f"{FB}m.0{i}"), "y": Literal(str(i)), "__label_x": Literal(f"X {i}"), "__dir": Literal("forward"), "__r": IRI(f"{FB}a.b.r{i}")}
            for i in range(5000)
        ]

    def _ask(self, sparql: str) -> bool:
        return True


def test_results_beyond_the_limit_asked_for_are_cut() -> None:
    kb = _IgnoresLimit()
    q = Query().add_fact("?x", "a.b.c", "?y")
    obs = kb.observe(q, per_variable=4)
    assert all(len(v.values) <= 4 for v in obs.variables)
    result = kb.execute(q, limit=10)
    assert len(result.rows) == 10 and result.truncated
    rows = kb.bounded_rows(q.add_max("?y"))
    assert len(rows.rows) == 1
    assert len(kb.observe(q.add_max("?y", limit=3)).get("?x").values) == 3  # type: ignore[union-attr]
    assert len(kb.relations("m.0a", limit=20).forward) == 20


def test_a_date_filter_uses_the_engines_comparison_when_the_dates_are_of_its_type(engine: Any, hub_file: Path) -> None:
    kb = open_hub(engine, hub_file)
    sent = _spy(kb)
    q = Query().add_fact("?p", "test.person.gender", HUB).add_fact("?p", "test.person.born", "?dob")
    assert kb.native_compare("?dob", "1970-01-01", q) is True  # born: all xsd:date
    assert kb.native_compare("?dob", Literal("1970", "http://www.w3.org/2001/XMLSchema#gYear"), q) is False
    assert kb.native_compare("?dob", 1970, q) is False and kb.native_compare("?p", "?dob", q) is False
    env = SparqlEnvironment(kb, entities={"Hub": HUB})
    for line in ("add_fact(?p, test.person.gender, m.0hub)", "add_fact(?p, test.person.born, ?dob)",
                 "add_filter(?dob, >=, 1970-01-01)", "set_answer(?p)", "execute()"):
        assert env.step(line).ok, line
    assert any("FILTER(?dob >= " in text for text in sent) and not any("SUBSTR(STR(?dob)" in text for text in sent)
    # the same persons as the text comparison at the coarser precision
    text_query = q.add_filter("?dob", ">=", "1970-01-01").set_answer("?p")
    assert "SUBSTR" in text_query.sparql()
    native = sorted(a["value"] for a in env.final_json()["answers"])
    assert native == sorted(v.short for v in kb.execute(text_query).answers())
    assert len(native) == PERSONS - 20  # born 1970 ... 1979
