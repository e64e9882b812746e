"""Arithmetic and date expressions, built with MarkQA's function names.

MarkQA (cdhx/MarkQA, ``PyQL_parser.py``) writes ``add_bind`` expressions
with small functions that concatenate SPARQL text:
``mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100)``. This module
builds the same expressions as a small typed tree instead: :class:`Var`,
:class:`Num`, :class:`DateLit`, :class:`Entity`, :class:`Op` (``+ - * /``)
and :class:`Func` (``ABS``, ``CEIL``, ``FLOOR``, ``YEAR``, ``MONTH``, the
``xsd:decimal`` cast). Nodes are frozen; every variable, number, date and
entity reaches SPARQL text through :mod:`pyql.builder.escape` (via
:mod:`pyql.builder.terms` and the profile), never by formatting user text.

Operands are normalised as MarkQA's ``digit_or_var`` does (see
:func:`operand`): a numeric string is a number, ``'Q42'`` an entity and any
other name the variable of that name (``'pop 2011'`` is ``?pop_2011``).

MarkQA's evaluation order is kept. ``add`` and ``sub`` put parentheses
around their result, ``mul`` and ``div`` do not, so a product or quotient
passed to ``mul``/``div`` is spliced into the text around it and read left
to right: ``div('x', mul('a', 'b'))`` is MarkQA's ``?x / ?a * ?b``, that is
``(x / a) * b``. The tree says so explicitly and renders with full
parentheses.

Example:
    >>> e = mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100)
    >>> e.sparql()
    '(((?pop_2021 - ?pop_2011) / ?pop_2011) * 100)'
    >>> e.variables()
    ('pop_2021', 'pop_2011')
    >>> div('x', mul('a', 'b')).sparql()
    '((?x / ?a) * ?b)'
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Mapping, Union

from pyql.errors import QueryError
from pyql.builder.profiles import Profile, get_profile
from pyql.builder.terms import XSD, Literal, Variable

__all__ = [
    "MAX_DEPTH",
    "OPERATORS",
    "FUNCTIONS",
    "Expression",
    "Var",
    "Num",
    "DateLit",
    "Entity",
    "Op",
    "Func",
    "OperandLike",
    "operand",
    "qid_problem",
    "add",
    "sub",
    "mul",
    "div",
    "abs",
    "ceil_mul",
    "ceil_div",
    "floor_mul",
    "floor_div",
    "avg",
    "year",
    "month",
    "to_date",
    "to_decimal",
]

#: The deepest expression tree accepted (leaves have depth 0, each Op/Func adds 1).
MAX_DEPTH = 64
#: The arithmetic operators, as SPARQL writes them.
OPERATORS = ("+", "-", "*", "/")
#: Function nodes: name → how SPARQL spells it (None: the profile's name of the xsd:decimal IRI).
FUNCTIONS: Mapping[str, str | None] = MappingProxyType(
    {"ABS": "ABS", "CEIL": "CEIL", "FLOOR": "FLOOR", "YEAR": "YEAR", "MONTH": "MONTH", "xsd:decimal": None}
)
_DATE_FUNCTIONS = ("YEAR", "MONTH")
# MarkQA's digit_or_var number pattern, with ASCII digits only.
_NUMBER_RE = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?\Z")
_DIGITS_RE = re.compile(r"[0-9]+\Z")
_QID_RE = re.compile(r"(?:wd:)?[Qq][0-9]+\Z")
# Looks like a QID but is not one: Q12x (not q1_rate, a fine variable name), wd:anything.
_QID_LIKE_RE = re.compile(r"wd:.*|[Qq][0-9]+[A-Za-z0-9]*|Q", re.S)


def _profile(profile: Profile | str) -> Profile:
    return get_profile(profile)


class Expression:
    """Base class of expression nodes.

    Attributes:
        depth: 0 for a leaf, 1 + the deepest operand for :class:`Op` and :class:`Func`.

    Example:
        >>> isinstance(Var("x"), Expression), Var("x").depth
        (True, 0)
    """

    __slots__ = ()
    depth: int

    def children(self) -> tuple[Expression, ...]:
        """The operands of this node (none for a leaf).

        Example:
            >>> Op("+", (Var("a"), Num(1))).children()
            (Var(name='a'), Num(value=Decimal('1')))
        """
        return ()

    def variables(self) -> tuple[str, ...]:
        """Names of the variables used, in order of first use, each once.

        Example:
            >>> add('a', mul('b', 'a'), 2).variables()
            ('a', 'b')
        """
        seen: dict[str, None] = {}
        stack: list[Expression] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, Var):
                seen.setdefault(node.name, None)
            stack.extend(reversed(node.children()))
        return tuple(seen)

    def markqa(self) -> str:
        """The expression as the MarkQA function calls that build it (the action language's form).

        Reading the text back (``add_bind``'s expression argument of an
        action line, or MarkQA's functions on the parts) gives an equal tree
        for every tree MarkQA's functions build.

        Example:
            >>> e = mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100)
            >>> e.markqa()
            'mul(div(sub(?pop_2021, ?pop_2011), ?pop_2011), 100)'
            >>> ceil_div('n', 3).markqa(), avg('a', 'b').markqa(), year(to_date(2020, 5, 1)).markqa()
            ('ceil_mul(div(?n, 3))', 'div(add(?a, ?b), 2)', 'year(to_date(2020, 5, 1))')
        """
        return _markqa_text(self)

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        """The expression as SPARQL text (operators fully parenthesised).

        Args:
            profile: the KB profile (or its name); it names entities and xsd:decimal.

        Example:
            >>> ceil_div('n', 3).sparql()
            'CEIL((?n / 3))'
        """
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Var(Expression):
    """A variable, named without ``?``.

    Example:
        >>> Var("pop_2011").sparql()
        '?pop_2011'
    """

    name: str
    depth: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        Variable(self.name)

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        return Variable(self.name).sparql()


@dataclass(frozen=True, slots=True)
class Num(Expression):
    """A number (kept exactly as a :class:`~decimal.Decimal`, sign included).

    An integral value written without a decimal point is an ``xsd:integer``,
    any other an ``xsd:decimal``; a negative number is parenthesised, as MarkQA does.

    Example:
        >>> Num(100).sparql(), Num(Decimal("-2.5")).sparql()
        ('100', '(-2.5)')
    """

    value: Decimal
    depth: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            raise QueryError(f"a number must be an int or a Decimal, not {type(value).__name__}")
        value = Decimal(value)
        if not value.is_finite():
            raise QueryError(f"the number {value} is not finite; give a finite number")
        object.__setattr__(self, "value", value)

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        text = format(self.value, "f")
        datatype = XSD + ("decimal" if "." in text else "integer")
        out = Literal(text, datatype).sparql()
        return f"({out})" if self.value.is_signed() else out


@dataclass(frozen=True, slots=True)
class DateLit(Expression):
    """A date, written as MarkQA's ``to_date`` writes it: midnight UTC, ``xsd:dateTime``.

    Attributes:
        value: the day (a :class:`datetime.date`, not a datetime).
        datatype: ``"dateTime"`` (the default, as MarkQA) or ``"date"``.

    Example:
        >>> DateLit(_dt.date(2020, 5, 1)).sparql()
        '"2020-05-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    """

    value: _dt.date
    datatype: str = "dateTime"
    depth: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.value, _dt.date) or isinstance(self.value, _dt.datetime):
            raise QueryError(f"a date must be a datetime.date, not {type(self.value).__name__}")
        if self.datatype not in ("dateTime", "date"):
            raise QueryError(f"date datatype {self.datatype!r} is not supported; use 'dateTime' or 'date'")

    @property
    def lexical(self) -> str:
        """The literal's lexical form.

        Example:
            >>> DateLit(_dt.date(2020, 5, 1), "date").lexical
            '2020-05-01'
        """
        day = self.value.isoformat()
        return day + "T00:00:00Z" if self.datatype == "dateTime" else day

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        return Literal(self.lexical, XSD + self.datatype).sparql()


