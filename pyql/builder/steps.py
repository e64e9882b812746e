"""The steps a query is made of, one frozen dataclass per PyQL function.

A :class:`~pyql.builder.query.Query` is a profile plus a tuple of steps; the
compiler (:mod:`pyql.builder.compiler`) turns the tuple into SPARQL. Keeping steps
as data makes queries immutable, undo trivial, and lets an environment
inspect exactly what the last step did.

Each step knows the PyQL function it stands for (``action``) and its
arguments as written back (``arguments()``), so a query can be rendered as
the action lines that build it.

A new step kind is a frozen dataclass here and its rules in
:mod:`pyql.builder.compiler` (``@fold_rule(Kind)``: the scope after the step;
``@text_rule(Kind)``: its text in a block); nothing else dispatches on the
type of a step.

Example:
    >>> from pyql.builder.terms import Variable, IRI
    >>> s = Argmax(Variable("time"), descending=True)
    >>> s.action, [str(a) for a in s.arguments()]
    ('add_max', ['?time'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from grammars.vocabulary import AGGREGATIONS, COMPARISON_OPERATORS, canonical_operator
from pyql.errors import QueryError
from pyql.builder.terms import IRI, Literal, Term, Variable

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
    "Head",
    "ExpressionLike",
    "expression_variables",
    "QuantityBase",
    "Quantity",
    "QuantityWithQualifier",
    "QuantityByQualifier",
    "Bind",
    "Rank",
    "SubQuery",
    "Disjunction",
    "Assignment",
    "PropertyFact",
    "StartTime",
    "EndTime",
    "PointInTime",
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
        """``(var, new_var)``, and MarkQA's ``group_obj`` when it groups by one variable."""
        if len(self.group_by) == 1:
            return (self.var, self.new_var, self.group_by[0])
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


# ---------------------------------------------------------------------------
# MarkQA's functions on Wikidata's statement model (issue 21)
# ---------------------------------------------------------------------------


class ExpressionLike(Protocol):
    """What :class:`Bind` needs of an expression (:mod:`pyql.builder.expressions` builds them).

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


def _check_var(value: object, what: str) -> None:
    if not isinstance(value, Variable):
        raise QueryError(f"{what} must be a variable, not {value}")


def _check_pid(value: object, what: str) -> None:
    if not isinstance(value, str) or not _PID_RE.match(value):
        raise QueryError(f"{what} must be a Wikidata property id such as P1082, not {value!r}")


def _check_entity(value: object, what: str) -> None:
    if not isinstance(value, (IRI, Variable)):
        raise QueryError(f"{what} must be an entity such as Q64 or a variable, not {value}")


_PID_RE = re.compile(r"P[1-9][0-9]*\Z")


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
        _check_var(self.tag, f"the tag of {self.action}")  # type: ignore[attr-defined]
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
        _check_entity(self.entity, "the entity of add_quantity")
        _check_pid(self.prop, "the property of add_quantity")
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
        _check_entity(self.entity, f"the entity of {self.action}")
        _check_pid(self.main_prop, f"main_prop of {self.action}")
        _check_pid(self.qualifier_prop, f"qualifier_prop of {self.action}")
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
        _check_entity(self.entity, f"the entity of {self.action}")
        _check_pid(self.main_prop, f"main_prop of {self.action}")
        _check_pid(self.qualifier_prop, f"qualifier_prop of {self.action}")
        if not isinstance(self.main_obj, (IRI, Variable, Literal)):
            raise QueryError(f"main_obj of {self.action} must be an entity, a variable or a value")
        self._check_quantity()

    def arguments(self) -> tuple[object, ...]:
        args = (self.entity, self.main_prop, self.main_obj, self.qualifier_prop, self.tag)
        return args + ((True,) if self.unit else ())


@dataclass(frozen=True)
class Bind(Step):
    """``BIND(expression AS ?var)`` (``add_bind``); ``var`` becomes the answer, as in MarkQA."""

    expression: Any
    var: Variable
    action: ClassVar[str] = "add_bind"

    def __post_init__(self) -> None:
        if not (callable(getattr(self.expression, "sparql", None)) and callable(getattr(self.expression, "variables", None))):
            raise QueryError(
                f"add_bind takes an expression such as mul(div(sub(?b, ?a), ?a), 100), not {self.expression!r}"
            )
        _check_var(self.var, "the variable of add_bind")

    def arguments(self) -> tuple[object, ...]:
        return (self.expression, self.var)

    def variables(self) -> tuple[Variable, ...]:
        return tuple(dict.fromkeys(expression_variables(self.expression) + (self.var,)))


@dataclass(frozen=True)
class Rank(Step):
    """MarkQA's rank (``add_rank``): 1 + the number of distinct ``var_list`` values above ``rank_var``."""

    rank_var: Variable
    var_list: Variable
    new_var: Variable
    action: ClassVar[str] = "add_rank"

    def __post_init__(self) -> None:
        for what, var in (("rank_var", self.rank_var), ("var_list", self.var_list), ("new_var", self.new_var)):
            _check_var(var, f"{what} of add_rank")
        if self.new_var in (self.rank_var, self.var_list):
            raise QueryError(f"add_rank stores the rank in a new variable; {self.new_var} is one of those ranked")

    def arguments(self) -> tuple[object, ...]:
        return (self.rank_var, self.var_list, self.new_var)


