"""Steps → SPARQL 1.1 text, in two passes: fold, then render.

**Fold** (:func:`fold`) turns the steps of a query into its *scope*: nested
*blocks*, the visible variables, the answer and the query form, without
building any text. A block is a group graph pattern (triple patterns and
FILTERs) with optional solution modifiers (the ORDER BY / LIMIT / OFFSET of
an argmax). Triple patterns and filters join the current block, so an
argmax orders the whole block, as in WebQSP's gold queries. An aggregation
closes the block: the rows so far become a sub-SELECT (nested once more when
the block had an argmax, so "count after argmax" counts the argmax rows),
and only the aggregate and its group-by variables are visible afterwards. A
second argmax, and a yes/no comparison after an argmax, also nest the block
they apply to. The scope of a :class:`~pyql.query.Query` is folded once and
cached on the (immutable) query as ``Query.scope``, so reading
``variables``, ``answer`` and ``is_ask`` after every step costs no text.

**Render** (:func:`compile_query`, :func:`render_query` and the bounded
queries below) walks a folded scope and writes the text.

Besides the query itself this module builds the bounded queries a KB runs
for observations: values of every variable with labels and counts (one
query), one-hop relations (one query), labels of given terms, and labelled
result rows.

This module does not import :mod:`pyql.query` (which imports it): a query is
anything shaped like :class:`CompilableQuery` (``profile``, ``steps`` and
the folded ``scope``), which :class:`~pyql.query.Query` is.

Example:
    >>> from pyql.query import Query
    >>> q = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
    >>> print(compile_query(q).split("WHERE")[1].strip())
    {
      <http://rdf.freebase.com/ns/m.0crbvqz> <http://rdf.freebase.com/ns/meteorology.tropical_cyclone.category> ?c .
    }
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, Union

import pyql.escape as escape
from pyql.errors import QueryError
from pyql.profiles import Profile
from pyql.steps import (
    Aggregate,
    Answer,
    Argmax,
    Compare,
    Fact,
    Filter,
    Step,
    TimeConstraint,
    TypeConstraint,
)
from pyql.terms import IRI, Literal, Term, Variable

__all__ = [
    "CompilableQuery",
    "Block",
    "Folded",
    "TimeBound",
    "Aggregation",
    "Part",
    "fold",
    "fold_step",
    "EMPTY_SCOPE",
    "render_query",
    "compile_query",
    "observation_query",
    "observed_variables",
    "bounded_rows_query",
    "relations_query",
    "relation_ask_query",
    "RELATION_EDGES",
    "labels_query",
    "value_kinds_query",
    "NATIVE_ORDER_KINDS",
    "sources_of",
    "rows_query",
    "term_sparql",
    "COUNT_PREFIX",
    "ROWS_VAR",
    "observation_rows",
    "LABEL_PREFIX",
]

COUNT_PREFIX = "__count_"
#: Rows an observation's sample reads per value shown (:func:`observation_query`).
SAMPLE_ROWS_PER_VALUE = 100
#: The variable of an observation's row count (:func:`observation_query`).
ROWS_VAR = "__rows"


def observation_rows(count_cap: int, row_cap: int | None = None) -> int:
    """Rows of the join an observation's counts read (:func:`observation_query`): ``max(row_cap, count_cap + 1)``.

    Example:
        >>> observation_rows(1000), observation_rows(1000, 5000), observation_rows(1000, 10)
        (1001, 5000, 1001)
    """
    return max(int(row_cap or 0), int(count_cap) + 1)
LABEL_PREFIX = "__label_"
_INDENT = "  "


def term_sparql(term: Term, profile: Profile) -> str:
    """A term as query text (IRIs shortened only where every engine agrees).

    Example:
        >>> from pyql.profiles import GENERIC
        >>> term_sparql(IRI("http://www.w3.org/2000/01/rdf-schema#label"), GENERIC)
        'rdfs:label'
    """
    if isinstance(term, IRI):
        return profile.sparql_iri(term.value)
    return term.sparql()


# ---------------------------------------------------------------------------
# The scope: what folding the steps gives (no text)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeBound:
    """One of the two FILTERs of a time constraint: its start side or its end side.

    ``index`` is the position of the step in the query; it names the
    helper variables (``?__t<index>_<i>``).

    Example:
        >>> from pyql.query import Query
        >>> q = Query().add_fact("m.0s", "a.b.c", "?p").add_time_constrain(
        ...     "?p", "a.b.from", "a.b.to", "2005-12-31", "2005-01-01")
        >>> [(type(p).__name__, getattr(p, "end", None)) for p in q.scope.block.parts]
        [('Fact', None), ('TimeBound', False), ('TimeBound', True)]
    """

    step: TimeConstraint
    index: int
    end: bool


@dataclass(frozen=True)
class Aggregation:
    """An aggregate over the rows of ``block``: a sub-SELECT with its GROUP BY."""

    step: Aggregate
    block: Block


# A part of a block: a triple pattern, a type constraint, a FILTER (add_filter
# or add_compare), one side of a time constraint, the rows of an inner block
# (a nested Block), or an aggregation sub-SELECT.
Part = Union[Fact, TypeConstraint, Filter, TimeBound, "Block", Aggregation]


@dataclass(frozen=True)
class Block:
    """One level of the folded query: a group pattern plus solution modifiers.

    Immutable (a folded scope is cached on a query and shared).

    Attributes:
        parts: the patterns of the group, in order (see :data:`Part`).
        variables: the variables visible after the block, in order of appearance.
        argmax: the step whose ORDER BY / LIMIT / OFFSET apply to the block.
        computed: aggregate results (literals, never labelled).
        one_row: a COUNT without GROUP BY (while nothing is added to it).

    Example:
        >>> from pyql.query import Query
        >>> b = Query().add_fact("?c", "a.b.c", "?t").add_max("?t", limit=2).scope.block
        >>> b.has_modifiers, b.limit, b.offset, b.max_rows
        (True, 2, None, 2)
        >>> print(b.modifiers(), end="")
        ORDER BY DESC(IF(isNumeric(?t), ?t, STR(?t)))
        LIMIT 2
    """

    parts: tuple[Part, ...] = ()
    variables: tuple[Variable, ...] = ()
    argmax: Argmax | None = None
    computed: tuple[Variable, ...] = ()
    one_row: bool = False

    @property
    def has_modifiers(self) -> bool:
        """Whether an argmax orders (and limits) the block."""
        return self.argmax is not None

    @property
    def limit(self) -> int | None:
        """The LIMIT of the block's argmax (None without one)."""
        return self.argmax.limit if self.argmax is not None else None

    @property
    def offset(self) -> int | None:
        """The OFFSET of the block's argmax (None without one, or when it is 0)."""
        return (self.argmax.offset or None) if self.argmax is not None else None

    @property
    def max_rows(self) -> int | None:
        """A bound on the block's rows, when one is known: the LIMIT of an
        argmax, or 1 for a COUNT without GROUP BY and nothing added since."""
        if self.limit is not None:
            return self.limit
        if self.one_row and len(self.parts) == 1:
            return 1
        return None

    # -- rendering ---------------------------------------------------------
    def modifiers(self) -> str:
        """The block's ORDER BY / LIMIT / OFFSET lines ("" without an argmax)."""
        out = ""
        if self.argmax is not None:
            out += "ORDER BY " + _order_key(self.argmax) + "\n"
        if self.limit is not None:
            out += f"LIMIT {self.limit}\n"
        if self.offset:
            out += f"OFFSET {self.offset}\n"
        return out

    def group(self, profile: Profile, indent: str = "") -> str:
        """The block's group pattern ``{ ... }`` (modifiers not included)."""
        inner = "".join(
            f"{indent}{_INDENT}{line}\n" for part in self.parts for line in _part_text(part, profile).split("\n")
        )
        return "{\n" + inner + indent + "}"

    def pattern(self, profile: Profile, indent: str = "") -> str:
        """A group pattern equal to the block's rows: with modifiers, a sub-SELECT."""
        if not self.has_modifiers:
            return self.group(profile, indent)
        mods = "".join(f"{indent}{_INDENT}{line}\n" for line in self.modifiers().split("\n") if line)
        return (
            "{\n"
            + f"{indent}{_INDENT}SELECT * WHERE "
            + self.group(profile, indent + _INDENT)
            + "\n"
            + mods
            + indent
            + "}"
        )


