"""The rule registry of ERASER: every error check, by a stable id.

A :class:`Rule` is one independent check: a *trigger* predicate that looks
at a step (its :class:`~pyql.environment.StepRecord`) and the environment and
returns a context dict when the step is that kind of error (None otherwise),
plus the name of the jinja2 template that turns the context into the
guideline. Triggers hold the logic; the wording lives in
``correction/templates/<id>.j2``.

Rules are grouped by the environment whose feedback fires them
(:data:`ENVIRONMENTS`: the Python ``interpreter`` (exceptions, argument
kinds), the reasoning ``memory`` (what earlier steps created and returned)
and the ``kb`` (what this step's query returned)) and are checked in that
order, then in registration order; a *fallback* rule comes after the other
rules of its environment. The first rule that fires wins.

Each rule declares its *kind* (:data:`KINDS`): ``error``, the step cannot
be right as written (an unknown variable, a wrong arity, a relation the KB
does not have there ...), or ``advice``, the step skipped a look the method
asks for (``add_fact`` before ``get_relation``) but may well be right. An
error blocks the step; advice never does: the environment makes the skipped
look itself and runs the step with the advice as a note
(:class:`pyql.environment.Feedback`). Each rule also declares the
environment sides it applies to (``sides``: the ``side`` of the
environment, "sparql" or "sql"), the actions it looks at, the phase it runs
in ("before" the action runs, "after", or "any") and how many KB queries
its trigger may send (most send none).

Example:
    >>> from correction import registry
    >>> registry.get("wrong_arity").sides == frozenset({"sparql", "sql"})
    True
    >>> registry.get("wrong_arity").kind, registry.get("fact_before_get_relation").kind
    ('error', 'advice')
    >>> [r.env for r in registry.ordered("sparql")][:1]
    ['interpreter']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from correction.errors import RuleError, UnknownRuleError  # noqa: F401 (defined in correction/errors.py)

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord

__all__ = [
    "KINDS",
    "ENVIRONMENTS",
    "PHASES",
    "FEEDBACK",
    "Rule",
    "Registry",
    "RuleError",
    "UnknownRuleError",
    "registry",
    "RULES",
    "rule",
    "markdown_table",
    "feedback_type",
]

#: The environments a rule's feedback comes from, in checking order.
ENVIRONMENTS: tuple[str, ...] = ("interpreter", "memory", "kb")
#: What a rule says about a step: it cannot be right (blocks it), or it skipped a look (a note).
KINDS: tuple[str, ...] = ("error", "advice")
#: When a rule is checked.
PHASES: tuple[str, ...] = ("before", "after", "any")
#: The feedback sources of the paper's Table 8, with their short names.
FEEDBACK: dict[str, str] = {"python": "Python", "kb": "KB", "memory": "RM"}

Trigger = Callable[["StepRecord", "Environment"], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Rule:
    """One ERASER check.

    Attributes:
        id: the stable id (``unlinked_entity``); the ``error`` of a failed step.
        kind: "error" (the step cannot be right: it is blocked) or "advice"
            (the step skipped a look: the environment makes it and runs the step).
        env: "interpreter", "memory" or "kb": which feedback fires it (its checking group).
        phase: "before" (the action is parsed, not run), "after" (it ran) or "any".
        trigger: ``(record, env) -> dict | None``; the dict is the template's context.
        template: the template file in ``correction/templates``.
        doc: one line: when the rule fires.
        suggests: one line: what its guideline suggests.
        sides: the environment sides it applies to (``env.side``).
        actions: the action names it looks at; None means any step (even unparsed ones).
        kb_queries: KB queries the trigger may send at most (0 for most rules).
        feedback: the feedback sources it combines ("python", "memory", "kb"), as in Table 8.
        fallback: checked after the other rules of its environment.

    Example:
        >>> r = Rule("demo", "memory", "before", lambda rec, env: None, kind="error", doc="never fires")
        >>> r.template, r.feedback_type
        ('demo.j2', 'RM')
    """

    id: str
    env: str
    phase: str
    trigger: Trigger
    template: str = ""
    doc: str = ""
    suggests: str = ""
    sides: frozenset[str] = frozenset({"sparql"})
    actions: frozenset[str] | None = None
    kb_queries: int = 0
    feedback: tuple[str, ...] = ()
    fallback: bool = False
    kind: str = ""

    def __post_init__(self) -> None:
        if not self.id or not self.id.replace("_", "").isalnum() or not self.id.islower():
            raise RuleError(f"rule id {self.id!r} must be lower_case_with_underscores")
        if self.kind not in KINDS:
            raise RuleError(
                f"rule {self.id}: kind must be one of {', '.join(KINDS)} (does the step fail, or did it skip a look?), "
                f"not {self.kind!r}"
            )
        if self.env not in ENVIRONMENTS:
            raise RuleError(f"rule {self.id}: env must be one of {', '.join(ENVIRONMENTS)}, not {self.env!r}")
        if self.phase not in PHASES:
            raise RuleError(f"rule {self.id}: phase must be one of {', '.join(PHASES)}, not {self.phase!r}")
        if self.kb_queries < 0:
            raise RuleError(f"rule {self.id}: kb_queries must be ≥ 0")
        if not self.template:
            object.__setattr__(self, "template", f"{self.id}.j2")
        object.__setattr__(self, "sides", frozenset(self.sides))
        if self.actions is not None:
            object.__setattr__(self, "actions", frozenset(self.actions))
        feedback = tuple(self.feedback) or ({"interpreter": ("python",), "memory": ("memory",), "kb": ("kb",)}[self.env])
        unknown = [f for f in feedback if f not in FEEDBACK]
        if unknown:
            raise RuleError(f"rule {self.id}: feedback must be among {', '.join(FEEDBACK)}, not {', '.join(unknown)}")
        object.__setattr__(self, "feedback", feedback)

    @property
    def feedback_type(self) -> str:
        """The Table 8 type: "Python", "RM", "KB+RM", "Python+RM" ...

        Example:
            >>> Rule("x", "kb", "after", lambda r, e: None, kind="error", feedback=("kb", "memory")).feedback_type
            'KB+RM'
        """
        return feedback_type(self.feedback)

    def runs_in(self, phase: str) -> bool:
        """Whether the rule is checked in a phase ("before" or "after").

        Example:
            >>> Rule("x", "interpreter", "any", lambda r, e: None, kind="error").runs_in("after")
            True
        """
        return self.phase == "any" or self.phase == phase

    def applies_to(self, side: str) -> bool:
        """Whether the rule is checked on an environment of this side.

        Example:
            >>> Rule("x", "memory", "before", lambda r, e: None, kind="error").applies_to("sql")
            False
        """
        return side in self.sides


def feedback_type(feedback: Iterable[str]) -> str:
    """The Table 8 name of a combination of feedback sources.

    Example:
        >>> feedback_type(["memory", "kb"]), feedback_type(["python", "memory"])
        ('KB+RM', 'Python+RM')
    """
    wanted = set(feedback)
    return "+".join(FEEDBACK[f] for f in ("kb", "python", "memory") if f in wanted)


def _origin(trigger: object) -> tuple[str, str]:
    """Where a rule's function is defined (module and qualified name): the same rule re-registered has the same."""
    return (getattr(trigger, "__module__", "") or "", getattr(trigger, "__qualname__", "") or repr(trigger))


