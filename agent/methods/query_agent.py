"""QueryAgent: an LLM builds a query one action at a time (Algorithm 1).

The prompt is the task description, the action documentation generated
from the code (``pyql docs --format prompt``), a one-shot example, the
question and its entity linking. At step *i* the LLM writes ``Thought i`` /
``Action i``; the environment runs the action; the observation is the result
or, when a correction rule fires, its guideline (ERASER). This repeats until
``execute()`` or the step limit, where the agent asks the LLM to choose the
answer among the current variables and executes.

The agent talks to the environment only through action text and
observations, so the same loop drives the SPARQL and the SQL environments.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> llm = ScriptedLLM([
    ...     " Rachel's category.\\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
    ...     " That is the answer.\\nAction 2: execute()",
    ... ])
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> result = QueryAgent(llm, AgentConfig(feedback="raw")).run(env, "what category is tropical storm rachel?")
    >>> [a["label"] for a in result.answers], result.llm_calls
    (['Tropical storm (SSHS)'], 2)
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agent.errors import ContextOverflow, LLMError
from agent.faults import FAILED_TO_RUN, FINISHED, INFRA_KINDS, error_kind, infra_failure
from agent.llm.config import DEFAULT_STOP
from agent.llm.decoding import complete_action, reply_action
from agent.llm.replies import LLM
from agent.methods.context_budget import Block, ask_within, budget_for, shortened, summarised
from agent.methods.episode import (
    TEMPLATE_VERSION,
    AgentConfigError,
    AgentResult,
    StepTrace,
    load_example,
    prompt_hash,
    prompt_templates,
)
from grammars.vocabulary import FEEDBACK_MODES
from pyql.environment.actions import render_docs
from pyql.echo import one_line
from pyql.errors import PyQLError
from pyql.lines import split_lines
from pyql.environment.value_steps import prompt_values

__all__ = ["AgentConfig", "AgentConfigError", "QueryAgent", "AgentResult", "StepTrace", "load_example", "prompt_templates", "FEEDBACK_MODES", "TEMPLATE_VERSION"]

_NO_FEEDBACK = "The action could not be executed."

#: The prompt template and the default one-shot example of each environment side.
_PROMPTS = {
    "sparql": ("queryagent_kb.j2", "freebase"),
    "sql": ("queryagent_table.j2", "table"),
    "agentbench": ("agentbench_kg.j2", "agentbench"),  # AgentBench's functions and #k variables
}
#: On a KB in Wikidata's statement model (MarkQA's numeric actions offered): the default examples of
#: the text and the choose modes, and a relation for the prompt's rules.
_WIKIDATA_PROMPT = {"example": "wikidata", "choose": "wikidata_choose", "relation_example": "wdt:P1082"}


def _statement_model(env: Any) -> bool:
    """Whether the environment is on a KB in Wikidata's statement model (:attr:`pyql.builder.profiles.Profile.statement_model`)."""
    return env.side == "sparql" and bool(env.kb.profile.statement_model)


