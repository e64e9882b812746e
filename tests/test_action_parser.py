"""Tests of pyql.action_parser and the grammars package (action language, legacy PyQL)."""

from __future__ import annotations

import collections
import json
import string

import lark
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import grammars
from pyql.action_parser import (
    ARG_KINDS,
    OPERATORS,
    ActionArityError,
    ActionCall,
    ActionSyntaxError,
    Arg,
    LegacySyntaxError,
    MultipleActionsError,
    NoActionError,
    call_from_values,
    extract_action,
    parse_action,
    parse_argument,
    parse_legacy_program,
    render_action,
    render_argument,
    split_args,
)
from pyql.errors import ParseError, PyQLError, TermError
from tests.shared_data import needs_shared, shared_path

WEBQSP_TEST = shared_path("webqsp")
XSD_FLOAT = "http://www.w3.org/2001/XMLSchema#float"


def kinds(call: ActionCall) -> list[tuple]:
    return [(a.kind, a.value, a.datatype, a.lang) for a in call.args]


# ---------------------------------------------------------------------------
# grammars package


def test_grammar_loader():
    assert grammars.grammar_path("action").name == "action.lark"
    assert grammars.grammar_path("legacy_pyql.lark").is_file()
    assert "argument:" in grammars.load_grammar("action")
    assert {"action", "legacy_pyql"} <= set(grammars.available_grammars())
    p1 = grammars.lark_parser("action", parser="lalr", start=["start", "argument"])
    p2 = grammars.lark_parser("action", start=["start", "argument"], parser="lalr")
    assert p1 is p2 and isinstance(p1, lark.Lark)
    with pytest.raises(FileNotFoundError, match="known"):
        grammars.grammar_path("nope")
    with pytest.raises(FileNotFoundError):
        grammars.grammar_path("../pyql/errors")


# ---------------------------------------------------------------------------
# parse_action: argument forms

ARG_CASES = [
    # variables
    ("?x", ("variable", "x", None, None)),
    ("?cyclone_1", ("variable", "cyclone_1", None, None)),
    # bare names: Freebase ids, relations, CURIEs, IRIs
    ("m.0crbvqz", ("name", "m.0crbvqz", None, None)),
    ("g.11b6_z1", ("name", "g.11b6_z1", None, None)),
    ("meteorology.tropical_cyclone.category", ("name", "meteorology.tropical_cyclone.category", None, None)),
    ("wd:Q42", ("name", "wd:Q42", None, None)),
    ("xsd:gYear", ("name", "xsd:gYear", None, None)),
    ("<http://www.wikidata.org/entity/Q42>", ("name", "http://www.wikidata.org/entity/Q42", None, None)),
    ("http://www.wikidata.org/entity/Q42", ("name", "http://www.wikidata.org/entity/Q42", None, None)),
    ("<http://dbpedia.org/resource/Washington,_D.C.>", ("name", "http://dbpedia.org/resource/Washington,_D.C.", None, None)),
    ("http://en.wikipedia.org/wiki/Foo_(bar)", ("name", "http://en.wikipedia.org/wiki/Foo_(bar)", None, None)),
    ("Romance", ("name", "Romance", None, None)),
    # numbers
    ("10", ("number", "10", None, None)),
    ("-3.5", ("number", "-3.5", None, None)),
    ("1e3", ("number", "1e3", None, None)),
    ("1.0", ("number", "1.0", None, None)),
    ("+0.25", ("number", "+0.25", None, None)),
    # dates
    ("2011-01-01", ("date", "2011-01-01", None, None)),
    ("2011-01-01T08:00:00", ("date", "2011-01-01T08:00:00", None, None)),
    ("2014-07-31-08:00", ("date", "2014-07-31-08:00", None, None)),
    ("1981-11-08:00", ("date", "1981-11-08:00", None, None)),
    ("2011-01", ("date", "2011-01", None, None)),
    ("2011-01-01T08:00:00Z", ("date", "2011-01-01T08:00:00Z", None, None)),
    # operators
    *[(op, ("operator", op, None, None)) for op in OPERATORS],
    # quoted strings
    ('"yes"', ("string", "yes", None, None)),
    ("'UnName_Entity'", ("string", "UnName_Entity", None, None)),
    (r'"say \"hi\""', ("string", 'say "hi"', None, None)),
    (r"'it\'s'", ("string", "it's", None, None)),
    (r'"a\\b\nc\td"', ("string", "a\\b\nc\td", None, None)),
    (r'"\u00e9t\u00e9"', ("string", "été", None, None)),
    (r'"\q stays"', ("string", "\\q stays", None, None)),
    ('"a, b (c)"', ("string", "a, b (c)", None, None)),
    ('""', ("string", "", None, None)),
    # language-tagged and typed literals
    ('"Rachel"@en', ("lang_string", "Rachel", None, "en")),
    ("'Tempesta tropicale Lee'@it", ("lang_string", "Tempesta tropicale Lee", None, "it")),
    ('"Rachel"@en-GB', ("lang_string", "Rachel", None, "en-GB")),
    ('"2011"^^xsd:gYear', ("typed", "2011", "xsd:gYear", None)),
    (f'"1.0"^^<{XSD_FLOAT}>', ("typed", "1.0", XSD_FLOAT, None)),
    (f"1.0^^{XSD_FLOAT}", ("typed", "1.0", XSD_FLOAT, None)),
    ("2011-12-31^^xsd:date", ("typed", "2011-12-31", "xsd:date", None)),
    ("true^^xsd:boolean", ("typed", "true", "xsd:boolean", None)),
    ('"2011-12-31" ^^ xsd:dateTime', ("typed", "2011-12-31", "xsd:dateTime", None)),
    # free text (SQL side)
    ("Lyrics theme/style", ("text", "Lyrics theme/style", None, None)),
    ("No. in series", ("text", "No. in series", None, None)),
    ("No.", ("text", "No.", None, None)),
    ("O'Brien", ("text", "O'Brien", None, None)),
    ("Name (full)", ("text", "Name (full)", None, None)),
    ("f(a, b)", ("text", "f(a, b)", None, None)),
    ('"abc" def', ("text", '"abc" def', None, None)),
    ("10%", ("text", "10%", None, None)),
    ("<foo>", ("text", "<foo>", None, None)),
    ("? x", ("text", "? x", None, None)),
    ("2011-01-01 08:00", ("text", "2011-01-01 08:00", None, None)),
    ("größe über 10", ("text", "größe über 10", None, None)),
    # backticks around an argument are dropped; inside them commas do not split
    ("`m.0abc`", ("name", "m.0abc", None, None)),
    ("` ?x `", ("variable", "x", None, None)),
    ("`Smith, John`", ("text", "Smith, John", None, None)),
    ('`"Rachel"@en`', ("lang_string", "Rachel", None, "en")),
]


