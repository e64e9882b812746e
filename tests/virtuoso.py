"""Start a throw-away OpenLink Virtuoso on loopback, load Turtle into it, stop it.

A self-contained helper (standard library only) for tests and benchmarks.
Import it as ``tests.virtuoso`` (``tests/conftest.py`` makes that work under
pytest) or load it by path with :mod:`importlib.util`::

    from tests.virtuoso import VirtuosoServer

    with VirtuosoServer() as server:                # ~5 s: fresh database
        n = server.load_turtle(Path("kb.ttl"), "http://example.org/kb")
        SPARQLWrapper(server.endpoint)               # http://127.0.0.1:PORT/sparql

Public API
----------
``find_virtuoso() -> tuple[str, str] | None``
    Paths of ``virtuoso-t`` and of Virtuoso's ``isql`` (``isql-vt``, or an
    ``isql`` that is Virtuoso's rather than unixODBC's); ``None`` if missing.
``INSTALL_HINT``
    How to install it (Debian/Ubuntu package ``virtuoso-opensource``).
``VirtuosoError``
    Base class (a ``RuntimeError``) of ``VirtuosoNotInstalled``,
    ``VirtuosoStartError``, ``VirtuosoLoadError`` and ``VirtuosoQueryError``.
``VirtuosoServer(workdir=None, timeout=60, *, keep=False, query_timeout=60, ...)``
    Context manager.  ``start()`` makes a fresh database in a new directory
    ``pyql-virtuoso-*`` under ``workdir`` (default: the system temp dir), writes
    its own ``virtuoso.ini`` with free loopback ports, runs ``virtuoso-t
    +foreground +configfile virtuoso.ini`` and waits (at most ``timeout``
    seconds) until ``ASK {}`` answers over HTTP.  ``load_turtle(path, graph)``
    bulk-loads a file (``ld_dir`` / ``rdf_loader_run`` / ``checkpoint``) and
    returns the triple count of ``graph``; loading the same unchanged file into
    the same graph again is a no-op.  ``sparql(query)`` returns the parsed
    JSON result (raising on HTTP errors and on truncated "anytime" results),
    ``isql(sql)`` runs SQL as ``dba``, ``triple_count(graph)``.  Properties:
    ``endpoint``, ``http_port``, ``sql_port``, ``directory``, ``log_path``,
    ``pid``, ``running``.  ``stop(keep=None)`` shuts the server down (isql
    ``shutdown``, then SIGTERM, then SIGKILL, each bounded) and removes the
    directory unless ``keep``.  A server is never left behind: live servers
    are stopped at interpreter exit (``atexit``), the child gets
    ``PR_SET_PDEATHSIG=SIGKILL`` so it dies with the Python process even on
    ``kill -9``, and directories left by killed runs are swept on the next
    ``start()``.

What a SPARQL client must know about Virtuoso 7.2 (7.2.5, Debian package)
-------------------------------------------------------------------------
Measured with SPARQLWrapper 2.0 (``setMethod(POST)``, ``setReturnFormat(JSON)``)
against a server started by this module; the test file held the literals below
on ``<http://rdf.freebase.com/ns/m.0crbvqz>``.  JSON terms are shown as
``type / datatype / value``; ``xsd:`` = ``http://www.w3.org/2001/XMLSchema#``.

=========================================  =====================================================
Stored term or query feature               What Virtuoso does
=========================================  =====================================================
POST ``query=`` form, JSON results         works for the built-in ``SPARQL`` user, no setup;
                                           ``addDefaultGraph(g)`` (``default-graph-uri``) works
                                           and echoes header ``X-SPARQL-default-graph``
IRI ``ns:m.0crbvqz``                       ``uri`` / - / IRI unchanged
prefixed name ``ns:a.b.c`` (two dots)      accepted (``ns:meteorology.tropical_cyclone.category``)
``"Tropical Storm Rachel"@en``             ``literal`` + ``"xml:lang": "en"``; a plain
                                           ``"Tropical Storm Rachel"`` pattern does NOT match it
``"85"^^xsd:integer``                      ``typed-literal`` / xsd:integer / ``85``
``"12.5"^^xsd:decimal``                    ``typed-literal`` / xsd:decimal / ``12.5``
``"1.0"^^xsd:float``                       ``typed-literal`` / xsd:float / ``1.0``; but
                                           ``STR(?o)`` gives ``"1"``
``"true"^^xsd:boolean``                    ``typed-literal`` / xsd:boolean / **``1``** (not
                                           ``true``); ``STR(?o)`` gives ``"true"``; the pattern
                                           ``?s ns:bool 1`` matches it too
``"2014-07-31"^^xsd:date``                 ``typed-literal`` / xsd:date / ``2014-07-31``
``"2014-07-31T08:00:00"^^xsd:dateTime``    ``typed-literal`` / xsd:dateTime / ``2014-07-31T08:00:00``
``"2005"^^xsd:gYear``                      ``typed-literal`` / xsd:gYear / ``2005``; a pattern
                                           with ``"2005"`` or ``2005`` does NOT match it
``"2005-06"^^xsd:gYearMonth``              ``typed-literal`` / xsd:gYearMonth / ``2005-06``
plain string with ``"``, ``\\``, newline   ``literal`` / - / exact text (JSON-escaped); an
                                           escaped string pattern matches it
blank node                                 ``bnode`` / - / ``nodeID://b10000``; ``STR()`` of it
                                           is ``"nodeID://b10000"``; ``<nodeID://b10000>`` can
                                           be used as an IRI in a later query to reach it
computed values                            booleans come back as xsd:integer ``1``/``0``
                                           (``(1=1 AS ?b)``, ``isBlank()``, and even ``?o`` of
                                           ``FILTER(?o = true)``); ``COUNT``/``YEAR``/``STRLEN``
                                           xsd:integer; ``1.5*2`` xsd:decimal ``3``;
                                           ``xsd:double("1e3")`` ``1000.0``; ``STR()`` is
                                           ``literal`` without datatype
no FROM, no default-graph-uri              union of ALL graphs, incl. system graphs
                                           (``virtrdf#``, ``ldp#``, ``localuriqaserver``):
                                           ~2500 extra triples -> always use FROM or
                                           ``addDefaultGraph``
``FROM <g>`` plus ``default-graph-uri``    the protocol parameter wins (FROM is ignored)
``FROM <unknown graph>``                   empty result, no error
syntax error / undefined prefix            HTTP 400, body text ``Virtuoso 37000 Error SP030:
                                           SPARQL compiler, line N: ...`` (SPARQLWrapper:
                                           ``QueryBadFormed``)
unknown function, run-time errors          HTTP 500, ``Virtuoso 42001 Error SR185: Undefined
                                           procedure ...`` (``EndPointInternalError``)
update (``INSERT DATA``) over HTTP         HTTP 500, ``SR186:SECURITY: No permission`` -- the
                                           endpoint is read-only; load with ``load_turtle``
``MaxQueryExecutionTime`` exceeded         HTTP 500 ``Virtuoso S1T00 Error SR171: Transaction
                                           timed out`` (SPARQLWrapper: ``EndPointInternalError``);
                                           server ini setting, this harness: 60 s
``timeout=<ms>`` request parameter         Virtuoso extension -- do NOT send it. "Anytime
                                           query": **HTTP 200 with partial rows**; seen with
                                           ``X-SQL-State: S1TAT`` + ``X-SQL-Message: RC...:
                                           Returning incomplete results, query interrupted by
                                           result timeout`` (empty bindings) but also with NO
                                           marker at all (88897 of 99000 rows); a value above
                                           MaxQueryExecutionTime gave HTTP 400 ``S1TAT``.  Use a
                                           client-side socket timeout (``setTimeout``) instead
estimated cost too high                    HTTP 500 at once: ``Virtuoso 42000 Error The estimated
                                           execution time 627212352 (sec) exceeds the limit of
                                           400 (sec).`` (``MaxQueryCostEstimationTime``)
more rows than ``ResultSetMaxRows``        silently cut to that many rows, HTTP 200, only marker
                                           is header ``X-SPARQL-MaxRows: 100000`` (this harness
                                           sets 100000; Debian default 10000)
``HAVING`` without ``GROUP BY``            rejected, HTTP 400 ``SP031: HAVING clause should be
                                           preceded by a GROUP BY clause`` (legal SPARQL 1.1);
                                           wrap the aggregate in a sub-SELECT + FILTER instead
prefix-of-date filter                      works on xsd:date, gYear, gYearMonth, dateTime:
                                           ``FILTER(STR(?x) <= SUBSTR("2011-12-31", 1,
                                           STRLEN(STR(?x))))``
``FILTER NOT EXISTS {}`` / ``EXISTS {}``   work
sub-SELECTs inside a UNION                 work, with GROUP BY / SAMPLE / ORDER BY / LIMIT
``BIND("f" AS ?dir)``                      works, also inside UNION arms
``VALUES`` (one and several vars, UNDEF)   works
``COUNT(DISTINCT ?x)``                     works
``LANGMATCHES(LANG(?l), "en")``            works; ``LANG()`` gives ``"en"``
``ASK``                                    ``{"head": {"link": []}, "boolean": true}``;
                                           ``ASK {}`` is true
also OK                                    OPTIONAL, MINUS, GROUP BY + HAVING, IN, REGEX(.., "i"),
                                           CONTAINS/LCASE, STRSTARTS(STR(iri)), GROUP_CONCAT,
                                           MAX/MIN on dates, ``xsd:date(?dateTime)``,
                                           property paths ``a/b`` and ``^a``, ORDER BY +
                                           LIMIT + OFFSET
JSON ``head``                              always has ``"link": []``; ``results`` has
                                           ``"distinct": false, "ordered": true``; unbound
                                           variables are simply absent from a binding
=========================================  =====================================================

Loading (``ld_dir`` + ``rdf_loader_run``): a Turtle syntax error does not
raise in isql; it is recorded in ``DB.DBA.load_list.ll_error`` (e.g. ``37000
[Vectorized Turtle loader] SP029: TURTLE RDF loader, line 3: Unterminated short
double-quoted string``) and the triples parsed *before* the error stay in the
graph.  ``load_turtle`` raises :class:`VirtuosoLoadError` with that message.
``isql-vt`` exits 0 even when a statement fails (errors go to stderr as
``*** Error ...``), so :meth:`VirtuosoServer.isql` checks the text.  A port
already in use makes ``virtuoso-t`` exit at once (``Failed HTTP listen`` /
``Failed to start listening``); ``start()`` then retries with new ports.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

__all__ = [
    "INSTALL_HINT",
    "VirtuosoError",
    "VirtuosoLoadError",
    "VirtuosoNotInstalled",
    "VirtuosoQueryError",
    "VirtuosoServer",
    "VirtuosoStartError",
    "find_virtuoso",
]

INSTALL_HINT = (
    "OpenLink Virtuoso (virtuoso-t and isql-vt) is not installed. On Debian/Ubuntu: "
    "`sudo apt-get update && sudo apt-get install -y virtuoso-opensource` "
    "(as root: `apt-get update && apt-get install -y virtuoso-opensource`). "
    "`bash .ci/run` does this automatically."
)

DIR_PREFIX = "pyql-virtuoso-"
_MARKER = "pyql-virtuoso.json"
_EXTRA_BIN_DIRS = (
    "/usr/bin",
    "/usr/local/bin",
    "/opt/virtuoso-opensource/bin",
    "/usr/local/virtuoso-opensource/bin",
)
# Suffixes Virtuoso's bulk loader understands; anything else is loaded as Turtle.
_RDF_SUFFIXES = {".ttl", ".nt", ".n3", ".nq", ".trig", ".owl", ".rdf", ".xml"}
_FORBIDDEN_IRI_CHARS = re.compile(r'[\s<>"{}|^`\\]')


class VirtuosoError(RuntimeError):
    """Any failure of the harness or of the server it drives."""


class VirtuosoNotInstalled(VirtuosoError):
    """``virtuoso-t`` or Virtuoso's ``isql`` was not found."""


