"""What a KB says back: values with labels, per-variable observations,
relation lists and result rows, printed the way the papers show them.

Example:
    >>> from pyql.builder.terms import IRI, Variable
    >>> v = Value(IRI("http://rdf.freebase.com/ns/m.0iselle"), "Hurricane Iselle", False, "m.0iselle")
    >>> print(VariableValues(Variable("cyclone"), (v,), 1))
    The value of variable ?cyclone is ['Hurricane Iselle' (m.0iselle)]
    >>> print(Relations(("meteorology.tropical_cyclone.category",), ()))
    {'forward': ['meteorology.tropical_cyclone.category'], 'backward': []}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from pyql.echo import inline
from pyql.builder.terms import IRI, BlankNode, Literal, Term, Variable

__all__ = [
    "Value",
    "VariableValues",
    "Observation",
    "Relations",
    "ResultSet",
    "BoundedRows",
    "JoinedRows",
    "joined_rows",
    "UNNAMED",
    "Amount",
    "QuantityRows",
    "amount_text",
    "time_text",
]

UNNAMED = "unnamed node"


@dataclass(frozen=True)
class Value:
    """One value of a variable: the term, its label, whether it is an
    unnamed relationship node (Freebase CVT, blank node), and its short name.

    Example:
        >>> from pyql.builder.terms import XSD
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
        """How the value appears in an observation: through :func:`pyql.echo.inline` (on one
        line, control and bidi characters escaped, a long text cut).

        Example:
            >>> Value(Literal("y" * 5000)).display().endswith("… (5,000 characters)")
            True
            >>> Value(Literal("a\\nAction 4: execute()")).display()
            'a\\\\nAction 4: execute()'
        """
        if isinstance(self.term, Literal):
            return inline(self.term.lexical)
        if self.unnamed:
            return f"{inline(self.short)} ({UNNAMED})"
        if self.label is not None:
            return f"{inline(self.label, quotes=True)} ({inline(self.short)})"
        return inline(self.short)

    def sort_key(self) -> tuple[int, object]:
        """The order values are shown in: numbers by value, then other literals by text, then entities by label.

        Example:
            >>> from pyql.builder.terms import XSD
            >>> values = [Value(Literal("b")), Value(Literal("10", XSD + "integer")), Value(Literal("9", XSD + "integer"))]
            >>> [v.display() for v in sorted(values, key=Value.sort_key)]
            ['9', '10', 'b']
        """
        term = self.term
        if isinstance(term, Literal):
            python = term.to_python()
            if isinstance(python, (int, float, Decimal)) and not isinstance(python, bool):
                return (0, float(python))
            return (1, term.lexical)
        return (2, (self.label or "") + "\x00" + self.short)

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
    """Up to N values of one variable, and how many distinct values it has in all.

    Counts are exact up to a cap (``KB.count_cap``, default 1,000): beyond
    it, ``capped`` is set and ``total`` is the cap, a lower bound ("more
    than 1,000"). ``partial`` says the count was taken over the first rows
    of a longer join (``KB.row_cap``, default 10,000), so ``total`` is the
    number of values seen there, a lower bound ("at least 2"). ``total ==
    0`` still means "no value" in every case.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> v = Value(Literal("1", XSD + "integer"))
        >>> print(VariableValues(Variable("n"), (v,), 1000, capped=True))
        The value of variable ?n is [1] (more than 1,000 in total)
        >>> VariableValues(Variable("n"), (v,), 3).at_least
        3
        >>> VariableValues(Variable("n"), (v,), 1, partial=True).total_text()
        'at least 1'
    """

    variable: Variable
    values: tuple[Value, ...]
    total: int
    capped: bool = False
    partial: bool = False

    @property
    def at_least(self) -> int:
        """A lower bound on the number of distinct values (exact when not ``capped``)."""
        return self.total + 1 if self.capped else self.total

    @property
    def all_unnamed(self) -> bool:
        """Whether every value seen is an unnamed relationship node."""
        return bool(self.values) and all(v.unnamed for v in self.values)

    def total_text(self) -> str:
        """The count as shown: ``"734"``, ``"more than 1,000"`` or (read from the first rows only) ``"at least 2"``."""
        if self.capped:
            return f"more than {self.total:,}"
        return f"at least {self.total:,}" if self.partial else str(self.total)

    def to_dict(self) -> dict[str, Any]:
        """The JSON view: ``{"total", "values"}``, plus ``"capped": true`` beyond the cap.

        Example:
            >>> VariableValues(Variable("x"), (), 1000, capped=True).to_dict()
            {'total': 1000, 'values': [], 'capped': True}
        """
        out: dict[str, Any] = {"total": self.total, "values": [x.to_dict() for x in self.values]}
        if self.capped:
            out["capped"] = True
        if self.partial and not self.capped:
            out["partial"] = True
        return out

    def __str__(self) -> str:
        shown = "[" + ", ".join(v.display() for v in self.values) + "]"
        more = (
            f" ({self.total_text()} in total)"
            if self.capped or self.partial or self.total > len(self.values)
            else ""
        )
        return f"The value of variable {self.variable} is {shown}{more}"


