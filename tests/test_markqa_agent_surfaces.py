"""The agent sees MarkQA's actions on a Wikidata-shaped KB (issue 21, item 6, surfaces).

On a KB in Wikidata's statement model the environment offers MarkQA's numeric
actions (:attr:`pyql.builder.profiles.Profile.action_names`), and every surface the
LLM reads or is constrained by is generated from that action set: the prompt's
action docs, the GBNF grammar (generic and per state, with expressions nested
to a bounded depth), the JSON schema and the OpenAI tool schemas. A Freebase
KB keeps QueryAgent's set. What the grammar accepts (sampled at random from the
very GBNF text, and the gold programs of the Wikidata demo) parses with the
action parser, with the action's arity, and converts, or fails with one clear
PyQLError.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import random
import re
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

from agent.llm.scripted import ScriptedLLM
from agent.llm.gbnf import (
    EXPRESSION_DEPTH,
    StateVocabulary,
    _class_to_regex,
    _decode,
    _parse_rules,
    action_gbnf,
    action_json_schema,
    check_lines,
    expression_rules,
    gbnf_to_regex,
    state_gbnf,
    state_tools,
)
from agent.methods.query_agent import AgentConfig, QueryAgent
from grammars.vocabulary import EXPRESSION_FUNCTIONS
from pyql.environment.sparql_actions import MARKQA_ACTION_ORDER, SPARQL_ACTION_ORDER, SPARQL_ALL_ACTIONS
from pyql.action_parser import parse_action
from pyql.environment.actions import openai_tools, render_docs
from pyql.errors import PyQLError
from pyql.kb import KB
from pyql.builder.profiles import FREEBASE, WIKIDATA
from pyql.environment.sparql_actions import SparqlActions, convert_argument
from pyql.environment.sparql import SparqlEnvironment

ROOT = Path(__file__).resolve().parent.parent
KB_PATH = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
QUESTIONS = [json.loads(line) for line in (ROOT / "pyql" / "data" / "wikidata_questions.jsonl").read_text().splitlines() if line.strip()]
#: MarkQA's actions an action set on Wikidata must offer (set_head included: it is MarkQA's too).
MARKQA = set(MARKQA_ACTION_ORDER)


@pytest.fixture(scope="module", autouse=True)
def _each_grammar_compiled_once() -> Iterator[None]:
    """``check_lines`` compiles its grammar on every call (seconds for the Wikidata action set's); here the same few
    grammars are checked again and again, so each is compiled once for the module (a pure function, kept by text)."""
    import agent.llm.gbnf as gbnf  # noqa: PLC0415

    compiled = functools.lru_cache(maxsize=16)(gbnf.gbnf_to_regex)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gbnf, "gbnf_to_regex", compiled)  # what check_lines calls
        patch.setitem(globals(), "gbnf_to_regex", compiled)  # and this module's own calls
        yield


@pytest.fixture(scope="module")
def wikidata_kb() -> KB:
    return KB.open(str(KB_PATH), profile="wikidata")


@pytest.fixture()
def wikidata_env(wikidata_kb: KB) -> SparqlEnvironment:
    return SparqlEnvironment(wikidata_kb, "How many more people lived in Hamburg than in Munich in 2021?",
                             entities={"Hamburg": "Q1055", "Munich": "Q1726"})


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("markqa_choose", ROOT / "benchmarks" / "markqa_choose.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- which action set ------------------------------------------------------------


def test_the_profile_decides_the_action_set(wikidata_env: SparqlEnvironment) -> None:
    assert WIKIDATA.statement_model and not FREEBASE.statement_model
    assert set(wikidata_env.actions.names) == set(SPARQL_ALL_ACTIONS)
    freebase = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    assert set(freebase.actions.names) == set(SPARQL_ACTION_ORDER) and not MARKQA & set(freebase.actions.names)
    # an explicit list wins over the profile, and a derived profile chooses the other set
    assert SparqlEnvironment(wikidata_env.kb, actions=SPARQL_ACTION_ORDER).actions.names == tuple(SPARQL_ACTION_ORDER)
    assert "add_quantity" not in WIKIDATA.with_(statement_model=False).action_names
    assert "add_quantity" in FREEBASE.with_(statement_model=True).action_names


# -- docs, tools, schema ----------------------------------------------------------


def test_prompt_docs_and_example_show_markqa(wikidata_env: SparqlEnvironment) -> None:
    head = QueryAgent(ScriptedLLM([]), AgentConfig(feedback="raw")).head(wikidata_env, wikidata_env.question or "")
    for spec in wikidata_env.actions.specs():
        assert f"`{spec.signature}`" in head
        assert spec.summary in head  # the docstring, not a copy
    assert "add_quantity(Q1055, P1082" in head  # the Wikidata one-shot example
    assert "meteorology." not in head.split("Let's start with an example.")[0].split("You can only choose")[0]
    choose = QueryAgent(ScriptedLLM([]), AgentConfig(feedback="raw", action_mode="choose")).head(wikidata_env, "q")
    assert "Choices 1:" in choose and "add_bind(sub(" in choose
    freebase = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    fb_head = QueryAgent(ScriptedLLM([]), AgentConfig(feedback="raw")).head(freebase, "q")
    assert "add_quantity" not in fb_head and "get_relation(meteorology.tropical_cyclone.category)" in fb_head


def test_tool_schemas_and_json_schema_list_markqa(wikidata_env: SparqlEnvironment) -> None:
    actions = wikidata_env.actions
    tools = {t["function"]["name"]: t["function"] for t in openai_tools(actions)}
    assert MARKQA <= set(tools)
    spec = actions.spec("add_quantity")
    assert tools["add_quantity"]["parameters"]["required"] == [p.name for p in spec.params if p.required]
    assert set(tools["add_quantity"]["parameters"]["properties"]) == {p.name for p in spec.params}
    assert json.loads(render_docs(actions, "openai-tools")) == openai_tools(actions)
    assert "## `add_bind(expression, var)`" in render_docs(actions, "markdown")
    schema = action_json_schema(actions)
    names = {a["properties"]["name"]["const"] for a in schema["properties"]["action"]["anyOf"]}
    assert MARKQA <= names
    # state tools: before any variable the rank needs existing variables, so it is left out
    state = StateVocabulary.from_env(wikidata_env)
    kept = {t["function"]["name"] for t in state_tools(openai_tools(actions), actions, state)}
    assert "add_quantity" in kept and "add_rank" not in kept
    with_vars = StateVocabulary(["Q64"], ["?a", "?b"], {"Q64": (["p:P1082"], [])})
    rank = next(t for t in state_tools(openai_tools(actions), actions, with_vars) if t["function"]["name"] == "add_rank")
    assert rank["function"]["parameters"]["properties"]["rank_var"]["enum"] == ["?a", "?b"]


# -- the grammar --------------------------------------------------------------------


def test_generic_grammar_has_every_markqa_action(wikidata_env: SparqlEnvironment) -> None:
    g = action_gbnf(wikidata_env.actions, resume="action")
    for name in MARKQA:
        assert f'act-{name.replace("_", "-")} ::= "{name}("' in g
    assert check_lines(g, [
        "add_quantity(Q64, P1082, ?pop_2011, 2011)",
        "add_quantity(Q64, P1082, ?pop, false, true)",
        "add_quantity(Q64, P1082, pop, true)",
        "add_quantity(Q64, P1082, ?pop, 2021-12-31T00:00:00Z)",
        "add_bind(mul(div(sub(?pop_2021, ?pop_2011), ?pop_2011), 100), ?growth)",
        "add_bind(avg(?a, ?b, ?c), ?mean)",
        "add_bind(floor_mul(?p, to_decimal(1.025)), ?grown)",
        "add_assignment((Q64, Q1055, Q1726), ?city)",
        "add_rank(?munich, ?population, ?rank)",
        "add_quantity_with_qualifier(Q183, P2250, P21, Q6581072, ?female)",
        "add_quantity_by_qualifier(Q56599233, P186, Q172587, P2067, ?steel)",
        "set_head(SELECT ?ans)",
    ]) == []
    # an unknown function, an unbalanced call, a flag that is no flag: not in the language
    assert len(check_lines(g, ["add_bind(pow(?a, 2), ?x)", "add_bind(sub(?a, ?b, ?x)", "add_quantity(Q64, P1082, ?p, 2011, maybe)"])) == 3


def _nested(depth: int) -> str:
    text = "?a"
    for _ in range(depth):
        text = f"abs({text})"
    return text


def test_expressions_nest_to_a_bounded_depth(wikidata_env: SparqlEnvironment) -> None:
    g = action_gbnf(wikidata_env.actions, resume="action")
    assert check_lines(g, [f"add_bind({_nested(EXPRESSION_DEPTH)}, ?x)"]) == []
    assert check_lines(g, [f"add_bind({_nested(EXPRESSION_DEPTH + 1)}, ?x)"]) != []
    fn = [line for line in expression_rules() if line.startswith("fn ::= ")][0]
    assert {f.strip('"') for f in fn[len("fn ::= "):].split(" | ")} == set(EXPRESSION_FUNCTIONS)
    with pytest.raises(ValueError, match="expression depth"):
        expression_rules(0)


def test_state_grammar_writes_markqa_steps_from_memory(wikidata_env: SparqlEnvironment) -> None:
    wikidata_env.step("get_relation(Q1055)")
    wikidata_env.step("add_quantity(Q1055, P1082, ?hamburg, 2021)")
    wikidata_env.step("add_quantity(Q1726, P1082, ?munich, 2021)")
    state = StateVocabulary.from_env(wikidata_env)
    g = state_gbnf(wikidata_env.actions, state, resume="action")
    assert check_lines(g, [
        "add_quantity(Q1055, P1082, ?hamburg_2011, 2011)",
        "add_bind(sub(?hamburg, ?munich), ?difference)",
        "add_compare(?hamburg, >, ?munich)",
        "add_rank(?hamburg, ?munich, ?rank)",
    ]) == []
    # a property no look returned, an operand that is no variable of the query, a new variable ranked
    assert len(check_lines(g, [
        "add_quantity(Q1055, P2250, ?x)", "add_bind(sub(?hamburg, ?nobody), ?d)", "add_rank(?nobody, ?munich, ?r)",
    ])) == 3


def _gold_lines() -> list[str]:
    bench = _benchmark()
    kb = KB.open(str(KB_PATH), profile="wikidata")
    lines = []
    for item in QUESTIONS:
        for row in bench.replay(kb, item, limit=10, choices=3):
            if row["writable"]:
                lines.append(row["action"])
    return lines


def test_the_gold_steps_of_the_demo_are_in_the_grammar(wikidata_env: SparqlEnvironment) -> None:
    lines = _gold_lines()
    assert len(lines) > 100 and {line.split("(")[0] for line in lines} >= {"add_quantity", "add_bind", "add_rank"}
    assert check_lines(action_gbnf(wikidata_env.actions, resume="action"), lines) == []


class _Sampler:
    """Random sentences of a (non-recursive) GBNF grammar, read from its text with the module's own reader."""

    ALPHABET = "abcxyzQP019_?-.:( )\",/'@^<>="

    def __init__(self, grammar: str, rng: random.Random) -> None:
        self.rules = {name: self._alternatives(tokens, 0)[0] for name, tokens in _parse_rules(grammar).items()}
        self.rng = rng

    def _alternatives(self, tokens: list, pos: int) -> tuple[list, int]:
        alternatives: list[list] = [[]]
        while pos < len(tokens) and tokens[pos] != ("op", ")"):
            kind, text = tokens[pos]
            if (kind, text) == ("op", "|"):
                alternatives.append([])
                pos += 1
                continue
            if (kind, text) == ("op", "("):
                inner, pos = self._alternatives(tokens, pos + 1)
                atom: tuple = ("group", inner)
                pos += 1  # the ")"
            else:
                atom = (kind, text)
                pos += 1
            rep = ""
            if pos < len(tokens) and tokens[pos][1] in ("*", "+", "?"):
                rep = tokens[pos][1]
                pos += 1
            alternatives[-1].append((atom, rep))
        return alternatives, pos

    def sentence(self, rule: str) -> str:
        return self._pick(self.rules[rule])

    def _pick(self, alternatives: list) -> str:
        out = []
        for atom, rep in self.rng.choice(alternatives):
            count = {"": 1, "?": self.rng.choice([0, 1]), "*": self.rng.choice([0, 1, 2]), "+": self.rng.choice([1, 2])}[rep]
            out += [self._atom(atom) for _ in range(count)]
        return "".join(out)

    def _atom(self, atom: tuple) -> str:
        kind, value = atom
        if kind == "group":
            return self._pick(value)
        if kind == "lit":
            return "".join(_decode(value[1:-1]))
        if kind == "cls":
            pattern = re.compile(_class_to_regex(value))
            return self.rng.choice([c for c in self.ALPHABET if pattern.fullmatch(c)])
        return self._pick(self.rules[value])


def test_what_the_grammar_accepts_parses_with_the_action_parser(wikidata_env: SparqlEnvironment) -> None:
    """Random sentences of the GBNF text itself: each is in the grammar, parses as a call of a MarkQA
    action with its arity, and every argument converts or fails with one PyQLError."""
    actions = SparqlActions(SPARQL_ALL_ACTIONS)
    grammar = action_gbnf(actions, resume="action")
    sampler = _Sampler(grammar, random.Random(21))
    matcher = gbnf_to_regex(grammar)
    seen: set[str] = set()
    for name in sorted(MARKQA):
        rule = f"act-{name.replace('_', '-')}"
        for _ in range(60):
            text = sampler.sentence(rule)
            assert matcher.fullmatch(text), text  # the sampler writes the grammar's language
            call = parse_action(text)
            assert call.name == name, text
            spec = actions.check_arity(call.name, len(call.args))
            for position, (param, arg) in enumerate(zip(spec.params, call.args)):
                try:
                    convert_argument(WIKIDATA, param.kind, arg, name, param.name, position)
                except PyQLError as exc:
                    assert str(exc), text
            seen.add(name)
    assert seen == MARKQA
