"""The QueryAgent loop with a scripted LLM: deterministic traces."""

from __future__ import annotations

import pytest

from agent.errors import LLMError
from agent.evaluation.environments import feedback_options
from agent.llm.config import LLMConfig
from agent.llm.scripted import ScriptedLLM
from agent.methods.query_agent import (
    AgentConfig,
    AgentConfigError,
    QueryAgent,
    load_example,
)
from pyql.kb import KB
from pyql.environment.sparql import SparqlEnvironment
from tests.rachel_script import CORRECT, QUESTION, RACHEL, env_for

COMPLETION = LLMConfig(mode="completion")


@pytest.fixture()
def kb() -> KB:
    return KB.open("oxigraph:demo")


def test_an_environment_built_for_another_feedback_mode_is_refused(kb: KB) -> None:
    with pytest.raises(AgentConfigError, match="needs an environment with an analyzer"):
        QueryAgent(ScriptedLLM([]), AgentConfig(feedback="eraser")).run(env_for(kb, "raw"), QUESTION)
    with pytest.raises(AgentConfigError, match="needs an environment without an analyzer"):
        QueryAgent(ScriptedLLM([]), AgentConfig(feedback="none")).run(env_for(kb, "eraser"), QUESTION)


def test_correct_trace_answers_and_fires_nothing(kb: KB) -> None:
    llm = ScriptedLLM(CORRECT, config=COMPLETION)
    result = QueryAgent(llm, AgentConfig()).run(env_for(kb), QUESTION)
    assert result.done and not result.forced and result.error is None
    assert result.answers == [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]
    assert result.rules == {}
    assert result.llm_calls == 9 == len(result.steps)
    # one per step, plus one look at the kinds of formed before the first argmax on it (it mixes date
    # types, so the order key stays); set_answer and execute() reuse the argmax's rows
    assert result.kb_queries == 8
    assert result.tokens_in > 0 and result.tokens_out > 0
    first = llm.prompts[0]
    assert isinstance(first, str)
    assert "You can only choose actions from these" in first  # the generated docs
    assert "which cyclone that affected florida" in first  # the one-shot example
    assert first.rstrip().endswith("Thought 1:")
    assert f"Question: {QUESTION}" in first
    # each later prompt carries the previous steps and their observations
    assert "Observation 2: The value of variable ?category is ['Tropical storm (SSHS)' (m.05f4r3k)]" in llm.prompts[2]
    assert llm.calls[0].kwargs["stop"] == ["\nObservation"]


def test_self_correction_with_a_guideline(kb: KB) -> None:
    replies = [
        CORRECT[0],
        " Add the category.\nAction 2: add_fact(m.0crbvqz, ?x)",  # wrong arity
        " Fixed.\nAction 3: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
        " Done.\nAction 4: execute()",
    ]
    llm = ScriptedLLM(replies, config=COMPLETION)
    result = QueryAgent(llm, AgentConfig()).run(env_for(kb), QUESTION)
    assert [s.ok for s in result.steps] == [True, False, True, True]
    assert result.steps[1].rule == "wrong_arity"
    assert result.rules == {"wrong_arity": 1}
    assert "Observation 2: " in llm.prompts[2] and "3 parameters" in llm.prompts[2]
    assert "Please re-generate only Thought 3 and Action 3" in llm.prompts[2]
    assert result.answers == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]


@pytest.mark.parametrize(
    "feedback,expected",
    [("eraser", "Please re-generate only Thought 3"), ("raw", "Error: "), ("none", "The action could not be executed.")],
)
def test_feedback_modes(kb: KB, feedback: str, expected: str) -> None:
    replies = [CORRECT[0], " Oops.\nAction 2: add_fact(m.0crbvqz, ?x)", " Done.\nAction 3: execute()"]
    llm = ScriptedLLM(replies, config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(feedback=feedback)).run(env_for(kb, feedback), QUESTION)
    assert expected in result.steps[1].observation
    assert (result.steps[1].rule is not None) == (feedback == "eraser")


