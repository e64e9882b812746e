"""The ``cwq`` format: ComplexWebQuestions JSON (``ComplexWebQuestions_*.json``).

Records: ``{"ID", "question", "answers": [{"answer", "answer_id",
"aliases"}], "compositionality_type", "sparql", ...}``. A gold answer keeps
its aliases: a prediction matching any alias counts for F1 and Hit@1
(``metrics.answer_keys``), CWQ's headline metric. The kind is the
compositionality type (the ``--by type`` categories). Entities: a
``topic_entity`` field if the file has one (ToG's copy), else the mids of
the gold SPARQL. ToG's copy of the test set has no ``answers`` but the
answer's name as ``answer``: that is the gold then.

Example:
    >>> is_cwq({"ID": "WebQTrn-1_x", "question": "q", "answers": []}), is_cwq({"ID": "x", "question": "q"})
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.chains import sparql_actions
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["is_cwq", "load_cwq"]

_SMOKE = {"cwq": {"data": "cwq/ComplexWebQuestions_sample.json", "kb": "gold", "profile": "freebase"}}


def is_cwq(record: Mapping[str, Any]) -> bool:
    """A CWQ record: ``ID``, ``question`` and one of ``answers``, ``compositionality_type``, ``webqsp_ID``, ``sparql``.

    Example:
        >>> is_cwq({"ID": "WebQTest-832_x", "question": "q", "sparql": "SELECT ..."})
        True
    """
    return "ID" in record and "question" in record and any(
        k in record for k in ("answers", "compositionality_type", "webqsp_ID", "sparql")
    )


def _cwq_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    answers = []
    for a in rec.get("answers") or []:
        if not isinstance(a, Mapping) or not (a.get("answer_id") or a.get("answer")):
            raise DatasetError(f"{where}: a CWQ answer is {{answer, answer_id, aliases}}, got {a!r:.80}")
        answers.append({"value": str(a.get("answer_id") or a.get("answer")), "label": a.get("answer"), "aliases": list(a.get("aliases") or [])})
    if not answers and isinstance(rec.get("answer"), (str, list)):  # ToG's copy of the test set: the answer's name
        answers = [str(a) for a in ([rec["answer"]] if isinstance(rec["answer"], str) else rec["answer"])]
    sparql = str(rec.get("sparql") or "")
    topic = rec.get("topic_entity")
    if isinstance(topic, Mapping):
        entities = {str(name): str(mid) for mid, name in topic.items()}
    else:
        mids = re.findall(r"ns:([mg]\.[0-9a-z_]+)", sparql)
        entities = {mid: mid for mid in dict.fromkeys(mids)}
    return {
        "id": str(rec.get("ID", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": entities,
        "answers": answers,
        "actions": sparql_actions(sparql) if sparql else None,
        "table": None,
        "source": "cwq",
        "kind": str(rec["compositionality_type"]) if rec.get("compositionality_type") else None,
        "gold_query": {"sparql": sparql} if sparql else {},
    }


@dataset_format(
    "cwq",
    shape="records",
    priority=40,
    detect=is_cwq,
    known="ComplexWebQuestions JSON (ID, question, answers)",
    gold="answers[] as {value: answer_id, label: answer, aliases} (an alias match counts), else ToG's answer names",
    smoke=_SMOKE,
)
def load_cwq(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a CWQ file; ids are the IDs, the kind the compositionality type.

    Example:
        >>> from pathlib import Path
        >>> rec = {"ID": "WebQTrn-1_x", "question": "q", "compositionality_type": "composition",
        ...        "answers": [{"answer": "Washington, D.C.", "answer_id": "m.0rh6k", "aliases": ["The District"]}]}
        >>> [(i["kind"], i["answers"]) for i in load_cwq(Source(Path("t.json"), "", "cwq", [rec]))]
        [('composition', [{'value': 'm.0rh6k', 'label': 'Washington, D.C.', 'aliases': ['The District']}])]
    """
    for index, rec in source.each():
        yield _cwq_item(rec, index, source.stem)
