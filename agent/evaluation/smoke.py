"""Smoke runs: the whole ``pyql eval`` pipeline on a few items of each benchmark, without Freebase or an LLM.

For each benchmark (:data:`SMOKE`: the smoke fixtures the data set formats
register) a handful of real items (the fixtures in ``tests/data/``, in the
dataset's published format) is loaded by
:mod:`agent.evaluation.datasets`, a tiny KB is built from the items' own gold queries
(:func:`gold_turtle`: GrailQA/GraphQ ``graph_query``, CWQ/WebQSP SPARQL
triple patterns; MetaQA 1-hop uses a ``kb.txt`` excerpt, 2/3-hop a
``kb.txt`` built from the items' question types and answers,
:func:`metaqa_kb_lines`; table questions carry their table), and
:class:`agent.llm.scripted.ScriptedLLM` replays each item's gold action chain
(:func:`agent.evaluation.datasets.graph_query_actions` and friends) through the real
agent, runner, metrics and ``summary.md``; with ``method="readi"`` it
replays Readi's reasoning paths and QA answer instead
(:func:`readi_replies`). Every item should score 1.

One command per benchmark::

    python -m agent.evaluation.smoke grailqa --out /tmp/smoke-grailqa
    python -m agent.evaluation.smoke metaqa-3hop --method readi

Example:
    >>> import tempfile
    >>> outcome = smoke_run("metaqa-1hop", tempfile.mkdtemp())
    >>> outcome.metrics.questions, outcome.metrics.hit1
    (5, 1.0)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import rdflib

from agent.errors import SmokeError  # noqa: F401 (defined in agent/errors.py)
from agent.evaluation.datasets import (
    DatasetError,
    formats,
    load_dataset,
    metaqa_relation,
)
from agent.evaluation.metrics import summary_markdown_path
from agent.evaluation.runner import EvalOutcome, RunSettings, run_eval, summary_text
from agent.llm.config import LLMConfig
from agent.llm.scripted import ScriptedLLM
from pyql.lines import split_lines

__all__ = [
    "SMOKE",
    "SMOKE_METHODS",
    "SmokeError",
    "gold_replies",
    "gold_turtle",
    "main",
    "metaqa_kb_lines",
    "readi_replies",
    "smoke_run",
]

FB = "http://rdf.freebase.com/ns/"
_NAME = rdflib.URIRef(FB + "type.object.name")
_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")
_TRIPLE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s*\.$")

#: Benchmark → data file, optional entity-linking file, KB, profile, gold-action files and action set (paths
#: relative to the fixtures folder), as each data set format registers them (the ``smoke`` of its
#: :class:`~agent.evaluation.datasets.DatasetFormat`). KB ``gold``: a tiny KB built from the items'
#: gold queries; ``metaqa-items``: a tiny MetaQA ``kb.txt`` built from the items' question types and
#: answers (:func:`metaqa_kb_lines`); None: table questions. GrailQA runs with its gold entities (the
#: graph query's entity nodes), as the linking fixture leaves one of its items out on purpose.
SMOKE: dict[str, dict[str, Any]] = {
    benchmark: dict(spec) for fmt in formats() for benchmark, spec in fmt.smoke.items()
}

#: The ``--method`` values a smoke run replays: QueryAgent's action chains, or Readi's paths.
SMOKE_METHODS: tuple[str, ...] = ("queryagent", "readi")


def fixtures_dir() -> Path:
    """The fixtures of a source checkout (``tests/data``)."""
    return Path(__file__).resolve().parents[2] / "tests" / "data"


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


def _literal_meeting(literal: str, function: str) -> rdflib.Literal:
    """A value that meets a literal node's function: the literal itself for ``>=``, ``<=`` and the
    superlatives (every gold answer then holds the one extreme value), one more or less for ``>``/``<``."""
    lexical, _, datatype = literal.partition("^^")
    step = {">": 1, "<": -1}.get(function, 0)
    if step:
        try:
            number = float(lexical) + step
            lexical = str(int(number)) if number.is_integer() and "int" in datatype else repr(number)
        except ValueError:
            pass
    return rdflib.Literal(lexical, datatype=rdflib.URIRef(datatype) if datatype else None)


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
            elif node.get("node_type") == "literal" and (node.get("function") or "none") != "none":
                terms[nid] = _literal_meeting(str(node["id"]), str(node["function"]))
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
                    terms.append(_node(text.removeprefix("ns:")))
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


def metaqa_kb_lines(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """A tiny MetaQA ``kb.txt`` (``head|relation|tail`` lines) on which each item's question type leads
    from its entity to exactly its answers.

    Each hop of the type (``actor_to_movie_to_director``) is one line per
    node; the nodes between the entity and the answers are fresh ones named
    ``smoke <kind> <item id>`` (MetaQA's KB is not shipped here), and the
    last hop ends on every answer.

    Raises:
        SmokeError: an item without a MetaQA question type, or a hop MetaQA does not have.

    Example:
        >>> metaqa_kb_lines([{"id": "q", "kind": "actor_to_movie_to_director", "answers": ["Sam Mendes"],
        ...                   "entities": {"John Krasinski": "mq:John_Krasinski"}}])
        ['smoke movie q-1|starred_actors|John Krasinski', 'smoke movie q-1|directed_by|Sam Mendes']
    """
    lines: list[str] = []
    for item in items:
        kinds = str(item.get("kind") or "").split("_to_")
        if len(kinds) < 2 or len(item.get("entities") or {}) != 1:
            raise SmokeError(f"item {item.get('id')!r} has no MetaQA question type (qa_*_qtype.txt) to build a KB from")
        current = [next(iter(item["entities"]))]
        for n, (a, b) in enumerate(itertools.pairwise(kinds), 1):
            last = n == len(kinds) - 1
            nxt = [str(x) for x in item.get("answers") or []] if last else [f"smoke {b} {item['id']}-{n}"]
            relation = metaqa_relation(a, b)
            if relation is None:
                raise SmokeError(f"item {item.get('id')!r}: MetaQA has no {a} → {b} hop")
            for head in current:
                for tail in nxt:
                    lines.append(f"{tail}|{relation}|{head}" if b == "movie" else f"{head}|{relation}|{tail}")
            current = nxt
    return list(dict.fromkeys(lines))


_ADD_FACT = re.compile(r"^add_fact\((.+?), (.+?), (.+)\)$")


def _readi_paths(item: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Readi's reasoning paths of an item's gold action chain: from each linked entity of its facts
    to the answer variable, the relations on the way (Readi finds their direction itself)."""
    facts = [m.groups() for m in (_ADD_FACT.match(a) for a in item.get("actions") or []) if m]
    answer = next((a[len("set_answer(") : -1] for a in item.get("actions") or [] if a.startswith("set_answer(")), None)
    names = {str(v): str(k) for k, v in (item.get("entities") or {}).items()}
    paths: list[tuple[str, list[str]]] = []
    for start in dict.fromkeys(t for h, _, tl in facts for t in (h, tl) if t in names):
        frontier: list[tuple[str, list[str]]] = [(start, [])]
        seen = {start}
        found = None
        while frontier and found is None:
            node, rels = frontier.pop(0)
            for head, relation, tail in facts:
                for here, there in ((head, tail), (tail, head)):
                    if here == node and there not in seen and (there.startswith("?") or there == answer):
                        seen.add(there)
                        if there == answer:
                            found = rels + [relation]
                        frontier.append((there, rels + [relation]))
        if found:
            paths.append((names[start], found))
    return paths


def readi_replies(items: Sequence[Mapping[str, Any]], tables: Mapping[str, Any] | None = None) -> list[str]:
    """The LLM replies that replay Readi on each item: its reasoning path(s), then the QA answer.

    KB items: one path per linked entity, from the gold action chain
    (:func:`_readi_paths`); table items: the ``Chosen Headers`` /
    ``Constrains`` reply given in ``tables`` (item id → text). The QA reply
    names the gold answers (labels where known), as a model that read the
    instantiated triples would.

    Raises:
        SmokeError: an item with no path to replay.

    Example:
        >>> readi_replies([{"id": "q", "entities": {"Jamaica": "m.03_r3"}, "answers": [{"value": "m.04ygk0", "label": "Jamaican English"}],
        ...                 "actions": ["add_fact(m.03_r3, location.country.languages_spoken, ?x)", "set_answer(?x)", "execute()"]}])
        [' Following the gold query.\\nPath: Jamaica -> location.country.languages_spoken', ' So the answer is {Jamaican English}.']
    """
    replies = []
    for item in items:
        gold = [a.get("label") or a.get("value") if isinstance(a, Mapping) else a for a in item.get("answers") or []]
        if item.get("table") is not None:
            text = (tables or {}).get(str(item["id"]))
            if not text:
                raise SmokeError(f"item {item.get('id')!r} has no gold table path (Chosen Headers) to replay")
            replies += [f" Following the gold query.\n{text}", "Thought: from the selected rows.\nAnswer: " + repr([str(g) for g in gold])]
            continue
        paths = _readi_paths(item)
        if not paths:
            raise SmokeError(f"item {item.get('id')!r} has no reasoning path to replay (no linked entity in its gold chain)")
        lines = "\n".join(" -> ".join([name, *rels]) for name, rels in paths)
        replies += [f" Following the gold query.\nPath: {lines}", " So the answer is " + ", ".join(f"{{{g}}}" for g in gold) + "."]
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
    method: str = "queryagent",
) -> EvalOutcome:
    """Run ``pyql eval``'s pipeline on the first ``limit`` items of a benchmark's fixture (see the module docstring).

    Writes ``smoke.jsonl``, its summary JSON and ``summary.md`` in ``out_dir``;
    ``linking`` replaces the benchmark's entity-linking file (if any).
    ``method`` ``readi`` replays Readi's reasoning paths instead of
    QueryAgent's action chains (:func:`readi_replies`). Items whose gold
    query has no replayable chain (a GrailQA question without a topic
    entity) are left out; the others must score 1. The spec's
    ``action_set`` (default ``sparql``) is the environment's: GrailQA's
    superlatives keep ties, an argument of ``sparql-all``.

    Raises:
        SmokeError: an unknown benchmark or method, or the fixtures are not there.
    """
    if benchmark not in SMOKE:
        raise SmokeError(f"no smoke run for {benchmark!r}; choose one of {', '.join(SMOKE)}")
    if method not in SMOKE_METHODS:
        raise SmokeError(f"no smoke run with method {method!r}; choose one of {', '.join(SMOKE_METHODS)}")
    spec = SMOKE[benchmark]
    root = Path(data_dir) if data_dir is not None else fixtures_dir()
    data = root / spec["data"]
    if not data.is_file():
        raise SmokeError(f"smoke fixture not found: {data} (the fixtures live in the source checkout's tests/data; give --data)")
    if linking is None and spec.get("linking"):
        linking = root / spec["linking"]
    items, tables = _replayable_items(spec, root, load_dataset(data, limit=limit, linking=linking).items, method)
    if not items:
        raise SmokeError(f"no item of {data} has a gold chain to replay")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kb = _smoke_kb(spec, items, root, out)
    replies = readi_replies(items, tables) if method == "readi" else gold_replies(items)
    llm = ScriptedLLM(replies, config=LLMConfig(mode="completion"), model="gold-replay")
    settings = RunSettings(kb=kb, profile=spec["profile"], feedback=feedback, method=method, action_set=spec.get("action_set", "sparql"))
    run = out / "smoke.jsonl"
    if run.exists():
        run.unlink()
    return run_eval(items, run, llm, settings, progress=progress, dataset=str(data))


