"""The table agent's query side beyond conditions (issue 22, item 3).

``add_order`` (ORDER BY ... LIMIT: an argmax of one column returning
another), and what the choose list grounds: headers named by an
abbreviation, cells written with another dash, ``between``, a count column's
own number, conditions that together keep no row (the answer ``none``), the
model's column scores, and Table Readi drawing from the same list.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.methods.readi_table import question_constraints, ranked_headers
from correction import Eraser
from pyql_sql import Table
from pyql_sql.environment import TableEnvironment
from pyql_sql.errors import BadValueError, UnknownColumnError
from pyql_sql.next_steps import (
    answer_candidates,
    argmax_order,
    column_words,
    condition_candidates,
    grounded_conditions,
    header_mentions,
    own_number,
    table_next_steps,
)
from pyql.environment.grounding import ground

SEASONS = Table.from_rows(
    ["Season", "Episodes", "Network"],
    [["Season 1", "26", "A"], ["Season 2", "52", "B"], ["Season 3", "—", "B"], ["Season 4", "52", "A"], ["Season 5", "9", "B"]],
)


def _answers(query) -> list[object]:
    return [a.value for a in query.table.executor().execute(query)]


# ---------------------------------------------------------------------------
# add_order

def test_order_returns_another_column_of_the_top_row() -> None:
    q = SEASONS.query().add_order("Episodes", "DESC").set_answer("Season")
    assert _answers(q) == ["Season 2"]  # a tie with Season 4 keeps table order
    assert _answers(SEASONS.query().add_order("episodes", "min").set_answer("Season")) == ["Season 5"]
    assert q.display_sql() == 'SELECT "Season" FROM "table" ORDER BY "Episodes" DESC LIMIT 1'


def test_order_applies_after_every_condition_and_under_an_aggregation() -> None:
    q = SEASONS.query().add_order("Episodes", "DESC", 2).add_condition("Network", "=", "b")
    assert _answers(q.set_answer("Season")) == ["Season 2", "Season 5"]
    assert _answers(q.set_answer("Episodes", "SUM")) == [61.0]
    assert SEASONS.executor().count(q) == 2
    assert "FROM (SELECT * FROM" in q.set_answer("Episodes", "SUM").display_sql()


def test_order_on_a_mixed_column_puts_numbers_first_and_skips_empty_cells() -> None:
    t = Table.from_rows(["Name", "Rank"], [["a", "n/a"], ["b", "3"], ["c", None], ["d", "12"]])
    assert not t.columns[1].is_numeric
    assert _answers(t.query().add_order("Rank", "DESC").set_answer("Name")) == ["d"]
    assert _answers(t.query().add_order("Rank", "ASC", 3).set_answer("Name")) == ["b", "d", "a"]


@pytest.mark.parametrize("direction, limit, message", [
    ("up", 1, "Unknown order direction 'up'"), ("DESC", 0, "whole number from 1 to 1000"),
    ("DESC", "two", "whole number from 1 to 1000"), ("DESC", 1.5, "whole number from 1 to 1000"),
])
def test_bad_orders_are_refused_with_what_is_allowed(direction: str, limit: object, message: str) -> None:
    with pytest.raises(BadValueError, match=message):
        SEASONS.query().add_order("Episodes", direction, limit)  # type: ignore[arg-type]
    with pytest.raises(UnknownColumnError):
        SEASONS.query().add_order("Episods and more", "DESC")


def test_add_order_is_an_action() -> None:
    env = TableEnvironment(SEASONS, analyzer=Eraser())
    record = env.step("add_order(Episodes, DESC)")
    assert record.ok and record.observation.startswith("1 row matches the conditions")
    bad = env.step("add_order(Episodes, upward)")
    assert not bad.ok and "Allowed: DESC" in bad.observation
    env.step("set_answer(Season)")
    assert env.step("execute()").observation == "The answer is ['Season 2']"
    assert env.final_json()["sql"].endswith('ORDER BY "Episodes" DESC LIMIT 1')


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(-1000, 1000), st.none()), min_size=1, max_size=12), st.integers(1, 5), st.booleans())
def test_order_keeps_the_top_numbers(values: list[int | None], limit: int, descending: bool) -> None:
    """The kept values are the ``limit`` largest (smallest) numbers; empty cells are never kept (no exclusion)."""
    rows = [[f"r{i}", None if v is None else str(v)] for i, v in enumerate(values)]
    t = Table.from_rows(["Name", "N"], rows)
    numbers = sorted((v for v in values if v is not None), reverse=descending)
    q = t.query().add_order("N", "DESC" if descending else "ASC", limit).set_answer("N")
    got = sorted(float(x) for x in _answers(q))
    assert got == sorted(float(x) for x in numbers[:limit])


# ---------------------------------------------------------------------------
# what the choose list grounds

ROSTER = Table.from_rows(
    ["Player", "No.", "Position", "Years in Toronto", "School/Club Team"],
    [["Antonio Lang", "21", "Guard-Forward", "1999–2000", "Duke"], ["Brad Lohaus", "33", "Forward-Center", "1996", "Iowa"],
     ["John Long", "25", "Guard", "1996–97", "Detroit"], ["Martin Lewis", "32", "Guard-Forward", "1996–97", "Butler CC (KS)"]],
)


def _first_answer(env: TableEnvironment, limit: int = 8) -> tuple[list[str], list[str]]:
    """Take the first listed step until execute(): the actions and the answers (what a model answering 1 does)."""
    taken = []
    for _ in range(limit):
        steps = table_next_steps(env)
        taken.append(steps[0].action)
        env.step(steps[0].action)
        if env.done:
            break
    assert env.done, taken
    return taken, [a["value"] for a in env.final_json()["answers"]]


def test_a_header_named_by_its_long_form_is_reachable() -> None:
    assert header_mentions(ROSTER, "What school did player number 21 play for?")[1][2] >= 3  # "number" names "No."
    taken, answers = _first_answer(TableEnvironment(ROSTER, question="What school did player number 21 play for?", analyzer=Eraser()))
    assert taken[0] == "add_condition(No., =, 21)" and answers == ["Duke"]
    assert column_words("No.") == "number" and column_words("Pts") == "points"


def test_a_season_written_with_another_dash_is_the_cell_not_its_year() -> None:
    conditions = [(ROSTER.columns[c.column].header, c.value) for c in condition_candidates(ROSTER, "What player played guard for toronto in 1996-97?")]
    assert ("Years in Toronto", "1996–97") in conditions and ("Years in Toronto", "1996") not in conditions
    _, answers = _first_answer(TableEnvironment(ROSTER, question="What player played guard for toronto in 1996-97?", analyzer=Eraser()))
    assert answers == ["John Long"]


def test_between_gives_both_bounds() -> None:
    t = Table.from_rows(["Club", "Attendance"], [["A", "9,000"], ["B", "15,000"], ["C", "25,000"]])
    found = [(c.op, c.value) for c in condition_candidates(t, "which club had an attendance between 10,000 and 20,000?") if c.column == 1]
    assert (">=", "10000") in found and ("<=", "20000") in found
    _, answers = _first_answer(TableEnvironment(t, question="which club had an attendance between 10,000 and 20,000?", analyzer=Eraser()))
    assert answers == ["B"]


def test_argmax_answers_with_the_other_column() -> None:
    q = "which season had the most episodes in it?"
    assert argmax_order(SEASONS, q, ground(q), header_mentions(SEASONS, q)) == (1, True, 0)
    taken, answers = _first_answer(TableEnvironment(SEASONS, question=q, analyzer=Eraser()))
    assert taken[0] == "add_order(Episodes, DESC)" and answers == ["Season 2"]
    q = "what was the most episodes of a season?"  # the most itself: MAX, no order
    numeric = Table.from_rows(["Season", "Episodes"], [["Season 1", "26"], ["Season 2", "52"]])
    assert argmax_order(numeric, q, ground(q), header_mentions(numeric, q)) is None
    assert answer_candidates(numeric, q)[0][:2] == (1, "MAX")


def test_a_count_column_gives_its_own_number() -> None:
    t = Table.from_rows(["Name", "Helipads", "Game"], [["Hama Military Airport", "10", "3"], ["Abu al-Duhur", "0", "4"]])
    q = "the total number of helipads at hama military airport?"
    assert own_number(t, q, 1, ground(q), header_mentions(t, q))
    assert answer_candidates(t, q)[0][:2] == (1, None)
    _, answers = _first_answer(TableEnvironment(t, question=q, analyzer=Eraser()))
    assert answers == ["10"]
    q = "What is the total game number with hama military airport as the name?"  # a singular header: rows are counted
    assert answer_candidates(t, q)[0][:2] == (2, "COUNT")


MEDALS = Table.from_rows(["Nation", "Silver", "Bronze"], [["Iran", "0", "4"], ["Iraq", "2", "32"]])


def test_conditions_that_keep_no_row_answer_none() -> None:
    env = TableEnvironment(MEDALS, question="What's the biggest Bronze that has less than 0 Silvers?", analyzer=Eraser())
    taken, answers = _first_answer(env)
    assert taken[0] == "add_condition(Silver, <, 0)" and answers == []
    assert taken.count("add_condition(Silver, <, 0)") == 2  # refused once, then taken at its word
    assert taken[-1] == "execute()" and len(taken) <= 6


def test_a_conflict_between_conditions_answers_none_not_the_rows_left() -> None:
    env = TableEnvironment(MEDALS, question="What is the Bronze when Nation is Iraq and Silver is 0?", analyzer=Eraser())
    taken, answers = _first_answer(env)
    assert answers == [] and {"add_condition(Nation, =, Iraq)", "add_condition(Silver, =, 0)"} <= set(taken)


def test_a_weak_condition_that_keeps_no_row_is_not_listed() -> None:
    # "Iraq" is not named next to a header and is short: a conflict with it is not taken as the question's
    env = TableEnvironment(MEDALS, question="bronze of iraq when silver 0?")
    env.step("add_condition(Silver, =, 0)")
    assert not any(s.action == "add_condition(Nation, =, Iraq)" for s in table_next_steps(env))


def test_an_empty_step_once_refused_is_kept_when_insisted_on() -> None:
    env = TableEnvironment(MEDALS, analyzer=Eraser())
    first = env.step("add_condition(Silver, <, 0)")
    assert (first.ok, first.error) == (False, "sql_empty_result")
    assert env.step("add_condition(Silver, <, 0)").ok
    assert env.step("set_answer(Bronze, MAX)").ok and env.step("execute()").ok
    assert env.final_json()["answers"] == []
    other = TableEnvironment(MEDALS, analyzer=Eraser())
    other.step("add_condition(Silver, <, 0)")
    assert not other.step("add_condition(Silver, <, -1)").ok  # another step is checked again


def test_model_scores_make_an_unnamed_numeric_column_reachable() -> None:
    t = Table.from_rows(["Player", "Jersey"], [["Art Long", "42"], ["Kyle Lowry", "3"]])
    q = "Who is the player that wears 42?"
    assert not [c for c in condition_candidates(t, q) if c.column == 1 and c.score >= 2.0]
    scored = [c for c in condition_candidates(t, q, scores={"Jersey": 3.0, "Player": 0.1}) if c.column == 1]
    assert scored and scored[0].value == "42" and scored[0].score >= 2.0
    env = TableEnvironment(t, question=q)
    assert table_next_steps(env, scores={"Jersey": 3.0, "Player": 0.1})[0].action == "add_condition(Jersey, =, 42)"


def test_readi_draws_from_the_checked_list() -> None:
    q = "What is the Bronze when Nation is Iraq and Silver is 0?"
    listed = [(MEDALS.columns[c.column].header, c.value) for c in grounded_conditions(TableEnvironment(MEDALS, question=q))]
    assert set(listed) == {("Nation", "Iraq"), ("Silver", "0")}  # the second keeps no row with the first: listed after it
    assert question_constraints(MEDALS, q) == ", ".join(f'"{h}": ["{v}"]' for h, v in listed)
    assert ranked_headers(MEDALS, q)[0] == "Bronze"
    assert question_constraints(MEDALS, "bronze of iraq?") == ""  # a short cell named by no header is not a constraint
