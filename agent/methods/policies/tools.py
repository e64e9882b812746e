"""The ``tools`` action mode: native tool calls (the action set's OpenAI tool schemas; JSON-schema enums from the
episode's memory on a KB, :func:`agent.llm.gbnf.state_tools`).

Example:
    >>> from agent.methods.policies.registry import entry
    >>> entry("tools").make is ToolCalls, ToolCalls.mode
    (True, 'tools')
"""

from __future__ import annotations

from agent.methods.policies.registry import policy
from agent.methods.policies.written import WrittenAction

__all__ = ["ToolCalls"]


@policy("tools", help="native tool calls", rank=20)
class ToolCalls(WrittenAction):
    """The LLM calls the action as a tool (:class:`~agent.methods.policies.written.WrittenAction`)."""

    mode = "tools"
