"""``pyql trace RUN.jsonl --html OUT.html``: a run as one self-contained page to look at.

The page (``agent/templates/trace.html.j2``, jinja2 with autoescaping) has
no external CSS, JS, fonts or images, and a Content-Security-Policy that
forbids scripts and remote loads: it opens from a file, offline, and
nothing in a question, reply or observation can run as code (every text is
HTML-escaped). No text can disguise itself either: every text shown goes
through :func:`pyql.echo.visible` (a right-to-left override U+202E, escape
sequences and other control or format characters are shown as ``\\u202e``,
``\\x1b``), and answers, gold answers and their labels through
:func:`pyql.echo.inline` (one line, capped), as in the observations. It shows:

* a summary header: the metrics table of the run (:mod:`agent.evaluation.metrics`)
  and the ERASER triggers per rule;
* an index of the questions with their F1;
* per question: the question, linked entities, gold and predicted answers
  (each prediction marked right or wrong), F1/Hit@1 (and denotation for
  tables), counters (steps, LLM calls, tokens, KB queries, seconds, cost),
  the final query and every step's thought, action and observation. Failed
  steps are red, steps whose observation is an ERASER guideline are amber,
  with the rule id as a badge; forced steps (the step limit) are grey. A
  step that ran with ERASER's advice has an ``advice`` badge with the rule,
  a repeated failed action its escalation level (``repeat, level N``), and a
  choose step whose list the model ordered its scoring requests. The steps
  of a search are a tree (each step's ``parent``,
  :mod:`agent.evaluation.step_tree`): a question whose steps branch says
  how many steps and branches it explored and how many were pruned, then
  shows its steps up to the first split and, under it, each branch as a
  foldable block (``<details>``: no script) indented under the step it
  follows, its summary line giving its first action, the steps, branches
  and pruned steps it holds, and ``kept`` or ``pruned: why``. The branches
  the strategy kept start unfolded, the dropped ones folded, so a beam of
  width 3 and depth 3 shows its kept path and one line per dropped branch.
  A step the strategy pruned has a ``pruned`` badge with the reason. One
  branch (every linear run, and a run file written before steps had
  parents) is shown as it ran, in one table.
  Every question has an outcome (:data:`OUTCOMES`): ``correct`` (F1 or
  accuracy 1), ``wrong`` (answered, not fully right), ``failed`` (the
  episode ended on an error, e.g. the LLM or the KB could not be reached)
  or ``unscored`` (no gold). Only failures, wrong and failed questions,
  start unfolded (the first :data:`OPEN_LIMIT` of them), so a big run
  shows what went wrong and folds the rest.
* a filter by outcome (all / correct / wrong / failed) above the
  questions. It needs no script (the page forbids them): radio buttons and
  CSS ``:has()`` hide the other questions and their index entries.

Long unbroken text (a relation name in a thought, an id in an action)
wraps inside its column (``overflow-wrap: anywhere`` in a fixed-layout
table), so no column runs over the next.

Example:
    >>> rec = {"id": "q1", "question": "<b>hi</b>?", "gold": ["m.1"], "answers": [{"value": "m.1", "label": "One"}],
    ...        "steps": [{"step": 1, "reply": "Thought 1: go.\\nAction 1: execute()", "action": "execute()", "ok": True,
    ...                   "error": None, "observation": "The answer is ['One']", "rule": None}], "done": True}
    >>> page = render_html([rec])
    >>> "&lt;b&gt;hi&lt;/b&gt;?" in page, "<b>hi</b>" in page, "F1 1.00" in page
    (True, False, True)
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import jinja2
import markupsafe

from agent.evaluation.metrics import (
    aggregate,
    answer_keys,
    record_scores,
    trigger_stats,
)
from agent.evaluation.runner import reply_thought
from agent.evaluation.step_tree import Node, build, linear, parents, walk
from pyql.echo import inline, visible

__all__ = ["OPEN_LIMIT", "OUTCOMES", "question_view", "render_html", "write_html"]

#: Failed questions after this many start folded too (keeps big runs light).
OPEN_LIMIT = 50

#: The outcomes a question can have, in the filter's order (``unscored`` is shown under "all" only).
OUTCOMES = ("correct", "wrong", "failed", "unscored")

_OUTCOME_OF_STATE = {"right": "correct", "partial": "wrong", "wrong": "wrong", "error": "failed", "unscored": "unscored"}


def _shown(value: Any) -> Any:
    """Every text the page shows, with control and bidi characters escaped (:func:`pyql.echo.visible`).

    Example:
        >>> _shown("evil\\u202etxt"), _shown(3)
        ('evil\\\\u202etxt', 3)
    """
    if isinstance(value, markupsafe.Markup):  # already HTML (tojson ...): escapes add no markup
        return markupsafe.Markup(visible(str(value)))
    return visible(value) if isinstance(value, str) else value


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("agent", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )


def _answer_text(answer: Any) -> str:
    if isinstance(answer, Mapping):
        value, label = answer.get("value"), answer.get("label")
        if label not in (None, "") and label != value:
            return f"{inline(label)} ({inline(value)})"
        return inline(value)
    return inline(answer)


def _step_view(step: Mapping[str, Any]) -> dict[str, Any]:
    ok = bool(step.get("ok"))
    rule = step.get("rule")
    if step.get("forced"):
        state = "forced" if ok else "failed forced"
    elif ok:
        state = "ok"
    elif rule:
        state = "guideline"
    else:
        state = "failed"
    reply = str(step.get("reply") or "")
    action = step.get("action")
    return {
        "step": step.get("step"),
        "state": state,
        "ok": ok,
        "thought": reply_thought(reply) if reply else "",
        "action": action if action else reply.strip(),
        "unparsed": not action,
        "error": step.get("error"),
        "rule": rule,
        "observation": str(step.get("observation") or ""),
        "forced": bool(step.get("forced")),
        "tokens": f"{step.get('tokens_in', 0)}/{step.get('tokens_out', 0)}",
        "llm_seconds": float(step.get("llm_seconds") or 0.0),
        "kb_queries": int(step.get("kb_queries") or 0),
        "attempts": int(step.get("attempts") or 1),
        "prompt": step.get("prompt"),
        "advice": step.get("advice"),
        "escalation": int(step.get("escalation") or 0),
        "scoring_requests": int(step.get("scoring_requests") or 0),
        "pruned": step.get("pruned"),
    }


def _branch(node: Node) -> dict[str, Any]:
    """A branch as the page shows it: its steps up to where it splits (one row each), then each way it splits, foldable.

    ``open``: a branch a strategy kept (a leaf under it is not pruned) starts unfolded, a dropped one folded with
    its reason in its summary line; ``steps``, ``branches`` and ``pruned`` count what it holds.
    """
    chain = [node]
    while len(chain[-1].children) == 1:
        chain.append(chain[-1].children[0])
    reasons = [n.step.get("pruned") for n in walk([node]) if n.step.get("pruned")]
    return {
        "rows": [_step_view(n.step) for n in chain],
        "children": [_branch(child) for child in chain[-1].children],
        "open": node.alive,
        "alive": node.alive,
        "steps": 1 + node.below,
        "branches": node.branches,
        "pruned": len(reasons),
        "reason": (str(reasons[0]) + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else "")) if reasons else None,
    }


def _tree(steps: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The steps' views in the order they ran, and the tree the page shows when they branch (None for one branch).

    One branch (each step's parent the step before it: every linear run, and a record of before parents) is
    shown as it ran, in one table. A tree is shown as branches (:func:`_branch`): the steps up to the first
    split, then each way it splits, folded where the strategy dropped it.

    Example:
        >>> views, tree = _tree([{"action": "a()", "parent": None}, {"action": "b()", "parent": 1, "pruned": "empty"},
        ...                      {"action": "c()", "parent": 1}, {"action": "d()", "parent": 3}])
        >>> [r["action"] for r in tree["rows"]], [([r["action"] for r in b["rows"]], b["open"], b["reason"]) for b in tree["children"]]
        (['a()'], [(['b()'], False, 'empty'), (['c()', 'd()'], True, None)])
        >>> _tree([{"action": "a()"}, {"action": "b()"}])[1] is None
        True
    """
    views = [_step_view(s) for s in steps]
    if linear(parents(steps)):
        return views, None
    roots = build(steps)
    if len(roots) == 1:
        return views, _branch(roots[0])
    every = [_branch(root) for root in roots]  # several branches from the start: each one foldable
    below = sum(b["steps"] for b in every)
    return views, {"rows": [], "children": every, "open": True, "alive": any(b["alive"] for b in every), "steps": below,
                   "branches": sum(b["branches"] for b in every), "pruned": sum(b["pruned"] for b in every), "reason": None}


