"""Action sets: the functions an LLM (or a script) may call, defined once.

An action is a method of an :class:`ActionSet` subclass marked with
:func:`action`, or an action a step kind declares as data
(:class:`pyql.builder.kind.ActionDecl`: its name, parameters with their
kinds and defaults, its docstring), which an action set offers through
:meth:`ActionSet.declarations`: a generic body then runs it
(:meth:`ActionSet.run_declared`), or the set's method of the same name
marked :func:`action_body` when the action does more. The signature and the
Google-style docstring are the single source of truth: the environment
accepts exactly the marked methods and the declared actions, checks arity
from the signature, converts each argument by its parameter kind (one of
:data:`grammars.parameter_kinds.PARAMETER_KINDS`), and the documentation an
LLM sees (``pyql docs --format markdown|prompt|openai-tools``) is rendered
from the same specs. Nothing is written twice.

Example:
    >>> class Demo(ActionSet):
    ...     @action("interact", thing="text")
    ...     def echo(self, env, thing):
    ...         '''Say a thing back.
    ...
    ...         Args:
    ...             thing: what to say.
    ...
    ...         Example: echo(hello)
    ...         '''
    ...         return thing
    >>> spec = Demo().spec("echo")
    >>> spec.signature, spec.params[0].description
    ('echo(thing)', 'what to say.')
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterable, Sequence

from grammars.parameter_kinds import DEFAULT_KIND, PARAMETER_KINDS
from grammars.vocabulary import COMPARISON_OPERATORS, TABLE_OPERATORS
from pyql.builder.kind import ActionDecl
from pyql.errors import (
    ArityError,
    DocFormatError,  # noqa: F401 (defined in pyql/errors.py)
    InvalidActionError,
)

__all__ = ["StepResult", "action", "action_body", "Param", "ActionSpec", "ActionSet", "render_docs", "DOC_FORMATS"]

DOC_FORMATS = ("markdown", "prompt", "openai-tools")


@dataclass
class StepResult:
    """What an action implementation returns.

    Attributes:
        query: the new query (construct steps), or None when the query is unchanged.
        result: the backend's answer (Observation, Relations, ResultSet, column values ...).
        observation: the text the LLM sees when the step is kept.
        empty: whether the result counts as empty (an empty-result failure).
        done: the action ends the episode (``execute()``).
    """

    query: Any = None
    result: Any = None
    observation: str = ""
    empty: bool = False
    done: bool = False


def action(kind: str, *, together: Sequence[str] = (), **param_kinds: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a method of an :class:`ActionSet` as an action.

    Args:
        kind: "interact" (asks the KB/DB, adds nothing to the query),
            "construct" (adds a clause) or "terminate" (``execute``).
        together: consecutive optional parameters written all or none (a pair of words): the arity check,
            the docs and the GBNF grammar take them as one.
        **param_kinds: the kind of each parameter (:data:`grammars.parameter_kinds.PARAMETER_KINDS`;
            unmarked: ``text``), read by the action set's argument converter.

    Example:
        >>> action("terminate")(lambda self, env: None).__pyql_action__
        ('terminate', {})
        >>> action("construct", together=("a", "b"))(lambda self, env, a=None, b=None: None).__pyql_together__
        ('a', 'b')
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__pyql_action__ = (kind, dict(param_kinds))  # type: ignore[attr-defined]
        fn.__pyql_together__ = tuple(together)  # type: ignore[attr-defined]
        return fn

    return mark


def action_body(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a method as the hand-written body of the declared action of its name (one that does more than the generic body).

    Its signature must be the declaration's (``(self, env, <params>)``, defaults included); its
    docstring is for the reader of the code, the LLM reads the declaration's.

    Example:
        >>> action_body(lambda self, env: None).__pyql_body__
        True
    """
    fn.__pyql_body__ = True  # type: ignore[attr-defined]
    return fn


