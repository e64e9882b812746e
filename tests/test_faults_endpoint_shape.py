"""SPARQL answers of the wrong shape, and huge answers, through the command line (issue 26, items 1 and 11).

A SPARQL endpoint that answers HTTP 200 with JSON that is not SPARQL JSON
results of the query's form (no ``results.bindings``, a boolean to a SELECT,
cells that are not ``{"type", "value"}`` objects or of an unknown type,
bindings to an ASK, a JSON array ...) has failed: the question *failed to
run* (``engine_unavailable``), it is not scored, and the model gets no
ERASER advice about it. An endpoint that answers 10^6 rows to a bounded
step is read only up to the step's ``LIMIT`` (+1), in bounded memory.

Run as a script, the huge-answer measurement is printed (the figures of
``docs/benchmarks.md``)::

    PYTHONPATH=. python -m tests.test_faults_endpoint_shape 1000000
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.faults import FAILED_TO_RUN
from pyql.cli import EXIT_SERVICE
from pyql.errors import EngineError, EngineUnavailable
from pyql.kb import KB
from pyql.kb.endpoint_backend import EndpointKB
from tests.fault_servers import (
    WRONG_ASK_SHAPES,
    WRONG_SHAPES,
    DemoSparqlEndpoint,
    FakeLLMServer,
    FakeSparqlEndpoint,
    GoldResponder,
    Reply,
    lazy_rows,
    sparql_json,
)
from tests.test_faults_cli import (
    RACHEL,
    RACHEL_ACTIONS,
    cli_env,
    demo_items,
    json_lines,
    one_line,
    pyql,
    stderr_of,
)

ROOT = Path(__file__).resolve().parents[1]
JSON = "application/sparql-results+json"
SELECT = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 10"
FB = "http://rdf.freebase.com/ns/"
ERASER_WORDS = ("Check the arguments", "is not connected to anything", "malformed cell", "rejected the query")


def _wrong(body: bytes) -> Reply:
    return Reply(200, body, content_type=JSON)


# -- the backend: every wrong shape is EngineUnavailable, naming the URL -----------------------------


@pytest.mark.parametrize("shape", sorted(WRONG_SHAPES))
def test_a_select_answered_with_the_wrong_shape_is_unavailable(shape: str) -> None:
    with FakeSparqlEndpoint([_wrong(WRONG_SHAPES[shape])]) as ep:
        kb = KB.open(ep.url, timeout=5)
        with pytest.raises(EngineUnavailable) as info:
            kb.select(SELECT)
    error = info.value
    assert error.kind == "engine_unavailable" and error.url == ep.url and ep.url in str(error)
    assert "\n" not in str(error) and len(str(error)) < 700


@pytest.mark.parametrize("shape", sorted(WRONG_ASK_SHAPES))
def test_an_ask_answered_with_the_wrong_shape_is_unavailable(shape: str) -> None:
    with FakeSparqlEndpoint([_wrong(WRONG_ASK_SHAPES[shape])]) as ep:
        with pytest.raises(EngineUnavailable) as info:
            KB.open(ep.url, timeout=5).ask("ASK { ?s ?p ?o }")
    assert ep.url in str(info.value) and "ASK" in str(info.value)


def test_the_messages_say_what_was_wrong() -> None:
    said = {
        "results without bindings": "answered a SELECT without results.bindings",
        "a boolean": "answered a SELECT with a boolean",
        "bindings not a list": "results.bindings that is not a list",
        "plain string cells": "a cell that is not a {\"type\", \"value\"} object",
        "a cell of unknown type": "a cell of unknown type 'entity'",
        "a JSON array": "a JSON array, not an object",
        "extra data after the object": "more after the JSON results",
        "variables the query did not select": "answered a SELECT with variables the query does not select (?zzz; it selects ?s)",
        "head naming a variable not selected": "with variables the query does not select (?zzz; it selects ?s)",
    }
    for shape, words in said.items():
        with FakeSparqlEndpoint([_wrong(WRONG_SHAPES[shape])]) as ep:
            with pytest.raises(EngineUnavailable) as info:
                KB.open(ep.url, timeout=5).select(SELECT)
        assert f"the SPARQL endpoint {ep.url} " in str(info.value) and words in str(info.value), (shape, str(info.value))
    with FakeSparqlEndpoint([_wrong(WRONG_ASK_SHAPES["bindings"])]) as ep:
        with pytest.raises(EngineUnavailable, match="answered an ASK with bindings"):
            KB.open(ep.url, timeout=5).ask("ASK {}")


@pytest.mark.parametrize(
    "cell",
    [
        {"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "85"},
        {"type": "literal", "xml:lang": "en", "value": "Rachel"},
        {"type": "literal", "value": ""},
        {"type": "uri", "value": "nodeID://b10006"},
        {"type": "bnode", "value": "b0"},
    ],
    ids=["virtuoso-typed-literal", "lang", "empty", "virtuoso-nodeid", "bnode"],
)
def test_well_formed_cells_are_still_read(cell: dict[str, str]) -> None:
    with FakeSparqlEndpoint([Reply(200, sparql_json(["s"], [{"s": cell}]), content_type=JSON)]) as ep:
        [row] = KB.open(ep.url, timeout=5).select(SELECT)
    term = row["s"]
    shown = getattr(term, "value", None) or getattr(term, "id", None) or getattr(term, "lexical", "")
    assert shown == cell["value"].replace("nodeID://", "")


def test_a_row_may_leave_variables_unbound_and_keys_may_come_in_any_order() -> None:
    body = b'{"results": {"distinct": false, "bindings": [{}, {"s": {"value": "x", "type": "literal"}}]}, "head": {"vars": ["s"]}}'
    with FakeSparqlEndpoint([_wrong(body)]) as ep:
        rows = KB.open(ep.url, timeout=5).select(SELECT)
    assert [sorted(r) for r in rows] == [[], ["s"]] and rows[1]["s"].lexical == "x"


def _pieces(data: bytes, size: int) -> Reply:
    return Reply(200, content_type=JSON, stream=lambda: (data[i : i + size] for i in range(0, len(data), size)))


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_an_answer_split_anywhere_reads_the_same(size: int) -> None:
    """Pieces cut inside keys, numbers, escapes and multi-byte characters; a long literal spans many pieces."""
    long = "x" * (200_000 if size > 1 else 2_000)
    rows = [{"s": {"type": "literal", "value": "é 🌀 \u2028 \"q\" " + long * (i == 1)},
             "n": {"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "123456789"}}
            for i in range(3)]
    results = {"count": 1234567, "bindings": rows, "ordered": 7654321}  # numbers cut by pieces, then skipped
    data = json.dumps({"head": {"vars": ["s", "n"]}, "results": results}, ensure_ascii=False).encode()
    with FakeSparqlEndpoint([_pieces(data, size)]) as ep:
        got = KB.open(ep.url, timeout=60).select("SELECT * WHERE { ?s ?p ?o }")
    assert [r["s"].lexical for r in got] == [r["s"]["value"] for r in rows]
    assert [r["n"].lexical for r in got] == ["123456789"] * 3


def test_a_byte_that_is_not_utf8_is_placed_in_the_whole_body() -> None:
    data = b'{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "literal", "value": "\xc3\xa9\xff"}}]}}'
    where = data.index(b"\xff")
    with FakeSparqlEndpoint([_pieces(data, 5)]) as ep:
        with pytest.raises(EngineUnavailable, match=f"not UTF-8 .*at byte {where},"):
            KB.open(ep.url, timeout=5).select(SELECT)


def test_a_rejected_query_stays_the_query_s_fault() -> None:
    """Not every error became unavailable: a 400 is still the model's step (ERASER advises)."""
    with FakeSparqlEndpoint([Reply(400, b"Virtuoso 37000 Error SP030: syntax error", content_type="text/plain")]) as ep:
        with pytest.raises(EngineError) as info:
            KB.open(ep.url, timeout=5).select(SELECT)
    assert not isinstance(info.value, EngineUnavailable)


