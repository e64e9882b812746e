"""The vocabulary of the action language, defined once.

Every part of pyql that reads or writes an operator, an aggregation, a
feedback mode or the groups of the SPARQL actions takes it from here:
the lark grammar (its ``OPERATOR`` terminal is generated from
:data:`WRITTEN_OPERATORS`), the SPARQL builder and the SQL twin (through
:func:`canonical_operator`), the GBNF grammar and the JSON schema of the
agent, the action documentation and the ERASER guidelines. A test checks
that all of them agree. The parameter kinds of the actions are
:mod:`grammars.parameter_kinds`.

It sits in the lowest layer (``grammars``) because the grammar itself is
generated from it; it imports nothing from pyql.

Example:
    >>> canonical_operator("=>"), canonical_operator("<>"), canonical_operator("~")
    ('>=', '!=', None)
    >>> WRITTEN_OPERATORS[:3]
    ('!=', '<=', '<>')
"""

from __future__ import annotations

import re

__all__ = [
    "COMPARISON_OPERATORS",
    "TABLE_OPERATORS",
    "ORDERING_OPERATORS",
    "OPERATOR_ALIASES",
    "WRITTEN_OPERATORS",
    "AGGREGATIONS",
    "FEEDBACK_MODES",
    "SPARQL_LOOK_ACTIONS",
    "SPARQL_END_ACTIONS",
    "SPARQL_ACTION_GROUPS",
    "EXPRESSION_FUNCTIONS",
    "MAX_EXPRESSION_DEPTH",
    "TABLE_ACTION_ORDER",
    "TABLE_AGGREGATIONS",
    "ARITHMETIC_OPERATORS",
    "ARITHMETIC_WORDS",
    "CELL_PARTS",
    "ROW_DIRECTIONS",
    "ORDINALS",
    "AGENTBENCH_FUNCTIONS",
    "canonical_operator",
    "canonical_table_operator",
    "operator_pattern",
    "table_operator_pattern",
]

#: The comparison operators, in the order the documentation lists them.
COMPARISON_OPERATORS: tuple[str, ...] = (">", "<", ">=", "<=", "=", "!=")

#: The operators of a table's condition (SQL ``add_condition``): the comparisons, and ``contains`` (the cell holds
#: the value's words as whole words). The KB side has no ``contains``.
TABLE_OPERATORS: tuple[str, ...] = (*COMPARISON_OPERATORS, "contains")

#: The operators that order values (numbers, dates), as opposed to (in)equality.
ORDERING_OPERATORS: tuple[str, ...] = (">", "<", ">=", "<=")

#: Other spellings an LLM writes, and the operator each one means.
OPERATOR_ALIASES: dict[str, str] = {"==": "=", "<>": "!=", "=>": ">=", "=<": "<="}

#: Every spelling the action language reads as an operator, longest first
#: (the order a regular expression alternation needs).
WRITTEN_OPERATORS: tuple[str, ...] = tuple(
    sorted((*COMPARISON_OPERATORS, *OPERATOR_ALIASES), key=lambda op: (-len(op), op))
)

#: The aggregations (SQL ``set_answer``; SPARQL ``add_count``/``add_sum``/``add_avg``, argmax for MAX/MIN).
AGGREGATIONS: tuple[str, ...] = ("MAX", "MIN", "COUNT", "SUM", "AVG")

#: How a failed step is reported: eraser (targeted guidelines), raw (the raw error), none.
FEEDBACK_MODES: tuple[str, ...] = ("eraser", "raw", "none")

#: The SPARQL actions that are no step kind: the look, documented first, and the end, documented
#: last. The step kinds' actions come between them; each kind's module declares its action's group
#: and place (``pyql/builder/kinds/``, :func:`pyql.builder.kind.sparql_action_order`).
SPARQL_LOOK_ACTIONS: tuple[str, ...] = ("get_relation",)
SPARQL_END_ACTIONS: tuple[str, ...] = ("execute",)

#: The groups of the step kinds' actions, in the order they are documented: ``default``, QueryAgent's
#: set (the paper's prompt; an environment offers it unless told otherwise); ``extra``, offered by
#: name (``add_union``, S-expressions' ``OR``); ``markqa``, MarkQA's numeric functions on Wikidata's
#: statement model (offered on a profile with a statement model).
SPARQL_ACTION_GROUPS: tuple[str, ...] = ("default", "extra", "markqa")