@dataclass(frozen=True, slots=True)
class Entity(Expression):
    """A Wikidata entity by its QID (MarkQA's ``'Q42'`` operand).

    Example:
        >>> Entity("Q42").sparql()
        'wd:Q42'
    """

    id: str
    depth: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not re.fullmatch(r"Q[0-9]+", self.id):
            raise QueryError(f"entity {self.id!r} is not a QID; write it as Q42")

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        prof = _profile(profile)
        iri = prof.expand_name(self.id, "entity")
        if iri is None:
            raise QueryError(f"the {prof.name} profile has no entity named {self.id}; use the wikidata profile")
        return prof.sparql_iri(iri)


def _depth_of(operands: tuple[Expression, ...], what: str) -> int:
    for item in operands:
        if not isinstance(item, Expression):
            raise QueryError(f"{what} takes expressions as operands, not {type(item).__name__}")
    depth = 1 + max((item.depth for item in operands), default=0)
    if depth > MAX_DEPTH:
        raise QueryError(f"expression nested deeper than {MAX_DEPTH} levels; bind parts of it to variables first")
    return depth


@dataclass(frozen=True, slots=True)
class Op(Expression):
    """An arithmetic operation on two or more operands, read left to right.

    ``Op("/", (a, b, c))`` is ``(a / b) / c``.

    Example:
        >>> Op("-", (Var("a"), Num(1), Var("b"))).sparql()
        '(?a - 1 - ?b)'
    """

    op: str
    operands: tuple[Expression, ...]
    depth: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise QueryError(f"unknown operator {self.op!r}; use one of {', '.join(OPERATORS)}")
        object.__setattr__(self, "operands", tuple(self.operands))
        if len(self.operands) < 2:
            raise QueryError(f"operator {self.op} needs at least two operands, got {len(self.operands)}")
        object.__setattr__(self, "depth", _depth_of(self.operands, f"operator {self.op}"))

    def children(self) -> tuple[Expression, ...]:
        return self.operands

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        prof = _profile(profile)
        return "(" + f" {self.op} ".join(item.sparql(prof) for item in self.operands) + ")"


