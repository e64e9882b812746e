"""Observations say which values go together (issue 25, item 3): rows beside the sorted lists."""

from __future__ import annotations

from pyql.kb import KB, probes
from pyql.builder.query import Query

WINDS = "meteorology.tropical_cyclone.highest_winds"


def test_joined_variables_are_shown_as_rows_in_the_same_query(demo_kb: KB) -> None:
    q = Query().add_fact("?cyclone", "meteorology.tropical_cyclone.affected_areas", "m.04ly1").add_fact("?cyclone", WINDS, "?winds")
    before = demo_kb.stats.queries
    obs = demo_kb.observe(q)
    assert demo_kb.stats.queries - before == 1  # still one query
    text = str(obs)
    # the lists stay sorted on their own, with their counts; the rows pair them
    assert "The value of variable ?winds is [95.0, 130.0, 280.0, 285.0]" in text  # distinct, sorted on its own
    assert "('Tropical Storm Allison', 95.0), ('Tropical Storm Lee', 95.0)" in text  # two cyclones, one value
    assert "Rows (?cyclone, ?winds): " in text and "('Hurricane Katrina', 280.0)" in text and "('Hurricane Rita', 285.0)" in text
    assert all(v.total == len(v.values) for v in obs.variables)


def test_rows_keep_the_caps_and_leave_out_single_valued_variables(demo_kb: KB) -> None:
    q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").add_fact("?x", "meteorology.tropical_cyclone.category", "?c")
    q = q.add_fact("?x", "meteorology.tropical_cyclone.formed", "?t")
    obs = demo_kb.observe(q, per_variable=2)
    assert obs.joined is not None and [str(v) for v in obs.joined.variables] == ["?x", "?t"]  # ?c has one value
    assert len(obs.joined.rows) == 2 and obs.joined.more and str(obs).endswith(", ...")
    text, _ = probes.observation_query(q, per_variable=2)
    assert "LIMIT 3" in text and "(1 AS ?__row)" in text and "LIMIT 1001" in text  # every branch is bounded
    single = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
    assert "(1 AS ?__row)" not in probes.observation_query(single)[0] and demo_kb.observe(single).joined is None
