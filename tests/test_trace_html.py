"""``pyql trace --html``: the page renders, is self-contained, escapes everything, and looks right in Chromium.

The browser tests (marker ``browser``) run Debian's headless Chromium; they
skip when it is missing, unless ``PYQL_REQUIRE_BROWSER=1`` (then they fail
with the install hint).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from agent.errors import LLMError
from agent.evaluation.datasets import load_dataset
from agent.evaluation.runner import RunSettings, latest_records, read_run, run_eval
from agent.evaluation.trace_html import render_html
from agent.llm.config import LLMConfig
from agent.llm.scripted import ScriptedLLM
from pyql.cli import main

DEMO = Path(__file__).resolve().parents[1] / "pyql" / "data" / "demo_questions.jsonl"
COMPLETION = LLMConfig(mode="completion")
EVIL = "<script>document.body.appendChild(Object.assign(document.createElement('p'),{id:'pwned'}))</script> which storm?"
INSTALL_HINT = "headless Chromium is not installed: apt-get install -y chromium (Debian's package)"


def scripted(*replies: object) -> ScriptedLLM:
    return ScriptedLLM(list(replies), config=COMPLETION)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small run: right, corrected by guidelines, failed without ERASER, forced and wrong, LLM error."""
    items = {item["id"]: item for item in load_dataset(DEMO)}
    out = tmp_path_factory.mktemp("run") / "run.jsonl"
    settings = RunSettings(kb="demo")

    def add(item: dict, llm: ScriptedLLM, **overrides: object) -> None:
        run_eval([item], out, llm, RunSettings(**{**settings.__dict__, **overrides}), resume=True, progress=None, max_llm_failures=0)

    add(items["q01"], scripted(
        " Rachel's relations.\nAction 1: get_relation(m.0crbvqz)",
        " The category.\nAction 2: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
        " Done.\nAction 3: execute()",
    ))
    add(items["q03"], scripted(
        " Jamaica's relations.\nAction 1: get_relation(m.03_r3)",
        " Languages.\nAction 2: add_fact(m.03_r3, ?x)",
        " Languages, with the <b>relation</b>.\nAction 3: add_fact(m.03_r3, location.country.languages_spoken, ?lang)",
        " I think I am done",
        " Done.\nAction 5: execute()",
    ))
    add(dict(items["q20"], id="q20-raw"), scripted(
        " Count.\nAction 1: add_fact(m.0abc, ?x)",
        " Hmm.\nAction 2: execute()",
        " Stop.\nAction 3: execute()",
    ), feedback="raw", max_steps=2)
    add(items["q05"], scripted(
        " Sandy's relations.\nAction 1: get_relation(m.0n9cgl4)",
        " Category.\nAction 2: add_fact(m.0n9cgl4, meteorology.tropical_cyclone.category, ?c)",
        "?c",
    ), max_steps=2)
    add(dict(items["q01"], id="evil", question=EVIL), scripted(LLMError("bad request", status=400)))
    return out


