"""Benchmark the PyQL core: compile time per step and step time on rdflib, pyoxigraph and Virtuoso.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_core.py                      # everything (~1.5 min on 2 cores)
    PYTHONPATH=. python benchmarks/bench_core.py --sizes 1e4,1e5 --backends oxigraph
    PYTHONPATH=. python benchmarks/bench_core.py --compile-ratio          # pyql vs a string builder (~10 s)

What it does:

1. Generates synthetic Freebase-like KBs of 10^4, 10^5 and 10^6 triples with
   ``benchmarks/gen_kb.py`` (seed 0; unnamed CVT nodes, literals, names),
   cached under ``--workdir`` (default ``/tmp/pyql-bench``) with the metadata
   and the start entities chosen for the chains (see below).
2. **Compile time** (no KB): for every step of every chain template, the time
   to add the step to the previous :class:`~pyql.builder.query.Query` and call
   ``.sparql()``, and the time to build the step's observation query (the text
   a step actually sends); individually timed calls, median and p95.
3. **Step time**: for every backend and size, the KB is loaded (load time
   reported separately), then every chain runs through
   :meth:`pyql.environment.sparql.SparqlEnvironment.step` (one step = parse, query
   build, the KB query and the observation text). Reported: median and p95
   of the construction steps (``add_*`` / ``set_answer``, each one
   observation query), median ``get_relation`` and ``execute()``, KB
   queries per step, pyql's own time per step (the step's wall time minus
   the time spent in the KB call) and the time of a query that touches no
   data (the engine's floor: parsing, HTTP). A warm-up pass over the chains
   runs first and is not counted (for rdflib, which has no cache to warm and
   is slow, only the first chain).

Chains (``TEMPLATES``) are the step shapes of WebQSP/CWQ questions: a one-hop
fact from a high-degree entity, a two-hop path through a CVT, a filter, an
argmax, a count after an argmax, a time constraint, ``set_answer`` and
``execute()``. Each template starts from an entity that has its first
relation; ``--entities`` entities are used per template: the ones with the
most such edges (the hubs) and one of median degree. They are found by one
scan of the N-Triples file (cached as ``<kb>.bench-entities.json``).

Backends: ``rdflib`` (:class:`~pyql.kb.rdflib_backend.RdflibKB`, the file
parsed into an in-memory graph), ``oxigraph``
(:class:`~pyql.kb.oxigraph_backend.OxigraphKB`, ``bulk_load`` into an
in-memory store, or a fresh on-disk store with ``--oxigraph-store disk``) and
``virtuoso`` (a private Virtuoso 7.2 from ``tests/virtuoso.py``, the file
bulk-loaded into one graph per size, queried through
:class:`~pyql.kb.endpoint_backend.EndpointKB` with ``default_graph=``).
rdflib above 10^5 triples is skipped unless ``--rdflib-large`` is given (its
load is then aborted after ``--rdflib-budget`` seconds).

``--compile-ratio`` measures only compilation, against the cheapest way to
get query text: :data:`RATIO_CHAIN` (two facts from an entity, a filter, an
argmax, ``set_answer``), ``.sparql()`` after every step, built with
:class:`~pyql.builder.query.Query` and with :class:`StringBuilderPyQL` (string
concatenation in the way of QueryAgent's ``PyQL`` class), alternated
``--ratio-reps`` times; it prints both per-step medians and their ratio.

Output: markdown tables on stdout (and in ``--markdown FILE``), raw numbers
in ``--json FILE``.
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
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pyql.kb import probes
from pyql.action_parser import parse_action
from pyql.builder.profiles import FREEBASE
from pyql.builder.query import Query
from pyql.environment.sparql_actions import SparqlActions, convert_argument
from pyql.environment.sparql import SparqlEnvironment
from pyql.builder.terms import Variable

FB = "http://rdf.freebase.com/ns/"
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
BACKENDS = ("rdflib", "oxigraph", "virtuoso")
RDFLIB_DEFAULT_MAX = 100_000
CONSTRUCT = {"add_fact", "add_type_constrain", "add_max", "add_min", "add_count", "add_sum", "add_avg",
             "add_filter", "add_time_constrain", "add_compare", "set_answer"}


# ---------------------------------------------------------------------------
# Chain templates
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """A chain of actions from one start entity ``{e}``.

    ``start`` is (direction, relation): the entity must be the subject
    ("out") or the object ("in") of ``relation``.
    """

    name: str
    start: tuple[str, str]
    lines: tuple[str, ...]
    what: str


TEMPLATES: tuple[Template, ...] = (
    Template(
        "films_by_director",
        ("in", "film.film.directed_by"),
        (
            "get_relation({e})",
            "add_fact(?film, film.film.directed_by, {e})",
            "add_fact(?film, film.film.initial_release_date, ?date)",
            "add_filter(?date, >=, 1950-01-01)",
            "add_max(?date)",
            "set_answer(?film)",
            "execute()",
        ),
        "one-hop from a person hub, filter on a date, argmax",
    ),
    Template(
        "youngest_of_gender",
        ("in", "people.person.gender"),
        (
            "add_fact(?person, people.person.gender, {e})",
            "add_fact(?person, people.person.date_of_birth, ?dob)",
            "add_max(?dob)",
            "add_count(?person, ?n)",
            "execute()",
        ),
        "the biggest hub (a gender), argmax, count after argmax",
    ),
    Template(
        "films_of_genre_since_2000",
        ("in", "film.film.genre"),
        (
            "get_relation({e})",
            "add_fact(?film, film.film.genre, {e})",
            "add_fact(?film, film.film.initial_release_date, ?date)",
            "add_filter(?date, >=, 2000-01-01)",
            "add_count(?film, ?n)",
            "execute()",
        ),
        "one-hop from a genre hub, filter, count",
    ),
    Template(
        "office_holders_in_2000",
        ("in", "government.government_position_held.basic_title"),
        (
            "add_fact(?pos, government.government_position_held.basic_title, {e})",
            "get_relation(?pos)",
            "add_fact(?pos, government.government_position_held.office_holder, ?person)",
            (
                "add_time_constrain(?pos, government.government_position_held.from, "
                "government.government_position_held.to, 2000-12-31, 2000-01-01)"
            ),
            "set_answer(?person)",
            "execute()",
        ),
        "two hops through a CVT (position held), time constraint",
    ),
    Template(
        "latest_population",
        ("out", "location.statistical_region.population"),
        (
            "get_relation({e})",
            "add_fact({e}, location.statistical_region.population, ?pop)",
            "get_relation(?pop)",
            "add_fact(?pop, measurement_unit.dated_integer.year, ?year)",
            "add_fact(?pop, measurement_unit.dated_integer.number, ?number)",
            "add_max(?year)",
            "set_answer(?number)",
            "execute()",
        ),
        "a place's dated populations (CVT), argmax on the year",
    ),
    Template(
        "latest_film_of_actor",
        ("out", "film.actor.film"),
        (
            "get_relation({e})",
            "add_fact({e}, film.actor.film, ?perf)",
            "add_fact(?film, film.film.starring, ?perf)",
            "add_fact(?film, film.film.initial_release_date, ?date)",
            "add_max(?date)",
            "set_answer(?film)",
            "execute()",
        ),
        "two hops through a CVT (performance), argmax",
    ),
)


@dataclass(frozen=True)
class Chain:
    template: str
    entity: str
    degree: int  # edges of the start relation at the entity
    rank: str  # "top1", "top2", "median"
    lines: tuple[str, ...]


# ---------------------------------------------------------------------------
# KBs and start entities
# ---------------------------------------------------------------------------


def kb_path(workdir: Path, size: int, seed: int) -> Path:
    return workdir / f"kb_{size}_s{seed}.nt"


def ensure_kb(workdir: Path, size: int, seed: int, log: Callable[[str], None]) -> tuple[Path, dict]:
    """Generate the KB (and its metadata) unless a complete copy is cached."""
    path = kb_path(workdir, size, seed)
    meta_path = path.with_name(path.name + ".meta.json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("triples") == size and meta.get("seed") == seed:
            log(f"reusing {path}")
            return path, meta
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"generating {path} ...")
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gen_kb.py"), "--triples", str(size), "--out", str(path),
         "--seed", str(seed), "--meta"],
        check=True, stdout=subprocess.DEVNULL,
    )
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    log(f"  {meta['triples']} triples, {meta['topics']} topics, {meta['cvts']} CVTs in {meta['seconds']} s")
    return path, meta


def _is_topic(mid: str) -> bool:
    return len(mid) == 9  # m.0 + 6 letters (CVT mids are two letters longer)


def start_entities(path: Path) -> dict[str, list[tuple[str, int]]]:
    """For every template start (direction, relation): entities and edge counts, most first."""
    cache = path.with_name(path.name + ".bench-entities.json")
    key = sorted({f"{d} {r}" for d, r in (t.start for t in TEMPLATES)})
    if cache.exists() and cache.stat().st_mtime >= path.stat().st_mtime:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if sorted(data) == key:
            return data
    wanted = {f"<{FB}{r}>": (d, r) for d, r in (t.start for t in TEMPLATES)}
    counts: dict[str, Counter] = {k: Counter() for k in key}
    cut = len(FB) + 1
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            s, p, rest = line.split(" ", 2)
            hit = wanted.get(p)
            if hit is None:
                continue
            direction, relation = hit
            node = s if direction == "out" else rest[: rest.rindex(" .")]
            if not node.startswith("<"):
                continue
            mid = node[cut:-1]
            if _is_topic(mid):
                counts[f"{direction} {relation}"][mid] += 1
    data = {k: sorted(c.items(), key=lambda kv: (-kv[1], kv[0])) for k, c in counts.items()}
    cache.write_text(json.dumps(data), encoding="utf-8")
    return data


def make_chains(entities: dict[str, list], per_template: int) -> list[Chain]:
    chains = []
    for t in TEMPLATES:
        ranked = entities.get(f"{t.start[0]} {t.start[1]}", [])
        if not ranked:
            continue
        picks: list[tuple[str, list]] = [(f"top{i + 1}", ranked[i]) for i in range(min(per_template - 1, len(ranked)))]
        if per_template >= 1:
            median = ranked[len(ranked) // 2]
            if all(median[0] != p[1][0] for p in picks):
                picks.append(("median", median))
        for rank, (mid, degree) in picks[:per_template]:
            chains.append(Chain(t.name, mid, degree, rank, tuple(line.replace("{e}", mid) for line in t.lines)))
    return chains


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt(value: float, digits: int = 1) -> str:
    if math.isnan(value):
        return "–"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


# ---------------------------------------------------------------------------
# Compile time
# ---------------------------------------------------------------------------


def _converted(line: str) -> tuple[str, list[Any]]:
    call = parse_action(line)
    actions = SparqlActions()
    spec = actions.check_arity(call.name, len(call.args))
    args = [
        convert_argument(FREEBASE, p.kind, a, call.name, p.name, i) for i, (p, a) in enumerate(zip(spec.params, call.args))
    ]
    return call.name, args


def bench_compile(chains: list[Chain], reps: int) -> dict[str, dict[str, list[float]]]:
    """Per action: times (ms) of build+sparql(), and of building the observation query."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    seen_templates: set[str] = set()
    clock = time.perf_counter_ns
    for chain in chains:
        if chain.template in seen_templates:
            continue  # the same shapes with another entity: nothing new to compile
        seen_templates.add(chain.template)
        q = Query(FREEBASE)
        for line in chain.lines:
            name, args = _converted(line)
            if name == "get_relation":
                target = args[0]
                context = q if isinstance(target, Variable) else None
                for _ in range(reps):
                    t0 = clock()
                    probes.relations_query(target, context, FREEBASE)
                    out["get_relation"]["build"].append((clock() - t0) / 1e6)
                continue
            if name == "execute":
                for _ in range(reps):
                    t0 = clock()
                    probes.rows_query(q, 1001)
                    out["execute"]["build"].append((clock() - t0) / 1e6)
                continue
            method = getattr(q, name)
            gc.disable()
            try:
                for _ in range(reps):
                    t0 = clock()
                    new = method(*args)
                    t1 = clock()
                    new.sparql()
                    t2 = clock()
                    probes.observation_query(new)
                    t3 = clock()
                    out[name]["add"].append((t1 - t0) / 1e6)
                    out[name]["build"].append((t2 - t0) / 1e6)
                    out[name]["observe"].append((t3 - t2) / 1e6)
            finally:
                gc.enable()
            q = method(*args)
    return out