@pytest.mark.parametrize("source, expected", ARG_CASES, ids=[c[0] for c in ARG_CASES])
def test_argument_forms(source, expected):
    text = f"f({source})"
    call = parse_action(text)
    assert call.name == "f"
    assert len(call.args) == 1
    (arg,) = call.args
    assert (arg.kind, arg.value, arg.datatype, arg.lang) == expected
    assert arg.raw == source.strip()
    assert text[arg.span[0] : arg.span[1]] == arg.raw
    # the same typing outside a call
    assert parse_argument(source) == Arg(*expected)


ACTION_CASES = [
    ("execute()", "execute", []),
    ("execute( )", "execute", []),
    ("get_relation(m.0crbvqz)", "get_relation", [("name", "m.0crbvqz", None, None)]),
    (
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
        "add_fact",
        [
            ("name", "m.0crbvqz", None, None),
            ("name", "meteorology.tropical_cyclone.category", None, None),
            ("variable", "category", None, None),
        ],
    ),
    (
        "add_filter(?length,>,10)",
        "add_filter",
        [("variable", "length", None, None), ("operator", ">", None, None), ("number", "10", None, None)],
    ),
    (
        # from the paper's GrailQA trace: semantically wrong, syntactically fine
        "add_filter(?angular_frequency, measurement_unit.angular_velocity_unit.frequency_in_radians_per_second, 1.0)",
        "add_filter",
        [
            ("variable", "angular_frequency", None, None),
            ("name", "measurement_unit.angular_velocity_unit.frequency_in_radians_per_second", None, None),
            ("number", "1.0", None, None),
        ],
    ),
    ("add_filter(?angular_frequency, =, 1.0)", "add_filter",
     [("variable", "angular_frequency", None, None), ("operator", "=", None, None), ("number", "1.0", None, None)]),
    ('set_answer("yes")', "set_answer", [("string", "yes", None, None)]),
    ("get_relation(1.0)", "get_relation", [("number", "1.0", None, None)]),
    ("get_relation('UnName_Entity')", "get_relation", [("string", "UnName_Entity", None, None)]),
    ("add_count(?x, ?n)", "add_count", [("variable", "x", None, None), ("variable", "n", None, None)]),
    (
        "add_condition(Lyrics theme/style, =, Romance)",
        "add_condition",
        [("text", "Lyrics theme/style", None, None), ("operator", "=", None, None), ("name", "Romance", None, None)],
    ),
    ("get_column(No. in series)", "get_column", [("text", "No. in series", None, None)]),
    (
        "add_condition(Name, =, Smith, John)",
        "add_condition",
        [("name", "Name", None, None), ("operator", "=", None, None), ("name", "Smith", None, None), ("name", "John", None, None)],
    ),
    (
        'add_fact(?x, people.person.date_of_birth, "2011"^^xsd:gYear)',
        "add_fact",
        [("variable", "x", None, None), ("name", "people.person.date_of_birth", None, None), ("typed", "2011", "xsd:gYear", None)],
    ),
    (
        f"add_fact(m.1, r.s, 1.0^^{XSD_FLOAT})",
        "add_fact",
        [("name", "m.1", None, None), ("name", "r.s", None, None), ("typed", "1.0", XSD_FLOAT, None)],
    ),
    ("`add_max(?time)`", "add_max", [("variable", "time", None, None)]),
    ("``add_max(?time)``", "add_max", [("variable", "time", None, None)]),
    ("add_fact(`m.0abc`, `r.s`, `?x`)", "add_fact",
     [("name", "m.0abc", None, None), ("name", "r.s", None, None), ("variable", "x", None, None)]),
    ("  add_fact (\n  m.1 ,\n  r.s ,\n  ?x\n)  ", "add_fact",
     [("name", "m.1", None, None), ("name", "r.s", None, None), ("variable", "x", None, None)]),
    ('f("a, b", \'c)\', (d, e))', "f",
     [("string", "a, b", None, None), ("string", "c)", None, None), ("text", "(d, e)", None, None)]),
    ("größe(?été)", "größe", [("variable", "été", None, None)]),
]


