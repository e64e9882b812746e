"""LLM access for the agents: any OpenAI-compatible server, or a scripted LLM for tests.

One small interface, :class:`LLM`, is all an agent needs::

    reply = llm.complete(prompt, stop=["\\nObservation"], tools=None, grammar=None)
    reply.text, reply.tool_calls, reply.usage_in, reply.usage_out

Implementations:

* :class:`OpenAILLM` talks to an OpenAI-compatible HTTP server through the
  ``openai`` package (OpenAI itself, vLLM, llama.cpp's or llama-cpp-python's
  server, ...), on the chat endpoint (``mode="chat"``) or on the plain
  completions endpoint (``mode="completion"``: a base model follows the
  one-shot Thought/Action/Observation format best as a completion). It can
  pass OpenAI tool schemas (native tool calls) and a GBNF grammar (llama.cpp's
  ``grammar`` field, grammar-constrained decoding, see :mod:`agent.llm.gbnf`).
* :class:`ScriptedLLM` replays given replies and records every prompt it got:
  deterministic tests of the agent loop, API errors and malformed replies.

Transient failures (HTTP 429, 5xx, time-outs, connection errors) are retried
by :func:`with_retries`, a bounded exponential backoff with jitter; other
errors (400, 401, 404 ...) are not. The ``openai`` client's own retries are
switched off so that every attempt is ours and is counted
(:attr:`LLMReply.attempts`). :class:`UsageMeter` adds up tokens, calls and
cost.

Configuration (:class:`LLMConfig`) comes from flags or from the environment:
``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``PYQL_MODEL`` (and ``PYQL_LLM_MODE``). A local server
needs no key (a dummy one is sent). With nothing configured, ``pyql llm serve``
starts a small local model (see :mod:`agent.llm.local`).

Example:
    >>> llm = ScriptedLLM(["Thought 1: look around.\\nAction 1: get_relation(m.0crbvqz)"])
    >>> reply = llm.complete("Question: what category is tropical storm rachel?")
    >>> reply.text.splitlines()[1]
    'Action 1: get_relation(m.0crbvqz)'
    >>> llm.prompts
    ['Question: what category is tropical storm rachel?']
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field, fields, replace
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    NoReturn,
    Protocol,
    Sequence,
    TypeVar,
    Union,
    runtime_checkable,
)

from agent.errors import ContextOverflow, LLMConfigError, LLMError  # noqa: F401 (defined in agent/errors.py)
from agent.jsonlines import count_unsafe, safe_json, safe_text
from pyql.errors import PyQLError, TermError

if TYPE_CHECKING:
    from pyql.action_parser import ActionCall

__all__ = [
    "ACTION_MODES",
    "ContextOverflow",
    "DEFAULT_STOP",
    "LLM",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "LLMReply",
    "Message",
    "OpenAILLM",
    "Prompt",
    "ScriptedLLM",
    "ToolCall",
    "UsageMeter",
    "add_llm_arguments",
    "cap_reply",
    "complete_action",
    "config_from_args",
    "context_overflow",
    "is_loopback",
    "is_retryable",
    "messages_to_text",
    "reply_action",
    "reply_action_text",
    "retry_delay",
    "tool_call_action",
    "with_retries",
]

#: Stop sequences for the paper's text format: the model must not write the observation.
DEFAULT_STOP: tuple[str, ...] = ("\nObservation",)

#: How an agent gets an action from the LLM (see :func:`complete_action`).
ACTION_MODES: tuple[str, ...] = ("text", "tools", "grammar", "choose")

#: The dummy key sent to servers that need none (llama.cpp, vLLM ...).
NO_KEY = "sk-no-key"

Message = Mapping[str, Any]
Prompt = Union[str, Sequence[Message]]

_HOW_TO_CONFIGURE = (
    "give --base-url URL and --model NAME (and --api-key KEY for a hosted API), or set "
    "OPENAI_BASE_URL / OPENAI_API_KEY / PYQL_MODEL, or start the local model with "
    "`pyql llm serve` (needs `pip install 'pyql[local]'`) and export the OPENAI_BASE_URL it prints"
)


# ---------------------------------------------------------------------------
# Errors


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (the only kind the local server may bind).

    Example:
        >>> is_loopback("::1"), is_loopback("10.0.0.1")
        (True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# ---------------------------------------------------------------------------
# Configuration


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class LLMConfig:
    """How to reach an LLM and how to sample from it.

    Attributes:
        base_url: the server's OpenAI-compatible base URL, e.g.
            ``http://127.0.0.1:8000/v1``; None for OpenAI's own API.
        api_key: the key; None lets :meth:`resolved` pick the dummy key for a
            local server.
        model: the model name; None asks the server (``/v1/models``, first entry).
        mode: ``"chat"`` (chat completions) or ``"completion"`` (plain completions).
        temperature: sampling temperature (0: greedy, reproducible).
        max_tokens: the most tokens one reply may have.
        stop: stop sequences; the default stops before ``Observation``.
        timeout: seconds per request.
        max_retries: retries after the first attempt on 429/5xx/time-outs.
        backoff_base: the first retry waits about this many seconds, doubling after.
        backoff_max: no single wait is longer than this.
        extra_body: extra JSON fields sent with every request (e.g. llama.cpp
            sampling options such as ``{"top_k": 1}``).
        context_tokens: the model's context size in tokens (``--context-tokens``);
            None: what the server reports, or unknown (:mod:`agent.methods.context_budget`).
        max_reply_chars: a reply's text (and each tool call's arguments) is
            cut to this many characters before it is used (:attr:`LLMReply.cut`
            says how long it was); the HTTP body is read, in chunks, up to
            :attr:`max_body_bytes` only.

    Example:
        >>> c = LLMConfig(base_url="http://127.0.0.1:8000/v1")
        >>> (c.mode, c.temperature, c.stop, c.max_retries)
        ('chat', 0.0, ('\\nObservation',), 4)
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    mode: str = "chat"
    temperature: float = 0.0
    max_tokens: int = 256
    stop: tuple[str, ...] = DEFAULT_STOP
    timeout: float = 120.0
    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    context_tokens: int | None = None
    max_reply_chars: int = 65536

    def __post_init__(self) -> None:
        if self.mode not in ("chat", "completion"):
            raise LLMConfigError(f"unknown LLM mode {self.mode!r}; use 'chat' or 'completion'")
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        elif not isinstance(self.stop, tuple):
            object.__setattr__(self, "stop", tuple(self.stop or ()))
        if self.max_retries < 0:
            raise LLMConfigError(f"max_retries must be >= 0, not {self.max_retries}")
        if self.max_tokens <= 0:
            raise LLMConfigError(f"max_tokens must be positive, not {self.max_tokens}")
        if self.timeout <= 0:
            raise LLMConfigError(f"timeout must be positive, not {self.timeout}")
        if self.context_tokens is not None and self.context_tokens <= self.max_tokens:
            raise LLMConfigError(
                f"the context ({self.context_tokens} tokens) must be larger than the reply's max_tokens ({self.max_tokens}): "
                "give a larger --context-tokens or a smaller --max-tokens"
            )
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise LLMConfigError("backoff_base and backoff_max must be >= 0")
        if self.max_reply_chars <= 0:
            raise LLMConfigError(f"max_reply_chars must be positive, not {self.max_reply_chars}")

    @property
    def max_body_bytes(self) -> int:
        """The most bytes of one HTTP body read: 16 bytes per reply character (JSON escapes), at least 1 MiB.

        A longer body is a malformed reply (its JSON cannot be complete), retried like one.

        Example:
            >>> LLMConfig().max_body_bytes, LLMConfig(max_reply_chars=100_000).max_body_bytes
            (1048576, 1600000)
        """
        return max(1 << 20, 16 * self.max_reply_chars)

    @classmethod
    def from_env(cls, **overrides: Any) -> "LLMConfig":
        """A config from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``PYQL_MODEL``, then overrides.

        ``PYQL_LLM_MODE`` (``chat`` or ``completion``) sets the endpoint too.

        Overrides that are None are ignored, so command-line flags can be
        passed straight through (an unset flag keeps the environment's value).

        Args:
            **overrides: any :class:`LLMConfig` field.

        Raises:
            LLMConfigError: an unknown field name or a bad value.

        Example:
            >>> import os
            >>> os.environ["PYQL_MODEL"] = "gemma"
            >>> c = LLMConfig.from_env(base_url="http://127.0.0.1:9/v1", api_key=None)
            >>> (c.base_url, c.model, c.api_key is None or c.api_key == os.environ.get("OPENAI_API_KEY"))
            ('http://127.0.0.1:9/v1', 'gemma', True)
            >>> del os.environ["PYQL_MODEL"]
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise LLMConfigError(f"unknown LLM setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values: dict[str, Any] = {
            "base_url": _env("OPENAI_BASE_URL"),
            "api_key": _env("OPENAI_API_KEY"),
            "model": _env("PYQL_MODEL"),
        }
        if _env("PYQL_LLM_MODE"):
            values["mode"] = _env("PYQL_LLM_MODE")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def local(self) -> bool:
        """Whether the server is on this machine (a loopback base URL: llama.cpp, llama-cpp-python, vLLM ...).

        Requests to a local server carry llama.cpp's ``cache_prompt: true`` (reuse
        the evaluated prefix of the last prompt), and the choose mode constrains
        the reply with a GBNF grammar; a hosted API gets neither field.

        Example:
            >>> LLMConfig(base_url="http://127.0.0.1:8000/v1").local, LLMConfig(base_url="https://api.openai.com/v1").local
            (True, False)
        """
        if not self.base_url:
            return False
        from urllib.parse import urlsplit

        return is_loopback((urlsplit(self.base_url).hostname or "").strip("[]"))

    @property
    def configured(self) -> bool:
        """Whether a server can be reached: a base URL or (for OpenAI's API) a key.

        Example:
            >>> LLMConfig().configured, LLMConfig(base_url="http://127.0.0.1:1/v1").configured
            (False, True)
        """
        return bool(self.base_url or self.api_key)

    def resolved(self) -> "LLMConfig":
        """The config ready for a client: a dummy key for a local server.

        Raises:
            LLMConfigError: neither a base URL nor a key is given (the message
                says how to configure one), or OpenAI's API without a model.

        Example:
            >>> LLMConfig(base_url="http://127.0.0.1:8000/v1").resolved().api_key
            'sk-no-key'
            >>> LLMConfig().resolved()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            agent.errors.LLMConfigError: no LLM is configured: give --base-url URL ...
        """
        if not self.configured:
            raise LLMConfigError("no LLM is configured: " + _HOW_TO_CONFIGURE)
        if not self.base_url and not self.model:
            raise LLMConfigError("no model is given for OpenAI's API: give --model NAME or set PYQL_MODEL")
        return self if self.api_key else replace(self, api_key=NO_KEY)

    def describe(self) -> str:
        """A one-line description without the key (for logs and run records).

        Example:
            >>> LLMConfig(base_url="http://127.0.0.1:8000/v1", model="m", api_key="sk-secret").describe()
            'model=m mode=chat base_url=http://127.0.0.1:8000/v1 temperature=0.0 max_tokens=256'
        """
        return (
            f"model={self.model or '(server default)'} mode={self.mode} base_url={self.base_url or '(OpenAI)'} "
            f"temperature={self.temperature} max_tokens={self.max_tokens}"
        )


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the LLM flags (``--base-url``, ``--model``, ``--llm-mode``, ``--action-mode`` ...) to a parser.

    Unset flags stay None, so :func:`config_from_args` keeps the environment's values.

    Example:
        >>> p = argparse.ArgumentParser()
        >>> add_llm_arguments(p)
        >>> a = p.parse_args(["--base-url", "http://127.0.0.1:8000/v1", "--llm-mode", "completion"])
        >>> (a.base_url, a.llm_mode, a.model, a.action_mode)  # no --action-mode: the command picks (agent.cli)
        ('http://127.0.0.1:8000/v1', 'completion', None, None)
    """
    g = parser.add_argument_group("LLM access (defaults from OPENAI_BASE_URL, OPENAI_API_KEY, PYQL_MODEL)")
    g.add_argument("--base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (env OPENAI_BASE_URL)")
    g.add_argument("--api-key", help="API key (env OPENAI_API_KEY; a local server needs none)")
    g.add_argument("--model", help="model name (env PYQL_MODEL; default: the server's first model)")
    g.add_argument("--llm-mode", choices=["chat", "completion"], default=None,
                   help="chat completions or plain completions (a base model works best as a completion)")
    g.add_argument("--action-mode", choices=list(ACTION_MODES), default=None,
                   help="text: the paper's Thought/Action text; tools: native tool calls; "
                        "grammar: grammar-constrained decoding (llama.cpp 'grammar' field); "
                        "choose: pick one of the valid next steps by number "
                        "(default: choose with the bundled local model on a KB, text otherwise)")
    g.add_argument("--temperature", type=float, default=None, help="sampling temperature (default 0)")
    g.add_argument("--max-tokens", type=int, default=None, help="most tokens per reply (default 256)")
    g.add_argument("--llm-timeout", type=float, default=None,
                   help="seconds a whole request may take, body included (default 120)")
    g.add_argument("--max-reply-chars", type=int, default=None,
                   help="a reply's text is cut to this many characters (default 65536)")
    g.add_argument("--max-retries", type=int, default=None, help="retries on 429/5xx/time-outs (default 4)")


def config_from_args(args: argparse.Namespace, **overrides: Any) -> LLMConfig:
    """An :class:`LLMConfig` from the flags of :func:`add_llm_arguments` and the environment.

    Example:
        >>> p = argparse.ArgumentParser(); add_llm_arguments(p)
        >>> c = config_from_args(p.parse_args(["--base-url", "http://127.0.0.1:1/v1", "--max-tokens", "64"]))
        >>> (c.base_url, c.max_tokens, c.mode)
        ('http://127.0.0.1:1/v1', 64, 'chat')
    """
    values = {
        "base_url": getattr(args, "base_url", None),
        "api_key": getattr(args, "api_key", None),
        "model": getattr(args, "model", None),
        "mode": getattr(args, "llm_mode", None),
        "temperature": getattr(args, "temperature", None),
        "max_tokens": getattr(args, "max_tokens", None),
        "timeout": getattr(args, "llm_timeout", None),
        "max_retries": getattr(args, "max_retries", None),
        "context_tokens": getattr(args, "context_tokens", None),
        "max_reply_chars": getattr(args, "max_reply_chars", None),
    }
    values.update(overrides)
    return LLMConfig.from_env(**values)


# ---------------------------------------------------------------------------
# Replies and usage


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


# ---------------------------------------------------------------------------
# The interface


@runtime_checkable
class LLM(Protocol):
    """What an agent needs from an LLM.

    ``prompt`` is either one string (sent as a single user message on the chat
    endpoint, as is on the completions endpoint) or a list of chat messages
    (``{"role": ..., "content": ...}``; joined into one text on the
    completions endpoint). ``stop`` overrides the configured stop sequences;
    ``tools`` are OpenAI tool schemas (native tool calls); ``grammar`` is a
    GBNF grammar the server must follow (llama.cpp).
    """

    def complete(
        self,
        prompt: Prompt,
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        grammar: str | None = None,
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


def _as_messages(prompt: Prompt) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


# ---------------------------------------------------------------------------
# Retries

T = TypeVar("T")


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed request is worth retrying: 429, 5xx, time-outs, connection errors.

    Example:
        >>> is_retryable(LLMError("busy", status=503, retryable=True)), is_retryable(ValueError("x"))
        (True, False)
    """
    if isinstance(exc, LLMError):
        return exc.retryable
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency of pyql
        return False
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return status == 429 or status == 408 or status >= 500
    return False


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def retry_delay(attempt: int, config: LLMConfig, exc: BaseException | None = None, rng: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based).

    Exponential (``backoff_base * 2**(attempt-1)``) capped at ``backoff_max``,
    with jitter (between half and all of it); a server's ``Retry-After``
    header wins when it is longer (still capped).

    Example:
        >>> c = LLMConfig(backoff_base=1.0, backoff_max=5.0)
        >>> [retry_delay(n, c, rng=lambda: 1.0) for n in (1, 2, 3, 4)]
        [1.0, 2.0, 4.0, 5.0]
        >>> retry_delay(1, c, rng=lambda: 0.0)
        0.5
    """
    base = min(config.backoff_max, config.backoff_base * (2 ** max(0, attempt - 1)))
    delay = base * (0.5 + 0.5 * rng())
    after = _retry_after(exc) if exc is not None else None
    if after is not None:
        delay = max(delay, min(after, config.backoff_max))
    return delay


def _describe(exc: BaseException) -> str:
    if isinstance(exc, LLMError):  # ours: the message says what happened and where
        return str(exc).strip() or type(exc).__name__
    status = _status_of(exc)
    name = type(exc).__name__
    text = str(exc).strip() or name
    return f"{name} (HTTP {status}): {text}" if status else f"{name}: {text}"


def with_retries(
    fn: Callable[[], T],
    config: LLMConfig,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[int, BaseException, float], None] | None = None,
    where: str | None = None,
) -> tuple[T, int]:
    """Call ``fn`` with bounded retries on transient failures (see :func:`is_retryable`).

    Args:
        fn: the request; it raises on failure.
        config: ``max_retries``, ``backoff_base`` and ``backoff_max`` are used.
        sleep: how to wait (tests pass a fake one).
        on_retry: called as ``on_retry(attempt, error, delay)`` before each wait.
        where: the server (its URL), named in the message of an exhausted retry.

    Returns:
        ``(result, attempts)``.

    Raises:
        LLMError: a non-retryable API error (its status is kept), or the
            retries are exhausted (the message names the number of attempts,
            the server and the last error; ``answered`` says whether the
            server sent any HTTP answer to the last attempt). Other
            exceptions (bugs) pass through.

    Example:
        >>> script = iter([LLMError("busy", status=503, retryable=True), "ok"])
        >>> def call():
        ...     item = next(script)
        ...     if isinstance(item, Exception):
        ...         raise item
        ...     return item
        >>> waits = []
        >>> with_retries(call, LLMConfig(backoff_base=2.0), sleep=waits.append)[1]
        2
        >>> 1.0 <= waits[0] <= 2.0
        True
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn(), attempt
        except Exception as exc:  # noqa: BLE001 - classified below
            if not is_retryable(exc):
                _raise_not_retried(exc, attempt)
            if attempt > config.max_retries:
                to = f" to {where}" if where else ""
                raise LLMError(
                    f"LLM request failed after {attempt} attempts ({config.max_retries} retries){to}: {_describe(exc)}",
                    status=_status_of(exc), attempts=attempt, retryable=False, answered=_answered(exc),
                ) from exc
            delay = retry_delay(attempt, config, exc)
            if on_retry is not None:
                on_retry(attempt, exc, delay)
            sleep(delay)


def _answered(exc: BaseException) -> bool:
    """Whether the server sent an HTTP answer (a status) to the request that failed with ``exc``."""
    if isinstance(exc, LLMError):
        return exc.answered if exc.answered is not None else exc.status is not None
    return _status_of(exc) is not None


def _raise_not_retried(exc: Exception, attempt: int) -> NoReturn:
    """Re-raise an error that is not retried: an API error as an :class:`LLMError` (status kept), a bug as is."""
    if isinstance(exc, LLMError):
        exc.attempts = attempt
        raise exc
    if _is_api_error(exc):
        error = LLMError(f"LLM request failed (not retried): {_describe(exc)}", status=_status_of(exc), attempts=attempt)
        error.answered = _answered(exc)
        raise error from exc
    raise exc


#: How servers say that a prompt is longer than the model's context (OpenAI, llama-cpp-python and vLLM:
#: "maximum context length is N tokens"; llama.cpp: "exceeds the available context size"; vLLM's v1
#: engine and others: "... is too long and exceeds limit of N", "context window of N").
_CONTEXT_MESSAGES = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|exceeds? the available context size"
    r"|exceeds? (?:the )?context (?:window|size|length)|too long and exceeds limit|prompt is too long",
    re.IGNORECASE,
)
#: Where a server's message gives the context size.
_CONTEXT_LIMIT = re.compile(
    r"(?:maximum context length is|context window of|context size of|context length|exceeds limit of|n_ctx\W+)\s*\(?(\d+)",
    re.IGNORECASE,
)
#: Where a server's message gives the prompt's tokens (llama-cpp-python, OpenAI, vLLM).
_PROMPT_TOKENS = re.compile(
    r"(\d+) in your prompt|(\d+) in the messages|messages resulted in (\d+) tokens|request has (\d+) input tokens"
    r"|input prompt \((\d+) tokens\)|prompt \(total length (\d+)\)",
    re.IGNORECASE,
)
#: The error codes and types servers give a context-length refusal.
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"})


def context_overflow(exc: BaseException, where: str = "the LLM server") -> ContextOverflow | None:
    """The :class:`ContextOverflow` a server's refusal means, or None when it is another error.

    A 4xx answer (400, 413) whose error ``code``/``type`` is a context-length
    one, or whose message says so (see ``_CONTEXT_MESSAGES``), is the prompt
    being longer than the model's context: not a service failure (the same
    prompt fails again), so it is not an :class:`LLMError`. The context size,
    when the message gives it, is kept as ``limit`` (the agent's budget learns it).

    Example:
        >>> class Refused(Exception):  # what the openai client raises, reduced to its fields
        ...     status_code = 400
        ...     body = {"message": "This model's maximum context length is 4096 tokens, however you requested "
        ...                        "4453 tokens (4197 in your prompt; 256 for the completion).", "code": "context_length_exceeded"}
        >>> e = context_overflow(Refused("Error code: 400"), "http://127.0.0.1:8000/v1")
        >>> (e.kind, e.limit, e.needed, e.source, str(e)[:66])
        ('context_overflow', 4096, 4197, 'server', 'the LLM server at http://127.0.0.1:8000/v1 refused the prompt as l')
        >>> context_overflow(ValueError("maximum context length is 4096")) is None  # not an answer of a server
        True
    """
    status = _status_of(exc)
    if status is None or not 400 <= status < 500 or status == 429:
        return None
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    message = " ".join(str(error.get("message") or body or exc).split())
    codes = {str(error.get("code") or ""), str(error.get("type") or "")}
    if not (codes & _CONTEXT_CODES or _CONTEXT_MESSAGES.search(message)):
        return None
    found = _CONTEXT_LIMIT.search(message)
    limit = int(found.group(1)) if found else (int(error["n_ctx"]) if str(error.get("n_ctx", "")).isdigit() else None)
    said = _PROMPT_TOKENS.search(message)
    needed = int(next(g for g in said.groups() if g)) if said else None
    if needed is None and str(error.get("n_prompt_tokens", "")).isdigit():  # llama.cpp's server
        needed = int(error["n_prompt_tokens"])
    return ContextOverflow(
        f"the LLM server at {where} refused the prompt as longer than the model's context (HTTP {status}): {message}",
        needed=needed,
        limit=limit,
        source="server",
    )


def _is_api_error(exc: BaseException) -> bool:
    try:
        import openai
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, openai.OpenAIError)


# ---------------------------------------------------------------------------
# OpenAI-compatible servers


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


class OpenAILLM:
    """An LLM behind an OpenAI-compatible HTTP API, through the ``openai`` package.

    Every request is bounded: ``config.timeout`` bounds the *whole* request
    (connecting, waiting, reading the body; a server that trickles its body
    is cut there), and the body is read in chunks up to
    ``config.max_body_bytes`` (:class:`_BoundedHTTPClient`). A reply's text is
    then cut to ``config.max_reply_chars``.

    Args:
        config: the :class:`LLMConfig` (see :meth:`LLMConfig.from_env`).
        meter: a :class:`UsageMeter` to record every reply in (one is made if None).
        sleep: how to wait between retries.
        client: an ``openai.OpenAI`` client to use instead of making one.

    Raises:
        LLMConfigError: nothing configured (the message says how).

    Example:
        >>> llm = OpenAILLM(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))
        >>> (llm.config.api_key, llm.client.max_retries, str(llm.client.base_url))
        ('sk-no-key', 0, 'http://127.0.0.1:9/v1/')
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        meter: UsageMeter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        client: Any = None,
    ) -> None:
        self.config = config.resolved()
        self.meter = meter if meter is not None else UsageMeter()
        self.sleep = sleep
        if client is None:
            import openai

            kwargs: dict[str, Any] = {
                "api_key": self.config.api_key,
                "max_retries": 0,
                "timeout": self.config.timeout,
                "http_client": _bounded_http_client(self.config, self.where),
            }
            if self.config.base_url:
                kwargs["base_url"] = self.config.base_url
            client = openai.OpenAI(**kwargs)
        self.client = client
        self._model = self.config.model

    @property
    def where(self) -> str:
        """The server, as messages name it: its base URL (or OpenAI's API)."""
        return self.config.base_url or "OpenAI's API (https://api.openai.com/v1)"

    @property
    def model(self) -> str:
        """The model name: configured, or the server's first model (asked once).

        Raises:
            LLMError: the server cannot be asked or lists no model.
        """
        if self._model is None:
            def ask() -> Any:
                return self._checked(self.client.models.list)

            page, _ = self._retried(ask)
            data = list(_get(page, "data", None) or [])
            if not data:
                raise LLMConfigError(f"the server at {self.config.base_url} lists no model; give --model NAME or set PYQL_MODEL")
            self._model = str(_get(data[0], "id"))
        return self._model

    def complete(
        self,
        prompt: Prompt,
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        grammar: str | None = None,
    ) -> LLMReply:
        """Ask the LLM once (with retries); see :class:`LLM`.

        Tools need the chat endpoint: with ``mode="completion"`` and tools,
        the request goes to the chat endpoint. A local server (see
        :attr:`LLMConfig.local`) gets ``cache_prompt: true`` so that llama.cpp
        keeps the evaluated prompt prefix between calls.

        Raises:
            LLMError: a non-retryable error, or retries exhausted; a reply
                without a choice, or whose choice has neither text nor a tool
                call (``content: null``), is a malformed reply, retried like
                a body that is not JSON.
        """
        request = self._request(prompt, stop, tools, grammar)
        use_chat = "messages" in request
        create = self.client.chat.completions.create if use_chat else self.client.completions.create

        def call() -> LLMReply:
            return self._parse(self._checked(lambda: create(**request)), chat=use_chat)

        start = time.monotonic()
        reply, attempts = self._retried(call)
        reply.latency = time.monotonic() - start
        reply.attempts = attempts
        self.meter.record(reply)
        return reply

    def _request(
        self, prompt: Prompt, stop: Sequence[str] | None, tools: Sequence[Mapping[str, Any]] | None, grammar: str | None
    ) -> dict[str, Any]:
        """The keyword arguments of one completion request (chat: with ``messages``, else with ``prompt``)."""
        cfg = self.config
        stop_list = list(cfg.stop if stop is None else stop)
        extra: dict[str, Any] = dict(cfg.extra_body)
        if cfg.local:
            extra.setdefault("cache_prompt", True)
        if grammar is not None:
            extra["grammar"] = grammar
        request: dict[str, Any] = {
            "model": self.model,
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
            "timeout": cfg.timeout,
        }
        if stop_list:
            request["stop"] = stop_list
        if extra:
            request["extra_body"] = extra
        if cfg.mode == "chat" or tools:
            request["messages"] = _as_messages(prompt)
            if tools:
                request["tools"] = [dict(t) for t in tools]
        else:
            request["prompt"] = messages_to_text(prompt)
        return request

    def _retried(self, call: Callable[[], T]) -> tuple[T, int]:
        """``with_retries`` naming the server; a server on loopback that did not answer gets the hint to start one."""
        try:
            return with_retries(call, self.config, sleep=self.sleep, where=self.where)
        except LLMError as exc:
            if self.config.local and exc.answered is False and "pyql llm serve" not in str(exc):
                hint = LLMError(
                    f"{exc} (a local server: is it running? start the local model with `pyql llm serve` "
                    "and give the base URL it prints)",
                    status=exc.status, attempts=exc.attempts, answered=False,
                )
                raise hint from exc
            raise

    def _checked(self, request: Callable[[], Any]) -> Any:
        """Run one request within ``config.timeout`` in all; a body that is not JSON or not UTF-8 is a retryable :class:`LLMError`.

        The request runs in a worker thread and the caller waits at most
        ``config.timeout`` for it: a server that trickles its body, or
        answers its headers and then stalls, is cut there (the worker stops
        at its next chunk, :class:`_BoundedStream`). The ``openai`` client
        raises :class:`json.JSONDecodeError` or :class:`UnicodeDecodeError`
        for an HTTP 200 whose JSON body does not decode, and returns the text
        itself when the body is not declared as JSON; both are a server (or
        proxy) fault, not a reply. A refusal of a prompt longer than the
        model's context is :class:`ContextOverflow` (:func:`context_overflow`):
        the agent's failure, not the server's.
        """
        where = self.where
        try:
            response = _within(request, self.config.timeout, where)
        except UnicodeDecodeError as exc:
            raise LLMError(
                f"the LLM server at {where} answered with a body that is not UTF-8 ({exc.reason} at byte {exc.start})",
                status=200,
                retryable=True,
            ) from exc
        except json.JSONDecodeError as exc:
            raise LLMError(
                f"the LLM server at {where} answered with a body that is not JSON ({exc.msg} at char {exc.pos}): "
                f"{_excerpt(exc.doc)}",
                status=200,
                retryable=True,
            ) from exc
        except Exception as exc:  # noqa: BLE001 - a context-length error is told apart; the rest is re-raised as is
            overflow = context_overflow(exc, where)
            if overflow is None:
                raise
            raise overflow from exc
        if isinstance(response, (str, bytes, bytearray)):
            raise LLMError(
                f"the LLM server at {where} answered with a body that is not a JSON completion: {_excerpt(response)}",
                status=200,
                retryable=True,
            )
        return response

    def _parse(self, response: Any, *, chat: bool) -> LLMReply:
        """The reply of a completion; a completion with no choice, or no text and no tool call, is malformed (retried)."""
        choices = _get(response, "choices", None) or []
        if not choices:
            raise self._malformed("no choice", response)
        choice = choices[0]
        tool_calls: list[ToolCall] = []
        if chat:
            message = _get(choice, "message", None) or {}
            text = _get(message, "content", None)
            for tc in _get(message, "tool_calls", None) or []:
                fn = _get(tc, "function", None) or {}
                tool_calls.append(ToolCall.from_json(str(_get(fn, "name", "")), _get(fn, "arguments", None), id=str(_get(tc, "id", "") or "")))
        else:
            text = _get(choice, "text", None)
        if not isinstance(text, str) and not tool_calls:
            field_name = "message.content" if chat else "text"
            raise self._malformed(f"a choice whose {field_name} is {_json_name(text)} and that has no tool call", response)
        usage = _get(response, "usage", None)
        text, tool_calls, replaced = _repaired(str(text or ""), tool_calls)
        reply = LLMReply(
            text=text,
            tool_calls=tool_calls,
            replaced=replaced,
            usage_in=int(_get(usage, "prompt_tokens", 0) or 0) if usage is not None else 0,
            usage_out=int(_get(usage, "completion_tokens", 0) or 0) if usage is not None else 0,
            finish_reason=_get(choice, "finish_reason", None),
            model=_get(response, "model", None) or self._model,
            raw=response,
        )
        return cap_reply(reply, self.config.max_reply_chars)

    def _malformed(self, what: str, response: Any) -> LLMError:
        """A retryable :class:`LLMError` for an HTTP 200 completion without a usable reply."""
        return LLMError(
            f"the LLM server at {self.where} answered with {what} (a malformed reply): {_excerpt(_json_text(response))}",
            status=200,
            retryable=True,
        )


