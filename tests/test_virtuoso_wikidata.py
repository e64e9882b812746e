"""Virtuoso parity on Wikidata: every demo program gives the same rows on Virtuoso as on pyoxigraph.

MarkQA ran its SPARQL on Virtuoso (7.2.6); pyql's own text for the 45 demo
programs (``pyql/data/wikidata_questions.jsonl``, imported by
:func:`pyql.interchange.markqa.program_to_query`) must answer there exactly
as on the embedded engine and as the question's gold answers say, scored as
MarkQA scores them. Run with a real Virtuoso 7.2 (``tests/conftest.py``
starts one on loopback)::

    PYQL_REQUIRE_VIRTUOSO=1 python -m pytest -q tests/test_virtuoso_wikidata.py

Virtuoso's quirks that MarkQA's reference SPARQL runs into (listed in
``tests/test_wikidata_demo.py``, ``KNOWN_ON_VIRTUOSO``: rows lost where
``wdt:P31/wdt:P279*`` meets a date FILTER, a sub-query or a unit conversion)
are handled by the compiler's text (the closure as a UNION of its two halves)
but for one: w24, where the closure meets a unit conversion (``KNOWN``): there
Virtuoso keeps one row per unit, and whether its LIMIT 1 keeps the right city
depends on its row order (seen both ways), so w24 is an expected failure when
it differs.
Numbers agree within MarkQA's 1e-5. Integer division is Virtuoso's own
(``7 / 2`` is 3 there, 3.5 in SPARQL 1.1); Wikidata's amounts are decimals,
so it only bites integers such as counts: the last test pins it and the
documented way round it.
"""

from __future__ import annotations

import importlib.util
import json
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pyoxigraph as ox
import pytest

from pyql.interchange.markqa import program_to_query
from pyql.kb.endpoint_backend import EndpointKB
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.builder.terms import IRI, Literal

ROOT = Path(__file__).resolve().parents[1]
KB_PATH = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
GRAPH = "http://pyql.test/wikidata-demo-parity"
QUESTIONS = [json.loads(line) for line in (ROOT / "pyql" / "data" / "wikidata_questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]

_spec = importlib.util.spec_from_file_location("wikidata_demo_checks", ROOT / "tests" / "test_wikidata_demo.py")
assert _spec and _spec.loader
_checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_checks)

pytestmark = pytest.mark.virtuoso

#: Programs Virtuoso 7.2 answers otherwise, and why (each checked: it must still differ, so a fix is seen).
KNOWN = {
    "w24": "the subclass closure joined with the SI conversion keeps one row per unit on Virtuoso (Hamburg, not "
    "Berlin); OPTIONAL { conversion } FILTER(BOUND(...)) answers in full there but makes pyoxigraph 80x slower",
}


def _value(term: object) -> str:
    if isinstance(term, Literal):
        return term.lexical
    return term.value if isinstance(term, IRI) else str(term)


def _rows(kb: object, sparql: str, ask: bool) -> list[dict[str, str]]:
    if ask:
        return [{"answer": "TRUE" if kb.ask(sparql) else "FALSE"}]  # type: ignore[attr-defined]
    return [{k: _value(v) for k, v in row.items() if v is not None} for row in kb.select(sparql)]  # type: ignore[attr-defined]


def _same_rows(a: list[dict[str, str]], b: list[dict[str, str]]) -> bool:
    """The same rows, numbers equal within MarkQA's absolute 1e-5 (Virtuoso divides decimals to ~16 digits,
    Oxigraph to 18 places: 2.868104280656582 and 2.868104280656581911), anything else as text."""
    if len(a) != len(b):
        return False
    key = lambda row: json.dumps({k: (f"{_number(v):.4f}" if _number(v) is not None else v) for k, v in row.items()}, sort_keys=True)  # noqa: E731
    return all(_checks._same(x, y) for x, y in zip(sorted(a, key=key), sorted(b, key=key)))


def _number(value: str) -> Decimal | None:
    try:
        number = Decimal(value)
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


@pytest.fixture(scope="module")
def engines(virtuoso_server) -> tuple[EndpointKB, OxigraphKB]:  # noqa: ANN001
    virtuoso_server.load_turtle(KB_PATH, GRAPH)
    remote = EndpointKB(virtuoso_server.endpoint, default_graph=GRAPH, timeout=60, profile="wikidata")
    store = ox.Store()
    store.load(path=str(KB_PATH), format=ox.RdfFormat.TURTLE)
    return remote, OxigraphKB(store, profile="wikidata")


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_a_demo_program_answers_alike_on_virtuoso(engines: tuple[EndpointKB, OxigraphKB], question: dict) -> None:
    remote, local = engines
    query = program_to_query(question["markqa"])
    sparql = query.sparql()
    on_virtuoso = _rows(remote, sparql, query.is_ask)
    on_oxigraph = _rows(local, sparql, query.is_ask)
    assert _checks._answers_match(question["answers"], on_oxigraph), on_oxigraph
    if question["id"] in KNOWN and not _same_rows(on_virtuoso, on_oxigraph):
        # Virtuoso keeps one row per unit here, so which row LIMIT 1 keeps depends on its row order:
        # the runs of this test have seen it agree and disagree; it is not pinned either way.
        pytest.xfail(KNOWN[question["id"]])
    assert _same_rows(on_virtuoso, on_oxigraph), (on_virtuoso, on_oxigraph)
    assert _checks._answers_match(question["answers"], on_virtuoso), on_virtuoso


def test_integer_division_is_documented_and_avoidable(engines: tuple[EndpointKB, OxigraphKB]) -> None:
    """Virtuoso truncates integer / integer; multiplying by 1.0 first (mul(?n, 1.0)) agrees everywhere."""
    remote, local = engines
    program = ("a = PyQL()\na.add_type_constrain('Q515', 'city')\na.add_count('city', 'n')\n"
               "b = PyQL()\nb.add_bind(div('n', 4), 'plain')\nb.add_bind(div(mul('n', '1.0'), 4), 'exact')\n"
               "b.set_head('SELECT ?plain ?exact')\nb.add_sub_query(a)\nprint(b.sparql)\n")
    query = program_to_query(program)
    (virtuoso,) = _rows(remote, query.sparql(), False)
    (oxigraph,) = _rows(local, query.sparql(), False)
    n = len(local.select("PREFIX wd: <http://www.wikidata.org/entity/> PREFIX wdt: <http://www.wikidata.org/prop/direct/> "
                         "SELECT DISTINCT ?c WHERE { ?c wdt:P31/wdt:P279* wd:Q515 }"))
    assert n % 4, "the check needs a count that 4 does not divide"
    assert Decimal(oxigraph["plain"]) == Decimal(oxigraph["exact"]) == Decimal(n) / 4
    assert Decimal(virtuoso["exact"]) == Decimal(n) / 4
    assert Decimal(virtuoso["plain"]) == n // 4  # Virtuoso's integer division (documented in docs/core.md)
