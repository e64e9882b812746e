"""Readi: generate reasoning paths, instantiate them, edit only when necessary.

1. **Generation**: the LLM writes one path per topic entity (one call).
2. **Instantiation** (:mod:`agent.methods.instantiate`): relation binding + BFS path
   connecting on the KB, as PyQL chains.
3. **Editing, only when necessary**: if a relation does not connect, a path
   is empty, or a path ends on unnamed relationship nodes, the LLM gets the
   reason, a sample of the half-way instances and the candidate relations
   around the stuck point (ranked against the question, capped), and edits
   the paths. An edit that is unchanged, malformed or too long is rejected
   and asked again. At most ``max_edits`` edit calls (default 4).
4. **Merge and answer**: the complete paths meet on ``?answer``, so their
   PyQL chain is the intersection of their instances; the QA call answers
   from the knowledge triplets (labels, not ids), or, with ``skip_qa``, the
   answer variable's values are returned when every path is complete.

Example:
    >>> from pyql.kb import KB
    >>> from agent.llm.scripted import ScriptedLLM
    >>> llm = ScriptedLLM(["One entity.\\nPath: {\\"Jamaica\\": [Jamaica -> location.country.languages_spoken]}"])
    >>> result = Readi(llm, ReadiConfig(skip_qa=True)).run(KB.open("demo"), "what languages are spoken in jamaica?", {"Jamaica": "m.03_r3"})
    >>> sorted(a["value"] for a in result.answers), result.llm_calls, result.extra["isr"]
    (['m.01428y', 'm.04ygk0'], 1, True)
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from agent.faults import status_of
from agent.llm.replies import LLM
from agent.llm.gbnf import path_gbnf
from agent.methods.context_budget import budget_for
from agent.methods.episode import AgentResult, StepTrace, as_branch, prompt_templates
from agent.methods.instantiate import Instantiator, PathInstance
from agent.methods.readi_loop import UNANSWERED, LoopOutcome, ask_llm, llm_failure, run_loop
from agent.methods.readi_table import TableReadi
from agent.methods.sides import side_for
from agent.methods.reasoning_path import (
    PathSpec,
    PathSyntaxError,
    parse_paths,
    render_paths,
    to_chain,
)
from pyql.errors import ParseError, PyQLError
from pyql_sql.next_steps import question_style

__all__ = ["ReadiConfig", "Readi", "KBPaths", "run_readi", "parse_answers", "TEMPLATE_VERSION"]

#: Stop sequences of Readi's calls on a KB.
_STOP = ("\nQuestion:", "\nQ:")

TEMPLATE_VERSION = "readi-1"


@dataclass
class ReadiConfig:
    """Settings of Readi.

    Attributes:
        max_edits: LLM edit calls at most (default 4; the paper's D.2 shows 4 is enough).
        top_k: KB relations bound per path relation.
        frontier_limit: frontier values whose relations are looked at per hop.
        candidate_cap: candidate relations shown around a stuck point.
        sample: instance triples per relation shown in messages.
        max_path_length: relations per path above which an edit is "too long".
        skip_qa: skip the QA call when every path is complete and has answers.
        max_triplets: knowledge triplets given to the QA call.
    """

    max_edits: int = 4
    top_k: int = 5
    frontier_limit: int = 300
    candidate_cap: int = 35
    sample: int = 3
    max_path_length: int = 6
    skip_qa: bool = False
    max_triplets: int = 60

    def __post_init__(self) -> None:
        if self.max_edits < 0 or self.top_k < 1 or self.frontier_limit < 1 or self.candidate_cap < 1:
            raise PyQLError("ReadiConfig: max_edits ≥ 0 and top_k, frontier_limit, candidate_cap ≥ 1")


def parse_answers(text: str) -> list[str]:
    """The answers an LLM enclosed in braces (``{De Smet}``), last ones first found.

    Example:
        >>> parse_answers("So, the answer is {Hurricane Sandy}.")
        ['Hurricane Sandy']
        >>> parse_answers("the answers are {A} and {B}")
        ['A', 'B']
        >>> parse_answers("no idea")
        []
    """
    found = [m.strip() for m in re.findall(r"\{([^{}]+)\}", text)]
    return [f for f in dict.fromkeys(found) if f]



class KBPaths:
    """Readi's reasoning paths on a KB, for :func:`agent.methods.readi_loop.run_loop`: relation paths
    from the topic entities, instantiated as PyQL chains (:class:`~agent.methods.instantiate.Instantiator`).
    """

    stop = _STOP
    unchanged = "your last edit did not change the path; change the relations that failed."
    empty_path: tuple[PathSpec, ...] = ()

    def __init__(self, inst: Instantiator, config: ReadiConfig, entities: Mapping[str, str], question: str) -> None:
        self.inst = inst
        self.config = config
        self.entities = entities
        self.question = question
        self._templates = prompt_templates()

    def generate_prompt(self, question: str) -> str:
        entity_names = json.dumps(list(self.entities), ensure_ascii=False)
        return self._templates.get_template("readi_generate.j2").render(question=question, entities=entity_names)

    def first(self, text: str, triggers: Counter[str]) -> tuple[tuple[PathSpec, ...], str | None]:
        paths: tuple[PathSpec, ...] = ()
        problem = None
        try:
            paths = parse_paths(text, topics=list(self.entities))
        except PathSyntaxError as exc:
            problem = f"the reasoning path could not be read ({exc}); write Entity -> relation -> relation."
        if not paths:
            triggers["readi_empty_path"] += 1
        return paths, problem

    def parse(self, text: str) -> tuple[PathSpec, ...]:
        return parse_paths(text, topics=list(self.entities))

    def instantiate(self, paths: tuple[PathSpec, ...]) -> list[PathInstance]:
        return self.inst.instantiate(paths, self.entities, self.question) if paths else []

    def describe(self, paths: tuple[PathSpec, ...], results: list[PathInstance]) -> str:
        """Per path: the relations it was bound to and its first values, or where and why it stopped."""
        if not results:
            return "no reasoning path was read"
        parts = []
        for r in results:
            if r.complete:
                shown = ", ".join(v.display() for v in r.values[:5]) + (", ..." if len(r.values) > 5 else "")
                parts.append(f"{r.spec.render()}: instantiated as {' -> '.join(r.bound)}; values [{shown}]")
            else:
                where = f" at {r.stuck_relation}" if r.stuck_relation else ""
                parts.append(f"{r.spec.render()}: {r.error or 'not instantiated'}{where} after {r.progress} of {len(r.spec.relations)} relations")
        return "; ".join(parts)

    def feedback(
        self, paths: tuple[PathSpec, ...], results: list[PathInstance], problem: str | None, triggers: Counter[str]
    ) -> tuple[list[str], str, list[str]] | None:
        if not (problem or not results or not all(r.complete for r in results)):
            return None
        for r in results:
            if not r.complete:
                triggers[f"readi_{r.error}"] += 1
        return self._errors(results, problem or (None if results else "empty reasoning path."))

    def edit_prompt(
        self, question: str, paths: tuple[PathSpec, ...], results: list[PathInstance], feedback: tuple[list[str], str, list[str]]
    ) -> str:
        errors, contexts, candidates = feedback
        return self._templates.get_template("readi_edit.j2").render(
            question=question,
            paths=render_paths(paths) if paths else "(none)",
            errors=errors,
            contexts=contexts,
            candidates=repr(candidates),
        )

    def edit_grammar(
        self, paths: tuple[PathSpec, ...], results: list[PathInstance], feedback: tuple[list[str], str, list[str]]
    ) -> str | None:
        """On a local llama.cpp server: the edit's GBNF (:func:`agent.llm.gbnf.path_gbnf`), None without candidates.

        The paths start at the topic entities and use only the prompt's
        candidate relations and the relations the paths were bound to, so an
        edit cannot name a relation the KB does not have around the stuck point.
        """
        relations = [*feedback[2], *(b for r in results for b in r.bound)]
        if not relations or not self.entities:
            return None
        return path_gbnf(list(self.entities), relations, self.config.max_path_length, max_paths=max(1, len(self.entities)))

    def malformed(self, exc: ParseError) -> str:
        return f"your last edit could not be read ({exc.args[0]}); answer with Final Path: Entity -> relation -> relation."

    def reject(self, edited: tuple[PathSpec, ...]) -> str | None:
        cfg = self.config
        too_long = [p for p in edited if len(p.relations) > cfg.max_path_length]
        if too_long or len(edited) > 2 * max(1, len(self.entities)) + 1:
            return f"your last edit is too long; use at most {cfg.max_path_length} relations per path and one path per topic entity."
        return None

    def _errors(self, results: Sequence[PathInstance], problem: str | None) -> tuple[list[str], str, list[str]]:
        errors: list[str] = []
        contexts: list[str] = []
        candidates: list[str] = []
        if problem:
            errors.append(problem)
        for r in results:
            if r.error == "relation_not_instantiated":
                errors.append(f'relation "{r.stuck_relation}" not instantiated.')
            elif r.error == "unnamed_end":
                errors.append(f"<compound node> in the end of the path from {r.spec.start}.")
            elif r.error == "unknown_entity":
                topics = ", ".join(json.dumps(name, ensure_ascii=False) for name in self.entities) or "none"
                errors.append(f'"{r.spec.start}" is not a topic entity of the question; start from one of: {topics}.')
            elif r.error == "empty_path":
                errors.append(f"the path from {r.spec.start} is empty.")
            contexts.extend(str(t) for t in r.instances)
            candidates.extend(c for c in r.around if c not in candidates)
        return errors, ", ".join(contexts) or "none", candidates[: self.config.candidate_cap]


class Readi:
    """The Readi method on a knowledge base.

    Args:
        llm: any :class:`agent.llm.replies.LLM`.
        config: a :class:`ReadiConfig`.
        ranker: relation ranker for binding and for candidates (BM25 by default).
        vocabulary: the KB's relation names (read from the KB if None).
    """

    def __init__(self, llm: LLM, config: ReadiConfig | None = None, ranker: Any = None, vocabulary: Sequence[str] | None = None) -> None:
        self.llm = llm
        self.config = config or ReadiConfig()
        self.ranker = ranker
        self.vocabulary = vocabulary
        self._templates = prompt_templates()

    def run(self, kb: Any, question: str, entities: Mapping[str, str]) -> AgentResult:
        """Answer one question.

        LLM failures end the run with ``result.error`` set and the status
        ``failed_to_run`` (also when the final QA call fails); KB errors raise
        (:func:`agent.evaluation.runner.solve` tells a KB that cannot be reached from the query's fault).
        """
        started = time.perf_counter()
        queries0 = kb.stats.queries
        cfg = self.config
        inst = Instantiator(
            kb,
            self.ranker,
            top_k=cfg.top_k,
            frontier_limit=cfg.frontier_limit,
            around_cap=cfg.candidate_cap,
            sample=cfg.sample,
            vocabulary=self.vocabulary,
        )
        loop = run_loop(self.llm, KBPaths(inst, cfg, entities, question), question, cfg.max_edits)
        results: list[PathInstance] = loop.instance
        complete = [r for r in results if r.complete]
        answers: list[dict[str, Any]] = []
        merged_values: list[dict[str, Any]] = []
        query_text = ""
        if complete and loop.error is None:
            chain = to_chain([r.bound_spec() for r in complete], entities, kb.profile)
            query_text = chain.sparql()
            rows = kb.execute(chain.set_answer("?answer"), limit=1000)
            merged_values = [v.to_dict() for v in rows.answers()]
        error = loop.error
        if error is None:
            if cfg.skip_qa and complete and len(complete) == len(results) and merged_values:
                answers = merged_values
            else:
                got = self._qa(question, results, merged_values, loop.traces)
                if got is None:
                    error = llm_failure(loop.traces)
                answers = got or []
        traces = as_branch(loop.traces)  # one branch: each call follows the one before
        return AgentResult(
            question=question,
            answers=answers,
            steps=traces,
            done=error is None,
            forced=False,
            query=query_text,
            llm_calls=sum(1 for t in traces if t.error not in UNANSWERED),
            tokens_in=sum(t.tokens_in for t in traces),
            tokens_out=sum(t.tokens_out for t in traces),
            kb_queries=kb.stats.queries - queries0,
            seconds=time.perf_counter() - started,
            rules=dict(loop.triggers),
            error=error,
            extra=_measures(loop, results, merged_values),
            status=status_of(error),
        )

    def _qa(
        self, question: str, results: Sequence[PathInstance], merged: list[dict[str, Any]], traces: list[StepTrace]
    ) -> list[dict[str, Any]] | None:
        """The answers of the QA call, or None when the LLM failed."""
        triplets: list[str] = []
        for r in results:
            for t in r.instances:
                if str(t) not in triplets:
                    triplets.append(str(t))
        # The merged answers, as triplets of their own so the QA call sees them by name.
        triplets = triplets[: self.config.max_triplets]
        template = self._templates.get_template("readi_qa.j2")

        def prompt(k: int) -> str:
            more = f" (and {len(triplets) - k} more, left out: the model's context is full)" if k < len(triplets) else ""
            return template.render(question=question, triplets=(", ".join(triplets[:k]) or "(none)") + more)

        text = ask_llm(self.llm, lambda: budget_for(self.llm).fit_items(prompt, len(triplets)), "qa", traces, ["\nQ:"])
        if text is None:
            return None
        names = parse_answers(text)
        traces[-1].observation = f"answers: {', '.join(names)}" if names else "no answer in {...} found in the reply"
        pool: dict[str, dict[str, Any]] = {}
        for value in merged:
            for key in (value.get("label"), value.get("value")):
                if key:
                    pool.setdefault(str(key).lower(), value)
        for r in results:
            for v in r.values:
                d = v.to_dict()
                for key in (d.get("label"), d.get("value")):
                    if key:
                        pool.setdefault(str(key).lower(), d)
        out = []
        for name in names:
            out.append(pool.get(name.lower(), {"value": name, "label": None}))
        return out


def _distinct_answers(answers: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{"value", "label"}`` answers, one per value, sorted by value.

    Example:
        >>> _distinct_answers([{"value": "mq:b", "label": "B"}, {"value": "mq:a", "label": "A"}, {"value": "mq:b", "label": "B"}])
        [{'value': 'mq:a', 'label': 'A'}, {'value': 'mq:b', 'label': 'B'}]
    """
    seen: dict[str, dict[str, Any]] = {}
    for a in answers:
        seen.setdefault(str(a["value"]), {"value": a["value"], "label": a.get("label")})
    return [seen[k] for k in sorted(seen)]


def _measures(loop: LoopOutcome, results: Sequence[PathInstance], merged: list[dict[str, Any]]) -> dict[str, Any]:
    """Readi's measures of a run on a KB (LPP, LIP, AIP, ISR, CER) and its paths."""
    lengths = [len(r.spec.relations) for r in results] or [0]
    progress = [r.progress for r in results] or [0]
    return {
        "method": "readi",
        "initial_paths": render_paths(loop.initial),
        "final_paths": render_paths(loop.path),
        "edits": loop.edits,
        "lpp": sum(lengths) / len(lengths),
        "lip": sum(progress) / len(progress),
        "aip": sum(p / n for p, n in zip(progress, lengths) if n) / max(1, len([n for n in lengths if n])),
        "isr": bool(results) and all(r.complete for r in results),
        "cer": any(r.ends_unnamed for r in results),
        "instance_values": [v["value"] for v in merged] or sorted({v.to_dict()["value"] for r in results for v in r.values}),
        # the same values with their labels, so answer coverage compares like with like (ids or labels on both sides)
        "instance_answers": merged or _distinct_answers(v.to_dict() for r in results for v in r.values),
        "template_version": TEMPLATE_VERSION,
    }


def run_readi(llm: LLM, env: Any, question: str, config: Any = None) -> AgentResult:
    """Readi on the backend of a step environment: its KB and linked entities, or its table.

    ``config`` (the agent's settings) is accepted for the runner's
    ``solve(llm, env, question, config)`` signature; Readi uses its own defaults.

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> from agent.llm.scripted import ScriptedLLM
        >>> env = SparqlEnvironment(KB.open("demo"), entities={"Jamaica": "m.03_r3"})
        >>> llm = ScriptedLLM(["Path: Jamaica -> location.country.languages_spoken", "So {Jamaican English}."])
        >>> run_readi(llm, env, "what languages are spoken in jamaica?").llm_calls
        2
    """
    if side_for(env).data == "table":
        return TableReadi(llm).run(env.table, question, question_style(env))
    return Readi(llm).run(env.kb, question, dict(env.memory.entities))
