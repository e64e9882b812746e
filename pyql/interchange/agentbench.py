"""The ``agentbench`` format: AgentBench's knowledge-graph actions (``get_neighbors``, ``intersection``, ``#k``).

AgentBench's knowledge-graph task (THUDM/AgentBench,
``src/server/tasks/knowledgegraph``) gives a model seven functions over
Freebase. Each that makes a set stores it as the next variable ``#0``,
``#1``, ...: a variable *is* an S-expression, built as the task's own
``api.py`` builds it, and ``Final Answer: #k`` answers with ``#k``:

===============================  =====================================  ====================
action                            the new variable                       note
===============================  =====================================  ====================
``get_relations(x)``              none                                   ``x``: an entity or ``#k``
``get_attributes(#k)``            none
``get_neighbors(x, r)``           ``(JOIN (R r) x)``                     the objects of ``x r ?``
``intersection(#a, #b)``          ``(AND a b)``
``union(#a, #b)``                 ``(OR a b)``                           read to ``add_union``
``count(#a)``                     ``(COUNT a)``
``argmax(#a, attr)``              ``(ARGMAX a attr)``                    ``argmin``: ``ARGMIN``
===============================  =====================================  ====================

A trajectory is read line by line: ``Action: f(...)`` lines (or bare
calls), ``Final Answer: #k`` (``Find Answer`` too, as the task's own
pattern accepts); thoughts and observations are skipped. A trajectory
stored as JSON, AgentInstruct's ``{"conversations": [{"from": "gpt",
"value": ...}]}`` or a list of ``{"role": "assistant", "content": ...}``
messages, is read from the model's turns (lines are then numbered in
those turns joined). A turn with OpenAI ``tool_calls`` (the function-calling
form of AgentBench's task, whose own one-shot demo is written so) is read as
its calls, each ``Action: name(arguments in the task's parameter order)``,
its text ignored as the task ignores it; arguments that are no JSON object,
or miss a parameter, are errors naming the turn. An argument that
is an entity's name (as the question lists them) is that entity, as the
task's environment reads it; a name may hold commas, so the relation of
``get_neighbors``/``argmax`` is what follows the last comma. A function
outside the seven (``get_entities_of_type``, as models hallucinate) is an
``invalid_action`` naming the vocabulary; a ``#k`` not made yet, a missing
``Final Answer``, a malformed entity or relation are errors naming the
line. The answer's S-expression then reads to a chain
(:mod:`pyql.interchange.sexpr`).

Example:
    >>> text = "Action: get_relations(Goat)\\nAction: get_neighbors(Goat, biology.organism_classification.lower_classifications)\\nFinal Answer: #0"
    >>> agentbench_form(text, {"Goat": "m.03fwl"})
    '(JOIN (R biology.organism_classification.lower_classifications) m.03fwl)'
    >>> read_agentbench(text, {"Goat": "m.03fwl"}, FREEBASE).actions()
    ['add_fact(m.03fwl, biology.organism_classification.lower_classifications, ?x0)', 'set_answer(?x0)']
"""

from __future__ import annotations

import json
import re
from typing import Mapping

from pyql.echo import clip
from pyql.errors import (
    ArityError,
    ConversionError,
    InvalidActionError,
    ParseError,
    PyQLError,
)
from grammars.vocabulary import AGENTBENCH_FUNCTIONS as FUNCTIONS
from pyql.interchange.registry import reader
from pyql.interchange.sexpr import read_sexpr
from pyql.lines import split_lines
from pyql.builder.profiles import FREEBASE, Profile  # noqa: F401 (FREEBASE: the doctests use it)
from pyql.builder.query import Query

__all__ = ["FUNCTIONS", "agentbench_form", "read_agentbench"]

