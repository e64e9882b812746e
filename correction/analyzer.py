"""ERASER, the analyzer: checks the registered rules on each step, in order.

An :class:`Eraser` is the ``analyzer`` of an environment
(:class:`~pyql.environment.Analyzer` protocol). The environment calls it
before an action runs (``record.phase == "before"``) and after
(``"after"``). It checks the rules of the environment's side that run in
that phase, interpreter rules first, then memory rules, then KB rules; the
first *error* rule that fires wins: its guideline becomes the step's
observation, its id the step's ``error``, and the environment undoes the
step (Algorithm 1). When only *advice* rules fire (the step skipped a look,
see :data:`correction.registry.KINDS`), the first one's verdict is advice:
the environment makes the look, asks again, and runs the step with the
advice as a note. When nothing fires, the observation is the execution result.

Guidelines are worded for their ``audience``: an ``"agent"`` (an LLM writing
Thought/Action pairs: "Please re-generate only Thought N and Action N.") or
a ``"user"`` running actions by hand (``pyql run``: "Correct this action and
run it again.").

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> eraser = Eraser()
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=eraser)
    >>> rec = env.step("get_relation(?stream)")
    >>> rec.error
    'unbound_variable'
    >>> print(rec.observation)
    You cannot query for the relations of ?stream because no step has created it (it is not bound to anything). You need to first query for one of: get_relation(m.0crbvqz). Please re-generate only Thought 2 and Action 2.
    >>> eraser.stats.counts["unbound_variable"]
    1
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any, Iterable

from correction.errors import EraserError  # noqa: F401 (defined in correction/errors.py)
from correction.facts import env_side, facts, kb_side
from correction.guidelines import renderer
from correction.registry import Registry, Rule
from correction.registry import registry as default_registry
from correction.stats import TriggerStats
from grammars.vocabulary import FEEDBACK_MODES
from pyql.environment import Feedback

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord

__all__ = ["Eraser", "EraserError", "RuleBudgetWarning", "eraser_for", "FEEDBACK_MODES", "AUDIENCES"]

#: Who reads the guidelines: an LLM agent, or a user running actions (``pyql run``).
AUDIENCES: tuple[str, ...] = ("agent", "user")



class RuleBudgetWarning(UserWarning):
    """A rule's trigger sent more KB queries than it declares (a bug in the rule)."""


