"""Steps → SPARQL 1.1 text.

The steps of a query are folded into *blocks*. A block is a group graph
pattern (triples and FILTERs) with optional solution modifiers (the ORDER
BY / LIMIT / OFFSET of an argmax). Triple patterns and filters join the
current block, so an argmax orders the whole block, as in WebQSP's gold
queries. An aggregation closes the block: the rows so far become a
sub-SELECT (nested once more when the block had an argmax, so "count after
argmax" counts the argmax rows), and only the aggregate and its group-by
variables are visible afterwards. A second argmax, and a yes/no comparison
after an argmax, also nest the block they apply to.

Besides the query itself this module builds the bounded queries a KB runs
for observations: values of every variable with labels and counts (one
query), one-hop relations (one query), labels of given terms, and labelled
result rows.

Example:
    >>> from pyql.query import Query
    >>> q = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
    >>> print(compile_query(q).split("WHERE")[1].strip())
    {
      <http://rdf.freebase.com/ns/m.0crbvqz> <http://rdf.freebase.com/ns/meteorology.tropical_cyclone.category> ?c .
    }
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from pyql import escape
from pyql.errors import QueryError
from pyql.profiles import Profile
from pyql.steps import Aggregate, Answer, Argmax, Compare, Fact, Filter, Step, TimeConstraint, TypeConstraint
from pyql.terms import IRI, Literal, Term, Variable

if TYPE_CHECKING:
    from pyql.query import Query

__all__ = [
    "Block",
    "fold",
    "compile_query",
    "observation_query",
    "relations_query",
    "labels_query",
    "rows_query",
    "term_sparql",
    "COUNT_PREFIX",
    "LABEL_PREFIX",
]

COUNT_PREFIX = "__count_"
LABEL_PREFIX = "__label_"
_INDENT = "  "


def term_sparql(term: Term, profile: Profile) -> str:
    """A term as query text (IRIs shortened only where every engine agrees).

    Example:
        >>> from pyql.profiles import GENERIC
        >>> term_sparql(IRI("http://www.w3.org/2000/01/rdf-schema#label"), GENERIC)
        'rdfs:label'
    """
    if isinstance(term, IRI):
        return profile.sparql_iri(term.value)
    return term.sparql()


@dataclass
class Block:
    """One level of the folded query: a group pattern plus solution modifiers."""

    parts: list[str] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None
    computed: list[Variable] = field(default_factory=list)  # aggregate results: literals, never labelled
    one_row: bool = False  # a COUNT without GROUP BY (while nothing is added to it)

    @property
    def has_modifiers(self) -> bool:
        return bool(self.order) or self.limit is not None or self.offset is not None

    @property
    def max_rows(self) -> int | None:
        """A bound on the block's rows, when one is known: the LIMIT of an
        argmax, or 1 for a COUNT without GROUP BY and nothing added since."""
        if self.limit is not None:
            return self.limit
        if self.one_row and len(self.parts) == 1:
            return 1
        return None

    def add_variables(self, variables: Sequence[Variable]) -> None:
        for var in variables:
            if var not in self.variables:
                self.variables.append(var)

    def modifiers(self) -> str:
        out = ""
        if self.order:
            out += "ORDER BY " + " ".join(self.order) + "\n"
        if self.limit is not None:
            out += f"LIMIT {self.limit}\n"
        if self.offset:
            out += f"OFFSET {self.offset}\n"
        return out

    def group(self, indent: str = "") -> str:
        """The block's group pattern ``{ ... }`` (modifiers not included)."""
        inner = "".join(f"{indent}{_INDENT}{line}\n" for part in self.parts for line in part.split("\n"))
        return "{\n" + inner + indent + "}"

    def pattern(self, indent: str = "") -> str:
        """A group pattern equal to the block's rows: with modifiers, a sub-SELECT."""
        if not self.has_modifiers:
            return self.group(indent)
        mods = "".join(f"{indent}{_INDENT}{line}\n" for line in self.modifiers().split("\n") if line)
        return (
            "{\n" + f"{indent}{_INDENT}SELECT * WHERE " + self.group(indent + _INDENT) + "\n" + mods + indent + "}"
        )

    def nested(self) -> Block:
        """A new block whose only pattern is this block's rows."""
        return Block(parts=[self.pattern()], variables=list(self.variables), computed=list(self.computed))


def _comparison(left: Term, op: str, right: Term, profile: Profile) -> str:
    """A comparison; dates compare as text at the coarser of the two precisions."""
    date_side = next((t for t in (left, right) if isinstance(t, Literal) and t.is_date), None)
    other = right if date_side is left else left
    if date_side is not None and isinstance(other, Variable):
        constant = escape.literal(date_side.lexical)
        value = f"STR({other.sparql()})"
        var_text = f"SUBSTR({value}, 1, STRLEN({constant}))"
        const_text = f"SUBSTR({constant}, 1, STRLEN({value}))"
        lhs, rhs = (var_text, const_text) if other is left else (const_text, var_text)
        return f"(isLiteral({other.sparql()}) && {lhs} {op} {rhs})"
    return f"({term_sparql(left, profile)} {op} {term_sparql(right, profile)})"


