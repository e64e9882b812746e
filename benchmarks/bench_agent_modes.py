"""Action modes of QueryAgent with the local model on the demo questions (issue 11's ablation).

Runs ``agent.evaluation.runner.run_eval`` over ``pyql/data/demo_questions.jsonl`` (all
37 questions, or the first ``--questions``) in one configuration per call and
prints one markdown row per run file in ``--out-dir``: F1, Hit@1, success,
invalid-action rate, steps, LLM calls, prompt tokens, KB queries and seconds
per question, plus the model time (the LLM seconds) per question and the
number of questions answered exactly (F1 = 1). The LLM is the configured
server (``OPENAI_BASE_URL``) or the local Gemma 3 270M, started on loopback;
``--llm first`` (choose mode only) is no model at all, a stub that always
answers ``1`` (:class:`agent.llm.scripted.FirstChoiceLLM`: what the list's ordering does alone).

``--dataset webqsp`` is the held-out set: real WebQSP test questions
(``WebQSP_test_processed.json`` of the shared data directory, or ``--data``).
There is no Freebase here, so one KB is built from the gold SPARQL of a pool
of items (the first ``--pool`` of the file, default all; :func:`heldout`,
with :func:`agent.evaluation.smoke.gold_turtle`) and written to ``--out-dir`` as
``webqsp_gold_kb.ttl``; items it cannot be built from are left out, each with
its reason. The questions asked are the first ``--questions`` (``--items``)
usable items in file order. An entity shared between questions carries the
other questions' relations, which are the distractors; there are far fewer
than in Freebase.

Usage::

    python benchmarks/bench_agent_modes.py run choose --questions 37
    python benchmarks/bench_agent_modes.py run grammar --questions 8
    python benchmarks/bench_agent_modes.py run text --advice block --no-escalation --name text-without-1-2
    python benchmarks/bench_agent_modes.py run choose --order kind --questions 8 --name choose-unranked
    python benchmarks/bench_agent_modes.py run choose --llm first   # the run choose-first-no-llm
    python benchmarks/bench_agent_modes.py run choose --dataset webqsp --items 40 --out-dir runs/modes-webqsp
    python benchmarks/bench_agent_modes.py report
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import rdflib

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.evaluation.datasets import iter_items, load_dataset
from agent.evaluation.metrics import aggregate, record_scores
from agent.evaluation.runner import RunSettings, read_run, run_eval
from agent.evaluation.smoke import FB, SmokeError, gold_turtle
from agent.llm.scripted import FirstChoiceLLM
from pyql.lines import split_lines

NAME = rdflib.URIRef(FB + "type.object.name")
#: A gold-query line gold_turtle reads as a triple pattern (as agent.evaluation.smoke does), and the starts of filter lines it skips.
TRIPLE_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s*\.$")
FILTER_STARTS = ("FILTER", "PREFIX", "SELECT", "EXISTS", "NOT EXISTS", "(")

DEMO = ROOT / "pyql" / "data" / "demo_questions.jsonl"
#: The shared data directory (as in tests/shared_data.py): $PYQL_SHARED_DATA, else ../shared/data beside the repository.
SHARED_DATA = Path(os.environ.get("PYQL_SHARED_DATA") or ROOT.parent / "shared" / "data")
WEBQSP = SHARED_DATA / "webqsp" / "WebQSP_test_processed.json"
KB_FILE = "webqsp_gold_kb.ttl"
HEADER = (
    "| configuration | questions | F1 | Hit@1 | F1 = 1 | success rate | invalid-action rate | steps / q | LLM calls / q "
    "| scoring requests / q | prompt tokens / q | completion tokens / q | KB queries / q | seconds / q | model seconds / q (median) |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def heldout(path: str | Path, questions: int, pool: int | None = None) -> tuple[list[dict[str, Any]], str, Counter[str]]:
    """The held-out WebQSP questions, the KB (Turtle) built from the pool's gold queries, and why items were left out.

    The pool is the first ``pool`` items of the file (None: all). An item is
    usable when it has a gold SPARQL query, at least one gold answer,
    gold_turtle reads every triple pattern of the query (it reads one
    pattern a line: a hand-written query with comments, ``;`` lists or
    braces on a pattern line it reads only in part, so its answers might not
    be in the KB; filters it leaves out, both branches of a UNION it keeps),
    it has at least one besides an entity's name (a question whose answer is
    the topic's own name has no step to take), and one of the linked
    entities occurs in them (else the agent has nowhere to start). The KB is
    :func:`agent.evaluation.smoke.gold_turtle` of every usable pool item, and the
    questions are the first ``questions`` usable items in file order.

    Example:
        >>> items, kb, skipped = heldout(ROOT / "tests" / "data" / "webqsp" / "WebQSP_test_processed.json", 2)
        >>> [i["id"] for i in items], "ns:location.country.languages_spoken" in kb
        (['WebQTest-0', 'WebQTest-3'], True)
    """
    items = [dict(i) for i in load_dataset(path, limit=pool).items]
    usable: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for item in items:
        sparql = (item.get("gold_query") or {}).get("sparql")
        if not sparql:
            skipped["no gold SPARQL"] += 1
        elif not item.get("answers"):
            skipped["no gold answer"] += 1
        elif any("ns:" in line and not TRIPLE_LINE.match(line) and not line.upper().startswith(FILTER_STARTS)
                 for line in (raw.strip() for raw in split_lines(sparql))):
            skipped["gold query with patterns gold_turtle cannot read (comments, ; lists, braces)"] += 1
        else:
            graph = rdflib.Graph().parse(data=gold_turtle([item]), format="turtle")
            facts = [(h, t) for h, p, t in graph if p != NAME]
            mids = {rdflib.URIRef(FB + str(mid)) for mid in (item.get("entities") or {}).values() if re.match(r"^[mg]\.\w+$", str(mid))}
            if not facts:
                skipped["no triple pattern but the name (type.object.name) in the gold query"] += 1
                continue
            if not any(h in mids or t in mids for h, t in facts):
                skipped["no linked entity in the gold query"] += 1
                continue
            usable.append(item)
    if not usable:
        raise SmokeError(f"no item of {path} has a gold query to build a KB from")
    return usable[:questions], gold_turtle(usable), skipped


def picks(records: Sequence[Mapping[str, Any]]) -> Counter[str]:
    """The numbers chosen in a choose-mode run (the replies of the LLM calls that were not the forced answer)."""
    return Counter(
        str(s.get("reply") or "").strip() or "(empty)"
        for r in records
        for s in r.get("steps", [])
        if s.get("prompt_sha256") and not s.get("forced")
    )


def by_choice(records: Sequence[Mapping[str, Any]], kb_file: str | Path) -> dict[str, tuple[int, int]]:
    """Questions answered exactly / asked, by the most relations a linked entity has in the KB.

    Buckets: ``one relation`` (every linked entity has at most one relation,
    in either direction: the first step has nothing to choose; on Freebase an
    entity has tens to hundreds), ``2+ relations`` (one has more), ``no
    linked entity`` (a question that starts from a class, on the demo KB).
    """
    graph = rdflib.Graph().parse(str(kb_file), format="turtle")
    out: dict[str, list[int]] = {"one relation": [0, 0], "2+ relations": [0, 0], "no linked entity": [0, 0]}
    for r in records:
        counts = []
        for mid in (r.get("entities") or {}).values():
            if re.match(r"^[mg]\.\w+$", str(mid)):
                node = rdflib.URIRef(FB + str(mid))
                counts.append(len({("out", p) for p in graph.predicates(node, None) if p != NAME} | {("in", p) for p in graph.predicates(None, node)}))
        bucket = out["no linked entity" if not counts else "one relation" if max(counts) <= 1 else "2+ relations"]
        bucket[0] += record_scores(r).get("f1") == 1.0
        bucket[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def model_seconds(record: dict) -> float:
    """The LLM time of one question: the sum of its steps' LLM seconds."""
    return sum(float(s.get("llm_seconds") or 0) for s in record.get("steps", []))


