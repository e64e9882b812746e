"""What an LLM answers, and the one interface an agent needs to ask it.

One small interface, :class:`LLM`, is all an agent needs::

    reply = llm.complete(prompt, stop=["\\nObservation"], tools=None, grammar=None)
    reply.text, reply.tool_calls, reply.usage_in, reply.usage_out

A reply is an :class:`LLMReply` (its text, its native :class:`ToolCall` s,
tokens, attempts); :class:`UsageMeter` adds up tokens, calls and cost over
many replies. :func:`cap_reply` and :func:`repair_surrogates` make any
backend's reply safe to use: cut to a size, valid Unicode.

The backends: :class:`agent.llm.client.OpenAILLM` (an OpenAI-compatible
server), :class:`agent.llm.scripted.ScriptedLLM` (replays for tests) and
:class:`agent.llm.recording.RecordedLLM` (records or replays another).

Example:
    >>> reply = LLMReply("Thought 1: look.", usage_in=12, usage_out=4, model="m")
    >>> meter = UsageMeter()
    >>> meter.record(reply)
    >>> (reply.total_tokens, meter.calls, messages_to_text([{"role": "user", "content": "Q?"}]))
    (16, 1, 'Q?')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, Union, runtime_checkable

from agent.jsonlines import count_unsafe, safe_json, safe_text

__all__ = [
    "LLM",
    "LLMReply",
    "Message",
    "Prompt",
    "ToolCall",
    "UsageMeter",
    "cap_reply",
    "messages_to_text",
    "repair_surrogates",
    "Sampling",
]

#: One chat message: ``{"role": ..., "content": ...}``.
Message = Mapping[str, Any]
#: What an LLM is asked: one text, or a list of chat messages.
Prompt = Union[str, Sequence[Message]]


class ToolCall(tuple):
    """A native tool call: the pair ``(name, arguments)``, plus ``id`` and the raw arguments.

    Attributes:
        name: the function name.
        arguments: the decoded JSON arguments ({} when they did not decode).
        id: the call id given by the server ('' if none).
        raw_arguments: the arguments' JSON text as received.
        error: why the arguments did not decode (None when they did).

    Example:
        >>> tc = ToolCall.from_json("add_max", '{"max_var": "?time"}', id="call_1")
        >>> name, args = tc
        >>> (name, args, tc.id, tc.error)
        ('add_max', {'max_var': '?time'}, 'call_1', None)
        >>> ToolCall.from_json("add_max", '{"max_var": ').error
        'arguments are not a JSON object: Expecting value at char 12'
    """

    id: str
    raw_arguments: str
    error: str | None

    def __new__(
        cls,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        id: str = "",
        raw_arguments: str | None = None,
        error: str | None = None,
    ) -> "ToolCall":
        args = dict(arguments or {})
        self = super().__new__(cls, (name, args))
        self.id = id
        self.raw_arguments = json.dumps(args, ensure_ascii=False) if raw_arguments is None else raw_arguments
        self.error = error
        return self

    @classmethod
    def from_json(cls, name: str, raw: str | None, *, id: str = "") -> "ToolCall":
        """Decode the arguments' JSON text; a malformed one gives ``arguments={}`` and an ``error``."""
        text = raw or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return cls(name, {}, id=id, raw_arguments=text, error=f"arguments are not a JSON object: {exc.msg} at char {exc.pos}")
        if not isinstance(value, dict):
            return cls(name, {}, id=id, raw_arguments=text, error="arguments are not a JSON object")
        return cls(name, value, id=id, raw_arguments=text)

    @property
    def name(self) -> str:
        return self[0]

    @property
    def arguments(self) -> dict[str, Any]:
        return self[1]

    def __repr__(self) -> str:
        return f"ToolCall({self.name!r}, {self.arguments!r})"


