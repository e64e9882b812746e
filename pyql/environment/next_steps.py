"""The valid next steps of a SPARQL episode: what an agent may do now, enumerated.

A discriminative agent (``--action-mode choose``) does not write an action:
it picks one of a numbered list. This module makes that list from what the
environment knows, so every entry is an action the KB can run now:

* ``get_relation`` on a linked entity or a variable not looked at yet;
* ``add_fact`` with the relations ``get_relation`` returned for an entity or
  a variable, in the right direction (a forward relation of ``X`` as
  ``add_fact(X, r, ?new)``, a backward one as ``add_fact(?new, r, X)``), with
  a fresh variable named after the relation; a forward relation of a
  variable may also end on a linked entity (``add_fact(?p, r, m.0fkvn)``);
* before anything is built, when the question has no linked entity,
  ``add_fact(?s, r, ?o)`` with the KB's relation vocabulary ranked against the question (``which cyclone had the highest
  winds?`` has no entity to start from);
* on the variables that exist: ``add_max``/``add_min``/``add_sum``/``add_avg``
  on numbers and dates, ``add_filter`` with the years and numbers of the
  question or another variable of the same kind, ``add_compare`` of two
  numbers, ``add_count``, ``add_type_constrain`` with the types of the
  values, ``add_time_constrain`` with start/end relations of the variable and
  dates of the question (years, "current": today) or of the values seen;
* ``set_answer`` on an existing variable, and ``execute()`` once the query
  says what it answers (after ``set_answer``, an aggregate or a comparison);
* on a KB in Wikidata's statement model whose environment offers MarkQA's
  actions (:attr:`pyql.builder.profiles.Profile.action_names`): ``add_quantity`` of
  the linked entities and entity variables with the properties, times, units
  and qualifiers one bounded probe saw (:func:`quantity_facts`), the start,
  end and point in time, ``add_bind`` arithmetic over the numeric and date
  variables bound so far and the question's numbers (ordered by the
  question's cue words, :func:`arithmetic_score`), ``add_rank``,
  comparisons with the question's numbers and days, and a linked class as
  ``add_type_constrain(Q515, ?city)`` (``docs/agent.md``).

Every list is bounded (relations ranked and capped per argument, a cap on
the whole list). With ``verify=True`` only steps that run without an error
(and without an ERASER guideline) are kept, with the start of their result
as a preview. The steps are checked in batches
(:class:`pyql.environment.batch_trials.StepChecker`): each is dry-run on the environment
(ERASER's rules before it, its query built, nothing sent), then one bounded
query (a UNION of each step's own probe, ``LIMIT`` per step) says which give
rows, for up to :data:`pyql.environment.batch_trials.BATCH_SIZE` steps at once; the steps
a batch cannot decide (MarkQA's quantities and arithmetic, ``execute()``)
are tried one by one, each on a fork of the environment (:func:`trial`, one KB query or more each;
``batch=False`` tries every step so).

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), "what category is tropical storm rachel?",
    ...                         entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> [s.action for s in next_steps(env)]
    ['get_relation(m.0crbvqz)']
    >>> _ = env.step("get_relation(m.0crbvqz)")
    >>> next_steps(env, limit=3)[0].action
    'add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)'
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
import weakref
from decimal import Decimal
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyql.environment.batch_trials import StepChecker, trial
from pyql.errors import PyQLError
from pyql.environment.grounding import Grounding, dimension_words, ground
from pyql.kb.observation import Observation, Relations, Value
from pyql.builder.kind import kind_of, kinds
from pyql.builder.terms import IRI, Literal
from pyql.environment.value_steps import value_filters

__all__ = [
    "NextStep",
    "QuantityFacts",
    "QUANTITY_PROBE_ROWS",
    "arithmetic_score",
    "auxiliary_variables",
    "next_steps",
    "quantity_facts",
    "quantity_probe_query",
    "overlap_rank",
    "question_literals",
    "relation_vocabulary",
    "trial",
    "variable_kinds",
]

#: Ranks relations against a question: (question, relations) → relations, best first.
Rank = Callable[[str | None, list[str]], list[str]]

#: Pairs of start/end relation names that make a time span (the last part of the relation).
_SPANS = (("from", "to"), ("start_date", "end_date"), ("start", "end"), ("date_from", "date_to"), ("begin", "end"))
_CURRENT = re.compile(r"\b(current|currently|now|today|present|incumbent)\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class NextStep:
    """One valid next step.

    Attributes:
        action: the action line, e.g. ``add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)``.
        kind: ``look``, ``fact``, ``constrain``, ``aggregate``, ``answer`` or ``execute``.
        preview: the start of the step's observation when it was verified ("" otherwise).
    """

    action: str
    kind: str
    preview: str = ""


# ---------------------------------------------------------------------------
# what the question and the KB offer


_VOCABULARY: weakref.WeakKeyDictionary[Any, list[str]] = weakref.WeakKeyDictionary()


def relation_vocabulary(kb: Any, limit: int = 100000) -> list[str]:
    """The KB's relation names (hidden ones left out), read once per KB object (one query).

    Example:
        >>> from pyql.kb import KB
        >>> "meteorology.tropical_cyclone.category" in relation_vocabulary(KB.open("demo"))
        True
    """
    try:
        cached = _VOCABULARY.get(kb)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    rows = kb.select(kb.profile.prefix_lines() + f"SELECT DISTINCT ?p WHERE {{ ?s ?p ?o }} LIMIT {int(limit)}")
    names = sorted(
        {
            kb.profile.shorten(p.value)
            for p in (row.get("p") for row in rows)
            if isinstance(p, IRI) and not kb.profile.is_hidden(p.value) and p.value not in kb.profile.label_predicates
            and p.value != kb.profile.type_predicate
        }
    )
    try:
        _VOCABULARY[kb] = names
    except TypeError:
        pass
    return names


def question_literals(question: str | None, today: _dt.date | None = None) -> dict[str, list[str]]:
    """The years, numbers and date spans a question names, as action arguments.

    Returns:
        ``{"years": [...], "numbers": [...], "spans": [(start_before, end_after), ...]}``:
        a year ``Y`` gives the span ``(Y-12-31, Y-01-01)``, two years the span
        between them, "current"/"now" today's date.

    Example:
        >>> question_literals("governors between 2000 and 2010 with more than 3 terms")["spans"]
        [('2000-12-31', '2000-01-01'), ('2010-12-31', '2010-01-01'), ('2010-12-31', '2000-01-01')]
        >>> question_literals("winds above 200 km/h")["numbers"]
        ['200']
    """
    text = question or ""
    years: list[str] = []
    numbers: list[str] = []
    for match in _NUMBER.finditer(text):
        token = match.group(1)
        if re.fullmatch(r"1[0-9]{3}|20[0-9]{2}", token):
            years.append(token)
        else:
            numbers.append(token)
    numbers += _scaled_numbers(text)
    years = list(dict.fromkeys(years))
    spans: list[tuple[str, str]] = [(f"{y}-12-31", f"{y}-01-01") for y in years]
    if len(years) >= 2:
        lo, hi = min(years), max(years)
        spans.append((f"{hi}-12-31", f"{lo}-01-01"))
    if _CURRENT.search(text):
        day = (today or _dt.date.today()).isoformat()
        spans.append((day, day))
    return {"years": years, "numbers": list(dict.fromkeys(numbers)), "spans": spans, "dates": _dates(text)}


def _scaled_numbers(text: str) -> list[str]:
    """The numbers a question writes with a scale word: "1.4 million" is 1400000, "one million" 1000000.

    Example:
        >>> _scaled_numbers("more than 1.4 million people, or one thousand")
        ['1400000', '1000']
    """
    out = []
    for match in _SCALED.finditer(text):
        count = match.group(1).lower()
        value = Decimal(_WORD_NUMBERS[count]) if count in _WORD_NUMBERS else Decimal(count)
        scaled = value * _SCALES[match.group(2).lower()]
        out.append(str(scaled.quantize(Decimal(1))) if scaled == scaled.to_integral_value() else format(scaled.normalize(), "f"))
    return out


def _dates(text: str) -> list[str]:
    """The days a question names, as ISO dates ("31 December 2021", "December 31, 2021", "2021-12-31").

    Example:
        >>> _dates("on 31 December 2021, after January 1, 2015 or on 2020-08-08")
        ['2021-12-31', '2015-01-01', '2020-08-08']
    """
    found: list[tuple[int, str]] = [(m.start(), m.group(0)) for m in _ISO_DATE.finditer(text)]
    for m in _DAY_MONTH_YEAR.finditer(text):
        found.append((m.start(), f"{m.group(3)}-{_MONTHS.index(m.group(2).lower()) + 1:02d}-{int(m.group(1)):02d}"))
    for m in _MONTH_DAY_YEAR.finditer(text):
        found.append((m.start(), f"{m.group(3)}-{_MONTHS.index(m.group(1).lower()) + 1:02d}-{int(m.group(2)):02d}"))
    return list(dict.fromkeys(date for _, date in sorted(found)))


def overlap_rank(question: str | None, relations: list[str]) -> list[str]:
    """Relations ordered by the words they share with the question (stable; a fallback ranker).

    Example:
        >>> overlap_rank("what languages are spoken in jamaica", ["location.country.capital", "location.country.languages_spoken"])
        ['location.country.languages_spoken', 'location.country.capital']
    """
    words = {_stem(w) for w in _WORD.findall((question or "").lower())}

    def score(relation: str) -> float:
        parts = relation.lower().replace("_", " ").split(".")
        last = {_stem(w) for w in _WORD.findall(parts[-1])}
        rest = {_stem(w) for w in _WORD.findall(" ".join(parts[:-1]))}
        hits = last & words
        return -(3 * len(hits) + len((rest & words) - hits) + len(hits) / max(len(last), 1))

    return sorted(relations, key=score)


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
    return word


# ---------------------------------------------------------------------------
# the state of the episode


def _values(env: Any) -> dict[str, tuple[Value, ...]]:
    """The latest values seen of each variable of the current query."""
    out: dict[str, tuple[Value, ...]] = {}
    wanted = {str(v) for v in env.query.variables}
    for record in reversed(env.memory.steps):
        if isinstance(record.result, Observation):
            for var in record.result.variables:
                name = str(var.variable)
                if name in wanted and name not in out:
                    out[name] = var.values
    return out


def _kind(values: Sequence[Value]) -> str:
    """``number``, ``date``, ``text``, ``unnamed``, ``entity`` or ``unknown`` (no values)."""
    if not values:
        return "unknown"
    terms = [v.term for v in values]
    if all(isinstance(t, Literal) for t in terms):
        if all(t.is_numeric for t in terms):
            return "number"
        if all(t.is_date for t in terms):
            return "date"
        return "text"
    if all(v.unnamed for v in values):
        return "unnamed"
    return "entity"


def variable_kinds(env: Any) -> dict[str, str]:
    """What each variable of the current query holds, from the values seen last:
    ``number``, ``date``, ``text``, ``unnamed`` (CVT nodes), ``entity`` or ``unknown``.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Sandy": "m.0n9cgl4"})
        >>> _ = env.step("add_fact(m.0n9cgl4, meteorology.tropical_cyclone.damages, ?d)")
        >>> variable_kinds(env)
        {'?d': 'unnamed'}
    """
    values = _values(env)
    return {str(v): _kind(values.get(str(v), ())) for v in env.query.variables}


def auxiliary_variables(query: Any) -> set[str]:
    """The variables a step makes for its own pattern, never an answer: a quantity's statement and value
    nodes, its unit conversion, and the point in time of a year or date it was asked for.

    The choose mode offers no step on them (MarkQA names them ``?statement_<tag>``, ``?value_st_<tag>`` ...).
    Each step kind says which are its own (its ``auxiliary_variables`` hook, :class:`pyql.builder.kind.StepKind`).

    Example:
        >>> from pyql.builder.query import Query
        >>> sorted(auxiliary_variables(Query(profile="wikidata").add_quantity("Q64", "P1082", "pop", 2011)))
        ['?statement_pop', '?time_pop', '?value_st_pop']
        >>> sorted(auxiliary_variables(Query(profile="wikidata").add_quantity("Q64", "P1082", "pop", True)))
        ['?statement_pop', '?value_st_pop']
    """
    out: set[str] = set()
    for step in query.steps:
        kind = kind_of(step)
        if kind is not None and kind.auxiliary_variables is not None:
            out |= {str(v) for v in kind.auxiliary_variables(step)}
    return out


def _fresh(hint: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", hint).strip("_").lower() or "x"
    if base[0].isdigit():
        base = "v" + base
    name, n = f"?{base}", 2
    while name in taken:
        name, n = f"?{base}{n}", n + 1
    taken.add(name)
    return name


def _object_hint(relation: str) -> str:
    return re.split(r"[.:/#]", relation.strip("<>"))[-1]


def _subject_hint(relation: str) -> str:
    parts = re.split(r"[.:/#]", relation.strip("<>"))
    return parts[-2] if len(parts) >= 2 else "x"


def _relation_key(rel: str) -> tuple[str, str]:
    head, _, last = rel.rpartition(".")
    return head, last


def _spans(relations: Iterable[str]) -> list[tuple[str, str]]:
    """(start relation, end relation) pairs among a variable's forward relations."""
    by_key = {_relation_key(r): r for r in relations}
    out = []
    for (head, last), rel in by_key.items():
        for start, end in _SPANS:
            if last == start and (head, end) in by_key:
                out.append((rel, by_key[(head, end)]))
    return out


