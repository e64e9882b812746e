"""ERASER rules for the SQL twin: steps on a table (:class:`pyql_sql.environment.TableEnvironment`).

They register in the same registry as the SPARQL rules, with
``sides={"sql"}``, and are checked in the same order (interpreter, memory,
table/KB feedback). The shared rules (``no_action``, ``multiple_actions``,
``syntax_error``, ``invalid_action``, ``wrong_arity``, ``bad_argument``,
``query_error``, ``empty_result``) apply to both sides.

* interpreter: ``sql_unknown_column`` (closest headers),
  ``sql_bad_operator``, ``sql_bad_aggregation`` (unknown aggregation, or
  SUM/AVG of a column without numbers), ``sql_type_mismatch`` (a comparison
  with a non-number on a numeric column, or ``>``/``<`` with text);
* memory: ``sql_duplicate_equality`` (two ``=`` on one column),
  ``sql_condition_before_get_column`` (an ``=`` value that is not in a column
  never looked at), ``sql_value_not_in_column`` (the same after
  ``get_column``: the closest existing values), ``sql_words_not_in_column``
  (a ``contains`` whose words no cell of the column holds: the cells with the
  closest words);
* table: ``sql_empty_result`` (the conditions together keep no row);
* the steps beyond WikiSQL's: ``sql_position_past_end`` (``add_row`` past the
  rows there are), ``sql_no_neighbour`` (``add_adjacent`` from a value no row
  holds, or past the first or last row), ``sql_part_missing`` (``add_part``
  of a column no cell of which has that part: a year of names),
  ``sql_arithmetic_on_text`` (``add_calculation``, ``set_calculation`` or
  ``compare_rows`` of a column without numbers, or of a row that is not
  there), ``sql_grouped_answer`` (a grouped query's column answered
  without an aggregation, a second ``add_group``).

No rule sends a KB query (``kb_queries`` is 0): the memory rules and
``sql_bad_aggregation`` look values up in the table instead, with at most
three read-only statements through ``env.executor`` (counted in
``env.counters``): one count per ``=`` condition, more only when its
value is missing.

Example:
    >>> from correction import registry
    >>> [r.id for r in registry.ordered("sql") if r.id.startswith("sql_")][:3]
    ['sql_unknown_column', 'sql_bad_operator', 'sql_bad_aggregation']
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from correction.facts import TableRules, facts, insists_on_empty, insists_on_execute, table_side
from correction.registry import rule
from grammars.vocabulary import AGGREGATIONS, ORDERING_OPERATORS, TABLE_OPERATORS
from pyql.errors import PyQLError
from pyql_sql.compile import condition_expression, literal
from pyql_sql.errors import (
    BadAggregationError,
    BadOperatorError,
    BadValueError,
    GroupError,
    PositionError,
    UnknownColumnError,
)
from pyql_sql.numbers import format_number, is_empty, parse_number
from pyql_sql.parts import cell_words
from pyql_sql.table import Column

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord

__all__ = ["closest_values", "closest_words", "normalize_value"]

SQL = ("sql",)
ORDERING = ORDERING_OPERATORS
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_ISO_DATE_RE = re.compile(r"\d{4}-\d{2}(-\d{2})?\Z")
_NUMBER_IN_TEXT_RE = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")

#: Words an LLM writes for an operator, and what to write instead.
_OPERATOR_WORDS = {
    "greater than": ">",
    "more than": ">",
    "larger than": ">",
    "bigger than": ">",
    "higher than": ">",
    "above": ">",
    "after": ">",
    "gt": ">",
    "less than": "<",
    "smaller than": "<",
    "fewer than": "<",
    "lower than": "<",
    "below": "<",
    "before": "<",
    "lt": "<",
    "equals": "=",
    "equal": "=",
    "equal to": "=",
    "is": "=",
    "eq": "=",
    "not": "!=",
    "not equal": "!=",
    "ne": "!=",
    "is not": "!=",
    "\u2260": "!=",
    "\u2265": ">=",
    "ge": ">=",
    "\u2264": "<=",
    "le": "<=",
}

#: Words an LLM writes for an aggregation, and the aggregation meant.
_AGGREGATION_WORDS = {
    "total": "SUM",
    "sum of": "SUM",
    "add": "SUM",
    "average": "AVG",
    "mean": "AVG",
    "avg()": "AVG",
    "number": "COUNT",
    "count of": "COUNT",
    "how many": "COUNT",
    "distinct": "COUNT",
    "count distinct": "COUNT",
    "maximum": "MAX",
    "highest": "MAX",
    "largest": "MAX",
    "biggest": "MAX",
    "most": "MAX",
    "latest": "MAX",
    "minimum": "MIN",
    "lowest": "MIN",
    "smallest": "MIN",
    "least": "MIN",
    "earliest": "MIN",
    "fewest": "MIN",
    "null": "None",
    "no": "None",
    "nothing": "None",
}


def normalize_value(value: object) -> str:
    """A cell or value for loose matching: NFKC, case-folded, dashes unified, spaces collapsed.

    Example:
        >>> normalize_value(" 2\u20131 "), normalize_value("Takashi  KOGURE")
        ('2-1', 'takashi kogure')
    """
    text = unicodedata.normalize("NFKC", str(value)).translate(_DASHES).casefold()
    return " ".join(text.split())


def closest_values(values: list[Any], value: str, n: int = 5) -> list[str]:
    """The existing values closest to ``value``, best first.

    Same text up to case, dashes and spaces first; then the same words in
    another order or punctuation (``John Smith`` / ``Smith, John``); then
    values containing it or contained in it; then the most similar ones
    (difflib ratio ≥ 0.5).

    Example:
        >>> closest_values(["Takashi Kogure", "Loïc Duval", "2\u20131"], "kogure")
        ['Takashi Kogure']
        >>> closest_values(["Smith, John", "Doe, Jane"], "john smith")
        ['Smith, John']
        >>> closest_values(["2\u20131", "5\u20132", "2\u20130"], "2-1")
        ['2–1', '2–0']
    """
    key = normalize_value(value)
    cells = [str(v) for v in values if v is not None and str(v).strip()]
    normal = {c: normalize_value(c) for c in cells}
    out: list[str] = [c for c in cells if normal[c] == key]
    words = set(re.findall(r"\w+", key))
    if words:
        out += [c for c in cells if set(re.findall(r"\w+", normal[c])) == words]
    if key:
        contains = [c for c in cells if normal[c] and (key in normal[c] or normal[c] in key)]
        out += sorted(contains, key=lambda c: abs(len(normal[c]) - len(key)))
    scored = sorted(
        ((difflib.SequenceMatcher(None, key, normal[c]).ratio(), -i, c) for i, c in enumerate(cells)),
        reverse=True,
    )
    out += [c for ratio, _, c in scored if ratio >= 0.5]
    return list(dict.fromkeys(out))[:n]


# ---------------------------------------------------------------------------
# Helpers reading the table environment


def _quote(header: str) -> str:
    return repr(header)


def _values_shown(env: TableRules, column: Column, limit: int = 3) -> list[str]:
    """A few values of a column: from the memory when ``get_column`` showed it, else from the table."""
    seen = env.memory.columns.get(column.index)
    if seen is None:
        try:
            seen = env.executor.get_column(column.index, limit=limit)
        except PyQLError:
            return []
    return [repr(v) for v in seen.values[:limit] if v is not None]


def _present(env: TableRules, column: Column, value: str) -> bool:
    """Whether some row has ``column = value`` (the query's own comparison rules)."""
    try:
        return env.executor.count(env.table.query().add_condition(column.index, "=", value)) > 0
    except PyQLError:
        return True  # cannot tell: do not fire


def _columns_holding(env: TableRules, value: str, skip: int, op: str = "=") -> list[str]:
    """Other columns where some cell equals ``value`` (``op`` ``=``), or holds its words (``contains``: the text
    columns), in one statement."""
    table = env.table
    others = [c for c in table.columns if c.index != skip and not (op == "contains" and c.is_numeric)]
    if not others:
        return []
    sums = []
    try:
        for c in others:
            step = table.query().add_condition(c.index, op, value).conditions[0]
            hit = exp.Case(ifs=[exp.If(this=condition_expression(step, literal), true=exp.Literal.number(1))])
            sums.append(exp.Sum(this=hit))
        select = exp.select(*sums).from_(exp.table_(table.sql_name, quoted=True))
        row = env.executor.execute_sql(select.sql(dialect="sqlite"))[0]
    except PyQLError:
        return []
    return [c.header for c, n in zip(others, row) if n]


def _column_named(env: TableRules, written: str) -> Column | None:
    """The column of the table a ``set_answer`` argument names, as written or quoted (None when none does)."""
    name = written.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        name = name[1:-1]
    return next((c for c in env.table.columns if c.header == name), None)


def _holds_no_number(env: TableRules, column: Column) -> bool:
    """Whether a column holds no number at all (SUM/AVG of it has nothing to add up)."""
    return not column.is_numeric and not _numbers_in(env, column)


def _numbers_in(env: TableRules, column: Column) -> int:
    """How many cells of a column are numbers."""
    if column.num_sql is None:
        return 0
    table = env.table
    select = exp.select(exp.Count(this=exp.column(exp.to_identifier(column.num_sql, quoted=True)))).from_(
        exp.table_(table.sql_name, quoted=True)
    )
    try:
        return int(env.executor.execute_sql(select.sql(dialect="sqlite"))[0][0])
    except PyQLError:
        return 1


def _condition_args(record: StepRecord) -> tuple[Column, str, str] | None:
    column, op, value = (record.args.get(k) for k in ("column", "op", "value"))
    if not isinstance(column, Column) or not isinstance(op, str) or not isinstance(value, str):
        return None
    return column, op, value


def _step_of(env: Environment, column: Column, value: object) -> int:
    for step in env.memory.steps:
        if step.action == "add_condition":
            col = step.args.get("column")
            if isinstance(col, Column) and col.index == column.index and step.args.get("value") == value:
                return step.index
    return 0


def _shown(value: object) -> str:
    if isinstance(value, float):
        return format_number(value)
    return str(value)


# ---------------------------------------------------------------------------
# Interpreter: the arguments cannot be used as written


@rule(
    "sql_unknown_column",
    kind="error",
    env="interpreter",
    phase="before",
    sides=SQL,
    actions=("get_column", "add_condition", "set_answer"),
    doc="A column argument matches no header of the table, even ignoring case, spaces and punctuation.",
    suggests="The closest headers and the list of columns; the swapped form when the value is the column.",
)
def sql_unknown_column(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, UnknownColumnError):
        return None
    table = table_side(env).table
    swapped = ""
    if record.action == "add_condition":
        f = facts(record, env)
        value, op = f.raw("value"), f.raw("op")
        try:
            col = table.resolve_column(value.strip("`'\""))
        except PyQLError:
            col = None
        if col is not None and op:
            swapped = f"add_condition({col.header}, {op}, {f.raw('column')})"
    return {
        "column": exc.column,
        "suggestions": [_quote(s) for s in exc.suggestions],
        "headers": [_quote(h) for h in table.headers],
        "swapped": swapped,
    }


@rule(
    "sql_bad_operator",
    kind="error",
    env="interpreter",
    phase="before",
    sides=SQL,
    actions=("add_condition",),
    doc="The operator of `add_condition` is not one of =, >, <, >=, <=, !=, contains (LIKE, IN, BETWEEN, a word).",
    suggests="The valid operators; the operator meant by a word; contains for LIKE; how to write BETWEEN/IN with them.",
)
def sql_bad_operator(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, BadOperatorError):
        return None
    op = str(exc.op)
    key = " ".join(op.strip().lower().split())
    f = facts(record, env)
    hint = ""
    if key in ("like", "ilike", "includes", "include", "has", "in text", "glob", "match", "regexp") or "%" in key:
        hint = "like"
    elif key in ("between", "not between"):
        hint = "between"
    elif key in ("in", "not in", "or", "any"):
        hint = "in"
    return {
        "op": op,
        "allowed": list(TABLE_OPERATORS),
        "guess": _OPERATOR_WORDS.get(key, ""),
        "hint": hint,
        "column": f.raw("column"),
        "value": f.raw("value"),
        "words": " ".join(re.sub(r"[%_*]", " ", f.raw("value")).split()),
    }


@rule(
    "sql_bad_aggregation",
    kind="error",
    env="interpreter",
    phase="before",
    sides=SQL,
    actions=("set_answer",),
    feedback=("python", "kb"),
    doc="The aggregation of `set_answer` is not None, MAX, MIN, COUNT, SUM or AVG, or SUM/AVG is asked "
    "of a column that holds no number.",
    suggests="The valid aggregations and the one a word means; COUNT or a numeric column instead of SUM/AVG of text.",
)
def sql_bad_aggregation(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    f = facts(record, env)
    if isinstance(exc, BadAggregationError):
        written = str(exc.aggregation)
        key = " ".join(written.strip().lower().split())
        guess = _AGGREGATION_WORDS.get(key, "")
        column = _column_named(table_side(env), f.raw("column"))
        text_column = guess in ("SUM", "AVG") and column is not None and _holds_no_number(table_side(env), column)
        return {
            "reason": "unknown",
            "aggregation": written,
            "guess": guess,
            "column": f.raw("column"),
            "allowed": ["None", *AGGREGATIONS],
            "text_column": text_column,
            "numeric": [_quote(c.header) for c in table_side(env).table.columns if c.is_numeric] if text_column else [],
        }
    if exc is not None:
        return None
    column, aggregation = record.args.get("column"), record.args.get("aggregation")
    if not isinstance(column, Column) or aggregation not in ("SUM", "AVG"):
        return None
    table_env = table_side(env)
    if not _holds_no_number(table_env, column):
        return None
    return {
        "reason": "text",
        "aggregation": aggregation,
        "column": column.header,
        "examples": _values_shown(table_env, column),
        "numeric": [_quote(c.header) for c in table_env.table.columns if c.is_numeric],
    }


@rule(
    "sql_type_mismatch",
    kind="error",
    env="interpreter",
    phase="any",
    sides=SQL,
    actions=("add_condition",),
    feedback=("python", "kb"),
    doc="`add_condition` compares a column of numbers with a value that is not a number "
    "(or orders text with >, <, >=, <=; or looks for words with contains in a column of numbers, or for no word).",
    suggests="Write the number alone (17, 9.626, 1,174); the column's values as examples; = to match text; "
    "= or a comparison on numbers.",
)
def sql_type_mismatch(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    found = _condition_args(record)
    if found is None:
        return None
    column, op, value = found
    exc = record.exception
    if isinstance(exc, BadValueError) and op == "contains":
        reason = "contains_numeric" if column.is_numeric else "contains_no_word"
    elif isinstance(exc, BadValueError):
        reason = "numeric"
    elif exc is not None or record.phase != "before":
        return None
    elif is_empty(value) or parse_number(value) is not None:
        return None
    elif column.is_numeric:
        reason = "numeric"
    elif op in ORDERING and not _ISO_DATE_RE.match(value.strip()):
        reason = "text_order"
    else:
        return None
    number = _NUMBER_IN_TEXT_RE.search(value)
    return {
        "reason": reason,
        "column": column.header,
        "op": op,
        "value": value,
        "number": number.group(0) if number and parse_number(number.group(0)) is not None else "",
        "examples": _values_shown(table_side(env), column),
    }


# ---------------------------------------------------------------------------
# Memory: the step contradicts or ignores what earlier steps established


@rule(
    "sql_duplicate_equality",
    kind="error",
    env="memory",
    phase="before",
    sides=SQL,
    actions=("add_condition",),
    doc="`add_condition` adds a second `=` condition on a column that already has one (a cell holds one value).",
    suggests="Keep one `=` per column: go on with another column's condition or `set_answer`.",
)
def sql_duplicate_equality(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    found = _condition_args(record)
    if found is None:
        return None
    column, op, value = found
    if op != "=":
        return None
    earlier = next(
        (c for c in table_side(env).query.conditions if c.op == "=" and c.column.index == column.index), None
    )
    if earlier is None:
        return None
    a, b = parse_number(earlier.value), parse_number(value)
    same = (a == b) if a is not None and b is not None else normalize_value(earlier.value) == normalize_value(value)
    return {
        "column": column.header,
        "earlier_value": _shown(earlier.value),
        "value": value,
        "same": same,
        "earlier_step": _step_of(env, column, earlier.value),
    }


@rule(
    "sql_condition_before_get_column",
    kind="error",
    env="memory",
    phase="before",
    sides=SQL,
    actions=("add_condition",),
    feedback=("kb", "memory"),
    doc="`add_condition(column, =, value)` with a value that is not in the column, and `get_column` "
    "was never called on that column (a guessed value).",
    suggests="`get_column(column)` first, to see how its values are written; the closest values of the column "
    "and the other columns that hold the value.",
)
def sql_condition_before_get_column(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    found = _condition_args(record)
    if found is None:
        return None
    column, op, value = found
    table_env = table_side(env)
    if op != "=" or table_env.memory.looked_at(column):
        return None
    if column.is_numeric and parse_number(value) is None:
        return None
    if _present(table_env, column, value):
        return None
    return {"column": column.header, "value": value, **_candidates(table_env, column, value)}


def _column_values(env: TableRules, column: Column) -> list[Any]:
    """A column's distinct values (up to 10,000) the guidelines pick the closest from; none when they cannot be read."""
    try:
        return list(env.executor.get_column(column.index, limit=10000).values)
    except PyQLError:
        return []


def _candidates(env: TableRules, column: Column, value: str) -> dict[str, list[str]]:
    """The column's values closest to a value, and the other columns that hold it (the guideline's choices)."""
    return {
        "closest": [repr(v) for v in closest_values(_column_values(env, column), value)],
        "elsewhere": [_quote(h) for h in _columns_holding(env, value, column.index)],
    }


@rule(
    "sql_value_not_in_column",
    kind="error",
    env="memory",
    phase="before",
    sides=SQL,
    actions=("add_condition",),
    feedback=("kb", "memory"),
    doc="`add_condition(column, =, value)` after `get_column(column)`, with a value that is in no row of the column.",
    suggests="The closest existing values of the column; the other columns that hold the value.",
)
def sql_value_not_in_column(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    found = _condition_args(record)
    if found is None:
        return None
    column, op, value = found
    table_env = table_side(env)
    if op != "=" or not table_env.memory.looked_at(column):
        return None
    if column.is_numeric and parse_number(value) is None:
        return None
    if _present(table_env, column, value):
        return None
    return {"column": column.header, "value": value, **_candidates(table_env, column, value)}


def _holds_words(env: TableRules, column: Column, value: str) -> bool:
    """Whether some cell of the column holds the value's words (``contains``, the query's own rule)."""
    try:
        return env.executor.count(env.table.query().add_condition(column.index, "contains", value)) > 0
    except PyQLError:
        return True  # cannot tell: do not fire


def closest_words(values: list[Any], value: str, n: int = 5) -> list[tuple[str, str]]:
    """The words of a column's cells closest to a value's words (as many words as it has, difflib ratio ≥ 0.6), best
    first, each with a cell that holds them: what ``contains`` could look for instead.

    Example:
        >>> closest_words(["Atlanta Braves", "@ Atlanta Braves", "New York Mets"], "brave")
        [('braves', 'Atlanta Braves')]
        >>> closest_words(["Ostrava, Czech Republic"], "czech rep")
        [('czech republic', 'Ostrava, Czech Republic')]
    """
    wanted = cell_words(value).split()
    if not wanted:
        return []
    grams: dict[str, str] = {}
    for cell in (str(v) for v in values if v is not None and str(v).strip()):
        words = cell_words(cell).split()
        for i in range(len(words) - len(wanted) + 1):
            grams.setdefault(" ".join(words[i : i + len(wanted)]), cell)
    key = " ".join(wanted)
    return [(g, grams[g]) for g in difflib.get_close_matches(key, list(grams), n=n, cutoff=0.6) if g != key]


@rule(
    "sql_words_not_in_column",
    kind="error",
    env="memory",
    phase="before",
    sides=SQL,
    actions=("add_condition",),
    feedback=("kb", "memory"),
    doc="`add_condition(column, contains, words)` with words that no cell of the column holds as whole words.",
    suggests="Examples of the column's cells; the closest words its cells hold (and a cell with them); the other "
    "columns whose cells hold the words.",
)
def sql_words_not_in_column(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    found = _condition_args(record)
    if found is None:
        return None
    column, op, value = found
    table_env = table_side(env)
    if op != "contains" or column.is_numeric or not cell_words(value).strip() or _holds_words(table_env, column, value):
        return None
    return {
        "column": column.header,
        "value": value,
        "examples": _values_shown(table_env, column),
        "closest": [f"{words} (in {cell!r})" for words, cell in closest_words(_column_values(table_env, column), value)],
        "elsewhere": [_quote(h) for h in _columns_holding(table_env, value, column.index, "contains")],
    }


# ---------------------------------------------------------------------------
# The table's feedback


@rule(
    "sql_empty_result",
    kind="error",
    env="kb",
    phase="after",
    sides=SQL,
    actions=("add_condition", "add_order", "set_answer", "execute"),
    feedback=("kb", "memory"),
    doc="A construct step or `execute()` gives an empty result: the conditions together keep no row, "
    "or the answer has no value (the same step again right after is taken at its word: the answer may be none).",
    suggests="The conditions in force; `get_column` on the columns not looked at; which condition to doubt.",
)
def sql_empty_result(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None or not record.empty:
        return None
    if insists_on_execute(record, env, "sql_empty_result") or insists_on_empty(record, env, "sql_empty_result", "empty_result"):
        return None
    table_env = table_side(env)
    query = record.query_after if record.query_after is not None else table_env.query
    conditions = list(query.conditions)
    looked = table_env.memory.columns
    unchecked = list(
        dict.fromkeys(f"get_column({c.column.header})" for c in conditions if c.column.index not in looked)
    )
    answer = query.answer
    return {
        "text": record.call.text if record.call is not None else record.text,
        "kind": "execute" if record.action == "execute" else ("answer" if record.action == "set_answer" else "condition"),
        "conditions": [f"{c.column.header} {c.op} {_shown(c.value)}" for c in conditions],
        "unchecked": unchecked,
        "column": answer.column.header if answer is not None else "",
        "aggregation": (answer.aggregation or "") if answer is not None else "",
    }



# ---------------------------------------------------------------------------
# The steps beyond WikiSQL's: row position, neighbours, parts, arithmetic, groups


def _rows_kept(env: TableRules, query: Any) -> int | None:
    """How many rows a query's conditions keep (None when it cannot be counted)."""
    try:
        return env.executor.count(query)
    except PyQLError:
        return None


@rule(
    "sql_position_past_end",
    kind="error",
    env="interpreter",
    phase="any",
    sides=SQL,
    actions=("add_row",),
    doc="`add_row(n)` asks for a row past the table's end, or past the rows the conditions keep (or n is no position).",
    suggests="How many rows the table has and the conditions keep; a position from 1 to that many, -1 for the last.",
)
def sql_position_past_end(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    table_env = table_side(env)
    if exc is not None and not isinstance(exc, PositionError):
        return None
    if exc is None and (record.phase != "after" or not record.empty):
        return None
    before = record.query_before if record.query_before is not None else table_env.query
    kept = _rows_kept(table_env, before.undo() if before.position is not None else before)
    written = record.args.get("position")
    return {
        "position": written if written is not None else facts(record, env).raw("position"),
        "rows": table_env.table.row_count,
        "kept": kept,
        "conditions": [f"{c.column.header} {c.op} {_shown(c.value)}" for c in before.conditions],
        "message": str(exc) if exc is not None else "",
    }


@rule(
    "sql_no_neighbour",
    kind="error",
    env="kb",
    phase="after",
    sides=SQL,
    actions=("add_adjacent",),
    feedback=("kb", "memory"),
    doc="`add_adjacent(column, value, direction)` keeps no row: no row holds the value, or it is the first row "
    "(before) or the last (after).",
    suggests="The closest values of the column; the other direction at the table's ends.",
)
def sql_no_neighbour(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None or not record.empty:
        return None
    column, value, direction = (record.args.get(k) for k in ("column", "value", "direction"))
    if not isinstance(column, Column) or not isinstance(value, str):
        return None
    table_env = table_side(env)
    present = _present(table_env, column, value)
    return {
        "column": column.header,
        "value": value,
        "direction": direction or "after",
        "present": present,
        **({} if present else _candidates(table_env, column, value)),
    }


def _part_values(env: TableRules, query: Any, column: Column) -> int | None:
    """How many rows kept by the query have a value in a (derived) column."""
    try:
        answers = env.executor.execute(query.set_answer(column, "COUNT"))
    except PyQLError:
        return None
    return int(answers[0].value or 0) if answers else 0


@rule(
    "sql_part_missing",
    kind="error",
    env="kb",
    phase="after",
    sides=SQL,
    actions=("add_part",),
    feedback=("kb",),
    doc="`add_part(column, part)` gives a column with no value: no cell of the column writes that part "
    "(a year of names, a number of words, a separator the cells do not have).",
    suggests="What the column holds (examples); the columns that write dates or numbers; another part or separator.",
)
def sql_part_missing(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    query = record.query_after
    if record.exception is not None or query is None or not query.derived_columns:
        return None
    derived = query.derived_columns[-1]
    table_env = table_side(env)
    if _part_values(table_env, query, derived) != 0:
        return None
    source = derived.sources[0]
    return {
        "column": source.header,
        "part": derived.part,
        "separator": derived.separator,
        "examples": _values_shown(table_env, source) if source.index < len(table_env.table.columns) else [],
        "dated": [_quote(c.header) for c in table_env.table.columns if c.index != source.index and _has_part(table_env, c, derived.part or "")],
    }


def _has_part(env: TableRules, column: Column, part: str) -> bool:
    """Whether some cell of a table column has that part (one statement)."""
    try:
        query = env.table.query().add_part(column, part)
        return (_part_values(env, query, query.derived_columns[-1]) or 0) > 0
    except PyQLError:
        return False


def _calculated_columns(record: StepRecord) -> list[Column]:
    if record.action == "add_calculation":
        return [c for c in (record.args.get("column"), record.args.get("other")) if isinstance(c, Column)]
    column = record.args.get("column")
    return [column] if isinstance(column, Column) else []


@rule(
    "sql_arithmetic_on_text",
    kind="error",
    env="kb",
    phase="after",
    sides=SQL,
    actions=("add_calculation", "set_calculation", "compare_rows"),
    feedback=("kb", "memory"),
    doc="Arithmetic or a comparison of two rows on a column that holds no number (text such as names or scores "
    "2–1), or on a row that is not in the table (an `add_calculation` whose column has no value in any row).",
    suggests="What the column holds; add_part(column, number) when its cells write numbers inside text; the columns "
    "of numbers; the closest values of a row that is missing.",
)
def sql_arithmetic_on_text(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    if record.exception is not None:
        return None
    table_env = table_side(env)
    query = record.query_after
    if record.action == "add_calculation" and query is not None and query.derived_columns:
        if _part_values(table_env, query, query.derived_columns[-1]) != 0:
            return None  # some row has both numbers
    elif not record.empty:
        return None
    for column in _calculated_columns(record):
        if column.index < len(table_env.table.columns) and _holds_no_number(table_env, column):
            return {
                "reason": "text", "column": column.header, "action": record.action,
                "examples": _values_shown(table_env, column),
                "inside": _has_part(table_env, column, "number"),
                "numeric": [_quote(c.header) for c in table_env.table.columns if not _holds_no_number(table_env, c)],
            }
    key = record.args.get("key")
    if not isinstance(key, Column):
        return None
    missing: list[str] = [v for v in (record.args.get("first"), record.args.get("second"))
                          if isinstance(v, str) and not _present(table_env, key, v)]
    if missing:
        return {"reason": "row", "column": key.header, "value": missing[0], "action": record.action,
                **_candidates(table_env, key, missing[0])}
    return None


@rule(
    "sql_grouped_answer",
    kind="error",
    env="interpreter",
    phase="any",
    sides=SQL,
    actions=("set_answer", "add_group"),
    doc="A grouped query's column answered without an aggregation (a group has many cells), or a second `add_group`.",
    suggests="An aggregation (COUNT, SUM, AVG, MAX, MIN, COUNT DISTINCT), the grouped column or Count; undo to regroup.",
)
def sql_grouped_answer(record: StepRecord, env: Environment) -> dict[str, Any] | None:
    exc = record.exception
    if not isinstance(exc, GroupError):
        return None
    group = table_side(env).query.group
    return {
        "message": str(exc),
        "action": record.action,
        "column": facts(record, env).raw("column"),
        "group": group.column.header if group is not None else "",
        "count": group.count.header if group is not None else "Count",
    }
