"""How often the choose mode lists the gold next step, on the Wikidata demo's MarkQA-style questions.

Each question of ``pyql/data/wikidata_questions.jsonl`` is replayed on
``pyql/data/wikidata_demo.ttl`` along its gold program (read with
:func:`pyql.interchange.markqa.program_to_query`, never run): before each gold
step, the environment looks at what it has not looked at (as the agent's
``auto_look`` does), then the valid next steps are enumerated twice, as
:func:`pyql.environment.next_steps.next_steps` lists them (``--limit``, verified) and as
the agent shows them (:func:`agent.methods.choose.enumerate_choices`: ranked
against the question, the best ``--choices``). A gold step is *listed* when a
candidate builds the same step, up to the names of the variables it makes (the
step objects are compared, so ``avg(?a, ?b, ?c)`` and ``div(add(?a, ?b, ?c), 3)``
are the same step). Then the gold step itself is taken and the next one is
asked for. A gold step the action language cannot write (``add_max`` with
``return_obj``/``limit``/``offset``, ``group_obj``, sub-queries, ``set_head``
with several variables) ends its question's replay and is counted apart.

This is **in-sample**: the questions were written together with the demo KB,
and the enumeration was developed looking at them. It says what the
enumeration covers, not how it generalises.

Usage::

    python benchmarks/markqa_choose.py            # the table of docs/benchmarks.md
    python benchmarks/markqa_choose.py --json     # one JSON line per gold step
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent.methods.choose import auto_look, enumerate_choices  # noqa: E402
from pyql.builder import expressions as ex  # noqa: E402
from pyql.errors import PyQLError  # noqa: E402
from pyql.interchange.markqa import program_to_query  # noqa: E402
from pyql.kb import KB  # noqa: E402
from pyql.environment.next_steps import next_steps, trial  # noqa: E402
from pyql.builder.query import Query  # noqa: E402
from pyql.environment.sparql import SparqlEnvironment  # noqa: E402
from pyql.builder.kinds.assignment import Assignment  # noqa: E402
from pyql.builder.kinds.bind import Bind  # noqa: E402
from pyql.builder.terms import IRI, Variable  # noqa: E402

KB_PATH = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
QUESTIONS_PATH = ROOT / "pyql" / "data" / "wikidata_questions.jsonl"
_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_ROUNDING = {"CEIL": "ceil", "FLOOR": "floor"}
_FUNCS = {"ABS": "abs", "YEAR": "year", "MONTH": "month", "xsd:decimal": "to_decimal"}


def expression_text(e: Any) -> str:
    """An expression tree as the action language writes it (MarkQA's function names).

    Example:
        >>> expression_text(ex.mul(ex.div(ex.sub("b", "a"), "a"), 100))
        'mul(div(sub(?b, ?a), ?a), 100)'
        >>> expression_text(ex.floor_div("a", "b")), expression_text(ex.year("t"))
        ('floor_div(?a, ?b)', 'year(?t)')
    """
    if isinstance(e, ex.Var):
        return f"?{e.name}"
    if isinstance(e, ex.Num):
        return str(e.value)
    if isinstance(e, ex.DateLit):
        return f"to_date({e.value.year}, {e.value.month}, {e.value.day})"
    if isinstance(e, ex.Entity):
        return e.sparql().rsplit("/", 1)[-1].rstrip(">")
    if isinstance(e, ex.Op):
        return f"{_OPS[e.op]}({', '.join(expression_text(o) for o in e.operands)})"
    if isinstance(e, ex.Func) and e.name in _ROUNDING and isinstance(e.args[0], ex.Op) and e.args[0].op in "*/":
        inner = e.args[0]
        return f"{_ROUNDING[e.name]}_{_OPS[inner.op]}({', '.join(expression_text(o) for o in inner.operands)})"
    if isinstance(e, ex.Func) and e.name in _FUNCS:
        return f"{_FUNCS[e.name]}({', '.join(expression_text(a) for a in e.args)})"
    raise ValueError(f"no action text for {e!r}")


def step_action(step: Any, profile: Any) -> str:
    """A gold step as an action line (``add_bind`` and ``add_assignment`` written here, the rest by the query)."""
    if isinstance(step, Bind):
        return f"add_bind({expression_text(step.expression)}, {step.var})"
    if isinstance(step, Assignment):
        values = [profile.shorten(v.value).removeprefix("wd:") if isinstance(v, IRI) else v.sparql() for v in step.values]
        return f"add_assignment(({', '.join(values)}), {step.var})"
    return Query(profile, (step,)).actions()[0]


def canonical(step: Any, before: set[str]) -> str:
    """A step's text with the variables it makes renamed in order of appearance (``_new0``, ``_new1`` ...)."""
    text = repr(step)
    made = [str(v)[1:] for v in step.variables() if isinstance(v, Variable) and str(v) not in before]
    for i, name in enumerate(dict.fromkeys(made)):
        text = re.sub(r"(?<![\w?])\??" + re.escape(name) + r"(?!\w)", f"_new{i}", text)
    return text


def _listed(env: Any, candidates: list[Any], gold: str, before: set[str]) -> bool:
    """Whether one of the candidates builds the gold step (tried and undone)."""
    for candidate in candidates:
        if candidate.kind in ("look", "execute"):
            continue
        record = trial(env, candidate.action)
        if record.ok and record.query_after is not None and record.query_after.steps:
            if canonical(record.query_after.steps[-1], before) == gold:
                return True
    return False


def replay(kb: Any, item: dict[str, Any], *, limit: int, choices: int) -> list[dict[str, Any]]:
    """One question along its gold program: per gold step, whether it was listed (see the module docstring)."""
    try:
        gold = program_to_query(item["markqa"], kb.profile)
    except PyQLError as exc:
        return [{"id": item["id"], "step": 1, "kind": "program", "writable": False, "note": str(exc)}]
    env = SparqlEnvironment(kb, item["question"], entities=item.get("entities") or {})
    rows = []
    for index, step in enumerate(gold.steps, 1):
        row: dict[str, Any] = {"id": item["id"], "step": index, "kind": step.action}
        try:
            line = step_action(step, kb.profile)
        except (ValueError, IndexError) as exc:
            rows.append({**row, "writable": False, "note": str(exc)})
            break
        auto_look(env)
        before = {str(v) for v in env.query.variables}
        wanted = canonical(step, before)
        counted = kb.stats.queries
        listed = next_steps(env, limit=limit)
        row["kb_queries"] = kb.stats.queries - counted
        shown = enumerate_choices(env, limit=choices)
        row.update(action=line, listed=_listed(env, listed, wanted, before), shown=_listed(env, shown, wanted, before))
        record = env.step(line)
        taken = record.query_after.steps[-1] if record.ok and record.query_after is not None else None
        if taken is None or canonical(taken, before) != wanted:
            rows.append({**row, "writable": False, "note": record.observation[:160] if not record.ok else "another step"})
            break
        rows.append({**row, "writable": True})
    return rows


def table(rows: list[dict[str, Any]], limit: int, choices: int) -> str:
    """The markdown table: per gold step kind, steps, listed by next_steps, shown by choose."""
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        counts = kinds[row["kind"]]
        counts["steps"] += 1
        if not row["writable"]:
            counts["unwritable"] += 1
            continue
        counts["listed"] += row["listed"]
        counts["shown"] += row["shown"]
    lines = [
        f"| gold step | steps | not writable as an action | listed by next_steps (limit {limit}) | shown by choose (best {choices}) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    total: Counter[str] = Counter()
    for kind, c in sorted(kinds.items(), key=lambda kv: -kv[1]["steps"]):
        total.update(c)
        written = c["steps"] - c["unwritable"]
        lines.append(f"| `{kind}` | {c['steps']} | {c['unwritable']} | {c['listed']}/{written} | {c['shown']}/{written} |")
    written = total["steps"] - total["unwritable"]
    lines.append(f"| all | {total['steps']} | {total['unwritable']} | {total['listed']}/{written} | {total['shown']}/{written} |")
    queries = [r["kb_queries"] for r in rows if "kb_queries" in r]
    lines.append("")
    lines.append(f"KB queries per enumeration (next_steps): mean {sum(queries) / max(len(queries), 1):.1f}, max {max(queries, default=0)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print the table (or ``--json`` lines)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=30, help="steps next_steps lists at most (default 30)")
    parser.add_argument("--choices", type=int, default=6, help="steps the choose mode shows (default 6, the agent's)")
    parser.add_argument("--json", action="store_true", help="one JSON line per gold step")
    args = parser.parse_args(argv)
    kb = KB.open(str(KB_PATH), profile="wikidata")
    items = [json.loads(line) for line in QUESTIONS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [row for item in items for row in replay(kb, item, limit=args.limit, choices=args.choices)]
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print(table(rows, args.limit, args.choices))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
