"""What the search strategies share: a branch of the search, why a step's branch is dropped, the question's result.

A search (:mod:`agent.methods.strategies`: ``beam``, ``vote``,
``generate-execute``) explores several branches of one question, each on
its own fork of the environment (:meth:`pyql.environment.kernel.Environment.fork`)
and its own branch of the episode (:meth:`agent.methods.episode.Episode.branch`):
one tree of traces, one count of LLM calls and tokens. What they share:

* :class:`Branch`: a fork, its episode, its score;
* :func:`failure`: why a step that ran drops its branch (an empty result,
  an engine error, a step refused, one that changes nothing), in words a
  user reads in the trace's ``pruned``;
* :func:`prune`: the reason written on the branch's last step;
* :func:`search_result`: the question's :class:`~agent.methods.episode.AgentResult`
  from the branch that answers, with the totals of every branch (LLM
  calls and tokens of the shared episode, KB queries of the shared backend),
  ``stopped: budget`` and ``extra["budget"]`` when the budget ran out.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    >>> failure(env.fork().step("add_fact(m.0crbvqz, meteorology.tropical_cyclone_season.tropical_cyclones, ?s)"))
    'empty result'
    >>> failure(env.fork().step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")) is None
    True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agent.faults import status_of
from agent.methods.episode import AgentResult, Episode, StepTrace, trace_tallies
from pyql.echo import one_line
from pyql.environment.kernel import NO_CHANGE
from pyql.errors import EngineError

__all__ = ["Branch", "failure", "prune", "state_key", "search_result", "ZERO_COST"]

#: The trace fields of a step whose LLM call is traced with another step (a candidate listed by the same call).
ZERO_COST: dict[str, Any] = {"prompt_sha256": "", "prompt": None, "llm_seconds": 0.0, "tokens_in": 0, "tokens_out": 0,
                             "scoring_requests": 0}


@dataclass
class Branch:
    """One branch of a search: its fork of the environment, its branch of the episode, its score.

    Attributes:
        env: the environment as this branch left it.
        episode: its episode (shares the traces and the usage with every other branch).
        score: the sum of its steps' scores (higher first; 0 when every step was the best of its list).
        steps: the steps it took.
        finished: whether its query was executed.
        scores: each step's score, in order (the trace's ``extra`` shows them).
    """

    env: Any
    episode: Episode
    score: float = 0.0
    steps: int = 0
    finished: bool = False
    scores: list[float] = field(default_factory=list)

    @property
    def tip(self) -> int | None:
        """The position (1-based, in the episode's traces) of its last step; None before its first."""
        return self.episode.tip

    def child(self, env: Any, episode: Episode, score: float) -> Branch:
        """The branch one step further (on ``env``, a fork, with ``episode``, a branch), that step scored ``score``."""
        return Branch(env, episode, self.score + score, self.steps + 1, bool(env.done), [*self.scores, score])


def failure(record: Any) -> str | None:
    """Why a step that ran drops its branch, in words (None: it ran and kept rows).

    An empty result (refused by ERASER or undone, or kept by an environment
    that keeps them), an engine error (its message), a step that changes
    nothing (the same look again), or any other refusal (its kind and the start of its observation).

    Example:
        >>> from pyql.environment import StepRecord
        >>> failure(StepRecord(1, "f()", error="wrong_arity", observation="f takes 2 parameters"))
        'wrong_arity: f takes 2 parameters'
        >>> failure(StepRecord(1, "f()", ok=True, empty=True))
        'empty result'
    """
    if record.ok and not record.empty:
        return "it changes nothing (the same step again)" if record.repeat_kind == NO_CHANGE else None
    if record.empty or record.error == "empty_result":
        return "empty result"
    if isinstance(record.exception, EngineError):
        return f"engine error: {one_line(str(record.exception), limit=160)}"
    return f"{record.error}: {one_line(str(record.observation), limit=160)}"


def prune(episode: Episode, position: int | None, reason: str) -> None:
    """Write why the branch ending at ``position`` (1-based, in the episode's traces) was dropped; nothing without a step.

    A step keeps the first reason it was given (a branch dropped by its
    execution is not dropped again by the beam).
    """
    if position is not None and episode.traces[position - 1].pruned is None:
        episode.traces[position - 1].pruned = reason


def state_key(env: Any) -> tuple[Any, ...]:
    """What makes two branches the same: the steps they kept, in order, and whether the query was executed.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> a, b = env.fork(), env.fork()
        >>> _ = [e.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)") for e in (a, b)]
        >>> state_key(a) == state_key(b) != state_key(env)
        True
    """
    kept = tuple(r.call.text if r.call is not None else r.text for r in env.history if r.ok)
    return kept, bool(env.done)


def search_result(
    question: str,
    root: Any,
    answer: Branch | None,
    episode: Episode,
    started: float,
    *,
    error: str | None = None,
    stopped: str | None = None,
    extra: dict[str, Any] | None = None,
) -> AgentResult:
    """The question's result: the answering branch's answers and query, every branch's traces and totals.

    Args:
        question: the question.
        root: the environment the search started from (its backend counts every fork's queries).
        answer: the branch that answers (None: no answer).
        episode: any branch of the episode (they share the traces and the usage).
        started: ``time.perf_counter()`` when the question started.
        error: what ended the search (``kind: message``): the status is ``failed_to_run`` for a service failure.
        stopped: why the search stopped early (``budget``), or None.
        extra: the strategy's own record (``extra["budget"]`` when the budget ran out).
    """
    traces: list[StepTrace] = episode.traces
    env = answer.env if answer is not None else root
    final = env.final_result()
    done = bool(answer is not None and env.done)
    chosen = answer.episode if answer is not None else episode
    error = error if error is not None else (chosen.error if answer is not None else None)
    return AgentResult(
        question=question,
        answers=final.answers if done and error is None else [],
        steps=traces,
        done=done,
        forced=chosen.forced if answer is not None else False,
        query=final.query if answer is not None else "",
        chain=chosen.side.chain(env) if answer is not None and chosen.side is not None else [],
        llm_calls=episode.calls,
        tokens_in=episode.tokens_in,
        tokens_out=episode.tokens_out,
        kb_queries=int(root.counters["kb_queries"]),
        seconds=time.perf_counter() - started,
        error=error,
        status=status_of(error),
        **trace_tallies(traces),
        stopped=stopped or chosen.stopped,
        stopped_by=chosen.stopped_by if stopped is None else None,
        extra=dict(extra or {}),
    )
