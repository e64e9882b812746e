"""The registry of KB backends: every form of spec :meth:`KB.open <pyql.kb.base.KB.open>` takes.

Each form (``demo``, a file, ``oxigraph:DIR``, ``rdflib:FILE``,
``metaqa:PATH/kb.txt``, an endpoint URL, a handed-in graph or store) is one
:class:`KBBackend` entry, registered with :func:`kb_backend` on the function
that opens it (the entries are in :mod:`pyql.kb.opening`, which imports each
engine only when its form is opened). An entry names its form, a one-line
description and an example; everything that lists the forms is generated
from here: ``KB.open``'s docstring (:meth:`KBRegistry.document`), the
``--kb`` help of ``pyql run/ask/eval`` (:meth:`KBRegistry.help`), the hints
of messages (:meth:`KBRegistry.hint`, ``KB_HINT``) and the error for a spec
that names nothing.

Matching is explicit and in this order (:data:`MATCH_ORDER`), whatever the
order of registration:

1. ``object`` entries: a spec that is not a string (an ``rdflib.Graph``, a
   ``pyoxigraph.Store``), told apart by the entry's ``accepts`` test;
2. ``prefix`` entries: a string starting with the entry's prefix
   (``oxigraph:``, ``http://``, ...); prefixes may not overlap, so at most
   one matches;
3. ``name`` entries: a string equal to the entry's name (``demo``);
4. the one ``fallback`` entry: any other string (a file path).

So ``rdflib:demo`` is the ``rdflib:`` entry's (which reads ``demo`` as the
demo KB), and a file named ``demo`` is only reached as ``./demo``.

Example:
    >>> reg = KBRegistry()
    >>> @kb_backend("x:NAME", description="a test backend", example="x:one", prefix="x:", into=reg)
    ... def open_x(rest, profile, **options):
    ...     return rest
    >>> reg.open("x:one", "freebase")
    'one'
    >>> reg.hint()
    'x:NAME'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from pyql.errors import KBError

if TYPE_CHECKING:
    from pyql.kb.base import KB
    from pyql.builder.profiles import Profile

__all__ = ["MATCH_ORDER", "KBBackend", "KBRegistry", "kb_backend", "kb_backends"]

#: How a spec finds its entry, tried in this order.
MATCH_ORDER = ("object", "prefix", "name", "fallback")

#: The line of a docstring that :meth:`KBRegistry.document` replaces with the list of forms.
FORMS_MARK = "(the spec forms of pyql.kb.registry)"

Opener = Callable[..., Any]
"""``(argument, profile, **options) -> KB``: the argument is the spec without the entry's prefix."""


@dataclass(frozen=True)
class KBBackend:
    """One form of KB spec and the function that opens it.

    Attributes:
        form: the spec as documentation writes it (``oxigraph:DIR``).
        description: one line saying what it opens, without parentheses (help puts it in some).
        example: a spec of this form (``oxigraph:/data/fb-store``).
        opener: ``(argument, profile, **options) -> KB``.
        match: which pass finds it, one of :data:`MATCH_ORDER`.
        prefixes: for ``prefix`` entries, the prefixes of its specs.
        name: for ``name`` entries, the spec itself.
        accepts: for ``object`` entries, whether an object is one of its.
        keep_prefix: the opener is given the whole spec, prefix included (an URL).
        hint: how a message names the form (default: ``form``).
        options: the backend options only this form takes (``timeout``, ...).
        per_question: the spec names one KB per question (``subgraphs:FILE``):
            ``SPEC#ID`` is the KB of the question ``ID``, and an evaluation
            opens each question's own.
        profile_of: ``profile -> Profile``: the profile a KB of this form has
            when opened with ``profile``, when the form adds to it (a replay,
            which opens nothing, gives its KB the same); None: ``profile`` itself.
    """

    form: str
    description: str
    example: str
    opener: Opener
    match: str
    prefixes: tuple[str, ...] = ()
    name: str = ""
    accepts: Callable[[object], bool] | None = None
    keep_prefix: bool = False
    hint: str = ""
    options: tuple[str, ...] = ()
    per_question: bool = False
    profile_of: Callable[[Any], Any] | None = None

    @property
    def phrase(self) -> str:
        """How a message names this form.

        Example:
            >>> KBBackend("demo", "the demo KB", "demo", print, "name", name="demo").phrase
            'demo'
        """
        return self.hint or self.form

    def matches(self, spec: object) -> bool:
        """Whether ``spec`` is of this form (in this entry's pass).

        Example:
            >>> KBBackend("x:A", "x", "x:a", print, "prefix", prefixes=("x:",)).matches("x:b")
            True
        """
        if self.match == "object":
            return self.accepts is not None and self.accepts(spec)
        if not isinstance(spec, str):
            return False
        if self.match == "prefix":
            return spec.startswith(self.prefixes)
        if self.match == "name":
            return spec == self.name
        return True

    def argument(self, spec: Any) -> Any:
        """What the opener is given: the spec without its prefix (unless ``keep_prefix``).

        Example:
            >>> KBBackend("x:A", "x", "x:a", print, "prefix", prefixes=("x:",)).argument("x:b")
            'b'
        """
        if self.match != "prefix" or self.keep_prefix:
            return spec
        prefix = next(p for p in self.prefixes if spec.startswith(p))
        return spec[len(prefix) :]


