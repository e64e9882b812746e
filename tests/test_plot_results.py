"""docs/results_accuracy_calls.svg is what benchmarks/plot_results.py draws from benchmarks/results.json,
and every point of the data names a command that reproduces it."""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pyql.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    """benchmarks/plot_results.py imported as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("plot_results", ROOT / "benchmarks" / "plot_results.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["plot_results"] = module
    spec.loader.exec_module(module)
    return module


PLOT = _script()


def _points() -> list[dict[str, Any]]:
    data = json.loads((ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    return [point for panel in data["panels"] for point in panel["points"]]


def test_the_committed_svg_is_what_the_data_gives() -> None:
    committed = (ROOT / "docs" / "results_accuracy_calls.svg").read_text(encoding="utf-8")
    assert committed == PLOT.render_svg(PLOT.load_results()), "run: python benchmarks/plot_results.py"
    assert PLOT.main(["--check"]) == 0


def test_results_md_embeds_the_plot() -> None:
    assert "](results_accuracy_calls.svg)" in (ROOT / "docs" / "results.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("point", _points(), ids=lambda p: f"{p['series']}:{p['label']}")
def test_every_point_names_a_command_that_exists(point: dict[str, Any]) -> None:
    """A benchmark command names a script of benchmarks/ and only flags that script defines; a pyql
    command parses with the real command line."""
    words = shlex.split(point["command"])
    assert point.get("measured"), "each point says when (and on which commit) it was measured"
    if words[0] == "pyql":
        build_parser().parse_args(words[1:])
        return
    assert words[0] == "python" and words[1].startswith("benchmarks/"), point["command"]
    script = ROOT / words[1]
    assert script.is_file(), f"{words[1]} does not exist"
    source = script.read_text(encoding="utf-8")
    for flag in (w.split("=")[0] for w in words[2:] if w.startswith("--")):
        assert f'"{flag}"' in source, f"{words[1]} has no option {flag}"


def test_a_point_without_a_command_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    del data["panels"][0]["points"][0]["command"]
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        PLOT.main(["--data", str(bad), "--out", str(tmp_path / "out.svg")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(r"demo point 1 lacks command", err), err
    assert "Traceback" not in err and not (tmp_path / "out.svg").exists()


def test_a_point_off_the_axes_is_refused() -> None:
    data = json.loads((ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    data["panels"][1]["points"][0]["f1"] = 1.2
    with pytest.raises(PLOT.ResultsDataError, match="f1 must be a number from 0 to 1"):
        PLOT.check_results(data)


def test_check_fails_when_the_svg_drifts(tmp_path: Path) -> None:
    stale = tmp_path / "plot.svg"
    stale.write_text(PLOT.render_svg(PLOT.load_results()).replace("36/37", "37/37"), encoding="utf-8")
    assert PLOT.main(["--check", "--out", str(stale)]) == 1
    assert PLOT.main(["--out", str(stale)]) == 0
    assert PLOT.main(["--check", "--out", str(stale)]) == 0


def test_every_point_is_drawn_with_its_label() -> None:
    svg = PLOT.render_svg(PLOT.load_results())
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for point in _points():
        assert point["label"] in texts


def test_the_script_doctests() -> None:
    result = doctest.testmod(PLOT, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
