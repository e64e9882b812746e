"""The step environment: run one action at a time, keep it or undo it.

An environment holds a backend (a KB, or a table on the SQL side), the
question and its linked entities, the query being built, the history and a
reasoning memory. :meth:`Environment.step` runs one action (Algorithm 1 of
the QueryAgent paper): parse → validate → execute → observation. Every step
leaves a :class:`StepRecord` with everything a correction rule may need: the
parsed call, the converted arguments, the exception if any, the KB result
(even of a step that is then undone), the query before and after, and the
KB queries and time it cost.

A step that fails (parse error, bad arguments, engine error, and, when no
analyzer decides otherwise, an empty result) leaves the query as it was and
says why. An *analyzer* (ERASER, in :mod:`correction`) may look at each
record and the memory and turn it into a targeted guideline; the step is
then undone and the guideline is the observation.

Example:
    >>> from pyql.kb import KB
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> env.step("get_relation(m.0crbvqz)").ok
    True
    >>> r = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    >>> r.ok, r.observation
    (True, "The value of variable ?category is ['Tropical storm (SSHS)' (m.05f4r3k)]")
    >>> env.step("add_fact(?x, ?y)").error
    'wrong_arity'
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol

from pyql.action_parser import ActionCall, Arg, extract_action, parse_action
from pyql.actions import ActionSet, StepResult
from pyql.errors import ParseError, PyQLError, QueryError
from pyql.observation import Observation, Relations, ResultSet, Value
from pyql.sparql_actions import SparqlActions
from pyql.terms import IRI, Literal, Variable

__all__ = [
    "StepRecord",
    "Memory",
    "Feedback",
    "Analyzer",
    "Environment",
    "SparqlEnvironment",
    "error_kind",
]


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

    def to_json(self) -> dict[str, Any]:
        """The line ``pyql run --json`` prints for this step.

        Example:
            >>> StepRecord(1, "execute()", ok=True, observation="x").to_json()
            {'step': 1, 'action': 'execute()', 'ok': True, 'error': None, 'observation': 'x'}
        """
        return {
            "step": self.index,
            "action": self.call.text if self.call is not None else self.text,
            "ok": self.ok,
            "error": self.error,
            "observation": self.observation,
        }


@dataclass
class Memory:
    """The reasoning memory: what accepted steps established.

    Attributes:
        entities: linked entities of the question, name → id as written (``m.0crbvqz``).
        seen: ids that appeared in accepted results (values of variables).
        variables: variable name (with ``?``) → index of the step that created it.
        relations: ``get_relation`` results, by argument (``m.0crbvqz`` or ``?x``).
        steps: the accepted steps.
    """

    entities: dict[str, str] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    variables: dict[str, int] = field(default_factory=dict)
    relations: dict[str, Relations] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)

    @property
    def linked_ids(self) -> set[str]:
        return set(self.entities.values())

    def known_relations(self) -> set[str]:
        """Every relation returned by an accepted ``get_relation``."""
        out: set[str] = set()
        for rels in self.relations.values():
            out.update(rels.all())
        return out


@dataclass(frozen=True)
class Feedback:
    """An analyzer's verdict: which rule fired and the guideline to show."""

    rule_id: str
    guideline: str


class Analyzer(Protocol):
    """Looks at a step and may turn it into a guideline.

    It is called at most twice per step, with ``record.phase`` set:
    ``"before"`` once the action is parsed and its arguments converted (or
    as soon as parsing/validation failed, with ``record.exception`` set), so
    rules on the interpreter and the memory can stop a step before it costs
    a KB query; and ``"after"`` the action ran (``record.result`` set, or
    ``record.exception`` for an engine or query error). The first verdict
    that is not None wins, and the step is undone.
    """

    def __call__(self, record: StepRecord, env: Environment) -> Feedback | None: ...


def error_kind(exc: BaseException) -> str:
    """The machine-readable kind of an exception (``kind`` of pyql errors).

    Example:
        >>> error_kind(QueryError("x"))
        'bad_query'
    """
    return getattr(exc, "kind", "internal_error")


