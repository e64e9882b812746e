"""What the rules know about a step: a read-only view of the three environments.

:func:`facts` wraps a :class:`~pyql.environment.StepRecord` and its
environment into a :class:`Facts` object with the questions rules ask
(which variables exist, which entities are linked or were seen, which
relations ``get_relation`` returned, what values a variable had ...). It
reads the record and the reasoning memory only, with one exception:
:meth:`Facts.relation_in_kb`, one bounded ASK that completes a relation
list read from a capped sample of a hub's edges (``Relations.truncated``)
before a rule calls a relation unknown or misdirected.
The view is computed lazily and cached for the step being analyzed, so many
rules asking the same question cost one computation.

Rules read an environment through protocols, the side chosen once by
``env.side``: :func:`kb_side` gives a SPARQL environment as a
:class:`KBRules` (the :class:`~pyql.environment.sparql_actions.KBContext` its actions
read, plus its memory and relation ranking), :func:`table_side` a SQL one as
a :class:`TableRules` (the :class:`~pyql_sql.actions.TableContext`, plus its
memory). Nothing probes an environment's attributes.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> rec = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
    >>> f = facts(env.step("add_max(?category)"), env)
    >>> f.created, f.value_kinds("?category")
    (['?category'], {'entity'})
"""

from __future__ import annotations

import re
import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence, cast

from correction.errors import RuleError
from pyql.action_parser import Arg
from pyql.echo import one_line
from pyql.errors import PyQLError
from pyql.kb.observation import Observation, Relations, Value
from pyql.environment.sparql_actions import KBContext
from pyql.builder.expressions import DateLit, Entity, Expression, Var
from pyql.builder.terms import IRI, BlankNode, Literal, Term, Variable, parse_term
from pyql_sql.actions import TableContext

if TYPE_CHECKING:
    from pyql.environment import Environment, StepRecord
    from pyql.builder.profiles import Profile
    from pyql.builder.query import Query
    from pyql.environment.sparql import SparqlMemory
    from pyql.builder.steps import Step
    from pyql_sql.environment import TableMemory

__all__ = [
    "Facts",
    "facts",
    "QueryShape",
    "query_shape",
    "env_side",
    "KBRules",
    "TableRules",
    "kb_side",
    "table_side",
    "message_text",
    "is_relation_name",
    "is_entity_name",
    "value_kind",
    "term_kind",
]

_FREEBASE_MID_RE = re.compile(r"[mg]\.[0-9a-z_]+\Z")
_WIKIDATA_PROPERTY_RE = re.compile(r"(?:(?:wdt|p|ps|pq):)?P[0-9]+\Z")
_UNNAMED_TEXT = ("unname_entity", "unnamed_entity", "unnamed node", "unnamed entity", "unnamed")


def env_side(env: Any) -> str:
    """The side of an environment ("sparql", "sql"): the ``side`` it declares.

    Example:
        >>> class Env: side = "sql"
        >>> env_side(Env())
        'sql'
    """
    return str(env.side)


class KBRules(KBContext, Protocol):
    """What rules read of an environment on a KB (side "sparql"): what its actions
    read (:class:`~pyql.environment.sparql_actions.KBContext`), its memory and its relation ranking
    (:class:`~pyql.environment.sparql.SparqlEnvironment` offers it)."""

    memory: SparqlMemory
    #: An unlinked entity id that is in the KB may be used (``pyql run``; agents: False).
    entities_from_kb: bool

    def rank_relations(self, relations: Iterable[str], limit: int | None = None) -> list[str]:
        """Relations ordered best first against the question."""


class TableRules(TableContext, Protocol):
    """What rules read of an environment on a table (side "sql"): what its actions
    read (:class:`~pyql_sql.actions.TableContext`) and its memory
    (:class:`~pyql_sql.environment.TableEnvironment` offers it)."""

    memory: TableMemory


def kb_side(env: Environment) -> KBRules | None:
    """The environment as rules read it on a KB, when its side is "sparql" (else None).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> from pyql_sql import Table
        >>> from pyql_sql.environment import TableEnvironment
        >>> kb_side(SparqlEnvironment(KB.open("demo"))).kb.profile.name
        'freebase'
        >>> kb_side(TableEnvironment(Table.from_rows(["a"], [["1"]]))) is None
        True
    """
    return cast("KBRules", env) if env.side == "sparql" else None


