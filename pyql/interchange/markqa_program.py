"""Read MarkQA's PyQL programs without running them.

MarkQA (Huang et al., EMNLP 2023; cdhx/MarkQA) writes a question's query as
a small Python program over ``PyQL()`` objects and runs it with ``exec``::

    a = PyQL()
    a.add_quantity('Q64', 'P1082', 'pop_2011', 2011)
    a.add_quantity('Q64', 'P1082', 'pop_2021', 2021)
    a.add_bind(mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100), 'ans')
    print(a.sparql)

:func:`parse_markqa_program` reads such a program with the lark grammar
``grammars/markqa.lark`` into a list of statements: :class:`Create`
(``x = PyQL()``), :class:`Call` (``x.method(...)``) and :class:`Print`
(``print(x.sparql)``), whose arguments are typed values (:class:`Str`,
:class:`Number`, :class:`Bool`, :class:`NoneValue`, :class:`ListValue`,
:class:`Ref` to another object, :class:`FuncCall` of MarkQA's expression
functions). Nothing is evaluated. A program need not print: as MarkQA's
evaluation appends ``print(<last object>.sparql)`` to a program without a
``print`` line (every program of MarkQA's own PyQL documentation is written
so), the query of a program that prints nothing is its last object's
(:func:`result_object`), unless its objects leave the answer ambiguous. Every method and function is checked
against :data:`METHODS` and :data:`FUNCTIONS`, MarkQA's signatures written
as one table below; any problem is one :class:`~pyql.errors.MarkQAProgramError`
naming the line and column. :func:`to_expression` turns an expression
argument into a :mod:`pyql.builder.expressions` tree. Positions (``line``, ``col``)
do not take part in equality, so a parsed program equals the statements it
was rendered from (:func:`render_program`).

Example:
    >>> program = parse_markqa_program(
    ...     "a = PyQL()\\n"
    ...     "a.add_quantity('Q64', 'P1082', 'pop_2011', 2011)\\n"
    ...     "a.add_bind(mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100), 'ans')\\n"
    ...     "print(a.sparql)\\n")
    >>> [type(s).__name__ for s in program]
    ['Create', 'Call', 'Call', 'Print']
    >>> program[1].args
    (Str(value='Q64'), Str(value='P1082'), Str(value='pop_2011'), Number(value=2011))
    >>> to_expression(program[2].args[0]).sparql()
    '(((?pop_2021 - ?pop_2011) / ?pop_2011) * 100)'
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Callable, Iterator, Mapping, Union

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from grammars import lark_parser
from pyql.builder import escape, expressions
from pyql.errors import MarkQAProgramError, PyQLError
from pyql.builder.expressions import Expression

__all__ = [
    "MAX_NESTING",
    "Value",
    "Str",
    "Number",
    "Bool",
    "NoneValue",
    "ListValue",
    "Ref",
    "FuncCall",
    "Statement",
    "Create",
    "Call",
    "Print",
    "Param",
    "Signature",
    "METHODS",
    "FUNCTIONS",
    "parse_markqa_program",
    "result_object",
    "is_markqa_program",
    "render_program",
    "render_value",
    "bound_arguments",
    "to_expression",
]

#: The deepest bracket nesting in a statement (the method call's own parentheses count).
#: Each MarkQA function adds at most two levels to an expression tree, so every
#: expression the parser accepts fits :data:`pyql.builder.expressions.MAX_DEPTH`.
MAX_NESTING = expressions.MAX_DEPTH // 2


# ---------------------------------------------------------------------------
# Values and statements


@dataclass(frozen=True, slots=True)
class Str:
    """A string literal (its contents, escapes undone).

    Example:
        >>> Str("pop_2011") == Str("pop_2011", line=3, col=9)
        True
    """

    value: str
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Number:
    """A number as written: an ``int``, or a ``Decimal`` when it has a point; the sign is kept.

    Example:
        >>> Number(Decimal("-2.50")).value
        Decimal('-2.50')
    """

    value: Union[int, Decimal]
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Bool:
    """``True`` or ``False``.

    Example:
        >>> Bool(True).value
        True
    """

    value: bool
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class NoneValue:
    """``None``.

    Example:
        >>> NoneValue() == NoneValue(line=2, col=5)
        True
    """

    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ListValue:
    """A list ``[...]`` of values.

    Example:
        >>> ListValue((Str("Q1"), Str("Q2"))).items[1]
        Str(value='Q2')
    """

    items: tuple["Value", ...]
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Ref:
    """A bare name: a PyQL object, as in ``b.add_sub_query(a, c)``.

    Example:
        >>> Ref("a").name
        'a'
    """

    name: str
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FuncCall:
    """A call of one of MarkQA's expression functions, e.g. ``sub('a', 'b')``.

    Attributes:
        name: the function (a key of :data:`FUNCTIONS`).
        args: positional arguments.
        kwargs: keyword arguments as (name, value) pairs, in written order.

    Example:
        >>> FuncCall("to_date", (Number(2020),), (("day", Number(5)),)).kwargs[0][0]
        'day'
    """

    name: str
    args: tuple["Value", ...]
    kwargs: tuple[tuple[str, "Value"], ...] = ()
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


Value = Union[Str, Number, Bool, NoneValue, ListValue, Ref, FuncCall]


@dataclass(frozen=True, slots=True)
class Create:
    """``var = PyQL()``.

    Example:
        >>> Create("a", 1, 1) == Create("a")
        True
    """

    var: str
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Call:
    """``receiver.method(*args, **kwargs)`` on a PyQL object.

    Example:
        >>> Call("a", "add_max", (Str("x"),), (("limit", Number(3)),)).method
        'add_max'
    """

    receiver: str
    method: str
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...] = ()
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Print:
    """``print(receiver.sparql)``: the program's result is this object's query.

    Example:
        >>> Print("a").receiver
        'a'
    """

    receiver: str
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


Statement = Union[Create, Call, Print]


# ---------------------------------------------------------------------------
# MarkQA's signatures (baselines/utils/PyQL_parser.py, the fuller copy of
# PyQL_parser.py): one line per method or function, ``name:kind`` per
# parameter, ``=default`` for an optional one, ``*name`` for MarkQA's
# ``*args``, ``name|alias`` where the two copies of the reference name a
# parameter differently. The kinds are checked by _KINDS further down.

_METHOD_TABLE = """
set_head                     head:text
set_answer                   answer:var_or_star='*'
add_sub_query                *sub_query:query
add_quantity                 entity:entity prop:pid tag:var time:time=False unit:bool=False
add_quantity_with_qualifier  entity:entity main_prop:pid qualifier_prop:pid qualifier_obj:entity tag:var unit:bool=False
add_quantity_by_qualifier    entity:entity main_prop:pid main_obj:entity qualifier_prop:pid tag:var unit:bool=False
add_fact                     s:entity p:pid o:object p_prefix:prefix
add_bind                     equation|expression:expression var_name:var
add_type_constrain           type_id:qid new_var:var
add_avg                      avg_var:var new_var:var group_obj:var_or_none=None
add_sum                      sum_var:var new_var:var group_obj:var_or_none=None
add_count                    count_obj|count_var:var_or_star new_var:var group_obj:var_or_none=None
add_rank                     rank_var:var var_list:var new_var:var
add_max                      max_obj|max_var:var return_obj:var_or_star='*' offset:count=0 limit:count_or_none=1
add_min                      min_obj:var return_obj:var_or_star='*' offset:count=0 limit:count_or_none=1
add_filter                   compare_obj1:operand operator:operator compare_obj2:operand
add_compare                  obj1:operand op:operator obj2:operand
add_assignment               var_list:entity_list new_var:var
add_start_time               entity:entity new_var:var
add_end_time                 entity:entity new_var:var
add_time                     entity:entity new_var:var
"""

_FUNCTION_TABLE = """
add          *para_list:operand
sub          para1:operand para2:operand
mul          *para_list:operand
div          para1:operand para2:operand
abs          para:operand
ceil_mul     *para_list:operand
ceil_div     para1:operand para2:operand
floor_mul    *para_list:operand
floor_div    para1:operand para2:operand
avg          *para_list:operand
year         time:date_operand
month        time:date_operand
to_date      year:whole month:whole=1 day:whole=1
to_decimal   number:number
"""

#: MarkQA methods that write raw SPARQL text: refused, with the reason.
_REFUSED = {"add_triple_pattern": "it adds raw SPARQL text, which an imported program may not do"}
_DEFAULTS: dict[str, Value] = {"False": Bool(False), "None": NoneValue(), "0": Number(0), "1": Number(1), "'*'": Str("*")}
_OPERATORS = {"gt": ">", ">": ">", "ge": ">=", ">=": ">=", "lt": "<", "<": "<", "le": "<=", "<=": "<=",
              "e": "=", "=": "=", "ne": "!=", "!=": "!="}
_PREFIXES = ("wdt", "p", "ps", "psv", "pq", "pqv")
_RESERVED = {"True", "False", "None", "print", "PyQL"}


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a MarkQA method or function.

    Attributes:
        name: the reference's name; aliases: other names accepted as keywords.
        kind: what the argument may be (see the module's kind table).
        default: the value when omitted, or None when required.
        variadic: MarkQA's ``*args`` (one or more values).

    Example:
        >>> METHODS["add_max"].params[2]
        Param(name='offset', kind='count', default=Number(value=0), aliases=(), variadic=False)
    """

    name: str
    kind: str
    default: Value | None = None
    aliases: tuple[str, ...] = ()
    variadic: bool = False


