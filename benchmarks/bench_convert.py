"""Benchmark ``pyql convert``: how many items of each source convert, why the others are refused, and how fast.

Run from the repository root::

    PYTHONPATH=. PYQL_SHARED_DATA=../shared/data python benchmarks/bench_convert.py [--forms 2000] [--agentbench-data DIR]

Sources: the 1,639 WebQSP legacy programs and gold SPARQL queries (shared
data), the CWQ fixtures' gold SPARQL (tests/data/cwq), the GrailQA dev
records' S-expressions and gold SPARQL (tests/data/grailqa), the bundled MarkQA-style
programs of the Wikidata demo (pyql/data/wikidata_questions.jsonl), and
``--forms`` S-expressions drawn at random (seeded) from the grammar the
format reads. For each direction: items converted, items refused (counted
by error kind, with one example message), and items per second (the median
of three passes). Prints a markdown table.

With ``--flat N [N ...]`` it measures instead what one large item costs:
a flat ``(AND (JOIN r.aI m.xI) ...)`` of N conjuncts converted by the real
command (``python -m pyql.cli convert``, one process per conversion) to
SPARQL, actions and an S-expression, with the process's peak memory
(``ru_maxrss``) and seconds. Issue 35, item 7: before, the SPARQL output
kept the text of every prefix of the query (1,600 conjuncts 178 MB, 6,400
1.9 GB, 40,000 killed at 19 GB)::

    PYTHONPATH=. python benchmarks/bench_convert.py --flat 1600 6400 40000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Iterable, Union

from agent.evaluation.datasets.agentbench_kg import gold_trajectory
from pyql.errors import PyQLError
from pyql.interchange import convert

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PYQL_SHARED_DATA") or ROOT.parent / "shared" / "data")
RELATIONS = ["a.b.c", "film.film.genre", "people.person.nationality", "location.location.containedby"]
CLASSES = ["film.film", "people.person", "location.country"]
#: An item: its text, or its text and its linked entities (name → id).
Item = Union[str, tuple[str, dict[str, str]]]
DATE = "^^http://www.w3.org/2001/XMLSchema#date"


def random_set(rng: random.Random, depth: int) -> str:
    """One random set-valued S-expression (JOIN/R/AND/OR/comparison/TC), at most ``depth`` deep."""
    relation = rng.choice(RELATIONS)
    if rng.random() < 0.3:
        relation = f"(R {relation})"
    if depth == 0:
        return f"(JOIN {relation} m.0{rng.randint(0, 99)})"
    kind = rng.randrange(6)
    if kind == 5:
        return f"(OR {random_set(rng, depth - 1)} {random_set(rng, depth - 1)})"
    if kind == 0:
        return f"(JOIN {relation} {random_set(rng, depth - 1)})"
    if kind == 1:
        return f"(AND {rng.choice(CLASSES)} {random_set(rng, depth - 1)})"
    if kind == 2:
        return f"(AND {random_set(rng, depth - 1)} {random_set(rng, depth - 1)})"
    if kind == 3:
        op = rng.choice(["lt", "le", "gt", "ge"])
        return f"({op} {rng.choice(RELATIONS)} {1990 + rng.randint(0, 30)}-01-01{DATE})"
    return f"(TC {random_set(rng, depth - 1)} a.held.from {1990 + rng.randint(0, 30)})"


def random_forms(count: int, seed: int = 11) -> list[str]:
    """``count`` random forms: sets, COUNT of a set, ARGMAX/ARGMIN of a set."""
    rng = random.Random(seed)
    forms = []
    for _ in range(count):
        body = random_set(rng, rng.randint(0, 3))
        top = rng.random()
        if top < 0.15:
            body = f"(COUNT {body})"
        elif top < 0.3:
            body = f"({rng.choice(['ARGMAX', 'ARGMIN'])} {body} {rng.choice(RELATIONS)})"
        forms.append(body)
    return forms


def sources(forms: int, agentbench_data: Path | None = None) -> dict[str, tuple[str, list[Item]]]:
    """source name → (its format, its items)."""
    out: dict[str, tuple[str, list[Item]]] = {}
    webqsp = SHARED / "webqsp" / "WebQSP_test_processed.json"
    if webqsp.exists():
        out["WebQSP programs"] = ("legacy", [r["PyQL"] for r in json.loads(webqsp.read_text())])
    if webqsp.exists():
        out["WebQSP gold SPARQL"] = ("sparql", [r["sparql_query"] for r in json.loads(webqsp.read_text())])
    cwq = [json.loads((ROOT / "tests" / "data" / "cwq" / name).read_text()) for name in ("cwq_tog.json", "ComplexWebQuestions_sample.json")]
    out["CWQ gold SPARQL (fixtures)"] = ("sparql", [r["sparql"] for part in cwq for r in (part if isinstance(part, list) else [part])])
    grail = json.loads((ROOT / "tests" / "data" / "grailqa" / "grailqa_v1.0_dev.json").read_text())
    out["GrailQA dev forms"] = ("sexpr", [r["s_expression"] for r in grail])
    out["GrailQA dev gold SPARQL"] = ("sparql", [r["sparql_query"] for r in grail])
    agentbench = json.loads((ROOT / "tests" / "data" / "agentbench" / "kg_dev.json").read_text())
    out["AgentBench KG actions (fixture)"] = ("agentbench", [(gold_trajectory(r["actions"]), r["entities"]) for r in agentbench])
    for name in ("dev", "std", "kg_rl_all") if agentbench_data else ():
        records = json.loads((agentbench_data / f"{name}.json").read_text())  # type: ignore[operator]
        out[f"AgentBench KG actions ({name}.json)"] = ("agentbench", [(gold_trajectory(r["actions"]), r["entities"]) for r in records])
    demo = ROOT / "pyql" / "data" / "wikidata_questions.jsonl"
    out["Wikidata demo programs"] = ("markqa", [json.loads(line)["markqa"] for line in demo.read_text().splitlines() if line.strip()])
    out[f"random forms ({forms})"] = ("sexpr", random_forms(forms))
    return out


def _shape(message: str) -> str:
    """A refusal's message with its variables, ids, relations and numbers blanked, to count alike ones together."""
    message = re.sub(r"^line \d+(, column \d+)?: |\((?:[^()]|\([^()]*\))*\)$", "", message)
    return re.sub(r"\?\w+|<[^>]*>|\b[mg]\.\w+|\b\w+(\.\w+){2,}|\b[QP]\d+|'[^']*'|\d[\d-]*", "…", message)[:70]


