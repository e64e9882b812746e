"""The immutable step-by-step SQL query (the SQL version of PyQL).

The tools of QueryAgent's Table 10 (SQL version) that *construct* the query:

* ``add_condition(column, op, value)`` — keep rows where ``column op value``
  (``contains``: a text cell holds the value's words);
* ``set_answer(column, aggregation)`` — what to return (``None``, ``MAX``,
  ``MIN``, ``COUNT``, ``SUM``, ``AVG``);
* ``add_order(column, direction, limit)`` — keep only the ``limit`` rows with
  the largest (``DESC``) or smallest (``ASC``) value of a column (ORDER BY ...
  LIMIT: "which season had the most episodes" returns another column of the
  row with the most episodes);
* row position: ``add_row(position)`` (the n-th row kept, in the table's
  order), ``add_adjacent(column, value, direction)`` (the row right after or
  before the row that matches);
* derived columns: ``add_part(column, part, separator)`` (the year, month,
  day or date a cell writes, its leading number, the text before or after a
  separator: :mod:`pyql_sql.parts`), ``add_calculation(column, op, column)``
  (two cells of a row combined);
* ``add_group(column)`` — the rows kept grouped by a column's value, each
  group with its row count (``Count``): an argmax over groups is
  ``add_group`` then ``add_order(Count, DESC)``;
* answers besides ``set_answer`` (whose aggregations include ``COUNT
  DISTINCT``): ``set_calculation(column, op, key, first, second)`` (the
  difference, sum or ratio of two rows' cells) and ``compare_rows(column,
  key, first, second, direction)`` (which of two named rows has more);

plus ``undo()``. Every step returns a *new* :class:`TableQuery`; the old one
is unchanged, so an agent can branch and backtrack freely. Steps are checked
when they are added (column resolved against the table's headers, operator,
aggregation and value validated) so mistakes surface at the step that made
them. The tools that only *observe* (``get_column``, ``execute``) are on
:class:`pyql_sql.executor.Executor`.

Layering (see :mod:`pyql_sql.tabledata`): this module builds on the table
data (:mod:`pyql_sql.tabledata`), the step dataclasses (:mod:`pyql_sql.steps`,
re-exported here) and the compiler (:mod:`pyql_sql.compile`, for ``sql()``
and friends); it imports neither :mod:`pyql_sql.executor` nor
:mod:`pyql_sql.table`, which build on it.

Example:
    >>> from pyql_sql import Table
    >>> t = Table.from_rows(["Opponent", "Attendance"], [["Ajax", "19,768"], ["UCD", "—"]])
    >>> q = t.query().add_condition("opponent", "=", "ajax").set_answer("Attendance")
    >>> q.actions()
    ['add_condition(Opponent, =, ajax)', 'set_answer(Attendance, None)']
    >>> print(q.sql())
    SELECT "c1" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER('ajax')
    >>> q.undo().undo().steps
    ()
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sqlglot import exp

from grammars.vocabulary import (
    ARITHMETIC_OPERATORS,
    ARITHMETIC_WORDS,
    ORDERING_OPERATORS,
    ORDINALS,
    TABLE_AGGREGATIONS,
    TABLE_OPERATORS,
    canonical_table_operator,
)

from .compile import compile_query, logical_expression
from .errors import (
    AmbiguousColumnError,
    BadAggregationError,
    BadOperatorError,
    BadValueError,
    GroupError,
    PositionError,
    SQLQueryError,
    UnknownColumnError,
)
from .numbers import format_number, parse_number
from .parts import cell_words, normalize_part
from .steps import (
    AdjacentStep,
    AnswerStep,
    CalculationStep,
    CompareStep,
    ConditionStep,
    DerivedColumn,
    GroupStep,
    OrderStep,
    PartStep,
    PositionStep,
    ResultStep,
    RowsCalculationStep,
    Step,
)
from .tabledata import Column, TableData, header_keys

__all__ = [
    "OPERATORS",
    "AGGREGATIONS",
    "ConditionStep",
    "AnswerStep",
    "OrderStep",
    "Step",
    "DIRECTIONS",
    "normalize_arithmetic",
    "normalize_position",
    "normalize_row_direction",
    "TableQuery",
    "normalize_operator",
    "normalize_aggregation",
    "normalize_direction",
]

#: Condition operators accepted by :meth:`TableQuery.add_condition`: the action language's comparisons and ``contains``.
OPERATORS: tuple[str, ...] = TABLE_OPERATORS

#: Aggregations accepted by :meth:`TableQuery.set_answer` (besides None): the vocabulary's, and COUNT DISTINCT.
AGGREGATIONS: tuple[str, ...] = TABLE_AGGREGATIONS
_AGGREGATION_ALIASES = {"COUNT_DISTINCT": "COUNT DISTINCT", "DISTINCT": "COUNT DISTINCT", "COUNT(DISTINCT)": "COUNT DISTINCT",
                        "DISTINCT COUNT": "COUNT DISTINCT"}

_ORDERING = frozenset(ORDERING_OPERATORS)

#: The directions of :meth:`TableQuery.add_order` (MAX and MIN are read as DESC and ASC).
DIRECTIONS: tuple[str, ...] = ("DESC", "ASC")
_DIRECTION_ALIASES = {"DESC": True, "ASC": False, "MAX": True, "MIN": False}

#: The most rows :meth:`TableQuery.add_order` keeps.
MAX_ORDER_LIMIT = 1000


def normalize_direction(direction: object) -> bool:
    """Check an order direction: True for DESC (largest first), False for ASC.

    Raises:
        BadValueError: anything but DESC, ASC, MAX or MIN (any case).

    Example:
        >>> normalize_direction("desc"), normalize_direction(" MIN ")
        (True, False)
        >>> normalize_direction("up")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadValueError: Unknown order direction 'up'. Allowed: DESC (the largest first) or ASC (the smallest first); MAX and MIN mean the same.
    """
    key = direction.strip().upper() if isinstance(direction, str) else None
    if key not in _DIRECTION_ALIASES:
        raise BadValueError(
            f"Unknown order direction {direction!r}. Allowed: DESC (the largest first) or ASC (the smallest first); "
            "MAX and MIN mean the same."
        )
    return _DIRECTION_ALIASES[key]


def _answer_words(words: object) -> tuple[str, str] | None:
    """Check the two words ``compare_rows`` answers with: None, or two non-empty texts (spaces around them dropped).

    Raises:
        BadValueError: anything else.

    Example:
        >>> _answer_words((" more", "less ")), _answer_words(None)
        (('more', 'less'), None)
        >>> _answer_words(("more",))
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadValueError: compare_rows answers with two different words (the first row wins, the second row wins), not ('more',).
    """
    if words is None:
        return None
    if (not isinstance(words, (tuple, list)) or len(words) != 2
            or not all(isinstance(w, str) and w.strip() for w in words) or words[0].strip().lower() == words[1].strip().lower()):
        raise BadValueError(f"compare_rows answers with two different words (the first row wins, the second row wins), not {words!r}.")
    return (words[0].strip(), words[1].strip())


def _order_limit(limit: object) -> int:
    """A row count for :meth:`TableQuery.add_order`: a whole number from 1 to :data:`MAX_ORDER_LIMIT`."""
    number = parse_number(limit) if isinstance(limit, (str, int, float)) and not isinstance(limit, bool) else None
    if number is None or not number.is_integer() or not 1 <= number <= MAX_ORDER_LIMIT:
        raise BadValueError(f"The limit of add_order must be a whole number from 1 to {MAX_ORDER_LIMIT}, not {limit!r}.")
    return int(number)


def normalize_operator(op: object) -> str:
    """Check a condition operator.

    Args:
        op: one of ``> < >= <= = !=`` or a spelling of the vocabulary
            (``==``, ``<>``, ``=>``, ``=<``), or ``contains`` (any case); surrounding spaces are ignored.

    Raises:
        BadOperatorError: anything else; the message lists the allowed operators.

    Example:
        >>> normalize_operator(" >= "), normalize_operator("<>"), normalize_operator("Contains")
        ('>=', '!=', 'contains')
        >>> normalize_operator("LIKE")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadOperatorError: Unknown operator 'LIKE'. Allowed operators: >, <, >=, <=, =, !=, contains.
    """
    canonical = canonical_table_operator(op)
    if canonical is None:
        raise BadOperatorError(op, allowed=OPERATORS)
    return canonical


def normalize_aggregation(aggregation: object) -> str | None:
    """Check an aggregation; return it upper-cased, or None for no aggregation.

    Args:
        aggregation: None, ``''``, ``'None'`` (any case) for none; else one of
            MAX, MIN, COUNT, SUM, AVG in any case.

    Raises:
        BadAggregationError: anything else.

    Example:
        >>> [normalize_aggregation(a) for a in (None, "", "none", "max", " Count ", "count_distinct")]
        [None, None, None, 'MAX', 'COUNT', 'COUNT DISTINCT']
    """
    if aggregation is None:
        return None
    if isinstance(aggregation, str):
        key = " ".join(aggregation.strip().upper().split())
        key = _AGGREGATION_ALIASES.get(key, key)
        if key in ("", "NONE"):
            return None
        if key in AGGREGATIONS:
            return key
    raise BadAggregationError(aggregation, allowed=("None",) + AGGREGATIONS)


_ROW_DIRECTIONS = {"after": True, "next": True, "following": True, "below": True, "later": True,
                   "before": False, "previous": False, "preceding": False, "above": False, "prior": False, "earlier": False}


def normalize_row_direction(direction: object) -> bool:
    """Check an ``add_adjacent`` direction: True for the row after, False for the row before.

    Raises:
        BadValueError: anything but after/before (or next, following, below; previous, preceding, above, prior).

    Example:
        >>> normalize_row_direction("After"), normalize_row_direction("previous")
        (True, False)
        >>> normalize_row_direction("up")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadValueError: Unknown direction 'up'. Allowed: after (the next row) or before (the previous row).
    """
    key = direction.strip().lower() if isinstance(direction, str) else None
    if key not in _ROW_DIRECTIONS:
        raise BadValueError(f"Unknown direction {direction!r}. Allowed: after (the next row) or before (the previous row).")
    return _ROW_DIRECTIONS[key]


def normalize_arithmetic(op: object) -> str:
    """Check an arithmetic operator: ``-``, ``+``, ``*``, ``/`` or a word for one (``difference``, ``ratio`` ...).

    Raises:
        BadOperatorError: anything else.

    Example:
        >>> normalize_arithmetic(" - "), normalize_arithmetic("ratio"), normalize_arithmetic("Plus")
        ('-', '/', '+')
        >>> normalize_arithmetic("%")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadOperatorError: Unknown operator '%'. Allowed operators: -, +, *, /.
    """
    key = " ".join(op.strip().lower().split()) if isinstance(op, str) else ""
    key = ARITHMETIC_WORDS.get(key, key)
    if key not in ARITHMETIC_OPERATORS:
        raise BadOperatorError(op, allowed=ARITHMETIC_OPERATORS)
    return key


_ORDINAL_SUFFIX = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def normalize_position(position: object, rows: int | None = None) -> int:
    """Check a row position: a whole number other than 0 (1 the first, -1 the last) or an ordinal word.

    Args:
        position: ``3``, ``-1``, ``"2nd"``, ``"first"``, ``"last"``, ``"second to last"``.
        rows: the table's rows; a position past them is refused.

    Raises:
        BadValueError: not a position, or past the table's end.

    Example:
        >>> [normalize_position(p) for p in (2, "-1", "third", "Last", "2nd", "second to last")]
        [2, -1, 3, -1, 2, -2]
        >>> normalize_position(12, rows=10)
        Traceback (most recent call last):
        ...
        pyql_sql.errors.PositionError: Row 12 is past the table's end: the table has 10 rows. Give a position from 1 to 10 (or -1 for the last row, -2 for the one before it).
    """
    value: int | None = None
    if isinstance(position, int) and not isinstance(position, bool):
        value = position
    elif isinstance(position, str):
        text = " ".join(position.strip().lower().replace("second-to-last", "second to last").split())
        text = text.removeprefix("the ")
        suffix = _ORDINAL_SUFFIX.match(text)
        number = parse_number(text) if suffix is None else float(suffix.group(1))
        if text in ORDINALS:
            value = ORDINALS[text]
        elif number is not None and number.is_integer():
            value = int(number)
    if value is None or value == 0:
        raise PositionError(
            f"Unknown row position {position!r}. Give a whole number other than 0 (1 the first row, -1 the last) "
            "or an ordinal word (first, second, ..., last)."
        )
    if rows is not None and abs(value) > rows:
        raise PositionError(
            f"Row {value} is past the table's end: the table has {rows} rows. Give a position from 1 to {rows} "
            "(or -1 for the last row, -2 for the one before it)."
        )
    return value


def _check_value(value: object) -> None:
    """Raise :class:`BadValueError` unless a condition's value is a string or a finite number."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise BadValueError(f"The value of a condition must be a string or a number, not {type(value).__name__} ({value!r}).")
    if isinstance(value, float) and not math.isfinite(value):
        raise BadValueError(f"The value {value!r} is not a finite number.")


