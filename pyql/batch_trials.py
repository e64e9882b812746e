"""Trying candidate steps without keeping them: one by one (:func:`trial`), or many in one KB query (:class:`StepChecker`).

The choose mode (:mod:`pyql.next_steps`) offers only steps that run. A
trial runs a step on the environment and undoes it: one KB query (or more)
per candidate. The checker gets the same verdicts for most steps from one
bounded query for a whole batch:

1. each candidate is *dry-run* (:func:`dry_run`): the environment parses it,
   converts its arguments, asks the analyzer (ERASER) before it runs and
   builds its query exactly as a trial does, but the KB's ``observe`` only
   keeps the query (it sends nothing);
2. the queries of the batch go to the KB as one UNION of their own bounded
   probes (:func:`pyql.kb.probes.candidates_query`: each one's first few rows
   with every observed variable bound, with labels, ``LIMIT`` per branch);
3. a step whose query gives rows is kept, with its first values as the
   preview; one whose query gives none fails as its trial would (an empty
   result fails a step: ERASER's ``empty_result`` and the rules it falls back
   from, or ``undo_empty`` without an analyzer); a yes/no comparison is kept
   either way (its answer is its preview).

Where the batch cannot tell what the trial would say, the candidate is
tried after all: a step of another kind (:data:`BATCHED_ACTIONS`: MarkQA's
quantities and arithmetic), a ``set_answer`` or ``execute()`` whose sampled
values are all unnamed nodes (ERASER's ``answer_unnamed_node`` and
``execute_unnamed_answer`` read the step's own result), an empty
``execute()`` (an agent may insist on an empty answer), an empty result on
an environment that keeps empty results, and every candidate of a batch
the engine rejected.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.sparql_environment import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    >>> checker = StepChecker(env)
    >>> good = "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)"
    >>> bad = "add_fact(m.0crbvqz, meteorology.tropical_cyclone_season.tropical_cyclones, ?s)"
    >>> before = env.kb.stats.queries
    >>> checker.check([good, bad])
    >>> checker.verdict(good).preview, checker.verdict(bad), env.kb.stats.queries - before, env.query.steps
    ('?c = Tropical storm (SSHS)', None, 1, ())
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyql.errors import PyQLError
from pyql.kb import probes
from pyql.observation import Observation, ResultSet, Value, VariableValues
from pyql.terms import XSD, Literal

__all__ = ["BATCHED_ACTIONS", "BATCH_SIZE", "Verdict", "StepChecker", "dry_run", "preview_of", "trial"]

#: The actions whose verdict a batched query gives (the others are tried one by one).
BATCHED_ACTIONS = frozenset(
    {
        "add_fact", "add_type_constrain", "add_filter", "add_time_constrain", "add_max", "add_min",
        "add_compare", "add_count", "add_sum", "add_avg", "set_answer", "execute",
    }
)
#: Candidates one batched query checks at most (its text grows with them; each branch is bounded).
BATCH_SIZE = 48


def _snapshot(env: Any) -> tuple[Any, ...]:
    memory = env.memory
    fields = {f.name: _copy(getattr(memory, f.name)) for f in dataclasses.fields(memory)}
    outcomes = getattr(env, "_outcomes", None)
    kept = {k: list(v) for k, v in outcomes.items()} if isinstance(outcomes, dict) else None
    return (env.query, env.done, env.final, len(env.history), fields, kept)


def _copy(value: Any) -> Any:
    if isinstance(value, (dict, list, set)):
        return type(value)(value)
    return value


def _restore(env: Any, saved: tuple[Any, ...]) -> None:
    query, done, final, history, fields, outcomes = saved
    env.query, env.done, env.final = query, done, final
    del env.history[history:]
    for name, value in fields.items():
        setattr(env.memory, name, value)
    if outcomes is not None:
        env._outcomes = outcomes


def trial(env: Any, action: str) -> Any:
    """Run ``action`` on the environment and undo it: the step's record, the episode unchanged.

    The KB queries it sent stay counted in the environment's counters. A
    tried step's observation skips the look-up of quantities' units and
    times (``describe_quantities``): only whether the step runs matters.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.sparql_environment import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> trial(env, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)").ok, env.query.steps
        (True, ())
    """
    saved = _snapshot(env)
    describe = getattr(env, "describe_quantities", None)
    if describe is not None:
        env.describe_quantities = False
    try:
        return env.step(action)
    finally:
        _restore(env, saved)
        if describe is not None:
            env.describe_quantities = describe


class _Recorder:
    """A KB whose ``observe`` and ``execute`` keep the query and answer "some rows" without sending it; the rest is the KB's own."""

    def __init__(self, kb: Any) -> None:
        self._kb = kb
        self.queries: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kb, name)

    def observe(self, query: Any, *args: Any, **kwargs: Any) -> Observation:
        self.queries.append(query)
        if query.is_ask:
            return Observation((), boolean=True)
        return Observation(tuple(VariableValues(v, (), 1) for v in probes.observed_variables(query)))

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> ResultSet:
        self.queries.append(query)
        if query.is_ask:
            return ResultSet((), boolean=True)
        variables = tuple(probes.observed_variables(query))
        stand_in = Value(Literal("1", XSD + "integer"))
        return ResultSet(variables, ({v.name: stand_in for v in variables},))


