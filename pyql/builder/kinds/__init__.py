"""The step kinds of the SPARQL builder: one module per kind, or per family of kinds that share their rules.

A kind's module holds everything of the kind (see :mod:`pyql.builder.kind`):
its frozen step dataclass(es), their fold and text rules (registered in
:mod:`pyql.builder.compiler`'s tables), the actions that add them as data
(name, parameters with their kinds and defaults, the docstring the LLM
reads, the group and place in the action order) and its hooks for the other
rooms (its S-expression mapping, the variables it makes for its own pattern,
what its variables hold, what a quantity observation says of them, the
choose mode's candidates), registered with
:func:`pyql.builder.kind.register_kind`. :func:`pyql.builder.kind.load_kinds`
imports every module here, so a new kind is a new module and nothing more
(and its :class:`~pyql.builder.query.Query` method, its tests).

This package imports nothing (the registry loads its modules), so that
:mod:`pyql.builder.kind` stays light.
"""
