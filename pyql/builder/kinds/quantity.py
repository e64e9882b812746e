"""MarkQA's quantities on Wikidata's statement model: ``add_quantity``, ``add_quantity_with_qualifier``, ``add_quantity_by_qualifier``.

One family: the three forms share MarkQA's variable names for a statement's
amount (:class:`QuantityBase`), the amount's lines (and its SI conversion
with ``unit``) and their hooks: the amount is a number, the statement and
value node are the step's own (the choose mode offers nothing on them), and
a quantity observation describes the amount with its unit and time
qualifiers (:mod:`pyql.kb.quantities`).

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query("wikidata").add_quantity("Q64", "P1082", "pop", 2011)
    >>> [str(v) for v in kind_of(q.steps[0]).auxiliary_variables(q.steps[0])]
    ['?statement_pop', '?value_st_pop', '?time_pop']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pyql.builder.escape as escape
from pyql.builder.compiler import Folded, add_part, fold_rule, iri_text, term_sparql, text_rule
from pyql.builder.kind import StepKind, declare_action, kind_of, param, register_kind
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step, check_entity, check_property_id, check_variable
from pyql.builder.terms import IRI, Literal, Term, Variable
from pyql.errors import QueryError

__all__ = [
    "QuantityBase",
    "Quantity",
    "QuantityWithQualifier",
    "QuantityByQualifier",
    "WIKIBASE",
    "Described",
    "Focus",
    "quantity_call",
    "ADD_QUANTITY",
    "ADD_QUANTITY_WITH_QUALIFIER",
    "ADD_QUANTITY_BY_QUALIFIER",
]

#: The namespaces of Wikidata's statement model (written through the profile's prefixes).
_WD_PROP = "http://www.wikidata.org/prop/"
WIKIBASE = "http://wikiba.se/ontology#"


@dataclass(frozen=True)
class QuantityBase(Step):
    """What the three quantity steps share: MarkQA's variable names for a statement's amount.

    Without ``unit``: ``?statement_<tag>``, ``?value_st_<tag>`` and the amount
    ``?<tag>``. With ``unit``: the amount is ``?non_si_<tag>`` (value node
    ``?non_si_value_st_<tag>``), its unit's ``P2370`` conversion to SI
    ``?si_conversion_<tag>``, and ``?<tag>`` is bound to their product.
    """

    def _named(self, prefix: str) -> Variable:
        return Variable(prefix + self.tag.name)  # type: ignore[attr-defined]

    @property
    def statement_var(self) -> Variable:
        """``?statement_<tag>``."""
        return self._named("statement_")

    @property
    def value_node_var(self) -> Variable:
        """The statement's value node: ``?value_st_<tag>`` (``?non_si_value_st_<tag>`` with ``unit``)."""
        return self._named("non_si_value_st_" if self.unit else "value_st_")  # type: ignore[attr-defined]

    @property
    def amount_var(self) -> Variable:
        """The amount as stored: ``?<tag>`` (``?non_si_<tag>`` with ``unit``)."""
        return self._named("non_si_") if self.unit else self.tag  # type: ignore[attr-defined]

    @property
    def conversion_var(self) -> Variable:
        """``?si_conversion_<tag>`` (used with ``unit``)."""
        return self._named("si_conversion_")

    def _check_quantity(self) -> None:
        check_variable(self.tag, f"the tag of {self.action}")  # type: ignore[attr-defined]
        if not isinstance(self.unit, bool):  # type: ignore[attr-defined]
            raise QueryError(f"unit of {self.action} must be True or False, got {self.unit!r}")  # type: ignore[attr-defined]

    def variables(self) -> tuple[Variable, ...]:
        """The variables the step mentions or creates, in the order its pattern writes them."""
        head = [a for a in self.arguments()[:1] if isinstance(a, Variable)]
        made = [self.statement_var, self.value_node_var, self.amount_var]
        if self.unit:  # type: ignore[attr-defined]
            made += [self.conversion_var, self.tag]  # type: ignore[attr-defined]
        extra = [a for a in self.arguments()[1:] if isinstance(a, Variable)]
        return tuple(dict.fromkeys(head + made + extra))


