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
``!=`` (any of the above)     ``COALESCE(<the comparison>, TRUE)``: an empty cell is not the
                              value, so its row is kept (SQL alone would drop it: NULL <> v
                              is unknown)
text column, ``contains``     ``INSTR(PYQL_WORDS(c), PYQL_WORDS(v)) > 0``: the cell holds the
                              value's words as whole words (:func:`words_contain`)
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

The steps beyond WikiSQL's (see :mod:`pyql_sql.query`), each a conjunct or a
select of its own, so that a query stays one statement:

* a row's place is the table's position column (``r``, the rowid):
  ``add_row(n)`` is ``r IN (SELECT r ... ORDER BY r LIMIT 1 OFFSET n-1)``
  (``DESC`` from the end; the order's keys when there is an ``add_order``),
  ``add_adjacent`` is ``r IN (SELECT r + 1 FROM t WHERE <the match>)`` (``- 1`` before);
* a derived column is an expression: a part ``pyql_part(c, 'year', '')``
  (its number ``pyql_number(...)``, :mod:`pyql_sql.parts`), a calculation
  ``n_a - n_b`` (a division by ``NULLIF(n_b, 0)``);
* ``add_group`` makes the rows a sub-query of groups (``GROUP BY
  LOWER(TRIM(key))``, its first cell shown, its rows counted as ``cnt``, its
  first place ``p``), ranked by the order, and the answer reads the groups;
* ``set_calculation`` selects ``(SELECT n FROM t WHERE key = a ...) op (SELECT ...)``,
  ``compare_rows`` the key of the two rows ordered by the column.

Values are bound in the order they appear in the SQL text: every part of a
statement is built in that order. A part's separator is a sqlglot literal.

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
from .steps import (
    AdjacentStep,
    AnswerStep,
    CompareStep,
    ConditionStep,
    DerivedColumn,
    GroupStep,
    OrderStep,
    PositionStep,
    ResultStep,
    RowsCalculationStep,
)
from .tabledata import Column, TableData

__all__ = [
    "CompilableQuery",
    "compile_query",
    "logical_expression",
    "condition_expression",
    "words_contain",
    "order_expression",
    "row_filter",
    "group_listing",
    "text_of",
    "number_of",
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

_ARITHMETIC: dict[str, type[exp.Expression]] = {"-": exp.Sub, "+": exp.Add, "*": exp.Mul, "/": exp.Div}

#: The names of a group sub-query's columns: its shown key, its row count, its first place.
_GROUP_KEY, _GROUP_COUNT, _GROUP_PLACE = "g", "cnt", "p"

Binder = Callable[[object], exp.Expression]


class CompilableQuery(Protocol):
    """What the compiler reads of a query: :class:`~pyql_sql.query.TableQuery` has it.

    Attributes:
        table: the table the query runs on.
        answer: the last ``set_answer`` step, or None.
        result: the step saying what the query returns (``set_answer``, ``set_calculation``, ``compare_rows``), or None.
        conditions: the condition steps, in order.
        order: the last ``add_order`` step, or None.
        position: the last ``add_row`` step, or None.
        adjacents: the ``add_adjacent`` steps.
        group: the ``add_group`` step, or None.
        steps: every step, in order.

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
    def result(self) -> ResultStep | None: ...

    @property
    def conditions(self) -> tuple[ConditionStep, ...]: ...

    @property
    def order(self) -> OrderStep | None: ...

    @property
    def position(self) -> PositionStep | None: ...

    @property
    def adjacents(self) -> tuple[AdjacentStep, ...]: ...

    @property
    def group(self) -> GroupStep | None: ...

    @property
    def steps(self) -> tuple[object, ...]: ...


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


def _is_null(expression: exp.Expression) -> exp.Expression:
    return exp.Is(this=expression, expression=exp.Null())


def _not_null(expression: exp.Expression) -> exp.Expression:
    return exp.Not(this=_is_null(expression))


def _ordered(expression: exp.Expression, descending: bool) -> exp.Ordered:
    """An ORDER BY key in SQLite's own null order (NULL first ascending, last descending)."""
    return exp.Ordered(this=expression, desc=True) if descending else exp.Ordered(this=expression, desc=False, nulls_first=True)


def _position(table: TableData) -> exp.Column:
    """The column of a row's place in the table (``r``, or the rowid of a WikiSQL file)."""
    return _ident(table.position_sql)


def text_of(column: Column) -> exp.Expression:
    """A row's cell of a column as text: the physical column, or a derived column's expression.

    Raises:
        ValueError: a group's ``Count`` (not a cell of a row).

    Example:
        >>> from pyql_sql import Table
        >>> q = Table.from_rows(["Date"], [["2004"]]).query().add_part("Date", "year")
        >>> print(text_of(q.columns[0]).sql(), text_of(q.columns[1]).sql())
        "c0" PYQL_PART("c0", 'year', '')
    """
    if not isinstance(column, DerivedColumn):
        return _ident(column.text_sql)
    if column.kind == "part":
        source = text_of(column.sources[0])
        return exp.Anonymous(this="pyql_part", expressions=[source, literal(column.part or ""), literal(column.separator)])
    if column.kind == "calculation":
        number = number_of(column)
        assert number is not None
        return number
    raise ValueError(f"{column.header!r} counts a group's rows; it is no cell of a row")


def number_of(column: Column) -> exp.Expression | None:
    """A row's cell of a column as a number (NULL when it is none), or None when the column has no numbers.

    Example:
        >>> from pyql_sql import Table
        >>> q = Table.from_rows(["Won", "Lost"], [["3", "1"]]).query().add_calculation("Won", "/", "Lost")
        >>> number_of(q.columns[2]).sql()
        '("n0" / NULLIF("n1", 0))'
    """
    if not isinstance(column, DerivedColumn):
        return _ident(column.num_sql) if column.num_sql else None
    if column.kind == "part":  # a date or a month is never a number: no shadow to compute
        return None if column.part in ("date", "month") else exp.Anonymous(this="pyql_number", expressions=[text_of(column)])
    if column.kind == "calculation":
        a, b = (_source_number(c) for c in column.sources)
        if column.op == "/":
            b = exp.Nullif(this=b, expression=exp.Literal.number(0))
        return exp.Paren(this=_ARITHMETIC[column.op or "-"](this=a, expression=b))
    return None


def _source_number(column: Column) -> exp.Expression:
    """A calculation's (or a comparison of two rows') operand: a numeric column's number; a text column's number,
    else the first number its text writes (``18`` of ``18 (59)``)."""
    number = number_of(column)
    if column.is_numeric and number is not None:
        return number
    leading = exp.Anonymous(this="pyql_number", expressions=[
        exp.Anonymous(this="pyql_part", expressions=[text_of(column), literal("number"), literal("")])])
    return exp.Coalesce(this=number, expressions=[leading]) if number is not None else leading


def _on_groups(column: Column) -> bool:
    """Whether a column is a group's row count (it is read from the groups, not the rows)."""
    return isinstance(column, DerivedColumn) and column.kind == "count"


def words_contain(text: exp.Expression, value: exp.Expression) -> exp.Expression:
    """Whether a text holds a value's words as whole words, case and accents aside: ``INSTR(PYQL_WORDS(text),
    PYQL_WORDS(value)) > 0``.

    Both sides are read by ``pyql_words`` (:func:`pyql_sql.parts.cell_words`: lower case, no accents, every run of
    other characters than letters and digits one space, a space at each end), so `` braves `` is found in
    `` atlanta braves `` and not in `` bravest ``. The value is a placeholder or a sqlglot literal and ``INSTR``
    searches it as text: ``%`` and ``_`` are no wildcards. One call a row, in the statement's one scan.

    Example:
        >>> print(words_contain(_ident("c0"), literal("Braves")).sql("sqlite"))
        INSTR(PYQL_WORDS("c0"), PYQL_WORDS('Braves')) > 0
    """
    words = lambda e: exp.Anonymous(this="pyql_words", expressions=[e])  # noqa: E731
    return exp.GT(this=exp.StrPosition(this=words(text), substr=words(value)), expression=exp.Literal.number(0))


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
    if step.op == "contains":
        return words_contain(text_of(col), bind(value_text(step.value)))
    compared = _compared(step, col, bind)
    # an empty cell is not the value: "!=" keeps its row (SQL's NULL <> 'x' is unknown and would drop it)
    return exp.Coalesce(this=compared, expressions=[exp.true()]) if step.op == "!=" else compared


def _compared(step: ConditionStep, col: Column, bind: Binder) -> exp.Expression:
    """The comparison of a condition step: by number where the cell and the value are numbers, else by text."""
    text_cmp = lambda: _cmp(  # noqa: E731 - built lazily so params stay in text order
        step.op,
        exp.Lower(this=exp.Trim(this=text_of(col))),
        exp.Lower(this=bind(value_text(step.value))),
    )
    number = step.number
    shadow = number_of(col)
    if number is None or shadow is None:
        return text_cmp()
    compact: float | int = int(number) if number.is_integer() and abs(number) < 2**53 else number
    num_cmp = _cmp(step.op, shadow, bind(compact))
    if col.is_numeric or step.op not in ("=", "!="):
        return num_cmp
    return exp.Coalesce(this=num_cmp, expressions=[text_cmp()])


def _aggregate(agg: str, column: Column) -> exp.Expression:
    """An aggregation of a column over rows: COUNT its cells, COUNT DISTINCT their texts, MAX/MIN by number on
    a numeric column (else text order), SUM/AVG of its numbers."""
    text = text_of(column)
    if agg == "COUNT":
        return exp.Count(this=text)
    if agg == "COUNT DISTINCT":
        return exp.Count(this=exp.Distinct(expressions=[exp.Lower(this=exp.Trim(this=text))]))
    number = number_of(column)
    if agg in ("MAX", "MIN"):
        return _AGGREGATES[agg](this=number if (column.is_numeric and number is not None) else text)
    return _AGGREGATES[agg](this=number if number is not None else text)


def _select_expression(query: CompilableQuery) -> list[exp.Expression]:
    answer = query.answer
    if answer is None:
        return [text_of(c) for c in query.table.columns]
    if answer.aggregation is None:
        return [text_of(answer.column)]
    return [_aggregate(answer.aggregation, answer.column)]


def _order_keys(column: Column, descending: bool) -> tuple[exp.Expression, list[exp.Ordered]]:
    """What an order keeps (non-NULL keys) and sorts by: numbers by value, then text (on a mixed column).

    A text column's cells that are times (``1:59.8``, ``1:02:03``) are numbers here, their seconds
    (``pyql_duration``, :func:`pyql_sql.numbers.parse_duration`): a column of times orders as durations.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Time"], [["10:02.1"], ["9:59.8"]])
        >>> [k.sql() for k in _order_keys(t.columns[0], False)[1]][1]
        'COALESCE("n0", PYQL_DURATION("c0")) ASC NULLS LAST'
    """
    text = text_of(column)
    number = number_of(column)
    derived = isinstance(column, DerivedColumn)
    if not column.is_numeric and (not derived or (column.kind == "part" and column.part in ("before", "after"))):
        duration = exp.Anonymous(this="pyql_duration", expressions=[text.copy()])
        number = duration if number is None else exp.Coalesce(this=number, expressions=[duration])
    if number is None:
        return _not_null(text), [exp.Ordered(this=text.copy(), desc=descending)]
    if column.is_numeric:
        return _not_null(number), [exp.Ordered(this=number.copy(), desc=descending)]
    numbers_first = exp.Ordered(this=_is_null(number.copy()))
    return (
        _not_null(text),
        [numbers_first, exp.Ordered(this=number.copy(), desc=descending), exp.Ordered(this=text.copy(), desc=descending)],
    )


def _table(query: CompilableQuery) -> exp.Table:
    return exp.table_(query.table.sql_name, quoted=True)


def _base(query: CompilableQuery, bind: Binder) -> list[exp.Expression]:
    """The conjuncts every row kept meets before an order or a position: the row conditions and the adjacencies."""
    out = [condition_expression(step, bind) for step in query.conditions if not _on_groups(step.column)]
    out += [adjacent_expression(query, step, bind) for step in getattr(query, "adjacents", ())]
    return out


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
    select = (
        exp.select(_ident("rowid"))
        .from_(_table(query))
        .where(exp.and_(*_base(query, bind), kept), copy=False)
        .order_by(*keys, _ident("rowid"), copy=False)
        .limit(exp.Literal.number(order.limit), copy=False)
    )
    return _ident("rowid").isin(query=select)


def position_expression(query: CompilableQuery, position: PositionStep, bind: Binder) -> exp.Expression:
    """The conjunct of an ``add_row`` step: the row at that place among those kept, in the table's order
    (or the order's, when the query has an ``add_order``; its limit does not apply then).

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Name"], [["Ann"], ["Bob"]])
        >>> q = t.query().add_row(-2)
        >>> print(position_expression(q, q.position, literal).sql())
        "r" IN (SELECT "r" FROM "t" ORDER BY "r" DESC LIMIT 1 OFFSET 1)
    """
    backwards = position.position < 0
    conjuncts = _base(query, bind)
    order = query.order
    place = _position(query.table)
    if order is not None:
        kept, keys = _order_keys(order.column, order.descending != backwards)
        conjuncts.append(kept)
        keys = [*keys, _ordered(place.copy(), backwards)]
    else:
        keys = [_ordered(place.copy(), backwards)]
    select = exp.select(place.copy()).from_(_table(query))
    if conjuncts:
        select = select.where(exp.and_(*conjuncts), copy=False)
    select = select.order_by(*keys, copy=False).limit(exp.Literal.number(1), copy=False)
    select = select.offset(exp.Literal.number(abs(position.position) - 1), copy=False)
    return place.isin(query=select)


def adjacent_expression(query: CompilableQuery, step: AdjacentStep, bind: Binder) -> exp.Expression:
    """The conjunct of an ``add_adjacent`` step: the places right after (or before) the rows that match.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Player"], [["Ann"], ["Hank Stein"]])
        >>> q = t.query().add_adjacent("Player", "Hank Stein", "before")
        >>> print(adjacent_expression(q, q.adjacents[0], literal).sql())
        "r" IN (SELECT "r" - 1 FROM "t" WHERE LOWER(TRIM("c0")) = LOWER('Hank Stein'))
    """
    place = _position(query.table)
    shift = (exp.Add if step.after else exp.Sub)(this=place.copy(), expression=exp.Literal.number(1))
    select = exp.select(shift).from_(_table(query)).where(condition_expression(step.match, bind), copy=False)
    return place.isin(query=select)


def row_filter(query: CompilableQuery, bind: Binder) -> exp.Expression | None:
    """The condition a row must meet to be kept (before any grouping): the conditions, the adjacencies, the order
    (or the position) — None when every row is kept.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Team", "Won"], [["A", "3"]])
        >>> print(row_filter(t.query().add_condition("Won", ">", 1), literal).sql())
        "n1" > 1
        >>> row_filter(t.query(), literal) is None
        True
    """
    conjuncts = _base(query, bind)
    if getattr(query, "group", None) is None:
        position, order = getattr(query, "position", None), query.order
        if position is not None:
            conjuncts.append(position_expression(query, position, bind))
        elif order is not None:
            conjuncts.append(order_expression(query, order, bind))
    return exp.and_(*conjuncts) if conjuncts else None


def _rows_select(query: CompilableQuery, columns: list[exp.Expression], bind: Binder) -> exp.Select:
    """``SELECT columns FROM t WHERE <row filter>``, built in text order."""
    select = exp.select(*columns).from_(_table(query))
    where = row_filter(query, bind)
    return select.where(where, copy=False) if where is not None else select


def _plain_select(query: CompilableQuery, bind: Binder) -> exp.Select:
    """A query without a group whose answer (if any) is a ``set_answer``."""
    select = _rows_select(query, _select_expression(query), bind)
    order, position = query.order, getattr(query, "position", None)
    plain = query.answer is None or query.answer.aggregation is None
    if order is not None and position is None and plain:
        _, keys = _order_keys(order.column, order.descending)  # the rows kept come in the order's order
        select = select.order_by(*keys, _ident("rowid"), copy=False)
    return select


def _calculation_select(query: CompilableQuery, step: RowsCalculationStep, bind: Binder) -> exp.Select:
    """``SELECT (SELECT n FROM t WHERE <filter> AND key = a ...) op (SELECT n ... key = b ...)``."""
    operands = []
    for match in (step.first, step.second):
        number = _source_number(step.column)
        inner = exp.select(number).from_(_table(query))
        where = row_filter(query, bind)
        matched = condition_expression(match, bind)
        inner = inner.where(exp.and_(where, matched) if where is not None else matched, copy=False)
        inner = inner.order_by(_position(query.table), copy=False).limit(exp.Literal.number(1), copy=False)
        operands.append(inner.subquery())
    a, b = operands
    if step.op == "/":
        a = exp.Mul(this=a, expression=exp.Literal.number("1.0"))
        b = exp.Nullif(this=b, expression=exp.Literal.number(0))
    return exp.select(_ARITHMETIC[step.op](this=a, expression=b))


def _compare_select(query: CompilableQuery, step: CompareStep, bind: Binder) -> exp.Select:
    """``SELECT key FROM t WHERE <filter> AND (key = a OR key = b) ORDER BY column LIMIT 1`` (a text column by the
    number it writes, when it writes one).

    With the step's words the select is ``CASE WHEN key = a THEN word1 ELSE word2 END`` of that row, and one more
    conjunct keeps a tie from answering: the best value of the first row's (``MAX`` for DESC, ``MIN`` for ASC) differs
    from the second's, so equal values (or a row without one) give no row.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Nation", "Gold"], [["Chile", "2"], ["Panama", "1"]])
        >>> q = t.query().compare_rows("Gold", "Nation", "Chile", "Panama", "DESC", ("above", "it's below"))
        >>> print(_compare_select(q, q.result, literal).sql())  # doctest: +ELLIPSIS
        SELECT CASE WHEN LOWER(TRIM("c0")) = LOWER('Chile') THEN 'above' ELSE 'it''s below' END FROM "t" WHERE ...
    """
    group = getattr(query, "group", None)
    if group is not None and step.column == group.count:
        return _count_compare_select(query, step, bind)
    kept, keys = _order_keys(step.column, step.descending)
    if not step.column.is_numeric:
        number = _source_number(step.column)
        kept, keys = _not_null(number), [_ordered(number.copy(), step.descending)]
    if step.words is None:
        answer = text_of(step.first.column)
    else:  # built before the WHERE: values are bound in the order the SQL text shows them
        first_wins = condition_expression(step.first, bind)
        answer = exp.Case(ifs=[exp.If(this=first_wins, true=bind(step.words[0]))], default=bind(step.words[1]))
    select = exp.select(answer).from_(_table(query))
    where = row_filter(query, bind)
    either = exp.Or(this=condition_expression(step.first, bind), expression=condition_expression(step.second, bind))
    conjuncts = [c for c in (where, exp.Paren(this=either), kept) if c is not None]
    for match in (step.first, step.second):  # both rows are there (a comparison with a missing row has no answer)
        conjuncts.append(exp.Exists(this=_matched_select(query, exp.Literal.number(1), match, bind)))
    if step.words is not None:  # a tie has no answer: neither word is true
        best = exp.Max if step.descending else exp.Min
        a, b = (_matched_select(query, best(this=keys[0].this.copy()), match, bind).subquery() for match in (step.first, step.second))
        conjuncts.append(exp.NEQ(this=a, expression=b))
    select = select.where(exp.and_(*conjuncts), copy=False)
    return select.order_by(*keys, _position(query.table), copy=False).limit(exp.Literal.number(1), copy=False)


def _count_compare_select(query: CompilableQuery, step: CompareStep, bind: Binder) -> exp.Select:
    """``compare_rows(Count, key, a, b)`` after ``add_group(key)``: which of two values has more (DESC) or fewer (ASC)
    rows among those the query keeps; the value as the table writes it (or the step's word). Equal counts, or a value
    no row holds, give no answer.

    ``SELECT CASE WHEN x.a > x.b THEN x.na ELSE x.nb END FROM (SELECT <count a> AS a, <count b> AS b, <a's cell> AS
    na, <b's cell> AS nb) AS x WHERE x.a > 0 AND x.b > 0 AND x.a <> x.b``

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Venue"], [["Lyon"], ["Paris"], ["lyon"]])
        >>> q = t.query().add_group("Venue").compare_rows("Count", "Venue", "Paris", "Lyon", "DESC")
        >>> [a.value for a in t.executor().execute(q)]
        ['Lyon']
    """
    x = lambda name: exp.column(name, table="x", quoted=True)  # noqa: E731 - the derived table's columns
    a, b = x("a"), x("b")
    first_wins = exp.GT(this=a, expression=b) if step.descending else exp.LT(this=a, expression=b)
    if step.words is None:
        answer = exp.Case(ifs=[exp.If(this=first_wins, true=x("na"))], default=x("nb"))
    else:  # the words are bound before the derived table, as the SQL text shows them
        answer = exp.Case(ifs=[exp.If(this=first_wins, true=bind(step.words[0]))], default=bind(step.words[1]))
    key = text_of(step.first.column)
    parts = []
    for name, match in (("a", step.first), ("b", step.second)):
        parts.append(exp.alias_(_matched_select(query, exp.Count(this=exp.Star()), match, bind).subquery(), name, quoted=True))
    for name, match in (("na", step.first), ("nb", step.second)):
        cell = _matched_select(query, key.copy(), match, bind).order_by(_position(query.table), copy=False).limit(exp.Literal.number(1), copy=False)
        parts.append(exp.alias_(cell.subquery(), name, quoted=True))
    counts = exp.select(*parts).subquery("x")
    zero = exp.Literal.number(0)
    where = exp.and_(exp.GT(this=a.copy(), expression=zero), exp.GT(this=b.copy(), expression=zero), exp.NEQ(this=a.copy(), expression=b.copy()))
    return exp.select(answer).from_(counts).where(where, copy=False)


def _matched_select(query: CompilableQuery, column: exp.Expression, match: ConditionStep, bind: Binder) -> exp.Select:
    """``SELECT column FROM t WHERE <filter> AND <match>``: one of two rows, among the rows the query keeps."""
    inner = exp.select(column).from_(_table(query))
    inner_where = row_filter(query, bind)
    matched = condition_expression(match, bind)
    return inner.where(exp.and_(inner_where, matched) if inner_where is not None else matched, copy=False)


def _group_column(query: CompilableQuery, column: Column, agg: str | None, needed: list[exp.Expression]) -> exp.Expression:
    """How the groups' sub-query answers a column: its key, its count, or an aggregate added to ``needed`` (``a<k>``)."""
    group = query.group
    assert group is not None
    if column == group.column:
        return _ident(_GROUP_KEY)
    if column == group.count:
        return _ident(_GROUP_COUNT)
    name = f"a{len(needed)}"
    needed.append(exp.alias_(_aggregate(agg or "SUM", column), name, quoted=True))
    return _ident(name)


def _group_answer(query: CompilableQuery, needed: list[exp.Expression]) -> exp.Expression:
    """The answer over the groups: a group's key, count or aggregate each, or one aggregate of them all."""
    group, answer = query.group, query.answer
    assert group is not None
    if answer is None:
        return _ident(_GROUP_KEY)
    agg = answer.aggregation
    if answer.column == group.column and agg in ("COUNT", "COUNT DISTINCT"):
        return exp.Count(this=exp.Star())  # the number of groups
    if answer.column in (group.column, group.count):
        value = _group_column(query, answer.column, None, needed)
        return value if agg is None else _AGGREGATES["COUNT" if agg == "COUNT DISTINCT" else agg](this=value)
    return _group_column(query, answer.column, agg, needed)


def _group_keys(query: CompilableQuery, needed: list[exp.Expression]) -> list[exp.Ordered]:
    """How the groups are ranked: by the order's column (a count, a key, another column's sum), then their first place."""
    order, position = query.order, getattr(query, "position", None)
    backwards = position is not None and position.position < 0
    place = _ordered(_ident(_GROUP_PLACE), backwards)
    if order is None:
        return [place]
    group = query.group
    assert group is not None
    descending = order.descending != backwards
    if order.column == group.column:
        keys = [_ordered(_ident(_GROUP_KEY), descending)]
    else:
        keys = [_ordered(_group_column(query, order.column, "SUM", needed), descending)]
    return [*keys, place]


def _count_condition(step: ConditionStep, bind: Binder) -> exp.Expression:
    """A condition on a group's row count (``add_condition(Count, >, 2)``): on the groups, by number."""
    if step.number is None:
        return _cmp(step.op, exp.Cast(this=_ident(_GROUP_COUNT), to=exp.DataType.build("TEXT")), bind(value_text(step.value)))
    number = step.number
    return _cmp(step.op, _ident(_GROUP_COUNT), bind(int(number) if number.is_integer() else number))


def _ranked_groups(query: CompilableQuery, bind: Binder, needed: list[exp.Expression], keys: list[exp.Ordered]) -> exp.Select:
    """``SELECT * FROM (the groups) WHERE <count conditions> ORDER BY keys LIMIT ...``: the groups kept, ranked."""
    group = query.group
    assert group is not None
    key_text = text_of(group.column)
    inner = exp.select(
        exp.alias_(exp.Min(this=key_text), _GROUP_KEY, quoted=True),
        exp.alias_(exp.Count(this=exp.Star()), _GROUP_COUNT, quoted=True),
        exp.alias_(exp.Min(this=_position(query.table)), _GROUP_PLACE, quoted=True),
        *needed,
    ).from_(_table(query))
    blank = exp.EQ(this=exp.Trim(this=key_text.copy()), expression=literal(""))
    where = row_filter(query, bind)
    kept = [c for c in (where, _not_null(key_text.copy()), exp.Not(this=blank)) if c is not None]
    inner = inner.where(exp.and_(*kept), copy=False).group_by(exp.Lower(this=exp.Trim(this=key_text.copy())), copy=False)
    ranked = exp.select(exp.Star()).from_(inner.subquery("groups"))
    having = [_count_condition(s, bind) for s in query.conditions if _on_groups(s.column)]
    if having:
        ranked = ranked.where(exp.and_(*having), copy=False)
    ranked = ranked.order_by(*keys, copy=False)
    position, order = getattr(query, "position", None), query.order
    if position is not None:
        ranked = ranked.limit(exp.Literal.number(1), copy=False).offset(exp.Literal.number(abs(position.position) - 1), copy=False)
    elif order is not None:
        ranked = ranked.limit(exp.Literal.number(order.limit), copy=False)
    return ranked


def _grouped_select(query: CompilableQuery, bind: Binder) -> exp.Select:
    """The groups as a sub-query, ranked by the order (or their first place), and the answer read from them."""
    needed: list[exp.Expression] = []
    answer = _group_answer(query, needed)
    keys = _group_keys(query, needed)
    select = exp.select(answer).from_(_ranked_groups(query, bind, needed, keys).subquery("ranked"))
    if not isinstance(answer, (exp.Count, exp.Max, exp.Min, exp.Sum, exp.Avg)):
        select = select.order_by(*(k.copy() for k in keys), copy=False)
    return select


def group_listing(query: CompilableQuery, *, bind: str = "literal") -> tuple[exp.Select, list[object]]:
    """The groups of a grouped query, ranked: each group's key and row count (what ``add_group`` shows).

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Winner"], [["Ajax"], ["PSV"], ["ajax "]])
        >>> e, _ = group_listing(t.query().add_group("Winner"))
        >>> t.connection.execute(e.sql("sqlite")).fetchall()
        [('Ajax', 2), ('PSV', 1)]
    """
    if query.group is None:
        raise ValueError("group_listing needs a grouped query")
    params: list[object] = []
    needed: list[exp.Expression] = []
    keys = _group_keys(query, needed)
    ranked = _ranked_groups(query, _binder(bind, params), needed, keys)
    listing = exp.select(_ident(_GROUP_KEY), _ident(_GROUP_COUNT)).from_(ranked.subquery("ranked"))
    return listing.order_by(*(k.copy() for k in keys), copy=False), params


def _binder(bind: str, params: list[object]) -> Binder:
    if bind not in ("literal", "param"):
        raise ValueError(f"bind must be 'literal' or 'param', not {bind!r}")

    def to_param(value: object) -> exp.Expression:
        params.append(value)
        return exp.Placeholder()

    return to_param if bind == "param" else literal


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
    params: list[object] = []
    binder = _binder(bind, params)
    result = getattr(query, "result", query.answer)
    if isinstance(result, RowsCalculationStep):
        return _calculation_select(query, result, binder), params
    if isinstance(result, CompareStep):
        return _compare_select(query, result, binder), params
    if getattr(query, "group", None) is not None:
        return _grouped_select(query, binder), params
    return _plain_select(query, binder), params


def _legacy(query: CompilableQuery) -> bool:
    """Whether a query has only WikiSQL's steps (conditions, an order, a ``set_answer`` of the shared aggregations)."""
    answer = query.answer
    return (
        all(isinstance(s, (ConditionStep, AnswerStep, OrderStep)) for s in getattr(query, "steps", ()))
        and (answer is None or answer.aggregation != "COUNT DISTINCT")
    )


def logical_expression(query: CompilableQuery) -> exp.Select:
    """The query in terms of the original headers and table name, for display.

    A query with the steps beyond WikiSQL's shows its executable form with the
    headers and the table's name in place of the physical names (``rowid`` for
    the row's place).

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Say hi", "N"], [["x", "1"]], name="demo")
        >>> print(logical_expression(t.query().add_condition(0, "=", "it's").set_answer("N", "COUNT")).sql())
        SELECT COUNT("N") FROM "demo" WHERE "Say hi" = 'it''s'
        >>> print(logical_expression(t.query().add_row(1).set_answer("N")).sql())
        SELECT "N" FROM "demo" WHERE "rowid" IN (SELECT "rowid" FROM "demo" ORDER BY "rowid" ASC LIMIT 1 OFFSET 0)
    """
    if not _legacy(query):
        return _renamed(query, compile_query(query, bind="literal")[0])

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
        conjuncts.append(words_contain(head(step.column), value) if step.op == "contains" else _cmp(step.op, head(step.column), value))
    if conjuncts:
        select = select.where(exp.and_(*conjuncts), copy=False)
    return _display_order(select, query, head)


def _renamed(query: CompilableQuery, select: exp.Select) -> exp.Select:
    """An executable statement with the table's headers and name in place of its physical names."""
    table = query.table
    names = {c.text_sql: c.header for c in table.columns}
    names.update({c.num_sql: c.header for c in table.columns if c.num_sql})
    names[table.position_sql] = "rowid"

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name in names:
            return exp.column(exp.to_identifier(names[node.name], quoted=True))
        if isinstance(node, exp.Table) and node.name == table.sql_name:
            return exp.table_(table.name, quoted=True)
        return node

    return select.transform(rename)


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
