"""Recording and replaying a run (issue 24): replay speed, recording overhead, the KB cache.

Runs ``pyql eval`` in process on the demo questions (``pyql/data/demo_questions.jsonl``,
all 37 or the first ``--questions``) on the demo KB, three ways, one after
the other, each with its own run file in ``--out-dir``:

* ``plain``: live, no store;
* ``record``: live with ``--record OUT/rec`` (every call to the store is
  timed: the recording's own cost, whatever the machine's load);
* ``replay``: ``--replay OUT/rec``, with ``--base-url`` on a port where
  nothing listens (no model is started, no server asked).

and prints, as JSON, each run's seconds, the seconds spent in the store, and
whether the replay gave the recorded answers, metrics and costs. The LLM is
the local model (``--llm local``: the bundled Gemma 3 270M, started on
loopback as ``pyql eval`` does with nothing configured: choose mode, the
first relation ordered by the in-process scorer) or ``--llm first``, a
scripted LLM in process that always answers ``1`` (choose mode: the list's
first step), for a machine too loaded for the model.

``--kb-cache URL`` instead runs the questions twice on a SPARQL endpoint
holding the demo KB (``--default-graph``) with ``--kb-cache``, and prints
per run the seconds per question (with ``--llm first`` the LLM costs
nothing: they are the KB's and the agent's), the KB seconds of the steps
themselves (the choose mode's verification of the listed steps is outside
them), F1 and the cache's hits and misses.

Usage::

    python benchmarks/bench_recording.py --llm local --out-dir runs/recording
    python benchmarks/bench_recording.py --llm first --first-relation ranked --out-dir runs/recording-first
    python benchmarks/bench_recording.py --kb-cache http://127.0.0.1:8890/sparql --default-graph http://demo --out-dir runs/cache
"""

from __future__ import annotations

import argparse
import io
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.cli import eval_command
from agent.llm.replies import LLMReply
from pyql.cli import build_parser
from pyql.recording_store import RecordingStore

DEMO = ROOT / "pyql" / "data" / "demo_questions.jsonl"
COMPARED = ("answers", "metrics", "tokens_in", "tokens_out", "cost_usd", "kb_queries", "llm_calls", "status")


class FirstChoiceLLM:
    """A scripted LLM that always answers ``1`` (the first listed step), as the bundled model does."""

    model = "gemma-3-270m"  # the choose mode's defaults are those of the local model

    def complete(self, prompt: Any, **kwargs: Any) -> LLMReply:
        return LLMReply("1", usage_in=len(str(prompt)) // 4, usage_out=1, model=self.model)


class StoreClock:
    """Times every call to the store (get, put, name): what recording or replaying costs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> StoreClock:
        for name in ("get", "put", "name"):
            original = getattr(RecordingStore, name)
            self._saved[name] = original

            def timed(store: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return _original(store, *args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - start

            setattr(RecordingStore, name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, original in self._saved.items():
            setattr(RecordingStore, name, original)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(name: str, options: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    """One eval run, timed; its records by id."""
    out = Path(options.out_dir) / f"{name}.jsonl"
    for stale in (out, out.with_suffix(".summary.json"), out.with_suffix(".summary.md")):
        stale.unlink(missing_ok=True)
    argv = ["eval", str(DEMO), "--kb", options.kb, "--out", str(out), "--limit", str(options.questions),
            "--max-steps", str(options.max_steps), "--max-tokens", "128", *extra]
    if options.first_relation:
        argv += ["--first-relation", options.first_relation]
    args = build_parser().parse_args(argv)
    llm = FirstChoiceLLM() if options.llm == "first" else None
    with StoreClock() as clock:
        start = time.perf_counter()
        code = eval_command(args, io.StringIO(), llm=llm, progress=sys.stderr)
        seconds = time.perf_counter() - start
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    print(f"{name}: exit {code}, {seconds:.1f} s, {clock.seconds:.3f} s in the store", file=sys.stderr)
    return {"seconds": seconds, "store_seconds": clock.seconds, "records": records, "exit": code}


def recording_bench(options: argparse.Namespace) -> dict[str, Any]:
    """plain, record, replay; the figures of docs/benchmarks.md."""
    rec = Path(options.out_dir) / "rec"
    if rec.exists():
        for file in rec.iterdir():
            file.unlink()
    runs = {"record": run("record", options, ["--record", str(rec)])}
    dead = f"http://127.0.0.1:{_free_port()}/v1"
    runs["replay"] = run("replay", options, ["--replay", str(rec), "--base-url", dead] if options.llm == "local" else ["--replay", str(rec)])
    if not options.no_plain:
        runs["plain"] = run("plain", options, [])
    live, again = runs["record"]["records"], runs["replay"]["records"]
    same = all(again.get(q, {}).get(k) == r.get(k) for q, r in live.items() for k in COMPARED)
    out = {name: {k: round(v, 3) for k, v in r.items() if k in ("seconds", "store_seconds")} for name, r in runs.items()}
    out["questions"] = len(live)
    out["replay_same_answers_metrics_costs"] = same
    out["replay_speedup"] = round(runs["record"]["seconds"] / max(runs["replay"]["seconds"], 1e-9), 1)
    out["recording_store_share"] = round(runs["record"]["store_seconds"] / runs["record"]["seconds"], 4)
    if "plain" in runs:
        out["record_vs_plain"] = round(runs["record"]["seconds"] / runs["plain"]["seconds"] - 1, 4)
    out["f1"] = round(sum(r["metrics"].get("f1", 0) for r in live.values()) / max(len(live), 1), 3)
    return out


def cache_bench(options: argparse.Namespace) -> dict[str, Any]:
    """Two live runs on an endpoint with --kb-cache: KB seconds per question before and after."""
    cache = Path(options.out_dir) / "cache"
    if cache.exists():
        for file in cache.iterdir():
            file.unlink()
    options.kb = options.kb_cache
    extra = ["--kb-cache", str(cache), "--profile", "freebase"]
    if options.default_graph:
        extra += ["--default-graph", options.default_graph]
    out: dict[str, Any] = {}
    for name in ("cold", "warm"):
        r = run(name, options, extra)
        summary = json.loads((Path(options.out_dir) / f"{name}.summary.json").read_text())
        recs = list(r["records"].values())
        step_kb = sum(step.get("kb_seconds", 0.0) for rec in recs for step in rec["steps"]) / len(recs)
        out[name] = {"seconds": round(r["seconds"], 2), "seconds_per_question": round(sum(rec["seconds"] for rec in recs) / len(recs), 3),
                     "step_kb_seconds_per_question": round(step_kb, 4), "f1": summary["metrics"]["f1"],
                     "cache": summary["kb_cache"]["stats"].get("kb", {})}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--llm", choices=["local", "first"], default="local")
    p.add_argument("--questions", type=int, default=37)
    p.add_argument("--max-steps", type=int, default=7)
    p.add_argument("--kb", default="demo")
    p.add_argument("--no-plain", action="store_true", help="skip the live run without a recording")
    p.add_argument("--first-relation", choices=["ranked", "model"],
                   help="choose mode's first relation (default: the in-process scorer when the local extra is installed)")
    p.add_argument("--kb-cache", metavar="URL", help="measure --kb-cache on this endpoint instead")
    p.add_argument("--default-graph")
    p.add_argument("--out-dir", default="runs/recording")
    options = p.parse_args()
    Path(options.out_dir).mkdir(parents=True, exist_ok=True)
    result = cache_bench(options) if options.kb_cache else recording_bench(options)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
