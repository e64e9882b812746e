"""Readi's reasoning paths, and their conversion to and from PyQL chains.

A reasoning path starts at a topic entity and follows relations:
``France -> border -> contains``. Relations may be natural language
(``border``) or KB relations (``location.location.adjoin``); a leading ``^``
marks a relation walked backwards. A question has one path per topic
entity, and all paths end on the same answer.

As a PyQL chain, each hop is an ``add_fact`` from the previous variable to a
new one, and the last variable of every path is ``?answer``, so several
paths meet on the answer and the chain's query *is* the intersection of
their instances.

Example:
    >>> paths = parse_paths('Path: {"Jamaica": [Jamaica -> location.country.languages_spoken]}')
    >>> paths[0].start, paths[0].relations
    ('Jamaica', ('location.country.languages_spoken',))
    >>> q = to_chain(paths, {"Jamaica": "m.03_r3"})
    >>> q.actions()
    ['add_fact(m.03_r3, location.country.languages_spoken, ?answer)']
    >>> render_paths(from_chain(q))
    'm.03_r3 -> location.country.languages_spoken'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import lark
from lark.exceptions import LarkError, UnexpectedInput

from agent.errors import PathSyntaxError  # noqa: F401 (defined in agent/errors.py)
from agent.jsonlines import safe_text
from grammars import lark_parser
from pyql.errors import QueryError
from pyql.builder.profiles import Profile
from pyql.builder.query import Query
from pyql.builder.steps import Fact
from pyql.builder.terms import IRI, Variable

__all__ = [
    "PathSyntaxError",
    "PathSpec",
    "parse_paths",
    "parse_relation_paths",
    "clean_text",
    "render_paths",
    "to_chain",
    "from_chain",
    "ANSWER",
]

ANSWER = Variable("answer")
#: The labels real planners put before their paths: ``Path:``, ``Initial Path:``,
#: ``Refined Path:``, ``Final Path:``, ``Corrected Path:`` ... (markdown bold and
#: bullets allowed around them). The paths are read after the last one.
_LABEL_RE = re.compile(
    r"(?im)^[ \t>#*_-]*(?:(?:final|initial|refined|revised|corrected|edited|updated|improved|new)\s+)?"
    r"(?:reasoning\s+|relation\s+)?paths?[ \t]*(?:\*\*|__)?[ \t]*:(?:[ \t]*(?:\*\*|__)(?=[ \t]|$))?[ \t]*"
)
_SAFE_NODE_RE = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029\[\]{}\"',;:<\\]+")
_ARROW_RE = re.compile(r"-->|->|→|=>|⟶")
_ROG_RE = re.compile(r"<PATH>(.*?)</PATH>", re.S)
_ESCAPES = {"n": "\n", "r": "\r"}
_NO_PATH = "no reasoning path found: write one path per topic entity as Entity -> relation -> relation"


@dataclass(frozen=True)
class PathSpec:
    """One path: the topic entity as written (a name or an id) and its relations."""

    start: str
    relations: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "relations", tuple(self.relations))

    def __len__(self) -> int:
        return len(self.relations)

    def render(self) -> str:
        """``start -> r1 -> r2`` (quoting names that need it).

        Example:
            >>> PathSpec("Washington, D.C.", ("location.location.containedby",)).render()
            '"Washington, D.C." -> location.location.containedby'
        """
        return " -> ".join(_quote(x) for x in (self.start, *self.relations))


def _quote(text: str) -> str:
    if _SAFE_NODE_RE.fullmatch(text) and text == text.strip() and not _ARROW_RE.search(text) and text[0] not in "*_":
        return text
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    # "<" is escaped so that a rendered name never looks like RoG's <PATH> tag.
    return '"' + body.replace("<", "\\<") + '"'


def _unquote(token: str) -> str:
    body = token[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)


def clean_text(text: str | bytes) -> str:
    """An LLM reply as text that is safe to parse, print and write as UTF-8.

    Bytes are decoded as UTF-8 (invalid sequences become U+FFFD); lone
    surrogates (``\\ud800``, which a JSON reply may carry and which cannot be
    encoded as UTF-8) become U+FFFD too.

    Example:
        >>> clean_text(b"Path: Caf\\xe9 -> r") == "Path: Caf\\ufffd -> r"
        True
        >>> clean_text("A\\ud800B")
        'A\ufffdB'
    """
    if not isinstance(text, (str, bytes, bytearray, memoryview)):
        raise PathSyntaxError(f"a reasoning path is text, got {type(text).__name__}")
    return safe_text(text)


def _payload(text: str) -> str:
    """The part of an LLM reply holding the paths (after the last ``Path:`` label)."""
    labels = list(_LABEL_RE.finditer(text))
    return text[labels[-1].end() :] if labels else text


def parse_relation_paths(text: str | bytes) -> tuple[tuple[str, ...], ...]:
    """The relation-only path beams a fine-tuned planner writes, best first.

    Reasoning on Graphs (RoG, Luo et al., 2024) writes one beam per line as
    ``<PATH> r1 <SEP> r2 </PATH>`` (its ``gen_rule_path.py``), without the
    topic entity: the path starts at the question's topic entity. Empty
    beams are skipped.

    Example:
        >>> parse_relation_paths("<PATH> people.person.nationality <SEP> location.country.capital </PATH>")
        (('people.person.nationality', 'location.country.capital'),)
    """
    text = clean_text(text)
    beams = []
    for match in _ROG_RE.finditer(text):
        relations = tuple(r.strip() for r in match.group(1).split("<SEP>") if r.strip())
        if relations:
            beams.append(relations)
    return tuple(beams)


def parse_paths(text: str | bytes, topics: Sequence[str] = (), *, beams: int = 1) -> tuple[PathSpec, ...]:
    """Read the reasoning paths of an LLM reply (after its last ``Path:`` label).

    Accepts one path per line, the paper's dict form
    ``{"France": [France -> border], ...}``, a JSON dictionary or list of path
    strings (``{"France": ["France -> border"]}``), arrows ``->``, ``→``,
    ``=>``, ``-->``, and quoted names. Entity names may hold apostrophes and
    commas (``Bachelor's degree -> ...``, ``Libya, Libya, Libya -> ...``):
    relations never hold a comma, so a comma after a relation ends the path.
    The labels of real planners are known (``Path:``, ``Initial Path:``,
    ``Refined Path:``, ``Final Path:``, ``Corrected Path:`` ...); the paths
    after the last one are read.

    Relation-only beams of fine-tuned planners (RoG's ``<PATH> r1 <SEP> r2
    </PATH>``, see :func:`parse_relation_paths`) are started at each of
    ``topics``; the first ``beams`` beams are taken (the best one by
    default: further beams are alternatives, while Readi treats several
    paths as constraints that all hold).

    Text that is not valid UTF-8 (bytes) or holds lone surrogates is read
    with U+FFFD in their place (:func:`clean_text`); it never crashes the parser.

    Args:
        text: the LLM reply.
        topics: the question's topic entities (names or ids), where
            relation-only paths start.
        beams: how many relation-only beams to take (at least 1).

    Raises:
        PathSyntaxError: with the position and what was expected, or when no
            path (an entity followed by at least one relation) is found, or
            for relation-only paths without ``topics``.

    Example:
        >>> [p.render() for p in parse_paths("Final Path: Miley Cyrus → film.actor.film → film.performance.film")]
        ['Miley Cyrus -> film.actor.film -> film.performance.film']
        >>> [p.start for p in parse_paths("Refined Path: Bachelor's degree -> education.educational_degree.people_with_this_degree")]
        ["Bachelor's degree"]
        >>> parse_paths("<PATH> people.person.nationality <SEP> location.country.capital </PATH>", ["m.0c2yrf"])
        (PathSpec(start='m.0c2yrf', relations=('people.person.nationality', 'location.country.capital')),)
        >>> parse_paths("Path: nothing here")
        Traceback (most recent call last):
        ...
        agent.errors.PathSyntaxError: no reasoning path found: write one path per topic entity as Entity -> relation -> relation
    """
    text = clean_text(text)
    relation_beams = parse_relation_paths(text)
    if relation_beams:
        return _started_beams(relation_beams, topics, beams, text)
    paths = _written_paths(text)
    if not paths:
        raise PathSyntaxError(_NO_PATH, text=text)
    return tuple(paths)


def _started_beams(
    relation_beams: tuple[tuple[str, ...], ...], topics: Sequence[str], beams: int, text: str
) -> tuple[PathSpec, ...]:
    """The first ``beams`` relation-only beams, each started at every topic entity.

    Raises:
        PathSyntaxError: ``beams`` < 1, or no topic entity.
    """
    if beams < 1:
        raise PathSyntaxError(f"beams must be at least 1, not {beams}", text=text)
    starts = [str(t) for t in topics if str(t).strip()]
    if not starts:
        raise PathSyntaxError(
            "relation-only paths (<PATH> r1 <SEP> r2 </PATH>) start at the topic entity: "
            "pass the question's topic entities as topics=",
            text=text,
        )
    return tuple(PathSpec(start, beam) for beam in relation_beams[:beams] for start in starts)


def _written_paths(text: str) -> list[PathSpec]:
    """The paths written out after the last label: each string of a JSON payload, or the payload's lines."""
    payload = _payload(text)
    strings = _json_paths(payload)
    if strings is None:
        return _parse_body(payload, text)
    paths: list[PathSpec] = []
    for item in strings:
        paths.extend(_parse_body(item, text))
    return paths


def _json_paths(payload: str) -> list[str] | None:
    """The path strings of a JSON dictionary or list (``{"France": ["France -> border"]}``), else None."""
    body = payload.strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body)
    except ValueError:
        return None
    items = list(value.values()) if isinstance(value, dict) else [value]
    strings: list[str] = []
    for item in items:
        for element in item if isinstance(item, list) else [item]:
            if not isinstance(element, str):
                return None
            strings.append(element)
    return strings if any(_ARROW_RE.search(s) for s in strings) else None