class KBRegistry:
    """The KB backends, in registration order (the order of lists and hints).

    Example:
        >>> from pyql.kb import kb_backends
        >>> kb_backends.backend_for("oxigraph:/data/store").form
        'oxigraph:DIR'
        >>> kb_backends.backend_for("kb.ttl").form
        'FILE'
    """

    def __init__(self) -> None:
        self._entries: list[KBBackend] = []
        self._documented: list[tuple[Callable[..., Any], str]] = []

    def register(self, entry: KBBackend) -> KBBackend:
        """Add an entry; refuse one whose form, prefix or name another entry has.

        Raises:
            KBError: an unknown ``match``, a form or name already registered, a
                prefix overlapping another, or a second fallback.

        Example:
            >>> reg = KBRegistry()
            >>> _ = reg.register(KBBackend("x:A", "x", "x:a", print, "prefix", prefixes=("x:",)))
            >>> reg.register(KBBackend("xy:A", "x", "xy:a", print, "prefix", prefixes=("xy:", "x:b")))
            Traceback (most recent call last):
            ...
            pyql.errors.KBError: the KB spec prefix 'x:b' of xy:A overlaps 'x:' of x:A
        """
        if entry.match not in MATCH_ORDER:
            raise KBError(f"a KB backend matches by one of {', '.join(MATCH_ORDER)}, not {entry.match!r}")
        # The same opener registered again (its module run a second time) replaces its entry.
        self._entries = [e for e in self._entries if not _same_opener(e, entry)]
        for other in self._entries:
            self._check_clash(entry, other)
        self._entries.append(entry)
        for func, template in self._documented:
            func.__doc__ = self._fill(template)
        return entry

    @staticmethod
    def _check_clash(entry: KBBackend, other: KBBackend) -> None:
        if entry.form == other.form:
            raise KBError(f"the KB spec form {entry.form} is registered twice")
        if entry.match == other.match == "fallback":
            raise KBError(f"{entry.form} and {other.form} are both the fallback KB backend; one is allowed")
        if entry.match == other.match == "name" and entry.name == other.name:
            raise KBError(f"the KB spec name {entry.name!r} is registered twice")
        for mine in entry.prefixes:
            for theirs in other.prefixes:
                if mine.startswith(theirs) or theirs.startswith(mine):
                    raise KBError(f"the KB spec prefix {mine!r} of {entry.form} overlaps {theirs!r} of {other.form}")

    def entries(self) -> tuple[KBBackend, ...]:
        """Every entry, in registration order.

        Example:
            >>> from pyql.kb import kb_backends
            >>> [e.form for e in kb_backends.entries()][:3]
            ['demo', 'wikidata-demo', 'FILE']
        """
        return tuple(self._entries)

    def spec_forms(self) -> tuple[KBBackend, ...]:
        """The entries a spec *string* names (what ``--kb`` takes): all but the ``object`` ones.

        Example:
            >>> from pyql.kb import kb_backends
            >>> "rdflib:FILE" in [e.form for e in kb_backends.spec_forms()]
            True
        """
        return tuple(e for e in self._entries if e.match != "object")

    def backend_for(self, spec: object) -> KBBackend | None:
        """The entry that opens ``spec``, trying the passes of :data:`MATCH_ORDER` in turn.

        Example:
            >>> from pyql.kb import kb_backends
            >>> kb_backends.backend_for("rdflib:demo").form, kb_backends.backend_for(42)
            ('rdflib:FILE', None)
        """
        for match in MATCH_ORDER:
            for entry in self._entries:
                if entry.match == match and entry.matches(spec):
                    return entry
        return None

    def open(self, spec: object, profile: str | Profile = "freebase", **options: object) -> KB:
        """Open ``spec`` with its entry.

        Raises:
            KBError: a spec no entry takes (not a string, nor a handed-in
                object an entry accepts); the entry's own errors.

        Example:
            >>> from pyql.kb import kb_backends
            >>> kb_backends.open("demo").name
            'oxigraph'
        """
        if isinstance(spec, PurePath):
            spec = str(spec)
        entry = self.backend_for(spec)
        if entry is None:
            objects = " or ".join(e.phrase for e in self._entries if e.match == "object")
            also = f" (or {objects})" if objects else ""
            raise KBError(f"a KB spec is a string{also}, got {type(spec).__name__}")
        return entry.opener(entry.argument(spec), profile, **options)  # type: ignore[no-any-return]

    def hint(self) -> str:
        """The spec forms for a message: ``demo, a Turtle/N-Triples file, ... or an endpoint``.

        Example:
            >>> from pyql.kb import kb_backends
            >>> kb_backends.hint().startswith("demo, wikidata-demo, a Turtle/N-Triples file, oxigraph:DIR")
            True
        """
        phrases = [e.phrase for e in self.spec_forms()]
        return phrases[0] if len(phrases) < 2 else f"{', '.join(phrases[:-1])} or {phrases[-1]}"

    def help(self) -> str:
        """The spec forms with their descriptions, for a ``--kb`` help: ``demo (the bundled ...), FILE (...), ...``.

        Example:
            >>> from pyql.kb import kb_backends
            >>> kb_backends.help().startswith("demo (the bundled demo KB about tropical cyclones")
            True
        """
        parts = [f"{e.form} ({e.description})" for e in self.spec_forms()]
        return parts[0] if len(parts) < 2 else f"{', '.join(parts[:-1])} or {parts[-1]}"

    def describe(self, indent: str = "") -> str:
        """One line per entry, in matching order: ``* ``form``: description (e.g. ``example``)``.

        Example:
            >>> from pyql.kb import kb_backends
            >>> kb_backends.describe().splitlines()[0]
            '* ``rdflib.Graph``: an rdflib graph object or Dataset, wrapped as it is (e.g. ``rdflib.Graph().parse("kb.ttl")``)'
        """
        ordered = sorted(self._entries, key=lambda e: MATCH_ORDER.index(e.match))
        return "\n".join(f"{indent}* ``{e.form}``: {e.description} (e.g. ``{e.example}``)" for e in ordered)

    def document(self, func: Callable[..., Any]) -> None:
        """Write the forms into ``func``'s docstring, at the line :data:`FORMS_MARK` (again on each registration).

        Example:
            >>> def f():
            ...     '''Open.
            ...
            ...     (the spec forms of pyql.kb.registry)
            ...     '''
            >>> from pyql.kb import kb_backends
            >>> kb_backends.document(f)
            >>> "``oxigraph:DIR``" in f.__doc__
            True
        """
        template = getattr(func, "__kb_forms_template__", None) or func.__doc__ or ""
        if FORMS_MARK not in template:
            raise KBError(f"the docstring of {func.__qualname__} has no line {FORMS_MARK!r} for the KB spec forms")
        func.__kb_forms_template__ = template  # type: ignore[attr-defined]
        self._documented.append((func, template))
        func.__doc__ = self._fill(template)

    def _fill(self, template: str) -> str:
        lines = []
        for line in template.splitlines():
            if line.strip() == FORMS_MARK:
                lines.append(self.describe(indent=line[: len(line) - len(line.lstrip())]))
            else:
                lines.append(line)
        return "\n".join(lines)


