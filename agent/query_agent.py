"""QueryAgent: an LLM builds a query one action at a time (Algorithm 1).

The prompt is the task description, the action documentation generated
from the code (``pyql docs --format prompt``), a one-shot example, the
question and its entity linking. At step *i* the LLM writes ``Thought i`` /
``Action i``; the environment runs the action; the observation is the result
or, when a correction rule fires, its guideline (ERASER). This repeats until
``execute()`` or the step limit, where the agent asks the LLM to choose the
answer among the current variables and executes.

The agent talks to the environment only through action text and
observations, so the same loop drives the SPARQL and the SQL environments.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment import SparqlEnvironment
    >>> from agent.llm import ScriptedLLM
    >>> llm = ScriptedLLM([
    ...     " Rachel's category.\\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
    ...     " That is the answer.\\nAction 2: execute()",
    ... ])
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> result = QueryAgent(llm, AgentConfig(feedback="raw")).run(env, "what category is tropical storm rachel?")
    >>> [a["label"] for a in result.answers], result.llm_calls
    (['Tropical storm (SSHS)'], 2)
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import jinja2

from agent.llm import DEFAULT_STOP, LLM, LLMError, complete_action
from pyql.actions import render_docs
from pyql.errors import PyQLError

__all__ = ["AgentConfig", "StepTrace", "AgentResult", "QueryAgent", "load_example", "prompt_templates", "FEEDBACK_MODES", "TEMPLATE_VERSION"]

FEEDBACK_MODES = ("eraser", "raw", "none")
TEMPLATE_VERSION = "queryagent-1"
_NO_FEEDBACK = "The action could not be executed."


class AgentConfigError(PyQLError, ValueError):
    """A bad agent setting (unknown mode, missing example file ...)."""

    kind = "agent_config"


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
class AgentConfig:
    """Settings of the QueryAgent loop.

    Attributes:
        max_steps: actions the LLM may take before it is asked to choose an answer.
        action_mode: "text" (the paper's Thought/Action text), "tools" (native
            tool calls) or "grammar" (grammar-constrained decoding, llama.cpp).
        feedback: "eraser" (guidelines), "raw" (the raw error message) or
            "none" (no error detail: failures say only that the action failed).
        example: the one-shot example: a bundled name or a path; None picks
            the environment's default ("freebase" or "table").
        prompt_style: "auto" (follows the LLM's mode: a completion model gets
            one text ending in ``Thought i:``, a chat model messages), "text" or "chat".
        token_budget: estimated tokens (characters / 4) of the history kept in
            the prompt; older observations are shortened first, never the current step.
        keep_observation: characters an older observation is cut to when trimming.
        trace_prompts: "hash" (sha256 of each prompt) or "full" (the text too).
    """

    max_steps: int = 12
    action_mode: str = "text"
    feedback: str = "eraser"
    example: str | None = None
    prompt_style: str = "auto"
    token_budget: int = 6000
    keep_observation: int = 160
    trace_prompts: str = "hash"

    def __post_init__(self) -> None:
        if self.feedback not in FEEDBACK_MODES:
            raise AgentConfigError(f"unknown feedback {self.feedback!r}; use one of {', '.join(FEEDBACK_MODES)}")
        if self.action_mode not in ("text", "tools", "grammar"):
            raise AgentConfigError(f"unknown action mode {self.action_mode!r}; use text, tools or grammar")
        if self.prompt_style not in ("auto", "text", "chat"):
            raise AgentConfigError(f"unknown prompt style {self.prompt_style!r}; use auto, text or chat")
        if self.max_steps < 1:
            raise AgentConfigError(f"max_steps must be ≥ 1, got {self.max_steps}")


@dataclass
class StepTrace:
    """One step of an episode, as written to the trace."""

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


@dataclass
class AgentResult:
    """The outcome of one question."""

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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the trace record of the question)."""
        out = asdict(self)
        out["template_version"] = TEMPLATE_VERSION
        return out

    def summary(self) -> dict[str, Any]:
        """The last line of ``pyql ask --json``."""
        return {
            "answers": self.answers,
            "steps": len(self.steps),
            "llm_calls": self.llm_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "kb_queries": self.kb_queries,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class _Turn:
    step: int
    thought_action: str
    observation: str


def _hash(prompt: Any) -> str:
    text = prompt if isinstance(prompt, str) else "\x1e".join(f"{m['role']}\x1f{m['content']}" for m in prompt)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class QueryAgent:
    """The step-by-step agent (QueryAgent, Algorithm 1).

    Args:
        llm: any :class:`agent.llm.LLM`.
        config: an :class:`AgentConfig`.
    """

    def __init__(self, llm: LLM, config: AgentConfig | None = None) -> None:
        self.llm = llm
        self.config = config or AgentConfig()
        self._jinja = prompt_templates()

    # -- prompt ----------------------------------------------------------------
    def _style(self) -> str:
        if self.config.prompt_style != "auto":
            return self.config.prompt_style
        mode = getattr(getattr(self.llm, "config", None), "mode", "completion")
        return "chat" if mode == "chat" else "text"

    def head(self, env: Any, question: str) -> str:
        """The fixed part of the prompt: task, action docs, example, question."""
        side = "table" if hasattr(env, "table") else "kb"
        example = load_example(self.config.example or ("table" if side == "table" else "freebase"))
        docs = render_docs(env.actions, "prompt")
        if side == "table":
            return self._jinja.get_template("queryagent_table.j2").render(
                docs=docs, example=example, question=question, table=env.describe_table()
            )
        entities = repr(dict(env.memory.entities))
        return self._jinja.get_template("queryagent_kb.j2").render(
            docs=docs, example=example, question=question, entities=entities
        )

    def _history(self, turns: list[_Turn]) -> list[_Turn]:
        """Turns with older observations shortened to fit the token budget."""
        budget = self.config.token_budget * 4
        out = list(turns)
        size = sum(len(t.thought_action) + len(t.observation) for t in out)
        for i, turn in enumerate(out[:-1]):
            if size <= budget:
                break
            if len(turn.observation) > self.config.keep_observation:
                short = turn.observation[: self.config.keep_observation].rstrip() + " ... (shortened)"
                size -= len(turn.observation) - len(short)
                out[i] = _Turn(turn.step, turn.thought_action, short)
        return out

    def prompt(self, head: str, turns: list[_Turn], step: int) -> Any:
        """The prompt for ``step``: one text (completion style) or chat messages."""
        history = self._history(turns)
        if self._style() == "text":
            body = "".join(f"{t.thought_action}\nObservation {t.step}: {t.observation}\n" for t in history)
            return f"{head.rstrip()}\n{body}Thought {step}:"
        system, _, question = head.rpartition("\nQuestion:")
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system.strip()},
            {"role": "user", "content": ("Question:" + question).strip()},
        ]
        for t in history:
            messages.append({"role": "assistant", "content": t.thought_action})
            messages.append({"role": "user", "content": f"Observation {t.step}: {t.observation}"})
        return messages

    # -- the loop --------------------------------------------------------------
    def _observation(self, record: Any) -> str:
        if record.ok or self.config.feedback != "none":
            return record.observation
        return _NO_FEEDBACK

    def run(self, env: Any, question: str) -> AgentResult:
        """Answer one question in the given (fresh) environment.

        LLM errors that survive the retries end the episode (``result.error``)
        instead of raising: an evaluation goes on with the next question.
        """
        started = time.perf_counter()
        if self.config.feedback == "eraser" and env.analyzer is None:
            from correction import Eraser

            env.analyzer = Eraser()
        elif self.config.feedback in ("raw", "none"):
            env.analyzer = None
            env.undo_empty = self.config.feedback == "raw"
        head = self.head(env, question)
        turns: list[_Turn] = []
        traces: list[StepTrace] = []
        calls = tokens_in = tokens_out = 0
        error: str | None = None
        forced = False
        style = self._style()
        for step in range(1, self.config.max_steps + 1):
            prompt = self.prompt(head, turns, step)
            try:
                text, reply = complete_action(
                    self.llm,
                    prompt,
                    env.actions,
                    mode=self.config.action_mode,
                    step=step,
                    resume="thought" if style == "text" else None,
                    stop=list(DEFAULT_STOP),
                )
            except LLMError as exc:
                error = f"llm_error: {exc}"
                break
            calls += 1
            tokens_in += reply.usage_in
            tokens_out += reply.usage_out
            if style == "text" and not reply.tool_calls:
                text = f"Thought {step}:" + text
            record = env.step(text)
            observation = self._observation(record)
            action_line = record.call.text if record.call is not None else None
            thought_action = text.strip() if record.call is None else _thought_action(text, step, action_line)
            turns.append(_Turn(step, thought_action, observation))
            traces.append(
                StepTrace(
                    step=step,
                    prompt_sha256=_hash(prompt),
                    prompt=_full(prompt) if self.config.trace_prompts == "full" else None,
                    reply=reply.text if not reply.tool_calls else text,
                    action=action_line,
                    ok=record.ok,
                    error=record.error,
                    observation=observation,
                    rule=record.error if record.guideline else None,
                    llm_seconds=round(reply.latency, 4),
                    kb_queries=record.kb_queries,
                    kb_seconds=round(record.seconds, 6),
                    tokens_in=reply.usage_in,
                    tokens_out=reply.usage_out,
                    attempts=reply.attempts,
                )
            )
            if env.done:
                break
        if not env.done and error is None:
            forced = True
            step = len(traces) + 1
            calls_forced, t_in, t_out = self._force_answer(env, head, turns, step, traces)
            calls += calls_forced
            tokens_in += t_in
            tokens_out += t_out
        answers = env.final_json()["answers"] if env.done else []
        rules = Counter(t.rule for t in traces if t.rule)
        return AgentResult(
            question=question,
            answers=answers,
            steps=traces,
            done=env.done,
            forced=forced,
            query=_final_query(env),
            llm_calls=calls,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            kb_queries=int(env.counters["kb_queries"]),
            seconds=time.perf_counter() - started,
            rules=dict(rules),
            error=error,
        )

    def _force_answer(self, env: Any, head: str, turns: list[_Turn], step: int, traces: list[StepTrace]) -> tuple[int, int, int]:
        """At the step limit: ask which variable is the answer, set it and execute."""
        variables = [str(v) for v in getattr(env.query, "variables", ())]
        calls = tokens_in = tokens_out = 0
        if variables and hasattr(env.query, "set_answer"):
            ask = self._jinja.get_template("force_answer.j2").render(variables=variables, step=step)
            base = self.prompt(head, turns, step)
            prompt: Any = (base.rpartition(f"Thought {step}:")[0] + ask) if isinstance(base, str) else [
                *base,
                {"role": "user", "content": ask},
            ]
            chosen = variables[-1]
            try:
                reply = self.llm.complete(prompt, stop=[")", "\n"])
                calls, tokens_in, tokens_out = 1, reply.usage_in, reply.usage_out
                picked = reply.text.strip().split(")")[0].split()[:1]
                if picked and picked[0] in variables:
                    chosen = picked[0]
            except LLMError:
                pass
            record = env.step(f"set_answer({chosen})")
            traces.append(_forced_trace(step, prompt, f"set_answer({chosen})", record))
            step += 1
        record = env.step("execute()")
        traces.append(_forced_trace(step, "", "execute()", record))
        return calls, tokens_in, tokens_out