def _parse_body(payload: str, text: str) -> list[PathSpec]:
    # Drop prose around the paths: keep lines that hold an arrow or brackets.
    kept = [line for line in payload.split("\n") if re.search(r"-->|->|→|=>|⟶|[\[\]{}]", line)]
    body = "\n".join(line.rstrip("\r") for line in kept)
    if not body.strip():
        raise PathSyntaxError(_NO_PATH, text=text)
    try:
        tree = lark_parser("path", parser="earley", lexer="dynamic").parse(body)
    except UnexpectedInput as exc:
        expected = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or [])
        raise PathSyntaxError(
            f"reasoning path does not parse at character {exc.pos_in_stream}: {exc.get_context(body).strip()!r}; "
            "write Entity -> relation -> relation, one path per line, quoting names with brackets or arrows",
            text=body,
            position=exc.pos_in_stream,
            expected=[str(e) for e in expected],
        ) from None
    except (LarkError, RecursionError) as exc:  # pragma: no cover - other lark failures
        raise PathSyntaxError(f"reasoning path does not parse: {type(exc).__name__}: {exc}", text=body) from None
    paths = []
    for node in tree.iter_subtrees_topdown():
        if node.data == "path":
            parts = []
            for child in node.children:
                assert isinstance(child, lark.Tree)
                token = str(child.children[0])
                parts.append(_unquote(token) if child.data == "quoted" else token.strip())
            parts = [p for p in parts if p]
            if len(parts) >= 2:
                paths.append(PathSpec(parts[0], tuple(parts[1:])))
    return paths


