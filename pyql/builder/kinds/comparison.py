"""``add_filter`` and ``add_compare``: a comparison ``left op right``, as a FILTER or as the yes/no question.

A side is a term (a variable, an entity, a number, a date) or, as MarkQA
writes it, an expression of :mod:`pyql.builder.expressions`
(``add_filter(year('x1'), '>', 2001)``, ``add_filter(sub('x1', 'x2'), '>', 0)``).
Both steps write the comparison alike (:func:`comparison_text`: a date
literal compares with a variable as the profile says, as text at the
coarser precision of the two on Freebase, as dates at the literal's
precision on Wikidata, :func:`date_value_comparison`). ``add_compare`` turns
the query into an ``ASK`` (nesting an ordered block first).

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query().add_fact("?c", "a.b.c", "?w")
    >>> q.add_filter("?w", ">", 200).sparql().splitlines()[-2].strip(), q.add_compare("?w", ">", 200).is_ask
    ('FILTER(?w > 200)', True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Union

import pyql.builder.escape as escape
from grammars.vocabulary import ORDERING_OPERATORS
from pyql.builder.compiler import Folded, add_part, fold_rule, nested, term_sparql, text_rule
from pyql.builder.expressions import Expression
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.kinds.quantity import Focus
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, expression_variables, normalize_operator
from pyql.builder.terms import IRI, Literal, Term, Variable
from pyql.errors import ConversionError, QueryError

__all__ = ["Filter", "Compare", "Side", "comparison_text", "date_value_comparison", "side_text", "ADD_FILTER", "ADD_COMPARE"]

#: One side of a comparison: a term, or an expression (an operation or a function of MarkQA's).
Side = Union[Term, Expression]


@dataclass(frozen=True)
class Filter(Step):
    """A comparison ``left op right`` (``add_filter``).

    A side is a term or an expression (``YEAR(?t)``, ``(?a - ?b)``). A date
    literal compares with a variable at the coarser precision of the two, as
    ISO text (Freebase mixes ``xsd:date``, ``gYear`` ...). ``native``
    compares with the engine's own ``op`` instead, which is the same and
    cheaper when every value of the variable has the literal's datatype
    (:meth:`pyql.kb.KB.native_compare` checks).
    """

    left: Side
    op: str
    right: Side
    native: bool = False
    action: ClassVar[str] = "add_filter"

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", normalize_operator(self.op))
        if not isinstance(self.native, bool):
            raise QueryError(f"native of {self.action} must be True or False, got {self.native!r}")
        for side in (self.left, self.right):
            if not isinstance(side, (Term, Expression)):
                raise QueryError(
                    f"{self.action} compares variables, numbers, dates and expressions such as year(?t), not {side!r}"
                )

    def arguments(self) -> tuple[object, ...]:
        return (self.left, self.op, self.right)

    def variables(self) -> tuple[Variable, ...]:
        """The variables of both sides (an expression's too), in order."""
        out: list[Variable] = []
        for side in (self.left, self.right):
            out.extend(expression_variables(side) if isinstance(side, Expression) else (side,) if isinstance(side, Variable) else ())
        return tuple(dict.fromkeys(out))


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


def side_text(side: Side, profile: Profile) -> str:
    """One side of a comparison as SPARQL: a term, or an expression (its own parentheses).

    Example:
        >>> from pyql.builder.profiles import WIKIDATA
        >>> from pyql.builder.expressions import year
        >>> side_text(year("t"), WIKIDATA), side_text(Variable("t"), WIKIDATA)
        ('YEAR(?t)', '?t')
    """
    return side.sparql(profile) if isinstance(side, Expression) else term_sparql(side, profile)


def comparison_text(left: Side, op: str, right: Side, profile: Profile, native: bool = False) -> str:
    """A comparison. A variable and a date literal compare as the profile's ``date_comparison`` says (unless
    ``native``): as ISO text at the coarser of the two precisions (Freebase), or as dates at the literal's
    precision (Wikidata: :func:`date_value_comparison`).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> comparison_text(Variable("d"), ">=", Literal("1990", escape.XSD + "gYear"), FREEBASE)
        '(isLiteral(?d) && SUBSTR(STR(?d), 1, STRLEN("1990")) >= SUBSTR("1990", 1, STRLEN(STR(?d))))'
    """
    date_side = None if native else next((t for t in (left, right) if isinstance(t, Literal) and t.is_date), None)
    other = right if date_side is left else left
    if date_side is not None and isinstance(other, Variable):
        if profile.date_comparison == "value" and _date_parts(date_side) is not None:
            flipped = _FLIPPED[op] if date_side is left else op
            return date_value_comparison(other, flipped, date_side, profile)
        constant = escape.literal(date_side.lexical)
        value = f"STR({other.sparql()})"
        var_text = f"SUBSTR({value}, 1, STRLEN({constant}))"
        const_text = f"SUBSTR({constant}, 1, STRLEN({value}))"
        lhs, rhs = (var_text, const_text) if other is left else (const_text, var_text)
        return f"(isLiteral({other.sparql()}) && {lhs} {op} {rhs})"
    return f"({side_text(left, profile)} {op} {side_text(right, profile)})"


#: ``a op b`` is ``b flipped a``.
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
_DATE_RE = re.compile(r"(-?)([0-9]{4,})(?:-([0-9]{2})(?:-([0-9]{2})(?:T([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.[0-9]+)?)?)?)?(?:Z|[+-][0-9]{2}:[0-9]{2})?")


def _date_parts(literal: Literal) -> tuple[int, str] | None:
    """A date literal's year and what its precision adds, as the value's text writes it after the year: ``""`` for a
    year, ``"12"`` for a month, ``"12-17"`` for a day (a midnight ``dateTime`` too), ``"12-17T15:30:00"`` for a time.

    Example:
        >>> [_date_parts(Literal(t, escape.XSD + d)) for t, d in (("-0500", "gYear"), ("2004-12", "gYearMonth"),
        ...  ("2004-12-17T00:00:00Z", "dateTime"), ("0999-01-02T15:30:00Z", "dateTime"), ("soon", "date"))]
        [(-500, ''), (2004, '12'), (2004, '12-17'), (999, '01-02T15:30:00'), None]
    """
    found = _DATE_RE.fullmatch(literal.lexical.strip())
    if found is None:
        return None
    sign, year, month, day, time = found.groups()
    rest = "-".join(part for part in (month, day) if part)
    if time and time != "00:00:00":
        rest += "T" + time
    return int(sign + year), rest


def date_value_comparison(var: Variable, op: str, literal: Literal, profile: Profile) -> str:
    """``var op literal`` as dates, at the literal's precision, read from the value's text on every engine.

    The value's year is the number before its first ``-`` after the sign
    (``"-0500-03-01T00:00:00Z"``: -500; Virtuoso writes ``"-500-..."``, the
    same number; ``"12004-..."``: 12004), compared as a number; on the same
    year the text after it (``"03-01T..."``), cut to the literal's precision
    (and to the value's own, when coarser, as text comparisons do), compared
    as text. So years before 1000, BCE years and years past 9999 order as
    dates, and no engine has to read the value as a typed date (rdflib reads
    no BCE ``dateTime``, Virtuoso keeps them as incomplete values).

    Example:
        >>> from pyql.builder.profiles import WIKIDATA
        >>> print(date_value_comparison(Variable("t"), ">", Literal("-0044", escape.XSD + "gYear"), WIKIDATA))
        (isLiteral(?t) && xsd:integer(CONCAT(SUBSTR(STR(?t), 1, 1), STRBEFORE(CONCAT(SUBSTR(STR(?t), 2), "-"), "-"))) > -44)
    """
    parts = _date_parts(literal)
    if parts is None:
        raise ConversionError(f"{literal} is not a date such as 2004-12-17")
    year, rest = parts
    text = f"STR({var.sparql()})"
    value_year = (
        f"{profile.sparql_iri(escape.XSD + 'integer')}(CONCAT(SUBSTR({text}, 1, 1), "
        f'STRBEFORE(CONCAT(SUBSTR({text}, 2), "-"), "-")))'
    )
    the_year = term_sparql(Literal(str(year), escape.XSD + "integer"), profile)
    guard = f"isLiteral({var.sparql()})"
    if not rest:
        return f"({guard} && {value_year} {op} {the_year})"
    value_rest = f'SUBSTR(STRAFTER(SUBSTR({text}, 2), "-"), 1, {len(rest)})'
    the_rest = f"SUBSTR({escape.literal(rest)}, 1, STRLEN({value_rest}))"
    if op == "=":
        return f"({guard} && {value_year} = {the_year} && {value_rest} = {the_rest})"
    if op == "!=":
        return f"({guard} && ({value_year} != {the_year} || {value_rest} != {the_rest}))"
    strict = op[0]  # on another year the order is strict
    return f"({guard} && ({value_year} {strict} {the_year} || {value_year} = {the_year} && {value_rest} {op} {the_rest}))"


@text_rule(Filter)  # add_filter and add_compare
def _filter_text(part: Filter, profile: Profile) -> str:
    return "FILTER" + comparison_text(part.left, part.op, part.right, profile, part.native)


def _written(side: Side) -> str:
    """A side as an action writes it: an expression as MarkQA's calls (``year(?t)``), a term as itself."""
    return side.markqa() if isinstance(side, Expression) else str(side)


def _sexpr(step: Filter, profile: Profile) -> SexprPart | None:
    """A filter of a variable: a comparison with a literal (``(lt r v)``), or a ``!=`` the form may imply."""
    if isinstance(step.left, Expression) or isinstance(step.right, Expression):
        raise ConversionError(
            f"add_filter({_written(step.left)}, {step.op}, {_written(step.right)}) has no S-expression: "
            "a form compares a relation's value with a literal, not an expression"
        )
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
