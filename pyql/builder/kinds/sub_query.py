"""``add_sub_query``: independent queries joined with the query on their shared variables.

Each one becomes a ``{ SELECT ... }`` block (:class:`SubSelect`): it
projects its answer when it has an argmax and an answer (as MarkQA does),
else all its variables.

Example:
    >>> from pyql.builder.query import Query
    >>> a = Query("wikidata").add_quantity("Q64", "P1082", "pop_a")
    >>> b = Query("wikidata").add_quantity("Q90", "P1082", "pop_b")
    >>> Query("wikidata").add_sub_query(a, b).sparql().count("SELECT DISTINCT")
    3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pyql.builder.compiler import INDENT, Folded, add_part, fold_rule, nested, text_rule
from pyql.builder.kind import StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["SubQuery", "SubSelect", "ADD_SUB_QUERY"]


@dataclass(frozen=True)
class SubQuery(Step):
    """Independent queries joined with the query on their shared variables (``add_sub_query``).

    Each one becomes a ``{ SELECT ... }`` block: it projects its answer when
    it has an argmax and an answer (as MarkQA does), else all its variables.
    """

    queries: tuple[Any, ...]
    action: ClassVar[str] = "add_sub_query"

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))
        if not self.queries:
            raise QueryError("add_sub_query takes at least one query")
        for query in self.queries:
            if not hasattr(query, "scope") or not hasattr(query, "steps"):
                raise QueryError(f"add_sub_query takes queries (pyql.Query), not {query!r}")
            if query.scope.ask:
                raise QueryError("a yes/no query (after add_compare) cannot be a sub-query; compare in the outer query")

    def arguments(self) -> tuple[object, ...]:
        return self.queries

    def variables(self) -> tuple[Variable, ...]:
        return ()


@dataclass(frozen=True)
class SubSelect:
    """One query of ``add_sub_query`` as a ``{ SELECT ... }`` block: its folded ``scope``."""

    scope: Folded

    @property
    def projection(self) -> tuple[Variable, ...]:
        """What it returns: its answer after an argmax (as MarkQA), else all its variables."""
        block = self.scope.block
        if block.argmax is not None and self.scope.answer is not None and self.scope.answer in block.variables:
            return (self.scope.answer,)
        return block.variables


@fold_rule(SubQuery)
def _fold_sub_query(scope: Folded, step: SubQuery, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = nested(block)
    for query in step.queries:
        part = SubSelect(query.scope)
        block = add_part(block, part, part.projection)
    return Folded(block, scope.answer, scope.ask)


@text_rule(SubSelect)
def _sub_select_text(part: SubSelect, profile: Profile) -> str:
    block = part.scope.block
    projection = " ".join(v.sparql() for v in part.projection) or "*"
    mods = "".join(f"{INDENT}{line}\n" for line in block.modifiers().split("\n") if line)
    return "{\n" + f"{INDENT}SELECT DISTINCT {projection} WHERE " + block.group(profile, INDENT) + "\n" + mods + "}"


ADD_SUB_QUERY = declare_action(
    "add_sub_query",
    param("sub_query", "query"),
    param("sub_query_2", "query", None),
    param("sub_query_3", "query", None),
    param("sub_query_4", "query", None),
    group="markqa",
    after="add_rank",
    doc="""
    Join independent queries (up to four) with the query on their shared variables; each is written query(action, ...).

    Args:
        sub_query: query(...) holding the actions that build it.
        sub_query_2: optional: another query(...).
        sub_query_3: optional: another query(...).
        sub_query_4: optional: another query(...).

    Example: add_sub_query(query(add_quantity(Q64, P1082, ?a, 2021)), query(add_quantity(Q90, P1082, ?b, 2021)))
    """,
)

register_kind(StepKind(SubQuery, (ADD_SUB_QUERY,)))
