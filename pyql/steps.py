"""The steps a query is made of, one frozen dataclass per PyQL function.

A :class:`~pyql.query.Query` is a profile plus a tuple of steps; the
compiler (:mod:`pyql.compiler`) turns the tuple into SPARQL. Keeping steps
as data makes queries immutable, undo trivial, and lets an environment
inspect exactly what the last step did.

Each step knows the PyQL function it stands for (``action``) and its
arguments as written back (``arguments()``), so a query can be rendered as
the action lines that build it.

A new step kind is a frozen dataclass here and its rules in
:mod:`pyql.compiler` (``@fold_rule(Kind)``: the scope after the step;
``@text_rule(Kind)``: its text in a block); nothing else dispatches on the
type of a step.

Example:
    >>> from pyql.terms import Variable, IRI
    >>> s = Argmax(Variable("time"), descending=True)
    >>> s.action, [str(a) for a in s.arguments()]
    ('add_max', ['?time'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grammars.vocabulary import AGGREGATIONS, COMPARISON_OPERATORS, canonical_operator
from pyql.errors import QueryError
from pyql.terms import IRI, Literal, Term, Variable

__all__ = [
    "Step",
    "Fact",
    "TypeConstraint",
    "Filter",
    "Argmax",
    "Aggregate",
    "TimeConstraint",
    "Compare",
    "Answer",
    "COMPARISON_OPERATORS",
    "AGGREGATES",
    "normalize_operator",
]

#: The aggregations a step may compute (the action language's vocabulary).
AGGREGATES = AGGREGATIONS


def normalize_operator(op: str) -> str:
    """Check a comparison operator and return its SPARQL form.

    Raises:
        QueryError: listing the allowed operators.

    Example:
        >>> normalize_operator("==")
        '='
        >>> normalize_operator("contains")
        Traceback (most recent call last):
        ...
        pyql.errors.QueryError: 'contains' is not a comparison operator; use one of >, <, >=, <=, =, !=
    """
    text = canonical_operator(op)
    if text is None:
        raise QueryError(f"{op!r} is not a comparison operator; use one of {', '.join(COMPARISON_OPERATORS)}")
    return text


@dataclass(frozen=True)
class Step:
    """Base class of steps. ``action`` is the PyQL function name."""

    action: ClassVar[str] = ""

    def arguments(self) -> tuple[object, ...]:
        """The step's arguments, in the order its PyQL function takes them."""
        raise NotImplementedError

    def variables(self) -> tuple[Variable, ...]:
        """Variables this step mentions (in argument order)."""
        return tuple(a for a in self.arguments() if isinstance(a, Variable))


@dataclass(frozen=True)
class Fact(Step):
    """A triple pattern ``head relation tail`` (``add_fact``)."""

    head: Term
    relation: Term
    tail: Term
    action: ClassVar[str] = "add_fact"

    def __post_init__(self) -> None:
        if isinstance(self.head, Literal):
            raise QueryError(
                f"the head of add_fact cannot be the literal {self.head.sparql()}; literals are only tails "
                "(swap head and tail, or use a variable)"
            )
        if not isinstance(self.relation, (IRI, Variable)):
            raise QueryError(
                f"the relation of add_fact must be a relation name or a variable, not {self.relation}"
            )

    def arguments(self) -> tuple[object, ...]:
        return (self.head, self.relation, self.tail)


@dataclass(frozen=True)
class TypeConstraint(Step):
    """``var`` is an instance of ``type`` (``add_type_constrain``)."""

    type: IRI
    var: Variable
    action: ClassVar[str] = "add_type_constrain"

    def __post_init__(self) -> None:
        if not isinstance(self.type, IRI):
            raise QueryError(f"the type of add_type_constrain must be a type name, not {self.type}")
        if not isinstance(self.var, Variable):
            raise QueryError(f"add_type_constrain constrains a variable, not {self.var}")

    def arguments(self) -> tuple[object, ...]:
        return (self.type, self.var)


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


@dataclass(frozen=True)
class Argmax(Step):
    """Keep the rows where ``var`` is largest (``add_max``) or smallest (``add_min``).

    ``native`` chooses the order key. False (the default) orders by
    ``IF(isNumeric(?v), ?v, STR(?v))``: numbers as numbers, dates of mixed
    types (``xsd:date``, ``xsd:gYear``, ``xsd:dateTime``) by their ISO text,
    alike on every engine. True orders by ``?v`` itself, the engine's own
    order, which an engine can answer from an index (Virtuoso: 60 ms instead
    of 5 s on a 10^6-row join); it is only right when every value of ``v`` is
    a number or every value has the same date type, which
    :meth:`pyql.kb.KB.native_order` checks.
    """

    var: Variable
    descending: bool = True
    limit: int = 1
    offset: int = 0
    native: bool = False

    @property
    def action(self) -> str:  # type: ignore[override]
        return "add_max" if self.descending else "add_min"

    def __post_init__(self) -> None:
        if not isinstance(self.var, Variable):
            raise QueryError(f"{self.action} orders by a variable, not {self.var}")
        if not isinstance(self.limit, int) or isinstance(self.limit, bool) or self.limit < 1:
            raise QueryError(f"the limit of {self.action} must be a whole number ≥ 1, got {self.limit!r}")
        if not isinstance(self.offset, int) or isinstance(self.offset, bool) or self.offset < 0:
            raise QueryError(f"the offset of {self.action} must be a whole number ≥ 0, got {self.offset!r}")
        if not isinstance(self.native, bool):
            raise QueryError(f"native of {self.action} must be True or False, got {self.native!r}")

    def arguments(self) -> tuple[object, ...]:
        return (self.var,)


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
        return (self.var, self.new_var)

    def variables(self) -> tuple[Variable, ...]:
        return (self.var, self.new_var, *self.group_by)


@dataclass(frozen=True)
class TimeConstraint(Step):
    """WebQSP's time-validity pattern (``add_time_constrain``).

    Keeps ``var`` whose ``start_relation`` value (if any) is not after
    ``start_before`` and whose ``end_relation`` value (if any) is not before
    ``end_after``: ``var`` was in force at some time in
    ``[end_after, start_before]``. Dates compare at the coarser of the two
    precisions, so ``"2005"^^xsd:gYear`` and ``2005-08-29`` both work.
    """

    var: Variable
    start_relation: IRI
    end_relation: IRI
    start_before: Literal
    end_after: Literal
    action: ClassVar[str] = "add_time_constrain"

    def __post_init__(self) -> None:
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
class Answer(Step):
    """The variable the query returns (``set_answer``)."""

    var: Variable
    action: ClassVar[str] = "set_answer"

    def __post_init__(self) -> None:
        if not isinstance(self.var, Variable):
            raise QueryError(f"set_answer takes an existing variable such as ?x, not {self.var}")

    def arguments(self) -> tuple[object, ...]:
        return (self.var,)
