"""The answers of bench_core's chains, to check that a change to pyql changes no answer.

Runs the 17 chains of ``benchmarks/bench_core.py`` (same synthetic KB, same
start entities) through ``SparqlEnvironment.step`` on Oxigraph in memory and
writes, per chain, every step's (ok, error) and the final answers as JSON;
``--compare`` prints the chains whose record differs between two such files.
Run it with the code before and after a change (e.g. a ``git worktree`` of
the earlier commit on ``PYTHONPATH``)::

    PYTHONPATH=/tmp/old python benchmarks/core_answers.py --size 1e6 --out old.json
    PYTHONPATH=. python benchmarks/core_answers.py --size 1e6 --out new.json
    python benchmarks/core_answers.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _bench_core() -> Any:
    spec = importlib.util.spec_from_file_location("bench_core", HERE / "bench_core.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_core"] = module
    spec.loader.exec_module(module)
    return module


def answers(size: int, workdir: Path) -> dict[str, Any]:
    """Per chain (``template/entity``): the steps' (ok, error) and the final answers."""
    from pyql.kb.oxigraph_backend import OxigraphKB
    from pyql.environment.sparql import SparqlEnvironment

    bench = _bench_core()
    path, _ = bench.ensure_kb(workdir, size, 0, lambda text: None)
    kb = OxigraphKB(path)
    out: dict[str, Any] = {}
    for chain in bench.make_chains(bench.start_entities(path), 3):
        env = SparqlEnvironment(kb, entities={chain.entity: chain.entity})
        steps = [[r.ok, r.error] for r in (env.step(line) for line in chain.lines)]
        out[f"{chain.template}/{chain.entity}"] = {"steps": steps, "answers": env.final_json()["answers"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1e5", help="KB size in triples (bench_core's generator), e.g. 1e6")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/pyql-bench"), help="where bench_core caches its KBs")
    parser.add_argument("--out", type=Path, help="write the answers here (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two answer files")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        differ = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        print(f"{len(before)} chains before, {len(after)} after, "
              f"{sum(len(v['answers']) for v in after.values())} answers after; differing: {differ or 'none'}")
        return 1 if differ else 0
    if args.out is None:
        parser.error("give --out FILE (or --compare BEFORE AFTER)")
    result = answers(int(float(args.size)), args.workdir)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"{len(result)} chains -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
