"""``pyql trace RUN.jsonl --question ID``: one question of a run as text, its steps as the tree a strategy explored.

The head says the question, the gold and predicted answers with their
scores, the method and the question's cost (:mod:`agent.evaluation.cost`).
Then the steps: a linear run (every step following the one before it, as
greedy's) one per line, numbered, as it ran; a search's steps as a tree
(:mod:`agent.evaluation.step_tree`), each step under the one it follows,
drawn with ``├──``/``└──`` where it splits (a branch that does not split
goes on at the same place), a split with what it holds (branches, steps,
pruned ones), and a step where the strategy dropped its branch with
``PRUNED:`` and why.
Under each step, its thought (when the LLM wrote one) and its observation
on one line each, cut at :data:`LINE_LIMIT` characters. Every text goes
through :func:`pyql.echo.inline`: no control or bidi character reaches the
terminal.

Example:
    >>> record = {"id": "q1", "question": "which category?", "gold": ["m.1"], "answers": [{"value": "m.1", "label": "Cat 1"}],
    ...           "method": "beam", "llm_calls": 2, "steps": [
    ...     {"step": 1, "action": "get_relation(m.0c)", "ok": True, "observation": "relations: a, b", "parent": None},
    ...     {"step": 2, "action": "add_fact(m.0c, a, ?x)", "ok": False, "error": "empty_result", "observation": "no rows",
    ...      "parent": 1, "pruned": "empty result"},
    ...     {"step": 2, "action": "add_fact(m.0c, b, ?x)", "ok": True, "observation": "?x: Cat 1", "parent": 1}]}
    >>> print(question_text(record))
    q1: which category?
    gold: m.1 · answers: Cat 1 (m.1) · F1 1.00 · Hits@1 1
    method beam · 3 steps · cost: 2 LLM calls, 0 / 0 tokens, 0.00 s model, 0 KB queries, 0.000 s KB, 2 branches
    1 get_relation(m.0c) · ok · 2 branches below: 2 steps, 1 pruned
    │     observation: relations: a, b
    ├── 2 add_fact(m.0c, a, ?x) · failed: empty_result · PRUNED: empty result
    │         observation: no rows
    └── 2 add_fact(m.0c, b, ?x) · ok
              observation: ?x: Cat 1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.errors import EvalError
from agent.evaluation.cost import cost_of
from agent.evaluation.metrics import record_scores
from agent.evaluation.runner import reply_thought
from agent.evaluation.step_tree import Node, build, linear, parents
from pyql.echo import inline, plural

__all__ = ["LINE_LIMIT", "find_question", "question_text"]

#: The most characters of a thought or an observation shown on its line.
LINE_LIMIT = 200


def _line(text: Any, limit: int = LINE_LIMIT) -> str:
    """A text on one line: its whitespace collapsed, control and bidi characters escaped, cut at ``limit``."""
    return inline(" ".join(str(text or "").split()), limit)


def _answer(answer: Any) -> str:
    if isinstance(answer, Mapping):
        value, label = answer.get("value"), answer.get("label")
        return f"{_line(label, 80)} ({_line(value, 80)})" if label not in (None, "") and label != value else _line(value, 80)
    return _line(answer, 80)


def _head(record: Mapping[str, Any]) -> list[str]:
    """The question, its answers and scores, the method and the cost."""
    lines = [f"{_line(record.get('id'), 80)}: {_line(record.get('question'))}"]
    answers = ", ".join(_answer(a) for a in record.get("answers") or []) or "(none)"
    gold = record.get("gold")
    scores = record_scores(record) if gold is not None else {}
    scored = f" · F1 {scores['f1']:.2f} · Hits@1 {scores['hit1']:.0f}" if "f1" in scores else ""
    gold_text = "gold: " + (", ".join(_answer(g) for g in gold) or "(none)") + " · " if gold is not None else ""
    lines.append(f"{gold_text}answers: {answers}{scored}")
    if record.get("error"):
        lines.append(f"error: {_line(record['error'])}")
    c = cost_of(record)
    steps = len(record.get("steps") or [])
    lines.append(f"method {_line(record.get('method') or '?', 80)} · {plural(steps, 'step')} · cost: {c['llm_calls']} LLM calls, "
                 f"{c['tokens_in']} / {c['tokens_out']} tokens, {c['model_seconds']:.2f} s model, {c['kb_queries']} KB queries, "
                 f"{c['kb_seconds']:.3f} s KB, {plural(int(c['branches']), 'branch', 'branches')}")
    return lines


def _state(step: Mapping[str, Any]) -> str:
    """A step's outcome: ok, the ERASER rule that stopped it, or its error; forced at the step limit."""
    if step.get("ok"):
        state = "ok"
    elif step.get("rule"):
        state = f"guideline: {_line(step['rule'], 80)}"
    else:
        state = f"failed: {_line(step.get('error') or 'error', 80)}"
    return state + (" (forced at the step limit)" if step.get("forced") else "")


