"""Trying candidate steps without keeping them: one by one (:func:`trial`), or many in one KB query (:class:`StepChecker`).

The choose mode (:mod:`pyql.environment.next_steps`) offers only steps that run. A
trial runs a step on a fork of the environment (kept apart, never undone): one KB query (or more)
per candidate. The checker gets the same verdicts for most steps from one
bounded query for a whole batch:

1. each candidate is *dry-run* (:func:`dry_run`): the environment parses it,
   converts its arguments, asks the analyzer (ERASER) before it runs and
   builds its query exactly as a trial does, but the KB's ``observe`` only
   keeps the query (it sends nothing);
2. ``set_answer(?v)``, ``execute()`` and ``add_count(?v, ?n)`` are decided
   from the observations of the current query's pattern where the count of
   ``?v`` is exact, ``add_max``/``add_min`` where the observation shows
   every row and one extreme, and ``add_sum``/``add_avg`` where it shows
   every row with all the query's variables (no query);
3. the steps that only add a relation from what the query has to a fresh
   variable (:func:`fact_extension`) are checked together, their relations in
   one ``VALUES`` pattern per start (:func:`fact_branches`), joined with a
   bounded window of the current query's rows (or those rows in ``VALUES``
   when an observation showed them all), and so are the steps that only add
   triples and filters on its variables (:func:`pattern_extension`: type
   constraints, filters, time constraints); after an argmax, the steps
   added inside it are checked so over the argmax's row (:func:`argmax_lines`:
   rows there show the step has rows; the others go as probes in one more
   query, since the argmax may move to another row); the others go as their own
   bounded probes (:func:`pyql.kb.probes.candidates_query`: each one's first
   few rows with every observed variable bound, ``LIMIT`` per branch); both in
   one UNION, one query, without labels: the labels of the values the
   previews show come in one more query, only for values not seen yet in the
   episode; at the episode's start (nothing labelled yet) the facts from its
   entities bring their labels in the check. (On Virtuoso a branch costs
   about as much as the current query's pattern it repeats, and a label
   pattern triples it; labels over the grouped rows of every check cost more
   than the label queries they spare, since most checks need none:
   ``docs/benchmarks.md``);
4. a step whose query gives rows is kept, with its first values as the
   preview; one whose query gives none fails as its trial would (an empty
   result fails a step: ERASER's ``empty_result`` and the rules it falls back
   from, or ``undo_empty`` without an analyzer); a yes/no comparison is kept
   either way (its answer is its preview).

Where the batch cannot tell what the trial would say, the candidate is
tried after all: a grouped fact without rows when the window or the rows
were cut, a step of another kind (:data:`BATCHED_ACTIONS`: MarkQA's
quantities and arithmetic), a ``set_answer`` or ``execute()`` whose sampled
values are all unnamed nodes (ERASER's ``answer_unnamed_node`` and
``execute_unnamed_answer`` read the step's own result), an empty
``execute()`` (an agent may insist on an empty answer), an empty result on
an environment that keeps empty results, and every candidate of a batch
the engine rejected.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    >>> checker = StepChecker(env)
    >>> good = "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)"
    >>> bad = "add_fact(m.0crbvqz, meteorology.tropical_cyclone_season.tropical_cyclones, ?s)"
    >>> before = env.kb.stats.queries
    >>> checker.check([good, bad])
    >>> checker.verdict(good).preview, checker.verdict(bad), env.kb.stats.queries - before, env.query.steps
    ('?c = Tropical storm (SSHS)', None, 1, ())

(one query: at the episode's start the check brings the labels of the values its previews show.)
"""

from __future__ import annotations

import decimal
import re
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyql.builder.compiler import prefix_lines
from pyql.errors import PyQLError
from pyql.kb import probes
from pyql.kb.observation import Observation, ResultSet, Value, VariableValues
from pyql.builder.terms import IRI, XSD, Literal, Term, Variable

__all__ = [
    "BATCHED_ACTIONS", "BATCH_SIZE", "FACT_ROWS", "FACT_WINDOW", "FactExtension", "PatternExtension", "Verdict", "StepChecker", "dry_run",
    "argmax_lines", "current_record", "fact_branches", "fact_extension", "has_alternatives", "pattern_extension", "preview_of", "trial",
]

#: The actions whose verdict a batched query gives (the others are tried one by one).
BATCHED_ACTIONS = frozenset(
    {
        "add_fact", "add_type_constrain", "add_filter", "add_time_constrain", "add_max", "add_min",
        "add_compare", "add_count", "add_sum", "add_avg", "set_answer", "execute",
    }
)
#: Candidates one batched query checks at most (its text grows with them; each branch is bounded).
BATCH_SIZE = 48
#: Distinct values of a fact's subject (or object) variable one grouped check joins at most (its window).
FACT_WINDOW = 1000
#: (candidate, value) rows a grouped check of facts reads per candidate at most.
FACT_ROWS = 16
_TRIPLE = re.compile(r"^\s*(\S+) (<[^<>\s]+>) (\S+) \.$")
_KEYS_VAR = "__keys"
#: The actions whose query may be the current one plus triples and filters (:func:`pattern_extension`).
_EXTENDING = ("add_type_constrain", "add_filter", "add_time_constrain", "add_fact", "set_answer")
_VALUE_VAR = "__o"
_LABEL_VAR = "__label"
#: An IRI no KB describes: what the label pattern of a check looks up for a value that is a literal.
_NO_ENTITY = IRI("urn:x-pyql:no-entity")
#: Labels a check has read, per episode: a value shown again is not asked again.
_LABELS = "batch_trials.labels"
#: The values of facts from entities a check has read, per episode: (entity, relation, forward) → values
#: (at most :data:`FACT_ROWS`; none: the fact has no rows). The KB does not change during an episode.
_ENTITY_FACTS = "batch_trials.entity_facts"
#: The same, for an environment that keeps nothing for its episode (no ``shared``): per environment object.
_PER_OBJECT: dict[str, weakref.WeakKeyDictionary[Any, dict[Any, Any]]] = {
    _LABELS: weakref.WeakKeyDictionary(), _ENTITY_FACTS: weakref.WeakKeyDictionary(),
}


def _kept(env: Any, name: str) -> dict[Any, Any]:
    """What the episode's checks have read of the KB, of one kind: in the episode's shared store, which every fork of
    the episode shares (:attr:`pyql.environment.kernel.Environment.shared`: a search's branches read a label or an
    entity's fact once).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"))
        >>> _kept(env, _LABELS) is _kept(env.fork(), _LABELS)
        True
    """
    shared = getattr(env, "shared", None)
    if isinstance(shared, dict):
        return shared.setdefault(name, {})
    return _PER_OBJECT[name].setdefault(env, {})


def trial(env: Any, action: str) -> Any:
    """Run ``action`` on a fork of the environment (:meth:`~pyql.environment.kernel.Environment.fork`): the step's record,
    the episode unchanged.

    The KB queries it sent stay counted in the environment's counters. A
    tried step's observation skips the look-up of quantities' units and
    times (``describe_quantities``): only whether the step runs matters.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> trial(env, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)").ok, env.query.steps
        (True, ())
    """
    fork = env.fork()
    fork.describe_quantities = False
    return fork.step(action)


