"""pyql.environment.value_steps and the choose mode's use of the question's values (issue 22, item 2).

The enumerator offers filters with the grounded values in the variable's own
datatype and precision, on any hop's numeric or date variable; the ranking
puts the value step where the cue asks for it; the text and grammar prompts
list the values. End to end, the stub that always answers 1 answers the
demo's value-carrying questions (in-sample: the ranking was written while
looking at them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.evaluation.environments import feedback_options
from agent.evaluation.metrics import exact_match
from agent.llm.scripted import FirstChoiceLLM
from agent.llm.gbnf import StateVocabulary, check_lines, state_gbnf
from agent.methods.choose import rank_choices
from agent.methods.query_agent import AgentConfig, QueryAgent
from pyql.environment.grounding import ground
from pyql.kb import KB
from pyql.environment.next_steps import NextStep, next_steps
from pyql.environment.sparql_actions import SparqlActions
from pyql.environment.sparql import SparqlEnvironment
from pyql.builder.terms import XSD, Literal
from pyql.environment.value_steps import prompt_values, question_value_fit, value_filters, value_hints

DEMO = Path(__file__).resolve().parent.parent / "pyql" / "data" / "demo_questions.jsonl"
ITEMS = {item["id"]: item for item in map(json.loads, DEMO.read_text(encoding="utf-8").splitlines()) if item}
#: The demo questions whose answer needs a value of the question, a later-hop superlative or a join (issue 22).
VALUE_QUESTIONS = ("q02", "q07", "q10", "q14", "q15", "q34")

DAY = (Literal("1998-03-05", XSD + "date"), Literal("2001-07-01", XSD + "date"))
YEAR = (Literal("1998", XSD + "gYear"), Literal("2006", XSD + "gYear"))
STAMP = (Literal("1998-03-05T10:00:00", XSD + "dateTime"),)
COUNT = (Literal("280", XSD + "integer"), Literal("85", XSD + "integer"))


def filters(question: str, seen: dict[str, Any], built: set[str] | None = None) -> list[str]:
    return value_filters(ground(question), seen, built or set())


@pytest.fixture(scope="module")
def kb() -> KB:
    return KB.open("oxigraph:demo")


# -- the enumerator: types, precision, direction ------------------------------------------------


def test_a_month_is_a_range_on_a_date_not_an_equality_with_its_year() -> None:
    first = filters("which cyclones formed in March 1998?", {"?formed": DAY})
    assert first == ['add_filter(?formed, >=, "1998-03-01"^^xsd:date)']
    # the query lists a typed literal bare: the range's second end follows its first either way
    for built in ('add_filter(?formed, >=, 1998-03-01)', 'add_filter(?formed, >=, "1998-03-01"^^xsd:date)'):
        assert filters("which cyclones formed in March 1998?", {"?formed": DAY}, {built}) == [
            'add_filter(?formed, <, "1998-04-01"^^xsd:date)'
        ]
    both = {'add_filter(?formed, >=, 1998-03-01)', 'add_filter(?formed, <, 1998-04-01)'}
    assert filters("which cyclones formed in March 1998?", {"?formed": DAY}, both) == []
    # the same month on a dateTime variable and a gYear variable
    assert filters("formed in March 1998", {"?t": STAMP}) == ['add_filter(?t, >=, "1998-03-01T00:00:00"^^xsd:dateTime)']
    assert filters("formed in March 1998", {"?y": YEAR}) == ['add_filter(?y, =, "1998"^^xsd:gYear)']


def test_a_decade_is_a_range_and_a_year_or_a_day_an_equality() -> None:
    assert filters("storms of the 1990s", {"?d": DAY}) == ['add_filter(?d, >=, "1990-01-01"^^xsd:date)']
    assert filters("storms of the 1990s", {"?y": YEAR}) == ['add_filter(?y, >=, "1990"^^xsd:gYear)']
    assert filters("storms of the 1990s", {"?y": YEAR}, {"add_filter(?y, >=, 1990)"}) == ['add_filter(?y, <, "2000"^^xsd:gYear)']
    assert filters("population in 2011", {"?y": YEAR}) == ['add_filter(?y, =, "2011"^^xsd:gYear)']
    # a year is one equality with an xsd:gYear: the compiler matches a full date at the year's precision
    assert filters("storms in 2014", {"?d": DAY}) == ['add_filter(?d, =, "2014"^^xsd:gYear)']
    assert filters("formed on August 23, 2005", {"?d": DAY}) == ['add_filter(?d, =, "2005-08-23"^^xsd:date)']


@pytest.mark.parametrize(
    ("question", "seen", "expected"),
    [
        ("cyclones with more than 200 deaths", {"?n": COUNT}, ["add_filter(?n, >, 200)"]),
        ("cyclones with at least 1,174 deaths", {"?n": COUNT}, ["add_filter(?n, >=, 1174)"]),
        ("cyclones with under 9.5 deaths", {"?n": COUNT}, ["add_filter(?n, <, 9.5)"]),
        ("cyclones with no more than two deaths", {"?n": COUNT}, ["add_filter(?n, <=, 2)"]),
        ("cyclones with 200 deaths", {"?n": COUNT}, ["add_filter(?n, >, 200)", "add_filter(?n, <, 200)", "add_filter(?n, =, 200)"]),
        ("between 10 and 20 deaths", {"?n": COUNT}, ["add_filter(?n, >=, 10)", "add_filter(?n, <=, 20)"]),
        ("formed after 1998", {"?d": DAY}, ['add_filter(?d, >=, "1999-01-01"^^xsd:date)']),
        ("formed after March 1998", {"?d": DAY}, ['add_filter(?d, >=, "1998-04-01"^^xsd:date)']),
        ("formed before March 1998", {"?d": DAY}, ['add_filter(?d, <, "1998-03-01"^^xsd:date)']),
        ("formed since 1998", {"?d": DAY}, ['add_filter(?d, >=, "1998-01-01"^^xsd:date)']),
        ("formed until 1998", {"?d": DAY}, ['add_filter(?d, <, "1999-01-01"^^xsd:date)']),
        ("formed after 1998", {"?y": YEAR}, ['add_filter(?y, >=, "1999"^^xsd:gYear)']),
        ("between 2000 and 2010", {"?d": DAY}, ['add_filter(?d, >=, "2000-01-01"^^xsd:date)', 'add_filter(?d, <, "2011-01-01"^^xsd:date)']),
    ],
)
def test_the_cue_gives_the_direction(question: str, seen: dict[str, Any], expected: list[str]) -> None:
    assert filters(question, seen) == expected


def test_a_bare_year_is_no_threshold_and_text_variables_get_nothing() -> None:
    assert filters("which cyclones of 2005 had the highest winds?", {"?w": COUNT}) == []
    assert filters("more than 200 deaths", {"?name": (Literal("Katrina"),)}) == []
    assert filters("more than 200 deaths", {"?w": ()}) == []


@settings(max_examples=60, deadline=None)
@given(year=st.integers(1000, 2199), month=st.integers(1, 12))
def test_every_month_range_holds_exactly_its_days(year: int, month: int) -> None:
    """Deliberately excluded: nothing (every month of every year grounding reads as a date is generated)."""
    import calendar
    import datetime as dt

    name = calendar.month_name[month]
    first, = filters(f"formed in {name} {year}", {"?d": DAY})
    second, = filters(f"formed in {name} {year}", {"?d": DAY}, {first})
    low = dt.date.fromisoformat(first.split('"')[1])
    high = dt.date.fromisoformat(second.split('"')[1])
    assert (low.year, low.month, low.day) == (year, month, 1)
    assert (high - dt.timedelta(days=1)).month == month and high.day == 1
    assert first.startswith("add_filter(?d, >=,") and second.startswith("add_filter(?d, <,")


def test_question_value_fit_reads_direction_and_value() -> None:
    g = ground("cyclones that formed after 1998 with more than 200 deaths")
    assert question_value_fit(g, ">=", '"1999-01-01"^^xsd:date') == 2
    assert question_value_fit(g, ">", "200") == 2 and question_value_fit(g, "=", "200") == 1
    assert question_value_fit(g, ">", "7") == 0 and question_value_fit(g, ">", "?x") == 0


# -- on the demo KB: any hop, no argmax over one value, count with a filter -----------------------


def _env(kb: KB, question: str, entities: dict[str, str] | None = None) -> SparqlEnvironment:
    return SparqlEnvironment(kb, question, entities or {}, **feedback_options("eraser", agent=True))


def test_a_superlative_is_offered_on_a_later_hop_and_not_on_one_value(kb: KB) -> None:
    env = _env(kb, ITEMS["q02"]["question"], ITEMS["q02"]["entities"])
    for line in ("get_relation(m.0crbvqz)", "add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?own)",
                 "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
                 "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
                 "add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?formed)"):
        assert env.step(line).ok, line
    actions = [s.action for s in next_steps(env, limit=60)]
    assert "add_max(?formed)" in actions and "add_min(?formed)" in actions  # the third hop's dates
    assert "add_max(?own)" not in actions  # Rachel's one formation date: an argmax would change nothing


def test_a_later_hop_date_gets_the_question_month_as_a_range(kb: KB) -> None:
    env = _env(kb, "which cyclones in the same category as tropical storm rachel formed in August 2002?",
               {"Tropical Storm Rachel": "m.0crbvqz"})
    for line in ("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
                 "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
                 "add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?formed)"):
        assert env.step(line).ok
    steps = next_steps(env, limit=60)
    assert 'add_filter(?formed, >=, "2002-08-01"^^xsd:date)' in [s.action for s in steps]
    assert not any(s.action.startswith("add_filter(?formed, =, ") and "2002" in s.action for s in steps)
    assert env.step('add_filter(?formed, >=, "2002-08-01"^^xsd:date)').ok
    closing = 'add_filter(?formed, <, "2002-09-01"^^xsd:date)'
    ranked = rank_choices(env.question, next_steps(env, limit=60), env.query.actions(),
                          entities=["m.0crbvqz"], kinds={"?formed": "date", "?cyclone": "entity", "?category": "entity"},
                          mentions=["Tropical Storm Rachel"])
    assert ranked[0].action == closing  # the range's second end right after its first
    assert env.step(closing).ok
    days = {v.short for v in env.kb.execute(env.query.set_answer("?formed")).answers()}
    assert days and all(d.startswith("2002-08") for d in days), days


def test_a_count_is_combined_with_a_filter(kb: KB) -> None:
    """How many cyclones had winds above 200 km/h: the filter, then the count (the stub answers it)."""
    question = "how many cyclones had highest winds above 200 km/h?"
    result = QueryAgent(FirstChoiceLLM(), AgentConfig(action_mode="choose", max_steps=7)).run(_env(kb, question), question)
    actions = [s.action for s in result.steps if s.action]
    assert any(a.startswith("add_filter(?highest_winds, >, 200") for a in actions), actions
    count = next(a for a in actions if a.startswith("add_count("))
    assert actions.index(count) > actions.index(next(a for a in actions if a.startswith("add_filter(")))
    assert [a["value"] for a in result.answers] == [str(len(ITEMS["q09"]["answers"]))]  # q09 lists those cyclones


def test_the_ranking_puts_the_cued_direction_first() -> None:
    steps = [NextStep(f"add_filter(?deaths, {op}, 200)", "constrain") for op in ("=", "<", ">")]
    built = ["add_fact(?c, meteorology.tropical_cyclone.direct_fatalities, ?deaths)"]
    assert rank_choices("which cyclones killed more than 200 people?", steps, built, kinds={"?deaths": "number"})[0].action == (
        "add_filter(?deaths, >, 200)"
    )
    assert rank_choices("which cyclones killed fewer than 200 people?", steps, built, kinds={"?deaths": "number"})[0].action == (
        "add_filter(?deaths, <, 200)"
    )


# -- prompts and the per-step grammar ------------------------------------------------------------


def test_text_and_grammar_prompts_list_the_values(kb: KB) -> None:
    env = _env(kb, "which cyclones of the 2005 Atlantic hurricane season formed after March 2005?",
               {"2005 Atlantic hurricane season": "m.03d1xj"})
    head = QueryAgent(FirstChoiceLLM(), AgentConfig(action_mode="grammar")).head(env, env.question)
    assert head.rstrip().endswith(
        'Values of the question (for add_filter and add_time_constrain): "March 2005" after "after": a month, >= 2005-04-01'
    )
    plain = _env(kb, "what category is rachel?", {"Rachel": "m.0crbvqz"})
    assert "Values of the question" not in QueryAgent(FirstChoiceLLM(), AgentConfig()).head(plain, plain.question)
    assert prompt_values("what category is rachel?") == ""


def test_the_per_step_grammar_accepts_the_grounded_values() -> None:
    state = StateVocabulary(["m.04ly1"], ["?p", "?formed"], {"?p": (["government.government_position_held.from",
                                                                        "government.government_position_held.to"], [])})
    grammar = state_gbnf(SparqlActions(), state, resume="action")
    for question in ("governors in 2005", "cyclones formed in March 1998 with more than 200 deaths", "after the 1990s"):
        for _, literals in value_hints(ground(question)):
            lines = [f"add_filter(?formed, >=, {lit})" for lit in literals]
            lines += [f"add_time_constrain(?p, government.government_position_held.from, "
                      f"government.government_position_held.to, {lit}, {lit})" for lit in literals if "xsd:date" in lit]
            assert check_lines(grammar, lines) == [], (question, lines)


# -- end to end: the stub that always answers 1 on the demo's value-carrying questions --------------


@pytest.mark.parametrize("qid", VALUE_QUESTIONS)
def test_the_stub_answers_the_value_questions_of_the_demo(kb: KB, qid: str) -> None:
    """In-sample: the ranking was written while looking at these questions."""
    item = ITEMS[qid]
    result = QueryAgent(FirstChoiceLLM(), AgentConfig(action_mode="choose", max_steps=7)).run(
        _env(kb, item["question"], item["entities"]), item["question"]
    )
    assert result.done and not result.forced, [s.action for s in result.steps]
    assert exact_match(result.answers, item["answers"]) == 1.0, [s.action for s in result.steps]