@dataclass(frozen=True)
class SubQuery(Step):
    """Independent queries joined with the query on their shared variables (``add_sub_query``).

    Each one becomes a ``{ SELECT ... }`` block: it projects its answer when
    it has an argmax and an answer (as MarkQA does), else all its variables.
    """

    queries: tuple[Any, ...]
    action: ClassVar[str] = "add_sub_query"

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))
        if not self.queries:
            raise QueryError("add_sub_query takes at least one query")
        for query in self.queries:
            if not hasattr(query, "scope") or not hasattr(query, "steps"):
                raise QueryError(f"add_sub_query takes queries (pyql.Query), not {query!r}")
            if query.scope.ask:
                raise QueryError("a yes/no query (after add_compare) cannot be a sub-query; compare in the outer query")

    def arguments(self) -> tuple[object, ...]:
        return self.queries

    def variables(self) -> tuple[Variable, ...]:
        return ()


@dataclass(frozen=True)
class Disjunction(Step):
    """``var`` takes its values from any of ``branches`` (``add_union``): SPARQL's ``UNION``.

    Each branch is a query of its own that binds ``var``; it becomes a
    ``{ SELECT DISTINCT ?var WHERE { ... } }`` block, so only ``var`` joins
    the rest of the query (a branch's other variables stay inside it, and
    may have the same names in two branches). After the step ``var`` is
    visible as after a fact.

    Example:
        >>> from pyql.builder.query import Query
        >>> a, b = Query().add_fact("m.0a", "a.b.c", "?x"), Query().add_fact("m.0a", "a.b.d", "?x")
        >>> Disjunction(Variable("x"), (a, b)).action
        'add_union'
    """

    var: Variable
    branches: tuple[Any, ...]
    action: ClassVar[str] = "add_union"

    def __post_init__(self) -> None:
        object.__setattr__(self, "branches", tuple(self.branches))
        _check_var(self.var, "the variable of add_union")
        if len(self.branches) < 2:
            raise QueryError(f"add_union takes two or more branches (queries that bind {self.var}), got {len(self.branches)}")
        for number, branch in enumerate(self.branches, 1):
            if not hasattr(branch, "scope") or not hasattr(branch, "steps"):
                raise QueryError(f"the branches of add_union are queries (pyql.Query), not {branch!r}")
            if branch.scope.ask:
                raise QueryError(f"branch {number} of add_union is a yes/no query (add_compare); a branch binds {self.var}")
            if self.var not in branch.scope.block.variables:
                seen = ", ".join(str(v) for v in branch.scope.block.variables) or "none"
                raise QueryError(f"branch {number} of add_union does not bind {self.var} (its variables: {seen})")

    def arguments(self) -> tuple[object, ...]:
        return (self.var, *self.branches)

    def variables(self) -> tuple[Variable, ...]:
        return (self.var,)


@dataclass(frozen=True)
class Assignment(Step):
    """``VALUES ?var { ... }`` (``add_assignment``): ``var`` takes each of the values."""

    values: tuple[Term, ...]
    var: Variable
    action: ClassVar[str] = "add_assignment"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise QueryError("add_assignment takes at least one value, e.g. add_assignment(['Q319', 'Q2347978'], 'car')")
        for value in self.values:
            if not isinstance(value, (IRI, Literal)):
                raise QueryError(f"the values of add_assignment are entities or literals, not {value}")
        _check_var(self.var, "the variable of add_assignment")

    def arguments(self) -> tuple[object, ...]:
        return (self.values, self.var)

    def variables(self) -> tuple[Variable, ...]:
        return (self.var,)


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
