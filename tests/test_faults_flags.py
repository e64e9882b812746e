"""Numeric flags and the settings ``--resume`` compares (issue 35, items 9 and 10).

Item 9: ``--llm-timeout nan`` was accepted (every call "timed out within nan
s", the working server blamed, exit 3); ``--llm-timeout inf`` and
``--temperature nan`` ended in tracebacks. Every numeric flag of every
command is now read by a checked type (:func:`pyql.cli.whole`, ``number``, ``seconds``): finite
and in range, else a usage error, one line, exit 2, before any work. The
test walks the parser, so a numeric flag added later without a checked
type fails here.

Item 10: ``--context-tokens`` and ``--max-reply-chars`` change the
prompts and the replies, so a resumed run with other values is refused as
for any other setting.
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from pyql.cli import EXIT_OK, EXIT_USAGE, build_parser, main
from tests.fault_servers import FakeLLMServer, GoldResponder
from tests.test_faults_cli import demo_items, json_lines, one_line, pyql, stderr_of

#: Values no numeric flag takes.
HOSTILE = ("nan", "inf", "-inf", "1e400", "-1", "99999999999999999999", "1e308", "0x10", "")


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command of ``pyql`` with its parser, ``pyql llm serve`` included."""
    out = [(prefix, parser)] if prefix else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*prefix, name))
    return out


def _numeric_flags() -> list[tuple[tuple[str, ...], str]]:
    """Every flag of every command that is read by a type other than text (a number, by their nature)."""
    flags = []
    for command, parser in _commands(build_parser()):
        for action in parser._actions:
            if action.option_strings and action.type not in (None, str) and action.nargs in (None, "?"):
                flags.append((command, action.option_strings[0]))
    return flags


NUMERIC_FLAGS = _numeric_flags()


def test_the_walk_finds_the_numeric_flags_of_every_command() -> None:
    found = {(" ".join(command), flag) for command, flag in NUMERIC_FLAGS}
    for expected in [("eval", "--llm-timeout"), ("eval", "--temperature"), ("eval", "--concurrency"), ("ask", "--max-retries"),
                     ("run", "--kb-timeout"), ("run", "--count-cap"), ("llm serve", "--port"), ("llm serve", "--startup-timeout"),
                     ("eval", "--context-tokens"), ("eval", "--max-reply-chars"), ("ask", "--max-steps")]:
        assert expected in found, (expected, sorted(found))


@pytest.mark.parametrize(("command", "flag"), NUMERIC_FLAGS, ids=[" ".join(c) + " " + f for c, f in NUMERIC_FLAGS])
def test_every_numeric_flag_refuses_what_is_not_finite_and_in_range(command: tuple[str, ...], flag: str) -> None:
    for value in HOSTILE:
        err = io.StringIO()
        code = main([*command, f"{flag}={value}"], out=err)
        line = one_line(err.getvalue())
        assert code == EXIT_USAGE, (flag, value, line)
        assert f"argument {flag}" in line and "Traceback" not in line, line
        assert "must be" in line and "got" in line, line  # what is allowed, and what was given


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--llm-timeout", "nan"], "argument --llm-timeout: must be a positive number of seconds, at most 1000000, got 'nan'"),
        (["--llm-timeout", "inf"], "argument --llm-timeout: must be a positive number of seconds, at most 1000000, got 'inf'"),
        (["--temperature", "nan"], "argument --temperature: must be a finite number from 0 to 2, got 'nan'"),
        (["--kb-timeout", "1e300"], "argument --kb-timeout: must be a positive number of seconds, at most 1000000, got '1e300'"),
    ],
)
def test_the_issues_flags_are_usage_errors_before_any_request(tmp_path: Path, flags: list[str], said: str) -> None:
    """The issue's repro, through the real command: nothing is asked of the LLM, no run file is made."""
    out = tmp_path / "run.jsonl"
    with FakeLLMServer(GoldResponder(demo_items("q01"))) as llm:
        result = pyql("eval", "pyql/data/demo_questions.jsonl", "--kb", "demo", "--base-url", llm.url, "--model", "fake",
                      "--out", str(out), *flags)
        assert not llm.requests
    assert result.returncode == EXIT_USAGE
    assert one_line(stderr_of(result)) == f"pyql eval: {said}"
    assert not out.exists()


def test_good_values_are_kept_as_given() -> None:
    args = build_parser().parse_args(["eval", "d.jsonl", "--out", "o", "--llm-timeout", "0.5", "--temperature", "0.7",
                                      "--max-retries", "0", "--kb-timeout", "2.5", "--concurrency", "4"])
    assert (args.llm_timeout, args.temperature, args.max_retries, args.kb_timeout, args.concurrency) == (0.5, 0.7, 0, 2.5, 4)


def test_the_library_refuses_what_the_flags_refuse() -> None:
    from agent.errors import LLMConfigError
    from agent.llm.config import LLMConfig

    for bad in ({"timeout": float("nan")}, {"timeout": float("inf")}, {"temperature": float("nan")}, {"backoff_max": float("inf")}):
        with pytest.raises(LLMConfigError):
            LLMConfig(base_url="http://127.0.0.1:9/v1", **bad)


# ---------------------------------------------------------------------------
# Item 10: the settings --resume compares


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("first", "then", "said"),
    [
        (["--context-tokens", "4000"], ["--context-tokens", "3000"], "context_tokens: 4000 in the run file, 3000 now"),
        (["--max-reply-chars", "1000"], ["--max-reply-chars", "2000"], "max_reply_chars: 1000 in the run file, 2000 now"),
        ([], ["--max-reply-chars", "2000"], "max_reply_chars: 65536 in the run file, 2000 now"),
    ],
)
def test_resume_with_another_context_or_reply_cap_is_refused(tmp_path: Path, first: list[str], then: list[str], said: str) -> None:
    items = demo_items("q01", "q03")
    data, out = tmp_path / "data.jsonl", tmp_path / "run.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    with FakeLLMServer(GoldResponder(items)) as llm:
        common = [str(data), "--kb", "demo", "--out", str(out), "--base-url", llm.url, "--model", "fake"]
        done = pyql("eval", *common, "--limit", "1", *first)
        assert done.returncode == EXIT_OK, stderr_of(done)
        record = json_lines(out.read_bytes())[0]
        assert "context_tokens" in record["settings"] and "max_reply_chars" in record["settings"]
        posts = len(llm.posts)
        refused = pyql("eval", *common, "--resume", *then)
        assert len(llm.posts) == posts  # refused before any question
        same = pyql("eval", *common, "--resume", *first)
    assert refused.returncode == EXIT_USAGE
    line = one_line(stderr_of(refused))
    assert "--resume with other settings than the run file" in line and said in line, line
    assert same.returncode == EXIT_OK, stderr_of(same)
    assert sorted(r["id"] for r in json_lines(out.read_bytes())) == ["q01", "q03"]
