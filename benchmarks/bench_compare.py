"""How long ``pyql compare`` takes on two runs of 1,000 questions (issue 34's goal: under 2 s).

Writes two synthetic run files of ``--questions`` questions each into
``--out-dir`` (seeded: the same files every time), shaped as ``pyql eval``
writes them: a ``greedy`` run (8 steps in one branch per question) and a
``beam`` run (a tree of 3 × 3 steps, 6 of them pruned, per question), every
step with a reply, an observation of about 1,500 characters and its costs,
on GrailQA-like questions of three levels (so the per-kind table is made).
Then it times ``pyql compare A B`` run as a command (a new process each
time: the interpreter's start and the imports included) ``--repeat`` times,
and once in process (reading, scoring, the paired statistics, the text),
and prints, as JSON, the files' sizes, each time (wall clock, and the
command's CPU seconds, which a loaded machine changes less) and the median,
and the machine's load average.

Usage::

    python benchmarks/bench_compare.py --out-dir /tmp/bench-compare
    python benchmarks/bench_compare.py --questions 1000 --repeat 5 --out-dir /tmp/bench-compare
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.evaluation.compare import compare_runs, comparison_text
from agent.evaluation.cost import question_cost

LEVELS = ("i.i.d.", "compositional", "zero-shot")
OBSERVATION = ("The value of variable ?x is [" + ", ".join(f"'entity {i} of a long list of results'" for i in range(36)) + "]")


def _step(rng: random.Random, number: int, parent: int | None, pruned: str | None = None) -> dict[str, Any]:
    relation = f"domain{rng.randrange(50)}.type{rng.randrange(50)}.relation{rng.randrange(500)}"
    return {
        "step": number, "prompt_sha256": f"{rng.getrandbits(256):064x}",
        "reply": f" Thought {number}: follow {relation}.\nAction {number}: add_fact(m.0abc, {relation}, ?x)",
        "action": f"add_fact(m.0abc, {relation}, ?x)", "ok": pruned is None, "error": None if pruned is None else "empty_result",
        "observation": OBSERVATION, "rule": None, "llm_seconds": round(rng.uniform(0.2, 1.5), 4), "kb_queries": rng.randrange(1, 4),
        "kb_seconds": round(rng.uniform(0.001, 0.05), 6), "tokens_in": rng.randrange(900, 2400), "tokens_out": rng.randrange(20, 60),
        "attempts": 1, "prompt": None, "forced": False, "advice": None, "escalation": 0, "scoring_requests": 0,
        "without_call": None, "parent": parent, "pruned": pruned,
    }


def _steps(rng: random.Random, method: str) -> list[dict[str, Any]]:
    if method == "greedy":
        return [_step(rng, i, i - 1 or None) for i in range(1, 9)]
    steps: list[dict[str, Any]] = []
    frontier: list[int | None] = [None]
    for depth in range(1, 4):  # a beam of width 3, depth 3: 3 candidates per kept step, one kept of each
        kept: list[int | None] = []
        for parent in frontier:
            for k in range(3):
                pruned = None if k == 0 else "outside the beam (score -3.2 < -1.1)"
                steps.append(_step(rng, depth, parent, pruned))
                if pruned is None:
                    kept.append(len(steps))
        frontier = kept[:1] if depth < 3 else kept
    return steps


def synthetic_run(path: Path, method: str, questions: int, accuracy: float, seed: int) -> None:
    """One run file of ``questions`` records, about ``accuracy`` of them right."""
    rng = random.Random(seed)
    truth = random.Random(7)  # the questions and their gold are the same in every run
    with path.open("w", encoding="utf-8") as f:
        for i in range(questions):
            gold = [f"m.0g{i}_{k}" for k in range(1 + truth.randrange(3))]
            answers = [{"value": g, "label": f"Gold {g}"} for g in gold] if rng.random() < accuracy else \
                [{"value": f"m.0w{i}", "label": "Wrong"}]
            steps = _steps(rng, method)
            record: dict[str, Any] = {
                "id": f"grail-{i:05d}", "question": f"synthetic question number {i} about something?", "entities": {"thing": "m.0abc"},
                "gold": gold, "gold_actions": None, "kind": LEVELS[truth.randrange(3)], "source": "grailqa", "table": None,
                "method": method, "feedback": "eraser", "model": "synthetic",
                "settings": {"model": "synthetic", "method": method, "feedback": "eraser", "kb": "demo"},
                "answers": answers, "steps": steps, "done": True, "forced": False, "query": "SELECT ?x WHERE { ... }",
                "llm_calls": len(steps), "tokens_in": sum(s["tokens_in"] for s in steps),
                "tokens_out": sum(s["tokens_out"] for s in steps), "kb_queries": sum(s["kb_queries"] for s in steps),
                "seconds": round(sum(s["llm_seconds"] + s["kb_seconds"] for s in steps) + 0.05, 4), "rules": {}, "error": None,
                "extra": {}, "status": "finished", "advice": {}, "escalations": {}, "stopped": None, "stopped_by": None, "chain": [],
                "template_version": "queryagent-1", "metrics": {}, "cost_usd": 0.0, "finished_at": "2026-01-01T00:00:00+00:00",
            }
            record["cost"] = question_cost(record)
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", required=True, help="where the two run files are written")
    parser.add_argument("--questions", type=int, default=1000, help="questions per run (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="times the command is run (default 3)")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    a, b = out / "greedy.jsonl", out / "beam.jsonl"
    synthetic_run(a, "greedy", args.questions, 0.55, seed=1)
    synthetic_run(b, "beam", args.questions, 0.62, seed=2)
    started = time.perf_counter()
    text = comparison_text(compare_runs([a, b]))
    in_process = time.perf_counter() - started
    pyql = [sys.executable, "-m", "pyql.cli", "compare", str(a), str(b)]
    times, cpu = [], []
    for _ in range(args.repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(pyql, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
    print(json.dumps({
        "questions": args.questions,
        "megabytes": {p.name: round(p.stat().st_size / 1e6, 1) for p in (a, b)},
        "command_seconds": [round(t, 2) for t in times],
        "command_median_seconds": round(statistics.median(times), 2),
        "command_cpu_seconds": [round(t, 2) for t in cpu],
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "in_process_seconds": round(in_process, 2),
        "table_lines": len(text.splitlines()),
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
