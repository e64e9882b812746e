"""Legacy PyQL programs (``a=PyQL()`` / ``a.add_fact('m.03_r3', ..., 'x0')``) as queries.

The programs of existing datasets (WebQSP's processed gold programs) are
parsed by the grammar in :mod:`pyql.action_parser` — never by ``eval`` —
and replayed step by step on a :class:`~pyql.query.Query`, with the same
argument rules as the action environment.

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

from pyql.action_parser import ActionCall, parse_legacy_program, render_action
from pyql.errors import QueryError
from pyql.profiles import Profile
from pyql.query import Query
from pyql.sparql_actions import SparqlActions, convert_argument

__all__ = ["program_to_query", "program_to_actions", "calls_to_query"]

_ACTIONS = SparqlActions()


def calls_to_query(calls: list[ActionCall], profile: str | Profile = "freebase") -> Query:
    """Replay parsed calls on a new query (``get_relation`` and ``execute`` are skipped).

    Raises:
        ActionError, QueryError, TermError: for a call the query cannot take, naming it.
    """
    query = Query(profile)
    for number, call in enumerate(calls, 1):
        spec = _ACTIONS.check_arity(call.name, len(call.args))
        if spec.kind != "construct":
            continue
        args = [
            convert_argument(query.profile, param.kind, arg, call.name, param.name, position)
            for position, (param, arg) in enumerate(zip(spec.params, call.args))
        ]
        try:
            query = getattr(query, call.name)(*args)
        except QueryError as exc:
            raise QueryError(f"call {number} ({render_action(call)}): {exc}") from None
    return query


def program_to_query(text: str, profile: str | Profile = "freebase") -> Query:
    """Parse a legacy PyQL program and build its query.

    Raises:
        ParseError: when the program does not parse (with line and position).
    """
    return calls_to_query(parse_legacy_program(text), profile)


def program_to_actions(text: str) -> list[str]:
    """The action lines equivalent to a legacy PyQL program (legacy ``x0`` → ``?x0``)."""
    return [render_action(call) for call in parse_legacy_program(text)]