def _order_key(var: Variable, descending: bool) -> str:
    # Numbers order as numbers; dates of mixed precision (xsd:date, gYear,
    # dateTime) order as their ISO text, which every engine agrees on.
    key = f"IF(isNumeric({var.sparql()}), {var.sparql()}, STR({var.sparql()}))"
    return f"DESC({key})" if descending else f"ASC({key})"


def _time_filters(step: TimeConstraint, index: int, profile: Profile) -> list[str]:
    v = step.var.sparql()
    names = [Variable(f"__t{index}_{i}") for i in range(4)]
    start = term_sparql(step.start_relation, profile)
    end = term_sparql(step.end_relation, profile)
    started = _comparison(names[1], "<=", step.start_before, profile)
    ended = _comparison(names[3], ">=", step.end_after, profile)
    return [
        f"FILTER(NOT EXISTS {{ {v} {start} {names[0].sparql()} }} || "
        f"EXISTS {{ {v} {start} {names[1].sparql()} . FILTER{started} }})",
        f"FILTER(NOT EXISTS {{ {v} {end} {names[2].sparql()} }} || "
        f"EXISTS {{ {v} {end} {names[3].sparql()} . FILTER{ended} }})",
    ]


@dataclass
class Folded:
    """The result of folding steps: the outer block, the answer and the query form."""

    block: Block
    answer: Variable | None
    ask: bool


def fold(steps: Sequence[Step], profile: Profile) -> Folded:
    """Fold steps into blocks (see the module docstring).

    Example:
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y").add_count("?x", "?n")
        >>> [str(v) for v in fold(q.steps, q.profile).block.variables]
        ['?n']
    """
    block = Block()
    answer: Variable | None = None
    ask = False
    for index, step in enumerate(steps):
        if isinstance(step, Fact):
            block.parts.append(
                f"{term_sparql(step.head, profile)} {term_sparql(step.relation, profile)} "
                f"{term_sparql(step.tail, profile)} ."
            )
            block.add_variables(step.variables())
        elif isinstance(step, TypeConstraint):
            block.parts.append(
                f"{step.var.sparql()} {profile.sparql_iri(profile.type_predicate)} {term_sparql(step.type, profile)} ."
            )
            block.add_variables([step.var])
        elif isinstance(step, Compare):
            if block.has_modifiers:
                block = block.nested()
            block.parts.append("FILTER" + _comparison(step.left, step.op, step.right, profile))
            ask = True
        elif isinstance(step, Filter):
            block.parts.append("FILTER" + _comparison(step.left, step.op, step.right, profile))
        elif isinstance(step, TimeConstraint):
            block.parts.extend(_time_filters(step, index, profile))
        elif isinstance(step, Argmax):
            if block.has_modifiers:
                block = block.nested()
            block.order = [_order_key(step.var, step.descending)]
            block.limit = step.limit
            block.offset = step.offset or None
        elif isinstance(step, Aggregate):
            distinct = "DISTINCT " if step.func == "COUNT" else ""
            group = " ".join(v.sparql() for v in step.group_by)
            select = (group + " " if group else "") + f"({step.func}({distinct}{step.var.sparql()}) AS {step.new_var.sparql()})"
            sub = "{\n" + f"{_INDENT}SELECT {select} WHERE " + block.pattern(_INDENT)
            if group:
                sub += f"\n{_INDENT}GROUP BY {group}"
            sub += "\n}"
            block = Block(
                parts=[sub],
                variables=[*step.group_by, step.new_var],
                computed=[step.new_var],
                one_row=step.func == "COUNT" and not step.group_by,
            )
            answer = None
        elif isinstance(step, Answer):
            answer = step.var
        else:  # pragma: no cover - every Step subclass is handled above
            raise QueryError(f"unknown step {step!r}")
    return Folded(block, answer, ask)


def compile_query(query: Query) -> str:
    """The SPARQL text of a query: PREFIX lines, then SELECT DISTINCT or ASK.

    Example:
        >>> from pyql.query import Query
        >>> print(compile_query(Query("generic")), end="")
        PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
        PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
        PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
        PREFIX owl: <http://www.w3.org/2002/07/owl#>
        SELECT * WHERE {
        }
    """
    folded = fold(query.steps, query.profile)
    block = folded.block
    head = query.profile.prefix_lines()
    if folded.ask:
        return head + "ASK WHERE " + block.pattern() + "\n"
    if folded.answer is not None and folded.answer in block.variables:
        projection = "DISTINCT " + folded.answer.sparql()
    elif block.variables:
        projection = "DISTINCT " + " ".join(v.sparql() for v in block.variables)
    else:
        projection = "*"
    return head + f"SELECT {projection} WHERE " + block.group() + "\n" + block.modifiers()


