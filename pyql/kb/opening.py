"""Opening a KB from a spec: the entries of the KB backend registry, one per spec form.

Each form ``KB.open`` takes is one function below, registered with
:func:`~pyql.kb.registry.kb_backend` (its form, a one-line description and
an example); :mod:`pyql.kb.registry` matches a spec to its entry (prefix
entries first, then the names ``demo`` and ``wikidata-demo``, then any other
string as a file; ``subgraphs:FILE``, :mod:`pyql.kb.subgraphs`, names one KB
per question) and
generates every list of the forms from them. A new backend goes here as one
more decorated function.

The embedded default is pyoxigraph: ``demo``, ``wikidata-demo`` and a
Turtle/N-Triples/... file (optionally ``.gz``) are loaded into an in-memory Oxigraph store
(:class:`~pyql.kb.oxigraph_backend.OxigraphKB`; progress on standard error
for a large file). ``oxigraph:DIR`` opens an on-disk store made by
``pyql kb load FILE... --store DIR`` (:mod:`pyql.kb.store`) read-only;
``oxigraph:FILE`` is the same as ``FILE``. rdflib is available by name,
``rdflib:FILE`` / ``rdflib:demo`` / ``rdflib:wikidata-demo``, and a :class:`rdflib.Graph` (or a
:class:`pyoxigraph.Store`) handed to :func:`open_kb` is wrapped as it is.

This module is the one place that knows every backend. It imports them
lazily, inside each entry, so an unused engine's library is never loaded;
the backends import :mod:`pyql.kb.base`, which does not import this module.
:meth:`KB.open <pyql.kb.base.KB.open>` reaches :func:`open_kb` through the
opener this module installs with :func:`pyql.kb.base.set_opener` when it is
imported, which :mod:`pyql.kb` (the package, always initialised before any
of its modules) does; it also writes the forms into ``KB.open``'s docstring.

The two bundled KBs are named (:data:`BUNDLED`): ``demo``, Freebase-style
tropical cyclones, and ``wikidata-demo``, Wikidata's statement model with
quantities, units and time qualifiers (``pyql/data/wikidata_demo.md``);
``wikidata-demo`` opens with the ``wikidata`` profile unless a profile
other than the default ``freebase`` is given, since Freebase names mean
nothing there.

Example:
    >>> from pyql.kb.base import KB
    >>> type(open_kb("demo")).__name__, type(KB.open("rdflib:demo")).__name__
    ('OxigraphKB', 'RdflibKB')
    >>> KB.open("wikidata-demo").profile.name, KB.open("rdflib:wikidata-demo", "generic").profile.name
    ('wikidata', 'generic')
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyql.errors import KBError
from pyql.kb.base import KB, set_opener
from pyql.kb.registry import kb_backend, kb_backends
from pyql.builder.profiles import Profile

if TYPE_CHECKING:
    from pyql.kb.oxigraph_backend import OxigraphKB
    from pyql.kb.rdflib_backend import RdflibKB

__all__ = ["BUNDLED", "open_kb", "demo_kb_path", "wikidata_demo_kb_path", "bundled_kb"]

#: The bundled KBs by name: their file in ``pyql/data`` and the profile they are opened with.
BUNDLED: dict[str, tuple[str, str]] = {
    "demo": ("cyclones.ttl", "freebase"),
    "wikidata-demo": ("wikidata_demo.ttl", "wikidata"),
}


def demo_kb_path() -> Path:
    """The bundled demo KB (Freebase-style Turtle about tropical cyclones).

    Example:
        >>> demo_kb_path().name
        'cyclones.ttl'
    """
    return Path(str(resources.files("pyql") / "data" / "cyclones.ttl"))


def wikidata_demo_kb_path() -> Path:
    """The bundled Wikidata-shaped demo KB (statements, quantities with units, time qualifiers).

    Example:
        >>> wikidata_demo_kb_path().name
        'wikidata_demo.ttl'
    """
    return Path(str(resources.files("pyql") / "data" / "wikidata_demo.ttl"))


def bundled_kb(name: str, profile: str | Profile = "freebase") -> tuple[Path, str | Profile] | None:
    """The file and profile of a bundled KB named ``name`` (``demo``, ``wikidata-demo``), or None.

    The default profile (``freebase``) gives way to the KB's own; any other is kept.

    Example:
        >>> path, profile = bundled_kb("wikidata-demo")
        >>> path.name, profile
        ('wikidata_demo.ttl', 'wikidata')
        >>> bundled_kb("wikidata-demo", "generic")[1], bundled_kb("demo.ttl")
        ('generic', None)
    """
    if name not in BUNDLED:
        return None
    file, own = BUNDLED[name]
    named = profile.name if isinstance(profile, Profile) else profile
    path = Path(str(resources.files("pyql") / "data" / file))
    return path, (own if named == "freebase" else profile)


def open_kb(spec: object, profile: str | Profile = "freebase", **options: object) -> KB:
    """Open a KB from a spec (see :meth:`KB.open <pyql.kb.base.KB.open>`) with its registry entry.

    ``spec`` may also be an :class:`rdflib.Graph` (wrapped by
    :class:`~pyql.kb.rdflib_backend.RdflibKB`) or a :class:`pyoxigraph.Store`
    (wrapped by :class:`~pyql.kb.oxigraph_backend.OxigraphKB`).

    Example:
        >>> open_kb("oxigraph:").name, open_kb("demo").name, open_kb("rdflib:demo").name
        ('oxigraph', 'oxigraph', 'rdflib')
        >>> open_kb("nowhere.ttl")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: no such RDF file: nowhere.ttl (give demo, wikidata-demo, a Turtle/N-Triples file, oxigraph:DIR, rdflib:FILE, metaqa:PATH/kb.txt, subgraphs:FILE or an http(s)://…/sparql endpoint)
    """
    return kb_backends.open(spec, profile, **options)


def _rdf_file(text: str) -> Path:
    """The RDF file a ``FILE`` or ``rdflib:FILE`` spec names; a missing one is the error listing every form."""
    path = Path(text)
    if not path.exists():
        raise KBError(f"no such RDF file: {text} (give {kb_backends.hint()})")
    if path.is_dir():
        raise KBError(f"{text} is a directory; for an Oxigraph store directory write oxigraph:{text}")
    return path


def _oxigraph(source: Any, profile: str | Profile, **options: Any) -> OxigraphKB:
    from pyql.kb.oxigraph_backend import OxigraphKB

    return OxigraphKB(source, profile, **options)


def _rdflib(source: Any, profile: str | Profile, **options: Any) -> RdflibKB:
    from pyql.kb.rdflib_backend import RdflibKB

    return RdflibKB(source, profile, **options)


# -- the entries, in the order lists and hints show them -------------------


@kb_backend("demo", name="demo", example="demo",
            description="the bundled demo KB about tropical cyclones, Freebase-style, in memory")
def _open_demo(spec: str, profile: str | Profile, **options: Any) -> KB:
    return _oxigraph(_rdf_file(str(demo_kb_path())), profile, **options)


@kb_backend("wikidata-demo", name="wikidata-demo", example="wikidata-demo",
            description="the bundled Wikidata-shaped demo KB: statements, quantities with units, "
                        "time qualifiers, MarkQA-style questions; the wikidata profile, in memory")
def _open_wikidata_demo(spec: str, profile: str | Profile, **options: Any) -> KB:
    path, own = bundled_kb(spec, profile)  # type: ignore[misc]
    return _oxigraph(_rdf_file(str(path)), own, **options)


@kb_backend("FILE", fallback=True, hint="a Turtle/N-Triples file", example="kb.nt.gz",
            description="a Turtle/N-Triples/N-Quads/TriG/RDF-XML/JSON-LD file, .gz too, "
                        "in an in-memory pyoxigraph store, the embedded default")
def _open_file(spec: str, profile: str | Profile, **options: Any) -> KB:
    return _oxigraph(_rdf_file(spec), profile, **options)


@kb_backend("oxigraph:DIR", prefix="oxigraph:", example="oxigraph:/data/fb-store",
            description="an on-disk Oxigraph store made by `pyql kb load`, opened read-only; "
                        "also oxigraph:FILE, the same as FILE, oxigraph:demo, oxigraph:wikidata-demo, "
                        "and oxigraph: alone, an empty store")
def _open_oxigraph(rest: str, profile: str | Profile, **options: Any) -> KB:
    if rest in ("", ":memory:"):
        return _oxigraph(None, profile, **options)
    bundled = bundled_kb(rest, profile)
    if bundled is not None:
        rest, profile = str(bundled[0]), bundled[1]
    if Path(rest).is_file():
        return _oxigraph(rest, profile, **options)
    from pyql.kb.store import open_store

    return _oxigraph(open_store(rest), profile, **options)


@kb_backend("rdflib:FILE", prefix="rdflib:", example="rdflib:demo",
            description="an RDF file, or rdflib:demo, rdflib:wikidata-demo, on rdflib instead of pyoxigraph")
def _open_rdflib(rest: str, profile: str | Profile, **options: Any) -> KB:
    bundled = bundled_kb(rest, profile)
    if bundled is not None:
        return _rdflib(_rdf_file(str(bundled[0])), bundled[1], **options)
    return _rdflib(_rdf_file(rest), profile, **options)


@kb_backend("metaqa:PATH/kb.txt", prefix="metaqa:", example="metaqa:metaqa/kb.txt",
            description="MetaQA's kb.txt of head|relation|tail lines, in memory, with the generic profile")
def _open_metaqa(rest: str, profile: str | Profile, **options: Any) -> KB:
    from pyql.kb.metaqa import open_metaqa

    return open_metaqa(rest, profile, **options)


def _subgraph_profile(profile: str | Profile) -> Profile:
    from pyql.kb.subgraphs import subgraph_profile

    return subgraph_profile(profile)


@kb_backend("subgraphs:FILE", prefix="subgraphs:", example="subgraphs:rog-webqsp-test.jsonl", per_question=True,
            profile_of=_subgraph_profile,
            description="each question's own subgraph, from RoG's or NSM's JSON Lines, in its own in-memory store; "
                        "subgraphs:FILE#ID is one question's")
def _open_subgraphs(rest: str, profile: str | Profile, **options: Any) -> KB:
    from pyql.kb.subgraphs import open_subgraphs

    return open_subgraphs(rest, profile, **options)


@kb_backend("http(s)://…/sparql", prefix=("http://", "https://"), keep_prefix=True,
            hint="an http(s)://…/sparql endpoint", example="http://127.0.0.1:8890/sparql",
            options=("timeout", "default_graph"),
            description="any SPARQL 1.1 endpoint over HTTP: Virtuoso, QLever, Fuseki ...; "
                        "the one form with a time-out and a default graph")
def _open_endpoint(url: str, profile: str | Profile, **options: Any) -> KB:
    from pyql.kb.endpoint_backend import EndpointKB

    return EndpointKB(url, profile, **options)


def _is_rdflib_graph(spec: object) -> bool:
    return (type(spec).__module__ or "").startswith("rdflib.") and hasattr(spec, "query")


def _is_oxigraph_store(spec: object) -> bool:
    return (type(spec).__module__ or "").startswith("pyoxigraph") and type(spec).__name__ == "Store"


@kb_backend("rdflib.Graph", accepts=_is_rdflib_graph, hint="an rdflib Graph", example='rdflib.Graph().parse("kb.ttl")',
            description="an rdflib graph object or Dataset, wrapped as it is")
def _open_graph(graph: Any, profile: str | Profile, **options: Any) -> KB:
    return _rdflib(graph, profile, **options)


@kb_backend("pyoxigraph.Store", accepts=_is_oxigraph_store, hint="a pyoxigraph Store", example="pyoxigraph.Store()",
            description="a pyoxigraph store object, in memory or on disk, wrapped as it is")
def _open_store(store: Any, profile: str | Profile, **options: Any) -> KB:
    return _oxigraph(store, profile, **options)


set_opener(open_kb)
kb_backends.document(KB.open)
