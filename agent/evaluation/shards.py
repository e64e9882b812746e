"""Shards: a run spread over machines, each answering every N-th question of the data set (``pyql eval --shard K/N``).

Shard ``K/N`` takes the questions at positions K, K+N, K+2N, ... of the data
set (after ``--limit``), so the N shards together answer every question
once, each shard about as many and as varied as the others. Each shard
writes its own run file; the shard is one of the settings its records
carry (:func:`agent.evaluation.runner.run_fingerprint`), so ``--resume``
continues a shard's file only with the same ``--shard``
(:func:`resume_differences`), and :mod:`agent.evaluation.merging` reads the
shards' files as one run (``pyql eval --merge``, ``pyql compare``).

Example:
    >>> shard = parse_shard("1/3")
    >>> str(shard), select(list("abcdefg"), shard)
    ('1/3', ['b', 'e'])
    >>> [select(list("abcdefg"), parse_shard(f"{k}/3")) for k in range(3)]
    [['a', 'd', 'g'], ['b', 'e'], ['c', 'f']]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pyql.errors import UsageError

__all__ = ["SHARD_FORM", "Shard", "parse_shard", "record_shard", "resume_differences", "select"]

#: The form ``--shard`` takes, as its help and its errors name it.
SHARD_FORM = "K/N: the K-th of N shards, 0 <= K < N (e.g. 0/4, 1/4, 2/4, 3/4)"

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """The K-th of N shards (``index`` K, ``count`` N)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """A shard from its form ``K/N``.

    Raises:
        UsageError: not of the form, N < 1, or K not in 0 .. N-1 (the message names the form).

    Example:
        >>> parse_shard(" 2/4 ")
        Shard(index=2, count=4)
        >>> parse_shard("4/4")
        Traceback (most recent call last):
        ...
        pyql.errors.UsageError: --shard 4/4: K must be below N; give K/N: the K-th of N shards, 0 <= K < N (e.g. 0/4, 1/4, 2/4, 3/4)
    """
    found = _FORM.fullmatch(str(text))
    if not found:
        raise UsageError(f"--shard {text!r} is not of the form {SHARD_FORM}")
    index, count = int(found.group(1)), int(found.group(2))
    if count < 1:
        raise UsageError(f"--shard {text}: N must be at least 1; give {SHARD_FORM}")
    if index >= count:
        raise UsageError(f"--shard {text}: K must be below N; give {SHARD_FORM}")
    return Shard(index, count)


def select(items: Sequence[T], shard: Shard | None) -> list[T]:
    """The items of a shard: every ``count``-th from the ``index``-th (all of them for None).

    Example:
        >>> select([1, 2, 3], None), select([1, 2, 3], Shard(0, 2)), select([1], Shard(1, 2))
        ([1, 2, 3], [1, 3], [])
    """
    return list(items) if shard is None else list(items[shard.index :: shard.count])


def record_shard(record: Mapping[str, Any]) -> str | None:
    """The shard a run record was answered in (``K/N``), or None (a whole run, or a record of before shards).

    Example:
        >>> record_shard({"settings": {"shard": "0/2"}}), record_shard({"settings": {}}), record_shard({})
        ('0/2', None, None)
    """
    settings = record.get("settings")
    shard = settings.get("shard") if isinstance(settings, Mapping) else None
    return str(shard) if shard is not None else None


def resume_differences(records: Iterable[Mapping[str, Any]], shard: str | None) -> list[str]:
    """What ``--resume`` would mix: records of another shard than ``shard`` (None: the whole data set), one text.

    Example:
        >>> resume_differences([{"settings": {"shard": "0/2"}}], "0/2"), resume_differences([{"settings": {}}], None)
        ([], [])
        >>> resume_differences([{"settings": {"shard": "0/2"}}], None)
        ["shard: '0/2' in the run file, the whole data set now (no --shard)"]
    """
    seen = sorted({record_shard(r) or "" for r in records} - {shard or ""})
    if not seen:
        return []
    before = " and ".join(repr(s) if s else "the whole data set (no --shard)" for s in seen)
    now = f"{shard!r} now" if shard else "the whole data set now (no --shard)"
    return [f"shard: {before} in the run file, {now}"]
