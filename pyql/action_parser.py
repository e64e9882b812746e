"""Read the actions an LLM writes, and the legacy PyQL programs of datasets.

An LLM agent (QueryAgent style) answers each step with a ``Thought N: ...``
and an ``Action N: name(arg, ...)`` line.  This module turns that text into an
:class:`ActionCall`: the action name and a tuple of typed :class:`Arg` values,
each remembering its exact source text and span.  It never checks whether the
name is a known function or whether the arguments make sense for it: that is a
later stage, which can produce helpful feedback from the parsed call.

The syntax is the lark grammar ``grammars/action.lark`` (LALR, contextual
lexer).  The call level splits the argument list at top-level commas (commas
inside quotes, ``<IRI>``s, backticks or parentheses do not split); each
argument is then read as one typed form (variable ``?x``, id/relation/CURIE/IRI
``m.0crbvqz``, quoted string, ``"Rachel"@en``, ``"2011"^^xsd:gYear``, number,
date, operator) or, failing that, kept as free text (``No. in series``).

Argument kinds (:data:`ARG_KINDS`):

========== ====================================== ==============================
kind       example source                         value / datatype / lang
========== ====================================== ==============================
variable   ``?cyclone_1``                         ``cyclone_1`` (no ``?``)
name       ``m.0crbvqz``, ``wd:Q42``,             the token; for ``<IRI>`` the
           ``<http://x.org/a>``, ``http://x/a``   IRI without the brackets
string     ``"yes"``, ``'it\\'s'``                unescaped content
lang_string ``"Rachel"@en``                       ``Rachel``, lang ``en``
typed      ``"2011"^^xsd:gYear``,                 lexical form ``2011``; datatype
           ``1.0^^http://...#float``              ``xsd:gYear`` as written (an
                                                  ``<IRI>`` without brackets)
number     ``10``, ``-3.5``, ``1e3``              as written
date       ``2011-01-01``, ``2014-07-31-08:00``   as written
operator   ``>``, ``<=``, ``!=``, ``==``, ``<>``  as written
text       ``Lyrics theme/style``                 the source text, stripped
========== ====================================== ==============================

Arguments may be wrapped in backticks (the backticks are dropped before the
argument is typed, and a backticked argument may contain commas); the whole
action may be wrapped in backticks too.  Nothing else may follow the closing
parenthesis on the action's line (see :func:`extract_action`).

Reading a whole reply (:func:`extract_action`).  Text after the call: the
call's own line (from the closing parenthesis to the end of that line) may
hold only spaces, backticks, ``*`` and one ``.`` or ``;``.  Anything else
(``execute()()``, ``add_condition(Opponent, =, x'); DROP TABLE games; --)``,
``get_relation(m.1) to list them``) is an :class:`ActionSyntaxError`
"unexpected text after the call at column N", never the call before it run
alone: the text may mean that the call closed earlier than its writer meant.
Later lines are free (an LLM may explain itself under the action).  Labels
are looked for at line starts; only if there is none are inline labels
(``... done. Action 3: f(x)``) used.  A reply without any ``Action`` label is
accepted when exactly one line starts with a call ``name(`` (e.g. a reply
that is only the action).  A second action is reported when a complete call
follows the first one (after ``,``, ``;``, ``and`` ...) or starts a later
line of the same block; to keep this linear, only the first 64 such places
are tried, each within 4000 characters.  Step numbers: the ``N`` written by
the LLM is recorded in :attr:`ActionCall.step` and never rejected, even when
it differs from the expected one (LLMs often renumber after an error
observation); the expected number is only used in error messages.  Compare
``call.step`` with your counter if you care.

Equality of :class:`Arg` and :class:`ActionCall` is semantic: source text,
spans and the written step number are not compared, so
``parse_action(render_action(call)) == call`` for every call that can be
written (see :func:`render_action`).

Errors are :class:`pyql.errors.ParseError` subclasses with a ``kind``
attribute: :class:`ActionSyntaxError` (``action_syntax``),
:class:`ActionArityError` (``action_arity``), :class:`NoActionError`
(``no_action``), :class:`MultipleActionsError` (``multiple_actions``) and
:class:`LegacySyntaxError` (``legacy_syntax``).

Example:
    >>> call = parse_action("add_filter(?length, >, 10)")
    >>> call.name, [(a.kind, a.value) for a in call.args]
    ('add_filter', [('variable', 'length'), ('operator', '>'), ('number', '10')])
    >>> extract_action("Thought 1: find relations.\\nAction 1: `get_relation(m.0crbvqz)`").args[0].value
    'm.0crbvqz'
    >>> render_action("set_answer", "?x")
    'set_answer(?x)'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

import lark
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
)

from grammars import lark_parser
from grammars.vocabulary import WRITTEN_OPERATORS
from pyql.errors import (  # noqa: F401 (defined in pyql/errors.py)
    ActionArityError,
    ActionSyntaxError,
    LegacySyntaxError,
    MultipleActionsError,
    NoActionError,
    TermError,
)

__all__ = [
    "ARG_KINDS",
    "OPERATORS",
    "Arg",
    "ActionCall",
    "ActionSyntaxError",
    "ActionArityError",
    "NoActionError",
    "MultipleActionsError",
    "LegacySyntaxError",
    "line_column",
    "parse_action",
    "parse_argument",
    "extract_action",
    "render_action",
    "render_argument",
    "call_from_values",
    "parse_legacy_program",
    "split_args",
]

#: The kinds an :class:`Arg` can have.
ARG_KINDS: tuple[str, ...] = (
    "variable",
    "name",
    "string",
    "lang_string",
    "typed",
    "number",
    "date",
    "operator",
    "text",
)

#: The operator spellings recognised as arguments (kind ``operator``): the vocabulary's.
OPERATORS: tuple[str, ...] = WRITTEN_OPERATORS


# ---------------------------------------------------------------------------
# Errors


# ---------------------------------------------------------------------------
# Data classes


@dataclass(frozen=True)
class Arg:
    """One argument of an action.

    Attributes:
        kind: one of :data:`ARG_KINDS`.
        value: the unescaped content (see the module docstring): a variable's
            name without ``?``, a string's text, a typed literal's lexical form.
        datatype: for ``typed``, the datatype as written (``xsd:gYear``, or an
            IRI without angle brackets); else None.
        lang: for ``lang_string``, the language tag without ``@``; else None.
        raw: exact source text of the argument, stripped (not compared).
        span: ``(start, end)`` offsets of ``raw`` in the parsed text (not compared).

    Example:
        >>> a = parse_action('f("2011"^^xsd:gYear)').args[0]
        >>> (a.kind, a.value, a.datatype, a.raw, a.span)
        ('typed', '2011', 'xsd:gYear', '"2011"^^xsd:gYear', (2, 19))
        >>> a == Arg("typed", "2011", datatype="xsd:gYear")
        True
    """

    kind: str
    value: str
    datatype: str | None = None
    lang: str | None = None
    raw: str = field(default="", compare=False)
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ARG_KINDS:
            raise TermError(f"unknown argument kind {self.kind!r}; use one of {', '.join(ARG_KINDS)}")
        if not isinstance(self.value, str):
            raise TermError(f"argument value must be a str, not {type(self.value).__name__}")


@dataclass(frozen=True)
class ActionCall:
    """One parsed action ``name(arg, ...)``.

    Attributes:
        name: the action name as written (not checked against known actions).
        args: the arguments.
        text: the action's source text, from the name to the closing ``)``
            (not compared).
        span: ``(start, end)`` of ``text`` in the parsed text: the action
            string for :func:`parse_action`, the whole reply for
            :func:`extract_action`, the program for :func:`parse_legacy_program`
            (not compared).  Argument spans use the same coordinates.
        args_span: ``(start, end)`` of the text between the parentheses
            (not compared).
        step: the number ``N`` written in ``Action N:`` by the LLM, when
            extracted from a reply that has one; else None (not compared).

    Example:
        >>> c = parse_action("add_condition(Name, =, Smith, John)")
        >>> c.raw_args
        ('Name', '=', 'Smith', 'John')
        >>> c.args_text
        'Name, =, Smith, John'
        >>> c == ActionCall("add_condition", (Arg("name", "Name"), Arg("operator", "="),
        ...                                   Arg("name", "Smith"), Arg("name", "John")))
        True
    """

    name: str
    args: tuple[Arg, ...] = ()
    text: str = field(default="", compare=False)
    span: tuple[int, int] = field(default=(0, 0), compare=False)
    args_span: tuple[int, int] = field(default=(0, 0), compare=False)
    step: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", tuple(self.args))

    @property
    def raw_args(self) -> tuple[str, ...]:
        """The exact source text of each argument (stripped).

        Example:
            >>> parse_action("f( `a` , 'b' )").raw_args
            ('`a`', "'b'")
        """
        return tuple(a.raw for a in self.args)

    @property
    def args_text(self) -> str:
        """The original text between the parentheses ('' for hand-made calls).

        Example:
            >>> parse_action("f( a , b )").args_text
            ' a , b '
        """
        return self._slice(self.args_span)

    @property
    def values(self) -> tuple[str, ...]:
        """The ``value`` of each argument.

        Example:
            >>> parse_action("add_fact(m.1, r.s, ?x)").values
            ('m.1', 'r.s', 'x')
        """
        return tuple(a.value for a in self.args)

    def _slice(self, span: tuple[int, int]) -> str:
        base, end = self.span
        if not self.text or end - base != len(self.text) or not (base <= span[0] <= span[1] <= end):
            return ""
        return self.text[span[0] - base : span[1] - base]


# ---------------------------------------------------------------------------
# Parsers and helpers

_PARSER: lark.Lark | None = None
_LEGACY_PARSER: lark.Lark | None = None


def _parser() -> lark.Lark:
    global _PARSER
    if _PARSER is None:
        _PARSER = lark_parser("action", parser="lalr", lexer="contextual", start=["start", "action", "argument"])
    return _PARSER


def _legacy_parser() -> lark.Lark:
    global _LEGACY_PARSER
    if _LEGACY_PARSER is None:
        _LEGACY_PARSER = lark_parser("legacy_pyql", parser="lalr", lexer="contextual")
    return _LEGACY_PARSER


_ESC_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESC = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(body: str) -> str:
    """Undo backslash escapes (SPARQL ECHAR and \\u/\\U); unknown ones stay as written."""
    if "\\" not in body:
        return body

    def rep(m: re.Match[str]) -> str:
        g = m.group(1)
        if len(g) > 1:
            cp = int(g[1:], 16)
            return chr(cp) if cp <= 0x10FFFF else m.group(0)
        return _SIMPLE_ESC.get(g, m.group(0))

    return _ESC_RE.sub(rep, body)


def _quote(value: str) -> str:
    body = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{body}"'


def _strip_iri(tok: lark.Token) -> str:
    s = str(tok)
    return s[1:-1] if tok.type == "IRIREF" else s


@lru_cache(maxsize=16384)
def _classify(text: str) -> tuple[str, str, str | None, str | None]:
    """(kind, value, datatype, lang) of one argument's text (already stripped)."""
    try:
        tree = _parser().parse(text, start="argument")
    except LarkError:
        return ("text", text, None, None)
    kind = str(tree.data)
    toks = tree.children
    first = toks[0]
    if kind == "variable":
        return ("variable", str(first)[1:], None, None)
    if kind == "name":
        return ("name", _strip_iri(first), None, None)
    if kind == "string":
        return ("string", _unescape(str(first)[1:-1]), None, None)
    if kind == "lang_string":
        return ("lang_string", _unescape(str(first)[1:-1]), None, str(toks[1])[1:])
    if kind == "typed":
        lexical = _unescape(str(first)[1:-1]) if first.type == "STRING" else str(first)
        return ("typed", lexical, _strip_iri(toks[-1]), None)
    return (kind, str(first), None, None)  # number, date, operator


