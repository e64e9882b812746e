"""Step kinds: the registry every room reads a kind from.

A *step kind* is one module of :mod:`pyql.builder.kinds` (one per kind, or
per family of kinds that share their rules). It holds, in one place:

* the frozen step dataclass(es) (subclasses of :class:`pyql.builder.steps.Step`);
* their rules in the compiler's tables (``@fold_rule``, ``@text_rule`` of
  :mod:`pyql.builder.compiler`);
* the actions that add them, as data (:class:`ActionDecl`: name, parameters
  with their kinds (:data:`grammars.parameter_kinds.PARAMETER_KINDS`) and
  defaults, the docstring the LLM reads, the group and place in the action
  order), from which :class:`pyql.environment.sparql_actions.SparqlActions`
  makes its actions;
* its hooks for the other rooms (:class:`StepKind`): the S-expression
  mapping, the variables it makes for its own pattern, what its variables
  hold, what a quantity observation says of them, the choose mode's
  candidates. A kind without a hook gets none.

It registers them with :func:`register_kind`. The Query builder method that
makes the step stays in :mod:`pyql.builder.query` (the public API, with its
docstring and doctest); an action calls the builder method of its name.

This module is the registry only: it imports no kind and no compiler, so
that :mod:`pyql.builder.profiles` may read the action order from it.
:func:`load_kinds` imports every module of :mod:`pyql.builder.kinds` once
(they register on import), as :mod:`pyql.interchange.registry` does for the
conversion formats.

Example:
    >>> from pyql.builder.query import Query
    >>> [a.name for a in kind_of(Query().add_fact("?a", "b.c.d", "?e").steps[0]).actions]
    ['add_fact']
    >>> sparql_action_order(("default",))[:3]
    ('get_relation', 'add_fact', 'add_type_constrain')
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from grammars.parameter_kinds import PARAMETER_KINDS
from grammars.vocabulary import SPARQL_ACTION_GROUPS, SPARQL_END_ACTIONS, SPARQL_LOOK_ACTIONS
from pyql.autoload import import_submodules
from pyql.errors import QueryError

__all__ = [
    "REQUIRED",
    "ActionParam",
    "ActionDecl",
    "param",
    "declare_action",
    "SexprPart",
    "SEXPR_ROLES",
    "StepKind",
    "register_kind",
    "kind_of",
    "kinds",
    "declarations",
    "declaration",
    "action_order",
    "sparql_action_order",
    "load_kinds",
    "registry_scope",
]


class _Required:
    """The default of a parameter that has none (it must be given)."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a required parameter.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class ActionParam:
    """One parameter of a declared action: its name, its kind and its default (:data:`REQUIRED`: none).

    Example:
        >>> param("limit", "whole", 1).required, param("max_var", "variable").required
        (False, True)
    """

    name: str
    kind: str
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        """Whether the parameter must be given."""
        return self.default is REQUIRED


def param(name: str, kind: str, default: Any = REQUIRED) -> ActionParam:
    """A parameter of a declared action (see :class:`ActionParam`).

    Raises:
        QueryError: an unknown parameter kind, naming the known ones.

    Example:
        >>> param("op", "operator")
        ActionParam(name='op', kind='operator', default=REQUIRED)
    """
    if kind not in PARAMETER_KINDS:
        raise QueryError(f"parameter {name}: unknown parameter kind {kind!r}; the kinds are {', '.join(PARAMETER_KINDS)}")
    return ActionParam(name, kind, default)


@dataclass(frozen=True)
class ActionDecl:
    """An action that adds a step, declared as data by its kind's module.

    Attributes:
        name: the action's name, which is also the name of the
            :class:`~pyql.builder.query.Query` method it calls (with its
            arguments in order).
        params: its parameters, required ones first.
        doc: the Google-style docstring the LLM reads (``pyql docs``;
            ``{operators}`` is filled with the comparison operators).
        group: its group in the action order (:data:`grammars.vocabulary.SPARQL_ACTION_GROUPS`):
            ``default`` (QueryAgent's set), ``extra`` (offered by name) or ``markqa`` (MarkQA's functions).
        after: the action of its group it is documented after (None, or an action of no kind of its
            group: first of its group; two after the same one: by name).
    """

    name: str
    params: tuple[ActionParam, ...]
    doc: str
    group: str
    after: str | None = None

    def __post_init__(self) -> None:
        if self.group not in SPARQL_ACTION_GROUPS:
            raise QueryError(f"action {self.name}: unknown group {self.group!r}; use one of {', '.join(SPARQL_ACTION_GROUPS)}")
        optional = False
        for p in self.params:
            if optional and p.required:
                raise QueryError(f"action {self.name}: required parameter {p.name} after an optional one")
            optional = optional or not p.required

    @property
    def signature(self) -> inspect.Signature:
        """The signature of its implementation: ``(self, env, <params>)``, defaults included.

        Example:
            >>> str(declaration("add_count").signature)
            '(self, env, count_var, new_var, group_obj=None)'
        """
        positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
        head = [inspect.Parameter(n, positional) for n in ("self", "env")]
        rest = [
            inspect.Parameter(p.name, positional, default=inspect.Parameter.empty if p.required else p.default)
            for p in self.params
        ]
        return inspect.Signature(head + rest)


