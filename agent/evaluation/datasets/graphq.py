"""The ``graphq`` format: GraphQuestions in GrailQA's JSON (``graphquestions_v1_fb15_*.json``).

The records of :mod:`agent.evaluation.datasets.grailqa` without ``level``
(QueryAgent's code reads the same fields: ``answer[].answer_argument``,
``graph_query``, ``sparql_query``); the original release's answers
(Freebase names) load too. Its items have no kind.

Example:
    >>> is_graphq({"qid": 1, "question": "q", "graph_query": {}}), is_graphq({"qid": 1, "question": "q"})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent.evaluation.datasets.grailqa import grail_items, is_grail_like
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["is_graphq", "load_graphq"]


def is_graphq(record: Mapping[str, Any]) -> bool:
    """A GraphQ record: GrailQA-style (tried after GrailQA, which needs a ``level``).

    Example:
        >>> is_graphq({"qid": 1, "question": "q", "s_expression": "(AND ...)", "level": "i.i.d."})
        True
    """
    return is_grail_like(record)


@dataset_format(
    "graphq",
    shape="records",
    priority=25,
    detect=is_graphq,
    family="grailqa",
    gold="answer[].answer_argument (labelled by entity_name)",
)
def load_graphq(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a GraphQ file (see :func:`~agent.evaluation.datasets.grailqa.grail_items`).

    Example:
        >>> from pathlib import Path
        >>> rec = {"qid": 7, "question": "q", "answer": ["Paris"], "graph_query": {}}
        >>> [(i["id"], i["answers"], i["kind"]) for i in load_graphq(Source(Path("t.json"), "", "graphq", [rec]))]
        [('7', ['Paris'], None)]
    """
    return grail_items(source)
