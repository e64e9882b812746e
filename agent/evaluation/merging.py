"""Several run files read as one run: the shards of a run (``pyql eval --merge``, ``pyql compare``).

A run spread over machines (``pyql eval --shard K/N``, :mod:`agent.evaluation.shards`)
leaves one run file per shard. :func:`merge_parts` reads them as the run they
are parts of, and refuses what would not be one run:

* a question in two files (named with both files and lines): a shard given
  twice, or files of two runs;
* files of different settings (model, method, options, KB ...; the shard
  apart), each setting that differs named; with ``allow_mixed`` a warning instead;
* shards of different N, a file holding records of two shards, and shard
  files mixed with files written without ``--shard``.

A missing shard (files of shards 0/4, 1/4 and 3/4) is a warning: the merged
run lacks its questions, and ``pyql eval --resume`` on the merged file
(without ``--shard``) answers them. The merged records are the shards'
records as they are, but for the shard in their settings (the merged run is
the whole data set): merged, the shards of a run are the run unsharded, but
for the times. They come in the data set's order when every shard ran
in its order (shard K's j-th question is the data set's (j·N + K)-th), else
file by file.

A file that is not a run file (a line that is not a record, a record
without answers and steps) is an :class:`~agent.errors.EvalError` naming
the file and the line.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> for k, ids in ((0, ["a", "c"]), (1, ["b"])):
    ...     _ = (d / f"s{k}.jsonl").write_text("".join(json.dumps({"id": i, "answers": [], "steps": [],
    ...         "settings": {"method": "greedy", "shard": f"{k}/2"}}) + "\\n" for i in ids))
    >>> merged = merge_runs([d / "s1.jsonl", d / "s0.jsonl"])
    >>> [r["id"] for r in merged.records], merged.shards, merged.records[0]["settings"]
    (['a', 'b', 'c'], ['0/2', '1/2'], {'method': 'greedy'})
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agent.errors import EvalError
from agent.evaluation.runner import RunWriter, latest_records, run_lines, summary_path, write_run_summary
from agent.evaluation.shards import parse_shard, record_shard
from agent.faults import failed_to_run
from pyql.errors import UsageError

__all__ = ["MergedRun", "RunPart", "group_parts", "merge_parts", "merge_runs", "read_part", "write_merged"]

#: What every run record has (``pyql eval`` and ``pyql ask --out`` write them all).
RECORD_KEYS = ("answers", "steps")


@dataclass
class RunPart:
    """One run file as read for merging or comparing.

    Attributes:
        path: the file.
        records: its records, the last of each id (in order of first appearance).
        lines: each id's line in the file (of its last record).
        shard: the shard its records were answered in (``K/N``), or None.
        settings: the settings of its first record, the shard left out.
    """

    path: Path
    records: list[dict[str, Any]]
    lines: dict[str, int]
    shard: str | None
    settings: dict[str, Any]


@dataclass
class MergedRun:
    """Run files read as one run (see the module docstring).

    Attributes:
        parts: the files, in the order given.
        records: the merged records.
        shards: the shards merged (sorted by K), empty when the files were not shards.
        missing: the shards of the run that were not given.
        warnings: what was merged though it may not be what was meant (a missing shard, mixed settings).
    """

    parts: list[RunPart]
    records: list[dict[str, Any]]
    shards: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings the run was answered with (the first file's; the shard left out)."""
        return dict(self.parts[0].settings) if self.parts else {}

    @property
    def paths(self) -> list[Path]:
        """The files merged."""
        return [part.path for part in self.parts]


def _without_shard(settings: Any) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if k != "shard"} if isinstance(settings, Mapping) else {}


