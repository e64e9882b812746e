"""Reading data set files: their text, their JSON / JSON Lines records, and the fields every format shares.

Example:
    >>> answers_of("Jamaica", "item 0"), entities_of({"Jamaica": "m.03_r3"}, "item 0")
    (['Jamaica'], {'Jamaica': 'm.03_r3'})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.errors import DatasetError
from pyql.lines import split_lines

__all__ = ["answers_of", "entities_of", "first_line", "read_records", "read_text"]


def read_text(path: Path) -> str:
    """The text of a data set file (UTF-8).

    Raises:
        DatasetError: a missing file, a directory, or unreadable text.

    Example:
        >>> read_text(Path("/nonexistent/qa.json"))
        Traceback (most recent call last):
        ...
        agent.errors.DatasetError: data set file not found: /nonexistent/qa.json
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"data set file not found: {path}") from None
    except IsADirectoryError:
        raise DatasetError(f"{path} is a directory; give the data set file itself") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read the data set {path}: {exc}") from None


def first_line(text: str) -> str:
    """The first non-blank line of a text ('' when there is none).

    Example:
        >>> first_line("\\n\\nid\\tutterance\\n")
        'id\\tutterance'
    """
    return next((line for line in split_lines(text) if line.strip()), "")


def read_records(path: Path, text: str) -> tuple[list[Any], bool]:
    """The records of a JSON or JSON Lines file, and whether it was JSON Lines.

    A JSON list gives its elements, the original WebQSP's ``{"Questions": [...]}``
    one record, anything else is read as JSON Lines.

    Raises:
        DatasetError: an empty file, or a line that is not JSON.

    Example:
        >>> read_records(Path("qa.jsonl"), '{"question": "q"}\\n\\n{"question": "r"}\\n')
        ([{'question': 'q'}, {'question': 'r'}], True)
    """
    stripped = text.lstrip()
    if not stripped:
        raise DatasetError(f"the data set {path} is empty")
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path} starts like a JSON list but is not valid JSON: {exc}") from None
        return list(data), False
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, Mapping) and "Questions" in data:
        return [data], False
    records = []
    for number, line in enumerate(split_lines(text), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {number}: not a JSON object ({exc.msg}); expected JSON Lines, one item per line") from None
    return records, True


def entities_of(value: Any, where: str) -> dict[str, str]:
    """An item's entities (name → id) from a record's field; None gives none.

    Raises:
        DatasetError: not a mapping of strings to strings.

    Example:
        >>> entities_of(None, "item 0"), entities_of({"Jamaica": "m.03_r3"}, "item 0")
        ({}, {'Jamaica': 'm.03_r3'})
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise DatasetError(f"{where}: entities must map names to ids, e.g. {{\"Jamaica\": \"m.03_r3\"}}, got {value!r:.80}")
    return dict(value)


def answers_of(value: Any, where: str) -> list[Any]:
    """An item's gold answers from a record's field: a list, one value, or none.

    Raises:
        DatasetError: neither a list nor one value.

    Example:
        >>> answers_of(None, "item 0"), answers_of(["a", {"value": "m.1", "label": "B"}], "item 0")
        ([], ['a', {'value': 'm.1', 'label': 'B'}])
    """
    if value is None:
        return []
    if isinstance(value, (str, int, float, Mapping)):
        return [value]
    if not isinstance(value, list):
        raise DatasetError(f"{where}: answers must be a list of values or {{\"value\", \"label\"}} objects, got {type(value).__name__}")
    return list(value)
