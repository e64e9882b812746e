"""The ``pyql`` command line: the frame, and the core package's own commands.

The ``pyql`` command is composed from the commands each package provides:
every entry point of the group ``pyql.commands`` (declared in
``pyproject.toml``) is a function that adds subcommands to the parser. This
module imports no package above :mod:`pyql`; it only loads those entry
points. The core provides (:func:`add_commands`):

* ``pyql demo``: step-by-step queries on a bundled demo KB (``--kb wikidata-demo``: MarkQA programs on the Wikidata one; ``--list``, ``--question ID``).
* ``pyql compile FILE``: a legacy PyQL program → SPARQL.
* ``pyql actions FILE``: a legacy PyQL program → action lines.
* ``pyql convert --from FORMAT --to FORMAT [FILE|-] [--jsonl]``: a query
  from one conversion format to another (:mod:`pyql.interchange`; compile
  and actions are its ``legacy`` → ``sparql`` and ``legacy`` → ``actions``).
* ``pyql docs``: the action documentation an LLM sees (markdown, prompt,
  openai-tools), for every action set of the group ``pyql.action_sets``.
* ``pyql kb load FILE... --store DIR``: bulk-load RDF files into an on-disk
  Oxigraph store (resumable), then open it as ``--kb oxigraph:DIR``.

The agent package provides ``run``, ``ask``, ``eval``, ``trace`` and ``llm``
(:mod:`agent.cli`, the CLI wiring on top of every package).

Exit statuses (:data:`EXIT_OK`, :data:`EXIT_USAGE`, :data:`EXIT_SERVICE`,
:data:`EXIT_STEPS_FAILED`, :data:`EXIT_INTERRUPTED`), the same for every command:

* 0: done. An ``eval`` whose model got questions wrong still exits 0 (the
  failures are in the output), and so does a ``run`` whose steps failed
  when given ``--keep-going``.
* 2: bad usage or an unreadable input (a missing file, a file or standard
  input that is not UTF-8, a KB that does not open), with a one-line message.
* 3: a service failed: the KB could not be reached or did not answer, or
  the LLM failed after its retries (``pyql run`` stopped at that step, the
  ``ask`` question failed to run, ``eval`` stopped or left questions that
  failed to run: give ``--resume``). One line on stderr says what and where.
* 4: ``pyql run`` ran, but steps failed (each was undone): its answers are
  those of the query without them; one line on stderr says how many and
  which (``--keep-going``: exit 0).
* 130: interrupted (Ctrl-C).

(1 is never returned on purpose: it is Python's status for a crash.)

Every numeric flag of every command is read by a checked type
(:func:`whole`, :func:`number`, :func:`seconds`): a value that is not
finite or not in its range (``--llm-timeout nan``, ``--temperature inf``, a
count beyond a 32-bit integer) is a usage error, one line, status 2, before
any work, never a traceback or a value that breaks a run later.

Inputs are read as UTF-8, files and standard input alike (:func:`read_text`):
bytes that are not UTF-8 are refused with status 2 and their line and column,
never replaced silently.

Example:
    >>> main(["docs", "--format", "prompt"])  # doctest: +ELLIPSIS
    You can only choose actions from these 13 actions:
    ...
    0
"""

from __future__ import annotations

# The pyql command (the console script, python -m pyql.cli): Ctrl-C from this line on is one line and
# exit status 130 (pyql.interrupts). Only light imports follow; main imports the commands, the KB
# engines and the LLM client.
from pyql import interrupts

interrupts.guard_start(__name__)

import argparse  # noqa: E402
import difflib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any, Callable, Sequence, TextIO  # noqa: E402

from pyql.echo import MESSAGE_LIMIT, clip, plural, redact_credentials  # noqa: E402
from pyql.errors import (  # noqa: E402
    PyQLError,
    UsageError,  # noqa: F401 (defined in pyql/errors.py)
)

if TYPE_CHECKING:
    from pyql.environment.actions import ActionSet