@dataclass(frozen=True)
class Folded:
    """The scope of a query: the outer block, the answer and the query form.

    Attributes:
        block: the outermost block (its ``variables`` are the visible ones).
        answer: the variable of ``set_answer`` (None before, or after an aggregation).
        ask: whether the query is a yes/no question (after ``add_compare``).
    """

    block: Block
    answer: Variable | None
    ask: bool


class CompilableQuery(Protocol):
    """What the compiler reads of a query (:class:`~pyql.query.Query` is one).

    ``scope`` is the query's folded steps (``fold(steps)``), which a query
    computes once and caches.
    """

    @property
    def profile(self) -> Profile: ...

    @property
    def steps(self) -> tuple[Step, ...]: ...

    @property
    def scope(self) -> Folded: ...


def _with_variables(variables: tuple[Variable, ...], new: Sequence[Variable]) -> tuple[Variable, ...]:
    """``variables`` then those of ``new`` not in it yet (order of appearance)."""
    added = [v for v in dict.fromkeys(new) if v not in variables]
    return variables + tuple(added) if added else variables


def _add_part(block: Block, part: Part, variables: Sequence[Variable] = ()) -> Block:
    return Block(block.parts + (part,), _with_variables(block.variables, variables), block.argmax, block.computed, block.one_row)


