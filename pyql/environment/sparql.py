"""The step environment on a knowledge base: the SPARQL side of the step kernel.

:class:`SparqlEnvironment` is a :class:`pyql.environment.Environment` whose
backend is a KB (:mod:`pyql.kb`), whose actions are
:class:`~pyql.environment.sparql_actions.SparqlActions` and whose query is an immutable
:class:`~pyql.builder.query.Query`. Its memory (:class:`SparqlMemory`) also keeps
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
    >>> env.look(["m.0crbvqz"])[0][:60]
    'get_relation(m.0crbvqz): forward: [meteorology.tropical_cycl'
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Iterator, Mapping, Sequence

from pyql.environment.candidates import Ranker, rank_relations
from pyql.environment import Analyzer, Environment, FinalResult, Memory, StepRecord
from pyql.errors import PyQLError
from pyql.kb.observation import BoundedRows, Observation, Relations, ResultSet, Value
from pyql.builder.query import Query
from pyql.environment.sparql_actions import SparqlActions
from pyql.builder.terms import IRI, Literal, Term, Variable

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
        actions: restrict to these action names (default: the KB profile's,
            :attr:`pyql.builder.profiles.Profile.action_names`: QueryAgent's set, and
            MarkQA's numeric actions too on a Wikidata-shaped KB).
        relation_ranker: called with (question, relations) when a relation
            list is longer than ``max_relations``; returns the relations to keep.
        max_relations: relations shown per direction before ranking applies (default 40).
        max_answers: answers returned by ``execute()`` at most.
        undo_empty: without an analyzer, whether an empty result fails the step.
        run_advice, escalate: see :class:`pyql.environment.Environment` (ablation switches).
        candidate_ranker: orders relations best first for the candidate lists
            of guidelines and looks (:func:`pyql.environment.candidates.rank_relations`);
            None: word overlap with the question.
        max_candidates: relations per direction a look shows (default 10).
        count_cap: distinct values an observation counts exactly per
            variable (default: the KB's ``count_cap``, 1,000); beyond it
            "more than 1,000".
    """

    side: ClassVar[str] = "sparql"
    language: ClassVar[str] = "sparql"
    memory: SparqlMemory

    #: Whether an entity id that is neither linked nor seen may be used when it is in the KB (one
    #: cached ASK, :meth:`pyql.kb.KB.has_entity`; ERASER's ``unlinked_entity``): ``pyql run`` sets it,
    #: agents keep the paper's rule (only the question's linked entities and those seen in results).
    entities_from_kb: bool = False

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
        candidate_ranker: Ranker | None = None,
        max_candidates: int = 10,
        count_cap: int | None = None,
        *,
        run_advice: bool = True,
        escalate: bool = True,
    ) -> None:
        self.kb = kb
        self.relation_ranker = relation_ranker
        self.candidate_ranker = candidate_ranker
        self.max_candidates = max_candidates
        self.max_relations = max_relations
        self.max_answers = max_answers
        self.count_cap = count_cap
        self.describe_quantities = True
        self._rows: BoundedRows | None = None
        self._looked: dict[Term, Relations] = {}
        names = actions if actions is not None else getattr(getattr(kb, "profile", None), "action_names", None)
        super().__init__(SparqlActions(names), question, entities, analyzer, undo_empty, run_advice=run_advice, escalate=escalate)

    @property
    def bounded_rows(self) -> BoundedRows | None:
        """All rows of the current query when they are bounded (after an argmax or a
        count) and the step that built it read them; the next step reuses them
        when it only changes the projection (``set_answer``, ``execute()``)."""
        return self._rows

    @contextmanager
    def known_values(self, var: Variable, values: Sequence[Value]) -> Iterator[None]:
        """Within the block, the current query's rows are taken to be ``values`` of ``var``: a look at
        ``var`` (``get_relation(?var)``) reads them as a ``VALUES`` block instead of evaluating the
        query again. The caller vouches that ``values`` (the :class:`~pyql.kb.observation.Value` objects of an observation)
        are every value ``var`` has in the current
        query (as an observation that showed them all says); the bounded rows are put back after.

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
            >>> _ = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.tropical_cyclone_season, ?s)")
            >>> shown = env.history[-1].result.variables[0]
            >>> shown.total == len(shown.values)
            True
            >>> with env.known_values(Variable("s"), shown.values):
            ...     "meteorology.tropical_cyclone_season.tropical_cyclones" in env.step("get_relation(?s)").observation
            True
            >>> env.bounded_rows is None
            True
        """
        saved = self._rows
        self._rows = BoundedRows(self.query.scope.block, (var,), tuple({var.name: v} for v in values))
        try:
            yield
        finally:
            self._rows = saved

    @property
    def looked(self) -> Mapping[Term, Relations]:
        """Relations of entities read ahead for the looks of :meth:`looked_up` (empty outside it)."""
        return self._looked

    @contextmanager
    def looked_up(self, relations: Mapping[Term, Relations]) -> Iterator[None]:
        """Within the block, ``get_relation`` of an entity in ``relations`` reads its relations from there
        instead of the KB (a caller that looks at several entities reads them all in one query,
        :meth:`pyql.kb.base.KB.entity_relations`); each look is still a step of the episode.

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz", "Iniki": "m.0dkl7"})
            >>> found = env.kb.entity_relations(["m.0crbvqz", "m.0dkl7"])
            >>> before = env.kb.stats.queries
            >>> with env.looked_up(found):
            ...     ok = [env.step(f"get_relation({e})").ok for e in ("m.0crbvqz", "m.0dkl7")]
            >>> ok, env.kb.stats.queries - before, env.looked
            ([True, True], 0, {})
        """
        saved = self._looked
        self._looked = {**saved, **relations}
        try:
            yield
        finally:
            self._looked = saved

    def fork_state(self, twin: Any) -> None:
        """A fork keeps the current query's known rows (:attr:`bounded_rows`: its next ``set_answer`` or
        ``execute()`` reads them instead of querying again) and the relations read ahead; both are
        replaced, never changed in place, so the fork shares them as they are.

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"))
            >>> _ = env.step("add_fact(?c, meteorology.tropical_cyclone.formed, ?t)"); _ = env.step("add_max(?t)")
            >>> twin = env.fork()
            >>> _ = twin.step("add_fact(?c, meteorology.tropical_cyclone.category, ?k)")
            >>> twin.bounded_rows is env.bounded_rows, env.bounded_rows is not None
            (False, True)
        """

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

    # -- candidates and looks ---------------------------------------------------
    def rank_relations(self, relations: Iterable[str], limit: int | None = None) -> list[str]:
        """Relations ordered best first against the question (:func:`pyql.environment.candidates.rank_relations`).

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"), question="what category is it?")
            >>> env.rank_relations(["meteorology.tropical_cyclone.formed", "meteorology.tropical_cyclone.category"], 1)
            ['meteorology.tropical_cyclone.category']
        """
        return rank_relations(self.question, relations, self.candidate_ranker, limit)

    def relations_text(self, key: str, relations: Relations) -> str:
        """``get_relation(key): forward: [...]; backward: [...]``, each ranked and capped.

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"), max_candidates=1)
            >>> env.relations_text("?x", Relations(("a.b.c", "d.e.f"), ()))
            'get_relation(?x): forward: [a.b.c and 1 more]; backward: []'
        """
        def shown(names: tuple[str, ...]) -> str:
            ranked = self.rank_relations(names, self.max_candidates)
            more = len(names) - len(ranked)
            return ", ".join(ranked) + (f" and {more} more" if more > 0 else "")

        return f"get_relation({key}): forward: [{shown(relations.forward)}]; backward: [{shown(relations.backward)}]"

    def look(self, targets: Iterable[Any]) -> list[str]:
        """Run ``get_relation`` of each target for the agent, keeping the result in the memory.

        A target already looked at costs no query. Targets that cannot be
        looked at (unknown variables, engine errors) are skipped; an empty
        result is reported but not kept.

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"), question="what category is tropical storm rachel?")
            >>> env.look(["m.0crbvqz"])[0].split(", ")[0]
            'get_relation(m.0crbvqz): forward: [meteorology.tropical_cyclone.category'
            >>> "m.0crbvqz" in env.memory.relations
            True
        """
        out: list[str] = []
        if "get_relation" not in self.actions.names:
            return out
        for target in dict.fromkeys(targets):
            try:
                term = target if isinstance(target, (IRI, Literal, Variable)) else self.query.term(str(target), "entity")
            except PyQLError:
                continue
            if isinstance(term, Variable) and term not in getattr(self.query, "variables", ()):
                continue
            key = _key(term, self.kb.profile)
            rels = self.memory.relations.get(key)
            if rels is None:
                try:
                    rels = self.actions.method("get_relation")(self, entity_or_variable=term).result
                except PyQLError:
                    continue
                if not isinstance(rels, Relations):
                    continue
                if rels.is_empty:
                    out.append(f"get_relation({key}) gives no relations")
                    continue
                self.memory.relations[key] = rels
                self.memory.version += 1
            out.append(self.relations_text(key, rels))
        return out

    def suggested_looks(self, record: StepRecord) -> list[Term]:
        """The looks for a failed step: its entities and existing variables, else the linked entities.

        Only for steps that need a relation (``get_relation``, ``add_fact``, the
        type and time constraints) or that could not be read as an action; for
        the others (``set_answer``, ``add_max``, ``execute`` ...) relations do
        not help and the guideline's variables are the candidates (none).

        Example:
            >>> from pyql.kb import KB
            >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
            >>> [env.kb.profile.shorten(t.value) for t in env.suggested_looks(env.step("add_fact(?a, x.y.z, ?b)"))]
            ['m.0crbvqz']
            >>> env.suggested_looks(env.step('set_answer("yes")'))
            []
        """
        needs_relation = record.action not in self.actions.names or record.action == "get_relation" or any(
            p.kind == "relation" for p in self.actions.spec(record.action).params
        )
        if not needs_relation:
            return []
        known = self.memory.linked_ids | self.memory.seen
        out: list[Term] = []
        for name, value in record.args.items():
            if name == "relation" or not isinstance(value, (IRI, Variable)):
                continue
            if isinstance(value, Variable) and str(value) not in self.memory.variables:
                continue
            if isinstance(value, IRI) and _key(value, self.kb.profile) not in known:
                continue
            out.append(value)
        if not out:
            for entity in self.memory.entities.values():
                try:
                    out.append(self.query.term(entity, "entity"))
                except PyQLError:
                    continue
        return list(dict.fromkeys(out))[:2]

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
