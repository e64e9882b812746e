"""The registry of policies: one entry per action mode, each proposing the next step of an episode.

A *policy* is how the LLM is asked for a step: it writes the prompt's head
for the side (:mod:`agent.methods.sides`), asks the LLM (the prompt built by
:class:`~agent.methods.prompting.Prompter`), and proposes ranked candidate
actions with their scores (:class:`Proposal`). A strategy
(:mod:`agent.methods.strategies`) decides which candidates are taken, and on
which environment (a fork, for a search); the policy then writes the
history line and the trace of a taken candidate (:meth:`Policy.taken`),
since it knows its own format.

* ``text``, ``tools``, ``grammar`` (:mod:`agent.methods.policies.written`):
  the LLM writes one action (Thought/Action text, a native tool call, a
  grammar-constrained reply): a list of one candidate;
* ``choose`` (:mod:`agent.methods.policies.choose`): the LLM picks one of
  the valid next steps by number; the candidates are the listed steps, the
  picked one first.

A new action mode is one module in this package registering a
:class:`Policy` class with :func:`policy`; ``--action-mode``, its help,
:class:`~agent.methods.config.AgentConfig`'s check and the error messages
follow from the registry. The modules are found, not listed: every module
of the package whose name does not start with ``_`` is imported the first
time the registry is asked (:func:`names`), so registration never depends
on import order.

Example:
    >>> names()
    ('text', 'tools', 'grammar', 'choose')
    >>> entry("choose").sides, entry("text").sides
    (('sparql', 'sql'), None)
    >>> or_list(["a", "b", "c"])
    'a, b or c'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from agent.errors import AgentConfigError
from agent.methods.episode import Episode, StepTrace, Turn, prompt_templates
from pyql.autoload import import_submodules

__all__ = [
    "Candidate",
    "Proposal",
    "Policy",
    "BasePolicy",
    "PolicyEntry",
    "policy",
    "names",
    "entry",
    "make",
    "modes_for",
    "help_text",
    "or_list",
]


@dataclass(frozen=True)
class Candidate:
    """One action a policy proposes.

    Attributes:
        action: the action: its text, or a structured call (a native tool call, :class:`pyql.action_parser.ActionCall`).
        score: how good the policy thinks it is (higher first); None where it computes none (a
            written action; a listed step without a model score).
        kind: the kind of a listed step (``fact``, ``answer`` ...; :class:`pyql.environment.next_steps.NextStep`), else None.
        preview: a listed step's preview (the start of its result), else "".
        without_call: why the step is proposed without asking the LLM (choose mode's
            :func:`agent.methods.choose.forced_choice`), else None.
    """

    action: Any
    score: float | None = None
    kind: str | None = None
    preview: str = ""
    without_call: str | None = None


@dataclass
class Proposal:
    """What a policy proposes for one step: ranked candidates (best first), and what its LLM calls cost.

    With no candidate, nothing is to be run: the policy has already written
    what happened into the episode (:attr:`outcome`: ``llm_error`` or
    ``context_overflow`` as the episode's error; ``invalid_choice`` and
    ``tool_arguments_not_json`` as a turn and a trace of their own; ``ended``
    when a look, the list or the scorer ended the episode), and
    :attr:`go_on` says whether the episode goes on.

    Attributes:
        candidates: the actions, best first.
        fields: the trace fields of the LLM call(s) that made them (the prompt's sha256 and
            text, the reply, seconds, tokens, attempts, scoring requests).
        prompt: the prompt sent (None without a call).
        reply: the reply's text as the history shows it (written actions).
        outcome: why there is no candidate (see above), else None.
        go_on: with no candidate, whether the episode goes on.
        looks: the steps the environment took itself before the proposal (choose mode's looks; traced).
    """

    candidates: list[Candidate] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    prompt: Any = None
    reply: str = ""
    outcome: str | None = None
    go_on: bool = False
    looks: list[Any] = field(default_factory=list)


class Policy(Protocol):
    """One action mode (see the module docstring)."""

    name: str

    def head(self, env: Any, side: Any, question: str) -> str:
        """The prompt's fixed part for the side (:class:`agent.methods.sides.Side`)."""
        ...

    def propose(self, env: Any, episode: Episode, step: int) -> Proposal:
        """The candidates for ``step`` of the episode (its side: ``episode.side``)."""
        ...

    def taken(self, env: Any, episode: Episode, step: int, proposal: Proposal, candidate: Candidate, record: Any) -> tuple[Turn, StepTrace]:
        """The history line and the trace of a candidate run on ``env`` (its record)."""
        ...


class BasePolicy:
    """What every built-in policy shares: its LLM, the agent's settings, a relation scorer, the prompt builder.

    Args:
        llm: the LLM.
        config: the :class:`agent.methods.config.AgentConfig`.
        scorer: the model's relation scorer (``first_relation="model"``; None: the bundled model).
    """

    name = ""
    #: a written-action prompt without an ending ends in ``Thought N:`` (:meth:`agent.methods.prompting.Prompter.prompt`)
    thought = True

    def __init__(self, llm: Any, config: Any, scorer: Any = None) -> None:
        from agent.methods.prompting import Prompter

        self.llm = llm
        self.config = config
        self.scorer = scorer
        self.templates = prompt_templates()
        self.prompter = Prompter(llm, config.prompt_style, config.token_budget, config.keep_observation)
        self._ranker: Any = None

    def rank(self) -> Any:
        """The relation ranker of a state grammar's vocabulary and of the choose mode's list (made once)."""
        from agent.methods.ranking import BM25Ranker

        if self._ranker is None:
            self._ranker = BM25Ranker().rank
        return self._ranker


P = TypeVar("P", bound=type)


@dataclass(frozen=True)
class PolicyEntry:
    """One registered action mode.

    Attributes:
        name: the ``--action-mode`` value.
        make: the policy class (``make(llm, config, scorer)``).
        help: one phrase for ``--action-mode``'s help.
        sides: the environment sides it drives (None: every side).
        rank: its place in lists (lower first).
    """

    name: str
    make: Callable[..., Any]
    help: str
    sides: tuple[str, ...] | None = None
    rank: int = 100


_POLICIES: dict[str, PolicyEntry] = {}


def policy(name: str, *, help: str, sides: Sequence[str] | None = None, rank: int = 100) -> Callable[[P], P]:
    """Register the decorated policy class as the action mode ``name``.

    Raises:
        AgentConfigError: ``name`` is registered already (by another class).

    Example:
        >>> @policy("test-echo", help="says the question back", rank=999)
        ... class Echo(BasePolicy):
        ...     pass
        >>> names()[-1], Echo.name
        ('test-echo', 'test-echo')
        >>> _ = _POLICIES.pop("test-echo")
    """

    def register(cls: P) -> P:
        known = _POLICIES.get(name)
        if known is not None and known.make is not cls:
            raise AgentConfigError(f"the action mode {name!r} is registered already (by {known.make.__module__})")
        cls.name = name  # type: ignore[attr-defined]
        _POLICIES[name] = PolicyEntry(name, cls, help, tuple(sides) if sides is not None else None, rank)
        return cls

    return register


def _load() -> None:
    """Import every policy module of the package once (they register on import)."""
    import_submodules(__name__.rpartition(".")[0], skip=("registry",))


def names() -> tuple[str, ...]:
    """The registered action modes, in their order."""
    _load()
    return tuple(e.name for e in sorted(_POLICIES.values(), key=lambda e: e.rank))


def entry(name: str) -> PolicyEntry:
    """The registered action mode ``name``.

    Raises:
        AgentConfigError: an unknown action mode (the message lists the known ones).
    """
    _load()
    found = _POLICIES.get(name)
    if found is None:
        raise AgentConfigError(f"unknown action mode {name!r}; use {or_list(names())}")
    return found


def make(name: str, llm: Any, config: Any, scorer: Any = None) -> Any:
    """The policy of the action mode ``name`` for an LLM and the agent's settings."""
    return entry(name).make(llm, config, scorer)


def modes_for(side: str) -> tuple[str, ...]:
    """The action modes that drive environments of ``side``.

    Example:
        >>> modes_for("agentbench")
        ('text', 'tools')
    """
    return tuple(n for n in names() if _POLICIES[n].sides is None or side in _POLICIES[n].sides)


def help_text() -> str:
    """``--action-mode``'s help: each mode and what it does."""
    return "; ".join(f"{n}: {_POLICIES[n].help}" for n in names())


def or_list(items: Sequence[str]) -> str:
    """``a, b or c``."""
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
