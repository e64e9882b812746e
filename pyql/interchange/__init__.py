"""Conversion formats: a query read from one way of writing it and written in another.

One module per format (``legacy``, ``actions``, ``sparql``), each
registering its reader and/or writer in :mod:`pyql.interchange.registry`;
:func:`convert` converts one text, :func:`convert_jsonl` a JSON Lines batch
(``pyql convert --from FORMAT --to FORMAT [FILE|-] [--jsonl]``).

Example:
    >>> from pyql.interchange import convert
    >>> program = "a=PyQL()\\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')\\na.set_answer('x0')"
    >>> print(convert(program, source="legacy", target="sparql", profile="freebase"), end="")  # doctest: +ELLIPSIS
    PREFIX ns: <http://rdf.freebase.com/ns/>
    ...
    SELECT DISTINCT ?x0 WHERE {
      <http://rdf.freebase.com/ns/m.03_r3> <http://rdf.freebase.com/ns/location.country.languages_spoken> ?x0 .
    }
    >>> print(convert(program, source="legacy", target="actions"), end="")
    add_fact(m.03_r3, location.country.languages_spoken, ?x0)
    set_answer(?x0)
"""

from pyql.interchange.jsonl import convert_jsonl
from pyql.interchange.registry import (
    Format,
    convert,
    direct,
    formats,
    get_format,
    reader,
    readers,
    writer,
    writers,
)

__all__ = ["convert", "convert_jsonl", "Format", "formats", "get_format", "reader", "writer", "direct", "readers", "writers"]
