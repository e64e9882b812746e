"""Opening a KB from a spec string: ``demo``, a file, ``oxigraph:PATH`` or an endpoint.

This module is the one place that knows every backend. It imports them
(lazily, so an unused engine's library is never loaded) and the backends
import :mod:`pyql.kb.base`; :mod:`pyql.kb.base` does not import this module.
:meth:`KB.open <pyql.kb.base.KB.open>` reaches :func:`open_kb` through the
opener this module installs with :func:`pyql.kb.base.set_opener` when it is
imported, which :mod:`pyql.kb` (the package, always initialised before any
of its modules) does.

Example:
    >>> from pyql.kb.base import KB
    >>> type(open_kb("demo")).__name__, type(KB.open("oxigraph:")).__name__
    ('RdflibKB', 'OxigraphKB')
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


def open_kb(spec: str, profile: str | Profile = "freebase", **options: object) -> KB:
    """Open a KB from a spec string (see :meth:`KB.open <pyql.kb.base.KB.open>`).

    Example:
        >>> open_kb("oxigraph:").name
        'oxigraph'
        >>> open_kb("nowhere.ttl")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: no such RDF file: nowhere.ttl (give a Turtle/N-Triples file, oxigraph:PATH, an http(s)://.../sparql endpoint, or demo)
    """
    if not isinstance(spec, (str, Path)):
        raise KBError(f"a KB spec is a string, got {type(spec).__name__}")
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
        return OxigraphKB(rest, profile, **options)  # type: ignore[arg-type]
    if text.startswith("metaqa:"):
        from pyql.kb.metaqa import open_metaqa

        return open_metaqa(text[len("metaqa:") :], profile)
    if text == "demo":
        text = str(demo_kb_path())
    path = Path(text)
    if not path.exists():
        raise KBError(
            f"no such RDF file: {text} (give a Turtle/N-Triples file, oxigraph:PATH, "
            "an http(s)://.../sparql endpoint, or demo)"
        )
    if path.is_dir():
        raise KBError(f"{text} is a directory; for an Oxigraph store directory write oxigraph:{text}")
    from pyql.kb.rdflib_backend import RdflibKB

    return RdflibKB(path, profile, **options)  # type: ignore[arg-type]


set_opener(open_kb)
