"""Where the tests find the real data sets they use: the shared data directory.

Some tests run on public data files that are not in the repository (too big,
or under their own licence). They look for them in the *shared data
directory*: ``$PYQL_SHARED_DATA`` when set, else ``../shared/data`` beside
the repository (``<clone>/../shared/data``). Tests that need a missing file
skip, and their reason names the file, where it was looked for and where to
get it (README, "Tests").

Example:
    >>> shared_path("dbbench").name
    'dev.jsonl'
    >>> "PYQL_SHARED_DATA" in missing_reason("webqsp")
    True
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["FILES", "SHARED_DATA", "missing_reason", "needs_shared", "shared_path", "skip_unless_shared"]

REPO = Path(__file__).resolve().parents[1]

#: The shared data directory.
SHARED_DATA = Path(os.environ.get("PYQL_SHARED_DATA") or REPO.parent / "shared" / "data")

#: key → (path under the directory, what it is and where it comes from).
FILES: dict[str, tuple[str, str]] = {
    "webqsp": (
        "webqsp/WebQSP_test_processed.json",
        "the 1,639 WebQSP test questions with their PyQL programs, from https://github.com/cdhx/QueryAgent (data/WebQSP/)",
    ),
    "relations": (
        "freebase/relations.txt",
        "24,436 Freebase relation names, one a line, from https://github.com/cdhx/QueryAgent (data/fb_relation.txt)",
    ),
    "dbbench": (
        "wikisql_dbbench/dev.jsonl",
        "AgentBench's dbbench items whose create.database is wikisql, from https://github.com/THUDM/AgentBench (data/dbbench/dev.jsonl)",
    ),
}


def shared_path(key: str) -> Path:
    """The path of one shared file (it may not exist).

    Example:
        >>> shared_path("webqsp").parts[-2:]
        ('webqsp', 'WebQSP_test_processed.json')
    """
    return SHARED_DATA / FILES[key][0]


def missing_reason(*keys: str) -> str:
    """The skip reason for tests that need the shared files ``keys``.

    Example:
        >>> missing_reason("relations").startswith("needs freebase/relations.txt")
        True
    """
    wanted = [k for k in keys if not shared_path(k).is_file()] or list(keys)
    what = "; ".join(f"{FILES[k][0]} ({FILES[k][1]})" for k in wanted)
    return (
        f"needs {what} in the shared data directory {SHARED_DATA} "
        "(../shared/data beside the repository, or set PYQL_SHARED_DATA); see README.md, 'Tests'"
    )


def needs_shared(*keys: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark for tests that need the shared files ``keys``.

    Example:
        >>> needs_shared("dbbench").name
        'skipif'
    """
    missing = not all(shared_path(k).is_file() for k in keys)
    return pytest.mark.skipif(missing, reason=missing_reason(*keys))


def skip_unless_shared(*keys: str) -> None:
    """Skip the running test (or module, at import) when a shared file is missing."""
    if not all(shared_path(k).is_file() for k in keys):
        pytest.skip(missing_reason(*keys), allow_module_level=True)
