"""A beam's KB cost against greedy's, question by question (issue 34: a beam of width W costs at most W times greedy's
KB seconds per question, since its forks share what they have in common).

The demo questions (``pyql/data/demo_questions.jsonl``, or the first ``--questions``), each on a fresh environment over
one KB, with ERASER, in choose mode: ``greedy``, then ``beam`` at each of ``--widths`` (``--beam-scoring rank``). The
LLM is a stub that answers ``1`` to every numbered list, as the bundled model did at every choice of every choose-mode
run so far (``docs/results.md``), so no model runs and the figures are the KB's alone: KB queries and KB seconds per
question, read from the KB's own counters through the question's environment (every fork's queries are counted by the
shared KB: the looks, the choose mode's checks and every candidate run), the LLM calls the strategy asked, and the
questions answered exactly.

Every run opens its own KB (no cache another run filled helps it). Every configuration runs ``--repeat`` times,
question by question and interleaved (a load that changes during the run weighs on each alike); a question's KB
seconds are the least of its repeats (a shared machine's load only adds).
Reported per width: the KB seconds and queries in all against greedy's, the mean and the largest per-question ratio,
and the questions whose ratio is over the width (the goal: none).

Usage::

    python benchmarks/bench_beam_cost.py --kb oxigraph:demo --repeat 3
    python benchmarks/bench_beam_cost.py --kb demo --widths 1,2,3,4 --questions 10 --json runs/beam-cost.json
    python benchmarks/bench_beam_cost.py --kb http://127.0.0.1:PORT/sparql --graph http://pyql.test/beam-cost --repeat 3

For Virtuoso, start it and load ``pyql/data/cyclones.ttl`` into a graph as ``tests/virtuoso.py`` does
(``VirtuosoServer().start()``, ``load_turtle``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.evaluation.environments import feedback_options  # noqa: E402
from agent.evaluation.metrics import score_question  # noqa: E402
from agent.llm.scripted import ScriptedLLM  # noqa: E402
from agent.methods.config import AgentConfig  # noqa: E402
from agent.methods.strategies.registry import entry  # noqa: E402
from pyql.environment.sparql import SparqlEnvironment  # noqa: E402
from pyql.kb import KB  # noqa: E402

DEMO = ROOT / "pyql" / "data" / "demo_questions.jsonl"


class FirstChoice(ScriptedLLM):
    """Answers ``1`` to every call (the stub's reply to a numbered list), as many times as asked."""

    def __init__(self) -> None:
        super().__init__([], model="first-choice")

    def complete(self, prompt: Any, **kwargs: Any) -> Any:
        self.replies.append("1")
        return super().complete(prompt, **kwargs)


def open_kb(spec: str, graph: str | None = None) -> Any:
    """A KB opened for one run: ``spec`` as ``KB.open`` reads it, or an endpoint's URL with the graph holding the demo."""
    if graph:
        from pyql.kb.endpoint_backend import EndpointKB

        return EndpointKB(spec, default_graph=graph, timeout=60)
    return KB.open(spec)


def run_one(spec: str, item: dict[str, Any], method: str, options: dict[str, Any], max_steps: int,
            graph: str | None = None) -> dict[str, Any]:
    """One question with one configuration, on a KB opened for it (no cache of another run helps it): its KB queries
    and seconds (the KB's counters), LLM calls, exactness."""
    env = SparqlEnvironment(open_kb(spec, graph), item["question"], item["entities"], **feedback_options("eraser", agent=True))
    config = AgentConfig(action_mode="choose", max_steps=max_steps, feedback="eraser")
    result = entry(method).bind(options)(FirstChoice(), env, item["question"], config)
    counters = env.counters
    f1 = score_question(result.answers, item["answers"]).get("f1", 0.0)
    return {"kb_queries": int(counters["kb_queries"]), "kb_seconds": float(counters["kb_seconds"]),
            "llm_calls": result.llm_calls, "exact": f1 == 1.0, "branches": len(result.steps)}


def measure(spec: str, items: list[dict[str, Any]], configs: dict[str, tuple[str, dict[str, Any]]], repeat: int,
            max_steps: int, graph: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every configuration on every question, ``repeat`` times interleaved; per question the least KB seconds."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
    for item in items:
        for name, (method, options) in configs.items():
            runs = [run_one(spec, item, method, options, max_steps, graph) for _ in range(repeat)]
            best = dict(runs[0])
            best["kb_seconds"] = min(r["kb_seconds"] for r in runs)
            out[name].append(best)
        print(f"{item['id']}: " + ", ".join(f"{n} {r[-1]['kb_queries']} q {r[-1]['kb_seconds'] * 1000:.1f} ms"
                                            for n, r in out.items()), file=sys.stderr, flush=True)
    return out


def report(runs: dict[str, list[dict[str, Any]]], widths: list[int]) -> dict[str, Any]:
    """Per width: the KB cost against greedy's, in all and question by question."""
    greedy = runs["greedy"]
    table: dict[str, Any] = {"greedy": _totals(greedy)}
    for width in widths:
        beam = runs[f"beam-{width}"]
        ratios = [b["kb_seconds"] / g["kb_seconds"] for b, g in zip(beam, greedy) if g["kb_seconds"] > 0]
        query_ratios = [b["kb_queries"] / g["kb_queries"] for b, g in zip(beam, greedy) if g["kb_queries"] > 0]
        table[f"beam-{width}"] = {
            **_totals(beam),
            "kb_seconds_vs_greedy": round(sum(b["kb_seconds"] for b in beam) / sum(g["kb_seconds"] for g in greedy), 2),
            "mean_ratio": round(statistics.mean(ratios), 2),
            "max_ratio": round(max(ratios), 2),
            "questions_over_width": sum(1 for r in ratios if r > width),
            "kb_queries_vs_greedy": round(sum(b["kb_queries"] for b in beam) / sum(g["kb_queries"] for g in greedy), 2),
            "max_query_ratio": round(max(query_ratios), 2),
        }
    return table


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {
        "questions": n, "exact": sum(r["exact"] for r in rows),
        "kb_queries_per_q": round(sum(r["kb_queries"] for r in rows) / n, 1),
        "kb_ms_per_q": round(1000 * sum(r["kb_seconds"] for r in rows) / n, 2),
        "llm_calls_per_q": round(sum(r["llm_calls"] for r in rows) / n, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", default="oxigraph:demo", help="any KB KB.open reads (default oxigraph:demo)")
    parser.add_argument("--graph", help="with an endpoint's URL as --kb: the graph holding the demo KB (pyql/data/cyclones.ttl)")
    parser.add_argument("--widths", default="1,2,3", help="beam widths, comma-separated (default 1,2,3)")
    parser.add_argument("--questions", type=int, default=37, help="the first N demo questions (default all 37)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per question and configuration (default 3)")
    parser.add_argument("--max-steps", type=int, default=7, help="the step limit, and the beam's depth (default 7)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    items = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()][: args.questions]
    configs = {"greedy": ("greedy", {})}
    configs.update({f"beam-{w}": ("beam", {"beam_width": w, "beam_scoring": "rank"}) for w in widths})
    load = os.getloadavg()[0]
    runs = measure(args.kb, items, configs, args.repeat, args.max_steps, args.graph)
    table = report(runs, widths)
    table["load"] = [round(load, 1), round(os.getloadavg()[0], 1)]
    print(json.dumps(table, indent=2))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"summary": table, "questions": runs}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