def _json_name(value: Any) -> str:
    """How JSON writes a value's type, for messages (``null``, ``a number`` ...)."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(type(value), "not a string")


def _json_text(response: Any) -> str:
    """A response as JSON text (never a Python repr), for messages."""
    if hasattr(response, "model_dump"):
        try:
            response = response.model_dump(mode="json", exclude_unset=True)
        except Exception:  # noqa: BLE001 - a model that cannot be dumped: its fields as they are
            response = getattr(response, "__dict__", str(response))
    try:
        return json.dumps(response, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(response)


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


def _within(request: Callable[[], T], seconds: float, where: str) -> T:
    """``request()`` in a worker thread; a retryable :class:`LLMError` when it takes longer than ``seconds`` in all."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = request()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="pyql-llm", daemon=True).start()
    if not done.wait(seconds):
        raise LLMError(
            f"the LLM server at {where} timed out: no complete reply within {seconds:g} s (--llm-timeout {seconds:g})",
            retryable=True,
            answered=False,
        )
    if "error" in box:
        raise box["error"]
    return box["value"]


def _bounded_http_client(config: LLMConfig, where: str) -> Any:
    """An ``httpx`` client for the ``openai`` package whose every body is read in bounded chunks (:class:`_BoundedStream`)."""
    import openai

    try:
        from httpx2 import SyncByteStream
    except ImportError:  # pragma: no cover - openai releases built on httpx
        from httpx import SyncByteStream

    class _Stream(_BoundedStream, SyncByteStream):  # type: ignore[misc, valid-type]
        pass

    class _BoundedHTTPClient(openai.DefaultHttpxClient):  # type: ignore[misc, valid-type]
        """Sends each request streaming, wraps the body (size cap, deadline), then reads it as asked."""

        def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            deadline = time.monotonic() + config.timeout
            response = super().send(request, stream=True, **kwargs)
            response.stream = _Stream(response.stream, config, where, deadline)
            if not stream:
                try:
                    response.read()
                except BaseException:
                    response.close()
                    raise
            return response

    return _BoundedHTTPClient(timeout=config.timeout)


