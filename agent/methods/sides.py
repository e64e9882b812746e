"""The environment sides as the agent sees them: one adapter per side, asked once per episode.

An environment says which side it is (``env.side``: ``sparql``, ``sql``,
``agentbench``); everything the agent needs to know of that side is here,
in one :class:`Side` per side, registered with :func:`side`:

* its prompts: the template and the default one-shot example of the
  written actions (text, tools and grammar modes) and of the choose mode,
  and what else they show (a KB's linked entities and the question's
  values, a table's description);
* its outcome: the final query's action lines (:meth:`Side.chain`, the
  logical form of a KB answer) and which KB tells a service failure from
  a query's own (:meth:`Side.infra_kb`);
* the choose mode's list: the steps to list (a KB's environment looks
  first; a table's headers scored by the model only when that could
  matter), the model's order of a KB's first facts, the steps taken
  without asking, and how an observation is kept in the prompt's history;
* whether a state vocabulary applies to the grammar and tools modes;
* how the step limit forces an answer.

:func:`side_for` reads ``env.side`` (the one place the agent does) and
gives the adapter; a policy or a strategy asks the adapter, never the
environment's side.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    >>> s = side_for(env)
    >>> s.name, s.data, s.state_vocabulary, s.choice_observation("2 rows match the conditions: {'a': 1}")
    ('sparql', 'kb', True, "2 rows match the conditions: {'a': 1}")
    >>> sides()
    ('sparql', 'sql', 'agentbench')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

import jinja2

from agent.errors import AgentConfigError
from agent.methods.episode import Episode, env_trace, forced_trace, load_example
from pyql.environment.actions import render_docs
from pyql.environment.value_steps import prompt_values

__all__ = ["Side", "KBSide", "TableSide", "AgentBenchSide", "side", "side_for", "sides", "infra_kb"]

#: On a KB in Wikidata's statement model (MarkQA's numeric actions offered): the default examples of
#: the text and the choose modes, and a relation for the prompt's rules.
_WIKIDATA_PROMPT = {"example": "wikidata", "choose": "wikidata_choose", "relation_example": "wdt:P1082"}

#: Asks the LLM which variable answers (the strategy's call at the step limit): the variables → (the prompt,
#: the variable chosen), or None when the LLM failed (the episode's error says why).
AskVariable = Callable[[list[str]], "tuple[Any, str] | None"]

#: What :meth:`Side.ordered` gives: the steps in the order shown (None: the scorer failed), the scorer's
#: (requests, seconds), and the model's score of each step it scored, by action.
Ordered = tuple["list[Any] | None", tuple[int, float], dict[str, float]]

S = TypeVar("S", bound="type[Side]")

_SIDES: dict[str, Side] = {}


def side(name: str) -> Callable[[S], S]:
    """Register the decorated :class:`Side` subclass as the adapter of the environments whose ``side`` is ``name``.

    Example:
        >>> @side("test-side")
        ... class Mine(KBSide):
        ...     pass
        >>> sides()[-1], Mine.name
        ('test-side', 'test-side')
        >>> _ = _SIDES.pop("test-side")
    """

    def register(cls: S) -> S:
        cls.name = name
        _SIDES[name] = cls()
        return cls

    return register


def sides() -> tuple[str, ...]:
    """The sides the agent knows, in the order they were registered."""
    return tuple(_SIDES)


def side_for(env: Any) -> Side:
    """The adapter of the environment's side, read once where an episode starts.

    Raises:
        AgentConfigError: an environment of a side the agent does not know.

    Example:
        >>> from pyql_sql import Table
        >>> from pyql_sql.environment import TableEnvironment
        >>> side_for(TableEnvironment(Table.from_rows(["a"], [["1"]]))).name
        'sql'
        >>> class Other:
        ...     side = "prolog"
        >>> side_for(Other())
        Traceback (most recent call last):
        ...
        agent.errors.AgentConfigError: QueryAgent has no prompt for a 'prolog' environment; it knows sparql, sql, agentbench
    """
    name = getattr(env, "side", None)
    found = _SIDES.get(str(name))
    if found is None:
        raise AgentConfigError(f"QueryAgent has no prompt for a {name!r} environment; it knows {', '.join(_SIDES)}")
    return found


def infra_kb(env: Any) -> Any:
    """The KB that tells a service failure from a query's own (:func:`agent.faults.infra_failure`) for any environment:
    its side's (:meth:`Side.infra_kb`); None for an environment of no known side."""
    found = _SIDES.get(str(getattr(env, "side", None)))
    return found.infra_kb(env) if found is not None else None


