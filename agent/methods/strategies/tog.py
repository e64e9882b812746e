"""The ``tog`` strategy: Think-on-Graph (Sun et al., ICLR 2024) on pyql's KB operations.

ToG searches the KB from the question's topic entities with a beam of
``width`` paths, at most ``depth`` hops deep. At each depth:

1. **Relation exploration and pruning.** The relations of every entity at
   the end of a kept path are read (:meth:`pyql.kb.base.KB.entity_relations`,
   one bounded query for them all); the relation the path came by is left
   out (going back), and so are relations that only name or type an entity
   (``remove_unnecessary_rel``). They are pruned to ``width`` per entity,
   each with a score: by the LLM (``prune_tools=llm``, ToG's prompt), by BM25
   (``bm25``) or by the bundled model's PMI of the relation's words with the
   question (``model``; ``auto``, the default, is ``model`` with the bundled
   model and ``llm`` with any other, :func:`resolve_prune_tools`).
2. **Entity exploration and pruning.** For each kept relation, the entity's
   one-hop neighbours over it are read with a query made by the builder
   (``Query().add_fact(entity, relation, ?x)``, run by
   :meth:`pyql.kb.base.KB.execute` with its labels, at most
   :data:`NEIGHBOURS_READ` rows: a hub costs what any entity does, and says so);
   from 20 neighbours on, ToG keeps a random sample of ``num_retain_entity``
   (seeded, so reproducible). Unnamed nodes (CVTs) count only when nothing
   named was found. The neighbours are scored (the LLM, BM25 or the model,
   times the relation's score) and the ``width`` best of the whole depth are
   kept; the others are pruned, each traced with why.
3. **Reasoning.** The LLM is asked whether the kept paths' triples are enough
   to answer (ToG's "is this enough?"); if they are, its answer is taken,
   else the search goes one hop deeper from the kept entities.
4. **Answer generation.** At the depth limit, or when nothing new was found,
   the LLM answers from the collected triples. The answer's text is mapped
   back to the entities the search met (ids with labels, as every strategy
   answers); the path to the first one is the result's PyQL chain
   (``add_fact`` steps, its end set as the answer).

Every step is traced as a tree (:class:`~agent.methods.episode.StepTrace`):
a relation exploration as ``get_relation(E)``, an entity exploration as its
``add_fact`` action, each scored neighbour as the triple it adds (``add_fact``
with both ends), pruned ones with the reason, then the reasoning and answer
calls. Each LLM call and KB query is counted in the step it served.

How the LLM is asked depends on the action mode: in ``--action-mode
choose`` (the default for the bundled 270M base model, which cannot write
ToG's scored lists) every decision is a numbered choice, constrained by a
GBNF grammar on a local server (a relation, an entity, then the answer or
"look one step further"); in any other mode, ToG's own prompt shapes
(scores in braces, ``{Yes}``/``{No}``). docs/agent.md ("tog") says what
differs from the paper. Exploration calls sample at
``temperature_exploration`` with a seed made from what the call is about, so
a run replays from a recording and a live server samples the same reply again.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> llm = ScriptedLLM([
    ...     "1. {meteorology.tropical_cyclone.category (Score: 0.8)}: its category.\\n"
    ...     "2. {meteorology.tropical_cyclone.formed (Score: 0.2)}: when it formed.",
    ...     "{Yes}. Rachel was a tropical storm. So the answer is {Tropical storm (SSHS)}.",
    ... ])
    >>> result = solve_tog(llm, env, "what category is tropical storm rachel?", AgentConfig())
    >>> result.answers, result.llm_calls, result.chain
    ([{'value': 'm.05f4r3k', 'label': 'Tropical storm (SSHS)'}], 2, ['add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)', 'set_answer(?category)'])
    >>> [(t.action, t.parent, t.pruned) for t in result.steps][:4]
    [('get_relation(m.0crbvqz)', None, None), ('add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)', 1, None), ('add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?formed)', 1, None), ('add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, m.05f4r3k)', 2, None)]
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.errors import ContextOverflow
from agent.faults import infra_failure, status_of
from agent.llm.likelihood import RelationPMI, local_scorer, relation_words
from agent.llm.local import is_bundled_model
from agent.llm.replies import LLM, LLMReply, Sampling
from agent.methods.choose import choice_gbnf, parse_choice
from agent.methods.context_budget import ask_within, budget_for
from agent.methods.episode import AgentResult, Episode, StepTrace, prompt_hash, prompt_templates
from agent.methods.prompting import full_prompt
from agent.methods.ranking import BM25Ranker
from agent.methods.sides import side_for
from agent.methods.strategies.registry import SEED, Option, entry, strategy
from pyql.builder.query import Query
from pyql.builder.terms import IRI, Literal
from pyql.echo import one_line, plural
from pyql.errors import EngineError, PyQLError
from pyql.kb.observation import Relations, Value

__all__ = ["ToGSettings", "ThinkOnGraph", "solve_tog", "NEIGHBOURS_READ", "SAMPLE_FROM", "RELATIONS_SHOWN"]

#: One-hop neighbours an entity exploration reads at most (its query's LIMIT): a hub costs no more than this.
NEIGHBOURS_READ = 100
#: From this many neighbours on, ToG keeps a random sample of ``num_retain_entity`` of them.
SAMPLE_FROM = 20
#: Relations a written relation-pruning prompt lists at most (the question's best by BM25; fewer when the context is short).
RELATIONS_SHOWN = 60
#: Stop sequences of the written prompts (a completion model would go on with another example).
_STOP = ("\nQ:",)
#: How an unnamed node (a CVT) is written in a triplet.
UNNAMED = "(unnamed node)"
#: Relations that only name, type or alias an entity (``remove_unnecessary_rel``; the profile hides Freebase's ``type.``/``common.``).
_UNNECESSARY = re.compile(r"(?:^|[.:/#])(?:name|label|alias|altLabel|prefLabel|description|sameAs|type)>?$", re.I)
#: A Wikidata property id at the end of a relation name (``wdt:P17``, ``p:P1082``).
_PID = re.compile(r"(?:^|[:/])(P[0-9]+)>?$")
#: Property labels that name an identifier or a link, not a fact (ToG's Wikidata run drops them too).
_IDENTIFIER_LABEL = re.compile(r"(?: ID| code|website|URL|image)$")
#: ``{relation (Score: 0.4)}`` in a written relation-pruning reply (a stray second ``)`` forgiven, as in ToG's own example).
_PICKED = re.compile(r"\{\s*([^{}]+?)\s*\(\s*Score:\s*([0-9]*\.?[0-9]+)\s*\)+\s*\}", re.I)
_BRACES = re.compile(r"\{([^{}]*)\}")

PRUNE_TOOLS = ("auto", "llm", "bm25", "model")


@dataclass(frozen=True)
class ToGSettings:
    """ToG's settings, its options (IDEA-FinAI/ToG's defaults; ``max_llm_calls`` is pyql's budget).

    Attributes:
        width: paths kept at each depth, and relations kept per entity.
        depth: hops at most.
        num_retain_entity: neighbours sampled when an entity has 20 or more over one relation.
        prune_tools: what prunes relations and entities: ``llm``, ``bm25`` or ``model`` (the bundled model's PMI).
        temperature_exploration: the LLM's temperature when it prunes (each call seeded).
        temperature_reasoning: the LLM's temperature when it reasons and answers.
        remove_unnecessary_rel: leave out relations that only name, type or identify an entity.
        max_llm_calls: LLM calls at most; then the search answers with what it has (``stopped: budget``).
        seed: mixed into every call's seed and the neighbour sample's (0: the seeds made from the calls alone);
            ``vote`` gives each sample its own, so that ToG's samples differ.
    """

    width: int = 3
    depth: int = 3
    num_retain_entity: int = 5
    prune_tools: str = "llm"
    temperature_exploration: float = 0.4
    temperature_reasoning: float = 0.0
    remove_unnecessary_rel: bool = True
    max_llm_calls: int = 60
    seed: int = 0


@dataclass(frozen=True)
class Hop:
    """One hop of a path: from ``source`` over ``relation`` to ``target`` (``forward``: as the KB states it)."""

    source: Value
    relation: str
    target: Value
    forward: bool

    def triplet(self) -> str:
        """The hop as a triplet ``subject, relation, object``, as the KB states it (ToG writes it in the order it was walked)."""
        subject, obj = (self.source, self.target) if self.forward else (self.target, self.source)
        return f"{_name(subject)}, {self.relation}, {_name(obj)}"


@dataclass
class Node:
    """An entity (or value) the search reached: the path to it, its score, the trace step that kept it."""

    value: Value
    path: tuple[Hop, ...] = ()
    score: float = 1.0
    trace: int | None = None


@dataclass(frozen=True)
class Relation:
    """A relation kept for an entity, its direction and its score."""

    name: str
    forward: bool
    score: float


@dataclass
class _Candidate:
    """A neighbour found by an entity exploration, scored, with what it was found from."""

    value: Value
    score: float
    node: Node
    relation: Relation
    parent: int


@dataclass
class _Decision:
    """What one pruning or reasoning decision produced: its LLM replies and prompt, and what it says of itself."""

    prompt: str | None = None
    replies: list[LLMReply] = field(default_factory=list)
    note: str = ""
    without_call: str | None = None
    scoring: tuple[int, float] = (0, 0.0)  # the model's scoring requests and their seconds (``prune_tools=model``)


class _OutOfBudget(Exception):
    """The next LLM call would pass ``max_llm_calls`` (the call that was to be made)."""


def _name(value: Value) -> str:
    """How a value is written in a triplet and a list: its label, a literal's text, or :data:`UNNAMED`."""
    if isinstance(value.term, Literal):
        return value.term.lexical
    if value.unnamed:
        return UNNAMED
    return value.label or value.short


def _answerable(value: Value) -> bool:
    """Whether a value can be an answer (a named entity or a literal; not an unnamed node)."""
    return isinstance(value.term, Literal) or (not value.unnamed and bool(value.label))


def _normal(text: str) -> str:
    """A text as answers are matched: case, spacing, quotes, end punctuation and thousands commas left out.

    Example:
        >>> _normal(' "Tropical Storm (SSHS)". '), _normal("68,700,000,000")
        ('tropical storm (sshs)', '68700000000')
    """
    text = " ".join(text.split()).strip(" \"'.;:!?").casefold()
    return text.replace(",", "") if re.fullmatch(r"[0-9,]+(?:\.[0-9]+)?", text) else text


def _same_value(text: str, value: Value) -> bool:
    """Whether an answer's text names ``value``: its label or literal, or the same number."""
    said, own = _normal(text), _normal(_name(value))
    if said == own or said == _normal(value.short):
        return True
    try:
        return math.isclose(float(said), float(own))
    except ValueError:
        return False


def _seed(*parts: object) -> int:
    """A sampling seed made from what a call is about (31 bits, the same for the same call).

    Example:
        >>> _seed("q?", "relations", 1, "m.0x") == _seed("q?", "relations", 1, "m.0x") != _seed("q?", "relations", 2, "m.0x")
        True
    """
    return int(hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:8], 16) & 0x7FFFFFFF


