"""Knowledge bases behind one interface: pyoxigraph (the embedded default), rdflib, SPARQL endpoints.

Modules, one concept each, imported without a cycle:

* :mod:`pyql.kb.base`: :class:`KB`, the interface every backend implements
  (and :class:`KBStats`); it imports no backend and not this package.
* :mod:`pyql.kb.oxigraph_backend`, :mod:`pyql.kb.rdflib_backend`,
  :mod:`pyql.kb.endpoint_backend`: the backends (each imports
  :mod:`pyql.kb.base`); :mod:`pyql.kb.store` (on-disk Oxigraph stores,
  ``pyql kb load``) and :mod:`pyql.kb.progress` (load progress on stderr).
* :mod:`pyql.kb.registry`: the registry of KB backends (:data:`kb_backends`),
  one entry per spec form, in a documented matching order; every list of
  the forms (``KB.open``'s docstring, ``--kb`` help, hints) is made from it.
* :mod:`pyql.kb.opening`: the registry's entries, one decorated function per
  spec form, :func:`open_kb` (a spec → a backend) and :func:`demo_kb_path`;
  it imports the backends (lazily) and installs itself as the opener behind
  :meth:`KB.open` (:func:`pyql.kb.base.set_opener`).

This package re-exports the public names and imports :mod:`pyql.kb.opening`,
so ``from pyql.kb import KB; KB.open("demo")`` and ``pyql.kb.open_kb`` work
whichever module is imported first (a package is initialised before its
modules).

Example:
    >>> from pyql.kb import KB
    >>> kb = KB.open("demo")
    >>> kb.profile.name
    'freebase'
"""

from __future__ import annotations

from pyql.kb.base import KB, KBStats
from pyql.kb.opening import demo_kb_path, open_kb, wikidata_demo_kb_path
from pyql.kb.registry import kb_backends

__all__ = ["KB", "KBStats", "open_kb", "demo_kb_path", "wikidata_demo_kb_path", "kb_backends"]
