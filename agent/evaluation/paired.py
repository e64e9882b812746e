"""Paired statistics of two runs on the same questions: bootstrap intervals, McNemar's exact test, a permutation test.

Two runs answered the same questions, so their scores are paired: question
*i*'s score in run B minus its score in run A is the difference ``d_i``,
and every statistic here is about the mean difference.

* :func:`bootstrap_intervals`: the paired bootstrap. The questions are
  resampled with replacement ``resamples`` times (the same resample for
  every metric, so the intervals of one pair agree with each other), the
  mean difference is taken in each, and the interval is the percentile
  interval (the 2.5th and 97.5th percentiles for 95 %). Seeded: the same
  seed gives the same intervals.
* :func:`mcnemar_exact`: McNemar's exact test for a metric that is 0 or 1
  per question (exact match, Hits@1, Hits@any, denotation). Only the
  discordant questions count: ``b`` right in A only, ``c`` right in B only;
  under the null each is as likely, so ``p = min(1, 2 P(X <= min(b, c)))``
  with ``X ~ Binomial(b + c, 1/2)``, computed exactly with integers.
* :func:`permutation_test`: the paired permutation (sign-flip) test for a
  metric that is a fraction per question (F1): under the null each ``d_i``
  is as likely to have had the other sign, and ``p`` is the share of sign
  assignments whose mean difference is at least as far from 0 as the one
  observed. Exact (every assignment counted) when at most
  :data:`EXACT_LIMIT` questions differ, else ``permutations`` random
  assignments (seeded), ``p = (1 + k) / (1 + permutations)``.

Example:
    >>> mcnemar_exact([1, 1, 0, 0, 1], [1, 0, 1, 1, 1])
    McNemar(p=1.0, only_first=1, only_second=2)
    >>> permutation_test([0.5, 0.5, 0.5, 0.0])
    Permutation(p=0.25, exact=True, permutations=8)
    >>> bootstrap_intervals([[1.0, 1.0, 1.0]], resamples=100)
    [(1.0, 1.0)]
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EXACT_LIMIT", "McNemar", "Permutation", "bootstrap_intervals", "mcnemar_exact", "permutation_test"]

#: The most questions that differ for which the permutation test counts every sign assignment (2^16 of them).
EXACT_LIMIT = 16


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test: ``p``, and the discordant questions (right in the first run only, in the second only)."""

    p: float
    only_first: int
    only_second: int


@dataclass(frozen=True)
class Permutation:
    """The paired permutation test: ``p``, whether every sign assignment was counted, and how many were."""

    p: float
    exact: bool
    permutations: int


def bootstrap_intervals(
    differences: Sequence[Sequence[float | None]], *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> list[tuple[float, float]]:
    """The paired bootstrap's percentile interval of the mean of each list of per-question differences.

    All lists are over the same questions; a None is a question the metric does
    not score (its mean in a resample is over the questions it scores). Each
    resample draws the questions once for every list.

    Example:
        >>> lo, hi = bootstrap_intervals([[1, 0, 0, 1, 0, 0, 1, 0]], seed=1)[0]
        >>> 0.0 <= lo < 0.375 < hi <= 0.875
        True
        >>> bootstrap_intervals([[1, 0, -1]], seed=3) == bootstrap_intervals([[1, 0, -1]], seed=3)
        True
    """
    n = len(differences[0]) if differences else 0
    if n == 0:
        return [(0.0, 0.0) for _ in differences]
    rng = random.Random(seed)
    distinct = list(dict.fromkeys(tuple(d) for d in differences))  # metrics that differ alike (often the 0/1 ones) once
    values = [[0.0 if v is None else float(v) for v in d] for d in distinct]
    masks = [None if all(v is not None for v in d) else [0 if v is None else 1 for v in d] for d in distinct]
    means: list[list[float]] = [[] for _ in distinct]
    indices = range(n)
    for _ in range(resamples):
        drawn = rng.choices(indices, k=n)
        for values_m, mask, out in zip(values, masks, means):
            total = sum(map(values_m.__getitem__, drawn))
            count = n if mask is None else sum(map(mask.__getitem__, drawn))
            if count:  # a resample without a question the metric scores says nothing of it
                out.append(total / count)
    intervals = {key: _percentiles(sorted(m), level) for key, m in zip(distinct, means)}
    return [intervals[tuple(d)] for d in differences]


def _percentiles(means: Sequence[float], level: float) -> tuple[float, float]:
    """The percentile interval of sorted resample means (nearest rank); (0, 0) for none.

    Example:
        >>> _percentiles([float(i) for i in range(1, 101)], 0.9)
        (5.0, 95.0)
    """
    if not means:
        return (0.0, 0.0)
    tail, count = (1 - level) / 2, len(means)
    low, high = max(0, math.ceil(count * tail) - 1), min(count - 1, math.ceil(count * (1 - tail)) - 1)
    return (means[low], means[high])


def mcnemar_exact(first: Sequence[float], second: Sequence[float]) -> McNemar:
    """McNemar's exact test of two runs' 0/1 scores on the same questions (two-sided).

    Example:
        >>> mcnemar_exact([1] * 8 + [0] + [1] * 5, [0] * 8 + [1] + [1] * 5)   # 8 against 1: p = 2 * (1 + 9) / 2^9
        McNemar(p=0.0390625, only_first=8, only_second=1)
        >>> mcnemar_exact([1, 0], [1, 0]).p
        1.0
    """
    b = sum(1 for x, y in zip(first, second) if x >= 0.5 > y)
    c = sum(1 for x, y in zip(first, second) if y >= 0.5 > x)
    m = b + c
    if m == 0:
        return McNemar(1.0, b, c)
    tail = sum(math.comb(m, k) for k in range(min(b, c) + 1))
    return McNemar(min(1.0, 2 * tail / 2**m), b, c)


def permutation_test(differences: Sequence[float], *, permutations: int = 10000, seed: int = 0) -> Permutation:
    """The paired permutation (sign-flip) test of the mean of per-question differences (two-sided).

    Questions with no difference do not change the sum under any assignment
    and are left out; the others are grouped by the size of their
    difference, and a random assignment draws, for each size, how many of
    its questions keep their sign (the bits set in a random integer).

    Example:
        >>> permutation_test([0.25, -0.25, 0.0])
        Permutation(p=1.0, exact=True, permutations=4)
        >>> r = permutation_test([1.0] * 20 + [0.5] * 10, seed=2)
        >>> (r.exact, r.permutations, r.p < 0.001)
        (False, 10000, True)
    """
    sizes = Counter(round(abs(d), 9) for d in differences if round(abs(d), 9) != 0)
    m = sum(sizes.values())
    if m == 0:
        return Permutation(1.0, True, 1)
    observed = abs(sum(differences)) - 1e-9
    groups = sorted(sizes.items())
    if m <= EXACT_LIMIT:
        flat = [size for size, count in groups for _ in range(count)]
        hits = 0
        for signs in range(2**m):
            total = sum(size if signs >> i & 1 else -size for i, size in enumerate(flat))
            hits += abs(total) >= observed
        return Permutation(hits / 2**m, True, 2**m)
    rng = random.Random(seed)
    hits = 0
    for _ in range(permutations):
        total = sum(size * (2 * rng.getrandbits(count).bit_count() - count) for size, count in groups)
        hits += abs(total) >= observed
    return Permutation((1 + hits) / (1 + permutations), False, permutations)
