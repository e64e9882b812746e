"""The expression-function table of docs/core.md: every MarkQA function has an example, and it gives the SPARQL shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pyql.builder import expressions
from pyql.action_parser import parse_action
from pyql.environment.sparql_actions import markqa_argument

ROOT = Path(__file__).resolve().parents[1]
SECTION = (ROOT / "docs" / "core.md").read_text(encoding="utf-8").split("### MarkQA's expression functions")[1].split("###")[0]
ROWS = re.findall(r"^\| `(\w+)` \| `([^`]+)` \| `([^`]+)` \|$", SECTION, re.M)


def test_every_expression_function_has_an_example() -> None:
    assert {name for name, _, _ in ROWS} == set(expressions.__all__) - {
        "MAX_DEPTH", "OPERATORS", "FUNCTIONS", "Expression", "Var", "Num", "DateLit", "Entity", "Op", "Func",
        "OperandLike", "operand", "qid_problem"}


@pytest.mark.parametrize("name, example, sparql", ROWS, ids=[row[0] for row in ROWS])
def test_an_example_gives_the_sparql_shown(name: str, example: str, sparql: str) -> None:
    assert f"{name}(" in example
    names = {n: getattr(expressions, n) for n in expressions.__all__}
    value = eval(example, {"__builtins__": {}}, names)  # noqa: S307 (our own documentation's examples)
    assert value.sparql() == sparql
    back = markqa_argument("expression", parse_action(f"add_bind({value.markqa()}, ?x)").args[0])
    assert back == value  # the action language's form reads back
