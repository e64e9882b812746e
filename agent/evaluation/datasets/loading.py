"""Loading a data set file: its format detected through the registry, its items in the one item shape.

Example:
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "qa.jsonl")
    >>> _ = open(p, "w").write(json.dumps({"question": "Who?", "answers": ["m.1"]}) + "\\n")
    >>> ds = load_dataset(p)
    >>> ds.format, ds[0]["id"]
    ('pyql', 'qa-0')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.linking import load_linking
from agent.evaluation.datasets.reading import first_line, read_records, read_text
from agent.evaluation.datasets.registry import Source, registry

__all__ = ["Dataset", "iter_items", "load_dataset"]


@dataclass
class Dataset(Sequence[dict[str, Any]]):
    """The items of a data set file.

    Attributes:
        path: the file.
        format: one of :data:`~agent.evaluation.datasets.FORMATS`.
        items: the items, in file order.
        skipped: records left out (dbbench mutation items whose gold statement does not run: unscorable).
        unlinked: items the entity-linking file has no entry for (they have no entities).
        notes: what the loader could not do as the dataset's own tools do (e.g. WTQ without its tagged files).
    """

    path: Path
    format: str
    items: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    unlinked: int = 0
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        return self.items[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.items)


def _record_items(file: Path, text: str, counts: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The items of a JSON / JSON Lines file, in the format of its first record."""
    records, _ = read_records(file, text)
    if not records:
        return
    fmt = registry.detect(records[0])
    if fmt is None:
        first = records[0]
        keys = ", ".join(map(str, first)) if isinstance(first, Mapping) else type(first).__name__
        raise DatasetError(f"{file}: unknown data set format (first record has keys: {keys}); {registry.known()}")
    counts["format"] = fmt
    yield from registry.get(fmt).load(Source(file, text, fmt, records, counts, registry))


def _file_items(file: Path, text: str, counts: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The items of a file: a text format when its first line shows one, else JSON records."""
    fmt = registry.detect_text(first_line(text), file)
    if fmt is None:
        return _record_items(file, text, counts)
    counts["format"] = fmt
    return registry.get(fmt).load(Source(file, text, fmt, [], counts, registry))


def iter_items(
    path: str | Path, *, counts: dict[str, Any] | None = None, linking: str | Path | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the items of a data set file (any format of :data:`~agent.evaluation.datasets.FORMATS`).

    Args:
        path: the file.
        counts: if given, ``counts["format"]``, ``counts["skipped"]`` and
            ``counts["unlinked"]`` are filled in.
        linking: an entity-linking file (:func:`load_linking`); when given,
            each item's entities are the ones linked for its id (none when the
            file has no entry for it) instead of the data set's own.

    Raises:
        DatasetError: unreadable file, unknown format (the message lists the
            known ones and the keys found), or a malformed item.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "mine.jsonl")
        >>> _ = open(p, "w").write(json.dumps({"text": "what?"}) + "\\n")
        >>> next(iter_items(p))
        Traceback (most recent call last):
        ...
        agent.errors.DatasetError: ...mine.jsonl: unknown data set format (first record has keys: text); known formats: ...
    """
    file = Path(str(path))
    links = load_linking(linking) if linking is not None else None
    text = read_text(file)
    counts = counts if counts is not None else {}
    counts.setdefault("skipped", 0)
    counts.setdefault("unlinked", 0)
    items = _file_items(file, text, counts)
    for item in items:
        if links is not None:
            if item["id"] in links:
                item["entities"] = dict(links[item["id"]])
            else:
                item["entities"] = {}
                counts["unlinked"] += 1
        yield item


def load_dataset(path: str | Path, *, limit: int | None = None, linking: str | Path | None = None) -> Dataset:
    """Load a whole data set (see :func:`iter_items`); ids must be unique.

    Args:
        path: the file.
        limit: keep only the first ``limit`` items.
        linking: an entity-linking file for the items' entities (:func:`load_linking`).

    Raises:
        DatasetError: as :func:`iter_items`, or a repeated id.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "tables.jsonl")
        >>> table = {"table_name": "T", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"]]}}
        >>> rows = [{"description": "How many?", "label": ["1"], "table": table, "sql": {"query": "SELECT COUNT(a) FROM T"}},
        ...         {"description": "Add a row.", "label": ["INSERT ..."], "table": table, "type": ["INSERT"]}]
        >>> _ = open(p, "w").write("\\n".join(json.dumps(r) for r in rows))
        >>> ds = load_dataset(p)
        >>> ds.format, [item["id"] for item in ds], ds.skipped
        ('dbbench', ['tables-0'], 1)
    """
    if limit is not None and limit < 0:
        raise DatasetError(f"limit must be >= 0, got {limit}")
    counts: dict[str, Any] = {}
    items: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for item in iter_items(path, counts=counts, linking=linking):
        if limit is not None and len(items) >= limit:
            break
        if item["id"] in seen:
            raise DatasetError(
                f"{path}: the id {item['id']!r} is used by items {seen[item['id']]} and {len(items)}; ids must be unique "
                "(a run is resumed by id)"
            )
        seen[item["id"]] = len(items)
        items.append(item)
    return Dataset(
        Path(str(path)),
        str(counts.get("format", "pyql")),
        items,
        int(counts.get("skipped", 0)),
        int(counts.get("unlinked", 0)),
        list(counts.get("notes") or []),
    )
