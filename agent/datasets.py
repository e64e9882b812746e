"""Evaluation data sets: one item format for every source, detected from the file's content.

Every loader yields items (plain dicts)::

    {"id": str, "question": str, "entities": {name: id}, "answers": [gold ...],
     "actions": [gold action lines] or None, "table": table JSON or None,
     "source": format name, "kind": question kind or None}

Formats (:func:`detect_format` looks at the first record, not the file name):

``pyql``
    our JSON Lines (``pyql/data/demo_questions.jsonl``): ``question``,
    ``entities``, ``answers`` (values or ``{"value", "label"}``), optional
    ``id``, ``actions``, ``kind`` and ``table`` (``{"header", "rows"}`` or a
    dbbench ``{"table_name", "table_info"}``) for a table question.
``webqsp``
    WebQSP processed JSON (``WebQSP_test_processed.json``): a list of
    ``{"qid", "question", "entity_linking", "answer", ...}`` (JSON Lines of such
    records work too).
``webqsp-raw``
    the original WebQSP JSON ``{"Questions": [{"QuestionId", "ProcessedQuestion",
    "Parses": [{"TopicEntityMid", "TopicEntityName", "Answers": [...]}]}]}``:
    the first parse gives the entity and the answers.
``dbbench``
    AgentBench dbbench / WikiSQL-style table items (``wikisql_dbbench/dev.jsonl``):
    ``{"description", "label", "table": {"table_name", "table_info"}, "sql"}``.
    Only SELECT items are loaded (INSERT/UPDATE items have no answer to
    compare); ids are ``<file stem>-<line number>`` (0-based), stable across runs.

Example:
    >>> from importlib import resources
    >>> path = resources.files("pyql") / "data" / "demo_questions.jsonl"
    >>> items = load_dataset(path)
    >>> items.format, len(items), items[0]["id"], items[0]["entities"]
    ('pyql', 37, 'q01', {'Tropical Storm Rachel': 'm.0crbvqz'})
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyql.errors import PyQLError

__all__ = ["FORMATS", "Dataset", "DatasetError", "detect_format", "iter_items", "load_dataset"]

#: The formats :func:`detect_format` recognizes.
FORMATS: tuple[str, ...] = ("pyql", "webqsp", "webqsp-raw", "dbbench")

_KNOWN = (
    "known formats: pyql JSON Lines (question, entities, answers[, id, actions, table]), "
    "WebQSP processed JSON (qid, question, entity_linking, answer), the original WebQSP JSON "
    '({"Questions": [...]}) and dbbench/WikiSQL table items (description, label, table)'
)


class DatasetError(PyQLError, ValueError):
    """A data set file cannot be read or is in no known format; the message names the file and the fix.

    Example:
        >>> DatasetError("x").kind
        'bad_dataset'
    """

    kind = "bad_dataset"


@dataclass
class Dataset(Sequence[dict[str, Any]]):
    """The items of a data set file.

    Attributes:
        path: the file.
        format: one of :data:`FORMATS`.
        items: the items, in file order.
        skipped: records left out (dbbench items that are not SELECT queries).
    """

    path: Path
    format: str
    items: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        return self.items[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.items)


# ---------------------------------------------------------------------------
# Reading records


def _read_records(path: Path) -> tuple[list[Any], bool]:
    """The records of a JSON or JSON Lines file, and whether it was JSON Lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"data set file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read the data set {path}: {exc}") from None
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
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {number}: not a JSON object ({exc.msg}); expected JSON Lines, one item per line") from None
    return records, True


def detect_format(record: Any) -> str | None:
    """The format of one record (see the module docstring), or None.

    Example:
        >>> detect_format({"qid": "WebQTest-0", "question": "q", "entity_linking": {}, "answer": []})
        'webqsp'
        >>> detect_format({"description": "How many?", "label": ["1"], "table": {"table_info": {}}})
        'dbbench'
        >>> detect_format({"question": "q", "answers": []}), detect_format({"text": "?"})
        ('pyql', None)
    """
    if not isinstance(record, Mapping):
        return None
    if "Questions" in record and isinstance(record["Questions"], list):
        return "webqsp-raw"
    if "qid" in record and "question" in record and ("answer" in record or "entity_linking" in record):
        return "webqsp"
    if "description" in record and "table" in record and "label" in record:
        return "dbbench"
    if "question" in record and any(k in record for k in ("answers", "answer", "gold", "entities", "table")):
        return "pyql"
    return None


def _entities(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise DatasetError(f"{where}: entities must map names to ids, e.g. {{\"Jamaica\": \"m.03_r3\"}}, got {value!r:.80}")
    return dict(value)


def _answers(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, int, float)) or isinstance(value, Mapping):
        return [value]
    if not isinstance(value, list):
        raise DatasetError(f"{where}: answers must be a list of values or {{\"value\", \"label\"}} objects, got {type(value).__name__}")
    return list(value)