def _variable(relation: str, taken: set[str], subject: bool = False) -> str:
    """A fresh variable named after a relation's last word, or its type's for its subject (``?x`` for a bare property id).

    Example:
        >>> _variable("meteorology.tropical_cyclone.category", {"?category"}), _variable("wdt:P17", set())
        ('?category_2', '?x')
        >>> _variable("meteorology.tropical_cyclone_season.tropical_cyclones", set(), subject=True)
        '?tropical_cyclone_season'
    """
    parts = re.split(r"[.:/#]", relation.rstrip(">"))
    last = parts[-2] if subject and len(parts) > 2 else parts[-1]
    base = "x" if _PID.search(relation) else (re.sub(r"[^A-Za-z0-9_]", "_", last).strip("_").lower() or "x")
    name, n = f"?{base}", 1
    while name in taken:
        n += 1
        name = f"?{base}_{n}"
    taken.add(name)
    return name


def _chain(node: Node, answer: Value, profile: Any) -> Query | None:
    """The path to ``answer`` (on ``node``'s path) as a PyQL query: one ``add_fact`` per hop, each entity it reaches a
    variable, the answer's the answer; None when the answer is where the path starts (a topic entity).

    Example:
        >>> from pyql.kb import KB
        >>> kb = KB.open("demo")
        >>> rachel, ts = kb.value(kb.term("m.0crbvqz"), "Rachel"), kb.value(kb.term("m.05f4r3k"), "TS")
        >>> hop = Hop(rachel, "meteorology.tropical_cyclone.category", ts, True)
        >>> _chain(Node(ts, (hop,)), ts, kb.profile).actions()
        ['add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)', 'set_answer(?category)']
        >>> _chain(Node(ts, (hop,)), rachel, kb.profile) is None
        True
    """
    hops = list(node.path)
    while hops and hops[-1].target.term != answer.term:
        hops.pop()
    if not hops:
        return None
    query, taken = Query(profile), set()
    current: Any = hops[0].source.term
    for hop in hops:
        target = _variable(hop.relation, taken, subject=not hop.forward)
        query = query.add_fact(current, hop.relation, target) if hop.forward else query.add_fact(target, hop.relation, current)
        current = target
    return query.set_answer(current)