def render_paths(paths: Sequence[PathSpec]) -> str:
    """One path per line, in a form :func:`parse_paths` reads back.

    Example:
        >>> render_paths([PathSpec("A", ("r.s.t",)), PathSpec("B", ("x.y.z", "^u.v.w"))])
        'A -> r.s.t\\nB -> x.y.z -> ^u.v.w'
    """
    return "\n".join(p.render() for p in paths)


def to_chain(
    paths: Sequence[PathSpec],
    entities: Mapping[str, str],
    profile: str | Profile = "freebase",
) -> Query:
    """The PyQL chain of bound paths (relations must be KB relations).

    Path *i* hop *j* goes from the previous variable to ``?p{i}_{j}``; the
    last hop of every path ends on ``?answer``. A relation written ``^r`` is
    walked backwards (``add_fact(?next, r, ?previous)``).

    Args:
        paths: the paths; a start is an entity name (looked up in
            ``entities``) or an id.
        entities: linked entities, name → id.

    Raises:
        QueryError: for a start that is neither a linked name nor an id, or a
            relation that is not a KB relation name.
    """
    query = Query(profile)
    lookup = {name.lower(): ident for name, ident in entities.items()}
    for i, path in enumerate(paths):
        start_id = entities.get(path.start) or lookup.get(path.start.lower()) or path.start
        try:
            current = query.term(start_id, "entity")
        except Exception:
            raise QueryError(
                f"path {i + 1} starts at {path.start!r}, which is neither a linked entity "
                f"({', '.join(entities) or 'none'}) nor an entity id"
            ) from None
        for j, relation in enumerate(path.relations):
            backward = relation.startswith("^")
            name = relation[1:] if backward else relation
            nxt = ANSWER if j == len(path.relations) - 1 else Variable(f"p{i}_{j + 1}")
            try:
                rel = query.term(name, "relation")
            except Exception:
                raise QueryError(f"path {i + 1}: {relation!r} is not a KB relation; bind it before making a chain") from None
            if not isinstance(rel, IRI):
                raise QueryError(f"path {i + 1}: {relation!r} is not a KB relation; bind it before making a chain")
            query = query.add_fact(nxt, rel, current) if backward else query.add_fact(current, rel, nxt)
            current = nxt
    return query


