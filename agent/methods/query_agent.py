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
    >>> from agent.llm.client import ScriptedLLM
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
from dataclasses import dataclass
from typing import Any

from agent.errors import ContextOverflow
from agent.faults import FAILED_TO_RUN, FINISHED, INFRA_KINDS, error_kind, infra_failure
from agent.llm.client import DEFAULT_STOP, LLM, LLMError, complete_action, reply_action
from agent.methods.context_budget import ask_within, budget_for
from agent.methods.episode import (
    TEMPLATE_VERSION,
    AgentConfigError,
    AgentResult,
    Episode,
    StepTrace,
    Turn,
    load_example,
    observation_of,
    prompt_hash,
    prompt_templates,
    record_fields,
)
from agent.methods.prompting import Prompter, full_prompt, thought_action
from agent.methods.sides import Side, side_for
from grammars.vocabulary import FEEDBACK_MODES
from pyql.errors import PyQLError

__all__ = ["AgentConfig", "AgentConfigError", "QueryAgent", "AgentResult", "StepTrace", "load_example", "prompt_templates", "FEEDBACK_MODES", "TEMPLATE_VERSION"]

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


class QueryAgent:
    """The step-by-step agent (QueryAgent, Algorithm 1).

    Args:
        llm: any :class:`agent.llm.client.LLM`.
        config: an :class:`AgentConfig`.
    """

    def __init__(self, llm: LLM, config: AgentConfig | None = None, scorer: Any = None) -> None:
        self.llm = llm
        self.config = config or AgentConfig()
        self.scorer = scorer  # an agent.llm.likelihood.RelationPMI for first_relation="model" (None: the bundled model)
        self._jinja = prompt_templates()
        self._prompter = Prompter(llm, self.config.prompt_style, self.config.token_budget, self.config.keep_observation)
        self._ranker: Any = None

    # -- prompt ----------------------------------------------------------------
    def _style(self) -> str:
        return self._prompter.style()

    def head(self, env: Any, question: str) -> str:
        """The fixed part of the prompt: task, action docs, example, question.

        The template and the default one-shot example follow the environment's side (:mod:`agent.methods.sides`).
        """
        side = side_for(env)
        if self.config.action_mode == "choose":
            return side.choose_head(env, question, self.config.example, self._jinja)
        return side.written_head(env, question, self.config.example, self._jinja)

    def prompt(self, head: str, turns: list[Turn], step: int, ending: tuple[str, str] | None = None, overhead: int = 0) -> Any:
        """The prompt for ``step`` within the context budget (:meth:`agent.methods.prompting.Prompter.prompt`).

        Raises:
            ContextOverflow: the prompt does not fit even so.
        """
        return self._prompter.prompt(head, turns, step, ending, overhead, thought=self.config.action_mode != "choose")

    # -- the loop --------------------------------------------------------------
    def _observation(self, record: Any) -> str:
        return observation_of(record, self.config.feedback)

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
        side = side_for(env)  # the one place the side is asked
        episode = Episode(head=self.head(env, question))
        for step in range(1, self.config.max_steps + 1):
            if not self._step(env, side, episode, step):
                break
            if env.done:
                break
        if not env.done and episode.error is None:
            episode.forced = True
            self._force_answer(env, side, episode, len(episode.traces) + 1)
        final = env.final_result()
        return AgentResult(
            question=question,
            answers=final.answers if env.done and episode.error is None else [],
            steps=episode.traces,
            done=env.done,
            forced=episode.forced,
            query=final.query,
            chain=side.chain(env),
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

    def _infra(self, env: Any, side: Side, record: Any, episode: Episode) -> bool:
        """Whether the step failed on a service (then the episode ends with the failure as its error)."""
        return episode.failed_on_service(record, side.infra_kb(env))

    def _step(self, env: Any, side: Side, episode: Episode, step: int) -> bool:
        """One LLM call and the action it wrote; False when the episode must end here.

        It ends when the LLM failed (``episode.error``) or when the same failed
        action came back ``max_repeats`` times (``episode.stopped``; the agent
        then answers with what it has). A native tool call goes to the
        environment as the structured call (:func:`agent.llm.client.reply_action`);
        its ``Action N:`` line is what the prompt and the trace show.
        """
        if self.config.action_mode == "choose":
            return self._choose_step(env, side, episode, step)
        style = self._style()
        state = self._state(env, side)

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
            return episode.overflowed(exc)
        budget_for(self.llm).observe(prompt, reply)
        episode.count([reply])
        if style == "text" and not reply.tool_calls:
            text = f"Thought {step}:" + text
        tools = self.config.action_mode == "tools" and bool(reply.tool_calls)  # other modes: tool calls are text
        bad = next((tc for tc in reply.tool_calls if tc.error is not None), None) if tools else None
        if bad is not None:
            return self._bad_arguments(env, episode, step, prompt, reply, text, bad)
        record = env.step(reply_action(reply, env.actions, step) if tools else text)
        observation = self._observation(record)
        written = text.strip() if record.call is None else thought_action(text, step, record.call.text)
        episode.turns.append(Turn(step, written, observation))
        episode.add(
            StepTrace(
                step=step,
                prompt_sha256=prompt_hash(prompt),
                prompt=full_prompt(prompt) if self.config.trace_prompts == "full" else None,
                reply=reply.text if not reply.tool_calls else text,
                llm_seconds=round(reply.latency, 4),
                tokens_in=reply.usage_in,
                tokens_out=reply.usage_out,
                attempts=reply.attempts,
                **record_fields(record, observation),
            )
        )
        if self._infra(env, side, record, episode):
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

    def _bad_arguments(self, env: Any, episode: Episode, step: int, prompt: Any, reply: Any, text: str, call: Any) -> bool:
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
        episode.turns.append(Turn(step, text.strip(), observation))
        episode.add(StepTrace(
            step=step, prompt_sha256=prompt_hash(prompt), prompt=full_prompt(prompt) if self.config.trace_prompts == "full" else None,
            reply=text, action=f"{call.name}({raw})", ok=False, error="tool_arguments_not_json", observation=observation,
            llm_seconds=round(reply.latency, 4), tokens_in=reply.usage_in, tokens_out=reply.usage_out, attempts=reply.attempts,
        ))
        if episode.bad_arguments[key] - 1 >= self.config.max_repeats:
            episode.stopped, episode.stopped_by = "repeated_mistake", "tool_arguments_not_json"
            return False
        return True

    def _state(self, env: Any, side: Side) -> Any:
        """The episode's vocabulary for a state-aware grammar or tool enums (None: not used)."""
        if self.config.action_mode not in ("grammar", "tools") or not self.config.state_constraints or not side.state_vocabulary:
            return None
        from agent.llm.gbnf import StateVocabulary

        return StateVocabulary.from_env(env, rank=self._rank())

    def _rank(self) -> Any:
        """The relation ranker of the grammar's vocabulary and of choose mode's list (made once)."""
        from agent.methods.ranking import BM25Ranker

        if self._ranker is None:
            self._ranker = BM25Ranker().rank
        return self._ranker

    def _choose_step(self, env: Any, side: Side, episode: Episode, step: int) -> bool:
        """Choose mode: list the valid next steps, ask for a number, run that step (:mod:`agent.methods.choose`)."""
        from agent.methods.choose import ask_choice, choice_lines

        choices = side.choices(env, episode, self.config, self._rank(), self.scorer)
        if episode.stopped or not choices:
            return False
        choices, scoring = side.ordered(env, episode, choices, self.config, self.scorer)
        if choices is None:
            return False
        last = episode.traces[-1] if episode.traces else None
        forced = side.forced_choice(choices, last.action if last is not None and last.ok else None)
        if forced is not None:
            return self._take_without_call(env, side, episode, step, choices[0].action, forced, scoring)
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
            return episode.overflowed(exc)
        budget_for(self.llm).observe(prompt, replies[0])
        episode.count(replies)
        common = self._choice_fields(episode, prompt, replies, scoring)
        reply = replies[-1]
        if picked is None:
            return self._invalid_choice(episode, step, reply, len(choices), common)
        action = choices[picked - 1].action
        record = env.step(action)
        observation = self._observation(record)
        episode.turns.append(Turn(step, f"Action {step}: {action}", side.choice_observation(observation)))
        fields = record_fields(record, observation)
        fields["action"] = action
        episode.add(StepTrace(**fields, **common))
        return not self._infra(env, side, record, episode) and not episode.repeated(record, self.config.max_repeats)

    def _take_without_call(self, env: Any, side: Side, episode: Episode, step: int, action: str, why: str, scoring: tuple[int, float]) -> bool:
        """Choose mode: a step that is no choice (:func:`agent.methods.choose.forced_choice`), taken without an LLM call.

        The trace says why (``without_call``); the prompt's history shows it as any other step.
        """
        record = env.step(action)
        observation = self._observation(record)
        episode.turns.append(Turn(step, f"Action {step}: {action}", side.choice_observation(observation)))
        fields = record_fields(record, observation)
        fields["action"] = action
        episode.add(StepTrace(
            step=len(episode.traces) + 1, prompt_sha256="", reply="", llm_seconds=round(scoring[1], 4),
            scoring_requests=scoring[0], without_call=why, **fields,
        ))
        return not self._infra(env, side, record, episode) and not episode.repeated(record, self.config.max_repeats)

    def _invalid_choice(self, episode: Episode, step: int, reply: Any, n: int, common: dict[str, Any]) -> bool:
        """A reply with no number in range: traced, said, and counted as a repeat (False: the line stops)."""
        observation = f"Choose one of the numbers 1 to {n}."
        episode.invalid_choices += 1
        episode.turns.append(Turn(step, f"Action {step}: {reply.text.strip()}", observation))
        episode.add(StepTrace(action=None, ok=False, error="invalid_choice", observation=observation, **common))
        if episode.invalid_choices > self.config.max_repeats:
            episode.stopped, episode.stopped_by = "repeated_mistake", "invalid_choice"
            return False
        return True

    def _choice_fields(self, episode: Episode, prompt: Any, replies: list[Any], scoring: tuple[int, float]) -> dict[str, Any]:
        """The trace fields of a choose step that come from its LLM calls (and the scorer's)."""
        return {
            "step": len(episode.traces) + 1,
            "prompt_sha256": prompt_hash(prompt),
            "prompt": full_prompt(prompt) if self.config.trace_prompts == "full" else None,
            "reply": replies[-1].text,
            "llm_seconds": round(sum(r.latency for r in replies) + scoring[1], 4),
            "tokens_in": sum(r.usage_in for r in replies),
            "tokens_out": sum(r.usage_out for r in replies),
            "attempts": sum(r.attempts for r in replies),
            "scoring_requests": scoring[0],
        }

    def _force_answer(self, env: Any, side: Side, episode: Episode, step: int) -> None:
        """At the step limit: the side forces an answer (:meth:`agent.methods.sides.Side.force_answer`), asking the LLM
        which variable is the answer where it needs to.

        A service failure on the way (the LLM after its retries, the KB) ends
        the episode as failed to run instead of forcing a guess.
        """
        head, turns = episode.head, episode.turns

        def ask(variables: list[str]) -> tuple[Any, str] | None:
            question = self._jinja.get_template("force_answer.j2").render(variables=variables, step=step)
            chosen = variables[-1]
            try:
                prompt, reply = ask_within(
                    budget_for(self.llm), lambda: self.prompt(head, turns, step, (question, question)),
                    lambda p: self.llm.complete(p, stop=[")", "\n"]),
                )
            except LLMError as exc:
                episode.error = str(infra_failure(exc))
                return None
            except ContextOverflow as exc:
                episode.overflowed(exc)
                return None
            budget_for(self.llm).observe(prompt, reply)
            episode.count([reply])
            picked = reply.text.strip().split(")")[0].split()[:1]
            if picked and picked[0] in variables:
                chosen = picked[0]
            return prompt, chosen

        side.force_answer(env, episode, step, ask)


#: The former name of :func:`agent.methods.prompting.thought_action` (tests import it from here).
_thought_action = thought_action
