"""Retry policy for LLM requests, and what a failed request means.

Transient failures (HTTP 429, 408, 5xx, time-outs, connection errors) are
retried by :func:`with_retries`, a bounded exponential backoff with jitter
(:func:`retry_delay`, a server's ``Retry-After`` honoured); other errors
(400, 401, 404 ...) are not (:func:`is_retryable`). An API error that is
not retried, or retries that run out, raise :class:`LLMError`. A 4xx
refusal of a prompt longer than the model's context is no service failure:
:func:`context_overflow` tells it apart as a :class:`ContextOverflow`.

Example:
    >>> from agent.llm.config import LLMConfig
    >>> failures = iter([LLMError("busy", status=503, retryable=True)] * 2)
    >>> def call():
    ...     raise next(failures)
    >>> with_retries(call, LLMConfig(max_retries=1), sleep=lambda s: None)
    Traceback (most recent call last):
    ...
    agent.errors.LLMError: LLM request failed after 2 attempts (1 retries): busy
"""

from __future__ import annotations

import random
import re
import time
from typing import Callable, Mapping, NoReturn, TypeVar

from agent.errors import ContextOverflow, LLMError  # noqa: F401 (defined in agent/errors.py)
from agent.llm.config import LLMConfig

__all__ = [
    "ContextOverflow",
    "LLMError",
    "context_overflow",
    "is_retryable",
    "retry_delay",
    "with_retries",
]

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
