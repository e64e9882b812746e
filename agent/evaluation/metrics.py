"""Metrics of an evaluation run: answer F1, Hit@1, denotation accuracy, cost and efficiency.

Per question (:func:`score_question`):

* **F1** over answer sets: precision is the share of predicted answers that
  match a gold answer, recall the share of gold answers matched by a
  prediction. No gold and no prediction scores 1.0.
* **Hit@1** (Hits@1): the top answer is gold: the first predicted answer matches a gold answer.
* **Hits@any** (:func:`hits_at_any`): any predicted answer is gold. This is
  what Think-on-Graph's and RoG's evaluations report as "Hits@1"; ``pyql
  compare`` shows both, each by its name (:data:`COMPARED_METRICS`).
* **Denotation accuracy** (tables): the executed answers equal the gold label
  as a multiset after normalization (:func:`pyql_sql.wikisql.label_match`;
  dbbench's ``["none"]`` also matches no answer). A data set format with its
  own rule (its ``denotation`` hook) scores every question of it by that rule
  instead: WTQ's value rules (:func:`wtq_denotation_match`), MarkQA's answer
  accuracy (:func:`markqa_answer_match`: sets of values, numbers equal
  within an absolute ``1e-5``).

Matching (:func:`answer_keys`, :func:`normalize_answer`): a predicted answer
``{"value": ..., "label": ...}`` matches a gold one when its value (an id
such as ``m.0crbvqz`` or a literal's lexical form) or its label equals the
gold value after normalization: case and surrounding space are ignored,
numbers compare by value (``"94.0"`` = ``94`` = ``"94"``), ``yes``/``true``
and ``no``/``false`` are the same, Freebase and Wikidata IRIs are shortened
to their ids, and typed literals (``"1900"^^xsd:gYear``) to their lexical form.

Questions that failed to run (a service failed, :mod:`agent.faults`) are
never scored: :func:`aggregate` counts them apart (``failed_to_run``) and
every mean is over the questions that ran.

Over a run (:func:`aggregate`, :class:`RunMetrics`): mean F1, Hit@1,
denotation accuracy (table questions only), success rate, steps, LLM calls,
tokens in/out, cost (from a price table, :data:`PRICES`), KB queries per
question (QPQ), seconds per question (TPQ), the model's and the KB's seconds
and the branches explored per question, and the run's cost in all
(:mod:`agent.evaluation.cost`), the invalid-action rate and the
ERASER trigger counts (:class:`correction.TriggerStats`, the paper's Tables 8/9).

Example:
    >>> pred = [{"value": "m.04ygk0", "label": "Jamaican Creole English Language"}, {"value": "m.0x", "label": "Spanish"}]
    >>> score_question(pred, ["m.01428y", "m.04ygk0"])
    {'f1': 0.5, 'precision': 0.5, 'recall': 0.5, 'hit1': 1.0}
    >>> score_question([{"value": "yes", "label": None}], ["true"])["f1"]
    1.0
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import MetricsError  # noqa: F401 (defined in agent/errors.py)
from agent.evaluation.cost import mean_cost, run_cost
from agent.evaluation.datasets import formats, get_format
from agent.evaluation.datasets.dbbench import agentbench_answer_match
from agent.evaluation.datasets.markqa import markqa_answer_match  # noqa: F401 (the markqa format's hook)
from agent.evaluation.datasets.registry import registry
from agent.evaluation.datasets.wtq import wtq_denotation_match, wtq_normalize, wtq_value  # noqa: F401 (the wtq format's hook)
from agent.faults import error_kind, failed_to_run
from pyql.errors import PyQLError
from pyql.interchange import convert
from pyql.interchange.sexpr import same_logical_form

__all__ = [
    "BENCHMARKS",
    "CATEGORY_KEYS",
    "COMPARED_METRICS",
    "AnswerMetric",
    "INVALID_ACTION_ERRORS",
    "PAPER_RESULTS",
    "PRICES",
    "CategoryProgress",
    "MetricsError",
    "RunMetrics",
    "agentbench_accuracy",
    "agentbench_answer_match",
    "aggregate",
    "answer_keys",
    "benchmark_of",
    "by_category",
    "ended_by_repeats",
    "category_help",
    "category_of",
    "category_table",
    "compared_scores",
    "cost_usd",
    "denotation_match",
    "exact_match",
    "hit_at_1",
    "hits_at_any",
    "invalid_action_rate",
    "load_prices",
    "markqa_answer_match",
    "normalize_answer",
    "paper_table",
    "precision_recall_f1",
    "record_scores",
    "score_question",
    "succeeded",
    "summary_markdown",
    "summary_markdown_path",
    "trigger_stats",
    "write_summary_markdown",
    "wtq_denotation_match",
    "wtq_normalize",
    "wtq_value",
]

#: Step errors that mean the LLM did not write a usable action (the invalid-action rate).
INVALID_ACTION_ERRORS: frozenset[str] = frozenset(
    {"invalid_action", "no_action", "multiple_actions", "action_syntax", "syntax_error", "wrong_arity"}
)

#: USD per 1M tokens (input, output) of some hosted models, as listed by their
#: providers in 2024-2025; local models and unknown names cost 0. Give your
#: own with ``pyql eval --prices FILE.json`` (``{"model": [in, out]}``).
PRICES: dict[str, tuple[float, float]] = {
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-3.5-turbo-0125": (0.50, 1.50),
    "gpt-3.5-turbo-instruct": (1.50, 2.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
}

_FREEBASE = ("http://rdf.freebase.com/ns/", "https://rdf.freebase.com/ns/", "ns:", "fb:")
_WIKIDATA = ("http://www.wikidata.org/entity/", "https://www.wikidata.org/entity/", "wd:")
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?|[+-]?\.\d+(?:[eE][+-]?\d+)?")
_TYPED = re.compile(r'^"(.*)"(?:\^\^\S+|@[A-Za-z-]+)$', re.DOTALL)
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})T00:00:00(?:\.0+)?(?:Z|[+-]00:00)?$")
_TRUE = {"yes", "true"}
_FALSE = {"no", "false"}


# ---------------------------------------------------------------------------
# Normalization


def _number_key(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.12g}"


def normalize_answer(value: Any) -> str:
    """The comparison key of one answer value (an id, a literal, a number, a boolean).

    Example:
        >>> [normalize_answer(v) for v in ["68700000000.0", 94, " 1,174 ", "YES", False, "Jamaica "]]
        ['68700000000', '94', '1174', 'true', 'false', 'jamaica']
        >>> normalize_answer("http://rdf.freebase.com/ns/m.0crbvqz"), normalize_answer('"1900"^^xsd:gYear')
        ('m.0crbvqz', '1900')
        >>> normalize_answer("2005-08-23T00:00:00"), normalize_answer(None)
        ('2005-08-23', '')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number_key(float(value))
    text = " ".join(str(value).split())
    typed = _TYPED.match(text)
    if typed:
        text = typed.group(1).strip()
    for prefix in _FREEBASE + _WIKIDATA:
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    if text.startswith("<") and text.endswith(">"):
        return normalize_answer(text[1:-1])
    midnight = _MIDNIGHT.match(text)
    if midnight:
        text = midnight.group(1)
    low = text.casefold()
    if low in _TRUE:
        return "true"
    if low in _FALSE:
        return "false"
    if _NUMBER.fullmatch(text):
        try:
            return _number_key(float(text.replace(",", "")))
        except ValueError:  # pragma: no cover - the pattern only lets numbers through
            pass
    return low


