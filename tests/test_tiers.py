"""The test tiers, the CI entry point and the shared-data skips say what the README says (issue 36, items 6-8).

* ``.ci/run`` runs the README's two commands as they stand in its "Two commands" section (in a fresh clone with
  only the dev extra), then the README's test command and the slow tier;
* pyproject's options make the README's command run on parallel workers without the slow tier, and every marker
  the tiers use is registered;
* the quick tier is every test that is neither slow, ``cli`` nor a service's; tests of one server share a worker;
* a skip for a missing shared data file says where the file comes from (repository, path) and where it goes.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.shared_data import FILES, SHARED_DATA, missing_reason, shared_path
from tests.tiers import NOT_QUICK

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
PYTEST_OPTIONS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]


def _readme_commands_as_ci_reads_them() -> list[str]:
    """The lines ``.ci/run``'s ``readme_commands`` prints, by running that very function on the README."""
    function = re.search(r"^readme_commands\(\) \{\n.*?^\}\n", CI, re.MULTILINE | re.DOTALL)
    assert function, ".ci/run defines readme_commands()"
    done = subprocess.run(["bash", "-c", function.group(0) + "readme_commands"], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=60)
    return done.stdout.splitlines()


def test_ci_runs_the_readmes_two_commands_then_every_tier() -> None:
    section = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    shown = re.findall(r"^```sh\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert [block.strip() for block in shown] == _readme_commands_as_ci_reads_them()
    assert shown[-1].strip() == "python -m pytest -q"
    assert "pip install -e '.[dev]'" in shown[0] and "[dev," not in shown[0]  # a newcomer's install: only the dev extra
    run_lines = [line.strip() for line in CI.splitlines() if line.strip().startswith("python -m pytest")]
    assert run_lines == ["python -m pytest -q", "python -m pytest -q -m slow"]


def test_the_readmes_command_runs_on_workers_without_the_slow_tier() -> None:
    addopts = shlex.split(PYTEST_OPTIONS["addopts"])
    assert addopts[addopts.index("-n") + 1] == "auto" and addopts[addopts.index("-m") + 1] == "not slow"
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]["dev"]
    assert any(req.startswith("pytest-xdist") for req in dev)
    registered = {line.split(":")[0] for line in PYTEST_OPTIONS["markers"]}
    assert registered >= NOT_QUICK | {"quick"}
    for marker in ("quick", "slow"):
        assert f"`python -m pytest -q -m {marker}`" in README, marker


def _collected(marker: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                           "-m", marker, "tests/test_tiers.py", "tests/test_packaging.py", "tests/test_virtuoso_harness.py"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.cli
def test_the_tiers_select_by_their_markers() -> None:
    quick, slow = _collected("quick"), _collected("slow")
    assert "tests/test_tiers.py::test_every_shared_file_says_where_it_comes_from_and_where_it_goes" in quick
    assert "tests/test_tiers.py::test_the_tiers_select_by_their_markers" not in quick  # a cli test
    assert not any(name.startswith(("tests/test_packaging.py", "tests/test_virtuoso_harness.py")) for name in quick)
    assert slow and all(name.startswith("tests/test_packaging.py") for name in slow)  # slow, and cli


def test_every_shared_file_says_where_it_comes_from_and_where_it_goes() -> None:
    for key, shared in FILES.items():
        reason = missing_reason(key)
        assert shared.repository.startswith("https://github.com/") and shared.repository in reason, key
        assert shared.source in reason and str(shared_path(key)) in reason, key
        assert "PYQL_SHARED_DATA" in reason and str(SHARED_DATA) in reason, key
        row = next(line for line in README.splitlines() if line.startswith(f"  | `{shared.path}` |"))
        assert shared.source in row, (key, row)
