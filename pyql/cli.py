"""The ``pyql`` command line.

Subcommands:

* ``pyql demo``: step-by-step queries on the bundled demo KB.
* ``pyql run``: run action lines on a KB (or a table) and print each step.
* ``pyql compile FILE``: a legacy PyQL program → SPARQL.
* ``pyql actions FILE``: a legacy PyQL program → action lines.
* ``pyql docs``: the action documentation an LLM sees (markdown, prompt, openai-tools).

Bad usage and unreadable inputs exit with status 2 and a one-line message;
a run whose steps failed still exits 0 (the failures are in its output).

Example:
    >>> main(["docs", "--format", "prompt"])  # doctest: +ELLIPSIS
    You can only choose actions from these 13 actions:
    ...
    0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from pyql.errors import PyQLError

__all__ = ["main", "UsageError", "register"]

_COMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {}


class UsageError(PyQLError):
    """Bad command-line usage (exit status 2)."""

    kind = "usage"


def register(name: str) -> Callable[[Callable[[argparse._SubParsersAction], None]], Callable[[argparse._SubParsersAction], None]]:
    """Register a function that adds a subcommand to the parser (used by other packages)."""

    def deco(fn: Callable[[argparse._SubParsersAction], None]) -> Callable[[argparse._SubParsersAction], None]:
        _COMMANDS[name] = fn
        return fn

    return deco


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def read_text(path: str, what: str) -> str:
    """Read a file (``-`` is standard input) or raise UsageError naming it."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {what} file {path}: {exc}") from None


def read_entities(value: str | None) -> dict[str, str]:
    """``--entities``: a JSON object (name → id) given inline or as a file path.

    Example:
        >>> read_entities('{"Jamaica": "m.03_r3"}')
        {'Jamaica': 'm.03_r3'}
    """
    if not value:
        return {}
    text = value
    if not value.lstrip().startswith("{") and Path(value).is_file():
        text = Path(value).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--entities must be a JSON object such as '{{\"Jamaica\": \"m.03_r3\"}}' or a file holding one: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise UsageError("--entities must map entity names to ids, e.g. '{\"Jamaica\": \"m.03_r3\"}'")
    return data


def _print_record(record: Any, out: TextIO) -> None:
    mark = "ok" if record.ok else f"error: {record.error}"
    print(f"Action {record.index}: {record.call.text if record.call is not None else record.text.strip()}", file=out)
    print(f"Observation {record.index} ({mark}): {record.observation}", file=out)


def run_episode(env: Any, lines: list[str], as_json: bool, out: TextIO, final_key: str) -> None:
    """Run action lines in an environment and print steps (JSON lines or a transcript)."""
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        record = env.step(line)
        if as_json:
            print(json.dumps(record.to_json(), ensure_ascii=False), file=out)
        else:
            _print_record(record, out)
        if env.done:
            break
    final = env.final_json()
    if as_json:
        final["counters"] = env.counters
        print(json.dumps(final, ensure_ascii=False), file=out)
    else:
        answers = ", ".join(a["value"] + (f" ({a['label']})" if a.get("label") else "") for a in final["answers"])
        print(f"\nAnswers: {answers or '(none)'}" + ("" if env.done else " (execute() was not called)"), file=out)
        print(f"{final_key.upper()}:\n{final[final_key]}", file=out)
        c = env.counters
        print(f"[{c['steps']} steps, {c['kb_queries']} queries, {c['kb_seconds']:.3f} s in the engine]", file=out)


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.demo import run_demo

    run_demo(args.kb, out=out, show_sparql=not args.no_sparql)
    return 0


def _make_analyzer(name: str) -> Any:
    if name == "none":
        return None
    try:
        from correction import eraser_for
    except ImportError:  # pragma: no cover - correction ships with pyql
        return None
    return eraser_for(name)


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    lines = read_text(args.actions, "actions").splitlines()
    entities = read_entities(args.entities)
    if args.db or args.table_json:
        try:
            from pyql_sql.cli import table_environment
        except ImportError as exc:  # pragma: no cover
            raise UsageError(f"the SQL side is not available: {exc}") from None
        env = table_environment(args, entities, _make_analyzer(args.feedback))
        run_episode(env, lines, args.json, out, "sql")
        return 0
    if not args.kb:
        raise UsageError("pyql run: give --kb KB (a Turtle/N-Triples file, oxigraph:PATH or an http(s)://…/sparql endpoint) or --db/--table-json")
    from pyql.environment import SparqlEnvironment
    from pyql.kb import KB

    kb = KB.open(args.kb, args.profile)
    env = SparqlEnvironment(kb, question=args.question, entities=entities, analyzer=_make_analyzer(args.feedback))
    run_episode(env, lines, args.json, out, "sparql")
    return 0


