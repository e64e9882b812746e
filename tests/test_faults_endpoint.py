"""SPARQL endpoint faults (issue 13, part C), against loopback fake endpoints.

Each fault must end as the right error class (unavailable, timed out, or the
query rejected), name the URL, and stay within its time bound; none may pass
as a result (an empty or a cut answer taken as complete).
"""

from __future__ import annotations

import gzip
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from pyql import Query
from pyql.errors import EngineError, EngineTimeout, EngineUnavailable, KBError
from pyql.kb import KB
from pyql.kb.endpoint_backend import EndpointKB, declared_limit
from tests.fault_servers import FakeSparqlEndpoint, Reply, refused_port, sparql_json

SELECT = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 10"
FB = "http://rdf.freebase.com/ns/"
JSON = "application/sparql-results+json"


def _ok(rows: int = 1) -> Reply:
    bindings = [{"s": {"type": "uri", "value": f"{FB}m.0{i}"}} for i in range(rows)]
    return Reply(200, sparql_json(["s"], bindings), content_type=JSON)


def _open(endpoint: FakeSparqlEndpoint | str, **options: Any) -> EndpointKB:
    url = endpoint if isinstance(endpoint, str) else endpoint.url
    kb = KB.open(url, **{"timeout": 5, **options})
    assert isinstance(kb, EndpointKB)
    return kb


# -- a well-behaved endpoint ----------------------------------------------------------

def test_rows_ask_and_default_graph_reach_the_endpoint() -> None:
    with FakeSparqlEndpoint([_ok(2), Reply(200, {"head": {}, "boolean": True}, content_type=JSON)]) as ep:
        kb = _open(ep, default_graph="http://pyql.test/demo")
        rows = kb.select(SELECT)
        assert [r["s"].value for r in rows] == [f"{FB}m.00", f"{FB}m.01"]
        assert kb.ask("ASK { ?s ?p ?o }") is True
        form = ep.form(0)
        assert form["query"] == [SELECT] and form["default-graph-uri"] == ["http://pyql.test/demo"]
        assert ep.requests[0]["method"] == "POST" and "sparql-results+json" in ep.requests[0]["headers"]["Accept"]


def test_redirect_is_followed() -> None:
    with FakeSparqlEndpoint() as target:
        target.plan = [_ok(1)]
        with FakeSparqlEndpoint([Reply(307, b"", headers={"Location": target.url})]) as ep:
            assert len(_open(ep).select(SELECT)) == 1
        assert target.queries() == [SELECT]


# -- unreachable and failing endpoints -------------------------------------------------------

def test_refused_port_is_unavailable_and_names_the_url() -> None:
    url = f"http://127.0.0.1:{refused_port()}/sparql"
    kb = _open(url, timeout=2)
    started = time.monotonic()
    with pytest.raises(EngineUnavailable) as info:
        kb.select(SELECT)
    assert time.monotonic() - started < 2
    error = info.value
    assert error.kind == "engine_unavailable" and url in str(error) and "refused" in str(error)
    assert "rejected the query" not in str(error)
    assert kb.stats.errors == 1


def test_unknown_host_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    # No DNS query leaves the machine: the resolver is replaced by one that fails.
    def fail(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    kb = _open("http://pyql-fault-test.invalid/sparql", timeout=3)
    with pytest.raises(EngineUnavailable, match="pyql-fault-test.invalid.*cannot resolve"):
        kb.select(SELECT)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, b"<html><body>Internal Server Error</body></html>", content_type="text/html"),
        Reply(502, b"Bad Gateway", content_type="text/plain"),
        Reply(503, b"", content_type="text/plain"),
        Reply(404, b"Not Found", content_type="text/plain"),
        Reply(200, b"<html>this is not SPARQL JSON</html>", content_type="text/html"),
        Reply(200, b"\xff\xfe\x00garbage", content_type=JSON),
        Reply(200, b'{"unexpected": 1}', content_type=JSON),
        Reply(200, b'{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://x.org/y"}}', content_type=JSON),
    ],
    ids=["500-html", "502", "503", "404", "html-200", "not-utf8", "not-results", "truncated-json"],
)
def test_failing_endpoint_is_unavailable_never_a_result(reply: Reply) -> None:
    with FakeSparqlEndpoint([reply]) as ep:
        kb = _open(ep)
        with pytest.raises(EngineUnavailable) as info:
            kb.select(SELECT)
        with pytest.raises(EngineUnavailable):
            kb.relations("m.0crbvqz")
    assert ep.url in str(info.value)
    str(info.value).encode("utf-8")


