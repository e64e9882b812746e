"""Value grounding (pyql/environment/grounding.py): spans that index the question, numbers with their value, dates at their precision, cues.

Checked on generated questions (hypothesis) and on real ones: the demo
questions, the WebQSP test questions and the dbbench dev questions.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pyql.environment.grounding import GroundingError, ground, number_words, parse_date
from tests.shared_data import needs_shared, shared_path

REPO = Path(__file__).resolve().parents[1]
FILLER = ["goals", "team", "the", "played", "season", "with", "club", "scored", "in", "a", "points", "what", "which"]
UNITS_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
               "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS_WORDS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _spans_exact(question: str) -> None:
    g = ground(question)
    for v in g.values:
        assert question[v.start : v.end] == v.text, (question, v)
        assert v.text.strip() == v.text and v.text
    for c in g.cues:
        assert question[c.start : c.end] == c.text, (question, c)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_spans_index_any_text_exactly(text: str) -> None:
    _spans_exact(text)


def _grouped(n: int) -> str:
    return f"{n:,}"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(FILLER), max_size=5),
    st.one_of(
        st.integers(min_value=0, max_value=10**9).map(lambda n: (str(n), float(n))),
        st.integers(min_value=1000, max_value=10**9).map(lambda n: (_grouped(n), float(n))),
        st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False).map(lambda d: (str(d), float(d))),
        st.tuples(st.sampled_from(TENS_WORDS), st.integers(1, 9)).map(
            lambda t: (f"{t[0]}-{UNITS_WORDS[t[1]]}", float(TENS_WORDS.index(t[0]) * 10 + 20 + t[1]))
        ),
        st.integers(0, 19).map(lambda n: (UNITS_WORDS[n], float(n))),
    ),
    st.lists(st.sampled_from(FILLER), max_size=5),
)
def test_generated_numbers_are_found_with_their_value(before: list[str], number: tuple[str, float], after: list[str]) -> None:
    written, value = number
    # "one of/which/that/who ..." is a pronoun, not a count: grounding skips it by design
    # (tested in test_one_as_a_pronoun_is_not_a_number below).
    assume(not (written == "one" and after and after[0] in ("of", "another", "that", "who", "which")))
    question = " ".join([*before, written, *after]) + "?"
    start = len(" ".join(before)) + (1 if before else 0)
    found = [v for v in ground(question).numbers() if v.start == start]
    assert found, (question, ground(question).values)
    assert found[0].value == pytest.approx(value)
    assert question[found[0].start : found[0].end].startswith(written)


@settings(max_examples=100, deadline=None)
@given(st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(2199, 12, 31)), st.sampled_from(["%B %d, %Y", "%d %B %Y", "%Y-%m-%d"]))
def test_generated_days_are_found_at_day_precision(day: dt.date, form: str) -> None:
    written = day.strftime(form)
    question = f"who won on {written} at home?"
    dates = ground(question).dates()
    assert [(d.text, d.value.first, d.value.precision) for d in dates] == [(written, day, "day")]


def test_dates_at_their_precision() -> None:
    month = parse_date("March 1998")
    assert (month.first, month.last, month.precision) == (dt.date(1998, 3, 1), dt.date(1998, 3, 31), "month")
    assert parse_date("February 2000").last == dt.date(2000, 2, 29)
    decade = ground("what happened in the 1990s?").dates()[0].value
    assert (decade.first, decade.last, decade.precision) == (dt.date(1990, 1, 1), dt.date(1999, 12, 31), "decade")
    assert ground("what happened in bosnia in the 90s").dates()[0].value.first == dt.date(1990, 1, 1)
    last = ground("who won last year?", today=dt.date(2026, 11, 26)).dates()[0].value
    assert (last.first, last.last) == (dt.date(2025, 1, 1), dt.date(2025, 12, 31))
    assert parse_date("February 30, 2000") is None and parse_date("Rio") is None
    assert month.contains(parse_date("March 19, 1998")) and not month.contains(parse_date("1998"))


def test_last_of_last_year_is_not_an_order() -> None:
    g = ground("who scored the most goals last year?", today=dt.date(2020, 1, 1))
    assert [(c.kind, c.op) for c in g.cues] == [("order", "max")]


def test_numbers_words_percent_and_units() -> None:
    g = ground("a club with 1,174 fans, twenty-one wins, 45% of votes, 5 percent, 12 km and £8.5m")
    assert [(v.kind, v.value, v.unit) for v in g.numbers()] == [
        ("number", 1174.0, ""), ("number", 21.0, ""), ("quantity", 45.0, "%"), ("quantity", 5.0, "%"),
        ("quantity", 12.0, "km"), ("quantity", 8.5, "£m"),
    ]
    assert number_words("three hundred and five") == 305.0 and number_words("many") is None
    # scores, records and codes are not numbers
    assert ground("a Result of 2–1 and a Record of 15-28 in 04x25").numbers() == []


def test_quoted_and_capitalised_spans() -> None:
    g = ground("Which club is 'FK Trakai' and where was the Presentation of Credentials of Takashi Kogure?")
    assert [(v.kind, v.value) for v in g.texts()] == [
        ("quoted", "FK Trakai"), ("span", "Presentation of Credentials of Takashi Kogure"),
    ]
    assert [v.value for v in ground("What's the \u201cBig Apple\u201d?").texts()] == ["Big Apple"]
    assert ground("What is it?").texts() == []  # a question's opening word is no name


@pytest.mark.parametrize(
    "question, expected",
    [
        ("more than 3", [">"]), ("fewer than 3", ["<"]), ("at least 3", [">="]), ("at most 3", ["<="]),
        ("after 1990", [">"]), ("before 1990", ["<"]), ("since 1990", [">="]), ("until 1990", ["<="]),
        ("over 3", [">"]), ("under 3", ["<"]), ("longer than 3", [">"]), ("shorter than 3", ["<"]),
        ("between 1990 and 2000", ["between"]),
    ],
)
def test_comparison_cues(question: str, expected: list[str]) -> None:
    g = ground(question)
    assert [c.op for c in g.cue("comparison")] == expected
    assert [c.op for c, _ in g.comparisons()] == expected  # each one with the value after it


@pytest.mark.parametrize(
    "question, expected",
    [
        ("the earliest date", [("order", "min")]), ("the latest date", [("order", "max")]),
        ("the first winner", [("order", "min")]), ("the last winner", [("order", "max")]),
        ("the most goals", [("order", "max")]), ("the least goals", [("order", "min")]),
        ("how many goals", [("aggregate", "COUNT")]), ("the total goals", [("aggregate", "SUM")]),
        ("the average goals", [("aggregate", "AVG")]), ("at most 3", [("comparison", "<=")]),
    ],
)
def test_order_and_aggregate_cues(question: str, expected: list[tuple[str, str]]) -> None:
    assert [(c.kind, c.op) for c in ground(question).cues] == expected


def test_a_question_that_is_not_text_is_a_clear_error() -> None:
    with pytest.raises(GroundingError, match="must be a string, not int"):
        ground(17)  # type: ignore[arg-type]


def _questions(path: Path, key: str = "question") -> list[str]:
    return [json.loads(line)[key] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_demo_questions() -> None:
    questions = _questions(REPO / "pyql" / "data" / "demo_questions.jsonl")
    for q in questions:
        _spans_exact(q)
    by_text = {q: ground(q) for q in questions}
    assert any(g.cue("order") for g in by_text.values()) and any(g.cue("aggregate") for g in by_text.values())


@needs_shared("webqsp")
def test_webqsp_questions() -> None:
    items = json.loads(shared_path("webqsp").read_text(encoding="utf-8"))
    for item in items:
        _spans_exact(item["question"])
    years = {item["question"]: ground(item["question"]).dates() for item in items if "2011" in item["question"]}
    assert years and all(any(d.value.first == dt.date(2011, 1, 1) for d in found) for found in years.values())
    assert ground("what happened in bosnia in the 90s").dates()[0].value.precision == "decade"


@needs_shared("dbbench")
def test_dbbench_dev_questions() -> None:
    questions = _questions(shared_path("dbbench"), key="description")
    for q in questions:
        _spans_exact(q)
    g = ground("What is the Presentation of Credentials has a Termination of Mission listed as August 15, 2000?")
    assert [(d.text, d.value.precision) for d in g.dates()] == [("August 15, 2000", "day")]
    g = ground("Class of d, and a Frequency MHz smaller than 107.7, and a ERP W smaller than 232 has what call sign?")
    assert [(c.op, v.value) for c, v in g.comparisons()] == [("<", 107.7), ("<", 232.0)]
    assert "Frequency MHz" in [v.text for v in g.texts()]


@pytest.mark.parametrize(
    ("question", "counted"),
    [
        ("which one of the teams scored most?", False),
        ("one which scored?", False),
        ("one goal was scored in which season?", True),
        ("how many teams scored one goal?", True),
    ],
)
def test_one_as_a_pronoun_is_not_a_number(question: str, counted: bool) -> None:
    found = [v for v in ground(question).numbers() if v.text.lower() == "one"]
    assert bool(found) is counted, (question, ground(question).values)