def _label_pattern(var: Variable, label: Variable, profile: Profile) -> str:
    path = "|".join(profile.sparql_iri(p) for p in profile.label_predicates)
    lang = escape.literal(profile.label_lang)
    return (
        f"OPTIONAL {{ {var.sparql()} {path} {label.sparql()} . "
        f'FILTER(LANG({label.sparql()}) = "" || LANGMATCHES(LANG({label.sparql()}), {lang})) }}'
    )


def _indent(text: str, indent: str) -> str:
    return "".join(indent + line + "\n" for line in text.split("\n") if line)


def observation_query(query: Query, per_variable: int = 10) -> tuple[str, list[Variable]]:
    """One bounded query giving, for every visible variable (only the answer
    variable once one is set), up to ``per_variable`` distinct values with
    labels, and its total distinct count.

    The result has one row with the counts (``?__count_<var>``) and one row
    per sampled value (``?<var>`` bound, label in ``?__label_<var>``). When
    the query has at most ``per_variable`` rows anyway (after an argmax, or a
    count without group), the query is instead those rows with labels
    (as :func:`rows_query`) and has no count row: every value is in them, so
    the counts are the numbers of distinct values, and the rows (an ORDER BY
    over everything, an aggregate) are computed once instead of once per
    variable plus once for the counts.

    Example:
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c")
        >>> text, variables = observation_query(q)
        >>> [str(v) for v in variables], text.count("UNION")
        (['?c'], 1)
        >>> text = observation_query(q.add_fact("?c", "a.b.since", "?t").add_max("?t"))[0]
        >>> text.count("UNION"), COUNT_PREFIX in text, text.count("OPTIONAL")
        (0, False, 2)
        >>> grouped = q.add_fact("?x", "a.b.c", "?y").add_sum("?y", "?total", group_by=["?c"])
        >>> observation_query(grouped)[0].count("OPTIONAL")  # none for ?total: a number has no label
        1
    """
    if per_variable < 1:
        raise QueryError(f"per_variable must be ≥ 1, got {per_variable}")
    folded = fold(query.steps, query.profile)
    block = folded.block
    variables = [folded.answer] if folded.answer in block.variables else list(block.variables)
    if not variables:
        raise QueryError("the query has no variable to observe yet; add a fact with a variable such as ?x")
    bound = block.max_rows
    if bound is not None and bound <= per_variable:
        return query.profile.prefix_lines() + _labelled_rows(block, variables, bound, query.profile), variables
    core = block.pattern()
    counts = " ".join(f"(COUNT(DISTINCT {v.sparql()}) AS ?{COUNT_PREFIX}{v.name})" for v in variables)
    branches = ["{\n" + f"{_INDENT}SELECT {counts} WHERE\n" + _indent(core, _INDENT) + "}"]
    for v in variables:
        raw = Variable("__l")
        if v in block.computed:
            # An aggregate's result is a literal (or unbound after an error):
            # no label to look up, and an OPTIONAL on a possibly unbound
            # variable would match every label in the KB.
            sample = f"SELECT DISTINCT {v.sparql()} WHERE\n" + _indent(core, _INDENT) + f"LIMIT {int(per_variable)}"
            branches.append("{\n" + _indent(sample, _INDENT) + "}")
            continue
        sample = (
            f"SELECT {v.sparql()} (SAMPLE({raw.sparql()}) AS ?{LABEL_PREFIX}{v.name}) WHERE {{\n"
            f"{_INDENT}{{ SELECT DISTINCT {v.sparql()} WHERE\n"
            + _indent(core, _INDENT * 2)
            + f"{_INDENT}  LIMIT {int(per_variable)} }}\n"
            f"{_INDENT}{_label_pattern(v, raw, query.profile)}\n"
            f"}} GROUP BY {v.sparql()}"
        )
        branches.append("{\n" + _indent(sample, _INDENT) + "}")
    body = "\nUNION\n".join(branches)
    return query.profile.prefix_lines() + "SELECT * WHERE {\n" + _indent(body, _INDENT) + "}\n", variables


def rows_query(query: Query, limit: int) -> tuple[str, list[Variable]]:
    """The query's projected rows with a label per variable, at most ``limit`` rows.

    Example:
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "?y").set_answer("?x")
        >>> [str(v) for v in rows_query(q, 5)[1]]
        ['?x']
    """
    folded = fold(query.steps, query.profile)
    block = folded.block
    if folded.answer is not None and folded.answer in block.variables:
        projected = [folded.answer]
    else:
        projected = list(block.variables)
    if not projected:
        raise QueryError("the query has no variable to return yet; add a fact with a variable such as ?x")
    return query.profile.prefix_lines() + _labelled_rows(block, projected, limit, query.profile), projected


