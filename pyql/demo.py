"""``pyql demo``: step-by-step queries on the bundled demo KB.

Each episode is a question, its linked entities and the actions that
answer it. Every action runs in a :class:`~pyql.environment.sparql.SparqlEnvironment`
and the demo prints the action, the SPARQL of the query after it, and the
observation: the main job of pyql on its embedded default (pyoxigraph).

There are two demos, one per bundled KB (:data:`pyql.kb.opening.BUNDLED`):
``demo`` (Freebase-style tropical cyclones, QueryAgent's action lines) and
``wikidata-demo`` (Wikidata's statement model, MarkQA's programs: each
program line is one step, shown with the SPARQL after it and its
observation, whose quantities carry units and time points). Which one runs
follows the KB: ``--kb wikidata-demo`` (or ``rdflib:wikidata-demo``, or any
KB whose IRIs are Wikidata's) runs the Wikidata one. ``list_questions``
lists a demo's questions (``pyql demo --list``), and ``question=`` runs one
of them by id (``pyql demo --kb wikidata-demo --question w04``).

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> run_demo(out=out, episodes=EPISODES[:1], show_sparql=False)
    0
    >>> "Tropical Storm Dolly" in out.getvalue()
    True
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any, TextIO

import pyql.kb.probes as probes
from pyql.echo import plural
from pyql.errors import EngineError, PyQLError, UsageError
from pyql.interchange.markqa import program_to_query
from pyql.kb import KB
from pyql.interchange.markqa_program import Call, parse_markqa_program, result_object
from pyql.kb.observation import ResultSet
from pyql.builder.profiles import get_profile
from pyql.builder.query import Query
from pyql.environment.sparql import SparqlEnvironment

__all__ = ["Episode", "EPISODES", "WIKIDATA_EPISODES", "DEMO_QUESTIONS", "demo_of", "demo_questions", "list_command", "list_questions", "run_demo"]

#: Each demo's question file in ``pyql/data`` (``pyql/data/README.md``, ``pyql/data/wikidata_demo.md``).
DEMO_QUESTIONS = {"freebase": "demo_questions.jsonl", "wikidata": "wikidata_questions.jsonl"}
#: The Wikidata questions ``pyql demo --kb wikidata-demo`` runs: a growth rate, units, a rank.
WIKIDATA_EPISODES: tuple[str, ...] = ("w04", "w13", "w08")


@dataclass(frozen=True)
class Episode:
    """A scripted question: the text, its entity linking and the actions."""

    question: str
    entities: dict[str, str]
    actions: tuple[str, ...]


EPISODES: tuple[Episode, ...] = (
    Episode(
        "which was the most recently formed cyclone that is in the same category as tropical storm rachel?",
        {"Tropical Storm Rachel": "m.0crbvqz"},
        (
            "get_relation(m.0crbvqz)",
            "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
            "get_relation(?category)",
            "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
            "add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)",
            "add_max(?time)",
            "set_answer(?cyclone)",
            "execute()",
        ),
    ),
    Episode(
        "who was the governor of louisiana in 2005?",
        {"Louisiana": "m.04ly1", "Governor": "m.0fkvn"},
        (
            "get_relation(m.04ly1)",
            "add_fact(m.04ly1, government.governmental_jurisdiction.governing_officials, ?position)",
            "add_fact(?position, government.government_position_held.basic_title, m.0fkvn)",
            "get_relation(?position)",
            "add_time_constrain(?position, government.government_position_held.from, "
            "government.government_position_held.to, 2005-12-31, 2005-01-01)",
            "add_fact(?position, government.government_position_held.office_holder, ?governor)",
            "set_answer(?governor)",
            "execute()",
        ),
    ),
    Episode(
        "how many cyclones of the 2005 atlantic hurricane season had winds above 200 km/h?",
        {"2005 Atlantic hurricane season": "m.03d1xj"},
        (
            "get_relation(m.03d1xj)",
            "add_fact(m.03d1xj, meteorology.tropical_cyclone_season.tropical_cyclones, ?cyclone)",
            "add_fact(?cyclone, meteorology.tropical_cyclone.highest_winds, ?winds)",
            "add_filter(?winds, >, 200)",
            "add_count(?cyclone, ?number)",
            "execute()",
        ),
    ),
)


def demo_of(kb_spec: str) -> tuple[str, KB]:
    """Which demo a KB spec is for (``freebase`` or ``wikidata``) and the KB, opened with that profile.

    A bundled KB's name says it (``demo``, ``wikidata-demo``, also after
    ``rdflib:`` or ``oxigraph:``); any other KB (the demo loaded into an
    endpoint) is asked which profile its IRIs point to (one bounded query).

    Example:
        >>> which, kb = demo_of("rdflib:wikidata-demo")
        >>> which, kb.name, kb.profile.name
        ('wikidata', 'rdflib', 'wikidata')
    """
    name = kb_spec.split(":", 1)[1] if kb_spec.startswith(("rdflib:", "oxigraph:")) else kb_spec
    if name in ("demo", "wikidata-demo"):
        which = "wikidata" if name == "wikidata-demo" else "freebase"
        return which, KB.open(kb_spec, which)
    kb = KB.open(kb_spec, "generic")
    try:
        found = probes.read_profile_sample(kb.select(probes.profile_sample_query()))
    except EngineError:
        found = None
    which = "wikidata" if found == "wikidata" else "freebase"
    kb.profile = get_profile(which)
    return which, kb


def demo_questions(which: str) -> list[dict[str, Any]]:
    """The questions of a demo (``freebase`` or ``wikidata``), as its JSON lines hold them.

    Example:
        >>> [q["id"] for q in demo_questions("wikidata")][:2], len(demo_questions("freebase")) > 30
        (['w01', 'w02'], True)
    """
    if which not in DEMO_QUESTIONS:
        raise UsageError(f"no demo named {which!r}; the demos are {', '.join(DEMO_QUESTIONS)}")
    text = (resources.files("pyql") / "data" / DEMO_QUESTIONS[which]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def list_questions(which: str, out: TextIO | None = None) -> None:
    """Print a demo's questions: id, kind and text, one a line.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> list_questions("wikidata", out)
        >>> out.getvalue().splitlines()[0]
        'w01  difference         How many more people lived in Hamburg than in Munich in 2021?'
    """
    out = out or sys.stdout
    for question in demo_questions(which):
        print(f"{question['id']:<4} {question.get('kind', ''):<18} {question['question']}", file=out)


def list_command(kb_spec: str = "demo") -> str:
    """The command that lists the questions of the demo ``kb_spec`` runs (the same ``--kb``; none for the default).

    Example:
        >>> list_command("demo"), list_command("wikidata-demo")
        ('pyql demo --list', 'pyql demo --kb wikidata-demo --list')
        >>> list_command("http://127.0.0.1:8890/sparql?x=1&y=2")
        "pyql demo --kb 'http://127.0.0.1:8890/sparql?x=1&y=2' --list"
    """
    return "pyql demo --list" if kb_spec == "demo" else f"pyql demo --kb {shlex.quote(kb_spec)} --list"


def _find(which: str, wanted: str, kb_spec: str = "demo") -> dict[str, Any]:
    """The demo question with id ``wanted``, or a UsageError naming the ids there are and the command listing them."""
    questions = demo_questions(which)
    for question in questions:
        if question["id"] == wanted:
            return question
    ids = [q["id"] for q in questions]
    raise UsageError(
        f"the {which} demo has no question {wanted!r}; its questions are {ids[0]} ... {ids[-1]} ({list_command(kb_spec)})"
    )


def run_demo(
    kb_spec: str = "demo",
    out: TextIO | None = None,
    episodes: tuple[Episode, ...] = EPISODES,
    show_sparql: bool = True,
    question: str | None = None,
) -> int:
    """Run a demo on ``kb_spec``, printing each step's action, SPARQL and observation.

    Args:
        kb_spec: the demo KB (``demo`` = pyoxigraph in memory; ``rdflib:demo``,
            ``wikidata-demo``, ``rdflib:wikidata-demo`` work too; see :func:`demo_of`).
        out: where to print (stdout by default).
        episodes: which Freebase episodes to run (the Wikidata demo runs :data:`WIKIDATA_EPISODES`).
        show_sparql: print the SPARQL of the query after each construct step.
        question: run only this question of the demo's question file (``q02``, ``w04``).

    Returns:
        The number of questions whose program could not be run (0: all ran).

    Raises:
        UsageError: an unknown question id.
    """
    out = out or sys.stdout
    which, kb = demo_of(kb_spec)
    if which == "wikidata":
        chosen = [_find(which, question, kb_spec)] if question else [_find(which, i) for i in WIKIDATA_EPISODES]
        return sum(_run_program(kb, q, number, out, show_sparql) for number, q in enumerate(chosen, 1))
    if question:
        found = _find(which, question, kb_spec)
        episodes = (Episode(found["question"], found["entities"], tuple(found["actions"])),)
    for number, episode in enumerate(episodes, 1):
        _run_episode(kb, episode, number, out, show_sparql)
    return 0


def _sparql_lines(query: Query) -> str:
    """The SPARQL of a query without its PREFIX lines, indented, as the demo prints it."""
    body = [line for line in query.sparql().split("\n") if line and not line.startswith("PREFIX")]
    return "SPARQL:\n    " + "\n    ".join(body)


def _run_episode(kb: KB, episode: Episode, number: int, out: TextIO, show_sparql: bool) -> None:
    """One Freebase episode: its action lines in a step environment."""
    env = SparqlEnvironment(kb, question=episode.question, entities=episode.entities)
    print(f"=== Question {number}: {episode.question}", file=out)
    print(f"    Entities: {episode.entities}", file=out)
    for action in episode.actions:
        record = env.step(action)
        print(f"\nAction {record.index}: {action}", file=out)
        if show_sparql and record.ok and record.query_after is not None:
            print(_sparql_lines(record.query_after), file=out)
        status = "" if record.ok else f"[{record.error}] "
        print(f"Observation {record.index}: {status}{record.observation}", file=out)
    answers = ", ".join(
        f"{a['value']}" + (f" ({a['label']})" if a.get("label") else "") for a in env.final_json()["answers"]
    )
    counters = env.counters
    print(
        f"\nAnswer: {answers}   [{plural(counters['steps'], 'step')}, {plural(counters['kb_queries'], 'KB query', 'KB queries')}, "
        f"{counters['kb_seconds']:.3f} s in the KB]\n",
        file=out,
    )


def _program_lines(program: str) -> list[str]:
    """The source line of each call on the program's query (printed, or its last object's), in order: one step each."""
    statements = parse_markqa_program(program)
    printed = result_object(statements)
    lines = program.splitlines()
    return [lines[s.line - 1].strip() for s in statements if isinstance(s, Call) and s.receiver == printed]


def _run_program(kb: KB, question: dict[str, Any], number: int, out: TextIO, show_sparql: bool) -> int:
    """One Wikidata question: its MarkQA program replayed step by step; 1 when it cannot be run."""
    print(f"=== Question {number} ({question['id']}, {question.get('kind', '')}): {question['question']}", file=out)
    print(f"    Entities: {question.get('entities', {})}", file=out)
    try:
        final = program_to_query(question["markqa"], kb.profile)
        sources = _program_lines(question["markqa"])
    except PyQLError as exc:
        print(f"\nThe program does not import: {exc}\n", file=out)
        return 1
    before = kb.stats.snapshot()
    for index, source in enumerate(sources, 1):
        query = Query(kb.profile, final.steps[:index])
        print(f"\nAction {index}: {source}", file=out)
        if show_sparql:
            print(_sparql_lines(query), file=out)
        try:
            observation = str(kb.observe(query))
        except PyQLError as exc:
            observation = f"[{type(exc).__name__}] {exc}"
        print(f"Observation {index}: {observation}", file=out)
    answer = _answer_text(kb.execute(final))
    after = kb.stats.snapshot()
    queries, seconds = int(after["queries"] - before["queries"]), after["seconds"] - before["seconds"]
    print(f"\nAnswer: {answer}   [{plural(len(sources), 'step')}, {plural(queries, 'KB query', 'KB queries')}, {seconds:.3f} s in the KB]", file=out)
    print(f"Expected: {_expected_text(question.get('answers', []))}\n", file=out)
    return 0


def _answer_text(result: ResultSet) -> str:
    """The answers of a final query: yes/no, values with labels, or one ``?var value`` group per row."""
    if result.boolean is not None:
        return "yes" if result.boolean else "no"
    if len(result.variables) == 1:
        return ", ".join(v.display() for v in result.answers()) or "none"
    rows = (", ".join(f"{v} {row[v.name].display() if row.get(v.name) else 'unbound'}" for v in result.variables) for row in result.rows)
    return "; ".join(rows) or "none"


def _expected_text(answers: list[Any]) -> str:
    """The expected answers as the question file holds them (a row: ``var value`` pairs)."""
    shown = [", ".join(f"{k} {v}" for k, v in a.items()) if isinstance(a, dict) else str(a) for a in answers]
    return "; ".join(shown) or "none"
