"""Text and JSON lines that are always valid UTF-8, whatever an LLM replied.

An LLM reply may carry a lone surrogate (``"\\ud800"`` is valid JSON, and
decodes to a Python string that cannot be encoded as UTF-8), and a server may
send bytes that are not UTF-8. :func:`safe_text` repairs such text (lone
surrogates and undecodable bytes become U+FFFD, surrogate pairs written as two
code points are joined), and :func:`dumps_line` writes any record as one line
of JSON that encodes as UTF-8, for run files and stdout.

Example:
    >>> line = dumps_line({"reply": "ok\\ud800", "score": float("nan")})
    >>> line
    '{"reply": "ok\\ufffd", "score": null}'
    >>> _ = line.encode("utf-8")
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any

from pyql.echo import redact_credentials
from pyql.interchange.jsonl import json_line

__all__ = ["safe_text", "safe_json", "count_unsafe", "dumps_line"]

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_PAIR_RE = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_pair(match: re.Match[str]) -> str:
    return match.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def count_unsafe(text: str) -> int:
    """How many code points :func:`safe_text` would replace (lone surrogates).

    Example:
        >>> count_unsafe("a\\ud800b\\udfff"), count_unsafe("\\U0001F600"), count_unsafe("\\ud83d\\ude00")
        (2, 0, 0)
    """
    if not _SURROGATE_RE.search(text):
        return 0
    return len(_SURROGATE_RE.findall(_PAIR_RE.sub(_join_pair, text)))


def safe_text(text: str | bytes) -> str:
    """Text that encodes as UTF-8: bad bytes and lone surrogates become U+FFFD.

    Bytes are decoded as UTF-8 with replacement; a surrogate pair written as
    two code points (``"\\ud83d\\ude00"``) is joined into its character.

    Example:
        >>> safe_text("A\\ud800B") == "A\\ufffdB", safe_text(b"caf\\xe9") == "caf\\ufffd"
        (True, True)
        >>> safe_text("\\ud83d\\ude00") == "\\U0001F600"
        True
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text).decode("utf-8", errors="replace")
    if not _SURROGATE_RE.search(text):
        return text
    return _SURROGATE_RE.sub("\ufffd", _PAIR_RE.sub(_join_pair, text))


def safe_json(value: Any) -> Any:
    """A copy of ``value`` that :func:`json.dumps` writes as strict JSON, valid as UTF-8.

    Strings are repaired (:func:`safe_text`), NaN and infinities become None,
    non-string keys strings, sets sorted lists, dataclasses and objects with
    ``to_dict()`` dicts, anything else its ``str``.

    Example:
        >>> safe_json({"a": ["x\\ud800", float("inf")], 1: {2}})
        {'a': ['x\ufffd', None], '1': [2]}
    """
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else _key(k): safe_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [safe_json(v) for v in items]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return safe_json(dataclasses.asdict(value))
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return safe_json(to_dict())
    return safe_text(str(value))


def _key(key: Any) -> str:
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(safe_json(key))
    return safe_text(str(key))


def dumps_line(obj: Any, *, ensure_ascii: bool = False) -> str:
    """One line of strict JSON for ``obj`` that always encodes as UTF-8.

    Lone surrogates become U+FFFD, bytes are decoded (with U+FFFD), NaN and
    infinities become ``null`` (strict JSON has none), non-string keys become
    strings, dataclasses and objects with ``to_dict()`` are written as their
    dicts and anything else as its ``str``. U+2028, U+2029 and U+0085 are
    escaped so that no line splitter breaks the line. It is
    :func:`pyql.interchange.jsonl.json_line` with :func:`safe_json` as the
    repair: the fast path is a plain :func:`json.dumps`; the repair runs only
    when it is needed. A password written in a URL anywhere in the record
    (``http://alice:s3cret@host``) is written ``***``
    (:func:`pyql.echo.redact_credentials`): no run file or ``--json`` line repeats one.

    Args:
        obj: the record.
        ensure_ascii: escape every non-ASCII character (for a terminal that
            is not UTF-8).

    Returns:
        The JSON text, without a trailing newline.

    Example:
        >>> dumps_line({"q": "où?", (1, 2): b"\\xff"})
        '{"q": "où?", "(1, 2)": "\\ufffd"}'
        >>> dumps_line({"q": "où?"}, ensure_ascii=True)
        '{"q": "o\\\\u00f9?"}'
        >>> dumps_line({"kb": "http://alice:s3cret@127.0.0.1:8890/sparql"})
        '{"kb": "http://alice:***@127.0.0.1:8890/sparql"}'
    """
    return redact_credentials(json_line(obj, ensure_ascii=ensure_ascii, repair=safe_json))
