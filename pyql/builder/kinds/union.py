"""``add_union``: a variable takes its values from any of its branches, SPARQL's ``UNION`` (S-expressions' ``OR``).

Each branch is a query of its own that binds the variable; it becomes a
``{ SELECT DISTINCT ?var WHERE { ... } }`` block (:class:`Alternatives`),
so only the variable joins the rest of the query.

Example:
    >>> from pyql.builder.query import Query
    >>> champion = Query().add_fact("?e", "sports.event.champion", "m.0j6tr")
    >>> runner_up = Query().add_fact("?e", "sports.event.runner_up", "m.0j6tr")
    >>> " UNION " in Query().add_union("?e", champion, runner_up).sparql()
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pyql.builder.compiler import INDENT, Folded, add_part, fold_rule, nested, text_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, check_variable
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["Disjunction", "Alternatives", "ADD_UNION"]


@dataclass(frozen=True)
class Disjunction(Step):
    """``var`` takes its values from any of ``branches`` (``add_union``): SPARQL's ``UNION``.

    Each branch is a query of its own that binds ``var``; it becomes a
    ``{ SELECT DISTINCT ?var WHERE { ... } }`` block, so only ``var`` joins
    the rest of the query (a branch's other variables stay inside it, and
    may have the same names in two branches). After the step ``var`` is
    visible as after a fact.

    Example:
        >>> from pyql.builder.query import Query
        >>> a, b = Query().add_fact("m.0a", "a.b.c", "?x"), Query().add_fact("m.0a", "a.b.d", "?x")
        >>> Disjunction(Variable("x"), (a, b)).action
        'add_union'
    """

    var: Variable
    branches: tuple[Any, ...]
    action: ClassVar[str] = "add_union"

    def __post_init__(self) -> None:
        object.__setattr__(self, "branches", tuple(self.branches))
        check_variable(self.var, "the variable of add_union")
        if len(self.branches) < 2:
            raise QueryError(f"add_union takes two or more branches (queries that bind {self.var}), got {len(self.branches)}")
        for number, branch in enumerate(self.branches, 1):
            if not hasattr(branch, "scope") or not hasattr(branch, "steps"):
                raise QueryError(f"the branches of add_union are queries (pyql.Query), not {branch!r}")
            if branch.scope.ask:
                raise QueryError(f"branch {number} of add_union is a yes/no query (add_compare); a branch binds {self.var}")
            if self.var not in branch.scope.block.variables:
                seen = ", ".join(str(v) for v in branch.scope.block.variables) or "none"
                raise QueryError(f"branch {number} of add_union does not bind {self.var} (its variables: {seen})")

    def arguments(self) -> tuple[object, ...]:
        return (self.var, *self.branches)

    def variables(self) -> tuple[Variable, ...]:
        return (self.var,)


@dataclass(frozen=True)
class Alternatives:
    """The part of ``add_union``: each branch's rows of ``var`` (a ``{ SELECT DISTINCT ?var ... }``), joined by ``UNION``."""

    step: Disjunction


@fold_rule(Disjunction)
def _fold_union(scope: Folded, step: Disjunction, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = nested(block)
    return Folded(add_part(block, Alternatives(step), (step.var,)), scope.answer, scope.ask)


@text_rule(Alternatives)
def _union_text(part: Alternatives, profile: Profile) -> str:
    """``{ SELECT DISTINCT ?v WHERE { ... } } UNION { ... }``, a branch's ORDER BY/LIMIT inside its own."""
    var = part.step.var.sparql()
    texts = []
    for branch in part.step.branches:
        block = branch.scope.block
        mods = "".join(f"{INDENT}{line}\n" for line in block.modifiers().split("\n") if line)
        texts.append("{\n" + f"{INDENT}SELECT DISTINCT {var} WHERE " + block.group(profile, INDENT) + "\n" + mods + "}")
    return " UNION ".join(texts)


def _sexpr(step: Disjunction, profile: Profile) -> SexprPart:
    return SexprPart("union", step.var, step)


ADD_UNION = declare_action(
    "add_union",
    param("var", "variable"),
    param("branch", "query"),
    param("branch_2", "query"),
    param("branch_3", "query", None),
    param("branch_4", "query", None),
    group="extra",
    doc="""
    var takes its values from any of the branches (up to four; SPARQL UNION); each branch is written query(action, ...) and binds var, and only var joins the query.

    Args:
        var: the variable the branches bind.
        branch: query(...) of the first way to reach var.
        branch_2: query(...) of the second way.
        branch_3: optional: a third query(...).
        branch_4: optional: a fourth query(...).

    Example: add_union(?x, query(add_fact(m.0j6tr, sports.team.championships, ?x)), query(add_fact(?x, sports.event.runner_up, m.0j6tr)))
    """,
)

register_kind(StepKind(Disjunction, (ADD_UNION,), sexpr=_sexpr))
