"""The ``choose`` action mode: the LLM picks one of the valid next steps, listed and numbered.

At each step the side lists the steps (:meth:`agent.methods.sides.Side.choices`:
on a KB the environment's own looks first, each a traced step, then the
verified next steps ranked against the question; on a table the grounded
steps, the headers scored by the model where that could matter), orders
them (the model's PMI of a KB's first facts, ``first_relation="model"``),
and the LLM answers with a number (:func:`agent.methods.choose.ask_choice`;
on a local llama.cpp server constrained to the listed numbers). The
proposal's candidates are the listed steps, the picked one first, then the
others in the listed order (the list's order is its ranking); a fact the
model scored (``first_relation="model"``) has its PMI as its score, the
others None. A step that is no choice (:meth:`agent.methods.sides.Side.forced_choice`)
is proposed without asking (``without_call``); a reply with no number in
range is said in the history and counted as a repeat.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> from agent.methods.episode import Episode
    >>> from agent.methods.sides import side_for
    >>> from agent.methods.policies.registry import make
    >>> env = SparqlEnvironment(KB.open("demo"), question="what category is rachel?", entities={"Rachel": "m.0crbvqz"})
    >>> policy = make("choose", ScriptedLLM(["1"]), AgentConfig(action_mode="choose", feedback="raw"))
    >>> episode = Episode(head=policy.head(env, side_for(env), env.question), side=side_for(env))
    >>> proposal = policy.propose(env, episode, 1)
    >>> [t.action for t in episode.traces], proposal.candidates[0].action
    (['get_relation(m.0crbvqz)'], 'add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)')
"""

from __future__ import annotations

from typing import Any

from agent.errors import ContextOverflow
from agent.faults import infra_failure
from agent.errors import LLMError
from agent.methods.choose import ask_choice, choice_lines
from agent.methods.context_budget import ask_within, budget_for
from agent.methods.episode import Episode, StepTrace, Turn, observation_of, prompt_hash, record_fields
from agent.methods.policies.registry import BasePolicy, Candidate, Proposal, policy
from agent.methods.prompting import full_prompt

__all__ = ["ChooseStep"]


@policy("choose", help="pick one of the valid next steps by number", sides=("sparql", "sql"), rank=40)
class ChooseStep(BasePolicy):
    """The choose mode (see the module docstring)."""

    thought = False  # its prompts end with the list, never ``Thought N:``

    def head(self, env: Any, side: Any, question: str) -> str:
        """The side's choose prompt (:meth:`agent.methods.sides.Side.choose_head`)."""
        return str(side.choose_head(env, question, self.config.example, self.templates))

    def propose(self, env: Any, episode: Episode, step: int) -> Proposal:
        """List the steps, ask for a number; the steps, the picked one first.

        Long because: each way a step ends without a choice (looks, the list, the scorer, the LLM, the reply) is a branch.
        """
        side, before = episode.side, len(episode.traces)
        choices = side.choices(env, episode, self.config, self.rank(), self.scorer)
        looks = [t for t in episode.traces[before:]]
        if episode.stopped or not choices:
            return Proposal(outcome="ended", looks=looks)
        choices, scoring, scores = side.ordered(env, episode, choices, self.config, self.scorer)
        if choices is None:
            return Proposal(outcome="ended", looks=looks)
        last = episode.traces[-1] if episode.traces else None
        forced = side.forced_choice(choices, last.action if last is not None and last.ok else None)
        if forced is not None:
            fields = {"prompt_sha256": "", "reply": "", "llm_seconds": round(scoring[1], 4), "scoring_requests": scoring[0], "without_call": forced}
            return Proposal(self._candidates(choices, scores, 1, forced), fields=fields, looks=looks)
        listing = f"Choices {step}:\n{choice_lines(choices, self.config.choice_preview)}\n"
        ending = (f"{listing}Choice {step}:", f"{listing}Answer with the number of the step to take.")
        grammar = getattr(getattr(self.llm, "config", None), "local", True)
        try:
            prompt, (picked, replies) = ask_within(
                budget_for(self.llm), lambda: self.prompter.prompt(episode.head, episode.turns, step, ending, thought=False),
                lambda p: ask_choice(self.llm, p, len(choices), grammar=grammar),
            )
        except LLMError as exc:
            episode.error = str(infra_failure(exc))  # "llm_error: ..." on one line
            return Proposal(outcome="llm_error", looks=looks)
        except ContextOverflow as exc:
            return Proposal(outcome="context_overflow", go_on=episode.overflowed(exc), looks=looks)
        budget_for(self.llm).observe(prompt, replies[0])
        episode.count(replies)
        fields = self._fields(prompt, replies, scoring)
        reply = replies[-1]
        if picked is None:
            return self._invalid_choice(episode, step, reply, len(choices), fields, looks)
        return Proposal(self._candidates(choices, scores, picked), fields=fields, prompt=prompt, reply=reply.text, looks=looks)

    def taken(self, env: Any, episode: Episode, step: int, proposal: Proposal, candidate: Candidate, record: Any) -> tuple[Turn, StepTrace]:
        """``Action N: <the step>`` and the observation as the side keeps it (:meth:`~agent.methods.sides.Side.choice_observation`);
        the trace has the whole observation, numbered by its place in the episode's traces."""
        observation = observation_of(record, self.config.feedback)
        turn = Turn(step, f"Action {step}: {candidate.action}", episode.side.choice_observation(observation))
        fields = record_fields(record, observation)
        fields["action"] = candidate.action
        return turn, StepTrace(step=len(episode.traces) + 1, **fields, **proposal.fields)

    @staticmethod
    def _candidates(choices: list[Any], scores: dict[str, float], picked: int, without_call: str | None = None) -> list[Candidate]:
        """The listed steps as candidates: the picked one (1-based) first, then the others in the listed order; a step
        the model scored has its score."""
        order = [picked - 1] + [i for i in range(len(choices)) if i != picked - 1]
        return [
            Candidate(choices[i].action, scores.get(choices[i].action), choices[i].kind, choices[i].preview,
                      without_call if i == picked - 1 else None)
            for i in order
        ]

    def _fields(self, prompt: Any, replies: list[Any], scoring: tuple[int, float]) -> dict[str, Any]:
        """The trace fields of a choose step that come from its LLM calls (and the scorer's)."""
        return {
            "prompt_sha256": prompt_hash(prompt),
            "prompt": full_prompt(prompt) if self.config.trace_prompts == "full" else None,
            "reply": replies[-1].text,
            "llm_seconds": round(sum(r.latency for r in replies) + scoring[1], 4),
            "tokens_in": sum(r.usage_in for r in replies),
            "tokens_out": sum(r.usage_out for r in replies),
            "attempts": sum(r.attempts for r in replies),
            "scoring_requests": scoring[0],
        }

    def _invalid_choice(self, episode: Episode, step: int, reply: Any, n: int, fields: dict[str, Any], looks: list[Any]) -> Proposal:
        """A reply with no number in range: traced, said, and counted as a repeat (``go_on`` False: the line stops)."""
        observation = f"Choose one of the numbers 1 to {n}."
        episode.invalid_choices += 1
        episode.turns.append(Turn(step, f"Action {step}: {reply.text.strip()}", observation))
        episode.add(StepTrace(step=len(episode.traces) + 1, action=None, ok=False, error="invalid_choice", observation=observation, **fields))
        go_on = episode.invalid_choices <= self.config.max_repeats
        if not go_on:
            episode.stopped, episode.stopped_by = "repeated_mistake", "invalid_choice"
        return Proposal(fields=fields, reply=reply.text, outcome="invalid_choice", go_on=go_on, looks=looks)
