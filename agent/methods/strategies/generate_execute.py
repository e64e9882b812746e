"""The ``generate-execute`` strategy: the LLM writes whole programs, run in order until one returns rows.

As KB-BINDER (Li et al., 2023) and ChatKBQA (Luo et al., 2024) do, the
LLM writes a complete logical form in one go, with no observation on the
way, and the candidates are executed in order until one answers. Here a
program is PyQL action lines (``--program-format actions``, on a KB or a
table) or a GrailQA-style S-expression read by pyql's own converter
(``--program-format sexpr``, on a Freebase-style KB:
:func:`pyql.interchange.registry.convert` to action lines; ``ARGMAX`` and
``ARGMIN`` become ``add_max``/``add_min`` with their ties flag, which only
``--action-set sparql-all`` offers). Each program
is run step by step on a fork of the environment (ERASER's feedback
stops a step as it would stop greedy's, but nothing is corrected); a
program that does not end with ``execute()`` is executed.

The prompt (``agent/templates/generate_execute.j2``) gives the action
docs of the environment's action set, as QueryAgent's does (for
S-expressions, the dialect's summary instead), and a one-shot
example made from the side's bundled example (its question, its entities
or table, and its action lines that build the query, without the looks;
as an S-expression for ``sexpr``). On a KB it also lists the relations of
the question's linked entities, read by the environment before the first
call (traced as the environment's steps): KB-BINDER binds a draft's
relations to the KB after writing it, which a program run as written
cannot do, so the first hop is given instead.

Program *i* is asked only when the programs before it failed, at
``--program-temperature`` with its own seed (``--seed`` + *i*), up to
``--programs`` (KB-BINDER's 7 drafts at temperature 0.3): the answer is the
one all seven written first would give, at fewer calls when an early
program answers. A program that is the same as an earlier one is not run
again. Each program is a branch of the trace, its first step carrying the
LLM call; a program that fails (a step refused, an engine error, an empty
result, no program in the reply) is pruned with the reason. With no
program that answers, there is no answer. ``--max-llm-calls`` stops the
writing (``stopped: budget``).

On a table the SQL twin's action lines make a program as well as the KB's
do (``add_condition``, ``set_answer``, ``add_order``, ``execute()``): the
table's description in the prompt plays the part of the entities'
relations. AgentBench's functions (``#k`` variables) are not offered.

Example:
    >>> from pyql.kb import KB
    >>> from pyql.environment.sparql import SparqlEnvironment
    >>> from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.config import AgentConfig
    >>> env = SparqlEnvironment(KB.open("demo"), question="what category is rachel?", entities={"Rachel": "m.0crbvqz"})
    >>> llm = ScriptedLLM(["add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?c)\\nset_answer(?x)",
    ...                    "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)\\nexecute()"])
    >>> result = solve_generate_execute(llm, env, env.question, AgentConfig(feedback="raw"))
    >>> [a["label"] for a in result.answers], result.llm_calls, [(t.action, t.pruned) for t in result.steps][1:3]
    (['Tropical storm (SSHS)'], 2, [('add_fact(m.0crbvqz, meteorology.tropical_cyclone.formed, ?c)', None), ('set_answer(?x)', 'program 1: bad_query: Error: set_answer: ?x is not a variable of the query; existing variables: ?c')])
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from agent.errors import AgentConfigError, BudgetSpent, ContextOverflow, LLMError
from agent.faults import infra_failure
from agent.llm.replies import Sampling
from agent.llm.sampling import CallBudget, SampledLLM
from agent.methods.config import AgentConfig
from agent.methods.episode import AgentResult, Episode, StepTrace, env_trace, load_example, observation_of, prompt_hash, \
    prompt_templates, record_fields
from agent.methods.search import Branch, failure, prune, search_result
from agent.methods.sides import Side, side_for
from agent.methods.strategies.registry import MAX_LLM_CALLS, SEED, Option, strategy
from pyql.environment.actions import render_docs
from pyql.errors import PyQLError
from pyql.echo import one_line
from pyql.interchange.registry import convert, get_format
from pyql.lines import split_lines

__all__ = ["FORMATS", "Example", "one_shot", "program_lines", "solve_generate_execute"]

#: ``--program-format``: what a program is written in.
FORMATS = ("actions", "sexpr")
#: Where the reply of each format ends.
_STOPS = {"actions": ["\nQuestion:", "\n\n"], "sexpr": ["\n"]}
#: A line's own numbering, as a chat model may write it (``Action 3:``, ``3.``), and a code fence.
_NUMBERING = re.compile(r"^\s*(?:action\s*\d+\s*:|\d+\s*[.)])\s*", re.I)


@dataclass(frozen=True)
class Example:
    """The one-shot example of the prompt: its question, its entities or table line, its program."""

    question: str
    given: str
    program: str


def one_shot(side: Side, env: Any, fmt: str) -> Example:
    """The side's bundled example (:meth:`agent.methods.sides.Side.default_example`) as a whole program: the action lines
    that build its query (the looks left out), or their S-expression.

    Raises:
        AgentConfigError: the example has no S-expression (MarkQA's numeric steps).

    Example:
        >>> from pyql.kb import KB
        >>> from pyql.environment.sparql import SparqlEnvironment
        >>> env = SparqlEnvironment(KB.open("demo"))
        >>> one_shot(side_for(env), env, "sexpr").program
        '(ARGMAX (JOIN (R meteorology.cyclone_affected_area.cyclones) m.02xry) meteorology.tropical_cyclone.direct_fatalities)'
        >>> one_shot(side_for(env), env, "actions").program.splitlines()[-2:]
        ['set_answer(?cyclone)', 'execute()']
    """
    lines = split_lines(load_example(side.default_example(env)))
    question = lines[0].removeprefix("Question:").strip()
    given = lines[1]
    actions = [m.group(1).strip() for line in lines if (m := re.match(r"Action \d+:\s*(.+)", line))]
    program = [a for a in actions if _kind(env, a) != "interact"]
    if fmt == "actions":
        return Example(question, given, "\n".join(program))
    entities = _entities(given)
    try:
        text = convert("\n".join(program), "actions", "sexpr", entities, env.kb.profile)
    except PyQLError as exc:
        raise AgentConfigError(f"--program-format sexpr: the one-shot example has no S-expression ({exc}); use actions") from None
    return Example(question, given, text.strip())


def _kind(env: Any, action: str) -> str | None:
    """The kind of an action line's action in the environment's set (``interact``: a look), None when unknown."""
    try:
        return str(env.actions.spec(action.split("(", 1)[0].strip()).kind)
    except PyQLError:
        return None


def _entities(given: str) -> dict[str, str]:
    """The entities of an example's ``Entity: {...}`` line."""
    return dict(re.findall(r"'([^']+)': '([^']+)'", given))


def program_lines(text: str, fmt: str, env: Any) -> list[str]:
    """The action lines of a reply: its lines (numbering and code fences dropped, up to a new ``Question:``), or its
    S-expression converted.

    Raises:
        PyQLError: an S-expression that does not read or does not convert (the message says where).

    Example:
        >>> program_lines("```\\nAction 1: add_fact(a, b, ?c)\\n2. execute()\\n```\\nQuestion: more", "actions", None)
        ['add_fact(a, b, ?c)', 'execute()']
    """
    if fmt == "sexpr":
        form = next((line.strip() for line in split_lines(text) if line.strip() and not line.strip().startswith("```")), "")
        if not form:
            return []
        return [line for line in split_lines(convert(form, "sexpr", "actions", env.memory.entities, env.kb.profile)) if line.strip()]
    out = []
    for line in split_lines(text):
        if line.strip().startswith("Question:"):
            break
        line = _NUMBERING.sub("", line).strip()
        if line and not line.startswith("```"):
            out.append(line)
    return out


class _Writer:
    """One question's programs (see the module docstring)."""

    def __init__(self, llm: Any, config: AgentConfig, fmt: str, programs: int, temperature: float, budget: CallBudget,
                 seed: int) -> None:
        self.llm, self.config, self.fmt = llm, config, fmt
        self.programs, self.temperature, self.budget, self.seed = programs, temperature, budget, seed
        self.error: str | None = None
        self.stopped: str | None = None
        self.written: list[tuple[str, ...]] = []

    def prompt(self, env: Any, side: Side, question: str, episode: Episode) -> str:
        """The prompt: task, docs, the entities' relations (KB; looked up now, each look traced), example, question."""
        example = one_shot(side, env, self.fmt)
        looks = []
        if side.data == "kb":
            for entity in dict.fromkeys(env.memory.entities.values()):
                record = env.step(f"get_relation({entity})")
                episode.add(env_trace(len(episode.traces) + 1, record))
                if episode.failed_on_service(record, side.infra_kb(env)):
                    self.error = episode.error
                    return ""
                if record.ok:
                    looks.append(f"{entity}: {record.observation}")
            given = f"Entity: {dict(env.memory.entities)!r}"
        else:
            given = f"Table: {env.describe_table()}"
        task = ("Write one action a line, in order, and end with execute()." if self.fmt == "actions" else
                f"Write the program as one S-expression on one line: {get_format('sexpr').summary}.")
        return str(prompt_templates().get_template("generate_execute.j2").render(
            task=task, docs=render_docs(env.actions, "prompt") if self.fmt == "actions" else "", looks=looks, example_question=example.question,
            example_given=example.given, example_program=example.program, question=question, given=given,
        ))

    def write(self, prompt: str, i: int, episode: Episode) -> Any:
        """Program ``i``'s reply (None: the budget, the LLM or the context ended the writing; :attr:`error` says which)."""
        sampled = SampledLLM(self.llm, Sampling(temperature=self.temperature, seed=self.seed + i), self.budget)
        try:
            reply = sampled.complete(prompt, stop=list(_STOPS[self.fmt]))
        except BudgetSpent:
            self.stopped = "budget"
            return None
        except LLMError as exc:
            self.error = str(infra_failure(exc))
            return None
        except ContextOverflow as exc:
            episode.overflowed(exc)
            self.error = episode.error
            return None
        episode.count([reply])
        return reply

    def run(self, root: Branch, prompt: str, i: int, reply: Any) -> Branch | None:
        """Run program ``i`` on a fork: its branch when it answers, else None (the branch pruned with the reason)."""
        env, episode = root.env.fork(), root.episode.branch()
        call = {
            "prompt_sha256": prompt_hash(prompt), "prompt": prompt if self.config.trace_prompts == "full" else None,
            "reply": reply.text, "llm_seconds": round(reply.latency, 4), "tokens_in": reply.usage_in,
            "tokens_out": reply.usage_out, "attempts": reply.attempts,
        }
        try:
            lines = program_lines(reply.text, self.fmt, env)
        except PyQLError as exc:
            return self.unrun(episode, call, "unreadable", f"the S-expression does not read: {one_line(str(exc), limit=160)}")
        if not lines:
            return self.unrun(episode, call, "no_program", "the reply has no program")
        if tuple(lines) in self.written:
            return self.unrun(episode, call, "same_program", f"the same program as program {self.written.index(tuple(lines)) + 1}")
        self.written.append(tuple(lines))
        cap = self.config.max_steps
        if len(lines) > cap:
            return self.unrun(episode, call, "too_long", f"the program has {len(lines)} steps; at most --max-steps {cap} run")
        for j, line in enumerate([*lines, *([] if lines[-1] == "execute()" else ["execute()"])], 1):
            record = env.step(line)
            note = {"without_call": "the program ends without execute(): its query is executed"} if j > len(lines) else {}
            fields = record_fields(record, observation_of(record, self.config.feedback))
            episode.add(StepTrace(step=j, **({**call, **fields} if j == 1 else {"prompt_sha256": "", "reply": "", **fields}), **note))
            if episode.failed_on_service(record, episode.side.infra_kb(env)):
                self.error = episode.error
                return None
            reason = failure(record)
            if reason is not None:
                prune(episode, episode.tip, f"program {i + 1}: {reason}")
                return None
            if env.done:
                break
        return Branch(env, episode, steps=len(lines), finished=bool(env.done))

    @staticmethod
    def unrun(episode: Episode, call: dict[str, Any], error: str, reason: str) -> None:
        """A reply that is not run: its call traced as a step of its own, pruned with the reason."""
        episode.add(StepTrace(step=1, **call, action=None, ok=False, error=error, observation=reason[0].upper() + reason[1:] + ".",
                              pruned=reason))
        return None


@strategy(
    "generate-execute",
    description="the LLM writes whole programs (PyQL action lines or S-expressions), run in order until one returns rows",
    cites="KB-BINDER (Li et al., 2023); ChatKBQA (Luo et al., 2024)",
    options=(
        Option("programs", int, 7, "programs the LLM may write, each asked when the ones before failed (KB-BINDER: 7)",
               minimum=1, maximum=32),
        Option("program_format", str, "actions", "what a program is written in: PyQL action lines, or an S-expression "
               "converted by pyql (a Freebase-style KB)", choices=FORMATS),
        Option("program_temperature", float, 0.3, "the programs' temperature (KB-BINDER's 0.3)", minimum=0.05, maximum=2.0),
        MAX_LLM_CALLS,
        SEED,
    ),
    rank=40,
    sides=("sparql", "sql"),
)
def solve_generate_execute(llm: Any, env: Any, question: str, config: AgentConfig, programs: int = 7,
                           program_format: str = "actions", program_temperature: float = 0.3,
                           max_llm_calls: int = MAX_LLM_CALLS.default, seed: int = SEED.default) -> AgentResult:
    """Answer with the first of up to ``programs`` written programs that returns rows (see the module docstring).

    Raises:
        AgentConfigError: an AgentBench environment, or S-expressions on a table.
    """
    started = time.perf_counter()
    side = side_for(env)
    if side.name not in ("sparql", "sql") or (program_format == "sexpr" and side.data != "kb"):
        where = "a KB (sparql) in either format, or a table (sql) in actions"
        raise AgentConfigError(f"--method generate-execute answers on {where}, not on {side.name} in {program_format}")
    writer = _Writer(llm, config, program_format, programs, program_temperature, CallBudget(max_llm_calls), seed)
    root = Branch(env, Episode(head="", side=side))
    prompt = writer.prompt(env, side, question, root.episode)
    answer, tried = None, 0
    while writer.error is None and answer is None and tried < programs:
        reply = writer.write(prompt, tried, root.episode)
        if reply is None:
            break
        tried += 1
        answer = writer.run(root, prompt, tried - 1, reply)
    extra: dict[str, Any] = {"generate_execute": {
        "format": program_format, "programs": programs, "temperature": program_temperature, "written": tried,
        "answered_by": tried if answer is not None else None,
    }}
    if writer.stopped == "budget":
        extra["budget"] = writer.budget.report()
    return search_result(question, env, answer, root.episode, started, error=writer.error, stopped=writer.stopped, extra=extra)
