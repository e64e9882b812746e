"""``pyql demo``: step-by-step queries on the bundled demo KB.

Each episode is a question, its linked entities and the actions that
answer it. Every action runs in a :class:`~pyql.sparql_environment.SparqlEnvironment`
and the demo prints the action, the SPARQL of the query after it, and the
observation: the main job of pyql on its embedded default (pyoxigraph).

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> run_demo(out=out, episodes=EPISODES[:1], show_sparql=False)
    >>> "Tropical Storm Dolly" in out.getvalue()
    True
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from pyql.echo import plural
from pyql.kb import KB
from pyql.sparql_environment import SparqlEnvironment

__all__ = ["Episode", "EPISODES", "run_demo"]


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


def run_demo(
    kb_spec: str = "demo",
    out: TextIO | None = None,
    episodes: tuple[Episode, ...] = EPISODES,
    show_sparql: bool = True,
) -> None:
    """Run the scripted episodes, printing each step's action, SPARQL and observation.

    Args:
        kb_spec: where the demo KB lives (``demo`` = pyoxigraph in memory; ``rdflib:demo`` works too).
        out: where to print (stdout by default).
        episodes: which episodes to run.
        show_sparql: print the SPARQL of the query after each construct step.
    """
    out = out or sys.stdout
    kb = KB.open(kb_spec)
    for number, episode in enumerate(episodes, 1):
        env = SparqlEnvironment(kb, question=episode.question, entities=episode.entities)
        print(f"=== Question {number}: {episode.question}", file=out)
        print(f"    Entities: {episode.entities}", file=out)
        for action in episode.actions:
            record = env.step(action)
            print(f"\nAction {record.index}: {action}", file=out)
            if show_sparql and record.ok and record.query_after is not None:
                body = record.query_after.sparql().split("\n")
                body = [line for line in body if not line.startswith("PREFIX")]
                print("SPARQL:\n    " + "\n    ".join(line for line in body if line), file=out)
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
