"""Ctrl-C in the ``pyql`` command, whenever it arrives (issue 26, item 5; :mod:`pyql.interrupts`).

The command is run as a user runs it, the ``pyql`` console script (when
installed beside the interpreter) and ``python -m pyql.cli``, and sent
SIGINT at several moments of its life:
during the imports of the commands (each moment found by an extension
module of that import appearing in ``/proc/PID/maps``: the entry-point
metadata, the KB engine, the numeric libraries of the agent), then after
fixed delays, and while ``pyql eval`` waits on an LLM. Every time: status 130,
no traceback, the last line of stderr says it was interrupted, and the
process is gone within a second of the signal.

Before the handler is installed only light modules are imported (checked
in a fresh interpreter), so the window where Python's own report could
appear is the interpreter's start-up, not pyql's imports.
"""

from __future__ import annotations

import importlib.util
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pyql.cli import EXIT_INTERRUPTED
from tests.fault_servers import FakeLLMServer, GoldResponder, Reply
from tests.test_faults_cli import cli_env, demo_items

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "pyql"  # the console script of this environment
ENTRIES = {"module": [sys.executable, "-m", "pyql.cli"], "script": [str(SCRIPT)]}
# The exit must follow the signal within this many seconds (the goal of issue 26, item 5).
PROMPT_EXIT = 1.0

pytestmark = [pytest.mark.cli, pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc (Linux)")]


def _maps(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def _start(argv: list[str], entry: str = "module") -> subprocess.Popen[bytes]:
    if entry == "script" and not SCRIPT.is_file():
        pytest.skip(f"no pyql console script at {SCRIPT}")
    env = {**cli_env(), "PYTHONFAULTHANDLER": "1"}  # a process that hangs is made to show where (SIGABRT)
    return subprocess.Popen([*ENTRIES[entry], *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _interrupt(run: subprocess.Popen[bytes]) -> tuple[float, str]:
    """SIGINT now; the seconds until the process is gone, and its stderr."""
    sent = time.monotonic()
    run.send_signal(signal.SIGINT)
    try:
        _, stderr = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGABRT)
        pytest.fail(f"still running 60 s after SIGINT: {run.communicate()[1].decode('utf-8', 'replace')[-4000:]}")
    return time.monotonic() - sent, stderr.decode("utf-8", "replace")


def _check(run: subprocess.Popen[bytes], took: float, text: str, moment: str) -> None:
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, (moment, text)
    assert run.returncode == EXIT_INTERRUPTED, (moment, run.returncode, text)
    lines = text.strip().splitlines()
    assert lines and "interrupted" in lines[-1], (moment, text)
    assert took < PROMPT_EXIT, (moment, took)


def _slow_llm(items: list[dict[str, Any]]) -> FakeLLMServer:
    gold = GoldResponder(items)

    def plan(request: dict[str, Any]) -> Reply:
        reply = gold(request)
        if request["method"] == "POST":
            reply.delay = 30.0  # the model never answers in time: the run is under way when the signal comes
        return reply

    return FakeLLMServer(plan)


def _eval_argv(tmp_path: Path, url: str) -> list[str]:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in demo_items("q01", "q03")), encoding="utf-8")
    return ["eval", str(data), "--kb", "demo", "--out", str(tmp_path / "run.jsonl"), "--base-url", url,
            "--model", "fake", "--concurrency", "2"]


def test_importing_the_entry_point_loads_nothing_heavy() -> None:
    """``from pyql.cli import main`` imports only light modules: the handler is installed before the heavy ones."""
    probe = ("import sys; from pyql.cli import main; "
             "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('pyql', 'agent', 'correction', 'pyql_sql', 'grammars', 'lark', 'openai', 'pyoxigraph', 'rdflib', 'numpy'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=cli_env(), capture_output=True, check=True)
    loaded = set(done.stdout.decode().split())
    assert loaded == {"pyql", "pyql.cli", "pyql.echo", "pyql.errors", "pyql.interrupts"}, loaded


# An extension module first mapped while ``main`` imports the commands (after the handler is installed):
# the entry-point metadata (csv), the builder (decimal), the KB engine, the agent's numeric libraries.
# numpy is in no extra of its own (the local and embeddings extras bring it): without it there is no such moment.
NUMPY_HINT = ("numpy is not installed, so the command never imports it and there is no such moment to interrupt: "
              "pip install numpy (the local and embeddings extras bring it: pip install -e '.[local]')")
IMPORT_MARKERS = ["/_csv.", "/_decimal.", "/pyoxigraph.",
                  pytest.param("numpy/_core/_multiarray_umath", id="numpy/_core/_multiarray_umath",
                               marks=pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason=NUMPY_HINT))]


@pytest.mark.parametrize("marker", IMPORT_MARKERS)
def test_ctrl_c_during_the_imports_is_one_line_and_130(tmp_path: Path, marker: str) -> None:
    run = _start(_eval_argv(tmp_path, "http://127.0.0.1:9/v1"))
    deadline = time.monotonic() + 120
    while marker not in _maps(run.pid):
        if run.poll() is not None or time.monotonic() > deadline:
            run.kill()
            pytest.fail(f"{marker} was never loaded: {run.communicate()[1].decode()}")
        time.sleep(0.0005)
    took, text = _interrupt(run)
    _check(run, took, text, f"importing {marker}")
    assert text.strip() == "pyql: interrupted", text


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("delay", [0.05, 0.15, 0.3, 0.6, 1.2, 2.5, 5.0])
def test_ctrl_c_at_any_moment_of_an_eval_is_one_line_and_130(tmp_path: Path, delay: float, entry: str) -> None:
    """After fixed delays: the interpreter's start, imports, opening the KB and the run file, or the questions waiting on the LLM.

    The earliest moments may come before the interpreter has installed any
    handler (killed by the signal, no output: the shell's 130) or before the
    interpreter runs pyql's first line (only then may Python's own report
    appear); that is told apart by the traceback naming no pyql file.
    """
    with _slow_llm(demo_items("q01", "q03")) as llm:
        run = _start(_eval_argv(tmp_path, llm.url), entry)
        time.sleep(delay)
        took, text = _interrupt(run)
    if run.returncode == -signal.SIGINT and not text:
        return  # before the interpreter installed its handler: the default action, status 128 + 2 in a shell
    if _before_the_handler(text):
        return
    _check(run, took, text, f"{entry}, {delay} s in")


# The code that runs before pyql's handler exists: the package's (lazy) __init__, the handler's module, and the
# lines of pyql/cli.py that load and install it. Python's own report of an interrupt there is the one exclusion.
_BEFORE = ("from pyql import interrupts", "interrupts.guard_start(__name__)")


def _before_the_handler(text: str) -> bool:
    """Whether a traceback is of an interrupt before any pyql code past the handler's installation ran."""
    if "Traceback" not in text:
        return False
    frames = re.findall(r'File "([^"]+)", line \d+, in [^\n]*\n\s*([^\n]*)', text)
    # the console script (in the environment's bin/, which may sit inside the clone: .venv) is not pyql's code
    ours = [(file, line.strip()) for file, line in frames if file.startswith(str(ROOT)) and not file.startswith(sys.prefix)]
    if not ours:
        return True  # the interpreter's start-up (site) or the console script's import line, before any pyql file
    file, line = ours[-1]
    return file.endswith(("pyql/__init__.py", "pyql/interrupts.py")) or (file.endswith("pyql/cli.py") and line in _BEFORE)



def test_ctrl_c_while_requests_are_under_way_exits_within_a_second(tmp_path: Path) -> None:
    with _slow_llm(demo_items("q01", "q03")) as llm:
        run = _start(_eval_argv(tmp_path, llm.url))
        deadline = time.monotonic() + 120
        while len(llm.posts) < 2:  # both workers wait on the model
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()[1].decode()
            time.sleep(0.01)
        took, text = _interrupt(run)
    _check(run, took, text, "requests under way")
    assert text.strip().splitlines()[-1].startswith("pyql eval: interrupted (0 answered now"), text


def test_a_second_ctrl_c_during_the_clean_up_ends_the_process_at_once(tmp_path: Path) -> None:
    with _slow_llm(demo_items("q01", "q03")) as llm:
        run = _start(_eval_argv(tmp_path, llm.url))
        while "/pyoxigraph." not in _maps(run.pid):
            assert run.poll() is None, run.communicate()[1].decode()
            time.sleep(0.0005)
        run.send_signal(signal.SIGINT)
        took, text = _interrupt(run)
    assert "Traceback" not in text and run.returncode == EXIT_INTERRUPTED, text
    assert took < PROMPT_EXIT, took
