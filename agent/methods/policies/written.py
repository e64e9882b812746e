"""What the three written-action modes share: the LLM writes one action, in text, as a tool call or under a grammar.

:class:`WrittenAction` asks the LLM once per step (:func:`agent.llm.decoding.complete_action`
with the mode's request: nothing for ``text``, the action set's tool schemas
for ``tools``, a GBNF grammar for ``grammar``) and proposes the one action it
wrote: a list of one candidate, scored None. A native tool call goes to the
environment as the structured call (:func:`agent.llm.decoding.reply_action`);
its ``Action N:`` line is what the prompt and the trace show. A tool call
whose arguments are not JSON is not run: the policy says so in the history
and the trace, and counts the repeats (:meth:`WrittenAction.propose`).

The modes themselves are the modules ``text.py``, ``tools.py`` and
``grammar.py`` of this package, each a subclass naming its request.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.config import LLMConfig; from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> from agent.methods.episode import Episode
    >>> from agent.methods.sides import side_for
    >>> from agent.methods.policies.registry import make
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    >>> llm = ScriptedLLM([" Look first.\\nAction 1: get_relation(m.0crbvqz)"], config=LLMConfig(mode="completion"))
    >>> policy = make("text", llm, AgentConfig(feedback="raw"))
    >>> episode = Episode(head=policy.head(env, side_for(env), "what category is rachel?"), side=side_for(env))
    >>> proposal = policy.propose(env, episode, 1)
    >>> [c.action for c in proposal.candidates], proposal.reply
    (['Thought 1: Look first.\\nAction 1: get_relation(m.0crbvqz)'], 'Thought 1: Look first.\\nAction 1: get_relation(m.0crbvqz)')
    >>> turn, trace = policy.taken(env, episode, 1, proposal, proposal.candidates[0], env.step(proposal.candidates[0].action))
    >>> turn.thought_action, trace.action, trace.ok
    ('Thought 1: Look first.\\nAction 1: get_relation(m.0crbvqz)', 'get_relation(m.0crbvqz)', True)
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from agent.errors import ContextOverflow
from agent.faults import infra_failure
from agent.errors import LLMError
from agent.llm.config import DEFAULT_STOP
from agent.llm.decoding import complete_action, reply_action
from agent.methods.context_budget import ask_within, budget_for
from agent.methods.episode import Episode, StepTrace, Turn, observation_of, prompt_hash, record_fields
from agent.methods.policies.registry import BasePolicy, Candidate, Proposal
from agent.methods.prompting import full_prompt, thought_action
from pyql.errors import PyQLError

__all__ = ["WrittenAction"]


class WrittenAction(BasePolicy):
    """The LLM writes the action (see the module docstring); a subclass names its request (``mode``)."""

    #: the request of :func:`agent.llm.decoding.complete_action`: ``text``, ``tools`` or ``grammar``
    mode: ClassVar[str] = "text"

    def head(self, env: Any, side: Any, question: str) -> str:
        """The side's written-action prompt (:meth:`agent.methods.sides.Side.written_head`)."""
        return str(side.written_head(env, question, self.config.example, self.templates))

    def propose(self, env: Any, episode: Episode, step: int) -> Proposal:
        """One LLM call; the action it wrote, as a list of one candidate.

        No candidate when the LLM failed (``episode.error``), the prompt does
        not fit the context (``context_overflow``), or a tool call's
        arguments are not JSON (said in the history; ``go_on`` False once the
        same call came back ``max_repeats`` times).
        """
        style = self.prompter.style()
        state = self.state(env, episode.side)

        def call(prompt: Any) -> tuple[str, Any]:
            return complete_action(
                self.llm, prompt, env.actions, mode=self.mode, step=step,
                resume="thought" if style == "text" else None, stop=list(DEFAULT_STOP), state=state,
            )

        overhead = self.tools_tokens(env, state)
        try:
            prompt, (text, reply) = ask_within(
                budget_for(self.llm), lambda: self.prompter.prompt(episode.head, episode.turns, step, overhead=overhead), call
            )
        except LLMError as exc:
            episode.error = str(infra_failure(exc))  # "llm_error: ..." on one line
            return Proposal(outcome="llm_error")
        except ContextOverflow as exc:
            return Proposal(outcome="context_overflow", go_on=episode.overflowed(exc))
        budget_for(self.llm).observe(prompt, reply)
        episode.count([reply])
        if style == "text" and not reply.tool_calls:
            text = f"Thought {step}:" + text
        fields = {
            "prompt_sha256": prompt_hash(prompt),
            "prompt": full_prompt(prompt) if self.config.trace_prompts == "full" else None,
            "reply": reply.text if not reply.tool_calls else text,
            "llm_seconds": round(reply.latency, 4),
            "tokens_in": reply.usage_in,
            "tokens_out": reply.usage_out,
            "attempts": reply.attempts,
        }
        tools = self.mode == "tools" and bool(reply.tool_calls)  # other modes: tool calls are text
        bad = next((tc for tc in reply.tool_calls if tc.error is not None), None) if tools else None
        if bad is not None:
            return self.bad_arguments(env, episode, step, fields, text, bad)
        action = reply_action(reply, env.actions, step) if tools else text
        return Proposal([Candidate(action)], fields=fields, prompt=prompt, reply=text)

    def taken(self, env: Any, episode: Episode, step: int, proposal: Proposal, candidate: Candidate, record: Any) -> tuple[Turn, StepTrace]:
        """The reply's Thought/Action pair (trailing text dropped; the reply as written when no action was read) and the step's trace."""
        observation = observation_of(record, self.config.feedback)
        written = proposal.reply.strip() if record.call is None else thought_action(proposal.reply, step, record.call.text)
        return Turn(step, written, observation), StepTrace(step=step, **proposal.fields, **record_fields(record, observation))

    def state(self, env: Any, side: Any) -> Any:
        """The episode's vocabulary for a state-aware grammar or tool enums (None: not used)."""
        if self.mode not in ("grammar", "tools") or not self.config.state_constraints or not side.state_vocabulary:
            return None
        from agent.llm.gbnf import StateVocabulary

        return StateVocabulary.from_env(env, rank=self.rank())

    def tools_tokens(self, env: Any, state: Any) -> int:
        """Tools mode: the tokens of the tool schemas sent with the prompt (they take context too); else 0."""
        if self.mode != "tools":
            return 0
        from agent.llm.gbnf import state_tools
        from pyql.environment.actions import openai_tools

        tools = openai_tools(env.actions)
        tools = state_tools(tools, env.actions, state) if state is not None else tools
        return budget_for(self.llm).count(json.dumps(tools, ensure_ascii=False))

    def bad_arguments(self, env: Any, episode: Episode, step: int, fields: dict[str, Any], text: str, call: Any) -> Proposal:
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
            step=step, **{**fields, "reply": text}, action=f"{call.name}({raw})", ok=False,
            error="tool_arguments_not_json", observation=observation,
        ))
        go_on = episode.bad_arguments[key] - 1 < self.config.max_repeats
        if not go_on:
            episode.stopped, episode.stopped_by = "repeated_mistake", "tool_arguments_not_json"
        return Proposal(fields=fields, reply=text, outcome="tool_arguments_not_json", go_on=go_on)