def test_killed_mid_answer_is_unavailable() -> None:
    body = sparql_json(["s"], [{"s": {"type": "uri", "value": f"{FB}m.0{i}"}} for i in range(50)])
    with FakeSparqlEndpoint([Reply(200, body, content_type=JSON, kill=True)]) as ep:
        with pytest.raises(EngineUnavailable, match="middle of its answer|closed the connection"):
            _open(ep).select("SELECT ?s WHERE { ?s ?p ?o } LIMIT 100")


def test_killed_after_the_rows_asked_for_is_not_read() -> None:
    """The answer is read up to the query's LIMIT + 1 rows: a cut after them is never seen (nor needed)."""
    body = sparql_json(["s"], [{"s": {"type": "uri", "value": f"{FB}m.0{i}"}} for i in range(50)])
    with FakeSparqlEndpoint([Reply(200, body, content_type=JSON, kill=True)]) as ep:
        kb = _open(ep)
        assert len(kb.select(SELECT)) == 10 and kb.limit_violations == 1


def test_server_killed_between_queries_is_unavailable() -> None:
    ep = FakeSparqlEndpoint([_ok(1)]).start()
    kb = _open(ep)
    assert len(kb.select(SELECT)) == 1
    ep.stop()
    with pytest.raises(EngineUnavailable, match="refused"):
        kb.select(SELECT)


# -- rejected queries stay EngineError ----------------------------------------------------------

@pytest.mark.parametrize(
    "reply",
    [
        Reply(400, b"Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error at '}'", content_type="text/plain"),
        Reply(500, b"Virtuoso 42001 Error SR185: Undefined procedure DB.DBA.foo.", content_type="text/plain"),
        Reply(500, b"org.openrdf.query.MalformedQueryException: Encountered \" \"}\"", content_type="text/plain"),
    ],
    ids=["virtuoso-400", "virtuoso-500-query", "blazegraph-500-malformed"],
)
def test_rejected_query_is_an_engine_error_not_unavailable(reply: Reply) -> None:
    with FakeSparqlEndpoint([reply]) as ep:
        with pytest.raises(EngineError) as info:
            _open(ep).select(SELECT)
    assert not isinstance(info.value, EngineUnavailable) and not isinstance(info.value, EngineTimeout)
    assert info.value.kind == "engine_error" and ep.url in str(info.value)


def test_engine_time_limit_message_is_a_timeout() -> None:
    reply = Reply(500, b"Virtuoso S1T00 Error SR171: Transaction timed out", content_type="text/plain")
    with FakeSparqlEndpoint([reply]) as ep:
        with pytest.raises(EngineTimeout):
            _open(ep).select(SELECT)


# -- the time-out bounds the whole query ------------------------------------------------------

def test_trickling_endpoint_is_cut_at_the_timeout() -> None:
    """The issue's case: one byte every 0.5 s, timeout=2, answered after 107.6 s."""
    body = sparql_json(["s"], [{"s": {"type": "uri", "value": f"{FB}m.0{i}"}} for i in range(20)])
    with FakeSparqlEndpoint([Reply(200, body, content_type=JSON, trickle=0.5)]) as ep:
        kb = _open(ep, timeout=1)
        started = time.monotonic()
        with pytest.raises(EngineTimeout) as info:
            kb.select(SELECT)
        elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3, elapsed
    assert "within 1 s" in str(info.value) and ep.url in str(info.value)


def test_sub_second_timeout_is_honoured_and_reported() -> None:
    with FakeSparqlEndpoint([Reply(200, sparql_json(["s"], []), content_type=JSON, delay=3)]) as ep:
        kb = _open(ep, timeout=0.3)
        started = time.monotonic()
        with pytest.raises(EngineTimeout, match=r"within 0\.3 s"):
            kb.select(SELECT)
        assert time.monotonic() - started < 1.0


def test_slow_but_timely_endpoint_answers() -> None:
    with FakeSparqlEndpoint([Reply(200, sparql_json(["s"], []), content_type=JSON, delay=0.2)]) as ep:
        assert _open(ep, timeout=2).select(SELECT) == []


@pytest.mark.parametrize("timeout", [0, -1, "soon", float("nan")])
def test_bad_timeouts_are_refused(timeout: object) -> None:
    with pytest.raises(KBError, match="timeout"):
        KB.open("http://127.0.0.1:9/sparql", timeout=timeout)


# -- the LIMIT a query asks for holds ----------------------------------------------------------

