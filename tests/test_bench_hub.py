"""Smoke test of the hub-scaling benchmark (benchmarks/bench_hub.py) at a tiny size; no timing assertions."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):  # type: ignore[no-untyped-def]
    """A script of benchmarks/ imported as a module (they are not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _bench():  # type: ignore[no-untyped-def]
    return _script("bench_hub")


def test_bench_hub_runs_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    raw = tmp_path / "out.json"
    status = bench.main(["--sizes", "400", "--repeat", "1", "--warmup", "0", "--workdir", str(tmp_path),
                         "--backends", "oxigraph,oxigraph-disk", "--json", str(raw), "--quiet"])
    assert status == 0
    report = capsys.readouterr().out
    assert "| step (median ms) | oxigraph 400 | oxigraph-disk 400 |" in report
    assert "Failed steps" not in report
    for line in bench.CHAINS["argmax"]:
        assert f"`{line.replace(bench.MALE, 'hub')}`" in report
    assert "floor: argmax alone (ORDER BY DESC LIMIT 1)" in report

    # The KB is what the docs say, and the argmax chain answers the youngest man.
    kb = tmp_path / "hub_400_s0.nt"
    meta = json.loads(kb.with_name(kb.name + ".meta.json").read_text())
    text = kb.read_text()
    males = set(re.findall(rf"<{bench.FB}(m\.[0-9a-z_]+)> <{bench.FB}{bench.GENDER}> <{bench.FB}{bench.MALE}> \.", text))
    births = dict(re.findall(rf"<{bench.FB}(m\.[0-9a-z_]+)> <{bench.FB}{bench.DOB}> \"([0-9-]+)\"", text))
    assert len(males) == meta["males"] and 0.5 < len(males) / 400 < 0.7 and len(births) == meta["births"]
    youngest = max(births[m] for m in males if m in births)
    winners = {m for m in males if births.get(m) == youngest}
    cells = json.loads(raw.read_text())["cells"]
    assert [c["backend"] for c in cells] == ["oxigraph", "oxigraph-disk"]
    for cell in cells:
        assert not cell["errors"], cell["errors"]
        final = cell["answers"]["argmax"]
        assert final.startswith("The answer is") and any(m in final for m in winners), final
        assert all(len(times) == 1 for times in cell["steps"]["argmax"])
    # a later run can check its goals against this one's cells (--compare), and times only the bounded floors
    assert bench.main(["--sizes", "200", "--repeat", "1", "--warmup", "0", "--workdir", str(tmp_path), "--quiet",
                       "--chains", "filter", "--floors", "bounded", "--compare", str(raw)]) == 0
    second = capsys.readouterr().out
    assert "| floor: argmax alone (ORDER BY DESC LIMIT 1) | – |" in second and "argmax 1." not in second


def test_goals_are_checked_at_one_million() -> None:
    bench = _bench()
    cell = bench.Cell(1_000_000, "oxigraph", 1)
    for chain, lines in bench.CHAINS.items():
        cell.steps[chain] = [[10.0] for _ in lines]
    cell.steps["argmax"][4] = [900.0]
    for name in bench.FLOORS:
        cell.floors[name] = [1000.0]
    checked = bench.goals([cell], list(bench.CHAINS))
    assert all(ok for ok, _ in checked), checked
    cell.steps["argmax"][0] = [51.0]
    assert [text for ok, text in bench.goals([cell], list(bench.CHAINS)) if not ok] == [
        "oxigraph 10^6: `get_relation(m.05zppz)` (argmax) 51.0 ms ≤ 50 ms"
    ]


def test_core_answers_records_every_chain_and_compare_names_a_changed_one(tmp_path: Path, capsys: Any) -> None:
    core_answers = _script("core_answers")
    before = tmp_path / "before.json"
    assert core_answers.main(["--size", "1e4", "--workdir", str(tmp_path), "--out", str(before)]) == 0
    record = json.loads(before.read_text())
    assert len(record) == 17
    assert all(r["steps"] and all(isinstance(ok, bool) for ok, _ in r["steps"]) for r in record.values())
    assert sum(1 for r in record.values() if r["answers"]) >= 12  # most chains answer on the 10^4 KB
    assert core_answers.main(["--compare", str(before), str(before)]) == 0
    changed = dict(record)
    name = min(changed)
    changed[name] = {**changed[name], "answers": []}
    after = tmp_path / "after.json"
    after.write_text(json.dumps(changed))
    capsys.readouterr()
    assert core_answers.main(["--compare", str(before), str(after)]) == 1
    assert name in capsys.readouterr().out
