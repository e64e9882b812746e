"""The ``markqa`` format: MarkQA's PyQL programs (``a = PyQL()`` ... ``print(a.sparql)``).

A program is parsed by :mod:`pyql.interchange.markqa_program` (a lark grammar; never
executed) and replayed on :class:`~pyql.builder.query.Query` objects of the Wikidata
profile: each ``x = PyQL()`` starts a query, each ``x.method(...)`` calls
the builder method of the same name with MarkQA's arguments, expression
functions (``sub``, ``div``, ...) become :mod:`pyql.builder.expressions` trees, a
bare object name (``b.add_sub_query(a)``) is that object's query as it is at
that line, and the query printed by ``print(x.sparql)`` is the result; a program that
prints nothing gives its last object's query, as MarkQA's evaluation reads
it (:func:`~pyql.interchange.markqa_program.result_object`).

Example:
    >>> program = '''a = PyQL()
    ... a.add_quantity('Q64', 'P1082', 'pop_2011', 2011)
    ... a.add_quantity('Q64', 'P1082', 'pop_2021', 2021)
    ... a.add_bind(mul(div(sub('pop_2021', 'pop_2011'), 'pop_2011'), 100), 'ans')
    ... print(a.sparql)'''
    >>> q = program_to_query(program)
    >>> q.answer, "BIND((((?pop_2021 - ?pop_2011) / ?pop_2011) * 100) AS ?ans)" in q.sparql()
    (Variable(name='ans'), True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyql.errors import MarkQAProgramError, PyQLError
from pyql.builder.expressions import DateLit, Entity, Var, operand
from pyql.interchange.registry import reader
from pyql.interchange.markqa_program import (
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
    Value,
    bound_arguments,
    parse_markqa_program,
    result_object,
    to_expression,
)
from pyql.builder.profiles import WIKIDATA, Profile
from pyql.builder.query import Query

__all__ = ["entity_or_variable", "program_to_query", "read_markqa"]

#: MarkQA's parameter name → the builder's, per method (the same order; only the names differ).
_RENAMED: Mapping[str, Mapping[str, str]] = {
    "set_answer": {"answer": "var"},
    "add_bind": {"equation": "expression", "var_name": "var"},
    "add_type_constrain": {"type_id": "type", "new_var": "var"},
    "add_avg": {"avg_var": "var"},
    "add_sum": {"sum_var": "var"},
    "add_count": {"count_obj": "var"},
    "add_max": {"max_obj": "var"},
    "add_min": {"min_obj": "var"},
    "add_filter": {"compare_obj1": "left", "operator": "op", "compare_obj2": "right"},
    "add_compare": {"obj1": "left", "obj2": "right"},
    "add_assignment": {"var_list": "values", "new_var": "var"},
}


def _error_at(message: str, line: int, col: int) -> MarkQAProgramError:
    """A program that parsed but cannot be replayed, at a line and column."""
    return MarkQAProgramError(f"line {line}, column {col}: {message}", line=line, column=col)


def _plain(value: Value, objects: Mapping[str, Query]) -> Any:
    """A parsed argument as the builder takes it."""
    if isinstance(value, (Str, Number, Bool)):
        return value.value
    if isinstance(value, NoneValue):
        return None
    if isinstance(value, ListValue):
        return [_plain(item, objects) for item in value.items]
    if isinstance(value, FuncCall):
        return to_expression(value)
    if isinstance(value, Ref):
        if value.name not in objects:
            raise _error_at(f"{value.name} is not a PyQL object of the program", value.line, value.col)
        return objects[value.name]
    raise _error_at("unexpected argument", value.line, value.col)


#: MarkQA's parameters that hold an entity or a variable: a bare name there means a variable
#: (MarkQA's ``__check_ent_format``: "other situation regard as a variable forget ?").
_ENTITY_OR_VARIABLE = frozenset({
    "s", "o", "answer", "new_var", "avg_var", "sum_var", "count_obj", "group_obj", "max_obj", "min_obj",
    "return_obj", "compare_obj1", "compare_obj2", "obj1", "obj2", "entity", "main_obj", "qualifier_obj",
    "rank_var", "var_list", "var_name", "type_id",
})
def entity_or_variable(text: str) -> str:
    """MarkQA's reading of a string where an entity or a variable belongs.

    ``*`` and a typed literal stay; the rest is read as an expression operand
    (:func:`pyql.builder.expressions.operand`, MarkQA's ``digit_or_var``): a number
    stays, a QID (``wd:`` optional) is the entity, anything else a variable
    whose ``?`` was left out (spaces become ``_``).

    Example:
        >>> [entity_or_variable(s) for s in ("city", "?c", "wd:Q64", "Q64", "12.5", "big city")]
        ['?city', '?c', 'Q64', 'Q64', '12.5', '?big_city']
    """
    text = text.strip()
    if text == "*" or "^^" in text:
        return text
    term = operand(text)
    if isinstance(term, Var):
        return f"?{term.name}"
    if isinstance(term, Entity):
        return term.id
    return text  # a number, as written


#: MarkQA's operator words (``__check_op``).
_OPERATOR_WORDS: Mapping[str, str] = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "e": "=", "ne": "!="}


def _normalised(name: str, value: Any) -> Any:
    """An argument read as MarkQA reads it: operator words, dates, bare variable names."""
    if name in ("operator", "op") and isinstance(value, str):
        return _OPERATOR_WORDS.get(value.strip(), value.strip())
    if isinstance(value, DateLit) and name in ("compare_obj1", "compare_obj2", "obj1", "obj2"):
        return value.value  # to_date(...) compared or filtered: the day, a date literal of the query
    if name not in _ENTITY_OR_VARIABLE:
        return value
    if isinstance(value, str):
        return entity_or_variable(value)
    if isinstance(value, list):
        return [entity_or_variable(v) if isinstance(v, str) else v for v in value]
    return value


def _fact_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """``add_fact(s, p, o, p_prefix)``: MarkQA's property and its prefix are one relation (``wdt:P31``)."""
    prop = str(args["p"]).strip()
    if prop.isdigit():
        prop = f"P{prop}"
    return {"head": args["s"], "relation": f"{str(args['p_prefix']).strip()}:{prop}", "tail": args["o"]}


def _call_error(call: Call, exc: PyQLError) -> MarkQAProgramError:
    """A builder error as one line naming the program, the call's line and column, and the method once."""
    message = " ".join(str(exc).split())
    message = message.removeprefix(f"{call.method}: ")
    return MarkQAProgramError(f"MarkQA program, line {call.line}, column {call.col}: {call.method}: {message}",
                              line=call.line, column=call.col)


def _apply(query: Query, call: Call, objects: Mapping[str, Query]) -> Query:
    """The query after one MarkQA call (errors name the call's line and column)."""
    bound = bound_arguments(call)
    args = {name: _normalised(name, tuple(_plain(v, objects) for v in value) if isinstance(value, tuple) else _plain(value, objects))
            for name, value in bound.items()}

    def build() -> Query:
        if call.method == "add_fact":
            return query.add_fact(**_fact_arguments(args))
        if call.method == "add_sub_query":
            return query.add_sub_query(*args["sub_query"])
        renamed = _RENAMED.get(call.method, {})
        return getattr(query, call.method)(**{renamed.get(k, k): v for k, v in args.items()})

    return _call(call, build)


class _Object:
    """One ``x = PyQL()`` of a program: its sub-queries (as they were when added) and its other calls.

    MarkQA writes an object's sub-queries first in its WHERE clause, before
    every triple pattern and BIND, whenever ``add_sub_query`` was called
    (``sub_query_text + triple_pattern_text``), so an ``add_bind`` may use
    the variables of a sub-query added after it. The object's query is
    therefore its sub-queries, then its other calls in program order; it is
    built call by call once no sub-query is still to come, else when it is
    needed (printed, passed to ``add_sub_query``, or at the end).
    """

    def __init__(self, profile: str | Profile, last_sub_query: int) -> None:
        self.profile = profile
        self.last_sub_query = last_sub_query  # the index of its last add_sub_query statement (-1: none)
        self.sub_queries: list[tuple[Call, tuple[Query, ...]]] = []
        self.calls: list[Call] = []
        self.query: Query | None = Query(profile=profile)

    def built(self, objects: Mapping[str, Query]) -> Query:
        """The object's query now (errors name the line of the call that does not fit)."""
        if self.query is None:
            query = Query(profile=self.profile)
            for call, queries in self.sub_queries:
                query = _call(call, lambda q=query, qs=queries: q.add_sub_query(*qs))
            for call in self.calls:
                query = _apply(query, call, objects)
            self.query = query
        return self.query


def _call(call: Call, build: Any) -> Query:
    """``build()``, a builder error reported at ``call``'s line and column."""
    try:
        return build()
    except MarkQAProgramError:
        raise
    except PyQLError as exc:
        raise _call_error(call, exc) from None


def _sub_queries(call: Call, program: Mapping[str, _Object], objects: dict[str, Query]) -> tuple[Query, ...]:
    """The queries an ``add_sub_query`` call joins, each as its object is at that line."""
    queries = []
    for value in bound_arguments(call).get("sub_query", ()):
        if not isinstance(value, Ref) or value.name not in program:
            line, col = getattr(value, "line", call.line), getattr(value, "col", call.col)
            raise _error_at("add_sub_query takes PyQL objects of the program, such as a", line, col)
        objects[value.name] = program[value.name].built(objects)
        queries.append(objects[value.name])
    return tuple(queries)


def program_to_query(text: str | bytes, profile: str | Profile = WIKIDATA) -> Query:
    """The query a MarkQA program prints, built without running the program.

    A program that prints nothing gives its last object's query, as MarkQA's
    evaluation reads it (:func:`pyql.interchange.markqa_program.result_object`).
    Sub-queries come first in their object's query, as MarkQA writes them
    (see :class:`_Object`).

    Raises:
        MarkQAProgramError: the program does not parse, or a call does not
            fit the builder (the message names its line and column).

    Example:
        >>> program_to_query("a = PyQL()\\na.add_time('Q1', 't')\\nprint(a.sparql)").answer is None
        True
        >>> program_to_query("a=PyQL()\\na.add_fact('Q222823', 'P176', 'x0' ,'wdt')").actions()
        ['add_fact(wd:Q222823, wdt:P176, ?x0)']
        >>> later = "a = PyQL()\\na.add_time('Q1', 't')\\nb = PyQL()\\nb.add_bind(year('t'), 'y')\\nb.add_sub_query(a)\\nprint(b.sparql)"
        >>> program_to_query(later).actions()[-1]
        'add_bind(year(?t), ?y)'
    """
    statements = parse_markqa_program(text)
    last = {st.receiver: i for i, st in enumerate(statements) if isinstance(st, Call) and st.method == "add_sub_query"}
    program: dict[str, _Object] = {}
    objects: dict[str, Query] = {}
    for index, statement in enumerate(statements):
        if isinstance(statement, Create):
            program[statement.var] = _Object(profile, last.get(statement.var, -1))
        elif isinstance(statement, Call):
            target = program[statement.receiver]
            if statement.method == "add_sub_query":
                target.sub_queries.append((statement, _sub_queries(statement, program, objects)))
                target.query = None
            else:
                target.calls.append(statement)
                if target.query is not None and index > target.last_sub_query:
                    target.query = _apply(target.query, statement, objects)
                else:
                    target.query = None  # a sub-query is still to come: built when it is known
            if index >= target.last_sub_query:
                objects[statement.receiver] = target.built(objects)
        elif isinstance(statement, Print):
            objects[statement.receiver] = program[statement.receiver].built(objects)
    for name, target in program.items():  # every call checked, as running the program would
        objects[name] = target.built(objects)
    return objects[result_object(statements)]


@reader("markqa", "MarkQA programs: a = PyQL(), a.add_quantity('Q64', 'P1082', 'pop', 2021), ..., print(a.sparql); "
                  "without a print line the last PyQL object made is the query, as MarkQA's evaluation reads it")
def read_markqa(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
    """The query of a MarkQA program, on the Wikidata profile unless another Wikidata-shaped one is given.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> read_markqa("a = PyQL()\\na.add_time('Q1', 't')\\nprint(a.sparql)", {}, FREEBASE).profile.name
        'wikidata'
    """
    return program_to_query(text, profile if profile.name != "freebase" else WIKIDATA)