@pytest.mark.parametrize("text, name, expected", ACTION_CASES, ids=[c[0][:50] for c in ACTION_CASES])
def test_actions(text, name, expected):
    call = parse_action(text)
    assert call.name == name
    assert kinds(call) == expected
    assert text[call.span[0] : call.span[1]] == call.text
    assert call.text.startswith(name) and call.text.endswith(")")
    for arg in call.args:
        assert text[arg.span[0] : arg.span[1]] == arg.raw
    # the canonical rendering reads back to an equal call
    assert parse_action(render_action(call)) == call


def test_spans_raw_args_and_args_text():
    text = "  add_condition( Name , = , Smith,  John )"
    call = parse_action(text)
    assert call.raw_args == ("Name", "=", "Smith", "John")
    assert call.args_text == " Name , = , Smith,  John "
    assert text[call.args_span[0] : call.args_span[1]] == call.args_text
    assert call.span == (2, len(text))
    assert [a.span for a in call.args] == [(17, 21), (24, 25), (28, 33), (36, 40)]
    assert call.values == ("Name", "=", "Smith", "John")


def test_equality_is_semantic():
    a = parse_action("f(?x, 'a')")
    b = parse_action('f( ?x ,"a" )')
    assert a == b and hash(a) == hash(b)
    assert a.raw_args != b.raw_args
    assert a == ActionCall("f", [Arg("variable", "x"), Arg("string", "a")])
    with pytest.raises(TermError):
        Arg("bogus", "x")
    assert set(ARG_KINDS) == {"variable", "name", "string", "lang_string", "typed", "number", "date", "operator", "text"}


# ---------------------------------------------------------------------------
# parse_action: errors

ERROR_CASES = [
    ("add_fact(m.1, r", 15, ["','", "')'"]),
    ("add_fact(a,,b)", 11, ["an argument"]),
    ("add_fact(a,)", 11, ["an argument"]),
    ("add_fact(", 9, ["an argument", "')'"]),
    ("add_fact", 8, ["'('"]),
    ("add_fact m.1", 9, ["'('"]),
    ("1add(a)", 0, ["an action name"]),
    ("", 0, ["an action name"]),
    ("   ", 0, ["an action name"]),
    ("f(a) trailing", 5, ["end of input"]),
    ("f(a))", 4, ["end of input"]),
    ("f(a); g(b)", 4, ["end of input"]),
    ('set_answer("yes)', 11, ["an argument", "')'"]),
    ("f(a (b)", 7, ["','", "')'"]),
    ("Action 1: f(a)", 7, ["'('"]),
]


@pytest.mark.parametrize("text, position, expected", ERROR_CASES, ids=[c[0] or "<empty>" for c in ERROR_CASES])
def test_action_syntax_errors(text, position, expected):
    with pytest.raises(ActionSyntaxError) as info:
        parse_action(text)
    err = info.value
    assert err.kind == "action_syntax"
    assert isinstance(err, ParseError) and isinstance(err, PyQLError) and isinstance(err, ValueError)
    assert err.position == position
    assert err.expected == expected
    assert err.text == text
    if position < len(text.strip()) and expected == ["end of input"]:
        assert f"unexpected text after the call at column {position + 1}:" in str(err)
    else:
        assert f"character {position}" in str(err)