class _BoundedStream:
    """A response body read chunk by chunk: at most ``config.max_body_bytes``, and not after the deadline.

    Past the size, a retryable :class:`LLMError` (the JSON of a cut body
    cannot be complete: a malformed reply); past the deadline, the same as a
    time-out (the caller has already given up: this stops the worker).
    """

    def __init__(self, inner: Any, config: LLMConfig, where: str, deadline: float) -> None:
        self.inner, self.config, self.where, self.deadline = inner, config, where, deadline

    def __iter__(self) -> Iterator[bytes]:
        size, limit = 0, self.config.max_body_bytes
        for chunk in self.inner:
            size += len(chunk)
            if size > limit:
                raise LLMError(
                    f"the LLM server at {self.where} sent a body of more than {limit} bytes (a malformed reply; "
                    f"replies are cut at --max-reply-chars {self.config.max_reply_chars} characters)",
                    status=200, retryable=True,
                )
            if time.monotonic() > self.deadline:
                raise LLMError(
                    f"the LLM server at {self.where} timed out: no complete reply within {self.config.timeout:g} s "
                    f"(--llm-timeout {self.config.timeout:g})",
                    retryable=True, answered=False,
                )
            yield chunk

    def close(self) -> None:
        self.inner.close()


def _excerpt(body: Any, limit: int = 200) -> str:
    """The start of a response body, safe to print (for error messages)."""
    text = safe_text(body) if isinstance(body, (str, bytes, bytearray)) else safe_text(str(body))
    text = " ".join(text.split())
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def _repaired(text: str, tool_calls: Sequence[ToolCall]) -> tuple[str, list[ToolCall], int]:
    """The reply's text and tool calls with lone surrogates replaced, and how many were."""
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


