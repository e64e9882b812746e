"""Lines of text: the one definition of a line break for actions, replies and files.

An action line, an LLM reply, a program read from standard input and a JSON
Lines file are split into lines by :func:`split_lines`, never by
:meth:`str.splitlines`.  Python's ``splitlines`` also breaks at U+2028 (line
separator), U+2029 (paragraph separator), form feed, vertical tab, ``\\x85``
and ``\\x1c``-``\\x1e``; those may legitimately appear inside a quoted
argument (``add_fact(?x, r, "a\\u2028b")``) or raw inside a JSON string (JSON
allows U+2028 unescaped), and splitting there turned one action into two
broken ones.

Decision: a line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r``, exactly
Python's universal newlines.  That is what :func:`open` and ``sys.stdin``
already do in text mode, so the same text splits the same whether it comes
from a file, standard input or a string.  A lone ``\\r`` never occurs inside
valid JSON (it must be escaped) and :func:`pyql.action_parser.render_action`
writes it as ``\\r``, so treating it as a break loses nothing.

Example:
    >>> split_lines("a(1)\\r\\nb(\\"x\\u2028y\\")\\n")
    ['a(1)', 'b("x\\u2028y")']
"""

from __future__ import annotations

import re

__all__ = ["LINE_BREAK_RE", "split_lines"]

#: A line break: ``\r\n``, ``\n`` or a lone ``\r`` (nothing else).
LINE_BREAK_RE = re.compile(r"\r\n|\n|\r")


def split_lines(text: str) -> list[str]:
    """Split ``text`` at ``\\n``, ``\\r\\n`` and lone ``\\r`` only (see the module docstring).

    Like :meth:`str.splitlines` without ``keepends``: the breaks are dropped
    and a final break does not start an empty last line.

    Args:
        text: any text.

    Returns:
        The lines, without their line breaks.

    Example:
        >>> split_lines("one\\u2028still one\\x0cand one\\ntwo\\r\\n")
        ['one\\u2028still one\\x0cand one', 'two']
        >>> split_lines(""), split_lines("\\n")
        ([], [''])
    """
    if not text:
        return []
    lines = LINE_BREAK_RE.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines
