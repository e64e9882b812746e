"""Legacy PyQL programs (``a=PyQL()`` / ``a.add_fact('m.03_r3', ..., 'x0')``) as queries.

Kept where callers found it: the ``legacy`` conversion format lives in
:mod:`pyql.interchange.legacy` (``pyql convert --from legacy``, ``pyql
compile``, ``pyql actions``), and replaying parsed calls on a query in
:mod:`pyql.interchange.actions`.

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

from pyql.interchange.actions import calls_to_query
from pyql.interchange.legacy import program_to_actions, program_to_query

__all__ = ["program_to_query", "program_to_actions", "calls_to_query"]