class VirtuosoStartError(VirtuosoError):
    """The server did not come up; the message ends with the tail of its log."""


class VirtuosoLoadError(VirtuosoError):
    """A file could not be loaded (message from ``DB.DBA.load_list.ll_error``)."""


class VirtuosoQueryError(VirtuosoError):
    """An isql statement or a SPARQL request failed, or a result was truncated."""


# --------------------------------------------------------------------------- #
# Locating the binaries
# --------------------------------------------------------------------------- #


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in _EXTRA_BIN_DIRS:
        cand = os.path.join(d, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def _is_virtuoso_isql(path: str) -> bool:
    """True if ``path`` is Virtuoso's interactive SQL client (not unixODBC's)."""
    try:
        proc = subprocess.run(
            [path, "-?"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    return "Virtuoso" in text or "OpenLink" in text


def find_virtuoso() -> tuple[str, str] | None:
    """Return ``(virtuoso_t, isql)`` paths, or ``None`` if either is missing."""
    server = _which("virtuoso-t")
    if server is None:
        return None
    isql = _which("isql-vt")
    if isql is None:
        # Source installs call the client plain ``isql``, which on Debian is
        # unixODBC's tool; prefer the one next to virtuoso-t.
        candidates = [os.path.join(os.path.dirname(server), "isql"), _which("isql")]
        for cand in candidates:
            if cand and os.path.isfile(cand) and _is_virtuoso_isql(cand):
                isql = cand
                break
    if isql is None:
        return None
    return server, isql


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #


def _sql_str(value: str) -> str:
    """Quote ``value`` as a Virtuoso SQL string literal.

    >>> _sql_str("it's")
    "'it''s'"
    """
    if "\\" in value or "\x00" in value:
        raise ValueError(f"backslash/NUL not supported in SQL literal: {value!r}")
    return "'" + value.replace("'", "''") + "'"


def _check_iri(iri: str) -> str:
    """Reject strings that cannot be written as ``<iri>``.

    >>> _check_iri("http://example.org/g")
    'http://example.org/g'
    """
    if not iri or _FORBIDDEN_IRI_CHARS.search(iri) or ":" not in iri:
        raise ValueError(f"not a usable absolute IRI: {iri!r}")
    return iri


def _free_ports(n: int) -> list[int]:
    """``n`` distinct currently free TCP ports on 127.0.0.1."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _pdeathsig_hook():
    """A ``preexec_fn`` making Linux SIGKILL the child when this Python dies.

    ``prctl`` is looked up here, in the parent, so that the forked child only
    makes the system call (no ``dlopen`` between fork and exec).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    PR_SET_PDEATHSIG = 1
    sigkill = int(signal.SIGKILL)

    def hook() -> None:  # pragma: no cover - runs in the child
        prctl(PR_SET_PDEATHSIG, sigkill, 0, 0, 0)

    return hook


def _sweep_stale(base: Path) -> None:
    """Remove ``pyql-virtuoso-*`` directories whose owner and server are dead."""
    try:
        entries = list(base.glob(DIR_PREFIX + "*"))
    except OSError:
        return
    for d in entries:
        marker = d / _MARKER
        try:
            info = json.loads(marker.read_text())
            if time.time() - marker.stat().st_mtime < 30:
                continue
        except (OSError, ValueError):
            continue
        if _pid_alive(info.get("owner_pid")) or _pid_alive(info.get("server_pid")):
            continue
        shutil.rmtree(d, ignore_errors=True)


_LIVE: set[VirtuosoServer] = set()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _LIVE_LOCK:
        servers = list(_LIVE)
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()


# --------------------------------------------------------------------------- #
# The server
# --------------------------------------------------------------------------- #

_INI_TEMPLATE = """\
; Written by tests/virtuoso.py -- a throw-away database on loopback ports.
[Database]
DatabaseFile       = {d}/virtuoso.db
ErrorLogFile       = {d}/virtuoso.log
LockFile           = {d}/virtuoso.lck
TransactionFile    = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = {d}/virtuoso-temp.db
TransactionFile    = {d}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort               = 127.0.0.1:{sql_port}
LiteMode                 = 0
DisableUnixSocket        = 1
DisableTcpSocket         = 0
MaxClientConnections     = 20
CheckpointInterval       = 0
O_DIRECT                 = 0
CaseMode                 = 2
MaxStaticCursorRows      = 5000
CheckpointAuditTrail     = 0
AllowOSCalls             = 0
SchedulerInterval        = 10
DirsAllowed              = ., {d}
ThreadCleanupInterval    = 0
ThreadThreshold          = 10
ResourcesCleanupInterval = 0
FreeTextBatchSize        = 100000
SingleCPU                = 0
PrefixResultNames        = 0
RdfFreeTextRulesSize     = 100
IndexTreeMaps            = 64
MaxMemPoolSize           = 100000000
MaxQueryMem              = 1G
VectorSize               = 1000
MaxVectorSize            = 1000000
AdjustVectorSize         = 0
ThreadsPerQuery          = 2
AsyncQueueMaxThreads     = 10
NumberOfBuffers          = {buffers}
MaxDirtyBuffers          = {dirty}

[HTTPServer]
ServerPort                  = 127.0.0.1:{http_port}
ServerRoot                  = {d}/vsp
MaxClientConnections        = 10
DavRoot                     = DAV
EnabledDavVSP               = 0
HTTPProxyEnabled            = 0
TempASPXDir                 = 0
ServerThreads               = 10
MaxKeepAlives               = 10
KeepAliveTimeout            = 10
MaxCachedProxyConnections   = 10
ProxyConnectionCacheTimeout = 15
HTTPThreadSize              = 280000
HttpPrintWarningsInOutput   = 0
Charset                     = UTF-8
EnabledGzipContent          = 1

[AutoRepair]
BadParentLinks = 0

[Client]
SQL_PREFETCH_ROWS  = 100
SQL_PREFETCH_BYTES = 16000
SQL_QUERY_TIMEOUT  = 0
SQL_TXN_TIMEOUT    = 0

[VDB]
ArrayOptimization           = 0
NumArrayParameters          = 10
VDBDisconnectTimeout        = 1000
KeepConnectionOnFixedThread = 0

[Replication]
ServerName   = pyql-test
ServerEnable = 0
QueueMax     = 50000

[URIQA]
DynamicLocal = 0
DefaultHost  = 127.0.0.1:{http_port}

[SPARQL]
ResultSetMaxRows           = {max_rows}
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime      = {query_timeout}
DefaultQuery               = ASK {{}}
DeferInferenceRulesInit    = 0

[Plugins]
; none: the Debian defaults (wikiv, mediawiki, ...) are not needed
"""


class VirtuosoServer:
    """A private Virtuoso server on free loopback ports (see module docstring).

    ``workdir`` is the parent directory of the per-server database directory
    (default: the system temp dir); ``timeout`` bounds startup (seconds);
    ``keep`` keeps the database directory after :meth:`stop`;
    ``query_timeout`` is ``[SPARQL] MaxQueryExecutionTime`` (seconds);
    ``result_max_rows`` is ``[SPARQL] ResultSetMaxRows``.
    """

    def __init__(
        self,
        workdir: Path | None = None,
        timeout: float = 60,
        *,
        keep: bool = False,
        query_timeout: int = 60,
        result_max_rows: int = 100_000,
        number_of_buffers: int = 10_000,
        max_dirty_buffers: int = 6_000,
        password: str = "dba",
    ) -> None:
        self.workdir = Path(workdir) if workdir is not None else None
        self.timeout = float(timeout)
        self.keep = keep
        self.query_timeout = int(query_timeout)
        self.result_max_rows = int(result_max_rows)
        self.number_of_buffers = int(number_of_buffers)
        self.max_dirty_buffers = int(max_dirty_buffers)
        self.password = password
        self._bins: tuple[str, str] | None = None
        self._dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file = None
        self._http_port: int | None = None
        self._sql_port: int | None = None
        self._lock = threading.RLock()
        self._loaded: dict[tuple[str, str], tuple[tuple[int, int], int]] = {}
        self._load_seq = 0

    # -- context manager ---------------------------------------------------- #

    def __enter__(self) -> VirtuosoServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<VirtuosoServer {state} endpoint={self._endpoint_or_none()} dir={self._dir}>"

    # -- properties --------------------------------------------------------- #

    def _endpoint_or_none(self) -> str | None:
        return f"http://127.0.0.1:{self._http_port}/sparql" if self._http_port else None

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT/sparql``."""
        ep = self._endpoint_or_none()
        if ep is None:
            raise VirtuosoError("server not started")
        return ep

    @property
    def http_port(self) -> int | None:
        return self._http_port

    @property
    def sql_port(self) -> int | None:
        return self._sql_port

    @property
    def directory(self) -> Path | None:
        """The database directory (also the only directory the loader may read)."""
        return self._dir

    @property
    def log_path(self) -> Path | None:
        return self._dir / "server.out" if self._dir else None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- start -------------------------------------------------------------- #

    def start(self) -> VirtuosoServer:
        """Create a fresh database and start the server; returns ``self``."""
        with self._lock:
            if self.running:
                return self
            bins = find_virtuoso()
            if bins is None:
                raise VirtuosoNotInstalled(INSTALL_HINT)
            self._bins = bins
            base = self.workdir or Path(tempfile.gettempdir())
            base.mkdir(parents=True, exist_ok=True)
            _sweep_stale(base)
            deadline = time.monotonic() + self.timeout
            last_error: VirtuosoStartError | None = None
            for _attempt in range(4):
                try:
                    self._start_once(base, deadline)
                    return self
                except _PortClash as exc:  # somebody grabbed a port: new ports, new dir
                    last_error = VirtuosoStartError(str(exc))
                    self._cleanup_after_failed_start()
                    continue
                except BaseException:
                    self._cleanup_after_failed_start()
                    raise
            assert last_error is not None
            raise last_error

    def _start_once(self, base: Path, deadline: float) -> None:
        server_bin, _ = self._bins  # type: ignore[misc]
        d = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=base)).resolve()
        if "'" in str(d) or "\\" in str(d) or "," in str(d):
            shutil.rmtree(d, ignore_errors=True)
            raise VirtuosoStartError(f"unusable directory name for Virtuoso: {d}")
        self._dir = d
        (d / "vsp").mkdir()
        (d / "load").mkdir()
        self._http_port, self._sql_port = _free_ports(2)
        ini = d / "virtuoso.ini"
        ini.write_text(
            _INI_TEMPLATE.format(
                d=d,
                sql_port=self._sql_port,
                http_port=self._http_port,
                buffers=self.number_of_buffers,
                dirty=self.max_dirty_buffers,
                max_rows=self.result_max_rows,
                query_timeout=self.query_timeout,
            )
        )
        self._write_marker()
        self._log_file = open(d / "server.out", "wb")
        with _LIVE_LOCK:
            _LIVE.add(self)
        self._proc = subprocess.Popen(
            [server_bin, "+foreground", "+configfile", str(ini)],
            cwd=d,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_pdeathsig_hook(),
        )
        self._write_marker()
        self._wait_ready(deadline)

    def _write_marker(self) -> None:
        if self._dir is None:
            return
        info = {"owner_pid": os.getpid(), "server_pid": self.pid, "created": time.time()}
        with contextlib.suppress(OSError):
            (self._dir / _MARKER).write_text(json.dumps(info))

    def _log_text(self) -> str:
        parts = []
        for name in ("server.out", "virtuoso.log"):
            p = self._dir / name if self._dir else None
            if p is not None and p.exists():
                parts.append(p.read_text("utf-8", "replace"))
        return "\n".join(parts)

    def _failure(self, what: str) -> str:
        tail = _tail(self.log_path) if self.log_path else "(no log)"
        return (
            f"Virtuoso {what} (http 127.0.0.1:{self._http_port}, sql 127.0.0.1:{self._sql_port}, "
            f"dir {self._dir}).\n--- tail of {self.log_path} ---\n{tail}"
        )

    def _wait_ready(self, deadline: float) -> None:
        url = self.endpoint + "?" + urllib.parse.urlencode({"query": "ASK {}"})
        http_ok = False
        while True:
            rc = self._proc.poll() if self._proc else None
            if rc is not None:
                text = self._log_text()
                msg = self._failure(f"exited with status {rc} during startup")
                if "Failed HTTP listen" in text or "Failed to start listening" in text:
                    raise _PortClash(msg)
                raise VirtuosoStartError(msg)
            if not http_ok:
                try:
                    req = urllib.request.Request(
                        url, headers={"Accept": "application/sparql-results+json"}
                    )
                    with urllib.request.urlopen(req, timeout=5) as resp:
                        body = json.loads(resp.read().decode("utf-8"))
                    http_ok = body.get("boolean") is True
                except (OSError, ValueError, urllib.error.URLError):
                    http_ok = False
            if http_ok and "Server online at" in self._log_text():
                return
            if time.monotonic() > deadline:
                raise VirtuosoStartError(
                    self._failure(f"did not answer ASK {{}} within {self.timeout:g} s")
                )
            time.sleep(0.1)

    def _cleanup_after_failed_start(self) -> None:
        with contextlib.suppress(Exception):
            self._terminate(grace=2.0)
        self._close_log()
        if self._dir is not None and not self.keep:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None
        self._proc = None
        self._http_port = self._sql_port = None
        with _LIVE_LOCK:
            _LIVE.discard(self)

    # -- stop --------------------------------------------------------------- #

    def stop(self, keep: bool | None = None) -> None:
        """Shut down (isql ``shutdown``, then SIGTERM, then SIGKILL; bounded).

        Removes the database directory unless ``keep`` (default: ``self.keep``).
        Safe to call more than once.
        """
        keep = self.keep if keep is None else keep
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                with contextlib.suppress(Exception):
                    self.isql("shutdown;", timeout=15, check=False)
                try:
                    self._proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self._terminate(grace=10.0)
            self._close_log()
            with _LIVE_LOCK:
                _LIVE.discard(self)
            if self._dir is not None and not keep:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
            self._loaded.clear()

    def _terminate(self, grace: float) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)  # own session: the group is just the server
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def _close_log(self) -> None:
        if self._log_file is not None:
            with contextlib.suppress(OSError):
                self._log_file.close()
            self._log_file = None

    # -- SQL ---------------------------------------------------------------- #

    def isql(self, sql: str, *, timeout: float | None = 600, check: bool = True) -> str:
        """Run ``sql`` (statements ending in ``;``) as ``dba``; return the output.

        isql exits 0 even on failure, so with ``check`` any ``*** Error``
        raises :class:`VirtuosoQueryError`.
        """
        if self._bins is None or self._sql_port is None:
            raise VirtuosoError("server not started")
        _, isql_bin = self._bins
        proc = subprocess.run(
            [isql_bin, f"127.0.0.1:{self._sql_port}", "dba", self.password, f"exec={sql}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
        out = proc.stdout.decode("utf-8", "replace")
        err = proc.stderr.decode("utf-8", "replace")
        if check and (proc.returncode != 0 or "*** Error" in err or "*** Error" in out):
            raise VirtuosoQueryError(
                f"isql failed (exit {proc.returncode}) running:\n{sql}\n--- stderr ---\n"
                f"{err.strip()}\n--- stdout ---\n{out.strip()[-2000:]}"
            )
        return out + err

    # -- SPARQL over HTTP ----------------------------------------------------- #

    def sparql(self, query: str, *, timeout: float = 120, allow_partial: bool = False) -> dict:
        """POST ``query`` to the endpoint and return the decoded JSON result.

        Raises :class:`VirtuosoQueryError` on HTTP errors and, unless
        ``allow_partial``, when Virtuoso marks the answer as incomplete
        (``X-SQL-State: S1TAT``, its "anytime query" timeout) or as cut at
        ``ResultSetMaxRows`` (``X-SPARQL-MaxRows``).  No ``timeout`` request
        parameter is sent (see the module docstring for why).
        """
        data = urllib.parse.urlencode({"query": query}).encode("utf-8")
        req = urllib.request.Request(
            self.endpoint,
            data=data,
            headers={
                "Accept": "application/sparql-results+json",
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                state = resp.headers.get("X-SQL-State")
                message = resp.headers.get("X-SQL-Message", "")
                max_rows = resp.headers.get("X-SPARQL-MaxRows")
                body = resp.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace")
            raise VirtuosoQueryError(f"HTTP {exc.code} from Virtuoso: {text.strip()}") from exc
        except (OSError, urllib.error.URLError) as exc:
            raise VirtuosoQueryError(f"cannot reach {self.endpoint}: {exc}") from exc
        if not allow_partial:
            if state:
                raise VirtuosoQueryError(f"incomplete result ({state}): {message}")
            if max_rows:
                raise VirtuosoQueryError(
                    f"result truncated to ResultSetMaxRows={max_rows} rows (X-SPARQL-MaxRows)"
                )
        return json.loads(body)

    def triple_count(self, graph: str) -> int:
        """Number of triples in ``graph`` (via the HTTP endpoint)."""
        q = f"SELECT (COUNT(*) AS ?n) FROM <{_check_iri(graph)}> WHERE {{ ?s ?p ?o }}"
        rows = self.sparql(q)["results"]["bindings"]
        return int(rows[0]["n"]["value"]) if rows else 0

    # -- loading ------------------------------------------------------------ #

    def load_turtle(self, path: Path, graph: str, *, timeout: float | None = None) -> int:
        """Bulk-load ``path`` into ``graph``; return the triples now in ``graph``.

        The file is copied into the server's allowed directory and loaded with
        ``ld_dir(...); rdf_loader_run(); checkpoint;``.  A file that fails to
        parse raises :class:`VirtuosoLoadError` carrying ``ll_error`` (triples
        before the error remain in the graph).  Loading the same unchanged
        file into the same graph again only re-counts.  ``.nt``, ``.nq``,
        ``.trig``, ``.rdf``/``.owl`` and ``.gz`` variants keep their format;
        other names are read as Turtle.
        """
        src = Path(path).resolve()
        _check_iri(graph)
        st = src.stat()  # FileNotFoundError for a missing file
        stamp = (st.st_size, st.st_mtime_ns)
        key = (str(src), graph)
        with self._lock:
            if not self.running:
                raise VirtuosoError("server not running")
            cached = self._loaded.get(key)
            if cached is not None and cached[0] == stamp:
                return self.triple_count(graph)
            self._load_seq += 1
            digest = hashlib.sha1(str(src).encode()).hexdigest()[:8]
            load_dir = self._dir / "load" / f"{self._load_seq:04d}-{digest}"  # type: ignore[operator]
            load_dir.mkdir(parents=True)
            dest = load_dir / ("data" + _loader_suffix(src))
            shutil.copyfile(src, dest)
            sql = (
                f"ld_dir({_sql_str(str(load_dir))}, {_sql_str(dest.name)}, {_sql_str(graph)});\n"
                "rdf_loader_run();\n"
                "checkpoint;\n"
                "select concat('LL|', cast(ll_state as varchar), '|', "
                "coalesce(ll_error, ''), '|END') from DB.DBA.load_list "
                f"where ll_file = {_sql_str(str(dest))};\n"
            )
            out = self.isql(sql, timeout=timeout)
            with contextlib.suppress(OSError):
                dest.unlink()  # the data is in the database now
            m = re.search(r"LL\|(\d+)\|(.*?)\|END", out, re.S)
            if m is None:
                raise VirtuosoLoadError(
                    f"{src} was not registered by ld_dir (graph <{graph}>):\n{out.strip()[-2000:]}"
                )
            state, error = m.group(1), m.group(2).strip()
            if error:
                raise VirtuosoLoadError(f"loading {src} into <{graph}> failed: {error}")
            if state != "2":
                raise VirtuosoLoadError(f"loading {src} into <{graph}> did not finish (ll_state={state})")
            count = self.triple_count(graph)
            self._loaded[key] = (stamp, count)
            return count


def _loader_suffix(src: Path) -> str:
    """Suffix for the copy, telling ``ld_dir`` which parser to use.

    >>> _loader_suffix(Path("kb.nt.gz")), _loader_suffix(Path("x.turtle"))
    ('.nt.gz', '.ttl')
    """
    suffixes = [s.lower() for s in src.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    base = suffixes[-1] if suffixes and suffixes[-1] in _RDF_SUFFIXES else ".ttl"
    return base + (".gz" if gz else "")


class _PortClash(VirtuosoStartError):
    """Internal: a chosen port was taken before the server could bind it."""
