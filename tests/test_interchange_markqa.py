"""The ``markqa`` conversion format: MarkQA programs → queries with the reference's rows.

The 45 programs of the Wikidata demo (``pyql/data/wikidata_questions.jsonl``)
are converted by pyql (parsed, never executed) and run on the demo KB; their
rows must be the answers that MarkQA's own implementation gives
(``tests/data/markqa/reference_sparql.jsonl``, checked by
``tests/test_wikidata_demo.py``): all of them. A program listed in ``KNOWN``
(none now) must fail with a MarkQA error naming its line, never give other rows.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pyoxigraph
import pytest

from pyql.errors import MarkQAProgramError
from pyql.interchange import convert
from pyql.interchange.markqa import program_to_query

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [json.loads(line) for line in (ROOT / "pyql" / "data" / "wikidata_questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]

#: Programs pyql does not convert yet, with why (the rest must give the reference's answers).
KNOWN: dict[str, str] = {}

_spec = importlib.util.spec_from_file_location("wikidata_demo_checks", ROOT / "tests" / "test_wikidata_demo.py")
assert _spec and _spec.loader
_checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_checks)


@pytest.fixture(scope="module")
def store() -> pyoxigraph.Store:
    s = pyoxigraph.Store()
    s.load(path=str(ROOT / "pyql" / "data" / "wikidata_demo.ttl"), format=pyoxigraph.RdfFormat.TURTLE)
    return s


def _rows(store: pyoxigraph.Store, sparql: str) -> list[dict[str, str]]:
    result = store.query(sparql)
    if isinstance(result, pyoxigraph.QueryBoolean):  # add_compare: MarkQA's "TRUE"/"FALSE" answer
        return [{"answer": "TRUE" if bool(result) else "FALSE"}]
    return _checks._oxigraph_rows(store, sparql)


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_a_markqa_program_gives_the_reference_answers(store: pyoxigraph.Store, question: dict) -> None:
    if question["id"] in KNOWN:
        with pytest.raises(MarkQAProgramError) as caught:
            program_to_query(question["markqa"])
        assert caught.value.line and caught.value.line > 1
        return
    query = program_to_query(question["markqa"])
    assert _checks._answers_match(question["answers"], _rows(store, query.sparql())), question["id"]


def test_every_function_is_converted_somewhere() -> None:
    """The converted programs (all but the known ones) call every MarkQA method the demo uses."""
    used = {c.func.attr for q in QUESTIONS if q["id"] not in KNOWN for c in _checks._calls(q["markqa"]) if hasattr(c.func, "attr")}
    assert {"add_quantity", "add_quantity_with_qualifier", "add_quantity_by_qualifier", "add_bind", "add_rank",
            "add_sub_query", "add_assignment", "add_start_time", "add_end_time", "add_time", "add_type_constrain",
            "add_count", "add_sum", "add_avg", "add_max", "add_min", "add_filter", "add_compare"} <= used


def test_convert_names_the_format_and_the_line() -> None:
    program = "a = PyQL()\na.add_quantity('Q64', 'P1082', 'pop', 2021)\na.add_bind(sub('pop', 'nothing'), 'x')\nprint(a.sparql)\n"
    with pytest.raises(MarkQAProgramError, match=r"line 3, column 1: add_bind"):
        convert(program, "markqa", "sparql")
    sparql = convert("a = PyQL()\na.add_quantity('Q64', 'P1082', 'pop', 2021)\nprint(a.sparql)\n", "markqa", "sparql")
    assert "PREFIX wikibase: <http://wikiba.se/ontology#>" in sparql and "wikibase:quantityAmount" in sparql.replace(
        "<http://wikiba.se/ontology#quantityAmount>", "wikibase:quantityAmount")


@pytest.mark.cli
@pytest.mark.parametrize(
    "program, where",
    [
        ("a = PyQL()\na.add_quantity('Q64', 'P1082', 'pop', 2021)\nimport os\nprint(a.sparql)\n", "line 3"),
        ("a = PyQL()\na.add_quantitty('Q64', 'P1082', 'pop')\nprint(a.sparql)\n", "line 2"),
        ("a = PyQL()\na.add_quantity('Q6x4', 'P1082', 'pop')\nprint(a.sparql)\n", "line 2"),
        ("a = PyQL()\na.add_bind(" + "abs(" * 200 + "'x'" + ")" * 200 + ", 'y')\nprint(a.sparql)\n", "line 2"),
    ],
    ids=["not-a-statement", "unknown-method", "bad-qid", "too-deep"],
)
def test_pyql_compile_reads_a_markqa_program_and_refuses_bad_ones(tmp_path: Path, program: str, where: str) -> None:
    path = tmp_path / "p.py"
    path.write_text(program, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pyql.cli", "compile", str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert where in run.stderr and "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


@pytest.mark.cli
def test_pyql_compile_prints_the_sparql_of_a_markqa_program(tmp_path: Path) -> None:
    path = tmp_path / "growth.py"
    path.write_text(QUESTIONS[3]["markqa"], encoding="utf-8")  # w04: the growth between two census years
    run = subprocess.run([sys.executable, "-m", "pyql.cli", "compile", str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == program_to_query(QUESTIONS[3]["markqa"]).sparql()