@dataclass
class LLMReply:
    """One reply of an LLM.

    Attributes:
        text: the generated text ('' when the reply is only tool calls).
        tool_calls: native tool calls, each a ``(name, arguments)`` :class:`ToolCall`.
        usage_in: prompt tokens (as reported by the server; 0 if not reported).
        usage_out: completion tokens.
        latency: seconds from the first request to the reply, retries included.
        attempts: requests made (1 when there was no retry).
        finish_reason: ``stop``, ``length``, ``tool_calls`` ... as reported.
        model: the model that answered.
        raw: the response object (or dict) as received, for debugging.
        replaced: characters of the reply that were not valid Unicode (lone
            surrogates, which JSON can carry) and were replaced with U+FFFD
            in ``text`` and the tool calls; 0 for a clean reply.
        cut: the length in characters of the longest text of the reply (its
            text, a tool call's arguments) that was longer than
            ``LLMConfig.max_reply_chars`` and was cut to it; 0 when nothing was cut.
        top_logprobs: for each generated token, its most likely alternatives and their
            natural-log probabilities (``{" 2": -0.3, " 1": -1.5}``), when the call asked for
            them (:attr:`Sampling.top_logprobs`) and the server gave them; else None.

    Example:
        >>> r = LLMReply("Action 1: execute()", usage_in=10, usage_out=5)
        >>> (r.total_tokens, r.tool_calls, r.attempts)
        (15, [], 1)
    """

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage_in: int = 0
    usage_out: int = 0
    latency: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None
    model: str | None = None
    raw: Any = field(default=None, repr=False, compare=False)
    replaced: int = 0
    cut: int = 0
    top_logprobs: list[dict[str, float]] | None = None

    @property
    def total_tokens(self) -> int:
        return self.usage_in + self.usage_out


