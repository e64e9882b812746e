"""The exception hierarchy of pyql.

Every error raised on purpose by pyql, pyql_sql, correction or agent is a
:class:`PyQLError`, so a caller can catch one type. Messages say what was
wrong and what is allowed instead.

Example:
    >>> from pyql.errors import PyQLError, TermError
    >>> issubclass(TermError, PyQLError)
    True
"""

from __future__ import annotations


class PyQLError(Exception):
    """Base class of every error pyql raises on purpose.

    Attributes:
        kind: a short machine-readable name of the error family.

    Example:
        >>> PyQLError("boom").kind
        'pyql_error'
    """

    kind = "pyql_error"


class TermError(PyQLError, ValueError):
    """A string or value cannot become a SPARQL term (variable, IRI, literal).

    Example:
        >>> TermError("bad").kind
        'bad_term'
    """

    kind = "bad_term"


class QueryError(PyQLError, ValueError):
    """A query step is not valid (wrong argument kind, unknown operator ...).

    Example:
        >>> QueryError("bad").kind
        'bad_query'
    """

    kind = "bad_query"


class KBError(PyQLError):
    """A knowledge base (or a table, its SQL twin) cannot be opened or used.

    Example:
        >>> KBError("no such file").kind
        'kb_error'
    """

    kind = "kb_error"


class EngineError(KBError):
    """The query engine rejected a query or failed while running it.

    Both sides raise it: the SPARQL engines (rdflib, Oxigraph, an endpoint)
    and SQLite (:class:`pyql_sql.errors.SQLExecutionError` is one).

    Attributes:
        query: the query text that was sent, when known.

    Example:
        >>> EngineError("syntax", query="SELECT").query
        'SELECT'
    """

    kind = "engine_error"

    def __init__(self, message: str, query: str | None = None) -> None:
        super().__init__(message)
        self.query = query


class EngineTimeout(EngineError):
    """The engine did not answer within the configured timeout.

    Example:
        >>> EngineTimeout("slow").kind
        'engine_timeout'
    """

    kind = "engine_timeout"


