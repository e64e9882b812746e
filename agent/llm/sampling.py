"""An LLM whose calls carry a search's sampling and count against its budget: :class:`SampledLLM`.

A search strategy hands the strategies and policies it runs an LLM that
is the run's own with two additions:

* every call carries the same :class:`~agent.llm.replies.Sampling` (a
  ``vote`` sample's temperature and seed, a ``beam``'s request for the top
  log-probabilities of a choice), merged with the call's own, so each
  sample's requests are distinct and reproducible (a recording keys them,
  :mod:`agent.llm.recording`) without the policies knowing of it;
* every call counts against a :class:`CallBudget` that several of them
  may share (the samples of one question): the call that would pass it is
  not made, :class:`agent.errors.BudgetSpent` is raised instead, and the
  strategy answers with what it has.

Everything else (the configuration, the meter, a recording's relation
scorer, the model's name) is the inner LLM's.

Example:
    >>> from agent.llm.replies import Sampling
    >>> from agent.llm.scripted import ScriptedLLM
    >>> inner = ScriptedLLM(["1", "2"], model="m")
    >>> budget = CallBudget(1)
    >>> llm = SampledLLM(inner, Sampling(temperature=0.7, seed=4), budget)
    >>> llm.complete("Q").text, inner.calls[0].kwargs["sampling"], llm.model, budget.used
    ('1', Sampling(temperature=0.7, seed=4, top_logprobs=None), 'm', 1)
    >>> llm.complete("Q")
    Traceback (most recent call last):
    ...
    agent.errors.BudgetSpent: the budget of 1 LLM calls is spent
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from agent.errors import BudgetSpent
from agent.llm.replies import LLMReply, Prompt, Sampling

__all__ = ["CallBudget", "SampledLLM", "merged"]


class CallBudget:
    """The most LLM calls a question may make, and how many it has made (shared by every :class:`SampledLLM` given it).

    Args:
        limit: the most calls (None: no limit).

    Example:
        >>> b = CallBudget(2); b.spend(); b.left, b.spent
        (1, False)
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    @property
    def left(self) -> int | None:
        """Calls still allowed (None: no limit)."""
        return None if self.limit is None else max(0, self.limit - self.used)

    @property
    def spent(self) -> bool:
        """Whether no call is left."""
        return self.limit is not None and self.used >= self.limit

    def spend(self) -> None:
        """Count one call.

        Raises:
            BudgetSpent: no call was left (nothing is counted).
        """
        with self._lock:
            if self.limit is not None and self.used >= self.limit:
                raise BudgetSpent(self.limit)
            self.used += 1

    def report(self) -> dict[str, Any]:
        """What ran out and how much was used (an :class:`~agent.methods.episode.AgentResult`'s ``extra["budget"]``).

        Example:
            >>> CallBudget(4).report()
            {'ran_out': 'llm_calls', 'limit': 4, 'used': 0}
        """
        return {"ran_out": "llm_calls", "limit": self.limit, "used": self.used}


def merged(base: Sampling | None, own: Sampling | None) -> Sampling | None:
    """``own``'s fields over ``base``'s (None when neither sets any).

    Example:
        >>> merged(Sampling(temperature=0.7, seed=1), Sampling(top_logprobs=5))
        Sampling(temperature=0.7, seed=1, top_logprobs=5)
        >>> merged(None, Sampling()) is None
        True
    """
    fields = {**(base.fields() if base is not None else {}), **(own.fields() if own is not None else {})}
    return Sampling(**fields) if fields else None


class SampledLLM:
    """The inner LLM, each call with ``sampling`` added and counted against ``budget`` (see the module docstring).

    Args:
        llm: the LLM the calls go to.
        sampling: what every call adds (None: nothing).
        budget: the calls allowed (None: any number).

    Attributes:
        replies: every reply it has given, in order (a strategy reads the log-probabilities of its last calls).
    """

    def __init__(self, llm: Any, sampling: Sampling | None = None, budget: CallBudget | None = None) -> None:
        self._llm = llm
        self.sampling = sampling
        self.budget = budget
        self.replies: list[LLMReply] = []

    def complete(
        self,
        prompt: Prompt,
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        grammar: str | None = None,
        sampling: Sampling | None = None,
    ) -> LLMReply:
        """Ask the inner LLM with the sampling merged in (:func:`merged`), once the budget allows it.

        Raises:
            BudgetSpent: the budget has no call left.
            LLMError: the inner LLM's.
        """
        if self.budget is not None:
            self.budget.spend()
        asked = merged(self.sampling, sampling)
        extra = {"sampling": asked} if asked is not None else {}
        reply = self._llm.complete(prompt, stop=stop, tools=tools, grammar=grammar, **extra)
        self.replies.append(reply)
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)
