"""The ``beam`` strategy: a beam over PyQL steps, each candidate run on a fork, empty or failed steps pruned by execution.

It follows the beam of Think-on-Graph (Sun et al., 2024: width 3), kept
over the steps of a program as the beam searches of KB-BINDER and
KB-Coder (Li et al., 2023; Nie et al., 2023) are (QueryAgent, Huang et al.,
2024, describes them: "a beam search step by step to collect a large pool
of candidates"). Each level of the search:

1. the policy of the action mode (:mod:`agent.methods.policies`) proposes
   a branch's ranked candidates for its next step (``propose``: one LLM
   call in choose mode; in the written modes, which write one action,
   ``--beam-samples`` calls at ``--beam-temperature``, each with its own
   seed);
2. each candidate gets a *step score*, the log of how good the policy
   judges it against the best of its list (0 for the best, below 0 for the
   others; :meth:`Beam.scored`):

   * choose mode, ``policy`` (``auto`` with the bundled model): the
     policy's own order, the one greedy follows: the model's PMI where the
     choose policy scored the list (a KB's first facts,
     ``first_relation="model"``), elsewhere the list's order as ``rank``
     scores it (the picked step first). A branch whose every step was its
     list's best is greedy's path (when no step of it failed), so the beam
     answers differently from greedy only where that path fails, comes out
     empty or runs out of steps, or the model picks another step;
   * choose mode, ``likelihood``: the
     model's pointwise mutual information of a listed fact's relation with
     the question, computed in process (:mod:`agent.llm.likelihood`, the
     recording's scorer in a replay), where every listed step is a fact;
     a list of several kinds is scored by its order. (It was ``auto``'s
     choice until held-out WebQSP showed it dropping the dates and office
     holders greedy's ranked list keeps: docs/results.md, "Search
     strategies");
   * choose mode, ``logprobs`` (``auto`` with any other model): the
     log-probability of each listed number in the reply of the choice call
     (the request asks for the top log-probabilities); where the server
     gives none, the list's order;
   * choose mode, ``rank``: the list's order, ``-log(1 + position)`` (the
     picked step first);
   * the written modes (text, tools, grammar): the share of the samples
     that wrote the action, ``log(count / samples)``;
3. a branch's score is the sum of its steps' scores (0 when every step
   was the best of its list, whatever its length), and a candidate's place
   is its branch's score plus its own. The next beam is the best
   ``--beam-width`` children (ties: the first branch's, then the first
   listed): the candidates run best first, each on a fork of its branch's
   environment (:meth:`pyql.environment.kernel.Environment.fork`) and a
   branch of its episode (:meth:`agent.methods.episode.Episode.branch`),
   until the beam is full; a step that fails or gives an empty result drops
   its branch there (traced as pruned with the reason,
   :func:`agent.methods.search.failure`) and the next candidate runs; a
   branch that reaches the steps of one kept is kept once. A step's score
   never depends on running it and is never above 0, so a branch is
   extended (its policy asked) only when its own score, the most any of its
   children can score, is above the best candidate waiting
   (:meth:`Beam.level`): the beam is the one extending every branch and
   running every candidate would keep, at about ``--beam-width`` steps run
   and fewer calls per level. A branch left out is pruned ``outside the
   beam``;
4. a kept branch that executed its query is finished, and a branch or a
   candidate whose score is not above the best finished one is pruned
   (it can only fall behind), not run nor extended, from then on in the
   level too. A branch whose line ends with no step to take (nothing
   listed, or the same failed look ``--max-repeats`` times) answers with
   what it has, as greedy's line does: it is forced to answer (one LLM
   call) and finishes with its score; only a branch that then has no
   executed query is pruned.

The search ends when no branch is left to extend or after ``--beam-depth``
steps (0: ``--max-steps``). It answers with the best finished branch
(ties: the first finished); with none, the best branch left is forced to
answer as greedy's step limit forces one. When ``--max-llm-calls`` runs
out it answers the same way with what it has, without another call
(``stopped: budget``). A service failure (the LLM, the KB) ends the
question as failed to run, as in greedy.

Every LLM call is traced once: a choice call with the first step run from
its list, a written mode's samples with the first step run from them (the
other steps say so in ``without_call``); the model's scoring requests with it too.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> env = SparqlEnvironment(KB.open("demo"), question="what category is tropical storm rachel?",
    ...                         entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> result = solve_beam(ScriptedLLM(["1"] * 20), env, env.question, AgentConfig(action_mode="choose", feedback="raw"),
    ...                     beam_width=2, beam_scoring="rank")
    >>> [a["label"] for a in result.answers], result.extra["beam"]["scoring"], result.llm_calls
    (['Tropical storm (SSHS)'], 'rank', 3)
    >>> [t.pruned for t in result.steps if t.pruned][-1]
    'cannot beat a finished branch (score -0.69 <= 0.00); not extended'
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, replace
from typing import Any

from agent.errors import BudgetSpent
from agent.faults import INFRA_KINDS, error_kind
from agent.llm.likelihood import RelationPMI, ScorerError, local_scorer
from agent.llm.local import is_bundled_model
from agent.llm.replies import Sampling
from agent.llm.sampling import CallBudget, SampledLLM
from agent.methods.choose import fact_relation, parse_choice
from agent.methods.config import AgentConfig
from agent.methods.episode import AgentResult, Episode, StepTrace
from agent.methods.policies.registry import Candidate, Proposal, make as make_policy
from agent.methods.search import ZERO_COST, Branch, failure, prune, search_result, state_key
from agent.methods.sides import side_for
from agent.methods.strategies.greedy import QueryAgent
from agent.methods.strategies.registry import MAX_LLM_CALLS, SEED, Option, strategy

__all__ = ["Beam", "SCORINGS", "solve_beam"]

#: ``--beam-scoring``: how the choose mode's listed steps are scored (see the module docstring).
SCORINGS = ("auto", "policy", "likelihood", "logprobs", "rank")
#: The top log-probabilities a choice call asks for, by endpoint (OpenAI's limits: 5 on completions, 20 on chat).
TOP_LOGPROBS = {"completion": 5, "chat": 20}


@dataclass
class _Listed:
    """One candidate of a state, ready to run: its score against the best of its list and the trace fields it carries."""

    candidate: Candidate
    score: float
    proposal: Proposal
    fields: dict[str, Any]


class Beam:
    """One beam search (see the module docstring); :meth:`run` answers one question.

    Args:
        llm: the LLM.
        config: the agent's settings (the action mode names the policy; ``max_steps`` is the depth when ``depth`` is 0).
        width: branches kept per level.
        depth: steps a branch may take (0: ``config.max_steps``).
        scoring: ``auto``, ``likelihood``, ``logprobs`` or ``rank`` (choose mode).
        samples: written modes: samples per state.
        temperature: written modes: the samples' temperature.
        max_llm_calls: the budget of LLM calls.
        seed: the first sample's seed.
    """

    def __init__(self, llm: Any, config: AgentConfig, *, width: int = 3, depth: int = 0, scoring: str = "auto",
                 samples: int = 3, temperature: float = 0.7, max_llm_calls: int = MAX_LLM_CALLS.default, seed: int = 0) -> None:
        self.config = config
        self.width, self.depth = width, depth or config.max_steps
        self.written = config.action_mode != "choose"
        self.scoring = "samples" if self.written else _resolve(scoring, llm)
        self.samples, self.temperature = (samples, temperature) if self.written else (1, None)
        self.seeds = itertools.count(seed)
        self.budget = CallBudget(max_llm_calls)
        mode = getattr(getattr(llm, "config", None), "mode", "completion")
        asked = Sampling(top_logprobs=TOP_LOGPROBS.get(mode, 5)) if self.scoring == "logprobs" else None
        self.llm = SampledLLM(llm, asked, self.budget)
        recorded = getattr(llm, "relation_scorer", None)
        self.pmi: RelationPMI | None = recorded if isinstance(recorded, RelationPMI) else None
        self.policy = make_policy(config.action_mode, self.llm, config, self.pmi)
        self.agent = QueryAgent(self.llm, config, scorer=self.pmi)
        self.error: str | None = None
        self.explored = 0
        self.order = itertools.count()  # the order candidates were listed in: ties go to the first

    def run(self, env: Any, question: str) -> AgentResult:
        """Answer one question in the given (fresh) environment; never raises for a failure of the LLM or the KB.

        Raises:
            AgentConfigError: the environment's analyzer does not match the feedback mode.
        """
        self.agent.check_environment(env)
        started = time.perf_counter()
        side = side_for(env)
        root = Branch(env, Episode(head=self.policy.head(env, side, question), side=side))
        live, finished, stopped = [root], [], None
        for _level in range(self.depth):
            try:
                live = self.level(live, root.episode, max((b.score for b in finished), default=None))
            except BudgetSpent:
                stopped = "budget"
                break
            if self.error is not None:
                break
            finished += [b for b in live if b.finished]
            live = self.hopeful([b for b in live if not b.finished], finished, root.episode)
            if not live:
                break
        return self.finish(root, live, finished, question, started, stopped)

    def level(self, live: list[Branch], episode: Episode, best: float | None = None) -> list[Branch]:
        """The next beam: the best ``width`` children of the branches, best first (ties: the first branch's, then the
        first listed), found by running as few candidates and extending as few branches as that needs.

        A candidate's place is its branch's score plus its own, and it does not
        depend on running the step, nor on the other branches: so the
        candidates run best first, each on a fork, until ``width`` branches are
        kept (one that fails is pruned by its execution and the next runs; one
        that reaches the steps of a kept branch is kept once), and a branch is
        extended (its policy asked) only when its score, the most any of its
        candidates can score, is above the best candidate waiting. The beam is
        the one that extending every branch and running every candidate would
        keep. Once a finished branch scores ``best`` (this level's or an
        earlier one's), nothing that cannot score above it is run or extended.
        A branch left out is pruned (``outside the beam``, ``cannot beat a
        finished branch``); one whose candidates none ran has its LLM call
        traced as a step, pruned the same way.

        A reply the policy could not use (an invalid choice, a tool call whose
        arguments are not JSON) keeps the branch as it is when the policy goes
        on; a branch with nothing to propose is pruned.
        """
        kept: list[Branch] = []
        seen: dict[Any, Branch] = {}
        waiting: list[tuple[float, int, Branch, int, _Listed]] = []
        order = sorted(live, key=lambda b: -b.score)
        extended, charged = 0, set()
        while len(kept) < self.width:
            branch_bound = order[extended].score if extended < len(order) else None
            if best is not None and max(-waiting[0][0] if waiting else best, branch_bound if branch_bound is not None else best) <= best:
                break  # nothing left can beat the best finished branch
            if branch_bound is not None and (not waiting or branch_bound > -waiting[0][0]):
                extended += 1
                ended = self.extend(order[extended - 1], waiting, kept)
                if self.error is not None:
                    return []
                if ended is not None and ended.finished:
                    best = ended.score if best is None else max(best, ended.score)
                continue
            if not waiting:
                break
            _, _, branch, step, item = heapq.heappop(waiting)
            charged.add(id(item.proposal))
            child = self.keep(self.run_step(branch, step, item), kept, seen, episode)
            if self.error is not None:
                return []
            if child is not None and child.finished:
                best = child.score if best is None else max(best, child.score)
        self.left_out(order[extended:], waiting, charged, kept, best)
        return kept

    def extend(self, branch: Branch, waiting: list[tuple[float, int, Branch, int, _Listed]], kept: list[Branch]) -> Branch | None:
        """Ask the policy for the branch's next step: its scored candidates wait (best first), or it is kept as it is
        (the policy goes on without a step), or its line ended.

        A line that ends with no step to take (the same failed look again
        ``max_repeats`` times, nothing listed) answers with what it has, as
        greedy's does: it is forced to answer and kept, finished, with its
        score; only when that gives no executed query is it pruned. Returns the
        branch kept with no step (None: candidates wait, or it was pruned).
        """
        step = len(branch.episode.turns) + 1
        listed, go_on = self.propose(branch, step)
        if self.error is not None:
            return None
        for item in listed:
            heapq.heappush(waiting, (-(branch.score + item.score), next(self.order), branch, step, item))
        if listed:
            return None
        if go_on:
            kept.append(Branch(branch.env, branch.episode, branch.score, branch.steps + 1, False, branch.scores))
            return kept[-1]
        why = "no step to take: " + (branch.episode.error or _ended(branch.episode))
        if branch.episode.error is None:
            self.force(branch, self.budget.spent)
            if self.error is None and branch.env.done:
                kept.append(Branch(branch.env, branch.episode, branch.score, branch.steps + 1, True, branch.scores))
                return kept[-1]
            why += "; forced to answer, no query ran"
        prune(branch.episode, branch.tip, why)
        return None

    @staticmethod
    def keep(child: Branch | None, kept: list[Branch], seen: dict[Any, Branch], episode: Episode) -> Branch | None:
        """Keep a child that ran (None: its step pruned it), once per state; the child kept, or None."""
        if child is None:
            return None
        key = state_key(child.env)
        if key in seen:
            prune(episode, child.tip, f"the same steps as the branch at step {seen[key].tip} (kept)")
            return None
        seen[key] = child
        kept.append(child)
        return child

    def left_out(self, unextended: list[Branch], waiting: list[tuple[float, int, Branch, int, _Listed]], charged: set[int],
                 kept: list[Branch], best: float | None) -> None:
        """The branches the full beam left out: those never extended, pruned; those whose candidates none ran, their
        LLM call traced as a step of its own, pruned."""
        last = min((b.score for b in kept), default=None)
        for branch in unextended:
            prune(branch.episode, branch.tip, _left_out(branch.score, last, best) + "; not extended")
        for _, _, branch, step, item in sorted(waiting, key=lambda w: w[1]):
            if id(item.proposal) in charged:
                continue
            charged.add(id(item.proposal))
            branch.episode.add(StepTrace(
                step=step if self.written else len(branch.episode.traces) + 1,
                **{k: v for k, v in item.fields.items() if k != "without_call"}, action=None, ok=False, error="not_run",
                observation="No listed step was run: better branches filled the beam or finished.",
                pruned=_left_out(branch.score + item.score, last, best),
            ))

    def propose(self, branch: Branch, step: int) -> tuple[list[_Listed], bool]:
        """The state's candidates, best first (each scored, :meth:`scored`), and whether an empty list lets the branch go on."""
        if not self.written:
            before = len(self.llm.replies)
            proposal = self.policy.propose(branch.env, branch.episode, step)
            self.check_error(branch.episode)
            if not proposal.candidates:
                return [], proposal.go_on
            return self.scored(proposal, branch, self.llm.replies[before:]), False
        proposals = []
        for _ in range(self.samples):
            self.llm.sampling = Sampling(temperature=self.temperature, seed=next(self.seeds))
            proposals.append(self.policy.propose(branch.env, branch.episode, step))
            self.check_error(branch.episode)
            if self.error is not None:
                return [], False
        return self.voted(proposals), any(p.go_on for p in proposals)

    def check_error(self, episode: Episode) -> None:
        """A service failure on the way (the LLM after its retries, the scorer, a KB look) ends the search."""
        if episode.error is not None and error_kind(episode.error) in INFRA_KINDS:
            self.error = episode.error

    def scored(self, proposal: Proposal, branch: Branch, replies: list[Any]) -> list[_Listed]:
        """The choose mode's listed steps, each scored against the best of its list (:data:`SCORINGS`), best first.

        The LLM call and the model's scoring requests are traced with the first one.
        """
        candidates = proposal.candidates
        ranked = [-math.log(1 + i) for i in range(len(candidates))]
        values, spent = ranked, (0, 0.0)
        if proposal.prompt is not None and self.scoring == "logprobs":
            values = _choice_logprobs(candidates, replies[-1] if replies else None) or ranked
        elif self.scoring in ("policy", "likelihood") and len(candidates) > 1 and all(c.score is not None for c in candidates):
            values = [float(c.score) for c in candidates]  # type: ignore[arg-type]  # the policy scored them (its PMI)
        elif self.scoring == "likelihood" and len(candidates) > 1 and all(c.kind == "fact" for c in candidates):
            values, spent = self.likelihood(candidates, branch)
        best = max(values)
        order = sorted(range(len(candidates)), key=lambda i: -values[i])
        first = dict(proposal.fields)
        if spent[0]:
            first["scoring_requests"] = first.get("scoring_requests", 0) + spent[0]
            first["llm_seconds"] = round(first.get("llm_seconds", 0.0) + spent[1], 4)
        listed = []
        for rank, i in enumerate(order):
            fields = first if rank == 0 else {**proposal.fields, **ZERO_COST, "reply": "",
                                               "without_call": f"listed by the call traced with the step of {candidates[order[0]].action}"}
            listed.append(_Listed(candidates[i], values[i] - best, proposal, fields))
        return listed

    def likelihood(self, candidates: list[Candidate], branch: Branch) -> tuple[list[float], tuple[int, float]]:
        """Each listed fact's score: the model's PMI of its relation with the question (where the policy did not score them).

        Returns the scores and the scorer's (requests, seconds) spent. A scorer
        that fails ends the search as an LLM failure does (``llm_error``), as in greedy.
        """
        pmi = self.pmi if self.pmi is not None else local_scorer()
        before = (pmi.requests, pmi.seconds)
        relations = [fact_relation(str(c.action)) for c in candidates]
        try:
            scores = pmi.scores(branch.env.question, relations)
        except ScorerError as exc:
            self.error = f"llm_error: {exc}"
            return [0.0] * len(candidates), (0, 0.0)
        return [scores[r] for r in relations], (pmi.requests - before[0], pmi.seconds - before[1])

    def voted(self, proposals: list[Proposal]) -> list[_Listed]:
        """The written modes' samples: one candidate per distinct action, scored by the share of the samples that wrote
        it, best first (ties: the first written); all the samples' calls are traced with the first."""
        groups: dict[str, list[Proposal]] = {}
        for proposal in proposals:
            if proposal.candidates:
                groups.setdefault(str(_text(proposal.candidates[0].action)), []).append(proposal)
        if not groups:
            return []
        counts = {key: len(group) for key, group in groups.items()}
        best = math.log(max(counts.values()) / len(proposals))
        order = sorted(groups, key=lambda key: -counts[key])
        totals = _summed([p.fields for p in proposals])
        listed = []
        for rank, key in enumerate(order):
            first = groups[key][0]
            fields = {**first.fields, **totals} if rank == 0 else {
                **first.fields, **ZERO_COST, "prompt_sha256": first.fields.get("prompt_sha256", ""),
                "without_call": f"its {counts[key]} sample(s) are traced with the step of {_text(groups[order[0]][0].candidates[0].action)}",
            }
            listed.append(_Listed(first.candidates[0], math.log(counts[key] / len(proposals)) - best, first, fields))
        return listed

    def run_step(self, branch: Branch, step: int, item: _Listed) -> Branch | None:
        """Run one candidate on a fork of the branch: the child, or None when the step drops it (traced as pruned)."""
        env, episode = branch.env.fork(), branch.episode.branch()
        record = env.step(item.candidate.action)
        turn, trace = self.policy.taken(env, episode, step, replace(item.proposal, fields=item.fields), item.candidate, record)
        episode.turns.append(turn)
        episode.add(trace)
        self.explored += 1
        if episode.failed_on_service(record, episode.side.infra_kb(env)):
            self.error = episode.error
            return None
        reason = failure(record)
        if reason is not None:
            prune(episode, episode.tip, reason)
            return None
        return branch.child(env, episode, item.score)

    @staticmethod
    def hopeful(live: list[Branch], finished: list[Branch], episode: Episode) -> list[Branch]:
        """The branches that may still beat the best finished one: a step's score is never above 0, so a branch whose
        score is not above the best finished score can only fall behind it (a tie goes to the first finished)."""
        if not finished:
            return live
        best = max(b.score for b in finished)
        for branch in live:
            if branch.score <= best:
                prune(episode, branch.tip, f"cannot beat a finished branch (score {branch.score:.2f} <= {best:.2f})")
        return [b for b in live if b.score > best]

    def finish(self, root: Branch, live: list[Branch], finished: list[Branch], question: str, started: float,
               stopped: str | None) -> AgentResult:
        """The result: the best finished branch (ties: the first finished), else the best branch left, forced to answer."""
        answer = max(finished, key=lambda b: b.score) if finished else None
        for other in finished:
            if other is not answer:
                prune(root.episode, other.tip, f"finished, not the best (score {other.score:.2f} < {answer.score:.2f})")  # type: ignore[union-attr]
        if answer is None and live and self.error is None:
            answer = max(live, key=lambda b: b.score)
            self.force(answer, stopped is not None)
        for other in live:
            if other is not answer:
                why = "the LLM budget ran out" if stopped else f"the depth limit ({self.depth} steps) was reached"
                prune(root.episode, other.tip, why)
        extra: dict[str, Any] = {"beam": {
            "width": self.width, "depth": self.depth, "scoring": self.scoring, "explored": self.explored,
            "finished": [{"step": b.tip, "score": round(b.score, 4)} for b in finished],
            "answer": {"step": answer.tip, "score": round(answer.score, 4)} if answer is not None else None,
        }}
        if stopped == "budget":
            extra["budget"] = self.budget.report()
        return search_result(question, root.env, answer, root.episode, started, error=self.error, stopped=stopped, extra=extra)

    def force(self, branch: Branch, no_calls: bool) -> None:
        """Force the branch to answer as greedy's step limit does (the LLM asked which variable answers); without calls
        left, the last variable made answers."""
        episode = branch.episode
        episode.forced = True
        step = len(episode.traces) + 1
        if not no_calls:
            try:
                self.agent.force_answer(branch.env, episode, step)
                self.check_error(episode)
                return
            except BudgetSpent:
                pass
        episode.side.force_answer(branch.env, episode, step, lambda variables: ("", variables[-1]))
        self.check_error(episode)


def _ended(episode: Episode) -> str:
    """Why a line ended with nothing to propose, in words."""
    if episode.stopped:
        return f"{episode.stopped.replace('_', ' ')} ({episode.stopped_by})"
    return "nothing was listed"


def _left_out(score: float, last: float | None, best: float | None) -> str:
    """Why a branch or a candidate scoring ``score`` was left out: a finished branch it cannot beat, or the beam full."""
    if best is not None and score <= best:
        return f"cannot beat a finished branch (score {score:.2f} <= {best:.2f})"
    if last is None:
        return f"outside the beam (score {score:.2f}; the beam was full)"
    if score < last:
        return f"outside the beam (score {score:.2f} < {last:.2f}, the last kept)"
    return f"outside the beam (score {score:.2f} ties the last kept, found after it)"


def _resolve(scoring: str, llm: Any) -> str:
    """``auto``: with the bundled model the policy's own order (its PMI where it scored the list), else the reply's
    log-probabilities; the others as asked."""
    if scoring != "auto":
        return scoring
    return "policy" if is_bundled_model(llm) else "logprobs"


def _choice_logprobs(candidates: list[Candidate], reply: Any) -> list[float] | None:
    """Each listed step's log-probability as the choice call's reply gives it for its number (None: the reply gives none).

    The candidates are the picked step first, then the others in the listed order;
    a number the reply's top log-probabilities do not show scores below the lowest shown.

    Example:
        >>> from agent.llm.replies import LLMReply
        >>> cands = [Candidate("b()"), Candidate("a()"), Candidate("c()")]
        >>> _choice_logprobs(cands, LLMReply(" 2", top_logprobs=[{" 2": -0.2, " 1": -1.9}]))
        [-0.2, -1.9, -2.9]
    """
    tops = getattr(reply, "top_logprobs", None) or []
    n = len(candidates)
    first = next((t for t in tops if any(k.strip().isdigit() for k in t)), None)
    picked = parse_choice(getattr(reply, "text", ""), n)
    if first is None or picked is None:
        return None
    listed = candidates[1:picked] + [candidates[0]] + candidates[picked:]
    shown = {int(k.strip()): v for k, v in sorted(first.items(), key=lambda kv: kv[1]) if k.strip().isdigit()}
    floor = min(shown.values()) - 1.0
    by_number = {id(c): shown.get(number, floor) for number, c in enumerate(listed, 1)}
    return [by_number[id(c)] for c in candidates]


def _text(action: Any) -> str:
    """An action as its text (a structured call by its ``text``)."""
    return str(getattr(action, "text", action))


def _summed(fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The cost fields of several calls added up."""
    return {
        "llm_seconds": round(sum(f.get("llm_seconds", 0.0) for f in fields), 4),
        "tokens_in": sum(f.get("tokens_in", 0) for f in fields),
        "tokens_out": sum(f.get("tokens_out", 0) for f in fields),
        "attempts": sum(f.get("attempts", 1) for f in fields),
    }


@strategy(
    "beam",
    description="a beam over PyQL steps: candidates scored by the policy and run best first on forks, failed and empty "
    "steps pruned, the best branches kept at each step; the best executed query answers",
    cites="Think-on-Graph's beam (Sun et al., 2024; width 3), kept over program steps as KB-BINDER's and KB-Coder's "
    "(Li et al., 2023; Nie et al., 2023)",
    options=(
        Option("beam_width", int, 3, "branches kept at each step (ToG's width: 3)", minimum=1, maximum=16),
        Option("beam_depth", int, 0, "steps a branch may take (0: --max-steps)", minimum=0, maximum=50),
        Option("beam_scoring", str, "auto", "how choose mode's listed steps are scored: the model's likelihood, the "
               "reply's log-probabilities, the list's order, the policy's own order (auto: policy for the bundled model, "
               "else logprobs)",
               choices=SCORINGS),
        Option("beam_samples", int, 3, "text, tools and grammar modes: samples per state (each with its own seed)",
               minimum=1, maximum=16),
        Option("beam_temperature", float, 0.7, "text, tools and grammar modes: the samples' temperature",
               minimum=0.05, maximum=2.0),
        MAX_LLM_CALLS,
        SEED,
    ),
    rank=30,
)
def solve_beam(llm: Any, env: Any, question: str, config: AgentConfig, beam_width: int = 3, beam_depth: int = 0,
               beam_scoring: str = "auto", beam_samples: int = 3, beam_temperature: float = 0.7,
               max_llm_calls: int = MAX_LLM_CALLS.default, seed: int = SEED.default) -> AgentResult:
    """Answer with a :class:`Beam` search (its options: see the module docstring)."""
    return Beam(llm, config, width=beam_width, depth=beam_depth, scoring=beam_scoring, samples=beam_samples,
                temperature=beam_temperature, max_llm_calls=max_llm_calls, seed=seed).run(env, question)
