"""The step environment: the neutral kernel (:mod:`pyql.environment.kernel`), the action
language's action sets, and the SPARQL and AgentBench sides on a KB.

The kernel's names are importable from here (``from pyql.environment import
Environment, StepRecord``); the sides live in their own modules
(:mod:`pyql.environment.sparql`, :mod:`pyql.environment.agentbench`).

Example:
    >>> from pyql.environment import Environment, StepRecord
    >>> Environment.side, StepRecord(index=1, text="execute()").ok
    ('generic', False)
"""

from pyql.environment.kernel import (
    ESCALATION_LEVELS,
    NO_CHANGE,
    Analyzer,
    Environment,
    Feedback,
    FinalResult,
    Memory,
    StepQuery,
    StepRecord,
    error_kind,
    normalized_action,
    repeat_key,
)

__all__ = [
    "StepQuery",
    "StepRecord",
    "Memory",
    "Feedback",
    "Analyzer",
    "FinalResult",
    "Environment",
    "error_kind",
    "normalized_action",
    "repeat_key",
    "ESCALATION_LEVELS",
    "NO_CHANGE",
]