@dataclass(frozen=True, slots=True)
class Signature:
    """A MarkQA method's or function's parameters.

    Example:
        >>> print(METHODS["add_quantity"])
        add_quantity(entity, prop, tag, time=False, unit=False)
        >>> METHODS["add_quantity"].arity, FUNCTIONS["add"].arity
        ((3, 5), (1, None))
    """

    name: str
    params: tuple[Param, ...]

    @property
    def arity(self) -> tuple[int, int | None]:
        """(fewest, most) positional arguments; most is None for ``*args``."""
        fewest = sum(1 for p in self.params if p.default is None)
        most = None if any(p.variadic for p in self.params) else len(self.params)
        return fewest, most

    def __str__(self) -> str:
        def one(p: Param) -> str:
            return ("*" if p.variadic else "") + p.name + ("" if p.default is None else "=" + render_value(p.default))

        return f"{self.name}({', '.join(one(p) for p in self.params)})"


def _table(text: str) -> Mapping[str, Signature]:
    out: dict[str, Signature] = {}
    for row in text.strip().splitlines():
        name, *cells = row.split()
        params = []
        for cell in cells:
            names, _, rest = cell.partition(":")
            kind, _, default = rest.partition("=")
            first, *aliases = names.lstrip("*").split("|")
            params.append(Param(first, kind, _DEFAULTS[default] if default else None, tuple(aliases), names[0] == "*"))
        out[name] = Signature(name, tuple(params))
    return MappingProxyType(out)


#: MarkQA's PyQL methods.
METHODS: Mapping[str, Signature] = _table(_METHOD_TABLE)
#: MarkQA's expression functions.
FUNCTIONS: Mapping[str, Signature] = _table(_FUNCTION_TABLE)
_BUILDERS: Mapping[str, Callable[..., Expression]] = MappingProxyType(
    {name: getattr(expressions, name) for name in FUNCTIONS}
)


# ---------------------------------------------------------------------------
# Errors and positions


def _error(message: str, line: int, col: int, source: str = "", expected: list[str] | None = None) -> MarkQAProgramError:
    where = f"MarkQA program, line {line}, column {col}" if line else "MarkQA program"
    position = None
    if source and line:
        starts = [0] + [m.end() for m in re.finditer("\n", source)]
        position = starts[min(line, len(starts)) - 1] + col - 1
    return MarkQAProgramError(f"{where}: {message}", text=source, position=position, expected=expected, line=line or None, column=col or None)


def _describe(value: Value) -> str:
    if isinstance(value, Str):
        return f"the string {value.value!r}"
    if isinstance(value, Number):
        return f"the number {value.value}"
    if isinstance(value, Bool):
        return str(value.value)
    if isinstance(value, NoneValue):
        return "None"
    if isinstance(value, ListValue):
        return "a list"
    if isinstance(value, Ref):
        return f"the name {value.name}"
    return f"{value.name}(...)"


