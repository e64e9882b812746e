"""What the table choose mode's list alone gets: always take the first listed step.

The bundled 270M model answers ``1`` to nearly every numbered list
(``docs/benchmarks.md``), so on table questions the order of
:func:`pyql_sql.next_steps.table_next_steps` decides most answers. This script
follows the first listed step of every list until ``execute()`` (at most 8
steps) and scores the answers by denotation, per question and in all: the
ceiling-free figure of the ranking, no model needed. The local model's own
figure comes from ``pyql eval FILE --out run.jsonl`` (choose mode is its
default on tables); both are in ``docs/benchmarks.md``.

Run from the repository root::

    python benchmarks/bench_table_agent.py ../shared/data/wikisql_dbbench/dev.jsonl
    python benchmarks/bench_table_agent.py tests/data/wikisql/dev.jsonl tests/data/wtq/data/training-before300.tsv -v
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Sequence
from typing import Any

from agent.evaluation.datasets.loading import load_dataset
from agent.evaluation.environments import open_environment
from agent.evaluation.datasets.registry import get_format
from agent.evaluation.metrics import denotation_match
from pyql_sql.next_steps import table_next_steps

MAX_STEPS = 8


def first_choices(item: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Follow the first listed step until ``execute()``: the actions taken and the answers."""
    env = open_environment(types.SimpleNamespace(feedback="eraser"), item, agent=True)
    taken: list[str] = []
    for _ in range(MAX_STEPS):
        steps = table_next_steps(env)
        if not steps:
            break
        taken.append(steps[0].action)
        env.step(steps[0].action)
        if env.done:
            break
    answers = [str(a["value"]) for a in env.final_result().answers] if env.done else []
    return taken, answers


def run(path: str, verbose: bool) -> tuple[int, int, float]:
    """Score one data file: (right, questions, steps per question)."""
    dataset = load_dataset(path)
    right, steps = 0, 0
    for item in dataset:
        taken, answers = first_choices(item)
        fmt = get_format(dataset.format)
        match = fmt.denotation if fmt is not None and fmt.denotation is not None else denotation_match
        good = bool(match(answers, item["answers"]))
        right += good
        steps += len(taken)
        if verbose:
            print(f"{'ok ' if good else 'BAD'} {item['id']}: {item['question'][:80]}\n    {taken} → {answers[:4]} (gold {item['answers'][:4]})")
    return right, len(dataset), steps / max(len(dataset), 1)


def main(argv: Sequence[str] | None = None) -> int:
    """Print one row per data file: questions, right by denotation, steps per question, seconds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", help="table data sets (dbbench, WikiSQL, WTQ)")
    parser.add_argument("-v", "--verbose", action="store_true", help="each question's steps and answers")
    args = parser.parse_args(argv)
    print("| data set | questions | right (first listed step) | steps per question | seconds |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for path in args.files:
        start = time.perf_counter()
        right, total, steps = run(path, args.verbose)
        print(f"| {path} | {total} | {right} ({right / max(total, 1):.0%}) | {steps:.1f} | {time.perf_counter() - start:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