def _nested(block: Block) -> Block:
    """A new block whose only pattern is ``block``'s rows."""
    return Block((block,), block.variables, None, block.computed)


EMPTY_SCOPE = Folded(Block(), None, False)
"""The scope of a query without steps."""


def fold_step(scope: Folded, step: Step, index: int) -> Folded:
    """The scope after one more step (``index``: the step's position in the query).

    ``fold(steps)`` is ``fold_step`` applied to every step from
    :data:`EMPTY_SCOPE`; a query extends its parent's cached scope this way.

    Example:
        >>> from pyql.query import Query
        >>> q = Query().add_fact("?c", "a.b.c", "?t")
        >>> fold_step(q.scope, q.add_max("?t").steps[-1], 1) == q.add_max("?t").scope
        True
    """
    block, answer, ask = scope.block, scope.answer, scope.ask
    if isinstance(step, Fact):
        block = _add_part(block, step, step.variables())
    elif isinstance(step, TypeConstraint):
        block = _add_part(block, step, (step.var,))
    elif isinstance(step, Compare):
        if block.argmax is not None:
            block = _nested(block)
        block = _add_part(block, step)
        ask = True
    elif isinstance(step, Filter):
        block = _add_part(block, step)
    elif isinstance(step, TimeConstraint):
        block = _add_part(_add_part(block, TimeBound(step, index, False)), TimeBound(step, index, True))
    elif isinstance(step, Argmax):
        if block.argmax is not None:
            block = _nested(block)
        block = Block(block.parts, block.variables, step, block.computed, block.one_row)
    elif isinstance(step, Aggregate):
        block = Block(
            (Aggregation(step, block),),
            (*step.group_by, step.new_var),
            None,
            (step.new_var,),
            step.func == "COUNT" and not step.group_by,
        )
        answer = None
    elif isinstance(step, Answer):
        answer = step.var
    else:  # pragma: no cover - every Step subclass is handled above
        raise QueryError(f"unknown step {step!r}")
    return Folded(block, answer, ask)


def fold(steps: Sequence[Step], profile: Profile | None = None) -> Folded:
    """Fold steps into blocks (see the module docstring); no text is built.

    Args:
        steps: the steps of a query.
        profile: not used (the scope does not depend on it); accepted so
            that callers written for the single-pass compiler keep working.

    Example:
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y").add_count("?x", "?n")
        >>> [str(v) for v in fold(q.steps).block.variables]
        ['?n']
        >>> fold(q.steps) == q.scope
        True
    """
    scope = EMPTY_SCOPE
    for index, step in enumerate(steps):
        scope = fold_step(scope, step, index)
    return scope


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------


