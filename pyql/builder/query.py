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

import datetime as _dt
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Iterable

import pyql.builder.escape as escape
from pyql.action_parser import render_action
from pyql.builder.expressions import DateLit, Entity, Expression, Num, Var, operand
from pyql.builder.compiler import Folded, compile_query, fold, fold_step
from pyql.errors import PyQLError, QueryError
from pyql.builder.profiles import Profile, get_profile
from pyql.builder.kinds.aggregate import Aggregate
from pyql.builder.kinds.answer import Answer, Head
from pyql.builder.kinds.argmax import Argmax
from pyql.builder.kinds.assignment import Assignment
from pyql.builder.kinds.bind import Bind
from pyql.builder.kinds.comparison import Compare, Filter, Side
from pyql.builder.kinds.fact import Fact
from pyql.builder.kinds.quantity import Quantity, QuantityByQualifier, QuantityWithQualifier
from pyql.builder.kinds.rank import Rank
from pyql.builder.kinds.sub_query import SubQuery
from pyql.builder.kinds.time_constraint import TimeConstraint
from pyql.builder.kinds.time_property import EndTime, PointInTime, StartTime
from pyql.builder.kinds.type_constraint import TypeConstraint
from pyql.builder.kinds.union import Disjunction
from pyql.builder.steps import Step, expression_variables
from pyql.builder.terms import IRI, Literal, Term, TermLike, Variable, parse_term
from pyql.errors import TermError

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


# -- MarkQA's arguments (Wikidata) -------------------------------------------
# A bare name MarkQA reads as a variable ("pop 2011" is ?pop_2011), and what
# looks like an entity or property id but is malformed (Q12x, wd:Qx, P3a).
_MQ_NAME_RE = re.compile(r"[^\W\d][\w ]*\Z")
_QID_RE = re.compile(r"(?:wd:)?[Qq]([0-9]+)\Z")
_QID_LIKE_RE = re.compile(r"wd:.*|[Qq][0-9]+[A-Za-z0-9]*\Z|[Qq]\Z", re.S)
_PID_RE = re.compile(r"(?:(?:wdt|p|ps|pq|psv|pqv):)?[Pp]?([0-9]+)\Z")
#: What a comparison's side may be, for its errors.
_SIDES = "a variable, an entity, a number, a date or an expression of MarkQA's functions such as year('t') or sub('a', 'b')"


def _mq_var(value: object, what: str) -> Variable:
    """A MarkQA variable: ``?x``, ``x`` or ``pop 2011`` (spaces → ``_``); a QID or a number is refused."""
    if isinstance(value, Variable):
        return _reserved(value)
    text = " ".join(str(value).split()).replace(" ", "_") if isinstance(value, str) else ""
    name = text[1:] if text.startswith("?") else text
    if not name or _QID_LIKE_RE.match(name) or not _MQ_NAME_RE.match(name):
        raise QueryError(f"{what} must be a variable name such as pop_2011 or ?pop_2011, not {value!r}")
    try:
        return _reserved(Variable(name))
    except TermError as exc:
        raise QueryError(f"{what}: {exc}") from None


def _mq_entity(value: object, profile: Profile, what: str) -> Term:
    """A MarkQA entity: a QID (``Q64``, ``wd:Q64``), a variable, or a bare name (a variable, as MarkQA reads it)."""
    if isinstance(value, (IRI, Variable)):
        return value
    text = value.strip() if isinstance(value, str) else ""
    match = _QID_RE.match(text)
    if match:
        return IRI(profile.prefixes["wd"] + "Q" + match.group(1))
    if _QID_LIKE_RE.match(text):
        raise TermError(f"{what}: {value!r} is not a Wikidata entity id; write Q followed by digits, e.g. Q64")
    return _mq_var(value, what)


def _mq_pid(value: object, what: str) -> str:
    """A MarkQA property id: ``P1082``, ``p1082``, ``1082``, ``wdt:P1082``, or its IRI; anything else is refused."""
    text = value.value.rsplit("/", 1)[-1] if isinstance(value, IRI) else value.strip() if isinstance(value, str) else ""
    match = _PID_RE.match(text)
    if not match or match.group(1).startswith("0"):
        raise TermError(f"{what}: {value!r} is not a Wikidata property id; write P followed by digits, e.g. P1082")
    return "P" + match.group(1)


