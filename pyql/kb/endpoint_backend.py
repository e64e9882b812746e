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
  SPARQL JSON results of the query's form (garbage, not UTF-8, no
  ``results.bindings`` or a boolean to a SELECT, bindings or a non-boolean
  to an ASK, a row or a cell of the wrong shape or of an unknown type: a
  malformed answer is the service's fault, never the query's). Changing the
  query does not help.
* :class:`~pyql.errors.EngineTimeout`: no complete answer within ``timeout``
  seconds, Virtuoso's "anytime" partial answer (header ``X-SQL-State``), or
  an engine message saying the query timed out or would take too long.
* :class:`~pyql.errors.EngineError`: the engine rejected *this* query
  (HTTP 400 and other 4xx; a 500 whose body is an engine error about the
  query, as Virtuoso and Blazegraph send), or cut the result at its row limit
  (``X-SPARQL-MaxRows``) instead of passing it as complete.

Every message names the endpoint's URL. Credentials written in the URL
(``http://alice:s3cret@host/sparql``) are sent as HTTP basic
authentication, to that origin only, and never said: :attr:`EndpointKB.url`
and every message write the password ``***``. The row count the query asked for
(its final ``LIMIT``) is enforced on the answer: an endpoint that ignores
LIMIT cannot make an observation or a relation list unbounded. The answer is
parsed as it arrives and reading stops at ``LIMIT + 1`` rows (the connection
is then closed), so 10^6 rows sent to a bounded query cost what the query
asked for, not the whole body. No
``timeout=`` request parameter is sent (Virtuoso may then answer partially
with no marker).

Example:
    >>> from pyql.kb.endpoint_backend import binding_to_term
    >>> binding_to_term({"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "85"})
    Literal(lexical='85', datatype='http://www.w3.org/2001/XMLSchema#integer', lang=None)
"""

from __future__ import annotations

import base64
import codecs
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
from typing import Any, Iterator, Mapping

from pyql.echo import redact_credentials
from pyql.errors import EngineError, EngineTimeout, EngineUnavailable, KBError, TermError
from pyql.kb.base import KB
from pyql.builder.profiles import Profile
from pyql.builder.terms import IRI, BlankNode, Literal, Term, canonical_literal

__all__ = ["EndpointKB", "binding_to_term", "cell_problem", "declared_limit", "selected_variables"]

#: Answers larger than this many bytes are refused (an endpoint that ignores LIMIT).
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)
_CELL_TYPES = ("uri", "bnode", "literal", "typed-literal")  # compared with ==: a "type" may be any JSON value
#: Bytes asked of the socket at a time while an answer is read.
_CHUNK = 65536
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


#: The tokens :func:`selected_variables` reads: comments, IRIs and strings (skipped whole), variables, words, the rest.
_QUERY_TOKEN = re.compile(
    r"""\#[^\n]*|<[^<>"{}|^`\\\s]*>|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[?$](\w+)|([A-Za-z_]\w*)|(\S)""",
    re.DOTALL,
)


def selected_variables(sparql: str) -> frozenset[str] | None:
    """The variables a SELECT's answer may bind: those its (outermost) projection names, ``AS ?v`` aliases
    included; None for ``SELECT *`` or text that is no SELECT (then any variable may come back).

    Example:
        >>> sorted(selected_variables("PREFIX ns: <http://x/?a> SELECT DISTINCT ?x (COUNT(?y) AS ?n) WHERE { ?x ns:p ?y }"))
        ['n', 'x']
        >>> selected_variables("SELECT * WHERE { ?s ?p ?o }") is None, selected_variables("ASK { ?s ?p ?o }") is None
        (True, True)
    """
    names: set[str] = set()
    depth, started, alias = 0, False, False
    for match in _QUERY_TOKEN.finditer(sparql):
        var, word, other = match.group(1), match.group(2), match.group(3)
        keyword = (word or "").upper()
        if not started:
            if keyword in ("ASK", "CONSTRUCT", "DESCRIBE"):
                return None
            started = keyword == "SELECT"
            continue
        if depth == 0 and (keyword in ("WHERE", "FROM") or other == "{"):
            return frozenset(names)
        if other == "*" and depth == 0:
            return None
        if other in ("(", ")"):
            depth += 1 if other == "(" else -1
        if var is not None and (depth == 0 or alias):
            names.add(var)
        alias = keyword == "AS"
    return frozenset(names) if started else None


def binding_to_term(binding: Mapping[str, Any]) -> Term:
    """One cell of SPARQL JSON results as a term.

    Raises:
        EngineUnavailable: the cell is malformed (not a ``{"type", "value"}``
            object, or of an unknown type): the service's fault, not the query's.

    Example:
        >>> binding_to_term({"type": "literal", "xml:lang": "en", "value": "Rachel"})
        Literal(lexical='Rachel', datatype=None, lang='en')
        >>> binding_to_term({"type": "uri", "value": "nodeID://b10006"})
        BlankNode(id='b10006')
        >>> binding_to_term({"type": "entity", "value": "m.0crbvqz"})
        Traceback (most recent call last):
        ...
        pyql.errors.EngineUnavailable: SPARQL JSON results with a cell of unknown type 'entity': {'type': 'entity', 'value': 'm.0crbvqz'}
    """
    problem = cell_problem(binding)
    if problem is not None:
        raise EngineUnavailable(f"SPARQL JSON results with {problem}")
    return _term(binding)


def _term(binding: Mapping[str, Any]) -> Term:
    """A well-formed cell (see :func:`cell_problem`) as a term."""
    kind = binding["type"]
    value = binding["value"]
    if kind == "uri":
        if value.startswith("nodeID://"):
            return BlankNode(value[len("nodeID://") :])
        return IRI(value)
    if kind == "bnode":
        return BlankNode(value[len("nodeID://") :] if value.startswith("nodeID://") else value)
    lang = binding.get("xml:lang") or binding.get("lang")
    if lang:
        return Literal(value, lang=lang)
    return canonical_literal(value, binding.get("datatype"))


def cell_problem(binding: object) -> str | None:
    """What is wrong with one cell of SPARQL JSON results, or None when it is well formed.

    A cell is an object with a string ``type`` (``uri``, ``bnode``,
    ``literal``, or Virtuoso's ``typed-literal``) and a string ``value``;
    ``datatype`` and ``xml:lang`` (or ``lang``), when present, are strings.

    Example:
        >>> cell_problem({"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "85"})
        >>> print(cell_problem("http://rdf.freebase.com/ns/m.0a"))
        a cell that is not a {"type", "value"} object: 'http://rdf.freebase.com/ns/m.0a'
        >>> cell_problem({"type": "literal", "value": 3})
        "a cell whose value is not a string: {'type': 'literal', 'value': 3}"
    """
    if (
        type(binding) is dict
        and binding.get("type") in _CELL_TYPES
        and type(binding.get("value")) is str
        and (len(binding) == 2 or all(v is None or type(v) is str for v in binding.values()))
    ):
        return None  # the usual cell, checked fast
    if not isinstance(binding, Mapping):
        return f'a cell that is not a {{"type", "value"}} object: {_excerpt(repr(binding), 200, quote=False)}'
    kind = binding.get("type")
    problem = None
    if kind not in _CELL_TYPES:
        problem = f"a cell of unknown type {kind!r}" if isinstance(kind, str) else "a cell without a type"
    elif not isinstance(binding.get("value"), str):
        problem = "a cell whose value is not a string" if "value" in binding else "a cell without a value"
    else:
        for key in ("datatype", "xml:lang", "lang"):
            if binding.get(key) is not None and not isinstance(binding[key], str):
                problem = f"a cell whose {key} is not a string"
    if problem is None:
        return None
    return f"{problem}: {_excerpt(repr(dict(binding)), 200, quote=False)}"


@dataclass
class _Exchange:
    """One HTTP exchange between the caller and its worker thread.

    ``form`` (``SELECT`` or ``ASK``) and ``limit`` (rows wanted; None: all)
    say how much of the answer to read.
    """

    form: str = "SELECT"
    limit: int | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    conn: http.client.HTTPConnection | None = None
    status: int = 0
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    answer: _Answer | None = None
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


_MISSING: Any = object()
_SPACE = re.compile(r"[ \t\n\r]*")


@dataclass
class _Answer:
    """An HTTP 200 answer read as SPARQL JSON results, as far as the query needed it.

    ``rows`` is None when there was no ``results.bindings`` array; ``more``
    says that reading stopped at the query's ``LIMIT`` with a row beyond it;
    ``top`` holds the other members of the object (``head``, ``boolean`` ...)
    and ``results`` what ``results`` was when it is not an object holding
    a ``bindings`` array (``_MISSING`` when absent).
    """

    top: dict[str, Any] = field(default_factory=dict)
    results: Any = _MISSING
    bindings: Any = _MISSING
    rows: list[dict[str, Term]] | None = None
    more: bool = False
    start: str = ""


class _ResultsReader:
    """Reads SPARQL JSON results from a response as they arrive, converting rows on the way.

    The body is decoded and parsed piece by piece (``json.JSONDecoder.raw_decode``
    on a buffer that keeps only what is not parsed yet): the top object and
    ``results`` member by member, ``bindings`` row by row. Reading stops after
    ``limit + 1`` rows, so an endpoint that sends 10^6 rows to a query asking
    for 2,000 costs 2,001 rows. Every fault of the answer (not UTF-8, not JSON,
    a row or cell of the wrong shape, cut short, too big) is raised here.
    """

    def __init__(self, kb: EndpointKB, response: http.client.HTTPResponse, exchange: _Exchange, sparql: str) -> None:
        self.kb, self.response, self.exchange, self.sparql, self.limit = kb, response, exchange, sparql, exchange.limit
        form = exchange.form
        self.said = f"the SPARQL endpoint {kb.url} answered {'an' if form[0] in 'AEIOU' else 'a'} {form}"
        self.content_type = response.getheader("Content-Type") or "no content type"
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.json = json.JSONDecoder()
        self.buf, self.pos, self.size, self.eof = "", 0, 0, False
        self.answer = _Answer()

    # -- the body, piece by piece -----------------------------------------------------------
    def _fill(self) -> bool:
        """Read one more piece of the body into the buffer; False at its end."""
        if self.eof:
            return False
        if self.exchange.cancel.is_set():
            raise EngineTimeout(f"the endpoint {self.kb.url} did not answer within {self.kb.timeout:g} s", query=self.sparql)
        chunk = self.response.read1(_CHUNK)
        if not chunk:
            self.eof = True
            if self.response.length:  # the connection closed before Content-Length bytes came
                raise self._unavailable(
                    f"the endpoint {self.kb.url} closed the connection in the middle of its answer "
                    f"({self.size} of {self.size + self.response.length} bytes)"
                )
        self.size += len(chunk)
        if self.size > self.kb.max_bytes:
            raise EngineError(
                f"the endpoint {self.kb.url} sent more than {self.kb.max_bytes} bytes; ask for fewer rows (a smaller limit)",
                query=self.sparql,
            )
        before = self.size - len(chunk) - len(self.utf8.getstate()[0])
        try:
            text = self.utf8.decode(chunk, final=self.eof)
        except UnicodeDecodeError as exc:
            raise self._unavailable(
                f"the endpoint {self.kb.url} answered with a body that is not UTF-8 "
                f"({exc.reason} at byte {before + exc.start}, {self.content_type})"
            ) from None
        if len(self.answer.start) < 400:
            self.answer.start += text[: 400 - len(self.answer.start)]
        if self.pos > _CHUNK:  # drop what was parsed
            self.buf, self.pos = self.buf[self.pos :], 0
        self.buf += text
        return not self.eof

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end of the body)."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
                return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def _value(self) -> Any:
        """The next JSON value, whole; more of the body is read (doubling what is pending) until it parses."""
        self._peek()
        while True:
            try:
                value, end = self.json.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise self._not_json(str(exc)) from None
                want = 2 * (len(self.buf) - self.pos) + 1
                while len(self.buf) - self.pos < want and self._fill():
                    pass
                continue
            except RecursionError:
                raise self._not_json("nested too deeply") from None
            if end == len(self.buf) and isinstance(value, (int, float)) and not isinstance(value, bool) and self._fill():
                continue  # a number may go on in the next piece
            self.pos = end
            return value

    def _step(self, closing: str) -> bool:
        """After a member or an element: True if another follows (``,``), False at ``closing``."""
        char = self._peek()
        self.pos += 1
        if char == ",":
            return True
        if char == closing:
            return False
        raise self._not_json(f"expected ',' or {closing!r}, found {char or 'the end of the body'!r} at byte {self.size}")

    def _members(self) -> Iterator[str]:
        """The keys of the object that starts here; the caller reads each value."""
        self.pos += 1  # the "{" the caller saw
        if self._peek() == "}":
            self.pos += 1
            return
        while True:
            key = self._value()
            if not isinstance(key, str) or self._peek() != ":":
                raise self._not_json("an object member that is not \"key\": value")
            self.pos += 1
            yield key
            if not self._step("}"):
                return

    # -- SPARQL JSON results ------------------------------------------------------------------
    def read(self) -> _Answer:
        """The answer: the top object member by member, stopping once ``limit + 1`` rows are in."""
        answer = self.answer
        if self._peek() != "{":
            value = self._value()
            raise self._unavailable(
                f"{self.said} with a JSON {_json_type(value)}, not an object of SPARQL JSON results: {_excerpt(answer.start)}"
            )
        for key in self._members():
            if key == "results" and self._peek() == "{":
                answer.results = {}
                if self._results():
                    return answer
            elif key == "results":
                answer.results = self._value()
            else:
                answer.top[key] = self._value()
        if self._peek():
            raise self._unavailable(
                f"{self.said} and sent more after the JSON results: {_excerpt(self.buf[self.pos :], 100)}"
            )
        return answer

    def _results(self) -> bool:
        """The ``results`` object; True when reading stopped at the limit."""
        for key in self._members():
            if key == "bindings" and self._peek() == "[":
                if self._bindings():
                    return True
            elif key == "bindings":
                self.answer.bindings = self._value()
            else:
                self._value()
        return False

    def _bindings(self) -> bool:
        """The ``bindings`` array, row by row; True when reading stopped at the limit."""
        rows: list[dict[str, Term]] = []
        self.answer.rows = rows
        self.pos += 1  # "["
        if self._peek() == "]":
            self.pos += 1
            return False
        while True:
            binding = self._value()
            if self.limit is not None and len(rows) >= self.limit:
                self.answer.more = True  # a row beyond the limit: not converted, the rest not read
                return True
            rows.append(self._row(binding))
            if not self._step("]"):
                return False

    def _row(self, binding: Any) -> dict[str, Term]:
        if not isinstance(binding, dict):
            raise self._unavailable(f"{self.said} with a row that is not an object: {_excerpt(repr(binding))}")
        row = {}
        for name, cell in binding.items():
            problem = cell_problem(cell)
            if problem is not None:
                raise self._unavailable(f"{self.said} with {problem}")
            try:
                row[name] = _term(cell)
            except TermError as exc:  # a well-formed cell no term holds (a lone surrogate): the service's fault too
                raise self._unavailable(f"{self.said} with a cell that is no term ({exc}): {_excerpt(repr(cell), 200)}") from None
        return row

    def _not_json(self, reason: str) -> EngineUnavailable:
        return self._unavailable(
            f"the endpoint {self.kb.url} did not answer with SPARQL JSON results ({self.content_type}; {reason}): "
            f"{_excerpt(self.answer.start)}"
        )

    def _unavailable(self, message: str) -> EngineUnavailable:
        return EngineUnavailable(message, query=self.sparql, url=self.kb.url, status=self.response.status)


def _json_type(value: Any) -> str:
    """The JSON name of a value's type.

    Example:
        >>> _json_type([1]), _json_type(None), _json_type(True), _json_type("x")
        ('array', 'null', 'boolean', 'string')
    """
    names = ((bool, "boolean"), (dict, "object"), (list, "array"), (str, "string"), ((int, float), "number"))
    return next((name for kind, name in names if isinstance(value, kind)), "null")


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
            raise KBError(f"an endpoint URL starts with http:// or https://, got {redact_credentials(repr(url))}")
        try:
            seconds = float(timeout)
        except (TypeError, ValueError):
            raise KBError(f"the endpoint timeout is in seconds, not {timeout!r}") from None
        if not seconds > 0 or seconds != seconds or seconds == float("inf"):
            raise KBError(f"the endpoint timeout is in seconds and must be positive, not {timeout!r}")
        self.url = redact_credentials(url)  # what every message and record says: never the password
        self._address, self._authorization = _without_credentials(url)
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
        """The worker: POST the query, follow a few redirects, read the answer until done or cancelled.

        A 200 answer is parsed as it arrives (:class:`_ResultsReader`), up to
        ``exchange.limit + 1`` rows; any other answer is read whole, for its message.
        """
        try:
            url = self._address
            body = self._form(sparql)
            for _ in range(_MAX_REDIRECTS + 1):
                conn, target = self._connect(url, max(deadline - time.monotonic(), 0.001))
                exchange.conn = conn
                if exchange.cancel.is_set():
                    return
                conn.request("POST", target, body=body, headers=self._headers(url))
                response = conn.getresponse()
                location = response.getheader("Location")
                if response.status in _REDIRECTS and location:
                    conn.close()
                    url = urllib.parse.urljoin(url, location)
                    continue
                exchange.status, exchange.reason = response.status, response.reason
                exchange.headers = {k.lower(): v for k, v in response.getheaders()}
                exchange.url = url
                if response.status == 200 and not {"x-sql-state", "x-sparql-maxrows"} & exchange.headers.keys():
                    exchange.answer = _ResultsReader(self, response, exchange, sparql).read()
                else:
                    body = self._read(response, exchange, sparql)
                    if body is None:
                        return
                    exchange.body = body
                conn.close()  # also when reading stopped at the limit: the rest is never read
                return
            raise EngineUnavailable(
                f"the endpoint {self.url} redirected more than {_MAX_REDIRECTS} times (last to {redact_credentials(url)})",
                query=sparql,
                url=self.url,
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

    def _headers(self, url: str) -> dict[str, str]:
        """The request's headers: the URL's credentials as HTTP basic authentication, sent to its own origin only
        (not to another host a redirect names)."""
        if self._authorization is None or _origin(url) != _origin(self._address):
            return _HEADERS
        return {**_HEADERS, "Authorization": self._authorization}

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

    def _exchange(self, sparql: str, form: str, limit: int | None) -> _Exchange:
        """One query's HTTP exchange, bounded by ``timeout`` in all; at most ``limit + 1`` rows are read."""
        deadline = time.monotonic() + self.timeout
        exchange = _Exchange(form=form, limit=limit)
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
    def _run(self, sparql: str, form: str, limit: int | None) -> _Answer:
        """The answer to one ``form`` query, read up to ``limit + 1`` rows; an HTTP or engine fault is raised."""
        exchange = self._exchange(sparql, form, limit)
        status, headers = exchange.status, exchange.headers
        where = self.url
        if status != 200:
            self._raise_status(status, exchange.reason, exchange.body, sparql)
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
        assert exchange.answer is not None
        return exchange.answer

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
        limit = declared_limit(sparql)
        answer = self._run(sparql, "SELECT", limit)
        if answer.rows is None:
            raise self._wrong_shape(answer, "SELECT", sparql, self._select_problem(answer))
        unasked = self._unasked_variables(answer, sparql)
        if unasked:
            raise self._wrong_shape(answer, "SELECT", sparql, unasked)
        if answer.more:
            # The endpoint ignored the LIMIT: keep what the query asked for (the rest was not read).
            self.limit_violations += 1
        return answer.rows

    def _ask(self, sparql: str) -> bool:
        answer = self._run(sparql, "ASK", 0)
        boolean = answer.top.get("boolean", _MISSING)
        if answer.rows is not None or answer.results is not _MISSING:
            raise self._wrong_shape(answer, "ASK", sparql, "with bindings instead of a boolean")
        if boolean is _MISSING:
            raise self._wrong_shape(answer, "ASK", sparql, "without a boolean")
        if not isinstance(boolean, bool):
            raise self._wrong_shape(answer, "ASK", sparql, f"with a boolean that is not true or false ({json.dumps(boolean):.50})")
        return boolean

    @staticmethod
    def _unasked_variables(answer: _Answer, sparql: str) -> str | None:
        """What is wrong when the answer binds (or its ``head.vars`` names) a variable the query does not select:
        read as the query's rows, it would be empty rows (issue 35: "the entity is not in the KB"), so it is the
        service's fault; None when every variable is one the query selects (or the query selects ``*``)."""
        selected = selected_variables(sparql)
        if selected is None:
            return None
        head = answer.top.get("head")
        named = head.get("vars") if isinstance(head, dict) else None
        found = {name for row in answer.rows or () for name in row}
        found |= {v for v in named if isinstance(v, str)} if isinstance(named, list) else set()
        unasked = sorted(found - selected)
        if not unasked:
            return None
        asked = " ".join("?" + v for v in sorted(selected)) or "no variable"
        return f"with variables the query does not select ({' '.join('?' + v for v in unasked[:5])}; it selects {asked})"

    @staticmethod
    def _select_problem(answer: _Answer) -> str:
        """What a SELECT's answer without ``results.bindings`` had instead."""
        if answer.results is _MISSING:
            return "with a boolean (an ASK's answer)" if "boolean" in answer.top else "without 'results' or 'boolean'"
        if answer.bindings is not _MISSING:
            return f"with results.bindings that is not a list (a JSON {_json_type(answer.bindings)})"
        if isinstance(answer.results, dict):
            return "without results.bindings"
        return f"with 'results' that is not an object (a JSON {_json_type(answer.results)})"

    def _wrong_shape(self, answer: _Answer, form: str, sparql: str, problem: str) -> EngineUnavailable:
        """The service's fault: an answer that is JSON but not SPARQL JSON results of a ``form`` query."""
        return EngineUnavailable(
            f"the SPARQL endpoint {self.url} answered {'an' if form == 'ASK' else 'a'} {form} {problem}: {_excerpt(answer.start)}",
            query=sparql,
            url=self.url,
            status=200,
        )


def _without_credentials(url: str) -> tuple[str, str | None]:
    """The URL without its user information, and that information as an HTTP basic ``Authorization`` value.

    Example:
        >>> _without_credentials("http://alice:s%40cret@127.0.0.1:8890/sparql")
        ('http://127.0.0.1:8890/sparql', 'Basic YWxpY2U6c0BjcmV0')
        >>> _without_credentials("https://example.org/sparql")
        ('https://example.org/sparql', None)
    """
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


def _origin(url: str) -> tuple[str, str, int | None]:
    """A URL's scheme, host and port (credentials are sent to their own origin only)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def _proxy_for(parts: urllib.parse.SplitResult) -> urllib.parse.SplitResult | None:
    """The proxy the environment names for this URL (``http_proxy``, ``no_proxy`` ...); never for loopback."""
    host = parts.hostname or ""
    if host in ("127.0.0.1", "localhost", "::1") or host.startswith("127."):
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)


def _excerpt(text: str, limit: int = 300, *, quote: bool = True) -> str:
    flat = " ".join(text.split())
    cut = flat[:limit] + ("..." if len(flat) > limit else "")
    return repr(cut) if quote else cut
