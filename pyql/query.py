"""The PyQL query builder: one immutable query, one method per PyQL function.

Every method returns a *new* :class:`Query`; the receiver never changes, so
an environment can keep the previous query and undo a step by keeping it
(or by calling :meth:`Query.undo`). ``sparql()`` works after every step.

Example:
    >>> q = (Query(profile="freebase")
    ...      .add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?category")
    ...      .add_fact("?cyclone", "meteorology.tropical_cyclone.category", "?category")
    ...      .add_fact("?cyclone", "meteorology.tropical_cyclone.formed", "?time")
    ...      .add_max("?time")
    ...      .set_answer("?cyclone"))
    >>> [str(v) for v in q.variables]
    ['?category', '?cyclone', '?time']
    >>> print(q.sparql().splitlines()[4])
    SELECT DISTINCT ?cyclone WHERE {
    >>> q.undo().answer is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

import pyql.escape as escape
from pyql.action_parser import render_action
from pyql.compiler import Folded, compile_query, fold, fold_step
from pyql.errors import QueryError
from pyql.profiles import Profile, get_profile
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
from pyql.terms import IRI, Literal, Term, TermLike, Variable, parse_term

__all__ = ["Query"]


def _reserved(var: Variable) -> Variable:
    if var.name.startswith("__"):
        raise QueryError(f"variable names starting with '__' are reserved for pyql's own queries; rename {var}")
    return var


# Terms read from text, per profile (by identity) and role: a step's
# variables and relations recur from step to step and question to question,
# and a term is immutable. Bounded: cleared when too large.
_TERMS: dict[int, tuple[Profile, dict[tuple[str, str], Term]]] = {}
_TERMS_MAX = 50_000


def _read_term(value: TermLike, profile: Profile, role: str) -> Term:
    """``parse_term`` of a value (a reserved variable refused), remembered for text values."""
    if type(value) is not str:
        term = parse_term(value, profile, role)
        return _reserved(term) if isinstance(term, Variable) else term
    hit = _TERMS.get(id(profile))
    if hit is None or hit[0] is not profile:
        if len(_TERMS) > 64:
            _TERMS.clear()
        hit = _TERMS[id(profile)] = (profile, {})
    known = hit[1]
    term = known.get((value, role))
    if term is None:
        term = parse_term(value, profile, role)
        if isinstance(term, Variable):
            _reserved(term)
        if len(known) >= _TERMS_MAX:
            known.clear()
        known[(value, role)] = term
    return term


@dataclass(frozen=True)
class Query:
    """An immutable PyQL query: a profile and the steps added so far.

    Args:
        profile: "freebase" (default), "wikidata", "generic" or a
            :class:`~pyql.profiles.Profile`.
        steps: the steps (normally built with the methods, not passed in).

    Example:
        >>> Query().add_fact("?x", "people.person.gender", "m.05zppz").steps[0].action
        'add_fact'
    """

    profile: Profile
    steps: tuple[Step, ...]

    def __init__(self, profile: str | Profile = "freebase", steps: Iterable[Step] = ()) -> None:
        object.__setattr__(self, "profile", get_profile(profile))
        object.__setattr__(self, "steps", tuple(steps))

    # -- helpers -----------------------------------------------------------
    def _with(self, step: Step) -> Query:
        new = Query(self.profile, self.steps + (step,))
        scope = self.__dict__.get("scope")  # this query's scope, if already computed (see `scope`)
        if scope is not None:
            # Extend it by the one new step instead of folding every step again.
            # The cache lives in the instance __dict__, as cached_property keeps it.
            new.__dict__["scope"] = fold_step(scope, step, len(self.steps))
        return new

    def term(self, value: TermLike, role: str = "any") -> Term:
        """Read a value as a term of this query's profile (see :func:`pyql.terms.parse_term`).

        Example:
            >>> Query().term("?x")
            Variable(name='x')
        """
        return _read_term(value, self.profile, role)

    def _var(self, value: TermLike, what: str) -> Variable:
        term = self.term(value)
        if not isinstance(term, Variable):
            raise QueryError(f"{what} must be a variable such as ?x, not {value!r}")
        return term

    def _visible(self, var: Variable, action: str) -> Variable:
        if var not in self.variables:
            existing = ", ".join(str(v) for v in self.variables) or "none yet"
            raise QueryError(f"{action}: {var} is not a variable of the query; existing variables: {existing}")
        return var

    # -- inspection --------------------------------------------------------
    @cached_property
    def scope(self) -> Folded:
        """The folded steps (blocks, visible variables, answer, query form; no text).

        Computed once per query and cached on it (the query is immutable; the
        cache is not a field, so it plays no part in ``==`` and ``hash``).
        :attr:`variables`, :attr:`answer`, :attr:`is_ask` and the compiler
        read it. See :func:`pyql.compiler.fold`.

        Example:
            >>> q = Query().add_fact("?c", "a.b.c", "?t").add_max("?t")
            >>> q.scope is q.scope, q.scope.block.limit
            (True, 1)
        """
        return fold(self.steps)

    @property
    def variables(self) -> tuple[Variable, ...]:
        """Variables visible at the current step, in order of appearance."""
        return self.scope.block.variables

    @property
    def answer(self) -> Variable | None:
        """The variable set by :meth:`set_answer` (None before, or after an aggregation)."""
        return self.scope.answer

    @property
    def is_ask(self) -> bool:
        """Whether the query is a yes/no question (after :meth:`add_compare`)."""
        return self.scope.ask

    def sparql(self) -> str:
        """The SPARQL 1.1 text of the query, with its own PREFIX lines (written once, then kept).

        Example:
            >>> q = Query().add_fact("?c", "a.b.c", "?t")
            >>> q.sparql() is q.sparql()
            True
        """
        text = self.__dict__.get("_sparql")
        if text is None:
            # Kept in the instance __dict__, like the scope: not a field, no part in == and hash.
            text = self.__dict__["_sparql"] = compile_query(self)
        return text

    def text(self) -> str:
        """The query's text in its query language (here SPARQL): the same as :meth:`sparql`.

        Example:
            >>> q = Query().add_fact("?c", "a.b.c", "?t")
            >>> q.text() == q.sparql() == str(q)
            True
        """
        return self.sparql()

    def __str__(self) -> str:
        return self.sparql()

    def __len__(self) -> int:
        return len(self.steps)

    def undo(self) -> Query:
        """The query without its last step.

        Raises:
            QueryError: when there is no step to undo.
        """
        if not self.steps:
            raise QueryError("there is no step to undo; the query is empty")
        return Query(self.profile, self.steps[:-1])

    # -- steps -------------------------------------------------------------
    def add_fact(self, head: TermLike, relation: TermLike, tail: TermLike) -> Query:
        """Add the triple pattern (head, relation, tail).

        Args:
            head: an entity (``m.0crbvqz``) or a variable (``?x``).
            relation: a relation (``meteorology.tropical_cyclone.category``) or a variable.
            tail: an entity, a variable or a literal.

        Example:
            >>> Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").variables
            (Variable(name='c'),)
        """
        return self._with(Fact(self.term(head, "entity"), self.term(relation, "relation"), self.term(tail, "entity")))

    def add_type_constrain(self, type: TermLike, var: TermLike) -> Query:
        """Constrain ``var`` to be an instance of ``type`` (the profile's type relation).

        Example:
            >>> Query().add_type_constrain("meteorology.tropical_cyclone", "?x").variables
            (Variable(name='x'),)
        """
        type_term = self.term(type, "entity")
        if not isinstance(type_term, IRI):
            raise QueryError(f"add_type_constrain takes a type name such as meteorology.tropical_cyclone, not {type!r}")
        return self._with(TypeConstraint(type_term, self._var(var, "the second argument of add_type_constrain")))

    def add_filter(self, left: TermLike, op: str, right: TermLike, *, native: bool = False) -> Query:
        """Keep rows where ``left op right`` (op: > < >= <= = !=).

        Numbers compare as numbers; a date literal (``2005-08-23``,
        ``"2005"^^xsd:gYear``) compares with a variable's dates at the coarser
        precision of the two, as text. ``native=True`` writes the engine's
        own comparison instead: the same, and cheaper, when every value of
        the variable has the literal's datatype (:meth:`pyql.kb.KB.native_compare`).

        Example:
            >>> "FILTER(?w > 200)" in Query().add_fact("?c", "a.b.c", "?w").add_filter("?w", ">", 200).sparql()
            True
            >>> q = Query().add_fact("?p", "a.b.born", "?d")
            >>> "SUBSTR" in q.add_filter("?d", ">=", "1990-01-01").sparql()
            True
            >>> "SUBSTR" in q.add_filter("?d", ">=", "1990-01-01", native=True).sparql()
            False
        """
        return self._with(Filter(self.term(left), op, self.term(right), native))

    def add_compare(self, left: TermLike, op: str, right: TermLike) -> Query:
        """Turn the query into a yes/no question: is there a row where ``left op right``?

        Example:
            >>> q = Query().add_fact("m.0a", "a.b.c", "?x").add_fact("m.0b", "a.b.c", "?y")
            >>> q.add_compare("?x", ">", "?y").is_ask
            True
        """
        return self._with(Compare(self.term(left), op, self.term(right)))

    def _argmax(self, var: TermLike, descending: bool, limit: int, offset: int, native: bool) -> Query:
        action = "add_max" if descending else "add_min"
        v = self._visible(self._var(var, f"the argument of {action}"), action)
        return self._with(Argmax(v, descending, limit, offset, native))

    def add_max(self, var: TermLike, limit: int = 1, offset: int = 0, *, native: bool = False) -> Query:
        """Keep the row(s) where ``var`` is largest (ORDER BY DESC ... LIMIT).

        Args:
            var: an existing variable holding numbers or dates.
            limit: rows kept.
            offset: rows skipped first.
            native: order by the engine's own order of ``var`` (fast, and
                right when its values are all numbers or all of one date
                type; :meth:`pyql.kb.KB.native_order` tells) instead of the
                key that orders mixed date types alike everywhere.

        Example:
            >>> Query().add_fact("?c", "a.b.c", "?t").add_max("?t", limit=2).sparql().rstrip().endswith("LIMIT 2")
            True
            >>> "ORDER BY DESC(?t)" in Query().add_fact("?c", "a.b.c", "?t").add_max("?t", native=True).sparql()
            True
        """
        return self._argmax(var, True, limit, offset, native)

    def add_min(self, var: TermLike, limit: int = 1, offset: int = 0, *, native: bool = False) -> Query:
        """Keep the row(s) where ``var`` is smallest (``native`` as in :meth:`add_max`).

        Example:
            >>> "ASC(" in Query().add_fact("?c", "a.b.c", "?t").add_min("?t").sparql()
            True
        """
        return self._argmax(var, False, limit, offset, native)

    def _aggregate(self, func: str, var: TermLike, new_var: TermLike, group_by: Iterable[TermLike]) -> Query:
        action = "add_" + func.lower()
        v = self._visible(self._var(var, f"the first argument of {action}"), action)
        new = self._var(new_var, f"the second argument of {action}")
        if new in self.variables:
            raise QueryError(f"{action}: {new} already exists; store the result in a new variable")
        groups = tuple(self._visible(self._var(g, "group_by"), action) for g in group_by)
        return self._with(Aggregate(func, v, new, groups))

    def add_count(self, var: TermLike, new_var: TermLike, group_by: Iterable[TermLike] = ()) -> Query:
        """Count the distinct values of ``var`` into ``new_var``.

        Example:
            >>> Query().add_fact("?c", "a.b.c", "?s").add_count("?c", "?n").variables
            (Variable(name='n'),)
        """
        return self._aggregate("COUNT", var, new_var, group_by)

    def add_sum(self, var: TermLike, new_var: TermLike, group_by: Iterable[TermLike] = ()) -> Query:
        """Sum ``var`` into ``new_var``.

        Example:
            >>> "SUM(?f)" in Query().add_fact("?c", "a.b.c", "?f").add_sum("?f", "?total").sparql()
            True
        """
        return self._aggregate("SUM", var, new_var, group_by)

    def add_avg(self, var: TermLike, new_var: TermLike, group_by: Iterable[TermLike] = ()) -> Query:
        """Average ``var`` into ``new_var``.

        Example:
            >>> "AVG(?f)" in Query().add_fact("?c", "a.b.c", "?f").add_avg("?f", "?mean").sparql()
            True
        """
        return self._aggregate("AVG", var, new_var, group_by)

    def add_time_constrain(
        self, var: TermLike, start_relation: TermLike, end_relation: TermLike, start_before: TermLike, end_after: TermLike
    ) -> Query:
        """Keep ``var`` (e.g. a position held) when it was in force between
        ``end_after`` and ``start_before`` (WebQSP's pattern).

        A missing start or end counts as open. The argument order is the one
        of the legacy PyQL programs:
        ``add_time_constrain(?x1, from_rel, to_rel, "2011-12-31", "2011-01-01")``.

        Example:
            >>> q = Query().add_fact("m.0s", "a.b.c", "?p").add_time_constrain(
            ...     "?p", "government.government_position_held.from",
            ...     "government.government_position_held.to", "2005-12-31", "2005-01-01")
            >>> q.sparql().count("NOT EXISTS")
            2
        """
        v = self._var(var, "the first argument of add_time_constrain")

        def relation(value: TermLike, what: str) -> IRI:
            term = self.term(value, "relation")
            if not isinstance(term, IRI):
                raise QueryError(f"the {what} relation of add_time_constrain must be a relation name, not {value!r}")
            return term

        def date(value: TermLike, what: str) -> Literal:
            term = self.term(value)
            if isinstance(term, Literal) and term.datatype and term.datatype.endswith("#integer") and len(term.lexical) == 4:
                term = Literal(term.lexical, term.datatype.replace("#integer", "#gYear"))
            if not (isinstance(term, Literal) and term.is_date):
                raise QueryError(
                    f"{what} of add_time_constrain must be a date such as 2011-12-31 or \"2011\"^^xsd:gYear, not {value!r}"
                )
            return term

        return self._with(
            TimeConstraint(
                v,
                relation(start_relation, "start"),
                relation(end_relation, "end"),
                date(start_before, "start_before"),
                date(end_after, "end_after"),
            )
        )

    def set_answer(self, var: TermLike) -> Query:
        """Return only ``var`` (an existing variable).

        Example:
            >>> Query().add_fact("?c", "a.b.c", "?t").set_answer("?c").answer
            Variable(name='c')
            >>> Query().set_answer("yes")
            Traceback (most recent call last):
            ...
            pyql.errors.QueryError: set_answer takes an existing variable such as ?x, not 'yes'; existing variables: none yet
        """
        try:
            v = self.term(var)
        except Exception:
            v = None
        if not isinstance(v, Variable):
            existing = ", ".join(str(x) for x in self.variables) or "none yet"
            raise QueryError(f"set_answer takes an existing variable such as ?x, not {var!r}; existing variables: {existing}")
        return self._with(Answer(self._visible(v, "set_answer")))

    # -- conversions -------------------------------------------------------
    def actions(self) -> list[str]:
        """The PyQL action lines that build this query (written by :func:`pyql.action_parser.render_action`).

        Example:
            >>> Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").actions()
            ['add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)']
            >>> Query().add_fact("?p", "a.b.born", "?d").add_filter("?d", ">=", "1990-01-01").actions()[-1]
            'add_filter(?d, >=, 1990-01-01)'
        """
        lines = []
        for step in self.steps:
            arguments = step.arguments()
            texts = [_action_argument(arg, self.profile) for arg in arguments]
            bare = tuple(i for i, arg in enumerate(arguments) if _bare_date(arg))
            lines.append(render_action(step.action, *texts, verbatim=bare))
        return lines


def _action_argument(arg: object, profile: Profile) -> str:
    """One argument of a step as an action writes it (names shortened by the profile)."""
    if isinstance(arg, IRI):
        return profile.shorten(arg.value)
    if isinstance(arg, Literal):
        return _literal_action_text(arg, profile)
    return str(arg)


def _bare_date(arg: object) -> bool:
    """Whether an argument is a date literal written as its bare lexical form (kept as it is, even malformed)."""
    return (
        isinstance(arg, Literal)
        and arg.lang is None
        and arg.datatype is not None
        and escape.literal(arg.lexical, arg.datatype) != arg.lexical
        and arg.datatype.endswith(("#date", "#dateTime"))
        and '"' not in arg.lexical
        and "," not in arg.lexical
    )


def _literal_action_text(lit: Literal, profile: Profile) -> str:
    if lit.lang is None and lit.datatype is not None:
        bare = escape.literal(lit.lexical, lit.datatype)
        if bare == lit.lexical:
            return bare
        if _bare_date(lit):
            return lit.lexical
        return escape.literal(lit.lexical) + "^^" + profile.shorten(lit.datatype)
    return lit.sparql()