def _comparison(left: Term, op: str, right: Term, profile: Profile, native: bool = False) -> str:
    """A comparison; dates compare as text at the coarser of the two precisions (unless ``native``)."""
    date_side = None if native else next((t for t in (left, right) if isinstance(t, Literal) and t.is_date), None)
    other = right if date_side is left else left
    if date_side is not None and isinstance(other, Variable):
        constant = escape.literal(date_side.lexical)
        value = f"STR({other.sparql()})"
        var_text = f"SUBSTR({value}, 1, STRLEN({constant}))"
        const_text = f"SUBSTR({constant}, 1, STRLEN({value}))"
        lhs, rhs = (var_text, const_text) if other is left else (const_text, var_text)
        return f"(isLiteral({other.sparql()}) && {lhs} {op} {rhs})"
    return f"({term_sparql(left, profile)} {op} {term_sparql(right, profile)})"


def _order_key(step: Argmax) -> str:
    # Numbers order as numbers; dates of mixed precision (xsd:date, gYear,
    # dateTime) order as their ISO text, which every engine agrees on. A
    # native argmax (values of one kind) orders by the variable itself.
    v = step.var.sparql()
    key = v if step.native else f"IF(isNumeric({v}), {v}, STR({v}))"
    return f"DESC({key})" if step.descending else f"ASC({key})"


def _time_filter(bound: TimeBound, profile: Profile) -> str:
    """The FILTER of one side of a time constraint: no start (end), or one not after (before) the date."""
    step = bound.step
    v = step.var.sparql()
    first = 2 if bound.end else 0
    missing, present = (Variable(f"__t{bound.index}_{i}") for i in (first, first + 1))
    if bound.end:
        relation = term_sparql(step.end_relation, profile)
        test = _comparison(present, ">=", step.end_after, profile)
    else:
        relation = term_sparql(step.start_relation, profile)
        test = _comparison(present, "<=", step.start_before, profile)
    return (
        f"FILTER(NOT EXISTS {{ {v} {relation} {missing.sparql()} }} || "
        f"EXISTS {{ {v} {relation} {present.sparql()} . FILTER{test} }})"
    )


def _aggregation_text(part: Aggregation, profile: Profile) -> str:
    step = part.step
    distinct = "DISTINCT " if step.func == "COUNT" else ""
    group = " ".join(v.sparql() for v in step.group_by)
    select = (group + " " if group else "") + f"({step.func}({distinct}{step.var.sparql()}) AS {step.new_var.sparql()})"
    sub = "{\n" + f"{_INDENT}SELECT {select} WHERE " + part.block.pattern(profile, _INDENT)
    if group:
        sub += f"\n{_INDENT}GROUP BY {group}"
    return sub + "\n}"


def _part_text(part: Part, profile: Profile) -> str:
    """The text of one part of a block (it may span lines)."""
    if isinstance(part, Fact):
        return (
            f"{term_sparql(part.head, profile)} {term_sparql(part.relation, profile)} "
            f"{term_sparql(part.tail, profile)} ."
        )
    if isinstance(part, TypeConstraint):
        return f"{part.var.sparql()} {profile.sparql_iri(profile.type_predicate)} {term_sparql(part.type, profile)} ."
    if isinstance(part, Filter):  # add_filter and add_compare
        return "FILTER" + _comparison(part.left, part.op, part.right, profile, part.native)
    if isinstance(part, TimeBound):
        return _time_filter(part, profile)
    if isinstance(part, Block):
        return part.pattern(profile)
    if isinstance(part, Aggregation):
        return _aggregation_text(part, profile)
    raise QueryError(f"unknown part {part!r}")  # pragma: no cover - every Part is handled above


