"""Many conversions at once: JSON Lines in, one JSON line out per line in (``pyql convert --jsonl``).

Every input line is an item ``{"id": ..., "input": "...", "entities":
{...}}`` (``entities`` optional, name → id); every input line gives exactly
one output line, in order: ``{"id": ..., "output": "..."}``, or ``{"id":
..., "error": {"kind": ..., "message": ...}}`` when the item could not be
converted. A line that is not an item (not UTF-8, not JSON, not an object,
no string ``input``, an empty line) gets an error of kind ``bad_item``
whose message names its line; its id is null when it has none. Nothing
stops the batch: a bad line is one error line, and the next line is read.

Lines are split by :func:`pyql.lines.split_lines` (``\\n``, ``\\r\\n``,
``\\r``; never U+2028). Output lines are JSON that always encodes as UTF-8
and that no line splitter breaks (:func:`json_line`).

Example:
    >>> items = '{"id": 1, "input": "add_fact(?a, r.s.t, ?b)"}\\nnot json\\n{"id": 3, "input": "add_fact(?a, r.s.t)"}'
    >>> for line in convert_jsonl(items, "actions", "actions"):
    ...     print(line)
    {"id": 1, "output": "add_fact(?a, r.s.t, ?b)\\n"}
    {"id": null, "error": {"kind": "bad_item", "message": "line 2: not JSON (Expecting value at column 1)"}}
    {"id": 3, "error": {"kind": "wrong_arity", "message": "line 1: add_fact(head, relation, tail) should have 3 parameters. You have 2 parameters."}}
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterator

from pyql.echo import MESSAGE_LIMIT, clip
from pyql.errors import ItemError, PyQLError
from pyql.interchange.registry import convert, reader_of, writer_of
from pyql.lines import split_lines
from pyql.builder.profiles import Profile

__all__ = ["convert_jsonl", "convert_line", "error_object", "json_line"]

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of a byte that is not UTF-8
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_LINE_BREAK_RE = re.compile("[\u2028\u2029\x85]")


def json_line(record: Any, *, ensure_ascii: bool = False, repair: Callable[[Any], Any] | None = None) -> str:
    """``record`` as one line of JSON that encodes as UTF-8 and that no line splitter breaks.

    Non-ASCII text is written as is (all of it escaped with
    ``ensure_ascii``), except U+2028, U+2029 and U+0085 (as ``\\u``
    escapes). What json cannot write as strict UTF-8 JSON depends on
    ``repair``:

    - without it, text with a lone surrogate (JSON input may carry
      ``"\\ud800"``) is written with ``\\u`` escapes throughout, so it
      comes back the same when read, and anything else json refuses is raised;
    - with it (``agent.jsonlines.dumps_line`` passes ``safe_json``), a record
      that is not strict JSON (a lone surrogate, NaN, an object json does not
      know) is written as ``repair(record)`` instead. The plain dump is tried
      first; the repair runs only when it is needed.

    Example:
        >>> json_line({"output": "où\\u2028"}), json_line({"id": "\\ud800"})
        ('{"output": "où\\\\u2028"}', '{"id": "\\\\ud800"}')
        >>> json_line({"x": float("nan")}, repair=lambda r: {"x": None}), json_line({"q": "où"}, ensure_ascii=True)
        ('{"x": null}', '{"q": "o\\\\u00f9"}')
    """
    try:
        text = json.dumps(record, ensure_ascii=ensure_ascii, allow_nan=repair is None)
        if not ensure_ascii:
            text.encode("utf-8")
    except (TypeError, ValueError) as e:  # UnicodeEncodeError is a ValueError
        if repair is not None:
            text = json.dumps(repair(record), ensure_ascii=ensure_ascii, allow_nan=False)
        elif isinstance(e, UnicodeEncodeError):
            return json.dumps(record)
        else:
            raise
    return text if ensure_ascii else _LINE_BREAK_RE.sub(lambda m: _LINE_BREAKS[m.group()], text)


def error_object(exc: PyQLError) -> dict[str, str]:
    """The ``error`` of an output line: the error's kind and its message on one line (long ones clipped).

    Example:
        >>> error_object(ItemError("line 2:\\n  not JSON"))
        {'kind': 'bad_item', 'message': 'line 2: not JSON'}
    """
    return {"kind": exc.kind, "message": clip(" ".join(str(exc).split()), MESSAGE_LIMIT)}


def _item(line: str, number: int) -> dict[str, Any]:
    """The JSON object on the line, or ItemError naming the line."""
    if not line.strip():
        raise ItemError(f'line {number} is empty; each line must be an object {{"id": ..., "input": "..."}}')
    try:
        value = json.loads(line)
    except RecursionError:
        raise ItemError(f"line {number}: not JSON we can read (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise ItemError(f"line {number}: not JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ItemError(f"line {number}: not JSON we can read ({exc})") from None
    if not isinstance(value, dict):
        raise ItemError(f'line {number}: expected an object {{"id": ..., "input": "..."}}, found {type(value).__name__}')
    return value


def _fields(item: dict[str, Any], number: int) -> tuple[str, dict[str, str]]:
    """The item's input and entities, or ItemError naming the line."""
    text = item.get("input")
    if not isinstance(text, str):
        found = "no input" if text is None else f"an input of type {type(text).__name__}"
        raise ItemError(f'line {number}: "input" must be a string (the text to convert); found {found}')
    entities = item.get("entities") or {}
    if not isinstance(entities, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in entities.items()):
        raise ItemError(f'line {number}: "entities" must map entity names to ids, e.g. {{"Jamaica": "m.03_r3"}}')
    return text, entities


