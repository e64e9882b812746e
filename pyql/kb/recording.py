"""Recording, replaying and caching the queries a KB answers (``--record``, ``--replay``, ``--kb-cache``).

A :class:`RecordedKB` is a KB whose engine is a :class:`~pyql.recording_store.RecordingStore`
in front of another KB: every SELECT and ASK it is sent (the one boundary
of every backend, :meth:`KB._select <pyql.kb.base.KB._select>` /
``_ask``; observations, relations and labels are built on top of them) is
keyed by its text and the KB's identity (:func:`kb_identity`):

* ``record``: the inner KB answers, and the answer (or its engine error:
  a rejected or timed-out query, not an unreachable KB) is kept;
* ``replay``: the store answers, and there is no inner KB at all (nothing
  is opened, no file read, no connection made); a query it does not hold
  is a :class:`~pyql.errors.ReplayMiss` (the question fails to run);
* ``cache``: the store answers when it can, else the inner KB, whose
  answer is kept for the next run (engine errors are not kept).

:func:`recorded_kbs` installs an opener so that every :meth:`KB.open
<pyql.kb.base.KB.open>` of a command goes through one store (the CLI does
it for ``run``, ``ask`` and ``eval``).

A KB's identity is what its answers depend on: an endpoint's URL (a
password in it written ``***``: a recording is published, and the answers
do not depend on the password) and default graph; a file's content (sha256) and the engine that reads it; an
on-disk store's manifest (the files loaded into it). A changed file or
store is another identity, so a cache is never used for other data; an
endpoint's data changing behind its URL is not seen (clear the cache).

Example:
    >>> import tempfile
    >>> from pyql.recording_store import RecordingStore
    >>> from pyql.kb import KB
    >>> directory = tempfile.mkdtemp()
    >>> with RecordingStore.open(directory, "record") as store, recorded_kbs(store):
    ...     KB.open("demo").relations("m.0crbvqz").forward[:1]
    ('meteorology.tropical_cyclone.category',)
    >>> with RecordingStore.open(directory, "replay") as store, recorded_kbs(store):
    ...     kb = KB.open("demo")
    ...     (kb.relations("m.0crbvqz").forward[:1], kb.name)
    (('meteorology.tropical_cyclone.category',), 'replay')
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyql.errors as errors
import pyql.kb.base as base
from pyql.echo import one_line, redact_credentials
from pyql.errors import EngineError, EngineUnavailable, RecordingError, RecordingUnavailable, ReplayMiss
from pyql.kb.base import KB, set_opener
from pyql.kb.opening import demo_kb_path, open_kb
from pyql.kb.registry import kb_backends
from pyql.builder.profiles import Profile
from pyql.recording_store import RecordingStore, canonical_json
from pyql.builder.terms import IRI, BlankNode, Literal, Term

__all__ = ["RecordedKB", "kb_identity", "recorded_kbs", "encode_rows", "decode_rows"]

#: The options of :class:`~pyql.kb.base.KB` itself (the rest are a backend's, e.g. an endpoint's time-out).
KB_SETTINGS = tuple(p for p in inspect.signature(KB.__init__).parameters if p not in ("self", "profile"))

_HASHED: dict[tuple[str, int, int], str] = {}
#: The PREFIX lines a miss message leaves out (the query's own text is what tells it apart).
_PREFIXES = re.compile(r"^\s*(?:PREFIX\s+[\w-]*:\s*<[^>]*>\s*)+", re.IGNORECASE)


def file_fingerprint(path: str | Path) -> str:
    """The sha256 of a file's content (kept per path, size and modification time for the process).

    Example:
        >>> len(file_fingerprint(demo_kb_path()))
        64
    """
    p = Path(path).resolve()
    stat = p.stat()
    memo = (str(p), stat.st_size, stat.st_mtime_ns)
    if memo not in _HASHED:
        digest = hashlib.sha256()
        with p.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _HASHED[memo] = digest.hexdigest()
    return _HASHED[memo]


def _directory_fingerprint(path: Path) -> str:
    """An on-disk store's fingerprint: its manifest (the files loaded, their sizes and times), else its files' names and sizes."""
    manifest = path / "pyql-store.json"
    if manifest.is_file():
        return file_fingerprint(manifest)
    listing = sorted((str(f.relative_to(path)), f.stat().st_size) for f in path.rglob("*") if f.is_file())
    return hashlib.sha256(canonical_json(listing).encode("utf-8")).hexdigest()


def kb_identity(spec: object, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a KB's answers depend on, as JSON: the key of its recorded queries.

    Raises:
        RecordingError: a KB object handed in (not a spec), whose data cannot be named.

    Example:
        >>> kb_identity("http://127.0.0.1:8890/sparql", {"default_graph": "http://freebase.com"})
        {'endpoint': 'http://127.0.0.1:8890/sparql', 'default_graph': 'http://freebase.com'}
        >>> sorted(kb_identity("demo"))
        ['engine', 'sha256']
    """
    options = options or {}
    entry = kb_backends.backend_for(spec)
    if entry is None or not isinstance(spec, (str, os.PathLike)):
        raise RecordingError(
            f"a KB given as a {type(spec).__name__} object cannot be recorded or cached (its data has no name): "
            "open it from a spec (a file, oxigraph:DIR, an endpoint URL)"
        )
    text = str(spec)
    if "default_graph" in entry.options:
        return {"endpoint": redact_credentials(text), "default_graph": options.get("default_graph")}  # never a password
    argument = str(entry.argument(text))
    engine = {"demo": "FILE", "oxigraph:DIR": "FILE"}.get(entry.form, entry.form)
    if entry.form == "demo" or argument == "demo":
        return {"engine": engine, "sha256": file_fingerprint(demo_kb_path())}
    if entry.per_question and "#" in argument and not Path(argument).is_file():  # one question's KB (subgraphs:FILE#ID)
        file, _, question = argument.rpartition("#")
        if Path(file).is_file():
            return {"engine": engine, "sha256": file_fingerprint(file), "question": question}
    target = Path(argument)
    if argument in ("", ":memory:"):
        return {"engine": engine, "store": "empty"}
    if target.is_file():
        return {"engine": engine, "sha256": file_fingerprint(target)}
    if target.is_dir():
        return {"engine": "oxigraph:DIR" if entry.form == "oxigraph:DIR" else engine, "store": _directory_fingerprint(target)}
    return {"engine": engine, "spec": text}  # not there: opening it fails with the backend's own message


