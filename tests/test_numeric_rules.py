"""ERASER's rules on numbers (correction/numeric_rules.py) on the Wikidata demo KB, through the real environment.

Each rule fires on a realistic mistake with its own id and a guideline that
names the variable, what it holds and concrete candidates from the KB or
the memory; the same episode without the mistake fires nothing; the demo's
own programs run without a numeric rule firing; the probes stay bounded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from correction import Eraser, registry
from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS
from pyql.kb import KB, probes
from pyql.builder.query import Query
from pyql.environment.sparql import SparqlEnvironment
from pyql.builder.terms import Variable

ROOT = Path(__file__).resolve().parent.parent
KB_PATH = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
QUESTIONS = ROOT / "pyql" / "data" / "wikidata_questions.jsonl"
NUMERIC = {
    "bind_unbound_variable",
    "bind_non_numeric",
    "date_function_non_date",
    "division_by_zero",
    "quantity_unit_mismatch",
    "quantity_several_time_points",
    "rank_empty_list",
}
CITIES = {"Berlin": "Q64", "Munich": "Q1726", "Frankfurt": "Q1794"}


@pytest.fixture(scope="module")
def kb() -> Any:
    return KB.open(str(KB_PATH), profile="wikidata")


def _env(kb: Any, question: str = "", entities: dict[str, str] | None = None) -> tuple[SparqlEnvironment, Eraser]:
    eraser = Eraser()
    env = SparqlEnvironment(kb, question=question or None, entities=entities or CITIES, actions=SPARQL_ALL_ACTIONS, analyzer=eraser)
    return env, eraser


def _run(env: SparqlEnvironment, *actions: str) -> Any:
    record = None
    for text in actions:
        record = env.step(text)
    return record


def _ok(env: SparqlEnvironment, *actions: str) -> None:
    for text in actions:
        record = env.step(text)
        assert record.ok, (text, record.error, record.observation)


def test_every_numeric_rule_is_registered_with_a_template() -> None:
    assert {r.id for r in registry if r.trigger.__module__ == "correction.numeric_rules"} == NUMERIC
    for rule_id in NUMERIC:
        found = registry.get(rule_id)
        assert found.kind == "error" and found.kb_queries >= 1 and found.sides == frozenset({"sparql"})
        assert (ROOT / "correction" / "templates" / found.template).is_file()


# -- arithmetic on an unbound or a non-numeric variable ----------------------


def test_bind_on_a_variable_no_step_created_names_it_and_the_quantity_that_makes_it(kb: Any) -> None:
    env, _ = _env(kb, "By what percentage did the population of Berlin grow between 2011 and 2021?")
    _ok(env, "add_quantity(Q64, P1082, pop_2011, 2011)")
    record = env.step("add_bind(sub(?pop_2021, ?pop_2011), ?growth)")
    assert record.error == "bind_unbound_variable"
    text = record.observation
    assert "no step has created ?pop_2021" in text
    # the candidate: the same quantity at the year the name and the question mention
    assert text.index("add_quantity(Q64, P1082, pop_2021, 2021)") < text.index("add_quantity(Q1726")
    assert "Variables holding numbers: ?pop_2011" in text
    _ok(env, "add_quantity(Q64, P1082, pop_2021, 2021)", "add_bind(sub(?pop_2021, ?pop_2011), ?growth)")


def test_bind_on_a_variable_without_a_value_in_any_row(kb: Any) -> None:
    # with division_by_zero switched off, a division by zero leaves ?broken unbound in every row; such a step shows no
    # value (the observation asks no label of a computed number, which bound ?broken to every labelled entity before),
    # so empty_result is switched off too
    env = SparqlEnvironment(kb, entities=CITIES, actions=SPARQL_ALL_ACTIONS, analyzer=Eraser(disabled={"division_by_zero", "empty_result"}))
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)", "add_bind(div(?pop, 0), ?broken)")
    record = env.step("add_bind(add(?broken, 1), ?next)")
    assert record.error == "bind_unbound_variable"
    assert "?broken, which is in the query but has no value in any row" in record.observation


def test_arithmetic_on_an_entity_names_what_the_variable_holds(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)")
    record = env.step("add_bind(sub(?statement_pop, 1), ?x)")
    assert record.error == "bind_non_numeric"
    assert "?statement_pop holds entities (e.g. wds:Q64-P1082-2021" in record.observation
    assert "Variables holding numbers: ?pop" in record.observation
    _ok(env, "add_bind(sub(?pop, 1), ?x)")


def test_arithmetic_on_a_date_suggests_year(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)")
    record = env.step("add_bind(sub(?time_pop, 1), ?x)")
    assert record.error == "bind_non_numeric"
    assert "holds dates" in record.observation and "year(?time_pop)" in record.observation


# -- year/month of a non-date ------------------------------------------------


def test_year_of_an_amount_points_to_the_time_variable(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)")
    record = env.step("add_bind(year(?pop), ?y)")
    assert record.error == "date_function_non_date"
    assert "year(?pop)" in record.observation and "holds numbers (e.g. 3677472" in record.observation
    assert "use year(?time_pop)" in record.observation
    assert _run(env, "add_bind(year(?time_pop), ?y)").observation == "The value of variable ?y is [2021]"


def test_month_of_an_amount_without_time_suggests_time_true(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q130018, P2044, elevation)")
    record = env.step("add_bind(month(?elevation), ?m)")
    assert record.error == "date_function_non_date"
    assert "add_quantity(Q130018, P2044, elevation, true)" in record.observation


# -- division by zero or by nothing ------------------------------------------


def test_division_by_the_number_zero(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)")
    record = env.step("add_bind(div(?pop, 0), ?ratio)")
    assert record.error == "division_by_zero"
    assert "divides by 0, which is zero" in record.observation


def test_division_by_an_expression_zero_in_every_row(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P1082, a, 2011)", "add_quantity(Q64, P1082, b, 2021)")
    record = env.step("add_bind(div(?b, sub(?a, ?a)), ?ratio)")
    assert record.error == "division_by_zero"
    assert "(?a - ?a), which is zero in every row of the query (1 read)" in record.observation
    _ok(env, "add_bind(div(?b, ?a), ?ratio)")


# -- units ---------------------------------------------------------------------


def test_areas_in_km2_and_hectares_divided_name_both_units_and_the_si_calls(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P2046, berlin_area)", "add_quantity(Q1794, P2046, frankfurt_area)")
    record = env.step("add_bind(div(?berlin_area, ?frankfurt_area), ?times)")
    assert record.error == "quantity_unit_mismatch"
    text = record.observation
    assert "?berlin_area is in square kilometre; ?frankfurt_area is in hectare" in text
    assert "add_quantity(Q64, P2046, berlin_area_si, false, true)" in text
    assert "add_quantity(Q1794, P2046, frankfurt_area_si, false, true)" in text
    _ok(
        env,
        "add_quantity(Q64, P2046, berlin_area_si, false, true)",
        "add_quantity(Q1794, P2046, frankfurt_area_si, false, true)",
        "add_bind(div(?berlin_area_si, ?frankfurt_area_si), ?times)",
    )


def test_units_compared_without_unit_true(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P2046, berlin_area)", "add_quantity(Q1794, P2046, frankfurt_area)")
    record = env.step("add_compare(?berlin_area, >, ?frankfurt_area)")
    assert record.error == "quantity_unit_mismatch" and "compares amounts in different units" in record.observation


def test_quantities_of_different_dimensions_divide_freely(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)", "add_quantity(Q64, P2046, area)", "add_bind(div(?pop, ?area), ?density)")


# -- time points -----------------------------------------------------------


def test_a_quantity_with_several_time_points_lists_them(kb: Any) -> None:
    env, _ = _env(kb, "How many people lived in Berlin in 2021?")
    record = env.step("add_quantity(Q64, P1082, pop)")
    assert record.error == "quantity_several_time_points"
    text = record.observation
    assert "2011-05-09: 3292365.0, 2015-12-31: 3520031.0, 2021-12-31: 3677472.0" in text
    # the year the question asks for first, then time=true to keep the point in time
    assert text.index("add_quantity(Q64, P1082, pop, 2021)") < text.index("add_quantity(Q64, P1082, pop, 2011)")
    assert "add_quantity(Q64, P1082, pop, true)" in text
    _ok(env, "add_quantity(Q64, P1082, pop, 2021)")


def test_one_time_point_or_a_class_fires_nothing(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P2046, area)", "add_quantity(Q583, P2044, elevation, true)")


# -- rank --------------------------------------------------------------------


def test_rank_among_nothing(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P2046, berlin_area, false, true)")
    missing = env.step("add_rank(?berlin_area, ?area, ?rank)")
    assert missing.error == "rank_empty_list" and "no step has created ?area" in missing.observation
    assert "add_quantity(?item, P2046, area, false, true)" in missing.observation
    itself = env.step("add_rank(?berlin_area, ?berlin_area, ?rank)")
    assert itself.error == "rank_empty_list" and "is the ranked variable itself" in itself.observation


def test_rank_among_only_the_ranked_value(kb: Any) -> None:
    env, _ = _env(kb)
    _ok(env, "add_quantity(Q64, P2046, berlin_area, false, true)", "add_quantity(Q64, P2046, same_area, false, true)")
    record = env.step("add_rank(?berlin_area, ?same_area, ?rank)")
    assert record.error == "rank_empty_list" and "holds no value other than ?berlin_area's own" in record.observation


# -- the analyzer tells them apart, and the demo's programs pass ---------------


def test_each_mistake_gets_its_own_rule(kb: Any) -> None:
    env, eraser = _env(kb)
    _ok(env, "add_quantity(Q64, P2046, berlin_area)", "add_quantity(Q1794, P2046, frankfurt_area)", "add_quantity(Q64, P1082, pop, 2021)")
    seen = [
        env.step(text).error
        for text in (
            "add_bind(sub(?nothing, ?pop), ?a)",
            "add_bind(sub(?statement_pop, ?pop), ?b)",
            "add_bind(year(?pop), ?c)",
            "add_bind(div(?pop, 0), ?d)",
            "add_bind(sub(?berlin_area, ?frankfurt_area), ?e)",
            "add_rank(?pop, ?pop, ?f)",
        )
    ]
    assert seen == [
        "bind_unbound_variable",
        "bind_non_numeric",
        "date_function_non_date",
        "division_by_zero",
        "quantity_unit_mismatch",
        "rank_empty_list",
    ]
    assert all(eraser.stats.counts[rule_id] == 1 for rule_id in seen)
    assert not eraser.stats.over_budget


def _actions(program: str) -> list[str] | None:
    """A one-query MarkQA program as action lines, when each of its lines reads as one (positional arguments)."""
    lines = [line for line in program.splitlines() if line.startswith("a.add_")]
    if any("=" in line or "add_type_constrain" in line or "add_max" in line or "add_min" in line or "add_compare" in line
           or "add_assignment" in line or "to_date" in line or "add_fact" in line for line in lines):
        return None
    return [re.sub(r"^a\.", "", line).replace("'", "") for line in lines]


def test_the_demo_programs_fire_no_numeric_rule(kb: Any) -> None:
    checked = 0
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        actions = _actions(question["markqa"])
        if not actions:
            continue
        env, eraser = _env(kb, question["question"], question["entities"])
        for text in actions:
            record = env.step(text)
            assert record.ok, (question["id"], text, record.error, record.observation)
        assert not set(eraser.stats.counts) & NUMERIC, question["id"]
        checked += 1
    assert checked >= 15


def test_numeric_probes_are_bounded_by_limit(kb: Any) -> None:
    q = Query("wikidata").add_quantity("Q64", "P1082", "a").add_quantity("Q64", "P2046", "b")
    texts = [
        probes.operand_stats_query(q, [Variable("a")]),
        probes.quantity_units_query(q, [Variable("value_st_a")]),
        probes.time_points_query(q, Variable("statement_a"), q.steps[0].entity, Variable("a")),
    ]
    for text in texts:
        assert f"LIMIT {probes.NUMERIC_ROWS} }}" in text
    stats = probes.read_operand_stats(kb.select(texts[0]), 1)
    assert stats.rows == 3 and stats.variables[0].kinds() == {"number"}
