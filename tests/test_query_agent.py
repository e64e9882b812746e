"""The QueryAgent loop with a scripted LLM: deterministic traces."""

from __future__ import annotations

import pytest

from agent.environments import feedback_options
from agent.llm import LLMConfig, LLMError, ScriptedLLM
from agent.query_agent import AgentConfig, AgentConfigError, QueryAgent, load_example
from pyql.sparql_environment import SparqlEnvironment
from pyql.kb import KB

QUESTION = "which was the most recently formed cyclone that is in the same category as tropical storm rachel?"
RACHEL = {"Tropical Storm Rachel": "m.0crbvqz"}
COMPLETION = LLMConfig(mode="completion")

CORRECT = [
    " I need Rachel's relations.\nAction 1: get_relation(m.0crbvqz)",
    " The category relation.\nAction 2: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
    " Relations of the category.\nAction 3: get_relation(?category)",
    " Cyclones of that category.\nAction 4: add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
    " Relations of the cyclones.\nAction 5: get_relation(?cyclone)",
    " Formed time.\nAction 6: add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)",
    " Latest.\nAction 7: add_max(?time)",
    " Answer.\nAction 8: set_answer(?cyclone)",
    " Done.\nAction 9: execute()",
]


@pytest.fixture()
def kb() -> KB:
    return KB.open("oxigraph:demo")


def env_for(kb: KB, feedback: str = "eraser") -> SparqlEnvironment:
    # the analyzer is fixed when the environment is built, for the agent's feedback mode
    return SparqlEnvironment(kb, question=QUESTION, entities=RACHEL, **feedback_options(feedback, agent=True))


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
    assert result.kb_queries == 7  # one per step; set_answer and execute() reuse the argmax's rows
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
    llm = ScriptedLLM(CORRECT, config=COMPLETION)
    QueryAgent(llm, AgentConfig(token_budget=200, keep_observation=40)).run(env_for(kb), QUESTION)
    last = llm.prompts[-1]
    assert "... (shortened)" in last
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


def test_bundled_example_matches_the_demo_kb() -> None:
    """The one-shot example's observations are what the environment really says."""
    text = load_example("freebase")
    lines = text.splitlines()
    env = SparqlEnvironment(KB.open("demo"), entities={"Florida": "m.02xry"})
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
