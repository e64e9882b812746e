"""Readi on the demo KB with a scripted LLM: paths, instantiation, editing, merge, QA."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.errors import LLMError
from agent.llm.scripted import ScriptedLLM
from agent.methods.instantiate import Instantiator
from agent.methods.readi import Readi, ReadiConfig, parse_answers
from agent.methods.reasoning_path import (
    PathSpec,
    PathSyntaxError,
    from_chain,
    parse_paths,
    render_paths,
    to_chain,
)
from pyql.errors import QueryError
from pyql.kb import KB


@pytest.fixture(scope="module")
def kb() -> KB:
    return KB.open("oxigraph:demo")


# -- paths ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text,expected",
    [
        ("Path: Jamaica -> location.country.languages_spoken", [("Jamaica", ("location.country.languages_spoken",))]),
        (
            'Thought: two.\nPath: {"France": [France -> border], "Nijmegen": [Nijmegen -> serve_airport -> contain]}',
            [("France", ("border",)), ("Nijmegen", ("serve_airport", "contain"))],
        ),
        ("Final Path: Miley Cyrus → film.actor.film → film.performance.film", [("Miley Cyrus", ("film.actor.film", "film.performance.film"))]),
        ('Path:\n"Washington, D.C." --> a.b.c => ^d.e.f\nThat is my path.', [("Washington, D.C.", ("a.b.c", "^d.e.f"))]),
        ("Path: {Taste: [Taste -> people.person.quotations]}", [("Taste", ("people.person.quotations",))]),
    ],
)
def test_parse_paths(text: str, expected: list) -> None:
    assert [(p.start, p.relations) for p in parse_paths(text)] == expected


@pytest.mark.parametrize("text", ["Path: nothing", "", "Path: [France ->]"])
def test_bad_paths_raise_path_syntax_error(text: str) -> None:
    with pytest.raises(PathSyntaxError):
        parse_paths(text)


RELATION = st.from_regex(r"[a-z][a-z_]{0,8}(\.[a-z][a-z_]{0,8}){2}", fullmatch=True)
MID = st.from_regex(r"m\.0[a-z0-9_]{2,7}", fullmatch=True)
PATHS = st.lists(
    st.builds(PathSpec, MID, st.lists(st.tuples(st.booleans(), RELATION), min_size=1, max_size=4).map(
        lambda hops: tuple(("^" if back else "") + rel for back, rel in hops)
    )),
    min_size=1,
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(PATHS)
def test_path_chain_round_trip(paths: list[PathSpec]) -> None:
    chain = to_chain(paths, {})
    assert from_chain(chain) == tuple(paths)
    assert parse_paths("Path: " + render_paths(paths).replace("\n", "\n")) == tuple(paths)


def test_chain_of_unbound_relation_is_refused() -> None:
    with pytest.raises(QueryError, match="not a KB relation"):
        to_chain([PathSpec("Jamaica", ("languages spoken",))], {"Jamaica": "m.03_r3"})


def test_parse_answers() -> None:
    assert parse_answers("first {A}, then {B, C} and {A}") == ["A", "B, C"]


# -- Readi -----------------------------------------------------------------------------

def test_instantiates_at_once_with_one_call(kb: KB) -> None:
    llm = ScriptedLLM(["Path: {\"Tropical Storm Dolly\": [Tropical Storm Dolly -> affected areas -> capital]}"])
    result = Readi(llm, ReadiConfig(skip_qa=True)).run(kb, "what is the capital of the country affected by tropical storm dolly?", {"Tropical Storm Dolly": "m.0107j2dw"})
    assert result.llm_calls == 1 and result.extra["edits"] == 0
    assert result.answers == [{"value": "m.04sqj", "label": "Mexico City"}]
    assert result.extra["isr"] is True and result.extra["aip"] == 1.0 and result.extra["cer"] is False
    assert "SELECT DISTINCT" in result.query


def test_qa_call_answers_from_labelled_triplets(kb: KB) -> None:
    llm = ScriptedLLM([
        "Path: Tropical Storm Dolly -> meteorology.tropical_cyclone.affected_areas -> location.country.capital",
        "Based on (Mexico, location.country.capital, Mexico City), the answer is {Mexico City}.",
    ])
    result = Readi(llm).run(kb, "what is the capital of the country affected by tropical storm dolly?", {"Tropical Storm Dolly": "m.0107j2dw"})
    assert result.llm_calls == 2
    qa_prompt = llm.prompts[1]
    assert "(Tropical Storm Dolly, meteorology.tropical_cyclone.affected_areas, Mexico)" in qa_prompt
    assert "m.0107j2dw" not in qa_prompt.split("Q: what is the capital")[1], "labels, not ids"
    assert result.answers == [{"value": "m.04sqj", "label": "Mexico City"}]


def test_relation_not_instantiated_triggers_an_edit_with_candidates(kb: KB) -> None:
    llm = ScriptedLLM([
        "Path: Tropical Storm Dolly -> president",
        "Thought: use the affected areas.\nFinal Path: Tropical Storm Dolly -> meteorology.tropical_cyclone.affected_areas",
    ])
    result = Readi(llm, ReadiConfig(skip_qa=True)).run(kb, "which country did tropical storm dolly hit?", {"Tropical Storm Dolly": "m.0107j2dw"})
    edit = llm.prompts[1]
    assert 'relation "president" not instantiated.' in edit
    assert "meteorology.tropical_cyclone.affected_areas" in edit.split("Candidate Relations")[-1]
    assert result.rules == {"readi_relation_not_instantiated": 1}
    assert result.extra["edits"] == 1 and result.answers == [{"value": "m.0b90_r", "label": "Mexico"}]


def test_unnamed_end_triggers_an_edit_with_halfway_instances(kb: KB) -> None:
    llm = ScriptedLLM([
        "Path: Hurricane Sandy -> damages",
        "Final Path: Hurricane Sandy -> meteorology.tropical_cyclone.damages -> measurement_unit.dated_money_value.amount",
    ])
    result = Readi(llm, ReadiConfig(skip_qa=True)).run(kb, "how much damage did hurricane sandy cause?", {"Hurricane Sandy": "m.0n9cgl4"})
    edit = llm.prompts[1]
    assert "<compound node> in the end" in edit
    assert "(Hurricane Sandy, meteorology.tropical_cyclone.damages, <compound node>)" in edit
    assert "measurement_unit.dated_money_value.amount" in edit.split("Candidate Relations")[-1]
    assert result.answers == [{"value": "68700000000.0", "label": None}]
    assert result.rules == {"readi_unnamed_end": 1}


def test_empty_path_triggers_an_edit(kb: KB) -> None:
    llm = ScriptedLLM(["I am not sure.", "Final Path: Jamaica -> location.country.languages_spoken"])
    result = Readi(llm, ReadiConfig(skip_qa=True)).run(kb, "what languages are spoken in jamaica?", {"Jamaica": "m.03_r3"})
    assert "could not be read" in llm.prompts[1] or "empty reasoning path" in llm.prompts[1]
    assert result.rules.get("readi_empty_path") == 1 and len(result.answers) == 2


def test_bad_edits_are_rejected_and_the_budget_holds(kb: KB) -> None:
    stuck = "Path: Tropical Storm Dolly -> president"
    replies = [stuck, "Final Path: Tropical Storm Dolly -> president", "garbage",
               "Final Path: Tropical Storm Dolly -> a -> b -> c -> d -> e -> f -> g", stuck, "I cannot tell: {unknown}"]
    llm = ScriptedLLM(replies)
    result = Readi(llm, ReadiConfig(max_edits=4, skip_qa=True)).run(kb, "who is the president?", {"Tropical Storm Dolly": "m.0107j2dw"})
    # 1 generation + 4 edit calls (the budget) + the QA call on the partial instances
    assert result.extra["edits"] == 4 and result.llm_calls == 6 and llm.remaining == 0
    assert result.answers == [{"value": "unknown", "label": None}]
    errors = [t.error for t in result.steps]
    assert errors[1:4] == ["edit_unchanged", "edit_malformed", "edit_too_long"]
    assert "did not change the path" in llm.prompts[2]
    assert result.extra["isr"] is False


def test_two_paths_merge_by_intersection(kb: KB) -> None:
    llm = ScriptedLLM([
        'Path: {"Louisiana": [Louisiana -> meteorology.cyclone_affected_area.cyclones], '
        '"Tropical storm (SSHS)": [Tropical storm (SSHS) -> meteorology.tropical_cyclone_category.tropical_cyclones]}'
    ])
    result = Readi(llm, ReadiConfig(skip_qa=True)).run(
        kb, "which tropical storms affected louisiana?", {"Louisiana": "m.04ly1", "Tropical storm (SSHS)": "m.05f4r3k"}
    )
    assert sorted(a["value"] for a in result.answers) == ["m.01r2yb", "m.0gjcf_x"]


def test_llm_failure_ends_the_run(kb: KB) -> None:
    result = Readi(ScriptedLLM([LLMError("bad", status=400)])).run(kb, "q?", {"Jamaica": "m.03_r3"})
    assert result.error == "llm_error: bad" and result.answers == [] and not result.done  # the call's message, not a bare kind


def test_instantiation_counts_queries_and_respects_the_frontier_limit(kb: KB) -> None:
    inst = Instantiator(kb, frontier_limit=1)
    before = kb.stats.queries
    [r] = inst.instantiate([PathSpec("Louisiana", ("governing officials", "office holder"))], {"Louisiana": "m.04ly1"}, "who governed louisiana")
    assert r.complete
    assert kb.stats.queries - before <= 1 + 2 + 3  # vocabulary once, 2 relation look-ups, observe + rows + labels


def test_edit_demonstration_matches_the_demo_kb(kb: KB) -> None:
    """The edit template's demonstration states what instantiation really reports."""
    [r] = Instantiator(kb).instantiate([PathSpec("Tropical Storm Allison", ("meteorology.tropical_cyclone.damages",))], {"Tropical Storm Allison": "m.01r2yb"}, "how much damage did tropical storm allison cause?")
    assert r.error == "unnamed_end"
    assert [str(t) for t in r.instances] == ["(Tropical Storm Allison, meteorology.tropical_cyclone.damages, <compound node>)"]
    assert r.around == ["measurement_unit.dated_money_value.amount", "measurement_unit.dated_money_value.currency", "measurement_unit.dated_money_value.valid_date"]


