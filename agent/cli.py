"""``pyql`` subcommands of the agent package, registered through :func:`pyql.cli.register`.

``pyql.cli`` imports this module when it builds its parser; keep imports
here light (the subcommands import what they need when they run).

* ``pyql llm serve``: the local model on loopback (:mod:`agent.local`).

Example:
    >>> from pyql.cli import build_parser
    >>> build_parser().parse_args(["llm", "serve", "--port", "0"]).port
    0
"""

from __future__ import annotations

import argparse

from pyql.cli import register

__all__: list[str] = []


@register("llm")
def _add_llm(subparsers: argparse._SubParsersAction) -> None:
    from agent.local import register_cli

    register_cli(subparsers)