@dataclass(frozen=True)
class Param:
    """One parameter of an action: name, kind, description, optional or not, and whether it is written only with
    the next one (a pair of optional words, see :func:`action`'s ``together``)."""

    name: str
    kind: str
    description: str
    required: bool = True
    with_next: bool = False


@dataclass(frozen=True)
class ActionSpec:
    """Everything known about one action, read from its method."""

    name: str
    kind: str
    params: tuple[Param, ...]
    summary: str
    details: str
    example: str

    @property
    def min_args(self) -> int:
        return sum(p.required for p in self.params)

    @property
    def max_args(self) -> int:
        return len(self.params)

    @property
    def counts(self) -> tuple[int, ...]:
        """The numbers of arguments a call may have: from the required ones to all, but none that ends inside a
        group written together.

        Example:
            >>> p = [Param("a", "text", ""), Param("b", "text", "", False, True), Param("c", "text", "", False)]
            >>> ActionSpec("f", "construct", tuple(p), "", "", "").counts
            (1, 3)
        """
        return tuple(n for n in range(self.min_args, self.max_args + 1) if n == 0 or not self.params[n - 1].with_next)

    @property
    def counts_text(self) -> str:
        """The numbers of arguments in words: ``3``, ``1 to 3``, ``4, 5 or 7``.

        Example:
            >>> p = [Param("a", "text", ""), Param("b", "text", "", False, True), Param("c", "text", "", False)]
            >>> ActionSpec("f", "construct", tuple(p), "", "", "").counts_text
            '1 or 3'
        """
        counts = self.counts
        if len(counts) == 1:
            return str(counts[0])
        if counts == tuple(range(counts[0], counts[-1] + 1)):
            return f"{counts[0]} to {counts[-1]}"
        return ", ".join(str(n) for n in counts[:-1]) + f" or {counts[-1]}"

    @property
    def signature(self) -> str:
        """``name(a,b)`` as the paper's documentation writes it."""
        return f"{self.name}({', '.join(p.name for p in self.params)})"


def _fill_vocabulary(doc: str) -> str:
    """An action's docstring with the vocabulary filled in: ``{operators}`` → the comparison operators,
    ``{table_operators}`` → a table condition's operators (``contains`` too).

    Example:
        >>> _fill_vocabulary("op is one of {operators}.")
        'op is one of >, <, >=, <=, =, !=.'
        >>> _fill_vocabulary("op is one of {table_operators}.")
        'op is one of >, <, >=, <=, =, !=, contains.'
    """
    return doc.replace("{operators}", ", ".join(COMPARISON_OPERATORS)).replace("{table_operators}", ", ".join(TABLE_OPERATORS))


_SECTION_RE = re.compile(r"^\s*(Args|Returns|Raises|Example|Examples)\s*:(.*)$")


