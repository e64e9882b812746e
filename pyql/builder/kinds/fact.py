"""``add_fact``: a triple pattern ``head relation tail``, the step most queries are made of.

It joins the current block; in an S-expression it is a ``JOIN`` (or, through
the profile's type relation onto a class, the class of its head).

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
    >>> type(q.steps[0]).__name__, q.actions()
    ('Fact', ['add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.compiler import Folded, add_part, fold_rule, term_sparql, text_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import IRI, Literal, Term, Variable
from pyql.errors import ConversionError, QueryError

__all__ = ["Fact", "ADD_FACT", "fact_sexpr"]


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


@fold_rule(Fact)
def _fold_fact(scope: Folded, step: Fact, index: int) -> Folded:
    return Folded(add_part(scope.block, step, step.variables()), scope.answer, scope.ask)


@text_rule(Fact)
def _fact_text(part: Fact, profile: Profile) -> str:
    return f"{term_sparql(part.head, profile)} {term_sparql(part.relation, profile)} {term_sparql(part.tail, profile)} ."


def fact_sexpr(step: Fact, profile: Profile) -> SexprPart:
    """A fact in an S-expression: a join, or the class of its head (``?x type.object.type C``, as gold SPARQL writes a class).

    Raises:
        ConversionError: the relation is a variable.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> f = Fact(Variable("x"), IRI(FREEBASE.type_predicate), IRI("http://rdf.freebase.com/ns/a.b"))
        >>> fact_sexpr(f, FREEBASE).role
        'class'
    """
    if not isinstance(step.relation, IRI):
        raise ConversionError(f"{step.action} with a variable relation ({step.relation}) has no S-expression")
    if step.relation.value == profile.type_predicate and isinstance(step.head, Variable) and isinstance(step.tail, IRI):
        # ?x type.object.type C (as gold SPARQL writes a class) is the triple add_type_constrain makes: (AND C ...)
        return SexprPart("class", step.head, step.tail)
    return SexprPart("join", item=step)


ADD_FACT = declare_action(
    "add_fact",
    param("head", "node"),
    param("relation", "relation"),
    param("tail", "node"),
    group="default",
    doc="""
    Add a triple pattern (head, relation, tail) to the query.

    Use a relation returned by get_relation; a forward relation of X is written add_fact(X, relation, ?new), a backward one add_fact(?new, relation, X).

    Args:
        head: an entity id or a variable.
        relation: a relation such as meteorology.tropical_cyclone.category.
        tail: an entity id, a variable or a value.

    Example: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)
    """,
)

register_kind(StepKind(Fact, (ADD_FACT,), sexpr=fact_sexpr))
