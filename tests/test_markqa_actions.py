"""MarkQA queries as action lines: ``Query.actions()`` reads back to an equal query.

Every demo program (``pyql/data/wikidata_questions.jsonl``) is imported,
written as action lines and read back through the action parser and the
SPARQL action set (``pyql convert --from actions``'s reader): the query must
be equal, step for step, and compile to the same SPARQL. Expressions built
at random with MarkQA's functions must survive the same trip through
``add_bind``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyql.builder import expressions as ex
from pyql.errors import ArgumentError, PyQLError, QueryError
from pyql.interchange.actions import read_actions, write_actions
from pyql.interchange.markqa import program_to_query
from pyql.builder.profiles import WIKIDATA
from pyql.builder.query import Query

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [json.loads(line) for line in (ROOT / "pyql" / "data" / "wikidata_questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def _round_trip(query: Query) -> Query:
    return read_actions(write_actions(query), {}, WIKIDATA)


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_a_demo_program_reads_back_from_its_action_lines(question: dict) -> None:
    query = program_to_query(question["markqa"])
    back = _round_trip(query)
    assert back == query, write_actions(query)
    assert back.sparql() == query.sparql()
    assert back.actions() == query.actions()


def test_the_demo_covers_the_composite_arguments() -> None:
    """The table above writes expressions, sub-queries, values, group_obj, offset/limit and a several-variable head."""
    lines = "\n".join(line for q in QUESTIONS for line in program_to_query(q["markqa"]).actions())
    for needle in ("add_bind(mul(div(", "add_sub_query(query(add_", "add_assignment((wd:", "set_head(SELECT ?", "true)"):
        assert needle in lines, needle
    assert any(line.startswith("add_count(") and line.count(",") == 2 for line in lines.splitlines())
    assert any(line.startswith(("add_max(", "add_min(")) and line.count(",") == 3 for line in lines.splitlines())


def test_sub_queries_nest_and_read_back() -> None:
    inner = Query("wikidata").add_quantity("Q64", "P1082", "pop", 2021).add_max("pop", "pop")
    middle = Query("wikidata").add_sub_query(inner).add_bind(ex.mul("pop", 2), "double")
    outer = Query("wikidata").add_sub_query(middle, Query("wikidata").add_time("Q8", "when"))
    assert _round_trip(outer) == outer
    assert "add_sub_query(query(add_sub_query(query(add_quantity(wd:Q64" in outer.actions()[0]


@pytest.mark.parametrize(
    "line, message",
    [
        ("add_sub_query(add_time(Q8, ?t))", "write a sub-query as query("),
        ("add_sub_query(query(execute()))", "execute does not"),
        ("add_sub_query(query(add_time(Q8x, ?t)))", "Q8x"),
        ("add_sub_query(query(add_bind(sub(?a, ?b), ?c)))", "action 1 of the sub-query"),
        ("add_max(?t, ?t, two)", "not a whole number"),
        ("add_sub_query(" + "query(add_sub_query(" * 9 + "query(add_time(Q8, ?t))" + "))" * 9 + ")", "nest deeper than 8"),
    ],
    ids=["not-a-query", "not-a-construct", "bad-qid", "missing-variables", "offset-not-a-number", "too-deep"],
)
def test_bad_composite_arguments_are_one_clear_error(line: str, message: str) -> None:
    text = "add_time(Q8, ?t)\n" + line if line.startswith("add_max") else line
    with pytest.raises(PyQLError) as caught:
        read_actions(text, {}, WIKIDATA)
    assert message in str(caught.value)
    assert isinstance(caught.value, (ArgumentError, QueryError))


# --------------------------------------------------------------------------- expressions

_names = st.sampled_from(["a", "b", "pop_2011", "rate"])
_leaves = st.one_of(
    _names,
    st.decimals(min_value=Decimal("-1e6"), max_value=Decimal("1e6"), allow_nan=False, places=3),
    st.integers(min_value=0, max_value=10**9),
)


def _node(children: st.SearchStrategy) -> st.SearchStrategy:
    two = st.tuples(children, children)
    many = st.lists(children, min_size=1, max_size=4)
    return st.one_of(
        many.map(lambda xs: ex.add(*xs)),
        two.map(lambda xy: ex.sub(*xy)),
        many.map(lambda xs: ex.mul(*xs)),
        two.map(lambda xy: ex.div(*xy)),
        children.map(ex.abs),
        many.map(lambda xs: ex.ceil_mul(*xs)),
        two.map(lambda xy: ex.ceil_div(*xy)),
        many.map(lambda xs: ex.floor_mul(*xs)),
        two.map(lambda xy: ex.floor_div(*xy)),
        many.map(lambda xs: ex.avg(*xs)),
    )


_expressions = st.recursive(_leaves.map(ex.operand), _node, max_leaves=12)
_dates = st.one_of(
    _names.map(ex.year),
    _names.map(ex.month),
    st.dates().filter(lambda d: d.year >= 1).map(lambda d: ex.year(ex.to_date(d.year, d.month, d.day))),
    st.integers(min_value=0, max_value=999).map(ex.to_decimal),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_expressions, _dates))
def test_an_expression_reads_back_from_its_markqa_text(expression: ex.Expression) -> None:
    base = Query("wikidata")
    for name in ("a", "b", "pop_2011", "rate"):
        base = base.add_quantity("Q64", "P1082", name)
    query = base.add_bind(expression, "result")
    back = _round_trip(query)
    assert back.steps[-1].expression == expression, expression.markqa()
    assert back == query