#: The expression functions ``add_bind`` takes in the action language (MarkQA's).
EXPRESSION_FUNCTIONS: tuple[str, ...] = (
    "add", "sub", "mul", "div", "abs", "ceil_mul", "ceil_div", "floor_mul", "floor_div",
    "avg", "year", "month", "to_date", "to_decimal",
)

#: How deep expressions may nest in an action (``mul(div(sub(...)))`` is 3).
MAX_EXPRESSION_DEPTH = 16

#: The order the SQL actions are documented (and offered) in.
TABLE_ACTION_ORDER: tuple[str, ...] = (
    "get_column", "add_condition", "add_order", "add_row", "add_adjacent", "add_part", "add_calculation", "add_group",
    "set_answer", "set_calculation", "compare_rows", "execute",
)

#: The aggregations of the SQL twin's ``set_answer``: the shared ones and ``COUNT DISTINCT`` (the different values).
TABLE_AGGREGATIONS: tuple[str, ...] = (*AGGREGATIONS, "COUNT DISTINCT")

#: The arithmetic between two cells or two rows' cells (SQL ``add_calculation``, ``set_calculation``).
ARITHMETIC_OPERATORS: tuple[str, ...] = ("-", "+", "*", "/")

#: Words an LLM writes for an arithmetic operator, and the operator each one means.
ARITHMETIC_WORDS: dict[str, str] = {
    "minus": "-", "difference": "-", "subtract": "-", "plus": "+", "sum": "+", "add": "+", "times": "*",
    "multiply": "*", "ratio": "/", "divide": "/", "divided by": "/", "x": "*",
}

#: The parts of a cell the SQL twin reads (``add_part``; ``pyql_sql/parts.py`` reads them).
CELL_PARTS: tuple[str, ...] = ("year", "month", "day", "date", "number", "seconds", "before", "after")

#: Where ``add_adjacent`` looks from the row that matches: the row after it or the row before it.
ROW_DIRECTIONS: tuple[str, ...] = ("after", "before")

#: Ordinal words and the row position each one means (``add_row``; the question's ordinal cues): -1 is the last.
ORDINALS: dict[str, int] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "last": -1, "final": -1, "penultimate": -2, "second to last": -2, "second last": -2,
}


def canonical_operator(written: object) -> str | None:
    """The comparison operator a spelling means (surrounding spaces ignored), or None.

    Example:
        >>> [canonical_operator(op) for op in (" >= ", "==", "=<", "LIKE", 3)]
        ['>=', '=', '<=', None, None]
    """
    if not isinstance(written, str):
        return None
    text = written.strip()
    text = OPERATOR_ALIASES.get(text, text)
    return text if text in COMPARISON_OPERATORS else None


def canonical_table_operator(written: object) -> str | None:
    """The operator of a table's condition a spelling means: a comparison (:func:`canonical_operator`) or
    ``contains`` (any case), or None.

    Example:
        >>> [canonical_table_operator(op) for op in ("<>", " Contains ", "LIKE")]
        ['!=', 'contains', None]
    """
    canonical = canonical_operator(written)
    if canonical is not None or not isinstance(written, str):
        return canonical
    text = written.strip().lower()
    return text if text in TABLE_OPERATORS else None


def operator_pattern() -> str:
    """A regular expression matching exactly the written operators (longest first).

    Example:
        >>> import re
        >>> [bool(re.fullmatch(operator_pattern(), op)) for op in ("=>", "<>", "=<", "~")]
        [True, True, True, False]
    """
    return "|".join(re.escape(op) for op in WRITTEN_OPERATORS)


def table_operator_pattern() -> str:
    """A regular expression matching exactly the operators of a table's condition as written (``contains`` too).

    Example:
        >>> import re
        >>> [bool(re.fullmatch(table_operator_pattern(), op)) for op in ("<>", "contains", "like")]
        [True, True, False]
    """
    return operator_pattern() + "|" + "|".join(re.escape(op) for op in TABLE_OPERATORS if op not in COMPARISON_OPERATORS)


#: AgentBench's functions → their parameters (``TOOLS_PARAM_ORDER`` of the task).
AGENTBENCH_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "get_relations": ("variable",),
    "get_neighbors": ("variable", "relation"),
    "intersection": ("variable1", "variable2"),
    "union": ("variable1", "variable2"),
    "get_attributes": ("variable",),
    "argmax": ("variable", "attribute"),
    "argmin": ("variable", "attribute"),
    "count": ("variable",),
}
