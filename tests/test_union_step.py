"""``add_union`` (pyql/builder/steps.py ``Disjunction``): a variable takes its values from any of its branches.

The same answers on pyoxigraph, rdflib and Virtuoso; a branch's own
variables stay inside it; the action language reads and writes it; bad
branches get an error that says what is wrong.
"""

from __future__ import annotations

import pytest

from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS
from pyql.errors import PyQLError, QueryError
from pyql.interchange import convert
from pyql.kb import KB
from pyql.builder.query import Query
from pyql.environment.sparql import SparqlEnvironment
from tests.turtle_engines import answer_values, oxigraph_kb, rdflib_kb, virtuoso_kb

NS = "http://rdf.freebase.com/ns/"
# Two championship events: the team won e1 and was runner-up in e2; e3 is another team's.
TTL = f"""
@prefix ns: <{NS}> .
ns:m.e1 ns:sports.event.champion ns:m.team ; ns:time.event.start_date "2001"^^<http://www.w3.org/2001/XMLSchema#gYear> ; ns:sports.event.series ns:m.cup .
ns:m.e2 ns:sports.event.runner_up ns:m.team ; ns:time.event.start_date "2005"^^<http://www.w3.org/2001/XMLSchema#gYear> ; ns:sports.event.series ns:m.cup .
ns:m.e3 ns:sports.event.champion ns:m.other ; ns:time.event.start_date "2009"^^<http://www.w3.org/2001/XMLSchema#gYear> ; ns:sports.event.series ns:m.cup .
ns:m.e2 ns:a.note ns:m.n2 .
ns:m.e3 ns:a.note ns:m.n3 .
"""


def champion() -> Query:
    return Query().add_fact("?e", "sports.event.champion", "m.team")


def runner_up() -> Query:
    return Query().add_fact("?e", "sports.event.runner_up", "m.team")


QUERIES = {
    "either side": lambda: Query().add_union("?e", champion(), runner_up()).set_answer("?e"),
    "joined with facts after": lambda: Query()
    .add_union("?e", champion(), runner_up())
    .add_fact("?e", "time.event.start_date", "?d")
    .add_max("?d")
    .set_answer("?e"),
    "after an argmax (nested)": lambda: Query()
    .add_fact("?e", "sports.event.series", "m.cup")
    .add_fact("?e", "time.event.start_date", "?d")
    .add_min("?d", limit=2)
    .add_union("?e", champion(), runner_up())
    .set_answer("?e"),
    "counted": lambda: Query().add_union("?e", champion(), runner_up()).add_count("?e", "?n"),
}
EXPECTED = {
    "either side": ["m.e1", "m.e2"],
    "joined with facts after": ["m.e2"],
    "after an argmax (nested)": ["m.e1", "m.e2"],
    "counted": ["2"],
}


def _answers(kb: KB, query: Query) -> list[str]:
    return answer_values(kb, query, NS)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_union_answers_alike_on_pyoxigraph_and_rdflib(name: str, tmp_path) -> None:
    query = QUERIES[name]()
    assert _answers(oxigraph_kb(TTL), query) == EXPECTED[name]
    assert _answers(rdflib_kb(TTL, tmp_path), query) == EXPECTED[name]


def test_a_branch_keeps_its_own_variables() -> None:
    """``?n`` of a branch is not the outer ``?n``: the outer note (m.n3 of e3) does not filter the branch."""
    noted = Query().add_fact("?e", "a.note", "?n")
    query = Query().add_fact("m.e3", "a.note", "?n").add_union("?e", noted, champion()).set_answer("?e")
    assert _answers(oxigraph_kb(TTL), query) == ["m.e1", "m.e2", "m.e3"]
    assert [str(v) for v in query.variables] == ["?n", "?e"]


def test_the_builder_returns_a_new_query() -> None:
    base = Query().add_fact("?e", "sports.event.series", "m.cup")
    union = base.add_union("?e", champion(), runner_up())
    assert len(base.steps) == 1 and len(union.steps) == 2 and union.undo() == base


@pytest.mark.parametrize(
    "make,words",
    [
        (lambda: Query().add_union("?e", champion()), ["two or more branches", "got 1"]),
        (lambda: Query().add_union("?e", champion(), Query().add_fact("?x", "a.b.c", "?y")), ["branch 2", "does not bind ?e", "?x, ?y"]),
        (lambda: Query().add_union("?e", champion(), "add_fact(?e, a.b.c, ?y)"), ["queries built with pyql.Query"]),
        (lambda: Query().add_union("m.0a", champion(), runner_up()), ["must be a variable"]),
        (lambda: Query().add_union("?e", champion(), Query("wikidata").add_fact("?e", "P31", "Q5")), ["wikidata branch"]),
        (
            lambda: Query().add_union("?e", champion(), runner_up().add_fact("?e", "a.b.c", "?v").add_compare("?v", ">", 3)),
            ["branch 2", "yes/no"],
        ),
    ],
)
def test_a_bad_branch_is_named(make, words: list[str]) -> None:
    with pytest.raises(QueryError) as caught:
        make()
    for word in words:
        assert word in str(caught.value), str(caught.value)


def test_the_action_language_reads_and_writes_add_union() -> None:
    query = QUERIES["joined with facts after"]()
    lines = "\n".join(query.actions())
    assert "add_union(?e, query(add_fact(?e, sports.event.champion, m.team)), query(" in lines
    assert convert(lines, "actions", "sparql") == query.sparql()


def test_an_environment_steps_add_union_and_observes_it() -> None:
    env = SparqlEnvironment(oxigraph_kb(TTL), actions=SPARQL_ALL_ACTIONS)
    record = env.step(
        "add_union(?e, query(add_fact(?e, sports.event.champion, m.team)), query(add_fact(?e, sports.event.runner_up, m.team)))"
    )
    assert record.ok, record.observation
    assert "m.e1" in record.observation and "m.e2" in record.observation and "m.e3" not in record.observation
    bad = env.step("add_union(?e, query(add_fact(?e, sports.event.champion, m.team)), query(add_fact(?x, a.note, ?n)))")
    assert not bad.ok and "does not bind ?e" in bad.observation
    one = env.step("add_union(?e, query(add_fact(?e, sports.event.champion, m.team)))")
    assert not one.ok and "add_union" in one.observation


def test_the_docs_of_the_action_are_generated() -> None:
    from pyql.environment.actions import render_docs
    from pyql.environment.sparql_actions import SparqlActions

    docs = render_docs(SparqlActions(SPARQL_ALL_ACTIONS))
    assert "add_union(var, branch, branch_2" in docs and "UNION" in docs
    assert "add_union" not in SparqlActions().names  # QueryAgent's default set (its prompt) is unchanged


@pytest.mark.virtuoso
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_union_answers_alike_on_virtuoso(name: str, virtuoso_server, tmp_path) -> None:
    remote = virtuoso_kb(virtuoso_server, TTL, tmp_path, "http://pyql.test/union")
    assert _answers(remote, QUERIES[name]()) == EXPECTED[name]


def test_errors_are_pyql_errors() -> None:
    assert issubclass(QueryError, PyQLError)
