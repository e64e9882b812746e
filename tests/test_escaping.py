"""Values can never change the structure of a query (property tests).

Random strings go into literals, language tags, IRIs and variable names.
Either the term is rejected with a TermError saying why, or the compiled
query parses with rdflib and has exactly the triple patterns and filters
the steps asked for; and the same literal means the same value on rdflib
and on Oxigraph (it finds the triple holding that exact value).
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.parserutils import CompValue

from pyql import IRI, Literal, Query

from pyql.builder import escape
from pyql.errors import TermError
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.kb.rdflib_backend import RdflibKB

FB = "http://rdf.freebase.com/ns/"
SUBJECT = FB + "m.0subject"
RELATION = FB + "test.thing.value"

# Text with the characters that break naive serializers, mixed with any unicode.
NASTY = st.lists(
    st.one_of(
        st.sampled_from(list('"\'\\\n\r\t<>{}?$#.;,@^u0123456789abcdefABCDEF ') + ["\\u0022", "\\U00000022", '"""', "\\u", "\x85", "\u2028"]),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=30,
).map("".join)


def _count(algebra: object) -> tuple[int, int]:
    """(triple patterns, filter expressions) in an rdflib algebra tree."""
    triples = filters = 0
    stack = [algebra]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            if node.name == "BGP":
                triples += len(node.triples)
            if node.name == "Filter":
                filters += 1
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return triples, filters


def _engines(value: rdflib.Literal) -> list:
    graph = rdflib.Graph()
    graph.add((rdflib.URIRef(SUBJECT), rdflib.URIRef(RELATION), value))
    store = ox.Store()
    if value.language:
        lit = ox.Literal(str(value), language=value.language)
    else:
        lit = ox.Literal(str(value), datatype=ox.NamedNode(str(value.datatype or escape.XSD + "string")))
    store.add(ox.Quad(ox.NamedNode(SUBJECT), ox.NamedNode(RELATION), lit))
    return [RdflibKB(graph), OxigraphKB(store)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(NASTY)
def test_literal_text_keeps_structure_and_value(text: str) -> None:
    literal = Literal(text)
    q = Query().add_fact("?x", RELATION.join("<>"), literal).add_filter("?x", "!=", IRI(FB + "m.0other"))
    parsed = prepareQuery(q.sparql())
    assert _count(parsed.algebra) == (1, 1)
    for kb in _engines(rdflib.Literal(text)):
        found = [v.term for v in kb.execute(q).answers()]
        assert found == [IRI(SUBJECT)], f"{kb.name} did not find the value {text!r}"


@settings(max_examples=80, deadline=None)
@given(NASTY, st.sampled_from(["en", "fr", "en-GB", "haw"]))
def test_language_tagged_literal_round_trips(text: str, lang: str) -> None:
    q = Query().add_fact("?x", RELATION.join("<>"), Literal(text, lang=lang))
    assert _count(prepareQuery(q.sparql()).algebra) == (1, 0)
    for kb in _engines(rdflib.Literal(text, lang=lang)):
        assert [v.term for v in kb.execute(q).answers()] == [IRI(SUBJECT)]


@settings(max_examples=150, deadline=None)
@given(NASTY)
def test_iri_is_rejected_or_kept_whole(text: str) -> None:
    candidate = "http://example.org/" + text
    try:
        term = IRI(candidate)
    except TermError as exc:
        assert "IRI" in str(exc)
        return
    q = Query().add_fact(term, RELATION.join("<>"), "?y").add_filter("?y", "!=", 3)
    assert _count(prepareQuery(q.sparql()).algebra) == (1, 1)


@settings(max_examples=100, deadline=None)
@given(NASTY)
def test_variable_names_are_validated(text: str) -> None:
    try:
        q = Query().add_fact("?" + text, RELATION.join("<>"), "?y")
    except TermError as exc:
        assert "variable name" in str(exc)
        return
    except Exception as exc:  # a reserved name is a QueryError
        assert "reserved" in str(exc)
        return
    assert _count(prepareQuery(q.sparql()).algebra) == (1, 0)


@settings(max_examples=100, deadline=None)
@given(NASTY, NASTY)
def test_typed_literal_datatype_cannot_escape(lexical: str, datatype_tail: str) -> None:
    try:
        literal = Literal(lexical, "http://example.org/dt/" + datatype_tail)
    except TermError:
        return
    q = Query().add_fact("?x", RELATION.join("<>"), literal)
    assert _count(prepareQuery(q.sparql()).algebra) == (1, 0)


@pytest.mark.parametrize(
    "text,expected",
    [
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("line\nbreak", '"line\\nbreak"'),
        ("a\\u0022b", '"a\\\\\\U000000750022b"'),
        ("ctrl\x01", '"ctrl\\U00000001"'),
        ("é ü 中", '"é ü 中"'),
    ],
)
def test_literal_escapes(text: str, expected: str) -> None:
    assert escape.literal(text) == expected


@pytest.mark.parametrize(
    "bad,message",
    [
        ("http://x.org/a b", "space"),
        ("http://x.org/a>b", "'>'"),
        ('http://x.org/"', "double quote"),
        ("relative/path", "no scheme"),
        ("", "empty"),
        ("http://x.org/\ud800", "surrogate"),
    ],
)
def test_bad_iris_are_rejected_with_a_reason(bad: str, message: str) -> None:
    with pytest.raises(TermError, match=message):
        IRI(bad)


def test_bad_language_tag_is_rejected() -> None:
    with pytest.raises(TermError, match="language tag"):
        Literal("x", lang="en US")