def test_malformed_replies_become_observations(kb: KB) -> None:
    replies = [
        " Since we couldn't find a suitable relation, we need another approach.\nAction 1: Since we couldn't find a relation.",
        " Two at once.\nAction 2: get_relation(m.0crbvqz)\nAction 3: execute()",
        " OK.\nAction 3: get_relation(m.0crbvqz)",
        " OK.\nAction 4: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
        " Done.\nAction 5: execute()",
    ]
    result = QueryAgent(ScriptedLLM(replies, config=COMPLETION)).run(env_for(kb), QUESTION)
    assert [s.error for s in result.steps[:2]] == ["no_action", "multiple_actions"]
    assert result.done


def test_step_limit_forces_an_answer(kb: KB) -> None:
    replies = [CORRECT[0], CORRECT[1], "?category"]
    llm = ScriptedLLM(replies, config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(max_steps=2)).run(env_for(kb), QUESTION)
    assert result.forced and result.done
    assert [s.action for s in result.steps[2:]] == ["set_answer(?category)", "execute()"]
    assert "The step limit is reached" in llm.prompts[-1] and llm.prompts[-1].rstrip().endswith("set_answer(")
    assert result.answers[0]["value"] == "m.05f4r3k"


def test_api_errors_are_retried_then_reported(kb: KB) -> None:
    flaky = [LLMError("busy", status=429, retryable=True), LLMError("oops", status=503, retryable=True), *CORRECT]
    llm = ScriptedLLM(flaky, config=LLMConfig(mode="completion", max_retries=4))
    result = QueryAgent(llm).run(env_for(kb), QUESTION)
    assert result.done and result.steps[0].attempts == 3 and len(llm.sleeps) == 2

    dead = ScriptedLLM([LLMError("bad request", status=400)], config=COMPLETION)
    failed = QueryAgent(dead).run(env_for(kb), QUESTION)
    assert failed.error and "llm_error" in failed.error and not failed.done and failed.answers == []


def test_chat_style_uses_messages(kb: KB) -> None:
    chat = [r.replace(" ", "Thought: ", 1) for r in CORRECT]
    llm = ScriptedLLM(chat, config=LLMConfig(mode="chat"))
    result = QueryAgent(llm).run(env_for(kb), QUESTION)
    assert result.done
    messages = llm.prompts[3]
    assert isinstance(messages, list) and messages[0]["role"] == "system"
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[-1]["content"].startswith("Observation 3: ")


def test_history_is_trimmed_to_the_budget_but_not_the_current_step(kb: KB) -> None:
    whole = ScriptedLLM(CORRECT, config=COMPLETION)
    QueryAgent(whole, AgentConfig()).run(env_for(kb), QUESTION)
    cap = len(whole.prompts[-1]) // 3 - 60  # the last prompt's estimated tokens (3 characters a token), less a little
    llm = ScriptedLLM(CORRECT, config=COMPLETION)
    QueryAgent(llm, AgentConfig(token_budget=cap, keep_observation=40)).run(env_for(kb), QUESTION)
    last = llm.prompts[-1]
    assert "chars]" in last and "[shortened: " in last
    # the most recent observation is whole
    assert "Observation 8: The value of variable ?cyclone is ['Tropical Storm Dolly' (m.0107j2dw)]" in last


def test_bad_settings_are_reported() -> None:
    with pytest.raises(AgentConfigError, match="feedback"):
        AgentConfig(feedback="loud")
    with pytest.raises(AgentConfigError, match="one-shot example"):
        load_example("nope")


def test_user_example_file(kb: KB, tmp_path) -> None:
    example = tmp_path / "mine.txt"
    example.write_text("Question: my own example\nAction 1: execute()\n")
    llm = ScriptedLLM(CORRECT, config=COMPLETION)
    QueryAgent(llm, AgentConfig(example=str(example))).run(env_for(kb), QUESTION)
    assert "Question: my own example" in llm.prompts[0]


def test_bundled_example_matches_the_demo_kb(demo_env: DemoEnv) -> None:
    """The one-shot example's observations are what the environment really says."""
    text = load_example("freebase")
    lines = text.splitlines()
    env = demo_env(entities={"Florida": "m.02xry"})
    for i, line in enumerate(lines):
        if line.startswith("Action "):
            number, action = line.split(": ", 1)
            record = env.step(action)
            expected = lines[i + 1].split(": ", 1)[1]
            assert record.ok and record.observation == expected, number