# -- pyql run: the step stops the run, exit 3, no ERASER advice ----------------------------------------


@pytest.mark.cli
@pytest.mark.parametrize("shape", ["results without bindings", "a boolean", "plain string cells", "a cell of unknown type",
                                   "bindings not a list", "a JSON array"])
def test_run_stops_at_a_wrong_shape_with_exit_3(shape: str) -> None:
    with DemoSparqlEndpoint(fail=lambda q: _wrong(WRONG_SHAPES[shape])) as ep:
        result = pyql("run", "--kb", ep.url, "--kb-timeout", "20", "--entities", RACHEL, "--actions", "-", "--json",
                      stdin=RACHEL_ACTIONS.encode())
    assert result.returncode == EXIT_SERVICE, (result.stdout, result.stderr)
    message = one_line(stderr_of(result))
    assert message.startswith("pyql run: stopped at action 1: the KB could not be used: engine_unavailable: "), message
    assert f"the SPARQL endpoint {ep.url}" in message
    steps, final = json_lines(result.stdout)[:-1], json_lines(result.stdout)[-1]
    assert len(steps) == 1 and steps[0]["error"] == "engine_unavailable"
    assert not any(word in steps[0]["observation"] for word in ERASER_WORDS), steps[0]["observation"]
    assert final["answers"] == [] and final["error"]["kind"] == "engine_unavailable"


