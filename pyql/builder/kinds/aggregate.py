"""``add_count``, ``add_sum`` and ``add_avg``: an aggregate of a variable into a new one, over the query so far.

The rows so far become a sub-SELECT (:class:`Aggregation`) and afterwards
only the result (and the ``group_by`` variables) are visible.

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query().add_fact("?c", "a.b.c", "?s").add_count("?s", "?n", "?c")
    >>> [str(v) for v in q.variables], "GROUP BY ?c" in q.sparql()
    (['?c', '?n'], True)
"""

from __future__ import annotations

from dataclasses import dataclass

from pyql.builder.compiler import INDENT, Block, Folded, fold_rule, text_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import AGGREGATES, Step
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["Aggregate", "Aggregation", "ADD_COUNT", "ADD_SUM", "ADD_AVG"]


@dataclass(frozen=True)
class Aggregate(Step):
    """``new_var`` = ``func``(``var``) over the query so far (``add_count``, ``add_sum``, ``add_avg``).

    The rows so far become a subquery; afterwards only ``new_var`` (and the
    ``group_by`` variables) are visible.
    """

    func: str
    var: Variable
    new_var: Variable
    group_by: tuple[Variable, ...] = ()

    @property
    def action(self) -> str:  # type: ignore[override]
        return "add_" + self.func.lower()

    def __post_init__(self) -> None:
        func = self.func.upper() if isinstance(self.func, str) else self.func
        if func not in AGGREGATES:
            raise QueryError(f"unknown aggregation {self.func!r}; use one of {', '.join(AGGREGATES)}")
        object.__setattr__(self, "func", func)
        for what, var in (("counted variable", self.var), ("result variable", self.new_var)):
            if not isinstance(var, Variable):
                raise QueryError(f"the {what} of {self.action} must be a variable, not {var}")
        if self.var == self.new_var:
            raise QueryError(f"{self.action} stores its result in a new variable; {self.new_var} is the one being aggregated")
        object.__setattr__(self, "group_by", tuple(self.group_by))
        for var in self.group_by:
            if not isinstance(var, Variable):
                raise QueryError(f"group_by takes variables, not {var}")

    def arguments(self) -> tuple[object, ...]:
        """``(var, new_var)``, and MarkQA's ``group_obj`` when it groups by one variable."""
        if len(self.group_by) == 1:
            return (self.var, self.new_var, self.group_by[0])
        return (self.var, self.new_var)

    def variables(self) -> tuple[Variable, ...]:
        return (self.var, self.new_var, *self.group_by)


@dataclass(frozen=True)
class Aggregation:
    """An aggregate over the rows of ``block``: a sub-SELECT with its GROUP BY."""

    step: Aggregate
    block: Block


@fold_rule(Aggregate)
def _fold_aggregate(scope: Folded, step: Aggregate, index: int) -> Folded:
    block = Block(
        (Aggregation(step, scope.block),),
        (*step.group_by, step.new_var),
        None,
        (step.new_var,),
        step.func == "COUNT" and not step.group_by,
    )
    return Folded(block, None, scope.ask)


@text_rule(Aggregation)
def _aggregation_text(part: Aggregation, profile: Profile) -> str:
    step = part.step
    distinct = "DISTINCT " if step.func == "COUNT" else ""
    group = " ".join(v.sparql() for v in step.group_by)
    select = (group + " " if group else "") + f"({step.func}({distinct}{step.var.sparql()}) AS {step.new_var.sparql()})"
    sub = "{\n" + f"{INDENT}SELECT {select} WHERE " + part.block.pattern(profile, INDENT)
    if group:
        sub += f"\n{INDENT}GROUP BY {group}"
    return sub + "\n}"


def _sexpr(step: Aggregate, profile: Profile) -> SexprPart | None:
    """``COUNT`` of a whole set (no grouping); no other aggregate has an S-expression."""
    return SexprPart("count", item=step) if step.func == "COUNT" and not step.group_by else None


ADD_COUNT = declare_action(
    "add_count",
    param("count_var", "variable"),
    param("new_var", "variable"),
    param("group_obj", "markqa", None),
    group="default",
    after="add_min",
    doc="""
    Count the distinct values of count_var and store the number in the new variable new_var.

    Args:
        count_var: an existing variable.
        new_var: a new variable for the count.
        group_obj: optional (MarkQA's): count per value of this variable.

    Example: add_count(?cyclone, ?number)
    """,
)

ADD_SUM = declare_action(
    "add_sum",
    param("sum_var", "variable"),
    param("new_var", "variable"),
    param("group_obj", "markqa", None),
    group="default",
    after="add_count",
    doc="""
    Sum the values of sum_var and store the total in the new variable new_var.

    Args:
        sum_var: an existing variable holding numbers.
        new_var: a new variable for the sum.
        group_obj: optional (MarkQA's): sum per value of this variable.

    Example: add_sum(?fatalities, ?total)
    """,
)

ADD_AVG = declare_action(
    "add_avg",
    param("avg_var", "variable"),
    param("new_var", "variable"),
    param("group_obj", "markqa", None),
    group="default",
    after="add_sum",
    doc="""
    Average the values of avg_var and store the mean in the new variable new_var.

    Args:
        avg_var: an existing variable holding numbers.
        new_var: a new variable for the average.
        group_obj: optional (MarkQA's): average per value of this variable.

    Example: add_avg(?wind, ?mean)
    """,
)

register_kind(StepKind(Aggregate, (ADD_COUNT, ADD_SUM, ADD_AVG), answers=True, sexpr=_sexpr))
