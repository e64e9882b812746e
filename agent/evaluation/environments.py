"""Opening a step environment, on a KB or a table, for ``pyql run``, ``ask`` and ``eval``.

:func:`open_environment` is the one place that turns options (command-line
arguments, or the :class:`~agent.evaluation.runner.RunSettings` of an evaluation) and,
for an evaluation, a data set item into a fresh environment:

* a **table** when the item carries one (``item["table"]``) or the options
  name one (``--db FILE [--table NAME]`` or ``--table-json FILE``):
  a :class:`~pyql_sql.environment.TableEnvironment`, or, for an item marked
  ``writable`` (every dbbench item of ``pyql eval``) and a dbbench item given
  with ``--table-json``, a :class:`~pyql_sql.writable_environment.WritableTableEnvironment`
  (``insert_row``/``update_rows`` too);
* else a **knowledge base**: the KB object given (an evaluation shares one),
  or ``--kb`` opened with ``--profile`` (a per-question form, ``subgraphs:FILE``,
  is the item's own ``subgraphs:FILE#ID``; without an item its ``#ID`` is needed): a
  :class:`~pyql.environment.sparql.SparqlEnvironment`. Without ``--profile``
  the profile follows the KB (:func:`open_kb_for`): one bounded probe of its
  IRIs' namespaces (cached per KB) and the shape of the linked entities' ids.

The correction analyzer is fixed here, when the environment is built
(:func:`feedback_options`); nothing changes it afterwards.

Example:
    >>> import argparse
    >>> args = argparse.Namespace(kb="demo", profile="freebase", feedback="eraser",
    ...                           entities='{"Jamaica": "m.03_r3"}', question=None)
    >>> env = open_environment(args)
    >>> env.side, type(env.analyzer).__name__, env.memory.entities
    ('sparql', 'Eraser', {'Jamaica': 'm.03_r3'})
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from agent.methods import ranking
from correction import eraser_for
from pyql.environment.agentbench import AgentBenchEnvironment
from pyql.cli import UsageError, read_entities
from pyql.environment import Environment
from pyql.errors import EngineError
from pyql.kb import KB, kb_backends, probes
from pyql.builder.profiles import get_profile, infer_profile
from pyql.environment.sparql import SparqlEnvironment
from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS
from pyql_sql.environment import TableEnvironment
from pyql_sql.loaders import is_dbbench_item, load_sqlite_table, read_table_record, table_from_json
from pyql_sql.table import Table
from pyql_sql.writable_environment import WritableTableEnvironment

__all__ = ["feedback_options", "kb_options", "open_environment", "open_kb_for", "kb_profile", "candidate_ranker", "KB_HINT"]

#: What ``--kb`` accepts, for messages (every spec form of :mod:`pyql.kb.registry`).
KB_HINT = kb_backends.hint()


def kb_options(options: Any) -> dict[str, Any]:
    """The backend options of ``--kb-timeout``, ``--default-graph`` and ``--count-cap``.

    Read from ``kb_timeout``, ``default_graph`` and ``count_cap`` (absent
    ones count as not given). The first two apply to a SPARQL endpoint only
    (the embedded backends have no time-out and one graph; the registry
    entry of a spec names the options its backend takes,
    :attr:`pyql.kb.registry.KBBackend.options`); the time-out is kept as
    given, fractions of a second included. ``count_cap`` (distinct
    values an observation counts exactly, :attr:`pyql.kb.KB.count_cap`)
    applies to every KB.

    Raises:
        UsageError: an endpoint option is given for a KB that is not an endpoint.

    Example:
        >>> import argparse
        >>> kb_options(argparse.Namespace(kb="http://127.0.0.1:8890/sparql", kb_timeout=0.5, default_graph=None))
        {'timeout': 0.5}
        >>> kb_options(argparse.Namespace(kb="demo", kb_timeout=None, default_graph=None))
        {}
        >>> kb_options(argparse.Namespace(kb="demo", count_cap=5000))
        {'count_cap': 5000}
    """
    out: dict[str, Any] = {}
    timeout = getattr(options, "kb_timeout", None)
    graph = getattr(options, "default_graph", None)
    if timeout is not None:
        out["timeout"] = timeout
    if graph:
        out["default_graph"] = graph
    spec = getattr(options, "kb", None)
    backend = kb_backends.backend_for(spec)
    if out and not (backend is not None and set(out) <= set(backend.options)):
        flags = " and ".join(f for f, v in (("--kb-timeout", timeout), ("--default-graph", graph)) if v is not None)
        takers = " or ".join(e.form for e in kb_backends.spec_forms() if set(out) <= set(e.options))
        raise UsageError(f"{flags} apply to a SPARQL endpoint (--kb {takers}), not to --kb {spec}")
    cap = getattr(options, "count_cap", None)
    if cap is not None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise UsageError(f"--count-cap must be a whole number ≥ 1, got {cap!r}")
        out["count_cap"] = cap
    return out


#: The profile each KB's probe pointed to, by spec and options (None: the KB could not be asked).
_PROBED: dict[tuple[str, tuple[tuple[str, str], ...]], str | None] = {}


def kb_profile(kb: Any, key: Any = None) -> str | None:
    """The profile a KB's IRIs point to (one bounded probe, :func:`pyql.kb.probes.profile_sample_query`).

    Cached under ``key`` (a KB's spec and options) when one is given. None
    when the KB could not be asked (an endpoint down: its first step says so).

    Example:
        >>> kb_profile(KB.open("demo", "generic"))
        'freebase'
    """
    if key is not None and key in _PROBED:
        return _PROBED[key]
    try:
        found: str | None = probes.read_profile_sample(kb.select(probes.profile_sample_query()))
    except EngineError:
        found = None
    if key is not None:
        _PROBED[key] = found
    return found


def open_kb_for(spec: str, profile: str | None, entity_ids: Iterable[str] = (), **options: Any) -> KB:
    """Open ``--kb`` with ``--profile``, or, when none is given, with the profile the KB and its entities tell.

    Without a profile the KB is opened with the generic one and asked which
    profile its IRIs point to (:func:`kb_profile`, once per KB); the ids of
    the linked entities (``Q…`` Wikidata's, ``m.…`` Freebase's) count too
    (:func:`pyql.builder.profiles.infer_profile`). A per-question form
    (``subgraphs:FILE``) is not probed: the linked ids tell, else ``freebase``.

    Raises:
        UsageError: the KB and the linked entities point to different profiles.
        pyql.errors.KBError: the KB does not open.

    Example:
        >>> open_kb_for("demo", None).profile.name, open_kb_for("demo", "generic").profile.name
        ('freebase', 'generic')
    """
    if profile:
        return KB.open(spec, profile, **options)
    if _per_question(spec):  # a subgraph's own IRIs (sg: names) tell nothing: the linked ids do, else freebase
        return KB.open(spec, infer_profile(None, entity_ids), **options)
    kb = KB.open(spec, "generic", **options)
    key = (str(spec), tuple(sorted((k, repr(v)) for k, v in options.items())))
    name = infer_profile(kb_profile(kb, key), entity_ids)
    if name != kb.profile.name:
        kb.profile = get_profile(name)
    return kb


def _per_question(spec: Any) -> bool:
    """Whether ``spec`` is of a form that names one KB per question (``subgraphs:FILE``, :attr:`pyql.kb.registry.KBBackend.per_question`)."""
    entry = kb_backends.backend_for(spec)
    return entry is not None and entry.per_question


def _question_spec(spec: str, item: Mapping[str, Any] | None) -> str:
    """The KB spec of one question: ``SPEC#ID`` for a per-question form named without its id.

    Raises:
        UsageError: a per-question form without an id, and no item to take one from (``pyql run``, ``ask``).
    """
    entry = kb_backends.backend_for(spec)
    if entry is None or not entry.per_question or "#" in str(entry.argument(spec)):
        return spec
    if item is None:
        raise UsageError(
            f"--kb {spec} holds one subgraph per question: pyql eval opens each question's own; "
            f"for one question give --kb {spec}#ID (ID: the question's id in that file)"
        )
    return f"{spec}#{item.get('id')}"


def feedback_options(feedback: str, *, agent: bool = False) -> dict[str, Any]:
    """The ``analyzer`` and ``undo_empty`` of an environment for a ``--feedback`` mode.

    ``eraser``: ERASER's guidelines. ``raw``: the raw error, and an empty
    result fails the step. ``none``: no correction; for ``pyql run`` an
    empty result still fails the step, for an agent it is shown as it is
    (the agent only says that a step failed, see :class:`~agent.methods.query_agent.AgentConfig`).
    ERASER's guidelines are worded for their reader: an agent is asked to
    re-generate its Thought and Action, a ``pyql run`` user to correct the action.

    Raises:
        correction.EraserError: an unknown mode.

    Example:
        >>> feedback_options("none", agent=True)
        {'analyzer': None, 'undo_empty': False}
        >>> feedback_options("eraser")["analyzer"].audience
        'user'
    """
    return {
        "analyzer": eraser_for(feedback, audience="agent" if agent else "user"),
        "undo_empty": not (agent and feedback == "none"),
    }


@lru_cache(maxsize=8)
def candidate_ranker(name: str | None) -> Callable[[str | None, list[str]], list[str]] | None:
    """The ranker that orders the candidate relations of guidelines and looks, best first.

    It is the ``--ranker`` of the run (:mod:`agent.methods.ranking`), asked for its
    full order (``get_relation`` observations keep their own, shuffled, cut).
    None for no name or ``none``: the environment then orders candidates by
    word overlap with the question (:func:`pyql.environment.candidates.rank_relations`).

    Example:
        >>> candidate_ranker("bm25")("what category is it", ["a.b.formed", "a.b.category"])[0]
        'a.b.category'
        >>> candidate_ranker(None) is None
        True
    """
    if not name or name.strip().lower() == "none":
        return None
    ranker = ranking.get_ranker(name)
    guard = threading.Lock()

    def rank(question: str | None, relations: list[str]) -> list[str]:
        with guard:
            return ranker.rank(question or "", list(relations))

    return rank


#: Data sets whose questions were written from a SQL query (:data:`pyql_sql.question_match.QUESTION_STYLES`):
#: their tables' environments read questions as ``"sql"``; every other table's (WTQ, a user's own) as ``"natural"``.
SQL_WRITTEN = frozenset(["wikisql", "dbbench"])


def _table_of(options: Any, item: Mapping[str, Any] | None) -> tuple[Table | None, str | None, bool]:
    """The table an item or the options name, the question it carries (dbbench), if any, and whether the agent may
    change it: an item marked ``writable`` (``pyql eval`` marks every dbbench item so), or a dbbench item given with
    ``--table-json`` (``pyql ask``, ``run``): the same item gets the same actions from every command."""
    if item is not None and item.get("table") is not None:
        table_json = item["table"]
        data = table_json if "header" in table_json and "rows" in table_json else {"table": table_json}
        table, _ = table_from_json(data, where=f"the table of item {item.get('id')}")
        return table, None, bool(item.get("writable"))
    db, table_json, choice = (getattr(options, name, None) for name in ("db", "table_json", "table"))
    if db and table_json:
        raise UsageError("give either --db or --table-json, not both")
    if db:
        return load_sqlite_table(db, choice), None, False
    if table_json:
        record = read_table_record(table_json, choice)
        table, question = table_from_json(record, where=table_json)
        return table, question, is_dbbench_item(record)
    return None, None, False


def open_environment(
    options: Any,
    item: Mapping[str, Any] | None = None,
    *,
    kb: Any = None,
    ranker: Callable[[str | None, list[str]], list[str]] | None = None,
    agent: bool = False,
) -> Environment:
    """A fresh environment for ``pyql run`` / ``ask`` (from ``options``) or one ``eval`` item.

    Args:
        options: command-line arguments or run settings: ``feedback`` and, as
            far as they apply, ``kb``, ``profile``, ``max_relations``, ``db``,
            ``table``, ``table_json``, ``question``, ``entities`` (JSON text),
            ``kb_timeout``, ``default_graph`` (:func:`kb_options`), ``run_advice``,
            ``escalate`` (the ablation switches of :class:`pyql.environment.Environment`),
            ``action_set`` (``sparql-all``: every SPARQL action, ties and ``add_union`` included;
            ``agentbench``: an :class:`~pyql.environment.agentbench.AgentBenchEnvironment`
            on the KB, observing by ``observe``, rows or type).
        item: a data set item (``question``, ``entities``, optional ``table``);
            it overrides the question and entities of ``options``.
        kb: an open KB to use instead of opening ``options.kb``.
        ranker: the relation ranker of a KB environment.
        agent: the environment is for an agent (see :func:`feedback_options`).

    Raises:
        UsageError: neither a table nor a KB is given, or both ``--db`` and ``--table-json``.
        pyql_sql.errors.TableInputError: the table does not load.
        pyql.errors.KBError: the KB does not open.
    """
    question, entities = _question_and_entities(options, item)
    settings = _environment_settings(options, agent)
    table, found, writable = _table_of(options, item)
    if table is not None:
        kind = WritableTableEnvironment if writable else TableEnvironment
        style = "sql" if writable or found is not None or (item is not None and item.get("source") in SQL_WRITTEN) else "natural"
        return kind(table, question=question or found, entities=entities, question_style=style, **settings)
    if kb is None:
        kb = _open_kb(options, item, entities)
    return _kb_environment(kb, options, question, entities, ranker, settings)


def _question_and_entities(options: Any, item: Mapping[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
    """The question and its linked entities: the item's, else those of the options (the entities as JSON text)."""
    if item is not None:
        return item.get("question"), dict(item.get("entities") or {})
    return getattr(options, "question", None), read_entities(getattr(options, "entities", None))


def _environment_settings(options: Any, agent: bool) -> dict[str, Any]:
    """The keyword arguments every environment gets: the feedback's analyzer and ``undo_empty``, and the ablation switches."""
    settings = feedback_options(getattr(options, "feedback", "eraser"), agent=agent)
    settings.update(run_advice=getattr(options, "run_advice", True), escalate=getattr(options, "escalate", True))
    return settings


def _open_kb(options: Any, item: Mapping[str, Any] | None, entities: Mapping[str, Any]) -> KB:
    """The KB of ``--kb`` for this question (a per-question form: the item's own), opened with its profile and options.

    Raises:
        UsageError: no ``--kb`` was given.
    """
    spec = getattr(options, "kb", None)
    if not spec:
        what = f"item {item.get('id')!r} is a KB question" if item is not None else "no KB or table was given"
        raise UsageError(f"{what}: give --kb ({KB_HINT}), or --db/--table-json for a table")
    spec = _question_spec(spec, item)
    return open_kb_for(spec, getattr(options, "profile", None), entities.values(), **kb_options(options))


def _kb_environment(
    kb: Any, options: Any, question: str | None, entities: dict[str, Any],
    ranker: Callable[[str | None, list[str]], list[str]] | None, settings: dict[str, Any],
) -> Environment:
    """The environment on the KB: AgentBench's (``action_set`` ``agentbench``), else pyql's SPARQL environment."""
    if getattr(options, "action_set", None) == "agentbench":  # AgentBench's functions, #k variables
        observe = getattr(options, "observe", None) or "rows"
        return AgentBenchEnvironment(kb, question=question, entities=entities, observe=observe, **settings)
    return SparqlEnvironment(
        kb,
        question=question,
        entities=entities,
        actions=SPARQL_ALL_ACTIONS if getattr(options, "action_set", None) == "sparql-all" else None,
        relation_ranker=ranker,
        max_relations=getattr(options, "max_relations", 40),
        candidate_ranker=candidate_ranker(getattr(options, "ranker", None)) if ranker is not None else None,
        **settings,
    )
