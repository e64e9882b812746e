"""The discriminative action mode (``--action-mode choose``): the LLM picks a listed step by number.

Small models discriminate far better than they generate, and large ones
spend fewer tokens on a number than on an action. At each step the
environment enumerates the valid next steps (:func:`pyql.environment.next_steps.next_steps`:
ranked relations of the entities and variables as ``add_fact`` in the right
direction, constraints and aggregates on the variables that exist,
``set_answer``, ``execute()``), each with a preview of its result; the prompt
lists them numbered and the LLM answers with a number:

* on a local llama.cpp server the reply is constrained to the listed numbers
  by a GBNF grammar (:func:`choice_gbnf`), so it always parses;
* elsewhere the first number of the reply is read (:func:`parse_choice`) and a
  reply without a valid number is asked again once, with the range.

With ``auto_look`` (the default) the environment itself runs ``get_relation``
on every linked entity and every entity variable it has not looked at yet,
before it enumerates: a look costs a KB query, not an LLM call.

Example:
    >>> choice_gbnf(3)
    'root ::= " "? ("1" | "2" | "3")\\n'
    >>> parse_choice(" 2", 3), parse_choice("12", 3), parse_choice("Choice: 3.", 3)
    (2, None, 3)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from agent.llm.replies import LLM, LLMReply
from pyql.environment.next_steps import (
    NextStep,
    arithmetic_score,
    next_steps,
    question_literals,
    trial,
    variable_kinds,
)
from pyql.errors import PyQLError
from pyql.environment.grounding import Grounding, dimension_words, ground
from pyql.environment.value_steps import question_value_fit
from pyql_sql.next_steps import table_next_steps

__all__ = [
    "ask_choice", "auto_look", "choice_gbnf", "choice_lines", "enumerate_choices", "enumerate_table_choices", "fact_relation", "forced_choice",
    "model_order", "parse_choice", "table_observation",
]


def choice_gbnf(n: int) -> str:
    """A GBNF grammar whose sentences are exactly the numbers 1..n (an optional leading space).

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"a choice needs at least one option, not {n}")
    return 'root ::= " "? (' + " | ".join(f'"{i}"' for i in range(1, n + 1)) + ")\n"


def parse_choice(text: str, n: int) -> int | None:
    """The first whole number of a reply when it is in 1..n, else None."""
    match = re.search(r"\d+", text or "")
    if match is None:
        return None
    value = int(match.group())
    return value if 1 <= value <= n else None


def choice_lines(choices: Sequence[NextStep], preview: bool = True) -> str:
    """The numbered list shown to the LLM, one step a line (with its preview after ``→``).

    Example:
        >>> print(choice_lines([NextStep("set_answer(?c)", "answer", "?c = Katrina"), NextStep("execute()", "execute")]))
        1. set_answer(?c) → ?c = Katrina
        2. execute()
    """
    lines = []
    for i, c in enumerate(choices, 1):
        tail = f" → {c.preview}" if preview and c.preview else ""
        lines.append(f"{i}. {c.action}{tail}")
    return "\n".join(lines)


def auto_look(env: Any) -> list[Any]:
    """Run ``get_relation`` on the linked entities and entity variables not looked at yet; the records.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> [r.call.text for r in auto_look(env)], auto_look(env)
        (['get_relation(m.0crbvqz)'], [])
    """
    looks = [step.action for step in next_steps(env, verify=False, limit=1000) if step.kind == "look"]
    with _read_ahead(env, looks):
        return [_look(env, action) for action in looks]


def _read_ahead(env: Any, looks: Sequence[str]) -> Any:
    """A block in which the looks at entities read their relations from one query for them all (where the
    environment and its KB can: :meth:`pyql.environment.sparql.SparqlEnvironment.looked_up`); a KB that
    fails it leaves each look to its own query.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz", "Iniki": "m.0dkl7"})
        >>> before = env.kb.stats.queries
        >>> [r.ok for r in auto_look(env)], env.kb.stats.queries - before
        ([True, True], 1)
    """
    entities = [m.group(1) for action in looks if (m := re.fullmatch(r"get_relation\(([^?()][^()]*)\)", action.strip()))]
    if len(entities) < 2 or not hasattr(env, "looked_up"):
        return nullcontext()
    try:
        return env.looked_up(env.kb.entity_relations(entities))
    except PyQLError:
        return nullcontext()


