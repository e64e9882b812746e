"""``pyql.autoload.import_submodules``: a package's modules imported once, and no thread reads a half-filled registry."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from pyql import autoload
from pyql.autoload import import_submodules


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package ``autoload_pkg`` whose module ``a`` takes a while to import and ``b`` counts its imports."""
    root = tmp_path / "autoload_pkg"
    root.mkdir()
    (root / "__init__.py").write_text("imported = []\n")
    (root / "a.py").write_text("import time\nfrom autoload_pkg import imported\ntime.sleep(0.3)\nimported.append('a')\n")
    (root / "b.py").write_text("from autoload_pkg import imported\nimported.append('b')\n")
    (root / "_private.py").write_text("raise RuntimeError('never imported')\n")
    (root / "registry.py").write_text("from autoload_pkg import imported\nimported.append('registry')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(autoload, "_DONE", set())  # this package is new to every test
    yield "autoload_pkg"
    for name in [m for m in sys.modules if m == "autoload_pkg" or m.startswith("autoload_pkg.")]:
        del sys.modules[name]


def test_every_module_once_in_name_order_but_the_skipped(package: str) -> None:
    import_submodules(package, skip=("registry",))
    import_submodules(package, skip=("registry",))
    assert sys.modules[package].imported == ["a", "b"]


def test_a_second_thread_waits_until_every_module_is_imported(package: str) -> None:
    seen: list[list[str]] = []
    first = threading.Thread(target=import_submodules, args=(package,))
    first.start()
    deadline = time.monotonic() + 10
    while package not in sys.modules and time.monotonic() < deadline:  # the first thread has begun
        time.sleep(0.001)
    import_submodules(package)  # while the first still imports the slow module
    seen.append(list(sys.modules[package].imported))
    first.join()
    assert seen == [["a", "b", "registry"]]
