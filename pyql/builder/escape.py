"""The one place where values become SPARQL text.

Every IRI, literal, language tag and variable name that reaches a query is
serialized by a function of this module, and each function either returns
text that cannot change the structure of the query or raises
:class:`~pyql.errors.TermError` saying what was wrong.

Two engine differences shape the literal escaping:

* rdflib expands ``\\uXXXX`` sequences on the *whole query text* before it
  parses (as the SPARQL spec says), Oxigraph only inside strings after
  lexing. A value holding a backslash followed by ``u`` would therefore mean
  two different things. We never emit such a sequence: after an escaped
  backslash, a following ``u``/``U`` is itself written as ``\\U00000075`` /
  ``\\U00000055``, which both engines read as the same letter. Every
  code-point escape we emit has the 8-digit ``\\U`` form, because rdflib
  reads ``\\u`` followed by 4 *or 8* hex digits.
* Control characters other than tab, newline, carriage return, backspace
  and form feed, and the Unicode line separators (U+0085, U+2028, U+2029),
  are written as ``\\UXXXXXXXX``: both engines expand them to the same
  character, none of them is structural, and no line-based tool splits a
  literal on them.

Example:
    >>> print(literal('say "hi"\\n', lang="en"))
    "say \\"hi\\"\\n"@en
    >>> iri("http://example.org/a b")
    Traceback (most recent call last):
    ...
    pyql.errors.TermError: IRI 'http://example.org/a b' contains a space, which is not allowed in an IRI; percent-encode it (%20) or use another IRI
"""

from __future__ import annotations

import re

from pyql.errors import TermError

__all__ = [
    "iri",
    "literal",
    "variable",
    "language_tag",
    "prefixed_name",
    "is_safe_local_name",
    "check_text",
    "INTEGER_RE",
    "DECIMAL_RE",
    "DOUBLE_RE",
]

XSD = "http://www.w3.org/2001/XMLSchema#"

# Characters excluded from IRIREF by the SPARQL 1.1 grammar, besides #x00-#x20.
_IRI_FORBIDDEN = set('<>"{}|^`\\')
_CHAR_NAMES = {
    " ": "a space",
    "<": "'<'",
    ">": "'>'",
    '"': "a double quote",
    "{": "'{'",
    "}": "'}'",
    "|": "'|'",
    "^": "'^'",
    "`": "a backtick",
    "\\": "a backslash",
}
_VARNAME_RE = re.compile(r"[A-Za-z0-9_]+\Z")
_LANG_RE = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*\Z")
_PREFIX_RE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)?\Z")
# A local name every engine we support reads the same way: no dots, no escapes.
_SAFE_LOCAL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

INTEGER_RE = re.compile(r"[+-]?[0-9]+\Z")
DECIMAL_RE = re.compile(r"[+-]?[0-9]*\.[0-9]+\Z")
DOUBLE_RE = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+\Z")

# Unicode line and paragraph separators: escaped so no line-based tool splits a literal.
_LINE_BREAKS = frozenset("\x85\u2028\u2029")
_ECHAR = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\b": "\\b", "\f": "\\f", '"': '\\"', "\\": "\\\\"}


def check_text(value: str, what: str) -> None:
    """Reject text no engine can carry: lone surrogates (not encodable as UTF-8).

    Args:
        value: the text to check.
        what: how to name it in the error message.

    Raises:
        TermError: when the text holds a lone surrogate code point.

    Example:
        >>> check_text("fine", "literal")
        >>> check_text("bad\\ud800", "literal")
        Traceback (most recent call last):
        ...
        pyql.errors.TermError: literal contains the lone surrogate U+D800, which cannot be encoded as UTF-8; remove it
    """
    if not isinstance(value, str):
        raise TermError(f"{what} must be a string, got {type(value).__name__}")
    for ch in value:
        if "\ud800" <= ch <= "\udfff":
            raise TermError(
                f"{what} contains the lone surrogate U+{ord(ch):04X}, which cannot be encoded as UTF-8; remove it"
            )


def iri(value: str) -> str:
    """Serialize an absolute IRI as ``<...>``.

    Args:
        value: the IRI, without angle brackets.

    Returns:
        The IRIREF text.

    Raises:
        TermError: for an empty IRI, a relative one (no scheme), or one with a
            character the SPARQL grammar forbids in an IRI.

    Example:
        >>> iri("http://rdf.freebase.com/ns/m.0crbvqz")
        '<http://rdf.freebase.com/ns/m.0crbvqz>'
    """
    check_text(value, "IRI")
    if not value:
        raise TermError("IRI is empty; give an absolute IRI such as http://example.org/x")
    for ch in value:
        if ch in _IRI_FORBIDDEN or ord(ch) <= 0x20:
            name = _CHAR_NAMES.get(ch, f"the control character U+{ord(ch):04X}")
            raise TermError(
                f"IRI {value!r} contains {name}, which is not allowed in an IRI; "
                "percent-encode it (%20) or use another IRI"
            )
    if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value):
        raise TermError(f"IRI {value!r} has no scheme; give an absolute IRI such as http://example.org/x")
    return f"<{value}>"


