"""Any SPARQL 1.1 endpoint (Virtuoso, QLever, Fuseki, ...) through SPARQLWrapper.

Queries are sent with POST and JSON results are asked for; typed results
(``literal``, Virtuoso's ``typed-literal``, ``uri``, ``bnode``) become the
same terms as the embedded backends give. Virtuoso's quirks are handled
here: blank nodes written as ``nodeID://...`` come back as blank nodes,
booleans written ``1``/``0`` as ``true``/``false``, an "anytime" partial
answer (header ``X-SQL-State``) raises :class:`~pyql.errors.EngineTimeout`
and a result cut at the server's row limit (``X-SPARQL-MaxRows``) raises
:class:`~pyql.errors.EngineError` instead of passing as complete. No
``timeout=`` request parameter is sent (Virtuoso may then answer partially
with no marker); the timeout is the client's socket timeout.

Example:
    >>> from pyql.kb.endpoint_backend import binding_to_term
    >>> binding_to_term({"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "85"})
    Literal(lexical='85', datatype='http://www.w3.org/2001/XMLSchema#integer', lang=None)
"""

from __future__ import annotations

import socket
import urllib.error
from typing import Any, Mapping

from SPARQLWrapper import JSON, POST, SPARQLWrapper
from SPARQLWrapper import SPARQLExceptions

from pyql.errors import EngineError, EngineTimeout, KBError
from pyql.kb.base import KB
from pyql.profiles import Profile
from pyql.terms import IRI, BlankNode, Literal, Term, canonical_literal

__all__ = ["EndpointKB", "binding_to_term"]


def binding_to_term(binding: Mapping[str, Any]) -> Term:
    """One cell of SPARQL JSON results as a term.

    Example:
        >>> binding_to_term({"type": "literal", "xml:lang": "en", "value": "Rachel"})
        Literal(lexical='Rachel', datatype=None, lang='en')
        >>> binding_to_term({"type": "uri", "value": "nodeID://b10006"})
        BlankNode(id='b10006')
    """
    kind = binding.get("type")
    value = binding.get("value", "")
    if kind == "uri":
        if value.startswith("nodeID://"):
            return BlankNode(value[len("nodeID://") :])
        return IRI(value)
    if kind == "bnode":
        return BlankNode(value[len("nodeID://") :] if value.startswith("nodeID://") else value)
    if kind in ("literal", "typed-literal"):
        lang = binding.get("xml:lang") or binding.get("lang")
        if lang:
            return Literal(value, lang=lang)
        return canonical_literal(value, binding.get("datatype"))
    raise EngineError(f"unexpected binding type {kind!r} in the endpoint's JSON results: {dict(binding)}")


class EndpointKB(KB):
    """A KB behind a SPARQL 1.1 HTTP endpoint.

    Args:
        url: the endpoint, e.g. ``http://127.0.0.1:8890/sparql``.
        profile: KB profile name or object.
        timeout: seconds before a query counts as timed out (default 60).
        default_graph: a graph IRI to query (``default-graph-uri``); Virtuoso
            otherwise unions all its graphs, system graphs included.
        **options: see :class:`~pyql.kb.base.KB`.
    """

    name = "endpoint"

    def __init__(
        self,
        url: str,
        profile: str | Profile = "freebase",
        timeout: float = 60.0,
        default_graph: str | None = None,
        **options,  # type: ignore[no-untyped-def]
    ) -> None:
        super().__init__(profile, **options)
        if not url.startswith(("http://", "https://")):
            raise KBError(f"an endpoint URL starts with http:// or https://, got {url!r}")
        self.url = url
        self.timeout = timeout
        self.default_graph = default_graph

    def _client(self, sparql: str) -> SPARQLWrapper:
        client = SPARQLWrapper(self.url)
        client.setMethod(POST)
        client.setReturnFormat(JSON)
        client.setTimeout(int(self.timeout) if self.timeout >= 1 else 1)
        if self.default_graph:
            client.addDefaultGraph(self.default_graph)
        client.setQuery(sparql)
        return client

    def _run(self, sparql: str) -> dict[str, Any]:
        try:
            response = self._client(sparql).query()
            headers = {k.lower(): v for k, v in dict(response.info()).items()}
            result = response.convert()
        except SPARQLExceptions.QueryBadFormed as exc:
            raise EngineError(f"the endpoint rejected the query as malformed: {_short(exc)}", query=sparql) from exc
        except SPARQLExceptions.EndPointNotFound as exc:
            raise KBError(f"no SPARQL endpoint at {self.url}: {_short(exc)}") from exc
        except SPARQLExceptions.SPARQLWrapperException as exc:
            raise EngineError(f"the endpoint failed: {_short(exc)}", query=sparql) from exc
        except (socket.timeout, TimeoutError) as exc:
            raise EngineTimeout(f"the endpoint did not answer within {self.timeout} s", query=sparql) from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise EngineTimeout(f"the endpoint did not answer within {self.timeout} s", query=sparql) from exc
            raise KBError(f"cannot reach the endpoint {self.url}: {exc.reason}") from exc
        if "x-sql-state" in headers:
            # Virtuoso's "anytime" answer: HTTP 200 with partial rows.
            raise EngineTimeout(
                f"the endpoint returned incomplete results ({headers.get('x-sql-message', headers['x-sql-state'])})",
                query=sparql,
            )
        if "x-sparql-maxrows" in headers:
            raise EngineError(
                f"the endpoint cut the result at its row limit ({headers['x-sparql-maxrows']} rows); "
                "ask for fewer rows (a smaller limit) or raise ResultSetMaxRows on the server",
                query=sparql,
            )
        if not isinstance(result, dict):
            raise EngineError(f"the endpoint did not return SPARQL JSON results (got {type(result).__name__})", query=sparql)
        return result

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        result = self._run(sparql)
        rows = []
        for binding in result.get("results", {}).get("bindings", []):
            rows.append({name: binding_to_term(cell) for name, cell in binding.items()})
        return rows

    def _ask(self, sparql: str) -> bool:
        result = self._run(sparql)
        if "boolean" not in result:
            raise EngineError("the endpoint answered an ASK query without a boolean", query=sparql)
        return bool(result["boolean"])


def _short(exc: Exception) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text[:500] + ("..." if len(text) > 500 else "")
