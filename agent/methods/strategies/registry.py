"""The registry of strategies: how an agent searches for an answer, one entry per ``--method``.

A *strategy* answers one question: ``solve(llm, env, question, config,
**options) -> AgentResult``. It decides which steps are taken and in what
order: the greedy loop takes the policy's best candidate at every step
(:mod:`agent.methods.strategies.greedy`, QueryAgent); Readi writes and edits
reasoning paths (:mod:`agent.methods.strategies.readi`). A search runs
candidates on forks of the environment (:meth:`pyql.environment.kernel.Environment.fork`)
and asks the policy (:mod:`agent.methods.policies`) for them.

A strategy registers with :func:`strategy`: its name (``--method``), other
names it answers to (``aliases``: ``queryagent`` is the greedy strategy's),
one line of description, what it follows (``cites``) and its typed options
(:class:`Option`). ``--method``'s choices and help, ``pyql eval --help``,
one flag per option for ``pyql ask`` and ``pyql eval`` (checked: a value
out of range is a usage error naming the range; strategies may share a
flag, each with its own default and range, when its type is the same:
``--max-llm-calls``),
:func:`agent.evaluation.runner.solver`, the run file's settings (the
options, when a strategy has any) and docs/agent.md's table
(``tests/test_strategies.py`` checks it) follow from the registry.
Options several strategies share are defined here once, so that each
flag means one thing: :data:`MAX_LLM_CALLS` (every search's budget) and
:data:`SEED` (the first sample's seed of a strategy that samples). A
strategy that applies to some environment sides only (``sides``: ``sparql``,
``sql``, ``agentbench``) refuses the others (:meth:`StrategyEntry.check_side`,
a usage error naming where it applies). The
modules are found, not listed: every module of the package whose name
does not start with ``_`` is imported the first time the registry is asked
(:func:`names`).

Options several strategies share are defined here once, so that each
flag means one thing: :data:`MAX_LLM_CALLS` (every search's budget) and
:data:`SEED` (the first sample's seed of a strategy that samples).

Example:
    >>> names()[:2], canonical("queryagent"), canonical("readi"), canonical("magic")
    (('greedy', 'readi'), 'greedy', 'readi', None)
    >>> entry("queryagent").name
    'greedy'
    >>> Option("beam_width", int, 4, "candidates kept", minimum=1, maximum=16).parse("40")
    Traceback (most recent call last):
    ...
    agent.errors.AgentConfigError: --beam-width must be a whole number from 1 to 16, got '40'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agent.errors import AgentConfigError
from pyql.autoload import import_submodules

__all__ = [
    "MAX_LLM_CALLS", "SEED", "Option", "StrategyEntry", "strategy", "names", "canonical", "entry", "options", "flags", "method_help", "method_choices",
    "markdown_table", "SIDE_WORDS",
]

F = TypeVar("F", bound=Callable[..., Any])

_KINDS = {int: "a whole number", float: "a number", str: "a text", bool: "yes or no"}

#: The environment sides, as a message names them (``env.side`` → words).
SIDE_WORDS = {
    "sparql": "a KB (--kb)",
    "sql": "a table (--db, --table-json, a data set of tables)",
    "agentbench": "AgentBench's actions on a KB (--action-set agentbench)",
}


@dataclass(frozen=True)
class Option:
    """One typed option of a strategy: a flag of ``pyql ask`` and ``pyql eval`` (``--beam-width``), a keyword of its solve function.

    Attributes:
        name: the keyword (``beam_width``); the flag is ``--`` and the name with ``-`` for ``_``.
        type: ``int``, ``float``, ``str`` or ``bool``.
        default: the value when the flag is not given.
        help: what it sets.
        choices: the values allowed (None: any of the type within the range).
        minimum, maximum: the range of a number (None: open).
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    @property
    def flag(self) -> str:
        """The command-line flag."""
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """What a value may be, in words.

        Example:
            >>> Option("width", int, 2, "w", minimum=1).allowed(), Option("mode", str, "a", "m", choices=("a", "b")).allowed()
            ('a whole number from 1', 'one of a, b')
        """
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        kind = _KINDS.get(self.type, self.type.__name__)
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} from {_num(self.minimum)} to {_num(self.maximum)}"
        if self.minimum is not None:
            return f"{kind} from {_num(self.minimum)}"
        if self.maximum is not None:
            return f"{kind} up to {_num(self.maximum)}"
        return kind

    def parse(self, text: str) -> Any:
        """The value of the flag's text, checked (:meth:`check`).

        Raises:
            AgentConfigError: it is not a value of the type, or not allowed.
        """
        try:
            if self.type is bool:
                if text.lower() not in ("yes", "no", "true", "false", "1", "0"):
                    raise ValueError(text)
                value: Any = text.lower() in ("yes", "true", "1")
            else:
                value = self.type(text)
        except ValueError:
            raise AgentConfigError(f"{self.flag} must be {self.allowed()}, got {text!r}") from None
        return self.check(value, text)

    def check(self, value: Any, shown: Any = None) -> Any:
        """``value`` when it is allowed.

        Raises:
            AgentConfigError: out of the range or not a choice (the message says what is allowed).
        """
        wrong = (self.choices is not None and value not in self.choices) or (
            self.type is float and not math.isfinite(value)
        ) or (
            self.type in (int, float) and (
                (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum)
            )
        )
        if wrong or (self.type is not bool and self.type in (int, float) and isinstance(value, bool)):
            raise AgentConfigError(f"{self.flag} must be {self.allowed()}, got {shown if shown is not None else value!r}")
        return value


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