def _nesting(value: Value) -> int:
    """How deeply ``value`` nests calls and lists (iteratively: hand-built values may be deep)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, FuncCall):
            stack.extend((v, depth + 1) for v in (*item.args, *(kv[1] for kv in item.kwargs)))
        elif isinstance(item, ListValue):
            stack.extend((v, depth + 1) for v in item.items)
    return deepest


# ---------------------------------------------------------------------------
# Binding arguments to parameters


def _takes(sig: Signature) -> str:
    fewest, most = sig.arity
    need = f"at least {fewest}" if most is None else str(fewest) if fewest == most else f"{fewest} to {most}"
    kind = "function" if FUNCTIONS.get(sig.name) is sig else "method"
    return f"takes {need} argument{'' if need.endswith(' 1') or need == '1' else 's'} (the {kind} {sig})"


def _bind(
    sig: Signature, args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...], line: int, col: int, source: str
) -> dict[str, Union[Value, tuple[Value, ...]]]:
    """Python's rules for matching arguments to ``sig``, with MarkQA's defaults filled in."""
    most = sig.arity[1]
    fixed = [p for p in sig.params if not p.variadic]
    if most is not None and len(args) > most:
        raise _error(f"{sig.name}() {_takes(sig)}, got {len(args)} positional", line, col, source)
    bound: dict[str, Union[Value, tuple[Value, ...]]] = {p.name: v for p, v in zip(fixed, args)}
    variadic = next((p for p in sig.params if p.variadic), None)
    if variadic is not None:
        bound[variadic.name] = tuple(args[len(fixed):])
    by_name = {alias: p for p in fixed for alias in (p.name, *p.aliases)}
    for name, value in kwargs:
        param = by_name.get(name)
        if param is None:
            raise _error(f"{sig.name}() has no parameter {name}; it {_takes(sig)}", value.line, value.col, source)
        if param.name in bound:
            raise _error(f"{sig.name}() got {param.name} twice; it {_takes(sig)}", value.line, value.col, source)
        bound[param.name] = value
    missing = [p.name for p in fixed if p.name not in bound and p.default is None]
    if missing or (variadic is not None and not bound[variadic.name]):
        lacking = ", ".join(missing) or variadic.name  # type: ignore[union-attr]
        raise _error(f"{sig.name}() {_takes(sig)}, got {len(args) + len(kwargs)}: {lacking} missing", line, col, source)
    for p in fixed:
        if p.name not in bound and p.default is not None:
            bound[p.name] = p.default
    return bound


def bound_arguments(call: Call | FuncCall) -> dict[str, Union[Value, tuple[Value, ...]]]:
    """The arguments of a (parsed, valid) call by parameter name, defaults filled in.

    A ``*args`` parameter maps to a tuple of values.

    Raises:
        MarkQAProgramError: unknown method/function, or arguments that do not fit.

    Example:
        >>> b = bound_arguments(Call("a", "add_max", (Str("pop"),), (("limit", Number(3)),)))
        >>> b["return_obj"], b["offset"], b["limit"]
        (Str(value='*'), Number(value=0), Number(value=3))
        >>> bound_arguments(Call("b", "add_sub_query", (Ref("a"), Ref("c"))))["sub_query"]
        (Ref(name='a'), Ref(name='c'))
    """
    table, name = (METHODS, call.method) if isinstance(call, Call) else (FUNCTIONS, call.name)
    if name not in table:
        raise _error(f"unknown {'method' if table is METHODS else 'function'} {name}", call.line, call.col)
    return _bind(table[name], call.args, call.kwargs, call.line, call.col, "")


# ---------------------------------------------------------------------------
# Kinds of arguments


class _Bad(Exception):
    """An argument does not fit its parameter; an empty message means "wrong kind"."""

    def __init__(self, message: str = "", value: Value | None = None) -> None:
        super().__init__(message)
        self.value = value


def _text(value: Value) -> str:
    if not isinstance(value, Str):
        raise _Bad()
    return value.value.strip()


_QID_RE = re.compile(r"(?:wd:)?[Qq][0-9]+")
_NUMBER_RE = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")
_WHOLE_RE = re.compile(r"[0-9]+")


def _qid(text: str) -> bool:
    """Whether a string argument is an entity (``Q64``, ``wd:Q64``); raises :class:`_Bad` for a malformed QID."""
    problem = expressions.qid_problem(text)
    if problem:
        raise _Bad(problem)
    return bool(_QID_RE.fullmatch(text))


def _variable_name(text: str) -> str:
    """MarkQA's reading of a name (``?`` dropped, blanks to ``_``), checked as a SPARQL variable name."""
    if expressions.qid_problem(text) is None and _QID_RE.fullmatch(text):
        raise _Bad(f"{text!r} is an entity, not a variable name")
    name = "_".join(text.removeprefix("?").split())
    try:
        escape.variable(name)
    except PyQLError as e:
        raise _Bad(str(e)) from None
    return name


def _k_var(value: Value) -> None:
    _variable_name(_text(value))


def _k_var_or_star(value: Value) -> None:
    if _text(value) != "*":
        _k_var(value)


def _k_or_none(check: Callable[[Value], None]) -> Callable[[Value], None]:
    """A check that also lets None through (MarkQA's optional parameters)."""

    def or_none(value: Value) -> None:
        if not isinstance(value, NoneValue):
            check(value)

    return or_none


def _k_entity(value: Value) -> None:
    text = _text(value)
    if not _qid(text):
        _variable_name(text)


def _k_qid(value: Value) -> None:
    if not _qid(_text(value)):
        raise _Bad()


def _k_pid(value: Value) -> None:
    text = _text(value)
    if not re.fullmatch(r"[Pp]?[0-9]+", text):
        raise _Bad(f"{text!r} is not a valid PID; write P followed by digits, as P1082")


def _k_count(value: Value) -> None:
    if not (isinstance(value, Number) and isinstance(value.value, int) and value.value >= 0):
        raise _Bad()


def _k_entity_list(value: Value) -> None:
    if not isinstance(value, ListValue) or not value.items:
        raise _Bad()
    for item in value.items:
        try:
            _k_entity(item)
        except _Bad as e:
            raise _Bad(str(e) or f"the list holds {_describe(item)}, not an entity or a variable name", item) from None


