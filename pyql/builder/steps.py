"""What every step is: the base class of the steps a query is made of, and the checks they share.

A :class:`~pyql.builder.query.Query` is a profile plus a tuple of steps; the
compiler (:mod:`pyql.builder.compiler`) turns the tuple into SPARQL. Keeping steps
as data makes queries immutable, undo trivial, and lets an environment
inspect exactly what the last step did.

Each step knows the PyQL function it stands for (``action``) and its
arguments as written back (``arguments()``), so a query can be rendered as
the action lines that build it.

The step kinds themselves, one frozen dataclass (or a family) each with
its rules, its actions and its hooks, are the modules of
:mod:`pyql.builder.kinds` (see :mod:`pyql.builder.kind`); nothing dispatches
on the type of a step but through their registries.

Example:
    >>> from pyql.builder.kinds.argmax import Argmax
    >>> from pyql.builder.terms import Variable
    >>> s = Argmax(Variable("time"), descending=True)
    >>> isinstance(s, Step), s.action, [str(a) for a in s.arguments()]
    (True, 'add_max', ['?time'])
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from grammars.vocabulary import AGGREGATIONS, COMPARISON_OPERATORS, canonical_operator
from pyql.errors import QueryError
from pyql.builder.terms import IRI, Variable

__all__ = [
    "Step",
    "ExpressionLike",
    "expression_variables",
    "check_variable",
    "check_property_id",
    "check_entity",
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


class ExpressionLike(Protocol):
    """What ``add_bind`` needs of an expression (:mod:`pyql.builder.expressions` builds them).

    ``variables()`` names the variables used (``"x"`` or ``Variable("x")``),
    ``sparql(profile)`` is its SPARQL text, every term written through
    :mod:`pyql.builder.escape`.
    """

    def variables(self) -> tuple[object, ...]: ...

    def sparql(self, profile: Any) -> str: ...


def expression_variables(expression: ExpressionLike) -> tuple[Variable, ...]:
    """The variables of an expression, as :class:`~pyql.builder.terms.Variable` (order of first use).

    Example:
        >>> class Sum:
        ...     def variables(self): return ("a", "b")
        ...     def sparql(self, profile): return "(?a + ?b)"
        >>> expression_variables(Sum())
        (Variable(name='a'), Variable(name='b'))
    """
    out = []
    for name in expression.variables():
        out.append(name if isinstance(name, Variable) else Variable(str(name).lstrip("?")))
    return tuple(dict.fromkeys(out))


def check_variable(value: object, what: str) -> None:
    """Refuse anything but a variable.

    Raises:
        QueryError: naming ``what`` and the value.

    Example:
        >>> check_variable("x", "the tag of add_quantity")
        Traceback (most recent call last):
        ...
        pyql.errors.QueryError: the tag of add_quantity must be a variable, not x
    """
    if not isinstance(value, Variable):
        raise QueryError(f"{what} must be a variable, not {value}")


_PID_RE = re.compile(r"P[1-9][0-9]*\Z")


def check_property_id(value: object, what: str) -> None:
    """Refuse anything but a Wikidata property id (``P1082``).

    Raises:
        QueryError: naming ``what`` and the value.

    Example:
        >>> check_property_id("P01", "the property of add_quantity")
        Traceback (most recent call last):
        ...
        pyql.errors.QueryError: the property of add_quantity must be a Wikidata property id such as P1082, not 'P01'
    """
    if not isinstance(value, str) or not _PID_RE.match(value):
        raise QueryError(f"{what} must be a Wikidata property id such as P1082, not {value!r}")


def check_entity(value: object, what: str) -> None:
    """Refuse anything but an entity (an IRI) or a variable.

    Raises:
        QueryError: naming ``what`` and the value.

    Example:
        >>> check_entity(Variable("city"), "the entity of add_quantity") is None
        True
    """
    if not isinstance(value, (IRI, Variable)):
        raise QueryError(f"{what} must be an entity such as Q64 or a variable, not {value}")


def __getattr__(name: str) -> type:
    """A step kind's class by its name, for code written when every kind was defined here (``from
    pyql.builder.steps import Fact``); the class lives in its kind's module of :mod:`pyql.builder.kinds`.

    Raises:
        AttributeError: no registered kind defines it.

    Example:
        >>> import pyql.builder.steps as steps
        >>> steps.Fact.__module__
        'pyql.builder.kinds.fact'
    """
    if name.startswith("__"):  # the import machinery asks for __path__ and the like: never a kind
        raise AttributeError(name)
    from pyql.builder.kind import kinds

    for kind in kinds():
        found = vars(sys.modules[kind.module]).get(name)
        if isinstance(found, type) and issubclass(found, Step):
            return found
    raise AttributeError(f"module 'pyql.builder.steps' has no attribute {name!r} (the step kinds are in pyql.builder.kinds)")