class Eraser:
    """The environment-feedback self-correction analyzer.

    Args:
        disabled: rule ids to switch off (e.g. ``{"filter_empty"}``).
        max_choices: most choices a guideline lists (relations, variables, entities).
        registry: the rules to check (default: the built-in registry, SQL rules included).
        audience: "agent" (guidelines end "Please re-generate only Thought N and
            Action N.") or "user" (``pyql run``: no thoughts to re-generate).

    Raises:
        UnknownRuleError: an id in ``disabled`` is not registered (the message lists the ids).
        EraserError: ``max_choices`` is below 1, or an unknown audience.

    Example:
        >>> Eraser(disabled={"filter_empty"}).disabled
        frozenset({'filter_empty'})
        >>> Eraser(disabled={"no_such_rule"})
        Traceback (most recent call last):
        ...
        correction.errors.UnknownRuleError: unknown ERASER rule id(s) no_such_rule; registered rules: ...
    """

    def __init__(
        self,
        disabled: Iterable[str] = (),
        max_choices: int = 10,
        registry: Registry | None = None,
        audience: str = "agent",
    ) -> None:
        self.registry = registry if registry is not None else default_registry
        self.disabled = self.registry.check_ids(disabled)
        if not isinstance(max_choices, int) or max_choices < 1:
            raise EraserError(f"max_choices must be a whole number ≥ 1, got {max_choices!r}")
        if audience not in AUDIENCES:
            raise EraserError(f"unknown audience {audience!r}; use one of {', '.join(AUDIENCES)}")
        self.max_choices = max_choices
        self.audience = audience
        self.stats = TriggerStats()
        self._renderer = renderer(max_choices)
        self._last_record: Any = None
        self._fired: set[str] = set()
        self._rules: dict[tuple[str, str], tuple[tuple[Rule, ...], list[Rule]]] = {}

    def __repr__(self) -> str:
        return f"Eraser(disabled={sorted(self.disabled)!r}, max_choices={self.max_choices}, audience={self.audience!r})"

    def rules(self, side: str, phase: str) -> list[Rule]:
        """The enabled rules checked for a side in a phase, in order.

        Example:
            >>> [r.id for r in Eraser().rules("sparql", "before")][:3]
            ['no_action', 'multiple_actions', 'syntax_error']
        """
        ordered = self.registry.ordered(side, phase)
        cached = self._rules.get((side, phase))
        if cached is None or cached[0] is not ordered:  # the registry changed (e.g. SQL rules registered)
            cached = (ordered, [r for r in ordered if r.id not in self.disabled])
            self._rules[(side, phase)] = cached
        return cached[1]

    def __call__(self, record: StepRecord, env: Environment) -> Feedback | None:
        """Check the rules on a step; the first that fires gives the feedback."""
        start = time.perf_counter()
        if record is not self._last_record:
            self._last_record = record
            self._fired = set()
            self.stats.steps += 1
        try:
            return self._check(record, env)
        finally:
            self.stats.seconds += time.perf_counter() - start

    def _check(self, record: StepRecord, env: Environment) -> Feedback | None:
        side = env_side(env)
        kb_env = kb_side(env)
        kb_stats = kb_env.kb.stats if kb_env is not None else None
        advice: tuple[Rule, dict[str, Any]] | None = None
        for found in self.rules(side, record.phase):
            if found.actions is not None and record.action not in found.actions:
                continue
            if found.env == "memory" and record.exception is not None:
                continue
            before = kb_stats.queries if kb_stats is not None else 0
            context = found.trigger(record, env)
            sent = (kb_stats.queries - before) if kb_stats is not None else 0
            if sent:
                self.stats.kb_queries[found.id] += sent
                if sent > found.kb_queries:
                    self.stats.over_budget[found.id] += 1
                    warnings.warn(
                        f"ERASER rule {found.id} sent {sent} KB queries but declares {found.kb_queries}",
                        RuleBudgetWarning,
                        stacklevel=2,
                    )
            if context is None:
                continue
            if found.kind == "advice":
                if advice is None:
                    advice = (found, context)
                continue  # an error found later still blocks the step
            self._count(found.id)
            return Feedback(found.id, self.guideline(found, record, env, context), looks=tuple(context.get("looks", ())))
        if advice is not None:
            found, context = advice
            if self._count(found.id):
                self.stats.advice[found.id] += 1
            return Feedback(
                found.id, self.guideline(found, record, env, context), advice=True, looks=tuple(context.get("looks", ()))
            )
        return None

    def _count(self, rule_id: str) -> bool:
        """Count a rule once per step, however often the environment asks again after a look."""
        if rule_id in self._fired:
            return False
        self._fired.add(rule_id)
        self.stats.record(rule_id)
        return True

    def guideline(self, found: Rule, record: StepRecord, env: Environment, context: dict[str, Any]) -> str:
        """Render a rule's guideline for a step (the trigger's context plus the step's own fields).

        Every template sees ``step`` (this step's number), ``next_step``,
        ``action``, ``signature``, ``text`` (the action as written) and
        ``audience`` ("agent" or "user").

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> from correction import registry
            >>> env = SparqlEnvironment(KB.open("demo"))
            >>> rec = env.step("add_max(?t)")
            >>> Eraser().guideline(registry.get("query_error"), rec, env, {"message": "boom", "text": "add_max(?t)", "done": False})
            'add_max(?t) cannot be run: boom. Please re-generate only Thought 2 and Action 2.'
        """
        f = facts(record, env)
        common = {
            "step": record.index,
            "next_step": f.next_step,
            "action": record.action or "",
            "signature": f.signature,
            "text": record.call.text if record.call is not None else record.text.strip(),
            "audience": self.audience,
        }
        return self._renderer.render(found.template, **{**common, **context})

    def check(self, rule_id: str, record: StepRecord, env: Environment) -> Feedback | None:
        """Run one rule on a step, ignoring order and ``disabled`` (for tests and tools).

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"))
            >>> rec = env.step("add_fact(?x, ?y)")
            >>> Eraser().check("wrong_arity", rec, env).rule_id
            'wrong_arity'
        """
        found = self.registry.get(rule_id)
        context = found.trigger(record, env)
        if context is None:
            return None
        return Feedback(
            found.id,
            self.guideline(found, record, env, context),
            advice=found.kind == "advice",
            looks=tuple(context.get("looks", ())),
        )


def eraser_for(name: str, **options: Any) -> Eraser | None:
    """The analyzer for a ``--feedback`` mode of ``pyql run``.

    Args:
        name: "eraser" (targeted guidelines), "raw" (no analyzer: the
            environment reports raw errors and undoes empty results) or "none".
        **options: passed to :class:`Eraser` (``disabled``, ``max_choices``, ``audience``).

    Raises:
        EraserError: for an unknown mode.

    Example:
        >>> type(eraser_for("eraser")).__name__, eraser_for("raw")
        ('Eraser', None)
    """
    if name == "eraser":
        return Eraser(**options)
    if name in ("raw", "none"):
        return None
    raise EraserError(f"unknown feedback mode {name!r}; use one of {', '.join(FEEDBACK_MODES)}")