__all__ = [
    "main",
    "build_parser",
    "add_commands",
    "action_sets",
    "UsageError",
    "read_text",
    "read_bytes",
    "decode_utf8",
    "read_entities",
    "COMMAND_GROUP",
    "ACTION_SET_GROUP",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_SERVICE",
    "EXIT_INTERRUPTED",
    "EXIT_STEPS_FAILED",
    "unknown_options",
    "MAX_WHOLE",
    "MAX_SECONDS",
    "whole",
    "number",
    "seconds",
]

#: Exit status: done.
EXIT_OK = 0
#: Exit status: bad usage or an unreadable input.
EXIT_USAGE = 2
#: Exit status: a service (the KB, the LLM) failed; try again (``eval``: with ``--resume``).
EXIT_SERVICE = 3
#: Exit status: ``pyql run`` ran, but steps failed (undone), so its answers are those of the query without them; ``--keep-going``: 0.
EXIT_STEPS_FAILED = 4
#: Exit status: interrupted (Ctrl-C).
EXIT_INTERRUPTED = interrupts.EXIT_INTERRUPTED

#: The entry-point group of the functions that add subcommands to ``pyql``.
COMMAND_GROUP = "pyql.commands"
#: The entry-point group of the action sets ``pyql docs --side`` documents.
ACTION_SET_GROUP = "pyql.action_sets"

Subparsers = Any  # argparse's private _SubParsersAction


# ---------------------------------------------------------------------------
# Numeric flags: every command's, checked as they are read

#: The largest whole number a flag takes (a 32-bit signed integer).
MAX_WHOLE = 2**31 - 1
#: The longest wait a flag takes, in seconds (about 11.5 days; the platform's timers overflow far beyond).
MAX_SECONDS = 1_000_000.0


def _shown(value: float) -> str:
    """A bound as the messages write it: ``2``, ``0.5``, ``1000000``.

    Example:
        >>> _shown(2.0), _shown(0.5), _shown(1e6)
        ('2', '0.5', '1000000')
    """
    return str(int(value)) if float(value).is_integer() else str(value)


def whole(low: int = 1, high: int = MAX_WHOLE) -> Callable[[str], int]:
    """The type of a flag that is a whole number from ``low`` to ``high``.

    Example:
        >>> whole()("12"), whole(0)("0")
        (12, 0)
        >>> whole()("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be a whole number from 1 to 2147483647, got '0'
        >>> whole(0, 100)("1e3")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be a whole number from 0 to 100, got '1e3'
    """

    def read(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low} to {high}, got {text!r}")
        return value

    read.__name__ = "whole number"
    return read


def number(low: float, high: float) -> Callable[[str], float]:
    """The type of a flag that is a finite number from ``low`` to ``high``.

    Example:
        >>> number(0, 2)("0.7")
        0.7
        >>> number(0, 2)("nan")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be a finite number from 0 to 2, got 'nan'
    """

    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"must be a finite number from {_shown(low)} to {_shown(high)}, got {text!r}")
        return value

    read.__name__ = "number"
    return read


def seconds(high: float = MAX_SECONDS) -> Callable[[str], float]:
    """The type of a flag that is a number of seconds: finite, above 0, at most ``high``; kept as given (0.5 stays 0.5).

    Example:
        >>> seconds()("0.3"), seconds()("120")
        (0.3, 120.0)
        >>> seconds()("inf")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be a positive number of seconds, at most 1000000, got 'inf'
    """

    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= high):
            raise argparse.ArgumentTypeError(f"must be a positive number of seconds, at most {_shown(high)}, got {text!r}")
        return value

    read.__name__ = "seconds"
    return read


