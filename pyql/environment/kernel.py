"""The step kernel: run one action at a time, keep it or undo it.

This module is neutral: it knows nothing of SPARQL or SQL. Both twins stand
on it: :class:`pyql.environment.sparql.SparqlEnvironment` (a knowledge base)
and :class:`pyql_sql.environment.TableEnvironment` (a table) are
:class:`Environment` subclasses that supply an action set
(:class:`~pyql.environment.actions.ActionSet`), a query type (anything that offers the
:class:`StepQuery` protocol), their memory and their final result.

:meth:`Environment.step` runs one action (Algorithm 1 of the QueryAgent
paper): parse → validate → execute → observation. Every step leaves a
:class:`StepRecord` with everything a correction rule may need: the parsed
call, the converted arguments, the exception if any, the backend's result
(even of a step that is then undone), the query before and after, and the
backend queries and time it cost.

A step that fails (parse error, bad arguments, engine error, and, when no
analyzer decides otherwise, an empty result) leaves the query as it was and
says why. An *analyzer* (ERASER, in :mod:`correction`) is given when the
environment is built; it looks at each record and the memory and may turn
it into a targeted guideline; the step is then undone and the guideline is
the observation.

An analyzer's verdict may be *advice* (:attr:`Feedback.advice`: the step
skipped a look, e.g. ``add_fact`` before ``get_relation``) rather than an
error. Advice never blocks a step: the environment performs the skipped
looks itself (:meth:`Environment.look`, recorded in the memory as if the
step had made them), asks the analyzer again, and when no error is found
runs the step and appends the advice to its observation as a note. An
error verdict may name looks too (:attr:`Feedback.looks`): the environment
makes them and asks again, so the guideline can list what they found
(the relations an entity really has).

The same failed action again (:func:`normalized_action`; a reply with no
readable action repeats when it fails the same way, :func:`repeat_key`)
escalates (:attr:`StepRecord.escalation`): level 1 says it repeats a failed
step, level 2 also performs the suggested looks
(:meth:`Environment.suggested_looks`) and shows their result, level 3 and up
say not to write it again. Whatever failed counts: a reply that cannot be
read, a wrong arity, an argument that cannot be read, an analyzer's error, a
KB error. A step that succeeds but changes nothing (the same look again,
with the same result, the query as it was) is a repeat too
(:attr:`StepRecord.repeat_kind` ``"no_change"``). An agent stops a line of
action on its own cap (``AgentConfig.max_repeats``), reading
:attr:`StepRecord.repeats` and :attr:`StepRecord.repeat_kind`.

Example:
    >>> from pyql.environment.actions import ActionSet, StepResult, action
    >>> class Counter:
    ...     steps = (); variables = (); answer = None
    ...     def __init__(self, n=0): self.n = n
    ...     def undo(self): return Counter(self.n - 1)
    ...     def actions(self): return ["add()"] * self.n
    ...     def text(self): return f"count = {self.n}"
    >>> class CounterActions(ActionSet):
    ...     @action("construct")
    ...     def add(self, env):
    ...         '''Add one.'''
    ...         q = Counter(env.query.n + 1)
    ...         return StepResult(query=q, observation=q.text())
    >>> class CounterEnvironment(Environment):
    ...     side = language = "counter"
    ...     def empty_query(self): return Counter()
    >>> env = CounterEnvironment(CounterActions())
    >>> env.step("add()").observation, env.step("add(1)").error, env.final_json()
    ('count = 1', 'wrong_arity', {'answers': [], 'counter': 'count = 1'})
"""

from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Iterable, Mapping, Protocol, Sequence, TypeVar

from pyql.action_parser import ActionCall, Arg, extract_action, parse_action
from pyql.environment.actions import ActionSet, StepResult
from pyql.echo import ECHO_LIMIT, MESSAGE_LIMIT, clip, clip_echoes
from pyql.errors import ParseError, PyQLError, QueryError, RecordingDamaged

