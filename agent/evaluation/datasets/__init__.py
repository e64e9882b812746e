"""Evaluation data sets: one item format for every source, detected from the file's content.

Every loader yields items (plain dicts)::

    {"id": str, "question": str, "entities": {name: id}, "answers": [gold ...],
     "actions": [gold action lines] or None, "table": table JSON or None,
     "source": format name, "kind": question kind or None}

plus, for formats with more ``--by`` keys than the kind, ``"groups": {key: name}``.

Each format is one module of this package that registers one entry in
:data:`agent.evaluation.datasets.registry.registry` with
:func:`~agent.evaluation.datasets.registry.dataset_format`: its name, its
detection (a predicate on the first record, or on the first line of a
text file, tried by priority), its loader, where its gold answers come
from, and its metric hooks and smoke fixtures. :data:`FORMATS`, the
"known formats" message, :func:`detect_format` and :func:`load_dataset`
read the registry. The formats, in the order they are listed:

``pyql`` (:mod:`.pyql_jsonl`)
    our JSON Lines (``pyql/data/demo_questions.jsonl``): ``question``,
    ``entities``, ``answers``, optional ``id``, ``actions``, ``kind``, ``table``.
``webqsp`` (:mod:`.webqsp`)
    WebQSP processed JSON (``WebQSP_test_processed.json``).
``webqsp-raw`` (:mod:`.webqsp_raw`)
    the original WebQSP JSON ``{"Questions": [...]}`` (first parse).
``dbbench`` (:mod:`.dbbench`)
    AgentBench dbbench table items (``wikisql_dbbench/dev.jsonl``); INSERT/UPDATE items scored by the table's state.
``grailqa``, ``graphq`` (:mod:`.grailqa`, :mod:`.graphq`)
    GrailQA JSON, and GraphQ in the same layout without ``level``.
``cwq`` (:mod:`.cwq`)
    ComplexWebQuestions JSON (answers with aliases).
``rog`` (:mod:`.rog`)
    RoG's records, each with its own subgraph (``graph``), for ``--kb subgraphs:FILE``.
``wikisql`` (:mod:`.wikisql`)
    WikiSQL questions with their tables beside them; gold by executing the logical form.
``metaqa`` (:mod:`.metaqa`)
    MetaQA question text files, with their question types.
``markqa`` (:mod:`.markqa`)
    MarkQA JSON (``ID``, ``question``, ``comp_level``; ``sparql``, ``PyQL``,
    ``answer`` in train/dev), scored by MarkQA's numeric answer rule.
``wtq`` (:mod:`.wtq`)
    WikiTableQuestions TSV with the tables of ``csv/``; WTQ's own denotation rules.
``agentbench-kg`` (:mod:`.agentbench_kg`)
    AgentBench's knowledge-graph JSON: entities by name, AgentBench's gold actions.

Entity-linking files are read by :func:`load_linking` (:mod:`.linking`),
gold chains of SPARQL queries built by :func:`sparql_actions` (:mod:`.chains`).

Example:
    >>> from importlib import resources
    >>> path = resources.files("pyql") / "data" / "demo_questions.jsonl"
    >>> items = load_dataset(path)
    >>> items.format, len(items), items[0]["id"], items[0]["entities"]
    ('pyql', 37, 'q01', {'Tropical Storm Rachel': 'm.0crbvqz'})
"""

from __future__ import annotations

# isort: off
# The format modules register their formats when imported, in this order: the order they are
# listed in (FORMATS, the "known formats" message, the smoke runs). A new format is one more line.
from agent.evaluation.datasets import pyql_jsonl, webqsp, webqsp_raw, dbbench, grailqa, graphq  # noqa: F401
from agent.evaluation.datasets import cwq, rog, wikisql, metaqa, markqa, wtq, agentbench_kg  # noqa: F401
# isort: on

from agent.errors import DatasetError
from agent.evaluation.datasets.chains import sparql_actions
from agent.evaluation.datasets.grailqa import graph_query_actions, graph_query_entities
from agent.evaluation.datasets.linking import load_linking
from agent.evaluation.datasets.loading import Dataset, iter_items, load_dataset
from agent.evaluation.datasets.metaqa import metaqa_actions, metaqa_relation
from agent.evaluation.datasets.registry import (
    DatasetFormat,
    dataset_format,
    detect_format,
    formats,
    get_format,
)
from agent.evaluation.datasets.wtq import read_wtq_table

__all__ = [
    "FORMATS",
    "Dataset",
    "DatasetError",
    "DatasetFormat",
    "dataset_format",
    "detect_format",
    "formats",
    "get_format",
    "graph_query_actions",
    "graph_query_entities",
    "iter_items",
    "load_dataset",
    "load_linking",
    "metaqa_actions",
    "metaqa_relation",
    "read_wtq_table",
    "sparql_actions",
]

#: The formats :func:`detect_format` and :func:`load_dataset` recognize (the registry's names).
FORMATS: tuple[str, ...] = tuple(f.name for f in formats())
