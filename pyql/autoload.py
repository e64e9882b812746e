"""Import every module of a package once: the registries whose entries register themselves on import.

The step kinds (:mod:`pyql.builder.kinds`), the conversion formats
(:mod:`pyql.interchange`), the agent's policies and strategies are found, not
listed: their registry calls :func:`import_submodules` before it answers, so
a new module of the package is an entry without being named anywhere.

One thread imports a package's modules while the others wait, so no thread
reads a registry that is still being filled (``pyql eval --concurrency N``);
a module that asks its own registry while it is being imported (the same
thread) gets what is registered so far instead of starting over.

Example:
    >>> import_submodules("pyql.interchange", skip=("registry",))
    >>> import sys; "pyql.interchange.sexpr" in sys.modules
    True
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Collection

__all__ = ["import_submodules"]

_DONE: set[str] = set()
_LOADING: set[str] = set()
_LOCK = threading.RLock()


def import_submodules(package: str, *, skip: Collection[str] = ()) -> None:
    """Import every module of ``package`` (by name order) once, but those named in ``skip`` and those starting with ``_``.

    Example:
        >>> import_submodules("pyql.builder.kinds"); import_submodules("pyql.builder.kinds")  # the second does nothing
    """
    if package in _DONE:
        return
    with _LOCK:  # the other threads wait here until the modules are imported
        if package in _DONE or package in _LOADING:  # _LOADING: this thread, asked again by a module it imports
            return
        _LOADING.add(package)
        try:
            found = importlib.import_module(package)
            for info in pkgutil.iter_modules(found.__path__):
                if not info.name.startswith("_") and info.name not in skip:
                    importlib.import_module(f"{package}.{info.name}")
        finally:
            _LOADING.discard(package)
        _DONE.add(package)
