"""Metrics of an evaluation run: answer F1, Hit@1, denotation accuracy, cost and efficiency.

Per question (:func:`score_question`):

* **F1** over answer sets: precision is the share of predicted answers that
  match a gold answer, recall the share of gold answers matched by a
  prediction. No gold and no prediction scores 1.0.
* **Hit@1**: the first predicted answer matches a gold answer.
* **Denotation accuracy** (tables): the executed answers equal the gold label
  as a multiset after normalization (:func:`pyql_sql.wikisql.label_match`;
  dbbench's ``["none"]`` also matches no answer).

Matching (:func:`answer_keys`, :func:`normalize_answer`): a predicted answer
``{"value": ..., "label": ...}`` matches a gold one when its value (an id
such as ``m.0crbvqz`` or a literal's lexical form) or its label equals the
gold value after normalization: case and surrounding space are ignored,
numbers compare by value (``"94.0"`` = ``94`` = ``"94"``), ``yes``/``true``
and ``no``/``false`` are the same, Freebase and Wikidata IRIs are shortened
to their ids, and typed literals (``"1900"^^xsd:gYear``) to their lexical form.

Over a run (:func:`aggregate`, :class:`RunMetrics`): mean F1, Hit@1,
denotation accuracy (table questions only), success rate, steps, LLM calls,
tokens in/out, cost (from a price table, :data:`PRICES`), KB queries per
question (QPQ), seconds per question (TPQ), the invalid-action rate and the
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pyql.errors import PyQLError

__all__ = [
    "INVALID_ACTION_ERRORS",
    "PRICES",
    "MetricsError",
    "RunMetrics",
    "aggregate",
    "answer_keys",
    "cost_usd",
    "denotation_match",
    "hit_at_1",
    "invalid_action_rate",
    "load_prices",
    "normalize_answer",
    "precision_recall_f1",
    "record_scores",
    "score_question",
    "succeeded",
    "trigger_stats",
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
_TYPED = re.compile(r'^"(.*)"(?:\^\^\S+|@[A-Za-z-]+)$', re.S)
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})T00:00:00(?:\.0+)?(?:Z|[+-]00:00)?$")
_TRUE = {"yes", "true"}
_FALSE = {"no", "false"}


class MetricsError(PyQLError, ValueError):
    """Bad input to a metric (an unreadable price table, a malformed run record).

    Example:
        >>> MetricsError("x").kind
        'bad_metrics'
    """

    kind = "bad_metrics"


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

    Example:
        >>> sorted(answer_keys({"value": "m.03_r3", "label": "Jamaica"}))
        ['jamaica', 'm.03_r3']
        >>> answer_keys("94.0")
        frozenset({'94'})
    """
    if isinstance(answer, Mapping):
        keys = {normalize_answer(answer.get("value"))}
        label = answer.get("label")
        if label not in (None, ""):
            keys.add(normalize_answer(label))
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


def score_question(predicted: Sequence[Any], gold: Sequence[Any], *, table: bool = False) -> dict[str, float]:
    """The per-question scores written to the run trace.

    Args:
        predicted: the answers (``{"value", "label"}`` dicts or plain values), in order.
        gold: the gold answers (values, or ``{"value", "label"}`` dicts).
        table: a table question: adds ``denotation`` (1.0 or 0.0).

    Example:
        >>> score_question([{"value": "1", "label": None}], ["1.0"], table=True)
        {'f1': 1.0, 'precision': 1.0, 'recall': 1.0, 'hit1': 1.0, 'denotation': 1.0}
    """
    precision, recall, f1 = precision_recall_f1(predicted, gold)
    out = {"f1": f1, "precision": precision, "recall": recall, "hit1": hit_at_1(predicted, gold)}
    if table:
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

    Example:
        >>> record_scores({"answers": [{"value": "3", "label": None}], "gold": ["3"]})["f1"]
        1.0
    """
    gold = record.get("gold")
    if gold is None:
        return dict(record.get("metrics") or {})
    return score_question(record.get("answers") or [], gold, table=bool(record.get("table")))


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
        questions: questions scored.
        f1: mean answer F1.
        hit1: mean Hit@1.
        denotation: denotation accuracy over the table questions (None: there are none).
        table_questions: how many questions were table questions.
        success_rate: share of episodes that executed a query with answers, without error.
        forced: episodes that hit the step limit and were made to answer.
        errors: episodes that ended with an error (e.g. the LLM failed).
        steps: mean steps (actions run, forced ones included).
        llm_calls: mean LLM calls.
        tokens_in: mean prompt tokens.
        tokens_out: mean completion tokens.
        cost_usd: total cost.
        cpq: cost per question (USD).
        qpq: KB (or table) queries per question.
        tpq: seconds per question.
        invalid_action_rate: share of steps with an invalid action.
        rules: ERASER trigger counts, rule id → times (most frequent first).
    """

    questions: int = 0
    f1: float = 0.0
    hit1: float = 0.0
    denotation: float | None = None
    table_questions: int = 0
    success_rate: float = 0.0
    forced: int = 0
    errors: int = 0
    steps: float = 0.0
    llm_calls: float = 0.0
    tokens_in: float = 0.0
    tokens_out: float = 0.0
    cost_usd: float = 0.0
    cpq: float = 0.0
    qpq: float = 0.0
    tpq: float = 0.0
    invalid_action_rate: float = 0.0
    rules: dict[str, int] = field(default_factory=dict)
    readi: dict[str, float] | None = None

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
        rows = [("questions", str(self.questions)), ("answer F1", f"{self.f1:.3f}"), ("Hit@1", f"{self.hit1:.3f}")]
        if self.denotation is not None:
            rows.append((f"denotation accuracy ({self.table_questions} table questions)", f"{self.denotation:.3f}"))
        rows += [
            ("success rate", f"{self.success_rate:.3f}"),
            ("forced answers / errors", f"{self.forced} / {self.errors}"),
            ("steps per question", f"{self.steps:.2f}"),
            ("LLM calls per question", f"{self.llm_calls:.2f}"),
            ("tokens in / out per question", f"{self.tokens_in:.0f} / {self.tokens_out:.0f}"),
            ("cost (USD): total / per question (CPQ)", f"{self.cost_usd:.4f} / {self.cpq:.6f}"),
            ("KB queries per question (QPQ)", f"{self.qpq:.2f}"),
            ("seconds per question (TPQ)", f"{self.tpq:.2f}"),
            ("invalid-action rate (of steps)", f"{self.invalid_action_rate:.3f}"),
            ("ERASER triggers", str(sum(self.rules.values()))),
        ]
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

    def table(self) -> str:
        """The summary as a markdown table.

        Example:
            >>> print(RunMetrics(questions=2, f1=0.5, hit1=0.5).table().splitlines()[3])
            | answer F1 | 0.500 |
        """
        lines = ["| metric | value |", "| --- | ---: |"]
        lines += [f"| {name} | {value} |" for name, value in self.rows()]
        return "\n".join(lines)


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

    covered = []
    for r in mine:
        values = {str(v).lower() for v in (r["extra"].get("instance_values") or [])}
        gold = {str(g.get("value") if isinstance(g, Mapping) else g).lower() for g in (r.get("gold") or [])}
        covered.append(1.0 if values & gold else 0.0)
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