class _Recorder:
    """A KB whose ``observe`` and ``execute`` keep the query and answer "some rows" without sending it; the rest is the KB's own."""

    def __init__(self, kb: Any) -> None:
        self._kb = kb
        self.queries: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kb, name)

    def observe(self, query: Any, *args: Any, **kwargs: Any) -> Observation:
        self.queries.append(query)
        if query.is_ask:
            return Observation((), boolean=True)
        return Observation(tuple(VariableValues(v, (), 1) for v in probes.observed_variables(query)))

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> ResultSet:
        self.queries.append(query)
        if query.is_ask:
            return ResultSet((), boolean=True)
        variables = tuple(probes.observed_variables(query))
        stand_in = Value(Literal("1", XSD + "integer"))
        return ResultSet(variables, ({v.name: stand_in for v in variables},))


def dry_run(env: Any, action: str) -> tuple[Any, Any]:
    """The step's record and the query its observation would read (None when it fails before), nothing sent for it.

    A fork of the environment runs ``action`` as :func:`trial` does (parsing, ERASER's
    rules before the step, building the query; what those read from the KB
    is read), but the fork's KB's ``observe`` only keeps the query. The episode is
    left as it was.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> record, query = dry_run(env, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
        >>> record.ok, [str(v) for v in query.variables], env.kb.stats.queries, env.query.steps
        (True, ['?c'], 0, ())
        >>> dry_run(env, "add_max(?nothing)")[1] is None
        True
    """
    fork = env.fork()
    recorder = _Recorder(env.kb)
    fork.kb = recorder
    record = fork.step(action)
    ran = record.ok and len(recorder.queries) == 1
    return record, recorder.queries[0] if ran else None


@dataclass(frozen=True)
class Verdict:
    """What a check says of one candidate: whether it runs, and the start of its result.

    Attributes:
        ok: whether the step runs without an error (its trial would keep it).
        preview: the first values of its new variables (or the answer, ``yes``/``no``).
    """

    ok: bool
    preview: str = ""


def preview_of(cells: Sequence[dict[str, Value]], variables: Sequence[Any], before: set[str], boolean: bool | None, limit: int) -> str:
    """A short view of a batch's rows for one candidate: the new variables' first values (else all), or yes/no.

    Up to three values a variable, ``+more`` when the batch saw a fourth (it reads no count).

    Example:
        >>> from pyql.builder.terms import IRI, Variable
        >>> cells = [{"c": Value(IRI("http://x/a"), "A")}, {"c": Value(IRI("http://x/b"), "B")}]
        >>> preview_of(cells, [Variable("c")], set(), None, 60)
        '?c = A, B'
    """
    if boolean is not None:
        return "yes" if boolean else "no"
    shown = [v for v in variables if str(v) not in before] or list(variables)
    parts = []
    for var in shown:
        values = list(dict.fromkeys(c[var.name] for c in cells if var.name in c))
        if values and all(v.unnamed for v in values):
            parts.append(f"{var} = unnamed nodes")
            continue
        names = [x.label if x.label else x.display() for x in values[:3]]
        parts.append(f"{var} = {', '.join(names)}{' +more' if len(values) > 3 else ''}")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


@dataclass(frozen=True)
class FactExtension:
    """A candidate that only adds one fact to the current query, from a value it has to a fresh variable.

    Attributes:
        key: the end the query already has, as SPARQL (``?x`` or ``<iri>``).
        relation: the relation's IRI, as SPARQL.
        forward: whether ``key`` is the subject.
        fresh: the new variable (the other end).
        shown: the variable its preview shows: ``fresh``, or the query's answer once one is set.
        partial: the fact goes inside the current query's argmax (:func:`argmax_lines`): rows in the window
            show the step has rows; none show nothing (the argmax may move to another row).
    """

    key: str
    relation: str
    forward: bool
    fresh: Variable
    shown: Variable
    partial: bool = False


def fact_extension(base: Any, query: Any) -> FactExtension | None:
    """How ``query`` extends ``base`` when it is ``base`` plus one fact to a fresh variable (else None).

    Such candidates are checked together (:func:`fact_branches`): their queries differ only in the
    relation, so one pattern with the relations in ``VALUES`` checks them all.

    Example:
        >>> from pyql.builder.query import Query
        >>> base = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
        >>> found = fact_extension(base, base.add_fact("?d", "a.b.c", "?c"))
        >>> found.key, found.relation, found.forward, str(found.fresh), str(found.shown)
        ('?c', '<http://rdf.freebase.com/ns/a.b.c>', False, '?d', '?d')
        >>> str(fact_extension(base.set_answer("?c"), base.set_answer("?c").add_fact("?c", "a.b.c", "?d")).shown)
        '?c'
        >>> fact_extension(base, base.add_max("?c")) is None
        True
    """
    computed = query.scope.block.computed
    # after an aggregate that keeps one row (a count without groups) a fact from an entity joins that row
    if query.is_ask or query.answer != base.answer or computed and not (base.steps and base.scope.block.one_row and computed == base.scope.block.computed):
        return None
    compared = argmax_lines(base, query)
    if compared is None:
        return None
    before, lines, partial = compared
    if len(lines) != len(before) + 1 or lines[:-2] != before[:-1] or lines[-1] != before[-1]:
        return None
    match = _TRIPLE.match(lines[-2])
    known = {v.sparql() for v in base.variables} if base.steps else set()
    if match is None:
        return None
    subject, relation, obj = match.groups()
    before_shown = [v.sparql() for v in probes.observed_variables(base)] if base.steps else []
    shown = [v.sparql() for v in probes.observed_variables(query)]
    for key, other, forward in ((subject, obj, True), (obj, subject, False)):
        fresh_ok = other.startswith("?") and other not in known
        key_ok = key in known and not computed if key.startswith("?") else key.startswith("<")
        answer = query.answer is not None and shown == before_shown
        if fresh_ok and key_ok and (answer or shown == [*before_shown, other]):
            fresh = Variable(other[1:])
            # from an entity inside an argmax: every row of the argmax's pattern goes with each of the fact's, so
            # the argmax keeps its row exactly when the fact has rows (not partial)
            partial_here = partial and key.startswith("?")
            return FactExtension(key, relation, forward, fresh, Variable(shown[0][1:]) if answer else fresh, partial_here)
    return None