def compile_table(results: dict[str, dict[str, list[float]]]) -> str:
    order = [a for a in ("add_fact", "add_filter", "add_max", "add_count", "add_time_constrain", "set_answer") if a in results]
    lines = [
        "| step | calls | add step: median ms | add step + `.sparql()`: median ms | p95 ms | observation query text: median ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    every_build: list[float] = []
    every_obs: list[float] = []
    for action in order:
        r = results[action]
        every_build += r["build"]
        every_obs += r["observe"]
        lines.append(
            f"| {action} | {len(r['build'])} | {med(r['add']):.3f} | {med(r['build']):.3f} | {pct(r['build'], .95):.3f} "
            f"| {med(r['observe']):.3f} | {pct(r['observe'], .95):.3f} |"
        )
    lines.append(
        f"| **all construction steps** | {len(every_build)} | | **{med(every_build):.3f}** | **{pct(every_build, .95):.3f}** "
        f"| {med(every_obs):.3f} | {pct(every_obs, .95):.3f} |"
    )
    for action, label in (("get_relation", "get_relation (relations query text)"), ("execute", "execute (rows query text)")):
        if action in results:
            r = results[action]["build"]
            lines.append(f"| {label} | {len(r)} | | {med(r):.3f} | {pct(r, .95):.3f} | | |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Compile ratio: pyql against a string builder in the way of QueryAgent
# ---------------------------------------------------------------------------

_NUMBER_TEXT = re.compile(r"^[-+]?\d+(\.\d+)?$")


class StringBuilderPyQL:
    """The baseline of ``--compile-ratio``: SPARQL by string concatenation.

    A minimal builder written for this benchmark in the way QueryAgent's
    ``PyQL`` class (github.com/cdhx/QueryAgent, ``sparql_generator.py``)
    builds its text: a mutable object appends one line per step to a list
    (after normalising the entity and relation text with prefix checks and a
    number regex), an argmax appends ORDER BY / LIMIT lines, a count or
    ``set_answer`` replaces the head, and ``sparql()`` joins the lists and
    tidies blank lines with ``str.replace``. No scope, no validation of
    variables, no immutability: the cheapest way to get query text.

    Example:
        >>> b = StringBuilderPyQL()
        >>> b.add_fact("?film", "film.film.directed_by", "m.06pj8")
        >>> b.set_answer("?film")
        >>> b.sparql().splitlines()
        ['SELECT DISTINCT ?film {', '\\t?film :film.film.directed_by :m.06pj8.', '}']
    """

    def __init__(self) -> None:
        self.head = "SELECT *"
        self.patterns: list[str] = []
        self.modifiers: list[str] = []
        self.variables: list[str] = []

    @staticmethod
    def _entity(text: object) -> str:
        text = str(text).strip()
        if text.startswith(("?", ":m.", ":g.")) or _NUMBER_TEXT.match(text) or "^^xsd:" in text:
            return text
        if text.startswith(("m.", "g.")):
            return ":" + text
        return "?" + "_".join(text.split())

    def _keep(self, *terms: str) -> None:
        self.variables = list(set(self.variables + [t for t in terms if t.startswith("?")]))

    def add_fact(self, s: str, p: str, o: str) -> None:
        s, o = self._entity(s), self._entity(o)
        p = p.strip() if p.strip().startswith(":") else ":" + p.strip()
        self.patterns += [f"{s} {p} {o}.", "\n"]
        self._keep(s, o)

    def add_filter(self, left: object, op: str, right: object) -> None:
        if op.strip() not in (">", ">=", "<", "<=", "=", "!="):
            raise ValueError(f"compare operator format error: {op}")
        self.patterns += [f"FILTER({self._entity(left)} {op.strip()} {self._entity(right)}).", "\n"]

    def add_max(self, var: str, offset: int = 0, limit: int = 1) -> None:
        self.modifiers += [f"ORDER BY DESC({self._entity(var)})", f"LIMIT {limit}"]
        if offset:
            self.modifiers.append(f"OFFSET {offset}")

    def add_count(self, var: str, new_var: str) -> None:
        self.head = f"SELECT (COUNT(DISTINCT {self._entity(var)}) AS {self._entity(new_var)})"
        self._keep(self._entity(new_var))

    def set_answer(self, var: str) -> None:
        if "(COUNT(" not in self.head:
            self.head = "SELECT DISTINCT " + self._entity(var)

    def sparql(self) -> str:
        body = ("\n" + "\n".join(self.patterns)).replace("\n", "\n\t")
        text = self.head + " {\n" + body + "\n}\n" + "\n".join(self.modifiers)
        return text.replace("\n\n", "\n").replace("\n\t\n\t", "\n\t").replace("\n\t\n}", "\n}")


#: The chain of ``--compile-ratio``: the films of a director with a budget
#: over a million, the one with the largest budget (a WebQSP shape: two
#: facts from an entity, a filter, an argmax, the answer). ``{e}`` is the
#: director: another entity on every repetition, as questions differ.
RATIO_CHAIN: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("add_fact", ("?film", "film.film.directed_by", "{e}")),
    ("add_fact", ("?film", "film.film.estimated_budget", "?budget")),
    ("add_filter", ("?budget", ">", 1000000)),
    ("add_max", ("?budget",)),
    ("set_answer", ("?film",)),
)


def _ratio_chains(reps: int) -> list[list[tuple[str, tuple[Any, ...]]]]:
    """:data:`RATIO_CHAIN` once per repetition, each from another entity (``m.0b00000``, ``m.0b00001`` ...)."""
    return [
        [(name, tuple(a.replace("{e}", f"m.0b{i:05d}") if isinstance(a, str) else a for a in args)) for name, args in RATIO_CHAIN]
        for i in range(reps)
    ]


def _pyql_chain(chain: list[tuple[str, tuple[Any, ...]]]) -> None:
    q = Query(FREEBASE)
    for name, args in chain:
        q = getattr(q, name)(*args)
        q.sparql()


def _string_chain(chain: list[tuple[str, tuple[Any, ...]]]) -> None:
    b = StringBuilderPyQL()
    for name, args in chain:
        getattr(b, name)(*args)
        b.sparql()


def bench_compile_ratio(reps: int) -> dict[str, float]:
    """Per-step medians (µs) of pyql and of the string builder on :data:`RATIO_CHAIN`, and their ratio.

    Each repetition times the whole chain (every step followed by
    ``.sparql()``) from a new entity once with each builder, alternating, so
    both see the same machine load; a step's time is the chain's divided by
    its length.

    Example:
        >>> r = bench_compile_ratio(20)
        >>> sorted(r), r["ratio"] > 1
        (['pyql_us', 'ratio', 'string_us'], True)
    """
    clock = time.perf_counter_ns
    timings: dict[str, list[float]] = {"pyql_us": [], "string_us": []}
    warm, *chains = _ratio_chains(reps + 1)
    for run in (_pyql_chain, _string_chain):
        run(warm)
    gc.disable()
    try:
        for chain in chains:
            for key, run in (("pyql_us", _pyql_chain), ("string_us", _string_chain)):
                t0 = clock()
                run(chain)
                timings[key].append((clock() - t0) / 1e3 / len(RATIO_CHAIN))
    finally:
        gc.enable()
    out = {key: statistics.median(values) for key, values in timings.items()}
    out["ratio"] = out["pyql_us"] / out["string_us"]
    return out


def ratio_report(result: dict[str, float], reps: int) -> str:
    """The ``--compile-ratio`` lines: the chain, both per-step medians and the ratio."""
    chain = ", ".join(f"{name}({', '.join(str(a) for a in args)})" for name, args in RATIO_CHAIN)
    return (
        f"chain ({len(RATIO_CHAIN)} steps, .sparql() after each, {reps} repetitions): {chain}\n"
        f"pyql Query:            {result['pyql_us']:.2f} µs per step (median)\n"
        f"string builder:        {result['string_us']:.2f} µs per step (median)\n"
        f"ratio pyql / string:   {result['ratio']:.1f}x\n"
    )


# ---------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------


class LoadBudgetExceeded(BaseException):  # not an Exception: RdflibKB wraps those
    pass


@contextlib.contextmanager
def time_budget(seconds: float):  # type: ignore[no-untyped-def]
    """Raise LoadBudgetExceeded in the main thread after ``seconds`` (SIGALRM)."""
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def handler(signum, frame):  # type: ignore[no-untyped-def]
        raise LoadBudgetExceeded

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def rss_mb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


@dataclass
class Loaded:
    kb: Any
    seconds: float
    note: str = ""
    cleanup: Callable[[], None] | None = None


def load_rdflib(path: Path, budget: float) -> Loaded:
    from pyql.kb.rdflib_backend import RdflibKB

    t0 = time.perf_counter()
    with time_budget(budget):
        kb = RdflibKB(path)
    return Loaded(kb, time.perf_counter() - t0)


def load_oxigraph(path: Path, store: str, workdir: Path) -> Loaded:
    import pyoxigraph as ox

    from pyql.kb.oxigraph_backend import OxigraphKB

    cleanup = None
    t0 = time.perf_counter()
    if store == "disk":
        directory = workdir / f"oxigraph-{path.stem}-{os.getpid()}"
        shutil.rmtree(directory, ignore_errors=True)
        kb = OxigraphKB(ox.Store(str(directory)))

        def cleanup() -> None:
            kb.store.flush()
            shutil.rmtree(directory, ignore_errors=True)
    else:
        kb = OxigraphKB(ox.Store())
    kb.load(path)
    if store == "disk":
        kb.store.optimize()
    return Loaded(kb, time.perf_counter() - t0, note=store, cleanup=cleanup)


def load_virtuoso(server: Any, path: Path, size: int) -> Loaded:
    from pyql.kb.endpoint_backend import EndpointKB

    graph = f"http://pyql.bench/kb_{size}"
    t0 = time.perf_counter()
    count = server.load_turtle(path, graph, timeout=1800)
    seconds = time.perf_counter() - t0
    if count != size:
        raise RuntimeError(f"Virtuoso holds {count} triples in <{graph}>, expected {size}")
    return Loaded(EndpointKB(server.endpoint, default_graph=graph, timeout=300), seconds)


def _virtuoso_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("tests.virtuoso", ROOT / "tests" / "virtuoso.py")
    assert spec is not None and spec.loader is not None
    if "tests.virtuoso" in sys.modules:
        return sys.modules["tests.virtuoso"]
    module = importlib.util.module_from_spec(spec)
    sys.modules["tests.virtuoso"] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# Running chains
# ---------------------------------------------------------------------------


@dataclass
class StepTime:
    template: str
    entity: str
    rank: str
    index: int
    action: str
    ms: float
    kb_ms: float
    queries: int
    ok: bool
    error: str | None


def run_chain(kb: Any, chain: Chain) -> list[StepTime]:
    env = SparqlEnvironment(kb, entities={chain.entity: chain.entity})
    out = []
    for index, line in enumerate(chain.lines, 1):
        t0 = time.perf_counter()
        record = env.step(line)
        ms = (time.perf_counter() - t0) * 1000
        out.append(
            StepTime(
                chain.template, chain.entity, chain.rank, index, record.action or "?", ms,
                record.seconds * 1000, record.kb_queries, record.ok, record.error,
            )
        )
        if env.done:
            break
    return out


@dataclass
class Cell:
    """Results of one backend on one size."""

    size: int
    backend: str
    load_s: float | None = None
    load_note: str = ""
    steps: list[StepTime] = field(default_factory=list)
    skipped: str | None = None
    run_s: float = 0.0
    rss_mb: float | None = None
    trivial_ms: float = float("nan")

    def times(self, which: str) -> list[float]:
        if which == "construct":
            return [s.ms for s in self.steps if s.action in CONSTRUCT]
        return [s.ms for s in self.steps if s.action == which]

    def overhead(self) -> list[float]:
        """Per construction step: wall time minus the time inside the KB (parse, build, compile, observation text)."""
        return [s.ms - s.kb_ms for s in self.steps if s.action in CONSTRUCT]

    def queries_per_step(self) -> float:
        return sum(s.queries for s in self.steps) / len(self.steps) if self.steps else float("nan")


def trivial_query_ms(kb: Any, n: int = 30) -> float:
    """Median time of a query that touches no data: the engine's per-query floor."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        kb.select("SELECT (1 AS ?one) WHERE {}")
        times.append((time.perf_counter() - t0) * 1000)
    return med(times)


def run_cell(
    kb: Any, chains: list[Chain], warmup: int, repeat: int, warm_chains: int | None = None,
    log: Callable[[str], None] | None = None,
) -> list[StepTime]:
    for _ in range(warmup):
        for chain in chains[:warm_chains]:
            run_chain(kb, chain)
    out: list[StepTime] = []
    for _ in range(repeat):
        for chain in chains:
            steps = run_chain(kb, chain)
            out.extend(steps)
            if log:
                log(f"    {chain.template} {chain.entity}: " + ", ".join(f"{s.action} {s.ms:.0f}" for s in steps) + " ms")
    return out


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def size_label(size: int) -> str:
    exp = len(str(size)) - 1
    return f"10^{exp}" if size == 10**exp else f"{size:,}"


def main_table(cells: list[Cell]) -> str:
    lines = [
        (
            "| triples | backend | load s | median step ms | p95 step ms | max step ms | median get_relation ms "
            "| median execute ms | KB queries/step | pyql overhead/step ms | empty query ms | steps (undone) |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in cells:
        if c.skipped:
            lines.append(
                f"| {size_label(c.size)} | {c.backend} | {c.load_note or '–'} | – | – | – | – | – | – | – | – | skipped: {c.skipped} |"
            )
            continue
        steps = c.times("construct")
        bad = sum(1 for s in c.steps if not s.ok)
        load = fmt(c.load_s or float("nan")) + (f" ({c.load_note})" if c.load_note else "")
        lines.append(
            f"| {size_label(c.size)} | {c.backend} | {load} | {fmt(med(steps))} | {fmt(pct(steps, .95))} | {fmt(max(steps) if steps else float('nan'))} "
            f"| {fmt(med(c.times('get_relation')))} | {fmt(med(c.times('execute')))} | {c.queries_per_step():.2f} "
            f"| {med(c.overhead()):.2f} | {fmt(c.trivial_ms, 2)} | {len(c.steps)} ({bad}) |"
        )
    return "\n".join(lines)


def action_table(cells: list[Cell]) -> str:
    live = [c for c in cells if not c.skipped and c.steps]
    if not live:
        return ""
    actions = [a for a in ("get_relation", "add_fact", "add_filter", "add_max", "add_count", "add_time_constrain", "set_answer", "execute")
               if any(s.action == a for c in live for s in c.steps)]
    head = "| step (median ms) | " + " | ".join(f"{c.backend} {size_label(c.size)}" for c in live) + " |"
    lines = [head, "|---|" + "---:|" * len(live)]
    for a in actions:
        lines.append(f"| {a} | " + " | ".join(fmt(med(c.times(a))) for c in live) + " |")
    return "\n".join(lines)


def template_table(cells: list[Cell], chains_by_size: dict[int, list[Chain]]) -> str:
    """Per chain template: median and max of its construction steps at the largest size measured."""
    live = [c for c in cells if not c.skipped and c.steps]
    if not live:
        return ""
    size = max(c.size for c in live)
    picked = [c for c in live if c.size == size]
    head = "| chain | what | start entities (edges) | " + " | ".join(f"{c.backend}: median / max step ms" for c in picked) + " |"
    lines = [head, "|---|---|---|" + "---:|" * len(picked)]
    for t in TEMPLATES:
        ents = ", ".join(f"{ch.entity} ({ch.degree})" for ch in chains_by_size.get(size, []) if ch.template == t.name)
        cols = []
        for c in picked:
            ms = [s.ms for s in c.steps if s.template == t.name and s.action in CONSTRUCT]
            cols.append(f"{fmt(med(ms))} / {fmt(max(ms) if ms else float('nan'))}")
        lines.append(f"| {t.name} | {t.what} | {ents} | " + " | ".join(cols) + " |")
    return "\n".join(lines)


def machine_info() -> dict[str, str]:
    import pyoxigraph
    import rdflib
    import SPARQLWrapper

    info = {
        "nproc": str(os.cpu_count()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "rdflib": rdflib.__version__,
        "pyoxigraph": pyoxigraph.__version__,
        "SPARQLWrapper": SPARQLWrapper.__version__,
    }
    with contextlib.suppress(OSError), open("/proc/meminfo", encoding="ascii") as f:
        kb = int(f.readline().split()[1])
        info["memory"] = f"{kb / 1024 / 1024:.1f} GiB"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(Exception):
        cpus = len(os.sched_getaffinity(0))
        info["nproc"] = str(cpus)
    with contextlib.suppress(Exception):
        found = _virtuoso_module().find_virtuoso()
        if found:
            text = subprocess.run([found[0], "-?"], capture_output=True, text=True, timeout=10, check=False)
            for line in (text.stdout + text.stderr).splitlines():
                if "Version" in line:
                    info["virtuoso"] = line.strip()
                    break
    return info


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def parse_sizes(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/pyql-bench"), help="KB cache (default /tmp/pyql-bench)")
    parser.add_argument("--sizes", type=parse_sizes, default=list(DEFAULT_SIZES), help="e.g. 1e4,1e5,1e6 (default)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma list of rdflib,oxigraph,virtuoso (default all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--entities", type=int, default=3, help="start entities per chain template (default 3: two hubs, one median)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured passes over the chains first (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="measured passes over the chains (default 1)")
    parser.add_argument("--compile-reps", type=int, default=2000, help="repetitions per step in the compile benchmark")
    parser.add_argument("--compile-ratio", action="store_true",
                        help="only time pyql against a string builder on one 5-step chain (no KB) and print the ratio")
    parser.add_argument("--ratio-reps", type=int, default=5000, help="repetitions of the chain for --compile-ratio (default 5000)")
    parser.add_argument("--rdflib-large", action="store_true", help=f"also run rdflib above {RDFLIB_DEFAULT_MAX} triples")
    parser.add_argument("--rdflib-budget", type=float, default=300, help="abort an rdflib load after this many seconds (with --rdflib-large)")
    parser.add_argument("--oxigraph-store", choices=("memory", "disk"), default="memory")
    parser.add_argument("--virtuoso-buffers", type=int, default=170_000, help="Virtuoso NumberOfBuffers (8 KB pages)")
    parser.add_argument("--no-compile", action="store_true", help="skip the compile benchmark")
    parser.add_argument("--verbose", "-v", action="store_true", help="log every chain's step times")
    parser.add_argument("--json", type=Path, help="write raw results here")
    parser.add_argument("--markdown", type=Path, help="also write the tables here")
    return parser


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _load(backend: str, args: argparse.Namespace, path: Path, size: int, server: Any) -> Loaded:
    if backend == "rdflib":
        return load_rdflib(path, args.rdflib_budget if args.rdflib_large else 0)
    if backend == "oxigraph":
        return load_oxigraph(path, args.oxigraph_store, args.workdir)
    return load_virtuoso(server, path, size)


def _measure_cell(cell: Cell, args: argparse.Namespace, path: Path, chains: list[Chain], server: Any) -> None:
    """Load one backend at one size and run the chains on it (``cell`` filled in, or marked skipped)."""
    backend, size = cell.backend, cell.size
    _log(f"[{size_label(size)} {backend}] loading ...")
    gc.collect()
    rss0 = rss_mb()
    try:
        loaded = _load(backend, args, path, size, server)
    except LoadBudgetExceeded:
        cell.skipped = f"rdflib did not load within {args.rdflib_budget:.0f} s"
        cell.load_note = f"> {args.rdflib_budget:.0f}"
        gc.collect()
        _log(f"  {cell.skipped}")
        return
    cell.load_s = loaded.seconds
    cell.load_note = "" if backend != "oxigraph" else loaded.note
    if backend != "virtuoso":
        cell.rss_mb = rss_mb() - rss0
    _log(f"  loaded in {loaded.seconds:.1f} s; running {len(chains)} chains ...")
    t0 = time.perf_counter()
    try:
        cell.trivial_ms = trivial_query_ms(loaded.kb)
        # rdflib is slow and has no cache worth warming: warm it up on one chain only
        warm = 1 if backend == "rdflib" else None
        cell.steps = run_cell(loaded.kb, chains, args.warmup, args.repeat, warm, _log if args.verbose else None)
    finally:
        if loaded.cleanup:
            loaded.cleanup()
        loaded.kb.close()
        del loaded
        gc.collect()
    cell.run_s = time.perf_counter() - t0
    steps = cell.times("construct")
    _log(f"  {len(cell.steps)} steps in {cell.run_s:.1f} s; median step {med(steps):.1f} ms, p95 {pct(steps, .95):.1f} ms")


def _run_cells(
    args: argparse.Namespace, backends: list[str], sizes: list[int], kbs: dict[int, Path], chains_by_size: dict[int, list[Chain]]
) -> list[Cell]:
    """Every backend at every size (Virtuoso started once when asked for and installed)."""
    cells: list[Cell] = []
    with contextlib.ExitStack() as stack:
        server = None
        if "virtuoso" in backends:
            vmod = _virtuoso_module()
            if vmod.find_virtuoso() is None:
                _log("Virtuoso is not installed; skipping it. " + vmod.INSTALL_HINT)
            else:
                _log("starting Virtuoso ...")
                server = stack.enter_context(
                    vmod.VirtuosoServer(
                        workdir=args.workdir, number_of_buffers=args.virtuoso_buffers,
                        max_dirty_buffers=args.virtuoso_buffers * 3 // 4, query_timeout=300,
                    )
                )
        for size in sizes:
            for backend in backends:
                cell = Cell(size, backend)
                cells.append(cell)
                if backend == "rdflib" and size > RDFLIB_DEFAULT_MAX and not args.rdflib_large:
                    cell.skipped = f"rdflib above {RDFLIB_DEFAULT_MAX:,} triples only with --rdflib-large (10^6: ~45 s and ~1.3 GB to load)"
                elif backend == "virtuoso" and server is None:
                    cell.skipped = "Virtuoso not installed"
                else:
                    _measure_cell(cell, args, kbs[size], chains_by_size[size], server)
    return cells


def _report_text(
    command: str, total: float, info: dict[str, str], compile_results: Any, cells: list[Cell], chains_by_size: dict[int, list[Chain]]
) -> str:
    out = io.StringIO()
    out.write(f"Command: `{command}` (total {total / 60:.1f} min)\n\n")
    out.write("Machine: " + ", ".join(f"{k} {v}" for k, v in info.items()) + "\n\n")
    if compile_results is not None:
        out.write("### Compile time per step (no KB)\n\n" + compile_table(compile_results) + "\n\n")
    out.write("### Step time (query + observation) per KB size and backend\n\n" + main_table(cells) + "\n\n")
    table = action_table(cells)
    if table:
        out.write("### Median ms per step kind\n\n" + table + "\n\n")
    table = template_table(cells, chains_by_size)
    if table:
        size = max(c.size for c in cells if not c.skipped and c.steps)
        out.write(f"### Per chain at {size_label(size)} triples\n\n" + table + "\n")
    return out.getvalue()


def _raw_json(command: str, info: dict[str, str], compile_results: Any, cells: list[Cell], chains_by_size: dict[int, list[Chain]]) -> str:
    return json.dumps(
        {
            "command": command,
            "machine": info,
            "compile": {a: {k: v for k, v in r.items()} for a, r in (compile_results or {}).items()},
            "cells": [
                {
                    "size": c.size, "backend": c.backend, "load_s": c.load_s, "load_note": c.load_note,
                    "skipped": c.skipped, "run_s": c.run_s, "rss_mb": c.rss_mb, "trivial_ms": c.trivial_ms,
                    "steps": [s.__dict__ for s in c.steps],
                }
                for c in cells
            ],
            "chains": {str(k): [ch.__dict__ for ch in v] for k, v in chains_by_size.items()},
        },
        indent=1,
    )


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    command = "PYTHONPATH=. python benchmarks/bench_core.py" + ("" if argv is None and len(sys.argv) == 1 else " " + " ".join(sys.argv[1:] if argv is None else argv))
    if args.compile_ratio:
        info = machine_info()
        print(f"Command: `{command}`\nMachine: " + ", ".join(f"{k} {v}" for k, v in info.items()) + "\n")
        print(ratio_report(bench_compile_ratio(args.ratio_reps), args.ratio_reps), end="")
        return 0
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(sorted(unknown))}; use {', '.join(BACKENDS)}")
    sizes = sorted(args.sizes)
    started = time.perf_counter()
    kbs: dict[int, Path] = {}
    chains_by_size: dict[int, list[Chain]] = {}
    for size in sizes:
        path, _meta = ensure_kb(args.workdir, size, args.seed, _log)
        kbs[size] = path
        chains_by_size[size] = make_chains(start_entities(path), args.entities)
        _log(f"  {len(chains_by_size[size])} chains at {size_label(size)}")
    compile_results = None
    if not args.no_compile:
        _log(f"compile benchmark ({args.compile_reps} reps per step) ...")
        compile_results = bench_compile(chains_by_size[sizes[-1]], args.compile_reps)
    cells = _run_cells(args, backends, sizes, kbs, chains_by_size)
    total = time.perf_counter() - started
    info = machine_info()
    text = _report_text(command, total, info, compile_results, cells, chains_by_size)
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(_raw_json(command, info, compile_results, cells, chains_by_size), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
