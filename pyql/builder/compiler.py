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
the step) and :data:`TEXT_RULES` (part type → its text). Each step kind
registers its rules from its own module (:mod:`pyql.builder.kinds`, see
:mod:`pyql.builder.kind`): ``@fold_rule(Kind)``, a function that returns the
scope after the step (:func:`add_part` adds the step, or a part made of it,
to the current block; :func:`nested` starts a block around one), and, when
the step becomes a part of a block, ``@text_rule(PartKind)``, one that
writes the part. This module knows no step kind: a block's argmax is
anything shaped like :class:`Ordering`, a part anything with a text rule.
Nothing else dispatches on step types (``Query.actions`` renders any step
from its ``action`` and ``arguments()``).

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

import weakref
from dataclasses import InitVar, dataclass
from typing import Any, Callable, Protocol, Sequence, TypeVar

from pyql.errors import QueryError
from pyql.builder.profiles import Profile
from pyql.builder.steps import Step
from pyql.builder.terms import IRI, Term, Variable

__all__ = [
    "CompilableQuery",
    "Block",
    "Folded",
    "Ordering",
    "Part",
    "FOLD_RULES",
    "TEXT_RULES",
    "fold_rule",
    "text_rule",
    "fold",
    "fold_step",
    "add_part",
    "nested",
    "part_text",
    "EMPTY_SCOPE",
    "render_query",
    "compile_query",
    "prefix_lines",
    "iri_text",
    "term_sparql",
    "INDENT",
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


# A part of a block: a step that joins the block as it is (a triple pattern, a FILTER, a BIND ...),
# a part a step kind makes of its step (one side of a time constraint, an aggregation sub-SELECT ...)
# or the rows of an inner block (a nested Block); anything whose type has a text rule (TEXT_RULES).
Part = Any


class Ordering(Protocol):
    """What a block reads of the step that orders it (``add_max``/``add_min``, :mod:`pyql.builder.kinds.argmax`)."""

    @property
    def var(self) -> Variable: ...

    @property
    def limit(self) -> int | None: ...

    @property
    def offset(self) -> int: ...

    @property
    def ties(self) -> bool: ...

    @property
    def descending(self) -> bool: ...

    def order_by(self) -> str:
        """The ORDER BY condition (``DESC(...)``)."""

    def extreme_key(self) -> str:
        """The key of the extreme kept with ties (in its MAX/MIN and in the FILTER equal to it)."""


@dataclass(frozen=True)
class Block:
    """One level of the folded query: a group pattern plus solution modifiers.

    Immutable (a folded scope is cached on a query and shared). The text of
    its parts, once written, is kept on the block (per profile and
    indentation; not a field, so it plays no part in ``==`` and ``hash``).
    The block it was made from (``base``) is held weakly: while that block
    lives (the query before the step, kept by an environment's history) its
    text starts this one's, so a query built step by step writes each part
    once; a chain whose earlier queries are gone (a converter building
    40,000 steps) keeps one block and one text, not one of each per step
    (memory linear in the query's size, ``benchmarks/bench_convert.py --flat``).

    Attributes:
        parts: the patterns of the group, in order (see :data:`Part`).
        variables: the variables visible after the block, in order of appearance.
        argmax: the step whose ORDER BY / LIMIT / OFFSET apply to the block.
        computed: aggregate results (literals, never labelled).
        one_row: a COUNT without GROUP BY (while nothing is added to it).
        base: (given to the constructor, then :meth:`base_block`) a block whose parts
            are the first parts of this one (the block this one was made from).

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
    argmax: Ordering | None = None
    computed: tuple[Variable, ...] = ()
    one_row: bool = False
    base: InitVar[Block | None] = None

    def __post_init__(self, base: Block | None) -> None:
        # not a field (no part in ==, hash, repr); weak: see the class docstring
        self.__dict__["_base"] = None if base is None else weakref.ref(base)

    def base_block(self) -> Block | None:
        """The block this one was made from, while it lives (None: none, or gone).

        Example:
            >>> from pyql.builder.query import Query
            >>> q = Query().add_fact("?c", "a.b.c", "?t")
            >>> block = q.scope.block
            >>> longer = q.add_fact("?t", "d.e.f", "?u")
            >>> longer.scope.block.base_block() is block
            True
            >>> del q, block
            >>> longer.scope.block.base_block() is None  # the query before the step is gone, and its block
            True
        """
        ref = self.__dict__.get("_base")
        return None if ref is None else ref()

    def __getstate__(self) -> dict[str, Any]:
        """What a copy or a pickle keeps: the fields (not the weak base, not the texts written)."""
        return {name: value for name, value in self.__dict__.items() if name not in ("_base", "_texts")}

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
        out = "ORDER BY " + argmax.order_by() + "\n" + (f"LIMIT {argmax.limit}\n" if argmax.limit is not None else "")
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
        key = argmax.extreme_key()
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
        """The lines of the parts, indented: kept once written (on this block only: one text per block
        asked, never one per earlier block, which would be quadratic), and started from the nearest
        living base's text when it has one."""
        key = (id(profile), indent)
        hit = self.__dict__.get("_texts", {}).get(key)
        if hit is not None and hit[0] is profile:
            return hit[1]
        text, done = "", 0
        block = self.base_block()
        while block is not None:  # up the living bases to one whose text is known (no recursion: chains may be long)
            hit = block.__dict__.get("_texts", {}).get(key)
            if hit is not None and hit[0] is profile:
                text, done = hit[1], len(block.parts)
                break
            block = block.base_block()
        lead = indent + _INDENT
        pieces = [text]
        pieces += [lead + line + "\n" for part in self.parts[done:] for line in part_text(part, profile).split("\n")]
        text = "".join(pieces)
        self.__dict__.setdefault("_texts", {})[key] = (profile, text)
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
        >>> from pyql.builder.kinds.fact import Fact
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
        >>> from pyql.builder.kinds.fact import Fact
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
            raise QueryError(
                f"unknown {what} {kind.__name__}: no rule for it in pyql.builder.compiler "
                f"(a step kind registers its rules with @fold_rule/@text_rule in its module of pyql.builder.kinds)"
            )
        table[kind] = rule
    return rule


# ---------------------------------------------------------------------------
# Folding
# ---------------------------------------------------------------------------


def _with_variables(variables: tuple[Variable, ...], new: Sequence[Variable]) -> tuple[Variable, ...]:
    """``variables`` then those of ``new`` not in it yet (order of appearance)."""
    added = [v for v in dict.fromkeys(new) if v not in variables]
    return variables + tuple(added) if added else variables


def add_part(block: Block, part: Part, variables: Sequence[Variable] = ()) -> Block:
    """``block`` with one more part, and the variables it makes visible (a fold rule's building block).

    Example:
        >>> from pyql.builder.query import Query
        >>> fact = Query().add_fact("?c", "a.b.c", "?t").steps[0]
        >>> [str(v) for v in add_part(Block(), fact, fact.variables()).variables]
        ['?c', '?t']
    """
    return Block(
        block.parts + (part,), _with_variables(block.variables, variables), block.argmax, block.computed, block.one_row, block
    )


def nested(block: Block) -> Block:
    """A new block whose only pattern is ``block``'s rows (an argmax's rows before another ordering or a comparison).

    Example:
        >>> from pyql.builder.query import Query
        >>> b = Query().add_fact("?c", "a.b.c", "?t").add_max("?t").scope.block
        >>> nested(b).parts == (b,), nested(b).argmax is None
        (True, True)
    """
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
        >>> from pyql.builder.kinds.comparison import Filter
        >>> from pyql.builder.terms import Literal
        >>> part_text(Filter(Variable("w"), ">", Literal("200", "http://www.w3.org/2001/XMLSchema#integer")), FREEBASE)
        'FILTER(?w > 200)'
    """
    return _rule(TEXT_RULES, type(part), "part")(part, profile)


@text_rule(Block)
def _block_text(part: Block, profile: Profile) -> str:
    return part.pattern(profile)


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
