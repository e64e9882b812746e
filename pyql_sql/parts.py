"""Parts of a cell: the year, month or day of a date written as text, its leading number, the text around a separator.

WikiTableQuestions and dbbench tables write dates as text (``June 5, 2004``,
``5 June 2004``, ``2004-06-05``, ``2-3-1957``, ``1998–99``, ``March 11``),
numbers inside text (``18 (59)``, ``≈ 600 mm``, ``$1,200``) and pairs in one
cell (``2–1``, ``12-4``). :func:`cell_part` reads one part of one cell; it is
what ``add_part`` (:mod:`pyql_sql.query`) derives a column from. The same
function runs inside SQLite: :func:`install` registers it on a connection as
``pyql_part(cell, part, separator)`` with ``pyql_number(text)`` (the number a
text is, :func:`pyql_sql.numbers.parse_number`) and ``pyql_duration(text)``
(the seconds of a time such as ``1:59.8``, :func:`pyql_sql.numbers.parse_duration`,
which orders a column of times) and ``pyql_words(text)`` (a text's words as the
``contains`` operator compares them, :func:`cell_words`), all deterministic, so
a part costs one call a row: one scan.

The parts (:data:`PARTS`):

==========  ==================================================================
``year``    the first year (1000–2199) the cell writes: ``1998`` of ``1998–99``
``month``   the month's English name: ``June`` of ``June 5, 2004``, ``5/6/2004``
``day``     the day of the month: ``5``
``date``    the date as ``yyyy-mm-dd``, ``xx`` for a part the cell does not
            write (``xxxx-03-11`` for ``March 11``): text that sorts by date
``number``  the first number the cell writes: ``18`` of ``18 (59)``, ``600``
            of ``≈ 600 mm``, ``1,200`` of ``$1,200``
``seconds`` the duration a time writes, in seconds: ``119.8`` of ``1:59.8``, ``3723``
            of ``1:02:03`` (what compares *over five minutes* with a column of times)
``before``  the text before the first separator (``2`` of ``2–1``; any dash
            matches any dash)
``after``   the text after it (``1``)
==========  ==================================================================

A cell without the part gives None (NULL in SQL): ``year`` of ``Rio``.

Example:
    >>> [cell_part("June 5, 2004", p) for p in ("year", "month", "day", "date")]
    ['2004', 'June', '5', '2004-06-05']
    >>> cell_part("18 (59)", "number"), cell_part("2–1", "before", "-"), cell_part("2–1", "after"), cell_part("Rio", "year")
    ('18', '2', '1', None)
"""

from __future__ import annotations

import calendar
import re
import sqlite3
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from grammars.vocabulary import CELL_PARTS

from .errors import BadValueError
from .numbers import parse_duration, parse_number

__all__ = ["PARTS", "DEFAULT_SEPARATOR", "CellDate", "cell_date", "cell_part", "cell_words", "install", "normalize_part"]

#: The parts a cell can be read for, in the order the documentation lists them (the vocabulary's).
PARTS: tuple[str, ...] = CELL_PARTS

#: The separator of ``before``/``after`` when none is given: a dash (any dash).
DEFAULT_SEPARATOR = "-"

_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH_NAME = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR_RE = re.compile(r"(?<!\d)(1\d{3}|20\d{2}|21\d{2})(?!\d)")
_ISO_RE = re.compile(r"(?<!\d)(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?!\d)")
_NUMERIC_RE = re.compile(r"(?<!\d)(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4})(?!\d)")
_DAY_MONTH_RE = re.compile(rf"(?<![\w])(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAME}(?![a-z])", re.IGNORECASE)
_MONTH_DAY_RE = re.compile(rf"(?<![\w]){_MONTH_NAME}(?:\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?!\d))?(?![a-z])", re.IGNORECASE)
_NUMBER_RE = re.compile(r"(?<![\w.])(?P<sign>[-\u2212])?(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")


@dataclass(frozen=True)
class CellDate:
    """The date a cell writes, each part None where the cell does not write it.

    Example:
        >>> cell_date("March 11")
        CellDate(year=None, month=3, day=11)
    """

    year: int | None
    month: int | None
    day: int | None

    def iso(self) -> str:
        """``yyyy-mm-dd``, ``xx`` for the parts not written (WTQ's form of a date).

        Example:
            >>> CellDate(2004, 6, None).iso(), CellDate(None, 3, 11).iso()
            ('2004-06-xx', 'xxxx-03-11')
        """
        year = f"{self.year:04d}" if self.year is not None else "xxxx"
        month = f"{self.month:02d}" if self.month is not None else "xx"
        day = f"{self.day:02d}" if self.day is not None else "xx"
        return f"{year}-{month}-{day}"


