"""The context budget: no prompt the agents send is longer than the model's context.

Every method builds its prompts through one :class:`ContextBudget`
(:func:`budget_for` gives the one of an LLM):

* **The context.** ``--context-tokens N`` (:attr:`agent.llm.config.LLMConfig.context_tokens`;
  the local model's server sets it to its ``n_ctx``), else unknown: then
  only the agent's own cap (``AgentConfig.token_budget``) applies, until the
  server reports its size the way every OpenAI-compatible server does: by
  refusing a longer prompt with a context-length error that gives it
  (OpenAI, llama-cpp-python, vLLM, llama.cpp's ``n_ctx``). The budget learns
  it (:meth:`ContextBudget.learn`) and the call is made again, fitted. No
  other request is made to find the size.
* **The reserve.** The reply's ``max_tokens`` and :data:`SLACK_TOKENS` are
  kept free.
* **Counting.** With the bundled local model its own tokenizer (in process,
  the vocabulary only: :class:`LocalTokenizer`); otherwise an estimate of
  :data:`CHARS_PER_TOKEN` characters a token (conservative: English text is
  about 4, tables of numbers about 3), corrected by the prompt tokens a
  server reports (:meth:`EstimateCounter.calibrate`: the highest tokens per
  character seen, with a margin). A chat message costs
  :data:`MESSAGE_TOKENS` more for its role and separators.
* **Fitting** (:meth:`ContextBudget.fit`): a prompt is a list of
  :class:`Block` s, each with its whole text and shorter versions. Older
  observations are shortened first (the first line kept, ``[shortened: N
  chars]`` saying how much was left out), then older steps are summarised
  (the action and a one-line outcome), oldest first; blocks without shorter
  versions (the task and action docs, the one-shot example, the question, the
  current state: the last step and what is asked now) are never changed. A
  list of items (Readi's triplets and table rows) is cut from its end
  (:meth:`ContextBudget.fit_items`).
* **Overflow.** A prompt that still does not fit raises
  :class:`~agent.errors.ContextOverflow` (kind ``context_overflow``), as does
  a server's context-length refusal: the question is *finished* with that
  error, scored as failed, and not run again by ``--resume``.

Example:
    >>> budget = ContextBudget(context_tokens=80, reserve=10)   # 38 tokens for the prompt (32 more are slack)
    >>> old = Block(("Step 1: " + "x" * 150 + "\\n",), ("Step 1: [shortened: 150 chars]\\n",))
    >>> prompt = budget.fit([Block.kept("Question: q?\\n"), old, Block.kept("Step 2: ok\\n")])
    >>> print(prompt)
    Question: q?
    Step 1: [shortened: 150 chars]
    Step 2: ok
    <BLANKLINE>
    >>> budget.fit([Block.kept("y" * 200)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agent.errors.ContextOverflow: the prompt needs 68 tokens but the model's context has room for 38 ...
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, TypeVar

from agent.errors import ContextOverflow
from pyql.echo import one_line
from pyql.lines import split_lines

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_TOKENS",
    "SLACK_TOKENS",
    "Block",
    "ContextBudget",
    "ContextOverflow",
    "EstimateCounter",
    "LocalTokenizer",
    "TokenCounter",
    "ask_within",
    "budget_for",
    "shortened",
    "summarised",
]

#: Characters per token of the estimate (when the model's tokenizer cannot be asked): conservative.
CHARS_PER_TOKEN = 3.0
#: Tokens a chat message costs beyond its content (role and separators of the chat template).
MESSAGE_TOKENS = 8
#: Tokens kept free beyond the reply's ``max_tokens`` (the BOS token, a choice's one-line retry note).
SLACK_TOKENS = 32
#: Characters of an older observation's first line kept when it is shortened.
KEEP_FIRST_LINE = 160
#: Characters of a summarised step's outcome.
KEEP_OUTCOME = 80

T = TypeVar("T")


class TokenCounter(Protocol):
    """Anything that counts the tokens of a text."""

    def count(self, text: str) -> int:
        """The tokens of ``text`` (its BOS token included)."""
        ...


class EstimateCounter:
    """Tokens estimated from characters: :data:`CHARS_PER_TOKEN` a token until a server reports usage.

    Example:
        >>> c = EstimateCounter()
        >>> c.count("x" * 300)
        101
        >>> c.calibrate(1000, 400)   # the server counted 0.4 tokens a character: more than 1/3
        True
        >>> c.count("x" * 300)
        134
    """

    #: The fewest tokens a character may count for after calibration (no tokenizer packs 5 characters a token
    #: on average): a server's usage that says less is not believed.
    FLOOR = 0.2

    def __init__(self, chars_per_token: float = CHARS_PER_TOKEN, margin: float = 1.1) -> None:
        self.per_char = 1.0 / chars_per_token
        self.margin = margin
        self.calibrated = False
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        """The estimated tokens of ``text`` (one more for the BOS token)."""
        return math.ceil(len(text) * self.per_char) + 1

    def calibrate(self, chars: int, tokens: int) -> bool:
        """Learn from a prompt of ``chars`` characters that the server counted as ``tokens``.

        The estimate then uses the highest tokens per character seen (with a
        10 % margin, and at least :attr:`FLOOR`); a prompt of fewer than 200
        characters says too little. Returns whether the estimate changed.
        """
        if chars < 200 or tokens <= 0:
            return False
        ratio = max(self.FLOOR, tokens / chars * self.margin)
        with self._lock:
            changed = (not self.calibrated and ratio != self.per_char) or ratio > self.per_char
            if changed:
                self.per_char = ratio
            self.calibrated = True
            return changed


class LocalTokenizer:
    """The bundled local model's own tokenizer, in process (llama-cpp-python, the vocabulary only).

    Loaded on first use (about 0.7 s); when it cannot be (the ``local`` extra
    is missing), the counts are :class:`EstimateCounter` 's.
    """

    def __init__(self, path: Any = None) -> None:
        self.path = path
        self._model: Any = None
        self._fallback: EstimateCounter | None = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None and self._fallback is None:
            try:
                from llama_cpp import Llama

                from agent.llm.local import model_path

                path = str(self.path or model_path())
                with _quiet():  # llama.cpp warns on stderr about the context of a vocabulary-only load
                    self._model = Llama(path, vocab_only=True, verbose=False)
            except Exception:  # noqa: BLE001 - any failure to load means: estimate instead
                self._fallback = EstimateCounter()
            else:
                # free the vocabulary before the interpreter tears llama.cpp's bindings down (else its
                # __del__ fails at exit); a weak reference, so a tokenizer nobody holds is still collected
                ref = weakref.ref(self)
                atexit.register(lambda: (tokenizer := ref()) is not None and tokenizer.close())
        return self._model

    def close(self) -> None:
        """Free the vocabulary (it loads again on the next use)."""
        with self._lock:
            model, self._model = self._model, None
        if model is not None:
            model.close()

    def count(self, text: str) -> int:
        """The tokens of ``text`` as the local model reads it (its BOS token included)."""
        with self._lock:
            model = self._load()
            if model is None:
                assert self._fallback is not None
                return self._fallback.count(text)
            return len(model.tokenize(text.encode("utf-8"), add_bos=True, special=True))


def _quiet() -> Any:
    """llama-cpp-python's guard that keeps llama.cpp's own output off stdout and stderr (a no-op without it)."""
    try:
        from llama_cpp._utils import suppress_stdout_stderr

        return suppress_stdout_stderr(disable=False)
    except ImportError:
        import contextlib

        return contextlib.nullcontext()


@dataclass(frozen=True)
class Block:
    """A piece of a prompt with its shorter versions.

    Attributes:
        versions: the pieces of each version, the whole one first; a piece is
            a string (a completion prompt) or a chat message ``{"role", "content"}``.
            ``versions[1]`` is the shortened one, ``versions[2]`` the summarised one;
            a block with one version is never changed.

    Example:
        >>> Block.kept("Question: q?").versions
        (('Question: q?',),)
    """

    versions: tuple[tuple[Any, ...], ...]

    def __init__(self, *versions: Sequence[Any]) -> None:
        object.__setattr__(self, "versions", tuple(tuple(v) for v in versions))

    @classmethod
    def kept(cls, *pieces: Any) -> "Block":
        """A block that is never shortened."""
        return cls(pieces)


def shortened(observation: str, keep: int = KEEP_FIRST_LINE) -> str:
    """An older observation shortened: its first line (cut to ``keep`` characters) and what was left out.

    Example:
        >>> shortened("The value of ?x is [a, b, c]\\nrow 1\\nrow 2", keep=20)
        'The value of ?x is [ [shortened: 20 chars]'
        >>> shortened("short")
        'short'
    """
    lines = split_lines(observation)
    first = lines[0] if lines else ""
    kept = first[:keep].rstrip()
    if kept == observation:
        return observation
    return f"{kept} [shortened: {len(observation) - len(kept)} chars]"


def summarised(observation: str, keep: int = KEEP_OUTCOME) -> str:
    """An older step's outcome summarised: one line, cut to ``keep`` characters (its action goes with it).

    Example:
        >>> summarised("The value of variable ?x is ['A' (m.2)]" + ", 'B'" * 40)
        "The value of variable ?x is ['A' (m.2)], 'B', 'B', 'B', 'B', 'B', 'B', 'B',... [summarised]"
        >>> summarised("ok")
        'ok'
    """
    line = one_line(observation, limit=keep)
    return line if line == observation else f"{line} [summarised]"


def _chars(pieces: Sequence[Any]) -> int:
    return sum(len(p) if isinstance(p, str) else len(str(p.get("content") or "")) for p in pieces)


def assemble(blocks: Sequence[Block], levels: Sequence[int]) -> Any:
    """The prompt of ``blocks`` at ``levels``: one text, or the chat messages when a piece is a message.

    Example:
        >>> assemble([Block(["a"], ["b"]), Block.kept("c")], [1, 0])
        'bc'
    """
    pieces = [p for block, level in zip(blocks, levels) for p in block.versions[level]]
    if all(isinstance(p, str) for p in pieces):
        return "".join(pieces)
    return [dict(p) if not isinstance(p, str) else {"role": "user", "content": p} for p in pieces]


class ContextBudget:
    """How many tokens a prompt may take, and how a prompt is made to fit (see the module docstring).

    Args:
        context_tokens: the model's context in tokens (None: unknown).
        reserve: tokens kept free for the reply (its ``max_tokens``; :data:`SLACK_TOKENS` is added).
        counter: a :class:`TokenCounter` (default: :class:`EstimateCounter`).
        usage: correct the estimate with the prompt tokens servers report (:meth:`observe`;
            off for a recorded run, whose replay must build the same prompts).

    Example:
        >>> b = ContextBudget(context_tokens=4096, reserve=256)
        >>> (b.limit(), b.limit(cap=2000), ContextBudget(None, 256).limit())
        (3808, 2000, None)
    """

    def __init__(self, context_tokens: int | None, reserve: int, counter: TokenCounter | None = None, usage: bool = True) -> None:
        self.context_tokens = context_tokens
        self.reserve = reserve
        self.counter: TokenCounter = counter if counter is not None else EstimateCounter()
        self.usage = usage
        self._lock = threading.Lock()

    def limit(self, cap: int | None = None) -> int | None:
        """The most tokens a prompt may have: the context less the reserve, or ``cap`` when smaller (None: no limit)."""
        room = None if self.context_tokens is None else self.context_tokens - self.reserve - SLACK_TOKENS
        if cap is not None:
            room = cap if room is None else min(room, cap)
        return room

    def count(self, prompt: Any) -> int:
        """The tokens of a prompt (a text, or chat messages: their contents and :data:`MESSAGE_TOKENS` each)."""
        if isinstance(prompt, str):
            return self.counter.count(prompt)
        contents = "\n".join(str(m.get("content") or "") for m in prompt)
        return self.counter.count(contents) + MESSAGE_TOKENS * len(prompt)

    def learn(self, overflow: ContextOverflow, prompt: Any = None) -> bool:
        """Take what a server's refusal of ``prompt`` said; True when it is news.

        News is a context smaller than the known one, or (the estimate's
        counter) the prompt's tokens as the server counted them, when the
        estimate counted fewer.

        Example:
            >>> b = ContextBudget(None, 256)
            >>> b.learn(ContextOverflow("refused", limit=4096, source="server")), b.context_tokens
            (True, 4096)
            >>> b.learn(ContextOverflow("refused", limit=4096, source="server"))
            False
            >>> b.learn(ContextOverflow("refused", needed=4000, limit=4096, source="server"), "x" * 9000)  # 3,001 estimated
            True
        """
        size, news = overflow.limit, False
        with self._lock:
            if size is not None and size > self.reserve and (self.context_tokens is None or size < self.context_tokens):
                self.context_tokens, news = size, True
        calibrate = getattr(self.counter, "calibrate", None)
        if overflow.needed and prompt is not None and calibrate is not None and self.count(prompt) < overflow.needed:
            news = calibrate(len(prompt) if isinstance(prompt, str) else _chars(prompt), overflow.needed) or news
        return news

    def observe(self, prompt: Any, reply: Any) -> None:
        """Correct the estimate with the prompt tokens a server reported for ``prompt`` (``reply.usage_in``).

        Only a real server's count is taken (a reply with its raw response).
        """
        calibrate = getattr(self.counter, "calibrate", None)
        if not self.usage or calibrate is None or getattr(reply, "raw", None) is None or not getattr(reply, "usage_in", 0):
            return
        if isinstance(prompt, str):
            calibrate(len(prompt), int(reply.usage_in))
        else:
            calibrate(_chars(prompt), int(reply.usage_in) - MESSAGE_TOKENS * len(prompt))

    def check(self, prompt: T, cap: int | None = None) -> T:
        """``prompt`` itself when it fits, else :class:`ContextOverflow` (a prompt nothing of which may be cut)."""
        return self.fit([Block.kept(prompt)], cap) if isinstance(prompt, str) else self.fit([Block(prompt)], cap)

    def fit(self, blocks: Sequence[Block], cap: int | None = None, overhead: int = 0) -> Any:
        """The prompt of ``blocks``, shortened until it fits (see the module docstring).

        ``overhead``: tokens the request takes besides the prompt (native tool schemas).

        Each stage (1: shorten, 2: summarise) goes through the blocks that
        have its version, oldest first, and stops as soon as the prompt fits;
        the tokenizer is asked again only when the estimate from the last
        count says it may fit.

        Raises:
            ContextOverflow: the prompt does not fit with every block at its shortest.
        """
        levels = [0] * len(blocks)
        prompt = assemble(blocks, levels)
        limit = self.limit(cap)
        if limit is None:
            return prompt
        limit -= overhead
        need = self.count(prompt)
        moves = [(i, stage) for stage in (1, 2) for i, b in enumerate(blocks) if len(b.versions) > stage]
        done = 0
        while need > limit:
            if done >= len(moves):
                raise self._overflow(need, limit, cut=bool(moves))
            per_char = need / max(1, _chars(_pieces(blocks, levels)))
            estimate = need
            while done < len(moves) and estimate > limit:
                i, stage = moves[done]
                before = _chars(blocks[i].versions[levels[i]])
                levels[i] = stage
                estimate -= per_char * (before - _chars(blocks[i].versions[stage]))
                done += 1
            prompt = assemble(blocks, levels)
            need = self.count(prompt)
        return prompt

    def fit_items(self, render: Callable[[int], T], total: int, cap: int | None = None) -> T:
        """``render(k)`` for the largest ``k`` ≤ ``total`` that fits: a list of items cut from its end.

        Example:
            >>> b = ContextBudget(context_tokens=90, reserve=0)
            >>> b.fit_items(lambda k: "items: " + ", ".join(["abcdefghi"] * k), 50).count("abcdefghi")
            15

        Raises:
            ContextOverflow: not even ``render(0)`` fits.
        """
        limit = self.limit(cap)
        if limit is None:
            return render(total)
        whole = render(total)
        if self.count(whole) <= limit:
            return whole
        low, high = 0, total - 1  # render(low) is tried last; render(high + 1) does not fit
        while low < high:
            mid = (low + high + 1) // 2
            if self.count(render(mid)) <= limit:
                low = mid
            else:
                high = mid - 1
        return self.check(render(low), cap)

    def _overflow(self, need: int, limit: int, cut: bool) -> ContextOverflow:
        how = "even with older observations shortened and older steps summarised, " if cut else ""
        context = f"{self.context_tokens} tokens, {self.reserve + SLACK_TOKENS} kept for the reply" if self.context_tokens else "unknown"
        return ContextOverflow(
            f"the prompt needs {need} tokens but the model's context has room for {limit} (context: {context}): "
            f"{how}the one-shot example, the question and the current state do not fit; give a model with a larger "
            "context (--context-tokens N for a server; `pyql llm serve --n-ctx N` for the local model), "
            "a smaller --max-tokens, or a shorter --example",
            needed=need,
            limit=self.context_tokens,
            source="agent",
        )


def _pieces(blocks: Sequence[Block], levels: Sequence[int]) -> list[Any]:
    return [p for block, level in zip(blocks, levels) for p in block.versions[level]]


def ask_within(budget: ContextBudget, build: Callable[[], Any], call: Callable[[Any], T]) -> tuple[Any, T]:
    """Build a prompt within the budget and send it; once more, refitted, when the server gives a smaller context.

    Returns ``(prompt, call(prompt))`` for the prompt that was answered.

    Raises:
        ContextOverflow: the prompt cannot fit, or the server refused it and said nothing new.

    Example:
        >>> budget = ContextBudget(None, 0)
        >>> answers = iter([ContextOverflow("refused", limit=40, source="server"), "ok"])
        >>> def call(prompt):
        ...     reply = next(answers)
        ...     if isinstance(reply, Exception):
        ...         raise reply
        ...     return reply
        >>> ask_within(budget, lambda: budget.fit_items(lambda k: "x" * k, 300), call)[0] == "x" * (40 - 32 - 1) * 3
        True
    """
    prompt = build()
    try:
        return prompt, call(prompt)
    except ContextOverflow as exc:
        if exc.source != "server" or not budget.learn(exc, prompt):
            raise
    prompt = build()
    return prompt, call(prompt)


_BUDGETS: "weakref.WeakKeyDictionary[Any, ContextBudget]" = weakref.WeakKeyDictionary()
_BUDGETS_LOCK = threading.Lock()


def budget_for(llm: Any) -> ContextBudget:
    """The budget of an LLM, made once per LLM object (what it learns serves every question of a run).

    The context: the LLM's ``config.context_tokens``, else the bundled
    model's when the LLM is it (what its ``pyql llm serve`` announced), else
    unknown until a refusal says it. The reserve: its ``config.max_tokens``.
    The counter: the local model's tokenizer when the LLM is the bundled
    model on loopback, else the estimate.

    Example:
        >>> from agent.llm.config import LLMConfig
        >>> from agent.llm.scripted import ScriptedLLM
        >>> b = budget_for(ScriptedLLM([], config=LLMConfig(context_tokens=2048, max_tokens=128)))
        >>> (b.context_tokens, b.reserve, b.limit(), type(b.counter).__name__)
        (2048, 128, 1888, 'EstimateCounter')
    """
    with _BUDGETS_LOCK:
        try:
            found = _BUDGETS.get(llm)
        except TypeError:  # an object that cannot be weakly referenced: a budget of its own each time
            found = None
        if found is not None:
            return found
        store = getattr(llm, "store", None)
        if store is not None and hasattr(store, "name"):  # --record/--replay (agent.llm.recording)
            budget = _recorded_budget(llm, store)
            with contextlib.suppress(TypeError):
                _BUDGETS[llm] = budget
            return budget
        budget = _new_budget(llm)
        with contextlib.suppress(TypeError):
            _BUDGETS[llm] = budget
        return budget


def _new_budget(llm: Any) -> ContextBudget:
    """A budget from an LLM's configuration (and its server's report)."""
    config = getattr(llm, "config", None)
    context = getattr(config, "context_tokens", None)
    if context is None and getattr(config, "base_url", None):
        context = _local_context(config)
    return ContextBudget(context, int(getattr(config, "max_tokens", 256) or 256), _counter(config))


def _recorded_budget(llm: Any, store: Any) -> ContextBudget:
    """The budget of a recorded LLM: the live one's context and counter, kept in the recording, which a
    replay reads back (it asks no server), so both build the same prompts; the usage correction is off."""
    reserve = int(getattr(getattr(llm, "config", None), "max_tokens", 256) or 256)
    inner = getattr(llm, "_llm", None)
    if inner is not None and store.mode != "replay":
        live = _new_budget(inner)
        kept = {"context_tokens": live.context_tokens, "local_tokenizer": isinstance(live.counter, LocalTokenizer)}
        store.name("context-budget", "", json.dumps(kept))
        return ContextBudget(live.context_tokens, reserve, live.counter, usage=False)
    kept = json.loads(store.name("context-budget", "") or "{}")
    counter = _local_tokenizer() if kept.get("local_tokenizer") else EstimateCounter()
    return ContextBudget(kept.get("context_tokens"), reserve, counter, usage=False)


def _local_context(config: Any) -> int | None:
    """The bundled model's context when ``config`` points at it: what its ``pyql llm serve`` announced, else its default."""
    from agent.llm.local import DEFAULT_N_CTX, LOCAL_MODEL_NAME, running_server

    if not getattr(config, "local", False) or getattr(config, "model", None) != LOCAL_MODEL_NAME:
        return None
    running = running_server(timeout=1.0)
    if running is not None and str(running.get("base_url", "")).rstrip("/") == str(config.base_url).rstrip("/"):
        return int(running.get("n_ctx") or DEFAULT_N_CTX)
    return DEFAULT_N_CTX


def _counter(config: Any) -> TokenCounter:
    """The local model's tokenizer for the bundled model on loopback, else the estimate."""
    from agent.llm.local import LOCAL_MODEL_NAME

    if config is not None and getattr(config, "local", False) and getattr(config, "model", None) == LOCAL_MODEL_NAME:
        return _local_tokenizer()
    return EstimateCounter()


_LOCAL: list[LocalTokenizer] = []
_LOCAL_LOCK = threading.Lock()


def _local_tokenizer() -> LocalTokenizer:
    """The process's one :class:`LocalTokenizer` (its vocabulary loaded once)."""
    with _LOCAL_LOCK:
        if not _LOCAL:
            _LOCAL.append(LocalTokenizer())
        return _LOCAL[0]