def render_query(scope: Folded, profile: Profile) -> str:
    """The SPARQL text of a folded scope: PREFIX lines, then SELECT DISTINCT or ASK.

    Example:
        >>> from pyql.profiles import FREEBASE
        >>> from pyql.query import Query
        >>> q = Query().add_fact("?c", "a.b.c", "?t").set_answer("?c")
        >>> render_query(fold(q.steps), FREEBASE) == q.sparql()
        True
    """
    block = scope.block
    head = profile.prefix_lines()
    if scope.ask:
        return head + "ASK WHERE " + block.pattern(profile) + "\n"
    if scope.answer is not None and scope.answer in block.variables:
        projection = "DISTINCT " + scope.answer.sparql()
    elif block.variables:
        projection = "DISTINCT " + " ".join(v.sparql() for v in block.variables)
    else:
        projection = "*"
    return head + f"SELECT {projection} WHERE " + block.group(profile) + "\n" + block.modifiers()


def compile_query(query: CompilableQuery) -> str:
    """The SPARQL text of a query: PREFIX lines, then SELECT DISTINCT or ASK.

    Example:
        >>> from pyql.query import Query
        >>> print(compile_query(Query("generic")), end="")
        PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
        PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
        PREFIX owl: <http://www.w3.org/2002/07/owl#>
        SELECT * WHERE {
        }
    """
    return render_query(query.scope, query.profile)


def _label_pattern(var: Variable, label: Variable, profile: Profile) -> str:
    path = "|".join(profile.sparql_iri(p) for p in profile.label_predicates)
    lang = escape.literal(profile.label_lang)
    return (
        f"OPTIONAL {{ {var.sparql()} {path} {label.sparql()} . "
        f'FILTER(LANG({label.sparql()}) = "" || LANGMATCHES(LANG({label.sparql()}), {lang})) }}'
    )


def _indent(text: str, indent: str) -> str:
    return "".join(indent + line + "\n" for line in text.split("\n") if line)


def observed_variables(query: CompilableQuery) -> list[Variable]:
    """The variables an observation shows: the answer once one is set, else every visible one.

    Example:
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y")
        >>> [str(v) for v in observed_variables(q)], [str(v) for v in observed_variables(q.set_answer("?y"))]
        (['?x', '?y'], ['?y'])
    """
    scope = query.scope
    block = scope.block
    return [scope.answer] if scope.answer in block.variables else list(block.variables)


