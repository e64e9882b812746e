"""Every function of the five packages fits on a screen: at most 60 lines, or a reason.

A function's length runs from its ``def`` line to its last line, docstring
included (decorators not counted). A longer one must say why in its
docstring, on a line starting with ``Long because:`` (e.g. a table better
read whole). Methods and nested functions count as functions.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("grammars", "pyql", "pyql_sql", "correction", "agent")
MAX_LINES = 60
REASON = "Long because:"


def _has_reason(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    doc = ast.get_docstring(node) or ""
    return any(line.strip().startswith(REASON) for line in doc.splitlines())


def long_functions(source: str, filename: str = "<string>") -> list[str]:
    """``file:line qualified.name (N lines)`` for each function over the limit without a reason."""
    found: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > MAX_LINES and not _has_reason(child):
                    found.append(f"{filename}:{child.lineno} {name} ({length} lines)")
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source, filename), "")
    return found


def _package_files() -> list[Path]:
    return sorted(file for package in PACKAGES for file in (ROOT / package).rglob("*.py"))


def test_no_function_is_longer_than_60_lines_without_a_reason() -> None:
    files = _package_files()
    assert len(files) > 50  # the packages were found
    too_long = [
        entry
        for file in files
        for entry in long_functions(file.read_text(encoding="utf-8"), str(file.relative_to(ROOT)))
    ]
    assert not too_long, (
        f"{len(too_long)} functions are longer than {MAX_LINES} lines (def to last line); split them, "
        f"or give the reason on a docstring line starting with {REASON!r}:\n" + "\n".join(too_long)
    )


def _function(name: str, lines: int, doc: str = "A function.", indent: str = "") -> str:
    """Source of a function ``lines`` long (def and docstring included)."""
    body = [f"def {name}() -> int:", *f'    """{doc}"""'.splitlines(), "    x = 0"]
    body += ["    x += 1"] * (lines - len(body) - 1)
    body.append("    return x")
    return textwrap.indent("\n".join(body), indent) + "\n"


def test_the_checker_finds_a_long_function_and_accepts_a_reason() -> None:
    source = (
        _function("short", MAX_LINES)
        + _function("long", MAX_LINES + 1)
        + _function("tabled", MAX_LINES + 5, doc="A table.\n\n    Long because: a table of cases, read whole.\n    ")
        + "class Box:\n"
        + _function("method", MAX_LINES + 2, indent="    ")
        + "\n\ndef outer() -> None:\n"
        + _function("inner", MAX_LINES + 3, indent="    ")
    )
    found = long_functions(source, "synthetic.py")
    assert [entry.split(" ", 1)[1] for entry in found] == [
        f"long ({MAX_LINES + 1} lines)",
        f"Box.method ({MAX_LINES + 2} lines)",
        f"outer ({MAX_LINES + 4} lines)",
        f"outer.inner ({MAX_LINES + 3} lines)",
    ]
    assert found[0].startswith(f"synthetic.py:{MAX_LINES + 1} ")
    assert long_functions(_function("ok", MAX_LINES)) == []