TRAILING_CASES = [
    # (reply, position of the trailing text, message part)
    ("execute()()", 9, "column 10: '()'"),
    ("add_condition(Opponent, =, x'); DROP TABLE games; --)", 30, "column 31: '; DROP TABLE games; --)'"),
    ("Action 3: get_relation(m.1) to list the relation(s).", 28, "column 29: 'to list the relation(s).'"),
    ("Thought 3: x\nAction 3: `execute()` now\nObservation 3: ...", 35, "line 2, column 23: 'now'"),
    ("Action 3: add_max(?x))", 21, "column 22: ')'"),
    ("Action 3: get_relation(m.1).; x", 27, "column 28: '.; x'"),
    ("Action 3: f(\n  a\n) # why", 19, "line 3, column 3: '# why'"),
    ("```\nexecute() please\n```", 14, "line 2, column 11: 'please'"),
]


@pytest.mark.parametrize("reply, position, part", TRAILING_CASES, ids=[c[0][:40] for c in TRAILING_CASES])
def test_text_after_the_call_is_an_error_with_its_position(reply, position, part):
    with pytest.raises(ActionSyntaxError) as info:
        extract_action(reply)
    err = info.value
    assert err.kind == "action_syntax"
    assert err.position == position
    assert err.expected == ["end of the action line"]
    assert f"unexpected text after the call at {part}" in str(err)


@pytest.mark.parametrize("text", ["execute()()", "add_condition(Opponent, =, x'); DROP TABLE games; --)", "f(a) trailing"])
def test_parse_action_reports_text_after_the_call(text):
    with pytest.raises(ActionSyntaxError, match="unexpected text after the call at column"):
        parse_action(text)


def test_prose_on_later_lines_is_still_accepted():
    reply = "Thought 2: x\nAction 2: get_relation(m.1)\nThis lists the relations of m.1, then I will filter."
    assert extract_action(reply).values == ("m.1",)


def test_unterminated_string_message():
    with pytest.raises(ActionSyntaxError, match="never closed"):
        parse_action('set_answer("yes)')


# ---------------------------------------------------------------------------
# extract_action

EXTRACT_CASES = [
    ("Thought 3: blah.\nAction 3: add_fact(m.1, r.s, ?x)", "add_fact", ("m.1", "r.s", "x"), 3),
    ("Action 3 : `add_fact(m.1, r.s, ?x)`", "add_fact", ("m.1", "r.s", "x"), 3),
    ("Action: execute()", "execute", (), None),
    ("Action3: execute()", "execute", (), 3),
    ("action 2: execute()", "execute", (), 2),
    ("**Action 3:** get_relation(m.1)", "get_relation", ("m.1",), 3),
    ("Thought 3: x\nAction 3:\n```python\nadd_max(?t)\n```\n", "add_max", ("t",), 3),
    ("```\nThought 1: x\nAction 1: get_relation(m.1)\n```", "get_relation", ("m.1",), 1),
    ("Action 3: ```get_relation(m.1)```", "get_relation", ("m.1",), 3),
    ("Action 3: get_relation(m.1).", "get_relation", ("m.1",), 3),
    ("Action 3: `get_relation(m.1)`;", "get_relation", ("m.1",), 3),
    ("Action 3: **get_relation(m.1)** \nto list the relation(s).", "get_relation", ("m.1",), 3),
    (
        "Action 3: add_fact(m.1, r.s, ?x)\nObservation 3: The value of variable ?x is ['a']",
        "add_fact",
        ("m.1", "r.s", "x"),
        3,
    ),
    ('Action 6: set_answer("yes")', "set_answer", ("yes",), 6),
    ("Action 3: get_relation('UnName_Entity')", "get_relation", ("UnName_Entity",), 3),
    ("Thought 3: blah. Action 3: add_max(?t)", "add_max", ("t",), 3),
    ("Action 3: add_condition(Name, =, Smith, John)", "add_condition", ("Name", "=", "Smith", "John"), 3),
    ("Action 3: f(\n  a,\n  b\n)\n", "f", ("a", "b"), 3),
    ("Thought 2: I will call get_relation(m.1) next.\nAction 2: get_relation(m.1)", "get_relation", ("m.1",), 2),
    # a reply that is only an action
    ("get_relation(m.0j8js)", "get_relation", ("m.0j8js",), None),
    ("  `get_relation(m.0j8js)`  \n", "get_relation", ("m.0j8js",), None),
    ("```\nexecute()\n```", "execute", (), None),
    ("Sure, here it is:\nget_relation(m.0j8js)\n", "get_relation", ("m.0j8js",), None),
    # the paper's traces
    (
        "Thought 1: This question aims to find a cyclone(?cyclone).\n\nAction 1 : `get_relation(m.0crbvqz)`\n",
        "get_relation",
        ("m.0crbvqz",),
        1,
    ),
    (
        "Thought 3: Based on the relations ... radians per second.\n\n"
        "Action 3: add_filter(?angular_frequency, measurement_unit.angular_velocity_unit.frequency_in_radians_per_second, 1.0)",
        "add_filter",
        ("angular_frequency", "measurement_unit.angular_velocity_unit.frequency_in_radians_per_second", "1.0"),
        3,
    ),
]