# ---------------------------------------------------------------------------
# A scripted LLM for tests


@dataclass
class _Call:
    prompt: Prompt
    kwargs: dict[str, Any]


class ScriptedLLM:
    """Replays given replies in order and records every prompt it received.

    Each script item is a reply text, an :class:`LLMReply`, or an exception
    to raise for that request. Requests go through :func:`with_retries`, so a
    retryable error (e.g. ``LLMError(..., status=429, retryable=True)`` or an
    ``openai.RateLimitError``) is retried with the next item, exactly as
    :class:`OpenAILLM` would; waits are recorded in :attr:`sleeps`, not slept.

    Args:
        replies: the script.
        config: retry settings (default: :class:`LLMConfig` defaults).
        meter: a :class:`UsageMeter` (one is made if None).
        model: the model name put on replies.

    Attributes:
        prompts: every prompt received, one per request (retries included).
        calls: the same, with the keyword arguments (``stop``, ``tools``, ``grammar``).
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
    ) -> LLMReply:
        """Return the next scripted reply (see the class)."""
        kwargs = {"stop": None if stop is None else list(stop), "tools": tools, "grammar": grammar}

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
                return replace(item, tool_calls=list(item.tool_calls))
            return LLMReply(
                text=str(item),
                usage_in=len(messages_to_text(prompt).split()),
                usage_out=len(str(item).split()),
                finish_reason="stop",
                model=self.model,
            )

        start = time.monotonic()
        reply, attempts = with_retries(call, self.config, sleep=self.sleeps.append)
        text, tool_calls, replaced = _repaired(reply.text, reply.tool_calls)
        if replaced:
            reply.text, reply.tool_calls, reply.replaced = text, tool_calls, reply.replaced + replaced
        reply = cap_reply(reply, self.config.max_reply_chars)
        reply.attempts = attempts
        reply.latency = reply.latency or (time.monotonic() - start)
        if reply.model is None:
            reply.model = self.model
        self.meter.record(reply)
        return reply


# ---------------------------------------------------------------------------
# Getting one action in each mode


def tool_call_action(call: ToolCall, actions: Any = None) -> ActionCall:
    """The action a native tool call stands for, ready for ``Environment.step``.

    The arguments are put in the action's parameter order (when ``actions``
    knows the name; arguments it does not name follow in their JSON order)
    and typed from their JSON values (:func:`pyql.action_parser.call_from_values`):
    a string as the action language reads it when written bare (``?x``,
    ``m.0abc``, ``>`` ...) or as a string literal when it needs quotes, a
    number as a number, ``true``/``false``/``null`` as those names; the
    environment then converts each by its parameter's kind, as for a written
    action. The call's ``text`` is the action as :func:`pyql.action_parser.render_action`
    writes it.

    Raises:
        TermError: the call cannot be written as one action: its name is not
            an identifier, or an argument is a JSON list or object.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> c = tool_call_action(ToolCall("add_fact", {"tail": "?x", "head": "m.1", "relation": "r.s"}), SparqlActions())
        >>> c.text, [a.kind for a in c.args]
        ('add_fact(m.1, r.s, ?x)', ['name', 'name', 'variable'])
    """
    from pyql.action_parser import call_from_values

    return call_from_values(call.name, *(_plain_value(v) for v in _ordered_values(call, actions)))


def _ordered_values(call: ToolCall, actions: Any) -> list[Any]:
    """The call's argument values in the action's parameter order, unknown names after (JSON order without a spec)."""
    values: list[Any] = list(call.arguments.values())
    if actions is None:
        return values
    try:
        spec = actions.spec(call.name)
    except PyQLError:
        return values
    names = [p.name for p in spec.params]
    ordered = [call.arguments[n] for n in names if n in call.arguments]
    return ordered + [v for k, v in call.arguments.items() if k not in names]


def _plain_value(value: Any) -> str | int | float:
    """A JSON value as a value of the action language (``true``, ``null`` and ``nan`` as those words)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        raise TermError(f"a JSON {type(value).__name__} cannot be written as one action argument")
    return json.dumps(value)