def read_part(path: str | Path, *, warn: TextIO | None = None) -> RunPart:
    """One run file, checked to be one: every line a run record, of one shard.

    Raises:
        EvalError: the file cannot be read, has no record, a line is not a run record (file and line named),
            or its records are of two shards.
    """
    file = Path(path)
    numbered = run_lines(file, warn=warn)
    if not numbered:
        raise EvalError(f"{file} holds no run record: give run files written by pyql eval (or pyql ask --out)")
    lines: dict[str, int] = {}
    shards: dict[str | None, int] = {}
    for number, record in numbered:
        missing = [key for key in RECORD_KEYS if not isinstance(record.get(key), list)]
        if missing:
            raise EvalError(f"{file}, line {number} is not a pyql run record (no {' or '.join(missing)} list): "
                            "give run files written by pyql eval (or pyql ask --out)")
        lines[str(record["id"])] = number
        shards.setdefault(record_shard(record), number)
    if len(shards) > 1:
        (one, _), (other, line) = list(shards.items())[:2]
        raise EvalError(f"{file} holds records of two shards ({one or 'none'} and, from line {line}, {other or 'none'}); "
                        "a shard's run file holds one shard")
    records = latest_records(record for _, record in numbered)
    shard = next(iter(shards))
    if shard is not None:
        try:
            parse_shard(shard)
        except UsageError:
            raise EvalError(f"{file}, line {min(lines.values())}: its shard {shard!r} is not of the form K/N") from None
    return RunPart(file, records, lines, shard, _without_shard(records[0].get("settings")))


def _check_shards(parts: Sequence[RunPart]) -> tuple[list[str], list[str]]:
    """The shards of the parts (sorted) and those missing.

    Raises:
        EvalError: shard files mixed with whole runs, shards of different N, or one shard given twice.
    """
    sharded = [p for p in parts if p.shard is not None]
    if not sharded:
        return [], []
    if len(sharded) < len(parts):
        whole = next(p for p in parts if p.shard is None)
        raise EvalError(f"{sharded[0].path} is shard {sharded[0].shard} but {whole.path} was written without --shard: "
                        "give the shards of one run")
    counts = {parse_shard(str(p.shard)).count for p in sharded}
    if len(counts) > 1:
        raise EvalError("the shards are of different N (" + ", ".join(f"{p.path}: {p.shard}" for p in sharded)
                        + "): give the shards of one run")
    seen: dict[str, Path] = {}
    for part in sharded:
        if part.shard in seen:
            raise EvalError(f"shard {part.shard} is given twice: {seen[part.shard]} and {part.path} (two runs of the same "
                            "settings? merge each one's shards with pyql eval --merge first)")
        seen[str(part.shard)] = part.path
    n = counts.pop()
    shards = sorted(seen, key=lambda s: parse_shard(s).index)
    return shards, [f"{k}/{n}" for k in range(n) if f"{k}/{n}" not in seen]


def _check_questions(parts: Sequence[RunPart]) -> None:
    """Raises EvalError for a question in two files (both named, with their lines)."""
    where: dict[str, RunPart] = {}
    for part in parts:
        for qid in part.lines:
            if qid in where:
                first = where[qid]
                raise EvalError(f"question {qid} is in two files: {first.path}, line {first.lines[qid]}, and {part.path}, "
                                f"line {part.lines[qid]}; a question belongs to one shard (give each shard once)")
            where[qid] = part


def _differences(first: RunPart, part: RunPart) -> list[str]:
    """What differs between a part's settings (those of each of its answered records) and the first part's, one text a setting."""
    seen: dict[str, list[Any]] = {}
    for record in part.records:
        if failed_to_run(record):
            continue
        for key, value in _without_shard(record.get("settings")).items():
            if value is not None and value not in seen.setdefault(key, []):
                seen[key].append(value)
    out = []
    for key, values in seen.items():
        mine = first.settings.get(key)
        others = [v for v in values if v != mine]
        if mine is not None and others:
            out.append(f"{key}: {' and '.join(repr(v) for v in others)} in it, {mine!r} in {first.path}")
    return out


def _check_settings(parts: Sequence[RunPart], allow_mixed: bool) -> list[str]:
    """What differs between the parts' settings and the first's (the shard apart): an error, or warnings with ``allow_mixed``.

    Raises:
        EvalError: the settings differ and ``allow_mixed`` is False.
    """
    warnings = []
    for part in parts[1:]:
        differences = _differences(parts[0], part)
        if not differences:
            continue
        said = f"{part.path} was answered with other settings than {parts[0].path}: {'; '.join(differences)}"
        if not allow_mixed:
            raise EvalError(f"{said}; give the parts of one run (or --allow-mixed to merge them anyway)")
        warnings.append(said)
    return warnings