@pytest.fixture(scope="module")
def page(run_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "run.html"
    assert main(["trace", str(run_file), "--html", str(out)]) == 0
    return out


def test_page_shows_questions_steps_and_metrics(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert html.lower().startswith("<!doctype html>")
    for text in ("what category is tropical storm rachel?", "what languages are spoken in jamaica?",
                 "how much damage did hurricane sandy cause?", "answer F1", "Hit@1", "KB queries per question (QPQ)"):
        assert text in html
    assert "F1 1.00" in html and "F1 0.00" in html
    assert '<tr class="guideline">' in html and '<span class="badge rule">wrong_arity</span>' in html
    assert '<span class="badge rule">no_action</span>' in html
    assert '<tr class="failed">' in html and '<span class="badge err">wrong_arity</span>' in html  # raw feedback: no rule
    assert '<tr class="forced">' in html and "forced" in html
    assert "llm_error: bad request" in html
    assert html.count('<details class="q ') == 5
    # only failures start open: wrong (q3, q4) and failed (q5); right ones stay folded, even after guidelines (q2)
    folded = re.findall(r'<details class="q o-(\w+)" id="(q\d)"( open)?>', html)
    assert folded == [("correct", "q1", ""), ("correct", "q2", ""), ("wrong", "q3", " open"),
                      ("wrong", "q4", " open"), ("failed", "q5", " open")]
    assert 'for="filter-correct">correct (2)<' in html and 'for="filter-failed">failed (1)<' in html


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not re.search(r"<(?:link|script|iframe|img|object|embed)\b", html, re.I)
    assert "@import" not in html and "url(" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_page_escapes_questions_replies_and_observations(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert "<script>document" not in html and "&lt;script&gt;document.body.appendChild" in html
    assert "<b>relation</b>" not in html and "&lt;b&gt;relation&lt;/b&gt;" in html


def test_render_html_of_no_record() -> None:
    html = render_html([])
    assert "0 questions" in html and "No guideline was given in this run." in html


def test_advice_escalation_and_scoring_show_on_their_steps() -> None:
    step = {"step": 1, "reply": "1", "action": "add_fact(m.1, a.b.c, ?c)", "ok": True, "error": None, "observation": "ok",
            "rule": None, "advice": "fact_before_get_relation", "scoring_requests": 7, "prompt_sha256": "x"}
    repeat = {"step": 2, "reply": "Action 2: add_max(?x)", "action": "add_max(?x)", "ok": False, "error": "unbound_variable",
              "observation": "add_max(?x) already failed at step 1", "rule": "unbound_variable", "escalation": 2}
    html = render_html([{"id": "q1", "question": "q?", "gold": [], "answers": [], "steps": [step, repeat], "done": False}])
    assert "advice: fact_before_get_relation" in html and "repeat, level 2" in html and "7 scoring req." in html
    plain = render_html([{"id": "q1", "question": "q?", "gold": [], "answers": [], "steps": [dict(step, advice=None, scoring_requests=0)], "done": False}])
    assert "advice:" not in plain and "repeat, level" not in plain and "scoring req." not in plain


def _step(n: int, action: str, parent: int | None, pruned: str | None = None, ok: bool = True) -> dict:
    return {"step": n, "reply": "", "action": action, "ok": ok, "error": None if ok else "empty_result", "observation": f"after {action}",
            "rule": None, "prompt_sha256": "", "parent": parent, "pruned": pruned}


#: A search's steps: a look, two branches from it (one pruned: its step had no rows), the kept branch going on.
TREE = [
    _step(1, "get_relation(m.0crbvqz)", None),
    _step(2, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)", 1, pruned="no rows", ok=False),
    _step(2, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", 1),
    _step(3, "execute()", 3),
]


def tree_record(**more: object) -> dict:
    return {"id": "tree", "question": "which category?", "gold": ["m.05f4r3k"], "answers": [{"value": "m.05f4r3k", "label": None}],
            "steps": TREE, "done": True, "method": "beam", **more}


def beam_steps(width: int = 3, depth: int = 3) -> list[dict]:
    """A beam's steps: at each depth, ``width`` candidates under each kept step, the first kept, the others pruned."""
    steps: list[dict] = []
    frontier: list[int | None] = [None]
    for level in range(1, depth + 1):
        kept: list[int | None] = []
        for parent in frontier:
            for k in range(width):
                pruned = None if k == 0 else f"outside the beam (score -{k + level}.5 < -1.1)"
                steps.append(_step(level, f"add_fact(m.0c, rel{level}_{k}, ?x{level})", parent, pruned=pruned, ok=pruned is None))
                if pruned is None:
                    kept.append(len(steps))
        frontier = kept
    steps.append(_step(depth + 1, "execute()", frontier[0]))
    return steps


def test_a_tree_renders_branches_under_the_step_they_follow_with_pruned_ones_folded() -> None:
    html = render_html([tree_record()])
    assert "4 steps in 2 branches explored, 1 pruned" in html
    top = html.split('<div class="tree">', 1)[1]
    first_table, below = top.split('<ul class="branches">', 1)
    assert "get_relation(m.0crbvqz)" in first_table and "tropical_cyclone" not in first_table  # the steps before the split
    branches = re.findall(r'<li class="branch( dropped)?"><details class="branch"( open)?>\s*<summary><span class="arrow">↳</span> '
                          r'<code>([^<]*)</code>\s*· (\d+) steps?', below)
    assert branches == [(" dropped", "", "add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)", "1"),
                        ("", " open", "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", "2")]
    assert '<span class="badge prune">pruned: no rows</span>' in html and '<span class="badge kept">kept</span>' in html
    assert "4 steps, 1 failed, 1 pruned" in html and "a branch the strategy dropped" in html  # the question's line, the legend
    assert html.index("tropical_cyclone.formed") < html.index("tropical_cyclone.category") < html.index("execute()")


def test_a_beam_of_width_3_and_depth_3_shows_its_kept_path_and_counts() -> None:
    steps = beam_steps()
    html = render_html([{**tree_record(), "steps": steps}])
    assert len(steps) == 3 + 3 + 3 + 1 and "10 steps in 7 branches explored, 6 pruned" in html
    summaries = re.findall(r'<li class="branch( dropped)?"><details class="branch"( open)?>\s*<summary><span class="arrow">↳</span> '
                           r'<code>([^<]*)</code>\s*· (\d+) steps?(?:, (\d+) branches)?(?:, (\d+) pruned)?', html)
    kept = [(code, n, b, p) for dropped, opened, code, n, b, p in summaries if not dropped and opened]
    folded = [code for dropped, opened, code, *_ in summaries if dropped and not opened]
    assert kept == [("add_fact(m.0c, rel1_0, ?x1)", "8", "5", "4"), ("add_fact(m.0c, rel2_0, ?x2)", "5", "3", "2"),
                    ("add_fact(m.0c, rel3_0, ?x3)", "2", "", "")]
    assert sorted(folded) == sorted(f"add_fact(m.0c, rel{level}_{k}, ?x{level})" for level in (1, 2, 3) for k in (1, 2))
    assert html.count("pruned: outside the beam") == 2 * 6  # each dropped branch: its summary and its step's badge
    assert "<td class=\"n\">4</td>" in html  # the answer step, at the end of the kept path


def test_one_branch_and_an_old_run_file_render_as_before(run_file: Path) -> None:
    """A linear run (parents written) and a record of before parents (none) render the same page, as before trees."""
    from agent.methods.episode import result_from_dict

    records = latest_records(read_run(run_file))
    assert all([s["parent"] for s in r["steps"]] == [None, *range(1, len(r["steps"]))][: len(r["steps"])] for r in records)
    old = [{**r, "steps": [{k: v for k, v in s.items() if k not in ("parent", "pruned")} for s in r["steps"]]} for r in records]
    same = lambda html: re.sub(r"generated [^<]*", "", html)  # noqa: E731
    assert same(render_html(old)) == same(render_html(records))
    body = render_html(records).split("<body>", 1)[1]
    assert 'style="padding-left' not in body and "pruned" not in body and "↳" not in body
    rebuilt = result_from_dict({k: old[1][k] for k in ("question", "answers", "steps", "done", "forced", "query")})
    assert [s.parent for s in rebuilt.steps] == [None, *range(1, len(rebuilt.steps))] and all(s.pruned is None for s in rebuilt.steps)
    text = io.StringIO()
    tree_file = run_file.with_name("tree.jsonl")
    tree_file.write_text(json.dumps(tree_record()) + "\n" + json.dumps(old[0]) + "\n", encoding="utf-8")
    assert main(["trace", str(tree_file)], out=text) == 0 and "| questions | 2 |" in text.getvalue()


def test_trace_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", str(tmp_path / "missing.jsonl"), "--html", str(tmp_path / "x.html")]) == 2
    assert "run file not found" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# In a real browser


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("PYQL_REQUIRE_BROWSER", "").strip() not in ("", "0"):
        pytest.fail("PYQL_REQUIRE_BROWSER is set but " + INSTALL_HINT, pytrace=False)
    pytest.skip(INSTALL_HINT)


def headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180,
    )


def read_png(path: Path) -> tuple[int, int, list[list[tuple[int, ...]]]]:
    """Width, height and pixel rows of an 8-bit PNG (gray, RGB, gray+alpha or RGBA), no PIL."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0 and color in (0, 2, 4, 6), header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[list[tuple[int, ...]]] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + min(3, channels)]) for x in range(width)])
        prev = line
    return width, height, rows


@pytest.mark.browser
def test_screenshot_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    browser = chromium()
    shot = tmp_path / "page.png"
    result = headless(browser, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri())
    assert shot.is_file() and shot.stat().st_size > 20_000, result.stderr[-2000:]
    width, height, rows = read_png(shot)
    assert (width, height) == (1200, 1600)
    colors = {px for row in rows[::8] for px in row[::8]}
    assert len(colors) > 30  # text, tables, badges: not a blank page
    top = {px for px in rows[20][::4]}
    assert (0x24, 0x29, 0x2F) in top  # the dark header bar is drawn
    everything = {px for row in rows[::2] for px in row[::2]}
    assert (0xFF, 0xF8, 0xC5) in everything  # an amber guideline row is visible
    assert (0xFF, 0xEB, 0xE9) in everything  # a red failed step / wrong answer is visible
    assert (0xFF, 0xFF, 0xFF) in everything


@pytest.mark.browser
def test_injected_script_does_not_run_in_chromium(page: Path, tmp_path: Path) -> None:
    browser = chromium()
    result = headless(browser, tmp_path / "profile", "--dump-dom", page.as_uri())
    dom = result.stdout
    assert "which storm?" in dom, result.stderr[-2000:]
    assert 'id="pwned"' not in dom  # the <script> in the question stayed text
    assert "&lt;script&gt;document.body.appendChild" in dom


def test_run_file_fixture_is_consistent(run_file: Path) -> None:
    records = latest_records(read_run(run_file))
    assert [r["id"] for r in records] == ["q01", "q03", "q20-raw", "q05", "evil"]
    assert records[1]["rules"] == {"wrong_arity": 1, "no_action": 1} and records[1]["metrics"]["f1"] == 1.0
    assert records[3]["forced"] and records[4]["error"].startswith("llm_error")


# ---------------------------------------------------------------------------
# Layout and the outcome filter, measured in Chromium

LONG_RELATION = "measurement_unit.dated_money_value_of_the_tropical_cyclone_damages_adjusted_for_inflation_in_usd"


def many_records(n: int = 60) -> list[dict]:
    """``n`` questions cycling through correct, wrong and failed, each step naming a long relation."""
    records = []
    for i in range(n):
        outcome = ("correct", "wrong", "failed")[i % 3]
        step = {
            "step": 1, "ok": outcome != "failed", "error": None if outcome != "failed" else "action_syntax", "rule": None,
            "reply": f"Thought 1: the relation {LONG_RELATION}{LONG_RELATION} gives it.\nAction 1: add_fact(m.0abc, {LONG_RELATION}, ?x)",
            "action": f"add_fact(m.0abc, {LONG_RELATION}{LONG_RELATION}, ?x)",
            "observation": f"The value of variable ?x is ['{LONG_RELATION}']",
        }
        records.append({
            "id": f"q{i}", "question": f"question {i}?", "gold": ["m.1"],
            "answers": [] if outcome == "failed" else [{"value": "m.1" if outcome == "correct" else "m.2", "label": None}],
            "error": "llm_error: the server is down" if outcome == "failed" else None,
            "steps": [step], "done": outcome != "failed",
        })
    return records


MEASURE = """<script>
const result = {overlaps: [], filters: {}};
document.querySelectorAll('details.q').forEach(d => { d.open = true; });
for (const tr of document.querySelectorAll('table.steps tr')) {
  const cells = tr.querySelectorAll('td');
  for (let i = 0; i + 1 < cells.length; i++) {
    const range = document.createRange();
    range.selectNodeContents(cells[i]);
    const content = range.getBoundingClientRect(), next = cells[i + 1].getBoundingClientRect();
    if (content.width > 0 && content.right > next.left + 0.5) {
      result.overlaps.push([cells[i].className, content.right, next.left]);
    }
  }
}
for (const outcome of ['correct', 'wrong', 'failed', 'all']) {
  document.getElementById('filter-' + outcome).checked = true;
  const shown = el => el.getClientRects().length > 0;
  result.filters[outcome] = {
    questions: [...document.querySelectorAll('details.q')].filter(shown).map(d => d.className),
    index: [...document.querySelectorAll('.index a')].filter(shown).length,
  };
}
const pre = document.createElement('pre');
pre.id = 'pyql-test-result';
pre.textContent = JSON.stringify(result);
document.body.appendChild(pre);
</script>"""


def measured(html: str, tmp_path: Path) -> dict:
    """Run :data:`MEASURE` on ``html`` in headless Chromium (a test copy without the CSP, so the script may run)."""
    import json

    browser = chromium()
    test_copy = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html).replace("</body>", MEASURE + "</body>")
    path = tmp_path / "measured.html"
    path.write_text(test_copy, encoding="utf-8")
    result = headless(browser, tmp_path / "profile", "--window-size=1200,1600", "--dump-dom", path.as_uri())
    found = re.search(r'<pre id="pyql-test-result">(.*?)</pre>', result.stdout, re.DOTALL)
    assert found, result.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_many_questions_fold_all_but_failures() -> None:
    html = render_html(many_records(60))
    opened = re.findall(r'<details class="q o-(\w+)" id="q\d+" open>', html)
    assert len(opened) == 40 and set(opened) == {"wrong", "failed"}
    assert len(re.findall(r'<details class="q o-correct" id="q\d+">', html)) == 20


@pytest.mark.browser
def test_long_relation_names_stay_in_their_column_in_chromium(tmp_path: Path) -> None:
    result = measured(render_html(many_records(6)), tmp_path)
    assert result["overlaps"] == []


@pytest.mark.browser
def test_outcome_filter_hides_the_other_questions_in_chromium(tmp_path: Path) -> None:
    filters = measured(render_html(many_records(9)), tmp_path)["filters"]
    assert len(filters["all"]["questions"]) == 9 and filters["all"]["index"] == 9
    for outcome in ("correct", "wrong", "failed"):
        assert filters[outcome]["questions"] == [f"q o-{outcome}"] * 3, outcome
        assert filters[outcome]["index"] == 3, outcome


TREE_MEASURE = """<script>
const box = el => el.getBoundingClientRect();
const shown = el => el.checkVisibility();  // false inside a folded <details> (its content is not rendered)
const out = {branches: [...document.querySelectorAll('li.branch')].map(li => {
  const summary = li.querySelector(':scope > details > summary');
  const table = li.querySelector(':scope > details > table.steps');
  return {text: summary.querySelector('code').textContent, left: box(summary).left, dropped: li.classList.contains('dropped'),
          open: li.querySelector(':scope > details').open, summaryShown: shown(summary), rowsShown: !!table && shown(table),
          badge: summary.querySelector('.badge').textContent};
}), root: box(document.querySelector('.tree')).left};
const pre = document.createElement('pre');
pre.id = 'pyql-test-result';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


@pytest.mark.browser
def test_a_beam_tree_folds_its_dropped_branches_in_chromium(tmp_path: Path) -> None:
    """Width 3, depth 3: the kept path is unfolded and indented level by level; every dropped branch is one line, its
    reason on it, its steps hidden until it is unfolded."""
    html = render_html([{**tree_record(), "steps": beam_steps()}]).replace('<details class="q o-correct" id="q1">',
                                                                           '<details class="q o-correct" id="q1" open>')
    browser = chromium()
    test_copy = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html).replace("</body>", TREE_MEASURE + "</body>")
    path = tmp_path / "tree.html"
    path.write_text(test_copy, encoding="utf-8")
    result = headless(browser, tmp_path / "profile", "--window-size=1200,1600", "--dump-dom", path.as_uri())
    found = re.search(r'<pre id="pyql-test-result">(.*?)</pre>', result.stdout, re.DOTALL)
    assert found, result.stderr[-2000:]
    seen = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    by_text = {b["text"]: b for b in seen["branches"]}
    path_lefts = [by_text[f"add_fact(m.0c, rel{level}_0, ?x{level})"]["left"] for level in (1, 2, 3)]
    assert seen["root"] < path_lefts[0] < path_lefts[1] < path_lefts[2]  # each kept branch indented under the one before
    for level in (1, 2, 3):
        kept = by_text[f"add_fact(m.0c, rel{level}_0, ?x{level})"]
        assert kept["open"] and kept["rowsShown"] and kept["badge"] == "kept" and not kept["dropped"]
        for k in (1, 2):
            dropped = by_text[f"add_fact(m.0c, rel{level}_{k}, ?x{level})"]
            assert dropped["dropped"] and not dropped["open"] and dropped["summaryShown"] and not dropped["rowsShown"]
            assert dropped["badge"].startswith("pruned: outside the beam") and dropped["left"] == kept["left"]
    assert measured(html, tmp_path)["overlaps"] == []
