"""The ``actions`` format: PyQL action lines, one action per line, as ``pyql run --actions`` reads them.

Reading takes the lines ``pyql run`` would run, by its rules: blank lines
and lines starting with ``#`` are skipped, a line is one action
(``add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)``) or an
LLM's ``Action N: ...`` line, and the arguments are converted as the SPARQL
action set converts them (:func:`pyql.environment.sparql_actions.convert_argument`),
without a KB. Steps that ask the KB and add nothing to the query
(``get_relation``) are skipped; ``execute()`` ends the chain. Writing gives
:meth:`pyql.builder.query.Query.actions`, one line each.

Example:
    >>> query = read_actions("get_relation(m.0crbvqz)\\nadd_fact(m.0crbvqz, a.b.c, ?c)\\nexecute()", {}, FREEBASE)
    >>> print(write_actions(query), end="")
    add_fact(m.0crbvqz, a.b.c, ?c)
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from pyql.action_parser import ActionCall, extract_action, parse_action, render_action
from pyql.environment.actions import ActionSpec
from pyql.errors import ParseError, PyQLError, QueryError
from pyql.interchange.registry import reader, writer
from pyql.lines import split_lines
from pyql.builder.profiles import FREEBASE, Profile  # noqa: F401 (FREEBASE: the doctests use it)
from pyql.builder.query import Query
from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS, SparqlActions, convert_argument

__all__ = ["ACTIONS", "read_actions", "write_actions", "calls_to_query", "parse_line"]

#: Every SPARQL action (MarkQA's arguments included): what action lines are read and checked against.
ACTIONS = SparqlActions(SPARQL_ALL_ACTIONS)


def _arguments(profile: Profile, call: ActionCall, spec: ActionSpec) -> list[Any]:
    """The call's arguments converted for its action's parameters (as the action set converts them)."""
    return [
        convert_argument(profile, param.kind, arg, call.name, param.name, position)
        for position, (param, arg) in enumerate(zip(spec.params, call.args))
    ]


def calls_to_query(
    calls: list[ActionCall], profile: str | Profile = "freebase", place: Callable[[ActionCall], str] | None = None
) -> Query:
    """Replay parsed calls on a new query (``get_relation`` and ``execute`` are skipped).

    Args:
        calls: the parsed calls, in order.
        profile: the profile of the query.
        place: where a call is written in its source (``legacy PyQL program,
            line 2, column 1``); every error of a call then starts with it.
            Without it, a step the query refuses is named by its number.

    Raises:
        ActionError, QueryError, TermError: for a call the query cannot take, naming it.

    Example:
        >>> calls_to_query([parse_action("add_fact(?a, r.s.t, ?b)"), parse_action("execute()")]).actions()
        ['add_fact(?a, r.s.t, ?b)']
        >>> calls_to_query([parse_action("add_fact(?a, r.s.t)")], place=lambda call: "line 4")
        Traceback (most recent call last):
        ...
        pyql.errors.ArityError: line 4: add_fact(head, relation, tail) should have 3 parameters. You have 2 parameters.
    """
    query = Query(profile)
    for number, call in enumerate(calls, 1):
        try:
            query = _replayed(query, call, f"call {number} ({render_action(call)})" if place is None else render_action(call))
        except PyQLError as exc:
            if place is None:
                raise
            raise _at(exc, place(call)) from None
    return query


def _replayed(query: Query, call: ActionCall, named: str) -> Query:
    """The query after one call (the same query for a call that adds no step); a step it refuses is ``named``."""
    spec = ACTIONS.check_arity(call.name, len(call.args))
    if spec.kind != "construct":
        return query
    args = _arguments(query.profile, call, spec)
    try:
        return getattr(query, call.name)(*args)
    except QueryError as exc:
        raise QueryError(f"{named}: {exc}") from None


#: The deepest nesting of parentheses and brackets an action line may have: far above what the
#: action language allows (sub-queries 8 levels, expressions 16 calls), and low enough that a line
#: of 10,000 nested ``query(`` is refused at once rather than parsed for half a minute.
MAX_LINE_NESTING = 64


def _check_nesting(line: str) -> None:
    """Refuse a line nested deeper than :data:`MAX_LINE_NESTING` (brackets inside "..." do not count)."""
    depth, quoted, escaped = 0, False, False
    for position, char in enumerate(line):
        if quoted:
            escaped, quoted = (not escaped and char == "\\"), quoted and (escaped or char != '"')
        elif char == '"':
            quoted = True
        elif char in "([":
            depth += 1
            if depth > MAX_LINE_NESTING:
                message = f"character {position + 1}: nested deeper than {MAX_LINE_NESTING} parentheses or brackets"
                raise ParseError(message, text=line, position=position)
        elif char in ")]":
            depth -= 1


def parse_line(line: str) -> ActionCall:
    """One action line as ``pyql run`` reads it: the call alone, else an LLM's ``Action N: ...`` line.

    Raises:
        ParseError: the line holds no action, or more than one, or it nests deeper than
            :data:`MAX_LINE_NESTING` parentheses.

    Example:
        >>> parse_line("Action 2: set_answer(?x)").name
        'set_answer'
        >>> parse_line("add_fact(" + "(" * 100 + ")")
        Traceback (most recent call last):
        ...
        pyql.errors.ParseError: character 73: nested deeper than 64 parentheses or brackets
    """
    _check_nesting(line)
    try:
        return parse_action(line.strip())
    except ParseError:
        return extract_action(line)


def _at_line(exc: PyQLError, number: int) -> PyQLError:
    """The same error, its message starting with the line it is about."""
    return _at(exc, f"line {number}")


def _at(exc: PyQLError, where: str) -> PyQLError:
    """The same error (its class, its kind), its message starting with where it is."""
    exc.args = (f"{where}: {exc.args[0] if exc.args else exc}", *exc.args[1:])
    return exc


@reader("actions", "PyQL action lines, one a line, as `pyql run --actions` reads them")
def read_actions(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
    """The query the action lines build (``get_relation`` skipped; nothing may follow ``execute()``).

    Raises:
        ParseError, ActionError, QueryError: the first line that does not
            parse or that the query cannot take; the message starts with
            its line number.

    Example:
        >>> read_actions("# a comment\\n\\nadd_fact(?a, r.s.t)", {}, FREEBASE)
        Traceback (most recent call last):
        ...
        pyql.errors.ArityError: line 3: add_fact(head, relation, tail) should have 3 parameters. You have 2 parameters.
    """
    query, executed = Query(profile), False
    for number, line in enumerate(split_lines(text), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            if executed:
                raise QueryError("execute() was called on an earlier line; nothing may follow it")
            call = parse_line(line)
            spec = ACTIONS.check_arity(call.name, len(call.args))
            executed = spec.kind == "terminate"
            if spec.kind == "construct":
                query = getattr(query, call.name)(*_arguments(query.profile, call, spec))
        except PyQLError as exc:
            raise _at_line(exc, number) from None
    return query


@writer("actions", "PyQL action lines, one a line, as `pyql run --actions` reads them")
def write_actions(query: Query) -> str:
    """The query's action lines (:meth:`~pyql.builder.query.Query.actions`), each ending with a line break.

    Example:
        >>> write_actions(Query().add_fact("?a", "r.s.t", "?b").set_answer("?b"))
        'add_fact(?a, r.s.t, ?b)\\nset_answer(?b)\\n'
    """
    return "".join(f"{line}\n" for line in query.actions())