#: The most values of a variable a look reads from the observation (the KB's relation sample: 100 values).
LOOK_VALUES = 100


def _look(env: Any, action: str) -> Any:
    """Run one look; a variable's look reads the variable's values from the current observation where it
    showed them all (at most :data:`LOOK_VALUES`, IRIs only), as after an argmax, so the current
    query is not evaluated again (:meth:`pyql.environment.sparql.SparqlEnvironment.known_values`).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> _ = env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.tropical_cyclone_season, ?s)")
        >>> sent, select = [], env.kb.select
        >>> env.kb.select = lambda text: sent.append(text) or select(text)
        >>> _look(env, "get_relation(?s)").observation[:50], ["VALUES ?s" in text for text in sent]
        ("{'forward': ['meteorology.tropical_cyclone_season.", [True])
    """
    match = re.fullmatch(r"get_relation\((\?\w+)\)", action.strip())
    values = _seen_values(env, match.group(1)) if match and getattr(env, "bounded_rows", 1) is None else None
    if values is None:
        return env.step(action)
    from pyql.builder.terms import Variable  # noqa: PLC0415

    with env.known_values(Variable(match.group(1)[1:]), values):  # type: ignore[union-attr]
        return env.step(action)


def _seen_values(env: Any, name: str) -> list[Any] | None:
    """Every value of ``name`` the observation of the current query showed, where they are all IRIs; else None."""
    from pyql.environment.batch_trials import current_record, has_alternatives  # noqa: PLC0415
    from pyql.builder.terms import IRI  # noqa: PLC0415

    record = current_record(env)
    # an optional or alternative part may leave the variable unbound in a row: its look reads the query
    if record is None or env.query.is_ask or env.query.scope.block.computed or has_alternatives(env.query):
        return None
    for seen in record.result.variables:
        if str(seen.variable) == name:
            if seen.capped or seen.partial or not 0 < seen.total == len(seen.values) <= LOOK_VALUES:
                return None
            # literals stay with the query: Virtuoso 7.2 fails on dates in VALUES joined with ?s ?p ?o (SR066)
            return list(seen.values) if all(isinstance(v.term, IRI) for v in seen.values) else None
    return None


def enumerate_choices(
    env: Any, *, rank: Any = None, limit: int = 12, per_argument: int = 6, order: str = "ranked", batch: bool = True
) -> list[NextStep]:
    """The valid next steps to offer (verified, bounded; looks only when ``auto_look`` is off).

    ``order``: ``"ranked"`` (:func:`rank_choices` over up to ``3 * limit`` steps, the best ``limit`` kept)
    or ``"kind"`` (the enumerator's order and cap). ``batch``: the steps are checked in batched KB
    queries (:class:`pyql.environment.batch_trials.StepChecker`, a few queries per call); False: one trial per step.
    """
    if order != "ranked":
        return next_steps(env, rank=rank, limit=limit, per_argument=per_argument, verify=True, batch=batch)
    # rank a longer list, then keep the best ``limit``
    steps = next_steps(env, rank=rank, limit=3 * limit, per_argument=per_argument, verify=True, batch=batch)
    entities = list(env.memory.entities.values())
    ranked = rank_choices(
        env.question, steps, env.query.actions(), entities=entities, kinds=variable_kinds(env),
        mentions=list(env.memory.entities),
    )
    return ranked[:limit]


