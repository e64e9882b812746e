"""Search strategies with no model: every reply is ``1``, the first listed step (the list alone).

The bundled 270M model answers ``1`` to nearly every numbered list
(``docs/results.md``), so in choose mode a strategy's answers are decided
mostly by the environment's list and by how the strategy searches it. This
script runs ``pyql eval`` in process for each ``--method`` on one data set
with a stub LLM that always answers ``1`` (no model, no load in the figure)
and prints, per method: the questions, those answered exactly (F1 = 1, or
WTQ's/dbbench's denotation), the mean F1 where the data set has one, the
LLM calls the strategy asked, and the questions whose answer differs from
the first method's. It is the quick check of a change to a strategy before
a run with the model; the model's own figures come from ``pyql eval``.

Run from the repository root::

    python benchmarks/bench_search_list.py runs/webqsp-1-40.jsonl --kb runs/webqsp_gold_kb.ttl
    python benchmarks/bench_search_list.py /tmp/wtq-dev/data/training.tsv --methods greedy,beam --options "--beam-scoring rank"

Each method's run file is written to ``--out-dir`` (default a temporary directory).
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.llm.scripted import FirstChoiceLLM  # noqa: E402
from agent.methods.strategies import registry  # noqa: E402
from pyql.cli import build_parser  # noqa: E402


def right(record: dict[str, Any]) -> bool:
    """Whether a run file's record is answered exactly: F1 1, or the table's denotation.

    Example:
        >>> right({"metrics": {"f1": 1.0}}), right({"metrics": {"denotation": 0.0, "f1": 0.5}})
        (True, False)
    """
    metrics = record.get("metrics") or {}
    if "denotation" in metrics:
        return bool(metrics["denotation"] == 1.0)
    return bool(metrics.get("f1") == 1.0)


def run_method(data: str, method: str, out: Path, flags: Sequence[str]) -> list[dict[str, Any]]:
    """One ``pyql eval --method METHOD`` run in process with :class:`agent.llm.scripted.FirstChoiceLLM`; its records."""
    args = build_parser().parse_args(["eval", data, "--method", method, "--action-mode", "choose", "--out", str(out), *flags])
    status = args.func(args, io.StringIO(), llm=FirstChoiceLLM(), progress=io.StringIO())
    if status not in (0, 1):
        raise SystemExit(f"bench_search_list: pyql eval --method {method} ended with status {status}")
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(runs: dict[str, list[dict[str, Any]]]) -> str:
    """The methods side by side (markdown); ``differ`` counts the questions answered otherwise than the first method.

    Example:
        >>> a = [{"id": "q1", "metrics": {"f1": 1.0}, "llm_calls": 2, "answers": [{"value": "x"}]}]
        >>> b = [{"id": "q1", "metrics": {"f1": 0.0}, "llm_calls": 3, "answers": [{"value": "y"}]}]
        >>> print(table({"greedy": a, "beam": b}))
        | method | questions | exact | F1 | LLM calls / q | differ from greedy |
        | --- | ---: | ---: | ---: | ---: | ---: |
        | greedy | 1 | 1 | 1.000 | 2.00 | 0 |
        | beam | 1 | 0 | 0.000 | 3.00 | 1 |
    """
    first_name = next(iter(runs))
    first = {r["id"]: sorted(str(a.get("value")) for a in r.get("answers") or []) for r in runs[first_name]}
    lines = [f"| method | questions | exact | F1 | LLM calls / q | differ from {first_name} |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, records in runs.items():
        n = len(records) or 1
        f1 = sum(float((r.get("metrics") or {}).get("f1") or 0.0) for r in records) / n
        differ = sum(1 for r in records if sorted(str(a.get("value")) for a in r.get("answers") or []) != first.get(r["id"]))
        calls = sum(int(r.get("llm_calls") or 0) for r in records) / n
        lines.append(f"| {name} | {len(records)} | {sum(map(right, records))} | {f1:.3f} | {calls:.2f} | {differ} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run every method on the data set and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="a data set pyql eval reads")
    parser.add_argument("--kb", help="the KB (as pyql eval's --kb)")
    parser.add_argument("--methods", default="greedy,beam", help="comma-separated strategies (default greedy,beam)")
    parser.add_argument("--options", default="--beam-scoring rank",
                        help="more pyql eval flags (a strategy's own options go to the methods that take them; default: --beam-scoring rank, "
                             "the stub gives no scores)")
    parser.add_argument("--limit", type=int, help="the first N questions")
    parser.add_argument("--out-dir", type=Path, help="where the run files go (default a temporary directory)")
    args = parser.parse_args(argv)
    flags = [*(["--kb", args.kb] if args.kb else []), *(["--limit", str(args.limit)] if args.limit else []),
             *shlex.split(args.options)]
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="bench-search-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = {}
    for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
        out = out_dir / f"{method}.jsonl"
        if out.exists():
            raise SystemExit(f"bench_search_list: {out} exists; give another --out-dir")
        runs[method] = run_method(args.data, method, out, flags_for(method, flags))
    print(table(runs))
    print(f"\nrun files: {out_dir}")
    return 0


def flags_for(method: str, flags: Sequence[str]) -> list[str]:
    """The flags with every strategy option the method does not take left out, with its value (the command refuses
    another strategy's option; :func:`agent.methods.strategies.registry.flags` says whose each is).

    Example:
        >>> flags_for("greedy", ["--kb", "demo", "--beam-scoring", "rank", "--beam-width=2"])
        ['--kb', 'demo']
        >>> flags_for("beam", ["--beam-scoring", "rank", "--samples", "3"])
        ['--beam-scoring', 'rank']
    """
    mine = registry.canonical(method)
    others = {pairs[0][1].flag for pairs in registry.flags().values() if all(e.name != mine for e, _ in pairs)}
    out: list[str] = []
    skip = False
    for flag in flags:
        if skip:
            skip = False
            continue
        if flag.split("=", 1)[0] in others:
            skip = "=" not in flag
            continue
        out.append(flag)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
