"""The CLI wiring on top of every package: the ``pyql`` subcommands that need them all.

:func:`add_commands` is the ``pyql.commands`` entry point of the agent
package (``pyproject.toml``); :func:`pyql.cli.build_parser` calls it. No
module imports this one. Environments are opened by
:func:`agent.evaluation.environments.open_environment`, the same for ``run``, ``ask``
and ``eval``.

* ``pyql run --kb KB --actions FILE`` (or ``--db/--table`` /
  ``--table-json`` for a table): run action lines in the step environment
  and print each step (``--json``: one JSON object per step, then the answers).
* ``pyql llm serve``: the local model on loopback (:mod:`agent.llm.local`).
* ``pyql ask "QUESTION" --kb KB --entities JSON`` (or ``--db/--table`` /
  ``--table-json`` for a table): answer one question with an agent, print
  the transcript and the answers; ``--json`` prints the steps as
  ``pyql run --json`` does, then one summary line.
* ``pyql eval DATA --kb KB --out RUN.jsonl [--resume [--allow-mixed]] [--concurrency N]``:
  answer a data set (:mod:`agent.evaluation.datasets`), one trace line per question
  (:mod:`agent.evaluation.runner`), then the summary table (:mod:`agent.evaluation.metrics`).
  The run file is opened and locked before any work; ``--resume`` with
  other settings than its records carry is refused unless ``--allow-mixed``.
* ``pyql trace RUN.jsonl --html OUT.html``: the run as a page
  (:mod:`agent.evaluation.trace_html`); without ``--html``, the summary table.

Exit statuses (:mod:`pyql.cli`): 0 done (an ``eval`` whose model answered
wrongly still exits 0: the failures are in the output); 4 a ``run`` whose
steps failed (its answers are those of the query without them; 0 with
``--keep-going``); 2 bad usage or an unreadable input, with a one-line message; 3 a
service failed (:mod:`agent.faults`): ``run`` stopped at a step whose KB
could not be reached, the ``ask`` question failed to run (the LLM after its
retries, the KB), ``eval`` stopped after ``--max-infra-failures`` questions
in a row failed to run or left some that did (give ``--resume``), always
with one line on stderr naming the service; 130 after Ctrl-C. With no LLM
configured, ``ask`` and ``eval`` use the local model when it is installed
(:func:`agent.llm.local.configured_llm`), else say how to configure one.

``--kb-timeout SECONDS`` and ``--default-graph IRI`` (``run``, ``ask``,
``eval``) go to a SPARQL endpoint, ``--count-cap N`` to any KB
(:func:`agent.evaluation.environments.kb_options`).

Example:
    >>> from pyql.cli import build_parser
    >>> build_parser().parse_args(["llm", "serve", "--port", "0"]).port
    0
    >>> a = build_parser().parse_args(["ask", "what category is tropical storm rachel?", "--kb", "demo"])
    >>> (a.method, a.feedback, a.max_steps, a.ranker, a.max_relations, a.trace_prompts)
    ('greedy', 'eraser', 12, 'bm25', 40, 'hash')
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from agent.evaluation.datasets import Dataset, load_dataset
from agent.evaluation.environments import KB_HINT, kb_options, open_environment, open_kb_for
from agent.evaluation.metrics import CATEGORY_KEYS, COMPARED_METRICS, category_help, load_prices
from agent.evaluation.runner import (
    EvalOutcome,
    KBProvider,
    RunSettings,
    RunWriter,
    answer_item,
    latest_records,
    make_record,
    opens_per_question,
    read_run,
    relation_ranker,
    reply_thought,
    resume_conflicts,
    run_eval,
    run_fingerprint,
    solver,
    summary_path,
    summary_text,
)
from agent.evaluation.compare import compare_runs, comparison_text
from agent.evaluation.compare_html import write_comparison
from agent.evaluation.merging import merge_runs, write_merged
from agent.evaluation.shards import SHARD_FORM, parse_shard, select
from agent.evaluation.trace_html import write_html
from agent.evaluation.trace_text import find_question, question_text
from agent.faults import InfraFailure, failed_to_run, infra_failure
from agent.jsonlines import dumps_line
from agent.llm.config import add_llm_arguments, config_from_args
from agent.llm.recording import RecordedLLM
from agent.methods.policies.registry import help_text as policy_help
from agent.methods.policies.registry import modes_for, or_list
from agent.methods.policies.registry import names as policy_names
from agent.methods.sides import infra_kb, side_for
from agent.methods.strategies import registry as strategies
from agent.llm.local import (
    INSTALL_HINT,
    LOCAL_MODEL_NAME,
    configured_llm,
    is_bundled_model,
    local_config,
    missing_local_packages,
    register_cli,
)
from grammars.vocabulary import FEEDBACK_MODES
from pyql.environment.agentbench import NOT_ACTIONS
from pyql.cli import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SERVICE,
    EXIT_STEPS_FAILED,
    UsageError,
    read_entities,
    read_text,
    seconds,
    whole,
)
from pyql.echo import inline, plural, redact_credentials, visible
from pyql.environment import Environment
from pyql.errors import PyQLError
from pyql.kb import kb_backends
from pyql.kb.recording import recorded_kbs
from pyql.lines import split_lines
from pyql.builder.profiles import PROFILES
from pyql.recording_store import RecordingStore
from pyql.environment.sparql import SparqlEnvironment

__all__ = ["add_commands", "ask_command", "compare_command", "eval_command", "run_command", "run_episode", "trace_command"]

_RANKERS = ("bm25", "embedding", "hybrid", "none")
#: ``--method``'s default: the greedy strategy (QueryAgent's loop).
_DEFAULT_METHOD = "greedy"
#: The action sets a KB can be driven with (``--action-set``).
_KB_ACTION_SETS = ("sparql", "sparql-all", "agentbench")

#: The help of ``--kb``: every spec :meth:`pyql.kb.KB.open` takes (from the registry of KB backends).
_KB_HELP = f"the knowledge base: {kb_backends.help()}"


# ---------------------------------------------------------------------------
# Shared flags


#: The types of the numeric flags (pyql.cli): finite and in range, else a usage error (exit status 2).
_positive = whole(1)
_non_negative = whole(0)
_seconds = seconds()
#: The most questions ``pyql eval --concurrency`` answers at a time (one thread each).
MAX_CONCURRENCY = 256


def _kb_arguments(group: Any) -> None:
    """``--kb``, ``--profile``, ``--kb-timeout`` and ``--default-graph``."""
    group.add_argument("--kb", help=_KB_HELP)
    group.add_argument("--profile", default=None, choices=list(PROFILES),
                       help="how the KB names things (default: read from the KB's namespaces and the linked "
                            "entities' ids: Q… Wikidata, m.… Freebase)")
    group.add_argument("--kb-timeout", type=_seconds, metavar="SECONDS",
                       help="a SPARQL endpoint: seconds one query may take in all (default 60; fractions kept, e.g. 0.5)")
    group.add_argument("--default-graph", metavar="IRI",
                       help="a SPARQL endpoint: the graph to query (default-graph-uri), e.g. http://freebase.com")
    group.add_argument("--count-cap", type=_positive, metavar="N",
                       help="distinct values an observation counts exactly per variable; beyond it the count says "
                            "'more than N' and the step does not read the whole join (default 1000)")
    group.add_argument("--action-set", default="sparql", choices=list(_KB_ACTION_SETS),
                       help="the actions on the KB: sparql (pyql's add_fact, ..., execute(); the default), sparql-all "
                            "(every SPARQL action with MarkQA's arguments, e.g. add_max(?v, *, 0, 1, true) keeping ties, "
                            "and add_union: what pyql convert --to actions writes) or "
                            "agentbench (AgentBench's get_relations, get_neighbors, intersection, ... with #k "
                            "variables, answered by 'Final Answer: #k')")
    group.add_argument("--observe", choices=["rows", "type"], default=None,
                       help="--action-set agentbench: what a new variable shows: its values (rows, the default) or "
                            "its type only, as AgentBench shows it (type)")


def _agent_arguments(parser: argparse.ArgumentParser) -> None:
    add_llm_arguments(parser)
    _registered_action_modes(parser)
    g = parser.add_argument_group("agent")
    g.add_argument("--method", default=_DEFAULT_METHOD, choices=strategies.method_choices(), help=strategies.method_help(_DEFAULT_METHOD))
    g.add_argument("--feedback", default="eraser", choices=list(FEEDBACK_MODES),
                   help="eraser: targeted guidelines (default); raw: the raw error; none: only that the step failed")
    g.add_argument("--max-steps", type=_positive, default=12, help="actions before the agent must answer (default 12)")
    g.add_argument("--max-repeats", type=_positive, default=3,
                   help="repeats of the same failed action before the agent stops that line and answers (default 3)")
    g.add_argument("--advice", default="run", choices=["run", "block"],
                   help="ERASER's process advice (a skipped look): run the step and add a note (default), or block it "
                        "as an error (the behaviour before advice and errors were told apart; for ablations)")
    g.add_argument("--no-escalation", dest="escalate", action="store_false",
                   help="a repeated failed action gets the same guideline again instead of an escalating "
                        "response (for ablations; --max-repeats still ends the loop)")
    g.add_argument("--first-relation", choices=["ranked", "model"], default=None,
                   help="choose mode: order the relations of the first fact by the word-overlap ranking, or by the "
                        "bundled model's PMI with the question (in process, llama-cpp-python) (default: model with the "
                        "bundled local model, ranked otherwise)")
    g.add_argument("--choice-preview", choices=["yes", "no"], default=None,
                   help="choose mode: show each listed step's result preview (default: no with the bundled local "
                        "model, which does not use them and pays for their tokens; yes otherwise)")
    g.add_argument("--example", help="one-shot example: a bundled name (freebase, table) or a text file")
    g.add_argument("--context-tokens", type=_positive, metavar="N",
                   help="the model's context in tokens: no prompt is longer (with --max-tokens kept for the reply); "
                        "older observations are shortened, then older steps summarised, and a question whose prompt "
                        "still does not fit ends with context_overflow, scored as failed (default: the local model's "
                        "n_ctx, else learned from the server's first context-length error)")
    g.add_argument("--ranker", default="bm25", choices=list(_RANKERS),
                   help="relation ranking when an entity has more than --max-relations relations (default bm25)")
    g.add_argument("--max-relations", type=_positive, default=40, help="relations shown per direction (default 40)")
    g.add_argument("--trace-prompts", default="hash", choices=["hash", "full"],
                   help="trace each prompt's sha256 (default) or the full text")
    g.add_argument("--prices", help='price table JSON {"model": [USD per 1M input tokens, per 1M output]} for the cost')
    _strategy_arguments(parser.add_argument_group("strategy options (each for its --method)"))
    _kb_arguments(parser.add_argument_group("knowledge base"))
    _recording_arguments(parser)


def _strategy_arguments(group: Any) -> None:
    """One flag per option of every registered strategy (:class:`agent.methods.strategies.registry.Option`), as the
    registry is when the parser is built; a value not allowed is a usage error naming what is. A flag several
    strategies share parses its type here; the chosen strategy checks its own range (:func:`_strategy_options`)."""
    for name, owned in strategies.flags().items():
        option = owned[0][1]
        loose = option if len(owned) == 1 else _loosest(name, [o for _, o in owned])
        said = "; ".join(f"--method {owner.name}: {o.help} (default {o.default}; {o.allowed()})" for owner, o in owned)
        group.add_argument(
            option.flag, dest=f"strategy_{option.name}", type=_option_value(loose), default=None, metavar=option.type.__name__.upper(),
            help=said,
        )


def _loosest(name: str, options: list[Any]) -> Any:
    """The option a flag several strategies share parses with: their type, and the widest range they allow together
    (a value none of them takes is refused when it is parsed; the chosen strategy checks its own range after)."""
    first = options[0]
    lows = [o.minimum for o in options]
    highs = [o.maximum for o in options]
    choices = None if any(o.choices is None for o in options) else tuple(dict.fromkeys(c for o in options for c in o.choices))
    return strategies.Option(
        name, first.type, None, first.help, minimum=None if None in lows else min(lows),
        maximum=None if None in highs else max(highs), choices=choices,
    )


def _option_value(option: Any) -> Any:
    """The ``type=`` of an option's flag: its value, or argparse's error saying what is allowed."""

    def parse(text: str) -> Any:
        try:
            return option.parse(text)
        except PyQLError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = option.type.__name__
    return parse


def _strategy_options(args: argparse.Namespace, method: str) -> dict[str, Any]:
    """The options given for the chosen strategy (the others take their defaults).

    Raises:
        UsageError: an option of another strategy was given.
    """
    given = {name: getattr(args, f"strategy_{name}", None) for name in strategies.flags()}
    chosen = strategies.entry(method)
    mine = {o.name: o for o in chosen.options}
    stray = [name for name, value in given.items() if value is not None and name not in mine]
    if stray:
        owners = {name: ", ".join(e.name for e, _ in owned) for name, owned in strategies.flags().items()}
        said = ", ".join(f"--{n.replace('_', '-')} (--method {owners[n]})" for n in stray)
        raise UsageError(f"{said}: not an option of --method {chosen.name}")
    return {name: option.check(given[name]) for name, option in mine.items() if given[name] is not None}


def _registered_action_modes(parser: argparse.ArgumentParser) -> None:
    """``--action-mode`` (added with the LLM flags) takes the registered policies, as the registry is when the parser is built.

    Example:
        >>> p = argparse.ArgumentParser(); add_llm_arguments(p); _registered_action_modes(p)
        >>> p._option_string_actions["--action-mode"].choices
        ['text', 'tools', 'grammar', 'choose']
    """
    found = parser._option_string_actions["--action-mode"]
    found.choices = list(policy_names())
    found.help = f"{policy_help()} (default: choose with the bundled local model on a KB, text otherwise)"


def _first_relation(args: argparse.Namespace, local_choose: bool) -> str:
    """``--first-relation``, else the default: ``model`` for the bundled local model in choose mode
    (``local_choose``), ``ranked`` otherwise.

    The local model's PMI orders the first relation better than the
    word-overlap ranking on held-out WebQSP questions (``docs/benchmarks.md``);
    another model is left to the ranking and its own choice. ``model`` needs
    the local extra (the model scores in process): asked for explicitly
    without it is a usage error, as a default it falls back to ``ranked``.
    """
    asked = getattr(args, "first_relation", None)
    replay = bool(getattr(args, "replay", None))  # the scores come from the recording: no model in process
    if asked is None:
        return "model" if local_choose and (replay or not missing_local_packages()) else "ranked"
    if asked == "model" and not replay:
        missing = missing_local_packages()
        if missing:
            raise UsageError(f"--first-relation model scores relations with the bundled model in process: {INSTALL_HINT} "
                             f"(missing: {', '.join(missing)})")
    return str(asked)


def _choice_preview(args: argparse.Namespace, local: bool) -> bool:
    """``--choice-preview``, else the default: off for the bundled local model (``local``), on otherwise.

    The local model answers ``1`` whatever the previews say, and without them
    a choose call evaluates fewer tokens: the same 29 demo answers in 7.9 s of
    model time per question instead of 9.2 s (``docs/benchmarks.md``).
    """
    asked = getattr(args, "choice_preview", None)
    if asked is not None:
        return asked == "yes"
    return not local


def _settings(args: argparse.Namespace, llm: Any = None) -> RunSettings:
    local, mode = _uses_local_model(args, llm), _action_mode(args, llm)
    return RunSettings(
        kb=args.kb,
        profile=args.profile or "freebase",  # eval resolves a missing --profile from the KB (_eval_provider)
        method=strategies.canonical(args.method) or args.method,
        options=_strategy_options(args, args.method),
        feedback=args.feedback,
        max_steps=args.max_steps,
        max_repeats=getattr(args, "max_repeats", 3),
        run_advice=getattr(args, "advice", "run") == "run",
        escalate=getattr(args, "escalate", True),
        example=args.example,
        ranker=args.ranker,
        max_relations=args.max_relations,
        trace_prompts=args.trace_prompts,
        action_mode=mode,
        first_relation=_first_relation(args, local and mode == "choose"),
        choice_preview=_choice_preview(args, local),
        prices=load_prices(args.prices) if args.prices else None,
        kb_timeout=getattr(args, "kb_timeout", None),
        default_graph=getattr(args, "default_graph", None),
        count_cap=getattr(args, "count_cap", None),
        action_set=_action_set(args),
        observe=getattr(args, "observe", None) or "rows",
        shard=str(args.shard) if getattr(args, "shard", None) is not None else None,
    )


def _action_set(args: argparse.Namespace) -> str:
    """``--action-set``, checked against the other flags (``--observe`` needs agentbench; no table with it).

    Raises:
        UsageError: ``--observe`` without ``--action-set agentbench``, or agentbench with a table.
    """
    name = str(getattr(args, "action_set", None) or "sparql")
    if getattr(args, "observe", None) and name != "agentbench":
        raise UsageError("--observe applies to --action-set agentbench (AgentBench's #k variables)")
    if name == "agentbench" and (getattr(args, "db", None) or getattr(args, "table_json", None)):
        raise UsageError("--action-set agentbench drives a KB (--kb), not a table")
    mode = getattr(args, "action_mode", None)
    if name == "agentbench" and mode and mode not in modes_for("agentbench"):
        raise UsageError(f"--action-set agentbench runs in the {or_list(modes_for('agentbench'))} action mode, not {mode}")
    return name


def _kb_side(settings: RunSettings) -> str:
    """The side a KB question runs on: ``agentbench`` with its action set, else ``sparql`` (a strategy's ``sides``)."""
    return "agentbench" if settings.action_set == "agentbench" else "sparql"


def _action_mode(args: argparse.Namespace, llm: Any = None) -> str:
    """``--action-mode``, else the default: ``choose`` for the bundled local model (KB or table), ``text`` otherwise.

    The local model is used when no LLM is configured (started, or a running
    ``pyql llm serve``) or when the configured model is its name; on the demo
    questions it answers far more by choosing than by writing actions
    (``docs/benchmarks.md``), on tables too (:mod:`pyql_sql.next_steps`).
    An LLM given in code (tests) counts as local when its model has that name.
    """
    if getattr(args, "action_mode", None):
        return str(args.action_mode)
    if getattr(args, "action_set", None) == "agentbench":
        return "text"
    return "choose" if _uses_local_model(args, llm) else "text"


def _uses_local_model(args: argparse.Namespace, llm: Any = None) -> bool:
    """Whether the run's LLM is the bundled local model (see :func:`_action_mode`)."""
    if llm is not None:
        return is_bundled_model(llm)
    try:
        config = config_from_args(args)
    except PyQLError:
        return False
    return not config.configured or config.model == LOCAL_MODEL_NAME


@contextlib.contextmanager
def _llm_for(args: argparse.Namespace, llm: Any = None, stores: _Stores | None = None) -> Iterator[Any]:
    """The given LLM (tests), else the configured one, else the local model; recorded or replayed with ``stores``.

    A replay starts nothing and contacts no server: the LLM is the recording.
    """
    recording = stores.recording if stores is not None else None
    if recording is not None and recording.mode == "replay":
        yield RecordedLLM(recording, llm if llm is not None else _replayed_config(args))
        return
    if llm is not None:
        yield RecordedLLM(recording, llm, inner=llm) if recording is not None else llm
        return
    config = config_from_args(args)
    with configured_llm(config) as real:
        # the LLM that answers is described by its own configuration (the bundled model's, when it was started):
        # a recorded run must ask, build its prompts and choose its scoring exactly as the same run unrecorded
        yield RecordedLLM(recording, real, inner=real) if recording is not None else real


def _replayed_config(args: argparse.Namespace) -> Any:
    """The configuration a replay runs with: the flags', or, when no LLM is configured, the bundled model's (as the
    recorded run started it), so that the replay's prompts and keys are the recorded run's."""
    config = config_from_args(args)
    return config if config.configured else local_config(config)


# ---------------------------------------------------------------------------
# --record, --replay, --kb-cache


def _recording_arguments(parser: argparse.ArgumentParser) -> None:
    """``--record DIR``, ``--replay DIR`` and ``--kb-cache DIR`` (``docs/reproduce.md``)."""
    g = parser.add_argument_group("recording (docs/reproduce.md)")
    g.add_argument("--record", metavar="DIR",
                   help="keep every KB query and LLM call with its answer in DIR/recording.sqlite (one file to publish)")
    g.add_argument("--replay", metavar="DIR",
                   help="answer every KB query and LLM call from the recording DIR (or the .sqlite file): no KB is "
                        "opened, no LLM contacted or started; a call it does not hold fails the question (replay_miss)")
    g.add_argument("--kb-cache", metavar="DIR",
                   help="keep KB answers in DIR/kb-cache.sqlite and reuse them in later runs (keyed by the query and "
                        "the KB's identity: endpoint URL and graph, or the file's content)")


@dataclasses.dataclass
class _Stores:
    """The recording (``--record``/``--replay``) and the KB cache of a command, either may be None."""

    recording: RecordingStore | None = None
    cache: RecordingStore | None = None

    def stamp(self) -> dict[str, Any]:
        """The fields every run record carries: which store answered (its file, id and mode)."""
        out: dict[str, Any] = {}
        for field_name, store in (("recording", self.recording), ("kb_cache", self.cache)):
            if store is not None:
                out[field_name] = {"mode": store.mode, "file": str(store.path), "id": store.meta().get("id")}
        return out

    def provenance(self) -> dict[str, Any]:
        """The fields of a run summary: each store's fingerprint, entries and this run's hits, misses and writes."""
        out: dict[str, Any] = {}
        for field_name, store in (("recording", self.recording), ("kb_cache", self.cache)):
            if store is not None:
                out[field_name] = store.provenance()
        return out

    def report(self) -> str | None:
        """One line on what the stores did in this run (None without a store)."""
        parts = []
        for store in (self.recording, self.cache):
            if store is not None:
                counts = ", ".join(f"{kind}: " + " ".join(f"{n} {what}" for what, n in sorted(c.items()))
                                   for kind, c in sorted(store.stats.items())) or "no call"
                parts.append(f"{store.mode} {store.path} ({counts})")
        return "; ".join(parts) or None


@contextlib.contextmanager
def _stores(args: argparse.Namespace) -> Iterator[_Stores]:
    """Open ``--record``/``--replay`` and ``--kb-cache`` and send every KB the command opens through them.

    Raises:
        UsageError: ``--record`` with ``--replay``, or ``--kb-cache`` with ``--replay``.
        pyql.errors.RecordingError: a file that is not a usable recording or cache (exit 2).
    """
    record, replay, cache = (getattr(args, name, None) for name in ("record", "replay", "kb_cache"))
    if record and replay:
        raise UsageError("give --record DIR or --replay DIR, not both (a replay writes nothing)")
    if replay and cache:
        raise UsageError("--kb-cache is for live runs; a --replay answers every KB query from the recording")
    stores = _Stores()
    with contextlib.ExitStack() as stack:
        if cache:
            stores.cache = stack.enter_context(RecordingStore.open(cache, "cache"))
            stack.enter_context(recorded_kbs(stores.cache))
        if record or replay:
            stores.recording = stack.enter_context(RecordingStore.open(record or replay, "record" if record else "replay"))
            stack.enter_context(recorded_kbs(stores.recording))
        yield stores


@contextlib.contextmanager
def _run_files(args: argparse.Namespace, out: str | None, *, regular_only: bool = False) -> Iterator[tuple[_Stores, RunWriter | None]]:
    """What a command that answers questions writes to, opened and locked before any work: its stores
    (:func:`_stores`), then its run file ``out`` (None: no run file), closed in the reverse order.

    Raises:
        UsageError: the stores' flags conflict (see :func:`_stores`).
        pyql.errors.RecordingError: a store that is not usable.
        OSError: a run file that cannot be written or is locked by another run (``RunWriter``).
    """
    with _stores(args) as stores, (RunWriter(Path(out), regular_only=regular_only) if out else contextlib.nullcontext()) as writer:
        yield stores, writer


def _report_stores(stores: _Stores, stream: TextIO | None = None) -> None:
    """Say on stderr (or ``stream``) what the recording and the KB cache did in this command."""
    line = stores.report()
    if line:
        print(f"pyql: {line}", file=stream if stream is not None else sys.stderr)


# ---------------------------------------------------------------------------
# pyql ask


def _answer_text(answer: dict[str, Any]) -> str:
    """An answer on the ``Answers:`` line: its value and label through :func:`pyql.echo.inline` (one line, no
    control or bidi character, capped), as observations show them.

    Example:
        >>> _answer_text({"value": "m.0c", "label": "Rachel\\u202e"}), _answer_text({"value": 3, "label": None})
        ('m.0c (Rachel\\\\u202e)', '3')
    """
    label = answer.get("label")
    return inline(answer.get("value")) + (f" ({inline(label)})" if label else "")


def _print_transcript(result: Any, out: TextIO, final_key: str) -> None:
    for s in result.steps:
        if s.reply.strip().isdigit():  # the choose mode: the LLM picked a listed step by number
            print(f"Choice {s.step}: {s.reply.strip()}", file=out)
            thought = ""
        else:
            thought = reply_thought(s.reply) if s.reply else ""
        if thought:
            print(f"Thought {s.step}: {thought}", file=out)
        action = s.action if s.action else (s.reply.strip() or "(nothing)")
        forced = " (forced: step limit)" if s.forced else ""
        print(f"Action {s.step}: {action}{forced}", file=out)
        mark = "ok" if s.ok else f"error: {s.error}"
        print(f"Observation {s.step} ({mark}): {s.observation}", file=out)
    if result.error:
        print(f"\nError: {result.error}", file=out)
    answers = ", ".join(_answer_text(a) for a in result.answers)
    print(f"\nAnswers: {answers or '(none)'}" + ("" if result.done else " (no query was executed)"), file=out)
    if result.query:
        print(f"{final_key.upper()}:\n{visible(result.query.rstrip())}", file=out)
    print(
        f"[{plural(len(result.steps), 'step')}, {plural(result.llm_calls, 'LLM call')}, {plural(result.tokens_in, 'token')} in, "
        f"{result.tokens_out} out, {plural(result.kb_queries, 'query', 'queries')}, {result.seconds:.2f} s]",
        file=out,
    )


def ask_command(args: argparse.Namespace, out: TextIO, llm: Any = None) -> int:
    """``pyql ask``: answer one question; ``llm`` replaces the configured LLM (tests).

    ``--out`` is opened and locked before any work (a file that cannot be
    written: one line, exit 2); the answers are printed before the record is
    written, so a write that fails (a full disk) loses nothing on screen.
    With ``--record``/``--replay``/``--kb-cache`` every KB and LLM call goes through the store.
    Bad usage is refused before any store or run file is opened.
    """
    item, settings, solve, config = _ask_request(args, llm)
    with _run_files(args, args.out) as (stores, writer):
        try:
            result, record, llm_url, language = _ask(args, item, settings, config, solve, llm, stores)
        except KeyboardInterrupt:
            print("pyql ask: interrupted", file=sys.stderr)
            code = EXIT_INTERRUPTED
        else:
            _print_ask(args, result, language, out)
            if writer is not None:
                writer.write(record)
            code = EXIT_OK
            if result.failed_to_run:
                print(f"pyql ask: {_failure_line(result.error_json() or {}, llm_url)}", file=sys.stderr)
                code = EXIT_SERVICE
        _report_stores(stores)
        return code


def _ask_request(args: argparse.Namespace, llm: Any) -> tuple[dict[str, Any], RunSettings, Any, Any]:
    """The question of ``pyql ask`` as an item, its settings, solver and agent config, checked before any work.

    Raises:
        UsageError: an empty question, or neither a KB nor a table.
    """
    question = (args.question or "").strip()
    if not question:
        raise UsageError("pyql ask: the question is empty")
    settings = _settings(args, llm)
    solve = solver(settings.method, settings.options)
    config = settings.agent_config()  # bad settings fail before the LLM starts
    item: dict[str, Any] = {"id": "ask", "question": question, "entities": read_entities(args.entities), "answers": None, "source": "ask"}
    if not (args.db or args.table_json or args.kb):
        raise UsageError(f"pyql ask: give --kb KB ({KB_HINT}), or --db/--table-json for a table")
    strategies.entry(settings.method).check_side("sql" if args.db or args.table_json else _kb_side(settings))
    return item, settings, solve, config


def _ask(
    args: argparse.Namespace, item: dict[str, Any], settings: RunSettings, config: Any, solve: Any, llm: Any, stores: _Stores
) -> tuple[Any, dict[str, Any], str | None, str]:
    """Open the environment and the LLM and answer the question: the result, its record, the LLM's URL and the query language."""
    ranker = None if args.db or args.table_json else relation_ranker(settings.ranker, settings.max_relations)
    env = open_environment(args, item, ranker=ranker, agent=True)
    if side_for(env).data == "table":
        item["table"] = {"name": env.table.name}
    with _llm_for(args, llm, stores) as the_llm:
        result = answer_item(item, the_llm, settings, env=env, solve=solve)
        record = {**make_record(item, result, the_llm, settings), **stores.stamp()}
        return result, record, _llm_url(the_llm), env.language


def _print_ask(args: argparse.Namespace, result: Any, language: str, out: TextIO) -> None:
    """The answer of ``pyql ask``: the steps as JSON lines then the summary (``--json``), or the transcript."""
    if args.json:
        for s in result.steps:
            step = {"step": s.step, "action": s.action if s.action else s.reply, "ok": s.ok, "error": s.error, "observation": s.observation}
            print(dumps_line(step), file=out)
        print(dumps_line(result.summary()), file=out)
    else:
        _print_transcript(result, out, language)
    out.flush()


def _llm_url(llm: Any) -> str | None:
    """The base URL of an LLM object (None: OpenAI's API, or not an HTTP client)."""
    inner = getattr(llm, "_llm", None)
    if inner is not None:
        return _llm_url(inner)
    url = getattr(getattr(llm, "config", None), "base_url", None)
    return redact_credentials(str(url)) if url else None


def _failure_line(error: dict[str, str], llm_url: str | None) -> str:
    """One line saying which service failed and what to do (for stderr).

    The hint to start the local model comes with the message, from the
    client, only when a server on loopback did not answer (:class:`agent.llm.client.OpenAILLM`).

    Example:
        >>> _failure_line({"kind": "llm_error", "message": "LLM request failed after 1 attempts: HTTP 429"}, "http://127.0.0.1:8080/v1")
        'the question failed to run: the LLM at http://127.0.0.1:8080/v1 failed: LLM request failed after 1 attempts: HTTP 429'
    """
    kind, message = error.get("kind", "error"), " ".join(str(error.get("message", "")).split())
    if kind == "replay_miss":
        return f"the question failed to run: replay_miss: {message} (record it again with --record, without --replay)"
    if kind == "recording_unavailable":
        return f"the question failed to run: the recording or KB cache could not be used: {message}"
    if kind == "llm_error":
        where = llm_url or "OpenAI's API (https://api.openai.com/v1)"
        return f"the question failed to run: the LLM at {where} failed: {message}"
    return f"the question failed to run: the KB failed ({kind}): {message}"


def _add_ask(subparsers: Any) -> None:
    p = subparsers.add_parser("ask", help="answer one question with an LLM agent and print the transcript")
    p.add_argument("question", help="the natural-language question")
    p.add_argument("--entities", help="linked entities: a JSON object name → id, or a file holding one")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per step (as pyql run --json), then the answers and counters")
    p.add_argument("--out", help="also append the question's trace record to this JSONL run file")
    t = p.add_argument_group("table (SQL side)")
    t.add_argument("--db", help="a SQLite database file")
    t.add_argument("--table", help="the table name in --db (or which object of a --table-json JSONL file)")
    t.add_argument("--table-json", help="a JSON file with a table (header and rows) or a dbbench item")
    _agent_arguments(p)
    p.set_defaults(func=ask_command)


# ---------------------------------------------------------------------------
# pyql eval


def eval_command(args: argparse.Namespace, out: TextIO, llm: Any = None, progress: TextIO | None = None) -> int:
    """``pyql eval``: answer a data set; ``llm`` replaces the configured LLM (tests).

    The run file is opened and locked before any work (loading the KB,
    starting the LLM): a file that cannot be written, or that another run
    writes, or (``--resume``) was made with other settings, stops it here
    with one line (exit status 2). Ctrl-C at any point exits 130. With
    ``--record``/``--replay``/``--kb-cache`` every KB and LLM call goes
    through the store; each record and the summary say which (its
    fingerprint, hits and misses). Bad usage is refused before any store
    or run file is opened.
    """
    if args.merge:
        return _merge_command(args, out)
    if args.data is None:
        raise UsageError("pyql eval: give the data set to answer (DATA), or --merge RUN ... to merge the run files of a run's shards")
    settings = _settings(args, llm)
    solver(settings.method, settings.options)
    settings.agent_config()
    dataset = load_dataset(args.data, limit=args.limit, linking=args.linking)
    settings = _checked_eval(args, settings, dataset)
    stream = progress if progress is not None else sys.stderr
    with _run_files(args, args.out, regular_only=True) as (stores, writer):
        assert writer is not None  # --out is required
        _check_resumed_settings(args, settings)
        try:
            outcome = _run_eval_command(args, settings, dataset, writer, llm, stream, stores)
        except KeyboardInterrupt:
            print(f"pyql eval: interrupted; what was answered is in {args.out}: run the same command with --resume to continue",
                  file=sys.stderr)
            return EXIT_INTERRUPTED
        print(summary_text(outcome.records, outcome.metrics), file=out)
        _report_stores(stores, stream)
    if args.by:
        from agent.evaluation.metrics import category_table

        print("\n" + category_table(outcome.records, args.by, settings.prices), file=out)
    return _eval_exit(args, outcome, stream)


def _merge_command(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql eval --merge RUN ... --out MERGED``: the run files of a run's shards as one run file, with its summary.

    Raises:
        UsageError: a data set, ``--shard`` or ``--resume`` given with it.
        EvalError: the files are not the shards of one run (:mod:`agent.evaluation.merging`), or ``--out`` exists.
    """
    given = [flag for flag, value in (("DATA", args.data), ("--shard", args.shard), ("--resume", args.resume)) if value]
    if given:
        raise UsageError(f"pyql eval --merge writes a new run file from run files: give no {', '.join(given)} with it")
    merged = merge_runs(args.merge, warn=sys.stderr, allow_mixed=args.allow_mixed)
    for warning in merged.warnings:
        print(f"pyql eval: {warning}", file=sys.stderr)
    summary = write_merged(merged, args.out)
    print(summary["table"], file=out)
    shards = f" (shards {', '.join(merged.shards)})" if merged.shards else ""
    print(f"pyql eval: merged {plural(len(merged.parts), 'run file')}{shards} into {args.out}: "
          f"{plural(len(merged.records), 'question')}; summary in {summary_path(args.out)}", file=sys.stderr)
    return EXIT_OK


def _run_eval_command(
    args: argparse.Namespace, settings: RunSettings, dataset: Dataset, writer: RunWriter, llm: Any, stream: TextIO, stores: _Stores
) -> EvalOutcome:
    """Open the KB and the LLM, then answer the data set into ``writer``'s run file."""
    provider = None
    if any(item.get("table") is None for item in dataset):
        provider = _eval_provider(args, dataset)  # a bad --kb fails before the LLM starts
        settings = dataclasses.replace(settings, profile=provider.profile)
    _print_dataset_notes(args, dataset, stream)
    with _llm_for(args, llm, stores) as the_llm:
        return run_eval(
            dataset.items,
            args.out,
            the_llm,
            settings,
            kb=provider,
            resume=args.resume,
            concurrency=args.concurrency,
            progress=stream,
            max_infra_failures=args.max_infra_failures,
            dataset=str(args.data),
            writer=writer,
            allow_mixed=args.allow_mixed,
            stamp=stores.stamp(),
            provenance=stores.provenance,
        )


def _check_resumed_settings(args: argparse.Namespace, settings: RunSettings) -> None:
    """With ``--resume``: refuse, before any work, settings other than those of the run file's records
    (the model as given by ``--model``; :func:`agent.evaluation.runner.run_eval` checks it again once the LLM is known).

    Raises:
        UsageError: the settings differ and ``--allow-mixed`` was not given.
    """
    run_file = Path(args.out)
    if not args.resume or args.allow_mixed or not run_file.exists() or run_file.stat().st_size == 0:
        return
    current = run_fingerprint(settings)
    current.update(model=args.model, context_tokens=args.context_tokens, max_reply_chars=args.max_reply_chars)
    answered = [r for r in latest_records(read_run(run_file)) if not failed_to_run(r)]  # the others run again
    differences = resume_conflicts(answered, current)
    if differences:
        raise UsageError(
            f"pyql eval: --resume with other settings than the run file {run_file} was made with: {'; '.join(differences)}; "
            "give the same settings to continue it, another --out for a new run, or --allow-mixed to mix them in one run"
        )


def _eval_provider(args: argparse.Namespace, dataset: Dataset) -> KBProvider:
    """The KB of ``pyql eval``, with ``--profile`` or the profile the KB and the items' entities tell.

    A KB opened to find its profile is the one the questions share (an
    endpoint, or each question's subgraph, is opened per question, with the profile found).
    """
    options = kb_options(args)
    if args.profile or not args.kb:
        return KBProvider(args.kb, args.profile or "freebase", **options)
    ids = [str(i) for item in dataset if item.get("table") is None for i in (item.get("entities") or {}).values()]
    kb = open_kb_for(args.kb, None, ids, **options)
    return KBProvider(args.kb if opens_per_question(args.kb) else kb, kb.profile.name, **options)


def _checked_eval(args: argparse.Namespace, settings: RunSettings, dataset: Dataset) -> RunSettings:
    """The settings for the data set.

    Raises:
        UsageError: no question (in the data set, or in its ``--shard``), KB questions without ``--kb``, or an
            existing run file without ``--resume``.
    """
    if not dataset.items:
        raise UsageError(f"pyql eval: no question to answer in {args.data}")
    if args.shard is not None:  # run_eval answers the shard's questions only (the shard is in the settings)
        mine = len(select(dataset.items, args.shard))
        if not mine:
            raise UsageError(f"pyql eval: shard {args.shard} of {args.data} has no question (it has {len(dataset.items)})")
        dataset.notes.append(f"shard {args.shard}: {mine} of the {len(dataset.items)} questions (every "
                             f"{args.shard.count}-th from the {args.shard.index}-th)")
    if any(item.get("table") is None for item in dataset) and not args.kb:
        raise UsageError(f"pyql eval: the data set has KB questions: give --kb ({KB_HINT})")
    method = strategies.entry(settings.method)
    for side in sorted({"sql" if item.get("table") is not None else _kb_side(settings) for item in dataset}):
        method.check_side(side)
    run_file = Path(args.out)
    if run_file.is_file() and run_file.stat().st_size > 0 and not args.resume:  # a directory: RunWriter says so
        raise UsageError(f"pyql eval: the run file {run_file} already exists: give --resume to continue it, or another --out")
    return settings


def _print_dataset_notes(args: argparse.Namespace, dataset: Dataset, stream: TextIO) -> None:
    """Say which items were skipped or have no entities, and the loader's notes."""
    if dataset.skipped:
        print(f"pyql eval: {dataset.skipped} items of {args.data} are not SELECT questions and are skipped", file=stream)
    if dataset.unlinked:
        print(f"pyql eval: {dataset.unlinked} items have no entry in {args.linking}: they have no entities", file=stream)
    for note in dataset.notes:
        print(f"pyql eval: {note}", file=stream)


def _eval_exit(args: argparse.Namespace, outcome: EvalOutcome, stream: TextIO) -> int:
    """Report how the run ended (interrupted, stopped, questions that failed to run, or done) and its exit code."""
    failed_now = f", {outcome.new_failed} failed to run" if outcome.new_failed else ""
    done = f"{outcome.new - outcome.new_failed} answered now{failed_now}, {outcome.skipped} already in {args.out}"
    if outcome.interrupted:
        print(f"pyql eval: interrupted ({done}); run the same command with --resume to continue", file=sys.stderr)
        return EXIT_INTERRUPTED
    if outcome.aborted:
        print(f"pyql eval: stopped: {outcome.aborted}", file=sys.stderr)
        return EXIT_SERVICE
    if outcome.failed:
        last = next(r for r in reversed(outcome.records) if str(r["id"]) == outcome.failed[-1])
        print(
            f"pyql eval: {len(outcome.failed)} questions failed to run and are not scored (last: {last['id']}: "
            f"{' '.join(str(last.get('error')).split())}); run the same command with --resume to run them again",
            file=sys.stderr,
        )
        return EXIT_SERVICE
    print(f"pyql eval: {done}; summary in {outcome.summary_file}", file=stream)
    return EXIT_OK


def _shard(text: str) -> Any:
    """``--shard``'s type: :func:`agent.evaluation.shards.parse_shard`, its refusal said as argparse says a flag's.

    Example:
        >>> _shard("1/4")
        Shard(index=1, count=4)
    """
    try:
        return parse_shard(text)
    except UsageError:
        raise argparse.ArgumentTypeError(f"must be of the form {SHARD_FORM}, got {text!r}") from None


def _add_eval(subparsers: Any) -> None:
    p = subparsers.add_parser("eval", help="answer a data set with an LLM agent; one JSON trace line per question")
    p.add_argument("data", nargs="?", help="the data set (format from the content): pyql JSONL, WebQSP, GrailQA, GraphQ, CWQ, "
                   "MetaQA, WikiSQL, WTQ, dbbench, MarkQA")
    p.add_argument("--linking", help="entity-linking results for the items' entities, e.g. grail_pangu_tiara.json")
    p.add_argument("--by", choices=CATEGORY_KEYS, help=category_help())
    p.add_argument("--out", required=True, help="the run file (JSON Lines, one line per finished question)")
    p.add_argument("--resume", action="store_true",
                   help="continue --out: skip the questions it already answered, run again those that failed to run")
    p.add_argument("--allow-mixed", action="store_true",
                   help="with --resume: continue the run file even with other settings (model, method, feedback, KB, "
                        "action mode ...) than its questions were answered with (refused by default)")
    p.add_argument("--concurrency", type=whole(1, MAX_CONCURRENCY), default=1,
                   help=f"questions answered at a time (default 1, at most {MAX_CONCURRENCY})")
    p.add_argument("--limit", type=_positive, help="answer only the first N questions")
    p.add_argument("--shard", type=_shard, metavar="K/N",
                   help=f"answer one shard of the data set (after --limit): every N-th question from the K-th ({SHARD_FORM}); "
                        "the shard is recorded in the run file's settings, --resume continues it with the same --shard")
    p.add_argument("--merge", nargs="+", metavar="RUN",
                   help="write the run files of a run's shards (pyql eval --shard) as one run file to --out, with its "
                        "summary (no DATA); a question in two files, files of other settings (unless --allow-mixed) "
                        "are refused, a missing shard is a warning")
    p.add_argument("--max-infra-failures", "--max-llm-failures", dest="max_infra_failures", type=_non_negative, default=3,
                   help="stop (exit 3) after this many questions in a row failed to run because the LLM or the KB "
                        "failed (default 3; 0: never); --max-llm-failures is its former name")
    _agent_arguments(p)
    p.set_defaults(func=eval_command)


# ---------------------------------------------------------------------------
# pyql trace


def trace_command(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql trace``: a run file as an HTML page, its summary table, or one question's steps as text (``--question``)."""
    records = latest_records(read_run(args.run, warn=sys.stderr))
    if args.question is not None:
        print(question_text(find_question(records, args.question, str(args.run))), file=out)
        return 0
    for line in _store_lines(records):
        print(line, file=out)
    if args.html:
        path = write_html(records, args.html, title=args.title, source=str(args.run))
        print(f"wrote {path} ({plural(len(records), 'question')})", file=out)
        return 0
    print(summary_text(records), file=out)
    if args.by:
        from agent.evaluation.metrics import category_table

        print("\n" + category_table(records, args.by), file=out)
    return 0


def _store_lines(records: list[dict[str, Any]]) -> list[str]:
    """What ``pyql trace`` says of the recordings and KB caches a run's records name (one line each).

    Example:
        >>> _store_lines([{"recording": {"mode": "replay", "file": "r/recording.sqlite", "id": "ab12"}}, {}])
        ['recording: replay of r/recording.sqlite (id ab12), 1 of 2 questions']
    """
    seen: dict[tuple[str, str, str, str], int] = {}
    for record in records:
        for field_name in ("recording", "kb_cache"):
            store = record.get(field_name)
            if isinstance(store, dict):
                key = (field_name, str(store.get("mode")), str(store.get("file")), str(store.get("id")))
                seen[key] = seen.get(key, 0) + 1
    verbs = {"record": "recorded into", "replay": "replay of", "cache": "kept in"}
    return [f"{name.replace('_', ' ')}: {verbs.get(mode, mode)} {file} (id {ident}), {n} of {len(records)} questions"
            for (name, mode, file, ident), n in seen.items()]


def _add_trace(subparsers: Any) -> None:
    p = subparsers.add_parser("trace", help="look at a run file: an HTML page (--html) or the summary table")
    p.add_argument("run", help="the run file written by pyql eval (or pyql ask --out)")
    p.add_argument("--html", help="write a self-contained HTML page here")
    p.add_argument("--title", help="the page title (default: the run file's name)")
    p.add_argument("--by", choices=CATEGORY_KEYS, help=category_help())
    p.add_argument("--question", metavar="ID",
                   help="print this question's steps as text: a linear run step by step, a search's steps as the tree "
                        "it explored (pruned branches marked, with why)")
    p.set_defaults(func=trace_command)


# ---------------------------------------------------------------------------
# pyql compare


def compare_command(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql compare RUN.jsonl ...``: runs side by side on their shared questions (:mod:`agent.evaluation.compare`).

    Prints the comparison as markdown (``--json``: one JSON object); ``--html FILE`` also writes it as a page
    with its plot. Bad input (not a run file, a damaged line, runs of different data sets, no shared question)
    is one line naming the file and the line, exit status 2.
    """
    comparison = compare_runs(args.runs, by=args.by, resamples=args.resamples, seed=args.seed, warn=sys.stderr)
    for warning in comparison.warnings:
        print(f"pyql compare: {warning}", file=sys.stderr)
    if args.html:
        path = write_comparison(comparison, args.html, title=args.title, metric=args.plot_metric)
        print(f"pyql compare: wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(comparison.to_dict(), ensure_ascii=False), file=out)
    else:
        print(comparison_text(comparison), file=out)
    return EXIT_OK


def _add_compare(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare", help="compare runs side by side on the questions they share: metrics, paired tests, cost",
        description="Compare run files (pyql eval --out) on the questions they share: exact match, F1, Hits@1 (the top "
                    "answer is gold), Hits@any (any predicted answer is gold, as ToG and RoG count Hits@1), per question "
                    "kind, a paired bootstrap interval and a paired test for every two runs, and the cost per question. "
                    "The shards of one run (pyql eval --shard) are read together as that run.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (the shards of one run are read as one run)")
    p.add_argument("--by", choices=CATEGORY_KEYS,
                   help="the per-kind view's key (default: the data set's question kind, when its questions have one)")
    p.add_argument("--html", metavar="FILE", help="also write the comparison as a page, with a plot of accuracy against cost")
    p.add_argument("--title", help="the page's title (default: the runs' names)")
    p.add_argument("--plot-metric", choices=[m.key for m in COMPARED_METRICS],
                   help="the metric the page's plot shows (default: denotation accuracy for table questions, else F1)")
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    p.add_argument("--resamples", type=_positive, default=1000, help="the paired bootstrap's resamples (default 1000)")
    p.add_argument("--seed", type=_non_negative, default=0,
                   help="the seed of the bootstrap and the permutation test (default 0: the same intervals every time)")
    p.set_defaults(func=compare_command)


# ---------------------------------------------------------------------------
# pyql run


def _print_record(record: Any, out: TextIO) -> None:
    mark = "ok" if record.ok else f"error: {record.error}"
    print(f"Action {record.index}: {record.call.text if record.call is not None else record.text.strip()}", file=out)
    print(f"Observation {record.index} ({mark}): {record.observation}", file=out)


@dataclasses.dataclass
class EpisodeOutcome:
    """What :func:`run_episode` ran into: the service failure it stopped at, and the steps that failed.

    Attributes:
        failure: the KB failure it stopped at (exit status 3), or None.
        failed: the numbers of the steps that failed (undone: the query goes
            on without them), in order.

    Example:
        >>> EpisodeOutcome(None, [3]).complete
        False
    """

    failure: InfraFailure | None = None
    failed: list[int] = dataclasses.field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether every step ran: no step failed and no service failure stopped the run."""
        return self.failure is None and not self.failed


def _failed_note(failed: list[int]) -> str:
    """The mark on the answers of a run where steps failed: they are the answers of the query without them.

    Example:
        >>> _failed_note([2, 5])
        '2 steps failed (actions 2, 5) and were undone: these are the answers of the query without them'
    """
    where = ("action " if len(failed) == 1 else "actions ") + ", ".join(map(str, failed))
    undone = "was" if len(failed) == 1 else "were"
    return f"{plural(len(failed), 'step')} failed ({where}) and {undone} undone: these are the answers of the query without {'it' if len(failed) == 1 else 'them'}"


def _print_answers(env: Environment, outcome: EpisodeOutcome, last_execute: Any, out: TextIO) -> None:
    """The transcript's last lines: the answers (marked when steps failed), the query and the counters."""
    final = env.final_result()
    answers = ", ".join(_answer_text(a) for a in final.answers)
    if env.done:
        note = ""
    elif outcome.failure is not None:
        note = f" (stopped: {outcome.failure.kind})"
    elif last_execute is not None:
        note = f" (execute() failed at action {last_execute.index}: {last_execute.error or 'error'}; see its observation)"
    else:
        note = " (execute() was not called)"
    if outcome.failed and outcome.failure is None:
        note += f" [INCOMPLETE: {_failed_note(outcome.failed)}]"
    print(f"\nAnswers: {answers or '(none)'}{note}", file=out)
    print(f"{final.language.upper()}:\n{visible(final.query)}", file=out)
    c = env.counters
    print(f"[{plural(c['steps'], 'step')}, {plural(c['kb_queries'], 'query', 'queries')}, {c['kb_seconds']:.3f} s in the engine]", file=out)


def run_episode(env: Environment, lines: list[str], as_json: bool, out: TextIO) -> EpisodeOutcome:
    """Run action lines in an environment and print the steps (JSON lines or a transcript), then the answers.

    Stops at a step whose engine could not be reached (or did not answer even
    a trivial probe after a time-out, :func:`agent.faults.infra_failure`) and
    returns that failure; the last line then carries it (``--json``: an
    ``error`` object ``{"kind", "message"}``, else ``null``). A step that
    fails otherwise is undone and the run goes on; the answers are then those
    of the query without it, and the last line says so (``--json``:
    ``"failed_steps": N, "complete": false``; the transcript: ``INCOMPLETE``).
    """
    outcome = EpisodeOutcome()
    last_execute = None
    kb = infra_kb(env)
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        record = env.step(line)
        if record.action == "execute":
            last_execute = record
        if not record.ok:
            outcome.failed.append(record.index)
        if as_json:
            print(dumps_line(record.to_json()), file=out)
        else:
            _print_record(record, out)
        outcome.failure = infra_failure(record.exception, kb)
        if env.done or outcome.failure is not None:
            break
    if as_json:
        final = {**env.final_result().to_json(), "counters": env.counters}
        final.update(failed_steps=len(outcome.failed), complete=outcome.complete)
        print(dumps_line({**final, "error": outcome.failure.to_json() if outcome.failure else None}), file=out)
    else:
        _print_answers(env, outcome, last_execute, out)
    return outcome


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql run``: run action lines on a KB or a table and print each step.

    Exits 3 (one line on stderr) when it stopped at a step whose KB could not
    be reached; 4 (one line on stderr) when steps failed, so the answers are
    those of the query without them, unless ``--keep-going`` (then 0).
    """
    lines = split_lines(read_text(args.actions, "actions"))
    if not (args.kb or args.db or args.table_json):
        raise UsageError(f"pyql run: give --kb KB ({KB_HINT}) or --db/--table-json")
    if _action_set(args) == "agentbench":  # a pasted trajectory: its thoughts and observations are no actions
        lines = [line for line in lines if not line.lstrip().startswith(NOT_ACTIONS)]
    kb_options(args)  # --kb-timeout/--default-graph without an endpoint: exit 2 before anything runs
    with _stores(args) as stores:
        env = open_environment(args)
        if isinstance(env, SparqlEnvironment):
            env.entities_from_kb = True  # a script, not an agent: an id that is in the KB is usable unlinked
        outcome = run_episode(env, lines, args.json, out)
        _report_stores(stores)
    if outcome.failure is not None:
        print(f"pyql run: stopped at action {len(env.history)}: the KB could not be used: {outcome.failure}", file=sys.stderr)
        return EXIT_SERVICE
    if outcome.failed and not args.keep_going:
        print(f"pyql run: {_failed_note(outcome.failed)} (give --keep-going to exit 0)", file=sys.stderr)
        return EXIT_STEPS_FAILED
    return EXIT_OK


def _add_run(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run action lines on a KB or a table")
    _kb_arguments(run)
    run.add_argument("--entities", help="linked entities: a JSON object name → id, or a file holding one, e.g. "
                     "'{\"Tropical Storm Rachel\": \"m.0crbvqz\"}'. An id that is in the KB can be used without it; "
                     "one that is not is refused (unlinked_entity)")
    run.add_argument("--question", help="the question (used by relation ranking and guidelines)")
    run.add_argument("--actions", required=True, help="a UTF-8 file with one action per line, or - for stdin")
    run.add_argument("--json", action="store_true", help="print one JSON object per step, then the answers")
    run.add_argument("--keep-going", action="store_true",
                     help="exit 0 even when steps failed (by default a run where a step failed exits 4: "
                          "its answers are those of the query without the failed steps)")
    run.add_argument("--feedback", default="eraser", choices=list(FEEDBACK_MODES),
                     help="eraser: targeted guidelines (default); raw: the raw error; none: no correction")
    run.add_argument("--db", help="SQL side: a SQLite database file")
    run.add_argument("--table", help="SQL side: the table name in --db")
    run.add_argument("--table-json", help="SQL side: a JSON file with an inline table (header and rows)")
    _recording_arguments(run)
    run.set_defaults(func=run_command)


def add_commands(subparsers: Any) -> None:
    """The ``pyql.commands`` entry point: add ``run``, ``llm``, ``ask``, ``eval``, ``trace`` and ``compare``.

    Example:
        >>> import argparse
        >>> p = argparse.ArgumentParser(prog="pyql")
        >>> add_commands(p.add_subparsers(dest="command"))
        >>> p.parse_args(["run", "--kb", "demo", "--actions", "-"]).feedback
        'eraser'
    """
    _add_run(subparsers)
    register_cli(subparsers)
    _add_ask(subparsers)
    _add_eval(subparsers)
    _add_trace(subparsers)
    _add_compare(subparsers)
