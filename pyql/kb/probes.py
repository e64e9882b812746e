"""The KB's probes: each bounded query a KB runs to look at a query, next to the code that reads its rows.

A step needs more than the query's answers: the values of its variables
with labels and counts (the observation), the one-hop relations of an
entity or a variable, labels of entities, labelled result rows, whether a
relation exists, and the kinds of a relation's values. Each is one bounded
query, built here from the folded scope of a query (:mod:`pyql.builder.compiler`
writes the query's own text), and read back here into the shapes of
:mod:`pyql.kb.observation`; :class:`pyql.kb.base.KB` only sends the text and
hands the rows over, so every backend answers alike.

======================  ==============================  ===========================
probe                   query                           reader
======================  ==============================  ===========================
observation             :func:`observation_query`       :func:`read_observation`, :func:`read_joined_rows`
bounded rows            :func:`bounded_rows_query`      :func:`read_rows`
result rows             :func:`rows_query`              :func:`read_rows`
relations               :func:`relations_query`         :func:`read_relations`
one relation (ASK)      :func:`relation_ask_query`      (the engine's yes/no)
value kinds             :func:`value_kinds_query`       :func:`read_value_kinds`
labels                  :func:`labels_query`            :func:`read_labels`
the KB's profile        :func:`profile_sample_query`    :func:`read_profile_sample`
an entity (ASK)         :func:`entity_ask_query`        (the engine's yes/no)
operands of arithmetic  :func:`operand_stats_query`     :func:`read_operand_stats`
units of quantities     :func:`quantity_units_query`    :func:`read_quantity_units`
time points             :func:`time_points_query`       :func:`read_time_points`
candidates (a batch)    :func:`candidates_query`        :func:`read_candidates`
======================  ==============================  ===========================

The variables a probe binds for itself start with ``__`` (``?__count_x``,
``?__label_x``, ``?__rows``, ``?__r`` ...), a prefix a query's own
variables may not use.

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
    >>> text, variables = observation_query(q)
    >>> [str(v) for v in variables], f"?{COUNT_PREFIX}c" in text
    (['?c'], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Protocol, Sequence

import pyql.builder.escape as escape
from pyql.builder.compiler import INDENT, Block, CompilableQuery, prefix_lines, term_sparql
from pyql.errors import EngineError, QueryError
from pyql.kb.observation import JoinedRows, Relations, Value, VariableValues, joined_rows
from pyql.builder.profiles import Profile, profile_of_iris
from pyql.builder.steps import Step
from pyql.builder.kind import kind_of
from pyql.builder.kinds.aggregate import Aggregate
from pyql.builder.kinds.fact import Fact
from pyql.builder.terms import DATE_TYPES, IRI, Literal, Term, Variable

__all__ = [
    "COUNT_PREFIX",
    "ROWS_VAR",
    "LABEL_PREFIX",
    "SAMPLE_ROWS_PER_VALUE",
    "RELATION_EDGES",
    "HIDDEN_MARK",
    "NATIVE_ORDER_KINDS",
    "ValueOf",
    "engine_number",
    "entities_relations_query",
    "label_pattern",
    "observed_variables",
    "unlabelled",
    "observation_rows",
    "observation_query",
    "read_observation",
    "read_joined_rows",
    "bounded_rows_query",
    "rows_query",
    "read_rows",
    "relations_query",
    "read_relations",
    "relation_ask_query",
    "value_kinds_query",
    "read_value_kinds",
    "sources_of",
    "labels_query",
    "read_labels",
    "PROFILE_SAMPLE",
    "profile_sample_query",
    "read_profile_sample",
    "entity_ask_query",
    "NUMERIC_ROWS",
    "UNIT_ROWS",
    "TIME_POINT_ROWS",
    "OperandValues",
    "OperandStats",
    "operand_stats_query",
    "read_operand_stats",
    "quantity_units_query",
    "read_quantity_units",
    "time_points_query",
    "read_time_points",
    "CANDIDATE_VAR",
    "CANDIDATE_ROWS",
    "candidates_query",
    "read_candidates",
]

Row = Mapping[str, Term]
ValueOf = Callable[[Term, "Term | None"], Value]
"""How a KB wraps a result term and its label (:meth:`pyql.kb.base.KB.value`)."""

#: The variable prefix of an observation's counts (``?__count_<var>``).
COUNT_PREFIX = "__count_"
#: The variable of an observation's row count.
ROWS_VAR = "__rows"
#: The variable prefix of a value's label (``?__label_<var>``) in observations and rows.
LABEL_PREFIX = "__label_"
#: The variable that marks an observation's joined rows (bound to 1 in the rows branch only).
ROW_MARK = "__row"
#: Rows an observation's sample reads per value shown.
SAMPLE_ROWS_PER_VALUE = 100
RELATION_EDGES = 10_000
"""Edges read per direction by one relations query (:func:`relations_query`)."""
HIDDEN_MARK = "hidden"
"""What a relations query binds ``?__r`` to for an edge whose relation the profile hides."""


def engine_number(term: Term | None) -> float:
    """A number the engine returned (a count).

    Raises:
        EngineError: when the engine gave something else.

    Example:
        >>> engine_number(Literal("42", escape.XSD + "integer"))
        42.0
    """
    if isinstance(term, Literal):
        try:
            return float(term.lexical)
        except ValueError:
            pass
    raise EngineError(f"expected a number from the engine, got {term}")


def label_pattern(var: Variable, label: Variable, profile: Profile) -> str:
    """The optional pattern binding ``label`` to a label of ``var`` in the profile's language (or one without a language).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> label_pattern(Variable("e"), Variable("l"), FREEBASE).startswith("OPTIONAL { ?e <http://rdf.freebase.com/ns/type.object.name> ?l .")
        True
    """
    path = "|".join(profile.sparql_iri(p) for p in profile.label_predicates)
    lang = escape.literal(profile.label_lang)
    return (
        f"OPTIONAL {{ {var.sparql()} {path} {label.sparql()} . "
        f'FILTER(LANG({label.sparql()}) = "" || LANGMATCHES(LANG({label.sparql()}), {lang})) }}'
    )


def _indent(text: str, indent: str) -> str:
    return "".join(indent + line + "\n" for line in text.split("\n") if line)


# ---------------------------------------------------------------------------
# The observation: values, labels and counts of the visible variables
# ---------------------------------------------------------------------------


def observed_variables(query: CompilableQuery) -> list[Variable]:
    """The variables an observation shows: the answer once one is set, else every visible one.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y")
        >>> [str(v) for v in observed_variables(q)], [str(v) for v in observed_variables(q.set_answer("?y"))]
        (['?x', '?y'], ['?y'])
    """
    scope = query.scope
    block = scope.block
    return [scope.answer] if scope.answer in block.variables else list(block.variables)


def observation_rows(count_cap: int, row_cap: int | None = None) -> int:
    """Rows of the join an observation's counts read (:func:`observation_query`): ``max(row_cap, count_cap + 1)``.

    Example:
        >>> observation_rows(1000), observation_rows(1000, 5000), observation_rows(1000, 10)
        (1001, 5000, 1001)
    """
    return max(int(row_cap or 0), int(count_cap) + 1)


def observation_query(
    query: CompilableQuery, per_variable: int = 10, count_cap: int = 1000, row_cap: int | None = None
) -> tuple[str, list[Variable]]:
    """One bounded query giving, for every visible variable (only the answer
    variable once one is set), up to ``per_variable`` distinct values with
    labels, and its number of distinct values counted up to ``count_cap``.

    One row of counts (``?__count_<var>`` of every variable, ``?__rows``), one row per sampled value
    (``?<var>``, label in ``?__label_<var>``): :func:`read_observation`; with several variables, the first
    distinct rows over them (``?__row``): :func:`read_joined_rows`. A query with at most ``per_variable``
    rows anyway (an argmax, a count without group) is instead all its rows with labels
    (:func:`bounded_rows_query`, no count row): the counts are exact, and the rows are computed once.

    Every count reads at most the first ``rows = max(row_cap, count_cap +
    1)`` rows of the join (``row_cap`` None: ``count_cap + 1``): the counts
    are ``COUNT(DISTINCT ?v)`` of every variable over the first ``rows + 1``
    rows, in one branch next to ``COUNT(*)`` of those rows (``?__rows``),
    which says whether they were the whole join. So a variable with few
    distinct values over a huge join (``?g`` in ``?p gender ?g``: 2 values,
    10^6 rows) costs ``rows`` rows, not the join. Samples read the first
    ``max(rows, 100 * per_variable)`` rows. When the join is longer and a
    count is not above ``count_cap``, it is a lower bound ("at least 2").

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
        >>> text, variables = observation_query(q)
        >>> [str(v) for v in variables], text.count("UNION"), "LIMIT 1002" in text
        (['?c'], 1, True)
        >>> text = observation_query(q.add_fact("?c", "a.b.since", "?t").add_max("?t"))[0]
        >>> text.count("UNION"), COUNT_PREFIX in text, text.count("OPTIONAL")
        (0, False, 2)
        >>> grouped = q.add_fact("?x", "a.b.c", "?y").add_sum("?y", "?total", group_by=["?c"])
        >>> observation_query(grouped)[0].count("OPTIONAL")  # none for ?total: a number has no label
        1
        >>> text = observation_query(q, row_cap=5000)[0]
        >>> "LIMIT 5000" in text, "LIMIT 5001" in text, f"?{ROWS_VAR}" in text, text.count("UNION")
        (True, True, True, 1)
    """
    if per_variable < 1:
        raise QueryError(f"per_variable must be ≥ 1, got {per_variable}")
    if count_cap < 1:
        raise QueryError(f"count_cap must be ≥ 1, got {count_cap}")
    profile = query.profile
    block = query.scope.block
    variables = observed_variables(query)
    if not variables:
        raise QueryError("the query has no variable to observe yet; add a fact with a variable such as ?x")
    bound = block.max_rows
    if bound is not None and bound <= per_variable:
        return bounded_rows_query(query)[0], variables
    core = block.pattern(profile)
    rows = observation_rows(count_cap, row_cap)
    # Samples read enough rows to find per_variable values where the join has them.
    sample_rows = max(rows, SAMPLE_ROWS_PER_VALUE * int(per_variable))
    branches = [_counts_branch(core, variables, rows + 1), *_sample_branches(query, core, variables, sample_rows, per_variable)]
    branches += [_rows_branch(core, variables, sample_rows, per_variable + 1)] if len(variables) > 1 else []
    body = "\nUNION\n".join(branches)
    return prefix_lines(profile) + "SELECT * WHERE {\n" + _indent(body, INDENT) + "}\n", variables


def _sample_branches(query: CompilableQuery, core: str, variables: Sequence[Variable], sample_rows: int, per_variable: int) -> list[str]:
    """A sample branch per variable, labelled unless it is an aggregate's or a computed literal (:func:`unlabelled`)."""
    plain = unlabelled(query)
    return [_sample_branch(core, v, v in plain, sample_rows, per_variable, query.profile) for v in variables]


