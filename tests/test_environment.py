"""The step environment: parse → validate → execute → observation, and undo on failure."""

from __future__ import annotations

import inspect
import json

import pytest

from grammars.vocabulary import COMPARISON_OPERATORS
from pyql.action_parser import parse_action
from pyql.environment.actions import render_docs
from pyql.environment import Environment
from pyql.errors import EngineError
from pyql.kb import KB
from pyql.kb.observation import Observation, Relations
from pyql.environment.sparql_actions import SparqlActions
from pyql.environment.sparql import SparqlEnvironment

RACHEL = {"Tropical Storm Rachel": "m.0crbvqz"}


@pytest.fixture(scope="module")
def kb() -> KB:
    return KB.open("oxigraph:demo")


def test_a_good_step_changes_the_query_and_the_memory(kb: KB) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)
    r1 = env.step("get_relation(m.0crbvqz)")
    assert r1.ok and isinstance(r1.result, Relations) and r1.query_after is None
    assert "meteorology.tropical_cyclone.category" in env.memory.relations["m.0crbvqz"].forward
    r2 = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    assert r2.ok and isinstance(r2.result, Observation)
    assert env.query is r2.query_after and len(env.query.steps) == 1
    assert env.memory.variables == {"?category": 2}
    assert "m.05f4r3k" in env.memory.seen
    assert r2.kb_queries == 1 and r1.kb_queries == 1


@pytest.mark.parametrize(
    "action,error",
    [
        ("add_fact(?x, ?y)", "wrong_arity"),
        ("get_relations(m.0crbvqz)", "invalid_action"),
        ("Action 2: I am not sure what to do next.", "no_action"),
        ("Action 2: get_relation(m.0crbvqz)\nAction 3: execute()", "multiple_actions"),
        ("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category", "action_syntax"),
        ("add_filter(?category, meteorology.tropical_cyclone.category, 3)", "bad_argument"),
        ("set_answer(\"yes\")", "bad_argument"),
        ("set_answer(?nothing)", "bad_query"),
        ("add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, 1999-01-01)", "empty_result"),
        ("add_fact(m.0crbvqz, Hurricane Katrina, ?x)", "bad_argument"),
    ],
)
def test_a_failed_step_is_undone_and_says_why(kb: KB, action: str, error: str) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    before = env.query
    record = env.step(action)
    assert not record.ok
    assert record.error == error
    assert record.observation
    assert env.query is before
    assert record not in env.memory.steps and record in env.history


@pytest.mark.parametrize("line", ["execute()()", "execute() now", "Action 3: execute() ; DROP"])
def test_text_after_the_call_is_not_run(kb: KB, line: str) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    record = env.step(line)
    assert (record.ok, record.error) == (False, "action_syntax")
    assert "unexpected text after the call at column" in record.observation
    assert not env.done


def test_engine_errors_are_caught_and_undone(kb: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)

    def broken(*args: object, **kwargs: object) -> object:
        raise EngineError("the engine is on fire", query="SELECT")

    monkeypatch.setattr(kb, "observe", broken)
    record = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    assert (record.ok, record.error) == (False, "engine_error")
    assert "on fire" in record.observation
    assert not env.query.steps


def test_execute_ends_the_episode_with_answers(kb: KB) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)
    env.run(
        [
            "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
            "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
            "add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)",
            "add_max(?time)",
            "set_answer(?cyclone)",
            "execute()",
            "get_relation(m.0crbvqz)",
        ]
    )
    assert env.done
    assert len(env.history) == 6, "run() stops at execute()"
    final = env.final_json()
    assert final["answers"] == [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]
    assert final["sparql"].startswith("PREFIX")
    after = env.step("get_relation(m.0crbvqz)")
    assert not after.ok and "already executed" in after.observation


def test_counters_count_this_episode_only(kb: KB) -> None:
    SparqlEnvironment(kb).step("get_relation(m.0crbvqz)")
    env = SparqlEnvironment(kb)
    env.step("get_relation(m.0crbvqz)")
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    counters = env.counters
    assert counters["steps"] == 2 and counters["kb_queries"] == 2 and counters["kb_seconds"] > 0


