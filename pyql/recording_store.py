"""A recording of KB queries and LLM calls: one SQLite file, content-addressed.

``--record DIR`` writes every KB query (with the KB's identity) and every
LLM call (model, prompt, sampling settings) with its answer into
``DIR/recording.sqlite``; ``--replay DIR`` answers them from it, and
``--kb-cache DIR`` keeps KB answers in ``DIR/kb-cache.sqlite`` for the next
live run. Both are a :class:`RecordingStore`; :mod:`pyql.kb.recording`
(the KB side) and :mod:`agent.llm.recording` (the LLM side) build the
requests and read the answers.

An entry's key is the sha256 of its request as canonical JSON
(:func:`request_key`: sorted keys, no spaces), so the same call made twice,
by two threads or two processes, is one entry (the first answer stays).
Every entry is written in its own transaction, committed before the call
returns, on a connection in WAL mode with a busy time-out: a process killed
at any moment leaves every entry whose call returned, and no half entry.

What an entry costs (the recording's overhead on a run whose KB is in
memory and whose LLM is free, its worst case, is 6.6–8.4 % of the run;
0.16–0.24 % on a run that waits on a model: docs/results.md): the insert is
one statement in autocommit mode (its own transaction, no separate
BEGIN/COMMIT); with ``synchronous = NORMAL`` a commit writes the log
without syncing it, and the log is synced when it is copied back into the
database, which happens every :data:`CHECKPOINT_PAGES` pages (SQLite's
default, 1,000, synced about every 100 entries, each sync tens of
milliseconds on a busy disk) and when the store is closed. Answers are
written as compact JSON in the key order they were built in (sorting the
keys of every row doubled the encoding time; only the request, which makes
the key, needs the canonical form). A process killed between checkpoints
loses nothing: the log is read back when the file is next opened; only an
operating-system crash or a power cut can lose the entries since the last
checkpoint. Opening a file checks that it is an
SQLite database, intact (``PRAGMA quick_check``), a pyql store of this
version and of the kind asked for, and that every text in it is UTF-8 and
every request and answer JSON (one pass over the file, as the integrity
check is); anything else is a :class:`~pyql.errors.RecordingError` (the
CLI exits 2, before any question), an entry that is not
a :class:`~pyql.errors.RecordingDamaged` naming the file and the entry.

Faults while running are told apart: an entry found damaged when it is
read (an answer that is not what pyql writes) is a
:class:`~pyql.errors.RecordingDamaged` (the user's file: the command stops,
and every later read of the store says so again); a write or read that
fails on the moment (a full disk, an I/O error, a lock held too long) is a
:class:`~pyql.errors.RecordingUnavailable` (an ``EngineUnavailable``: the
question fails to run, ``--resume`` runs it again).

Example:
    >>> import tempfile
    >>> store = RecordingStore.open(tempfile.mkdtemp(), "record")
    >>> store.put("kb", "demo", {"query": "ASK {}"}, {"boolean": True})
    True
    >>> store.get("kb", {"query": "ASK {}"}), store.get("kb", {"query": "ASK { ?s ?p ?o }"})
    ({'boolean': True}, None)
    >>> store.counts()
    {'kb': 1}
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import sqlite3
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from pyql.errors import RecordingDamaged, RecordingError, RecordingUnavailable

__all__ = ["RECORDING_FILE", "CACHE_FILE", "RecordingStore", "canonical_json", "request_key", "store_file"]

#: The file name of a recording in its directory.
RECORDING_FILE = "recording.sqlite"
#: The file name of a KB cache in its directory.
CACHE_FILE = "kb-cache.sqlite"
#: What the ``format`` meta row of every pyql store says.
FORMAT = "pyql-recording"
#: The version of the tables below.
VERSION = "1"
#: Pages of the write-ahead log between two checkpoints (each syncs the log and the file): 64 MB of 4 KB pages.
CHECKPOINT_PAGES = 16384
#: The modes a store opens in: what each writes and answers (``inspect``: read-only, a recording or a cache).
MODES = ("record", "replay", "cache", "inspect")
_PURPOSE = {"record": "recording", "replay": "recording", "cache": "kb-cache", "inspect": None}
_FLAG = {"record": "--record", "replay": "--replay", "cache": "--kb-cache", "inspect": "pyql recording info"}
_READ_ONLY = ("replay", "inspect")
#: SQLite's errors that mean the file itself is damaged (any other failure to read or write is the moment's).
_DAMAGE = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
#: The text columns of each table, all checked to be UTF-8 when a store is opened.
_TEXT_COLUMNS = {
    "meta": ("name", "value"),
    "entries": ("key", "kind", "subject", "request", "response", "created"),
    "names": ("kind", "name", "value"),
}
T = TypeVar("T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, kind TEXT NOT NULL, subject TEXT NOT NULL, "
    "request TEXT NOT NULL, response TEXT NOT NULL, seconds REAL NOT NULL DEFAULT 0, created TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS names (kind TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
    "PRIMARY KEY (kind, name))",
)


def canonical_json(value: Any) -> str:
    """The one JSON text of a value: sorted keys, no spaces, Unicode kept (a lone surrogate, which UTF-8 cannot hold,
    written as its ``\\u`` escape: SQLite and the key's hash take the text as UTF-8).

    Example:
        >>> canonical_json({"b": [1, 2], "a": "é"})
        '{"a":"é","b":[1,2]}'
        >>> canonical_json({"a": "x" + chr(0xD800)})
        '{"a":"x\\\\ud800"}'
    """
    return _utf8_json(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False))


def _utf8_json(text: str) -> str:
    """A JSON text as it is, or, when it holds a lone surrogate (not UTF-8), the same JSON with every surrogate escaped."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return re.sub(r"[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def request_key(kind: str, request: Mapping[str, Any] | str) -> str:
    """The content address of a request: sha256 of its kind, a line break and its canonical JSON.

    Example:
        >>> request_key("kb", {"query": "ASK {}"}) == request_key("kb", '{"query":"ASK {}"}')
        True
        >>> len(request_key("kb", {"query": "ASK {}"}))
        64
    """
    text = request if isinstance(request, str) else canonical_json(request)
    return hashlib.sha256(f"{kind}\n{text}".encode("utf-8")).hexdigest()


def store_file(path: str | Path, mode: str) -> Path:
    """The SQLite file a ``--record``/``--replay``/``--kb-cache`` argument names.

    A directory holds ``recording.sqlite`` (``kb-cache.sqlite`` for a cache);
    a path that is a file (or ends in ``.sqlite``) is the file itself, so a
    published recording can be given as it is.

    Example:
        >>> store_file("runs/rec", "record").as_posix(), store_file("rec.sqlite", "replay").as_posix()
        ('runs/rec/recording.sqlite', 'rec.sqlite')
    """
    given = Path(path)
    if given.is_file() or given.suffix in (".sqlite", ".db"):
        return given
    if mode == "inspect" and not (given / RECORDING_FILE).exists() and (given / CACHE_FILE).exists():
        return given / CACHE_FILE
    return given / (CACHE_FILE if mode == "cache" else RECORDING_FILE)


class RecordingStore:
    """One recording or KB cache file, shared by every thread of the process.

    Open it with :meth:`open`. :meth:`get` and :meth:`put` are safe from
    several threads (one connection, a lock) and several processes (WAL, a
    busy time-out); :attr:`stats` counts hits, misses and writes per kind.

    Attributes:
        path: the SQLite file.
        mode: ``record``, ``replay`` or ``cache``.
        stats: ``{kind: Counter(hits=, misses=, writes=)}``.
    """

    def __init__(self, path: Path, mode: str, connection: sqlite3.Connection) -> None:
        self.path = path
        self.mode = mode
        self._db = connection
        self._lock = threading.Lock()
        self.stats: dict[str, Counter[str]] = {}
        self._written: set[str] = set()  # keys this process wrote: a duplicate costs no transaction
        self.damage: str | None = None  # what was found damaged while running: every later read says it again

    # -- opening -------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, mode: str) -> RecordingStore:
        """Open (``replay``) or open-or-create (``record``, ``cache``) the store ``path`` names.

        Raises:
            RecordingError: an unknown mode; for replay, no such file; a file
                that is not an SQLite database, is corrupt or truncated, is
                not a pyql store of this version, or is the other kind
                (a KB cache given as a recording, or the reverse).

        Example:
            >>> import tempfile, pathlib
            >>> bad = pathlib.Path(tempfile.mkdtemp()) / "recording.sqlite"
            >>> _ = bad.write_text("hello")
            >>> RecordingStore.open(bad.parent, "replay")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            pyql.errors.RecordingError: --replay .../recording.sqlite is not a pyql recording: not an SQLite database...
        """
        if mode not in MODES:
            raise RecordingError(f"unknown recording mode {mode!r}; use one of {', '.join(MODES)}")
        file = store_file(path, mode)
        flag = _FLAG[mode]
        if mode in _READ_ONLY and not file.is_file():
            raise RecordingError(f"{flag} {path}: no recording at {file} (record one with --record DIR)")
        if mode not in _READ_ONLY:
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise RecordingError(f"{flag} {path}: cannot create the directory {file.parent}: {exc.strerror or exc}") from None
        connection = _connect(file, mode)
        try:
            _check_or_create(connection, file, mode)
        except BaseException:
            connection.close()
            raise
        return cls(file, mode, connection)

    def close(self) -> None:
        """Write the log back into the file (a recording is then one self-contained file) and close."""
        with self._lock:
            try:
                if self.mode not in _READ_ONLY:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass  # another process holds the log; it checkpoints it
            self._db.close()

    def __enter__(self) -> RecordingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- entries -------------------------------------------------------------
    def get(self, kind: str, request: Mapping[str, Any], decode: Callable[[Any], T] | None = None) -> Any | None:
        """The recorded answer to a request (None when there is none), counted as a hit or a miss.

        Args:
            decode: turns the answer's JSON into what the caller uses; a
                :class:`RecordingError` it raises means the entry is damaged.

        Raises:
            RecordingDamaged: the entry is not JSON (or ``decode`` refused it), or the file was found damaged before.
            RecordingUnavailable: the file could not be read just now.
        """
        key = request_key(kind, request)
        with self._lock:
            row = self._read("SELECT response FROM entries WHERE key = ?", (key,), one=True)
            self._count(kind, "hits" if row is not None else "misses")
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except json.JSONDecodeError as exc:
            raise self.damaged(f"the entry {key[:12]} ({kind}) is not JSON ({exc.msg})") from None
        if decode is None:
            return value
        try:
            return decode(value)
        except RecordingError as exc:
            raise self.damaged(f"the entry {key[:12]} ({kind}) is not what pyql writes: {exc}") from None

    def put(self, kind: str, subject: str, request: Mapping[str, Any], response: Any, seconds: float = 0.0) -> bool:
        """Keep one answer, in its own transaction; False when the request was already there (the first answer stays).

        Raises:
            RecordingError: a replay store (read-only).
            RecordingUnavailable: the file cannot be written just now (a full disk, an I/O error, a lock).
            RecordingDamaged: the file was found damaged.
        """
        if self.mode in _READ_ONLY:
            raise RecordingError(f"{self.path} is open read-only ({_FLAG[self.mode]}) and is not written")
        text = canonical_json(request)
        key = request_key(kind, text)
        with self._lock:
            if key in self._written:
                self._count(kind, "duplicates")
                return False
        try:
            answer = _answer_json(response)
        except ValueError as exc:  # NaN or an infinity: no JSON holds it, so the answer cannot be kept (nor used)
            raise RecordingUnavailable(f"{_FLAG[self.mode]} {self.path}: cannot keep the answer: {exc}") from None
        row = (key, kind, _utf8_json(subject), text, answer, float(seconds), _now())
        with self._lock:
            if self.damage is not None:
                raise RecordingDamaged(self.damage)
            cursor = self._write("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            self._written.add(key)
            self._count(kind, "writes" if cursor.rowcount else "duplicates")
        return bool(cursor.rowcount)

    def request_values(self, kind: str, field: str) -> list[Any]:
        """The distinct values one top-level field of the recorded requests of a kind has (absent: not listed).

        What a replay's miss compares its request with: the settings the
        recording's calls were made with (``temperature``, ``model`` ...).

        Example:
            >>> import tempfile
            >>> with RecordingStore.open(tempfile.mkdtemp(), "record") as store:
            ...     _ = store.put("llm", "m", {"temperature": 0.0, "stop": ["Obs"], "prompt": "a"}, "x")
            ...     _ = store.put("llm", "m", {"temperature": 0.0, "stop": ["Obs"], "prompt": "b"}, "y")
            ...     store.request_values("llm", "temperature"), store.request_values("llm", "stop")
            ([0.0], [['Obs']])
        """
        sql = ("SELECT DISTINCT f.type, f.value FROM entries, json_each(entries.request) AS f "
               "WHERE entries.kind = ? AND f.key = ? ORDER BY f.type, f.value")
        with self._lock:
            rows = self._read(sql, (kind, field))
        return [_json_each_value(kind_of, value) for kind_of, value in rows]

    def name(self, kind: str, name: str, value: str | None = None) -> str | None:
        """Read (``value`` None) or set a named value: a KB spec's identity, a model's resolved name.

        Example:
            >>> import tempfile
            >>> s = RecordingStore.open(tempfile.mkdtemp(), "record")
            >>> s.name("kb-spec", "demo", '{"file": "..."}'); s.name("kb-spec", "demo"), s.name("kb-spec", "x")
            ('{"file": "..."}', None)
        """
        with self._lock:
            if value is None or self.mode in _READ_ONLY:
                row = self._read("SELECT value FROM names WHERE kind = ? AND name = ?", (kind, name), one=True)
                return None if row is None else str(row[0])
            self._write("INSERT OR REPLACE INTO names VALUES (?, ?, ?)", (kind, name, value))
        return None

    def merge(self, source: RecordingStore) -> dict[str, int]:
        """Copy another store's entries and names into this one (the recordings of a run's shards: ``pyql recording merge``).

        One transaction per thousand entries. An entry this store has stays
        (a request keeps its first answer, as in a recording); ``conflicts``
        counts the requests the two answered differently (a replay of the
        other's run may then differ). Returns ``{"added", "kept", "conflicts"}``.

        Raises:
            RecordingError: this store is read-only, or either file cannot be read or written.

        Example:
            >>> import tempfile
            >>> a, b = RecordingStore.open(tempfile.mkdtemp(), "record"), RecordingStore.open(tempfile.mkdtemp(), "record")
            >>> _ = a.put("kb", "demo", {"query": "ASK {}"}, {"boolean": True}); _ = b.put("kb", "demo", {"query": "ASK {}"}, {"boolean": False})
            >>> _ = b.put("llm", "m", {"prompt": "Q"}, {"text": "A"})
            >>> a.merge(b), a.counts()
            ({'added': 1, 'kept': 1, 'conflicts': 1}, {'kb': 1, 'llm': 1})
        """
        if self.mode in _READ_ONLY:
            raise RecordingError(f"{self.path} is open read-only ({_FLAG[self.mode]}) and is not written")
        counts = {"added": 0, "kept": 0, "conflicts": 0}
        with source._lock:
            rows = source._query("SELECT key, kind, subject, request, response, seconds, created FROM entries", ())
            names = source._query("SELECT kind, name, value FROM names", ()).fetchall()
            while chunk := rows.fetchmany(1000):
                with self._lock:
                    marks = ",".join("?" * len(chunk))
                    had = dict(self._query(f"SELECT key, response FROM entries WHERE key IN ({marks})", tuple(r[0] for r in chunk)))
                    self._insert_all(chunk)
                counts["kept"] += len(had)
                counts["added"] += len(chunk) - len(had)
                counts["conflicts"] += sum(1 for r in chunk if r[0] in had and had[r[0]] != r[4])
        with self._lock:
            for kind, name, value in names:
                self._write("INSERT OR IGNORE INTO names VALUES (?, ?, ?)", (kind, name, value))
        return counts

    def _insert_all(self, rows: list[Any]) -> None:
        """Insert entry rows (those whose key is here are left), all or none, in one transaction."""
        try:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise RecordingError(f"{_FLAG[self.mode]} {self.path}: cannot write it: {exc}") from None

    # -- inspecting ------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The meta rows: ``format``, ``version``, ``purpose``, ``id``, ``created``, ``pyql``."""
        with self._lock:
            return {str(k): str(v) for k, v in self._read("SELECT name, value FROM meta", ())}

    def counts(self) -> dict[str, int]:
        """Entries per kind (``kb``, ``llm``, ``score``)."""
        with self._lock:
            rows = self._read("SELECT kind, COUNT(*) FROM entries GROUP BY kind ORDER BY kind", ())
        return {str(kind): int(n) for kind, n in rows}

    def subjects(self, kind: str) -> dict[str, int]:
        """Entries per subject of one kind: per KB identity (``kb``), per model (``llm``, ``score``)."""
        with self._lock:
            rows = self._read("SELECT subject, COUNT(*) FROM entries WHERE kind = ? GROUP BY subject ORDER BY subject", (kind,))
        return {str(subject): int(n) for subject, n in rows}

    def names(self, kind: str) -> dict[str, str]:
        """Every named value of one kind (``kb-spec``: spec → identity; ``model``: requested → resolved)."""
        with self._lock:
            rows = self._read("SELECT name, value FROM names WHERE kind = ? ORDER BY name", (kind,))
        return {str(n): str(v) for n, v in rows}

    def fingerprint(self) -> str:
        """The content fingerprint: sha256 over every entry's key and answer, in key order.

        Two stores with the same entries have the same fingerprint, whatever
        the order they were written in.
        """
        digest = hashlib.sha256()
        with self._lock:
            try:
                for key, response in self._db.execute("SELECT key, response FROM entries ORDER BY key"):
                    digest.update(f"{key}\t{response}\n".encode("utf-8"))
            except sqlite3.Error as exc:
                raise self._read_error(exc) from None
        return digest.hexdigest()

    def provenance(self) -> dict[str, Any]:
        """What a run file and its summary say about this store: mode, file, id, entries, this run's counters.

        Example:
            >>> import tempfile
            >>> sorted(RecordingStore.open(tempfile.mkdtemp(), "cache").provenance())
            ['entries', 'file', 'fingerprint', 'id', 'mode', 'stats']
        """
        with self._lock:
            stats = {kind: dict(sorted(c.items())) for kind, c in sorted(self.stats.items())}
        return {
            "mode": self.mode,
            "file": str(self.path),
            "id": self.meta().get("id"),
            "fingerprint": self.fingerprint(),
            "entries": self.counts(),
            "stats": stats,
        }

    def describe(self) -> dict[str, Any]:
        """Everything ``pyql recording info`` shows: the meta rows, the fingerprint, the entries per kind,
        the KB identities and the models with their entry counts, and the names given to them.

        Example:
            >>> import tempfile
            >>> s = RecordingStore.open(tempfile.mkdtemp(), "record")
            >>> _ = s.put("llm", "gpt-x", {"prompt": "Q"}, {"text": "A"})
            >>> d = s.describe(); (d["entries"], d["models"])
            ({'llm': 1}, {'gpt-x': 1})
        """
        meta = self.meta()
        return {
            "file": str(self.path),
            "purpose": meta.get("purpose"),
            "id": meta.get("id"),
            "created": meta.get("created"),
            "pyql": meta.get("pyql"),
            "fingerprint": self.fingerprint(),
            "entries": self.counts(),
            "kbs": self.subjects("kb"),
            "kb_specs": self.names("kb-spec"),
            "models": self.subjects("llm"),
            "models_asked": self.names("model"),
            "scorers": self.subjects("score"),
        }

    # -- internals ---------------------------------------------------------------
    def _count(self, kind: str, what: str) -> None:
        self.stats.setdefault(kind, Counter())[what] += 1

    def _read(self, sql: str, params: tuple[Any, ...], *, one: bool = False) -> Any:
        """The rows of a query (``one``: the first row or None), read in full here, where a bad text shows."""
        if self.damage is not None:
            raise RecordingDamaged(self.damage)
        try:
            cursor = self._db.execute(sql, params)
            return cursor.fetchone() if one else cursor.fetchall()
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None
        except UnicodeEncodeError as exc:  # a name asked for that UTF-8 cannot hold: no entry has it
            raise RecordingUnavailable(f"{_FLAG[self.mode]} {self.path}: cannot look it up: {exc}") from None

    def _query(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """A cursor over a query's rows, read a chunk at a time (:meth:`merge`); errors as :meth:`_read` says them.

        The texts were checked when the file was opened (:meth:`open`), so a chunk read later decodes.
        """
        if self.damage is not None:
            raise RecordingDamaged(self.damage)
        try:
            return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None

    def _read_error(self, exc: sqlite3.Error) -> RecordingError:
        """A failed read: the file damaged (an invalid text, SQLite's corruption), or the moment's failure."""
        if _is_damage(exc) or "decode" in str(exc).lower():
            return self.damaged(f"cannot read it: {exc}")
        return RecordingUnavailable(f"{_FLAG[self.mode]} {self.path}: cannot read it just now: {exc}")

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        try:  # autocommit: the one statement is its own transaction, committed (or not at all) when it returns
            return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            if _is_damage(exc):
                raise self.damaged(f"cannot write it: {exc}") from None
            raise RecordingUnavailable(f"{_FLAG[self.mode]} {self.path}: cannot write it: {exc}") from None
        except UnicodeEncodeError as exc:  # a text UTF-8 cannot hold (a lone surrogate in a name)
            raise RecordingUnavailable(f"{_FLAG[self.mode]} {self.path}: cannot write it: {exc}") from None

    def damaged(self, what: str) -> RecordingDamaged:
        """The error of a damaged file (naming the file and what is damaged), kept: every later read and write raises it too.

        Example:
            >>> import tempfile
            >>> s = RecordingStore.open(tempfile.mkdtemp(), "cache")
            >>> str(s.damaged("the entry ab12 (kb) is not JSON")).split(": ", 1)[1][:60]
            'the entry ab12 (kb) is not JSON; the file is damaged: restor'
            >>> s.get("kb", {"query": "ASK {}"})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            pyql.errors.RecordingDamaged: --kb-cache .../kb-cache.sqlite: the entry ab12 (kb) is not JSON; ...
        """
        self.damage = self.damage or (
            f"{_FLAG[self.mode]} {self.path}: {what}; the file is damaged: restore it, or record it again"
        )
        return RecordingDamaged(self.damage)


def _json_each_value(json_type: str, value: Any) -> Any:
    """A value of SQLite's ``json_each`` as Python has it (an array or object comes as its JSON text).

    Example:
        >>> _json_each_value("array", '["a"]'), _json_each_value("true", 1), _json_each_value("real", 0.5)
        (['a'], True, 0.5)
    """
    if json_type in ("array", "object"):
        return json.loads(value)
    if json_type in ("true", "false"):
        return json_type == "true"
    return value


def _is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite's error says the file itself is damaged (not a full disk, a lock, an I/O error)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(_DAMAGE) or "malformed" in str(exc) or "not a database" in str(exc)


def _answer_json(value: Any) -> str:
    """An answer's JSON: compact, Unicode kept, keys in the order they were built (see the module docstring).

    Example:
        >>> _answer_json({"rows": [{"x": 1, "a": "é"}]})
        '{"rows":[{"x":1,"a":"é"}]}'
    """
    return _utf8_json(json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _connect(file: Path, mode: str) -> sqlite3.Connection:
    """A connection to the file: read-only for replay; WAL and a busy time-out for writers."""
    try:
        if mode in _READ_ONLY:
            connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False, timeout=30)
        else:
            # autocommit (isolation_level None): each write is one statement, its own transaction
            connection = sqlite3.connect(str(file), check_same_thread=False, timeout=30, isolation_level=None)
        connection.execute("PRAGMA busy_timeout = 30000")
    except sqlite3.Error as exc:
        raise RecordingError(f"{_FLAG[mode]} {file}: cannot open it: {exc}") from None
    return connection


def _check_or_create(db: sqlite3.Connection, file: Path, mode: str) -> None:
    """Check an existing store (SQLite, intact, pyql's, this version and kind); create the tables of a new one.

    Raises:
        RecordingError: the file is anything else (see :meth:`RecordingStore.open`).
    """
    flag, purpose = _FLAG[mode], _PURPOSE[mode]
    what = f"{flag} {file} is not a pyql {(purpose or 'recording').replace('kb-cache', 'KB cache')}"
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        check = db.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise RecordingError(f"{what}: not an SQLite database, or a damaged one ({exc})") from None
    if check is None or check[0] != "ok":
        raise RecordingError(f"{what}: the database is damaged or truncated ({check[0] if check else 'no answer'})")
    if not tables and purpose is not None and mode not in _READ_ONLY:
        _create(db, purpose, file, flag)
        return
    if "meta" not in tables:
        found = ", ".join(sorted(tables)) or "no table"
        raise RecordingError(f"{what}: an SQLite database of another program (tables: {found})")
    _check_texts(db, file, flag, ("meta",))
    meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
    if meta.get("format") != FORMAT:
        raise RecordingError(f"{what}: its format is {meta.get('format')!r}, not {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise RecordingError(f"{what} of version {VERSION}: it is of version {meta.get('version')!r}; record it again")
    if purpose is not None and meta.get("purpose") != purpose:
        other = "--kb-cache" if meta.get("purpose") == "kb-cache" else "--record/--replay"
        raise RecordingError(f"{what}: it is a {meta.get('purpose')} (give it to {other})")
    if not {"entries", "names"} <= tables:
        raise RecordingError(f"{what}: its tables are incomplete ({', '.join(sorted(tables))})")
    _check_texts(db, file, flag, ("entries", "names"))
    if mode not in _READ_ONLY:
        _tune(db)


def _utf8(data: bytes | None) -> bool:
    """Whether a cell's bytes are UTF-8 (an SQL function of the check; NULL is fine).

    Example:
        >>> _utf8("é".encode()), _utf8(b'{"\\xff"'), _utf8(None)
        (True, False, True)
    """
    if data is None:
        return True
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _check_texts(db: sqlite3.Connection, file: Path, flag: str, tables: tuple[str, ...]) -> None:
    """Every text of ``tables`` is UTF-8, and every entry's request and answer JSON (one pass, in SQLite).

    Raises:
        RecordingDamaged: the first row that is not, named (an entry by its key and kind, another row by its table).
    """
    damaged = f"{flag} {file}: the file is damaged (restore it, or record it again):"
    try:
        db.create_function("pyql_utf8", 1, _utf8, deterministic=True)
        for table in tables:
            columns = _TEXT_COLUMNS[table]
            test = " OR ".join(f"NOT pyql_utf8(CAST({c} AS BLOB))" for c in columns)
            row = db.execute(f"SELECT CAST({columns[0]} AS BLOB), {len(columns)} FROM {table} WHERE {test} LIMIT 1").fetchone()
            if row is not None:
                name = bytes(row[0] or b"").decode("utf-8", errors="replace")
                where = f"the entry {name[:12]}" if table == "entries" else f"the {table} row {name[:40]!r}"
                raise RecordingDamaged(f"{damaged} {where} holds text that is not UTF-8")
        if "entries" in tables:
            bad = "SELECT key, kind, json_valid(request) FROM entries WHERE NOT json_valid(request) OR NOT json_valid(response) LIMIT 1"
            row = db.execute(bad).fetchone()
            if row is not None:
                part = "a request" if not row[2] else "an answer"
                raise RecordingDamaged(f"{damaged} the entry {str(row[0])[:12]} ({row[1]}) has {part} that is not JSON")
    except sqlite3.OperationalError as exc:
        if "json_valid" not in str(exc):  # an SQLite without its JSON functions: each entry is checked when read
            raise RecordingError(f"{flag} {file}: cannot check it: {exc}") from None


def _create(db: sqlite3.Connection, purpose: str, file: Path, flag: str) -> None:
    """The tables and meta rows of a new store, in WAL mode, in one transaction."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("pyql")
    except PackageNotFoundError:  # run from a source tree that was never installed
        __version__ = "unknown"

    try:
        db.execute("PRAGMA journal_mode = WAL")
        _tune(db)
        db.execute("BEGIN")
        for statement in _SCHEMA:
            db.execute(statement)
        rows = {"format": FORMAT, "version": VERSION, "purpose": purpose, "id": uuid.uuid4().hex,
                "created": _now(), "pyql": str(__version__)}
        db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", sorted(rows.items()))
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        raise RecordingError(f"{flag} {file}: cannot create it: {exc}") from None


def _tune(db: sqlite3.Connection) -> None:
    """A writer's settings (see the module docstring): the log unsynced at commits, synced at checkpoints."""
    db.execute("PRAGMA synchronous = NORMAL")  # with WAL: a killed process loses no committed entry
    db.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
