"""Shared pytest fixtures for pyql."""

from __future__ import annotations

# ============================================================================ #
# BEGIN Virtuoso harness fixtures (owner: tests/virtuoso.py).  Only
# `virtuoso_server` is defined here; add other fixtures outside this block.
# ============================================================================ #
import importlib.util as _importlib_util
import os as _os
import sys as _sys
from pathlib import Path as _Path

import pytest as _pytest

_TESTS_DIR = _Path(__file__).resolve().parent
_REPO_ROOT = _TESTS_DIR.parent


def _load_virtuoso_module():
    """Make ``import tests.virtuoso`` work under ``--import-mode=importlib``.

    pytest's importlib mode does not put the repository root on ``sys.path``
    (``python -m pytest`` does, plain ``pytest`` does not), so add it; if
    ``tests`` still resolves to something else (e.g. a stray ``tests`` package
    in site-packages), load the file by path under the same name.
    """
    if str(_REPO_ROOT) not in _sys.path:
        _sys.path.insert(0, str(_REPO_ROOT))
    target = _TESTS_DIR / "virtuoso.py"
    try:
        import tests.virtuoso as mod  # noqa: PLC0415

        if _Path(mod.__file__).resolve() == target:
            return mod
    except ImportError:
        pass
    spec = _importlib_util.spec_from_file_location("tests.virtuoso", target)
    assert spec is not None and spec.loader is not None
    mod = _importlib_util.module_from_spec(spec)
    _sys.modules["tests.virtuoso"] = mod
    spec.loader.exec_module(mod)
    return mod


_virtuoso = _load_virtuoso_module()


@_pytest.fixture(scope="session")
def virtuoso_server():
    """A started :class:`tests.virtuoso.VirtuosoServer` shared by the session.

    Skips when Virtuoso is not installed, unless ``PYQL_REQUIRE_VIRTUOSO=1``
    (as in ``.ci/run``), in which case the test fails with the install hint.
    Load data with ``virtuoso_server.load_turtle(path, graph)``; loading the
    same unchanged file into the same graph twice is a cheap no-op.
    """
    if _virtuoso.find_virtuoso() is None:
        if _os.environ.get("PYQL_REQUIRE_VIRTUOSO", "").strip() not in ("", "0"):
            _pytest.fail("PYQL_REQUIRE_VIRTUOSO is set but " + _virtuoso.INSTALL_HINT, pytrace=False)
        _pytest.skip(_virtuoso.INSTALL_HINT)
    server = _virtuoso.VirtuosoServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ============================================================================ #
# END Virtuoso harness fixtures
# ============================================================================ #


def pytest_report_header(config: _pytest.Config) -> str:
    """Say where the shared data directory is and which of its files are there (README, "Tests")."""
    # sys.path holds the repository (see _load_virtuoso_module above)
    from tests.shared_data import FILES, SHARED_DATA, shared_path

    found = [key for key in FILES if shared_path(key).is_file()]
    missing = "" if len(found) == len(FILES) else "; tests that need the missing files skip (README.md, 'Tests')"
    return f"pyql shared data: {SHARED_DATA} ({len(found)} of {len(FILES)} files{missing})"


# Hypothesis: local runs draw new examples every time (they explore); CI sets PYQL_HYPOTHESIS_PROFILE=ci
# (.ci/run) so that every run of a commit tries the same examples and a red CI is a reproducible failure,
# not the luck of one draw. A property that fails locally is fixed, not hidden: its example is printed.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is in the dev extra
    _hypothesis_settings = None
# On parallel workers (pytest-xdist) the cores are shared: hypothesis's default deadline (200 ms an example) would
# time the other workers' load, not the code, so the profiles for workers have none; a test that bounds its time
# says so itself. One process (`-n 0`) keeps hypothesis's defaults.
if _hypothesis_settings is not None:
    _hypothesis_settings.register_profile("workers", deadline=None)
    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
    _profile = _os.environ.get("PYQL_HYPOTHESIS_PROFILE") or ("workers" if _os.environ.get("PYTEST_XDIST_WORKER") else "")
    if _profile:
        _hypothesis_settings.load_profile(_profile)


# A runner that starts the suite in the background without job control (`( pytest & )` in a script) leaves
# SIGINT ignored, and every process a Ctrl-C test starts would inherit that and never see its Ctrl-C; with a
# handler here the children start with the default action, as from a terminal.
import signal as _signal  # noqa: E402

if _signal.getsignal(_signal.SIGINT) is _signal.SIG_IGN:
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)


# Tiers and parallel workers (README, "Tests"; tests/tiers.py).
@_pytest.hookimpl(tryfirst=True)  # before `-m` deselects and before xdist reads the groups
def pytest_collection_modifyitems(config: _pytest.Config, items: list[_pytest.Item]) -> None:
    """Mark the quick tier and put the tests of one server in one xdist group."""
    from tests.tiers import NOT_QUICK, group_of  # noqa: PLC0415 - sys.path holds the repository (see above)

    for item in items:
        names = {mark.name for mark in item.iter_markers()}
        if not names & NOT_QUICK:
            item.add_marker(_pytest.mark.quick)
        group = group_of(names, getattr(item, "fixturenames", ()))
        if group is not None:
            item.add_marker(_pytest.mark.xdist_group(group))


def pytest_configure(config: _pytest.Config) -> None:
    """Give this process (each xdist worker, or the one process) its own runtime directory.

    ``pyql llm serve`` announces its server in ``$XDG_RUNTIME_DIR/pyql/llm-serve.json`` and the commands the tests
    start look there: a private directory per process keeps the tests from finding a developer's running server or
    a file another worker wrote. Subprocesses inherit it.
    """
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    worker = _os.environ.get("PYTEST_XDIST_WORKER", "main")
    runtime = tempfile.mkdtemp(prefix=f"pyql-tests-{worker}-")
    _os.chmod(runtime, 0o700)
    config.add_cleanup(lambda: shutil.rmtree(runtime, ignore_errors=True))
    _os.environ["XDG_RUNTIME_DIR"] = runtime


def pytest_xdist_auto_num_workers(config: _pytest.Config) -> int | None:
    """`-n auto`: two workers more than cores (README, "Tests"; `PYTEST_XDIST_AUTO_NUM_WORKERS` still decides).

    Much of a test's time is waiting (for a subprocess to start, a fake server's delay, a time-out), so a core
    has work while a worker waits: 4 workers on 2 cores.
    """
    if _os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cores = len(_os.sched_getaffinity(0)) if hasattr(_os, "sched_getaffinity") else (_os.cpu_count() or 1)
    return cores + 2
