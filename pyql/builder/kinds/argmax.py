"""``add_max`` and ``add_min``: keep the row(s) where a variable is largest or smallest.

An argmax is no part of a block but its solution modifiers (ORDER BY /
LIMIT / OFFSET): the step orders the whole block it applies to (nesting a
block that is ordered already), and the block writes its order through
:meth:`Argmax.order_by`. With ``ties`` the block keeps every row at the
extreme instead (a MAX/MIN sub-select and a FILTER, :meth:`Argmax.extreme_key`).

Example:
    >>> from pyql.builder.query import Query
    >>> print(Query().add_fact("?c", "a.b.c", "?t").add_max("?t", limit=2).scope.block.modifiers(), end="")
    ORDER BY DESC(IF(isNumeric(?t), ?t, STR(?t)))
    LIMIT 2
"""

from __future__ import annotations

from dataclasses import dataclass

from pyql.builder.compiler import Block, Folded, fold_rule, nested
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["Argmax", "ADD_MAX", "ADD_MIN"]


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

    ``answer`` is MarkQA's ``return_obj``: the variable the query returns
    afterwards (None: unchanged). ``limit`` None keeps every row after ``offset``.

    ``ties`` True keeps every row whose value of ``var`` equals the largest
    (smallest) one, as GrailQA's ARGMAX/ARGMIN do, instead of one row (it
    takes no ``offset`` and no ``limit``: they stay 0 and 1).
    """

    var: Variable
    descending: bool = True
    limit: int | None = 1
    offset: int = 0
    native: bool = False
    answer: Variable | None = None
    ties: bool = False

    @property
    def action(self) -> str:  # type: ignore[override]
        return "add_max" if self.descending else "add_min"

    def __post_init__(self) -> None:
        if not isinstance(self.var, Variable):
            raise QueryError(f"{self.action} orders by a variable, not {self.var}")
        limit = self.limit
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
            raise QueryError(f"the limit of {self.action} must be a whole number ≥ 1 (or None: no limit), got {limit!r}")
        if self.answer is not None and not isinstance(self.answer, Variable):
            raise QueryError(f"return_obj of {self.action} must be a variable, not {self.answer}")
        if not isinstance(self.offset, int) or isinstance(self.offset, bool) or self.offset < 0:
            raise QueryError(f"the offset of {self.action} must be a whole number ≥ 0, got {self.offset!r}")
        if not isinstance(self.native, bool):
            raise QueryError(f"native of {self.action} must be True or False, got {self.native!r}")
        if not isinstance(self.ties, bool):
            raise QueryError(f"ties of {self.action} must be True or False, got {self.ties!r}")
        if self.ties and (self.offset != 0 or self.limit != 1):
            raise QueryError(
                f"{self.action} with ties keeps every row at the extreme, so it takes no offset or limit "
                f"(got offset {self.offset!r}, limit {self.limit!r}); leave them at 0 and 1, or drop ties"
            )

    def arguments(self) -> tuple[object, ...]:
        """MarkQA's ``(max_obj, return_obj, offset, limit)`` then ``ties``, the defaults at the end left out."""
        if self.ties:
            return (self.var, self.answer if self.answer is not None else "*", self.offset, self.limit, True)
        if self.offset == 0 and self.limit == 1:
            return (self.var,) if self.answer is None else (self.var, self.answer)
        return (self.var, self.answer if self.answer is not None else "*", self.offset, self.limit)

    def _value_key(self) -> str:
        # Numbers order as numbers; dates of mixed precision (xsd:date, gYear,
        # dateTime) order as their ISO text, which every engine agrees on. A
        # native argmax (values of one kind) orders by the variable itself.
        v = "?" + self.var.name
        return v if self.native else f"IF(isNumeric({v}), {v}, STR({v}))"

    def extreme_key(self) -> str:
        """The key of an argmax with ties, in its MAX/MIN and in the FILTER equal to it.

        As the order key, but the numeric branch is ``?v + 0`` (the same
        number, of the same type): Virtuoso 7.2 answers ``MAX(IF(isNumeric(?v),
        ?v, STR(?v)))`` with no value when ``?v`` holds dates or strings (MIN is
        right), and with it a ties argmax over them gave no rows; with ``?v + 0``
        it gives the largest text, as pyoxigraph and rdflib do.

        Example:
            >>> Argmax(Variable("t"), ties=True).extreme_key()
            'IF(isNumeric(?t), ?t + 0, STR(?t))'
        """
        if self.native:
            return "?" + self.var.name
        v = "?" + self.var.name
        return f"IF(isNumeric({v}), {v} + 0, STR({v}))"

    def order_by(self) -> str:
        """The ORDER BY condition of the step.

        Example:
            >>> Argmax(Variable("t"), descending=False, native=True).order_by()
            'ASC(?t)'
        """
        key = self._value_key()
        return f"DESC({key})" if self.descending else f"ASC({key})"


@fold_rule(Argmax)
def _fold_argmax(scope: Folded, step: Argmax, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = nested(block)
    answer = step.answer if step.answer is not None else scope.answer
    return Folded(Block(block.parts, block.variables, step, block.computed, block.one_row, block), answer, scope.ask)


def _sexpr(step: Argmax, profile: Profile) -> SexprPart | None:
    """The superlative (``ARGMAX``/``ARGMIN``) when it keeps one row at the extreme (or every one on a tie)."""
    return SexprPart("superlative", item=step) if step.limit == 1 and step.offset == 0 else None


ADD_MAX = declare_action(
    "add_max",
    param("max_var", "variable"),
    param("return_obj", "markqa", None),
    param("offset", "whole", 0),
    param("limit", "whole", 1),
    param("ties", "flag", False),
    group="default",
    after="add_type_constrain",
    doc="""
    Constrain the query to return only the result where max_var is the biggest.

    Args:
        max_var: an existing variable holding numbers or dates.
        return_obj: optional (MarkQA's): the variable returned afterwards.
        offset: optional: rows skipped first (the third largest: 2).
        limit: optional: rows kept (default 1; none keeps all).
        ties: optional: true keeps every row whose max_var equals the largest value (offset 0, limit 1), not one.

    Example: add_max(?time)
    """,
)

ADD_MIN = declare_action(
    "add_min",
    param("min_var", "variable"),
    param("return_obj", "markqa", None),
    param("offset", "whole", 0),
    param("limit", "whole", 1),
    param("ties", "flag", False),
    group="default",
    after="add_max",
    doc="""
    Constrain the query to return only the result where min_var is the smallest.

    Args:
        min_var: an existing variable holding numbers or dates.
        return_obj: optional (MarkQA's): the variable returned afterwards.
        offset: optional: rows skipped first.
        limit: optional: rows kept (default 1; none keeps all).
        ties: optional: true keeps every row whose min_var equals the smallest value (offset 0, limit 1), not one.

    Example: add_min(?time)
    """,
)

register_kind(StepKind(Argmax, (ADD_MAX, ADD_MIN), sexpr=_sexpr))
