"""The ``dbbench`` format: AgentBench dbbench / WikiSQL-style table items (``wikisql_dbbench/dev.jsonl``).

Records: ``{"description", "label", "table": {"table_name", "table_info"}, "sql"}``.
Ids are ``<file stem>-<line number>`` (0-based), stable across runs; runs
are scored as the ``wikisql`` benchmark. Every item is ``writable``: its
environment also offers ``insert_row``/``update_rows``
(:mod:`pyql_sql.writable_environment`), as AgentBench lets the agent run
any statement.

Question items (SELECT): the gold answers are the label, compared as
AgentBench's dbbench task compares them (:func:`agentbench_answer_match`: one
value each, equal as numbers or else as the same text; several, the same set
of texts). :func:`state_denotation` is the looser comparison of the WikiSQL
benchmark (``label_match``: ``["none"]`` matches no answer, case aside),
kept for the figures measured with it.

Mutation items (``type`` INSERT/UPDATE/DELETE; their gold statement is the
label, or ``sql.query``): scored as AgentBench scores them, by the table's
state. The gold statement runs on a fresh copy of the item's table (every
cell TEXT, as AgentBench builds it); the gold answer is
``table-state:<md5>`` of that copy (:meth:`pyql_sql.mutation.TableState.fingerprint`,
AgentBench's row-order-insensitive hash), and the agent's episode answers
the same of its own copy after its changes. A gold statement that does not
parse or run makes the item unscorable: it is left out, counted as
skipped and ``unscorable`` and named in the run's notes, never scored as wrong. When
the item carries AgentBench's ``answer_md5`` and the gold state differs
from it, that is noted too.

Example:
    >>> is_dbbench({"description": "How many?", "label": ["1"], "table": {}}), is_select({"type": ["INSERT"]})
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent.errors import DatasetError
from pyql.errors import PyQLError
from pyql_sql.mutation import TableState
from pyql_sql.writable_environment import STATE_PREFIX
from agent.evaluation.datasets.reading import answers_of
from agent.evaluation.datasets.registry import Source, dataset_format

__all__ = ["agentbench_answer_match", "gold_state", "is_dbbench", "is_select", "load_dbbench", "state_denotation", "MUTATION_KINDS"]

#: the item types AgentBench scores by the table's state
MUTATION_KINDS = ("INSERT", "UPDATE", "DELETE")


def is_dbbench(record: Mapping[str, Any]) -> bool:
    """A dbbench item: ``description``, ``table`` and ``label``.

    Example:
        >>> is_dbbench({"description": "d", "table": {}})
        False
    """
    return "description" in record and "table" in record and "label" in record


def is_select(rec: Mapping[str, Any]) -> bool:
    """Whether a dbbench item asks a SELECT query (its SQL text, else its ``type`` list).

    Example:
        >>> is_select({"sql": {"query": "SELECT a FROM t"}}), is_select({"sql": {"query": "UPDATE t SET a = 1"}}), is_select({})
        (True, False, True)
    """
    sql = rec.get("sql")
    query = sql.get("query") if isinstance(sql, Mapping) else sql
    if isinstance(query, str) and query.strip():
        return query.lstrip().upper().startswith("SELECT")
    kinds = rec.get("type") or []
    return not any(str(k).upper() in MUTATION_KINDS for k in kinds)


def _gold_statement(rec: Mapping[str, Any]) -> str | None:
    sql = rec.get("sql")
    query = sql.get("query") if isinstance(sql, Mapping) else sql
    if isinstance(query, str) and query.strip():
        return query
    label = rec.get("label")
    if isinstance(label, list) and len(label) == 1:
        label = label[0]
    return label if isinstance(label, str) and label.strip() else None


def gold_state(rec: Mapping[str, Any]) -> str:
    """The gold answer of a mutation item: ``table-state:<md5>`` after its gold statement on a fresh copy.

    Raises:
        DatasetError: no gold statement, or it does not parse or run (the item is unscorable).

    Example:
        >>> table = {"table_name": "T", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"]]}}
        >>> gold_state({"table": table, "label": ["INSERT INTO T (a) VALUES ('2')"], "type": ["INSERT"]})[:12]
        'table-state:'
        >>> gold_state({"table": table, "label": ["INSERT INTO T (b) VALUES ('2')"], "type": ["INSERT"]})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agent.errors.DatasetError: the gold statement does not run: SQLite rejected the statement (table T has no column named b): ...
    """
    statement = _gold_statement(rec)
    if statement is None:
        raise DatasetError("the item has no gold statement (label or sql.query)")
    try:
        state = TableState.from_dbbench(rec)
        state.run_sql(statement, dialect="mysql")
    except (PyQLError, KeyError, TypeError) as exc:
        raise DatasetError(f"the gold statement does not run: {exc}") from None
    return STATE_PREFIX + state.fingerprint()


def _md5_of(rec: Mapping[str, Any]) -> str | None:
    """AgentBench's ``answer_md5`` (stored as ``[('<md5>',)]``), if the item has it."""
    import re

    m = re.search(r"[0-9a-f]{32}", str(rec.get("answer_md5") or ""))
    return m.group(0) if m else None


def state_denotation(predicted: Sequence[Any], gold: Sequence[Any]) -> bool:
    """dbbench's denotation: a mutation item by the table's state, a question by ``label_match``.

    Example:
        >>> state_denotation([{"value": "table-state:ab"}], ["table-state:ab"]), state_denotation([], ["table-state:ab"])
        (True, False)
        >>> state_denotation([{"value": "5", "label": None}], ["5.0"])
        True
    """
    values = [a.get("value") if isinstance(a, Mapping) else a for a in predicted]
    if any(isinstance(g, str) and g.startswith(STATE_PREFIX) for g in gold):
        return [str(v) for v in values] == [str(g) for g in gold]
    from pyql_sql.wikisql import label_match

    return bool(label_match(values, list(gold)))


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


#: AgentBench's special values, all read as ``0`` (its ``_normalize_special_values``): NULL and its spellings.
_AGENTBENCH_ZERO = frozenset(["none", "null", "undefined", "nan", "inf", "infinity", "-inf", "-infinity", ""])


def _agentbench_value(value: Any) -> str:
    """One answer value as AgentBench's dbbench scorer reads it: outer quotes and spaces gone, a final ``%`` dropped,
    thousands commas removed, NULL and its spellings (``none``, ``null``, the empty text ...) as ``0``."""
    if value is None:
        return "0"
    text = str(value).strip().strip("'\"")
    if text.endswith("%"):
        text = text[:-1].strip()
    if "," in text and not (text.startswith("[") and text.endswith("]")):
        text = text.replace(",", "")
    return "0" if text.lower() in _AGENTBENCH_ZERO else text


def _agentbench_float_equal(a: str, b: str) -> bool:
    x, y = _as_float(a), _as_float(b)
    return x is not None and y is not None and abs(x - y) <= 1e-2


def agentbench_answer_match(predicted: Sequence[Any], gold: Sequence[Any]) -> bool:
    """AgentBench's dbbench comparison of one item (its task's accuracy, ``DBResultProcessor.compare_results`` of
    THUDM/AgentBench): a change by the table's state, a question by its answer list.

    A change item is right when the table-state hash is the gold's. A question's values are read as AgentBench
    reads them (:func:`_agentbench_value`: thousands commas and a ``%`` dropped, ``none``/``null``/empty as ``0``).
    One predicted and one gold value: equal as numbers within 0.01, else the same text (case and all). Several:
    when all are numbers, matched one to one within 0.01; else the same set of texts. An empty answer is what an
    AgentBench agent commits for a query that found no value (SQL's NULL), so it reads as ``0`` as NULL does.

    Example:
        >>> agentbench_answer_match([{"value": "5"}], ["5.0"]), agentbench_answer_match(["Ajax"], ["ajax"])
        (True, False)
        >>> agentbench_answer_match(["b", "a", "a"], ["a", "b"]), agentbench_answer_match(["1", "2"], ["2.0", "1.0"])
        (True, True)
        >>> agentbench_answer_match([{"value": "table-state:ab"}], ["table-state:ab"]), agentbench_answer_match([], ["none"])
        (True, True)
        >>> agentbench_answer_match(["1,174"], ["1174"]), agentbench_answer_match([], ["Ajax"])
        (True, False)
    """
    raw = [a.get("value") if isinstance(a, Mapping) else a for a in predicted]
    truth = [str(g) for g in gold]
    if any(g.startswith(STATE_PREFIX) for g in truth):
        return [str(v) for v in raw] == truth
    values = [_agentbench_value(v) for v in raw] or ["0"]
    expected = [_agentbench_value(g) for g in truth]
    if len(values) == 1 and len(expected) == 1:
        a, b = values[0], expected[0]
        if _as_float(a) is not None and _as_float(b) is not None:
            return _agentbench_float_equal(a, b)
        return a == b
    if all(_as_float(v) is not None for v in values) and all(_as_float(g) is not None for g in expected):
        if len(values) != len(expected):
            return False
        free = list(expected)
        for v in values:
            match = next((i for i, g in enumerate(free) if _agentbench_float_equal(v, g)), None)
            if match is None:
                return False
            free.pop(match)
        return True
    return set(values) == set(expected)


def _dbbench_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    table = rec.get("table")
    if not isinstance(table, Mapping) or "table_info" not in table:
        raise DatasetError(f'{where}: a dbbench item needs "table": {{"table_name", "table_info": {{"columns", "rows"}}}}')
    kinds = rec.get("type") or []
    answers = [gold_state(rec)] if not is_select(rec) else answers_of(rec.get("label"), where)
    return {
        "id": str(rec.get("id", f"{stem}-{index}")),
        "question": str(rec["description"]),
        "entities": {},
        "answers": answers,
        "writable": True,
        "actions": None,
        "table": dict(table),
        "source": "dbbench",
        "kind": str(kinds[0]) if kinds else None,
    }


def _benchmark(records: Sequence[Mapping[str, Any]]) -> str:
    return "wikisql"


@dataset_format(
    "dbbench",
    shape="records",
    priority=60,
    detect=is_dbbench,
    known="dbbench table items (description, label, table)",
    gold="the label (compared as AgentBench does: numbers as numbers, else the same text; several values as a set); "
    "INSERT/UPDATE items: the table's state after the gold statement",
    denotation=agentbench_answer_match,
    benchmark=_benchmark,
)
def load_dbbench(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a dbbench file; a mutation item whose gold statement does not run is counted ``unscorable``.

    Example:
        >>> from pathlib import Path
        >>> table = {"table_name": "T", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"]]}}
        >>> recs = [{"description": "Add.", "label": ["INSERT INTO T VALUES ('2')"], "table": table, "type": ["INSERT"]},
        ...         {"description": "Add.", "label": ["INSERT INTO"], "table": table, "type": ["INSERT"]},
        ...         {"description": "How many?", "label": ["1"], "table": table}]
        >>> src = Source(Path("dev.jsonl"), "", "dbbench", recs)
        >>> [i["id"] for i in load_dbbench(src)], src.counts["unscorable"]
        (['dev-0', 'dev-2'], 1)
    """
    for index, rec in source.each():
        try:
            item = _dbbench_item(rec, index, source.stem)
        except DatasetError as exc:
            if is_select(rec):
                raise
            source.skip()
            source.counts["unscorable"] = source.counts.get("unscorable", 0) + 1
            source.note(f"{source.stem}-{index} is unscorable and left out: {exc}")
            continue
        md5 = _md5_of(rec)
        if md5 is not None and not is_select(rec) and item["answers"] != [STATE_PREFIX + md5]:
            source.note(f"{item['id']}: the gold statement's table state differs from the item's answer_md5")
        yield item
