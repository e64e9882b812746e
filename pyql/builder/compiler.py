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
they apply to. The scope of a :class:`~pyql.builder.query.Query` is folded once and
cached on the (immutable) query as ``Query.scope``, so reading
``variables``, ``answer`` and ``is_ask`` after every step costs no text.

**Render** (:func:`compile_query`, :func:`render_query`) walks a folded
scope and writes the text. A block keeps the text of its parts once written
(per profile and indentation), and a block made by adding parts to another
one starts from that one's text, so a query built step by step writes each
part once, however often ``sparql()`` is called along the way.

**Step kinds dispatch through two tables**, as sqlglot's generator maps an
expression type to its SQL: :data:`FOLD_RULES` (step type → the scope after
the step) and :data:`TEXT_RULES` (part type → its text). To add a step kind:

1. its frozen dataclass in :mod:`pyql.builder.steps` (``action``, ``arguments()``,
   its checks in ``__post_init__``);
2. here, a function decorated with ``@fold_rule(Kind)`` that returns the
   scope after the step and, when the step becomes a part of a block, one
   decorated with ``@text_rule(Kind)`` that writes the part.

Nothing else dispatches on step types (``Query.actions`` renders any step
from its ``action`` and ``arguments()``); a :class:`~pyql.builder.query.Query`
method and an action of :mod:`pyql.environment.sparql_actions` are what make it
callable.

The bounded queries a KB runs to look at a query (observation, relations,
labels, rows, value kinds) are built, next to the code that reads their
rows, in :mod:`pyql.kb.probes`.

This module does not import :mod:`pyql.builder.query` (which imports it): a query is
anything shaped like :class:`CompilableQuery` (``profile``, ``steps`` and
the folded ``scope``), which :class:`~pyql.builder.query.Query` is.

Example:
    >>> from pyql.builder.query import Query
    >>> q = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
    >>> print(compile_query(q).split("WHERE")[1].strip())
    {
      <http://rdf.freebase.com/ns/m.0crbvqz> <http://rdf.freebase.com/ns/meteorology.tropical_cyclone.category> ?c .
    }
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, TypeVar, Union

import pyql.builder.escape as escape
from pyql.errors import QueryError
from pyql.builder.profiles import Profile
from pyql.builder.steps import (
    Aggregate,
    Answer,
    Argmax,
    Assignment,
    Bind,
    Compare,
    Disjunction,
    Fact,
    Filter,
    Head,
    Quantity,
    QuantityBase,
    QuantityByQualifier,
    QuantityWithQualifier,
    Rank,
    Step,
    SubQuery,
    TimeConstraint,
    TypeConstraint,
)
from pyql.builder.terms import IRI, Literal, Term, Variable

__all__ = [
    "CompilableQuery",
    "Block",
    "Folded",
    "TimeBound",
    "Aggregation",
    "Part",
    "FOLD_RULES",
    "TEXT_RULES",
    "fold_rule",
    "text_rule",
    "fold",
    "fold_step",
    "part_text",
    "EMPTY_SCOPE",
    "render_query",
    "compile_query",
    "prefix_lines",
    "iri_text",
    "term_sparql",
    "INDENT",
    "Ranking",
    "SubSelect",
    "Alternatives",
    "WIKIBASE",
]

#: One level of indentation in the text pyql writes.
INDENT = "  "
_INDENT = INDENT


def term_sparql(term: Term, profile: Profile) -> str:
    """A term as query text (IRIs shortened only where every engine agrees).

    Example:
        >>> from pyql.builder.profiles import GENERIC
        >>> term_sparql(IRI("http://www.w3.org/2000/01/rdf-schema#label"), GENERIC)
        'rdfs:label'
    """
    if isinstance(term, IRI):
        return iri_text(term.value, profile)
    if isinstance(term, Variable):
        return "?" + term.name  # checked when the variable was made (escape.variable)
    return term.sparql()


# Profile → its PREFIX lines, and the text of IRIs it wrote; by identity (a
# profile is immutable, and few exist). Bounded: cleared when too large.
_PREFIX_LINES: dict[int, tuple[Profile, str]] = {}
_IRI_TEXTS: dict[int, tuple[Profile, dict[str, str]]] = {}
_IRI_TEXTS_MAX = 50_000