class Registry:
    """An ordered collection of rules, by id.

    Example:
        >>> reg = Registry()
        >>> _ = reg.register(Rule("late", "kb", "after", lambda r, e: None, kind="error"))
        >>> _ = reg.register(Rule("early", "interpreter", "before", lambda r, e: None, kind="error"))
        >>> [r.id for r in reg.ordered("sparql")]
        ['early', 'late']
        >>> reg.get("nope")
        Traceback (most recent call last):
        ...
        correction.errors.UnknownRuleError: no ERASER rule 'nope'; registered rules: late, early
    """

    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}
        self._cache: dict[tuple[str, str], tuple[Rule, ...]] = {}

    def register(self, new: Rule) -> Rule:
        """Add a rule (its id must be new).

        A rule whose module ran a second time (as a doctest collector may
        do: a new function object of the same module and name) replaces its
        own entry.

        Raises:
            RuleError: when the id is taken by another function.
        """
        old = self._rules.get(new.id)
        if old is not None and (old.trigger is new.trigger or _origin(old.trigger) != _origin(new.trigger)):
            raise RuleError(f"an ERASER rule with id {new.id!r} is already registered; choose another id")
        self._rules[new.id] = new
        self._cache.clear()
        return new

    def unregister(self, rule_id: str) -> Rule:
        """Remove a rule (mostly for tests and experiments).

        Example:
            >>> reg = Registry()
            >>> _ = reg.register(Rule("x", "kb", "after", lambda r, e: None, kind="error"))
            >>> reg.unregister("x").id, len(reg)
            ('x', 0)
        """
        found = self.get(rule_id)
        del self._rules[rule_id]
        self._cache.clear()
        return found

    def get(self, rule_id: str) -> Rule:
        """The rule with this id.

        Raises:
            UnknownRuleError: listing the registered ids.

        Example:
            >>> from correction import registry
            >>> registry.get("unlinked_entity").env
            'memory'
        """
        try:
            return self._rules[rule_id]
        except KeyError:
            raise UnknownRuleError(
                f"no ERASER rule {rule_id!r}; registered rules: {', '.join(self._rules)}"
            ) from None

    def check_ids(self, ids: Iterable[str]) -> frozenset[str]:
        """The ids, after checking each is registered.

        Raises:
            UnknownRuleError: naming the unknown ids and listing the registered ones.

        Example:
            >>> from correction import registry
            >>> sorted(registry.check_ids(["filter_empty", "wrong_arity"]))
            ['filter_empty', 'wrong_arity']
        """
        wanted = frozenset(ids)
        unknown = sorted(wanted - set(self._rules))
        if unknown:
            raise UnknownRuleError(
                f"unknown ERASER rule id(s) {', '.join(unknown)}; registered rules: {', '.join(self._rules)}"
            )
        return wanted

    @property
    def ids(self) -> tuple[str, ...]:
        """Registered ids in checking order (all sides).

        Example:
            >>> from correction import registry
            >>> registry.ids[0]
            'no_action'
        """
        return tuple(r.id for r in self._sorted(self._rules.values()))

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._sorted(self._rules.values()))

    def __len__(self) -> int:
        return len(self._rules)

    def _sorted(self, rules: Iterable[Rule]) -> list[Rule]:
        position = {rule_id: i for i, rule_id in enumerate(self._rules)}
        return sorted(rules, key=lambda r: (ENVIRONMENTS.index(r.env), r.fallback, position[r.id]))

    def ordered(self, side: str, phase: str | None = None) -> tuple[Rule, ...]:
        """The rules of one side (and phase), in checking order.

        Example:
            >>> from correction import registry
            >>> "execute_empty_result" in [r.id for r in registry.ordered("sparql", "after")]
            True
        """
        key = (side, phase or "")
        cached = self._cache.get(key)
        if cached is None:
            cached = tuple(
                r for r in self._sorted(self._rules.values()) if r.applies_to(side) and (phase is None or r.runs_in(phase))
            )
            self._cache[key] = cached
        return cached

    def for_side(self, side: str) -> tuple[Rule, ...]:
        """Every rule of one side, in checking order.

        Example:
            >>> from correction import registry
            >>> "wrong_arity" in [r.id for r in registry.for_side("sql")]
            True
        """
        return self.ordered(side)