def _classify_arg_tokens(toks: list[lark.Token], raw: str) -> tuple[str, str, str | None, str | None]:
    if len(toks) == 1 and toks[0].type == "BTQ":
        inner = raw[1:-1].strip()
        if not inner:
            return ("text", "", None, None)
        return _classify(inner)
    return _classify(raw)


def _call_from_tree(tree: lark.Tree, source: str, base: int = 0, step: int | None = None) -> ActionCall:
    """Build an ActionCall from an ``action`` tree parsed from ``source``; shift spans by ``base``."""
    name_tok, lpar, arguments, rpar = tree.children
    args: list[Arg] = []
    if arguments is not None:
        for node in arguments.children:
            if isinstance(node, lark.Token):  # COMMA
                continue
            toks = node.children
            s, e = toks[0].start_pos, toks[-1].end_pos
            raw = source[s:e]
            kind, value, datatype, lang = _classify_arg_tokens(toks, raw)
            args.append(Arg(kind, value, datatype, lang, raw, (s + base, e + base)))
    start, end = name_tok.start_pos, rpar.end_pos
    return ActionCall(
        str(name_tok),
        tuple(args),
        source[start:end],
        (start + base, end + base),
        (lpar.end_pos + base, rpar.start_pos + base),
        step,
    )


# Human-readable names of terminals, for error messages.
_TERMINAL_NAMES = {
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "NAME": "an action name",
    "BT": "'`'",
    "$END": "end of input",
    "DOT": "'.'",
    "EQUAL": "'='",
    "NULL": "'null'",
    "_SEP": "a new line",
    "STRING": "a quoted string",
    "NUMBER": "a number",
}
_ATOM_TERMINALS = frozenset({"STRING", "IRIREF", "DT_IRI", "BTQ", "CHUNK", "LONE_QUOTE"})
_ORDER = ["an action name", "'('", "an argument", "','", "')'", "'`'", "'.'", "'='", "a quoted string", "a number"]


