"""The registry of data set formats: one entry per format, registered by its module with :func:`dataset_format`.

An entry says everything the evaluation needs to know about one format:
its name, how a file of it is recognized (a predicate on the first record,
or on the first line of a text format, tried in the order of an explicit
``priority``), its loader (a file's records or text to the one item shape
of :mod:`agent.evaluation.datasets`, gold answers included), its words in
the "known formats" message, and its metric hooks (its own denotation
check, its benchmark, its ``--by`` grouping fields and category order) and
smoke fixtures. :data:`~agent.evaluation.datasets.FORMATS`, the "known formats"
message, :func:`detect_format` and ``load_dataset`` all read this registry.

Example:
    >>> reg = Registry()
    >>> @dataset_format("mine", shape="records", priority=50, detect=lambda r: "q" in r, known="my JSON (q)", into=reg)
    ... def load_mine(source):
    ...     for index, rec in source.each():
    ...         yield {"id": str(index), "question": rec["q"]}
    >>> reg.names(), reg.detect({"q": "why?"}), reg.known()
    (('mine',), 'mine', 'known formats: my JSON (q)')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import DatasetError

__all__ = [
    "SHAPES",
    "DatasetFormat",
    "Loader",
    "Registry",
    "Source",
    "dataset_format",
    "detect_format",
    "formats",
    "get_format",
    "registry",
]

#: The shapes of data set files: JSON / JSON Lines records, or a text format read line by line.
SHAPES: tuple[str, ...] = ("records", "text")


@dataclass
class Source:
    """What a loader reads: the file, its text, its format and (record formats) its records.

    Attributes:
        file: the data set file.
        text: its whole text.
        format: the format detected (the first record's, for record formats).
        records: the parsed records of a JSON / JSON Lines file (empty for text formats).
        counts: ``skipped`` records and ``notes`` of the load (see :class:`~agent.evaluation.datasets.Dataset`).
        registry: the registry the format came from (checks each record's format).
    """

    file: Path
    text: str
    format: str
    records: list[Any] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    registry: Registry | None = None

    @property
    def stem(self) -> str:
        """The file's stem without ``_processed``: the prefix of ids made up from the line number.

        Example:
            >>> Source(Path("data/WebQSP_test_processed.json"), "", "webqsp").stem
            'WebQSP_test'
        """
        return self.file.stem.replace("_processed", "")

    def each(self) -> Iterator[tuple[int, Any]]:
        """The records with their index, each checked to be of the first record's format (or its family).

        Raises:
            DatasetError: a record of another format than the first.

        Example:
            >>> src = Source(Path("x.jsonl"), "", "pyql", [{"question": "q", "answers": []}, {"text": "?"}], registry=registry)
            >>> list(src.each())
            Traceback (most recent call last):
            ...
            agent.errors.DatasetError: x.jsonl, item 1: not a pyql record like the first one (keys: text)
        """
        reg = self.registry if self.registry is not None else registry
        family = reg.get(self.format).family
        for index, rec in enumerate(self.records):
            kind = reg.detect(rec)
            if kind is None or reg.get(kind).family != family:
                keys = ", ".join(map(str, rec)) if isinstance(rec, Mapping) else type(rec).__name__
                raise DatasetError(f"{self.file}, item {index}: not a {self.format} record like the first one (keys: {keys})")
            yield index, rec

    def skip(self) -> None:
        """Count one record left out of the items (e.g. a dbbench item that is not a SELECT query)."""
        self.counts["skipped"] = self.counts.get("skipped", 0) + 1

    def note(self, text: str) -> None:
        """Note what the loader could not do as the dataset's own tools do (shown with the run)."""
        self.counts.setdefault("notes", []).append(text)


#: A format's loader: a :class:`Source` to items (plain dicts in the one item shape).
Loader = Callable[[Source], Iterator[dict[str, Any]]]


@dataclass(frozen=True)
class DatasetFormat:
    """One data set format, as its module registers it (:func:`dataset_format`).

    Attributes:
        name: the format's name (an item's ``source``).
        shape: ``"records"`` (JSON or JSON Lines) or ``"text"`` (see :data:`SHAPES`).
        priority: detection order within its shape, lowest first (a more specific format goes first).
        detect: records: a predicate on one record (a Mapping); text: on the file's first non-blank line.
        load: the loader (:data:`Loader`).
        known: its words in the "known formats" message ("" when another entry's words cover it).
        family: formats whose records may share one file (GrailQA and GraphQ); default its name.
        gold: where its gold answers come from (one line, for the docs).
        denotation: its own denotation check ``(predicted, gold) -> bool`` (WTQ's value rules),
            else table questions are checked with ``label_match``.
        benchmark: the benchmark of a run's records (a key of ``metrics.BENCHMARKS``), when it is
            not the format's name (WebQSP raw → ``webqsp``, MetaQA → ``metaqa-3hop`` by the ids).
        category: the ``--by`` key its items' ``kind`` answers (``level`` for GrailQA, ``comp_level``
            for MarkQA, else ``type``).
        category_order: the order its categories are listed in (GrailQA's levels); others by size.
        groups: more ``--by`` keys, answered by its items' ``groups`` mapping (key → group name):
            MarkQA's ``composition``. :meth:`Registry.grouping` lists every key.
        misfile: text formats: a message when the first line shows another file of the same data set.
        smoke: benchmark → smoke fixture (``agent.evaluation.smoke``: data, kb, profile, ...).
    """

    name: str
    shape: str
    priority: int
    detect: Callable[[Any], bool]
    load: Loader
    known: str = ""
    family: str = ""
    gold: str = ""
    denotation: Callable[[Sequence[Any], Sequence[Any]], bool] | None = None
    benchmark: Callable[[Sequence[Mapping[str, Any]]], str | None] | None = None
    category: str = "type"
    category_order: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    misfile: Callable[[str, Path], str | None] | None = None
    smoke: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {self.shape!r}")
        if not self.family:
            object.__setattr__(self, "family", self.name)


class Registry:
    """Data set formats by name, in registration order (the order they are listed in).

    Example:
        >>> len(registry) >= 10, "wtq" in registry, registry.get("cwq").shape
        (True, True, 'records')
    """

    def __init__(self) -> None:
        self._formats: dict[str, DatasetFormat] = {}

    def register(self, fmt: DatasetFormat) -> DatasetFormat:
        """Add a format; its name must be new."""
        if fmt.name in self._formats:
            raise ValueError(f"the data set format {fmt.name!r} is registered twice")
        self._formats[fmt.name] = fmt
        return fmt

    def get(self, name: str) -> DatasetFormat:
        """The format of a name (KeyError when there is none)."""
        return self._formats[name]

    def __contains__(self, name: object) -> bool:
        return name in self._formats

    def __iter__(self) -> Iterator[DatasetFormat]:
        return iter(self._formats.values())

    def __len__(self) -> int:
        return len(self._formats)

    def names(self) -> tuple[str, ...]:
        """The names, in registration order."""
        return tuple(self._formats)

    def by_priority(self, shape: str) -> list[DatasetFormat]:
        """The formats of one shape in detection order (priority, then registration)."""
        return sorted((f for f in self if f.shape == shape), key=lambda f: f.priority)

    def detect(self, record: Any) -> str | None:
        """The record format of one record: the first (by priority) whose predicate holds, or None."""
        if not isinstance(record, Mapping):
            return None
        return next((f.name for f in self.by_priority("records") if f.detect(record)), None)

    def detect_text(self, first_line: str, file: Path) -> str | None:
        """The text format of a file from its first non-blank line, or None (then it is read as JSON).

        Raises:
            DatasetError: the line shows another file of a known data set (the format's ``misfile`` says which).
        """
        if first_line.lstrip().startswith(("[", "{")):
            return None
        texts = self.by_priority("text")
        found = next((f.name for f in texts if f.detect(first_line)), None)
        if found is not None:
            return found
        for fmt in texts:
            message = fmt.misfile(first_line, file) if fmt.misfile is not None else None
            if message:
                raise DatasetError(message)
        return None

    def grouping(self) -> dict[str, tuple[str, ...]]:
        """The ``--by`` keys (each format's ``category`` and ``groups``) → the formats that group by them, keys sorted.

        Example:
            >>> reg = Registry()
            >>> _ = reg.register(DatasetFormat("a", "records", 1, bool, iter, category="level", groups=("size",)))
            >>> _ = reg.register(DatasetFormat("b", "records", 2, bool, iter))
            >>> reg.grouping()
            {'level': ('a',), 'size': ('a',), 'type': ('b',)}
        """
        keys: dict[str, list[str]] = {}
        for fmt in self:
            for key in dict.fromkeys((fmt.category, *fmt.groups)):
                keys.setdefault(key, []).append(fmt.name)
        return {key: tuple(keys[key]) for key in sorted(keys)}

    def known(self) -> str:
        """The "known formats" message: each format's words, in registration order."""
        words = [f.known for f in self if f.known]
        listed = ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)
        return "known formats: " + listed


#: The formats of :mod:`agent.evaluation.datasets` (each registered by its module).
registry = Registry()


def dataset_format(
    name: str,
    *,
    shape: str,
    priority: int,
    detect: Callable[[Any], bool],
    known: str = "",
    into: Registry | None = None,
    **hooks: Any,
) -> Callable[[Loader], Loader]:
    """Register the decorated loader as the loader of a new data set format (see :class:`DatasetFormat`).

    ``hooks`` are the other fields of :class:`DatasetFormat` (``family``,
    ``gold``, ``denotation``, ``benchmark``, ``category``, ``category_order``,
    ``groups``, ``misfile``, ``smoke``).

    Example:
        >>> reg = Registry()
        >>> @dataset_format("lines", shape="text", priority=1, detect=lambda line: line.startswith("Q:"), into=reg)
        ... def load_lines(source):
        ...     yield from ()
        >>> reg.get("lines").family, reg.detect_text("Q: why?", Path("q.txt"))
        ('lines', 'lines')
    """

    def register(loader: Loader) -> Loader:
        target = into if into is not None else registry
        target.register(DatasetFormat(name, shape, priority, detect, loader, known, **hooks))
        return loader

    return register


def formats() -> tuple[DatasetFormat, ...]:
    """The registered formats, in registration order.

    Example:
        >>> formats()[0].name
        'pyql'
    """
    return tuple(registry)


def get_format(name: str | None) -> DatasetFormat | None:
    """The registered format of a name (an item's ``source``), or None.

    Example:
        >>> get_format("wtq").denotation is not None, get_format("ask")
        (True, None)
    """
    return registry.get(name) if isinstance(name, str) and name in registry else None


def detect_format(record: Any) -> str | None:
    """The format of one record (see :mod:`agent.evaluation.datasets`), or None.

    The record formats are tried by their priority: the first whose
    predicate holds names the format.

    Example:
        >>> detect_format({"qid": "WebQTest-0", "question": "q", "entity_linking": {}, "answer": []})
        'webqsp'
        >>> detect_format({"description": "How many?", "label": ["1"], "table": {"table_info": {}}})
        'dbbench'
        >>> detect_format({"question": "q", "answers": []}), detect_format({"text": "?"})
        ('pyql', None)
        >>> detect_format({"qid": 1, "question": "q", "answer": [], "s_expression": "(AND ...)", "level": "zero-shot"})
        'grailqa'
        >>> detect_format({"ID": "WebQTrn-1_x", "question": "q", "answers": []}), detect_format(
        ...     {"table_id": "1-1000181-1", "question": "q", "sql": {"sel": 0, "agg": 0, "conds": []}})
        ('cwq', 'wikisql')
    """
    return registry.detect(record)
