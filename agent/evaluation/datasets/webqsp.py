"""The ``webqsp`` format: WebQSP processed JSON (``WebQSP_test_processed.json``).

A list of ``{"qid", "question", "entity_linking", "answer", "sparql_query", ...}``
(JSON Lines of such records work too). The gold action chain comes from
the gold SPARQL (:func:`~agent.evaluation.datasets.chains.sparql_actions`),
which is kept as the item's ``gold_query``.

Example:
    >>> is_webqsp({"qid": "WebQTest-0", "question": "q", "answer": []}), is_webqsp({"qid": "1", "question": "q"})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent.evaluation.datasets.chains import sparql_actions
from agent.evaluation.datasets.reading import answers_of, entities_of
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["is_webqsp", "load_webqsp"]

_SMOKE = {"webqsp": {"data": "webqsp/WebQSP_test_processed.json", "kb": "gold", "profile": "freebase"}}


def is_webqsp(record: Mapping[str, Any]) -> bool:
    """A WebQSP processed record: ``qid``, ``question`` and ``answer`` or ``entity_linking``.

    Example:
        >>> is_webqsp({"qid": "WebQTest-0", "question": "q", "entity_linking": {}})
        True
    """
    return "qid" in record and "question" in record and ("answer" in record or "entity_linking" in record)


def _webqsp_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    sparql = rec.get("sparql_query")
    item = {
        "id": str(rec.get("qid", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": entities_of(rec.get("entity_linking"), where),
        "answers": answers_of(rec.get("answer"), where),
        "actions": sparql_actions(sparql) if isinstance(sparql, str) else None,
        "table": None,
        "source": "webqsp",
        "kind": None,
    }
    if isinstance(sparql, str):
        item["gold_query"] = {"sparql": sparql}
    return item


@dataset_format(
    "webqsp",
    shape="records",
    priority=30,
    detect=is_webqsp,
    known="WebQSP processed JSON (qid, question, entity_linking, answer)",
    gold="the record's answer list",
    smoke=_SMOKE,
)
def load_webqsp(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a WebQSP processed file; ids are the qids.

    Example:
        >>> from pathlib import Path
        >>> rec = {"qid": "WebQTest-0", "question": "q", "entity_linking": {"Jamaica": "m.03_r3"}, "answer": ["m.01428y"]}
        >>> [(i["id"], i["entities"], i["answers"]) for i in load_webqsp(Source(Path("t.json"), "", "webqsp", [rec]))]
        [('WebQTest-0', {'Jamaica': 'm.03_r3'}, ['m.01428y'])]
    """
    for index, rec in source.each():
        yield _webqsp_item(rec, index, source.stem)
