"""Matching a gold action against an enumerated candidate, for the choose-mode replay tests."""

from __future__ import annotations

from pyql.action_parser import parse_action


def match_gold(gold: str, candidate: str, mapping: dict[str, str], existing: set[str]) -> dict[str, str] | None:
    """The new variable mapping when ``candidate`` is ``gold`` up to fresh variable names, else None.

    ``mapping`` maps gold variables already matched to the candidate's names;
    ``existing`` holds the episode's variables (a fresh gold variable may not
    be matched to one of them).

    Example:
        >>> match_gold("add_fact(m.1, a.b.c, ?x)", "add_fact(m.1, a.b.c, ?c)", {}, set())
        {'?x': '?c'}
        >>> match_gold("add_fact(m.1, a.b.c, ?x)", "add_fact(m.1, a.b.d, ?c)", {}, set()) is None
        True
    """
    g, c = parse_action(gold), parse_action(candidate)
    if g.name != c.name or len(g.args) != len(c.args):
        return None
    new: dict[str, str] = {}
    for ga, ca in zip(g.args, c.args):
        if ga.kind != "variable":
            if ga != ca:
                return None
            continue
        if ca.kind != "variable":
            return None
        gv, cv = "?" + ga.value, "?" + ca.value
        if gv in mapping:
            if mapping[gv] != cv:
                return None
        elif cv in existing or new.setdefault(gv, cv) != cv:
            return None
    return new
