"""Gold SPARQL as the benchmarks ship it, read into a chain: WebQSP's, CWQ's and GrailQA's dialects.

The gold queries of WebQSP, CWQ and GrailQA were written for Virtuoso:
``OR`` for ``||``, ``xsd:datetime(...)`` casts, ``xsd:`` used without a
PREFIX line, comments after a triple, ``#MANUAL SPARQL`` headers. rdflib
rejects them, so this module has its own small reader of the subset they
use, and maps what it reads to the builder's steps:

====================================================================  =====================================
gold SPARQL                                                            step
====================================================================  =====================================
``s p o .`` (also ``;`` and ``,`` lists, ``VALUES ?v { :m.0abc }``)    ``add_fact`` (a one-entity VALUES is that entity)
``FILTER (?x != ns:m.0abc)``, ``FILTER (?a != ?b && ...)``             ``add_filter(?x, !=, ...)``, one each
``FILTER (!isLiteral(?x) OR lang(?x) = '' OR langMatches(...))``      nothing: the English-answer filter (see below)
``FILTER (?v < "1971"^^xsd:dateTime)`` (``xsd:datetime(?v)`` too)      ``add_filter(?v, <, 1971)``
``FILTER (str(?v) = "Firearms")``                                      ``?v`` is the literal ``"Firearms"``
the two time blocks ``FILTER(NOT EXISTS {?y from ?a} || EXISTS {...    ``add_time_constrain(?y, from, to, D, D')``
<= D}) FILTER(NOT EXISTS {?y to ?b} || EXISTS {... >= D'})``
``ORDER BY DESC(xsd:datetime(?v)) LIMIT 1`` (``ASC``, ``xsd:float``)   ``add_max(?v)`` / ``add_min(?v)``
``SELECT DISTINCT ?x``, ``SELECT (COUNT(DISTINCT ?x) AS ?n)``          ``set_answer(?x)``, ``add_count(?x, ?n)``
pyql's own ``SELECT ?n WHERE { { SELECT (COUNT(...) AS ?n) ... } }``   ``add_count(?x, ?n)``
``{ A } UNION { B }`` sharing one variable ``?x`` with the rest        ``add_union(?x, query(A), query(B))``
GrailQA's ``{ SELECT (MAX(?y2) AS ?x2) WHERE { same, ?y for ?x } }``   ``add_max(?x2, ties=True)`` (``MIN``: ``add_min``)
====================================================================  =====================================

The language filter is dropped as WebQSP's own PyQL programs drop it: on
Freebase an answer literal in another language is rare, and the chain's
SPARQL keeps such rows. GrailQA's ARGMAX is read only when its sub-select
is the query's own pattern (its ``?yN`` variables for the ``?xN`` ones):
then ``add_max(..., ties=True)`` keeps, as GrailQA does, every entity
whose value equals the largest (the same reading as the S-expression's
``ARGMAX``); WebQSP's ``ORDER BY ... LIMIT 1`` keeps one row, as written. What
has no step is refused with a :class:`~pyql.errors.ConversionError` naming
it: a ``UNION`` sharing no variable or several with the rest of the query,
``OPTIONAL``, a ``VALUES`` of several entities, other sub-selects,
``str(?v) = "..."``, date arithmetic, a time block without its twin. Syntax errors are a
:class:`~pyql.errors.ParseError` with the character. The reader recurses
only into parentheses and braces, at most :data:`MAX_DEPTH` deep.

Example:
    >>> gold = '''PREFIX ns: <http://rdf.freebase.com/ns/>
    ... SELECT DISTINCT ?x
    ... WHERE {
    ... FILTER (?x != ns:m.03_r3)
    ... FILTER (!isLiteral(?x) OR lang(?x) = '' OR langMatches(lang(?x), 'en'))
    ... ns:m.03_r3 ns:location.country.languages_spoken ?x .
    ... }'''
    >>> gold_to_query(gold).actions()
    ['add_fact(m.03_r3, location.country.languages_spoken, ?x)', 'add_filter(?x, !=, m.03_r3)', 'set_answer(?x)']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyql.errors import ConversionError, ParseError, PyQLError
from pyql.builder.profiles import Profile, get_profile
from pyql.builder.query import Query
from pyql.builder.terms import IRI, Literal, Term, Variable

__all__ = ["MAX_DEPTH", "gold_to_query"]

#: The deepest nesting of parentheses and braces read.
MAX_DEPTH = 64

XSD = "http://www.w3.org/2001/XMLSchema#"
_WELL_KNOWN = {
    "xsd": XSD,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
}
_TOKEN = re.compile(
    r"""(?P<space>\s+|\#[^\n]*)
    |(?P<iri><[^<>"{}|^`\\\s]*>)
    |(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<var>[?$][A-Za-z_0-9]+)
    |(?P<number>(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
    |(?P<pname>[A-Za-z][\w-]*(?:\.[\w-]+)*:(?:[\w-]+(?:\.[\w-]+)*)?|:(?:[\w-]+(?:\.[\w-]+)*)?)
    |(?P<word>[A-Za-z_][\w]*)
    |(?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
    |(?P<op>\|\||&&|!=|<=|>=|\^\^|[{}().;,=<>!*/+\-\[\]@])""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    position: int


def tokenize(text: str) -> list[Token]:
    """The tokens of a gold query (comments and spaces dropped).

    Raises:
        ParseError: a character no token starts with, naming it.

    Example:
        >>> [t.text for t in tokenize("?x ns:a.b.c 'y' . # note")]
        ['?x', 'ns:a.b.c', "'y'", '.']
    """
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ParseError(
                f"SPARQL, character {position + 1}: unexpected {text[position]!r}", text=text, position=position
            )
        if match.lastgroup != "space":
            tokens.append(Token(match.lastgroup or "", match.group(), position))
        position = match.end()
    return tokens


@dataclass
class Pattern:
    """A group graph pattern as read: triples, filters (expression trees), and the group's modifiers."""

    triples: list[tuple[Any, Any, Any]] = field(default_factory=list)
    filters: list[Any] = field(default_factory=list)
    unions: list[tuple[list[Pattern], Token]] = field(default_factory=list)
    #: GrailQA's ``{ SELECT (MAX(?y) AS ?x) WHERE { ... } }``: (MAX or MIN, its projection, its pattern, where it starts).
    extremes: list[tuple[str, tuple[Variable, Variable], Pattern, Token]] = field(default_factory=list)


class _Parser:
    """A recursive-descent reader of the gold dialect's subset (depth-capped)."""

    def __init__(self, text: str, profile: Profile) -> None:
        self.text, self.tokens, self.at = text, tokenize(text), 0
        self.prefixes = dict(_WELL_KNOWN)
        self.profile, self.depth = profile, 0

    # -- tokens ---------------------------------------------------------------
    def peek(self, offset: int = 0) -> Token | None:
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def fail(self, message: str, token: Token | None = None) -> ParseError:
        token = token or self.peek()
        position = token.position if token is not None else len(self.text)
        where = f"character {position + 1}" if token is not None else "the end"
        return ParseError(f"SPARQL, {where}: {message}", text=self.text, position=position)

    def refuse(self, message: str, token: Token | None = None) -> ConversionError:
        token = token or self.peek()
        where = f"character {token.position + 1}" if token is not None else "the end"
        return ConversionError(f"SPARQL, {where}: {message}")

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.fail("the query ends too early")
        self.at += 1
        return token

    def is_word(self, *words: str) -> bool:
        token = self.peek()
        return token is not None and token.kind in ("word", "pname") and token.text.upper() in words

    def expect(self, text: str) -> Token:
        token = self.next()
        if token.text.upper() != text.upper():
            raise self.fail(f"expected {text!r}, found {token.text!r}", token)
        return token

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} parentheses or braces")

    # -- terms ----------------------------------------------------------------
    def iri(self, token: Token) -> IRI:
        if token.kind == "iri":
            return IRI(token.text[1:-1])
        prefix, _, local = token.text.partition(":")
        if prefix not in self.prefixes:
            raise self.fail(f"undeclared prefix {prefix + ':'!r}", token)
        return IRI(self.prefixes[prefix] + local)

    def term(self) -> Term:
        token = self.next()
        if token.kind == "var":
            return Variable(token.text[1:])
        if token.kind in ("iri", "pname"):
            return self.iri(token)
        if token.kind == "string":
            return self.literal(token)
        sign = ""
        if token.text in ("-", "+") and (after := self.peek()) is not None and after.kind == "number" and after.position == token.position + 1:
            sign, token = token.text, self.next()  # a signed number, -5 (SPARQL's INTEGER_NEGATIVE and its kin)
        if token.kind == "number":
            kind = "integer" if token.text.isdigit() else "double" if "e" in token.text.lower() else "decimal"
            return Literal(sign + token.text, XSD + kind)
        if token.text == "[":
            raise self.refuse("a blank node '[]' has no step; name it with a variable", token)
        raise self.fail(f"expected a term, found {token.text!r}", token)

    def literal(self, token: Token) -> Literal:
        lexical = _unescaped(token.text[1:-1])
        after = self.peek()
        if after is not None and after.text == "^^":
            self.next()
            return Literal(lexical, self.iri(self.next()).value)
        if after is not None and after.kind == "lang":  # @en, @en-US, @de-1996
            self.next()
            return Literal(lexical, lang=after.text[1:])
        return Literal(lexical)

    # -- the query ------------------------------------------------------------
    def query(self) -> tuple[list[tuple[str, Any]], Pattern, dict[str, Any]]:
        """The projection, the WHERE pattern and the solution modifiers of the whole text."""
        while self.is_word("PREFIX", "BASE"):
            keyword = self.next().text.upper()
            name = self.next() if keyword == "PREFIX" else None
            iri = self.next()
            if iri.kind != "iri":
                raise self.fail(f"expected an IRI <...> after {keyword}, found {iri.text!r}", iri)
            if name is not None:
                self.prefixes[name.text.rstrip(":")] = iri.text[1:-1]
        if not self.is_word("SELECT"):
            token = self.peek()
            found = token.text if token is not None else "nothing"
            raise self.refuse(f"only SELECT queries are read, found {found!r}")
        projection, pattern, modifiers = self.select()
        if self.peek() is not None:
            raise self.fail(f"text after the end of the query: {self.peek().text!r}")  # type: ignore[union-attr]
        return projection, pattern, modifiers

    def select(self) -> tuple[list[tuple[str, Any]], Pattern, dict[str, Any]]:
        self.expect("SELECT")
        if self.is_word("DISTINCT", "REDUCED"):
            self.next()
        projection: list[tuple[str, Any]] = []
        while not self.is_word("WHERE") and (token := self.peek()) is not None and token.text != "{":
            projection.append(self.projected())
        if not projection:
            raise self.fail("SELECT names no variable")
        if self.is_word("WHERE"):
            self.next()
        self.expect("{")
        if self.is_word("SELECT"):  # GrailQA wraps its query: SELECT (?x0 AS ?value) WHERE { SELECT DISTINCT ?x0 ... }
            inner = self.select()
            self.expect("}")
            return inner[0], inner[1], {**self.modifiers(), **inner[2]}
        counted = self.wrapped_count(projection)
        if counted is not None:
            return counted
        pattern = self.group_body()
        return projection, pattern, self.modifiers()

    def wrapped_count(self, projection: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], Pattern, dict[str, Any]] | None:
        """pyql's own COUNT, ``SELECT DISTINCT ?n WHERE { { SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ... } } }``: that
        COUNT; None (nothing read) for any other group, read as a group (a GrailQA extreme, or refused)."""
        token, then = self.peek(), self.peek(1)
        if token is None or token.text != "{" or then is None or then.text.upper() != "SELECT":
            return None
        start, depth = self.at, self.depth
        self.next()
        self.enter()
        inner, pattern, modifiers = self.select()
        close, outer = self.peek(), self.peek(1)
        if (len(inner) == 1 and inner[0][0] == "count" and not modifiers and projection == [("var", inner[0][1][1])]
                and close is not None and close.text == "}" and outer is not None and outer.text == "}"):
            self.at, self.depth = self.at + 2, depth
            return inner, pattern, self.modifiers()
        self.at, self.depth = start, depth
        return None

    def projected(self) -> tuple[str, Any]:
        token = self.next()
        if token.kind == "var":
            return ("var", Variable(token.text[1:]))
        if token.text == "*":
            raise self.refuse("SELECT * has no answer variable; name the answer", token)
        if token.text != "(":
            raise self.fail(f"expected a variable or (expression AS ?var) after SELECT, found {token.text!r}", token)
        expression = self.expression()
        self.expect("AS")
        alias = self.next()
        self.expect(")")
        if isinstance(expression, Variable):
            return ("var", expression)
        if isinstance(expression, tuple) and expression[0] == "call" and expression[1].upper() in ("COUNT", "MAX", "MIN"):
            return (expression[1].lower(), (expression[2][0], Variable(alias.text[1:])))
        raise self.refuse("a projected expression other than ?var or COUNT(...) has no step", token)

    def modifiers(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.is_word("ORDER", "LIMIT", "OFFSET", "GROUP", "HAVING"):
            word = self.next()
            keyword = word.text.upper()
            if keyword in ("GROUP", "HAVING"):
                raise self.refuse(f"{keyword} has no step", word)
            if keyword == "ORDER":
                self.expect("BY")
                out["order"] = self.order_conditions()
            else:
                number = self.next()
                if number.kind != "number" or not number.text.isdigit():
                    raise self.fail(f"{keyword} takes a whole number, found {number.text!r}", number)
                out[keyword.lower()] = int(number.text)
        return out

    def order_conditions(self) -> list[tuple[bool, Any]]:
        conditions = []
        while (token := self.peek()) is not None and not self.is_word("LIMIT", "OFFSET") and token.text != "}":
            descending = False
            if self.is_word("DESC", "ASC"):
                descending = self.next().text.upper() == "DESC"
                self.expect("(")
                conditions.append((descending, self.expression()))
                self.expect(")")
            else:
                conditions.append((False, self.primary()))
        return conditions

    # -- patterns -------------------------------------------------------------
    def group_body(self) -> Pattern:
        """The elements of a ``{ ... }`` group up to its ``}`` (consumed)."""
        self.enter()
        pattern = Pattern()
        while True:
            token = self.peek()
            if token is None:
                raise self.fail("a '{' is never closed")
            if token.text == "}":
                self.next()
                self.depth -= 1
                return pattern
            self.element(pattern, token)

    def element(self, pattern: Pattern, token: Token) -> None:
        if token.text == "{" and self.peek(1) is not None and self.peek(1).text.upper() == "SELECT":  # type: ignore[union-attr]
            self.next()
            self.enter()
            projection, inner_pattern, modifiers = self.select()
            self.expect("}")
            self.depth -= 1
            if len(projection) != 1 or projection[0][0] not in ("max", "min") or modifiers:
                raise self.refuse("a sub-select other than GrailQA's (MAX(?v) AS ?x) or (MIN(?v) AS ?x) has no step", token)
            pattern.extremes.append((projection[0][0], projection[0][1], inner_pattern, token))
        elif token.text == "{":
            self.next()
            inner = self.group_body()
            if self.is_word("UNION"):
                branches = [inner]
                while self.is_word("UNION"):
                    self.next()
                    self.expect("{")
                    branches.append(self.group_body())
                pattern.unions.append((branches, token))
                return
            pattern.triples += inner.triples
            pattern.filters += inner.filters
            pattern.unions += inner.unions
            pattern.extremes += inner.extremes
        elif self.is_word("FILTER"):
            self.next()
            pattern.filters.append((self.constraint(), token))
        elif self.is_word("VALUES"):
            self.values(pattern)
        elif self.is_word("SELECT"):
            raise self.refuse("a sub-select has no step (GrailQA's ARGMAX: convert its S-expression instead)", token)
        elif self.is_word("OPTIONAL", "MINUS", "BIND", "SERVICE", "GRAPH", "UNION"):
            raise self.refuse(f"{token.text.upper()} has no step", token)
        elif token.text == ".":
            self.next()
        else:
            self.triples(pattern)

    def values(self, pattern: Pattern) -> None:
        token = self.next()
        var = self.term()
        self.expect("{")
        terms = []
        while (peeked := self.peek()) is not None and peeked.text != "}":
            terms.append(self.term())
        self.expect("}")
        if not isinstance(var, Variable) or len(terms) != 1:
            raise self.refuse("VALUES with several values has no step (one value is read as that entity)", token)
        pattern.triples.append(("values", var, terms[0]))

    def triples(self, pattern: Pattern) -> None:
        subject = self.term()
        while True:
            predicate = self.term()
            while True:
                pattern.triples.append((subject, predicate, self.term()))
                if (token := self.peek()) is None or token.text != ",":
                    break
                self.next()
            token = self.peek()
            if token is not None and token.text == ";":
                self.next()
                after = self.peek()
                if after is not None and after.text in (".", "}"):
                    break
                continue
            break
        token = self.peek()
        if token is not None and token.text == ".":
            self.next()

    # -- expressions ----------------------------------------------------------
    def constraint(self) -> Any:
        if self.is_word("NOT", "EXISTS"):
            return self.primary()
        token = self.peek()
        if token is not None and token.kind in ("word", "pname", "iri") and self.peek(1) is not None and self.peek(1).text == "(":  # type: ignore[union-attr]
            return self.primary()
        self.expect("(")
        self.enter()
        expression = self.expression()
        self.expect(")")
        self.depth -= 1
        return expression

    def expression(self) -> Any:
        parts = [self.conjunction()]
        while (token := self.peek()) is not None and (token.text == "||" or self.is_word("OR")):
            self.next()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def conjunction(self) -> Any:
        parts = [self.relation()]
        while (token := self.peek()) is not None and (token.text == "&&" or self.is_word("AND")):
            self.next()
            parts.append(self.relation())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def relation(self) -> Any:
        left = self.additive()
        token = self.peek()
        if token is not None and token.text in ("=", "!=", "<", ">", "<=", ">="):
            self.next()
            return ("cmp", token.text, left, self.additive())
        return left

    def additive(self) -> Any:
        left = self.unary()
        while (token := self.peek()) is not None and token.text in ("+", "-", "*", "/"):
            self.next()
            left = ("arith", token.text, left, self.unary())
        return left

    def unary(self) -> Any:
        token = self.peek()
        if token is not None and token.text == "!":
            self.next()
            return ("not", self.unary())
        return self.primary()

    def primary(self) -> Any:
        token = self.peek()
        if token is None:
            raise self.fail("an expression is missing")
        if token.text == "(":
            self.next()
            self.enter()
            inner = self.expression()
            self.expect(")")
            self.depth -= 1
            return inner
        if self.is_word("NOT") and self.peek(1) is not None and self.peek(1).text.upper() == "EXISTS":  # type: ignore[union-attr]
            self.next()
            self.next()
            self.expect("{")
            return ("notexists", self.group_body())
        if self.is_word("EXISTS"):
            self.next()
            self.expect("{")
            return ("exists", self.group_body())
        if token.kind in ("word", "pname", "iri") and self.peek(1) is not None and self.peek(1).text == "(":  # type: ignore[union-attr]
            return self.call()
        return self.term()

    def call(self) -> Any:
        name = self.next().text
        self.expect("(")
        self.enter()
        args = []
        if self.is_word("DISTINCT"):
            self.next()
        while (token := self.peek()) is not None and token.text != ")":
            args.append(self.expression())
            if (token := self.peek()) is not None and token.text == ",":
                self.next()
        self.expect(")")
        self.depth -= 1
        return ("call", name, args)


# -- the chain -------------------------------------------------------------------

_CASTS = {"datetime", "date", "float", "double", "decimal", "integer", "int", "gyear"}
_DATE_TYPES = {XSD + "dateTime", XSD + "date", XSD + "gYear", XSD + "gYearMonth"}


def _cast_var(node: Any) -> Variable | None:
    """``?v`` or ``xsd:datetime(?v)`` (any XSD cast of one variable) → ``?v``."""
    if isinstance(node, Variable):
        return node
    if isinstance(node, tuple) and node[0] == "call" and len(node[2]) == 1 and isinstance(node[2][0], Variable):
        name = node[1].rsplit(":", 1)[-1].rsplit("#", 1)[-1].lower()
        return node[2][0] if name in _CASTS else None
    return None


def _value(term: Literal) -> Literal:
    """A gold literal as the builder compares it: a dateTime of a year (``"1971"^^xsd:dateTime``) is that year."""
    if term.datatype in _DATE_TYPES:
        lexical = term.lexical
        if re.fullmatch(r"-?\d{4}", lexical):
            return Literal(lexical, XSD + "gYear")
        if re.fullmatch(r"-?\d{4}-\d\d", lexical):
            return Literal(lexical, XSD + "gYearMonth")
        if re.fullmatch(r"-?\d{4}-\d\d-\d\d", lexical):
            return Literal(lexical, XSD + "date")
    return term


def _is_language_filter(node: Any) -> bool:
    """WebQSP's ``!isLiteral(?x) OR lang(?x) = '' OR langMatches(lang(?x), 'en')``."""
    if not (isinstance(node, tuple) and node[0] == "or"):
        return False
    names = set()
    for part in node[1]:
        inner = part[1] if isinstance(part, tuple) and part[0] == "not" else part
        if isinstance(inner, tuple) and inner[0] == "cmp":
            inner = inner[2]
        if isinstance(inner, tuple) and inner[0] == "call":
            names.add(inner[1].lower())
    return names == {"isliteral", "lang", "langmatches"}


def _time_half(node: Any) -> tuple[Variable, IRI, str, Literal] | None:
    """``NOT EXISTS {?y r ?a} || EXISTS {?y r ?b . FILTER(cast(?b) op D)}`` → (?y, r, op, D)."""
    if not (isinstance(node, tuple) and node[0] == "or" and len(node[1]) == 2):
        return None
    missing, present = node[1]
    if not (isinstance(missing, tuple) and missing[0] == "notexists" and isinstance(present, tuple) and present[0] == "exists"):
        return None
    gone, there = missing[1], present[1]
    if len(gone.triples) != 1 or len(there.triples) != 1 or gone.filters or len(there.filters) != 1:
        return None
    (y, relation, _), (y2, relation2, held) = gone.triples[0], there.triples[0]
    test = there.filters[0][0]
    if not (isinstance(y, Variable) and y == y2 and relation == relation2 and isinstance(relation, IRI)):
        return None
    if not (isinstance(test, tuple) and test[0] == "cmp" and _cast_var(test[2]) == held and isinstance(test[3], Literal)):
        return None
    return y, relation, test[1], _value(test[3])


def _string_pin(node: Any) -> tuple[Variable, Literal] | None:
    """``str(?v) = "text"`` → (?v, "text"): the variable is that text (as WebQSP's own programs read it)."""
    if isinstance(node, tuple) and node[0] == "cmp" and node[1] == "=" and isinstance(node[3], Literal):
        left = node[2]
        if isinstance(left, tuple) and left[0] == "call" and left[1].lower() == "str" and len(left[2]) == 1:
            if isinstance(left[2][0], Variable):
                return left[2][0], Literal(node[3].lexical)
    return None


class _Chain:
    """Builds the chain of a parsed gold query, refusing what has no step."""

    def __init__(self, parser: _Parser, profile: Profile) -> None:
        self.parser, self.query = parser, Query(profile)
        self.values: dict[Variable, Term] = {}

    def sub(self, term: Any) -> Any:
        return self.values.get(term, term) if isinstance(term, Variable) else term

    def build(self) -> Query:
        projection, pattern, modifiers = self.parser.query()
        around = {v for _, v in projection if isinstance(v, Variable)} | _variables(modifiers.get("order", []))
        self.pattern_steps(pattern, around)
        self.order(modifiers)
        return self.answer(projection)

    def pattern_steps(self, pattern: Pattern, around: set[Variable]) -> None:
        """The steps of a group: facts, unions, filters, time constraints (``around``: the variables used outside it)."""
        for triple in pattern.triples:
            if triple[0] == "values":
                self.values[triple[1]] = triple[2]
        for node, _ in pattern.filters:
            pinned = _string_pin(node)
            if pinned is not None:
                self.values[pinned[0]] = pinned[1]
        for triple in pattern.triples:
            if triple[0] != "values":
                self.query = self.query.add_fact(*(self.sub(t) for t in triple))
        outside = around | _variables([t for t in pattern.triples if t[0] != "values"]) | _variables(pattern.filters)
        for number, (branches, token) in enumerate(pattern.unions):
            others = [b for i, (group, _) in enumerate(pattern.unions) if i != number for b in group]
            self.union(branches, token, outside | _variables(others))
        halves: dict[Variable, dict[str, tuple[IRI, Literal]]] = {}
        for node, token in pattern.filters:
            self.constraint(node, token, halves)
        self.time_constraints(halves)
        for kind, (inner, alias), group, token in pattern.extremes:
            self.extreme(kind, inner, alias, group, pattern, token)

    def extreme(self, kind: str, inner: Any, alias: Variable, group: Pattern, pattern: Pattern, token: Token) -> None:
        """GrailQA's ARGMAX: ``?x`` joined with the MAX of the same pattern (its ``?y`` variables renamed ``?x``) → ``add_max(?x)``."""
        renamed = {_renamed(t) for t in group.triples}
        if not isinstance(inner, Variable) or _renamed((inner,))[0] != alias or renamed != set(pattern.triples):
            raise self.parser.refuse(
                f"this {kind.upper()} sub-select is not GrailQA's ARGMAX/ARGMIN (the query's own pattern, its ?y "
                "variables for the ?x ones); it has no step",
                token,
            )
        self.query = (self.query.add_max if kind == "max" else self.query.add_min)(alias, ties=True)  # all tied entities

    def union(self, branches: list[Pattern], token: Token, outside: set[Variable]) -> None:
        """``{ A } UNION { B } ...`` sharing one variable with the rest: ``add_union`` of the branches' chains."""
        shared = sorted((_variables(branches) & outside) - set(self.values), key=str)
        if len(shared) != 1:
            names = ", ".join(str(v) for v in shared) or "none"
            raise self.parser.refuse(
                f"a UNION sharing {len(shared)} variables with the rest of the query ({names}) has no step; "
                "add_union joins its branches on one variable",
                token,
            )
        chains = []
        for branch in branches:
            chain = _Chain(self.parser, self.query.profile)
            chain.values = dict(self.values)
            chain.pattern_steps(branch, set(shared))
            chains.append(chain.query)
        self.query = self.query.add_union(shared[0], *chains)

    def constraint(self, node: Any, token: Token, halves: dict[Variable, dict[str, tuple[IRI, Literal]]]) -> None:
        if _is_language_filter(node) or _string_pin(node) is not None:
            return
        half = _time_half(node)
        if half is not None:
            y, relation, op, when = half
            side = "start" if op in ("<", "<=") else "end"
            halves.setdefault(y, {})[side] = (relation, when)
            return
        conjuncts = node[1] if isinstance(node, tuple) and node[0] == "and" else [node]
        for part in conjuncts:
            self.comparison(part, token)

    def comparison(self, node: Any, token: Token) -> None:
        if isinstance(node, tuple) and node[0] == "cmp":
            _, op, left, right = node
            var = _cast_var(left)
            if var is not None and op == "!=" and isinstance(self.sub(right), (IRI, Variable)):
                self.different(self.sub(var), self.sub(right), token)
                return
            if var is not None and isinstance(right, Literal) and isinstance(self.sub(var), Variable):
                self.query = self.query.add_filter(var, op, _value(right))
                return
        raise self.parser.refuse(f"this FILTER has no step ({_describe(node)})", token)

    def different(self, left: Term, right: Term, token: Token) -> None:
        """``left != right`` once VALUES put entities in: two entities are a test decided now, a variable goes left."""
        if not isinstance(left, Variable):
            left, right = right, left
        if isinstance(left, Variable):
            self.query = self.query.add_filter(left, "!=", right)
        elif left == right:
            raise self.parser.refuse(f"FILTER ({left} != {right}) is false for every row: the query has no answer", token)

    def time_constraints(self, halves: dict[Variable, dict[str, tuple[IRI, Literal]]]) -> None:
        """One ``add_time_constrain`` per variable's two time blocks; named by its end relation (``by_end``, as
        WebQSP's S-expressions name it) when the end's block comes first."""
        for var, sides in halves.items():
            if set(sides) != {"start", "end"}:
                raise self.parser.refuse(f"a time block on {var} without its twin (start and end) has no step")
            (start, before), (end, after) = sides["start"], sides["end"]
            by_end = next(iter(sides)) == "end"
            self.query = self.query.add_time_constrain(var, start, end, before, after, by_end=by_end)

    def order(self, modifiers: dict[str, Any]) -> None:
        conditions = modifiers.get("order")
        if not conditions:
            if "limit" in modifiers or "offset" in modifiers:
                raise self.parser.refuse("LIMIT or OFFSET without ORDER BY has no step")
            return
        if len(conditions) != 1 or _cast_var(conditions[0][1]) is None:
            raise self.parser.refuse("ORDER BY of several keys or of an expression has no step")
        descending, key = conditions[0]
        step = self.query.add_max if descending else self.query.add_min
        self.query = step(_cast_var(key), offset=modifiers.get("offset", 0), limit=modifiers.get("limit"))

    def answer(self, projection: list[tuple[str, Any]]) -> Query:
        if len(projection) != 1:
            raise self.parser.refuse(f"{len(projection)} projected variables: a chain answers one")
        kind, value = projection[0]
        if kind == "count":
            counted, alias = value
            if _cast_var(counted) is None:
                raise self.parser.refuse("COUNT of an expression has no step")
            return self.query.add_count(_cast_var(counted), alias)
        if kind != "var":
            raise self.parser.refuse(f"SELECT ({kind.upper()}(...) AS ?v) outside a sub-select has no step")
        return self.query.set_answer(value)


#: SPARQL's string escapes (ECHAR and UCHAR); any other backslash keeps the character after it, as before.
_STRING_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f"}


def _unescaped(body: str) -> str:
    r"""The text of a quoted string: SPARQL's escapes read (``\n``, ``\"``, ``\u00e9``, ``\U0001F600`` ...).

    Example:
        >>> _unescaped(r'say \"hi\"\n\u00e9 \U00000041') == 'say "hi"' + chr(10) + 'é A'
        True
    """

    def one(match: re.Match[str]) -> str:
        short, long_, char = match.groups()
        if short or long_:
            code = int(short or long_, 16)
            return chr(code) if code <= 0x10FFFF else match.group(0)
        return _ECHAR.get(char, char)

    return _STRING_ESCAPE.sub(one, body)


def _renamed(triple: tuple[Any, ...]) -> tuple[Any, ...]:
    """A triple of GrailQA's sub-select with its ``?yN`` variables written ``?xN``."""
    return tuple(Variable("x" + t.name[1:]) if isinstance(t, Variable) and t.name[:1] == "y" else t for t in triple)


def _variables(node: Any) -> set[Variable]:
    """Every variable in a parsed piece: triples, expression trees, patterns (their unions too), lists of them."""
    out: set[Variable] = set()
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, Variable):
            out.add(item)
        elif isinstance(item, Pattern):
            pending += [item.triples, item.filters, [group for group, _ in item.unions]]
        elif isinstance(item, (list, tuple)):
            pending += [part for part in item if not isinstance(part, (str, Token))]
    return out


def _text(node: Any) -> str:
    """An expression tree written back as SPARQL-like text."""
    if isinstance(node, Variable):
        return str(node)
    if isinstance(node, IRI):
        return node.value.rsplit("/", 1)[-1] if node.value.startswith("http://rdf.freebase.com/ns/") else f"<{node.value}>"
    if isinstance(node, Literal):
        return node.sparql()
    head = node[0]
    if head in ("or", "and"):
        return "(" + (" || " if head == "or" else " && ").join(_text(part) for part in node[1]) + ")"
    if head in ("cmp", "arith"):
        return f"{_text(node[2])} {node[1]} {_text(node[3])}"
    if head == "not":
        return "!" + _text(node[1])
    if head == "call":
        return f"{node[1]}(" + ", ".join(_text(arg) for arg in node[2]) + ")"
    return "NOT EXISTS {...}" if head == "notexists" else "EXISTS {...}"


def _describe(node: Any) -> str:
    """A short text of an expression tree, for messages."""
    text = _text(node)
    return text if len(text) <= 120 else text[:117] + "..."


def gold_to_query(text: str, profile: str | Profile = "freebase") -> Query:
    """The chain of a benchmark's gold SPARQL (WebQSP, CWQ, GrailQA dialects; see the module's table).

    Raises:
        ParseError: the text does not parse (naming the character).
        ConversionError: a part that has no step (OPTIONAL, a UNION on several variables, ...), naming it.

    Example:
        >>> gold_to_query("SELECT DISTINCT ?x WHERE { ?x <http://rdf.freebase.com/ns/a.b.c> ?y } ORDER BY DESC(?y) LIMIT 1").actions()
        ['add_fact(?x, a.b.c, ?y)', 'add_max(?y)', 'set_answer(?x)']
        >>> gold_to_query("SELECT ?x WHERE { { ?x <http://e/p> 1 } UNION { ?x <http://e/q> 2 } }").actions()[0]
        'add_union(?x, query(add_fact(?x, <http://e/p>, 1)), query(add_fact(?x, <http://e/q>, 2)))'
        >>> gold_to_query("SELECT ?x WHERE { ?x <http://e/p> ?y OPTIONAL { ?y <http://e/q> ?z } }")
        Traceback (most recent call last):
        ...
        pyql.errors.ConversionError: SPARQL, character 38: OPTIONAL has no step
    """
    profile = get_profile(profile)
    try:
        return _Chain(_Parser(text, profile), profile).build()
    except RecursionError:  # pragma: no cover - the depth cap comes first
        raise ConversionError(f"SPARQL nested deeper than {MAX_DEPTH} levels") from None
    except (ParseError, ConversionError):
        raise
    except PyQLError as exc:
        raise ConversionError(f"SPARQL: the query's steps do not build: {exc}") from None