def _k_time(value: Value) -> None:
    if isinstance(value, (Bool, NoneValue)) or (isinstance(value, Number) and isinstance(value.value, int)):
        return
    if isinstance(value, FuncCall) and value.name == "to_date":
        to_expression(value)
        return
    text = _text(value)
    if _WHOLE_RE.fullmatch(text) or "^^" in text:
        return
    if not text.startswith("?"):
        # MarkQA reads any other string as True (get ?time_<tag>); a word where a year belongs is a mistake.
        raise _Bad()
    _variable_name(text)


def _k_object(value: Value) -> None:
    if isinstance(value, Number):
        return
    if isinstance(value, FuncCall) and value.name in ("to_date", "to_decimal"):
        to_expression(value)
    elif not _NUMBER_RE.fullmatch(_text(value)):
        _k_entity(value)


def _k_operand(value: Value) -> None:
    if not isinstance(value, (Str, Number, FuncCall)):
        raise _Bad()
    to_expression(value)


def _k_choice(choices: Mapping[str, str] | tuple[str, ...]) -> Callable[[Value], None]:
    def check(value: Value) -> None:
        if _text(value) not in choices:
            raise _Bad()

    return check


def _k_type(*types: type) -> Callable[[Value], None]:
    def check(value: Value) -> None:
        if not isinstance(value, types):
            raise _Bad()

    return check


_OPERAND = "a number, a variable name or an expression such as sub('a', 'b')"
#: kind → (what it may be, its check). ``query`` (a PyQL object) is checked with the program's objects.
_KINDS: Mapping[str, tuple[str, Callable[[Value], None]]] = MappingProxyType({
    "text": ("a string", _k_type(Str)),
    "var": ("a variable name (a string such as 'pop_2011')", _k_var),
    "var_or_star": ("a variable name or '*'", _k_var_or_star),
    "var_or_none": ("a variable name or None", _k_or_none(_k_var)),
    "entity": ("an entity (a QID string such as 'Q64') or a variable name", _k_entity),
    "qid": ("a QID string such as 'Q5'", _k_qid),
    "pid": ("a property id (a string such as 'P1082')", _k_pid),
    "bool": ("True or False", _k_type(Bool)),
    "count": ("a whole number, 0 or more (such as 2)", _k_count),
    "count_or_none": ("a whole number, 0 or more, or None", _k_or_none(_k_count)),
    "operator": ("a comparison operator: " + ", ".join(repr(o) for o in _OPERATORS), _k_choice(_OPERATORS)),
    "prefix": ("a statement-model prefix: " + ", ".join(repr(p) for p in _PREFIXES), _k_choice(_PREFIXES)),
    "entity_list": ("a non-empty list of entities (QIDs) and variable names", _k_entity_list),
    "time": ("a year (2011), to_date(...), a variable such as '?t', or True for ?time_<tag>", _k_time),
    "object": ("an entity, a variable name, a number, to_date(...) or to_decimal(...)", _k_object),
    "operand": (_OPERAND, _k_operand),
    "expression": (_OPERAND, _k_operand),
    "query": ("a PyQL object (a name defined by x = PyQL())", _k_type(Ref)),
})


def _check_argument(sig: Signature, param: Param, value: Value, source: str) -> None:
    what, check = _KINDS[param.kind]
    try:
        check(value)
    except _Bad as e:
        at = e.value or value
        reason = str(e) or f"expected {what}, found {_describe(value)}"
        raise _error(f"{sig.name}() argument {param.name}: {reason}", at.line, at.col, source) from None


# ---------------------------------------------------------------------------
# Expressions


def to_expression(value: Value) -> Expression:
    """The :mod:`pyql.builder.expressions` tree of an expression argument.

    A :class:`Number` is a number; a :class:`Str` is read as MarkQA's
    ``digit_or_var`` reads it (``'-3'`` a number, ``'Q42'`` an entity, any
    other name a variable); a :class:`FuncCall` calls the function of
    :mod:`pyql.builder.expressions` with the same name.

    Raises:
        MarkQAProgramError: an unknown function, wrong arguments, a value
            that is not an operand, nesting past :data:`MAX_NESTING`; the
            message names the value's line and column.

    Example:
        >>> to_expression(FuncCall("avg", (Str("a"), Number(Decimal("2.5"))))).sparql()
        '((?a + 2.5) / 2)'
        >>> to_expression(FuncCall("sub", (Str("a"),), line=4, col=12))
        Traceback (most recent call last):
        ...
        pyql.errors.MarkQAProgramError: MarkQA program, line 4, column 12: sub() takes 2 arguments (the function sub(para1, para2)), got 1: para2 missing
    """
    if _nesting(value) > MAX_NESTING:
        raise _error(f"expression nested deeper than {MAX_NESTING} levels; bind parts of it to variables first", value.line, value.col)
    return _expression(value, "")


def _expression(value: Value, source: str) -> Expression:
    try:
        if isinstance(value, Number):
            return expressions.Num(value.value)
        if isinstance(value, Str):
            return expressions.operand(value.value)
    except PyQLError as e:
        raise _error(str(e), value.line, value.col, source) from None
    if isinstance(value, FuncCall):
        return _function(value, source)
    raise _error(f"expected {_OPERAND}, found {_describe(value)}", value.line, value.col, source)


def _function(call: FuncCall, source: str) -> Expression:
    sig = FUNCTIONS.get(call.name)
    if sig is None:
        raise _error(_unknown_function(call.name), call.line, call.col, source)
    bound = _bind(sig, call.args, call.kwargs, call.line, call.col, source)
    args: list[object] = []
    for param in sig.params:
        given = bound[param.name]
        for item in given if isinstance(given, tuple) else (given,):
            args.append(_function_argument(sig, param, item, source))
    try:
        return _BUILDERS[call.name](*args)
    except PyQLError as e:
        raise _error(str(e), call.line, call.col, source) from None


