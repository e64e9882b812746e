"""RDF terms as pyql sees them: variables, IRIs, blank nodes and literals.

Terms are small frozen values. Their SPARQL text comes only from
:mod:`pyql.builder.escape` (``term.sparql()``). Strings written by people or LLMs
become terms through :func:`parse_term`, which knows the profile's bare
names (Freebase ``m.0crbvqz`` and ``a.b.c`` relations, Wikidata ``Q42``),
CURIEs, IRIs, numbers, dates and quoted or typed literals.

Example:
    >>> from pyql.builder.profiles import FREEBASE
    >>> parse_term("m.0crbvqz", FREEBASE)
    IRI('http://rdf.freebase.com/ns/m.0crbvqz')
    >>> parse_term("1.0^^http://www.w3.org/2001/XMLSchema#float", FREEBASE).sparql()
    '"1.0"^^<http://www.w3.org/2001/XMLSchema#float>'
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Union

from pyql.builder import escape
from pyql.errors import TermError

if TYPE_CHECKING:
    from pyql.builder.profiles import Profile

__all__ = [
    "Term",
    "Variable",
    "IRI",
    "BlankNode",
    "Literal",
    "TermLike",
    "parse_term",
    "resolve_datatype",
    "canonical_literal",
    "XSD",
    "RDF_LANGSTRING",
    "DATE_TYPES",
    "NUMERIC_TYPES",
]

XSD = escape.XSD
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
NUMERIC_TYPES = frozenset(
    XSD + t
    for t in (
        "integer decimal float double int long short byte nonNegativeInteger positiveInteger "
        "negativeInteger nonPositiveInteger unsignedInt unsignedLong unsignedShort unsignedByte"
    ).split()
)
DATE_TYPES = frozenset(XSD + t for t in ("date", "dateTime", "gYear", "gYearMonth", "dateTimeStamp"))


class Term:
    """Base class of all terms.

    Example:
        >>> isinstance(Variable("x"), Term)
        True
    """

    __slots__ = ()

    def sparql(self) -> str:
        """The term's SPARQL text (see subclasses)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Variable(Term):
    """A query variable; ``name`` is written without ``?``.

    Example:
        >>> Variable("cyclone").sparql()
        '?cyclone'
        >>> str(Variable("cyclone"))
        '?cyclone'
    """

    name: str

    def __post_init__(self) -> None:
        escape.variable(self.name)

    def sparql(self) -> str:
        return escape.variable(self.name)

    def __str__(self) -> str:
        return "?" + self.name


@dataclass(frozen=True, slots=True)
class IRI(Term):
    """An absolute IRI (an entity, a relation, a type or a datatype).

    Example:
        >>> IRI("http://example.org/x").sparql()
        '<http://example.org/x>'
    """

    value: str

    def __post_init__(self) -> None:
        escape.iri(self.value)

    def sparql(self) -> str:
        return escape.iri(self.value)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"IRI({self.value!r})"


@dataclass(frozen=True, slots=True)
class BlankNode(Term):
    """A blank node from a result. It has no meaning outside that result,
    so it cannot be put in a query.

    Example:
        >>> BlankNode("b0").sparql()
        Traceback (most recent call last):
        ...
        pyql.errors.TermError: blank node _:b0 came from a result and cannot be used in a query; constrain it through a variable instead
    """

    id: str

    def sparql(self) -> str:
        raise TermError(
            f"blank node _:{self.id} came from a result and cannot be used in a query; "
            "constrain it through a variable instead"
        )

    def __str__(self) -> str:
        return "_:" + self.id


