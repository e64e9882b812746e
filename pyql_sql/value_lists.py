"""A change question's values written out as a list: the forms that say which column each value goes to.

dbbench's change items often spell the row out instead of describing it:

* SQL-like: ``Insert into Politicians (Name, Attended) values ('Kamala Harris', '1989')``;
* a tuple of as many quoted values as the table has columns, in column order:
  ``Add ('2019', 'Aoharu Ride', 'Kou Mabuchi') to the table``, or the same
  values listed without parentheses after *values* (*row*, *record*):
  ``by inserting the values '8', 'MF', 'Andrés Iniesta'``;
* ``Column: value`` items: ``Name: HMAS Newcastle, Type: Frigate, Class: Adelaide``;
* ``'value' for Column`` items: ``'Theo' for School, 'PhD' for Degree``;
* ``Column as value`` (or ``is``) items: ``Senator as Mitt Romney, Party as Republican``;
* a list of columns, then as many values: ``values for Party, Votes, and Seats including Democratic Party,
  150000, and 10``.

:func:`listed_pairs` reads them into ``(column index, value)`` pairs, each a
:class:`~pyql.environment.grounding.Grounded` of kind ``quoted`` whose span
is the value's in the question; :func:`pyql_sql.pairing.pair_values` takes them
first and pairs the rest of the question by its other rules. A list whose
columns are not all the table's, or whose lengths differ, gives nothing.

Example:
    >>> from pyql_sql.table import Table
    >>> t = Table.from_rows(["Name", "Attended"], [["Joe Biden", "1965"]])
    >>> q = "Insert into Politicians (Name, Attended) values ('Kamala Harris', '1989')"
    >>> [(t.columns[c].header, v.value) for c, v in listed_pairs(t, q)]
    [('Name', 'Kamala Harris'), ('Attended', '1989')]
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pyql.environment.grounding import Grounded
from pyql.errors import PyQLError

from .table import Column, Table

__all__ = ["listed_pairs", "split_list"]

_QUOTES = "'\"`‘’“”"
_SQL_LIKE = re.compile(r"\((?P<cols>[^()]+)\)\s*values?\s*\(", re.IGNORECASE)
_VALUE = r"(?P<val>'[^']*'|\"[^\"]*\"|[^,;'\"][^,;]*?)"
_COLON_ITEM = re.compile(r"(?P<col>[^\s:,;][^:,;]{0,40}?)\s*:\s+" + _VALUE + r"(?=\s*(?:,|;|\band\b|\.\s|\.$|$))", re.IGNORECASE)
_FOR_ITEM = re.compile(
    r"(?P<q>['\"‘“])(?P<val>[^'\"‘’“”]+)['\"’”]\s+(?:for|as)\s+(?:the\s+)?(?:column\s+)?[`'\"]?(?P<col>[^`'\",;.]+?)[`'\"]?"
    r"(?=\s*(?:,|;|\band\b|\.|\bcolumns?\b|$))",
    re.IGNORECASE,
)


def split_list(text: str, start: int = 0) -> Iterator[tuple[str, int, int]]:
    """The items of a comma-separated list (quotes and parentheses kept whole), each without its quotes: (text, start, end).

    Example:
        >>> [t for t, _, _ in split_list("'a, b', 'c' , d (e, f)")]
        ['a, b', 'c', 'd (e, f)']
    """
    depth, quote, begin = 0, "", 0
    for i, ch in enumerate(text + ","):
        if quote:
            quote = "" if ch == quote or (quote in "‘“" and ch in "’”") else quote
        elif ch in _QUOTES:
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            item = text[begin:i]
            lead = len(item) - len(item.lstrip())
            raw = item.strip()
            inner = raw[1:-1] if len(raw) >= 2 and raw[0] in _QUOTES and raw[-1] in _QUOTES else raw
            offset = start + begin + lead + (1 if inner is not raw else 0)
            yield inner, offset, offset + len(inner)
            begin = i + 1


def _column(table: Table, written: str) -> Column | None:
    try:
        return table.resolve_column(written.strip().strip(_QUOTES).strip())
    except PyQLError:
        return None


def _value(text: str, start: int, end: int) -> Grounded:
    return Grounded("quoted", text, start, end, text)


def _closing(question: str, start: int) -> int:
    """The index of the parenthesis that closes the one before ``start`` (quotes respected), or -1."""
    depth, quote = 1, ""
    for i in range(start, len(question)):
        ch = question[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _sql_like(table: Table, question: str) -> list[tuple[int, Grounded]]:
    m = _SQL_LIKE.search(question)
    if m is None:
        return []
    close = _closing(question, m.end())
    if close < 0:
        return []
    columns = [_column(table, c) for c, _, _ in split_list(m.group("cols"))]
    values = list(split_list(question[m.end() : close], m.end()))
    if len(columns) != len(values) or any(c is None for c in columns):
        return []
    return [(c.index, _value(*v)) for c, v in zip(columns, values) if c is not None]


def _tuple(table: Table, question: str) -> list[tuple[int, Grounded]]:
    for m in re.finditer(r"\(", question):
        close = _closing(question, m.end())
        inside = question[m.end() : close] if close > 0 else ""
        values = list(split_list(inside, m.end()))
        if len(values) == len(table.columns) >= 2 and inside.count("'") + inside.count('"') >= 2 * len(values):
            return [(col.index, _value(*v)) for col, v in zip(table.columns, values)]
    return []


_AS_ITEM = re.compile(r"(?P<col>[^\s,;:][^,;:]{0,40}?)\s+(?:as|is|=)\s+" + _VALUE + r"(?=\s*(?:,|;|\band\b|\.\s|\.$|$))", re.IGNORECASE)
#: "the following fields: A, B and C with corresponding values: 'x', 'y', 'z'", "values for A, B, and C including x, y, and z".
_LISTS = re.compile(
    r"(?:values?|fields?|columns?|data|information)\s*(?:for|of|:|-)?\s*(?P<cols>.+?)\s*"
    r"(?:,?\s*(?:with\s+(?:the\s+)?(?:corresponding\s+)?values?(?:\s+of)?|including|as|are|being|respectively)\s*:?)\s+(?P<vals>.+?)\s*(?:\.\s*$|$)",
    re.IGNORECASE,
)


def _words_list(text: str, start: int) -> list[tuple[str, int, int]]:
    """A list written with commas and a final *and*: its items, quotes removed (an empty quoted item, ``''``, is an item).

    Example:
        >>> [t for t, _, _ in _words_list("'Osage', '1936', and ''", 0)]
        ['Osage', '1936', '']
    """
    items = []
    for item, s, e in split_list(text, start):
        lead = re.match(r"(?:and|&)\s+", item)
        if lead:
            item, s = item[lead.end():], s + lead.end()
            if len(item) >= 2 and item[0] in _QUOTES and item[-1] in _QUOTES:
                item, s = item[1:-1], s + 1
        quoted_empty = not item and 0 < s - start <= len(text) - 1 and text[s - start - 1] in _QUOTES and text[s - start] in _QUOTES
        items += [(item, s, s + len(item))] if item or quoted_empty else []
    if len(items) >= 2 and " and " in items[-1][0] and not items[-1][0][:1] in _QUOTES:
        last, s, _ = items.pop()
        left, right = last.split(" and ", 1)
        items += [(left.strip(), s, s + len(left.strip())), (right.strip(), s + len(left) + 5, s + len(left) + 5 + len(right.strip()))]
    return items


_LIST_WORD = re.compile(r"\b(?:values?|fields?|columns?|data|information)\b", re.IGNORECASE)


def _two_lists(table: Table, question: str) -> list[tuple[int, Grounded]]:
    """A list of columns, then as many values; read from each place a list can start ("Insert data on the X table
    with values for A, B ..." starts at "values", not at "data").

    Example:
        >>> t = Table.from_rows(["Party", "%", "+/–"], [["A", "1.0", "0"]])
        >>> [(t.columns[c].header, v.value) for c, v in _two_lists(t, "Insert data on the table with values for Party, %, and +/– including Left, 4.0, and 0.")]
        [('Party', 'Left'), ('%', '4.0'), ('+/–', '0')]
    """
    for start in _LIST_WORD.finditer(question):
        m = _LISTS.match(question, start.start())
        if m is None:
            continue
        columns = [_column(table, c) for c, _, _ in _words_list(m.group("cols"), m.start("cols"))]
        values = _words_list(m.group("vals"), m.start("vals"))
        if len(columns) >= 2 and len(columns) == len(values) and all(c is not None for c in columns):
            return [(c.index, _value(*v)) for c, v in zip(columns, values) if c is not None]
    return []


#: "... inserting the values '8', 'MF', 'Andrés Iniesta'": quoted values listed after a word that announces them.
_QUOTED_RUN = re.compile(
    r"\b(?:values?|data|row|record|entry|details)\b(?:\s+(?:of|are|as|being|is))?\s*:?\s*"
    r"(?P<run>'[^']*'(?:\s*,\s*(?:and\s+)?'[^']*')+(?:\s*,?\s*and\s+'[^']*')?)",
    re.IGNORECASE,
)


def _quoted_run(table: Table, question: str) -> list[tuple[int, Grounded]]:
    """As many quoted values as the table has columns, listed (no parentheses) after *values*/*row*/*record*,
    no column named among them: in column order.

    Example:
        >>> t = Table.from_rows(["No", "Pos", "Player"], [["7", "FW", "Ann"]])
        >>> [(t.columns[c].header, v.value) for c, v in _quoted_run(t, "It was recorded by inserting the values '8', 'MF', and 'Bo Li'.")]
        [('No', '8'), ('Pos', 'MF'), ('Player', 'Bo Li')]
    """
    for m in _QUOTED_RUN.finditer(question):
        values = [(v.group(1), v.start(1), v.end(1)) for v in re.finditer(r"'([^']*)'", m.group("run"))]
        if len(values) == len(table.columns) >= 3:
            offset = m.start("run")
            return [(col.index, _value(t, s + offset, e + offset)) for col, (t, s, e) in zip(table.columns, values)]
    return []


def _column_ending(table: Table, written: str) -> Column | None:
    """The column a text names at its end ("Insert Title" names Title; "and Role" names Role)."""
    words = written.split()
    for i in range(len(words)):
        col = _column(table, " ".join(words[i:]))
        if col is not None:
            return col
    return None


_LEAD = re.compile(r"^\s*(?:now|currently|also|still)\s+(?=\S)", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:in|on|of|into|from|to)\s+(?:the\s+)?[^'\"`]*\b(?:table|database)\b[^'\"`]*$", re.IGNORECASE)


def _trimmed(value: str, start: int) -> tuple[str, int]:
    """An unquoted item's value without a leading *now* and a trailing *in the ... table* (where, not what).

    Example:
        >>> _trimmed("now 7.500", 10), _trimmed("22.700 in the Nation Scores Table", 0), _trimmed("'a in the table'", 0)
        (('7.500', 14), ('22.700', 0), ("'a in the table'", 0))
    """
    if value.strip()[:1] in _QUOTES:
        return value, start
    lead = _LEAD.match(value)
    if lead is not None:
        value, start = value[lead.end() :], start + lead.end()
    return _TAIL.sub("", value), start


def _items(table: Table, question: str, pattern: re.Pattern[str]) -> list[tuple[int, Grounded]]:
    out: list[tuple[int, Grounded]] = []
    for m in pattern.finditer(question):
        col = _column_ending(table, m.group("col"))
        raw, start = _trimmed(m.group("val"), m.start("val"))
        value = raw.strip()
        if col is not None and value and col.index not in {c for c, _ in out}:
            start += len(raw) - len(raw.lstrip())
            quoted = len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES
            inner = value[1:-1] if quoted else value  # one layer of quotes: '"Dalek"' is the text "Dalek" with its quotes
            out.append((col.index, _value(inner, start + (1 if quoted else 0), start + (1 if quoted else 0) + len(inner))))
    return out if len(out) >= 2 else []


def listed_pairs(table: Table, question: str) -> list[tuple[int, Grounded]]:
    """The (column index, value) pairs a question writes out as a list (the module's forms, the first that reads).

    Example:
        >>> t = Table.from_rows(["Year", "Title", "Role"], [["2018", "A", "B"]])
        >>> [v.value for _, v in listed_pairs(t, "Add ('2019', 'Aoharu Ride', 'Kou Mabuchi') to the table.")]
        ['2019', 'Aoharu Ride', 'Kou Mabuchi']
        >>> [(t.columns[c].header, v.value) for c, v in listed_pairs(t, "Insert Title: Joker, Year: 2019, and Role: Arthur.")]
        [('Title', 'Joker'), ('Year', '2019'), ('Role', 'Arthur')]
        >>> [(t.columns[c].header, v.value) for c, v in listed_pairs(t, "Insert 'Joker' for Title, '2019' for Year.")]
        [('Title', 'Joker'), ('Year', '2019')]
        >>> [(t.columns[c].header, v.value) for c, v in listed_pairs(t, "Insert values for Year, Title, and Role as '2019', 'Joker, Part 2', and 'Arthur'.")]
        [('Year', '2019'), ('Title', 'Joker, Part 2'), ('Role', 'Arthur')]
        >>> [(t.columns[c].header, v.value) for c, v in listed_pairs(t, "Add a row with Title as Joker, Role as Arthur Fleck and Year as 2019.")]
        [('Title', 'Joker'), ('Role', 'Arthur Fleck'), ('Year', '2019')]
    """
    for read in (_sql_like, _tuple, _two_lists, _quoted_run):
        pairs = read(table, question)
        if pairs:
            return pairs
    for pattern in (_COLON_ITEM, _FOR_ITEM, _AS_ITEM):
        pairs = _items(table, question, pattern)
        if pairs:
            return pairs
    return []