def _fact(hop: Hop, profile: Any) -> str:
    """The action line of a hop with both ends (the triple a scored neighbour adds)."""
    source, target = hop.source.term, hop.target.term
    query = Query(profile).add_fact(source, hop.relation, target) if hop.forward else Query(profile).add_fact(target, hop.relation, source)
    return query.actions()[-1]


def _softmax(scores: Sequence[float]) -> list[float]:
    """Scores as a distribution (the model's PMIs are log-ratios; ToG's scores add up to 1).

    Example:
        >>> [round(s, 3) for s in _softmax([0.0, math.log(3)])]
        [0.25, 0.75]
    """
    if not scores:
        return []
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    return [w / sum(weights) for w in weights]


def _by_place(n: int) -> list[float]:
    """Scores of a numbered choice's picks: each half the one before, adding up to 1.

    Example:
        >>> [round(s, 3) for s in _by_place(3)]
        [0.571, 0.286, 0.143]
    """
    weights = [0.5**i for i in range(n)]
    return [w / sum(weights) for w in weights]


def _entity_scores(reply: str, n: int) -> tuple[list[float], str]:
    """The scores of a written entity-scoring reply (its first line, else ToG's decimals anywhere), or equal shares.

    Example:
        >>> _entity_scores(" 0.0, 1.0, 0.0\\nSo undercover.", 3)
        ([0.0, 1.0, 0.0], '')
        >>> _entity_scores("no idea", 2)
        ([0.5, 0.5], 'the reply has no score for each entity: all equal, as ToG does')
    """
    numbers = re.findall(r"[0-9]*\.?[0-9]+", reply.strip().split("\n", 1)[0])
    if len(numbers) != n:
        numbers = re.findall(r"[0-9]+\.[0-9]+", reply)
    if len(numbers) != n:
        return [1.0 / n] * n, "the reply has no score for each entity: all equal, as ToG does"
    return [float(x) for x in numbers], ""


