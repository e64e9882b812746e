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


def enumerate_choices(
    env: Any, *, rank: Any = None, limit: int = 12, per_argument: int = 6, order: str = "ranked"
) -> list[NextStep]:
    """The valid next steps to offer (verified, bounded; looks only when ``auto_look`` is off).

    ``order``: ``"ranked"`` (:func:`rank_choices`) or ``"kind"`` (the enumerator's order).
    """
    steps = next_steps(env, rank=rank, limit=limit, per_argument=per_argument, verify=True)
    return rank_choices(env.question, steps, env.query.actions()) if order == "ranked" else steps


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


# ---------------------------------------------------------------------------
# ordering the list against the question

_CUES: dict[str, tuple[str, ...]] = {
    "add_max": ("most", "highest", "largest", "biggest", "latest", "recent", "recently", "maximum", "greatest", "last", "strongest"),
    "add_min": ("least", "lowest", "smallest", "first", "earliest", "minimum", "fewest", "weakest"),
    "add_count": ("how many", "number of", "count"),
    "add_sum": ("total", "sum", "combined", "altogether"),
    "add_avg": ("average", "mean"),
    "add_compare": ("than",),
}
_WORDS = re.compile(r"[a-z0-9]+")


def _stems(text: str) -> set[str]:
    out = set()
    for w in _WORDS.findall(text.lower().replace("_", " ")):
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s"):
            w = w[:-1]
        out.add(w)
    return out


def _has_cue(question: str, cues: Sequence[str]) -> bool:
    q = f" {question.lower()} "
    return any(f" {c} " in q or f" {c}?" in q for c in cues)


def rank_choices(question: str | None, choices: Sequence[NextStep], built: Sequence[str] = ()) -> list[NextStep]:
    """The steps ordered by how well they fit the question, best first (stable for ties).

    A fact scores by the question's words its relation adds to those of the
    facts already built; a constraint or aggregate by the question's cue words
    (``most``/``highest`` for ``add_max``, ``how many`` for ``add_count``,
    ``total`` for ``add_sum`` ...); ``add_type_constrain`` by the words its type
    shares with the question; ``set_answer`` prefers a variable named like a
    word of the question and not a literal; ``execute()`` comes first once it
    is listed (the query says what it answers). Constraints and aggregates
    the question has no cue for are left out. The LLM still picks: this order
    only decides what it reads first.

    Example:
        >>> steps = [NextStep("add_fact(m.1, location.country.capital, ?capital)", "fact"),
        ...          NextStep("add_fact(m.1, location.country.languages_spoken, ?languages_spoken)", "fact")]
        >>> rank_choices("what languages are spoken in jamaica?", steps)[0].action
        'add_fact(m.1, location.country.languages_spoken, ?languages_spoken)'
    """
    q = question or ""
    words = _stems(q)
    used: set[str] = set()
    for line in built:
        if line.startswith("add_fact("):
            used |= _stems(line.split(",")[1])

    def score(item: tuple[int, NextStep]) -> float:
        index, step = item
        name = step.action.split("(", 1)[0]
        args = step.action[len(name) + 1 : -1]
        if step.kind == "execute":
            return 10.0
        if step.kind == "fact":
            relation = args.split(", ")[1]
            prop = _stems(relation.rsplit(".", 1)[-1])
            rest = _stems(relation) - prop
            return 2.0 * len((prop & words) - used) + 0.5 * len((rest & words) - used) - 0.01 * index
        if name in _CUES:
            return 3.0 if _has_cue(q, _CUES[name]) else -1.0
        if name == "add_type_constrain":
            return 1.5 * len(_stems(args.split(", ")[0].rsplit(".", 1)[-1]) & words) - 0.5
        if name in ("add_filter", "add_time_constrain"):
            return 2.5 if any(ch.isdigit() for ch in args) and any(tok in q for tok in re.findall(r"\d{4}|\d+", args)[:1]) else 0.0
        if step.kind == "answer":
            var = args.lstrip("?").rstrip("0123456789")
            literal = bool(re.search(r"= [-0-9]", step.preview)) if step.preview else False
            return 1.0 + (1.0 if _stems(var) & words else 0.0) - (0.8 if literal else 0.0)
        return 0.0

    scored = sorted(((score(item), item[0], item[1]) for item in enumerate(choices)), key=lambda t: (-t[0], t[1]))
    # constraints and aggregates the question gives no cue for are left out (when something else is listed)
    kept = [step for value, _, step in scored if value >= 0 or step.kind not in ("constrain", "aggregate")]
    return kept or [step for _, _, step in scored]
