"""Readi for TableQA with a scripted LLM."""

from __future__ import annotations

import pytest

from agent.llm.scripted import ScriptedLLM
from agent.methods.readi_table import (
    TablePath,
    TablePathError,
    TableReadi,
    parse_table_path,
)
from pyql_sql import Table

TABLE = Table.from_rows(
    ["Name in English", "Name in Turkish", "Depth"],
    [["Lake Van", "Van Gölü", "171 m"], ["Lake Tuz", "Tuz Gölü", "2 m"], ["Lake Palas Tuzla", "Palas Tuzla Gölü", "15 m"]],
)
QUESTION = "which is deeper, lake tuz or lake palas tuzla?"
GOOD = 'Chosen Headers: ["Name in English", "Depth"]\nConstrains: "Name in English": ["Lake Tuz", "Lake Palas Tuzla"]'


def test_parse_and_render_round_trip() -> None:
    path = parse_table_path("Thought: ...\n" + GOOD)
    assert path == TablePath(("Name in English", "Depth"), (("Name in English", ("Lake Tuz", "Lake Palas Tuzla")),))
    assert parse_table_path(path.render()) == path
    with pytest.raises(TablePathError):
        parse_table_path("I would pick the name column.")


def test_instantiates_at_once_and_answers_from_items() -> None:
    llm = ScriptedLLM([GOOD, "Thought: 15 m > 2 m.\nAnswer: ['Lake Palas Tuzla']"])
    result = TableReadi(llm).run(TABLE, QUESTION)
    assert result.answers == [{"value": "Lake Palas Tuzla", "label": None}]
    assert result.llm_calls == 2 and result.extra["edits"] == 0 and result.extra["selected_rows"] == 2
    qa = llm.prompts[1]
    assert "item 1: (Name in English, Lake Tuz); (Depth, 2 m)" in qa and "Lake Van" not in qa


def test_unknown_header_triggers_an_edit_listing_the_headers() -> None:
    llm = ScriptedLLM(['Chosen Headers: ["Lake", "Depth"]\nConstrains: "Lake": ["Lake Tuz"]', GOOD, "Answer: ['Lake Palas Tuzla']"])
    result = TableReadi(llm).run(TABLE, QUESTION)
    assert "Header ['Lake'] not in candidate Headers" in llm.prompts[1]
    assert "'Name in English', 'Name in Turkish', 'Depth'" in llm.prompts[1]
    assert result.rules == {"readi_unknown_header": 1} and result.extra["edits"] == 1


def test_too_few_headers_triggers_an_edit() -> None:
    llm = ScriptedLLM(['Chosen Headers: ["Depth"]', GOOD, "Answer: ['Lake Palas Tuzla']"])
    result = TableReadi(llm).run(TABLE, QUESTION)
    assert "at least two headers" in llm.prompts[1]
    assert result.rules == {"readi_too_few_headers": 1}


def test_unmatched_rows_keep_all_rows_without_editing() -> None:
    llm = ScriptedLLM(['Chosen Headers: ["Name in English", "Depth"]\nConstrains: "Name in English": ["Lake Nowhere"]', "Answer: ['Lake Van']"])
    result = TableReadi(llm).run(TABLE, "which lake is deepest?")
    assert result.extra["edits"] == 0 and result.extra["selected_rows"] == 3 and result.extra["rows_constrained"] is False


def test_edit_budget_holds() -> None:
    bad = 'Chosen Headers: ["Lake"]'
    llm = ScriptedLLM([bad, 'Chosen Headers: ["Lakes"]', 'Chosen Headers: ["Lakez"]', "nonsense", 'Chosen Headers: ["Lakey"]', "Answer: ['?']"])
    result = TableReadi(llm, max_edits=4).run(TABLE, QUESTION)
    assert result.extra["edits"] == 4 and result.llm_calls == 6 and result.extra["isr"] is False
