"""The ``legacy`` conversion format (pyql/interchange/legacy.py): WebQSP/QueryAgent PyQL programs.

All 1,639 WebQSP programs are converted in ``tests/test_legacy_webqsp.py``.
"""

from __future__ import annotations

import pytest

from pyql.errors import LegacySyntaxError
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