#: The registry the built-in rules (and the SQL twin's) register into.
registry = Registry()
RULES = registry


def rule(
    rule_id: str,
    *,
    kind: str,
    env: str,
    phase: str,
    doc: str,
    suggests: str,
    sides: Iterable[str] = ("sparql",),
    actions: Iterable[str] | None = None,
    kb_queries: int = 0,
    feedback: Iterable[str] = (),
    fallback: bool = False,
    template: str = "",
    into: Registry | None = None,
) -> Callable[[Trigger], Trigger]:
    """Register the decorated function as the trigger of a new rule.

    ``kind`` is required: "error" (the step cannot be right) or "advice"
    (the step skipped a look; see :data:`KINDS`).

    Example:
        >>> reg = Registry()
        >>> @rule("never", kind="error", env="memory", phase="before", doc="never fires", suggests="nothing", into=reg)
        ... def never(record, env):
        ...     return None
        >>> reg.get("never").doc
        'never fires'
    """

    def register(trigger: Trigger) -> Trigger:
        (into if into is not None else registry).register(
            Rule(
                rule_id,
                env,
                phase,
                trigger,
                template=template,
                doc=doc,
                suggests=suggests,
                sides=frozenset(sides),
                actions=None if actions is None else frozenset(actions),
                kb_queries=kb_queries,
                feedback=tuple(feedback),
                fallback=fallback,
                kind=kind,
            )
        )
        return trigger

    return register


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown_table(reg: Registry | None = None, side: str | None = None) -> str:
    """The rule table of ``docs/eraser.md``, generated from the registry.

    Columns: checking order, id, kind (error or advice), environment,
    feedback type, phase, sides, actions, trigger, what the guideline
    suggests, KB queries.

    Example:
        >>> print(markdown_table().splitlines()[0])
        | # | id | kind | environment | type | phase | sides | actions | trigger | guideline suggests | KB queries |
    """
    reg = reg if reg is not None else registry
    rules = list(reg) if side is None else list(reg.ordered(side))
    lines = [
        "| # | id | kind | environment | type | phase | sides | actions | trigger | guideline suggests | KB queries |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for number, r in enumerate(rules, 1):
        actions = "any" if r.actions is None else ", ".join(f"`{a}`" for a in sorted(r.actions))
        lines.append(
            f"| {number} | `{r.id}` | {r.kind} | {r.env}{' (fallback)' if r.fallback else ''} | {r.feedback_type} | {r.phase} "
            f"| {', '.join(sorted(r.sides))} | {actions} | {_cell(r.doc)} | {_cell(r.suggests)} | {r.kb_queries} |"
        )
    return "\n".join(lines) + "\n"


def summary(reg: Registry | None = None) -> Mapping[str, int]:
    """Number of rules per side.

    Example:
        >>> summary()["sparql"] >= 33
        True
    """
    reg = reg if reg is not None else registry
    out: dict[str, int] = {}
    for r in reg:
        for side in r.sides:
            out[side] = out.get(side, 0) + 1
    return out