#: A search's budget: the most LLM calls one question may make. When they run out the strategy answers with what it
#: has, the result says ``stopped: budget`` and ``extra["budget"]`` what ran out and how much was used. The default is
#: generous for every strategy's paper setting (a beam of width 3 over 12 steps asks at most 36 choose calls; 5 votes
#: of greedy's 12 steps 60; 7 programs 7).
MAX_LLM_CALLS = Option(
    "max_llm_calls", int, 500, "the most LLM calls one question may make; then the strategy answers with what it has "
    "(stopped: budget)", minimum=1, maximum=100000,
)

#: The first sample's seed, for the strategies that sample at a temperature above 0: sample i sends ``seed + i``, so
#: every sample's request is distinct and the same run asks the same requests again (a recording replays them).
SEED = Option("seed", int, 0, "the first sample's seed (sample i sends seed + i)", minimum=0, maximum=2**31 - 1)


@dataclass(frozen=True)
class StrategyEntry:
    """One registered strategy.

    Attributes:
        name: its ``--method`` name (written into run files).
        solve: ``solve(llm, env, question, config, **options) -> AgentResult``.
        aliases: other names ``--method`` takes for it.
        description: one line for ``--method``'s help and docs/agent.md.
        cites: what it follows (a paper), or "".
        options: its typed options.
        rank: its place in lists (lower first).
        sides: the environment sides it applies to (None: every side).
    """

    name: str
    solve: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    description: str = ""
    cites: str = ""
    options: tuple[Option, ...] = ()
    rank: int = 100
    sides: tuple[str, ...] | None = None

    def check_side(self, side: str) -> None:
        """Nothing when the strategy applies to environments of ``side``.

        Raises:
            AgentConfigError: it does not (the message says where it applies).

        Example:
            >>> StrategyEntry("kb-only", print, sides=("sparql",)).check_side("sql")
            Traceback (most recent call last):
            ...
            agent.errors.AgentConfigError: --method kb-only applies to a KB (--kb), not to a table (--db, --table-json, a data set of tables)
        """
        if self.sides is None or side in self.sides:
            return
        where = " or ".join(SIDE_WORDS.get(s, s) for s in self.sides)
        raise AgentConfigError(f"--method {self.name} applies to {where}, not to {SIDE_WORDS.get(side, side)}")

    def values(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every option's value: those given (checked), the defaults for the rest.

        Raises:
            AgentConfigError: an option it does not have, or a value not allowed.
        """
        given = dict(given or {})
        known = {o.name: o for o in self.options}
        extra = sorted(set(given) - set(known))
        if extra:
            flags = ", ".join("--" + e.replace("_", "-") for e in extra)
            mine = ", ".join(o.flag for o in self.options) or "none"
            raise AgentConfigError(f"{flags}: not an option of --method {self.name} (its options: {mine})")
        return {name: (option.check(given[name]) if name in given else option.default) for name, option in known.items()}

    def bind(self, given: Mapping[str, Any] | None = None) -> Callable[..., Any]:
        """The solve function with its options' values: ``solve(llm, env, question, config)``."""
        values = self.values(given)
        if not values:
            return self.solve
        bound = functools.partial(self.solve, **values)
        functools.update_wrapper(bound, self.solve)
        return bound


_STRATEGIES: dict[str, StrategyEntry] = {}


def strategy(
    name: str, *, description: str, aliases: Sequence[str] = (), cites: str = "", options: Sequence[Option] = (), rank: int = 100,
    sides: Sequence[str] | None = None,
) -> Callable[[F], F]:
    """Register the decorated function as the strategy ``name`` (see the module docstring); ``sides``: where it
    answers (None: every side; :func:`check_side`).

    Raises:
        AgentConfigError: the name or an alias is taken (by another strategy), or an option's flag is another
            strategy's with another type.

    Example:
        >>> @strategy("test-nothing", description="answers nothing", options=(Option("test_depth", int, 1, "how deep", minimum=0),), rank=999)
        ... def nothing(llm, env, question, config, test_depth=1):
        ...     return test_depth
        >>> names()[-1], entry("test-nothing").bind({"test_depth": 3})(None, None, "q?", None)
        ('test-nothing', 3)
        >>> _ = _STRATEGIES.pop("test-nothing")
    """

    def register(fn: F) -> F:
        made = StrategyEntry(name, fn, tuple(aliases), description, cites, tuple(options), rank, tuple(sides) if sides is not None else None)
        _check_free(made)
        _STRATEGIES[name] = made
        return fn

    return register


def _check_free(made: StrategyEntry) -> None:
    """Refuse a strategy whose name or aliases another one has, or one of whose options is another's flag with
    another type (a flag of several strategies parses one type; each checks its own range and default)."""
    for other in _STRATEGIES.values():
        if other.name == made.name and other.solve is made.solve:
            continue
        taken = ({other.name, *other.aliases} & {made.name, *made.aliases}) or {
            o.name for o in other.options if any(m.name == o.name and m.type is not o.type for m in made.options)
        }
        if taken:
            raise AgentConfigError(f"{', '.join(sorted(taken))}: taken by the strategy {other.name!r} ({other.solve.__module__})")


def _load() -> None:
    """Import every strategy module of the package once (they register on import)."""
    import_submodules(__name__.rpartition(".")[0], skip=("registry",))


def _ordered() -> list[StrategyEntry]:
    _load()
    return sorted(_STRATEGIES.values(), key=lambda e: (e.rank, e.name))


def names() -> tuple[str, ...]:
    """The registered strategies' names, in their order."""
    return tuple(e.name for e in _ordered())


def canonical(name: str) -> str | None:
    """The strategy ``name`` is (its own name or an alias), or None for no strategy."""
    for e in _ordered():
        if name == e.name or name in e.aliases:
            return e.name
    return None


def entry(name: str) -> StrategyEntry:
    """The strategy ``name`` names (an alias too).

    Raises:
        AgentConfigError: no strategy has that name (the message lists them).
    """
    found = canonical(name)
    if found is None:
        raise AgentConfigError(f"unknown method {name!r}; use one of {', '.join(method_choices())}")
    return _STRATEGIES[found]



def options() -> list[tuple[StrategyEntry, Option]]:
    """Every strategy's options, with their strategy (each flag once)."""
    seen: dict[str, tuple[StrategyEntry, Option]] = {}
    for e in _ordered():
        for o in e.options:
            seen.setdefault(o.name, (e, o))
    return list(seen.values())


def flags() -> dict[str, list[tuple[StrategyEntry, Option]]]:
    """Every option name, with each strategy that has it and its option there (one flag serves them all).

    Example:
        >>> @strategy("test-a", description="a", options=(Option("test_calls", int, 5, "calls", minimum=1),), rank=998)
        ... @strategy("test-b", description="b", options=(Option("test_calls", int, 9, "calls", minimum=2),), rank=999)
        ... def nothing(llm, env, question, config, test_calls=1):
        ...     return test_calls
        >>> [(e.name, o.default) for e, o in flags()["test_calls"]]
        [('test-a', 5), ('test-b', 9)]
        >>> _ = _STRATEGIES.pop("test-a"), _STRATEGIES.pop("test-b")
    """
    out: dict[str, list[tuple[StrategyEntry, Option]]] = {}
    for e in _ordered():
        for o in e.options:
            out.setdefault(o.name, []).append((e, o))
    return out


def method_choices() -> list[str]:
    """What ``--method`` takes: every name, each followed by its aliases."""
    return [n for e in _ordered() for n in (e.name, *e.aliases)]


def method_help(default: str) -> str:
    """``--method``'s help: each strategy, its aliases and description (``default`` marked)."""
    parts = []
    for e in _ordered():
        also = f" (alias {', '.join(e.aliases)})" if e.aliases else ""
        parts.append(f"{e.name}{also}: {e.description}{' (default)' if e.name == default else ''}")
    return "; ".join(parts)


def markdown_table() -> str:
    """The strategies as docs/agent.md lists them (``tests/test_strategies.py`` checks that it does).

    Example:
        >>> markdown_table().splitlines()[2].startswith("| `greedy` | `queryagent` |")
        True
    """
    rows = ["| `--method` | also | what it does | follows | options |", "| --- | --- | --- | --- | --- |"]
    for e in _ordered():
        also = ", ".join(f"`{a}`" for a in e.aliases) or "-"
        opts = "; ".join(f"`{o.flag}` ({o.allowed()}, default {o.default}): {o.help}" for o in e.options) or "-"
        rows.append(f"| `{e.name}` | {also} | {e.description} | {e.cites or '-'} | {opts} |")
    return "\n".join(rows)
