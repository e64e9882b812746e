"""Embedded and fast: a pyoxigraph store, on disk or in memory.

Example:
    >>> from pyql.kb.oxigraph_backend import OxigraphKB
    >>> kb = OxigraphKB()            # empty, in memory
    >>> kb.select("SELECT (1 AS ?one) WHERE {}")[0]["one"].lexical
    '1'
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from pyql.echo import one_line
from pyql.errors import EngineError, KBError
from pyql.kb.base import KB
from pyql.kb.progress import LoadProgress
from pyql.builder.profiles import Profile
from pyql.builder.terms import IRI, BlankNode, Term, canonical_literal

__all__ = ["OxigraphKB", "from_oxigraph", "load_file", "one_line", "oxigraph_format"]

_FORMATS = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ntriples": ox.RdfFormat.N_TRIPLES,
    ".n3": ox.RdfFormat.N3,
    ".nq": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML,
    ".jsonld": ox.RdfFormat.JSON_LD,
}


def oxigraph_format(path: Path) -> ox.RdfFormat:
    """The RDF format of a file from its suffix, ``.gz`` looked through.

    Raises:
        KBError: an unknown suffix, listing the known ones.

    Example:
        >>> oxigraph_format(Path("kb.nt.gz")) == ox.RdfFormat.N_TRIPLES
        True
    """
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = _FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise KBError(f"cannot tell the RDF format of {path}; use one of {', '.join(sorted(_FORMATS))} (optionally .gz)")
    return fmt


def load_file(store: ox.Store, path: Path, graph: str | None = None, progress: bool | None = None,
               what: str = "loading") -> LoadProgress:
    """Load an RDF file (gzipped or not) into ``store``; errors on one line naming the file.

    Progress goes to standard error as :mod:`pyql.kb.progress` decides (``progress``
    forces it on or off); the caller calls ``finish`` on the returned report.

    Raises:
        KBError: an unknown format, an empty file, a broken gzip file or a
            syntax error, each on one line that names the file.

    Example:
        >>> store = ox.Store()
        >>> load_file(store, Path("/nonexistent.nt"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: cannot read /nonexistent.nt: ...
    """
    fmt = oxigraph_format(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise KBError(f"cannot read {path}: {one_line(exc)}") from exc
    if size == 0:
        raise KBError(f"{path} is empty (0 bytes); give an RDF file with triples")
    target = ox.NamedNode(graph) if graph else None
    report = LoadProgress(path, size, enabled=progress, what=what)
    try:
        with path.open("rb") as raw:
            counted = report.wrap(raw)
            if path.suffix.lower() == ".gz":
                with gzip.GzipFile(fileobj=counted, mode="rb") as handle:  # type: ignore[arg-type]
                    stream: IO[bytes] = handle
                    store.bulk_load(input=stream, format=fmt, to_graph=target)
            else:
                store.bulk_load(input=counted, format=fmt, to_graph=target)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise KBError(f"cannot read {path} as gzip: {one_line(exc)}") from exc
    except (SyntaxError, ValueError, OSError) as exc:
        raise KBError(f"cannot load {path}: {one_line(exc)}") from exc
    return report


def from_oxigraph(node: object) -> Term:
    """A pyoxigraph term as a pyql term.

    Example:
        >>> from_oxigraph(ox.NamedNode("http://example.org/a"))
        IRI('http://example.org/a')
    """
    if isinstance(node, ox.NamedNode):
        return IRI(node.value)
    if isinstance(node, ox.BlankNode):
        return BlankNode(node.value)
    if isinstance(node, ox.Literal):
        return canonical_literal(node.value, None if node.language else node.datatype.value, node.language)
    raise EngineError(f"unexpected Oxigraph term {node!r}")


class OxigraphKB(KB):
    """A KB on a :class:`pyoxigraph.Store`.

    Args:
        store: a store, a directory of an on-disk store (created if missing),
            an RDF file (optionally gzipped, ``kb.nt.gz``) to load into a new
            in-memory store, or None for an empty in-memory store. An empty
            file, or one without triples, is refused.
        profile: KB profile name or object.
        progress: report the loading of a file on standard error: None
            (default) when it is large (see :mod:`pyql.kb.progress`), True
            always, False never.
        **options: see :class:`~pyql.kb.base.KB`.

    This is the embedded default: ``KB.open("kb.ttl")`` and ``KB.open("demo")``
    load the file into an in-memory store. For a KB larger than memory, load
    it once into an on-disk store (``pyql kb load FILE --store DIR``,
    :mod:`pyql.kb.store`) and open ``oxigraph:DIR``.

    Queries see the union of all graphs as their default graph.
    """

    name = "oxigraph"

    def __init__(self, store: ox.Store | str | Path | None = None, profile: str | Profile = "freebase",
                 progress: bool | None = None, **options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(profile, **options)
        if store is None:
            store = ox.Store()
        elif isinstance(store, (str, Path)):
            path = Path(store)
            if path.is_file():
                mem = ox.Store()
                report = load_file(mem, path, progress=progress)
                triples = len(mem)
                report.finish(triples)
                if triples == 0:
                    raise KBError(f"{path} holds no triples (only prefixes or comments?); give an RDF file with triples")
                store = mem
            else:
                try:
                    store = ox.Store(str(path))
                except OSError as exc:
                    raise KBError(f"cannot open an Oxigraph store at {path}: {exc}") from exc
        self.store = store

    def load(self, path: str | Path, graph: str | None = None, progress: bool | None = None) -> None:
        """Bulk-load an RDF file into the store (into ``graph`` if given); ``progress`` as in the constructor."""
        load_file(self.store, Path(path), graph, progress).finish()

    def __len__(self) -> int:
        return len(self.store)

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        try:
            result = self.store.query(sparql, use_default_graph_as_union=True)
        except SyntaxError as exc:
            raise EngineError(f"Oxigraph could not parse the query: {exc}", query=sparql) from exc
        if not isinstance(result, ox.QuerySolutions):
            raise EngineError("expected a SELECT query", query=sparql)
        names = [v.value for v in result.variables]
        rows = []
        for solution in result:
            row = {}
            for name in names:
                node = solution[name]
                if node is not None:
                    row[name] = from_oxigraph(node)
            rows.append(row)
        return rows

    def _ask(self, sparql: str) -> bool:
        try:
            result = self.store.query(sparql, use_default_graph_as_union=True)
        except SyntaxError as exc:
            raise EngineError(f"Oxigraph could not parse the query: {exc}", query=sparql) from exc
        return bool(result)

    def close(self) -> None:
        try:
            self.store.flush()
        except Exception:  # in-memory stores have nothing to flush
            pass