def unknown_options(given: Sequence[str], known: Sequence[str]) -> list[str]:
    """The option flags among ``given`` that are none of ``known`` (nor a prefix of exactly one), each with a "did you mean".

    Values are not looked at: only words starting with ``-`` and a letter
    (``-`` alone is standard input), before a ``--``; ``--flag=value`` is
    the flag.

    Example:
        >>> unknown_options(["--kb", "demo", "--actoins", "-", "--json"], ["--kb", "--actions", "--json", "-h"])
        ['--actoins (did you mean --actions?)']
        >>> unknown_options(["--act", "x"], ["--actions"])
        []
    """
    out = []
    for word in given:
        if word == "--":
            break
        flag = word.split("=", 1)[0]
        if len(flag) < 2 or flag[0] != "-" or not (flag[1].isalpha() or flag[1] == "-" and flag[2:3].isalpha()):
            continue
        if flag in known or (flag.startswith("--") and sum(k.startswith(flag) for k in known) == 1):
            continue
        close = difflib.get_close_matches(flag, [k for k in known if k.startswith("--")], n=1)
        out.append(flag + (f" (did you mean {close[0]}?)" if close else ""))
    return out


class _Parser(argparse.ArgumentParser):
    """The parser of ``pyql`` and its subcommands: errors are :class:`UsageError`, and an unknown flag is named first.

    argparse reports a missing required argument before an unknown one
    (``--actoins`` gave "the following arguments are required: --actions");
    here the unknown flag is named, with the closest known one.
    """

    _given: Sequence[str] = ()

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:  # type: ignore[override]
        self._given = list(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(args, namespace)
        if unknown_options(extras, list(self._option_string_actions)):
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> None:  # type: ignore[override]
        unknown = unknown_options(self._given, list(self._option_string_actions))
        if unknown and (message.startswith("the following arguments are required") or message.startswith("unrecognized arguments")):
            message = f"unrecognized argument{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"
        raise UsageError(f"{self.prog}: {message}")


def decode_utf8(data: bytes, where: str, error: type[PyQLError] = UsageError) -> str:
    """UTF-8 bytes as text (a leading byte-order mark dropped), or ``error`` naming the first bad byte.

    Example:
        >>> decode_utf8("café".encode(), "x")
        'café'
        >>> decode_utf8(b"ok\\nab\\xff", "standard input")
        Traceback (most recent call last):
        ...
        pyql.errors.UsageError: standard input is not UTF-8: byte 0xff at line 2, column 3 (invalid start byte); convert it (e.g. iconv -f latin1 -t utf-8)
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"{where} is not UTF-8: byte 0x{data[exc.start]:02x} at line {line}, column {column} ({exc.reason}); "
            "convert it (e.g. iconv -f latin1 -t utf-8)"
        ) from None


def read_bytes(path: str, what: str, error: type[PyQLError] = UsageError) -> bytes:
    """Read a file's bytes (``-`` is standard input) or raise ``error`` (UsageError) naming it.

    Example:
        >>> read_bytes("/nonexistent/a.jsonl", "input")
        Traceback (most recent call last):
        ...
        pyql.errors.UsageError: input file not found: /nonexistent/a.jsonl
    """
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream put in place of stdin (tests)
            return sys.stdin.read().encode("utf-8", "surrogateescape")
        try:
            return bytes(stream.read())
        except OSError as exc:
            raise error(f"cannot read {what} from standard input: {exc}") from None
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise error(f"cannot read {what} file {path}: {exc}") from None


def read_text(path: str, what: str, error: type[PyQLError] = UsageError) -> str:
    """Read a UTF-8 file (``-`` is standard input, read by the same rule) or raise ``error`` (UsageError) naming it.

    Bytes that are not UTF-8 are refused (:func:`decode_utf8`), from a file
    and from standard input alike: an action or a program is code, and a
    replaced byte could change what it means.

    Example:
        >>> read_text("/nonexistent/a.txt", "actions")
        Traceback (most recent call last):
        ...
        pyql.errors.UsageError: actions file not found: /nonexistent/a.txt
    """
    if path == "-" and getattr(sys.stdin, "buffer", None) is None:  # a text stream put in place of stdin (tests)
        return sys.stdin.read()
    where = f"standard input ({what})" if path == "-" else f"{what} file {path}"
    return decode_utf8(read_bytes(path, what, error), where, error)


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


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql demo``: the demo of the KB (Freebase-style ``demo``, ``wikidata-demo``), or its question list."""
    from pyql.demo import demo_of, list_questions, run_demo

    if args.list:
        list_questions(demo_of(args.kb)[0], out)
        return 0
    failed = run_demo(args.kb, out=out, show_sparql=not args.no_sparql, question=args.question)
    return 1 if failed else 0


def _cmd_compile(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql compile FILE``: a legacy (WebQSP) program, or a MarkQA program (``print(x.sparql)``), to SPARQL."""
    from pyql.interchange import convert
    from pyql.interchange.markqa_program import is_markqa_program

    text = read_text(args.file, "program")
    source = "markqa" if is_markqa_program(text) else "legacy"
    print(convert(text, source, "sparql", profile=args.profile), end="", file=out)
    return 0


def _cmd_actions(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.interchange import convert

    print(convert(read_text(args.file, "program"), "legacy", "actions"), end="", file=out)
    return 0


def _cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql convert``: one item (its output, or one line on stderr and exit 2), or JSON Lines (exit 0 once read)."""
    from pyql.interchange import convert, convert_jsonl

    if args.jsonl:
        for line in convert_jsonl(read_bytes(args.file, "input"), args.source, args.target, args.profile):
            print(line, file=out)
        return EXIT_OK
    print(convert(read_text(args.file, "input"), args.source, args.target, profile=args.profile), end="", file=out)
    return EXIT_OK


def _add_convert(sub: Subparsers) -> None:
    """The ``convert`` subcommand; its formats come from the registry of :mod:`pyql.interchange`."""
    from pyql.interchange.registry import formats, readers, writers
    from pyql.builder.profiles import PROFILES

    listing = "\n".join(
        f"  {f.name} ({', '.join(r for r, fn in (('read', f.read), ('write', f.write)) if fn)}): {f.summary}"
        for f in formats().values()
    )
    description = (
        (
            "Convert a query from one format to another. The whole input is one item: its conversion on stdout, "
            "or one line on stderr and exit status 2."
        ),
        (
            'With --jsonl every input line is an item {"id": ..., "input": "...", "entities": {...}} (entities '
            'optional) and gets exactly one output line, in order: {"id": ..., "output": "..."} or {"id": ..., '
            '"error": {"kind": ..., "message": ...}}; the exit status is 0 once the file was read.'
        ),
    )
    conv = sub.add_parser(
        "convert", help=f"convert a query between formats (read: {', '.join(readers())}; write: {', '.join(writers())})",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="\n\n".join(textwrap.fill(paragraph, 79) for paragraph in description),
        epilog=f"formats:\n{listing}",
    )
    conv.add_argument("--from", dest="source", required=True, choices=readers(), help="the input's format")
    conv.add_argument("--to", dest="target", required=True, choices=writers(), help="the output's format")
    conv.add_argument("file", nargs="?", default="-", help="the input file, or - for stdin (default)")
    conv.add_argument("--jsonl", action="store_true", help="JSON Lines in and out: one item per line")
    conv.add_argument("--profile", default="freebase", choices=list(PROFILES), help="the KB profile (default freebase)")
    conv.set_defaults(func=_cmd_convert)


def _cmd_kb_load(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.kb.store import load_store

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    progress = False if args.no_progress else None
    try:
        report = load_store(args.files, args.store, fresh=args.fresh, progress=progress, count=args.count,
                            optimize=not args.no_optimize, log=log)
    except KeyboardInterrupt:
        print(f"pyql kb load: interrupted; the store {args.store} is incomplete (oxigraph:{args.store} refuses to open it): "
              "run the same command again to resume", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps({"store": str(report.directory), "loaded": report.loaded, "skipped": report.skipped,
                          "resumed": report.resumed, "bytes": report.bytes, "seconds": round(report.seconds, 3),
                          "triples": report.triples}), file=out)
    else:
        print(f"pyql: {report.summary()}; open it with --kb oxigraph:{report.directory}", file=out)
    return 0


def _cmd_recording_info(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql recording info DIR``: what a recording or KB cache holds (``--json``: one object)."""
    from pyql.recording_store import RecordingStore

    with RecordingStore.open(args.path, "inspect") as store:
        info = store.describe()
    if args.json:
        print(json.dumps(info, ensure_ascii=False), file=out)
        return 0
    print(recording_report(info), file=out)
    return 0


def _cmd_recording_merge(args: argparse.Namespace, out: TextIO) -> int:
    """``pyql recording merge --out DIR REC ...``: the recordings of a run's shards in one recording (``--replay`` replays every shard)."""
    from pyql.recording_store import RecordingStore, store_file

    target = store_file(args.out, "record")
    for path in args.recordings:
        if store_file(path, "replay").resolve() == target.resolve():
            raise UsageError(f"pyql recording merge: --out {args.out} is one of the recordings merged; give another --out")
    with RecordingStore.open(args.out, "record") as merged:
        for path in args.recordings:
            with RecordingStore.open(path, "replay") as source:
                counts = source.counts()
                done = merged.merge(source)
            print(f"pyql recording merge: {source.path}: {plural(sum(counts.values()), 'entry', 'entries')}, "
                  f"{done['added']} added, {done['kept']} already there", file=out)
            if done["conflicts"]:
                print(f"pyql recording merge: {source.path}: {plural(done['conflicts'], 'request')} answered otherwise than in "
                      f"{merged.path} (its first answer kept): a replay of that part of the run may differ", file=sys.stderr)
        print(f"pyql recording merge: wrote {merged.path} ({plural(sum(merged.counts().values()), 'entry', 'entries')}); "
              f"replay it with --replay {args.out}", file=out)
    return 0


def recording_report(info: dict[str, Any]) -> str:
    """The text of ``pyql recording info``: the file, its id and fingerprint, entries, KB identities and models.

    Example:
        >>> print(recording_report({"file": "r.sqlite", "purpose": "recording", "id": "ab", "created": "2026",
        ...     "pyql": "0.1.0", "fingerprint": "f0", "entries": {"kb": 2, "llm": 1}, "kbs": {'{"endpoint":"http://x/sparql"}': 2},
        ...     "kb_specs": {}, "models": {"m": 1}, "models_asked": {"": "m"}, "scorers": {}}))
        r.sqlite: a pyql recording (id ab, created 2026 by pyql 0.1.0)
        fingerprint: f0
        entries: 2 KB queries, 1 LLM call, 0 relation scores
        KB {"endpoint":"http://x/sparql"}: 2 queries
        model m: 1 call
        model asked as (the server's default): m
    """
    counts = info.get("entries") or {}
    lines = [
        f"{info['file']}: a pyql {str(info.get('purpose')).replace('kb-cache', 'KB cache')} "
        f"(id {info.get('id')}, created {info.get('created')} by pyql {info.get('pyql')})",
        f"fingerprint: {info.get('fingerprint')}",
        f"entries: {plural(counts.get('kb', 0), 'KB query', 'KB queries')}, {plural(counts.get('llm', 0), 'LLM call')}, "
        f"{plural(counts.get('score', 0), 'relation score')}",
    ]
    lines += [f"KB {kb}: {plural(n, 'query', 'queries')}" for kb, n in (info.get("kbs") or {}).items()]
    lines += [f"  --kb {spec} was {identity}" for spec, identity in (info.get("kb_specs") or {}).items()]
    lines += [f"model {model}: {plural(n, 'call')}" for model, n in (info.get("models") or {}).items()]
    lines += [f"model asked as {asked or '(the server' + chr(39) + 's default)'}: {resolved}"
              for asked, resolved in (info.get("models_asked") or {}).items()]
    lines += [f"relation scorer {name}: {plural(n, 'score')}" for name, n in (info.get("scorers") or {}).items()]
    return "\n".join(lines)


def _cmd_kb_help(args: argparse.Namespace, out: TextIO) -> int:
    args.kb_parser.print_help(out)
    return 2


def action_sets() -> dict[str, Callable[..., ActionSet]]:
    """The action sets of the installed packages, by side (the ``pyql.action_sets`` entry points).

    Example:
        >>> {'sparql', 'sql'} <= set(action_sets())
        True
    """
    from importlib.metadata import entry_points

    return {ep.name: ep.load() for ep in sorted(entry_points(group=ACTION_SET_GROUP), key=lambda e: e.name)}


def _cmd_docs(args: argparse.Namespace, out: TextIO) -> int:
    from pyql.environment.actions import render_docs

    sets = action_sets()
    if args.side not in sets:
        raise UsageError(f"pyql docs: no action set {args.side!r}; installed: {', '.join(sets) or 'none'}")
    actions = sets[args.side](args.only.split(",") if args.only else None)
    print(render_docs(actions, args.format), end="", file=out)
    return 0


def _add_demo(sub: Subparsers) -> None:
    """``pyql demo``."""
    demo = sub.add_parser("demo", help="run step-by-step queries on a bundled demo KB (Freebase-style or Wikidata-shaped)")
    demo.add_argument("--kb", default="demo",
                      help="demo (Freebase-style cyclones, action lines; pyoxigraph in memory, the default), "
                           "wikidata-demo (Wikidata's statement model, MarkQA's programs), rdflib:demo, "
                           "rdflib:wikidata-demo, or a KB holding one of them")
    demo.add_argument("--list", action="store_true", help="list the demo's questions (id, kind, question) and stop")
    demo.add_argument("--question", metavar="ID", help="run this question of the demo (q02, w04; see --list)")
    demo.add_argument("--no-sparql", action="store_true", help="do not print the SPARQL of each step")
    demo.set_defaults(func=_cmd_demo)


def _add_kb(sub: Subparsers) -> None:
    """``pyql kb`` and ``pyql kb load``."""
    kb = sub.add_parser("kb", help="manage KBs: load RDF files into an on-disk Oxigraph store")
    kb.set_defaults(func=_cmd_kb_help, kb_parser=kb)
    kb_sub = kb.add_subparsers(dest="kb_command")
    load = kb_sub.add_parser(
        "load", help="bulk-load RDF files into an on-disk Oxigraph store (open it with --kb oxigraph:DIR)",
        description="Bulk-load Turtle/N-Triples files (optionally .gz) into an on-disk Oxigraph store. "
        "Running it again resumes an interrupted load: files already loaded are skipped.",
    )
    load.add_argument("files", nargs="+", metavar="FILE", help="RDF files (.nt, .ttl, .nq, .trig, .rdf; optionally .gz)")
    load.add_argument("--store", required=True, metavar="DIR", help="the store directory (created if missing)")
    load.add_argument("--fresh", action="store_true", help="empty the store first instead of resuming or adding")
    load.add_argument("--count", action="store_true", help="count the store's triples at the end (a full scan)")
    load.add_argument("--no-optimize", action="store_true", help="skip the compaction at the end")
    load.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    load.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    load.set_defaults(func=_cmd_kb_load)


def add_commands(sub: Subparsers) -> None:
    """Add the core package's subcommands (demo, compile, actions, convert, docs, kb) to the ``pyql`` parser.

    Example:
        >>> p = argparse.ArgumentParser(prog="pyql")
        >>> add_commands(p.add_subparsers(dest="command"))
        >>> p.parse_args(["docs", "--side", "sql"]).format
        'markdown'
    """
    from importlib.metadata import entry_points

    from pyql.environment.actions import DOC_FORMATS
    from pyql.builder.profiles import PROFILES

    _add_demo(sub)

    comp = sub.add_parser("compile", help="compile a legacy PyQL program or a MarkQA program to SPARQL")
    comp.add_argument("file", help="the program file, or - for stdin")
    comp.add_argument("--profile", default="freebase", choices=list(PROFILES))
    comp.set_defaults(func=_cmd_compile)

    act = sub.add_parser("actions", help="convert a legacy PyQL program to action lines")
    act.add_argument("file", help="the program file, or - for stdin")
    act.set_defaults(func=_cmd_actions)

    _add_convert(sub)

    docs = sub.add_parser("docs", help="print the action documentation an LLM sees")
    docs.add_argument("--format", default="markdown", choices=list(DOC_FORMATS))
    sides = sorted(ep.name for ep in entry_points(group=ACTION_SET_GROUP))
    docs.add_argument("--side", default="sparql", choices=sides, help="whose actions (default sparql)")
    docs.add_argument("--only", help="comma-separated action names to document")
    docs.set_defaults(func=_cmd_docs)

    _add_kb(sub)

    rec = sub.add_parser("recording", help="look at a recording (--record) or a KB cache (--kb-cache), or merge recordings")
    rec.set_defaults(func=_cmd_kb_help, kb_parser=rec)
    rec_sub = rec.add_subparsers(dest="recording_command")
    info = rec_sub.add_parser("info", help="what a recording or KB cache holds: entries, KB identities, models, fingerprint")
    info.add_argument("path", metavar="DIR", help="the directory given to --record/--kb-cache, or the .sqlite file")
    info.add_argument("--json", action="store_true", help="print one JSON object")
    info.set_defaults(func=_cmd_recording_info)
    merge = rec_sub.add_parser("merge", help="merge recordings (the --record DIRs of a run's shards) into one, to --replay them all")
    merge.add_argument("recordings", nargs="+", metavar="DIR", help="the recordings (directories given to --record, or .sqlite files)")
    merge.add_argument("--out", required=True, metavar="DIR",
                       help="the merged recording (created, or added to); a request two recordings answered otherwise keeps "
                            "the first answer, and is reported")
    merge.set_defaults(func=_cmd_recording_merge)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pyql``: the core commands, then those of every ``pyql.commands`` entry point.

    Example:
        >>> build_parser().parse_args(["compile", "-"]).profile
        'freebase'
    """
    from importlib.metadata import entry_points

    parser = _Parser(prog="pyql", description="Build SPARQL and SQL queries one executable step at a time.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    add_commands(sub)
    for ep in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        ep.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the ``pyql`` command; returns the exit status.

    Called with neither ``argv`` nor ``out`` (the ``pyql`` command, ``python -m
    pyql.cli``) it is the process's entry point and handles Ctrl-C as
    :mod:`pyql.interrupts` says, from before any command is imported: an
    interrupt at any moment (an import, a KB load, a run) prints one line
    and ends the process with status 130 at once, without the interpreter's
    tear-down; a second Ctrl-C ends it even during the command's clean-up.
    Called in process with arguments, it only returns the status.

    Example:
        >>> main(["compile", "/nonexistent.pyql"])  # prints the reason on stderr
        2
    """
    process = argv is None and out is None
    if process:
        interrupts.start()  # already so when this module is the program (interrupts.guard_start above)
    try:
        try:
            status = _run(argv, out or sys.stdout, process)
        finally:
            if process:
                interrupts.finished()  # from here on a SIGINT ends the process at once
    except KeyboardInterrupt:  # it came while another outcome was being said
        print("pyql: interrupted", file=sys.stderr)
        status = EXIT_INTERRUPTED
    if process and status == EXIT_INTERRUPTED:
        interrupts.exit_now(status)
    return status


def _run(argv: Sequence[str] | None, out: TextIO, process: bool) -> int:
    """The command ``argv`` names, run; its exit status (errors and Ctrl-C said in one line)."""
    try:
        parser = build_parser()  # loads the commands of every package: Ctrl-C here is handled too
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(out)
            return EXIT_USAGE
        if process:
            interrupts.running()  # the command cleans up on Ctrl-C (KeyboardInterrupt) and says one line
        return int(args.func(args, out) or 0)
    except PyQLError as exc:  # UsageError and every other pyql error: one line (a long one clipped), exit status 2
        message = clip(" ".join(redact_credentials(str(exc)).split()), MESSAGE_LIMIT)  # never a URL's password
        print(message if message.startswith("pyql") else f"pyql: {message}", file=out if out is not sys.stdout else sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except KeyboardInterrupt:  # Ctrl-C where no command handles it (loading a KB, in process: start-up): no traceback
        print("pyql: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
