"""Compile a :class:`~pyql_sql.query.TableQuery` to a sqlglot expression.

Layering (see :mod:`pyql_sql.tabledata`): this module reads the steps
(:mod:`pyql_sql.steps`) and the table's columns (:mod:`pyql_sql.tabledata`)
and does not import :mod:`pyql_sql.query`; a query is anything shaped like
:class:`CompilableQuery` (``table``, ``answer``, ``conditions``), which
:class:`~pyql_sql.query.TableQuery` is. :mod:`pyql_sql.query` imports this
module for ``TableQuery.sql()``, ``expression()`` and ``display_sql()``.

The SQL is built with sqlglot's expression builder only: identifiers are the
table's physical names (``c<i>``, ``n<i>``, ``col<i>``) made with
:func:`sqlglot.exp.to_identifier`, and values are either placeholders or
literals made by sqlglot (which escapes them for each dialect). No header and
no value is ever formatted into SQL text.

Comparison rules (``c`` = the column's text, ``n`` = its numeric shadow,
``v`` = the value, ``num(v)`` = the value read as a number):

============================  ===========================================================
column / value                SQL
============================  ===========================================================
numeric column, numeric v     ``n op num(v)``
numeric column, text v        ``LOWER(TRIM(c)) op LOWER(v)`` (``=``/``!=`` only; ``<`` etc.
                              are refused when the step is added)
text column, numeric v,       ``COALESCE(n op num(v), LOWER(TRIM(c)) op LOWER(v))`` — a
``=``/``!=``                  cell that is a number compares as a number, others as text
text column, numeric v,       ``n op num(v)`` (cells that are not numbers never match)
``<``/``>``/``<=``/``>=``
text column, text v           ``LOWER(TRIM(c)) op LOWER(v)``
no shadow (WikiSQL ``.db``    ``LOWER(TRIM(c)) op LOWER(v)``, like WikiSQL's own engine
text column)
============================  ===========================================================

The answer: no aggregation returns ``c`` (the cell as shown); ``COUNT`` counts
``c``; ``MAX``/``MIN`` use ``n`` on numeric columns and ``c`` (text order) on
text columns; ``SUM``/``AVG`` use ``n`` whenever a shadow exists (cells that are
not numbers are skipped like NULLs). Without an answer the query selects
every column (used to show matching rows).

An order (``add_order``) is one more conjunct, so that counting, listing and
aggregating the rows kept all see it: ``rowid IN (SELECT rowid FROM t WHERE
<the conditions> AND key IS NOT NULL ORDER BY key DESC, rowid LIMIT k)``,
where ``key`` is the numeric shadow of a numeric column and the text
otherwise. The display form (:func:`logical_expression`) writes it as
``ORDER BY ... LIMIT k`` when the answer is not aggregated.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Points", "Try bonus"], [["Points", "Try bonus"], ["51", "5"]])
    >>> q = t.query().add_condition("Points", "=", 51).set_answer("Try bonus", "SUM")
    >>> print(q.sql())
    SELECT SUM("n1") FROM "t" WHERE COALESCE("n0" = 51, LOWER(TRIM("c0")) = LOWER('51'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from sqlglot import exp

from .numbers import value_text
from .steps import AnswerStep, ConditionStep, OrderStep
from .tabledata import Column, TableData

__all__ = [
    "CompilableQuery",
    "compile_query",
    "logical_expression",
    "condition_expression",
    "order_expression",
    "literal",
]

_COMPARISONS: dict[str, type[exp.Expression]] = {
    "=": exp.EQ,
    "!=": exp.NEQ,
    ">": exp.GT,
    "<": exp.LT,
    ">=": exp.GTE,
    "<=": exp.LTE,
}

_AGGREGATES: dict[str, type[exp.Expression]] = {
    "MAX": exp.Max,
    "MIN": exp.Min,
    "COUNT": exp.Count,
    "SUM": exp.Sum,
    "AVG": exp.Avg,
}

Binder = Callable[[object], exp.Expression]


class CompilableQuery(Protocol):
    """What the compiler reads of a query: :class:`~pyql_sql.query.TableQuery` has it.

    Attributes:
        table: the table the query runs on.
        answer: the last ``set_answer`` step, or None.
        conditions: the condition steps, in order.
        order: the last ``add_order`` step, or None.

    Example:
        >>> from pyql_sql import Table
        >>> q: CompilableQuery = Table.from_rows(["a"], [["1"]]).query().set_answer("a")
        >>> q.answer.action(), q.conditions
        ('set_answer(a, None)', ())
    """

    @property
    def table(self) -> TableData: ...

    @property
    def answer(self) -> AnswerStep | None: ...

    @property
    def conditions(self) -> tuple[ConditionStep, ...]: ...

    @property
    def order(self) -> OrderStep | None: ...


def literal(value: object) -> exp.Expression:
    """A SQL literal for a str/int/float, made by sqlglot.

    Example:
        >>> literal("it's; --").sql()
        "'it''s; --'"
        >>> literal(-3.5).sql()
        '-3.5'
    """
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.convert(value)


def _ident(name: str) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True))


def _cmp(op: str, left: exp.Expression, right: exp.Expression) -> exp.Expression:
    return _COMPARISONS[op](this=left, expression=right)


def condition_expression(step: ConditionStep, bind: Binder) -> exp.Expression:
    """The WHERE conjunct of one condition step (see the module's rule table).

    Args:
        step: the condition.
        bind: turns a value into a literal or a placeholder (and records it).

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Ends"], [["2011"], ["Retired"]])
        >>> step = t.query().add_condition("Ends", "=", "2,011").conditions[0]
        >>> print(condition_expression(step, literal).sql())
        COALESCE("n0" = 2011, LOWER(TRIM("c0")) = LOWER('2,011'))
    """
    col: Column = step.column
    text_cmp = lambda: _cmp(  # noqa: E731 - built lazily so params stay in text order
        step.op,
        exp.Lower(this=exp.Trim(this=_ident(col.text_sql))),
        exp.Lower(this=bind(value_text(step.value))),
    )
    number = step.number
    if number is None or col.num_sql is None:
        return text_cmp()
    compact: float | int = int(number) if number.is_integer() and abs(number) < 2**53 else number
    num_cmp = _cmp(step.op, _ident(col.num_sql), bind(compact))
    if col.is_numeric or step.op not in ("=", "!="):
        return num_cmp
    return exp.Coalesce(this=num_cmp, expressions=[text_cmp()])


def _select_expression(query: CompilableQuery) -> list[exp.Expression]:
    answer = query.answer
    if answer is None:
        return [_ident(c.text_sql) for c in query.table.columns]
    col = answer.column
    agg = answer.aggregation
    if agg is None:
        return [_ident(col.text_sql)]
    if agg == "COUNT":
        target = col.text_sql
    elif agg in ("MAX", "MIN"):
        target = col.num_sql if (col.is_numeric and col.num_sql) else col.text_sql
    else:  # SUM, AVG
        target = col.num_sql or col.text_sql
    return [_AGGREGATES[agg](this=_ident(target))]


def _order_keys(column: Column, descending: bool) -> tuple[exp.Expression, list[exp.Ordered]]:
    """What an order keeps (non-NULL keys) and sorts by: numbers by value, then text (on a mixed column)."""
    text = _ident(column.text_sql)
    if column.num_sql is None:
        return exp.Not(this=exp.Is(this=text, expression=exp.Null())), [exp.Ordered(this=text.copy(), desc=descending)]
    number = _ident(column.num_sql)
    if column.is_numeric:
        return exp.Not(this=exp.Is(this=number, expression=exp.Null())), [exp.Ordered(this=number.copy(), desc=descending)]
    numbers_first = exp.Ordered(this=exp.Is(this=number.copy(), expression=exp.Null()))
    return (
        exp.Not(this=exp.Is(this=text, expression=exp.Null())),
        [numbers_first, exp.Ordered(this=number.copy(), desc=descending), exp.Ordered(this=text.copy(), desc=descending)],
    )


def order_expression(query: CompilableQuery, order: OrderStep, bind: Binder) -> exp.Expression:
    """The conjunct of an ``add_order`` step: the rows among the first ``limit`` by the column (see the module).

    A numeric column sorts by number (other cells left out); a text column
    whose cells are partly numbers puts the numbers first, by value, then the
    text; ties keep table order.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Season", "Episodes"], [["1", "26"]])
        >>> q = t.query().add_order("Episodes", "DESC")
        >>> print(order_expression(q, q.order, literal).sql())
        "rowid" IN (SELECT "rowid" FROM "t" WHERE NOT "n1" IS NULL ORDER BY "n1" DESC, "rowid" LIMIT 1)
    """
    kept, keys = _order_keys(order.column, order.descending)
    inner = [condition_expression(step, bind) for step in query.conditions]
    select = (
        exp.select(_ident("rowid"))
        .from_(exp.table_(query.table.sql_name, quoted=True))
        .where(exp.and_(*inner, kept), copy=False)
        .order_by(*keys, _ident("rowid"), copy=False)
        .limit(exp.Literal.number(order.limit), copy=False)
    )
    return _ident("rowid").isin(query=select)


def compile_query(query: CompilableQuery, *, bind: str = "literal") -> tuple[exp.Select, list[object]]:
    """Compile ``query`` to ``(sqlglot Select, params)``.

    Args:
        query: the query.
        bind: ``"literal"`` inlines values; ``"param"`` uses placeholders and
            returns the values in placeholder order.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Goal", "Score"], [["1.", "1–0"]])
        >>> e, params = compile_query(t.query().add_condition("Goal", "<", 17).set_answer("Score"), bind="param")
        >>> (e.sql(), params)
        ('SELECT "c1" FROM "t" WHERE "n0" < ?', [17])
    """
    if bind not in ("literal", "param"):
        raise ValueError(f"bind must be 'literal' or 'param', not {bind!r}")
    params: list[object] = []

    def to_param(value: object) -> exp.Expression:
        params.append(value)
        return exp.Placeholder()

    binder: Binder = to_param if bind == "param" else literal
    select = exp.select(*_select_expression(query)).from_(
        exp.table_(query.table.sql_name, quoted=True)
    )
    conjuncts = [condition_expression(step, binder) for step in query.conditions]
    order = getattr(query, "order", None)
    if order is not None:
        conjuncts.append(order_expression(query, order, binder))
    if conjuncts:
        select = select.where(exp.and_(*conjuncts), copy=False)
    if order is not None and (query.answer is None or query.answer.aggregation is None):
        _, keys = _order_keys(order.column, order.descending)  # the rows kept come in the order's order
        select = select.order_by(*keys, _ident("rowid"), copy=False)
    return select, params


def logical_expression(query: CompilableQuery) -> exp.Select:
    """The query in terms of the original headers and table name, for display.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Say hi", "N"], [["x", "1"]], name="demo")
        >>> print(logical_expression(t.query().add_condition(0, "=", "it's").set_answer("N", "COUNT")).sql())
        SELECT COUNT("N") FROM "demo" WHERE "Say hi" = 'it''s'
    """

    def head(c: Column) -> exp.Column:
        return exp.column(exp.to_identifier(c.header, quoted=True))

    answer = query.answer
    if answer is None:
        cols: list[exp.Expression] = [head(c) for c in query.table.columns]
    elif answer.aggregation is None:
        cols = [head(answer.column)]
    else:
        cols = [_AGGREGATES[answer.aggregation](this=head(answer.column))]
    select = exp.select(*cols).from_(exp.table_(query.table.name, quoted=True))
    conjuncts = []
    for step in query.conditions:
        shown: object = value_text(step.value)
        if isinstance(step.value, (int, float)) and not isinstance(step.value, bool):
            shown = step.value
        elif step.number is not None and step.column.is_numeric:
            shown = int(step.number) if step.number.is_integer() else step.number
        value = literal(shown)
        conjuncts.append(_cmp(step.op, head(step.column), value))
    if conjuncts:
        select = select.where(exp.and_(*conjuncts), copy=False)
    return _display_order(select, query, head)


def _display_order(select: exp.Select, query: CompilableQuery, head: Callable[[Column], exp.Column]) -> exp.Select:
    """The display of an order: ``ORDER BY ... LIMIT`` on a plain answer, a sub-query under an aggregation."""
    order = getattr(query, "order", None)
    if order is None:
        return select
    ordered = select if query.answer is None or query.answer.aggregation is None else exp.select(exp.Star()).from_(
        exp.table_(query.table.name, quoted=True)).where(select.args["where"].this.copy() if select.args.get("where") else None, copy=False)
    ordered = ordered.order_by(exp.Ordered(this=head(order.column), desc=order.descending), copy=False).limit(
        exp.Literal.number(order.limit), copy=False)
    if ordered is select:
        return select
    outer = exp.select(*select.expressions).from_(ordered.subquery("kept"))
    return outer