@dataclass(frozen=True, slots=True)
class Literal(Term):
    """A literal: lexical form plus a datatype IRI or a language tag.

    ``datatype`` is None for a plain string (xsd:string); a language-tagged
    string has ``lang`` set and ``datatype`` None.

    Example:
        >>> Literal("Rachel", lang="en").sparql()
        '"Rachel"@en'
        >>> Literal.of(10).sparql(), Literal.of(2.5).datatype
        ('10', 'http://www.w3.org/2001/XMLSchema#double')
        >>> Literal.of(_dt.date(2005, 8, 23)).sparql()
        '"2005-08-23"^^<http://www.w3.org/2001/XMLSchema#date>'
    """

    lexical: str
    datatype: str | None = None
    lang: str | None = None

    def __post_init__(self) -> None:
        escape.check_text(self.lexical, "literal")
        if self.datatype == XSD + "string":
            object.__setattr__(self, "datatype", None)
        if self.datatype == RDF_LANGSTRING:
            object.__setattr__(self, "datatype", None)
        if self.lang is not None:
            if self.datatype is not None:
                raise TermError(
                    f"literal {self.lexical!r} has both a language tag (@{self.lang}) and a datatype; give only one"
                )
            escape.language_tag(self.lang)
        elif self.datatype is not None:
            escape.iri(self.datatype)

    def sparql(self) -> str:
        return escape.literal(self.lexical, self.datatype, self.lang)

    def __str__(self) -> str:
        return self.lexical

    @property
    def is_numeric(self) -> bool:
        """Whether the datatype is one of XSD's numeric types."""
        return self.datatype in NUMERIC_TYPES

    @property
    def is_date(self) -> bool:
        """Whether the datatype is xsd:date, dateTime, gYear or gYearMonth."""
        return self.datatype in DATE_TYPES

    @classmethod
    def of(cls, value: object) -> Literal:
        """Make a literal from a Python value (str, bool, int, float, Decimal, date, datetime).

        Raises:
            TermError: for any other type.
        """
        if isinstance(value, bool):
            return cls("true" if value else "false", XSD + "boolean")
        if isinstance(value, int):
            return cls(str(value), XSD + "integer")
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return cls({"nan": "NaN", "inf": "INF", "-inf": "-INF"}[str(value)], XSD + "double")
            return cls(repr(value) if "e" in repr(value) else repr(value) + "e0", XSD + "double")
        if isinstance(value, Decimal):
            text = format(value, "f")
            return cls(text if "." in text else text + ".0", XSD + "decimal")
        if isinstance(value, _dt.datetime):
            return cls(value.isoformat(), XSD + "dateTime")
        if isinstance(value, _dt.date):
            return cls(value.isoformat(), XSD + "date")
        if isinstance(value, str):
            return cls(value)
        raise TermError(
            f"cannot make a literal from a {type(value).__name__}; "
            "use str, bool, int, float, Decimal, datetime.date or datetime.datetime"
        )

    def to_python(self) -> object:
        """The literal as a Python value where that is exact, else its lexical form.

        Example:
            >>> Literal("85", XSD + "integer").to_python()
            85
            >>> Literal("2005", XSD + "gYear").to_python()
            '2005'
        """
        dt = self.datatype
        try:
            if dt == XSD + "boolean":
                return self.lexical.strip() in ("true", "1")
            if dt in (XSD + "float", XSD + "double"):
                return float(self.lexical)
            if dt == XSD + "decimal":
                return Decimal(self.lexical)
            if dt in NUMERIC_TYPES:
                return int(self.lexical)
            if dt == XSD + "date":
                return _dt.date.fromisoformat(self.lexical)
            if dt == XSD + "dateTime":
                return _dt.datetime.fromisoformat(self.lexical)
        except ValueError:
            pass
        return self.lexical


def canonical_literal(lexical: str, datatype: str | None, lang: str | None = None) -> Literal:
    """A result literal with a canonical lexical form for numbers and booleans.

    Engines write the same value differently (Oxigraph ``"280"^^xsd:float``,
    rdflib ``"280.0"``, Virtuoso ``1`` for ``true``); backends pass results
    through this so every engine shows the same text.

    Example:
        >>> canonical_literal("280", XSD + "float").lexical
        '280.0'
        >>> canonical_literal("1", XSD + "boolean").lexical
        'true'
        >>> canonical_literal("62000000.00", XSD + "decimal").lexical
        '62000000.0'
    """
    if lang or datatype is None:
        return Literal(lexical, datatype, lang)
    text = lexical.strip()
    try:
        if datatype in (XSD + "float", XSD + "double"):
            value = float(text)
            if value == value and value not in (float("inf"), float("-inf")):
                text = repr(value)
        elif datatype == XSD + "decimal":
            number = Decimal(text)
            if number.is_finite():
                text = format(number.normalize(), "f")
                if "." not in text:
                    text += ".0"
        elif datatype in NUMERIC_TYPES:
            text = str(int(text))
        elif datatype == XSD + "boolean":
            text = "true" if text in ("1", "true") else "false" if text in ("0", "false") else text
    except (ValueError, ArithmeticError):
        text = lexical
    return Literal(text, datatype)