def encode_rows(rows: list[dict[str, Term]] | bool) -> Any:
    """A SELECT's rows (or an ASK's answer) as JSON: each term a short list.

    Example:
        >>> encode_rows([{"x": IRI("http://a"), "n": Literal("5", "http://www.w3.org/2001/XMLSchema#integer")}])
        [{'n': ['l', '5', 'http://www.w3.org/2001/XMLSchema#integer', None], 'x': ['i', 'http://a']}]
    """
    if isinstance(rows, bool):
        return {"boolean": rows}
    return [{name: _encode_term(term) for name, term in sorted(row.items())} for row in rows]


def decode_rows(data: Any) -> list[dict[str, Term]] | bool:
    """The rows (or the boolean) :func:`encode_rows` wrote.

    Raises:
        RecordingError: the JSON is not what :func:`encode_rows` writes (a damaged or foreign entry).

    Example:
        >>> decode_rows([{"x": ["i", "http://a"], "b": ["b", "b0"]}])
        [{'x': IRI('http://a'), 'b': BlankNode(id='b0')}]
    """
    try:
        if isinstance(data, dict):
            if not isinstance(data["boolean"], bool):
                raise TypeError(f"the boolean is {data['boolean']!r}")
            return data["boolean"]
        if not isinstance(data, list):
            raise TypeError(f"the rows are a {type(data).__name__}")
        return [{str(name): _decode_term(cell) for name, cell in row.items()} for row in data]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise RecordingError(f"a recorded KB answer is not in pyql's form ({type(exc).__name__}: {exc})") from None


