"""The step-by-step agent's prompt: the fixed head and the history of turns, within the model's context.

:class:`Prompter` builds every prompt of an episode: one text ending in
``Thought N:`` for a completion model, or chat messages (the style follows
the LLM, or ``AgentConfig.prompt_style``); the head (task, action docs,
one-shot example, question: :mod:`agent.methods.sides` renders it for the
side and the action mode), then one block per past turn, then what the
caller asks (the choose mode's list, the forced answer's question). Over the
context budget (:mod:`agent.methods.context_budget`), older observations
are shortened first, then older steps summarised; the head, the last turn
and the ending never are.

Example:
    >>> from agent.llm.config import LLMConfig; from agent.llm.scripted import ScriptedLLM
    >>> from agent.methods.episode import Turn
    >>> p = Prompter(ScriptedLLM([], config=LLMConfig(mode="completion")), prompt_style="auto")
    >>> print(p.prompt("Task.\\nQuestion: why?", [Turn(1, "Thought 1: look.\\nAction 1: get_relation(m.1)", "ok")], 2))
    Task.
    Question: why?
    Thought 1: look.
    Action 1: get_relation(m.1)
    Observation 1: ok
    Thought 2:
    >>> thought_action(" I look.\\nAction 3: get_relation(m.1)", 3, "get_relation(m.1)")
    'Thought 3: I look.\\nAction 3: get_relation(m.1)'
"""

from __future__ import annotations

from typing import Any

from agent.methods.context_budget import Block, budget_for, shortened, summarised
from agent.methods.episode import Turn
from pyql.echo import one_line
from pyql.lines import split_lines

__all__ = ["Prompter", "thought_action", "action_line", "full_prompt"]


class Prompter:
    """The prompts of one LLM's episodes (see the module docstring).

    Args:
        llm: the LLM (its mode decides the style; its context, the budget).
        prompt_style: ``auto`` (follows the LLM's mode), ``text`` or ``chat``.
        token_budget: the most tokens a prompt may take (None: no cap besides the model's context).
        keep_observation: characters of an older observation's first line kept when it is shortened.
    """

    def __init__(self, llm: Any, prompt_style: str = "auto", token_budget: int | None = None, keep_observation: int = 160) -> None:
        self.llm = llm
        self.prompt_style = prompt_style
        self.token_budget = token_budget
        self.keep_observation = keep_observation

    def style(self) -> str:
        """``chat`` (messages) or ``text`` (one prompt text)."""
        if self.prompt_style != "auto":
            return self.prompt_style
        mode = getattr(getattr(self.llm, "config", None), "mode", "completion")
        return "chat" if mode == "chat" else "text"

    def prompt(
        self, head: str, turns: list[Turn], step: int, ending: tuple[str, str] | None = None, overhead: int = 0, thought: bool = True
    ) -> Any:
        """The prompt for ``step`` within the context budget: one text (completion style) or chat messages.

        ``ending`` is what follows the history, as (text, chat message): the
        choose mode's list, the forced answer's question; None: ``Thought N:``
        in a text prompt (nothing when ``thought`` is False), nothing in chat. Older
        turns are shortened, then summarised, when the prompt is over the
        budget (:func:`agent.methods.context_budget.budget_for`); the last turn and the ending never are.
        ``overhead``: tokens the request takes besides the prompt (the tools mode's schemas).

        Raises:
            ContextOverflow: the prompt does not fit even so.
        """
        chat = self.style() == "chat"
        if chat:
            system, _, question = head.rpartition("\nQuestion:")
            blocks = [Block.kept({"role": "system", "content": system.strip()}, {"role": "user", "content": ("Question:" + question).strip()})]
        else:
            blocks = [Block.kept(f"{head.rstrip()}\n")]
        blocks += [self.turn_block(t, chat, last=i == len(turns) - 1) for i, t in enumerate(turns)]
        text, message = ending if ending is not None else (f"Thought {step}:" if thought else "", "")
        if chat and message:
            blocks.append(Block.kept({"role": "user", "content": message}))
        elif not chat and text:
            blocks.append(Block.kept(text))
        return budget_for(self.llm).fit(blocks, cap=self.token_budget, overhead=overhead)

    def turn_block(self, turn: Turn, chat: bool, last: bool) -> Block:
        """A past turn: whole; its observation shortened; summarised (its action and a one-line outcome)."""
        seen = f"Observation {turn.step}: "

        def pieces(said: str, observation: str) -> tuple[Any, ...]:
            if chat:
                return ({"role": "assistant", "content": said}, {"role": "user", "content": seen + observation})
            return (f"{said}\n{seen}{observation}\n",)

        whole = pieces(turn.thought_action, turn.observation)
        if last:
            return Block(whole)
        short = pieces(turn.thought_action, shortened(turn.observation, self.keep_observation))
        return Block(whole, short, pieces(action_line(turn), summarised(turn.observation)))


def thought_action(text: str, step: int, action: str | None) -> str:
    """The Thought/Action pair as it goes back into the prompt (trailing text dropped)."""
    thought = ""
    for line in split_lines(text):
        stripped = line.strip()
        if stripped.lower().startswith("thought"):
            thought = stripped.split(":", 1)[1].strip() if ":" in stripped else ""
            break
    if not thought:
        first = split_lines(text.strip())[0] if text.strip() else ""
        thought = "" if first.lower().startswith("action") else first
    return f"Thought {step}: {thought}\nAction {step}: {action}"


def action_line(turn: Turn) -> str:
    """A turn as its summary shows it: its ``Action N:`` line (the thought dropped), else its reply's first line, cut."""
    lines = split_lines(turn.thought_action.strip())
    found = next((line for line in lines if line.strip().lower().startswith("action")), None)
    return found.strip() if found is not None else f"Action {turn.step}: " + one_line(lines[0] if lines else "", limit=80)


def full_prompt(prompt: Any) -> str:
    """A prompt as ``--trace-prompts full`` keeps it: the text, or the messages one after the other with their roles.

    Example:
        >>> full_prompt([{"role": "user", "content": "hi"}])
        '[user]\\nhi'
    """
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in prompt)
