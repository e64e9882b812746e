"""Trigger statistics: how often each ERASER rule fired, per run and over an evaluation.

:class:`TriggerStats` counts fired rule ids (and the steps analyzed, the
time spent in the analyzer and the KB queries rules sent). Stats of many
episodes merge into one, and print as the paper's tables: ``view="rules"``
is Table 9 (each rule's trigger count, share and feedback type) and
``view="environments"`` is Table 8 (rules and triggers per feedback type).

Example:
    >>> s = TriggerStats()
    >>> s.record("unlinked_entity"); s.record("unlinked_entity"); s.record("wrong_arity")
    >>> print(s.table(fmt="plain"))
    rule             kind   triggers  share  type
    unlinked_entity  error         2  66.7%  RM
    wrong_arity      error         1  33.3%  Python
    total                          3   100%
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from correction.errors import StatsError  # noqa: F401 (defined in correction/errors.py)

if TYPE_CHECKING:
    from correction.registry import Registry

__all__ = ["TriggerStats", "StatsError"]

VIEWS = ("rules", "environments")
FORMATS = ("markdown", "plain")


@dataclass
class TriggerStats:
    """Counters of one analyzer (or of several, merged).

    Attributes:
        counts: fired rule id → times.
        steps: steps analyzed.
        seconds: time spent in the analyzer.
        kb_queries: rule id → KB queries its trigger sent.
        over_budget: rule id → times its trigger sent more queries than it declares.
        advice: advice rule id → times it fired (also in ``counts``); the step was not blocked.
    """

    counts: Counter[str] = field(default_factory=Counter)
    steps: int = 0
    seconds: float = 0.0
    kb_queries: Counter[str] = field(default_factory=Counter)
    over_budget: Counter[str] = field(default_factory=Counter)
    advice: Counter[str] = field(default_factory=Counter)

    def record(self, rule_id: str, times: int = 1) -> None:
        """Count a rule firing.

        Example:
            >>> s = TriggerStats(); s.record("wrong_arity", 2); s.counts["wrong_arity"]
            2
        """
        self.counts[rule_id] += times

    @property
    def total(self) -> int:
        """Triggers counted, over all rules.

        Example:
            >>> s = TriggerStats(); s.record("a"); s.record("b"); s.total
            2
        """
        return sum(self.counts.values())

    def share(self, rule_id: str) -> float:
        """The fraction of all triggers that were this rule (0.0 when nothing fired).

        Example:
            >>> s = TriggerStats(); s.record("a"); s.record("b", 3); s.share("b")
            0.75
        """
        return self.counts[rule_id] / self.total if self.total else 0.0

    def merge(self, *others: TriggerStats) -> TriggerStats:
        """A new TriggerStats summing this one and others (e.g. the episodes of an evaluation).

        Example:
            >>> a = TriggerStats(); a.record("x")
            >>> b = TriggerStats(); b.record("x"); b.record("y")
            >>> a.merge(b).counts == Counter({"x": 2, "y": 1})
            True
        """
        out = TriggerStats(
            Counter(self.counts), self.steps, self.seconds, Counter(self.kb_queries), Counter(self.over_budget), Counter(self.advice)
        )
        for other in others:
            out.advice.update(other.advice)
            out.counts.update(other.counts)
            out.steps += other.steps
            out.seconds += other.seconds
            out.kb_queries.update(other.kb_queries)
            out.over_budget.update(other.over_budget)
        return out

    def __add__(self, other: TriggerStats) -> TriggerStats:
        return self.merge(other)

    @classmethod
    def combine(cls, stats: Iterable[TriggerStats]) -> TriggerStats:
        """Merge any number of stats.

        Example:
            >>> TriggerStats.combine([TriggerStats(steps=2), TriggerStats(steps=3)]).steps
            5
        """
        return cls().merge(*stats)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view.

        Example:
            >>> s = TriggerStats(steps=4); s.record("wrong_arity"); s.to_dict()["counts"]
            {'wrong_arity': 1}
        """
        return {
            "counts": dict(self.counts.most_common()),
            "total": self.total,
            "steps": self.steps,
            "seconds": round(self.seconds, 6),
            "kb_queries": dict(self.kb_queries),
            "over_budget": dict(self.over_budget),
            "advice": dict(self.advice),
        }

    def rows(self, reg: Registry | None = None) -> list[tuple[str, int, float, str, str]]:
        """(rule id, triggers, share, feedback type, environment), most frequent first.

        Example:
            >>> s = TriggerStats(); s.record("filter_empty"); s.rows()
            [('filter_empty', 1, 1.0, 'KB', 'kb')]
        """
        reg = _registry(reg)
        out = []
        for rule_id, count in sorted(self.counts.items(), key=lambda item: (-item[1], item[0])):
            if rule_id in reg:
                found = reg.get(rule_id)
                kind, env = found.feedback_type, found.env
            else:
                kind, env = "?", "?"
            out.append((rule_id, count, self.share(rule_id), kind, env))
        return out

    def environment_rows(self, reg: Registry | None = None, side: str = "sparql") -> list[tuple[str, int, int]]:
        """(feedback type, rules of that type, triggers), as in Table 8.

        Example:
            >>> s = TriggerStats(); s.record("filter_empty")
            >>> [row for row in s.environment_rows() if row[0] == "KB"][0][2]
            1
        """
        reg = _registry(reg)
        rules: Counter[str] = Counter()
        for found in reg.ordered(side):
            rules[found.feedback_type] += 1
        triggers: Counter[str] = Counter()
        for rule_id, count, _, kind, _ in self.rows(reg):
            triggers[kind] += count
        order = ["KB", "Python", "RM", "KB+RM", "Python+RM"]
        kinds = sorted(set(rules) | set(triggers), key=lambda k: (order.index(k) if k in order else len(order), k))
        return [(k, rules[k], triggers[k]) for k in kinds]

    def table(self, fmt: str = "markdown", view: str = "rules", reg: Registry | None = None) -> str:
        """The counters as a table.

        Args:
            fmt: "markdown" or "plain".
            view: "rules" (Table 9: per rule) or "environments" (Table 8: per feedback type).
            reg: the registry to read rule types from (default: the built-in one).

        Raises:
            StatsError: for an unknown format or view.

        Example:
            >>> s = TriggerStats(); s.record("wrong_arity")
            >>> print(s.table())
            | rule | kind | triggers | share | type |
            | --- | --- | ---: | ---: | --- |
            | `wrong_arity` | error | 1 | 100.0% | Python |
            | total | | 1 | 100% | |
        """
        if fmt not in FORMATS:
            raise StatsError(f"unknown table format {fmt!r}; use one of {', '.join(FORMATS)}")
        if view not in VIEWS:
            raise StatsError(f"unknown table view {view!r}; use one of {', '.join(VIEWS)}")
        if view == "rules":
            found = _registry(reg)
            header = ["rule", "kind", "triggers", "share", "type"]
            body = [
                [
                    f"`{rule_id}`" if fmt == "markdown" else rule_id,
                    found.get(rule_id).kind if rule_id in found else "?",
                    str(count),
                    f"{share:.1%}",
                    kind,
                ]
                for rule_id, count, share, kind, _ in self.rows(reg)
            ]
            body.append(["total", "", str(self.total), "100%" if self.total else "0%", ""])
            align = ["left", "left", "right", "right", "left"]
        else:
            header = ["type", "rules", "triggers"]
            body = [[kind, str(rules), str(triggers)] for kind, rules, triggers in self.environment_rows(reg)]
            body.append(["total", str(sum(r for _, r, _ in self.environment_rows(reg))), str(self.total)])
            align = ["left", "right", "right"]
        return _markdown(header, body, align) if fmt == "markdown" else _plain(header, body, align)

    def __str__(self) -> str:
        return self.table(fmt="plain")


def _registry(reg: Registry | None) -> Registry:
    if reg is not None:
        return reg
    from correction.registry import registry

    return registry


def _markdown(header: list[str], body: list[list[str]], align: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---:" if a == "right" else "---" for a in align) + " |"]
    for row in body:
        lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in row) + "|")
    return "\n".join(lines)


def _plain(header: list[str], body: list[list[str]], align: list[str]) -> str:
    rows = [header] + body
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for row in rows:
        cells = [c.rjust(w) if a == "right" else c.ljust(w) for c, w, a in zip(row, widths, align)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
