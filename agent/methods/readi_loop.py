"""The Readi loop, once for every kind of reasoning path: generate → instantiate → edit → (answer).

Readi (Cheng et al., 2024) asks the LLM for a reasoning path, instantiates
it on the data, and asks for an edit only when the instance shows a problem.
The loop is the same on a knowledge base (:mod:`agent.methods.readi`: relation
paths, instantiated as PyQL chains) and on a table (:mod:`agent.methods.readi_table`:
chosen headers and row constraints); what differs is given by a
:class:`PathMethod`: how a path is read, how it is instantiated, what needs
an edit and how the edit prompt says it. Answering from the instances stays
with each method.

Example:
    >>> from agent.llm.scripted import ScriptedLLM
    >>> class Words:
    ...     stop, unchanged, empty_path = ["\\n"], "same again", []
    ...     def generate_prompt(self, question): return question
    ...     def first(self, text, triggers): return text.split(), None
    ...     def parse(self, text): return text.split()
    ...     def instantiate(self, path): return len(path)
    ...     def describe(self, path, inst): return f"{inst} words"
    ...     def feedback(self, path, inst, problem, triggers):
    ...         return None if inst >= 2 else ["say two words"]
    ...     def edit_prompt(self, question, path, inst, feedback): return " ".join(feedback)
    ...     def malformed(self, exc): return str(exc)
    ...     def reject(self, edited): return None
    >>> out = run_loop(ScriptedLLM(["one", "one two"]), Words(), "say something", max_edits=3)
    >>> out.path, out.edits, [(t.action, t.observation) for t in out.traces]
    (['one', 'two'], 1, [('generate_path', '1 words'), ('edit_path', '2 words')])
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, Union

from agent.errors import ContextOverflow, LLMError
from agent.faults import infra_failure
from agent.llm.replies import LLM, LLMReply
from agent.methods.context_budget import ask_within, budget_for
from agent.methods.episode import StepTrace, prompt_hash
from pyql.errors import ParseError

__all__ = ["UNANSWERED", "PathMethod", "LoopOutcome", "ask_llm", "llm_failure", "run_loop"]

#: The errors of a Readi call that got no reply (not counted as an LLM call).
UNANSWERED = frozenset({"llm_error", "context_overflow"})


class PathMethod(Protocol):
    """The side-specific part of Readi (see the module docstring).

    Attributes:
        stop: stop sequences of the generate and edit calls.
        unchanged: the message when an edit did not change the path.
        empty_path: the path before any was read (when the first call failed).
    """

    stop: Sequence[str]
    unchanged: str
    empty_path: Any

    def generate_prompt(self, question: str) -> str:
        """The prompt asking for the first path."""
        ...

    def first(self, text: str, triggers: Counter[str]) -> tuple[Any, str | None]:
        """The first path read from the LLM's reply, and the problem to report if it could not be read."""
        ...

    def parse(self, text: str) -> Any:
        """An edited path (raises :class:`pyql.errors.ParseError` when it does not parse)."""
        ...

    def instantiate(self, path: Any) -> Any:
        """The path's instance on the data."""
        ...

    def describe(self, path: Any, instance: Any) -> str:
        """What the instance shows, in one line: the observation of the call that wrote the path."""
        ...

    def feedback(self, path: Any, instance: Any, problem: str | None, triggers: Counter[str]) -> Any | None:
        """What the edit prompt must say, counting the triggers; None when no edit is needed."""
        ...

    def edit_prompt(self, question: str, path: Any, instance: Any, feedback: Any) -> str:
        """The prompt asking for an edit."""
        ...

    def malformed(self, exc: ParseError) -> str:
        """The problem to report when an edit does not parse."""
        ...

    def reject(self, edited: Any) -> str | None:
        """Why a parsed edit is rejected (e.g. too long), or None."""
        ...


@dataclass
class LoopOutcome:
    """What the loop did: its LLM calls, triggers, the first and last path and instance."""

    traces: list[StepTrace] = field(default_factory=list)
    triggers: Counter[str] = field(default_factory=Counter)
    initial: Any = None
    path: Any = None
    instance: Any = None
    edits: int = 0
    error: str | None = None