def _cmd_compile(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.legacy import program_to_query

    print(program_to_query(read_text(args.file, "program"), args.profile).sparql(), end="", file=out)
    return 0


def _cmd_actions(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.legacy import program_to_actions

    for line in program_to_actions(read_text(args.file, "program")):
        print(line, file=out)
    return 0


def _cmd_docs(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.actions import render_docs

    if args.side == "sql":
        from pyql_sql.actions import TableActions

        actions: Any = TableActions()
    else:
        from pyql.sparql_actions import SparqlActions

        actions = SparqlActions(args.only.split(",") if args.only else None)
    print(render_docs(actions, args.format), end="", file=out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pyql`` (subcommands registered by other packages included)."""
    from pyql.actions import DOC_FORMATS

    parser = _Parser(prog="pyql", description="Build SPARQL and SQL queries one executable step at a time.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    demo = sub.add_parser("demo", help="run step-by-step queries on the bundled demo KB")
    demo.add_argument("--kb", default="demo", help="demo (rdflib, default) or oxigraph:demo")
    demo.add_argument("--no-sparql", action="store_true", help="do not print the SPARQL of each step")
    demo.set_defaults(func=_cmd_demo)

    run = sub.add_parser("run", help="run action lines on a KB or a table")
    run.add_argument("--kb", help="a Turtle/N-Triples file, oxigraph:PATH, or an http(s)://…/sparql endpoint")
    run.add_argument("--profile", default="freebase", choices=["freebase", "wikidata", "generic"])
    run.add_argument("--entities", help="linked entities: a JSON object name → id, or a file holding one")
    run.add_argument("--question", help="the question (used by relation ranking and guidelines)")
    run.add_argument("--actions", required=True, help="a file with one action per line, or - for stdin")
    run.add_argument("--json", action="store_true", help="print one JSON object per step, then the answers")
    run.add_argument("--feedback", default="eraser", choices=["eraser", "raw", "none"],
                     help="eraser: targeted guidelines (default); raw: the raw error; none: no correction")
    run.add_argument("--db", help="SQL side: a SQLite database file")
    run.add_argument("--table", help="SQL side: the table name in --db")
    run.add_argument("--table-json", help="SQL side: a JSON file with an inline table (header and rows)")
    run.set_defaults(func=_cmd_run)

    comp = sub.add_parser("compile", help="compile a legacy PyQL program to SPARQL")
    comp.add_argument("file", help="the program file, or - for stdin")
    comp.add_argument("--profile", default="freebase", choices=["freebase", "wikidata", "generic"])
    comp.set_defaults(func=_cmd_compile)

    act = sub.add_parser("actions", help="convert a legacy PyQL program to action lines")
    act.add_argument("file", help="the program file, or - for stdin")
    act.set_defaults(func=_cmd_actions)

    docs = sub.add_parser("docs", help="print the action documentation an LLM sees")
    docs.add_argument("--format", default="markdown", choices=list(DOC_FORMATS))
    docs.add_argument("--side", default="sparql", choices=["sparql", "sql"])
    docs.add_argument("--only", help="comma-separated action names to document (SPARQL side)")
    docs.set_defaults(func=_cmd_docs)

    for add in _COMMANDS.values():
        add(sub)
    return parser


def _load_plugins() -> None:
    for module in ("agent.cli",):
        try:
            __import__(module)
        except ImportError:
            pass


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the ``pyql`` command; returns the exit status.

    Example:
        >>> main(["compile", "/nonexistent.pyql"])  # prints the reason on stderr
        2
    """
    out = out or sys.stdout
    _load_plugins()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(out)
            return 2
        return int(args.func(args, out) or 0)
    except UsageError as exc:
        message = str(exc)
        print(message if message.startswith("pyql") else f"pyql: {message}", file=out if out is not sys.stdout else sys.stderr)
        return 2
    except PyQLError as exc:
        print(f"pyql: {exc}", file=out if out is not sys.stdout else sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0


if __name__ == "__main__":  # pragma: no cover
    # run the registry of the importable module (plugins register there), not __main__'s copy
    from pyql.cli import main as _main

    raise SystemExit(_main())