def _first_rows(core: str, projected: Sequence[Variable], n: int) -> str:
    """The first ``n`` rows of the join ``core`` (a sub-SELECT: engines stop reading at ``n``)."""
    head = "SELECT " + " ".join(v.sparql() for v in projected) + " WHERE\n"
    return "{\n" + _indent(head + _indent(core, INDENT) + f"LIMIT {n}\n", INDENT) + "}\n"


def _counts_branch(core: str, variables: Sequence[Variable], window: int) -> str:
    """Every count, and the rows, from the same first ``window`` rows: one window read once.

    ``COUNT(DISTINCT)`` skips an unbound value (an aggregate's error): it is no value.
    """
    counts = " ".join(f"(COUNT(DISTINCT {v.sparql()}) AS ?{COUNT_PREFIX}{v.name})" for v in variables)
    counted = f"SELECT {counts} (COUNT(*) AS ?{ROWS_VAR}) WHERE\n" + _indent(_first_rows(core, variables, window), INDENT)
    return "{\n" + _indent(counted, INDENT) + "}"


def _rows_branch(core: str, variables: Sequence[Variable], sample_rows: int, limit: int) -> str:
    """The first ``limit`` distinct rows over ``variables`` among the first ``sample_rows`` rows, marked by ``?__row``.

    Which values go together (each variable's list is sorted on its own);
    ``limit`` is one more than shown, to know whether there are more.
    """
    projected = " ".join(v.sparql() for v in variables)
    rows = f"SELECT DISTINCT {projected} (1 AS ?{ROW_MARK}) WHERE\n" + _indent(_first_rows(core, variables, sample_rows), INDENT) + f"LIMIT {int(limit)}"
    return "{\n" + _indent(rows, INDENT) + "}"


def _sample_branch(core: str, v: Variable, computed: bool, sample_rows: int, per_variable: int, profile: Profile) -> str:
    """Up to ``per_variable`` values of ``v`` from the first ``sample_rows`` rows, with labels unless ``computed``."""
    if computed:
        # An aggregate's result is a literal (or unbound after an error):
        # no label to look up, and an OPTIONAL on a possibly unbound
        # variable would match every label in the KB.
        sample = f"SELECT DISTINCT {v.sparql()} WHERE\n" + _indent(_first_rows(core, [v], sample_rows), INDENT) + f"LIMIT {int(per_variable)}"
        return "{\n" + _indent(sample, INDENT) + "}"
    raw = Variable("__l")
    sample = (
        f"SELECT {v.sparql()} (SAMPLE({raw.sparql()}) AS ?{LABEL_PREFIX}{v.name}) WHERE {{\n"
        f"{INDENT}{{ SELECT DISTINCT {v.sparql()} WHERE\n"
        + _indent(_first_rows(core, [v], sample_rows), INDENT * 2)
        + f"{INDENT}  LIMIT {int(per_variable)} }}\n"
        f"{INDENT}{label_pattern(v, raw, profile)}\n"
        f"}} GROUP BY {v.sparql()}"
    )
    return "{\n" + _indent(sample, INDENT) + "}"


def read_observation(
    rows: Iterable[Row],
    variables: Sequence[Variable],
    value: ValueOf,
    per_variable: int,
    count_cap: int,
    row_cap: int | None = None,
) -> tuple[VariableValues, ...]:
    """The values of every variable from the rows of :func:`observation_query` (same caps).

    At most ``per_variable`` values each (even from an engine that ignores
    LIMIT), sorted; a count above ``count_cap`` is "more than" the cap, and
    a count taken over the first rows of a longer join is partial.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> n = lambda k: Literal(str(k), XSD + "integer")
        >>> rows = [{"__count_c": n(2), "__rows": n(2)}, {"c": n(7)}, {"c": n(5)}]
        >>> [str(v) for v in read_observation(rows, [Variable("c")], lambda t, l: Value(t), 10, 1000)]
        ['The value of variable ?c is [5, 7]']
    """
    rows_read = observation_rows(count_cap, row_cap)
    rows_seen = 0
    counts: dict[str, int] = {}
    samples: dict[str, list[Value]] = {v.name: [] for v in variables}
    seen: dict[str, set[Term]] = {v.name: set() for v in variables}
    for row in rows:
        if ROW_MARK in row:  # a joined row (read_joined_rows)
            continue
        if ROWS_VAR in row:  # the counts' row
            rows_seen = int(engine_number(row[ROWS_VAR]))
            counts.update((key[len(COUNT_PREFIX) :], int(engine_number(row[key]))) for key in row if key.startswith(COUNT_PREFIX))
            continue
        for v in variables:  # a sample row binds one variable
            term = row.get(v.name)
            if term is not None and term not in seen[v.name] and len(samples[v.name]) < per_variable:
                seen[v.name].add(term)
                samples[v.name].append(value(term, row.get(LABEL_PREFIX + v.name)))
    out = []
    for v in variables:
        values = sorted(samples[v.name], key=Value.sort_key)
        total = max(counts.get(v.name, 0), len(values))
        capped = total > count_cap  # more than count_cap distinct values in the rows read
        # The join had more rows than were read: a count below the cap is what those rows hold.
        partial = not capped and rows_seen > rows_read
        out.append(VariableValues(v, tuple(values), count_cap if capped else total, capped, partial))
    return tuple(out)