@dataclass
class AgentConfig:
    """Settings of the QueryAgent loop.

    Attributes:
        max_steps: actions the LLM may take before it is asked to choose an answer.
        action_mode: "text" (the paper's Thought/Action text), "tools" (native
            tool calls), "grammar" (grammar-constrained decoding, llama.cpp) or
            "choose" (pick one of the enumerated valid next steps by number,
            :mod:`agent.methods.choose`; KB and table sides).
        feedback: "eraser" (guidelines), "raw" (the raw error message) or
            "none" (no error detail: failures say only that the action failed).
        example: the one-shot example: a bundled name or a path; None picks
            the environment's default ("freebase" or "table"; "wikidata" on a KB
            in Wikidata's statement model, whose action docs include MarkQA's
            numeric actions; "freebase_choose"/"wikidata_choose" in choose mode).
        prompt_style: "auto" (follows the LLM's mode: a completion model gets
            one text ending in ``Thought i:``, a chat model messages), "text" or "chat".
        token_budget: the most tokens a prompt may take (None: no cap); the
            model's context less the reply's ``max_tokens`` wins when smaller
            (:mod:`agent.methods.context_budget`). Over it, older observations
            are shortened first, then older steps summarised; the task, the
            one-shot example, the question and the current state stay whole.
        keep_observation: characters of an older observation's first line kept when it is shortened.
        trace_prompts: "hash" (sha256 of each prompt) or "full" (the text too).
        max_repeats: repeats of the same failed action the agent allows; at
            this many it stops that line of action and answers with what it
            has (so one repeated mistake costs at most ``max_repeats + 1`` LLM
            calls). Whatever failed counts (a reply that cannot be read, a
            wrong arity, a bad argument, an ERASER error, a KB error, an
            invalid choice), and so does a step that changes nothing (the same
            look again). The environment escalates each repeat (:mod:`pyql.environment`).
        max_choices: choose mode: the most steps listed at once.
        auto_look: choose mode: the environment runs ``get_relation`` itself on
            what it has not looked at (no LLM call spent on looks).
        choice_preview: choose mode: show each step's result preview.
        choice_relations: choose mode: relations listed per entity or variable.
        choice_order: choose mode: "ranked" (against the question,
            :func:`agent.methods.choose.rank_choices`) or "kind" (facts, constraints,
            aggregates, answers, execute, looks).
        first_relation: choose mode: how the relations of the first fact are
            ordered: "ranked" (:func:`agent.methods.choose.rank_choices`) or "model"
            (the model's PMI of each relation's words with the question,
            :mod:`agent.llm.likelihood`; the bundled model unless the agent is
            given a scorer). Later steps stay ranked.
        state_constraints: grammar and tools modes on a KB: the grammar (or the
            tools' JSON-schema enums) is rebuilt for every call from the
            environment's memory (:func:`agent.llm.gbnf.state_gbnf`), so a relation
            no look returned there cannot be written; False: the generic grammar.
    """

    max_steps: int = 12
    action_mode: str = "text"
    feedback: str = "eraser"
    example: str | None = None
    prompt_style: str = "auto"
    token_budget: int | None = 8000
    keep_observation: int = 160
    trace_prompts: str = "hash"
    max_repeats: int = 3
    max_choices: int = 6
    auto_look: bool = True
    choice_preview: bool = True
    choice_relations: int = 6
    choice_order: str = "ranked"
    first_relation: str = "ranked"
    state_constraints: bool = True

    def __post_init__(self) -> None:
        if self.feedback not in FEEDBACK_MODES:
            raise AgentConfigError(f"unknown feedback {self.feedback!r}; use one of {', '.join(FEEDBACK_MODES)}")
        if self.action_mode not in ("text", "tools", "grammar", "choose"):
            raise AgentConfigError(f"unknown action mode {self.action_mode!r}; use text, tools, grammar or choose")
        if self.prompt_style not in ("auto", "text", "chat"):
            raise AgentConfigError(f"unknown prompt style {self.prompt_style!r}; use auto, text or chat")
        if self.max_steps < 1:
            raise AgentConfigError(f"max_steps must be ≥ 1, got {self.max_steps}")
        if self.first_relation not in ("ranked", "model"):
            raise AgentConfigError(f"unknown first_relation {self.first_relation!r}; use ranked or model")
        if self.max_repeats < 1:
            raise AgentConfigError(f"max_repeats must be ≥ 1, got {self.max_repeats}")


@dataclass
class _Turn:
    step: int
    thought_action: str
    observation: str


@dataclass
class _Episode:
    """The running state of one question."""

    head: str
    turns: list[_Turn] = field(default_factory=list)
    traces: list[StepTrace] = field(default_factory=list)
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None
    forced: bool = False
    stopped: str | None = None
    stopped_by: str | None = None
    invalid_choices: int = 0
    bad_arguments: Counter = field(default_factory=Counter)
    column_scores: dict[str, float] | None = None  # a table's headers scored by the model (choose mode, first_relation="model")
    scoring_pending: tuple[int, float] = (0, 0.0)  # scorer requests and seconds not yet in a trace
    column_scoring: dict[str, Any] | None = None  # whether and why the headers were scored (the record's extra)

    def repeated(self, record: Any, cap: int) -> bool:
        """Whether ``record`` repeats a mistake (or a step that changed nothing) ``cap`` times: the line stops."""
        if record.repeats < cap:
            return False
        self.stopped, self.stopped_by = "repeated_mistake", record.repeat_kind or record.error
        return True