def test_undo_restores_the_previous_query(kb: KB) -> None:
    env = SparqlEnvironment(kb)
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    first = env.query
    env.step("add_fact(?x, meteorology.tropical_cyclone.category, ?c)")
    env.undo()
    assert env.query == first


def test_relation_ranker_caps_long_lists(kb: KB) -> None:
    seen: list[list[str]] = []

    def ranker(question: str | None, relations: list[str]) -> list[str]:
        seen.append(relations)
        return sorted(relations, reverse=True)

    env = SparqlEnvironment(kb, question="q", relation_ranker=ranker, max_relations=2)
    record = env.step("get_relation(m.0dkl7)")
    assert record.ok and len(record.result.forward) == 2 and seen


def test_whole_reply_is_accepted(kb: KB) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)
    reply = "Thought 1: I need the relations of Rachel.\nAction 1 : `get_relation(m.0crbvqz)`\n"
    assert env.step(reply).ok


# -- the documentation is the code ------------------------------------------------


def test_every_accepted_action_is_documented_and_nothing_else() -> None:
    from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS

    actions = SparqlActions(SPARQL_ALL_ACTIONS)  # the default set and MarkQA's
    docs = render_docs(actions, "markdown")
    prompt = render_docs(actions, "prompt")
    tools = json.loads(render_docs(actions, "openai-tools"))
    from pyql.builder.kind import declarations

    marked = {
        name
        for name, fn in inspect.getmembers(SparqlActions, inspect.isfunction)
        if getattr(fn, "__pyql_action__", None)
    } | {d.name for d in declarations()}  # the look and the end, and every action a step kind declares
    assert set(actions.names) == marked
    assert {t["function"]["name"] for t in tools} == marked
    operators = {t["function"]["name"]: t["function"]["parameters"]["properties"]["op"] for t in tools if "op" in t["function"]["parameters"]["properties"]}
    assert operators and all(p["enum"] == list(COMPARISON_OPERATORS) for p in operators.values()), operators
    for spec in actions.specs():
        assert f"`{spec.signature}`" in docs and f"`{spec.signature}`" in prompt
        assert spec.summary and spec.example.startswith(spec.name + "(")
        assert all(p.description for p in spec.params), spec.name
        parse_action(spec.example)  # every documented example is a valid action
    env = SparqlEnvironment(KB.open("oxigraph:"))
    for name in ("eval", "__init__", "convert", "_observe", "order", "spec", "method", "declarations", "run_declared", "_run_declared"):
        record = env.step(f"{name}()")
        assert record.error == "invalid_action", name


def test_restricting_actions_restricts_docs_and_acceptance(kb: KB) -> None:
    paper_eight = ["get_relation", "add_fact", "add_max", "add_min", "add_count", "add_filter", "set_answer", "execute"]
    env = SparqlEnvironment(kb, actions=paper_eight)
    assert env.actions.names == tuple(paper_eight)
    assert "add_time_constrain" not in render_docs(env.actions, "prompt")
    assert render_docs(env.actions, "prompt").startswith("You can only choose actions from these 8 actions")
    assert env.step("add_type_constrain(meteorology.tropical_cyclone, ?x)").error == "invalid_action"


def test_base_environment_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        Environment(SparqlActions())


# -- advice never blocks; repeated failures escalate (issue 11) ------------------------------


def test_advice_does_not_block_the_environment_makes_the_look(kb: KB) -> None:
    """An analyzer's advice: the environment looks the relations up, asks again, runs the step with a note."""
    from pyql.environment import Feedback
    from pyql.builder.terms import IRI

    calls: list[tuple[str, bool]] = []

    def advise(record, env):  # advice until the head's relations are known, then nothing
        if record.phase != "before" or record.action != "add_fact":
            return None
        head = record.args["head"]
        known = env.kb.profile.shorten(head.value) in env.memory.relations if isinstance(head, IRI) else True
        calls.append((record.phase, known))
        return None if known else Feedback("look_first", "look first next time", advice=True, looks=(head,))

    env = SparqlEnvironment(kb, entities=RACHEL, analyzer=advise)
    record = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    assert record.ok and record.error is None and record.advice == "look_first"
    assert record.observation.endswith("Note: look first next time")
    assert calls == [("before", False), ("before", True)]  # asked again once the look was made
    assert "m.0crbvqz" in env.memory.relations and record.looks[0].startswith("get_relation(m.0crbvqz): forward: [")
    assert record.kb_queries == 2  # the look and the step's own query
    assert record.to_json()["advice"] == "look_first"


