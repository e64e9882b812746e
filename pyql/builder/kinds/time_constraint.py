"""``add_time_constrain``: WebQSP's time-validity pattern, two FILTERs on a variable's start and end dates.

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query().add_fact("m.0s", "a.b.c", "?p").add_time_constrain(
    ...     "?p", "a.b.from", "a.b.to", "2005-12-31", "2005-01-01")
    >>> [(type(p).__name__, getattr(p, "end", None)) for p in q.scope.block.parts]
    [('Fact', None), ('TimeBound', False), ('TimeBound', True)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.compiler import Folded, add_part, fold_rule, term_sparql, text_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.kinds.comparison import comparison_text
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import IRI, Literal, Variable
from pyql.errors import QueryError

__all__ = ["TimeConstraint", "TimeBound", "ADD_TIME_CONSTRAIN"]


@dataclass(frozen=True)
class TimeConstraint(Step):
    """WebQSP's time-validity pattern (``add_time_constrain``).

    Keeps ``var`` whose ``start_relation`` value (if any) is not after
    ``start_before`` and whose ``end_relation`` value (if any) is not before
    ``end_after``: ``var`` was in force at some time in
    ``[end_after, start_before]``. Dates compare as the profile says
    (Freebase: at the coarser of the two precisions, so ``"2005"^^xsd:gYear``
    and ``2005-08-29`` both work).

    ``by_end`` says the constraint is named by its end relation, as an
    S-expression ``(TC X r.to 2011)`` names it and as WebQSP's gold SPARQL
    does when it writes the end's FILTER first: the same two FILTERs, only the
    form written back differs (it is not part of the action line).
    """

    var: Variable
    start_relation: IRI
    end_relation: IRI
    start_before: Literal
    end_after: Literal
    by_end: bool = False
    action: ClassVar[str] = "add_time_constrain"

    def __post_init__(self) -> None:
        if not isinstance(self.by_end, bool):
            raise QueryError(f"by_end of add_time_constrain must be True or False, got {self.by_end!r}")
        if not isinstance(self.var, Variable):
            raise QueryError(f"add_time_constrain constrains a variable, not {self.var}")
        for what, rel in (("start", self.start_relation), ("end", self.end_relation)):
            if not isinstance(rel, IRI):
                raise QueryError(f"the {what} relation of add_time_constrain must be a relation name, not {rel}")
        for what, value in (("start_before", self.start_before), ("end_after", self.end_after)):
            if not isinstance(value, Literal):
                raise QueryError(f"{what} of add_time_constrain must be a date such as 2011-12-31, not {value}")

    def arguments(self) -> tuple[object, ...]:
        return (self.var, self.start_relation, self.end_relation, self.start_before, self.end_after)


@dataclass(frozen=True)
class TimeBound:
    """One of the two FILTERs of a time constraint: its start side or its end side.

    ``index`` is the position of the step in the query; it names the
    helper variables (``?__t<index>_<i>``).
    """

    step: TimeConstraint
    index: int
    end: bool


@fold_rule(TimeConstraint)
def _fold_time(scope: Folded, step: TimeConstraint, index: int) -> Folded:
    block = add_part(add_part(scope.block, TimeBound(step, index, False)), TimeBound(step, index, True))
    return Folded(block, scope.answer, scope.ask)


@text_rule(TimeBound)
def _time_filter(bound: TimeBound, profile: Profile) -> str:
    """The FILTER of one side of a time constraint: no start (end), or one not after (before) the date."""
    step = bound.step
    v = step.var.sparql()
    first = 2 if bound.end else 0
    missing, present = (Variable(f"__t{bound.index}_{i}") for i in (first, first + 1))
    if bound.end:
        relation = term_sparql(step.end_relation, profile)
        test = comparison_text(present, ">=", step.end_after, profile)
    else:
        relation = term_sparql(step.start_relation, profile)
        test = comparison_text(present, "<=", step.start_before, profile)
    return (
        f"FILTER(NOT EXISTS {{ {v} {relation} {missing.sparql()} }} || "
        f"EXISTS {{ {v} {relation} {present.sparql()} . FILTER{test} }})"
    )


def _sexpr(step: TimeConstraint, profile: Profile) -> SexprPart:
    return SexprPart("time_span", step.var, step)


ADD_TIME_CONSTRAIN = declare_action(
    "add_time_constrain",
    param("var", "variable"),
    param("start_relation", "relation"),
    param("end_relation", "relation"),
    param("start_before", "node"),
    param("end_after", "node"),
    group="default",
    after="add_filter",
    doc="""
    Keep var only when it was in force at some time between end_after and start_before.

    var has a start date (start_relation) and an end date (end_relation); a missing date counts as open. To ask about the year 2005, use start_before 2005-12-31 and end_after 2005-01-01.

    Args:
        var: an existing variable, e.g. a position held.
        start_relation: the relation to its start date.
        end_relation: the relation to its end date.
        start_before: the latest allowed start date.
        end_after: the earliest allowed end date.

    Example: add_time_constrain(?position, government.government_position_held.from, government.government_position_held.to, 2005-12-31, 2005-01-01)
    """,
)

register_kind(StepKind(TimeConstraint, (ADD_TIME_CONSTRAIN,), sexpr=_sexpr))