@dataclass(frozen=True, slots=True)
class Func(Expression):
    """A one-argument function: ``ABS``, ``CEIL``, ``FLOOR``, ``YEAR``, ``MONTH`` or the ``xsd:decimal`` cast.

    Example:
        >>> Func("YEAR", (Var("t"),)).sparql()
        'YEAR(?t)'
        >>> Func("xsd:decimal", (Num(5),)).sparql()
        'xsd:decimal(5)'
    """

    name: str
    args: tuple[Expression, ...]
    depth: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.name not in FUNCTIONS:
            raise QueryError(f"unknown function {self.name!r}; use one of {', '.join(FUNCTIONS)}")
        object.__setattr__(self, "args", tuple(self.args))
        if len(self.args) != 1:
            raise QueryError(f"{self.name} takes one argument, got {len(self.args)}")
        object.__setattr__(self, "depth", _depth_of(self.args, self.name))
        if self.name in _DATE_FUNCTIONS and not isinstance(self.args[0], (Var, DateLit)):
            raise QueryError(f"{self.name} takes a variable or a date (to_date(...)), not {self.args[0].sparql()}")

    def children(self) -> tuple[Expression, ...]:
        return self.args

    def sparql(self, profile: Profile | str = "wikidata") -> str:
        prof = _profile(profile)
        spelling = FUNCTIONS[self.name] or prof.sparql_iri(XSD + "decimal")
        return f"{spelling}({self.args[0].sparql(prof)})"


OperandLike = Union[Expression, str, int, float, Decimal]

#: A one-argument function node → the MarkQA function that makes it from its argument's text.
_FUNCTION_NAMES: Mapping[str, str] = MappingProxyType(
    {"ABS": "abs", "CEIL": "ceil_mul", "FLOOR": "floor_mul", "YEAR": "year", "MONTH": "month", "xsd:decimal": "to_decimal"}
)


def _markqa_text(expr: Expression) -> str:
    """MarkQA calls that build ``expr`` (see :meth:`Expression.markqa`)."""
    if isinstance(expr, Var):
        return "?" + expr.name
    if isinstance(expr, Num):
        return format(expr.value, "f")
    if isinstance(expr, Entity):
        return expr.id
    if isinstance(expr, DateLit):
        day = expr.value
        return f"to_date({day.year}, {day.month}, {day.day})"
    if isinstance(expr, Func):
        return f"{_FUNCTION_NAMES[expr.name]}({_markqa_text(expr.args[0])})"
    if isinstance(expr, Op):
        items = [_markqa_text(item) for item in expr.operands]
        if expr.op in ("+", "*"):
            return ("add(" if expr.op == "+" else "mul(") + ", ".join(items) + ")"
        name = "sub" if expr.op == "-" else "div"  # read left to right: ((a - b) - c)
        text = items[0]
        for item in items[1:]:
            text = f"{name}({text}, {item})"
        return text
    raise QueryError(f"cannot write a {type(expr).__name__} as MarkQA functions")


def qid_problem(text: str) -> str | None:
    """Why ``text`` is a malformed QID (it looks like one but is not), or None.

    Example:
        >>> qid_problem("Q12x"), qid_problem("Q12"), qid_problem("pop")
        ("'Q12x' is not a valid QID; write Q followed by digits, as Q42", None, None)
    """
    if _QID_RE.fullmatch(text) or not _QID_LIKE_RE.fullmatch(text):
        return None
    return f"{text!r} is not a valid QID; write Q followed by digits, as Q42"


