"""The ``rog`` format: RoG's records (``rmanluo/RoG-webqsp``, ``RoG-cwq``), each carrying its own subgraph.

Records (the Hugging Face data sets written as JSON Lines, e.g. with
``datasets.load_dataset("rmanluo/RoG-webqsp", split="test").to_json(...)``):
``{"id", "question", "answer": [names], "q_entity": [names], "a_entity":
[names], "graph": [[head, relation, tail], ...], "choices"}``. The gold
answers are the answer names (a prediction matches by its label, or its
value for a literal). The question entities are linked to the ids
``--kb subgraphs:FILE`` gives them (:func:`pyql.kb.subgraphs.entity_id`:
``sg:Justin_Bieber``; a Freebase id stays one), so the same file is the
data set and the KB::

    pyql eval rog-webqsp-test.jsonl --kb subgraphs:rog-webqsp-test.jsonl

The graphs are not kept in the items: each question's KB reads its own.

Example:
    >>> is_rog({"id": "WebQTest-0", "question": "q", "q_entity": [], "graph": []}), is_rog({"question": "q", "answer": []})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.registry import Source, dataset_format
from pyql.kb.subgraphs import entity_id

__all__ = ["is_rog", "load_rog"]


def is_rog(record: Mapping[str, Any]) -> bool:
    """A RoG record: ``question``, ``q_entity`` and its ``graph``.

    Example:
        >>> is_rog({"id": "x", "question": "q", "answer": ["a"], "q_entity": ["b"], "graph": [["b", "r.s.t", "a"]]})
        True
    """
    return "question" in record and "q_entity" in record and "graph" in record


def _names(value: Any, field: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not (isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value)):
        raise DatasetError(f"{where}: RoG's {field} is a list of names, got {value!r:.80}")
    return [str(v) for v in value]


def _rog_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    return {
        "id": str(rec.get("id") or f"{stem}-{index}"),
        "question": str(rec["question"]),
        "entities": {name: entity_id(name) for name in _names(rec.get("q_entity"), "q_entity", where)},
        "answers": _names(rec.get("answer"), "answer", where),
        "actions": None,
        "table": None,
        "source": "rog",
        "kind": None,
    }


@dataset_format(
    "rog",
    shape="records",
    priority=12,
    detect=is_rog,
    known="RoG's records with their subgraphs (id, question, answer, q_entity, graph)",
    gold="the answer names (a prediction matches by its label)",
)
def load_rog(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a RoG file; the question entities linked to their ids in ``--kb subgraphs:FILE``.

    Example:
        >>> from pathlib import Path
        >>> rec = {"id": "WebQTest-12", "question": "what is the name of justin bieber brother",
        ...        "answer": ["Jaxon Bieber"], "q_entity": ["Justin Bieber"], "graph": []}
        >>> [(i["entities"], i["answers"]) for i in load_rog(Source(Path("t.jsonl"), "", "rog", [rec]))]
        [({'Justin Bieber': 'sg:Justin_Bieber'}, ['Jaxon Bieber'])]
    """
    for index, rec in source.each():
        yield _rog_item(rec, index, source.stem)
