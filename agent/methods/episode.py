"""One episode of an agent, as it is traced: its steps, its result, its prompts.

Both agents (QueryAgent in :mod:`agent.methods.query_agent`, Readi in
:mod:`agent.methods.readi`) record what they did in the same shapes: a
:class:`StepTrace` per LLM call or action, and one :class:`AgentResult` per
question, which the runner writes as the question's trace line. Prompts come
from the jinja2 templates in ``agent/templates`` (:func:`prompt_templates`)
and are traced by their sha256 (:func:`prompt_hash`).

Example:
    >>> r = AgentResult("q?", [{"value": "x", "label": None}], [], True, False, "SELECT ...")
    >>> result_from_dict(r.to_dict()) == r, r.summary()["answers"]
    (True, [{'value': 'x', 'label': None}])
    >>> prompt_hash("hello")[:12]
    '2cf24dba5fb0'
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import jinja2

from agent.errors import AgentConfigError  # noqa: F401 (defined in agent/errors.py)
from agent.faults import FAILED_TO_RUN, FINISHED, error_kind

__all__ = [
    "RECORD_TEXT_LIMIT",
    "TEMPLATE_VERSION",
    "cap_strings",
    "AgentConfigError",
    "StepTrace",
    "AgentResult",
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


def prompt_hash(prompt: Any) -> str:
    text = prompt if isinstance(prompt, str) else "\x1e".join(f"{m['role']}\x1f{m['content']}" for m in prompt)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def result_from_dict(data: Mapping[str, Any]) -> AgentResult:
    """Rebuild an :class:`AgentResult` from its :meth:`AgentResult.to_dict` form."""
    fields = dict(data)
    fields.pop("template_version", None)
    fields["steps"] = [StepTrace(**s) for s in fields.get("steps", [])]
    return AgentResult(**fields)