@dataclass(frozen=True)
class Quantity(QuantityBase):
    """A quantity statement of ``entity`` (``add_quantity``), MarkQA's statement model.

    ``time`` is None (no time), a year (an int: the ``pq:P585`` point in time
    of that year), a date literal (the point in time ``?time_<tag>`` equals
    it, compared as a value so that every engine matches it) or a variable
    (the point in time is bound to it; MarkQA's ``time=True`` is ``?time_<tag>``).
    """

    entity: Term
    prop: str
    tag: Variable
    time: int | Literal | Variable | None = None
    unit: bool = False
    action: ClassVar[str] = "add_quantity"

    def __post_init__(self) -> None:
        check_entity(self.entity, "the entity of add_quantity")
        check_property_id(self.prop, "the property of add_quantity")
        self._check_quantity()
        time = self.time
        if isinstance(time, bool) or not (time is None or isinstance(time, (int, Literal, Variable))):
            raise QueryError(f"time of add_quantity must be a year, a date, a variable or None, not {time!r}")
        if isinstance(time, Literal) and not time.is_date:
            raise QueryError(f"time of add_quantity must be a date such as 2020-05-01, not {time.sparql()}")

    @property
    def time_var(self) -> Variable | None:
        """The variable of the point in time (``?time_<tag>`` for a year), or None."""
        if isinstance(self.time, Variable):
            return self.time
        return self._named("time_") if isinstance(self.time, (int, Literal)) else None

    def arguments(self) -> tuple[object, ...]:
        args: tuple[object, ...] = (self.entity, self.prop, self.tag)
        if self.time is not None or self.unit:
            args += (self.time if self.time is not None else False,)
        return args + ((True,) if self.unit else ())

    def variables(self) -> tuple[Variable, ...]:
        time = (self.time_var,) if self.time_var is not None else ()
        return tuple(dict.fromkeys(super().variables() + time))


@dataclass(frozen=True)
class QuantityWithQualifier(QuantityBase):
    """A quantity statement whose qualifier ``qualifier_prop`` is ``qualifier_obj`` (``add_quantity_with_qualifier``)."""

    entity: Term
    main_prop: str
    qualifier_prop: str
    qualifier_obj: Term
    tag: Variable
    unit: bool = False
    action: ClassVar[str] = "add_quantity_with_qualifier"

    def __post_init__(self) -> None:
        check_entity(self.entity, f"the entity of {self.action}")
        check_property_id(self.main_prop, f"main_prop of {self.action}")
        check_property_id(self.qualifier_prop, f"qualifier_prop of {self.action}")
        if not isinstance(self.qualifier_obj, (IRI, Variable, Literal)):
            raise QueryError(f"qualifier_obj of {self.action} must be an entity, a variable or a value")
        self._check_quantity()

    def arguments(self) -> tuple[object, ...]:
        args = (self.entity, self.main_prop, self.qualifier_prop, self.qualifier_obj, self.tag)
        return args + ((True,) if self.unit else ())


@dataclass(frozen=True)
class QuantityByQualifier(QuantityBase):
    """A quantity held by the qualifier ``qualifier_prop`` of the statement ``entity main_prop main_obj``
    (``add_quantity_by_qualifier``)."""

    entity: Term
    main_prop: str
    main_obj: Term
    qualifier_prop: str
    tag: Variable
    unit: bool = False
    action: ClassVar[str] = "add_quantity_by_qualifier"

    def __post_init__(self) -> None:
        check_entity(self.entity, f"the entity of {self.action}")
        check_property_id(self.main_prop, f"main_prop of {self.action}")
        check_property_id(self.qualifier_prop, f"qualifier_prop of {self.action}")
        if not isinstance(self.main_obj, (IRI, Variable, Literal)):
            raise QueryError(f"main_obj of {self.action} must be an entity, a variable or a value")
        self._check_quantity()

    def arguments(self) -> tuple[object, ...]:
        args = (self.entity, self.main_prop, self.main_obj, self.qualifier_prop, self.tag)
        return args + ((True,) if self.unit else ())


# -- compiling ------------------------------------------------------------------