def table_side(env: Environment) -> TableRules:
    """The environment as rules read it on a table (its side must be "sql").

    Raises:
        RuleError: the environment is not on the SQL side (a rule declared for
            the wrong side).

    Example:
        >>> from pyql_sql import Table
        >>> from pyql_sql.environment import TableEnvironment
        >>> table_side(TableEnvironment(Table.from_rows(["a"], [["1"]]))).table.headers
        ('a',)
    """
    if env.side != "sql":
        raise RuleError(f"a table rule ran on the {env.side!r} side")
    return cast("TableRules", env)


def message_text(message: str, limit: int) -> str:
    """A message as a guideline quotes it: on one line, without its final period,
    cut to ``limit`` characters (``...`` included).

    Example:
        >>> message_text("Parse error.\\n  Expected )", 240)
        'Parse error. Expected )'
        >>> message_text("abcdefgh", 6)
        'abc...'
    """
    message = one_line(message, limit=len(message)).rstrip(". ")
    return message if len(message) <= limit else one_line(message, limit=limit - 3)


def is_relation_name(short: str, profile: Profile | None) -> bool:
    """Whether a name is shaped like a relation of the profile (not an entity or a type).

    Freebase relations have three or more dot-separated parts
    (``meteorology.tropical_cyclone.category``); ids (``m.0crbvqz``,
    ``g.11b6``) and types (``meteorology.tropical_cyclone``) have two.
    Wikidata properties are ``P31`` / ``wdt:P31``.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> [is_relation_name(n, FREEBASE) for n in ("a.b.c", "m.0crbvqz", "a.b")]
        [True, False, False]
    """
    bare = profile.bare_names if profile is not None else None
    if bare == "freebase":
        parts = short.split(".")
        return len(parts) >= 3 and parts[0] not in ("m", "g") and all(parts)
    if bare == "wikidata":
        return bool(_WIKIDATA_PROPERTY_RE.match(short))
    return False


def is_entity_name(short: str, profile: Profile | None) -> bool:
    """Whether a name is shaped like an entity id of the profile (``m.0abc``, ``Q42``).

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> [is_entity_name(n, FREEBASE) for n in ("m.0crbvqz", "g.11b6_z1", "a.b.c", "a.b")]
        [True, True, False, False]
    """
    bare = profile.bare_names if profile is not None else None
    if bare == "freebase":
        return bool(_FREEBASE_MID_RE.match(short))
    if bare == "wikidata":
        return bool(re.match(r"(?:wd:)?[QL][0-9]+\Z", short))
    return not is_relation_name(short, profile)


def value_kind(value: Value) -> str:
    """"entity", "unnamed", "number", "date" or "text".

    Example:
        >>> from pyql.builder.terms import XSD
        >>> value_kind(Value(Literal("2005-08-23", XSD + "date")))
        'date'
    """
    term = value.term
    if isinstance(term, (IRI, BlankNode)):
        return "unnamed" if value.unnamed or isinstance(term, BlankNode) else "entity"
    return term_kind(term)


def term_kind(term: Term | Expression) -> str:
    """"variable", "entity", "number", "date" or "text" for a term in an action.

    A four-digit integer counts as a number here (rules that accept years
    say so themselves). A side MarkQA computes (``year(?t)``, ``sub(?a, ?b)``:
    an operation or a function of :mod:`pyql.builder.expressions`) is a number.

    Example:
        >>> term_kind(Literal("10", "http://www.w3.org/2001/XMLSchema#integer")), term_kind(Variable("x"))
        ('number', 'variable')
        >>> from pyql.builder.expressions import year
        >>> term_kind(year("t"))
        'number'
    """
    if isinstance(term, Expression):
        return {Var: "variable", DateLit: "date", Entity: "entity"}.get(type(term), "number")
    if isinstance(term, Variable):
        return "variable"
    if isinstance(term, (IRI, BlankNode)):
        return "entity"
    if isinstance(term, Literal):
        if term.is_numeric:
            return "number"
        if term.is_date:
            return "date"
    return "text"


