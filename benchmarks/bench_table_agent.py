"""What the table choose mode's list alone gets: always take the first listed step.

The bundled 270M model answers ``1`` to nearly every numbered list
(``docs/benchmarks.md``), so on table questions the order of
:func:`pyql_sql.next_steps.table_next_steps` decides most answers. This script
follows the first listed step of every list until ``execute()`` (at most 8
steps) and scores the answers by denotation, per question and in all: the
ceiling-free figure of the ranking, no model needed. The local model's own
figure comes from ``pyql eval FILE --out run.jsonl`` (choose mode is its
default on tables); both are in ``docs/benchmarks.md``.

It also counts what the agent's model would do on that path, without the
load of the machine in the figure: the LLM calls (the steps
:func:`agent.methods.choose.forced_choice` does not take without one), and,
with ``--scores``, the model's header scoring (``needed``: only when
:func:`pyql_sql.next_steps.scores_could_change` gives a reason, as the agent
does; ``always``: once a question, as it did before) with its requests and
evaluated tokens (:class:`agent.llm.likelihood.LocalScorer`, in process).

Run from the repository root::

    python benchmarks/bench_table_agent.py ../shared/data/wikisql_dbbench/dev.jsonl
    python benchmarks/bench_table_agent.py ../shared/data/wikisql_dbbench/dev.jsonl --scores needed
    python benchmarks/bench_table_agent.py tests/data/wikisql/dev.jsonl tests/data/wtq/data/training-before300.tsv -v
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.evaluation.datasets.loading import load_dataset
from agent.evaluation.environments import open_environment
from agent.evaluation.datasets.registry import get_format
from agent.evaluation.metrics import denotation_match
from agent.methods.choose import forced_choice
from pyql_sql.next_steps import column_words, scores_could_change, table_next_steps

MAX_STEPS = 8


@dataclass
class Path:
    """One question's path: the steps taken, the answers, the LLM calls they need, the scoring."""

    taken: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    calls: int = 0
    scored_at: int | None = None
    why: str | None = None


def first_choices(item: dict[str, Any], scorer: Any = None, scoring: str = "none") -> Path:
    """Follow the first listed step until ``execute()``: the actions taken, the answers, the calls and the scoring.

    ``scoring``: ``none`` (the list alone), ``needed`` (the headers scored by
    ``scorer``, a :class:`agent.llm.likelihood.RelationPMI`, when they could
    change the first step, as the agent does) or ``always`` (before each question's first step).
    """
    env = open_environment(types.SimpleNamespace(feedback="eraser"), item, agent=True)
    path, scores, previous = Path(), None, None
    for step in range(1, MAX_STEPS + 1):
        if scoring == "always" and scores is None:
            scores, path.scored_at, path.why = scorer.scores(env.question, list(env.table.headers), words=column_words), step, "always"
        steps = table_next_steps(env, scores=scores)
        why = scores_could_change(env, steps) if scoring == "needed" and scores is None else None
        if why is not None:
            scores, path.scored_at, path.why = scorer.scores(env.question, list(env.table.headers), words=column_words), step, why
            steps = table_next_steps(env, scores=scores)
        if not steps:
            break
        path.calls += forced_choice(steps, previous) is None
        record = env.step(steps[0].action)
        path.taken.append(steps[0].action)
        previous = steps[0].action if record.ok else None
        if env.done:
            break
    path.answers = [str(a["value"]) for a in env.final_result().answers] if env.done else []
    return path


def run(path: str, verbose: bool, scorer: Any = None, scoring: str = "none") -> dict[str, float]:
    """Score one data file: questions, right, and per question: steps, LLM calls, questions scored, scorer work."""
    dataset = load_dataset(path)
    totals = {"questions": len(dataset), "right": 0, "steps": 0, "calls": 0, "scored": 0}
    before = (scorer.requests, scorer.tokens, scorer.seconds) if scorer is not None else (0, 0, 0.0)
    for item in dataset:
        p = first_choices(item, scorer, scoring)
        fmt = get_format(dataset.format)
        match = fmt.denotation if fmt is not None and fmt.denotation is not None else denotation_match
        good = bool(match(p.answers, item["answers"]))
        totals["right"] += good
        totals["steps"] += len(p.taken)
        totals["calls"] += p.calls
        totals["scored"] += p.scored_at is not None
        if verbose:
            print(f"{'ok ' if good else 'BAD'} {item['id']}: {item['question'][:80]}\n    {p.taken} → {p.answers[:4]} (gold {item['answers'][:4]})"
                  + (f"\n    scored at step {p.scored_at}: {p.why}" if p.scored_at is not None else ""))
    if scorer is not None:
        totals.update(requests=scorer.requests - before[0], tokens=scorer.tokens - before[1], scorer_seconds=scorer.seconds - before[2])
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    """Print one row per data file: questions, right by denotation, steps, LLM calls and scoring per question, seconds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", help="table data sets (dbbench, WikiSQL, WTQ)")
    parser.add_argument("-v", "--verbose", action="store_true", help="each question's steps and answers")
    parser.add_argument("--scores", choices=("none", "needed", "always"), default="none",
                        help="the model's header scores: none (the list alone, default), needed (as the agent: only when "
                             "they could change the first step), always (once a question, as before)")
    args = parser.parse_args(argv)
    scorer = None
    if args.scores != "none":
        from agent.llm.likelihood import local_scorer

        scorer = local_scorer()
    print("| data set | questions | right (first listed step) | steps / q | LLM calls / q | questions scored | scorer requests / q "
          "| scorer tokens / q | scorer s / q | seconds |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in args.files:
        start = time.perf_counter()
        t = run(path, args.verbose, scorer, args.scores)
        n = max(t["questions"], 1)
        scoring = (f"{t['requests'] / n:.2f} | {t['tokens'] / n:.1f} | {t['scorer_seconds'] / n:.2f}" if scorer is not None else "— | — | —")
        print(f"| {path} | {t['questions']} | {t['right']} ({t['right'] / n:.0%}) | {t['steps'] / n:.2f} | {t['calls'] / n:.2f} "
              f"| {t['scored']} | {scoring} | {time.perf_counter() - start:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
