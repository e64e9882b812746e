"""The ``pyql`` format: our JSON Lines (``pyql/data/demo_questions.jsonl``).

Records: ``question``, ``entities`` (name → id), ``answers`` (values or
``{"value", "label"}``; ``answer`` and ``gold`` are read too), optional
``id``, ``actions`` (gold action lines), ``kind`` and ``table``
(``{"header", "rows"}`` or a dbbench ``{"table_name", "table_info"}``) for
a table question. It is detected last: any record with a ``question`` and
one of ``answers``, ``answer``, ``gold``, ``entities`` or ``table``.

Example:
    >>> is_pyql({"question": "q", "answers": []}), is_pyql({"text": "q"})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.reading import answers_of, entities_of
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["is_pyql", "load_pyql"]


def is_pyql(record: Mapping[str, Any]) -> bool:
    """A record of our JSON Lines: a question and some gold, entities or a table.

    Example:
        >>> is_pyql({"question": "q", "table": {"header": [], "rows": []}})
        True
    """
    return "question" in record and any(k in record for k in ("answers", "answer", "gold", "entities", "table"))


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
        "entities": entities_of(rec.get("entities", rec.get("entity_linking")), where),
        "answers": answers_of(answers, where),
        "actions": actions,
        "table": dict(table) if table is not None else None,
        "source": "pyql",
        "kind": rec.get("kind"),
    }


@dataset_format(
    "pyql",
    shape="records",
    priority=90,
    detect=is_pyql,
    known="pyql JSON Lines (question, entities, answers[, id, actions, table])",
    gold="the record's answers",
)
def load_pyql(source: Source) -> Iterator[dict[str, Any]]:
    """The items of our JSON Lines; ids are the record's ``id`` (or ``qid``), else ``<stem>-<index>``.

    Example:
        >>> from pathlib import Path
        >>> src = Source(Path("mine.jsonl"), "", "pyql", [{"question": "Who?", "answers": ["m.1"]}])
        >>> [(i["id"], i["answers"]) for i in load_pyql(src)]
        [('mine-0', ['m.1'])]
    """
    for index, rec in source.each():
        yield _pyql_item(rec, index, source.stem)