def ask_llm(
    llm: LLM,
    prompt: Union[str, Callable[[], str]],
    kind: str,
    traces: list[StepTrace],
    stop: Sequence[str],
    grammar: str | None = None,
) -> str | None:
    """One LLM call of Readi, traced (the call's kind in the trace's ``action``); None when it failed.

    The prompt is checked against the LLM's context budget
    (:mod:`agent.methods.context_budget`); a prompt with a list that may be
    cut is given as a function that builds it within the budget
    (:meth:`~agent.methods.context_budget.ContextBudget.fit_items`). A failed
    call's trace has the error ``llm_error`` (the LLM failed) or
    ``context_overflow`` (the prompt does not fit the model's context), and
    the message as its observation.

    Example:
        >>> from agent.llm.config import LLMConfig; from agent.llm.scripted import ScriptedLLM
        >>> traces = []
        >>> ask_llm(ScriptedLLM(["Path: x"]), "p", "generate_path", traces, ["\\nQ:"]), traces[0].action
        ('Path: x', 'generate_path')
        >>> small = ScriptedLLM([], config=LLMConfig(context_tokens=300, max_tokens=200))
        >>> ask_llm(small, "p" * 1000, "qa", traces, ["\\nQ:"]), traces[1].error
        (None, 'context_overflow')
    """
    step = len(traces) + 1
    budget = budget_for(llm)
    built: list[str] = []

    def build() -> str:
        built.append(prompt() if callable(prompt) else budget.check(prompt))
        return built[-1]

    try:
        prompt_text, reply = ask_within(budget, build, lambda p: llm.complete(p, stop=list(stop), grammar=grammar))
    except (LLMError, ContextOverflow) as exc:
        traces.append(_failed_trace(step, built, kind, exc))
        return None
    budget.observe(prompt_text, reply)
    traces.append(_answered_trace(step, prompt_text, reply, kind))
    return reply.text


def _failed_trace(step: int, built: Sequence[str], kind: str, exc: LLMError | ContextOverflow) -> StepTrace:
    """The trace of a call that got no reply: the last prompt built (its hash), the error's kind and message."""
    sent = prompt_hash(built[-1]) if built else ""
    failed = exc.kind if isinstance(exc, ContextOverflow) else "llm_error"
    said = str(exc) if isinstance(exc, ContextOverflow) else _message(exc)
    return StepTrace(step, sent, "", kind, False, failed, said)


def _answered_trace(step: int, prompt_text: str, reply: LLMReply, kind: str) -> StepTrace:
    """The trace of an answered call: the prompt's hash, the reply, its seconds, tokens and attempts."""
    return StepTrace(
        step,
        prompt_hash(prompt_text),
        reply.text,
        kind,
        True,
        None,
        "",
        llm_seconds=round(reply.latency, 4),
        tokens_in=reply.usage_in,
        tokens_out=reply.usage_out,
        attempts=reply.attempts,
    )


def _message(exc: LLMError) -> str:
    """What a failed LLM call says, on one line (as :func:`agent.faults.infra_failure` writes it)."""
    failure = infra_failure(exc)
    return failure.message if failure is not None else str(exc)


def llm_failure(traces: Sequence[StepTrace]) -> str:
    """The error of a Readi run whose LLM call got no reply: its kind (``llm_error``, or
    ``context_overflow`` when the prompt did not fit the model's context) and the failed call's message.

    Example:
        >>> llm_failure([StepTrace(1, "", "", "qa", False, "llm_error", "LLM request failed after 2 attempts to URL: ...")])
        'llm_error: LLM request failed after 2 attempts to URL: ...'
        >>> llm_failure([StepTrace(1, "", "", "qa", False, "context_overflow", "the prompt needs 900 tokens ...")])
        'context_overflow: the prompt needs 900 tokens ...'
    """
    failed = next((t for t in reversed(traces) if t.error in UNANSWERED), None)
    kind = failed.error if failed is not None else "llm_error"
    said = failed.observation if failed is not None and failed.observation else "the LLM failed"
    return f"{kind}: {said}"