@dataclass(frozen=True)
class JoinedRows:
    """The first rows of the join over several variables: which values go together.

    Each variable's list (:class:`VariableValues`) is sorted on its own, so
    the lists alone do not say which cyclone had which winds; these rows do.
    At most as many rows as values per variable are shown; ``more`` says the
    join has more distinct rows.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> k = Value(IRI("http://rdf.freebase.com/ns/m.0dkl7"), "Hurricane Katrina", False, "m.0dkl7")
        >>> rows = JoinedRows((Variable("cyclone"), Variable("winds")), ((k, Value(Literal("280.0", XSD + "float"))),), True)
        >>> print(rows)
        Rows (?cyclone, ?winds): ('Hurricane Katrina', 280.0), ...
    """

    variables: tuple[Variable, ...]
    rows: tuple[tuple[Value | None, ...], ...]
    more: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON view: ``{"variables", "rows", "more"}``, a row a list of values (None: unbound)."""
        return {
            "variables": [str(v) for v in self.variables],
            "rows": [[x.to_dict() if x is not None else None for x in row] for row in self.rows],
            "more": self.more,
        }

    def __str__(self) -> str:
        shown = ", ".join("(" + ", ".join(_brief(x) for x in row) + ")" for row in self.rows)
        return f"Rows ({', '.join(str(v) for v in self.variables)}): {shown}{', ...' if self.more else ''}"


def _brief(value: Value | None) -> str:
    """A value in a row: its label when it has one (the lists above give the ids), else as in a list."""
    if value is None:
        return "unbound"
    if value.label is not None and not value.unnamed and not isinstance(value.term, Literal):
        return inline(value.label, quotes=True)
    return value.display()


def joined_rows(
    variables: tuple[Variable, ...], rows: list[tuple[Value | None, ...]], lists: tuple[VariableValues, ...], limit: int, more: bool = False
) -> JoinedRows | None:
    """The rows worth showing beside the lists: without the variables that have one value only (the same in every row).

    Rows are made distinct over the columns kept, sorted as values are,
    and cut at ``limit`` (``more`` is then set); None when fewer than two
    variables vary (the lists say it all).

    Example:
        >>> one = lambda t: Value(Literal(t))
        >>> lists = (VariableValues(Variable("c"), (one("x"),), 1), VariableValues(Variable("a"), (one("1"), one("2")), 2),
        ...          VariableValues(Variable("b"), (one("p"), one("q")), 2))
        >>> rows = [(one("x"), one("2"), one("q")), (one("x"), one("1"), one("p"))]
        >>> print(joined_rows((Variable("c"), Variable("a"), Variable("b")), rows, lists, 10))
        Rows (?a, ?b): (1, p), (2, q)
        >>> joined_rows((Variable("c"), Variable("a")), rows, lists, 10) is None
        True
    """
    fixed = {vv.variable for vv in lists if vv.total == 1 and not vv.capped and not vv.partial}
    keep = [i for i, v in enumerate(variables) if v not in fixed]
    if len(keep) < 2:
        return None
    unique = list(dict.fromkeys(tuple(row[i] for i in keep) for row in rows))
    shown = sorted(unique[:limit], key=lambda r: [x.sort_key() if x is not None else (9, "") for x in r])
    return JoinedRows(tuple(variables[i] for i in keep), tuple(shown), more or len(unique) > limit)


@dataclass(frozen=True)
class Observation:
    """The result of running the current query for a step.

    ``boolean`` is set for a yes/no (ASK) query; otherwise ``variables``
    holds each visible variable's values. ``rows`` holds every row of the
    query when its rows are bounded (after an argmax, a count) so that the
    next step, if it only changes the projection, reuses them
    (:class:`BoundedRows`). ``joined`` holds the first rows over the
    variables when there are several (:class:`JoinedRows`), shown after
    the lists so the reader sees which values go together.

    Example:
        >>> Observation((), boolean=True).is_empty, str(Observation((), boolean=False))
        (False, 'The answer is no')
    """

    variables: tuple[VariableValues, ...]
    boolean: bool | None = None
    queries: int = 0
    rows: BoundedRows | None = field(default=None, compare=False, repr=False)
    joined: JoinedRows | None = field(default=None, compare=False, repr=False)
    quantities: QuantityRows | None = field(default=None, compare=False, repr=False)

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
        return {str(v.variable): v.to_dict() for v in self.variables}

    def __str__(self) -> str:
        if self.boolean is not None:
            parts = ["The answer is " + ("yes" if self.boolean else "no")]
        elif self.is_empty:
            return "The query has no result"
        else:
            parts = [str(v) for v in self.variables]
        if self.joined is not None and self.joined.rows:
            parts.append(str(self.joined))
        if self.quantities is not None and (self.quantities.rows or self.quantities.error):
            parts.append(str(self.quantities))
        return ". ".join(parts)


# ---------------------------------------------------------------------------
# Quantities: amounts with their units and time qualifiers, by entity
# ---------------------------------------------------------------------------

_MIDNIGHT_RE = re.compile(r"(-?\d{4,}-\d\d-\d\d)T00:00:00(?:\.0+)?(?:Z|[+-]00:00)?\Z")
_DIMENSIONLESS = ("http://www.wikidata.org/entity/Q199",)
"""Wikidata's unit of dimensionless quantities, "1": an amount in it is shown without a unit."""


