"""Observations of quantity steps on the Wikidata demo KB: amounts with units and time points, by entity.

Every expectation is checked against the KB itself (a plain query of the
statement model), on pyoxigraph and rdflib, never against typed-in numbers
where the KB can say them.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from pyql.errors import EngineError
from pyql.builder.expressions import sub
from pyql.kb import KB
from pyql.kb.quantities import SAMPLE_ROWS, observe_quantities, quantity_focus, quantity_query
from pyql.kb.observation import Amount, QuantityRows
from pyql.builder.query import Query
from pyql.environment.sparql import SparqlEnvironment
from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS

WD = "http://www.wikidata.org/entity/"
PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX psv: <http://www.wikidata.org/prop/statement/value/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


@pytest.fixture(scope="module", params=["wikidata-demo", "rdflib:wikidata-demo"])
def kb(request: pytest.FixtureRequest) -> KB:
    return KB.open(request.param)


def _statements(kb: KB, entity: str, pid: str) -> dict[Decimal, tuple[str, str | None]]:
    """amount → (unit label, point in time day) of every statement of ``entity pid``, read directly."""
    rows = kb.select(
        PREFIXES + f"SELECT ?a ?ul ?t WHERE {{ wd:{entity} p:{pid} ?s . ?s psv:{pid} ?v . ?v wikibase:quantityAmount ?a . "
        f"?v wikibase:quantityUnit ?u . ?u rdfs:label ?ul . OPTIONAL {{ ?s pq:P585 ?t }} }}"
    )
    return {Decimal(r["a"].lexical): (r["ul"].lexical, r["t"].lexical[:10] if r.get("t") else None) for r in rows}


def _number(amount: Amount) -> Decimal:
    return Decimal(amount.value.term.lexical)  # type: ignore[union-attr]


def test_amounts_carry_their_unit_time_and_entity(kb: KB) -> None:
    q = Query("wikidata").add_quantity("Q64", "P1082", "pop")
    table = kb.observe(q).quantities
    assert table is not None and table.variables[0].name == "pop"
    truth = _statements(kb, "Q64", "P1082")
    assert len(truth) >= 3, "the demo has several Berlin populations"
    seen = {_number(row[0]): row[0] for row in table.rows}
    assert set(seen) == set(truth)
    for amount, (unit, day) in truth.items():
        cell = seen[amount]
        assert cell.entity is not None and cell.entity.label == "Berlin"
        assert cell.point_in_time is not None and cell.point_in_time.display().startswith(day or "-")
        assert cell.unit is not None and cell.unit.label == unit
    text = str(kb.observe(q))
    # one group for Berlin, its amounts in time order, the unit "1" not written, the preferred one marked
    group = text[text.index("Quantities of ?pop by entity: 'Berlin'"):]
    days = [truth[a][1] for a in sorted(truth, key=lambda a: truth[a][1] or "")]
    assert [group.index(d) for d in days] == sorted(group.index(d) for d in days)
    assert "preferred" in group and " 1 " not in group and "1 (" not in group.replace("1 (2", "")


def test_rows_stay_with_their_entity_under_a_type_constraint(kb: KB) -> None:
    q = Query("wikidata").add_type_constrain("Q515", "city").add_quantity("city", "P1082", "pop", True)
    table = kb.observe(q, per_variable=50).quantities
    assert table is not None and len(table.rows) > 5
    for (cell,) in table.rows:
        entity = cell.entity.term.value[len(WD):]  # type: ignore[union-attr]
        truth = _statements(kb, entity, "P1082")
        assert _number(cell) in truth, f"{cell.display()} is not a population of {entity}"
        assert (cell.point_in_time.display()[:10] if cell.point_in_time else None) == truth[_number(cell)][1]


def test_unit_conversion_shows_the_si_unit_and_the_stored_amount(kb: KB) -> None:
    plain = kb.observe(Query("wikidata").add_quantity("Q130018", "P2044", "denali")).quantities
    unit, _ = next(iter(_statements(kb, "Q130018", "P2044").values()))
    assert plain is not None and plain.rows[0][0].unit.label == unit == "foot"  # type: ignore[union-attr]
    converted = kb.observe(Query("wikidata").add_quantity("Q130018", "P2044", "denali", unit=True)).quantities
    cell = converted.rows[0][0]  # type: ignore[union-attr]
    assert cell.unit.label == "metre" and cell.stored_unit.label == "foot"  # type: ignore[union-attr]
    assert _number(cell) == Decimal(cell.stored.term.lexical) * Decimal("0.3048")  # type: ignore[union-attr]
    assert "metre (stored as 20,310 foot)" in str(converted)


def test_a_bind_is_shown_with_the_amounts_it_came_from(kb: KB) -> None:
    q = Query("wikidata").add_quantity("Q64", "P1082", "a").add_quantity("Q64", "P1082", "b", 2021)
    table = kb.observe(q.add_bind(sub("b", "a"), "d"), per_variable=20).quantities
    assert table is not None and [v.name for v in table.variables] == ["d", "b", "a"]
    assert len(table.rows) == len(_statements(kb, "Q64", "P1082")), "one row per ?a (no time asked)"
    for d, b, a in table.rows:
        assert _number(d) == _number(b) - _number(a), "each result beside the operands that gave it"
        assert b.point_in_time.display().startswith("2021")  # type: ignore[union-attr]
    assert "Quantities: ?b is 3,677,472 (2021-12-31; preferred) of 'Berlin' (wd:Q64) in every row" in str(table)


def test_a_rank_shows_what_it_ranked_among(kb: KB) -> None:
    base = Query("wikidata").add_quantity("Q1726", "P1082", "m", 2021).add_type_constrain("Q515", "city")
    q = base.add_quantity("city", "P1082", "p", 2021).add_rank("m", "p", "r")
    observation = kb.observe(q, per_variable=50)
    table = observation.quantities
    assert observation.get("?r") is not None and table is not None
    ranked = {row[1].entity.label: _number(row[1]) for row in table.rows}  # type: ignore[union-attr]
    rank = int(observation.get("?r").values[0].term.lexical)  # type: ignore[union-attr]
    assert rank == 1 + sum(1 for v in set(ranked.values()) if v > ranked["Munich"])
    assert "?m is 1,487,708" in str(table) and "in every row; ?p by entity:" in str(table)


def test_a_comparison_shows_both_sides_even_when_the_answer_is_no(kb: KB) -> None:
    q = Query("wikidata").add_quantity("Q130018", "P2044", "d", unit=True).add_quantity("Q513", "P2044", "e", unit=True)
    observation = kb.observe(q.add_compare("?d", ">", "?e"))
    assert observation.boolean is False
    assert "The answer is no. Quantities: per row (?d | ?e): (6,190.488 metre (stored as 20,310 foot) of 'Denali'" in str(observation)


def test_dates_of_time_steps_are_days_with_their_entity(kb: KB) -> None:
    text = str(kb.observe(Query("wikidata").add_end_time("Q181278", "end")))
    assert "Quantities of ?end by entity: '2020 Summer Olympics' (wd:Q181278): 2021-08-08" in text
    # beside its entity in the joined rows already: not said twice
    both = str(kb.observe(Query("wikidata").add_type_constrain("Q159821", "g").add_start_time("g", "s")))
    assert "Rows (?g, ?s)" in both and "Quantities" not in both


def test_qualifier_quantities(kb: KB) -> None:
    text = str(kb.observe(Query("wikidata").add_quantity_by_qualifier("Q56599233", "P186", "Q172587", "P2067", "steel")))
    assert "Quantities of ?steel by entity: 'iPhone XS Max' (wd:Q56599233): 67 gram" in text
    text = str(kb.observe(Query("wikidata").add_quantity_with_qualifier("Q183", "P2250", "P21", "Q6581072", "f")))
    assert "'Germany' (wd:Q183): 83.4 year" in text


def test_the_step_environment_shows_them(kb: KB) -> None:
    env = SparqlEnvironment(kb, question="population of Berlin", entities={"Berlin": "Q64"}, actions=SPARQL_ALL_ACTIONS)
    record = env.step("add_quantity(Q64, P1082, pop, 2011)")
    assert record.ok and "Quantities of ?pop by entity: 'Berlin' (wd:Q64): 3,292,365 (2011-05-09)" in record.observation


def test_the_query_is_bounded_and_free_for_freebase() -> None:
    q = Query("wikidata").add_type_constrain("Q515", "city").add_quantity("city", "P1082", "pop")
    text = quantity_query(*quantity_focus(q), 10)  # type: ignore[misc]
    assert f"LIMIT {SAMPLE_ROWS}\n" in text and "LIMIT 11\n" in text and text.rstrip().endswith("LIMIT 88")
    demo = KB.open("demo")
    before = demo.stats.queries
    demo.observe(Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c"))
    assert demo.stats.queries - before == 1, "a Freebase step sends no quantity query"


def test_many_statements_show_the_first_rows_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = ["@prefix wd: <http://www.wikidata.org/entity/> . @prefix p: <http://www.wikidata.org/prop/> .",
             "@prefix psv: <http://www.wikidata.org/prop/statement/value/> . @prefix wikibase: <http://wikiba.se/ontology#> .",
             "@prefix wdt: <http://www.wikidata.org/prop/direct/> ."]
    for i in range(3000):
        lines.append(f"wd:Q{i + 1000} wdt:P31 wd:Q515 ; p:P1082 wd:S{i} . wd:S{i} psv:P1082 wd:V{i} . "
                     f"wd:V{i} wikibase:quantityAmount {i} ; wikibase:quantityUnit wd:Q199 .")
    path = tmp_path / "many.ttl"
    path.write_text("\n".join(lines))
    kb = KB.open(str(path), "wikidata")
    table = kb.observe(Query("wikidata").add_fact("?city", "wdt:P31", "wd:Q515").add_quantity("city", "P1082", "pop")).quantities
    assert table is not None and len(table.rows) == 10 and table.more
    assert str(table).endswith("; ...")


def test_a_failed_look_up_is_said_not_raised() -> None:
    kb = KB.open("wikidata-demo")
    q = Query("wikidata").add_quantity("Q64", "P1082", "pop")
    observation = kb.observe(q)

    class Failing:
        value = kb.value

        def select(self, text: str) -> list:
            raise EngineError("the endpoint timed out after 5 s")

    out = observe_quantities(Failing(), q, observation, 10)
    assert str(out).endswith("Units and times of ?pop not read: the endpoint timed out after 5 s")
    assert isinstance(out.quantities, QuantityRows) and out.quantities.to_dict()["error"]