def from_chain(query: Query) -> tuple[PathSpec, ...]:
    """The paths of a PyQL chain made by :func:`to_chain` (starts as ids).

    Raises:
        QueryError: when the query is not a set of chains from entities to ``?answer``.
    """
    profile = query.profile
    facts = [s for s in query.steps if isinstance(s, Fact)]
    if len(facts) != len(query.steps):
        raise QueryError("only add_fact chains are reasoning paths")
    paths: list[PathSpec] = []
    start: str | None = None
    relations: list[str] = []
    current: object = None
    for fact in facts:
        head, tail = fact.head, fact.tail
        rel = profile.shorten(fact.relation.value) if isinstance(fact.relation, IRI) else str(fact.relation)
        if start is None:
            forward_start = isinstance(head, IRI) and isinstance(tail, Variable)
            entity = head if forward_start else tail
            if not isinstance(entity, IRI):
                raise QueryError("a reasoning path starts at an entity")
            start = profile.shorten(entity.value)
            relations = [rel if forward_start else "^" + rel]
            current = tail if forward_start else head
        elif head == current and isinstance(tail, Variable):
            relations.append(rel)
            current = tail
        elif tail == current and isinstance(head, Variable):
            relations.append("^" + rel)
            current = head
        else:
            raise QueryError(f"step {fact} does not continue the path from {current}")
        if current == ANSWER:
            paths.append(PathSpec(start, tuple(relations)))
            start, relations, current = None, [], None
    if start is not None:
        raise QueryError("a path does not end on ?answer")
    return tuple(paths)
