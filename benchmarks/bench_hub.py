"""Hub scaling: the cost of each step of a chain that starts from a hub, at 10^4 to 10^7 edges.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_hub.py                                  # 10^4,10^5,10^6 on Oxigraph in memory
    PYTHONPATH=. python benchmarks/bench_hub.py --sizes 1e7 --backends oxigraph-disk
    PYTHONPATH=. python benchmarks/bench_hub.py --sizes 1e6 --backends virtuoso
    PYTHONPATH=. python benchmarks/bench_hub.py --sizes 1e3 --repeat 1 --warmup 0   # a few seconds

What it does:

1. Generates (cached under ``--workdir``, default ``/tmp/pyql-bench-hub``) a
   Freebase-like gender hub as N-Triples: ``size`` persons
   (``people.person``, each with an English ``type.object.name``), each with
   one ``people.person.gender`` edge, 60% to ``m.05zppz`` (male), 40% to
   ``m.02zsn`` (female); 70% of them have a ``people.person.date_of_birth``
   (``xsd:date``). Full Freebase IRIs ``http://rdf.freebase.com/ns/...``,
   mids of Freebase's form. A few fictional characters also point at the
   hubs (``fictional_universe.fictional_character.gender``, 0.5%), so the hub
   has more than one incoming relation. The size is the number of gender
   edges (persons); the male hub itself has 60% of them.
2. Loads it into each backend: ``oxigraph`` (in-memory store, ``bulk_load``),
   ``oxigraph-disk`` (an on-disk store under the workdir, loaded once with
   :func:`pyql.kb.store.load_store`, what ``pyql kb load`` runs, and then
   reused, opened read-only) or ``virtuoso`` (a private Virtuoso from
   ``tests/virtuoso.py`` on loopback).
3. Runs three chains through :meth:`pyql.environment.sparql.SparqlEnvironment.step`
   (``--warmup`` unmeasured passes, then ``--repeat`` measured ones; the
   median per step is reported):

   * ``argmax``: get_relation(m.05zppz), add_fact(?p, people.person.gender,
     m.05zppz), get_relation(?p), add_fact(?p, people.person.date_of_birth,
     ?dob), add_max(?dob), set_answer(?p), execute() (the chain of issue 12);
   * ``filter``: get_relation(m.05zppz), add_fact(?p, gender, m.05zppz),
     add_type_constrain(people.person, ?p), add_fact(?p, date_of_birth, ?dob),
     add_filter(?dob, >=, 1990-01-01), set_answer(?p), execute();
   * ``few``: add_fact(?p, people.person.gender, ?g), set_answer(?g) (a
     variable with 2 values over the whole join).

4. Times the engine's own floor for each kind of query pyql needs, written by
   hand on the same join (median of ``--repeat`` + 2 runs): a count capped at
   1,001 (``SELECT (COUNT(*) ...) { SELECT DISTINCT ?p ... LIMIT 1001 }``),
   10 sample values, the distinct relations over a 10,000-edge sample of each
   direction, the exact count and exact relation list (for reference) and
   the argmax alone (``ORDER BY DESC(?dob) LIMIT 1``, and with the order key
   pyql writes for values of mixed kinds, ``DESC(IF(isNumeric(?dob), ?dob,
   STR(?dob)))``; the goals use the faster one), and what a KB asks once per
   relation before its first argmax on it (``KB.value_kind``: are the
   values of one kind, so the engine's own order may be used?). The two
   argmax floors are timed right after each measured pass of the argmax
   chain, so a change of load on a shared machine hits the step and its
   floor alike.
5. Prints a markdown table (steps and floors per size and backend) and the
   goals of issue 12, checked: at 10^6 on each backend, every step without
   ordering or aggregation ≤ 50 ms; the argmax step ≤ 1.5x the engine's
   argmax floor; the whole argmax chain ≤ 1.5x that floor + 250 ms; at 10^7
   the bounded steps within 2x of their 10^6 time (same backend, or the
   in-memory 10^6 for ``oxigraph-disk`` when the disk store was not run at
   10^6); ``--compare EARLIER.json`` lets a 10^7 run use the cells of a
   separate 10^6 run.

Output: markdown on stdout (and ``--markdown FILE``), raw numbers in ``--json FILE``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import io
import json
import math
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pyql.environment.sparql import SparqlEnvironment

FB = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
MALE = "m.05zppz"
FEMALE = "m.02zsn"
GENDER = "people.person.gender"
DOB = "people.person.date_of_birth"
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
BACKENDS = ("oxigraph", "oxigraph-disk", "virtuoso")
MID_ALPHABET = "0123456789bcdfghjklmnpqrstvwxyz_"
PERSON_BASE = 32**5 + 7 * 32**4  # person mids m.017xxxx (no clash with the two hub mids)
CHARACTER_BASE = 32**6  # character mids m.01xxxxxx
FORMAT_VERSION = 1

CHAINS: dict[str, tuple[str, ...]] = {
    "argmax": (
        f"get_relation({MALE})",
        f"add_fact(?p, {GENDER}, {MALE})",
        "get_relation(?p)",
        f"add_fact(?p, {DOB}, ?dob)",
        "add_max(?dob)",
        "set_answer(?p)",
        "execute()",
    ),
    "filter": (
        f"get_relation({MALE})",
        f"add_fact(?p, {GENDER}, {MALE})",
        "add_type_constrain(people.person, ?p)",
        f"add_fact(?p, {DOB}, ?dob)",
        "add_filter(?dob, >=, 1990-01-01)",
        "set_answer(?p)",
        "execute()",
    ),
    # A variable with few values over the whole hub-sized join: ?g has 2 values over N rows.
    "few": (
        f"add_fact(?p, {GENDER}, ?g)",
        "set_answer(?g)",
    ),
}
#: Steps of the chains with neither ordering nor aggregation: the ≤ 50 ms goal (chain, index).
BOUNDED_STEPS = (("argmax", 0), ("argmax", 1), ("argmax", 2), ("argmax", 3),
                 ("filter", 2), ("filter", 4), ("filter", 5), ("few", 0), ("few", 1))
ARGMAX_STEP = ("argmax", 4)


def _iri(local: str) -> str:
    return f"<{FB}{local}>"


_JOIN = f"?p {_iri(GENDER)} {_iri(MALE)} . ?p {_iri(DOB)} ?dob ."
_ONE = f"?p {_iri(GENDER)} {_iri(MALE)} ."
#: The engine's floors: queries written by hand on the chain's joins.
FLOORS: dict[str, str] = {
    "capped count, gender fact (1,001)": f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?p WHERE {{ {_ONE} }} LIMIT 1001 }}",
    "capped count, both facts (1,001)": f"SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?p WHERE {{ {_JOIN} }} LIMIT 1001 }}",
    "10-value sample, both facts": f"SELECT DISTINCT ?p ?dob WHERE {{ {_JOIN} }} LIMIT 10",
    "relations into the hub, 10,000-edge sample": (
        f"SELECT DISTINCT ?r WHERE {{ {{ SELECT ?r WHERE {{ ?s ?r {_iri(MALE)} }} LIMIT 10000 }} }}"
    ),
    "relations of ?p, 10,000-edge sample": (
        f"SELECT DISTINCT ?r WHERE {{ {{ SELECT ?r WHERE {{ {_ONE} ?p ?r ?o }} LIMIT 10000 }} }}"
    ),
    "exact count, both facts (reference)": f"SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ {_JOIN} }}",
    "exact relations into the hub (reference)": f"SELECT DISTINCT ?r WHERE {{ ?s ?r {_iri(MALE)} }}",
    "argmax alone (ORDER BY DESC LIMIT 1)": f"SELECT ?p ?dob WHERE {{ {_JOIN} }} ORDER BY DESC(?dob) LIMIT 1",
    # What a KB asks once per relation before the first argmax on it (KB.value_kind): are the values of one kind?
    "value kinds of date_of_birth (once per relation and KB)": (
        f"SELECT DISTINCT ?k WHERE {{ ?s {_iri(DOB)} ?o . "
        'BIND(IF(isNumeric(?o), "numeric", IF(isLiteral(?o), STR(DATATYPE(?o)), "node")) AS ?k) } LIMIT 2'
    ),
    "argmax alone, pyql's order key": (
        f"SELECT ?p ?dob WHERE {{ {_JOIN} }} ORDER BY DESC(IF(isNumeric(?dob), ?dob, STR(?dob))) LIMIT 1"
    ),
}
#: The floors of bounded queries (cheap at any size); the others evaluate the whole join.
BOUNDED_FLOORS = tuple(name for name in FLOORS if "(1,001)" in name or "sample" in name)
#: The argmax floors; the goals use the faster of the two.
ARGMAX_FLOORS = ("argmax alone (ORDER BY DESC LIMIT 1)", "argmax alone, pyql's order key")


# ---------------------------------------------------------------------------
# The KB
# ---------------------------------------------------------------------------


def encode_mid(number: int) -> str:
    """A Freebase-style mid: ``m.0`` then base-32 letters.

    Example:
        >>> encode_mid(PERSON_BASE)
        'm.0170000'
    """
    letters = []
    while number:
        number, digit = divmod(number, 32)
        letters.append(MID_ALPHABET[digit])
    return "m.0" + "".join(reversed(letters))


def kb_path(workdir: Path, size: int, seed: int) -> Path:
    return workdir / f"hub_{size}_s{seed}.nt"


def generate(path: Path, size: int, seed: int) -> dict[str, Any]:
    """Write the hub KB of ``size`` persons to ``path`` (N-Triples); returns its metadata."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    name, typ = _iri("type.object.name"), _iri("type.object.type")
    person_type, gender, dob = _iri("people.person"), _iri(GENDER), _iri(DOB)
    male, female = _iri(MALE), _iri(FEMALE)
    triples = males = births = 0
    tmp = path.with_name(path.name + ".part")
    with tmp.open("w", encoding="utf-8") as out:
        head = [
            f'{male} {name} "Male"@en .', f'{female} {name} "Female"@en .',
            f"{male} {typ} {_iri('people.gender')} .", f"{female} {typ} {_iri('people.gender')} .",
            f'{_iri("people.gender")} {name} "Gender"@en .', f'{person_type} {name} "Person"@en .',
        ]
        out.write("\n".join(head) + "\n")
        triples += len(head)
        buffer: list[str] = []
        for i in range(size):
            s = f"<{FB}{encode_mid(PERSON_BASE + i)}>"
            is_male = rng.random() < 0.6
            males += is_male
            buffer.append(f'{s} {typ} {person_type} .\n{s} {name} "Person {i}"@en .\n{s} {gender} {male if is_male else female} .\n')
            triples += 3
            if rng.random() < 0.7:
                year, month, day = rng.randrange(1900, 2010), rng.randrange(1, 13), rng.randrange(1, 29)
                buffer.append(f'{s} {dob} "{year:04d}-{month:02d}-{day:02d}"^^<{XSD}date> .\n')
                triples += 1
                births += 1
            if i % 200 == 0:
                c = f"<{FB}{encode_mid(CHARACTER_BASE + i)}>"
                buffer.append(
                    f"{c} {typ} {_iri('fictional_universe.fictional_character')} .\n"
                    f'{c} {name} "Character {i}"@en .\n'
                    f"{c} {_iri('fictional_universe.fictional_character.gender')} {male if i % 400 == 0 else female} .\n"
                )
                triples += 3
            if len(buffer) >= 20_000:
                out.write("".join(buffer))
                buffer.clear()
        out.write("".join(buffer))
    tmp.replace(path)
    meta = {"version": FORMAT_VERSION, "size": size, "seed": seed, "triples": triples, "males": males,
            "births": births, "bytes": path.stat().st_size, "seconds": round(time.perf_counter() - t0, 1)}
    path.with_name(path.name + ".meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return meta


def ensure_kb(workdir: Path, size: int, seed: int, log: Callable[[str], None]) -> tuple[Path, dict[str, Any]]:
    """The cached hub KB of ``size`` persons, generated if missing."""
    path = kb_path(workdir, size, seed)
    meta_path = path.with_name(path.name + ".meta.json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("version") == FORMAT_VERSION and meta.get("size") == size:
            log(f"reusing {path} ({meta['triples']:,} triples)")
            return path, meta
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"generating {path} ...")
    meta = generate(path, size, seed)
    log(f"  {meta['triples']:,} triples, {meta['bytes'] / 1e6:.0f} MB in {meta['seconds']} s")
    return path, meta


# ---------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------


@dataclass
class Loaded:
    kb: Any
    seconds: float
    note: str = ""


def load_oxigraph_memory(path: Path) -> Loaded:
    import pyoxigraph as ox

    from pyql.kb.oxigraph_backend import OxigraphKB

    t0 = time.perf_counter()
    kb = OxigraphKB(ox.Store())
    kb.load(path)
    return Loaded(kb, time.perf_counter() - t0, "memory")


def load_oxigraph_disk(path: Path, workdir: Path) -> Loaded:
    """An on-disk store of ``path`` under ``workdir``: loaded once (as ``pyql kb load`` does), then reused read-only."""
    import pyoxigraph as ox

    from pyql.kb.oxigraph_backend import OxigraphKB

    directory = workdir / (path.stem + ".oxigraph")
    done = directory.with_name(directory.name + ".done.json")
    note = "disk, reused"
    if not done.exists():
        shutil.rmtree(directory, ignore_errors=True)
        t0 = time.perf_counter()
        try:
            from pyql.kb.store import load_store
        except ImportError:  # before pyql kb load existed
            store = ox.Store(str(directory))
            store.bulk_load(path=str(path), format=ox.RdfFormat.N_TRIPLES)
            store.optimize()
            store.flush()
            del store
        else:
            load_store([path], directory)
        gc.collect()
        seconds = time.perf_counter() - t0
        done.write_text(json.dumps({"seconds": seconds, "source": str(path)}), encoding="utf-8")
        note = "disk, loaded"
    else:
        seconds = json.loads(done.read_text(encoding="utf-8"))["seconds"]
    return Loaded(OxigraphKB(ox.Store.read_only(str(directory))), seconds, note)


def _virtuoso_module():  # type: ignore[no-untyped-def]
    if "tests.virtuoso" in sys.modules:
        return sys.modules["tests.virtuoso"]
    spec = importlib.util.spec_from_file_location("tests.virtuoso", ROOT / "tests" / "virtuoso.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tests.virtuoso"] = module
    spec.loader.exec_module(module)
    return module


def load_virtuoso(server: Any, path: Path, size: int, triples: int) -> Loaded:
    from pyql.kb.endpoint_backend import EndpointKB

    graph = f"http://pyql.bench/hub_{size}"
    t0 = time.perf_counter()
    count = server.load_turtle(path, graph, timeout=7200)
    seconds = time.perf_counter() - t0
    if count != triples:
        raise RuntimeError(f"Virtuoso holds {count} triples in <{graph}>, expected {triples}")
    return Loaded(EndpointKB(server.endpoint, default_graph=graph, timeout=600), seconds, "bulk loader")


# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def size_label(size: int) -> str:
    exp = len(str(size)) - 1
    return f"10^{exp}" if size == 10**exp else f"{size:,}"


@dataclass
class Cell:
    """One backend at one size: step times per chain (ms, one list per step) and floors (ms)."""

    size: int
    backend: str
    triples: int = 0
    load_s: float | None = None
    load_note: str = ""
    steps: dict[str, list[list[float]]] = field(default_factory=dict)
    kb_queries: dict[str, list[int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    floors: dict[str, list[float]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    skipped: str | None = None

    def step_ms(self, chain: str, index: int) -> float:
        return med(self.steps.get(chain, [[]] * (index + 1))[index])

    def chain_ms(self, chain: str) -> float:
        return sum(self.step_ms(chain, i) for i in range(len(CHAINS[chain])))


def run_chain(kb: Any, chain: str) -> tuple[list[float], list[int], list[str], str]:
    """One pass of a chain: ms per step, KB queries per step, errors, the final observation."""
    env = SparqlEnvironment(kb, entities={"male": MALE})
    times, queries, errors, last = [], [], [], ""
    for line in CHAINS[chain]:
        t0 = time.perf_counter()
        record = env.step(line)
        times.append((time.perf_counter() - t0) * 1000)
        queries.append(record.kb_queries)
        if not record.ok:
            errors.append(f"{chain}: {line}: {record.error}: {(record.observation or '')[:200]}")
        last = record.observation or ""
    return times, queries, errors, last


def _time_query(kb: Any, query: str) -> float:
    """Milliseconds one SELECT takes."""
    t0 = time.perf_counter()
    kb.select(query)
    return (time.perf_counter() - t0) * 1000


def measure(cell: Cell, kb: Any, chains: list[str], warmup: int, repeat: int, log: Callable[[str], None],
            floors: str = "all", floor_repeat: int | None = None) -> None:
    for chain in chains:
        for _ in range(warmup):
            run_chain(kb, chain)
        per_step: list[list[float]] = [[] for _ in CHAINS[chain]]
        for _ in range(repeat):
            times, queries, errors, last = run_chain(kb, chain)
            for i, ms in enumerate(times):
                per_step[i].append(ms)
            if chain == "argmax" and floors == "all":
                # The argmax floors right after each pass: on a shared machine a load change then hits both.
                for name in ARGMAX_FLOORS:
                    cell.floors.setdefault(name, []).append(_time_query(kb, FLOORS[name]))
            cell.kb_queries[chain] = queries
            cell.answers[chain] = last[:300]
            cell.errors.extend(e for e in errors if e not in cell.errors)
        cell.steps[chain] = per_step
        log(f"    {chain}: " + ", ".join(f"{med(v):.1f}" for v in per_step) + " ms")
    for name, query in FLOORS.items():
        if floors == "none" or (floors == "bounded" and name not in BOUNDED_FLOORS) or name in cell.floors:
            continue
        cell.floors[name] = [_time_query(kb, query) for _ in range(floor_repeat if floor_repeat is not None else repeat + 2)]
    log("    floors: " + ", ".join(f"{k.split(',')[0]} {med(v):.1f}" for k, v in cell.floors.items()) + " ms")


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def table(cells: list[Cell], chains: list[str]) -> str:
    run = [c for c in cells if not c.skipped]
    head = "| step (median ms) | " + " | ".join(f"{c.backend} {size_label(c.size)}" for c in run) + " |"
    lines = [head, "| --- |" + " ---: |" * len(run)]
    lines.append("| load (s) | " + " | ".join(f"{c.load_s:.1f} ({c.load_note})" if c.load_s is not None else "–" for c in run) + " |")
    lines.append("| load (triples/s) | " + " | ".join(
        f"{c.triples / c.load_s:,.0f}" if c.load_s and c.triples else "–" for c in run) + " |")
    for chain in chains:
        for i, line in enumerate(CHAINS[chain]):
            label = f"{chain} {i + 1}. `{line.replace(MALE, 'hub')}`"
            lines.append(f"| {label} | " + " | ".join(_fmt(c.step_ms(chain, i)) for c in run) + " |")
        lines.append(f"| **{chain} chain total** | " + " | ".join(_fmt(c.chain_ms(chain)) for c in run) + " |")
        lines.append(f"| {chain}: KB queries per step | " + " | ".join(",".join(map(str, c.kb_queries.get(chain, []))) for c in run) + " |")
    for name in FLOORS:
        lines.append(f"| floor: {name} | " + " | ".join(_fmt(med(c.floors.get(name, []))) for c in run) + " |")
    return "\n".join(lines)


def goals(cells: list[Cell], chains: list[str]) -> list[tuple[bool, str]]:
    """The goals of issue 12, checked on the cells that ran: (met, description)."""
    out: list[tuple[bool, str]] = []
    by = {(c.backend, c.size): c for c in cells if not c.skipped}
    for (backend, size), cell in sorted(by.items()):
        if size != 1_000_000:
            continue
        for chain, index in BOUNDED_STEPS:
            if chain not in chains:
                continue
            ms = cell.step_ms(chain, index)
            out.append((ms <= 50, f"{backend} 10^6: `{CHAINS[chain][index]}` ({chain}) {ms:.1f} ms ≤ 50 ms"))
        if "argmax" in chains and all(name in cell.floors for name in ARGMAX_FLOORS):
            floor = min(med(cell.floors[name]) for name in ARGMAX_FLOORS)
            ms = cell.step_ms(*ARGMAX_STEP)
            out.append((ms <= 1.5 * floor, f"{backend} 10^6: add_max {ms:.0f} ms ≤ 1.5 x argmax floor {floor:.0f} ms = {1.5 * floor:.0f} ms"))
            total = cell.chain_ms("argmax")
            out.append((total <= 1.5 * floor + 250, f"{backend} 10^6: argmax chain {total:.0f} ms ≤ 1.5 x floor + 250 = {1.5 * floor + 250:.0f} ms"))
    for (backend, size), cell in sorted(by.items()):
        if size != 10_000_000:
            continue
        base = by.get((backend, 1_000_000)) or (by.get(("oxigraph", 1_000_000)) if backend == "oxigraph-disk" else None)
        if base is None:
            out.append((False, f"{backend} 10^7: no 10^6 run to compare with"))
            continue
        for chain, index in BOUNDED_STEPS:
            if chain not in chains:
                continue
            ms, ref = cell.step_ms(chain, index), base.step_ms(chain, index)
            out.append((ms <= 2 * ref, f"{backend} 10^7: `{CHAINS[chain][index]}` ({chain}) {ms:.1f} ms ≤ 2 x {base.backend} 10^6 {ref:.1f} ms"))
    return out


def machine_info() -> dict[str, str]:
    import platform

    import pyoxigraph

    info = {"nproc": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
            "python": platform.python_version(), "pyoxigraph": pyoxigraph.__version__}
    with contextlib.suppress(OSError), open("/proc/meminfo", encoding="ascii") as f:
        info["memory"] = f"{int(f.readline().split()[1]) / 1024 / 1024:.1f} GiB"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    return info


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_sizes(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x.strip()]


@contextlib.contextmanager
def _maybe_virtuoso(needed: bool, workdir: Path, buffers: int, log: Callable[[str], None]) -> Iterator[Any]:
    if not needed:
        yield None
        return
    vmod = _virtuoso_module()
    if vmod.find_virtuoso() is None:
        log("Virtuoso is not installed; skipping it. " + vmod.INSTALL_HINT)
        yield None
        return
    log("starting Virtuoso ...")
    with vmod.VirtuosoServer(workdir=workdir, number_of_buffers=buffers, max_dirty_buffers=buffers * 3 // 4,
                             query_timeout=600) as server:
        yield server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/pyql-bench-hub"), help="KB and store cache")
    parser.add_argument("--sizes", type=parse_sizes, default=list(DEFAULT_SIZES), help="persons (gender edges), e.g. 1e4,1e5,1e6 (default)")
    parser.add_argument("--backends", default="oxigraph", help=f"comma list of {', '.join(BACKENDS)} (default oxigraph)")
    parser.add_argument("--chains", default=",".join(CHAINS), help=f"comma list of {', '.join(CHAINS)} (default all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured passes per chain (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="measured passes per chain; the median is reported (default 3)")
    parser.add_argument("--floors", choices=("all", "bounded", "none"), default="all",
                        help="which engine floors to time: all (default), bounded (capped counts and samples only: "
                        "the others take minutes at 10^7), none")
    parser.add_argument("--floor-repeat", type=int, help="runs per floor query (default repeat + 2)")
    parser.add_argument("--virtuoso-buffers", type=int, default=300_000, help="Virtuoso NumberOfBuffers (8 KB pages)")
    parser.add_argument("--compare", type=Path, action="append", default=[],
                        help="the --json of an earlier run whose cells the goals may use (e.g. the 10^6 run for a 10^7 run)")
    parser.add_argument("--json", type=Path, help="write raw results here")
    parser.add_argument("--markdown", type=Path, help="also write the report here")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    chains = [c.strip() for c in args.chains.split(",") if c.strip()]
    if set(backends) - set(BACKENDS):
        parser.error(f"unknown backend(s) {', '.join(sorted(set(backends) - set(BACKENDS)))}; use {', '.join(BACKENDS)}")
    if set(chains) - set(CHAINS):
        parser.error(f"unknown chain(s) {', '.join(sorted(set(chains) - set(CHAINS)))}; use {', '.join(CHAINS)}")

    def log(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    started = time.perf_counter()
    command = "PYTHONPATH=. python benchmarks/bench_hub.py" + (" " + " ".join(sys.argv[1:] if argv is None else argv)).rstrip()
    cells: list[Cell] = []
    with _maybe_virtuoso("virtuoso" in backends, args.workdir, args.virtuoso_buffers, log) as server:
        for size in sorted(args.sizes):
            path, meta = ensure_kb(args.workdir, size, args.seed, log)
            for backend in backends:
                cell = Cell(size, backend, meta["triples"])
                cells.append(cell)
                if backend == "virtuoso" and server is None:
                    cell.skipped = "Virtuoso not installed"
                    continue
                log(f"[{size_label(size)} {backend}] loading {meta['triples']:,} triples ...")
                gc.collect()
                if backend == "oxigraph":
                    loaded = load_oxigraph_memory(path)
                elif backend == "oxigraph-disk":
                    loaded = load_oxigraph_disk(path, args.workdir)
                else:
                    loaded = load_virtuoso(server, path, size, meta["triples"])
                cell.load_s, cell.load_note = loaded.seconds, loaded.note
                log(f"  loaded in {loaded.seconds:.1f} s ({loaded.note}); running ...")
                try:
                    measure(cell, loaded.kb, chains, args.warmup, args.repeat, log, args.floors, args.floor_repeat)
                finally:
                    loaded.kb.close()
                    del loaded
                    gc.collect()

    out = io.StringIO()
    out.write(f"Command: `{command}` (total {(time.perf_counter() - started) / 60:.1f} min)\n\n")
    out.write("Machine: " + ", ".join(f"{k} {v}" for k, v in machine_info().items()) + "\n\n")
    out.write(table(cells, chains) + "\n\n")
    errors = [e for c in cells for e in c.errors]
    if errors:
        out.write("Failed steps:\n\n" + "\n".join(f"- {c.backend} {size_label(c.size)}: {e}" for c in cells for e in c.errors) + "\n\n")
    earlier = [Cell(**c) for path in args.compare for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    mine = {(c.backend, c.size) for c in cells}
    checked = goals(cells + [c for c in earlier if (c.backend, c.size) not in mine], chains)
    if checked:
        out.write("Goals (issue 12):\n\n" + "\n".join(f"- {'met' if ok else 'NOT met'}: {text}" for ok, text in checked) + "\n")
    text = out.getvalue()
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps({"command": command, "cells": [c.__dict__ for c in cells]}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