def enumerate_table_choices(
    env: Any, *, scores: dict[str, float] | None = None, limit: int = 8, preview: bool = True
) -> list[NextStep]:
    """The valid next steps of a table episode (:func:`pyql_sql.next_steps.table_next_steps`), each with its preview.

    With ``preview``, a step's preview is the start of its observation, tried
    on a fork of the environment (:func:`pyql.environment.next_steps.trial`: one SQL query per step, no LLM call).

    Example:
        >>> from pyql_sql import Table
        >>> from pyql_sql.environment import TableEnvironment
        >>> t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"], ["7", "Shamrock Rovers"]])
        >>> env = TableEnvironment(t, question="How many games with athlone town as the opponent?")
        >>> print(choice_lines(enumerate_table_choices(env, limit=2)))
        1. add_condition(Opponent, =, Athlone Town) → 1 row matches the conditions: {'Game': '6', 'Opponent': 'Athlone Town'}
        2. set_answer(Game, COUNT) → COUNT(Game) = 2
    """
    out = []
    for step in table_next_steps(env, scores=scores, limit=limit):
        shown = ""
        if preview and step.kind != "execute":
            record = trial(env, step.action)
            shown = _clip(record.observation if record.ok else f"error: {record.error}")
        out.append(NextStep(step.action, step.kind, shown))
    return out


def forced_choice(choices: Sequence[NextStep], previous: str | None) -> str | None:
    """Why the first listed step is no choice, so that it is taken without asking the LLM; None: ask.

    * one step listed: there is nothing to choose;
    * ``execute()`` listed first right after a ``set_answer`` was taken
      (``previous``: the last step taken, None when it failed): the table
      list always ranks ``execute()`` first once an answer is set, and the
      bundled model always took it; asking only cost a call (one of about
      three a question, ``docs/benchmarks.md`` "Model time per table question").

    The agent records the reason in the step's trace (``without_call``).

    Example:
        >>> forced_choice([NextStep("execute()", "execute"), NextStep("set_answer(Game)", "answer")], "set_answer(Game, COUNT)")
        'the answer is set (set_answer(Game, COUNT)): execute() ends the query'
        >>> forced_choice([NextStep("set_answer(Game)", "answer")], None)
        'the only listed step'
        >>> forced_choice([NextStep("execute()", "execute"), NextStep("set_answer(Game)", "answer")], None) is None
        True
    """
    if len(choices) == 1:
        return "the only listed step"
    if choices and choices[0].action == "execute()" and previous is not None and previous.startswith("set_answer("):
        return f"the answer is set ({previous}): execute() ends the query"
    return None


def table_observation(text: str, size: int = 120) -> str:
    """A table observation as the choose prompt keeps it: the rows a condition keeps are counted, not shown.

    The model picks a number; the rows' cells cost tokens at every later
    call (the trace keeps the whole observation).

    Example:
        >>> table_observation("2 rows match the conditions: {'Game': '6'}; {'Game': '7'}")
        '2 rows match the conditions'
        >>> table_observation("COUNT(Game) = 1")
        'COUNT(Game) = 1'
    """
    head = text.split(": {", 1)[0] if ": {" in text else text
    return _clip(head, size)


def _clip(text: str, size: int = 120) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= size else one[: size - 3].rstrip() + "..."


def ask_choice(
    llm: LLM, prompt: Any, n: int, *, grammar: bool, retry_note: str | None = None
) -> tuple[int | None, list[LLMReply]]:
    """Ask for a number in 1..n; one retry (with the range spelled out) when the reply has none.

    Returns:
        The 1-based choice (None when both replies were unusable) and the replies.
    """
    replies: list[LLMReply] = []
    reply = llm.complete(prompt, stop=["\n"], grammar=choice_gbnf(n) if grammar else None)
    replies.append(reply)
    picked = parse_choice(reply.text, n)
    if picked is None:
        note = retry_note or f"Answer with one number from 1 to {n}."
        again: Any = prompt + f" {note}\nChoice:" if isinstance(prompt, str) else [*prompt, {"role": "user", "content": note}]
        reply = llm.complete(again, stop=["\n"], grammar=choice_gbnf(n) if grammar else None)
        replies.append(reply)
        picked = parse_choice(reply.text, n)
    return picked, replies


# ---------------------------------------------------------------------------
# ordering the list against the question

