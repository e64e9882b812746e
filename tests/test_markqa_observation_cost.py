"""What the observation of a numeric step asks the engine, so that it stays bounded on a large KB (issue 36, item 4).

At 10^6 statements ``add_quantity(unit=True)`` took 2.4-5.8 s a step and
``add_bind`` 0.8-3.0 s, against 0.3 ms for the compiled query alone
(``benchmarks/bench_markqa.py``; ``docs/results.md``). Both costs were in
the queries around the step, where pyoxigraph evaluates a pattern before it
knows the variable it joins on: the SI unit of a converted amount looked up
as a property path inside an OPTIONAL (every unit conversion of the KB), and
the label of a variable a BIND made (every label of the KB). The
observation now looks the SI unit up one triple at a time from the bound
value node, and asks no label of what a step computes into a literal.
"""

from __future__ import annotations

import re

import pytest

from pyql.builder.expressions import Var, div, mul, sub, year
from pyql.builder.query import Query
from pyql.kb import KB, probes, quantities

W = Query("wikidata")
GROWTH = W.add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021).add_bind(
    mul(div(sub("b", "a"), "a"), 100), "growth")
CONVERTED = W.add_quantity("Q130018", "P2044", "elevation", unit=True)


def _quantity_text(query: Query) -> str:
    base, focus = quantities.quantity_focus(query)  # type: ignore[misc]
    return quantities.quantity_query(base, focus, 10)


def test_the_si_unit_is_looked_up_from_the_bound_value_node_one_triple_at_a_time() -> None:
    text = _quantity_text(CONVERTED.add_bind(mul("elevation", 2), "double"))
    look_ups = text.split("LIMIT 11", 1)[1]
    assert "quantityUnit/p:P2370" not in look_ups  # no path inside an OPTIONAL
    chain = re.search(r"OPTIONAL \{ \?non_si_value_st_elevation wikibase:quantityUnit (\?\w+) \. OPTIONAL \{ \1 p:P2370 (\?\w+) \. "
                      r"OPTIONAL \{ \2 psv:P2370 (\?\w+) \. OPTIONAL \{ \3 wikibase:quantityUnit \?__q\d+_si \.", look_ups)
    assert chain, look_ups


@pytest.mark.parametrize(
    "query, computed",
    [
        (GROWTH, "?growth"),
        (CONVERTED, "?elevation"),
        (W.add_start_time("Q181278", "s").add_end_time("Q181278", "e").add_bind(sub(year("e"), year("s")), "years"), "?years"),
    ],
    ids=["arithmetic", "converted-amount", "years-between"],
)
def test_a_computed_number_is_never_labelled(query: Query, computed: str) -> None:
    text, _ = probes.observation_query(query, 10, 1000)
    assert f"{computed} rdfs:label" not in text and f"{computed} <http://www.w3.org/2000/01/rdf-schema#label>" not in text
    assert re.sub(r"\s+", " ", probes.rows_query(query, 5)[0]).count(f"SAMPLE(?__l_{computed[1:]})") == 0


def test_a_bind_that_copies_a_variable_keeps_its_label() -> None:
    """``add_bind('?a', 'copy')`` may copy an entity: its label is still asked for."""
    query = W.add_type_constrain("Q515", "city").add_bind(Var("city"), "copy")
    assert "?copy rdfs:label" in probes.observation_query(query, 10, 1000)[0]
    assert probes.unlabelled(query) == frozenset()


def test_the_observation_of_the_demo_says_the_same() -> None:
    """The look-ups changed, not what an observation shows: the SI unit, the stored unit, the labels."""
    kb = KB.open("wikidata-demo")
    converted = kb.observe(W.add_quantity("Q130018", "P2044", "elevation", unit=True))
    shown = str(converted.quantities)
    assert "metre" in shown and "foot" in shown, shown
    assert "The value of variable ?growth" in str(kb.observe(GROWTH))
