"""The model's own judgement of a relation: pointwise mutual information with the question.

The bundled 270M model answers ``1`` to every numbered list (``docs/benchmarks.md``),
so in choose mode it adds nothing to the order of the list. It does know
which words go together: asked how likely the words of a relation are after
a question, and how likely they are after no question, the difference (the
pointwise mutual information) favours a relation the question is about even
when they share no word (*speak* → ``languages_spoken``, *timezone* →
``time_zones``, *assassinated* → ``place_of_death``), which is where the
word-overlap ranking of :func:`agent.methods.choose.rank_choices` fails.

:class:`RelationPMI` scores relations that way through any
:class:`ContinuationScorer`; :class:`LocalScorer` is the bundled model run in
process by llama-cpp-python (a 256-token context: the scoring prompts are
short). The choose mode uses it for the first relation of a query
(``AgentConfig.first_relation = "model"``), where the ranking has only the
question's words to go on.

Example:
    >>> relation_words("location.country.languages_spoken")
    'languages spoken'
    >>> class Toy:  # a scorer that likes "languages" after "speak"
    ...     def logprob(self, prefix, continuation):
    ...         return -1.0 if ("speak" in prefix and "languages" in continuation) else -5.0
    >>> pmi = RelationPMI(Toy())
    >>> scores = pmi.scores("what does jamaican people speak", ["location.country.currency_used", "location.country.languages_spoken"])
    >>> max(scores, key=scores.get), pmi.requests
    ('location.country.languages_spoken', 4)
"""

from __future__ import annotations

import atexit
import math
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from agent.errors import ScorerError  # noqa: F401 (defined in agent/errors.py)

__all__ = ["ContinuationScorer", "LocalScorer", "RelationPMI", "ScorerError", "local_scorer", "relation_words"]

#: The scoring prompt: the relation's words follow it.
QUESTION_PROMPT = "Question: {question}?\nTo answer it, look up the"


class ContinuationScorer(Protocol):
    """Anything that gives the log-probability of a text after a prefix."""

    def logprob(self, prefix: str, continuation: str) -> float:
        """The summed natural-log probability of ``continuation``'s tokens after ``prefix``."""
        ...


def relation_words(relation: str) -> str:
    """The words of a relation's last part (its property), as the scoring prompt reads them."""
    return " ".join(w for w in relation.rsplit(".", 1)[-1].replace("_", " ").split() if w)


class RelationPMI:
    """Scores relations by log P(words | question) − log P(words | no question).

    The no-question term depends only on the relation, so it is kept for the
    scorer's life: a relation seen before costs one request, not two.

    Attributes:
        requests: scoring requests made so far.
        seconds: time they took.
        tokens: tokens the model evaluated for them (when the scorer counts them, as
            :class:`LocalScorer` does; else 0): the load-independent measure of the work.
    """

    def __init__(self, scorer: ContinuationScorer) -> None:
        self.scorer = scorer
        self.requests = 0
        self.seconds = 0.0
        self.tokens = 0
        self._null: dict[str, float] = {}
        self._lock = threading.Lock()

    def _logprob(self, prefix: str, continuation: str) -> float:
        start, evaluated = time.perf_counter(), getattr(self.scorer, "tokens", 0)
        value = float(self.scorer.logprob(prefix, continuation))
        self.requests += 1
        self.seconds += time.perf_counter() - start
        self.tokens += getattr(self.scorer, "tokens", 0) - evaluated
        if math.isnan(value):
            raise ScorerError(f"the scorer returned NaN for {continuation!r}")
        return value

    def scores(
        self, question: str | None, relations: Sequence[str], *, words: Callable[[str], str] = relation_words,
    ) -> dict[str, float]:
        """The PMI of each relation with the question (higher: more about the question).

        ``words`` gives the text scored for each item: a relation's property
        words by default; a table's headers use
        :func:`pyql_sql.next_steps.column_words` (``No.`` → ``number``).

        Raises:
            ScorerError: the scorer failed.
        """
        q = " ".join((question or "").split()).rstrip("?").strip()
        prefix, null = QUESTION_PROMPT.format(question=q), QUESTION_PROMPT.format(question="")
        out: dict[str, float] = {}
        with self._lock:  # one model, one request at a time
            texts = {relation: " " + (words(relation) or relation) for relation in dict.fromkeys(relations)}
            for text in texts.values():  # the no-question terms first, then the question's: each run shares its prefix
                if text not in self._null:
                    self._null[text] = self._logprob(null, text)
            for relation, text in texts.items():
                out[relation] = self._logprob(prefix, text) - self._null[text]
        return out