TermLike = Union[Term, str, int, float, Decimal, _dt.date, _dt.datetime, bool]

_QUOTED_RE = re.compile(
    r"""(?P<q>["'])(?P<body>.*)(?P=q)(?:@(?P<lang>[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)|\^\^(?P<dt><[^<>]*>|\S+))?\Z""",
    re.S,
)
_DATASET_TYPED_RE = re.compile(r"(?P<lex>[^\s^\"']+)\^\^(?P<dt><[^<>]*>|\S+)\Z")
_DATE_RE = re.compile(r"-?[0-9]{4}-[0-9]{2}-[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})?\Z")
_DATETIME_RE = re.compile(r"-?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})?\Z")
_CURIE_RE = re.compile(r"(?P<prefix>[A-Za-z][A-Za-z0-9_-]*)?:(?P<local>[^\s<>\"{}|^`\\]*)\Z")
_ABS_IRI_RE = re.compile(r"(https?|urn|ftp|mailto|file|tag):[^\s<>\"{}|^`\\]+\Z")

_FORMS = (
    "a variable (?x), an entity or relation name of the profile ({names}), a CURIE with a "
    "declared prefix ({prefixes}), a full IRI (<http://...>), a number (10, 1.5), a date "
    "(2005-08-23), true/false, or a quoted literal ('\"text\"', '\"text\"@en', '\"2005\"^^xsd:gYear')"
)


def resolve_datatype(text: str, profile: Profile) -> str:
    """A datatype as written (xsd:gYear, <http://...>, a full IRI) as its IRI.

    Example:
        >>> from pyql.builder.profiles import FREEBASE
        >>> resolve_datatype("xsd:float", FREEBASE)
        'http://www.w3.org/2001/XMLSchema#float'
    """
    if text.startswith("<") and text.endswith(">"):
        return text[1:-1]
    match = _CURIE_RE.match(text)
    if match and ":" in text and not text.startswith(("http:", "https:")):
        prefix = match.group("prefix") or ""
        if prefix.lower() == "xsd":
            return XSD + match.group("local")
        namespace = profile.prefixes.get(prefix)
        if namespace is None:
            raise TermError(
                f"unknown prefix {prefix!r} in datatype {text!r}; declared prefixes: {', '.join(profile.prefixes)}"
            )
        return namespace + match.group("local")
    if _ABS_IRI_RE.match(text):
        return text
    raise TermError(f"datatype {text!r} is not an IRI; write it as xsd:gYear or <http://...#gYear>")


def _typed(lexical: str, datatype: str) -> Literal:
    # Virtuoso writes xsd:datetime (lower case); the datatype IRI is xsd:dateTime.
    if datatype.lower() == (XSD + "datetime").lower():
        datatype = XSD + "dateTime"
    return Literal(lexical, datatype)


