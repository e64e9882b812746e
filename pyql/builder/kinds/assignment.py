"""``add_assignment``: ``VALUES ?var { ... }``, a variable takes each of some values.

Example:
    >>> from pyql.builder.query import Query
    >>> Query("wikidata").add_assignment(["Q319", "Q2347978"], "car").sparql().splitlines()[-2].strip()
    'VALUES ?car { wd:Q319 wd:Q2347978 }'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.compiler import Folded, add_part, fold_rule, term_sparql, text_rule
from pyql.builder.kind import StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, check_variable
from pyql.builder.terms import IRI, Literal, Term, Variable
from pyql.errors import QueryError

__all__ = ["Assignment", "ADD_ASSIGNMENT"]


@dataclass(frozen=True)
class Assignment(Step):
    """``VALUES ?var { ... }`` (``add_assignment``): ``var`` takes each of the values."""

    values: tuple[Term, ...]
    var: Variable
    action: ClassVar[str] = "add_assignment"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise QueryError("add_assignment takes at least one value, e.g. add_assignment(['Q319', 'Q2347978'], 'car')")
        for value in self.values:
            if not isinstance(value, (IRI, Literal)):
                raise QueryError(f"the values of add_assignment are entities or literals, not {value}")
        check_variable(self.var, "the variable of add_assignment")

    def arguments(self) -> tuple[object, ...]:
        return (self.values, self.var)

    def variables(self) -> tuple[Variable, ...]:
        return (self.var,)


@fold_rule(Assignment)
def _fold_assignment(scope: Folded, step: Assignment, index: int) -> Folded:
    return Folded(add_part(scope.block, step, (step.var,)), scope.answer, scope.ask)


@text_rule(Assignment)
def _assignment_text(part: Assignment, profile: Profile) -> str:
    return f"VALUES {part.var.sparql()} {{ " + " ".join(term_sparql(v, profile) for v in part.values) + " }"


ADD_ASSIGNMENT = declare_action(
    "add_assignment",
    param("values", "values"),
    param("var", "markqa"),
    group="markqa",
    after="add_sub_query",
    doc="""
    Let a variable take each of some values (VALUES).

    Args:
        values: entity ids or values in parentheses.
        var: the variable.

    Example: add_assignment((Q319, Q2347978), ?car)
    """,
)

register_kind(StepKind(Assignment, (ADD_ASSIGNMENT,)))
