"""ERASER: environment-feedback self-correction for step-by-step query building.

After each step, :class:`Eraser` looks at the three environments of the
QueryAgent paper (the KB's result, the Python interpreter's exception, the
reasoning memory), decides whether the step is an error and which kind, and
returns a guideline naming what went wrong and what to do instead. When a
rule fires, the step is undone and the guideline is the observation;
otherwise the observation is the execution result (Algorithm 1).

* :mod:`correction.registry`: :class:`Rule` and the ordered registry, by id;
* :mod:`correction.interpreter_rules`, :mod:`correction.memory_rules`,
  :mod:`correction.kb_rules`: the rules, one trigger each;
  :mod:`correction.numeric_rules`: the rules on MarkQA's numbers (arithmetic, units, time points, rank);
  :mod:`correction.sql_rules`: the SQL twin's rules (``sql_*``, side "sql");
* ``correction/templates/<id>.j2``: the guidelines, apart from the logic;
* :mod:`correction.analyzer`: :class:`Eraser` and :func:`eraser_for`;
* :mod:`correction.stats`: :class:`TriggerStats` (the paper's Tables 8 and 9).

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> env = SparqlEnvironment(KB.open("demo"), analyzer=Eraser())
    >>> rec = env.step("add_fact(?x, ?y)")
    >>> rec.error, rec.observation
    ('wrong_arity', 'add_fact(head, relation, tail) should have 3 parameters. You have 2 parameters: ?x, ?y. Please check again; for example: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category). Please re-generate only Thought 2 and Action 2.')
"""

from __future__ import annotations

from correction import interpreter_rules, kb_rules, memory_rules, numeric_rules, sql_rules  # noqa: F401  (registers the rules)
from correction.analyzer import Eraser, EraserError, RuleBudgetWarning, eraser_for
from correction.registry import (
    RULES,
    Registry,
    Rule,
    RuleError,
    UnknownRuleError,
    markdown_table,
    registry,
    rule,
)
from correction.stats import TriggerStats

__all__ = [
    "Eraser",
    "EraserError",
    "Rule",
    "Registry",
    "RuleError",
    "UnknownRuleError",
    "RuleBudgetWarning",
    "registry",
    "RULES",
    "rule",
    "eraser_for",
    "markdown_table",
    "TriggerStats",
]