def parse_term(value: TermLike, profile: Profile, role: str = "any") -> Term:
    """Interpret a user or LLM value as a term.

    Args:
        value: a :class:`Term` (returned as is), a Python value (number,
            bool, date) or a string in one of the accepted forms.
        profile: the KB profile (its prefixes and bare-name rules).
        role: "entity", "relation" or "any": where the value stands, which
            decides e.g. whether Wikidata's ``P31`` means ``wdt:P31``.

    Raises:
        TermError: naming the value and listing the accepted forms.

    Example:
        >>> from pyql.builder.profiles import FREEBASE, WIKIDATA
        >>> parse_term("?x", FREEBASE)
        Variable(name='x')
        >>> parse_term("P31", WIKIDATA, role="relation")
        IRI('http://www.wikidata.org/prop/direct/P31')
        >>> parse_term('"2011"^^xsd:gYear', FREEBASE)
        Literal(lexical='2011', datatype='http://www.w3.org/2001/XMLSchema#gYear', lang=None)
        >>> parse_term("Hurricane Katrina", FREEBASE)
        Traceback (most recent call last):
        ...
        pyql.errors.TermError: cannot read 'Hurricane Katrina' as a term: expected a variable (?x), an entity or relation name of the profile (m.0crbvqz, g.11b6_z1, meteorology.tropical_cyclone.category), a CURIE with a declared prefix (ns:, rdf:, rdfs:, xsd:), a full IRI (<http://...>), a number (10, 1.5), a date (2005-08-23), true/false, or a quoted literal ('"text"', '"text"@en', '"2005"^^xsd:gYear')
    """
    if isinstance(value, Term):
        return value
    if not isinstance(value, str):
        return Literal.of(value)
    escape.check_text(value, "term")
    text = value.strip()
    if not text:
        raise TermError("empty value: expected " + _FORMS.format(names=profile.name_examples, prefixes=profile.prefix_list))
    if text[0] in "?$":
        return Variable(text[1:])
    if text.startswith("<") and text.endswith(">"):
        return IRI(text[1:-1])
    term = _literal_term(text, profile)
    if term is None:
        term = _name_term(text, profile, role)
    if term is not None:
        return term
    raise TermError(
        f"cannot read {text!r} as a term: {_other_profile(text, profile)}expected "
        + _FORMS.format(names=profile.name_examples, prefixes=profile.prefix_list)
    )


def _other_profile(text: str, profile: Profile) -> str:
    """The part of the message for a name of another profile: which one reads it, and the flag to pass."""
    from pyql.builder.profiles import fitting_profiles

    others = fitting_profiles(text, profile)
    if not others:
        return ""
    flags = " or ".join(f"--profile {name}" for name in others)
    return f"it is a name of the {' or '.join(others)} profile, not of the {profile.name} profile in use (give {flags}); "


def _literal_term(text: str, profile: Profile) -> Literal | None:
    """A quoted or typed literal, a number, a boolean or a date written as ``text``; None if it is none of them."""
    quoted = _QUOTED_RE.match(text)
    if quoted:
        body = quoted.group("body")
        if quoted.group("lang"):
            return Literal(body, lang=quoted.group("lang"))
        if quoted.group("dt"):
            return _typed(body, resolve_datatype(quoted.group("dt"), profile))
        return Literal(body)
    typed = _DATASET_TYPED_RE.match(text)
    if typed:
        return _typed(typed.group("lex"), resolve_datatype(typed.group("dt"), profile))
    if escape.INTEGER_RE.match(text):
        return Literal(text, XSD + "integer")
    if escape.DECIMAL_RE.match(text):
        return Literal(text, XSD + "decimal")
    if escape.DOUBLE_RE.match(text):
        return Literal(text, XSD + "double")
    if text in ("true", "false"):
        return Literal(text, XSD + "boolean")
    if _DATE_RE.match(text):
        return Literal(text, XSD + "date")
    if _DATETIME_RE.match(text):
        return Literal(text, XSD + "dateTime")
    return None


def _name_term(text: str, profile: Profile, role: str) -> IRI | None:
    """A name of the profile, a full IRI or a CURIE written as ``text``; None if it is none of them.

    Raises:
        TermError: a CURIE whose prefix is not declared.
    """
    named = profile.expand_name(text, role)
    if named is not None:
        return IRI(named)
    if _ABS_IRI_RE.match(text):
        return IRI(text)
    curie = _CURIE_RE.match(text)
    if curie:
        prefix = curie.group("prefix") or ""
        if prefix in profile.prefixes:
            return IRI(profile.prefixes[prefix] + curie.group("local"))
        if prefix.lower() == "xsd":
            return IRI(XSD + curie.group("local"))
        raise TermError(
            f"unknown prefix {prefix!r} in {text!r}; declared prefixes: {profile.prefix_list} "
            "(add one with profile.with_prefixes(...))"
        )
    return None
