"""Replies into actions: one action per reply, in each action mode.

How an agent gets an action from the LLM (:data:`agent.llm.config.ACTION_MODES`):

* ``text``: the reply is free text with ``Thought N:`` / ``Action N:`` lines;
* ``tools``: the action set's OpenAI tool schemas are sent, and a native
  tool call becomes the :class:`~pyql.action_parser.ActionCall` it stands
  for (:func:`tool_call_action`, :func:`reply_action`), written as an
  ``Action N:`` line for the prompt and the trace (:func:`reply_action_text`);
* ``grammar``: a GBNF grammar of the action set (:mod:`agent.llm.gbnf`)
  constrains the reply to one well-formed action.

:func:`complete_action` asks for one action in any of them. (The ``choose``
mode picks a listed step by number: :mod:`agent.methods.choose`.)

Example:
    >>> from agent.llm.replies import LLMReply, ToolCall
    >>> reply = LLMReply("Thought 2: the time.", tool_calls=[ToolCall("add_max", {"max_var": "?t"})])
    >>> print(reply_action_text(reply, step=2))
    Thought 2: the time.
    Action 2: add_max(?t)
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Sequence

from agent.errors import LLMConfigError  # noqa: F401 (defined in agent/errors.py)
from agent.llm.config import ACTION_MODES
from agent.llm.replies import LLM, LLMReply, Prompt, ToolCall
from pyql.errors import PyQLError, TermError

if TYPE_CHECKING:
    from pyql.action_parser import ActionCall

__all__ = ["complete_action", "reply_action", "reply_action_text", "tool_call_action"]

def tool_call_action(call: ToolCall, actions: Any = None) -> ActionCall:
    """The action a native tool call stands for, ready for ``Environment.step``.

    The arguments are put in the action's parameter order (when ``actions``
    knows the name; arguments it does not name follow in their JSON order)
    and typed from their JSON values (:func:`pyql.action_parser.call_from_values`):
    a string as the action language reads it when written bare (``?x``,
    ``m.0abc``, ``>`` ...) or as a string literal when it needs quotes, a
    number as a number, ``true``/``false``/``null`` as those names; the
    environment then converts each by its parameter's kind, as for a written
    action. The call's ``text`` is the action as :func:`pyql.action_parser.render_action`
    writes it.

    Raises:
        TermError: the call cannot be written as one action: its name is not
            an identifier, or an argument is a JSON list or object.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> c = tool_call_action(ToolCall("add_fact", {"tail": "?x", "head": "m.1", "relation": "r.s"}), SparqlActions())
        >>> c.text, [a.kind for a in c.args]
        ('add_fact(m.1, r.s, ?x)', ['name', 'name', 'variable'])
    """
    from pyql.action_parser import call_from_values

    return call_from_values(call.name, *(_plain_value(v) for v in _ordered_values(call, actions)))


def _ordered_values(call: ToolCall, actions: Any) -> list[Any]:
    """The call's argument values in the action's parameter order, unknown names after (JSON order without a spec)."""
    values: list[Any] = list(call.arguments.values())
    if actions is None:
        return values
    try:
        spec = actions.spec(call.name)
    except PyQLError:
        return values
    names = [p.name for p in spec.params]
    ordered = [call.arguments[n] for n in names if n in call.arguments]
    return ordered + [v for k, v in call.arguments.items() if k not in names]


def _plain_value(value: Any) -> str | int | float:
    """A JSON value as a value of the action language (``true``, ``null`` and ``nan`` as those words)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        raise TermError(f"a JSON {type(value).__name__} cannot be written as one action argument")
    return json.dumps(value)


def reply_action(reply: LLMReply, actions: Any = None, step: int | None = None) -> ActionCall | str:
    """What an agent hands to ``Environment.step`` for a reply.

    One native tool call that can be written as an action becomes that
    :class:`~pyql.action_parser.ActionCall` (:func:`tool_call_action`); any
    other reply is the text to parse (:func:`reply_action_text`): the
    environment then reports no action, several actions or a syntax error
    as for a written reply.

    Example:
        >>> reply_action(LLMReply("", tool_calls=[ToolCall("execute", {})])).text
        'execute()'
        >>> reply_action(LLMReply("Action 1: execute()"), step=1)
        'Action 1: execute()'
    """
    if len(reply.tool_calls) == 1 and reply.tool_calls[0].error is None:
        try:
            return tool_call_action(reply.tool_calls[0], actions)
        except TermError:
            pass
    return reply_action_text(reply, actions, step)


