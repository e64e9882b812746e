"""The settings of the step-by-step agent: :class:`AgentConfig`, read by its policies and strategies.

Example:
    >>> AgentConfig(action_mode="choose").max_choices
    6
    >>> AgentConfig(action_mode="guess")
    Traceback (most recent call last):
    ...
    agent.errors.AgentConfigError: unknown action mode 'guess'; use text, tools, grammar or choose
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.errors import AgentConfigError
from agent.methods.policies.registry import names as policy_names, or_list
from grammars.vocabulary import FEEDBACK_MODES

__all__ = ["AgentConfig"]


@dataclass
class AgentConfig:
    """Settings of the QueryAgent loop.

    Attributes:
        max_steps: actions the LLM may take before it is asked to choose an answer.
        action_mode: the policy that proposes each step, by its name in the
            registry (:mod:`agent.methods.policies`): "text" (the paper's
            Thought/Action text), "tools" (native tool calls), "grammar"
            (grammar-constrained decoding, llama.cpp) or "choose" (pick one of
            the enumerated valid next steps by number, :mod:`agent.methods.choose`;
            KB and table sides), or one registered with ``@policy``.
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
        if self.action_mode not in policy_names():
            raise AgentConfigError(f"unknown action mode {self.action_mode!r}; use {or_list(policy_names())}")
        if self.prompt_style not in ("auto", "text", "chat"):
            raise AgentConfigError(f"unknown prompt style {self.prompt_style!r}; use auto, text or chat")
        if self.max_steps < 1:
            raise AgentConfigError(f"max_steps must be ≥ 1, got {self.max_steps}")
        if self.first_relation not in ("ranked", "model"):
            raise AgentConfigError(f"unknown first_relation {self.first_relation!r}; use ranked or model")
        if self.max_repeats < 1:
            raise AgentConfigError(f"max_repeats must be ≥ 1, got {self.max_repeats}")
