"""Smoke runs: the whole ``pyql eval`` pipeline on a few items of each benchmark, without Freebase or an LLM.

For each benchmark (:data:`SMOKE`) a handful of real items (the fixtures in
``tests/data/``, in the dataset's published format) is loaded by
:mod:`agent.datasets`, a tiny KB is built from the items' own gold queries
(:func:`gold_turtle`: GrailQA/GraphQ ``graph_query``, CWQ/WebQSP SPARQL
triple patterns; MetaQA uses its ``kb.txt``; table questions carry their
table), and :class:`agent.llm.ScriptedLLM` replays each item's gold action
chain (:func:`agent.datasets.graph_query_actions` and friends) through the
real agent, runner, metrics and ``summary.md``. Every item should score 1.

One command per benchmark::

    python -m agent.smoke grailqa --out /tmp/smoke-grailqa

Example:
    >>> import tempfile
    >>> outcome = smoke_run("metaqa-1hop", tempfile.mkdtemp())
    >>> outcome.metrics.questions, outcome.metrics.hit1
    (5, 1.0)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

import rdflib

from agent.datasets import DatasetError, load_dataset
from agent.llm import LLMConfig, ScriptedLLM
from agent.metrics import summary_markdown_path
from agent.runner import EvalOutcome, RunSettings, run_eval, summary_text
from pyql.lines import split_lines

__all__ = ["SMOKE", "SmokeError", "gold_replies", "gold_turtle", "main", "smoke_run"]

FB = "http://rdf.freebase.com/ns/"
_NAME = rdflib.URIRef(FB + "type.object.name")
_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")
_TRIPLE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s*\.$")

#: Benchmark → data file, optional entity-linking file, KB, profile and gold-action file (paths
#: relative to the fixtures folder). KB ``gold``: a tiny KB built from the items' gold queries;
#: None: table questions. GrailQA runs with its gold entities (the graph query's entity nodes), as
#: the linking fixture only covers some of its items.
SMOKE: dict[str, dict[str, Any]] = {
    "grailqa": {"data": "grailqa/grailqa_v1.0_dev.json", "kb": "gold", "profile": "freebase"},
    "webqsp": {"data": "webqsp/WebQSP_test_processed.json", "kb": "gold", "profile": "freebase"},
    "cwq": {"data": "cwq/ComplexWebQuestions_sample.json", "kb": "gold", "profile": "freebase"},
    "metaqa-1hop": {"data": "metaqa/1-hop/vanilla/qa_test.txt", "kb": "metaqa:metaqa/kb.txt", "profile": "generic"},
    "wikisql": {"data": "wikisql/dev.jsonl", "kb": None, "profile": "freebase"},
    "wtq": {"data": "wtq/data/training-before300.tsv", "kb": None, "profile": "freebase", "actions": "wtq/gold_actions.json"},
}


class SmokeError(DatasetError):
    """A smoke run cannot start (unknown benchmark, fixtures not found).

    Example:
        >>> SmokeError("x").kind
        'bad_dataset'
    """


def fixtures_dir() -> Path:
    """The fixtures of a source checkout (``tests/data``)."""
    return Path(__file__).resolve().parents[1] / "tests" / "data"


def _node(text: str) -> rdflib.term.Node:
    if "^^" in text:
        lexical, _, datatype = text.partition("^^")
        return rdflib.Literal(lexical, datatype=rdflib.URIRef(datatype))
    return rdflib.URIRef(FB + text)


def _answer_node(answer: Any) -> tuple[rdflib.term.Node, str | None]:
    value = answer.get("value") if isinstance(answer, Mapping) else answer
    label = answer.get("label") if isinstance(answer, Mapping) else None
    text = str(value)
    if _MID.match(text):
        return rdflib.URIRef(FB + text), label or text  # named (by its mid if no label is known), not a CVT
    return rdflib.Literal(text), None


def _add_graph_query(graph: rdflib.Graph, item: Mapping[str, Any]) -> None:
    gq = (item.get("gold_query") or {}).get("graph_query") or {}
    nodes = {n["nid"]: n for n in gq.get("nodes") or []}
    answers = [_answer_node(a) for a in item.get("answers") or []]
    for node, label in answers:
        if label:
            graph.add((node, _NAME, rdflib.Literal(label, lang="en")))
    for choice, (answer, _) in enumerate(answers):
        terms: dict[Any, rdflib.term.Node] = {}
        for nid, node in nodes.items():
            if node.get("question_node") == 1:
                terms[nid] = answer
            elif node.get("node_type") in ("entity", "literal"):
                terms[nid] = _node(str(node["id"]))
                if node.get("node_type") == "entity" and node.get("friendly_name"):
                    graph.add((terms[nid], _NAME, rdflib.Literal(node["friendly_name"], lang="en")))
            else:
                terms[nid] = rdflib.URIRef(f"{FB}m.smoke_{item['id']}_{nid}_{choice}")
        for edge in gq.get("edges") or []:
            graph.add((terms[edge["start"]], rdflib.URIRef(FB + edge["relation"]), terms[edge["end"]]))


def _add_sparql(graph: rdflib.Graph, item: Mapping[str, Any]) -> None:
    sparql = (item.get("gold_query") or {}).get("sparql") or ""
    answers = [_answer_node(a) for a in item.get("answers") or []]
    for node, label in answers:
        if label:
            graph.add((node, _NAME, rdflib.Literal(label, lang="en")))
    for choice, (answer, _) in enumerate(answers):
        fresh: dict[str, rdflib.term.Node] = {"?x": answer}
        for raw in split_lines(sparql):
            match = _TRIPLE.match(raw.strip())
            if not match or raw.strip().upper().startswith(("FILTER", "PREFIX", "SELECT")):
                continue
            terms = []
            for text in match.groups():
                if text.startswith("?"):
                    terms.append(fresh.setdefault(text, rdflib.URIRef(f"{FB}m.smoke_{item['id']}_{len(fresh)}_{choice}")))
                else:
                    terms.append(_node(text[3:] if text.startswith("ns:") else text))
            graph.add(tuple(terms))  # type: ignore[arg-type]


def gold_turtle(items: Sequence[Mapping[str, Any]]) -> str:
    """A tiny Freebase-style KB (Turtle) holding exactly what the items' gold queries need.

    Variables of a gold query become fresh unnamed nodes (CVT-like), the
    answer variable each gold answer (named by its label), the linked
    entities keep their mids and names.

    Raises:
        SmokeError: an item has no gold query to build from.

    Example:
        >>> item = {"id": "1", "answers": [{"value": "m.04rydm", "label": "TransAdelaide"}], "gold_query": {"graph_query": {
        ...     "nodes": [{"nid": 0, "node_type": "class", "question_node": 1},
        ...               {"nid": 1, "node_type": "entity", "id": "m.03qcvdj", "friendly_name": "Semaphore railway line"}],
        ...     "edges": [{"start": 0, "end": 1, "relation": "rail.rail_network.railways"}]}}}
        >>> "ns:m.04rydm ns:rail.rail_network.railways ns:m.03qcvdj" in gold_turtle([item])
        True
    """
    graph = rdflib.Graph()
    graph.bind("ns", FB)
    for item in items:
        gold = item.get("gold_query") or {}
        if gold.get("graph_query"):
            _add_graph_query(graph, item)
        elif gold.get("sparql"):
            _add_sparql(graph, item)
        else:
            raise SmokeError(f"item {item.get('id')!r} has no gold graph_query or SPARQL to build a KB from")
    return graph.serialize(format="turtle")


def gold_replies(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """The LLM replies that replay each item's gold actions, in order (``Action N: ...``).

    Raises:
        SmokeError: an item has no gold action chain.

    Example:
        >>> gold_replies([{"id": "q", "actions": ["set_answer(?x)", "execute()"]}])
        [' Following the gold query.\\nAction 1: set_answer(?x)', ' Following the gold query.\\nAction 2: execute()']
    """
    replies = []
    for item in items:
        actions = item.get("actions")
        if not actions:
            raise SmokeError(f"item {item.get('id')!r} has no gold action chain to replay")
        replies += [f" Following the gold query.\nAction {n}: {a}" for n, a in enumerate(actions, 1)]
    return replies


def smoke_run(
    benchmark: str,
    out_dir: str | Path,
    *,
    data_dir: str | Path | None = None,
    limit: int = 5,
    feedback: str = "eraser",
    linking: str | Path | None = None,
    progress: TextIO | None = None,
) -> EvalOutcome:
    """Run ``pyql eval``'s pipeline on the first ``limit`` items of a benchmark's fixture (see the module docstring).

    Writes ``smoke.jsonl``, its summary JSON and ``summary.md`` in ``out_dir``;
    ``linking`` replaces the benchmark's entity-linking file (if any).

    Raises:
        SmokeError: an unknown benchmark, or the fixtures are not there.
    """
    if benchmark not in SMOKE:
        raise SmokeError(f"no smoke run for {benchmark!r}; choose one of {', '.join(SMOKE)}")
    spec = SMOKE[benchmark]
    root = Path(data_dir) if data_dir is not None else fixtures_dir()
    data = root / spec["data"]
    if not data.is_file():
        raise SmokeError(f"smoke fixture not found: {data} (the fixtures live in the source checkout's tests/data; give --data)")
    if linking is None and spec.get("linking"):
        linking = root / spec["linking"]
    items = [dict(i) for i in load_dataset(data, limit=limit, linking=linking).items]
    if spec.get("actions"):
        chains = json.loads((root / spec["actions"]).read_text(encoding="utf-8"))
        items = [dict(i, actions=chains[i["id"]]) for i in items if i["id"] in chains]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kb: Any = None
    if spec["kb"] == "gold":
        kb_file = out / "gold_kb.ttl"
        kb_file.write_text(gold_turtle(items), encoding="utf-8")
        kb = str(kb_file)
    elif spec["kb"]:
        kind, _, rel = str(spec["kb"]).partition(":")
        kb = f"{kind}:{root / rel}"
    llm = ScriptedLLM(gold_replies(items), config=LLMConfig(mode="completion"), model="gold-replay")
    settings = RunSettings(kb=kb, profile=spec["profile"], feedback=feedback)
    run = out / "smoke.jsonl"
    if run.exists():
        run.unlink()
    return run_eval(items, run, llm, settings, progress=progress, dataset=str(data))


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``python -m agent.smoke BENCHMARK [--out DIR] [--data DIR]``: one smoke run, its summary printed."""
    out = out if out is not None else sys.stdout
    parser = argparse.ArgumentParser(prog="python -m agent.smoke", description="replay gold actions on a benchmark's fixtures")
    parser.add_argument("benchmark", choices=sorted(SMOKE))
    parser.add_argument("--out", default="smoke-runs", help="folder for the run file, summaries and the gold KB")
    parser.add_argument("--data", help="the fixtures folder (default: tests/data of the source checkout)")
    args = parser.parse_args(argv)
    try:
        outcome = smoke_run(args.benchmark, Path(args.out) / args.benchmark, data_dir=args.data, progress=sys.stderr)
    except DatasetError as exc:
        print(f"python -m agent.smoke: {exc}", file=sys.stderr)
        return 2
    print(summary_text(outcome.records, outcome.metrics), file=out)
    print(f"run: {outcome.path}; summary: {outcome.summary_file}; table: {summary_markdown_path(outcome.summary_file)}", file=out)
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    sys.exit(main())