def _labelled_rows(block: Block, projected: Sequence[Variable], limit: int, profile: Profile) -> str:
    """SELECT of the block's distinct ``projected`` rows (at most ``limit``), a label per variable."""
    names = " ".join(v.sparql() for v in projected)
    labelled = [v for v in projected if v not in block.computed]  # aggregate results have no label
    samples = "".join(f" (SAMPLE(?__l_{v.name}) AS ?{LABEL_PREFIX}{v.name})" for v in labelled)
    labels = "".join(_INDENT + _label_pattern(v, Variable(f"__l_{v.name}"), profile) + "\n" for v in labelled)
    return (
        f"SELECT {names}{samples} WHERE {{\n"
        + f"{_INDENT}{{ SELECT DISTINCT {names} WHERE\n"
        + _indent(block.pattern(), _INDENT * 2)
        + f"{_INDENT}  LIMIT {int(limit)} }}\n"
        + labels
        + f"}} GROUP BY {names}\n"
    )


def relations_query(
    target: Term, query: Query | None, profile: Profile, limit: int = 2000, sample: int = 100
) -> str:
    """One query for the one-hop relations of an entity, a literal or a variable.

    For a variable, the relations of up to ``sample`` of its current values
    are gathered. Rows bind ``?__dir`` ("forward"/"backward") and ``?__r``.
    Relations the profile hides are filtered in the query, so they do not
    use up the limit.

    Example:
        >>> from pyql.profiles import FREEBASE
        >>> text = relations_query(IRI("http://rdf.freebase.com/ns/m.0crbvqz"), None, FREEBASE)
        >>> text.count("UNION"), "STRSTARTS" in text
        (1, True)
        >>> from pyql.query import Query
        >>> q = Query("freebase").add_fact("?x", "a.b.c", "m.0crbvqz")
        >>> "OPTIONAL {" in relations_query(Variable("x"), q, FREEBASE)
        True
    """
    if isinstance(target, Variable):
        if query is None:
            raise QueryError(f"the relations of {target} need the query that binds it")
        block = fold(query.steps, query.profile).block
        if target not in block.variables:
            existing = ", ".join(str(v) for v in block.variables) or "none yet"
            raise QueryError(f"{target} is not a variable of the query; existing variables: {existing}")
        subject = target.sparql()
        source = f"{{ SELECT DISTINCT {subject} WHERE\n" + _indent(block.pattern(), _INDENT) + f"  LIMIT {int(sample)} }}\n"
    else:
        subject = term_sparql(target, profile)
        source = ""
    forward = f'{{ {subject} ?__r ?__o . BIND("forward" AS ?__dir) }}'
    backward = f'{{ ?__s ?__r {subject} . BIND("backward" AS ?__dir) }}'
    union = backward if isinstance(target, Literal) else f"{forward}\nUNION\n{backward}"
    if source:
        # rdflib evaluates both sides of a join with a sub-SELECT in full (here:
        # every triple, twice) but an OPTIONAL once per row, with the sampled
        # value bound. BOUND drops values without relations: the join's rows.
        union = "OPTIONAL {\n" + _indent(union, _INDENT) + "}\nFILTER(BOUND(?__r))"
    hidden = "".join(
        f"FILTER(!STRSTARTS(STR(?__r), {escape.literal(prefix)}))\n" for prefix in profile.hidden_relation_prefixes
    )
    return (
        profile.prefix_lines()
        + "SELECT DISTINCT ?__dir ?__r WHERE {\n"
        + _indent(source + union + "\n" + hidden, _INDENT)
        + f"}}\nLIMIT {int(limit)}\n"
    )


def labels_query(terms: Sequence[Term], profile: Profile) -> str:
    """One query for the labels of the given IRIs (``?__e`` and ``?__label``).

    Example:
        >>> from pyql.profiles import FREEBASE
        >>> "VALUES ?__e" in labels_query([IRI("http://rdf.freebase.com/ns/m.0crbvqz")], FREEBASE)
        True
    """
    values = " ".join(term_sparql(t, profile) for t in terms if isinstance(t, IRI))
    entity = Variable("__e")
    return (
        profile.prefix_lines()
        + "SELECT ?__e (SAMPLE(?__l) AS ?__label) WHERE {\n"
        + f"{_INDENT}VALUES ?__e {{ {values} }}\n"
        + f"{_INDENT}{_label_pattern(entity, Variable('__l'), profile)}\n"
        + "} GROUP BY ?__e\n"
    )