def _valid(day: int | None, month: int | None) -> bool:
    return (month is None or 1 <= month <= 12) and (day is None or 1 <= day <= 31)


def _numeric_date(m: re.Match[str]) -> CellDate | None:
    """``5/6/2004`` (month first with a slash, as US tables write it), ``2-3-1957`` (day first with a dash or dot)."""
    a, b, year = int(m.group("a")), int(m.group("b")), int(m.group("year"))
    month, day = (a, b) if m.group("sep") == "/" else (b, a)
    if month > 12 and day <= 12:
        month, day = day, month
    return CellDate(year, month, day) if _valid(day, month) else None


def cell_date(text: object) -> CellDate | None:
    """The date a cell writes (the first one), at the precision it writes it; None when it writes none.

    Example:
        >>> cell_date("5 June 2004"), cell_date("2004-06-05") == cell_date("June 5th, 2004")
        (CellDate(year=2004, month=6, day=5), True)
        >>> cell_date("2-3-1957"), cell_date("1998–99"), cell_date("Rio")
        (CellDate(year=1957, month=3, day=2), CellDate(year=1998, month=None, day=None), None)
    """
    if not isinstance(text, str) or not text.strip():
        return None
    m = _ISO_RE.search(text)
    if m is not None and _valid(int(m.group("day")), int(m.group("month"))):
        return CellDate(int(m.group("year")), int(m.group("month")), int(m.group("day")))
    m = _NUMERIC_RE.search(text)
    if m is not None and (found := _numeric_date(m)) is not None:
        return found
    year_match = _YEAR_RE.search(text)
    year = int(year_match.group(1)) if year_match else None
    for pattern in (_DAY_MONTH_RE, _MONTH_DAY_RE):
        m = pattern.search(text)
        if m is not None:
            month = _MONTHS[m.group("month").lower().rstrip(".")]
            day = int(m.group("day")) if m.group("day") else None
            if _valid(day, month) and not (day is None and year is None and len(m.group("month")) < 4):
                return CellDate(year, month, day)  # a short month name alone ("may", "mar") is rarely a date
    return CellDate(year, None, None) if year is not None else None


def _split(text: str, separator: str) -> tuple[str, str] | None:
    """The text before and after the first separator (a dash matches any dash), or None without one."""
    sep = separator if separator != "" else DEFAULT_SEPARATOR
    if sep.strip() and all(ch in _DASHES for ch in sep.strip()):
        parts = re.split(f"\\s*[{_DASHES}]\\s*", text, maxsplit=1)
    else:
        parts = text.split(sep, 1)
    if len(parts) != 2:
        return None
    return parts[0].strip(), parts[1].strip()


def _number(text: str) -> str | None:
    m = _NUMBER_RE.search(text)
    if m is None:
        return None
    return ("-" if m.group("sign") and m.start() == len(text) - len(text.lstrip()) else "") + m.group("digits")


def _seconds(text: str) -> str | None:
    """The seconds of the time a cell writes (``4:25`` → ``265``), as text; None when it writes no time."""
    seconds = parse_duration(text)
    if seconds is None:
        return None
    return str(int(seconds)) if seconds == int(seconds) else str(seconds)


def cell_part(cell: object, part: str, separator: str = "") -> str | None:
    """One part of a cell (see the module's table), as text; None when the cell has no such part.

    Args:
        cell: the cell as the table shows it.
        part: one of :data:`PARTS`.
        separator: the separator of ``before``/``after`` (default: a dash).

    Example:
        >>> cell_part("October 31, 2004 (Sunday)", "month"), cell_part("≈ 600 mm", "number"), cell_part("-3 pts", "number")
        ('October', '600', '-3')
        >>> cell_part("Lyon (France)", "before", "("), cell_part("Season 2", "after", ":")
        ('Lyon', None)
        >>> [cell_part(c, "seconds") for c in ("1:59.8", "1:02:03", "4:25", "Rio", "58.5")]
        ['119.8', '3723', '265', None, None]
    """
    if not isinstance(cell, str):
        cell = None if cell is None else str(cell)
    if cell is None or not cell.strip():
        return None
    if part in ("before", "after"):
        halves = _split(cell, separator)
        if halves is None:
            return None
        value = halves[0] if part == "before" else halves[1]
        return value or None
    if part == "number":
        return _number(cell)
    if part == "seconds":
        return _seconds(cell)
    date = cell_date(cell)
    if date is None:
        return None
    if part == "date":
        return date.iso()
    found = {"year": date.year, "month": date.month, "day": date.day}[part]
    if found is None:
        return None
    return calendar.month_name[found] if part == "month" else str(found)


