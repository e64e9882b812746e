"""The choose mode on a Wikidata-shaped KB enumerates MarkQA's steps (issue 21, item 6, enumeration).

Quantity steps for the entities and variables in play (each property with
quantity statements, with the times and units a bounded probe saw), arithmetic
over the numeric variables bound so far and the question's numbers, and the
cost: a fixed number of bounded KB queries per enumeration, the same on a KB
with many more statements.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from agent.methods.choose import auto_look, enumerate_choices
from pyql.kb import KB
from pyql.environment.next_steps import (
    QUANTITY_PROBE_ROWS,
    auxiliary_variables,
    next_steps,
    question_literals,
    quantity_facts,
    quantity_probe_query,
)
from pyql.builder.profiles import WIKIDATA
from pyql.environment.sparql import SparqlEnvironment
from pyql.builder.terms import IRI
from tests.demo import DemoEnv

ROOT = Path(__file__).resolve().parent.parent
KB_PATH = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
QUESTIONS = {
    q["id"]: q
    for q in (json.loads(line) for line in (ROOT / "pyql" / "data" / "wikidata_questions.jsonl").read_text().splitlines() if line.strip())
}
WD = "http://www.wikidata.org/entity/"


@pytest.fixture(scope="module")
def kb() -> KB:
    return KB.open(str(KB_PATH), profile="wikidata")


def _env(kb: KB, qid: str) -> SparqlEnvironment:
    item = QUESTIONS[qid]
    return SparqlEnvironment(kb, item["question"], entities=item["entities"])


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("markqa_choose", ROOT / "benchmarks" / "markqa_choose.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_difference_question_lists_its_gold_steps(kb: KB) -> None:
    """w01: both populations of 2021 are offered first, then the difference in the gold order."""
    env = _env(kb, "w01")
    auto_look(env)
    first = [s.action for s in enumerate_choices(env, limit=6)]
    assert first[:2] == ["add_quantity(Q1055, P1082, ?hamburg_population_2021, 2021)",
                         "add_quantity(Q1726, P1082, ?munich_population_2021, 2021)"]
    env.step(first[0])
    env.step(first[1])
    auto_look(env)
    shown = [s.action for s in enumerate_choices(env, limit=6)]
    assert shown[0] == "add_bind(sub(?hamburg_population_2021, ?munich_population_2021), ?difference)"
    record = env.step(shown[0])
    assert record.ok and "366227" in record.observation  # the demo's answer for w01
    assert QUESTIONS["w01"]["answers"] == ["366227"]


def test_times_and_units_observed(kb: KB) -> None:
    berlin = {f.prop: f for f in quantity_facts(kb, [IRI(WD + "Q64")])}
    assert berlin["P1082"].years == ["2021", "2015", "2011"] and not berlin["P1082"].has_unit
    denali = {f.prop: f for f in quantity_facts(kb, [IRI(WD + "Q130018")])}
    assert denali["P2044"].has_unit  # feet: unit=true is offered
    env = _env(kb, "w04")  # Berlin between 2011 and 2021
    actions = [s.action for s in next_steps(env, verify=False, limit=200) if s.kind == "quantity"]
    population = [a for a in actions if ", P1082, " in a]
    assert population[:2] == ["add_quantity(Q64, P1082, ?berlin_population_2011, 2011)",
                              "add_quantity(Q64, P1082, ?berlin_population_2021, 2021)"]
    assert "add_quantity(Q64, P1082, ?berlin_population, true)" in population  # several times: ask for the time
    assert not any(a.endswith("2022)") for a in population)  # a year no statement has is not offered
    assert any(a.endswith(", false, true)") for a in actions if ", P2046, " in a)  # area in km²: convert to SI
    denali_env = _env(kb, "w12")
    assert any(re.fullmatch(r"add_quantity\(Q130018, P2044, \?denali_elevation\w*, false, true\)", s.action) for s in next_steps(denali_env))


def test_arithmetic_over_variables_and_question_numbers(kb: KB) -> None:
    env = _env(kb, "w04")
    env.step("add_quantity(Q64, P1082, ?population_2011, 2011)")
    env.step("add_quantity(Q64, P1082, ?population_2021, 2021)")
    binds = [s.action for s in next_steps(env, verify=False, limit=500) if s.kind == "arithmetic"]
    # the growth rate in percent, later year first, is the first bind for "by what percentage did it grow"
    assert binds[0] == "add_bind(mul(div(sub(?population_2021, ?population_2011), ?population_2011), 100), ?growth)"
    for form in ("sub", "div", "abs(sub", "floor_div", "ceil_div"):
        assert any(b.startswith(f"add_bind({form}(?population_2021, ?population_2011") for b in binds), form
    # no arithmetic on MarkQA's own variables (statement nodes, the time of a year asked for)
    hidden = auxiliary_variables(env.query)
    assert hidden and not any(h in b for b in binds for h in hidden)
    heights = _env(kb, "w15")  # "at 0.3048 metres per foot"
    heights.step("add_quantity(Q9188, P2048, ?height_in_feet)")
    binds = [s.action for s in next_steps(heights, verify=False, limit=500) if s.kind == "arithmetic"]
    assert "add_bind(mul(?height_in_feet, to_decimal(0.3048)), ?product)" in binds


def test_numbers_and_days_of_the_question() -> None:
    literals = question_literals("Did more than 1.4 million people live there on 31 December 2021, or one thousand after January 1, 2015?")
    assert "1400000" in literals["numbers"] and "1000" in literals["numbers"]
    assert literals["dates"] == ["2021-12-31", "2015-01-01"]


def test_freebase_lists_no_markqa_step(demo_env: DemoEnv) -> None:
    env = demo_env("which cyclone had the highest winds?", entities={"Rachel": "m.0crbvqz"})
    env.step("get_relation(m.0crbvqz)")
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.highest_winds, ?winds)")
    assert not {s.kind for s in next_steps(env)} & {"quantity", "arithmetic"}


def test_qualifiers_and_times(kb: KB) -> None:
    env = _env(kb, "w41")
    actions = [s.action for s in next_steps(env, verify=False, limit=200)]
    assert "add_quantity_with_qualifier(Q183, P2250, P21, Q6581072, ?germany_life_expectancy_female)" in actions
    phone = [s.action for s in next_steps(_env(kb, "w42"), verify=False, limit=200)]
    assert any(a.startswith("add_quantity_by_qualifier(Q56599233, P186, Q172587, P2067, ?") for a in phone)
    games = _env(kb, "w36")
    auto_look(games)
    assert any(s.action.startswith("add_end_time(Q181278, ?") for s in next_steps(games))


def _counted(kb: KB, env: SparqlEnvironment, limit: int) -> tuple[int, list[str]]:
    texts: list[str] = []
    select = kb.select

    def spy(sparql: str) -> list:
        texts.append(sparql)
        return select(sparql)

    kb.select = spy  # type: ignore[method-assign]
    try:
        before = kb.stats.queries
        next_steps(env, limit=limit)
        return kb.stats.queries - before, texts
    finally:
        del kb.select


def _bigger_kb(tmp_path: Path, statements: int) -> KB:
    """The demo plus ``statements`` more population statements of Berlin (a hub) and of new cities."""
    lines = [KB_PATH.read_text(encoding="utf-8")]
    for i in range(statements):
        lines.append(
            f"wd:Q64 p:P1082 wds:extra-{i} . wds:extra-{i} psv:P1082 wdv:extra-{i} ; "
            f'pq:P585 "{1900 + i % 100}-01-01T00:00:00Z"^^xsd:dateTime . '
            f'wdv:extra-{i} wikibase:quantityAmount "{i}"^^xsd:decimal ; wikibase:quantityUnit wd:Q199 .\n'
            f'wd:Q9{i:06d} wdt:P31 wd:Q515 ; wdt:P17 wd:Q183 ; rdfs:label "Town {i}"@en .'
        )
    path = tmp_path / "bigger.ttl"
    path.write_text("\n".join(lines), encoding="utf-8")
    return KB.open(str(path), profile="wikidata")


def test_cost_is_bounded_and_does_not_grow_with_the_kb(tmp_path: Path) -> None:
    """One enumeration sends at most ``limit`` trials plus a fixed number of bounded probes, each with a LIMIT;
    on a KB with thousands more statements of the same entities it sends no more queries."""
    limit = 12
    kb = KB.open(str(KB_PATH), profile="wikidata")  # a fresh KB object: nothing kept from other tests
    small_env = _env(kb, "w04")
    small_env.step("add_quantity(Q64, P1082, ?population_2011, 2011)")
    small, texts = _counted(kb, small_env, limit)
    probes = [t for t in texts if "wikibase:quantityAmount ?amount" in t]
    assert all(re.search(rf"LIMIT {QUANTITY_PROBE_ROWS}\s*$", t) for t in probes)
    entities = 1  # Berlin; a probe per entity or variable, kept per KB object afterwards
    assert small <= limit + 2 * entities + 2
    again, texts = _counted(kb, small_env, limit)
    assert not [t for t in texts if "wikibase:quantityAmount ?amount" in t]  # the probe is kept
    big = _bigger_kb(tmp_path, 3000)
    big_env = SparqlEnvironment(big, small_env.question, entities=QUESTIONS["w04"]["entities"])
    big_env.step("add_quantity(Q64, P1082, ?population_2011, 2011)")
    large, _ = _counted(big, big_env, limit)
    assert large <= small
    facts = {f.prop: f for f in quantity_facts(big, [IRI(WD + "Q64")])}
    assert len(facts["P1082"].times) <= QUANTITY_PROBE_ROWS  # what a probe reads is capped, whatever the KB holds


def test_probe_text_goes_through_the_profile() -> None:
    q = quantity_probe_query(WIKIDATA, [IRI(WD + "Q64"), IRI(WD + "Q1055")], limit=7)
    assert q.startswith(WIKIDATA.prefix_lines()) and "VALUES ?e { wd:Q64 wd:Q1055 }" in q and q.rstrip().endswith("LIMIT 7")


@pytest.mark.parametrize("qid", ["w01", "w04", "w09", "w11", "w41", "w42", "w45"])
def test_gold_steps_of_demo_questions_are_listed(qid: str, kb: KB) -> None:
    """Replayed along the gold program, every gold step of these questions is among the choose mode's six."""
    rows = _benchmark().replay(kb, QUESTIONS[qid], limit=30, choices=6)
    assert rows and all(row["writable"] for row in rows)
    assert [row["step"] for row in rows if not row["shown"]] == []
