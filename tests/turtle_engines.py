"""One Turtle text on each engine pyql runs on, for tests that ask the same query everywhere.

pyoxigraph in memory, rdflib from a file, and a graph of a real Virtuoso
(the ``virtuoso_server`` fixture of ``tests/conftest.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph as ox

from pyql.kb import KB
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.builder.query import Query


def oxigraph_kb(ttl: str, **options: Any) -> OxigraphKB:
    """``ttl`` in an in-memory pyoxigraph store (``options``: the KB's, such as ``profile``)."""
    store = ox.Store()
    store.load(ttl.encode(), ox.RdfFormat.TURTLE)
    return OxigraphKB(store, **options)


def rdflib_kb(ttl: str, folder: Path) -> KB:
    """``ttl`` written in ``folder`` and opened with rdflib."""
    path = folder / "kb.ttl"
    path.write_text(ttl)
    return KB.open(f"rdflib:{path}")


def virtuoso_kb(server: Any, ttl: str, folder: Path, graph: str, **options: Any) -> Any:
    """``ttl`` loaded into ``graph`` of the test Virtuoso, asked through its SPARQL endpoint."""
    from pyql.kb.endpoint_backend import EndpointKB

    path = folder / "virtuoso.ttl"
    path.write_text(ttl)
    server.load_turtle(path, graph)
    return EndpointKB(server.endpoint, default_graph=graph, timeout=30, **options)


def answer_values(kb: Any, query: Query, ns: str = "") -> list[str]:
    """The query's answers on ``kb``, their values sorted, ``ns`` taken off the front."""
    return sorted(str(v.to_dict()["value"]).removeprefix(ns) for v in kb.execute(query).answers())
