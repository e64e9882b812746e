"""Compile time and step time of MarkQA's numeric steps (issue 21).

Usage::

    PYTHONPATH=. python benchmarks/bench_markqa.py                       # demo + 10^6 statements
    PYTHONPATH=. python benchmarks/bench_markqa.py --statements 0        # the demo only

Three measurements, each per numeric step kind (``add_quantity`` with a
year, with ``time=True``, with ``unit=True``; the qualifier forms;
``add_bind``; ``add_rank``; ``add_sub_query``; ``add_assignment``;
``add_type_constrain`` (the ``P31/P279*`` closure); start/end/point in time;
``add_count``/``add_sum``/``add_avg`` with and without ``group_obj``;
``add_max``/``add_min`` with ``return_obj``; ``add_filter``; ``add_compare``;
``set_head``):

* **compile**: adding the step to the previous :class:`~pyql.builder.query.Query`
  and calling ``.sparql()``, the 45 demo programs replayed step by step
  (``pyql/data/wikidata_questions.jsonl``), each step timed alone;
* **step on the demo**: ``KB.observe`` of the query after the step (the one
  KB query a step costs: values with labels and distinct counts) on
  ``pyql/data/wikidata_demo.ttl`` in pyoxigraph, the same programs;
* **step on 10^6 statements**: the same on a KB from
  ``benchmarks/gen_wikidata_kb.py`` (seed 0, cached in ``--workdir``),
  with chains of each kind anchored on entities drawn from it (a city of
  median size, its country, a mountain, an event) and class-wide ones
  (an average over a country's cities, a rank among them).

A step is *bounded* when its query starts from a given entity (the rows are
that entity's statements); class-wide steps (a type constraint and what
follows it) are reported apart. Goal for bounded steps: ≤ 50 ms, as on
Freebase (docs/benchmarks.md, "PyQL core").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable

import pyoxigraph as ox

from pyql.builder.expressions import div, mul, sub, year
from pyql.interchange.markqa import program_to_query
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.builder.query import Query

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "pyql" / "data" / "wikidata_questions.jsonl"
DEMO = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
Timings = dict[str, list[float]]


def step_kind(query: Query, index: int) -> str:
    """The kind of step ``index`` of ``query``, as the tables name it.

    Example:
        >>> q = Query("wikidata").add_quantity("Q64", "P1082", "pop", 2021).add_quantity("Q64", "P2046", "a", unit=True)
        >>> step_kind(q, 0), step_kind(q, 1)
        ('add_quantity(year)', 'add_quantity(unit=True)')
    """
    step = query.steps[index]
    action = step.action
    if action == "add_quantity":
        time_arg = getattr(step, "time", None)
        detail = "unit=True" if step.unit else "year" if isinstance(time_arg, int) else "date" if time_arg is not None and hasattr(time_arg, "lexical") else "time var" if time_arg is not None else "plain"
        return f"add_quantity({detail})"
    if action in ("add_count", "add_sum", "add_avg") and getattr(step, "group_by", ()):
        return f"{action}(group_obj)"
    if action in ("add_max", "add_min") and getattr(step, "answer", None) is not None:
        return f"{action}(return_obj)"
    return action


def _ms(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000


def compile_times(queries: list[Query], repeat: int) -> Timings:
    """Median seconds of adding each step and compiling, per kind (each step timed ``repeat`` times).

    Example:
        >>> t = compile_times([Query("wikidata").add_quantity("Q64", "P1082", "pop", 2021)], 3)
        >>> list(t), len(t["add_quantity(year)"])
        (['add_quantity(year)'], 3)
    """
    out: Timings = defaultdict(list)
    for query in queries:
        for index, step in enumerate(query.steps):
            before = Query(query.profile, query.steps[:index])
            before.sparql()
            for _ in range(repeat):
                fresh = Query(before.profile, before.steps)
                fresh.__dict__["scope"] = before.scope  # the previous query's scope is cached in use
                start = time.perf_counter()
                Query(fresh.profile, fresh.steps + (step,)).sparql()
                out[step_kind(query, index)].append(time.perf_counter() - start)
    return dict(out)


def step_times(kb: OxigraphKB, queries: list[Query], repeat: int, label: Callable[[Query, int], str] = step_kind) -> Timings:
    """Seconds of ``kb.observe`` after each step of each query, per kind (best of ``repeat``).

    Example:
        >>> kb = OxigraphKB(_load(DEMO), profile="wikidata")
        >>> t = step_times(kb, [Query("wikidata").add_quantity("Q64", "P1082", "pop", 2021)], 1)
        >>> list(t)
        ['add_quantity(year)']
    """
    out: Timings = defaultdict(list)
    for query in queries:
        for index in range(len(query.steps)):
            partial = Query(query.profile, query.steps[: index + 1])
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                kb.observe(partial)
                best = min(best, time.perf_counter() - start)
            out[label(query, index)].append(best)
    return dict(out)


def _load(path: Path) -> ox.Store:
    store = ox.Store()
    fmt = ox.RdfFormat.TURTLE if path.suffix == ".ttl" else ox.RdfFormat.N_TRIPLES
    store.bulk_load(path=str(path), format=fmt)
    return store


def _generated(workdir: Path, statements: int) -> Path:
    """The generated KB's N-Triples file, made once (``gen_wikidata_kb.py``, seed 0)."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"wikidata_{statements}.nt"
    if not path.exists():
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import gen_wikidata_kb  # noqa: PLC0415 (a script next to this one)

        gen_wikidata_kb.main(["--statements", str(statements), "--out", str(path), "--seed", "0"])
    return path