def _function_argument(sig: Signature, param: Param, item: Value, source: str) -> object:
    if param.kind == "operand":
        return _expression(item, source)
    if param.kind == "date_operand":
        if isinstance(item, FuncCall) and item.name == "to_date":
            return _expression(item, source)
        if isinstance(item, Str):
            try:
                return expressions.Var(item.value.strip().removeprefix("?"))
            except PyQLError as e:
                raise _error(str(e), item.line, item.col, source) from None
        what = "a variable name or to_date(...)"
    elif param.kind == "whole":
        if isinstance(item, Number) and isinstance(item.value, int) and item.value >= 0:
            return item.value
        if isinstance(item, Str) and _WHOLE_RE.fullmatch(item.value.strip()):
            return item.value
        what = "a whole number such as 2020"
    else:  # number
        if isinstance(item, Number) or (isinstance(item, Str) and _NUMBER_RE.fullmatch(item.value.strip())):
            return item.value
        what = "a number such as 5 or '2.5'"
    raise _error(f"{sig.name}() argument {param.name}: expected {what}, found {_describe(item)}", item.line, item.col, source)


def _unknown_function(name: str) -> str:
    hint = f"; {name} is a method: call it on a PyQL object, as a.{name}(...)" if name in METHODS else ""
    return f"unknown function {name}(){hint}; MarkQA's functions are {', '.join(FUNCTIONS)}"


# ---------------------------------------------------------------------------
# Reading the text

_PUNCTUATION = frozenset({"COMMA", "DOT", "EQUAL", "LPAR", "RPAR", "LSQB", "RSQB"})
_TERMINAL_NAMES = {
    "NAME": "a name", "STRING": "a string", "NUMBER": "a number", "LPAR": "'('", "RPAR": "')'",
    "LSQB": "'['", "RSQB": "']'", "COMMA": "','", "DOT": "'.'", "EQUAL": "'='", "_NL": "end of line",
    "_SEMI": "';'", "$END": "end of program",
}
_SHAPES = "a MarkQA statement is x = PyQL(), x.method(...) or print(x.sparql)"
_ESCAPE_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.S)
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class _TooDeep(Exception):
    def __init__(self, token: lark.Token) -> None:
        super().__init__("too deep")
        self.token = token


class _Brackets(PostLex):
    """Newlines inside brackets continue the statement; nesting stops at :data:`MAX_NESTING`.

    Stopping in the token stream means no deep tree is ever built, so
    10,000 ``(`` cost one error, not a recursion.
    """

    always_accept = ("_NL",)

    def process(self, stream: Iterator[lark.Token]) -> Iterator[lark.Token]:
        depth = 0
        for token in stream:
            if token.type in ("LPAR", "LSQB"):
                depth += 1
                if depth > MAX_NESTING:
                    raise _TooDeep(token)
            elif token.type in ("RPAR", "RSQB"):
                depth = max(0, depth - 1)
            elif token.type == "_NL" and depth:
                continue
            yield token


_POSTLEX = _Brackets()


def _parser() -> lark.Lark:
    return lark_parser("markqa", parser="lalr", lexer="contextual", propagate_positions=True, postlex=_POSTLEX)


def _decode(text: str | bytes) -> str:
    """The program as text: UTF-8 only, no lone surrogates; a BOM becomes a blank (columns stay)."""
    if isinstance(text, (bytes, bytearray)):
        data = bytes(text)
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError as e:
            start = data.rfind(b"\n", 0, e.start) + 1
            col = len(data[start : e.start].decode("utf-8", "replace")) + 1
            raise _error(f"the program is not UTF-8 text: byte 0x{data[e.start]:02x} cannot be decoded", data.count(b"\n", 0, e.start) + 1, col) from None
    elif isinstance(text, str):
        source = text
    else:
        raise TypeError(f"parse_markqa_program() needs a str or bytes, not {type(text).__name__}")
    bad = re.search("[\ud800-\udfff]", source)
    if bad:
        line = source.count("\n", 0, bad.start()) + 1
        col = bad.start() - (source.rfind("\n", 0, bad.start()) + 1) + 1
        raise _error(f"the program is not UTF-8 text: U+{ord(bad.group()):04X} is a lone surrogate", line, col, source)
    return " " + source[1:] if source.startswith("\ufeff") else source


def _syntax_error(e: UnexpectedInput, source: str) -> MarkQAProgramError:
    line, col = getattr(e, "line", 1) or 1, getattr(e, "column", 1) or 1
    allowed: set[str] = set()
    if isinstance(e, UnexpectedCharacters):
        char = source[e.pos_in_stream] if e.pos_in_stream < len(source) else ""
        what = "unterminated string" if char in ("'", '"') else f"unexpected character {char!r}"
        allowed = set(e.allowed or ())
    elif isinstance(e, UnexpectedToken):
        allowed = set(e.accepts or e.expected or ())  # accepts: exact, where LALR's table merges
        token = e.token
        if token.type == "$END":
            what = "unexpected end of program"
            line = source.count("\n") + 1
            col = len(source) - (source.rfind("\n") + 1) + 1
        else:
            shown = {"NAME": f"name {str(token)!r}", "NUMBER": f"number {token}", "STRING": f"string {token}"}
            what = "unexpected " + shown.get(token.type, _TERMINAL_NAMES.get(token.type, repr(str(token))))
            line, col = token.line or line, token.column or col
    else:  # pragma: no cover - the LALR parser raises only the two above
        what = "syntax error"
    # Newlines are dropped inside brackets, so "end of line" is never what was missing.
    expected = sorted({_TERMINAL_NAMES.get(t, t) for t in allowed if t != "_NL" and not t.startswith("__")})
    hint = f"; expected {' or '.join(expected)}" if expected else ""
    return _error(f"{what}{hint} ({_SHAPES})", line, col, source, expected)


def _tree(source: str) -> lark.Tree:
    try:
        return _parser().parse(source)
    except _TooDeep as e:
        raise _error(f"brackets nested deeper than {MAX_NESTING} levels; bind parts of the expression to variables first", e.token.line or 1, e.token.column or 1, source) from None
    except UnexpectedInput as e:
        raise _syntax_error(e, source) from None


def _parts(tree: lark.Tree) -> list[object]:
    return [c for c in tree.children if not (isinstance(c, lark.Token) and c.type in _PUNCTUATION)]