def declare_action(name: str, *params: ActionParam, doc: str, group: str, after: str | None = None) -> ActionDecl:
    """Declare an action that adds a step (see :class:`ActionDecl`).

    Example:
        >>> d = declare_action("add_echo", param("var", "variable"), doc="Echo a variable.", group="extra")
        >>> d.name, [p.name for p in d.params], d.after
        ('add_echo', ['var'], None)
    """
    return ActionDecl(name, tuple(params), inspect.cleandoc(doc), group, after)


#: The roles a step may play in an S-expression (:mod:`pyql.interchange.sexpr`'s writer):
#: a join (a fact), a class of a variable, a comparison of a variable's value with a literal,
#: a ``!=`` the form implies, a time span, a union, the count, the superlative, the answer.
SEXPR_ROLES: tuple[str, ...] = ("join", "class", "comparison", "distinct", "time_span", "union", "count", "superlative", "answer")


@dataclass(frozen=True)
class SexprPart:
    """What one step is in an S-expression: its role (:data:`SEXPR_ROLES`), the variable it is about, and what the writer keeps.

    Example:
        >>> SexprPart("answer", "?x").role
        'answer'
    """

    role: str
    var: Any = None
    item: Any = None

    def __post_init__(self) -> None:
        if self.role not in SEXPR_ROLES:
            raise QueryError(f"unknown S-expression role {self.role!r}; use one of {', '.join(SEXPR_ROLES)}")


@dataclass(frozen=True)
class StepKind:
    """A step kind: its step type, its actions and its hooks (each None when the kind has none).

    Attributes:
        step: the step dataclass (its subclasses share the kind unless they register their own).
        actions: the actions that add it.
        answers: after a step of the kind the query says what it answers (the choose mode offers ``execute()``).
        auxiliary_variables: ``(step) -> variables`` the step makes for its own pattern, never an answer
            (the choose mode offers no step on them).
        value_kinds: ``(step) -> {variable: "number" | "date" | "entity"}``: what its variables hold when no
            value of them was shown (the choose mode).
        asked_year: ``(step) -> (variable, year) | None``: the year its amount was asked for (the choose mode's arithmetic).
        literal_variables: ``(step) -> variables`` it computes into a literal (a BIND of arithmetic, a converted
            amount): an observation asks no labels of them (:mod:`pyql.kb.probes`), as of an aggregate's result;
            an engine would look a label up for every labelled resource of the KB before it knows the value.
        described: ``(step) -> Described...``: what a quantity observation says of its variables
            (:class:`pyql.builder.kinds.quantity.Described`, read by :mod:`pyql.kb.quantities`).
        focus: ``(step) -> Focus``: what a quantity observation after it is about (default: its variables;
            :class:`pyql.builder.kinds.quantity.Focus`).
        sexpr: ``(step, profile) -> SexprPart | None``: its role in an S-expression (None or no hook: it has none;
            it may raise :class:`~pyql.errors.ConversionError` saying why not).
        choose: ``(episode) -> (action line, next-step kind)...``: the choose mode's candidates of its actions
            (:mod:`pyql.environment.next_steps` passes its episode: ``question``, ``query``, ``variables``,
            ``kinds``, ``entities``, ``literals``, ``fresh(hint)``).
    """

    step: type
    actions: tuple[ActionDecl, ...] = ()
    answers: bool = False
    auxiliary_variables: Callable[[Any], tuple[Any, ...]] | None = None
    value_kinds: Callable[[Any], dict[Any, str]] | None = None
    asked_year: Callable[[Any], tuple[Any, int] | None] | None = None
    literal_variables: Callable[[Any], tuple[Any, ...]] | None = None
    described: Callable[[Any], tuple[Any, ...]] | None = None
    focus: Callable[[Any], Any] | None = None
    sexpr: Callable[[Any, Any], SexprPart | None] | None = None
    choose: Callable[[Any], Iterable[tuple[str, str]]] | None = None
    module: str = field(default="", compare=False)


_KINDS: dict[type, StepKind] = {}
_LOOKED_UP: dict[type, StepKind | None] = {}