class QueryAgent:
    """The step-by-step agent (QueryAgent, Algorithm 1).

    Args:
        llm: any :class:`agent.llm.replies.LLM`.
        config: an :class:`AgentConfig`.
    """

    def __init__(self, llm: LLM, config: AgentConfig | None = None, scorer: Any = None) -> None:
        self.llm = llm
        self.config = config or AgentConfig()
        self.scorer = scorer  # an agent.llm.likelihood.RelationPMI for first_relation="model" (None: the bundled model)
        self._jinja = prompt_templates()
        self._ranker: Any = None

    # -- prompt ----------------------------------------------------------------
    def _style(self) -> str:
        if self.config.prompt_style != "auto":
            return self.config.prompt_style
        mode = getattr(getattr(self.llm, "config", None), "mode", "completion")
        return "chat" if mode == "chat" else "text"

    def head(self, env: Any, question: str) -> str:
        """The fixed part of the prompt: task, action docs, example, question.

        The template and the default one-shot example follow the environment's side.
        """
        if env.side not in _PROMPTS:
            raise AgentConfigError(f"QueryAgent has no prompt for a {env.side!r} environment; it knows {', '.join(_PROMPTS)}")
        template, default_example = _PROMPTS[env.side]
        wikidata = _statement_model(env)  # MarkQA's actions are in the docs; the example shows them
        if self.config.action_mode == "choose" and env.side == "sql":
            example = load_example(self.config.example or "table_choose")
            return self._jinja.get_template("queryagent_table_choose.j2").render(example=example, question=question, table=env.describe_table())
        if self.config.action_mode == "choose":
            example = load_example(self.config.example or (_WIKIDATA_PROMPT["choose"] if wikidata else "freebase_choose"))
            entities = repr(dict(env.memory.entities))
            return self._jinja.get_template("queryagent_choose.j2").render(example=example, question=question, entities=entities)
        example = load_example(self.config.example or (_WIKIDATA_PROMPT["example"] if wikidata else default_example))
        docs = render_docs(env.actions, "prompt")
        if env.side == "sql":
            return self._jinja.get_template(template).render(
                docs=docs, example=example, question=question, table=env.describe_table()
            )
        entities = repr(dict(env.memory.entities))
        extra = {"relation_example": _WIKIDATA_PROMPT["relation_example"]} if wikidata else {}
        extra["values"] = prompt_values(question, env.memory.entities)  # grounded: numbers, dates at their precision, cues
        return self._jinja.get_template(template).render(docs=docs, example=example, question=question, entities=entities, **extra)

    def prompt(self, head: str, turns: list[_Turn], step: int, ending: tuple[str, str] | None = None, overhead: int = 0) -> Any:
        """The prompt for ``step`` within the context budget: one text (completion style) or chat messages.

        ``ending`` is what follows the history, as (text, chat message): the
        choose mode's list, the forced answer's question; None: ``Thought N:``
        in a text prompt (nothing in choose mode), nothing in chat. Older
        turns are shortened, then summarised, when the prompt is over the
        budget (:func:`agent.methods.context_budget.budget_for`); the last turn and the ending never are.
        ``overhead``: tokens the request takes besides the prompt (the tools mode's schemas).

        Raises:
            ContextOverflow: the prompt does not fit even so.
        """
        chat = self._style() == "chat"
        if chat:
            system, _, question = head.rpartition("\nQuestion:")
            blocks = [Block.kept({"role": "system", "content": system.strip()}, {"role": "user", "content": ("Question:" + question).strip()})]
        else:
            blocks = [Block.kept(f"{head.rstrip()}\n")]
        blocks += [self._turn_block(t, chat, last=i == len(turns) - 1) for i, t in enumerate(turns)]
        text, message = ending if ending is not None else ("" if self.config.action_mode == "choose" else f"Thought {step}:", "")
        if chat and message:
            blocks.append(Block.kept({"role": "user", "content": message}))
        elif not chat and text:
            blocks.append(Block.kept(text))
        return budget_for(self.llm).fit(blocks, cap=self.config.token_budget, overhead=overhead)

    def _turn_block(self, turn: _Turn, chat: bool, last: bool) -> Block:
        """A past turn: whole; its observation shortened; summarised (its action and a one-line outcome)."""
        seen = f"Observation {turn.step}: "

        def pieces(said: str, observation: str) -> tuple[Any, ...]:
            if chat:
                return ({"role": "assistant", "content": said}, {"role": "user", "content": seen + observation})
            return (f"{said}\n{seen}{observation}\n",)

        whole = pieces(turn.thought_action, turn.observation)
        if last:
            return Block(whole)
        short = pieces(turn.thought_action, shortened(turn.observation, self.config.keep_observation))
        return Block(whole, short, pieces(_action_line(turn), summarised(turn.observation)))

    # -- the loop --------------------------------------------------------------
    def _observation(self, record: Any) -> str:
        if record.ok or self.config.feedback != "none":
            return record.observation
        return _NO_FEEDBACK

    def check_environment(self, env: Any) -> None:
        """Check that the environment was built for this feedback mode (the agent never changes it).

        Build it with :func:`agent.evaluation.environments.feedback_options` (``agent=True``).

        Raises:
            AgentConfigError: ERASER feedback without an analyzer, or raw/none feedback with one.
        """
        wants = self.config.feedback == "eraser"
        if wants != (env.analyzer is not None):
            has = "with an analyzer" if env.analyzer is not None else "without an analyzer"
            raise AgentConfigError(
                f"feedback {self.config.feedback!r} needs an environment {'with' if wants else 'without'} an analyzer, "
                f"but this one was built {has}; build it with "
                f"agent.evaluation.environments.feedback_options({self.config.feedback!r}, agent=True)"
            )

    def run(self, env: Any, question: str) -> AgentResult:
        """Answer one question in the given (fresh) environment.

        A failure of a service (:func:`agent.faults.infra_failure`: LLM errors
        that survive the retries, a KB that cannot be reached or does not
        answer) ends the episode at once, without forcing an answer:
        ``result.status`` is ``failed_to_run`` and ``result.error`` says why.
        A prompt that does not fit the model's context, even shortened
        (:mod:`agent.methods.context_budget`), ends it too, as the agent's own
        failure: ``finished`` with the error ``context_overflow: ...`` (scored
        as failed, not run again on resume).
        It does not raise: an evaluation goes on with the next question.

        Raises:
            AgentConfigError: the environment's analyzer does not match the feedback mode.
        """
        self.check_environment(env)
        started = time.perf_counter()
        episode = _Episode(head=self.head(env, question))
        for step in range(1, self.config.max_steps + 1):
            if not self._step(env, episode, step):
                break
            if env.done:
                break
        if not env.done and episode.error is None:
            episode.forced = True
            self._force_answer(env, episode, len(episode.traces) + 1)
        final = env.final_result()
        return AgentResult(
            question=question,
            answers=final.answers if env.done and episode.error is None else [],
            steps=episode.traces,
            done=env.done,
            forced=episode.forced,
            query=final.query,
            chain=list(env.query.actions()) if env.side == "sparql" else [],
            llm_calls=episode.calls,
            tokens_in=episode.tokens_in,
            tokens_out=episode.tokens_out,
            kb_queries=int(env.counters["kb_queries"]),
            seconds=time.perf_counter() - started,
            rules=dict(Counter(t.rule for t in episode.traces if t.rule)),
            error=episode.error,
            status=FAILED_TO_RUN if error_kind(episode.error) in INFRA_KINDS else FINISHED,
            advice=dict(Counter(t.advice for t in episode.traces if t.advice and t.ok)),
            escalations={str(k): v for k, v in sorted(Counter(t.escalation for t in episode.traces if t.escalation).items())},
            stopped=episode.stopped,
            stopped_by=episode.stopped_by,
            extra={"column_scoring": episode.column_scoring} if episode.column_scoring is not None else {},
        )

    def _infra(self, env: Any, record: Any, episode: _Episode) -> bool:
        """Whether the step failed on a service (then the episode ends with the failure as its error)."""
        failure = infra_failure(record.exception, getattr(env, "kb", None) if env.side == "sparql" else None)
        if failure is None:
            return False
        episode.error = str(failure)
        return True

    def _step(self, env: Any, episode: _Episode, step: int) -> bool:
        """One LLM call and the action it wrote; False when the episode must end here.

        It ends when the LLM failed (``episode.error``) or when the same failed
        action came back ``max_repeats`` times (``episode.stopped``; the agent
        then answers with what it has). A native tool call goes to the
        environment as the structured call (:func:`agent.llm.decoding.reply_action`);
        its ``Action N:`` line is what the prompt and the trace show.
        """
        if self.config.action_mode == "choose":
            return self._choose_step(env, episode, step)
        style = self._style()
        state = self._state(env)

        def call(prompt: Any) -> tuple[str, Any]:
            return complete_action(
                self.llm, prompt, env.actions, mode=self.config.action_mode, step=step,
                resume="thought" if style == "text" else None, stop=list(DEFAULT_STOP), state=state,
            )

        overhead = self._tools_tokens(env, state)
        try:
            prompt, (text, reply) = ask_within(
                budget_for(self.llm), lambda: self.prompt(episode.head, episode.turns, step, overhead=overhead), call
            )
        except LLMError as exc:
            episode.error = str(infra_failure(exc))  # "llm_error: ..." on one line
            return False
        except ContextOverflow as exc:
            return _overflowed(episode, exc)
        budget_for(self.llm).observe(prompt, reply)
        _count([reply], episode)
        if style == "text" and not reply.tool_calls:
            text = f"Thought {step}:" + text
        tools = self.config.action_mode == "tools" and bool(reply.tool_calls)  # other modes: tool calls are text
        bad = next((tc for tc in reply.tool_calls if tc.error is not None), None) if tools else None
        if bad is not None:
            return self._bad_arguments(env, episode, step, prompt, reply, text, bad)
        record = env.step(reply_action(reply, env.actions, step) if tools else text)
        observation = self._observation(record)
        action_line = record.call.text if record.call is not None else None
        thought_action = text.strip() if record.call is None else _thought_action(text, step, action_line)
        episode.turns.append(_Turn(step, thought_action, observation))
        episode.traces.append(
            StepTrace(
                step=step,
                prompt_sha256=prompt_hash(prompt),
                prompt=_full(prompt) if self.config.trace_prompts == "full" else None,
                reply=reply.text if not reply.tool_calls else text,
                llm_seconds=round(reply.latency, 4),
                tokens_in=reply.usage_in,
                tokens_out=reply.usage_out,
                attempts=reply.attempts,
                **_record_fields(record, observation),
            )
        )
        if self._infra(env, record, episode):
            return False
        return not episode.repeated(record, self.config.max_repeats)

    def _tools_tokens(self, env: Any, state: Any) -> int:
        """Tools mode: the tokens of the tool schemas sent with the prompt (they take context too); else 0."""
        if self.config.action_mode != "tools":
            return 0
        import json

        from agent.llm.gbnf import state_tools
        from pyql.environment.actions import openai_tools

        tools = openai_tools(env.actions)
        tools = state_tools(tools, env.actions, state) if state is not None else tools
        return budget_for(self.llm).count(json.dumps(tools, ensure_ascii=False))

    def _bad_arguments(self, env: Any, episode: _Episode, step: int, prompt: Any, reply: Any, text: str, call: Any) -> bool:
        """A native tool call whose arguments are not JSON: not run; said, kept as sent, counted as a repeat.

        The observation says the arguments were not JSON (with the parser's
        message) and which parameters the action takes; the trace keeps the
        raw arguments (``reply`` and ``action``). The same call sent
        ``max_repeats`` more times stops the line, as a repeated failed action does.
        """
        raw = call.raw_arguments
        try:
            params = ", ".join(f'"{p.name}": ...' for p in env.actions.spec(call.name).params)
            shape = f"{{{params}}}"
        except PyQLError:  # an unknown action: the name is in the observation; no parameters to show
            shape = "{...} with the action's parameters"
        shown = raw if len(raw) <= 200 else f"{raw[:200]}... ({len(raw)} characters)"
        observation = (
            f"The arguments of your tool call {call.name} were not JSON ({call.error}): {shown!r}. "
            f"Nothing was run. Send the arguments as one JSON object: {shape}."
        )
        key = (call.name, raw)
        episode.bad_arguments[key] += 1
        episode.turns.append(_Turn(step, text.strip(), observation))
        episode.traces.append(StepTrace(
            step=step, prompt_sha256=prompt_hash(prompt), prompt=_full(prompt) if self.config.trace_prompts == "full" else None,
            reply=text, action=f"{call.name}({raw})", ok=False, error="tool_arguments_not_json", observation=observation,
            llm_seconds=round(reply.latency, 4), tokens_in=reply.usage_in, tokens_out=reply.usage_out, attempts=reply.attempts,
        ))
        if episode.bad_arguments[key] - 1 >= self.config.max_repeats:
            episode.stopped, episode.stopped_by = "repeated_mistake", "tool_arguments_not_json"
            return False
        return True

    def _state(self, env: Any) -> Any:
        """The episode's vocabulary for a state-aware grammar or tool enums (None: not used)."""
        if self.config.action_mode not in ("grammar", "tools") or not self.config.state_constraints or env.side != "sparql":
            return None
        from agent.llm.gbnf import StateVocabulary

        return StateVocabulary.from_env(env, rank=self._rank())

    def _rank(self) -> Any:
        """The relation ranker of the grammar's vocabulary and of choose mode's list (made once)."""
        from agent.methods.ranking import BM25Ranker

        if self._ranker is None:
            self._ranker = BM25Ranker().rank
        return self._ranker

    def _choose_step(self, env: Any, episode: _Episode, step: int) -> bool:
        """Choose mode: list the valid next steps, ask for a number, run that step (:mod:`agent.methods.choose`)."""
        from agent.methods.choose import ask_choice, choice_lines, forced_choice, table_observation

        choices = self._choices(env, episode)
        if episode.stopped or not choices:
            return False
        choices, scoring = self._model_ordered(env, episode, choices)
        if choices is None:
            return False
        last = episode.traces[-1] if episode.traces else None
        forced = forced_choice(choices, last.action if last is not None and last.ok else None) if env.side == "sql" else None
        if forced is not None:
            return self._take_without_call(env, episode, step, choices[0].action, forced, scoring)
        listing = f"Choices {step}:\n{choice_lines(choices, self.config.choice_preview)}\n"
        ending = (f"{listing}Choice {step}:", f"{listing}Answer with the number of the step to take.")
        grammar = getattr(getattr(self.llm, "config", None), "local", True)
        try:
            prompt, (picked, replies) = ask_within(
                budget_for(self.llm), lambda: self.prompt(episode.head, episode.turns, step, ending),
                lambda p: ask_choice(self.llm, p, len(choices), grammar=grammar),
            )
        except LLMError as exc:
            episode.error = str(infra_failure(exc))  # "llm_error: ..." on one line
            return False
        except ContextOverflow as exc:
            return _overflowed(episode, exc)
        budget_for(self.llm).observe(prompt, replies[0])
        _count(replies, episode)
        common = self._choice_fields(episode, prompt, replies, scoring)
        reply = replies[-1]
        if picked is None:
            return self._invalid_choice(episode, step, reply, len(choices), common)
        action = choices[picked - 1].action
        record = env.step(action)
        observation = self._observation(record)
        kept = table_observation(observation) if env.side == "sql" else observation
        episode.turns.append(_Turn(step, f"Action {step}: {action}", kept))
        fields = _record_fields(record, observation)
        fields["action"] = action
        episode.traces.append(StepTrace(**fields, **common))
        return not self._infra(env, record, episode) and not episode.repeated(record, self.config.max_repeats)

    def _take_without_call(self, env: Any, episode: _Episode, step: int, action: str, why: str, scoring: tuple[int, float]) -> bool:
        """Choose mode: a step that is no choice (:func:`agent.methods.choose.forced_choice`), taken without an LLM call.

        The trace says why (``without_call``); the prompt's history shows it as any other step.
        """
        from agent.methods.choose import table_observation

        record = env.step(action)
        observation = self._observation(record)
        episode.turns.append(_Turn(step, f"Action {step}: {action}", table_observation(observation) if env.side == "sql" else observation))
        fields = _record_fields(record, observation)
        fields["action"] = action
        episode.traces.append(StepTrace(
            step=len(episode.traces) + 1, prompt_sha256="", reply="", llm_seconds=round(scoring[1], 4),
            scoring_requests=scoring[0], without_call=why, **fields,
        ))
        return not self._infra(env, record, episode) and not episode.repeated(record, self.config.max_repeats)

    def _invalid_choice(self, episode: _Episode, step: int, reply: Any, n: int, common: dict[str, Any]) -> bool:
        """A reply with no number in range: traced, said, and counted as a repeat (False: the line stops)."""
        observation = f"Choose one of the numbers 1 to {n}."
        episode.invalid_choices += 1
        episode.turns.append(_Turn(step, f"Action {step}: {reply.text.strip()}", observation))
        episode.traces.append(StepTrace(action=None, ok=False, error="invalid_choice", observation=observation, **common))
        if episode.invalid_choices > self.config.max_repeats:
            episode.stopped, episode.stopped_by = "repeated_mistake", "invalid_choice"
            return False
        return True

    def _choices(self, env: Any, episode: _Episode) -> list[Any]:
        """Choose mode: the environment's own looks first (``auto_look``), then the steps to list."""
        from agent.methods.choose import auto_look, enumerate_choices

        if env.side == "sql":
            return self._table_choices(env, episode)
        if self.config.auto_look:
            for record in auto_look(env):
                episode.traces.append(_env_trace(len(episode.traces) + 1, record))
                if episode.repeated(record, self.config.max_repeats):  # a look that keeps failing ends the line too
                    return []
        return enumerate_choices(
            env, rank=self._rank(), limit=self.config.max_choices, per_argument=self.config.choice_relations,
            order=self.config.choice_order,
        )

    def _model_ordered(self, env: Any, episode: _Episode, choices: list[Any]) -> tuple[list[Any] | None, tuple[int, float]]:
        """With ``first_relation="model"``, before the first fact: the facts ordered by the model's PMI.

        Returns the choices (None when the scorer failed: ``episode.error`` says why) and
        the scorer's (requests, seconds) spent.
        """
        if env.side == "sql":
            spent, episode.scoring_pending = episode.scoring_pending, (0, 0.0)
            return choices, spent
        if self.config.first_relation != "model" or env.side != "sparql" or any(a.startswith("add_fact(") for a in env.query.actions()):
            return choices, (0, 0.0)
        from agent.llm.likelihood import ScorerError, local_scorer
        from agent.methods.choose import fact_relation, model_order

        pmi = self.scorer if self.scorer is not None else local_scorer()
        before = (pmi.requests, pmi.seconds)
        try:
            ordered = model_order(choices, pmi.scores(env.question, [fact_relation(c.action) for c in choices if c.kind == "fact"]))
        except ScorerError as exc:
            episode.error = f"llm_error: {exc}"
            return None, (0, 0.0)
        return ordered, (pmi.requests - before[0], pmi.seconds - before[1])

    def _table_choices(self, env: Any, episode: _Episode) -> list[Any]:
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
            return enumerate_table_choices(env, scores=scores, limit=min(self.config.max_choices, 8), preview=self.config.choice_preview)

        choices = listing(episode.column_scores)
        if self.config.first_relation != "model" or episode.column_scores is not None:
            return choices
        from pyql_sql.next_steps import scores_could_change

        why = scores_could_change(env, choices)
        if why is None:
            if episode.column_scoring is None:
                episode.column_scoring = {"scored": False, "why": "the question's words decided the first listed step"}
            return choices
        scores = self._column_scores(env, episode, why)
        return [] if episode.error else listing(scores)

    def _column_scores(self, env: Any, episode: _Episode, why: str) -> dict[str, float] | None:
        """The table's headers scored by the model's PMI (once a question; ``why``: what the scores may decide).

        The scores rank the answer columns and the numeric column of a number
        with no header next to it (:func:`pyql_sql.next_steps.table_next_steps`);
        their cost is traced with the next choice. A scorer failure ends the episode (``episode.error``).
        """
        from agent.llm.likelihood import ScorerError, local_scorer
        from pyql_sql.next_steps import column_words

        pmi = self.scorer if self.scorer is not None else local_scorer()
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

    def _choice_fields(self, episode: _Episode, prompt: Any, replies: list[Any], scoring: tuple[int, float]) -> dict[str, Any]:
        """The trace fields of a choose step that come from its LLM calls (and the scorer's)."""
        return {
            "step": len(episode.traces) + 1,
            "prompt_sha256": prompt_hash(prompt),
            "prompt": _full(prompt) if self.config.trace_prompts == "full" else None,
            "reply": replies[-1].text,
            "llm_seconds": round(sum(r.latency for r in replies) + scoring[1], 4),
            "tokens_in": sum(r.usage_in for r in replies),
            "tokens_out": sum(r.usage_out for r in replies),
            "attempts": sum(r.attempts for r in replies),
            "scoring_requests": scoring[0],
        }

    def _force_answer(self, env: Any, episode: _Episode, step: int) -> None:
        """At the step limit: ask which variable is the answer, set it and execute.

        A service failure on the way (the LLM after its retries, the KB) ends
        the episode as failed to run instead of forcing a guess.
        """
        if env.side == "agentbench":
            self._force_final_answer(env, episode, step)
            return
        variables = [str(v) for v in getattr(env.query, "variables", ())]
        head, turns, traces = episode.head, episode.turns, episode.traces
        if variables and hasattr(env.query, "set_answer"):
            ask = self._jinja.get_template("force_answer.j2").render(variables=variables, step=step)
            chosen = variables[-1]
            try:
                prompt, reply = ask_within(
                    budget_for(self.llm), lambda: self.prompt(head, turns, step, (ask, ask)),
                    lambda p: self.llm.complete(p, stop=[")", "\n"]),
                )
            except LLMError as exc:
                episode.error = str(infra_failure(exc))
                return
            except ContextOverflow as exc:
                _overflowed(episode, exc)
                return
            budget_for(self.llm).observe(prompt, reply)
            episode.calls += 1
            episode.tokens_in += reply.usage_in
            episode.tokens_out += reply.usage_out
            picked = reply.text.strip().split(")")[0].split()[:1]
            if picked and picked[0] in variables:
                chosen = picked[0]
            record = env.step(f"set_answer({chosen})")
            traces.append(_forced_trace(step, prompt, f"set_answer({chosen})", record))
            if self._infra(env, record, episode):
                return
            step += 1
        record = env.step("execute()")
        traces.append(_forced_trace(step, "", "execute()", record))
        self._infra(env, record, episode)

    def _force_final_answer(self, env: Any, episode: _Episode, step: int) -> None:
        """At the step limit with AgentBench's functions: answer with the last variable made (none: no answer)."""
        if not env.variables:
            return
        record = env.step(f"Final Answer: #{env.variables[-1].index}")
        episode.traces.append(_forced_trace(step, "", record.call.text if record.call is not None else record.text, record))
        self._infra(env, record, episode)