def iri_text(iri: str, profile: Profile) -> str:
    """``profile.sparql_iri(iri)``, remembered per profile (relations and entities recur from step to step).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> iri_text("http://www.w3.org/2001/XMLSchema#gYear", FREEBASE)
        'xsd:gYear'
    """
    hit = _IRI_TEXTS.get(id(profile))
    if hit is None or hit[0] is not profile:
        if len(_IRI_TEXTS) > 64:
            _IRI_TEXTS.clear()
        hit = _IRI_TEXTS[id(profile)] = (profile, {})
    texts = hit[1]
    text = texts.get(iri)
    if text is None:
        if len(texts) >= _IRI_TEXTS_MAX:
            texts.clear()
        text = texts[iri] = profile.sparql_iri(iri)
    return text


def prefix_lines(profile: Profile) -> str:
    """``profile.prefix_lines()``, written once per profile object.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> prefix_lines(FREEBASE) == FREEBASE.prefix_lines() and prefix_lines(FREEBASE) is prefix_lines(FREEBASE)
        True
    """
    hit = _PREFIX_LINES.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    if len(_PREFIX_LINES) > 64:  # profiles made on the fly: keep the cache small
        _PREFIX_LINES.clear()
    text = profile.prefix_lines()
    _PREFIX_LINES[id(profile)] = (profile, text)
    return text


# ---------------------------------------------------------------------------
# The scope: what folding the steps gives (no text)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeBound:
    """One of the two FILTERs of a time constraint: its start side or its end side.

    ``index`` is the position of the step in the query; it names the
    helper variables (``?__t<index>_<i>``).

    Example:
        >>> from pyql.builder.query import Query
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

    Immutable (a folded scope is cached on a query and shared). The text of
    its parts, once written, is kept on the block (per profile and
    indentation; not a field, so it plays no part in ``==`` and ``hash``).

    Attributes:
        parts: the patterns of the group, in order (see :data:`Part`).
        variables: the variables visible after the block, in order of appearance.
        argmax: the step whose ORDER BY / LIMIT / OFFSET apply to the block.
        computed: aggregate results (literals, never labelled).
        one_row: a COUNT without GROUP BY (while nothing is added to it).
        base: a block whose parts are the first parts of this one (the block
            this one was made from); its text, once written, starts this one's.

    Example:
        >>> from pyql.builder.query import Query
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
    base: Block | None = field(default=None, compare=False, repr=False)

    @property
    def has_modifiers(self) -> bool:
        """Whether an argmax orders (and limits) the block."""
        return self.argmax is not None

    @property
    def limit(self) -> int | None:
        """The LIMIT of the block's argmax (None without one, or when it keeps ties)."""
        return self.argmax.limit if self.argmax is not None and not self.argmax.ties else None

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
        argmax = self.argmax
        if argmax is None or argmax.ties:  # an argmax with ties is a pattern of the group (see group())
            return ""
        out = "ORDER BY " + _order_key(argmax) + "\n" + (f"LIMIT {argmax.limit}\n" if argmax.limit is not None else "")
        if argmax.offset:
            out += f"OFFSET {argmax.offset}\n"
        return out

    def group(self, profile: Profile, indent: str = "") -> str:
        """The block's group pattern ``{ ... }`` (modifiers not included; an argmax with ties included)."""
        return "{\n" + self._inner(profile, indent) + self._ties(profile, indent) + indent + "}"

    def _ties(self, profile: Profile, indent: str) -> str:
        """An argmax with ties: the extreme of its key over the block's parts (a sub-select), and
        a FILTER keeping the rows whose key equals it ("" for any other block)."""
        argmax = self.argmax
        if argmax is None or not argmax.ties:
            return ""
        key = _extreme_key(argmax)
        func = "MAX" if argmax.descending else "MIN"
        extreme = f"?__{func.lower()}_{argmax.var.name}"
        lead, inner = indent + _INDENT, indent + _INDENT + _INDENT
        # DISTINCT (one row anyway) keeps rdflib from joining the sub-select lazily: a lazy join
        # evaluates it with the rows before it bound, which gives each row its own extreme.
        return (
            f"{lead}{{\n{inner}SELECT DISTINCT ({func}({key}) AS {extreme}) WHERE {{\n"
            + self._inner(profile, inner)
            + f"{inner}}}\n{lead}}}\n{lead}FILTER({key} = {extreme})\n"
        )

    def pattern(self, profile: Profile, indent: str = "") -> str:
        """A group pattern equal to the block's rows: with modifiers, a sub-SELECT."""
        if self.argmax is None:
            return self.group(profile, indent)
        if self.argmax.ties and self.variables:  # only the visible variables: the extreme stays inside
            projection = " ".join("?" + v.name for v in self.variables)
            return "{\n" + f"{indent}{_INDENT}SELECT {projection} WHERE " + self.group(profile, indent + _INDENT) + "\n" + indent + "}"
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

    def _inner(self, profile: Profile, indent: str) -> str:
        """The lines of the parts, indented: kept once written, and started from the base's."""
        key = (id(profile), indent)
        pending: list[Block] = []
        block: Block | None = self
        text = ""
        while block is not None:  # up the bases to one whose text is known (no recursion: chains may be long)
            hit = block.__dict__.get("_texts", {}).get(key)
            if hit is not None and hit[0] is profile:
                text = hit[1]
                break
            pending.append(block)
            block = block.base
        done = len(block.parts) if block is not None else 0
        lead = indent + _INDENT
        for block in reversed(pending):
            text += "".join(lead + line + "\n" for part in block.parts[done:] for line in part_text(part, profile).split("\n"))
            done = len(block.parts)
            block.__dict__.setdefault("_texts", {})[key] = (profile, text)
        return text


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
    """What the compiler reads of a query (:class:`~pyql.builder.query.Query` is one).

    ``scope`` is the query's folded steps (``fold(steps)``), which a query
    computes once and caches.
    """

    @property
    def profile(self) -> Profile: ...

    @property
    def steps(self) -> tuple[Step, ...]: ...

    @property
    def scope(self) -> Folded: ...


