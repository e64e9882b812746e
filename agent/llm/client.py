"""An LLM behind any OpenAI-compatible HTTP server: :class:`OpenAILLM`.

:class:`OpenAILLM` talks to an OpenAI-compatible HTTP server through the
``openai`` package (OpenAI itself, vLLM, llama.cpp's or llama-cpp-python's
server, ...), on the chat endpoint (``mode="chat"``) or on the plain
completions endpoint (``mode="completion"``: a base model follows the
one-shot Thought/Action/Observation format best as a completion). It can
pass OpenAI tool schemas (native tool calls) and a GBNF grammar (llama.cpp's
``grammar`` field, grammar-constrained decoding, see :mod:`agent.llm.gbnf`).

Every request goes through :func:`agent.llm.retries.with_retries`; the
``openai`` client's own retries are switched off so that every attempt is
ours and is counted (:attr:`agent.llm.replies.LLMReply.attempts`). Each
request is bounded in time and in body size, and a reply's text is cut to
``LLMConfig.max_reply_chars``.

The names this module held before the LLM side was split by job (the
configuration, the replies, the retries, the scripted LLM, the action
modes) still import from here, for users' code (:data:`MOVED_NAMES`); the
package itself imports them from their modules.

Example:
    >>> from agent.llm.config import LLMConfig
    >>> llm = OpenAILLM(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    >>> (llm.where, llm.model, llm.config.local, llm.client.max_retries)
    ('http://127.0.0.1:9/v1', 'm', True, 0)
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from agent.errors import LLMConfigError, LLMError
from agent.jsonlines import safe_text
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply, Prompt, Sampling, ToolCall, UsageMeter, cap_reply, messages_to_text, repair_surrogates
from agent.llm.retries import context_overflow, with_retries
from pyql.echo import redact_credentials

#: The public names this module held before the split, each with the module that now defines it.
#: They still import from here (:func:`__getattr__` loads the module on first use), for users' code only.
MOVED_NAMES: dict[str, str] = {
    **{name: "agent.errors" for name in ("ContextOverflow", "LLMConfigError", "LLMError")},
    **{name: "agent.llm.config" for name in (
        "ACTION_MODES", "DEFAULT_STOP", "NO_KEY", "LLMConfig", "add_llm_arguments", "config_from_args", "is_loopback",
    )},
    **{name: "agent.llm.replies" for name in (
        "LLM", "LLMReply", "Message", "Prompt", "ToolCall", "UsageMeter", "cap_reply", "messages_to_text",
    )},
    **{name: "agent.llm.retries" for name in ("context_overflow", "is_retryable", "retry_delay", "with_retries")},
    "ScriptedLLM": "agent.llm.scripted",
    **{name: "agent.llm.decoding" for name in (
        "complete_action", "reply_action", "reply_action_text", "tool_call_action",
    )},
}

#: The same public names as before the split (``from agent.llm.client import *`` still gives them).
__all__ = [
    "ACTION_MODES", "ContextOverflow", "DEFAULT_STOP", "LLM", "LLMConfig", "LLMConfigError", "LLMError", "LLMReply",
    "Message", "OpenAILLM", "Prompt", "ScriptedLLM", "ToolCall", "UsageMeter", "add_llm_arguments", "cap_reply",
    "complete_action", "config_from_args", "context_overflow", "is_loopback", "is_retryable", "messages_to_text",
    "reply_action", "reply_action_text", "retry_delay", "tool_call_action", "with_retries",
]

T = TypeVar("T")


def __getattr__(name: str) -> Any:
    """A name that moved to another module (:data:`MOVED_NAMES`), imported from there on first use (then kept).

    Example:
        >>> import agent.llm.client, agent.llm.scripted
        >>> agent.llm.client.ScriptedLLM is agent.llm.scripted.ScriptedLLM
        True
    """
    module = MOVED_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(MOVED_NAMES))


def _as_messages(prompt: Prompt) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


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
        """The server, as messages name it: its base URL (a password in it written ``***``; the request uses it,
        as HTTP basic authentication, through the ``openai`` package's ``httpx`` client), or OpenAI's API.

        Example:
            >>> OpenAILLM(LLMConfig(base_url="http://bob:pw@127.0.0.1:9/v1", model="m")).where
            'http://bob:***@127.0.0.1:9/v1'
        """
        return redact_credentials(self.config.base_url) if self.config.base_url else "OpenAI's API (https://api.openai.com/v1)"

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
                raise LLMConfigError(f"the server at {self.where} lists no model; give --model NAME or set PYQL_MODEL")
            self._model = str(_get(data[0], "id"))
        return self._model

    def complete(
        self,
        prompt: Prompt,
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        grammar: str | None = None,
        sampling: Sampling | None = None,
    ) -> LLMReply:
        """Ask the LLM once (with retries); see :class:`agent.llm.replies.LLM`.

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
        if sampling is not None:
            _sampled(request, sampling)
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
        model's context is :class:`~agent.errors.ContextOverflow` (:func:`context_overflow`):
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
        text, tool_calls, replaced = repair_surrogates(str(text or ""), tool_calls)
        reply = LLMReply(
            text=text,
            tool_calls=tool_calls,
            replaced=replaced,
            usage_in=int(_get(usage, "prompt_tokens", 0) or 0) if usage is not None else 0,
            usage_out=int(_get(usage, "completion_tokens", 0) or 0) if usage is not None else 0,
            finish_reason=_get(choice, "finish_reason", None),
            model=_get(response, "model", None) or self._model,
            raw=response,
            top_logprobs=_top_logprobs(_get(choice, "logprobs", None), chat=chat),
        )
        return cap_reply(reply, self.config.max_reply_chars)

    def _malformed(self, what: str, response: Any) -> LLMError:
        """A retryable :class:`LLMError` for an HTTP 200 completion without a usable reply."""
        return LLMError(
            f"the LLM server at {self.where} answered with {what} (a malformed reply): {_excerpt(_json_text(response))}",
            status=200,
            retryable=True,
        )


def _sampled(request: dict[str, Any], sampling: Sampling) -> None:
    """Add a call's own sampling settings to its request (:class:`agent.llm.replies.Sampling`; a field not set is not sent).

    The temperature and the seed are fields of both endpoints; the top
    log-probabilities are ``logprobs: k`` on the completions endpoint and
    ``logprobs: true, top_logprobs: k`` on the chat endpoint.

    Example:
        >>> request = {"temperature": 0.0, "prompt": "Q"}
        >>> _sampled(request, Sampling(temperature=0.7, seed=2, top_logprobs=5)); request
        {'temperature': 0.7, 'prompt': 'Q', 'seed': 2, 'logprobs': 5}
    """
    if sampling.temperature is not None:
        request["temperature"] = sampling.temperature
    if sampling.seed is not None:
        request["seed"] = sampling.seed
    if sampling.top_logprobs is not None:
        if "messages" in request:
            request["logprobs"], request["top_logprobs"] = True, sampling.top_logprobs
        else:
            request["logprobs"] = sampling.top_logprobs


def _top_logprobs(logprobs: Any, *, chat: bool) -> list[dict[str, float]] | None:
    """Each generated token's alternatives and their log-probabilities, as the server gave them (None: not given).

    The completions endpoint gives ``{"top_logprobs": [{token: logprob}, ...]}``;
    the chat endpoint ``{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}``.

    Example:
        >>> _top_logprobs({"top_logprobs": [{" 2": -0.1, " 1": -2.4}]}, chat=False)
        [{' 2': -0.1, ' 1': -2.4}]
        >>> _top_logprobs({"content": [{"token": "2", "logprob": -0.1, "top_logprobs": [{"token": "1", "logprob": -2.4}]}]}, chat=True)
        [{'1': -2.4, '2': -0.1}]
    """
    if logprobs is None:
        return None
    out: list[dict[str, float]] = []
    try:
        if chat:
            for item in _get(logprobs, "content", None) or []:
                alternatives = {str(_get(t, "token")): float(_get(t, "logprob")) for t in _get(item, "top_logprobs", None) or []}
                alternatives.setdefault(str(_get(item, "token")), float(_get(item, "logprob")))
                out.append(alternatives)
        else:
            for item in _get(logprobs, "top_logprobs", None) or []:
                out.append({str(k): float(v) for k, v in dict(item or {}).items()})
    except (TypeError, ValueError):  # a server's own shape: no log-probabilities rather than a failed call
        return None
    return out or None


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