def argmax_lines(base: Any, query: Any) -> tuple[list[str], list[str], bool] | None:
    """The pattern lines of ``base`` and ``query`` an extension is read from, and whether they are an argmax's.

    Where ``base`` keeps the row with the largest (smallest) value (``add_max``/``add_min``: first row, no ties)
    and ``query`` has the same argmax, the lines are those inside it, as a group: a step added there changes the
    rows the argmax ranks. Then a row of ``base`` that the added lines extend is a row of ``query``'s argmax
    (its value is still the extreme), so the step has rows; when the row they extend is not ``base``'s, only
    the step's own query tells (the third item is True). None: ``base`` ranks in another way.

    Example:
        >>> from pyql.builder.query import Query
        >>> base = Query("freebase").add_fact("?c", "a.b.c", "?w").add_max("?w")
        >>> before, lines, partial = argmax_lines(base, base.add_fact("?c", "a.b.d", "?k"))
        >>> before, lines[-2], partial
        (['{', '  ?c <http://rdf.freebase.com/ns/a.b.c> ?w .', '}'], '  ?c <http://rdf.freebase.com/ns/a.b.d> ?k .', True)
    """
    before = base.scope.block.pattern(base.profile).splitlines() if base.steps else ["{", "}"]
    lines = query.scope.block.pattern(query.profile).splitlines()
    top = base.scope.block.argmax if base.steps else None
    if top is None:
        return before, lines, False
    if query.scope.block.argmax != top or top.ties or top.offset or top.limit != 1 or top.answer is not None:
        return None
    if len(before) < 6 or before[1] != "  SELECT * WHERE {" or lines[:2] != before[:2] or lines[-4:] != before[-4:]:
        return None
    return ["{", *[x[2:] for x in before[2:-4]], "}"], ["{", *[x[2:] for x in lines[2:-4]], "}"], True


_VAR = re.compile(r"\?(\w+)")


@dataclass(frozen=True)
class PatternExtension:
    """A candidate whose pattern is the current query's plus triples and filters on the variables it has.

    Type constraints, filters and time constraints are such steps: their rows are the current
    query's rows that pass, so they are checked over the same window as the grouped facts
    (:func:`fact_branches`) instead of a probe that repeats the current query's pattern each.

    Attributes:
        triples: the added triples (``s p o .``), every variable one the query has.
        filters: the added ``FILTER`` conditions (the text inside ``FILTER(...)``).
        keys: the query's variables the added lines use, as SPARQL.
        shown: the variable its preview shows: the query's answer once one is set, else the first key.

    A ``set_answer`` that moves the answer to another variable of the query is one too, without lines
    (the same rows; the new answer is shown). ``partial``: the lines go inside the current query's argmax
    (see :class:`FactExtension`).
    """

    triples: tuple[str, ...]
    filters: tuple[str, ...]
    keys: tuple[str, ...]
    shown: Variable
    partial: bool = False


def pattern_extension(base: Any, query: Any) -> PatternExtension | None:
    """How ``query`` extends ``base`` when it is ``base`` plus triples and filters on ``base``'s variables (else None).

    The added lines may stand anywhere among ``base``'s (a filter holds for the whole group); a
    variable they use is one ``base`` shows, or one local to a filter (not in ``base``'s pattern).

    Example:
        >>> from pyql.builder.query import Query
        >>> base = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
        >>> found = pattern_extension(base, base.add_filter("?c", "!=", "m.x"))
        >>> found.triples, found.filters, found.keys, str(found.shown)
        ((), ('?c != <http://rdf.freebase.com/ns/m.x>',), ('?c',), '?c')
        >>> pattern_extension(base, base.add_fact("?c", "a.b.c", "?d")) is None  # a fresh variable: a grouped fact
        True
        >>> two = base.add_fact("?c", "a.b.c", "?d").set_answer("?c")
        >>> str(pattern_extension(two, two.set_answer("?d")).shown)
        '?d'

    """
    if not base.steps or query.is_ask or query.scope.block.computed or base.scope.block.computed:
        return None
    compared = argmax_lines(base, query)
    if compared is None:
        return None
    before, lines, partial = compared
    if query.answer != base.answer:  # set_answer on another variable: the same rows, another variable shown
        answer = query.answer
        if base.answer is None or lines != before or answer is None or answer not in base.variables:
            return None
        return PatternExtension((), (), (answer.sparql(),), answer)
    if [str(v) for v in probes.observed_variables(query)] != [str(v) for v in probes.observed_variables(base)]:
        return None
    added = _added_lines(before, lines)
    if not added:
        return None
    known = {v.sparql() for v in base.variables}
    core = "\n".join(before)
    triples, filters, keys = [], [], []
    for line in added:
        body = line.strip()
        used = [f"?{name}" for name in _VAR.findall(body)]
        if _TRIPLE.match(line) and all(v in known for v in used):
            triples.append(body)
        elif body.startswith("FILTER(") and body.endswith(")") and all(v in known or v not in core for v in used):
            filters.append(body[len("FILTER("):-1])
        else:
            return None
        keys += [v for v in used if v in known]
    if not keys:
        return None
    keys = list(dict.fromkeys(keys))
    shown = base.answer if base.answer is not None else Variable(keys[0][1:])
    return PatternExtension(tuple(triples), tuple(filters), tuple(keys), shown, partial)


def _added_lines(before: Sequence[str], lines: Sequence[str]) -> list[str] | None:
    """The lines of ``lines`` not in ``before`` when ``before`` is a subsequence of it and every added line is one
    statement at the group's own level (None otherwise)."""
    if len(lines) <= len(before) or lines[:1] != before[:1] or lines[-1:] != before[-1:]:
        return None
    indent = before[1][: len(before[1]) - len(before[1].lstrip())] if len(before) > 2 else "  "
    added, i = [], 0
    for line in lines[1:-1]:
        if i < len(before) - 2 and line == before[1 + i]:
            i += 1
        elif line.startswith(indent) and not line[len(indent):].startswith((" ", "}")) and line.count("{") == line.count("}"):
            added.append(line)
        else:
            return None
    return added if i == len(before) - 2 else None


