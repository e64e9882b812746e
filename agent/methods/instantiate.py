"""Readi's path instantiation on a KB: relation binding and path connecting.

*Relation binding* maps each path relation (natural language such as
``border``, or a guessed KB relation) to the top-k KB relations of the KB's
vocabulary by a ranker (BM25 by default); a relation the KB really has is
always its own first candidate. *Path connecting* walks the path
breadth-first from the topic entity, hop by hop: at each hop one query asks
for the relations around the current frontier (at most ``frontier_limit`` of
its values), the best-ranked bound candidate that connects (forward, or
backward as ``^r``) extends the PyQL chain, and one more query observes the
new frontier. A hop never walks straight back along the relation just
followed, unless the path names that relation twice in a row (``directed_by
-> directed_by``: the films of the same director). A path stops where no
candidate connects, or ends on unnamed relationship nodes (Freebase CVTs);
the result says how far it got and why.

Example:
    >>> from pyql.kb import KB
    >>> from agent.methods.reasoning_path import PathSpec
    >>> inst = Instantiator(KB.open("demo"))
    >>> [r] = inst.instantiate([PathSpec("Jamaica", ("languages spoken",))], {"Jamaica": "m.03_r3"}, "what languages are spoken in jamaica")
    >>> r.complete, r.bound, sorted(v.label for v in r.values)
    (True, ('location.country.languages_spoken',), ['Jamaican Creole English Language', 'Jamaican English'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from agent.errors import InstantiationError  # noqa: F401 (defined in agent/errors.py)
from agent.methods.reasoning_path import ANSWER, PathSpec
from pyql.environment.candidates import rank_relations
from pyql.echo import inline
from pyql.errors import PyQLError
from pyql.kb.observation import Relations, Value
from pyql.builder.query import Query
from pyql.builder.terms import IRI, Variable

__all__ = ["ERROR_KINDS", "Instantiator", "PathInstance", "Triple"]

#: Why a path stopped (the edit triggers of section 4.4).
ERROR_KINDS = ("relation_not_instantiated", "unnamed_end", "empty_path", "unknown_entity")
UNNAMED_NODE = "<compound node>"


@dataclass(frozen=True)
class Triple:
    """One instance triple, with display names (labels; unnamed nodes marked)."""

    head: str
    relation: str
    tail: str

    def __str__(self) -> str:
        return f"({self.head}, {self.relation}, {self.tail})"


@dataclass
class PathInstance:
    """How far one path got on the KB.

    Attributes:
        spec: the path as the LLM wrote it.
        bound: the KB relations bound so far (``^r`` = walked backwards).
        candidates_per_hop: the bound candidates of each relation tried.
        query: the PyQL chain of the instantiated prefix.
        end: the variable the prefix ends on.
        values: values of ``end`` (sampled, with labels).
        error: None, or one of :data:`ERROR_KINDS`.
        stuck_relation: the path relation that did not connect.
        around: relations around the stuck point, ranked against the question and capped.
        instances: sample triples of the instantiated prefix.
    """

    spec: PathSpec
    bound: tuple[str, ...] = ()
    candidates_per_hop: list[list[str]] = field(default_factory=list)
    query: Query | None = None
    end: Variable | None = None
    values: list[Value] = field(default_factory=list)
    error: str | None = None
    stuck_relation: str | None = None
    around: list[str] = field(default_factory=list)
    instances: list[Triple] = field(default_factory=list)

    @property
    def progress(self) -> int:
        """Relations instantiated."""
        return len(self.bound)

    @property
    def complete(self) -> bool:
        """Every relation instantiated and no error."""
        return self.error is None and self.progress == len(self.spec.relations) and len(self.spec.relations) > 0

    @property
    def ends_unnamed(self) -> bool:
        return bool(self.values) and all(v.unnamed for v in self.values)

    def bound_spec(self) -> PathSpec:
        """The path with its instantiated relations (the KB names)."""
        start = self.query.profile.shorten(self._start_iri()) if self.query is not None and self._start_iri() else self.spec.start
        return PathSpec(start, self.bound)

    def _start_iri(self) -> str | None:
        if self.query is None or not self.query.steps:
            return None
        first = self.query.steps[0]
        for term in (first.arguments()[0], first.arguments()[2]):  # type: ignore[attr-defined]
            if isinstance(term, IRI):
                return term.value
        return None

    def describe(self) -> str:
        """The instantiated prefix as text: ``Jamaica -> location.country.languages_spoken -> [...]``."""
        return " -> ".join([self.spec.start, *self.bound])


class Instantiator:
    """Binds and connects reasoning paths on a KB.

    Args:
        kb: the knowledge base.
        ranker: ranks relations against text (``agent.methods.ranking``); BM25 by default.
        top_k: candidates per path relation (default 5).
        frontier_limit: values of the frontier whose relations are looked at (default 300).
        around_cap: relations around a stuck point shown to the LLM (default 35).
        sample: instance triples kept per hop (default 3).
        vocabulary: the KB's relations; read from the KB once if None.
    """

    def __init__(
        self,
        kb: Any,
        ranker: Any = None,
        *,
        top_k: int = 5,
        frontier_limit: int = 300,
        around_cap: int = 35,
        sample: int = 3,
        vocabulary: Iterable[str] | None = None,
    ) -> None:
        if ranker is None:
            from agent.methods.ranking import BM25Ranker

            ranker = BM25Ranker()
        self.kb = kb
        self.ranker = ranker
        self.top_k = top_k
        self.frontier_limit = frontier_limit
        self.around_cap = around_cap
        self.sample = sample
        self._vocabulary = list(dict.fromkeys(vocabulary)) if vocabulary is not None else None

    # -- binding ----------------------------------------------------------------
    @property
    def vocabulary(self) -> list[str]:
        """The KB relations paths are bound to (one query the first time)."""
        if self._vocabulary is None:
            rows = self.kb.select(
                self.kb.profile.prefix_lines() + "SELECT DISTINCT ?p WHERE { ?s ?p ?o } LIMIT 100000"
            )
            names = []
            for row in rows:
                p = row.get("p")
                if isinstance(p, IRI) and not self.kb.profile.is_hidden(p.value):
                    names.append(self.kb.profile.shorten(p.value))
            if not names:
                raise InstantiationError("the KB has no relations to bind paths to; pass vocabulary=")
            self._vocabulary = sorted(set(names))
        return self._vocabulary

    def bind(self, relation: str, question: str = "") -> list[str]:
        """The top-k KB relations for a path relation (a real KB relation first).

        Example:
            >>> from pyql.kb import KB
            >>> Instantiator(KB.open("demo")).bind("capital", "what is the capital")[0]
            'location.country.capital'
        """
        name = relation.lstrip("^")
        vocab = self.vocabulary
        # The relation's own words decide (a question's words would pull every
        # hop towards the same relation); the question only breaks ties.
        text = name.replace(".", " ").replace("_", " ")
        ranked = self.ranker.rank(text, vocab)
        if question:
            scores = dict(zip(vocab, self.ranker.scores(text, vocab)))
            tie = dict(zip(vocab, self.ranker.scores(question, vocab)))
            ranked = sorted(vocab, key=lambda r: (-scores[r], -tie[r], r))
        out = [name] if name in set(vocab) else []
        out += [r for r in ranked if r != name]
        return out[: self.top_k]

    # -- connecting ---------------------------------------------------------------
    def instantiate(
        self, paths: Sequence[PathSpec], entities: Mapping[str, str], question: str = ""
    ) -> list[PathInstance]:
        """Instantiate every path (see the module docstring). Returns one result per path."""
        return [self._one(i, path, entities, question) for i, path in enumerate(paths)]

    def _one(self, index: int, path: PathSpec, entities: Mapping[str, str], question: str) -> PathInstance:
        result = PathInstance(spec=path)
        if not path.relations:
            result.error = "empty_path"
            return result
        lookup = {k.lower(): v for k, v in entities.items()}
        start_id = entities.get(path.start) or lookup.get(path.start.lower()) or path.start
        query = Query(self.kb.profile)
        try:
            current: Any = query.term(start_id, "entity")
        except PyQLError:
            current = None
        if not isinstance(current, IRI):
            result.error = "unknown_entity"
            result.stuck_relation = path.relations[0]
            result.around = []
            return result
        result.query = query
        for j, relation in enumerate(path.relations):
            around = self.kb.relations(current, query if isinstance(current, Variable) else None, sample=self.frontier_limit)
            candidates = self.bind(relation, question)
            result.candidates_per_hop.append(candidates)
            back = _way_back(result.bound, path.relations, j)
            chosen = _choose(relation, candidates, self._has_relation(around, current, query), back)
            if chosen is None:
                result.error = "relation_not_instantiated"
                result.stuck_relation = relation
                result.around = self._ranked(question, around.all())
                break
            nxt = ANSWER if j == len(path.relations) - 1 else Variable(f"p{index}_{j + 1}")
            backward = chosen.startswith("^")
            rel = chosen.lstrip("^")
            query = query.add_fact(nxt, rel, current) if backward else query.add_fact(current, rel, nxt)
            result.bound = (*result.bound, chosen)
            result.query, result.end, current = query, nxt, nxt
        if result.query is not None and result.query.steps:
            self._observe_end(result, result.query, question)
        return result

    def _observe_end(self, result: PathInstance, query: Query, question: str) -> None:
        """Read the values the built ``query`` reaches at its end; a path ending on unnamed nodes is an error."""
        observation = self.kb.observe(query, per_variable=10)
        end_values = observation.get(result.end) if result.end is not None else None
        result.values = list(end_values.values) if end_values is not None else []
        result.instances = self._instances(result)
        if result.error is None and result.ends_unnamed:
            result.error = "unnamed_end"
            around = self.kb.relations(result.end, query, sample=self.frontier_limit)
            result.around = self._ranked(question, list(around.forward))

    def _has_relation(self, around: Relations, current: Any, query: Query) -> Callable[[str, str], bool]:
        """``(relation, direction) -> bool``: in the relation list, or, when the list
        was read from a capped sample of a hub's edges, found by one bounded ASK."""

        def has(relation: str, direction: str) -> bool:
            if relation in getattr(around, direction):
                return True
            if around.complete:
                return False
            try:
                return bool(
                    self.kb.has_relation(current, relation, direction, query if isinstance(current, Variable) else None)
                )
            except PyQLError:
                return False

        return has

    def _ranked(self, question: str, relations: Sequence[str]) -> list[str]:
        """The candidates around a stuck point: ranked against the question and capped, by the shared
        :func:`pyql.environment.candidates.rank_relations` (the same candidates ERASER's guidelines list)."""
        if not relations:
            return []
        return rank_relations(question, relations, lambda q, rs: self.ranker.rank(q or "", rs), self.around_cap)

    def _instances(self, result: PathInstance) -> list[Triple]:
        """Sample triples of the instantiated prefix, with labels (one query)."""
        assert result.query is not None
        rows = self.kb.execute(result.query, limit=self.sample * 4)
        triples: list[Triple] = []
        seen: set[Triple] = set()
        profile = self.kb.profile
        ends = [a for step in result.query.steps for a in step.arguments()[::2]]  # type: ignore[attr-defined]
        entity_constants = [a for a in ends if isinstance(a, IRI)]
        names = {k: v for k, v in self.kb.labels(entity_constants).items() if v} if entity_constants else {}
        for row in rows.rows:
            for step in result.query.steps:
                head, rel, tail = step.arguments()  # type: ignore[attr-defined]
                triple = Triple(
                    _show(head, row, profile, names),
                    profile.shorten(rel.value) if isinstance(rel, IRI) else str(rel),
                    _show(tail, row, profile, names),
                )
                if triple not in seen and len([t for t in triples if t.relation == triple.relation]) < self.sample:
                    seen.add(triple)
                    triples.append(triple)
        return triples


