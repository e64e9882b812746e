"""MetaQA's knowledge base (``kb.txt``, one ``head|relation|tail`` triple a line) as an RDF KB.

MetaQA (Zhang et al., 2018) ships its movie KB as text: ``Kismet|directed_by|William Dieterle``.
Every head and tail is an entity named by its text (movies, people, years,
languages, tags); the relations are ``directed_by``, ``written_by``,
``starred_actors``, ``release_year``, ``in_language``, ``has_tags``,
``has_genre``, ``has_imdb_rating`` and ``has_imdb_votes``.

Here each entity becomes the IRI ``mq:<local>`` with its text as
``rdfs:label``, and each relation ``mqr:<relation>``, under the generic
profile with the two prefixes added and ``rdfs:label`` left out of relation
lists (:data:`METAQA`). The local name is
built from the text by :func:`entity_local`: ASCII letters and digits stay,
a space becomes ``_`` and any other character ``-<hex code>-``; distinct
texts give distinct names (``Clint Eastwood`` the actor and ``clint
eastwood`` the tag stay two entities, as in MetaQA), and a question's
bracketed entity maps to its id without reading the KB.

``KB.open("metaqa:PATH/kb.txt", "generic")`` loads the file into the
embedded engine, an in-memory pyoxigraph store (about 135k triples and 43k
labels for the full file); :func:`metaqa_graph` builds an rdflib graph
instead, and :func:`write_turtle` converts it once for other engines.

Example:
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "kb.txt")
    >>> _ = open(p, "w", encoding="utf-8").write("Kismet|directed_by|William Dieterle\\nKismet|release_year|1944\\n")
    >>> kb = open_metaqa(p)
    >>> entity_id("William Dieterle"), kb.profile.name
    ('mq:William_Dieterle', 'generic')
    >>> kb.relations(entity_id("Kismet")).forward
    ('mqr:directed_by', 'mqr:release_year')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pyoxigraph as ox
import rdflib

from pyql.errors import KBError
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.builder.profiles import GENERIC, RDFS, Profile, get_profile

__all__ = [
    "ENTITY_NS",
    "METAQA",
    "RELATION_NS",
    "entity_id",
    "entity_local",
    "metaqa_graph",
    "metaqa_store",
    "open_metaqa",
    "read_triples",
    "relation_id",
    "write_turtle",
]

#: Namespace of MetaQA entities (prefix ``mq:``).
ENTITY_NS = "http://pyql.org/metaqa/entity/"
#: Namespace of MetaQA relations (prefix ``mqr:``).
RELATION_NS = "http://pyql.org/metaqa/relation/"
#: The generic profile with the ``mq:`` and ``mqr:`` prefixes.
METAQA: Profile = GENERIC.with_prefixes({"mq": ENTITY_NS, "mqr": RELATION_NS}).with_(
    hidden_relation_prefixes=(RDFS + "label",)
)


def entity_local(text: str) -> str:
    """The local name of the entity named ``text`` (injective, only ``[A-Za-z0-9_-]``).

    Example:
        >>> entity_local("Grégoire Colin"), entity_local("bd-r"), entity_local("1944")
        ('Gr-e9-goire_Colin', 'bd-2d-r', '1944')
    """
    out = []
    for ch in text.strip():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif ch == " ":
            out.append("_")
        else:
            out.append(f"-{ord(ch):x}-")
    local = "".join(out)
    return "_" + local if local.startswith("-") else local


def entity_id(text: str) -> str:
    """The id of a MetaQA entity as an action writes it: ``mq:<local name>``.

    Example:
        >>> entity_id("Before the Rain")
        'mq:Before_the_Rain'
    """
    return "mq:" + entity_local(text)


def relation_id(relation: str) -> str:
    """The id of a MetaQA relation: ``mqr:<relation>``.

    Example:
        >>> relation_id("starred_actors")
        'mqr:starred_actors'
    """
    return "mqr:" + relation.strip()


def read_triples(path: str | Path) -> Iterator[tuple[str, str, str]]:
    """The ``(head, relation, tail)`` triples of a MetaQA ``kb.txt``; blank lines are skipped.

    Raises:
        KBError: a missing file, or a line that is not ``head|relation|tail``
            (the message gives the line number).

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "kb.txt")
        >>> _ = open(p, "w", encoding="utf-8").write("Kismet|has_tags|bd-r\\nKismet directed_by\\n")
        >>> list(read_triples(p))
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: ...kb.txt, line 2: expected head|relation|tail (MetaQA's kb.txt format), got 'Kismet directed_by'
    """
    file = Path(path)
    try:
        handle = file.open(encoding="utf-8")
    except FileNotFoundError:
        raise KBError(f"no MetaQA kb.txt at {file} (MetaQA ships it at the top of its download)") from None
    except OSError as exc:
        raise KBError(f"cannot read the MetaQA KB {file}: {exc}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            text = line.rstrip("\r\n")
            if not text.strip():
                continue
            parts = text.split("|")
            if len(parts) != 3 or not all(p.strip() for p in parts):
                raise KBError(f"{file}, line {number}: expected head|relation|tail (MetaQA's kb.txt format), got {text[:80]!r}")
            yield parts[0].strip(), parts[1].strip(), parts[2].strip()


def metaqa_graph(path: str | Path) -> rdflib.Graph:
    """An rdflib graph of a MetaQA ``kb.txt``: one triple per line, an ``rdfs:label`` per entity.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "kb.txt")
        >>> _ = open(p, "w", encoding="utf-8").write("Kismet|release_year|1944\\n")
        >>> len(metaqa_graph(p))
        3
    """
    graph = rdflib.Graph()
    graph.bind("mq", ENTITY_NS)
    graph.bind("mqr", RELATION_NS)
    label = rdflib.URIRef(RDFS + "label")
    seen: set[str] = set()
    for head, relation, tail in read_triples(path):
        nodes = []
        for text in (head, tail):
            node = rdflib.URIRef(ENTITY_NS + entity_local(text))
            if text not in seen:
                seen.add(text)
                graph.add((node, label, rdflib.Literal(text)))
            nodes.append(node)
        graph.add((nodes[0], rdflib.URIRef(RELATION_NS + relation), nodes[1]))
    return graph


def metaqa_store(path: str | Path) -> ox.Store:
    """An in-memory pyoxigraph store of a MetaQA ``kb.txt`` (the same triples as :func:`metaqa_graph`).

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "kb.txt")
        >>> _ = open(p, "w", encoding="utf-8").write("Kismet|release_year|1944\\n")
        >>> len(metaqa_store(p))
        3
    """
    store = ox.Store()
    label = ox.NamedNode(RDFS + "label")
    seen: set[str] = set()
    quads: list[ox.Quad] = []
    for head, relation, tail in read_triples(path):
        nodes = []
        for text in (head, tail):
            node = ox.NamedNode(ENTITY_NS + entity_local(text))
            if text not in seen:
                seen.add(text)
                quads.append(ox.Quad(node, label, ox.Literal(text)))
            nodes.append(node)
        quads.append(ox.Quad(nodes[0], ox.NamedNode(RELATION_NS + relation), nodes[1]))
    store.bulk_extend(quads)
    return store


def open_metaqa(path: str | Path, profile: str | Profile = "generic", **options: Any) -> OxigraphKB:
    """Open a MetaQA ``kb.txt`` on the embedded engine, pyoxigraph (what ``KB.open("metaqa:PATH")`` does).

    Args:
        path: the ``kb.txt`` file.
        profile: must be the generic profile (its name or a Profile named
            ``generic``); the ``mq:``/``mqr:`` prefixes are added.
        **options: KB options (``count_cap``, ``row_cap`` ...).

    Raises:
        KBError: another profile, or a bad file (see :func:`read_triples`).

    Example:
        >>> open_metaqa("kb.txt", "freebase")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: a MetaQA KB uses the generic profile (entities mq:..., relations mqr:...); give --profile generic, not 'freebase'
    """
    name = profile.name if isinstance(profile, Profile) else str(profile)
    if name != "generic":
        raise KBError(
            f"a MetaQA KB uses the generic profile (entities mq:..., relations mqr:...); give --profile generic, not {name!r}"
        )
    base = get_profile(profile)
    chosen = base.with_prefixes({"mq": ENTITY_NS, "mqr": RELATION_NS}).with_(
        hidden_relation_prefixes=tuple(base.hidden_relation_prefixes) + (RDFS + "label",)
    )
    return OxigraphKB(metaqa_store(path), chosen, **options)


def write_turtle(path: str | Path, out: str | Path) -> int:
    """Convert a MetaQA ``kb.txt`` to Turtle (for Oxigraph or Virtuoso); returns the triple count.

    Example:
        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> _ = open(os.path.join(d, "kb.txt"), "w", encoding="utf-8").write("Kismet|release_year|1944\\n")
        >>> write_turtle(os.path.join(d, "kb.txt"), os.path.join(d, "kb.ttl"))
        3
    """
    graph = metaqa_graph(path)
    try:
        graph.serialize(destination=str(out), format="turtle")
    except OSError as exc:
        raise KBError(f"cannot write {out}: {exc}") from None
    return len(graph)
