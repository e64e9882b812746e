"""The scripted Rachel episode the agent tests replay: the demo KB's question, its entity and a correct reply script.

A :class:`~agent.llm.scripted.ScriptedLLM` given :data:`CORRECT` answers the
question step by step, one reply per call, as a model that makes no mistake
would (the ERASER feedback of the agent on, unless asked otherwise).

Example:
    >>> from pyql.kb import KB
    >>> env = env_for(KB.open("demo"))
    >>> env.question == QUESTION, len(CORRECT), CORRECT[-1].endswith("execute()")
    (True, 9, True)
"""

from __future__ import annotations

from agent.evaluation.environments import feedback_options
from pyql.kb import KB
from pyql.environment.sparql import SparqlEnvironment

__all__ = ["CORRECT", "QUESTION", "RACHEL", "env_for"]

QUESTION = "which was the most recently formed cyclone that is in the same category as tropical storm rachel?"
RACHEL = {"Tropical Storm Rachel": "m.0crbvqz"}
#: A correct completion-mode reply per step: a thought, then the action.
CORRECT = [
    " I need Rachel's relations.\nAction 1: get_relation(m.0crbvqz)",
    " The category relation.\nAction 2: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
    " Relations of the category.\nAction 3: get_relation(?category)",
    " Cyclones of that category.\nAction 4: add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
    " Relations of the cyclones.\nAction 5: get_relation(?cyclone)",
    " Formed time.\nAction 6: add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)",
    " Latest.\nAction 7: add_max(?time)",
    " Answer.\nAction 8: set_answer(?cyclone)",
    " Done.\nAction 9: execute()",
]


def env_for(kb: KB, feedback: str = "eraser") -> SparqlEnvironment:
    """The Rachel question on ``kb``, its analyzer fixed for the agent's ``feedback`` mode when it is built.

    Example:
        >>> env_for(KB.open("demo"), "raw").question == QUESTION
        True
    """
    return SparqlEnvironment(kb, question=QUESTION, entities=RACHEL, **feedback_options(feedback, agent=True))