def operand(value: OperandLike) -> Expression:
    """One operand, normalised as MarkQA's ``digit_or_var``.

    A number or numeric string (``'-3'``, ``'2.5'``) is a :class:`Num`;
    ``'Q42'`` / ``'wd:Q42'`` an :class:`Entity`; ``'?x'`` the variable ``x``;
    any other name a variable, its blanks turned into ``_``. An expression is
    returned as is.

    Raises:
        QueryError: a bool, a malformed QID (``'Q12x'``), a non-finite number.
        TermError: a name that is not a valid variable name.

    Example:
        >>> operand("pop 2011"), operand("-3"), operand("Q42")
        (Var(name='pop_2011'), Num(value=Decimal('-3')), Entity(id='Q42'))
    """
    if isinstance(value, Expression):
        return value
    if isinstance(value, bool):
        raise QueryError(f"{value} is not an operand; give a number, a variable name or an expression")
    if isinstance(value, (int, Decimal)):
        return Num(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QueryError(f"the number {value} is not finite; give a finite number")
        return Num(Decimal(repr(value)))
    if not isinstance(value, str):
        raise QueryError(f"cannot use a {type(value).__name__} as an operand; give a number, a name or an expression")
    text = value.strip()
    if _NUMBER_RE.match(text):
        return Num(Decimal(text))
    problem = qid_problem(text)
    if problem:
        raise QueryError(problem)
    if text.startswith("wd:") or re.fullmatch(r"Q[0-9]+", text):
        return Entity(text.removeprefix("wd:").upper())
    if text.startswith("?"):
        return Var(text[1:])
    return Var("_".join(text.split()))


def _operands(name: str, values: tuple[OperandLike, ...]) -> tuple[Expression, ...]:
    if not values:
        raise QueryError(f"{name}() needs at least one operand")
    return tuple(operand(v) for v in values)


def _terms(expr: Expression) -> list[tuple[str | None, Expression]]:
    """MarkQA's text of a product or quotient, as (operator, operand) pairs read left to right."""
    pending: list[tuple[str | None, Expression]] = []
    while isinstance(expr, Op) and expr.op in ("*", "/"):
        pending.extend((expr.op, item) for item in reversed(expr.operands[1:]))
        expr = expr.operands[0]
    return [(None, expr), *reversed(pending)]


def _splice(op: str, parts: tuple[Expression, ...]) -> Expression:
    """``parts`` joined by ``op`` without parentheses, as MarkQA's mul/div concatenate text."""
    sequence = _terms(parts[0])
    for part in parts[1:]:
        terms = _terms(part)
        sequence.append((op, terms[0][1]))
        sequence.extend(terms[1:])
    run_op: str | None = None
    run: list[Expression] = [sequence[0][1]]
    for item_op, item in sequence[1:]:
        if run_op is None or item_op == run_op:
            run.append(item)
        else:
            run = [Op(run_op, tuple(run)), item]
        run_op = item_op
    return Op(run_op, tuple(run)) if run_op else run[0]


def add(*values: OperandLike) -> Expression:
    """MarkQA's ``add``: the sum of one or more operands (parenthesised).

    Example:
        >>> add('a', 2, '3.5').sparql()
        '(?a + 2 + 3.5)'
    """
    items = _operands("add", values)
    return items[0] if len(items) == 1 else Op("+", items)


def sub(minuend: OperandLike, subtrahend: OperandLike) -> Expression:
    """MarkQA's ``sub``: ``(minuend - subtrahend)``.

    Example:
        >>> sub('b', '-1').sparql()
        '(?b - (-1))'
    """
    return Op("-", (operand(minuend), operand(subtrahend)))


def mul(*values: OperandLike) -> Expression:
    """MarkQA's ``mul``: a product, not parenthesised (products and quotients splice in).

    Example:
        >>> mul(div('a', 'b'), 'c').sparql()
        '((?a / ?b) * ?c)'
    """
    return _splice("*", _operands("mul", values))


def div(dividend: OperandLike, divisor: OperandLike) -> Expression:
    """MarkQA's ``div``: a quotient, not parenthesised, so ``div(a, mul(b, c))`` is ``(a / b) * c``.

    Example:
        >>> div('a', mul('b', 'c')).sparql()
        '((?a / ?b) * ?c)'
        >>> div('a', sub('b', 'c')).sparql()
        '(?a / (?b - ?c))'
    """
    return _splice("/", (operand(dividend), operand(divisor)))


def abs(value: OperandLike) -> Expression:
    """MarkQA's ``abs``: ``ABS(value)``.

    Example:
        >>> abs(sub('a', 'b')).sparql()
        'ABS((?a - ?b))'
    """
    return Func("ABS", (operand(value),))


def ceil_mul(*values: OperandLike) -> Expression:
    """MarkQA's ``ceil_mul``: ``CEIL`` of the product.

    Example:
        >>> ceil_mul('n', '0.8').sparql()
        'CEIL((?n * 0.8))'
    """
    return Func("CEIL", (mul(*values),))


def ceil_div(dividend: OperandLike, divisor: OperandLike) -> Expression:
    """MarkQA's ``ceil_div``: ``CEIL`` of the quotient.

    Example:
        >>> ceil_div(mul('n', 80), 100).sparql()
        'CEIL(((?n * 80) / 100))'
    """
    return Func("CEIL", (div(dividend, divisor),))


def floor_mul(*values: OperandLike) -> Expression:
    """MarkQA's ``floor_mul``: ``FLOOR`` of the product.

    Example:
        >>> floor_mul(add(1, 'rate'), 'visitors').sparql()
        'FLOOR(((1 + ?rate) * ?visitors))'
    """
    return Func("FLOOR", (mul(*values),))


def floor_div(dividend: OperandLike, divisor: OperandLike) -> Expression:
    """MarkQA's ``floor_div``: ``FLOOR`` of the quotient.

    Example:
        >>> floor_div('increase', 'years').sparql()
        'FLOOR((?increase / ?years))'
    """
    return Func("FLOOR", (div(dividend, divisor),))


def avg(*values: OperandLike) -> Expression:
    """MarkQA's ``avg``: the mean of one or more single values, ``add(...) / n``.

    Example:
        >>> avg('a', 'b', 'c').sparql()
        '((?a + ?b + ?c) / 3)'
    """
    items = _operands("avg", values)
    return div(add(*items), len(items))


def _time(value: OperandLike, name: str) -> Expression:
    if isinstance(value, (Var, DateLit)):
        return value
    if isinstance(value, str):
        text = value.strip()
        return Var(text[1:] if text.startswith("?") else text)
    raise QueryError(f"{name}() takes a variable name or to_date(...), not {value!r}")


def year(time: OperandLike) -> Expression:
    """MarkQA's ``year``: ``YEAR`` of a date variable (its name, ``?`` optional) or of ``to_date(...)``.

    Example:
        >>> year('t').sparql(), year(to_date(2020)).sparql()
        ('YEAR(?t)', 'YEAR("2020-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>)')
    """
    return Func("YEAR", (_time(time, "year"),))


def month(time: OperandLike) -> Expression:
    """MarkQA's ``month``: ``MONTH`` of a date variable or of ``to_date(...)``.

    Example:
        >>> month('?t').sparql()
        'MONTH(?t)'
    """
    return Func("MONTH", (_time(time, "month"),))


def _whole(value: object, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and _DIGITS_RE.match(value.strip()):
        return int(value.strip())
    raise QueryError(f"to_date() {what} must be a whole number such as 2020 or '05', not {value!r}")


def to_date(year: int | str, month: int | str = 1, day: int | str = 1) -> DateLit:
    """MarkQA's ``to_date``: the day as an ``xsd:dateTime`` at midnight UTC.

    Args:
        year: the year (digits, as an int or a string).
        month: the month, 1 to 12 (default 1).
        day: the day of the month (default 1).

    Raises:
        QueryError: a part that is not a whole number, or no such day.

    Example:
        >>> to_date(2020, '5', 1).lexical
        '2020-05-01T00:00:00Z'
        >>> to_date(2021, 2, 30)
        Traceback (most recent call last):
        ...
        pyql.errors.QueryError: to_date(2021, 2, 30) is not a day: day is out of range for month
    """
    parts = (_whole(year, "year"), _whole(month, "month"), _whole(day, "day"))
    try:
        return DateLit(_dt.date(*parts))
    except (ValueError, OverflowError) as e:
        raise QueryError(f"to_date({parts[0]}, {parts[1]}, {parts[2]}) is not a day: {e}") from None


def to_decimal(number: int | str | Decimal) -> Expression:
    """MarkQA's ``to_decimal``: the number as an ``xsd:decimal``.

    Example:
        >>> to_decimal('5').sparql()
        'xsd:decimal(5)'
    """
    if isinstance(number, str) and not _NUMBER_RE.match(number.strip()):
        raise QueryError(f"to_decimal() takes a number, not {number!r}")
    if isinstance(number, bool) or not isinstance(number, (int, str, Decimal)):
        raise QueryError(f"to_decimal() takes a number, not {number!r}")
    try:
        value = Decimal(number.strip() if isinstance(number, str) else number)
    except InvalidOperation:  # pragma: no cover - the pattern above admits only numbers
        raise QueryError(f"to_decimal() takes a number, not {number!r}") from None
    return Func("xsd:decimal", (Num(value),))