def _overflowed(episode: _Episode, exc: ContextOverflow) -> bool:
    """The prompt did not fit the model's context: the episode ends with ``context_overflow`` (scored as failed; False)."""
    episode.error = f"{exc.kind}: {one_line(str(exc), limit=len(str(exc)))}"
    return False


def _count(replies: list[Any], episode: _Episode) -> None:
    """Add the LLM calls and tokens of ``replies`` to the episode's totals."""
    episode.calls += len(replies)
    episode.tokens_in += sum(r.usage_in for r in replies)
    episode.tokens_out += sum(r.usage_out for r in replies)


def _record_fields(record: Any, observation: str) -> dict[str, Any]:
    """The trace fields of a step that come from the environment's record."""
    return {
        "action": record.call.text if record.call is not None else None,
        "ok": record.ok,
        "error": record.error,
        "observation": observation,
        "rule": record.error if record.guideline else None,
        "kb_queries": record.kb_queries,
        "kb_seconds": round(record.seconds, 6),
        "advice": record.advice,
        "escalation": record.escalation,
    }


def _forced_trace(step: int, prompt: Any, action: str, record: Any) -> StepTrace:
    return StepTrace(
        step=step,
        prompt_sha256=prompt_hash(prompt) if prompt else "",
        reply="",
        action=action,
        ok=record.ok,
        error=record.error,
        observation=record.observation,
        rule=record.error if record.guideline else None,
        kb_queries=record.kb_queries,
        kb_seconds=round(record.seconds, 6),
        forced=True,
        advice=record.advice,
        escalation=record.escalation,
    )


