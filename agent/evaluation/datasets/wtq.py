"""The ``wtq`` format: WikiTableQuestions examples (``data/*.tsv``), and WTQ's own denotation rules.

Records: a TSV with the header ``id  utterance  context  targetValue``,
the tables read from ``csv/`` beside ``data/`` (:func:`read_wtq_table`:
WTQ's CSV escapes as WTQ writes them). The gold values carry their
canonical form (``{"value", "canon"}``, ``targetCanon`` of WTQ's
``tagged/data/*.tagged``, read as the official evaluator does); without
the tagged files the raw ``targetValue`` is used and the load notes it. A
``.tagged`` file is a data set too. Runs are scored with WTQ's value rules
(:func:`wtq_denotation_match`, this format's denotation hook) instead of
``label_match``.

Example:
    >>> is_wtq_header("id\\tutterance\\tcontext\\ttargetValue"), wtq_denotation_match(["22.0"], ["22"])
    (True, True)
"""

from __future__ import annotations

import csv
import math
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.reading import read_text
from agent.evaluation.datasets.registry import Source, dataset_format
from pyql.lines import split_lines

__all__ = ["is_wtq_header", "load_wtq", "read_wtq_table", "wtq_denotation_match", "wtq_normalize", "wtq_value"]

_WTQ_HEADER = "id\tutterance\tcontext\ttargetValue"

_SMOKE = {
    "wtq": {
        "data": "wtq/data/training-before300.tsv",
        "kb": None,
        "profile": "freebase",
        "actions": "wtq/gold_actions.json",
        "readi": "wtq/gold_readi.json",
    },
}


def is_wtq_header(line: str) -> bool:
    """WTQ's TSV header (``id, utterance, context, targetValue``, more columns in a ``.tagged`` file).

    Example:
        >>> is_wtq_header("id\\tutterance\\tcontext\\ttargetValue\\ttokens"), is_wtq_header("id\\tquestion")
        (True, False)
    """
    return line.rstrip("\r") == _WTQ_HEADER or line.startswith(_WTQ_HEADER + "\t")


# ---------------------------------------------------------------------------
# WikiTableQuestions denotation (the value rules of WTQ's official evaluator)

_WTQ_QUOTES = (re.compile("[\u2018\u2019\u00b4`]"), "'")
_WTQ_DQUOTES = (re.compile("[\u201c\u201d]"), '"')
_WTQ_DASHES = (re.compile("[\u2010\u2011\u2012\u2013\u2014\u2212]"), "-")
_WTQ_CITATION = re.compile(r"((?<!^)\[[^\]]*\]|\[\d+\]|[\u2022\u2666\u2020\u2021*#+])*$")
_WTQ_PARENS = re.compile(r"(?<!^)( \([^)]*\))*$")
_WTQ_OUTER_QUOTES = re.compile(r'^"([^"]*)"$')


def wtq_normalize(text: Any) -> str:
    """WTQ's string normalization: accents and quote/dash variants unified, trailing
    citations (``[1]``, ``*``) and parenthesized details dropped, outer quotes and a
    final period removed, spaces collapsed, lower case.

    Example:
        >>> wtq_normalize("Café Nouveau (band)[2]"), wtq_normalize('"Yes."'), wtq_normalize("1–0")
        ('cafe nouveau', 'yes', '1-0')
    """
    x = "".join(c for c in unicodedata.normalize("NFKD", str(text)) if unicodedata.category(c) != "Mn")
    for pattern, repl in (_WTQ_QUOTES, _WTQ_DQUOTES, _WTQ_DASHES):
        x = pattern.sub(repl, x)
    while True:
        old = x
        x = _WTQ_CITATION.sub("", x.strip())
        x = _WTQ_PARENS.sub("", x.strip())
        x = _WTQ_OUTER_QUOTES.sub(r"\1", x.strip())
        if x == old:
            break
    x = x.removesuffix(".")
    return re.sub(r"\s+", " ", x).lower().strip()


def _wtq_number(text: str) -> float | None:
    try:
        return float(int(text))
    except ValueError:
        pass
    try:
        amount = float(text)
    except ValueError:
        return None
    return None if math.isnan(amount) or math.isinf(amount) else amount


def _wtq_date(text: str) -> tuple[int, int, int] | None:
    parts = text.lower().split("-")
    if len(parts) != 3:
        return None
    try:
        year = -1 if parts[0] in ("xx", "xxxx") else int(parts[0])
        month = -1 if parts[1] == "xx" else int(parts[1])
        day = -1 if parts[2] == "xx" else int(parts[2])
    except ValueError:
        return None
    if year == month == day == -1 or not (month == -1 or 1 <= month <= 12) or not (day == -1 or 1 <= day <= 31):
        return None
    return year, month, day


def _wtq_text(value: Any) -> str:
    if isinstance(value, Mapping):
        value = value.get("value")
    return "" if value is None else str(value).strip()