def _codepoint(ch: str) -> str:
    # Always the 8-digit form: rdflib's pre-parse expansion reads \\u followed
    # by 4 *or 8* hex digits (case-insensitively), so a 4-digit escape followed
    # by hex digits in the value would be misread.
    return f"\\U{ord(ch):08X}"


def _escape_string(value: str) -> str:
    out: list[str] = []
    previous_was_backslash = False
    for ch in value:
        if previous_was_backslash and ch in "uU":
            out.append(_codepoint(ch))
        elif ch in _ECHAR:
            out.append(_ECHAR[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or ch in _LINE_BREAKS:
            out.append(_codepoint(ch))
        else:
            out.append(ch)
        previous_was_backslash = ch == "\\"
    return '"' + "".join(out) + '"'


def language_tag(tag: str) -> str:
    """Validate a BCP47-style language tag and return it (without ``@``).

    Example:
        >>> language_tag("en-GB")
        'en-GB'
        >>> language_tag("en gb")
        Traceback (most recent call last):
        ...
        pyql.errors.TermError: language tag 'en gb' is not valid; use letters, digits and '-' as in 'en' or 'en-GB'
    """
    check_text(tag, "language tag")
    if not _LANG_RE.match(tag):
        raise TermError(f"language tag {tag!r} is not valid; use letters, digits and '-' as in 'en' or 'en-GB'")
    return tag


def literal(lexical: str, datatype: str | None = None, lang: str | None = None) -> str:
    """Serialize a literal.

    Numbers whose lexical form is already SPARQL's own numeric syntax are
    written bare (``10``, ``1.5``, ``1e3``); every other literal is quoted and
    escaped, with its language tag or datatype IRI.

    Args:
        lexical: the lexical form (the literal's text).
        datatype: the datatype IRI, or None for a plain string.
        lang: a language tag (then ``datatype`` must be None or rdf:langString).

    Example:
        >>> literal("10", XSD + "integer")
        '10'
        >>> literal("2005", XSD + "gYear")
        '"2005"^^<http://www.w3.org/2001/XMLSchema#gYear>'
        >>> literal("Rachel", lang="en")
        '"Rachel"@en'
    """
    check_text(lexical, "literal")
    if lang is not None:
        return _escape_string(lexical) + "@" + language_tag(lang)
    if datatype is None or datatype == XSD + "string":
        return _escape_string(lexical)
    if datatype == XSD + "integer" and INTEGER_RE.match(lexical):
        return lexical
    if datatype == XSD + "decimal" and DECIMAL_RE.match(lexical):
        return lexical
    if datatype == XSD + "double" and DOUBLE_RE.match(lexical):
        return lexical
    return _escape_string(lexical) + "^^" + iri(datatype)


def variable(name: str) -> str:
    """Serialize a variable name (without its ``?``) as ``?name``.

    Example:
        >>> variable("cyclone")
        '?cyclone'
        >>> variable("a b")
        Traceback (most recent call last):
        ...
        pyql.errors.TermError: variable name 'a b' is not valid; use letters, digits and '_' only, as in ?cyclone or ?x0
    """
    check_text(name, "variable name")
    if not _VARNAME_RE.match(name):
        raise TermError(
            f"variable name {name!r} is not valid; use letters, digits and '_' only, as in ?cyclone or ?x0"
        )
    return "?" + name


def is_safe_local_name(local: str) -> bool:
    """Whether ``prefix:local`` reads the same on rdflib, Oxigraph and Virtuoso.

    Oxigraph 0.5 rejects local names with dots (every Freebase relation), so
    those are written as full IRIs instead.

    Example:
        >>> is_safe_local_name("label"), is_safe_local_name("a.b.c")
        (True, False)
    """
    return bool(_SAFE_LOCAL_RE.match(local))


def prefixed_name(prefix: str, local: str) -> str:
    """Serialize ``prefix:local``, only for names every engine reads alike.

    Raises:
        TermError: when the prefix or the local name is not of the safe form.

    Example:
        >>> prefixed_name("rdfs", "label")
        'rdfs:label'
    """
    if not _PREFIX_RE.match(prefix):
        raise TermError(f"prefix {prefix!r} is not valid; use letters, digits, '_' and '-', starting with a letter")
    if not is_safe_local_name(local):
        raise TermError(f"local name {local!r} cannot be written as a prefixed name; use the full IRI")
    return f"{prefix}:{local}"