def amount_text(value: Value) -> str:
    """A number as a reader reads it: thousands separated, no trailing zeros; anything else as it is shown.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> amount_text(Value(Literal("3677472.0", XSD + "decimal"))), amount_text(Value(Literal("891.120", XSD + "decimal")))
        ('3,677,472', '891.12')
        >>> amount_text(Value(Literal("-0.5", XSD + "decimal"))), amount_text(Value(Literal("n/a")))
        ('-0.5', 'n/a')
    """
    term = value.term
    if not isinstance(term, Literal) or not term.is_numeric:
        return time_text(value)
    try:
        number = Decimal(term.lexical.strip())
    except InvalidOperation:
        return value.display()
    if not number.is_finite():
        return value.display()
    text = f"{number:,f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def time_text(value: Value) -> str:
    """A date as a reader reads it: the day alone when the time is midnight (Wikidata's dates).

    Example:
        >>> from pyql.builder.terms import XSD
        >>> time_text(Value(Literal("2021-12-31T00:00:00Z", XSD + "dateTime")))
        '2021-12-31'
        >>> time_text(Value(Literal("2021-12-31T10:30:00Z", XSD + "dateTime")))
        '2021-12-31T10:30:00Z'
    """
    if isinstance(value.term, Literal):
        match = _MIDNIGHT_RE.match(value.term.lexical.strip())
        if match:
            return match.group(1)
    return value.display()