def _state_expected(e: UnexpectedInput) -> set[str] | None:
    st = getattr(e, "state", None)
    try:
        keys = st.parse_conf.parse_table.states[st.position].keys()  # type: ignore[union-attr]
    except (AttributeError, KeyError, TypeError):
        return None
    return {k for k in keys if k.isupper()}


def _humanize(names: set[str], action_level: bool) -> list[str]:
    names = set(names)
    out: list[str] = []
    if action_level and names & _ATOM_TERMINALS:
        if "COMMA" in names:  # inside an argument: it may go on, or end
            names -= _ATOM_TERMINALS | {"LPAR"}
        else:
            names -= _ATOM_TERMINALS | {"LPAR"}
            out.append("an argument")
    names.discard("BT")  # an optional wrapping backtick is never worth mentioning
    for n in names:
        if action_level and n == "NAME":
            out.append("an action name")
        elif n == "NAME":
            out.append("a name")
        else:
            out.append(_TERMINAL_NAMES.get(n, n))
    order = {s: i for i, s in enumerate(_ORDER)}
    return sorted(set(out), key=lambda s: (order.get(s, len(order)), s))


def _error_details(e: UnexpectedInput, source: str, action_level: bool) -> tuple[int, str, list[str]]:
    """(position in source, what was found, expected) of a lark error."""
    expected = _state_expected(e)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            pos = len(source.rstrip())
            found = "end of input"
        else:
            pos = tok.start_pos if tok.start_pos is not None else len(source)
            found = repr(str(tok)[:20]) if pos < len(source) else "end of input"
            if tok.type == "LONE_QUOTE":
                found = f"{str(tok)} starting a quoted string that is never closed"
        if expected is None:
            expected = set(e.expected)
    elif isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream
        found = repr(source[pos : pos + 20])
        if expected is None:
            expected = set(e.allowed or ())
    else:  # UnexpectedEOF
        pos = len(source.rstrip())
        found = "end of input"
        if expected is None:
            expected = set(getattr(e, "expected", ()) or ())
    return pos, found, _humanize(expected, action_level)


def _snippet(text: str, pos: int, width: int = 30) -> str:
    lo = max(0, pos - width)
    hi = min(len(text), pos + width)
    return ("..." if lo else "") + text[lo:hi] + ("..." if hi < len(text) else "")


def _syntax_error(e: UnexpectedInput, source: str, base: int = 0, full: str | None = None) -> ActionSyntaxError:
    pos, found, expected = _error_details(e, source, action_level=True)
    full_text = source if full is None else full
    where = base + pos
    message = (
        f"invalid action syntax at character {where}: unexpected {found}"
        + (f"; expected {' or '.join(expected)}" if expected else "")
        + f" (in {_snippet(full_text, where)!r}). Write one action like name(arg1, arg2)."
    )
    return ActionSyntaxError(message, text=full_text, position=where, expected=expected)


# ---------------------------------------------------------------------------
# parse_action / parse_argument


@lru_cache(maxsize=4096)
def _parse_action_cached(text: str) -> ActionCall:
    try:
        tree = _parser().parse(text, start="start")
    except UnexpectedInput as e:
        pos, _, expected = _error_details(e, text, action_level=True)
        if expected == ["end of input"] and pos < len(text.rstrip()):  # the call is complete: text after it
            end = text.find("\n", pos)
            raise _trailing_text_error(
                text, pos, len(text) if end < 0 else end, one_line="\n" not in text.strip(), expected="end of input"
            ) from None
        raise _syntax_error(e, text) from None
    for child in tree.children:
        if isinstance(child, lark.Tree):
            return _call_from_tree(child, text)
    raise AssertionError("unreachable: start always holds an action")  # pragma: no cover