def run_loop(llm: LLM, method: PathMethod, question: str, max_edits: int) -> LoopOutcome:
    """Generate a path, instantiate it, and edit it only when necessary (at most ``max_edits`` calls).

    An edit that does not parse, does not change the path or is rejected by
    the method is not instantiated; the next edit prompt says why, and so
    does its trace (``ok`` False, ``error`` ``edit_malformed``,
    ``edit_unchanged`` or ``edit_too_long``, the reason as ``observation``).
    A first path that cannot be read is traced the same way
    (``path_malformed``). A path that was read has the method's
    description of its instance as the observation.

    Example:
        >>> from agent.llm.scripted import ScriptedLLM
        >>> class Numbers:
        ...     stop, unchanged, empty_path = ["\\n"], "same again", []
        ...     def generate_prompt(self, question): return question
        ...     def first(self, text, triggers): return [int(text)], None
        ...     def parse(self, text):
        ...         if not text.isdigit():
        ...             raise ParseError(f"not a number: {text!r}")
        ...         return [int(text)]
        ...     def instantiate(self, path): return path[0]
        ...     def describe(self, path, inst): return f"got {inst}"
        ...     def feedback(self, path, inst, problem, triggers): return None if inst > 1 else [problem or "bigger"]
        ...     def edit_prompt(self, question, path, inst, feedback): return " ".join(feedback)
        ...     def malformed(self, exc): return f"write a number ({exc})"
        ...     def reject(self, edited): return None
        >>> out = run_loop(ScriptedLLM(["1", "two", "2"]), Numbers(), "a number?", max_edits=3)
        >>> [(t.action, t.error, t.observation) for t in out.traces]
        [('generate_path', None, 'got 1'), ('edit_path', 'edit_malformed', "write a number (not a number: 'two')"), ('edit_path', None, 'got 2')]
    """
    out = LoopOutcome()
    problem = _first_path(llm, method, question, out)
    while out.error is None and out.edits < max_edits:
        feedback = method.feedback(out.path, out.instance, problem, out.triggers)
        if feedback is None:
            break
        out.edits += 1
        reply = _ask_edit(llm, method, question, out, feedback)
        if reply is None:
            out.error = llm_failure(out.traces)
            break
        problem = _edit_problem(method, reply, out)
    return out


def _first_path(llm: LLM, method: PathMethod, question: str, out: LoopOutcome) -> str | None:
    """Ask for the first path, read it and instantiate it into ``out``; the problem to report when it could not be read, else None."""
    text = ask_llm(llm, method.generate_prompt(question), "generate_path", out.traces, method.stop)
    problem: str | None = None
    if text is None:
        out.error = llm_failure(out.traces)
        out.path = method.empty_path
    else:
        out.path, problem = method.first(text, out.triggers)
        if problem is not None:
            _mark(out, "path_malformed", problem)
    out.initial = out.path
    out.instance = method.instantiate(out.path)
    if text is not None and problem is None:
        out.traces[-1].observation = method.describe(out.path, out.instance)
    return problem


def _ask_edit(llm: LLM, method: PathMethod, question: str, out: LoopOutcome, feedback: Any) -> str | None:
    """The reply to the edit prompt (None when the call failed); a local LLM is held to the method's edit grammar."""
    grammar = None
    if getattr(getattr(llm, "config", None), "local", False) and hasattr(method, "edit_grammar"):
        grammar = method.edit_grammar(out.path, out.instance, feedback)  # the candidates, as a constraint
    prompt = method.edit_prompt(question, out.path, out.instance, feedback)
    return ask_llm(llm, prompt, "edit_path", out.traces, method.stop, grammar)


def _mark(out: LoopOutcome, error: str, problem: str) -> str:
    """Mark the last trace as failed with ``error``; its observation says what was wrong (``problem``)."""
    trace = out.traces[-1]
    trace.ok, trace.error, trace.observation = False, error, problem
    return problem


def _edit_problem(method: PathMethod, reply: str, out: LoopOutcome) -> str | None:
    """Take an edit: instantiate it, or say why it was not (and mark its trace, the reason as its observation)."""
    try:
        edited = method.parse(reply)
    except ParseError as exc:
        return _mark(out, "edit_malformed", method.malformed(exc))
    if edited == out.path:
        return _mark(out, "edit_unchanged", method.unchanged)
    rejected = method.reject(edited)
    if rejected is not None:
        return _mark(out, "edit_too_long", rejected)
    out.path = edited
    out.instance = method.instantiate(edited)
    out.traces[-1].observation = method.describe(edited, out.instance)
    return None
