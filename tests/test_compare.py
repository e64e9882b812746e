"""``pyql compare``: runs side by side on their shared questions, each metric defined, paired statistics, costs, a page.

The runs here are written by hand, so every number the comparison prints is
worked out in the test from the answers and gold answers below.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.compare import compare_runs, comparison_text
from agent.evaluation.compare_html import render_comparison
from agent.evaluation.paired import bootstrap_intervals, mcnemar_exact, permutation_test
from pyql.cli import main
from tests.test_trace_html import chromium, headless, read_png

ROOT = Path(__file__).resolve().parents[1]

GOLD = {"q1": ["m.a"], "q2": ["m.b", "m.c"], "q3": ["m.d"], "q4": ["m.e"]}
KINDS = {"q1": "i.i.d.", "q2": "i.i.d.", "q3": "zero-shot", "q4": "zero-shot"}


def _answers(values: list[str]) -> list[dict[str, Any]]:
    return [{"value": v, "label": None} for v in values]


def _linear(n: int, seconds: float = 0.5) -> list[dict[str, Any]]:
    return [{"step": i, "action": f"a{i}()", "ok": True, "observation": "", "llm_seconds": seconds, "kb_seconds": 0.25,
             "parent": i - 1 or None} for i in range(1, n + 1)]


def _beam() -> list[dict[str, Any]]:
    """One step, three branches under it (two pruned), the kept one answered: 3 leaves."""
    return [{"step": 1, "action": "look()", "ok": True, "llm_seconds": 1.0, "kb_seconds": 0.5, "parent": None},
            {"step": 2, "action": "b1()", "ok": False, "llm_seconds": 1.0, "kb_seconds": 0.5, "parent": 1, "pruned": "empty result"},
            {"step": 2, "action": "b2()", "ok": False, "llm_seconds": 1.0, "kb_seconds": 0.5, "parent": 1, "pruned": "empty result"},
            {"step": 2, "action": "b3()", "ok": True, "llm_seconds": 1.0, "kb_seconds": 0.5, "parent": 1}]


def record(qid: str, answers: list[str], method: str, steps: list[dict[str, Any]], llm_calls: int, **more: Any) -> dict[str, Any]:
    return {"id": qid, "question": f"question {qid}?", "gold": GOLD[qid], "answers": _answers(answers), "kind": KINDS[qid],
            "source": "grailqa", "method": method, "model": "m", "settings": {"model": "m", "method": method},
            "steps": steps, "llm_calls": llm_calls, "tokens_in": 100 * llm_calls, "tokens_out": 10 * llm_calls,
            "kb_queries": 2 * llm_calls, "seconds": float(llm_calls), "status": "finished", **more}


#: greedy: q1 right; q2 one of two gold (P 1, R 1/2); q3 a wrong answer first, then the gold one (P 1/2, R 1); q4 nothing.
GREEDY = [record("q1", ["m.a"], "greedy", _linear(2), 2), record("q2", ["m.b"], "greedy", _linear(4), 4),
          record("q3", ["m.x", "m.d"], "greedy", _linear(3), 3), record("q4", [], "greedy", _linear(1), 1)]
#: beam: q1, q2, q3 right; q4 wrong.
BEAM = [record(q, a, "beam", _beam(), 6, settings={"model": "m", "method": "beam", "options": {"width": 3}})
        for q, a in (("q1", ["m.a"]), ("q2", ["m.b", "m.c"]), ("q3", ["m.d"]), ("q4", ["m.x"]))]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "greedy.jsonl", GREEDY), write(tmp_path / "beam.jsonl", BEAM)


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["compare", *args], out=out), out.getvalue()


# ---------------------------------------------------------------------------
# The table, per kind, the definitions


def test_the_side_by_side_table_has_each_metric_worked_out(runs: tuple[Path, Path]) -> None:
    status, text = run_cli(*map(str, runs))
    assert status == 0, text
    # greedy: EM 1/4; F1 (1 + 2/3 + 2/3 + 0) / 4; Hits@1 (q1, q2) 2/4; Hits@any (q1, q2, q3) 3/4.
    # beam: 3/4 everywhere. Costs per question: greedy LLM calls (2+4+3+1)/4, tokens 100 and 10 per call, model seconds
    # 0.5 per step (10 steps / 4), KB seconds 0.25 per step, one branch each; beam 6 calls, 4 s model, 2 s KB, 3 branches.
    assert "| run | exact match | F1 | Hits@1 | Hits@any | LLM calls | tokens in | tokens out | model s | KB queries | KB s | branches | s |" in text
    assert "| greedy | 25.0 | 58.3 | 50.0 | 75.0 | 2.50 | 250 | 25 | 1.25 | 5.00 | 0.625 | 1.00 | 2.50 |" in text
    assert "| beam (width=3) | 75.0 | 75.0 | 75.0 | 75.0 | 6.00 | 600 | 60 | 4.00 | 12.00 | 2.00 | 3.00 | 6.00 |" in text
    assert "2 runs; 4 questions in every run, 4 of them compared" in text
    assert f"| greedy | greedy | m | {runs[0]} | 4 | 0 | 0 |" in text
    # per GrailQA level, in GrailQA's order: i.i.d. (q1, q2) then zero-shot (q3, q4)
    assert "| i.i.d. | greedy | 2 | 50.0 | 83.3 | 100.0 | 100.0 |" in text
    assert "| zero-shot | beam (width=3) | 2 | 50.0 | 50.0 | 50.0 | 50.0 |" in text
    assert text.index("| i.i.d. |") < text.index("| zero-shot |")
    for definition in ("- exact match: the predicted answer set equals the gold answer set",
                       "- Hits@1: the top answer is gold", "- Hits@any: any predicted answer is gold (what Think-on-Graph and RoG report as Hits@1)",
                       "- F1: per question, the harmonic mean of precision", "- branches (cost, per question): branches explored",
                       "- McNemar exact:", "- permutation:", "- interval: the paired bootstrap"):
        assert definition in text, definition


def test_the_paired_rows_test_each_metric(runs: tuple[Path, Path]) -> None:
    c = compare_runs(runs)
    rows = {p.metric.key: p for p in c.pairs}
    # exact match: beam alone right on q2, q3 (2 vs 0 discordant): p = 2 * (1/4) = 0.5; difference +50 points
    assert (rows["em"].difference, rows["em"].p, rows["em"].test) == (0.5, 0.5, "McNemar exact: 0 vs 2 discordant")
    # Hits@1: beam alone on q3: p = 1; Hits@any: no discordant question
    assert (rows["hit1"].difference, rows["hit1"].p) == (0.25, 1.0) and (rows["hits_any"].difference, rows["hits_any"].p) == (0.0, 1.0)
    # F1: differences 0, 1/3, 1/3, 0: 4 sign assignments, 2 as far from 0: p = 0.5
    assert rows["f1"].p == 0.5 and rows["f1"].test == "permutation (exact, 4 sign assignments)"
    assert rows["f1"].difference == pytest.approx(1 / 6, abs=1e-6)
    lo, hi = rows["em"].interval
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0 and rows["hits_any"].interval == (0.0, 0.0)
    text = comparison_text(c)
    assert "| beam (width=3) − greedy | exact match | 4 | +50.0 | [" in text and "| McNemar exact: 0 vs 2 discordant | 0.5 |" in text


def test_known_cases_of_the_paired_statistics() -> None:
    # McNemar: 8 questions only the first run got right, 1 only the second: p = 2 * (C(9,0) + C(9,1)) / 2^9
    assert mcnemar_exact([1] * 8 + [0] + [1] * 20, [0] * 8 + [1] + [1] * 20).p == 0.0390625
    assert mcnemar_exact([1] * 10, [0] * 10).p == 2 / 2**10
    # the permutation test, exact: differences 1, 1, 1 (and a 0): only all + or all - are as far: 2 of 8
    assert permutation_test([1.0, 1.0, 1.0, 0.0]).p == 0.25
    big = permutation_test([0.5] * 30 + [-0.5] * 30, seed=4)  # no difference on average: p near 1, by random flips
    assert not big.exact and big.p > 0.8
    # the bootstrap: a constant difference has that interval; the same seed, the same interval
    assert bootstrap_intervals([[1.0] * 7, [0.0] * 7, [-0.5] * 7]) == [(1.0, 1.0), (0.0, 0.0), (-0.5, -0.5)]
    half = [1.0] * 50 + [0.0] * 50
    assert bootstrap_intervals([half], seed=9) == bootstrap_intervals([half], seed=9)
    lo, hi = bootstrap_intervals([half], resamples=4000, seed=9)[0]
    assert 0.38 < lo < 0.42 and 0.58 < hi < 0.62  # 0.5 ± 1.96 * sqrt(0.25 / 100)
    # a metric that scores some questions only: its mean in a resample is over those
    assert bootstrap_intervals([[None, 1.0, None, 1.0]]) == [(1.0, 1.0)]


def test_the_seed_and_resamples_reach_the_bootstrap(runs: tuple[Path, Path]) -> None:
    one = compare_runs(runs, resamples=500, seed=3)
    assert [p.interval for p in one.pairs] == [p.interval for p in compare_runs(runs, resamples=500, seed=3).pairs]
    assert "(500 resamples, seed 3)" in comparison_text(one)


def test_json_output(runs: tuple[Path, Path]) -> None:
    status, text = run_cli(*map(str, runs), "--json")
    data = json.loads(text)
    assert status == 0 and data["shared"] == 4 and [r["label"] for r in data["runs"]] == ["greedy", "beam (width=3)"]
    assert data["runs"][0]["scores"]["hits_any"] == 0.75 and data["runs"][1]["cost_per_question"]["branches"] == 3.0
    assert data["metrics"]["hits_any"]["definition"].startswith("any predicted answer is gold")
    assert data["kinds"]["zero-shot"]["runs"][0]["em"] == 0.0 and data["by"] == "level"


def test_questions_each_run_has_and_those_shared(tmp_path: Path) -> None:
    """A question one run lacks, and one that failed to run, are not compared; the counts say so."""
    failed = dict(BEAM[3], status="failed_to_run", error="llm_error: down", answers=[])
    a = write(tmp_path / "a.jsonl", GREEDY)
    b = write(tmp_path / "b.jsonl", BEAM[:2] + [failed])
    c = compare_runs([a, b])
    assert (c.common, c.shared) == (3, ["q1", "q2"])
    text = comparison_text(c)
    assert "2 runs; 3 questions in every run, 2 of them compared" in text
    assert f"| beam (width=3) | beam | m | {b} | 3 | 1 | 0 |" in text


def test_an_old_run_file_without_costs_or_settings_is_compared(tmp_path: Path) -> None:
    old = [{k: v for k, v in r.items() if k not in ("settings", "cost")} for r in GREEDY]
    c = compare_runs([write(tmp_path / "old.jsonl", old), write(tmp_path / "beam.jsonl", BEAM)])
    assert c.runs[0].label == "greedy" and c.costs[0]["model_seconds"] == 1.25 and c.costs[0]["branches"] == 1.0


# ---------------------------------------------------------------------------
# Bad input: one line, exit status 2, naming the file and the line


@pytest.mark.parametrize("case", ["dataset-file", "damaged-line", "no-shared", "other-gold", "other-format", "empty", "missing",
                                  "bad-by", "not-json-object"])
def test_bad_input_is_one_line_naming_the_file(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.jsonl", GREEDY)
    other = tmp_path / "other.jsonl"
    args = [str(good), str(other)]
    if case == "dataset-file":  # a data set, not a run
        other.write_text((ROOT / "pyql" / "data" / "demo_questions.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
        expected = f"{other}, line 1 is not a pyql run record (no steps list)"
    elif case == "damaged-line":
        lines = [json.dumps(r) for r in BEAM]
        lines[1] = lines[1][:40]
        other.write_text("\n".join(lines) + "\n", encoding="utf-8")
        expected = f"{other}, line 2 is not a run record"
    elif case == "no-shared":
        write(other, [dict(r, id=r["id"] + "-x") for r in BEAM])
        expected = "the runs share no question"
    elif case == "other-gold":
        write(other, [dict(r, gold=["m.z"]) if r["id"] == "q3" else r for r in BEAM])
        expected = f"the runs are of different data sets: question q3 has other gold answers in {other}, line 3 than in {good}, line 3"
    elif case == "other-format":
        write(other, [dict(r, source="cwq") for r in BEAM])
        expected = "the runs are of different data sets (greedy: grailqa, beam (width=3): cwq)"
    elif case == "empty":
        other.write_text("", encoding="utf-8")
        expected = f"{other} holds no run record"
    elif case == "missing":
        expected = f"run file not found: {other}"
    elif case == "not-json-object":
        other.write_text('["a list"]\n' + json.dumps(BEAM[0]) + "\n", encoding="utf-8")
        expected = f"{other}, line 1 is not a run record"
    else:
        write(other, BEAM)
        args += ["--by", "size"]
        expected = "invalid choice: 'size'"
    assert main(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# ---------------------------------------------------------------------------
# The page


def test_the_page_holds_the_tables_and_a_plot_per_cost(runs: tuple[Path, Path], tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    status, _ = run_cli(*map(str, runs), "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert status == 0 and "Content-Security-Policy" in html and "<script" not in html
    assert "<th class=\"num\">Hits@any</th>" in html and ">75.0<" in html and "Definitions" in html
    assert html.count('class="panel"') == 2 and html.count('class="point"') == 4  # two panels, a point per run in each
    points = re.findall(r'<g class="point" data-x="([\d.]+)" data-y="([\d.]+)"><title>([^<]*)</title>', html)
    assert [t for *_, t in points] == ["greedy: F1 58.3 %, LLM calls per question 2.50", "beam (width=3): F1 75.0 %, LLM calls per question 6.00",
                                       "greedy: F1 58.3 %, seconds per question 2.50", "beam (width=3): F1 75.0 %, seconds per question 6.00"]
    (gx, gy, _), (bx, by, _) = points[:2]
    assert float(gx) < float(bx) and float(gy) > float(by)  # beam: more calls (right), higher F1 (up: smaller y)
    evil = [dict(r, settings={"method": "<b>x</b>", "model": "m"}, method="<b>x</b>") for r in BEAM]
    html = render_comparison(compare_runs([runs[0], write(tmp_path / "evil.jsonl", evil)]))
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert run_cli(*map(str, runs), "--html", str(page), "--plot-metric", "hits_any")[0] == 0
    assert "Hits@any against LLM calls" in page.read_text(encoding="utf-8")


PLOT_MEASURE = """<script>
const out = [...document.querySelectorAll('svg .panel')].map(panel => {
  const frame = panel.querySelector('rect').getBoundingClientRect();
  return {frame: [frame.left, frame.top, frame.right, frame.bottom],
          points: [...panel.querySelectorAll('.point')].map(p => { const b = p.getBoundingClientRect();
                   return [b.left + b.width / 2, b.top + b.height / 2, b.width]; })};
});
const pre = document.createElement('pre');
pre.id = 'pyql-test-result';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


