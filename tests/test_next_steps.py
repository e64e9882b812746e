"""pyql.environment.next_steps: the valid next steps of a SPARQL episode, on the demo KB.

Every gold step of the demo questions must be among the steps enumerated at
its point (up to the names of fresh variables), except the one whose literal
is neither in the question nor in anything the episode has seen; and every
enumerated step must run without an error.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.environments import feedback_options
from agent.evaluation.metrics import exact_match
from agent.methods.ranking import BM25Ranker
from pyql.action_parser import parse_action
from pyql.kb import KB
from pyql.environment.next_steps import NextStep, next_steps, question_literals, trial
from pyql.environment.sparql import SparqlEnvironment
from tests.gold_steps import match_gold

DEMO = Path(__file__).resolve().parent.parent / "pyql" / "data" / "demo_questions.jsonl"
ITEMS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
#: The gold date of q15 is Katrina's formation date, written without looking it up: not enumerable.
NOT_ENUMERABLE = {("q15", 4)}
TODAY = dt.date(2026, 11, 21)  # the date q16's gold chain was written with


@pytest.fixture(scope="module")
def kb() -> KB:
    return KB.open("oxigraph:demo")


def env_for(kb: KB, item: dict[str, Any]) -> SparqlEnvironment:
    return SparqlEnvironment(kb, item["question"], item["entities"], **feedback_options("eraser", agent=True))


def replay(kb: KB, item: dict[str, Any], check: Any = None) -> tuple[SparqlEnvironment, list[int]]:
    """Follow the gold chain by picking enumerated steps; the indexes of gold steps not enumerated."""
    env = env_for(kb, item)
    mapping: dict[str, str] = {}
    missing = []
    for index, gold in enumerate(item["actions"]):
        steps = next_steps(env, rank=BM25Ranker().rank, per_argument=30, limit=200, today=TODAY)
        if check is not None:
            check(env, steps)
        existing = {str(v) for v in env.query.variables}
        for step in steps:
            new = match_gold(gold, step.action, mapping, existing)
            if new is not None:
                mapping.update(new)
                assert env.step(step.action).ok
                break
        else:
            missing.append(index)
            renamed = parse_action(gold)
            line = gold
            for arg in renamed.args:
                if arg.kind == "variable" and "?" + arg.value in mapping:
                    line = line.replace("?" + arg.value, mapping["?" + arg.value])
            assert env.step(line).ok, line
            for var in env.query.variables:
                mapping.setdefault(str(var), str(var))
    return env, missing


def test_every_gold_step_is_enumerated_and_the_chain_answers(kb: KB) -> None:
    not_found = set()
    for item in ITEMS:
        env, missing = replay(kb, item)
        not_found |= {(item["id"], i) for i in missing}
        if not missing:
            assert exact_match(env.final_result().answers, item["answers"]) == 1.0, item["id"]
    assert not_found == NOT_ENUMERABLE


def test_every_enumerated_step_runs_without_an_error(kb: KB) -> None:
    tried = 0

    def check(env: SparqlEnvironment, steps: list[NextStep]) -> None:
        nonlocal tried
        before = (env.query, len(env.history), dict(env.memory.variables))
        for step in steps:
            record = trial(env, step.action)
            assert record.ok, (step.action, record.error, record.observation)
            tried += 1
        assert (env.query, len(env.history), dict(env.memory.variables)) == before

    for item in ITEMS[::3]:
        replay(kb, item, check)
    assert tried > 200


def test_the_list_is_bounded_and_keeps_answers_and_execute(kb: KB) -> None:
    item = next(i for i in ITEMS if i["id"] == "q02")
    env = env_for(kb, item)
    assert [s.action for s in next_steps(env)] == ["get_relation(m.0crbvqz)"]  # nothing to build on yet
    env.step("get_relation(m.0crbvqz)")
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    env.step("get_relation(?category)")
    steps = next_steps(env, limit=6)
    assert len(steps) == 6
    kinds = [s.kind for s in steps]
    assert "answer" in kinds and "execute" not in kinds  # execute() once the query says what it answers
    env.step("set_answer(?category)")
    assert "execute" in [s.kind for s in next_steps(env, limit=6)]
    # a backward relation of ?category is offered as a fact that ends on it, with a fresh head
    env.undo()
    facts = [s.action for s in next_steps(env, limit=40, per_argument=30) if s.kind == "fact"]
    assert "add_fact(?tropical_cyclone, meteorology.tropical_cyclone.category, ?category)" in facts
    # a fact already in the query is not offered again
    assert not any(a.startswith("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?") for a in facts)


def test_unverified_lists_can_hold_failing_steps_but_verified_ones_do_not(kb: KB) -> None:
    item = next(i for i in ITEMS if i["id"] == "q04")
    env = env_for(kb, item)
    env.step("get_relation(m.04ly1)")
    env.step("add_fact(m.04ly1, government.governmental_jurisdiction.governing_officials, ?position)")
    env.step("get_relation(?position)")
    raw = next_steps(env, verify=False, limit=200, per_argument=30)
    bad = [s for s in raw if s.kind != "look" and not trial(env, s.action).ok]
    assert bad, "the demo KB has entity tails that do not fit every relation"
    kept = {s.action for s in next_steps(env, limit=200, per_argument=30)}
    assert not kept & {s.action for s in bad}
    assert "add_fact(?position, government.government_position_held.basic_title, m.0fkvn)" in kept


def test_question_literals() -> None:
    lits = question_literals("who was the governor of louisiana in 2005?")
    assert lits["years"] == ["2005"] and lits["spans"] == [("2005-12-31", "2005-01-01")]
    assert question_literals("who is the current governor?", dt.date(2026, 1, 2))["spans"] == [("2026-01-02", "2026-01-02")]
    assert question_literals("cyclones with winds above 200 km/h")["numbers"] == ["200"]


def test_nothing_after_execute(kb: KB) -> None:
    env = env_for(kb, ITEMS[0])
    for line in ITEMS[0]["actions"]:
        env.step(line)
    assert env.done and next_steps(env) == []