def test_failed_readi_steps_say_what_was_wrong_in_the_transcript() -> None:
    """`pyql ask --method readi`: no `Observation N (error: ...):` line is left empty."""
    import io

    from agent.cli import ask_command
    from pyql.cli import build_parser

    replies = ["I am {not} sure -> ->", "Final Path: Tropical Storm Dolly -> president",
               "Final Path: Tropical Storm Dolly -> president", "garbage",
               "Final Path: Tropical Storm Dolly -> a -> b -> c -> d -> e -> f -> g", "So the answer is {unknown}."]
    args = build_parser().parse_args(["ask", "who is the president?", "--kb", "demo", "--method", "readi",
                                      "--entities", '{"Tropical Storm Dolly": "m.0107j2dw"}'])
    out = io.StringIO()
    ask_command(args, out, llm=ScriptedLLM(replies))
    lines = [line for line in out.getvalue().split("\n") if line.startswith("Observation")]
    failed = [line for line in lines if "(error:" in line]
    assert [line.split("(error: ", 1)[1].split(")", 1)[0] for line in failed] == [
        "path_malformed", "edit_unchanged", "edit_malformed", "edit_too_long"]
    for line in failed:
        assert line.split("): ", 1)[1].strip(), line
    assert "could not be read" in failed[0] and "did not change the path" in failed[1] and "too long" in failed[3]
    for line in lines:  # the other steps say what came of them too
        assert line.split("): ", 1)[1].strip(), line
    assert "Tropical Storm Dolly -> president: relation_not_instantiated" in lines[1]
    assert lines[-1].endswith("answers: unknown")


