"""The test tiers and the xdist groups (README, "Tests"); ``tests/conftest.py`` applies them.

The README's command, ``python -m pytest -q``, runs on pytest-xdist's workers (``-n auto --dist loadgroup`` in
pyproject's addopts) and leaves out the slow tier (``-m 'not slow'`` there; ``-m slow`` runs it). The quick tier
(``-m quick``) is every test that has none of :data:`NOT_QUICK`'s markers.

Example:
    >>> sorted(NOT_QUICK)
    ['browser', 'cli', 'e2e', 'llm', 'slow', 'virtuoso']
    >>> group_of({"virtuoso"}, ())
    'virtuoso'
    >>> group_of(set(), ("tmp_path", "virtuoso_server"))
    'virtuoso'
    >>> group_of({"cli"}, ("tmp_path",)) is None
    True
"""

from __future__ import annotations

from collections.abc import Iterable

#: A test with any of these markers is not in the quick tier.
NOT_QUICK = frozenset({"slow", "cli", "e2e", "virtuoso", "llm", "browser"})

#: (xdist group, the marker or the fixture that puts a test in it). Tests that share one expensive server run on
#: one worker, so that the suite starts one of each, not one per worker: a Virtuoso (the session fixture
#: ``virtuoso_server``) and the local model (the ``llm`` tests' module fixtures; two llama.cpp servers at once on
#: two cores would also slow each other past their time limits).
SERVER_GROUPS: tuple[tuple[str, str, str | None], ...] = (
    ("virtuoso", "virtuoso", "virtuoso_server"),
    ("llm", "llm", None),
)


def group_of(markers: set[str], fixtures: Iterable[str]) -> str | None:
    """The xdist group of a test with these marker and fixture names, or None (any worker)."""
    fixtures = set(fixtures)
    for group, marker, fixture in SERVER_GROUPS:
        if marker in markers or (fixture is not None and fixture in fixtures):
            return group
    return None
