"""The step environment on a knowledge base: the SPARQL side of the step kernel.

:class:`SparqlEnvironment` is a :class:`pyql.environment.Environment` whose
backend is a KB (:mod:`pyql.kb`), whose actions are
:class:`~pyql.sparql_actions.SparqlActions` and whose query is an immutable
:class:`~pyql.query.Query`. Its memory (:class:`SparqlMemory`) also keeps
what ``get_relation`` returned and the entities seen in accepted results.

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

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping

from pyql.environment import Analyzer, Environment, FinalResult, Memory, StepRecord
from pyql.observation import BoundedRows, Observation, Relations, ResultSet, Value
from pyql.query import Query
from pyql.sparql_actions import SparqlActions
from pyql.terms import IRI, Literal, Variable

__all__ = ["SparqlEnvironment", "SparqlMemory"]


@dataclass
class SparqlMemory(Memory):
    """The reasoning memory of a KB episode.

    Attributes:
        relations: ``get_relation`` results, by argument (``m.0crbvqz`` or ``?x``).

    Example:
        >>> SparqlMemory().known_relations()
        set()
    """

    relations: dict[str, Relations] = field(default_factory=dict)

    def known_relations(self) -> set[str]:
        """Every relation returned by an accepted ``get_relation``."""
        out: set[str] = set()
        for rels in self.relations.values():
            out.update(rels.all())
        return out


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
        undo_empty: without an analyzer, whether an empty result fails the step.
        count_cap: distinct values an observation counts exactly per
            variable (default: the KB's ``count_cap``, 1,000); beyond it
            "more than 1,000".
    """

    side: ClassVar[str] = "sparql"
    language: ClassVar[str] = "sparql"
    memory: SparqlMemory

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
        count_cap: int | None = None,
    ) -> None:
        self.kb = kb
        self.relation_ranker = relation_ranker
        self.max_relations = max_relations
        self.max_answers = max_answers
        self.count_cap = count_cap
        self._rows: BoundedRows | None = None
        super().__init__(SparqlActions(actions), question, entities, analyzer, undo_empty)

    @property
    def bounded_rows(self) -> BoundedRows | None:
        """All rows of the current query when they are bounded (after an argmax or a
        count) and the step that built it read them; the next step reuses them
        when it only changes the projection (``set_answer``, ``execute()``)."""
        return self._rows

    def new_memory(self, entities: dict[str, str]) -> SparqlMemory:
        return SparqlMemory(entities=entities)

    def empty_query(self) -> Query:
        return Query(self.kb.profile)

    def backend_counters(self) -> tuple[int, float]:
        return (self.kb.stats.queries, self.kb.stats.seconds)

    def remember(self, record: StepRecord) -> None:
        super().remember(record)
        if record.query_after is not None:
            self._rows = record.result.rows if isinstance(record.result, Observation) else None
        for value in _values_of(record.result):
            if isinstance(value.term, IRI):
                self.memory.seen.add(value.short)
        if isinstance(record.result, Relations) and record.call is not None and record.call.args:
            self.memory.relations[_key(record.args.get("entity_or_variable"), self.kb.profile)] = record.result

    def answers(self) -> list[Value]:
        """The answers after ``execute()`` (empty before)."""
        if isinstance(self.final, ResultSet):
            return self.final.answers()
        return []

    def final_result(self) -> FinalResult:
        """The answers (``yes``/``no`` for a comparison) and the SPARQL."""
        if isinstance(self.final, ResultSet) and self.final.boolean is not None:
            answers = [{"value": "yes" if self.final.boolean else "no", "label": None}]
        else:
            answers = [v.to_dict() for v in self.answers()]
        return FinalResult(answers, self.language, self.query.sparql())


def _values_of(result: Any) -> Iterable[Value]:
    if isinstance(result, Observation):
        for var in result.variables:
            yield from var.values
    elif isinstance(result, ResultSet):
        for row in result.rows:
            for value in row.values():
                if value is not None:
                    yield value


def _key(term: Any, profile: Any) -> str:
    if isinstance(term, Variable):
        return str(term)
    if isinstance(term, IRI):
        return profile.shorten(term.value)
    if isinstance(term, Literal):
        return term.lexical
    return str(term)