@pytest.mark.parametrize("reply, name, values, step", EXTRACT_CASES, ids=[c[0][:40] for c in EXTRACT_CASES])
def test_extract_action(reply, name, values, step):
    call = extract_action(reply, step=3)
    assert (call.name, call.values, call.step) == (name, values, step)
    assert reply[call.span[0] : call.span[1]] == call.text
    for arg in call.args:
        assert reply[arg.span[0] : arg.span[1]] == arg.raw


def test_extract_step_mismatch_is_recorded_not_rejected():
    call = extract_action("Thought 4: retry.\nAction 4: get_relation(m.1)", step=3)
    assert call.step == 4 and call.name == "get_relation"
    assert extract_action("Action 3: execute()", step=3).step == 3


NO_ACTION_CASES = [
    "Action 3: Since we couldn't find a suitable relation to directly represent the concept of "
    '"streams available on live365", we need to use a different approach to solve this question.',
    "Thought 3: only thinking, no action yet.",
    "",
    "   \n\n",
    "Action 3:",
    "Action 3: \nObservation 3: nothing",
    "I think we should look at the relations of m.1 first.",
]


@pytest.mark.parametrize("reply", NO_ACTION_CASES)
def test_no_action(reply):
    with pytest.raises(NoActionError) as info:
        extract_action(reply, step=3)
    assert info.value.kind == "no_action"
    assert isinstance(info.value, ParseError)


def test_no_action_position_points_after_label():
    with pytest.raises(NoActionError) as info:
        extract_action(NO_ACTION_CASES[0])
    assert info.value.position == len("Action 3: ")


MULTIPLE_CASES = [
    ("Action 3: x(?a)\nObservation 3: blah\nThought 4: more\nAction 4: y(?b)", [0, 52]),
    ("Action 3: get_relation(m.1)\nAction 3: get_relation(m.1)", [0, 28]),
    ("Action 3: get_relation(m.1), get_relation(m.2)", [10, 29]),
    ("Action 3: get_relation(m.1); add_max(?x)", [10, 29]),
    ("Action 3: get_relation(m.1) and then add_max(?x)", [10, 37]),
    ("Action 3: get_relation(m.1)\nget_relation(m.2)", [10, 28]),
    ("Action 3:\n1. get_relation(m.1)\n2. add_max(?x)", [13, 34]),
    ("get_relation(m.1)\nadd_max(?x)", [0, 18]),
    ("```\nget_relation(m.1)\n```\n```\nadd_max(?x)\n```", [4, 30]),
]


@pytest.mark.parametrize("reply, positions", MULTIPLE_CASES, ids=[c[0][:40] for c in MULTIPLE_CASES])
def test_multiple_actions(reply, positions):
    with pytest.raises(MultipleActionsError) as info:
        extract_action(reply, step=3)
    err = info.value
    assert err.kind == "multiple_actions"
    assert err.positions == positions
    assert err.position == positions[1]


EXTRACT_SYNTAX_CASES = [
    ("Action 3: add_fact(m.1, r, ?x", 29, ["','", "')'"]),
    ("Thought 9: done.\nAction 9: execute", 34, ["'('"]),
    ("Action 3: add_fact(m.1,, ?x)\nObservation 3: x", 23, ["an argument"]),
    ("Action 3: add_fact(m.1, r, ?x\nObservation 3: x", 29, ["','", "')'"]),
]


@pytest.mark.parametrize("reply, position, expected", EXTRACT_SYNTAX_CASES, ids=[c[0][:40] for c in EXTRACT_SYNTAX_CASES])
def test_extract_syntax_errors(reply, position, expected):
    with pytest.raises(ActionSyntaxError) as info:
        extract_action(reply)
    assert (info.value.position, info.value.expected) == (position, expected)
    assert info.value.text == reply


# ---------------------------------------------------------------------------
# render_action / split_args


def test_render_plain_values():
    assert render_action("add_filter", "?length", ">", 10) == "add_filter(?length, >, 10)"
    assert render_action("execute") == "execute()"
    assert render_action("f", 2.5, -3) == "f(2.5, -3)"
    assert render_action("f", "m.0abc", "No. in series", "Smith, John") == 'f(m.0abc, No. in series, "Smith, John")'
    assert render_action("f", "", " x ") == 'f("", " x ")'
    assert render_action("f", 'a "b"\\c\nd') == r'f("a \"b\"\\c\nd")'
    assert render_action("f", '"2011"^^xsd:gYear') == 'f("2011"^^xsd:gYear)'
    assert render_action("f", "a) , g(b") == 'f("a) , g(b")'


