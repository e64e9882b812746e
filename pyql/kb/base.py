"""The knowledge-base interface every backend implements.

A backend only has to run SELECT and ASK text and return rows of
:mod:`pyql.terms` terms (``_select`` / ``_ask``); everything a step needs
(observations with labels and counts, one-hop relations, labels, labelled
result rows) is built here on top, from the bounded queries of
:mod:`pyql.compiler`, so all backends answer the same way. Every query sent
is counted in :attr:`KB.stats`.

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
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import pyql.compiler as compiler
from pyql.errors import EngineError, KBError, QueryError
from pyql.observation import Observation, Relations, ResultSet, Value, VariableValues
from pyql.profiles import Profile, get_profile
from pyql.query import Query
from pyql.terms import IRI, BlankNode, Literal, Term, TermLike, Variable, parse_term

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


class KB(ABC):
    """A knowledge base pyql can run queries on.

    Open one with :meth:`KB.open` (a file, ``oxigraph:PATH``, an
    ``http(s)://.../sparql`` endpoint or ``demo``), or construct a backend
    directly (:class:`~pyql.kb.rdflib_backend.RdflibKB`,
    :class:`~pyql.kb.oxigraph_backend.OxigraphKB`,
    :class:`~pyql.kb.endpoint_backend.EndpointKB`).

    Attributes:
        profile: naming rules of this KB (labels, hidden relations, unnamed nodes).
        per_variable: values shown per variable in an observation (default 10).
        relation_limit: most relations fetched by one relations query.
        stats: counters of queries sent and time spent.
    """

    name = "kb"

    def __init__(self, profile: str | Profile = "freebase", per_variable: int = 10, relation_limit: int = 2000) -> None:
        self.profile = get_profile(profile)
        if per_variable < 1:
            raise KBError(f"per_variable must be ≥ 1, got {per_variable}")
        self.per_variable = per_variable
        self.relation_limit = relation_limit
        self.stats = KBStats()

    # -- opening -----------------------------------------------------------
    @staticmethod
    def open(spec: str, profile: str | Profile = "freebase", **options: object) -> KB:
        """Open a KB from a spec string.

        Args:
            spec: ``demo`` (the bundled demo KB), a Turtle/N-Triples/... file
                (loaded into an in-memory pyoxigraph store, the embedded
                default), ``rdflib:FILE`` (rdflib instead), ``oxigraph:DIR``
                (an on-disk store made by ``pyql kb load``, opened read-only;
                ``oxigraph:`` alone is an empty in-memory store), or an
                ``http(s)://…/sparql`` endpoint; also an ``rdflib.Graph`` or
                a ``pyoxigraph.Store``.
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
    def observe(self, query: Query, per_variable: int | None = None) -> Observation:
        """Run the current query and describe it: up to ``per_variable`` values
        (with labels) of every visible variable and each one's total count,
        in one query; a yes/no answer for a comparison query.

        Example:
            >>> from pyql.kb import KB
            >>> kb = KB.open("demo")
            >>> q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
            >>> print(kb.observe(q))
            The value of variable ?c is ['Tropical storm (SSHS)' (m.05f4r3k)]
        """
        self._check_profile(query)
        if query.is_ask:
            return Observation((), boolean=self.ask(query.sparql()), queries=1)
        if not query.variables:
            return Observation(())
        text, variables = compiler.observation_query(query, per_variable or self.per_variable)
        rows = self.select(text)
        counts: dict[str, int] = {}
        samples: dict[str, list[Value]] = {v.name: [] for v in variables}
        seen: dict[str, set[Term]] = {v.name: set() for v in variables}
        for row in rows:
            count_keys = [k for k in row if k.startswith(compiler.COUNT_PREFIX)]
            if count_keys:
                for key in count_keys:
                    counts[key[len(compiler.COUNT_PREFIX) :]] = int(_number(row[key]))
                continue
            # A sample row binds one variable; a row of a query with few rows
            # (no count row, see compiler.observation_query) binds them all.
            for v in variables:
                term = row.get(v.name)
                # At most per_variable values, even from an engine that ignores LIMIT.
                if term is not None and term not in seen[v.name] and len(samples[v.name]) < (per_variable or self.per_variable):
                    seen[v.name].add(term)
                    samples[v.name].append(self.value(term, row.get(compiler.LABEL_PREFIX + v.name)))
        out = []
        for v in variables:
            values = sorted(samples[v.name], key=_sort_key)
            out.append(VariableValues(v, tuple(values), max(counts.get(v.name, 0), len(values))))
        return Observation(tuple(out), queries=1)

    def execute(self, query: Query, limit: int = 1000) -> ResultSet:
        """Run the query; its rows with a label for every value (at most ``limit``).

        A yes/no query gives a ResultSet with ``boolean`` set.

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
        text, projected = compiler.rows_query(query, limit + 1)
        rows = self.select(text)
        out = []
        for row in rows:
            out.append(
                {
                    v.name: (self.value(row[v.name], row.get(compiler.LABEL_PREFIX + v.name)) if row.get(v.name) is not None else None)
                    for v in projected
                }
            )
        out.sort(key=lambda r: tuple(_sort_key(r[v.name]) if r[v.name] else (9, "") for v in projected))
        truncated = len(out) > limit
        return ResultSet(tuple(projected), tuple(out[:limit]), truncated=truncated)

    def relations(
        self, target: TermLike, query: Query | None = None, *, limit: int | None = None, sample: int = 100
    ) -> Relations:
        """One-hop relations of an entity, a literal, or a variable of ``query``.

        Relations the profile hides (Freebase ``type.``, ``common.``,
        ``freebase.``, ``kg.``) are left out. One query. For a variable, the
        relations of up to ``sample`` of its values are gathered.

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
        text = compiler.relations_query(term, query, self.profile, limit=cap, sample=sample)
        rows = self.select(text)[:cap]  # the LIMIT holds even where the engine ignored it
        forward: set[str] = set()
        backward: set[str] = set()
        for row in rows:
            relation = row.get("__r")
            direction = row.get("__dir")
            if not isinstance(relation, IRI) or direction is None:
                continue
            name = self.profile.shorten(relation.value)
            (forward if str(direction) == "forward" else backward).add(name)
        return Relations(tuple(sorted(forward)), tuple(sorted(backward)), truncated=len(rows) >= cap)

    def labels(self, terms: Iterable[TermLike]) -> dict[Term, str | None]:
        """Labels of entities, in one query (None where there is none).

        Example:
            >>> from pyql.kb import KB
            >>> list(KB.open("demo").labels(["m.0crbvqz"]).values())
            ['Tropical Storm Rachel']
        """
        wanted = [self.term(t, "entity") for t in terms]
        iris = [t for t in wanted if isinstance(t, IRI)]
        out: dict[Term, str | None] = {t: None for t in wanted}
        if not iris:
            return out
        for row in self.select(compiler.labels_query(iris, self.profile)):
            entity = row.get("__e")
            label = row.get("__label")
            if entity in out and isinstance(label, Literal):
                out[entity] = label.lexical
        return out

    def _check_profile(self, query: Query) -> None:
        if query.profile.name != self.profile.name:
            raise QueryError(
                f"the query uses the {query.profile.name!r} profile but this KB was opened with "
                f"{self.profile.name!r}; build the query with Query(profile=kb.profile)"
            )


def _number(term: Term) -> float:
    if isinstance(term, Literal):
        try:
            return float(term.lexical)
        except ValueError:
            pass
    raise EngineError(f"expected a number from the engine, got {term}")


def _sort_key(value: Value) -> tuple[int, object]:
    term = value.term
    if isinstance(term, Literal):
        python = term.to_python()
        if isinstance(python, (int, float)) and not isinstance(python, bool):
            return (0, float(python))
        return (1, term.lexical)
    return (2, (value.label or "") + "\x00" + value.short)


def rows_to_terms(rows: Sequence[Mapping[str, Term | None]]) -> list[dict[str, Term]]:
    """Drop unbound cells from backend rows."""
    return [{k: v for k, v in row.items() if v is not None} for row in rows]
