"""The knowledge-base interface every backend implements.

A backend only has to run SELECT and ASK text and return rows of
:mod:`pyql.builder.terms` terms (``_select`` / ``_ask``); everything a step needs
(observations with labels and counts, one-hop relations, labels, labelled
result rows) is built here on top, from the bounded queries of
:mod:`pyql.kb.probes` (each built and read there), so all backends answer
the same way. Every query sent is counted in :attr:`KB.stats`.

This module imports no backend and nothing from the :mod:`pyql.kb` package:
:meth:`KB.open` calls the opener installed with :func:`set_opener`, which is
:func:`pyql.kb.opening.open_kb` (installed when :mod:`pyql.kb.opening` is
imported, which the package :mod:`pyql.kb` does before any of its modules is
used).

Example:
    >>> from pyql.kb import KB
    >>> kb = KB.open("demo")
    >>> kb.relations("m.0crbvqz").forward[:2]
    ('meteorology.tropical_cyclone.category', 'meteorology.tropical_cyclone.dissipated')
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping, Sequence

import pyql.kb.probes as probes
import pyql.kb.quantities as quantities
from pyql.errors import EngineError, KBError, QueryError, RecordingError
from pyql.kb.observation import (
    BoundedRows,
    Observation,
    Relations,
    ResultSet,
    Value,
    VariableValues,
    joined_rows,
)
from pyql.builder.expressions import Expression
from pyql.builder.profiles import Profile, get_profile
from pyql.builder.query import Query
from pyql.builder.terms import IRI, BlankNode, Literal, Term, TermLike, Variable, parse_term

__all__ = ["KB", "KBStats", "Row", "Opener", "set_opener"]

Row = Mapping[str, Term]

Opener = Callable[..., "KB"]
"""A function ``(spec, profile, **options) -> KB``: what :meth:`KB.open` calls."""

_opener: Opener | None = None


def set_opener(opener: Opener) -> None:
    """Install the function :meth:`KB.open` calls (done by :mod:`pyql.kb.opening`).

    The interface does not import the backends (they import it); the module
    that knows them installs itself here instead.

    Example:
        >>> import pyql.kb.opening
        >>> set_opener(pyql.kb.opening.open_kb)
        >>> type(KB.open("oxigraph:")).__name__
        'OxigraphKB'
    """
    global _opener
    _opener = opener


@dataclass
class KBStats:
    """Counters of one KB object: queries sent and seconds spent in the engine.

    Example:
        >>> s = KBStats(); s.record(0.5); (s.queries, s.seconds)
        (1, 0.5)
    """

    queries: int = 0
    seconds: float = 0.0
    errors: int = 0

    def record(self, seconds: float, error: bool = False) -> None:
        self.queries += 1
        self.seconds += seconds
        self.errors += int(error)

    def snapshot(self) -> dict[str, float]:
        """The counters as a dict (for traces and metrics)."""
        return {"queries": self.queries, "seconds": round(self.seconds, 6), "errors": self.errors}


#: Edges :meth:`KB.value_kind` looks at first (a relation of text or entities stops there).
_KIND_LOOK = 20
#: Default of :attr:`KB.kind_edges`.
KIND_EDGES = 10_000_000


class KB(ABC):
    """A knowledge base pyql can run queries on.

    Open one with :meth:`KB.open` (its docstring lists every spec form,
    generated from the registry :mod:`pyql.kb.registry`), or construct a backend
    directly (:class:`~pyql.kb.rdflib_backend.RdflibKB`,
    :class:`~pyql.kb.oxigraph_backend.OxigraphKB`,
    :class:`~pyql.kb.endpoint_backend.EndpointKB`).

    Attributes:
        profile: naming rules of this KB (labels, hidden relations, unnamed nodes).
        per_variable: values shown per variable in an observation (default 10).
        count_cap: distinct values an observation counts exactly per variable
            (default 1,000); beyond it the count says "more than 1,000", so a
            step on a hub does not evaluate the whole join.
        relation_limit: most relations fetched by one relations query.
        relation_edges: edges read per direction by one relations query
            (default 10,000); a hub's list read from that sample says it may
            be incomplete (:attr:`Relations.truncated`).
        row_cap: rows of the join an observation reads per variable (None,
            the default: ``count_cap + 1``; never fewer); a longer join gives
            counts taken over those rows, "more than" the cap or "at least"
            (:attr:`VariableValues.partial`), so a variable with few values
            over a huge join is not read to the end.
        kind_edges: most edges of a relation :meth:`value_kind` reads to
            prove its values are of one kind (default 10^7; a larger
            relation keeps the order key that needs no proof).
        stats: counters of queries sent and time spent.
    """

    name = "kb"

    def __init__(
        self,
        profile: str | Profile = "freebase",
        per_variable: int = 10,
        relation_limit: int = 2000,
        count_cap: int = 1000,
        relation_edges: int = probes.RELATION_EDGES,
        row_cap: int | None = None,
        kind_edges: int = KIND_EDGES,
    ) -> None:
        self.profile = get_profile(profile)
        if per_variable < 1:
            raise KBError(f"per_variable must be ≥ 1, got {per_variable}")
        if count_cap < 1:
            raise KBError(f"count_cap must be ≥ 1, got {count_cap}")
        if relation_edges < 1:
            raise KBError(f"relation_edges must be ≥ 1, got {relation_edges}")
        if kind_edges < 1:
            raise KBError(f"kind_edges must be ≥ 1, got {kind_edges}")
        if row_cap is not None and row_cap < 1:
            raise KBError(f"row_cap must be ≥ 1 (or None for count_cap + 1), got {row_cap}")
        self.per_variable = per_variable
        self.relation_limit = relation_limit
        self.count_cap = count_cap
        self.relation_edges = relation_edges
        self.row_cap = row_cap
        self.kind_edges = kind_edges
        self.stats = KBStats()
        # relation IRI → the one kind of its objects (numeric or a date type), or None.
        self._value_kinds: dict[str, str | None] = {}
        # entity IRI → whether it is in the KB (:meth:`has_entity`).
        self._entities: dict[str, bool] = {}

    # -- opening -----------------------------------------------------------
    @staticmethod
    def open(spec: str, profile: str | Profile = "freebase", **options: object) -> KB:
        """Open a KB from a spec string.

        The forms of ``spec``, in the order they are tried (generated from
        the registry :mod:`pyql.kb.registry`, whose entries are in
        :mod:`pyql.kb.opening`):

        (the spec forms of pyql.kb.registry)

        Args:
            spec: a spec of one of the forms above: most often ``demo``, an
                RDF file or ``oxigraph:DIR``.
            profile: "freebase", "wikidata", "generic" or a Profile.
            **options: passed to the backend (e.g. ``timeout=``, ``default_graph=``).

        Raises:
            KBError: for a missing or unreadable file, an unknown format or a bad spec.

        Example:
            >>> type(KB.open("demo")).__name__, type(KB.open("rdflib:demo")).__name__
            ('OxigraphKB', 'RdflibKB')
        """
        if _opener is None:  # pragma: no cover - importing pyql.kb installs it
            raise KBError("no KB opener is installed; import pyql.kb (it installs pyql.kb.opening.open_kb)")
        return _opener(spec, profile, **options)

    # -- the engine --------------------------------------------------------
    @abstractmethod
    def _select(self, sparql: str) -> list[dict[str, Term]]:
        """Run a SELECT; rows map variable names (no ``?``) to terms."""

    @abstractmethod
    def _ask(self, sparql: str) -> bool:
        """Run an ASK."""

    def close(self) -> None:
        """Release the engine's resources (files, connections)."""

    def __enter__(self) -> KB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _timed(self, run, sparql: str):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            result = run(sparql)
        except EngineError as exc:
            self.stats.record(time.perf_counter() - start, error=True)
            if exc.query is None:
                exc.query = sparql
            raise
        except RecordingError:  # a recording or cache answering for the engine: its own error, never the query's
            self.stats.record(time.perf_counter() - start, error=True)
            raise
        except Exception as exc:  # an engine's own exception type
            self.stats.record(time.perf_counter() - start, error=True)
            raise EngineError(f"{self.name} rejected the query: {type(exc).__name__}: {exc}", query=sparql) from exc
        self.stats.record(time.perf_counter() - start)
        return result

    def select(self, sparql: str) -> list[dict[str, Term]]:
        """Run SELECT text; rows of terms. Counted in :attr:`stats`.

        Raises:
            EngineError: the engine rejected the query or failed.
        """
        return self._timed(self._select, sparql)

    def ask(self, sparql: str) -> bool:
        """Run ASK text. Counted in :attr:`stats`."""
        return self._timed(self._ask, sparql)

    # -- values ------------------------------------------------------------
    def value(self, term: Term, label: Term | str | None) -> Value:
        """Wrap a result term with its label and unnamed-node flag."""
        text = label.lexical if isinstance(label, Literal) else (label if isinstance(label, str) else None)
        if isinstance(term, BlankNode):
            return Value(term, text, True, str(term))
        if isinstance(term, IRI):
            unnamed = term.value.startswith(self.profile.unnamed_prefixes) if self.profile.unnamed_prefixes else False
            if text is None and self.profile.unlabelled_is_unnamed:
                unnamed = True
            return Value(term, text, unnamed, self.profile.shorten(term.value))
        return Value(term, text, False, str(term))

    def term(self, value: TermLike, role: str = "any") -> Term:
        """Read a value as a term of this KB's profile."""
        return parse_term(value, self.profile, role)

    # -- what a step needs ---------------------------------------------------
    def observe(
        self,
        query: Query,
        per_variable: int | None = None,
        *,
        count_cap: int | None = None,
        reuse: BoundedRows | None = None,
        describe_quantities: bool = True,
    ) -> Observation:
        """Run the current query and describe it: up to ``per_variable`` values
        (with labels) of every visible variable and each one's number of
        distinct values, exact up to ``count_cap`` (default :attr:`count_cap`)
        and "more than" it beyond, in one query; a yes/no answer for a
        comparison query.

        When the query's rows are bounded (an argmax's LIMIT, a count without
        GROUP BY) the observation is all of them, kept in
        :attr:`Observation.rows`; pass them as ``reuse`` to the next step's
        ``observe`` or :meth:`execute` and, if that query only changes the
        projection (``set_answer``), no query is sent at all.

        A step about quantities (``add_quantity``, ``add_bind``, ``add_rank``,
        ``add_time``, ...) also gets their units, time qualifiers and entities,
        row by row (:mod:`pyql.kb.quantities`, one more bounded query),
        unless ``describe_quantities`` is False (a step only tried, as choose mode
        tries the steps it lists, needs no description of them).

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
            >>> print(kb.observe(q))
            The value of variable ?c is ['Tropical storm (SSHS)' (m.05f4r3k)]
            >>> print(kb.observe(Query().add_fact("?x", "type.object.name", "?n"), count_cap=50).get("?n").total_text())
            more than 50
        """
        observation = self._observe(query, per_variable, count_cap, reuse)
        if not describe_quantities:
            return observation
        return quantities.observe_quantities(self, query, observation, per_variable or self.per_variable)

    def _observe(self, query: Query, per_variable: int | None, count_cap: int | None, reuse: BoundedRows | None) -> Observation:
        """The observation of :meth:`observe` without the quantities."""
        self._check_profile(query)
        if query.is_ask:
            return Observation((), boolean=self.ask(query.sparql()), queries=1)
        if not query.variables:
            return Observation(())
        shown = per_variable or self.per_variable
        cap = count_cap or self.count_cap
        bound = query.scope.block.max_rows
        if bound is not None and bound <= shown:
            before = self.stats.queries
            rows = self.bounded_rows(query, reuse)
            return self._observation_of_rows(rows, probes.observed_variables(query), self.stats.queries - before)
        text, variables = probes.observation_query(query, shown, cap, self.row_cap)
        found = self.select(text)
        values = probes.read_observation(found, variables, self.value, shown, cap, self.row_cap)
        return Observation(values, queries=1, joined=probes.read_joined_rows(found, variables, self.value, shown, values))

    def bounded_rows(self, query: Query, reuse: BoundedRows | None = None) -> BoundedRows:
        """All rows of a query whose rows are bounded, over every visible variable, with labels.

        One query, or none when ``reuse`` already holds the rows of the same
        bounded pattern (the previous step's, e.g. an argmax before
        ``set_answer``).

        Raises:
            QueryError: when the query's rows are not bounded (no argmax, no count without group).

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> q = Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t").add_max("?t")
            >>> rows = kb.bounded_rows(q)
            >>> before = kb.stats.queries
            >>> kb.bounded_rows(q.set_answer("?c"), reuse=rows) is rows, kb.stats.queries - before
            (True, 0)
        """
        self._check_profile(query)
        block = query.scope.block
        if reuse is not None and reuse.covers(block, block.variables):
            return reuse
        text, variables = probes.bounded_rows_query(query)
        rows = probes.read_rows(self.select(text), variables, self.value, block.max_rows or 0)
        return BoundedRows(block, tuple(variables), tuple(rows))

    def _observation_of_rows(self, rows: BoundedRows, variables: Sequence[Variable], queries: int) -> Observation:
        """The observation of ``variables`` when every row of the query is known (exact counts)."""
        out = []
        for v in variables:
            values = sorted(rows.column(v), key=Value.sort_key)
            out.append(VariableValues(v, tuple(values), len(values)))
        table = [tuple(row.get(v.name) for v in variables) for row in rows.project(variables)]
        joined = joined_rows(tuple(variables), table, tuple(out), len(table))
        return Observation(tuple(out), queries=queries, rows=rows, joined=joined)

    def execute(self, query: Query, limit: int = 1000, *, reuse: BoundedRows | None = None) -> ResultSet:
        """Run the query; its rows with a label for every value (at most ``limit``).

        A yes/no query gives a ResultSet with ``boolean`` set. When ``reuse``
        holds the rows of the same bounded pattern (the observation of an
        argmax or a count, :attr:`Observation.rows`), the answers are read
        from them and no query is sent.

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
            >>> [v.label for v in kb.execute(q).answers()]
            ['Tropical storm (SSHS)']
        """
        self._check_profile(query)
        if query.is_ask:
            return ResultSet((), boolean=self.ask(query.sparql()))
        if not query.variables:
            return ResultSet(())
        projected = probes.observed_variables(query)
        if reuse is not None and reuse.covers(query.scope.block, projected):
            out = reuse.project(projected)
        else:
            text, projected = probes.rows_query(query, limit + 1)
            out = probes.read_rows(self.select(text), projected, self.value, limit + 1)
        out.sort(key=lambda r: tuple(r[v.name].sort_key() if r[v.name] else (9, "") for v in projected))  # type: ignore[union-attr]
        truncated = len(out) > limit
        return ResultSet(tuple(projected), tuple(out[:limit]), truncated=truncated)

    def relations(
        self,
        target: TermLike,
        query: Query | None = None,
        *,
        limit: int | None = None,
        sample: int = 100,
        reuse: BoundedRows | None = None,
    ) -> Relations:
        """One-hop relations of an entity, a literal, or a variable of ``query``.

        Relations the profile hides (Freebase ``type.``, ``common.``,
        ``freebase.``, ``kg.``) are left out. One bounded query: the
        relations of at most :attr:`relation_edges` edges per direction (for a
        variable, of up to ``sample`` of its values); when that cap (or
        ``limit``) is reached the list may be incomplete and says so
        (``truncated``), and :meth:`has_relation` checks one relation. For a
        variable of a query whose rows are bounded, ``reuse`` (the rows an
        observation read, :attr:`Observation.rows`) gives its values, so the
        query's join (an argmax) is not evaluated again.

        Example:
            >>> from pyql.kb import KB
            >>> KB.open("demo").relations("m.0crbvqz").backward[:1]
            ('meteorology.tropical_cyclone_category.tropical_cyclones',)
        """
        term = self.term(target, "entity")
        if isinstance(term, Variable) and query is None:
            raise QueryError(f"the relations of {term} need the query that binds it; pass query=")
        if query is not None:
            self._check_profile(query)
        cap = limit or self.relation_limit
        edges = self.relation_edges
        values = None
        if isinstance(term, Variable) and query is not None and reuse is not None and reuse.covers(query.scope.block, [term]):
            known = [value.term for value in reuse.column(term)]
            if not any(isinstance(t, BlankNode) for t in known):  # a blank node cannot be written in VALUES
                values = known
            if not known:
                return Relations((), ())
        text = probes.relations_query(term, query, self.profile, limit=cap, sample=sample, edges=edges, values=values)
        return probes.read_relations(self.select(text), term, edges, cap, self.profile.shorten)

    def entity_relations(self, targets: Sequence[TermLike], *, limit: int | None = None) -> dict[Term, Relations]:
        """The one-hop relations of several entities (or literals) in one query: each as :meth:`relations` gives it.

        Raises:
            QueryError: a target is a variable (its relations need its query: :meth:`relations`).

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> before = kb.stats.queries
            >>> found = kb.entity_relations(["m.0crbvqz", "m.0dkl7"])
            >>> kb.stats.queries - before, found[kb.term("m.0dkl7", "entity")] == kb.relations("m.0dkl7")
            (1, True)
        """
        terms = list(dict.fromkeys(self.term(t, "entity") for t in targets))
        if any(isinstance(t, Variable) for t in terms):
            raise QueryError("entity_relations takes entities or literals; a variable's relations need its query: relations(var, query)")
        if not terms:
            return {}
        cap = limit or self.relation_limit
        rows = self.select(probes.entities_relations_query(terms, self.profile, limit=cap, edges=self.relation_edges))
        split: list[list[dict[str, Term]]] = [[] for _ in terms]
        for row in rows:
            index = int(probes.engine_number(row.get("__t")))
            if not 0 <= index < len(terms):
                raise EngineError(f"the engine answered for a target the relations query did not ask about (index {index})")
            split[index].append(row)
        cut = len(rows) >= cap * len(terms)  # the engine stopped at the LIMIT: any target may have lost rows
        found = {t: probes.read_relations(part, t, self.relation_edges, cap, self.profile.shorten) for t, part in zip(terms, split)}
        return {t: replace(r, truncated=True) if cut else r for t, r in found.items()}

    def has_relation(
        self,
        target: TermLike,
        relation: TermLike,
        direction: str | None = None,
        query: Query | None = None,
        *,
        sample: int = 100,
    ) -> bool:
        """Whether ``target`` has ``relation`` (in ``direction``), in one bounded ASK.

        This completes a relation list that may be incomplete
        (:attr:`Relations.truncated`): for an entity, one index lookup; for a
        variable of ``query``, whether one of up to ``sample`` of its values
        (the ones :meth:`relations` reads) has it.

        Args:
            target: an entity, a literal or a variable of ``query``.
            relation: a relation name such as ``people.person.gender``.
            direction: "forward" (target is the subject), "backward" (the object) or None (either).
            query: the query that binds a variable target.
            sample: values of a variable looked at.

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> kb.has_relation("m.0crbvqz", "meteorology.tropical_cyclone.category", "forward")
            True
            >>> kb.has_relation("m.0crbvqz", "meteorology.tropical_cyclone.category", "backward")
            False
        """
        term = self.term(target, "entity")
        rel = self.term(relation, "relation")
        if isinstance(term, Variable) and query is None:
            raise QueryError(f"the relations of {term} need the query that binds it; pass query=")
        if query is not None:
            self._check_profile(query)
        return self.ask(probes.relation_ask_query(term, rel, direction, query, self.profile, sample))

    def labels(self, terms: Iterable[TermLike]) -> dict[Term, str | None]:
        """Labels of entities, in one query (None where there is none).

        Example:
            >>> from pyql.kb import KB
            >>> list(KB.open("demo").labels(["m.0crbvqz"]).values())
            ['Tropical Storm Rachel']
        """
        wanted = [self.term(t, "entity") for t in terms]
        iris = [t for t in wanted if isinstance(t, IRI)]
        if not iris:
            return {t: None for t in wanted}
        return probes.read_labels(self.select(probes.labels_query(iris, self.profile)), wanted)

    def has_entity(self, entity: TermLike) -> bool:
        """Whether an entity id is in the KB (the subject or object of a triple): one ASK, kept for the life of this KB object.

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> kb.has_entity("m.0crbvqz"), kb.has_entity("m.0nothere")
            (True, False)
        """
        term = self.term(entity, "entity")
        if not isinstance(term, IRI):
            return False
        if term.value not in self._entities:
            self._entities[term.value] = self.ask(probes.entity_ask_query(term, self.profile))
        return self._entities[term.value]

    def value_kind(self, relation: TermLike) -> str | None:
        """The one kind of value a relation's objects have, when an argmax can use the engine's own order of it.

        ``"numeric"`` when every object is a number, a date type's IRI
        (``xsd:date``, ``xsd:dateTime``, ``xsd:gYear`` ...) when every object
        has that type (:data:`pyql.kb.probes.NATIVE_ORDER_KINDS`); None when
        the objects mix kinds, are of another kind (entities, text), or the
        relation has more than :attr:`kind_edges` edges (too many to check).

        It reads the first 20 edges (one cheap query); only when they hold
        one such kind does a second query read up to :attr:`kind_edges`
        edges, stopping at a second kind. The answer is kept for the life of
        this KB object, so reopen the KB after changing the data behind an
        endpoint.

        Example:
            >>> from pyql.kb import KB
            >>> KB.open("demo").value_kind("meteorology.tropical_cyclone.highest_winds")
            'numeric'
        """
        rel = self.term(relation, "relation")
        if not isinstance(rel, IRI):
            raise QueryError(f"value_kind needs a relation name such as a.b.c, not {rel}")
        if rel.value not in self._value_kinds:
            kind: str | None = None
            for edges in (_KIND_LOOK, self.kind_edges):
                kinds, complete = self._kinds_of(rel, edges)
                kind = kinds[0] if len(kinds) == 1 and kinds[0] in probes.NATIVE_ORDER_KINDS else None
                if kind is None or complete:
                    break
            else:
                kind = None  # more edges than kind_edges: not checked
            self._value_kinds[rel.value] = kind
        return self._value_kinds[rel.value]

    def _kinds_of(self, relation: IRI, edges: int) -> tuple[list[str | None], bool]:
        """The distinct kinds (at most 2) of a relation's first ``edges`` objects, and whether those were all."""
        return probes.read_value_kinds(self.select(probes.value_kinds_query(relation, self.profile, edges)), edges)

    def native_order(self, var: TermLike, query: Query) -> bool:
        """Whether ``add_max``/``add_min`` of ``var`` may use the engine's own order (``native=True``).

        True when ``var`` is a COUNT/SUM/AVG result or the object of a
        relation whose values are all numbers or all of one date type
        (:meth:`value_kind`); then the engine's order is the one the default
        key gives, and an engine with an index answers ``ORDER BY ... LIMIT``
        without sorting the join.

        Example:
            >>> from pyql.kb import KB
            >>> q = Query().add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w")
            >>> KB.open("demo").native_order("?w", q)
            True
        """
        v = self.term(var, "entity")
        if not isinstance(v, Variable):
            raise QueryError(f"native_order is about a variable of the query, not {v}")
        self._check_profile(query)
        relations, aggregated = probes.sources_of(v, query.steps)
        if aggregated:
            return True
        return any(self.value_kind(r) in probes.NATIVE_ORDER_KINDS for r in relations)

    def native_compare(self, left: TermLike | Expression, right: TermLike | Expression, query: Query) -> bool:
        """Whether ``add_filter(left, op, right)`` may use the engine's own comparison (``native=True``).

        True when one side is a variable and the other a date literal, and
        the variable is the object of a relation whose values all have that
        literal's datatype (:meth:`value_kind`): then comparing as ISO text at
        the coarser precision, what pyql writes for dates of mixed types, is
        the engine's comparison, which costs less per row. Never on a profile
        that compares dates as dates (Wikidata, ``date_comparison="value"``):
        an engine's typed comparison reads no BCE date on rdflib or Virtuoso,
        and compares instants, not the literal's day.

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> q = Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t")
            >>> kb.native_compare("?t", "2005-08-23", q)  # formed mixes xsd:date, gYear, gYearMonth, dateTime
            False
        """
        self._check_profile(query)
        if isinstance(left, Expression) or isinstance(right, Expression):
            return False  # a computed side (MarkQA's year(?t)) is compared as written
        if query.profile.date_comparison == "value":
            return False  # dates compare as dates at the literal's precision, BCE years too, on every engine
        a, b = self.term(left), self.term(right)
        var, lit = (a, b) if isinstance(a, Variable) else (b, a)
        if not (isinstance(var, Variable) and isinstance(lit, Literal) and lit.is_date):
            return False
        relations, _ = probes.sources_of(var, query.steps)
        return any(self.value_kind(r) == lit.datatype for r in relations)

    def _check_profile(self, query: Query) -> None:
        if query.profile.name != self.profile.name:
            raise QueryError(
                f"the query uses the {query.profile.name!r} profile but this KB was opened with "
                f"{self.profile.name!r}; build the query with Query(profile=kb.profile)"
            )


def rows_to_terms(rows: Sequence[Mapping[str, Term | None]]) -> list[dict[str, Term]]:
    """Drop unbound cells from backend rows."""
    return [{k: v for k, v in row.items() if v is not None} for row in rows]
