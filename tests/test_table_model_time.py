"""The model's work per table question in choose mode: header scoring only when it could matter, no call for a non-choice.

``pyql_sql.next_steps.scores_could_change`` says when the model's header
scores could change the first listed step; the agent scores the headers only
then (``agent.methods.query_agent.QueryAgent._table_choices``), and takes a
step that is no choice (``agent.methods.choose.forced_choice``) without an LLM
call. These tests count scorer requests and LLM calls with a counting scorer
and a scripted LLM, and check on the table fixtures that skipping the scores
never changes the first listed step.
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.evaluation.environments import feedback_options, open_environment
from agent.llm.scripted import ScriptedLLM
from agent.llm.likelihood import RelationPMI
from agent.methods.choose import forced_choice
from agent.methods.query_agent import AgentConfig, QueryAgent
from pyql.environment.next_steps import NextStep
from pyql_sql.environment import TableEnvironment
from pyql_sql.next_steps import scores_could_change, table_next_steps
from pyql_sql.table import Table

GAMES = Table.from_rows(["Game", "Opponent", "Crowd"], [["6", "Athlone Town", "21000"], ["7", "Shamrock Rovers", "9000"]])
JERSEYS = Table.from_rows(["Player", "Jersey"], [["Art Long", "42"], ["Kyle Lowry", "3"]])


class CountingScorer:
    """A continuation scorer that counts its requests and likes a header whose words are in the question
    (or that goes with one of its words: ``likes``, question word → header word)."""

    def __init__(self, likes: dict[str, str] | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.likes = likes or {}

    def logprob(self, prefix: str, continuation: str) -> float:
        self.calls.append((prefix, continuation))
        word = continuation.strip().split()[0]
        liked = word in prefix.lower() or any(q in prefix.lower() and h == word for q, h in self.likes.items())
        return -1.0 if liked else -4.0


def _run(table: Table, question: str, replies: list[str], likes: dict[str, str] | None = None) -> tuple[Any, ScriptedLLM, RelationPMI]:
    env = TableEnvironment(table, question=question, **feedback_options("eraser", agent=True))
    llm, pmi = ScriptedLLM(replies), RelationPMI(CountingScorer(likes))
    result = QueryAgent(llm, AgentConfig(action_mode="choose", first_relation="model", choice_preview=False), scorer=pmi).run(env, question)
    return result, llm, pmi


def test_the_words_decide_no_scoring_and_execute_without_a_call() -> None:
    result, llm, pmi = _run(GAMES, "how many games with athlone town as the opponent?", ["1", "1"])
    assert [s.action for s in result.steps] == ["add_condition(Opponent, =, Athlone Town)", "set_answer(Game, COUNT)", "execute()"]
    assert pmi.requests == 0 and all(s.scoring_requests == 0 for s in result.steps)
    assert result.extra["column_scoring"] == {"scored": False, "why": "the question's words decided the first listed step"}
    assert result.llm_calls == 2 == len(llm.prompts)
    assert result.steps[-1].without_call == "the answer is set (set_answer(Game, COUNT)): execute() ends the query"
    assert result.steps[-1].prompt_sha256 == "" and result.steps[-1].tokens_in == 0
    assert [a["value"] for a in result.answers] == ["1"]


def test_a_tie_among_the_answers_is_scored_once() -> None:
    result, llm, pmi = _run(GAMES, "who had the crowd at that game?", ["1", "1", "1", "1"])
    scoring = result.extra["column_scoring"]
    assert scoring["scored"] and scoring["why"].startswith("the answer columns tie") and scoring["step"] == 1
    assert pmi.requests == 2 * len(GAMES.headers) == scoring["requests"]  # each header: with and without the question
    assert result.steps[0].scoring_requests == pmi.requests and all(s.scoring_requests == 0 for s in result.steps[1:])
    assert result.llm_calls == len(llm.prompts) == len([s for s in result.steps if s.without_call is None])


def test_a_number_with_no_header_next_to_it_is_scored() -> None:
    result, _, pmi = _run(JERSEYS, "Who wears 42?", ["1", "1", "1"], likes={"wears": "jersey"})
    assert result.extra["column_scoring"]["why"] == "the number '42' has no header next to it: the scores say which numeric column holds it"
    assert pmi.requests == 4
    assert result.steps[0].action == "add_condition(Jersey, =, 42)"  # the scores made it reachable, as before


def test_no_question_terms_are_not_asked_again() -> None:
    pmi = RelationPMI(CountingScorer())
    pmi.scores("who had the crowd at that game?", GAMES.headers)
    pmi.scores("which opponent came on game 6?", GAMES.headers)
    assert pmi.requests == 3 * len(GAMES.headers)
    assert len({c for c in pmi.scorer.calls if c[0] == "Question: ?\nTo answer it, look up the"}) == len(GAMES.headers)


def test_what_the_scores_cannot_change() -> None:
    env = TableEnvironment(GAMES, question="how many games with athlone town as the opponent?")
    assert scores_could_change(env, []) is None
    assert scores_could_change(env, [NextStep("execute()", "execute"), NextStep("set_answer(Game)", "answer")]) is None
    assert scores_could_change(env, table_next_steps(env)) is None  # a condition first, no unnamed number
    env.step("add_condition(Opponent, =, Athlone Town)")
    assert scores_could_change(env, table_next_steps(env)) is None  # "how many games": Game leads by its name
    tie = TableEnvironment(GAMES, question="who had the crowd at that game?")
    assert scores_could_change(tie, table_next_steps(tie)).startswith("the answer columns tie: 'Crowd' leads 'Game'")


def test_forced_choice_only_for_a_non_choice() -> None:
    execute, other = NextStep("execute()", "execute"), NextStep("set_answer(Game)", "answer")
    assert forced_choice([execute, other], "set_answer(Game, COUNT)") is not None
    assert forced_choice([execute, other], "add_condition(Opponent, =, Athlone Town)") is None
    assert forced_choice([execute, other], None) is None  # the set_answer was refused: a choice again
    assert forced_choice([other, execute], "set_answer(Game, COUNT)") is None  # execute() not first
    assert forced_choice([other], None) == "the only listed step"
    assert forced_choice([], None) is None


def _fixture_items() -> list[dict[str, Any]]:
    from agent.evaluation.datasets.loading import load_dataset

    data = Path(__file__).parent / "data"
    items: list[dict[str, Any]] = []
    for path in ("wikisql/dev.jsonl", "wtq/data/training-before300.tsv", "wtq/data/pristine-unseen-tables.tsv"):
        items += list(load_dataset(str(data / path)))
    return items


ITEMS = _fixture_items()


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, len(ITEMS) - 1), raw=st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=40),
       steps=st.integers(0, 3))
def test_skipped_scores_never_change_the_first_step(index: int, raw: list[float], steps: int) -> None:
    """Any scores a model could give leave the first listed step as it is when ``scores_could_change`` says None.

    Deliberate exclusion: only lists for which it gives None are compared (with a reason, the scores may change
    the first step: that is when the agent asks for them); the path follows the unscored first steps.
    """
    item = ITEMS[index]
    env = open_environment(types.SimpleNamespace(feedback="eraser"), item, agent=True)
    headers = list(env.table.headers)
    scores = {h: raw[i % len(raw)] for i, h in enumerate(headers)}
    for _ in range(steps + 1):
        plain = table_next_steps(env)
        if not plain:
            return
        if scores_could_change(env, plain) is None:
            assert table_next_steps(env, scores=scores)[0].action == plain[0].action
        env.step(plain[0].action)
        if env.done:
            return


@pytest.mark.llm
def test_the_local_scorer_counts_its_tokens_and_shares_the_prefix() -> None:
    from agent.llm.local import INSTALL_HINT, missing_local_packages

    missing = missing_local_packages()
    if missing:  # the install hint, as every llm test says it; a failure where CI requires the model
        if os.environ.get("PYQL_REQUIRE_LLM", "").strip() not in ("", "0"):
            pytest.fail(f"PYQL_REQUIRE_LLM is set but {INSTALL_HINT} (missing: {', '.join(missing)})", pytrace=False)
        pytest.skip(f"{INSTALL_HINT} (missing: {', '.join(missing)})")
    from agent.llm.likelihood import LocalScorer

    pmi = RelationPMI(LocalScorer(n_ctx=128))
    pmi.scores("who had the crowd at that game", GAMES.headers)
    first = pmi.tokens
    pmi.scores("who had the crowd at that game", GAMES.headers)  # the no-question terms are kept: one request a header
    assert pmi.requests == 3 * len(GAMES.headers) and 0 < pmi.tokens - first < first
    assert pmi.scorer.evaluations == pmi.requests