_CALL = re.compile(r"^\s*(?:Action\s*\d*\s*:\s*)?([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.DOTALL)
_FINAL = re.compile(r"(?:Find|Final) Answer\s*:\s*#(\d+)")
_ENTITY = re.compile(r"^[mg]\.[0-9a-z_]+$")
_RELATION = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$")
_VARIABLE = re.compile(r"^#(\d+)$")


class _Trajectory:
    """The variables of one trajectory, each an S-expression, made as the task's api.py makes them."""

    def __init__(self, entities: Mapping[str, str]) -> None:
        self.entities = entities
        self.forms: list[str] = []

    def operand(self, text: str, where: str, sets_only: bool = False) -> str:
        text = text.strip()
        match = _VARIABLE.match(text)
        if match:
            index = int(match.group(1))
            if index >= len(self.forms):
                made = f"#0..#{len(self.forms) - 1}" if self.forms else "none yet"
                raise ParseError(f"{where}: #{index} does not exist (variables made so far: {made})")
            return self.forms[index]
        if sets_only:
            raise ParseError(f"{where}: expected a variable #k, found {clip(text)!r}")
        entity = self.entities.get(text, text)
        if not _ENTITY.match(entity):
            names = ", ".join(sorted(self.entities)) or "none given"
            raise ParseError(f"{where}: {clip(text)!r} is neither a variable #k, an entity id (m.0abc) nor a question entity ({names})")
        return entity

    def relation(self, text: str, where: str) -> str:
        text = text.strip()
        if not _RELATION.match(text):
            raise ParseError(f"{where}: {clip(text)!r} is not a relation (such as people.person.nationality)")
        return text

    def call(self, name: str, args: str, where: str) -> None:
        if name not in FUNCTIONS:
            raise InvalidActionError(
                f"{where}: {name} is not one of AgentBench's functions ({', '.join(FUNCTIONS)})",
                action=name,
                available=list(FUNCTIONS),
            )
        if len(FUNCTIONS[name]) == 2:
            first, comma, second = args.rpartition(",")
            if not comma:
                raise ArityError(f"{where}: {name}({', '.join(FUNCTIONS[name])}) takes 2 arguments", action=name, expected=(2, 2), given=1)
        else:
            first, second = args, ""
        if name in ("get_relations", "get_attributes"):
            self.operand(first, where, sets_only=name == "get_attributes")
        elif name == "get_neighbors":
            self.forms.append(f"(JOIN (R {self.relation(second, where)}) {self.operand(first, where)})")
        elif name in ("intersection", "union"):
            head = "AND" if name == "intersection" else "OR"
            self.forms.append(f"({head} {self.operand(first, where, True)} {self.operand(second, where, True)})")
        elif name == "count":
            self.forms.append(f"(COUNT {self.operand(first, where, True)})")
        else:
            self.forms.append(f"({name.upper()} {self.operand(first, where, True)} {self.relation(second, where)})")


def _messages(text: str) -> str:
    """A trajectory stored as JSON (AgentInstruct's ``{"conversations": [{"from", "value"}]}``, or a list of
    OpenAI-style ``{"role", "content"}`` messages): the model's turns joined; other text as it is."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return text
    turns = data.get("conversations") if isinstance(data, dict) else data
    if not isinstance(turns, list):
        return text
    said = []
    for number, turn in enumerate(turns, 1):
        if isinstance(turn, dict) and (turn.get("from") in ("gpt", "assistant") or turn.get("role") == "assistant"):
            calls = turn.get("tool_calls")
            if calls:
                said += [_tool_call_line(call, f"turn {number}") for call in calls]
                continue
            said.append(str(turn.get("value") if "value" in turn else turn.get("content") or ""))
    return "\n".join(said)


def _tool_call_line(call: object, where: str) -> str:
    """One OpenAI tool call as the action line it stands for, its arguments in the task's parameter order.

    A relation ending in stray ``}`` (a JSON brace slipped inside the string, as in the
    task's own one-shot demo) is read without them: no relation holds a brace.

    Example:
        >>> _tool_call_line({"function": {"name": "get_neighbors", "arguments": '{"variable": "#0", "relation": "a.b.c}"}'}}, "turn 2")
        'Action: get_neighbors(#0, a.b.c)'
    """
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str):
        raise ParseError(f"{where}: a tool call without a function name: {clip(json.dumps(call, default=str))}")
    arguments = function.get("arguments", "{}")  # type: ignore[union-attr]
    try:
        values = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        raise ParseError(f"{where}: the arguments of {clip(name)} are not JSON: {clip(str(arguments))}") from None
    if not isinstance(values, dict):
        raise ParseError(f"{where}: the arguments of {clip(name)} are not a JSON object: {clip(str(arguments))}")
    order = FUNCTIONS.get(name, tuple(values))
    missing = [p for p in order if p not in values]
    if missing:
        raise ParseError(f"{where}: {clip(name)} takes ({', '.join(order)}); missing {', '.join(missing)}")
    parts = [str(values[p]).strip() for p in order]
    if name in FUNCTIONS and len(order) == 2 and order[1] != "variable2":
        parts[1] = parts[1].rstrip("}").strip()
    return f"Action: {name}({', '.join(parts)})"


def agentbench_form(text: str, entities: Mapping[str, str]) -> str:
    """The S-expression a trajectory's ``Final Answer: #k`` stands for.

    Raises:
        InvalidActionError: a function AgentBench does not have (listing its seven).
        ParseError: a bad argument, a ``#k`` not made yet, no ``Final Answer``; naming the line.

    Example:
        >>> agentbench_form("get_entities_of_type(film.film)\\nFinal Answer: #0", {})
        Traceback (most recent call last):
        ...
        pyql.errors.InvalidActionError: line 1: get_entities_of_type is not one of AgentBench's functions (get_relations, get_neighbors, intersection, union, get_attributes, argmax, argmin, count)
    """
    trajectory = _Trajectory(entities)
    for number, line in enumerate(split_lines(_messages(text)), 1):
        final = _FINAL.search(line)
        if final:
            return trajectory.operand(f"#{final.group(1)}", f"line {number}", sets_only=True)
        match = _CALL.match(line)
        if match and (line.lstrip().startswith("Action") or not line.lstrip().startswith(("Thought", "Observation"))):
            trajectory.call(match.group(1), match.group(2), f"line {number}")
    raise ParseError("no 'Final Answer: #k' line: the trajectory does not say which variable answers")


@reader("agentbench", "AgentBench's knowledge-graph actions (get_neighbors, intersection, ... #k), ending 'Final Answer: #k'")
def read_agentbench(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
    """The chain of a trajectory's answer (its S-expression read by the ``sexpr`` reader).

    Raises:
        as :func:`agentbench_form`; ConversionError: the answer nests a count or an argmax.

    Example:
        >>> read_agentbench("Action: get_neighbors(m.0a, a.b.c)\\nAction: count(#0)\\nFinal Answer: #1", {}, FREEBASE).actions()
        ['add_fact(m.0a, a.b.c, ?x1)', 'add_count(?x1, ?x0)']
    """
    form = agentbench_form(text, entities)
    try:
        return read_sexpr(form, {}, profile)
    except PyQLError as exc:
        raise ConversionError(f"the answer's S-expression {form[:200]}: {exc}") from None
