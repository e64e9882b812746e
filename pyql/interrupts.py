"""Ctrl-C in the ``pyql`` command: one line and exit status 130, at once, whenever it arrives.

The ``pyql`` process handles SIGINT in three phases:

* **starting** (:func:`start`): from the first statement of
  :mod:`pyql.cli` when it is the program (the ``pyql`` console script,
  ``python -m pyql.cli``; :func:`guard_start`), else from the first line of
  :func:`pyql.cli.main`, until the command begins: importing the commands of
  every package, the KB engines and the LLM client, and parsing the
  arguments. Nothing needs cleaning up yet: a SIGINT prints
  ``pyql: interrupted`` and ends the process with status 130 at once;
* **running** (:func:`running`): the first SIGINT raises
  :class:`KeyboardInterrupt` where the command is, as Python's own handler
  does, so it stops and says one line (``pyql eval`` keeps what was answered
  and writes its summary; a KB load is cut); every later SIGINT ends the
  process at once (status 130, one line), whatever the clean-up is doing;
* **finished** (:func:`finished`): the command has returned; a SIGINT during
  the interpreter's exit ends the process at once (status 130).

After an interrupt, :func:`exit_now` ends the process without the
interpreter's tear-down (freeing a loaded KB and the modules of the model's
libraries took over a second on a loaded machine): the output streams are
flushed, threads still waiting on a service are not waited for.

A SIGINT the parent ignores (a background job of a non-interactive shell)
stays ignored, nothing changes outside the main thread, and a program that
only imports :mod:`pyql.cli` keeps its own handler. This module imports only
``os``, ``signal`` and ``sys`` (loaded by the interpreter at start-up), so the
window before the handler is the interpreter's start-up and the loading of
this module.

Example:
    >>> import signal
    >>> previous = start(); signal.getsignal(signal.SIGINT) is _at_start
    True
    >>> running(); signal.getsignal(signal.SIGINT) is _first
    True
    >>> restore(previous); signal.getsignal(signal.SIGINT) is previous
    True
"""

from __future__ import annotations

import os
import signal
import sys

TYPE_CHECKING = False  # not typing's: this module is imported before anything heavy
if TYPE_CHECKING:
    from typing import Any

__all__ = ["EXIT_INTERRUPTED", "guard_start", "start", "running", "finished", "restore", "exit_now"]

#: The exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: The names the ``pyql`` console script's file has (``pyql-script.py``: setuptools on Windows).
ENTRY_SCRIPTS = ("pyql", "pyql-script")

_STARTING = b"pyql: interrupted\n"
_AGAIN = b"pyql: interrupted again; stopped at once\n"
_AFTER = b"pyql: interrupted; stopped at once\n"


def guard_start(module: str) -> bool:
    """:func:`start` when the module calling it is the program; whether it did.

    The program is :mod:`pyql.cli` run as ``python -m pyql.cli``
    (``module`` is ``"__main__"``) or imported by the ``pyql`` console script
    (the ``__main__`` module's file is named ``pyql``). A program of one's own
    that imports :mod:`pyql.cli` is left alone.

    Example:
        >>> guard_start("pyql.cli")  # imported by another program (here, the doctest runner)
        False
    """
    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    script = os.path.splitext(os.path.basename(main_file))[0]
    if module != "__main__" and script not in ENTRY_SCRIPTS:
        return False
    return start() is not None


def start() -> Any:
    """The starting phase (see the module docstring): a SIGINT ends the process at once with one line.

    Returns:
        The handler it replaced (for :func:`restore`), or None when nothing
        was installed: not the main thread, or SIGINT is ignored.
    """
    return _set(_at_start)


def running() -> None:
    """The running phase: the first SIGINT raises :class:`KeyboardInterrupt`, a later one ends the process.

    Example:
        >>> import signal
        >>> previous = start(); running(); signal.getsignal(signal.SIGINT) is _first
        True
        >>> restore(previous)
    """
    if _ours():
        signal.signal(signal.SIGINT, _first)


def finished() -> None:
    """The command has returned: a SIGINT from now on (the interpreter's exit) ends the process at once, status 130.

    Example:
        >>> import signal
        >>> previous = start(); finished(); signal.getsignal(signal.SIGINT) is _after
        True
        >>> restore(previous)
    """
    if _ours():
        signal.signal(signal.SIGINT, _after)


def restore(previous: Any) -> None:
    """Put back the handler :func:`start` replaced; None: nothing to do.

    Example:
        >>> restore(None)
    """
    if previous is not None and _main_thread():
        signal.signal(signal.SIGINT, previous)


def exit_now(status: int = EXIT_INTERRUPTED) -> None:
    """End the process now with ``status``: the output streams flushed, no interpreter tear-down.

    Only for the process's own entry point, after the command has cleaned
    up and said why it stopped (files closed; the run file's lock is
    released by the exit itself).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing more can be said
            pass
    os._exit(status)


def _set(handler: Any) -> Any:
    if not _main_thread():
        return None
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        return None
    signal.signal(signal.SIGINT, handler)
    return previous


def _ours() -> bool:
    return _main_thread() and signal.getsignal(signal.SIGINT) in (_at_start, _first, _again, _after)


def _at_start(signum: int, frame: Any) -> None:
    """A SIGINT while starting: nothing to clean up; end the process at once."""
    os.write(2, _STARTING)
    os._exit(EXIT_INTERRUPTED)


def _first(signum: int, frame: Any) -> None:
    """The first SIGINT of a running command: from now on a SIGINT ends the process; this one stops the command."""
    signal.signal(signal.SIGINT, _again)
    raise KeyboardInterrupt


def _again(signum: int, frame: Any) -> None:
    """A second SIGINT: the command is already stopping; end the process at once."""
    os.write(2, _AGAIN)
    os._exit(EXIT_INTERRUPTED)


def _after(signum: int, frame: Any) -> None:
    """A SIGINT after the command returned (during the interpreter's exit): end the process at once."""
    os.write(2, _AFTER)
    os._exit(EXIT_INTERRUPTED)


def _main_thread() -> bool:
    """Whether this is the main thread (the only one that may set a signal handler)."""
    try:
        signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT))
    except ValueError:  # "signal only works in main thread of the main interpreter"
        return False
    return True
