"""MarkQA's time properties: ``add_start_time``, ``add_end_time``, ``add_time`` (``wdt:P580``, ``wdt:P582``, ``wdt:P585``).

Each is a fact through a fixed Wikidata property (:class:`PropertyFact`,
compiled and written in an S-expression as the fact it is), written back
as ``action(entity, new_var)``; its variable holds a date.

Example:
    >>> from pyql.builder.query import Query
    >>> Query("wikidata").add_start_time("Q8", "start").actions()
    ['add_start_time(wd:Q8, ?start)']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyql.builder.kind import StepKind, declare_action, param, register_kind
from pyql.builder.kinds.fact import Fact, fact_sexpr
from pyql.builder.kinds.quantity import Described
from pyql.builder.terms import Variable

__all__ = ["PropertyFact", "StartTime", "EndTime", "PointInTime", "ADD_START_TIME", "ADD_END_TIME", "ADD_TIME"]


@dataclass(frozen=True)
class PropertyFact(Fact):
    """A fact through a fixed Wikidata property: ``add_start_time``, ``add_end_time``, ``add_time``.

    Written back as ``action(entity, new_var)``; compiled as the fact it is.
    """

    action: ClassVar[str] = ""

    def arguments(self) -> tuple[object, ...]:
        return (self.head, self.tail)


@dataclass(frozen=True)
class StartTime(PropertyFact):
    """``entity wdt:P580 ?new_var`` (``add_start_time``)."""

    action: ClassVar[str] = "add_start_time"


@dataclass(frozen=True)
class EndTime(PropertyFact):
    """``entity wdt:P582 ?new_var`` (``add_end_time``)."""

    action: ClassVar[str] = "add_end_time"


@dataclass(frozen=True)
class PointInTime(PropertyFact):
    """``entity wdt:P585 ?new_var`` (``add_time``)."""

    action: ClassVar[str] = "add_time"


def _value_kinds(step: PropertyFact) -> dict[Variable, str]:
    return {step.tail: "date"} if isinstance(step.tail, Variable) else {}


def _described(step: PropertyFact) -> tuple[Described, ...]:
    return (Described(step.tail, "date", step.head),) if isinstance(step.tail, Variable) else ()


ADD_START_TIME = declare_action(
    "add_start_time",
    param("entity", "markqa"),
    param("new_var", "markqa"),
    group="markqa",
    after="add_assignment",
    doc="""
    Get the start time (P580) of an entity into new_var.

    Args:
        entity: an entity id or a variable.
        new_var: the new variable.

    Example: add_start_time(Q8, ?start)
    """,
)

ADD_END_TIME = declare_action(
    "add_end_time",
    param("entity", "markqa"),
    param("new_var", "markqa"),
    group="markqa",
    after="add_start_time",
    doc="""
    Get the end time (P582) of an entity into new_var.

    Args:
        entity: an entity id or a variable.
        new_var: the new variable.

    Example: add_end_time(Q8, ?end)
    """,
)

ADD_TIME = declare_action(
    "add_time",
    param("entity", "markqa"),
    param("new_var", "markqa"),
    group="markqa",
    after="add_end_time",
    doc="""
    Get the point in time (P585) of an entity into new_var.

    Args:
        entity: an entity id or a variable.
        new_var: the new variable.

    Example: add_time(Q8, ?when)
    """,
)

register_kind(
    StepKind(
        PropertyFact, (ADD_START_TIME, ADD_END_TIME, ADD_TIME), value_kinds=_value_kinds, described=_described, sexpr=fact_sexpr
    )
)
