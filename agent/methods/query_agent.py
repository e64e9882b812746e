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
Each step is proposed by the policy of the action mode
(:mod:`agent.methods.policies`: text, tools, grammar, choose); the side is
asked once, where the episode starts (:mod:`agent.methods.sides`). The
loop is the ``greedy`` strategy (:mod:`agent.methods.strategies.greedy`,
``--method greedy``, or ``queryagent``); this module is its public face.

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

from agent.methods.config import AgentConfig
from agent.methods.episode import TEMPLATE_VERSION, AgentConfigError, AgentResult, StepTrace, load_example, prompt_templates
from agent.methods.prompting import thought_action as _thought_action  # noqa: F401 (its former name; tests import it from here)
from agent.methods.strategies.greedy import QueryAgent
from grammars.vocabulary import FEEDBACK_MODES

__all__ = ["AgentConfig", "AgentConfigError", "QueryAgent", "AgentResult", "StepTrace", "load_example", "prompt_templates", "FEEDBACK_MODES", "TEMPLATE_VERSION"]
