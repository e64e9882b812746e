"""``pyql convert`` and :mod:`pyql.interchange`: the registry, the Python API, JSON Lines, bad input.

Each format has its own test (``tests/test_interchange_<format>.py``);
this file tests what every format goes through.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyql.errors import ConversionError, PyQLError, UnknownFormatError
from pyql.interchange import convert, convert_jsonl, formats, readers, registry, writers
from pyql.interchange.legacy import program_to_actions, program_to_query
from pyql.lines import split_lines
from pyql.builder.profiles import Profile
from pyql.builder.query import Query
from pyql.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = "a=PyQL()\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\na.set_answer('x0')\n"
ACTIONS = "add_fact(m.03_r3, location.country.languages_spoken, ?x0)\nset_answer(?x0)\n"


def pyql(*args: str, stdin: str | bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "pyql.cli", *args], input=data, capture_output=True, cwd=ROOT, timeout=300
    )


# -- the registry ---------------------------------------------------------------


def test_the_formats_of_today_are_found_in_their_modules() -> None:
    assert readers() == ("actions", "agentbench", "legacy", "markqa", "sexpr", "sparql")
    assert writers() == ("actions", "sexpr", "sparql")
    assert {name: f.module for name, f in formats().items()} == {
        "actions": "pyql.interchange.actions",
        "agentbench": "pyql.interchange.agentbench",
        "legacy": "pyql.interchange.legacy",
        "markqa": "pyql.interchange.markqa",
        "sexpr": "pyql.interchange.sexpr",
        "sparql": "pyql.interchange.sparql",
    }
    assert all(f.summary for f in formats().values())
    assert registry.direct_pairs() == (("legacy", "actions"),)


def test_a_format_registers_with_a_decorator_and_converts_both_ways() -> None:
    @registry.reader("test-words", "space-separated triples")
    def read_words(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
        head, relation, tail = text.split()
        return Query(profile).add_fact(entities.get(head, head), relation, tail)

    @registry.writer("test-words", "space-separated triples")
    def write_words(query: Query) -> str:
        return " ".join(query.actions())

    try:
        assert "test-words" in readers() and "test-words" in writers()
        assert convert("Jamaica r.s.t ?x", "test-words", "actions", {"Jamaica": "m.03_r3"}) == "add_fact(m.03_r3, r.s.t, ?x)\n"
        assert convert(ACTIONS, "actions", "test-words") == "add_fact(m.03_r3, location.country.languages_spoken, ?x0) set_answer(?x0)"
        with pytest.raises(ConversionError, match="already has a reader"):
            registry.reader("test-words", "again")(read_words)
    finally:
        registry._FORMATS.pop("test-words")
    assert "test-words" not in readers()


def test_unknown_and_one_way_formats_are_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownFormatError, match="unknown conversion format 'kopl'; the formats are actions, agentbench, legacy, markqa, sexpr, sparql"):
        convert("(JOIN r m.0)", "kopl", "sparql")
    with pytest.raises(UnknownFormatError, match="can be read but not written; writable formats: actions, sexpr, sparql"):
        convert(PROGRAM, "markqa", "markqa")
    with pytest.raises(UnknownFormatError, match="can be read but not written; writable formats: actions, sexpr, sparql"):
        convert(PROGRAM, "legacy", "legacy")
    with pytest.raises(UnknownFormatError):
        convert_jsonl("", "legacy", "kopl")  # at once, before any line
    with pytest.raises(PyQLError, match="unknown KB profile"):
        convert(PROGRAM, profile="dbpedia")


# -- the Python API -------------------------------------------------------------


def test_convert_is_what_compile_and_actions_were() -> None:
    assert convert(PROGRAM) == program_to_query(PROGRAM).sparql()
    wikidata = "a=PyQL()\na.add_fact('Q64', 'P1082', 'x0')\n"
    assert convert(wikidata, source="legacy", target="sparql", profile="wikidata") == program_to_query(wikidata, "wikidata").sparql()
    assert convert(PROGRAM, "legacy", "actions") == "".join(f"{line}\n" for line in program_to_actions(PROGRAM))
    assert convert(PROGRAM, "legacy", "actions") == ACTIONS
    assert convert(ACTIONS, "actions", "sparql") == convert(PROGRAM, "legacy", "sparql")
    assert convert("null", "legacy", "actions") == ""


def test_input_nested_too_deeply_is_one_conversion_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def too_deep(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
        raise RecursionError

    monkeypatch.setitem(registry._FORMATS, "actions", replace(registry._FORMATS["actions"], read=too_deep))
    with pytest.raises(ConversionError, match="the actions input is nested too deeply to convert"):
        convert("x", "actions", "sparql")


# -- JSON Lines -----------------------------------------------------------------


def _records(data: str | bytes, source: str = "actions", target: str = "actions") -> list[dict[str, Any]]:
    return [json.loads(line) for line in convert_jsonl(data, source, target)]


def test_every_input_line_gets_exactly_one_output_line_in_order() -> None:
    lines = [
        json.dumps({"id": "a", "input": ACTIONS}),
        json.dumps({"id": 2, "input": "add_fact(?x, r.s.t)"}),
        "not json",
        "",
        json.dumps([1, 2]),
        json.dumps({"id": {"k": [1]}, "input": None}),
        json.dumps({"id": 7, "input": "set_answer(?x)", "entities": ["a"]}),
        json.dumps({"input": "add_max(?x)"}),
        json.dumps({"id": 9, "input": "add_fact(m.0a, r.s.t, ?y)", "entities": {"Jamaica": "m.03_r3"}}),
    ]
    records = _records("\r\n".join(lines) + "\n")
    assert [r.get("id") for r in records] == ["a", 2, None, None, None, {"k": [1]}, 7, None, 9]
    assert records[0] == {"id": "a", "output": ACTIONS}
    assert records[8] == {"id": 9, "output": "add_fact(m.0a, r.s.t, ?y)\n"}
    kinds = [r["error"]["kind"] if "error" in r else None for r in records]
    assert kinds == [None, "wrong_arity", "bad_item", "bad_item", "bad_item", "bad_item", "bad_item", "bad_query", None]
    messages = [r["error"]["message"] for r in records if "error" in r]
    assert messages[1] == "line 3: not JSON (Expecting value at column 1)"
    assert messages[2].startswith("line 4 is empty")
    assert messages[3].startswith("line 5: expected an object")
    assert messages[4] == 'line 6: "input" must be a string (the text to convert); found no input'
    assert messages[5].startswith('line 7: "entities" must map entity names to ids')
    assert all(set(r) in ({"id", "output"}, {"id", "error"}) for r in records)


def test_a_line_that_is_not_utf8_is_one_error_and_the_others_convert() -> None:
    data = b'\xef\xbb\xbf{"id": 1, "input": "add_max(?x)"}\n{"id": 2, "input": "caf\xe9"}\n{"id": 3, "input": ""}\n'
    records = _records(data)
    assert records[1] == {
        "id": None,
        "error": {"kind": "bad_item", "message": "line 2 is not UTF-8: byte 0xe9 at column 24 (invalid continuation byte)"},
    }
    assert records[0]["error"]["kind"] == "bad_query" and records[2] == {"id": 3, "output": ""}


def test_output_lines_are_json_that_no_splitter_breaks() -> None:
    data = json.dumps({"id": "\u2028\ud800", "input": 'add_fact(m.0a, r.s.t, "x\u2028y")'}, ensure_ascii=False)
    (line,) = convert_jsonl(data, "actions", "actions")
    assert "\u2028" not in line and len(line.splitlines()) == 1
    assert json.loads(line) == {"id": "\u2028\ud800", "output": convert('add_fact(m.0a, r.s.t, "x\u2028y")', "actions", "actions")}
    line.encode("utf-8")


@pytest.mark.parametrize(
    "line, kind",
    [
        ("[" * 100_000 + "]" * 100_000, "bad_item"),  # JSON nested past what the decoder reads
        ("1" * 5000, "bad_item"),  # an integer too long to convert
        (json.dumps({"id": 1, "input": "add_fact(" + "(" * 10_000 + ")" * 10_000 + ")"}), "parse_error"),  # deeper than 64
        (json.dumps({"id": 1, "input": "add_fact(" + "(" * 10_000}), "parse_error"),  # deeper than 64, unclosed
        (json.dumps({"id": 1, "input": "x" * 1_048_576}), "no_action"),
        (json.dumps({"id": 1, "input": 'add_filter(?x, >, "' + "9" * 1_048_576 + '")'}), None),  # converts
        (json.dumps({"id": 1, "input": "a=PyQL()\na.add_fact('m.0', 'r" + "s" * 1_048_576}), "legacy_syntax"),
    ],
    ids=["deep-json", "long-int", "nested-parens", "unclosed-parens", "1mb-prose", "1mb-literal", "1mb-truncated-legacy"],
)
def test_bad_input_is_one_error_object_in_bounded_time(line: str, kind: str | None) -> None:
    source = "legacy" if "PyQL()" in line else "actions"
    started = time.perf_counter()
    records = _records(line + "\n" + json.dumps({"id": "next", "input": ""}) + "\n", source, "sparql")
    assert time.perf_counter() - started < 60
    assert len(records) == 2 and records[1]["id"] == "next"
    if kind is None:
        assert records[0]["output"].count("9" * 1_048_576) == 1
        return
    error = records[0]["error"]
    assert error["kind"] == kind
    assert len(error["message"]) < 4100 and "\n" not in error["message"]


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.builds(lambda t: json.dumps({"id": 0, "input": t}), st.text(max_size=40))), max_size=6))
def test_any_text_gives_one_json_line_per_line(lines: list[str]) -> None:
    text = "\n".join(line.replace("\r", "").replace("\n", "") for line in lines)
    records = list(convert_jsonl(text, "actions", "sparql"))
    assert len(records) == len(split_lines(text))
    for record in records:
        value = json.loads(record)
        assert set(value) in ({"id", "output"}, {"id", "error"})


# -- the command ----------------------------------------------------------------


@pytest.mark.cli
def test_convert_one_item_prints_its_output(tmp_path: Path) -> None:
    program = tmp_path / "p.pyql"
    program.write_text(PROGRAM, encoding="utf-8")
    done = pyql("convert", "--from", "legacy", "--to", "actions", str(program))
    assert (done.returncode, done.stdout.decode(), done.stderr) == (0, ACTIONS, b"")
    compiled = pyql("convert", "--from", "actions", "--to", "sparql", "--profile", "wikidata", stdin="add_fact(Q64, P1082, ?x)\n")
    assert compiled.returncode == 0 and "  wd:Q64 wdt:P1082 ?x .\n" in compiled.stdout.decode()
    assert pyql("compile", str(program)).stdout == pyql("convert", "--from", "legacy", "--to", "sparql", str(program)).stdout
    assert pyql("actions", str(program)).stdout.decode() == ACTIONS


@pytest.mark.cli
@pytest.mark.parametrize(
    "args, stdin, message",
    [
        (["--from", "actions", "--to", "sparql"], "add_fact(?x, r.s.t)\n", "pyql: line 1: add_fact(head, relation, tail) should have 3"),
        (["--from", "legacy", "--to", "sparql"], "a=PyQL()\na.add_fact('m.0', \n", "pyql: legacy PyQL program, line 2"),
        (["--from", "actions", "--to", "sparql"], b"add_max(?x\xff)\n", "is not UTF-8: byte 0xff at line 1, column 11"),
        (["--from", "sexp", "--to", "actions"], "", "argument --from: invalid choice: 'sexp' (choose from 'actions', 'agentbench', 'legacy', 'markqa', 'sexpr', 'sparql')"),
        (["--from", "actions", "--to", "legacy"], "", "argument --to: invalid choice: 'legacy' (choose from 'actions', 'sexpr', 'sparql')"),
        (["--from", "actions", "--to", "sparql", "/nonexistent/x"], "", "input file not found: /nonexistent/x"),
        (["--from", "actions", "--to", "sparql", "--jsonl", "/nonexistent/x"], "", "input file not found: /nonexistent/x"),
    ],
)
def test_convert_one_item_fails_with_one_line_and_status_2(args: list[str], stdin: str | bytes, message: str) -> None:
    done = pyql("convert", *args, stdin=stdin)
    err = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.cli
def test_convert_jsonl_exits_0_once_read_with_one_line_per_line() -> None:
    items = b'{"id": 1, "input": "a=PyQL()\\na.set_answer(\'x0\')"}\nnope\n{"id": 3, "input": "a=PyQL(\xff"}\n'
    done = pyql("convert", "--from", "legacy", "--to", "actions", "--jsonl", "-", stdin=items)
    assert done.returncode == 0 and done.stderr == b""
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert records[0] == {"id": 1, "output": "set_answer(?x0)\n"}
    assert [r["error"]["kind"] for r in records[1:]] == ["bad_item", "bad_item"]
    assert "line 3 is not UTF-8" in records[2]["error"]["message"]


@pytest.mark.cli
def test_convert_help_lists_the_registered_formats() -> None:
    done = pyql("convert", "--help")
    text = done.stdout.decode()
    assert done.returncode == 0
    for name, fmt in formats().items():
        assert f"  {name} (" in text and fmt.summary in text


# -- the page docs/convert.md: its examples run ---------------------------------

DOC = ROOT / "docs" / "convert.md"
_BLOCK_RE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _doc_blocks(kind: str) -> list[str]:
    return [m.group(2) for m in _BLOCK_RE.finditer(DOC.read_text(encoding="utf-8")) if m.group(1) == kind]


def test_the_pages_python_examples_are_doctests() -> None:
    body = "\n".join(_doc_blocks("pycon"))  # one session: later blocks use what earlier ones imported
    test = doctest.DocTestParser().get_doctest(body, {}, "docs/convert.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.mark.cli
@pytest.mark.parametrize("body", _doc_blocks("console"))
def test_the_pages_commands_print_what_it_shows(body: str, tmp_path: Path) -> None:
    command, _, shown = body.partition("\n  | ")
    pipe, _, shown = shown.partition("\n")
    script = tmp_path / "pyql"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pyql.cli "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT)}
    line = command.removeprefix("$ ").removesuffix(" \\") + " | " + pipe
    done = subprocess.run(["bash", "-c", "set -o pipefail\n" + line], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
    assert done.returncode == 0 and shown.strip(), done.stderr
    assert doctest.OutputChecker().check_output(shown, done.stdout, _FLAGS), done.stdout


@pytest.mark.cli
def test_a_converted_argmax_runs_with_the_full_action_set_and_not_with_the_default_one() -> None:
    """``pyql convert --to actions`` writes GrailQA's ARGMAX as ``add_min(?v, *, 0, 1, true)``: the full SPARQL
    set (``--action-set sparql-all``) runs it and keeps the three storms tied at one death; QueryAgent's
    default set (``add_min(min_var)``) answers it with ``wrong_arity`` and undoes it."""
    chain = pyql("convert", "--from", "sexpr", "--to", "actions",
                 stdin="(ARGMIN meteorology.tropical_cyclone meteorology.tropical_cyclone.direct_fatalities)").stdout.decode()
    assert "add_min(?x1, *, 0, 1, true)" in chain
    full = pyql("run", "--kb", "demo", "--action-set", "sparql-all", "--actions", "-", "--json", stdin=chain + "execute()\n")
    assert full.returncode == 0, full.stderr
    answers = json.loads(full.stdout.decode().splitlines()[-1])["answers"]  # one line per step, then the result
    assert sorted(a["value"] for a in answers) == ["m.0107f3vm", "m.0107j2dw", "m.0bhw9m"]
    default = pyql("run", "--kb", "demo", "--actions", "-", stdin=chain + "execute()\n")
    assert default.returncode != 0 and b"wrong_arity" in default.stdout


N = 10_000
MB = 1_048_576
#: Per input format: one item that converts, then the issue's bad input in that format's own syntax.
BAD_INPUT: dict[str, tuple[str, list[str]]] = {
    "sexpr": ("(JOIN a.b.c m.0a)", [
        "(AND a.b (JOIN c.d m.0a)", "(ARGMAX (AND a.b (JOIN c.d", "(EXISTS (JOIN a.b.c m.0a))", "(M a.b.c)",
        "(" * N + ")" * N, "(JOIN a.b.c " + "x" * MB, "(" * 3 + "a" * MB,
    ]),
    "sparql": ("PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?x WHERE { ns:m.0a ns:a.b.c ?x . }", [
        "SELECT DISTINCT ?x WHERE { ?x ?p ?o .", "SELECT DISTINCT ?x WHERE { ?x <a> ?y } ORDER BY", "CONSTRUCT { ?s ?p ?o } WHERE { }",
        "SELECT ?x WHERE { FILTER(" + "(" * N + "?x" + ")" * N + ") }", "SELECT ?x WHERE " + "{" * N + "}" * N,
        "SELECT ?x WHERE { ?x <a> \"" + "x" * MB,
    ]),
    "actions": ("add_fact(m.0a, a.b.c, ?x)\nset_answer(?x)", [
        "add_fact(?x, a.b.c, ", "get_entities_of_type(a.b)", "add_fact(" + "(" * N + ")" * N + ")",
        "add_union(?x, " + "query(add_union(?x, " * N + ")" * (2 * N + 1), "x" * MB,
    ]),
    "legacy": ("a=PyQL()\na.add_fact('m.0a', 'a.b.c', 'x')\na.set_answer('x')", [
        "a=PyQL()\na.add_fact('m.0a', ", "a=PyQL()\na.frobnicate('x')", "a=PyQL()\na.add_fact(" + "(" * N + ")" * N + ")",
        "a=PyQL()\na.add_fact('m.0', 'r" + "s" * MB,
    ]),
    "markqa": ("a = PyQL()\na.add_quantity('Q64', 'P1082', 'pop', 2021)\nprint(a.sparql)", [
        "a = PyQL()\na.add_quantity('Q64', ", "a = PyQL()\na.frobnicate('x')\nprint(a.sparql)",
        "a = PyQL()\na.add_fact(" + "[" * N + "]" * N + ")", "a = PyQL()\na.add_fact(" + "(" * N + ")" * N + ")",
        "a = PyQL()\na.add_quantity('Q64', 'P" + "1" * MB,
    ]),
    "agentbench": ("Action: get_neighbors(m.0a, a.b.c)\nFinal Answer: #0", [
        "Action: get_neighbors(m.0a, a.b.c", "Action: get_entities_of_type(a.b)\nFinal Answer: #0",
        "Action: get_relations(" + "(" * N + ")" * N + ")\nFinal Answer: #0", "Action: get_relations(" + "x" * MB + ")\nFinal Answer: #0",
    ]),
}


@pytest.mark.parametrize("source", sorted(BAD_INPUT))
def test_the_issues_bad_input_in_every_format_is_one_short_error_each(source: str) -> None:
    """Unbalanced or truncated input, unknown heads or functions, 10,000 nested parentheses and a 1 MB line,
    each in the format's own syntax: one error object of at most a few thousand characters each, in
    order, the good items around them converted, no traceback, bounded time (a few seconds; 60 allowed
    on a loaded machine; 10,000 nested ``query(`` took 25 s before lines nested past 64 were refused)."""
    good, bad = BAD_INPUT[source]
    items = [{"id": "first", "input": good}] + [{"id": n, "input": text} for n, text in enumerate(bad)] + [{"id": "last", "input": good}]
    started = time.perf_counter()
    records = _records("\n".join(json.dumps(item) for item in items) + "\n", source, "actions")
    assert time.perf_counter() - started < 60
    assert [r["id"] for r in records] == [item["id"] for item in items]
    assert "output" in records[0] and records[0] == {**records[-1], "id": "first"}
    for record in records[1:-1]:
        error = record["error"]
        assert error["kind"] and len(error["message"]) < 4100 and "\n" not in error["message"], record
        assert "Traceback" not in error["message"]


@pytest.mark.cli
@pytest.mark.parametrize(
    "source, text",
    [("agentbench", "Action: get_relations(" + "x" * MB + ")\nFinal Answer: #0\n"),
     ("actions", "add_union(?x, " + "query(add_union(?x, " * N + ")" * (2 * N + 1) + "\n"),
     ("sexpr", "(" * N + ")" * N + "\n")],
    ids=["1mb-agentbench-operand", "nested-queries", "nested-sexpr"],
)
def test_one_item_of_bad_input_is_one_short_stderr_line(source: str, text: str) -> None:
    done = pyql("convert", "--from", source, "--to", "actions", stdin=text)
    err = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b"" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and len(err) < 4200


# -- one large item: memory linear in its size (issue 35, item 7) -------------------


def _flat_and(size: int) -> str:
    return "(AND " + " ".join(f"(JOIN r.a{i} m.x{i})" for i in range(size)) + ")"


def test_a_flat_and_of_thousands_converts_in_memory_linear_in_its_size() -> None:
    """Before, the SPARQL output kept the text of every prefix of the query and every block its parts:
    4,000 conjuncts took about 700 MB (6,400: 1.9 GB; 40,000 was killed at 19 GB). Now one text and one
    block: a few MB (``benchmarks/bench_convert.py --flat``; 1 MB of input, 40,000 conjuncts, in 118 MB)."""
    import tracemalloc

    text = _flat_and(4000)
    tracemalloc.start()
    try:
        sparql = convert(text, "sexpr", "sparql")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sparql.count("<http://rdf.freebase.com/ns/r.a") == 4000
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MB"


def test_a_query_built_step_by_step_writes_each_part_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text of the query before a step starts the text after it, while that query lives (an environment's
    history); a chain whose earlier queries are gone is written once, at the end."""
    from pyql.builder import compiler
    from pyql.builder.kinds.fact import Fact

    written: list[Any] = []
    rule = compiler.TEXT_RULES[Fact]

    def counting(part: Any, profile: Any) -> str:
        written.append(part)
        return rule(part, profile)

    monkeypatch.setitem(compiler.TEXT_RULES, Fact, counting)
    kept = [Query()]
    for i in range(30):
        kept.append(kept[-1].add_fact("?x", f"r.a{i}", f"m.x{i}"))
        kept[-1].sparql()
    assert len(written) == 30  # each step wrote its own part only
    written.clear()
    query = Query()
    for i in range(30):
        query = query.add_fact("?x", f"r.b{i}", f"m.y{i}")
    assert query.sparql() == query.sparql() and len(written) == 30


def _convert_help_formats() -> tuple[list[str], list[str]]:
    """The formats ``pyql --help`` names for ``convert``: (read, written)."""
    text = " ".join(build_parser().format_help().split())
    found = re.search(r"convert a query between formats \(read: ([^;]*); write: ([^)]*)\)", text)
    assert found, text
    return found.group(1).split(", "), found.group(2).split(", ")


def test_pyql_help_names_every_registered_format(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _convert_help_formats() == (list(readers()), list(writers()))
    assert {"markqa", "sexpr", "agentbench"} <= set(readers())
    registry.formats()  # every module registered first
    monkeypatch.setitem(registry._FORMATS, "toyformat", registry.Format("toyformat", "a toy", write=lambda query: ""))
    read, written = _convert_help_formats()
    assert "toyformat" in written and "toyformat" not in read
