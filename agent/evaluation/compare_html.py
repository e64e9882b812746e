"""``pyql compare RUN.jsonl ... --html OUT.html``: a comparison as one self-contained page, with its plot.

The page (``agent/templates/compare.html.j2``) shows what ``pyql compare``
prints (:mod:`agent.evaluation.compare`): the runs, the table of the runs
side by side (answer metrics and cost columns), the per-kind table, the
paired differences with their intervals and tests, and every definition;
and a plot of accuracy against cost, drawn here as inline SVG (no plotting
library): two panels, the chosen metric against the LLM calls per question
and against the seconds per question, one marker per run, labelled.

As the HTML trace (:mod:`agent.evaluation.trace_html`), the page has no
external CSS, JS, fonts or images and a Content-Security-Policy that forbids
scripts and remote loads; every text is escaped (jinja2's autoescaping, and
:func:`xml.sax.saxutils.escape` in the SVG) and shown through
:func:`pyql.echo.visible`.

Example:
    >>> svg = accuracy_cost_svg([{"label": "greedy", "score": 0.5, "llm_calls": 4.0, "seconds": 2.0},
    ...                          {"label": "<beam>", "score": 0.75, "llm_calls": 11.5, "seconds": 9.0}], "F1")
    >>> svg.startswith("<svg"), "&lt;beam&gt;" in svg, "<beam>" in svg, svg.count('class="point"')
    (True, True, False, 4)
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import jinja2
import markupsafe

from agent.errors import EvalError
from agent.evaluation.compare import COST_COLUMNS, TEST_DEFINITIONS, Comparison, cost_cell, percent, signed_points
from pyql.echo import visible

__all__ = ["COLORS", "MARKERS", "accuracy_cost_svg", "plot_metric", "render_comparison", "write_comparison"]

#: The runs' colours and markers, in the order the runs are given (then again from the first).
COLORS = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#6e7781")
MARKERS = ("circle", "square", "diamond", "triangle", "triangle-down", "cross", "plus")

PANEL_W, PANEL_H, LEFT, TOP, GAP = 340, 250, 62, 46, 90
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'


def _n(value: float) -> str:
    """A coordinate as SVG text: one decimal, no ``-0.0``.

    >>> _n(3.14159), _n(-0.01)
    ('3.1', '0.0')
    """
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _marker(shape: str, x: float, y: float, color: str, title: str, s: float = 6.0) -> str:
    """One run's marker centred on (x, y), with its title (a tooltip) and ``class="point"``."""
    fill = f'fill="{color}" fill-opacity="0.85" stroke="{color}"'
    tip = f"<title>{escape(title)}</title>"
    if shape == "circle":
        body = f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(s)}" {fill}/>'
    elif shape == "square":
        body = f'<rect x="{_n(x - s)}" y="{_n(y - s)}" width="{_n(2 * s)}" height="{_n(2 * s)}" {fill}/>'
    elif shape in ("diamond", "triangle", "triangle-down"):
        corners = {"diamond": [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)], "triangle": [(0, -1.3), (1.2, 0.9), (-1.2, 0.9)],
                   "triangle-down": [(0, 1.3), (1.2, -0.9), (-1.2, -0.9)]}[shape]
        body = f'<polygon points="{" ".join(f"{_n(x + dx * s)},{_n(y + dy * s)}" for dx, dy in corners)}" {fill}/>'
    else:
        arms = [(-1, -1, 1, 1), (-1, 1, 1, -1)] if shape == "cross" else [(-1.2, 0, 1.2, 0), (0, -1.2, 0, 1.2)]
        lines = "".join(f'<line x1="{_n(x + a * s)}" y1="{_n(y + b * s)}" x2="{_n(x + c * s)}" y2="{_n(y + d * s)}"/>'
                        for a, b, c, d in arms)
        body = f'<g stroke="{color}" stroke-width="2.5">{lines}</g>'
    return f'<g class="point" data-x="{_n(x)}" data-y="{_n(y)}">{tip}{body}</g>'


def _nice_max(value: float) -> float:
    """The axis' end: the smallest of 1, 2, 2.5, 5 times a power of ten at or above ``value`` (1 for nothing).

    >>> _nice_max(11.6), _nice_max(0.3), _nice_max(0), _nice_max(4)
    (20.0, 0.5, 1.0, 5.0)
    """
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return float(next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value - 1e-12))