def _pyql_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    actions = rec.get("actions")
    if actions is not None and not (isinstance(actions, list) and all(isinstance(a, str) for a in actions)):
        raise DatasetError(f"{where}: actions must be a list of action lines")
    table = rec.get("table")
    if table is not None and not isinstance(table, Mapping):
        raise DatasetError(f'{where}: table must be an object ({{"header", "rows"}} or a dbbench table)')
    answers = rec["answers"] if "answers" in rec else rec.get("answer", rec.get("gold"))
    return {
        "id": str(rec.get("id", rec.get("qid", f"{stem}-{index}"))),
        "question": str(rec["question"]),
        "entities": _entities(rec.get("entities", rec.get("entity_linking")), where),
        "answers": _answers(answers, where),
        "actions": actions,
        "table": dict(table) if table is not None else None,
        "source": "pyql",
        "kind": rec.get("kind"),
    }


def _webqsp_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    return {
        "id": str(rec.get("qid", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": _entities(rec.get("entity_linking"), where),
        "answers": _answers(rec.get("answer"), where),
        "actions": None,
        "table": None,
        "source": "webqsp",
        "kind": None,
    }


def _webqsp_raw_items(rec: Mapping[str, Any], stem: str) -> Iterator[dict[str, Any]]:
    for index, q in enumerate(rec["Questions"]):
        parses = q.get("Parses") or [{}]
        parse = parses[0]
        entities = {}
        if parse.get("TopicEntityMid"):
            entities[str(parse.get("TopicEntityName") or parse["TopicEntityMid"])] = str(parse["TopicEntityMid"])
        answers = [
            {"value": a.get("AnswerArgument"), "label": a.get("EntityName")} if a.get("EntityName") else a.get("AnswerArgument")
            for a in parse.get("Answers") or []
        ]
        yield {
            "id": str(q.get("QuestionId", f"{stem}-{index}")),
            "question": str(q.get("ProcessedQuestion") or q.get("RawQuestion") or ""),
            "entities": entities,
            "answers": answers,
            "actions": None,
            "table": None,
            "source": "webqsp-raw",
            "kind": None,
        }


def _is_select(rec: Mapping[str, Any]) -> bool:
    sql = rec.get("sql")
    query = sql.get("query") if isinstance(sql, Mapping) else sql
    if isinstance(query, str) and query.strip():
        return query.lstrip().upper().startswith("SELECT")
    kinds = rec.get("type") or []
    return not any(str(k).upper() in ("INSERT", "UPDATE", "DELETE") for k in kinds)


def _dbbench_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    table = rec.get("table")
    if not isinstance(table, Mapping) or "table_info" not in table:
        raise DatasetError(f'{where}: a dbbench item needs "table": {{"table_name", "table_info": {{"columns", "rows"}}}}')
    kinds = rec.get("type") or []
    return {
        "id": str(rec.get("id", f"{stem}-{index}")),
        "question": str(rec["description"]),
        "entities": {},
        "answers": _answers(rec.get("label"), where),
        "actions": None,
        "table": dict(table),
        "source": "dbbench",
        "kind": str(kinds[0]) if kinds else None,
    }


def iter_items(path: str | Path, *, counts: dict[str, int] | None = None) -> Iterator[dict[str, Any]]:
    """Yield the items of a data set file (any format of :data:`FORMATS`).

    Args:
        path: the file.
        counts: if given, ``counts["skipped"]`` and ``counts[format]`` are filled in.

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
        agent.datasets.DatasetError: ...mine.jsonl: unknown data set format (first record has keys: text); known formats: ...
    """
    file = Path(str(path))
    records, _ = _read_records(file)
    stem = file.stem.replace("_processed", "")
    counts = counts if counts is not None else {}
    counts.setdefault("skipped", 0)
    if not records:
        return
    fmt = detect_format(records[0])
    if fmt is None:
        first = records[0]
        keys = ", ".join(map(str, first)) if isinstance(first, Mapping) else type(first).__name__
        raise DatasetError(f"{file}: unknown data set format (first record has keys: {keys}); {_KNOWN}")
    counts["format"] = fmt  # type: ignore[assignment]
    for index, rec in enumerate(records):
        kind = detect_format(rec)
        if kind != fmt:
            raise DatasetError(f"{file}, item {index}: not a {fmt} record like the first one (keys: {', '.join(map(str, rec)) if isinstance(rec, Mapping) else type(rec).__name__})")
        if fmt == "webqsp-raw":
            yield from _webqsp_raw_items(rec, stem)
        elif fmt == "webqsp":
            yield _webqsp_item(rec, index, stem)
        elif fmt == "dbbench":
            if not _is_select(rec):
                counts["skipped"] += 1
                continue
            yield _dbbench_item(rec, index, stem)
        else:
            yield _pyql_item(rec, index, stem)


def load_dataset(path: str | Path, *, limit: int | None = None) -> Dataset:
    """Load a whole data set (see :func:`iter_items`); ids must be unique.

    Args:
        path: the file.
        limit: keep only the first ``limit`` items.

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
    for item in iter_items(path, counts=counts):
        if limit is not None and len(items) >= limit:
            break
        if item["id"] in seen:
            raise DatasetError(
                f"{path}: the id {item['id']!r} is used by items {seen[item['id']]} and {len(items)}; ids must be unique "
                "(a run is resumed by id)"
            )
        seen[item["id"]] = len(items)
        items.append(item)
    return Dataset(Path(str(path)), str(counts.get("format", "pyql")), items, int(counts.get("skipped", 0)))
