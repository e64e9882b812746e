"""On-disk Oxigraph stores: bulk loading that survives interruption, and opening read-only.

A KB larger than memory is loaded once into an on-disk pyoxigraph store
(``pyql kb load FILE... --store DIR``, :func:`load_store`) and then opened
as ``oxigraph:DIR`` (:func:`open_store`) by ``run``, ``ask`` and ``eval``.

The store directory holds pyoxigraph's RocksDB files and a manifest,
``pyql-store.json``, which records each file loaded (path, size,
modification time, seconds) and, while a file is being loaded, which one:

* a load that is interrupted (Ctrl-C, a crash, a full disk) leaves the
  manifest saying so; ``oxigraph:DIR`` then refuses to open the store
  ("its load was interrupted") instead of answering from part of the KB;
* running the same ``pyql kb load`` again resumes: files already loaded are
  skipped, the interrupted file is loaded again from its start. A store is a
  set of triples, so triples that were already in it are not duplicated
  (blank nodes are the exception: they get new names on every load; for a
  file with blank nodes use ``--fresh``, which empties the store first);
* two loads cannot run at once: RocksDB locks the directory, and the second
  one is refused with a clear message.

``oxigraph:DIR`` opens the store read-only (:meth:`pyoxigraph.Store.read_only`),
so several processes (an ``eval`` and a ``run``) can read it together.

Example:
    >>> import tempfile
    >>> directory = Path(tempfile.mkdtemp()) / "store"
    >>> kb_file = directory.with_name("kb.nt")
    >>> _ = kb_file.write_text("<http://rdf.freebase.com/ns/m.0a> <http://rdf.freebase.com/ns/a.b.c> <http://rdf.freebase.com/ns/m.0b> .\\n")
    >>> report = load_store([kb_file], directory, progress=False, count=True)
    >>> len(report.loaded), report.triples
    (1, 1)
    >>> len(open_store(directory))
    1
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from pyql.echo import one_line
from pyql.errors import KBError
from pyql.kb.oxigraph_backend import load_file, oxigraph_format
from pyql.kb.progress import human_bytes

__all__ = ["MANIFEST", "StoreLoad", "load_store", "open_store", "store_state"]

#: The manifest file pyql keeps in a store directory.
MANIFEST = "pyql-store.json"
_VERSION = 1


@dataclass
class StoreLoad:
    """What :func:`load_store` did.

    Attributes:
        directory: the store.
        loaded: the files loaded by this call (names as given).
        skipped: files skipped because an earlier load completed them.
        resumed: the file an earlier, interrupted load was loading (loaded again), if any.
        bytes: bytes read by this call.
        seconds: time of this call (loading and compacting).
        triples: triples in the store at the end (only when counted).
    """

    directory: Path
    loaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    resumed: str | None = None
    bytes: int = 0
    seconds: float = 0.0
    triples: int | None = None

    def summary(self) -> str:
        """One line for people.

        Example:
            >>> StoreLoad(Path("s"), loaded=["kb.nt"], bytes=2_000_000, seconds=2.0).summary()
            'loaded 1 file (2.0 MB) into s in 2.0 s (1.0 MB/s)'
        """
        files = f"{len(self.loaded)} file{'s' if len(self.loaded) != 1 else ''}"
        parts = [f"loaded {files} ({human_bytes(self.bytes)}) into {self.directory} in {self.seconds:.1f} s"]
        if self.seconds > 0 and self.bytes:
            parts[0] += f" ({human_bytes(self.bytes / self.seconds)}/s)"
        if self.triples is not None:
            rate = f", {self.triples / self.seconds:,.0f} triples/s" if self.seconds > 0 and self.loaded else ""
            parts.append(f"{self.triples:,} triples in the store{rate}")
        if self.skipped:
            parts.append(f"skipped {len(self.skipped)} already loaded")
        if self.resumed:
            parts.append(f"resumed the interrupted {self.resumed}")
        return "; ".join(parts)


def _manifest_path(directory: Path) -> Path:
    return directory / MANIFEST


def store_state(directory: str | Path) -> dict[str, Any] | None:
    """The manifest of a store directory (None if it has none).

    Raises:
        KBError: the manifest is unreadable.

    Example:
        >>> store_state("/nonexistent") is None
        True
    """
    path = _manifest_path(Path(directory))
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KBError(f"cannot read the store manifest {path}: {one_line(exc)}; load the store again with --fresh") from exc
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        raise KBError(f"{path} is not a pyql store manifest of version {_VERSION}; load the store again with --fresh")
    return data


def _write_state(directory: Path, state: dict[str, Any]) -> None:
    """Replace the manifest atomically (write a temporary file, fsync, rename)."""
    path = _manifest_path(directory)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def _is_store(directory: Path) -> bool:
    return (directory / "CURRENT").is_file()


def _fingerprint(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _check_inputs(files: Sequence[str | Path]) -> list[Path]:
    if not files:
        raise KBError("give at least one RDF file to load")
    paths = []
    for name in files:
        path = Path(name)
        if not path.exists():
            raise KBError(f"no such RDF file: {name}")
        if not path.is_file():
            raise KBError(f"{name} is not a file; give Turtle/N-Triples files (optionally .gz)")
        oxigraph_format(path)  # an unknown suffix is refused before the store is touched
        if path.stat().st_size == 0:
            raise KBError(f"{path} is empty (0 bytes); give an RDF file with triples")
        paths.append(path)
    return paths


def _check_directory(directory: Path, fresh: bool) -> None:
    if directory.exists() and not directory.is_dir():
        raise KBError(f"{directory} is a file, not a store directory; give a new or empty directory to --store")
    if not directory.is_dir():
        return
    entries = [p.name for p in directory.iterdir()]
    if entries and not _is_store(directory) and MANIFEST not in entries:
        raise KBError(
            f"{directory} is not an Oxigraph store (it holds other files: {', '.join(sorted(entries)[:3])}"
            f"{', ...' if len(entries) > 3 else ''}); give a new or empty directory to --store"
        )
    if fresh and entries:
        for entry in directory.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def _open_rw(directory: Path) -> ox.Store:
    try:
        return ox.Store(str(directory))
    except OSError as exc:
        text = str(exc)
        if "lock" in text.lower():
            raise KBError(
                f"{directory} is in use by another process (its LOCK is held: another pyql kb load, or a program "
                "writing to it); wait for it to end, then run this command again"
            ) from exc
        raise KBError(f"cannot open an Oxigraph store at {directory}: {one_line(exc)}") from exc


def load_store(
    files: Sequence[str | Path],
    directory: str | Path,
    *,
    fresh: bool = False,
    progress: bool | None = None,
    count: bool = False,
    optimize: bool = True,
    log: Callable[[str], None] | None = None,
) -> StoreLoad:
    """Bulk-load RDF files into an on-disk Oxigraph store, resuming an interrupted load.

    Args:
        files: Turtle/N-Triples/... files, optionally gzipped.
        directory: the store directory (created if missing).
        fresh: empty the store first (instead of resuming / adding to it).
        progress: progress on standard error (None: as :mod:`pyql.kb.progress` decides).
        count: count the triples of the store at the end (a full scan: slow on
            very large stores).
        optimize: compact the store at the end (faster queries afterwards).
        log: where to say what happens (skips, resumes); default silent.

    Returns:
        What was loaded (:class:`StoreLoad`).

    Raises:
        KBError: a missing, empty or unknown-format file, a directory that is
            not a store, a store in use by another process, a parse error
            (the store then records the interrupted file).

    Example:
        >>> load_store(["/nonexistent.nt"], "/tmp/s")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: no such RDF file: /nonexistent.nt
    """
    say = log or (lambda text: None)
    paths, directory = _check_inputs(files), Path(directory)
    _check_directory(directory, fresh)
    started = time.perf_counter()
    store = _open_rw(directory)
    try:
        report, state = _load_files(store, directory, files, paths, progress=progress, say=say)
        _finish_store(store, report, state, optimize=optimize, count=count)
    finally:
        with contextlib.suppress(Exception):
            store.flush()
        del store
    report.seconds = time.perf_counter() - started
    return report


def _load_files(
    store: ox.Store,
    directory: Path,
    files: Sequence[str | Path],
    paths: Sequence[Path],
    *,
    progress: bool | None,
    say: Callable[[str], None],
) -> tuple[StoreLoad, dict[str, Any]]:
    """What loading the files into the store did, and the manifest as it left it (an interrupted load resumed)."""
    state = store_state(directory) or {"version": _VERSION, "files": [], "loading": None}
    report = StoreLoad(directory)
    interrupted = state.get("loading")
    for name, path in zip(files, paths):
        _load_one(store, state, report, str(name), path, interrupted=interrupted, progress=progress, say=say)
    _note_other_interruption(interrupted, report, state, say)
    return report, state


def _finish_store(store: ox.Store, report: StoreLoad, state: dict[str, Any], *, optimize: bool, count: bool) -> None:
    """Compact and count the store as asked (the count into ``report``), then mark its manifest complete."""
    if optimize and report.loaded:
        store.optimize()
    if count:
        report.triples = len(store)
    state["complete"] = True
    _write_state(report.directory, state)


def _load_one(
    store: ox.Store,
    state: dict[str, Any],
    report: StoreLoad,
    name: str,
    path: Path,
    *,
    interrupted: dict[str, Any] | None,
    progress: bool | None,
    say: Callable[[str], None],
) -> None:
    """Load one file into the store (skip it if the manifest has it), the manifest saying so before and after."""
    directory = report.directory
    mark = _fingerprint(path)
    key = (mark["path"], mark["size"], mark["mtime_ns"])
    if key in {(f["path"], f["size"], f["mtime_ns"]) for f in state["files"]}:
        report.skipped.append(name)
        say(f"pyql: {name} is already in {directory} (loaded earlier); skipped")
        return
    if interrupted and interrupted.get("path") == mark["path"]:
        report.resumed = name
        say(f"pyql: an earlier load of {name} into {directory} was interrupted; loading it again from its start")
    state["loading"] = {**mark, "started": time.time(), "pid": os.getpid()}
    _write_state(directory, state)
    t0 = time.perf_counter()
    try:
        load_file(store, path, progress=progress, what=f"loading into {directory}:").finish()
    except KBError as exc:  # a parse error: the file must be fixed before the load can finish
        state["loading"]["failed"] = str(exc)
        _write_state(directory, state)
        raise
    store.flush()
    state["files"].append({**mark, "seconds": round(time.perf_counter() - t0, 3)})
    state["loading"] = None
    _write_state(directory, state)
    report.loaded.append(name)
    report.bytes += mark["size"]


def _note_other_interruption(
    interrupted: dict[str, Any] | None, report: StoreLoad, state: dict[str, Any], say: Callable[[str], None]
) -> None:
    """Say so when an earlier load was interrupted on a file that is not among the files of this one."""
    if interrupted and report.resumed is None and not any(f["path"] == interrupted.get("path") for f in state["files"]):
        say(f"pyql: note: an earlier load of {interrupted.get('path')} was interrupted and is not among these files; "
            "its triples may be partly in the store (use --fresh to start over)")


def open_store(directory: str | Path) -> ox.Store:
    """Open an on-disk store read-only (what ``oxigraph:DIR`` does).

    Raises:
        KBError: no such directory, a directory that is not a store, or a
            store whose load is under way or was interrupted.

    Example:
        >>> open_store("/nonexistent/store")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: no Oxigraph store at /nonexistent/store; create one with `pyql kb load FILE... --store /nonexistent/store` ...
    """
    directory = Path(directory)
    hint = f"create one with `pyql kb load FILE... --store {directory}` (oxigraph: alone is an empty in-memory store)"
    if not directory.exists():
        raise KBError(f"no Oxigraph store at {directory}; {hint}")
    if not directory.is_dir():
        raise KBError(f"{directory} is not a directory; {hint}")
    state = store_state(directory)
    loading = state.get("loading") if state else None
    if loading and loading.get("failed"):
        raise KBError(
            f"the Oxigraph store {directory} is incomplete: loading {loading.get('path')} failed "
            f"({loading['failed']}); fix the file, then run `pyql kb load ... --store {directory}` again "
            "(or --fresh to start over)"
        )
    if loading:
        raise KBError(
            f"the Oxigraph store {directory} is incomplete: loading {loading.get('path')} was interrupted (or is still "
            f"running); run `pyql kb load ... --store {directory}` again to finish it"
        )
    if not _is_store(directory):
        raise KBError(f"{directory} is not an Oxigraph store (no CURRENT file); {hint}")
    try:
        return ox.Store.read_only(str(directory))
    except OSError as exc:
        raise KBError(f"cannot open the Oxigraph store {directory} read-only: {one_line(exc)}") from exc
