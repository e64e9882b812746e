"""What a KB says back: values with labels, per-variable observations,
relation lists and result rows, printed the way the papers show them.

Example:
    >>> from pyql.terms import IRI, Variable
    >>> v = Value(IRI("http://rdf.freebase.com/ns/m.0iselle"), "Hurricane Iselle", False, "m.0iselle")
    >>> print(VariableValues(Variable("cyclone"), (v,), 1))
    The value of variable ?cyclone is ['Hurricane Iselle' (m.0iselle)]
    >>> print(Relations(("meteorology.tropical_cyclone.category",), ()))
    {'forward': ['meteorology.tropical_cyclone.category'], 'backward': []}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyql.terms import IRI, BlankNode, Literal, Term, Variable

__all__ = ["Value", "VariableValues", "Observation", "Relations", "ResultSet", "UNNAMED"]

UNNAMED = "unnamed node"


@dataclass(frozen=True)
class Value:
    """One value of a variable: the term, its label, whether it is an
    unnamed relationship node (Freebase CVT, blank node), and its short name.

    Example:
        >>> from pyql.terms import XSD
        >>> Value(Literal("85", XSD + "integer"), None, False, "85").display()
        '85'
    """

    term: Term
    label: str | None = None
    unnamed: bool = False
    short: str = ""

    def __post_init__(self) -> None:
        if not self.short:
            object.__setattr__(self, "short", str(self.term))

    def display(self) -> str:
        """How the value appears in an observation."""
        if isinstance(self.term, Literal):
            return self.term.lexical
        if self.unnamed:
            return f"{self.short} ({UNNAMED})"
        if self.label is not None:
            return f"{self.label!r} ({self.short})"
        return self.short

    def to_dict(self) -> dict[str, Any]:
        """The shape ``pyql run --json`` prints: ``{"value": ..., "label": ...}``.

        Example:
            >>> Value(IRI("http://rdf.freebase.com/ns/m.0c"), "X", False, "m.0c").to_dict()
            {'value': 'm.0c', 'label': 'X'}
        """
        if isinstance(self.term, Literal):
            return {"value": self.term.lexical, "label": None}
        out: dict[str, Any] = {"value": self.short, "label": self.label}
        if self.unnamed:
            out["unnamed"] = True
        return out

    def __str__(self) -> str:
        return self.display()


@dataclass(frozen=True)
class VariableValues:
    """Up to N values of one variable, and how many distinct values it has in all."""

    variable: Variable
    values: tuple[Value, ...]
    total: int

    @property
    def all_unnamed(self) -> bool:
        """Whether every value seen is an unnamed relationship node."""
        return bool(self.values) and all(v.unnamed for v in self.values)

    def __str__(self) -> str:
        shown = "[" + ", ".join(v.display() for v in self.values) + "]"
        more = f" ({self.total} in total)" if self.total > len(self.values) else ""
        return f"The value of variable {self.variable} is {shown}{more}"


@dataclass(frozen=True)
class Observation:
    """The result of running the current query for a step.

    ``boolean`` is set for a yes/no (ASK) query; otherwise ``variables``
    holds each visible variable's values.

    Example:
        >>> Observation((), boolean=True).is_empty, str(Observation((), boolean=False))
        (False, 'The answer is no')
    """

    variables: tuple[VariableValues, ...]
    boolean: bool | None = None
    queries: int = 0

    @property
    def is_empty(self) -> bool:
        """No row matched (never true for a yes/no answer)."""
        if self.boolean is not None:
            return False
        return not self.variables or any(v.total == 0 for v in self.variables)

    def get(self, var: Variable | str) -> VariableValues | None:
        """The values of one variable (``?x`` or ``x``), or None."""
        name = var.name if isinstance(var, Variable) else var.lstrip("?$")
        return next((v for v in self.variables if v.variable.name == name), None)

    @property
    def unnamed_variables(self) -> tuple[Variable, ...]:
        """Variables all of whose seen values are unnamed nodes."""
        return tuple(v.variable for v in self.variables if v.all_unnamed)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        if self.boolean is not None:
            return {"boolean": self.boolean}
        return {
            str(v.variable): {"total": v.total, "values": [x.to_dict() for x in v.values]} for v in self.variables
        }

    def __str__(self) -> str:
        if self.boolean is not None:
            return "The answer is " + ("yes" if self.boolean else "no")
        if self.is_empty:
            return "The query has no result"
        return ". ".join(str(v) for v in self.variables)


@dataclass(frozen=True)
class Relations:
    """One-hop relations: forward (subject side) and backward (object side)."""

    forward: tuple[str, ...]
    backward: tuple[str, ...]
    truncated: bool = False

    @property
    def is_empty(self) -> bool:
        return not self.forward and not self.backward

    def all(self) -> tuple[str, ...]:
        """Forward then backward relations, without duplicates."""
        return tuple(dict.fromkeys(self.forward + self.backward))

    def to_dict(self) -> dict[str, list[str]]:
        return {"forward": list(self.forward), "backward": list(self.backward)}

    def __str__(self) -> str:
        return str(self.to_dict())


@dataclass(frozen=True)
class ResultSet:
    """Rows of a query with a label per value, or a boolean for ASK.

    Example:
        >>> from pyql.terms import XSD
        >>> rs = ResultSet((Variable("n"),), ({"n": Value(Literal("3", XSD + "integer"))},))
        >>> print(rs)
        ?n
        3
    """

    variables: tuple[Variable, ...]
    rows: tuple[dict[str, Value | None], ...] = ()
    boolean: bool | None = None
    truncated: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.rows)

    def column(self, var: Variable | str) -> list[Value]:
        """The non-empty values of one variable, in row order."""
        name = var.name if isinstance(var, Variable) else var.lstrip("?$")
        return [row[name] for row in self.rows if row.get(name) is not None]  # type: ignore[misc]

    def answers(self) -> list[Value]:
        """The values of the first projected variable, without duplicates."""
        if not self.variables:
            return []
        return list(dict.fromkeys(self.column(self.variables[0])))

    def __str__(self) -> str:
        if self.boolean is not None:
            return "yes" if self.boolean else "no"
        header = "\t".join(str(v) for v in self.variables)
        lines = [header]
        for row in self.rows:
            cells = []
            for v in self.variables:
                value = row.get(v.name)
                cells.append("" if value is None else value.display())
            lines.append("\t".join(cells))
        if self.truncated:
            lines.append("... (truncated)")
        return "\n".join(lines)


def short_name(term: Term, shorten) -> str:  # type: ignore[no-untyped-def]
    """A term's short name: profile-shortened IRI, ``_:id`` or lexical form."""
    if isinstance(term, IRI):
        return shorten(term.value)
    if isinstance(term, BlankNode):
        return str(term)
    return str(term)
