"""A scripted LLM for tests and replays: :class:`ScriptedLLM`.

:class:`ScriptedLLM` replays given replies and records every prompt it got:
deterministic tests of the agent loop, API errors and malformed replies. Its
requests go through the same retries as a real server's
(:func:`agent.llm.retries.with_retries`), and its replies through the same
repair and cut (:func:`agent.llm.replies.repair_surrogates`,
:func:`agent.llm.replies.cap_reply`).

Example:
    >>> llm = ScriptedLLM(["Thought 1: look around.\\nAction 1: get_relation(m.0crbvqz)"])
    >>> reply = llm.complete("Question: what category is tropical storm rachel?")
    >>> reply.text.splitlines()[1]
    'Action 1: get_relation(m.0crbvqz)'
    >>> llm.prompts
    ['Question: what category is tropical storm rachel?']
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from agent.errors import LLMError  # noqa: F401 (defined in agent/errors.py)
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply, Prompt, Sampling, UsageMeter, cap_reply, messages_to_text, repair_surrogates
from agent.llm.retries import with_retries

__all__ = ["FirstChoiceLLM", "ScriptedLLM"]

@dataclass
class _Call:
    """One request a :class:`ScriptedLLM` got: the prompt and the keyword arguments."""

    prompt: Prompt
    kwargs: dict[str, Any]


class ScriptedLLM:
    """Replays given replies in order and records every prompt it received.

    Each script item is a reply text, an :class:`LLMReply`, or an exception
    to raise for that request. Requests go through :func:`with_retries`, so a
    retryable error (e.g. ``LLMError(..., status=429, retryable=True)`` or an
    ``openai.RateLimitError``) is retried with the next item, exactly as
    :class:`agent.llm.client.OpenAILLM` would; waits are recorded in :attr:`sleeps`, not slept.

    Args:
        replies: the script.
        config: retry settings (default: :class:`LLMConfig` defaults).
        meter: a :class:`UsageMeter` (one is made if None).
        model: the model name put on replies.

    Attributes:
        prompts: every prompt received, one per request (retries included).
        calls: the same, with the keyword arguments (``stop``, ``tools``, ``grammar``; ``sampling`` when a call gave it).
        sleeps: the backoff delays that would have been slept.

    Raises:
        LLMError: (from :meth:`complete`) when the script has no reply left.

    Example:
        >>> llm = ScriptedLLM([LLMError("rate limited", status=429, retryable=True), "Action 1: execute()"])
        >>> r = llm.complete("Q", stop=["\\nObservation"])
        >>> (r.text, r.attempts, len(llm.prompts), llm.calls[0].kwargs["stop"])
        ('Action 1: execute()', 2, 2, ['\\nObservation'])
        >>> llm.complete("again")
        Traceback (most recent call last):
        ...
        agent.errors.LLMError: ScriptedLLM ran out of replies after 2 (request 3, prompt starts 'again'); give it more replies
    """

    def __init__(
        self,
        replies: Iterable[str | LLMReply | BaseException],
        *,
        config: LLMConfig | None = None,
        meter: UsageMeter | None = None,
        model: str = "scripted",
    ) -> None:
        self.replies: list[str | LLMReply | BaseException] = list(replies)
        self.config = config or LLMConfig()
        self.meter = meter if meter is not None else UsageMeter()
        self.model = model
        self.calls: list[_Call] = []
        self.sleeps: list[float] = []
        self._next = 0

    @property
    def prompts(self) -> list[Prompt]:
        return [c.prompt for c in self.calls]

    @property
    def remaining(self) -> int:
        """Script items not used yet."""
        return len(self.replies) - self._next

    def complete(
        self,
        prompt: Prompt,
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        grammar: str | None = None,
        sampling: Sampling | None = None,
    ) -> LLMReply:
        """Return the next scripted reply (see the class); a call's ``sampling`` is kept with it, the script does not read it."""
        kwargs: dict[str, Any] = {"stop": None if stop is None else list(stop), "tools": tools, "grammar": grammar}
        if sampling is not None:
            kwargs["sampling"] = sampling

        def call() -> LLMReply:
            self.calls.append(_Call(prompt if isinstance(prompt, str) else [dict(m) for m in prompt], kwargs))
            if self._next >= len(self.replies):
                head = messages_to_text(prompt)[:40]
                raise LLMError(
                    f"ScriptedLLM ran out of replies after {len(self.replies)} (request {len(self.calls)}, "
                    f"prompt starts {head!r}); give it more replies"
                )
            item = self.replies[self._next]
            self._next += 1
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, LLMReply):
                return replace(item, tool_calls=list(item.tool_calls),
                               top_logprobs=[dict(t) for t in item.top_logprobs] if item.top_logprobs is not None else None)
            return LLMReply(
                text=str(item),
                usage_in=len(messages_to_text(prompt).split()),
                usage_out=len(str(item).split()),
                finish_reason="stop",
                model=self.model,
            )

        start = time.monotonic()
        reply, attempts = with_retries(call, self.config, sleep=self.sleeps.append)
        text, tool_calls, replaced = repair_surrogates(reply.text, reply.tool_calls)
        if replaced:
            reply.text, reply.tool_calls, reply.replaced = text, tool_calls, reply.replaced + replaced
        reply = cap_reply(reply, self.config.max_reply_chars)
        reply.attempts = attempts
        reply.latency = reply.latency or (time.monotonic() - start)
        if reply.model is None:
            reply.model = self.model
        self.meter.record(reply)
        return reply


class FirstChoiceLLM:
    """No model: every reply is ``1``, the first listed step of a numbered list (0 tokens, 0 seconds).

    The bundled 270M model answers ``1`` to nearly every numbered list, so in
    choose mode this stub shows what the list's ordering does alone (the
    benchmarks' ``--llm first`` and "the list alone"). Whatever a call asks
    (stop strings, tools, a grammar, a search's sampling) is accepted and
    left unread.

    Example:
        >>> FirstChoiceLLM().complete("Choice 1:", grammar='root ::= "1"').text
        '1'
    """

    model = "first-choice-stub"

    def complete(self, prompt: Prompt, **_: Any) -> LLMReply:
        """Answer ``1`` whatever the prompt."""
        return LLMReply("1", finish_reason="stop", model=self.model)
