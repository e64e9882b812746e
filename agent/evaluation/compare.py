"""``pyql compare RUN.jsonl ...``: runs side by side on the questions they share, with paired statistics and costs.

Each argument is a run file (:mod:`agent.evaluation.runner`); the shards of
one run (``pyql eval --shard K/N``: the same settings, the shard apart) are
read together as that run (:mod:`agent.evaluation.merging`). The runs are
compared on the questions they share: those every run has, answered in
every run (not failed to run) and with gold answers; how many each run has
and how many are shared is said first.

The comparison (:func:`compare_runs`, printed by :func:`comparison_text`,
as a page by :mod:`agent.evaluation.compare_html`) holds:

* one table of the runs side by side: each answer metric of
  :data:`agent.evaluation.metrics.COMPARED_METRICS` (exact match, F1,
  Hits@1 as "the top answer is gold", Hits@any as Think-on-Graph and RoG
  count "Hits@1": any predicted answer is gold; denotation accuracy where
  the questions are scored by it), in %, and the cost columns
  (:mod:`agent.evaluation.cost`, per question means: LLM calls, tokens,
  model seconds, KB queries, KB seconds, branches explored, and the
  seconds per question);
* the same per question kind (the data set format's ``category``, or
  ``--by``: :data:`agent.evaluation.metrics.CATEGORY_KEYS`);
* for every two runs and every metric: the mean difference, its paired
  bootstrap interval and a paired test (:mod:`agent.evaluation.paired`:
  McNemar's exact test for the 0/1 metrics, a paired permutation test for F1);
* each metric, cost column and test named with its definition.

Bad input is an :class:`~agent.errors.EvalError` (``pyql`` exits 2 with one
line): a file that is not a run file, or a damaged line (the file and the
line named), runs of different data sets (another data set format, or a
shared question with another text or other gold answers), no shared
question, and shards that are not of one run.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> def run(name, method, answers):
    ...     rows = [{"id": f"q{i}", "question": f"q{i}?", "gold": ["x"], "answers": [{"value": a, "label": None}] if a else [],
    ...              "steps": [], "method": method, "settings": {"method": method}, "llm_calls": 2} for i, a in enumerate(answers)]
    ...     (d / name).write_text("".join(json.dumps(r) + "\\n" for r in rows))
    ...     return d / name
    >>> c = compare_runs([run("a.jsonl", "greedy", ["x", "y", None]), run("b.jsonl", "beam", ["x", "x", "x"])])
    >>> [r.label for r in c.runs], len(c.shared), c.mean(0, "em"), c.mean(1, "em"), c.costs[1]["llm_calls"]
    (['greedy', 'beam'], 3, 0.3333333333333333, 1.0, 2.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agent.errors import EvalError
from agent.evaluation.cost import COST_FIELDS, COST_TITLES, mean_cost
from agent.evaluation.datasets import get_format
from agent.evaluation.merging import MergedRun, group_parts, merge_parts, read_part
from agent.evaluation.metrics import CATEGORY_KEYS, COMPARED_METRICS, AnswerMetric, MetricsError, category_of, compared_scores
from agent.evaluation.paired import bootstrap_intervals, mcnemar_exact, permutation_test
from agent.faults import failed_to_run
from pyql.echo import inline, plural

__all__ = [
    "COST_COLUMNS", "TEST_DEFINITIONS", "ComparedRun", "Comparison", "PairRow", "compare_runs", "comparison_text", "cost_cell",
    "load_runs", "percent", "signed_points",
]

#: The cost columns, each ``(key, title, definition)``: the cost object's fields and the wall-clock seconds.
COST_COLUMNS: tuple[tuple[str, str, str], ...] = tuple(
    (name, *COST_TITLES[name]) for name in COST_FIELDS
) + (("seconds", "s", "seconds per question, wall clock (the model, the KB and pyql's own work)"),)

#: The paired tests and the interval, as the definitions under the tables name them.
TEST_DEFINITIONS: dict[str, str] = {
    "interval": "the paired bootstrap's percentile interval of the mean difference: the shared questions resampled "
                "with replacement, the same resamples for every metric of a pair (seeded)",
    "McNemar exact": "McNemar's exact test (two-sided) for a 0/1 metric: of the questions only one run got right, "
                     "how unlikely so uneven a split is if each run were as likely to be the one",
    "permutation": "the paired permutation test (two-sided) for F1: how often flipping the sign of each question's "
                   "difference at random gives a mean difference at least as large (exact for few differing "
                   "questions, else random sign flips, seeded)",
}


@dataclass
class ComparedRun:
    """One run of a comparison: its label, its files (merged), and its records by id."""

    label: str
    run: MergedRun
    by_id: dict[str, dict[str, Any]]

    @property
    def failed(self) -> int:
        """Its questions that failed to run (not scored)."""
        return sum(1 for r in self.by_id.values() if failed_to_run(r))

    @property
    def unscored(self) -> int:
        """Its questions without gold answers."""
        return sum(1 for r in self.by_id.values() if r.get("gold") is None)

    @property
    def method(self) -> str:
        return str(self.run.settings.get("method") or next(iter(self.by_id.values()), {}).get("method") or "?")

    @property
    def model(self) -> str | None:
        model = self.run.settings.get("model") or next((r.get("model") for r in self.by_id.values() if r.get("model")), None)
        return None if model is None else str(model)

    @property
    def files(self) -> str:
        """Its files, with their shards."""
        names = ", ".join(str(p) for p in self.run.paths)
        return f"{names} (shards {', '.join(self.run.shards)})" if self.run.shards else names


@dataclass
class PairRow:
    """One metric's paired comparison of two runs (``second`` minus ``first``, indices into the runs)."""

    first: int
    second: int
    metric: AnswerMetric
    questions: int
    difference: float
    interval: tuple[float, float]
    test: str
    p: float