@dataclass(frozen=True)
class Amount:
    """One value of a quantity (or a date) as an observation shows it: the value,
    its unit, the time qualifiers and rank of its statement, and the entity it belongs to.

    ``unit`` is the unit item (shown by its label; none for Wikidata's "1");
    with MarkQA's ``unit=True`` the value is converted to SI units, ``unit``
    is the SI unit and ``stored`` / ``stored_unit`` the amount as the KB
    holds it. ``rank`` is ``preferred`` or ``deprecated`` (a normal rank is
    not shown).

    Example:
        >>> from pyql.builder.terms import XSD
        >>> metre = Value(IRI("http://www.wikidata.org/entity/Q11573"), "metre", False, "Q11573")
        >>> foot = Value(IRI("http://www.wikidata.org/entity/Q3710"), "foot", False, "Q3710")
        >>> a = Amount(Value(Literal("6190.488", XSD + "decimal")), metre, Value(Literal("20310", XSD + "decimal")), foot,
        ...            point_in_time=Value(Literal("2015-09-02T00:00:00Z", XSD + "dateTime")), rank="preferred")
        >>> a.display()
        '6,190.488 metre (stored as 20,310 foot; 2015-09-02; preferred)'
    """

    value: Value
    unit: Value | None = None
    stored: Value | None = None
    stored_unit: Value | None = None
    point_in_time: Value | None = None
    start: Value | None = None
    end: Value | None = None
    rank: str | None = None
    entity: Value | None = None

    def display(self) -> str:
        """The value with its unit, then in parentheses the stored amount, the time qualifiers and the rank."""
        notes = []
        same_unit = self.stored_unit is not None and self.unit is not None and self.stored_unit.term == self.unit.term
        if self.stored is not None and not same_unit:
            notes.append("stored as " + _with_unit(self.stored, self.stored_unit))
        if self.point_in_time is not None:
            notes.append(time_text(self.point_in_time))
        if self.start is not None or self.end is not None:
            start = time_text(self.start) if self.start is not None else "?"
            end = time_text(self.end) if self.end is not None else "?"
            notes.append(f"from {start} to {end}")
        if self.rank:
            notes.append(self.rank)
        return _with_unit(self.value, self.unit) + (f" ({'; '.join(notes)})" if notes else "")

    def sort_key(self) -> tuple[object, ...]:
        """Values of one entity in time order (point in time, else start), then by value."""
        when = self.point_in_time or self.start
        return (0 if when is not None else 1, when.display() if when is not None else "", self.value.sort_key())

    def to_dict(self) -> dict[str, Any]:
        """The JSON view: the value, and each part that is known.

        Example:
            >>> from pyql.builder.terms import XSD
            >>> Amount(Value(Literal("5", XSD + "decimal"))).to_dict()
            {'value': '5'}
        """
        out: dict[str, Any] = {"value": self.value.to_dict()["value"]}
        for name in ("unit", "stored", "stored_unit", "point_in_time", "start", "end", "entity"):
            part = getattr(self, name)
            if part is not None:
                out[name] = part.to_dict() if isinstance(part.term, IRI) else part.to_dict()["value"]
        if self.rank:
            out["rank"] = self.rank
        return out


def _with_unit(value: Value, unit: Value | None) -> str:
    text = amount_text(value)
    if unit is None or (isinstance(unit.term, IRI) and unit.term.value in _DIMENSIONLESS) or unit.label == "1":
        return text
    return f"{text} {inline(unit.label) if unit.label is not None else unit.short}"


