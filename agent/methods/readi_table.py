"""Readi for TableQA (Appendix A of the Readi paper), on ``pyql_sql`` tables.

The reasoning path is the chosen headers plus row constraints
(``{"league": ["usl a-league"]}``). Instantiation resolves the headers
against the table (as the LLM writes them) and keeps the rows matching the
constraints, through pyql_sql queries (case-insensitive text, numbers as
numbers); several values for one column are alternatives. Editing triggers
only on headers: an unknown header, or fewer than two headers. A row
constraint that matches nothing does not trigger an edit: all rows of the
chosen columns are kept. The QA call answers from the selected items.

Example:
    >>> from pyql_sql import Table
    >>> from agent.llm.scripted import ScriptedLLM
    >>> t = Table.from_rows(["year", "league"], [["2001", "USL A-League"], ["2002", "USL A-League"], ["2003", "NPSL"]])
    >>> llm = ScriptedLLM(['Chosen Headers: ["year", "league"]\\nConstrains: "league": ["usl a-league"]',
    ...                    "Thought: 2002 is the last.\\nAnswer: ['2002']"])
    >>> r = TableReadi(llm).run(t, "what was the last year in the usl a-league?")
    >>> r.answers, r.extra["selected_rows"]
    ([{'value': '2002', 'label': None}], 2)
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from agent.errors import TablePathError  # noqa: F401 (defined in agent/errors.py)
from agent.faults import status_of
from agent.llm.replies import LLM
from agent.methods.context_budget import budget_for
from agent.methods.episode import AgentResult, StepTrace, as_branch, prompt_templates
from agent.methods.readi_loop import UNANSWERED, ask_llm, llm_failure, run_loop
from pyql.errors import ParseError, PyQLError
from pyql.lines import split_lines
from pyql_sql.environment import TableEnvironment
from pyql_sql.next_steps import answer_candidates, grounded_conditions

__all__ = ["TablePath", "TablePaths", "parse_table_path", "TableReadi", "TablePathError"]

#: Stop sequences of Readi's calls on a table.
_STOP = ("\nQuestion:",)

TEMPLATE_VERSION = "readi-table-1"


@dataclass(frozen=True)
class TablePath:
    """Chosen headers and row constraints (column → accepted values)."""

    headers: tuple[str, ...]
    constraints: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def render(self) -> str:
        """The text form :func:`parse_table_path` reads.

        Example:
            >>> TablePath(("year", "league"), (("league", ("usl a-league",)),)).render()
            'Chosen Headers: ["year", "league"]\\nConstrains: "league": ["usl a-league"]'
        """
        heads = ", ".join(_q(h) for h in self.headers)
        cons = ", ".join(f"{_q(c)}: [{', '.join(_q(v) for v in vs)}]" for c, vs in self.constraints)
        return f"Chosen Headers: [{heads}]" + (f"\nConstrains: {cons}" if cons else "")


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_STRING = r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\''


def _strings(text: str) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", a or b) for a, b in re.findall(_STRING, text)]


def parse_table_path(text: str) -> TablePath:
    """Read ``Chosen Headers: [...]`` and ``Constrains: "col": [...]`` (the last ones in the text).

    Raises:
        TablePathError: when there is no ``Chosen Headers:`` list.

    Example:
        >>> parse_table_path('Thought: x\\nChosen Headers: ["year", "league"]\\nConstrains: "league": ["usl a-league"]')
        TablePath(headers=('year', 'league'), constraints=(('league', ('usl a-league',)),))
    """
    heads = list(re.finditer(r"(?i)chosen\s+headers?\s*:\s*\[([^\]]*)\]", text))
    if not heads:
        raise TablePathError(
            'no "Chosen Headers: [...]" found; answer with Chosen Headers: ["a", "b"] and Constrains: "a": ["value"]',
            text=text,
        )
    headers = tuple(_strings(heads[-1].group(1)))
    cons_match = list(re.finditer(r"(?i)constrain(?:t)?s\s*:\s*(.*)", text[heads[-1].end() :]))
    constraints: list[tuple[str, tuple[str, ...]]] = []
    if cons_match:
        body = cons_match[-1].group(1)
        for m in re.finditer(r'(' + _STRING + r')\s*:\s*\[([^\]]*)\]', body):
            column = _strings(m.group(1))[0]
            values = tuple(_strings(m.group(4)))
            if values:
                constraints.append((column, values))
    return TablePath(headers, tuple(constraints))


@dataclass
class _Instance:
    headers: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    constrained: bool = False
    queries: int = 0



class TablePaths:
    """Readi's reasoning paths on a table, for :func:`agent.methods.readi_loop.run_loop`: chosen headers
    and row constraints, instantiated as pyql_sql queries. It counts the queries it sends.
    """

    stop = _STOP
    unchanged = "your last edit did not change the headers; change the headers the feedback names."
    empty_path = TablePath(())

    def __init__(self, table: Any, table_text: str, max_items: int, timeout: float, style: str = "natural") -> None:
        self.table = table
        self.style = style
        self.table_text = table_text
        self.max_items = max_items
        self.timeout = timeout
        self.queries = 0
        self.question = ""
        self._templates = prompt_templates()

    def generate_prompt(self, question: str) -> str:
        self.question = question
        return self._templates.get_template("readi_table_generate.j2").render(question=question, table=self.table_text)

    def first(self, text: str, triggers: Counter[str]) -> tuple[TablePath, str | None]:
        try:
            return parse_table_path(text), None
        except TablePathError as exc:
            return self.empty_path, str(exc)

    def parse(self, text: str) -> TablePath:
        return parse_table_path(text)

    def instantiate(self, path: TablePath) -> _Instance:
        inst = instantiate_table_path(self.table, path, self.max_items, self.timeout)
        self.queries += inst.queries
        return inst

    def describe(self, path: TablePath, inst: _Instance) -> str:
        """The headers found (and not found) and how many rows are kept."""
        text = f"headers [{', '.join(inst.headers)}]"
        if inst.unknown:
            text += f"; not in the table: [{', '.join(inst.unknown)}]"
        rows = f"{len(inst.rows)} row{'' if len(inst.rows) == 1 else 's'} kept"
        return f"{text}; {rows}" + (" by the row constraints" if inst.constrained else "")

    def feedback(self, path: TablePath, inst: _Instance, problem: str | None, triggers: Counter[str]) -> list[str] | None:
        feedback = []
        if problem:
            feedback.append(problem)
        if inst.unknown:
            feedback.append(
                f"Header {inst.unknown!r} not in candidate Headers. You can only choose headers from {ranked_headers(self.table, self.question, self.style)!r}."
            )
            named = question_constraints(self.table, self.question)
            if named:
                feedback.append(f"The question names these cells: {named}.")
            triggers["readi_unknown_header"] += 1
        if len(path.headers) < 2 and not problem:
            feedback.append("insufficient columns in the reasoning path: choose at least two headers.")
            triggers["readi_too_few_headers"] += 1
        return feedback or None

    def edit_prompt(self, question: str, path: TablePath, inst: _Instance, feedback: list[str]) -> str:
        return self._templates.get_template("readi_table_edit.j2").render(
            question=question, table=self.table_text, previous=path.render() if path.headers else "(none)", feedback=feedback
        )

    def malformed(self, exc: ParseError) -> str:
        return str(exc)

    def reject(self, edited: TablePath) -> str | None:
        return None


def ranked_headers(table: Any, question: str, style: str = "natural") -> list[str]:
    """The table's headers, those the question asks for first (the choose mode's ranking and conditions, :mod:`pyql_sql.next_steps`),
    the question read as ``style`` says it is written (:data:`pyql_sql.question_match.QUESTION_STYLES`).

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["Venue", "Crowd", "Date"], [["MCG", "1", "x"]])
        >>> ranked_headers(t, "which match had the largest crowd?", "sql"), ranked_headers(t, "which match had the largest crowd?")
        (['Crowd', 'Venue', 'Date'], ['Venue', 'Crowd', 'Date'])
    """
    conditions = grounded_conditions(TableEnvironment(table, question=question, question_style=style))
    order = [table.columns[i].header for i, _, _ in answer_candidates(table, question, style=style)]
    first = [table.columns[c.column].header for c in conditions]
    return list(dict.fromkeys([*order[:1], *first, *order]))


def question_constraints(table: Any, question: str, limit: int = 4) -> str:
    """The cells the question writes, as Readi's row constraints (the choose mode's grounded conditions), or "".

    The same list the choose mode offers (:func:`pyql_sql.next_steps.grounded_conditions`):
    cells checked on the table's rows, not only found in the question.

    Example:
        >>> from pyql_sql import Table
        >>> question_constraints(Table.from_rows(["Opponent"], [["Athlone Town"]]), "games against athlone town?")
        '"Opponent": ["Athlone Town"]'
    """
    cells = [c for c in grounded_conditions(TableEnvironment(table, question=question)) if c.op == "="][:limit]
    return ", ".join(f"{_q(table.columns[c.column].header)}: [{_q(c.value)}]" for c in cells)


def instantiate_table_path(table: Any, path: TablePath, max_items: int = 50, timeout: float = 5.0) -> _Instance:
    """Resolve a path's headers and keep the constrained rows (see the module docstring).

    Example:
        >>> from pyql_sql import Table
        >>> t = Table.from_rows(["year", "league"], [["2001", "USL A-League"], ["2003", "NPSL"]])
        >>> inst = instantiate_table_path(t, TablePath(("Year", "nope"), (("league", ("npsl",)),)))
        >>> inst.headers, inst.unknown, inst.rows
        (['year'], ['nope'], [{'year': '2003', 'league': 'NPSL'}])
    """
    out = _Instance()
    executor = table.executor(timeout)
    for header in path.headers:
        try:
            out.headers.append(table.resolve_column(header).header)
        except PyQLError:
            out.unknown.append(header)
    columns: list[tuple[str, tuple[str, ...]]] = []
    for column, values in path.constraints:
        try:
            columns.append((table.resolve_column(column).header, values))
        except PyQLError:
            if column not in out.unknown:
                out.unknown.append(column)
    rows: list[tuple[Any, ...]] = []
    if columns:
        for combo in itertools.product(*[[(c, v) for v in vs] for c, vs in columns]):
            query = table.query()
            try:
                for c, v in combo:
                    query = query.add_condition(c, "=", v)
            except PyQLError:
                continue
            got = executor.rows(query, limit=max_items)
            out.queries += 1
            rows.extend(r for r in got.rows if r not in rows)
        out.constrained = bool(rows)
    if not rows:
        got = executor.rows(None, limit=max_items)
        out.queries += 1
        rows = list(got.rows)
    keep = list(dict.fromkeys(out.headers + [c for c, _ in columns])) or list(table.headers)
    index = {h: i for i, h in enumerate(table.headers)}
    out.rows = [{h: row[index[h]] for h in keep} for row in rows]
    return out


class TableReadi:
    """Readi on one table.

    Args:
        llm: any :class:`agent.llm.replies.LLM`.
        max_edits: edit calls at most (default 4).
        max_items: table items given to the QA call.
        timeout: seconds per SQL query.
    """

    def __init__(self, llm: LLM, max_edits: int = 4, max_items: int = 50, timeout: float = 5.0) -> None:
        self.llm = llm
        self.max_edits = max_edits
        self.max_items = max_items
        self.timeout = timeout
        self._templates = prompt_templates()

    def _table_text(self, table: Any) -> str:
        executor = table.executor(self.timeout)
        sample = executor.rows(None, limit=1).rows
        lines = ["| " + " | ".join(table.headers) + " |"]
        if sample:
            lines.append("| " + " | ".join("" if c is None else str(c) for c in sample[0]) + " |")
        return "\n".join(lines)

    def instantiate(self, table: Any, path: TablePath) -> _Instance:
        """Resolve headers and keep the constrained rows (see :func:`instantiate_table_path`)."""
        return instantiate_table_path(table, path, self.max_items, self.timeout)

    def run(self, table: Any, question: str, style: str = "natural") -> AgentResult:
        """Answer one question on a table, read as ``style`` says it is written (:data:`pyql_sql.question_match.QUESTION_STYLES`)."""
        started = time.perf_counter()
        method = TablePaths(table, self._table_text(table), self.max_items, self.timeout, style)
        loop = run_loop(self.llm, method, question, self.max_edits)
        path, inst, traces = loop.path, loop.instance, loop.traces
        answers: list[dict[str, Any]] = []
        error = loop.error
        if error is None:
            answers, error = self._qa(question, table, inst, traces)
        ok = not inst.unknown and len(path.headers) >= 2
        return AgentResult(
            question=question,
            answers=answers,
            steps=as_branch(traces),  # one branch: each call follows the one before
            done=error is None,
            forced=False,
            query="",
            llm_calls=sum(1 for t in traces if t.error not in UNANSWERED),
            tokens_in=sum(t.tokens_in for t in traces),
            tokens_out=sum(t.tokens_out for t in traces),
            kb_queries=method.queries,
            seconds=time.perf_counter() - started,
            rules=dict(loop.triggers),
            error=error,
            status=status_of(error),
            extra={
                "method": "readi",
                "initial_paths": loop.initial.render() if loop.initial.headers else "",
                "final_paths": path.render() if path.headers else "",
                "edits": loop.edits,
                "isr": ok,
                "aip": (len(inst.headers) / len(path.headers)) if path.headers else 0.0,
                "selected_rows": len(inst.rows),
                "rows_constrained": inst.constrained,
                "instance_values": _cell_values(inst.rows[: self.max_items]),
                "template_version": TEMPLATE_VERSION,
            },
        )

    def _qa(self, question: str, table: Any, inst: _Instance, traces: list[StepTrace]) -> tuple[list[dict[str, Any]], str | None]:
        """The QA call over the selected items: the answers, or the error."""
        headers = list(inst.rows[0]) if inst.rows else list(table.headers)
        lines = [f"item {i}: " + "; ".join(f"({h}, {row[h]})" for h in headers) for i, row in enumerate(inst.rows[: self.max_items], 1)]
        template = self._templates.get_template("readi_table_qa.j2")

        def prompt(k: int) -> str:
            more = f"\n(and {len(lines) - k} more items, left out: the model's context is full)" if k < len(lines) else ""
            return template.render(question=question, headers=", ".join(headers), items=("\n".join(lines[:k]) or "(no rows)") + more)

        text = ask_llm(self.llm, lambda: budget_for(self.llm).fit_items(prompt, len(lines)), "qa", traces, _STOP)
        if text is None:
            return [], llm_failure(traces)
        answers = _answers(text)
        traces[-1].observation = f"answers: {', '.join(answers)}" if answers else "no Answer: line found in the reply"
        return [{"value": a, "label": None} for a in answers], None


def _cell_values(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The distinct cells of the selected rows, as text: what the instantiated path offers the QA step (answer coverage).

    Example:
        >>> _cell_values([{"District": "1st", "Incumbent": "A"}, {"District": "2nd", "Incumbent": "A"}])
        ['1st', 'A', '2nd']
    """
    return list(dict.fromkeys(str(v) for row in rows for v in row.values() if v is not None and str(v) != ""))


def _answers(text: str) -> list[str]:
    """The answers of ``Answer: ['a', 'b']`` (the last such line).

    Example:
        >>> _answers("Thought: ...\\nAnswer: ['2002', \\"x\\"]")
        ['2002', 'x']
    """
    lines = [line for line in split_lines(text) if line.strip().lower().startswith("answer")]
    if not lines:
        return []
    body = lines[-1].split(":", 1)[1] if ":" in lines[-1] else ""
    found = _strings(body)
    if not found and body.strip():
        found = [body.strip().strip("[]").strip()]
    return [f for f in found if f]