def _env_trace(step: int, record: Any) -> StepTrace:
    """A step the environment took itself (choose mode's looks): no LLM call."""
    return StepTrace(
        step=step,
        prompt_sha256="",
        reply="",
        action=record.call.text if record.call is not None else record.text,
        ok=record.ok,
        error=record.error,
        observation=record.observation,
        kb_queries=record.kb_queries,
        kb_seconds=round(record.seconds, 6),
        escalation=record.escalation,
    )


def _thought_action(text: str, step: int, action_line: str | None) -> str:
    """The Thought/Action pair as it goes back into the prompt (trailing text dropped)."""
    thought = ""
    for line in split_lines(text):
        stripped = line.strip()
        if stripped.lower().startswith("thought"):
            thought = stripped.split(":", 1)[1].strip() if ":" in stripped else ""
            break
    if not thought:
        first = split_lines(text.strip())[0] if text.strip() else ""
        thought = "" if first.lower().startswith("action") else first
    return f"Thought {step}: {thought}\nAction {step}: {action_line}"


def _action_line(turn: _Turn) -> str:
    """A turn as its summary shows it: its ``Action N:`` line (the thought dropped), else its reply's first line, cut."""
    lines = split_lines(turn.thought_action.strip())
    found = next((line for line in lines if line.strip().lower().startswith("action")), None)
    return found.strip() if found is not None else f"Action {turn.step}: " + one_line(lines[0] if lines else "", limit=80)


def _full(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in prompt)