class Facts:
    """The view of one step that rules read (see the module docstring).

    Args:
        record: the step.
        env: its environment.

    Attributes:
        kb_env: the environment as rules read it on a KB (:func:`kb_side`),
            None on another side.
    """

    def __init__(self, record: StepRecord, env: Environment) -> None:
        self.record = record
        self.env = env
        self.memory = env.memory
        self.kb_env = kb_side(env)
        self._asked: dict[tuple[str, str, str | None], bool | None] = {}

    # -- the step ---------------------------------------------------------------
    @property
    def next_step(self) -> int:
        """The number of the step the LLM should write next (this step's index + 1)."""
        return self.record.index + 1

    @property
    def profile(self) -> Profile | None:
        """The naming rules of the KB (None off the KB side)."""
        return self.kb_env.kb.profile if self.kb_env is not None else None

    @property
    def query_steps(self) -> tuple[Step, ...]:
        """The steps of the current query on a KB (none off the KB side)."""
        return self.kb_env.query.steps if self.kb_env is not None else ()

    @cached_property
    def call_args(self) -> dict[str, Arg]:
        """The parsed arguments of the call by parameter name (as far as the action is known)."""
        call = self.record.call
        if call is None:
            return {}
        try:
            spec = self.env.actions.spec(call.name)
            args = self.env.arguments(call)
        except Exception:  # an invalid action has no parameters to name
            return {}
        return {p.name: a for p, a in zip(spec.params, args)}

    def raw(self, param: str) -> str:
        """The argument of a parameter as the LLM wrote it ('' when missing)."""
        arg = self.call_args.get(param)
        return arg.raw or arg.value if arg is not None else ""

    def term(self, param: str) -> Any:
        """The converted argument of a parameter (None when missing)."""
        return self.record.args.get(param)

    @cached_property
    def signature(self) -> str:
        """``name(a, b)`` of the action ('' for an unknown action)."""
        if self.record.action is None:
            return ""
        try:
            return self.env.actions.spec(self.record.action).signature
        except Exception:
            return ""

    def short(self, term: Any) -> str:
        """The memory key of a term: ``?x``, a short entity name or a literal's lexical form."""
        if isinstance(term, Variable):
            return str(term)
        if isinstance(term, IRI):
            profile = self.profile
            return profile.shorten(term.value) if profile is not None else term.value
        if isinstance(term, Literal):
            return term.lexical
        return str(term)

    # -- the reasoning memory ---------------------------------------------------
    @property
    def created(self) -> list[str]:
        """Variables some accepted step created (``?x``), in order of creation."""
        return list(self.memory.variables)

    @property
    def shape(self) -> QueryShape:
        """Visible variables, answer variable and yes/no form of the current query (folded once per query)."""
        return query_shape(self.kb_env.query if self.kb_env is not None else None)

    @property
    def visible(self) -> list[str]:
        """Variables of the current query (an aggregation hides the ones before it)."""
        return list(self.shape.visible)

    def is_created(self, var: Any) -> bool:
        return str(var) in self.memory.variables

    @cached_property
    def linked(self) -> list[str]:
        """Linked entities of the question, by short name (``m.0crbvqz``)."""
        out = []
        for value in self.memory.entities.values():
            out.append(self._normal(value))
        return list(dict.fromkeys(out))

    def _normal(self, text: str) -> str:
        profile = self.profile
        if profile is None:
            return text
        try:
            term = parse_term(text, profile, "entity")
        except Exception:
            return text
        return self.short(term)

    @cached_property
    def known_ids(self) -> set[str]:
        """Linked entities and entities seen in accepted results."""
        return set(self.linked) | set(self.memory.seen)

    @property
    def _relations(self) -> dict[str, Relations]:
        """Every accepted ``get_relation`` result, by argument (none off the KB side)."""
        return self.kb_env.memory.relations if self.kb_env is not None else {}

    def relations_of(self, key: str) -> Relations | None:
        """What an accepted ``get_relation(key)`` returned, if any."""
        return self._relations.get(key)

    @property
    def relation_lists_complete(self) -> bool:
        """Whether every ``get_relation`` result of the episode lists all relations (none was capped)."""
        return all(rels.complete for rels in self._relations.values())

    def relation_in_kb(self, end: Any, relation: Any, direction: str | None) -> bool | None:
        """Whether ``end`` has ``relation`` in ``direction`` ("forward", "backward", None: either),
        asked of the KB in one bounded ASK (``KB.has_relation``); cached for the step.

        Rules call it only when the relation list they would judge by may be
        incomplete (``not rels.complete``): a relation a capped sample missed
        is never called unknown without asking. None when there is no KB or
        the KB could not answer (the rule then judges by the list).

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"))
            >>> f = facts(env.step("get_relation(m.0crbvqz)"), env)
            >>> f.relation_in_kb(IRI("http://rdf.freebase.com/ns/m.0crbvqz"), "meteorology.tropical_cyclone.category", "forward")
            True
        """
        key = (self.short(end), self.short(relation) if not isinstance(relation, str) else relation, direction)
        if key in self._asked:
            return self._asked[key]
        kb_env = self.kb_env
        found: bool | None = None
        if kb_env is not None:
            query = kb_env.query if isinstance(end, Variable) else None
            try:
                found = bool(kb_env.kb.has_relation(end, relation, direction, query))
            except PyQLError:
                found = None
        self._asked[key] = found
        return found

    @cached_property
    def known_relations(self) -> set[str]:
        """Every relation any accepted ``get_relation`` returned."""
        return self.kb_env.memory.known_relations() if self.kb_env is not None else set()

    @property
    def got_relations(self) -> bool:
        """Whether any ``get_relation`` was accepted in this episode."""
        return bool(self._relations)

    def values_of(self, var: Any) -> tuple[Value, ...]:
        """The values a variable had in the latest accepted observation showing it.

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
            >>> _ = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?formed)")
            >>> [v.display() for v in facts(env.step("execute()"), env).values_of("?formed")]
            ['2002-08-06']
        """
        name = str(var).lstrip("?$")
        for step in reversed(self.memory.steps):
            result = step.result
            if isinstance(result, Observation):
                found = result.get(name)
                if found is not None and found.values:
                    return found.values
        return ()

    def value_kinds(self, var: Any) -> set[str]:
        """The kinds (:func:`value_kind`) of a variable's latest values."""
        return {value_kind(v) for v in self.values_of(var)}

    @cached_property
    def unnamed_holders(self) -> dict[str, str]:
        """Unnamed node id → the variable that held it, from accepted observations."""
        out: dict[str, str] = {}
        for step in self.memory.steps:
            result = step.result
            if isinstance(result, Observation):
                for var in result.variables:
                    for value in var.values:
                        if value.unnamed:
                            out.setdefault(value.short, str(var.variable))
        return out

    @cached_property
    def query_facts(self) -> list[tuple[Any, Any, Any]]:
        """(head, relation, tail) of the triple patterns in the current query."""
        from pyql.builder.kinds.fact import Fact

        return [(s.head, s.relation, s.tail) for s in self.query_steps if isinstance(s, Fact)]

    # -- suggestions --------------------------------------------------------------
    def ranked(self, relations: Iterable[str]) -> list[str]:
        """Relations best first against the question (the environment's ranking on a KB; else as given).

        Guidelines list them through the ``choices`` filter, so the first
        ``max_choices`` shown are the most relevant ones.

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"), question="when was it formed?")
            >>> facts(env.step("execute()"), env).ranked(["a.b.category", "a.b.formed"])
            ['a.b.formed', 'a.b.category']
        """
        names = list(relations)
        if self.kb_env is None:
            return names
        return self.kb_env.rank_relations(names)

    @cached_property
    def empty_get_relations(self) -> set[str]:
        """The targets (short names) whose ``get_relation`` already came back empty in this episode: no use suggesting them again."""
        return {
            self.short(r.args.get("entity_or_variable"))
            for r in self.env.history
            if r.action == "get_relation" and r.error == "get_relation_empty" and r.args.get("entity_or_variable") is not None
        }

    def get_relation_choices(self, exclude: Iterable[str] = ()) -> list[str]:
        """``get_relation(X)`` for every variable of the query and every linked entity.

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
            >>> _ = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)")
            >>> facts(env.step("execute()"), env).get_relation_choices()
            ['get_relation(?category)', 'get_relation(m.0crbvqz)']
        """
        skip = set(exclude)
        targets = [v for v in self.visible or self.created if v not in skip]
        targets += [e for e in self.linked if e not in skip]
        return [f"get_relation({t})" for t in dict.fromkeys(targets)]

    def variables_or_none(self) -> list[str]:
        """Variables that exist now (visible ones, else every created one)."""
        return list(self.visible or self.created)

    def variables_of_kind(self, kinds: Sequence[str]) -> list[str]:
        """Existing variables whose latest values are all of these kinds."""
        out = []
        for var in self.variables_or_none():
            found = self.value_kinds(var)
            if found and found <= set(kinds):
                out.append(var)
        return out