def _tick(value: float) -> str:
    return f"{value:g}" if value < 1000 else f"{value:,.0f}"


def _panel(points: Sequence[Mapping[str, Any]], key: str, title: str, x_label: str, metric: str, left: float) -> list[str]:
    """One panel: its frame, grid, ticks, axis labels and the runs' markers with their labels."""
    x_max = _nice_max(max(float(p[key]) for p in points) * 1.08)
    top, bottom, right = TOP, TOP + PANEL_H, left + PANEL_W
    out = [f'<g class="panel" data-x="{key}">',
           f'<text x="{_n(left + PANEL_W / 2)}" y="{TOP - 14}" font-size="13" font-weight="bold" text-anchor="middle">{escape(title)}</text>',
           f'<rect x="{_n(left)}" y="{top}" width="{PANEL_W}" height="{PANEL_H}" fill="#fff" stroke="#888"/>']
    for i in range(6):  # y: 0 to 100 % in fifths; x: 0 to x_max in fifths
        y = bottom - PANEL_H * i / 5
        x = left + PANEL_W * i / 5
        out.append(f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(right)}" y2="{_n(y)}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{_n(left - 6)}" y="{_n(y + 4)}" font-size="11" text-anchor="end">{20 * i}</text>')
        out.append(f'<line x1="{_n(x)}" y1="{top}" x2="{_n(x)}" y2="{bottom}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{_n(x)}" y="{bottom + 16}" font-size="11" text-anchor="middle">{_tick(x_max * i / 5)}</text>')
    out.append(f'<text x="{_n(left + PANEL_W / 2)}" y="{bottom + 36}" font-size="12" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text x="{_n(left - 42)}" y="{_n(top + PANEL_H / 2)}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 {_n(left - 42)} {_n(top + PANEL_H / 2)})">{escape(metric)} (%)</text>')
    placed: list[tuple[float, float, float, float]] = []  # the labels' boxes so far: none is drawn over another
    for i, p in enumerate(points):
        x = left + PANEL_W * float(p[key]) / x_max
        y = bottom - PANEL_H * max(0.0, min(1.0, float(p["score"])))
        tip = f"{p['label']}: {metric} {100 * float(p['score']):.1f} %, {x_label} {float(p[key]):.2f}"
        out.append(_marker(MARKERS[i % len(MARKERS)], x, y, COLORS[i % len(COLORS)], tip))
        out.append(_label(str(p["label"]), x, y, right, placed))
    out.append("</g>")
    return out


def _label(text: str, x: float, y: float, right: float, placed: list[tuple[float, float, float, float]]) -> str:
    """A point's label: right of it (left near the panel's right edge), moved down a line while it would cover another."""
    width = 6.6 * len(text)
    anchor, x0 = ("end", x - 10 - width) if x + 10 + width > right else ("start", x + 10)
    baseline = y + 4
    for _ in range(len(placed) + 1):
        box = (x0, baseline - 11, x0 + width, baseline + 3)
        if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
            break
        baseline += 14
    placed.append((x0, baseline - 11, x0 + width, baseline + 3))
    at = x0 + width if anchor == "end" else x0
    return (f'<text class="label" x="{_n(at)}" y="{_n(baseline)}" font-size="11" text-anchor="{anchor}" '
            f'fill="#222">{escape(text)}</text>')


def accuracy_cost_svg(points: Sequence[Mapping[str, Any]], metric: str) -> str:
    """The plot: ``metric`` (each point's ``score``, 0 to 1) against its ``llm_calls`` and its ``seconds`` per question.

    Each point is a run (``label``, ``score``, ``llm_calls``, ``seconds``); its marker has a tooltip with its values.
    """
    width = LEFT + 2 * PANEL_W + GAP + 30
    height = TOP + PANEL_H + 56
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" {FONT} role="img" aria-label="{escape(metric)} against cost per question">',
             f"<title>{escape(metric)} against LLM calls and seconds per question</title>"]
    parts += _panel(points, "llm_calls", f"{metric} against LLM calls", "LLM calls per question", metric, LEFT)
    parts += _panel(points, "seconds", f"{metric} against time", "seconds per question", metric, LEFT + PANEL_W + GAP)
    parts.append("</svg>")
    return "\n".join(parts)