def observation_query(
    query: CompilableQuery, per_variable: int = 10, count_cap: int = 1000, row_cap: int | None = None
) -> tuple[str, list[Variable]]:
    """One bounded query giving, for every visible variable (only the answer
    variable once one is set), up to ``per_variable`` distinct values with
    labels, and its number of distinct values counted up to ``count_cap``.

    The result has one row per count (``?__count_<var>``) and one row per
    sampled value (``?<var>`` bound, label in ``?__label_<var>``). A count is
    ``COUNT`` over ``SELECT DISTINCT ?var ... LIMIT count_cap + 1``: the
    engine stops after ``count_cap + 1`` distinct values instead of
    evaluating the whole join (on a 10^6-row join, about 3 ms instead of a
    second), so a count of ``count_cap + 1`` means "more than
    ``count_cap``". When the query has at most ``per_variable`` rows anyway
    (after an argmax, or a count without group), the query is instead all
    those rows with labels (:func:`bounded_rows_query`) and has no count row:
    every value is in them, so the counts are exact, and the rows (an ORDER
    BY over everything, an aggregate) are computed once instead of once per
    variable plus once for the counts.

    Every count and sample reads at most the first ``rows`` rows of the
    join, ``rows = max(row_cap, count_cap + 1)`` (``row_cap`` None: ``count_cap
    + 1``): the counts are ``COUNT(DISTINCT ?v)`` of every variable over the
    first ``rows + 1`` rows, in one branch next to ``COUNT(*)`` of those rows
    (``?__rows``), which says whether they were the whole join. So a variable with few distinct
    values over a huge join (``?g`` in ``?p gender ?g``: 2 values, 10^6
    rows), whose ``DISTINCT ... LIMIT`` would never stop early, costs
    ``rows`` rows too. Samples read the first ``max(rows, 100 *
    per_variable)`` rows. When the join is longer and the count is not above
    ``count_cap``, the count is a lower bound ("at least 2").

    Example:
        >>> from pyql.query import Query
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

    def first(projected: Sequence[Variable], n: int) -> str:
        # The first n rows of the join (a sub-SELECT: engines stop reading at n).
        head = "SELECT " + " ".join(v.sparql() for v in projected) + " WHERE\n"
        return "{\n" + _indent(head + _indent(core, _INDENT) + f"LIMIT {n}\n", _INDENT) + "}\n"

    # Every count, and the rows, from the same first rows + 1 rows: one window read once.
    # COUNT(DISTINCT) skips an unbound value (an aggregate's error): it is no value.
    counts = " ".join(f"(COUNT(DISTINCT {v.sparql()}) AS ?{COUNT_PREFIX}{v.name})" for v in variables)
    counted = f"SELECT {counts} (COUNT(*) AS ?{ROWS_VAR}) WHERE\n" + _indent(first(variables, rows + 1), _INDENT)
    branches = ["{\n" + _indent(counted, _INDENT) + "}"]
    for v in variables:
        raw = Variable("__l")
        if v in block.computed:
            # An aggregate's result is a literal (or unbound after an error):
            # no label to look up, and an OPTIONAL on a possibly unbound
            # variable would match every label in the KB.
            sample = f"SELECT DISTINCT {v.sparql()} WHERE\n" + _indent(first([v], sample_rows), _INDENT) + f"LIMIT {int(per_variable)}"
            branches.append("{\n" + _indent(sample, _INDENT) + "}")
            continue
        sample = (
            f"SELECT {v.sparql()} (SAMPLE({raw.sparql()}) AS ?{LABEL_PREFIX}{v.name}) WHERE {{\n"
            f"{_INDENT}{{ SELECT DISTINCT {v.sparql()} WHERE\n"
            + _indent(first([v], sample_rows), _INDENT * 2)
            + f"{_INDENT}  LIMIT {int(per_variable)} }}\n"
            f"{_INDENT}{_label_pattern(v, raw, profile)}\n"
            f"}} GROUP BY {v.sparql()}"
        )
        branches.append("{\n" + _indent(sample, _INDENT) + "}")
    body = "\nUNION\n".join(branches)
    return profile.prefix_lines() + "SELECT * WHERE {\n" + _indent(body, _INDENT) + "}\n", variables


def bounded_rows_query(query: CompilableQuery) -> tuple[str, list[Variable]]:
    """All rows of a query whose rows are bounded (``Block.max_rows``), over
    every visible variable, with a label per variable.

    These rows answer any later step that only changes the projection
    (``set_answer``, ``execute()``) without evaluating the join again
    (:class:`~pyql.observation.BoundedRows`).

    Raises:
        QueryError: when the query's rows are not bounded, or it has no variable.

    Example:
        >>> from pyql.query import Query
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
    return query.profile.prefix_lines() + _labelled_rows(block, variables, bound, query.profile), variables


def rows_query(query: CompilableQuery, limit: int) -> tuple[str, list[Variable]]:
    """The query's projected rows with a label per variable, at most ``limit`` rows.

    Example:
        >>> from pyql.query import Query
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
    return query.profile.prefix_lines() + _labelled_rows(block, projected, limit, query.profile), projected


def _labelled_rows(block: Block, projected: Sequence[Variable], limit: int, profile: Profile) -> str:
    """SELECT of the block's distinct ``projected`` rows (at most ``limit``), a label per variable."""
    names = " ".join(v.sparql() for v in projected)
    labelled = [v for v in projected if v not in block.computed]  # aggregate results have no label
    samples = "".join(f" (SAMPLE(?__l_{v.name}) AS ?{LABEL_PREFIX}{v.name})" for v in labelled)
    labels = "".join(_INDENT + _label_pattern(v, Variable(f"__l_{v.name}"), profile) + "\n" for v in labelled)
    return (
        f"SELECT {names}{samples} WHERE {{\n"
        + f"{_INDENT}{{ SELECT DISTINCT {names} WHERE\n"
        + _indent(block.pattern(profile), _INDENT * 2)
        + f"{_INDENT}  LIMIT {int(limit)} }}\n"
        + labels
        + f"}} GROUP BY {names}\n"
    )


RELATION_EDGES = 10_000
"""Edges read per direction by one relations query (:func:`relations_query`)."""