def _replayable_items(
    spec: Mapping[str, Any], root: Path, loaded: Sequence[Mapping[str, Any]], method: str
) -> tuple[list[dict[str, Any]], dict[str, str] | None]:
    """The items with a gold chain to replay (the fixture's own action chains replace theirs), and Readi's table paths."""
    items = [dict(i) for i in loaded]
    tables: dict[str, str] | None = None
    if method == "readi" and spec.get("readi"):
        tables = json.loads((root / spec["readi"]).read_text(encoding="utf-8"))
        items = [i for i in items if i["id"] in tables]
    elif spec.get("actions"):
        chains = json.loads((root / spec["actions"]).read_text(encoding="utf-8"))
        items = [dict(i, actions=chains[i["id"]]) for i in items if i["id"] in chains]
    return [i for i in items if i.get("actions") or (tables and i["id"] in tables)], tables


def _smoke_kb(spec: Mapping[str, Any], items: Sequence[Mapping[str, Any]], root: Path, out: Path) -> str | None:
    """The KB spec of a smoke run: a gold KB or a MetaQA ``kb.txt`` written in ``out``, the fixture's KB, or None (tables)."""
    if spec["kb"] == "gold":
        kb_file = out / "gold_kb.ttl"
        kb_file.write_text(gold_turtle(items), encoding="utf-8")
        return str(kb_file)
    if spec["kb"] == "metaqa-items":
        kb_file = out / "kb.txt"
        kb_file.write_text("\n".join(metaqa_kb_lines(items)) + "\n", encoding="utf-8")
        return f"metaqa:{kb_file}"
    if spec["kb"]:
        kind, _, rel = str(spec["kb"]).partition(":")
        return f"{kind}:{root / rel}"
    return None