class QueryShape:
    """What rules need of a query's folded form (see :func:`query_shape`)."""

    __slots__ = ("visible", "answer", "ask")

    def __init__(self, visible: tuple[str, ...] = (), answer: str | None = None, ask: bool = False) -> None:
        self.visible = visible
        self.answer = answer
        self.ask = ask


class _ShapeCache(threading.local):
    query: Any = None
    shape: QueryShape | None = None


_SHAPES = _ShapeCache()


def query_shape(query: Query | None) -> QueryShape:
    """The visible variables, answer and form of a query, cached by query identity.

    Queries are immutable, so the fold is computed once per query object
    however many rules (and both phases of a step) ask. No query (off the
    KB side) has the empty shape.

    Example:
        >>> from pyql.builder.query import Query
        >>> shape = query_shape(Query().add_fact("?c", "a.b.c", "?t").add_count("?c", "?n"))
        >>> shape.visible, shape.answer, shape.ask
        (('?n',), None, False)
    """
    if _SHAPES.query is query and _SHAPES.shape is not None:
        return _SHAPES.shape
    if query is None:
        shape = QueryShape()
    else:
        from pyql.builder.compiler import fold

        try:
            folded = fold(query.steps, query.profile)
        except Exception:
            shape = QueryShape()
        else:
            answer = str(folded.answer) if folded.answer is not None else None
            shape = QueryShape(tuple(str(v) for v in folded.block.variables), answer, folded.ask)
    _SHAPES.query, _SHAPES.shape = query, shape
    return shape


