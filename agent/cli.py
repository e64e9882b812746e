"""The CLI wiring on top of every package: the ``pyql`` subcommands that need them all.

:func:`add_commands` is the ``pyql.commands`` entry point of the agent
package (``pyproject.toml``); :func:`pyql.cli.build_parser` calls it. No
module imports this one. Environments are opened by
:func:`agent.environments.open_environment`, the same for ``run``, ``ask``
and ``eval``.

* ``pyql run --kb KB --actions FILE`` (or ``--db/--table`` /
  ``--table-json`` for a table): run action lines in the step environment
  and print each step (``--json``: one JSON object per step, then the answers).
* ``pyql llm serve``: the local model on loopback (:mod:`agent.local`).
* ``pyql ask "QUESTION" --kb KB --entities JSON`` (or ``--db/--table`` /
  ``--table-json`` for a table): answer one question with an agent, print
  the transcript and the answers; ``--json`` prints the steps as
  ``pyql run --json`` does, then one summary line.
* ``pyql eval DATA --kb KB --out RUN.jsonl [--resume] [--concurrency N]``:
  answer a data set (:mod:`agent.datasets`), one trace line per question
  (:mod:`agent.runner`), then the summary table (:mod:`agent.metrics`).
* ``pyql trace RUN.jsonl --html OUT.html``: the run as a page
  (:mod:`agent.trace_html`); without ``--html``, the summary table.

Bad usage exits with status 2 and a one-line message; a ``run`` whose steps
failed still exits 0 (the failures are in its output); ``ask`` exits with 1
when the episode ended on an error (e.g. the LLM could not be reached),
``eval`` with 130 after Ctrl-C and 1 when it stopped on LLM failures. With no LLM
configured, ``ask`` and ``eval`` use the local model when it is installed
(:func:`agent.local.configured_llm`), else say how to configure one.

Example:
    >>> from pyql.cli import build_parser
    >>> build_parser().parse_args(["llm", "serve", "--port", "0"]).port
    0
    >>> a = build_parser().parse_args(["ask", "what category is tropical storm rachel?", "--kb", "demo"])
    >>> (a.method, a.feedback, a.max_steps, a.ranker, a.max_relations, a.trace_prompts)
    ('queryagent', 'eraser', 12, 'bm25', 40, 'hash')
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from pathlib import Path
from typing import Any, Iterator, TextIO

from agent.datasets import load_dataset
from agent.environments import KB_HINT, open_environment
from agent.jsonlines import dumps_line
from agent.llm import add_llm_arguments, config_from_args
from agent.local import LOCAL_MODEL_NAME, configured_llm, register_cli
from agent.metrics import load_prices
from agent.runner import (
    KBProvider,
    RunSettings,
    RunWriter,
    latest_records,
    make_record,
    read_run,
    relation_ranker,
    reply_thought,
    run_eval,
    solver,
    summary_text,
)
from agent.trace_html import write_html
from grammars.vocabulary import FEEDBACK_MODES
from pyql.cli import UsageError, read_entities, read_text
from pyql.environment import Environment
from pyql.errors import PyQLError
from pyql.profiles import PROFILES

__all__ = ["add_commands", "run_command", "run_episode", "ask_command", "eval_command", "trace_command"]

_RANKERS = ("bm25", "embedding", "hybrid", "none")


# ---------------------------------------------------------------------------
# Shared flags


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _agent_arguments(parser: argparse.ArgumentParser) -> None:
    add_llm_arguments(parser)
    g = parser.add_argument_group("agent")
    g.add_argument("--method", default="queryagent", choices=["queryagent", "readi"],
                   help="queryagent: step by step with ERASER (default); readi: reasoning paths (when available)")
    g.add_argument("--feedback", default="eraser", choices=list(FEEDBACK_MODES),
                   help="eraser: targeted guidelines (default); raw: the raw error; none: only that the step failed")
    g.add_argument("--max-steps", type=_positive, default=12, help="actions before the agent must answer (default 12)")
    g.add_argument("--example", help="one-shot example: a bundled name (freebase, table) or a text file")
    g.add_argument("--ranker", default="bm25", choices=list(_RANKERS),
                   help="relation ranking when an entity has more than --max-relations relations (default bm25)")
    g.add_argument("--max-relations", type=_positive, default=40, help="relations shown per direction (default 40)")
    g.add_argument("--trace-prompts", default="hash", choices=["hash", "full"],
                   help="trace each prompt's sha256 (default) or the full text")
    g.add_argument("--prices", help='price table JSON {"model": [USD per 1M input tokens, per 1M output]} for the cost')
    k = parser.add_argument_group("knowledge base")
    k.add_argument("--kb", help="demo, a Turtle/N-Triples file, oxigraph:PATH, or an http(s)://…/sparql endpoint")
    k.add_argument("--profile", default="freebase", choices=list(PROFILES))


def _settings(args: argparse.Namespace, llm: Any = None) -> RunSettings:
    return RunSettings(
        kb=args.kb,
        profile=args.profile,
        method=args.method,
        feedback=args.feedback,
        max_steps=args.max_steps,
        example=args.example,
        ranker=args.ranker,
        max_relations=args.max_relations,
        trace_prompts=args.trace_prompts,
        action_mode=_action_mode(args, llm),
        prices=load_prices(args.prices) if args.prices else None,
    )


def _action_mode(args: argparse.Namespace, llm: Any = None) -> str:
    """``--action-mode``, else the default: ``choose`` for the bundled local model on a KB, ``text`` otherwise.

    The local model is used when no LLM is configured (started, or a running
    ``pyql llm serve``) or when the configured model is its name; on the demo
    questions it answers far more by choosing than by writing actions
    (``docs/benchmarks.md``). Table questions have no enumerator yet: ``text``.
    An LLM given in code (tests) counts as local when its model has that name.
    """
    if getattr(args, "action_mode", None):
        return str(args.action_mode)
    if getattr(args, "db", None) or getattr(args, "table_json", None):
        return "text"
    if llm is not None:
        names = (getattr(llm, "model", None), getattr(getattr(llm, "config", None), "model", None))
        return "choose" if LOCAL_MODEL_NAME in names else "text"
    try:
        config = config_from_args(args)
    except PyQLError:
        return "text"
    local = not config.configured or config.model == LOCAL_MODEL_NAME
    return "choose" if local else "text"


@contextlib.contextmanager
def _llm_for(args: argparse.Namespace, llm: Any = None) -> Iterator[Any]:
    """The given LLM (tests), else the configured one, else the local model."""
    if llm is not None:
        yield llm
        return
    with configured_llm(config_from_args(args)) as real:
        yield real


# ---------------------------------------------------------------------------
# pyql ask


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
    answers = ", ".join(str(a["value"]) + (f" ({a['label']})" if a.get("label") else "") for a in result.answers)
    print(f"\nAnswers: {answers or '(none)'}" + ("" if result.done else " (no query was executed)"), file=out)
    if result.query:
        print(f"{final_key.upper()}:\n{result.query.rstrip()}", file=out)
    print(
        f"[{len(result.steps)} steps, {result.llm_calls} LLM calls, {result.tokens_in} tokens in, "
        f"{result.tokens_out} out, {result.kb_queries} queries, {result.seconds:.2f} s]",
        file=out,
    )


def ask_command(args: argparse.Namespace, out: TextIO, llm: Any = None) -> int:
    """``pyql ask``: answer one question; ``llm`` replaces the configured LLM (tests)."""
    question = (args.question or "").strip()
    if not question:
        raise UsageError("pyql ask: the question is empty")
    settings = _settings(args, llm)
    solve = solver(settings.method)
    config = settings.agent_config()
    item: dict[str, Any] = {"id": "ask", "question": question, "entities": read_entities(args.entities), "answers": None, "source": "ask"}
    if not (args.db or args.table_json or args.kb):
        raise UsageError(f"pyql ask: give --kb KB ({KB_HINT}), or --db/--table-json for a table")
    ranker = None if args.db or args.table_json else relation_ranker(settings.ranker, settings.max_relations)
    env = open_environment(args, item, ranker=ranker, agent=True)
    if config.action_mode == "choose" and env.side != "sparql":
        raise UsageError("pyql ask: --action-mode choose enumerates KB steps; use text, tools or grammar for a table")
    if env.side == "sql":
        item["table"] = {"name": env.table.name}
    try:
        with _llm_for(args, llm) as the_llm:
            result = solve(the_llm, env, question, config)
            record = make_record(item, result, the_llm, settings)
    except KeyboardInterrupt:
        print("pyql ask: interrupted", file=sys.stderr)
        return 130
    if args.out:
        with RunWriter(Path(args.out)) as writer:
            writer.write(record)
    if args.json:
        for s in result.steps:
            step = {"step": s.step, "action": s.action if s.action else s.reply, "ok": s.ok, "error": s.error, "observation": s.observation}
            print(dumps_line(step), file=out)
        print(dumps_line(result.summary()), file=out)
    else:
        _print_transcript(result, out, env.language)
    return 1 if result.error else 0


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
    """``pyql eval``: answer a data set; ``llm`` replaces the configured LLM (tests)."""
    settings = _settings(args, llm)
    solver(settings.method)
    settings.agent_config()
    dataset = load_dataset(args.data, limit=args.limit, linking=args.linking)
    if not dataset.items:
        raise UsageError(f"pyql eval: no question to answer in {args.data}")
    if any(item.get("table") is None for item in dataset) and not args.kb:
        raise UsageError("pyql eval: the data set has KB questions: give --kb (demo, a Turtle file, oxigraph:PATH or a SPARQL endpoint)")
    if settings.action_mode == "choose" and any(item.get("table") is not None for item in dataset):
        if args.action_mode:
            raise UsageError("pyql eval: --action-mode choose enumerates KB steps; the data set has table questions: use text, tools or grammar")
        settings = dataclasses.replace(settings, action_mode="text")
    run_file = Path(args.out)
    if run_file.exists() and run_file.stat().st_size > 0 and not args.resume:
        raise UsageError(f"pyql eval: the run file {run_file} already exists: give --resume to continue it, or another --out")
    provider = None
    if any(item.get("table") is None for item in dataset):
        provider = KBProvider(args.kb, args.profile)  # a bad --kb fails before the LLM starts
    stream = progress if progress is not None else sys.stderr
    if dataset.skipped:
        print(f"pyql eval: {dataset.skipped} items of {args.data} are not SELECT questions and are skipped", file=stream)
    if dataset.unlinked:
        print(f"pyql eval: {dataset.unlinked} items have no entry in {args.linking}: they have no entities", file=stream)
    with _llm_for(args, llm) as the_llm:
        outcome = run_eval(
            dataset.items,
            args.out,
            the_llm,
            settings,
            kb=provider,
            resume=args.resume,
            concurrency=args.concurrency,
            progress=stream,
            max_llm_failures=args.max_llm_failures,
            dataset=str(args.data),
        )
    print(summary_text(outcome.records, outcome.metrics), file=out)
    if args.by:
        from agent.metrics import category_table

        print("\n" + category_table(outcome.records, args.by, settings.prices), file=out)
    done = f"{outcome.new} answered now, {outcome.skipped} already in {args.out}"
    if outcome.interrupted:
        print(f"pyql eval: interrupted ({done}); run the same command with --resume to continue", file=sys.stderr)
        return 130
    if outcome.aborted:
        print(f"pyql eval: stopped: {outcome.aborted}", file=sys.stderr)
        return 1
    print(f"pyql eval: {done}; summary in {outcome.summary_file}", file=stream)
    return 0


def _add_eval(subparsers: Any) -> None:
    p = subparsers.add_parser("eval", help="answer a data set with an LLM agent; one JSON trace line per question")
    p.add_argument("data", help="the data set (format from the content): pyql JSONL, WebQSP, GrailQA, GraphQ, CWQ, MetaQA, WikiSQL, WTQ, dbbench")
    p.add_argument("--linking", help="entity-linking results for the items' entities, e.g. grail_pangu_tiara.json")
    p.add_argument("--by", choices=["level", "type"], help="also print the metrics per GrailQA level / CWQ or MetaQA question type")
    p.add_argument("--out", required=True, help="the run file (JSON Lines, one line per finished question)")
    p.add_argument("--resume", action="store_true", help="continue --out: skip the questions it already has")
    p.add_argument("--concurrency", type=_positive, default=1, help="questions answered at a time (default 1)")
    p.add_argument("--limit", type=_positive, help="answer only the first N questions")
    p.add_argument("--max-llm-failures", type=_non_negative, default=3,
                   help="stop after this many questions in a row failed on LLM errors (default 3; 0: never)")
    _agent_arguments(p)
    p.set_defaults(func=eval_command)


# ---------------------------------------------------------------------------
# pyql trace


def trace_command(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql trace``: a run file as an HTML page, or its summary table."""
    records = latest_records(read_run(args.run, warn=sys.stderr))
    if args.html:
        path = write_html(records, args.html, title=args.title, source=str(args.run))
        print(f"wrote {path} ({len(records)} questions)", file=out)
        return 0
    print(summary_text(records), file=out)
    if args.by:
        from agent.metrics import category_table

        print("\n" + category_table(records, args.by), file=out)
    return 0


