"""The ``readi`` strategy: Readi's loop (generate a reasoning path, instantiate it, edit it only when necessary).

Readi's LLM calls write reasoning paths, not actions, so it asks no policy
(:mod:`agent.methods.policies`) and takes no step of the environment: it
reads the environment's backend, its KB and linked entities
(:class:`agent.methods.readi.Readi`) or its table
(:class:`agent.methods.readi_table.TableReadi`), by the side
(:func:`agent.methods.readi.run_readi`). The loop itself, the same for both,
is :func:`agent.methods.readi_loop.run_loop`; its calls are one branch of
the trace.

Example:
    >>> from agent.methods.strategies.registry import entry
    >>> entry("readi").solve.__name__, entry("readi").options
    ('run_readi', ())
"""

from __future__ import annotations

from agent.methods.readi import run_readi
from agent.methods.strategies.registry import strategy

__all__ = ["run_readi"]

strategy(
    "readi",
    description="reasoning paths: generate, instantiate on the KB or the table, edit only when necessary",
    cites="Readi (Cheng et al., 2024)",
    rank=20,
)(run_readi)
