"""Draw docs/results_accuracy_calls.svg from benchmarks/results.json (standard library only).

The data file holds the measured agent configurations: per panel (a question
set) one point per configuration, its mean answer F1 against the LLM calls
it made per question, and the command that measured it. This script only
draws them; ``--check`` says whether the committed SVG is what the data
gives (``tests/test_plot_results.py`` runs the same check, so the two cannot
drift apart).

Usage::

    python benchmarks/plot_results.py            # write docs/results_accuracy_calls.svg
    python benchmarks/plot_results.py --check    # exit 1 if the SVG is not the data's
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pyql.errors import PyQLError

DATA = ROOT / "benchmarks" / "results.json"
SVG = ROOT / "docs" / "results_accuracy_calls.svg"

#: The commands a point may name: a benchmark script or the pyql command, run from the repository root.
COMMAND_PREFIXES = ("python benchmarks/", "pyql ")
MARKERS = ("circle", "square", "diamond", "triangle", "triangle-down", "cross", "plus")
LABEL_SIDES = ("right", "left", "above", "below")

WIDTH, PANEL_W, PANEL_H = 980, 380, 300
LEFT, GAP, TOP = 70, 110, 70
X_PAD = 0.5  # room left of x = 0, so that points at no call are not drawn on the axis
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'


class ResultsDataError(PyQLError, ValueError):
    """benchmarks/results.json is not what the plot needs (the message says which entry and why)."""


def _require(entry: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    missing = [k for k in keys if k not in entry]
    if missing:
        raise ResultsDataError(f"{where} lacks {', '.join(missing)}; it needs {', '.join(keys)}")


def check_point(point: Mapping[str, Any], where: str, series: set[str], x_max: float) -> None:
    """Refuse a point that names no command, an unknown series, or a value off the axes.

    Example:
        >>> check_point({"series": "s", "llm_calls": 1, "f1": 0.5, "label": "1/2", "command": "rm -rf /"},
        ...             "demo point 1", {"s"}, 8)
        Traceback (most recent call last):
        ...
        plot_results.ResultsDataError: demo point 1: its command must start with 'python benchmarks/' or 'pyql ' (a command that reproduces it), not 'rm -rf /'
    """
    _require(point, ("series", "llm_calls", "f1", "label", "command"), where)
    command = point["command"]
    if not isinstance(command, str) or not command.startswith(COMMAND_PREFIXES):
        allowed = " or ".join(repr(p) for p in COMMAND_PREFIXES)
        raise ResultsDataError(f"{where}: its command must start with {allowed} (a command that reproduces it), not {command!r}")
    if point["series"] not in series:
        raise ResultsDataError(f"{where}: unknown series {point['series']!r}; the series are {', '.join(sorted(series))}")
    x, y = point["llm_calls"], point["f1"]
    if not isinstance(x, (int, float)) or not 0 <= x <= x_max:
        raise ResultsDataError(f"{where}: llm_calls must be a number from 0 to x_max ({x_max}), not {x!r}")
    if not isinstance(y, (int, float)) or not 0 <= y <= 1:
        raise ResultsDataError(f"{where}: f1 must be a number from 0 to 1, not {y!r}")
    if point.get("label_side", "right") not in LABEL_SIDES:
        raise ResultsDataError(f"{where}: label_side must be one of {', '.join(LABEL_SIDES)}, not {point['label_side']!r}")


def check_results(data: Mapping[str, Any]) -> None:
    """Refuse data the plot cannot draw faithfully (see :func:`check_point`); two panels at most fit the page."""
    _require(data, ("title", "x_label", "y_label", "x_max", "series", "panels"), "results.json")
    ids: set[str] = set()
    for i, entry in enumerate(data["series"], 1):
        _require(entry, ("id", "name", "color", "marker"), f"series {i}")
        if entry["marker"] not in MARKERS:
            raise ResultsDataError(f"series {entry['id']!r}: marker must be one of {', '.join(MARKERS)}, not {entry['marker']!r}")
        ids.add(entry["id"])
    if not 1 <= len(data["panels"]) <= 2:
        raise ResultsDataError(f"results.json has {len(data['panels'])} panels; the plot draws one or two")
    for panel in data["panels"]:
        _require(panel, ("id", "title", "points"), "a panel")
        for i, point in enumerate(panel["points"], 1):
            check_point(point, f"{panel['id']} point {i}", ids, float(data["x_max"]))


def load_results(path: Path = DATA) -> dict[str, Any]:
    """The checked data file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsDataError(f"cannot read {path}: {exc}") from exc
    check_results(data)
    return data