def test_edit_candidates_come_from_the_shared_candidate_function(kb: KB) -> None:
    """Issue 11: Readi's edit prompt lists the relations where the path broke, ranked and capped by
    pyql.environment.candidates.rank_relations (what ERASER's guidelines use)."""
    from agent.methods.ranking import BM25Ranker
    from pyql.environment.candidates import rank_relations

    question = "which country did tropical storm dolly hit?"
    llm = ScriptedLLM(["Path: Tropical Storm Dolly -> president", "Final Path: Tropical Storm Dolly -> president"])
    Readi(llm, ReadiConfig(skip_qa=True, max_edits=1, candidate_cap=3)).run(kb, question, {"Tropical Storm Dolly": "m.0107j2dw"})
    shown = llm.prompts[1].split("Candidate Relations")[-1].split("Corrected Path")[0].strip()
    around = kb.relations("m.0107j2dw").all()
    ranker = BM25Ranker()
    expected = rank_relations(question, around, lambda q, rs: ranker.rank(q or "", rs), limit=3)
    assert shown == repr(expected)
    assert len(expected) == 3 < len(around)  # capped
    assert expected == ranker.rank(question, list(around))[:3]  # best first by the run's ranker


def test_an_unknown_start_lists_the_topic_entities(kb: KB) -> None:
    llm = ScriptedLLM(["Path: Dolly -> meteorology.tropical_cyclone.affected_areas",
                       "Final Path: Tropical Storm Dolly -> meteorology.tropical_cyclone.affected_areas"])
    Readi(llm, ReadiConfig(skip_qa=True)).run(kb, "which country did tropical storm dolly hit?", {"Tropical Storm Dolly": "m.0107j2dw"})
    assert '"Dolly" is not a topic entity of the question; start from one of: "Tropical Storm Dolly".' in llm.prompts[1]


