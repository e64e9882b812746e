"""Tests of the Virtuoso harness (tests/virtuoso.py) against a real server.

They also pin the Virtuoso behaviour documented in the harness docstring, so
a Virtuoso upgrade that changes it shows up here first.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from SPARQLWrapper import JSON, POST, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import EndPointInternalError, QueryBadFormed

from tests.processes import gone, wait_gone
from tests.virtuoso import (
    VirtuosoLoadError,
    VirtuosoQueryError,
    VirtuosoServer,
    find_virtuoso,
)

pytestmark = pytest.mark.virtuoso

XSD = "http://www.w3.org/2001/XMLSchema#"
NS = "http://rdf.freebase.com/ns/"
GRAPH = "http://pyql.test/harness"

SAMPLE_TTL = r'''
@prefix ns: <http://rdf.freebase.com/ns/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ns:m.0crbvqz ns:type.object.name "Tropical Storm Rachel"@en ;
    ns:meteorology.tropical_cyclone.category ns:m.0x1 ;
    ns:x.date "2014-07-31"^^xsd:date ;
    ns:x.year "2005"^^xsd:gYear ;
    ns:x.ym "2005-06"^^xsd:gYearMonth ;
    ns:x.dt "2014-07-31T08:00:00"^^xsd:dateTime ;
    ns:x.float "1.0"^^xsd:float ;
    ns:x.int "85"^^xsd:integer ;
    ns:x.dec "12.5"^^xsd:decimal ;
    ns:x.bool "true"^^xsd:boolean ;
    ns:x.str "say \"hi\" \\ back\nline2" ;
    ns:x.bnode [ ns:x.inner "inner" ] .
ns:m.0x1 ns:type.object.name "Category 1"@en, "Catégorie 1"@fr .
'''
SAMPLE_TRIPLES = 15

HARNESS_PATH = str(Path(__file__).resolve().parent / "virtuoso.py")
PREFIXES = "PREFIX ns: <http://rdf.freebase.com/ns/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"


@pytest.fixture(scope="module")
def loaded(virtuoso_server, tmp_path_factory):
    path = tmp_path_factory.mktemp("ttl") / "sample.ttl"
    path.write_text(SAMPLE_TTL, encoding="utf-8")
    count = virtuoso_server.load_turtle(path, GRAPH)
    return virtuoso_server, path, count


def _wrapper(server: VirtuosoServer, query: str, graph: str | None = GRAPH) -> SPARQLWrapper:
    sw = SPARQLWrapper(server.endpoint)
    sw.setMethod(POST)
    sw.setReturnFormat(JSON)
    sw.setTimeout(60)
    if graph:
        sw.addDefaultGraph(graph)
    sw.setQuery(query)
    return sw


def _select(server: VirtuosoServer, query: str, graph: str | None = GRAPH) -> list[dict]:
    return _wrapper(server, query, graph).queryAndConvert()["results"]["bindings"]


# --------------------------------------------------------------------------- #


def test_find_virtuoso_returns_executables(virtuoso_server):
    found = find_virtuoso()
    assert found is not None
    server_bin, isql_bin = found
    assert os.access(server_bin, os.X_OK) and os.access(isql_bin, os.X_OK)


def test_server_is_up_on_loopback(virtuoso_server):
    assert virtuoso_server.running
    assert virtuoso_server.endpoint == f"http://127.0.0.1:{virtuoso_server.http_port}/sparql"
    assert virtuoso_server.sparql("ASK {}")["boolean"] is True
    assert "Server online at 127.0.0.1:" in virtuoso_server.log_path.read_text()
    assert "HTTP/WebDAV server online at 127.0.0.1:" in virtuoso_server.log_path.read_text()


def test_load_turtle_counts_triples(loaded):
    server, path, count = loaded
    assert count == SAMPLE_TRIPLES
    assert server.triple_count(GRAPH) == SAMPLE_TRIPLES
    # same path + graph again: no reload, same count, fast
    t0 = time.monotonic()
    assert server.load_turtle(path, GRAPH) == SAMPLE_TRIPLES
    assert time.monotonic() - t0 < 2
    assert server.triple_count(GRAPH) == SAMPLE_TRIPLES


def test_load_into_second_graph_and_ntriples(virtuoso_server, tmp_path):
    nt = tmp_path / "two.nt"
    nt.write_text(
        '<http://ex.org/a> <http://ex.org/p> "x" .\n<http://ex.org/a> <http://ex.org/p> "y"@en .\n',
        encoding="utf-8",
    )
    assert virtuoso_server.load_turtle(nt, "http://pyql.test/nt") == 2


def test_select_over_post_with_json(loaded):
    server, _, _ = loaded
    rows = _select(
        server,
        PREFIXES + "SELECT ?p ?o WHERE { ns:m.0crbvqz ?p ?o } ORDER BY ?p",
    )
    by_p = {r["p"]["value"].removeprefix(NS): r["o"] for r in rows}
    assert by_p["type.object.name"] == {
        "type": "literal",
        "xml:lang": "en",
        "value": "Tropical Storm Rachel",
    }
    assert by_p["meteorology.tropical_cyclone.category"] == {"type": "uri", "value": NS + "m.0x1"}
    expect = {
        "x.date": ("date", "2014-07-31"),
        "x.year": ("gYear", "2005"),
        "x.ym": ("gYearMonth", "2005-06"),
        "x.dt": ("dateTime", "2014-07-31T08:00:00"),
        "x.float": ("float", "1.0"),
        "x.int": ("integer", "85"),
        "x.dec": ("decimal", "12.5"),
        "x.bool": ("boolean", "1"),  # Virtuoso prints xsd:boolean true as "1"
    }
    for local, (dt, value) in expect.items():
        assert by_p[local] == {"type": "typed-literal", "datatype": XSD + dt, "value": value}, local
    assert by_p["x.str"] == {"type": "literal", "value": 'say "hi" \\ back\nline2'}
    assert by_p["x.bnode"]["type"] == "bnode"
    assert by_p["x.bnode"]["value"].startswith("nodeID://")


def test_default_graph_via_from_clause_and_no_from_sees_system_graphs(loaded):
    server, _, _ = loaded
    q = f"SELECT (COUNT(*) AS ?n) FROM <{GRAPH}> WHERE {{ ?s ?p ?o }}"
    assert _select(server, q, graph=None)[0]["n"]["value"] == str(SAMPLE_TRIPLES)
    everything = _select(server, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", graph=None)
    assert int(everything[0]["n"]["value"]) > SAMPLE_TRIPLES + 1000  # virtrdf# etc.


def test_blank_node_id_can_be_queried_back(loaded):
    server, _, _ = loaded
    bnode = _select(server, PREFIXES + "SELECT ?b WHERE { ?s ns:x.bnode ?b }")[0]["b"]["value"]
    rows = _select(server, f"SELECT ?v WHERE {{ <{bnode}> ?p ?v }}")
    assert [r["v"]["value"] for r in rows] == ["inner"]


FEATURE_QUERIES = {
    "two_dots_in_prefixed_name": (
        "SELECT ?o WHERE { ns:m.0crbvqz ns:meteorology.tropical_cyclone.category ?o }",
        1,
    ),
    "str_substr_strlen_filter": (
        'SELECT ?x WHERE { ?s ns:x.year ?x FILTER(STR(?x) <= SUBSTR("2011-12-31", 1, STRLEN(STR(?x)))) }',
        1,
    ),
    "str_substr_strlen_filter_false": (
        'SELECT ?x WHERE { ?s ns:x.date ?x FILTER(STR(?x) <= SUBSTR("2011-12-31", 1, STRLEN(STR(?x)))) }',
        0,
    ),
    "not_exists": (
        "SELECT ?s WHERE { ?s ns:x.int ?n FILTER NOT EXISTS { ?s ns:x.missing ?z } }",
        1,
    ),
    "exists": ("SELECT ?s WHERE { ?s ns:type.object.name ?n FILTER EXISTS { ?s ns:x.int ?z } }", 1),
    "subselects_in_union": (
        """SELECT ?v ?c WHERE {
             { SELECT ?v (COUNT(?o) AS ?c) WHERE { ?v ?p ?o } GROUP BY ?v ORDER BY DESC(?c) LIMIT 1 }
             UNION
             { SELECT (SAMPLE(?o) AS ?v) (COUNT(*) AS ?c) WHERE { ?s ns:x.int ?o }
               GROUP BY ?s ORDER BY ?v LIMIT 5 }
           }""",
        2,
    ),
    "bind_in_union": (
        """SELECT ?x ?dir WHERE {
             { ns:m.0crbvqz ns:meteorology.tropical_cyclone.category ?x BIND("f" AS ?dir) }
             UNION
             { ?x ns:meteorology.tropical_cyclone.category ns:m.0x1 BIND("b" AS ?dir) } }""",
        2,
    ),
    "values": ("SELECT ?s ?o WHERE { VALUES ?s { ns:m.0crbvqz ns:m.none } ?s ns:x.int ?o }", 1),
    "count_distinct": (
        "SELECT ?n WHERE { { SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o } } FILTER(?n = 3) }",
        1,
    ),
    "langmatches": (
        'SELECT ?l WHERE { ?s ns:type.object.name ?l FILTER(LANGMATCHES(LANG(?l), "en")) }',
        2,
    ),
}


@pytest.mark.parametrize("name", sorted(FEATURE_QUERIES))
def test_sparql_features_accepted(loaded, name):
    server, _, _ = loaded
    query, n_rows = FEATURE_QUERIES[name]
    assert len(_select(server, PREFIXES + query)) == n_rows


def test_having_without_group_by_is_rejected(loaded):
    """Virtuoso deviates from SPARQL 1.1 here: HAVING needs an explicit GROUP BY."""
    server, _, _ = loaded
    with pytest.raises(QueryBadFormed, match="SP031"):
        _wrapper(server, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o } HAVING (COUNT(*) > 1)").query()


def test_ask(loaded):
    server, _, _ = loaded
    ask = _wrapper(server, PREFIXES + "ASK { ns:m.0crbvqz ns:x.int 85 }").queryAndConvert()
    assert ask["boolean"] is True
    ask = _wrapper(server, PREFIXES + "ASK { ns:m.0crbvqz ns:x.int 86 }").queryAndConvert()
    assert ask["boolean"] is False


def test_errors_come_back_as_http_errors(loaded):
    server, _, _ = loaded
    with pytest.raises(QueryBadFormed, match="SP030"):
        _wrapper(server, "SELECT ?x WHERE { ?x ?y }").query()
    with pytest.raises(EndPointInternalError, match="SR185"):
        _wrapper(server, "SELECT ?x WHERE { ?x ?p ?y FILTER(<http://ex.org/fn>(?y)) }").query()
    with pytest.raises(VirtuosoQueryError, match="HTTP 400"):
        server.sparql("SELECT ?x WHERE { ?x foo:bar ?y }")


def test_broken_turtle_raises_clear_error(virtuoso_server, tmp_path):
    bad = tmp_path / "broken.ttl"
    bad.write_text('@prefix ex: <http://ex.org/> .\nex:a ex:b "ok" .\nex:a ex:b "unterminated .\n')
    with pytest.raises(VirtuosoLoadError) as info:
        virtuoso_server.load_turtle(bad, "http://pyql.test/broken")
    msg = str(info.value)
    assert "broken.ttl" in msg and "http://pyql.test/broken" in msg
    assert "TURTLE RDF loader" in msg and "line" in msg
    # the server is still fine afterwards
    assert virtuoso_server.sparql("ASK {}")["boolean"] is True


def test_missing_file_raises(virtuoso_server, tmp_path):
    with pytest.raises(FileNotFoundError):
        virtuoso_server.load_turtle(tmp_path / "nope.ttl", "http://pyql.test/nope")


def test_stop_leaves_no_process_and_no_directory(tmp_path):
    with VirtuosoServer(workdir=tmp_path, timeout=60) as server:
        pid, directory = server.pid, server.directory
        assert directory.is_dir() and directory.parent == tmp_path.resolve()
        assert server.sparql("ASK {}")["boolean"] is True
    assert not server.running
    assert wait_gone(pid, 1)
    assert not directory.exists()
    server.stop()  # idempotent


def test_keep_keeps_directory(tmp_path):
    server = VirtuosoServer(workdir=tmp_path, keep=True).start()
    pid, directory = server.pid, server.directory
    server.stop()
    assert gone(pid)
    assert (directory / "virtuoso.db").exists()
    assert "Server shutdown complete" in (directory / "server.out").read_text()


def test_server_dies_with_killed_parent(tmp_path):
    """Even a SIGKILLed Python leaves no Virtuoso behind (PR_SET_PDEATHSIG)."""
    script = textwrap.dedent(
        f"""
        import importlib.util, sys, time
        spec = importlib.util.spec_from_file_location("harness", {HARNESS_PATH!r})
        harness = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(harness)  # loading by path, as benchmarks may
        s = harness.VirtuosoServer(workdir={str(tmp_path)!r}).start()
        print(s.pid, flush=True)
        time.sleep(600)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        line = child.stdout.readline()
        assert line.strip(), "child did not start a server"
        server_pid = int(line)
        assert not gone(server_pid)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        child.stdout.close()
    assert wait_gone(server_pid, 20)