class Environment:
    """Base step environment; see :class:`SparqlEnvironment` and the SQL twin.

    Args:
        actions: the action set (what may be called).
        question: the natural-language question, if any.
        entities: linked entities, name → id.
        analyzer: a correction analyzer (ERASER); None means built-in failure handling only.
        undo_empty: without an analyzer, whether an empty result fails the step.

    Attributes:
        side: which kind of environment this is ("sparql", "sql", ...); a
            correction analyzer uses it to pick the rules that apply.
    """

    side: ClassVar[str] = "generic"

    def __init__(
        self,
        actions: ActionSet,
        question: str | None = None,
        entities: Mapping[str, str] | None = None,
        analyzer: Analyzer | None = None,
        undo_empty: bool = True,
    ) -> None:
        self.actions = actions
        self.question = question
        self.memory = Memory(entities=dict(entities or {}))
        self.analyzer = analyzer
        self.undo_empty = undo_empty
        self.history: list[StepRecord] = []
        self.query: Any = self.empty_query()
        self.done = False
        self.final: Any = None
        self.started = time.perf_counter()
        self._baseline = self.backend_counters()

    # -- to override --------------------------------------------------------
    def empty_query(self) -> Any:
        """The query an episode starts with."""
        raise NotImplementedError

    def backend_counters(self) -> tuple[int, float]:
        """(queries sent, seconds spent) by the backend so far."""
        return (0, 0.0)

    def convert(self, param_kind: str, arg: Arg, action: str, name: str, position: int) -> Any:
        """Convert one parsed argument for a parameter kind (raise ArgumentError)."""
        raise NotImplementedError

    def remember(self, record: StepRecord) -> None:
        """Update the memory with an accepted step (subclasses add more)."""
        for value in _values_of(record.result):
            if isinstance(value.term, IRI):
                self.memory.seen.add(value.short)

    def answers(self) -> list[Value]:
        """The answers after ``execute()`` (empty before)."""
        return []

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
        """
        index = len(self.history) + 1
        record = StepRecord(index=index, text=text.text if isinstance(text, ActionCall) else text)
        record.query_before = self.query
        queries0, seconds0 = self.backend_counters()
        feedback: Feedback | None = None
        try:
            if self.done:
                raise QueryError("the query was already executed; the episode is over")
            call = text if isinstance(text, ActionCall) else _parse(text, index)
            record.call = call
            record.action = call.name
            args = self.arguments(call)
            spec = self.actions.check_arity(call.name, len(args))
            converted: dict[str, Any] = {}
            for position, (param, arg) in enumerate(zip(spec.params, args)):
                converted[param.name] = self.convert(param.kind, arg, call.name, param.name, position)
            record.args = converted
            feedback = self._analyze(record, "before")
            if feedback is None:
                record.phase = "after"
                outcome: StepResult = self.actions.method(call.name)(self, **converted)
                record.result = outcome.result
                record.query_after = outcome.query
                record.empty = outcome.empty
                record.done = outcome.done
                record.observation = outcome.observation
        except PyQLError as exc:
            record.exception = exc
        queries1, seconds1 = self.backend_counters()
        record.kb_queries = queries1 - queries0
        record.seconds = seconds1 - seconds0
        if feedback is None:
            feedback = self._analyze(record, record.phase)
        if feedback is not None:
            record.ok = False
            record.error = feedback.rule_id
            record.guideline = feedback.guideline
            record.observation = feedback.guideline
        elif record.exception is not None:
            record.ok = False
            record.error = error_kind(record.exception)
            record.observation = f"Error: {record.exception}"
        elif record.empty and self.analyzer is None and self.undo_empty:
            record.ok = False
            record.error = "empty_result"
            record.observation = (
                f"{record.action} gives an empty result, so the step was undone: {record.observation}"
            )
        else:
            record.ok = True
        if record.ok:
            if record.query_after is not None:
                self.query = record.query_after
            self.remember(record)
            self.memory.steps.append(record)
            if record.done:
                self.done = True
                self.final = record.result
        self.history.append(record)
        return record

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


def _parse(text: str, index: int) -> ActionCall:
    stripped = text.strip()
    try:
        return parse_action(stripped)
    except ParseError:
        return extract_action(text, step=index)


def _values_of(result: Any) -> Iterable[Value]:
    if isinstance(result, Observation):
        for var in result.variables:
            yield from var.values
    elif isinstance(result, ResultSet):
        for row in result.rows:
            for value in row.values():
                if value is not None:
                    yield value


# ---------------------------------------------------------------------------
# The SPARQL environment
# ---------------------------------------------------------------------------

class SparqlEnvironment(Environment):
    """The step environment on a knowledge base.

    Args:
        kb: the knowledge base.
        question: the question, if any.
        entities: linked entities, name → id (``{"Tropical Storm Rachel": "m.0crbvqz"}``).
        analyzer: a correction analyzer (ERASER), or None.
        actions: restrict to these action names (default: all).
        relation_ranker: called with (question, relations) when a relation
            list is longer than ``max_relations``; returns the relations to keep.
        max_relations: relations shown per direction before ranking applies (default 40).
        max_answers: answers returned by ``execute()`` at most.
    """

    side: ClassVar[str] = "sparql"

    def __init__(
        self,
        kb: Any,
        question: str | None = None,
        entities: Mapping[str, str] | None = None,
        analyzer: Analyzer | None = None,
        actions: Iterable[str] | None = None,
        relation_ranker: Callable[[str | None, list[str]], list[str]] | None = None,
        max_relations: int = 40,
        max_answers: int = 1000,
        undo_empty: bool = True,
    ) -> None:
        self.kb = kb
        self.relation_ranker = relation_ranker
        self.max_relations = max_relations
        self.max_answers = max_answers
        super().__init__(SparqlActions(actions), question, entities, analyzer, undo_empty)

    def empty_query(self) -> Any:
        from pyql.query import Query

        return Query(self.kb.profile)

    def backend_counters(self) -> tuple[int, float]:
        return (self.kb.stats.queries, self.kb.stats.seconds)

    def convert(self, param_kind: str, arg: Arg, action: str, name: str, position: int) -> Any:
        return self.actions.convert(self, param_kind, arg, action, name, position)

    def remember(self, record: StepRecord) -> None:
        super().remember(record)
        if isinstance(record.result, Relations) and record.call is not None and record.call.args:
            self.memory.relations[_key(record.args.get("entity_or_variable"), self.kb.profile)] = record.result
        if record.query_after is not None:
            for var in record.query_after.variables:
                self.memory.variables.setdefault(str(var), record.index)

    def answers(self) -> list[Value]:
        if isinstance(self.final, ResultSet):
            return self.final.answers()
        return []

    def final_json(self) -> dict[str, Any]:
        """The last line of ``pyql run --json``: answers and the SPARQL."""
        if isinstance(self.final, ResultSet) and self.final.boolean is not None:
            answers = [{"value": "yes" if self.final.boolean else "no", "label": None}]
        else:
            answers = [v.to_dict() for v in self.answers()]
        return {"answers": answers, "sparql": self.query.sparql()}


def _key(term: Any, profile: Any) -> str:
    if isinstance(term, Variable):
        return str(term)
    if isinstance(term, IRI):
        return profile.shorten(term.value)
    if isinstance(term, Literal):
        return term.lexical
    return str(term)

