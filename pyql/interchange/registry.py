"""The registry of conversion formats: who reads a format into a query, who writes one.

A conversion format is a way to write a query down: a legacy PyQL program,
action lines, SPARQL, and later S-expressions, AgentBench actions, MarkQA
programs. A format registers, in its own module of :mod:`pyql.interchange`,
a *reader* (text → a :class:`~pyql.builder.query.Query` chain, given the linked
entities, name → id, and a KB profile) with :func:`reader`, and/or a
*writer* (a query → text) with :func:`writer`. Any reader then converts to
any writer through the query (:func:`convert`).

A pair of formats that can be converted more faithfully without the query
(the source's own spelling kept, nothing normalized) registers a
:func:`direct` conversion; :func:`convert` uses it for that pair. (The
legacy programs' action lines are one: ``pyql actions`` prints the calls as
the program wrote them.)

The format modules are found, not listed: every module of the package
whose name does not start with ``_`` is imported the first time the
registry is asked (:func:`formats`), so a new format is one module (plus
its test) and nothing else.

Example:
    >>> readers(), writers()
    (('actions', 'agentbench', 'legacy', 'markqa', 'sexpr', 'sparql'), ('actions', 'sexpr', 'sparql'))
    >>> get_format("sparql").summary
    'SPARQL 1.1, each query with its own PREFIX lines'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, TypeVar

from pyql.autoload import import_submodules
from pyql.errors import ConversionError, UnknownFormatError
from pyql.builder.profiles import Profile, get_profile
from pyql.builder.query import Query

__all__ = [
    "Format",
    "Reader",
    "Writer",
    "Direct",
    "reader",
    "writer",
    "direct",
    "direct_pairs",
    "formats",
    "get_format",
    "readers",
    "writers",
    "reader_of",
    "writer_of",
    "convert",
]

#: A reader: the text, the linked entities (name → id) and the profile → a query.
Reader = Callable[[str, Mapping[str, str], Profile], Query]
#: A writer: a query → its text in the format.
Writer = Callable[[Query], str]
#: A direct conversion of one pair of formats: text, entities, profile → text.
Direct = Callable[[str, Mapping[str, str], Profile], str]

F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class Format:
    """One conversion format: its name, what it is, and its reader and/or writer.

    Attributes:
        name: the name ``pyql convert --from/--to`` takes.
        summary: one line saying what the text of the format is.
        read: the reader, or None when the format is written only.
        write: the writer, or None when the format is read only.
        module: the module that registered it.

    Example:
        >>> Format("x", "a format").read is None
        True
    """

    name: str
    summary: str
    read: Reader | None = None
    write: Writer | None = None
    module: str = ""


_FORMATS: dict[str, Format] = {}
_DIRECT: dict[tuple[str, str], Direct] = {}


def _register(name: str, summary: str, module: str, **side: Callable[..., object]) -> None:
    """Add a reader or a writer to the format ``name`` (created on its first registration)."""
    known = _FORMATS.get(name) or Format(name, summary, module=module)
    (role,) = side
    if getattr(known, role) is not None:
        raise ConversionError(f"the format {name!r} already has a {role}er (from {known.module})")
    _FORMATS[name] = replace(known, summary=known.summary or summary, **side)


def reader(name: str, summary: str) -> Callable[[F], F]:
    """Register the decorated function as the reader of the format ``name``.

    The function takes ``(text, entities, profile)`` and returns a
    :class:`~pyql.builder.query.Query`, or raises a :class:`~pyql.errors.PyQLError`
    saying where the text is wrong.

    Args:
        name: the format's name (``pyql convert --from NAME``).
        summary: one line saying what the text of the format is.

    Example:
        >>> @reader("test-empty", "nothing at all")
        ... def read_nothing(text, entities, profile):
        ...     return Query(profile)
        >>> get_format("test-empty").read is read_nothing
        True
        >>> _ = _FORMATS.pop("test-empty")
    """

    def register(fn: F) -> F:
        _register(name, summary, fn.__module__, read=fn)
        return fn

    return register


def writer(name: str, summary: str) -> Callable[[F], F]:
    """Register the decorated function as the writer of the format ``name``.

    The function takes a :class:`~pyql.builder.query.Query` and returns its text
    (as a file of the format holds it), or raises a
    :class:`~pyql.errors.ConversionError` when the format cannot say what
    the query says.

    Args:
        name: the format's name (``pyql convert --to NAME``).
        summary: one line saying what the text of the format is.

    Example:
        >>> @writer("test-count", "the number of steps")
        ... def write_count(query):
        ...     return f"{len(query)}\\n"
        >>> get_format("test-count").write(Query())
        '0\\n'
        >>> _ = _FORMATS.pop("test-count")
    """

    def register(fn: F) -> F:
        _register(name, summary, fn.__module__, write=fn)
        return fn

    return register


def direct(source: str, target: str) -> Callable[[F], F]:
    """Register the decorated function as the conversion of ``source`` to ``target`` without a query.

    For a pair where going through the query would lose the source's
    spelling. Both formats must still have their reader and writer
    (``--from``/``--to`` list those); the function takes ``(text,
    entities, profile)`` and returns the target's text.

    Example:
        >>> direct_pairs()
        (('legacy', 'actions'),)
    """

    def register(fn: F) -> F:
        if (source, target) in _DIRECT:
            raise ConversionError(f"{source} → {target} already has a direct conversion")
        _DIRECT[(source, target)] = fn  # type: ignore[assignment]
        return fn

    return register


def _load() -> None:
    """Import every format module of the package once (they register on import)."""
    import_submodules(__name__.rpartition(".")[0])


def formats() -> dict[str, Format]:
    """Every registered format, by name (sorted).

    Example:
        >>> sorted(formats())
        ['actions', 'agentbench', 'legacy', 'markqa', 'sexpr', 'sparql']
    """
    _load()
    return dict(sorted(_FORMATS.items()))


def direct_pairs() -> tuple[tuple[str, str], ...]:
    """The (source, target) pairs converted without a query (:func:`direct`), sorted.

    Example:
        >>> ("legacy", "actions") in direct_pairs()
        True
    """
    _load()
    return tuple(sorted(_DIRECT))


def readers() -> tuple[str, ...]:
    """The names of the formats that can be read (``--from``), sorted.

    Example:
        >>> "legacy" in readers()
        True
    """
    return tuple(name for name, fmt in formats().items() if fmt.read is not None)


def writers() -> tuple[str, ...]:
    """The names of the formats that can be written (``--to``), sorted.

    Example:
        >>> "sparql" in writers()
        True
    """
    return tuple(name for name, fmt in formats().items() if fmt.write is not None)


def get_format(name: str) -> Format:
    """The format called ``name``.

    Raises:
        UnknownFormatError: for a name no module registered, listing the known ones.

    Example:
        >>> get_format("sexp")
        Traceback (most recent call last):
        ...
        pyql.errors.UnknownFormatError: unknown conversion format 'sexp'; the formats are actions, agentbench, legacy, markqa, sexpr, sparql
    """
    known = formats()
    if name not in known:
        raise UnknownFormatError(f"unknown conversion format {name!r}; the formats are {', '.join(known)}")
    return known[name]


def reader_of(name: str) -> Reader:
    """The reader of the format ``name``.

    Raises:
        UnknownFormatError: no format of that name, or it is written only.

    Example:
        >>> reader_of("sparql").__name__
        'read_sparql'
        >>> reader_of("sparkle")
        Traceback (most recent call last):
        ...
        pyql.errors.UnknownFormatError: unknown conversion format 'sparkle'; the formats are actions, agentbench, legacy, markqa, sexpr, sparql
    """
    read = get_format(name).read
    if read is None:
        raise UnknownFormatError(f"the format {name!r} can be written but not read; readable formats: {', '.join(readers())}")
    return read


def writer_of(name: str) -> Writer:
    """The writer of the format ``name``.

    Raises:
        UnknownFormatError: no format of that name, or it is read only.

    Example:
        >>> "SELECT" in writer_of("sparql")(Query())
        True
    """
    write = get_format(name).write
    if write is None:
        raise UnknownFormatError(f"the format {name!r} can be read but not written; writable formats: {', '.join(writers())}")
    return write


def convert(
    text: str,
    source: str = "legacy",
    target: str = "sparql",
    entities: Mapping[str, str] | None = None,
    profile: str | Profile = "freebase",
) -> str:
    """Convert ``text`` from the format ``source`` to the format ``target``.

    The source's reader builds the query and the target's writer writes it,
    or the pair's :func:`direct` conversion runs when there is one.

    Args:
        text: the input, whole (one program, one set of action lines ...).
        source: a readable format (:func:`readers`).
        target: a writable format (:func:`writers`).
        entities: the linked entities, name → id, for formats that name
            entities (today's formats ignore them).
        profile: the KB profile (``freebase``, ``wikidata``, ``generic``).

    Returns:
        The text in the target format, as a file of it holds it (SPARQL and
        action lines end with a line break).

    Raises:
        UnknownFormatError: ``source`` cannot be read or ``target`` written.
        ConversionError: the input is nested too deeply to convert, or the
            target cannot say what the query says.
        PyQLError: the input does not parse or does not make a query (a
            :class:`~pyql.errors.ParseError`, ``ActionError``, ``QueryError``
            ... saying where).

    Example:
        >>> print(convert("add_fact(m.03_r3, location.country.languages_spoken, ?x)", "actions", "sparql"), end="")  # doctest: +ELLIPSIS
        PREFIX ns: <http://rdf.freebase.com/ns/>
        ...
        SELECT DISTINCT ?x WHERE {
          <http://rdf.freebase.com/ns/m.03_r3> <http://rdf.freebase.com/ns/location.country.languages_spoken> ?x .
        }
        >>> convert("a=PyQL()\\na.add_fact('m.03_r3', 'location.country.languages_spoken', 'x0')", "legacy", "actions")
        'add_fact(m.03_r3, location.country.languages_spoken, ?x0)\\n'
    """
    if not isinstance(text, str):
        raise TypeError(f"convert() needs the input as a str, not {type(text).__name__}")
    read, write = reader_of(source), writer_of(target)
    known = dict(entities or {})
    kb_profile = get_profile(profile)
    try:
        pair = _DIRECT.get((source, target))
        return pair(text, known, kb_profile) if pair else write(read(text, known, kb_profile))
    except RecursionError:
        raise ConversionError(f"the {source} input is nested too deeply to convert") from None
