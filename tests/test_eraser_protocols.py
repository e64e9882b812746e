"""ERASER reads environments through protocols: no attribute probing in correction/.

Rules choose the side once (``correction.facts.kb_side`` /
``table_side``, by ``env.side``) and read a :class:`~correction.facts.KBRules`
or :class:`~correction.facts.TableRules`. These tests keep it so: no
``getattr``/``hasattr`` on an environment, a KB, a table or what hangs off
them, no bare ``type: ignore``, and the two environments really offer every
member of the protocol they are read through.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from correction.facts import KBRules, TableRules, kb_side, table_side
from pyql.kb import KB
from pyql.environment.sparql import SparqlEnvironment
from pyql_sql import Table
from pyql_sql.environment import TableEnvironment
from tests.demo import DemoEnv

ROOT = Path(__file__).resolve().parent.parent
CORRECTION = sorted((ROOT / "correction").rglob("*.py"))

#: Names whose attributes rules must read through a protocol, not probe.
_PROBED = re.compile(r"\b(env|kb|table|memory|query|executor|profile)\b")


def _probes(file: Path) -> list[str]:
    tree = ast.parse(file.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            target = ast.unparse(node.args[0]) if node.args else ""
            if _PROBED.search(target):
                found.append(f"{file.relative_to(ROOT)}:{node.lineno}: {node.func.id}({target}, ...)")
    return found


def test_no_attribute_probing_in_correction() -> None:
    found = [probe for file in CORRECTION for probe in _probes(file)]
    assert not found, "read these through correction.facts.KBRules / TableRules instead:\n" + "\n".join(found)


def test_no_bare_type_ignore_in_correction() -> None:
    found = []
    for file in CORRECTION:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"#\s*type:\s*ignore", line) and not re.search(r"#\s*type:\s*ignore\S*\s+#\s*\S", line):
                found.append(f"{file.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "a type: ignore needs a reason after it (a third-party typing gap), or a protocol:\n" + "\n".join(found)


def _members(protocol: type) -> set[str]:
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass is object or not getattr(klass, "_is_protocol", False):
            continue
        names.update(getattr(klass, "__annotations__", {}))
        methods = (n for n, v in vars(klass).items() if callable(v) or isinstance(v, property))
        names.update(n for n in methods if not n.startswith("_"))
    return names


@pytest.mark.parametrize(
    ("protocol", "make"),
    [
        (KBRules, lambda: SparqlEnvironment(KB.open("demo"))),
        (TableRules, lambda: TableEnvironment(Table.from_rows(["a"], [["1"]]))),
    ],
    ids=["KBRules", "TableRules"],
)
def test_environments_offer_their_rule_protocol(protocol: type, make: Any) -> None:
    env = make()
    members = _members(protocol)
    assert {"memory", "query"} <= members
    missing = sorted(name for name in members if not hasattr(env, name))
    assert not missing, f"{type(env).__name__} lacks {missing} of {protocol.__name__}"


def test_the_side_is_chosen_once_by_env_side(demo_env: DemoEnv) -> None:
    kb_env = demo_env()
    table_env = TableEnvironment(Table.from_rows(["a"], [["1"]]))
    assert kb_side(kb_env) is kb_env and kb_side(table_env) is None
    assert table_side(table_env) is table_env
    with pytest.raises(Exception, match="table rule ran on the 'sparql' side"):
        table_side(kb_env)