class LocalScorer:
    """The bundled model (or another GGUF file) in process, for short scoring prompts.

    It loads lazily, with logits for every token and a small context
    (``n_ctx`` tokens; a longer text is an error), and reuses the evaluated
    prefix of the previous text, so a relation costs the evaluation of its
    own few tokens.

    A prompt of several tokens is evaluated with as many threads as one token
    (``n_threads``; llama.cpp's own default gives a batch every core), and the
    model loads with ``OMP_WAIT_POLICY=PASSIVE`` unless the environment sets it
    (as :class:`agent.llm.local.LocalServer` does for the server): on a busy
    2-core machine spinning OpenMP threads made a 26-token prefix take
    1.7–3.3 s instead of 0.45 s (``docs/benchmarks.md``, "Model time per
    table question"). The policy is read when llama.cpp is first imported; it
    is set only if that has not happened yet.

    Args:
        path: the GGUF file (default: the bundled Gemma 3 270M, :func:`agent.llm.local.model_path`).
        n_ctx: context size in tokens.
        n_threads: CPU threads, for one token and for a batch alike (default: half the cores, at least one).

    Attributes:
        tokens: tokens evaluated so far (a prefix shared with the previous text is not evaluated again).
        evaluations: model evaluations so far (one per :meth:`logprob`).
    """

    def __init__(self, path: str | Path | None = None, n_ctx: int = 256, n_threads: int | None = None) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads if n_threads is not None else max(1, (os.cpu_count() or 2) // 2)
        self.tokens = 0
        self.evaluations = 0
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            if "llama_cpp" not in sys.modules:  # OpenMP reads its wait policy once, when llama.cpp loads
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ScorerError("scoring relations with the local model needs llama-cpp-python: pip install -e '.[local]'") from exc
            from agent.llm.local import model_path, without_extra_bufts

            path = Path(self.path) if self.path is not None else model_path()
            if not path.is_file():
                raise ScorerError(f"no model file at {path}: give a GGUF file")
            try:
                with without_extra_bufts():  # AMX CPUs: as the server does (docs/llm.md, "AMX CPUs")
                    self._model = Llama(str(path), logits_all=True, n_ctx=self.n_ctx, n_threads=self.n_threads,
                                        n_threads_batch=self.n_threads, verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise ScorerError(f"llama.cpp could not load {path}: {exc}") from exc
            # free the model before the interpreter tears llama.cpp's bindings down (else its __del__ fails at
            # exit); a weak reference, so that a scorer nobody holds is still freed as soon as it is collected
            ref = weakref.ref(self)
            atexit.register(lambda: (scorer := ref()) is not None and scorer.close())
        return self._model

    def close(self) -> None:
        """Free the model (it loads again on the next use)."""
        model, self._model = self._model, None
        if model is not None:
            model.close()

    def logprob(self, prefix: str, continuation: str) -> float:
        """The summed log-probability of ``continuation``'s tokens after ``prefix``.

        The continuation's tokens are those from the first token where the
        tokenization of ``prefix + continuation`` departs from that of ``prefix``.

        A text longer than the context loses the beginning of its prefix (the
        continuation is scored after as much of the prefix as fits).

        Raises:
            ScorerError: the model does not load, or the continuation alone does not fit the context.
        """
        import numpy as np

        model = self._load()
        head = model.tokenize(prefix.encode("utf-8"), add_bos=True)
        whole = model.tokenize((prefix + continuation).encode("utf-8"), add_bos=True)
        first = 0
        while first < min(len(head), len(whole)) and head[first] == whole[first]:
            first += 1
        first = max(first, 1)
        overflow = len(whole) - (self.n_ctx - 1)
        if overflow > 0:
            if len(whole) - first + 2 > self.n_ctx - 1:
                raise ScorerError(f"a continuation of {len(whole) - first} tokens does not fit the scorer's {self.n_ctx}-token context")
            whole = whole[:1] + whole[1 + overflow :]  # keep the BOS and the end of the prefix
            first -= overflow
        reuse = min(model.longest_token_prefix(model._input_ids.tolist(), whole), len(whole) - 1, first)
        model.n_tokens = reuse
        model.eval(whole[reuse:])
        self.tokens += len(whole) - reuse
        self.evaluations += 1
        logits = np.asarray(model.scores[first - 1 : len(whole) - 1], dtype=np.float64)
        top = logits.max(axis=1, keepdims=True)
        log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        picked = logits[np.arange(len(logits)), whole[first:]]
        return float((picked - log_norm).sum())


@lru_cache(maxsize=1)
def local_scorer() -> RelationPMI:
    """The process's one :class:`RelationPMI` over the bundled model (loaded on first use)."""
    return RelationPMI(LocalScorer())