def test_edit_on_a_local_server_is_constrained_to_the_candidates(kb: KB) -> None:
    """Issue 11, item 6: on a local llama.cpp server the edit's grammar allows the topic entities as starts
    and only the prompt's candidate relations, and every sentence of it is a path Readi reads."""
    from agent.llm.config import LLMConfig
    from agent.llm.gbnf import gbnf_to_regex

    question = "which country did tropical storm dolly hit?"
    edit = "Thought: use the affected areas.\nFinal Path: Tropical Storm Dolly -> meteorology.tropical_cyclone.affected_areas"
    local = LLMConfig(base_url="http://127.0.0.1:1/v1", mode="completion")
    llm = ScriptedLLM(["Path: Tropical Storm Dolly -> president", edit], config=local)
    result = Readi(llm, ReadiConfig(skip_qa=True, candidate_cap=8)).run(kb, question, {"Tropical Storm Dolly": "m.0107j2dw"})
    assert llm.calls[0].kwargs.get("grammar") is None  # the first path: no candidates yet
    grammar = llm.calls[1].kwargs["grammar"]
    shown = __import__("ast").literal_eval(llm.prompts[1].split("Candidate Relations")[-1].split("Corrected Path")[0].strip())  # the repr of a list
    pattern = gbnf_to_regex(grammar)
    assert pattern.fullmatch(edit)
    for relation in shown:
        assert pattern.fullmatch(f"Thought: t\nFinal Path: Tropical Storm Dolly -> {relation}")
        parse_paths(f"Final Path: Tropical Storm Dolly -> {relation}", topics=["Tropical Storm Dolly"])
    assert not pattern.fullmatch("Thought: t\nFinal Path: Tropical Storm Dolly -> president")  # not a candidate
    assert not pattern.fullmatch("Thought: t\nFinal Path: Dolly -> meteorology.tropical_cyclone.affected_areas")  # not a topic
    assert result.answers == [{"value": "m.0b90_r", "label": "Mexico"}]
    # a remote server gets no grammar field
    remote = ScriptedLLM(["Path: Tropical Storm Dolly -> president", edit])
    Readi(remote, ReadiConfig(skip_qa=True)).run(kb, question, {"Tropical Storm Dolly": "m.0107j2dw"})
    assert all(c.kwargs.get("grammar") is None for c in remote.calls)
