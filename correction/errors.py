"""The errors of ERASER (the correction package), all in the :class:`~pyql.errors.PyQLError` tree.

Modules re-export the classes they raise (``from correction.registry import RuleError`` works).

Example:
    >>> issubclass(UnknownRuleError, RuleError), UnknownRuleError("x").kind
    (True, 'unknown_rule')
"""

from __future__ import annotations

from pyql.errors import PyQLError

__all__ = ["EraserError", "RuleError", "StatsError", "TemplateError", "UnknownRuleError"]


class TemplateError(PyQLError):
    """A guideline template is missing or needs a variable its rule did not give.

    Example:
        >>> TemplateError("x").kind
        'bad_template'
    """

    kind = "bad_template"


class EraserError(PyQLError, ValueError):
    """ERASER was configured wrongly (bad cap, unknown feedback mode).

    Example:
        >>> EraserError("x").kind
        'bad_eraser'
    """

    kind = "bad_eraser"


class StatsError(PyQLError, ValueError):
    """A stats table was asked for in an unknown format or view.

    Example:
        >>> StatsError("x").kind
        'bad_stats'
    """

    kind = "bad_stats"


class RuleError(PyQLError, ValueError):
    """A rule is declared wrongly (bad field, duplicate id).

    Example:
        >>> RuleError("x").kind
        'bad_rule'
    """

    kind = "bad_rule"


class UnknownRuleError(RuleError, KeyError):
    """A rule id is not registered; the message lists the registered ids.

    Example:
        >>> UnknownRuleError("no rule 'x'").kind
        'unknown_rule'
    """

    kind = "unknown_rule"

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
