"""``add_filter`` and ``add_compare``: a comparison ``left op right``, as a FILTER or as the yes/no question.

Both write the comparison alike (:func:`comparison_text`: a date literal
compares with a variable at the coarser precision of the two, as text).
``add_compare`` turns the query into an ``ASK`` (nesting an ordered block
first).

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query().add_fact("?c", "a.b.c", "?w")
    >>> q.add_filter("?w", ">", 200).sparql().splitlines()[-2].strip(), q.add_compare("?w", ">", 200).is_ask
    ('FILTER(?w > 200)', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pyql.builder.escape as escape
from grammars.vocabulary import ORDERING_OPERATORS
from pyql.builder.compiler import Folded, add_part, fold_rule, nested, term_sparql, text_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.kinds.quantity import Focus
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, normalize_operator
from pyql.builder.terms import IRI, Literal, Term, Variable
from pyql.errors import ConversionError, QueryError

__all__ = ["Filter", "Compare", "comparison_text", "ADD_FILTER", "ADD_COMPARE"]


@dataclass(frozen=True)
class Filter(Step):
    """A comparison ``left op right`` (``add_filter``).

    A date literal compares with a variable at the coarser precision of the
    two, as ISO text (Freebase mixes ``xsd:date``, ``gYear`` ...). ``native``
    compares with the engine's own ``op`` instead, which is the same and
    cheaper when every value of the variable has the literal's datatype
    (:meth:`pyql.kb.KB.native_compare` checks).
    """

    left: Term
    op: str
    right: Term
    native: bool = False
    action: ClassVar[str] = "add_filter"

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", normalize_operator(self.op))
        if not isinstance(self.native, bool):
            raise QueryError(f"native of {self.action} must be True or False, got {self.native!r}")

    def arguments(self) -> tuple[object, ...]:
        return (self.left, self.op, self.right)


@dataclass(frozen=True)
class Compare(Filter):
    """A yes/no comparison: the query becomes ``ASK`` (``add_compare``)."""

    action: ClassVar[str] = "add_compare"


@fold_rule(Filter)
def _fold_filter(scope: Folded, step: Filter, index: int) -> Folded:
    return Folded(add_part(scope.block, step), scope.answer, scope.ask)


@fold_rule(Compare)
def _fold_compare(scope: Folded, step: Compare, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = nested(block)
    return Folded(add_part(block, step), scope.answer, True)


def comparison_text(left: Term, op: str, right: Term, profile: Profile, native: bool = False) -> str:
    """A comparison; dates compare as text at the coarser of the two precisions (unless ``native``).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> comparison_text(Variable("d"), ">=", Literal("1990", escape.XSD + "gYear"), FREEBASE)
        '(isLiteral(?d) && SUBSTR(STR(?d), 1, STRLEN("1990")) >= SUBSTR("1990", 1, STRLEN(STR(?d))))'
    """
    date_side = None if native else next((t for t in (left, right) if isinstance(t, Literal) and t.is_date), None)
    other = right if date_side is left else left
    if date_side is not None and isinstance(other, Variable):
        constant = escape.literal(date_side.lexical)
        value = f"STR({other.sparql()})"
        var_text = f"SUBSTR({value}, 1, STRLEN({constant}))"
        const_text = f"SUBSTR({constant}, 1, STRLEN({value}))"
        lhs, rhs = (var_text, const_text) if other is left else (const_text, var_text)
        return f"(isLiteral({other.sparql()}) && {lhs} {op} {rhs})"
    return f"({term_sparql(left, profile)} {op} {term_sparql(right, profile)})"


@text_rule(Filter)  # add_filter and add_compare
def _filter_text(part: Filter, profile: Profile) -> str:
    return "FILTER" + comparison_text(part.left, part.op, part.right, profile, part.native)


def _sexpr(step: Filter, profile: Profile) -> SexprPart | None:
    """A filter of a variable: a comparison with a literal (``(lt r v)``), or a ``!=`` the form may imply."""
    if not isinstance(step.left, Variable):
        return None
    if step.op == "!=" and isinstance(step.right, (IRI, Variable)):
        return SexprPart("distinct", step.left, step)
    if step.op not in ORDERING_OPERATORS or not isinstance(step.right, Literal):
        raise ConversionError(f"add_filter({step.left}, {step.op}, {step.right}) has no S-expression")
    return SexprPart("comparison", step.left, step)


def _compare_focus(step: Compare) -> Focus:
    return Focus(step.variables(), before=True)  # the values compared, on the rows before the yes/no


ADD_FILTER = declare_action(
    "add_filter",
    param("ob1", "node"),
    param("op", "operator"),
    param("ob2", "node"),
    group="default",
    after="add_avg",
    doc="""
    Add a filter constraint: the result must satisfy "ob1 op ob2".

    ob1 and ob2 can be variables, numbers or dates; op is one of {operators}. For example, if ?length must be greater than 10, use add_filter(?length, >, 10).

    Args:
        ob1: a variable (or a value).
        op: one of {operators}.
        ob2: a variable, a number (10, 0.3) or a date (2005-08-23).

    Example: add_filter(?length, >, 10)
    """,
)

ADD_COMPARE = declare_action(
    "add_compare",
    param("ob1", "node"),
    param("op", "operator"),
    param("ob2", "node"),
    group="default",
    after="add_time_constrain",
    doc="""
    For a yes/no question: check whether "ob1 op ob2" holds; the query then answers yes or no.

    Args:
        ob1: a variable or a value.
        op: one of {operators}.
        ob2: a variable or a value.

    Example: add_compare(?wind1, >, ?wind2)
    """,
)

register_kind(StepKind(Filter, (ADD_FILTER,), sexpr=_sexpr))
register_kind(StepKind(Compare, (ADD_COMPARE,), focus=_compare_focus))
