"""MarkQA programs are read, never run: round trips, every refusal with its place, MarkQA's arithmetic order.

The reference strings below were produced once, by hand, by running the
expression functions of cdhx/MarkQA ``baselines/utils/PyQL_parser.py`` at
commit 888a16dd484e6af872888f658e929aa84e680a60 in a scratch Python session
(nothing of it is re-implemented here). Both the reference's text and ours
are evaluated by Oxigraph on the same bindings, and the numbers compared.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import keyword
import re
import sys
from decimal import Decimal

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyql.builder import expressions as ex
from pyql.errors import MarkQAProgramError, PyQLError, QueryError, TermError
from pyql.interchange.markqa_program import (
    FUNCTIONS,
    MAX_NESTING,
    METHODS,
    Bool,
    Call,
    Create,
    FuncCall,
    ListValue,
    NoneValue,
    Number,
    Print,
    Ref,
    Str,
    bound_arguments,
    is_markqa_program,
    parse_markqa_program,
    render_program,
    render_value,
    to_expression,
)

GROWTH = """a = PyQL()
a.add_quantity('Q64', 'P1082', 'pop_2011', 2011)
a.add_quantity('Q64', 'P1082', 'pop_2021', 2021)
a.add_bind(mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100), 'ans')
print(a.sparql)
"""


#: The first and last lines of a one-object program.
H = "a = PyQL()\n"
P = "\nprint(a.sparql)\n"


def _bind_program(expression: str) -> str:
    return H + f"a.add_bind({expression}, 'ans')" + P


def _expression_of(expression: str) -> ex.Expression:
    call = parse_markqa_program(_bind_program(expression))[1]
    assert isinstance(call, Call)
    return to_expression(call.args[0])


# ---------------------------------------------------------------------------
# The issue's example and the shapes of a program


def test_the_issue_example_reads_into_statements() -> None:
    program = parse_markqa_program(GROWTH)
    assert program == [
        Create("a"),
        Call("a", "add_quantity", (Str("Q64"), Str("P1082"), Str("pop_2011"), Number(2011))),
        Call("a", "add_quantity", (Str("Q64"), Str("P1082"), Str("pop_2021"), Number(2021))),
        Call(
            "a",
            "add_bind",
            (
                FuncCall("mul", (FuncCall("div", (FuncCall("sub", (Str("pop_2021"), Str("pop_2011"))), Str("pop_2011"))), Number(100))),
                Str("ans"),
            ),
        ),
        Print("a"),
    ]
    assert [(s.line, s.col) for s in program] == [(1, 1), (2, 1), (3, 1), (4, 1), (5, 1)]
    assert to_expression(program[3].args[0]).sparql() == "(((?pop_2021 - ?pop_2011) / ?pop_2011) * 100)"
    assert is_markqa_program(GROWTH) and is_markqa_program(GROWTH.encode())


def test_every_form_of_argument() -> None:
    program = parse_markqa_program(
        "# Berlin and more\n\n"
        'a = PyQL()  # first\n'
        'a.add_quantity("Q64", \'P1082\', "pop", time=to_date(2020, 5, 1), unit=True)\n'
        "a.add_max('pop', return_obj='?x', offset=1, limit=3); a.add_min('pop', limit=None)\n"
        "b = PyQL()\n"
        "b.add_assignment(['Q1', 'Q2'], 'c')\n"
        "b.add_sub_query(\n"
        "    a,\n"
        ")\n"
        "b.add_bind(add(-3, +2.50, 'x'), 'y')\n"
        "b.add_count('c', 'n', group_obj='x')\n"
        "print(b.sparql)\n"
    )
    kinds = [type(s).__name__ for s in program]
    assert kinds == ["Create", "Call", "Call", "Call", "Create", "Call", "Call", "Call", "Call", "Print"]
    quantity, most = program[1], program[2]
    assert quantity.kwargs == (("time", FuncCall("to_date", (Number(2020), Number(5), Number(1)))), ("unit", Bool(True)))
    assert most.kwargs == (("return_obj", Str("?x")), ("offset", Number(1)), ("limit", Number(3)))
    assert program[3].kwargs == (("limit", NoneValue()),) and (program[3].line, program[3].col) == (5, 55)
    assert program[5].args[0] == ListValue((Str("Q1"), Str("Q2")))
    assert program[6].args == (Ref("a"),)
    numbers = program[7].args[0].args
    assert numbers == (Number(-3), Number(Decimal("2.50")), Str("x"))
    assert isinstance(numbers[0].value, int) and isinstance(numbers[1].value, Decimal)
    assert program[8].kwargs == (("group_obj", Str("x")),)


def test_bound_arguments_fill_markqa_defaults() -> None:
    call = parse_markqa_program("a = PyQL()\na.add_quantity('Q1', 'P2', 'x')\nprint(a.sparql)")[1]
    assert bound_arguments(call) == {
        "entity": Str("Q1"), "prop": Str("P2"), "tag": Str("x"), "time": Bool(False), "unit": Bool(False)
    }
    # The two copies of the reference name some parameters differently; both are accepted.
    for name in ("equation", "expression"):
        bind = parse_markqa_program(f"a = PyQL()\na.add_bind({name}=sub(1, 2), var_name='d')\nprint(a.sparql)")[1]
        assert bound_arguments(bind)["equation"] == FuncCall("sub", (Number(1), Number(2)))
    assert bound_arguments(FuncCall("to_date", (Number(2020),))) == {"year": Number(2020), "month": Number(1), "day": Number(1)}


def test_the_tables_are_markqas() -> None:
    # The reference's public PyQL methods (baselines/utils/PyQL_parser.py), less
    # add_triple_pattern, which takes raw SPARQL and is refused.
    reference = {
        "set_head", "set_answer", "add_sub_query", "add_quantity_by_qualifier", "add_quantity_with_qualifier",
        "add_quantity", "add_fact", "add_bind", "add_type_constrain", "add_avg", "add_sum", "add_rank",
        "add_count", "add_max", "add_min", "add_filter", "add_compare", "add_assignment", "add_start_time",
        "add_end_time", "add_time",
    }
    assert set(METHODS) == reference
    assert set(FUNCTIONS) == {
        "add", "sub", "mul", "div", "abs", "ceil_mul", "ceil_div", "floor_mul", "floor_div", "avg", "year",
        "month", "to_date", "to_decimal",
    }
    assert str(METHODS["add_max"]) == "add_max(max_obj, return_obj='*', offset=0, limit=1)"
    assert str(FUNCTIONS["to_date"]) == "to_date(year, month=1, day=1)"
    assert set(FUNCTIONS) <= set(ex.__all__)


# ---------------------------------------------------------------------------
# Refusals: one error, with line and column

ERRORS = [
    ("unknown method", H + "a.add_quantiy('Q1', 'P2', 'x')" + P, 2, 1, "unknown method add_quantiy; MarkQA's methods are set_head"),
    ("refused method", H + "a.add_triple_pattern('?x ?y ?z.')" + P, 2, 1, "raw SPARQL"),
    ("function as method", H + "a.mul(1, 2)" + P, 2, 1, "mul is a function"),
    ("unknown function", H + "a.add_bind(pow(2, 3), 'x')" + P, 2, 12, "unknown function pow(); MarkQA's functions are add, sub"),
    ("method as function", H + "a.add_bind(add_bind(1), 'x')" + P, 2, 12, "add_bind is a method"),
    ("too few (method)", H + "a.add_quantity('Q1', 'P2')" + P, 2, 1, "add_quantity() takes 3 to 5 arguments"),
    ("too many (method)", H + "a.add_time('Q1', 't', 3)" + P, 2, 1, "add_time() takes 2 arguments"),
    ("too few (function)", H + "a.add_bind(sub('a'), 'x')" + P, 2, 12, "sub() takes 2 arguments"),
    ("too many (function)", H + "a.add_bind(abs(1, 2), 'x')" + P, 2, 12, "abs() takes 1 argument"),
    ("empty varargs", H + "a.add_bind(add(), 'x')" + P, 2, 12, "add() takes at least 1 argument"),
    ("no sub-queries", H + "a.add_sub_query()" + P, 2, 1, "add_sub_query() takes at least 1 argument"),
    ("unknown keyword", H + "a.add_max('x', top=3)" + P, 2, 20, "add_max() has no parameter top"),
    ("keyword twice", H + "a.add_max('x', max_obj='y')" + P, 2, 24, "got max_obj twice"),
    ("keyword repeated", H + "a.add_max('x', limit=1, limit=2)" + P, 2, 25, "keyword argument limit repeated"),
    ("positional after keyword", H + "a.add_max('x', limit=1, 2)" + P, 2, 25, "positional argument follows keyword"),
    ("string for offset", H + "a.add_max('x', offset='x')" + P, 2, 23, "argument offset: expected a whole number"),
    ("string for limit", H + "a.add_min('x', '*', 0, '3')" + P, 2, 24, "argument limit"),
    ("decimal for offset", H + "a.add_max('x', offset=1.5)" + P, 2, 23, "found the number 1.5"),
    ("negative limit", H + "a.add_max('x', limit=-1)" + P, 2, 22, "found the number -1"),
    ("string for unit", H + "a.add_quantity('Q1', 'P2', 'x', unit='yes')" + P, 2, 38, "argument unit: expected True or False"),
    ("decimal year", H + "a.add_quantity('Q1', 'P2', 'x', 2011.5)" + P, 2, 33, "argument time"),
    ("string for to_date", H + "a.add_bind(year(to_date('x')), 'y')" + P, 2, 25, "to_date() argument year: expected a whole number"),
    ("number for year()", H + "a.add_bind(year(2020), 'y')" + P, 2, 17, "year() argument time"),
    ("no such day", H + "a.add_bind(year(to_date(2021, 2, 30)), 'y')" + P, 2, 17, "is not a day"),
    ("bool operand", H + "a.add_bind(True, 'x')" + P, 2, 12, "argument equation: expected a number"),
    ("bool inside", H + "a.add_bind(mul(2, None), 'x')" + P, 2, 19, "found None"),
    ("to_decimal of a name", H + "a.add_bind(to_decimal('x'), 'y')" + P, 2, 23, "to_decimal() argument number"),
    ("malformed QID", H + "a.add_quantity('Q12x', 'P1082', 'pop')" + P, 2, 16, "'Q12x' is not a valid QID"),
    ("malformed QID operand", H + "a.add_bind(sub('Q12x', 1), 'd')" + P, 2, 16, "'Q12x' is not a valid QID"),
    ("malformed wd: QID", H + "a.add_time('wd:Qx', 't')" + P, 2, 12, "'wd:Qx' is not a valid QID"),
    ("bare Q", H + "a.add_type_constrain('Q', 'x')" + P, 2, 22, "'Q' is not a valid QID"),
    ("QID in a list", H + "a.add_assignment(['Q1', 'Q2x'], 'c')" + P, 2, 25, "'Q2x' is not a valid QID"),
    ("variable as type", H + "a.add_type_constrain('film', 'x')" + P, 2, 22, "expected a QID string"),
    ("malformed PID", H + "a.add_quantity('Q64', 'P', 'pop')" + P, 2, 23, "'P' is not a valid PID"),
    ("malformed PID 2", H + "a.add_quantity('Q64', 'P12x', 'pop')" + P, 2, 23, "'P12x' is not a valid PID"),
    ("prefixed PID", H + "a.add_fact('Q1', 'wdt:P31', 'Q5', 'wdt')" + P, 2, 18, "'wdt:P31' is not a valid PID"),
    ("bad prefix", H + "a.add_fact('Q1', 'P31', 'Q5', 'rdfs')" + P, 2, 31, "argument p_prefix"),
    ("bad operator", H + "a.add_compare('x', '=>', 3)" + P, 2, 20, "argument op: expected a comparison operator"),
    ("QID as variable", H + "a.add_time('Q1', 'Q5')" + P, 2, 18, "'Q5' is an entity, not a variable name"),
    ("bad variable", H + "a.add_bind(sub('pop-2011', 1), 'd')" + P, 2, 16, "variable name 'pop-2011' is not valid"),
    ("bad variable tag", H + "a.add_quantity('Q1', 'P2', 'a.b')" + P, 2, 28, "variable name 'a.b' is not valid"),
    ("undefined object", H + "b.add_max('x')" + P, 2, 1, "b is not a PyQL object; create it first with b = PyQL() (defined: a)"),
    ("undefined sub-query", H + "a.add_sub_query(c)" + P, 2, 17, "c is not a PyQL object; create it first with c = PyQL() (defined: a)"),
    ("string sub-query", H + "a.add_sub_query('c')" + P, 2, 17, "expected a PyQL object"),
    ("self sub-query", H + "a.add_sub_query(a)" + P, 2, 17, "cannot be a sub-query of itself"),
    ("undefined printed", H + "print(b.sparql)\n", 2, 1, "b is not a PyQL object"),
    ("used before created", "a.add_max('x')\na = PyQL()" + P, 1, 1, "a is not a PyQL object"),
    ("name as argument", H + "a.add_bind(x, 'y')" + P, 2, 12, "argument equation: expected a number, a variable name"),
    ("import", "import os\n" + H + "print(a.sparql)", 1, 8, "unexpected name 'os'"),
    ("exec", H + "exec('import os')" + P, 2, 1, "exec(...) is not a MarkQA statement"),
    ("eval assigned", H + "x = eval('1')" + P, 2, 1, "only x = PyQL() may be assigned"),
    ("method result assigned", H + "t = a.add_quantity('Q1', 'P2', 'x')" + P, 2, 1, "only x = PyQL() may be assigned"),
    ("bare name", H + "a" + P, 2, 1, "a is not a MarkQA statement"),
    ("bare string", H + "'a'" + P, 2, 1, "a string is not a MarkQA statement"),
    ("other attribute printed", H + "print(a.sparql_inner)\n", 2, 9, "only .sparql can be printed"),
    ("object printed", H + "print(a)\n", 2, 1, "print() takes the query of one PyQL object"),
    ("two things printed", H + "print(a.sparql, a.sparql)\n", 2, 1, "print() takes the query of one PyQL object"),
    ("attribute as argument", H + "a.add_bind(a.sparql, 'x')" + P, 2, 12, "attribute is .sparql"),
    ("method call as argument", H + "a.add_bind(a.add_max('x'), 'x')" + P, 2, 12, "a method call is a statement of its own"),
    ("PyQL as argument", H + "a.add_sub_query(PyQL())" + P, 2, 17, "PyQL() can only be assigned"),
    ("PyQL with arguments", "a = PyQL(1)" + P, 1, 5, "PyQL() takes no arguments"),
    ("reserved object name", "print = PyQL()" + P, 1, 1, "print cannot name a PyQL object"),
    ("keyword object name", "lambda = PyQL()" + P, 1, 1, "lambda cannot name a PyQL object"),
    ("chained attribute", H + "a.b.c()" + P, 2, 4, "unexpected '.'"),
    ("operator", H + "a.add_bind(1 + 2, 'x')" + P, 2, 14, "unexpected character '+'"),
    ("parenthesis", H + "a.add_bind((1), 'x')" + P, 2, 12, "unexpected '('"),
    ("unterminated string", H + "a.add_bind('x, y)" + P, 2, 12, "unterminated string"),
    ("adjacent strings", H + "a.add_bind('x, 'y')" + P, 2, 17, "unexpected name 'y'; expected ')' or ','"),
    ("unclosed call", H + "a.add_bind(mul(1, 2), 'x'", 2, 26, "unexpected end of program; expected ')' or ','"),
    ("bad escape", H + "a.set_head('\\xZZ')" + P, 2, 12, "bad escape"),
    ("exponent", H + "a.add_bind(mul(1e3, 2), 'x')" + P, 2, 16, "unexpected character"),
    ("print not last", H + "print(a.sparql)\na.add_max('x')" + P, 2, 1, "print(...) must be the last statement"),
    ("no print, objects apart", H + "a.add_max('x')\nb = PyQL()\nb.add_max('y')\n", 4, 1,
     "the program prints no query, and its last PyQL object b does not hold a as a sub-query"),
    ("no print, last object inside another", H + "b = PyQL()\nb.add_max('y')\na.add_sub_query(b)\n", 4, 1,
     "its last PyQL object b does not hold a as a sub-query, so which object is the answer is ambiguous (b or a)"),
    ("empty", "\n  # nothing\n", 1, 1, "the program has no statements"),
    ("not UTF-8", b"a = PyQL()\n# caf\xe9\nprint(a.sparql)\n", 2, 6, "not UTF-8 text: byte 0xe9"),
    ("lone surrogate", "a = PyQL()\na.set_head('\udcff')" + P, 2, 13, "lone surrogate"),
    ("NUL", H + "a.add_max('x')\x00" + P, 2, 15, "unexpected character '\\x00'"),
]


@pytest.mark.parametrize("program,line,col,fragment", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_each_refusal_names_line_and_column(program: str | bytes, line: int, col: int, fragment: str) -> None:
    with pytest.raises(MarkQAProgramError) as info:
        parse_markqa_program(program)
    error = info.value
    assert (error.line, error.column) == (line, col), str(error)
    assert f"line {line}, column {col}:" in str(error)
    assert fragment in str(error)
    assert error.kind == "markqa_program" and isinstance(error, PyQLError)
    if isinstance(program, str) and error.position is not None:
        assert program.count("\n", 0, error.position) + 1 == line


def test_type_errors_are_not_programs() -> None:
    with pytest.raises(TypeError):
        parse_markqa_program(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("opening,closing", [("add(", ")"), ("[", "]"), ("(", ")")])
def test_ten_thousand_brackets_are_one_error_not_a_recursion(opening: str, closing: str) -> None:
    deep = H + "a.add_bind(" + opening * 10_000 + "1" + closing * 10_000 + ", 'x')" + P
    with pytest.raises(MarkQAProgramError) as info:
        parse_markqa_program(deep)
    assert info.value.line == 2
    if opening != "(":  # plain parentheses are not MarkQA at all: a syntax error comes first
        assert f"nested deeper than {MAX_NESTING} levels" in str(info.value)
        assert info.value.column == len("a.add_bind(") + MAX_NESTING * len(opening)


def test_nesting_up_to_the_limit_is_read() -> None:
    levels = MAX_NESTING - 1  # the method call's own parentheses count
    ok = H + "a.add_bind(" + "abs(" * levels + "'x'" + ")" * levels + ", 'y')" + P
    expression = to_expression(parse_markqa_program(ok)[1].args[0])
    assert expression.depth == levels and expression.variables() == ("x",)
    too_deep = H + "a.add_bind(" + "abs(" * (levels + 1) + "'x'" + ")" * (levels + 1) + ", 'y')" + P
    with pytest.raises(MarkQAProgramError, match="nested deeper"):
        parse_markqa_program(too_deep)


def test_hand_built_deep_values_are_refused_without_recursion() -> None:
    value: FuncCall | Str = Str("x")
    for _ in range(10_000):
        value = FuncCall("abs", (value,))
    with pytest.raises(MarkQAProgramError, match="nested deeper"):
        to_expression(value)  # type: ignore[arg-type]
    with pytest.raises(MarkQAProgramError, match="nested deeper"):
        render_value(value)  # type: ignore[arg-type]
    node: ex.Expression = ex.Var("x")
    with pytest.raises(QueryError, match=f"deeper than {ex.MAX_DEPTH}"):
        for _ in range(10_000):
            node = ex.Func("ABS", (node,))
    assert node.depth == ex.MAX_DEPTH


def test_a_bom_is_ignored_and_columns_stay() -> None:
    program = parse_markqa_program("\ufeffa = PyQL()\nprint(a.sparql)\n".encode())
    assert program == [Create("a"), Print("a")] and program[0].col == 2


# ---------------------------------------------------------------------------
# Recognising the format


@pytest.mark.parametrize(
    "text,expected",
    [
        (GROWTH, True),
        ("a=PyQL();a.add_max('x');print( a . sparql );  # done\n\n", True),
        ("a = PyQL()\nprint(a.sparql)\n# trailing comment\n", True),
        ("a=PyQL()\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\na.set_answer('x0')\n", False),
        ("print(a.sparql)\n", False),
        ("a = PyQL()\nprint(a.sparql)\na.add_max('x')\n", False),
        ("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", False),
        ("", False),
        (b"\xff\xfe", False),
        (None, False),
    ],
)
def test_is_markqa_program_sniffs(text: object, expected: bool) -> None:
    assert is_markqa_program(text) is expected  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Round trips of generated programs, and fuzzing

_NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and not re.match(r"[qQ][0-9]", s) and s not in FUNCTIONS and s != "print"
)
_VAR = st.one_of(_NAME, _NAME.map(lambda s: "?" + s)).map(Str)
_QID = st.integers(1, 10**9).map(lambda n: Str(f"Q{n}"))
_PID = st.integers(1, 10**5).map(lambda n: Str(f"P{n}"))
_COUNT = st.integers(0, 1000).map(Number)
_NUMBER = st.one_of(
    st.integers(-(10**12), 10**12).map(Number),
    st.decimals(min_value=-(10**6), max_value=10**6, places=3).map(Number),
)
_DATE = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)).map(
    lambda d: FuncCall("to_date", (Number(d.year), Number(d.month), Number(d.day)))
)


def _operands() -> st.SearchStrategy:
    leaves = st.one_of(_VAR, _QID, _NUMBER, _NUMBER.map(lambda n: Str(render_value(n))))

    def grow(children: st.SearchStrategy) -> st.SearchStrategy:
        many = st.lists(children, min_size=1, max_size=3).map(tuple)
        two = st.tuples(children, children)
        return st.one_of(
            st.builds(FuncCall, st.sampled_from(["add", "mul", "avg", "ceil_mul", "floor_mul"]), many),
            st.builds(FuncCall, st.sampled_from(["sub", "div", "ceil_div", "floor_div"]), two),
            st.builds(FuncCall, st.just("abs"), children.map(lambda c: (c,))),
            st.builds(FuncCall, st.sampled_from(["year", "month"]), st.one_of(_VAR, _DATE).map(lambda c: (c,))),
            _NUMBER.map(lambda n: FuncCall("to_decimal", (n,))),
        )

    return st.recursive(leaves, grow, max_leaves=10)


_KIND_STRATEGIES = {
    "text": st.text(max_size=20).map(Str),
    "var": _VAR,
    "var_or_star": st.one_of(_VAR, st.just(Str("*"))),
    "var_or_none": st.one_of(_VAR, st.just(NoneValue())),
    "entity": st.one_of(_QID, _VAR),
    "qid": _QID,
    "pid": _PID,
    "bool": st.booleans().map(Bool),
    "count": _COUNT,
    "count_or_none": st.one_of(_COUNT, st.just(NoneValue())),
    "operator": st.sampled_from(["gt", ">", ">=", "le", "=", "ne", "!="]).map(Str),
    "prefix": st.sampled_from(["wdt", "p", "pq", "pqv"]).map(Str),
    "entity_list": st.lists(st.one_of(_QID, _VAR), min_size=1, max_size=4).map(lambda xs: ListValue(tuple(xs))),
    # a variable as the time is written '?t': a bare word there is refused (MarkQA would read it as True)
    "time": st.one_of(st.booleans().map(Bool), st.integers(1, 2100).map(Number), _DATE, _NAME.map(lambda s: Str("?" + s))),
    "object": st.one_of(_QID, _VAR, _NUMBER, _DATE),
    "operand": _operands(),
    "expression": _operands(),
}


@st.composite
def _call(draw: st.DrawFn, receiver: str, others: list[str]) -> Call:
    names = [m for m in METHODS if m != "add_sub_query" or others]
    sig = METHODS[draw(st.sampled_from(names))]
    if sig.params[0].variadic:
        refs = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3))
        return Call(receiver, sig.name, tuple(Ref(r) for r in refs))
    required = [p for p in sig.params if p.default is None]
    optional = [p for p in sig.params if p.default is not None]
    n_positional = draw(st.integers(len(required), len(sig.params)))
    positional = sig.params[:n_positional]
    keywords = [p for p in optional[n_positional - len(required):] if draw(st.booleans())]
    keywords = draw(st.permutations(keywords))
    args = tuple(draw(_KIND_STRATEGIES[p.kind]) for p in positional)
    kwargs = tuple((draw(st.sampled_from((p.name, *p.aliases))), draw(_KIND_STRATEGIES[p.kind])) for p in keywords)
    return Call(receiver, sig.name, args, kwargs)


@st.composite
def _programs(draw: st.DrawFn) -> list:
    objects = draw(st.lists(_NAME.filter(lambda s: s not in ("True", "False", "None")), min_size=1, max_size=3, unique=True))
    statements: list = [Create(objects[0])]
    created = [objects[0]]
    for _ in range(draw(st.integers(0, 6))):
        if len(created) < len(objects) and draw(st.booleans()):
            created.append(objects[len(created)])
            statements.append(Create(created[-1]))
            continue
        receiver = draw(st.sampled_from(created))
        statements.append(draw(_call(receiver, [o for o in created if o != receiver])))
    statements.append(Print(draw(st.sampled_from(created))))
    return statements


def _decorate(text: str, draw: st.DrawFn) -> str:
    """Comments, blank lines and ';' between statements, as people write them."""
    comment = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=10)
    out = []
    for line in text.splitlines():
        if draw(st.booleans()):
            out.append(draw(st.sampled_from(["", "   ", "# " + draw(comment)])))
        out.append(line + (("  #" + draw(comment)) if draw(st.booleans()) else ""))
    return "\n".join(out) + draw(st.sampled_from(["", "\n", "\n\n"]))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_programs(), st.sampled_from(["'", '"']), st.data())
def test_generated_programs_round_trip(statements: list, quote: str, data: st.DataObject) -> None:
    text = render_program(statements, quote)
    assert parse_markqa_program(text) == statements
    decorated = _decorate(text, data.draw)
    parsed = parse_markqa_program(decorated)
    assert parsed == statements
    assert [s.line for s in parsed] == sorted(s.line for s in parsed)
    joined = "; ".join(text.splitlines())
    assert parse_markqa_program(joined.encode()) == statements
    assert is_markqa_program(text)


_SOUP = st.lists(
    st.sampled_from(
        ["a", " = ", "PyQL", "(", ")", ".", "add_bind", "add_max", "'x'", '"Q1"', "1", "-2.5", ",", "[", "]", "\n",
         ";", "print", "sparql", "mul", "sub", "to_date", "# c", " ", "time=", "True", "None", "'", '"', "\\",
         "import", "os", "__import__", "\udcff", "\x00", "\ufeff", "Q12x", "'P'"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=80), _SOUP, st.binary(max_size=60)))
def test_garbage_raises_only_the_package_error(text: str | bytes) -> None:
    try:
        statements = parse_markqa_program(text)
    except MarkQAProgramError as e:
        assert e.line is not None and e.column is not None and f"line {e.line}, column {e.column}" in str(e)
        return
    assert isinstance(statements[-1], Print)
    assert parse_markqa_program(render_program(statements)) == statements


@settings(max_examples=150, deadline=None)
@given(_operands())
def test_generated_expressions_convert_and_render(value: object) -> None:
    expression = to_expression(value)  # type: ignore[arg-type]
    text = expression.sparql()
    assert text.count("(") == text.count(")")
    for name in expression.variables():
        assert "?" + name in text
    _evaluate(text, {v: Decimal(i + 2) for i, v in enumerate(expression.variables())})  # the engine reads it


# ---------------------------------------------------------------------------
# MarkQA's evaluation order, checked against the reference's own strings

#: (MarkQA expression, the string the reference's functions return for it).
REFERENCE = [
    ("mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100)", "(?pop_2021 - ?pop_2011) / ?pop_2011 * 100"),
    ("div('x', mul('a', 'b'))", "?x / ?a * ?b"),
    ("div('x', div('a', 'b'))", "?x / ?a / ?b"),
    ("mul(div('a', 'b'), div('c', 'd'), 'e')", "?a / ?b * ?c / ?d * ?e"),
    ("avg('a', 'b', 'c')", "(?a + ?b + ?c) / 3"),
    ("ceil_div(mul('all_people_number', 80), 100)", "ceil(?all_people_number * 80 / 100)"),
    ("floor_mul(add(1, 'grow_rate'), '2014_visiters')", "floor((1 + ?grow_rate) * ?2014_visiters)"),
    ("floor_div(div('increase', 'years'), 1000)", "floor(?increase / ?years / 1000)"),
    ("sub(add(2020, 1), -2005)", "((2020 + 1) - (-2005))"),
    ("sub('a', div('b', mul('c', 'd')))", "(?a - ?b / ?c * ?d)"),
    ("abs(sub('-3.5', '+2'))", "ABS(((-3.5) - 2))"),
    ("ceil_mul(div('a', 'b'), 'c', 0.5)", "ceil(?a / ?b * ?c * 0.5)"),
    ("div(sub('a', 'b'), sub('c', 'a'))", "(?a - ?b) / (?c - ?a)"),
    ("mul('a', div('b', mul('c', div('d', 'e'))))", "?a * ?b / ?c * ?d / ?e"),
]
_STORE = pyoxigraph.Store()
_ERROR = object()


def _evaluate(expression: str, values: dict[str, Decimal]) -> object:
    """The value Oxigraph computes for ``expression`` with the variables bound (``_ERROR`` if unbound)."""
    names = sorted(values)
    row = " ".join(str(values[n]) for n in names)
    query = (
        "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nPREFIX wd: <http://www.wikidata.org/entity/>\n"
        f"SELECT ({expression} AS ?result) WHERE {{ VALUES ({' '.join('?' + n for n in names)}) {{ ({row}) }} }}"
    )
    (solution,) = list(_STORE.query(query))
    value = solution[0]
    if value is None:
        return _ERROR
    return Decimal(value.value) if isinstance(value, pyoxigraph.Literal) and value.datatype.value.endswith(("integer", "decimal")) else value


# Divisors whose quotients terminate: Oxigraph's fixed-precision decimals overflow on
# products of long quotients (7 / 3 * 2.5 is unbound there), whatever the order.
_BINDINGS = [
    {"a": Decimal(7), "b": Decimal(4), "c": Decimal(5), "d": Decimal(8), "e": Decimal("0.5"), "x": Decimal(13)},
    {"a": Decimal(-5), "b": Decimal("2.5"), "c": Decimal(4), "d": Decimal(-16), "e": Decimal(2), "x": Decimal("0.75")},
]


@pytest.mark.parametrize("markqa,reference", REFERENCE, ids=[r[0] for r in REFERENCE])
@pytest.mark.parametrize("binding", range(len(_BINDINGS)))
def test_our_expressions_evaluate_as_the_reference_strings(markqa: str, reference: str, binding: int) -> None:
    expression = _expression_of(markqa)
    ours = expression.sparql()
    names = set(expression.variables())
    assert names == set(re.findall(r"\?(\w+)", reference))
    base = _BINDINGS[binding]
    values = {n: base.get(n, Decimal(2 ** (len(n) % 5) * (binding + 1))) for n in names}
    expected = _evaluate(reference, values)
    assert expected is not _ERROR
    assert _evaluate(ours, values) == expected, (ours, reference)


def test_the_order_check_has_teeth() -> None:
    values = {"x": Decimal(13), "a": Decimal(4), "b": Decimal(5)}
    assert _evaluate("?x / ?a * ?b", values) != _evaluate("?x / (?a * ?b)", values)
    assert _evaluate(_expression_of("div('x', mul('a', 'b'))").sparql(), values) == _evaluate("(?x / ?a) * ?b", values)


def test_reference_dates_and_decimals_mean_the_same() -> None:
    # Reference: to_date(2020, 5, 1) = '"2020-05-01T00:00:00Z"^^xsd:dateTime', to_decimal('5') = '"5"^^xsd:decimal',
    # month(to_date(2020, 5, 1)) = 'MONTH("2020-05-01T00:00:00Z"^^xsd:dateTime)'.
    assert _evaluate(_expression_of("month(to_date(2020, 5, 1))").sparql(), {"z": Decimal(0)}) == _evaluate(
        'MONTH("2020-05-01T00:00:00Z"^^xsd:dateTime)', {"z": Decimal(0)}
    ) == 5
    ours = _expression_of("div(to_decimal('5'), 2)").sparql()
    assert _evaluate(ours, {"z": Decimal(0)}) == _evaluate('"5"^^xsd:decimal / 2', {"z": Decimal(0)}) == Decimal("2.5")


# ---------------------------------------------------------------------------
# The expression tree itself


def test_operands_follow_digit_or_var() -> None:
    assert ex.operand("pop 2011") == ex.Var("pop_2011")
    assert ex.operand(" ?x ") == ex.Var("x")
    assert ex.operand("+5") == ex.Num(5) and ex.operand("-2.50") == ex.Num(Decimal("-2.50"))
    assert ex.operand("Q42") == ex.operand("wd:Q42") == ex.Entity("Q42")
    assert ex.operand("q42") == ex.Var("q42")  # digit_or_var reads only upper-case Q as an entity
    assert ex.operand("q1_rate") == ex.Var("q1_rate")
    assert ex.operand(2.5) == ex.Num(Decimal("2.5")) and ex.operand(ex.Var("v")) == ex.Var("v")
    for bad, error in [("Q12x", QueryError), (True, QueryError), ("a b?", TermError), (float("nan"), QueryError), ([], QueryError)]:
        with pytest.raises(error):
            ex.operand(bad)  # type: ignore[arg-type]


def test_nodes_are_frozen_and_values_come_through_escape() -> None:
    node = ex.add("a", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.op = "-"  # type: ignore[misc]
    with pytest.raises(TermError):
        ex.Var('x" } ; DROP ALL')
    assert ex.Num(Decimal("-0.5")).sparql() == "(-0.5)"
    assert ex.DateLit(dt.date(5, 1, 2)).lexical == "0005-01-02T00:00:00Z"
    assert ex.to_decimal(-3).sparql("generic") == "xsd:decimal((-3))"
    with pytest.raises(QueryError, match="no entity named Q42"):
        ex.Entity("Q42").sparql("generic")
    with pytest.raises(QueryError):
        ex.Op("%", (ex.Num(1), ex.Num(2)))
    with pytest.raises(QueryError):
        ex.Func("YEAR", (ex.Num(2020),))
    with pytest.raises(QueryError):
        ex.to_date(2020, 0)


def test_variables_in_first_use_order() -> None:
    expression = ex.avg(ex.sub("b", "a"), ex.year("t"), "b", "Q5", 3)
    assert expression.variables() == ("b", "a", "t")
    assert "wd:Q5" in expression.sparql()


def test_recursion_limit_is_not_approached() -> None:
    assert ex.MAX_DEPTH * 4 < sys.getrecursionlimit()