def _encode_term(term: Term) -> list[Any]:
    if isinstance(term, IRI):
        return ["i", term.value]
    if isinstance(term, BlankNode):
        return ["b", term.id]
    if isinstance(term, Literal):
        return ["l", term.lexical, term.datatype, term.lang]
    raise RecordingUnavailable(f"a KB answered a {type(term).__name__} ({term}), which a recording cannot keep")


def _decode_term(cell: list[Any]) -> Term:
    tag = cell[0]
    if tag == "i":
        return IRI(str(cell[1]))
    if tag == "b":
        return BlankNode(str(cell[1]))
    if tag == "l":
        return Literal(str(cell[1]), cell[2], cell[3])
    raise ValueError(f"unknown term tag {tag!r}")


class RecordedKB(KB):
    """A KB answered through a store: recorded, replayed or cached (see the module docstring).

    Args:
        store: the recording or cache.
        identity: the KB's identity (:func:`kb_identity`).
        inner: the KB that answers (None for a replay).
        profile: the profile (the inner KB's when there is one).
        **settings: :class:`~pyql.kb.base.KB` settings (``count_cap``, ``per_variable`` ...).
    """

    def __init__(self, store: RecordingStore, identity: dict[str, Any], inner: KB | None,
                 profile: str | Profile = "freebase", **settings: Any) -> None:
        if inner is not None:
            profile = inner.profile
            settings = {name: getattr(inner, name) for name in KB_SETTINGS}
        super().__init__(profile, **{k: v for k, v in settings.items() if k in KB_SETTINGS})
        self.store = store
        self.identity = identity
        self.subject = canonical_json(identity)
        self.inner = inner
        self.name = inner.name if inner is not None else "replay"

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        return self._answer("select", sparql)  # type: ignore[return-value]

    def _ask(self, sparql: str) -> bool:
        return bool(self._answer("ask", sparql))

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()

    def _answer(self, form: str, sparql: str) -> list[dict[str, Term]] | bool:
        request = {"kb": self.identity, "form": form, "query": sparql}
        mode = self.store.mode
        if mode != "record":
            found = self.store.get("kb", request, decode=_recorded_answer)
            if found is not None:
                return _replayed(found, sparql)
            if mode == "replay" or self.inner is None:
                raise ReplayMiss(
                    f"the {form.upper()} query is not in the recording {self.store.path} "
                    f"(KB {one_line(self.subject, 120)}): {one_line(_PREFIXES.sub('', sparql), 200)}",
                    query=sparql,
                )
        assert self.inner is not None
        run = self.inner._select if form == "select" else self.inner._ask
        start = time.perf_counter()
        try:
            result = run(sparql)
        except EngineError as exc:
            if mode == "record" and not isinstance(exc, EngineUnavailable):  # the service's failure, not the query's
                error = {"class": type(exc).__name__, "message": str(exc)}
                self.store.put("kb", self.subject, request, {"error": error}, time.perf_counter() - start)
            raise
        self.store.put("kb", self.subject, request, encode_rows(result), time.perf_counter() - start)
        return result


def _recorded_answer(data: Any) -> list[dict[str, Term]] | bool | dict[str, str]:
    """A recorded KB answer as kept: its rows or boolean (:func:`decode_rows`), or its engine error ``{"class", "message"}``.

    Raises:
        RecordingError: neither (the store names the entry as damaged).

    Example:
        >>> _recorded_answer({"error": {"class": "EngineError", "message": "rejected"}})
        {'class': 'EngineError', 'message': 'rejected'}
        >>> _recorded_answer({"error": "rejected"})
        Traceback (most recent call last):
        ...
        pyql.errors.RecordingError: a recorded KB error is not {"class", "message"}: 'rejected'
    """
    if isinstance(data, dict) and "error" in data:
        error = data["error"]
        if not (isinstance(error, dict) and isinstance(error.get("class"), str) and isinstance(error.get("message"), str)):
            raise RecordingError(f'a recorded KB error is not {{"class", "message"}}: {one_line(repr(error), 80)}')
        return dict(error)
    return decode_rows(data)