@fold_rule(QuantityBase)  # add_quantity, add_quantity_with_qualifier, add_quantity_by_qualifier
def _fold_quantity(scope: Folded, step: QuantityBase, index: int) -> Folded:
    return Folded(add_part(scope.block, step, step.variables()), step.tag, scope.ask)  # type: ignore[attr-defined]


def _pid_iri(namespace: str, pid: str, profile: Profile) -> str:
    return iri_text(_WD_PROP + namespace + pid, profile)


def _amount_lines(step: QuantityBase, main_prop: str, value_ns: str, profile: Profile) -> list[str]:
    """The value node and amount lines of a quantity (and the SI conversion with ``unit``)."""
    st, node, amount = step.statement_var.sparql(), step.value_node_var.sparql(), step.amount_var.sparql()
    lines = [f"{st} {_pid_iri(value_ns, main_prop, profile)} {node} .", f"{node} {iri_text(WIKIBASE + 'quantityAmount', profile)} {amount} ."]
    if step.unit:  # type: ignore[attr-defined]
        conversion = "/".join(
            (
                iri_text(WIKIBASE + "quantityUnit", profile),
                _pid_iri("", "P2370", profile),
                _pid_iri("statement/value/", "P2370", profile),
                iri_text(WIKIBASE + "quantityAmount", profile),
            )
        )
        # A plain join: as OPTIONAL + FILTER(BOUND) Virtuoso 7.2 answers w24 in full, but pyoxigraph
        # then evaluates the conversion for every value node (0.8 s instead of 10 ms at 2*10^5 statements).
        factor = step.conversion_var.sparql()
        lines.append(f"{node} {conversion} {factor} .")
        lines.append(f"BIND(({amount} * {factor}) AS {step.tag.sparql()})")  # type: ignore[attr-defined]
    return lines


def _statement_line(step: QuantityBase, entity: Term, prop: str, profile: Profile) -> str:
    return f"{term_sparql(entity, profile)} {_pid_iri('', prop, profile)} {step.statement_var.sparql()} ."


@text_rule(Quantity)
def _quantity_text(part: Quantity, profile: Profile) -> str:
    """MarkQA's add_quantity: statement, value node, amount, [SI conversion], [point in time]."""
    lines = [_statement_line(part, part.entity, part.prop, profile)] + _amount_lines(part, part.prop, "statement/value/", profile)
    time_var = part.time_var
    if time_var is not None:
        lines.append(f"{part.statement_var.sparql()} {_pid_iri('qualifier/', 'P585', profile)} {time_var.sparql()} .")
    if isinstance(part.time, Literal):
        lines.append(f"FILTER({time_var.sparql()} = {term_sparql(part.time, profile)})")  # type: ignore[union-attr]
    elif isinstance(part.time, int) and time_var is not None:
        lines.append(f"FILTER(YEAR({time_var.sparql()}) = {escape.literal(str(part.time), escape.XSD + 'integer')})")
    return "\n".join(lines)


@text_rule(QuantityWithQualifier)
def _quantity_with_qualifier_text(part: QuantityWithQualifier, profile: Profile) -> str:
    """The statement's amount, with the qualifier ``pq:qualifier_prop qualifier_obj``."""
    amount = _amount_lines(part, part.main_prop, "statement/value/", profile)
    qualifier = (
        f"{part.statement_var.sparql()} {_pid_iri('qualifier/', part.qualifier_prop, profile)} "
        f"{term_sparql(part.qualifier_obj, profile)} ."
    )
    return "\n".join([_statement_line(part, part.entity, part.main_prop, profile), *amount[:2], qualifier, *amount[2:]])


@text_rule(QuantityByQualifier)
def _quantity_by_qualifier_text(part: QuantityByQualifier, profile: Profile) -> str:
    """The amount of the qualifier ``pqv:qualifier_prop`` of the statement ``entity main_prop main_obj``."""
    main = f"{part.statement_var.sparql()} {_pid_iri('statement/', part.main_prop, profile)} {term_sparql(part.main_obj, profile)} ."
    amount = _amount_lines(part, part.qualifier_prop, "qualifier/value/", profile)
    return "\n".join([_statement_line(part, part.entity, part.main_prop, profile), main, *amount])