def _n(value: float) -> str:
    """A coordinate as SVG text: one decimal, no ``-0.0``.

    >>> _n(3.14159), _n(-0.01), _n(200)
    ('3.1', '0.0', '200.0')
    """
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def marker(shape: str, x: float, y: float, color: str, size: float = 5.5) -> str:
    """One marker centred on (x, y).

    >>> marker("square", 10, 20, "#000")
    '<rect x="4.5" y="14.5" width="11.0" height="11.0" fill="#000" fill-opacity="0.85" stroke="#000"/>'
    """
    s = size
    fill = f'fill="{color}" fill-opacity="0.85" stroke="{color}"'
    if shape == "circle":
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(s)}" {fill}/>'
    if shape == "square":
        return f'<rect x="{_n(x - s)}" y="{_n(y - s)}" width="{_n(2 * s)}" height="{_n(2 * s)}" {fill}/>'
    corners = {
        "diamond": [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)],
        "triangle": [(0, -1.3), (1.2, 0.9), (-1.2, 0.9)],
        "triangle-down": [(0, 1.3), (1.2, -0.9), (-1.2, -0.9)],
    }
    if shape in corners:
        points = " ".join(f"{_n(x + dx * s)},{_n(y + dy * s)}" for dx, dy in corners[shape])
        return f'<polygon points="{points}" {fill}/>'
    arms = [(-1, -1, 1, 1), (-1, 1, 1, -1)] if shape == "cross" else [(-1.2, 0, 1.2, 0), (0, -1.2, 0, 1.2)]
    lines = "".join(f'<line x1="{_n(x + a * s)}" y1="{_n(y + b * s)}" x2="{_n(x + c * s)}" y2="{_n(y + d * s)}"/>'
                    for a, b, c, d in arms)
    return f'<g stroke="{color}" stroke-width="2.5">{lines}</g>'


def _label(point: Mapping[str, Any], x: float, y: float) -> str:
    side = point.get("label_side", "right")
    dx, dy, anchor = {"right": (9, 4, "start"), "left": (-9, 4, "end"), "above": (0, -10, "middle"),
                      "below": (0, 17, "middle")}[side]
    return (f'<text x="{_n(x + dx)}" y="{_n(y + dy)}" font-size="11" text-anchor="{anchor}" fill="#222">'
            f"{escape(str(point['label']))}</text>")


def tick_step(x_max: float) -> int:
    """Calls between two ticks of the x axis: every call up to 10, then fewer, so that the labels do not overlap.

    >>> tick_step(8), tick_step(20), tick_step(40), tick_step(100)
    (1, 2, 5, 10)
    """
    for step, most in ((1, 10), (2, 20), (5, 50)):
        if x_max <= most:
            return step
    return 10


def _axes(panel: Mapping[str, Any], x_max: float, left: float) -> list[str]:
    """The frame, grid, ticks and title of one panel whose plot area starts at ``left``."""
    sx = PANEL_W / (x_max + X_PAD)
    out = [f'<text x="{_n(left + PANEL_W / 2)}" y="{_n(TOP - 14)}" font-size="14" font-weight="bold" '
           f'text-anchor="middle">{escape(panel["title"])}</text>']
    for i in range(6):
        y = TOP + PANEL_H - i * PANEL_H / 5
        out.append(f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(left + PANEL_W)}" y2="{_n(y)}" stroke="#ddd"/>')
        out.append(f'<text x="{_n(left - 8)}" y="{_n(y + 4)}" font-size="11" text-anchor="end">{i / 5:.1f}</text>')
    for k in range(0, int(x_max) + 1, tick_step(x_max)):
        x = left + (k + X_PAD) * sx
        out.append(f'<line x1="{_n(x)}" y1="{_n(TOP)}" x2="{_n(x)}" y2="{_n(TOP + PANEL_H)}" stroke="#eee"/>')
        out.append(f'<text x="{_n(x)}" y="{_n(TOP + PANEL_H + 16)}" font-size="11" text-anchor="middle">{k}</text>')
    out.append(f'<rect x="{_n(left)}" y="{_n(TOP)}" width="{_n(PANEL_W)}" height="{_n(PANEL_H)}" fill="none" stroke="#444"/>')
    return out