class Side:
    """What the agent needs to know of one environment side (see the module docstring).

    Attributes:
        name: the environment's ``side``.
        data: what the environment answers from: ``kb`` or ``table`` (Readi's paths differ).
        template: the prompt template of the written actions (text, tools, grammar).
        example: its default one-shot example.
        choose_template: the prompt template of the choose mode.
        choose_example: its default one-shot example.
        state_vocabulary: the grammar and tools modes rebuild the grammar (the tools' enums) for
            every call from the environment's memory (:class:`agent.llm.gbnf.StateVocabulary`).
    """

    name: ClassVar[str] = ""
    data: ClassVar[str] = "kb"
    template: ClassVar[str] = ""
    example: ClassVar[str] = ""
    choose_template: ClassVar[str] = "queryagent_choose.j2"
    choose_example: ClassVar[str] = "freebase_choose"
    state_vocabulary: ClassVar[bool] = False

    # -- prompts ---------------------------------------------------------------
    def default_example(self, env: Any) -> str:
        """The one-shot example of the written actions when none is given (a bundled name, :func:`agent.methods.episode.load_example`)."""
        return self.example

    def written_head(self, env: Any, question: str, example: str | None, templates: jinja2.Environment) -> str:
        """The fixed part of a written-action prompt: task, action docs, one-shot example, question."""
        raise NotImplementedError

    def choose_head(self, env: Any, question: str, example: str | None, templates: jinja2.Environment) -> str:
        """The fixed part of a choose-mode prompt."""
        raise NotImplementedError

    # -- the outcome -----------------------------------------------------------
    def chain(self, env: Any) -> list[str]:
        """The final query's action lines (for the logical-form exact match); none where there is no chain."""
        return []

    def infra_kb(self, env: Any) -> Any:
        """The KB :func:`agent.faults.infra_failure` probes to tell an unreachable KB from a query's fault (None: no probe)."""
        return None

    # -- the choose mode -------------------------------------------------------
    def choices(self, env: Any, episode: Episode, config: Any, rank: Any, scorer: Any) -> list[Any]:
        """The steps to list (:class:`pyql.environment.next_steps.NextStep`); empty when there are none
        or the episode ended on the way (``episode.error``, ``episode.stopped``)."""
        raise NotImplementedError

    def ordered(self, env: Any, episode: Episode, choices: list[Any], config: Any, scorer: Any) -> Ordered:
        """The listed steps in the order shown (None: the scorer failed, ``episode.error`` says why), the
        scorer's (requests, seconds) spent on it, and the model's score of each step it scored (by action)."""
        return choices, (0, 0.0), {}

    def forced_choice(self, choices: Sequence[Any], previous: str | None) -> str | None:
        """Why the first listed step is taken without asking the LLM (:func:`agent.methods.choose.forced_choice`); None: ask."""
        return None

    def choice_observation(self, text: str) -> str:
        """An observation as the choose prompt's history keeps it."""
        return text

    # -- the step limit --------------------------------------------------------
    def force_answer(self, env: Any, episode: Episode, step: int, ask: AskVariable) -> None:
        """At the step limit: ask which variable is the answer (``ask``), set it and execute (each a forced step).

        A service failure on the way (the LLM, the KB) ends the episode as
        failed to run instead of forcing a guess.
        """
        variables = [str(v) for v in getattr(env.query, "variables", ())]
        if variables and hasattr(env.query, "set_answer"):
            asked = ask(variables)
            if asked is None:
                return
            prompt, chosen = asked
            record = env.step(f"set_answer({chosen})")
            episode.add(forced_trace(step, prompt, f"set_answer({chosen})", record))
            if episode.failed_on_service(record, self.infra_kb(env)):
                return
            step += 1
        record = env.step("execute()")
        episode.add(forced_trace(step, "", "execute()", record))
        episode.failed_on_service(record, self.infra_kb(env))