def _step_line(node: Node) -> str:
    step = node.step
    action = step.get("action") or f"(no action parsed) {step.get('reply') or ''}"
    parts = [f"{step.get('step', node.position)} {_line(action)}", _state(step)]
    if len(node.children) > 1:
        parts.append(f"{plural(node.branches, 'branch', 'branches')} below: {plural(node.below, 'step')}, {node.pruned_below} pruned")
    if step.get("pruned"):
        parts.append(f"PRUNED: {_line(step['pruned'])}")
    return " · ".join(parts)


def _details(step: Mapping[str, Any]) -> list[str]:
    """The thought and the observation of a step, one line each."""
    out = []
    thought = reply_thought(str(step.get("reply") or "")) if step.get("reply") else ""
    if thought:
        out.append(f"thought: {_line(thought)}")
    out.append(f"observation: {_line(step.get('observation'))}")
    return out


def _tree_lines(roots: Sequence[Node]) -> list[str]:
    """The steps as a tree: each root at the margin, children drawn under it."""
    lines: list[str] = []
    stack: list[tuple[Node, str, str]] = [(root, "", "") for root in reversed(roots)]
    while stack:
        node, lead, rest = stack.pop()
        lines.append(lead + _step_line(node))
        under = rest + ("│   " if len(node.children) > 1 else "    ")
        lines += [f"{under}  {detail}" for detail in _details(node.step)]
        if len(node.children) == 1:  # no split: the branch goes on at the same place
            stack.append((node.children[0], rest, rest))
            continue
        for i, child in reversed(list(enumerate(node.children))):
            last = i == len(node.children) - 1
            stack.append((child, rest + ("└── " if last else "├── "), rest + ("    " if last else "│   ")))
    return lines


def question_text(record: Mapping[str, Any]) -> str:
    """One question of a run as text: the head, then its steps (a list for a linear run, else a tree)."""
    lines = _head(record)
    steps = [s for s in record.get("steps") or [] if isinstance(s, Mapping)]
    if not steps:
        lines.append("(no step)")
    elif linear(parents(steps)):
        for position, step in enumerate(steps, 1):
            lines.append(_step_line(Node(position, 0, step)))
            lines += [f"    {detail}" for detail in _details(step)]
    else:
        lines += _tree_lines(build(steps))
    return "\n".join(lines)


def find_question(records: Sequence[Mapping[str, Any]], qid: str, source: str) -> Mapping[str, Any]:
    """The record of question ``qid``.

    Raises:
        EvalError: the run has no such question (the message names a few it has).

    Example:
        >>> find_question([{"id": "a"}, {"id": "b"}], "c", "run.jsonl")
        Traceback (most recent call last):
        ...
        agent.errors.EvalError: run.jsonl has no question 'c' (it has 2: a, b)
    """
    for record in records:
        if str(record.get("id")) == qid:
            return record
    some = ", ".join(_line(r.get("id"), 40) for r in records[:8]) + (", ..." if len(records) > 8 else "")
    raise EvalError(f"{source} has no question {qid!r} (it has {len(records)}: {some})")