def _forced_trace(step: int, prompt: Any, action: str, record: Any) -> StepTrace:
    return StepTrace(
        step=step,
        prompt_sha256=_hash(prompt) if prompt else "",
        reply="",
        action=action,
        ok=record.ok,
        error=record.error,
        observation=record.observation,
        rule=record.error if record.guideline else None,
        kb_queries=record.kb_queries,
        kb_seconds=round(record.seconds, 6),
        forced=True,
    )


def _thought_action(text: str, step: int, action_line: str | None) -> str:
    """The Thought/Action pair as it goes back into the prompt (trailing text dropped)."""
    thought = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.lower().startswith("thought"):
            thought = stripped.split(":", 1)[1].strip() if ":" in stripped else ""
            break
    if not thought:
        first = text.strip().splitlines()[0] if text.strip() else ""
        thought = "" if first.lower().startswith("action") else first
    return f"Thought {step}: {thought}\nAction {step}: {action_line}"


def _full(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in prompt)


def _final_query(env: Any) -> str:
    final = env.final_json()
    return str(final.get("sparql") or final.get("sql") or "")


def result_from_dict(data: Mapping[str, Any]) -> AgentResult:
    """Rebuild an :class:`AgentResult` from its :meth:`AgentResult.to_dict` form."""
    fields = dict(data)
    fields.pop("template_version", None)
    fields["steps"] = [StepTrace(**s) for s in fields.get("steps", [])]
    return AgentResult(**fields)
