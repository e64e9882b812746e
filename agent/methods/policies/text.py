"""The ``text`` action mode: the paper's Thought/Action text, read by the action parser.

Example:
    >>> from agent.methods.policies.registry import entry
    >>> entry("text").make is TextAction, TextAction.mode
    (True, 'text')
"""

from __future__ import annotations

from agent.methods.policies.registry import policy
from agent.methods.policies.written import WrittenAction

__all__ = ["TextAction"]


@policy("text", help="the paper's Thought/Action text", rank=10)
class TextAction(WrittenAction):
    """The LLM writes ``Thought N: ... Action N: ...`` (:class:`~agent.methods.policies.written.WrittenAction`)."""

    mode = "text"
