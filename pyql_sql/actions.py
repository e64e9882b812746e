"""The SQL action set: the PyQL functions an LLM calls on a table (Table 10, SQL version).

The docstrings of the four actions below are what the LLM reads
(``pyql docs --side sql``); keep them short, concrete and true. Each action
runs on a :class:`~pyql_sql.environment.TableEnvironment` and returns a
:class:`~pyql.environment.actions.StepResult`.

Arguments are read the way an LLM writes them: a column is matched against
the table's real headers (``Lyrics theme/style``, ``lyrics THEME/style`` and
``"Lyrics theme/style"`` all name the same column, see
:meth:`~pyql_sql.table.Table.resolve_column`); a value needs no quotes and
may contain commas (``add_condition(Name, =, Smith, John)`` has the value
``Smith, John``); so may a column (``get_column(Goals, total)`` when the
table has a header ``Goals, total``). :func:`regroup_arguments` does that
re-splitting with :func:`pyql.action_parser.split_args`.

Example:
    >>> TableActions().names[:4], TableActions().names[-1]
    (('get_column', 'add_condition', 'add_order', 'add_row'), 'execute')
    >>> TableActions().spec("set_answer").signature
    'set_answer(column, aggregation)'
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from grammars.vocabulary import COMPARISON_OPERATORS, TABLE_ACTION_ORDER, canonical_operator
from pyql.action_parser import ActionCall, Arg, split_args
from pyql.environment.actions import ActionSet, StepResult, action
from pyql.errors import PyQLError

from .errors import AmbiguousColumnError, BadOperatorError, IncompleteQueryError, UnknownColumnError
from .executor import Executor
from .numbers import format_number
from .observation import observe
from .parts import normalize_part
from .query import (
    TableQuery,
    normalize_aggregation,
    normalize_arithmetic,
    normalize_operator,
    normalize_position,
    normalize_row_direction,
)
from .table import Column, Table

__all__ = ["ORDER", "TableActions", "TableContext", "column_text", "convert_argument", "regroup_arguments"]

#: The order the actions are documented in (the vocabulary's).
ORDER = list(TABLE_ACTION_ORDER)



class TableContext(Protocol):
    """What a SQL action reads from its environment
    (:class:`~pyql_sql.environment.TableEnvironment` offers it)."""

    table: Table
    executor: Executor
    query: TableQuery
    max_values: int
    max_rows: int
    max_answers: int


_INDEX_RE = re.compile(r"#\s*(\d+)\Z")


def column_text(arg: Arg) -> str:
    """The column name an argument spells (its value; the source text for variables and literals).

    Example:
        >>> from pyql.action_parser import parse_action
        >>> [column_text(a) for a in parse_action('f(Lyrics theme/style, "Goals, total", `No.`)').args]
        ['Lyrics theme/style', 'Goals, total', 'No.']
    """
    if arg.kind in ("variable", "typed", "lang_string"):
        return arg.raw or arg.value
    return arg.value


def _resolve(table: Table | TableQuery, text: str) -> Column:
    """Resolve a column as written (a query's derived columns too); ``#N`` is the 0-based column N (for duplicated headers)."""
    try:
        return table.resolve_column(text)
    except UnknownColumnError:
        m = _INDEX_RE.fullmatch(text.strip())
        if m and int(m.group(1)) < len(table.columns):
            return table.columns[int(m.group(1))]
        raise
    except AmbiguousColumnError as exc:
        listed = ", ".join(f"#{i}" for i, _ in exc.candidates)
        exc.args = (
            f"Column {text!r} is ambiguous: {len(exc.candidates)} columns have this header. "
            f"Write #N for the 0-based column number instead: one of {listed}.",
        )
        raise


def _resolves(table: Table | TableQuery, text: str) -> bool:
    try:
        _resolve(table, text)
    except PyQLError:
        return False
    return True


def _join(call: ActionCall, args: list[Arg]) -> Arg:
    """One free-text argument made of consecutive arguments, as written (commas kept)."""
    first, last = args[0], args[-1]
    base = call.span[0]
    text = ""
    if call.text and call.span[1] - base == len(call.text):
        text = call.text[first.span[0] - base : last.span[1] - base]
    if not text:
        text = ", ".join(a.raw or a.value for a in args)
    return Arg("text", text, raw=text, span=(first.span[0], last.span[1]))


def _is_aggregation(arg: Arg) -> bool:
    try:
        normalize_aggregation(arg.value)
    except PyQLError:
        return False
    return True


def _is_operator(arg: Arg) -> bool:
    """Whether an argument is a condition's operator: a comparison, or the word ``contains``."""
    return arg.kind == "operator" or (arg.kind == "name" and arg.value.strip().lower() == "contains")


def regroup_arguments(call: ActionCall, table: Table | TableQuery) -> list[Arg]:
    """The arguments of a call as its SQL action takes them, re-joining text split at commas.

    * ``add_condition``: the first operator at position 1 or later separates
      the column (before it) from the value (after it), so both may contain
      commas; without one, :func:`~pyql.action_parser.split_args` keeps the
      commas of the last argument.
    * ``get_column`` / ``set_answer``: arguments are joined back into one
      column when the joined text is a header of the table (``set_answer``
      keeps a trailing aggregation apart).

    Anything else is returned as parsed (an arity error then says what is wrong).

    Example:
        >>> from pyql.action_parser import parse_action
        >>> t = Table.from_rows(["Name", "Goals, total"], [["Smith, John", "3"]])
        >>> [a.value for a in regroup_arguments(parse_action("add_condition(Name, =, Smith, John)"), t)]
        ['Name', '=', 'Smith, John']
        >>> [a.value for a in regroup_arguments(parse_action("add_condition(Goals, total, >, 1,000)"), t)]
        ['Goals, total', '>', '1,000']
        >>> [a.value for a in regroup_arguments(parse_action("add_condition(Name, contains, Smith, John)"), t)]
        ['Name', 'contains', 'Smith, John']
        >>> [a.value for a in regroup_arguments(parse_action("set_answer(Goals, total, SUM)"), t)]
        ['Goals, total', 'SUM']
        >>> [a.value for a in regroup_arguments(parse_action("get_column(Name, Goals)"), t)]
        ['Name', 'Goals']
    """
    args = list(call.args)
    if call.name == "add_condition" and len(args) > 3:
        for i in range(1, len(args) - 1):
            if _is_operator(args[i]):
                column = args[0] if i == 1 else _join(call, args[:i])
                tail = args[i + 1 :]
                return [column, args[i], tail[0] if len(tail) == 1 else _join(call, tail)]
        value_text = split_args(call, 3)[2]
        value = Arg("text", value_text, raw=value_text, span=(args[2].span[0], args[-1].span[1]))
        return [args[0], args[1], value]
    if call.name == "add_adjacent" and len(args) > 3:
        return [args[0], _join(call, args[1:-1]), args[-1]]
    if call.name == "get_column" and len(args) > 1:
        joined = _join(call, args)
        return [joined] if _resolves(table, joined.value) else args
    if call.name == "set_answer" and len(args) > 1:
        if len(args) > 2 and _is_aggregation(args[-1]):
            joined = _join(call, args[:-1])
            if _resolves(table, joined.value):
                return [joined, args[-1]]
        elif not _is_aggregation(args[-1]):
            joined = _join(call, args)
            if _resolves(table, joined.value):
                return [joined]
    return args


def convert_argument(table: Table | TableQuery, kind: str, arg: Arg, action_name: str, name: str, position: int) -> Any:
    """Convert one parsed argument for a parameter kind of a SQL action.

    Kinds: "column" (a :class:`~pyql_sql.table.Column` of the table, or one
    the query derived when ``table`` is the query), "part" (a part of a cell:
    :data:`pyql_sql.parts.PARTS`), "arithmetic" (``-``, ``+``, ``*``, ``/`` or
    a word for one), "row_direction" (after or before), "position" (a row's
    place: a whole number or an ordinal word),
    "operator" (one of ``> < >= <= = !=``; ``==``, ``<>``, ``=>`` and ``=<``
    are read as ``=``, ``!=``, ``>=`` and ``<=``), "table_operator" (those, or
    ``contains``: a table condition's), "value" (the text as written, quotes removed),
    "aggregation" (None, MAX, MIN, COUNT, SUM or AVG, any case; ``None``
    means no aggregation), and "text" (as written): the kinds the table of
    parameter kinds gives the SQL side (:func:`grammars.parameter_kinds.kinds_of_side`),
    whose rows the docs, the tool schemas and the GBNF grammar read too.

    Raises:
        UnknownColumnError: no header matches (with the closest headers).
        AmbiguousColumnError: several headers match (write ``#N`` instead).
        BadOperatorError: not a comparison operator.
        BadAggregationError: not an aggregation.

    Example:
        >>> from pyql.action_parser import parse_action
        >>> t = Table.from_rows(["Lyrics theme/style"], [["Romance"]])
        >>> call = parse_action("add_condition(lyrics theme/style, ==, Romance)")
        >>> [convert_argument(t, k, a, call.name, "x", i).__class__.__name__ for i, (k, a)
        ...  in enumerate(zip(["column", "operator", "value"], call.args))]
        ['Column', 'str', 'str']
        >>> convert_argument(t, "operator", call.args[1], call.name, "op", 1)
        '='
        >>> convert_argument(t, "table_operator", parse_action("f(CONTAINS)").args[0], "add_condition", "op", 1)
        'contains'
        >>> convert_argument(t, "operator", parse_action("f(LIKE)").args[0], "add_condition", "op", 1)
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadOperatorError: Unknown operator 'LIKE'. Allowed operators: >, <, >=, <=, =, !=.
    """
    if kind == "column":
        return _resolve(table, column_text(arg))
    if kind in ("operator", "table_operator"):
        written = arg.value if arg.kind in ("operator", "string", "text", "name") else (arg.raw or arg.value)
        if kind == "operator" and canonical_operator(written) is None:
            raise BadOperatorError(written, allowed=COMPARISON_OPERATORS)
        return normalize_operator(written)
    if kind == "aggregation":
        return normalize_aggregation(arg.value if arg.kind in ("string", "text", "name") else (arg.raw or arg.value))
    written = arg.value if arg.kind in ("string", "text", "name", "number") else (arg.raw or arg.value)
    if kind == "part":
        return normalize_part(written)
    if kind == "arithmetic":
        return normalize_arithmetic(written)
    if kind == "row_direction":
        return "after" if normalize_row_direction(written) else "before"
    if kind == "position":
        return normalize_position(written)
    if arg.kind in ("variable", "operator"):
        return arg.raw or arg.value
    return arg.value


def _show(value: object) -> str:
    if isinstance(value, float):
        return format_number(value)
    return repr(value) if isinstance(value, str) else str(value)


class TableActions(ActionSet):
    """The PyQL functions for tables (SQL version).

    Args:
        only: restrict to these action names; docs and the environment follow.
    """

    title = "PyQL actions (SQL version)"

    def order(self) -> list[str]:
        return ORDER

    def convert(self, env: TableContext, kind: str, arg: Arg, action_name: str, name: str, position: int) -> Any:
        """Convert one argument for a parameter kind (see :func:`convert_argument`)."""
        return convert_argument(env.query, kind, arg, action_name, name, position)

    def _observe(self, env: TableContext, query: TableQuery) -> StepResult:
        seen = observe(env.executor, query, max_rows=env.max_rows, max_values=env.max_values)
        return StepResult(query=query, result=seen.result, observation=seen.text, empty=seen.is_empty)

    # -- interacting with the table ------------------------------------------
    @action("interact", column="column")
    def get_column(self, env: TableContext, column: Column) -> StepResult:
        """Get the values stored in the given column.

        The column is one of the table's column names, written as it is (no quotes needed). You see its distinct values, most frequent first, and how many there are; nothing is added to the query.

        Args:
            column: a column name of the table, e.g. Lyrics theme/style.

        Example: get_column(Lyrics theme/style)
        """
        values = env.executor.get_column(column, limit=env.max_values)
        return StepResult(result=values, observation=str(values), empty=values.distinct_count == 0)

    # -- constructing the query ------------------------------------------------
    @action("construct", column="column", op="table_operator", value="value")
    def add_condition(self, env: TableContext, column: Column, op: str, value: str) -> StepResult:
        """Add a constraint which requires the SQL query to meet "column op value".

        The column should be one of the table's column names; op can be one of {table_operators}; the value is a specific value (a string or a number), written without quotes. For example, add_condition(Lyrics theme/style, =, Romance) requires the query to return only the rows whose value in the "Lyrics theme/style" column is "Romance". Text is compared case-insensitively, and numbers written as text (1,174) compare as numbers. contains keeps the rows whose text cell holds the value's words as whole words (case and accents aside): add_condition(Opponent, contains, Braves) keeps "Atlanta Braves" and "@ Atlanta Braves".

        Args:
            column: a column name of the table.
            op: one of {table_operators}.
            value: a value such as Romance, 17 or 2–1 (no quotes needed; commas are fine).

        Example: add_condition(Lyrics theme/style, =, Romance)
        """
        return self._observe(env, env.query.add_condition(column, op, value))

    @action("construct", column="column", direction="value", limit="value")
    def add_order(self, env: TableContext, column: Column, direction: str = "DESC", limit: str = "1") -> StepResult:
        """Keep only the row with the largest (DESC) or smallest (ASC) value in the column, after all the conditions.

        Use it when the question asks about another column of that row, e.g. "which season had the most episodes" is add_order(Episodes, DESC) then set_answer(Season). A third argument keeps that many rows instead of one.

        Args:
            column: a column name of the table.
            direction: DESC (the largest first) or ASC (the smallest first); default DESC.
            limit: how many rows to keep (default 1).

        Example: add_order(Game, DESC)
        """
        return self._observe(env, env.query.add_order(column, direction, limit))

    @action("construct", position="position")
    def add_row(self, env: TableContext, position: int) -> StepResult:
        """Keep only the row at a place among the rows kept, in the table's order: 1 the first, 2 the second, -1 the last.

        Use it for "the first", "the second", "the last" row the table lists (after the conditions); after add_order the rows are counted in that order, so add_order(Points, DESC) then add_row(2) is the second highest.

        Args:
            position: 1, 2, ... (-1 the last, -2 the one before it), or first, second, ..., last.

        Example: add_row(last)
        """
        return self._observe(env, env.query.add_row(position))

    @action("construct", column="column", value="value", direction="row_direction")
    def add_adjacent(self, env: TableContext, column: Column, value: str, direction: str = "after") -> StepResult:
        """Keep the row right after (or before) the row whose column holds the value, in the table's order.

        "what team comes before Hank Stein" is add_adjacent(Player, Hank Stein, before) then set_answer(Team). The value is matched as add_condition's = matches it.

        Args:
            column: a column name of the table.
            value: the value of the row looked from (no quotes needed).
            direction: after (the next row, default) or before (the previous row).

        Example: add_adjacent(Player, Hank Stein, before)
        """
        return self._observe(env, env.query.add_adjacent(column, value, direction))

    @action("construct", column="column", part="part", separator="value")
    def add_part(self, env: TableContext, column: Column, part: str, separator: str = "") -> StepResult:
        """Add a column holding one part of each cell: its year, month, day or date (of a date written as text), its first number, the seconds of a time (4:25 is 265), or its text before or after a separator.

        The new column is named after the column and the part (Date year) and later steps use it: add_part(Date, year) then add_condition(Date year, =, 2004); add_part(Length, seconds) then add_condition(Length seconds, >, 300) for "longer than five minutes". A cell without that part has none.

        Args:
            column: a column name of the table.
            part: year, month, day, date, number, seconds, before or after.
            separator: for before/after, the text that splits the cell (default: a dash, as in 2–1).

        Example: add_part(Date, year)
        """
        return self._observe(env, env.query.add_part(column, part, separator))

    @action("construct", column="column", op="arithmetic", other="column")
    def add_calculation(self, env: TableContext, column: Column, op: str, other: Column) -> StepResult:
        """Add a column holding two cells of each row combined: column op other, with op one of -, +, *, /.

        The new column is named "column op other" (Won - Lost) and later steps use it, e.g. add_order(Won - Lost, DESC).

        Args:
            column: a column name of the table (numbers).
            op: -, +, * or /.
            other: another column name (numbers).

        Example: add_calculation(Won, -, Lost)
        """
        return self._observe(env, env.query.add_calculation(column, op, other))

    @action("construct", column="column")
    def add_group(self, env: TableContext, column: Column) -> StepResult:
        """Group the rows kept by the value of a column; each group gets its number of rows, Count.

        "which team won the most titles" is add_group(Winner), add_order(Count, DESC), set_answer(Winner). After it, set_answer(column) lists the groups, set_answer(Count) their counts, set_answer(column, COUNT) how many groups there are, and another column needs an aggregation (one value per group).

        Args:
            column: a column name of the table.

        Example: add_group(Winner)
        """
        return self._observe(env, env.query.add_group(column))

    @action("construct", column="column", aggregation="aggregation")
    def set_answer(
        self, env: TableContext, column: Column, aggregation: str | None = None
    ) -> StepResult:
        """Specify the answer of the SQL query: which column to return and which aggregation to perform on it.

        The aggregation can only be: None, MAX, MIN, COUNT, SUM, AVG, COUNT DISTINCT. If the question just needs the content of the column, set it to None (or leave it out). If the question needs the number of items in the column, use COUNT; the number of different values, COUNT DISTINCT; the maximum or minimum item, MAX or MIN; the summation or average of the items, SUM or AVG.

        Args:
            column: a column name of the table.
            aggregation: None, MAX, MIN, COUNT, SUM, AVG or COUNT DISTINCT (optional, default None).

        Example: set_answer(Game, COUNT)
        """
        return self._observe(env, env.query.set_answer(column, aggregation))

    @action("construct", column="column", op="arithmetic", key="column", first="value", second="value")
    def set_calculation(self, env: TableContext, column: Column, op: str, key: Column, first: str, second: str) -> StepResult:
        """Answer with the column's value in one row combined with its value in another: the difference (-), sum (+) or ratio (/).

        The rows are those whose key column holds first and second: "how many more gold medals did Japan win than China" is set_calculation(Gold, -, Nation, Japan, China).

        Args:
            column: the column of the numbers.
            op: -, +, * or /.
            key: the column that names the rows.
            first: the first row's value in the key column.
            second: the second row's value in the key column.

        Example: set_calculation(Gold, -, Nation, Japan, China)
        """
        return self._observe(env, env.query.set_calculation(column, op, key, first, second))

    @action("construct", column="column", key="column", first="value", second="value", direction="value", if_first="value",
            if_second="value", together=("if_first", "if_second"))
    def compare_rows(
        self, env: TableContext, column: Column, key: Column, first: str, second: str, direction: str = "DESC",
        if_first: str | None = None, if_second: str | None = None,
    ) -> StepResult:
        """Answer which of two rows has the larger (DESC) or smaller (ASC) value in the column: the answer is that row's key, or one of two words.

        "who had more goals, Ross Jenkins or Nigel Gibbs" is compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC). When the question offers two words, give both: "did Ross Jenkins score more or fewer goals than Nigel Gibbs" is compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC, more, fewer), which answers more when the first row wins and fewer when the second does (no answer when their values are equal).

        Args:
            column: the column compared.
            key: the column that names the rows.
            first: the first row's value in the key column.
            second: the second row's value in the key column.
            direction: DESC (the larger, default) or ASC (the smaller).
            if_first: the word answered when the first row wins, e.g. more (give both words or neither).
            if_second: the word answered when the second row wins, e.g. less.

        Example: compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC)
        """
        given = [w for w in (if_first, if_second) if w is not None]
        if len(given) == 1:  # a call made in Python (the environment checks the count before)
            self.check_arity("compare_rows", 6)
        words = (if_first, if_second) if if_first is not None and if_second is not None else None
        return self._observe(env, env.query.compare_rows(column, key, first, second, direction, words))

    @action("terminate")
    def execute(self, env: TableContext) -> StepResult:
        """Execute the current SQL query and return the execution result on the table.

        Use it when you think the query is completely built (set_answer has been called).

        Example: execute()
        """
        if env.query.result is None:
            raise IncompleteQueryError(
                "The query has no answer column yet: call set_answer(column, aggregation) "
                "(or set_calculation, compare_rows) before execute()."
            )
        answers = env.executor.execute(env.query)
        shown = answers[: env.max_answers]
        text = "The answer is [" + ", ".join(_show(a.value) for a in shown) + "]"
        if len(answers) > len(shown):
            text += f" (first {len(shown)} of {len(answers)})"
        empty = not any(a.value is not None for a in answers)
        return StepResult(result=shown, observation=text, empty=empty, done=True)
