"""Table runs scored as the benchmarks score them: WTQ's official denotation match and AgentBench's dbbench comparison.

WTQ's rules are those of its evaluator (``evaluator.py`` of WikiTableQuestions,
reimplemented in :mod:`agent.evaluation.datasets.wtq`): normalized strings,
numbers by value, ``yyyy-mm-dd`` dates, a year alone a number, the same number
of distinct values. AgentBench's dbbench task compares one value as a number
(else as the same text) and several values as a set of texts, and a change by
the table's state; its report is the accuracy per type and their mean.
"""

from __future__ import annotations

import pytest

from agent.evaluation.datasets.dbbench import agentbench_answer_match
from agent.evaluation.metrics import agentbench_accuracy, aggregate, record_scores, wtq_denotation_match


@pytest.mark.parametrize(
    ("predicted", "gold", "ok"),
    [
        (["U.S. Open."], ["U.S. Open"], True),  # a final period
        (['"Stayin\' Alive"'], ["stayin' alive"], True),  # outer quotes
        (["Smith†"], ["Smith"], True),  # a trailing citation mark
        (["Smith (a) (b)"], ["Smith"], True),  # several parenthesized details at the end
        (["12"], ["12.0000001"], True),  # numbers within 1e-6
        (["12"], ["12.1"], False),
        (["1990-03-05"], ["1990-03-05"], True),
        (["xx-03-05"], ["1990-03-05"], False),  # every field of a date must match
        (["March 5, 1990"], [{"value": "March 5, 1990", "canon": "1990-03-05"}], True),  # the same text
        (["1990-03-05"], [{"value": "March 5, 1990", "canon": "1990-03-05"}], True),  # the canonical date
        (["a", "a", "b"], ["a", "b"], True),  # distinct values
        (["a", "b"], ["a", "a"], False),
        (["Ajax", "1"], ["ajax"], False),
    ],
)
def test_wtq_official_denotation_rules(predicted: list, gold: list, ok: bool) -> None:
    assert wtq_denotation_match(predicted, gold) is ok


@pytest.mark.parametrize(
    ("predicted", "gold", "ok"),
    [
        (["5"], ["5.0"], True),  # one value each: numbers by value, within 0.01 (THUDM/AgentBench's compare_results)
        (["5.001"], ["5"], True),
        (["5.02"], ["5"], False),
        (["1,174"], ["1174"], True),  # thousands commas and a final % dropped
        (["12%"], ["12"], True),
        (["Ajax"], ["Ajax"], True),
        (["ajax"], ["Ajax"], False),  # text exactly, case and all
        (["Ajax", "PSV"], ["PSV", "Ajax"], True),  # several: a set
        (["Ajax", "PSV", "PSV"], ["PSV", "Ajax"], True),
        (["1", "2"], ["2.0", "1.0"], True),  # several numbers: matched one to one
        (["1", "1"], ["1.0"], False),
        ([], ["none"], True),  # no value is SQL's NULL, read as 0 as 'none' is
        (["None"], ["0"], True),
        ([], ["Ajax"], False),
        (["table-state:0a"], ["table-state:0a"], True),
        (["Ajax"], ["table-state:0a"], False),
        ([], ["table-state:0a"], False),
    ],
)
def test_agentbench_dbbench_comparison(predicted: list, gold: list, ok: bool) -> None:
    assert agentbench_answer_match([{"value": v, "label": None} for v in predicted], gold) is ok


def _record(kind: str, answers: list[str], gold: list[str]) -> dict:
    return {"source": "dbbench", "kind": kind, "table": "T", "answers": [{"value": a, "label": None} for a in answers],
            "gold": gold, "done": True, "steps": [], "rules": {}}


def test_a_dbbench_run_is_scored_as_agentbench_reports_it() -> None:
    records = [
        _record("counting", ["2"], ["2.0"]), _record("other", ["ajax"], ["Ajax"]),
        _record("INSERT", ["table-state:1"], ["table-state:1"]), _record("INSERT", ["table-state:2"], ["table-state:3"]),
        _record("UPDATE", ["table-state:4"], ["table-state:4"]),
    ]
    assert [record_scores(r)["denotation"] for r in records] == [1.0, 0.0, 1.0, 0.0, 1.0]
    report = agentbench_accuracy(records)
    assert report == {"SELECT": 0.5, "INSERT": 0.5, "UPDATE": 1.0, "overall_cat": 0.6667, "items": 5}
    metrics = aggregate(records)
    assert metrics.agentbench == report and metrics.denotation == pytest.approx(0.6)
    assert any(name.startswith("AgentBench dbbench accuracy") for name, _ in metrics.rows())
