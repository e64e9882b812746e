"""How to reach an LLM: :class:`LLMConfig`, its command-line flags and its environment.

Configuration comes from flags (:func:`add_llm_arguments`, read back by
:func:`config_from_args`) or from the environment: ``OPENAI_BASE_URL``,
``OPENAI_API_KEY``, ``PYQL_MODEL`` (and ``PYQL_LLM_MODE``); a flag that is
left out keeps the environment's value. A local server needs no key (the
dummy :data:`NO_KEY` is sent). With nothing configured, ``pyql llm serve``
starts a small local model (see :mod:`agent.llm.local`).

Example:
    >>> c = LLMConfig(base_url="http://127.0.0.1:8000/v1", model="m").resolved()
    >>> (c.local, c.api_key, c.describe())
    (True, 'sk-no-key', 'model=m mode=chat base_url=http://127.0.0.1:8000/v1 temperature=0.0 max_tokens=256')
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from agent.errors import LLMConfigError  # noqa: F401 (defined in agent/errors.py)
from pyql.cli import MAX_SECONDS, number, seconds, whole
from pyql.echo import redact_credentials

__all__ = [
    "ACTION_MODES",
    "DEFAULT_STOP",
    "NO_KEY",
    "LLMConfig",
    "LLMConfigError",
    "MAX_RETRIES",
    "MAX_TEMPERATURE",
    "add_llm_arguments",
    "config_from_args",
    "is_loopback",
]

#: Stop sequences for the paper's text format: the model must not write the observation.
DEFAULT_STOP: tuple[str, ...] = ("\nObservation",)

#: How an agent gets an action from the LLM (see :func:`agent.llm.decoding.complete_action`).
ACTION_MODES: tuple[str, ...] = ("text", "tools", "grammar", "choose")

#: The highest sampling temperature ``--temperature`` takes (OpenAI's range is 0 to 2).
MAX_TEMPERATURE = 2.0
#: The most retries ``--max-retries`` takes (the backoff is capped, so more would only wait longer).
MAX_RETRIES = 100

#: The dummy key sent to servers that need none (llama.cpp, vLLM ...).
NO_KEY = "sk-no-key"

#: How to configure LLM access, for the message of :meth:`LLMConfig.resolved`.
_HOW_TO_CONFIGURE = (
    "give --base-url URL and --model NAME (and --api-key KEY for a hosted API), or set "
    "OPENAI_BASE_URL / OPENAI_API_KEY / PYQL_MODEL, or start the local model with "
    "`pyql llm serve` (needs `pip install 'pyql[local]'`) and export the OPENAI_BASE_URL it prints"
)


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
            cut to this many characters before it is used (:attr:`agent.llm.replies.LLMReply.cut`
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
        if not (math.isfinite(self.timeout) and 0 < self.timeout <= MAX_SECONDS):  # nan/inf: no timer takes them
            raise LLMConfigError(f"timeout must be a positive number of seconds, at most {MAX_SECONDS:.0f}, not {self.timeout}")
        if not (math.isfinite(self.temperature) and self.temperature >= 0):  # nan cannot be sent as JSON
            raise LLMConfigError(f"temperature must be a finite number >= 0, not {self.temperature}")
        if self.context_tokens is not None and self.context_tokens <= self.max_tokens:
            raise LLMConfigError(
                f"the context ({self.context_tokens} tokens) must be larger than the reply's max_tokens ({self.max_tokens}): "
                "give a larger --context-tokens or a smaller --max-tokens"
            )
        if not all(math.isfinite(v) and v >= 0 for v in (self.backoff_base, self.backoff_max)):
            raise LLMConfigError("backoff_base and backoff_max must be finite numbers >= 0")
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
        """A one-line description without the key, nor a password in the base URL (for logs and run records).

        Example:
            >>> LLMConfig(base_url="http://bob:pw@127.0.0.1:8000/v1", model="m", api_key="sk-secret").describe()
            'model=m mode=chat base_url=http://bob:***@127.0.0.1:8000/v1 temperature=0.0 max_tokens=256'
        """
        where = redact_credentials(self.base_url) if self.base_url else "(OpenAI)"
        return (
            f"model={self.model or '(server default)'} mode={self.mode} base_url={where} "
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
    g.add_argument("--temperature", type=number(0, MAX_TEMPERATURE), default=None,
                   help=f"sampling temperature, 0 to {MAX_TEMPERATURE} (default 0)")
    g.add_argument("--max-tokens", type=whole(1), default=None, help="most tokens per reply (default 256)")
    g.add_argument("--llm-timeout", type=seconds(), default=None,
                   help="seconds a whole request may take, body included (default 120)")
    g.add_argument("--max-reply-chars", type=whole(1), default=None,
                   help="a reply's text is cut to this many characters (default 65536)")
    g.add_argument("--max-retries", type=whole(0, MAX_RETRIES), default=None,
                   help=f"retries on 429/5xx/time-outs (default 4, at most {MAX_RETRIES})")


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
