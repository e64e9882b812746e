"""Opening a KB from a spec string: ``demo``, a file, ``oxigraph:PATH``, ``rdflib:FILE`` or an endpoint.

The embedded default is pyoxigraph: ``demo`` and a Turtle/N-Triples/...
file (optionally ``.gz``) are loaded into an in-memory Oxigraph store
(:class:`~pyql.kb.oxigraph_backend.OxigraphKB`; progress on standard error
for a large file). ``oxigraph:DIR`` opens an on-disk store made by
``pyql kb load FILE... --store DIR`` (:mod:`pyql.kb.store`) read-only;
``oxigraph:FILE`` is the same as ``FILE``. rdflib is available by name,
``rdflib:FILE`` / ``rdflib:demo``, and a :class:`rdflib.Graph` (or a
:class:`pyoxigraph.Store`) handed to :func:`open_kb` is wrapped as it is.

This module is the one place that knows every backend. It imports them
(lazily, so an unused engine's library is never loaded) and the backends
import :mod:`pyql.kb.base`; :mod:`pyql.kb.base` does not import this module.
:meth:`KB.open <pyql.kb.base.KB.open>` reaches :func:`open_kb` through the
opener this module installs with :func:`pyql.kb.base.set_opener` when it is
imported, which :mod:`pyql.kb` (the package, always initialised before any
of its modules) does.

Example:
    >>> from pyql.kb.base import KB
    >>> type(open_kb("demo")).__name__, type(KB.open("rdflib:demo")).__name__
    ('OxigraphKB', 'RdflibKB')
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pyql.errors import KBError
from pyql.kb.base import KB, set_opener
from pyql.profiles import Profile

__all__ = ["open_kb", "demo_kb_path"]


def demo_kb_path() -> Path:
    """The bundled demo KB (Freebase-style Turtle about tropical cyclones).

    Example:
        >>> demo_kb_path().name
        'cyclones.ttl'
    """
    return Path(str(resources.files("pyql") / "data" / "cyclones.ttl"))


def open_kb(spec: object, profile: str | Profile = "freebase", **options: object) -> KB:
    """Open a KB from a spec string (see :meth:`KB.open <pyql.kb.base.KB.open>`).

    ``spec`` may also be an :class:`rdflib.Graph` (wrapped by
    :class:`~pyql.kb.rdflib_backend.RdflibKB`) or a :class:`pyoxigraph.Store`
    (wrapped by :class:`~pyql.kb.oxigraph_backend.OxigraphKB`).

    Example:
        >>> open_kb("oxigraph:").name, open_kb("demo").name, open_kb("rdflib:demo").name
        ('oxigraph', 'oxigraph', 'rdflib')
        >>> open_kb("nowhere.ttl")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: no such RDF file: nowhere.ttl (give a Turtle/N-Triples file, oxigraph:DIR, rdflib:FILE, an http(s)://.../sparql endpoint, or demo)
    """
    module = type(spec).__module__ or ""
    if module.startswith("rdflib.") and hasattr(spec, "query"):
        from pyql.kb.rdflib_backend import RdflibKB

        return RdflibKB(spec, profile, **options)  # type: ignore[arg-type]
    if module.startswith("pyoxigraph") and type(spec).__name__ == "Store":
        from pyql.kb.oxigraph_backend import OxigraphKB

        return OxigraphKB(spec, profile, **options)  # type: ignore[arg-type]
    if not isinstance(spec, (str, Path)):
        raise KBError(f"a KB spec is a string (or an rdflib Graph or a pyoxigraph Store), got {type(spec).__name__}")
    text = str(spec)
    if text.startswith(("http://", "https://")):
        from pyql.kb.endpoint_backend import EndpointKB

        return EndpointKB(text, profile, **options)  # type: ignore[arg-type]
    if text.startswith("oxigraph:"):
        from pyql.kb.oxigraph_backend import OxigraphKB

        rest = text[len("oxigraph:") :]
        if rest in ("", ":memory:"):
            return OxigraphKB(None, profile, **options)  # type: ignore[arg-type]
        if rest == "demo":
            rest = str(demo_kb_path())
        if Path(rest).is_file():
            return OxigraphKB(rest, profile, **options)  # type: ignore[arg-type]
        from pyql.kb.store import open_store

        return OxigraphKB(open_store(rest), profile, **options)  # type: ignore[arg-type]
    if text.startswith("metaqa:"):
        from pyql.kb.metaqa import open_metaqa

        return open_metaqa(text[len("metaqa:") :], profile, **options)
    engine = "oxigraph"
    if text.startswith("rdflib:"):
        engine, text = "rdflib", text[len("rdflib:") :]
    if text == "demo":
        text = str(demo_kb_path())
    path = Path(text)
    if not path.exists():
        raise KBError(
            f"no such RDF file: {text} (give a Turtle/N-Triples file, oxigraph:DIR, rdflib:FILE, "
            "an http(s)://.../sparql endpoint, or demo)"
        )
    if path.is_dir():
        raise KBError(f"{text} is a directory; for an Oxigraph store directory write oxigraph:{text}")
    if engine == "rdflib":
        from pyql.kb.rdflib_backend import RdflibKB

        return RdflibKB(path, profile, **options)  # type: ignore[arg-type]
    from pyql.kb.oxigraph_backend import OxigraphKB

    return OxigraphKB(path, profile, **options)  # type: ignore[arg-type]


set_opener(open_kb)
