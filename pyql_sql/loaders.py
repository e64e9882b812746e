"""Table loaders: a table from a SQLite file, a JSON/JSON Lines file or a decoded JSON object.

A table comes from:

``load_sqlite_table(FILE.db, NAME)``
    a SQLite file, opened read-only. A plain table with real column names is
    copied into a :class:`~pyql_sql.table.Table` (types inferred from the
    cells). An official WikiSQL table (``table_<id>`` with columns
    ``col0..colN``) has no headers in the file: they are read from the
    ``<stem>.tables.jsonl`` that WikiSQL ships next to ``<stem>.db``
    (``dev.db`` → ``dev.tables.jsonl``); without it the loader stops and
    says so. The name may be left out when the file has one table.

``load_table_json(FILE, CHOICE)``
    a JSON file holding ``{"header": [...], "rows": [[...], ...]}``
    (optional ``"types"`` and ``"name"``/``"id"``: a WikiSQL
    ``*.tables.jsonl`` record is one), or an AgentBench dbbench item
    (``{"table": {"table_name": ..., "table_info": {"columns": [...], "rows": [...]}}}``;
    its ``description`` is returned as the question). A JSON Lines file of
    such objects works too: ``CHOICE`` then picks one by 0-based line number
    or by table name/id. ``-`` is standard input.

``table_from_json(OBJECT)``
    the same from an object already decoded (a data set item's table).

Every problem with these inputs is a :class:`TableInputError` with a
one-line message (``pyql run --db/--table-json`` exits with status 2 on it).

Example:
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> _ = open(p, "w").write(json.dumps({"header": ["Game", "Opponent"], "rows": [["6", "Athlone Town"]]}))
    >>> table, question = load_table_json(p)
    >>> table.headers, table.types, question
    (('Game', 'Opponent'), ('real', 'text'), None)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyql.cli import read_text
from pyql.echo import plural
from pyql.lines import split_lines

from .errors import SQLError, TableInputError
from .readonly import open_readonly_file
from .table import Table

__all__ = ["TableInputError", "is_dbbench_item", "load_table_json", "load_sqlite_table", "read_table_record", "table_from_json"]


def table_from_json(data: Any, where: str = "the JSON") -> tuple[Table, str | None]:
    """A table (and the question, if the object carries one) from a decoded JSON object.

    Accepts ``{"header", "rows"[, "types", "name"/"id"]}`` and dbbench items
    (``table.table_info``).

    Raises:
        TableInputError: the object is neither, or the table does not load.

    Example:
        >>> t, q = table_from_json({"description": "How many?", "table": {"table_name": "Medals",
        ...     "table_info": {"columns": [{"name": "Gold", "type": "TEXT"}], "rows": [["5"]]}}})
        >>> t.name, t.types, q
        ('Medals', ('real',), 'How many?')
        >>> table_from_json([1, 2])
        Traceback (most recent call last):
        ...
        pyql_sql.errors.TableInputError: the JSON must be an object with "header" and "rows", or a dbbench item with "table": {"table_info": ...}; got a list
    """
    if not isinstance(data, Mapping):
        raise TableInputError(
            f'{where} must be an object with "header" and "rows", or a dbbench item with '
            f'"table": {{"table_info": ...}}; got a {type(data).__name__}'
        )
    question = data.get("description") or data.get("question")
    try:
        if is_dbbench_item(data):
            table = Table.from_dbbench(data)
        elif "header" in data and "rows" in data:
            name = data.get("name") or data.get("id") or data.get("table_name") or "table"
            table = Table.from_rows(data["header"], data["rows"], types=data.get("types"), name=str(name))
        else:
            raise TableInputError(
                f'{where} has neither "header" and "rows" nor a dbbench "table" (keys: {", ".join(map(str, data)) or "none"})'
            )
    except SQLError as exc:
        raise TableInputError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise TableInputError(f"{where}: the table is malformed ({exc})") from None
    return table, question if isinstance(question, str) else None


def _pick(records: list[Any], choice: str | None, path: str) -> Any:
    if choice is None:
        if len(records) == 1:
            return records[0]
        raise TableInputError(
            f"{path} holds {len(records)} JSON objects (JSON Lines); choose one with --table "
            f"(a 0-based line number or a table name)"
        )
    if choice.isdigit():
        if int(choice) < len(records):
            return records[int(choice)]
        raise TableInputError(f"--table {choice}: {path} has only {plural(len(records), 'object')} (0..{len(records) - 1})")
    for rec in records:
        if not isinstance(rec, Mapping):
            continue
        table = rec.get("table")
        names = {rec.get("id"), rec.get("name"), rec.get("table_name")}
        if isinstance(table, Mapping):
            names.add(table.get("table_name"))
        if choice in names:
            return rec
    raise TableInputError(f"--table {choice!r}: no object in {path} has that table name or id")


def load_table_json(path: str, choice: str | None = None) -> tuple[Table, str | None]:
    """Load ``--table-json FILE`` (``-`` is standard input); see the module docstring.

    Args:
        path: the file.
        choice: ``--table``: which object of a JSON Lines file (line number or name/id).

    Returns:
        ``(table, question)``; the question is the item's ``description`` (dbbench) or None.

    Raises:
        TableInputError: unreadable file, bad JSON, no table in it.

    Example:
        >>> load_table_json("/nonexistent/t.json")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.TableInputError: table JSON file not found: /nonexistent/t.json
    """
    return table_from_json(read_table_record(path, choice), where=path)


def read_table_record(path: str, choice: str | None = None) -> Any:
    """The JSON object ``--table-json FILE`` names (``choice``: which object of a JSON Lines file), not yet a table.

    Raises:
        TableInputError: unreadable file, bad JSON, no such object.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
        >>> _ = open(p, "w").write('{"name": "a", "header": ["x"], "rows": []}\\n{"name": "b", "header": ["y"], "rows": []}\\n')
        >>> read_table_record(p, "b")["header"]
        ['y']
    """
    text = read_text(path, "table JSON", error=TableInputError)
    try:
        data = json.loads(text)
        records = [data]
    except json.JSONDecodeError as exc:
        lines = [line for line in split_lines(text) if line.strip()]
        if exc.msg != "Extra data" or len(lines) < 2:
            raise TableInputError(f"{path} is not valid JSON: {exc}") from None
        try:
            records = [json.loads(line) for line in lines]
        except json.JSONDecodeError as exc2:
            raise TableInputError(f"{path} is neither JSON nor JSON Lines: {exc2}") from None
    if len(records) == 1 and choice is not None and isinstance(records[0], list):
        records = records[0]
    return _pick(records, choice, path)


def is_dbbench_item(data: Any) -> bool:
    """Whether a decoded JSON object is an AgentBench dbbench item (its table under ``"table"``) rather than a bare table.

    Example:
        >>> is_dbbench_item({"description": "Add a row.", "table": {"table_info": {}}}), is_dbbench_item({"header": [], "rows": []})
        (True, False)
    """
    return isinstance(data, Mapping) and isinstance(data.get("table"), Mapping)


def _wikisql_headers(path: Path, table_name: str, width: int) -> list[str] | None:
    """Headers of a WikiSQL table from the ``<stem>.tables.jsonl`` next to the ``.db`` file."""
    jsonl = path.with_name(path.stem + ".tables.jsonl")
    if not jsonl.is_file():
        return None
    wanted = table_name[len("table_"):].replace("_", "-") if table_name.startswith("table_") else table_name
    try:
        with jsonl.open(encoding="utf-8") as f:
            for line in f:
                if wanted not in line:
                    continue
                rec = json.loads(line)
                if rec.get("id") == wanted and len(rec.get("header", [])) == width:
                    return [str(h) for h in rec["header"]]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TableInputError(f"cannot read the WikiSQL headers in {jsonl}: {exc}") from None
    return None


def load_sqlite_table(path: str, name: str | None = None) -> Table:
    """Load ``--db FILE --table NAME`` (read-only); see the module docstring.

    Raises:
        TableInputError: missing or unreadable file, no such table, WikiSQL
            ``col0..colN`` columns without headers, a table that does not load.

    Example:
        >>> import os, sqlite3, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "games.db")
        >>> conn = sqlite3.connect(p)
        >>> _ = conn.execute('CREATE TABLE "Game Schedule" ("Game" INTEGER, "Opponent" TEXT)')
        >>> _ = conn.execute("INSERT INTO \\"Game Schedule\\" VALUES (6, 'Athlone Town')")
        >>> conn.commit(); conn.close()
        >>> t = load_sqlite_table(p)
        >>> t.name, t.headers, t.types
        ('Game Schedule', ('Game', 'Opponent'), ('real', 'text'))
        >>> load_sqlite_table(p, "nope")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pyql_sql.errors.TableInputError: no table 'nope' in ... tables: 'Game Schedule'
    """
    file = Path(path)
    if not file.is_file():
        raise TableInputError(f"database file not found: {path}")
    try:
        conn = open_readonly_file(file)
    except SQLError as exc:
        raise TableInputError(str(exc)) from None
    try:
        name = _choose_table(conn, path, name)
        quoted = '"' + name.replace('"', '""') + '"'
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({quoted})")]
        if columns and columns == [f"col{i}" for i in range(len(columns))]:
            conn.close()
            return _wikisql_db_table(file, path, name, len(columns))
        try:
            rows = conn.execute(f"SELECT * FROM {quoted}").fetchall()
        except sqlite3.Error as exc:
            raise TableInputError(f"cannot read table {name!r} of {path}: {exc}") from None
    finally:
        conn.close()
    try:
        return Table.from_rows(columns, rows, name=name)
    except SQLError as exc:
        raise TableInputError(f"{path}, table {name!r}: {exc}") from None


def _choose_table(conn: sqlite3.Connection, path: str, name: str | None) -> str:
    """The table ``name`` of the database, or its only table when ``name`` is None."""
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )]
    except sqlite3.DatabaseError as exc:
        raise TableInputError(f"{path} is not a readable SQLite database: {exc}") from None
    listed = ", ".join(repr(t) for t in tables) or "none"
    if name is None:
        if len(tables) != 1:
            raise TableInputError(f"{path} has {len(tables)} tables; choose one with --table (tables: {listed})")
        name = tables[0]
    if name not in tables:
        raise TableInputError(f"no table {name!r} in {path}; tables: {listed}")
    return name


def _wikisql_db_table(file: Path, path: str, name: str, width: int) -> Table:
    """A table of a WikiSQL ``.db`` (anonymous columns ``col0..colN``), headed from its ``tables.jsonl``."""
    header = _wikisql_headers(file, name, width)
    if header is None:
        raise TableInputError(
            f"table {name!r} in {path} has WikiSQL's anonymous columns col0..col{width - 1} and "
            f"no headers; put WikiSQL's {file.stem}.tables.jsonl next to {file.name} (its headers are "
            "read from there), or give the table with --table-json"
        )
    try:
        return Table.from_wikisql_db(file, name, header=header)
    except SQLError as exc:
        raise TableInputError(f"{path}: {exc}") from None