def parse_action(text: str) -> ActionCall:
    """Parse one action, the whole ``text`` (whitespace and backticks around it are allowed).

    Args:
        text: e.g. ``"add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)"``.

    Returns:
        The call; spans are offsets into ``text``.

    Raises:
        ActionSyntaxError: the text is not exactly one call; ``position`` and
            ``expected`` tell where and what would have been accepted (text
            after a complete call: "unexpected text after the call at
            column N").

    Example:
        >>> c = parse_action("`add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)`")
        >>> c.name, [a.kind for a in c.args], c.span
        ('add_fact', ['name', 'name', 'variable'], (1, 70))
        >>> parse_action("get_column(No. in series)").args[0]
        Arg(kind='text', value='No. in series', datatype=None, lang=None, raw='No. in series', span=(11, 24))
        >>> parse_action("add_fact(a,,b)")
        Traceback (most recent call last):
        ...
        pyql.errors.ActionSyntaxError: invalid action syntax at character 11: unexpected ','; expected an argument (in 'add_fact(a,,b)'). Write one action like name(arg1, arg2).
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_action() needs a str, not {type(text).__name__}")
    return _parse_action_cached(text)


def parse_argument(text: str) -> Arg:
    """Type one argument's text the way :func:`parse_action` does (free text if no typed form fits).

    Args:
        text: the argument, e.g. ``'"Rachel"@en'``; surrounding whitespace and
            one pair of backticks are removed.

    Returns:
        The argument; ``span`` covers the stripped text.

    Example:
        >>> parse_argument(' "Rachel"@en ')
        Arg(kind='lang_string', value='Rachel', datatype=None, lang='en', raw='"Rachel"@en', span=(1, 12))
        >>> parse_argument("1.0^^http://www.w3.org/2001/XMLSchema#float").datatype
        'http://www.w3.org/2001/XMLSchema#float'
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_argument() needs a str, not {type(text).__name__}")
    stripped = text.strip()
    start = len(text) - len(text.lstrip())
    inner = stripped
    if len(inner) >= 2 and inner[0] == "`" and inner[-1] == "`" and "`" not in inner[1:-1]:
        inner = inner[1:-1].strip()
    kind, value, datatype, lang = _classify(inner) if inner else ("text", "", None, None)
    return Arg(kind, value, datatype, lang, stripped, (start, start + len(stripped)))


# ---------------------------------------------------------------------------
# extract_action

_LABELS = r"(?:thought|action|observation|question|answer|final[ \t]+answer|step|entity|entities)"
_LABEL_LINE_RE = re.compile(
    rf"^[ \t>#*_\-]*(?P<label>{_LABELS})[ \t]*(?P<n>\d+)?[ \t]*\**[ \t]*:[ \t]*\**", re.I | re.M
)
_LABEL_INLINE_RE = re.compile(
    rf"(?<![\w.?\-])\**(?P<label>{_LABELS})[ \t]*(?P<n>\d+)?[ \t]*\**[ \t]*:[ \t]*\**", re.I
)
_FENCE_OPEN_RE = re.compile(r"`{3,}[ \t]*[\w+#.\-]*[ \t]*(?=\r?\n|\Z)")
_FENCE_RE = re.compile(r"`{3,}")
_SKIP_RE = re.compile(r"[\s`*>]*")
_LINE_SKIP_RE = re.compile(r"[ \t\r\f\v`*>]*")
_SKIP_NUMBERED_RE = re.compile(r"[\s`*>]*(?:\d{1,3}[.)][ \t]+[`*]*)?")
_HEAD_LOOSE_RE = re.compile(r"[^\W\d]\w*[ \t]*\(")
_HEAD_TIGHT_RE = re.compile(r"[^\W\d]\w*\(")
_IDENT_ONLY_RE = re.compile(r"[^\W\d]\w*[\s`*.;]*")
_AFTER_CALL_RE = re.compile(r"(?:[\s`*,;&|]|\b(?:and|then|also|next)\b|:)*", re.I)
_LINE_START_RE = re.compile(r"\n[ \t>*`\-]*(?:\d+[.)][ \t]*)?")


def _mask_fences(reply: str) -> str:
    """Replace code-fence markers (```` ```lang ```` / ```` ``` ````) by spaces, keeping offsets."""
    if "```" not in reply:
        return reply

    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group(0))

    return _FENCE_RE.sub(blank, _FENCE_OPEN_RE.sub(blank, reply))


def _parse_call_at(reply: str, pos: int, limit: int, step: int | None = None) -> tuple[ActionCall, int]:
    """Parse the call that starts at ``pos`` (its name) and ends at its closing ')'.

    Text after the ')' is not read here: :func:`_check_line_tail` rejects it
    when it is on the call's own line.
    """
    sub = reply[pos:limit]
    ip = _parser().parse_interactive(sub, start="action")
    depth = 0
    tree = None
    try:
        for tok in ip.iter_parse():
            t = tok.type
            if t == "LPAR":
                depth += 1
            elif t == "RPAR":
                depth -= 1
                if depth == 0:
                    ip.feed_token(tok)
                    tree = ip.feed_eof(tok)
                    break
        else:
            ip.feed_eof()
    except UnexpectedInput as e:
        raise _syntax_error(e, sub, base=pos, full=reply) from None
    if tree is None:  # pragma: no cover - feed_eof raises first
        raise ActionSyntaxError("unfinished action", text=reply, position=limit, expected=["')'"])
    call = _call_from_tree(tree, sub, base=pos, step=step)
    return call, call.span[1]


#: What may follow a call on its own line: spaces, backticks, ``*`` (Markdown), one ``.`` or ``;``.
_LINE_TAIL_OK_RE = re.compile(r"[ \t\r\f\v`*]*(?:[.;][ \t\r\f\v`*]*)?")


def _trailing_text_error(
    text: str, pos: int, line_end: int, *, one_line: bool, expected: str = "end of the action line"
) -> ActionSyntaxError:
    """The error for text after a call on the call's own line, at offset ``pos`` of ``text``."""
    line_start = text.rfind("\n", 0, pos) + 1
    column = pos - line_start + 1
    where = f"column {column}" if one_line else f"line {text.count(chr(10), 0, pos) + 1}, column {column}"
    tail = text[pos:line_end].rstrip()
    shown = tail if len(tail) <= 40 else tail[:40] + "..."
    return ActionSyntaxError(
        f"unexpected text after the call at {where}: {shown!r}. The action line must hold only the "
        "action, e.g. get_relation(m.0abc); put explanations in the Thought, and quote a value that "
        "contains a parenthesis or a quote.",
        text=text,
        position=pos,
        expected=[expected],
    )


