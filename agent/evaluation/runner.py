"""The evaluation runner behind ``pyql eval`` (and the single question of ``pyql ask``).

:func:`run_eval` answers every item of a data set (:mod:`agent.evaluation.datasets`)
with an agent and writes one JSON line per finished question to the run
file, as soon as it is finished (append, flush, fsync). The line is the
question's whole trace (:func:`make_record`): the question, its gold
answers, the agent's answers, every step (the prompt's sha256, or the prompt
itself with ``trace_prompts="full"``, and the template version; the reply,
the parsed action, the observation, the rule that fired, timings, tokens,
KB queries), the totals and the scores (:func:`agent.evaluation.metrics.score_question`).

Resuming. ``resume=True`` reads the run file first and skips the ids it
already holds. A last line cut short by a crash (no newline, not JSON) is
detected and removed; a line in the middle that is not JSON stops the run
with the line number. Records are never rewritten: when an id appears twice
the last line wins (:func:`latest_records`).

Failed to run. Every record has a ``status``: ``finished`` (the episode ran
to its end; scored) or ``failed_to_run`` (:mod:`agent.faults`: the LLM
failed after its retries, the KB could not be reached or did not answer).
A question that failed to run is written with its ``error`` (``kind:
message``) and empty ``metrics``; it is not scored (:func:`agent.evaluation.metrics.aggregate`
counts it apart), not counted as finished, and run again on resume. After
``max_infra_failures`` such questions in a row the run stops by itself
(:attr:`EvalOutcome.aborted`), instead of writing failures for the rest of
the data set.

Ctrl-C (KeyboardInterrupt) stops the run at once: finished lines stay in
the file, the questions being answered are dropped (not written; they run
again on resume), and :attr:`EvalOutcome.interrupted` is set. The
questions run in daemon threads while the caller's thread waits for their
records, so the interrupt is seen at once and nobody waits for a request
under way: the workers refuse every later LLM call and retry
(:class:`RunStopped`), and what is in flight dies with the process. A
second Ctrl-C ends the process at once (exit status 130).

The run file (:class:`RunWriter`). One writer at a time: a second run on
the same file is refused (:class:`RunLock`, ``fcntl.flock`` on
``RUN.jsonl.lock`` beside it). A file that cannot be created or written
(a read-only or missing place, a device, a full disk) is an
:class:`~agent.errors.EvalError` naming the path and the OS error; a line
cut by a failed write is taken back. Every record carries the settings it
was answered with (:func:`run_fingerprint`: model, method, feedback, KB,
action mode ...); ``pyql eval --resume`` with other settings is refused
(:func:`settings_differences`) unless ``--allow-mixed`` (``run_eval(allow_mixed=False)``).

Concurrency. ``concurrency=N`` answers N questions at a time in daemon
threads; only the caller's thread writes the file. Every question gets its own
environment and its own agent. The LLM object is shared (the ``openai``
client is thread-safe). The KB is shared too, behind :class:`LockedKB`: one
lock serializes its queries, because rdflib's ``Graph`` is not safe to query
from several threads and an on-disk Oxigraph store cannot be opened twice,
and each question counts its own KB queries (QPQ) on its own
:class:`~pyql.kb.KBStats`. A SPARQL endpoint (``http(s)://``) is opened
once per question instead, so its queries run in parallel. The time goes
into the LLM calls, which overlap.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from agent.llm.config import LLMConfig
    >>> from agent.llm.scripted import ScriptedLLM
    >>> item = {"id": "q01", "question": "what category is tropical storm rachel?",
    ...         "entities": {"Tropical Storm Rachel": "m.0crbvqz"}, "answers": ["m.05f4r3k"]}
    >>> llm = ScriptedLLM([" Category.\\nAction 1: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
    ...                    " Done.\\nAction 2: execute()"], config=LLMConfig(mode="completion"))
    >>> out = Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> outcome = run_eval([item], out, llm, RunSettings(kb="demo", feedback="raw"), progress=None)
    >>> outcome.metrics.f1, outcome.new, json.loads(out.read_text())["answers"][0]["label"]
    (1.0, 1, 'Tropical storm (SSHS)')
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import functools
import inspect
import json
import os
import queue
import re
import signal
import stat
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TextIO

from agent.errors import AgentConfigError, EvalError  # noqa: F401 (EvalError: defined in agent/errors.py)
from agent.evaluation.cost import mean_cost, question_cost
from agent.evaluation.environments import KB_HINT, kb_options, open_environment
from agent.evaluation.shards import parse_shard, resume_differences, select
from agent.evaluation.metrics import (
    CategoryProgress,
    RunMetrics,
    aggregate,
    cost_usd,
    score_question,
    trigger_stats,
    write_summary_markdown,
)
from agent.faults import FAILED_TO_RUN, FINISHED, error_kind, failed_to_run, infra_failure, stop_advice
from agent.jsonlines import dumps_line
from agent.methods import ranking
from agent.methods.episode import RECORD_TEXT_LIMIT, AgentResult, cap_strings
from agent.methods.config import AgentConfig
from agent.methods.sides import infra_kb
from agent.methods.strategies import registry as strategies
from pyql.environment import Environment
from pyql.echo import redact_credentials
from pyql.errors import PyQLError, RecordingDamaged
from pyql.kb import KB, KBStats, kb_backends

__all__ = [
    "EvalError",
    "EvalOutcome",
    "capped_record",
    "KBProvider",
    "LockedKB",
    "Progress",
    "RunSettings",
    "RunLock",
    "RunStopped",
    "RunWriter",
    "answer_item",
    "environment_for",
    "latest_records",
    "make_record",
    "model_name",
    "opens_per_question",
    "read_run",
    "relation_ranker",
    "reply_thought",
    "run_eval",
    "run_fingerprint",
    "run_lines",
    "run_question",
    "resume_conflicts",
    "settings_differences",
    "solver",
    "summary_path",
    "summary_text",
    "write_run_summary",
]

Solver = Callable[[Any, Any, str, AgentConfig], AgentResult]


class RunStopped(BaseException):
    """Raised in a worker's next LLM call once the run is stopping (Ctrl-C, too many failures to run).

    A BaseException, so that neither the retry loop nor the agent catches it.
    """


# ---------------------------------------------------------------------------
# Settings, methods, rankers


@dataclass
class RunSettings:
    """What the command-line flags say about how to answer questions.

    Attributes:
        kb: the KB spec (any form of :meth:`pyql.kb.KB.open`: ``demo``, a file, ``oxigraph:DIR``, an endpoint URL, ...); None for table data.
        profile: the KB profile (freebase, wikidata, generic).
        method: a registered strategy (:mod:`agent.methods.strategies`): ``greedy`` (QueryAgent; ``queryagent`` is
            its alias, kept as ``greedy``), ``readi``, or one registered with ``@strategy``.
        options: the strategy's options (:class:`agent.methods.strategies.registry.Option`), by name; those not
            given take their defaults.
        feedback: eraser, raw or none (see :class:`agent.methods.query_agent.AgentConfig`).
        max_steps: the agent's step limit.
        max_repeats: repeats of one failed action before the agent stops that line (QueryAgent).
        run_advice: ERASER's advice runs the step (True) or blocks it (``--advice block``, for ablations).
        escalate: a repeated failed action escalates (True) or gets the same guideline (``--no-escalation``).
        example: the one-shot example (a bundled name or a file); None picks the default.
        ranker: the relation ranker (bm25, embedding, hybrid, none); None shows every relation.
        max_relations: relations shown per direction before ranking applies.
        trace_prompts: "hash" or "full".
        action_mode: text, tools, grammar or choose.
        first_relation: choose mode: "ranked" or "model" (see :class:`~agent.methods.query_agent.AgentConfig`).
        choice_preview: choose mode: show each listed step's result preview.
        prices: a price table for the cost (default :data:`agent.evaluation.metrics.PRICES`).
        kb_timeout: seconds one query to a SPARQL endpoint may take in all (None: the backend's 60 s).
        default_graph: the graph IRI an endpoint is queried on (None: the endpoint's default).
        count_cap: distinct values an observation counts exactly per variable (None: the KB's 1,000).
        action_set: the KB's action set: ``sparql`` (pyql's, the profile's default set), ``sparql-all``
            (every SPARQL action: MarkQA's arguments, ``add_max``'s ties flag, ``add_union``) or
            ``agentbench`` (AgentBench's functions).
        observe: with ``agentbench``: a new variable's values (``rows``) or its type only (``type``).
        shard: the part of the data set this run answers, ``K/N`` (``pyql eval --shard``:
            every N-th question from the K-th, :mod:`agent.evaluation.shards`); None: all of it.

    Example:
        >>> RunSettings(feedback="raw", max_steps=5).agent_config().max_steps
        5
    """

    kb: str | None = None
    profile: str = "freebase"
    method: str = "greedy"
    feedback: str = "eraser"
    max_steps: int = 12
    max_repeats: int = 3
    run_advice: bool = True
    escalate: bool = True
    example: str | None = None
    ranker: str | None = "bm25"
    max_relations: int = 40
    trace_prompts: str = "hash"
    action_mode: str = "text"
    first_relation: str = "ranked"
    choice_preview: bool = True
    prices: Mapping[str, tuple[float, float]] | None = None
    kb_timeout: float | None = None
    default_graph: str | None = None
    count_cap: int | None = None
    action_set: str = "sparql"
    observe: str = "rows"
    options: Mapping[str, Any] = field(default_factory=dict)
    shard: str | None = None

    def __post_init__(self) -> None:
        self.method = strategies.canonical(self.method) or self.method  # an alias is written as the strategy's name

    def agent_config(self) -> AgentConfig:
        """The :class:`AgentConfig` of these settings (raises AgentConfigError for bad values)."""
        return AgentConfig(
            max_steps=self.max_steps,
            max_repeats=self.max_repeats,
            feedback=self.feedback,
            example=self.example,
            trace_prompts=self.trace_prompts,
            action_mode=self.action_mode,
            first_relation=self.first_relation,
            choice_preview=self.choice_preview,
        )

    def describe(self) -> dict[str, Any]:
        """The settings as JSON (for the summary file), without the price table (the options only when there are some),
        and without a password in the KB's URL.

        Example:
            >>> RunSettings(kb="http://alice:s3cret@127.0.0.1:8890/sparql").describe()["kb"]
            'http://alice:***@127.0.0.1:8890/sparql'
        """
        out = asdict(self)
        out.pop("prices", None)
        if not self.options:
            out.pop("options", None)
        out["kb"] = None if self.kb is None else redact_credentials(str(self.kb))
        if self.shard is None:
            out.pop("shard", None)
        return out


def solver(method: str, options: Mapping[str, Any] | None = None) -> Solver:
    """The function that answers one question with the strategy ``method``: ``solve(llm, env, question, config)``.

    The strategies are registered in :mod:`agent.methods.strategies` (``greedy``
    runs :class:`~agent.methods.query_agent.QueryAgent`, ``queryagent`` is its
    alias; ``readi`` runs :func:`agent.methods.readi.run_readi`, on a KB or a
    table alike); ``options`` are the strategy's, checked (the others take
    their defaults).

    Raises:
        EvalError: an unknown method, or an option it does not have or a value it does not allow.

    Example:
        >>> solver("queryagent").__name__, solver("greedy").__name__, solver("readi").__name__
        ('solve_greedy', 'solve_greedy', 'run_readi')
        >>> solver("magic")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agent.errors.EvalError: unknown method 'magic'; use one of greedy, queryagent, readi...
    """
    try:
        return strategies.entry(method).bind(options)
    except AgentConfigError as exc:
        raise EvalError(str(exc)) from None


def relation_ranker(name: str | None, max_relations: int = 40, lock: Any = None) -> Callable[[str | None, list[str]], list[str]] | None:
    """The ``relation_ranker`` for :class:`~pyql.environment.sparql.SparqlEnvironment` (via :mod:`agent.methods.ranking`).

    ``none`` keeps the KB's order (the paper's "w/o RR" ablation); the others
    rank and keep the top ``max_relations``, shuffled (QueryAgent B.3). Calls
    are serialized by ``lock`` (rankers keep caches). None when the name is
    None.

    Raises:
        EvalError: ``max_relations`` < 1.
        agent.errors.RankingError: an unknown name, or the embeddings extra is missing.

    Example:
        >>> rank = relation_ranker("bm25", max_relations=1)
        >>> rank("what languages are spoken in jamaica", ["location.country.capital", "location.country.languages_spoken"])
        ['location.country.languages_spoken']
    """
    if max_relations < 1:
        raise EvalError(f"--max-relations must be >= 1, got {max_relations}")
    if name is None:
        return None
    ranker = ranking.get_ranker(name)
    order = "score" if name.strip().lower() == "none" else "shuffle"
    guard = lock if lock is not None else threading.Lock()

    def rank(question: str | None, relations: list[str]) -> list[str]:
        with guard:
            return ranking.select_relations(question or "", relations, ranker, limit=max_relations, order=order)

    return rank


# ---------------------------------------------------------------------------
# KBs shared between threads


class LockedKB:
    """A KB shared by several questions: calls are serialized by a lock, queries counted per question.

    Every method call of the wrapped KB runs under the lock; the queries and
    seconds it adds to the shared KB's stats are added to this wrapper's own
    :attr:`stats` (which the environment reads), so each question sees only
    its own KB queries. Other attributes (``profile``, ``name`` ...) are the KB's.

    Example:
        >>> from pyql.kb import KB
        >>> shared = KB.open("demo")
        >>> a, b = LockedKB(shared), LockedKB(shared)
        >>> _ = a.select("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
        >>> a.stats.queries, b.stats.queries, a.profile.name
        (1, 0, 'freebase')
    """

    def __init__(self, kb: Any, lock: Any = None) -> None:
        self._kb = kb
        self._lock = lock if lock is not None else threading.RLock()
        self.stats = KBStats()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._kb, name)
        if not callable(attr):
            return attr
        kb, lock, stats = self._kb, self._lock, self.stats

        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                q0, s0, e0 = kb.stats.queries, kb.stats.seconds, kb.stats.errors
                try:
                    return attr(*args, **kwargs)
                finally:
                    stats.queries += kb.stats.queries - q0
                    stats.seconds += kb.stats.seconds - s0
                    stats.errors += kb.stats.errors - e0

        return call

    def __repr__(self) -> str:
        return f"LockedKB({self._kb!r})"


class KBProvider:
    """Hands each question its KB: a :class:`LockedKB` on one shared KB, or one opened for the question.

    A SPARQL endpoint is opened per question (its queries run in parallel);
    a per-question form (``subgraphs:FILE``, :attr:`pyql.kb.registry.KBBackend.per_question`)
    opens each question's own KB, ``SPEC#ID`` by the item's id.

    Args:
        spec: a KB spec for :meth:`pyql.kb.KB.open`, or an open KB object.
        profile: the profile for a spec.
        **options: options of the backend (``timeout``, ``default_graph`` of an endpoint).

    Example:
        >>> p = KBProvider("demo")
        >>> type(p.get()).__name__, p.get() is p.get()
        ('LockedKB', False)
        >>> p = KBProvider("subgraphs:tests/data/subgraphs/rog.jsonl")
        >>> p.get({"id": "WebQTest-12"}).has_entity("sg:Jaxon_Bieber"), p.get({"id": "WebQTest-100"}).has_entity("sg:Jaxon_Bieber")
        (True, False)
    """

    def __init__(self, spec: Any, profile: str = "freebase", **options: Any) -> None:
        self.spec = spec
        self.profile = profile
        self.options = options
        self._lock = threading.RLock()
        self.per_question = opens_per_question(spec)
        entry = kb_backends.backend_for(spec) if self.per_question else None
        self.by_id = entry is not None and entry.per_question
        if self.per_question:
            self._kb = None
            KB.open(spec, profile, **options)  # bad options (a bad subgraph file) fail before the first question
        else:
            self._kb = KB.open(spec, profile, **options) if isinstance(spec, (str, Path)) else spec

    def get(self, item: Mapping[str, Any] | None = None) -> Any:
        """The KB one question uses (``item``: the question, for a per-question form).

        Raises:
            pyql.errors.KBError: the question's own KB does not open (no subgraph for its id).
        """
        if self.by_id:
            if item is None:
                raise EvalError(f"--kb {self.spec} holds one KB per question: give the question's item")
            return KB.open(f"{self.spec}#{item['id']}", self.profile, **self.options)
        if self.per_question:
            return KB.open(self.spec, self.profile, **self.options)
        return LockedKB(self._kb, self._lock)


def opens_per_question(spec: Any) -> bool:
    """Whether a KB spec is opened for each question: an endpoint, or a per-question form without its ``#ID``.

    Example:
        >>> opens_per_question("http://127.0.0.1:8890/sparql"), opens_per_question("subgraphs:rog.jsonl")
        (True, True)
        >>> opens_per_question("demo"), opens_per_question("subgraphs:rog.jsonl#WebQTest-12")
        (False, False)
    """
    if not isinstance(spec, str):
        return False
    if spec.startswith(("http://", "https://")):
        return True
    entry = kb_backends.backend_for(spec)
    return entry is not None and entry.per_question and "#" not in str(entry.argument(spec))


# ---------------------------------------------------------------------------
# One question


def environment_for(item: Mapping[str, Any], kb: Any, settings: RunSettings, ranker: Any = None) -> Environment:
    """A fresh environment for one item, built by :func:`agent.evaluation.environments.open_environment`
    with the run's feedback mode (the analyzer is fixed here, for the agent).

    Raises:
        pyql.errors.UsageError: a KB question but no KB.
        pyql_sql.errors.TableInputError: the item's table does not load.
    """
    return open_environment(settings, item, kb=kb, ranker=ranker, agent=True)


def model_name(llm: Any) -> str | None:
    """The model name of an LLM object, without asking a server.

    Example:
        >>> from agent.llm.scripted import ScriptedLLM
        >>> model_name(ScriptedLLM([])), model_name(object())
        ('scripted', None)
    """
    inner = getattr(llm, "_llm", None)
    if inner is not None:
        return model_name(inner)
    static = inspect.getattr_static(llm, "model", None)
    if isinstance(static, str):
        return static
    cached = getattr(llm, "_model", None)
    if isinstance(cached, str):
        return cached
    model = getattr(getattr(llm, "config", None), "model", None)
    return model if isinstance(model, str) else None


#: The settings a record carries and a resumed run must share (:func:`run_fingerprint`).
FINGERPRINT_KEYS = (
    "model", "llm_mode", "temperature", "max_tokens", "context_tokens", "max_reply_chars", "method", "feedback", "kb",
    "action_mode", "max_steps", "max_repeats", "run_advice", "escalate", "example", "ranker", "max_relations",
    "first_relation", "choice_preview", "kb_timeout", "default_graph", "count_cap",
)


def _kb_spec(kb: Any) -> Any:
    """A KB spec as recorded: a file's absolute path (the same KB however it was written), else as given (a URL's
    password written ``***``: it is in no record, and a resume with another password is the same KB)."""
    if isinstance(kb, (str, Path)) and not str(kb).startswith(("http://", "https://")) and Path(kb).exists():
        return str(Path(kb).resolve())
    return None if kb is None else redact_credentials(str(kb))


def run_fingerprint(settings: RunSettings, llm: Any = None) -> dict[str, Any]:
    """The settings that decide a run's answers, as recorded in each of its records (``"settings"``).

    The model and the LLM's sampling settings come from ``llm`` (None when
    they are not known yet, e.g. a server's default model); the rest from
    ``settings``. The profile follows from the KB and the trace options do
    not change answers: neither is part of it.

    Example:
        >>> fp = run_fingerprint(RunSettings(kb="demo", feedback="raw"))
        >>> fp["kb"], fp["feedback"], fp["model"]
        ('demo', 'raw', None)
    """
    config = getattr(llm, "config", None)
    out: dict[str, Any] = {
        "model": model_name(llm) if llm is not None else None,
        "llm_mode": getattr(config, "mode", None),
        "temperature": getattr(config, "temperature", None),
        "max_tokens": getattr(config, "max_tokens", None),
        "context_tokens": getattr(config, "context_tokens", None),  # prompts are fitted to it: answers change with it
        "max_reply_chars": getattr(config, "max_reply_chars", None),  # replies are cut there: answers change with it
        "kb": _kb_spec(settings.kb),
    }
    for key in FINGERPRINT_KEYS:
        if key not in out:
            out[key] = getattr(settings, key)
    if settings.options:  # a strategy's options decide its answers too (none: nothing written, as before options)
        out["options"] = dict(settings.options)
    if settings.shard is not None:  # which questions it answers (none: all, written as before shards)
        out["shard"] = settings.shard
    return out


def _recorded_settings(record: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a record was answered with (older records: their method, feedback and model).

    A method recorded by a name that is now an alias is read as the strategy's name (``queryagent``
    is ``greedy``), so a run file written before strategies had names resumes with the same settings.
    """
    recorded = record.get("settings")
    out = dict(recorded) if isinstance(recorded, Mapping) else {k: record[k] for k in ("method", "feedback", "model") if k in record}
    if isinstance(out.get("method"), str):
        out["method"] = strategies.canonical(out["method"]) or out["method"]
    return out


def settings_differences(records: Iterable[Mapping[str, Any]], current: Mapping[str, Any]) -> list[str]:
    """What differs between the settings of a run file's records and ``current``, one text per setting.

    A setting unknown on either side (None now, or not recorded by an older
    version) is not compared.

    Example:
        >>> settings_differences([{"id": "a", "settings": {"model": "m1", "feedback": "raw"}}], {"model": "m2", "feedback": "raw"})
        ["model: 'm1' in the run file, 'm2' now"]
    """
    seen: dict[str, list[Any]] = {}
    for record in records:
        for key, value in _recorded_settings(record).items():
            if value is not None and value not in seen.setdefault(key, []):
                seen[key].append(value)
    out = []
    for key, now in current.items():
        before = [v for v in seen.get(key, []) if v != now]
        if now is not None and before:
            out.append(f"{key}: {' and '.join(repr(v) for v in before)} in the run file, {now!r} now")
    return out


def resume_conflicts(records: Iterable[Mapping[str, Any]], current: Mapping[str, Any]) -> list[str]:
    """What ``--resume`` would mix into a run file: :func:`settings_differences`, and another shard (:mod:`agent.evaluation.shards`).

    A run without ``--shard`` answers the whole data set, which is a shard too: it does not continue a shard's
    file, nor a shard a whole run's.

    Example:
        >>> resume_conflicts([{"id": "a", "settings": {"model": "m", "shard": "0/2"}}], {"model": "m"})
        ["shard: '0/2' in the run file, the whole data set now (no --shard)"]
    """
    records = list(records)
    differences = [d for d in settings_differences(records, current) if not d.startswith("shard:")]
    return differences + resume_differences(records, current.get("shard"))


def _table_name(table_json: Mapping[str, Any] | None) -> str | None:
    if table_json is None:
        return None
    name = table_json.get("table_name") or table_json.get("name") or table_json.get("id")
    return str(name) if name else "table"


def make_record(item: Mapping[str, Any], result: AgentResult, llm: Any, settings: RunSettings) -> dict[str, Any]:
    """The trace line of one question: the item, the agent's result, the scores and the cost."""
    data = result.to_dict()
    data.pop("question", None)
    gold = item.get("answers")
    is_table = item.get("table") is not None
    model = model_name(llm)
    record: dict[str, Any] = {
        "id": str(item.get("id")),
        "question": item.get("question"),
        "entities": dict(item.get("entities") or {}),
        "gold": list(gold) if gold is not None else None,
        "gold_actions": item.get("actions"),
        "kind": item.get("kind"),
        **({"groups": dict(item["groups"])} if item.get("groups") else {}),  # more --by keys (MarkQA's composition)
        "source": item.get("source"),
        "table": _table_name(item.get("table")) if is_table else None,
        "method": settings.method,
        "feedback": settings.feedback,
        "model": model,
        "settings": run_fingerprint(settings, llm),
    }
    record.update(data)
    gold_form = (item.get("gold_query") or {}).get("s_expression")
    if isinstance(gold_form, str) and gold_form.strip():
        record["gold_form"] = gold_form  # scored by the logical-form exact match (metrics.logical_form_match)
    scored = gold is not None and result.status != FAILED_TO_RUN  # a question that did not run is not scored
    record["metrics"] = score_question(result.answers, gold, table=is_table, source=item.get("source")) if scored else {}
    record["cost_usd"] = cost_usd(model, result.tokens_in, result.tokens_out, settings.prices)
    record["cost"] = question_cost(record)  # LLM calls, tokens, model and KB seconds, branches (agent.evaluation.cost)
    record["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return record


def answer_item(
    item: Mapping[str, Any],
    llm: Any,
    settings: RunSettings,
    kb: Any = None,
    *,
    env: Any = None,
    solve: Solver | None = None,
    ranker: Any = None,
) -> AgentResult:
    """Answer one item with the method of ``settings``; never raises a pyql error.

    A pyql error while setting the question up (a table that does not load,
    no KB) or while answering it ends the question with ``error`` set
    (``kind: message``). When the error is a service failure
    (:func:`agent.faults.infra_failure`: the KB cannot be reached or does not
    answer, the LLM failed) the status is ``failed_to_run``, else
    ``finished``. A damaged recording or cache (:class:`~pyql.errors.RecordingDamaged`)
    and other exceptions (bugs, Ctrl-C) propagate.

    Args: as :func:`run_question`.
    """
    solve = solve or solver(settings.method, settings.options)
    started = time.perf_counter()
    try:
        config = settings.agent_config()
        kb = kb() if callable(kb) else kb  # a KB opened for this question: no subgraph for its id ends it here
        if env is None:
            env = environment_for(item, kb, settings, ranker)
        return solve(llm, env, str(item["question"]), config)
    except RecordingDamaged:
        raise  # the user's recording or cache is damaged: the run stops (no question is failed or scored for it)
    except PyQLError as exc:
        the_kb = infra_kb(env) if env is not None else None  # a KB side's own KB; else the one given, if opened
        if the_kb is None:
            the_kb = None if callable(kb) else kb
        failure = infra_failure(exc, the_kb)
        return AgentResult(
            question=str(item.get("question")),
            answers=[],
            steps=[],
            done=False,
            forced=False,
            query="",
            seconds=time.perf_counter() - started,
            error=str(failure) if failure is not None else f"{exc.kind}: {exc}",
            status=FAILED_TO_RUN if failure is not None else FINISHED,
        )


def run_question(
    item: Mapping[str, Any],
    llm: Any,
    settings: RunSettings,
    kb: Any = None,
    *,
    env: Any = None,
    solve: Solver | None = None,
    ranker: Any = None,
) -> dict[str, Any]:
    """Answer one item and return its trace record (:func:`make_record`); see :func:`answer_item`.

    Args:
        item: a data set item (:mod:`agent.evaluation.datasets`).
        llm: the LLM.
        settings: the run settings.
        kb: the KB for a KB question (see :class:`KBProvider`), or a function opening it.
        env: an environment to use instead of building one from the item.
        solve: the method (default: :func:`solver` of ``settings.method``).
        ranker: the relation ranker (:func:`relation_ranker`).
    """
    result = answer_item(item, llm, settings, kb, env=env, solve=solve, ranker=ranker)
    return make_record(item, result, llm, settings)


_THOUGHT = re.compile(r"^\s*thought\s*\d*\s*:\s*", re.I)
_ACTION = re.compile(r"^\s*action\s*\d*\s*:", re.I | re.M)


def reply_thought(reply: str) -> str:
    """The thought of an LLM reply: the text before the first ``Action N:`` line, ``Thought N:`` removed.

    Example:
        >>> reply_thought(" Rachel's category.\\nAction 1: get_relation(m.0crbvqz)")
        "Rachel's category."
        >>> reply_thought("Thought 2: the time.\\nAction 2: add_max(?t)"), reply_thought("Action 1: execute()")
        ('the time.', '')
    """
    match = _ACTION.search(reply or "")
    head = reply[: match.start()] if match else (reply or "")
    return _THOUGHT.sub("", head.strip(), count=1).strip()


# ---------------------------------------------------------------------------
# The run file


def summary_path(out: str | Path) -> Path:
    """Where the summary of a run file goes: ``RUN.jsonl`` → ``RUN.summary.json``.

    Example:
        >>> summary_path("runs/dev.jsonl").as_posix(), summary_path("runs/dev.out").as_posix()
        ('runs/dev.summary.json', 'runs/dev.out.summary.json')
    """
    path = Path(out)
    return path.with_name(path.stem + ".summary.json") if path.suffix == ".jsonl" else path.with_name(path.name + ".summary.json")


def read_run(path: str | Path, *, repair: bool = False, warn: TextIO | None = None) -> list[dict[str, Any]]:
    """The records of a run file, in file order (an id may repeat; see :func:`latest_records`).

    See :func:`run_lines`, which gives each record with its line number.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> _ = open(p, "w").write('{"id": "a"}\\n{"id": "b", "ans')
        >>> [r["id"] for r in read_run(p, repair=True)], open(p).read()
        (['a'], '{"id": "a"}\\n')
    """
    return [record for _, record in run_lines(path, repair=repair, warn=warn)]


def run_lines(path: str | Path, *, repair: bool = False, warn: TextIO | None = None) -> list[tuple[int, dict[str, Any]]]:
    """The records of a run file with their line numbers, in file order.

    A last line without its newline is the trace of a crash: if it is not
    JSON it is dropped (and with ``repair`` cut off the file); if it is, it
    is kept (and with ``repair`` its newline is added).

    Raises:
        EvalError: the file cannot be read, or a line before the last is not a JSON object.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> _ = open(p, "w").write('{"id": "a"}\\n\\n{"id": "b"}\\n')
        >>> [(n, r["id"]) for n, r in run_lines(p)]
        [(1, 'a'), (3, 'b')]
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise EvalError(f"run file not found: {file}") from None
    except OSError as exc:
        raise EvalError(f"cannot read the run file {file}: {exc}") from None
    records: list[tuple[int, dict[str, Any]]] = []
    lines = data.split(b"\n")
    offset = 0
    for number, raw in enumerate(lines, 1):
        last = number == len(lines)
        start = offset
        offset += len(raw) + 1
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
            if not isinstance(record, dict) or "id" not in record:
                raise ValueError("not a record with an id")
        except (ValueError, UnicodeDecodeError) as exc:
            if last:
                if warn is not None:
                    print(f"pyql: {file}: dropped a cut-off last line (from an interrupted run)", file=warn)
                if repair:
                    with file.open("r+b") as f:
                        f.truncate(start)
                continue
            raise EvalError(
                f"{file}, line {number} is not a run record ({exc}); remove that line, or write the run to another --out"
            ) from None
        records.append((number, record))
        if last and repair:
            with file.open("ab") as f:
                f.write(b"\n")
    return records


def latest_records(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per id, the last one written (in order of first appearance).

    Example:
        >>> [r["n"] for r in latest_records([{"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "a", "n": 3}])]
        [3, 2]
    """
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        out[str(record["id"])] = dict(record)
    return list(out.values())


def _os_error(exc: OSError) -> str:
    """An OS error as a user reads it: ``Read-only file system (EROFS)``."""
    name = errno.errorcode.get(exc.errno or 0)
    return f"{exc.strerror or exc}" + (f" ({name})" if name else "")


class RunLock:
    """The lock of a run file: ``fcntl.flock`` on ``RUN.jsonl.lock`` beside it, held while the file is written.

    The lock file holds the process id of the holder (for the message of a
    second writer) and is removed on release. A lock file removed and made
    again between the open and the lock is detected (its inode) and locked afresh.

    Raises:
        EvalError: another process holds the lock, or the lock file cannot be made.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "run.jsonl"
        >>> with RunLock(path):
        ...     RunLock(path)
        Traceback (most recent call last):
        ...
        agent.errors.EvalError: the run file ... is in use by another process (pid ...): ...
    """

    def __init__(self, run_file: Path) -> None:
        self.path = run_file.with_name(run_file.name + ".lock")
        self.run_file = run_file
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise EvalError(f"cannot write the run file {run_file}: its lock file {self.path}: {_os_error(exc)}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise EvalError(
                    f"the run file {run_file} is in use by another process (pid {holder}): another pyql eval or ask "
                    f"writes it (it holds {self.path}); wait for it to end, or give another --out"
                ) from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed it as we opened it: lock the new one
        self._fd: int | None = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Remove the lock file and release the lock (once)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _make_directory(directory: Path) -> list[Path]:
    """Make a run file's directory (and its parents): those it made, outermost first; a file in the way is ``ENOTDIR``, not ``EEXIST``."""
    missing = [d for d in (directory, *directory.parents) if not d.exists()]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
    return missing[::-1]


def _remove_unwritten(path: Path, fd: int) -> None:
    """Remove the run file ``fd`` holds when nothing was written to it and ``path`` still names it."""
    with contextlib.suppress(OSError):
        held, named = os.fstat(fd), os.stat(path)
        if held.st_size == 0 and (held.st_ino, held.st_dev) == (named.st_ino, named.st_dev):
            os.unlink(path)


def capped_record(record: Mapping[str, Any], limit: int = RECORD_TEXT_LIMIT) -> dict[str, Any]:
    """A record as it is written: every string cut at ``limit`` characters with a note (:func:`cap_strings`), but its id.

    The agent's own strings are cut already (:meth:`AgentResult.to_dict`);
    the item's fields (question, gold answers, entity mentions, gold
    actions, kind, source) are cut here, and the same way, so scores
    recomputed from the file (:func:`agent.evaluation.metrics.record_scores`)
    agree with the record's. The id is kept whole: it is what ``--resume``
    matches.

    Example:
        >>> r = capped_record({"id": "q1", "gold": ["g" * 12], "answers": [{"value": "g" * 12}]}, 10)
        >>> r["gold"][0] == r["answers"][0]["value"] == "gggggggggg... [cut: 12 characters in all]"
        True
    """
    return {key: value if key == "id" else cap_strings(value, limit) for key, value in record.items()}


class RunWriter:
    """Appends records to a run file, one JSON line each, written and synced as soon as given.

    Every string of a record is capped (:func:`capped_record`): what the
    agent said and what the data set's item brought (question, gold
    answers, entity mentions, kind), each cut with a note saying its length.

    The file is opened (created) and locked (:class:`RunLock`, unless
    ``lock=False``) when the writer is made, so a file that cannot be written
    fails before any work. A missing directory is created. A write that
    fails (a full disk) takes the cut line back and raises. A file (and the
    directories) the writer made and never wrote to is removed when it is
    closed: a run that could not start leaves nothing behind, and a file the
    user had is never removed.

    Raises:
        EvalError: the file (or its directory, or its lock) cannot be made or
            written, another process writes it, or it is not a regular file
            (``regular_only``: a run that reads its file back).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "runs" / "run.jsonl"
        >>> with RunWriter(path) as w:
        ...     w.write({"id": "q1"})
        >>> path.read_text()
        '{"id": "q1"}\\n'
        >>> RunWriter(Path("/proc/version/run.jsonl"))
        Traceback (most recent call last):
        ...
        agent.errors.EvalError: cannot write the run file /proc/version/run.jsonl: Not a directory (ENOTDIR)
        >>> RunWriter(path.parent / "new" / "run.jsonl").close()
        >>> sorted(p.name for p in path.parent.iterdir())  # nothing written, nothing left
        ['run.jsonl']
    """

    def __init__(self, path: Path, *, lock: bool = True, regular_only: bool = False) -> None:
        self.path = path
        self._lock: RunLock | None = None
        self._fd: int | None = None
        self._made: list[Path] = []  # the directories this writer made, then the file if it made it
        try:
            if path.is_dir():
                raise EvalError(f"the run file {path} is a directory: give --out a file path, such as {path / 'run.jsonl'}")
            if regular_only and path.exists() and not stat.S_ISREG(path.stat().st_mode):
                raise EvalError(f"the run file {path} is not a regular file: give --out a file path (a run is read back to resume it)")
            self._made = _make_directory(path.parent)
            self._lock = RunLock(path) if lock else None
            try:
                self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
                self._made.append(path)
            except FileExistsError:
                self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            self.close()
            raise EvalError(f"cannot write the run file {path}: {_os_error(exc)}") from None
        except EvalError:
            self.close()
            raise

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record (written, then synced).

        Raises:
            EvalError: the write failed; the part written is cut off again.
        """
        assert self._fd is not None, "the run file is closed"
        data = (dumps_line(capped_record(record)) + "\n").encode("utf-8")
        fd = self._fd
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.ftruncate(fd, size)
            raise EvalError(f"cannot write the run file {self.path}: {_os_error(exc)} (question {record.get('id')} was not saved)") from None

    def close(self) -> None:
        """Close the file and release its lock; remove the file and directories it made if nothing was written."""
        if self._fd is not None:
            if self.path in self._made:
                _remove_unwritten(self.path, self._fd)
            os.close(self._fd)
            self._fd = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        for directory in reversed(self._made):
            with contextlib.suppress(OSError):
                if directory != self.path:
                    directory.rmdir()  # only when empty
        self._made = []

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Progress:
    """A progress bar on a stream: redrawn in place on a terminal, a line now and then otherwise.

    Example:
        >>> import io
        >>> s = io.StringIO()
        >>> p = Progress(2, s, every=1)
        >>> p.update({"id": "q1", "metrics": {"f1": 1.0}}); p.update({"id": "q2", "metrics": {"f1": 0.0}}); p.close()
        >>> s.getvalue().splitlines()[-1].startswith("[##############################] 2/2 F1 0.50")
        True
    """

    def __init__(self, total: int, stream: TextIO | None, *, done: int = 0, width: int = 30, every: int | None = None) -> None:
        self.total = total
        self.stream = stream
        self.start_done = done
        self.done = done
        self.width = width
        self.f1: list[float] = []
        self.started = time.perf_counter()
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.every = every if every is not None else max(1, (total - done) // 20)
        self._last = ""
        self.categories = CategoryProgress()

    def line(self, current: str = "") -> str:
        """The bar as text."""
        filled = int(self.width * self.done / self.total) if self.total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        ran = self.done - self.start_done
        elapsed = time.perf_counter() - self.started
        per = elapsed / ran if ran else 0.0
        eta = per * (self.total - self.done)
        f1 = f" F1 {sum(self.f1) / len(self.f1):.2f}" if self.f1 else ""
        text = f"[{bar}] {self.done}/{self.total}{f1} {per:.1f}s/q ETA {_duration(eta)}"
        by_kind = self.categories.text()
        return text + (f" [{by_kind}]" if by_kind else "") + (f" {current}" if current else "")

    def update(self, record: Mapping[str, Any]) -> None:
        """Count one finished question."""
        self.done += 1
        f1 = (record.get("metrics") or {}).get("f1")
        if f1 is not None:
            self.f1.append(float(f1))
        self.categories.update(record)
        if self.stream is None:
            return
        text = self.line(str(record.get("id", "")))
        if self.tty:
            pad = max(0, len(self._last) - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._last = text
        elif (self.done - self.start_done) % self.every == 0 or self.done == self.total:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.stream is not None and self.tty and self._last:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class _GuardedLLM:
    """The shared LLM of a run, refusing new calls and retries once the run is stopping.

    While it is entered (``with``), an LLM that waits between retries with
    its ``sleep`` attribute (:class:`agent.llm.client.OpenAILLM`) waits on
    the run's stop instead, and raises :class:`RunStopped` when the run
    stops: no retry reaches the server after Ctrl-C.
    """

    def __init__(self, llm: Any, stop: threading.Event) -> None:
        self._llm = llm
        self._stop = stop
        self._sleep: Any = None

    def complete(self, prompt: Any, **kwargs: Any) -> Any:
        if self._stop.is_set():
            raise RunStopped()
        return self._llm.complete(prompt, **kwargs)

    def _wait(self, seconds: float) -> None:
        if self._stop.wait(seconds):
            raise RunStopped()

    def __enter__(self) -> _GuardedLLM:
        sleep = getattr(self._llm, "sleep", None)
        if callable(sleep):
            with contextlib.suppress(AttributeError, TypeError):
                self._llm.sleep = self._wait
                self._sleep = sleep
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sleep is not None:
            self._llm.sleep = self._sleep
            self._sleep = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)


# ---------------------------------------------------------------------------
# A whole run


@dataclass
class EvalOutcome:
    """What :func:`run_eval` did.

    Attributes:
        path: the run file.
        records: every question in the run file (the last record of each id).
        new: questions run by this call (those that failed to run included).
        new_failed: questions of this call that failed to run.
        skipped: questions skipped because the run file had them (resume).
        interrupted: Ctrl-C stopped the run.
        aborted: why the run stopped by itself (too many questions in a row failed to run), or None.
        failed: the questions of the run file that failed to run (not scored; run again on resume).
        metrics: the metrics over :attr:`records`.
        summary: the summary written next to the run file.
    """

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    new: int = 0
    new_failed: int = 0
    skipped: int = 0
    interrupted: bool = False
    aborted: str | None = None
    failed: list[str] = field(default_factory=list)
    metrics: RunMetrics = field(default_factory=RunMetrics)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def summary_file(self) -> Path:
        return summary_path(self.path)


def summary_text(records: Sequence[Mapping[str, Any]], metrics: RunMetrics | None = None) -> str:
    """The markdown summary: the metrics table, then the ERASER triggers (Table 9 and Table 8 views)."""
    metrics = metrics if metrics is not None else aggregate(records)
    parts = [metrics.table()]
    stats = trigger_stats(records)
    if stats is not None and stats.total:
        parts.append("ERASER triggers by rule (Table 9 view):\n\n" + stats.table(view="rules"))
        parts.append("ERASER triggers by feedback type (Table 8 view):\n\n" + stats.table(view="environments"))
    return "\n\n".join(parts)


def run_eval(
    items: Iterable[Mapping[str, Any]],
    out: str | Path,
    llm: Any,
    settings: RunSettings,
    *,
    kb: Any = None,
    resume: bool = False,
    concurrency: int = 1,
    progress: TextIO | None = sys.stderr,
    max_infra_failures: int = 3,
    dataset: str | None = None,
    max_llm_failures: int | None = None,
    stamp: Mapping[str, Any] | None = None,
    provenance: Callable[[], Mapping[str, Any]] | None = None,
    writer: RunWriter | None = None,
    allow_mixed: bool = True,
) -> EvalOutcome:
    """Answer every item, one JSON line per finished question in ``out``; see the module docstring.

    Long because: its signature and docstring name and document fifteen arguments; the body is a few named steps.

    Args:
        items: data set items (:mod:`agent.evaluation.datasets`); ids must be unique. With ``settings.shard``
            (``K/N``) only the shard's are answered: every N-th from the K-th (:mod:`agent.evaluation.shards`).
        out: the run file (JSON Lines, appended to).
        llm: the LLM (shared by the workers).
        settings: how to answer (method, feedback, KB ...).
        kb: a KB object or spec to use instead of ``settings.kb``.
        resume: continue the run file: skip the ids it already has.
        concurrency: questions answered at a time (threads).
        progress: where the progress bar goes (None: nowhere).
        max_infra_failures: stop after this many questions in a row failed to
            run (:mod:`agent.faults`; 0: never stop).
        dataset: the data set's name, for the summary.
        max_llm_failures: the former name of ``max_infra_failures`` (it wins when given).
        stamp, provenance: fields added to every record, and a call whose fields go into the summary (``--record``).
        writer: the run file, already opened and locked (:class:`RunWriter`; the
            caller closes it); None: opened here.
        allow_mixed: resume even when the run file's records were answered
            with other settings (:func:`settings_differences`); False refuses
            it (``pyql eval`` without ``--allow-mixed``). Code that builds a
            run from parts on purpose keeps the default.

    Returns:
        An :class:`EvalOutcome`; the summary is also written to :func:`summary_path`.

    Raises:
        EvalError: the run file exists and ``resume`` is False, it is corrupt,
            cannot be written, is written by another process, was made with
            other settings (and not ``allow_mixed``), ``concurrency`` < 1, or
            KB questions without a KB.
    """
    path = Path(out)
    max_infra_failures = _checked_limits(concurrency, max_infra_failures, max_llm_failures)
    items = select(list(items), parse_shard(settings.shard) if settings.shard is not None else None)  # its shard's only
    solve = solver(settings.method, settings.options)
    settings.agent_config()  # bad settings fail before anything runs
    own_writer = writer is None
    writer = writer if writer is not None else RunWriter(path, regular_only=True)
    previous_handler = None
    try:
        pending, outcome = _resume_point(items, path, resume, progress, settings, llm, allow_mixed)
        one = _answerer(pending, kb, settings, solve)
        bar = Progress(len(items), progress, done=outcome.skipped)
        finish = _Finisher(writer, bar, outcome, max_infra_failures, stamp)
        try:
            previous_handler = _run_until_interrupted(pending, llm, one, finish, concurrency, outcome)
        finally:
            bar.close()
        _summarize(outcome, settings, llm, dataset, provenance() if provenance is not None else None)
    finally:
        if own_writer:
            writer.close()
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
    return outcome


def _resume_point(
    items: list[Mapping[str, Any]], path: Path, resume: bool, progress: TextIO | None, settings: RunSettings, llm: Any,
    allow_mixed: bool,
) -> tuple[list[Mapping[str, Any]], EvalOutcome]:
    """The items still to run, and the outcome counting those skipped, after reading the run file and checking its settings."""
    previous = _previous_records(path, resume, progress)
    _check_settings(previous, run_fingerprint(settings, llm), allow_mixed, path)
    pending = _pending(items, previous)
    return pending, EvalOutcome(path=path, skipped=len(items) - len(pending))


def _answerer(
    pending: Sequence[Mapping[str, Any]], kb: Any, settings: RunSettings, solve: Solver
) -> Callable[[Mapping[str, Any], Any], dict[str, Any]]:
    """The function that answers one question (its record): on the KB the pending questions use, relations ranked as set."""
    provider = _kb_provider(pending, kb, settings)
    ranker = relation_ranker(settings.ranker, settings.max_relations)
    return functools.partial(_answer, settings=settings, provider=provider, solve=solve, ranker=ranker)


def _run_until_interrupted(
    pending: list[Mapping[str, Any]],
    llm: Any,
    one: Callable[[Mapping[str, Any], Any], dict[str, Any]],
    finish: Callable[[dict[str, Any]], None],
    concurrency: int,
    outcome: EvalOutcome,
) -> Any:
    """The SIGINT handler to put back once a Ctrl-C stopped the workers (the run marked interrupted); None if none did."""
    try:
        _run_workers(pending, llm, one, finish, concurrency, outcome)
    except KeyboardInterrupt:
        outcome.interrupted = True
        return _exit_on_second_interrupt()
    return None


def _exit_on_second_interrupt() -> Any:
    """After a first Ctrl-C: a second one ends the process at once (exit status 130); the previous handler.

    Only the main thread can set a signal handler; elsewhere nothing changes (None).
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def now(signum: int, frame: Any) -> None:
        os.write(2, b"pyql: interrupted again; stopped at once\n")
        os._exit(130)

    return signal.signal(signal.SIGINT, now)


def _check_settings(previous: list[dict[str, Any]], current: dict[str, Any], allow_mixed: bool, path: Path) -> None:
    """Refuse to resume a run file with other settings than its records were answered with, unless ``allow_mixed``.

    Raises:
        EvalError: the settings differ; the message lists them.
    """
    answered = [r for r in previous if not failed_to_run(r)]  # those that failed to run are run again, not mixed in
    if allow_mixed or not answered:
        return
    differences = resume_conflicts(answered, current)
    if differences:
        raise EvalError(
            f"--resume with other settings than the run file {path} was made with: {'; '.join(differences)}; "
            "give the same settings to continue it, another --out for a new run, or --allow-mixed to mix them in one run"
        )


def _checked_limits(concurrency: int, max_infra_failures: int, max_llm_failures: int | None) -> int:
    """The failures in a row that stop the run (``max_llm_failures`` wins when given), after checking the limits.

    Raises:
        EvalError: ``concurrency`` < 1 or a negative failure limit.
    """
    if concurrency < 1:
        raise EvalError(f"--concurrency must be >= 1, got {concurrency}")
    if max_llm_failures is not None:
        max_infra_failures = max_llm_failures
    if max_infra_failures < 0:
        raise EvalError(f"max_infra_failures must be >= 0, got {max_infra_failures}")
    return max_infra_failures


def _previous_records(path: Path, resume: bool, warn: TextIO | None) -> list[dict[str, Any]]:
    """The records of an existing run file (the last of each id); none when it is new or empty.

    Raises:
        EvalError: the run file has records and ``resume`` is False.
    """
    if not (path.is_file() and path.stat().st_size > 0):  # a directory is refused as no run file (RunWriter)
        return []
    if not resume:
        raise EvalError(f"the run file {path} already exists: give --resume to continue it, or another --out")
    return latest_records(read_run(path, repair=True, warn=warn))


def _pending(items: list[Mapping[str, Any]], previous: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    """The items still to run: those the run file has not finished (a question that failed to run runs again)."""
    finished = {str(r["id"]) for r in previous if not failed_to_run(r)}
    return [item for item in items if str(item["id"]) not in finished]


def _answer(
    item: Mapping[str, Any], model: Any, *, settings: RunSettings, provider: KBProvider | None, solve: Solver, ranker: Any
) -> dict[str, Any]:
    """One question's record, on a KB of the provider (KB questions; opened where its errors end the question) or on its table."""
    the_kb = functools.partial(provider.get, item) if provider is not None and item.get("table") is None else None
    return run_question(item, model, settings, the_kb, solve=solve, ranker=ranker)


def _kb_provider(pending: Sequence[Mapping[str, Any]], kb: Any, settings: RunSettings) -> KBProvider | None:
    """The KB the pending KB questions use (None when all of them are table questions).

    Raises:
        EvalError: KB questions without a KB.
    """
    if all(item.get("table") is not None for item in pending):
        return None
    source = kb if kb is not None else settings.kb
    if source is None:
        raise EvalError(f"the data set has KB questions: give --kb ({KB_HINT})")
    return source if isinstance(source, KBProvider) else KBProvider(source, settings.profile, **kb_options(settings))


class _Finisher:
    """Writes each finished question's record, counts it, and aborts the run after too many failures in a row."""

    def __init__(self, writer: RunWriter, bar: Progress, outcome: EvalOutcome, max_infra_failures: int,
                 stamp: Mapping[str, Any] | None = None) -> None:
        self.stamp = dict(stamp or {})
        self.writer = writer
        self.bar = bar
        self.outcome = outcome
        self.max_infra_failures = max_infra_failures
        self.failures = 0

    def __call__(self, record: dict[str, Any]) -> None:
        outcome = self.outcome
        record.update(self.stamp)
        self.writer.write(record)
        outcome.new += 1
        self.bar.update(record)
        failed = failed_to_run(record)
        outcome.new_failed += failed
        self.failures = self.failures + 1 if failed else 0
        if self.max_infra_failures and self.failures >= self.max_infra_failures and outcome.aborted is None:
            outcome.aborted = (
                f"{self.failures} questions in a row failed to run (last: {record.get('id')}: {record.get('error')}); "
                f"{stop_advice(error_kind(record.get('error')))}"
            )


def _summarize(outcome: EvalOutcome, settings: RunSettings, llm: Any, dataset: str | None,
               provenance: Mapping[str, Any] | None = None) -> EvalOutcome:
    """Read the run file back into ``outcome`` (records, failures, metrics, summary), write the summaries, return it."""
    path = outcome.path
    outcome.records = latest_records(read_run(path)) if path.exists() else []
    outcome.failed = [str(r["id"]) for r in outcome.records if failed_to_run(r)]
    outcome.metrics = aggregate(outcome.records, settings.prices)
    counts = {"new": outcome.new, "skipped": outcome.skipped, "interrupted": outcome.interrupted, "aborted": outcome.aborted}
    outcome.summary = write_run_summary(
        path, outcome.records, settings=settings.describe(), model=model_name(llm), method=settings.method, dataset=dataset,
        prices=settings.prices, counts=counts, extra=provenance, metrics=outcome.metrics,
    )
    return outcome


def write_run_summary(
    path: Path,
    records: Sequence[Mapping[str, Any]],
    *,
    settings: Mapping[str, Any],
    model: str | None,
    method: str | None,
    dataset: str | None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    counts: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    metrics: RunMetrics | None = None,
) -> dict[str, Any]:
    """Write the summaries of the run file ``path`` (:func:`summary_path` and its ``summary.md``); returns the summary.

    The summary holds the counts of questions (and ``counts``: what this
    command did, e.g. new and skipped questions), the settings, the metrics
    (:func:`agent.evaluation.metrics.aggregate`), the ERASER triggers, the
    cost (``cost``: ``in_all``, every question's :mod:`agent.evaluation.cost`
    summed, those that failed to run included; ``per_question``, the means
    over the questions that ran), the printed table, and ``extra``'s fields.

    Raises:
        EvalError: a summary file cannot be written.
    """
    failed = [str(r["id"]) for r in records if failed_to_run(r)]
    metrics = metrics if metrics is not None else aggregate(records, prices)
    stats = trigger_stats(records)
    summary: dict[str, Any] = {
        "run": str(path),
        "dataset": dataset,
        "questions": len(records),
        "answered": len(records) - len(failed),
        "failed_to_run": len(failed),
        "failed_ids": failed,
        **(counts or {}),
        "settings": dict(settings),
        "model": model,
        "metrics": metrics.to_dict(),
        "cost": {"in_all": metrics.cost, "per_question": {k: round(v, 4) for k, v in
                                                          mean_cost([r for r in records if not failed_to_run(r)]).items()}},
        "triggers": stats.to_dict() if stats is not None else None,
        "table": summary_text(records, metrics),
    }
    summary.update(extra or {})
    try:
        text = redact_credentials(json.dumps(cap_strings(summary), ensure_ascii=False, indent=2))  # no URL's password, as in the records
        summary_path(path).write_text(text + "\n", encoding="utf-8")
        write_summary_markdown(summary_path(path), records, dataset=dataset, model=model, method=method, prices=prices)
    except OSError as exc:
        raise EvalError(f"cannot write the summary of the run {path} ({summary_path(path)}): {_os_error(exc)}") from None
    return summary


def _run_workers(
    pending: list[Mapping[str, Any]],
    llm: Any,
    one: Callable[[Mapping[str, Any], Any], dict[str, Any]],
    finish: Callable[[dict[str, Any]], None],
    concurrency: int,
    outcome: EvalOutcome,
) -> None:
    """Answer the pending questions in ``concurrency`` daemon threads; the caller's thread writes every record.

    The caller's thread hands out a question per record (none after an abort; what still finishes is kept) and
    otherwise waits (a short poll), so Ctrl-C reaches it at once: the workers' next LLM call or retry raises
    :class:`RunStopped`, nobody waits for them, their questions are dropped.
    """
    stop = threading.Event()
    todo: queue.SimpleQueue[Mapping[str, Any] | None] = queue.SimpleQueue()
    results: queue.SimpleQueue[tuple[dict[str, Any] | None, BaseException | None]] = queue.SimpleQueue()
    waiting = iter(pending)

    def hand_out() -> int:
        item = None if stop.is_set() else next(waiting, None)
        if item is not None:
            todo.put(item)
        return item is not None

    with _GuardedLLM(llm, stop) as guarded:
        workers = _start_workers(min(concurrency, len(pending)), todo, results, one, guarded)
        running = sum(hand_out() for _ in workers)
        try:
            _collect(running, results, hand_out, finish, outcome, stop)
        except BaseException:
            stop.set()
            raise
        finally:
            for _ in workers:
                todo.put(None)


def _start_workers(
    count: int,
    todo: queue.SimpleQueue[Mapping[str, Any] | None],
    results: queue.SimpleQueue[tuple[dict[str, Any] | None, BaseException | None]],
    one: Callable[[Mapping[str, Any], Any], dict[str, Any]],
    llm: Any,
) -> list[threading.Thread]:
    """The ``count`` worker threads (daemons), started: each answers the questions of ``todo`` (:func:`_work`)."""
    workers = [
        threading.Thread(target=_work, args=(todo, results, one, llm), name=f"pyql-eval-{i + 1}", daemon=True)
        for i in range(count)
    ]
    for worker in workers:
        worker.start()
    return workers


def _work(
    todo: queue.SimpleQueue[Mapping[str, Any] | None],
    results: queue.SimpleQueue[tuple[dict[str, Any] | None, BaseException | None]],
    one: Callable[[Mapping[str, Any], Any], dict[str, Any]],
    llm: Any,
) -> None:
    """A worker: answer the questions of ``todo`` until a None, each one's record (or what stopped it) put in ``results``."""
    while (item := todo.get()) is not None:
        try:
            results.put((one(item, llm), None))
        except RunStopped:
            results.put((None, None))  # cut short by the stop: dropped
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            results.put((None, exc))


def _collect(
    running: int,
    results: queue.SimpleQueue[tuple[dict[str, Any] | None, BaseException | None]],
    hand_out: Callable[[], int],
    finish: Callable[[dict[str, Any]], None],
    outcome: EvalOutcome,
    stop: threading.Event,
) -> None:
    """Write each record as it comes and hand out a question in its place, until none is running (a worker's error raised)."""
    while running:
        try:
            record, error = results.get(timeout=0.1)
        except queue.Empty:
            continue
        running -= 1
        if error is not None:
            raise error
        if record is not None:
            finish(record)
        if outcome.aborted:
            stop.set()
        running += hand_out()