def test_bundled_table_example_matches_its_table() -> None:
    """The SQL one-shot example's observations are what the table environment says."""
    from correction import Eraser
    from pyql_sql import Table
    from pyql_sql.environment import TableEnvironment

    table = Table.from_rows(
        ["Name", "Season", "Category", "Deaths"],
        [
            ["Hurricane Katrina", "2005", "Category 5", "1,833"],
            ["Hurricane Rita", "2005", "Category 5", "7"],
            ["Tropical Storm Arlene", "2005", "Tropical storm", "1"],
            ["Hurricane Sandy", "2012", "Category 3", "233"],
            ["Hurricane Patricia", "2015", "Category 5", "8"],
        ],
        name="cyclones",
    )
    env = TableEnvironment(table, analyzer=Eraser())
    lines = load_example("table").splitlines()
    assert lines[1] == "Table: " + env.describe_table()
    for i, line in enumerate(lines):
        if line.startswith("Action "):
            record = env.step(line.split(": ", 1)[1])
            assert record.ok and record.observation == lines[i + 1].split(": ", 1)[1], line


def test_table_question_with_the_default_example() -> None:
    from pyql_sql import Table
    from pyql_sql.environment import TableEnvironment

    table = Table.from_rows(["Team", "Wins"], [["Ajax", "3"], ["PSV", "5"]], name="teams")
    replies = [
        " Look at the teams.\nAction 1: get_column(Team)",
        " PSV.\nAction 2: add_condition(Team, =, PSV)",
        " Wins.\nAction 3: set_answer(Wins, None)",
        " Done.\nAction 4: execute()",
    ]
    llm = ScriptedLLM(replies, config=COMPLETION)
    result = QueryAgent(llm).run(
        TableEnvironment(table, question="how many wins did psv have?", **feedback_options("eraser", agent=True)),
        "how many wins did psv have?",
    )
    assert result.answers == [{"value": "5", "label": None}]
    assert "how many deaths did the category 5 cyclones" in llm.prompts[0]
    assert "Table: Table 'teams' (2 rows)" in llm.prompts[0]


# -- issue 11: no correct step blocked, candidates, no loops ----------------------------------

Q01 = "what category is tropical storm rachel?"
GUESSED = " Rachel's category.\nAction {n}: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)"
WRONG = " Rachel's damage.\nAction {n}: add_fact(m.0crbvqz, meteorology.tropical_cyclone.damage, ?c)"


def q01_env(kb: KB) -> SparqlEnvironment:
    return SparqlEnvironment(kb, question=Q01, entities=RACHEL, **feedback_options("eraser", agent=True))


def test_a_correct_guessed_step_runs_with_advice(kb: KB) -> None:
    """add_fact with the right relation before any get_relation is not blocked: it runs, with a note."""
    llm = ScriptedLLM([GUESSED.format(n=1), " Done.\nAction 2: execute()"], config=COMPLETION)
    env = q01_env(kb)
    result = QueryAgent(llm, AgentConfig()).run(env, Q01)
    first = result.steps[0]
    assert first.ok and first.error is None and first.rule is None
    assert first.advice == "fact_before_get_relation"
    assert first.observation.startswith("The value of variable ?c is ['Tropical storm (SSHS)' (m.05f4r3k)]")
    assert "Note: " in first.observation and "get_relation(m.0crbvqz)" in first.observation
    # the look the step skipped was made by the environment and is in the memory, as if it had been done
    assert "meteorology.tropical_cyclone.category" in env.memory.relations["m.0crbvqz"].forward
    assert result.answers == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]
    assert result.llm_calls == 2 and result.rules == {} and result.advice == {"fact_before_get_relation": 1}
    assert result.to_dict()["advice"] == {"fact_before_get_relation": 1}


def test_a_wrong_relation_gets_the_entitys_real_relations(kb: KB) -> None:
    llm = ScriptedLLM([WRONG.format(n=1), GUESSED.format(n=2), " Done.\nAction 3: execute()"], config=COMPLETION)
    result = QueryAgent(llm, AgentConfig()).run(q01_env(kb), Q01)
    wrong = result.steps[0]
    assert not wrong.ok and wrong.rule == "fact_empty_unknown_relation"
    guideline = wrong.observation
    real = kb.relations("m.0crbvqz")
    assert "meteorology.tropical_cyclone.category" in real.forward
    for relation in real.forward:  # the demo entity has fewer relations than the cap: all are listed
        assert relation in guideline
    # ranked against the question: the category relation is the first forward candidate
    assert guideline.split("forward: [", 1)[1].startswith("meteorology.tropical_cyclone.category")
    assert result.answers == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]


