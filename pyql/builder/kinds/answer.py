"""``set_answer`` and ``set_head``: what the query returns, one variable or several.

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query("wikidata").add_time("Q8", "t").add_end_time("Q8", "e")
    >>> q.set_answer("t").answer, q.set_head("SELECT ?e ?t").variables
    (Variable(name='t'), (Variable(name='e'), Variable(name='t')))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.compiler import Block, Folded, fold_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import Variable
from pyql.errors import QueryError

__all__ = ["Answer", "Head", "SET_ANSWER", "SET_HEAD"]


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


@dataclass(frozen=True)
class Head(Step):
    """What the query returns when that is several variables (MarkQA's ``set_head('SELECT ?a ?b')``).

    One variable is an :class:`Answer`; here only ``variables`` stay visible
    afterwards, in that order, as after an aggregation.
    """

    variables_: tuple[Variable, ...]
    action: ClassVar[str] = "set_head"

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables_", tuple(self.variables_))
        if len(self.variables_) < 2 or not all(isinstance(v, Variable) for v in self.variables_):
            raise QueryError(f"set_head with several variables takes two or more variables, not {self.variables_}")
        if len(set(self.variables_)) != len(self.variables_):
            raise QueryError("set_head names each variable once")

    def arguments(self) -> tuple[object, ...]:
        return ("SELECT " + " ".join(v.sparql() for v in self.variables_),)

    def variables(self) -> tuple[Variable, ...]:
        return self.variables_


@fold_rule(Answer)
def _fold_answer(scope: Folded, step: Answer, index: int) -> Folded:
    return Folded(scope.block, step.var, scope.ask)


@fold_rule(Head)
def _fold_head(scope: Folded, step: Head, index: int) -> Folded:
    """Several answer variables: the block's rows, only those visible (projected in that order)."""
    block = scope.block
    narrowed = Block(block.parts, step.variables_, block.argmax, block.computed, block.one_row, block)
    return Folded(narrowed, None, scope.ask)


def _sexpr(step: Answer, profile: Profile) -> SexprPart:
    return SexprPart("answer", step.var)


SET_ANSWER = declare_action(
    "set_answer",
    param("answer_var", "variable"),
    group="default",
    after="add_compare",
    doc="""
    Set the variable the query returns; it must be an existing variable.

    Args:
        answer_var: an existing variable.

    Example: set_answer(?cyclone)
    """,
)

SET_HEAD = declare_action(
    "set_head",
    param("head", "markqa"),
    group="markqa",
    after="add_time",
    doc="""
    Set what the query returns, as MarkQA's set_head: SELECT ?var (or SELECT *); raw SPARQL is refused.

    Args:
        head: SELECT ?var or SELECT *.

    Example: set_head(SELECT ?ans)
    """,
)

register_kind(StepKind(Answer, (SET_ANSWER,), sexpr=_sexpr))
register_kind(StepKind(Head, (SET_HEAD,)))
