"""Every builder step returns a new query and leaves the receiver untouched."""

from __future__ import annotations

import dataclasses

import pytest

from pyql import Query

BASE = Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t").add_fact(
    "?c", "meteorology.tropical_cyclone.highest_winds", "?w"
)

STEPS = [
    ("add_fact", ("?c", "meteorology.tropical_cyclone.category", "?k"), {}),
    ("add_type_constrain", ("meteorology.tropical_cyclone", "?c"), {}),
    ("add_filter", ("?w", ">", 200), {}),
    ("add_compare", ("?w", ">", 100), {}),
    ("add_max", ("?t",), {"limit": 2}),
    ("add_min", ("?w",), {}),
    ("add_count", ("?c", "?n"), {}),
    ("add_sum", ("?w", "?s"), {}),
    ("add_avg", ("?w", "?a"), {"group_by": ["?t"]}),
    ("add_time_constrain", ("?c", "a.b.from", "a.b.to", "2005-12-31", "2005-01-01"), {}),
    ("set_answer", ("?c",), {}),
    ("undo", (), {}),
]


@pytest.mark.parametrize("name,args,kwargs", STEPS, ids=[s[0] for s in STEPS])
def test_step_returns_a_new_query_and_keeps_the_old_one(name: str, args: tuple, kwargs: dict) -> None:
    before_steps = BASE.steps
    before_sparql = BASE.sparql()
    result = getattr(BASE, name)(*args, **kwargs)
    assert result is not BASE
    assert BASE.steps is before_steps and BASE.sparql() == before_sparql
    assert result.sparql() != before_sparql


def test_query_and_steps_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        BASE.steps = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        BASE.steps[0].head = BASE.steps[0].tail  # type: ignore[misc]
    assert isinstance(BASE.steps, tuple)


def test_branches_from_one_query_do_not_see_each_other() -> None:
    a = BASE.add_max("?t")
    b = BASE.add_min("?t")
    assert a.steps[:-1] == b.steps[:-1] == BASE.steps
    assert "DESC(" in a.sparql() and "ASC(" in b.sparql() and "DESC(" not in b.sparql()


def test_queries_are_hashable_values() -> None:
    again = Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t").add_fact(
        "?c", "meteorology.tropical_cyclone.highest_winds", "?w"
    )
    assert again == BASE and hash(again) == hash(BASE)
    assert len({BASE, again, BASE.add_max("?t")}) == 2


WD = Query("wikidata").add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021)


class _Diff:
    """A stand-in expression (pyql.builder.expressions builds the real ones)."""

    def variables(self) -> tuple[str, ...]:
        return ("b", "a")

    def sparql(self, profile: object) -> str:
        return "(?b - ?a)"


MARKQA_STEPS = [
    ("add_quantity", ("Q90", "P2046", "area"), {"unit": True}),
    ("add_quantity_with_qualifier", ("Q64", "P2069", "P518", "Q2", "perf"), {}),
    ("add_quantity_by_qualifier", ("Q64", "P186", "Q2", "P2067", "mass"), {}),
    ("add_bind", (_Diff(), "g"), {}),
    ("add_rank", ("a", "b", "r"), {}),
    ("add_sub_query", (Query("wikidata").add_time("Q8", "t"),), {}),
    ("add_assignment", (["Q1", "Q2"], "x"), {}),
    ("add_start_time", ("Q8", "s"), {}),
    ("add_end_time", ("Q8", "e"), {}),
    ("add_time", ("Q8", "t"), {}),
    ("add_type_constrain", ("Q515", "city"), {}),
    ("add_count", ("?a", "?n"), {"group_obj": "?b"}),
    ("add_max", ("?a", "?b"), {"offset": 1}),
    ("set_head", ("SELECT ?a",), {}),
]


@pytest.mark.parametrize("name,args,kwargs", MARKQA_STEPS, ids=[s[0] for s in MARKQA_STEPS])
def test_markqa_step_returns_a_new_query_and_keeps_the_old_one(name: str, args: tuple, kwargs: dict) -> None:
    before_steps, before_sparql = WD.steps, WD.sparql()
    result = getattr(WD, name)(*args, **kwargs)
    assert result is not WD and WD.steps is before_steps and WD.sparql() == before_sparql
    assert result.sparql() != before_sparql or result.answer != WD.answer