@dataclass(frozen=True, eq=False)
class TableQuery:
    """An immutable query on one :class:`~pyql_sql.table.Table`, built step by step.

    Attributes:
        table: the table the query runs on.
        steps: the steps so far, oldest first.

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Round", "Fastest Lap"], [["5", "Takashi Kogure"], ["13", "Takashi Kogure"]])
        >>> q0 = t.query()
        >>> q1 = q0.add_condition("Fastest Lap", "=", "takashi kogure")
        >>> q2 = q1.set_answer("Round", "min")
        >>> (len(q0.steps), len(q1.steps), len(q2.steps))
        (0, 1, 2)
        >>> print(q2.display_sql())
        SELECT MIN("Round") FROM "table" WHERE "Fastest Lap" = 'takashi kogure'
    """

    table: TableData
    steps: tuple[Step, ...] = ()

    # ---------------------------------------------------------------- steps
    def add_condition(self, column: str | int, op: str, value: str | int | float) -> TableQuery:
        """Keep only the rows where ``column op value``.

        Text equality is case-insensitive (``LOWER(TRIM(cell)) = LOWER(value)``).
        A numeric value is compared as a number: ``"1,174"``, ``1174`` and
        ``"1174.0"`` are the same value, in the cells and in ``value``.

        ``contains`` keeps the rows whose cell holds the value's words as
        whole words, in order, case and accents aside, punctuation as spaces
        (:func:`pyql_sql.compile.words_contain`): ``Braves`` keeps ``@ Atlanta
        Braves``, not ``Bravest``. It is for text: on a column of numbers it is
        refused (use ``=`` or a comparison); its value must have a letter or a digit.

        Args:
            column: a header as an LLM wrote it (matched loosely, see
                :meth:`Table.resolve_column`) or a 0-based column index.
            op: one of ``= > < >= <= !=`` or ``contains``.
            value: a str, int or float.

        Returns:
            A new query with the condition added.

        Raises:
            UnknownColumnError: no such column (with suggestions).
            AmbiguousColumnError: several columns match.
            BadOperatorError: unknown operator.
            BadValueError: the value is not str/int/float, or ``>``/``<``/``>=``/``<=``
                on a numeric column with a value that is not a number, or ``contains``
                on a numeric column or with a value without a word.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Season", "Opponent"], [["1996", "@ Atlanta Braves"], ["1997", "Braves"]])
            >>> t.query().add_condition("Season", "<", "2001").conditions[0].number
            2001.0
            >>> t.query().add_condition("Season", "<", "last year")
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadValueError: Column 'Season' holds numbers, so '<' needs a number, but got 'last year'. Give a number such as 17, 9.626 or 1,174 (or use = to match text).
            >>> t.executor().count(t.query().add_condition("Opponent", "contains", "braves"))
            2
            >>> t.query().add_condition("Season", "contains", "199")
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadValueError: Column 'Season' holds numbers (e.g. 1996), and contains matches words inside text. Use =, !=, >, <, >= or <= with a number, e.g. add_condition(Season, =, 1996).
        """
        col = self.resolve_column(column)
        op_ = normalize_operator(op)
        _check_value(value)
        number = parse_number(value)
        if op_ in _ORDERING and col.is_numeric and number is None:
            raise BadValueError(
                f"Column {col.header!r} holds numbers, so {op_!r} needs a number, but got "
                f"{value!r}. Give a number such as 17, 9.626 or 1,174 (or use = to match text)."
            )
        if op_ == "contains":
            self._check_contains(col, value)
            number = None  # the words of a text, never a number
        return TableQuery(self.table, self.steps + (ConditionStep(col, op_, value, number),))

    def _check_contains(self, col: Column, value: str | int | float) -> None:
        """Refuse ``contains`` on a column of numbers, or with a value that has no word to look for."""
        if col.is_numeric:
            example = self._first_cell(col)
            shown = f" (e.g. {example})" if example else ""
            raise BadValueError(
                f"Column {col.header!r} holds numbers{shown}, and contains matches words inside text. "
                f"Use =, !=, >, <, >= or <= with a number, e.g. add_condition({col.header}, =, {example or 17})."
            )
        if not cell_words(value if isinstance(value, str) else str(value)).strip():
            raise BadValueError(
                f"contains looks for words, but {value!r} has no letter or digit. Give a word or a few words "
                f"as the cells of {col.header!r} write them, e.g. Braves."
            )

    def _first_cell(self, col: Column) -> str:
        """A column's first non-empty cell as text (for a message), or ''."""
        if isinstance(col, DerivedColumn) or not col.text_sql:
            return ""
        select = exp.select(exp.column(exp.to_identifier(col.text_sql, quoted=True))).from_(
            exp.table_(self.table.sql_name, quoted=True)).where(
            exp.Not(this=exp.Is(this=exp.column(exp.to_identifier(col.text_sql, quoted=True)), expression=exp.Null())), copy=False).limit(1)
        try:
            row = self.table.connection.execute(select.sql("sqlite")).fetchone()
        except Exception:  # noqa: BLE001 - only a message's example
            return ""
        if not row or row[0] is None:
            return ""
        return format_number(row[0]) if isinstance(row[0], float) else str(row[0]).strip()

    def set_answer(self, column: str | int, aggregation: str | None = None) -> TableQuery:
        """Choose what the query returns: a column, maybe aggregated.

        A later ``set_answer`` replaces an earlier one.

        Args:
            column: a header as an LLM wrote it or a 0-based column index.
            aggregation: None (or ``''``/``'None'``), MAX, MIN, COUNT, SUM, AVG — any case.

        Returns:
            A new query with the answer set.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadAggregationError: unknown aggregation.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Ends"], [["2011"]])
            >>> t.query().set_answer("ends", "sum").answer.aggregation
            'SUM'
            >>> t.query().set_answer("Ends", "total")
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadAggregationError: Unknown aggregation 'total'. Allowed aggregations: None, MAX, MIN, COUNT, SUM, AVG, COUNT DISTINCT (case-insensitive; None or '' for no aggregation).
        """
        col = self.resolve_column(column)
        agg = normalize_aggregation(aggregation)
        group = self.group
        if group is not None and agg is None and col not in (group.column, group.count):
            raise GroupError(
                f"The rows are grouped by {group.column.header!r}, so {col.header!r} has many cells in each group: "
                f"give an aggregation (COUNT, SUM, AVG, MAX, MIN or COUNT DISTINCT), or answer "
                f"{group.column.header!r} or {group.count.header!r}."
            )
        return TableQuery(self.table, self.steps + (AnswerStep(col, agg),))

    def add_order(self, column: str | int, direction: str = "DESC", limit: int | str = 1) -> TableQuery:
        """Keep only the ``limit`` rows with the largest (DESC) or smallest (ASC) value of ``column``.

        It applies after all the query's conditions (whenever they were added):
        "which season had the most episodes" is ``add_order(Episodes, DESC)``
        then ``set_answer(Season)``. A numeric column orders by number (cells
        that are not numbers are left out); a text column by its text. Ties keep
        the rows in table order. A later ``add_order`` replaces an earlier one.

        Args:
            column: a header as an LLM wrote it or a 0-based column index.
            direction: DESC or ASC (MAX and MIN are read as DESC and ASC), any case.
            limit: how many rows to keep, 1 to 1000 (default 1).

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadValueError: bad direction or limit.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Season", "Episodes"], [["Season 1", "26"], ["Season 2", "52"], ["Season 3", "—"]])
            >>> q = t.query().add_order("episodes", "max").set_answer("Season")
            >>> q.actions(), t.executor().execute(q)[0].value
            (['add_order(Episodes, DESC, 1)', 'set_answer(Season, None)'], 'Season 2')
            >>> t.query().add_order("Episodes", "DESC", 0)
            Traceback (most recent call last):
            ...
            pyql_sql.errors.BadValueError: The limit of add_order must be a whole number from 1 to 1000, not 0.
        """
        col = self.resolve_column(column)
        step = OrderStep(col, normalize_direction(direction), _order_limit(limit))
        return TableQuery(self.table, self.steps + (step,))

    def add_row(self, position: int | str) -> TableQuery:
        """Keep only the n-th row of those the query keeps, in the table's order: 1 the first, -1 the last.

        With an ``add_order`` the rows are counted in its order instead (``add_order(Points, DESC)`` then
        ``add_row(2)`` is the second highest). A later ``add_row`` replaces an earlier one.

        Args:
            position: a whole number other than 0, or an ordinal word (``first``, ``second``, ``last``).

        Raises:
            PositionError: not a position, or past the table's end.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Name", "Team"], [["Ann", "A"], ["Bob", "B"], ["Cid", "A"]])
            >>> q = t.query().add_condition("Team", "=", "A").add_row("last").set_answer("Name")
            >>> q.actions(), [a.value for a in t.executor().execute(q)]
            (['add_condition(Team, =, A)', 'add_row(-1)', 'set_answer(Name, None)'], ['Cid'])
        """
        return TableQuery(self.table, self.steps + (PositionStep(normalize_position(position, self.table.row_count)),))

    def add_adjacent(self, column: str | int | Column, value: str | int | float, direction: str = "after") -> TableQuery:
        """Keep the rows right after (or before) a row where ``column = value``, in the table's order.

        "what team comes before Hank Stein" is ``add_adjacent(Player, Hank Stein, before)`` then
        ``set_answer(Team)``. The value is matched as ``add_condition``'s ``=`` matches it.

        Args:
            column: the column of the row looked from.
            value: its value in that row.
            direction: ``after`` (the next row) or ``before`` (the previous row).

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadValueError: a bad value or direction.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Player", "Team"], [["Ann", "Knicks"], ["Hank Stein", "Hawks"]])
            >>> q = t.query().add_adjacent("Player", "hank stein", "before").set_answer("Team")
            >>> q.actions(), [a.value for a in t.executor().execute(q)]
            (['add_adjacent(Player, hank stein, before)', 'set_answer(Team, None)'], ['Knicks'])
        """
        match = self.add_condition(column, "=", value).steps[-1]
        assert isinstance(match, ConditionStep)
        return TableQuery(self.table, self.steps + (AdjacentStep(match, normalize_row_direction(direction)),))

    def add_part(self, column: str | int | Column, part: str, separator: str = "") -> TableQuery:
        """A new column holding one part of each cell of ``column``: ``year``, ``month``, ``day``, ``date``,
        ``number``, the ``seconds`` a time writes (``4:25``: 265), or the text ``before``/``after`` a separator
        (:mod:`pyql_sql.parts`).

        The new column is named after its source and part (``Date year``) and later steps name it so:
        ``add_part(Date, year)`` then ``add_condition(Date year, =, 2004)``. A cell without the part has none (NULL).

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadValueError: an unknown part, or that part of that column already derived.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Date", "Score"], [["June 5, 2004", "2–1"], ["May 1, 2005", "0–3"]])
            >>> q = t.query().add_part("Date", "year").add_condition("Date year", "=", 2004).set_answer("Score")
            >>> q.actions(), [a.value for a in t.executor().execute(q)]
            (['add_part(Date, year)', 'add_condition(Date year, =, 2004)', 'set_answer(Score, None)'], ['2–1'])
            >>> games = Table.from_rows(["Opponent"], [["at Ajax"], ["vs. PSV"]])
            >>> [a.value for a in games.executor().execute(games.query().add_part("Opponent", "after", " ").set_answer("Opponent after"))]
            ['Ajax', 'PSV']
        """
        source = self.resolve_column(column)
        name = normalize_part(part)
        sep = (separator.strip() or (" " if separator else "")) if isinstance(separator, str) else ""  # a space splits at the first space
        if name not in ("before", "after"):
            sep = ""
        header = self._new_header(f"{source.header} {name}")
        typ = "real" if name in ("year", "day", "number", "seconds") else "text"
        derived = DerivedColumn(self._next_index(), header, typ, "", None, kind="part", sources=(source,), part=name, separator=sep)
        return TableQuery(self.table, self.steps + (PartStep(derived),))

    def add_calculation(self, first: str | int | Column, op: str, second: str | int | Column) -> TableQuery:
        """A new column holding two cells of each row combined: ``first op second`` (``-``, ``+``, ``*``, ``/``).

        Named ``first op second`` (``Home - Away``); a cell that is no number gives none (NULL), and so does a division by 0.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadOperatorError: not ``-``, ``+``, ``*``, ``/`` (or a word for one: difference, sum, ratio ...).

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Team", "Won", "Lost"], [["A", "10", "4"], ["B", "7", "9"]])
            >>> q = t.query().add_calculation("Won", "-", "Lost").add_order("Won - Lost", "DESC").set_answer("Team")
            >>> [a.value for a in t.executor().execute(q)]
            ['A']
        """
        a, b = self.resolve_column(first), self.resolve_column(second)
        op_ = normalize_arithmetic(op)
        header = self._new_header(f"{a.header} {op_} {b.header}")
        derived = DerivedColumn(self._next_index(), header, "real", "", None, kind="calculation", sources=(a, b), op=op_)
        return TableQuery(self.table, self.steps + (CalculationStep(derived),))

    def add_group(self, column: str | int | Column) -> TableQuery:
        """Group the rows kept by the value of ``column`` (case and spaces aside); each group gets its row count, ``Count``.

        After it, the query's rows are the groups: ``add_condition(Count, >, 2)`` keeps groups,
        ``add_order(Count, DESC)`` orders them (another numeric column orders them by its sum),
        ``set_answer(column)`` lists the groups' values, ``set_answer(Count)`` their counts, and any
        other column needs an aggregation (one value per group). "which team won the most titles" is
        ``add_group(Winner)``, ``add_order(Count, DESC)``, ``set_answer(Winner)``.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            GroupError: the rows are grouped already.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Winner"], [["Ajax"], ["PSV"], ["Ajax"]])
            >>> q = t.query().add_group("Winner").add_order("Count", "DESC").set_answer("Winner")
            >>> [a.value for a in t.executor().execute(q)]
            ['Ajax']
        """
        col = self.resolve_column(column)
        if self.group is not None:
            raise GroupError(f"The rows are already grouped by {self.group.column.header!r}; undo that step to group by another column.")
        count = DerivedColumn(self._next_index(), self._new_header("Count"), "real", "", None, kind="count", sources=(col,))
        return TableQuery(self.table, self.steps + (GroupStep(col, count),))

    def set_calculation(
        self, column: str | int | Column, op: str, key: str | int | Column, first: str | int | float, second: str | int | float
    ) -> TableQuery:
        """The answer: ``column``'s value in the row where ``key = first``, ``op`` its value where ``key = second``.

        "how many more gold medals did Japan win than China" is ``set_calculation(Gold, -, Nation, Japan, China)``;
        ``+`` gives the sum, ``/`` the ratio. The rows are matched as ``add_condition``'s ``=`` matches them, among
        the rows the query's conditions keep (the first row of each when several match). Replaces the answer.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadOperatorError: not ``-``, ``+``, ``*``, ``/``.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Nation", "Gold"], [["Japan", "5"], ["China", "2"]])
            >>> [a.value for a in t.executor().execute(t.query().set_calculation("Gold", "-", "Nation", "japan", "china"))]
            [3.0]
        """
        col, op_ = self.resolve_column(column), normalize_arithmetic(op)
        a, b = self._key_condition(key, first), self._key_condition(key, second)
        return TableQuery(self.table, self.steps + (RowsCalculationStep(col, op_, a, b),))

    def compare_rows(
        self, column: str | int | Column, key: str | int | Column, first: str | int | float, second: str | int | float,
        direction: str = "DESC", words: tuple[str, str] | None = None,
    ) -> TableQuery:
        """The answer: which of two rows (``key = first``, ``key = second``) has the larger (DESC) or smaller (ASC) ``column``.

        "who had more goals, Ross Jenkins or Nigel Gibbs" is ``compare_rows(Goals, Name, Ross Jenkins, Nigel Gibbs, DESC)``;
        the answer is the key's cell of that row. With ``words`` the answer is ``words[0]`` when the first row wins
        and ``words[1]`` when the second does: "did Taiwan win more or less bronze than Singapore" is
        ``compare_rows(Bronze, Nation, Taiwan, Singapore, DESC, more, less)``; when the two rows' values are equal
        (or either has none) there is no answer, since neither word is true. Replaces the answer.

        Raises:
            UnknownColumnError, AmbiguousColumnError: bad column.
            BadValueError: a bad direction, or ``words`` that are not two words.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Name", "Goals"], [["Ross Jenkins", "142"], ["Nigel Gibbs", "5"]])
            >>> [a.value for a in t.executor().execute(t.query().compare_rows("Goals", "Name", "nigel gibbs", "ross jenkins"))]
            ['Ross Jenkins']
            >>> [a.value for a in t.executor().execute(t.query().compare_rows("Goals", "Name", "nigel gibbs", "ross jenkins",
            ...                                                              "DESC", ("more", "less")))]
            ['less']
        """
        col, descending = self.resolve_column(column), normalize_direction(direction)
        a, b = self._key_condition(key, first), self._key_condition(key, second)
        return TableQuery(self.table, self.steps + (CompareStep(col, a, b, descending, _answer_words(words)),))

    def _key_condition(self, key: str | int | Column, value: str | int | float) -> ConditionStep:
        step = self.add_condition(key, "=", value).steps[-1]
        assert isinstance(step, ConditionStep)
        return step

    def _next_index(self) -> int:
        return len(self.table.columns) + len(self.derived_columns)

    def _new_header(self, wanted: str) -> str:
        """A header for a new column: ``wanted``, or with a number after it when a column already has that name."""
        taken = {header_keys(c.header)[2] for c in self.columns}
        header, n = wanted, 2
        while header_keys(header)[2] in taken:
            header, n = f"{wanted} {n}", n + 1
        return header

    # ------------------------------------------------------------- columns
    @property
    def derived_columns(self) -> tuple[DerivedColumn, ...]:
        """The columns the query's steps derived (parts, calculations, a group's ``Count``), oldest first.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["Date"], [["2004"]]).query().add_part("Date", "year")
            >>> [c.header for c in q.derived_columns]
            ['Date year']
        """
        out: list[DerivedColumn] = []
        for s in self.steps:
            if isinstance(s, (PartStep, CalculationStep)):
                out.append(s.column)
            elif isinstance(s, GroupStep):
                out.append(s.count)
        return tuple(out)

    @property
    def columns(self) -> tuple[Column, ...]:
        """The table's columns, then the derived ones.

        Example:
            >>> from pyql_sql import Table
            >>> [c.header for c in Table.from_rows(["Team"], [["A"]]).query().add_group("Team").columns]
            ['Team', 'Count']
        """
        return (*self.table.columns, *self.derived_columns)

    def resolve_column(self, name: str | int | Column) -> Column:
        """A column of the table (:meth:`TableData.resolve_column`) or one a step derived, as an LLM names it.

        Raises:
            UnknownColumnError: no column matches (the derived columns listed too).
            AmbiguousColumnError: several match.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["Date"], [["June 2004"]]).query().add_part("Date", "month")
            >>> q.resolve_column("date MONTH").header, q.resolve_column(1).header, q.resolve_column("date").header
            ('Date month', 'Date month', 'Date')
        """
        derived = self.derived_columns
        if isinstance(name, DerivedColumn) and name in derived:
            return name
        if isinstance(name, int) and not isinstance(name, bool) and 0 <= name - len(self.table.columns) < len(derived):
            return derived[name - len(self.table.columns)]
        try:
            return self.table.resolve_column(name)
        except UnknownColumnError as exc:
            if not derived or not isinstance(name, str):
                raise
            for level in range(3):
                hits = [c for c in derived if header_keys(c.header)[level] == header_keys(name)[level]]
                if len(hits) == 1:
                    return hits[0]
                if len(hits) > 1:
                    raise AmbiguousColumnError(name, candidates=[(c.index, c.header) for c in hits]) from None
            raise UnknownColumnError(name, suggestions=exc.suggestions, headers=[c.header for c in self.columns]) from None

    def undo(self) -> TableQuery:
        """Drop the last step.

        Raises:
            SQLQueryError: there is no step to undo.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], []).query().undo()
            Traceback (most recent call last):
            ...
            pyql_sql.errors.SQLQueryError: Nothing to undo: the query has no steps yet.
        """
        if not self.steps:
            raise SQLQueryError("Nothing to undo: the query has no steps yet.")
        return TableQuery(self.table, self.steps[:-1])

    # ------------------------------------------------------------- accessors
    @property
    def conditions(self) -> tuple[ConditionStep, ...]:
        """The condition steps, in order.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a"], [["1"]]).query().add_condition("a", ">", "0").set_answer("a")
            >>> [(c.column.header, c.op, c.value, c.number) for c in q.conditions]
            [('a', '>', '0', 0.0)]
        """
        return tuple(s for s in self.steps if isinstance(s, ConditionStep))

    @property
    def order(self) -> OrderStep | None:
        """The last ``add_order`` step, or None.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a"], [["1"]]).query()
            >>> q.order is None, q.add_order("a", "ASC", 2).order.action()
            (True, 'add_order(a, ASC, 2)')
        """
        for s in reversed(self.steps):
            if isinstance(s, OrderStep):
                return s
        return None

    @property
    def result(self) -> ResultStep | None:
        """The step that says what the query returns: the last ``set_answer``, ``set_calculation`` or ``compare_rows``.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a", "b"], [["1", "2"]]).query().set_answer("a")
            >>> q.result.action(), q.compare_rows("b", "a", "1", "3").result.action()
            ('set_answer(a, None)', 'compare_rows(b, a, 1, 3, DESC)')
        """
        for s in reversed(self.steps):
            if isinstance(s, (AnswerStep, RowsCalculationStep, CompareStep)):
                return s
        return None

    @property
    def answer(self) -> AnswerStep | None:
        """The answer when a ``set_answer`` says it (the last of the answer steps is one), else None.

        Example:
            >>> from pyql_sql import Table
            >>> q = Table.from_rows(["a", "b"], [["1", "2"]]).query()
            >>> q.answer is None, q.set_answer("a").set_answer("b", "max").answer.action()
            (True, 'set_answer(b, MAX)')
        """
        result = self.result
        return result if isinstance(result, AnswerStep) else None

    @property
    def position(self) -> PositionStep | None:
        """The last ``add_row`` step, or None.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], [["1"], ["2"]]).query().add_row(2).add_row("last").position
            PositionStep(position=-1)
        """
        for s in reversed(self.steps):
            if isinstance(s, PositionStep):
                return s
        return None

    @property
    def adjacents(self) -> tuple[AdjacentStep, ...]:
        """The ``add_adjacent`` steps, in order.

        Example:
            >>> from pyql_sql import Table
            >>> [s.after for s in Table.from_rows(["a"], [["1"]]).query().add_adjacent("a", "1", "before").adjacents]
            [False]
        """
        return tuple(s for s in self.steps if isinstance(s, AdjacentStep))

    @property
    def group(self) -> GroupStep | None:
        """The ``add_group`` step, or None.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], [["1"]]).query().add_group("a").group.action()
            'add_group(a)'
        """
        return next((s for s in self.steps if isinstance(s, GroupStep)), None)

    @property
    def variables(self) -> tuple[()]:
        """The query's variables: none (a table query names columns, not variables).

        Part of the step kernel's query protocol (:class:`pyql.environment.StepQuery`).

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], []).query().variables
            ()
        """
        return ()

    def text(self) -> str:
        """The query's text: :meth:`display_sql` in the SQLite dialect.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["a"], [], name="T").query().set_answer("a").text()
            'SELECT "a" FROM "T"'
        """
        return self.display_sql("sqlite")

    def actions(self) -> list[str]:
        """The steps in the paper's action syntax.

        Example:
            >>> from pyql_sql import Table
            >>> Table.from_rows(["Opponent"], []).query().add_condition("opponent", "=", "Ajax").actions()
            ['add_condition(Opponent, =, Ajax)']
        """
        return [s.action() for s in self.steps]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableQuery):
            return NotImplemented
        return self.table is other.table and self.steps == other.steps

    def __hash__(self) -> int:
        return hash((id(self.table), self.steps))

    def __repr__(self) -> str:
        return f"TableQuery(table={self.table.name!r}, steps={self.actions()!r})"

    # ------------------------------------------------------------- rendering
    def expression(self, *, bind: str = "literal") -> tuple[exp.Select, list[object]]:
        """The query as a sqlglot expression over the table's physical columns.

        Args:
            bind: ``"literal"`` to inline values as SQL literals, ``"param"`` to
                use placeholders (the values are returned, in placeholder order).

        Returns:
            ``(expression, params)``; ``params`` is empty for ``"literal"``.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Gold", "Nation"], [["0", "Iran"]])
            >>> e, params = t.query().add_condition("Gold", "=", 0).set_answer("Nation").expression(bind="param")
            >>> type(e).__name__, params
            ('Select', [0])
        """
        return compile_query(self, bind=bind)

    def sql(self, dialect: str = "sqlite", params: bool = False) -> str:
        """Render the executable SQL in any sqlglot dialect.

        Args:
            dialect: a sqlglot dialect name (sqlite, duckdb, postgres, spark, trino ...).
            params: True to render placeholders instead of literal values
                (use :meth:`sql_with_params` to get the values too).

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Silver", "Bronze"], [["0", "4"]])
            >>> t.query().add_condition("Silver", "=", 0).set_answer("Bronze", "MAX").sql("postgres", params=True)
            'SELECT MAX("n1") FROM "t" WHERE "n0" = %s'
        """
        expression, _ = self.expression(bind="param" if params else "literal")
        return expression.sql(dialect=dialect)

    def sql_with_params(self) -> tuple[str, list[object]]:
        """SQLite text with ``?`` placeholders, and the values to bind, in order.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["Class", "ERP W"], [["D", "200"]])
            >>> t.query().add_condition("Class", "=", "d").add_condition("ERP W", "<", "232").set_answer("Class").sql_with_params()
            ('SELECT "c0" FROM "t" WHERE LOWER(TRIM("c0")) = LOWER(?) AND "n1" < ?', ['d', 232])
        """
        expression, values = self.expression(bind="param")
        return expression.sql(dialect="sqlite"), values

    def display_sql(self, dialect: str = "sqlite") -> str:
        """A readable SQL with the original headers and table name (not executed).

        Text equality is case-insensitive when executed; the display does not show that.

        Example:
            >>> from pyql_sql import Table
            >>> t = Table.from_rows(["W-L-T", "Average"], [["5-1", "7,804"]], name="Football Team Performance")
            >>> print(t.query().add_condition("W-L-T", "=", "5-1").set_answer("Average").display_sql())
            SELECT "Average" FROM "Football Team Performance" WHERE "W-L-T" = '5-1'
        """
        return logical_expression(self).sql(dialect=dialect)