_CUES: dict[str, tuple[str, ...]] = {
    "add_max": ("most", "highest", "largest", "biggest", "latest", "recent", "recently", "maximum", "greatest", "last", "strongest"),
    "add_min": ("least", "lowest", "smallest", "first", "earliest", "minimum", "fewest", "weakest"),
    "add_count": ("how many", "number of", "count"),
    "add_sum": ("total", "sum", "combined", "altogether"),
    "add_avg": ("average", "mean"),
    "add_compare": ("than",),
}
#: Comparison words and the operator they mean.
_OPERATOR_CUES: dict[str, tuple[str, ...]] = {
    ">": ("above", "over", "more", "greater", "higher", "larger", "bigger", "stronger", "exceeding", "after"),
    "<": ("below", "under", "less", "fewer", "lower", "smaller", "weaker", "before"),
}
_WORDS = re.compile(r"[a-z0-9]+")
#: A relation named by a bare property id (Wikidata's ``wdt:P17``): its words are not in its name.
_OPAQUE = re.compile(r"(?:^|[:/])P[0-9]+>?$")
#: MarkQA's steps that make their new variable the answer by themselves (execute() is not first after them alone).
_MEASURES = ("add_quantity", "add_start_time(", "add_end_time(", "add_time(")
#: The steps that say what a query answers (execute() ranks first after one of them).
_EXPLICIT = ("set_answer(", "add_count(", "add_sum(", "add_avg(", "add_compare(", "add_bind(", "add_rank(", "add_max(", "add_min(", "set_head(")
#: Cue words of an order in time: they point at a date, not at a number.
_TEMPORAL = ("latest", "recent", "recently", "last", "earliest", "first")
_STOPWORDS = frozenset(
    [
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "are",
        "was", "were", "be", "been", "did", "do", "does", "what", "which", "who", "whom", "whose", "when",
        "where", "how", "many", "much", "that", "this", "it", "its", "as",
    ]
)


_NUMBER_TEXT = re.compile(r"-?\d+(?:\.\d+)?")
_DATE_TEXT = re.compile(r"\d{4}(?:-\d\d(?:-\d\d)?)?")


def _preview_kind(preview: str) -> str | None:
    """``number`` or ``date`` when a fact's preview shows several values all of that kind (a bare year is a date), else None.

    Example:
        >>> _preview_kind("?number = 383997, 343829 +more"), _preview_kind("?year = 2006, 2010"), _preview_kind("?w = 280")
        ('number', 'date', None)
    """
    shown = preview.split(" = ", 1)[-1].replace(" +more", "")
    values = [v.strip() for v in shown.split(", ") if v.strip()]
    if len(values) < 2 and "+more" not in preview:
        return None
    if values and all(_DATE_TEXT.fullmatch(v) for v in values):
        return "date"
    if values and all(_NUMBER_TEXT.fullmatch(v) for v in values):
        return "number"
    return None


def _stems(text: str) -> set[str]:
    out = set()
    for w in _WORDS.findall(text.lower().replace("_", " ")):
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s"):
            w = w[:-1]
        out.add(w)
    return out


def _cues_in(question: str, cues: Sequence[str]) -> list[str]:
    q = f" {question.lower().rstrip('?')} "
    return [c for c in cues if f" {c} " in q]


def _fact_parts(action: str) -> tuple[str, str, str]:
    head, relation, tail = action[len("add_fact(") : -1].split(", ", 2)
    return head, relation, tail


def fact_relation(action: str) -> str:
    """The relation of a listed ``add_fact`` step.

    Example:
        >>> fact_relation("add_fact(m.03_r3, location.country.languages_spoken, ?languages_spoken)")
        'location.country.languages_spoken'
    """
    return _fact_parts(action)[1]


def model_order(choices: Sequence[NextStep], scores: dict[str, float]) -> list[NextStep]:
    """The listed facts reordered by their relation's score (highest first), in the places facts had.

    Other steps keep their places; facts with equal scores keep their order.

    Example:
        >>> steps = [NextStep("add_fact(m.1, a.b.currency_used, ?c)", "fact"), NextStep("execute()", "execute"),
        ...          NextStep("add_fact(m.1, a.b.languages_spoken, ?l)", "fact")]
        >>> [s.action[:12] for s in model_order(steps, {"a.b.currency_used": -3.0, "a.b.languages_spoken": 1.5})]
        ['add_fact(m.1', 'execute()', 'add_fact(m.1']
        >>> model_order(steps, {"a.b.currency_used": -3.0, "a.b.languages_spoken": 1.5})[0].action
        'add_fact(m.1, a.b.languages_spoken, ?l)'
    """
    facts = [c for c in choices if c.kind == "fact"]
    ranked = iter(sorted(facts, key=lambda c: -scores.get(fact_relation(c.action), float("-inf"))))
    return [next(ranked) if c.kind == "fact" else c for c in choices]


