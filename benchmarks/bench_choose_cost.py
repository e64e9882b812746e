"""Choose mode's KB cost against text mode's, on the demo questions, on any KB (issue 22, item 5).

Three runs of :class:`agent.methods.query_agent.QueryAgent` over the 37 demo
questions (``pyql/data/demo_questions.jsonl``), with ERASER, each question
on a fresh environment over one KB:

* ``text``: a scripted LLM writes the question's gold chain, one action a call;
* ``choose (trials)``: a scripted LLM picks the listed step that is the next
  gold step (its variables matched as they were named; the first listed step
  when the gold one is not listed), every candidate tried one by one, as
  before batches (``enumerate_choices(batch=False)``);
* ``choose (batched)``: the same, the candidates checked in batched queries
  (:class:`pyql.environment.batch_trials.StepChecker`).

No model runs, so the figures are the KB's alone: KB queries and KB seconds
per question (the KB's own counters: every query the episode sent, the
environment's looks and the choose mode's checks included), and the
questions answered exactly. ``--kb`` is any KB ``KB.open`` reads (default
the embedded demo), or a SPARQL endpoint's URL with ``--graph``, the graph
the demo KB (``pyql/data/cyclones.ttl``) was loaded into: on a real
Virtuoso 7, started and loaded as the tests do (``tests/virtuoso.py``,
``VirtuosoServer().start()`` and ``load_turtle``).

Usage::

    python benchmarks/bench_choose_cost.py --kb http://127.0.0.1:PORT/sparql --graph http://pyql.test/choose-cost --repeat 2
    python benchmarks/bench_choose_cost.py --kb oxigraph:demo --repeat 3
    python benchmarks/bench_choose_cost.py --kb URL --graph GRAPH --configs text,batched,text --interleave --repeat 2

``--configs`` picks the configurations and their order (``text``,
``trials``, ``batched``; a name may repeat: text mode before and after the
choose mode); ``--interleave`` runs them question by question, so a load
that changes during the run weighs on each alike. The ratio is to the mean
of text mode's runs; the load average at the start and the end is printed.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import agent.methods.choose as choose  # noqa: E402
from agent.llm.replies import LLMReply  # noqa: E402
from agent.methods.query_agent import AgentConfig, QueryAgent  # noqa: E402
from correction import Eraser  # noqa: E402
from pyql.kb import KB  # noqa: E402
from pyql.environment.sparql import SparqlEnvironment  # noqa: E402

DEMO = ROOT / "pyql" / "data" / "demo_questions.jsonl"
_CHOICE = re.compile(r"^(\d+)\. (.*?)(?: → .*)?$")


def _args(action: str) -> tuple[str, list[str]]:
    name, _, rest = action.partition("(")
    rest = rest[:-1] if rest.endswith(")") else rest
    return name.strip(), [a.strip() for a in rest.split(", ")] if rest else []


def match(gold: str, listed: str, names: dict[str, str]) -> dict[str, str] | None:
    """The variable names after taking ``listed`` for the gold step ``gold`` (None when it is another step).

    A gold variable already matched must be the same listed one; a new one matches a variable not matched yet.

    Example:
        >>> match("add_fact(m.1, a.b.c, ?x)", "add_fact(m.1, a.b.c, ?c)", {})
        {'?x': '?c'}
        >>> match("add_max(?x)", "add_max(?d)", {"?x": "?c"}) is None
        True
    """
    gold_name, gold_args = _args(gold)
    name, args = _args(listed)
    if gold_name != name or len(gold_args) != len(args):
        return None
    out = dict(names)
    for g, a in zip(gold_args, args):
        if g.startswith("?"):
            if g in out:
                if out[g] != a:
                    return None
            elif not a.startswith("?") or a in out.values():
                return None
            else:
                out[g] = a
        elif g != a:
            return None
    return out


def _norm(value: Any) -> str:
    """An answer as compared with the gold one (numbers and yes/no are written in more than one way)."""
    text = str(value).lower()
    if text in ("true", "yes", "false", "no"):
        return "yes" if text in ("true", "yes") else "no"
    try:
        return repr(float(text))
    except ValueError:
        return str(value)


class GoldChoiceLLM:
    """Choose mode's stand-in for a model: the listed step that is the next gold step (else ``1``)."""

    model = "gold-choice-script"

    def __init__(self, actions: Sequence[str]) -> None:
        self.gold = [a for a in actions if not a.startswith("get_relation")]
        self.done = 0
        self.names: dict[str, str] = {}

    def complete(self, prompt: Any, *, stop: Any = None, tools: Any = None, grammar: str | None = None) -> LLMReply:
        """The number of the next gold step in the prompt's last list of choices."""
        text = prompt if isinstance(prompt, str) else "\n".join(str(m.get("content", "")) for m in prompt)
        listing = text.rsplit("Choices ", 1)[-1].splitlines()[1:]
        choices = [(int(m.group(1)), m.group(2)) for line in listing if (m := _CHOICE.match(line))]
        if self.done < len(self.gold):
            for number, action in choices:
                names = match(self.gold[self.done], action, self.names)
                if names is not None:
                    self.done += 1
                    self.names = names
                    return LLMReply(str(number), finish_reason="stop", model=self.model)
        return LLMReply("1", finish_reason="stop", model=self.model)


class GoldTextLLM:
    """Text mode's stand-in for a model: the gold chain, one action a call."""

    model = "gold-text-script"

    def __init__(self, actions: Sequence[str]) -> None:
        self.actions = list(actions)
        self.calls = 0

    def complete(self, prompt: Any, *, stop: Any = None, tools: Any = None, grammar: str | None = None) -> LLMReply:
        """``Action N: <the N-th gold action>`` (``execute()`` once the chain is done)."""
        self.calls += 1
        action = self.actions[self.calls - 1] if self.calls <= len(self.actions) else "execute()"
        return LLMReply(f"The next step.\nAction {self.calls}: {action}", finish_reason="stop", model=self.model)