__all__ = [
    "StepQuery",
    "StepRecord",
    "Memory",
    "Feedback",
    "Analyzer",
    "FinalResult",
    "Environment",
    "error_kind",
    "normalized_action",
    "repeat_key",
    "ESCALATION_LEVELS",
    "NO_CHANGE",
]

#: An environment class (:meth:`Environment.fork` gives one of the same class).
E = TypeVar("E", bound="Environment")

#: The escalation levels of a repeated failed action (1: says so, 2: looks, 3: stop).
ESCALATION_LEVELS: tuple[int, ...] = (1, 2, 3)
#: The repeat kind of a step that succeeded again without changing anything.
NO_CHANGE = "no_change"


class StepQuery(Protocol):
    """What every query of the step kernel offers (a SPARQL :class:`~pyql.builder.query.Query`, a
    :class:`~pyql_sql.query.TableQuery`): its steps, undo, the action lines
    that build it, its variables, its answer and its text.
    """

    @property
    def steps(self) -> Sequence[Any]: ...

    @property
    def variables(self) -> Sequence[Any]: ...

    @property
    def answer(self) -> Any: ...

    def undo(self) -> Any: ...

    def actions(self) -> list[str]: ...

    def text(self) -> str: ...


@dataclass
class StepRecord:
    """Everything about one step, kept in the environment's history."""

    index: int
    text: str
    call: ActionCall | None = None
    action: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    exception: PyQLError | None = None
    result: Any = None
    empty: bool = False
    query_before: Any = None
    query_after: Any = None
    ok: bool = False
    error: str | None = None
    observation: str = ""
    guideline: str | None = None
    kb_queries: int = 0
    seconds: float = 0.0
    done: bool = False
    phase: str = "before"
    advice: str | None = None
    note: str | None = None
    looks: list[str] = field(default_factory=list)
    repeats: int = 0
    escalation: int = 0
    repeat_kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The line ``pyql run --json`` prints for this step (``advice``/``escalation`` only when set).

        Example:
            >>> StepRecord(1, "execute()", ok=True, observation="x").to_json()
            {'step': 1, 'action': 'execute()', 'ok': True, 'error': None, 'observation': 'x'}
            >>> StepRecord(2, "f()", error="wrong_arity", escalation=1).to_json()["escalation"]
            1
        """
        out: dict[str, Any] = {
            "step": self.index,
            "action": self.call.text if self.call is not None else self.text,
            "ok": self.ok,
            "error": self.error,
            "observation": self.observation,
        }
        if self.advice:
            out["advice"] = self.advice
        if self.escalation:
            out["escalation"] = self.escalation
        return out


@dataclass
class Memory:
    """The reasoning memory of an episode: what accepted steps established.

    Each side adds what its rules need (:class:`~pyql.environment.sparql.SparqlMemory`:
    the relations ``get_relation`` returned; ``TableMemory``: the columns looked at).

    Attributes:
        entities: linked entities of the question, name → id as written (``m.0crbvqz``).
        seen: ids that appeared in accepted results (values of variables).
        variables: variable name (with ``?``) → index of the step that created it.
        steps: the accepted steps.
        version: bumped whenever the memory changes (accepted steps, looks the
            environment made), so views computed from it know when to refresh.

    Example:
        >>> Memory(entities={"Jamaica": "m.03_r3"}).linked_ids
        {'m.03_r3'}
    """

    entities: dict[str, str] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    variables: dict[str, int] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)
    version: int = 0

    @property
    def linked_ids(self) -> set[str]:
        """The ids of the linked entities."""
        return set(self.entities.values())


@dataclass(frozen=True)
class Feedback:
    """An analyzer's verdict: which rule fired and the guideline to show.

    Attributes:
        rule_id: the rule that fired (the step's ``error`` when it blocks).
        guideline: the text to show.
        advice: process advice, not an error: the step skipped a look; it is
            not blocked (the environment makes the looks, then runs it and
            adds ``guideline`` as a note).
        looks: the arguments of the looks the step skipped or the guideline
            suggests (for a KB: the entities/variables to ``get_relation``).

    Example:
        >>> Feedback("fact_before_get_relation", "call get_relation first", advice=True).advice
        True
    """

    rule_id: str
    guideline: str
    advice: bool = False
    looks: tuple[Any, ...] = ()


class Analyzer(Protocol):
    """Looks at a step and may turn it into a guideline.

    It is called at most twice per step, with ``record.phase`` set:
    ``"before"`` once the action is parsed and its arguments converted (or
    as soon as parsing/validation failed, with ``record.exception`` set), so
    rules on the interpreter and the memory can stop a step before it costs
    a backend query; and ``"after"`` the action ran (``record.result`` set, or
    ``record.exception`` for an engine or query error). The first verdict
    that is not None wins, and the step is undone.
    """

    def __call__(self, record: StepRecord, env: Environment) -> Feedback | None: ...


@dataclass(frozen=True)
class FinalResult:
    """The outcome of an episode, the same shape on both sides.

    Attributes:
        answers: ``{"value": ..., "label": ...}`` per answer (empty before ``execute()``).
        language: the query language ("sparql", "sql").
        query: the final query's text in that language.

    Example:
        >>> FinalResult([{"value": "1", "label": None}], "sql", "SELECT 1").to_json()
        {'answers': [{'value': '1', 'label': None}], 'sql': 'SELECT 1'}
    """

    answers: list[dict[str, Any]]
    language: str
    query: str

    def to_json(self) -> dict[str, Any]:
        """The last line of ``pyql run --json``: the answers and the query under its language."""
        return {"answers": self.answers, self.language: self.query}


def error_kind(exc: BaseException) -> str:
    """The machine-readable kind of an exception (``kind`` of pyql errors).

    Example:
        >>> error_kind(QueryError("x"))
        'bad_query'
    """
    return getattr(exc, "kind", "internal_error")


class Environment:
    """The step environment; subclasses supply the backend (see the module docstring).

    Args:
        actions: the action set (what may be called).
        question: the natural-language question, if any.
        entities: linked entities, name → id.
        analyzer: a correction analyzer (ERASER), fixed for the environment's
            life; None means built-in failure handling only.
        undo_empty: without an analyzer, whether an empty result fails the step.
        run_advice: advice runs the step (the default); False blocks it like
            an error, as ERASER did before advice and errors were told apart
            (for ablations).
        escalate: a repeated failed action gets an escalating response (the
            default); False repeats the same guideline (for ablations).

    Attributes:
        side: which kind of environment this is ("sparql", "sql"); a
            correction analyzer uses it to pick the rules that apply.
        language: the language of its queries ("sparql", "sql").
    """

    side: ClassVar[str] = "generic"
    language: ClassVar[str] = "text"

    def __init__(
        self,
        actions: ActionSet,
        question: str | None = None,
        entities: Mapping[str, str] | None = None,
        analyzer: Analyzer | None = None,
        undo_empty: bool = True,
        *,
        run_advice: bool = True,
        escalate: bool = True,
    ) -> None:
        self.actions = actions
        self.run_advice = run_advice
        self.escalate = escalate
        self.question = question
        self.memory = self.new_memory(dict(entities or {}))
        self._analyzer = analyzer
        self._undo_empty = undo_empty
        self.history: list[StepRecord] = []
        self._outcomes: dict[str, list[tuple[int, str]]] = {}  # repeat key → (step, observation) of kept steps
        self.query: Any = self.empty_query()
        self.done = False
        self.final: Any = None
        self.started = time.perf_counter()
        self._baseline = self.backend_counters()
        #: what the episode has read of its backend and keeps (the backend does not change during an episode):
        #: shared by every fork of the episode, so a branch never asks again what another one read
        self.shared: dict[str, Any] = {}

    @property
    def analyzer(self) -> Analyzer | None:
        """The correction analyzer given when the environment was built (read-only)."""
        return self._analyzer

    @property
    def undo_empty(self) -> bool:
        """Whether an empty result fails a step when there is no analyzer (read-only)."""
        return self._undo_empty

    # -- to override --------------------------------------------------------
    def new_memory(self, entities: dict[str, str]) -> Memory:
        """The memory an episode starts with (subclasses return their own kind)."""
        return Memory(entities=entities)

    def empty_query(self) -> Any:
        """The query an episode starts with."""
        raise NotImplementedError

    def backend_counters(self) -> tuple[int, float]:
        """(queries sent, seconds spent) by the backend so far."""
        return (0, 0.0)

    def look(self, targets: Sequence[Any]) -> list[str]:
        """Perform looks for the agent (e.g. ``get_relation`` of each target), kept in the memory.

        Returns one line per look, saying what it found. The generic
        environment cannot look at anything and returns ``[]``.
        """
        return []

    def suggested_looks(self, record: StepRecord) -> list[Any]:
        """The looks that would help a failed step (the targets :meth:`look` takes); none here."""
        return []

    def convert(self, param_kind: str, arg: Arg, action: str, name: str, position: int) -> Any:
        """Convert one parsed argument for a parameter kind (raise ArgumentError)."""
        return self.actions.convert(self, param_kind, arg, action, name, position)

    def remember(self, record: StepRecord) -> None:
        """Update the memory with an accepted step (subclasses add more)."""
        self.memory.version += 1
        if record.query_after is not None:
            for var in record.query_after.variables:
                self.memory.variables.setdefault(str(var), record.index)

    def fork(self: E) -> E:
        """A copy of the episode to go on with apart: the same class, its own steps from here.

        What is read-only or a cache is shared (the action set, the analyzer,
        the backend and its counters, relations already read, what the
        episode keeps of what the backend said, :attr:`shared`); the small
        per-episode state is copied: the query (immutable, so shared as it
        is), ``done``, the final result, the history, the memory (every
        container in it, nested ones too) and the outcomes repeats are
        counted against, plus what a subclass keeps per episode
        (:meth:`fork_state`). Steps taken on one fork never show in the
        other: a step tried and dropped is a step on a fork (the choose
        mode's trials, :func:`pyql.environment.batch_trials.trial`), and a
        search runs each candidate on a fork of its own. The backend queries
        a fork sends are counted by the backend as any other (so a trial's
        queries stay in the episode's counters).

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
            >>> twin = env.fork()
            >>> twin.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)").ok
            True
            >>> len(twin.query.steps), len(twin.history), env.query.steps, len(env.history), type(twin).__name__
            (1, 1, (), 0, 'SparqlEnvironment')
        """
        twin = copy.copy(self)
        twin.history = list(self.history)
        twin.memory = copy.copy(self.memory)
        for f in fields(self.memory):
            setattr(twin.memory, f.name, _copy(getattr(self.memory, f.name)))
        twin._outcomes = _copy(self._outcomes)
        self.fork_state(twin)
        return twin

    def fork_state(self, twin: Any) -> None:
        """Copy into ``twin`` (a shallow copy of this environment, :meth:`fork`) the state a subclass keeps per episode.

        The kernel's own state is copied already; a subclass that keeps more
        (rows read, variables made, a table written) overrides this and
        copies what a step may change, in place or not.
        """

    def answers(self) -> list[Any]:
        """The answers after ``execute()``, as the backend gives them (empty before)."""
        return []

    def final_result(self) -> FinalResult:
        """The episode's answers (``{"value", "label"}``) and the final query's text."""
        return FinalResult([a.to_dict() for a in self.answers()], self.language, self.query.text())

    def final_json(self) -> dict[str, Any]:
        """The last line of ``pyql run --json``: answers and the query (see :class:`FinalResult`)."""
        return self.final_result().to_json()

    # -- running ------------------------------------------------------------
    @property
    def counters(self) -> dict[str, float]:
        """Steps run, backend queries sent, seconds in the backend."""
        queries, seconds = self.backend_counters()
        return {
            "steps": len(self.history),
            "kb_queries": queries - self._baseline[0],
            "kb_seconds": round(seconds - self._baseline[1], 6),
        }

    def arguments(self, call: ActionCall) -> list[Arg]:
        """The call's arguments as the action takes them (override to re-split text)."""
        return list(call.args)

    def step(self, text: str | ActionCall) -> StepRecord:
        """Run one action (a line, a whole LLM reply, or a parsed call).

        Returns:
            The step's record; ``record.ok`` says whether it was kept.

        Raises:
            pyql.errors.RecordingDamaged: the recording or KB cache answering the KB is damaged (any other
                error is the step's, in ``record.exception``).
        """
        record = StepRecord(index=len(self.history) + 1, text=text.text if isinstance(text, ActionCall) else text)
        record.query_before = self.query
        queries0, seconds0 = self.backend_counters()
        feedback: Feedback | None = None
        try:
            self._prepare(record, text)
            feedback = self._follow_looks(record, self._analyze(record, "before"))
            if feedback is None:
                self._execute(record)
        except RecordingDamaged:
            raise  # the user's recording or cache is damaged: the command stops; it is no step's error
        except PyQLError as exc:
            record.exception = exc
        queries1, seconds1 = self.backend_counters()
        record.kb_queries = queries1 - queries0
        record.seconds = seconds1 - seconds0
        if feedback is None:
            feedback = self._analyze(record, record.phase)
            if record.phase == "before" and feedback is not None and feedback.looks:
                feedback = self._follow_looks(record, feedback)  # a step that failed to parse or convert
                queries2, seconds2 = self.backend_counters()
                record.kb_queries, record.seconds = queries2 - queries0, seconds2 - seconds0
        self._judge(record, feedback)
        if record.ok:
            self._keep(record)
            self._count_unchanged(record)
        else:
            self._escalate(record)
        self.history.append(record)
        return record

    def _follow_looks(self, record: StepRecord, feedback: Feedback | None) -> Feedback | None:
        """Make the looks a verdict names, then ask the analyzer again (once).

        Advice does not block: after the skipped looks only an error found
        then stops the step. An error stays an error; when its looks taught
        the memory something new, the second verdict's guideline (which can
        now list what the looks found) replaces the first.
        """
        if feedback is None or not (feedback.advice or feedback.looks):
            return feedback
        if feedback.advice and not self.run_advice:
            return replace(feedback, advice=False, looks=())  # blocks, as before the split
        if feedback.advice:
            record.advice, record.note = feedback.rule_id, feedback.guideline
        version = self.memory.version
        if feedback.looks:
            record.looks = self.look(feedback.looks)
        if feedback.advice:
            again = self._analyze(record, "before")
            return None if again is None or again.advice else again
        if self.memory.version == version:
            return feedback
        again = self._analyze(record, "before")
        return again if again is not None and not again.advice else feedback

    def _escalate(self, record: StepRecord) -> None:
        """The same failed action again gets a stronger response (see the module docstring)."""
        key = repeat_key(record)
        if not key:
            return
        earlier = [r.index for r in self.history if not r.ok and repeat_key(r) == key]
        if not earlier:
            return
        record.repeats = len(earlier)  # counted either way: an agent's cap on repeats reads it
        record.repeat_kind = record.error
        if not self.escalate:
            return
        record.escalation = level = min(len(earlier), ESCALATION_LEVELS[-1])
        steps = ", ".join(str(i) for i in earlier)
        times = len(earlier) + 1
        if level == 1:
            record.observation = f"{key} already failed at step {steps}; it fails again the same way. {record.observation}"
        elif level == 2:
            looks = self.look(self.suggested_looks(record))
            record.looks = looks
            said = f"{key} has failed {times} times (steps {steps} and now)."
            if looks:
                record.observation = (
                    f"{said} The environment looked for you: {'; '.join(looks)}. "
                    "Write a different action with what it found."
                )
            else:
                record.observation = f"{said} Choose one of the candidates instead. {record.observation}"
        else:
            record.observation = (
                f"{key} has failed {times} times (steps {steps} and now): do not write it again. "
                "Choose a different action, or set_answer() and execute() with the query you have."
            )

    def _count_unchanged(self, record: StepRecord) -> None:
        """A kept step that gives an earlier step's result again and leaves the query as it was is a repeat.

        It counts like a failed repeat (:attr:`StepRecord.repeats`, kind
        :data:`NO_CHANGE`) and escalates: it says the step changes nothing,
        then not to write it again.
        """
        key = repeat_key(record)
        if not key or record.done or _changed(record):
            return
        seen = self._outcomes.setdefault(key, [])
        earlier = [i for i, said in seen if said == record.observation]
        seen.append((record.index, record.observation))
        if not earlier:
            return
        record.repeats, record.repeat_kind = len(earlier), NO_CHANGE
        if not self.escalate:
            return
        record.escalation = min(len(earlier), ESCALATION_LEVELS[-1])
        steps = ", ".join(str(i) for i in earlier)
        if record.escalation == 1:
            record.observation = f"{key} was already run at step {steps} with this result; it changes nothing. {record.observation}"
        else:
            record.observation = (
                f"{key} has given the same result {len(earlier) + 1} times (steps {steps} and now) and changes "
                "nothing: do not write it again. Choose a different action, or set_answer() and execute() with the query you have."
            )

    def _prepare(self, record: StepRecord, text: str | ActionCall) -> None:
        """Parse the action and convert its arguments (raises on the first problem)."""
        if self.done:
            raise QueryError("the query was already executed; the episode is over")
        call = text if isinstance(text, ActionCall) else _parse(text, record.index)
        record.call = call
        record.action = call.name
        args = self.arguments(call)
        spec = self.actions.check_arity(call.name, len(args))
        record.args = {
            param.name: self.convert(param.kind, arg, call.name, param.name, position)
            for position, (param, arg) in enumerate(zip(spec.params, args))
        }

    def _execute(self, record: StepRecord) -> None:
        """Run the prepared action and put its outcome in the record."""
        assert record.call is not None
        record.phase = "after"
        outcome: StepResult = self.actions.method(record.call.name)(self, **record.args)
        record.result = outcome.result
        record.query_after = outcome.query
        record.empty = outcome.empty
        record.done = outcome.done
        record.observation = outcome.observation

    def _judge(self, record: StepRecord, feedback: Feedback | None) -> None:
        """Decide whether the step is kept, and what its observation says.

        Advice (a rule that does not block) becomes a note after the
        observation. The observation repeats a long argument only by its
        beginning (:func:`pyql.echo.clip_echoes`), and an error or a guideline
        is at most :data:`pyql.echo.MESSAGE_LIMIT` characters.
        """
        if feedback is not None and feedback.advice and not self.run_advice:
            feedback = replace(feedback, advice=False)
        if feedback is not None and feedback.advice:
            record.advice, record.note = record.advice or feedback.rule_id, record.note or feedback.guideline
            feedback = None
        if feedback is not None:
            record.ok = False
            record.error = feedback.rule_id
            record.guideline = clip(self._unechoed(record, feedback.guideline), MESSAGE_LIMIT)
            record.observation = record.guideline
        elif record.exception is not None:
            record.ok = False
            record.error = error_kind(record.exception)
            record.observation = clip(self._unechoed(record, f"Error: {record.exception}"), MESSAGE_LIMIT)
        elif record.empty and self.analyzer is None and self.undo_empty:
            record.ok = False
            record.error = "empty_result"
            record.observation = self._unechoed(
                record, f"{record.action} gives an empty result, so the step was undone: {record.observation}"
            )
        else:
            record.ok = True
            record.observation = self._unechoed(record, record.observation)
            if record.note:
                record.observation = f"{record.observation} Note: {clip(self._unechoed(record, record.note), MESSAGE_LIMIT)}"

    @staticmethod
    def _unechoed(record: StepRecord, text: str) -> str:
        """``text`` with the step's long arguments (as written and as read) cut, see :mod:`pyql.echo`."""
        pieces: list[str] = []
        if record.call is not None:
            for arg in record.call.args:
                pieces += [arg.raw, arg.value]
            pieces += [str(value) for value in record.args.values()]
        else:
            pieces.append(record.text.strip())
        if not any(len(p) > ECHO_LIMIT for p in pieces):
            return text
        return clip_echoes(text, pieces)

    def _keep(self, record: StepRecord) -> None:
        """Make an accepted step part of the episode."""
        if record.query_after is not None:
            self.query = record.query_after
        self.remember(record)
        self.memory.steps.append(record)
        if record.done:
            self.done = True
            self.final = record.result

    def _analyze(self, record: StepRecord, phase: str) -> Feedback | None:
        if self.analyzer is None:
            return None
        record.phase = phase
        return self.analyzer(record, self)

    def run(self, lines: Iterable[str]) -> list[StepRecord]:
        """Run actions one by one until ``execute()`` or the end; blank lines are skipped."""
        out = []
        for line in lines:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            out.append(self.step(line))
            if self.done:
                break
        return out

    def undo(self) -> None:
        """Undo the last kept step that changed the query."""
        for record in reversed(self.memory.steps):
            if record.query_after is not None:
                self.memory.steps.remove(record)
                self.query = record.query_before
                return
        raise QueryError("there is no kept step to undo")


def normalized_action(record: StepRecord) -> str:
    """The action of a step as text that compares equal however it was spaced.

    Example:
        >>> normalized_action(StepRecord(1, "  add_fact( m.0a ,r.s.t,  ?x )"))
        'add_fact(m.0a, r.s.t, ?x)'
    """
    text = record.call.text if record.call is not None and record.call.text else record.text
    text = " ".join(text.strip().split())
    text = re.sub(r"\s*\(\s*", "(", text)
    text = re.sub(r"\s*\)", ")", text)
    return re.sub(r"\s*,\s*", ", ", text)


def repeat_key(record: StepRecord) -> str:
    """What must be the same for a step to repeat an earlier one.

    A step whose action was read repeats the same action
    (:func:`normalized_action`); a reply with no readable action repeats
    one that failed the same way (its text differs: a thought, a step number).

    Example:
        >>> repeat_key(StepRecord(1, "add_fact( m.0a ,r.s.t,  ?x )"))
        'add_fact(m.0a, r.s.t, ?x)'
        >>> repeat_key(StepRecord(3, "Thought 3: I am not sure.", error="no_action"))
        'a reply without a readable action (no_action)'
    """
    if record.call is None and record.error:
        return f"a reply without a readable action ({record.error})"
    return normalized_action(record)


def _changed(record: StepRecord) -> bool:
    """Whether a kept step changed the query."""
    after, before = record.query_after, record.query_before
    if after is None or after is before:
        return False
    if before is None:
        return True
    return bool(after.text() != before.text())


def _parse(text: str, index: int) -> ActionCall:
    stripped = text.strip()
    try:
        return parse_action(stripped)
    except ParseError:
        return extract_action(text, step=index)


def _copy(value: Any) -> Any:
    """A copy of the containers in a value (dicts, lists, sets, nested too), so a fork's steps never change another's;
    other values (records, results, queries: never changed once made) as they are.

    Example:
        >>> kept = {"a": [1, {2}]}
        >>> twin = _copy(kept)
        >>> twin["a"][1].add(3); twin["a"].append(4)
        >>> kept, twin
        ({'a': [1, {2}]}, {'a': [1, {2, 3}, 4]})
    """
    if isinstance(value, dict):
        out = copy.copy(value)  # its own kind (a Counter stays one)
        for key, item in value.items():
            out[key] = _copy(item)
        return out
    if isinstance(value, (list, set)):
        return type(value)(_copy(v) for v in value)
    return value
