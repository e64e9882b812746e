"""Whether a child process of a test is gone: shared by the tests that kill or orphan one."""

from __future__ import annotations

import os
import time


def gone(pid: int) -> bool:
    """Whether ``pid`` has ended; a zombie not yet reaped (it still answers ``kill(0)``) counts as gone.

    Example:
        >>> gone(os.getpid())
        False
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True


def wait_gone(pid: int, seconds: float = 20) -> bool:
    """Whether ``pid`` ends within ``seconds`` (polled every 0.1 s).

    Example:
        >>> wait_gone(os.getpid(), 0.2)
        False
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.1)
    return False