_TYPES: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], list[str]]] = weakref.WeakKeyDictionary()


def _types(env: Any, values: Sequence[Value], limit: int = 20) -> list[str]:
    """The types of some values: one bounded query, kept per KB object and set of values."""
    iris = [v.term for v in values if isinstance(v.term, IRI)]
    if not iris:
        return []
    kb = env.kb
    key = tuple(sorted({t.value for t in iris}))
    try:
        cache = _TYPES.setdefault(kb, {})
    except TypeError:
        cache = {}
    if key not in cache:
        pred = IRI(kb.profile.type_predicate).sparql()
        rows = kb.select(
            kb.profile.prefix_lines()
            + "SELECT DISTINCT ?t WHERE { VALUES ?e { "
            + " ".join(t.sparql() for t in iris)
            + f" }} ?e {pred} ?t }} LIMIT {int(limit)}"
        )
        cache[key] = sorted({kb.profile.shorten(t.value) for t in (r.get("t") for r in rows) if isinstance(t, IRI)})
    return cache[key]


# ---------------------------------------------------------------------------
# the enumeration


@dataclass(frozen=True)
class _Episode:
    """What the enumeration reads from the environment, read once per call."""

    question: str | None
    query: Any
    built: set[str]
    variables: list[str]
    taken: set[str]
    values: dict[str, tuple[Value, ...]]
    kinds: dict[str, str]
    entities: list[str]
    looked: dict[str, Relations]
    literals: dict[str, Any]
    in_query: str
    relation_names: dict[str, str] = dataclasses.field(default_factory=dict)  # relation -> a fresh variable's name
    links: dict[str, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)  # variable -> (relation, linked entity)
    grounding: Grounding | None = None  # the question's values and cue words (linked entities' names left out)

    def fresh(self, hint: str) -> str:
        """A new variable named after ``hint`` (``?population``, ``?population_2`` ...), none of the query's."""
        return _fresh(hint, set(self.taken))


