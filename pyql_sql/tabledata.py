"""Table data: WikiSQL-style tables loaded into read-only SQLite (no querying).

This is the bottom layer of :mod:`pyql_sql`'s tables. It knows the columns,
the sealed SQLite connection and how to match a header an LLM wrote; it
knows nothing of queries, compilation or execution. The layering is::

    tabledata  (Column, TableData: headers, types, loaders, resolve_column)
      -> steps     (ConditionStep, AnswerStep: one validated step each)
      -> compile   (steps -> sqlglot expressions)
      -> query     (TableQuery: the immutable builder; sql() via compile)
      -> executor  (Executor: runs queries on the sealed connection)
      -> table     (Table: TableData plus query() / executor() / get_column())

Each module imports only modules above it in this list (and ``errors``,
``numbers``, ``readonly``), so the module graph has no cycle. Use
:class:`pyql_sql.table.Table` (``from pyql_sql import Table``); it has every
loader and method of :class:`TableData` plus the conveniences that need the
higher layers.

A table keeps the original headers (spaces, slashes, parentheses,
quotes, duplicates, empty strings are all fine) for display and for matching
what an LLM writes, and maps them to safe physical SQL identifiers. A header
is never put into SQL text.

Physical layouts:

``"pyql"`` (tables built from rows: inline, CSV, WikiSQL ``*.tables.jsonl``)
    one SQLite table ``t`` with the row's place in the table, ``r`` (1, 2, ...:
    the table's own order, kept as a column; the rowid), and, for header *i*,
    a TEXT column ``c<i>`` holding
    the cell as the table shows it and a REAL column ``n<i>`` holding the
    cell's number (:func:`pyql_sql.numbers.parse_number`) or NULL. The shadow
    ``n<i>`` exists for every column, so a text column with a few numbers
    (``'—'``, a repeated header row) still compares numerically where it can.

``"wikisql_db"`` (the official WikiSQL ``*.db`` files, opened read-only)
    the file's own table ``table_<id with - replaced by _>`` with columns
    ``col0..colN`` declared ``real`` or ``text``; a ``real`` column is its own
    numeric shadow, a ``text`` column has none. The rowid is the row's place.

Every connection gets the cell-part functions of :mod:`pyql_sql.parts`
(``pyql_part``, ``pyql_number``, ``pyql_duration``) before it is sealed.

Column types are ``"real"`` (numeric) or ``"text"``. When not given they are
inferred: a column is ``real`` when it has at least one non-empty cell and
every non-empty cell is a number (``"1,174"``, ``"1174.0"``, ``"−3"`` count).

Example:
    >>> t = TableData.from_rows(["Player", "Goals (total)"], [["Ann", "1,174"], ["Bob", "12"]])
    >>> t.headers, t.types, t.row_count
    (('Player', 'Goals (total)'), ('text', 'real'), 2)
    >>> t.resolve_column("goals total").header
    'Goals (total)'
"""

from __future__ import annotations

import csv
import difflib
import json
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils
from pyql.echo import inline
from sqlglot import exp

from .errors import AmbiguousColumnError, TableLoadError, UnknownColumnError
from .numbers import is_empty, parse_number
from .parts import install as install_parts
from .readonly import ReadOnlyGuard, open_readonly_file, seal

__all__ = [
    "PYQL_TABLE",
    "POSITION_COLUMN",
    "Column",
    "TableData",
    "header_keys",
    "infer_type",
    "normalize_type",
    "wikisql_table_name",
]

#: Physical name of the table built by the ``"pyql"`` layout.
PYQL_TABLE = "t"

#: The column of the ``"pyql"`` layout that keeps a row's place in the table (1, 2, ...; the rowid).
POSITION_COLUMN = "r"

#: The type of ``cls`` in the loaders: a loader called on a subclass
#: (:class:`pyql_sql.table.Table`) builds an instance of that subclass.
_T = TypeVar("_T", bound="TableData")

_TYPE_ALIASES = {
    "real": "real",
    "number": "real",
    "numeric": "real",
    "integer": "real",
    "int": "real",
    "float": "real",
    "double": "real",
    "text": "text",
    "string": "text",
    "str": "text",
    "varchar": "text",
}