def _check_line_tail(reply: str, masked: str, end: int, limit: int) -> None:
    """Raise if anything but spaces, backticks, ``*`` or one ``.``/``;`` follows the call on its line."""
    newline = masked.find("\n", end, limit)
    line_end = limit if newline < 0 else newline
    tail = _LINE_TAIL_OK_RE.match(masked, end, line_end)
    if tail is not None and tail.end() == line_end:
        return
    pos = _LINE_SKIP_RE.match(masked, end, line_end).end()  # type: ignore[union-attr]
    raise _trailing_text_error(reply, pos, line_end, one_line="\n" not in reply.rstrip("\r\n"))


#: A second call is looked for within this many characters of where it starts ...
_TRIAL_WINDOW = 4000
#: ... at no more than this many candidate positions (keeps extraction linear).
_MAX_TRIALS = 64


def _try_call(reply: str, masked: str, pos: int, limit: int) -> ActionCall | None:
    if not _HEAD_TIGHT_RE.match(masked, pos, limit):
        return None
    try:
        return _parse_call_at(reply, pos, min(limit, pos + _TRIAL_WINDOW))[0]
    except ActionSyntaxError:
        return None


def _next_call(reply: str, masked: str, end: int, limit: int) -> ActionCall | None:
    """Another complete call after ``end``: right after separators, or at the start of a later line."""
    m = _AFTER_CALL_RE.match(masked, end, limit)
    candidates = [m.end() if m else end]
    for m in _LINE_START_RE.finditer(masked, end, limit):
        if len(candidates) >= _MAX_TRIALS:
            break
        if _HEAD_TIGHT_RE.match(masked, m.end(), limit):
            candidates.append(m.end())
    for pos in candidates:
        found = _try_call(reply, masked, pos, limit)
        if found is not None:
            return found
    return None


def _multiple(reply: str, positions: list[int], step: int | None) -> MultipleActionsError:
    shown = ", ".join(repr(reply[p:].split("\n", 1)[0][:50]) for p in positions[:4])
    hint = f" (Action {step})" if step is not None else ""
    return MultipleActionsError(
        f"the reply contains {len(positions)} actions, at characters "
        f"{' and '.join(map(str, positions))}: {shown}. Write exactly one action{hint} and stop.",
        text=reply,
        position=positions[1],
        expected=["exactly one action"],
        positions=positions,
    )


def extract_action(reply: str, step: int | None = None) -> ActionCall:
    """Find the one action in a whole LLM reply.

    Accepted layouts: ``Action 3: add_fact(...)``, ``Action 3 : ...``,
    ``Action: ...``, ``**Action 3:** ...``, the call on the line after the
    label, inside code fences or backticks, with ``Thought 3: ...`` (and any
    other labelled lines) before it, and with prose on the lines after the
    action.  The ``Action`` block ends at the next labelled line
    (``Observation``, ``Thought``, ...).  What may follow the call on its
    line, when a second action is reported and how written step numbers are
    treated: see "Reading a whole reply" in the module docstring.

    Args:
        reply: the LLM's whole reply.
        step: the step number the caller expects (advisory: only used in
            error messages, never checked against the written one).

    Returns:
        The call; its spans are offsets into ``reply`` and ``step`` is the
        written ``N`` (None if the label had no number or there was no label).

    Raises:
        NoActionError: no action at all, e.g. ``Action 3: Since we couldn't
            find a suitable relation ...``.
        MultipleActionsError: two ``Action`` labels (e.g. a hallucinated
            ``Observation 3`` / ``Action 4`` continuation), or two calls in
            one Action block; ``positions`` lists where they start.
        ActionSyntaxError: the action starts like a call but is malformed,
            or text follows it on its line; ``position`` is an offset into
            ``reply``.

    Example:
        >>> reply = "Thought 2: use the category.\\nAction 2 : `add_fact(m.0crbvqz, r.c, ?category)`\\nas planned"
        >>> c = extract_action(reply, step=2)
        >>> c.name, c.step, c.values, reply[c.span[0]:c.span[1]] == c.text
        ('add_fact', 2, ('m.0crbvqz', 'r.c', 'category'), True)
        >>> extract_action("```\\nexecute()\\n```").name
        'execute'
        >>> extract_action("Action 4: get_relation(m.1)", step=3).step
        4
        >>> extract_action("Action 5: execute()()")
        Traceback (most recent call last):
        ...
        pyql.errors.ActionSyntaxError: unexpected text after the call at column 20: '()'. The action line must hold only the action, e.g. get_relation(m.0abc); put explanations in the Thought, and quote a value that contains a parenthesis or a quote.
    """
    if not isinstance(reply, str):
        raise TypeError(f"extract_action() needs a str, not {type(reply).__name__}")
    masked = _mask_fences(reply)
    labels, actions = _action_labels(masked)
    if len(actions) > 1:
        raise _multiple(reply, [m.start("label") for m in actions], step)
    if actions:
        return _labelled_action(reply, masked, labels, actions[0], step)
    return _unlabelled_action(reply, masked, step)


def _action_labels(masked: str) -> tuple[list[re.Match[str]], list[re.Match[str]]]:
    """All labels of the reply and its ``Action`` labels: at line starts, else inline ones."""
    labels = list(_LABEL_LINE_RE.finditer(masked))
    actions = [m for m in labels if m.group("label").lower() == "action"]
    if not actions:
        inline = list(_LABEL_INLINE_RE.finditer(masked))
        inline_actions = [m for m in inline if m.group("label").lower() == "action"]
        if inline_actions:
            labels, actions = inline, inline_actions
    return labels, actions