def _episode(env: Any, today: _dt.date | None) -> _Episode:
    """The episode's state: variables and their kinds, linked entities, relations seen, the question's literals."""
    query = env.query
    memory = env.memory
    built = set(query.actions())
    taken = [str(v) for v in query.variables]
    hidden = auxiliary_variables(query)
    variables = [v for v in taken if v not in hidden]
    values = _values(env)
    text = env.question or ""
    for mention in memory.entities:  # a year in an entity's name ("2005 Atlantic hurricane season") is not a constraint
        text = re.sub(re.escape(mention), " ", text, flags=re.IGNORECASE)
    return _Episode(
        question=env.question,
        query=query,
        built=built,
        variables=variables,
        taken=set(taken),
        values=values,
        kinds={v: _kind(values.get(v, ())) for v in variables} | _structural_kinds(query, values),
        entities=list(dict.fromkeys(memory.entities.values())),
        looked=_looked(env),
        literals=question_literals(text, today),
        in_query=" ".join(built),
        grounding=ground(text, today),
    )


def _looked(env: Any) -> dict[str, Relations]:
    """The relations looks returned, by what was looked at; a linked entity also under its id as linked
    (a look keeps the KB's short name: ``wd:Q64`` for the linked ``Q64``)."""
    looked = dict(env.memory.relations)
    for entity in env.memory.entities.values():
        if entity not in looked:
            try:
                term = env.kb.term(entity, "entity")
            except PyQLError:
                continue
            short = env.kb.profile.shorten(term.value) if isinstance(term, IRI) else None
            if short in looked:
                looked[entity] = looked[short]
    return looked


def _looked_facts(ep: _Episode, rank: Rank, per_argument: int) -> list[NextStep]:
    """``add_fact`` with the relations of what was looked at: variables (newest first), then entities."""
    facts: list[NextStep] = []
    for key in [*reversed(ep.variables), *ep.entities]:
        rels = ep.looked.get(key)
        if rels is None:
            continue
        # what the question's adjectives measure ("stronger": winds) ranks too: they name no relation themselves
        dims = dimension_words(ep.question or "")
        ranked = rank(" ".join([ep.question or "", *dims]) if dims else ep.question, list(rels.all()))[:per_argument]
        forward = set(rels.forward)
        for rel in ranked:
            if rel in forward:
                facts += _forward_facts(ep, key, rel)
            elif not any(b.startswith("add_fact(?") and b.endswith(f", {rel}, {key})") for b in ep.built):
                facts.append(NextStep(f"add_fact({_fresh(_subject_hint(rel), set(ep.taken))}, {rel}, {key})", "fact"))
        facts += [NextStep(f"add_fact({key}, {rel}, {entity})", "fact") for rel, entity in ep.links.get(key, ())]
    return facts


def _forward_facts(ep: _Episode, key: str, rel: str) -> list[NextStep]:
    """A forward relation of ``key``: to a fresh variable, and from a variable to a linked entity not used yet."""
    facts: list[NextStep] = []
    line = f"add_fact({key}, {rel}, {_fresh(ep.relation_names.get(rel) or _object_hint(rel), set(ep.taken))})"
    if not any(b.startswith(f"add_fact({key}, {rel}, ?") for b in ep.built):
        facts.append(NextStep(line, "fact"))
    if key.startswith("?"):
        for entity in ep.entities:
            if entity not in ep.in_query:
                facts.append(NextStep(f"add_fact({key}, {rel}, {entity})", "fact"))
    return facts


def _vocabulary_facts(env: Any, ep: _Episode, rank: Rank, limit: int, vocabulary: Sequence[str] | None) -> list[NextStep]:
    """Before anything is built and with no linked entity: ``add_fact(?s, r, ?o)`` with the KB's relations."""
    if ep.query.steps or ep.entities:
        return []
    facts: list[NextStep] = []
    vocab = list(vocabulary) if vocabulary is not None else relation_vocabulary(env.kb)
    for rel in rank(ep.question, vocab)[:limit]:
        local = set(ep.taken)
        subject = _fresh(_subject_hint(rel), local)
        facts.append(NextStep(f"add_fact({subject}, {rel}, {_fresh(_object_hint(rel), local)})", "fact"))
    return facts


def _ordered_modifiers(ep: _Episode) -> tuple[list[NextStep], list[NextStep]]:
    """Constraints and aggregates on numbers and dates: max/min, filters, comparisons, sum/average."""
    constrain: list[NextStep] = []
    aggregate: list[NextStep] = []
    kinds, variables = ep.kinds, ep.variables
    ordered = [v for v in variables if kinds[v] in ("number", "date")]
    seen = {var: tuple(v.term for v in ep.values.get(var, ()) if isinstance(v.term, Literal)) for var in ordered}
    if ep.grounding is not None:  # the question's values, on every numeric or date variable whatever hop bound it
        constrain += [NextStep(line, "constrain") for line in value_filters(ep.grounding, seen, ep.built)]
    for var in ordered:
        kind = kinds[var]
        if len({v.term for v in ep.values.get(var, ())}) > 1:  # an argmax over one value changes nothing
            constrain += [NextStep(f"add_max({var})", "constrain"), NextStep(f"add_min({var})", "constrain")]
        for other in ordered:
            if other != var and kinds[other] == kind:
                if kind == "date":
                    constrain.append(NextStep(f"add_filter({var}, <=, {other})", "constrain"))
                elif variables.index(var) < variables.index(other):
                    for op in (">", "<"):
                        aggregate.append(NextStep(f"add_compare({var}, {op}, {other})", "aggregate"))
        if kind == "number":
            aggregate += [
                NextStep(f"add_sum({var}, {_fresh('total', set(ep.taken))})", "aggregate"),
                NextStep(f"add_avg({var}, {_fresh('average', set(ep.taken))})", "aggregate"),
            ]
    return constrain, aggregate


def _variable_modifiers(env: Any, ep: _Episode, rank: Rank) -> tuple[list[NextStep], list[NextStep]]:
    """Constraints and aggregates on any variable: time spans, types, counts."""
    constrain: list[NextStep] = []
    aggregate: list[NextStep] = []
    kinds, variables = ep.kinds, ep.variables
    for var in variables:
        rels = ep.looked.get(var)
        if rels is not None:
            for start, end in _spans(rels.forward):
                dates = list(ep.literals["spans"])
                for other in variables:
                    if kinds[other] == "date":
                        dates += [(str(v.term), str(v.term)) for v in ep.values.get(other, ())[:2]]
                for before, after in dict.fromkeys(dates):
                    constrain.append(
                        NextStep(f"add_time_constrain({var}, {start}, {end}, {before}, {after})", "constrain")
                    )
        if kinds[var] == "entity":
            for type_name in rank(ep.question, _types(env, ep.values.get(var, ())))[:3]:
                constrain.append(NextStep(f"add_type_constrain({type_name}, {var})", "constrain"))
        if kinds[var] in ("entity", "unnamed"):
            aggregate.append(NextStep(f"add_count({var}, {_fresh('number', set(ep.taken))})", "aggregate"))
    return constrain, aggregate


def _modifiers(env: Any, ep: _Episode, rank: Rank) -> tuple[list[NextStep], list[NextStep]]:
    """The constraints and the aggregates (none on an ASK query)."""
    if ep.query.is_ask:
        return [], []
    ordered_constrain, ordered_aggregate = _ordered_modifiers(ep)
    other_constrain, other_aggregate = _variable_modifiers(env, ep, rank)
    return [*ordered_constrain, *other_constrain], [*ordered_aggregate, *other_aggregate]