def dry_run(env: Any, action: str) -> tuple[Any, Any]:
    """The step's record and the query its observation would read (None when it fails before), nothing sent for it.

    The environment runs ``action`` as :func:`trial` does (parsing, ERASER's
    rules before the step, building the query; what those read from the KB
    is read), but its KB's ``observe`` only keeps the query. The episode is
    left as it was.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.sparql_environment import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> record, query = dry_run(env, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
        >>> record.ok, [str(v) for v in query.variables], env.kb.stats.queries, env.query.steps
        (True, ['?c'], 0, ())
        >>> dry_run(env, "add_max(?nothing)")[1] is None
        True
    """
    saved = _snapshot(env)
    real = env.kb
    recorder = _Recorder(real)
    env.kb = recorder
    try:
        record = env.step(action)
    finally:
        env.kb = real
        _restore(env, saved)
    ran = record.ok and len(recorder.queries) == 1
    return record, recorder.queries[0] if ran else None


@dataclass(frozen=True)
class Verdict:
    """What a check says of one candidate: whether it runs, and the start of its result.

    Attributes:
        ok: whether the step runs without an error (its trial would keep it).
        preview: the first values of its new variables (or the answer, ``yes``/``no``).
    """

    ok: bool
    preview: str = ""


def preview_of(cells: Sequence[dict[str, Value]], variables: Sequence[Any], before: set[str], boolean: bool | None, limit: int) -> str:
    """A short view of a batch's rows for one candidate: the new variables' first values (else all), or yes/no.

    Up to three values a variable, ``+more`` when the batch saw a fourth (it reads no count).

    Example:
        >>> from pyql.terms import IRI, Variable
        >>> cells = [{"c": Value(IRI("http://x/a"), "A")}, {"c": Value(IRI("http://x/b"), "B")}]
        >>> preview_of(cells, [Variable("c")], set(), None, 60)
        '?c = A, B'
    """
    if boolean is not None:
        return "yes" if boolean else "no"
    shown = [v for v in variables if str(v) not in before] or list(variables)
    parts = []
    for var in shown:
        values = list(dict.fromkeys(c[var.name] for c in cells if var.name in c))
        if values and all(v.unnamed for v in values):
            parts.append(f"{var} = unnamed nodes")
            continue
        names = [x.label if x.label else x.display() for x in values[:3]]
        parts.append(f"{var} = {', '.join(names)}{' +more' if len(values) > 3 else ''}")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


