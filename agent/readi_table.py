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
    >>> from agent.llm import ScriptedLLM
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
from typing import Any

from agent.llm import LLM, LLMError
from agent.query_agent import AgentResult, StepTrace, _hash, prompt_templates
from pyql.errors import ParseError, PyQLError

__all__ = ["TablePath", "parse_table_path", "TableReadi", "TablePathError"]

TEMPLATE_VERSION = "readi-table-1"


class TablePathError(ParseError):
    """A table reasoning path (Chosen Headers / Constrains) that does not parse."""

    kind = "table_path_syntax"


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



class TableReadi:
    """Readi on one table.

    Args:
        llm: any :class:`agent.llm.LLM`.
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

    def _ask(self, prompt: str, kind: str, traces: list[StepTrace]) -> str | None:
        try:
            reply = self.llm.complete(prompt, stop=["\nQuestion:"])
        except LLMError as exc:
            traces.append(StepTrace(len(traces) + 1, _hash(prompt), "", kind, False, "llm_error", str(exc)))
            return None
        traces.append(
            StepTrace(len(traces) + 1, _hash(prompt), reply.text, kind, True, None, "", llm_seconds=round(reply.latency, 4),
                      tokens_in=reply.usage_in, tokens_out=reply.usage_out, attempts=reply.attempts)
        )
        return reply.text

    def instantiate(self, table: Any, path: TablePath) -> _Instance:
        """Resolve headers and keep the constrained rows (see the module docstring)."""
        out = _Instance()
        executor = table.executor(self.timeout)
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
                got = executor.rows(query, limit=self.max_items)
                out.queries += 1
                rows.extend(r for r in got.rows if r not in rows)
            out.constrained = bool(rows)
        if not rows:
            got = executor.rows(None, limit=self.max_items)
            out.queries += 1
            rows = list(got.rows)
        keep = list(dict.fromkeys(out.headers + [c for c, _ in columns])) or list(table.headers)
        index = {h: i for i, h in enumerate(table.headers)}
        out.rows = [{h: row[index[h]] for h in keep} for row in rows]
        return out

    def run(self, table: Any, question: str) -> AgentResult:
        """Answer one question on a table."""
        started = time.perf_counter()
        traces: list[StepTrace] = []
        triggers: Counter[str] = Counter()
        table_text = self._table_text(table)
        reply = self._ask(self._templates.get_template("readi_table_generate.j2").render(question=question, table=table_text), "generate_path", traces)
        error = None if reply is not None else "llm_error"
        path = TablePath(())
        problem: str | None = None
        if reply is not None:
            try:
                path = parse_table_path(reply)
            except TablePathError as exc:
                problem = str(exc)
        initial = path
        inst = self.instantiate(table, path)
        queries = inst.queries
        edits = 0
        while error is None and edits < self.max_edits:
            feedback = []
            if problem:
                feedback.append(problem)
            if inst.unknown:
                feedback.append(
                    f"Header {inst.unknown!r} not in candidate Headers. You can only choose headers from {list(table.headers)!r}."
                )
                triggers["readi_unknown_header"] += 1
            if len(path.headers) < 2 and not problem:
                feedback.append("insufficient columns in the reasoning path: choose at least two headers.")
                triggers["readi_too_few_headers"] += 1
            if not feedback:
                break
            edits += 1
            prompt = self._templates.get_template("readi_table_edit.j2").render(
                question=question, table=table_text, previous=path.render() if path.headers else "(none)", feedback=feedback
            )
            reply = self._ask(prompt, "edit_path", traces)
            if reply is None:
                error = "llm_error"
                break
            try:
                edited = parse_table_path(reply)
            except TablePathError as exc:
                problem = str(exc)
                traces[-1].ok, traces[-1].error = False, "edit_malformed"
                continue
            if edited == path:
                problem = "your last edit did not change the headers; change the headers the feedback names."
                traces[-1].ok, traces[-1].error = False, "edit_unchanged"
                continue
            problem = None
            path = edited
            inst = self.instantiate(table, path)
            queries += inst.queries
        answers: list[dict[str, Any]] = []
        if error is None:
            headers = list(inst.rows[0]) if inst.rows else list(table.headers)
            items = "\n".join(
                f"item {i}: " + "; ".join(f"({h}, {row[h]})" for h in headers) for i, row in enumerate(inst.rows[: self.max_items], 1)
            )
            text = self._ask(
                self._templates.get_template("readi_table_qa.j2").render(question=question, headers=", ".join(headers), items=items or "(no rows)"),
                "qa",
                traces,
            )
            if text is None:
                error = "llm_error"
            else:
                answers = [{"value": a, "label": None} for a in _answers(text)]
        ok = not inst.unknown and len(path.headers) >= 2
        return AgentResult(
            question=question,
            answers=answers,
            steps=traces,
            done=error is None,
            forced=False,
            query="",
            llm_calls=sum(1 for t in traces if t.error != "llm_error"),
            tokens_in=sum(t.tokens_in for t in traces),
            tokens_out=sum(t.tokens_out for t in traces),
            kb_queries=queries,
            seconds=time.perf_counter() - started,
            rules=dict(triggers),
            error=error,
            extra={
                "method": "readi",
                "initial_paths": initial.render() if initial.headers else "",
                "final_paths": path.render() if path.headers else "",
                "edits": edits,
                "isr": ok,
                "aip": (len(inst.headers) / len(path.headers)) if path.headers else 0.0,
                "selected_rows": len(inst.rows),
                "rows_constrained": inst.constrained,
                "template_version": TEMPLATE_VERSION,
            },
        )


def _answers(text: str) -> list[str]:
    """The answers of ``Answer: ['a', 'b']`` (the last such line).

    Example:
        >>> _answers("Thought: ...\\nAnswer: ['2002', \\"x\\"]")
        ['2002', 'x']
    """
    lines = [line for line in text.splitlines() if line.strip().lower().startswith("answer")]
    if not lines:
        return []
    body = lines[-1].split(":", 1)[1] if ":" in lines[-1] else ""
    found = _strings(body)
    if not found and body.strip():
        found = [body.strip().strip("[]").strip()]
    return [f for f in found if f]