def read_joined_rows(
    rows: Iterable[Row], variables: Sequence[Variable], value: ValueOf, per_variable: int, known: Iterable[VariableValues] = ()
) -> JoinedRows | None:
    """The joined rows of an observation (the ``?__row`` rows of :func:`observation_query`), at most ``per_variable``.

    A value keeps the label the variable's sample gave it (``known``: the
    variables' lists); a variable with one value is left out
    (:func:`pyql.kb.observation.joined_rows`). None when fewer than two vary.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> n = lambda k: Literal(str(k), XSD + "integer")
        >>> rows = [{"a": n(2), "b": n(9), ROW_MARK: n(1)}, {"a": n(1), "b": n(7), ROW_MARK: n(1)}, {"a": n(5)}]
        >>> print(read_joined_rows(rows, [Variable("a"), Variable("b")], lambda t, l: Value(t), 10))
        Rows (?a, ?b): (1, 7), (2, 9)
    """
    known = tuple(known)
    labelled = {x.term: x for vv in known for x in vv.values}
    found: list[tuple[Value | None, ...]] = []
    for row in rows:
        if ROW_MARK in row:
            terms = [row.get(v.name) for v in variables]
            found.append(tuple(None if t is None else labelled.get(t) or value(t, None) for t in terms))
    return joined_rows(tuple(variables), found, known, per_variable)


# ---------------------------------------------------------------------------
# Rows with labels: all rows of a bounded query, or the answers
# ---------------------------------------------------------------------------


def bounded_rows_query(query: CompilableQuery) -> tuple[str, list[Variable]]:
    """All rows of a query whose rows are bounded (``Block.max_rows``), over
    every visible variable, with a label per variable (:func:`read_rows` reads them).

    These rows answer any later step that only changes the projection
    (``set_answer``, ``execute()``) without evaluating the join again
    (:class:`~pyql.kb.observation.BoundedRows`).

    Raises:
        QueryError: when the query's rows are not bounded, or it has no variable.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y").add_max("?y").set_answer("?x")
        >>> text, variables = bounded_rows_query(q)
        >>> [str(v) for v in variables], text.count("LIMIT 1")
        (['?x', '?y'], 2)
    """
    block = query.scope.block
    bound = block.max_rows
    if bound is None:
        raise QueryError("the query's rows are not bounded (no argmax, no count without group)")
    variables = list(block.variables)
    if not variables:
        raise QueryError("the query has no variable to return yet; add a fact with a variable such as ?x")
    return prefix_lines(query.profile) + _labelled_rows(block, variables, bound, query.profile, unlabelled(query)), variables


def rows_query(query: CompilableQuery, limit: int) -> tuple[str, list[Variable]]:
    """The query's projected rows with a label per variable, at most ``limit`` rows (:func:`read_rows` reads them).

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y").set_answer("?x")
        >>> [str(v) for v in rows_query(q, 5)[1]]
        ['?x']
    """
    scope = query.scope
    block = scope.block
    if scope.answer is not None and scope.answer in block.variables:
        projected = [scope.answer]
    else:
        projected = list(block.variables)
    if not projected:
        raise QueryError("the query has no variable to return yet; add a fact with a variable such as ?x")
    return prefix_lines(query.profile) + _labelled_rows(block, projected, limit, query.profile, unlabelled(query)), projected


def unlabelled(query: CompilableQuery) -> frozenset[Variable]:
    """The variables an observation asks no label of: an aggregate's results (``computed``) and what a step
    computes into a literal (its kind's ``literal_variables`` hook: a BIND of arithmetic, a converted amount).

    A number has no label, and an engine asked for the label of a variable a BIND
    made (which it cannot know to be bound) looks labels up for every labelled
    resource of the KB before it joins (pyoxigraph: 0.3 s at 10^6 statements).

    Example:
        >>> from pyql.builder.query import Query
        >>> from pyql.builder.expressions import sub
        >>> q = Query("wikidata").add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021)
        >>> sorted(str(v) for v in unlabelled(q.add_bind(sub("b", "a"), "d"))), sorted(unlabelled(q))
        (['?d'], [])
    """
    out = set(query.scope.block.computed)
    for step in getattr(query, "steps", ()):
        kind = kind_of(step)
        if kind is not None and kind.literal_variables is not None:
            out.update(kind.literal_variables(step))
    return frozenset(out)


def _labelled_rows(block: Block, projected: Sequence[Variable], limit: int, profile: Profile, plain: frozenset[Variable]) -> str:
    """SELECT of the block's distinct ``projected`` rows (at most ``limit``), a label per variable (none of ``plain``)."""
    names = " ".join(v.sparql() for v in projected)
    labelled = [v for v in projected if v not in plain]  # aggregate results, computed literals: no label
    samples = "".join(f" (SAMPLE(?__l_{v.name}) AS ?{LABEL_PREFIX}{v.name})" for v in labelled)
    labels = "".join(INDENT + label_pattern(v, Variable(f"__l_{v.name}"), profile) + "\n" for v in labelled)
    return (
        f"SELECT {names}{samples} WHERE {{\n"
        + f"{INDENT}{{ SELECT DISTINCT {names} WHERE\n"
        + _indent(block.pattern(profile), INDENT * 2)
        + f"{INDENT}  LIMIT {int(limit)} }}\n"
        + labels
        + f"}} GROUP BY {names}\n"
    )


def read_rows(rows: Sequence[Row], variables: Sequence[Variable], value: ValueOf, limit: int) -> list[dict[str, Value | None]]:
    """The first ``limit`` rows of :func:`bounded_rows_query` or :func:`rows_query`, a labelled value per variable.

    The limit holds even where the engine ignored the query's LIMIT.

    Example:
        >>> rows = [{"x": Literal("a"), "__label_x": Literal("A")}, {}]
        >>> value = lambda term, label: Value(term, label.lexical if label else None)
        >>> [{k: v and v.label for k, v in r.items()} for r in read_rows(rows, [Variable("x")], value, 5)]
        [{'x': 'A'}, {'x': None}]
    """
    return [
        {
            v.name: (value(row[v.name], row.get(LABEL_PREFIX + v.name)) if row.get(v.name) is not None else None)
            for v in variables
        }
        for row in rows[:limit]
    ]


# ---------------------------------------------------------------------------
# Relations: the one-hop relations of an entity, a literal or a variable
# ---------------------------------------------------------------------------


def _binding_block(target: Variable, query: CompilableQuery | None) -> Block:
    """The block of ``query`` that binds ``target``, for a look at its relations.

    Raises:
        QueryError: no query, or ``target`` is not one of its variables (the
            message lists the existing ones).
    """
    if query is None:
        raise QueryError(f"the relations of {target} need the query that binds it")
    block = query.scope.block
    if target not in block.variables:
        existing = ", ".join(str(v) for v in block.variables) or "none yet"
        raise QueryError(f"{target} is not a variable of the query; existing variables: {existing}")
    return block


