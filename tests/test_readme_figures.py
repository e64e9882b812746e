"""Every figure the README states is computed here or read from where it is measured.

* the ERASER rule counts of "Self-correction (ERASER)" are counted in the rule
  registry (``correction/registry.py``);
* the local model's figures of "LLM agents" quote ``docs/results.md``: each is
  checked against its row of the tables there (and the quotes of the demo
  figures in ``docs/llm.md`` and ``docs/agent.md`` too), so a new measurement written into ``docs/results.md``
  fails here until the README says it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import correction  # noqa: F401  (registers the rules)
from correction.registry import registry

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results.md"
LLM_DOC = ROOT / "docs" / "llm.md"
AGENT_DOC = ROOT / "docs" / "agent.md"


def flat(path: Path) -> str:
    """A document's text with its line breaks as spaces (a sentence may be wrapped anywhere)."""
    return re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))


def claim(text: str, pattern: str, where: str) -> re.Match[str]:
    """The one match of a sentence's pattern, or a failure saying which sentence is missing."""
    found = list(re.finditer(pattern, text))
    assert len(found) == 1, f"{where}: expected one sentence matching {pattern!r}, found {len(found)}"
    return found[0]


def results_rows(section: str) -> list[list[str]]:
    """The rows of the tables under a heading of docs/results.md, as lists of cells."""
    text = RESULTS.read_text(encoding="utf-8")
    start = text.index(f"## {section}\n")
    end = text.find("\n## ", start + 1)
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text[start : end if end != -1 else None].splitlines()
        if line.startswith("| ") and not line.startswith("| ---")
    ]


def row(section: str, configuration: str, questions: str = "") -> list[str]:
    """The one row of a section whose first cell is ``configuration`` (and whose second names ``questions``)."""
    found = [r for r in results_rows(section) if r[0] == configuration and questions in r[1]]
    assert len(found) == 1, f"docs/results.md, {section}: {len(found)} rows {configuration!r} of {questions!r}"
    return found[0]


def demo_exact(configuration: str) -> tuple[int, int]:
    """(right, asked) of a configuration in docs/results.md's "The agent on the demo KB"."""
    cells = row("The agent on the demo KB", configuration)
    m = re.match(r"\**(\d+)/(\d+)\**", cells[1])
    assert m, f"docs/results.md, demo row {configuration!r}: no right/asked figure in {cells[1]!r}"
    return int(m.group(1)), int(m.group(2))


def heldout_exact(configuration: str, questions: str = "") -> tuple[str, str]:
    """(questions, exact percentage) of a row of docs/results.md's "Held-out: WebQSP test questions"."""
    cells = row("Held-out: WebQSP test questions", configuration, questions)
    count = re.search(r"[\d,]+", cells[1])
    percent = re.search(r"\(([\d.]+) %\)", cells[2])
    assert count and percent, f"docs/results.md, held-out row {configuration!r}: {cells[:3]}"
    return count.group(0), percent.group(1)


def test_readme_rule_counts_are_the_registry_s() -> None:
    rules = list(registry)
    kb = sum(1 for r in rules if "sparql" in r.sides)
    tables = sum(1 for r in rules if "sql" in r.sides)
    both = sum(1 for r in rules if {"sparql", "sql"} <= r.sides)
    m = claim(
        flat(README),
        r"holds (\d+) independent rules \((\d+) apply to knowledge bases, (\d+) to tables, (\d+) of them to both\)",
        "README.md, Self-correction (ERASER)",
    )
    assert tuple(int(g) for g in m.groups()) == (len(rules), kb, tables, both)


# (README sentence with its figures as groups, the docs/results.md row each group quotes)
DEMO_CLAIMS = [
    (r"the default configuration with this model \(the first relation by its PMI, no previews\) answers (\d+) of (\d+)",
     "choose mode, bundled model, first relation by its PMI, no previews (the default of `pyql ask`/`eval` with this model)"),
    (r"with the ranked list and its previews it answers (\d+) of (\d+)",
     "choose mode, bundled model, ranked list with previews"),
    (r"in text mode the model answers (\d+) of (\d+)", "text mode (ERASER advice and escalation)"),
]


@pytest.mark.parametrize(("pattern", "row"), DEMO_CLAIMS, ids=["default", "ranked-previews", "text"])
def test_readme_demo_figures_are_docs_results(pattern: str, row: str) -> None:
    m = claim(flat(README), pattern, "README.md, A local model with no key")
    assert (int(m.group(1)), int(m.group(2))) == demo_exact(row)


def test_readme_heldout_figures_are_docs_results() -> None:
    m = claim(
        flat(README),
        r"On ([\d,]+) held-out WebQSP questions the model's order answers ([\d.]+) % exactly against ([\d.]+) % for the word-overlap one",
        "README.md, A local model with no key",
    )
    pmi = heldout_exact("stub, first relation by the model's PMI (2.9 scoring requests / q)")
    overlap = heldout_exact("stub, ranked list", questions=pmi[0])
    assert (m.group(1), m.group(2)) == pmi
    assert m.group(3) == overlap[1]


def test_llm_doc_demo_figures_are_docs_results() -> None:
    m = claim(
        flat(LLM_DOC),
        r"The choose mode still answers (\d+) of the (\d+) demo questions with it in its default configuration and (\d+) with the ranked list and its previews",
        "docs/llm.md",
    )
    default = demo_exact(DEMO_CLAIMS[0][1])
    ranked = demo_exact(DEMO_CLAIMS[1][1])
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (default[0], default[1], ranked[0])


def test_agent_doc_demo_figures_are_docs_results() -> None:
    text = flat(AGENT_DOC)
    default = claim(text, r"it answers by far the most: (\d+) of (\d+) demo questions exactly", "docs/agent.md")
    alone = claim(text, r"developed on these same 37 questions: (\d+) of (\d+) with it alone", "docs/agent.md")
    assert (int(default.group(1)), int(default.group(2))) == demo_exact(DEMO_CLAIMS[0][1])
    assert (int(alone.group(1)), int(alone.group(2))) == demo_exact("choose mode, stub (ranked list)")