@dataclass(frozen=True)
class Column:
    """One column of a :class:`TableData` (and so of a :class:`~pyql_sql.table.Table`).

    Attributes:
        index: 0-based position in the header.
        header: the original header text.
        type: ``"real"`` or ``"text"``.
        text_sql: physical column holding the cell as shown.
        num_sql: physical column holding the cell's number, or None.
    """

    index: int
    header: str
    type: str
    text_sql: str
    num_sql: str | None

    @property
    def is_numeric(self) -> bool:
        """True for ``real`` columns.

        Example:
            >>> Column(0, "Year", "real", "c0", "n0").is_numeric
            True
        """
        return self.type == "real"


def normalize_type(name: str) -> str:
    """Map a type name (``'REAL'``, ``'TEXT'``, ``'number'`` ...) to ``'real'``/``'text'``.

    Raises:
        TableLoadError: unknown type name.

    Example:
        >>> normalize_type("REAL"), normalize_type("varchar(20)")
        ('real', 'text')
    """
    key = re.sub(r"\(.*\)$", "", str(name).strip().lower()).strip()
    if key not in _TYPE_ALIASES:
        raise TableLoadError(
            f"Unknown column type {name!r}: use 'real' (numbers) or 'text'."
        )
    return _TYPE_ALIASES[key]


def infer_type(values: Iterable[object]) -> str:
    """``'real'`` when there is a non-empty value and every non-empty value is a number.

    Example:
        >>> infer_type(["1,174", "", "−3", None]), infer_type(["12", "—"]), infer_type(["", None])
        ('real', 'text', 'text')
    """
    seen = False
    for v in values:
        if is_empty(v):
            continue
        if parse_number(v) is None:
            return "text"
        seen = True
    return "real" if seen else "text"


def wikisql_table_name(table_id: str) -> str:
    """The SQLite table name WikiSQL's ``*.db`` files use for a table id.

    Example:
        >>> wikisql_table_name("1-1000181-1"), wikisql_table_name("table_1_1000181_1")
        ('table_1_1000181_1', 'table_1_1000181_1')
    """
    if table_id.startswith("table_"):
        return table_id
    return "table_" + table_id.replace("-", "_")


def _norm_case(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s).casefold().split())


def _norm_punct(s: str) -> str:
    return "".join(ch for ch in _norm_case(s) if ch.isalnum())


def header_keys(header: str) -> tuple[str, str, str]:
    """The three keys a header is matched by, strictest first: as written, case and spaces aside, punctuation aside too.

    Example:
        >>> header_keys("Year(s) won")
        ('Year(s) won', 'year(s) won', 'yearswon')
    """
    return header, _norm_case(header), _norm_punct(header)


def _cell_text(value: object) -> str | None:
    """Cells are stored as the table shows them: text (numbers via ``str``), or NULL."""
    if value is None or isinstance(value, str):
        return value
    return str(value)


# ------------------------------------------------------ from_rows, step by step
def _header_texts(header: Sequence[str]) -> list[str]:
    """The headers as text (``None`` becomes ``''``); there must be at least one.

    Raises:
        TableLoadError: the header is empty.

    Example:
        >>> _header_texts(["Year", None, 3])
        ['Year', '', '3']
    """
    headers = ["" if h is None else str(h) for h in header]
    if len(headers) == 0:
        raise TableLoadError("A table needs at least one column; the header is empty.")
    return headers


def _row_cells(rows: Iterable[Sequence[Any]], headers: Sequence[str]) -> list[list[str | None]]:
    """The rows as lists of cells as the table shows them, each as long as the header.

    Raises:
        TableLoadError: a row has more or fewer cells than the header.

    Example:
        >>> _row_cells([["a", 1, None], ("b", 2.5, "")], ["x", "y", "z"])
        [['a', '1', None], ['b', '2.5', '']]
    """
    width = len(headers)
    cells: list[list[str | None]] = []
    for r, row in enumerate(rows):
        row = list(row)
        if len(row) != width:
            raise TableLoadError(
                f"Row {r} has {len(row)} cells but the header has {width} columns "
                f"({', '.join(repr(h) for h in headers)})."
            )
        cells.append([_cell_text(v) for v in row])
    return cells


def _column_types(
    cells: Sequence[Sequence[str | None]], types: Sequence[str] | None, width: int
) -> list[str]:
    """The given types normalized, or (when None) the types inferred from the cells.

    Raises:
        TableLoadError: not one type per column, or an unknown type name.

    Example:
        >>> _column_types([["x", "1,174"]], None, 2), _column_types([], ["TEXT", "number"], 2)
        (['text', 'real'], ['text', 'real'])
    """
    if types is None:
        return [infer_type(row[i] for row in cells) for i in range(width)]
    if len(types) != width:
        raise TableLoadError(
            f"Got {len(types)} types for {width} columns; give one type per column."
        )
    return [normalize_type(t) for t in types]