def relations_query(
    target: Term,
    query: CompilableQuery | None,
    profile: Profile,
    limit: int = 2000,
    sample: int = 100,
    edges: int = RELATION_EDGES,
    values: Sequence[Term] | None = None,
) -> str:
    """One bounded query for the one-hop relations of an entity, a literal or a variable.

    The relations are those of a capped sample of edges: at most
    ``edges + 1`` per direction for an entity (the first ones the engine's
    index gives, so a hub with millions of edges costs as much as one with
    ``edges``), at most ``2 * edges + 1`` in all for a variable, whose
    relations are gathered from up to ``sample`` of its current values. Rows
    bind ``?__dir`` ("forward"/"backward"), ``?__r`` and ``?__n``, the
    number of sampled edges with that relation; an edge whose relation the
    profile hides counts in a row whose ``?__r`` is the literal
    ``"hidden"``, so the numbers add up to the edges read
    (:func:`read_relations` reads the rows). At most ``limit`` rows.
    ``values``, for a variable whose values are already known (the bounded
    rows of an argmax), replaces the sub-SELECT that samples them, so the
    argmax is not evaluated again.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> text = relations_query(IRI("http://rdf.freebase.com/ns/m.0crbvqz"), None, FREEBASE)
        >>> text.count("UNION"), "STRSTARTS" in text, text.count("LIMIT 10001")
        (1, True, 2)
        >>> from pyql.builder.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "m.0crbvqz")
        >>> "OPTIONAL {" in relations_query(Variable("x"), q, FREEBASE)
        True
    """
    edge_cap = int(edges)
    if edge_cap < 1:
        raise QueryError(f"edges must be ≥ 1, got {edges}")
    if isinstance(target, Variable):
        sampled = _variable_edges(target, _binding_block(target, query), query, profile, sample, edge_cap, values)
    else:
        sampled = _term_edges(target, profile, edge_cap)
    return _relations_of_edges(sampled, profile, "", int(limit))


def entities_relations_query(targets: Sequence[Term], profile: Profile, limit: int = 2000, edges: int = RELATION_EDGES) -> str:
    """One bounded query for the one-hop relations of several entities (or literals): each one's sample of
    edges as :func:`relations_query` reads it, told apart by ``?__t`` (the target's index in ``targets``);
    at most ``limit`` rows a target.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> fb = "http://rdf.freebase.com/ns/"
        >>> text = entities_relations_query([IRI(fb + "m.0crbvqz"), IRI(fb + "m.0dkl7")], FREEBASE)
        >>> text.count("LIMIT 10001"), "BIND(1 AS ?__t)" in text, text.rstrip().endswith("LIMIT 4000")
        (4, True, True)
    """
    edge_cap = int(edges)
    if edge_cap < 1:
        raise QueryError(f"edges must be ≥ 1, got {edges}")
    arms = [
        "{\n" + _indent(_term_edges(target, profile, edge_cap), INDENT) + f"{INDENT}BIND({index} AS ?__t)\n}}"
        for index, target in enumerate(targets)
    ]
    return _relations_of_edges("\nUNION\n".join(arms), profile, "?__t ", int(limit) * max(len(targets), 1))


def _relations_of_edges(sampled: str, profile: Profile, keys: str, limit: int) -> str:
    """The relations query around sampled edges (``?__dir``, ``?__p``, and the ``keys`` variables): their
    relations named (a hidden one as :data:`HIDDEN_MARK`) and counted."""
    hidden = " || ".join(f"STRSTARTS(STR(?__p), {escape.literal(prefix)})" for prefix in profile.hidden_relation_prefixes)
    named = f'BIND(IF({hidden}, "{HIDDEN_MARK}", ?__p) AS ?__r)' if hidden else "BIND(?__p AS ?__r)"
    # Grouped by relation first, so the hidden-relation test runs once per
    # relation, not once per sampled edge.
    grouped = f"{{ SELECT {keys}?__dir ?__p (COUNT(*) AS ?__k) WHERE {{\n" + _indent(sampled, INDENT) + f"}} GROUP BY {keys}?__dir ?__p }}"
    return (
        prefix_lines(profile)
        + f"SELECT {keys}?__dir ?__r (SUM(?__k) AS ?__n) WHERE {{\n"
        + _indent(grouped + "\n" + named, INDENT)
        + f"}}\nGROUP BY {keys}?__dir ?__r\nLIMIT {limit}\n"
    )


def _variable_edges(
    target: Variable, block: Block, query: CompilableQuery | None, profile: Profile, sample: int, edge_cap: int,
    values: Sequence[Term] | None,
) -> str:
    """The sampled edges (``?__dir``, ``?__p``) of up to ``sample`` values of a variable, at most ``2 * edge_cap + 1``."""
    subject = target.sparql()
    forward = f'{{ {subject} ?__p ?__o . BIND("forward" AS ?__dir) }}'
    backward = f'{{ ?__s ?__p {subject} . BIND("backward" AS ?__dir) }}'
    if values is not None:
        known = " ".join(term_sparql(v, profile) for v in list(values)[: int(sample)])
        source = f"{INDENT}VALUES {subject} {{ {known} }}\n"
    else:
        source = (
            f"{INDENT}{{ SELECT DISTINCT {subject} WHERE\n"
            + _indent(block.pattern(query.profile), INDENT * 2)  # type: ignore[union-attr]
            + f"{INDENT}  LIMIT {int(sample)} }}\n"
        )
    # rdflib evaluates both sides of a join with a sub-SELECT in full (here:
    # every triple, twice) but an OPTIONAL once per row, with the sampled
    # value bound. BOUND drops values without relations: the join's rows.
    return (
        "{ SELECT ?__dir ?__p WHERE {\n"
        + source
        + f"{INDENT}OPTIONAL {{\n"
        + _indent(f"{forward}\nUNION\n{backward}", INDENT * 2)
        + f"{INDENT}}}\n"
        + f"{INDENT}FILTER(BOUND(?__p))\n"
        + f"}} LIMIT {2 * edge_cap + 1} }}"
    )


def _term_edges(target: Term, profile: Profile, edge_cap: int) -> str:
    """The sampled edges (``?__dir``, ``?__p``) of an entity or a literal: at most ``edge_cap + 1`` per direction."""
    subject = term_sparql(target, profile)

    def side(pattern: str, direction: str) -> str:
        return (
            "{\n"
            + f"{INDENT}{{ SELECT ?__p WHERE {{ {pattern} }} LIMIT {edge_cap + 1} }}\n"
            + f'{INDENT}BIND("{direction}" AS ?__dir)\n'
            + "}"
        )

    backward_side = side(f"?__s ?__p {subject} .", "backward")
    if isinstance(target, Literal):
        return backward_side
    return side(f"{subject} ?__p ?__o .", "forward") + "\nUNION\n" + backward_side