def default_out_dir() -> Path:
    """Where smoke runs go without ``--out``: ``$XDG_CACHE_HOME/pyql/smoke-runs`` (default ``~/.cache/pyql/smoke-runs``).

    A user cache folder, never the current directory, so a run from a
    checkout leaves the working tree clean.

    Example:
        >>> default_out_dir().parts[-2:]
        ('pyql', 'smoke-runs')
    """
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(cache).expanduser() if cache else Path.home() / ".cache") / "pyql" / "smoke-runs"


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``python -m agent.evaluation.smoke BENCHMARK [--out DIR] [--data DIR] [--method readi]``: one smoke run, its summary printed."""
    out = out if out is not None else sys.stdout
    parser = argparse.ArgumentParser(prog="python -m agent.evaluation.smoke", description="replay gold actions on a benchmark's fixtures")
    parser.add_argument("benchmark", choices=sorted(SMOKE))
    parser.add_argument("--out", default=None, help="folder for the run file, summaries and the gold KB (default: the user cache folder $XDG_CACHE_HOME/pyql/smoke-runs, i.e. ~/.cache/pyql/smoke-runs; never the current directory)")
    parser.add_argument("--data", help="the fixtures folder (default: tests/data of the source checkout)")
    parser.add_argument("--method", choices=SMOKE_METHODS, default="queryagent", help="replay QueryAgent's actions or Readi's paths")
    args = parser.parse_args(argv)
    try:
        folder = args.benchmark if args.method == "queryagent" else f"{args.benchmark}-{args.method}"
        outcome = smoke_run(args.benchmark, Path(args.out or default_out_dir()) / folder, data_dir=args.data, progress=sys.stderr, method=args.method)
    except DatasetError as exc:
        print(f"python -m agent.evaluation.smoke: {exc}", file=sys.stderr)
        return 2
    print(summary_text(outcome.records, outcome.metrics), file=out)
    print(f"run: {outcome.path}; summary: {outcome.summary_file}; table: {summary_markdown_path(outcome.summary_file)}", file=out)
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    sys.exit(main())
