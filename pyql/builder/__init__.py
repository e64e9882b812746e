"""The query builder: terms, escaping, profiles, steps, expressions, the compiler and the immutable :class:`~pyql.builder.query.Query`.

Nothing here runs a query; :mod:`pyql.kb` does. ``from pyql import Query``
is the short way in.

Example:
    >>> from pyql.builder.query import Query
    >>> Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").set_answer("?c").answer
    Variable(name='c')
"""