def _labelled_action(
    reply: str, masked: str, labels: list[re.Match[str]], label: re.Match[str], step: int | None
) -> ActionCall:
    """The one call of the block that ``label`` (an ``Action`` label) opens; it ends at the next label."""
    limit = next((m.start() for m in labels if m.start() > label.start()), len(reply))
    n = int(label.group("n")) if label.group("n") else None
    pos = _SKIP_NUMBERED_RE.match(masked, label.end(), limit).end()  # type: ignore[union-attr]
    if not _HEAD_LOOSE_RE.match(masked, pos, limit):
        raise _not_a_call(reply, masked, pos, limit, n)
    call, end = _parse_call_at(reply, pos, limit, step=n)
    other = _next_call(reply, masked, end, limit)
    if other is not None:
        raise _multiple(reply, [call.span[0], other.span[0]], step)
    _check_line_tail(reply, masked, end, limit)
    return call


def _not_a_call(reply: str, masked: str, pos: int, limit: int, n: int | None) -> ActionSyntaxError | NoActionError:
    """The error for an ``Action`` label followed by something that is not a call (a bare name, prose)."""
    if _IDENT_ONLY_RE.fullmatch(masked, pos, limit):
        name_end = re.compile(r"[^\W\d]\w*").match(masked, pos).end()  # type: ignore[union-attr]
        return ActionSyntaxError(
            f"invalid action syntax at character {name_end}: the action name "
            f"{masked[pos:name_end]!r} must be followed by '(' and the arguments, "
            f"e.g. {masked[pos:name_end]}().",
            text=reply,
            position=name_end,
            expected=["'('"],
        )
    what = f"'Action{' ' + str(n) if n is not None else ''}:'"
    return NoActionError(
        f"no action found: {what} is followed by {_snippet(masked[pos:limit].strip(), 0, 40)!r}, "
        "which is not a call. Write the action as name(arg1, arg2), e.g. get_relation(m.0abc).",
        text=reply,
        position=pos,
        expected=["an action such as name(arg1, arg2)"],
    )


def _unlabelled_action(reply: str, masked: str, step: int | None) -> ActionCall:
    """No ``Action`` label: the first line that starts with a call (e.g. a reply that is only the action)."""
    for start in [0] + [m.end() for m in re.finditer(r"\n", masked)]:
        pos = _LINE_SKIP_RE.match(masked, start).end()  # type: ignore[union-attr]
        if _HEAD_TIGHT_RE.match(masked, pos):
            first = _parse_call_at(reply, pos, len(reply))[0]
            other = _next_call(reply, masked, first.span[1], len(reply))
            if other is not None:
                raise _multiple(reply, [first.span[0], other.span[0]], step)
            _check_line_tail(reply, masked, first.span[1], len(reply))
            return first
    want = f"'Action {step}: ...'" if step is not None else "'Action N: ...'"
    raise NoActionError(
        f"no action found: the reply has no {want} line and no line starting with a call "
        "name(arg1, arg2).",
        text=reply,
        position=None,
        expected=["Action N: name(arg1, arg2)"],
    )


# ---------------------------------------------------------------------------
# render_action

_IDENT_RE = re.compile(r"[^\W\d]\w*")
_NAME_TOKEN_RE = re.compile(r"[^\W\d]\w*(?:[.:\-]\w+)*")
_LANG_RE = re.compile(r"[A-Za-z]+(?:-[A-Za-z0-9]+)*")
_UNSAFE_BARE_RE = re.compile(r"[\s,()\"'`]")  # would be split or re-read by the call level
_UNSAFE_TEXT_RE = re.compile(r"[\"'`\\\n\r]")  # bare text with these could merge with a neighbour


def _single_arg(text: str) -> Arg | None:
    """The one argument ``text`` parses to inside ``f(...)``, or None."""
    try:
        call = _parse_action_cached(f"f({text})")
    except ActionSyntaxError:
        return None
    return call.args[0] if len(call.args) == 1 else None


def render_argument(arg: Arg | str | int | float) -> str:
    """Canonical source text of one argument (see :func:`render_action`).

    Args:
        arg: an :class:`Arg`, or a plain value: ``int``/``float`` are written
            as numbers; a ``str`` is written as is when it reads back as one
            argument with that exact text (``?x``, ``m.0abc``, ``>``,
            ``No. in series``, ``"2011"^^xsd:gYear``) and, if that is free
            text, holds no quote, backtick, backslash or line break; else as
            a quoted string.

    Returns:
        The text.

    Raises:
        TermError: the value cannot be written as its kind (a variable name
            with spaces, a number that is not one, an unknown operator ...).

    Example:
        >>> render_argument(Arg("string", 'say "hi"'))
        '"say \\\\"hi\\\\""'
        >>> render_argument("Smith, John"), render_argument("No. in series"), render_argument(2.5)
        ('"Smith, John"', 'No. in series', '2.5')
        >>> render_argument(Arg("text", "Smith, John"))
        '"Smith, John"'
    """
    if isinstance(arg, Arg):
        return _render_arg(arg)
    if isinstance(arg, bool) or not isinstance(arg, (str, int, float)):
        raise TermError(f"cannot write {arg!r} as an action argument; use an Arg, str, int or float")
    if isinstance(arg, (int, float)):
        if isinstance(arg, float) and not math.isfinite(arg):
            raise TermError(f"cannot write the number {arg!r} as an action argument")
        text = repr(arg)
        if _classify(text)[0] != "number":  # pragma: no cover - repr of finite numbers always is one
            raise TermError(f"cannot write the number {arg!r} as an action argument")
        return text
    single = _single_arg(arg)
    if (
        single is not None
        and single.raw == arg
        and (single.kind != "text" or not _UNSAFE_TEXT_RE.search(arg))
    ):
        return arg
    return _quote(arg)


