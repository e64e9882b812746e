"""One episode of an agent, as it runs and as it is traced: its state, its steps, its result, its prompts.

While a question is answered step by step, its :class:`Episode` holds what
the prompt shows (the fixed head, one :class:`Turn` per step taken) and what
the trace keeps (one :class:`StepTrace` per LLM call or action, written by
the policy that knows its format, :mod:`agent.methods.policies`), with the
counters and the reason it ended. Every strategy
(:mod:`agent.methods.strategies`: the greedy loop, Readi) records what it did
in the same shapes, one :class:`AgentResult` per question, which the runner
writes as the question's trace line. Prompts come from the jinja2 templates
in ``agent/templates`` (:func:`prompt_templates`) and are traced by their
sha256 (:func:`prompt_hash`).

Example:
    >>> r = AgentResult("q?", [{"value": "x", "label": None}], [], True, False, "SELECT ...")
    >>> result_from_dict(r.to_dict()) == r, r.summary()["answers"]
    (True, [{'value': 'x', 'label': None}])
    >>> prompt_hash("hello")[:12]
    '2cf24dba5fb0'
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

import jinja2

from agent.errors import AgentConfigError  # noqa: F401 (defined in agent/errors.py)
from agent.errors import ContextOverflow
from agent.faults import FAILED_TO_RUN, FINISHED, error_kind, infra_failure
from pyql.echo import one_line

__all__ = [
    "RECORD_TEXT_LIMIT",
    "TEMPLATE_VERSION",
    "cap_strings",
    "AgentConfigError",
    "StepTrace",
    "AgentResult",
    "Turn",
    "Usage",
    "Episode",
    "NO_FEEDBACK",
    "observation_of",
    "record_fields",
    "forced_trace",
    "env_trace",
    "as_branch",
    "prompt_hash",
    "prompt_templates",
    "load_example",
    "result_from_dict",
]

#: The version of QueryAgent's prompt templates, written into every trace record.
TEMPLATE_VERSION = "queryagent-1"

#: The most characters of one string in a trace record (a run-file line, ``pyql ask --json``): an answer, a reply, an observation.
RECORD_TEXT_LIMIT = 65536

_CUT_NOTE = re.compile(r"(?:\.\.\.)? \[cut: [^\]\n]{1,80}\]\Z")


def cap_strings(value: Any, limit: int = RECORD_TEXT_LIMIT) -> Any:
    """``value`` with every string longer than ``limit`` cut, with a note saying how long it was (dicts and lists walked).

    Scoring uses the agent's answers as they are; only what is written is cut.
    A string that already ends with a cut note (a reply the LLM client cut,
    :func:`agent.llm.replies.cap_reply`) keeps that note, which has the first
    length, so capping twice changes nothing. Dict keys are cut as values
    are (an entity mention of a data set is a key). The same string is
    always cut the same way: an answer and a gold answer that were equal
    are still equal once cut.

    Example:
        >>> cap_strings({"answers": [{"value": "x" * 30, "label": None}]}, 10)
        {'answers': [{'value': 'xxxxxxxxxx... [cut: 30 characters in all]', 'label': None}]}
        >>> cap_strings("y" * 20 + " [cut: the reply had 900 characters]", 10)
        'yyyyyyyyyy [cut: the reply had 900 characters]'
        >>> cap_strings({"z" * 12: 1}, 10)
        {'zzzzzzzzzz... [cut: 12 characters in all]': 1}
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        noted = _CUT_NOTE.search(value)
        return value[:limit] + (noted.group(0) if noted else f"... [cut: {len(value)} characters in all]")
    if isinstance(value, dict):
        return {cap_strings(k, limit): cap_strings(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [cap_strings(v, limit) for v in value]
    return value


def prompt_templates() -> jinja2.Environment:
    """The jinja2 environment of the agents' prompt templates (``agent/templates``)."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("agent", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def load_example(name_or_path: str | Path) -> str:
    """A one-shot example: a bundled one (``freebase``, ``table``) or a text file.

    Raises:
        AgentConfigError: for an unknown name or an unreadable file.

    Example:
        >>> load_example("freebase").splitlines()[0]
        'Question: which cyclone that affected florida had the most direct fatalities?'
    """
    text = str(name_or_path)
    bundled = resources.files("agent") / "examples" / f"{text}.txt"
    if "/" not in text and bundled.is_file():
        return bundled.read_text(encoding="utf-8").strip()
    path = Path(text)
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    names = sorted(p.name[:-4] for p in (resources.files("agent") / "examples").iterdir() if p.name.endswith(".txt"))
    raise AgentConfigError(f"no one-shot example {text!r}: use one of {', '.join(names)} or a path to a text file")


@dataclass
class StepTrace:
    """One step of an episode, as written to the trace.

    ``advice`` is the ERASER advice rule the step ran with (not blocked, a
    note in the observation); ``escalation`` the level of a repeated failed
    action (0: not a repeat; see :mod:`pyql.environment`). ``scoring_requests``:
    requests the model made to score the listed relations before the step
    (choose mode, ``first_relation="model"``; their time is in ``llm_seconds``).
    ``without_call``: why choose mode took the step without asking the LLM
    (:func:`agent.methods.choose.forced_choice`), or None.

    The steps of an episode are a tree: ``parent`` is the 1-based position
    in :attr:`AgentResult.steps` of the step this one follows on its branch
    (None for the first step of a branch from the start), and ``pruned``
    says why a strategy dropped the branch at this step (None: kept). A
    linear run is a tree with one branch: each step's parent is the step
    before it (:func:`as_branch`). Positions, not ``step`` numbers, are what
    ``parent`` refers to: a step number is the step of its branch (the
    choose mode numbers by position, the written modes by the loop's step,
    and a search repeats them across branches).
    """

    step: int
    prompt_sha256: str
    reply: str
    action: str | None
    ok: bool
    error: str | None
    observation: str
    rule: str | None = None
    llm_seconds: float = 0.0
    kb_queries: int = 0
    kb_seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1
    prompt: str | None = None
    forced: bool = False
    advice: str | None = None
    escalation: int = 0
    scoring_requests: int = 0
    without_call: str | None = None
    parent: int | None = None
    pruned: str | None = None


@dataclass
class AgentResult:
    """The outcome of one question.

    ``status`` is ``finished`` when the episode ran to its end (scored), or
    ``failed_to_run`` when a service failed (:mod:`agent.faults`); ``error``
    is then ``"kind: message"``.
    ``rules`` counts the ERASER rules that stopped a step, ``advice`` the
    advice rules a step ran with, ``escalations`` the repeated failed
    actions by escalation level ("1", "2", "3"); ``stopped`` says why the
    agent ended a line of action early ("repeated_mistake"), if it did, and
    ``stopped_by`` the kind of the repeat that ended it (the step's error,
    e.g. ``bad_argument``, ``no_action``, an ERASER rule, or ``no_change``
    for a step that changed nothing, ``invalid_choice`` in choose mode).
    ``chain`` is the final query's action lines (the SPARQL side), from
    which a logical form is written for the logical-form exact match.
    """

    question: str
    answers: list[dict[str, Any]]
    steps: list[StepTrace]
    done: bool
    forced: bool
    query: str
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    kb_queries: int = 0
    seconds: float = 0.0
    rules: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    status: str = FINISHED
    advice: dict[str, int] = field(default_factory=dict)
    escalations: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None
    stopped_by: str | None = None
    chain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the trace record of the question); strings are cut at :data:`RECORD_TEXT_LIMIT`."""
        out = cap_strings(asdict(self))
        out["template_version"] = TEMPLATE_VERSION
        return out

    @property
    def failed_to_run(self) -> bool:
        """Whether a service failure kept the question from running (not scored)."""
        return self.status == FAILED_TO_RUN

    def error_json(self) -> dict[str, str] | None:
        """The error as ``{"kind": ..., "message": ...}``, or None.

        Example:
            >>> AgentResult("q?", [], [], False, False, "", error="llm_error: down").error_json()
            {'kind': 'llm_error', 'message': 'down'}
        """
        if not self.error:
            return None
        kind = error_kind(self.error) or "error"
        message = self.error.split(":", 1)[1].strip() if ":" in self.error else ""
        if not message:  # Readi's "llm_error": the message is the failed call's observation
            message = next((s.observation for s in reversed(self.steps) if s.error == kind and s.observation), kind)
        return {"kind": kind, "message": message}

    def summary(self) -> dict[str, Any]:
        """The last line of ``pyql ask --json``: the answers, counters, the status and the error (or None)."""
        return {
            "answers": cap_strings(self.answers),
            "steps": len(self.steps),
            "llm_calls": self.llm_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "kb_queries": self.kb_queries,
            "seconds": round(self.seconds, 3),
            "status": self.status,
            "error": self.error_json(),
        }


@dataclass
class Turn:
    """One step as the prompt's history shows it: its number, the action as written, and what it observed."""

    step: int
    thought_action: str
    observation: str


@dataclass
class Usage:
    """The LLM calls of a question and their tokens, shared by every branch of its episode."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class Episode:
    """The running state of one question: what the prompt shows, what the trace keeps, why it ended.

    Attributes:
        head: the prompt's fixed part (task, docs, example, question).
        side: the environment's side (:class:`agent.methods.sides.Side`), asked once where the episode starts.
        turns: the steps taken, as the prompt shows them.
        traces: every step traced (:meth:`add`).
        usage: the LLM calls made and their tokens (:attr:`calls`, :attr:`tokens_in`, :attr:`tokens_out`).
        error: what ended the episode (``kind: message``), or None.
        forced: whether the answer was forced at the step limit.
        stopped, stopped_by: ``repeated_mistake`` and the kind of the repeat that ended the line.
        invalid_choices: choose mode: replies without a listed number so far.
        bad_arguments: tools mode: tool calls whose arguments were not JSON, by (name, arguments).
        column_scores: choose mode on a table: the headers scored by the model (``first_relation="model"``).
        scoring_pending: choose mode: scorer requests and seconds not yet in a trace.
        column_scoring: choose mode on a table: whether and why the headers were scored (the result's ``extra``).
        tip: the position in :attr:`traces` of this branch's last step (None before the first).
    """

    head: str
    side: Any = None
    turns: list[Turn] = field(default_factory=list)
    traces: list[StepTrace] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: Usage())
    error: str | None = None
    forced: bool = False
    stopped: str | None = None
    stopped_by: str | None = None
    invalid_choices: int = 0
    bad_arguments: Counter = field(default_factory=Counter)
    column_scores: dict[str, float] | None = None
    scoring_pending: tuple[int, float] = (0, 0.0)
    column_scoring: dict[str, Any] | None = None
    tip: int | None = None

    def add(self, trace: StepTrace) -> StepTrace:
        """Trace one step of the episode, on its branch: its parent is the branch's last step (:attr:`tip`), and it becomes the tip.

        Example:
            >>> e = Episode(head="")
            >>> [(t.step, t.parent) for t in (e.add(StepTrace(1, "", "", "a()", True, None, "")), e.add(StepTrace(2, "", "", "b()", True, None, "")))]
            [(1, None), (2, 1)]
        """
        trace.parent = self.tip
        self.traces.append(trace)
        self.tip = len(self.traces)
        return trace

    def branch(self) -> Episode:
        """Another branch from here (a search's candidate, stepped on a fork of the environment): its own turns, tip and
        repeat counts; the same traces (one tree) and the same usage (the question's totals).

        Example:
            >>> e = Episode(head="h")
            >>> _ = e.add(StepTrace(1, "", "", "a()", True, None, ""))
            >>> b = e.branch(); _ = b.add(StepTrace(2, "", "", "b()", True, None, "")); _ = e.add(StepTrace(2, "", "", "c()", True, None, ""))
            >>> [(t.action, t.parent) for t in e.traces], b.traces is e.traces
            ([('a()', None), ('b()', 1), ('c()', 1)], True)
        """
        twin = copy.copy(self)
        twin.turns = list(self.turns)
        twin.bad_arguments = Counter(self.bad_arguments)
        return twin

    @property
    def calls(self) -> int:
        """LLM calls made (on every branch)."""
        return self.usage.calls

    @property
    def tokens_in(self) -> int:
        """Prompt tokens of those calls."""
        return self.usage.tokens_in

    @property
    def tokens_out(self) -> int:
        """Reply tokens of those calls."""
        return self.usage.tokens_out

    def count(self, replies: Sequence[Any]) -> None:
        """Add the LLM calls and tokens of ``replies`` to the episode's totals."""
        self.usage.calls += len(replies)
        self.usage.tokens_in += sum(r.usage_in for r in replies)
        self.usage.tokens_out += sum(r.usage_out for r in replies)

    def repeated(self, record: Any, cap: int) -> bool:
        """Whether ``record`` repeats a mistake (or a step that changed nothing) ``cap`` times: the line stops."""
        if record.repeats < cap:
            return False
        self.stopped, self.stopped_by = "repeated_mistake", record.repeat_kind or record.error
        return True

    def failed_on_service(self, record: Any, kb: Any = None) -> bool:
        """Whether the step failed on a service (:func:`agent.faults.infra_failure`; ``kb`` tells an
        unreachable KB from a query's fault); then the episode ends with the failure as its error."""
        failure = infra_failure(record.exception, kb)
        if failure is None:
            return False
        self.error = str(failure)
        return True

    def overflowed(self, exc: ContextOverflow) -> bool:
        """The prompt did not fit the model's context: the episode ends with ``context_overflow`` (scored as failed; False)."""
        self.error = f"{exc.kind}: {one_line(str(exc), limit=len(str(exc)))}"
        return False


#: The observation of a failed step with ``feedback="none"``.
NO_FEEDBACK = "The action could not be executed."


def observation_of(record: Any, feedback: str) -> str:
    """A step's observation as the agent is told it: the environment's, or only that it failed (``feedback="none"``).

    Example:
        >>> from pyql.environment import StepRecord
        >>> observation_of(StepRecord(1, "f()", error="wrong_arity", observation="f takes 2"), "none")
        'The action could not be executed.'
    """
    if record.ok or feedback != "none":
        return str(record.observation)
    return NO_FEEDBACK


def record_fields(record: Any, observation: str) -> dict[str, Any]:
    """The trace fields of a step that come from the environment's record."""
    return {
        "action": record.call.text if record.call is not None else None,
        "ok": record.ok,
        "error": record.error,
        "observation": observation,
        "rule": record.error if record.guideline else None,
        "kb_queries": record.kb_queries,
        "kb_seconds": round(record.seconds, 6),
        "advice": record.advice,
        "escalation": record.escalation,
    }


def forced_trace(step: int, prompt: Any, action: str, record: Any) -> StepTrace:
    """A step forced at the step limit (the answer set, executed)."""
    return StepTrace(
        step=step,
        prompt_sha256=prompt_hash(prompt) if prompt else "",
        reply="",
        action=action,
        ok=record.ok,
        error=record.error,
        observation=record.observation,
        rule=record.error if record.guideline else None,
        kb_queries=record.kb_queries,
        kb_seconds=round(record.seconds, 6),
        forced=True,
        advice=record.advice,
        escalation=record.escalation,
    )


def env_trace(step: int, record: Any) -> StepTrace:
    """A step the environment took itself (choose mode's looks): no LLM call."""
    return StepTrace(
        step=step,
        prompt_sha256="",
        reply="",
        action=record.call.text if record.call is not None else record.text,
        ok=record.ok,
        error=record.error,
        observation=record.observation,
        kb_queries=record.kb_queries,
        kb_seconds=round(record.seconds, 6),
        escalation=record.escalation,
    )


def trace_tallies(traces: Sequence[StepTrace]) -> dict[str, dict[str, int]]:
    """What a question's steps add up to in its result: ERASER's rules that fired, the advice taken on steps that
    ran, the escalation levels reached (``AgentResult``'s ``rules``, ``advice`` and ``escalations``).

    Example:
        >>> t = [StepTrace(1, "", "", "a()", False, "x", "", rule="r1", escalation=1), StepTrace(2, "", "", "b()", True, None, "")]
        >>> trace_tallies(t)
        {'rules': {'r1': 1}, 'advice': {}, 'escalations': {'1': 1}}
    """
    return {
        "rules": dict(Counter(t.rule for t in traces if t.rule)),
        "advice": dict(Counter(t.advice for t in traces if t.advice and t.ok)),
        "escalations": {str(k): v for k, v in sorted(Counter(t.escalation for t in traces if t.escalation).items())},
    }


def prompt_hash(prompt: Any) -> str:
    text = prompt if isinstance(prompt, str) else "\x1e".join(f"{m['role']}\x1f{m['content']}" for m in prompt)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def as_branch(traces: Sequence[StepTrace]) -> list[StepTrace]:
    """The steps as one branch: each one's parent is the step before it (a linear run; the first has none).

    Example:
        >>> [t.parent for t in as_branch([StepTrace(i, "", "", None, True, None, "") for i in (1, 2, 3)])]
        [None, 1, 2]
    """
    for position, trace in enumerate(traces):
        trace.parent = position or None
    return list(traces)


def result_from_dict(data: Mapping[str, Any]) -> AgentResult:
    """Rebuild an :class:`AgentResult` from its :meth:`AgentResult.to_dict` form.

    A record written before steps had parents (no step has the field) is read as one branch (:func:`as_branch`).

    Example:
        >>> old = {"question": "q?", "answers": [], "done": False, "forced": False, "query": "",
        ...        "steps": [{"step": i, "prompt_sha256": "", "reply": "", "action": "a()", "ok": True, "error": None, "observation": ""} for i in (1, 2)]}
        >>> [(s.parent, s.pruned) for s in result_from_dict(old).steps]
        [(None, None), (1, None)]
    """
    fields = dict(data)
    fields.pop("template_version", None)
    steps = list(fields.get("steps", []))
    fields["steps"] = [StepTrace(**s) for s in steps]
    if steps and not any("parent" in s for s in steps):
        as_branch(fields["steps"])
    return AgentResult(**fields)
