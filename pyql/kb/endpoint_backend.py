"""Any SPARQL 1.1 endpoint (Virtuoso, QLever, Fuseki, ...) over HTTP.

Queries are sent with POST (form-encoded, as the SPARQL protocol says) and
JSON results are asked for; typed results (``literal``, Virtuoso's
``typed-literal``, ``uri``, ``bnode``) become the same terms as the embedded
backends give. The request is made here with :mod:`http.client` in a worker
thread, so ``timeout`` bounds the *whole* query (connecting, waiting and
reading), also sub-second values, and a server that trickles its answer
byte by byte cannot hold a query past it.

Faults are told apart (see ``docs/reliability.md``):

* :class:`~pyql.errors.EngineUnavailable` (kind ``engine_unavailable``): the
  endpoint cannot be reached (connection refused or reset, unknown host),
  there is none at the URL (HTTP 404), it is failing whatever the query
  (HTTP 502/503/504, a 5xx without an engine message, 401/403/429), it
  closed the connection in the middle of its answer, or its answer is not
  SPARQL JSON results (garbage, not UTF-8). Changing the query does not help.
* :class:`~pyql.errors.EngineTimeout`: no complete answer within ``timeout``
  seconds, Virtuoso's "anytime" partial answer (header ``X-SQL-State``), or
  an engine message saying the query timed out or would take too long.
* :class:`~pyql.errors.EngineError`: the engine rejected *this* query
  (HTTP 400 and other 4xx; a 500 whose body is an engine error about the
  query, as Virtuoso and Blazegraph send), or cut the result at its row limit
  (``X-SPARQL-MaxRows``) instead of passing it as complete.

Every message names the endpoint's URL. The row count the query asked for
(its final ``LIMIT``) is enforced on the answer: an endpoint that ignores
LIMIT cannot make an observation or a relation list unbounded. No
``timeout=`` request parameter is sent (Virtuoso may then answer partially
with no marker).

Example:
    >>> from pyql.kb.endpoint_backend import binding_to_term
    >>> binding_to_term({"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "85"})
    Literal(lexical='85', datatype='http://www.w3.org/2001/XMLSchema#integer', lang=None)
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Mapping

from pyql.errors import EngineError, EngineTimeout, EngineUnavailable, KBError
from pyql.kb.base import KB
from pyql.profiles import Profile
from pyql.terms import IRI, BlankNode, Literal, Term, canonical_literal

__all__ = ["EndpointKB", "binding_to_term", "declared_limit"]

#: Answers larger than this many bytes are refused (an endpoint that ignores LIMIT).
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 3
_ACCEPT = "application/sparql-results+json, application/json;q=0.9"
_HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": _ACCEPT, "User-Agent": "pyql"}
# A 5xx body that is an engine's complaint about the query, not a failing service.
_TIMEOUT_MESSAGE_RE = re.compile(r"SR171|S1T00|S1TAT|timed? ?out|exceeds the limit|estimated execution time", re.I)
_QUERY_MESSAGE_RE = re.compile(
    r"Virtuoso \w{5} Error|SPARQL compiler|syntax error|MalformedQuery|QueryParseException|ParseException|"
    r"Encountered \"|undefined (?:prefix|procedure|function)|Lexical error",
    re.I,
)


def declared_limit(sparql: str) -> int | None:
    """The row count a SELECT asks for at most: its final ``LIMIT`` (after the last ``}``).

    Limits inside sub-queries do not bound the result and are not returned.

    Example:
        >>> declared_limit("SELECT ?s WHERE { { SELECT ?s WHERE { ?s ?p ?o } LIMIT 5 } }")
        >>> declared_limit("SELECT ?s WHERE { ?s ?p ?o }\\nLIMIT 2000\\n")
        2000
        >>> declared_limit("SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s OFFSET 10 LIMIT 3")
        3
    """
    tail = sparql[sparql.rfind("}") + 1 :]
    match = re.search(r"(?i)\bLIMIT\s+(\d+)", tail)
    return int(match.group(1)) if match else None


def binding_to_term(binding: Mapping[str, Any]) -> Term:
    """One cell of SPARQL JSON results as a term.

    Example:
        >>> binding_to_term({"type": "literal", "xml:lang": "en", "value": "Rachel"})
        Literal(lexical='Rachel', datatype=None, lang='en')
        >>> binding_to_term({"type": "uri", "value": "nodeID://b10006"})
        BlankNode(id='b10006')
    """
    if not isinstance(binding, Mapping) or not isinstance(binding.get("value", ""), str):
        raise EngineError(f"a malformed cell in the endpoint's JSON results: {binding!r:.200}")
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


@dataclass
class _Exchange:
    """One HTTP exchange between the caller and its worker thread."""

    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    conn: http.client.HTTPConnection | None = None
    status: int = 0
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    url: str = ""
    error: BaseException | None = None

    def abort(self) -> None:
        """Stop the worker: it sees ``cancel`` at its next read; a blocked read is woken up."""
        self.cancel.set()
        conn = self.conn
        sock = getattr(conn, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class EndpointKB(KB):
    """A KB behind a SPARQL 1.1 HTTP endpoint.

    Args:
        url: the endpoint, e.g. ``http://127.0.0.1:8890/sparql``.
        profile: KB profile name or object.
        timeout: seconds one query may take in all (connecting, waiting,
            reading the answer); default 60; fractions of a second are kept.
        default_graph: a graph IRI to query (``default-graph-uri``); Virtuoso
            otherwise unions all its graphs, system graphs included.
        max_bytes: the largest answer accepted (default 256 MiB).
        **options: see :class:`~pyql.kb.base.KB`.

    Attributes:
        limit_violations: answers that had more rows than their ``LIMIT``
            (cut to it).

    Raises:
        KBError: a URL that is not http(s), or a timeout that is not positive.

    Example:
        >>> kb = EndpointKB("http://127.0.0.1:9/sparql", timeout=0.25)
        >>> kb.timeout
        0.25
        >>> EndpointKB("http://127.0.0.1:9/sparql", timeout=0)
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: the endpoint timeout is in seconds and must be positive, not 0
    """

    name = "endpoint"

    def __init__(
        self,
        url: str,
        profile: str | Profile = "freebase",
        timeout: float = 60.0,
        default_graph: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        **options,  # type: ignore[no-untyped-def]
    ) -> None:
        super().__init__(profile, **options)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise KBError(f"an endpoint URL starts with http:// or https://, got {url!r}")
        try:
            seconds = float(timeout)
        except (TypeError, ValueError):
            raise KBError(f"the endpoint timeout is in seconds, not {timeout!r}") from None
        if not seconds > 0 or seconds != seconds or seconds == float("inf"):
            raise KBError(f"the endpoint timeout is in seconds and must be positive, not {timeout!r}")
        self.url = url
        self.timeout = seconds
        self.default_graph = default_graph
        self.max_bytes = int(max_bytes)
        self.limit_violations = 0
        self._tls: ssl.SSLContext | None = None

    # -- HTTP ------------------------------------------------------------------
    def _ssl_context(self) -> ssl.SSLContext:
        """The TLS context for https endpoints, made once (loading the CA certificates is slow)."""
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    def _form(self, sparql: str) -> bytes:
        fields = [("query", sparql)]
        if self.default_graph:
            fields.append(("default-graph-uri", self.default_graph))
        return urllib.parse.urlencode(fields).encode("utf-8")

    def _fetch(self, sparql: str, exchange: _Exchange, deadline: float) -> None:
        """The worker: POST the query, follow a few redirects, read the answer until done or cancelled."""
        try:
            url = self.url
            body = self._form(sparql)
            for _ in range(_MAX_REDIRECTS + 1):
                conn, target = self._connect(url, max(deadline - time.monotonic(), 0.001))
                exchange.conn = conn
                if exchange.cancel.is_set():
                    return
                conn.request("POST", target, body=body, headers=_HEADERS)
                response = conn.getresponse()
                location = response.getheader("Location")
                if response.status in _REDIRECTS and location:
                    conn.close()
                    url = urllib.parse.urljoin(url, location)
                    continue
                answer = self._read(response, exchange, sparql)
                if answer is None:
                    return
                exchange.status, exchange.reason = response.status, response.reason
                exchange.headers = {k.lower(): v for k, v in response.getheaders()}
                exchange.body = answer
                exchange.url = url
                conn.close()
                return
            raise EngineUnavailable(
                f"the endpoint {self.url} redirected more than {_MAX_REDIRECTS} times (last to {url})", query=sparql, url=self.url
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            exchange.error = exc
        finally:
            exchange.done.set()
            conn_ = exchange.conn
            if conn_ is not None:
                try:
                    conn_.close()
                except Exception:  # pragma: no cover - closing a broken connection
                    pass

    def _connect(self, url: str, seconds: float) -> tuple[http.client.HTTPConnection, str]:
        """A connection for ``url`` (through the environment's proxy, if any) and the request target to send."""
        parts = urllib.parse.urlsplit(url)
        proxy = _proxy_for(parts)
        host, port = (proxy.hostname or "", proxy.port) if proxy else (parts.hostname or "", parts.port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                host, port, timeout=seconds, context=self._ssl_context()
            )
            if proxy:
                conn.set_tunnel(parts.hostname or "", parts.port)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=seconds)
            if proxy:
                target = url  # a plain HTTP proxy takes the absolute URL
        return conn, target

    def _read(self, response: http.client.HTTPResponse, exchange: _Exchange, sparql: str) -> bytes | None:
        """The whole body of ``response`` (None if the exchange was cancelled meanwhile), at most ``max_bytes``."""
        chunks: list[bytes] = []
        size = 0
        while not exchange.cancel.is_set():
            chunk = response.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > self.max_bytes:
                raise EngineError(
                    f"the endpoint {self.url} sent more than {self.max_bytes} bytes; ask for fewer rows (a smaller limit)",
                    query=sparql,
                )
            chunks.append(chunk)
        if exchange.cancel.is_set():
            return None
        if response.length:  # the connection closed before Content-Length bytes came
            raise EngineUnavailable(
                f"the endpoint {self.url} closed the connection in the middle of its answer "
                f"({size} of {size + response.length} bytes)",
                query=sparql,
                url=self.url,
                status=response.status,
            )
        return b"".join(chunks)

    def _exchange(self, sparql: str) -> _Exchange:
        """One query's HTTP exchange, bounded by ``timeout`` in all."""
        deadline = time.monotonic() + self.timeout
        exchange = _Exchange()
        worker = threading.Thread(target=self._fetch, args=(sparql, exchange, deadline), name="pyql-endpoint", daemon=True)
        worker.start()
        if not exchange.done.wait(max(deadline - time.monotonic(), 0.0)):
            exchange.abort()
            raise EngineTimeout(f"the endpoint {self.url} did not answer within {self.timeout:g} s (timeout={self.timeout:g})", query=sparql)
        error = exchange.error
        if error is not None:
            raise self._connection_error(error, sparql) from error
        return exchange

    def _connection_error(self, exc: BaseException, sparql: str) -> BaseException:
        if isinstance(exc, EngineError):
            return exc
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return EngineTimeout(f"the endpoint {self.url} did not answer within {self.timeout:g} s (timeout={self.timeout:g})", query=sparql)
        if isinstance(exc, socket.gaierror):
            reason = f"cannot resolve its host ({exc.strerror or exc})"
        elif isinstance(exc, ConnectionRefusedError):
            reason = "connection refused (is the server running, on this port?)"
        elif isinstance(exc, (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected, http.client.IncompleteRead)):
            reason = f"the server closed the connection ({type(exc).__name__})"
        elif isinstance(exc, ssl.SSLError):
            reason = f"TLS failed: {exc}"
        elif isinstance(exc, (OSError, http.client.HTTPException)):
            reason = f"{type(exc).__name__}: {exc}"
        else:
            return exc
        return EngineUnavailable(f"cannot reach the endpoint {self.url}: {reason}", query=sparql, url=self.url)

    # -- answers ---------------------------------------------------------------
    def _run(self, sparql: str) -> dict[str, Any]:
        exchange = self._exchange(sparql)
        status, headers, body = exchange.status, exchange.headers, exchange.body
        where = self.url
        if status != 200:
            self._raise_status(status, exchange.reason, body, sparql)
        if "x-sql-state" in headers:
            # Virtuoso's "anytime" answer: HTTP 200 with partial rows.
            raise EngineTimeout(
                f"the endpoint {where} returned incomplete results ({headers.get('x-sql-message', headers['x-sql-state'])})",
                query=sparql,
            )
        if "x-sparql-maxrows" in headers:
            raise EngineError(
                f"the endpoint {where} cut the result at its row limit ({headers['x-sparql-maxrows']} rows); "
                "ask for fewer rows (a smaller limit) or raise ResultSetMaxRows on the server",
                query=sparql,
            )
        content_type = headers.get("content-type", "no content type")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EngineUnavailable(
                f"the endpoint {where} answered with a body that is not UTF-8 ({exc.reason} at byte {exc.start}, {content_type})",
                query=sparql,
                url=where,
                status=status,
            ) from None
        try:
            result = json.loads(text)
        except ValueError as exc:
            raise EngineUnavailable(
                f"the endpoint {where} did not answer with SPARQL JSON results ({content_type}; {exc}): {_excerpt(text)}",
                query=sparql,
                url=where,
                status=status,
            ) from None
        if not isinstance(result, dict) or not ("boolean" in result or isinstance(result.get("results"), dict)):
            raise EngineUnavailable(
                f"the endpoint {where} did not answer with SPARQL JSON results (no 'results' or 'boolean'): {_excerpt(text)}",
                query=sparql,
                url=where,
                status=status,
            )
        return result

    def _raise_status(self, status: int, reason: str, body: bytes, sparql: str) -> None:
        where = self.url
        text = body.decode("utf-8", errors="replace")
        said = f"HTTP {status} {reason}".strip() + (f": {_excerpt(text)}" if text.strip() else "")
        if status in _REDIRECTS:
            raise EngineUnavailable(f"the endpoint {where} redirected without a Location ({said})", query=sparql, url=where, status=status)
        if status == 404 or status == 410:
            raise EngineUnavailable(f"no SPARQL endpoint at {where} ({said}); check the URL", query=sparql, url=where, status=status)
        if status in (401, 403, 407):
            raise EngineUnavailable(f"the endpoint {where} refused access ({said}); check credentials", query=sparql, url=where, status=status)
        if status == 429:
            raise EngineUnavailable(f"the endpoint {where} is rate limiting ({said}); try again later", query=sparql, url=where, status=status)
        if status == 408:
            raise EngineTimeout(f"the endpoint {where} timed out the request ({said})", query=sparql)
        if 400 <= status < 500:
            raise EngineError(f"the endpoint {where} rejected the query ({said})", query=sparql)
        if status == 500 and _TIMEOUT_MESSAGE_RE.search(text):
            raise EngineTimeout(f"the endpoint {where} stopped the query as too long ({said})", query=sparql)
        if status == 500 and _QUERY_MESSAGE_RE.search(text):
            raise EngineError(f"the endpoint {where} failed on the query ({said})", query=sparql)
        raise EngineUnavailable(f"the endpoint {where} is failing ({said}); try again later", query=sparql, url=where, status=status)

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        result = self._run(sparql)
        bindings = result.get("results", {}).get("bindings", [])
        if not isinstance(bindings, list):
            raise EngineUnavailable(f"the endpoint {self.url} sent 'bindings' that are not a list", query=sparql, url=self.url)
        limit = declared_limit(sparql)
        if limit is not None and len(bindings) > limit:
            # The endpoint ignored the LIMIT: keep what the query asked for.
            self.limit_violations += 1
            bindings = bindings[:limit]
        rows = []
        for binding in bindings:
            if not isinstance(binding, dict):
                raise EngineUnavailable(f"the endpoint {self.url} sent a row that is not an object: {_excerpt(str(binding))}", query=sparql, url=self.url)
            rows.append({name: binding_to_term(cell) for name, cell in binding.items()})
        return rows

    def _ask(self, sparql: str) -> bool:
        result = self._run(sparql)
        if "boolean" not in result:
            raise EngineError(f"the endpoint {self.url} answered an ASK query without a boolean", query=sparql)
        return bool(result["boolean"])


def _proxy_for(parts: urllib.parse.SplitResult) -> urllib.parse.SplitResult | None:
    """The proxy the environment names for this URL (``http_proxy``, ``no_proxy`` ...); never for loopback."""
    host = parts.hostname or ""
    if host in ("127.0.0.1", "localhost", "::1") or host.startswith("127."):
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)


def _excerpt(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return repr(flat[:limit] + ("..." if len(flat) > limit else ""))
