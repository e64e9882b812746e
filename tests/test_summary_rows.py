"""A table's summary row (pyql_sql/summary_rows.py): found at the bottom, left out of counts and orders by the
choose list, read when the question names it."""

from __future__ import annotations

import pytest

from pyql_sql.environment import TableEnvironment
from pyql_sql.next_steps import table_next_steps
from pyql_sql.summary_rows import summary_row
from pyql_sql.table import Table
from tests.test_table_choose import follow_first_steps

MEDALS = Table.from_rows(
    ["Rank", "Nation", "Gold", "Silver"],
    [["1", "Peru", "5", "1"], ["2", "Chile", "3", "4"], ["3", "Bolivia", "3", "0"], ["4", None, "1", "2"], ["Total", "Total", "12", "7"]],
)


@pytest.mark.parametrize(
    ("rows", "found"),
    [
        ([["Peru", "3"], ["Chile", "1"], ["Total", "4"]], ("Nation", "Total")),
        ([["Peru", "3"], ["Chile", "1"], ["  Grand total: ", "4"]], ("Nation", "Grand total:")),
        ([["Peru", "3"], ["Chile", "1"], ["Totals", "4"]], ("Nation", "Totals")),
        ([["Peru", "3"], ["Total", "1"], ["Chile", "4"]], None),  # not the last row
        ([["Total", "3"], ["Snatch", "1"], ["Total", "4"]], None),  # a label of several rows: an event, no summary
        ([["Peru", "3"], ["Chile", "1"], ["Totality", "4"]], None),  # the whole cell must say it
        ([["Peru", "3"], ["Total", "4"]], None),  # two rows: nothing to sum
    ],
)
def test_the_summary_row_is_the_last_row_named_total(rows: list[list[str]], found: tuple[str, str] | None) -> None:
    got = summary_row(Table.from_rows(["Nation", "Gold"], rows))
    assert (None if got is None else (got[0].header, got[1])) == found


def test_a_summary_label_in_a_rank_column_is_found_there() -> None:
    got = summary_row(MEDALS)
    assert got is not None and (got[0].header, got[1]) == ("Rank", "Total")


def _answers(question: str, table: Table = MEDALS) -> list[str]:
    env = follow_first_steps(TableEnvironment(table, question=question))
    return [str(a["value"]) for a in env.final_result().answers]


@pytest.mark.parametrize(
    ("question", "answers"),
    [
        ("how many nations won more than 2 gold medals?", ["3"]),  # Peru, Chile, Bolivia: not the Total row
        ("which nation won the most silver medals?", ["Chile"]),
        ("how many nations are listed?", ["3"]),  # the row without a nation counts as none, the Total row neither
    ],
)
def test_counts_and_orders_leave_the_summary_row_out(question: str, answers: list[str]) -> None:
    assert _answers(question) == answers


def test_the_step_leaving_it_out_comes_first_and_once() -> None:
    env = TableEnvironment(MEDALS, question="which nation won the most silver medals?")
    assert table_next_steps(env)[0].action == "add_condition(Rank, !=, Total)"
    env.step("add_condition(Rank, !=, Total)")
    assert all("!=, Total" not in s.action for s in table_next_steps(env))


def test_a_question_naming_the_summary_row_reads_it() -> None:
    env = TableEnvironment(MEDALS, question="how many gold medals did the total row have?")
    assert all("!=, Total" not in s.action for s in table_next_steps(env))


def test_a_lookup_of_one_row_is_left_alone() -> None:
    env = TableEnvironment(MEDALS, question="what rank did chile have?")
    assert all("!=, Total" not in s.action for s in table_next_steps(env))


def test_leaving_the_summary_row_out_does_not_turn_the_answer_away_from_its_column() -> None:
    """The condition on the label column says nothing of the question: the row's name is still the answer."""
    seats = Table.from_rows(["Governorate", "Percentage", "Seats Won"],
                            [["Babil", "8.2%", "5"], ["Baghdad", "5.4%", "3"], ["Basra", "11.6%", "7"], ["Total:", "", "15"]])
    assert _answers("which group has the most seats won?", seats) == ["Basra"]


def test_a_condition_of_the_question_on_the_label_column_is_still_offered_after_it() -> None:
    """``Description != Total`` then ``Description = Murdered``: the question's own condition on that column."""
    losses = Table.from_rows(["Description", "1940/41"], [["Direct losses", "360,000"], ["Murdered", "100,000"],
                                                           ["Deaths in camps", "210,000"], ["Total", "670,000"]])
    assert _answers("how many people were murdered in 1940/41?", losses) == ["100,000"]