def read_relations(rows: Sequence[Row], target: Term, edges: int, limit: int, shorten: Callable[[str], str]) -> Relations:
    """The relations of ``target`` from the rows of :func:`relations_query` (same ``edges`` and ``limit``).

    Hidden relations are left out. The list is ``truncated`` (it may be
    incomplete) when ``limit`` rows came back, or when more edges were read
    than the cap: the sample asks for one edge more than the cap, so reading
    it means there were more.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> fb = "http://rdf.freebase.com/ns/"
        >>> rows = [{"__dir": Literal("forward"), "__r": IRI(fb + "a.b.c"), "__n": Literal("3", XSD + "integer")},
        ...         {"__dir": Literal("backward"), "__r": Literal("hidden"), "__n": Literal("9", XSD + "integer")}]
        >>> print(read_relations(rows, IRI(fb + "m.0x"), 10, 2000, lambda iri: iri[len(fb):]))
        {'forward': ['a.b.c'], 'backward': []}
        >>> read_relations(rows, IRI(fb + "m.0x"), 5, 2000, str).truncated
        True
    """
    rows = rows[:limit]  # the LIMIT holds even where the engine ignored it
    found: dict[str, set[str]] = {"forward": set(), "backward": set()}
    read = {"forward": 0, "backward": 0}
    for row in rows:
        relation = row.get("__r")
        direction = row.get("__dir")
        if direction is None:
            continue
        side = "forward" if str(direction) == "forward" else "backward"
        number = row.get("__n")
        read[side] += int(engine_number(number)) if number is not None else 1
        if isinstance(relation, IRI):  # not the edges of hidden relations
            found[side].add(shorten(relation.value))
    if isinstance(target, Variable):
        sampled_all = read["forward"] + read["backward"] > 2 * edges
    else:
        sampled_all = max(read.values()) > edges
    truncated = len(rows) >= limit or sampled_all
    return Relations(tuple(sorted(found["forward"])), tuple(sorted(found["backward"])), truncated=truncated)


def relation_ask_query(
    target: Term,
    relation: Term,
    direction: str | None,
    query: CompilableQuery | None,
    profile: Profile,
    sample: int = 100,
) -> str:
    """One bounded ASK: does ``target`` have ``relation`` (in ``direction``)? The engine's yes/no is the answer.

    It completes a relation list read from a capped sample
    (:func:`relations_query`): for an entity or a literal, one index lookup;
    for a variable, whether one of the same ``sample`` values it reads
    relations of has the relation. ``direction`` is "forward" (the target
    is the subject), "backward" (the object) or None (either).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> fb = "http://rdf.freebase.com/ns/"
        >>> text = relation_ask_query(IRI(fb + "m.0x"), IRI(fb + "a.b.c"), "backward", None, FREEBASE)
        >>> text.strip().splitlines()[-1]
        'ASK WHERE { ?__s <http://rdf.freebase.com/ns/a.b.c> <http://rdf.freebase.com/ns/m.0x> . }'
    """
    if direction not in ("forward", "backward", None):
        raise QueryError(f"direction must be 'forward', 'backward' or None, not {direction!r}")
    if not isinstance(relation, IRI):
        raise QueryError(f"the relation to look for must be a relation name such as a.b.c, not {relation}")
    rel = term_sparql(relation, profile)
    if isinstance(target, Variable):
        block = _binding_block(target, query)
        subject = target.sparql()
    else:
        subject = term_sparql(target, profile)
    patterns = []
    if direction in ("forward", None) and not isinstance(target, Literal):
        patterns.append(f"{subject} {rel} ?__o .")
    if direction in ("backward", None):
        patterns.append(f"?__s {rel} {subject} .")
    if not patterns:
        return prefix_lines(profile) + "ASK WHERE { FILTER(false) }\n"  # a literal has no forward edge
    if isinstance(target, Variable):
        exists = " || ".join(f"EXISTS {{ {p} }}" for p in patterns)
        return (
            prefix_lines(profile)
            + "ASK WHERE {\n"
            + f"{INDENT}{{ SELECT DISTINCT {subject} WHERE\n"
            + _indent(block.pattern(query.profile), INDENT * 2)  # type: ignore[union-attr]
            + f"{INDENT}  LIMIT {int(sample)} }}\n"
            + f"{INDENT}FILTER({exists})\n"
            + "}\n"
        )
    body = " UNION ".join(f"{{ {p} }}" for p in patterns) if len(patterns) > 1 else patterns[0]
    return prefix_lines(profile) + f"ASK WHERE {{ {body} }}\n"


# ---------------------------------------------------------------------------
# Value kinds: whether a relation's values are of one kind (a native argmax or filter)
# ---------------------------------------------------------------------------

#: The kinds of values an engine orders alike in its own order (a native
#: argmax, :attr:`pyql.builder.steps.Argmax.native`): numbers of any numeric type, or
#: one date type (mixing two date types needs the ISO-text key).
NATIVE_ORDER_KINDS = frozenset(
    {"numeric"}
    | {
        "http://www.w3.org/2001/XMLSchema#" + t
        for t in ("date", "dateTime", "gYear", "gYearMonth", "time")
    }
)


def value_kinds_query(relation: IRI, profile: Profile, edges: int, limit: int = 2) -> str:
    """The distinct kinds of the objects of a relation's first ``edges`` edges (``?__k``, at most ``limit``),
    and its edges counted up to ``edges + 1`` (``?__n``); :func:`read_value_kinds` reads them.

    A kind is ``"numeric"`` for a number of any type, a literal's datatype
    IRI, or ``"node"`` for an entity; a literal without a datatype the
    engine will name gives no ``?__k``. With ``limit=2`` the answer says
    whether the edges read hold values of one kind only, and ``?__n``
    whether they were all the relation's edges. The engine stops at a
    second kind; with one kind it reads all ``edges``
    (:meth:`pyql.kb.KB.value_kind` first reads a few, and caches the answer).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> text = value_kinds_query(IRI("http://rdf.freebase.com/ns/people.person.date_of_birth"), FREEBASE, 20)
        >>> "LIMIT 20 }" in text, "LIMIT 21 }" in text, text.count("UNION")
        (True, True, 1)
    """
    if not isinstance(relation, IRI):
        raise QueryError(f"the relation must be a relation name such as a.b.c, not {relation}")
    numeric, node = escape.literal("numeric"), escape.literal("node")
    rel = term_sparql(relation, profile)

    def first(n: int) -> str:
        return f"{{ SELECT ?__o WHERE {{ ?__s {rel} ?__o }} LIMIT {n} }}"

    kind = f"IF(isNumeric(?__o), {numeric}, IF(isLiteral(?__o), STR(DATATYPE(?__o)), {node}))"
    return (
        prefix_lines(profile)
        + "SELECT * WHERE {\n"
        + f"{INDENT}{{ SELECT DISTINCT ?__k WHERE {{ {first(int(edges))} BIND({kind} AS ?__k) }} LIMIT {int(limit)} }}\n"
        + f"{INDENT}UNION\n"
        + f"{INDENT}{{ SELECT (COUNT(*) AS ?__n) WHERE {first(int(edges) + 1)} }}\n"
        + "}\n"
    )


def read_value_kinds(rows: Iterable[Row], edges: int) -> tuple[list[str | None], bool]:
    """The kinds (at most 2) from the rows of :func:`value_kinds_query`, and whether its ``edges`` were all the edges.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> read_value_kinds([{"__k": Literal("numeric")}, {"__n": Literal("21", XSD + "integer")}], 20)
        (['numeric'], False)
    """
    kinds: list[str | None] = []
    count = 0
    for row in rows:
        if "__n" in row:
            count = int(engine_number(row["__n"]))
        else:
            k = row.get("__k")
            kinds.append(k.lexical if isinstance(k, Literal) else None)
    return kinds, count <= edges