def reply_action(reply: LLMReply, actions: Any = None, step: int | None = None) -> ActionCall | str:
    """What an agent hands to ``Environment.step`` for a reply.

    One native tool call that can be written as an action becomes that
    :class:`~pyql.action_parser.ActionCall` (:func:`tool_call_action`); any
    other reply is the text to parse (:func:`reply_action_text`): the
    environment then reports no action, several actions or a syntax error
    as for a written reply.

    Example:
        >>> reply_action(LLMReply("", tool_calls=[ToolCall("execute", {})])).text
        'execute()'
        >>> reply_action(LLMReply("Action 1: execute()"), step=1)
        'Action 1: execute()'
    """
    if len(reply.tool_calls) == 1 and reply.tool_calls[0].error is None:
        try:
            return tool_call_action(reply.tool_calls[0], actions)
        except TermError:
            pass
    return reply_action_text(reply, actions, step)


def reply_action_text(reply: LLMReply, actions: Any = None, step: int | None = None) -> str:
    """The text of a reply's action, for the prompt and the trace (and to parse when it is not a tool call).

    For a reply with native tool calls, each call is written as an action
    line (:func:`tool_call_action`: arguments in the action's parameter order
    when ``actions`` is given, else in the JSON order), after the reply's own
    text as the thought; a plain reply's text is returned as is. A call that
    cannot be written as an action (a name that is not an identifier, a list
    or object argument) is written as sent, for the parser to reject; a call
    whose arguments are not JSON (:attr:`ToolCall.error`) is written with
    its arguments' raw text, as sent.

    Example:
        >>> r = LLMReply("", tool_calls=[ToolCall("add_fact", {"head": "m.1", "relation": "r.s", "tail": "?x"})])
        >>> reply_action_text(r, step=2)
        'Action 2: add_fact(m.1, r.s, ?x)'
    """
    if not reply.tool_calls:
        return reply.text
    lines = [reply.text.strip()] if reply.text.strip() else []
    label = f"Action {step}:" if step is not None else "Action:"
    for tc in reply.tool_calls:
        if tc.error is not None:  # arguments that are not JSON: kept as sent
            lines.append(f"{label} {tc.name}({tc.raw_arguments})")
            continue
        try:
            lines.append(f"{label} {tool_call_action(tc, actions).text}")
        except TermError:
            lines.append(f"{label} {tc.name}({', '.join(_as_sent(v) for v in _ordered_values(tc, actions))})")
    return "\n".join(lines)


