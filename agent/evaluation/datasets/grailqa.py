"""The ``grailqa`` format: GrailQA JSON (``grailqa_v1.0_dev.json``), and what GraphQ shares with it.

Records: ``{"qid", "question", "answer": [{"answer_type", "answer_argument",
"entity_name"}], "function", "graph_query", "s_expression", "sparql_query",
"level"}``. The id is the qid, the kind the level (i.i.d./compositional/
zero-shot, the ``--by level`` categories, in that order); the entities are
the graph query's entity nodes (:func:`graph_query_entities`) unless a
linking file is given; the gold chain comes from the graph query
(:func:`graph_query_actions`). A record without ``level`` is GraphQ
(:mod:`agent.evaluation.datasets.graphq`); the two may share a file.

Example:
    >>> is_grail_like({"qid": 1, "question": "q", "s_expression": "(AND ...)"}), is_grailqa({"qid": 1, "question": "q", "graph_query": {}})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.chains import chain_actions
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["grail_items", "graph_query_actions", "graph_query_entities", "is_grail_like", "is_grailqa", "load_grailqa"]

# The superlatives' chains keep ties (add_max(?v, *, 0, 1, true)), an argument of the full SPARQL action set.
_SMOKE = {"grailqa": {"data": "grailqa/grailqa_v1.0_dev.json", "kb": "gold", "profile": "freebase", "action_set": "sparql-all"}}

#: GrailQA/GraphQ node functions on a literal node that PyQL expresses: superlatives and comparisons.
_ARG_FUNCTIONS = {"argmax": "add_max", "argmin": "add_min"}
_COMPARISONS = (">", ">=", "<", "<=")


def graph_query_actions(graph_query: Any, function: str | None = "none") -> list[str] | None:
    """The gold action chain of a GrailQA/GraphQ ``graph_query``.

    Class nodes become variables ``?x<nid>``, entity nodes their ids; the
    question node is the answer. A literal node with a function is a
    variable too: ``argmax``/``argmin`` become ``add_max``/``add_min`` on it
    keeping ties (``add_max(?v, *, 0, 1, true)``: every entity at the
    extreme, as GrailQA's ARGMAX and the S-expression converter read it; the
    ties argument is in the full SPARQL action set, ``--action-set
    sparql-all``), a comparison (``>``, ``>=``, ``<``, ``<=``) an
    ``add_filter`` against the literal's value. None for what the action
    language cannot replay exactly: counting, a literal without a function,
    and a graph query with no entity to start from.

    Example:
        >>> gq = {"nodes": [{"nid": 0, "node_type": "class", "question_node": 1},
        ...                 {"nid": 1, "node_type": "entity", "id": "m.03qcvdj", "question_node": 0}],
        ...       "edges": [{"start": 0, "end": 1, "relation": "rail.rail_network.railways"}]}
        >>> graph_query_actions(gq)
        ['get_relation(m.03qcvdj)', 'add_fact(?x0, rail.rail_network.railways, m.03qcvdj)', 'set_answer(?x0)', 'execute()']
        >>> gq["nodes"].append({"nid": 2, "node_type": "literal", "id": "1.5^^http://www.w3.org/2001/XMLSchema#float", "function": ">="})
        >>> gq["edges"].append({"start": 0, "end": 2, "relation": "rail.rail_network.length"})
        >>> graph_query_actions(gq, ">=")[-3:]
        ['add_filter(?x2, >=, 1.5)', 'set_answer(?x0)', 'execute()']
    """
    if function not in (None, "none", *_ARG_FUNCTIONS, *_COMPARISONS) or not isinstance(graph_query, Mapping):
        return None
    nodes = {n.get("nid"): n for n in graph_query.get("nodes") or [] if isinstance(n, Mapping)}
    terms: dict[Any, str] = {}
    extra: list[str] = []
    answer = None
    for nid, node in nodes.items():
        node_function = node.get("function") or "none"
        if node.get("node_type") == "entity" and node_function == "none":
            terms[nid] = str(node.get("id"))
        elif node.get("node_type") == "class" and node_function == "none":
            terms[nid] = f"?x{nid}"
        elif node.get("node_type") == "literal" and node_function in _ARG_FUNCTIONS:
            terms[nid] = f"?x{nid}"
            extra.append(f"{_ARG_FUNCTIONS[node_function]}(?x{nid}, *, 0, 1, true)")
        elif node.get("node_type") == "literal" and node_function in _COMPARISONS:
            terms[nid] = f"?x{nid}"
            extra.append(f"add_filter(?x{nid}, {node_function}, {str(node.get('id')).partition('^^')[0]})")
        else:
            return None
        if node.get("question_node") == 1:
            answer = terms[nid]
    facts = []
    for edge in graph_query.get("edges") or []:
        if edge.get("start") not in terms or edge.get("end") not in terms:
            return None
        facts.append((terms[edge["start"]], str(edge.get("relation")), terms[edge["end"]]))
    if answer is None or not facts:
        return None
    chain = chain_actions(facts, answer)
    return None if chain is None else chain[:-2] + extra + chain[-2:]


def is_grail_like(record: Mapping[str, Any]) -> bool:
    """A GrailQA-style record (GrailQA or GraphQ): ``qid``, ``question`` and a ``graph_query`` or ``s_expression``.

    Example:
        >>> is_grail_like({"qid": 1, "question": "q", "answer": []})
        False
    """
    return "qid" in record and "question" in record and ("graph_query" in record or "s_expression" in record)


def is_grailqa(record: Mapping[str, Any]) -> bool:
    """A GrailQA record: GrailQA-style with a ``level``.

    Example:
        >>> is_grailqa({"qid": 1, "question": "q", "graph_query": {}, "level": "i.i.d."})
        True
    """
    return is_grail_like(record) and "level" in record


def graph_query_entities(graph_query: Any) -> dict[str, str]:
    """The gold entities of a ``graph_query``: friendly name → id of its entity nodes.

    Example:
        >>> graph_query_entities({"nodes": [{"node_type": "entity", "id": "m.0pm2fgf", "friendly_name": "The Telephone / The Medium"},
        ...                                 {"node_type": "class", "id": "opera.opera_designer_gig"}]})
        {'The Telephone / The Medium': 'm.0pm2fgf'}
    """
    if not isinstance(graph_query, Mapping):
        return {}
    return {
        str(n.get("friendly_name") or n.get("id")).strip(): str(n.get("id"))
        for n in graph_query.get("nodes") or []
        if isinstance(n, Mapping) and n.get("node_type") == "entity" and n.get("id")
    }


def _grail_answer(answer: Any, where: str) -> Any:
    if isinstance(answer, Mapping):
        value = answer.get("answer_argument")
        if value in (None, ""):
            raise DatasetError(f"{where}: an answer needs answer_argument (GrailQA format), got {dict(answer)!r:.80}")
        label = answer.get("entity_name")
        return {"value": str(value), "label": str(label)} if label else str(value)
    return str(answer)


def _grail_item(rec: Mapping[str, Any], index: int, stem: str, fmt: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    raw = rec.get("answer")
    if raw is not None and not isinstance(raw, list):
        raise DatasetError(f"{where}: answer must be a list of {{answer_type, answer_argument, entity_name}}, got {type(raw).__name__}")
    graph_query = rec.get("graph_query")
    return {
        "id": str(rec.get("qid", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": graph_query_entities(graph_query),
        "answers": [_grail_answer(a, where) for a in raw or []],
        "actions": graph_query_actions(graph_query, rec.get("function", "none")),
        "table": None,
        "source": fmt,
        "kind": str(rec["level"]) if fmt == "grailqa" and rec.get("level") else None,
        "gold_query": {k: rec[k] for k in ("s_expression", "sparql_query", "graph_query") if k in rec},
    }


def grail_items(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a GrailQA-style file, their ``source`` the file's format (``grailqa`` or ``graphq``).

    Example:
        >>> from pathlib import Path
        >>> rec = {"qid": 7, "question": "q", "answer": [{"answer_argument": "m.1", "entity_name": "A"}], "graph_query": {}}
        >>> [(i["id"], i["source"], i["answers"]) for i in grail_items(Source(Path("t.json"), "", "graphq", [rec]))]
        [('7', 'graphq', [{'value': 'm.1', 'label': 'A'}])]
    """
    for index, rec in source.each():
        yield _grail_item(rec, index, source.stem, source.format)


@dataset_format(
    "grailqa",
    shape="records",
    priority=20,
    detect=is_grailqa,
    known="GrailQA/GraphQ JSON (qid, question, answer, graph_query/s_expression[, level])",
    family="grailqa",
    gold="answer[].answer_argument (labelled by entity_name)",
    category="level",
    category_order=("i.i.d.", "compositional", "zero-shot"),
    smoke=_SMOKE,
)
def load_grailqa(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a GrailQA file (see :func:`grail_items`); the kind is the level.

    Example:
        >>> from pathlib import Path
        >>> rec = {"qid": 7, "question": "q", "answer": [], "s_expression": "(AND ...)", "level": "zero-shot"}
        >>> [i["kind"] for i in load_grailqa(Source(Path("t.json"), "", "grailqa", [rec]))]
        ['zero-shot']
    """
    return grail_items(source)