def sources_of(var: Variable, steps: Sequence[Step]) -> tuple[tuple[IRI, ...], bool]:
    """Where a variable's values come from: the relations it is the object of, and whether an aggregate made it.

    Every value of ``var`` is an object of each relation returned (facts
    are joined, never optional), so a relation whose objects are all of one
    kind makes ``var`` one kind (:func:`value_kinds_query` asks); a COUNT,
    SUM or AVG result is a number. An aggregation that does not group by
    ``var`` starts afresh: the facts before it bound another variable of the
    same name.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query().add_fact("?p", "people.person.date_of_birth", "?d")
        >>> [r.value.rsplit("/", 1)[1] for r in sources_of(Variable("d"), q.steps)[0]]
        ['people.person.date_of_birth']
        >>> counted = q.add_count("?p", "?n")
        >>> sources_of(Variable("n"), counted.steps), sources_of(Variable("d"), counted.steps)
        (((), True), ((), False))
        >>> [r.value.rsplit("/", 1)[1] for r in sources_of(Variable("d"), counted.add_fact("?z", "a.b.c", "?d").steps)[0]]
        ['a.b.c']
    """
    relations: list[IRI] = []
    aggregated = False
    for s in steps:
        if isinstance(s, Fact) and s.tail == var and isinstance(s.relation, IRI):
            relations.append(s.relation)
        elif isinstance(s, Aggregate) and var not in s.group_by:
            # The rows so far became a sub-SELECT: a ?var after it is its result, or a new variable.
            relations = []
            aggregated = s.new_var == var and s.func.upper() in ("COUNT", "SUM", "AVG")
    return tuple(relations), aggregated


# ---------------------------------------------------------------------------
# Labels of entities
# ---------------------------------------------------------------------------


def labels_query(terms: Sequence[Term], profile: Profile) -> str:
    """One query for the labels of the given IRIs (``?__e`` and ``?__label``; :func:`read_labels` reads them).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> "VALUES ?__e" in labels_query([IRI("http://rdf.freebase.com/ns/m.0crbvqz")], FREEBASE)
        True
    """
    values = " ".join(term_sparql(t, profile) for t in terms if isinstance(t, IRI))
    entity = Variable("__e")
    return (
        prefix_lines(profile)
        + "SELECT ?__e (SAMPLE(?__l) AS ?__label) WHERE {\n"
        + f"{INDENT}VALUES ?__e {{ {values} }}\n"
        + f"{INDENT}{label_pattern(entity, Variable('__l'), profile)}\n"
        + "} GROUP BY ?__e\n"
    )


def read_labels(rows: Iterable[Row], wanted: Iterable[Term]) -> dict[Term, str | None]:
    """The label of every ``wanted`` term from the rows of :func:`labels_query` (None where there is none).

    Example:
        >>> e = IRI("http://rdf.freebase.com/ns/m.0x")
        >>> read_labels([{"__e": e, "__label": Literal("X")}], [e, Variable("v")])
        {IRI('http://rdf.freebase.com/ns/m.0x'): 'X', Variable(name='v'): None}
    """
    out: dict[Term, str | None] = {t: None for t in wanted}
    for row in rows:
        entity = row.get("__e")
        label = row.get("__label")
        if entity in out and isinstance(label, Literal):
            out[entity] = label.lexical
    return out


#: Triples the profile probe reads (their subjects and relations tell the KB's namespaces).
PROFILE_SAMPLE = 200


def profile_sample_query(limit: int = PROFILE_SAMPLE) -> str:
    """The profile probe: the subjects and relations of the first ``limit`` triples, one cheap bounded query.

    Example:
        >>> profile_sample_query(5)
        'SELECT ?__s ?__p WHERE { ?__s ?__p ?__o } LIMIT 5'
    """
    return f"SELECT ?__s ?__p WHERE {{ ?__s ?__p ?__o }} LIMIT {int(limit)}"


def read_profile_sample(rows: Iterable[Row]) -> str:
    """The profile the sample's IRIs point to (:func:`pyql.builder.profiles.profile_of_iris`).

    Example:
        >>> read_profile_sample([{"__s": IRI("http://www.wikidata.org/entity/Q64"),
        ...                       "__p": IRI("http://www.wikidata.org/prop/direct/P1082")}])
        'wikidata'
    """
    return profile_of_iris(term.value for row in rows for term in row.values() if isinstance(term, IRI))


def entity_ask_query(entity: IRI, profile: Profile) -> str:
    """An ASK whether an IRI is in the KB at all: the subject or the object of one triple.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> print(entity_ask_query(IRI("http://rdf.freebase.com/ns/m.0crbvqz"), FREEBASE).splitlines()[-1])
        ASK { { <http://rdf.freebase.com/ns/m.0crbvqz> ?__p ?__o } UNION { ?__s ?__p <http://rdf.freebase.com/ns/m.0crbvqz> } }
    """
    node = term_sparql(entity, profile)
    return prefix_lines(profile) + f"ASK {{ {{ {node} ?__p ?__o }} UNION {{ ?__s ?__p {node} }} }}\n"


# ---------------------------------------------------------------------------
# Numbers: what the operands of arithmetic, the units and the time points of quantities hold
# ---------------------------------------------------------------------------

#: Rows of a query the numeric probes read at most (their cost does not grow with the KB).
NUMERIC_ROWS = 1000
#: Distinct (quantity, unit) rows a units probe returns at most.
UNIT_ROWS = 50
#: Distinct (entity, point in time) rows a time-points probe returns at most.
TIME_POINT_ROWS = 50
_WIKIBASE = "http://wikiba.se/ontology#"
_WD_PROP = "http://www.wikidata.org/prop/"