def _render_arg(a: Arg) -> str:
    kind, value = a.kind, a.value
    expected = (kind, value, a.datatype, a.lang)
    if kind == "string":
        return _quote(value)
    if kind == "text":
        single = None if _UNSAFE_TEXT_RE.search(value) else _single_arg(value)
        if single is not None and single.kind == "text" and single.value == value and single.raw == value:
            return value
        return _quote(value)
    if kind == "variable":
        cand = "?" + value
    elif kind == "name":
        bare = _classify(value) == expected and not _UNSAFE_BARE_RE.search(value)
        cand = value if bare else f"<{value}>"
    elif kind == "lang_string":
        cand = f"{_quote(value)}@{a.lang}" if a.lang and _LANG_RE.fullmatch(a.lang) else ""
    elif kind == "typed":
        dt = a.datatype or ""
        cand = f"{_quote(value)}^^{dt if _NAME_TOKEN_RE.fullmatch(dt) else f'<{dt}>'}" if dt else ""
    else:  # number, date, operator
        cand = value
    if not cand or _classify(cand) != expected:
        raise TermError(
            f"cannot write a {kind} argument with value {value!r}"
            + (f", datatype {a.datatype!r}" if a.datatype else "")
            + (f", lang {a.lang!r}" if a.lang else "")
            + " so that it reads back the same"
        )
    return cand


def render_action(call_or_name: ActionCall | str, *args: Arg | str | int | float, verbatim: tuple[int, ...] = ()) -> str:
    """Canonical text of a call; :func:`parse_action` reads it back to an equal call.

    The one renderer of action lines (:meth:`pyql.builder.query.Query.actions`
    writes its lines through it too).

    Strings are quoted only when needed: ``string``, ``lang_string`` and
    ``typed`` arguments are always quoted (double quotes; backslash, quote,
    newline, carriage return and tab escaped); ``text`` arguments are written
    bare when they read back as the same free text and hold no quote,
    backtick, backslash or line break, else as a quoted string (kind
    ``string``, same value: e.g. text containing a comma, or text that looks
    like a name such as ``Smith``).

    Args:
        call_or_name: an :class:`ActionCall` (then no ``args``), or the name.
        *args: :class:`Arg` objects or plain values (see :func:`render_argument`).
        verbatim: positions of ``str`` arguments written as given, unchecked
            (``Query.actions`` writes a date literal's lexical form bare, as
            it always has, even one that would not read back as a date).

    Returns:
        ``name(arg1, arg2, ...)``.

    Raises:
        TermError: the name is not an identifier, or an argument cannot be
            written as its kind.

    Example:
        >>> render_action("add_filter", "?length", ">", 10)
        'add_filter(?length, >, 10)'
        >>> c = parse_action('add_fact(?x, r.s, "Rachel"@en)')
        >>> render_action(c)
        'add_fact(?x, r.s, "Rachel"@en)'
        >>> parse_action(render_action(c)) == c
        True
        >>> render_action("add_condition", "Name", "=", "Smith, John")
        'add_condition(Name, =, "Smith, John")'
    """
    if isinstance(call_or_name, ActionCall):
        if args:
            raise TypeError("render_action() takes either an ActionCall, or a name and arguments")
        name, items = call_or_name.name, call_or_name.args
    else:
        name, items = call_or_name, args
    if not isinstance(name, str) or not _IDENT_RE.fullmatch(name):
        raise TermError(f"action name {name!r} is not an identifier (letters, digits, _; not starting with a digit)")
    texts = (a if i in verbatim and isinstance(a, str) else render_argument(a) for i, a in enumerate(items))
    return f"{name}({', '.join(texts)})"


def call_from_values(name: str, *values: str | float) -> ActionCall:
    """The call that ``render_action(name, *values)`` writes, built from the values (no parsing of the call).

    For structured calls (an LLM's native tool call): each value is typed as
    :func:`parse_action` would read its rendered text: a number is a
    ``number``; a string written bare is typed by the argument grammar
    (``?x`` a variable, ``m.0abc`` a name, ``>`` an operator ...), a string
    that needs quotes is a ``string``.  ``text`` is the rendered action and
    the spans are offsets into it, so the call is exactly
    ``parse_action(render_action(name, *values))``.

    Args:
        name: the action name (an identifier).
        *values: plain values (see :func:`render_argument`).

    Returns:
        The call.

    Raises:
        TermError: as :func:`render_action` (the name is not an identifier,
            a value cannot be written).

    Example:
        >>> c = call_from_values("add_filter", "?length", ">", 10)
        >>> c.text, [(a.kind, a.value) for a in c.args]
        ('add_filter(?length, >, 10)', [('variable', 'length'), ('operator', '>'), ('number', '10')])
        >>> call_from_values("add_condition", "Name", "=", "Smith, John").args[2]
        Arg(kind='string', value='Smith, John', datatype=None, lang=None, raw='"Smith, John"', span=(23, 36))
    """
    text = render_action(name, *values)
    args: list[Arg] = []
    pos = len(name) + 1
    for value in values:
        piece = render_argument(value)
        if isinstance(value, str) and piece != value:
            kind, typed, datatype, lang = "string", value, None, None  # quoted: a string literal
        else:
            read = parse_argument(piece)
            kind, typed, datatype, lang = read.kind, read.value, read.datatype, read.lang
        args.append(Arg(kind, typed, datatype, lang, piece, (pos, pos + len(piece))))
        pos += len(piece) + 2
    return ActionCall(name, tuple(args), text, (0, len(text)), (len(name) + 1, len(text) - 1))


# ---------------------------------------------------------------------------
# split_args