def reply_action_text(reply: LLMReply, actions: Any = None, step: int | None = None) -> str:
    """The text of a reply's action, for the prompt and the trace (and to parse when it is not a tool call).

    For a reply with native tool calls, each call is written as an action
    line (:func:`tool_call_action`: arguments in the action's parameter order
    when ``actions`` is given, else in the JSON order), after the reply's own
    text as the thought; a plain reply's text is returned as is. A call that
    cannot be written as an action (a name that is not an identifier, a list
    or object argument) is written as sent, for the parser to reject; a call
    whose arguments are not JSON (:attr:`ToolCall.error`) is written with
    its arguments' raw text, as sent.

    Example:
        >>> r = LLMReply("", tool_calls=[ToolCall("add_fact", {"head": "m.1", "relation": "r.s", "tail": "?x"})])
        >>> reply_action_text(r, step=2)
        'Action 2: add_fact(m.1, r.s, ?x)'
    """
    if not reply.tool_calls:
        return reply.text
    lines = [reply.text.strip()] if reply.text.strip() else []
    label = f"Action {step}:" if step is not None else "Action:"
    for tc in reply.tool_calls:
        if tc.error is not None:  # arguments that are not JSON: kept as sent
            lines.append(f"{label} {tc.name}({tc.raw_arguments})")
            continue
        try:
            lines.append(f"{label} {tool_call_action(tc, actions).text}")
        except TermError:
            lines.append(f"{label} {tc.name}({', '.join(_as_sent(v) for v in _ordered_values(tc, actions))})")
    return "\n".join(lines)


def _as_sent(value: Any) -> str:
    """One argument of a tool call that is no action, as the model sent it (for the parser's error)."""
    from pyql.action_parser import render_argument

    try:
        return render_argument(_plain_value(value))
    except TermError:
        return json.dumps(value, ensure_ascii=False)


def complete_action(
    llm: LLM,
    prompt: Prompt,
    actions: Any,
    *,
    mode: str = "text",
    step: int | None = None,
    resume: str | None = None,
    stop: Sequence[str] | None = None,
    state: Any = None,
) -> tuple[str, LLMReply]:
    """Ask for the next action in one of :data:`ACTION_MODES`; returns ``(action text, reply)``.

    * ``text``: the paper's way: the reply is free text with
      ``Thought N:`` / ``Action N:`` lines.
    * ``tools``: the action set's OpenAI tool schemas are sent; a tool call is
      written as an ``Action N:`` line (:func:`reply_action_text`), and
      :func:`reply_action` gives the structured call to step.
    * ``grammar``: a GBNF grammar generated from the action set
      (:func:`agent.llm.gbnf.action_gbnf`) is sent in llama.cpp's ``grammar``
      field, so the model can only write a well-formed action with a known
      name and the right number of arguments.

    Args:
        llm: any :class:`LLM`.
        prompt: the prompt.
        actions: the :class:`pyql.environment.actions.ActionSet`.
        mode: one of :data:`ACTION_MODES`.
        step: the step number (fixes ``N`` in the grammar and in tool-call lines).
        resume: for ``grammar``: where the prompt ends (see :func:`agent.llm.gbnf.action_gbnf`).
        stop: stop sequences (default: the LLM's configured ones).
        state: an :class:`agent.llm.gbnf.StateVocabulary`: the grammar
            (:func:`agent.llm.gbnf.state_gbnf`) and the tool schemas
            (:func:`agent.llm.gbnf.state_tools`, JSON-schema ``enum`` s) allow only
            the entities, variables and relations the episode has.

    Raises:
        LLMConfigError: an unknown mode.

    Example:
        >>> from pyql.environment.sparql_actions import SparqlActions
        >>> from agent.llm.scripted import ScriptedLLM
        >>> llm = ScriptedLLM(["Thought 1: start.\\nAction 1: get_relation(m.0crbvqz)"])
        >>> text, reply = complete_action(llm, "Q", SparqlActions(), mode="grammar", step=1)
        >>> text.splitlines()[-1], llm.calls[0].kwargs["grammar"].startswith("root ::=")
        ('Action 1: get_relation(m.0crbvqz)', True)
    """
    reply = llm.complete(prompt, stop=stop, **_mode_request(mode, actions, step=step, resume=resume, state=state))
    return reply_action_text(reply, actions, step), reply


def _mode_request(mode: str, actions: Any, *, step: int | None, resume: str | None, state: Any) -> dict[str, Any]:
    """The request's ``tools`` or ``grammar`` for an action mode (nothing for ``text``)."""
    if mode == "text":
        return {}
    if mode == "tools":
        from pyql.environment.actions import openai_tools

        tools = openai_tools(actions)
        if state is not None:
            from agent.llm.gbnf import state_tools

            tools = state_tools(tools, actions, state)
        return {"tools": tools}
    if mode == "grammar":
        from agent.llm.gbnf import action_gbnf, state_gbnf

        grammar = (
            state_gbnf(actions, state, step=step, resume=resume) if state is not None
            else action_gbnf(actions, step=step, resume=resume)
        )
        return {"grammar": grammar}
    if mode == "choose":
        raise LLMConfigError("the choose mode picks a listed step by number: QueryAgent asks for it (agent.methods.choose), not complete_action")
    raise LLMConfigError(f"unknown action mode {mode!r}; use one of {', '.join(ACTION_MODES)}")