def _replayed(found: list[dict[str, Term]] | bool | dict[str, str], sparql: str) -> list[dict[str, Term]] | bool:
    """A recorded answer (:func:`_recorded_answer`): the rows, or the recorded engine error raised again."""
    if isinstance(found, dict):
        cls = getattr(errors, found["class"], None)
        if not (isinstance(cls, type) and issubclass(cls, EngineError)) or issubclass(cls, EngineUnavailable):
            cls = EngineError  # what a recording keeps is the query's error (an unavailable engine is never kept)
        raise cls(found["message"], query=sparql)
    return found


def open_recorded(store: RecordingStore, spec: object, profile: str | Profile = "freebase",
                  inner_opener: Any = open_kb, **options: Any) -> KB:
    """Open ``spec`` through ``store``: the inner KB wrapped (record, cache), or none at all (replay).

    In a replay the identity of a spec is the one the recording gave it
    (the file may be gone); a spec the recording does not name gets the
    identity of what it names now, and its queries miss unless that matches.

    Raises:
        RecordingError: a KB object instead of a spec.
        pyql.errors.KBError: the inner KB does not open (record, cache).

    Example:
        >>> import tempfile
        >>> store = RecordingStore.open(tempfile.mkdtemp(), "cache")
        >>> kb = open_recorded(store, "demo")
        >>> kb.has_entity("m.0crbvqz"), store.stats["kb"]["misses"], open_recorded(store, "demo").has_entity("m.0crbvqz")
        (True, 1, True)
        >>> store.stats["kb"]["hits"]
        1
    """
    key = redact_credentials(str(spec)) if isinstance(spec, (str, os.PathLike)) else None  # the file is published
    if store.mode == "replay":
        recorded = store.name("kb-spec", key) if key is not None else None
        identity = _recorded_identity(store, key, recorded) if recorded else kb_identity(spec, options)
        entry = kb_backends.backend_for(spec)
        if entry is not None and entry.profile_of is not None:  # the profile the form's KBs have (subgraphs: sg: names)
            profile = entry.profile_of(profile)
        return RecordedKB(store, identity, None, profile, **options)
    identity = kb_identity(spec, options)
    inner = inner_opener(spec, profile, **options)
    if store.mode == "record" and key is not None:
        store.name("kb-spec", key, canonical_json(identity))
    return RecordedKB(store, identity, inner)


def _recorded_identity(store: RecordingStore, spec: str | None, recorded: str) -> dict[str, Any]:
    """The identity a recording gave a ``--kb`` spec.

    Raises:
        pyql.errors.RecordingDamaged: it is not a JSON object (the file is damaged).
    """
    try:
        identity = json.loads(recorded)
    except json.JSONDecodeError:
        identity = None
    if not isinstance(identity, dict):
        raise store.damaged(f"the identity it names for --kb {spec} is not a JSON object: {one_line(recorded, 80)!r}")
    return identity


@contextlib.contextmanager
def recorded_kbs(store: RecordingStore) -> Iterator[RecordingStore]:
    """Within the block, every :meth:`KB.open <pyql.kb.base.KB.open>` goes through ``store`` (:func:`open_recorded`).

    Blocks nest: a recording around a cache records what the cache (or
    the KB behind it) answers.

    Example:
        >>> import tempfile
        >>> with RecordingStore.open(tempfile.mkdtemp(), "record") as store, recorded_kbs(store):
        ...     type(KB.open("demo")).__name__
        'RecordedKB'
        >>> type(KB.open("demo")).__name__
        'OxigraphKB'
    """
    previous = getattr(base, "_opener") or open_kb

    def opener(spec: object, profile: str | Profile = "freebase", **options: Any) -> KB:
        return open_recorded(store, spec, profile, previous, **options)

    set_opener(opener)
    try:
        yield store
    finally:
        set_opener(previous)