def _as_sent(value: Any) -> str:
    """One argument of a tool call that is no action, as the model sent it (for the parser's error)."""
    from pyql.action_parser import render_argument

    try:
        return render_argument(_plain_value(value))
    except TermError:
        return json.dumps(value, ensure_ascii=False)


def complete_action(
    llm: LLM,
    prompt: Prompt,
    actions: Any,
    *,
    mode: str = "text",
    step: int | None = None,
    resume: str | None = None,
    stop: Sequence[str] | None = None,
    state: Any = None,
) -> tuple[str, LLMReply]:
    """Ask for the next action in one of :data:`ACTION_MODES`; returns ``(action text, reply)``.

    * ``text``: the paper's way: the reply is free text with
      ``Thought N:`` / ``Action N:`` lines.
    * ``tools``: the action set's OpenAI tool schemas are sent; a tool call is
      written as an ``Action N:`` line (:func:`reply_action_text`), and
      :func:`reply_action` gives the structured call to step.
    * ``grammar``: a GBNF grammar generated from the action set
      (:func:`agent.llm.gbnf.action_gbnf`) is sent in llama.cpp's ``grammar``
      field, so the model can only write a well-formed action with a known
      name and the right number of arguments.

    Args:
        llm: any :class:`LLM`.
        prompt: the prompt.
        actions: the :class:`pyql.environment.actions.ActionSet`.
        mode: one of :data:`ACTION_MODES`.
        step: the step number (fixes ``N`` in the grammar and in tool-call lines).
        resume: for ``grammar``: where the prompt ends (see :func:`agent.llm.gbnf.action_gbnf`).
        stop: stop sequences (default: the LLM's configured ones).
        state: an :class:`agent.llm.gbnf.StateVocabulary`: the grammar
            (:func:`agent.llm.gbnf.state_gbnf`) and the tool schemas
            (:func:`agent.llm.gbnf.state_tools`, JSON-schema ``enum`` s) allow only
            the entities, variables and relations the episode has.

    Raises:
        LLMConfigError: an unknown mode.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> llm = ScriptedLLM(["Thought 1: start.\\nAction 1: get_relation(m.0crbvqz)"])
        >>> text, reply = complete_action(llm, "Q", SparqlActions(), mode="grammar", step=1)
        >>> text.splitlines()[-1], llm.calls[0].kwargs["grammar"].startswith("root ::=")
        ('Action 1: get_relation(m.0crbvqz)', True)
    """
    reply = llm.complete(prompt, stop=stop, **_mode_request(mode, actions, step=step, resume=resume, state=state))
    return reply_action_text(reply, actions, step), reply


def _mode_request(mode: str, actions: Any, *, step: int | None, resume: str | None, state: Any) -> dict[str, Any]:
    """The request's ``tools`` or ``grammar`` for an action mode (nothing for ``text``)."""
    if mode == "text":
        return {}
    if mode == "tools":
        from pyql.environment.actions import openai_tools

        tools = openai_tools(actions)
        if state is not None:
            from agent.llm.gbnf import state_tools

            tools = state_tools(tools, actions, state)
        return {"tools": tools}
    if mode == "grammar":
        from agent.llm.gbnf import action_gbnf, state_gbnf

        grammar = (
            state_gbnf(actions, state, step=step, resume=resume) if state is not None
            else action_gbnf(actions, step=step, resume=resume)
        )
        return {"grammar": grammar}
    if mode == "choose":
        raise LLMConfigError("the choose mode picks a listed step by number: QueryAgent asks for it (agent.methods.choose), not complete_action")
    raise LLMConfigError(f"unknown action mode {mode!r}; use one of {', '.join(ACTION_MODES)}")