EMPTY_SCOPE = Folded(Block(), None, False)
"""The scope of a query without steps."""


# ---------------------------------------------------------------------------
# The rule tables
# ---------------------------------------------------------------------------

FoldRule = Callable[[Folded, Any, int], Folded]
TextRule = Callable[[Any, Profile], str]
_Rule = TypeVar("_Rule", bound=Callable[..., Any])

#: Step type → its fold rule ``(scope, step, index) -> scope`` (:func:`fold_rule`).
FOLD_RULES: dict[type, FoldRule] = {}
#: Part type → its text rule ``(part, profile) -> text`` (:func:`text_rule`).
TEXT_RULES: dict[type, TextRule] = {}


def fold_rule(kind: type) -> Callable[[_Rule], _Rule]:
    """Register the fold rule of a step type: ``rule(scope, step, index)`` returns the scope after the step.

    Example:
        >>> FOLD_RULES[Fact].__name__
        '_fold_fact'
    """

    def register(rule: _Rule) -> _Rule:
        FOLD_RULES[kind] = rule
        return rule

    return register


def text_rule(kind: type) -> Callable[[_Rule], _Rule]:
    """Register the text rule of a part type: ``rule(part, profile)`` returns its text (it may span lines).

    Example:
        >>> TEXT_RULES[Fact].__name__
        '_fact_text'
    """

    def register(rule: _Rule) -> _Rule:
        TEXT_RULES[kind] = rule
        return rule

    return register


def _rule(table: dict[type, Any], kind: type, what: str) -> Any:
    """The rule of ``kind``, or of its nearest base class that has one (then kept for ``kind``)."""
    rule = table.get(kind)
    if rule is None:
        rule = next((table[base] for base in kind.__mro__ if base in table), None)
        if rule is None:
            raise QueryError(f"unknown {what} {kind.__name__}: no rule for it in pyql.builder.compiler")
        table[kind] = rule
    return rule


# ---------------------------------------------------------------------------
# Folding
# ---------------------------------------------------------------------------


def _with_variables(variables: tuple[Variable, ...], new: Sequence[Variable]) -> tuple[Variable, ...]:
    """``variables`` then those of ``new`` not in it yet (order of appearance)."""
    added = [v for v in dict.fromkeys(new) if v not in variables]
    return variables + tuple(added) if added else variables


def _add_part(block: Block, part: Part, variables: Sequence[Variable] = ()) -> Block:
    return Block(
        block.parts + (part,), _with_variables(block.variables, variables), block.argmax, block.computed, block.one_row, block
    )


def _nested(block: Block) -> Block:
    """A new block whose only pattern is ``block``'s rows."""
    return Block((block,), block.variables, None, block.computed)


