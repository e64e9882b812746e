"""The choose mode on tables (pyql_sql/next_steps.py, agent.methods.choose.enumerate_table_choices).

Conditions come from the question's grounded values matched to the table's
real cells (case, whitespace, number formats, dates), aggregations from its
cue words, the answer column from the header it names.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from agent.methods.choose import choice_lines, enumerate_table_choices
from pyql_sql.environment import TableEnvironment
from pyql_sql.next_steps import (
    answer_candidates,
    condition_candidates,
    header_mentions,
    table_next_steps,
)
from pyql_sql.table import Table
from tests.shared_data import needs_shared, shared_path


def _conditions(table: Table, question: str) -> list[tuple[str, str, str]]:
    return [(table.columns[c.column].header, c.op, c.value) for c in condition_candidates(table, question)]


def test_cells_match_whatever_their_case_and_spacing() -> None:
    t = Table.from_rows(["Opponent", "Venue"], [["Athlone Town", "Home"], ["Shamrock  Rovers", "Away"]])
    assert _conditions(t, "games against athlone town?")[0] == ("Opponent", "=", "Athlone Town")
    assert _conditions(t, "games against SHAMROCK rovers?")[0] == ("Opponent", "=", "Shamrock  Rovers")


def test_numbers_match_cells_in_another_format() -> None:
    t = Table.from_rows(["Club", "Attendance"], [["A", "1,174"], ["B", "2,000"]])
    assert ("Attendance", "=", "1,174") in _conditions(t, "which club had an attendance of 1174?")
    t = Table.from_rows(["Club", "Attendance"], [["A", "1174"], ["B", "2000"]])
    assert ("Attendance", "=", "1174") in _conditions(t, "which club had an attendance of 1,174?")


def test_dates_match_cells_written_otherwise() -> None:
    t = Table.from_rows(["Date", "Opponent"], [["August 15, 2000", "A"], ["March 19, 1998", "B"]])
    assert _conditions(t, "who played on 2000-08-15?")[0] == ("Date", "=", "August 15, 2000")
    assert _conditions(t, "who played on 15 August 2000?")[0] == ("Date", "=", "August 15, 2000")
    assert ("Date", "=", "March 19, 1998") not in _conditions(t, "who played in March 1999?")


def test_comparisons_go_to_the_column_named_next_to_them() -> None:
    t = Table.from_rows(["Goal", "Season", "Score"], [["16", "1999", "1–0"], ["18", "2003", "2–0"]])
    first = _conditions(t, "Which Score has a Goal smaller than 17?")[0]
    assert first == ("Goal", "<", "17")
    assert _conditions(t, "Which Score has a Season of at least 2001?")[0] == ("Season", ">=", "2001")


def test_header_mentions_prefer_the_whole_header() -> None:
    t = Table.from_rows(["Home team", "Home team score", "Crowd"], [["A", "13.17 (95)", "21000"]])
    mentions = header_mentions(t, "Of the matches that had a home team score of 13.17 (95), which match had the largest crowd?")
    assert set(mentions) == {1, 2}  # "home team" is inside "home team score"


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Name the least touchdowns for 11 points", ("Touchdowns", "MIN")),
        ("What is the total game number with athlone town as the opponent?", ("Game", "COUNT")),
        ("When the transfer fee is £8.5m, what is the total ends?", ("Ends", "SUM")),
        ("What is the average Total, when Gold is 0?", ("Total", "AVG")),
        ("Which Average has a Season of 1999?", ("Average", None)),  # "Average" is the header, not a cue
    ],
)
def test_answer_column_and_aggregation(question: str, expected: tuple[str, str | None]) -> None:
    t = Table.from_rows(
        ["Game", "Opponent", "Touchdowns", "Points", "Ends", "Transfer fee", "Total", "Gold", "Average", "Season"],
        [["1", "Athlone Town", "2", "11", "2011", "£8.5m", "1", "0", "3", "1999"]],
    )
    index, aggregation, _ = answer_candidates(t, question)[0]
    assert (t.columns[index].header, aggregation) == expected


def test_steps_follow_the_query() -> None:
    t = Table.from_rows(["Round", "Pole Position", "Fastest Lap"],
                        [["5", "Takashi Kogure", "Takashi Kogure"], ["3", "Takashi Kogure", "Other"], ["9", "X", "Takashi Kogure"]])
    env = TableEnvironment(t, question="What was the earlier round where Takashi Kogure got the fastest lap?")
    steps = table_next_steps(env)
    assert steps[0].action == "add_condition(Fastest Lap, =, Takashi Kogure)"
    assert all(s.kind in ("constrain", "answer") for s in steps)
    env.step(steps[0].action)
    after = table_next_steps(env)
    assert not any("Fastest Lap, =" in s.action for s in after)  # one condition per column
    assert after[0].action == "set_answer(Round, MIN)"
    env.step(after[0].action)
    assert env.step(table_next_steps(env)[0].action).observation == "The answer is [5]"


def test_conditions_no_row_meets_are_not_listed() -> None:
    t = Table.from_rows(["Nation", "Gold"], [["Iran", "0"], ["Iraq", "2"]])
    env = TableEnvironment(t, question="What is the Gold when Nation is Iran and Nation is Iraq?")
    env.step("add_condition(Nation, =, Iran)")
    assert not any(s.action.startswith("add_condition(Nation") for s in table_next_steps(env))


def test_duplicated_headers_are_named_by_number() -> None:
    t = Table.from_rows(["Team", "Team"], [["Athlone Town", "x"]])
    steps = table_next_steps(TableEnvironment(t, question="how many rows with athlone town?"))
    assert steps[0].action == "add_condition(#0, =, Athlone Town)"


def test_choices_carry_previews() -> None:
    t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
    env = TableEnvironment(t, question="How many games with athlone town as the opponent?")
    listing = choice_lines(enumerate_table_choices(env))
    assert listing.splitlines()[0] == "1. add_condition(Opponent, =, Athlone Town) → 1 row matches the conditions: {'Game': '6', 'Opponent': 'Athlone Town'}"
    assert env.query.steps == ()  # previews are tried and undone


def follow_first_steps(env: Any, limit: int = 8) -> Any:
    """Take the first listed step until the episode ends (what a model that always answers 1 does); the env."""
    for _ in range(limit):
        steps = table_next_steps(env)
        if not steps:
            break
        env.step(steps[0].action)
        if env.done:
            break
    return env


@needs_shared("dbbench")
def test_dbbench_dev_first_choices() -> None:
    """On the dbbench dev questions, taking the first listed step every time (what a model that always answers 1 does)."""
    from agent.evaluation.datasets.loading import load_dataset
    from agent.evaluation.environments import open_environment
    from agent.evaluation.metrics import denotation_match

    right = 0
    dataset = [i for i in load_dataset(shared_path("dbbench")) if i["kind"] not in ("INSERT", "UPDATE")]  # changes: test_table_mutation.py
    for item in dataset:
        env = follow_first_steps(open_environment(types.SimpleNamespace(feedback="eraser"), item, agent=True))
        answers = [a["value"] for a in env.final_result().answers]
        right += env.done and denotation_match(answers, item["answers"])  # an unfinished episode answers nothing, not "none"
    assert len(dataset) == 14 and right >= 12


def test_table_readi_edits_with_the_same_candidates() -> None:
    from agent.llm.scripted import ScriptedLLM
    from agent.methods.readi_table import TableReadi

    t = Table.from_rows(["Venue", "Opponent", "Crowd"], [["MCG", "Athlone Town", "21000"], ["SCG", "Other", "100"]])
    llm = ScriptedLLM(['Chosen Headers: ["stadium", "crowd"]', 'Chosen Headers: ["Venue", "Crowd"]\nConstrains: "Opponent": ["Athlone Town"]',
                       "Answer: ['21000']"])
    TableReadi(llm).run(t, "what was the largest crowd against athlone town?")
    edit = llm.prompts[1]
    assert "You can only choose headers from ['Crowd', 'Opponent', 'Venue']" in edit  # ranked: the answer, then the condition
    assert 'The question names these cells: "Opponent": ["Athlone Town"]' in edit


def test_the_agent_keeps_table_observations_short_in_choose_mode() -> None:
    from agent.evaluation.environments import feedback_options
    from agent.llm.scripted import ScriptedLLM
    from agent.methods.query_agent import AgentConfig, QueryAgent

    t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
    question = "how many games with athlone town as the opponent?"
    env = TableEnvironment(t, question=question, **feedback_options("eraser", agent=True))
    llm = ScriptedLLM(["1", "1", "1"])
    result = QueryAgent(llm, AgentConfig(action_mode="choose", choice_preview=False)).run(env, question)
    assert [a["value"] for a in result.answers] == ["1"]
    later = str(llm.prompts[1])
    assert "Observation 1: 1 row matches the conditions" in later and "'Game': '6'" not in later
    assert "{'Game': '6', 'Opponent': 'Athlone Town'}" in result.steps[0].observation  # the trace keeps it whole


def test_which_noun_asks_for_the_row_in_people_questions_and_the_most_in_sql_written_ones() -> None:
    """*which game had the largest attendance*: a WTQ question wants the game (the row's first text column), a
    question written from SQL (WikiSQL, dbbench) the most itself; the environment's ``question_style`` says which."""
    t = Table.from_rows(["Date", "Opponent", "Attendance"], [["7 April 1993", "Leeds", "46000"], ["9 May 1993", "Hull", "3000"]])
    q = "which game had the largest attendance?"
    natural = follow_first_steps(TableEnvironment(t, question=q))
    assert [a["value"] for a in natural.final_result().answers] == ["7 April 1993"]
    sql = follow_first_steps(TableEnvironment(t, question=q, question_style="sql"))
    assert [str(a["value"]) for a in sql.final_result().answers] == ["46000"]
    # "the most in attendance": the column after the cue, past an "in"
    assert follow_first_steps(TableEnvironment(t, question="which game had the most in attendance?")).final_result().answers[0]["value"] == "7 April 1993"
    # a question naming what it asks for, or asking "what is the most", is not a row's name
    assert answer_candidates(t, "what is the largest attendance?")[0][:2] == (2, "MAX")


def test_an_unknown_question_style_is_refused_with_the_styles_allowed() -> None:
    from pyql_sql.errors import TableInputError

    with pytest.raises(TableInputError, match=r"question_style 'wtq' is not known: give one of natural, sql"):
        TableEnvironment(Table.from_rows(["a"], [["1"]]), question_style="wtq")


@pytest.mark.parametrize(("source", "style"), [("wtq", "natural"), ("wikisql", "sql"), ("dbbench", "sql"), (None, "natural")])
def test_eval_items_get_the_question_style_of_their_data_set(source: str | None, style: str) -> None:
    from agent.evaluation.environments import open_environment

    item = {"id": "x", "question": "which game had the most in attendance?", "source": source,
            "table": {"header": ["Date", "Attendance"], "rows": [["7 April", "46000"]]}}
    env = open_environment(types.SimpleNamespace(feedback="eraser"), item, agent=True)
    assert env.question_style == style