# -- hooks ------------------------------------------------------------------------


@dataclass(frozen=True)
class Described:
    """A variable a quantity observation describes, and the query variables around it.

    ``kind`` is ``quantity`` (an amount of a statement), ``date`` (a date
    of ``add_time``/``add_start_time``/``add_end_time``) or ``value`` (an
    ``add_bind`` result, shown as it is). A quantity has its statement and
    value node (None when not visible, e.g. outside a sub-query), and with
    ``converted`` (``unit=True``) the amount as stored.

    Example:
        >>> Described(Variable("pop"), "quantity", statement=Variable("statement_pop")).needed()
        (Variable(name='pop'), Variable(name='statement_pop'))
    """

    var: Variable
    kind: str
    entity: Term | None = None
    statement: Variable | None = None
    value_node: Variable | None = None
    stored: Variable | None = None
    converted: bool = False

    def needed(self) -> tuple[Variable, ...]:
        """The query's variables the look-ups read: itself, its entity, statement, value node, stored amount."""
        extra = (self.entity,) if isinstance(self.entity, Variable) else ()
        parts = (self.statement, self.value_node, self.stored)
        return (self.var,) + extra + tuple(v for v in parts if v is not None)


@dataclass(frozen=True)
class Focus:
    """What a quantity observation after a step is about: the variables, and whether they are read on the
    query before the step (whose rows they are: a rank, a yes/no comparison)."""

    wanted: tuple[Variable, ...]
    before: bool = False



def _auxiliary_variables(step: QuantityBase) -> tuple[Variable, ...]:
    """The statement and value node, the unit conversion, and the point in time of a year or date asked for."""
    made = [step.statement_var, step.value_node_var]
    if step.unit:  # type: ignore[attr-defined]
        made += [step.conversion_var, step.amount_var]
    if isinstance(step, Quantity) and isinstance(step.time, (int, Literal)) and step.time_var is not None:
        made.append(step.time_var)
    return tuple(made)


def _value_kinds(step: QuantityBase) -> dict[Variable, str]:
    """The amount is a number, a point in time bound to a variable a date."""
    out = {step.tag: "number"}  # type: ignore[attr-defined]
    if isinstance(step, Quantity) and isinstance(step.time, Variable):
        out[step.time] = "date"
    return out


def _literal_variables(step: QuantityBase) -> tuple[Variable, ...]:
    """A converted amount (``unit=True``) is a BIND of the product: a number the engine may leave unbound."""
    return (step.tag,) if step.unit else ()  # type: ignore[attr-defined]


def _asked_year(step: QuantityBase) -> tuple[Variable, int] | None:
    """The year an ``add_quantity``'s amount was asked for (a year, or a date's year)."""
    if isinstance(step, Quantity) and isinstance(step.time, int):
        return step.tag, step.time
    if isinstance(step, Quantity) and isinstance(step.time, Literal) and step.time.lexical[:4].isdigit():
        return step.tag, int(step.time.lexical[:4])
    return None


def _described(step: QuantityBase) -> tuple[Described, ...]:
    """The amount, with its entity, statement and value node (and the amount as stored when converted)."""
    converted = bool(step.unit)  # type: ignore[attr-defined]
    stored = step.amount_var if converted else None
    return (Described(step.tag, "quantity", step.entity, step.statement_var, step.value_node_var, stored, converted),)  # type: ignore[attr-defined]