def test_a_repeated_mistake_escalates_and_the_loop_ends(kb: KB) -> None:
    """The same failed action: level 1, 2 (the environment looks), 3, then the agent stops (max_repeats)."""
    replies = [WRONG.format(n=i) for i in range(1, 13)]
    llm = ScriptedLLM(replies + ["?c"], config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(max_repeats=3, max_steps=12)).run(q01_env(kb), Q01)
    tried = [s for s in result.steps if not s.forced]
    assert len(tried) == 4  # the mistake and its three repeats, then the agent stops that line
    assert [s.escalation for s in tried] == [0, 1, 2, 3]
    observations = [s.observation for s in tried]
    assert len(set(observations)) == 4, "each repeat gets a different response"
    assert "already failed at step 1" in observations[1]
    assert "The environment looked for you: get_relation(m.0crbvqz): forward: [" in observations[2]
    assert "do not write it again" in observations[3]
    assert result.stopped == "repeated_mistake" and result.forced and result.steps[-1].forced
    assert result.answers == []  # nothing was built: the forced execute() has nothing to answer
    assert result.escalations == {"1": 1, "2": 1, "3": 1}
    assert result.llm_calls <= 3 + 1  # never more than max_repeats + 1 calls on one mistake (no variable to ask about)
    assert len(llm.prompts) == result.llm_calls


def test_max_repeats_is_configurable(kb: KB) -> None:
    llm = ScriptedLLM([WRONG.format(n=i) for i in range(1, 13)], config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(max_repeats=1)).run(q01_env(kb), Q01)
    assert result.stopped == "repeated_mistake"
    assert result.llm_calls == 2 and result.escalations == {"1": 1}
    with pytest.raises(AgentConfigError, match="max_repeats"):
        AgentConfig(max_repeats=0)


def test_without_escalation_the_cap_still_ends_a_repeated_mistake(kb: KB) -> None:
    """``--no-escalation`` (ablation): the same guideline each time, and ``max_repeats`` still stops the line."""
    env = SparqlEnvironment(kb, question=Q01, entities=RACHEL, escalate=False, **feedback_options("eraser", agent=True))
    llm = ScriptedLLM([WRONG.format(n=i) for i in range(1, 13)], config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(max_repeats=2)).run(env, Q01)
    tried = [s for s in result.steps if not s.forced]
    assert len(tried) == 3 and result.stopped == "repeated_mistake"
    assert [s.escalation for s in tried] == [0, 0, 0]
    # the same guideline each time (it names its own step number), no escalation text
    assert len({re.sub(r"\d+", "N", s.observation) for s in tried}) == 1
    assert not any("already failed" in s.observation or "looked for you" in s.observation for s in tried)


def test_escalation_totals_reach_the_eval_summary() -> None:
    from agent.evaluation.metrics import aggregate

    base = {"answers": [], "gold": ["m.1"], "done": True, "steps": [], "llm_calls": 4, "rules": {}}
    records = [
        {**base, "escalations": {"1": 1, "2": 1, "3": 1}, "stopped": "repeated_mistake", "advice": {"fact_before_get_relation": 2}},
        {**base, "escalations": {"1": 2}, "advice": {"fact_before_get_relation": 1}},
    ]
    m = aggregate(records)
    assert m.escalations == {"1": 3, "2": 1, "3": 1} and m.stopped == 1
    assert m.advice == {"fact_before_get_relation": 3}
    assert ("repeated failed actions: escalation level 1 / 2 / 3", "3 / 1 / 1") in m.rows()
    assert m.to_dict()["escalations"] == {"1": 3, "2": 1, "3": 1}
# ---------------------------------------------------------------------------
# choose mode: the LLM picks one of the enumerated steps by number

import datetime as dt
import json
import re
from pathlib import Path