@dataclass
class Comparison:
    """Runs compared on their shared questions (see the module docstring).

    Attributes:
        runs: the runs, in the order given.
        common: how many questions every run has.
        shared: the ids compared (every run has them, answered, with gold), in the first run's order.
        metrics: the answer metrics shown.
        scores: per run, per metric key, the score of each shared question (None: the metric does not score it).
        costs: per run, the cost columns' means over the shared questions.
        by: the key of the per-kind view (None: the questions have no kind).
        kinds: per kind, the positions in :attr:`shared` of its questions.
        pairs: the paired comparisons.
        resamples, seed: the bootstrap's.
        warnings: what the reading found but did not refuse (a missing shard).
    """

    runs: list[ComparedRun]
    common: int
    shared: list[str]
    metrics: list[AnswerMetric]
    scores: list[dict[str, list[float | None]]]
    costs: list[dict[str, float]]
    by: str | None = None
    kinds: dict[str, list[int]] = field(default_factory=dict)
    pairs: list[PairRow] = field(default_factory=list)
    resamples: int = 1000
    seed: int = 0
    warnings: list[str] = field(default_factory=list)

    def mean(self, run: int, metric: str, positions: Sequence[int] | None = None) -> float | None:
        """A run's mean score on the shared questions (or those at ``positions``) the metric scores; None for none."""
        values = self.scores[run][metric]
        chosen = [values[i] for i in (positions if positions is not None else range(len(values)))]
        scored = [v for v in chosen if v is not None]
        return sum(scored) / len(scored) if scored else None

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON (``pyql compare --json``): runs, metrics with their definitions, means, costs, pairs."""
        def kind_row(positions: list[int]) -> dict[str, Any]:
            return {"questions": len(positions),
                    "runs": [{m.key: self.mean(i, m.key, positions) for m in self.metrics} for i in range(len(self.runs))]}

        return {
            "runs": [{"label": r.label, "method": r.method, "model": r.model, "files": [str(p) for p in r.run.paths],
                      "shards": r.run.shards, "questions": len(r.by_id), "failed_to_run": r.failed, "no_gold": r.unscored,
                      "scores": {m.key: self.mean(i, m.key) for m in self.metrics}, "cost_per_question": self.costs[i]}
                     for i, r in enumerate(self.runs)],
            "common": self.common,
            "shared": len(self.shared),
            "metrics": {m.key: {"title": m.title, "definition": m.definition} for m in self.metrics},
            "cost_columns": {key: {"title": title, "definition": text} for key, title, text in COST_COLUMNS},
            "by": self.by,
            "kinds": {kind: kind_row(positions) for kind, positions in self.kinds.items()},
            "pairs": [{"first": self.runs[p.first].label, "second": self.runs[p.second].label, "metric": p.metric.key,
                       "questions": p.questions, "difference": p.difference, "interval": list(p.interval), "test": p.test,
                       "p": p.p} for p in self.pairs],
            "bootstrap": {"resamples": self.resamples, "seed": self.seed},
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------------------
# Reading the runs


def _label(run: MergedRun) -> str:
    """A run's name in the tables: its method, and its strategy's options when it has some."""
    settings = run.settings
    method = str(settings.get("method") or next((r.get("method") for r in run.records if r.get("method")), None) or "run")
    options = settings.get("options")
    if isinstance(options, Mapping) and options:
        method += " (" + ", ".join(f"{k}={v}" for k, v in options.items()) + ")"
    return method


def _labels(runs: Sequence[MergedRun]) -> list[str]:
    """Each run's label, made unique: the file's name added where two runs would share one, then a number."""
    labels = [_label(run) for run in runs]
    counts = Counter(labels)
    labels = [f"{label} [{run.paths[0].stem}]" if counts[label] > 1 else label for label, run in zip(labels, runs)]
    seen: Counter[str] = Counter()
    out = []
    for label in labels:
        seen[label] += 1
        out.append(label if seen[label] == 1 and labels.count(label) == 1 else f"{label} #{seen[label]}")
    return out


def load_runs(paths: Iterable[str | Path], *, warn: TextIO | None = None) -> tuple[list[ComparedRun], list[str]]:
    """The runs among the files (shards of one run together), and the warnings their merging gave.

    Raises:
        EvalError: no file, a file that is not a run file, or shards that are not of one run.
    """
    parts = [read_part(p, warn=warn) for p in paths]
    if not parts:
        raise EvalError("pyql compare: give the run files to compare (RUN.jsonl ...)")
    merged = [merge_parts(group) for group in group_parts(parts)]
    warnings = [w for run in merged for w in run.warnings]
    runs = [ComparedRun(label, run, {str(r["id"]): r for r in run.records}) for label, run in zip(_labels(merged), merged)]
    return runs, warnings


def _source(run: ComparedRun) -> str | None:
    counts = Counter(str(r.get("source")) for r in run.by_id.values() if r.get("source"))
    return counts.most_common(1)[0][0] if counts else None


def _where(run: ComparedRun, qid: str) -> str:
    """A question's place: the file and the line of its record."""
    for part in run.run.parts:
        if qid in part.lines:
            return f"{part.path}, line {part.lines[qid]}"
    return str(run.files)