def _answers_view(answers: Sequence[Any], gold: Sequence[Any] | None) -> list[dict[str, Any]]:
    """Each answer's text, and whether it is among the gold answers (None without gold)."""
    gold_keys = [answer_keys(g) for g in gold] if gold is not None else None
    out = []
    for answer in answers:
        keys = answer_keys(answer)
        correct = None if gold_keys is None else any(keys & g for g in gold_keys)
        out.append({"text": _answer_text(answer), "correct": correct})
    return out


def _state(record: Mapping[str, Any], score: float | None) -> str:
    """``error``, ``unscored``, ``right``, ``partial`` or ``wrong``: how the question went."""
    if record.get("error"):
        return "error"
    if score is None:
        return "unscored"
    if score >= 1.0:
        return "right"
    if score > 0:
        return "partial"
    return "wrong"


def question_view(record: Mapping[str, Any], index: int) -> dict[str, Any]:
    """What the template shows for one run record.

    Example:
        >>> v = question_view({"id": "q1", "question": "q?", "gold": ["3"], "answers": [{"value": "3.0", "label": None}]}, 0)
        >>> v["f1"], v["answers"][0]["correct"], v["state"], v["outcome"], v["open"]
        (1.0, True, 'right', 'correct', False)
    """
    scores = record_scores(record)
    gold = record.get("gold")
    answers = _answers_view(record.get("answers") or [], gold)
    steps, tree = _tree(record.get("steps") or [])
    f1 = scores.get("denotation", scores.get("f1")) if record.get("table") else scores.get("f1")
    state = _state(record, f1)
    return {
        "index": index + 1,
        "id": str(record.get("id")),
        "anchor": f"q{index + 1}",
        "question": str(record.get("question") or ""),
        "entities": dict(record.get("entities") or {}),
        "table": record.get("table"),
        "gold": [_answer_text(g) for g in gold] if gold is not None else None,
        "answers": answers,
        "f1": scores.get("f1"),
        "hit1": scores.get("hit1"),
        "denotation": scores.get("denotation"),
        "score": f1,
        "state": state,
        "outcome": _OUTCOME_OF_STATE[state],
        "open": _OUTCOME_OF_STATE[state] in ("wrong", "failed"),
        "steps": steps,
        "branched": tree is not None,
        "tree": tree,
        "pruned_steps": sum(1 for s in steps if s["pruned"]),
        "failed_steps": sum(1 for s in steps if not s["ok"]),
        "rules": dict(record.get("rules") or {}),
        "error": record.get("error"),
        "forced": bool(record.get("forced")),
        "done": bool(record.get("done")),
        "query": str(record.get("query") or ""),
        "llm_calls": record.get("llm_calls", 0),
        "tokens_in": record.get("tokens_in", 0),
        "tokens_out": record.get("tokens_out", 0),
        "kb_queries": record.get("kb_queries", 0),
        "seconds": float(record.get("seconds") or 0.0),
        "cost_usd": record.get("cost_usd"),
        "model": record.get("model"),
        "method": record.get("method"),
        "feedback": record.get("feedback"),
        "kind": record.get("kind"),
        "template_version": record.get("template_version"),
    }


