"""``add_rank``: MarkQA's rank, 1 + the number of distinct values above the one ranked.

``FILTER(?rank_var < ?var_list)``, then ``(COUNT(DISTINCT ?var_list) + 1)``
in a sub-SELECT (:class:`Ranking`); afterwards only the rank is visible.

Example:
    >>> from pyql.builder.query import Query
    >>> q = (Query("wikidata").add_quantity("Q64", "P2046", "mine")
    ...      .add_type_constrain("Q515", "city").add_quantity("city", "P2046", "area"))
    >>> q.add_rank("mine", "area", "rank").variables
    (Variable(name='rank'),)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.compiler import INDENT, Block, Folded, add_part, fold_rule, text_rule
from pyql.builder.kind import StepKind, declare_action, param, register_kind
from pyql.builder.kinds.comparison import Filter
from pyql.builder.kinds.quantity import Focus
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, check_variable
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["Rank", "Ranking", "ADD_RANK"]


@dataclass(frozen=True)
class Rank(Step):
    """MarkQA's rank (``add_rank``): 1 + the number of distinct ``var_list`` values above ``rank_var``."""

    rank_var: Variable
    var_list: Variable
    new_var: Variable
    action: ClassVar[str] = "add_rank"

    def __post_init__(self) -> None:
        for what, var in (("rank_var", self.rank_var), ("var_list", self.var_list), ("new_var", self.new_var)):
            check_variable(var, f"{what} of add_rank")
        if self.new_var in (self.rank_var, self.var_list):
            raise QueryError(f"add_rank stores the rank in a new variable; {self.new_var} is one of those ranked")

    def arguments(self) -> tuple[object, ...]:
        return (self.rank_var, self.var_list, self.new_var)


@dataclass(frozen=True)
class Ranking:
    """The rank of ``add_rank``: ``(COUNT(DISTINCT ?var_list) + 1)`` over ``block`` (its FILTER included)."""

    step: Rank
    block: Block


@fold_rule(Rank)
def _fold_rank(scope: Folded, step: Rank, index: int) -> Folded:
    inner = add_part(scope.block, Filter(step.rank_var, "<", step.var_list))
    block = Block((Ranking(step, inner),), (step.new_var,), None, (step.new_var,), True)
    return Folded(block, None, scope.ask)


@text_rule(Ranking)
def _ranking_text(part: Ranking, profile: Profile) -> str:
    step = part.step
    select = f"((COUNT(DISTINCT {step.var_list.sparql()}) + 1) AS {step.new_var.sparql()})"
    return "{\n" + f"{INDENT}SELECT {select} WHERE " + part.block.pattern(profile, INDENT) + "\n}"


def _focus(step: Rank) -> Focus:
    """The value ranked and the values it is ranked among, on the rows before the rank (only the rank is visible after)."""
    return Focus((step.rank_var, step.var_list), before=True)


ADD_RANK = declare_action(
    "add_rank",
    param("rank_var", "markqa"),
    param("var_list", "markqa"),
    param("new_var", "markqa"),
    group="markqa",
    after="add_bind",
    doc="""
    Rank a value among values (largest first): 1 + the number of distinct values of var_list greater than rank_var.

    Args:
        rank_var: the variable holding the value ranked.
        var_list: the variable holding every value it is ranked among.
        new_var: the new variable for the rank.

    Example: add_rank(?berlin_area, ?area, ?rank)
    """,
)

register_kind(StepKind(Rank, (ADD_RANK,), answers=True, focus=_focus))