@pytest.mark.cli
def test_run_probe_answered_with_bindings_is_no_answer() -> None:
    """A step times out; the probe ``ASK {}`` gets bindings instead of a boolean: the KB is not answering (exit 3)."""
    def fail(query: str) -> Reply | None:
        if query.lstrip().upper().startswith("ASK"):
            return _wrong(WRONG_ASK_SHAPES["bindings"])
        if "tropical_cyclone.category" in query:
            return Reply(200, sparql_json(["c"], []), content_type=JSON, delay=5)
        return None

    with DemoSparqlEndpoint(fail=fail) as ep:
        result = pyql("run", "--kb", ep.url, "--kb-timeout", "2", "--entities", RACHEL, "--actions", "-", "--json",
                      stdin=RACHEL_ACTIONS.encode())
    assert result.returncode == EXIT_SERVICE, (result.stdout, result.stderr)
    message = one_line(stderr_of(result))
    assert message.startswith("pyql run: stopped at action 2: the KB could not be used: engine_timeout: "), message
    assert f"the SPARQL endpoint {ep.url} answered an ASK with bindings instead of a boolean" in message


# -- pyql eval: failed to run, not scored, exit 3 ------------------------------------------------------


@pytest.mark.cli
@pytest.mark.parametrize("shape", ["results without bindings", "a boolean", "plain string cells", "a cell of unknown type"])
def test_eval_question_with_a_wrong_shape_failed_to_run(tmp_path: Path, shape: str) -> None:
    items = demo_items("q01", "q03")
    data, out = tmp_path / "data.jsonl", tmp_path / "run.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    with FakeLLMServer(GoldResponder(items)) as llm, DemoSparqlEndpoint(fail=lambda q: _wrong(WRONG_SHAPES[shape])) as ep:
        result = pyql("eval", str(data), "--kb", ep.url, "--out", str(out), "--base-url", llm.url, "--model", "fake",
                      "--max-infra-failures", "2")
    stderr = stderr_of(result)
    assert result.returncode == EXIT_SERVICE, stderr
    stopped = stderr.strip().splitlines()[-1]
    assert stopped.startswith("pyql eval: stopped: 2 questions in a row failed to run (last: q03: engine_unavailable: "), stopped
    assert f"the SPARQL endpoint {ep.url}" in stopped
    records = json_lines(out.read_bytes())
    assert [(r["id"], r["status"]) for r in records] == [("q01", FAILED_TO_RUN), ("q03", FAILED_TO_RUN)]
    assert all(r["metrics"] == {} and r["answers"] == [] and not r["forced"] for r in records)
    assert all(r["error"].startswith("engine_unavailable: the SPARQL endpoint ") for r in records)
    summary = json.loads((tmp_path / "run.summary.json").read_text(encoding="utf-8"))
    assert (summary["answered"], summary["failed_to_run"], summary["metrics"]["questions"]) == (0, 2, 0)
    assert "2 failed to run" in (tmp_path / "run.summary.md").read_text(encoding="utf-8")
    assert "| failed to run (not scored; run again with --resume) | 2 |" in result.stdout.decode("utf-8")
    trace = out.read_text(encoding="utf-8")
    assert "the SPARQL endpoint" in trace and not any(word in trace for word in ERASER_WORDS)


# -- huge answers: read up to the LIMIT, in bounded memory --------------------------------------------


