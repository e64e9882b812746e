"""docs/core.md's table of the Query builder methods is generated from the code and current (issue 25, item 7)."""

from __future__ import annotations

import doctest
import inspect
from pathlib import Path

from pyql.builder import expressions
from pyql.api_docs import BEGIN, END, builder_methods, builder_table, example_call
from pyql.builder.query import Query

ROOT = Path(__file__).resolve().parents[1]


def test_docs_core_md_holds_the_current_builder_table() -> None:
    text = (ROOT / "docs" / "core.md").read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert builder_table() in text, "docs/core.md is out of date: run  python -m pyql.api_docs docs/core.md"


def _doctest_names(name: str, doc: str) -> dict[str, object]:
    """The names the docstring's examples define before the first call of ``name`` (``q = ...``, imports)."""
    names: dict[str, object] = {"Query": Query, **{n: getattr(expressions, n) for n in expressions.__all__}}
    for example in doctest.DocTestParser().get_examples(doc):
        if f".{name}(" in example.source:
            break
        exec(example.source, names)  # noqa: S102 - our own docstrings
    return names


def test_every_builder_method_has_a_row_and_its_example_builds_a_query() -> None:
    table = builder_table()
    for name in builder_methods():
        assert f"| `{name}` |" in table
        example = example_call(name, inspect.getdoc(getattr(Query, name)) or "")
        if example:
            names = _doctest_names(name, inspect.getdoc(getattr(Query, name)) or "")
            assert isinstance(eval(example, names), Query), example  # noqa: S307 - our own docstrings
    assert {"add_fact", "add_type_constrain", "add_count", "set_answer"} <= set(builder_methods())
    assert "`add_type_constrain(type, var)`" in table and "`add_count(var, new_var, group_obj=None, group_by=())`" in table