def _check_same_data(runs: Sequence[ComparedRun], common: Sequence[str]) -> None:
    """Raises EvalError when the runs are of different data sets: another format, or a shared question differs."""
    sources = {run.label: _source(run) for run in runs}
    if len({s for s in sources.values() if s is not None}) > 1:
        listed = ", ".join(f"{label}: {source}" for label, source in sources.items())
        raise EvalError(f"pyql compare: the runs are of different data sets ({listed}); compare runs of one data set")
    first = runs[0]
    for qid in common:
        mine = first.by_id[qid]
        for other in runs[1:]:
            theirs = other.by_id[qid]
            for key, what in (("question", "text"), ("gold", "gold answers")):
                if mine.get(key) != theirs.get(key):
                    raise EvalError(f"pyql compare: the runs are of different data sets: question {qid} has other {what} in "
                                    f"{_where(other, qid)} than in {_where(first, qid)}")


def _shared(runs: Sequence[ComparedRun]) -> tuple[list[str], list[str]]:
    """The ids every run has, and those of them compared (answered in every run, with gold), in the first run's order.

    Raises:
        EvalError: no question is shared, or none of them was answered in every run.
    """
    ids = [set(run.by_id) for run in runs]
    common = [qid for qid in runs[0].by_id if all(qid in other for other in ids[1:])]
    if not common:
        sizes = "; ".join(f"{run.label} ({run.files}): {len(run.by_id)} questions" for run in runs)
        raise EvalError(f"pyql compare: the runs share no question ({sizes}); compare runs of the same questions")
    shared = [qid for qid in common
              if all(not failed_to_run(run.by_id[qid]) and run.by_id[qid].get("gold") is not None for run in runs)]
    if not shared:
        raise EvalError(f"pyql compare: none of the {len(common)} questions the runs share was answered with gold in every "
                        "run (they failed to run, or have no gold answers)")
    return common, shared


def _default_by(runs: Sequence[ComparedRun], shared: Sequence[str], by: str | None) -> str | None:
    """The per-kind key: ``by`` if given, else the data set format's ``category`` when the questions have kinds."""
    if by is not None:
        if by not in CATEGORY_KEYS:
            raise MetricsError(f"--by {by!r} is not known; use one of {', '.join(CATEGORY_KEYS)}")
        return by
    records = [runs[0].by_id[qid] for qid in shared]
    if not any(r.get("kind") not in (None, "") or r.get("groups") for r in records):
        return None
    fmt = get_format(_source(runs[0]))
    return fmt.category if fmt is not None else "type"