def _way_back(bound: Sequence[str], relations: Sequence[str], j: int) -> str | None:
    """The relation that walks straight back along the one just followed, which hop ``j`` may not take.

    None (no restriction) at the first hop, or when the path names the same
    relation twice in a row (MetaQA's "directed_by -> directed_by": the films
    of the same director), where walking back is what it asks for.
    """
    came_by = bound[-1] if bound else None
    if came_by is None or (j and relations[j].lstrip("^") == relations[j - 1].lstrip("^")):
        return None
    return came_by[1:] if came_by.startswith("^") else "^" + came_by


def _choose(relation: str, candidates: Sequence[str], on: Callable[[str, str], bool], back: str | None) -> str | None:
    """The first candidate found around the current node (``^`` marks a backward one), never ``back``.

    A path relation written backward (``^r``) prefers the candidate's backward
    direction; otherwise forward is tried first.
    """
    for candidate in candidates:
        chosen = None
        if relation.startswith("^") and on(candidate, "backward"):
            chosen = "^" + candidate
        elif on(candidate, "forward"):
            chosen = candidate
        elif on(candidate, "backward"):
            chosen = "^" + candidate
        if chosen is not None and chosen != back:
            return chosen
    return None


def _show(term: Any, row: Mapping[str, Value | None], profile: Any, names: Mapping[Any, str]) -> str:
    if isinstance(term, Variable):
        value = row.get(term.name)
        if value is None:
            return str(term)
        if value.unnamed:
            return UNNAMED_NODE
        return inline(value.label or value.short)
    if isinstance(term, IRI):
        return inline(names.get(term) or profile.shorten(term.value))
    return str(term)
