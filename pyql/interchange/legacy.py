"""The ``legacy`` format: legacy PyQL programs (``a=PyQL()`` / ``a.add_fact('m.03_r3', ..., 'x0')``).

The programs of existing datasets (WebQSP's processed gold programs, as
QueryAgent ships them) are parsed by the grammar in
:mod:`pyql.action_parser` — never by ``eval`` — and replayed step by step
on a :class:`~pyql.builder.query.Query`, with the same argument rules as the action
environment. Converted to action lines, a program keeps its own spelling
(a direct conversion: ``'x0'`` becomes ``?x0``, nothing else changes).

Example:
    >>> program = '''a=PyQL()
    ... a.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')
    ... a.set_answer('x0')'''
    >>> print(program_to_actions(program)[0])
    add_fact(m.03_r3, location.country.languages_spoken, ?x0)
    >>> program_to_query(program).answer
    Variable(name='x0')
"""

from __future__ import annotations

from typing import Mapping

from pyql.action_parser import ActionCall, line_column, parse_legacy_program, render_action
from pyql.interchange.actions import ACTIONS, calls_to_query
from pyql.interchange.registry import direct, reader
from pyql.builder.profiles import FREEBASE, Profile  # noqa: F401 (FREEBASE: the doctests use it)
from pyql.builder.query import Query
from pyql.errors import PyQLError

__all__ = ["program_to_query", "program_to_actions", "read_legacy", "legacy_to_actions"]


def program_to_query(text: str, profile: str | Profile = "freebase") -> Query:
    """Parse a legacy PyQL program and build its query.

    Raises:
        ParseError: when the program does not parse (with line and position).

    Example:
        >>> program_to_query("a=PyQL()\\na.add_fact('x0', 'r.s.t', 'm.0a')").actions()
        ['add_fact(?x0, r.s.t, m.0a)']
    """
    return calls_to_query(parse_legacy_program(text), profile, place=lambda call: _place(text, call))


def program_to_actions(text: str) -> list[str]:
    """The action lines equivalent to a legacy PyQL program (legacy ``x0`` → ``?x0``).

    Raises:
        ParseError: the program does not parse.
        InvalidActionError, ArityError: a call of a method no action has (listing the actions),
            or with a number of arguments its action does not take.

    Example:
        >>> program_to_actions("a=PyQL()\\na.add_filter('x0', '>', '200')")
        ['add_filter(?x0, >, 200)']
        >>> program_to_actions("a=PyQL()\\na.frobnicate('x0')")
        Traceback (most recent call last):
        ...
        pyql.errors.InvalidActionError: legacy PyQL program, line 2, column 1: 'frobnicate' is not an available action; choose one of: get_relation(), ...
    """
    calls = parse_legacy_program(text)
    for call in calls:
        try:
            ACTIONS.check_arity(call.name, len(call.args))
        except PyQLError as exc:
            exc.args = (f"{_place(text, call)}: {exc.args[0] if exc.args else exc}", *exc.args[1:])
            raise
    return [render_action(call) for call in calls]


def _place(text: str, call: ActionCall) -> str:
    """Where a call is written in its program, as the program's syntax errors say it.

    Example:
        >>> program = "a=PyQL()\\n  a.set_answer('x0')"
        >>> _place(program, parse_legacy_program(program)[0])
        'legacy PyQL program, line 2, column 3'
    """
    line, column = line_column(text, call.span[0])
    return f"legacy PyQL program, line {line}, column {column}"


@reader("legacy", "legacy PyQL programs (WebQSP/QueryAgent): a=PyQL(), then a.add_fact('m.03_r3', ..., 'x0') ...")
def read_legacy(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
    """The query of a legacy PyQL program (``entities`` are not used: programs write ids).

    Example:
        >>> read_legacy("null", {}, FREEBASE).steps
        ()
    """
    return program_to_query(text, profile)


@direct("legacy", "actions")
def legacy_to_actions(text: str, entities: Mapping[str, str], profile: Profile) -> str:
    """The program's calls as action lines, as written (``pyql actions``), each ending with a line break.

    Example:
        >>> legacy_to_actions("a=PyQL()\\na.set_answer('x0')", {}, FREEBASE)
        'set_answer(?x0)\\n'
    """
    return "".join(f"{line}\n" for line in program_to_actions(text))
