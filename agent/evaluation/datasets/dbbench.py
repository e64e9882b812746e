"""The ``dbbench`` format: AgentBench dbbench / WikiSQL-style table items (``wikisql_dbbench/dev.jsonl``).

Records: ``{"description", "label", "table": {"table_name", "table_info"}, "sql"}``.
Only SELECT items are loaded (INSERT/UPDATE items have no answer to
compare; they are counted as skipped); ids are ``<file stem>-<line number>``
(0-based), stable across runs. The gold answers are the label, compared
with ``label_match`` (``["none"]`` matches no answer); runs are scored as
the ``wikisql`` benchmark.

Example:
    >>> is_dbbench({"description": "How many?", "label": ["1"], "table": {}}), is_select({"type": ["INSERT"]})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.reading import answers_of
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["is_dbbench", "is_select", "load_dbbench"]


def is_dbbench(record: Mapping[str, Any]) -> bool:
    """A dbbench item: ``description``, ``table`` and ``label``.

    Example:
        >>> is_dbbench({"description": "d", "table": {}})
        False
    """
    return "description" in record and "table" in record and "label" in record


def is_select(rec: Mapping[str, Any]) -> bool:
    """Whether a dbbench item asks a SELECT query (its SQL text, else its ``type`` list).

    Example:
        >>> is_select({"sql": {"query": "SELECT a FROM t"}}), is_select({"sql": {"query": "UPDATE t SET a = 1"}}), is_select({})
        (True, False, True)
    """
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
        "answers": answers_of(rec.get("label"), where),
        "actions": None,
        "table": dict(table),
        "source": "dbbench",
        "kind": str(kinds[0]) if kinds else None,
    }


def _benchmark(records: Sequence[Mapping[str, Any]]) -> str:
    return "wikisql"


@dataset_format(
    "dbbench",
    shape="records",
    priority=60,
    detect=is_dbbench,
    known="dbbench table items (description, label, table)",
    gold="the label (compared with label_match: ['none'] matches no answer)",
    benchmark=_benchmark,
)
def load_dbbench(source: Source) -> Iterator[dict[str, Any]]:
    """The SELECT items of a dbbench file (the others are counted as skipped).

    Example:
        >>> from pathlib import Path
        >>> table = {"table_name": "T", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"]]}}
        >>> recs = [{"description": "Add.", "label": [], "table": table, "type": ["INSERT"]}, {"description": "How many?", "label": ["1"], "table": table}]
        >>> src = Source(Path("dev.jsonl"), "", "dbbench", recs)
        >>> [i["id"] for i in load_dbbench(src)], src.counts
        (['dev-1'], {'skipped': 1})
    """
    for index, rec in source.each():
        if not is_select(rec):
            source.skip()
            continue
        yield _dbbench_item(rec, index, source.stem)