def row(name: str, records: list[dict]) -> str:
    m = aggregate(records)
    exact = sum(1 for r in records if record_scores(r).get("f1") == 1.0)
    secs = [model_seconds(r) for r in records]
    mean = lambda key: sum(float(r.get(key) or 0) for r in records) / len(records)
    scoring = sum(int(s.get("scoring_requests") or 0) for r in records for s in r.get("steps", [])) / len(records)
    return (
        f"| {name} | {m.questions} | {m.f1:.3f} | {m.hit1:.3f} | {exact} | {m.success_rate:.3f} | {m.invalid_action_rate:.3f} | "
        f"{m.steps:.2f} | {m.llm_calls:.2f} | {scoring:.2f} | {mean('tokens_in'):.0f} | {mean('tokens_out'):.1f} | {m.qpq:.2f} | {m.tpq:.1f} | "
        f"{statistics.mean(secs):.1f} ({statistics.median(secs):.1f}) |"
    )


def per_question(records: list[dict]) -> str:
    lines = ["| id | kind | F1 | LLM calls | model s | steps taken |", "| --- | --- | ---: | ---: | ---: | --- |"]
    for r in sorted(records, key=lambda r: r["id"]):
        chosen = [s["action"] or "?" for s in r["steps"] if s.get("prompt_sha256") and not s.get("forced")]
        f1 = record_scores(r).get("f1", 0.0)
        lines.append(f"| {r['id']} | {r.get('kind') or ''} | {f1:.2f} | {r['llm_calls']} | {model_seconds(r):.1f} | "
                     + "; ".join(f"`{a}`" for a in chosen) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("mode", nargs="?", default="choose", choices=["text", "tools", "grammar", "choose"])
    parser.add_argument("--name", help="the run's name (default: the mode)")
    parser.add_argument("--questions", "--items", dest="questions", type=int, default=37, help="the first N questions (usable items)")
    parser.add_argument("--dataset", default="demo", choices=["demo", "webqsp"], help="the demo questions or the held-out WebQSP ones")
    parser.add_argument("--data", default=str(WEBQSP), help="webqsp: the WebQSP_test_processed.json file")
    parser.add_argument("--pool", type=int, help="webqsp: build the KB from the first N items of the file (default: all)")
    parser.add_argument("--llm", default="model", choices=["model", "first"], help="the model, or (choose mode) the stub that always answers 1")
    parser.add_argument("--max-steps", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--order", default="ranked", choices=["ranked", "kind"], help="choose mode: the list's order")
    parser.add_argument("--first-relation", default="ranked", choices=["ranked", "model"],
                        help="choose mode: order the first fact's relations by the ranking or by the model's PMI with the question")
    parser.add_argument("--no-preview", dest="preview", action="store_false",
                        help="choose mode: list the steps without their result previews (fewer prompt tokens per call)")
    parser.add_argument("--generic-grammar", action="store_true", help="grammar/tools: the generic grammar, not the per-step one")
    parser.add_argument("--advice", default="run", choices=["run", "block"],
                        help="ablation of issue 11's item 1: ERASER's advice blocks the step, as before the split")
    parser.add_argument("--no-escalation", dest="escalate", action="store_false",
                        help="ablation of item 2: no escalation of a repeated failed action and no cap on repeats")
    parser.add_argument("--out-dir", default="/tmp/pyql-agent-modes")
    parser.add_argument("--per-question", help="report: also the per-question table of this run")
    parser.add_argument("--kb", help=f"report: the Turtle KB of the runs' F1 = 1 split by choice (default: {KB_FILE} in --out-dir; "
                        "pyql/data/cyclones.ttl for the demo runs)")
    args = parser.parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.command == "report":
        print(HEADER)
        runs = {path.stem: read_run(path, repair=True) for path in sorted(out_dir.glob("*.jsonl"))}
        for name in [n for n, records in runs.items() if not records]:  # a run that has not finished a question yet
            print(f"(run {name}: no finished question yet)", file=sys.stderr)
            del runs[name]
        for name, records in runs.items():
            print(row(name, records))
        print()
        for name, records in runs.items():
            chosen = picks(records)
            if chosen and all(k.isdigit() for k in chosen):
                total = sum(chosen.values())
                print(f"- {name}: {total} choices, {total - chosen['1']} not `1` ({dict(sorted(chosen.items()))})")
        kb_file = Path(args.kb) if args.kb else out_dir / KB_FILE
        if kb_file.exists():
            for name, records in runs.items():
                split = {k: v for k, v in by_choice(records, kb_file).items() if v[1]}
                print(f"- {name}: F1 = 1 by the most relations a linked entity has in {kb_file.name}: "
                      + ", ".join(f"{k} {a}/{n}" for k, (a, n) in split.items()))
        if args.per_question:
            print()
            print(per_question(read_run(out_dir / f"{args.per_question}.jsonl", repair=True)))
        return 0
    if args.questions < 1:
        parser.error(f"--questions must be at least 1, got {args.questions}")
    if args.llm == "first" and args.mode != "choose":
        parser.error("--llm first is the choose-mode stub (it answers 1); use it with the mode choose")
    if args.dataset == "webqsp":
        try:
            items, turtle, skipped = heldout(args.data, args.questions, args.pool)
        except (OSError, SmokeError) as exc:
            parser.error(f"{exc} (give the WebQSP file with --data, or set PYQL_SHARED_DATA)")
        kb_file = out_dir / KB_FILE
        kb_file.write_text(turtle, encoding="utf-8")
        left_out = ", ".join(f"{n} {why}" for why, n in skipped.most_common()) or "none"
        print(f"KB {kb_file}: from the gold queries of the usable items of {args.data} (left out: {left_out}); "
              f"asking {len(items)}: {items[0]['id']} .. {items[-1]['id']}", file=sys.stderr)
        kb, dataset = str(kb_file), "webqsp"
    else:
        items, kb, dataset = list(iter_items(DEMO))[: args.questions], "oxigraph:demo", "demo"
    name = args.name or (f"{args.mode}-first-no-llm" if args.llm == "first" else args.mode)
    settings = RunSettings(
        kb=kb, max_steps=args.max_steps, action_mode=args.mode, run_advice=args.advice == "run", escalate=args.escalate,
        first_relation=args.first_relation, choice_preview=args.preview,
        # without item 2 nothing ends a repeated mistake but the step limit
        max_repeats=3 if args.escalate else args.max_steps + 1,
    )
    from agent.methods.query_agent import AgentConfig

    base = settings.agent_config

    def agent_config() -> AgentConfig:
        config = base()
        config.choice_order = args.order
        config.state_constraints = not args.generic_grammar
        return config

    settings.agent_config = agent_config  # type: ignore[method-assign]  # the knobs RunSettings has no flag for
    from agent.llm.client import OpenAILLM
    from agent.llm.config import LLMConfig

    with contextlib.ExitStack() as stack:
        llm: Any
        if args.llm == "first":
            llm = FirstChoiceLLM()
        elif os.environ.get("OPENAI_BASE_URL"):
            llm = OpenAILLM(LLMConfig.from_env(mode="completion", max_tokens=args.max_tokens))
        else:
            from agent.llm.local import LocalServer

            server = stack.enter_context(LocalServer())
            llm = OpenAILLM(server.config(mode="completion", max_tokens=args.max_tokens))
        run_eval(items, out_dir / f"{name}.jsonl", llm, settings, resume=True, max_llm_failures=0, dataset=dataset)
    print(HEADER)
    print(row(name, read_run(out_dir / f"{name}.jsonl")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