def answer_keys(answer: Any) -> frozenset[str]:
    """The keys an answer matches by: its value and, for ``{"value", "label"}``, its label.

    A gold answer may also list ``aliases`` (ComplexWebQuestions): a
    prediction matching any of them matches the answer.

    Example:
        >>> sorted(answer_keys({"value": "m.03_r3", "label": "Jamaica"}))
        ['jamaica', 'm.03_r3']
        >>> sorted(answer_keys({"value": "m.0rh6k", "label": "Washington, D.C.", "aliases": ["The District"]}))
        ['m.0rh6k', 'the district', 'washington, d.c.']
        >>> answer_keys("94.0")
        frozenset({'94'})
    """
    if isinstance(answer, Mapping):
        keys = {normalize_answer(answer.get("value"))}
        label = answer.get("label")
        if label not in (None, ""):
            keys.add(normalize_answer(label))
        for alias in answer.get("aliases") or ():
            keys.add(normalize_answer(alias))
        keys.discard("")
        return frozenset(keys) if keys else frozenset({""})
    return frozenset({normalize_answer(answer)})


def _unique(answers: Iterable[Any]) -> list[frozenset[str]]:
    out: list[frozenset[str]] = []
    for a in answers:
        keys = answer_keys(a)
        if keys not in out:
            out.append(keys)
    return out


def precision_recall_f1(predicted: Sequence[Any], gold: Sequence[Any]) -> tuple[float, float, float]:
    """Precision, recall and F1 of a predicted answer set against the gold set.

    Both empty scores (1, 1, 1); one empty scores 0.

    Example:
        >>> precision_recall_f1(["a", "b"], ["b", "c", "d"])
        (0.5, 0.3333333333333333, 0.4)
        >>> precision_recall_f1([], []), precision_recall_f1([], ["x"])
        ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    """
    pred, gold_keys = _unique(predicted), _unique(gold)
    if not pred and not gold_keys:
        return 1.0, 1.0, 1.0
    if not pred or not gold_keys:
        return 0.0, 0.0, 0.0
    correct = sum(1 for p in pred if any(p & g for g in gold_keys))
    found = sum(1 for g in gold_keys if any(g & p for p in pred))
    precision, recall = correct / len(pred), found / len(gold_keys)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def hit_at_1(predicted: Sequence[Any], gold: Sequence[Any]) -> float:
    """1.0 when the first predicted answer matches a gold answer (or both are empty).

    Example:
        >>> hit_at_1([{"value": "m.2", "label": None}, "m.1"], ["m.1"]), hit_at_1(["m.1", "m.2"], ["m.1"])
        (0.0, 1.0)
    """
    if not predicted:
        return 1.0 if not gold else 0.0
    first = answer_keys(predicted[0])
    return 1.0 if any(first & g for g in _unique(gold)) else 0.0


def hits_at_any(predicted: Sequence[Any], gold: Sequence[Any]) -> float:
    """1.0 when any predicted answer matches a gold answer (or both are empty): Hits@any.

    Think-on-Graph's and RoG's evaluations call this "Hits@1" (their
    ``eval_hit`` checks whether any predicted answer is gold); it is never
    below :func:`hit_at_1`, which counts only the top answer.

    Example:
        >>> hits_at_any([{"value": "m.2", "label": None}, "m.1"], ["m.1"]), hit_at_1([{"value": "m.2", "label": None}, "m.1"], ["m.1"])
        (1.0, 0.0)
        >>> hits_at_any([], []), hits_at_any([], ["m.1"]), hits_at_any(["m.3"], ["m.1"])
        (1.0, 0.0, 0.0)
    """
    if not predicted:
        return 1.0 if not gold else 0.0
    gold_keys = _unique(gold)
    return 1.0 if any(answer_keys(p) & g for p in predicted for g in gold_keys) else 0.0


def exact_match(predicted: Sequence[Any], gold: Sequence[Any]) -> float:
    """1.0 when the predicted answer set equals the gold set (precision and recall 1).

    This is the answer EM QueryAgent's own evaluation counts (an F1 of 1),
    not GrailQA's leaderboard EM, which compares logical forms.

    Example:
        >>> exact_match(["m.1", "m.2"], ["m.2", "m.1"]), exact_match(["m.1"], ["m.1", "m.2"])
        (1.0, 0.0)
    """
    precision, recall, _ = precision_recall_f1(predicted, gold)
    return 1.0 if precision == 1.0 and recall == 1.0 else 0.0


def denotation_match(predicted: Sequence[Any], gold: Sequence[Any]) -> bool:
    """Table questions: the executed answers equal the gold label (multiset, normalized).

    Uses :func:`pyql_sql.wikisql.label_match` (so dbbench's ``["none"]``
    matches no answer); predicted ``{"value", "label"}`` dicts count by value.

    Example:
        >>> denotation_match([{"value": "5", "label": None}], ["5.0"]), denotation_match([], ["none"])
        (True, True)
        >>> denotation_match([{"value": "1–0", "label": None}], ["1–0", "2–0"])
        False
    """
    values = [a.get("value") if isinstance(a, Mapping) else a for a in predicted]
    try:
        from pyql_sql.wikisql import label_match
    except ImportError:  # pragma: no cover - pyql_sql ships with pyql
        if [str(x).strip().lower() for x in gold] == ["none"] and values in ([], [None]):
            return True
        return Counter(normalize_answer(v) for v in values) == Counter(normalize_answer(g) for g in gold)
    return bool(label_match(values, list(gold)))


def score_question(
    predicted: Sequence[Any], gold: Sequence[Any], *, table: bool = False, source: str | None = None
) -> dict[str, float]:
    """The per-question scores written to the run trace.

    Args:
        predicted: the answers (``{"value", "label"}`` dicts or plain values), in order.
        gold: the gold answers (values, or ``{"value", "label"}`` dicts).
        table: a table question: adds ``denotation`` (1.0 or 0.0).
        source: the item's data set format: when it has its own denotation
            rule (WTQ, MarkQA), ``denotation`` is scored by it.

    Example:
        >>> score_question([{"value": "1", "label": None}], ["1.0"], table=True)
        {'f1': 1.0, 'precision': 1.0, 'recall': 1.0, 'hit1': 1.0, 'denotation': 1.0}
        >>> score_question([{"value": "4.41806711", "label": None}], ["4.4180671114970286"], source="markqa")["denotation"]
        1.0
    """
    precision, recall, f1 = precision_recall_f1(predicted, gold)
    out = {"f1": f1, "precision": precision, "recall": recall, "hit1": hit_at_1(predicted, gold)}
    fmt = get_format(source)
    if fmt is not None and fmt.denotation is not None:
        out["denotation"] = 1.0 if fmt.denotation(predicted, gold) else 0.0
    elif table:
        out["denotation"] = 1.0 if denotation_match(predicted, gold) else 0.0
    return {k: round(v, 6) for k, v in out.items()}


# ---------------------------------------------------------------------------
# Cost


