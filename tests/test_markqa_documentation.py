"""MarkQA's programs as their authors write them: the whole programs of MarkQA's own PyQL documentation.

``tests/data/markqa/documentation_programs.json`` holds every program of the
PyQL documentation repository (its introduction, quick start, more examples
and API document) and the commented-out examples at the end of MarkQA's
``baselines/utils/PyQL_parser.py``, each with its repository, commit, file
and section (``tests/data/markqa/README.md``). Most of them print nothing:
MarkQA's evaluation appends ``print(<last object>.sparql)`` before it runs a
program, and pyql reads them the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pyql.cli import main
from pyql.errors import MarkQAProgramError
from pyql.interchange import convert
from pyql.interchange.markqa import program_to_query
from pyql.interchange.markqa_program import is_markqa_program, parse_markqa_program, result_object

DATA = Path(__file__).parent / "data" / "markqa"
PROGRAMS = json.loads((DATA / "documentation_programs.json").read_text(encoding="utf-8"))
QUESTIONS = [json.loads(line) for line in (Path(__file__).parents[1] / "pyql" / "data" / "wikidata_questions.jsonl").read_text().splitlines() if line.strip()]
#: The one program written with labels where MarkQA takes QIDs (a sketch in a comment of PyQL_parser.py).
WITH_LABELS = "commented-out example at line 977"
IDS = [f"{p['source']['path']}:{p['source']['section']}" for p in PROGRAMS]


def _markqa_appends_print(program: str) -> str:
    """MarkQA's evaluation (``eval_topk_prediction_final.py``, ``execute_normed_expressions``), re-expressed: when the
    last token is no print, print the object whose name starts with the largest letter (its objects are a, b, c ...)."""
    tokens = " ".join(line.split("#")[0] for line in program.splitlines()).split()  # its programs have no comments
    if "print" in tokens[-1]:
        return program
    last = chr(max(ord(token[0]) for token in tokens))
    return program + f"\nprint({last}.sparql)\n"


def test_the_fixture_is_the_documentation_as_described() -> None:
    sources = {(p["source"]["repository"], p["source"]["path"]) for p in PROGRAMS}
    assert sources == {
        ("TurquoiseDM/pyql_document", "README.md"), ("TurquoiseDM/pyql_document", "quick-start.md"),
        ("TurquoiseDM/pyql_document", "more-examples.md"), ("TurquoiseDM/pyql_document", "api-document.md"),
        ("cdhx/MarkQA", "baselines/utils/PyQL_parser.py"),
    }
    assert len(PROGRAMS) == 33 and sum("print(" not in p["program"] for p in PROGRAMS) == 29


@pytest.mark.parametrize("item", PROGRAMS, ids=IDS)
def test_a_documentation_program_converts_as_written(item: dict) -> None:
    program = item["program"]
    if item["source"]["section"] == WITH_LABELS:
        with pytest.raises(MarkQAProgramError, match=r"line 2, column 22: add_type_constrain\(\) argument type_id: "
                                                     r"expected a QID string such as 'Q5', found the string 'feature film'"):
            convert(program, "markqa", "sparql")
        return
    sparql = convert(program, "markqa", "sparql")
    actions = convert(program, "markqa", "actions")
    assert "WHERE {" in sparql and actions.strip()
    assert is_markqa_program(program)  # so `pyql compile FILE` reads it as MarkQA


@pytest.mark.parametrize("item", [p for p in PROGRAMS if p["source"]["section"] != WITH_LABELS], ids=[i for i in IDS if WITH_LABELS not in i])
def test_a_program_without_print_gives_what_markqa_prints(item: dict) -> None:
    """The query of a program is the one MarkQA's evaluation prints for it."""
    program = item["program"]
    as_run = _markqa_appends_print(program)
    assert program_to_query(program) == program_to_query(as_run)
    printed = re.search(r"print\((\w+)\.sparql\)", as_run).group(1)  # type: ignore[union-attr]
    assert result_object(parse_markqa_program(program)) == printed


def test_the_last_object_of_the_sub_query_example_is_the_query() -> None:
    item = next(p for p in PROGRAMS if p["source"]["section"] == "add_sub_query")
    query = program_to_query(item["program"])
    assert str(query.answer) == "?x6" and query.sparql().count("(AVG(") == 2  # c, holding a and b


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_a_demo_program_without_its_print_line_is_the_same_query(question: dict) -> None:
    """Programs in MarkQA's question shapes (the 45 demo programs), their print line taken away."""
    program = question["markqa"]
    lines = program.rstrip().splitlines()
    assert re.fullmatch(r"print\((\w+)\.sparql\)", lines[-1])
    bare = "\n".join(lines[:-1]) + "\n"
    printed = lines[-1][len("print("):-len(".sparql)")]
    made = re.findall(r"^(\w+)\s*=\s*PyQL\(\)", program, re.M)
    if printed == made[-1]:
        assert program_to_query(bare) == program_to_query(program)
    else:  # the printed object is not the last one made: without the print the answer is not the last object's
        with pytest.raises(MarkQAProgramError, match="prints no query"):
            program_to_query(bare)


@pytest.mark.parametrize(
    "program, line, names",
    [
        ("a = PyQL()\na.add_time('Q1', 't')\nb = PyQL()\nb.add_time('Q2', 'u')\n", 4, ("b", "a")),
        ("a = PyQL()\na.add_time('Q1', 't')\nb = PyQL()\nb.add_time('Q2', 'u')\nc = PyQL()\nc.add_sub_query(a)\n", 6, ("c", "b")),
        ("a = PyQL()\nb = PyQL()\nb.add_time('Q2', 'u')\na.add_sub_query(b)\n", 4, ("b", "a")),
    ],
    ids=["two-apart", "one-left-out", "last-inside-another"],
)
def test_objects_that_leave_the_answer_open_are_named(program: str, line: int, names: tuple[str, str]) -> None:
    last, other = names
    with pytest.raises(MarkQAProgramError) as info:
        program_to_query(program)
    message = str(info.value)
    assert f"line {line}" in message and f"last PyQL object {last} does not hold {other}" in message
    assert "print(x.sparql)" in message and "Traceback" not in message


def test_a_nested_sub_query_counts_as_held() -> None:
    program = ("a = PyQL()\na.add_time('Q1', 't')\nb = PyQL()\nb.add_sub_query(a)\nb.add_bind(year('t'), 'y')\n"
               "c = PyQL()\nc.add_sub_query(b)\nc.add_bind(add('y', 1), 'z')\n")
    assert str(program_to_query(program).answer) == "?z"


def test_pyql_compile_reads_a_documentation_program_without_print(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    item = next(p for p in PROGRAMS if p["source"]["section"] == "add_rank")
    path = tmp_path / "rank.py"
    path.write_text(item["program"], encoding="utf-8")
    assert main(["compile", str(path)]) == 0
    assert capsys.readouterr().out == program_to_query(item["program"]).sparql()


def test_a_legacy_program_is_still_legacy_for_pyql_compile() -> None:
    legacy = "a=PyQL()\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\na.set_answer('x0')\n"
    assert not is_markqa_program(legacy)
    assert is_markqa_program("a=PyQL()\na.add_bind(sub('x1', 'x2'), 'x3')\n")