def test_relations_are_bounded_by_the_limit_asked_for() -> None:
    """The issue's case: 40,330 relations to a query asking for at most 2,000."""
    rows = [{"__dir": {"type": "literal", "value": "forward"}, "__r": {"type": "uri", "value": f"{FB}a.b.r{i}"}} for i in range(40_330)]
    with FakeSparqlEndpoint([Reply(200, sparql_json(["__dir", "__r"], rows), content_type=JSON)]) as ep:
        kb = _open(ep)
        relations = kb.relations("m.0crbvqz")
        assert declared_limit(ep.queries()[0]) == 2000
    assert len(relations.forward) + len(relations.backward) == 2000 and relations.truncated
    assert kb.limit_violations == 1


def test_observation_is_bounded_even_if_sub_limits_are_ignored() -> None:
    rows = [{"x": {"type": "uri", "value": f"{FB}m.0{i}"}} for i in range(500)] + [
        {  # the counts' row: each variable's count and the rows they were read from
            "__count_x": {"type": "literal", "value": "500", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
            "__rows": {"type": "literal", "value": "500", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
        }
    ]
    with FakeSparqlEndpoint([Reply(200, sparql_json(["x", "__count_x", "__rows"], rows), content_type=JSON)]) as ep:
        kb = _open(ep, per_variable=10)
        observation = kb.observe(Query().add_fact("?x", "a.b.c", "m.0crbvqz"))
    [values] = observation.variables
    assert len(values.values) == 10 and values.total == 500


def test_rows_within_the_limit_are_untouched() -> None:
    with FakeSparqlEndpoint([_ok(10)]) as ep:
        kb = _open(ep)
        assert len(kb.select(SELECT)) == 10 and kb.limit_violations == 0


# -- KB files (the minor faults of the issue) -------------------------------------------------

TRIPLE = "<http://rdf.freebase.com/ns/m.0a> <http://rdf.freebase.com/ns/a.b.c> <http://rdf.freebase.com/ns/m.0b> .\n"


@pytest.mark.parametrize("prefix", ["", "oxigraph:", "rdflib:"])
def test_empty_kb_file_is_refused(tmp_path: Path, prefix: str) -> None:
    empty = tmp_path / "kb.ttl"
    empty.write_text("")
    with pytest.raises(KBError, match="is empty"):
        KB.open(prefix + str(empty))
    only_prefixes = tmp_path / "prefixes.ttl"
    only_prefixes.write_text("@prefix ns: <http://rdf.freebase.com/ns/> .\n# no triples\n")
    with pytest.raises(KBError, match="no triples"):
        KB.open(prefix + str(only_prefixes))


@pytest.mark.parametrize("prefix", ["", "oxigraph:", "rdflib:"])
@pytest.mark.parametrize("name", ["kb.nt.gz", "kb.ttl.gz"])
def test_gzipped_kb_files_are_read(tmp_path: Path, prefix: str, name: str) -> None:
    path = tmp_path / name
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(TRIPLE)
    kb = KB.open(prefix + str(path))
    assert kb.relations("m.0a").forward == ("a.b.c",)


@pytest.mark.parametrize("prefix", ["", "oxigraph:", "rdflib:"])
def test_broken_gzip_is_named(tmp_path: Path, prefix: str) -> None:
    path = tmp_path / "kb.nt.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(KBError, match="as gzip"):
        KB.open(prefix + str(path))


@pytest.mark.parametrize("prefix", ["", "oxigraph:", "rdflib:"])
def test_turtle_syntax_error_is_one_line(tmp_path: Path, prefix: str) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text('@prefix ns: <http://rdf.freebase.com/ns/> .\nns:a ns:b ns:c .\nns:a ns:b "unterminated .\nns:x ns:y ns:z .\n')
    with pytest.raises(KBError) as info:
        KB.open(prefix + str(path))
    message = str(info.value)
    assert "\n" not in message and str(path) in message and len(message) < 400


def test_environment_proxy_is_used_but_never_for_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    # The proxy is a loopback fake: the endpoint's host name is never resolved or contacted.
    with FakeSparqlEndpoint([_ok(1)]) as proxy, FakeSparqlEndpoint([_ok(2)]) as direct:
        for name in ("no_proxy", "NO_PROXY", "HTTP_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        assert len(_open("http://sparql.pyql-test.invalid/sparql").select(SELECT)) == 1
        assert proxy.requests[0]["path"] == "http://sparql.pyql-test.invalid/sparql"
        assert len(_open(direct).select(SELECT)) == 2 and len(proxy.requests) == 1