@dataclass(frozen=True)
class QuantityRows:
    """The quantities a step is about, with units, time qualifiers and the entity each belongs to.

    One variable: its values grouped by entity (``'Berlin' (Q64): 3,292,365
    (2011-05-09); 3,677,472 (2021-12-31)``). Several (an ``add_bind`` and its
    operands, a comparison, a rank and what it ranks among): the first rows
    of their join, each cell a value with its unit and entity, so the reader
    sees which amounts went into which result. ``more`` says the join has
    more rows than shown; ``error`` that they could not be read.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> berlin = Value(IRI("http://www.wikidata.org/entity/Q64"), "Berlin", False, "Q64")
        >>> pop = lambda n, t: Amount(Value(Literal(n, XSD + "decimal")), entity=berlin,
        ...                           point_in_time=Value(Literal(t, XSD + "dateTime")))
        >>> rows = ((pop("3677472", "2021-12-31T00:00:00Z"),), (pop("3292365", "2011-05-09T00:00:00Z"),))
        >>> print(QuantityRows((Variable("pop"),), rows))
        Quantities of ?pop by entity: 'Berlin' (Q64): 3,292,365 (2011-05-09); 3,677,472 (2021-12-31)
        >>> ratio = Amount(Value(Literal("1.1169", XSD + "decimal")))
        >>> print(QuantityRows((Variable("r"), Variable("pop")), ((ratio, rows[0][0]),), more=True))
        Quantities: per row (?r | ?pop): (1.1169 | 3,677,472 (2021-12-31) of 'Berlin' (Q64)); ...
    """

    variables: tuple[Variable, ...]
    rows: tuple[tuple[Amount | None, ...], ...]
    more: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON view: ``{"variables", "rows", "more"}``, a row a list of amounts (None: unbound)."""
        out: dict[str, Any] = {
            "variables": [str(v) for v in self.variables],
            "rows": [[a.to_dict() if a is not None else None for a in row] for row in self.rows],
            "more": self.more,
        }
        if self.error:
            out["error"] = self.error
        return out

    def __str__(self) -> str:
        if self.error:
            return f"Units and times of {', '.join(map(str, self.variables))} not read: {self.error}"
        more = "; ..." if self.more else ""
        # A column with one value in every row (the value ranked, a constant operand) is said once.
        fixed = [i for i in range(len(self.variables)) if len(self.rows) > 1 and len({row[i] for row in self.rows}) == 1]
        if len(fixed) == len(self.variables):
            fixed = fixed[1:]
        said = [f"{self.variables[i]} is {_cell(self.rows[0][i])} in every row" for i in fixed]
        rest = [i for i in range(len(self.variables)) if i not in fixed]
        if len(rest) == 1:
            shown = f"{self.variables[rest[0]]} by entity: " + " | ".join(self._groups(rest[0])) + more
        else:
            cells = (" | ".join(_cell(row[i]) for i in rest) for row in self.rows)
            names = " | ".join(str(self.variables[i]) for i in rest)
            shown = f"per row ({names}): " + "; ".join(f"({c})" for c in cells) + more
        return ("Quantities: " if said or len(rest) > 1 else "Quantities of ") + "; ".join(said + [shown])

    def _groups(self, column: int = 0) -> list[str]:
        """One group per entity (in order of label), its values in time order."""
        groups: dict[Term | None, list[Amount]] = {}
        entities: dict[Term | None, Value | None] = {}
        for row in self.rows:
            amount = row[column]
            if amount is None:
                continue
            key = amount.entity.term if amount.entity is not None else None
            groups.setdefault(key, []).append(amount)
            entities.setdefault(key, amount.entity)
        order = sorted(groups, key=lambda k: entities[k].sort_key() if entities[k] is not None else (9, ""))  # type: ignore[union-attr]
        out = []
        for key in order:
            values = "; ".join(a.display() for a in sorted(groups[key], key=Amount.sort_key))
            entity = entities[key]
            out.append(f"{entity.display()}: {values}" if entity is not None else values)
        return out


def _cell(amount: Amount | None) -> str:
    if amount is None:
        return "unbound"
    return amount.display() + (f" of {amount.entity.display()}" if amount.entity is not None else "")


@dataclass(frozen=True)
class Relations:
    """One-hop relations: forward (subject side) and backward (object side).

    ``truncated`` says the list may be incomplete: a hub's edges were read
    from a capped sample (or the relation limit was reached), so a relation
    that is not listed may still exist; :meth:`pyql.kb.base.KB.has_relation`
    answers for one relation with one bounded ASK.

    Example:
        >>> print(Relations(("a.b.c",), (), truncated=True))
        {'forward': ['a.b.c'], 'backward': []} (may be incomplete: only a sample of the edges was read; a relation not listed can still be used)
    """

    forward: tuple[str, ...]
    backward: tuple[str, ...]
    truncated: bool = False

    @property
    def is_empty(self) -> bool:
        return not self.forward and not self.backward

    @property
    def complete(self) -> bool:
        """Whether every relation is listed (no sample or limit cut the list)."""
        return not self.truncated

    def all(self) -> tuple[str, ...]:
        """Forward then backward relations, without duplicates."""
        return tuple(dict.fromkeys(self.forward + self.backward))

    def to_dict(self) -> dict[str, Any]:
        """The JSON view; ``"complete": false`` is added when the list may be incomplete.

        Example:
            >>> Relations(("a.b.c",), ()).to_dict()
            {'forward': ['a.b.c'], 'backward': []}
        """
        out: dict[str, Any] = {"forward": list(self.forward), "backward": list(self.backward)}
        if self.truncated:
            out["complete"] = False
        return out

    def __str__(self) -> str:
        text = str({"forward": list(self.forward), "backward": list(self.backward)})
        if self.truncated:
            text += INCOMPLETE_NOTE
        return text


INCOMPLETE_NOTE = " (may be incomplete: only a sample of the edges was read; a relation not listed can still be used)"
"""What a relation list that may be incomplete says after the lists."""


@dataclass(frozen=True)
class ResultSet:
    """Rows of a query with a label per value, or a boolean for ASK.

    Example:
        >>> from pyql.builder.terms import XSD
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