class ExpressionLike(Protocol):
    """What the numeric probes read of an expression (:class:`pyql.builder.expressions.Expression` is one)."""

    def sparql(self, profile: Profile) -> str: ...

    def variables(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class OperandValues:
    """What one variable holds in the rows a probe read: rows where it is ``bound``, a ``number``, a ``date``,
    a ``node`` (an entity or a blank node), and one ``example`` value (None when it has none).

    Example:
        >>> OperandValues(3, 3, 0, 0).kinds()
        {'number'}
    """

    bound: int
    number: int = 0
    date: int = 0
    node: int = 0
    example: Term | None = None

    def kinds(self) -> set[str]:
        """"number", "date", "node", "text" (bound to anything else); {"unbound"} when it has no value.

        Example:
            >>> sorted(OperandValues(3, 1, 0, 0).kinds()), OperandValues(0).kinds()
            (['number', 'text'], {'unbound'})
        """
        if not self.bound:
            return {"unbound"}
        found = {k for k, n in (("number", self.number), ("date", self.date), ("node", self.node)) if n}
        return found | ({"text"} if self.bound > self.number + self.date + self.node else set())


@dataclass(frozen=True)
class OperandStats:
    """What the first rows of a query hold for some variables, divisors and pairs (:func:`operand_stats_query`).

    Attributes:
        rows: rows read (at most :data:`NUMERIC_ROWS`).
        variables: per variable, what it holds (:class:`OperandValues`).
        divisors: per divisor expression: rows where it is ``zero``, rows where it has ``no value``.
        differ: per pair of variables: rows where the two differ.
    """

    rows: int
    variables: tuple[OperandValues, ...]
    divisors: tuple[Mapping[str, int], ...]
    differ: tuple[int, ...]


def _rows_of(query: CompilableQuery, projected: Sequence[Variable], rows: int) -> str:
    """The first ``rows`` rows of the query's pattern over ``projected`` (a sub-SELECT: the engine stops there)."""
    block = query.scope.block
    head = " ".join(v.sparql() for v in projected) or "*"
    return f"{{ SELECT {head} WHERE\n" + _indent(block.pattern(query.profile), INDENT) + f"  LIMIT {int(rows)} }}"


def _count_if(condition: str, name: str) -> str:
    return f"(SUM(IF(COALESCE({condition}, false), 1, 0)) AS ?{name})"


def operand_stats_query(
    query: CompilableQuery,
    variables: Sequence[Variable],
    divisors: Sequence[ExpressionLike] = (),
    pairs: Sequence[tuple[Variable, Variable]] = (),
    rows: int = NUMERIC_ROWS,
) -> str:
    """One bounded query: over the first ``rows`` rows of ``query``, what ``variables`` hold,
    where ``divisors`` (expressions with ``sparql(profile)``) are zero or unbound, and where
    ``pairs`` differ. :func:`read_operand_stats` reads the one row it returns.

    Example:
        >>> from pyql.builder.query import Query
        >>> from pyql.builder.expressions import sub
        >>> q = Query("wikidata").add_quantity("Q64", "P1082", "a").add_quantity("Q64", "P1082", "b")
        >>> text = operand_stats_query(q, [Variable("a")], [sub("a", "b")], [(Variable("a"), Variable("b"))])
        >>> "LIMIT 1000 }" in text, "BIND((?a - ?b) AS ?__div_0)" in text, "?__differ_0" in text
        (True, True, True)
    """
    profile = query.profile
    dates = ", ".join(term_sparql(IRI(t), profile) for t in sorted(DATE_TYPES))
    columns = ["(COUNT(*) AS ?__rows)"]
    for i, v in enumerate(variables):
        x = v.sparql()
        columns += [
            f"(SUM(IF(BOUND({x}), 1, 0)) AS ?__bound_{i})",
            _count_if(f"isNumeric({x})", f"__number_{i}"),
            _count_if(f"DATATYPE({x}) IN ({dates})", f"__date_{i}"),
            _count_if(f"isIRI({x}) || isBlank({x})", f"__node_{i}"),
            f"(SAMPLE({x}) AS ?__example_{i})",
        ]
    binds = []
    for i, divisor in enumerate(divisors):
        binds.append(f"BIND({divisor.sparql(profile)} AS ?__div_{i})")
        columns += [_count_if(f"?__div_{i} = 0", f"__zero_{i}"), f"(SUM(IF(BOUND(?__div_{i}), 0, 1)) AS ?__empty_{i})"]
    columns += [_count_if(f"{a.sparql()} != {b.sparql()}", f"__differ_{i}") for i, (a, b) in enumerate(pairs)]
    projected = list(dict.fromkeys([*variables, *(v for p in pairs for v in p), *_divisor_variables(divisors)]))
    body = _rows_of(query, projected, rows) + "\n" + "\n".join(binds)
    return prefix_lines(profile) + "SELECT " + "\n  ".join(columns) + " WHERE {\n" + _indent(body, INDENT) + "}\n"


def _divisor_variables(divisors: Sequence[ExpressionLike]) -> list[Variable]:
    return [Variable(name) for divisor in divisors for name in divisor.variables()]


def _number(row: Row, key: str) -> int:
    term = row.get(key)
    return int(engine_number(term)) if term is not None else 0


def read_operand_stats(rows: Sequence[Row], variables: int, divisors: int = 0, pairs: int = 0) -> OperandStats:
    """The :class:`OperandStats` from the row of :func:`operand_stats_query` (with as many variables, divisors, pairs).

    Example:
        >>> from pyql.builder.terms import XSD
        >>> n = lambda k: Literal(str(k), XSD + "integer")
        >>> stats = read_operand_stats([{"__rows": n(2), "__bound_0": n(2), "__number_0": n(2), "__zero_0": n(2)}], 1, 1)
        >>> stats.rows, stats.variables[0].number, stats.divisors[0]["zero"]
        (2, 2, 2)
    """
    row: Row = rows[0] if rows else {}
    found = tuple(
        OperandValues(
            *(_number(row, f"__{kind}_{i}") for kind in ("bound", "number", "date", "node")), row.get(f"__example_{i}")
        )
        for i in range(variables)
    )
    divided = tuple({"zero": _number(row, f"__zero_{i}"), "empty": _number(row, f"__empty_{i}")} for i in range(divisors))
    return OperandStats(_number(row, "__rows"), found, divided, tuple(_number(row, f"__differ_{i}") for i in range(pairs)))


def quantity_units_query(
    query: CompilableQuery, value_nodes: Sequence[Variable], rows: int = NUMERIC_ROWS, limit: int = UNIT_ROWS
) -> str:
    """One bounded query for the units of quantities: for each value node (``?value_st_<tag>`` of a quantity
    step), the distinct units (``?__unit``, label ``?__label``) its amounts have in the first ``rows`` rows of
    ``query``, with the SI unit each converts to through ``P2370`` (``?__si``); ``?__q`` is the value node's
    position. At most ``limit`` rows; :func:`read_quantity_units` reads them.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("wikidata").add_quantity("Q64", "P2046", "a").add_quantity("Q1794", "P2046", "b")
        >>> text = quantity_units_query(q, [Variable("value_st_a"), Variable("value_st_b")])
        >>> text.count("wikibase:quantityUnit ?__unit"), "LIMIT 1000 }" in text, text.rstrip().endswith("LIMIT 50")
        (2, True, True)
    """
    profile = query.profile
    unit = term_sparql(IRI(_WIKIBASE + "quantityUnit"), profile)
    branches = [f"{{ {node.sparql()} {unit} ?__unit . BIND({i} AS ?__q) }}" for i, node in enumerate(value_nodes)]
    conversion = "/".join(
        (term_sparql(IRI(_WD_PROP + "P2370"), profile), term_sparql(IRI(_WD_PROP + "statement/value/P2370"), profile), unit)
    )
    body = (
        _rows_of(query, list(value_nodes), rows)
        + "\n"
        + "\nUNION\n".join(branches)
        + f"\nOPTIONAL {{ ?__unit {conversion} ?__si . }}\n"
        + label_pattern(Variable("__unit"), Variable("__l"), profile)
    )
    return (
        prefix_lines(profile)
        + "SELECT ?__q ?__unit ?__si (SAMPLE(?__l) AS ?__label) WHERE {\n"
        + _indent(body, INDENT)
        + f"}}\nGROUP BY ?__q ?__unit ?__si\nLIMIT {int(limit)}\n"
    )


def read_quantity_units(rows: Iterable[Row], value_nodes: int) -> tuple[tuple[tuple[IRI, str | None, IRI | None], ...], ...]:
    """Per value node of :func:`quantity_units_query`, its units as (unit, label, SI unit), by label.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> km = IRI("http://www.wikidata.org/entity/Q828224")
        >>> read_quantity_units([{"__q": Literal("0", XSD + "integer"), "__unit": km, "__label": Literal("kilometre")}], 2)
        (((IRI('http://www.wikidata.org/entity/Q828224'), 'kilometre', None),), ())
    """
    found: list[dict[IRI, tuple[IRI, str | None, IRI | None]]] = [{} for _ in range(value_nodes)]
    for row in rows:
        unit, si, label = row.get("__unit"), row.get("__si"), row.get("__label")
        position = _number(row, "__q")
        if isinstance(unit, IRI) and 0 <= position < value_nodes:
            found[position][unit] = (unit, label.lexical if isinstance(label, Literal) else None, si if isinstance(si, IRI) else None)
    return tuple(tuple(sorted(units.values(), key=lambda u: (u[1] or u[0].value))) for units in found)


def time_points_query(
    query: CompilableQuery, statement: Variable, entity: Term, amount: Variable, rows: int = NUMERIC_ROWS, limit: int = TIME_POINT_ROWS
) -> str:
    """One bounded query for the points in time (``pq:P585``) of a quantity's statements: the distinct
    (``?__e`` entity, ``?__time``, ``?__amount``) of the first ``rows`` rows of ``query``, ordered, at
    most ``limit``; ``entity`` is the quantity's entity (an IRI or a variable of the query).
    :func:`read_time_points` reads them.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query("wikidata").add_quantity("Q64", "P1082", "pop")
        >>> text = time_points_query(q, Variable("statement_pop"), IRI("http://www.wikidata.org/entity/Q64"), Variable("pop"))
        >>> "?statement_pop pq:P585 ?__time ." in text, "BIND(wd:Q64 AS ?__e)" in text, text.rstrip().endswith("LIMIT 50")
        (True, True, True)
    """
    profile = query.profile
    projected = [statement, amount] + ([entity] if isinstance(entity, Variable) else [])
    point = term_sparql(IRI(_WD_PROP + "qualifier/P585"), profile)
    body = (
        _rows_of(query, projected, rows)
        + f"\n{statement.sparql()} {point} ?__time .\n"
        + f"BIND({term_sparql(entity, profile)} AS ?__e)\nBIND({amount.sparql()} AS ?__amount)"
    )
    return (
        prefix_lines(profile)
        + "SELECT DISTINCT ?__e ?__time ?__amount WHERE {\n"
        + _indent(body, INDENT)
        + f"}}\nORDER BY ?__e ?__time\nLIMIT {int(limit)}\n"
    )


def read_time_points(rows: Iterable[Row]) -> dict[Term, list[tuple[Literal, Term | None]]]:
    """The (point in time, amount) pairs of each entity from the rows of :func:`time_points_query`, by time.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> e, t = IRI("http://www.wikidata.org/entity/Q64"), Literal("2011-05-09T00:00:00Z", XSD + "dateTime")
        >>> read_time_points([{"__e": e, "__time": t, "__amount": Literal("1", XSD + "decimal")}])[e][0][0].lexical
        '2011-05-09T00:00:00Z'
    """
    found: dict[Term, dict[tuple[str, str], tuple[Literal, Term | None]]] = {}
    for row in rows:
        entity, time, amount = row.get("__e"), row.get("__time"), row.get("__amount")
        if entity is None or not isinstance(time, Literal):
            continue
        found.setdefault(entity, {})[(time.lexical, str(amount))] = (time, amount)
    return {e: sorted(points.values(), key=lambda p: (p[0].lexical, str(p[1]))) for e, points in found.items()}


# ---------------------------------------------------------------------------
# Candidates: which of several steps' queries give rows, in one query
# ---------------------------------------------------------------------------

#: The variable that says which candidate a row of :func:`candidates_query` belongs to.
CANDIDATE_VAR = "__candidate"
#: Distinct rows a candidate's branch reads at most (its first values, for a preview).
CANDIDATE_ROWS = 4


def candidates_query(
    queries: Sequence[CompilableQuery], rows: int = CANDIDATE_ROWS, *, labels: bool = True, extra: Sequence[str] = ()
) -> tuple[str, list[list[Variable]]]:
    """One bounded query telling which of several queries give rows: each query's own probe, in a UNION.

    The branch of query ``i`` returns the first ``rows`` rows of its join
    where every variable its observation shows (:func:`observed_variables`)
    is bound, with a label per value, each row marked ``?__candidate = i``;
    a yes/no query's branch is one row when its answer is yes. So a query
    gives rows exactly when its branch does, and the engine stops reading a
    branch at its ``LIMIT``: the batch reads ``len(queries) * rows`` rows at
    most, however large the KB. :func:`read_candidates` reads the rows back.
    Without ``labels`` a branch reads no label (an engine such as Virtuoso
    compiles a branch with label patterns about three times slower: the
    caller asks for the labels it shows in one :func:`labels_query`).
    ``extra``: more branches (group graph patterns) the caller adds to the UNION.

    Raises:
        QueryError: no query, queries of different profiles, or a query without a variable to observe.

    Example:
        >>> from pyql.builder.query import Query
        >>> base = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
        >>> text, variables = candidates_query([base, base.add_fact("?c", "a.b.c", "?d")])
        >>> text.count("UNION"), [[str(v) for v in vs] for vs in variables], text.count(f"LIMIT {CANDIDATE_ROWS}")
        (1, [['?c'], ['?c', '?d']], 2)
    """
    if not queries:
        raise QueryError("candidates_query needs at least one query")
    profile = queries[0].profile
    if any(q.profile.name != profile.name for q in queries):
        raise QueryError("the candidate queries of one batch must share a profile; got " + ", ".join(sorted({q.profile.name for q in queries})))
    branches, observed = [], []
    for index, query in enumerate(queries):
        core = query.scope.block.pattern(profile)
        if query.scope.ask:
            observed.append([])
            branches.append("{\n" + _indent(f"SELECT ({int(index)} AS ?{CANDIDATE_VAR}) WHERE\n" + _indent(core, INDENT) + "LIMIT 1", INDENT) + "}")
            continue
        variables = observed_variables(query)
        if not variables:
            raise QueryError(f"candidate {index} has no variable to observe yet; add a fact with a variable such as ?x")
        observed.append(variables)
        computed = unlabelled(query) if labels else variables
        branches.append(_candidate_branch(core, variables, computed, index, rows, profile))
    body = "\nUNION\n".join([*branches, *extra])
    return prefix_lines(profile) + "SELECT * WHERE {\n" + _indent(body, INDENT) + "}\n", observed


def _candidate_branch(
    core: str, variables: Sequence[Variable], computed: frozenset[Variable] | Sequence[Variable], index: int, rows: int, profile: Profile
) -> str:
    """One candidate's probe: its first ``rows`` rows with every variable bound, a label per value (the engine stops there)."""
    names = " ".join(v.sparql() for v in variables)
    bound = " && ".join(f"BOUND({v.sparql()})" for v in variables)
    first = (
        f"SELECT ({int(index)} AS ?{CANDIDATE_VAR}) {names} WHERE {{\n"
        + _indent(core, INDENT) + f"{INDENT}FILTER({bound})\n}} LIMIT {int(rows)}"
    )
    labelled = [v for v in variables if v not in computed]
    if not labelled:
        return "{\n" + _indent(first, INDENT) + "}"
    samples = "".join(f" (SAMPLE(?__l_{v.name}) AS ?{LABEL_PREFIX}{v.name})" for v in labelled)
    labels = "".join(label_pattern(v, Variable(f"__l_{v.name}"), profile) + "\n" for v in labelled)
    inner = "{\n" + _indent(first, INDENT) + "}\n" + labels
    grouped = f"SELECT ?{CANDIDATE_VAR} {names}{samples} WHERE {{\n" + _indent(inner, INDENT) + f"}} GROUP BY ?{CANDIDATE_VAR} {names}"
    return "{\n" + _indent(grouped, INDENT) + "}"


def read_candidates(
    rows: Iterable[Row], observed: Sequence[Sequence[Variable]], value: ValueOf
) -> list[list[dict[str, Value]]]:
    """The rows of each candidate of :func:`candidates_query`, a labelled value per variable (empty: no rows).

    A yes/no candidate's list holds one empty row when its answer is yes.

    Example:
        >>> from pyql.builder.terms import XSD
        >>> n = lambda k: Literal(str(k), XSD + "integer")
        >>> rows = [{CANDIDATE_VAR: n(1), "c": n(7)}, {CANDIDATE_VAR: n(1), "c": n(5)}]
        >>> [[{k: str(v.term) for k, v in r.items()} for r in c] for c in read_candidates(rows, [[Variable("c")]] * 2, lambda t, l: Value(t))]
        [[], [{'c': '7'}, {'c': '5'}]]
    """
    out: list[list[dict[str, Value]]] = [[] for _ in observed]
    for row in rows:
        index = int(engine_number(row.get(CANDIDATE_VAR)))
        if not 0 <= index < len(out):
            raise EngineError(f"the engine returned a row of candidate {index}, but the batch had {len(out)}")
        cells = {v.name: value(row[v.name], row.get(LABEL_PREFIX + v.name)) for v in observed[index] if row.get(v.name) is not None}
        if cells not in out[index]:
            out[index].append(cells)
    return out