def rank_choices(
    question: str | None,
    choices: Sequence[NextStep],
    built: Sequence[str] = (),
    *,
    entities: Sequence[str] = (),
    kinds: dict[str, str] | None = None,
    mentions: Sequence[str] = (),
) -> list[NextStep]:
    """The steps ordered by how well they fit the question, best first (stable for ties).

    * a fact scores by the question's words its relation adds to the
      relations already built (a relation built before scores low, unless the
      question says "same"); a fact that hops out of an unnamed node (a CVT:
      never an answer), that ties in a linked entity not used yet, or that
      starts from such an entity (a comparison of two entities) scores higher;
    * a constraint or aggregate by the question's cue words (``most``/
      ``highest`` → ``add_max``, ``how many`` → ``add_count``, ``total`` →
      ``add_sum``, ``than`` → ``add_compare`` ...; a max/min cue that is only a
      word of a relation name, as in "highest winds", does not count when the
      question has another aggregate or a number); a filter or time span by
      the question's numbers and years (one time span per variable, the
      widest first), with the operator its words say (``above`` → ``>``);
      a type by the words it shares with the question and not with the relations;
    * ``set_answer`` prefers a variable named like a word of the question and not a number;
    * ``execute()`` comes first once it is listed (the query says what it answers).

    Constraints and aggregates that score below zero are left out. The LLM
    still picks: this order only decides what it reads first.

    Example:
        >>> steps = [NextStep("add_fact(m.1, location.country.capital, ?capital)", "fact"),
        ...          NextStep("add_fact(m.1, location.country.languages_spoken, ?languages_spoken)", "fact")]
        >>> rank_choices("what languages are spoken in jamaica?", steps)[0].action
        'add_fact(m.1, location.country.languages_spoken, ?languages_spoken)'
    """
    ranking = _Ranking.of(question, built, entities=entities, kinds=kinds or {}, mentions=mentions)
    ranking.previews = {c.action: c.preview for c in choices}
    scored = sorted(((ranking.score(index, step), index, step) for index, step in enumerate(choices)), key=lambda t: (-t[0], t[1]))
    # constraints and aggregates the question gives no cue for are left out (when something else is listed)
    kept = [step for value, _, step in scored if value >= 0 or step.kind not in ("constrain", "aggregate")]
    return kept or [step for _, _, step in scored]


@dataclass
class _Built:
    """What the query built so far says to :func:`rank_choices`."""

    used: set[str] = field(default_factory=set)  # stems of the relations and types in the query
    relations: set[str] = field(default_factory=set)
    constrained: set[str] = field(default_factory=set)  # variables with a time span, a numeric filter or an argmax/argmin
    literal: bool = False  # a time span or a numeric filter is in the query
    hopped: set[str] = field(default_factory=set)  # heads of facts that lead on to a variable
    ordered: bool = False  # an argmax or argmin is in the query
    implicit: bool = False  # only a quantity says what the query answers (its amount), no set_answer, aggregate ...
    quantities: set[tuple[str, str]] = field(default_factory=set)  # (entity, property) of the quantities built
    reached: dict[str, str] = field(default_factory=dict)  # variable -> the relation that bound it from a named head
    filters: set[str] = field(default_factory=set)  # the add_filter lines built

    @classmethod
    def of(cls, built: Sequence[str]) -> _Built:
        out = cls()
        out.implicit = any(line.startswith(_MEASURES) for line in built) and not any(line.startswith(_EXPLICIT) for line in built)
        for line in built:
            if line.startswith("add_fact("):
                head, relation, tail = _fact_parts(line)
                out.used |= _stems(relation)
                out.relations.add(relation)
                if tail.startswith("?"):
                    out.hopped.add(head)
                    if not head.startswith("?"):
                        out.reached.setdefault(tail, relation)
            elif line.startswith("add_time_constrain("):
                parts = line[len("add_time_constrain(") : -1].split(", ")
                out.constrained.add(parts[0])
                out.relations.update(parts[1:3])
                out.literal = True
            elif line.startswith("add_filter(") and re.search(r"\d", line.split(",", 2)[-1]):
                out.filters.add(line)
                out.literal = True
                out.constrained.add(line[len("add_filter(") :].split(",")[0])
            elif line.startswith(("add_max(", "add_min(")):
                out.constrained.add(line[8:-1])
                out.ordered = True
            elif line.startswith("add_quantity("):
                parts = line[len("add_quantity(") : -1].split(", ")
                out.quantities.add((parts[0].removeprefix("wd:"), parts[1]))
            elif line.startswith("add_type_constrain("):
                out.used |= _stems(line[len("add_type_constrain(") :].split(",")[0])
        return out