#: The configurations the bench knows: name → (action mode, batched checks).
CONFIGS = {"text": ("text", True), "trials": ("choose", False), "batched": ("choose", True)}
#: Their names in the table.
TITLES = {"text": "text", "trials": "choose (trials)", "batched": "choose (batched)"}


def run_one(kb: Any, item: dict[str, Any], config: str) -> tuple[int, float, bool]:
    """One question in one configuration: KB queries, KB seconds, and whether the answer is exact."""
    mode, batch = CONFIGS[config]
    saved = choose.enumerate_choices
    choose.enumerate_choices = functools.partial(saved, batch=batch)  # query_agent imports it when it lists
    try:
        llm = GoldChoiceLLM(item["actions"]) if mode == "choose" else GoldTextLLM(item["actions"])
        agent = QueryAgent(llm, AgentConfig(action_mode=mode, max_steps=12))
        env = SparqlEnvironment(kb, item["question"], entities=item["entities"], analyzer=Eraser())
        q0, s0 = kb.stats.queries, kb.stats.seconds
        result = agent.run(env, item["question"])
        exact = {_norm(a.get("value")) for a in result.answers} == {_norm(g) for g in item["answers"]}
        return kb.stats.queries - q0, kb.stats.seconds - s0, exact
    finally:
        choose.enumerate_choices = saved


def run(kb: Any, questions: list[dict[str, Any]], configs: Sequence[str], interleave: bool = False) -> list[dict[str, Any]]:
    """Each configuration over the questions (one after the other, or question by question with ``interleave``):
    per question KB queries and seconds, and exact answers, one result per entry of ``configs``."""
    results = [{"config": c, "queries": [], "seconds": [], "exact": 0} for c in configs]
    order = [(i, item) for item in questions for i in range(len(configs))] if interleave else [
        (i, item) for i in range(len(configs)) for item in questions
    ]
    for i, item in order:
        queries, seconds, exact = run_one(kb, item, configs[i])
        results[i]["queries"].append(queries)
        results[i]["seconds"].append(seconds)
        results[i]["exact"] += exact
    return results


def table(kb_name: str, results: Sequence[dict[str, Any]]) -> str:
    """The markdown table of the runs (KB seconds relative to the mean of text mode's runs).

    Example:
        >>> print(table("kb", [{"config": "text", "queries": [2, 4], "seconds": [0.1, 0.1], "exact": 2},
        ...                    {"config": "batched", "queries": [6, 8], "seconds": [0.2, 0.4], "exact": 1}]))
        | configuration (kb) | questions | answered exactly | KB queries / q (max) | KB seconds / q | × text's KB seconds |
        | --- | ---: | ---: | ---: | ---: | ---: |
        | text | 2 | 2 | 3.00 (4) | 0.1000 | 1.00 |
        | choose (batched) | 2 | 1 | 7.00 (8) | 0.3000 | 3.00 |
    """
    texts = [statistics.mean(r["seconds"]) for r in results if r["config"] == "text"]
    text_seconds = statistics.mean(texts) if texts else float("nan")
    lines = [
        f"| configuration ({kb_name}) | questions | answered exactly | KB queries / q (max) | KB seconds / q | × text's KB seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        n, mean_s = len(r["queries"]), statistics.mean(r["seconds"])
        lines.append(
            f"| {TITLES[r['config']]} | {n} | {r['exact']} | {statistics.mean(r['queries']):.2f} ({max(r['queries'])}) | "
            f"{mean_s:.4f} | {mean_s / text_seconds:.2f} |"
        )
    return "\n".join(lines)


def _configs(text: str) -> list[str]:
    """``--configs``: names of :data:`CONFIGS`, comma-separated (a name may repeat)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"unknown configuration {', '.join(unknown) or '(none)'}; choose among {', '.join(CONFIGS)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", default="oxigraph:demo", help="a KB KB.open reads (default the embedded demo)")
    parser.add_argument("--graph", help="with an endpoint's URL as --kb: the graph holding the demo KB")
    parser.add_argument("--questions", type=int, default=37, help="the first N demo questions")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration; the fastest is reported")
    parser.add_argument("--json", help="also write the per-question figures to this file")
    parser.add_argument(
        "--configs", type=_configs, default=list(CONFIGS),
        help=f"the configurations, in order, comma-separated, a name may repeat (default {','.join(CONFIGS)})",
    )
    parser.add_argument("--interleave", action="store_true", help="run every configuration on a question before the next question")
    args = parser.parse_args(argv)
    if args.questions < 1 or args.repeat < 1:
        parser.error(f"--questions and --repeat must be at least 1, got {args.questions} and {args.repeat}")
    questions = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()][: args.questions]
    if args.graph:
        from pyql.kb.endpoint_backend import EndpointKB

        kb, kb_name = EndpointKB(args.kb, default_graph=args.graph, timeout=60), f"endpoint {args.kb}"
    else:
        kb, kb_name = KB.open(args.kb), args.kb
    started, load = time.perf_counter(), os.getloadavg()[0]
    runs = [run(kb, questions, args.configs, args.interleave) for _ in range(args.repeat)]
    # the fastest run of each entry (its seconds summed over the questions)
    results = [min((r[i] for r in runs), key=lambda r: sum(r["seconds"])) for i in range(len(args.configs))]
    print(table(kb_name, results))
    print(f"\n({time.perf_counter() - started:.0f} s in all; load average (1 min) {load:.2f} → {os.getloadavg()[0]:.2f})", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