def _ends(ep: _Episode) -> tuple[list[NextStep], list[NextStep], list[NextStep]]:
    """The answers, ``execute()`` and the looks."""
    query, kinds, variables = ep.query, ep.kinds, ep.variables
    answers = [
        NextStep(f"set_answer({var})", "answer")
        for var in reversed(variables)
        if var != str(query.answer) and kinds[var] not in ("unnamed",) and not query.is_ask
    ]
    # execute() once the query says what it answers: set_answer, a comparison, or a step of a kind that answers (an aggregate)
    answered = query.answer is not None or query.is_ask or any(_answers(step) for step in query.steps)
    finish = [NextStep("execute()", "execute")] if query.steps and answered else []
    looks = [NextStep(f"get_relation({e})", "look") for e in ep.entities if e not in ep.looked]
    looks += [
        NextStep(f"get_relation({v})", "look")
        for v in reversed(variables)
        if v not in ep.looked and kinds[v] in ("entity", "unnamed")
    ]
    return answers, finish, looks


def _kind_steps(env: Any, ep: _Episode) -> list[NextStep]:
    """The candidates of the step kinds that offer their own (their ``choose`` hook,
    :class:`pyql.builder.kind.StepKind`), for the kinds whose actions the environment offers."""
    out: list[NextStep] = []
    for kind in kinds():
        if kind.choose is not None and any(d.name in env.actions.names for d in kind.actions):
            out += [NextStep(line, step_kind) for line, step_kind in kind.choose(ep)]
    return out


def _answers(step: Any) -> bool:
    """Whether after the step the query says what it answers (its kind's ``answers``: an aggregate, ``add_bind``, ``add_rank``)."""
    kind = kind_of(step)
    return kind is not None and kind.answers


def _kept(checker: StepChecker, candidates: list[NextStep], budget: int) -> list[NextStep]:
    """Up to ``budget`` candidates that run without an error, with their preview (looks kept untried).

    The candidates are checked in batches (:class:`pyql.environment.batch_trials.StepChecker`), the first ``budget``
    at once, then the rest at once when too few of them run.
    """
    out: list[NextStep] = []
    unique = list(dict.fromkeys(candidates))
    checker.check(c.action for c in unique[:budget] if c.kind != "look")
    for index, candidate in enumerate(unique):
        if len(out) >= budget:
            break
        if candidate.kind == "look":
            out.append(candidate)
            continue
        if index == budget:
            checker.check(c.action for c in unique[budget:] if c.kind != "look")
        verdict = checker.verdict(candidate.action)
        if verdict is not None:
            out.append(NextStep(candidate.action, candidate.kind, verdict.preview))
    return out


def next_steps(
    env: Any,
    *,
    rank: Rank | None = None,
    per_argument: int = 6,
    vocabulary_limit: int = 5,
    limit: int = 30,
    verify: bool = True,
    today: _dt.date | None = None,
    vocabulary: Sequence[str] | None = None,
    preview_chars: int = 60,
    batch: bool = True,
) -> list[NextStep]:
    """The valid next steps of a SPARQL environment, bounded (see the module docstring).

    Args:
        env: a :class:`~pyql.environment.sparql.SparqlEnvironment`.
        rank: orders relations and types against the question (default
            :func:`overlap_rank`; the agent passes its BM25 ranker).
        per_argument: relations kept per entity or variable.
        vocabulary_limit: KB relations offered before anything is built.
        limit: the longest list returned.
        verify: try each construction step on the environment and keep only
            those that run without an error (see :func:`trial`).
        today: the date "current" means (default: today).
        vocabulary: the KB's relations (default :func:`relation_vocabulary`).
        preview_chars: characters of the observation kept as a preview.
        batch: check the steps in batched KB queries (:class:`~pyql.environment.batch_trials.StepChecker`); False: one trial each.

    Returns:
        The steps in this order: quantities, facts, arithmetic, constraints,
        aggregates, answers, ``execute()``, looks; empty once the episode is
        done. Answers, ``execute()`` and looks are always listed; arithmetic
        takes up to a third of the rest, constraints and aggregates up to a
        third of what is left, quantities up to half of the remainder, facts
        what remains (quantities and arithmetic only on a KB in Wikidata's
        statement model whose environment offers MarkQA's actions).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), "which cyclone had the highest winds?")
        >>> next_steps(env, limit=1)[0].action
        'add_fact(?tropical_cyclone, meteorology.tropical_cyclone.highest_winds, ?highest_winds)'
    """
    if env.done:
        return []
    rank = _labelled(env, rank or overlap_rank)
    ep = _episode(env, today)
    if env.kb.profile.statement_model:
        ep = dataclasses.replace(ep, relation_names=_relation_names(env, ep), links=_links(env, ep))
    quantities, facts, arithmetic, constrain, aggregate, answers, finish, looks = _candidates(
        env, ep, rank, per_argument, vocabulary_limit, vocabulary
    )
    if not verify:
        return list(dict.fromkeys([*quantities, *facts, *arithmetic, *constrain, *aggregate, *answers, *finish, *looks]))[:limit]
    buckets = (quantities, facts, arithmetic, _cued_first(ep, [*constrain, *aggregate]), [*answers, *finish, *looks])
    return _verified(env, ep, buckets, limit, preview_chars, batch)


def _candidates(
    env: Any, ep: _Episode, rank: Rank, per_argument: int, vocabulary_limit: int, vocabulary: Sequence[str] | None
) -> tuple[list[NextStep], ...]:
    """Every candidate, by bucket: quantities, facts, arithmetic, constraints, aggregates, answers, ``execute()``, looks."""
    facts = _looked_facts(ep, rank, per_argument) + _vocabulary_facts(env, ep, rank, vocabulary_limit, vocabulary)
    constrain, aggregate = _modifiers(env, ep, rank)
    constrain = [*_class_steps(env, ep), *constrain]
    quantities, arithmetic, aggregate = _numeric_steps(env, ep, rank, per_argument, aggregate)
    answers, finish, looks = _ends(ep)
    for step in _kind_steps(env, ep):  # the candidates of kinds that offer their own, in the bucket of their kind
        {"quantity": quantities, "fact": facts, "arithmetic": arithmetic, "aggregate": aggregate, "answer": answers,
         "look": looks}.get(step.kind, constrain).append(step)
    return quantities, facts, arithmetic, constrain, aggregate, answers, finish, looks


def _numeric_steps(
    env: Any, ep: _Episode, rank: Rank, per_argument: int, aggregate: list[NextStep]
) -> tuple[list[NextStep], list[NextStep], list[NextStep]]:
    """MarkQA's quantity steps, and its arithmetic with the comparisons taken from ``aggregate`` (ordered by the
    question's cues); ``aggregate`` without them. Nothing changes where MarkQA's actions are not offered."""
    quantities = [*_quantity_steps(env, ep, rank, per_argument), *_time_steps(env, ep)]
    arithmetic = [*_arithmetic_steps(env, ep), *_literal_comparisons(env, ep)]
    if arithmetic:
        arithmetic += [step for step in aggregate if step.action.startswith("add_compare(")]
        aggregate = [step for step in aggregate if not step.action.startswith("add_compare(")]
        arithmetic = sorted(dict.fromkeys(arithmetic), key=lambda step: -arithmetic_score(ep.question, step.action))
    return quantities, arithmetic, aggregate


