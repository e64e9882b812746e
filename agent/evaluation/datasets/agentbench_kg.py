"""The ``agentbench-kg`` format: AgentBench's knowledge-graph data (``data/knowledgegraph/*.json``).

Records: ``{"question", "qid", "source", "entities": {name: mid},
"s_expression", "actions": ["get_relations(m.0...)", "get_neighbors(...)",
...], "answer": [{"answer_type", "answer_argument", "entity_name"}]}``
(THUDM/AgentBench; the questions come from GrailQA, GraphQuestions and
CWQ, the ``source``). The entities are given by name, as the task shows
them to the model; the id is the qid, the kind the source (``--by
type``); the gold chain is the record's own actions, ending with the last
variable they make as the answer, read by the ``agentbench`` conversion
format (:mod:`pyql.interchange.agentbench`) and written as action lines.
A record whose actions have no chain (a ``union``, a class used as an
entity) loads with no gold chain. AgentBench scores answers by F1 over
``answer_argument`` and counts a question right when the sets are equal
(its ``task.py``): pyql's F1 and EM.

Example:
    >>> rec = {"qid": "1_grailqa", "question": "q", "source": "grailqa", "entities": {"Goat": "m.03fwl"},
    ...        "s_expression": "(JOIN (R a.b.c) m.03fwl)", "actions": ["get_relations(m.03fwl)", "get_neighbors(m.03fwl,a.b.c)"],
    ...        "answer": [{"answer_type": "Entity", "answer_argument": "m.1", "entity_name": "A"}]}
    >>> from pathlib import Path
    >>> item = next(load_agentbench_kg(Source(Path("dev.json"), "", "agentbench-kg", [rec])))
    >>> item["actions"], item["kind"], item["answers"]
    (['add_fact(m.03fwl, a.b.c, ?x0)', 'set_answer(?x0)', 'execute()'], 'grailqa', [{'value': 'm.1', 'label': 'A'}])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.registry import Source, dataset_format
from pyql.errors import PyQLError
from pyql.interchange.agentbench import FUNCTIONS, read_agentbench
from pyql.builder.profiles import FREEBASE

__all__ = ["is_agentbench_kg", "gold_trajectory", "load_agentbench_kg"]

_MAKES_A_VARIABLE = {name for name in FUNCTIONS if name not in ("get_relations", "get_attributes")}


def is_agentbench_kg(record: Mapping[str, Any]) -> bool:
    """An AgentBench knowledge-graph record: a question, entities by name, and AgentBench's ``actions``.

    Example:
        >>> is_agentbench_kg({"qid": 1, "question": "q", "entities": {}, "actions": [], "s_expression": "(AND ...)"})
        True
        >>> is_agentbench_kg({"qid": 1, "question": "q", "s_expression": "(AND ...)"})
        False
        >>> is_agentbench_kg({"qid": 1, "question": "q", "entities": {}, "actions": ["add_fact(?x, a.b.c, m.0a)"]})  # pyql's own
        False
    """
    actions = record.get("actions")
    return (
        "qid" in record
        and "question" in record
        and isinstance(record.get("entities"), Mapping)
        and isinstance(actions, list)
        and all(isinstance(a, str) and a.split("(", 1)[0].strip() in FUNCTIONS for a in actions)
    )


def gold_trajectory(actions: list[Any]) -> str:
    """The record's actions as a trajectory answering with the last variable they make.

    Example:
        >>> print(gold_trajectory(["get_relations(m.0a)", "get_neighbors(m.0a,a.b.c)", "count(#0)"]))
        get_relations(m.0a)
        get_neighbors(m.0a,a.b.c)
        count(#0)
        Final Answer: #1
    """
    made = sum(str(a).split("(", 1)[0].strip() in _MAKES_A_VARIABLE for a in actions)
    return "\n".join([*map(str, actions), f"Final Answer: #{made - 1}"])


def _answers(raw: Any, where: str) -> list[Any]:
    if not isinstance(raw, list):
        raise DatasetError(f"{where}: answer must be a list of {{answer_type, answer_argument, entity_name}}, got {type(raw).__name__}")
    out: list[Any] = []
    for answer in raw:
        if not isinstance(answer, Mapping) or answer.get("answer_argument") in (None, ""):
            raise DatasetError(f"{where}: an answer needs answer_argument (AgentBench format), got {answer!r:.80}")
        label = answer.get("entity_name")
        out.append({"value": str(answer["answer_argument"]), "label": str(label)} if label else str(answer["answer_argument"]))
    return out


def _item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    entities = {str(name): str(mid) for name, mid in rec["entities"].items()}
    try:
        chain: list[str] | None = [*read_agentbench(gold_trajectory(rec["actions"]), entities, FREEBASE).actions(), "execute()"]
    except PyQLError:
        chain = None
    return {
        "id": str(rec.get("qid", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": entities,
        "answers": _answers(rec.get("answer", []), where),
        "actions": chain,
        "table": None,
        "source": "agentbench-kg",
        "kind": str(rec["source"]) if rec.get("source") else None,
        "gold_query": {k: rec[k] for k in ("s_expression", "actions") if k in rec},
    }


@dataset_format(
    "agentbench-kg",
    shape="records",
    priority=15,
    detect=is_agentbench_kg,
    known="AgentBench knowledge-graph JSON (question, qid, source, entities by name, actions, s_expression, answer)",
    gold="answer[].answer_argument (labelled by entity_name)",
)
def load_agentbench_kg(source: Source) -> Iterator[dict[str, Any]]:
    """The items of an AgentBench knowledge-graph file (see the module's docstring).

    Example:
        >>> from pathlib import Path
        >>> rec = {"qid": 2, "question": "q", "entities": {}, "actions": ["union(#0, #1)"], "answer": []}
        >>> next(load_agentbench_kg(Source(Path("t.json"), "", "agentbench-kg", [rec])))["actions"] is None
        True
    """
    for index, rec in source.each():
        yield _item(rec, index, source.stem)