@dataclass
class _Ranking:
    """The question and the query, read once, and the score of each listed step (see :func:`rank_choices`)."""

    q: str
    question: str  # the question as asked, lower-cased (mentions kept)
    words: set[str]
    names: set[str]
    kinds: dict[str, str]
    built: _Built
    any_built: bool
    unused: list[str]  # linked entities not in the query yet
    numbers: list[str]
    aggregate_cue: bool
    operators: set[str]
    temporal: bool
    comparison: bool
    grounding: Grounding | None = None
    same: set[str] = field(default_factory=set)  # the words after "same" ("the same category as ...")
    asks_who: bool = False  # "who ...": the answer is an entity, not a number or a date
    when_clause: bool = False  # "... when X formed": a date of one entity constrains the other
    previews: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls, question: str | None, built: Sequence[str], *, entities: Sequence[str], kinds: dict[str, str], mentions: Sequence[str]
    ) -> _Ranking:
        q = (question or "").lower()
        for mention in mentions:  # a linked entity's name is not a hint about relations or values
            q = q.replace(mention.lower(), " ")
        in_query = " ".join(built)
        return cls(
            q=q,
            question=(question or "").lower(),
            words=(_stems(q) | _stems(" ".join(dimension_words(q)))) - _STOPWORDS,
            names={m.lower() for m in mentions},
            kinds=kinds,
            built=_Built.of(built),
            any_built=bool(built),
            unused=[e for e in entities if e not in in_query],
            numbers=re.findall(r"\d+(?:\.\d+)?", q) + question_literals(q)["numbers"],
            aggregate_cue=any(_cues_in(q, _CUES[n]) for n in ("add_count", "add_sum", "add_avg")),
            operators={op for op, cues in _OPERATOR_CUES.items() if _cues_in(q, cues)},
            temporal=bool(_cues_in(q, _TEMPORAL)) or bool(re.search(r"\b1\d{3}\b|\b20\d\d\b", q)),
            comparison=bool(_cues_in(q, _CUES["add_compare"])),
            grounding=ground(q),
            same=_stems(" ".join(re.findall(r"\bsame\s+(\w+)", q))),
            asks_who=bool(re.match(r"\s*(who|whom)\b", q)),
            when_clause=bool(re.search(r"\S\s+when\b", q)),
        )

    def score(self, index: int, step: NextStep) -> float:
        """How well one step fits (higher first); ``index`` is its place in the list (ties keep it)."""
        name = step.action.split("(", 1)[0]
        args = step.action[len(name) + 1 : -1]
        if step.kind == "execute":
            # execute() comes first once listed, except when only a quantity step made its amount the
            # answer: then after the steps that fit the question better (arithmetic, a comparison ...)
            return 2.0 if self.built.implicit else 10.0
        if step.kind == "fact":
            return self.fact(index, step.action)
        if step.kind == "quantity":
            return self.quantity(args)
        if step.kind == "arithmetic":
            return 1.0 + 1.5 * arithmetic_score(self.q, step.action)
        if name == "add_assignment":  # the linked entities taken together: a sum, an average, each of them
            return 2.5 if self.aggregate_cue or _cues_in(self.q, ("each", "together", "combined")) else 0.5
        if name == "add_type_constrain" and args.rsplit(", ", 1)[-1] not in self.kinds:
            return 2.5  # a linked entity that is a class: the question asks about its instances
        if name in ("add_max", "add_min"):
            return self.order(name, args)
        if name in _CUES:
            return self.cued(name, args)
        if name == "add_type_constrain":
            type_words = _stems(args.split(", ")[0].rsplit(".", 1)[-1])
            return 3.0 * len((type_words & self.words) - self.built.used) - 0.5
        if name == "add_filter":
            return self.filter(args)
        if name == "add_time_constrain":
            return self.time_span(args)
        if step.kind == "answer":
            return self.answer(args, step.preview)
        return 0.0

    def fact(self, index: int, action: str) -> float:
        """A fact: the question's words its relation adds, CVT hops, linked entities (see :func:`rank_choices`)."""
        head, relation, tail = _fact_parts(action)
        prop = _stems(relation.rsplit(".", 1)[-1])
        rest = _stems(relation) - prop
        fresh_entity = self.comparison and (head in self.unused or tail in self.unused)
        seen = set() if fresh_entity else self.built.used
        if _OPAQUE.search(relation):  # a Wikidata property id says nothing: the new variable is named after its label
            prop = _stems(" ".join(x.lstrip("?") for x in (head, tail) if x.startswith("?") and x not in self.kinds).replace("_", " "))
            index += 30 if relation.startswith("p:") else 0  # a full statement (an unnamed node) after the direct value
        value = 2.0 * len((prop & self.words) - seen) + 0.5 * len((rest & self.words) - seen) - 0.01 * index
        if relation in self.built.relations and "same" not in self.words and not fresh_entity:
            value -= 1.0
        if self.kinds.get(head) == "unnamed" and head not in self.built.hopped:  # the first hop out of a CVT node
            value += 2.5
        if self.temporal and prop & {"year", "date", "time"}:
            value += 1.5
        if tail in self.unused and head in self.kinds:  # ties a linked entity to an existing variable
            value += 1.5
        if head in self.unused and self.any_built:  # a second entity of the question: compared, a "when" clause, or not joined
            value += 0.5 if self.comparison or self.when_clause else -1.0
        value += self.same_join(head, relation, tail, prop) + self.pending_fit(tail, action)
        preview = self.previews.get(action, "")
        if tail.startswith("?") and preview.split(" = ", 1)[-1].lower() in self.names:  # leads back to a linked entity
            value -= 1.5
        return value

    def same_join(self, head: str, relation: str, tail: str, prop: set[str]) -> float:
        """"the same R as E": E's R first, then what else has that R (the join through R's value)."""
        if not self.same:
            return 0.0
        if tail.startswith("?") and self.built.reached.get(tail) == relation and head.startswith("?"):
            return 3.0
        if not head.startswith("?") and prop & self.same and relation not in self.built.relations:
            return 2.0
        return 0.0

    def pending(self) -> str | None:
        """The kind (``number``, ``date``) an order cue of the question wants and no variable holds yet, else None."""
        cues = _cues_in(self.q, _CUES["add_max"]) + _cues_in(self.q, _CUES["add_min"])
        if not cues or self.built.ordered:
            return None
        wanted = "date" if any(c in _TEMPORAL for c in cues) else "number"
        return None if wanted in self.kinds.values() else wanted

    def pending_fit(self, tail: str, action: str) -> float:
        """A fact whose new variable holds several values of the kind an order cue still waits for."""
        wanted = self.pending()
        return 1.5 if wanted and tail.startswith("?") and _preview_kind(self.previews.get(action, "")) == wanted else 0.0

    def order(self, name: str, args: str) -> float:
        """An argmax/argmin: by its cue words, one per query, a date for a cue of time."""
        cues = _cues_in(self.q, _CUES[name])
        if self.built.ordered:  # one argmax or argmin per query
            return -1.0
        if cues and (self.aggregate_cue or self.built.literal) and all(_stems(c) <= self.built.used for c in cues):
            return -1.0
        if not cues:
            return -1.0
        kind = self.kinds.get(args, "")
        wants_date = any(c in _TEMPORAL for c in cues)
        if kind == "date" and not wants_date:  # "the smallest population": a size, not a date
            return -1.0
        return 3.0 + (0.3 if (kind == "date") == wants_date else -0.5)

    def cued(self, name: str, args: str) -> float:
        """A count, sum, average or comparison: by its cue words (a comparison also by its operator)."""
        if name == "add_compare":
            # a comparison answers yes or no: a yes/no question ranks it high, one that asks for something else low
            op = args.split(", ")[1]
            yes_no = re.match(r"\s*(is|are|was|were|did|does|do|has|have|had|can|could|will|would)\b", self.question)
            if not (yes_no or _cues_in(self.q, _CUES[name])):
                return -1.0
            return (3.0 if yes_no else 0.5) + (0.2 if op in self.operators else 0.0)
        if not _cues_in(self.q, _CUES[name]):
            return -1.0
        return 3.0

    def quantity(self, args: str) -> float:
        """A quantity: the question's words in its tag (the entity and the property's label), its year asked or not."""
        parts = args.split(", ")
        tag = next((p.lstrip("?") for p in parts[1:] if p.startswith("?")), "")
        years = re.findall(r"(?<!\d)(\d{4})(?!\d)", tag)
        own = _stems(parts[0].lstrip("?").replace("_", " ")) if parts[0].startswith("?") else set()  # a variable's own name
        value = 1.0 + 1.0 * len((_stems(tag.replace("_", " ")) - own) & self.words)
        if years:
            value += 1.0 if years[-1] in self.numbers else -1.0
        if any(p in self.unused for p in parts[1:]):  # a qualifier's value is an entity of the question
            value += 1.5
        if (parts[0].removeprefix("wd:"), parts[1]) in self.built.quantities and not (years and years[-1] in self.numbers):
            value -= 1.0  # the same amount again, with no other year the question asks for
        if len(parts) > 3 and parts[3] == "true":  # the time asked for: a question about when
            asks_when = _cues_in(self.q, _TEMPORAL) or re.search(r"\b(when|which year|what year)\b", self.question)
            value += 0.5 if asks_when else -0.5
        return value

    def filter(self, args: str) -> float:
        """A filter: by the question's numbers, with the operator its words say."""
        _ob1, op, ob2 = args.split(", ", 2)
        fit = question_value_fit(self.grounding, op, ob2) if self.grounding is not None else 0
        if fit:  # a value of the question: its direction first, a range's second end right after its first
            closes = any(line.startswith(f"add_filter({_ob1}, >") for line in self.built.filters) and op.startswith("<")
            return 3.5 + 0.3 * (fit == 2) + (1.0 if closes else 0.0)
        literal = re.findall(r"\d+(?:\.\d+)?", ob2)
        if literal and literal[0] in self.numbers:
            return 3.5 + (0.2 if op in self.operators or (op == "=" and not self.operators) else 0.0)
        return 0.0 if not literal else -1.0

    def time_span(self, args: str) -> float:
        """A time span: one per variable, by the question's years (or "current"/"now")."""
        var = args.split(",")[0]
        if var in self.built.constrained:
            return -1.0
        dates = re.findall(r"(\d{4})-\d\d-\d\d", args)
        from_question = [d for d in dates if d in self.numbers]
        if from_question:
            return 2.5 + 0.1 * len(set(from_question))
        if self.when_clause and "date" in self.kinds.values():  # "when X formed": the date X's fact bound
            return 2.5
        return 2.5 if "current" in self.q or "now" in self.words else 0.5

    def answer(self, args: str, preview: str | None) -> float:
        """``set_answer``: a variable named like a word of the question, not a number or a constrained one."""
        var = args.lstrip("?").rstrip("0123456789")
        literal = self.kinds.get(args) in ("number", "date") if args in self.kinds else bool(re.search(r"= [-0-9]", preview or ""))
        constrained_var = 0.5 if args in self.built.constrained else 0.0  # a constrained variable is rarely the answer
        value = 1.0 + (1.0 if _stems(var) & self.words else 0.0) - (0.8 if literal else 0.0) - constrained_var
        if literal and self.asks_who:  # "who ...?" asks for an entity
            value -= 1.0
        return value - (0.7 if self.pending() else 0.0)  # an order cue still waits for its values
