"""The discriminative action mode (``--action-mode choose``): the LLM picks a listed step by number.

Small models discriminate far better than they generate, and large ones
spend fewer tokens on a number than on an action. At each step the
environment enumerates the valid next steps (:func:`pyql.next_steps.next_steps`:
ranked relations of the entities and variables as ``add_fact`` in the right
direction, constraints and aggregates on the variables that exist,
``set_answer``, ``execute()``), each with a preview of its result; the prompt
lists them numbered and the LLM answers with a number:

* on a local llama.cpp server the reply is constrained to the listed numbers
  by a GBNF grammar (:func:`choice_gbnf`), so it always parses;
* elsewhere the first number of the reply is read (:func:`parse_choice`) and a
  reply without a valid number is asked again once, with the range.

With ``auto_look`` (the default) the environment itself runs ``get_relation``
on every linked entity and every entity variable it has not looked at yet,
before it enumerates: a look costs a KB query, not an LLM call.

Example:
    >>> choice_gbnf(3)
    'root ::= " "? ("1" | "2" | "3")\\n'
    >>> parse_choice(" 2", 3), parse_choice("12", 3), parse_choice("Choice: 3.", 3)
    (2, None, 3)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agent.llm import LLM, LLMReply
from pyql.next_steps import NextStep, next_steps

__all__ = ["ask_choice", "auto_look", "choice_gbnf", "choice_lines", "enumerate_choices", "parse_choice"]


def choice_gbnf(n: int) -> str:
    """A GBNF grammar whose sentences are exactly the numbers 1..n (an optional leading space).

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"a choice needs at least one option, not {n}")
    return 'root ::= " "? (' + " | ".join(f'"{i}"' for i in range(1, n + 1)) + ")\n"


def parse_choice(text: str, n: int) -> int | None:
    """The first whole number of a reply when it is in 1..n, else None."""
    match = re.search(r"\d+", text or "")
    if match is None:
        return None
    value = int(match.group())
    return value if 1 <= value <= n else None


def choice_lines(choices: Sequence[NextStep], preview: bool = True) -> str:
    """The numbered list shown to the LLM, one step a line (with its preview after ``→``).

    Example:
        >>> print(choice_lines([NextStep("set_answer(?c)", "answer", "?c = Katrina"), NextStep("execute()", "execute")]))
        1. set_answer(?c) → ?c = Katrina
        2. execute()
    """
    lines = []
    for i, c in enumerate(choices, 1):
        tail = f" → {c.preview}" if preview and c.preview else ""
        lines.append(f"{i}. {c.action}{tail}")
    return "\n".join(lines)


def auto_look(env: Any) -> list[Any]:
    """Run ``get_relation`` on the linked entities and entity variables not looked at yet; the records.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.sparql_environment import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
        >>> [r.call.text for r in auto_look(env)], auto_look(env)
        (['get_relation(m.0crbvqz)'], [])
    """
    records = []
    for step in next_steps(env, verify=False, limit=1000):
        if step.kind == "look":
            records.append(env.step(step.action))
    return records


def enumerate_choices(env: Any, *, rank: Any = None, limit: int = 12, per_argument: int = 6) -> list[NextStep]:
    """The valid next steps to offer (verified, bounded; looks only when ``auto_look`` is off)."""
    return next_steps(env, rank=rank, limit=limit, per_argument=per_argument, verify=True)


def ask_choice(
    llm: LLM, prompt: Any, n: int, *, grammar: bool, retry_note: str | None = None
) -> tuple[int | None, list[LLMReply]]:
    """Ask for a number in 1..n; one retry (with the range spelled out) when the reply has none.

    Returns:
        The 1-based choice (None when both replies were unusable) and the replies.
    """
    replies: list[LLMReply] = []
    reply = llm.complete(prompt, stop=["\n"], grammar=choice_gbnf(n) if grammar else None)
    replies.append(reply)
    picked = parse_choice(reply.text, n)
    if picked is None:
        note = retry_note or f"Answer with one number from 1 to {n}."
        again: Any = prompt + f" {note}\nChoice:" if isinstance(prompt, str) else [*prompt, {"role": "user", "content": note}]
        reply = llm.complete(again, stop=["\n"], grammar=choice_gbnf(n) if grammar else None)
        replies.append(reply)
        picked = parse_choice(reply.text, n)
    return picked, replies