def _kinds(run: ComparedRun, shared: Sequence[str], by: str) -> dict[str, list[int]]:
    """Per kind, the positions of its shared questions: the formats' fixed order first (GrailQA's levels), then by size."""
    kinds: dict[str, list[int]] = {}
    for position, qid in enumerate(shared):
        kinds.setdefault(category_of(run.by_id[qid], by), []).append(position)
    fmt = get_format(_source(run))
    fixed = tuple(fmt.category_order) if fmt is not None and fmt.category == by else ()

    def order(name: str) -> tuple[int, int, str]:
        return (fixed.index(name) if name in fixed else len(fixed), -len(kinds[name]), name)

    return {name: kinds[name] for name in sorted(kinds, key=order)}


# ---------------------------------------------------------------------------
# Comparing


def compare_runs(
    paths: Iterable[str | Path], *, by: str | None = None, resamples: int = 1000, seed: int = 0, warn: TextIO | None = None
) -> Comparison:
    """Compare the runs in ``paths`` (see the module docstring).

    Args:
        paths: run files; the shards of one run are read as that run.
        by: the per-kind key (default: the data set format's ``category``, when the questions have kinds).
        resamples: the bootstrap's resamples.
        seed: the seed of the bootstrap and of the permutation test's random sign flips.
        warn: where a cut-off last line is reported.

    Raises:
        EvalError: bad input (see the module docstring); MetricsError: an unknown ``by``.
    """
    runs, warnings = load_runs(paths, warn=warn)
    common, shared = _shared(runs)
    _check_same_data(runs, common)
    scored = [[compared_scores(run.by_id[qid]) for qid in shared] for run in runs]
    metrics = [m for m in COMPARED_METRICS if any(m.key in s for s in scored[0])]
    scores = [{m.key: [s.get(m.key) for s in run_scores] for m in metrics} for run_scores in scored]
    costs = []
    for run in runs:
        records = [run.by_id[qid] for qid in shared]
        costs.append({**mean_cost(records), "seconds": sum(float(r.get("seconds") or 0) for r in records) / len(records)})
    comparison = Comparison(runs, len(common), shared, metrics, scores, costs, resamples=resamples, seed=seed, warnings=warnings)
    comparison.by = _default_by(runs, shared, by)
    if comparison.by is not None:
        comparison.kinds = _kinds(runs[0], shared, comparison.by)
    comparison.pairs = [row for first in range(len(runs)) for second in range(first + 1, len(runs))
                        for row in _pair(comparison, first, second)]
    return comparison


def _pair(c: Comparison, first: int, second: int) -> list[PairRow]:
    """Every metric's paired comparison of two runs: the mean difference, its bootstrap interval, the test."""
    differences = []
    for m in c.metrics:
        a, b = c.scores[first][m.key], c.scores[second][m.key]
        differences.append([None if x is None or y is None else y - x for x, y in zip(a, b)])
    intervals = bootstrap_intervals(differences, resamples=c.resamples, seed=c.seed)
    rows = []
    for m, d, interval in zip(c.metrics, differences, intervals):
        pairs = [(x, y) for x, y in zip(c.scores[first][m.key], c.scores[second][m.key]) if x is not None and y is not None]
        values = [y - x for x, y in pairs]
        if m.binary:
            result = mcnemar_exact([x for x, _ in pairs], [y for _, y in pairs])
            test, p = f"McNemar exact: {result.only_first} vs {result.only_second} discordant", result.p
        else:
            perm = permutation_test(values, seed=c.seed)
            how = f"exact, {perm.permutations:,} sign assignments" if perm.exact else f"{perm.permutations:,} random sign flips"
            test, p = f"permutation ({how})", perm.p
        rows.append(PairRow(first, second, m, len(values), sum(values) / len(values) if values else 0.0, interval, test, p))
    return rows


# ---------------------------------------------------------------------------
# As text


def percent(value: float | None) -> str:
    """A score in % with one decimal (``-`` for none).

    >>> percent(0.4567), percent(None)
    ('45.7', '-')
    """
    return "-" if value is None else f"{100 * value:.1f}"


def signed_points(value: float) -> str:
    """A difference of scores in points, signed.

    >>> signed_points(0.041), signed_points(-0.0001)
    ('+4.1', '+0.0')
    """
    text = f"{100 * value:+.1f}"
    return "+0.0" if text == "-0.0" else text