def convert_line(line: str, number: int, source: str, target: str, profile: str | Profile = "freebase") -> dict[str, Any]:
    """The output record of one input line (never raises for what the line holds).

    Example:
        >>> convert_line('{"id": "q1", "input": "add_fact(?x, r.s.t, m.0a)"}', 1, "actions", "actions")
        {'id': 'q1', 'output': 'add_fact(?x, r.s.t, m.0a)\\n'}
        >>> convert_line('[1]', 7, "actions", "sparql")["error"]["message"]
        'line 7: expected an object {"id": ..., "input": "..."}, found list'
    """
    item_id = None
    try:
        item = _item(line, number)
        item_id = item.get("id")
        text, entities = _fields(item, number)
        return {"id": item_id, "output": convert(text, source, target, entities, profile)}
    except PyQLError as exc:
        return {"id": item_id, "error": error_object(exc)}


def _lines(data: bytes | str) -> Iterator[str | ItemError]:
    """The lines of the input; a line of bytes that are not UTF-8 comes as the ItemError saying where."""
    if isinstance(data, str):
        yield from split_lines(data.removeprefix("\ufeff"))
        return
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogateescape")
    for number, line in enumerate(split_lines(text), 1):
        if _ESCAPED_BYTE.search(line):
            raw = line.encode("utf-8", "surrogateescape")
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield ItemError(
                    f"line {number} is not UTF-8: byte 0x{raw[exc.start]:02x} at column {exc.start + 1} ({exc.reason})"
                )
                continue
        yield line


def convert_jsonl(data: bytes | str, source: str, target: str, profile: str | Profile = "freebase") -> Iterator[str]:
    """Convert every item of a JSON Lines input: one output JSON line (without its break) per input line.

    Args:
        data: the JSON Lines text, or its bytes (a line that is not UTF-8
            then gets its own error line; the others are converted).
        source: a readable format; target: a writable format.
        profile: the KB profile.

    Raises:
        UnknownFormatError: at once, before any line, when ``source``
            cannot be read or ``target`` written.

    Example:
        >>> list(convert_jsonl(b'{"id": 1, "input": "null"}\\n\\xff\\n', "legacy", "actions"))
        ['{"id": 1, "output": ""}', '{"id": null, "error": {"kind": "bad_item", "message": "line 2 is not UTF-8: byte 0xff at column 1 (invalid start byte)"}}']
    """
    reader_of(source), writer_of(target)
    return _records(data, source, target, profile)


def _records(data: bytes | str, source: str, target: str, profile: str | Profile) -> Iterator[str]:
    """The output lines of :func:`convert_jsonl`, one per input line."""
    for number, line in enumerate(_lines(data), 1):
        if isinstance(line, ItemError):
            record: dict[str, Any] = {"id": None, "error": error_object(line)}
        else:
            record = convert_line(line, number, source, target, profile)
        try:
            yield json_line(record)
        except (RecursionError, ValueError):  # an id nested too deeply to write back
            yield json_line({"id": None, "error": error_object(ItemError(f"line {number}: the id cannot be written back"))})