@dataclass(frozen=True)
class BoundedRows:
    """Every row of a query whose rows are bounded (an argmax's LIMIT, a count
    without GROUP BY), over all its visible variables, with labels.

    A step that changes only the projection (``set_answer``, ``execute()``
    after an argmax or a count) computes its observation or answers from
    these rows instead of evaluating the join again: ``key`` is the folded
    block the rows are of, and the rows are reused only for a query with an
    equal block.

    Example:
        >>> rows = BoundedRows("block", (Variable("p"),), ({"p": Value(Literal("a"))},))
        >>> rows.covers("block", [Variable("p")]), rows.covers("other", [Variable("p")])
        (True, False)
    """

    key: object
    variables: tuple[Variable, ...]
    rows: tuple[dict[str, Value | None], ...]

    def covers(self, key: object, variables: Any) -> bool:
        """Whether these are the rows of ``key`` and hold every one of ``variables``."""
        return (self.key is key or self.key == key) and set(variables) <= set(self.variables)

    def column(self, var: Variable) -> list[Value]:
        """The distinct values of one variable, in row order (the first row's label)."""
        out: dict[Term, Value] = {}
        for row in self.rows:
            value = row.get(var.name)
            if value is not None:
                out.setdefault(value.term, value)
        return list(out.values())

    def project(self, variables: Any) -> list[dict[str, Value | None]]:
        """The distinct rows over ``variables`` (what SELECT DISTINCT of them gives), in row order."""
        names = [v.name for v in variables]
        out: dict[tuple[Any, ...], dict[str, Value | None]] = {}
        for row in self.rows:
            key = tuple(row[n].term if row.get(n) is not None else None for n in names)  # type: ignore[union-attr]
            out.setdefault(key, {n: row.get(n) for n in names})
        return list(out.values())


def short_name(term: Term, shorten) -> str:  # type: ignore[no-untyped-def]
    """A term's short name: profile-shortened IRI, ``_:id`` or lexical form."""
    if isinstance(term, IRI):
        return shorten(term.value)
    if isinstance(term, BlankNode):
        return str(term)
    return str(term)