class ThinkOnGraph:
    """One question answered by Think-on-Graph (see the module docstring).

    Args:
        llm: any :class:`agent.llm.replies.LLM`.
        env: a KB environment (the ``sparql`` side): its KB and linked entities are read; it takes no step.
        question: the question.
        config: the agent's settings: its action mode (``choose``: numbered choices), prompts traced in full or not.
        settings: ToG's options.
    """

    def __init__(self, llm: LLM, env: Any, question: str, config: Any, settings: ToGSettings) -> None:
        self.llm, self.env, self.kb, self.question, self.config = llm, env, env.kb, question, config
        self.settings = settings
        self.episode = Episode(head="", side=side_for(env))
        self.choice = getattr(config, "action_mode", "text") == "choose"
        self.grammar = bool(getattr(getattr(llm, "config", None), "local", True))
        self.templates = prompt_templates()
        self.ranker = BM25Ranker()
        self.labels: dict[str, str] = {}
        self.beam: list[Node] = []
        self.seen: list[Value] = []
        self.ended = ""
        self.budget: dict[str, Any] | None = None
        self.unmapped: list[str] = []
        self.kb_mark = (self.kb.stats.queries, self.kb.stats.seconds)

    # -- the search -----------------------------------------------------------
    def run(self) -> AgentResult:
        """Search, reason and answer; a service failure ends the question as failed to run (see :func:`solve_tog`)."""
        started = time.perf_counter()
        answers: list[tuple[Value | None, str, Node | None]] = []
        try:
            answers = self._search()
        except _OutOfBudget as out:
            answers = self._out_of_budget(str(out))
        except ContextOverflow as exc:
            self.episode.overflowed(exc)
        except PyQLError as exc:
            failure = infra_failure(exc, self.kb)
            self.episode.error = str(failure) if failure is not None else f"{exc.kind}: {one_line(str(exc))}"
        return self._result(answers if self.episode.error is None else [], started)

    def _search(self) -> list[tuple[Value | None, str, Node | None]]:
        """The depth loop: explore, prune, reason; answer at the depth limit or when nothing new is found."""
        frontier = self._topics()
        self.beam = list(frontier)
        for depth in range(1, self.settings.depth + 1):
            candidates = self._explore(frontier, depth)
            kept = self._prune_entities(candidates, depth) if candidates else []
            if not kept:
                self.ended = f"no new knowledge at depth {depth}"
                return self._answer(depth)
            self.beam = kept
            enough, answers = self._reason(depth, last=depth == self.settings.depth)
            if enough:
                self.ended = self.ended or f"the reasoning step found the triples enough at depth {depth}"
                return answers
            frontier = [n for n in kept if isinstance(n.value.term, IRI)]
            if not frontier:
                self.ended = f"no entity to explore after depth {depth}"
                return self._answer(depth)
        self.ended = f"the depth limit ({self.settings.depth})"
        return self._answer(self.settings.depth)

    def _topics(self) -> list[Node]:
        """The question's linked entities, labelled by the KB (one label query), as the first frontier."""
        mentions = {entity: mention for mention, entity in self.env.memory.entities.items()}
        terms = [self.kb.term(entity, "entity") for entity in mentions]
        labels = self.kb.labels(terms) if terms else {}
        return [
            Node(self.kb.value(term, labels.get(term) or mention), ())
            for term, mention in zip(terms, mentions.values())
        ]

    def _explore(self, frontier: list[Node], depth: int) -> list[_Candidate]:
        """Relation exploration and pruning of every frontier entity, then entity exploration of each kept relation."""
        looked = self.kb.entity_relations([n.value.term for n in frontier]) if frontier else {}
        candidates: list[_Candidate] = []
        for index, node in enumerate(frontier):
            relations = looked.get(node.value.term, Relations((), ()))
            shared = f" (one query for the relations of all {len(frontier)} entities)" if len(frontier) > 1 and index == 0 else ""
            kept, position = self._prune_relations(node, relations, depth, shared)
            for relation in kept:
                candidates += self._explore_entities(node, relation, position, depth)
        return candidates

    # -- relations --------------------------------------------------------------
    def _relation_candidates(self, node: Node, relations: Relations) -> list[tuple[str, bool]]:
        """The relations worth pruning: each name once (forward first, as ToG), none back along the path, no names or types."""
        back = (node.path[-1].relation, not node.path[-1].forward) if node.path else None
        pairs = [(r, True) for r in relations.forward] + [(r, False) for r in relations.backward if r not in relations.forward]
        pairs = [p for p in pairs if p != back]
        self._label_properties([r for r, _ in pairs])
        if self.settings.remove_unnecessary_rel:
            pairs = [(r, f) for r, f in pairs if not _UNNECESSARY.search(r) and not _IDENTIFIER_LABEL.search(self._label_of(r))]
        return pairs

    def _label_properties(self, relations: Sequence[str]) -> None:
        """Labels of the Wikidata properties among ``relations`` (one query for those not labelled yet); elsewhere nothing."""
        if not getattr(self.kb.profile, "statement_model", False):
            return
        missing = sorted({m.group(1) for r in relations if (m := _PID.search(r)) and m.group(1) not in self.labels})
        if missing:
            for term, label in self.kb.labels(missing).items():
                self.labels[str(term).rstrip(">").rsplit("/", 1)[-1]] = label or ""
            for pid in missing:
                self.labels.setdefault(pid, "")

    def _label_of(self, relation: str) -> str:
        """A Wikidata property's label ("" elsewhere)."""
        match = _PID.search(relation)
        return self.labels.get(match.group(1), "") if match else ""

    def _shown(self, relation: str) -> str:
        """A relation as a prompt lists it: a bare property id with its label (``wdt:P17 [country]``)."""
        label = self._label_of(relation)
        return f"{relation} [{label}]" if label else relation

    def _reached(self, relation: str, forward: bool) -> str:
        """The words of what a hop reaches, as the model scores them: a property's (its label on Wikidata), or for a
        backward hop its subject's type (``meteorology.tropical_cyclone_category.tropical_cyclones`` → a category)."""
        parts = relation.split(".")
        if not forward and len(parts) > 2 and not self._label_of(relation):
            return parts[-2].replace("_", " ")
        return self._label_of(relation) or relation_words(relation)

    def _ranked(self, pairs: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
        """The relations in BM25's order against the question (a property read with its label)."""
        keyed = {f"{self._label_of(r)} {r}".strip(): (r, f) for r, f in pairs}
        return [keyed[k] for k in self.ranker.rank(self.question, list(keyed))]

    def _prune_relations(self, node: Node, relations: Relations, depth: int, shared: str) -> tuple[list[Relation], int]:
        """Keep ``width`` relations of ``node`` with their scores; the step is traced (``get_relation``), its position returned."""
        pairs = self._relation_candidates(node, relations)
        decision = _Decision()
        if not pairs:
            kept: list[Relation] = []
        elif len(pairs) == 1:
            kept, decision.without_call = [Relation(pairs[0][0], pairs[0][1], 1.0)], "the only relation"
        elif self.settings.prune_tools != "llm":
            kept = self._relations_by_scores(pairs, decision)
        elif self.choice:
            kept = self._relations_by_choice(node, pairs, depth, decision)
        else:
            kept = self._relations_by_llm(node, pairs, depth, decision)
        cut = " (the list may be incomplete: the entity has more edges than one look reads)" if relations.truncated else ""
        said = ", ".join(f"{r.name}{'' if r.forward else ' (backward)'} ({r.score:.3g})" for r in kept) or "none"
        observation = f"{plural(len(pairs), 'relation')} to choose from{cut}{shared}; kept {said}"
        if decision.note:
            observation += f"; {decision.note}"
        return kept, self._trace(f"get_relation({node.value.short})", observation, parent=node.trace, decision=decision)

    def _relations_by_scores(self, pairs: list[tuple[str, bool]], decision: _Decision) -> list[Relation]:
        """``width`` relations by BM25 (ToG's ``bm25``: raw scores, all zero → equal) or by the model's PMI (a softmax)."""
        names = [r for r, _ in pairs]
        if self.settings.prune_tools == "bm25":
            scores = self.ranker.scores(self.question, [f"{self._label_of(r)} {r}".strip() for r in names])
        else:
            pmi = self._pmi(names, lambda r: self._reached(r, dict(pairs)[r]), decision)
            scores = _softmax([pmi[r] for r in names])
        order = sorted(range(len(pairs)), key=lambda i: -scores[i])[: self.settings.width]
        top = [scores[i] for i in order]
        if not any(top):
            top = [1.0 / len(order)] * len(order)
        return [Relation(pairs[i][0], pairs[i][1], s) for i, s in zip(order, top)]

    def _relations_by_llm(self, node: Node, pairs: list[tuple[str, bool]], depth: int, decision: _Decision) -> list[Relation]:
        """ToG's relation pruning: the LLM names ``width`` relations with scores (``{relation (Score: x)}``)."""
        ranked = self._ranked(pairs)[:RELATIONS_SHOWN]
        template = self.templates.get_template("tog_relations.j2")

        def render(k: int) -> str:
            shown = sorted(self._shown(r) for r, _ in ranked[: max(k, 1)])
            return template.render(width=self.settings.width, question=self.question, entity=_name(node.value), relations=shown).rstrip()

        prompt, reply = self._ask("relations", lambda: budget_for(self.llm).fit_items(render, len(ranked)),
                                  self.settings.temperature_exploration, (depth, node.value.short))
        decision.prompt, decision.replies = prompt, [reply]
        direction = dict(pairs)
        picked: dict[str, float] = {}
        unknown = []
        for text, score in _PICKED.findall(reply.text):
            name = re.sub(r"\s*\[[^\]]*\]$", "", text).strip()
            match = name if name in direction else next((r for r in direction if r.lower() == name.lower()), None)
            if match is None:
                unknown.append(name)
            else:
                picked.setdefault(match, float(score))
        if unknown:
            decision.note = f"not relations of the entity, left out: {', '.join(unknown[:5])}"
        elif not picked:
            decision.note = "the reply named no relation in ToG's form {relation (Score: x)}"
        best = sorted(picked.items(), key=lambda kv: -kv[1])[: self.settings.width]
        return [Relation(name, direction[name], score) for name, score in best]

    def _relations_by_choice(self, node: Node, pairs: list[tuple[str, bool]], depth: int, decision: _Decision) -> list[Relation]:
        """The LLM picks the most useful relation by number; the next ones of the list (BM25's order) fill the ``width``."""
        ranked = self._ranked(pairs)[: max(getattr(self.config, "max_choices", 6), self.settings.width)]
        prompt = self.templates.get_template("tog_relations_choice.j2").render(
            question=self.question, entity=_name(node.value), relations=[self._shown(r) for r, _ in ranked]
        ).rstrip()
        picked = self._choose("relations", prompt, len(ranked), self.settings.temperature_exploration, (depth, node.value.short), decision)
        order = ([picked - 1] if picked else []) + [i for i in range(len(ranked)) if i != (picked or 0) - 1]
        chosen = order[: self.settings.width]
        return [Relation(ranked[i][0], ranked[i][1], s) for i, s in zip(chosen, _by_place(len(chosen)))]

    # -- entities ---------------------------------------------------------------
    def _explore_entities(self, node: Node, relation: Relation, parent: int, depth: int) -> list[_Candidate]:
        """Read the neighbours over ``relation`` (bounded), sample and score them; the step is traced (its ``add_fact``)."""
        target = _variable(relation.name, set(), subject=not relation.forward)
        query = Query(self.kb.profile)
        query = query.add_fact(node.value.term, relation.name, target) if relation.forward else query.add_fact(target, relation.name, node.value.term)
        try:
            found = self.kb.execute(query, limit=NEIGHBOURS_READ)
        except EngineError as exc:
            if infra_failure(exc, self.kb) is not None:
                raise
            said = one_line(str(exc))
            self._trace(query.actions()[0], f"engine error: {said}", parent=parent, ok=False, error="engine_error",
                        pruned=f"engine error: {said}")
            return []
        on_path = {node.value.term, *(hop.source.term for hop in node.path)}
        every = list(dict.fromkeys(found.answers()))
        values = [v for v in every if v.term not in on_path]  # no way back along the path
        read = f"more than {NEIGHBOURS_READ} values (the first {NEIGHBOURS_READ} read)" if found.truncated else plural(len(every), "value")
        back = len(every) - len(values)
        notes_back = [f"{back} on the path already, left out"] if back else []
        values, notes = self._sampled(values, node, relation)
        decision = _Decision()
        scores = self._score_entities(node, relation, values, depth, decision) if values else []
        self.seen += values
        shown = ", ".join(f"{v.display()} ({s:.3g})" for v, s in zip(values, scores))
        observation = "; ".join([read, *notes_back, *notes, *([decision.note] if decision.note else [])]) + (f": {shown}" if shown else "")
        empty = "no neighbour over this relation" if not every else "no neighbour off the path over this relation"
        position = self._trace(query.actions()[0], observation, parent=parent, decision=decision, pruned=None if values else empty)
        return [_Candidate(v, s, node, relation, position) for v, s in zip(values, scores)]

    def _sampled(self, values: list[Value], node: Node, relation: Relation) -> tuple[list[Value], list[str]]:
        """ToG's sample (20 or more neighbours: ``num_retain_entity`` at random, seeded) and its unnamed-node rule."""
        notes = []
        if len(values) >= SAMPLE_FROM:
            rng = random.Random(self._seed("sample", node.value.short, relation.name))
            kept = sorted(rng.sample(range(len(values)), min(self.settings.num_retain_entity, len(values))))
            notes.append(f"{len(kept)} sampled at random, as ToG does from {SAMPLE_FROM} on")
            values = [values[i] for i in kept]
        named = [v for v in values if not v.unnamed]
        if named and len(named) < len(values):
            notes.append(f"{len(values) - len(named)} unnamed left out (named ones were found)")
            values = named
        return values, notes

    def _score_entities(self, node: Node, relation: Relation, values: list[Value], depth: int, decision: _Decision) -> list[float]:
        """Each neighbour's score times the relation's: one alone, or all unnamed, share it; else the prune tool scores them."""
        if len(values) == 1 or all(v.unnamed for v in values):
            decision.without_call = "the only neighbour" if len(values) == 1 else "unnamed nodes only: an equal share each"
            return [relation.score / len(values)] * len(values)
        names = [_name(v) for v in values]
        if self.settings.prune_tools == "bm25":
            shares = self.ranker.scores(self.question, names)
            shares = shares if any(shares) else [1.0 / len(values)] * len(values)
        elif self.settings.prune_tools == "model":
            pmi = self._pmi(names, lambda text: text, decision)
            shares = _softmax([pmi[n] for n in names])
        elif self.choice:
            shares = self._entities_by_choice(node, relation, names, depth, decision)
        else:
            shares = self._entities_by_llm(node, relation, names, depth, decision)
        return [relation.score * s for s in shares]

    def _entities_by_llm(self, node: Node, relation: Relation, names: list[str], depth: int, decision: _Decision) -> list[float]:
        """ToG's entity scoring: the LLM scores the neighbours (``Score: 0.0, 1.0, ...``), in the order of their names."""
        order = sorted(range(len(names)), key=lambda i: names[i])  # ToG sorts the candidates by name
        prompt = self.templates.get_template("tog_entities.j2").render(
            question=self.question, relation=self._shown(relation.name), entities=[names[i] for i in order]
        ).rstrip()
        text, reply = self._ask("entities", prompt, self.settings.temperature_exploration, (depth, node.value.short, relation.name))
        decision.prompt, decision.replies = text, [reply]
        scores, decision.note = _entity_scores(reply.text, len(names))
        out = [0.0] * len(names)
        for place, i in enumerate(order):
            out[i] = scores[place]
        return out

    def _entities_by_choice(self, node: Node, relation: Relation, names: list[str], depth: int, decision: _Decision) -> list[float]:
        """The LLM picks the most useful neighbour by number: it has the relation's score, the others none (ToG's 1.0 and 0.0)."""
        fit = self.ranker.scores(self.question, names)
        ordered = sorted(range(len(names)), key=lambda i: -fit[i])
        prompt = self.templates.get_template("tog_entities_choice.j2").render(
            question=self.question, relation=self._shown(relation.name), entities=[names[i] for i in ordered]
        ).rstrip()
        picked = self._choose("entities", prompt, len(names), self.settings.temperature_exploration,
                              (depth, node.value.short, relation.name), decision)
        out = [0.0] * len(names)
        out[ordered[(picked or 1) - 1]] = 1.0
        return out

    def _prune_entities(self, candidates: list[_Candidate], depth: int) -> list[Node]:
        """The ``width`` best neighbours of the depth (score above 0, each entity once) go on; each neighbour is traced,
        the others pruned with why."""
        order = sorted(range(len(candidates)), key=lambda i: -candidates[i].score)
        best: dict[Any, int] = {}
        for i in order:
            best.setdefault(candidates[i].value.term, i)
        kept = [i for i in order if candidates[i].score > 0 and best[candidates[i].value.term] == i][: self.settings.width]
        floor = candidates[kept[-1]].score if kept else 0.0
        nodes = []
        for i, c in enumerate(candidates):
            hop = Hop(c.node.value, c.relation.name, c.value, c.relation.forward)
            if i in kept:
                reason = None
            elif c.score <= 0:
                reason = "scored 0 by the entity pruning"
            elif best[c.value.term] != i:
                reason = f"the same entity as a better-scored path (score {candidates[best[c.value.term]].score:.3g})"
            else:
                reason = f"outside the beam (width {self.settings.width}: score {c.score:.3g}, the last kept {floor:.3g})"
            position = self._trace(_fact(hop, self.kb.profile), f"{c.value.display()}: score {c.score:.3g}", parent=c.parent, pruned=reason)
            if i in kept:
                nodes.append((kept.index(i), Node(c.value, (*c.node.path, hop), c.score, position)))
        return [n for _, n in sorted(nodes, key=lambda t: t[0])]

    # -- reasoning and answers --------------------------------------------------
    def _triplets(self) -> list[str]:
        """The triplets of the kept paths, each once, path by path (the paper's reasoning paths)."""
        return list(dict.fromkeys(hop.triplet() for node in self.beam for hop in node.path))

    def _options(self, topics: bool = True) -> list[tuple[Value, Node]]:
        """What can answer: the named entities and values on the kept paths, each once: the paths' ends, the entities
        between, then the topic entities (with ``topics=False`` only when nothing else is named: a question seldom
        asks for the entity it names, and a numbered list that offers it lets a model that cannot judge pick it)."""
        ends = [(node.value, node) for node in self.beam]
        between = [(hop.target, node) for node in self.beam for hop in node.path]
        starts = [(node.path[0].source, node) for node in self.beam if node.path]  # a topic entity answers seldom: last
        named = [(v, n) for v, n in (*ends, *between) if _answerable(v)]
        if topics:
            listed = [*named, *starts]
        else:
            own = self._topic_terms()
            listed = [(v, n) for v, n in named if v.term not in own] or named or starts
        out: dict[Any, tuple[Value, Node]] = {}
        for value, node in listed:
            if _answerable(value):
                out.setdefault(value.term, (value, node))
        return list(out.values())

    def _topic_terms(self) -> set[Any]:
        """The topic entities the kept paths start from."""
        return {node.path[0].source.term for node in self.beam if node.path}

    def _reason(self, depth: int, last: bool) -> tuple[bool, list[tuple[Value | None, str, Node | None]]]:
        """ToG's "is this enough?": written, ``{Yes}``/``{No}`` and the answer; as a choice, an answer or "look further"."""
        if self.choice:
            return self._reason_by_choice(depth, last)
        prompt = self.templates.get_template("tog_reasoning.j2").render(question=self.question, triplets=self._triplets()).rstrip()
        text, reply = self._ask("reasoning", prompt, self.settings.temperature_reasoning, (depth,))
        braces = [b.strip() for b in _BRACES.findall(reply.text)]
        enough = bool(braces) and braces[0].lower().replace(" ", "") == "yes"
        decision = _Decision(text, [reply], "enough: the answer is taken" if enough else "not enough yet")
        self._trace("reasoning", decision.note, parent=self._top(), decision=decision)
        said = [b for b in braces[1:] if b]
        if enough and not said:
            self.ended = f"the reasoning step found the triples enough at depth {depth}, without an answer in braces"
            return True, self._answer(depth)
        return enough, self._mapped(said) if enough else []

    def _reason_by_choice(self, depth: int, last: bool) -> tuple[bool, list[tuple[Value | None, str, Node | None]]]:
        """The answers on the kept paths and, before the depth limit, "look one step further", as one numbered choice."""
        options = self._options(topics=False)
        own = self._topic_terms()
        if not last and all(value.term in own for value, _ in options):
            why = "no named entity or value on the kept paths" + (" but the question's own" if options else "")
            self._trace("reasoning", "nothing to answer with yet: one step further", parent=self._top(),
                        decision=_Decision(without_call=why))
            return False, []
        if last:
            self.ended = f"the depth limit ({depth})"
            return True, self._answer_by_choice(depth)
        listed = [_name(v) for v, _ in options] + ["none of these yet: look one step further"]
        prompt = self.templates.get_template("tog_reasoning_choice.j2").render(
            question=self.question, triplets=self._triplets(), options=listed
        ).rstrip()
        decision = _Decision()
        picked = self._choose("reasoning", prompt, len(listed), self.settings.temperature_reasoning, (depth,), decision)
        enough = picked is not None and picked <= len(options)
        decision.note = f"answered: {listed[picked - 1]}" if enough and picked else "not enough yet: one step further"
        self._trace("reasoning", decision.note, parent=self._top(), decision=decision)
        if not enough or picked is None:
            return False, []
        value, node = options[picked - 1]
        return True, [(value, _name(value), node)]

    def _answer(self, depth: int) -> list[tuple[Value | None, str, Node | None]]:
        """ToG's answer generation from the collected triples (the paper's; ToG's code asks without them at the limit)."""
        if self.choice:
            return self._answer_by_choice(depth)
        triplets = self._triplets() if any(n.path for n in self.beam) else []
        prompt = self.templates.get_template("tog_answer.j2").render(question=self.question, triplets=triplets).rstrip()
        text, reply = self._ask("answer", prompt, self.settings.temperature_reasoning, (depth,))
        braces = [b.strip() for b in _BRACES.findall(reply.text) if b.strip()]
        answers = self._mapped(braces)
        said = ", ".join(t for _, t, _ in answers) or "no answer between braces"
        self._trace("answer", f"{said} ({self.ended})", parent=self._top(), decision=_Decision(text, [reply]))
        return answers

    def _answer_by_choice(self, depth: int) -> list[tuple[Value | None, str, Node | None]]:
        """The answer as a numbered choice among the named entities and values on the kept paths."""
        options = self._options(topics=False)
        decision = _Decision()
        picked: int | None = None
        if len(options) == 1:
            picked, decision.without_call = 1, "the only answer on the kept paths"
        elif options:
            prompt = self.templates.get_template("tog_reasoning_choice.j2").render(
                question=self.question, triplets=self._triplets(), options=[_name(v) for v, _ in options]
            ).rstrip()
            picked = self._choose("answer", prompt, len(options), self.settings.temperature_reasoning, (depth,), decision)
        if picked is None:
            self._trace("answer", f"no answer ({self.ended or 'no reply in range'})", parent=self._top(), decision=decision)
            return []
        value, node = options[picked - 1]
        self._trace("answer", f"{_name(value)} ({self.ended or 'the depth limit'})", parent=node.trace, decision=decision)
        return [(value, _name(value), node)]

    def _mapped(self, texts: list[str]) -> list[tuple[Value | None, str, Node | None]]:
        """Answers' texts mapped back to the entities and values the search met (a list split at commas when whole it is none)."""
        out: list[tuple[Value | None, str, Node | None]] = []
        for text in texts:
            found = self._lookup(text)
            if not found:
                parts = [p for p in re.split(r"\s*(?:;|,| and )\s*", text) if p]
                found = [f for p in parts if len(parts) > 1 for f in self._lookup(p)]
            if found:
                out += [(value, text, node) for value, node in found if all(value.term != o[0].term for o in out if o[0])]
            else:
                self.unmapped.append(text)
                out.append((None, text, None))
        return out

    def _lookup(self, text: str) -> list[tuple[Value, Node | None]]:
        """The value ``text`` names: on the kept paths first, then among every neighbour seen."""
        for value, node in self._options():
            if _same_value(text, value):
                return [(value, node)]
        for value in self.seen:
            if _answerable(value) and _same_value(text, value):
                return [(value, None)]
        return []

    def _out_of_budget(self, call: str) -> list[tuple[Value | None, str, Node | None]]:
        """The budget ran out before ``call``: the best named entity or value on the kept paths is the answer, no call made."""
        used = self.episode.calls
        self.budget = {
            "max_llm_calls": self.settings.max_llm_calls, "llm_calls": used,
            "ran_out": f"LLM calls: all {used} of --max-llm-calls {self.settings.max_llm_calls} used before the {call} call",
        }
        self.ended = "budget"
        best = next(((v, n) for v, n in self._options()), None)
        said = f"{_name(best[0])}: the best on the kept paths" if best else "nothing explored to answer with"
        self._trace("answer", f"{said} (the LLM call budget ran out)", parent=best[1].trace if best else self._top(),
                    decision=_Decision(without_call="the LLM call budget ran out"))
        return [(best[0], _name(best[0]), best[1])] if best else []

    def _top(self) -> int | None:
        """The trace position of the best kept path (where the reasoning hangs in the tree)."""
        return self.beam[0].trace if self.beam else None

    # -- the LLM, the KB, the trace ----------------------------------------------
    def _seed(self, *about: object) -> int:
        """The seed of a call or a sample about ``about``: the question's and, when ``--seed`` is set, the seed's."""
        return _seed(self.question, *about) if not self.settings.seed else _seed(self.settings.seed, self.question, *about)

    def _ask(
        self, kind: str, prompt: str | Callable[[], str], temperature: float, about: tuple[object, ...],
        stop: Sequence[str] = _STOP, grammar: str | None = None,
    ) -> tuple[str, LLMReply]:
        """One LLM call within the budget and the model's context; sampled calls carry a seed made from what they are about.

        Raises:
            _OutOfBudget: ``max_llm_calls`` calls were made already.
            LLMError, ContextOverflow: the call failed, or the prompt does not fit.
        """
        if self.episode.calls >= self.settings.max_llm_calls:
            raise _OutOfBudget(f"{kind} (depth {about[0] if about else '?'})")
        budget = budget_for(self.llm)
        sampling = Sampling(temperature=temperature, seed=self._seed(kind, *about) if temperature > 0 else None)
        build = prompt if callable(prompt) else (lambda: budget.check(prompt))
        text, reply = ask_within(budget, build, lambda p: self.llm.complete(p, stop=list(stop), grammar=grammar, sampling=sampling))
        budget.observe(text, reply)
        self.episode.count([reply])
        return text, reply

    def _choose(self, kind: str, prompt: str, n: int, temperature: float, about: tuple[object, ...], decision: _Decision) -> int | None:
        """A number from 1 to ``n`` (GBNF-constrained on a local server); once more with the range when the reply has none."""
        grammar = choice_gbnf(n) if self.grammar else None
        text, reply = self._ask(kind, prompt, temperature, about, ("\n",), grammar)
        decision.prompt, decision.replies = text, [reply]
        picked = parse_choice(reply.text, n)
        if picked is None:
            again, reply = self._ask(kind, f"{text} (one number from 1 to {n})\nAnswer:", temperature, (*about, "again"), ("\n",), grammar)
            decision.replies.append(reply)
            picked = parse_choice(reply.text, n)
            if picked is None:
                decision.note = f"no number from 1 to {n} in the replies: the list's first taken"
        return picked

    def _pmi(self, items: list[str], words: Callable[[str], str], decision: _Decision) -> dict[str, float]:
        """The model's PMI of each item with the question; its requests and seconds go with the decision's step."""
        scorer = self._scorer()
        requests, seconds = scorer.requests, scorer.seconds
        scores = scorer.scores(self.question, items, words=words)
        decision.scoring = (scorer.requests - requests, scorer.seconds - seconds)
        return scores

    def _scorer(self) -> RelationPMI:
        """The model's PMI scorer: the recording's (a replay loads no model), else the bundled model in process."""
        scorer = getattr(self.llm, "relation_scorer", None)
        return scorer if isinstance(scorer, RelationPMI) else local_scorer()

    def _trace(
        self, action: str, observation: str, *, parent: int | None, decision: _Decision | None = None,
        pruned: str | None = None, ok: bool = True, error: str | None = None,
    ) -> int:
        """Add one step to the tree, its position: its LLM calls, and the KB queries sent since the step before (each
        counted once: the relations of a depth's entities, one query, go with the first entity's step)."""
        decision = decision or _Decision()
        replies = decision.replies
        now = (self.kb.stats.queries, self.kb.stats.seconds)
        cost, self.kb_mark = (now[0] - self.kb_mark[0], now[1] - self.kb_mark[1]), now
        trace = StepTrace(
            step=len(self.episode.traces) + 1,
            prompt_sha256=prompt_hash(decision.prompt) if decision.prompt else "",
            reply=replies[-1].text if replies else "",
            action=action, ok=ok, error=error, observation=observation,
            llm_seconds=round(sum(r.latency for r in replies) + decision.scoring[1], 4), scoring_requests=decision.scoring[0],
            kb_queries=cost[0], kb_seconds=round(cost[1], 6),
            tokens_in=sum(r.usage_in for r in replies), tokens_out=sum(r.usage_out for r in replies),
            attempts=sum(r.attempts for r in replies) or 1,
            prompt=full_prompt(decision.prompt) if decision.prompt and getattr(self.config, "trace_prompts", "hash") == "full" else None,
            without_call=decision.without_call, parent=parent, pruned=pruned,
        )
        self.episode.traces.append(trace)
        return len(self.episode.traces)

    def _result(self, answers: list[tuple[Value | None, str, Node | None]], started: float) -> AgentResult:
        """The question's outcome: the answers as ids with labels (or the text where none matched), the chain of the first."""
        first = next(((value, node) for value, _, node in answers if value is not None and node is not None), None)
        query = _chain(first[1], first[0], self.kb.profile) if first is not None else None
        extra: dict[str, Any] = {"tog": {
            "decisions": "choice" if self.choice else "written", "prune_tools": self.settings.prune_tools,
            "ended": self.ended, "unmapped": self.unmapped,
        }}
        if self.budget is not None:
            extra["budget"] = self.budget
        error = self.episode.error
        return AgentResult(
            question=self.question,
            answers=[value.to_dict() if value is not None else {"value": text, "label": None} for value, text, _ in answers],
            steps=self.episode.traces, done=error is None, forced=False,
            query=query.text() if query is not None else "", chain=list(query.actions()) if query is not None else [],
            llm_calls=self.episode.calls, tokens_in=self.episode.tokens_in, tokens_out=self.episode.tokens_out,
            kb_queries=int(self.env.counters["kb_queries"]), seconds=time.perf_counter() - started,
            error=error, status=status_of(error),
            stopped="budget" if self.budget is not None else None, extra=extra,
        )


def resolve_prune_tools(prune_tools: str, llm: Any) -> str:
    """``auto``: the bundled model's PMI (``model``) when the LLM is the bundled model, else ToG's LLM pruning (``llm``).

    The 270M base model answers ``1`` to a numbered list whatever it holds,
    so asking it to prune relations is the list's order; its PMI of the
    relation's words with the question orders them by meaning (first 40
    WebQSP questions: Hits@1 33/40 against 26/40, at half the calls).

    Example:
        >>> from agent.llm.scripted import ScriptedLLM
        >>> resolve_prune_tools("auto", ScriptedLLM([], model="remote")), resolve_prune_tools("bm25", None)
        ('llm', 'bm25')
    """
    if prune_tools != "auto":
        return prune_tools
    return "model" if is_bundled_model(llm) else "llm"


@strategy(
    "tog",
    description="Think-on-Graph: a beam of KB paths, relations and entities pruned by the LLM, 'is this enough?' at each depth",
    cites="Think-on-Graph (Sun et al., ICLR 2024; IDEA-FinAI/ToG)",
    rank=35,
    sides=("sparql",),
    options=(
        Option("width", int, 3, "ToG: paths kept at each depth, relations kept per entity", minimum=1, maximum=10),
        Option("depth", int, 3, "ToG: hops at most", minimum=1, maximum=6),
        Option("num_retain_entity", int, 5, "ToG: neighbours sampled when an entity has 20 or more over one relation",
               minimum=1, maximum=SAMPLE_FROM),
        Option("prune_tools", str, "auto", "ToG: what prunes relations and entities (model: the bundled model's PMI; "
               "auto: model with the bundled model, which cannot judge in words, else llm as the paper)",
               choices=PRUNE_TOOLS),
        Option("temperature_exploration", float, 0.4, "ToG: temperature of the pruning calls (each seeded)", minimum=0, maximum=2),
        Option("temperature_reasoning", float, 0.0, "ToG: temperature of the reasoning and answer calls", minimum=0, maximum=2),
        Option("remove_unnecessary_rel", bool, True, "ToG: leave out relations that only name, type or identify an entity"),
        Option("max_llm_calls", int, 60, "LLM calls at most per question; then the answer is the best found (stopped: budget)",
               minimum=1, maximum=10000),
        SEED,
    ),
)
def solve_tog(
    llm: Any, env: Any, question: str, config: Any, *, width: int = 3, depth: int = 3, num_retain_entity: int = 5,
    prune_tools: str = "auto", temperature_exploration: float = 0.4, temperature_reasoning: float = 0.0,
    remove_unnecessary_rel: bool = True, max_llm_calls: int = 60, seed: int = SEED.default,
) -> AgentResult:
    """Answer one question with Think-on-Graph on the environment's KB (see the module docstring).

    A service failure (the LLM after its retries, an unreachable KB) ends
    the question as failed to run; a prompt that does not fit the model's
    context ends it as finished with ``context_overflow``; the budget
    running out ends the search with the best answer found so far.

    Raises:
        AgentConfigError: the environment is not a KB's (``sparql`` side).
    """
    entry("tog").check_side(side_for(env).name)
    settings = ToGSettings(width, depth, num_retain_entity, resolve_prune_tools(prune_tools, llm), temperature_exploration,
                           temperature_reasoning,
                           remove_unnecessary_rel, max_llm_calls, seed)
    return ThinkOnGraph(llm, env, question, config, settings).run()