class StepChecker:
    """Verdicts on candidate steps of one environment state, checked in batches (see the module docstring).

    Args:
        env: a :class:`~pyql.sparql_environment.SparqlEnvironment`; its state must not change while the checker is used.
        before: the variables that existed before the step (the preview shows the new ones).
        preview_chars: characters of a preview at most.
        batch: False: every candidate is tried one by one (:func:`trial`), as before batches.
    """

    def __init__(self, env: Any, before: Iterable[str] = (), preview_chars: int = 60, batch: bool = True) -> None:
        self.env = env
        self.before = set(before)
        self.preview_chars = preview_chars
        self.batch = batch
        self._verdicts: dict[str, Verdict] = {}

    def verdict(self, action: str) -> Verdict | None:
        """The verdict on one step (checked now when no batch did): a kept step's Verdict, None when it fails."""
        found = self._verdicts.get(action)
        if found is None:
            record = trial(self.env, action)
            found = self._verdicts[action] = Verdict(record.ok, _record_preview(record, self.before, self.preview_chars))
        return found if found.ok else None

    def check(self, actions: Iterable[str]) -> None:
        """Check these steps in batches of at most :data:`BATCH_SIZE` (steps of other kinds are left to :meth:`verdict`)."""
        if not self.batch:
            return
        wanted = [a for a in dict.fromkeys(actions) if a not in self._verdicts and a.split("(", 1)[0].strip() in BATCHED_ACTIONS]
        built: list[tuple[str, Any]] = []
        for action in wanted:
            record, query = dry_run(self.env, action)
            if query is None:
                if not record.ok:  # it fails before it runs, as its trial would
                    self._verdicts[action] = Verdict(False)
                continue
            built.append((action, query))
        for start in range(0, len(built), BATCH_SIZE):
            self._check_batch(built[start : start + BATCH_SIZE])

    def _check_batch(self, batch: Sequence[tuple[str, Any]]) -> None:
        """One query for the batch; the candidates it cannot decide are left to their trials."""
        kb = self.env.kb
        try:
            text, observed = probes.candidates_query([q for _, q in batch])
            found = probes.read_candidates(kb.select(text), observed, kb.value)
        except PyQLError:
            return  # the engine rejected the batch (or timed out): each candidate is tried on its own
        for (action, query), cells, variables in zip(batch, found, observed):
            decided = self._decide(action, query, cells, variables)
            if decided is not None:
                self._verdicts[action] = decided

    def _decide(self, action: str, query: Any, cells: list[dict[str, Value]], variables: Sequence[Any]) -> Verdict | None:
        """The verdict a batch's rows give one candidate (None: only its trial can tell)."""
        if query.is_ask:
            return Verdict(True, preview_of(cells, variables, self.before, bool(cells), self.preview_chars))
        finish = action.startswith("execute")
        if not cells:  # an empty execute() may be taken at its word (ERASER's insists_on_execute): its trial says
            rejects_empty = self.env.analyzer is not None or self.env.undo_empty
            return Verdict(False) if rejects_empty and not finish else None
        if finish or action.startswith("set_answer"):
            answers = [c[variables[0].name] for c in cells if variables[0].name in c]
            if all(a.unnamed for a in answers):  # ERASER's unnamed-answer rules read the step's own result
                return None
        return Verdict(True, preview_of(cells, variables, self.before, None, self.preview_chars))


def _record_preview(record: Any, before: set[str], limit: int) -> str:
    """A short view of a tried step's result: the new variables' first values (else all), or the answer."""
    result = record.result
    if not record.ok:
        return ""
    if isinstance(result, Observation):
        if result.boolean is not None:
            return "yes" if result.boolean else "no"
        shown = [v for v in result.variables if str(v.variable) not in before] or list(result.variables)
        parts = []
        for var in shown:
            if var.all_unnamed:
                parts.append(f"{var.variable} = {var.total} unnamed node{'s' if var.total != 1 else ''}")
                continue
            names = [x.label if x.label else x.display() for x in var.values[:3]]
            more = f" +{var.total - len(names)}" if var.total > len(names) else ""
            parts.append(f"{var.variable} = {', '.join(names)}{more}")
        text = "; ".join(parts)
    else:
        text = record.observation
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."