def test_render_args():
    assert render_argument(Arg("name", f"{XSD_FLOAT}")) == XSD_FLOAT
    assert render_argument(Arg("name", "http://x.org/a,b")) == "<http://x.org/a,b>"
    assert render_argument(Arg("typed", "1.0", datatype=XSD_FLOAT)) == f'"1.0"^^<{XSD_FLOAT}>'
    assert render_argument(Arg("typed", "2011", datatype="xsd:gYear")) == '"2011"^^xsd:gYear'
    assert render_argument(Arg("lang_string", "Rachel", lang="en")) == '"Rachel"@en'
    assert render_argument(Arg("text", "Lyrics theme/style")) == "Lyrics theme/style"
    # text that would not read back as the same text becomes a quoted string
    assert render_argument(Arg("text", "Smith, John")) == '"Smith, John"'
    assert render_argument(Arg("text", "Smith")) == '"Smith"'
    assert render_argument(Arg("text", "O'Brien")) == '"O\'Brien"'
    assert render_action("f", Arg("text", '0"'), Arg("string", "")) == 'f("0\\"", "")'


@pytest.mark.parametrize(
    "bad",
    [
        Arg("variable", "a b"),
        Arg("variable", ""),
        Arg("number", "abc"),
        Arg("date", "yesterday"),
        Arg("operator", "=!"),
        Arg("name", "a b"),
        Arg("name", ""),
        Arg("lang_string", "x", lang="e n"),
        Arg("lang_string", "x"),
        Arg("typed", "x"),
        Arg("typed", "x", datatype="a b"),
    ],
)
def test_render_rejects_unwritable(bad):
    with pytest.raises(TermError):
        render_action("f", bad)


def test_render_rejects_bad_name_and_values():
    with pytest.raises(TermError):
        render_action("1f")
    with pytest.raises(TermError):
        render_action("f", True)
    with pytest.raises(TermError):
        render_action("f", float("nan"))
    with pytest.raises(TypeError):
        render_action(parse_action("f()"), "x")


def test_split_args():
    call = parse_action("add_condition(Name, =, Smith, John)")
    assert split_args(call, 3) == ("Name", "=", "Smith, John")
    assert split_args(call, 4) == ("Name", "=", "Smith", "John")
    assert split_args(call, 2) == ("Name", "=, Smith, John")
    assert split_args(call, 1) == ("Name, =, Smith, John",)
    assert split_args(parse_action("add_condition(Name, =,  Smith ,John, Jr.)"), 3) == ("Name", "=", "Smith ,John, Jr.")
    assert split_args(parse_action('add_condition(Name, =, "Smith, John")'), 3) == ("Name", "=", "Smith, John")
    assert split_args(parse_action("execute()"), 0) == ()
    # also on a call extracted from a reply (spans are reply offsets)
    reply = "Thought 1: x\nAction 1: add_condition(Lyrics theme/style, =, Love, loss)"
    assert split_args(extract_action(reply), 3) == ("Lyrics theme/style", "=", "Love, loss")
    # hand-made calls have no source: the raw texts are joined
    made = ActionCall("f", (Arg("name", "a"), Arg("name", "b"), Arg("name", "c")))
    assert split_args(made, 2) == ("a", "b, c")
    with pytest.raises(ActionArityError) as info:
        split_args(parse_action("add_fact(a, b)"), 3)
    assert info.value.kind == "action_arity" and isinstance(info.value, ActionSyntaxError)
    with pytest.raises(ActionArityError):
        split_args(parse_action("execute(x)"), 0)


# ---------------------------------------------------------------------------
# legacy PyQL programs

LEGACY_EXAMPLE = """a=PyQL()
a.add_filter('x0', '!=', 'm.03_r3')
a.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')
a.add_time_constrain('x1', 'government.government_position_held.from', 'government.government_position_held.to', '"2011-12-31"^^xsd:dateTime', '"2011-01-01"^^xsd:dateTime')
a.add_max('x2')
a.set_answer('x0')
"""


def test_legacy_example():
    calls = parse_legacy_program(LEGACY_EXAMPLE)
    assert [c.name for c in calls] == ["add_filter", "add_fact", "add_time_constrain", "add_max", "set_answer"]
    assert kinds(calls[0]) == [("variable", "x0", None, None), ("operator", "!=", None, None), ("name", "m.03_r3", None, None)]
    assert kinds(calls[2]) == [
        ("variable", "x1", None, None),
        ("name", "government.government_position_held.from", None, None),
        ("name", "government.government_position_held.to", None, None),
        ("typed", "2011-12-31", "xsd:dateTime", None),
        ("typed", "2011-01-01", "xsd:dateTime", None),
    ]
    for call in calls:
        assert LEGACY_EXAMPLE[call.span[0] : call.span[1]] == call.text
        assert call.text.startswith("a." + call.name + "(")
        for arg in call.args:
            assert LEGACY_EXAMPLE[arg.span[0] : arg.span[1]] == arg.raw


