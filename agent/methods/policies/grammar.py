"""The ``grammar`` action mode: grammar-constrained decoding (llama.cpp's ``grammar`` field; on a KB rebuilt for
every call from the episode's memory, :func:`agent.llm.gbnf.state_gbnf`).

Example:
    >>> from agent.methods.policies.registry import entry
    >>> entry("grammar").make is GrammarAction, entry("grammar").sides
    (True, ('sparql', 'sql'))
"""

from __future__ import annotations

from agent.methods.policies.registry import policy
from agent.methods.policies.written import WrittenAction

__all__ = ["GrammarAction"]


@policy("grammar", help="grammar-constrained decoding (llama.cpp 'grammar' field)", sides=("sparql", "sql"), rank=30)
class GrammarAction(WrittenAction):
    """The LLM writes the action under a GBNF grammar (:class:`~agent.methods.policies.written.WrittenAction`)."""

    mode = "grammar"