class _Cache(threading.local):
    key: tuple[int, int, str, int, int] | None = None
    record: Any = None
    value: Facts | None = None


_CACHE = _Cache()


def facts(record: StepRecord, env: Environment) -> Facts:
    """The :class:`Facts` of a step (cached while the same step is analyzed).

    Example:
        >>> from pyql.environment import StepRecord, Environment
        >>> class Env(Environment):
        ...     def empty_query(self): return None
        >>> from pyql.environment.actions import ActionSet
        >>> facts(StepRecord(3, "x"), Env(ActionSet())).next_step
        4
    """
    key = (id(record), id(env), record.phase, len(env.memory.steps), env.memory.version)
    if _CACHE.key == key and _CACHE.record is record and _CACHE.value is not None:
        return _CACHE.value
    value = Facts(record, env)
    _CACHE.key, _CACHE.record, _CACHE.value = key, record, value
    return value


def looks_unnamed_text(arg: Arg | None) -> bool:
    """Whether an argument is the text of an unnamed node (``UnName_Entity``, ``unnamed node``).

    Example:
        >>> from pyql.action_parser import parse_argument
        >>> looks_unnamed_text(parse_argument("'UnName_Entity'"))
        True
    """
    if arg is None or arg.kind not in ("string", "text", "name", "lang_string"):
        return False
    return arg.value.strip().lower() in _UNNAMED_TEXT


def insists_on_execute(record: StepRecord, env: Environment, *rule_ids: str) -> bool:
    """Whether ``execute()`` comes right after the same rule stopped an ``execute()``.

    An empty answer can be the right one ("none"): after one guideline, an
    agent that executes the same query again is taken at its word.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> env = NS(history=[NS(action="execute", error="execute_empty_result", query_before="q")], query="q")
        >>> insists_on_execute(NS(action="execute"), env, "execute_empty_result")
        True
    """
    if record.action != "execute" or not env.history:
        return False
    last = env.history[-1]
    return last.action == "execute" and last.error in rule_ids and last.query_before == env.query


def insists_on_empty(record: StepRecord, env: Environment, *rule_ids: str) -> bool:
    """Whether a table agent takes an empty result at its word (an empty answer can be the right one: "none").

    The same ``add_condition``/``add_order`` again right after one of
    ``rule_ids`` stopped it is kept; once such a step is in force, the steps on
    the same conditions (``set_answer``, ``execute()``) are not stopped again.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> last = NS(action="add_condition", error="sql_empty_result", query_before="q", query_after="q2", ok=False)
        >>> insists_on_empty(NS(action="add_condition", query_after="q2"), NS(history=[last], query="q"), "sql_empty_result")
        True
    """
    history = env.history
    if record.action in ("add_condition", "add_order") and history:
        last = history[-1]
        if (last.error in rule_ids and last.action == record.action and last.query_before == env.query
                and last.query_after == record.query_after):
            return True
    conditions = list(table_side(env).query.conditions)
    return any(
        r.ok and r.empty and r.action in ("add_condition", "add_order") and r.query_after is not None
        and all(c in conditions for c in r.query_after.conditions)
        for r in history
    )