def load_prices(path: str | Path) -> dict[str, tuple[float, float]]:
    """A price table from a JSON file ``{"model": [USD per 1M in, USD per 1M out], ...}``.

    Raises:
        MetricsError: unreadable file or a malformed entry (the message shows the expected form).

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "prices.json")
        >>> _ = open(p, "w").write(json.dumps({"my-model": [1, 2]}))
        >>> load_prices(p)
        {'my-model': (1.0, 2.0)}
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MetricsError(f"cannot read the price table {path}: {exc}") from None
    if not isinstance(data, Mapping):
        raise MetricsError(f'the price table {path} must be a JSON object such as {{"gpt-4o-mini": [0.15, 0.60]}}')
    out: dict[str, tuple[float, float]] = {}
    for model, pair in data.items():
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pair)
        ):
            raise MetricsError(
                f"price of {model!r} in {path} must be [USD per 1M input tokens, USD per 1M output tokens], got {pair!r}"
            )
        out[str(model)] = (float(pair[0]), float(pair[1]))
    return out


def cost_usd(model: str | None, tokens_in: int, tokens_out: int, prices: Mapping[str, tuple[float, float]] | None = None) -> float:
    """The cost of some tokens of a model; unknown (and local) models cost 0.

    A dated model name (``gpt-4o-mini-2024-07-18``) falls back to its
    longest listed prefix (``gpt-4o-mini``).

    Example:
        >>> cost_usd("gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000)
        0.75
        >>> cost_usd("gemma-3-270m", 5000, 100)
        0.0
    """
    table = PRICES if prices is None else prices
    if not model:
        return 0.0
    price = table.get(model)
    if price is None:
        prefixes = [name for name in table if model.startswith(name + "-")]
        if prefixes:
            price = table[max(prefixes, key=len)]
    if price is None:
        return 0.0
    return round((tokens_in * price[0] + tokens_out * price[1]) / 1_000_000, 8)


# ---------------------------------------------------------------------------
# A whole run


def invalid_action_rate(records: Iterable[Mapping[str, Any]]) -> float:
    """The share of steps (over all records) whose error is in :data:`INVALID_ACTION_ERRORS`.

    Example:
        >>> invalid_action_rate([{"steps": [{"error": None}, {"error": "no_action"}, {"error": "empty_result"}, {"error": "wrong_arity"}]}])
        0.5
    """
    steps = bad = 0
    for record in records:
        for step in record.get("steps") or []:
            steps += 1
            bad += step.get("error") in INVALID_ACTION_ERRORS
    return bad / steps if steps else 0.0


def trigger_stats(records: Iterable[Mapping[str, Any]]) -> Any:
    """The ERASER triggers of a run as a :class:`correction.TriggerStats` (None without :mod:`correction`).

    Example:
        >>> trigger_stats([{"rules": {"wrong_arity": 2}}, {"rules": {"unlinked_entity": 1}}]).total
        3
    """
    try:
        from correction.stats import TriggerStats
    except ImportError:  # pragma: no cover - correction ships with pyql
        return None
    stats = TriggerStats()
    for record in records:
        for rule_id, times in (record.get("rules") or {}).items():
            stats.record(str(rule_id), int(times))
        stats.steps += len(record.get("steps") or [])
    return stats


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def record_scores(record: Mapping[str, Any]) -> dict[str, float]:
    """The scores of one run record, recomputed from its answers and gold (if it has gold).

    Adds ``em`` (:func:`exact_match`); a record whose format has its own
    denotation check (the ``denotation`` hook of its data set format, e.g.
    ``wtq``: WTQ's value rules, :func:`wtq_denotation_match`) scores
    denotation with it.

    Example:
        >>> record_scores({"answers": [{"value": "3", "label": None}], "gold": ["3"]})["f1"]
        1.0
        >>> record_scores({"answers": [{"value": "22.0"}], "gold": ["22"], "table": "t", "source": "wtq"})["denotation"]
        1.0
    """
    gold = record.get("gold")
    if gold is None:
        return dict(record.get("metrics") or {})
    answers = record.get("answers") or []
    scores = score_question(answers, gold, table=bool(record.get("table")), source=record.get("source"))
    scores["em"] = exact_match(answers, gold)
    if record.get("gold_form"):
        scores["lf_em"] = 1.0 if logical_form_match(record.get("chain") or [], str(record["gold_form"])) else 0.0
    return scores


@dataclass(frozen=True)
class AnswerMetric:
    """An answer metric as ``pyql compare`` shows it: its key, its name, what it counts, and how two runs are tested on it.

    Attributes:
        key: the key in :func:`compared_scores`.
        title: its name in the tables.
        definition: what it counts, in words (printed under the tables).
        binary: each question scores 0 or 1 (two runs are tested by McNemar's exact test), else a fraction
            (by a paired permutation test).
    """

    key: str
    title: str
    definition: str
    binary: bool = True


#: The answer metrics ``pyql compare`` shows, each named with its definition. Denotation accuracy is shown
#: when the questions are scored by it (tables, and formats with their own answer rule).
COMPARED_METRICS: tuple[AnswerMetric, ...] = (
    AnswerMetric("em", "exact match", "the predicted answer set equals the gold answer set (precision and recall 1)"),
    AnswerMetric("f1", "F1", "per question, the harmonic mean of precision (the share of predicted answers that are gold) "
                 "and recall (the share of gold answers predicted); no prediction and no gold scores 1", binary=False),
    AnswerMetric("hit1", "Hits@1", "the top answer is gold: the first predicted answer matches a gold answer"),
    AnswerMetric("hits_any", "Hits@any", "any predicted answer is gold (what Think-on-Graph and RoG report as Hits@1)"),
    AnswerMetric("denotation", "denotation accuracy", "the executed answers equal the gold answers as the data set's "
                 "rule compares them (tables: as a multiset of normalized values; WTQ's and MarkQA's own rules)"),
)


def compared_scores(record: Mapping[str, Any]) -> dict[str, float]:
    """The scores of one run record by :data:`COMPARED_METRICS` (``denotation`` only where the question is scored by it).

    Answers match gold answers as :func:`answer_keys` says (normalized values, labels and aliases).

    Example:
        >>> compared_scores({"answers": [{"value": "m.2", "label": None}, {"value": "m.1", "label": None}], "gold": ["m.1"]})
        {'em': 0.0, 'f1': 0.666667, 'hit1': 0.0, 'hits_any': 1.0}
    """
    answers = record.get("answers") or []
    gold = record.get("gold") or []
    scores = score_question(answers, gold, table=bool(record.get("table")), source=record.get("source"))
    out = {"em": 1.0 if scores["precision"] == 1.0 and scores["recall"] == 1.0 else 0.0, "f1": scores["f1"],
           "hit1": scores["hit1"], "hits_any": hits_at_any(answers, gold)}
    if "denotation" in scores:
        out["denotation"] = scores["denotation"]
    return out


def logical_form_match(chain: Sequence[str], gold_form: str, profile: str = "freebase") -> bool:
    """Whether a run's final chain is the gold S-expression's logical form (GrailQA's exact match).

    The chain's action lines are read back into a query and written as an
    S-expression (:mod:`pyql.interchange.sexpr`), then compared with the
    gold as a graph (:func:`pyql.interchange.sexpr.same_logical_form`:
    ``AND``'s arguments in any order). A chain that does not read back or
    has no S-expression (no answer, a filter between two variables) does not
    match, as an unparsable prediction does not in GrailQA's evaluation.

    Example:
        >>> logical_form_match(["add_fact(m.0a, a.b.c, ?x)", "add_type_constrain(c.d, ?x)", "set_answer(?x)"],
        ...                    "(AND c.d (JOIN (R a.b.c) m.0a))")
        True
        >>> logical_form_match(["add_fact(?x, a.b.c, m.0a)", "set_answer(?x)"], "(JOIN (R a.b.c) m.0a)")
        False
        >>> logical_form_match([], "(JOIN a.b.c m.0a)")
        False
    """
    if not chain:
        return False
    try:
        predicted = convert("\n".join(chain), "actions", "sexpr", profile=profile)
    except PyQLError:
        return False
    return same_logical_form(predicted, gold_form)


def succeeded(record: Mapping[str, Any]) -> bool:
    """Whether an episode ended with an executed query that gave answers, without an error.

    Example:
        >>> succeeded({"done": True, "answers": [{"value": "x"}], "error": None}), succeeded({"done": False, "answers": []})
        (True, False)
    """
    return bool(record.get("done")) and not record.get("error") and bool(record.get("answers"))


@dataclass
class RunMetrics:
    """Aggregate metrics of a run (means are per question).

    Attributes:
        questions: questions scored (those that ran).
        failed_to_run: questions a service failure kept from running (not scored, not in any mean).
        f1: mean answer F1.
        hit1: mean Hit@1.
        em: share of questions whose answer set equals the gold set (:func:`exact_match`).
        denotation: denotation accuracy over the questions scored by denotation: table
            questions, and every question of a format with its own rule (MarkQA); None: none.
        table_questions: how many questions were table questions.
        denotation_questions: how many questions were scored by denotation.
        lf_em: logical-form exact match (:func:`logical_form_match`) over the
            questions with a gold S-expression (GrailQA, GraphQ), None without.
        lf_questions: how many questions had one.
        success_rate: share of episodes that executed a query with answers, without error.
        forced: episodes that hit the step limit and were made to answer.
        errors: episodes that ended with an error (e.g. the LLM failed).
        context_overflow: episodes whose prompt did not fit the model's context even
            shortened (error ``context_overflow``; scored as failed, among ``errors``).
        steps: mean steps (actions run, forced ones included).
        llm_calls: mean LLM calls.
        tokens_in: mean prompt tokens.
        tokens_out: mean completion tokens.
        cost_usd: total cost.
        cpq: cost per question (USD).
        qpq: KB (or table) queries per question.
        tpq: seconds per question.
        model_seconds: the model's seconds per question (the steps' LLM time, :mod:`agent.evaluation.cost`).
        kb_seconds: the KB's seconds per question (the steps' KB time).
        branches: branches explored per question (the leaves of the steps' tree; 1 for a linear run).
        cost: the run's cost in all (:func:`agent.evaluation.cost.run_cost`), over every question of
            the run file, those that failed to run included (they cost too): LLM calls, tokens, model
            seconds, KB queries, KB seconds, branches, and the questions they are over.
        invalid_action_rate: share of steps with an invalid action.
        rules: ERASER trigger counts, rule id → times (most frequent first).
        advice: ERASER advice that did not block a step, rule id → times.
        escalations: repeated failed actions by escalation level ("1", "2", "3") → times.
        stopped: episodes the agent ended early on a repeated mistake.
        ended_by_repeats: those episodes by the kind of repeat that ended them
            (``bad_argument``, ``no_action``, an ERASER rule, ``no_change``...) → times.
    """

    questions: int = 0
    failed_to_run: int = 0
    f1: float = 0.0
    hit1: float = 0.0
    em: float = 0.0
    denotation: float | None = None
    table_questions: int = 0
    denotation_questions: int = 0
    lf_em: float | None = None
    lf_questions: int = 0
    success_rate: float = 0.0
    forced: int = 0
    errors: int = 0
    context_overflow: int = 0
    steps: float = 0.0
    llm_calls: float = 0.0
    tokens_in: float = 0.0
    tokens_out: float = 0.0
    cost_usd: float = 0.0
    cpq: float = 0.0
    qpq: float = 0.0
    tpq: float = 0.0
    model_seconds: float = 0.0
    kb_seconds: float = 0.0
    branches: float = 0.0
    cost: dict[str, Any] = field(default_factory=dict)
    invalid_action_rate: float = 0.0
    rules: dict[str, int] = field(default_factory=dict)
    readi: dict[str, float] | None = None
    advice: dict[str, int] = field(default_factory=dict)
    escalations: dict[str, int] = field(default_factory=dict)
    stopped: int = 0
    ended_by_repeats: dict[str, int] = field(default_factory=dict)
    agentbench: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (floats rounded).

        Example:
            >>> RunMetrics(questions=1, f1=1/3).to_dict()["f1"]
            0.3333
        """
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, float):
                out[key] = round(value, 8 if key in ("cost_usd", "cpq") else 4)
        return out

    def rows(self) -> list[tuple[str, str]]:
        """(metric, value) pairs as shown in the summary table."""
        rows = [("questions", str(self.questions))]
        if self.failed_to_run:
            rows.append(("failed to run (not scored; run again with --resume)", str(self.failed_to_run)))
        rows += [("answer F1", f"{self.f1:.3f}"), ("Hit@1", f"{self.hit1:.3f}")]
        rows.append(("answer EM", f"{self.em:.3f}"))
        if self.denotation is not None:
            rows.append((f"denotation accuracy ({self._denotation_count()})", f"{self.denotation:.3f}"))
        if self.lf_em is not None:
            rows.append((f"logical-form EM ({self.lf_questions} questions with a gold S-expression)", f"{self.lf_em:.3f}"))
        rows += [
            ("success rate", f"{self.success_rate:.3f}"),
            ("forced answers / errors", f"{self.forced} / {self.errors}"),
            *([("context overflow (the prompt did not fit the model's context; scored as failed)", str(self.context_overflow))]
              if self.context_overflow else []),
            ("steps per question", f"{self.steps:.2f}"),
            ("LLM calls per question", f"{self.llm_calls:.2f}"),
            ("tokens in / out per question", f"{self.tokens_in:.0f} / {self.tokens_out:.0f}"),
            ("cost (USD): total / per question (CPQ)", f"{self.cost_usd:.4f} / {self.cpq:.6f}"),
            ("KB queries per question (QPQ)", f"{self.qpq:.2f}"),
            ("seconds per question (TPQ)", f"{self.tpq:.2f}"),
            ("model seconds / KB seconds per question", f"{self.model_seconds:.2f} / {self.kb_seconds:.3f}"),
            ("branches explored per question", f"{self.branches:.2f}"),
            *([("cost in all (every question, those that failed to run included)", self._cost_in_all())] if self.cost else []),
            ("invalid-action rate (of steps)", f"{self.invalid_action_rate:.3f}"),
            ("ERASER triggers", str(sum(self.rules.values()))),
            ("ERASER advice (steps run with a note)", str(sum(self.advice.values()))),
            (
                "repeated failed actions: escalation level 1 / 2 / 3",
                " / ".join(str(self.escalations.get(level, 0)) for level in ("1", "2", "3")),
            ),
            ("stopped on a repeated mistake", str(self.stopped)),
        ]
        if self.ended_by_repeats:
            rows.append(("ended by repeats", ", ".join(f"{kind} {n}" for kind, n in self.ended_by_repeats.items())))
        if self.agentbench is not None:
            a = self.agentbench
            rows.append(("AgentBench dbbench accuracy: SELECT / INSERT / UPDATE (items), overall_cat",
                         f"{a['SELECT']:.3f} / {a['INSERT']:.3f} / {a['UPDATE']:.3f} ({a['items']:.0f}), {a['overall_cat']:.3f}"))
        if self.readi is not None:
            r = self.readi
            rows += [
                ("Readi: edits per question", f"{r['edits']:.2f}"),
                ("Readi: LPP / LIP (path length predicted / instantiated)", f"{r['lpp']:.2f} / {r['lip']:.2f}"),
                ("Readi: AIP (average instantiation progress)", f"{r['aip']:.3f}"),
                ("Readi: ISR (instantiation success rate)", f"{r['isr']:.3f}"),
                ("Readi: CER (ends on an unnamed node)", f"{r['cer']:.3f}"),
                ("Readi: answer coverage", f"{r['coverage']:.3f}"),
            ]
        return rows

    def _cost_in_all(self) -> str:
        """The run's cost in all, on one line.

        Example:
            >>> RunMetrics(cost={"questions": 2, "llm_calls": 9, "tokens_in": 1200, "tokens_out": 80, "model_seconds": 3.25,
            ...                  "kb_queries": 14, "kb_seconds": 0.5, "branches": 4})._cost_in_all()
            '9 LLM calls, 1200 / 80 tokens, 3.2 s model, 14 KB queries, 0.50 s KB, 4 branches'
        """
        c = self.cost
        return (f"{c['llm_calls']} LLM calls, {c['tokens_in']} / {c['tokens_out']} tokens, {c['model_seconds']:.1f} s model, "
                f"{c['kb_queries']} KB queries, {c['kb_seconds']:.2f} s KB, {c['branches']} branches")

    def _denotation_count(self) -> str:
        """How many questions the denotation accuracy is over, and how many of them are table questions."""
        if self.table_questions == self.denotation_questions:
            return f"{self.table_questions} table questions"
        tables = f", {self.table_questions} of them table questions" if self.table_questions else ""
        return f"{self.denotation_questions} questions{tables}"

    def table(self) -> str:
        """The summary as a markdown table.

        Example:
            >>> print(RunMetrics(questions=2, f1=0.5, hit1=0.5).table().splitlines()[3])
            | answer F1 | 0.500 |
        """
        lines = ["| metric | value |", "| --- | ---: |"]
        lines += [f"| {name} | {value} |" for name, value in self.rows()]
        return "\n".join(lines)


def _covers(extra: Mapping[str, Any], gold: Sequence[Any]) -> float:
    """1.0 when the instantiated values of a Readi record hold a gold answer, matched as answers are (:func:`answer_keys`).

    Ids and labels are compared alike on both sides: ``instance_answers``
    (``{"value", "label"}``; older run files: ``instance_values``, values
    only) against the gold answers' values, labels and aliases, normalized.

    Example:
        >>> _covers({"instance_answers": [{"value": "mq:German", "label": "German"}]}, ["German"])
        1.0
        >>> _covers({"instance_values": ["mq:German"]}, ["German"]), _covers({"instance_values": ["22"]}, ["22.0"])
        (0.0, 1.0)
    """
    values = extra.get("instance_answers") or extra.get("instance_values") or []
    keys = set().union(*(answer_keys(v) for v in values)) if values else set()
    return 1.0 if any(keys & g for g in _unique(gold)) else 0.0


def readi_metrics(records: Sequence[Mapping[str, Any]]) -> dict[str, float] | None:
    """Readi's own measures over the records it produced (Table 8 of the Readi paper).

    ``edits``: LLM edit calls per question; ``lpp``/``lip``: mean length of
    the predicted / instantiated paths; ``aip``: mean instantiation progress;
    ``isr``: share of questions whose paths were all instantiated; ``cer``:
    share ending on an unnamed node; ``coverage``: share whose instantiated
    answer values contain a gold answer. None when no record is Readi's.

    Example:
        >>> recs = [{"extra": {"method": "readi", "edits": 1, "lpp": 2, "lip": 1, "aip": 0.5, "isr": False,
        ...          "cer": True, "instance_values": ["m.1"]}, "gold": ["m.1"]}]
        >>> readi_metrics(recs)["coverage"], readi_metrics([{"extra": {}}])
        (1.0, None)
    """
    mine = [r for r in records if (r.get("extra") or {}).get("method") == "readi"]
    if not mine:
        return None

    def mean(key: str) -> float:
        return _mean([float((r["extra"] or {}).get(key) or 0) for r in mine])

    covered = [_covers(r["extra"], r.get("gold") or []) for r in mine]
    return {
        "questions": float(len(mine)),
        "edits": mean("edits"),
        "lpp": mean("lpp"),
        "lip": mean("lip"),
        "aip": mean("aip"),
        "isr": mean("isr"),
        "cer": mean("cer"),
        "coverage": _mean(covered),
    }


def _record_cost(record: Mapping[str, Any], prices: Mapping[str, tuple[float, float]] | None) -> float:
    """A record's cost: its own ``cost_usd`` unless a price table is given, else from its tokens and model."""
    if record.get("cost_usd") is not None and prices is None:
        return float(record["cost_usd"])
    return cost_usd(record.get("model"), int(record.get("tokens_in") or 0), int(record.get("tokens_out") or 0), prices)


def _tally(records: Sequence[Mapping[str, Any]], key: str) -> Counter[str]:
    """The sum over the records of a ``{name: times}`` field (``advice``, ``escalations``)."""
    total: Counter[str] = Counter()
    for r in records:
        total.update({str(k): int(v) for k, v in (r.get(key) or {}).items()})
    return total


def _answer_fields(records: list[Mapping[str, Any]], scores: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """How well the scored records answered: F1, Hit@1, EM, the per-rule scores, the success rate."""
    return {
        "f1": _mean([s.get("f1", 0.0) for s in scores]),
        "hit1": _mean([s.get("hit1", 0.0) for s in scores]),
        "em": _mean([s.get("em", 0.0) for s in scores]),
        "table_questions": sum(bool(r.get("table")) for r in records),
        **_rule_scores(scores),
        "success_rate": sum(succeeded(r) for r in records) / len(records),
    }


def _usage_fields(records: list[Mapping[str, Any]], total_cost: float) -> dict[str, Any]:
    """What the scored records used, per question: steps, LLM calls, tokens, dollars, KB queries, seconds."""
    return {
        "steps": _mean([len(r.get("steps") or []) for r in records]),
        "llm_calls": _mean([float(r.get("llm_calls") or 0) for r in records]),
        "tokens_in": _mean([float(r.get("tokens_in") or 0) for r in records]),
        "tokens_out": _mean([float(r.get("tokens_out") or 0) for r in records]),
        "cost_usd": total_cost,
        "cpq": total_cost / len(records),
        "qpq": _mean([float(r.get("kb_queries") or 0) for r in records]),
        "tpq": _mean([float(r.get("seconds") or 0) for r in records]),
    }


def aggregate(records: Iterable[Mapping[str, Any]], prices: Mapping[str, tuple[float, float]] | None = None) -> RunMetrics:
    """Aggregate the records of a run (one per question, as the runner writes them).

    Scores are recomputed from each record's answers and gold; cost uses the
    record's ``cost_usd`` when present, else its tokens and model with
    ``prices`` (default :data:`PRICES`). Records of questions that failed to
    run (:func:`agent.faults.failed_to_run`) are only counted
    (``failed_to_run``), never scored.

    Example:
        >>> recs = [
        ...     {"answers": [{"value": "m.1", "label": "A"}], "gold": ["m.1"], "done": True, "steps": [{"error": None}],
        ...      "llm_calls": 1, "tokens_in": 100, "tokens_out": 10, "kb_queries": 3, "seconds": 2.0, "rules": {}},
        ...     {"answers": [], "gold": ["m.2"], "done": True, "forced": True, "error": None, "steps": [],
        ...      "llm_calls": 2, "tokens_in": 0, "tokens_out": 0, "kb_queries": 0, "seconds": 1.0, "rules": {}},
        ...     {"answers": [], "gold": ["m.3"], "done": False, "error": "llm_error: down", "status": "failed_to_run"},
        ... ]
        >>> m = aggregate(recs)
        >>> (m.questions, m.failed_to_run, m.f1, m.hit1, m.success_rate, m.forced, m.qpq, m.tpq)
        (2, 1, 0.5, 0.5, 0.5, 1, 1.5, 1.5)
    """
    everything = list(records)
    records = [r for r in everything if not failed_to_run(r)]
    failed = len(everything) - len(records)
    n = len(records)
    if n == 0:
        return RunMetrics(failed_to_run=failed, cost=run_cost(everything) if everything else {})
    scores = [record_scores(r) for r in records]
    total_cost = sum(_record_cost(r, prices) for r in records)
    rules = dict(stats.counts.most_common()) if (stats := trigger_stats(records)) is not None else {}
    advice, escalations = _tally(records, "advice"), _tally(records, "escalations")
    return RunMetrics(
        readi=readi_metrics(records),
        questions=n,
        failed_to_run=failed,
        **_answer_fields(records, scores),
        forced=sum(bool(r.get("forced")) for r in records),
        errors=sum(bool(r.get("error")) for r in records), context_overflow=context_overflows(records),
        **_usage_fields(records, total_cost),
        **_cost_fields(everything, records),
        invalid_action_rate=invalid_action_rate(records),
        rules=rules,
        advice=dict(advice.most_common()),
        escalations=dict(sorted(escalations.items())),
        stopped=sum(r.get("stopped") == "repeated_mistake" for r in records),
        ended_by_repeats=ended_by_repeats(records),
        agentbench=agentbench_accuracy(records),
    )


#: AgentBench's dbbench item types that change the table (scored by its state); every other type is a SELECT.
_AGENTBENCH_CHANGES = ("INSERT", "UPDATE", "DELETE")


def agentbench_accuracy(records: Iterable[Mapping[str, Any]]) -> dict[str, float] | None:
    """AgentBench's dbbench report of a run: the accuracy of the SELECT items (every type but a change), of the
    INSERT and of the UPDATE items (:func:`agentbench_answer_match`), and ``overall_cat``, the mean of those three
    (AgentBench's ``overall_cat_accuracy``); ``items`` is how many were scored. None when no record is a dbbench item.

    Example:
        >>> recs = [{"source": "dbbench", "kind": "counting", "answers": [{"value": "2"}], "gold": ["2.0"]},
        ...         {"source": "dbbench", "kind": "INSERT", "answers": [{"value": "table-state:a"}], "gold": ["table-state:b"]},
        ...         {"source": "dbbench", "kind": "UPDATE", "answers": [{"value": "table-state:c"}], "gold": ["table-state:c"]}]
        >>> agentbench_accuracy(recs)
        {'SELECT': 1.0, 'INSERT': 0.0, 'UPDATE': 1.0, 'overall_cat': 0.6667, 'items': 3}
        >>> agentbench_accuracy([{"source": "wtq", "answers": [], "gold": ["x"]}]) is None
        True
    """
    tally: dict[str, list[bool]] = {"SELECT": [], "INSERT": [], "UPDATE": []}
    for r in records:
        if r.get("source") != "dbbench" or r.get("gold") is None:
            continue
        kind = str(r.get("kind") or "").upper()
        key = kind if kind in _AGENTBENCH_CHANGES else "SELECT"
        tally.setdefault(key, []).append(agentbench_answer_match(r.get("answers") or [], r["gold"]))
    scored = sum(len(v) for v in tally.values())
    if not scored:
        return None
    accuracy = {k: (sum(v) / len(v) if v else 0.0) for k, v in tally.items() if k in ("SELECT", "INSERT", "UPDATE")}
    return {**accuracy, "overall_cat": round(sum(accuracy.values()) / 3, 4), "items": scored}


def _cost_fields(everything: Sequence[Mapping[str, Any]], ran: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The cost fields of :class:`RunMetrics`: the means over the questions that ran, the totals over every question."""
    per_question = mean_cost(ran)
    return {"model_seconds": per_question["model_seconds"], "kb_seconds": per_question["kb_seconds"],
            "branches": per_question["branches"], "cost": run_cost(everything)}


def _rule_scores(scores: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """The means over the questions a rule scored: denotation (table questions, and formats with their
    own rule) and the logical-form EM (questions with a gold S-expression), with their counts."""
    denoted = [s["denotation"] for s in scores if "denotation" in s]
    forms = [s["lf_em"] for s in scores if "lf_em" in s]
    return {
        "denotation": _mean(denoted) if denoted else None,
        "denotation_questions": len(denoted),
        "lf_em": _mean(forms) if forms else None,
        "lf_questions": len(forms),
    }


def context_overflows(records: Sequence[Mapping[str, Any]]) -> int:
    """The questions whose prompt did not fit the model's context (error ``context_overflow``: finished, scored as failed).

    Example:
        >>> recs = [{"answers": [], "gold": ["m.4"], "error": "context_overflow: the prompt needs ...", "status": "finished"}]
        >>> m = aggregate(recs)
        >>> (context_overflows(recs), m.questions, m.failed_to_run, m.f1, m.errors, m.context_overflow)   # scored, as failed
        (1, 1, 0, 0.0, 1, 1)
    """
    return sum(error_kind(r.get("error")) == "context_overflow" for r in records)


def ended_by_repeats(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How often each kind of repeat ended a question (most frequent first).

    Example:
        >>> ended_by_repeats([{"stopped": "repeated_mistake", "stopped_by": "bad_argument"},
        ...                   {"stopped": "repeated_mistake", "stopped_by": "bad_argument"},
        ...                   {"stopped": "repeated_mistake"}, {"stopped": None}])
        {'bad_argument': 2, 'unknown': 1}
    """
    kinds = Counter(str(r.get("stopped_by") or "unknown") for r in records if r.get("stopped") == "repeated_mistake")
    return dict(kinds.most_common())


# ---------------------------------------------------------------------------
# Per-category tables (GrailQA levels, CWQ compositionality types, MetaQA question types, MarkQA levels)

#: ``--by`` values: the grouping fields the data set formats declare (their ``category``
#: and ``groups``). A ``category`` key reads a record's ``kind``: the GrailQA level
#: (i.i.d./compositional/zero-shot), the MarkQA ``comp_level``, the CWQ compositionality
#: type, the MetaQA question type (``actor_to_movie``...) or the dbbench query type; a
#: ``groups`` key (MarkQA's ``composition``) reads the record's ``groups`` mapping.
CATEGORY_KEYS: tuple[str, ...] = tuple(registry.grouping())
#: The keys a record's ``kind`` answers (the formats' ``category``).
_KIND_KEYS: frozenset[str] = frozenset(fmt.category for fmt in formats())
#: Categories listed in a fixed order first (the formats' ``category_order``: GrailQA's and MarkQA's levels).
_LEVEL_ORDER: tuple[str, ...] = tuple(dict.fromkeys(name for fmt in formats() for name in fmt.category_order))


def category_help() -> str:
    """The ``--by`` help of ``pyql eval`` and ``pyql trace``: each key and the formats that group by it.

    Example:
        >>> "comp_level (markqa)" in category_help(), "level (grailqa)" in category_help()
        (True, True)
    """
    keys = "; ".join(f"{key} ({', '.join(names)})" for key, names in registry.grouping().items())
    return f"also print the metrics per category of the data set: {keys}"


def category_of(record: Mapping[str, Any], by: str) -> str:
    """The category of a run record for ``--by KEY`` (one of :data:`CATEGORY_KEYS`); ``(none)`` when it has none.

    The record's ``groups`` answer first; a format's ``category`` key
    (``level``, ``type``, ``comp_level``) is otherwise its ``kind``.

    Raises:
        MetricsError: ``by`` is not one of :data:`CATEGORY_KEYS`.

    Example:
        >>> category_of({"kind": "zero-shot"}, "level"), category_of({"kind": None}, "type")
        ('zero-shot', '(none)')
        >>> category_of({"kind": "iid", "groups": {"comp_level": "iid", "composition": "composition"}}, "composition")
        'composition'
    """
    if by not in CATEGORY_KEYS:
        raise MetricsError(f"--by {by!r} is not known; use one of {', '.join(CATEGORY_KEYS)}")
    groups = record.get("groups")
    if isinstance(groups, Mapping) and by in groups:
        value = groups[by]
    else:
        value = record.get("kind") if by in _KIND_KEYS else None
    return "(none)" if value in (None, "") else str(value)


def by_category(
    records: Iterable[Mapping[str, Any]], by: str, prices: Mapping[str, tuple[float, float]] | None = None
) -> dict[str, RunMetrics]:
    """The metrics of each category (GrailQA's and MarkQA's levels in their usual order, others by size).

    Example:
        >>> recs = [{"kind": "zero-shot", "answers": [], "gold": ["m.1"]}, {"kind": "i.i.d.", "answers": ["m.1"], "gold": ["m.1"]}]
        >>> {k: m.f1 for k, m in by_category(recs, "level").items()}
        {'i.i.d.': 1.0, 'zero-shot': 0.0}
    """
    if by not in CATEGORY_KEYS:
        raise MetricsError(f"--by {by!r} is not known; use one of {', '.join(CATEGORY_KEYS)}")
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(category_of(record, by), []).append(record)

    fixed = tuple(dict.fromkeys(name for fmt in formats() if fmt.category == by for name in fmt.category_order))

    def order(name: str) -> tuple[int, int, str]:
        rank = fixed.index(name) if name in fixed else len(fixed)
        return (rank, -len(groups[name]), name)

    return {name: aggregate(groups[name], prices) for name in sorted(groups, key=order)}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def category_table(
    records: Sequence[Mapping[str, Any]], by: str, prices: Mapping[str, tuple[float, float]] | None = None
) -> str:
    """A markdown table of the metrics per category, then the overall row (scores in %).

    Example:
        >>> recs = [{"kind": "conjunction", "answers": ["a"], "gold": ["a"], "seconds": 2.0},
        ...         {"kind": "composition", "answers": ["b"], "gold": ["a"], "seconds": 4.0}]
        >>> print(category_table(recs, "type"))
        | type | questions | F1 | Hit@1 | EM | denotation | TPQ (s) | QPQ |
        | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
        | composition | 1 | 0.0 | 0.0 | 0.0 | - | 4.00 | 0.00 |
        | conjunction | 1 | 100.0 | 100.0 | 100.0 | - | 2.00 | 0.00 |
        | overall | 2 | 50.0 | 50.0 | 50.0 | - | 3.00 | 0.00 |
    """
    groups = by_category(records, by, prices)
    groups["overall"] = aggregate(records, prices)
    lines = [
        f"| {by} | questions | F1 | Hit@1 | EM | denotation | TPQ (s) | QPQ |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, m in groups.items():
        lines.append(
            f"| {name} | {m.questions} | {_pct(m.f1)} | {_pct(m.hit1)} | {_pct(m.em)} | {_pct(m.denotation)} "
            f"| {m.tpq:.2f} | {m.qpq:.2f} |"
        )
    return "\n".join(lines)


class CategoryProgress:
    """Running scores per category, for the progress line of ``pyql eval``.

    The score of a record is its denotation (table questions) or its F1.
    Every question counted is in the line, so its counts add up to the
    questions finished: the ``limit`` largest categories by name, the rest
    (smaller categories, questions without a kind) as ``other``, and the
    questions without a score (they failed to run) as ``not scored``. A run
    whose questions have no kind at all shows nothing.

    Example:
        >>> p = CategoryProgress(limit=2)
        >>> for kind, f1 in [("i.i.d.", 1.0), ("zero-shot", 0.0), ("zero-shot", 1.0), ("compositional", 0.0)]:
        ...     p.update({"kind": kind, "metrics": {"f1": f1}})
        >>> p.update({"kind": "i.i.d.", "metrics": {}})  # failed to run
        >>> p.text()
        'compositional 0.00 (1) | zero-shot 0.50 (2) | other 1.00 (1) | not scored (1)'
        >>> CategoryProgress().text()
        ''
    """

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self._scores: dict[str | None, list[float]] = {}
        self._unscored = 0
        self._kinds = False

    def update(self, record: Mapping[str, Any]) -> None:
        """Count one finished question: its score under its kind (None without one), or as not scored."""
        kind = record.get("kind")
        metrics = record.get("metrics") or {}
        score = metrics.get("denotation", metrics.get("f1"))
        named = kind not in (None, "")
        self._kinds = self._kinds or named
        if score is None:
            self._unscored += 1
            return
        self._scores.setdefault(str(kind) if named else None, []).append(float(score))

    @property
    def counted(self) -> int:
        """The questions counted (the counts of :meth:`text` add up to it).

        Example:
            >>> p = CategoryProgress(); p.update({"kind": "x", "metrics": {}}); p.counted
            1
        """
        return sum(len(scores) for scores in self._scores.values()) + self._unscored

    def text(self) -> str:
        """``category mean (count)`` for the largest categories, then ``other`` and ``not scored``; '' without kinds."""
        if not self._kinds:
            return ""
        named = {k: v for k, v in self._scores.items() if k is not None}
        ranked = sorted(named, key=lambda k: (-len(named[k]), k))
        shown = sorted(ranked[: self.limit], key=lambda k: (_LEVEL_ORDER.index(k) if k in _LEVEL_ORDER else len(_LEVEL_ORDER), k))
        other = [score for k in ranked[self.limit:] for score in named[k]] + self._scores.get(None, [])
        parts = [f"{k} {_mean(named[k]):.2f} ({len(named[k])})" for k in shown]
        if other:
            parts.append(f"other {_mean(other):.2f} ({len(other)})")
        if self._unscored:
            parts.append(f"not scored ({self._unscored})")
        return " | ".join(parts)


# ---------------------------------------------------------------------------
# The papers' tables, and a run's summary.md in their layout

#: Benchmark → (title, its headline metrics). Every table also shows the
#: efficiency columns of QueryAgent's Table 4: TPQ (s), QPQ, CPQ (USD).
BENCHMARKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "webqsp": ("WebQSP (test)", ("f1", "hit1")),
    "grailqa": ("GrailQA (dev)", ("f1", "em")),
    "graphq": ("GraphQ (test)", ("f1",)),
    "cwq": ("CWQ (test)", ("hit1",)),
    "metaqa-1hop": ("MetaQA 1-hop (test)", ("hit1", "f1")),
    "metaqa-2hop": ("MetaQA 2-hop (test)", ("hit1", "f1")),
    "metaqa-3hop": ("MetaQA 3-hop (test)", ("f1", "hit1")),
    "metaqa": ("MetaQA", ("hit1", "f1")),
    "wikisql": ("WikiSQL (test)", ("denotation",)),
    "wtq": ("WikiTableQuestions (test)", ("denotation",)),
    "markqa": ("MarkQA", ("denotation",)),
}

_METRIC_TITLES = {"f1": "F1", "hit1": "Hit@1", "em": "EM", "denotation": "denotation acc."}

#: What the papers report: (benchmark, paper and table, method and model, {metric: value}).
#: Scores in %, TPQ in seconds, CPQ in USD (gpt-3.5-turbo prices of the time).
PAPER_RESULTS: tuple[tuple[str, str, str, dict[str, float]], ...] = (
    ("grailqa", "QueryAgent Tables 2, 4", "QueryAgent, gpt-3.5-turbo", {"f1": 60.5, "tpq": 16.6, "qpq": 5.2, "cpq": 0.019}),
    ("grailqa", "QueryAgent Table 2", "QueryAgent, GPT-4", {"f1": 66.8}),
    ("grailqa", "QueryAgent Table 3", "QueryAgent w/o ERASER, gpt-3.5-turbo", {"f1": 43.7}),
    ("graphq", "QueryAgent Tables 2, 4", "QueryAgent, gpt-3.5-turbo", {"f1": 50.8, "tpq": 15.3, "qpq": 6.2, "cpq": 0.021}),
    ("graphq", "QueryAgent Table 2", "QueryAgent, GPT-4", {"f1": 63.0}),
    ("graphq", "QueryAgent Table 3", "QueryAgent w/o ERASER, gpt-3.5-turbo", {"f1": 35.3}),
    ("webqsp", "QueryAgent Tables 2, 4", "QueryAgent, gpt-3.5-turbo", {"f1": 63.9, "tpq": 12.6, "qpq": 4.7, "cpq": 0.014}),
    ("webqsp", "QueryAgent Table 2", "QueryAgent, GPT-4", {"f1": 69.0}),
    ("webqsp", "Readi Table 1", "Readi, gpt-3.5-turbo", {"hit1": 74.3}),
    ("webqsp", "Readi Table 1", "Readi, GPT-4", {"hit1": 78.7}),
    ("metaqa-3hop", "QueryAgent Table 2", "QueryAgent, gpt-3.5-turbo", {"f1": 98.5}),
    ("metaqa-3hop", "QueryAgent Table 2", "QueryAgent, GPT-4", {"f1": 99.9}),
    ("metaqa-3hop", "Readi Table 1", "Readi, gpt-3.5-turbo", {"hit1": 99.4}),
    ("metaqa-3hop", "Readi Table 1", "Readi, GPT-4", {"hit1": 99.2}),
    ("metaqa-2hop", "Readi Table 1", "Readi, gpt-3.5-turbo", {"hit1": 99.9}),
    ("metaqa-2hop", "Readi Table 1", "Readi, GPT-4", {"hit1": 99.9}),
    ("metaqa-1hop", "Readi Table 1", "Readi, gpt-3.5-turbo", {"hit1": 98.4}),
    ("metaqa-1hop", "Readi Table 1", "Readi, GPT-4", {"hit1": 98.5}),
    ("cwq", "Readi Table 1", "Readi, gpt-3.5-turbo", {"hit1": 55.6}),
    ("cwq", "Readi Table 1", "Readi, GPT-4", {"hit1": 67.0}),
    ("wikisql", "QueryAgent Table 5", "QueryAgent, gpt-3.5-turbo", {"denotation": 72.5}),
    ("wikisql", "QueryAgent Table 5", "QueryAgent w/o ERASER, gpt-3.5-turbo", {"denotation": 67.0}),
    ("wikisql", "Readi Table 2", "Readi, gpt-3.5-turbo", {"denotation": 66.2}),
    ("wikisql", "Readi Table 2", "Readi, GPT-4", {"denotation": 66.0}),
    ("wtq", "Readi Table 2", "Readi, gpt-3.5-turbo", {"denotation": 61.7}),
    ("wtq", "Readi Table 2", "Readi, GPT-4", {"denotation": 61.3}),
)



def benchmark_of(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The benchmark of a run (a key of :data:`BENCHMARKS`), from its records' ``source``; None if unknown.

    The format of the most frequent source names it (its ``benchmark`` hook:
    WebQSP raw is ``webqsp``, dbbench ``wikisql``; MetaQA records carry
    their hop in the id, ``3-hop-qa_test-0``), else the source itself.

    Example:
        >>> benchmark_of([{"source": "grailqa", "id": "1"}]), benchmark_of([{"source": "metaqa", "id": "3-hop-qa_test-0"}])
        ('grailqa', 'metaqa-3hop')
        >>> benchmark_of([{"source": "pyql", "id": "q01"}]) is None
        True
    """
    counts = Counter(str(r.get("source")) for r in records)
    if not counts:
        return None
    source = counts.most_common(1)[0][0]
    fmt = get_format(source)
    name = fmt.benchmark(records) if fmt is not None and fmt.benchmark is not None else source
    return name if name in BENCHMARKS else None


def _cell(metric: str, value: float | None) -> str:
    if value is None:
        return ""
    if metric == "tpq":
        return f"{value:.1f} s"
    if metric == "qpq":
        return f"{value:.1f}"
    if metric == "cpq":
        return f"$ {value:.3f}"
    return f"{value:.1f}"


def paper_table(
    records: Sequence[Mapping[str, Any]],
    benchmark: str,
    *,
    run_label: str = "this run",
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> str:
    """The paper's rows for a benchmark and this run's row, in the papers' layout (scores in %).

    Raises:
        MetricsError: an unknown benchmark.

    Example:
        >>> recs = [{"source": "grailqa", "answers": ["m.1"], "gold": ["m.1"], "seconds": 3.0, "kb_queries": 4}]
        >>> print(paper_table(recs, "grailqa").splitlines()[-1])
        | this run | pyql | 100.0 | 100.0 | 3.0 s | 4.0 | $ 0.000 |
    """
    if benchmark not in BENCHMARKS:
        raise MetricsError(f"unknown benchmark {benchmark!r}; known: {', '.join(BENCHMARKS)}")
    title, headline = BENCHMARKS[benchmark]
    columns = list(headline) + ["tpq", "qpq", "cpq"]
    names = [_METRIC_TITLES.get(c, c.upper()) for c in headline] + ["TPQ", "QPQ", "CPQ"]
    lines = [f"| {title} | reported in | " + " | ".join(names) + " |", "| --- | --- | " + " | ".join("---:" for _ in columns) + " |"]
    for bench, source, method, values in PAPER_RESULTS:
        if bench == benchmark:
            lines.append(f"| {method} | {source} | " + " | ".join(_cell(c, values.get(c)) for c in columns) + " |")
    m = aggregate(records, prices)
    mine = {"f1": 100 * m.f1, "hit1": 100 * m.hit1, "em": 100 * m.em, "tpq": m.tpq, "qpq": m.qpq, "cpq": m.cpq}
    mine["denotation"] = 100 * m.denotation if m.denotation is not None else None  # type: ignore[assignment]
    lines.append(f"| {run_label} | pyql | " + " | ".join(_cell(c, mine.get(c)) for c in columns) + " |")
    return "\n".join(lines)


def summary_markdown(
    records: Sequence[Mapping[str, Any]],
    *,
    dataset: str | None = None,
    model: str | None = None,
    method: str | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> str:
    """The ``summary.md`` of a run: the paper-layout table, the per-category table, all metrics.

    Example:
        >>> recs = [{"source": "cwq", "kind": "composition", "answers": ["a"], "gold": ["a"], "id": "x"}]
        >>> text = summary_markdown(recs, dataset="cwq.json", model="gpt-4o-mini", method="readi")
        >>> "| Readi, gpt-3.5-turbo | Readi Table 1 | 55.6 |" in text, "| composition | 1 |" in text
        (True, True)
    """
    records = list(records)
    benchmark = benchmark_of(records)
    label = "this run" + (f": {method}" if method else "") + (f", {model}" if model else "")
    failed = sum(1 for r in records if failed_to_run(r))
    count = f"{len(records) - failed} questions." if not failed else (
        f"{len(records) - failed} questions answered; {failed} failed to run (a service failed; not scored: "
        "run the same `pyql eval` command with --resume to run them again)."
    )
    parts = [f"# Run summary{f' of {dataset}' if dataset else ''}", count]
    if benchmark is not None:
        parts.append(f"## {BENCHMARKS[benchmark][0]}, as in the papers' tables\n\n" + paper_table(records, benchmark, run_label=label, prices=prices))
    if any(r.get("kind") not in (None, "") or r.get("groups") for r in records):
        fmt = get_format(Counter(str(r.get("source")) for r in records).most_common(1)[0][0])
        for by in dict.fromkeys((fmt.category, *fmt.groups) if fmt is not None else ("type",)):
            parts.append(f"## Per {by}\n\n" + category_table(records, by, prices))
    parts.append("## All metrics\n\n" + aggregate(records, prices).table())
    return "\n\n".join(parts) + "\n"


def summary_markdown_path(summary_json: str | Path) -> Path:
    """Where ``summary.md`` goes: next to the summary JSON (``RUN.summary.json`` → ``RUN.summary.md``).

    Example:
        >>> summary_markdown_path("runs/dev.summary.json").as_posix()
        'runs/dev.summary.md'
    """
    path = Path(summary_json)
    return path.with_name(path.name[: -len(".json")] + ".md") if path.name.endswith(".json") else path.with_name(path.name + ".md")


def write_summary_markdown(
    summary_json: str | Path,
    records: Sequence[Mapping[str, Any]],
    *,
    dataset: str | None = None,
    model: str | None = None,
    method: str | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> Path:
    """Write :func:`summary_markdown` next to the summary JSON; returns its path.

    Example:
        >>> import os, tempfile
        >>> p = write_summary_markdown(os.path.join(tempfile.mkdtemp(), "run.summary.json"), [])
        >>> p.name, p.read_text().splitlines()[0]
        ('run.summary.md', '# Run summary')
    """
    path = summary_markdown_path(summary_json)
    text = summary_markdown(records, dataset=dataset, model=model, method=method, prices=prices)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise MetricsError(f"cannot write the summary table {path}: {exc}") from None
    return path
