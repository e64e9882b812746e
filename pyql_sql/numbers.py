"""How table cells and condition values are read as numbers.

One rule is used everywhere (type inference, the numeric shadow columns,
condition values written by an LLM, answer comparison):

* Python ``int``/``float`` are numbers (``bool`` is not; NaN and infinities are not).
* A string is a number when, after stripping surrounding whitespace, it is an
  optional sign (``+``, ``-`` or the Unicode minus ``U+2212``), then digits —
  either plain (``1174``) or grouped by thousands with commas (``1,174``,
  ``12,500,000``) — then an optional decimal part (``.5``, ``1174.0``, ``1.``).
  No exponents, no currency or unit signs, no percent signs, no spaces inside:
  ``"£8.5m"``, ``"45%"``, ``"1 174"``, ``"1,17"`` and ``"3–1"`` are text.

A cell that starts with a duration (``1:59.8``, ``2:01.33 (WR)``, ``1:02:03``:
minutes and seconds, or hours, minutes and seconds) is text, but
:func:`parse_duration` reads it as seconds, which is how an order sorts it
(``10:02.1`` is longer than ``9:59.8``, though its first number is larger
and its text sorts first).

Example:
    >>> [parse_number(s) for s in ["1,174", "1174.0", "\u22123", "+2", "1.", ".5"]]
    [1174.0, 1174.0, -3.0, 2.0, 1.0, 0.5]
    >>> [parse_number(s) for s in ["£8.5m", "1,17", "3–1", "", "nan", True]]
    [None, None, None, None, None, None]
"""

from __future__ import annotations

import math
import re

__all__ = ["parse_number", "parse_duration", "is_empty", "mostly_numbers", "value_text", "format_number"]

_NUMBER_RE = re.compile(
    r"""
    [+\-\u2212]?                      # sign, ASCII or Unicode minus
    (?:\d{1,3}(?:,\d{3})+|\d+)?       # integer part, maybe grouped by thousands
    (?:\.\d*)?                        # decimal part
    """,
    re.VERBOSE | re.ASCII,
)


def parse_number(value: object) -> float | None:
    """Return ``value`` as a float if it is a number by the module's rule, else None.

    Args:
        value: a cell or a condition value (str, int, float, or anything else).

    Returns:
        The number as a float, or None when ``value`` is not a number.

    Example:
        >>> parse_number("12,500")
        12500.0
        >>> parse_number(" 9.626 ")
        9.626
        >>> parse_number("K255AZ") is None
        True
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            f = float(value)
        except OverflowError:  # an int too large for a float
            return None
        return f if math.isfinite(f) else None
    if not isinstance(value, str):
        return None
    s = value.strip()
    if _NUMBER_RE.fullmatch(s) is None or not any("0" <= ch <= "9" for ch in s):
        return None
    s = s.replace(",", "").replace("\u2212", "-")
    try:
        return float(s)
    except ValueError:  # pragma: no cover - the regex guarantees a float literal
        return None


#: A duration at a cell's start: ``[h:]m:ss[.f]``, the seconds two digits, nothing numeric glued after it.
_DURATION_RE = re.compile(r"\s*(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>[0-5]\d(?:\.\d+)?)(?![\d:]|\.\d)", re.ASCII)
#: A duration written with units, minutes and seconds both (``3m 37s``, ``1h 2m 3s``, ``4 min 12 sec``): ``3m`` alone is a length.
_UNIT_DURATION_RE = re.compile(
    r"\s*(?:(?P<h>\d+)\s*h\s*)?(?P<m>\d+)\s*m(?:in)?\.?\s*(?P<s>[0-5]?\d(?:\.\d+)?)\s*s(?:ec)?\b", re.ASCII | re.IGNORECASE)



def parse_duration(value: object) -> float | None:
    """The seconds of a duration a cell starts with (``m:ss``, ``h:mm:ss``, a decimal part allowed; ``3m 37s``), else None.

    Times of races and songs are written this way; their first number (the
    minutes) orders them wrongly against each other once the minutes differ in
    length (``10:02.1`` against ``9:59.8``), and against hours.

    Args:
        value: a cell (any object; only text is read).

    Returns:
        The duration in seconds, or None when the cell does not start with one.

    Example:
        >>> [parse_duration(s) for s in ["1:59.8", "2:01.33 (WR)", "1:02:03", " 58:01 "]]
        [119.8, 121.33, 3723.0, 3481.0]
        >>> [parse_duration(s) for s in ["3m 37s", "0m 9s", "1h 2m 3s", "4 min 12 sec"]]
        [217.0, 9.0, 3723.0, 252.0]
        >>> [parse_duration(s) for s in ["58.5", "2:1", "3–1", "1:75", "Rio", 12, "3m", "12 ms", "5m 60s"]]
        [None, None, None, None, None, None, None, None, None]
    """
    if not isinstance(value, str):
        return None
    m = _DURATION_RE.match(value) or _UNIT_DURATION_RE.match(value)
    if m is None:
        return None
    hours = int(m.group("h")) if m.group("h") is not None else 0
    minutes = int(m.group("m"))
    if m.group("h") is not None and minutes > 59:
        return None
    return round(hours * 3600 + minutes * 60 + float(m.group("s")), 6)


def mostly_numbers(cells: list[str]) -> bool:
    """Whether a column's cells are numbers but for a few (at least 80 %: ``36,271`` with one ``WIN``, a Rank with
    ``DNF``); False for no cells.

    Example:
        >>> mostly_numbers(["1", "2", "3", "4", "DNF"]), mostly_numbers(["1", "DNF"]), mostly_numbers([])
        (True, False, False)
    """
    return bool(cells) and sum(parse_number(v) is not None for v in cells) >= 0.8 * len(cells)


def is_empty(value: object) -> bool:
    """True for None and for strings that are empty or only whitespace.

    Example:
        >>> [is_empty(v) for v in [None, "", "  ", "0", 0]]
        [True, True, True, False, False]
    """
    return value is None or (isinstance(value, str) and not value.strip())


def format_number(number: float) -> str:
    """Write a number compactly: integral floats without ``.0``.

    Example:
        >>> (format_number(17.0), format_number(9.626), format_number(-3))
        ('17', '9.626', '-3')
    """
    if float(number).is_integer() and abs(number) < 1e16:
        return str(int(number))
    return repr(float(number))


def value_text(value: object) -> str:
    """The text form of a condition value, used for text comparisons.

    Numbers given as Python numbers are written without a trailing ``.0``;
    strings are stripped of surrounding spaces (only ``' '``, as SQL's ``TRIM``
    does for the cells).

    Example:
        >>> (value_text(51), value_text(17.0), value_text(" Athlone Town "))
        ('51', '17', 'Athlone Town')
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return format_number(value)
    return str(value).strip(" ")
