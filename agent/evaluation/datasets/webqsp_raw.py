"""The ``webqsp-raw`` format: the original WebQSP JSON ``{"Questions": [...]}``.

Each question is ``{"QuestionId", "ProcessedQuestion", "Parses":
[{"TopicEntityMid", "TopicEntityName", "Answers": [...]}]}``: the first
parse gives the entity and the answers. Its runs are scored as the
``webqsp`` benchmark.

Example:
    >>> is_webqsp_raw({"Questions": []}), is_webqsp_raw({"Questions": "x"})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["is_webqsp_raw", "load_webqsp_raw"]


def is_webqsp_raw(record: Mapping[str, Any]) -> bool:
    """The whole original WebQSP file: a ``Questions`` list.

    Example:
        >>> is_webqsp_raw({"Version": "1.0", "Questions": [{"QuestionId": "WebQTest-0"}]})
        True
    """
    return "Questions" in record and isinstance(record["Questions"], list)


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


def _benchmark(records: Sequence[Mapping[str, Any]]) -> str:
    return "webqsp"


@dataset_format(
    "webqsp-raw",
    shape="records",
    priority=10,
    detect=is_webqsp_raw,
    known='the original WebQSP JSON ({"Questions": [...]})',
    gold="the first parse's Answers",
    benchmark=_benchmark,
)
def load_webqsp_raw(source: Source) -> Iterator[dict[str, Any]]:
    """The items of the original WebQSP file; ids are the QuestionIds.

    Example:
        >>> from pathlib import Path
        >>> rec = {"Questions": [{"QuestionId": "WebQTest-0", "ProcessedQuestion": "what?",
        ...        "Parses": [{"TopicEntityMid": "m.1", "TopicEntityName": "X", "Answers": [{"AnswerArgument": "m.2", "EntityName": "Y"}]}]}]}
        >>> [(i["id"], i["entities"], i["answers"]) for i in load_webqsp_raw(Source(Path("t.json"), "", "webqsp-raw", [rec]))]
        [('WebQTest-0', {'X': 'm.1'}, [{'value': 'm.2', 'label': 'Y'}])]
    """
    for _, rec in source.each():
        yield from _webqsp_raw_items(rec, source.stem)