@pytest.mark.browser
def test_the_page_and_its_plot_in_chromium(runs: tuple[Path, Path], tmp_path: Path) -> None:
    browser = chromium()
    html = render_comparison(compare_runs(runs))
    page = tmp_path / "compare.html"
    page.write_text(html, encoding="utf-8")
    shot = tmp_path / "compare.png"
    result = headless(browser, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri())
    assert shot.is_file(), result.stderr[-2000:]
    _, _, rows = read_png(shot)
    colors = {px for row in rows[::2] for px in row[::2]}
    assert (0x24, 0x29, 0x2F) in colors  # the header bar
    assert {(0x09, 0x69, 0xDA), (0xCF, 0x22, 0x2E)} & colors or any(  # the runs' markers (blue, red), drawn
        abs(r - 0x09) + abs(g - 0x69) + abs(b - 0xDA) < 60 for r, g, b in colors)
    copy = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html).replace("</body>", PLOT_MEASURE + "</body>")
    measured = tmp_path / "measured.html"
    measured.write_text(copy, encoding="utf-8")
    result = headless(browser, tmp_path / "profile2", "--window-size=1200,1400", "--dump-dom", measured.as_uri())
    found = re.search(r'<pre id="pyql-test-result">(.*?)</pre>', result.stdout, re.DOTALL)
    assert found, result.stderr[-2000:]
    panels = json.loads(found.group(1).replace("&quot;", '"'))
    assert len(panels) == 2
    for panel in panels:
        left, top, right, bottom = panel["frame"]
        assert right - left > 200 and bottom - top > 150  # drawn at its size
        (gx, gy, gw), (bx, by, bw) = panel["points"]
        assert all(left <= x <= right and top <= y <= bottom for x, y, _ in panel["points"])  # inside the frame
        assert gx < bx and gy > by and gw > 5 and bw > 5  # beam: more cost (right), more F1 (higher)
    assert panels[0]["frame"][2] < panels[1]["frame"][0]  # the two panels side by side


# ---------------------------------------------------------------------------
# The speed benchmark, small


@pytest.mark.cli  # runs the pyql command in a subprocess (not in the quick tier)
def test_the_speed_benchmark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "benchmarks" / "bench_compare.py")
    bench = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(bench)
    assert bench.main(["--out-dir", str(tmp_path), "--questions", "30", "--repeat", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == 30 and len(report["command_seconds"]) == 1 and report["table_lines"] > 20
    c = compare_runs([tmp_path / "greedy.jsonl", tmp_path / "beam.jsonl"])
    assert c.costs[1]["branches"] == 7.0 and c.costs[0]["branches"] == 1.0 and list(c.kinds) == ["i.i.d.", "compositional", "zero-shot"]