@pytest.mark.parametrize(
    "program, expected",
    [
        ("null", []),
        ("", []),
        ("\n\n", []),
        ("a = PyQL()\n\na.add_max( '?x2' )  # comment\n", [("add_max", [("variable", "x2", None, None)])]),
        ('a=PyQL(); a.add_fact("x0", "r.s", "\\"Firearms\\"^^xsd:string")',
         [("add_fact", [("variable", "x0", None, None), ("name", "r.s", None, None), ("typed", "Firearms", "xsd:string", None)])]),
        ("a=PyQL()\na.add_filter('x0', '>', 10)", [("add_filter", [("variable", "x0", None, None), ("operator", ">", None, None), ("number", "10", None, None)])]),
        ("a.set_answer('?cyclone')", [("set_answer", [("variable", "cyclone", None, None)])]),
        ("a=PyQL()\na.add_fact('x0', 'r.s', '\"Rachel\"@en')", [("add_fact", [("variable", "x0", None, None), ("name", "r.s", None, None), ("lang_string", "Rachel", None, "en")])]),
        ("a=PyQL()\na.add_fact('x0', 'r.s', 'New York')", [("add_fact", [("variable", "x0", None, None), ("name", "r.s", None, None), ("text", "New York", None, None)])]),
    ],
)
def test_legacy_forms(program, expected):
    assert [(c.name, kinds(c)) for c in parse_legacy_program(program)] == expected


@pytest.mark.parametrize(
    "program, line, position",
    [
        ("a=PyQL()\na.add_fact('x0', 'r'\n", 2, 29),
        ("a=PyQL()\na.add_max(x0)\n", 2, 19),
        ("a=PyQL()\nb.add_max('x0')\n", 2, 9),
        ("a=Foo()\n", 1, 2),
        ("a=PyQL()\na.add_max('x0') a.add_max('x1')\n", 2, 25),
        ("a=PyQL()\na.add_max('x0\n", 2, 19),
        ("a=PyQL()\n__import__('os').system('true')\n", 2, 19),
        ("a=PyQL()\na.add_max('x0')\nnull\n", 3, 25),
    ],
)
def test_legacy_errors(program, line, position):
    with pytest.raises(LegacySyntaxError) as info:
        parse_legacy_program(program)
    err = info.value
    assert (err.kind, err.line, err.position) == ("legacy_syntax", line, position)
    assert f"line {line}" in str(err)
    assert isinstance(err, ParseError)


@needs_shared("webqsp")
def test_all_webqsp_test_programs_parse():
    items = json.loads(WEBQSP_TEST.read_text(encoding="utf-8"))
    assert len(items) == 1639
    counts: collections.Counter[str] = collections.Counter()
    arg_kinds: collections.Counter[str] = collections.Counter()
    for item in items:
        calls = parse_legacy_program(item["PyQL"])
        counts.update(c.name for c in calls)
        arg_kinds.update(a.kind for c in calls for a in c.args)
    assert counts["add_fact"] == 2581
    assert counts["add_filter"] == 2570
    assert counts["set_answer"] == 1594
    assert counts["add_time_constrain"] == 99
    assert counts["add_max"] == 33
    assert counts["add_min"] == 16
    assert set(counts) == {"add_fact", "add_filter", "set_answer", "add_time_constrain", "add_max", "add_min"}
    assert set(arg_kinds) == {"variable", "name", "operator", "typed"}


