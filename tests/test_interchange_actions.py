"""The ``actions`` conversion format (pyql/interchange/actions.py): action lines in and out."""

from __future__ import annotations

import pytest

from pyql.action_parser import parse_action
from pyql.errors import ActionSyntaxError, ArgumentError, InvalidActionError, QueryError
from pyql.interchange import convert
from pyql.interchange.actions import calls_to_query, read_actions, write_actions
from pyql.builder.profiles import FREEBASE, WIKIDATA
from pyql.builder.query import Query

CYCLONES = (
    Query()
    .add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?category")
    .add_fact("?cyclone", "meteorology.tropical_cyclone.category", "?category")
    .add_fact("?cyclone", "meteorology.tropical_cyclone.formed", "?time")
    .add_max("?time")
    .add_filter("?time", ">", "2001-01-01")
    .set_answer("?cyclone")
)


def test_written_lines_read_back_to_the_same_query() -> None:
    text = write_actions(CYCLONES)
    assert text.endswith("set_answer(?cyclone)\n") and text.count("\n") == len(CYCLONES)
    assert read_actions(text, {}, FREEBASE) == CYCLONES
    assert write_actions(Query()) == ""


def test_reading_takes_what_pyql_run_takes() -> None:
    text = (
        "# the cyclones of Rachel's category\n"
        "get_relation(m.0crbvqz)\n"
        "\n"
        "Action 2: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)\r\n"
        "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category).\n"
        "  set_answer(?cyclone)  \n"
        "execute()\n"
        "# nothing after execute() but comments\n"
    )
    query = read_actions(text, {}, FREEBASE)
    assert query.actions() == [
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
        "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
        "set_answer(?cyclone)",
    ]


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("add_fact(?a, r.s.t, ?b)\nadd_fact(?a, r.s.t", ActionSyntaxError, "line 2: "),
        ("\n\nfrobnicate(?x)", InvalidActionError, "line 3: "),
        ("add_filter(?x, ~, 3)", ArgumentError, "line 1: "),
        ("add_fact(?a, r.s.t, ?b)\nadd_max(?nope)", QueryError, "line 2: add_max: ?nope is not a variable of the query"),
        ("add_fact(?a, r.s.t, ?b)\nexecute()\nset_answer(?b)", QueryError, "line 3: execute() was called on an earlier line"),
    ],
)
def test_the_first_bad_line_is_named(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        read_actions(text, {}, FREEBASE)
    assert str(caught.value).startswith(message)


def test_arguments_are_read_in_the_profile_without_a_kb() -> None:
    query = read_actions('add_fact(Q64, P1082, ?p)\nadd_filter(?p, >=, "1000"^^xsd:integer)', {}, WIKIDATA)
    assert query.profile is WIKIDATA
    assert "wd:Q64 wdt:P1082 ?p ." in query.sparql()
    assert convert("add_fact(Q64, P1082, ?p)", "actions", "sparql", profile="wikidata") == Query(WIKIDATA).add_fact("Q64", "P1082", "?p").sparql()


def test_calls_to_query_names_the_call() -> None:
    with pytest.raises(QueryError, match=r"^call 2 \(add_max\(\?y\)\): "):
        calls_to_query([parse_action("add_fact(?a, r.s.t, ?b)"), parse_action("add_max(?y)")])
