"""A step kind in one place: a toy kind made in this file alone becomes an action, documented, compiled and run.

The toy kind ``add_has_relation(var, relation)`` keeps the rows whose
``var`` has the relation (``FILTER EXISTS { ?var relation [] }``). Everything
it is lives below, as it would in its own module of ``pyql/builder/kinds/``:
the frozen step, its fold and text rules, its action declared as data
(parameters with their kinds, the docstring the LLM reads, its place after
``add_union``), a choose-mode hook, and its builder method. The registries
are scoped (:func:`pyql.builder.kind.registry_scope`, the compiler's rule
tables restored, the method patched), so the kind leaks into no other test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from agent.llm.gbnf import action_gbnf
from pyql.builder import compiler, kind
from pyql.builder.compiler import Folded, add_part, fold_rule, term_sparql, text_rule
from pyql.builder.kind import StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.query import Query
from pyql.builder.steps import Step, check_variable
from pyql.builder.terms import IRI, TermLike, Variable
from pyql.environment.actions import render_docs
from pyql.environment.next_steps import next_steps
from pyql.environment.sparql import SparqlEnvironment
from pyql.environment.sparql_actions import SparqlActions
from pyql.errors import ConversionError, QueryError
from pyql.interchange.sexpr import write_sexpr
from pyql.kb import KB
from tests.demo import DemoEnv

CATEGORY = "meteorology.tropical_cyclone.category"
DAMAGES = "meteorology.tropical_cyclone.damages"  # 11 of the 12 cyclones with a category have one


# -- the toy kind's "module" ----------------------------------------------------------


@dataclass(frozen=True)
class HasRelation(Step):
    """``var`` has ``relation`` to something (``add_has_relation``)."""

    var: Variable
    relation: IRI
    action: ClassVar[str] = "add_has_relation"

    def __post_init__(self) -> None:
        check_variable(self.var, "the variable of add_has_relation")
        if not isinstance(self.relation, IRI):
            raise QueryError(f"add_has_relation takes a relation name, not {self.relation}")

    def arguments(self) -> tuple[object, ...]:
        return (self.var, self.relation)


def _fold(scope: Folded, step: HasRelation, index: int) -> Folded:
    return Folded(add_part(scope.block, step), scope.answer, scope.ask)


def _text(part: HasRelation, profile: Profile) -> str:
    return f"FILTER EXISTS {{ {part.var.sparql()} {term_sparql(part.relation, profile)} [] }}"


def _choose(episode: Any) -> list[tuple[str, str]]:
    """The choose mode's candidates: the newest variable, with the relation this toy knows."""
    return [(f"add_has_relation({episode.variables[-1]}, {DAMAGES})", "constrain")] if episode.variables else []


ADD_HAS_RELATION = declare_action(
    "add_has_relation",
    param("var", "variable"),
    param("relation", "relation"),
    group="extra",
    after="add_union",
    doc="""
    Keep the rows whose var has the relation to something.

    Args:
        var: an existing variable.
        relation: a relation such as meteorology.tropical_cyclone.damages.

    Example: add_has_relation(?cyclone, meteorology.tropical_cyclone.damages)
    """,
)


def add_has_relation(self: Query, var: TermLike, relation: TermLike) -> Query:
    """The toy kind's builder method (a real kind's is a method of :class:`~pyql.builder.query.Query`)."""
    return Query(self.profile, (*self.steps, HasRelation(self.term(var), self.term(relation, "relation"))))


@pytest.fixture()
def toy_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    folds, texts = dict(compiler.FOLD_RULES), dict(compiler.TEXT_RULES)
    monkeypatch.setattr(Query, "add_has_relation", add_has_relation, raising=False)
    try:
        with kind.registry_scope():
            fold_rule(HasRelation)(_fold)
            text_rule(HasRelation)(_text)
            register_kind(StepKind(HasRelation, (ADD_HAS_RELATION,), choose=_choose))
            yield
    finally:
        for table, saved in ((compiler.FOLD_RULES, folds), (compiler.TEXT_RULES, texts)):
            table.clear()
            table.update(saved)


# -- what follows from it ----------------------------------------------------------------


def test_the_toy_kind_is_an_action_at_its_declared_place(toy_kind: None) -> None:
    order = kind.sparql_action_order()
    assert order.index("add_has_relation") == order.index("add_union") + 1
    assert "add_has_relation" not in kind.sparql_action_order(("default",))  # an extra: offered by name
    actions = SparqlActions(order)
    assert actions.names.index("add_has_relation") == actions.names.index("add_union") + 1
    spec = actions.spec("add_has_relation")
    assert spec.kind == "construct" and [(p.name, p.kind, p.required) for p in spec.params] == [
        ("var", "variable", True),
        ("relation", "relation", True),
    ]


def test_the_toy_kind_is_documented_everywhere(toy_kind: None) -> None:
    actions = SparqlActions(["add_fact", "add_has_relation", "execute"])
    markdown, prompt = render_docs(actions, "markdown"), render_docs(actions, "prompt")
    assert "## `add_has_relation(var, relation)`" in markdown and "| `relation` | relation | a relation such as" in markdown
    assert "2. `add_has_relation(var, relation)`\nKeep the rows whose var has the relation to something." in prompt
    tools = {t["function"]["name"]: t["function"] for t in json.loads(render_docs(actions, "openai-tools"))}
    assert tools["add_has_relation"]["parameters"]["required"] == ["var", "relation"]
    assert 'act-add-has-relation ::= "add_has_relation(" variable ws-sep relation ")"' in action_gbnf(actions)


def test_the_toy_kind_compiles(toy_kind: None) -> None:
    q = Query().add_fact("?c", CATEGORY, "?cat").add_has_relation("?c", DAMAGES)
    assert f"FILTER EXISTS {{ ?c <http://rdf.freebase.com/ns/{DAMAGES}> [] }}" in q.sparql()
    assert q.actions()[-1] == f"add_has_relation(?c, {DAMAGES})"
    with pytest.raises(ConversionError, match="the step add_has_relation has no S-expression"):
        write_sexpr(q.set_answer("?c"))  # a kind without an S-expression hook has none


def test_the_toy_kind_runs_on_the_demo_kb(toy_kind: None, demo_kb: KB) -> None:
    env = SparqlEnvironment(demo_kb, "which cyclones did damage?", actions=["add_fact", "add_has_relation", "set_answer", "execute"])
    for line in (f"add_fact(?c, {CATEGORY}, ?cat)", f"add_has_relation(?c, {DAMAGES})", "set_answer(?c)"):
        record = env.step(line)
        assert record.ok, record.observation
    result = env.step("execute()")
    assert result.ok and env.done
    # the same rows as joining the relation itself (a semi-join), and fewer than without the toy step
    joined = demo_kb.execute(Query().add_fact("?c", CATEGORY, "?cat").add_fact("?c", DAMAGES, "?w").set_answer("?c"))
    unfiltered = demo_kb.execute(Query().add_fact("?c", CATEGORY, "?cat").set_answer("?c"))
    assert set(result.result.answers()) == set(joined.answers()) and joined.answers()
    assert len(set(unfiltered.answers())) > len(set(joined.answers()))


def test_the_toy_kind_offers_its_choose_candidates(toy_kind: None, demo_env: DemoEnv) -> None:
    env = demo_env("which cyclones did damage?", actions=["add_fact", "add_has_relation", "execute"])
    assert env.step(f"add_fact(?c, {CATEGORY}, ?cat)").ok
    assert f"add_has_relation(?cat, {DAMAGES})" in [s.action for s in next_steps(env, verify=False)]
    bare = demo_env(actions=["add_fact", "execute"])  # not offered: no candidate
    assert bare.step(f"add_fact(?c, {CATEGORY}, ?cat)").ok
    assert not any(s.action.startswith("add_has_relation(") for s in next_steps(bare, verify=False))


def test_the_toy_kind_leaves_no_trace() -> None:
    assert "add_has_relation" not in kind.sparql_action_order()
    assert HasRelation not in compiler.FOLD_RULES and not hasattr(Query, "add_has_relation")
    with pytest.raises(Exception, match="add_has_relation"):
        SparqlActions(["add_has_relation"])
