"""Recording and replaying LLM calls (``--record DIR``, ``--replay DIR``).

:class:`RecordedLLM` is an :class:`~agent.llm.replies.LLM` in front of the
one a command would use: every :meth:`~RecordedLLM.complete` call is keyed
by what decides the reply (the model asked for, the endpoint mode, the
sampling settings, the stop sequences, the prompt or messages, the tools
and the grammar, and a call's own sampling when it gives one: a sample's
temperature and seed, the log-probabilities asked for, so that the samples of a
``vote`` are distinct entries and a replay meets each one's reply) and kept in a :class:`~pyql.recording_store.RecordingStore`
with the reply, its token usage and the model that answered. In a replay
there is no LLM behind it at all: no server is contacted and no local model
is started; a call the recording does not hold raises
:class:`~agent.errors.LLMReplayMiss` (the question fails to run, kind
``replay_miss``), never a request.

The relation scorer of the choose mode (the bundled model run in process,
:mod:`agent.llm.likelihood`) is recorded the same way:
:attr:`RecordedLLM.relation_scorer` scores through a :class:`RecordedScorer`.

The key holds the model *asked for* (``--model``, None for the server's
default or the local model), not the URL, so a replay may name a server that
no longer exists; the model that answered is in each entry, and
:attr:`RecordedLLM.model` gives it back in a replay so that costs are those
of the recorded run. Replies are content-addressed: the same call twice is
one entry, and a replay answers it with the first reply.

Example:
    >>> import tempfile
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from pyql.recording_store import RecordingStore
    >>> directory = tempfile.mkdtemp()
    >>> live = ScriptedLLM(["Action 1: execute()"], model="m")
    >>> with RecordingStore.open(directory, "record") as store:
    ...     RecordedLLM(store, live, inner=live).complete("Q?").text
    'Action 1: execute()'
    >>> with RecordingStore.open(directory, "replay") as store:
    ...     llm = RecordedLLM(store, ScriptedLLM([], model="m"))
    ...     (llm.complete("Q?").text, llm.model, llm.meter.calls)
    ('Action 1: execute()', 'm', 1)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from agent.errors import LLMError, LLMRecordingUnavailable, LLMReplayMiss
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply, Prompt, Sampling, ToolCall, UsageMeter
from agent.llm.likelihood import RelationPMI
from pyql.echo import one_line
from pyql.errors import RecordingError, RecordingUnavailable
from pyql.recording_store import RecordingStore, canonical_json

__all__ = ["RecordedLLM", "RecordedScorer", "SETTINGS", "reply_to_json", "reply_from_json", "settings_differ"]

#: The name the bundled model's relation scorer is recorded under.
LOCAL_SCORER = "bundled-gemma-3-270m"

#: The settings of an LLM call's request, each with the flag that sets it (None: no flag does); a replay's
#: miss names those whose value no recorded call has.
SETTINGS: tuple[tuple[str, str | None], ...] = (
    ("model", "--model"), ("mode", "--llm-mode"), ("temperature", "--temperature"), ("max_tokens", "--max-tokens"),
    ("stop", None), ("extra_body", None),
)


def settings_differ(request: Mapping[str, Any], recorded: Mapping[str, Sequence[Any]]) -> str | None:
    """The settings in which a replayed call differs from every recorded one, and how to ask the recorded ones.

    Args:
        request: the call's request (the fields of its key).
        recorded: per setting of :data:`SETTINGS`, the values the recording's calls have
            (:meth:`~pyql.recording_store.RecordingStore.request_values`).

    Returns:
        One sentence, or None when every setting of the call is one a recorded call has.

    Example:
        >>> settings_differ({"temperature": 0.5, "model": "m"}, {"temperature": [0.0], "model": ["m"]})
        "the recording's LLM calls were made with temperature 0.0, this run asks 0.5: run with the recorded settings (--temperature 0.0)"
        >>> settings_differ({"temperature": 0.0}, {"temperature": [0.0]}) is None
        True
    """
    theirs: list[str] = []
    ours: list[str] = []
    flags: list[str] = []
    for name, flag in SETTINGS:
        values = list(recorded.get(name) or [])
        if not values or name not in request or canonical_json(request[name]) in {canonical_json(v) for v in values}:
            continue
        theirs.append(f"{name} {' or '.join(_shown(v) for v in values)}")
        ours.append(_shown(request[name]))
        if flag is not None and len(values) == 1:
            flags.append(f"{flag} {_shown(values[0])}" if values[0] is not None else f"without {flag}")
    if not theirs:
        return None
    fix = f"run with the recorded settings ({' '.join(flags)})" if flags else "run with the recorded command's settings"
    return f"the recording's LLM calls were made with {' and '.join(theirs)}, this run asks {' and '.join(ours)}: {fix}"


def _shown(value: Any) -> str:
    """A setting's value as a message shows it (a text as it is, the rest as JSON; None: the default)."""
    if value is None:
        return "(default)"
    return value if isinstance(value, str) else canonical_json(value)