def quantity_call(
    step: QuantityBase,
    entity_text: Callable[[Any], str],
    tag: str | None = None,
    time: object = None,
    unit: bool | None = None,
    entity: str | None = None,
) -> str:
    """The action that makes a quantity step again, with another tag, time, unit or entity (ERASER's candidates).

    ``entity_text`` writes an entity or a variable as the action takes it.

    Example:
        >>> from pyql.builder.query import Query
        >>> step = Query("wikidata").add_quantity("Q64", "P1082", "pop", 2011).steps[0]
        >>> quantity_call(step, lambda t: str(t).rsplit("/", 1)[-1].rstrip(">"), tag="pop_2021", time=2021)
        'add_quantity(Q64, P1082, pop_2021, 2021)'
    """
    subject = entity or entity_text(step.entity)  # type: ignore[attr-defined]
    name = tag or step.tag.name  # type: ignore[attr-defined]
    use_unit = step.unit if unit is None else unit  # type: ignore[attr-defined]
    if isinstance(step, Quantity):
        when = step.time if time is None else time
        when_text = "false" if when is None or when is False else ("true" if when is True else _time_text(when, step))
        tail = f", {when_text}, true" if use_unit else (f", {when_text}" if when_text != "false" else "")
        return f"add_quantity({subject}, {step.prop}, {name}{tail})"
    # entity, then three arguments (properties, qualifier or main object), then the tag
    middle = [entity_text(a) for a in step.arguments()[1:4]]
    return f"{step.action}({', '.join([subject, *middle, name])}{', true' if use_unit else ''})"


def _time_text(when: object, step: Quantity) -> str:
    if isinstance(when, Literal):
        return when.lexical[:10]
    if isinstance(when, Variable):
        return "true" if when == Variable("time_" + step.tag.name) else str(when)
    return str(when)


# -- the actions ------------------------------------------------------------------

ADD_QUANTITY = declare_action(
    "add_quantity",
    param("entity", "markqa"),
    param("prop", "markqa"),
    param("tag", "markqa"),
    param("time", "time", False),
    param("unit", "flag", False),
    group="markqa",
    doc="""
    Get the amount of a quantity statement of an entity into ?tag (Wikidata's p:/psv:/wikibase:quantityAmount).

    time: a year (the statement's point in time P585 is in that year), a date, a variable to bind the point in time to, or true to get it as ?time_tag. unit: true converts the amount to SI units.

    Args:
        entity: an entity id such as Q64, or a variable.
        prop: a quantity property such as P1082.
        tag: the new variable for the amount, e.g. pop_2011.
        time: optional: a year, a date, a variable or true.
        unit: optional: true to convert to SI units.

    Example: add_quantity(Q64, P1082, pop_2011, 2011)
    """,
)

ADD_QUANTITY_WITH_QUALIFIER = declare_action(
    "add_quantity_with_qualifier",
    param("entity", "markqa"),
    param("main_prop", "markqa"),
    param("qualifier_prop", "markqa"),
    param("qualifier_obj", "markqa"),
    param("tag", "markqa"),
    param("unit", "flag", False),
    group="markqa",
    after="add_quantity",
    doc="""
    Get the amount of a quantity statement whose qualifier qualifier_prop is qualifier_obj.

    Args:
        entity: an entity id or a variable.
        main_prop: the quantity property.
        qualifier_prop: the qualifier property, e.g. P518 (applies to part).
        qualifier_obj: the qualifier's value.
        tag: the new variable for the amount.
        unit: optional: true to convert to SI units.

    Example: add_quantity_with_qualifier(Q1, P2069, P518, Q2, perf)
    """,
)

ADD_QUANTITY_BY_QUALIFIER = declare_action(
    "add_quantity_by_qualifier",
    param("entity", "markqa"),
    param("main_prop", "markqa"),
    param("main_obj", "markqa"),
    param("qualifier_prop", "markqa"),
    param("tag", "markqa"),
    param("unit", "flag", False),
    group="markqa",
    after="add_quantity_with_qualifier",
    doc="""
    Get the amount held by the qualifier qualifier_prop of the statement (entity, main_prop, main_obj).

    Args:
        entity: an entity id or a variable.
        main_prop: the statement's property, e.g. P186 (made from material).
        main_obj: the statement's value.
        qualifier_prop: the quantity qualifier, e.g. P2067 (mass).
        tag: the new variable for the amount.
        unit: optional: true to convert to SI units.

    Example: add_quantity_by_qualifier(Q1, P186, Q2, P2067, mass)
    """,
)

register_kind(
    StepKind(
        QuantityBase,
        (ADD_QUANTITY, ADD_QUANTITY_WITH_QUALIFIER, ADD_QUANTITY_BY_QUALIFIER),
        auxiliary_variables=_auxiliary_variables,
        value_kinds=_value_kinds,
        asked_year=_asked_year,
        described=_described,
        literal_variables=_literal_variables,
    )
)
