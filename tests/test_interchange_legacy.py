"""The ``legacy`` conversion format (pyql/interchange/legacy.py): WebQSP/QueryAgent PyQL programs.

All 1,639 WebQSP programs are converted in ``tests/test_legacy_webqsp.py``.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from pyql.cli import main
from pyql.errors import ArityError, InvalidActionError, LegacySyntaxError, QueryError
from pyql.interchange import convert
from pyql.interchange.legacy import legacy_to_actions, program_to_query, read_legacy
from pyql.builder.profiles import FREEBASE

# WebQTest-85's program: a time constraint with typed dates, written as the dataset writes them.
PROGRAM = """a=PyQL()
a.add_filter('x0', '!=', 'm.01n4w')
a.add_fact('m.01n4w', 'government.political_district.representatives', 'x1')
a.add_time_constrain('x1', 'government.government_position_held.from', 'government.government_position_held.to', '"2015-08-10"^^xsd:dateTime', '"2015-08-10"^^xsd:dateTime')
a.add_fact('x1', 'government.government_position_held.office_holder', 'x0')
a.set_answer('x0')
"""


def test_reading_builds_the_programs_query() -> None:
    query = read_legacy(PROGRAM, {}, FREEBASE)
    assert query == program_to_query(PROGRAM)
    assert convert(PROGRAM, "legacy", "sparql") == query.sparql()
    assert "2015-08-10" in query.sparql()


def test_action_lines_keep_the_programs_spelling() -> None:
    lines = legacy_to_actions(PROGRAM, {}, FREEBASE)
    assert convert(PROGRAM, "legacy", "actions") == lines
    assert lines.splitlines()[2] == (
        "add_time_constrain(?x1, government.government_position_held.from, government.government_position_held.to, "
        '"2015-08-10"^^xsd:dateTime, "2015-08-10"^^xsd:dateTime)'
    )
    # ... and read back as action lines they give the same query.
    assert convert(lines, "actions", "sparql") == convert(PROGRAM, "legacy", "sparql")


@pytest.mark.parametrize("program", ["null", "", "a=PyQL()\n"])
def test_a_program_without_steps_is_the_empty_query(program: str) -> None:
    assert read_legacy(program, {}, FREEBASE).steps == ()
    assert convert(program, "legacy", "actions") == ""


def test_a_truncated_program_names_its_line_and_column() -> None:
    truncated = "a=PyQL()\na.add_filter('x0', '!=', 'm.01n4w')\na.add_fact('m.01n4w', 'gov"
    with pytest.raises(LegacySyntaxError, match=r"^legacy PyQL program, line 3, column 23: ") as caught:
        convert(truncated, "legacy", "sparql")
    assert caught.value.line == 3


ARITY = "add_fact(head, relation, tail) should have 3 parameters. You have 2 parameters."


@pytest.mark.parametrize("target", ["sparql", "actions"])
def test_a_call_the_query_refuses_names_its_line_and_column(target: str) -> None:
    program = "a=PyQL()\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\n  a.add_fact('m.03_r3', 'location.country.capital')\n"
    with pytest.raises(ArityError, match=rf"^legacy PyQL program, line 3, column 3: {re.escape(ARITY)}$"):
        convert(program, "legacy", target)
    unknown = "a=PyQL(); a.frobnicate('x0')"
    with pytest.raises(InvalidActionError, match=r"^legacy PyQL program, line 1, column 11: 'frobnicate' is not"):
        convert(unknown, "legacy", target)


def test_a_step_the_query_refuses_names_its_line_and_column() -> None:
    program = "a=PyQL()\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\na.add_max('x9')\n"
    with pytest.raises(QueryError, match=r"^legacy PyQL program, line 3, column 1: add_max\(\?x9\): "):
        program_to_query(program)


def test_pyql_compile_names_the_line_of_a_legacy_arity_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pyql"
    bad.write_text("a=PyQL()\na.add_fact('m.03_r3', 'location.country.capital')\n")
    out = io.StringIO()
    assert main(["compile", str(bad)], out=out) == 2
    assert out.getvalue() == f"pyql: legacy PyQL program, line 2, column 1: {ARITY}\n"