from agent.evaluation.metrics import exact_match
from agent.llm.replies import LLMReply
from agent.methods.choose import choice_gbnf
from pyql.action_parser import parse_action
from tests.gold_steps import match_gold
from tests.demo import DemoEnv

DEMO = Path(__file__).resolve().parent.parent / "pyql" / "data" / "demo_questions.jsonl"
ITEMS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]


class GoldPicker:
    """An LLM that answers each choice prompt with the number of the next gold step (fresh names mapped)."""

    def __init__(self, env: SparqlEnvironment, gold: list[str], config: LLMConfig = COMPLETION) -> None:
        self.env, self.gold, self.config = env, list(gold), config
        self.mapping: dict[str, str] = {}
        self.calls: list[dict] = []

    def complete(self, prompt, *, stop=None, tools=None, grammar=None) -> LLMReply:
        self.calls.append({"prompt": prompt, "grammar": grammar, "stop": stop})
        block = prompt.rsplit("Choices ", 1)[1]
        options = re.findall(r"^(\d+)\. (.+?)(?: → .*)?$", block, re.MULTILINE)
        existing = {str(v) for v in self.env.query.variables}
        while self.gold:
            gold = self.gold[0]
            listed = any(a.startswith("get_relation(") for _, a in options)
            if gold.startswith("get_relation(") and not listed and self._looked(gold):
                self.gold.pop(0)  # already looked at by the environment (auto_look)
                continue
            for number, action in options:
                new = match_gold(gold, action, self.mapping, existing)
                if new is not None:
                    self.mapping.update(new)
                    self.gold.pop(0)
                    return LLMReply(number, usage_in=len(prompt.split()), usage_out=1)
            return LLMReply("none", usage_in=len(prompt.split()), usage_out=1)
        return LLMReply("1", usage_in=1, usage_out=1)

    def _looked(self, gold: str) -> bool:
        arg = parse_action(gold).args[0]
        key = self.mapping.get("?" + arg.value, "?" + arg.value) if arg.kind == "variable" else arg.raw
        return key in self.env.memory.relations


def _choose_env(kb: KB, item: dict) -> SparqlEnvironment:
    return SparqlEnvironment(kb, item["question"], item["entities"], **feedback_options("eraser", agent=True))


@pytest.mark.parametrize("auto_look", [False, True])
def test_choose_replays_every_gold_chain_by_numbers(kb: KB, auto_look: bool) -> None:
    config = AgentConfig(action_mode="choose", max_steps=14, max_choices=200, choice_relations=30, auto_look=auto_look)
    answered = set()
    for item in ITEMS:
        env = _choose_env(kb, item)
        # q16 asks for the current governor: its chain was written on 2026-11-21, the agent uses today
        gold = [a.replace("2026-11-21", dt.date.today().isoformat()) for a in item["actions"]]
        picker = GoldPicker(env, gold)
        result = QueryAgent(picker, config).run(env, item["question"])
        if item["id"] != "q15":
            assert all(s.ok for s in result.steps), item["id"]
        if result.done and not result.forced and exact_match(result.answers, item["answers"]) == 1.0:
            answered.add(item["id"])
            looks = sum(a.startswith("get_relation(") for a in item["actions"])
            # every LLM call picked one gold step; with auto_look the looks cost no call
            assert result.llm_calls == len(item["actions"]) - (looks if auto_look else 0), item["id"]
    # q15's gold chain writes Katrina's formation date without looking it up: no listed step has it
    assert {i["id"] for i in ITEMS} - answered == {"q15"}


def test_choose_prompt_lists_numbered_steps_and_constrains_the_reply(kb: KB) -> None:
    item = ITEMS[0]
    local = LLMConfig(base_url="http://127.0.0.1:1/v1", mode="completion")
    env = _choose_env(kb, item)
    llm = ScriptedLLM(["1", "9", "1"], config=local)
    result = QueryAgent(llm, AgentConfig(action_mode="choose")).run(env, item["question"])
    first = llm.prompts[0]
    assert "Choices 1:\n1. add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category) → ?category = Tropical storm (SSHS)" in first
    assert first.endswith("Choice 1:")
    assert "which cyclone that affected florida" in first  # the one-shot example, in the choose format
    n = len(re.findall(r"^\d+\. ", first.rsplit("Choices 1:", 1)[1], re.MULTILINE))
    assert llm.calls[0].kwargs["grammar"] == choice_gbnf(n)
    assert llm.calls[0].kwargs["stop"] == ["\n"]
    assert result.steps[0].action == "get_relation(m.0crbvqz)" and result.steps[0].prompt_sha256 == ""  # the environment's look
    assert result.steps[1].action.startswith("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category")


