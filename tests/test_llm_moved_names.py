"""agent/llm/ split by job: the old path ``agent.llm.client`` still gives every name, and nothing here uses it.

``agent/llm/client.py`` once held the configuration, the replies, the
retries, the HTTP client, the scripted LLM and the action modes. Each now
has its own module; the names that moved still import from
``agent.llm.client`` (loaded on first use), for users' code only.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent.llm.client import MOVED_NAMES
from tests.test_architecture import GRAPH

ROOT = Path(__file__).resolve().parent.parent

#: ``agent.llm.client.__all__`` at commit 6ba77aa, before the split.
OLD_ALL = [
    "ACTION_MODES", "ContextOverflow", "DEFAULT_STOP", "LLM", "LLMConfig", "LLMConfigError", "LLMError", "LLMReply",
    "Message", "OpenAILLM", "Prompt", "ScriptedLLM", "ToolCall", "UsageMeter", "add_llm_arguments", "cap_reply",
    "complete_action", "config_from_args", "context_overflow", "is_loopback", "is_retryable", "messages_to_text",
    "reply_action", "reply_action_text", "retry_delay", "tool_call_action", "with_retries",
]
#: Public then too, though not in ``__all__`` (``agent.llm.local`` imported it).
OLD_PUBLIC = [*OLD_ALL, "NO_KEY"]

#: The modules of the split, each with the modules of agent/llm/ it may import.
LAYERS = {
    "agent.llm.replies": set(),
    "agent.llm.config": set(),
    "agent.llm.retries": {"agent.llm.config"},
    "agent.llm.client": {"agent.llm.config", "agent.llm.replies", "agent.llm.retries"},
    "agent.llm.scripted": {"agent.llm.config", "agent.llm.replies", "agent.llm.retries"},
    "agent.llm.decoding": {"agent.llm.config", "agent.llm.replies", "agent.llm.gbnf"},
}


@pytest.mark.parametrize("name", OLD_PUBLIC)
def test_every_old_name_still_imports_from_the_client(name: str) -> None:
    """``from agent.llm.client import NAME`` gives the very object its new module defines."""
    client = importlib.import_module("agent.llm.client")
    value = getattr(client, name)
    home = MOVED_NAMES.get(name, "agent.llm.client")
    assert value is getattr(importlib.import_module(home), name)
    assert name in vars(importlib.import_module(home)), f"{name} is not defined (or imported) in {home}"


def test_the_table_names_exactly_the_moved_names() -> None:
    assert sorted(MOVED_NAMES) == sorted(set(OLD_PUBLIC) - {"OpenAILLM"})
    for name, home in MOVED_NAMES.items():
        assert name in importlib.import_module(home).__all__ or name == "NO_KEY" and home == "agent.llm.config", name
    client = importlib.import_module("agent.llm.client")
    assert sorted(client.__all__) == sorted(OLD_ALL)
    assert set(OLD_PUBLIC) <= set(dir(client))


@pytest.mark.cli
def test_a_star_import_and_a_fresh_interpreter_still_get_them() -> None:
    """In a new process (nothing loaded before), the old imports work and load the new modules only when asked."""
    script = (
        "import sys\n"
        "import agent.llm.client as c\n"
        "print(sorted(m for m in ('agent.llm.scripted', 'agent.llm.decoding') if m in sys.modules))\n"
        "from agent.llm.client import ScriptedLLM, LLMConfig, complete_action\n"
        "ns = {}\n"
        "exec('from agent.llm.client import *', ns)\n"
        "print(ScriptedLLM.__module__, LLMConfig.__module__, complete_action.__module__, len(set(c.__all__) & set(ns)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", f"agent.llm.scripted agent.llm.config agent.llm.decoding {len(OLD_ALL)}"]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    client = importlib.import_module("agent.llm.client")
    with pytest.raises(AttributeError, match="has no attribute 'ScriptedLM'"):
        client.ScriptedLM  # noqa: B018
    with pytest.raises(ImportError):
        exec("from agent.llm.client import _repaired", {})


def test_the_split_modules_import_only_lower_ones() -> None:
    """replies and config at the bottom, retries above config, client/scripted/decoding above; client imports neither."""
    for module, allowed in LAYERS.items():
        inside = {m for m in GRAPH[module] if m.startswith("agent.llm.")}
        assert inside <= allowed, f"{module} imports {sorted(inside - allowed)}"


#: ``from agent.llm.client import a, b`` (one line or parenthesised) and ``agent.llm.client.NAME`` in any text.
_IMPORT = re.compile(r"from agent\.llm\.client import (\([^)]*\)|[^\n]*)")
_DOTTED = re.compile(r"agent\.llm\.client\.(\w+)")


def _names(imported: str) -> set[str]:
    imported = re.sub(r"#[^\n]*", "", imported).strip("()")
    return {n.split(" as ")[0].strip() for n in imported.replace("\n", ",").split(",") if n.strip()}


def test_nothing_in_the_repository_uses_the_old_path() -> None:
    """Code, tests, benchmarks, docs and docstrings import each name from its module, never through agent.llm.client."""
    files = [p for d in ("agent", "pyql", "pyql_sql", "correction", "grammars", "tests", "benchmarks")
             for p in (ROOT / d).rglob("*.py")]
    files += [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    skip = {ROOT / "agent" / "llm" / "client.py", Path(__file__).resolve()}
    users = []
    for file in files:
        if file in skip:
            continue
        text = file.read_text(encoding="utf-8")
        used = {n for m in _IMPORT.finditer(text) for n in _names(m.group(1))} | set(_DOTTED.findall(text))
        users += [f"{file.relative_to(ROOT)}: {name}" for name in sorted(used & set(MOVED_NAMES))]
    assert users == []


def test_the_check_finds_an_old_import() -> None:
    text = "x\nfrom agent.llm.client import (\n    OpenAILLM,\n    ScriptedLLM,  # the replay\n)\nsee agent.llm.client.with_retries"
    used = {n for m in _IMPORT.finditer(text) for n in _names(m.group(1))} | set(_DOTTED.findall(text))
    assert used & set(MOVED_NAMES) == {"ScriptedLLM", "with_retries"}
