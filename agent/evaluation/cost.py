"""What a question cost, and a run: LLM calls, tokens, model seconds, KB queries, KB seconds, branches explored.

Every run record carries one ``cost`` object (:func:`question_cost`),
computed from the record's trace as every strategy writes it
(:mod:`agent.methods.strategies`):

* ``llm_calls``, ``tokens_in``, ``tokens_out``, ``kb_queries``: the
  question's totals, as the strategy counted them (the record's top-level
  counters, kept as they are);
* ``model_seconds``: the seconds the model took, the sum of the steps'
  ``llm_seconds`` (a step's LLM call with its retries, and the scoring
  requests made for it);
* ``kb_seconds``: the seconds the KB (or the table's engine) took, the sum
  of the steps' ``kb_seconds``;
* ``branches``: the branches the strategy explored, the leaves of the steps'
  tree (:func:`agent.evaluation.step_tree.leaves`: 1 for a linear run, 0
  for a question that took no step).

A record written before it had a ``cost`` (an older run file) gets the same
object from its steps (:func:`cost_of`). A replay (``--replay``) gives the
same costs but the seconds. Over a run (:func:`run_cost`) the costs are
summed, and :func:`mean_cost` gives them per question.

Example:
    >>> record = {"llm_calls": 3, "tokens_in": 900, "tokens_out": 40, "kb_queries": 5,
    ...           "steps": [{"llm_seconds": 1.5, "kb_seconds": 0.25, "parent": None},
    ...                     {"llm_seconds": 0.5, "kb_seconds": 0.125, "parent": 1, "pruned": "empty result"},
    ...                     {"llm_seconds": 0.5, "kb_seconds": 0.125, "parent": 1}]}
    >>> question_cost(record)
    {'llm_calls': 3, 'tokens_in': 900, 'tokens_out': 40, 'model_seconds': 2.5, 'kb_queries': 5, 'kb_seconds': 0.5, 'branches': 2}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agent.evaluation.step_tree import leaves

__all__ = ["COST_FIELDS", "COST_TITLES", "SECONDS_FIELDS", "cost_of", "mean_cost", "question_cost", "run_cost"]

#: The fields of a ``cost`` object, in the order they are shown.
COST_FIELDS: tuple[str, ...] = ("llm_calls", "tokens_in", "tokens_out", "model_seconds", "kb_queries", "kb_seconds", "branches")
#: The fields that are times: a replay gives the same costs but these.
SECONDS_FIELDS: frozenset[str] = frozenset({"model_seconds", "kb_seconds"})
#: Each field as a table's column names it, and what it counts.
COST_TITLES: dict[str, tuple[str, str]] = {
    "llm_calls": ("LLM calls", "requests to the LLM (each sample of a vote, each judgement of a search)"),
    "tokens_in": ("tokens in", "prompt tokens, as the LLM server counted them"),
    "tokens_out": ("tokens out", "completion tokens"),
    "model_seconds": ("model s", "seconds the model took: the steps' LLM time, retries and scoring requests included"),
    "kb_queries": ("KB queries", "queries sent to the KB (or the table's engine)"),
    "kb_seconds": ("KB s", "seconds the KB took to answer them"),
    "branches": ("branches", "branches explored: the leaves of the steps' tree (1 for a linear run)"),
}


def _number(value: Any) -> float:
    """A counter of a record as a number (0 when missing or not a number)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def question_cost(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``cost`` object of one run record, from its counters and its steps (see the module docstring).

    Example:
        >>> question_cost({"steps": []})["branches"], question_cost({"llm_calls": 2, "steps": [{}, {}]})["branches"]
        (0, 1)
    """
    steps = [s for s in (record.get("steps") or []) if isinstance(s, Mapping)]
    return {
        "llm_calls": int(_number(record.get("llm_calls"))),
        "tokens_in": int(_number(record.get("tokens_in"))),
        "tokens_out": int(_number(record.get("tokens_out"))),
        "model_seconds": round(sum(_number(s.get("llm_seconds")) for s in steps), 6),
        "kb_queries": int(_number(record.get("kb_queries"))),
        "kb_seconds": round(sum(_number(s.get("kb_seconds")) for s in steps), 6),
        "branches": leaves(steps),
    }


def cost_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's ``cost``: the one it carries, else computed from its steps (a run file of before costs).

    Example:
        >>> cost_of({"cost": {"llm_calls": 7}})["llm_calls"], cost_of({"llm_calls": 2, "steps": [{}]})["llm_calls"]
        (7, 2)
    """
    carried = record.get("cost")
    if isinstance(carried, Mapping):
        computed = None
        out = {}
        for name in COST_FIELDS:  # a field the record's object lacks (written by an older version) is computed
            if name in carried:
                out[name] = carried[name]
            else:
                computed = computed or question_cost(record)
                out[name] = computed[name]
        return out
    return question_cost(record)


def run_cost(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The costs of a run summed, with the number of questions (``questions``) they are over.

    Example:
        >>> run_cost([{"cost": {"llm_calls": 2, "model_seconds": 1.5}}, {"llm_calls": 1, "steps": [{"kb_seconds": 0.5}]}])
        {'questions': 2, 'llm_calls': 3, 'tokens_in': 0, 'tokens_out': 0, 'model_seconds': 1.5, 'kb_queries': 0, 'kb_seconds': 0.5, 'branches': 1}
    """
    total: dict[str, Any] = {"questions": 0, **{name: 0 for name in COST_FIELDS}}
    for record in records:
        total["questions"] += 1
        for name, value in cost_of(record).items():
            total[name] += _number(value)
    for name in COST_FIELDS:
        total[name] = round(total[name], 6) if name in SECONDS_FIELDS else int(total[name])
    return total


def mean_cost(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The costs per question (means; all 0 for no record).

    Example:
        >>> mean_cost([{"cost": {"llm_calls": 2}}, {"cost": {"llm_calls": 1}}])["llm_calls"]
        1.5
    """
    total = run_cost(records)
    n = total["questions"]
    return {name: (total[name] / n if n else 0.0) for name in COST_FIELDS}