def _add_trace(subparsers: Any) -> None:
    p = subparsers.add_parser("trace", help="look at a run file: an HTML page (--html) or the summary table")
    p.add_argument("run", help="the run file written by pyql eval (or pyql ask --out)")
    p.add_argument("--html", help="write a self-contained HTML page here")
    p.add_argument("--title", help="the page title (default: the run file's name)")
    p.add_argument("--by", choices=["level", "type"], help="also print the metrics per GrailQA level / CWQ or MetaQA question type")
    p.set_defaults(func=trace_command)


# ---------------------------------------------------------------------------
# pyql run


def _print_record(record: Any, out: TextIO) -> None:
    mark = "ok" if record.ok else f"error: {record.error}"
    print(f"Action {record.index}: {record.call.text if record.call is not None else record.text.strip()}", file=out)
    print(f"Observation {record.index} ({mark}): {record.observation}", file=out)


def run_episode(env: Environment, lines: list[str], as_json: bool, out: TextIO) -> None:
    """Run action lines in an environment and print the steps (JSON lines or a transcript), then the answers."""
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        record = env.step(line)
        if as_json:
            print(dumps_line(record.to_json()), file=out)
        else:
            _print_record(record, out)
        if env.done:
            break
    final = env.final_result()
    if as_json:
        print(dumps_line({**final.to_json(), "counters": env.counters}), file=out)
        return
    answers = ", ".join(a["value"] + (f" ({a['label']})" if a.get("label") else "") for a in final.answers)
    print(f"\nAnswers: {answers or '(none)'}" + ("" if env.done else " (execute() was not called)"), file=out)
    print(f"{final.language.upper()}:\n{final.query}", file=out)
    c = env.counters
    print(f"[{c['steps']} steps, {c['kb_queries']} queries, {c['kb_seconds']:.3f} s in the engine]", file=out)


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql run``: run action lines on a KB or a table and print each step."""
    lines = read_text(args.actions, "actions").splitlines()
    if not (args.kb or args.db or args.table_json):
        raise UsageError(f"pyql run: give --kb KB ({KB_HINT}) or --db/--table-json")
    run_episode(open_environment(args), lines, args.json, out)
    return 0


def _add_run(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run action lines on a KB or a table")
    run.add_argument("--kb", help="demo, a Turtle/N-Triples file, oxigraph:PATH, or an http(s)://…/sparql endpoint")
    run.add_argument("--profile", default="freebase", choices=list(PROFILES))
    run.add_argument("--entities", help="linked entities: a JSON object name → id, or a file holding one")
    run.add_argument("--question", help="the question (used by relation ranking and guidelines)")
    run.add_argument("--actions", required=True, help="a file with one action per line, or - for stdin")
    run.add_argument("--json", action="store_true", help="print one JSON object per step, then the answers")
    run.add_argument("--feedback", default="eraser", choices=list(FEEDBACK_MODES),
                     help="eraser: targeted guidelines (default); raw: the raw error; none: no correction")
    run.add_argument("--db", help="SQL side: a SQLite database file")
    run.add_argument("--table", help="SQL side: the table name in --db")
    run.add_argument("--table-json", help="SQL side: a JSON file with an inline table (header and rows)")
    run.set_defaults(func=run_command)


def add_commands(subparsers: Any) -> None:
    """The ``pyql.commands`` entry point: add ``run``, ``llm``, ``ask``, ``eval`` and ``trace``.

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