def wtq_value(value: Any) -> tuple[str, Any]:
    """One answer as a WTQ value: ``("number", x)``, ``("date", (y, m, d))`` or ``("string", text)``.

    As in WTQ's evaluator (``to_value``), a value that reads as a number is a
    number, a ``yyyy-mm-dd`` date (``xx`` for an unknown part) is a date, and a
    date with only a year is the number of that year. A gold value that
    carries WTQ's CoreNLP canonical form (``{"value": "Season 2", "canon":
    "2.0"}``, from ``tagged/data/*.tagged``) is read from its canonical form,
    as the official evaluator does with ``targetCanon``.

    Example:
        >>> wtq_value("22"), wtq_value("1994-xx-xx"), wtq_value("2009-11-xx"), wtq_value(" Hama ")
        (('number', 22.0), ('number', 1994.0), ('date', (2009, 11, -1)), ('string', 'hama'))
        >>> wtq_value({"value": "December 6, 2010", "canon": "2010-12-06"}), wtq_value("December 6, 2010")
        (('date', (2010, 12, 6)), ('string', 'december 6, 2010'))
    """
    text = _wtq_text(value)
    canon = value.get("canon") if isinstance(value, Mapping) else None
    source = str(canon).strip() if canon else text
    amount = _wtq_number(source)
    if amount is not None:
        return ("number", amount)
    date = _wtq_date(source)
    if date is not None:
        return ("number", float(date[0])) if date[1] == date[2] == -1 else ("date", date)
    return ("string", wtq_normalize(text))


def _wtq_match(target: Any, predicted: Any) -> bool:
    """The official ``target.match(predicted)``: the same normalized text, or equal numbers or dates."""
    if wtq_normalize(_wtq_text(target)) == wtq_normalize(_wtq_text(predicted)):
        return True
    t, p = wtq_value(target), wtq_value(predicted)
    if t[0] == "number" and p[0] == "number":
        return abs(t[1] - p[1]) < 1e-6
    return t[0] == "date" and p[0] == "date" and t[1] == p[1]


def _wtq_distinct(values: Sequence[Any]) -> list[Any]:
    """The values once each, as the evaluator's ``set`` of values (numbers by amount, dates by day, text normalized)."""
    seen: dict[tuple[str, Any], Any] = {}
    for v in values:
        seen.setdefault(wtq_value(v), v)
    return list(seen.values())


def wtq_denotation_match(predicted: Sequence[Any], gold: Sequence[Any]) -> bool:
    """WTQ's denotation accuracy for one question (``check_denotation`` of the official evaluator):
    as many distinct predictions as distinct gold values, and every gold value matched by a
    prediction (:func:`wtq_value`; gold values may carry their canonical form).

    Example:
        >>> wtq_denotation_match([{"value": "10.0"}], ["10"]), wtq_denotation_match(["Abu al-Duhur"], ["abu al-duhur"])
        (True, True)
        >>> wtq_denotation_match(["Morocco", "France"], ["Morocco", "France", "Spain"])
        False
        >>> wtq_denotation_match(["2"], ["Season 2"]), wtq_denotation_match(["2"], [{"value": "Season 2", "canon": "2.0"}])
        (False, True)
    """
    predicted, gold = _wtq_distinct(predicted), _wtq_distinct(gold)
    if len(predicted) != len(gold):
        return False
    return all(any(_wtq_match(t, p) for p in predicted) for t in gold)


# ---------------------------------------------------------------------------
# Loading


def _tsv_unescape(text: str) -> str:
    """WTQ's TSV escapes: ``\\n`` newline, ``\\p`` pipe, ``\\\\`` backslash."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "p": "|", "\\": "\\"}.get(m.group(1), m.group(0)), text)


def read_wtq_table(path: str | Path) -> dict[str, Any]:
    """A WikiTableQuestions table (``csv/xxx-csv/yyy.csv``) as ``{"header", "rows", "name"}``.

    WTQ's CSV escapes quotes and backslashes with a backslash (not by
    doubling) and writes a newline inside a cell as ``\\n``; short rows are
    padded with empty cells.

    Raises:
        DatasetError: a missing or empty file.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "0.csv")
        >>> _ = open(p, "w").write('"Year","Note"\\n"2004","a \\\\"b\\\\"\\\\\\\\nc"\\n')
        >>> read_wtq_table(p)["rows"]
        [['2004', 'a "b"\\nc']]
    """
    file = Path(str(path))
    try:
        with file.open(encoding="utf-8", newline="") as f:
            rows = [row for row in csv.reader(f, escapechar="\\", doublequote=False) if row]
    except FileNotFoundError:
        raise DatasetError(f"WTQ table not found: {file} (keep WTQ's layout: data/ and csv/ side by side)") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"cannot read the WTQ table {file}: {exc}") from None
    if not rows:
        raise DatasetError(f"the WTQ table {file} is empty; it needs a header row")
    rows = [[cell.replace("\\n", "\n") for cell in row] for row in rows]
    width = len(rows[0])
    body = [row + [""] * (width - len(row)) if len(row) < width else row[:width] for row in rows[1:]]
    return {"header": rows[0], "rows": body, "name": str(file)}


def _wtq_rows(text: str, file: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of a WTQ TSV (``data/*.tsv`` or ``tagged/data/*.tagged``) by its header's column names."""
    lines = split_lines(text)
    header = lines[0].rstrip("\r").split("\t")
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != len(header):
            raise DatasetError(
                f"{file}, line {number}: expected {len(header)} tab-separated fields ({', '.join(header)}), got {len(fields)}"
            )
        yield number, dict(zip(header, fields))