def _same_opener(old: KBBackend, new: KBBackend) -> bool:
    names = [(getattr(e.opener, "__module__", None), getattr(e.opener, "__qualname__", None)) for e in (old, new)]
    return old.form == new.form and names[0] == names[1] and names[0][1] is not None


#: The registry :meth:`KB.open <pyql.kb.base.KB.open>` uses (filled by :mod:`pyql.kb.opening`).
kb_backends = KBRegistry()


def kb_backend(
    form: str,
    *,
    description: str,
    example: str,
    prefix: str | Sequence[str] = (),
    name: str = "",
    accepts: Callable[[object], bool] | None = None,
    fallback: bool = False,
    keep_prefix: bool = False,
    hint: str = "",
    options: Sequence[str] = (),
    per_question: bool = False,
    profile_of: Callable[[Any], Any] | None = None,
    into: KBRegistry | None = None,
) -> Callable[[Opener], Opener]:
    """Register the decorated function as the opener of a KB spec form.

    Give exactly one of ``prefix`` (one or several), ``name``, ``accepts``
    (an object test) or ``fallback=True``; that decides the matching pass
    (:data:`MATCH_ORDER`). ``per_question`` marks a form that names one KB
    per question (:attr:`KBBackend.per_question`); ``profile_of`` says the
    profile its KBs have (:attr:`KBBackend.profile_of`).

    Raises:
        KBError: not exactly one way of matching, or a clash with an entry
            already registered (:meth:`KBRegistry.register`).

    Example:
        >>> reg = KBRegistry()
        >>> @kb_backend("NAME", description="anything", example="kb", fallback=True, into=reg)
        ... def open_any(spec, profile, **options):
        ...     return spec.upper()
        >>> reg.open("kb"), reg.backend_for("kb").match
        ('KB', 'fallback')
    """
    prefixes = (prefix,) if isinstance(prefix, str) and prefix else tuple(prefix)
    ways = {"prefix": bool(prefixes), "name": bool(name), "object": accepts is not None, "fallback": fallback}
    chosen = [way for way, given in ways.items() if given]
    if len(chosen) != 1:
        raise KBError(f"the KB backend {form} needs exactly one of prefix=, name=, accepts= or fallback=True")

    def register(opener: Opener) -> Opener:
        (into if into is not None else kb_backends).register(
            KBBackend(form, description, example, opener, chosen[0], prefixes, name, accepts, keep_prefix, hint, tuple(options),
                      per_question, profile_of)
        )
        return opener

    return register