def _unescape(token: lark.Token, source: str) -> str:
    """The contents of a Python string literal, escapes undone as Python does."""

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        if body in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[body]
        if body[0] in "xuU" and len(body) > 1:
            code = int(body[1:], 16)
        elif body[0] in "01234567":
            code = int(body, 8)
        elif body[0] == "N" and len(body) > 1:
            try:
                return unicodedata.lookup(body[2:-1])
            except KeyError:
                code = -1
        elif body[0] in "xuUN":
            code = -1
        else:
            return m.group(0)  # an unknown escape stays as written, as in Python
        if not 0 <= code <= 0x10FFFF:
            raise _error(f"bad escape \\{body} in a string", token.line or 1, (token.column or 1) + m.start(), source)
        return chr(code)

    return _ESCAPE_RE.sub(one, str(token)[1:-1])


class _Reader:
    """Turns the lark tree into statements and values, refusing shapes that are not MarkQA."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, message: str, at: lark.Tree | lark.Token) -> MarkQAProgramError:
        line, col = (at.line, at.column) if isinstance(at, lark.Token) else (at.meta.line, at.meta.column)
        return _error(message, line or 1, col or 1, self.source)

    def statement(self, node: lark.Tree) -> Statement:
        if node.data == "assign":
            name, value = _parts(node)
            assert isinstance(name, lark.Token) and isinstance(value, lark.Tree)
            if value.data == "call" and str(value.children[0]) == "PyQL":
                if value.children[2] is not None:
                    raise self.error("PyQL() takes no arguments", value)
                if str(name) in _RESERVED or str(name) in FUNCTIONS or keyword.iskeyword(str(name)):
                    raise self.error(f"{name} cannot name a PyQL object; choose another name such as a or q1", name)
                return Create(str(name), name.line or 1, name.column or 1)
            raise self.error(f"only x = PyQL() may be assigned, not {name} = {self.shape(value)} ({_SHAPES})", node)
        (value,) = node.children
        assert isinstance(value, lark.Tree)
        if value.data == "method_call":
            receiver, method, arguments = _parts(value)
            args, kwargs = self.arguments(arguments)
            return Call(str(receiver), str(method), args, kwargs, value.meta.line, value.meta.column)
        if value.data == "call" and str(value.children[0]) == "print":
            return self.print_(value)
        raise self.error(f"{self.shape(value)} is not a MarkQA statement ({_SHAPES})", node)

    def print_(self, node: lark.Tree) -> Print:
        _name, arguments = _parts(node)
        items = _parts(arguments) if isinstance(arguments, lark.Tree) else []
        target = items[0] if len(items) == 1 else None
        if not (isinstance(target, lark.Tree) and target.data == "attribute"):
            raise self.error("print() takes the query of one PyQL object, as print(a.sparql)", node)
        obj, attribute = _parts(target)
        if str(attribute) != "sparql":
            raise self.error(f"only .sparql can be printed, not {obj}.{attribute}; write print({obj}.sparql)", attribute)  # type: ignore[arg-type]
        return Print(str(obj), node.meta.line, node.meta.column)

    def shape(self, node: lark.Tree) -> str:
        parts = [str(c) for c in node.children if isinstance(c, lark.Token)]
        if node.data in ("call", "method_call"):
            return ".".join(p for p in parts if p not in "().") + "(...)"
        return "".join(parts) if node.data in ("name", "attribute") else {"string": "a string", "number": "a number", "list": "a list"}[node.data]

    def arguments(self, node: object) -> tuple[tuple[Value, ...], tuple[tuple[str, Value], ...]]:
        args: list[Value] = []
        kwargs: list[tuple[str, Value]] = []
        for child in _parts(node) if isinstance(node, lark.Tree) else []:
            assert isinstance(child, lark.Tree)
            if child.data == "keyword":
                name, value = _parts(child)
                if any(k == str(name) for k, _ in kwargs):
                    raise self.error(f"keyword argument {name} repeated", name)  # type: ignore[arg-type]
                kwargs.append((str(name), self.value(value)))  # type: ignore[arg-type]
            elif kwargs:
                raise self.error("positional argument follows keyword argument", child)
            else:
                args.append(self.value(child))
        return tuple(args), tuple(kwargs)

    def value(self, node: lark.Tree) -> Value:
        line, col = node.meta.line, node.meta.column
        first = node.children[0]
        if node.data == "string":
            return Str(_unescape(first, self.source), line, col)  # type: ignore[arg-type]
        if node.data == "number":
            text = str(first)
            return Number(Decimal(text) if "." in text else int(text), line, col)
        if node.data == "list":
            items = _parts(node)[0]
            values = tuple(self.value(c) for c in _parts(items)) if isinstance(items, lark.Tree) else ()  # type: ignore[arg-type]
            return ListValue(values, line, col)
        if node.data == "name":
            name = str(first)
            constants: dict[str, Value] = {"True": Bool(True, line, col), "False": Bool(False, line, col), "None": NoneValue(line, col)}
            return constants.get(name) or Ref(name, line, col)
        if node.data == "call":
            return self.function(node)
        if node.data == "attribute":
            raise self.error(f"{self.shape(node)} is not a value; the only attribute is .sparql, in print(x.sparql)", node)
        raise self.error(f"{self.shape(node)} cannot be an argument: a method call is a statement of its own", node)

    def function(self, node: lark.Tree) -> FuncCall:
        name, arguments = _parts(node)
        if str(name) == "PyQL":
            raise self.error("PyQL() can only be assigned, as x = PyQL(), on its own line", node)
        if str(name) not in FUNCTIONS:
            raise self.error(_unknown_function(str(name)), node)
        args, kwargs = self.arguments(arguments)
        return FuncCall(str(name), args, kwargs, node.meta.line, node.meta.column)


def _check_program(statements: list[Statement], source: str) -> None:
    """MarkQA's rules over the statements: defined objects, known methods, fitting arguments, a print only at the end,
    and a query the program gives (printed, or left by its last object: :func:`result_object`)."""
    if not statements:
        raise _error(f"the program has no statements ({_SHAPES})", 1, 1, source)
    objects: dict[str, int] = {}
    for index, st in enumerate(statements):
        if isinstance(st, Create):
            objects[st.var] = st.line
            continue
        _require_object(st.receiver, objects, st.line, st.col, source)
        if isinstance(st, Print):
            if index != len(statements) - 1:
                raise _error("print(...) must be the last statement: the program's query is the one printed", st.line, st.col, source)
            continue
        _check_call(st, objects, source)
    _result(statements, source)


def _sub_queries_of(statements: list[Statement] | tuple[Statement, ...]) -> dict[str, set[str]]:
    """Each object's sub-queries, directly or through others (``b.add_sub_query(a)`` makes ``a`` one of ``b``'s)."""
    direct: dict[str, set[str]] = {st.var: set() for st in statements if isinstance(st, Create)}
    for st in statements:
        if isinstance(st, Call) and st.method == "add_sub_query":
            direct.setdefault(st.receiver, set()).update(v.name for v in (*st.args, *(kv[1] for kv in st.kwargs)) if isinstance(v, Ref))
    closed: dict[str, set[str]] = {}
    for name in direct:
        seen: set[str] = set()
        stack = list(direct[name])
        while stack:
            item = stack.pop()
            if item not in seen:
                seen.add(item)
                stack.extend(direct.get(item, ()))
        closed[name] = seen
    return closed


def _result(statements: list[Statement] | tuple[Statement, ...], source: str) -> str:
    """The object whose query the program gives (see :func:`result_object`)."""
    if statements and isinstance(statements[-1], Print):
        return statements[-1].receiver
    made = [st for st in statements if isinstance(st, Create)]
    if not made:
        raise _error(f"the program makes no PyQL object; {_SHAPES}", 1, 1, source)
    last = made[-1]
    inside = _sub_queries_of(statements).get(last.var, set())
    left = [name for name in dict.fromkeys(st.var for st in made) if name != last.var and name not in inside]
    if left:
        end = statements[-1]
        others = ", ".join(left)
        raise _error(
            f"the program prints no query, and its last PyQL object {last.var} does not hold {others} as a sub-query, "
            f"so which object is the answer is ambiguous ({last.var} or {others}); end the program with print(x.sparql) "
            "naming it",
            end.line, end.col, source,
        )
    return last.var


def result_object(statements: list[Statement] | tuple[Statement, ...]) -> str:
    """The name of the PyQL object whose query a program gives, as MarkQA's evaluation reads a program.

    The object printed by the final ``print(x.sparql)``; without one, the
    last object the program makes (MarkQA's evaluation appends
    ``print(<last object>.sparql)`` to a program that prints nothing), as long
    as every other object is one of its sub-queries (directly or through
    others). Otherwise the answer is ambiguous and the program is refused.

    Raises:
        MarkQAProgramError: no object, or objects that leave the answer
            ambiguous (named in the message).

    Example:
        >>> result_object(parse_markqa_program("a = PyQL()\\na.add_time('Q1', 't')"))
        'a'
        >>> made = "a = PyQL()\\na.add_time('Q1', 't')\\nb = PyQL()\\nb.add_time('Q2', 'u')\\n"
        >>> result_object(parse_markqa_program(made + "b.add_sub_query(a)"))
        'b'
        >>> result_object(parse_markqa_program(made))
        Traceback (most recent call last):
        ...
        pyql.errors.MarkQAProgramError: MarkQA program, line 4, column 1: the program prints no query, and its last PyQL object b does not hold a as a sub-query, so which object is the answer is ambiguous (b or a); end the program with print(x.sparql) naming it
    """
    return _result(statements, "")


def _require_object(name: str, objects: dict[str, int], line: int, col: int, source: str) -> None:
    """Refuse a name used as a PyQL object (a receiver, a printed object, a sub-query) that no ``x = PyQL()`` created yet."""
    if name not in objects:
        defined = ", ".join(sorted(objects)) or "none yet"
        raise _error(f"{name} is not a PyQL object; create it first with {name} = PyQL() (defined: {defined})", line, col, source)


def _check_call(st: Call, objects: dict[str, int], source: str) -> None:
    if st.method in _REFUSED:
        raise _error(f"{st.receiver}.{st.method}() is refused: {_REFUSED[st.method]}", st.line, st.col, source)
    sig = METHODS.get(st.method)
    if sig is None:
        hint = f"; {st.method} is a function, used inside an argument" if st.method in FUNCTIONS else ""
        raise _error(f"unknown method {st.method}{hint}; MarkQA's methods are {', '.join(METHODS)}", st.line, st.col, source)
    bound = _bind(sig, st.args, st.kwargs, st.line, st.col, source)
    for param in sig.params:
        given = bound[param.name]
        for value in given if isinstance(given, tuple) else (given,):
            _check_argument(sig, param, value, source)
            if param.kind == "query" and isinstance(value, Ref):
                _require_object(value.name, objects, value.line, value.col, source)
                if value.name == st.receiver:
                    raise _error(f"{st.receiver} cannot be a sub-query of itself", value.line, value.col, source)


def parse_markqa_program(text: str | bytes) -> list[Statement]:
    """Read a MarkQA program into statements, checked, without running it.

    Args:
        text: the program (``str``, or ``bytes`` in UTF-8). Statements end
            at a newline or ``;``; inside brackets a newline continues the
            statement; ``#`` comments and blank lines are ignored.

    Returns:
        :class:`Create`, :class:`Call` and :class:`Print` statements in order,
        as written: a program may end with ``print(x.sparql)`` or, as
        MarkQA's evaluation allows, print nothing (its query is then its last
        object's, :func:`result_object`).

    Raises:
        MarkQAProgramError: the program does not parse or is not MarkQA, or
            prints nothing while its objects leave the answer ambiguous; the
            message names the line and column.
        TypeError: ``text`` is neither str nor bytes.

    Example:
        >>> parse_markqa_program("b = PyQL()\\nb.add_max('pop', limit=3)\\nprint(b.sparql)")[1]
        Call(receiver='b', method='add_max', args=(Str(value='pop'),), kwargs=(('limit', Number(value=3)),), line=2, col=1)
        >>> parse_markqa_program("a = PyQL()\\na.add_quantity('Q12x', 'P1082', 'pop')\\nprint(a.sparql)")
        Traceback (most recent call last):
        ...
        pyql.errors.MarkQAProgramError: MarkQA program, line 2, column 16: add_quantity() argument entity: 'Q12x' is not a valid QID; write Q followed by digits, as Q42
    """
    source = _decode(text)
    tree = _tree(source)
    reader = _Reader(source)
    statements = [reader.statement(node) for node in tree.children if isinstance(node, lark.Tree)]
    _check_program(statements, source)
    return statements


# ---------------------------------------------------------------------------
# Writing programs, and recognising them


def _quote(text: str, quote: str) -> str:
    out = []
    for ch in text:
        if ch == "\\" or ch == quote:
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ch.isprintable() and not ("\ud800" <= ch <= "\udfff"):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return quote + "".join(out) + quote


def _render(value: Value, quote: str) -> str:
    if isinstance(value, Str):
        return _quote(value.value, quote)
    if isinstance(value, Number):
        text = format(value.value, "f") if isinstance(value.value, Decimal) else str(value.value)
        return text if "." in text or isinstance(value.value, int) else text + ".0"
    if isinstance(value, Bool):
        return "True" if value.value else "False"
    if isinstance(value, NoneValue):
        return "None"
    if isinstance(value, ListValue):
        return "[" + ", ".join(_render(v, quote) for v in value.items) + "]"
    if isinstance(value, Ref):
        return value.name
    return f"{value.name}({_render_arguments(value.args, value.kwargs, quote)})"


def _render_arguments(args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...], quote: str) -> str:
    return ", ".join([*(_render(v, quote) for v in args), *(f"{k}={_render(v, quote)}" for k, v in kwargs)])


def render_value(value: Value, quote: str = "'") -> str:
    """A value as MarkQA (Python) writes it.

    Args:
        value: the value.
        quote: ``'`` or ``"`` for strings.

    Raises:
        MarkQAProgramError: a value nested deeper than :data:`MAX_NESTING`.

    Example:
        >>> render_value(FuncCall("to_date", (Number(2020),), (("day", Number(5)),)))
        'to_date(2020, day=5)'
        >>> render_value(Str("it's"), quote='"')
        '"it\\'s"'
    """
    if quote not in ("'", '"'):
        raise ValueError(f"quote must be ' or \", not {quote!r}")
    if _nesting(value) > MAX_NESTING:
        raise _error(f"value nested deeper than {MAX_NESTING} levels", value.line, value.col)
    return _render(value, quote)


def render_program(statements: list[Statement] | tuple[Statement, ...], quote: str = "'") -> str:
    """The program text of ``statements``, one per line; :func:`parse_markqa_program` reads it back equal.

    Example:
        >>> print(render_program([Create("a"), Call("a", "add_time", (Str("Q1"), Str("t"))), Print("a")]), end="")
        a = PyQL()
        a.add_time('Q1', 't')
        print(a.sparql)
    """
    lines = []
    for st in statements:
        if isinstance(st, Create):
            lines.append(f"{st.var} = PyQL()")
        elif isinstance(st, Print):
            lines.append(f"print({st.receiver}.sparql)")
        else:
            for value in (*st.args, *(v for _, v in st.kwargs)):
                render_value(value, quote)  # the nesting check
            lines.append(f"{st.receiver}.{st.method}({_render_arguments(st.args, st.kwargs, quote)})")
    return "".join(line + "\n" for line in lines)


_CREATE_RE = re.compile(r"[^\W\d]\w*[ \t]*=[ \t]*PyQL[ \t]*\([ \t]*\)")
_CODE_RE = re.compile(r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^'"#])*""")
_PRINT_RE = re.compile(r"print[ \t]*\([ \t]*[^\W\d]\w*[ \t]*\.[ \t]*sparql[ \t]*\)")
_CALL_RE = re.compile(r"[^\W\d]\w*[ \t]*\.[ \t]*[^\W\d]\w*[ \t]*\(.*\)", re.S)
#: What only a MarkQA program writes (a legacy WebQSP program, the same shape, never does): a Wikidata id
#: in quotes, one of MarkQA's expression functions, or a method the legacy programs lack.
_ONLY_MARKQA = ("add_quantity", "add_quantity_with_qualifier", "add_quantity_by_qualifier", "add_bind", "add_rank",
                "add_assignment", "add_start_time", "add_end_time", "add_time", "add_sub_query", "set_head")