def _parse_docstring(doc: str) -> tuple[str, str, dict[str, str], str]:
    """Split a Google-style docstring into summary, details, arg descriptions, example."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary_lines: list[str] = []
    i = 0
    while i < len(lines) and lines[i].strip():
        summary_lines.append(lines[i].strip())
        i += 1
    details: list[str] = []
    args: dict[str, str] = {}
    example = ""
    section = "details"
    current: str | None = None
    for line in lines[i:]:
        match = _SECTION_RE.match(line)
        if match:
            section = match.group(1).lower()
            rest = match.group(2).strip()
            if section.startswith("example") and rest:
                example = rest
            current = None
            continue
        if section == "details":
            details.append(line.strip())
        elif section == "args":
            arg = re.match(r"^\s{0,8}(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
            if arg and line.startswith("    ") and not line.startswith("        "):
                current = arg.group(1)
                args[current] = arg.group(3).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
        elif section.startswith("example") and line.strip() and not example:
            example = line.strip()
    return " ".join(summary_lines), "\n".join(details).strip(), args, example


class ActionSet:
    """A set of actions; subclasses define methods marked with :func:`action`.

    Args:
        only: restrict to these action names (e.g. the paper's eight); the
            docs and the environment then both follow the restriction.

    Example:
        >>> class Demo(ActionSet):
        ...     @action("terminate")
        ...     def execute(self, env):
        ...         '''Run the query.'''
        >>> Demo().names
        ('execute',)
    """

    title: ClassVar[str] = "actions"

    def __init__(self, only: Iterable[str] | None = None) -> None:
        specs = {}
        for name, fn in inspect.getmembers(type(self), predicate=inspect.isfunction):
            marker = getattr(fn, "__pyql_action__", None)
            if marker is not None:
                specs[name] = _method_spec(name, fn, marker)
        self._declared: dict[str, ActionDecl] = {}
        for decl in self.declarations():
            if decl.name in specs:
                raise InvalidActionError(f"{decl.name} is both a marked method of {type(self).__name__} and a declared action; keep one")
            _check_body(type(self), decl)
            specs[decl.name] = _declared_spec(decl)
            self._declared[decl.name] = decl
        order = self.order()
        ordered = sorted(specs, key=lambda n: (order.index(n) if n in order else len(order), n))
        if only is not None:
            wanted = list(only)
            unknown = [n for n in wanted if n not in specs]
            if unknown:
                raise InvalidActionError(
                    f"unknown action(s) {', '.join(unknown)}; this action set has {', '.join(ordered)}",
                    available=ordered,
                )
            ordered = [n for n in ordered if n in wanted]
        self._specs = {n: specs[n] for n in ordered}

    def declarations(self) -> Sequence[ActionDecl]:
        """The actions declared as data that the set offers (subclasses override; none by default)."""
        return ()

    def run_declared(self, env: Any, decl: ActionDecl, args: tuple[Any, ...]) -> StepResult:
        """The generic body of a declared action: ``args`` are its converted arguments, in order, up to the last one given.

        Subclasses that offer declared actions override it.
        """
        raise NotImplementedError(f"{type(self).__name__} offers the declared action {decl.name} but runs no declared action")

    def order(self) -> list[str]:
        """The order actions are documented in (subclasses override)."""
        return []

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._specs)

    def specs(self) -> tuple[ActionSpec, ...]:
        return tuple(self._specs.values())

    def spec(self, name: str) -> ActionSpec:
        """The spec of an available action.

        Raises:
            InvalidActionError: listing the available actions.
        """
        try:
            return self._specs[name]
        except KeyError:
            available = ", ".join(f"{n}()" for n in self._specs)
            raise InvalidActionError(
                f"{name!r} is not an available action; choose one of: {available}",
                action=name,
                available=list(self._specs),
            ) from None

    def check_arity(self, name: str, given: int) -> ActionSpec:
        """The spec, after checking the number of arguments.

        Raises:
            ArityError: saying how many are expected and how many were given.
        """
        spec = self.spec(name)
        if given not in spec.counts:
            expected = spec.counts_text
            noun = "parameter" if spec.max_args == 1 else "parameters"
            raise ArityError(
                f"{spec.signature} should have {expected} {noun}. You have {given} parameter{'s' if given != 1 else ''}.",
                action=name,
                expected=(spec.min_args, spec.max_args),
                given=given,
            )
        return spec

    def convert(self, env: Any, kind: str, arg: Any, action_name: str, name: str, position: int) -> Any:
        """Convert one parsed argument for a parameter kind; subclasses read their kinds.

        The default keeps the parsed :class:`~pyql.action_parser.Arg` as it is.
        """
        return arg

    def method(self, name: str) -> Callable[..., Any]:
        """The bound method implementing an action (a declared action without a hand-written body: its generic body).

        It is called ``(env, **arguments)`` with the converted arguments given.
        """
        self.spec(name)
        decl = self._declared.get(name)
        if decl is None or getattr(getattr(type(self), name, None), "__pyql_body__", False):
            return getattr(self, name)  # type: ignore[no-any-return]
        return functools.partial(self._run_declared, decl)

    def _run_declared(self, decl: ActionDecl, env: Any, *args: Any, **kwargs: Any) -> StepResult:
        """Bind the given arguments to the declaration; a gap before the last one given takes its default."""
        given = decl.signature.bind(self, env, *args, **kwargs).arguments
        last = max((i for i, p in enumerate(decl.params) if p.name in given), default=-1)
        values = tuple(given[p.name] if p.name in given else p.default for p in decl.params[: last + 1])
        return self.run_declared(env, decl, values)


def _method_spec(name: str, fn: Callable[..., Any], marker: tuple[str, dict[str, str]]) -> ActionSpec:
    """The spec of a method marked :func:`action`: its parameters from the signature, the rest from the docstring."""
    kind, param_kinds = marker
    together: tuple[str, ...] = getattr(fn, "__pyql_together__", ())
    summary, details, arg_docs, example = _parse_docstring(_fill_vocabulary(fn.__doc__ or ""))
    params = []
    for p in list(inspect.signature(fn).parameters.values())[2:]:  # skip self, env
        params.append(
            Param(p.name, _known_kind(param_kinds.get(p.name, DEFAULT_KIND), name), arg_docs.get(p.name, ""), p.default is inspect.Parameter.empty,
                  p.name in together[:-1])
        )
    names = [p.name for p in params]
    start = names.index(together[0]) if together and together[0] in names else -1
    if together and (start < 0 or names[start : start + len(together)] != list(together) or params[start].required):
        raise InvalidActionError(f"the parameters {', '.join(together)} of {name} written together must be consecutive optional ones",
                                 action=name)
    return ActionSpec(name, kind, tuple(params), summary, details, example)


def _declared_spec(decl: ActionDecl) -> ActionSpec:
    """The spec of a declared action (it adds a step: ``construct``), read from its declaration."""
    summary, details, arg_docs, example = _parse_docstring(_fill_vocabulary(decl.doc))
    params = tuple(Param(p.name, _known_kind(p.kind, decl.name), arg_docs.get(p.name, ""), p.required) for p in decl.params)
    return ActionSpec(decl.name, "construct", params, summary, details, example)


def _known_kind(kind: str, action_name: str) -> str:
    if kind not in PARAMETER_KINDS:
        raise InvalidActionError(
            f"a parameter of {action_name} has the unknown kind {kind!r}; the kinds are {', '.join(PARAMETER_KINDS)} "
            "(grammars/parameter_kinds.py)",
            action=action_name,
        )
    return kind


def _check_body(cls: type, decl: ActionDecl) -> None:
    """A method named like a declared action must be its marked body, with the declaration's signature."""
    fn = getattr(cls, decl.name, None)
    if fn is None:
        return
    if not getattr(fn, "__pyql_body__", False):
        raise InvalidActionError(
            f"{cls.__name__}.{decl.name} is named like a declared action; mark it @action_body (its hand-written body) or rename it",
            action=decl.name,
        )
    written = [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
    if written != [(p.name, p.default) for p in decl.signature.parameters.values()]:
        raise InvalidActionError(
            f"the body of {decl.name} takes {[name for name, _ in written]} (with their defaults), "
            f"but the action is declared {decl.signature}",
            action=decl.name,
        )


def _markdown(actions: ActionSet) -> str:
    out = [f"# {actions.title}\n"]
    for spec in actions.specs():
        out.append(f"## `{spec.signature}`\n\n{spec.summary}\n")
        if spec.details:
            out.append(spec.details + "\n")
        if spec.params:
            out.append("| parameter | kind | description |\n| --- | --- | --- |")
            for i, p in enumerate(spec.params):
                optional = " (optional)" if not p.required else ""
                if p.with_next:
                    optional = f" (optional, with `{spec.params[i + 1].name}`)"
                elif i and spec.params[i - 1].with_next:
                    optional = f" (optional, with `{spec.params[i - 1].name}`)"
                out.append(f"| `{p.name}` | {p.kind}{optional} | {p.description} |")
            out.append("")
        if spec.example:
            out.append(f"Example: `{spec.example}`\n")
    return "\n".join(out).rstrip() + "\n"


def _prompt(actions: ActionSet) -> str:
    out = [f"You can only choose actions from these {len(actions.names)} actions:", ""]
    for number, spec in enumerate(actions.specs(), 1):
        text = spec.summary
        if spec.details:
            text += " " + " ".join(spec.details.split())
        out.append(f"{number}. `{spec.signature}`")
        out.append(text)
        if spec.example:
            out.append(f"For example: `{spec.example}`")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _tool_property(param: Param) -> dict[str, Any]:
    """One parameter as a JSON-schema property of its kind's type; a kind with a closed set of values
    (:attr:`grammars.parameter_kinds.ParameterKind.enum`) gets its ``enum``.

    Example:
        >>> _tool_property(Param("op", "operator", "a comparison"))["enum"]
        ['>', '<', '>=', '<=', '=', '!=']
    """
    kind = PARAMETER_KINDS[param.kind]
    prop: dict[str, Any] = {"type": kind.json_type, "description": param.description or param.kind}
    if kind.enum:
        prop["enum"] = list(kind.enum)
    return prop


def _together(spec: ActionSpec) -> dict[str, list[str]]:
    """Each parameter written together with others (:func:`action`'s ``together``) and those others: JSON schema's
    ``dependentRequired``.

    Example:
        >>> p = (Param("a", "text", ""), Param("b", "text", "", False, True), Param("c", "text", "", False))
        >>> _together(ActionSpec("f", "construct", p, "", "", ""))
        {'b': ['c'], 'c': ['b']}
    """
    groups: list[list[str]] = []
    for i, p in enumerate(spec.params):
        if i and spec.params[i - 1].with_next:
            groups[-1].append(p.name)
        elif p.with_next:
            groups.append([p.name])
    return {name: [n for n in group if n != name] for group in groups for name in group}


def _openai_tools(actions: ActionSet) -> list[dict[str, Any]]:
    tools = []
    for spec in actions.specs():
        description = spec.summary + (" " + " ".join(spec.details.split()) if spec.details else "")
        properties = {p.name: _tool_property(p) for p in spec.params}
        parameters: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in spec.params if p.required],
            "additionalProperties": False,
        }
        together = _together(spec)
        if together:
            parameters["dependentRequired"] = together
        tools.append({"type": "function", "function": {"name": spec.name, "description": description, "parameters": parameters}})
    return tools