def _relation_cell(variable: str, i: int) -> dict[str, str]:
    if variable == "__dir":
        return {"type": "literal", "value": "forward"}
    if variable == "__r":
        return {"type": "uri", "value": f"{FB}a.b.r{i}"}
    return {"type": "typed-literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "1"}


def huge_endpoint(rows: int) -> FakeSparqlEndpoint:
    """An endpoint answering every query with ``rows`` relation rows (``?__dir ?__r ?__n``), made lazily."""
    stream = lazy_rows(["__dir", "__r", "__n"], rows, _relation_cell)
    return FakeSparqlEndpoint([Reply(200, content_type=JSON, stream=stream)])


def body_size(rows: int) -> int:
    """The bytes of the whole answer of :func:`huge_endpoint` (computed piece by piece)."""
    return sum(len(piece) for piece in lazy_rows(["__dir", "__r", "__n"], rows, _relation_cell)())


def body_size_at_least(rows: int) -> int:
    """A lower bound of :func:`body_size`, without making the rows: each is at least as long as the first."""
    return rows * len(json.dumps({v: _relation_cell(v, 0) for v in ("__dir", "__r", "__n")}))


#: Run in a subprocess: one bounded step (``get_relation``) against URL; prints seconds and peak memory.
MEASURE = """
import io, json, resource, sys, time, tracemalloc
trace = sys.argv[2] == "1"
if trace:
    tracemalloc.start()
from pyql.cli import main
out = io.StringIO()
started = time.perf_counter()
code = main(["run", "--kb", sys.argv[1], "--kb-timeout", "120", "--entities", '{"Rachel": "m.0crbvqz"}',
             "--actions", "/dev/stdin", "--json"], out=out)
seconds = time.perf_counter() - started
peak = tracemalloc.get_traced_memory()[1] if trace else 0
lines = out.getvalue().splitlines()
print(json.dumps({"code": code, "seconds": seconds, "traced_peak": peak, "step": json.loads(lines[0]) if lines else None,
                  "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(rows: int, *, trace: bool) -> dict[str, Any]:
    """One ``get_relation`` step against an endpoint serving ``rows`` rows, in a fresh process."""
    with huge_endpoint(rows) as ep:
        result = subprocess.run([sys.executable, "-c", MEASURE, ep.url, "1" if trace else "0"], input=b"get_relation(m.0crbvqz)\n",
                                capture_output=True, cwd=ROOT, env=cli_env(), timeout=600, check=False)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        figures = json.loads(result.stdout.decode().splitlines()[-1])
        figures["sent"] = sum(ep.sent)
        figures["queries"] = len(ep.requests)
    return figures


@pytest.mark.cli
def test_a_bounded_step_over_a_million_rows_reads_few_of_them() -> None:
    rows = 1_000_000
    figures = measure(rows, trace=True)
    whole = body_size_at_least(rows)
    step = figures["step"]
    assert figures["code"] == 0 and step["ok"], figures
    assert figures["traced_peak"] < 200 * 2**20, figures
    # resident size: the whole-body reader it replaces peaked at 1.77 GB; the process's own libraries and
    # allocator keep 0.1-0.5 GB depending on the machine's load, so only the order of magnitude is asserted
    assert figures["maxrss"] < 1024 * 2**20, figures
    # every query was cut at its LIMIT: far fewer bytes sent than one whole answer (socket buffers included)
    assert figures["sent"] < whole / 4, (figures["sent"], whole)
    assert figures["seconds"] < 60, figures


def test_the_limit_plus_one_row_is_read_and_counted() -> None:
    with huge_endpoint(100_000) as ep:
        kb = KB.open(ep.url, timeout=30)
        assert isinstance(kb, EndpointKB)
        rows = kb.select("SELECT ?__dir ?__r ?__n WHERE { ?s ?__r ?o } LIMIT 5")  # the variables the answer binds
        assert len(rows) == 5 and kb.limit_violations == 1
        assert [r["__r"].value for r in rows] == [f"{FB}a.b.r{i}" for i in range(5)]


def test_a_lazy_answer_without_limit_is_read_whole() -> None:
    with huge_endpoint(3000) as ep:
        kb = KB.open(ep.url, timeout=30)
        rows = kb.select("SELECT ?__dir ?__r ?__n WHERE { ?s ?__r ?o }")
        assert len(rows) == 3000 and ep.sent == [body_size(3000)]


if __name__ == "__main__":  # the figures of docs/benchmarks.md
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    figures = measure(count, trace=False)
    figures["step"] = {k: figures["step"][k] for k in ("ok", "error")} if figures["step"] else None
    print(json.dumps({"rows": count, "body_bytes": body_size(count), **figures}))