def fact_branches(
    core: str | None, groups: Sequence[tuple[str, bool, Sequence[tuple[int, str]]]], answer: str | None = None,
    window: int = FACT_WINDOW, counted: bool = True, extensions: Sequence[tuple[int, PatternExtension]] = (),
    joined: bool = True, answers: Sequence[Term] = (), known: Sequence[dict[str, Term]] | None = None,
    labels: Any = None,
) -> list[str]:
    """The UNION branches that check facts grouped by where they start: each group's relations in one ``VALUES``.

    ``groups``: (key, forward, members), a member being (its ``?__candidate`` index, its relation); ``core``:
    the current query's pattern (None before any step), whose solutions bind every variable ``key``;
    ``answer``: the query's answer variable once one is set (what a preview then shows).
    The facts from variables are one branch: the first ``window`` distinct rows of the keys (and the
    answer) in ``core``, joined with every group's relations, giving ``?__candidate`` and ``?__o`` (a
    value of the fresh variable, or of the answer), at most :data:`FACT_ROWS` rows a member; a second
    branch counts those rows up to ``window + 1`` (``?__keys``), so a member without rows is known
    empty only when the window held every row (and the rows were not cut); without ``counted`` (the
    caller knows the rows fit in the window) there is no such branch. The ``extensions``
    (:class:`PatternExtension`: (index, extension)) are checked in the same branch, over the same
    window: their triples joined with it (the type constraints of one variable in one ``VALUES``), their
    filters applied to its rows. The facts from entities are one more branch, joined with the first row
    (the first answers) of ``core``; without ``joined`` (``core`` has rows) it is joined with the
    ``answers`` (all the answer's values, in ``VALUES``), or nothing when no answer is set. With ``known``
    (every distinct row of ``core`` over the keys, read in an observation) the window is those rows in
    ``VALUES``, ``core`` not compiled (on Virtuoso a window joined with a UNION costs ``core`` an arm). So Virtuoso compiles the current query once to three times, not
    once a candidate. ``labels`` (a profile): the facts from entities bring their values' labels (``?__label``).

    Example:
        >>> branches = fact_branches("{\\n  ?a <http://x/p> ?b .\\n}\\n", [("?b", True, [(3, "<http://x/q>")])])
        >>> len(branches), "VALUES (?__candidate ?__r) { (3 <http://x/q>) }" in branches[0], "LIMIT 1001" in branches[1]
        (2, True, True)
        >>> typed = PatternExtension(("?b <http://x/type> <http://x/T> .",), (), ("?b",), Variable("b"))
        >>> text = fact_branches("{\\n  ?a <http://x/p> ?b .\\n}\\n", [], extensions=[(4, typed)], counted=False)[0]
        >>> "VALUES (?__candidate ?__x) { (4 <http://x/T>) } ?b <http://x/type> ?__x ." in text
        True
    """
    variables = [g for g in groups if g[0].startswith("?")]
    entities = [g for g in groups if not g[0].startswith("?")]
    shown = answer or "?__n"
    branches = []
    if variables or extensions:
        keys = " ".join(dict.fromkeys([g[0] for g in variables] + [k for _, e in extensions for k in e.keys] + ([answer] if answer else [])))
        window_of = f"SELECT DISTINCT {keys} WHERE {{\n{core}}}"
        members = sum(len(m) for _, _, m in variables) + len(extensions)
        arms, filters = _extension_arms(extensions)
        value = _shown_value(extensions, shown)
        join = f"{{ {window_of} LIMIT {int(window)} }}\n" if known is None else _values_block(keys.split(), known)
        branches.append(_facts_branch(join, variables, value, arms, filters, members))
        if counted and known is None:
            branches.append(f"{{ SELECT (COUNT(*) AS ?{_KEYS_VAR}) WHERE {{ {{ {window_of} LIMIT {int(window) + 1} }} }} }}")
    if entities:
        if core is None or (not joined and not answer):
            join = ""
        elif not joined and answers:
            join = f"VALUES {answer} {{ {' '.join(t.sparql() for t in answers[:FACT_ROWS])} }}\n"
        elif answer:
            join = f"{{ SELECT DISTINCT {answer} WHERE {{\n{core}}} LIMIT {FACT_ROWS} }}\n"
        else:
            join = f"{{ SELECT (1 AS ?__one) WHERE {{\n{core}}} LIMIT 1 }}\n"
        branches.append(_facts_branch(join, entities, shown, (), (), sum(len(m) for _, _, m in entities), labels))
    return branches


def _values_block(keys: Sequence[str], rows: Sequence[dict[str, Term]]) -> str:
    """The rows as a ``VALUES`` block over ``keys`` (SPARQL variables), each term written by its own ``sparql()``.

    Example:
        >>> _values_block(["?a"], [{"a": IRI("http://x/1")}, {"a": IRI("http://x/2")}])
        'VALUES (?a) { (<http://x/1>) (<http://x/2>) }\\n'
    """
    written = " ".join("(" + " ".join(row[k[1:]].sparql() for k in keys) + ")" for row in rows)
    return f"VALUES ({' '.join(keys)}) {{ {written} }}\n"


def _extension_arms(extensions: Sequence[tuple[int, PatternExtension]]) -> tuple[list[str], list[str]]:
    """The UNION arms and the filters of :func:`fact_branches`' extensions.

    One-triple extensions that differ only in the triple's object (the type constraints of one variable)
    share an arm, their objects in ``VALUES``; the other triples are an arm each; the filter-only
    extensions are an arm each (``BIND``). A filter holds only on its own candidate's rows.
    """
    arms: list[str] = []
    shared: dict[tuple[str, str], list[tuple[int, str]]] = {}
    bare: list[int] = []
    for index, ext in extensions:
        match = _TRIPLE.match("  " + ext.triples[0]) if len(ext.triples) == 1 else None
        if match is not None and not match.group(3).startswith("?"):
            shared.setdefault((match.group(1), match.group(2)), []).append((int(index), match.group(3)))
        elif ext.triples:
            arms.append(f"{{ VALUES ?{probes.CANDIDATE_VAR} {{ {int(index)} }} {' '.join(ext.triples)} }}")
        else:
            bare.append(int(index))
    for (subject, relation), members in shared.items():
        values = " ".join(f"({i} {obj})" for i, obj in members)
        arms.append(f"{{ VALUES (?{probes.CANDIDATE_VAR} ?__x) {{ {values} }} {subject} {relation} ?__x . }}")
    # a BIND a candidate: Virtuoso 7.2 drops every row of a join with a UNION that has a VALUES-only arm
    arms += [f"{{ BIND({index} AS ?{probes.CANDIDATE_VAR}) }}" for index in bare]
    filters = [
        f"FILTER(?{probes.CANDIDATE_VAR} != {int(index)} || ({' && '.join(f'({f})' for f in ext.filters)}))"
        for index, ext in extensions if ext.filters
    ]
    return arms, filters


def _shown_value(extensions: Sequence[tuple[int, PatternExtension]], shown: str) -> str:
    """The value a row of the window's branch shows: each extension's own variable, else ``shown`` (the facts').

    Example:
        >>> _shown_value([(2, PatternExtension((), ("?b > 1",), ("?b",), Variable("b")))], "?__n")
        'IF(?__candidate = 2, ?b, ?__n)'
    """
    value = shown
    for index, ext in reversed(extensions):
        if ext.shown.sparql() != shown:
            value = f"IF(?{probes.CANDIDATE_VAR} = {int(index)}, {ext.shown.sparql()}, {value})"
    return value


def _facts_branch(
    join: str, groups: Sequence[tuple[str, bool, Sequence[tuple[int, str]]]], shown: str,
    extra: Sequence[str], filters: Sequence[str], members: int, labels: Any = None,
) -> str:
    """One branch of :func:`fact_branches`: ``join`` (the window), a UNION of one ``VALUES`` pattern a group and
    the ``extra`` arms, then the ``filters``; at most :data:`FACT_ROWS` rows a member; with ``labels`` (a profile)
    the label of each row's value too."""
    arms = []
    for key, forward, group in groups:
        values = " ".join(f"({int(index)} {relation})" for index, relation in group)
        triple = f"{key} ?__r ?__n ." if forward else f"?__n ?__r {key} ."
        arms.append(f"{{ VALUES (?{probes.CANDIDATE_VAR} ?__r) {{ {values} }} {triple} }}")
    arms += extra
    tail = "".join(f"\n{f}" for f in filters)
    branch = (
        f"{{ SELECT DISTINCT ?{probes.CANDIDATE_VAR} ({shown} AS ?{_VALUE_VAR}) WHERE {{\n{join}"
        + "\nUNION\n".join(arms) + f"{tail}\n}} LIMIT {FACT_ROWS * members} }}"
    )
    if labels is None:
        return branch
    # the label is looked up on a copy that is never a literal: Virtuoso 7.2 unbinds a literal ?__o (a date)
    # that stands as the subject of the optional label pattern
    entity = f"BIND(IF(isIRI(?{_VALUE_VAR}), ?{_VALUE_VAR}, {_NO_ENTITY.sparql()}) AS ?__e)"
    label = probes.label_pattern(Variable("__e"), Variable("__l"), labels)
    return (
        f"{{ SELECT ?{probes.CANDIDATE_VAR} ?{_VALUE_VAR} (SAMPLE(?__l) AS ?{_LABEL_VAR}) WHERE {{\n{branch}\n{entity}\n{label}\n}}"
        f" GROUP BY ?{probes.CANDIDATE_VAR} ?{_VALUE_VAR} }}"
    )


