"""Where the tests find the real data sets they use: the shared data directory.

Some tests run on public data files that are not in the repository (too big,
or under their own licence). They look for them in the *shared data
directory*: ``$PYQL_SHARED_DATA`` when set, else ``../shared/data`` beside
the repository (``<clone>/../shared/data``). Tests that need a missing file
skip, and their reason says which file, where it comes from (repository and
path there), the exact path to put it at, and the environment variable that
points elsewhere (README, "Tests").

Example:
    >>> shared_path("dbbench").name
    'dev.jsonl'
    >>> reason = missing_reason("webqsp")
    >>> "https://github.com/cdhx/QueryAgent" in reason and "data/WebQSP/WebQSP_test_processed.json" in reason
    True
    >>> str(shared_path("webqsp")) in reason and "PYQL_SHARED_DATA" in reason
    True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["FILES", "SHARED_DATA", "SharedFile", "missing_reason", "needs_shared", "shared_path", "skip_unless_shared"]

REPO = Path(__file__).resolve().parents[1]

#: The shared data directory.
SHARED_DATA = Path(os.environ.get("PYQL_SHARED_DATA") or REPO.parent / "shared" / "data")


@dataclass(frozen=True)
class SharedFile:
    """One file of the shared data directory and where it comes from."""

    #: Its path under the shared data directory.
    path: str
    #: What it is.
    what: str
    #: The public repository it comes from.
    repository: str
    #: Its path in that repository.
    source: str
    #: What of the source file to keep, when the file is not a plain copy of it.
    cut: str = "it"

    def how_to_get(self, directory: Path) -> str:
        """Where it comes from and where it goes, for a skip reason.

        Example:
            >>> FILES["relations"].how_to_get(Path("/d"))
            'download data/fb_relation.txt from https://github.com/cdhx/QueryAgent and save it as /d/freebase/relations.txt'
        """
        return f"download {self.source} from {self.repository} and save {self.cut} as {directory / self.path}"


#: key → the file: its path in the directory, what it is, where it comes from.
FILES: dict[str, SharedFile] = {
    "webqsp": SharedFile(
        "webqsp/WebQSP_test_processed.json",
        "the 1,639 WebQSP test questions with their PyQL programs",
        "https://github.com/cdhx/QueryAgent",
        "data/WebQSP/WebQSP_test_processed.json",
    ),
    "relations": SharedFile(
        "freebase/relations.txt",
        "24,436 Freebase relation names, one a line",
        "https://github.com/cdhx/QueryAgent",
        "data/fb_relation.txt",
    ),
    "dbbench": SharedFile(
        "wikisql_dbbench/dev.jsonl",
        "AgentBench's dbbench items whose create.database is wikisql",
        "https://github.com/THUDM/AgentBench",
        "data/dbbench/dev.jsonl",
        cut='its lines whose create.database is "wikisql"',
    ),
}


def shared_path(key: str) -> Path:
    """The path of one shared file (it may not exist).

    Example:
        >>> shared_path("webqsp").parts[-2:]
        ('webqsp', 'WebQSP_test_processed.json')
    """
    return SHARED_DATA / FILES[key].path


def missing_reason(*keys: str) -> str:
    """The skip reason for tests that need the shared files ``keys``: what, from where, to where.

    Example:
        >>> missing_reason("relations").startswith("needs the shared data file freebase/relations.txt")
        True
        >>> "set PYQL_SHARED_DATA" in missing_reason("relations")
        True
    """
    wanted = [k for k in keys if not shared_path(k).is_file()] or list(keys)
    what = "; ".join(f"{FILES[k].path} ({FILES[k].what}): {FILES[k].how_to_get(SHARED_DATA)}" for k in wanted)
    files = "files" if len(wanted) > 1 else "file"
    return (
        f"needs the shared data {files} {what} "
        f"(the shared data directory is {SHARED_DATA}: ../shared/data beside the clone, "
        "or set PYQL_SHARED_DATA=DIR to use another); see README.md, 'Tests'"
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