def normalize_part(part: object) -> str:
    """Check a part's name (any case; ``months``/``years`` too).

    Raises:
        BadValueError: not one of :data:`PARTS`.

    Example:
        >>> normalize_part(" Year "), normalize_part("months"), normalize_part("second")
        ('year', 'month', 'seconds')
        >>> normalize_part("week")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.BadValueError: Unknown part 'week'. Allowed: year, month, day, date, number, seconds, before, after.
    """
    key = part.strip().lower() if isinstance(part, str) else ""
    key = key[:-1] if key.endswith("s") and key[:-1] in PARTS else (key + "s" if key + "s" in PARTS else key)
    if key not in PARTS:
        raise BadValueError(f"Unknown part {part!r}. Allowed: {', '.join(PARTS)}.")
    return key


@lru_cache(maxsize=1 << 16)
def _cached_part(cell: str, part: str, separator: str) -> str | None:
    return cell_part(cell, part, separator)


def _sql_part(cell: object, part: object, separator: object) -> str | None:
    """``pyql_part``: a cell's part (cells repeat down a column: the parts of the last 65,536 are kept)."""
    if cell is None:
        return None
    try:
        return _cached_part(str(cell), str(part), "" if separator is None else str(separator))
    except Exception:  # noqa: BLE001 - a SQL function must not raise into SQLite
        return None


@lru_cache(maxsize=1 << 16)
def _cached_number(text: str) -> float | None:
    return parse_number(text)


def _sql_number(text: object) -> float | None:
    if isinstance(text, str):
        return _cached_number(text)
    return parse_number(text) if isinstance(text, (int, float)) else None


@lru_cache(maxsize=1 << 16)
def _cached_duration(text: str) -> float | None:
    return parse_duration(text)


def _sql_duration(text: object) -> float | None:
    return _cached_duration(text) if isinstance(text, str) else None


@lru_cache(maxsize=1 << 16)
def cell_words(text: str) -> str:
    """A text's words as ``contains`` compares them: lower case, accents dropped, every run of characters that are
    not letters or digits one space, with a space at each end (so a search for `` braves `` finds whole words only).

    Punctuation and symbols separate words (``@ Atlanta Braves``, ``Ostrava, Czech Republic``, ``Joji Kato\\n Japan``);
    ``%`` and ``_`` are no wildcards, only separators. A text without a letter or digit gives a single space.

    Example:
        >>> cell_words("@ Atlanta Braves"), cell_words("Ostrava, Czech Republic"), cell_words("Joji Kato\\n JAPAN")
        (' atlanta braves ', ' ostrava czech republic ', ' joji kato japan ')
        >>> cell_words("Montréal Canadiens"), cell_words("50%_off"), cell_words("—")
        (' montreal canadiens ', ' 50 off ', ' ')
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    words = "".join(ch if ch.isalnum() else " " for ch in bare).split()
    return " " + " ".join(words) + " " if words else " "


def _sql_words(text: object) -> str | None:
    """``pyql_words``: :func:`cell_words` of a cell (NULL stays NULL; a number is read as its text)."""
    if text is None or isinstance(text, bytes):
        return None
    try:
        return cell_words(text if isinstance(text, str) else str(text))
    except Exception:  # noqa: BLE001 - a SQL function must not raise into SQLite
        return None


def install(connection: sqlite3.Connection) -> None:
    """Register ``pyql_part(cell, part, separator)``, ``pyql_number(text)``, ``pyql_duration(text)`` and
    ``pyql_words(text)`` on a connection (deterministic).

    Example:
        >>> import sqlite3
        >>> conn = sqlite3.connect(":memory:"); install(conn)
        >>> conn.execute("SELECT pyql_part('5 June 2004', 'year', ''), pyql_number(pyql_part('18 (59)', 'number', ''))").fetchone()
        ('2004', 18.0)
        >>> conn.execute("SELECT pyql_duration('1:59.8'), pyql_duration('Rio')").fetchone()
        (119.8, None)
        >>> conn.execute("SELECT INSTR(pyql_words('@ Atlanta Braves'), pyql_words('BRAVES')) > 0").fetchone()
        (1,)
    """
    connection.create_function("pyql_part", 3, _sql_part, deterministic=True)
    connection.create_function("pyql_number", 1, _sql_number, deterministic=True)
    connection.create_function("pyql_duration", 1, _sql_duration, deterministic=True)
    connection.create_function("pyql_words", 1, _sql_words, deterministic=True)