def _pick(store: ox.Store, sparql: str) -> list[str]:
    prefixes = "PREFIX wd: <http://www.wikidata.org/entity/> PREFIX wdt: <http://www.wikidata.org/prop/direct/> "
    return [str(s[0].value).rsplit("/", 1)[-1] for s in store.query(prefixes + sparql)]


def generated_chains(store: ox.Store) -> list[tuple[str, Query]]:
    """Chains of every numeric kind on a generated KB: (bounded or class-wide, query).

    Long because: one chain per numeric step kind, each a few builder calls on entities drawn from the KB.
    """
    cities = _pick(store, "SELECT ?c (COUNT(*) AS ?n) WHERE { ?c wdt:P31 wd:Q1549591 ; wdt:P1082 ?p } GROUP BY ?c ORDER BY ?c LIMIT 3")
    country = _pick(store, f"SELECT ?k WHERE {{ wd:{cities[0]} wdt:P17 ?k }}")[0]
    mountain = _pick(store, "SELECT ?m WHERE { ?m wdt:P31 wd:Q8502 } ORDER BY ?m LIMIT 1")[0]
    event = _pick(store, "SELECT ?e WHERE { ?e wdt:P31 wd:Q1656682 } ORDER BY ?e LIMIT 1")[0]
    years = sorted({int(y) for y in _pick(store, f"SELECT (YEAR(?t) AS ?y) WHERE {{ wd:{cities[0]} <http://www.wikidata.org/prop/P1082>/<http://www.wikidata.org/prop/qualifier/P585> ?t }}")})
    w = Query("wikidata")
    a, b = w.add_quantity(cities[0], "P1082", "pop_a", years[0]), w.add_quantity(cities[1], "P1082", "pop_b", years[0])
    growth = a.add_quantity(cities[0], "P1082", "pop_z", years[-1]).add_bind(mul(div(sub("pop_z", "pop_a"), "pop_a"), 100), "growth")
    return [
        ("bounded", growth),
        ("bounded", w.add_quantity(cities[0], "P1082", "pop", True).add_max("time_pop", "pop")),
        ("bounded", w.add_quantity(mountain, "P2044", "elevation", unit=True).add_bind(mul("elevation", 2), "double")),
        ("bounded", w.add_sub_query(a, b).add_bind(sub("pop_a", "pop_b"), "difference")),
        ("bounded", a.add_quantity(cities[1], "P1082", "pop_b", years[0]).add_compare("pop_a", ">", "pop_b")),
        ("bounded", w.add_assignment(cities, "city").add_quantity("city", "P1082", "pop", years[0]).add_sum("pop", "total")),
        ("bounded", w.add_start_time(event, "start").add_end_time(event, "end").add_bind(sub(year("end"), year("start")), "years")),
        ("bounded", a.add_filter("pop_a", ">", 1000).add_quantity(cities[0], "P2046", "area", unit=True).add_bind(div("pop_a", "area"), "density")),
        ("class-wide", w.add_type_constrain("Q515", "city").add_fact("?city", "wdt:P17", country)
         .add_quantity("city", "P1082", "pop", years[0]).add_avg("pop", "average")),
        ("class-wide", w.add_quantity(cities[0], "P2046", "mine", unit=True).add_type_constrain("Q515", "city")
         .add_fact("?city", "wdt:P17", country).add_quantity("city", "P2046", "area", unit=True).add_rank("mine", "area", "rank")),
        ("class-wide", w.add_type_constrain("Q515", "city").add_fact("?city", "wdt:P17", "?country")
         .add_quantity("city", "P1082", "pop", years[0]).add_count("city", "n", "country")),
    ]


def _table(title: str, rows: dict[str, tuple[int, float, float]], goal: float | None = None) -> str:
    lines = [f"### {title}", "", "| step | n | median ms | p95 ms |" + (" ≤ goal |" if goal else ""),
             "|---|---:|---:|---:|" + ("---|" if goal else "")]
    for kind in sorted(rows):
        n, median, p95 = rows[kind]
        mark = f" {'yes' if p95 <= goal else '**no**'} |" if goal else ""
        lines.append(f"| {kind} | {n} | {median:.3f} | {p95:.3f} |{mark}")
    return "\n".join(lines) + "\n"


def _summary(timings: Timings) -> dict[str, tuple[int, float, float]]:
    return {kind: (len(values), *_ms(values)) for kind, values in timings.items()}


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print Markdown tables (``--json FILE`` keeps every number).

    Example:
        >>> main(["--help"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        SystemExit: 0
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--statements", type=int, default=1_000_000, help="generated KB size (0: the demo only)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/pyql-bench"))
    parser.add_argument("--repeat", type=int, default=200, help="compile repetitions per step")
    parser.add_argument("--step-repeat", type=int, default=3, help="best of N per step")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    programs = [program_to_query(json.loads(line)["markqa"]) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = {"compile": _summary(compile_times(programs, args.repeat))}
    print(_table("Compile time per numeric step (add the step + .sparql(), no KB)", result["compile"]))
    result["demo"] = _summary(step_times(OxigraphKB(_load(DEMO), profile="wikidata"), programs, args.step_repeat))
    print(_table("Step time on the Wikidata demo (pyoxigraph, KB.observe)", result["demo"], 50.0))
    if args.statements:
        started = time.perf_counter()
        store = _load(_generated(args.workdir, args.statements))
        print(f"loaded {len(store):,} triples in {time.perf_counter() - started:.1f} s\n")
        kb = OxigraphKB(store, profile="wikidata")
        for scope in ("bounded", "class-wide"):
            chains = [q for kind, q in generated_chains(store) if kind == scope]
            result[scope] = _summary(step_times(kb, chains, args.step_repeat))
            print(_table(f"Step time on {args.statements:,} statements, {scope} chains", result[scope], 50.0 if scope == "bounded" else None))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