def _groups(group_by: Iterable[TermLike], group_obj: object) -> tuple[TermLike, ...]:
    """``group_by`` plus MarkQA's single ``group_obj`` (a list there is taken as ``group_by``)."""
    if isinstance(group_by, (str, Variable)):
        group_by = (group_by,)
    if isinstance(group_obj, (list, tuple)):
        return (*group_by, *group_obj)
    return (*group_by, group_obj) if group_obj is not None else tuple(group_by)


@dataclass(frozen=True)
class Query:
    """An immutable PyQL query: a profile and the steps added so far.

    Args:
        profile: "freebase" (default), "wikidata", "generic" or a
            :class:`~pyql.builder.profiles.Profile`.
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
        """Read a value as a term of this query's profile (see :func:`pyql.builder.terms.parse_term`).

        Example:
            >>> Query().term("?x")
            Variable(name='x')
        """
        return _read_term(value, self.profile, role)

    def _var(self, value: TermLike, what: str) -> Variable:
        if self.profile.bare_names == "wikidata" and isinstance(value, str) and _MQ_NAME_RE.match(value.strip()):
            return _mq_var(value, what)  # MarkQA writes variables without "?" (Wikidata only)
        term = self.term(value)
        if not isinstance(term, Variable):
            raise QueryError(f"{what} must be a variable such as ?x, not {value!r}")
        return term

    def _operand(self, value: TermLike | Expression, action: str) -> Side:
        """A compared value: a term, an expression of MarkQA's functions (``year('t')``, ``sub('a', 'b')``), or on
        Wikidata a bare name as MarkQA writes a variable (``pop_2011``)."""
        if isinstance(value, Expression):
            return self._expression_side(value, action)
        if (
            self.profile.bare_names == "wikidata"
            and isinstance(value, str)
            and _MQ_NAME_RE.match(value.strip())
            and not _QID_LIKE_RE.match(value.strip())
            and value.strip().lower() not in ("true", "false")
        ):
            return _mq_var(value, "a compared variable")
        if not isinstance(value, (str, int, float, Decimal, _dt.date, Term)):
            raise QueryError(f"{action} compares {_SIDES}, not {value!r}")
        return self.term(value)

    def _expression_side(self, expression: Expression, action: str) -> Side:
        """An expression compared: a lone variable, number, entity or date as that term; an operation or a function
        kept whole, its variables in the query."""
        if isinstance(expression, Var):
            return self.term("?" + expression.name)
        if isinstance(expression, Num):
            text = format(expression.value, "f")
            return self.term(Decimal(text) if "." in text else int(text))
        if isinstance(expression, Entity):
            return self.term(expression.id, "entity")
        if isinstance(expression, DateLit):
            return self.term(expression.value)  # the day, a date literal as MarkQA's to_date(...) compared
        missing = [v for v in expression_variables(expression) if v not in self.variables]
        if missing:
            existing = ", ".join(str(v) for v in self.variables) or "none yet"
            raise QueryError(
                f"{action}: {', '.join(map(str, missing))} of {expression.markqa()} not in the query; add the step that "
                f"makes it first (existing variables: {existing})"
            )
        expression.sparql(self.profile)  # an entity the profile cannot name is refused now, not when compiled
        return expression

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
        read it. See :func:`pyql.builder.compiler.fold`.

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
        A side may be an expression of MarkQA's functions
        (:mod:`pyql.builder.expressions`), as MarkQA's ``add_filter(year('x1'),
        '>', 2001)``; its variables must be in the query.

        Example:
            >>> "FILTER(?w > 200)" in Query().add_fact("?c", "a.b.c", "?w").add_filter("?w", ">", 200).sparql()
            True
            >>> q = Query().add_fact("?p", "a.b.born", "?d")
            >>> "SUBSTR" in q.add_filter("?d", ">=", "1990-01-01").sparql()
            True
            >>> "SUBSTR" in q.add_filter("?d", ">=", "1990-01-01", native=True).sparql()
            False
            >>> from pyql.builder.expressions import sub, year
            >>> w = Query("wikidata").add_time("Q159821", "t")
            >>> w.add_filter(year("t"), ">", 2001).sparql().splitlines()[-2].strip()
            'FILTER(YEAR(?t) > 2001)'
            >>> w.add_filter(sub("t", "u"), ">", 0)
            Traceback (most recent call last):
            ...
            pyql.errors.QueryError: add_filter: ?u of sub(?t, ?u) not in the query; add the step that makes it first (existing variables: ?t)
        """
        return self._with(Filter(self._operand(left, "add_filter"), op, self._operand(right, "add_filter"), native))

    def add_compare(self, left: TermLike, op: str, right: TermLike) -> Query:
        """Turn the query into a yes/no question: is there a row where ``left op right``?

        Example:
            >>> q = Query().add_fact("m.0a", "a.b.c", "?x").add_fact("m.0b", "a.b.c", "?y")
            >>> q.add_compare("?x", ">", "?y").is_ask
            True
            >>> w = Query("wikidata").add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q90", "P1082", "b", 2011)
            >>> w.add_compare("a", ">", "b").actions()[-1]
            'add_compare(?a, >, ?b)'
        """
        return self._with(Compare(self._operand(left, "add_compare"), op, self._operand(right, "add_compare")))

    def _argmax(
        self,
        var: TermLike,
        descending: bool,
        limit: int | None,
        offset: int,
        native: bool,
        return_obj: TermLike | None,
        ties: bool = False,
    ) -> Query:
        action = "add_max" if descending else "add_min"
        v = self._visible(self._var(var, f"the argument of {action}"), action)
        answer = None
        if return_obj is not None and not (isinstance(return_obj, str) and return_obj.strip() == "*"):
            answer = self._visible(self._var(return_obj, f"return_obj of {action}"), action)
        return self._with(Argmax(v, descending, limit, offset, native, answer, ties))

    def add_max(
        self,
        var: TermLike,
        return_obj: TermLike | None = None,
        offset: int = 0,
        limit: int | None = 1,
        ties: bool = False,
        *,
        native: bool = False,
    ) -> Query:
        """Keep the row(s) where ``var`` is largest (ORDER BY DESC ... LIMIT).

        The arguments are MarkQA's, in its order: the third largest is
        ``add_max(v, offset=2)``, the top three ``add_max(v, limit=3)``.

        Args:
            var: an existing variable holding numbers or dates.
            return_obj: the variable the query returns afterwards (None or "*": unchanged).
            offset: rows skipped first.
            limit: rows kept (None: all after ``offset``).
            native: order by the engine's own order of ``var`` (fast, and
                right when its values are all numbers or all of one date
                type; :meth:`pyql.kb.KB.native_order` tells) instead of the
                key that orders mixed date types alike everywhere.
            ties: keep every row whose ``var`` equals the largest value
                (GrailQA's ARGMAX) instead of one of them: a sub-select
                computes the MAX and a FILTER keeps the rows equal to it.
                It takes no ``offset`` or ``limit`` (leave them 0 and 1).

        Example:
            >>> Query().add_fact("?c", "a.b.c", "?t").add_max("?t", limit=2).sparql().rstrip().endswith("LIMIT 2")
            True
            >>> "ORDER BY DESC(?t)" in Query().add_fact("?c", "a.b.c", "?t").add_max("?t", native=True).sparql()
            True
            >>> "(MAX(?t) AS ?__max_t)" in Query().add_fact("?c", "a.b.c", "?t").add_max("?t", ties=True, native=True).sparql()
            True
        """
        return self._argmax(var, True, limit, offset, native, return_obj, ties)

    def add_min(
        self,
        var: TermLike,
        return_obj: TermLike | None = None,
        offset: int = 0,
        limit: int | None = 1,
        ties: bool = False,
        *,
        native: bool = False,
    ) -> Query:
        """Keep the row(s) where ``var`` is smallest (arguments as in :meth:`add_max`).

        Example:
            >>> "ASC(" in Query().add_fact("?c", "a.b.c", "?t").add_min("?t").sparql()
            True
            >>> Query().add_fact("?c", "a.b.c", "?t").add_min("?t", "?c").answer
            Variable(name='c')
            >>> Query().add_fact("?c", "a.b.c", "?t").add_min("?t", ties=True).actions()[-1]
            'add_min(?t, *, 0, 1, true)'
        """
        return self._argmax(var, False, limit, offset, native, return_obj, ties)

    def _aggregate(
        self, func: str, var: TermLike, new_var: TermLike, group_by: Iterable[TermLike], group_obj: object = None
    ) -> Query:
        action = "add_" + func.lower()
        group_by = _groups(group_by, group_obj)
        v = self._visible(self._var(var, f"the first argument of {action}"), action)
        new = self._var(new_var, f"the second argument of {action}")
        if new in self.variables:
            raise QueryError(f"{action}: {new} already exists; store the result in a new variable")
        groups = tuple(self._visible(self._var(g, "group_by"), action) for g in group_by)
        return self._with(Aggregate(func, v, new, groups))

    def add_count(
        self, var: TermLike, new_var: TermLike, group_obj: TermLike | None = None, group_by: Iterable[TermLike] = ()
    ) -> Query:
        """Count the distinct values of ``var`` into ``new_var``.

        ``group_obj`` (MarkQA's) counts per value of one variable; ``group_by``
        takes several.

        Example:
            >>> q = Query().add_fact("?c", "a.b.c", "?s").add_count("?s", "?n", "?c")
            >>> [str(v) for v in q.variables], "GROUP BY ?c" in q.sparql()
            (['?c', '?n'], True)
            >>> Query().add_fact("?c", "a.b.c", "?s").add_count("?c", "?n").variables
            (Variable(name='n'),)
        """
        return self._aggregate("COUNT", var, new_var, group_by, group_obj)

    def add_sum(
        self, var: TermLike, new_var: TermLike, group_obj: TermLike | None = None, group_by: Iterable[TermLike] = ()
    ) -> Query:
        """Sum ``var`` into ``new_var``.

        Example:
            >>> "SUM(?f)" in Query().add_fact("?c", "a.b.c", "?f").add_sum("?f", "?total").sparql()
            True
        """
        return self._aggregate("SUM", var, new_var, group_by, group_obj)

    def add_avg(
        self, var: TermLike, new_var: TermLike, group_obj: TermLike | None = None, group_by: Iterable[TermLike] = ()
    ) -> Query:
        """Average ``var`` into ``new_var``.

        Example:
            >>> "AVG(?f)" in Query().add_fact("?c", "a.b.c", "?f").add_avg("?f", "?mean").sparql()
            True
        """
        return self._aggregate("AVG", var, new_var, group_by, group_obj)

    def add_time_constrain(
        self,
        var: TermLike,
        start_relation: TermLike,
        end_relation: TermLike,
        start_before: TermLike,
        end_after: TermLike,
        *,
        by_end: bool = False,
    ) -> Query:
        """Keep ``var`` (e.g. a position held) when it was in force between
        ``end_after`` and ``start_before`` (WebQSP's pattern).

        A missing start or end counts as open. The argument order is the one
        of the legacy PyQL programs:
        ``add_time_constrain(?x1, from_rel, to_rel, "2011-12-31", "2011-01-01")``.
        ``by_end``: the constraint is named by its end relation in an
        S-expression (``(TC X r.to 2011)``); the query is the same.

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
                by_end,
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
            v = self._var(var, "set_answer")
        except Exception:
            v = None
        if not isinstance(v, Variable):
            existing = ", ".join(str(x) for x in self.variables) or "none yet"
            raise QueryError(f"set_answer takes an existing variable such as ?x, not {var!r}; existing variables: {existing}")
        return self._with(Answer(self._visible(v, "set_answer")))

    # -- MarkQA's functions (Wikidata's statement model) -------------------
    def _wikidata(self, action: str) -> None:
        if self.profile.bare_names != "wikidata":
            raise QueryError(
                f"{action} is one of MarkQA's Wikidata functions; build the query with Query('wikidata'), "
                f"not the {self.profile.name} profile"
            )

    def _new(self, value: object, what: str, action: str) -> Variable:
        var = _mq_var(value, what)
        if var in self.variables:
            raise QueryError(f"{action}: {var} already exists; store the result in a new variable")
        return var

    def _time(self, time: object, tag: Variable) -> int | Literal | Variable | None:
        """``time`` of add_quantity: a year, a date, a variable, True (``?time_<tag>``) or None/False."""
        if time is None or time is False:
            return None
        if time is True:
            return Variable("time_" + tag.name)
        if isinstance(time, int):
            return time
        if isinstance(time, str) and time.strip().isdigit():
            return int(time.strip())
        if isinstance(time, (Variable, Literal)):
            term: object = time
        elif isinstance(time, str):
            term = _mq_var(time, "time of add_quantity") if time.strip().startswith("?") else self.term(time)
        elif isinstance(getattr(time, "lexical", None), str) and isinstance(getattr(time, "datatype", None), str):
            term = Literal(time.lexical, escape.XSD + time.datatype)  # type: ignore[attr-defined]
        else:
            term = None
        if isinstance(term, Variable) or (isinstance(term, Literal) and term.is_date):
            return term
        raise QueryError(
            f"time of add_quantity must be a year (2011), a date (to_date(2020, 5, 1) or 2020-05-01), "
            f"a variable (?t) or True, not {time!r}"
        )

    def add_quantity(self, entity: TermLike, prop: TermLike, tag: TermLike, time: object = False, unit: bool = False) -> Query:
        """MarkQA's ``add_quantity``: the amount of ``entity``'s ``prop`` statement in ``?tag``.

        Compiles to ``wd:E p:P ?statement_tag . ?statement_tag psv:P ?value_st_tag .
        ?value_st_tag wikibase:quantityAmount ?tag .``; ``?tag`` becomes the answer.

        Args:
            entity: a QID (Q64) or a variable.
            prop: a property id (P1082).
            tag: the name of the amount's variable (pop_2011 or ?pop_2011).
            time: a year (``pq:P585 ?time_tag`` of that YEAR), a date (the
                point in time equals it), a variable (bound to the point in
                time), True (``?time_tag``) or False (no time).
            unit: convert to SI units through the unit's P2370 conversion
                (``?tag`` = ``?non_si_tag * ?si_conversion_tag``).

        Example:
            >>> q = Query("wikidata").add_quantity("Q64", "P1082", "pop_2011", 2011)
            >>> print(q.sparql().split("WHERE ")[1], end="")
            {
              wd:Q64 p:P1082 ?statement_pop_2011 .
              ?statement_pop_2011 psv:P1082 ?value_st_pop_2011 .
              ?value_st_pop_2011 wikibase:quantityAmount ?pop_2011 .
              ?statement_pop_2011 pq:P585 ?time_pop_2011 .
              FILTER(YEAR(?time_pop_2011) = 2011)
            }
        """
        self._wikidata("add_quantity")
        var = _mq_var(tag, "the tag of add_quantity")
        subject = _mq_entity(entity, self.profile, "the entity of add_quantity")
        step = Quantity(subject, _mq_pid(prop, "the property of add_quantity"), var, self._time(time, var), unit)
        return self._with(step)

    def add_quantity_with_qualifier(
        self, entity: TermLike, main_prop: TermLike, qualifier_prop: TermLike, qualifier_obj: TermLike, tag: TermLike, unit: bool = False
    ) -> Query:
        """MarkQA's ``add_quantity_with_qualifier``: the amount of the ``main_prop`` statement whose
        qualifier ``qualifier_prop`` is ``qualifier_obj`` (``?statement pq:Q obj``).

        Example:
            >>> q = Query("wikidata").add_quantity_with_qualifier("Q1", "P2069", "P518", "Q2", "perf")
            >>> "?statement_perf pq:P518 wd:Q2 ." in q.sparql(), q.answer
            (True, Variable(name='perf'))
        """
        self._wikidata("add_quantity_with_qualifier")
        what = "add_quantity_with_qualifier"
        step = QuantityWithQualifier(
            _mq_entity(entity, self.profile, f"the entity of {what}"),
            _mq_pid(main_prop, f"main_prop of {what}"),
            _mq_pid(qualifier_prop, f"qualifier_prop of {what}"),
            _mq_entity(qualifier_obj, self.profile, f"qualifier_obj of {what}"),
            _mq_var(tag, f"the tag of {what}"),
            unit,
        )
        return self._with(step)

    def add_quantity_by_qualifier(
        self, entity: TermLike, main_prop: TermLike, main_obj: TermLike, qualifier_prop: TermLike, tag: TermLike, unit: bool = False
    ) -> Query:
        """MarkQA's ``add_quantity_by_qualifier``: the amount held by the qualifier ``qualifier_prop``
        (``pqv:``) of the statement ``entity main_prop main_obj``.

        Example:
            >>> q = Query("wikidata").add_quantity_by_qualifier("Q1", "P186", "Q2", "P2067", "mass")
            >>> "?statement_mass pqv:P2067 ?value_st_mass ." in q.sparql()
            True
        """
        self._wikidata("add_quantity_by_qualifier")
        what = "add_quantity_by_qualifier"
        step = QuantityByQualifier(
            _mq_entity(entity, self.profile, f"the entity of {what}"),
            _mq_pid(main_prop, f"main_prop of {what}"),
            _mq_entity(main_obj, self.profile, f"main_obj of {what}"),
            _mq_pid(qualifier_prop, f"qualifier_prop of {what}"),
            _mq_var(tag, f"the tag of {what}"),
            unit,
        )
        return self._with(step)

    def add_bind(self, expression: object, var: TermLike) -> Query:
        """``BIND(expression AS ?var)``; ``?var`` (new) becomes the answer.

        ``expression`` is built with MarkQA's functions (:mod:`pyql.builder.expressions`:
        ``add``, ``sub``, ``mul``, ``div`` ...): anything with ``variables()``
        and ``sparql(profile)``; its variables must be in the query. A single
        operand (a variable name, a number) is read as MarkQA's ``digit_or_var`` reads it.

        Example:
            >>> from pyql.builder.expressions import sub
            >>> q = Query("wikidata").add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021)
            >>> q.add_bind(sub("b", "a"), "ans").sparql().splitlines()[-2].strip()
            'BIND((?b - ?a) AS ?ans)'
            >>> q.add_bind("?a", "copy").steps[-1].expression
            Var(name='a')
        """
        new = self._new(var, "the variable of add_bind", "add_bind")
        if isinstance(expression, (str, int, float, Decimal)) and not isinstance(expression, bool):
            try:
                expression = operand(expression)
            except PyQLError:
                raise QueryError(
                    f"add_bind takes an expression such as mul(div(sub(?b, ?a), ?a), 100), a variable or a number, "
                    f"not {expression!r}"
                ) from None
        step = Bind(expression, new)
        missing = [v for v in expression_variables(expression) if v not in self.variables]
        if missing:
            existing = ", ".join(str(v) for v in self.variables) or "none yet"
            raise QueryError(
                f"add_bind: {', '.join(map(str, missing))} not in the query; add the quantities first "
                f"(existing variables: {existing})"
            )
        return self._with(step)

    def add_rank(self, rank_var: TermLike, var_list: TermLike, new_var: TermLike) -> Query:
        """MarkQA's rank: ``FILTER(?rank_var < ?var_list)``, then ``COUNT(DISTINCT ?var_list) + 1`` in ``?new_var``.

        ``rank_var`` holds the value ranked, ``var_list`` every value it is
        ranked among (largest first). Afterwards only ``?new_var`` is visible.

        Example:
            >>> q = (Query("wikidata").add_quantity("Q64", "P2046", "mine")
            ...      .add_type_constrain("Q515", "city").add_quantity("city", "P2046", "area"))
            >>> "(COUNT(DISTINCT ?area) + 1) AS ?rank" in q.add_rank("mine", "area", "rank").sparql()
            True
        """
        rank = self._visible(self._var(rank_var, "rank_var of add_rank"), "add_rank")
        values = self._visible(self._var(var_list, "var_list of add_rank"), "add_rank")
        return self._with(Rank(rank, values, self._new(new_var, "new_var of add_rank", "add_rank")))

    def add_sub_query(self, *queries: Query) -> Query:
        """Join independent queries with this one on their shared variables (``{ SELECT ... }`` blocks).

        Example:
            >>> a = Query("wikidata").add_quantity("Q64", "P1082", "pop_a")
            >>> b = Query("wikidata").add_quantity("Q90", "P1082", "pop_b")
            >>> [str(v) for v in Query("wikidata").add_sub_query(a, b).variables][:3]
            ['?statement_pop_a', '?value_st_pop_a', '?pop_a']
        """
        for query in queries:
            if not isinstance(query, Query):
                raise QueryError(f"add_sub_query takes queries built with pyql.Query, not {query!r}")
            if query.profile != self.profile:
                raise QueryError(f"add_sub_query: a {query.profile.name} query cannot join a {self.profile.name} query")
        return self._with(SubQuery(tuple(queries)))

    def add_union(self, var: TermLike, *branches: Query) -> Query:
        """``var`` takes its values from any of the branches (SPARQL ``UNION``), then joins this query.

        Each branch is a query of its own that binds ``var`` (S-expressions'
        ``OR``): only ``var`` is shared with this query, a branch's other
        variables stay inside it.

        Args:
            var: the variable the branches bind (new here, or one this query has).
            branches: two or more queries built with :class:`Query`, each binding ``var``.

        Example:
            >>> champion = Query().add_fact("?e", "sports.event.champion", "m.0j6tr")
            >>> runner_up = Query().add_fact("?e", "sports.event.runner_up", "m.0j6tr")
            >>> q = Query().add_fact("?e", "time.event.start_date", "?d").add_union("?e", champion, runner_up)
            >>> q.actions()[-1]
            'add_union(?e, query(add_fact(?e, sports.event.champion, m.0j6tr)), query(add_fact(?e, sports.event.runner_up, m.0j6tr)))'
            >>> " UNION " in q.sparql(), [str(v) for v in q.variables]
            (True, ['?e', '?d'])
        """
        for branch in branches:
            if not isinstance(branch, Query):
                raise QueryError(f"add_union takes queries built with pyql.Query as branches, not {branch!r}")
            if branch.profile != self.profile:
                raise QueryError(f"add_union: a {branch.profile.name} branch cannot join a {self.profile.name} query")
        return self._with(Disjunction(self._var(var, "the variable of add_union"), tuple(branches)))

    def add_assignment(self, values: Iterable[TermLike], var: TermLike) -> Query:
        """``VALUES ?var { ... }``: ``var`` takes each value (QIDs, numbers, dates, literals).

        Example:
            >>> Query("wikidata").add_assignment(["Q319", "Q2347978"], "car").sparql().splitlines()[-2].strip()
            'VALUES ?car { wd:Q319 wd:Q2347978 }'
        """
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise QueryError(f"add_assignment takes a list of values, e.g. ['Q319', 'Q2347978'], not {values!r}")
        terms = []
        for value in values:
            if isinstance(value, str) and self.profile.bare_names == "wikidata" and _QID_LIKE_RE.match(value.strip()):
                terms.append(_mq_entity(value, self.profile, "a value of add_assignment"))
            else:
                terms.append(self.term(value, "entity"))
        return self._with(Assignment(tuple(terms), self._var(var, "the variable of add_assignment")))

    def _property_fact(self, kind: type, pid: str, entity: TermLike, new_var: TermLike) -> Query:
        action = kind.action  # type: ignore[attr-defined]
        self._wikidata(action)
        subject = _mq_entity(entity, self.profile, f"the entity of {action}")
        relation = IRI(self.profile.prefixes["wdt"] + pid)
        return self._with(kind(subject, relation, _mq_var(new_var, f"new_var of {action}")))

    def add_start_time(self, entity: TermLike, new_var: TermLike) -> Query:
        """``entity wdt:P580 ?new_var`` (start time).

        Example:
            >>> Query("wikidata").add_start_time("Q8", "start").actions()
            ['add_start_time(wd:Q8, ?start)']
        """
        return self._property_fact(StartTime, "P580", entity, new_var)

    def add_end_time(self, entity: TermLike, new_var: TermLike) -> Query:
        """``entity wdt:P582 ?new_var`` (end time).

        Example:
            >>> "wd:Q8 wdt:P582 ?end ." in Query("wikidata").add_end_time("Q8", "end").sparql()
            True
        """
        return self._property_fact(EndTime, "P582", entity, new_var)

    def add_time(self, entity: TermLike, new_var: TermLike) -> Query:
        """``entity wdt:P585 ?new_var`` (point in time).

        Example:
            >>> "wd:Q8 wdt:P585 ?when ." in Query("wikidata").add_time("Q8", "when").sparql()
            True
        """
        return self._property_fact(PointInTime, "P585", entity, new_var)

    def set_head(self, head: str) -> Query:
        """MarkQA's ``set_head``, for the heads its own functions write: ``SELECT [DISTINCT] ?a [?b ...]`` or ``*``.

        One variable is :meth:`set_answer`; several (``SELECT ?pop_2011 ?pop_2021``)
        return those columns, in that order, and only they stay visible.
        Raw SPARQL is not accepted: aggregates are :meth:`add_count`,
        :meth:`add_sum`, :meth:`add_avg`, :meth:`add_rank`.

        Example:
            >>> Query("wikidata").add_time("Q8", "t").set_head("SELECT DISTINCT ?t").answer
            Variable(name='t')
            >>> q = Query("wikidata").add_time("Q8", "t").add_end_time("Q8", "e").set_head("SELECT ?e ?t")
            >>> q.variables, q.actions()[-1]
            ((Variable(name='e'), Variable(name='t')), 'set_head(SELECT ?e ?t)')
            >>> Query("wikidata").set_head("SELECT (MAX(?x) AS ?m)")
            Traceback (most recent call last):
            ...
            pyql.errors.QueryError: set_head takes SELECT ?var [?var ...] or SELECT *, not 'SELECT (MAX(?x) AS ?m)'; for aggregates use add_count, add_sum, add_avg, add_max/add_min or add_rank, for the answer set_answer
        """
        match = re.fullmatch(r"\s*SELECT\s+(?:DISTINCT\s+)?(\*|\?\w+(?:\s+\?\w+)*)\s*", head, re.I) if isinstance(head, str) else None
        if match is None:
            raise QueryError(
                f"set_head takes SELECT ?var [?var ...] or SELECT *, not {head!r}; for aggregates use add_count, add_sum, "
                "add_avg, add_max/add_min or add_rank, for the answer set_answer"
            )
        names = match.group(1).split()
        if names == ["*"]:
            return self
        if len(names) == 1:
            return self.set_answer(names[0])
        variables = tuple(self._visible(self._var(name, "set_head"), "set_head") for name in names)
        if len(set(variables)) != len(variables):
            raise QueryError(f"set_head names a variable twice in {head!r}; name each once")
        return self._with(Head(variables))

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
            bare = tuple(i for i, arg in enumerate(arguments) if _bare_date(arg) or _composite(arg))
            lines.append(render_action(step.action, *texts, verbatim=bare))
        return lines


def _composite(arg: object) -> bool:
    """Whether an argument is written as nested calls or a list (an expression, a sub-query, values), kept as it is."""
    return isinstance(arg, (Query, tuple, list)) or callable(getattr(arg, "markqa", None))


def _action_argument(arg: object, profile: Profile) -> str:
    """One argument of a step as an action writes it (names shortened by the profile).

    An expression is MarkQA's calls (``sub(?b, ?a)``), a sub-query
    ``query(action, ...)`` of its own action lines, values ``(wd:Q1, 5)``,
    a flag ``true``/``false`` and no limit ``none``.
    """
    if isinstance(arg, bool):
        return "true" if arg else "false"
    if arg is None:
        return "none"
    if isinstance(arg, Query):
        return "query(" + ", ".join(arg.actions()) + ")"
    if isinstance(arg, (tuple, list)):
        return "(" + ", ".join(_action_argument(item, profile) for item in arg) + ")"
    if callable(getattr(arg, "markqa", None)):
        return str(arg.markqa())  # type: ignore[attr-defined]
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