class _WordScorer:
    """A toy continuation scorer: a relation's words score high after any question when they hold ``word``."""

    def __init__(self, word: str) -> None:
        self.word, self.calls = word, []

    def logprob(self, prefix: str, continuation: str) -> float:
        self.calls.append((prefix, continuation))
        asked = "Question: ?" not in prefix
        return (0.0 if asked and self.word in continuation else -4.0) - len(continuation) / 100


def test_choose_orders_the_first_relation_by_the_models_pmi(kb: KB) -> None:
    """first_relation="model": the first list is ordered by the scorer's PMI; later lists by the ranking."""
    from agent.llm.likelihood import RelationPMI

    item = ITEMS[0]
    llm = ScriptedLLM(["1", "1", "1", "1"], config=COMPLETION)
    scorer = _WordScorer("formed")
    pmi = RelationPMI(scorer)
    config = AgentConfig(action_mode="choose", first_relation="model", max_steps=3)
    result = QueryAgent(llm, config, scorer=pmi).run(_choose_env(kb, item), item["question"])
    chosen = [s for s in result.steps if s.prompt_sha256 and not s.forced]
    assert chosen[0].action == "add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?formed)"
    assert "Choices 1:\n1. add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?formed)" in llm.prompts[0]
    from agent.llm.likelihood import relation_words

    relations = set(re.findall(r"^\d+\. add_fact\([^,]+, ([^,]+),", llm.prompts[0].rsplit("Choices 1:", 1)[1], re.MULTILINE))
    # each listed relation once with the question, its words once without (then cached); later steps are not scored
    expected = len(relations) + len({relation_words(r) for r in relations})
    assert chosen[0].scoring_requests == pmi.requests == expected and all(s.scoring_requests == 0 for s in chosen[1:])
    assert {c for p, c in scorer.calls if "Question: ?" in p} == {c for p, c in scorer.calls if "Question: ?" not in p}
    assert all(p.startswith("Question: what category is tropical storm rachel?\nTo answer it") for p, _ in scorer.calls if "Question: ?" not in p)
    # the ranked default takes the category first
    ranked = QueryAgent(ScriptedLLM(["1"], config=COMPLETION), AgentConfig(action_mode="choose", max_steps=1))
    first = next(s for s in ranked.run(_choose_env(kb, item), item["question"]).steps if s.prompt_sha256)
    assert first.action.startswith("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category") and first.scoring_requests == 0


def test_first_relation_setting_is_checked() -> None:
    with pytest.raises(AgentConfigError, match="first_relation"):
        AgentConfig(first_relation="bert")


def test_choose_retries_once_then_records_an_invalid_choice(kb: KB) -> None:
    env = _choose_env(kb, ITEMS[0])
    llm = ScriptedLLM(["I pick the category", "1", "?", "nothing", "oops", "no"], config=COMPLETION)
    result = QueryAgent(llm, AgentConfig(action_mode="choose", max_steps=2)).run(env, ITEMS[0]["question"])
    assert llm.calls[0].kwargs["grammar"] is None  # not a local server: no GBNF, a parse and a retry
    assert "Answer with one number from 1 to" in llm.prompts[1]
    chosen = [s for s in result.steps if s.prompt_sha256 and not s.forced]
    assert chosen[0].ok and chosen[0].attempts == 2
    assert chosen[1].error == "invalid_choice" and not chosen[1].ok
    assert result.llm_calls == 5  # 2 + 2 + the forced answer