def merge_parts(parts: Sequence[RunPart], *, allow_mixed: bool = False) -> MergedRun:
    """The parts as one run (see the module docstring).

    Raises:
        EvalError: no part, a question in two parts, parts of different settings (unless ``allow_mixed``), or shards
            that are not of one run.
    """
    if not parts:
        raise EvalError("no run file to merge")
    shards, missing = _check_shards(parts)
    _check_questions(parts)
    warnings = _check_settings(parts, allow_mixed)
    warnings += [f"shard {s} is missing: the merged run lacks its questions (pyql eval --resume on the merged "
                 "run file answers them)" for s in missing]
    return MergedRun(list(parts), _merged_records(parts), shards, missing, warnings)


def _merged_records(parts: Sequence[RunPart]) -> list[dict[str, Any]]:
    """The parts' records, the shard out of their settings, in the data set's order where it can be told (see the module docstring)."""
    def unsharded(record: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(record)
        if isinstance(out.get("settings"), Mapping):
            out["settings"] = _without_shard(out["settings"])
        return out

    if all(p.shard is not None for p in parts):
        placed = []
        for part in parts:
            shard = parse_shard(str(part.shard))
            placed += [(j * shard.count + shard.index, unsharded(r)) for j, r in enumerate(part.records)]
        return [record for _, record in sorted(placed, key=lambda pair: pair[0])]
    return [unsharded(r) for part in parts for r in part.records]


def merge_runs(paths: Iterable[str | Path], *, warn: TextIO | None = None, allow_mixed: bool = False) -> MergedRun:
    """Read run files and merge them as one run (:func:`read_part`, :func:`merge_parts`).

    Raises:
        EvalError: as :func:`read_part` and :func:`merge_parts` say.
    """
    return merge_parts([read_part(p, warn=warn) for p in paths], allow_mixed=allow_mixed)


def group_parts(parts: Sequence[RunPart]) -> list[list[RunPart]]:
    """The runs among run files: the shards of one run (the same settings, the shard apart) together, every other file alone.

    Runs come in the order their first file was given.

    Example:
        >>> p = lambda name, shard, method: RunPart(Path(name), [], {}, shard, {"method": method})
        >>> [[str(x.path) for x in g] for g in group_parts([p("a0", "0/2", "beam"), p("g", None, "greedy"), p("a1", "1/2", "beam")])]
        [['a0', 'a1'], ['g']]
    """
    groups: dict[str, list[RunPart]] = {}
    for i, part in enumerate(parts):
        key = "shards " + json.dumps(part.settings, sort_keys=True, default=str) if part.shard is not None else f"file {i}"
        groups.setdefault(key, []).append(part)
    return list(groups.values())


def _dataset_of(parts: Sequence[RunPart]) -> str | None:
    """The data set the parts' summaries name, when they name one and agree."""
    names = set()
    for part in parts:
        try:
            names.add(json.loads(summary_path(part.path).read_text(encoding="utf-8")).get("dataset"))
        except (OSError, ValueError, AttributeError):
            names.add(None)
    return names.pop() if len(names) == 1 else None


def write_merged(merged: MergedRun, out: str | Path) -> dict[str, Any]:
    """Write the merged run file ``out`` and its summary (``merged_from``: each file, its shard and questions); the summary.

    Raises:
        EvalError: ``out`` exists and is not empty, is one of the merged files, or cannot be written.
    """
    path = Path(out)
    if any(path.resolve() == p.resolve() for p in merged.paths):
        raise EvalError(f"--out {path} is one of the files merged: write the merged run to another file")
    if path.exists() and path.stat().st_size > 0:
        raise EvalError(f"the run file {path} already exists: give another --out for the merged run")
    with RunWriter(path, regular_only=True) as writer:
        for record in merged.records:
            writer.write(record)
    settings = merged.settings
    models = [r.get("model") for r in merged.records if r.get("model")]
    extra = {
        "merged_from": [{"file": str(p.path), "shard": p.shard, "questions": len(p.records)} for p in merged.parts],
        "missing_shards": merged.missing,
    }
    return write_run_summary(path, merged.records, settings=settings, model=models[0] if models else None,
                             method=settings.get("method"), dataset=_dataset_of(merged.parts), extra=extra)