@side("sparql")
class KBSide(Side):
    """A knowledge base driven with pyql's actions (:class:`pyql.environment.sparql.SparqlEnvironment`)."""

    template = "queryagent_kb.j2"
    example = "freebase"
    state_vocabulary = True

    def statement_model(self, env: Any) -> bool:
        """Whether the KB is in Wikidata's statement model (:attr:`pyql.builder.profiles.Profile.statement_model`):
        MarkQA's actions are in the docs, and the default examples show them."""
        return bool(env.kb.profile.statement_model)

    def default_example(self, env: Any) -> str:
        return _WIKIDATA_PROMPT["example"] if self.statement_model(env) else self.example

    def written_head(self, env: Any, question: str, example: str | None, templates: jinja2.Environment) -> str:
        wikidata = self.statement_model(env)
        shown = load_example(example or self.default_example(env))
        entities = repr(dict(env.memory.entities))
        extra = {"relation_example": _WIKIDATA_PROMPT["relation_example"]} if wikidata else {}
        extra["values"] = prompt_values(question, env.memory.entities)  # grounded: numbers, dates at their precision, cues
        docs = render_docs(env.actions, "prompt")
        return templates.get_template(self.template).render(docs=docs, example=shown, question=question, entities=entities, **extra)

    def choose_head(self, env: Any, question: str, example: str | None, templates: jinja2.Environment) -> str:
        shown = load_example(example or (_WIKIDATA_PROMPT["choose"] if self.statement_model(env) else self.choose_example))
        entities = repr(dict(env.memory.entities))
        return templates.get_template(self.choose_template).render(example=shown, question=question, entities=entities)

    def chain(self, env: Any) -> list[str]:
        return list(env.query.actions())

    def infra_kb(self, env: Any) -> Any:
        return getattr(env, "kb", None)

    def choices(self, env: Any, episode: Episode, config: Any, rank: Any, scorer: Any) -> list[Any]:
        """The environment's own looks first (``auto_look``: each a step, traced), then the steps to list."""
        from agent.methods.choose import auto_look, enumerate_choices

        if config.auto_look:
            for record in auto_look(env):
                episode.add(env_trace(len(episode.traces) + 1, record))
                if episode.repeated(record, config.max_repeats):  # a look that keeps failing ends the line too
                    return []
        return enumerate_choices(
            env, rank=rank, limit=config.max_choices, per_argument=config.choice_relations, order=config.choice_order,
        )

    def ordered(self, env: Any, episode: Episode, choices: list[Any], config: Any, scorer: Any) -> Ordered:
        """With ``first_relation="model"``, before the first fact: the facts ordered by the model's PMI.

        Returns the choices (None when the scorer failed: ``episode.error`` says why),
        the scorer's (requests, seconds) spent, and each fact's score.
        """
        if config.first_relation != "model" or any(a.startswith("add_fact(") for a in env.query.actions()):
            return choices, (0, 0.0), {}
        from agent.llm.likelihood import ScorerError, local_scorer
        from agent.methods.choose import fact_relation, model_order

        pmi = scorer if scorer is not None else local_scorer()
        before = (pmi.requests, pmi.seconds)
        try:
            scores = pmi.scores(env.question, [fact_relation(c.action) for c in choices if c.kind == "fact"])
        except ScorerError as exc:
            episode.error = f"llm_error: {exc}"
            return None, (0, 0.0), {}
        by_action = {c.action: scores[fact_relation(c.action)] for c in choices if c.kind == "fact" and fact_relation(c.action) in scores}
        return model_order(choices, scores), (pmi.requests - before[0], pmi.seconds - before[1]), by_action


