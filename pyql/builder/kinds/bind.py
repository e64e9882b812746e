"""``add_bind``: ``BIND(expression AS ?var)``, MarkQA's arithmetic and date functions; ``?var`` becomes the answer.

Example:
    >>> from pyql.builder.query import Query
    >>> from pyql.builder.expressions import sub
    >>> q = Query("wikidata").add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021)
    >>> q.add_bind(sub("b", "a"), "ans").sparql().splitlines()[-2].strip()
    'BIND((?b - ?a) AS ?ans)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pyql.builder.compiler import Folded, add_part, fold_rule, text_rule
from pyql.builder.expressions import DateLit, Func, Num, Op
from pyql.builder.kind import StepKind, declare_action, param, register_kind
from pyql.builder.kinds.quantity import Described, Focus
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, check_variable, expression_variables
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["Bind", "ADD_BIND", "gives_literal"]


@dataclass(frozen=True)
class Bind(Step):
    """``BIND(expression AS ?var)`` (``add_bind``); ``var`` becomes the answer, as in MarkQA."""

    expression: Any
    var: Variable
    action: ClassVar[str] = "add_bind"

    def __post_init__(self) -> None:
        if not (callable(getattr(self.expression, "sparql", None)) and callable(getattr(self.expression, "variables", None))):
            raise QueryError(
                f"add_bind takes an expression such as mul(div(sub(?b, ?a), ?a), 100), not {self.expression!r}"
            )
        check_variable(self.var, "the variable of add_bind")

    def arguments(self) -> tuple[object, ...]:
        return (self.expression, self.var)

    def variables(self) -> tuple[Variable, ...]:
        return tuple(dict.fromkeys(expression_variables(self.expression) + (self.var,)))


def gives_literal(expression: Any) -> bool:
    """Whether an expression's value is always a literal: arithmetic, a function, a number or a date, not a
    bare variable or entity (``add_bind('?a', 'copy')`` may copy an entity).

    Example:
        >>> from pyql.builder.expressions import Var, sub
        >>> gives_literal(sub("b", "a")), gives_literal(Var("a"))
        (True, False)
    """
    return isinstance(expression, (Op, Func, Num, DateLit))


@fold_rule(Bind)
def _fold_bind(scope: Folded, step: Bind, index: int) -> Folded:
    return Folded(add_part(scope.block, step, (step.var,)), step.var, scope.ask)


def _literal_variables(step: Bind) -> tuple[Variable, ...]:
    return (step.var,) if gives_literal(step.expression) else ()


@text_rule(Bind)
def _bind_text(part: Bind, profile: Profile) -> str:
    return f"BIND({part.expression.sparql(profile)} AS {part.var.sparql()})"


def _described(step: Bind) -> tuple[Described, ...]:
    return (Described(step.var, "value"),)


def _focus(step: Bind) -> Focus:
    """The result first, then its operands (which amounts gave which result)."""
    return Focus((step.var,) + tuple(v for v in step.variables() if v != step.var))


ADD_BIND = declare_action(
    "add_bind",
    param("expression", "expression"),
    param("var", "markqa"),
    group="markqa",
    after="add_quantity_by_qualifier",
    doc="""
    Compute an expression over existing variables and numbers into the new variable var.

    Expression functions: add, sub, mul, div, abs, ceil_mul, ceil_div, floor_mul, floor_div, avg, year, month, to_date, to_decimal.

    Args:
        expression: nested calls such as mul(div(sub(?b, ?a), ?a), 100).
        var: the new variable.

    Example: add_bind(mul(div(sub(?pop_2021, ?pop_2011), ?pop_2011), 100), ?ans)
    """,
)

register_kind(StepKind(Bind, (ADD_BIND,), answers=True, described=_described, focus=_focus, literal_variables=_literal_variables))
