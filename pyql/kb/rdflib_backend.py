"""rdflib by name (``rdflib:FILE``, ``rdflib:demo``, a handed-in graph): an rdflib graph, from a file or in memory.

Example:
    >>> import rdflib
    >>> from pyql.kb.rdflib_backend import RdflibKB
    >>> g = rdflib.Graph()
    >>> _ = g.add((rdflib.URIRef("http://rdf.freebase.com/ns/m.0a"),
    ...            rdflib.URIRef("http://rdf.freebase.com/ns/type.object.name"), rdflib.Literal("A", lang="en")))
    >>> RdflibKB(g).labels(["m.0a"])
    {IRI('http://rdf.freebase.com/ns/m.0a'): 'A'}
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import rdflib
from rdflib.term import BNode, Identifier, URIRef
from rdflib.term import Literal as RdfLiteral

from pyql.echo import one_line
from pyql.errors import EngineError, KBError
from pyql.kb.base import KB
from pyql.builder.profiles import Profile
from pyql.builder.terms import IRI, BlankNode, Term, canonical_literal

__all__ = ["RdflibKB", "from_rdflib", "RDF_FORMATS", "one_line"]

RDF_FORMATS = {
    ".ttl": "turtle",
    ".turtle": "turtle",
    ".nt": "nt",
    ".ntriples": "nt",
    ".n3": "n3",
    ".nq": "nquads",
    ".trig": "trig",
    ".rdf": "xml",
    ".owl": "xml",
    ".xml": "xml",
    ".jsonld": "json-ld",
}


def rdf_format(path: Path) -> str:
    """rdflib's format name for a file, from its suffix.

    Raises:
        KBError: for an unknown suffix, listing the known ones.

    Example:
        >>> rdf_format(Path("kb.ttl"))
        'turtle'
    """
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = RDF_FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise KBError(f"cannot tell the RDF format of {path}; use one of {', '.join(sorted(RDF_FORMATS))}")
    return fmt


def load_graph(path: Path) -> rdflib.Graph:
    """Parse an RDF file (``.gz`` files are decompressed) into a new graph.

    Raises:
        KBError: an unknown format, an empty file, a file without triples, a
            broken gzip file or a syntax error, each on one line that names the file.

    Example:
        >>> import tempfile
        >>> empty = Path(tempfile.mkdtemp()) / "kb.ttl"
        >>> _ = empty.write_text("")
        >>> load_graph(empty)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: .../kb.ttl is empty (0 bytes); give an RDF file with triples
    """
    fmt = rdf_format(path)
    if path.stat().st_size == 0:
        raise KBError(f"{path} is empty (0 bytes); give an RDF file with triples")
    graph = rdflib.Graph()
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rb") as handle:
                graph.parse(source=handle, format=fmt)
        else:
            graph.parse(str(path), format=fmt)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise KBError(f"cannot read {path} as gzip: {one_line(exc)}") from exc
    except Exception as exc:
        raise KBError(f"cannot parse {path} as {fmt}: {parse_error_text(exc)}") from exc
    if len(graph) == 0:
        raise KBError(f"{path} holds no triples (only prefixes or comments?); give an RDF file with triples")
    return graph


def parse_error_text(exc: BaseException) -> str:
    """An rdflib parse error on one line, in text: line, reason and the text around the error (never Python byte strings).

    rdflib's Turtle/N3 errors (``BadSyntax``) print the input as ``b'...'``
    reprs; this reads their parts instead. Other errors are their one-line text.

    Example:
        >>> from rdflib.plugins.parsers.notation3 import BadSyntax
        >>> parse_error_text(BadSyntax("", 1, ':a :b "café', 10, "newline found in string literal"))
        'line 2: newline found in string literal, at ^ in: ":a :b "caf^é"'
    """
    raw, at, why, line = (getattr(exc, name, None) for name in ("_str", "_i", "_why", "lines"))
    if not isinstance(raw, bytes) or not isinstance(at, int) or why is None:
        return one_line(exc)
    text = raw.decode("utf-8", "replace")  # rdflib encoded the text it parsed; the position is in that text
    context = ("..." if at > 60 else "") + text[max(0, at - 60):at] + "^" + text[at:at + 60] + ("..." if len(text) - at > 60 else "")
    return " ".join(f'line {int(line or 0) + 1}: {why}, at ^ in: "{context}"'.split())


def from_rdflib(node: Identifier) -> Term:
    """An rdflib term as a pyql term.

    Example:
        >>> from_rdflib(rdflib.Literal(5))
        Literal(lexical='5', datatype='http://www.w3.org/2001/XMLSchema#integer', lang=None)
    """
    if isinstance(node, URIRef):
        return IRI(str(node))
    if isinstance(node, BNode):
        return BlankNode(str(node))
    if isinstance(node, RdfLiteral):
        return canonical_literal(str(node), str(node.datatype) if node.datatype else None, node.language)
    raise EngineError(f"unexpected rdflib term {node!r}")


class RdflibKB(KB):
    """A KB on an rdflib :class:`rdflib.Graph` (or Dataset).

    Args:
        graph: the graph, or a path to an RDF file to parse.
        profile: KB profile name or object.
        **options: see :class:`~pyql.kb.base.KB`.

    rdflib has no query timeout: a runaway query runs to its end. A file
    may be gzipped (``kb.nt.gz``); an empty file, or one without triples,
    is refused (:func:`load_graph`).
    """

    name = "rdflib"

    def __init__(self, graph: rdflib.Graph | str | Path, profile: str | Profile = "freebase", **options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(profile, **options)
        if isinstance(graph, (str, Path)):
            path = Path(graph)
            if not path.is_file():
                raise KBError(f"no such RDF file: {path}")
            graph = load_graph(path)
        self.graph = graph

    def __len__(self) -> int:
        return len(self.graph)

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        result = self.graph.query(sparql)
        names = [str(v) for v in result.vars or []]
        rows = []
        for row in result:
            rows.append({name: from_rdflib(row[i]) for i, name in enumerate(names) if row[i] is not None})
        return rows

    def _ask(self, sparql: str) -> bool:
        return bool(self.graph.query(sparql).askAnswer)