@side("sql")
class TableSide(Side):
    """A table (:class:`pyql_sql.environment.TableEnvironment` and the writable one)."""

    data = "table"
    template = "queryagent_table.j2"
    example = "table"
    choose_template = "queryagent_table_choose.j2"
    choose_example = "table_choose"

    def written_head(self, env: Any, question: str, example: str | None, templates: jinja2.Environment) -> str:
        docs = render_docs(env.actions, "prompt")
        shown = load_example(example or self.example)
        return templates.get_template(self.template).render(docs=docs, example=shown, question=question, table=env.describe_table(),
                                                            cues=self._cues(env, question))

    def choose_head(self, env: Any, question: str, example: str | None, templates: jinja2.Environment) -> str:
        shown = load_example(example or self.choose_example)
        return templates.get_template(self.choose_template).render(example=shown, question=question, table=env.describe_table(),
                                                                   cues=self._cues(env, question))

    def _cues(self, env: Any, question: str) -> str:
        """The question's cue words for the steps beyond a condition and an answer (``add_row``, ``add_adjacent``,
        ``set_calculation`` ...), when the environment offers them: a line of the prompt, as the KB side's values."""
        if "add_row" not in env.actions.names:
            return ""
        from pyql_sql.shapes import cue_hints

        return cue_hints(question)

    def choices(self, env: Any, episode: Episode, config: Any, rank: Any, scorer: Any) -> list[Any]:
        """A table's steps; with ``first_relation="model"``, the headers scored by the model only when that could matter.

        The list is made without scores first; the model scores the headers
        (once a question) only when :func:`pyql_sql.next_steps.scores_could_change`
        says the scores could change the first listed step (a tie among the
        answers, a number with no header next to it), and the list is made
        again with them. What was decided, and why, is the record's
        ``extra["column_scoring"]``.
        """
        from agent.methods.choose import enumerate_table_choices

        def listing(scores: dict[str, float] | None) -> list[Any]:
            return enumerate_table_choices(env, scores=scores, limit=min(config.max_choices, 8), preview=config.choice_preview)

        choices = listing(episode.column_scores)
        if config.first_relation != "model" or episode.column_scores is not None:
            return choices
        from pyql_sql.next_steps import scores_could_change

        why = scores_could_change(env, choices)
        if why is None:
            if episode.column_scoring is None:
                episode.column_scoring = {"scored": False, "why": "the question's words decided the first listed step"}
            return choices
        scores = self._column_scores(env, episode, why, scorer)
        return [] if episode.error else listing(scores)

    def _column_scores(self, env: Any, episode: Episode, why: str, scorer: Any) -> dict[str, float] | None:
        """The table's headers scored by the model's PMI (once a question; ``why``: what the scores may decide).

        The scores rank the answer columns and the numeric column of a number
        with no header next to it (:func:`pyql_sql.next_steps.table_next_steps`);
        their cost is traced with the next choice. A scorer failure ends the episode (``episode.error``).
        """
        from agent.llm.likelihood import ScorerError, local_scorer
        from pyql_sql.next_steps import column_words

        pmi = scorer if scorer is not None else local_scorer()
        before = (pmi.requests, pmi.seconds, getattr(pmi, "tokens", 0))
        try:
            episode.column_scores = pmi.scores(env.question, list(env.table.headers), words=column_words)
        except ScorerError as exc:
            episode.error = f"llm_error: {exc}"
            return None
        spent = (pmi.requests - before[0], pmi.seconds - before[1], getattr(pmi, "tokens", 0) - before[2])
        episode.scoring_pending = spent[:2]
        episode.column_scoring = {
            "scored": True, "why": why, "step": len(episode.traces) + 1,
            "requests": spent[0], "tokens": spent[2], "seconds": round(spent[1], 4),
        }
        return episode.column_scores

    def ordered(self, env: Any, episode: Episode, choices: list[Any], config: Any, scorer: Any) -> Ordered:
        """The list as made (the headers' scores, if any, ordered it); the headers' scoring cost goes with this choice."""
        spent, episode.scoring_pending = episode.scoring_pending, (0, 0.0)
        return choices, spent, {}

    def forced_choice(self, choices: Sequence[Any], previous: str | None) -> str | None:
        from agent.methods.choose import forced_choice

        return forced_choice(choices, previous)

    def choice_observation(self, text: str) -> str:
        from agent.methods.choose import table_observation

        return table_observation(text)


@side("agentbench")
class AgentBenchSide(KBSide):
    """A KB driven with AgentBench's functions and ``#k`` variables (:class:`pyql.environment.agentbench.AgentBenchEnvironment`)."""

    template = "agentbench_kg.j2"
    example = "agentbench"
    state_vocabulary = False

    def statement_model(self, env: Any) -> bool:
        return False

    def chain(self, env: Any) -> list[str]:
        return []

    def infra_kb(self, env: Any) -> Any:
        return None

    def ordered(self, env: Any, episode: Episode, choices: list[Any], config: Any, scorer: Any) -> Ordered:
        return choices, (0, 0.0), {}

    def force_answer(self, env: Any, episode: Episode, step: int, ask: AskVariable) -> None:
        """At the step limit: answer with the last variable made (none: no answer)."""
        if not env.variables:
            return
        record = env.step(f"Final Answer: #{env.variables[-1].index}")
        episode.add(forced_trace(step, "", record.call.text if record.call is not None else record.text, record))
        episode.failed_on_service(record, self.infra_kb(env))
