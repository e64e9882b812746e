"""Gold action chains: the action lines that rebuild a gold query, for replaying it through an agent.

The chain of a set of facts (:func:`chain_actions`) is shared by the
formats whose gold query is a set of triple patterns: WebQSP and CWQ
SPARQL (:func:`sparql_actions`), GrailQA/GraphQ graph queries
(``graph_query_actions`` in their module).

Example:
    >>> chain_actions([("m.03_r3", "location.country.languages_spoken", "?x")], "?x")
    ['get_relation(m.03_r3)', 'add_fact(m.03_r3, location.country.languages_spoken, ?x)', 'set_answer(?x)', 'execute()']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyql.lines import split_lines

__all__ = ["chain_actions", "sparql_actions"]


def chain_actions(facts: Sequence[tuple[str, str, str]], answer: str) -> list[str] | None:
    """Action lines that build ``facts`` from the linked entities outwards, then answer.

    Each fact is added once one of its ends is an entity or an already
    bound variable, after a ``get_relation`` on that end (so every step is
    one an agent could take); None when the facts are not connected.

    Example:
        >>> chain_actions([("?y", "film.film.directed_by", "?x"), ("?y", "film.film.starring", "m.0c")], "?x")[:3]
        ['get_relation(m.0c)', 'add_fact(?y, film.film.starring, m.0c)', 'get_relation(?y)']
        >>> chain_actions([("?a", "r", "?b")], "?b") is None
        True
    """
    pending = list(facts)
    bound: set[str] = set()
    looked: set[str] = set()
    lines: list[str] = []
    while pending:
        for fact in pending:
            head, relation, tail = fact
            known = [t for t in (head, tail) if not t.startswith("?") or t in bound]
            if known:
                anchor = known[0]
                if anchor not in looked:
                    lines.append(f"get_relation({anchor})")
                    looked.add(anchor)
                lines.append(f"add_fact({head}, {relation}, {tail})")
                bound.update(t for t in (head, tail) if t.startswith("?"))
                pending.remove(fact)
                break
        else:
            return None
    if answer not in bound:
        return None
    return lines + [f"set_answer({answer})", "execute()"]


_TRIPLE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s*\.$")
_NS_FILTER_OK = re.compile(r"^FILTER\s*\(\s*\?\w+\s*!=\s*(\?\w+|ns:[mg]\.[0-9a-z_]+)\s*\)$|^FILTER\s*\(!isLiteral", re.IGNORECASE)


def _ns_term(text: str) -> str:
    return text.removeprefix("ns:")


def sparql_actions(sparql: str, answer: str = "?x") -> list[str] | None:
    """The gold action chain of a WebQSP/CWQ-style SPARQL query (``ns:`` triple patterns, one a line).

    Only plain conjunctive queries are translated: a query with ORDER BY,
    LIMIT or a FILTER other than ``?a != ?b``, ``?a != ns:m.x`` and the
    language filter gives None.

    Example:
        >>> q = "PREFIX ns: <http://rdf.freebase.com/ns/>\\nSELECT DISTINCT ?x\\nWHERE {\\nFILTER (?x != ?c)\\n" \\
        ...     "?c ns:education.educational_institution.sports_teams ns:m.03d0l76 . \\n?c ns:organization.organization.headquarters ?x .\\n}"
        >>> sparql_actions(q)[:3]
        ['get_relation(m.03d0l76)', 'add_fact(?c, education.educational_institution.sports_teams, m.03d0l76)', 'get_relation(?c)']
    """
    if re.search(r"\b(ORDER\s+BY|LIMIT|OFFSET|GROUP\s+BY)\b", sparql, re.IGNORECASE):
        return None
    facts = []
    for raw in split_lines(sparql):
        line = raw.strip()
        if line.upper().startswith("FILTER"):
            if not _NS_FILTER_OK.match(line):
                return None
            continue
        match = _TRIPLE.match(line)
        if match:
            facts.append(tuple(_ns_term(t) for t in match.groups()))
    return chain_actions(facts, answer) if facts else None  # type: ignore[arg-type]
