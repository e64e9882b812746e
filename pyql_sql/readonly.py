"""Read-only SQLite connections.

Tables are queried by code an LLM wrote, so the connection itself must refuse
to change anything, whatever SQL reaches it. Two independent locks are used:

1. ``PRAGMA query_only=ON`` (and, for files, opening them with the
   ``file:...?mode=ro`` URI), so SQLite refuses every write;
2. an authorizer (:meth:`sqlite3.Connection.set_authorizer`) that allows only
   ``SELECT``, reading columns, calling functions (except a few dangerous ones)
   and recursive CTEs; everything else — INSERT, UPDATE, DELETE, CREATE, DROP,
   ALTER, ATTACH, DETACH, PRAGMA (so ``PRAGMA query_only=OFF`` is refused too),
   transactions — is denied when the statement is prepared.

Sealing also replaces SQLite's ASCII-only ``LOWER`` with Python's
:meth:`str.lower`, so case-insensitive text equality works for every script
(``LOWER('ÉCOLE') = 'école'``).

Example:
    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.execute("CREATE TABLE t (a TEXT)")
    >>> guard = seal(conn)
    >>> conn.execute("SELECT LOWER('ÉCOLE')").fetchone()[0]
    'école'
    >>> try:
    ...     conn.execute("INSERT INTO t VALUES ('x')")
    ... except sqlite3.DatabaseError as e:
    ...     print(e, guard.denied)
    not authorized ['INSERT']
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .errors import TableLoadError

__all__ = ["ReadOnlyGuard", "seal", "open_readonly_file", "ALLOWED_ACTIONS"]

_SQLITE_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)

#: Authorizer action codes that are allowed on a sealed connection.
ALLOWED_ACTIONS: frozenset[int] = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, _SQLITE_RECURSIVE}
)

#: SQL functions that are refused even in a SELECT.
DENIED_FUNCTIONS: frozenset[str] = frozenset(
    {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
)

_ACTION_NAMES: dict[int, str] = {}
for _name in (
    "CREATE_INDEX CREATE_TABLE CREATE_TEMP_INDEX CREATE_TEMP_TABLE CREATE_TEMP_TRIGGER "
    "CREATE_TEMP_VIEW CREATE_TRIGGER CREATE_VIEW DELETE DROP_INDEX DROP_TABLE "
    "DROP_TEMP_INDEX DROP_TEMP_TABLE DROP_TEMP_TRIGGER DROP_TEMP_VIEW DROP_TRIGGER "
    "DROP_VIEW INSERT PRAGMA READ SELECT TRANSACTION UPDATE ATTACH DETACH ALTER_TABLE "
    "REINDEX ANALYZE CREATE_VTABLE DROP_VTABLE FUNCTION SAVEPOINT"
).split():
    _code = getattr(sqlite3, "SQLITE_" + _name, None)
    if isinstance(_code, int):
        _ACTION_NAMES[_code] = _name
_ACTION_NAMES[_SQLITE_RECURSIVE] = "RECURSIVE"


def _lower(value: object) -> object:
    if value is None or isinstance(value, bytes):
        return value
    return str(value).lower()


class ReadOnlyGuard:
    """The authorizer installed by :func:`seal`; remembers what it refused.

    Attributes:
        denied: names of the actions denied since the last :meth:`reset`, in
            order (``'INSERT'``, ``'PRAGMA'``, ``'ATTACH'``,
            ``'FUNCTION load_extension'`` ...). SQLite may ask about several
            actions for one statement (``DROP TABLE`` is first seen as a
            ``DELETE`` from ``sqlite_master``).

    Example:
        >>> import sqlite3
        >>> g = ReadOnlyGuard()
        >>> g(sqlite3.SQLITE_SELECT, None, None, None, None) == sqlite3.SQLITE_OK
        True
        >>> g(sqlite3.SQLITE_INSERT, "t", None, "main", None) == sqlite3.SQLITE_DENY
        True
        >>> g.denied
        ['INSERT']
    """

    def __init__(self) -> None:
        self.denied: list[str] = []

    def reset(self) -> None:
        """Forget what was denied so far (call before running a statement)."""
        self.denied.clear()

    def __call__(
        self,
        action: int,
        arg1: str | None,
        arg2: str | None,
        dbname: str | None,
        source: str | None,
    ) -> int:
        if action in ALLOWED_ACTIONS:
            if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
                self.denied.append(f"FUNCTION {arg2}")
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        self.denied.append(_ACTION_NAMES.get(action, f"action {action}"))
        return sqlite3.SQLITE_DENY


def seal(conn: sqlite3.Connection) -> ReadOnlyGuard:
    """Make ``conn`` read-only for good: ``query_only`` plus a deny-by-default authorizer.

    Call it once the tables are built. Afterwards only SELECT statements run.

    Args:
        conn: an open connection.

    Returns:
        The installed :class:`ReadOnlyGuard` (to learn what was denied).

    Example:
        >>> import sqlite3
        >>> conn = sqlite3.connect(":memory:")
        >>> _ = seal(conn)
        >>> conn.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 3) SELECT COUNT(*) FROM r").fetchone()
        (3,)
    """
    conn.create_function("lower", 1, _lower, deterministic=True)
    conn.execute("PRAGMA query_only=ON")
    guard = ReadOnlyGuard()
    conn.set_authorizer(guard)
    return guard


def open_readonly_file(path: str | Path) -> sqlite3.Connection:
    """Open an existing SQLite file with the ``file:...?mode=ro`` URI (not sealed yet).

    Args:
        path: the database file.

    Returns:
        A connection that SQLite itself opened read-only.

    Raises:
        TableLoadError: the file does not exist or is not a SQLite database.

    Example:
        >>> open_readonly_file("/nonexistent/x.db")
        Traceback (most recent call last):
        ...
        pyql_sql.errors.TableLoadError: No SQLite file at '/nonexistent/x.db'.
    """
    p = Path(path)
    if not p.is_file():
        raise TableLoadError(f"No SQLite file at {str(path)!r}.")
    uri = p.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as e:
        raise TableLoadError(f"{str(path)!r} is not a readable SQLite database: {e}.") from e
    return conn