def fold_step(scope: Folded, step: Step, index: int) -> Folded:
    """The scope after one more step (``index``: the step's position in the query).

    ``fold(steps)`` is ``fold_step`` applied to every step from
    :data:`EMPTY_SCOPE`; a query extends its parent's cached scope this way.
    The step's rule comes from :data:`FOLD_RULES`.

    Example:
        >>> from pyql.builder.query import Query
        >>> q = Query().add_fact("?c", "a.b.c", "?t")
        >>> fold_step(q.scope, q.add_max("?t").steps[-1], 1) == q.add_max("?t").scope
        True
    """
    return _rule(FOLD_RULES, type(step), "step")(scope, step, index)


@fold_rule(Fact)
def _fold_fact(scope: Folded, step: Fact, index: int) -> Folded:
    return Folded(_add_part(scope.block, step, step.variables()), scope.answer, scope.ask)


@fold_rule(TypeConstraint)
def _fold_type(scope: Folded, step: TypeConstraint, index: int) -> Folded:
    return Folded(_add_part(scope.block, step, (step.var,)), scope.answer, scope.ask)


@fold_rule(Filter)
def _fold_filter(scope: Folded, step: Filter, index: int) -> Folded:
    return Folded(_add_part(scope.block, step), scope.answer, scope.ask)


