"""What an observation may repeat of its input: long texts are cut with a marker.

Observations, error messages and guidelines repeat arguments and values. A
giant argument (a 1 MB literal in ``add_filter``, a 1 MB "entity id") or a
giant value in the KB must not come back whole: :func:`clip` keeps the
beginning and says how long the text was, and :func:`clip_echoes` does so
for every long argument a text repeats (the step kernel applies it to every
observation, on both sides).

Example:
    >>> clip("x" * 1_048_576)[-29:]
    'xxxxx… (1,048,576 characters)'
    >>> clip_echoes("Error: no entity " + "m." + "a" * 500, ["m." + "a" * 500], limit=4)
    'Error: no entity m.aa… (502 characters)'
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ECHO_LIMIT", "MESSAGE_LIMIT", "clip", "clip_echoes", "one_line", "plural"]

ECHO_LIMIT = 200
"""Most characters of one value or argument an observation repeats."""

MESSAGE_LIMIT = 4000
"""Most characters of an error message or a guideline (after long arguments are cut)."""


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how long it was.

    Example:
        >>> clip("short")
        'short'
        >>> clip("x" * 1_048_576, 5)
        'xxxxx… (1,048,576 characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def clip_echoes(text: str, pieces: Iterable[str], limit: int = ECHO_LIMIT) -> str:
    """``text`` with every occurrence of a piece longer than ``limit`` cut by :func:`clip`.

    Args:
        text: an observation, error message or guideline.
        pieces: what the text may repeat (a step's arguments as written and as read).
        limit: characters kept of each long piece.

    Example:
        >>> clip_echoes("bad value 'abcdef'", ["abcdef", "ab"], limit=3)
        "bad value 'abc… (6 characters)'"
    """
    long = sorted({p for p in pieces if len(p) > limit}, key=len, reverse=True)
    for piece in long:
        if piece in text:
            text = text.replace(piece, clip(piece, limit))
    return text


def one_line(exc: BaseException | str, limit: int = 300) -> str:
    """An error message on one line (parsers' messages span several), cut to ``limit`` characters.

    What the KB backends put in a :class:`~pyql.errors.KBError` about a file
    (as the CLI prints one line); :func:`clip` instead keeps the lines and
    says how long the text was.

    Example:
        >>> one_line("at line 3 of <>:\\nBad syntax (newline found in string literal)")
        'at line 3 of <>: Bad syntax (newline found in string literal)'
        >>> one_line("x" * 10, limit=4)
        'xxxx...'
    """
    text = " ".join(str(exc).split())
    return text[:limit] + ("..." if len(text) > limit else "")


def plural(n: int, word: str, many: str | None = None) -> str:
    """A count and its noun, singular for 1: ``1 step``, ``2 steps``; ``many`` for an irregular plural.

    Example:
        >>> plural(1, "step"), plural(3, "step"), plural(1, "query", "queries"), plural(0, "query", "queries")
        ('1 step', '3 steps', '1 query', '0 queries')
    """
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"
