"""The README's examples run and print what the README shows.

* every ```` ```pycon ```` block is a doctest (``...`` in an output matches
  anything; whitespace differences are ignored), each in a fresh namespace;
* every ``$ command`` of a ```` ```console ```` block is run by bash in the
  repository, with ``pyql`` being ``python -m pyql.cli`` of this checkout,
  and its output must match the lines shown under it (same rules);
* every ``pyql ...`` command of a ```` ```sh ```` block is parsed by the real
  command-line parser (they may need an LLM, a file or the network, so they
  are not run): a renamed option or command fails here.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pyql.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

_BLOCK_RE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def blocks(kind: str) -> list[tuple[int, str]]:
    """(line number, text) of the README's fenced blocks of ``kind``."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in _BLOCK_RE.finditer(text) if m.group(1) == kind]


def console_commands() -> list[tuple[int, str, str]]:
    """(line, command, shown output) of every ``$`` command in the console blocks."""
    out: list[tuple[int, str, str]] = []
    for line_no, body in blocks("console"):
        lines = body.split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            start = i
            command = [lines[i][2:]]
            while command[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                command.append(lines[i])
            i += 1
            shown = []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            out.append((line_no + start, "\n".join(command), "\n".join(shown).strip("\n") + "\n"))
    return out


def sh_pyql_commands() -> list[tuple[int, str]]:
    """(line, words) of every ``pyql`` command in the sh blocks (continuations joined, comments dropped)."""
    out: list[tuple[int, str]] = []
    for line_no, body in blocks("sh"):
        joined = re.sub(r"\\\n\s*", " ", body)
        for offset, line in enumerate(joined.split("\n")):
            words = shlex.split(line, comments=True)
            segment: list[str] = []
            for word in [*words, "&&"]:
                if word in ("&&", "||", "|", ";"):
                    if segment and segment[0] == "pyql":
                        out.append((line_no + offset, shlex.join(segment)))
                    segment = []
                else:
                    segment.append(word)
    return out


def test_the_readme_has_examples_of_each_kind() -> None:
    assert not blocks("python"), "write Python examples as ```pycon doctests (>>> and the output), so they are checked"
    assert len(blocks("pycon")) >= 2
    assert console_commands()
    assert len(sh_pyql_commands()) >= 5


@pytest.mark.parametrize("line, body", blocks("pycon"), ids=[f"line {n}" for n, _ in blocks("pycon")])
def test_pycon_blocks_are_doctests(line: int, body: str) -> None:
    test = doctest.DocTestParser().get_doctest(body, {}, f"README.md:{line}", str(README), line)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment where ``pyql`` runs this checkout's CLI."""
    bin_dir = tmp_path_factory.mktemp("bin")
    script = bin_dir / "pyql"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pyql.cli "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


@pytest.mark.cli
@pytest.mark.parametrize(
    "line, command, shown", console_commands(), ids=[f"line {n}" for n, _, _ in console_commands()]
)
def test_console_commands_print_what_the_readme_shows(line: int, command: str, shown: str, shim: dict[str, str]) -> None:
    result = subprocess.run(
        ["bash", "-c", "set -o pipefail\n" + command],
        capture_output=True, text=True, cwd=ROOT, env=shim, timeout=300, check=False,
    )
    assert result.returncode == 0, f"README.md:{line}: {command}\n{result.stderr}"
    checker = doctest.OutputChecker()
    assert checker.check_output(shown, result.stdout, FLAGS), (
        f"README.md:{line}: the output differs from the README\n"
        + checker.output_difference(doctest.Example(command, shown), result.stdout, FLAGS)
    )


@pytest.mark.parametrize("line, command", sh_pyql_commands(), ids=[f"line {n}: {c[:40]}" for n, c in sh_pyql_commands()])
def test_sh_commands_parse(line: int, command: str) -> None:
    parser = build_parser()
    try:
        args = parser.parse_args(shlex.split(command)[1:])
    except SystemExit as exc:  # argparse: unknown option, bad choice ...
        pytest.fail(f"README.md:{line}: `{command}` does not parse (exit {exc.code})")
    assert args.command
