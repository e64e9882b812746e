"""The ``sexpr`` format: S-expressions in the GrailQA / GraphQ dialect, read to chains and written back.

An S-expression names a set of entities (or one number, for ``COUNT``):

==========================  =================================================
form                         the set it names
==========================  =================================================
``c``                        the instances of class ``c``
``(JOIN r X)``               the ``x`` with a triple ``(x, r, y)``, ``y`` in X
``(JOIN (R r) X)``           the ``x`` with a triple ``(y, r, x)``, ``y`` in X
``(AND c X)``                X's members of class ``c`` (``c`` a type name)
``(AND X Y)``                the members of both
``(OR X Y)``                 the members of either (``add_union``; two or
                             more arguments)
``(lt r v)``                 the ``x`` with ``(x, r, y)`` and ``y < v``
                             (also ``le``, ``gt``, ``ge``)
``(TC X r t)``               X's members whose time span holds at ``t``: ``r``
                             its start relation (``...held.from``, the end
                             relation its ``.to`` twin) or its end relation
                             (``...held.to``, the start its ``.from`` twin), as
                             WebQSP's forms name it
``(ARGMAX X r)``             X's members with the largest ``r`` (``r`` a
                             relation, or a path ``(JOIN r1 r2)``), all of
                             them on a tie: ``add_max(?v, ties=True)``; ``ARGMIN``
``(COUNT X)``                how many members X has
==========================  =================================================

Literals are written as GrailQA writes them, ``2009-08-20^^http://www.w3.org/2001/XMLSchema#date``
(a bare number or date reads as one too). ``ARGMAX``/``ARGMIN`` and
``COUNT`` stand at the top of the form (``(COUNT (ARGMAX ...))`` is
refused): a chain orders and counts the whole query. ``OR`` is an
``add_union`` step on its set's variable, one branch per argument. The reader is a loop over the tokens with an explicit stack, so
10,000 nested parentheses cost no recursion; a form nested deeper than
:data:`MAX_DEPTH` is refused.

Writing goes the other way: the chain's query graph, rooted at the answer
variable, must be a tree whose every variable is constrained; each
variable becomes ``(AND ...)`` of what constrains it, an ``add_union`` on it
``(OR ...)`` of its branches' sets. What each step is in a form (a join, a
class, a comparison, a time span, a union, the count, the superlative, the
answer) is its step kind's ``sexpr`` hook, in the kind's module
(:mod:`pyql.builder.kinds`); a kind without one has no S-expression. :func:`same_logical_form`
compares two forms as GrailQA's evaluation compares logical forms: as
graphs, so ``AND``'s and ``OR``'s arguments may come in any order.

Example:
    >>> form = "(AND sports.sports_team (JOIN sports.sports_team.arena_stadium m.0ws7))"
    >>> print(write_sexpr(read_sexpr(form, {}, FREEBASE)))
    (AND sports.sports_team (JOIN sports.sports_team.arena_stadium m.0ws7))
    >>> same_logical_form("(AND (JOIN r.s.t m.0a) c.d)", "(AND c.d (JOIN r.s.t m.0a))")
    True
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Mapping, Union

from pyql.errors import ConversionError, ParseError, PyQLError
from pyql.interchange.registry import reader, writer
from pyql.builder.profiles import FREEBASE, Profile  # noqa: F401 (FREEBASE: the doctests use it)
from pyql.builder.query import Query
from pyql.builder.kind import SexprPart, kind_of
from pyql.builder.kinds.aggregate import Aggregate
from pyql.builder.kinds.argmax import Argmax
from pyql.builder.kinds.comparison import Filter
from pyql.builder.kinds.fact import Fact
from pyql.builder.kinds.time_constraint import TimeConstraint
from pyql.builder.kinds.union import Disjunction
from pyql.builder.terms import IRI, Literal, Term, Variable, parse_term

__all__ = ["MAX_DEPTH", "Form", "parse_sexpr", "render_sexpr", "read_sexpr", "write_sexpr", "same_logical_form"]

#: The deepest nesting of parentheses read (GrailQA's deepest forms nest 6 deep).
MAX_DEPTH = 100

#: A parsed form: an atom (its text), or a list ``[head, *arguments]`` with the position of its ``(``.
Form = Union["Atom", "Node"]

_COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_OPS = {op: name for name, op in _COMPARISONS.items()}
_HEADS = ("JOIN", "AND", "OR", "R", "COUNT", "ARGMAX", "ARGMIN", "TC", *_COMPARISONS)
_TOKEN = re.compile(r'\s+|\(|\)|"(?:[^"\\]|\\.)*"(?:\^\^\S+?(?=[\s()]|$)|@[A-Za-z][A-Za-z0-9-]*)?|[^\s()"]+|"', re.DOTALL)
#: A quoted literal as one token holds it: the body (escapes as written), then a datatype or a language tag.
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"(?:\^\^(.+)|@([A-Za-z][A-Za-z0-9-]*))?', re.DOTALL)
#: The escapes of a quoted literal's body (as SPARQL's and N-Triples' strings write them).
_ESCAPE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))', re.DOTALL)
_SHORT_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
#: What a word of a form may hold (an entity, a relation, a class, a bare typed literal): one token, nothing to escape.
_WORD = re.compile(r'[^\s()"\\\x00-\x1f\x7f\x85\u2028\u2029]+')
#: A time span's end relation, from its start relation's last part.
_END_OF = {"from": "to", "start_date": "end_date", "from_date": "to_date", "start": "end", "begin": "end"}
#: A time span's start relation, from its end relation's last part (``end``: ``start``, the likelier of two).
_START_OF = {"to": "from", "end_date": "start_date", "to_date": "from_date", "end": "start"}


@dataclass(frozen=True)
class Atom:
    """A word of a form: a relation, a class, an entity or a literal, and where it stands."""

    text: str
    position: int


@dataclass(frozen=True)
class Node:
    """A parenthesised form: its head word, its arguments, and the position of its ``(``."""

    head: str
    args: tuple[Form, ...]
    position: int = 0


@dataclass
class _Frame:
    position: int
    items: list[Form] = field(default_factory=list)


def _error(message: str, text: str, position: int) -> ParseError:
    return ParseError(f"S-expression, character {position + 1}: {message}", text=text, position=position)


def _close(frame: _Frame, text: str) -> Node:
    if not frame.items:
        raise _error("empty parentheses '()': a form starts with a head such as JOIN, AND, COUNT", text, frame.position)
    head = frame.items[0]
    if not isinstance(head, Atom):
        raise _error("a form's head must be a word such as JOIN or AND, not another form", text, frame.position)
    return Node(head.text, tuple(frame.items[1:]), frame.position)


def parse_sexpr(text: str) -> Form:
    """Parse an S-expression into atoms and nodes, without recursion.

    Raises:
        ParseError: unbalanced parentheses, text after the form, nesting
            deeper than :data:`MAX_DEPTH`; the message names the character.

    Example:
        >>> parse_sexpr("(JOIN (R r.s.t) m.0a)").head
        'JOIN'
        >>> parse_sexpr("(JOIN r.s.t m.0a")
        Traceback (most recent call last):
        ...
        pyql.errors.ParseError: S-expression, character 1: this '(' is never closed (the text ends first)
    """
    stack: list[_Frame] = [_Frame(-1)]
    for match in _TOKEN.finditer(text):
        token, position = match.group(), match.start()
        if token.isspace():
            continue
        if token == "(":
            if len(stack) > MAX_DEPTH:
                raise _error(f"nested deeper than {MAX_DEPTH} parentheses", text, position)
            stack.append(_Frame(position))
        elif token == ")":
            if len(stack) == 1:
                raise _error("')' closes nothing", text, position)
            node = _close(stack.pop(), text)
            stack[-1].items.append(node)
        elif token == '"':
            raise _error("this quote is never closed", text, position)
        else:
            stack[-1].items.append(Atom(token, position))
    if len(stack) > 1:
        raise _error("this '(' is never closed (the text ends first)", text, stack[-1].position)
    forms = stack[0].items
    if not forms:
        raise _error("no S-expression (the text is empty)", text, 0)
    if len(forms) > 1:
        extra = forms[1]
        raise _error("text after the end of the form", text, extra.position)
    return forms[0]


def render_sexpr(form: Form) -> str:
    """The text of a parsed form, one space between words.

    Example:
        >>> render_sexpr(parse_sexpr("(JOIN   (R r.s.t)\\n m.0a)"))
        '(JOIN (R r.s.t) m.0a)'
    """
    out: list[str] = []
    stack: list[object] = [form]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Atom):
            out.append(item.text)
        else:
            assert isinstance(item, Node)
            parts: list[object] = ["(" + item.head]
            for arg in item.args:
                parts += [" ", arg]
            parts.append(")")
            stack.extend(reversed(parts))
    return "".join(out)


# -- reading -----------------------------------------------------------------


class _Reader:
    """Turns a parsed form into a chain, one fresh variable per set."""

    def __init__(self, text: str, profile: Profile) -> None:
        self.text, self.query, self.count = text, Query(profile), 0

    def fresh(self) -> Variable:
        var = Variable(f"x{self.count}")
        self.count += 1
        return var

    def fail(self, message: str, form: Form) -> ParseError:
        return _error(message, self.text, form.position)

    def term(self, atom: Atom, role: str) -> Term:
        text = atom.text
        try:
            quoted = _QUOTED.fullmatch(text)
            if quoted is not None:  # "body", "body"@lang, "body"^^datatype: the body's escapes read
                body, datatype, lang = quoted.groups()
                return Literal(_unescaped(body), self.datatype(datatype) if datatype else None, lang)
            if "^^" in text:  # GrailQA's bare typed literal: 2009-08-20^^http://www.w3.org/2001/XMLSchema#date
                lexical, _, datatype = text.rpartition("^^")
                return Literal(lexical, self.datatype(datatype))
            return parse_term(text, self.query.profile, role)
        except PyQLError as exc:
            raise self.fail(str(exc), atom) from None

    def datatype(self, text: str) -> str:
        """A literal's datatype as written after ``^^``: a full IRI, ``<IRI>`` or a name of the profile."""
        text = text[1:-1] if text.startswith("<") and text.endswith(">") else text
        return parse_term(text, self.query.profile, "relation").value  # type: ignore[attr-defined]

    def relation(self, form: Form) -> tuple[IRI, bool]:
        """A relation argument: the relation and whether it is reversed (``(R r)``)."""
        if isinstance(form, Node) and form.head == "R" and len(form.args) == 1 and isinstance(form.args[0], Atom):
            return self.relation_name(form.args[0]), True
        if isinstance(form, Atom):
            return self.relation_name(form), False
        raise self.fail(f"expected a relation or (R relation), found a {form.head} form", form)

    def relation_name(self, atom: Atom) -> IRI:
        if atom.text in _HEADS:
            raise self.fail(f"{atom.text} is a head, not a relation", atom)
        term = self.term(atom, "relation")
        if not isinstance(term, IRI):
            raise self.fail(f"expected a relation, found {atom.text!r}", atom)
        return term

    def is_class(self, form: Form) -> bool:
        return isinstance(form, Atom) and not self._entity_like(form.text)

    def _entity_like(self, text: str) -> bool:
        return "^^" in text or bool(re.match(r"^[mg]\.[0-9a-z_]+$|^-?[0-9]", text))

    def into(self, form: Form, var: Variable) -> None:
        """Add the steps that make ``var`` a member of ``form``'s set."""
        if isinstance(form, Atom) and self.is_class(form) and form.text not in _HEADS:
            self.query = self.query.add_type_constrain(self.term(form, "entity"), var)
            return
        if isinstance(form, Atom):
            raise self.fail(
                f"{form.text!r} stands alone where a set is expected; join it: (JOIN relation {form.text})", form
            )
        handler = _SET_FORMS.get(form.head)
        if handler is None:
            raise self._unknown(form)
        handler(self, form, var)

    def _unknown(self, form: Node) -> PyQLError:
        if form.head in ("COUNT", "ARGMAX", "ARGMIN"):
            return ConversionError(
                f"S-expression, character {form.position + 1}: {form.head} must be the outermost form "
                "(a chain orders and counts the whole query)"
            )
        if "." in form.head:
            return self.fail(
                f"a relation used as a function: ({form.head} ...); join it: (JOIN {form.head} X) "
                f"or (JOIN (R {form.head}) X)",
                form,
            )
        return self.fail(
            f"unknown head {form.head!r}; the heads are JOIN, R, AND, OR, COUNT, ARGMAX, ARGMIN, TC, lt, le, gt, ge",
            form,
        )

    def arity(self, form: Node, count: int) -> None:
        if len(form.args) != count:
            raise self.fail(f"{form.head} takes {count} arguments, found {len(form.args)}", form)

    def join(self, form: Node, var: Variable) -> None:
        self.arity(form, 2)
        relation, reverse = self.relation(form.args[0])
        target = form.args[1]
        if isinstance(target, Atom):
            other: Term = self.term(target, "entity")
        else:
            other = self.fresh()
            self.into(target, other)
        self.query = (
            self.query.add_fact(other, relation, var) if reverse else self.query.add_fact(var, relation, other)
        )

    def conjunction(self, form: Node, var: Variable) -> None:
        if len(form.args) < 2:
            raise self.fail(f"AND takes two or more arguments, found {len(form.args)}", form)
        for arg in sorted(form.args, key=lambda a: not self.is_class(a)):
            if self.is_class(arg):
                assert isinstance(arg, Atom)
                self.query = self.query.add_type_constrain(self.term(arg, "entity"), var)
            else:
                self.into(arg, var)

    def disjunction(self, form: Node, var: Variable) -> None:
        """``(OR X Y ...)``: one branch per argument, each binding ``var``, as one ``add_union``."""
        if len(form.args) < 2:
            raise self.fail(f"OR takes two or more arguments, found {len(form.args)}", form)
        outer, branches = self.query, []
        for arg in form.args:
            self.query = Query(outer.profile)
            self.into(arg, var)
            branches.append(self.query)
        self.query = outer.add_union(var, *branches)

    def comparison(self, form: Node, var: Variable) -> None:
        self.arity(form, 2)
        relation, reverse = self.relation(form.args[0])
        value = form.args[1]
        if reverse or not isinstance(value, Atom):
            raise self.fail(f"({form.head} relation value) compares a relation's value with a literal", form)
        held = self.fresh()
        self.query = self.query.add_fact(var, relation, held).add_filter(
            held, _COMPARISONS[form.head], self.term(value, "entity")
        )

    def time_constraint(self, form: Node, var: Variable) -> None:
        """``(TC X r t)``: X's steps, then the time span's two FILTERs, ``r`` its start or its end relation (the
        other its twin), ``t`` a year (its first and last day) or a date (twice), as WebQSP's gold SPARQL writes them."""
        self.arity(form, 3)
        self.into(form.args[0], var)
        named, reverse = self.relation(form.args[1])
        when = form.args[2]
        if reverse or not isinstance(when, Atom):
            raise self.fail("(TC X relation time) takes a start or end relation and a year or date", form)
        stem, _, last = named.value.rpartition(".")
        if last not in _END_OF and last not in _START_OF:
            raise self.fail(
                f"TC's relation {named.value.rsplit('/', 1)[-1]!r} is not a start relation "
                f"(its last part one of {', '.join(sorted(_END_OF))}) nor an end relation ({', '.join(sorted(_START_OF))})",
                form.args[1],
            )
        by_end = last not in _END_OF
        twin = IRI(f"{stem}.{_START_OF[last] if by_end else _END_OF[last]}")
        start, end = (twin, named) if by_end else (named, twin)
        moment = when.text.split("^^")[0].strip('"')
        if not re.fullmatch(r"\d{4}(-\d\d(-\d\d)?)?", moment):
            raise self.fail(f"TC's time should be a year or a date (2009, 2009-08-20), found {when.text!r}", when)
        first, last_day = (f"{moment}-01-01", f"{moment}-12-31") if len(moment) == 4 else (moment, moment)
        self.query = self.query.add_time_constrain(var, start, end, last_day, first, by_end=by_end)

    def top(self, form: Form) -> Query:
        """The chain of the whole form (COUNT and ARGMAX/ARGMIN allowed here only)."""
        answer = self.fresh()
        if isinstance(form, Atom):
            raise self.fail("a lone word is not a query; an S-expression starts with '('", form)
        if form.head == "COUNT":
            self.arity(form, 1)
            counted = self.fresh()
            self.into(form.args[0], counted)
            return self.query.add_count(counted, answer)
        if form.head in ("ARGMAX", "ARGMIN"):
            return self.superlative(form, answer)
        self.into(form, answer)
        return self.query.set_answer(answer)

    def superlative(self, form: Node, answer: Variable) -> Query:
        self.arity(form, 2)
        self.into(form.args[0], answer)
        path, last = form.args[1], answer
        hops: list[Form] = list(path.args) if isinstance(path, Node) and path.head == "JOIN" else [path]
        for hop in hops:
            relation, reverse = self.relation(hop)
            value = self.fresh()
            self.query = (
                self.query.add_fact(value, relation, last) if reverse else self.query.add_fact(last, relation, value)
            )
            last = value
        step = self.query.add_max if form.head == "ARGMAX" else self.query.add_min
        return step(last, ties=True).set_answer(answer)  # GrailQA's ARGMAX keeps every member at the extreme


_SET_FORMS = {
    "JOIN": _Reader.join,
    "AND": _Reader.conjunction,
    "OR": _Reader.disjunction,
    "TC": _Reader.time_constraint,
    **{name: _Reader.comparison for name in _COMPARISONS},
}


@reader("sexpr", "an S-expression in the GrailQA/GraphQ dialect: (AND c (JOIN r m.0abc)), COUNT, ARGMAX, lt..ge, TC")
def read_sexpr(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
    """The chain an S-expression means (fresh variables ``?x0``, ``?x1``, ..., ``?x0`` the answer).

    Raises:
        ParseError: the form does not parse or uses a head wrongly, naming the character.
        ConversionError: ``COUNT``/``ARGMAX`` inside another form.

    Example:
        >>> print(read_sexpr("(COUNT (JOIN (R a.b.c) m.0a))", {}, FREEBASE).actions())
        ['add_fact(m.0a, a.b.c, ?x1)', 'add_count(?x1, ?x0)']
        >>> read_sexpr("(OR (JOIN r.s.t m.0a) (JOIN r.s.t m.0b))", {}, FREEBASE).actions()[0]
        'add_union(?x0, query(add_fact(?x0, r.s.t, m.0a)), query(add_fact(?x0, r.s.t, m.0b)))'
    """
    return _Reader(text, profile).top(parse_sexpr(text))


# -- writing -----------------------------------------------------------------


def _escaped(text: str) -> str:
    r"""A literal's text inside the quotes of a form: quotes and backslashes escaped, and every control,
    line-separating or surrogate character as ``\n``, ``\r``, ``\t`` or ``\uXXXX`` (never a raw NUL byte or line break).

    Example:
        >>> print(_escaped('say "hi"' + chr(10) + chr(0)))
        say \"hi\"\n\u0000
    """
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp"):
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def _unescaped(body: str) -> str:
    r"""The text of a quoted literal's body: the escapes :func:`_escaped` writes read back (any other
    backslash kept as written).

    Example:
        >>> _unescaped(r'say \"hi\" \u0041\n \d') == 'say "hi" A' + chr(10) + ' ' + chr(92) + 'd'
        True
    """

    def one(match: re.Match[str]) -> str:
        short, long_, char = match.group(1), match.group(2), match.group(3)
        if short or long_:
            code = int(short or long_, 16)
            return chr(code) if code <= 0x10FFFF else match.group(0)
        return _SHORT_ESCAPES.get(char, match.group(0))

    return _ESCAPE.sub(one, body)


def _literal_text(term: Literal) -> str:
    """A literal as a form writes it: bare and typed as GrailQA writes them when the text allows, else quoted.

    Raises:
        ConversionError: a datatype or language tag no token of the dialect can hold.
    """
    if term.lang is not None:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", term.lang):
            raise ConversionError(f"the language tag {term.lang!r} cannot be written in an S-expression")
        return f'"{_escaped(term.lexical)}"@{term.lang}'
    if term.datatype is None:
        return f'"{_escaped(term.lexical)}"'
    if not _WORD.fullmatch(term.datatype):
        raise ConversionError(f"the datatype <{term.datatype}> cannot be written in an S-expression (spaces, quotes, parentheses)")
    if _WORD.fullmatch(term.lexical) and not term.lexical.startswith('"'):
        return f"{term.lexical}^^{term.datatype}"
    return f'"{_escaped(term.lexical)}"^^{term.datatype}'


class _Writer:
    """Turns a chain's query graph, rooted at its answer, into a form."""

    def __init__(self, query: Query, flat: bool = False) -> None:
        self.profile = query.profile
        self.flat = flat
        self.facts: list[Fact] = []
        self.types: dict[Variable, list[IRI]] = {}
        self.filters: dict[Variable, list[Filter]] = {}
        self.times: dict[Variable, list[TimeConstraint]] = {}
        self.unions: dict[Variable, list[Disjunction]] = {}
        self.count: Aggregate | None = None
        self.argmax: Argmax | None = None
        self.answer: Variable | None = None
        self.seen: set[Variable] = set()
        self.distinct: list[Filter] = []
        for step in query.steps:
            self.take(step)
        for step in self.distinct:
            if not self.implied(step):
                raise ConversionError(f"add_filter({step.left}, !=, {step.right}) has no S-expression")

    def implied(self, step: Filter) -> bool:
        """Whether ``left != right`` is what the dialect's own reading already says, so the form need not.

        GrailQA's SPARQL for a form (its graph query) keeps every node apart
        from every other: a member is no entity of the form, and no two
        nodes of the query graph are one. So a ``!=`` between the answer
        and an entity of the form, or between two variables the facts join
        (as GrailQA's gold queries write for every pair, and WebQSP's for the
        answer and its CVT), is implied; any other ``!=`` is a constraint of its own.
        """
        if isinstance(step.right, IRI):
            return step.right in self.entities()
        nodes = {t for fact in self.facts for t in (fact.head, fact.tail) if isinstance(t, Variable)}
        return step.left in nodes and step.right in nodes

    def take(self, step: object) -> None:
        """Keep a step where its role in the form puts it (its kind's ``sexpr`` hook, :class:`pyql.builder.kind.StepKind`)."""
        kind = kind_of(step)
        part = kind.sexpr(step, self.profile) if kind is not None and kind.sexpr is not None else None
        if part is None or not self.place(part):
            raise ConversionError(f"the step {getattr(step, 'action', type(step).__name__)} has no S-expression")

    def place(self, part: SexprPart) -> bool:
        """Keep one step's part by its role; False when the form has no room for it (a second count or superlative)."""
        if part.role == "join":
            self.facts.append(part.item)
        elif part.role == "class":
            self.types.setdefault(part.var, []).append(part.item)
        elif part.role == "distinct":
            self.distinct.append(part.item)
        elif part.role in ("comparison", "time_span", "union"):
            held = {"comparison": self.filters, "time_span": self.times, "union": self.unions}[part.role]
            held.setdefault(part.var, []).append(part.item)
        elif part.role == "count" and self.count is None:
            self.count = part.item
        elif part.role == "superlative" and self.argmax is None:
            self.argmax = part.item
        elif part.role == "answer":
            self.answer = part.var
        else:
            return False
        return True

    def entities(self) -> set[Term]:
        """The entities the form names, those of ``add_union``'s branches included."""
        named = {t for fact in self.facts for t in (fact.head, fact.tail) if isinstance(t, IRI)}
        for steps in self.unions.values():
            for step in steps:
                for branch in step.branches:
                    named |= _Writer(branch).entities()
        return named

    def name(self, term: Term) -> str:
        if isinstance(term, IRI):
            name = self.profile.shorten(term.value)
            if not _WORD.fullmatch(name) or name in _HEADS:
                raise ConversionError(f"{name} cannot be written as a word of an S-expression (spaces, quotes, parentheses)")
            return name
        if isinstance(term, Literal):
            return _literal_text(term)
        raise ConversionError(f"{term} cannot be written in an S-expression")

    def edges(self, var: Variable, parent: Fact | None) -> list[tuple[Fact, bool, Term]]:
        """The facts touching ``var`` but ``parent``: (fact, reversed, the other end)."""
        out = []
        for fact in self.facts:
            if fact is parent:
                continue
            if fact.head == var:
                out.append((fact, False, fact.tail))
            elif fact.tail == var:
                out.append((fact, True, fact.head))
        return out

    def relation(self, fact: Fact, reverse: bool) -> str:
        name = self.name(fact.relation)
        return f"(R {name})" if reverse else name

    def set_of(self, var: Variable, parent: Fact | None, depth: int = 0) -> str:
        """``var``'s set: the AND of its classes, joins, comparisons and time spans."""
        if var in self.seen:
            raise ConversionError(f"the query graph has a cycle through {var}; an S-expression is a tree")
        if depth > MAX_DEPTH:
            raise ConversionError(f"the query graph is deeper than {MAX_DEPTH} hops")
        self.seen.add(var)
        parts = [self.name(t) for t in self.types.get(var, [])]
        for fact, reverse, other in self.edges(var, parent):
            parts.append(self.join(fact, reverse, other, depth))
        parts += [self.union(step) for step in self.unions.get(var, [])]
        if not parts:
            raise ConversionError(f"{var} is not constrained by anything an S-expression can say")
        form = parts[-1]
        if len(parts) > 2 and self.flat:  # one n-ary AND: the same logical form, one level deep
            form = "(AND " + " ".join(parts) + ")"
        else:  # GrailQA's binary ANDs, nested to the right
            for part in reversed(parts[:-1]):
                form = f"(AND {part} {form})"
        for span in self.times.get(var, []):
            named = span.end_relation if span.by_end else span.start_relation
            form = f"(TC {form} {self.name(named)} {self.when(span)})"
        return form

    def join(self, fact: Fact, reverse: bool, other: Term, depth: int) -> str:
        relation = self.relation(fact, reverse)
        if not isinstance(other, Variable):
            return f"(JOIN {relation} {self.name(other)})"
        tests = self.filters.get(other, [])
        if tests and not reverse and not self.edges(other, fact) and other not in self.types:
            self.seen.add(other)
            forms = [f"({_OPS[t.op]} {relation} {self.name(t.right)})" for t in tests]
            return forms[0] if len(forms) == 1 else "(AND " + " ".join(forms) + ")"
        return f"(JOIN {relation} {self.set_of(other, fact, depth + 1)})"

    def union(self, step: Disjunction) -> str:
        """``(OR ...)`` of the branches' sets of the union's variable; a branch is a set, so it neither counts nor orders."""
        forms = []
        for number, branch in enumerate(step.branches, 1):
            inner = _Writer(branch, self.flat)
            if inner.count is not None or inner.argmax is not None:
                raise ConversionError(f"branch {number} of add_union on {step.var} counts or orders; in an S-expression OR joins sets")
            forms.append(inner.set_of(step.var, None))
        return "(OR " + " ".join(forms) + ")"

    def when(self, span: TimeConstraint) -> str:
        late, early = span.start_before.lexical, span.end_after.lexical
        if late == early:
            return late
        if early.endswith("-01-01") and late.endswith("-12-31") and early[:4] == late[:4]:
            return early[:4]
        raise ConversionError(f"the time constraint on {span.var} ({early} to {late}) is not one year or one date")

    def path(self, target: Variable, root: Variable) -> list[tuple[Fact, bool]]:
        """The facts from ``root`` to ``target`` (the superlative's relation path), taken out of the graph."""
        hops: list[tuple[Fact, bool]] = []
        current = target
        while current != root:
            touching = self.edges(current, hops[-1][0] if hops else None)
            if len(touching) != 1 or not isinstance(touching[0][2], Variable):
                raise ConversionError(f"the superlative's variable {target} is not on one path from {root}")
            fact, reverse, other = touching[0]
            hops.append((fact, not reverse))
            current = other
            if len(hops) > MAX_DEPTH:
                raise ConversionError(f"the superlative's path is longer than {MAX_DEPTH} hops")
        for fact, _ in hops:
            self.facts.remove(fact)
        return list(reversed(hops))

    def form(self) -> str:
        if self.count is not None:
            return f"(COUNT {self.set_of(self.count.var, None)})"
        root = self.argmax.answer if self.argmax is not None and self.argmax.answer is not None else self.answer
        if root is None:
            raise ConversionError("the query has no answer variable (set_answer) to root an S-expression at")
        if self.argmax is None:
            return self.set_of(root, None)
        hops = self.path(self.argmax.var, root)
        head = "ARGMAX" if self.argmax.descending else "ARGMIN"
        names = [self.relation(fact, reverse) for fact, reverse in hops]
        relation = names[0] if len(names) == 1 else "(JOIN " + " ".join(names) + ")"
        return f"({head} {self.set_of(root, None)} {relation})"


@writer("sexpr", "an S-expression in the GrailQA/GraphQ dialect: (AND c (JOIN r m.0abc)), COUNT, ARGMAX, lt..ge, TC")
def write_sexpr(query: Query) -> str:
    """The S-expression of a chain whose query graph is a tree rooted at its answer.

    ``AND`` is written as GrailQA writes it, binary and nested to the right,
    while the form fits the reader's :data:`MAX_DEPTH`; a form that would
    nest deeper is written with each ``AND`` flat (n-ary; the same logical
    form, :func:`same_logical_form`). What a writer writes, the reader
    reads: a literal's text is quoted with its escapes (never a raw NUL
    byte or line break), and a form the reader would refuse is refused here.

    Raises:
        ConversionError: a step S-expressions cannot say (a quantity, a
            bind, a filter between two variables, ...), a cycle, an
            unconstrained variable, no answer, a query that is a class
            alone, a form nested deeper than :data:`MAX_DEPTH` even with
            flat ``AND``s, a name no word of the dialect can hold.

    Example:
        >>> q = Query().add_fact("m.0a", "a.b.c", "?x").add_fact("?x", "a.b.year", "?y").add_max("?y", "?x")
        >>> write_sexpr(q)
        '(ARGMAX (JOIN (R a.b.c) m.0a) a.b.year)'
        >>> write_sexpr(Query().add_fact("?x", "a.b.c", "?y").set_answer("?x"))
        Traceback (most recent call last):
        ...
        pyql.errors.ConversionError: ?y is not constrained by anything an S-expression can say
    """
    text = _Writer(query).form()
    if _depth(text) > MAX_DEPTH:
        text = _Writer(query, flat=True).form()
    if not text.startswith("("):
        raise ConversionError(f"the query is the class {text} alone; an S-expression the reader takes starts with '('")
    try:
        parse_sexpr(text)  # never write what the reader refuses
    except ParseError as exc:
        raise ConversionError(f"the query cannot be written as an S-expression the reader takes: {exc}") from None
    return text


def _depth(text: str) -> int:
    """How deep a form's parentheses nest (quoted literals skipped).

    Example:
        >>> _depth('(AND (JOIN r m.0a) (JOIN r "(("))'), _depth("c")
        (2, 0)
    """
    depth = deepest = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")":
            depth -= 1
    return deepest


# -- comparing -----------------------------------------------------------------


def _canonical_atom(text: str) -> str:
    if "^^" in text:
        lexical, _, datatype = text.rpartition("^^")
        return f"{lexical.strip(chr(34))}^^{datatype.strip('<>')}"
    if re.fullmatch(r"-?\d+", text):
        return f"{text}^^http://www.w3.org/2001/XMLSchema#integer"
    return text


def _canonical(form: Form) -> str:
    """A text equal for forms that are the same graph.

    ``AND`` is flattened and its arguments sorted; a ``TC`` is one more
    constraint on its set's node, so ``(AND (TC X r t) Y)`` and ``(TC (AND
    X Y) r t)`` are the same. ``OR`` is flattened and sorted too (a union
    of sets, in any order and grouping).
    """
    if isinstance(form, Atom):
        return _canonical_atom(form.text)
    if form.head == "OR":
        return "(OR " + " ".join(sorted(_flattened(form, "OR"))) + ")"
    if form.head not in ("AND", "TC") or (form.head == "TC" and len(form.args) != 3):
        return "(" + " ".join([form.head, *(_canonical(a) for a in form.args)]) + ")"
    return "(AND " + " ".join(sorted(_flattened(form, "AND"))) + ")"


def _flattened(form: Node, head: str) -> list[str]:
    """The canonical texts of the arguments of nested ``head`` forms (``AND``: ``TC`` constraints lifted out)."""
    items: list[str] = []
    pending: list[Form] = [form]
    while pending:
        arg = pending.pop()
        if isinstance(arg, Node) and arg.head == head:
            pending.extend(arg.args)
        elif head == "AND" and isinstance(arg, Node) and arg.head == "TC" and len(arg.args) == 3:
            pending.append(arg.args[0])
            items.append(f"(TC {_canonical(arg.args[1])} {_canonical(arg.args[2])})")
        else:
            items.append(_canonical(arg))
    return items


def same_logical_form(predicted: str, gold: str) -> bool:
    """Whether two S-expressions are the same logical form (GrailQA's exact match).

    They are compared as query graphs: ``AND``'s and ``OR``'s arguments in
    any order and nesting, literals by value and datatype. A prediction that does not
    parse is not the same (False), as in GrailQA's evaluation.

    Example:
        >>> same_logical_form("(AND c.d (AND (JOIN r.s.t m.0a) (JOIN u.v.w m.0b)))",
        ...                   "(AND (AND (JOIN u.v.w m.0b) c.d) (JOIN r.s.t m.0a))")
        True
        >>> same_logical_form("(JOIN (R r.s.t) m.0a)", "(JOIN r.s.t m.0a)"), same_logical_form("(JOIN", "(JOIN r.s.t m.0a)")
        (False, False)
    """
    try:
        return _canonical(parse_sexpr(predicted)) == _canonical(parse_sexpr(gold))
    except ParseError:
        return False