def reply_to_json(reply: LLMReply) -> dict[str, Any]:
    """What a recording keeps of a reply (everything but the raw response object).

    Example:
        >>> reply_to_json(LLMReply("hi", usage_in=3, usage_out=1, model="m"))["usage_in"]
        3
    """
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id, "raw_arguments": c.raw_arguments, "error": c.error}
             for c in reply.tool_calls]
    kept = {"text": reply.text, "tool_calls": calls, "usage_in": reply.usage_in, "usage_out": reply.usage_out,
            "attempts": reply.attempts, "finish_reason": reply.finish_reason, "model": reply.model,
            "replaced": reply.replaced, "latency": round(reply.latency, 6)}
    if reply.top_logprobs is not None:  # asked for by a call that scores its choices
        kept["top_logprobs"] = reply.top_logprobs
    return kept


def reply_from_json(data: Mapping[str, Any]) -> LLMReply:
    """The reply :func:`reply_to_json` kept (its latency is the replay's, ~0; the recorded one is ``raw["latency"]``).

    Raises:
        pyql.errors.RecordingError: the entry is not a reply (a damaged or foreign file).

    Example:
        >>> r = reply_from_json(reply_to_json(LLMReply("", [ToolCall("execute", {})], usage_in=2, model="m")))
        >>> (r.tool_calls[0].name, r.usage_in, r.model)
        ('execute', 2, 'm')
    """
    try:
        calls = [ToolCall(str(c["name"]), c.get("arguments") or {}, id=str(c.get("id") or ""),
                          raw_arguments=c.get("raw_arguments"), error=c.get("error")) for c in data.get("tool_calls") or []]
        return LLMReply(text=str(data["text"]), tool_calls=calls, usage_in=int(data.get("usage_in") or 0),
                        usage_out=int(data.get("usage_out") or 0), attempts=int(data.get("attempts") or 1),
                        finish_reason=data.get("finish_reason"), model=data.get("model"),
                        replaced=int(data.get("replaced") or 0), raw=dict(data),
                        top_logprobs=[{str(k): float(v) for k, v in t.items()} for t in data["top_logprobs"]]
                        if data.get("top_logprobs") is not None else None)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordingError(f"a recorded LLM reply is not in pyql's form ({type(exc).__name__}: {exc})") from None


def _prompt_json(prompt: Prompt) -> Any:
    return prompt if isinstance(prompt, str) else [dict(m) for m in prompt]


class RecordedLLM:
    """An LLM whose calls are recorded (``inner`` given, store in ``record`` mode) or replayed (no ``inner``).

    Args:
        store: the recording.
        like: the LLM (or :class:`LLMConfig`) the command would use: its
            configuration and model name make the keys, so the recording and
            the replay of one command agree; it is never called.
        inner: the LLM that answers when recording (None: replay).
        meter: the usage meter of a replay (a recording uses ``inner``'s).
    """

    def __init__(self, store: RecordingStore, like: Any, *, inner: Any = None, meter: UsageMeter | None = None) -> None:
        if inner is None and store.mode != "replay":
            raise LLMError(f"recording LLM calls into {store.path} needs the LLM that answers them")
        self.store = store
        self.config: LLMConfig = like if isinstance(like, LLMConfig) else (getattr(like, "config", None) or LLMConfig())
        asked = self.config.model if isinstance(like, LLMConfig) else _static_model(like)
        self.requested: str | None = asked or self.config.model
        if inner is not None:
            self._llm = inner  # agent.evaluation.runner.model_name and the CLI look through it
            self.meter = getattr(inner, "meter", None) or meter or UsageMeter()
        else:
            self.meter = meter if meter is not None else UsageMeter()
            self.model = store.name("model", self.requested or "") or self.requested or "recorded"
        self._named = False
        self._lock = threading.Lock()
        self._recorded_settings: dict[str, list[Any]] | None = None
        self.relation_scorer = RelationPMI(RecordedScorer(store, None if inner is None else _local_scorer_inner()))

    def complete(self, prompt: Prompt, *, stop: Sequence[str] | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None, grammar: str | None = None,
                 sampling: Sampling | None = None) -> LLMReply:
        """Ask the inner LLM and keep its reply (record), or answer from the recording (replay).

        A call's own ``sampling`` (temperature, seed, log-probabilities), when
        given, is part of its key (a call without it has the key it always had).

        Raises:
            LLMReplayMiss: a replay, and the call is not in the recording.
            LLMRecordingUnavailable: the reply could not be recorded (it is not used).
            LLMError: the inner LLM's errors (a failed call is not recorded).
            pyql.errors.RecordingDamaged: the recording's entry for the call is damaged (the command stops).
        """
        cfg = self.config
        request = {
            "model": self.requested, "mode": cfg.mode, "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
            "extra_body": dict(cfg.extra_body), "stop": list(cfg.stop if stop is None else stop),
            "prompt": _prompt_json(prompt), "tools": [dict(t) for t in tools] if tools else None, "grammar": grammar,
        }
        if sampling is not None and sampling.fields():  # a call's own sampling: part of its key (none: the key as before)
            request["sampling"] = sampling.fields()
        if self.store.mode == "replay":
            return self._replayed(request, prompt)
        asked = {"sampling": sampling} if sampling is not None else {}
        reply = self._llm.complete(prompt, stop=stop, tools=tools, grammar=grammar, **asked)
        try:
            self.store.put("llm", str(reply.model or self.requested or ""), request, reply_to_json(reply), reply.latency)
            self._name_model(reply)
        except RecordingUnavailable as exc:  # not kept, so not used: the question fails to run
            raise LLMRecordingUnavailable(str(exc)) from None
        return reply

    def _replayed(self, request: dict[str, Any], prompt: Prompt) -> LLMReply:
        start = time.monotonic()
        found = self.store.get("llm", request, decode=reply_from_json)
        if found is None:
            text = prompt if isinstance(prompt, str) else " | ".join(str(m.get("content") or "") for m in prompt)
            call = (f"(model {self.requested or '(default)'}, "
                    f"prompt of {len(text)} characters ending {one_line(text[-160:], 160)!r})")
            differ = settings_differ(request, self._recorded())
            if differ is not None:  # the command's settings, not the call, are what the recording lacks
                raise LLMReplayMiss(f"{differ}; this call {call} is not in the recording {self.store.path}")
            raise LLMReplayMiss(f"the LLM call is not in the recording {self.store.path} {call}")
        reply = found
        reply.latency = time.monotonic() - start
        self.meter.record(reply)
        return reply

    def _recorded(self) -> dict[str, list[Any]]:
        """The values of each setting of :data:`SETTINGS` among the recording's calls (read once: a replay's store is read-only)."""
        with self._lock:
            if self._recorded_settings is None:
                self._recorded_settings = {name: self.store.request_values("llm", name) for name, _ in SETTINGS}
            return self._recorded_settings

    def _name_model(self, reply: LLMReply) -> None:
        """Keep, once, the model name the run reports for the model asked for (a replay gives it back, for costs)."""
        if self._named:
            return
        with self._lock:
            if not self._named:
                resolved = _static_model(self._llm) or reply.model or self.requested
                if resolved:
                    self.store.name("model", self.requested or "", str(resolved))
                self._named = True


