"""Bad MarkQA programs through ``pyql compile``: one clear line on stderr, exit 2, never a traceback.

The issue's bad-input list, each case through the command line as a user
runs it: unknown functions and methods, wrong arity, a string where a number
belongs, an expression nested past a sane depth, a malformed QID or PID, and
builder refusals (a variable the query does not have). The message names the
line and the column of the argument (or the call) that is wrong, and what is
allowed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cli  # every case runs pyql compile

ROOT = Path(__file__).resolve().parents[1]

_DEEP_ADD = "add(" * 100 + "'pop'" + ", 1)" * 100
_DEEP_MIXED = "sub(mul(" * 40 + "'pop'" + ", 2), 1)" * 40

#: (statement on line 3, the line-and-column the message must name, words it must hold)
CASES = {
    "unknown-expression-function": ("a.add_bind(pow('pop', 2), 'y')", "line 3, column 12", "unknown function pow()"),
    "unknown-method": ("a.add_quantityy('Q64', 'P1082', 'x')", "line 3, column 1", "unknown method add_quantityy"),
    "method-too-few": ("a.add_quantity('Q64')", "line 3, column 1", "prop, tag missing"),
    "method-too-many": ("a.add_rank('pop', 'pop', 'r', 'extra')", "line 3, column 1", "takes 3 arguments"),
    "function-too-few": ("a.add_bind(sub('pop'), 'y')", "line 3, column 12", "sub() takes 2 arguments"),
    "function-too-many": ("a.add_bind(sub('pop', 1, 2), 'y')", "line 3, column 12", "got 3 positional"),
    "year-too-many": ("a.add_bind(year('pop', 'x'), 'y')", "line 3, column 12", "year() takes 1 argument"),
    "string-offset": ("a.add_max('pop', 'pop', 'two')", "line 3, column 25", "offset: expected a whole number"),
    "string-limit": ("a.add_max('pop', 'pop', 0, 'three')", "line 3, column 28", "limit: expected a whole number"),
    "string-to-date": ("a.add_bind(year(to_date('twenty')), 'y')", "line 3, column 25", "to_date() argument year"),
    "string-time": ("a.add_quantity('Q64', 'P1082', 'p2', 'last year')", "line 3, column 38", "time: expected a year"),
    "string-unit": ("a.add_quantity('Q64', 'P1082', 'p2', 2021, 'yes')", "line 3, column 44", "expected True or False"),
    "string-to-decimal": ("a.add_bind(to_decimal('abc'), 'y')", "line 3, column 23", "expected a number"),
    "deep-add": (f"a.add_bind({_DEEP_ADD}, 'y')", "line 3, column", "nested deeper than"),
    "deep-mixed": (f"a.add_bind({_DEEP_MIXED}, 'y')", "line 3, column", "nested deeper than"),
    "qid-entity": ("a.add_quantity('Q64x', 'P1082', 'p2')", "line 3, column 16", "'Q64x' is not a valid QID"),
    "qid-object": ("a.add_fact('pop', 'P31', 'wd:Q', 'wdt')", "line 3, column 26", "'wd:Q' is not a valid QID"),
    "qid-values": ("a.add_assignment(['Q1', 'Q2b'], 'c')", "line 3, column 25", "'Q2b' is not a valid QID"),
    "qid-type": ("a.add_type_constrain('Q5x', 'c')", "line 3, column 22", "'Q5x' is not a valid QID"),
    "pid-letters": ("a.add_quantity('Q64', 'P10x82', 'p2')", "line 3, column 23", "'P10x82' is not a valid PID"),
    "pid-no-p": ("a.add_quantity('Q64', 'X1082', 'p2')", "line 3, column 23", "'X1082' is not a valid PID"),
    "pid-fact": ("a.add_fact('Q64', 'P3a', 'x', 'wdt')", "line 3, column 19", "'P3a' is not a valid PID"),
    "pid-qualifier": ("a.add_quantity_with_qualifier('Q64', 'P1082', 'Pz', 'Q1', 'p2')", "line 3, column 47", "'Pz' is not a valid PID"),
    "prefix": ("a.add_fact('Q64', 'P31', 'Q5', 'zz')", "line 3, column 32", "statement-model prefix"),
    "unbound-variable": ("a.add_bind(sub('pop', 'nothing'), 'y')", "line 3, column 1", "?nothing not in the query"),
    "existing-variable": ("a.add_bind(sub('pop', 1), 'pop')", "line 3, column 1", "?pop already exists"),
}


def _compile(tmp_path: Path, statement: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "program.py"
    path.write_text(f"a = PyQL()\na.add_quantity('Q64', 'P1082', 'pop', 2021)\n{statement}\nprint(a.sparql)\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "pyql.cli", "compile", str(path)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_markqa_input_is_one_clear_line(tmp_path: Path, case: str) -> None:
    statement, where, words = CASES[case]
    run = _compile(tmp_path, statement)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"MarkQA program, {where}" in lines[0], lines[0]
    assert words in lines[0], lines[0]


def test_the_same_program_without_the_bad_line_compiles(tmp_path: Path) -> None:
    """The cases fail for their own line: the program around them is fine."""
    run = _compile(tmp_path, "a.add_bind(sub('pop', 1), 'y')")
    assert run.returncode == 0, run.stderr
    assert "BIND((?pop - 1) AS ?y)" in run.stdout