def split_args(call: ActionCall, n: int) -> tuple[str, ...]:
    """Re-split a call's arguments into exactly ``n`` values.

    A free-text value may contain commas (``add_condition(Name, =, Smith,
    John)``): the parser then sees more arguments than the action takes.  The
    first ``n - 1`` arguments are kept as parsed (their ``value``); the rest
    are joined back from the source text (raw, as written).  When the call has
    exactly ``n`` arguments, all values are returned as parsed.

    Args:
        call: a parsed call.
        n: the number of arguments the consumer expects (>= 0).

    Returns:
        ``n`` strings.

    Raises:
        ActionArityError: the call has fewer than ``n`` arguments (or some
            while ``n`` is 0).

    Example:
        >>> split_args(parse_action("add_condition(Name, =, Smith, John)"), 3)
        ('Name', '=', 'Smith, John')
        >>> split_args(parse_action('add_condition(Name, =, "Smith, John")'), 3)
        ('Name', '=', 'Smith, John')
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    k = len(call.args)
    if k == n:
        return tuple(a.value for a in call.args)
    if k < n or n == 0:
        raise ActionArityError(
            f"{call.name} takes {n} argument{'s' if n != 1 else ''}, but {k} "
            f"{'were' if k != 1 else 'was'} given in {call.text or call.name!r}",
            text=call.text,
            position=call.args_span[1] - call.span[0] if call.text else None,
            expected=[f"{n} arguments"],
        )
    head = tuple(a.value for a in call.args[: n - 1])
    first, last = call.args[n - 1], call.args[-1]
    joined = call._slice((first.span[0], last.span[1]))
    if not joined:
        joined = ", ".join(a.raw or render_argument(a) for a in call.args[n - 1 :])
    return head + (joined,)


# ---------------------------------------------------------------------------
# Legacy PyQL programs

_LEGACY_VAR_RE = re.compile(r"\??(x\d+)|\?(\w+)")


def _legacy_arg(tok: lark.Token) -> Arg:
    raw = str(tok)
    span = (tok.start_pos, tok.end_pos)
    if tok.type == "NUMBER":
        return Arg("number", raw, None, None, raw, span)
    inner = _unescape(raw[1:-1])
    m = _LEGACY_VAR_RE.fullmatch(inner)
    if m:
        return Arg("variable", m.group(1) or m.group(2), None, None, raw, span)
    if not inner.strip():
        return Arg("string", inner, None, None, raw, span)
    kind, value, datatype, lang = _classify(inner.strip())
    return Arg(kind, value, datatype, lang, raw, span)


def line_column(text: str, pos: int) -> tuple[int, int]:
    """The line and column (both from 1) of an offset into a text, as the error messages of programs give them.

    Example:
        >>> line_column("a=PyQL()\\n  a.set_answer('x0')", 11)
        (2, 3)
    """
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _legacy_error(message: str, text: str, pos: int, expected: list[str] | None = None) -> LegacySyntaxError:
    line, col = line_column(text, pos)
    return LegacySyntaxError(
        f"legacy PyQL program, line {line}, column {col}: {message}",
        text=text,
        position=pos,
        expected=expected,
        line=line,
    )


def parse_legacy_program(text: str) -> list[ActionCall]:
    """Parse a legacy PyQL program (as stored in datasets) into calls, without eval.

    ``a=PyQL()`` lines declare the object; each ``a.method('arg', ...)`` line
    becomes an :class:`ActionCall` named ``method``.  Inside the Python
    quotes, ``x0`` / ``?x0`` is the variable ``x0`` (kind ``variable``); other
    contents are typed like action arguments: ids and relations are ``name``,
    ``"2011-12-31"^^xsd:dateTime`` is ``typed``, ``!=`` is ``operator``.  The
    program ``null`` (and an empty one) gives ``[]``.

    Args:
        text: the program; statements on separate lines (or separated by ``;``).

    Returns:
        The calls in order; spans are offsets into ``text``.

    Raises:
        LegacySyntaxError: the program does not parse, or calls an object
            that was not declared; the message has the line number.

    Example:
        >>> prog = "a=PyQL()\\na.add_filter('x0', '!=', 'm.03_r3')\\na.set_answer('x0')\\n"
        >>> [(c.name, [(x.kind, x.value) for x in c.args]) for c in parse_legacy_program(prog)]
        [('add_filter', [('variable', 'x0'), ('operator', '!='), ('name', 'm.03_r3')]), ('set_answer', [('variable', 'x0')])]
        >>> parse_legacy_program("null")
        []
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_legacy_program() needs a str, not {type(text).__name__}")
    statements = _legacy_statements(text)
    has_init = any(st.data == "init" for st in statements)
    objects: set[str] = set()
    calls: list[ActionCall] = []
    for st in statements:
        if st.data == "init":
            obj, cls = st.children
            if str(cls) != "PyQL":
                raise _legacy_error(f"expected {obj}=PyQL(), found {obj}={cls}()", text, cls.start_pos, ["'PyQL'"])
            objects.add(str(obj))
            continue
        calls.append(_legacy_call(text, st, objects if has_init else None))
    return calls


def _legacy_statements(text: str) -> list[lark.Tree]:
    """The statements of a legacy program ([] for an empty one or ``null``); raises LegacySyntaxError."""
    try:
        tree = _legacy_parser().parse(text)
    except UnexpectedInput as e:
        pos, found, expected = _error_details(e, text, action_level=False)
        raise _legacy_error(
            f"unexpected {found}" + (f"; expected {' or '.join(expected)}" if expected else ""),
            text,
            pos,
            expected,
        ) from None
    if not tree.children or not isinstance(tree.children[0], lark.Tree):
        return []  # empty program or `null`
    return list(tree.children[0].children)


def _legacy_call(text: str, st: lark.Tree, objects: set[str] | None) -> ActionCall:
    """The call of one ``a.method(...)`` statement; ``objects``: the declared objects (None: no declaration)."""
    obj, method, lpar, args_node, rpar = st.children
    if objects is not None and str(obj) not in objects:
        raise _legacy_error(
            f"{obj!s} is not a PyQL object (declared: {', '.join(sorted(objects)) or 'none yet'})",
            text,
            obj.start_pos,
            sorted(objects),
        )
    args = tuple(_legacy_arg(a.children[0]) for a in args_node.children) if args_node is not None else ()
    start, end = obj.start_pos, rpar.end_pos
    return ActionCall(str(method), args, text[start:end], (start, end), (lpar.end_pos, rpar.start_pos))