def _wtq_canon(file: Path, root: Path, text: str) -> tuple[dict[str, list[str]], str | None]:
    """WTQ's CoreNLP canonical gold values (``targetCanon``) by example id, and a note when there are none.

    They are read from the file itself when it is a ``.tagged`` file, else, as
    the official evaluator does, from every ``tagged/data/*.tagged`` file of
    the WTQ folder (``training.tagged`` covers ``training-before300.tsv`` and
    the random splits).
    """
    if "\ttargetCanon" in text.split("\n", 1)[0]:
        sources = [(file, text)]
    else:
        folder = root / "tagged" / "data"
        tagged = sorted(folder.glob("*.tagged")) if folder.is_dir() else []
        if not tagged:
            return {}, (
                f"{file}: no {folder}/*.tagged (WTQ's CoreNLP-tagged copy): gold values are compared by their raw "
                "targetValue, not the canonical numbers and dates WTQ's official evaluator uses"
            )
        sources = [(t, read_text(t)) for t in tagged]
    canon = {}
    for path, tagged_text in sources:
        for _, row in _wtq_rows(tagged_text, path):
            if "targetCanon" not in row:
                raise DatasetError(f"{path} has no targetCanon column; it is not one of WTQ's tagged/data/*.tagged files")
            canon[row["id"]] = [_tsv_unescape(v) for v in row["targetCanon"].split("|")]
    return canon, None


def _wtq_root(file: Path) -> Path:
    """The WTQ folder of a data file (``WTQ/data/x.tsv`` or ``WTQ/tagged/data/x.tagged``): ``csv/`` is there."""
    root = file.parent.parent if file.parent.name == "data" else file.parent
    if file.parent.name == "data" and file.parent.parent.name == "tagged":
        root = file.parent.parent.parent  # WTQ/tagged/data/x.tagged: the csv/ folder is WTQ/csv
    return root


@dataset_format(
    "wtq",
    shape="text",
    priority=10,
    detect=is_wtq_header,
    known="WikiTableQuestions TSV (id, utterance, context, targetValue; or its tagged/data/*.tagged)",
    gold="targetValue, with targetCanon from tagged/data/*.tagged when there",
    denotation=wtq_denotation_match,
    smoke=_SMOKE,
)
def load_wtq(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a WTQ TSV, each with its table and gold values (canonical forms when known).

    Raises:
        DatasetError: a line with another number of fields, a missing column, a missing table.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()); (d / "data").mkdir(); (d / "csv").mkdir()
        >>> _ = (d / "csv" / "t.csv").write_text('"Year","City"\\n"2004","Athens"\\n')
        >>> src = Source(d / "data" / "x.tsv", "id\\tutterance\\tcontext\\ttargetValue\\nnt-0\\tWhere?\\tcsv/t.csv\\tAthens\\n", "wtq")
        >>> [(i["id"], i["answers"], i["table"]["rows"]) for i in load_wtq(src)], len(src.counts["notes"])
        ([('nt-0', ['Athens'], [['2004', 'Athens']])], 1)
    """
    file, text = source.file, source.text
    root = _wtq_root(file)
    canon, note = _wtq_canon(file, root, text)
    if note:
        source.note(note)
    raw = 0
    tables: dict[str, dict[str, Any]] = {}
    for number, row in _wtq_rows(text, file):
        missing = [k for k in ("id", "utterance", "context", "targetValue") if k not in row]
        if missing:
            raise DatasetError(f"{file}, line {number}: no {', '.join(missing)} column (WTQ: id, utterance, context, targetValue)")
        context = row["context"]
        if context not in tables:
            tables[context] = dict(read_wtq_table(root / context), name=context)
        originals = [_tsv_unescape(v) for v in row["targetValue"].split("|")]
        canons = canon.get(row["id"])
        if canons is not None and len(canons) == len(originals):
            answers: list[Any] = [{"value": o, "canon": c} for o, c in zip(originals, canons)]
        else:
            answers = originals
            raw += 1
        yield {
            "id": row["id"],
            "question": _tsv_unescape(row["utterance"]),
            "entities": {},
            "answers": answers,
            "actions": None,
            "table": tables[context],
            "source": "wtq",
            "kind": None,
        }
    if raw and canon:
        source.note(f"{file}: {raw} examples have no targetCanon in the tagged files: their gold values are compared by the raw targetValue")
