"""The errors of the agent package, all in the :class:`~pyql.errors.PyQLError` tree.

Each carries a ``kind`` (the stable word a run file and ``--json`` output
use) and a message that says what to do. Modules re-export the classes they
raise, so ``from agent.llm.retries import LLMError`` keeps working.

Example:
    >>> issubclass(ScorerError, PyQLError), ScorerError("x").kind
    (True, 'scorer_error')
"""

from __future__ import annotations

from pyql.errors import ParseError, PyQLError

__all__ = [
    "AgentConfigError", "BudgetSpent", "ContextOverflow", "DatasetError", "EvalError", "InstantiationError", "LLMConfigError",
    "LLMError", "LLMRecordingUnavailable", "LLMReplayMiss",
    "MetricsError", "MissingDependencyError", "PathSyntaxError", "RankingError", "ScorerError", "SmokeError",
    "TablePathError",
]


class LLMError(PyQLError):
    """The LLM could not be asked, or did not answer usefully.

    Attributes:
        status: the HTTP status code, when there was one.
        attempts: how many requests were made (including retries).
        retryable: whether :func:`with_retries` retries this error (used by
            :class:`ScriptedLLM` scripts to simulate transient failures).
        answered: whether the server sent an HTTP answer at all (False: it
            could not be reached or did not answer in time; None: not known).

    Example:
        >>> e = LLMError("rate limited", status=429, retryable=True)
        >>> (e.kind, e.status, e.retryable)
        ('llm_error', 429, True)
    """

    kind = "llm_error"

    def __init__(
        self, message: str, *, status: int | None = None, attempts: int = 0, retryable: bool = False,
        answered: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts
        self.retryable = retryable
        self.answered = answered


class LLMReplayMiss(LLMError):
    """An LLM call (or a relation score) asked during ``--replay`` that the recording does not hold.

    The question fails to run (kind ``replay_miss``); nothing is sent to a server.

    Example:
        >>> e = LLMReplayMiss("not recorded: prompt 'Q...'")
        >>> (e.kind, isinstance(e, LLMError))
        ('replay_miss', True)
    """

    kind = "replay_miss"


class LLMRecordingUnavailable(LLMError):
    """An LLM call was answered, but ``--record`` could not keep the reply (a full disk, an I/O error, a lock).

    The reply is not used: the question fails to run (kind
    ``recording_unavailable``, as :class:`pyql.errors.RecordingUnavailable`
    on the KB side), so a replay of the recording never misses a call the run made.

    Example:
        >>> e = LLMRecordingUnavailable("--record rec.sqlite: cannot write it: database or disk is full")
        >>> (e.kind, isinstance(e, LLMError))
        ('recording_unavailable', True)
    """

    kind = "recording_unavailable"


class ContextOverflow(PyQLError):
    """A prompt does not fit the model's context, even shortened: the agent's own failure, not the LLM's.

    Raised by :mod:`agent.methods.context_budget` before the prompt is sent,
    and by the LLM client when a server answers with a context-length error
    (OpenAI's ``context_length_exceeded``, llama.cpp's and vLLM's "maximum
    context length"). The question it happens in is *finished* with this error
    (scored as failed), never *failed to run*: the same prompt would overflow
    again, so ``--resume`` does not run it again. Deliberately not an
    :class:`LLMError` (those are service failures).

    Attributes:
        needed: the prompt's tokens (the reply's not included), when known (a server's error may say them).
        limit: the model's context in tokens, when known (a server's error says it).
        source: ``"agent"`` (the budget refused to send it) or ``"server"``.

    Example:
        >>> e = ContextOverflow("too long", needed=4453, limit=4096, source="server")
        >>> (e.kind, e.needed, e.limit, e.source, isinstance(e, LLMError))
        ('context_overflow', 4453, 4096, 'server', False)
    """

    kind = "context_overflow"

    def __init__(self, message: str, *, needed: int | None = None, limit: int | None = None, source: str = "agent") -> None:
        super().__init__(message)
        self.needed = needed
        self.limit = limit
        self.source = source


class LLMConfigError(LLMError, ValueError):
    """LLM access is not configured, or configured wrongly; the message says how to fix it.

    Example:
        >>> LLMConfigError("no LLM").kind
        'llm_config'
    """

    kind = "llm_config"


class ScorerError(PyQLError, RuntimeError):
    """The model that scores relations cannot be loaded or run (the message says what to do).

    Example:
        >>> ScorerError("no model").kind
        'scorer_error'
    """

    kind = "scorer_error"


class DatasetError(PyQLError, ValueError):
    """A data set file cannot be read or is in no known format; the message names the file and the fix.

    Example:
        >>> DatasetError("x").kind
        'bad_dataset'
    """

    kind = "bad_dataset"


class SmokeError(DatasetError):
    """A smoke run cannot start (unknown benchmark, fixtures not found).

    Example:
        >>> SmokeError("x").kind
        'bad_dataset'
    """


class MetricsError(PyQLError, ValueError):
    """Bad input to a metric (an unreadable price table, a malformed run record).

    Example:
        >>> MetricsError("x").kind
        'bad_metrics'
    """

    kind = "bad_metrics"


class EvalError(PyQLError, ValueError):
    """An evaluation cannot start or go on; the message says what to do.

    Example:
        >>> EvalError("x").kind
        'eval_error'
    """

    kind = "eval_error"


class RankingError(PyQLError, ValueError):
    """A ranker or :func:`select_relations` was asked for something it cannot do.

    Example:
        >>> RankingError("bad").kind
        'ranking_error'
    """

    kind = "ranking_error"


class MissingDependencyError(RankingError, ImportError):
    """An optional dependency of a ranker is not installed; the message has the pip command.

    Example:
        >>> e = MissingDependencyError("no numpy")
        >>> (e.kind, isinstance(e, ImportError))
        ('missing_dependency', True)
    """

    kind = "missing_dependency"


class AgentConfigError(PyQLError, ValueError):
    """A bad agent setting (unknown mode, missing example file ...)."""

    kind = "agent_config"


class InstantiationError(PyQLError):
    """The KB cannot be used for instantiation (e.g. no relation vocabulary)."""

    kind = "instantiation"


class PathSyntaxError(ParseError):
    """A reasoning path that does not parse."""

    kind = "path_syntax"


class TablePathError(ParseError):
    """A table reasoning path (Chosen Headers / Constrains) that does not parse."""

    kind = "table_path_syntax"


class BudgetSpent(Exception):
    """A search strategy's LLM budget (``--max-llm-calls``) is spent: the call that would pass it is not made.

    Not a :class:`PyQLError` on purpose: it is no failure, but the signal a
    strategy catches to stop where it is and answer with what it has
    (``stopped: budget``); no handler of pyql's errors on the way (a
    policy's, a strategy's it runs) may take it for an LLM error.

    Example:
        >>> issubclass(BudgetSpent, PyQLError), str(BudgetSpent(3))
        (False, 'the budget of 3 LLM calls is spent')
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"the budget of {limit} LLM calls is spent")
        self.limit = limit
