"""The ``vote`` strategy: self-consistency (Wang et al., 2023): k samples of another strategy, their answers voted.

Each sample runs the strategy ``--vote-of`` (with its own defaults) on a
fresh fork of the question's environment, its LLM calls at
``--vote-temperature`` with their own seed (sample *i* sends ``--seed`` +
*i*: every sample's requests are distinct, so a recording keeps each one
and a replay meets the same replies in the same order; a strategy voted
that samples itself, with its own ``--seed``, starts sample *i* at
``--seed`` + 1000 *i*). The samples' answer sets are voted: the set most
samples answered wins; a tie goes to the set answered first (the lowest
sample number), which makes the vote deterministic; a sample with no answer votes only when no sample
answered. The answer's record (query, chain) is the first sample that
answered it.

The trace is a tree with one branch per sample (each sample's steps under
its own root); a sample that lost the vote has its last step pruned with
the count (``outvoted: ...``). The counts of LLM calls, tokens and KB
queries are every sample's. A sample that fails to run (the LLM or the KB
failed) ends the vote as failed to run, as greedy's question would. When
``--max-llm-calls`` runs out, the sample under way is cut (its calls are
traced as one step, pruned), and the samples done are voted (``stopped:
budget``).

The paper samples 40 reasoning paths (and reports most of the gain with
the first few); the default here is 5, at 5 times the cost of the strategy
voted (``--samples 40`` for the paper's setting); its temperature 0.7 is
the paper's.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> env = SparqlEnvironment(KB.open("demo"), entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> good = ["Action 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)", "Action 2: execute()"]
    >>> bad = ["Action 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)", "Action 2: execute()"]
    >>> llm = ScriptedLLM(good + bad + good)
    >>> result = solve_vote(llm, env, "what category is rachel?", AgentConfig(feedback="raw"), samples=3)
    >>> [a["label"] for a in result.answers], [v["count"] for v in result.extra["vote"]["votes"]]
    (['Tropical storm (SSHS)'], [2, 1])
    >>> [(t.action, t.parent, t.pruned) for t in result.steps][2:4]
    [('add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?f)', None, None), ('execute()', 3, 'outvoted: 1 of 3 samples answered this, 2 the chosen answer')]
    >>> [c.kwargs["sampling"].seed for c in llm.calls]
    [0, 0, 1, 1, 2, 2]
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from agent.errors import BudgetSpent
from agent.faults import FAILED_TO_RUN, FINISHED
from agent.llm.replies import Sampling
from agent.llm.sampling import CallBudget, SampledLLM
from agent.methods.config import AgentConfig
from agent.methods.episode import AgentResult, StepTrace
from agent.methods.strategies import registry
from agent.methods.strategies.registry import MAX_LLM_CALLS, SEED, Option, strategy

__all__ = ["StrategyName", "solve_vote", "vote_key"]

#: This strategy's name (it does not vote itself).
NAME = "vote"
#: A strategy voted that samples itself (``--seed``: a beam in a written mode, generate-execute) starts sample i's
#: seeds at ``seed + SEED_STRIDE * i``, so that no two samples send the same request.
SEED_STRIDE = 1000


@dataclass(frozen=True)
class StrategyName(Option):
    """An option whose value is a registered strategy other than ``vote`` (read from the registry when checked, so a
    strategy registered later is a value too); an alias is taken as its strategy's name."""

    def allowed(self) -> str:
        return "one of " + ", ".join(n for n in registry.method_choices() if registry.canonical(n) != NAME)

    def check(self, value: Any, shown: Any = None) -> Any:
        found = registry.canonical(str(value))
        if found is None or found == NAME:
            from agent.errors import AgentConfigError

            raise AgentConfigError(f"{self.flag} must be {self.allowed()}, got {shown if shown is not None else value!r}")
        return found


def vote_key(result: AgentResult) -> tuple[str, ...]:
    """What a sample voted for: its answers' values, as a sorted set.

    Example:
        >>> vote_key(AgentResult("q", [{"value": "b", "label": None}, {"value": "a", "label": "A"}], [], True, False, ""))
        ('a', 'b')
    """
    return tuple(sorted({str(a.get("value")) for a in result.answers}))