@fold_rule(Compare)
def _fold_compare(scope: Folded, step: Compare, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = _nested(block)
    return Folded(_add_part(block, step), scope.answer, True)


@fold_rule(TimeConstraint)
def _fold_time(scope: Folded, step: TimeConstraint, index: int) -> Folded:
    block = _add_part(_add_part(scope.block, TimeBound(step, index, False)), TimeBound(step, index, True))
    return Folded(block, scope.answer, scope.ask)


@fold_rule(Argmax)
def _fold_argmax(scope: Folded, step: Argmax, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = _nested(block)
    answer = step.answer if step.answer is not None else scope.answer
    return Folded(Block(block.parts, block.variables, step, block.computed, block.one_row, block), answer, scope.ask)


@fold_rule(Aggregate)
def _fold_aggregate(scope: Folded, step: Aggregate, index: int) -> Folded:
    block = Block(
        (Aggregation(step, scope.block),),
        (*step.group_by, step.new_var),
        None,
        (step.new_var,),
        step.func == "COUNT" and not step.group_by,
    )
    return Folded(block, None, scope.ask)


@fold_rule(Answer)
def _fold_answer(scope: Folded, step: Answer, index: int) -> Folded:
    return Folded(scope.block, step.var, scope.ask)


@fold_rule(Head)
def _fold_head(scope: Folded, step: Head, index: int) -> Folded:
    """Several answer variables: the block's rows, only those visible (projected in that order)."""
    block = scope.block
    narrowed = Block(block.parts, step.variables_, block.argmax, block.computed, block.one_row, block)
    return Folded(narrowed, None, scope.ask)


def fold(steps: Sequence[Step], profile: Profile | None = None) -> Folded:
    """Fold steps into blocks (see the module docstring); no text is built.

    Args:
        steps: the steps of a query.
        profile: not used (the scope does not depend on it); accepted so
            that callers written for the single-pass compiler keep working.

    Example:
        >>> from pyql.builder.query import Query
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


def part_text(part: Part, profile: Profile) -> str:
    """The text of one part of a block (it may span lines); the rule comes from :data:`TEXT_RULES`.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> part_text(Filter(Variable("w"), ">", Literal("200", escape.XSD + "integer")), FREEBASE)
        'FILTER(?w > 200)'
    """
    return _rule(TEXT_RULES, type(part), "part")(part, profile)


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


def _value_key(step: Argmax) -> str:
    # Numbers order as numbers; dates of mixed precision (xsd:date, gYear,
    # dateTime) order as their ISO text, which every engine agrees on. A
    # native argmax (values of one kind) orders by the variable itself.
    v = "?" + step.var.name
    return v if step.native else f"IF(isNumeric({v}), {v}, STR({v}))"


def _extreme_key(step: Argmax) -> str:
    """The key of an argmax with ties, in its MAX/MIN and in the FILTER equal to it.

    As :func:`_value_key`, but the numeric branch is ``?v + 0`` (the same
    number, of the same type): Virtuoso 7.2 answers ``MAX(IF(isNumeric(?v),
    ?v, STR(?v)))`` with no value when ``?v`` holds dates or strings (MIN is
    right), and with it a ties argmax over them gave no rows; with ``?v + 0``
    it gives the largest text, as pyoxigraph and rdflib do.
    """
    if step.native:
        return "?" + step.var.name
    v = "?" + step.var.name
    return f"IF(isNumeric({v}), {v} + 0, STR({v}))"


def _order_key(step: Argmax) -> str:
    key = _value_key(step)
    return f"DESC({key})" if step.descending else f"ASC({key})"


@text_rule(Fact)
def _fact_text(part: Fact, profile: Profile) -> str:
    return f"{term_sparql(part.head, profile)} {term_sparql(part.relation, profile)} {term_sparql(part.tail, profile)} ."


@text_rule(TypeConstraint)
def _type_text(part: TypeConstraint, profile: Profile) -> str:
    """``?x type T .``; with a subclass relation (Wikidata) an instance of T or of a subclass of it.

    That is ``?x wdt:P31/wdt:P279* T``, written as the union of its
    zero-step and its one-or-more-step halves (``wdt:P31 T`` or
    ``wdt:P31/wdt:P279+ T``): the same solutions, and Virtuoso 7.2 answers
    it in full, where it loses rows of the ``*`` path joined with a
    ``FILTER`` on a date or a sub-query (tests/test_virtuoso_wikidata.py).
    """
    var, kind, cls = part.var.sparql(), profile.sparql_iri(profile.type_predicate), term_sparql(part.type, profile)
    if not profile.subclass_predicate:
        return f"{var} {kind} {cls} ."
    subclass = profile.sparql_iri(profile.subclass_predicate)
    return f"{{ {var} {kind} {cls} . }} UNION {{ {var} {kind}/{subclass}+ {cls} . }}"


@text_rule(Filter)  # add_filter and add_compare
def _filter_text(part: Filter, profile: Profile) -> str:
    return "FILTER" + _comparison(part.left, part.op, part.right, profile, part.native)


@text_rule(TimeBound)
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


@text_rule(Block)
def _block_text(part: Block, profile: Profile) -> str:
    return part.pattern(profile)


@text_rule(Aggregation)
def _aggregation_text(part: Aggregation, profile: Profile) -> str:
    step = part.step
    distinct = "DISTINCT " if step.func == "COUNT" else ""
    group = " ".join(v.sparql() for v in step.group_by)
    select = (group + " " if group else "") + f"({step.func}({distinct}{step.var.sparql()}) AS {step.new_var.sparql()})"
    sub = "{\n" + f"{_INDENT}SELECT {select} WHERE " + part.block.pattern(profile, _INDENT)
    if group:
        sub += f"\n{_INDENT}GROUP BY {group}"
    return sub + "\n}"


def render_query(scope: Folded, profile: Profile) -> str:
    """The SPARQL text of a folded scope: PREFIX lines, then SELECT DISTINCT or ASK.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> from pyql.builder.query import Query
        >>> q = Query().add_fact("?c", "a.b.c", "?t").set_answer("?c")
        >>> render_query(fold(q.steps), FREEBASE) == q.sparql()
        True
    """
    block = scope.block
    head = prefix_lines(profile)
    if scope.ask:
        return head + "ASK WHERE " + block.pattern(profile) + "\n"
    if scope.answer is not None and scope.answer in block.variables:
        projection = "DISTINCT ?" + scope.answer.name
    elif block.variables:
        projection = "DISTINCT " + " ".join(["?" + v.name for v in block.variables])
    else:
        projection = "*"
    return head + "SELECT " + projection + " WHERE " + block.group(profile) + "\n" + block.modifiers()


def compile_query(query: CompilableQuery) -> str:
    """The SPARQL text of a query: PREFIX lines, then SELECT DISTINCT or ASK.

    Example:
        >>> from pyql.builder.query import Query
        >>> print(compile_query(Query("generic")), end="")
        PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
        PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
        PREFIX owl: <http://www.w3.org/2002/07/owl#>
        SELECT * WHERE {
        }
    """
    return render_query(query.scope, query.profile)


# ---------------------------------------------------------------------------
# MarkQA's functions on Wikidata's statement model (issue 21)
# ---------------------------------------------------------------------------

#: The namespaces of Wikidata's statement model (written through the profile's prefixes).
_WD_PROP = "http://www.wikidata.org/prop/"
WIKIBASE = "http://wikiba.se/ontology#"


@dataclass(frozen=True)
class Ranking:
    """The rank of ``add_rank``: ``(COUNT(DISTINCT ?var_list) + 1)`` over ``block`` (its FILTER included)."""

    step: Rank
    block: Block


@dataclass(frozen=True)
class SubSelect:
    """One query of ``add_sub_query`` as a ``{ SELECT ... }`` block: its folded ``scope``."""

    scope: Folded

    @property
    def projection(self) -> tuple[Variable, ...]:
        """What it returns: its answer after an argmax (as MarkQA), else all its variables."""
        block = self.scope.block
        if block.argmax is not None and self.scope.answer is not None and self.scope.answer in block.variables:
            return (self.scope.answer,)
        return block.variables


def _answer_scope(scope: Folded, block: Block, answer: Variable | None) -> Folded:
    return Folded(block, answer, scope.ask)


@fold_rule(QuantityBase)  # add_quantity, add_quantity_with_qualifier, add_quantity_by_qualifier
def _fold_quantity(scope: Folded, step: QuantityBase, index: int) -> Folded:
    return _answer_scope(scope, _add_part(scope.block, step, step.variables()), step.tag)  # type: ignore[attr-defined]


@fold_rule(Bind)
def _fold_bind(scope: Folded, step: Bind, index: int) -> Folded:
    return _answer_scope(scope, _add_part(scope.block, step, (step.var,)), step.var)


@fold_rule(Assignment)
def _fold_assignment(scope: Folded, step: Assignment, index: int) -> Folded:
    return _answer_scope(scope, _add_part(scope.block, step, (step.var,)), scope.answer)


@fold_rule(Rank)
def _fold_rank(scope: Folded, step: Rank, index: int) -> Folded:
    inner = _add_part(scope.block, Filter(step.rank_var, "<", step.var_list))
    block = Block((Ranking(step, inner),), (step.new_var,), None, (step.new_var,), True)
    return Folded(block, None, scope.ask)


@fold_rule(SubQuery)
def _fold_sub_query(scope: Folded, step: SubQuery, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = _nested(block)
    for query in step.queries:
        part = SubSelect(query.scope)
        block = _add_part(block, part, part.projection)
    return Folded(block, scope.answer, scope.ask)


@dataclass(frozen=True)
class Alternatives:
    """The part of ``add_union``: each branch's rows of ``var`` (a ``{ SELECT DISTINCT ?var ... }``), joined by ``UNION``."""

    step: Disjunction


@fold_rule(Disjunction)
def _fold_union(scope: Folded, step: Disjunction, index: int) -> Folded:
    block = scope.block
    if block.argmax is not None:
        block = _nested(block)
    return Folded(_add_part(block, Alternatives(step), (step.var,)), scope.answer, scope.ask)


@text_rule(Alternatives)
def _union_text(part: Alternatives, profile: Profile) -> str:
    """``{ SELECT DISTINCT ?v WHERE { ... } } UNION { ... }``, a branch's ORDER BY/LIMIT inside its own."""
    var = part.step.var.sparql()
    texts = []
    for branch in part.step.branches:
        block = branch.scope.block
        mods = "".join(f"{_INDENT}{line}\n" for line in block.modifiers().split("\n") if line)
        texts.append("{\n" + f"{_INDENT}SELECT DISTINCT {var} WHERE " + block.group(profile, _INDENT) + "\n" + mods + "}")
    return " UNION ".join(texts)


def _pid_iri(namespace: str, pid: str, profile: Profile) -> str:
    return iri_text(_WD_PROP + namespace + pid, profile)


def _amount_lines(step: QuantityBase, main_prop: str, value_ns: str, profile: Profile) -> list[str]:
    """The value node and amount lines of a quantity (and the SI conversion with ``unit``)."""
    st, node, amount = step.statement_var.sparql(), step.value_node_var.sparql(), step.amount_var.sparql()
    lines = [f"{st} {_pid_iri(value_ns, main_prop, profile)} {node} .", f"{node} {iri_text(WIKIBASE + 'quantityAmount', profile)} {amount} ."]
    if step.unit:  # type: ignore[attr-defined]
        conversion = "/".join(
            (
                iri_text(WIKIBASE + "quantityUnit", profile),
                _pid_iri("", "P2370", profile),
                _pid_iri("statement/value/", "P2370", profile),
                iri_text(WIKIBASE + "quantityAmount", profile),
            )
        )
        # A plain join: as OPTIONAL + FILTER(BOUND) Virtuoso 7.2 answers w24 in full, but pyoxigraph
        # then evaluates the conversion for every value node (0.8 s instead of 10 ms at 2*10^5 statements).
        factor = step.conversion_var.sparql()
        lines.append(f"{node} {conversion} {factor} .")
        lines.append(f"BIND(({amount} * {factor}) AS {step.tag.sparql()})")  # type: ignore[attr-defined]
    return lines


def _statement_line(step: QuantityBase, entity: Term, prop: str, profile: Profile) -> str:
    return f"{term_sparql(entity, profile)} {_pid_iri('', prop, profile)} {step.statement_var.sparql()} ."


@text_rule(Quantity)
def _quantity_text(part: Quantity, profile: Profile) -> str:
    """MarkQA's add_quantity: statement, value node, amount, [SI conversion], [point in time]."""
    lines = [_statement_line(part, part.entity, part.prop, profile)] + _amount_lines(part, part.prop, "statement/value/", profile)
    time_var = part.time_var
    if time_var is not None:
        lines.append(f"{part.statement_var.sparql()} {_pid_iri('qualifier/', 'P585', profile)} {time_var.sparql()} .")
    if isinstance(part.time, Literal):
        lines.append(f"FILTER({time_var.sparql()} = {term_sparql(part.time, profile)})")  # type: ignore[union-attr]
    elif isinstance(part.time, int) and time_var is not None:
        lines.append(f"FILTER(YEAR({time_var.sparql()}) = {escape.literal(str(part.time), escape.XSD + 'integer')})")
    return "\n".join(lines)


@text_rule(QuantityWithQualifier)
def _quantity_with_qualifier_text(part: QuantityWithQualifier, profile: Profile) -> str:
    """The statement's amount, with the qualifier ``pq:qualifier_prop qualifier_obj``."""
    amount = _amount_lines(part, part.main_prop, "statement/value/", profile)
    qualifier = (
        f"{part.statement_var.sparql()} {_pid_iri('qualifier/', part.qualifier_prop, profile)} "
        f"{term_sparql(part.qualifier_obj, profile)} ."
    )
    return "\n".join([_statement_line(part, part.entity, part.main_prop, profile), *amount[:2], qualifier, *amount[2:]])


@text_rule(QuantityByQualifier)
def _quantity_by_qualifier_text(part: QuantityByQualifier, profile: Profile) -> str:
    """The amount of the qualifier ``pqv:qualifier_prop`` of the statement ``entity main_prop main_obj``."""
    main = f"{part.statement_var.sparql()} {_pid_iri('statement/', part.main_prop, profile)} {term_sparql(part.main_obj, profile)} ."
    amount = _amount_lines(part, part.qualifier_prop, "qualifier/value/", profile)
    return "\n".join([_statement_line(part, part.entity, part.main_prop, profile), main, *amount])


@text_rule(Bind)
def _bind_text(part: Bind, profile: Profile) -> str:
    return f"BIND({part.expression.sparql(profile)} AS {part.var.sparql()})"


@text_rule(Assignment)
def _assignment_text(part: Assignment, profile: Profile) -> str:
    return f"VALUES {part.var.sparql()} {{ " + " ".join(term_sparql(v, profile) for v in part.values) + " }"


@text_rule(Ranking)
def _ranking_text(part: Ranking, profile: Profile) -> str:
    step = part.step
    select = f"((COUNT(DISTINCT {step.var_list.sparql()}) + 1) AS {step.new_var.sparql()})"
    return "{\n" + f"{_INDENT}SELECT {select} WHERE " + part.block.pattern(profile, _INDENT) + "\n}"


@text_rule(SubSelect)
def _sub_select_text(part: SubSelect, profile: Profile) -> str:
    block = part.scope.block
    projection = " ".join(v.sparql() for v in part.projection) or "*"
    mods = "".join(f"{_INDENT}{line}\n" for line in block.modifiers().split("\n") if line)
    return "{\n" + f"{_INDENT}SELECT DISTINCT {projection} WHERE " + block.group(profile, _INDENT) + "\n" + mods + "}"