def _pyql_records(cells: Iterable[Sequence[str | None]]) -> Iterator[dict[str, object]]:
    """One ``{"r": place, "c<i>": cell, "n<i>": number or None}`` record per row (layout ``"pyql"``).

    Example:
        >>> list(_pyql_records([["1,174", "x"]]))
        [{'r': 1, 'c0': '1,174', 'n0': 1174.0, 'c1': 'x', 'n1': None}]
    """
    for place, row in enumerate(cells, 1):
        rec: dict[str, object] = {POSITION_COLUMN: place}
        for i, v in enumerate(row):
            rec[f"c{i}"] = v
            rec[f"n{i}"] = parse_number(v)
        yield rec


def _pyql_database(cells: Sequence[Sequence[str | None]], width: int) -> sqlite_utils.Database:
    """A new in-memory database holding the cells in table ``t`` (layout ``"pyql"``, not sealed).

    Example:
        >>> db = _pyql_database([["a", "2"]], 2)
        >>> db.execute('SELECT * FROM "t"').fetchall()
        [(1, 'a', None, '2', 2.0)]
    """
    db = sqlite_utils.Database(memory=True)
    spec: dict[str, type] = {POSITION_COLUMN: int}
    for i in range(width):
        spec[f"c{i}"] = str
        spec[f"n{i}"] = float
    db[PYQL_TABLE].create(spec, pk=POSITION_COLUMN)  # type: ignore[union-attr]
    if cells:
        db[PYQL_TABLE].insert_all(_pyql_records(cells), batch_size=1000)  # type: ignore[union-attr]
    return db