def aggregate(records: Iterable[Mapping[str, Any]], prices: Mapping[str, tuple[float, float]] | None = None) -> RunMetrics:
    """Aggregate the records of a run (one per question, as the runner writes them).

    Scores are recomputed from each record's answers and gold; cost uses the
    record's ``cost_usd`` when present, else its tokens and model with
    ``prices`` (default :data:`PRICES`).

    Example:
        >>> recs = [
        ...     {"answers": [{"value": "m.1", "label": "A"}], "gold": ["m.1"], "done": True, "steps": [{"error": None}],
        ...      "llm_calls": 1, "tokens_in": 100, "tokens_out": 10, "kb_queries": 3, "seconds": 2.0, "rules": {}},
        ...     {"answers": [], "gold": ["m.2"], "done": False, "error": "llm_error: down", "steps": [],
        ...      "llm_calls": 0, "tokens_in": 0, "tokens_out": 0, "kb_queries": 0, "seconds": 1.0, "rules": {}},
        ... ]
        >>> m = aggregate(recs)
        >>> (m.questions, m.f1, m.hit1, m.success_rate, m.errors, m.qpq, m.tpq)
        (2, 0.5, 0.5, 0.5, 1, 1.5, 1.5)
    """
    records = list(records)
    n = len(records)
    if n == 0:
        return RunMetrics()
    scores = [record_scores(r) for r in records]
    tables = [s for s, r in zip(scores, records) if r.get("table")]
    costs = []
    for r in records:
        if r.get("cost_usd") is not None and prices is None:
            costs.append(float(r["cost_usd"]))
        else:
            costs.append(cost_usd(r.get("model"), int(r.get("tokens_in") or 0), int(r.get("tokens_out") or 0), prices))
    stats = trigger_stats(records)
    rules = dict(stats.counts.most_common()) if stats is not None else {}
    total_cost = sum(costs)
    return RunMetrics(
        readi=readi_metrics(records),
        questions=n,
        f1=_mean([s.get("f1", 0.0) for s in scores]),
        hit1=_mean([s.get("hit1", 0.0) for s in scores]),
        denotation=_mean([s.get("denotation", 0.0) for s in tables]) if tables else None,
        table_questions=len(tables),
        success_rate=sum(succeeded(r) for r in records) / n,
        forced=sum(bool(r.get("forced")) for r in records),
        errors=sum(bool(r.get("error")) for r in records),
        steps=_mean([len(r.get("steps") or []) for r in records]),
        llm_calls=_mean([float(r.get("llm_calls") or 0) for r in records]),
        tokens_in=_mean([float(r.get("tokens_in") or 0) for r in records]),
        tokens_out=_mean([float(r.get("tokens_out") or 0) for r in records]),
        cost_usd=total_cost,
        cpq=total_cost / n,
        qpq=_mean([float(r.get("kb_queries") or 0) for r in records]),
        tpq=_mean([float(r.get("seconds") or 0) for r in records]),
        invalid_action_rate=invalid_action_rate(records),
        rules=rules,
    )