def run(items: Iterable[Item], source: str, target: str, profile: str) -> tuple[int, Counter[str], dict[str, str], float]:
    """Convert every item; the count converted, refusals by kind (one example each), items per second."""
    items = list(items)
    refused: Counter[str] = Counter()
    example: dict[str, str] = {}
    rates = []
    for _ in range(3):
        done, refused, start = 0, Counter(), time.perf_counter()
        for item in items:
            text, entities = item if isinstance(item, tuple) else (item, None)
            try:
                convert(text, source, target, entities=entities, profile=profile)
                done += 1
            except PyQLError as exc:
                reason = f"{exc.kind}: {_shape(str(exc))}"
                refused[reason] += 1
                example.setdefault(reason, str(exc)[:90])
        rates.append(len(items) / max(time.perf_counter() - start, 1e-9))
    return done, refused, example, statistics.median(rates)


def flat_and(size: int) -> str:
    """A flat AND of ``size`` joins, each with its own relation and entity (about 25 bytes a conjunct)."""
    return "(AND " + " ".join(f"(JOIN r.a{i} m.x{i})" for i in range(size)) + ")\n"


def peak_of_convert(path: Path, target: str) -> tuple[float, float, int]:
    """``pyql convert --from sexpr --to TARGET FILE`` in its own process: its peak memory (MB), seconds, exit status."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "pyql.cli", "convert", "--from", "sexpr", "--to", target, str(path)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - start, child.returncode


def flat_table(sizes: list[int]) -> None:
    """The peak memory and time of converting one flat AND of each size (see the module docstring)."""
    print("| conjuncts | input | to | peak memory | seconds | exit |")
    print("| ---: | ---: | --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = Path(tmp) / f"and{size}.txt"
            path.write_text(flat_and(size), encoding="utf-8")
            for target in ("sparql", "actions", "sexpr"):
                peak, seconds, code = peak_of_convert(path, target)
                print(f"| {size:,} | {path.stat().st_size / 1024:,.0f} KB | {target} | {peak:,.0f} MB | {seconds:.1f} | {code} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forms", type=int, default=2000, help="random S-expressions to convert")
    parser.add_argument("--agentbench-data", type=Path, help="AgentBench's data/knowledgegraph/ (dev, std, kg_rl_all .json), if you have it")
    parser.add_argument("--flat", type=int, nargs="+", metavar="N",
                        help="instead: the peak memory and time of converting one flat AND of N conjuncts (each N)")
    args = parser.parse_args()
    if args.flat:
        flat_table(args.flat)
        return
    print("| source | from → to | items | converted | refused (kind: count) | items/s |")
    print("| --- | --- | ---: | ---: | --- | ---: |")
    for name, (fmt, items) in sources(args.forms, args.agentbench_data).items():
        profile = "wikidata" if fmt == "markqa" else "freebase"
        targets = ["actions", "sparql", "sexpr"]
        for target in targets:
            done, refused, example, rate = run(items, fmt, target, profile)
            why = "; ".join(f"{n}× {k}" for k, n in refused.most_common(3)) or "none"
            print(f"| {name} | {fmt} → {target} | {len(items)} | {done} | {why} | {rate:,.0f} |")
        if fmt == "sexpr":
            actions: list[Item] = [convert(i, "sexpr", "actions") for i in items if isinstance(i, str)]
            done, refused, example, rate = run(actions, "actions", "sexpr", profile)
            why = "; ".join(f"{k}: {n}" for k, n in refused.most_common()) or "none"
            print(f"| {name} (as actions) | actions → sexpr | {len(actions)} | {done} | {why} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
