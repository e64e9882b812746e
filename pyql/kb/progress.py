"""Progress of loading an RDF file: a byte-counting reader that reports on stderr.

A large KB file takes seconds to minutes to load, so the loaders
(:class:`~pyql.kb.oxigraph_backend.OxigraphKB` for a file, ``pyql kb load``
for an on-disk store) read it through a :class:`ProgressReader` and report
how far they are. Reports go to standard error only, never to standard
output (which may carry ``--json`` lines), and only when someone can use
them:

* standard error is a terminal and the file is at least
  :data:`TTY_MIN_BYTES` (8 MB): a bar redrawn in place (``\\r``);
* otherwise, a file of at least :data:`LOG_MIN_BYTES` (100 MB): one line
  per 10% (log files stay short);
* smaller files load silently (the demo KB, tests).

At the end a line says the file's size, its triples and the time taken.
``progress=True`` / ``False`` forces reporting on or off.

Example:
    >>> import io
    >>> err = io.StringIO()
    >>> report = LoadProgress("kb.nt", total=1000, stream=err, enabled=True)
    >>> reader = report.wrap(io.BytesIO(b"x" * 1000))
    >>> len(reader.read(600)) + len(reader.read())
    1000
    >>> seconds = report.finish(triples=10)
    >>> err.getvalue().splitlines()[-1]  # doctest: +ELLIPSIS
    'pyql: loaded kb.nt (1.0 kB, 10 triples) in ... s'
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import IO, TextIO

__all__ = ["LOG_MIN_BYTES", "TTY_MIN_BYTES", "LoadProgress", "ProgressReader", "human_bytes"]

#: Smallest file that gets a live progress bar on a terminal.
TTY_MIN_BYTES = 8_000_000
#: Smallest file that gets progress lines when standard error is not a terminal.
LOG_MIN_BYTES = 100_000_000


def human_bytes(n: float) -> str:
    """A byte count for people (powers of 1000, as disks are sold).

    Example:
        >>> human_bytes(473_000_000), human_bytes(999)
        ('473.0 MB', '999 B')
    """
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")  # pragma: no cover


class ProgressReader:
    """A binary file wrapper that tells a :class:`LoadProgress` how many bytes were read.

    Example:
        >>> import io
        >>> r = ProgressReader(io.BytesIO(b"abc"), LoadProgress("f", 3, enabled=False))
        >>> r.read(2), r.read()
        (b'ab', b'c')
    """

    def __init__(self, handle: IO[bytes], progress: LoadProgress) -> None:
        self.handle = handle
        self.progress = progress

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.progress.advance(len(data))
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        n = self.handle.readinto(buffer)  # type: ignore[attr-defined]
        self.progress.advance(n or 0)
        return n or 0

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.handle.close()


class LoadProgress:
    """Reports the loading of one file on standard error (see the module docs for when).

    Args:
        path: the file (named in the reports).
        total: its size in bytes (of the file as stored, compressed or not).
        stream: where to report (default ``sys.stderr``).
        enabled: force reporting on (True) or off (False); None decides
            from the size and whether ``stream`` is a terminal.
        what: the verb of the reports ("loading", "loading into DIR", ...).

    Example:
        >>> LoadProgress("kb.nt", 10, enabled=None).enabled   # a small file: silent
        False
    """

    def __init__(self, path: str | Path, total: int, stream: TextIO | None = None, enabled: bool | None = None,
                 what: str = "loading") -> None:
        self.path = str(path)
        self.total = max(int(total), 0)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if enabled is None:
            enabled = self.total >= (TTY_MIN_BYTES if self.tty else LOG_MIN_BYTES)
        self.enabled = enabled
        self.what = what
        self.done = 0
        self.started = time.perf_counter()
        self._last_draw = 0.0
        self._last_tenth = 0  # the first line already says it started
        if self.enabled:
            self._emit(f"pyql: {self.what} {self.path} ({human_bytes(self.total)}) ...", final=not self.tty)

    def wrap(self, handle: IO[bytes]) -> ProgressReader:
        """``handle`` wrapped so that reading it advances this report."""
        return ProgressReader(handle, self)

    def advance(self, nbytes: int) -> None:
        """Count ``nbytes`` more bytes read; redraw at most 5 times a second."""
        self.done += nbytes
        if not self.enabled or not self.total:
            return
        fraction = min(self.done / self.total, 1.0)
        if self.tty:
            now = time.perf_counter()
            if now - self._last_draw >= 0.2:
                self._last_draw = now
                self._emit(self._bar(fraction, now - self.started), final=False)
        else:
            tenth = int(fraction * 10)
            if tenth > self._last_tenth and tenth < 10:
                self._last_tenth = tenth
                elapsed = time.perf_counter() - self.started
                self._emit(f"pyql: {self.what} {self.path}: {tenth * 10}% ({human_bytes(self.done)}, {elapsed:.0f} s)", final=True)

    def _bar(self, fraction: float, elapsed: float) -> str:
        width = 30
        filled = int(fraction * width)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        return (f"pyql: {self.what} {self.path} [{'#' * filled}{'.' * (width - filled)}] {fraction * 100:3.0f}% "
                f"{human_bytes(self.done)}/{human_bytes(self.total)} {elapsed:.0f} s, ~{eta:.0f} s left")

    def _emit(self, text: str, final: bool) -> None:
        try:
            if self.tty:
                self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr never stops a load
            self.enabled = False

    def finish(self, triples: int | None = None) -> float:
        """Say the file's size, its triples and the time taken (if reporting); returns the seconds."""
        seconds = time.perf_counter() - self.started
        if self.enabled:
            count = f", {triples:,} triples" if triples is not None else ""
            self._emit(f"pyql: loaded {self.path} ({human_bytes(self.total)}{count}) in {seconds:.1f} s", final=True)
        return seconds
