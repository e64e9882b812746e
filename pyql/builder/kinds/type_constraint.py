"""``add_type_constrain``: a variable is an instance of a type (on Wikidata, of the type or a subclass of it).

Example:
    >>> from pyql.builder.query import Query
    >>> Query("wikidata").add_type_constrain("Q515", "city").sparql().splitlines()[-2].strip()
    '{ ?city wdt:P31 wd:Q515 . } UNION { ?city wdt:P31/wdt:P279+ wd:Q515 . }'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.compiler import Folded, add_part, fold_rule, term_sparql, text_rule
from pyql.builder.kind import SexprPart, StepKind, declare_action, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import IRI, Variable
from pyql.errors import QueryError

__all__ = ["TypeConstraint", "ADD_TYPE_CONSTRAIN"]


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


@fold_rule(TypeConstraint)
def _fold_type(scope: Folded, step: TypeConstraint, index: int) -> Folded:
    return Folded(add_part(scope.block, step, (step.var,)), scope.answer, scope.ask)


@text_rule(TypeConstraint)
def _type_text(part: TypeConstraint, profile: Profile) -> str:
    """``?x type T .``; with a subclass relation (Wikidata) an instance of T or of a subclass of it.

    That is ``?x wdt:P31/wdt:P279* T``, written as the union of its
    zero-step and its one-or-more-step halves (``wdt:P31 T`` or
    ``wdt:P31/wdt:P279+ T``): the same solutions, and Virtuoso 7.2 answers
    it in full, where it loses rows of the ``*`` path joined with a
    ``FILTER`` on a date or a sub-query (tests/test_virtuoso_wikidata.py).
    """
    var, kind, cls = part.var.sparql(), profile.sparql_iri(profile.type_predicate), term_sparql(part.type, profile)
    if not profile.subclass_predicate:
        return f"{var} {kind} {cls} ."
    subclass = profile.sparql_iri(profile.subclass_predicate)
    return f"{{ {var} {kind} {cls} . }} UNION {{ {var} {kind}/{subclass}+ {cls} . }}"


def _sexpr(step: TypeConstraint, profile: Profile) -> SexprPart:
    return SexprPart("class", step.var, step.type)


def _value_kinds(step: TypeConstraint) -> dict[Variable, str]:
    return {step.var: "entity"}  # instances of a class (an observation may show only the answer)


ADD_TYPE_CONSTRAIN = declare_action(
    "add_type_constrain",
    param("type", "relation"),
    param("var", "variable"),
    group="default",
    after="add_fact",
    doc="""
    Constrain a variable to be of a type.

    Args:
        type: a type such as meteorology.tropical_cyclone.
        var: an existing variable.

    Example: add_type_constrain(meteorology.tropical_cyclone, ?cyclone)
    """,
)

register_kind(StepKind(TypeConstraint, (ADD_TYPE_CONSTRAIN,), value_kinds=_value_kinds, sexpr=_sexpr))