class TableData:
    """A table loaded into a sealed (read-only) SQLite connection: data only.

    The base of :class:`pyql_sql.table.Table`, which adds ``query()``,
    ``executor()`` and ``get_column()``; use that class. Build one with :meth:`from_rows`, :meth:`from_csv`,
    :meth:`from_wikisql_record`, :meth:`from_wikisql_jsonl`,
    :meth:`from_wikisql_db` or :meth:`from_dbbench`.

    Attributes:
        name: a display name (the WikiSQL id, the CSV stem, the dbbench table name ...).
        columns: one :class:`Column` per header, in order.
        sql_name: physical SQLite table name.
        layout: ``"pyql"`` or ``"wikisql_db"``.
        row_count: number of rows.
        db: the :class:`sqlite_utils.Database` over the sealed connection.

    Example:
        >>> t = TableData.from_rows(["Name", "Name", ""], [["a", "b", "c"]], name="dups")
        >>> [(c.index, c.header, c.text_sql) for c in t.columns]
        [(0, 'Name', 'c0'), (1, 'Name', 'c1'), (2, '', 'c2')]
    """

    def __init__(
        self,
        *,
        name: str,
        columns: Sequence[Column],
        sql_name: str,
        db: sqlite_utils.Database,
        guard: ReadOnlyGuard,
        layout: str,
    ) -> None:
        self.name = name
        self.columns: tuple[Column, ...] = tuple(columns)
        self.sql_name = sql_name
        self.db = db
        self.guard = guard
        self.layout = layout
        count_sql = (
            exp.select(exp.Count(this=exp.Star())).from_(exp.table_(sql_name, quoted=True)).sql("sqlite")
        )
        self.row_count: int = int(db.execute(count_sql).fetchone()[0])
        self._by_exact: dict[str, list[int]] = {}
        self._by_case: dict[str, list[int]] = {}
        self._by_punct: dict[str, list[int]] = {}
        for c in self.columns:
            self._by_exact.setdefault(c.header, []).append(c.index)
            self._by_case.setdefault(_norm_case(c.header), []).append(c.index)
            self._by_punct.setdefault(_norm_punct(c.header), []).append(c.index)

    # ------------------------------------------------------------------ basics
    @property
    def position_sql(self) -> str:
        """The physical column holding a row's place in the table (1, 2, ...): ``r``, or the rowid of a WikiSQL file.

        Example:
            >>> TableData.from_rows(["a"], [["x"]]).position_sql
            'r'
        """
        return POSITION_COLUMN if self.layout == "pyql" else "rowid"

    @property
    def headers(self) -> tuple[str, ...]:
        """The original headers, in order."""
        return tuple(c.header for c in self.columns)

    @property
    def types(self) -> tuple[str, ...]:
        """The column types (``'real'`` or ``'text'``), in order."""
        return tuple(c.type for c in self.columns)

    @property
    def connection(self) -> sqlite3.Connection:
        """The sealed SQLite connection."""
        return self.db.conn

    def __repr__(self) -> str:
        return (
            f"Table(name={self.name!r}, columns={len(self.columns)}, "
            f"rows={self.row_count}, layout={self.layout!r})"
        )

    def __len__(self) -> int:
        return self.row_count

    def close(self) -> None:
        """Close the SQLite connection."""
        self.db.conn.close()

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """A one-paragraph description for a prompt: name, rows, headers and types.

        Example:
            >>> print(TableData.from_rows(["A b", "C"], [["x", "1"]], name="demo").describe())
            Table 'demo' (1 rows). Columns: 'A b' (text), 'C' (real).
        """
        cols = ", ".join(f"{inline(c.header, quotes=True)} ({c.type})" for c in self.columns)
        return f"Table {inline(self.name, quotes=True)} ({self.row_count} rows). Columns: {cols}."

    # -------------------------------------------------------- column matching
    def resolve_column(self, name: str | int | Column) -> Column:
        """Find the column an LLM meant.

        Tried in order, each level accepted only if it matches exactly one
        column: exact header; case- and whitespace-insensitive; also ignoring
        punctuation (``"W-L-T"`` = ``"wlt"``, ``"Year(s) won"`` = ``"years won"``).
        An ``int`` is a 0-based column index (the way to name duplicated headers).

        Args:
            name: a header as written by an LLM, a column index, or a :class:`Column`.

        Returns:
            The matching :class:`Column`.

        Raises:
            UnknownColumnError: nothing matches; carries the closest headers.
            AmbiguousColumnError: several columns match at the first level that matches.

        Example:
            >>> t = TableData.from_rows(["Lyrics theme/style", "W-L-T"], [["Romance", "5-1"]])
            >>> t.resolve_column("lyrics THEME/style").index, t.resolve_column("WLT").index
            (0, 1)
            >>> t.resolve_column("Lyric theme")
            Traceback (most recent call last):
            ...
            pyql_sql.errors.UnknownColumnError: Unknown column 'Lyric theme'. Did you mean 'Lyrics theme/style'? The columns are: 'Lyrics theme/style', 'W-L-T'.
        """
        if isinstance(name, Column):
            if name.index < len(self.columns) and self.columns[name.index] == name:
                return name
            name = name.header
        if isinstance(name, int) and not isinstance(name, bool):
            if 0 <= name < len(self.columns):
                return self.columns[name]
            raise UnknownColumnError(
                f"#{name} (index out of range 0..{len(self.columns) - 1})",
                headers=self.headers,
            )
        if not isinstance(name, str):
            raise UnknownColumnError(repr(name), headers=self.headers)
        for table, key in (
            (self._by_exact, name),
            (self._by_case, _norm_case(name)),
            (self._by_punct, _norm_punct(name)),
        ):
            hits = table.get(key, [])
            if len(hits) == 1:
                return self.columns[hits[0]]
            if len(hits) > 1:
                raise AmbiguousColumnError(
                    name, candidates=[(i, self.columns[i].header) for i in hits]
                )
        raise UnknownColumnError(
            name, suggestions=self.suggest_columns(name), headers=self.headers
        )

    def suggest_columns(self, name: str, n: int = 3) -> list[str]:
        """The headers closest to ``name`` (difflib ratio on normalized text), best first.

        Example:
            >>> TableData.from_rows(["Opponent", "Date"], []).suggest_columns("oponent")
            ['Opponent']
        """
        key = _norm_case(name)
        scored = []
        for c in self.columns:
            ratio = difflib.SequenceMatcher(None, key, _norm_case(c.header)).ratio()
            if ratio >= 0.5:
                scored.append((-ratio, c.index, c.header))
        scored.sort()
        out: list[str] = []
        for _, _, h in scored:
            if h not in out:
                out.append(h)
        return out[:n]

    # ---------------------------------------------------------------- loaders
    @classmethod
    def from_rows(
        cls: type[_T],
        header: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        types: Sequence[str] | None = None,
        name: str = "table",
    ) -> _T:
        """Build a table from a header and rows (layout ``"pyql"``, in memory).

        Args:
            header: the column names, kept as they are (``None`` becomes ``''``).
            rows: one sequence of cells per row, each as long as ``header``.
                Cells may be str, int, float or None.
            types: ``'real'``/``'text'`` per column; inferred when None.
            name: a display name.

        Returns:
            The sealed table.

        Raises:
            TableLoadError: ragged rows, bad types.

        Example:
            >>> t = TableData.from_rows(["Crowd"], [["24,000"], ["9,500"]])
            >>> t.types, t.row_count
            (('real',), 2)
            >>> TableData.from_rows(["a", "b"], [["1"]])
            Traceback (most recent call last):
            ...
            pyql_sql.errors.TableLoadError: Row 0 has 1 cells but the header has 2 columns ('a', 'b').
        """
        headers = _header_texts(header)
        cells = _row_cells(rows, headers)
        col_types = _column_types(cells, types, len(headers))
        db = _pyql_database(cells, len(headers))
        columns = [
            Column(i, headers[i], col_types[i], f"c{i}", f"n{i}") for i in range(len(headers))
        ]
        install_parts(db.conn)
        guard = seal(db.conn)
        return cls(
            name=name, columns=columns, sql_name=PYQL_TABLE, db=db, guard=guard, layout="pyql"
        )

    @classmethod
    def from_csv(
        cls: type[_T],
        path: str | Path,
        *,
        name: str | None = None,
        types: Sequence[str] | None = None,
        delimiter: str = ",",
        encoding: str = "utf-8-sig",
    ) -> _T:
        """Load a CSV file whose first row is the header.

        Args:
            path: the CSV file.
            name: display name (default: the file's stem).
            types: column types; inferred when None.
            delimiter: field separator.
            encoding: file encoding (a UTF-8 BOM is skipped by default).

        Raises:
            TableLoadError: missing file, no header, ragged rows.

        Example:
            >>> import tempfile, os
            >>> p = os.path.join(tempfile.mkdtemp(), "m.csv")
            >>> _ = open(p, "w").write('Home team,Crowd\\n"Geelong, VIC","24,000"\\n')
            >>> t = TableData.from_csv(p)
            >>> t.name, t.headers, t.types
            ('m', ('Home team', 'Crowd'), ('text', 'real'))
        """
        p = Path(path)
        if not p.is_file():
            raise TableLoadError(f"No CSV file at {str(path)!r}.")
        with p.open(newline="", encoding=encoding) as f:
            lines = [row for row in csv.reader(f, delimiter=delimiter) if row]
        if not lines:
            raise TableLoadError(f"CSV file {str(path)!r} is empty: it needs a header row.")
        return cls.from_rows(lines[0], lines[1:], types=types, name=name or p.stem)

    @classmethod
    def from_wikisql_record(cls: type[_T], record: Mapping[str, Any]) -> _T:
        """Build a table from one line of WikiSQL's ``*.tables.jsonl``.

        Args:
            record: a dict with ``id``, ``header``, ``rows`` and (optional) ``types``.

        Example:
            >>> rec = {"id": "1-1000181-1", "header": ["State/territory", "Notes"],
            ...        "types": ["text", "text"], "rows": [["Australian Capital Territory", "No slogan"]]}
            >>> t = TableData.from_wikisql_record(rec)
            >>> t.name, t.headers
            ('1-1000181-1', ('State/territory', 'Notes'))
        """
        for key in ("id", "header", "rows"):
            if key not in record:
                raise TableLoadError(
                    f"WikiSQL table record lacks {key!r}; it needs 'id', 'header', 'rows' (and 'types')."
                )
        return cls.from_rows(
            record["header"], record["rows"], types=record.get("types"), name=str(record["id"])
        )

    @classmethod
    def from_wikisql_jsonl(cls: type[_T], path: str | Path, table_id: str) -> _T:
        """Load table ``table_id`` from a WikiSQL ``*.tables.jsonl`` file.

        Raises:
            TableLoadError: missing file or no such id.

        Example:
            >>> import json, os, tempfile
            >>> p = os.path.join(tempfile.mkdtemp(), "dev.tables.jsonl")
            >>> rec = {"id": "1-10015132-11", "header": ["Player", "No."], "types": ["text", "real"],
            ...        "rows": [["Antonio Lang", 21]]}
            >>> _ = open(p, "w").write(json.dumps(rec) + "\\n")
            >>> t = TableData.from_wikisql_jsonl(p, "1-10015132-11")
            >>> t.types, t.row_count
            (('text', 'real'), 1)
        """
        p = Path(path)
        if not p.is_file():
            raise TableLoadError(f"No WikiSQL tables file at {str(path)!r}.")
        wanted = table_id[len("table_") :].replace("_", "-") if table_id.startswith("table_") else table_id
        with p.open(encoding="utf-8") as f:
            for line in f:
                if wanted not in line:
                    continue
                rec = json.loads(line)
                if rec.get("id") == wanted:
                    return cls.from_wikisql_record(rec)
        raise TableLoadError(f"No table with id {table_id!r} in {str(path)!r}.")

    @classmethod
    def from_wikisql_db(
        cls: type[_T],
        path: str | Path,
        table_id: str,
        *,
        header: Sequence[str] | None = None,
    ) -> _T:
        """Open a table of an official WikiSQL ``*.db`` file, read-only (layout ``"wikisql_db"``).

        The file's table is ``table_<id with - replaced by _>`` with columns
        ``col0..colN`` declared ``real`` or ``text``; header *i* maps to ``col<i>``.

        Args:
            path: the ``.db`` file (opened with ``file:...?mode=ro``).
            table_id: ``"1-1000181-1"`` or ``"table_1_1000181_1"``.
            header: the original headers (from ``*.tables.jsonl``); default ``col0..colN``.

        Raises:
            TableLoadError: missing file/table, columns not ``col0..colN``, header length mismatch.

        Example:
            >>> import os, sqlite3, tempfile
            >>> p = os.path.join(tempfile.mkdtemp(), "dev.db")
            >>> conn = sqlite3.connect(p)
            >>> _ = conn.execute("CREATE TABLE table_1_10015132_11 (col0 text, col1 real)")
            >>> _ = conn.execute("INSERT INTO table_1_10015132_11 VALUES ('antonio lang', 21.0)")
            >>> conn.commit(); conn.close()
            >>> t = TableData.from_wikisql_db(p, "1-10015132-11", header=["Player", "No."])
            >>> t.types, t.columns[1].text_sql, t.layout
            (('text', 'real'), 'col1', 'wikisql_db')
        """
        sql_name = wikisql_table_name(table_id)
        conn = open_readonly_file(path)
        db = sqlite_utils.Database(conn)
        try:
            if not db[sql_name].exists():
                raise TableLoadError(f"No table {sql_name!r} (id {table_id!r}) in {str(path)!r}.")
            declared = [(c.name, c.type) for c in db[sql_name].columns]  # type: ignore[union-attr]
            expected = [f"col{i}" for i in range(len(declared))]
            if [n for n, _ in declared] != expected:
                raise TableLoadError(f"Table {sql_name!r} has columns {[n for n, _ in declared]}; the WikiSQL layout is col0..colN.")
            headers = list(header) if header is not None else expected
            if len(headers) != len(declared):
                raise TableLoadError(
                    f"Got {len(headers)} headers for the {len(declared)} columns of {sql_name!r}."
                )
            columns = []
            for i, (col, decl) in enumerate(declared):
                typ = "real" if decl.strip().lower() == "real" else "text"
                columns.append(Column(i, str(headers[i]), typ, col, col if typ == "real" else None))
        except BaseException:
            conn.close()
            raise
        install_parts(conn)
        guard = seal(conn)
        return cls(
            name=table_id, columns=columns, sql_name=sql_name, db=db, guard=guard, layout="wikisql_db"
        )

    @classmethod
    def from_dbbench(cls: type[_T], item: Mapping[str, Any]) -> _T:
        """Build the table of an AgentBench dbbench item (``table.table_info``).

        dbbench declares every column ``TEXT``; that says nothing, so types are inferred.

        Raises:
            TableLoadError: the item has no ``table.table_info.columns``/``rows``.

        Example:
            >>> item = {"table": {"table_name": "Medal Tally", "table_info": {
            ...     "columns": [{"name": "Nation", "type": "TEXT"}, {"name": "Gold", "type": "TEXT"}],
            ...     "rows": [["Japan", "5"], ["China", "2"]]}}}
            >>> t = TableData.from_dbbench(item)
            >>> t.name, t.types
            ('Medal Tally', ('text', 'real'))
        """
        try:
            info = item["table"]["table_info"]
            header = [c["name"] for c in info["columns"]]
            rows = info["rows"]
        except (KeyError, TypeError) as e:
            raise TableLoadError(
                "A dbbench item needs table.table_info.columns ([{name, type}]) and table.table_info.rows."
            ) from e
        return cls.from_rows(header, rows, name=str(item["table"].get("table_name") or "table"))
