"""Infrastructure faults: when a question *failed to run* instead of being answered wrongly.

A question is answered (status ``finished``) when the agent's episode ran
to its end, whatever the model did; its answers are scored. It *failed to
run* (status ``failed_to_run``) when a service it needs failed, not the
model; it is not scored, ``pyql eval --resume`` runs it again, and a run
stops after ``--max-infra-failures`` of them in a row. The faults
(:func:`infra_failure`):

* the LLM could not be asked, or did not answer usefully, after its retries
  (:class:`~agent.errors.LLMError`, kind ``llm_error``);
* the KB could not be reached or is failing whatever the query
  (:class:`~pyql.errors.EngineUnavailable`, kind ``engine_unavailable``);
* under ``--replay``, a KB query or LLM call the recording does not hold
  (:class:`~pyql.errors.ReplayMiss`, :class:`~agent.errors.LLMReplayMiss`,
  kind ``replay_miss``);
* the recording (``--record``) or the KB cache (``--kb-cache``) could not
  keep or give an answer just now: a full disk, an I/O error, a lock held
  too long (:class:`~pyql.errors.RecordingUnavailable`,
  :class:`~agent.errors.LLMRecordingUnavailable`, kind
  ``recording_unavailable``); the answer is not used. A *damaged*
  recording or cache (:class:`~pyql.errors.RecordingDamaged`) is no failure
  of a question: it is the user's file, and the command stops;
* the KB timed out (:class:`~pyql.errors.EngineTimeout`, kind
  ``engine_timeout``) *and* did not answer a trivial probe query (``ASK {}``)
  either: the service is not answering. When the probe is answered (or
  refused with an error, which is an answer too), the time-out was the query's own cost, a mistake of the model that ERASER
  advises on (``engine_error`` rule), and the question goes on.

A table (SQLite, in-process) is never unreachable: its time-outs and errors
are always the query's, never a failure to run.

Example:
    >>> from pyql.errors import EngineUnavailable, EngineError
    >>> str(infra_failure(EngineUnavailable("cannot reach the endpoint http://127.0.0.1:9/sparql")))
    'engine_unavailable: cannot reach the endpoint http://127.0.0.1:9/sparql'
    >>> infra_failure(EngineError("syntax error")) is None
    True
    >>> failed_to_run({"status": "failed_to_run"}), failed_to_run({"error": "llm_error: down"}), failed_to_run({"error": None})
    (True, True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent.errors import LLMError
from pyql.echo import one_line
from pyql.errors import EngineError, EngineTimeout, EngineUnavailable

__all__ = [
    "FAILED_TO_RUN",
    "FINISHED",
    "INFRA_KINDS",
    "PROBE_QUERY",
    "InfraFailure",
    "error_kind",
    "failed_to_run",
    "infra_failure",
    "status_of",
    "stop_advice",
]

#: The status of a question whose episode ran to its end (scored).
FINISHED = "finished"
#: The status of a question a service failure kept from running (not scored, run again on resume).
FAILED_TO_RUN = "failed_to_run"
#: The error kinds of a question that failed to run.
INFRA_KINDS: frozenset[str] = frozenset(
    {"llm_error", "engine_unavailable", "engine_timeout", "replay_miss", "recording_unavailable"}
)
#: The kinds told apart by their own name before their class (a replay's miss, a store's failure).
_OWN_KINDS = ("replay_miss", "recording_unavailable")
#: The query that tells a slow query from a KB that does not answer.
PROBE_QUERY = "ASK {}"


@dataclass(frozen=True)
class InfraFailure:
    """Why a question could not run: the error kind and the one-line message.

    Example:
        >>> str(InfraFailure("llm_error", "LLM request failed after 5 attempts"))
        'llm_error: LLM request failed after 5 attempts'
    """

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def to_json(self) -> dict[str, str]:
        """``{"kind": ..., "message": ...}`` (the ``error`` object of ``pyql ask --json``)."""
        return {"kind": self.kind, "message": self.message}


def infra_failure(exc: BaseException | None, kb: Any = None) -> InfraFailure | None:
    """The infrastructure failure an error means, or None when it is the query's or the model's.

    Args:
        exc: the error a step or an agent ended with (None: no error).
        kb: the KB the error came from; a time-out is probed on it with
            :data:`PROBE_QUERY`. Without a KB (a table) a time-out is the query's.

    Example:
        >>> from agent.errors import LLMError
        >>> infra_failure(LLMError("LLM request failed after 5 attempts (4 retries): 429")).kind
        'llm_error'
        >>> from pyql.kb import KB
        >>> infra_failure(EngineTimeout("slow"), KB.open("demo")) is None  # the demo KB answers the probe
        True
    """
    if exc is None:
        return None
    kind = getattr(exc, "kind", None)
    if kind in _OWN_KINDS:  # --replay: a call the recording does not hold; a store that could not keep an answer
        return InfraFailure(str(kind), _said(exc))
    if isinstance(exc, LLMError):
        return InfraFailure("llm_error", _said(exc))
    if isinstance(exc, EngineUnavailable):
        return InfraFailure("engine_unavailable", _said(exc))
    if isinstance(exc, EngineTimeout) and kb is not None:
        try:
            kb.ask(PROBE_QUERY)
        except (EngineUnavailable, EngineTimeout) as probe:
            return InfraFailure(
                "engine_timeout",
                f"{_said(exc)}; a trivial query ({PROBE_QUERY}) got no answer either ({_said(probe)}): "
                "the KB is not answering",
            )
        except EngineError:  # the probe was refused (an engine without ASK): the KB answers, so the query was slow
            return None
    return None


def error_kind(error: str | None) -> str | None:
    """The kind of an ``error`` string of a run record (``"kind: message"``).

    Example:
        >>> error_kind("engine_unavailable: cannot reach ..."), error_kind("llm_error"), error_kind(None)
        ('engine_unavailable', 'llm_error', None)
    """
    if not error:
        return None
    return str(error).split(":", 1)[0].strip() or None


def status_of(error: str | None) -> str:
    """A question's status from its record's ``error``: failed to run when the error is a service's (:data:`INFRA_KINDS`).

    Example:
        >>> status_of("llm_error: HTTP 503"), status_of("context_overflow: ..."), status_of(None)
        ('failed_to_run', 'finished', 'finished')
    """
    return FAILED_TO_RUN if error_kind(error) in INFRA_KINDS else FINISHED


def stop_advice(kind: str | None) -> str:
    """What to do after a run stopped on questions that failed to run, by the last one's error kind.

    A failing service is fixed and the run resumed; a replay's miss is no
    service's fault (the recording does not hold what the command asks:
    other settings, other questions), so ``--resume`` alone would miss again.

    Example:
        >>> stop_advice("llm_error")
        'fix the service and run the same command with --resume'
        >>> stop_advice("replay_miss").startswith("a replay answers only what its recording holds")
        True
    """
    if kind == "replay_miss":
        return ("a replay answers only what its recording holds (the error says what differs): "
                "run the command as it was recorded, or record again (--record instead of --replay)")
    return "fix the service and run the same command with --resume"


def failed_to_run(record: Mapping[str, Any]) -> bool:
    """Whether a run record is of a question that failed to run (see the module docstring).

    Records written before statuses existed count as failed to run when
    their error is an LLM or an unavailable-KB error.
    """
    status = record.get("status")
    if status is not None:
        return status == FAILED_TO_RUN
    return error_kind(record.get("error")) in ("llm_error", "engine_unavailable")


def _said(exc: BaseException) -> str:
    """What an exception says, on one line and whole (its class name when it says nothing)."""
    text = str(exc)
    return one_line(text, limit=len(text)) or type(exc).__name__
