"""The demo KB and its environments, as the tests share them (fixtures in ``tests/conftest.py``).

``demo_kb`` is a fresh handle on the bundled Freebase demo for each test (its
query counters start at 0; opening it costs a few milliseconds), and
``demo_env(question, entities, **options)`` makes a
:class:`~pyql.environment.sparql.SparqlEnvironment` on a fresh handle, with
the same arguments the class takes after its KB.

Example:
    >>> env = make_demo_env(entities={"Tropical Storm Rachel": "m.0crbvqz"})
    >>> env.kb.stats.queries, sorted(env.memory.linked_ids)
    (0, ['m.0crbvqz'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyql.environment.sparql import SparqlEnvironment
from pyql.kb import KB

#: What the ``demo_env`` fixture is: ``demo_env(question=None, entities=None, **options)``.
DemoEnv = Callable[..., SparqlEnvironment]


def open_demo() -> KB:
    """A fresh handle on the bundled demo KB (counters at 0)."""
    return KB.open("demo")


def make_demo_env(*args: Any, **options: Any) -> SparqlEnvironment:
    """A SPARQL environment on a fresh demo KB handle; ``args``/``options`` as :class:`SparqlEnvironment` takes them after its KB."""
    return SparqlEnvironment(open_demo(), *args, **options)