def test_choose_runs_on_a_table() -> None:
    from pyql_sql.environment import TableEnvironment
    from pyql_sql.table import Table

    table = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
    question = "how many games with athlone town as the opponent?"
    env = TableEnvironment(table, question=question, **feedback_options("eraser", agent=True))
    llm = ScriptedLLM(["1", "1", "1"])
    result = QueryAgent(llm, AgentConfig(action_mode="choose")).run(env, question)
    assert [s.action for s in result.steps] == ["add_condition(Opponent, =, Athlone Town)", "set_answer(Game, COUNT)", "execute()"]
    assert [a["value"] for a in result.answers] == ["1"] and result.llm_calls == 2  # execute() after set_answer: no call
    assert [s.without_call for s in result.steps] == [None, None, "the answer is set (set_answer(Game, COUNT)): execute() ends the query"]
    assert "1. add_condition(Opponent, =, Athlone Town) → 1 row matches" in str(llm.prompts[0])


def test_choices_are_ordered_against_the_question() -> None:
    from agent.methods.choose import rank_choices
    from pyql.environment.next_steps import NextStep

    steps = [
        NextStep("add_fact(?c, meteorology.tropical_cyclone.affected_areas, ?affected_areas)", "fact", "?affected_areas = Cuba"),
        NextStep("add_max(?winds)", "constrain"),
        NextStep("add_avg(?winds, ?average)", "aggregate"),
        NextStep("add_count(?c, ?number)", "aggregate"),
        NextStep("set_answer(?winds)", "answer", "?winds = 280"),
        NextStep("set_answer(?cyclone)", "answer", "?cyclone = Katrina"),
    ]
    built = ["add_fact(?cyclone, meteorology.tropical_cyclone.highest_winds, ?winds)"]
    top = [s.action for s in rank_choices("which cyclone had the highest winds?", steps, built)]
    assert top[0] == "add_max(?winds)"  # the cue "highest"
    assert top.index("set_answer(?cyclone)") < top.index("set_answer(?winds)")  # named like the question, not a number
    assert "add_avg(?winds, ?average)" not in top and "add_count(?c, ?number)" not in top  # no cue for them
    counted = [s.action for s in rank_choices("how many cyclones affected louisiana?", steps, built)]
    assert counted[0] == "add_count(?c, ?number)"
    with_execute = rank_choices("which cyclone?", [*steps, NextStep("execute()", "execute")], built)
    assert with_execute[0].action == "execute()"


# -- tools mode: the structured call goes to the environment ------------------------------------


def test_tools_mode_steps_the_tool_call_itself(kb: KB) -> None:
    """A native tool call reaches Environment.step as an ActionCall (no text round trip); the trace reads as in text mode."""
    from agent.llm.replies import LLMReply, ToolCall
    from pyql.action_parser import ActionCall

    class Recording(SparqlEnvironment):
        def step(self, text):  # type: ignore[override]
            self.given = [*getattr(self, "given", []), text]
            return super().step(text)

    def tool(name: str, **args: str) -> LLMReply:
        return LLMReply("", tool_calls=[ToolCall(name, args)])

    replies = [
        LLMReply("Rachel first.", tool_calls=[ToolCall("get_relation", {"entity_or_variable": "m.0crbvqz"})]),
        tool("add_fact", tail="?c", relation="meteorology.tropical_cyclone.category", head="m.0crbvqz"),
        tool("add_fact", head="m.0crbvqz"),  # wrong arity: the same error as a written one
        LLMReply("", tool_calls=[ToolCall("execute", {}), ToolCall("execute", {})]),  # two calls: parsed as text
        tool("execute"),
    ]
    env = Recording(kb, question=Q01, entities=RACHEL, **feedback_options("raw", agent=True))
    result = QueryAgent(ScriptedLLM(replies), AgentConfig(action_mode="tools", feedback="raw")).run(env, Q01)
    assert [type(g).__name__ for g in env.given] == ["ActionCall", "ActionCall", "ActionCall", "str", "ActionCall"]
    assert isinstance(env.given[0], ActionCall) and env.given[3] == "Action 4: execute()\nAction 4: execute()"
    assert [(s.action, s.ok, s.error) for s in result.steps] == [
        ("get_relation(m.0crbvqz)", True, None),
        ("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", True, None),
        ("add_fact(m.0crbvqz)", False, "wrong_arity"),
        (None, False, "multiple_actions"),
        ("execute()", True, None),
    ]
    assert result.steps[0].reply == "Rachel first.\nAction 1: get_relation(m.0crbvqz)"
    assert [a["label"] for a in result.answers] == ["Tropical storm (SSHS)"]