def cost_cell(key: str, value: float) -> str:
    """A cost column's cell: tokens whole, seconds to the millisecond below 1 s, counts to two decimals.

    >>> cost_cell("tokens_in", 1234.56), cost_cell("kb_seconds", 0.01234), cost_cell("llm_calls", 11.6)
    ('1235', '0.012', '11.60')
    """
    if key in ("tokens_in", "tokens_out"):
        return f"{value:.0f}"
    if key in ("model_seconds", "kb_seconds", "seconds"):
        return f"{value:.3f}" if value < 1 else f"{value:.2f}"
    return f"{value:.2f}"


def _cell(text: Any) -> str:
    """A text in a markdown cell: one line, no control or bidi character, no ``|`` that would end the cell.

    >>> _cell("a|b\\u202e")
    'a\\\\|b\\\\u202e'
    """
    return inline(str(text), 160).replace("|", "\\|")


def _runs_section(c: Comparison) -> str:
    rows = ["| run | method | model | files | questions | failed to run | without gold |", "| --- | --- | --- | --- | ---: | ---: | ---: |"]
    rows += [f"| {_cell(r.label)} | {_cell(r.method)} | {_cell(r.model or '-')} | {_cell(r.files)} | {len(r.by_id)} | {r.failed} "
             f"| {r.unscored} |" for r in c.runs]
    head = (f"{plural(len(c.runs), 'run')}; {c.common} questions in every run, {len(c.shared)} of them compared "
            "(answered in every run, with gold answers).")
    return head + "\n\n" + "\n".join(rows)


def _main_table(c: Comparison) -> str:
    titles = [m.title for m in c.metrics] + [title for _, title, _ in COST_COLUMNS]
    rows = ["| run | " + " | ".join(titles) + " |", "| --- |" + " ---: |" * len(titles)]
    for i, run in enumerate(c.runs):
        cells = [percent(c.mean(i, m.key)) for m in c.metrics] + [cost_cell(key, c.costs[i][key]) for key, _, _ in COST_COLUMNS]
        rows.append(f"| {_cell(run.label)} | " + " | ".join(cells) + " |")
    return (f"On the {len(c.shared)} shared questions: scores in %, costs per question (means)\n\n" + "\n".join(rows))


def _kinds_table(c: Comparison) -> str:
    titles = [m.title for m in c.metrics]
    rows = [f"| {c.by} | run | questions | " + " | ".join(titles) + " |", "| --- | --- |" + " ---: |" * (len(titles) + 1)]
    for kind, positions in c.kinds.items():
        for i, run in enumerate(c.runs):
            cells = [percent(c.mean(i, m.key, positions)) for m in c.metrics]
            rows.append(f"| {_cell(kind)} | {_cell(run.label)} | {len(positions)} | " + " | ".join(cells) + " |")
    return f"Per {c.by} (scores in %)\n\n" + "\n".join(rows)


def _pairs_table(c: Comparison) -> str:
    rows = ["| pair | metric | questions | difference (points) | 95 % interval | test | p |",
            "| --- | --- | ---: | ---: | --- | --- | ---: |"]
    for p in c.pairs:
        pair = f"{_cell(c.runs[p.second].label)} − {_cell(c.runs[p.first].label)}"
        interval = f"[{signed_points(p.interval[0])}, {signed_points(p.interval[1])}]"
        rows.append(f"| {pair} | {p.metric.title} | {p.questions} | {signed_points(p.difference)} | {interval} | {p.test} | {p.p:.3g} |")
    return (f"Paired differences (the second run minus the first, on the shared questions), the 95 % paired bootstrap "
            f"interval ({c.resamples:,} resamples, seed {c.seed}) and the paired test\n\n" + "\n".join(rows))


def _definitions(c: Comparison) -> str:
    lines = ["Definitions"]
    lines += [f"- {m.title}: {m.definition}." for m in c.metrics]
    lines += [f"- {title} (cost, per question): {text}." for _, title, text in COST_COLUMNS]
    lines += [f"- {name}: {text}." for name, text in TEST_DEFINITIONS.items()]
    return "\n".join(lines)


def comparison_text(c: Comparison) -> str:
    """The comparison as markdown: the runs, the side-by-side table, per kind, the paired table, the definitions."""
    parts = [_runs_section(c), _main_table(c)]
    if c.kinds:
        parts.append(_kinds_table(c))
    if c.pairs:
        parts.append(_pairs_table(c))
    parts.append(_definitions(c))
    return "\n\n".join(parts)