HIDDEN_MARK = "hidden"
"""What a relations query binds ``?__r`` to for an edge whose relation the profile hides."""


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
    ``"hidden"``, so the numbers add up to the edges read: when they exceed
    ``edges`` (``2 * edges``), there were more and the list may be
    incomplete. At most ``limit`` rows (hidden relations do not use them
    up beyond that one row per direction). ``values``, for a variable whose
    values are already known (the bounded rows of an argmax), replaces the
    sub-SELECT that samples them, so the argmax is not evaluated again.

    Example:
        >>> from pyql.profiles import FREEBASE
        >>> text = relations_query(IRI("http://rdf.freebase.com/ns/m.0crbvqz"), None, FREEBASE)
        >>> text.count("UNION"), "STRSTARTS" in text, text.count("LIMIT 10001")
        (1, True, 2)
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "m.0crbvqz")
        >>> "OPTIONAL {" in relations_query(Variable("x"), q, FREEBASE)
        True
    """
    edge_cap = int(edges)
    if edge_cap < 1:
        raise QueryError(f"edges must be ≥ 1, got {edges}")
    if isinstance(target, Variable):
        block = _binding_block(target, query)
        subject = target.sparql()
        forward = f'{{ {subject} ?__p ?__o . BIND("forward" AS ?__dir) }}'
        backward = f'{{ ?__s ?__p {subject} . BIND("backward" AS ?__dir) }}'
        if values is not None:
            known = " ".join(term_sparql(v, profile) for v in list(values)[: int(sample)])
            source = f"{_INDENT}VALUES {subject} {{ {known} }}\n"
        else:
            source = (
                f"{_INDENT}{{ SELECT DISTINCT {subject} WHERE\n"
                + _indent(block.pattern(query.profile), _INDENT * 2)
                + f"{_INDENT}  LIMIT {int(sample)} }}\n"
            )
        # rdflib evaluates both sides of a join with a sub-SELECT in full (here:
        # every triple, twice) but an OPTIONAL once per row, with the sampled
        # value bound. BOUND drops values without relations: the join's rows.
        sampled = (
            "{ SELECT ?__dir ?__p WHERE {\n"
            + source
            + f"{_INDENT}OPTIONAL {{\n"
            + _indent(f"{forward}\nUNION\n{backward}", _INDENT * 2)
            + f"{_INDENT}}}\n"
            + f"{_INDENT}FILTER(BOUND(?__p))\n"
            + f"}} LIMIT {2 * edge_cap + 1} }}"
        )
    else:
        subject = term_sparql(target, profile)

        def side(pattern: str, direction: str) -> str:
            return (
                "{\n"
                + f"{_INDENT}{{ SELECT ?__p WHERE {{ {pattern} }} LIMIT {edge_cap + 1} }}\n"
                + f'{_INDENT}BIND("{direction}" AS ?__dir)\n'
                + "}"
            )

        backward_side = side(f"?__s ?__p {subject} .", "backward")
        if isinstance(target, Literal):
            sampled = backward_side
        else:
            sampled = side(f"{subject} ?__p ?__o .", "forward") + "\nUNION\n" + backward_side
    hidden = " || ".join(f"STRSTARTS(STR(?__p), {escape.literal(prefix)})" for prefix in profile.hidden_relation_prefixes)
    named = f'BIND(IF({hidden}, "{HIDDEN_MARK}", ?__p) AS ?__r)' if hidden else "BIND(?__p AS ?__r)"
    # Grouped by relation first, so the hidden-relation test runs once per
    # relation, not once per sampled edge.
    grouped = (
        "{ SELECT ?__dir ?__p (COUNT(*) AS ?__k) WHERE {\n"
        + _indent(sampled, _INDENT)
        + "} GROUP BY ?__dir ?__p }"
    )
    return (
        profile.prefix_lines()
        + "SELECT ?__dir ?__r (SUM(?__k) AS ?__n) WHERE {\n"
        + _indent(grouped + "\n" + named, _INDENT)
        + f"}}\nGROUP BY ?__dir ?__r\nLIMIT {int(limit)}\n"
    )


def relation_ask_query(
    target: Term,
    relation: Term,
    direction: str | None,
    query: CompilableQuery | None,
    profile: Profile,
    sample: int = 100,
) -> str:
    """One bounded ASK: does ``target`` have ``relation`` (in ``direction``)?

    It completes a relation list read from a capped sample
    (:func:`relations_query`): for an entity or a literal, one index lookup;
    for a variable, whether one of the same ``sample`` values it reads
    relations of has the relation. ``direction`` is "forward" (the target
    is the subject), "backward" (the object) or None (either).

    Example:
        >>> from pyql.profiles import FREEBASE
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
        return profile.prefix_lines() + "ASK WHERE { FILTER(false) }\n"  # a literal has no forward edge
    if isinstance(target, Variable):
        exists = " || ".join(f"EXISTS {{ {p} }}" for p in patterns)
        return (
            profile.prefix_lines()
            + "ASK WHERE {\n"
            + f"{_INDENT}{{ SELECT DISTINCT {subject} WHERE\n"
            + _indent(block.pattern(query.profile), _INDENT * 2)  # type: ignore[union-attr]
            + f"{_INDENT}  LIMIT {int(sample)} }}\n"
            + f"{_INDENT}FILTER({exists})\n"
            + "}\n"
        )
    body = " UNION ".join(f"{{ {p} }}" for p in patterns) if len(patterns) > 1 else patterns[0]
    return profile.prefix_lines() + f"ASK WHERE {{ {body} }}\n"


