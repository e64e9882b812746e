"""The ``wikisql`` format: WikiSQL in its original form, questions (``*.jsonl``) and tables beside them.

Records: ``{"table_id", "question", "sql": {"sel", "agg", "conds"}}``; the
tables are read from ``<split>.tables.jsonl`` next to the questions, else
from ``<split>.db``. The gold answers are the logical form executed on
the table with WikiSQL's semantics (``pyql_sql.wikisql.query_from_wikisql``,
gold execution), compared with ``label_match``; the gold chain is that
query's steps, and ``gold_query`` keeps the logical form. Ids are
``<stem>-<line>``. What is SQL-side (the logical form as a step chain,
denotation comparison, gold SQL text) stays in :mod:`pyql_sql.wikisql`.

Example:
    >>> is_wikisql({"table_id": "1-1000181-1", "question": "q", "sql": {"sel": 0, "agg": 0, "conds": []}})
    True
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.registry import Source, dataset_format
from pyql_sql import Executor, SQLError, Table
from pyql_sql.table import wikisql_table_name
from pyql_sql.wikisql import query_from_wikisql

__all__ = ["is_wikisql", "load_wikisql"]

_SMOKE = {"wikisql": {"data": "wikisql/dev.jsonl", "kb": None, "profile": "freebase"}}


def is_wikisql(record: Mapping[str, Any]) -> bool:
    """A WikiSQL question: ``table_id``, ``question`` and a logical form ``sql`` with ``sel``.

    Example:
        >>> is_wikisql({"table_id": "1-1000181-1", "question": "q", "sql": "SELECT ..."})
        False
    """
    sql = record.get("sql")
    return "table_id" in record and "question" in record and isinstance(sql, Mapping) and "sel" in sql


class _WikiSQLTables:
    """The tables of a WikiSQL split: ``<split>.tables.jsonl`` beside the questions, else ``<split>.db``."""

    def __init__(self, questions: Path, wanted: set[str]) -> None:
        base = questions.name[: -len(".jsonl")] if questions.name.endswith(".jsonl") else questions.stem
        self.jsonl = questions.with_name(base + ".tables.jsonl")
        self.db = questions.with_name(base + ".db")
        self.records: dict[str, Mapping[str, Any]] = {}
        self._tables: dict[str, Any] = {}
        if self.jsonl.is_file():
            with self.jsonl.open(encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DatasetError(f"{self.jsonl}, line {number}: not JSON ({exc.msg})") from None
                    if isinstance(rec, Mapping) and rec.get("id") in wanted:
                        self.records[str(rec["id"])] = rec
        elif not self.db.is_file():
            raise DatasetError(
                f"{questions} is WikiSQL (table_id, question, sql) but its tables are missing: put {self.jsonl.name} "
                f"or {self.db.name} (from WikiSQL's data.tar.bz2) next to it"
            )

    def table(self, table_id: str) -> tuple[Any, dict[str, Any]]:
        """The pyql_sql Table of an id and its JSON for the item."""
        if table_id in self._tables:
            return self._tables[table_id]
        try:
            if self.records:
                rec = self.records.get(table_id)
                if rec is None:
                    raise DatasetError(f"no table {table_id!r} in {self.jsonl}")
                table = Table.from_wikisql_record(rec)
                data = {"header": list(rec["header"]), "rows": [list(r) for r in rec["rows"]], "types": rec.get("types"), "name": table_id}
            else:
                table = Table.from_wikisql_db(self.db, table_id)
                conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
                try:
                    rows = conn.execute(f'SELECT * FROM "{wikisql_table_name(table_id)}"').fetchall()
                finally:
                    conn.close()
                data = {"header": list(table.headers), "rows": [list(r) for r in rows], "types": list(table.types), "name": table_id}
        except SQLError as exc:
            raise DatasetError(f"the WikiSQL table {table_id!r} does not load: {exc}") from None
        self._tables[table_id] = (table, data)
        return table, data


def _wikisql_item(rec: Mapping[str, Any], index: int, stem: str, tables: _WikiSQLTables) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    table, data = tables.table(str(rec["table_id"]))
    try:
        query = query_from_wikisql(table, rec["sql"])
        gold = [a.value for a in Executor(table).execute(query)]
    except SQLError as exc:
        raise DatasetError(f"{where}: the gold query does not run on table {rec['table_id']}: {exc}") from None
    return {
        "id": str(rec.get("id", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": {},
        "answers": gold,
        "actions": list(query.actions()) + ["execute()"],
        "table": data,
        "source": "wikisql",
        "kind": None,
        "gold_query": {"sql": dict(rec["sql"])},
    }


@dataset_format(
    "wikisql",
    shape="records",
    priority=50,
    detect=is_wikisql,
    known="WikiSQL questions (table_id, question, sql)",
    gold="the logical form executed on its table (gold execution), compared with label_match",
    smoke=_SMOKE,
)
def load_wikisql(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a WikiSQL questions file, each with its table and its gold answers executed.

    Raises:
        DatasetError: the tables are missing, or a gold query does not run.

    Example:
        >>> from pathlib import Path
        >>> rec = {"table_id": "1-1", "question": "q", "sql": {"sel": 0, "agg": 0, "conds": []}}
        >>> next(load_wikisql(Source(Path("/nonexistent/dev.jsonl"), "", "wikisql", [rec])))
        Traceback (most recent call last):
        ...
        agent.errors.DatasetError: /nonexistent/dev.jsonl is WikiSQL (table_id, question, sql) but its tables are missing: ...
    """
    wanted = {str(r.get("table_id")) for r in source.records if isinstance(r, Mapping)}
    tables = _WikiSQLTables(source.file, wanted)
    for index, rec in source.each():
        yield _wikisql_item(rec, index, source.stem, tables)
