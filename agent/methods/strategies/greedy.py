"""The ``greedy`` strategy (``--method queryagent`` too): QueryAgent's loop, one step at a time, the policy's best candidate taken.

At step *i* the policy of the action mode (:mod:`agent.methods.policies`)
proposes candidates; the first is run on the environment; the policy
writes its history line and its trace; this repeats until the query is
executed or the step limit, where the side forces an answer
(:meth:`agent.methods.sides.Side.force_answer`: the LLM is asked which
variable answers, then ``execute()``). A service failure ends the episode
at once (failed to run); the same failed action ``max_repeats`` times
ends the line of action, and the agent answers with what it has.

The side is asked once, where the episode starts (:func:`agent.methods.sides.side_for`).
A linear run is a tree with one branch: each step's ``parent`` is the step
before it (:meth:`agent.methods.episode.Episode.add`).

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> llm = ScriptedLLM([
    ...     " Rachel's category.\\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
    ...     " That is the answer.\\nAction 2: execute()",
    ... ])
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> result = solve_greedy(llm, env, "what category is tropical storm rachel?", AgentConfig(feedback="raw"))
    >>> [a["label"] for a in result.answers], [(s.step, s.parent) for s in result.steps]
    (['Tropical storm (SSHS)'], [(1, None), (2, 1)])
"""

from __future__ import annotations

import time
from typing import Any

from agent.errors import ContextOverflow
from agent.faults import infra_failure, status_of
from agent.errors import LLMError
from agent.llm.replies import LLM
from agent.llm.likelihood import RelationPMI
from agent.methods.config import AgentConfig
from agent.methods.context_budget import ask_within, budget_for
from agent.methods.episode import AgentConfigError, AgentResult, Episode, Turn, prompt_templates, trace_tallies
from agent.methods.policies.registry import make as make_policy
from agent.methods.prompting import Prompter
from agent.methods.sides import Side, side_for
from agent.methods.strategies.registry import strategy

__all__ = ["QueryAgent", "solve_greedy"]


class QueryAgent:
    """The step-by-step agent (QueryAgent, Algorithm 1): the greedy strategy with the policy of ``config.action_mode``.

    Args:
        llm: any :class:`agent.llm.replies.LLM`.
        config: an :class:`~agent.methods.config.AgentConfig`.
        scorer: the model's relation scorer for ``first_relation="model"`` (an
            :class:`agent.llm.likelihood.RelationPMI`; None: the bundled model).
    """

    def __init__(self, llm: LLM, config: AgentConfig | None = None, scorer: Any = None) -> None:
        self.llm = llm
        self.config = config or AgentConfig()
        self.scorer = scorer
        self.policy = make_policy(self.config.action_mode, llm, self.config, scorer)
        self.prompter = Prompter(llm, self.config.prompt_style, self.config.token_budget, self.config.keep_observation)
        self._jinja = prompt_templates()

    def head(self, env: Any, question: str) -> str:
        """The fixed part of the prompt: task, action docs, example, question (the policy's, for the environment's side)."""
        return str(self.policy.head(env, side_for(env), question))

    def prompt(self, head: str, turns: list[Turn], step: int, ending: tuple[str, str] | None = None, overhead: int = 0) -> Any:
        """The prompt for ``step`` within the context budget (:meth:`agent.methods.prompting.Prompter.prompt`).

        Raises:
            ContextOverflow: the prompt does not fit even so.
        """
        return self.prompter.prompt(head, turns, step, ending, overhead, thought=getattr(self.policy, "thought", True))

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
        episode = Episode(head=self.policy.head(env, side, question), side=side)
        for step in range(1, self.config.max_steps + 1):
            if not self.step(env, episode, step):
                break
            if env.done:
                break
        if not env.done and episode.error is None:
            episode.forced = True
            self.force_answer(env, episode, len(episode.traces) + 1)
        return self.result(env, episode, question, started)

    def step(self, env: Any, episode: Episode, step: int) -> bool:
        """The policy's proposal, its best candidate run; False when the episode must end here.

        It ends when the policy ended it (the LLM failed, the prompt does not
        fit, a repeated invalid reply), when the step failed on a service, or
        when the same failed action came back ``max_repeats`` times
        (``episode.stopped``; the agent then answers with what it has).
        """
        proposal = self.policy.propose(env, episode, step)
        if not proposal.candidates:
            return bool(proposal.go_on)
        candidate = proposal.candidates[0]
        record = env.step(candidate.action)
        turn, trace = self.policy.taken(env, episode, step, proposal, candidate, record)
        episode.turns.append(turn)
        episode.add(trace)
        if episode.failed_on_service(record, episode.side.infra_kb(env)):
            return False
        return not episode.repeated(record, self.config.max_repeats)

    def force_answer(self, env: Any, episode: Episode, step: int) -> None:
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

        side: Side = episode.side
        side.force_answer(env, episode, step, ask)

    def result(self, env: Any, episode: Episode, question: str, started: float) -> AgentResult:
        """The episode's outcome: the answers (none after an error), every step traced, the counters."""
        final = env.final_result()
        traces = episode.traces
        return AgentResult(
            question=question,
            answers=final.answers if env.done and episode.error is None else [],
            steps=traces,
            done=env.done,
            forced=episode.forced,
            query=final.query,
            chain=episode.side.chain(env),
            llm_calls=episode.calls,
            tokens_in=episode.tokens_in,
            tokens_out=episode.tokens_out,
            kb_queries=int(env.counters["kb_queries"]),
            seconds=time.perf_counter() - started,
            error=episode.error,
            status=status_of(episode.error),
            **trace_tallies(traces),
            stopped=episode.stopped,
            stopped_by=episode.stopped_by,
            extra={"column_scoring": episode.column_scoring} if episode.column_scoring is not None else {},
        )


@strategy(
    "greedy",
    aliases=("queryagent",),
    description="step by step, the policy's best action taken at every step, with ERASER's feedback",
    cites="QueryAgent (Huang et al., 2024), Algorithm 1",
    rank=10,
)
def solve_greedy(llm: Any, env: Any, question: str, config: AgentConfig) -> AgentResult:
    """Answer with :class:`QueryAgent`; a recorded or replayed relation scorer of the LLM (:mod:`agent.llm.recording`) is used."""
    scorer = getattr(llm, "relation_scorer", None)
    return QueryAgent(llm, config, scorer=scorer if isinstance(scorer, RelationPMI) else None).run(env, question)