def render_panel(panel: Mapping[str, Any], styles: Mapping[str, Mapping[str, str]], x_max: float, left: float) -> list[str]:
    """One panel: axes, then each point's marker and label, in the data's order."""
    sx, sy = PANEL_W / (x_max + X_PAD), PANEL_H
    out = _axes(panel, x_max, left)
    for point in panel["points"]:
        style = styles[point["series"]]
        x = left + (float(point["llm_calls"]) + X_PAD) * sx
        y = TOP + PANEL_H - float(point["f1"]) * sy
        out.append(marker(style["marker"], x, y, style["color"]))
        out.append(_label(point, x, y))
    return out


def render_legend(series: Sequence[Mapping[str, str]], top: float) -> list[str]:
    """The series in two columns, each a marker and its name."""
    out = []
    rows = (len(series) + 1) // 2
    for i, entry in enumerate(series):
        x = LEFT + (i // rows) * (WIDTH - LEFT) / 2
        y = top + (i % rows) * 20
        out.append(marker(entry["marker"], x + 6, y - 4, entry["color"], size=5))
        out.append(f'<text x="{_n(x + 18)}" y="{_n(y)}" font-size="12">{escape(entry["name"])}</text>')
    return out


def render_svg(data: Mapping[str, Any]) -> str:
    """The whole SVG text for checked data (:func:`check_results`); the same data gives the same bytes."""
    x_max = float(data["x_max"])
    styles = {s["id"]: s for s in data["series"]}
    rows = (len(data["series"]) + 1) // 2
    legend_top = TOP + PANEL_H + 64
    height = legend_top + rows * 20 + 30
    body = [f'<text x="{_n(WIDTH / 2)}" y="24" font-size="16" font-weight="bold" text-anchor="middle">'
            f'{escape(data["title"])}</text>']
    for i, panel in enumerate(data["panels"]):
        left = LEFT + i * (PANEL_W + GAP)
        body += render_panel(panel, styles, x_max, left)
        body.append(f'<text x="{_n(left + PANEL_W / 2)}" y="{_n(TOP + PANEL_H + 38)}" font-size="12" '
                    f'text-anchor="middle">{escape(data["x_label"])}</text>')
        cy = TOP + PANEL_H / 2
        body.append(f'<text x="{_n(left - 40)}" y="{_n(cy)}" font-size="12" text-anchor="middle" '
                    f'transform="rotate(-90 {_n(left - 40)} {_n(cy)})">{escape(data["y_label"])}</text>')
    body += render_legend(data["series"], legend_top)
    note = "Labels: questions answered exactly. Each point's command and date: benchmarks/results.json."
    body.append(f'<text x="{_n(LEFT)}" y="{_n(height - 10)}" font-size="11" fill="#555">{escape(note)}</text>')
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{_n(height)}" '
            f'viewBox="0 0 {WIDTH} {_n(height)}" {FONT}>')
    return "\n".join([head, f'<rect width="{WIDTH}" height="{_n(height)}" fill="white"/>', *body, "</svg>", ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the points (default benchmarks/results.json)")
    parser.add_argument("--out", type=Path, default=SVG, help="the SVG written (default docs/results_accuracy_calls.svg)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if --out is not what --data gives")
    args = parser.parse_args(argv)
    try:
        text = render_svg(load_results(args.data))
    except ResultsDataError as exc:
        parser.exit(2, f"plot_results: error: {exc}\n")
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is not what {args.data} gives: run python benchmarks/plot_results.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
