"""WikiSQL: gold queries as step chains, gold SQL text, denotation accuracy.

WikiSQL (Zhong et al., 2017) writes a gold query as
``{"sel": int, "agg": int, "conds": [[col, op, value], ...]}`` with
``agg_ops = ['', 'MAX', 'MIN', 'COUNT', 'SUM', 'AVG']`` and
``cond_ops = ['=', '>', '<', 'OP']`` (``'OP'`` is never used in the data).
:func:`query_from_wikisql` turns one into a PyQL step chain and
:func:`query_to_wikisql` goes back.

Denotation accuracy. WikiSQL's ``evaluate.py`` (salesforce/WikiSQL) executes
the gold and the predicted query with ``lib/dbengine.py``'s ``DBEngine`` on the
same SQLite file (``SELECT agg(col<sel>) AS result FROM table_<id> WHERE
col<i> op :col<i> ...``, string values lower-cased, values of ``real`` columns
parsed as numbers) and counts the prediction correct when ``pred == gold`` —
equality of the two *lists* of results: no numeric tolerance, no set
semantics; a prediction that fails to execute is wrong. Both queries scan the
same table, so equal row sets come in equal order.
:func:`execution_match` does the same with pyql_sql's executor, with one
deliberate change: values are compared after :func:`normalize_denotation`
(numbers by value, so ``5``, ``5.0`` and ``"5"`` agree; text stripped and
case-folded), because our executor returns cells as the table shows them.
``ordered=False`` compares multisets instead.

Labels. Datasets that ship the gold *answer* instead of a query (AgentBench's
dbbench) are checked with :func:`label_match`: multiset comparison of
normalized values, where the label ``['none']`` (dbbench's rendering of an
empty or NULL result) also matches ``[]`` and ``[None]``.

Gold SQL text. :func:`parse_gold_sql` reads SQL text such as dbbench's
``SELECT Presentation of Credentials FROM table WHERE Termination of Mission = August 15, 2000``
(unquoted headers with spaces) into the WikiSQL form by matching the table's
real headers at each column position, longest header first. It reports texts
that are not a SELECT, not of WikiSQL's shape (one select column, optional
aggregation, AND-ed ``=``/``>``/``<`` conditions) or malformed, with a reason.

Example:
    >>> from pyql_sql import Table, Executor
    >>> t = Table.from_rows(["Round", "Fastest Lap"], [["5", "Takashi Kogure"], ["13", "Takashi Kogure"]])
    >>> p = parse_gold_sql("SELECT MIN(Round) FROM `Race Results` WHERE `Fastest Lap` = 'Takashi Kogure';", t.headers)
    >>> p.status, p.gold
    ('ok', {'sel': 0, 'agg': 2, 'conds': [[1, 0, 'Takashi Kogure']]})
    >>> q = query_from_wikisql(t, p.gold)
    >>> q.actions()
    ['add_condition(Fastest Lap, =, Takashi Kogure)', 'set_answer(Round, MIN)']
    >>> label_match(Executor(t).execute(q), ["5.0"])
    True
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import SQLError, WikiSQLFormatError
from .executor import Answer, Executor
from .numbers import parse_number
from .query import TableQuery
from .table import Table

__all__ = [
    "AGG_OPS",
    "COND_OPS",
    "query_from_wikisql",
    "query_to_wikisql",
    "normalize_denotation",
    "denotation_equal",
    "execution_match",
    "label_match",
    "GoldParse",
    "parse_gold_sql",
]

#: WikiSQL's aggregation codes (``agg`` index).
AGG_OPS: tuple[str, ...] = ("", "MAX", "MIN", "COUNT", "SUM", "AVG")
#: WikiSQL's condition operator codes (``op`` index); ``'OP'`` is a placeholder.
COND_OPS: tuple[str, ...] = ("=", ">", "<", "OP")

#: ``num_re`` of WikiSQL's ``lib/dbengine.py``: its fallback for values of real columns.
_WIKISQL_NUMBER = re.compile(r"[-+]?\d*\.\d+|\d+")


# --------------------------------------------------------------------------
# gold dict <-> step chain
# --------------------------------------------------------------------------
def _index(value: object, size: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise WikiSQLFormatError(f"{what} must be an int in 0..{size - 1}, got {value!r}.")
    return value


def query_from_wikisql(table: Table, gold: Mapping[str, Any]) -> TableQuery:
    """Turn a WikiSQL gold query into a PyQL step chain on ``table``.

    The chain is one ``add_condition`` per condition, in order, then ``set_answer``.
    As in WikiSQL's ``DBEngine``, a string value on a numeric column that is not
    a number is replaced by the first number in it (``"12 (5)"`` -> ``"12"``).

    Args:
        table: the table the query is about (header *i* is WikiSQL column *i*).
        gold: ``{"sel": int, "agg": int, "conds": [[col, op, value], ...]}``.

    Raises:
        WikiSQLFormatError: missing keys, indices out of range, the ``'OP'`` placeholder.

    Example:
        >>> t = Table.from_rows(["Player", "Points"], [["Ann", "11"]])
        >>> query_from_wikisql(t, {"sel": 0, "agg": 0, "conds": [[1, 1, 10]]}).actions()
        ['add_condition(Points, >, 10)', 'set_answer(Player, None)']
    """
    for key in ("sel", "agg"):
        if key not in gold:
            raise WikiSQLFormatError(f"A WikiSQL query needs 'sel', 'agg' and 'conds'; {key!r} is missing.")
    width = len(table.columns)
    sel = _index(gold["sel"], width, "sel")
    agg = _index(gold["agg"], len(AGG_OPS), "agg")
    query = table.query()
    for n, cond in enumerate(gold.get("conds") or []):
        if not isinstance(cond, (list, tuple)) or len(cond) != 3:
            raise WikiSQLFormatError(f"Condition {n} must be [column, op, value], got {cond!r}.")
        col = _index(cond[0], width, f"conds[{n}] column")
        op = _index(cond[1], 3, f"conds[{n}] op (0 '=', 1 '>', 2 '<')")
        value = cond[2]
        if table.columns[col].is_numeric and isinstance(value, str) and parse_number(value) is None:
            found = _WIKISQL_NUMBER.findall(value)
            if found:
                value = found[0]
        query = query.add_condition(col, COND_OPS[op], value)
    return query.set_answer(sel, AGG_OPS[agg] or None)


def query_to_wikisql(query: TableQuery) -> dict[str, Any]:
    """The WikiSQL form of a step chain (for logical-form comparison).

    Raises:
        WikiSQLFormatError: no answer yet, or an operator WikiSQL lacks (``>=``, ``<=``, ``!=``).

    Example:
        >>> t = Table.from_rows(["Player", "Points"], [["Ann", "11"]])
        >>> query_to_wikisql(t.query().set_answer("Points", "max").add_condition("Player", "=", "Ann"))
        {'sel': 1, 'agg': 1, 'conds': [[0, 0, 'Ann']]}
    """
    answer = query.answer
    if answer is None:
        raise WikiSQLFormatError("The query has no answer (set_answer) so it has no WikiSQL form.")
    conds = []
    for step in query.conditions:
        if step.op not in COND_OPS[:3]:
            raise WikiSQLFormatError(
                f"Operator {step.op!r} has no WikiSQL code; WikiSQL only has =, >, <."
            )
        conds.append([step.column.index, COND_OPS.index(step.op), step.value])
    return {"sel": answer.column.index, "agg": AGG_OPS.index(answer.aggregation or ""), "conds": conds}


# --------------------------------------------------------------------------
# denotations
# --------------------------------------------------------------------------
def normalize_denotation(value: object) -> tuple[str, Any]:
    """A hashable, comparable key for one answer value.

    Numbers (and strings that are numbers, e.g. ``"32,502"``, ``"1.0"``) become
    ``("num", x)`` with x rounded to 12 significant digits; None becomes
    ``("null", "")``; other text is stripped and case-folded.

    Example:
        >>> normalize_denotation("32,502") == normalize_denotation(32502.0)
        True
        >>> normalize_denotation(" K255AZ "), normalize_denotation(None)
        (('text', 'k255az'), ('null', ''))
    """
    if isinstance(value, Answer):
        value = value.value
    if value is None:
        return ("null", "")
    number = parse_number(value)
    if number is not None:
        return ("num", float(f"{number:.12g}"))
    return ("text", str(value).strip().casefold())


def _values(items: Iterable[object]) -> list[object]:
    return [i.value if isinstance(i, Answer) else i for i in items]


def denotation_equal(pred: Iterable[object], gold: Iterable[object], *, ordered: bool = False) -> bool:
    """Compare two answer lists (values or :class:`Answer`) after normalization.

    Args:
        pred: predicted values.
        gold: gold values.
        ordered: True compares lists (WikiSQL's ``pred == gold``), False multisets.

    Example:
        >>> denotation_equal(["b", "a"], ["A", "B"]), denotation_equal(["b", "a"], ["A", "B"], ordered=True)
        (True, False)
        >>> denotation_equal([1], ["1.0", "1.0"])
        False
    """
    p = [normalize_denotation(v) for v in _values(pred)]
    g = [normalize_denotation(v) for v in _values(gold)]
    if ordered:
        return p == g
    return Counter(p) == Counter(g)


def execution_match(
    executor: Executor, pred: TableQuery, gold: TableQuery, *, ordered: bool = True
) -> bool:
    """WikiSQL's execution accuracy for one example: run both, compare results.

    A prediction that fails to run (any :class:`~pyql_sql.errors.SQLError`) is
    wrong; the gold query must run.

    Example:
        >>> t = Table.from_rows(["a", "b"], [["1", "x"], ["2", "y"]])
        >>> ex = Executor(t)
        >>> g = t.query().add_condition("b", "=", "y").set_answer("a")
        >>> p = t.query().add_condition("a", ">", 1).set_answer("a")
        >>> execution_match(ex, p, g), execution_match(ex, t.query().set_answer("a"), g)
        (True, False)
    """
    gold_result = executor.execute(gold)
    try:
        pred_result = executor.execute(pred)
    except SQLError:
        return False
    return denotation_equal(pred_result, gold_result, ordered=ordered)


def label_match(answers: Iterable[object], label: Sequence[object]) -> bool:
    """Compare executed answers with a gold answer list (multiset, normalized).

    The label ``['none']`` (how dbbench writes an empty or NULL result) also
    matches ``[]`` and ``[None]``.

    Example:
        >>> label_match([], ["none"]), label_match([Answer(None)], ["none"]), label_match([2], ["2.0"])
        (True, True, True)
    """
    values = _values(answers)
    if [str(x).strip().lower() for x in label] == ["none"] and values in ([], [None]):
        return True
    return denotation_equal(values, label)


# --------------------------------------------------------------------------
# gold SQL text -> WikiSQL form
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class GoldParse:
    """The result of :func:`parse_gold_sql`.

    Attributes:
        status: ``"ok"`` (WikiSQL shape; :attr:`gold` is set), ``"not_select"``,
            ``"not_wikisql_shape"`` or ``"malformed"``.
        reason: why it is not ``"ok"`` (None when ok).
        gold: the WikiSQL form ``{"sel", "agg", "conds"}`` when ok.
        repairs: what ``repair=True`` changed in the text.
    """

    status: str
    reason: str | None = None
    gold: dict[str, Any] | None = None
    repairs: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when the text is a WikiSQL-shaped query."""
        return self.status == "ok"


class _Reject(Exception):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


_GLUED_KEYWORDS = re.compile(r"(?<=[0-9A-Za-z_])(FROM|WHERE|LIMIT|ORDER BY|GROUP BY)(?=[\s\[\"'`(;]|$)")
_CLOSE = {"'": "'", '"': '"', "`": "`", "[": "]"}
_NOT_SHAPE_CLAUSES = {
    "ORDER": "an ORDER BY clause",
    "GROUP": "a GROUP BY clause",
    "LIMIT": "a LIMIT clause",
    "HAVING": "a HAVING clause",
    "UNION": "a UNION",
    "JOIN": "a JOIN",
    "INNER": "a JOIN",
    "LEFT": "a JOIN",
    "OR": "OR-ed conditions",
}
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")


def _mask_quotes(text: str) -> str:
    """Replace characters inside quotes/brackets by NUL (quote characters are kept)."""
    out = list(text)
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in _CLOSE:
            close = _CLOSE[ch]
            j = i + 1
            while j < len(text):
                if text[j] == close:
                    if close != "]" and j + 1 < len(text) and text[j + 1] == close:
                        out[j] = out[j + 1] = "\0"
                        j += 2
                        continue
                    break
                out[j] = "\0"
                j += 1
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _glued(text: str, headers: Sequence[str]) -> list[tuple[int, str, str]]:
    """Keywords glued to the preceding word: (position, keyword, glued word)."""
    masked = _mask_quotes(text)
    header_keys = {h.casefold() for h in headers}
    found = []
    for m in _GLUED_KEYWORDS.finditer(masked):
        start = m.start()
        w = start
        while w > 0 and (masked[w - 1].isalnum() or masked[w - 1] == "_"):
            w -= 1
        word = text[w : m.end()]
        if word.casefold() in header_keys:
            continue
        found.append((start, m.group(1), word))
    return found


class _GoldParser:
    def __init__(self, text: str, headers: Sequence[str]) -> None:
        self.s = text
        self.i = 0
        self.headers = list(headers)
        self.by_length = sorted(
            (i for i, h in enumerate(self.headers) if h), key=lambda i: (-len(self.headers[i]), i)
        )

    # -- lexing helpers ---------------------------------------------------
    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def rest(self, n: int = 40) -> str:
        r = self.s[self.i : self.i + n]
        return r + ("..." if self.i + n < len(self.s) else "")

    def keyword(self, *words: str) -> str | None:
        """Consume one of the keywords (case-insensitive, whole word) if next."""
        self.ws()
        for w in words:
            pattern = r"\s+".join(re.escape(part) for part in w.split()) + r"(?![0-9A-Za-z_])"
            m = re.compile(pattern, re.I).match(self.s, self.i)
            if m:
                self.i = m.end()
                return w
        return None

    def at_end(self) -> bool:
        self.ws()
        j = self.i
        while j < len(self.s) and (self.s[j] == ";" or self.s[j].isspace()):
            j += 1
        return j == len(self.s)

    def quoted(self) -> str | None:
        self.ws()
        if self.i >= len(self.s) or self.s[self.i] not in _CLOSE:
            return None
        close = _CLOSE[self.s[self.i]]
        j = self.i + 1
        buf = []
        while j < len(self.s):
            ch = self.s[j]
            if ch == close:
                if close != "]" and j + 1 < len(self.s) and self.s[j + 1] == close:
                    buf.append(ch)
                    j += 2
                    continue
                self.i = j + 1
                return "".join(buf)
            buf.append(ch)
            j += 1
        raise _Reject("malformed", f"unclosed quote {self.s[self.i]} at {self.rest()!r}")

    # -- grammar ----------------------------------------------------------
    def column(self, where: str) -> int:
        self.ws()
        start = self.i
        name = self.quoted()
        if name is not None:
            exact = [i for i, h in enumerate(self.headers) if h == name]
            loose = [i for i, h in enumerate(self.headers) if h.casefold() == name.casefold()]
            hits = exact or loose
            if len(hits) == 1:
                return hits[0]
            if hits:
                raise _Reject("malformed", f"column {name!r} in {where} matches several headers")
            raise _Reject("malformed", f"unknown column {name!r} in {where}")
        for idx in self.by_length:
            h = self.headers[idx]
            end = start + len(h)
            if self.s[start:end].casefold() != h.casefold():
                continue
            word_end = h[-1].isalnum() or h[-1] == "_"
            if word_end and end < len(self.s) and (self.s[end].isalnum() or self.s[end] == "_"):
                continue
            self.i = end
            return idx
        raise _Reject("malformed", f"no header of the table at {self.rest()!r} in {where}")

    def clause_break(self) -> None:
        """After a complete part: end, or a clause WikiSQL does not have, or garbage."""
        word = self.keyword(*_NOT_SHAPE_CLAUSES)
        if word is not None:
            raise _Reject("not_wikisql_shape", f"it has {_NOT_SHAPE_CLAUSES[word]}")
        if not self.at_end():
            raise _Reject("malformed", f"unexpected text at {self.rest()!r}")

    def _condition_follows(self, pos: int) -> bool:
        """True when a ``column op`` starts at ``pos`` (used to split bare values at AND)."""
        probe = _GoldParser(self.s, self.headers)
        probe.i = pos
        try:
            probe.column("the WHERE clause")
        except _Reject:
            return False
        probe.ws()
        return re.compile(r"<>|!=|>=|<=|==|=|<|>|(?:LIKE|IN|BETWEEN|IS|NOT|GLOB)(?![0-9A-Za-z_])", re.I).match(
            probe.s, probe.i
        ) is not None

    def value(self) -> object:
        self.ws()
        if self.i < len(self.s) and self.s[self.i] in "'\"":
            return self.quoted()
        tail = re.compile(
            r"\s+(AND|OR|ORDER\s+BY|GROUP\s+BY|LIMIT|HAVING|UNION)(?![0-9A-Za-z_])|\s*;?\s*$", re.I
        )
        m = _NUMBER.match(self.s, self.i)
        if m and tail.match(self.s, m.end()):
            self.i = m.end()
            text = m.group(0)
            return int(text) if re.fullmatch(r"[-+]?\d+", text) else float(text)
        # a bare value ends at the end, at a clause keyword, or at an AND/OR that
        # is followed by another condition ("Brighton and Hove Albion" stays whole)
        stop = len(self.s)
        for end in tail.finditer(self.s, self.i):
            word = (end.group(1) or "").upper()
            if word in ("AND", "OR") and not self._condition_follows(end.end()):
                continue
            stop = end.start()
            break
        raw = self.s[self.i : stop].strip()
        if not raw:
            raise _Reject("malformed", f"missing value at {self.rest()!r}")
        self.i = stop
        return raw

    def parse(self) -> dict[str, Any]:
        """The WikiSQL form of the whole text: SELECT part, FROM part, WHERE conditions, nothing else."""
        self.ws()
        if self.keyword("SELECT") is None:
            m = re.match(r"\s*([A-Za-z]+)", self.s)
            if not m:
                raise _Reject("not_select", "empty text")
            what = m.group(1).upper()
            article = "an" if what[0] in "AEIOU" else "a"
            raise _Reject("not_select", f"{article} {what} statement, not a SELECT query")
        sel, agg = self.selected()
        self.table_name()
        conds = self.conditions() if self.keyword("WHERE") else []
        self.clause_break()
        return {"sel": sel, "agg": agg, "conds": conds}

    def selected(self) -> tuple[int, int]:
        """After SELECT: the one column, its aggregation code, an optional alias."""
        if self.keyword("DISTINCT"):
            raise _Reject("not_wikisql_shape", "it has SELECT DISTINCT")
        self.ws()
        if self.s.startswith("*", self.i):
            raise _Reject("not_wikisql_shape", "it selects * instead of one column")
        agg = 0
        m = re.compile(r"(MAX|MIN|COUNT|SUM|AVG)\s*\(", re.I).match(self.s, self.i)
        if m:
            agg = AGG_OPS.index(m.group(1).upper())
            self.i = m.end()
            self.ws()
            if self.s.startswith("*", self.i):
                raise _Reject("not_wikisql_shape", f"{m.group(1).upper()}(*) has no column")
            if self.keyword("DISTINCT"):
                raise _Reject("not_wikisql_shape", "it aggregates DISTINCT values")
            sel = self.column("the select clause")
            self.ws()
            if not self.s.startswith(")", self.i):
                raise _Reject("malformed", f"expected ')' at {self.rest()!r}")
            self.i += 1
        else:
            try:
                sel = self.column("the select clause")
            except _Reject:
                f = re.compile(r"([A-Za-z_]+)\s*\(").match(self.s, self.i)
                if f:
                    raise _Reject("not_wikisql_shape", f"it selects {f.group(1)}(...), not a column") from None
                raise
        if self.keyword("AS"):
            if self.quoted() is None:
                m = re.compile(r"\s*[0-9A-Za-z_]+").match(self.s, self.i)
                if not m:
                    raise _Reject("malformed", f"missing alias after AS at {self.rest()!r}")
                self.i = m.end()
        return sel, agg

    def table_name(self) -> None:
        """``FROM table`` (the name is skipped, not checked); a second selected column is rejected first."""
        self.ws()
        if self.s.startswith(",", self.i):
            raise _Reject("not_wikisql_shape", "it selects several columns")
        if self.keyword("FROM") is None:
            raise _Reject("malformed", f"expected FROM at {self.rest()!r}")
        if self.quoted() is None:
            m = re.compile(
                r"\s*(.+?)(?=\s*(?:;|$)|\s+(?:WHERE|ORDER|GROUP|LIMIT|JOIN|INNER|LEFT|UNION|HAVING)(?![0-9A-Za-z_]))",
                re.I | re.S,
            ).match(self.s, self.i)
            if not m:
                raise _Reject("malformed", f"missing table name at {self.rest()!r}")
            self.i = m.end()

    def conditions(self) -> list[list[Any]]:
        """After WHERE: AND-ed ``column op value`` conditions in WikiSQL's form."""
        conds: list[list[Any]] = []
        while True:
            col = self.column("the WHERE clause")
            self.ws()
            m = re.compile(r"<>|!=|>=|<=|==|=|<|>").match(self.s, self.i)
            if not m:
                word = re.compile(r"[A-Za-z]+").match(self.s, self.i)
                if word and word.group(0).upper() in {"LIKE", "IN", "BETWEEN", "IS", "NOT", "GLOB"}:
                    raise _Reject("not_wikisql_shape", f"it uses the {word.group(0).upper()} operator")
                raise _Reject("malformed", f"expected an operator at {self.rest()!r}")
            op = "=" if m.group(0) == "==" else m.group(0)
            if op not in COND_OPS[:3]:
                raise _Reject("not_wikisql_shape", f"operator {op!r} is not one of WikiSQL's =, >, <")
            self.i = m.end()
            conds.append([col, COND_OPS.index(op), self.value()])
            if self.keyword("AND") is None:
                return conds


def parse_gold_sql(sql: str, headers: Sequence[str], *, repair: bool = False) -> GoldParse:
    """Read a gold SQL text into WikiSQL's form, matching the table's real headers.

    Column names may be quoted (``"..."``, ```...```, ``[...]``, ``'...'``)
    or bare with spaces; a bare name is matched against the headers longest
    first. Values may be quoted, numbers, or bare text up to the next
    ``AND``/clause/end. The table name is not checked. A trailing ``;`` is fine.

    Args:
        sql: the SQL text.
        headers: the table's headers (column *i* of the result is header *i*).
        repair: insert the missing space in keywords glued to the preceding
            word (``AverageFROM`` -> ``Average FROM``) instead of rejecting the
            text as malformed; the fixes are listed in :attr:`GoldParse.repairs`.

    Returns:
        A :class:`GoldParse`.

    Example:
        >>> h = ["Representative", "Presentation of Credentials", "Termination of Mission"]
        >>> parse_gold_sql("SELECT Presentation of Credentials FROM table WHERE Termination of Mission = August 15, 2000", h).gold
        {'sel': 1, 'agg': 0, 'conds': [[2, 0, 'August 15, 2000']]}
        >>> parse_gold_sql("SELECT Representative FROM t ORDER BY Representative LIMIT 1", h).reason
        'it has an ORDER BY clause'
        >>> p = parse_gold_sql("SELECT RepresentativeFROM t", h)
        >>> p.status, p.reason
        ('malformed', "keyword FROM glued to the preceding word in 'RepresentativeFROM'")
        >>> parse_gold_sql("SELECT RepresentativeFROM t", h, repair=True).repairs
        ("inserted a space before FROM in 'RepresentativeFROM'",)
        >>> parse_gold_sql("UPDATE t SET a = 1", h).status
        'not_select'
    """
    text = sql.strip()
    repairs: list[str] = []
    if re.match(r"\s*SELECT(?![0-9A-Za-z_])", text, re.I):
        glued = _glued(text, headers)
        if glued and not repair:
            reason = "; ".join(f"keyword {kw} glued to the preceding word in {word!r}" for _, kw, word in glued)
            return GoldParse("malformed", reason)
        for pos, kw, word in sorted(glued, reverse=True):
            text = text[:pos] + " " + text[pos:]
            repairs.append(f"inserted a space before {kw} in {word!r}")
        repairs.reverse()
    try:
        gold = _GoldParser(text, headers).parse()
    except _Reject as r:
        return GoldParse(r.status, r.reason, None, tuple(repairs))
    return GoldParse("ok", None, gold, tuple(repairs))