def render_html(records: Sequence[Mapping[str, Any]] | Iterable[Mapping[str, Any]], *, title: str = "pyql run", source: str | None = None) -> str:
    """The page for run records (one per question, as :func:`agent.evaluation.runner.read_run` gives them)."""
    records = list(records)
    metrics = aggregate(records)
    stats = trigger_stats(records)
    rule_rows = []
    if stats is not None and stats.total:
        rule_rows = [
            {"rule": rule_id, "count": count, "share": f"{share:.1%}", "type": kind}
            for rule_id, count, share, kind, _ in stats.rows()
        ]
    models = sorted({str(r.get("model")) for r in records if r.get("model")})
    methods = sorted({str(r.get("method")) for r in records if r.get("method")})
    questions = [question_view(r, i) for i, r in enumerate(records)]
    opened = 0
    for q in questions:  # only the first OPEN_LIMIT failures start open
        if q["open"]:
            opened += 1
            q["open"] = opened <= OPEN_LIMIT
    counts = {outcome: sum(1 for q in questions if q["outcome"] == outcome) for outcome in OUTCOMES}
    return _env().get_template("trace.html.j2").render(
        title=title,
        source=source,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        metrics=metrics.rows(),
        rule_rows=rule_rows,
        rule_total=stats.total if stats is not None else 0,
        models=models,
        methods=methods,
        questions=questions,
        outcome_counts=counts,
        branched=any(q["branched"] for q in questions),
    )


def write_html(records: Iterable[Mapping[str, Any]], path: str | Path, *, title: str | None = None, source: str | None = None) -> Path:
    """Write the page for run records to ``path`` (UTF-8); returns the path.

    Example:
        >>> import tempfile, os
        >>> p = write_html([], os.path.join(tempfile.mkdtemp(), "run.html"))
        >>> "<!doctype html>" in p.read_text().lower()
        True
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(list(records), title=title or (f"pyql run: {Path(source).name}" if source else "pyql run"), source=source), encoding="utf-8")
    return out