class ParseError(PyQLError, ValueError):
    """Text (an action, an LLM reply, a legacy program, a path) does not parse.

    Attributes:
        text: the text that was parsed.
        position: 0-based character offset of the problem, or None.
        expected: what would have been accepted there (human-readable names).

    Example:
        >>> e = ParseError("bad", text="add_fact(", position=9, expected=["argument"])
        >>> (e.position, e.expected)
        (9, ['argument'])
    """

    kind = "parse_error"

    def __init__(
        self,
        message: str,
        *,
        text: str = "",
        position: int | None = None,
        expected: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.text = text
        self.position = position
        self.expected = list(expected or [])


class ActionError(PyQLError, ValueError):
    """An action cannot be run as written (before it reaches the query).

    Attributes:
        action: the action name as written, when known.

    Example:
        >>> ActionError("bad", action="add_fact").action
        'add_fact'
    """

    kind = "bad_action"

    def __init__(self, message: str, *, action: str | None = None) -> None:
        super().__init__(message)
        self.action = action


class InvalidActionError(ActionError):
    """The action is not one of the available functions.

    Attributes:
        available: the names that are available.

    Example:
        >>> InvalidActionError("no", action="foo", available=["execute"]).available
        ['execute']
    """

    kind = "invalid_action"

    def __init__(self, message: str, *, action: str | None = None, available: list[str] | None = None) -> None:
        super().__init__(message, action=action)
        self.available = list(available or [])


class ArityError(ActionError):
    """The action has the wrong number of arguments.

    Example:
        >>> e = ArityError("x", action="add_fact", expected=(3, 3), given=2)
        >>> (e.expected, e.given)
        ((3, 3), 2)
    """

    kind = "wrong_arity"

    def __init__(self, message: str, *, action: str | None = None, expected: tuple[int, int] = (0, 0), given: int = 0) -> None:
        super().__init__(message, action=action)
        self.expected = expected
        self.given = given


class ArgumentError(ActionError):
    """One argument of an action has the wrong kind or cannot be read.

    Attributes:
        parameter: the parameter's name; position: its 0-based index; value: the argument as written.

    Example:
        >>> ArgumentError("x", action="add_filter", parameter="op", position=1, value="foo").parameter
        'op'
    """

    kind = "bad_argument"

    def __init__(
        self, message: str, *, action: str | None = None, parameter: str = "", position: int = 0, value: str = ""
    ) -> None:
        super().__init__(message, action=action)
        self.parameter = parameter
        self.position = position
        self.value = value


class EngineUnavailable(EngineError):
    """The engine could not be reached or is failing, whatever the query.

    Connection refused or reset, an unknown host, no endpoint at the URL
    (HTTP 404), a server error that is not about the query (HTTP 502/503/504,
    or a 5xx without an engine message), or an answer that is not SPARQL
    results. Unlike a plain :class:`EngineError` (the engine rejected *this*
    query), changing the query does not help: the run should stop or retry
    later. A time-out stays :class:`EngineTimeout` (kind ``engine_timeout``),
    which is not a subclass of this one: a query may time out because it is
    too expensive, so a time-out says nothing about the service.

    Attributes:
        url: the endpoint, when there is one.
        status: the HTTP status, when there was one.

    Example:
        >>> e = EngineUnavailable("down", url="http://127.0.0.1:1/sparql", status=503)
        >>> (e.kind, e.url, e.status, isinstance(e, EngineError))
        ('engine_unavailable', 'http://127.0.0.1:1/sparql', 503, True)
    """

    kind = "engine_unavailable"

    def __init__(self, message: str, query: str | None = None, *, url: str | None = None, status: int | None = None) -> None:
        super().__init__(message, query=query)
        self.url = url
        self.status = status


class UsageError(PyQLError):
    """Bad command-line usage (exit status 2)."""

    kind = "usage"


class RecordingError(PyQLError):
    """A recording or a KB cache (``--record``, ``--replay``, ``--kb-cache``) cannot be used.

    The file is not an SQLite database, is truncated or corrupt, is another
    program's database, or holds the other kind of store (a KB cache given
    as a recording); the CLI exits 2 with the message.

    Example:
        >>> RecordingError("not a recording").kind
        'recording_error'
    """

    kind = "recording_error"


class RecordingDamaged(RecordingError):
    """An entry of a recording or KB cache cannot be read: not UTF-8, not JSON, or not what pyql writes.

    The file is the user's and damaged: the message names the file and the
    entry (its key, kind and subject), and the command stops (exit status 2)
    instead of answering the question without it. Opening a store checks
    every entry (:meth:`pyql.recording_store.RecordingStore.open`), so this
    is raised before any question; an entry damaged later stops the command
    when it is read (and every read after it).

    Example:
        >>> e = RecordingDamaged("--replay r.sqlite: the entry 39e37d25c743 (kb) is not JSON")
        >>> (e.kind, isinstance(e, RecordingError))
        ('recording_damaged', True)
    """

    kind = "recording_damaged"


class RecordingUnavailable(RecordingError, EngineUnavailable):
    """A recording or KB cache could not be written or read just now (a full disk, an I/O error, a lock held
    too long, a file that became read-only).

    The question that needed it *failed to run* (kind
    ``recording_unavailable``: not scored, run again by ``--resume``, never
    shown to the model as advice), as when the KB itself is unavailable:
    an answer that could not be recorded is not used, so a replay of the
    recording never misses what the run was given, and nothing that
    failed is kept.

    Example:
        >>> e = RecordingUnavailable("--record rec.sqlite: cannot write it: database or disk is full")
        >>> (e.kind, isinstance(e, EngineUnavailable), isinstance(e, RecordingError))
        ('recording_unavailable', True, True)
    """

    kind = "recording_unavailable"


class ReplayMiss(EngineUnavailable):
    """A KB query asked during ``--replay`` that the recording does not hold.

    A replay never falls back to the KB: the question fails to run
    (``failed_to_run``, kind ``replay_miss``) and the message names the query.

    Example:
        >>> e = ReplayMiss("not recorded: SELECT ...")
        >>> (e.kind, isinstance(e, EngineUnavailable))
        ('replay_miss', True)
    """

    kind = "replay_miss"


class DocFormatError(PyQLError, ValueError):
    """An unknown documentation format was asked for."""

    kind = "bad_format"


class ProgramSyntaxError(ParseError):
    """A program of several lines (a legacy PyQL or a MarkQA program) cannot be read, at a line (and column).

    Attributes:
        line: 1-based line of the problem, or None.
        column: 1-based column (in characters) of the problem, or None when
            the reader reports lines only.

    Example:
        >>> e = ProgramSyntaxError("bad", text="a=PyQL()\\nb(", position=11, line=2, column=3)
        >>> (e.kind, e.line, e.column, e.position)
        ('parse_error', 2, 3, 11)
    """

    def __init__(
        self,
        message: str,
        *,
        text: str = "",
        position: int | None = None,
        expected: list[str] | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message, text=text, position=position, expected=expected)
        self.line = line
        self.column = column


class LegacySyntaxError(ProgramSyntaxError):
    """A legacy PyQL program (``a=PyQL()`` / ``a.add_fact(...)``) does not parse.

    Attributes:
        line: 1-based line number of the problem.

    Example:
        >>> from pyql.action_parser import parse_legacy_program
        >>> try:
        ...     parse_legacy_program("a=PyQL()\\na.add_fact('x0', 'r'\\n")
        ... except LegacySyntaxError as e:
        ...     print(e.kind, e.line, e.position)
        legacy_syntax 2 29
    """

    kind = "legacy_syntax"


class MultipleActionsError(ParseError):
    """An LLM reply contains more than one action; nothing is guessed.

    Attributes:
        positions: offsets in the reply where each action (or ``Action``
            label) starts.

    Example:
        >>> from pyql.action_parser import extract_action
        >>> try:
        ...     extract_action("Action 3: execute()\\nObservation 3: ok\\nAction 4: execute()")
        ... except MultipleActionsError as e:
        ...     print(e.kind, e.positions)
        multiple_actions [0, 38]
    """

    kind = "multiple_actions"

    def __init__(
        self,
        message: str,
        *,
        text: str = "",
        position: int | None = None,
        expected: list[str] | None = None,
        positions: list[int] | None = None,
    ) -> None:
        super().__init__(message, text=text, position=position, expected=expected)
        self.positions = list(positions or [])


class NoActionError(ParseError):
    """An LLM reply contains no action (e.g. ``Action 3:`` followed by prose).

    Example:
        >>> from pyql.action_parser import extract_action
        >>> try:
        ...     extract_action("Action 3: Since we couldn't find a suitable relation, we stop.")
        ... except NoActionError as e:
        ...     print(e.kind, e.position)
        no_action 10
    """

    kind = "no_action"


class ActionSyntaxError(ParseError):
    """An action looks like a call but is malformed (missing ``)``, ...).

    ``position`` is the 0-based offset of the problem in ``text`` (the text
    given to the parsing function: the action, or the whole LLM reply) and
    ``expected`` lists what would have been accepted, e.g. ``["','", "')'"]``.

    Example:
        >>> from pyql.action_parser import parse_action
        >>> try:
        ...     parse_action("add_fact(m.1, r")
        ... except ActionSyntaxError as e:
        ...     print(e.kind, e.position, e.expected)
        action_syntax 15 ["','", "')'"]
    """

    kind = "action_syntax"


class ActionArityError(ActionSyntaxError):
    """A call has fewer arguments than the consumer needs (see :func:`split_args`).

    Example:
        >>> ActionArityError("add_fact needs 3 arguments, got 2").kind
        'action_arity'
    """

    kind = "action_arity"


class ConversionError(PyQLError, ValueError):
    """A text cannot be converted from one format to another (``pyql convert``).

    Raised for what is neither a syntax error of the input nor a query that
    cannot be built: input nested too deeply, a query the target format
    cannot express. (A syntax error stays a :class:`ParseError`, a bad step
    a :class:`QueryError` or :class:`ActionError`.)

    Example:
        >>> ConversionError("too deep").kind
        'conversion_error'
    """

    kind = "conversion_error"


class UnknownFormatError(ConversionError):
    """No conversion format of that name, or it cannot be read (or written).

    Example:
        >>> UnknownFormatError("no sexp").kind
        'unknown_format'
    """

    kind = "unknown_format"


class ItemError(ConversionError):
    """A line of a JSON Lines input is not an item ``{"id": ..., "input": "...", "entities": {...}}``.

    (Not UTF-8, not JSON, not an object, or without a string ``input``.)

    Example:
        >>> ItemError("line 3: not JSON").kind
        'bad_item'
    """

    kind = "bad_item"


class MarkQAProgramError(ProgramSyntaxError):
    """A MarkQA program (``a = PyQL()`` ... ``print(a.sparql)``) cannot be read.

    Raised for syntax errors and for programs that parse but are not MarkQA:
    an unknown method or function, a wrong number of arguments, an argument
    of the wrong kind, a malformed QID or PID, nesting past the limit, an
    undefined object, a statement of another shape, text that is not UTF-8.

    Attributes:
        line: 1-based line of the problem.
        column: 1-based column (in characters) of the problem.

    Example:
        >>> from pyql.interchange.markqa_program import parse_markqa_program
        >>> try:
        ...     parse_markqa_program("a = PyQL()\\na.add_max('x', offset='2')\\nprint(a.sparql)\\n")
        ... except MarkQAProgramError as e:
        ...     print(e.kind, e.line, e.column)
        markqa_program 2 23
    """

    kind = "markqa_program"