def register_kind(kind: StepKind) -> StepKind:
    """Register a step kind (a kind module calls it once per step type it defines).

    Raises:
        QueryError: the step type or one of its actions is registered already.

    Example:
        >>> from dataclasses import dataclass
        >>> from pyql.builder.steps import Step
        >>> with registry_scope():
        ...     @dataclass(frozen=True)
        ...     class Echo(Step):
        ...         pass
        ...     _ = register_kind(StepKind(Echo))
        ...     kind_of(Echo).step is Echo
        True
    """
    if kind.step in _KINDS:
        raise QueryError(f"the step kind {kind.step.__name__} is registered already ({_KINDS[kind.step].module})")
    taken = {a.name: k for k in _KINDS.values() for a in k.actions}
    for decl in kind.actions:
        if decl.name in taken:
            raise QueryError(f"the action {decl.name} is declared already, by {taken[decl.name].step.__name__}")
    module = kind.module or getattr(kind.step, "__module__", "")
    _KINDS[kind.step] = StepKind(**{**kind.__dict__, "module": module})
    _LOOKED_UP.clear()
    return _KINDS[kind.step]


def kind_of(step: object) -> StepKind | None:
    """The kind of a step (or a step type): its own, else that of its nearest registered base class.

    Example:
        >>> from pyql.builder.query import Query
        >>> kind_of(Query("wikidata").add_start_time("Q8", "s").steps[0]).actions[0].name
        'add_start_time'
    """
    cls = step if isinstance(step, type) else type(step)
    if cls in _LOOKED_UP:
        return _LOOKED_UP[cls]
    found = next((_KINDS[base] for base in cls.__mro__ if base in _KINDS), None)
    _LOOKED_UP[cls] = found
    return found


def load_kinds() -> None:
    """Import every kind module of :mod:`pyql.builder.kinds` once (they register on import).

    Example:
        >>> load_kinds(); len(kinds()) > 10
        True
    """
    import_submodules("pyql.builder.kinds")  # one thread imports them; the others wait until every kind is registered


def kinds() -> tuple[StepKind, ...]:
    """Every registered step kind (the kind modules loaded first), in registration order.

    Example:
        >>> any(k.step.__name__ == "Argmax" for k in kinds())
        True
    """
    load_kinds()
    return tuple(_KINDS.values())


def declarations() -> tuple[ActionDecl, ...]:
    """Every declared action, in the action order (:func:`action_order`).

    Example:
        >>> [d.name for d in declarations()][:2]
        ['add_fact', 'add_type_constrain']
    """
    by_name = {d.name: d for k in kinds() for d in k.actions}
    return tuple(by_name[name] for name in action_order())


def declaration(name: str) -> ActionDecl:
    """The declaration of one action.

    Raises:
        QueryError: no kind declares it (naming the declared actions).

    Example:
        >>> declaration("add_max").group
        'default'
    """
    for kind in kinds():
        for decl in kind.actions:
            if decl.name == name:
                return decl
    raise QueryError(f"no step kind declares the action {name!r}; declared: {', '.join(d.name for d in declarations())}")


def _chain(decls: Sequence[ActionDecl]) -> list[str]:
    """The names of one group's actions in order: each after the one it names (ties and unknown places by name)."""
    names = {d.name for d in decls}
    after: dict[str | None, list[str]] = {}
    for d in decls:
        after.setdefault(d.after if d.after in names else None, []).append(d.name)
    out: list[str] = []
    pending = sorted(after.get(None, []), reverse=True)
    while pending:
        name = pending.pop()
        out.append(name)
        pending += sorted(after.get(name, []), reverse=True)
    return out


def action_order(groups: Sequence[str] = SPARQL_ACTION_GROUPS) -> tuple[str, ...]:
    """The declared actions of some groups, in documentation order: group by group, each after the one it names.

    Example:
        >>> action_order(("extra",))
        ('add_union',)
    """
    every = [d for k in kinds() for d in k.actions]
    return tuple(name for group in groups for name in _chain([d for d in every if d.group == group]))


def sparql_action_order(groups: Sequence[str] = SPARQL_ACTION_GROUPS) -> tuple[str, ...]:
    """The SPARQL actions of some groups in documentation order: the look first, the step kinds' actions, ``execute`` last.

    Example:
        >>> sparql_action_order(("default",))[-2:]
        ('set_answer', 'execute')
    """
    return (*SPARQL_LOOK_ACTIONS, *action_order(groups), *SPARQL_END_ACTIONS)


@contextlib.contextmanager
def registry_scope() -> Iterator[None]:
    """A scope for kinds registered on the fly (a test's toy kind): the registry is as before afterwards.

    Example:
        >>> before = len(kinds())
        >>> with registry_scope():
        ...     _ = register_kind(StepKind(type("Toy", (), {})))
        >>> len(kinds()) == before
        True
    """
    load_kinds()
    saved = dict(_KINDS)
    try:
        yield
    finally:
        _KINDS.clear()
        _KINDS.update(saved)
        _LOOKED_UP.clear()
