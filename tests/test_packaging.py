"""A wheel built from the repo installs and works outside the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.cli]  # builds a wheel and venvs with pip (CI runs the slow tier)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (found,) = out.glob("pyql-*.whl")
    return found


def test_wheel_ships_packages_grammars_data_and_types(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "pyql/__init__.py",
        "pyql/py.typed",
        "pyql/data/cyclones.ttl",
        "pyql/data/demo_questions.jsonl",
        "grammars/action.lark",
        "grammars/legacy_pyql.lark",
        "grammars/path.lark",
        "agent/examples/freebase.txt",
        "agent/examples/table.txt",
        "agent/templates/queryagent_kb.j2",
        "agent/templates/trace.html.j2",
        "correction/templates/wrong_arity.j2",
        "pyql_sql/__init__.py",
        "correction/py.typed",
        "agent/py.typed",
    ):
        assert required in names, required
    assert not [n for n in names if n.startswith("tests/")]
    for package in ("pyql", "pyql_sql", "agent", "correction", "grammars"):  # every room, however deep
        for init in (ROOT / package).rglob("__init__.py"):
            assert init.relative_to(ROOT).as_posix() in names, init


def test_installed_wheel_runs_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The dependencies come from the environment running the tests, through a
    # .pth file (whose own .pth files, like an editable install of the repo,
    # are not processed); the wheel itself is installed without them.
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(target, "test-deps.pth").write_text("\n".join(sorted(here)) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q", str(wheel)], check=True, timeout=300)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [str(env_dir / "bin" / "pyql"), "demo", "--no-sparql"],
        capture_output=True, text=True, cwd=tmp_path, env=clean, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "Tropical Storm Dolly" in run.stdout
    where = subprocess.run(
        [str(python), "-c", "import grammars, pyql; print(grammars.grammar_path('action')); print(pyql.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=clean, timeout=60,
    )
    assert str(ROOT) not in where.stdout, "the installed copy must be used, not the source tree"
    assert "site-packages" in where.stdout


def _venv_with_test_deps(env_dir: Path) -> Path:
    """A venv with pip whose dependencies come from the running environment (see above); returns its python."""
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(target, "test-deps.pth").write_text("\n".join(sorted(here)) + "\n")
    return python


def test_strict_editable_install_works_beside_a_clone_named_pyql(tmp_path: Path) -> None:
    """README, Troubleshooting: in the directory holding a clone named ``pyql``, the strict editable install imports."""
    import shutil

    clone = tmp_path / "pyql"
    clone.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, clone / name)
    for package in ("pyql", "pyql_sql", "agent", "correction", "grammars"):
        shutil.copytree(ROOT / package, clone / package, ignore=shutil.ignore_patterns("__pycache__"))
    python = _venv_with_test_deps(tmp_path / "venv")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "-q", "-e", str(clone),
         "--config-settings", "editable_mode=strict"],
        check=True, capture_output=True, text=True, timeout=300,
    )
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [str(python), "-c", "from pyql import Query; import pyql; print(pyql.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=clean, timeout=60, check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith(os.path.join("pyql", "__init__.py"))
