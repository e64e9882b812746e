"""All 1,639 WebQSP gold programs (legacy PyQL) parse, compile and answer.

For every item: the legacy program is parsed by the grammar and replayed on
a Query; the compiled SPARQL parses with rdflib; and on a small KB built from
the *gold* SPARQL's own triple patterns (each variable replaced by a fresh
entity, the answer variable ?x by the first gold answer) our query returns
that answer. The gold query is Virtuoso dialect (rdflib rejects it), so its
triple patterns are read line by line, which its regular layout allows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyoxigraph as ox
import pytest
from rdflib.plugins.sparql import prepareQuery

from pyql.errors import ParseError
from pyql.interchange import convert
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.interchange.legacy import program_to_actions, program_to_query
from pyql.builder.profiles import FREEBASE
from pyql.builder.kinds.fact import Fact
from pyql.builder.terms import IRI, Literal, parse_term
from tests.shared_data import needs_shared, shared_path

DATA = shared_path("webqsp")
NS = "http://rdf.freebase.com/ns/"
TRIPLE = re.compile(r"^(\S+) (\S+) (\S+) \.$")
MID = re.compile(r"^[mg]\.[0-9a-z_]+$")

pytestmark = needs_shared("webqsp")


def _items() -> list[dict]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def _term(text: str, fresh: dict[str, ox.Term], answer: ox.Term) -> ox.Term:
    if text.startswith("?"):
        if text == "?x":
            return answer
        return fresh.setdefault(text, ox.NamedNode(f"{NS}m.fresh_{len(fresh)}"))
    if text.startswith("ns:"):
        return ox.NamedNode(NS + text[3:])
    term = parse_term(text, FREEBASE)
    if isinstance(term, IRI):
        return ox.NamedNode(term.value)
    assert isinstance(term, Literal)
    if term.lang:
        return ox.Literal(term.lexical, language=term.lang)
    return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype)) if term.datatype else ox.Literal(term.lexical)


STR_EQUALS = re.compile(r'FILTER \(str\((\?\w+)\) = "([^"]*)"\)')


def _gold_kb(item: dict) -> tuple[OxigraphKB, str]:
    gold = item["answer"][0]
    answer: ox.Term = ox.NamedNode(NS + gold) if MID.match(gold) else ox.Literal(gold)
    store = ox.Store()
    # A variable the gold query pins with FILTER(str(?v) = "text") holds that text.
    fresh: dict[str, ox.Term] = {var: ox.Literal(text) for var, text in STR_EQUALS.findall(item["sparql_query"])}
    for line in item["sparql_query"].splitlines():
        match = TRIPLE.match(line.strip())
        if match and not line.lstrip().upper().startswith(("FILTER", "PREFIX", "SELECT", "ORDER")):
            s, p, o = (_term(t, fresh, answer) for t in match.groups())
            store.add(ox.Quad(s, p, o))
    return OxigraphKB(store), gold


# Items whose legacy program uses a relation or entity absent from their own
# gold SPARQL (e.g. WebQTest-142: law.invention.inventor in the program,
# base.argumentmaps.original_idea.innovator in the query): they cannot answer
# on a KB built from the gold patterns, whatever the compiler does.
DIFFERS = 40


@pytest.mark.slow
def test_every_gold_program_parses_compiles_and_answers() -> None:
    items = _items()
    assert len(items) == 1639
    compiled = answered = without_answer = without_program = 0
    wrong: list[str] = []
    differs: list[str] = []
    for item in items:
        query = program_to_query(item["PyQL"])
        prepareQuery(query.sparql())
        compiled += 1
        if not query.steps:
            # "null": the dataset has no program for this item (its SPARQL is marked #MANUAL).
            assert "#MANUAL SPARQL" in item["sparql_query"]
            without_program += 1
            continue
        if not item["answer"]:
            without_answer += 1
            continue
        gold_names = set(re.findall(r"ns:([A-Za-z_0-9]+(?:\.[A-Za-z_0-9]+)+)", item["sparql_query"]))
        program_names = {
            a.value[len(NS) :] for step in query.steps if isinstance(step, Fact) for a in step.arguments() if isinstance(a, IRI)
        }
        if not program_names <= gold_names:
            # The dataset's program names a relation its own gold SPARQL does not use.
            differs.append(item["qid"])
            continue
        kb, gold = _gold_kb(item)
        values = [v.to_dict()["value"] for v in kb.execute(query).answers()]
        if gold in values:
            answered += 1
        else:
            wrong.append(f"{item['qid']}: expected {gold}, got {values[:5]}")
    assert compiled == 1639
    assert without_program == 42
    assert not wrong, "\n".join(wrong[:20])
    assert answered == 1639 - 42 - without_answer - len(differs)
    assert len(differs) == DIFFERS, differs
    assert without_answer == 9  # programs whose gold answer list is empty


def test_legacy_programs_convert_to_action_lines() -> None:
    item = _items()[0]
    assert program_to_actions(item["PyQL"]) == [
        "add_filter(?x0, !=, m.03_r3)",
        "add_fact(m.03_r3, location.country.languages_spoken, ?x0)",
        "set_answer(?x0)",
    ]


def test_a_broken_program_reports_its_line() -> None:
    with pytest.raises(ParseError, match="line 2"):
        program_to_query("a=PyQL()\na.add_fact('m.0', 'a.b.c'\n")


def test_eval_and_exec_are_never_used() -> None:
    root = Path(__file__).resolve().parents[1] / "pyql"
    for path in (root / "action_parser.py", *sorted((root / "interchange").glob("*.py"))):
        assert not re.search(r"\b(eval|exec)\(", path.read_text()), path


@pytest.mark.slow
def test_every_program_converts_to_action_lines_that_read_back_to_its_query() -> None:
    """``pyql actions`` of every program (its own spelling), and the query's own action lines
    (:meth:`Query.actions`), read back by the ``actions`` format give the program's SPARQL."""
    for item in _items():
        sparql = convert(item["PyQL"], "legacy", "sparql")
        lines = convert(item["PyQL"], "legacy", "actions")
        assert lines == "".join(f"{line}\n" for line in program_to_actions(item["PyQL"])), item["qid"]
        assert convert(lines, "actions", "sparql") == sparql, item["qid"]
        assert convert(convert(lines, "actions", "actions"), "actions", "sparql") == sparql, item["qid"]