#: A candidate checked over the current query's window.
Grouped = FactExtension | PatternExtension


def current_record(env: Any) -> Any:
    """The step record of ``env`` whose observation is of its current query (None when there is none).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> current_record(env) is None
        True
        >>> _ = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
        >>> current_record(env).query_after is env.query
        True
    """
    found = (r for r in reversed(env.history) if r.ok and r.query_after is env.query and isinstance(r.result, Observation))
    return next(found, None)


def has_alternatives(query: Any) -> bool:
    """Whether ``query``'s pattern has an optional or alternative part (``OPTIONAL``, ``UNION``): a variable it
    shows may then be unbound in a row, so its observation's values are not its rows'.

    Example:
        >>> from pyql.builder.query import Query
        >>> has_alternatives(Query().add_fact("m.0a", "a.b.c", "?x"))
        False
    """
    core = query.scope.block.pattern(query.profile) if query.steps else ""
    return "OPTIONAL" in core or "UNION" in core


class StepChecker:
    """Verdicts on candidate steps of one environment state, checked in batches (see the module docstring).

    Args:
        env: a :class:`~pyql.environment.sparql.SparqlEnvironment`; its state must not change while the checker is used.
        before: the variables that existed before the step (the preview shows the new ones).
        preview_chars: characters of a preview at most.
        batch: False: every candidate is tried one by one (:func:`trial`), as before batches.
    """

    def __init__(self, env: Any, before: Iterable[str] = (), preview_chars: int = 60, batch: bool = True) -> None:
        self.env = env
        self.before = set(before)
        self.preview_chars = preview_chars
        self.batch = batch
        self._verdicts: dict[str, Verdict] = {}

    def verdict(self, action: str) -> Verdict | None:
        """The verdict on one step (checked now when no batch did): a kept step's Verdict, None when it fails."""
        found = self._verdicts.get(action)
        if found is None:
            record = trial(self.env, action)
            found = self._verdicts[action] = Verdict(record.ok, _record_preview(record, self.before, self.preview_chars))
        return found if found.ok else None

    def check(self, actions: Iterable[str]) -> None:
        """Check these steps in batches of at most :data:`BATCH_SIZE` (steps of other kinds are left to :meth:`verdict`).

        The facts that only add a relation from what the query has to a fresh variable
        (:func:`fact_extension`) are checked in the first batch, grouped by where they start
        (:func:`fact_branches`); the values the previews show are labelled in one more query
        at most (none when every one was seen before in this episode).
        """
        if not self.batch:
            return
        wanted = [a for a in dict.fromkeys(actions) if a not in self._verdicts and a.split("(", 1)[0].strip() in BATCHED_ACTIONS]
        built: list[tuple[str, Any]] = []
        for action in wanted:
            record, query = dry_run(self.env, action)
            if query is None:
                if not record.ok:  # it fails before it runs, as its trial would
                    self._verdicts[action] = Verdict(False)
                continue
            built.append((action, query))
        facts, rest = self._split(self._from_observation(built))
        facts = self._from_earlier(facts)
        for start in range(0, max(len(rest), 1 if facts else 0), BATCH_SIZE):
            self._check_batch(rest[start : start + BATCH_SIZE], facts if start == 0 else [])
        # steps inside an argmax that its row did not extend: their own probes tell (one more query at most)
        left = [(action, query) for action, query, found in facts if found.partial and action not in self._verdicts]
        for start in range(0, len(left), BATCH_SIZE):
            self._check_batch(left[start : start + BATCH_SIZE])

    def _split(self, built: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any, Grouped]], list[tuple[str, Any]]]:
        """The candidates checked over the current query's window (grouped facts, whose preview is the fresh
        variable's alone, and :class:`PatternExtension` steps), and the rest.

        None are grouped when the current query has an optional or alternative part (a variable it
        shows may be unbound in a row) or shows a variable the caller did not name as existing.
        """
        base = self.env.query
        shown = {v.sparql() for v in probes.observed_variables(base)} if base.steps else set()
        plain = not has_alternatives(base) and shown <= {f"?{v.lstrip('?')}" for v in self.before}
        grouped: list[tuple[str, Any, Grouped]] = []
        rest = []
        for action, query in built:
            found: Grouped | None = None
            if plain:
                found = fact_extension(base, query) if action.startswith("add_fact") else None
                found = found or (pattern_extension(base, query) if action.startswith(_EXTENDING) else None)
                # on Virtuoso 7.2 a time constraint's EXISTS filters over a VALUES window dropped rows their own
                # query keeps (the demo's q04, q14, q16, q31): such a step is a probe of its own
                if isinstance(found, PatternExtension) and any("EXISTS" in f for f in found.filters):
                    found = None
            if found is None:
                rest.append((action, query))
            else:
                grouped.append((action, query, found))
        return grouped, rest

    def _check_batch(self, batch: Sequence[tuple[str, Any]], grouped: Sequence[tuple[str, Any, Grouped]] = ()) -> None:
        """One query for the batch and the grouped candidates; the candidates it cannot decide are left to their trials."""
        kb, base = self.env.kb, self.env.query
        groups: dict[tuple[str, bool], list[int]] = {}
        extensions = []
        for j, (_, _, found) in enumerate(grouped):
            if isinstance(found, FactExtension):
                groups.setdefault((found.key, found.forward), []).append(j)
            else:
                extensions.append((len(batch) + j, found))
        core = base.scope.block.pattern(kb.profile) if base.steps else None
        members = [(key, forward, [(len(batch) + j, grouped[j][2].relation) for j in js]) for (key, forward), js in groups.items()]  # type: ignore[union-attr]
        answer = base.answer.sparql() if base.answer is not None else None
        keys = [key for key, _, _ in members if key.startswith("?")] + [k for _, e in extensions for k in e.keys]
        known = self._known_rows(keys + ([answer] if answer else []))
        fits = known is not None or self._window_fits(keys + ([answer] if answer else []))
        answers = self._answers()
        joined = not self._has_rows() and not answers
        # at the episode's start no value has been labelled yet: the facts from its entities bring their labels
        fresh = not any(isinstance(record.result, Observation) for record in self.env.history)
        on_entity = [isinstance(f, FactExtension) and not f.key.startswith("?") for _, _, f in grouped]
        extra = fact_branches(
            core, members, answer, counted=not fits, extensions=extensions, joined=joined, answers=answers, known=known,
            labels=kb.profile if fresh else None,
        ) if grouped else []
        try:
            if batch:
                text, observed = probes.candidates_query([q for _, q in batch], labels=False, extra=extra)
            else:
                text, observed = prefix_lines(kb.profile) + "SELECT * WHERE {\n" + "\nUNION\n".join(extra) + "\n}\n", []
            labelled = [len(batch) + j for j in range(len(grouped)) if on_entity[j]] if fresh else []
            found, values, counted, labels = _read_rows(kb.select(text), observed, len(grouped), labelled)
            _kept(self.env, _LABELS).update(labels)
            cells = self._labelled([*found, *([{f.shown.name: t} for t in v[: self._preview_rows()]] for v, (_, _, f) in zip(values, grouped))])
        except PyQLError:
            return  # the engine rejected the batch (or timed out): each candidate is tried on its own
        for (action, query), rows, variables in zip(batch, cells, observed):
            self._keep(action, self._decide(action, query, rows, variables))
        for on_window in (True, False):
            js = [j for j in range(len(grouped)) if on_entity[j] != on_window]
            complete = sum(len(values[j]) for j in js) < FACT_ROWS * len(js) and (not on_window or fits or counted <= FACT_WINDOW)
            for j in js:
                action, query, fact = grouped[j]
                rows = cells[len(batch) + j]
                self._keep(action, self._decide(action, query, rows, [fact.shown]) if rows or (complete and not fact.partial) else None)
                # a fact from an entity not joined with the current query: its values are the KB's, kept for later checks
                if not on_window and (core is None or not joined) and (values[j] and answer is None or not values[j] and complete):
                    _kept(self.env, _ENTITY_FACTS)[(fact.key, fact.relation, fact.forward)] = tuple(values[j])  # type: ignore[union-attr]

    def _from_earlier(self, grouped: list[tuple[str, Any, Grouped]]) -> list[tuple[str, Any, Grouped]]:
        """Decide with no query the facts from entities that an earlier check of this episode read (their values
        do not depend on the current query, where it is known to have rows or its answers are known); the rest."""
        seen = _kept(self.env, _ENTITY_FACTS)
        answer, answers = self.env.query.answer, self._answers()
        if not seen or not (self._has_rows() or answers):
            return grouped
        rest = []
        for action, query, found in grouped:
            key = (found.key, found.relation, found.forward) if isinstance(found, FactExtension) else None
            values = seen.get(key) if key is not None and not found.key.startswith("?") else None  # type: ignore[union-attr]
            if values is None:
                rest.append((action, query, found))
                continue
            shown = values if answer is None else (answers if values else ())
            cells = self._labelled([[{found.shown.name: t} for t in shown[: self._preview_rows()]]])[0]
            self._keep(action, self._decide(action, query, cells, [found.shown]))
        return rest

    def _preview_rows(self) -> int:
        """How many values a grouped step's preview shows: 4, or 1 inside an argmax that keeps one row (after a
        count, a fact from an entity goes with its one row: each of the fact's values is a row)."""
        block = self.env.query.scope.block
        return 1 if block.argmax is not None and block.max_rows == 1 else 4

    def _from_observation(self, built: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """Decide from what the observations of the current query's pattern say (no query): ``set_answer(?v)`` and
        ``execute()`` where the count of the answer is exact (the answers are its values), ``add_count(?v, ?n)``
        where the count of ``?v`` is exact (the count is its count), an argmax whose row the current
        observation shows (:func:`_extreme_row`), a sum or an average where it shows every row
        (:func:`_total_of_rows`); the rest is left. After an aggregate that keeps one row (a count without
        groups) the current observation alone says what that row holds."""
        record = self._current_record()
        base = self.env.query
        block = base.scope.block
        if record is None or base.is_ask or block.computed and not block.one_row:
            return built
        counts = {str(v.variable): v for v in record.result.variables} if block.computed else self._counts()
        rest = []
        for action, query in built:
            name, _, args = action.partition("(")
            parts = [a.strip() for a in args.rstrip(")").split(",")]
            shown = probes.observed_variables(query)
            row = _extreme_row(record.result, action, base, query) if name in ("add_max", "add_min") else None
            row = _total_of_rows(record.result, action, base, query) if name in ("add_sum", "add_avg") else row
            seen = counts.get(parts[0]) if parts[0].startswith("?") else None
            if name == "execute" and parts == [""] and len(shown) == 1 and query.scope.block.pattern(query.profile) == self._core():
                seen = counts.get(str(shown[0]))
            if row is not None:
                self._keep(action, self._decide(action, query, [row], shown))
            elif seen is None or seen.capped or seen.partial or len(shown) != 1:
                rest.append((action, query))
            elif name in ("set_answer", "execute") and shown[0] == seen.variable and (name == "execute" or base.answer is None):
                cells = [{seen.variable.name: v} for v in seen.values[:4]]
                self._keep(action, self._decide(action, query, cells, shown) if cells or not seen.total else None)
            elif name == "add_count" and len(parts) == 2 and str(shown[0]) == parts[1] and shown[0] in query.scope.block.computed:
                count = self.env.kb.value(Literal(str(seen.total), XSD + "integer"), None)
                self._keep(action, self._decide(action, query, [{shown[0].name: count}], shown))
            else:
                rest.append((action, query))
        return rest

    def _core(self) -> str:
        """The current query's pattern (its rows' join)."""
        return self.env.query.scope.block.pattern(self.env.query.profile)

    def _current_record(self) -> Any:
        """The step record whose observation is of the current query (None when there is none)."""
        return current_record(self.env)

    def _counts(self) -> dict[str, VariableValues]:
        """What the episode's observations say of each variable of the current query's pattern: those of every
        step whose query had this pattern, the latest first (a ``set_answer`` keeps the pattern: the counts
        seen before it still hold)."""
        out: dict[str, VariableValues] = {}
        for observation in self._pattern_observations():
            for values in observation.variables:
                out.setdefault(str(values.variable), values)
        return out

    def _pattern_observations(self) -> Iterator[Observation]:
        """The observations of every step whose query had the current query's pattern, the latest first."""
        core = self._core()
        for record in reversed(self.env.history):
            query = record.query_after
            if not (record.ok and isinstance(record.result, Observation) and query is not None and not query.is_ask):
                continue
            if not query.scope.block.computed and query.scope.block.pattern(query.profile) == core:
                yield record.result

    def _known_rows(self, keys: Sequence[str]) -> list[dict[str, Term]] | None:
        """Every distinct row of the current query's pattern over ``keys``, where an observation of that pattern
        showed them all (every value of every variable it showed, and which go together: IRIs and literals
        only); None otherwise."""
        if not keys:
            return None
        for observation in self._pattern_observations():
            rows = _all_rows(observation) if set(keys) <= {str(v.variable) for v in observation.variables} else None
            if rows is None:
                continue
            names = [k[1:] for k in dict.fromkeys(keys)]
            unique = list(dict.fromkeys(tuple(row[n].term for n in names) for row in rows))
            if all(isinstance(t, (IRI, Literal)) for row in unique for t in row):
                return [dict(zip(names, row)) for row in unique]
        return None

    def _window_fits(self, keys: Sequence[str]) -> bool:
        """Whether the current query's distinct rows over ``keys`` fit in :data:`FACT_WINDOW`, by the counts its
        pattern's observations read (exact ones only): then the facts' window needs no count."""
        counts = self._counts()
        rows = 1
        for key in dict.fromkeys(keys):
            counted = counts.get(key)
            if counted is None or counted.capped or counted.partial:
                return False
            rows *= max(counted.total, 1)
        return rows <= FACT_WINDOW

    def _answers(self) -> list[Term]:
        """All the values of the current query's answer, where its observation shows every one (IRIs and literals
        only, at most :data:`FACT_ROWS`); else none."""
        answer = self.env.query.answer
        seen = self._counts().get(answer.sparql()) if answer is not None and self._current_record() is not None else None
        if seen is None or seen.capped or seen.partial or not 0 < seen.total == len(seen.values) <= FACT_ROWS:
            return []
        terms = [v.term for v in seen.values]
        return terms if all(isinstance(t, (IRI, Literal)) for t in terms) else []

    def _has_rows(self) -> bool:
        """Whether the current query is known to give rows (its observation shows a value) and sets no answer."""
        record = self._current_record()
        base = self.env.query
        return record is not None and base.answer is None and any(v.total for v in record.result.variables)

    def _keep(self, action: str, decided: Verdict | None) -> None:
        if decided is not None:
            self._verdicts[action] = decided

    def _labelled(self, candidates: list[list[dict[str, Term]]]) -> list[list[dict[str, Value]]]:
        """The candidates' rows with a labelled value per term: the labels not seen yet in this episode read in one query."""
        kb = self.env.kb
        known = _kept(self.env, _LABELS)
        for record in self.env.history:
            if isinstance(record.result, Observation):
                for var in record.result.variables:
                    known.update((v.term, v.label) for v in var.values if isinstance(v.term, IRI) and v.term not in known)
        missing = list(dict.fromkeys(t for rows in candidates for row in rows for t in row.values() if isinstance(t, IRI) and t not in known))
        if missing:
            known.update(kb.labels(missing))
        return [[{name: kb.value(t, known.get(t)) for name, t in row.items()} for row in rows] for rows in candidates]

    def _decide(self, action: str, query: Any, cells: list[dict[str, Value]], variables: Sequence[Any]) -> Verdict | None:
        """The verdict a batch's rows give one candidate (None: only its trial can tell)."""
        if query.is_ask:
            return Verdict(True, preview_of(cells, variables, self.before, bool(cells), self.preview_chars))
        finish = action.startswith("execute")
        if not cells:  # an empty execute() may be taken at its word (ERASER's insists_on_execute): its trial says
            rejects_empty = self.env.analyzer is not None or self.env.undo_empty
            return Verdict(False) if rejects_empty and not finish else None
        if finish or action.startswith("set_answer"):
            answers = [c[variables[0].name] for c in cells if variables[0].name in c]
            if all(a.unnamed for a in answers):  # ERASER's unnamed-answer rules read the step's own result
                return None
        return Verdict(True, preview_of(cells, variables, self.before, None, self.preview_chars))


def _extreme_row(observation: Observation, action: str, base: Any, query: Any) -> dict[str, Value] | None:
    """The one row ``add_max(?v)``/``add_min(?v)`` keeps, where the current observation shows every row and every
    value of ``?v`` is a number (or a date of one datatype, see :func:`_order_keys`) with one largest
    (smallest) row (None otherwise: a batch checks it).

    The argmax of a query without optional or alternative parts keeps a row whenever the query has one
    (``ORDER BY`` and ``LIMIT 1`` over its rows); the row is the one with the extreme value.

    Example:
        >>> from pyql.builder.query import Query
        >>> from pyql.builder.terms import XSD
        >>> base = Query("freebase").add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w")
        >>> n = lambda k: Value(Literal(str(k), XSD + "integer"))
        >>> seen = Observation((VariableValues(Variable("c"), (Value(IRI("http://x/a")),), 1), VariableValues(Variable("w"), (n(5), n(9)), 2)))
        >>> {k: str(v.term) for k, v in _extreme_row(seen, "add_max(?w)", base, base.add_max("?w")).items()}
        {'c': 'http://x/a', 'w': '9'}
    """
    name, _, rest = action.partition("(")
    args = [a.strip() for a in rest.rstrip(")").split(",")]
    shown = probes.observed_variables(query)
    if len(args) != 1 or has_alternatives(base) or query.scope.block.max_rows != 1:
        return None
    if [str(v) for v in shown] != [str(v) for v in probes.observed_variables(base)] or query.answer != base.answer:
        return None
    lists = {str(v.variable): v for v in observation.variables}
    if any(str(v) not in lists or lists[str(v)].capped or lists[str(v)].partial for v in shown) or args[0] not in lists:
        return None
    if any(len(lists[str(v)].values) != lists[str(v)].total for v in shown):
        return None
    numbers = _order_keys([value.term for value in lists[args[0]].values])
    if not numbers:
        return None
    rows = _observed_rows(observation, shown)
    if rows is None:
        return None
    key = args[0][1:]
    ranked = sorted((numbers[row[key].term] for row in rows if key in row), reverse=name.strip() == "add_max")
    best = [row for row in rows if key in row and numbers[row[key].term] == ranked[0]]
    return best[0] if len(best) == 1 and len(ranked) == len(rows) else None


def _total_of_rows(observation: Observation, action: str, base: Any, query: Any) -> dict[str, Value] | None:
    """The row ``add_sum(?v, ?n)``/``add_avg(?v, ?n)`` gives, where the observation shows every row of the current
    query with all its variables (each row one solution: the sum counts it once) and every ``?v`` is a number;
    None otherwise (a batch checks it). The engine may write the number in another numeric type.

    Example:
        >>> from pyql.builder.query import Query
        >>> base = Query("freebase").add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w")
        >>> n = lambda k: Value(Literal(str(k), XSD + "integer"))
        >>> seen = Observation((VariableValues(Variable("c"), (Value(IRI("http://x/a")), Value(IRI("http://x/b"))), 2),
        ...                     VariableValues(Variable("w"), (n(5),), 1)))
        >>> str(_total_of_rows(seen, "add_sum(?w, ?total)", base, base.add_sum("?w", "?total"))["total"].term)
        '10'
        >>> str(_total_of_rows(seen, "add_avg(?w, ?mean)", base, base.add_avg("?w", "?mean"))["mean"].term)
        '5'
    """
    args = [a.strip() for a in action.partition("(")[2].rstrip(")").split(",")]
    shown = probes.observed_variables(query)
    if len(args) != 2 or [str(v) for v in shown] != [args[1]] or base.answer is not None or has_alternatives(base):
        return None
    seen = {str(v.variable) for v in observation.variables}
    # a variable of the pattern the observation does not show could repeat a row the sum counts (an aggregate's
    # own pattern is not: its rows are the ones it projects)
    lines = () if base.scope.block.computed else base.scope.block.pattern(base.profile).splitlines()
    in_triples = {v for line in lines if (m := _TRIPLE.match(line)) for v in m.group(1, 3) if v.startswith("?")}
    if {str(v) for v in base.variables} != seen or not in_triples <= seen:
        return None
    rows = _all_rows(observation)
    name = args[0][1:]
    terms = [row[name].term for row in rows or () if name in row]
    if not rows or len(terms) != len(rows) or not all(isinstance(t, Literal) and t.is_numeric for t in terms):
        return None
    total = _number_sum(terms, mean=action.startswith("add_avg"))
    return {shown[0].name: Value(total)} if total is not None else None


def _number_sum(terms: Sequence[Term], mean: bool) -> Literal | None:
    """The sum (or the mean) of numeric literals, typed as SPARQL promotes them (integer, decimal, double).

    Example:
        >>> [str(_number_sum([Literal("1", XSD + "integer"), Literal("2.5", XSD + "decimal")], m)) for m in (False, True)]
        ['3.5', '1.75']
    """
    types = {t.datatype for t in terms if isinstance(t, Literal)}
    try:
        if types & {XSD + "double", XSD + "float"}:
            value = sum(float(t.lexical) for t in terms if isinstance(t, Literal))  # type: ignore[misc]
            return Literal(repr(value / len(terms) if mean else value), XSD + "double")
        exact = sum(decimal.Decimal(t.lexical) for t in terms if isinstance(t, Literal))
    except (ValueError, decimal.InvalidOperation):
        return None
    if mean:
        exact /= len(terms)
    if types <= {XSD + "integer"} and not mean:
        return Literal(str(exact), XSD + "integer")
    return Literal(format(exact.normalize(), "f"), XSD + "decimal")


def _all_rows(observation: Observation) -> list[dict[str, Value]] | None:
    """Every distinct row of the observed variables, where the observation shows every value of each (none
    capped or cut) and which go together; None otherwise."""
    lists = observation.variables
    if not lists or any(v.capped or v.partial or v.total != len(v.values) or not v.total for v in lists):
        return None
    return _observed_rows(observation, [v.variable for v in lists])


#: The lexical forms whose order as text is their order in time (a year of four digits, no time zone).
_DATE_FORMS = {
    XSD + "date": re.compile(r"^\d{4}-\d\d-\d\d$"),
    XSD + "dateTime": re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$"),
    XSD + "gYear": re.compile(r"^\d{4}$"),
    XSD + "gYearMonth": re.compile(r"^\d{4}-\d\d$"),
}


def _order_keys(terms: Sequence[Term]) -> dict[Term, Any]:
    """How an argmax orders these values (``IF(isNumeric(?v), ?v, STR(?v))``), where it is plain: all numbers
    (by value), or all dates of one datatype in the plain forms of :data:`_DATE_FORMS` (by text); else empty.

    Example:
        >>> n = lambda k, t="integer": Literal(k, XSD + t)
        >>> list(_order_keys([n("3"), n("2.5", "decimal")]).values()), _order_keys([n("3"), n("2005", "gYear")])
        ([3.0, 2.5], {})
    """
    if not terms or not all(isinstance(t, Literal) for t in terms):
        return {}
    literals: list[Literal] = list(terms)  # type: ignore[arg-type]
    if all(t.is_numeric for t in literals):
        try:
            return {t: float(t.lexical) for t in literals}
        except ValueError:
            return {}
    form = _DATE_FORMS.get(literals[0].datatype or "")
    if form is None or not all(t.datatype == literals[0].datatype and form.match(t.lexical) for t in literals):
        return {}
    return {t: t.lexical for t in literals}


def _observed_rows(observation: Observation, shown: Sequence[Variable]) -> list[dict[str, Value]] | None:
    """Every distinct row of the observed variables, where the observation shows them all (None otherwise)."""
    lists = {v.variable: v for v in observation.variables}
    varying = [v for v in shown if lists[v].total != 1]
    fixed = {v.name: lists[v].values[0] for v in shown if lists[v].total == 1}
    if len(varying) <= 1:
        return [{**fixed, varying[0].name: value} for value in lists[varying[0]].values] if varying else [fixed]
    joined = observation.joined
    if joined is None or joined.more or set(joined.variables) != set(varying):
        return None
    rows = []
    for row in joined.rows:
        if any(x is None for x in row):
            return None
        rows.append({**fixed, **{v.name: x for v, x in zip(joined.variables, row)}})
    return rows


def _read_rows(
    rows: Iterable[dict[str, Term]], observed: Sequence[Sequence[Variable]], facts: int, labelled: Iterable[int] = ()
) -> tuple[list[list[dict[str, Term]]], list[list[Term]], int, dict[Term, str | None]]:
    """A batch's rows split: each probed candidate's rows (terms), each grouped fact's values, the facts' window
    rows, and the labels that rows of the ``labelled`` candidates carried (an IRI whose row had none: None).

    Raises:
        EngineError: a row of a candidate the batch did not have.
    """
    probed: list[dict[str, Term]] = []
    grouped: list[list[Term]] = [[] for _ in range(facts)]
    labels: dict[Term, str | None] = {}
    with_labels = set(labelled)
    keys = 0
    for row in rows:
        if row.get(_KEYS_VAR) is not None:
            keys = int(probes.engine_number(row.get(_KEYS_VAR)))
            continue
        index = int(probes.engine_number(row.get(probes.CANDIDATE_VAR)))
        if len(observed) <= index < len(observed) + facts:
            value = row.get(_VALUE_VAR)
            if value is not None and value not in grouped[index - len(observed)]:
                grouped[index - len(observed)].append(value)
            if isinstance(value, IRI) and index in with_labels:
                label = row.get(_LABEL_VAR)
                labels[value] = label.lexical if isinstance(label, Literal) else None
        else:
            probed.append(row)
    found = probes.read_candidates(probed, observed, lambda term, label: term)  # type: ignore[arg-type,return-value]
    return found, grouped, keys, labels  # type: ignore[return-value]


def _record_preview(record: Any, before: set[str], limit: int) -> str:
    """A short view of a tried step's result: the new variables' first values (else all), or the answer."""
    result = record.result
    if not record.ok:
        return ""
    if isinstance(result, Observation):
        if result.boolean is not None:
            return "yes" if result.boolean else "no"
        shown = [v for v in result.variables if str(v.variable) not in before] or list(result.variables)
        parts = []
        for var in shown:
            if var.all_unnamed:
                parts.append(f"{var.variable} = {var.total} unnamed node{'s' if var.total != 1 else ''}")
                continue
            names = [x.label if x.label else x.display() for x in var.values[:3]]
            more = f" +{var.total - len(names)}" if var.total > len(names) else ""
            parts.append(f"{var.variable} = {', '.join(names)}{more}")
        text = "; ".join(parts)
    else:
        text = record.observation
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."