#: The step each of the question's cues asks for (grounding's aggregation functions and order directions).
_CUED_STEPS = {"COUNT": "add_count(", "SUM": "add_sum(", "AVG": "add_avg(", "max": "add_max(", "min": "add_min("}


def _cued_first(ep: _Episode, steps: list[NextStep]) -> list[NextStep]:
    """The constraints and aggregates the question's cue words ask for first (stable), so that the bucket's
    budget keeps them: "how many" an ``add_count``, "highest" an ``add_max``, a value after "more than" its filter.

    Example:
        >>> ep = _Episode("how many storms?", None, set(), [], set(), {}, {}, [], {}, {}, "", grounding=ground("how many storms?"))
        >>> [s.action for s in _cued_first(ep, [NextStep("add_max(?w)", "constrain"), NextStep("add_count(?c, ?n)", "aggregate")])]
        ['add_count(?c, ?n)', 'add_max(?w)']
    """
    if ep.grounding is None:
        return steps
    starts = tuple(_CUED_STEPS[c.op] for c in ep.grounding.cues if c.op in _CUED_STEPS)
    valued = {c for c, _ in ep.grounding.comparisons()}
    return sorted(steps, key=lambda s: not (s.action.startswith(starts) or (valued and s.action.startswith("add_filter("))))