#: The kinds of values an engine orders alike in its own order (a native
#: argmax, :attr:`pyql.steps.Argmax.native`): numbers of any numeric type, or
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
    and its edges counted up to ``edges + 1`` (``?__n``).

    A kind is ``"numeric"`` for a number of any type, a literal's datatype
    IRI, or ``"node"`` for an entity; a literal without a datatype the
    engine will name gives no ``?__k``. With ``limit=2`` the answer says
    whether the edges read hold values of one kind only, and ``?__n``
    whether they were all the relation's edges. The engine stops at a
    second kind; with one kind it reads all ``edges``
    (:meth:`pyql.kb.KB.value_kind` first reads a few, and caches the answer).

    Example:
        >>> from pyql.profiles import FREEBASE
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
        profile.prefix_lines()
        + "SELECT * WHERE {\n"
        + f"{_INDENT}{{ SELECT DISTINCT ?__k WHERE {{ {first(int(edges))} BIND({kind} AS ?__k) }} LIMIT {int(limit)} }}\n"
        + f"{_INDENT}UNION\n"
        + f"{_INDENT}{{ SELECT (COUNT(*) AS ?__n) WHERE {first(int(edges) + 1)} }}\n"
        + "}\n"
    )


def sources_of(var: Variable, steps: Sequence[Step]) -> tuple[tuple[IRI, ...], bool]:
    """Where a variable's values come from: the relations it is the object of, and whether an aggregate made it.

    Every value of ``var`` is an object of each relation returned (facts
    are joined, never optional), so a relation whose objects are all of one
    kind makes ``var`` one kind; a COUNT, SUM or AVG result is a number. An
    aggregation that does not group by ``var`` starts afresh: the facts
    before it bound another variable of the same name.

    Example:
        >>> from pyql.query import Query
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


def labels_query(terms: Sequence[Term], profile: Profile) -> str:
    """One query for the labels of the given IRIs (``?__e`` and ``?__label``).

    Example:
        >>> from pyql.profiles import FREEBASE
        >>> "VALUES ?__e" in labels_query([IRI("http://rdf.freebase.com/ns/m.0crbvqz")], FREEBASE)
        True
    """
    values = " ".join(term_sparql(t, profile) for t in terms if isinstance(t, IRI))
    entity = Variable("__e")
    return (
        profile.prefix_lines()
        + "SELECT ?__e (SAMPLE(?__l) AS ?__label) WHERE {\n"
        + f"{_INDENT}VALUES ?__e {{ {values} }}\n"
        + f"{_INDENT}{_label_pattern(entity, Variable('__l'), profile)}\n"
        + "} GROUP BY ?__e\n"
    )