@dataclass
class UsageMeter:
    """Adds up calls, tokens and cost over many replies.

    Args:
        prices: model → (USD per 1M input tokens, USD per 1M output tokens);
            unknown models (and local ones) cost 0.

    Example:
        >>> m = UsageMeter(prices={"gpt-x": (1.0, 2.0)})
        >>> m.record(LLMReply("a", usage_in=1000, usage_out=500, model="gpt-x", attempts=2))
        >>> m.record(LLMReply("b", usage_in=10, usage_out=10, model="local"))
        >>> (m.calls, m.attempts, m.tokens_in, m.tokens_out, round(m.cost, 6))
        (2, 3, 1010, 510, 0.002)
    """

    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    calls: int = 0
    attempts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    seconds: float = 0.0

    def record(self, reply: LLMReply) -> None:
        """Count one reply."""
        self.calls += 1
        self.attempts += reply.attempts
        self.tokens_in += reply.usage_in
        self.tokens_out += reply.usage_out
        self.seconds += reply.latency
        price_in, price_out = self.prices.get(reply.model or "", (0.0, 0.0))
        self.cost += (reply.usage_in * price_in + reply.usage_out * price_out) / 1_000_000

    def as_dict(self) -> dict[str, Any]:
        """The totals as a JSON-ready dict.

        Example:
            >>> UsageMeter().as_dict()
            {'calls': 0, 'attempts': 0, 'tokens_in': 0, 'tokens_out': 0, 'cost_usd': 0.0, 'llm_seconds': 0.0}
        """
        return {
            "calls": self.calls,
            "attempts": self.attempts,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": round(self.cost, 6),
            "llm_seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Sampling:
    """What one call asks of the sampler beyond the LLM's configuration (``complete(..., sampling=...)``).

    A search that samples (``vote``, ``generate-execute``) asks each sample at a
    temperature above 0 with its own seed, so that the samples differ and each
    one's request is distinct and reproducible (a recording keys it,
    :mod:`agent.llm.recording`); a search that scores listed choices asks for
    the top log-probabilities of the reply's tokens. A field left None is not
    sent: the call is then the same request as without it.

    Attributes:
        temperature: the sampling temperature of this call (None: the configured one).
        seed: the sampler's seed (None: none sent).
        top_logprobs: how many of each generated token's most likely alternatives to
            return with their log-probabilities (None: none asked;
            :attr:`LLMReply.top_logprobs`).

    Example:
        >>> Sampling(temperature=0.7, seed=3).fields(), Sampling().fields()
        ({'temperature': 0.7, 'seed': 3}, {})
    """

    temperature: float | None = None
    seed: int | None = None
    top_logprobs: int | None = None

    def fields(self) -> dict[str, Any]:
        """The fields that are set (what a request and a recording's key add)."""
        return {k: v for k, v in (("temperature", self.temperature), ("seed", self.seed), ("top_logprobs", self.top_logprobs))
                if v is not None}


@runtime_checkable
class LLM(Protocol):
    """What an agent needs from an LLM.

    ``prompt`` is either one string (sent as a single user message on the chat
    endpoint, as is on the completions endpoint) or a list of chat messages
    (``{"role": ..., "content": ...}``; joined into one text on the
    completions endpoint). ``stop`` overrides the configured stop sequences;
    ``tools`` are OpenAI tool schemas (native tool calls); ``grammar`` is a
    GBNF grammar the server must follow (llama.cpp). ``sampling`` (a
    :class:`Sampling`) sets this call's temperature, seed or log-probabilities;
    only the strategies that sample or score give it, so an LLM written
    before it existed still serves every other strategy.
    """

    def complete(
        self,
        prompt: Prompt,
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        grammar: str | None = None,
        sampling: Sampling | None = None,
    ) -> LLMReply: ...


def messages_to_text(prompt: Prompt) -> str:
    """One text for the completions endpoint: a string as is, messages' contents joined.

    Example:
        >>> messages_to_text([{"role": "system", "content": "Rules."}, {"role": "user", "content": "Q?"}])
        'Rules.\\n\\nQ?'
    """
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(str(m.get("content") or "") for m in prompt)


def cap_reply(reply: LLMReply, limit: int) -> LLMReply:
    """The reply with its text and each tool call's arguments cut to ``limit`` characters (:attr:`LLMReply.cut`).

    A cut text ends with a note saying how long it was; cut tool-call
    arguments are no longer JSON, so the call carries an ``error`` saying so.

    Example:
        >>> r = cap_reply(LLMReply("x" * 50), 20)
        >>> r.text, r.cut
        ('xxxxxxxxxxxxxxxxxxxx [cut: the reply had 50 characters]', 50)
        >>> cap_reply(LLMReply("", tool_calls=[ToolCall("f", {"a": "y" * 40})]), 20).tool_calls[0].error
        'arguments are cut: they had 49 characters (more than 20)'
    """
    longest = 0
    if len(reply.text) > limit:
        longest = len(reply.text)
        reply.text = reply.text[:limit] + f" [cut: the reply had {len(reply.text)} characters]"
    calls: list[ToolCall] = []
    for tc in reply.tool_calls:
        if len(tc.raw_arguments) > limit:
            size = len(tc.raw_arguments)
            longest = max(longest, size)
            tc = ToolCall(tc.name, {}, id=tc.id, raw_arguments=tc.raw_arguments[:limit],
                          error=f"arguments are cut: they had {size} characters (more than {limit})")
        calls.append(tc)
    reply.tool_calls = calls
    reply.cut = max(reply.cut, longest)
    return reply


def repair_surrogates(text: str, tool_calls: Sequence[ToolCall]) -> tuple[str, list[ToolCall], int]:
    """The reply's text and tool calls with lone surrogates replaced, and how many were.

    JSON can carry a lone surrogate (``"\\ud800"``), which no UTF-8 text can
    hold; each one becomes U+FFFD (:attr:`LLMReply.replaced` counts them).

    Example:
        >>> text, calls, replaced = repair_surrogates("a\\ud800b", [ToolCall("f", {"x": "y\\udc00"})])
        >>> (text == "a\\ufffdb", calls[0].arguments == {"x": "y\\ufffd"}, replaced)
        (True, True, 2)
    """
    replaced = count_unsafe(text)
    calls: list[ToolCall] = []
    for tc in tool_calls:
        in_args = count_unsafe(json.dumps(tc.arguments, ensure_ascii=False))
        bad = count_unsafe(tc.name) + count_unsafe(tc.id) + max(in_args, count_unsafe(tc.raw_arguments))
        if bad:
            replaced += bad
            arguments = safe_json(tc.arguments)
            raw = json.dumps(arguments, ensure_ascii=False) if tc.error is None else safe_text(tc.raw_arguments)
            tc = ToolCall(safe_text(tc.name), arguments, id=safe_text(tc.id), raw_arguments=raw, error=tc.error)
        calls.append(tc)
    return (safe_text(text) if replaced else text), calls, replaced