def _verified(
    env: Any, ep: _Episode, buckets: tuple[list[NextStep], ...], limit: int, preview_chars: int, batch: bool = True
) -> list[NextStep]:
    """The candidates of each bucket that run, within the bucket's share of ``limit`` (see :func:`next_steps`).

    With ``batch`` the first candidates of every bucket, as many as its share can be, are checked in one
    batched query (:class:`pyql.environment.batch_trials.StepChecker`) before any bucket is filled.
    """
    quantities, facts, arithmetic, modifiers_, ends_ = buckets
    checker = StepChecker(env, ep.variables, preview_chars, batch=batch)
    third, half = max(limit // 3, 4), max(limit // 2, 4)
    checker.check(
        s.action
        for bucket, most in ((ends_, limit), (arithmetic, third), (modifiers_, third), (quantities, half), (facts, limit))
        for s in list(dict.fromkeys(bucket))[:most]
        if s.kind != "look"
    )
    # answers, execute() and looks are always listed; arithmetic gets a third of what is left (at
    # least 4), constraints and aggregates a third of the rest (at least 4), quantities half of what
    # then remains (at least 4), facts the rest; a bucket with fewer steps leaves its room to the next
    ends = _kept(checker, ends_, limit)
    room = max(limit - len(ends), 0)
    bound = _kept(checker, arithmetic, min(room, max(room // 3, 4)) if arithmetic else 0)
    room -= len(bound)
    modifiers = _kept(checker, modifiers_, min(room, max(room // 3, 4)))
    room -= len(modifiers)
    measured = _kept(checker, quantities, min(room, max(room // 2, 4)) if quantities else 0)
    found = _kept(checker, facts, room - len(measured))
    return [*measured, *found, *bound, *modifiers, *ends]


# ---------------------------------------------------------------------------
# quantities and arithmetic (a KB in Wikidata's statement model, MarkQA's actions)

#: Rows one quantity probe reads at most: its cost does not grow with the KB.
QUANTITY_PROBE_ROWS = 200
#: Values of a variable one quantity probe asks about (its first values seen).
PROBE_VALUES = 5
#: Years of one property offered beyond the question's own (the latest observed first).
_OTHER_YEARS = 2
#: Numeric variables the arithmetic is enumerated over (the newest).
_ARITHMETIC_VARIABLES = 4
#: Wikidata's unit "1" (a count, no unit to convert).
_NO_UNIT = "http://www.wikidata.org/entity/Q199"
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_SCALES = {"thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD_NUMBERS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))}
_SCALED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|" + "|".join(_WORD_NUMBERS) + r")\s+(thousand|million|billion)\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})\s+(" + "|".join(_MONTHS) + r")\s+(\d{4})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(r"\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2}),?\s+(\d{4})\b", re.IGNORECASE)


@dataclass(frozen=True)
class QuantityFacts:
    """What a quantity probe saw of one property: units, points in time (``pq:P585``) and qualifiers.

    Attributes:
        prop: the property id of the amount, e.g. ``P1082`` (a qualifier's, e.g. ``P2067``, when ``held_by``).
        units: the unit IRIs seen.
        times: the lexical forms of the points in time seen, sorted.
        qualifiers: (qualifier property id, entity IRI) pairs seen on the statements (other than ``P585``).
        held_by: for an amount held by a qualifier: the (property id, entity IRI) pairs of the statements holding it.
    """

    prop: str
    units: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    qualifiers: tuple[tuple[str, str], ...] = ()
    held_by: tuple[tuple[str, str], ...] = ()

    @property
    def years(self) -> list[str]:
        """The years of the points in time, latest first."""
        return sorted({t[:4] for t in self.times if re.match(r"\d{4}", t)}, reverse=True)

    @property
    def has_unit(self) -> bool:
        """Whether an amount has a unit to convert (not Wikidata's "1")."""
        return any(u != _NO_UNIT for u in self.units)


def quantity_probe_query(profile: Any, values: Sequence[IRI], limit: int = QUANTITY_PROBE_ROWS) -> str:
    """The bounded query that reads the quantities of some entities: units, times, qualifiers.

    An amount is a ``psv:`` value of a statement, or a ``pqv:`` value of a
    qualifier (then the statement's ``ps:`` entity says what holds it).

    Example:
        >>> from pyql.builder.profiles import WIKIDATA
        >>> q = quantity_probe_query(WIKIDATA, [IRI("http://www.wikidata.org/entity/Q64")])
        >>> "VALUES ?e { wd:Q64 }" in q, q.rstrip().endswith("LIMIT 200")
        (True, True)
    """
    names = " ".join(profile.sparql_iri(v.value) for v in values)
    return profile.prefix_lines() + (
        f"SELECT ?claim ?psv ?unit ?time ?qualifier ?qobj ?ps ?held WHERE {{ VALUES ?e {{ {names} }}\n"
        "  ?e ?claim ?st . ?st ?psv ?node . ?node wikibase:quantityAmount ?amount .\n"
        "  OPTIONAL { ?node wikibase:quantityUnit ?unit } OPTIONAL { ?st pq:P585 ?time }\n"
        "  OPTIONAL { ?st ?qualifier ?qobj . FILTER(isIRI(?qobj) && STRSTARTS(STR(?qualifier), STR(pq:)) && ?qualifier != pq:P585) }\n"
        "  OPTIONAL { FILTER(STRSTARTS(STR(?psv), STR(pqv:))) ?st ?ps ?held . FILTER(isIRI(?held) && STRSTARTS(STR(?ps), STR(ps:))) }\n"
        f"}} LIMIT {int(limit)}\n"
    )


_QUANTITIES: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], list[QuantityFacts]]] = weakref.WeakKeyDictionary()


def _local(term: Any, namespace: str) -> str | None:
    """The local name of an IRI in a namespace, else None."""
    return term.value[len(namespace):] if isinstance(term, IRI) and term.value.startswith(namespace) else None


def quantity_facts(kb: Any, values: Sequence[IRI]) -> list[QuantityFacts]:
    """The quantity properties of some entities, with units, times and qualifiers: one bounded probe, kept per KB object.

    Empty on a KB whose profile has no statement model (:attr:`pyql.builder.profiles.Profile.statement_model`).

    Example:
        >>> import pyql
        >>> from pathlib import Path
        >>> from pyql.kb import KB
        >>> kb = KB.open(str(Path(pyql.__file__).parent / "data" / "wikidata_demo.ttl"), profile="wikidata")
        >>> facts = {f.prop: f for f in quantity_facts(kb, [IRI("http://www.wikidata.org/entity/Q64")])}
        >>> sorted(facts), facts["P1082"].years
        (['P1082', 'P2046'], ['2021', '2015', '2011'])
    """
    profile = kb.profile
    if not profile.statement_model or not {"p", "ps", "psv", "pq", "pqv", "wikibase"} <= set(profile.prefixes) or not values:
        return []
    key = tuple(sorted(v.value for v in values))
    cache = _QUANTITIES.setdefault(kb, {})
    if key not in cache:
        ns = profile.prefixes
        seen: dict[str, tuple[set[str], set[str], set[tuple[str, str]], set[tuple[str, str]]]] = {}
        for row in kb.select(quantity_probe_query(profile, values)):
            main, qualifier = _local(row.get("psv"), ns["psv"]), _local(row.get("psv"), ns["pqv"])
            if main is None and qualifier is None:
                continue
            units, times, qualifiers, held_by = seen.setdefault(("" if main else "pqv:") + (main or qualifier or ""), (set(), set(), set(), set()))
            if isinstance(row.get("unit"), IRI):
                units.add(row["unit"].value)
            if isinstance(row.get("time"), Literal):
                times.add(row["time"].lexical)
            if main is not None and (name := _local(row.get("qualifier"), ns["pq"])) and isinstance(row.get("qobj"), IRI):
                qualifiers.add((name, row["qobj"].value))
            claim, statement = _local(row.get("claim"), ns["p"]), _local(row.get("ps"), ns["ps"])
            if qualifier is not None and claim and claim == statement and isinstance(row.get("held"), IRI):
                held_by.add((claim, row["held"].value))
        cache[key] = [
            QuantityFacts(p.removeprefix("pqv:"), *(tuple(sorted(x)) for x in sets)) for p, sets in seen.items()
            if not p.startswith("pqv:") or sets[3]  # an amount held by a qualifier needs the statement holding it
        ]
    return cache[key]


_LABELS: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()


def _labels(kb: Any, props: Iterable[str]) -> dict[str, str]:
    """Labels of ids such as ``P1082`` or ``Q6581072`` (one query for those not asked before), kept per KB object."""
    cache = _LABELS.setdefault(kb, {})
    missing = [p for p in dict.fromkeys(props) if p not in cache]
    if missing:
        for term, label in kb.labels(missing).items():
            cache[kb.profile.shorten(term.value).split(":")[-1] if isinstance(term, IRI) else str(term)] = label or ""
        for prop in missing:
            cache.setdefault(prop, "")
    return cache


def _quantity_keys(kb: Any, ep: _Episode, mentions: dict[str, str]) -> list[tuple[str, list[IRI], str]]:
    """What quantities are asked of: linked entities, then entity variables (newest first, their first values)."""
    keys: list[tuple[str, list[IRI], str]] = []
    names = {entity: mention for mention, entity in mentions.items()}
    for entity in ep.entities:
        keys.append((entity, [], names.get(entity, entity)))
    for var in reversed(ep.variables):
        if ep.kinds[var] == "entity":
            iris = [v.term for v in ep.values.get(var, ()) if isinstance(v.term, IRI)][:PROBE_VALUES]
            keys.append((var, iris or _sample_values(kb, ep.query, var), var.lstrip("?")))
    return keys


def _sample_values(kb: Any, query: Any, var: str) -> list[IRI]:
    """A variable's first values when no observation showed them: one query, ``LIMIT`` :data:`PROBE_VALUES`."""
    try:
        rows = kb.select(query.set_answer(var).sparql() + f"LIMIT {PROBE_VALUES}\n")
    except PyQLError:
        return []
    return [t for t in (row.get(var[1:]) for row in rows) if isinstance(t, IRI)]


def _built_quantities(ep: _Episode) -> set[tuple[str, str, str]]:
    """(entity, property, time) of the quantities already in the query."""
    out = set()
    for line in ep.built:
        if line.startswith("add_quantity("):
            parts = line[len("add_quantity("):-1].split(", ")
            time = parts[3] if len(parts) > 3 and parts[3].lower() != "false" else ""
            out.add((parts[0].removeprefix("wd:"), parts[1], time))
    return out


def _time_variants(facts: QuantityFacts, literals: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(priority, time argument, tag suffix) of one property: the question's years and dates first, then the rest.

    Example:
        >>> f = QuantityFacts("P1082", (), ("2011-12-31T00:00:00Z", "2021-12-31T00:00:00Z", "2022-05-15T00:00:00Z"))
        >>> _time_variants(f, {"years": ["2021"], "dates": []})
        [(0, '2021', '_2021'), (1, '', ''), (2, 'true', ''), (3, '2022', '_2022'), (3, '2011', '_2011')]
    """
    years = facts.years
    asked = [y for y in literals.get("years", ()) if y in years]
    out = [(0, y, f"_{y}") for y in asked]
    out += [(0, t, f"_{t[:4]}") for t in facts.times if t[:10] in literals.get("dates", ())]
    out.append((1, "", ""))
    out += [(1, var, "") for var in literals.get("date_variables", ())]
    if len(facts.times) > 1:
        out.append((2, "true", ""))
    out += [(3, y, f"_{y}") for y in years if y not in asked][:_OTHER_YEARS]
    return out


def _quantity_lines(key: str, base: str, facts: QuantityFacts, labels: dict[str, str], ep: _Episode) -> list[tuple[int, str]]:
    """(priority, action) of one property of one entity or variable: ``add_quantity`` with its times and
    units, ``add_quantity_with_qualifier`` with each qualifier seen, or ``add_quantity_by_qualifier``."""
    prop, out = facts.prop, []
    taken = set(ep.taken)
    if facts.held_by:
        for main, held in facts.held_by:
            short = held.rsplit("/", 1)[-1]
            tag = _fresh(f"{base}_{labels.get(short) or short}", set(taken))
            out.append((1, f"add_quantity_by_qualifier({key}, {main}, {short}, {prop}, {tag})"))
        return out
    built = _built_quantities(ep)
    dated = {**ep.literals, "date_variables": [v for v in ep.variables if ep.kinds[v] == "date"]}
    for priority, time, suffix in _time_variants(facts, dated):
        if (key, prop, time) in built:
            continue
        unit = [(priority + 1, f"{time or 'false'}, true")] if facts.has_unit and priority < 2 else []
        for rank_value, args in [(priority, time), *unit]:
            line = f"add_quantity({key}, {prop}, {_fresh(base + suffix, set(taken))}{', ' + args if args else ''})"
            out.append((rank_value, line))
    for qualifier, value in facts.qualifiers:
        short = value.rsplit("/", 1)[-1]
        tag = _fresh(f"{base}_{labels.get(short) or short}", set(taken))
        out.append((1, f"add_quantity_with_qualifier({key}, {prop}, {qualifier}, {short}, {tag})"))
    return out


def _quantity_steps(env: Any, ep: _Episode, rank: Rank, per_argument: int) -> list[NextStep]:
    """MarkQA's quantity steps for the linked entities and entity variables, with the times, units and
    qualifiers a bounded probe saw: ``per_argument`` properties per key, ranked by their labels."""
    if "add_quantity" not in env.actions.names or not env.kb.profile.statement_model:
        return []
    ranked: list[tuple[int, int, int, NextStep]] = []
    for key_index, (key, iris, hint) in enumerate(_quantity_keys(env.kb, ep, dict(env.memory.entities))):
        values = iris or [env.kb.term(key, "entity")]
        if not all(isinstance(v, IRI) for v in values):
            continue
        facts = quantity_facts(env.kb, values)
        ids = [f.prop for f in facts] + [v.rsplit("/", 1)[-1] for f in facts for _, v in (*f.qualifiers, *f.held_by)]
        labels = _labels(env.kb, ids)
        by_label = {f"{labels.get(f.prop) or f.prop} {f.prop}{' qualifier' if f.held_by else ''}": f for f in facts}
        for prop_index, name in enumerate(rank(ep.question, list(by_label))[:per_argument]):
            fact = by_label[name]
            base = f"{hint}_{labels.get(fact.prop) or fact.prop}"
            for priority, line in _quantity_lines(key, base, fact, labels, ep):
                ranked.append((priority, prop_index, key_index, NextStep(line, "quantity")))
    return [step for *_, step in sorted(ranked, key=lambda t: t[:3])]


#: The arithmetic an ``add_bind`` offers over two numeric variables ``{a}``, ``{b}``: name, expression, cue words.
_PAIR_FORMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("difference", "sub({a}, {b})", ("more", "less", "fewer", "difference", "longer", "shorter", "higher", "lower", "larger", "smaller", "exceed", "bigger", "how much", "by how many")),
    ("ratio", "div({a}, {b})", ("times", "ratio", "as many", "as much", "per", "factor")),
    ("percentage", "mul(div({a}, {b}), 100)", ("percentage", "percent", "share", "%")),
    ("growth", "mul(div(sub({a}, {b}), {b}), 100)", ("grow", "grew", "growth", "increase", "decrease", "change", "rise", "rose", "fell")),
    ("difference", "abs(sub({a}, {b}))", ("difference", "between")),
    ("times", "floor_div({a}, {b})", ("whole times", "fit")),
    ("times", "ceil_div({a}, {b})", ("at least", "reach")),
)
#: The arithmetic over one numeric variable and a number of the question ``{n}``.
_NUMBER_FORMS = (("product", "mul({a}, {n})", ("times", "per", "at")), ("quotient", "div({a}, {n})", ("divided", "per", "each")))
#: The date functions over one date variable, and over two.
_DATE_FORMS = (("year", "year({a})", ("year", "when")), ("month", "month({a})", ("month",)))
_DATE_PAIR_FORMS = (("years", "sub(year({a}), year({b}))", ("years", "how long", "how many years")),)
_AVERAGE_CUES = ("average", "mean")
_RANK_CUES = ("rank", "place", "position")


def _shape(expression: str) -> str:
    """An expression with its variables as ``?`` and its numbers as ``#``: what a form of arithmetic looks like."""
    plain = re.sub(r"to_decimal\(([\d.]+)\)", r"\1", re.sub(r"\?\w+", "?", expression))
    return re.sub(r"(?<![\w?.])\d+(?:\.\d+)?(?![\w.])", "#", plain)


#: The cue words of each shape of arithmetic (see :func:`arithmetic_score`).
_CUES_BY_SHAPE: dict[str, tuple[str, ...]] = {
    _shape(form.format(a="?a", b="?b", n="1")): cues
    for _name, form, cues in (*_PAIR_FORMS, *_NUMBER_FORMS, *_DATE_FORMS, *_DATE_PAIR_FORMS)
}


_GROWTH_SHAPE = _shape("mul(div(sub(?a, ?b), ?b), 100)")


def arithmetic_score(question: str | None, action: str) -> float:
    """How well an ``add_bind`` step fits the question: the cue words of its shape of arithmetic found there
    (an ``add_rank`` by "rank", "place"; an ``add_compare`` by a yes/no question).

    Example:
        >>> q = "By what percentage did the population of Berlin grow between 2011 and 2021?"
        >>> growth = arithmetic_score(q, "add_bind(mul(div(sub(?p2021, ?p2011), ?p2011), 100), ?growth)")
        >>> growth, arithmetic_score(q, "add_bind(sub(?p2021, ?p2011), ?difference)")
        (2.0, 0.0)
    """
    text = f" {(question or '').lower()} "
    expression = action[len("add_bind("):].rsplit(", ", 1)[0]
    if action.startswith("add_compare("):  # a comparison answers a yes/no question
        return 2.0 if re.match(r"\s*(is|are|was|were|did|does|do|has|have|had)\b", text) else 0.0
    if action.startswith("add_rank("):
        cues: tuple[str, ...] = _RANK_CUES
    elif expression.startswith("avg("):
        cues = _AVERAGE_CUES
    else:
        cues = _CUES_BY_SHAPE.get(_shape(expression), ())
    hits = sum(1 for c in cues if re.search(r"(?<![a-z])" + re.escape(c) + r"(?![a-z])", text))
    # a change in percent: the growth form wins over the plain percentage when both cues are there,
    # and without "percent" a growth is a difference ("by how many people did it grow")
    if _shape(expression) == _GROWTH_SHAPE:
        return float(hits) + 1.0 if hits and re.search(r"percent|%", text) else 0.5 * hits
    return float(hits)


def _years_of(query: Any) -> dict[str, int]:
    """The year each quantity's amount was asked for (``add_quantity(..., ?pop, 2021)``: ``{"?pop": 2021}``; its kind's ``asked_year`` hook)."""
    out = {}
    for step in query.steps:
        kind = kind_of(step)
        asked = kind.asked_year(step) if kind is not None and kind.asked_year is not None else None
        if asked is not None:
            out[str(asked[0])] = asked[1]
    return out


def _pairs(variables: list[str], years: dict[str, int]) -> list[tuple[str, str]]:
    """Ordered pairs of numeric variables, the likelier order first: the later year first when both have
    one (a change over time), else the order they were made in (the order the question names them).

    Example:
        >>> _pairs(["?p2011", "?p2021"], {"?p2011": 2011, "?p2021": 2021})
        [('?p2021', '?p2011'), ('?p2011', '?p2021')]
        >>> _pairs(["?hamburg", "?munich"], {})
        [('?hamburg', '?munich'), ('?munich', '?hamburg')]
    """
    def likely(pair: tuple[str, str]) -> bool:
        a, b = pair
        if a in years and b in years and years[a] != years[b]:
            return years[a] > years[b]
        return variables.index(a) < variables.index(b)

    pairs = [(a, b) for a in variables for b in variables if a != b]
    return [p for p in pairs if likely(p)] + [p for p in pairs if not likely(p)]


def _arithmetic_steps(env: Any, ep: _Episode) -> list[NextStep]:
    """``add_bind`` over the numeric and date variables bound so far and the question's numbers, best cue first."""
    if "add_bind" not in env.actions.names or ep.query.is_ask:
        return []
    numbers = [v for v in ep.variables if ep.kinds[v] == "number"][-_ARITHMETIC_VARIABLES:]
    dates = [v for v in ep.variables if ep.kinds[v] == "date"][-_ARITHMETIC_VARIABLES:]
    lines: list[tuple[str, str]] = []
    for a, b in _pairs(numbers, _years_of(ep.query)):
        lines += [(name, form.format(a=a, b=b)) for name, form, _ in _PAIR_FORMS]
    for a in numbers:
        lines += [(name, form.format(a=a, n=_number_text(n))) for n in ep.literals["numbers"] for name, form, _ in _NUMBER_FORMS]
    if len(numbers) >= 3:
        lines.append(("average", f"avg({', '.join(numbers)})"))
    for a in dates:
        lines += [(name, form.format(a=a)) for name, form, _ in _DATE_FORMS]
        lines += [(name, form.format(a=a, b=b)) for b in dates if b != a for name, form, _ in _DATE_PAIR_FORMS]
    steps = [NextStep(f"add_bind({expr}, {_fresh(name, set(ep.taken))})", "arithmetic") for name, expr in lines]
    return sorted(steps, key=lambda s: -arithmetic_score(ep.question, s.action))


_CLASSES: weakref.WeakKeyDictionary[Any, dict[str, bool]] = weakref.WeakKeyDictionary()


def _class_steps(env: Any, ep: _Episode) -> list[NextStep]:
    """``add_type_constrain(C, ?new)`` for a linked entity that is a class (something is an instance or subclass of it).

    One bounded ASK per linked entity, kept per KB object; only on a profile with a subclass relation (Wikidata).
    """
    profile = env.kb.profile
    if profile.subclass_predicate is None or "add_type_constrain" not in env.actions.names:
        return []
    cache = _CLASSES.setdefault(env.kb, {})
    names = {entity: mention for mention, entity in env.memory.entities.items()}
    steps = []
    for entity in ep.entities:
        if entity in ep.in_query:
            continue
        term = env.kb.term(entity, "entity")
        if not isinstance(term, IRI):
            continue
        if entity not in cache:
            type_of, subclass_of = profile.sparql_iri(profile.type_predicate), profile.sparql_iri(profile.subclass_predicate)
            cache[entity] = env.kb.ask(f"{profile.prefix_lines()}ASK {{ ?x {type_of}|{subclass_of} {term.sparql()} }}")
        if cache[entity]:
            steps.append(NextStep(f"add_type_constrain({entity}, {_fresh(names.get(entity, 'x'), set(ep.taken))})", "constrain"))
    return steps


#: A Wikidata property id at the end of a relation name (``wdt:P17``, ``p:P1082``, ``<.../P31>``).
_PID = re.compile(r"(?:^|[:/])(P[0-9]+)>?$")


def _labelled(env: Any, rank: Rank) -> Rank:
    """On a KB in Wikidata's statement model, a ranker that reads each relation with its property's label.

    ``wdt:P17`` says nothing to a ranker; ``country wdt:P17`` does. The labels cost one query per
    KB object and property (kept). Elsewhere the ranker is returned as it is.
    """
    if not env.kb.profile.statement_model:
        return rank

    def ranked(question: str | None, relations: list[str]) -> list[str]:
        pids = {r: m.group(1) for r in relations if (m := _PID.search(r))}
        labels = _labels(env.kb, set(pids.values())) if pids else {}
        keyed = {f"{labels.get(pids.get(r, ''), '')} {r}".strip(): r for r in relations}
        return [keyed[k] for k in rank(question, list(keyed)) if k in keyed]

    return ranked


#: The time steps of MarkQA and the direct property each reads.
_TIME_STEPS = (("add_start_time", "P580", "start"), ("add_end_time", "P582", "end"), ("add_time", "P585", "time"))


def _time_steps(env: Any, ep: _Episode) -> list[NextStep]:
    """``add_start_time``/``add_end_time``/``add_time`` of what was looked at and has that property (no KB query)."""
    steps = []
    names = {entity: mention for mention, entity in env.memory.entities.items()}
    for key in [*ep.entities, *reversed(ep.variables)]:
        rels = ep.looked.get(key)
        if rels is None:
            continue
        pids = {m.group(1) for r in rels.forward if (m := _PID.search(r)) and r.startswith("wdt:")}
        for action, pid, word in _TIME_STEPS:
            if pid in pids and action in env.actions.names and not any(b.startswith(f"{action}(") and key in b for b in ep.built):
                hint = f"{names.get(key, key.lstrip('?'))}_{word}"
                steps.append(NextStep(f"{action}({key}, {_fresh(hint, set(ep.taken))})", "quantity"))
    return steps


def _number_text(number: str) -> str:
    """A number of the question as an expression operand: a decimal as MarkQA writes it, ``to_decimal(0.3048)``."""
    return f"to_decimal({number})" if "." in number else number


def _literal_comparisons(env: Any, ep: _Episode) -> list[NextStep]:
    """Comparisons with the question's numbers and days: ``add_compare`` (yes/no) and ``add_filter`` on dates;
    ``add_rank`` of one numeric variable among another's values; ``add_assignment`` of the linked entities."""
    steps: list[NextStep] = []
    if ep.query.is_ask:
        return steps
    numbers = [v for v in ep.variables if ep.kinds[v] == "number"]
    for var in numbers:
        steps += [NextStep(f"add_compare({var}, {op}, {n})", "aggregate") for n in ep.literals["numbers"] for op in (">", "<")]
    for var in (v for v in ep.variables if ep.kinds[v] == "date"):
        for day in ep.literals.get("dates", ()):
            steps += [NextStep(f"add_filter({var}, {op}, {day})", "constrain") for op in (">", "<")]
            steps += [NextStep(f"add_compare({var}, {op}, {day})", "aggregate") for op in (">", "<")]
    if "add_rank" in env.actions.names:
        recent = numbers[-_ARITHMETIC_VARIABLES:]
        steps += [NextStep(f"add_rank({a}, {b}, {_fresh('rank', set(ep.taken))})", "arithmetic") for a in recent for b in recent if a != b]
    if "add_assignment" in env.actions.names and len(ep.entities) >= 2 and not ep.query.steps:
        steps.append(NextStep(f"add_assignment(({', '.join(ep.entities)}), {_fresh('item', set(ep.taken))})", "constrain"))
    return steps


def _structural_kinds(query: Any, values: dict[str, tuple[Value, ...]]) -> dict[str, str]:
    """Kinds the steps say when no value of the variable was shown (their kinds' ``value_kinds`` hooks): a
    quantity's amount is a number, its point in time asked for and a start, end or point in time are dates,
    a type's instances entities."""
    out: dict[str, str] = {}
    for step in query.steps:
        kind = kind_of(step)
        if kind is not None and kind.value_kinds is not None:
            out.update({str(var): held for var, held in kind.value_kinds(step).items()})
    return {var: kind for var, kind in out.items() if not values.get(var)}


def _relation_names(env: Any, ep: _Episode) -> dict[str, str]:
    """On Wikidata: each looked-at relation's property label as a variable name (``wdt:P17`` -> ``country``)."""
    relations = {r for rels in ep.looked.values() for r in rels.all()}
    pids = {r: m.group(1) for r in relations if (m := _PID.search(r))}
    labels = _labels(env.kb, set(pids.values())) if pids else {}
    return {r: re.sub(r"\W+", "_", labels[p].lower()).strip("_") for r, p in pids.items() if labels.get(p)}


#: Entity variables (newest first) a linking probe asks about, and the relations it reads per pair.
_LINKED_VARIABLES, _LINK_ROWS = 2, 10


def _links(env: Any, ep: _Episode) -> dict[str, list[tuple[str, str]]]:
    """The relations that join an entity variable to a linked entity not in the query yet: one bounded
    query per (variable, entity) pair (the query so far plus ``?var ?relation entity``, ``LIMIT``)."""
    out: dict[str, list[tuple[str, str]]] = {}
    variables = [v for v in reversed(ep.variables) if ep.kinds[v] == "entity"][:_LINKED_VARIABLES]
    for var in variables:
        for entity in (e for e in ep.entities if e not in ep.in_query):
            relation = _fresh("link_relation", set(ep.taken))
            try:
                probe = ep.query.add_fact(var, relation, entity).set_answer(relation)
                rows = env.kb.select(probe.sparql() + f"LIMIT {_LINK_ROWS}\n")
            except PyQLError:
                continue
            for row in rows:
                term = row.get(relation[1:])
                if isinstance(term, IRI) and not env.kb.profile.is_hidden(term.value) and term.value != env.kb.profile.type_predicate:
                    out.setdefault(var, []).append((env.kb.profile.shorten(term.value), entity))
    return out