def plot_metric(c: Comparison, name: str | None = None) -> str:
    """The metric the plot shows: ``name`` (a key of the comparison's metrics), else denotation accuracy when the questions
    are scored by it, else F1.

    Raises:
        EvalError: ``name`` is not one of the comparison's metrics.
    """
    keys = [m.key for m in c.metrics]
    if name is None:
        return "denotation" if "denotation" in keys else "f1"
    if name not in keys:
        raise EvalError(f"--plot-metric {name!r} is not one of this comparison's metrics: {', '.join(keys)}")
    return name


def _shown(value: Any) -> Any:
    """Every text the page shows, with control and bidi characters escaped (:func:`pyql.echo.visible`)."""
    if isinstance(value, markupsafe.Markup):
        return markupsafe.Markup(visible(str(value)))
    return visible(value) if isinstance(value, str) else value


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("agent", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, finalize=_shown)


def _view(c: Comparison, metric: str) -> dict[str, Any]:
    """What the template shows."""
    runs = [{"label": r.label, "method": r.method, "model": r.model or "-", "files": r.files, "questions": len(r.by_id),
             "failed": r.failed, "unscored": r.unscored, "color": COLORS[i % len(COLORS)],
             "scores": [percent(c.mean(i, m.key)) for m in c.metrics],
             "costs": [cost_cell(key, c.costs[i][key]) for key, _, _ in COST_COLUMNS]} for i, r in enumerate(c.runs)]
    kinds = [{"kind": kind, "questions": len(positions),
              "runs": [{"label": r.label, "scores": [percent(c.mean(i, m.key, positions)) for m in c.metrics]} for i, r in enumerate(c.runs)]}
             for kind, positions in c.kinds.items()]
    pairs = [{"pair": f"{c.runs[p.second].label} − {c.runs[p.first].label}", "metric": p.metric.title, "questions": p.questions,
              "difference": signed_points(p.difference), "interval": f"[{signed_points(p.interval[0])}, {signed_points(p.interval[1])}]",
              "test": p.test, "p": f"{p.p:.3g}", "sign": "up" if p.interval[0] > 0 else ("down" if p.interval[1] < 0 else "")}
             for p in c.pairs]
    title = next(m.title for m in c.metrics if m.key == metric)
    points = [{"label": r.label, "score": c.mean(i, metric) or 0.0, "llm_calls": c.costs[i]["llm_calls"],
               "seconds": c.costs[i]["seconds"]} for i, r in enumerate(c.runs)]
    return {"runs": runs, "kinds": kinds, "pairs": pairs, "metric_titles": [m.title for m in c.metrics],
            "cost_titles": [title for _, title, _ in COST_COLUMNS], "by": c.by, "common": c.common, "shared": len(c.shared),
            "definitions": [(m.title, m.definition) for m in c.metrics]
            + [(f"{t} (cost, per question)", text) for _, t, text in COST_COLUMNS] + list(TEST_DEFINITIONS.items()),
            "plot": markupsafe.Markup(accuracy_cost_svg(points, title)), "plot_metric": title,
            "resamples": f"{c.resamples:,}", "seed": c.seed, "warnings": c.warnings}


def render_comparison(c: Comparison, *, title: str = "pyql compare", metric: str | None = None) -> str:
    """The page of a comparison (``metric``: the plot's, see :func:`plot_metric`)."""
    view = _view(c, plot_metric(c, metric))
    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return _env().get_template("compare.html.j2").render(title=title, generated=generated, **view)


def write_comparison(c: Comparison, path: str | Path, *, title: str | None = None, metric: str | None = None) -> Path:
    """Write the page of a comparison to ``path`` (UTF-8); returns the path.

    Raises:
        EvalError: the page cannot be written, or an unknown ``metric``.
    """
    out = Path(path)
    page = render_comparison(c, title=title or f"pyql compare: {', '.join(r.label for r in c.runs)}", metric=metric)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise EvalError(f"cannot write the page {out}: {exc.strerror or exc}") from None
    return out