@strategy(
    "vote",
    description="self-consistency: --samples samples of another strategy (--vote-of) at a temperature above 0, each with "
    "its own seed; the answer set most samples gave wins",
    cites="self-consistency (Wang et al., 2023)",
    options=(
        StrategyName("vote_of", str, "greedy", "the strategy sampled (with its own defaults)"),
        Option("samples", int, 5, "samples voted (the paper: 40)", minimum=1, maximum=64),
        Option("vote_temperature", float, 0.7, "the samples' temperature (the paper's 0.7)", minimum=0.05, maximum=2.0),
        MAX_LLM_CALLS,
        SEED,
    ),
    rank=50,
)
def solve_vote(llm: Any, env: Any, question: str, config: AgentConfig, vote_of: str = "greedy", samples: int = 5,
               vote_temperature: float = 0.7, max_llm_calls: int = MAX_LLM_CALLS.default, seed: int = SEED.default) -> AgentResult:
    """Answer with ``samples`` samples of ``vote_of``, voted (see the module docstring)."""
    started = time.perf_counter()
    voted = registry.entry(vote_of)
    seeds_own = any(o.name == SEED.name for o in voted.options)  # a strategy that samples itself: its own seeds per sample
    budget = CallBudget(max_llm_calls)
    results: list[AgentResult] = []
    cut: AgentResult | None = None
    ran_out = False
    for i in range(samples):
        if budget.spent:  # a strategy with a budget of its own answered when this one ran out
            ran_out = True
            break
        sampled = SampledLLM(llm, Sampling(temperature=vote_temperature, seed=seed + i), budget)
        solve = voted.bind({SEED.name: seed + SEED_STRIDE * i} if seeds_own else {})
        try:
            result = solve(sampled, env.fork(), question, config)
        except BudgetSpent:
            cut, ran_out = _cut_sample(question, sampled), True
            break
        results.append(result)
        if result.failed_to_run:
            break
    out = _voted(question, results, cut)
    out.kb_queries = int(env.counters["kb_queries"])
    out.seconds = time.perf_counter() - started
    out.extra["vote"].update({"of": registry.canonical(vote_of), "samples": samples, "temperature": vote_temperature,
                              "seeds": [seed + i for i in range(len(results) + (cut is not None))]})
    if ran_out:
        out.stopped, out.stopped_by = "budget", None
        out.extra["budget"] = budget.report()
    return out


def _cut_sample(question: str, sampled: SampledLLM) -> AgentResult:
    """A sample the budget cut: its LLM calls, traced as one step (pruned), and no answer."""
    replies = sampled.replies
    trace = StepTrace(
        step=1, prompt_sha256="", reply=replies[-1].text if replies else "", action=None, ok=False, error="budget",
        observation=f"The LLM budget ran out after {len(replies)} call(s) of this sample.",
        llm_seconds=round(sum(r.latency for r in replies), 4), tokens_in=sum(r.usage_in for r in replies),
        tokens_out=sum(r.usage_out for r in replies), attempts=sum(r.attempts for r in replies) or 1,
        pruned="the LLM budget ran out during this sample",
    )
    return AgentResult(question, [], [trace], False, False, "", llm_calls=len(replies), tokens_in=trace.tokens_in,
                       tokens_out=trace.tokens_out)


def _voted(question: str, results: list[AgentResult], cut: AgentResult | None) -> AgentResult:
    """The vote over the samples' answer sets (ties: the set answered first), their traces as one tree, their totals."""
    keys = [vote_key(r) for r in results]
    answered = [k for k in keys if k]
    counts = Counter(answered or keys)
    winner = max(counts, key=lambda k: (counts[k], -keys.index(k))) if counts else None
    chosen = keys.index(winner) if winner is not None else None
    failed = next((r for r in results if r.failed_to_run), None)
    base = results[chosen] if chosen is not None and failed is None else (failed or cut or AgentResult(question, [], [], False, False, ""))
    steps: list[StepTrace] = []
    for i, result in enumerate([*results, *([cut] if cut is not None else [])]):
        offset = len(steps)
        branch = [replace(t, parent=t.parent + offset if t.parent is not None else None) for t in result.steps]
        if branch and i < len(results) and keys[i] != winner and branch[-1].pruned is None:
            said = f"{counts[keys[i]]} of {len(results)} samples answered this" if keys[i] else "no answer"
            branch[-1].pruned = f"outvoted: {said}, {counts[winner]} the chosen answer" if winner is not None else said
        steps += branch
    everything = [*results, *([cut] if cut is not None else [])]
    votes = [{"answers": list(k), "count": counts[k], "samples": [i + 1 for i, key in enumerate(keys) if key == k]} for k in counts]
    return AgentResult(
        question=question, answers=list(base.answers) if failed is None else [], steps=steps, done=base.done, forced=base.forced,
        query=base.query, chain=list(base.chain), llm_calls=sum(r.llm_calls for r in everything),
        tokens_in=sum(r.tokens_in for r in everything), tokens_out=sum(r.tokens_out for r in everything),
        rules=dict(sum((Counter(r.rules) for r in results), Counter())), error=base.error if failed is not None else None,
        status=FAILED_TO_RUN if failed is not None else FINISHED, advice=dict(sum((Counter(r.advice) for r in results), Counter())),
        escalations=dict(sum((Counter(r.escalations) for r in results), Counter())), stopped=base.stopped,
        stopped_by=base.stopped_by, extra={"vote": {"votes": votes, "chosen": chosen + 1 if chosen is not None else None}},
    )
