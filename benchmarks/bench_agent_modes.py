"""Action modes of QueryAgent with the local model on the demo questions (issue 11's ablation).

Runs ``agent.runner.run_eval`` over ``pyql/data/demo_questions.jsonl`` (all
37 questions, or the first ``--questions``) in one configuration per call and
prints one markdown row per run file in ``--out-dir``: F1, Hit@1, success,
invalid-action rate, steps, LLM calls, prompt tokens, KB queries and seconds
per question, plus the model time (the LLM seconds) per question and the
number of questions answered exactly (F1 = 1). The LLM is the configured
server (``OPENAI_BASE_URL``) or the local Gemma 3 270M, started on loopback.

Usage::

    python benchmarks/bench_agent_modes.py run choose --questions 37
    python benchmarks/bench_agent_modes.py run grammar --questions 8
    python benchmarks/bench_agent_modes.py run choose --order kind --questions 8 --name choose-unranked
    python benchmarks/bench_agent_modes.py report
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.datasets import iter_items
from agent.metrics import aggregate, record_scores
from agent.runner import RunSettings, read_run, run_eval

DEMO = ROOT / "pyql" / "data" / "demo_questions.jsonl"
HEADER = (
    "| configuration | questions | F1 | Hit@1 | F1 = 1 | success rate | invalid-action rate | steps / q | LLM calls / q "
    "| prompt tokens / q | completion tokens / q | KB queries / q | seconds / q | model seconds / q (median) |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def model_seconds(record: dict) -> float:
    """The LLM time of one question: the sum of its steps' LLM seconds."""
    return sum(float(s.get("llm_seconds") or 0) for s in record.get("steps", []))


def row(name: str, records: list[dict]) -> str:
    m = aggregate(records)
    exact = sum(1 for r in records if record_scores(r).get("f1") == 1.0)
    secs = [model_seconds(r) for r in records]
    mean = lambda key: sum(float(r.get(key) or 0) for r in records) / len(records)
    return (
        f"| {name} | {m.questions} | {m.f1:.3f} | {m.hit1:.3f} | {exact} | {m.success_rate:.3f} | {m.invalid_action_rate:.3f} | "
        f"{m.steps:.2f} | {m.llm_calls:.2f} | {mean('tokens_in'):.0f} | {mean('tokens_out'):.1f} | {m.qpq:.2f} | {m.tpq:.1f} | "
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
    parser.add_argument("--questions", type=int, default=37)
    parser.add_argument("--max-steps", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--order", default="ranked", choices=["ranked", "kind"], help="choose mode: the list's order")
    parser.add_argument("--generic-grammar", action="store_true", help="grammar/tools: the generic grammar, not the per-step one")
    parser.add_argument("--out-dir", default="/tmp/pyql-agent-modes")
    parser.add_argument("--per-question", help="report: also the per-question table of this run")
    args = parser.parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.command == "report":
        print(HEADER)
        for path in sorted(out_dir.glob("*.jsonl")):
            print(row(path.stem, read_run(path, repair=True)))
        if args.per_question:
            print()
            print(per_question(read_run(out_dir / f"{args.per_question}.jsonl", repair=True)))
        return 0
    items = list(iter_items(DEMO))[: args.questions]
    name = args.name or args.mode
    settings = RunSettings(kb="oxigraph:demo", max_steps=args.max_steps, action_mode=args.mode)
    from agent.query_agent import AgentConfig

    base = settings.agent_config

    def agent_config() -> AgentConfig:
        config = base()
        config.choice_order = args.order
        config.state_constraints = not args.generic_grammar
        return config

    settings.agent_config = agent_config  # type: ignore[method-assign]  # the knobs RunSettings has no flag for
    from agent.llm import LLMConfig, OpenAILLM

    with contextlib.ExitStack() as stack:
        if os.environ.get("OPENAI_BASE_URL"):
            llm = OpenAILLM(LLMConfig.from_env(mode="completion", max_tokens=args.max_tokens))
        else:
            from agent.local import LocalServer

            server = stack.enter_context(LocalServer())
            llm = OpenAILLM(server.config(mode="completion", max_tokens=args.max_tokens))
        run_eval(items, out_dir / f"{name}.jsonl", llm, settings, resume=True, max_llm_failures=0, dataset="demo")
    print(HEADER)
    print(row(name, read_run(out_dir / f"{name}.jsonl")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
