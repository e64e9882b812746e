"""Candidates: the relations worth showing first, ranked against the question and capped.

A guideline that says a step is wrong lists what may be written instead
("Choose a parameter from [...]", as the ERASER paper's guidelines do); a
Readi edit prompt lists the relations around the point where a path broke.
Both need the same thing: a long relation list cut to a few names, the ones
closest to the question first. :func:`rank_relations` is that one function.

With a *ranker* (a callable ``(question, relations) -> relations``, best
first, as :mod:`agent.methods.ranking` builds them: BM25, embeddings) its order is
used; without one, a word-overlap score orders them (:func:`overlap_score`:
the words of the question against the parts of the relation name, its last
part weighted higher), ties kept in the given order. Neither sends a KB query.

Example:
    >>> rank_relations("what category is tropical storm rachel?",
    ...                ["meteorology.tropical_cyclone.formed", "meteorology.tropical_cyclone.category"], limit=1)
    ['meteorology.tropical_cyclone.category']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

__all__ = ["Ranker", "overlap_score", "question_words", "rank_relations"]

#: A relation ranker: (question, relations) → relations, best first (it may keep fewer).
Ranker = Callable[[str | None, list[str]], list[str]]

_WORD_RE = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has", "have", "how", "in", "is", "it", "of", "on", "or", "than", "that", "the", "this", "to", "was", "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "with"]
)


def _stem(word: str) -> str:
    if len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def question_words(text: str | None) -> set[str]:
    """The content words of a text, lower-cased and crudely singularised.

    Example:
        >>> sorted(question_words("Which cyclones affected Florida?"))
        ['affected', 'cyclone', 'florida']
    """
    return {_stem(w) for w in _WORD_RE.findall((text or "").lower()) if w not in _STOP}


def overlap_score(words: set[str], relation: str) -> float:
    """How well a relation name matches the question's words.

    The share of the last part's content words found in the question counts
    double; each other question word found in the earlier parts counts half.

    Example:
        >>> overlap_score({"category", "cyclone"}, "meteorology.tropical_cyclone.category")
        2.5
    """
    parts = [[_stem(w) for w in _WORD_RE.findall(part) if w not in _STOP] for part in relation.lower().split(".")]
    if not parts or not parts[-1]:
        return 0.0
    last = parts[-1]
    found_last = {w for w in last if w in words}
    score = 2.0 * sum(1 for w in last if w in words) / len(last)
    others = {w for part in parts[:-1] for w in part if w in words} - found_last
    return score + 0.5 * len(others)


def rank_relations(
    question: str | None, relations: Iterable[str], ranker: Ranker | None = None, limit: int | None = None
) -> list[str]:
    """The relations ordered best first against the question, at most ``limit`` of them.

    Args:
        question: the question (None or empty: the given order is kept).
        relations: relation names (duplicates are dropped).
        ranker: a ranker (best first); the relations it leaves out follow, by word overlap.
        limit: how many to return (None: all).

    Example:
        >>> rank_relations("what is his place of birth", ["people.person.spouse", "people.person.place_of_birth"])
        ['people.person.place_of_birth', 'people.person.spouse']
        >>> rank_relations("q", ["a.b.c", "d.e.f"], ranker=lambda q, rs: list(reversed(rs)), limit=1)
        ['d.e.f']
    """
    names = list(dict.fromkeys(relations))
    if ranker is not None and names:
        kept = [r for r in dict.fromkeys(ranker(question, list(names))) if r in set(names)]
        rest = [r for r in names if r not in set(kept)]
        ordered = kept + _by_overlap(question, rest)
    else:
        ordered = _by_overlap(question, names)
    return ordered if limit is None else ordered[: max(0, limit)]


def _by_overlap(question: str | None, names: Sequence[str]) -> list[str]:
    words = question_words(question)
    if not words:
        return list(names)
    position = {name: i for i, name in enumerate(names)}
    return sorted(names, key=lambda n: (-overlap_score(words, n), position[n]))
