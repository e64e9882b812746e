"""The action grammar as GBNF (llama.cpp's ``grammar`` field) and as a JSON schema.

Grammar-constrained decoding makes an invalid action impossible: the server
only samples tokens that keep the output inside the grammar. The grammar is
generated from the action set's specs (:meth:`pyql.environment.actions.ActionSet.specs`),
the same single source of truth as the documentation and the environment, so
the model can only write ``Action N: name(args)`` with a known name, the
right number of arguments, and arguments of plausible shapes for each
parameter kind, optionally after one ``Thought N: ...`` line:

============== =========================================================
variable       ``?x``
relation       ``a.b.c``, ``wdt:P31``, ``<http://...>``, ``?r``
node           the above, numbers ``10``, dates ``2005-12-31``, strings
               ``"x"``, ``"Rachel"@en``, ``"2011"^^xsd:gYear``
operator       ``>``, ``<``, ``>=``, ``<=``, ``=``, ``!=``, ``==``, ``<>``
table-operator an operator, or ``contains`` (a table's ``add_condition``)
flag           ``true``, ``false`` (also ``True``, ``False``)
whole          a whole number ``3``, or ``none`` (also ``None``)
time           a flag, a year ``2011``, a date, a variable
expression     MarkQA's expression functions nested as calls,
               ``mul(div(sub(?a, ?b), ?b), 100)``, up to
               :data:`EXPRESSION_DEPTH` calls deep; operands are variables,
               names (``pop_2011``), numbers, dates and strings
values         ``(Q319, Q2347978)``: names, numbers, dates or literals
other          a node, or free text without ``,()"'`` and line breaks (a
               quote starts a string in the action language: quote such text)
============== =========================================================

Which rule a parameter kind gets, and its JSON-schema pattern, is the
kind's entry in :data:`grammars.parameter_kinds.PARAMETER_KINDS` (its
``gbnf`` and ``pattern``), the one table the tool schemas, the action
parsers and the docs read too.

MarkQA's numeric actions (``add_quantity``, ``add_bind``, ...) get these rules
from their parameter kinds like every other action, so a grammar of
``SparqlActions(SPARQL_ALL_ACTIONS)`` (what an environment on a
Wikidata-shaped KB offers, :attr:`pyql.builder.profiles.Profile.action_names`) lets
the model write them, and nothing in this module names them.

The grammar is deliberately a little wider than what the environment accepts
(it knows shapes, not the KB); the environment and ERASER still judge the
content. Every rule is non-recursive (a nested expression is unrolled to a
bounded depth), so :func:`gbnf_to_regex` can turn the grammar into an
equivalent Python regular expression: the tests use it to check the gold
action chains against the very GBNF text sent to the server.

Example:
    >>> from pyql.environment.sparql_actions import SparqlActions
    >>> g = action_gbnf(SparqlActions(), step=2)
    >>> matcher = gbnf_to_regex(g)
    >>> bool(matcher.fullmatch("Thought 2: find the category.\\nAction 2: add_fact(m.0crbvqz, a.b, ?c)"))
    True
    >>> bool(matcher.fullmatch("Action 2: add_fact(m.0crbvqz, a.b)"))  # wrong arity
    False
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Iterable

from grammars.parameter_kinds import PARAMETER_KINDS
from grammars.vocabulary import (
    ARITHMETIC_OPERATORS,
    CELL_PARTS,
    COMPARISON_OPERATORS,
    EXPRESSION_FUNCTIONS,
    MAX_EXPRESSION_DEPTH,
    ORDINALS,
    ROW_DIRECTIONS,
    TABLE_OPERATORS,
    WRITTEN_OPERATORS,
)

__all__ = [
    "action_gbnf",
    "path_gbnf",
    "state_gbnf",
    "state_tools",
    "StateVocabulary",
    "action_json_schema",
    "json_action_text",
    "gbnf_to_regex",
    "check_lines",
    "LlamaGrammarChecker",
    "KIND_RULES",
    "MARKQA_KIND_RULES",
    "EXPRESSION_DEPTH",
    "expression_rules",
]

# Building blocks (GBNF). Rule names may only use letters, digits and '-'.
_COMMON = r'''
ws-sep ::= "," " "?
variable ::= "?" [A-Za-z_] [A-Za-z0-9_]*
name ::= [A-Za-z_] [A-Za-z0-9_]* ([.:-] [A-Za-z0-9_]+)*
iri ::= "<" [A-Za-z] [A-Za-z0-9+.-]* ":" [^<>"{}|^`\\ \t\n]* ">"
number ::= "-"? [0-9]+ ("." [0-9]+)?
date ::= [0-9] [0-9] [0-9] [0-9] "-" [0-9] [0-9] ("-" [0-9] [0-9])? ("T" [0-9] [0-9] ":" [0-9] [0-9] (":" [0-9] [0-9])?)? ("Z" | [+-] [0-9] [0-9] ":" [0-9] [0-9])?
string ::= "\"" ([^"\\\n] | "\\" [^\n])* "\""
literal ::= string ("@" [A-Za-z]+ ("-" [A-Za-z0-9]+)* | "^^" (name | iri))?
operator ::= @OPERATORS@
table-operator ::= operator | @TABLE_ONLY@
relation ::= name | iri | variable
node ::= variable | name | iri | date | number | literal
text ::= node | [^,()"'\n` ] ([^,()"'\n`]* [^,()"'\n` ])?
flag ::= "true" | "false" | "True" | "False"
whole ::= [0-9]+ | "none" | "None"
time ::= flag | date | number | variable
values ::= "(" value-item (ws-sep value-item)* ")"
value-item ::= name | iri | date | number | literal
operand ::= variable | date | number | name | string
part ::= @PARTS@
arithmetic ::= @ARITHMETIC@
row-direction ::= @ROW_DIRECTIONS@
position ::= "-"? [1-9] [0-9]* | @ORDINALS@
'''.replace("@OPERATORS@", " | ".join(f'"{op}"' for op in WRITTEN_OPERATORS)).replace(
    "@TABLE_ONLY@", " | ".join(f'"{op}"' for op in TABLE_OPERATORS if op not in COMPARISON_OPERATORS)).replace(
    "@PARTS@", " | ".join(f'"{p}"' for p in CELL_PARTS)).replace(
    "@ARITHMETIC@", " | ".join(f'"{op}"' for op in ARITHMETIC_OPERATORS)).replace(
    "@ROW_DIRECTIONS@", " | ".join(f'"{d}"' for d in ROW_DIRECTIONS)).replace(
    "@ORDINALS@", " | ".join(f'"{w}"' for w in ORDINALS))

#: How deep the grammar lets ``add_bind`` expressions nest (``mul(div(sub(?a, ?b), ?b), 100)`` is 3).
#: The action language reads up to :data:`grammars.vocabulary.MAX_EXPRESSION_DEPTH`; a model that
#: needs more binds a part to a variable first. Each level is one more GBNF rule.
EXPRESSION_DEPTH = min(4, MAX_EXPRESSION_DEPTH)

#: The GBNF rule of each parameter kind of the SPARQL side's own (the table's ``gbnf``).
KIND_RULES: dict[str, str] = {
    name: kind.gbnf for name, kind in PARAMETER_KINDS.items() if name in ("variable", "relation", "node", "operator")
}

#: The GBNF rule of each parameter kind of MarkQA's actions, and of ``query`` (the table's ``gbnf``;
#: ``markqa``, an id, a variable or a name, uses ``text``).
MARKQA_KIND_RULES: dict[str, str] = {
    name: kind.gbnf for name, kind in PARAMETER_KINDS.items() if name not in KIND_RULES and kind.gbnf != "text"
}

#: The GBNF rule of every parameter kind (:data:`grammars.parameter_kinds.PARAMETER_KINDS`).
_KIND_RULE = {name: kind.gbnf for name, kind in PARAMETER_KINDS.items()}


def expression_rules(depth: int = EXPRESSION_DEPTH, operand: str = "operand", name: str = "expression") -> list[str]:
    """The GBNF rules of an expression: MarkQA's functions nested at most ``depth`` calls deep.

    GBNF allows recursion, but the rules are unrolled level by level
    (``expr-1`` … ``expr-<depth>``) so that the nesting is bounded and
    :func:`gbnf_to_regex` can still read the grammar. The function names are
    :data:`grammars.vocabulary.EXPRESSION_FUNCTIONS`.

    Args:
        depth: the most calls nested inside each other (1: no call inside a call).
        operand: the rule of a leaf (a variable, a number ...).
        name: the name of the start rule.

    Raises:
        ValueError: ``depth`` is not between 1 and :data:`grammars.vocabulary.MAX_EXPRESSION_DEPTH`.

    Example:
        >>> rules = expression_rules(2) + ['operand ::= "?" [a-z]+ | [0-9]+', 'ws-sep ::= "," " "?']
        >>> r = gbnf_to_regex("\\n".join(["root ::= expression", *rules]))
        >>> bool(r.fullmatch("mul(sub(?b, ?a), 100)")), bool(r.fullmatch("mul(div(sub(?b, ?a), ?a), 100)"))
        (True, False)
    """
    if not 1 <= depth <= MAX_EXPRESSION_DEPTH:
        raise ValueError(f"expression depth must be 1 to {MAX_EXPRESSION_DEPTH}, not {depth}")
    lines = ["fn ::= " + " | ".join(_literal(f) for f in sorted(EXPRESSION_FUNCTIONS, key=lambda f: (-len(f), f)))]
    below = operand
    for level in range(1, depth + 1):
        lines.append(f'expr-{level} ::= {operand} | fn "(" {below} (ws-sep {below})* ")"')
        below = f"expr-{level}"
    lines.append(f"{name} ::= {below}")
    return lines


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _rule_name(action_name: str) -> str:
    return "act-" + re.sub(r"[^A-Za-z0-9]", "-", action_name)


def _call_rule(spec: Any) -> str:
    """The body of the rule for one action: ``"name(" arg ws-sep arg ")"`` (optional args nested; optional
    parameters written together, :attr:`pyql.environment.actions.Param.with_next`, in one group).

    Example:
        >>> from pyql.environment.actions import ActionSpec, Param
        >>> ps = (Param("a", "text", ""), Param("b", "text", "", False), Param("c", "text", "", False, True), Param("d", "text", "", False))
        >>> _call_rule(ActionSpec("f", "construct", ps, "", "", ""))
        '"f(" text (ws-sep text (ws-sep text ws-sep text)?)? ")"'
    """
    params = list(spec.params)
    required = [p for p in params if p.required]
    optional = [p for p in params if not p.required]
    parts = [_KIND_RULE.get(p.kind, "text") for p in required]
    body = " ws-sep ".join(parts)
    groups: list[list[str]] = []
    for i, p in enumerate(optional):
        rule = _KIND_RULE.get(p.kind, "text")
        if i and optional[i - 1].with_next:
            groups[-1].append(rule)
        else:
            groups.append([rule])
    tail = ""
    for group in reversed(groups):
        inner = "ws-sep " + " ws-sep ".join(group) + (" " + tail if tail else "")
        tail = f"({inner})?"
    if tail and not body:
        tail = "(" + tail[len("(ws-sep "):]  # only optional parameters: the first one has no leading comma
    body = " ".join(x for x in (body, tail) if x)
    inside = f" {body} " if body else " "
    return f'{_literal(spec.name + "(")}{inside}")"'


def action_gbnf(
    actions: Any,
    *,
    step: int | None = None,
    thought: str = "optional",
    resume: str | None = None,
    relations: Iterable[str] | None = None,
) -> str:
    """The GBNF grammar of one step of the agent, for llama.cpp's ``grammar`` field.

    Args:
        actions: a :class:`pyql.environment.actions.ActionSet` (its ``specs()`` are used).
        step: fix the step number ``N`` (else any number).
        thought: ``"optional"`` (default), ``"required"`` or ``"none"``: the
            ``Thought N: ...`` line before the action.
        resume: where the prompt stops: None (before ``Thought``/``Action``),
            ``"thought"`` (the prompt ends with ``Thought N:``: the output is
            the thought's text, a line break and the ``Action N:`` line) or
            ``"action"`` (the prompt ends with ``Action N:``: the output is
            the call alone).
        relations: when given, a relation argument must be one of these
            (e.g. the relations the last ``get_relation`` observations
            listed) or a variable: a small model then cannot invent one.

    Returns:
        The grammar text; its start rule is ``root``.

    Raises:
        ValueError: an unknown ``thought`` or ``resume`` value, or an empty action set.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> g = action_gbnf(SparqlActions(["add_max", "execute"]), resume="action")
        >>> print(g.splitlines()[0])
        root ::= " "? call
        >>> [line for line in g.splitlines() if line.startswith("act-")]
        ['act-add-max ::= "add_max(" variable ")"', 'act-execute ::= "execute(" ")"']
    """
    if thought not in ("optional", "required", "none"):
        raise ValueError(f"thought must be 'optional', 'required' or 'none', not {thought!r}")
    if resume not in (None, "thought", "action"):
        raise ValueError(f"resume must be None, 'thought' or 'action', not {resume!r}")
    specs = list(actions.specs())
    if not specs:
        raise ValueError("the action set has no action")
    lines = [*_head_rules(step, thought, resume), "call ::= " + " | ".join(_rule_name(s.name) for s in specs)]
    lines += [f"{_rule_name(s.name)} ::= {_call_rule(s)}" for s in specs]
    lines += _sub_query_rules(specs)
    lines += _common_rules(relations)
    return "\n".join(_reachable(lines)) + "\n"


def _sub_query_rules(specs: list[Any]) -> list[str]:
    """``sub-query``: MarkQA's ``query(step, step, ...)`` argument of ``add_sub_query``.

    Its steps are the set's query-building actions that take no sub-query
    themselves, so the grammar stays non-recursive (one level of
    sub-queries; the action language reads deeper ones).
    """
    inner = [s for s in specs if s.kind == "construct" and not any(p.kind == "query" for p in s.params)]
    if not inner or len(inner) == len([s for s in specs if s.kind == "construct"]):
        return []
    return [
        'sub-query ::= "query(" sub-step (ws-sep sub-step)* ")"',
        "sub-step ::= " + " | ".join(_rule_name(s.name) for s in inner),
    ]


def _head_rules(step: int | None, thought: str, resume: str | None) -> list[str]:
    """The rules ``root``, ``thought``, ``thought-text`` and ``action`` (see :func:`action_gbnf`)."""
    number = _literal(str(step)) if step is not None else "[0-9]+"
    if resume == "action":
        root = 'root ::= " "? call'
    elif resume == "thought":
        root = "root ::= thought-text \"\\n\" action"
    else:
        root = {"optional": "root ::= thought? action", "required": "root ::= thought action", "none": "root ::= action"}[thought]
    return [
        root,
        f'thought ::= "Thought " {number} ":" thought-text "\\n"',
        'thought-text ::= [^\\n]*',
        f'action ::= "Action " {number} ": " call',
    ]


def _common_rules(relations: Iterable[str] | None) -> list[str]:
    """The building blocks; with ``relations``, a relation is one of them or a variable."""
    common = _COMMON.strip().splitlines() + expression_rules()
    if relations is None:
        return common
    known = sorted({r.strip() for r in relations if r and r.strip()})
    if not known:
        raise ValueError("relations is empty: give at least one relation, or None for any")
    return [
        "relation ::= " + " | ".join(_literal(r) for r in known) + " | variable" if line.startswith("relation ::=") else line
        for line in common
    ]


# ---------------------------------------------------------------------------
# Grammars that know the state of the episode


@dataclass
class StateVocabulary:
    """What a step may name, read from a SPARQL environment's memory (:meth:`from_env`).

    Attributes:
        entities: linked entities and ids seen in results (capped).
        variables: the variables of the current query.
        relations: per entity or variable looked at: (forward, backward) relations, ranked and capped.
        vocabulary: before any look: the KB's relations ranked against the question and capped.
    """

    entities: list[str] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    relations: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    vocabulary: list[str] = field(default_factory=list)

    @classmethod
    def from_env(
        cls, env: Any, *, rank: Any = None, per_argument: int = 40, vocabulary: int = 40, entities: int = 40
    ) -> StateVocabulary:
        """The vocabulary of a :class:`~pyql.environment.sparql.SparqlEnvironment` now.

        Example:
            >>> from pyql.kb import KB
            >>> from pyql.environment.sparql import SparqlEnvironment
            >>> env = SparqlEnvironment(KB.open("demo"), "what category is rachel?", entities={"Rachel": "m.0crbvqz"})
            >>> _ = env.step("get_relation(m.0crbvqz)")
            >>> v = StateVocabulary.from_env(env)
            >>> v.entities, "meteorology.tropical_cyclone.category" in v.relations["m.0crbvqz"][0]
            (['m.0crbvqz'], True)
        """
        from pyql.environment.next_steps import overlap_rank, relation_vocabulary

        rank = rank or overlap_rank
        memory = env.memory
        ids = list(dict.fromkeys([*memory.entities.values(), *sorted(memory.seen)]))[:entities]
        variables = [str(v) for v in env.query.variables]
        relations: dict[str, tuple[list[str], list[str]]] = {}
        for key, rels in memory.relations.items():
            if key.startswith("?") and key not in variables:
                continue
            keep = set(rank(env.question, list(rels.all()))[:per_argument])
            relations[key] = ([r for r in rels.forward if r in keep], [r for r in rels.backward if r in keep])
        vocab: list[str] = []
        if not relations:
            vocab = rank(env.question, relation_vocabulary(env.kb))[:vocabulary]
        return cls(ids, variables, relations, vocab)

    @property
    def known_relations(self) -> list[str]:
        """Every relation some look returned (or the ranked vocabulary before any look)."""
        out: list[str] = []
        for forward, backward in self.relations.values():
            out += forward + backward
        return list(dict.fromkeys(out)) or list(self.vocabulary)


def _alternatives(values: Iterable[str]) -> str:
    return " | ".join(_literal(v) for v in values)


#: What a path's first node may be written as without quotes (the path grammar's NAME, conservatively).
_PLAIN_NAME = re.compile(r"^[^\s\[\]{}\"',;:^][^\[\]{}\";:\n]*$")


def path_gbnf(starts: Sequence[str], relations: Sequence[str], max_length: int, max_paths: int = 1) -> str:
    """A GBNF grammar for a Readi edit: a one-line thought, then ``Final Path:`` with known pieces only.

    Every path starts at one of ``starts`` (the topic entities; quoted when
    the path grammar needs it) and follows 1..``max_length`` of
    ``relations`` (the edit prompt's candidates and the relations the paths
    were bound to); up to ``max_paths`` paths, separated by ``; ``. Every
    sentence is a reply :func:`agent.methods.reasoning_path.parse_paths` reads.

    Raises:
        ValueError: no start, no relation, or a length below 1.

    Example:
        >>> print(path_gbnf(["Jamaica"], ["location.country.languages_spoken"], 2))
        root ::= "Thought: " thought "\\nFinal Path: " path
        thought ::= [^\\n]*
        path ::= start " -> " rel (" -> " rel)?
        start ::= "Jamaica"
        rel ::= "location.country.languages_spoken"
        <BLANKLINE>
    """
    if not starts or not relations or max_length < 1 or max_paths < 1:
        raise ValueError("a path grammar needs a start, a relation, and a length and a path count of at least 1")
    names = [s if _PLAIN_NAME.match(s) and "->" not in s and "→" not in s and "=>" not in s else json.dumps(s, ensure_ascii=False)
             for s in dict.fromkeys(starts)]
    more = ' ("; " path)?' * (max_paths - 1)
    hops = ' (" -> " rel)?' * (max_length - 1)
    return (
        f'root ::= "Thought: " thought "\\nFinal Path: " path{more}\n'
        "thought ::= [^\\n]*\n"
        f'path ::= start " -> " rel{hops}\n'
        f"start ::= {_alternatives(names)}\n"
        f"rel ::= {_alternatives(dict.fromkeys(relations))}\n"
    )


def state_gbnf(
    actions: Any,
    state: StateVocabulary,
    *,
    step: int | None = None,
    thought: str = "optional",
    resume: str | None = None,
    max_chars: int = 60000,
) -> str:
    """The GBNF of one step that knows the episode: only names the memory holds can be written.

    * an ``add_fact`` starts from an entity or variable that was looked at,
      with one of *its* forward relations (``add_fact(K, r, tail)``) or ends
      on it with one of its backward relations (``add_fact(head, r, K)``);
      before any look, the relation is one of ``state.vocabulary``;
    * an entity is a linked entity or an id seen in a result; ``get_relation``
      takes one of them or an existing variable (it is left out while there is none);
    * the head of a fact is an entity or a variable, never a value, and a
      fact through a relation of ``K`` never has ``K`` at its other end;
    * a variable parameter is an existing variable, except a new one
      (``new_var`` of ``add_count``/``add_sum``/``add_avg``) and the ends of
      ``add_fact``, which may also be a fresh name; an action that needs an
      existing variable is left out while there is none;
    * the start/end relations of ``add_time_constrain`` are relations a look returned;
    * numbers, dates and quoted literals are written as literals.

    Escape hatch: with nothing in memory to constrain (no look, no vocabulary),
    or when the grammar would be longer than ``max_chars``, the generic
    grammar of :func:`action_gbnf` (with the known relations, when there are
    some) is returned instead, so a request always has a bounded grammar.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> state = StateVocabulary(["m.0crbvqz"], [], {"m.0crbvqz": (["meteorology.tropical_cyclone.category"], [])})
        >>> check_lines(state_gbnf(SparqlActions(), state, resume="action"), [
        ...     "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
        ...     "add_fact(m.0crbvqz, location.country.capital, ?c)", "add_max(?c)"])
        ['add_fact(m.0crbvqz, location.country.capital, ?c)', 'add_max(?c)']
    """
    generic = {"step": step, "thought": thought, "resume": resume}
    if not state.relations and not state.vocabulary:
        return action_gbnf(actions, **generic)
    base = action_gbnf(actions, **generic).splitlines()
    head = [line for line in base if line.split(" ::= ", 1)[0] in ("root", "thought", "thought-text", "action")]
    lines, fact = _state_rules(state)
    calls: list[str] = []
    for spec in actions.specs():
        body = _state_call_body(spec, state, fact)
        if body is not None:
            calls.append(_rule_name(spec.name))
            lines.append(f"{_rule_name(spec.name)} ::= {body}")
    lines = [*head, "call ::= " + " | ".join(calls), *lines]
    text = "\n".join(_reachable(lines)) + "\n"
    if len(text) > max_chars:
        known = state.known_relations
        return action_gbnf(actions, **generic, relations=known or None)
    return text


#: The parameter kinds of MarkQA's actions (their state rules: :func:`_markqa_part`; the table's ``markqa``).
_MARKQA_KINDS = tuple(name for name, kind in PARAMETER_KINDS.items() if kind.markqa)

#: What a value may be written as in a state grammar.
_STATE_VALUE = "number | date | literal"


def _state_rules(state: StateVocabulary) -> tuple[list[str], list[str]]:
    """The rules of what the state names (entities, variables, relations), and the alternatives of a fact."""
    lines = [
        line for line in _COMMON.strip().splitlines() if line.split(" ::= ", 1)[0] not in ("relation", "node", "text")
    ]
    if state.entities:
        lines.append("entity ::= " + _alternatives(state.entities))
    if state.variables:
        lines.append("var-old ::= " + _alternatives(state.variables))
    known_ends = ("entity" if state.entities else "", "var-old" if state.variables else "")
    lines.append("node ::= " + " | ".join(x for x in (known_ends[0], "variable", _STATE_VALUE) if x))
    lines.append("node-old ::= " + " | ".join(x for x in (*known_ends, _STATE_VALUE) if x))
    if any(known_ends):
        lines.append("look ::= " + " | ".join(x for x in known_ends if x))
    lines.append("relation ::= " + (_alternatives(state.known_relations) or "name | iri"))
    lines.append("head ::= " + ("entity | variable" if state.entities else "variable"))
    lines += _markqa_state_rules(state)
    fact = _fact_rules(state, lines)
    if not state.relations:
        lines.append("vocab ::= " + _alternatives(state.vocabulary))
        fact.append("head ws-sep vocab ws-sep node")
    return lines, fact


def _fact_rules(state: StateVocabulary, lines: list[str]) -> list[str]:
    """The alternatives of an ``add_fact`` through each looked-at key's relations (their rules go to ``lines``)."""
    fact: list[str] = []
    for i, (key, (forward, backward)) in enumerate(state.relations.items()):
        others = [e for e in state.entities if e != key]
        if others:
            lines.append(f"other-{i} ::= " + _alternatives(others))
        # the other end is never the argument itself (no self-loop through its own relation)
        tail = " | ".join(x for x in (f"other-{i}" if others else "", "variable", _STATE_VALUE) if x)
        ends = f"other-{i} | variable" if others else "variable"
        if forward:
            lines.append(f"fwd-{i} ::= " + _alternatives(forward))
            fact.append(f"{_literal(key)} ws-sep fwd-{i} ws-sep ({tail})")
        if backward:
            lines.append(f"bwd-{i} ::= " + _alternatives(backward))
            fact.append(f"({ends}) ws-sep bwd-{i} ws-sep {_literal(key)}")
    return fact


#: A Wikidata property id, when no look named one (MarkQA's ``prop`` parameters take bare PIDs).
_PID = re.compile(r"(?:^|[:/])(P[0-9]+)>?$")


def _markqa_state_rules(state: StateVocabulary) -> list[str]:
    """The state rules of MarkQA's parameters: property ids the looks returned, expressions over existing variables.

    Example:
        >>> _markqa_state_rules(StateVocabulary(["Q64"], ["?a"], {"Q64": (["p:P1082", "wdt:P17"], [])}))[:2]
        ['pid ::= "P1082" | "P17"', 'markqa-entity ::= entity | var-old']
    """
    pids = list(dict.fromkeys(m.group(1) for r in state.known_relations if (m := _PID.search(r))))
    lines = ["pid ::= " + (_alternatives(pids) if pids else '"P" [0-9]+')]
    ends = " | ".join(x for x in ("entity" if state.entities else "", "var-old" if state.variables else "") if x)
    if ends:
        lines.append("markqa-entity ::= " + ends)
    if state.variables:
        lines.append("state-operand ::= var-old | date | number")
        lines += expression_rules(operand="state-operand")
    lines.append('head-select ::= "SELECT " ("*"' + (" | var-old" if state.variables else "") + ")")
    return lines


#: The state rule of each MarkQA parameter, by name (None: only once a variable exists).
_MARKQA_PARAMS: dict[str, str | None] = {
    "entity": "markqa-entity", "prop": "pid", "main_prop": "pid", "qualifier_prop": "pid",
    "main_obj": "node-old", "qualifier_obj": "node-old", "tag": "variable", "new_var": "variable",
    "var": "variable", "rank_var": None, "var_list": None, "head": "head-select",
}


def _markqa_part(param: Any, state: StateVocabulary) -> str | None:
    """The state rule of one parameter of MarkQA's kinds; None when nothing may be written yet."""
    if param.kind == "expression":
        return "expression" if state.variables else None
    if param.kind in ("flag", "time", "values", "whole"):
        return param.kind
    rule = _MARKQA_PARAMS.get(param.name, "node-old")
    if rule is None:
        return "var-old" if state.variables else None
    if rule == "markqa-entity" and not (state.entities or state.variables):
        return None
    return rule


def _state_call_body(spec: Any, state: StateVocabulary, fact: list[str]) -> str | None:
    """The body of one action's rule in a state grammar; None leaves the action out (nothing to name yet)."""
    if spec.name == "add_fact":
        return '"add_fact(" (' + " | ".join(fact) + ') ")"'
    parts: list[tuple[str, bool]] = []
    for p in spec.params:
        if p.kind in _MARKQA_KINDS:
            part = _markqa_part(p, state)
        elif p.kind == "variable":
            part = "variable" if p.name.startswith("new") else ("var-old" if state.variables else None)
        elif p.kind == "relation":
            part = "name" if p.name == "type" else "relation"
        elif p.kind == "operator":
            part = "operator"
        elif spec.name == "get_relation":
            part = "look" if state.entities or state.variables else None
        else:
            part = "node-old"
        if part is None:
            if not p.required:
                break  # an optional parameter that cannot be written yet, and those after it, are left out
            return None
        parts.append((part, p.required))
    return _literal(spec.name + "(") + _arguments(parts) + ' ")"'


def _arguments(parts: list[tuple[str, bool]]) -> str:
    """The arguments of a call rule: the required rules, then each optional one nested in the one before.

    Example:
        >>> _arguments([("a", True), ("b", False), ("c", False)])
        ' a (ws-sep b (ws-sep c)?)? '
        >>> _arguments([("b", False)]), _arguments([])
        (' (b)? ', ' ')
    """
    required = [rule for rule, needed in parts if needed]
    optional = [rule for rule, needed in parts if not needed]
    tail = ""
    for rule in reversed(optional):
        tail = f"(ws-sep {rule}{' ' + tail if tail else ''})?"
    if not required and optional:
        tail = "(" + tail[len("(ws-sep "):]
    body = " ".join(x for x in (" ws-sep ".join(required), tail) if x)
    return f" {body} " if body else " "


def state_tools(tools: list[dict[str, Any]], actions: Any, state: StateVocabulary) -> list[dict[str, Any]]:
    """OpenAI tool schemas with JSON-schema ``enum`` s from the state (the same limits as :func:`state_gbnf`).

    A relation parameter gets the known relations as its ``enum``, a
    variable parameter that must exist the existing variables; a tool that
    needs an existing variable is left out while there is none. Node
    arguments stay free strings (they may be values).

    Example:
        >>> from pyql.environment.actions import openai_tools
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> acts = SparqlActions(["add_fact", "set_answer"])
        >>> state = StateVocabulary(["m.0c"], [], {"m.0c": (["a.b.c"], [])})
        >>> tools = state_tools(openai_tools(acts), acts, state)
        >>> [t["function"]["name"] for t in tools], tools[0]["function"]["parameters"]["properties"]["relation"]["enum"]
        (['add_fact'], ['a.b.c'])
    """
    known = state.known_relations
    specs = {s.name: s for s in actions.specs()}
    out = []
    for tool in tools:
        fn = tool["function"]
        spec = specs.get(fn["name"])
        if spec is None:
            out.append(tool)
            continue
        props = {k: dict(v) for k, v in fn["parameters"]["properties"].items()}
        keep = True
        for p in spec.params:
            if p.kind == "relation" and p.name != "type" and known:
                props[p.name]["enum"] = list(known)
            elif (p.kind == "variable" and not p.name.startswith("new")) or (
                p.kind == "markqa" and _MARKQA_PARAMS.get(p.name, "") is None
            ):  # an existing variable (MarkQA's rank_var and var_list too)
                if not state.variables:
                    keep = False
                else:
                    props[p.name]["enum"] = list(state.variables)
        if keep:
            out.append({**tool, "function": {**fn, "parameters": {**fn["parameters"], "properties": props}}})
    return out


def _reachable(lines: list[str]) -> list[str]:
    """Keep only the rules reachable from ``root`` (llama.cpp needs no unused ones)."""
    bodies = {line.split(" ::= ", 1)[0]: line.split(" ::= ", 1)[1] for line in lines}
    seen: set[str] = set()
    todo = ["root"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        body = re.sub(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]', " ", bodies[name])
        todo += [ref for ref in re.findall(r"[A-Za-z][A-Za-z0-9-]*", body) if ref in bodies]
    return [line for line in lines if line.split(" ::= ", 1)[0] in seen]


# ---------------------------------------------------------------------------
# JSON schema

#: The JSON-schema pattern of each parameter kind that has one (the table's ``pattern``).
_KIND_PATTERNS = {name: kind.pattern for name, kind in PARAMETER_KINDS.items() if kind.pattern is not None}


def action_json_schema(actions: Any, *, thought: bool = True) -> dict[str, Any]:
    """A JSON schema of one step, for servers with JSON-schema constrained output.

    The object is ``{"thought": "...", "action": {"name": NAME, "args": [...]}}``;
    ``action`` is one of one schema per action (``anyOf``), each with a
    ``const`` name and an ``args`` array of exactly the right length
    (``prefixItems``, patterns for variables, relations and operators).
    :func:`json_action_text` writes such an object as an action line.

    Args:
        actions: a :class:`pyql.environment.actions.ActionSet`.
        thought: include (and require) the ``thought`` field.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> s = action_json_schema(SparqlActions(["add_max", "execute"]))
        >>> [a["properties"]["name"]["const"] for a in s["properties"]["action"]["anyOf"]]
        ['add_max', 'execute']
        >>> s["properties"]["action"]["anyOf"][0]["properties"]["args"]["minItems"]
        1
    """
    options = []
    for spec in actions.specs():
        items = []
        for p in spec.params:
            item: dict[str, Any] = {"type": PARAMETER_KINDS[p.kind].json_type, "description": f"{p.name} ({p.kind})"}
            if p.kind in _KIND_PATTERNS:
                item["pattern"] = _KIND_PATTERNS[p.kind]
            items.append(item)
        args: dict[str, Any] = {"type": "array", "minItems": spec.min_args, "maxItems": spec.max_args}
        runs = _runs(spec.counts)
        if len(runs) > 1:  # optional parameters written together: only the lengths that end outside such a group
            args["anyOf"] = [{"minItems": low, "maxItems": high} for low, high in runs]
        if items:
            args["prefixItems"] = items
            args["items"] = False
        options.append(
            {
                "type": "object",
                "properties": {"name": {"const": spec.name}, "args": args},
                "required": ["name", "args"],
                "additionalProperties": False,
            }
        )
    props: dict[str, Any] = {}
    required = []
    if thought:
        props["thought"] = {"type": "string"}
        required.append("thought")
    props["action"] = {"anyOf": options}
    required.append("action")
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _runs(counts: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive numbers as ``(first, last)`` runs.

    Example:
        >>> _runs([4, 5, 7]), _runs([1, 2, 3])
        ([(4, 5), (7, 7)], [(1, 3)])
    """
    runs: list[tuple[int, int]] = []
    for n in counts:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def json_action_text(obj: dict[str, Any], step: int | None = None) -> str:
    """Write a JSON step (see :func:`action_json_schema`) as ``Thought``/``Action`` lines.

    Example:
        >>> json_action_text({"thought": "max time", "action": {"name": "add_max", "args": ["?time"]}}, step=4)
        'Thought 4: max time\\nAction 4: add_max(?time)'
    """
    from pyql.action_parser import render_argument

    n = f" {step}" if step is not None else ""
    action = obj.get("action") or {}
    args = []
    for value in action.get("args") or []:
        args.append(str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else render_argument(str(value)))
    line = f"Action{n}: {action.get('name', '')}({', '.join(args)})"
    text = str(obj.get("thought") or "").strip()
    return f"Thought{n}: {text}\n{line}" if text else line


# ---------------------------------------------------------------------------
# GBNF (non-recursive subset) -> Python regex, to test grammars without a model

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t]+|\#[^\n]*)
  | (?P<lit>"(?:[^"\\]|\\.)*")
  | (?P<cls>\[(?:[^\]\\]|\\.)*\])
  | (?P<name>[A-Za-z0-9-]+)
  | (?P<rep>\{\s*\d+\s*(?:,\s*\d*\s*)?\})
  | (?P<op>[()|*+?])
    """,
    re.X,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "]": "]", "[": "[", "-": "-", "^": "^"}


def _decode(body: str) -> list[str]:
    """Characters of a literal/class body, undoing GBNF escapes (``\\n``, ``\\xHH``, ``\\uHHHH``)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            e = body[i + 1]
            if e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                out.append(chr(int(body[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
            out.append(_ESCAPES.get(e, e))
            i += 2
            continue
        out.append(c)
        i += 1
    return out


def _class_to_regex(token: str) -> str:
    body = token[1:-1]
    negate = body.startswith("^")
    if negate:
        body = body[1:]
    # Work on escaped-aware units so that '\-' is a literal dash, not a range.
    units: list[tuple[str, bool]] = []  # (char, was_escaped)
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            e = body[i + 1]
            if e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                units.append((chr(int(body[i + 2 : i + 2 + width], 16)), True))
                i += 2 + width
            else:
                units.append((_ESCAPES.get(e, e), True))
                i += 2
        else:
            units.append((body[i], False))
            i += 1
    parts: list[str] = []
    j = 0
    while j < len(units):
        ch, _ = units[j]
        if j + 2 < len(units) and units[j + 1] == ("-", False):
            parts.append(f"{re.escape(ch)}-{re.escape(units[j + 2][0])}")
            j += 3
        else:
            parts.append("\\-" if ch == "-" else re.escape(ch))
            j += 1
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _parse_rules(grammar: str) -> dict[str, list[tuple[str, str]]]:
    rules: dict[str, list[tuple[str, str]]] = {}
    current: str | None = None
    for raw_line in grammar.splitlines():
        line = raw_line.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^([A-Za-z0-9-]+)\s*::=(.*)$", line)
        if m:
            current = m.group(1)
            if current in rules:
                raise ValueError(f"rule {current!r} is defined twice")
            rules[current] = []
            rest = m.group(2)
        elif current is not None:
            rest = line
        else:
            raise ValueError(f"text before the first rule: {line!r}")
        pos = 0
        while pos < len(rest):
            t = _TOKEN_RE.match(rest, pos)
            if t is None:
                raise ValueError(f"cannot read GBNF at {rest[pos:pos + 20]!r} in rule {current!r}")
            pos = t.end()
            kind = t.lastgroup or ""
            if kind != "ws":
                rules[current].append((kind, t.group()))
    if "root" not in rules:
        raise ValueError("the grammar has no root rule")
    return rules


def gbnf_to_regex(grammar: str, start: str = "root") -> "re.Pattern[str]":
    """Compile a non-recursive GBNF grammar into an equivalent Python regex.

    Supports what :func:`action_gbnf` writes (and the common subset of GBNF):
    literals, character classes, rule references, groups, alternatives and
    the ``* + ? {m} {m,} {m,n}`` repetitions. Use ``fullmatch`` to test
    whether a text is in the grammar's language.

    Raises:
        ValueError: a syntax it does not read, an undefined rule, or a
            recursive rule (which a regex cannot express).

    Example:
        >>> r = gbnf_to_regex('root ::= "a" b+\\nb ::= [0-9] | "x"')
        >>> bool(r.fullmatch("a12x")), bool(r.fullmatch("a"))
        (True, False)
    """
    return re.compile(_RegexCompiler(_parse_rules(grammar)).rule(start, ()), re.S)


class _RegexCompiler:
    """Turns parsed GBNF rules into regex text, rule by rule (each compiled once)."""

    def __init__(self, rules: dict[str, list[tuple[str, str]]]) -> None:
        self.rules = rules
        self.cache: dict[str, str] = {}

    def rule(self, name: str, stack: tuple[str, ...]) -> str:
        """The regex of rule ``name``; ``stack`` holds the rules being compiled (to catch recursion)."""
        if name in self.cache:
            return self.cache[name]
        if name in stack:
            raise ValueError(f"rule {name!r} is recursive: {' -> '.join(stack + (name,))}")
        if name not in self.rules:
            raise ValueError(f"undefined rule {name!r}")
        tokens = self.rules[name]
        regex, pos = self.alternatives(tokens, 0, stack + (name,))
        if pos != len(tokens):
            raise ValueError(f"unbalanced ')' in rule {name!r}")
        self.cache[name] = regex
        return regex

    def alternatives(self, tokens: list[tuple[str, str]], pos: int, stack: tuple[str, ...]) -> tuple[str, int]:
        """The regex of ``a b | c ...`` from ``pos`` up to a closing ``)`` or the end, and where it stopped."""
        alts: list[str] = []
        seq: list[str] = []
        while pos < len(tokens):
            kind, text = tokens[pos]
            if kind == "op" and text == ")":
                break
            if kind == "op" and text == "|":
                alts.append("".join(seq))
                seq = []
                pos += 1
                continue
            atom, pos = self.atom(tokens, pos, stack)
            atom, pos = _repeated(atom, tokens, pos)
            seq.append(atom)
        alts.append("".join(seq))
        return "|".join(alts) if len(alts) > 1 else alts[0], pos

    def atom(self, tokens: list[tuple[str, str]], pos: int, stack: tuple[str, ...]) -> tuple[str, int]:
        """The regex of one literal, class, rule reference or group at ``pos``, and the position after it."""
        kind, text = tokens[pos]
        if kind == "lit":
            return f"(?:{re.escape(''.join(_decode(text[1:-1])))})", pos + 1
        if kind == "cls":
            return _class_to_regex(text), pos + 1
        if kind == "name":
            return f"(?:{self.rule(text, stack)})", pos + 1
        if kind == "op" and text == "(":
            inner, pos = self.alternatives(tokens, pos + 1, stack)
            if pos >= len(tokens) or tokens[pos] != ("op", ")"):
                raise ValueError(f"missing ')' in rule {stack[-1]!r}")
            return f"(?:{inner})", pos + 1
        raise ValueError(f"unexpected {text!r} in rule {stack[-1]!r}")


def _repeated(atom: str, tokens: list[tuple[str, str]], pos: int) -> tuple[str, int]:
    """``atom`` with the repetitions (``* + ? {m,n}``) that follow it at ``pos``, and the position after them."""
    while pos < len(tokens) and (tokens[pos][0] == "rep" or tokens[pos][1] in ("*", "+", "?")):
        suffix = tokens[pos][1]
        if tokens[pos][0] == "rep":
            suffix = re.sub(r"\s+", "", suffix)
        atom = f"(?:{atom}){suffix}"
        pos += 1
    return atom, pos


def check_lines(grammar: str, lines: Iterable[str]) -> list[str]:
    """The lines that the grammar does NOT accept (empty when all match).

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> check_lines(action_gbnf(SparqlActions(), resume="action"), ["execute()", "execute(1)"])
        ['execute(1)']
    """
    matcher = gbnf_to_regex(grammar)
    return [line for line in lines if not matcher.fullmatch(line)]


# ---------------------------------------------------------------------------
# llama.cpp's own grammar engine (needs llama-cpp-python and a GGUF for the vocabulary)


class LlamaGrammarChecker:
    """Check grammars and texts with llama.cpp's grammar sampler itself.

    Loads only the vocabulary of a GGUF model (no weights are computed), so a
    check takes milliseconds after a one-off load. :meth:`validate` runs
    llama.cpp's GBNF parser; :meth:`accepts` feeds the text's tokens one by
    one through the grammar sampler (a token the grammar forbids gets logit
    ``-inf``) and finally asks whether end-of-generation is allowed, i.e.
    whether the text is a complete sentence of the grammar.

    Args:
        model_path: a GGUF file (e.g. :func:`agent.llm.local.model_path`).

    Raises:
        ImportError: llama-cpp-python is not installed.
        ValueError: the model file cannot be loaded.
    """

    def __init__(self, model_path: Any) -> None:
        import llama_cpp

        self._L = llama_cpp
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self._model = llama_cpp.llama_model_load_from_file(str(model_path).encode(), params)
        if not self._model:
            raise ValueError(f"llama.cpp cannot load the model file {model_path}")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)

    def close(self) -> None:
        """Free the vocabulary (safe to call twice)."""
        if getattr(self, "_model", None):
            self._L.llama_model_free(self._model)
            self._model = None

    def __enter__(self) -> "LlamaGrammarChecker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _sampler(self, grammar: str, root: str = "root") -> Any:
        smpl = self._L.llama_sampler_init_grammar(self._vocab, grammar.encode(), root.encode())
        if not smpl:
            raise ValueError("llama.cpp rejected the grammar (its parser printed the reason on stderr)")
        return smpl

    def validate(self, grammar: str, root: str = "root") -> None:
        """Raise ValueError when llama.cpp's GBNF parser rejects the grammar."""
        self._L.llama_sampler_free(self._sampler(grammar, root))

    def tokenize(self, text: str) -> list[int]:
        """The model's tokens of ``text`` (no BOS, no special tokens)."""
        data = text.encode()
        n_max = len(data) + 8
        buf = (self._L.llama_token * n_max)()
        n = self._L.llama_tokenize(self._vocab, data, len(data), buf, n_max, False, False)
        if n < 0:
            raise ValueError(f"cannot tokenize {text[:40]!r}")
        return list(buf[:n])

    def accepts(self, grammar: str, text: str, root: str = "root") -> bool:
        """Whether llama.cpp's grammar engine lets a model write exactly ``text``."""
        import ctypes
        import math

        L = self._L
        smpl = self._sampler(grammar, root)
        try:
            cell = (L.llama_token_data * 1)()

            def allowed(token: int) -> bool:
                cell[0].id, cell[0].logit, cell[0].p = token, 0.0, 0.0
                arr = L.llama_token_data_array(data=cell, size=1, selected=-1, sorted=False)
                L.llama_sampler_apply(smpl, ctypes.byref(arr))
                return not math.isinf(cell[0].logit)

            for token in self.tokenize(text):
                if not allowed(token):
                    return False
                L.llama_sampler_accept(smpl, token)
            return allowed(L.llama_vocab_eos(self._vocab))
        finally:
            L.llama_sampler_free(smpl)