_MARKQA_MARK_RE = re.compile(
    r"""['"](?:wd:)?[Qq][0-9]+['"]|['"][Pp][0-9]+['"]"""
    + r"|(?<![\w.])(?:" + "|".join(sorted(FUNCTIONS)) + r")[ \t]*\("
    + r"|\.[ \t]*(?:" + "|".join(_ONLY_MARKQA) + r")[ \t]*\("
)


def is_markqa_program(text: str | bytes) -> bool:
    """A cheap sniff: statements on ``PyQL()`` objects, ending with ``print(x.sparql)``, or, as MarkQA's
    documentation writes them, printing nothing but saying MarkQA's things (a QID or PID in quotes, an
    expression function such as ``sub(...)``, a method such as ``add_quantity``).

    Nothing is parsed (use :func:`parse_markqa_program` for that) and
    nothing raises: text that cannot be a MarkQA program gives False. A
    program without ``print`` and without those marks is a legacy (WebQSP)
    program as far as this sniff can tell.

    Example:
        >>> is_markqa_program("a = PyQL()\\na.add_max('x')\\nprint(a.sparql)  # the query\\n")
        True
        >>> is_markqa_program("a=PyQL()\\na.add_fact('Q222823', 'P176', 'x0' ,'wdt')")
        True
        >>> is_markqa_program("a=PyQL()\\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')")
        False
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return False
    if not isinstance(text, str):
        return False
    segments = []
    for line in text.splitlines():
        code = _CODE_RE.match(line).group()  # type: ignore[union-attr]  # the line up to its comment
        segments.extend(s.strip() for s in code.split(";") if s.strip())
    if not segments or not any(_CREATE_RE.fullmatch(s) for s in segments):
        return False
    if _PRINT_RE.fullmatch(segments[-1]):
        return True
    if not all(_CREATE_RE.fullmatch(s) or _CALL_RE.fullmatch(s) for s in segments):
        return False
    return any(_MARKQA_MARK_RE.search(s) for s in segments)