# ---------------------------------------------------------------------------
# property tests

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True) | st.from_regex(r"[^\W\d]\w{0,6}", fullmatch=True)
ANY_TEXT = st.text(max_size=30) | st.text(alphabet="\"'\\\n,() `?<>^@xy.é中", max_size=20)
LANG = st.from_regex(r"[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8}){0,2}", fullmatch=True)
IRI = st.from_regex(r"https?://[a-z]{1,10}\.org/[A-Za-z0-9_/#,()%.~\-]{0,20}", fullmatch=True)
CURIE = st.from_regex(r"[a-z]{1,5}:[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
DATATYPE = CURIE | IRI
NAME_VALUE = (
    st.from_regex(r"[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,10}){0,3}", fullmatch=True)
    | CURIE
    | IRI
    | st.from_regex(r"[^\W\d]\w{0,8}", fullmatch=True)
)
NUMBER_VALUE = st.from_regex(r"[+\-]?(\d{1,6}(\.\d{0,4})?|\.\d{1,4})([eE][+\-]?\d{1,3})?", fullmatch=True)


@st.composite
def date_values(draw):
    year = draw(st.from_regex(r"-?\d{4}", fullmatch=True))
    value = f"{year}-{draw(st.integers(1, 12)):02d}"
    has_day = draw(st.booleans())
    if has_day:
        value += f"-{draw(st.integers(1, 28)):02d}"
        if draw(st.booleans()):
            value += f"T{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}"
            if draw(st.booleans()):
                value += f":{draw(st.integers(0, 59)):02d}"
    zone = draw(st.sampled_from(["", "Z", "-08:00", "+05:30"]))
    return value + zone


TEXT_ALPHABET = string.ascii_letters + string.digits + " ./-:;!&%$#+*<>=?@^éü中" + "\u00a0"


@st.composite
def text_values(draw):
    value = draw(st.text(alphabet=TEXT_ALPHABET, min_size=1, max_size=25))
    try:
        call = parse_action(f"f({value})")
    except ActionSyntaxError:
        assume(False)
    assume(len(call.args) == 1 and call.args[0].kind == "text" and call.args[0].value == value)
    return value


ARGS = st.one_of(
    st.builds(Arg, st.just("variable"), st.from_regex(r"\w{1,10}", fullmatch=True)),
    st.builds(Arg, st.just("name"), NAME_VALUE),
    st.builds(Arg, st.just("string"), ANY_TEXT),
    st.builds(lambda v, lang: Arg("lang_string", v, lang=lang), ANY_TEXT, LANG),
    st.builds(lambda v, dt: Arg("typed", v, datatype=dt), ANY_TEXT, DATATYPE),
    st.builds(Arg, st.just("number"), NUMBER_VALUE),
    st.builds(Arg, st.just("date"), date_values()),
    st.builds(Arg, st.just("operator"), st.sampled_from(OPERATORS)),
    st.builds(Arg, st.just("text"), text_values()),
)
CALLS = st.builds(lambda name, args: ActionCall(name, tuple(args)), IDENT, st.lists(ARGS, max_size=5))


@settings(max_examples=200, database=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(CALLS)
def test_render_parse_round_trip(call):
    text = render_action(call)
    back = parse_action(text)
    assert back.name == call.name
    assert kinds(back) == kinds(call)
    assert back == call
    # and inside an LLM reply
    assert extract_action(f"Thought 1: go.\nAction 1: {text}\nObservation 1: ...") == call


@settings(max_examples=200, database=None)
@given(st.lists(ANY_TEXT | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False), max_size=5), IDENT)
def test_render_plain_values_keep_values(values, name):
    call = parse_action(render_action(name, *values))
    assert len(call.args) == len(values)
    for arg, value in zip(call.args, values):
        if isinstance(value, str):
            # written as is, or else as a quoted string holding the value
            assert arg.raw == value or (arg.kind == "string" and arg.value == value)
        else:
            assert arg.kind == "number" and float(arg.value) == value


@settings(max_examples=200, database=None)
@given(st.lists(ANY_TEXT, max_size=4), IDENT)
def test_render_text_args_keep_values(values, name):
    """Any text can be rendered as a ``text`` Arg: it reads back with the same value (maybe as a string)."""
    call = parse_action(render_action(name, *[Arg("text", v) for v in values]))
    assert [a.value for a in call.args] == values
    assert {a.kind for a in call.args} <= {"text", "string"}


@settings(max_examples=300, database=None)
@given(st.lists(ANY_TEXT | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False), max_size=5), IDENT)
def test_call_from_values_is_the_rendered_call_read_back(values, name):
    """A call built from values (a tool call) is exactly what parse_action reads from its rendering: kinds, raw, spans."""
    built = call_from_values(name, *values)
    text = render_action(name, *values)
    parsed = parse_action(text)
    assert built == parsed and built.text == text == parsed.text
    assert (built.span, built.args_span, built.args_text) == (parsed.span, parsed.args_span, parsed.args_text)
    assert [(a.raw, a.span) for a in built.args] == [(a.raw, a.span) for a in parsed.args]
    assert kinds(built) == kinds(parsed)


def test_call_from_values_rejects_what_render_action_rejects():
    with pytest.raises(TermError, match="not an identifier"):
        call_from_values("functions.get_relation", "m.1")
    with pytest.raises(TermError):
        call_from_values("f", float("nan"))


FRAGMENTS = st.sampled_from(
    [
        "Action 3:", "Action:", "Thought 2:", "Observation 3:", "```", "```python\n", "`", "(", ")", ",", '"', "'",
        "\\", "\n", " ", "?x", "m.0abc", "add_fact", "f(", "^^", "xsd:gYear", "@en", "<http://x.org/a>", "1.0",
        "2011-01-01", ">=", "é", "\x00", "\u2028", "Action 3 :", "**", "and", ";",
    ]
)
FUZZ_TEXT = st.text(max_size=60) | st.lists(FRAGMENTS | st.text(max_size=3), max_size=25).map("".join)


@settings(max_examples=300, database=None)
@given(FUZZ_TEXT)
def test_parsers_raise_only_parse_errors(text):
    for fn in (parse_action, extract_action, parse_legacy_program, parse_argument):
        try:
            result = fn(text)
        except ParseError as e:
            assert isinstance(e.kind, str)
            assert e.position is None or 0 <= e.position <= len(text)
            continue
        if isinstance(result, ActionCall):
            assert text[result.span[0] : result.span[1]] == result.text
            for arg in result.args:
                assert text[arg.span[0] : arg.span[1]] == arg.raw