def render_docs(actions: ActionSet, fmt: str = "markdown") -> str:
    """The documentation of an action set in one of :data:`DOC_FORMATS`.

    Raises:
        DocFormatError: for an unknown format.

    Example:
        >>> class Demo(ActionSet):
        ...     @action("terminate")
        ...     def execute(self, env):
        ...         '''Run the query.'''
        >>> print(render_docs(Demo(), "prompt"))
        You can only choose actions from these 1 actions:
        <BLANKLINE>
        1. `execute()`
        Run the query.
        <BLANKLINE>
    """
    if fmt == "markdown":
        return _markdown(actions)
    if fmt == "prompt":
        return _prompt(actions)
    if fmt == "openai-tools":
        return json.dumps(_openai_tools(actions), indent=2, ensure_ascii=False) + "\n"
    raise DocFormatError(f"unknown docs format {fmt!r}; use one of {', '.join(DOC_FORMATS)}")


def openai_tools(actions: ActionSet) -> list[dict[str, Any]]:
    """The action set as OpenAI tool schemas (for native function calling).

    Example:
        >>> class Demo(ActionSet):
        ...     @action("terminate")
        ...     def execute(self, env):
        ...         '''Run the query.'''
        >>> openai_tools(Demo())[0]["function"]["name"]
        'execute'
    """
    return _openai_tools(actions)