def test_an_error_after_the_look_still_blocks(kb: KB) -> None:
    from pyql.environment import Feedback

    def advise_then_refuse(record, env):
        if record.phase != "before":
            return None
        if "m.0crbvqz" not in env.memory.relations:
            return Feedback("look_first", "note", advice=True, looks=("m.0crbvqz",))
        return Feedback("wrong", "this is wrong")

    env = SparqlEnvironment(kb, entities=RACHEL, analyzer=advise_then_refuse)
    record = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    assert not record.ok and record.error == "wrong" and record.observation == "this is wrong"
    assert env.query.steps == () and "m.0crbvqz" in env.memory.relations  # the look is kept, the step is not


def test_the_same_failed_action_escalates(kb: KB) -> None:
    env = SparqlEnvironment(kb, entities=RACHEL)  # no analyzer: the kernel's own failures escalate too
    texts = ["add_fact(m.0crbvqz, ?x)", "add_fact( m.0crbvqz ,?x )", "add_fact(m.0crbvqz, ?x)", "add_fact(m.0crbvqz, ?x)"]
    records = [env.step(t) for t in texts]
    assert [r.escalation for r in records] == [0, 1, 2, 3]
    assert [r.repeats for r in records] == [0, 1, 2, 3]
    assert len({r.observation for r in records}) == 4
    assert records[1].observation.startswith("add_fact(m.0crbvqz, ?x) already failed at step 1")
    assert "The environment looked for you: get_relation(m.0crbvqz): forward: [" in records[2].observation
    assert "meteorology.tropical_cyclone.category" in env.memory.relations["m.0crbvqz"].forward
    assert "has failed 4 times" in records[3].observation and "do not write it again" in records[3].observation
    assert records[3].to_json()["escalation"] == 3
    # a different action is not a repeat, and a success resets nothing it should not
    other = env.step("get_relation(m.0crbvqz)")
    assert other.ok and other.escalation == 0


def test_ablation_switches_block_advice_and_stop_escalating(kb: KB) -> None:
    """``run_advice=False``: advice blocks like an error (no look made); ``escalate=False``: the same text again."""
    from correction import Eraser

    env = SparqlEnvironment(kb, entities=RACHEL, analyzer=Eraser(), run_advice=False, escalate=False)
    records = [env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)") for _ in range(3)]
    assert [(r.ok, r.error, r.escalation, r.advice) for r in records] == [(False, "fact_before_get_relation", 0, None)] * 3
    assert len({r.observation for r in records}) == 1 and env.query.steps == ()
    assert [r.repeats for r in records] == [0, 1, 2]  # still counted, for the agent's --max-repeats
    assert "m.0crbvqz" not in env.memory.relations  # blocked before any look, as before the split
    # the default environment runs the same step at once
    assert SparqlEnvironment(kb, entities=RACHEL, analyzer=Eraser()).step(records[0].text).ok


def test_normalized_action_ignores_spacing() -> None:
    from pyql.environment import StepRecord, normalized_action

    assert normalized_action(StepRecord(1, "add_max( ?t )")) == normalized_action(StepRecord(2, "add_max(?t)")) == "add_max(?t)"
    assert normalized_action(StepRecord(1, "add_max(?t)")) != normalized_action(StepRecord(1, "add_min(?t)"))


def test_level_two_shows_no_relations_where_relations_do_not_help(kb: KB) -> None:
    """A repeated bad set_answer: level 2 points at the candidates (the variables), not at get_relation output."""
    from correction import Eraser

    env = SparqlEnvironment(kb, entities=RACHEL, analyzer=Eraser())
    assert env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)").ok
    records = [env.step("set_answer(answer_var)") for _ in range(3)]
    assert [r.escalation for r in records] == [0, 1, 2]
    assert "The environment looked for you" not in records[2].observation
    assert "Choose one of the candidates instead" in records[2].observation
    assert "Existing variables include: ?c" in records[2].observation