class RecordedScorer:
    """A :class:`~agent.llm.likelihood.ContinuationScorer` whose log-probabilities are recorded or replayed.

    Args:
        store: the recording.
        inner: the scorer that computes (None: replay; nothing is loaded).
        name: the scorer's model, part of each key.

    Example:
        >>> import tempfile
        >>> from pyql.recording_store import RecordingStore
        >>> class Toy:
        ...     def logprob(self, prefix, continuation):
        ...         return -float(len(continuation))
        >>> directory = tempfile.mkdtemp()
        >>> with RecordingStore.open(directory, "record") as store:
        ...     RecordedScorer(store, Toy()).logprob("Q", " words")
        -6.0
        >>> with RecordingStore.open(directory, "replay") as store:
        ...     RecordedScorer(store, None).logprob("Q", " words")
        -6.0
    """

    def __init__(self, store: RecordingStore, inner: Any, name: str = LOCAL_SCORER) -> None:
        self.store = store
        self.inner = inner
        self.name = name

    def logprob(self, prefix: str, continuation: str) -> float:
        """The recorded (replay) or computed and recorded log-probability.

        Raises:
            LLMReplayMiss: a replay, and the score is not in the recording.
        """
        request = {"scorer": self.name, "prefix": prefix, "continuation": continuation}
        if self.store.mode == "replay" or self.inner is None:
            found = self.store.get("score", request, decode=_score)
            if found is None:
                raise LLMReplayMiss(f"the relation score of {continuation.strip()!r} after {one_line(prefix, 120)!r} "
                                    f"is not in the recording {self.store.path}")
            return found
        start = time.monotonic()
        value = float(self.inner.logprob(prefix, continuation))
        self.store.put("score", self.name, request, value, time.monotonic() - start)
        return value


def _score(data: Any) -> float:
    """A recorded relation score: a number (a log-probability).

    Raises:
        pyql.errors.RecordingError: anything else (the store names the entry as damaged).

    Example:
        >>> _score(-1.5), _score(2)
        (-1.5, 2.0)
    """
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise RecordingError(f"a recorded relation score is not a number: {one_line(repr(data), 60)}")
    return float(data)


def _local_scorer_inner() -> Any:
    """The process's bundled-model scorer (loaded on its first use, as without a recording)."""
    from agent.llm.likelihood import local_scorer

    return local_scorer().scorer


def _static_model(llm: Any) -> str | None:
    """The model name an LLM object reports without asking a server (as the run records do)."""
    if llm is None:
        return None
    inner = getattr(llm, "_llm", None)
    if inner is not None and inner is not llm:
        return _static_model(inner)
    for value in (getattr(type(llm), "model", None), getattr(llm, "_model", None)):
        if isinstance(value, str):
            return value
    value = llm.__dict__.get("model") if hasattr(llm, "__dict__") else None
    if isinstance(value, str):
        return value
    model = getattr(getattr(llm, "config", None), "model", None)
    return model if isinstance(model, str) else None
