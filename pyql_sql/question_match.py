"""How a question names a table's columns and cells: the matching the table's choose list and its question shapes share.

Read by :mod:`pyql_sql.next_steps` (the conditions and answers of the choose
list), :mod:`pyql_sql.shapes` (the step plans a question's shape asks for)
and :mod:`pyql_sql.mutation_steps`:

* the words of a header and of a question, stemmed, abbreviations spelt out
  (:func:`column_words`, :data:`ABBREVIATIONS`), and where the question names
  each column (:func:`header_mentions`);
* the cells the question writes, its numbers and dates matched to cells, and
  its comparisons, as :class:`ConditionCandidate` s (:func:`condition_candidates`);
* the column a *which/what* or *who* question asks for (:func:`asked_column`, :func:`who_column`).

Example:
    >>> from pyql_sql.table import Table
    >>> t = Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"]])
    >>> [(c.column, c.value) for c in condition_candidates(t, "games against athlone town?")]
    [(1, 'Athlone Town')]
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace as _replace
from functools import lru_cache
from typing import Any

from pyql.environment.grounding import Cue, Grounding, ground, parse_date

from .numbers import format_number, parse_duration, parse_number
from .parts import cell_date, cell_words
from .steps import action_value
from .table import Column, Table

__all__ = [
    "ABBREVIATIONS", "SYNONYMS", "MONTH_DAY", "ConditionCandidate", "measure_words", "MAX_CELLS", "PERSON_HEADERS", "TABLE_SUPERLATIVES", "table_ground", "action_value", "asked_column", "cell_core", "cell_names", "best_per_span", "column_text",
    "column_words", "condition_candidates", "header_mentions", "stem", "stems", "table_cells", "text_matches", "who_column",
    "words_between", "compared_op", "duration_seconds", "timed_cells",
]


_WORD = re.compile(r"[a-z0-9]+")


_STOP = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "are", "was", "were", "be", "been", "has", "have", "had", "what", "which", "who", "whom", "whose", "when", "where", "how", "that", "this", "it", "its", "as", "name", "tell", "me"])


#: How a data set's questions are written, which changes what some of them ask: ``"natural"``, people's questions
#: (WikiTableQuestions, a user's own: "which game had the most in attendance" asks for the game) and ``"sql"``,
#: questions written from a SQL query (WikiSQL, dbbench: "which match had the largest crowd" asks for ``MAX(Crowd)``).
QUESTION_STYLES = ("natural", "sql")

#: Words between a header and its value ("Goal of 17", "Nation is Iran", "listed as August 15, 2000").
_LINK = frozenset(["of", "is", "was", "are", "were", "as", "listed", "at", "has", "have", "had", "with", "for", "equal", "equals", "to", "being", "named", "called", "a", "an", "the"])


_COMPARING = frozenset(["than", "smaller", "larger", "less", "more", "greater", "fewer", "bigger", "lower", "higher", "over", "under", "least", "most", "at"])


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("sses"):
        return word[:-2]  # "losses" is "loss", "classes" is "class"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


#: Header abbreviations and the word a question writes for them ("No." is "number", "Pts" is "points").
ABBREVIATIONS: dict[str, str] = {
    "no": "number", "num": "number", "nr": "number", "#": "number", "pos": "position", "pts": "point",
    "pt": "point", "yr": "year", "yrs": "year", "avg": "average", "pct": "percentage", "att": "attendance",
    "pop": "population", "elev": "elevation", "ht": "height", "wt": "weight", "dist": "district",
    "gp": "game", "apps": "appearance", "app": "appearance", "gls": "goal", "ep": "episode", "eps": "episode",
    "seas": "season", "mgr": "manager", "dir": "director", "approx": "approximate", "est": "established",
    "won": "win", "w": "win", "lost": "loss", "l": "loss", "drawn": "draw", "d": "draw",
}


#: Words a question writes for a header's word that mean the same ("country" names ``Nation``; British spellings).
SYNONYMS: dict[str, frozenset[str]] = {
    "nation": frozenset(["country"]), "country": frozenset(["nation"]), "licence": frozenset(["license"]),
    "qty": frozenset(["quantity"]), "colour": frozenset(["color"]), "metre": frozenset(["meter"]),
    "centre": frozenset(["center"]), "programme": frozenset(["program"]), "kilometre": frozenset(["kilometer"]),
}


def _stems(text: str) -> list[str]:
    """The stemmed words of a header or question, abbreviations spelt out (``No.`` → ``number``, ``#`` → ``number``)."""
    words = _WORD.findall(text.lower())
    if not words and text.strip() == "#":
        words = ["#"]
    return [ABBREVIATIONS.get(w, _stem(w)) if len(words) <= 3 else _stem(w) for w in words]


def column_words(header: str) -> str:
    """A header as words a model scores (abbreviations spelt out): what :class:`agent.llm.likelihood.RelationPMI` reads.

    Example:
        >>> column_words("No."), column_words("School/Club Team"), column_words("Pts")
        ('number', 'school club team', 'points')
    """
    words = _WORD.findall(header.lower()) or (["#"] if header.strip() == "#" else [])
    spelt = {"point": "points", "goal": "goals", "game": "games", "year": "years", "episode": "episodes", "appearance": "appearances"}
    out = [spelt.get(ABBREVIATIONS[w], ABBREVIATIONS[w]) if w in ABBREVIATIONS and len(words) <= 3 else w for w in words]
    return " ".join(out)


@dataclass(frozen=True)
class ConditionCandidate:
    """A condition the question grounds: column, operator, value, where in the question, how strong.

    Attributes:
        column: the column index.
        op: the operator.
        value: the value as the action writes it (a cell as the table writes it, or the question's number).
        start, end: the span of the value in the question.
        score: how strongly the question asks for it (higher first).
    """

    column: int
    op: str
    value: str
    start: int
    end: int
    score: float


#: What "how many <noun>" measures when the noun names no column: the header words of the column that holds it.
#: "people" depends on the verb after it (who attend, live or sit); a unit is any column in that unit.
_MEASURE_NOUNS: dict[str, frozenset[str]] = {
    "feet": frozenset(["ft", "feet", "foot"]), "foot": frozenset(["ft", "feet", "foot"]),
    "meters": frozenset(["m", "meters", "metres"]), "metres": frozenset(["m", "meters", "metres"]),
    "kilometers": frozenset(["km", "kilometers", "kilometres"]), "kilometres": frozenset(["km", "kilometers", "kilometres"]),
    "km": frozenset(["km", "kilometers", "kilometres"]), "miles": frozenset(["mi", "miles"]),
    "dollars": frozenset(["usd", "dollars", "us"]), "kilograms": frozenset(["kg"]), "kg": frozenset(["kg"]),
    "pounds": frozenset(["lb", "lbs", "pounds"]), "inhabitants": frozenset(["population", "inhabitants"]),
    "residents": frozenset(["population", "residents"]), "spectators": frozenset(["attendance", "spectators", "crowd"]),
    "fans": frozenset(["attendance", "crowd", "spectators"]), "attendees": frozenset(["attendance", "crowd", "attendees"]),
}
#: The verb after "how many people" and what it counts: "attended" an Attendance, "live" a Population, "seat" a Capacity.
_PEOPLE_VERBS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(?:attend|attended|attending|watched|saw|came|went)\b"), frozenset(["attendance", "crowd", "spectators", "attendees"])),
    (re.compile(r"\b(?:live|lived|lives|living|reside|resided|inhabit|inhabited|populate|populated)\b"),
     frozenset(["population", "inhabitants", "residents", "pop"])),
    (re.compile(r"\b(?:seat|seats|sit|hold|holds|fit|fits|accommodate|accommodates)\b"), frozenset(["capacity", "seats", "seating"])),
)


def measure_words(noun: str, context: str) -> frozenset[str] | None:
    """The header words of the column a noun measures ("feet": ``ft``; "people" by the verb in ``context``: "attended"
    an Attendance, "live" a Population, "seat" a Capacity), or None when it measures nothing known.

    Example:
        >>> sorted(measure_words("feet", "above sea level")), sorted(measure_words("people", "attended the game"))
        (['feet', 'foot', 'ft'], ['attendance', 'attendees', 'crowd', 'spectators'])
        >>> measure_words("people", "were born in june") is None
        True
    """
    if noun in ("people", "persons"):
        return next((w for verb, w in _PEOPLE_VERBS if verb.search(context)), None)
    return _MEASURE_NOUNS.get(noun)


#: The strength of a header named by its verb (:func:`_verb_forms`): weaker than a word of it written (1). A *who*
#: question's column is named by a mention stronger than this, so a verb after *who* ("who was picked first") is what
#: the person did, not the column asked (nor is one header word found alone, out of its run: 0.5).
VERB_STRENGTH = 0.75


def _verb_forms(word: str) -> frozenset[str]:
    """The forms of a verb a question writes for a one-word header made of it: ``gross`` → grossing, grossed;
    ``establishment`` → established, establishing (words of 4 letters or more).

    Example:
        >>> sorted(_verb_forms("gross")), sorted(_verb_forms("establishment"))
        (['grossed', 'grossing'], ['established', 'establishing'])
    """
    root = word[:-4] if word.endswith("ment") and len(word) > 8 else word
    if len(root) < 4 or not root.isalpha():
        return frozenset()
    return frozenset([root + "ing", root + "ed"] if not root.endswith("e") else [root[:-1] + "ing", root + "d"])


def header_mentions(table: Table, question: str) -> dict[int, tuple[int, int, float]]:
    """Where the question names each column: column index → (start, end, strength).

    A header written whole (case aside, ``Frequency MHz``) has strength 3 plus
    its length in words; otherwise the longest run of its words (stems:
    ``touchdowns`` names ``Touchdowns``, ``Silvers`` names ``Silver``) scores one
    per word. A header's abbreviation is matched as written and spelt out
    (``No.`` is named by "no." and by "number", :data:`ABBREVIATIONS`), a word by its synonyms (``Nation`` by
    "country", :data:`SYNONYMS`). Stop words alone name nothing.

    Example:
        >>> t = Table.from_rows(["Frequency MHz", "Class", "Call sign"], [["1", "D", "K"]])
        >>> header_mentions(t, "Class of d with a Frequency MHz smaller than 107.7 has what call signs?")
        {0: (18, 31, 5.0), 1: (0, 5, 4.0), 2: (60, 70, 5.0)}
        >>> header_mentions(Table.from_rows(["Nation", "Qty. Issued"], [["Peru", "1"]]), "which country had the greatest quantity issued?")
        {0: (6, 13, 4.0), 1: (31, 46, 5.0)}
    """
    words = [(m.start(), m.end(), _stem(m.group())) for m in _WORD.finditer(question.lower())]
    out: dict[int, tuple[int, int, float]] = {}
    for col in table.columns:
        target = _stems(col.header)
        if not target:
            continue
        written = [_stem(w) for w in _WORD.findall(col.header.lower())]
        options = [{t, w} for t, w in zip(target, written)] if len(written) == len(target) else [{t} for t in target]
        options = [o.union(*(SYNONYMS.get(w, frozenset()) for w in o)) for o in options]
        verbs = frozenset().union(*(_verb_forms(w) for w in options[0])) if len(options) == 1 else frozenset()
        best: tuple[int, int, float] | None = None
        for i in range(len(words)):
            n = 0  # a word as the header writes it or spelt out ("No." is "no" and "number")
            while i + n < len(words) and n < len(target) and words[i + n][2] in options[n]:
                n += 1
            if n == 0 or all(words[i + k][2] in _STOP for k in range(n)):
                continue
            strength = (3.0 + n) if n == len(target) else float(n)
            if best is None or strength > best[2]:
                best = (words[i][0], words[i + n - 1][1], strength)
        if best is None:  # the header's words anywhere (not in a run)
            loose = [w for w in words if w[2] in set().union(*options) - _STOP]
            if loose:
                best = (loose[0][0], loose[0][1], 0.5 * len({w[2] for w in loose}))
        if best is None:  # a one-word header by its verb: "highest grossing" names Gross, "scored" Score
            verb = next((w for w in words if w[2] in verbs), None)
            best = (verb[0], verb[1], VERB_STRENGTH) if verb is not None else None
        if best is not None:
            out[col.index] = best
    whole = {i: m for i, m in out.items() if m[2] >= 3}
    for i, m in list(out.items()):  # "home team" inside "home team score": the longer header is named, not this one
        if any(j != i and o[0] <= m[0] and m[1] <= o[1] and (o[1] - o[0]) > (m[1] - m[0]) for j, o in whole.items()):
            del out[i]
    return out


def _near(question: str, mention: tuple[int, int, float] | None, start: int, end: int) -> float:
    """How close a header mention is to a value span: 2 when only linking words stand between, else 0."""
    if mention is None:
        return 0.0
    m_start, m_end, _ = mention
    if m_end <= start:
        between = _WORD.findall(question[m_end:start].lower())
    elif end <= m_start:
        between = _WORD.findall(question[end:m_start].lower())
    else:
        return 0.0
    if len(between) > 3:
        return 0.0
    if all(w in _LINK or w in _COMPARING for w in between):
        return 2.0
    return 1.0  # a few other words between ("Takashi Kogure got the fastest lap")


#: The most distinct cells of one column matched against a question.
MAX_CELLS = 5000


def _cells(table: Table) -> list[tuple[Column, list[str]]]:
    """Each column with its distinct non-empty cells (read through the table's read-only executor)."""
    executor = table.executor()
    out = []
    for col in table.columns:
        values = executor.get_column(col.index, limit=MAX_CELLS).values
        out.append((col, [str(v) for v in values if v is not None and str(v).strip()]))
    return out


_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"


_DASH = re.compile(f"[{_DASHES}]")


def _word_pattern(word: str) -> str:
    """A cell's word as a pattern: any dash matches any dash (``1996-97`` is the cell ``1996–97``)."""
    return f"[{_DASHES}]".join(re.escape(part) for part in _DASH.split(word))


#: A cell's trailing marks: footnote signs and symbols (``Raw ¥¥``, ``Smith†``, ``Close≠``), a citation ``[3]``.
_MARKS = re.compile(r"(?:\s*(?:\[[^\]]*\]|[^\w\s)\]\"'.!?&%$€£]+))+$")


#: A cell's leading marks: a footnote sign or a bullet before the name (``^ Juk Faat Wan``, ``* Smith``); not a
#: quote, a bracket, a sign of a number or a currency, nor ``@`` and ``#`` (an away game, a number).
_LEADING_MARKS = re.compile(r"^(?:[^\w\s(\[\"'“‘$€£¥#@+\-\u2212.]+\s*)+")


def cell_core(cell: str) -> str:
    """A cell without its footnote marks and citations (trailing, or a sign before it): what a question writes of it.

    Example:
        >>> cell_core("Raw ¥¥"), cell_core("Moses Malone*"), cell_core("Smith [3]"), cell_core("The Alarm (EP)")
        ('Raw', 'Moses Malone', 'Smith', 'The Alarm (EP)')
        >>> cell_core("^ Juk Faat Wan"), cell_core("@ Braves"), cell_core("$5,000"), cell_core("† Smith")
        ('Juk Faat Wan', '@ Braves', '$5,000', 'Smith')
    """
    return _LEADING_MARKS.sub("", _MARKS.sub("", cell)).strip()


_DETAIL = re.compile(r"\s*\([^()]*\)\s*$")


def cell_names(cell: str) -> tuple[str, ...]:
    """The ways a question may write a cell: as it is, without its trailing marks, without a parenthesized detail
    at its end (``Great Britain (GBR)``: ``Great Britain``, as WTQ's answers drop it), without the quotes of a title
    (``"Cheat on You"``).

    Example:
        >>> cell_names("Great Britain (GBR)"), cell_names("Raw ¥¥")
        (('Great Britain (GBR)', 'Great Britain'), ('Raw ¥¥', 'Raw'))
        >>> cell_names('"The Return" (Part 1)')
        ('"The Return" (Part 1)', '"The Return"', 'The Return')
    """
    core = cell_core(cell)
    bare = _DETAIL.sub("", core).strip()
    unquoted = bare[1:-1].strip() if len(bare) > 2 and bare[0] in "\"“'" and bare[-1] in "\"”'" else ""  # a title: "Cheat on You"
    return tuple(dict.fromkeys(n for n in (cell, core, bare, unquoted) if n))


def fold(text: str) -> str:
    """The text with its letters' accents dropped, one character for one (so spans carry over): ``Montréal`` is ``Montreal``.

    Example:
        >>> fold("Montréal-Pierre Böltz Águila"), len(fold("Montréal")) == len("Montréal")
        ('Montreal-Pierre Boltz Aguila', True)
    """
    return "".join(_fold_char(ch) for ch in text)


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    if ch.isascii():
        return ch
    base = unicodedata.normalize("NFKD", ch)[:1]
    return base if base.isascii() and base.isalpha() else ch


def _text_matches(question: str, cells: list[str]) -> list[tuple[str, int, int]]:
    """The cells the question writes (case, spacing, accents and the kind of dash aside; a cell's trailing marks left
    out), with their spans."""
    out = []
    folded = fold(question)
    for cell in cells:
        for written in cell_names(cell):
            words = fold(written).split()
            if not words or len(written) > 80:
                continue
            plural = "(?:e?s)?" if words[-1][-1:].isalpha() and (len(words[-1]) > 2 or words[-1].isupper() and len(words[-1]) == 2) else ""
            # "middle blockers" names "Middle blocker", "qbs" the position QB
            pattern = r"(?<!\w)" + r"\s+".join(_word_pattern(w) for w in words) + plural + r"(?!\w)"
            m = re.search(pattern, folded, re.IGNORECASE)
            if m is not None:
                out.append((cell, m.start(), m.end()))
                break
    return out


def condition_candidates(
    table: Table, question: str, grounding: Grounding | None = None, *, scores: Mapping[str, float] | None = None,
) -> list[ConditionCandidate]:
    """The conditions the question grounds on this table, strongest first (not yet checked against rows).

    Three sources, scored against the same header mentions: the cells the
    question writes, its numbers and dates matched to cells, and its
    comparisons (``between`` gives a ``>=`` and a ``<=``). A number the
    question writes with no header next to it is matched to a numeric column
    the model rates for the question (``scores``, header → PMI) a little
    higher. A number or date inside a longer cell the question writes
    (``1996`` in ``1996-97``) is that cell, not a value of its own.

    Example:
        >>> t = Table.from_rows(["Goal", "Result", "Competition"], [["16", "2–1", "Friendly"], ["18", "2–1", "Cup"]])
        >>> q = "Which Score has a Result of 2–1, and a Competition of friendly, and a Goal smaller than 17?"
        >>> [(t.columns[c.column].header, c.op, c.value) for c in condition_candidates(t, q)]
        [('Goal', '<', '17'), ('Competition', '=', 'Friendly'), ('Result', '=', '2–1')]
    """
    g = grounding or table_ground(question)
    return _best_per_span(_all_candidates(table, question, g, scores, _cells(table)))


def _all_candidates(
    table: Table, question: str, g: Grounding, scores: Mapping[str, float] | None, cells: list[tuple[Column, list[str]]],
) -> list[ConditionCandidate]:
    """Every grounded condition, before the strongest of each span is chosen (numbers inside a cell left out)."""
    mentions = header_mentions(table, question)
    compared = {(v.start, v.end) for _, v in g.comparisons()}
    out: list[ConditionCandidate] = []
    for col, values in cells:
        mention = mentions.get(col.index)
        out += _cell_candidates(question, col, values, mention, compared, categories=len(values) < table.row_count)
        bonus = 0.0 if mention is not None else min(max((scores or {}).get(col.header, 0.0), 0.0), 2.0) / 2
        out += _value_candidates(question, g, col, values, mention, compared, bonus)
    out += _comparison_candidates(table, question, g, mentions, cells)
    out += _word_number_candidates(table, question, mentions, cells)
    out += _month_day_candidates(question, g, mentions, cells)
    out += _empty_candidates(table, question, mentions)
    out += _total_candidates(table, question, g, mentions, cells, compared)
    out += _contains_candidates(question, cells, mentions, out, [(v.start, v.end) for v in g.values])
    return _outside_cells(out)


#: Question words that name no value a cell holds inside it: the words of asking, counting, ordering and time.
_NOT_VALUES = frozenset([
    "many", "much", "more", "most", "less", "least", "fewer", "than", "times", "time", "number", "numbers", "total",
    "there", "their", "they", "them", "then", "does", "did", "done", "other", "others", "only", "also", "each", "every",
    "both", "either", "neither", "same", "different", "before", "after", "during", "between", "first", "last", "next",
    "previous", "list", "listed", "named", "give", "show", "take", "took", "made", "make", "come", "came", "went", "have",
    "having", "been", "being", "were", "what", "which", "where", "when", "whom", "whose", "with", "without", "into",
    "onto", "over", "under", "above", "below", "about", "from", "that", "this", "these", "those", "year", "years",
    "amount", "average", "highest", "lowest", "largest", "smallest", "longest", "shortest", "best", "worst",
    "top", "difference", "combined", "consecutive", "until", "since", "while", "some", "any", "all", "placed",
    "place", "earliest", "latest", "whole", "entire", "game", "games", "season", "seasons", "win", "wins", "won",
    "winning", "lose", "loses", "lost", "play", "plays", "played", "playing", "score", "scored", "scores",
])


def _contains_candidates(
    question: str, cells: list[tuple[Column, list[str]]], mentions: Mapping[int, tuple[int, int, float]],
    found: list[ConditionCandidate], values: list[tuple[int, int]] = (),  # type: ignore[assignment]
) -> list[ConditionCandidate]:
    """``column contains words`` for a name the question writes that a text column's cells hold inside them
    ("how many games took place in ostrava?": ``Ostrava, Czech Republic``, ``Ostrava, CZE``).

    A phrase of one to three words of the question, the longest first, that can be a value (:func:`_unfit_phrase`),
    is not inside a header the question names, a number or date of the question (``values``) or a cell of the column
    the question writes (whole, by its first or last word, by a demonym), is no cell itself, is not the end of a
    longer name (:func:`_longer_name`: "terence cuneo" does not name the ``Cuneo Society``), and that the cells hold
    as a name (:func:`_named_in`, whole words: :func:`pyql_sql.parts.cell_words`).

    It scores 2 (listed), more when several cells hold it, for each word and next to its column's header
    (:func:`_near`), and below a cell (of another column) the question writes whole on its span, which leads.

    Example:
        >>> t = Table.from_rows(["Venue", "Result"], [["Ostrava, Czech Republic", "W"], ["Ostrava, CZE", "L"], ["Praha", "W"]])
        >>> q = "how many games took place in ostrava?"
        >>> [(c.column, c.op, c.value) for c in _contains_candidates(q, _cells(t), header_mentions(t, q), [])]
        [(0, 'contains', 'Ostrava')]
        >>> _contains_candidates("how many games were not in ostrava?", _cells(t), {}, [])
        []
    """
    folded = fold(question)
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(folded.lower())]
    asked = {words[i + 1][2] for i in range(len(words) - 1) if words[i][2] in ("which", "what")}
    skip = [(m[0], m[1]) for m in mentions.values() if m[2] >= 1] + list(values)
    out: list[ConditionCandidate] = []
    for col, texts in cells:
        if col.is_numeric or not texts:
            continue
        header = set(_stems(col.header)) | {_stem(w) for w in _WORD.findall(col.header.lower())}
        cell_texts = [(cell, cell_words(cell)) for cell in texts]
        whole = {cell_words(n) for cell in texts for n in cell_names(cell)}
        taken = [(c.start, c.end) for c in found if c.column == col.index and c.op in ("=", "!=")]
        mention = mentions.get(col.index)
        for n in (3, 2, 1):
            for i in range(len(words) - n + 1):
                span = words[i : i + n]
                start, end, phrase = span[0][0], span[-1][1], " ".join(w for *_, w in span)
                if any(s < end and start < e for s, e in skip + taken):
                    continue
                if f" {phrase} " in whole:
                    taken.append((start, end))  # a cell the question writes: neither it nor a part of it is a contains
                    continue
                if _unfit_phrase(question, span, phrase, asked, header):
                    continue
                holding = [cell for cell, t in cell_texts if f" {phrase} " in t]
                near = _near(question, mention, start, end)
                written = _named_in(holding, len(texts), phrase, n, near)
                if written is None or _longer_name(folded, words, i, n, cell_texts):
                    continue  # a part of a longer name ("terence cuneo", "ancient woods", "manchester united")
                taken.append((start, end))
                score = 2.0 + 0.1 * (len(holding) > 1) + 0.1 * (n - 1) + 2 * near  # a name of several cells first
                out.append(ConditionCandidate(col.index, "contains", written[0], start, end, score))  # as the cells write it
    return [_below_cells(c, [o for o in found if o.op == "=" and o.score >= 2.0]) for c in out]


def _named_in(holding: list[str], cells: int, phrase: str, n: int, near: float) -> list[str] | None:
    """The phrase as the cells that hold it write it, when they hold it as a name: by two cells or more (one when
    the phrase has two words or its header is next to it), not by all or most of the column's ``cells`` (``Lake``
    of a column of lakes names no row), capitalised as a name in most of them (not the ``directed`` of a note)."""
    if not holding or (len(holding) == 1 and n == 1 and near < 2):
        return None
    if (cells > 1 and len(holding) == cells) or (cells >= 4 and 2 * len(holding) > cells):
        return None
    written = [w for w in (_written(cell, phrase) for cell in holding) if w is not None]
    return written if 2 * len(written) >= len(holding) else None


def _unfit_phrase(question: str, span: list[tuple[int, int, str]], phrase: str, asked: set[str], header: set[str]) -> bool:
    """Whether a phrase of the question cannot be a value held inside cells (:func:`_contains_candidates`' first two
    rules): a stop, asking, counting or month word at an end, what a *which* asks for, under 4 letters, a word of the
    column's header, after a negation."""
    start, ends = span[0][0], (span[0][2], span[-1][2])
    return bool(any(w in _STOP or w in _NOT_VALUES or w in _MONTH_WORDS for w in ends) or span[0][2] in asked
                or sum(ch.isalpha() for ch in phrase) < 4 or (len(span) == 1 and not phrase.isalpha())
                or any(_stem(w) in header for *_, w in span) or _NEGATED.search(question[max(0, start - 30) : start])
                or _NO_BEFORE.search(question[:start]))


def _longer_name(folded: str, words: list[tuple[int, int, str]], i: int, n: int, cells: list[tuple[str, str]]) -> bool:
    """Whether the phrase of ``n`` question words from word ``i`` is a part of a longer name the question writes.

    As a cell's first word that is followed by another than the cell's second (:func:`_first_word_matches`): on a
    side where the cells holding the phrase go on with another word (``Manchester City``, ``see Cuneo Society``), the
    question's word right there (no punctuation between; no stop word nor a word of asking, :data:`_NOT_VALUES`)
    must go on with the phrase in a cell too ("manchester united" names no ``Manchester City``); on a side where
    the cells end, the question may go on ("the braves appear": ``Atlanta Braves``).

    Example:
        >>> q = "last opponent for manchester united?"
        >>> w = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(q)]
        >>> _longer_name(q, w, 3, 1, [("Manchester City", " manchester city ")])
        True
        >>> q = "did the braves appear?"
        >>> _longer_name(q, [(m.start(), m.end(), m.group()) for m in _WORD.finditer(q)], 2, 1, [("Atlanta Braves", " atlanta braves ")])
        False
    """
    phrase = " ".join(w for *_, w in words[i : i + n])
    holding = [t for _, t in cells if f" {phrase} " in t]
    for j, joined in ((i - 1, "{} " + phrase), (i + n, phrase + " {}")):
        if not 0 <= j < len(words):
            continue
        gap = folded[words[j][1] : words[i][0]] if j < i else folded[words[i + n - 1][1] : words[j][0]]
        side = (lambda t: not t.startswith(f" {phrase} ")) if j < i else (lambda t: not t.endswith(f" {phrase} "))
        if gap.strip() or not any(side(t) for t in holding):
            continue  # punctuation between (another part of the sentence), or the cells end there
        word = words[j][2]
        if word.isalpha() and word not in _STOP and word not in _NOT_VALUES and not any(f" {joined.format(word)} " in t for t in holding):
            return True
    return False


#: Words right before a phrase that say the rows do not hold it, besides a negation (:data:`_NEGATED`): "no",
#: "without", "not" a few words before ("not against the braves").
_NO_BEFORE = re.compile(r"(?:\b(?:no|without|non|not|never)|n't)(?:\s+\w+){0,2}\s+$", re.IGNORECASE)


#: Month names and their abbreviations: a date's word, read by the date conditions (``add_part``), not by ``contains``.
_MONTH_WORDS = frozenset(m.lower() for m in (*calendar.month_name, *calendar.month_abbr) if m) | {"sept"}


def _written(cell: str, phrase: str) -> str | None:
    """A phrase's words as a cell writes them, when it writes them capitalised, as a name (``Atlanta Braves``,
    ``BRAVES``, a number), else None (the ``directed`` of a note, or no such words).

    Example:
        >>> _written("@ Atlanta Braves", "braves"), _written("directed by Sridhar", "directed")
        ('Braves', None)
        >>> _written("Stade de Montréal", "montreal")
        'Montréal'
    """
    wanted = phrase.split()
    tokens = re.findall(r"[^\W_]+", unicodedata.normalize("NFC", cell))
    lowered = [cell_words(t).strip() for t in tokens]
    for i in range(len(tokens) - len(wanted) + 1):
        if lowered[i : i + len(wanted)] == wanted:
            words = tokens[i : i + len(wanted)]
            return " ".join(words) if all(t[:1].isupper() or t[:1].isdigit() for t in words) else None
    return None


def _below_cells(candidate: ConditionCandidate, cells: list[ConditionCandidate]) -> ConditionCandidate:
    """A ``contains`` candidate scored below each cell (of another column) on its span: the cell leads."""
    over = [c.score for c in cells if c.column != candidate.column and c.start < candidate.end and candidate.start < c.end]
    if over and candidate.score >= min(over):
        return _replace(candidate, score=min(over) - 0.5)
    return candidate


def _total_candidates(
    table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]], cells: list[tuple[Column, list[str]]],
    compared: set[tuple[int, int]],
) -> list[ConditionCandidate]:
    """``Total = n`` for a number before a noun no column is named by ("which nation received 3 medals"), on a table
    with one numeric ``Total`` column that holds n: what the total counts.

    Example:
        >>> t = Table.from_rows(["Nation", "Gold", "Total"], [["Peru", "1", "3"], ["Chile", "3", "4"]])
        >>> q = "which nation was the only one to receive 3 medals?"
        >>> [(c.op, c.value, c.score) for c in _total_candidates(t, q, table_ground(q), header_mentions(t, q), _cells(t), set())]
        [('=', '3', 3.5)]
        >>> _total_candidates(t, "which nation won 3 gold medals?", table_ground("x"), header_mentions(t, "which nation won 3 gold medals?"), _cells(t), set())
        []
    """
    totals = [(c, vs) for c, vs in cells if c.is_numeric and _WORD.findall(c.header.lower()) == ["total"]]
    if len(totals) != 1:
        return []
    col, values = totals[0]
    by_number = {parse_number(v): v for v in values}
    out = []
    for v in g.values:
        if v.kind not in ("number", "quantity") or (v.start, v.end) in compared or v.value not in by_number:
            continue
        following = re.match(r"\s*([a-z]+)", question[v.end :].lower())
        word = (v.unit or "").lower() if v.kind == "quantity" else (following.group(1) if following is not None else "")
        if not word or word in _STOP or word in _LINK or any(v.end <= m[0] <= v.end + 1 + len(word) for m in mentions.values()):
            continue  # "3 gold medals": the Gold column's value
        if word.endswith("s") or float(v.value) == 1:
            out.append(ConditionCandidate(col.index, "=", by_number[v.value], v.start, v.end, 3.5))
    return out


_MONTH_PATTERN = "(?:" + "|".join(sorted(_MONTH_WORDS, key=len, reverse=True)) + ")"
#: A day of a month with no year after it: "september 17th", "june 24", "the 17th of september".
MONTH_DAY = re.compile(rf"\b(?:{_MONTH_PATTERN}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_PATTERN})\b"
                        r"(?!,?\s*\d{4})", re.IGNORECASE)


def _month_day_candidates(
    question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]], cells: list[tuple[Column, list[str]]],
) -> list[ConditionCandidate]:
    """``column = cell`` for a day of a month the question writes with no year ("the game on september 17th") and
    the cells of a text column that write that day in any year (``September 17, 2005``), when at most three do.

    Example:
        >>> t = Table.from_rows(["Date", "Attendance"], [["September 10, 2005", "111,386"], ["September 17, 2005", "80,795"]])
        >>> q = "what is the attendance for september 17th?"
        >>> [(c.op, c.value) for c in _month_day_candidates(q, table_ground(q), header_mentions(t, q), _cells(t))]
        [('=', 'September 17, 2005')]
    """
    dated = [(v.start, v.end) for v in g.values if v.kind == "date"]
    out = []
    for m in MONTH_DAY.finditer(question):
        wanted = cell_date(m.group())
        if wanted is None or wanted.day is None or any(s <= m.start() and m.end() <= e for s, e in dated):
            continue
        for col, values in cells:
            if col.is_numeric:
                continue
            same = [v for v in values if (d := cell_date(v)) is not None and (d.month, d.day) == (wanted.month, wanted.day)]
            if 1 <= len(set(same)) <= 3 and not any(v.strip().lower() == m.group().lower() for v in same):
                near = _near(question, mentions.get(col.index), m.start(), m.end())
                out += [ConditionCandidate(col.index, "=", v, m.start(), m.end(), 3.0 + 2 * near) for v in dict.fromkeys(same)]
    return out


#: Words before a header that ask for its empty cells: "do not have notes", "has no songwriters", "without a score".
_NONE_BEFORE = re.compile(r"(?:\bno|\bnot\s+have|n't\s+have|\bnot\s+list|\bwithout|\black(?:ing|s)?|\bnever\s+had)"
                          r"(?:\s+(?:any|a|an|the|listed|their|his|her|its))*\s+$", re.IGNORECASE)


def _empty_candidates(table: Table, question: str, mentions: Mapping[int, tuple[int, int, float]]) -> list[ConditionCandidate]:
    """``column = ""`` for a text column the question says the rows lack ("how many ranks do not have notes?",
    "tracks that have no songwriters"), when some of its cells are empty and some are not.

    Example:
        >>> t = Table.from_rows(["Rank", "Notes"], [["1", "Q"], ["2", ""], ["3", ""]])
        >>> q = "how many ranks do not have notes?"
        >>> [(c.op, c.value) for c in _empty_candidates(t, q, header_mentions(t, q))]
        [('=', '')]
    """
    out = []
    for i, m in mentions.items():
        col = table.columns[i] if i < len(table.columns) else None
        if col is None or col.is_numeric or not _NONE_BEFORE.search(question[: m[0]]):
            continue
        executor = table.executor()
        empty = executor.count(table.query().add_condition(col, "=", ""))
        if 0 < empty < table.row_count:
            out.append(ConditionCandidate(i, "=", "", m[0], m[1], 3.0 + m[2] / 4))
    return out


#: Numbers written as words, "no" for none ("no goals", "one point", "zero points", "two weeks").
_NUMBER_WORDS = {"no": 0, "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10}
_NUMBER_WORD_RE = re.compile(r"\b(?P<word>" + "|".join(_NUMBER_WORDS) + r")\s+", re.IGNORECASE)


def _word_number_candidates(
    table: Table, question: str, mentions: Mapping[int, tuple[int, int, float]], cells: list[tuple[Column, list[str]]],
) -> list[ConditionCandidate]:
    """``column = n`` for a number written as a word right before the name of a column of numbers ("earned no bronze
    medals": Bronze = 0; "get one point": Points = 1), when the column holds it.

    Example:
        >>> t = Table.from_rows(["Nation", "Bronze"], [["Peru", "0"], ["Chile", "2"]])
        >>> q = "how many nations earned no bronze medals?"
        >>> [(c.op, c.value) for c in _word_number_candidates(t, q, header_mentions(t, q), _cells(t))]
        [('=', '0')]
        >>> _word_number_candidates(t, "which one won bronze?", header_mentions(t, "which one won bronze?"), _cells(t))
        []
    """
    out = []
    for m in _NUMBER_WORD_RE.finditer(question):
        n = float(_NUMBER_WORDS[m.group("word").lower()])
        for col, values in cells:
            mention = mentions.get(col.index)
            filled = [v for v in values if v.strip()]
            numbers = [v for v in filled if parse_number(v) is not None]
            if mention is None or mention[0] != m.end() or len(numbers) * 2 < max(len(filled), 1):
                continue  # a column of numbers (mostly: "Points" with a few "–")
            held = [v for v in numbers if parse_number(v) == n]
            if held:
                out.append(ConditionCandidate(col.index, "=", held[0], m.start(), m.end() - 1, 3.0 + mention[2] / 4))
    return out


#: Words right before a cell that turn its condition into ``!=``: "not from ethiopia", "other than italy".
_NEGATED = re.compile(r"(?:\bnot|n't|\bother\s+than|except(?:\s+for)?|besides|excluding|apart\s+from)\s+(?:(?:from|in|at|by|on|for|of|the|a|an|those|ones|people)\s+){0,2}$", re.IGNORECASE)


def _cell_candidates(
    question: str, col: Column, cells: list[str], mention: tuple[int, int, float] | None, compared: set[tuple[int, int]],
    categories: bool = False,
) -> list[ConditionCandidate]:
    """``column = cell`` for each cell of the column the question writes (not the header itself); ``!=`` after a negation (:data:`_NEGATED`).

    Example:
        >>> col = Table.from_rows(["Nationality"], [["Ethiopia"], ["Kenya"]]).columns[0]
        >>> [(c.op, c.value) for c in _cell_candidates("who was the only medalist not from ethiopia?", col, ["Ethiopia", "Kenya"], None, set())]
        [('!=', 'Ethiopia')]
    """
    out = []
    for cell, start, end in _text_matches(question, cells):
        if mention and mention[0] <= start and end <= mention[1] and mention[2] >= 3:
            continue  # the header itself, not a value
        near = _near(question, mention, start, end)
        length = len(cell.strip())
        abbreviations = cell.strip().isupper() and end - start > length  # "qbs": the plural of the cell QB
        if (length < 3 and near == 0 and not abbreviations) or any(s <= start and end <= e for s, e in compared) or cell.lower() in _STOP:
            continue
        op = "!=" if _NEGATED.search(question[max(0, start - 30) : start]) else "="
        category = 0.6 if categories and 1 < len(cells) <= 8 and 3 <= length <= 6 else 0.0  # a short value of a few repeated ones: Won
        key = 0.4 if not categories and len(cells) >= 5 and 4 <= length <= 6 and cell[:1].isupper() else 0.0  # a row's short name: Iowa
        key += 1.0 if re.fullmatch(r"\d+(?:st|nd|rd|th)", cell.strip(), re.IGNORECASE) else 0.0  # a place: "finish 1st"
        out.append(ConditionCandidate(col.index, op, cell, start, end, 1.0 + min(length, 20) / 5 + 2 * near + category + key + abbreviations))
    for cell, start, end in _first_word_matches(question, cells, {c.value for c in out}):
        if any(c.start < end and start < c.end for c in out):
            continue  # the word is part of a cell the question writes whole
        out.append(ConditionCandidate(col.index, "=", cell, start, end, 2.0 + 2 * _near(question, mention, start, end)))
    for cell, start, end in _last_word_matches(question, cells, {c.value for c in out}):
        if not any(c.start < end and start < c.end for c in out):
            out.append(ConditionCandidate(col.index, "=", cell, start, end, 1.8 + 2 * _near(question, mention, start, end)))
    for cell, start, end in _demonym_matches(question, cells):
        if not any(c.start < end and start < c.end for c in out):
            out.append(ConditionCandidate(col.index, "=", cell, start, end, 2.0 + 2 * _near(question, mention, start, end)))
    for cell, start, end in _misspelt_matches(question, cells, {c.value for c in out}):
        if not any(c.start < end and start < c.end for c in out):  # a name of several words, all but a letter as written
            out.append(ConditionCandidate(col.index, "=", cell, start, end, 2.2 + 2 * _near(question, mention, start, end)))
    return out


def _last_word_matches(question: str, cells: list[str], whole: set[str]) -> list[tuple[str, int, int]]:
    """The names the question writes by their last word alone, a surname ("how many seasons has ott been the skip":
    ``Mirjam Ott``), with its span.

    Only a name of two or three capitalised words the question does not write whole, whose last word (3 letters or
    more) ends no other cell of the column, not preceded in the question by another word than the name's own.

    Example:
        >>> _last_word_matches("how many seasons has ott been the skip?", ["Mirjam Ott", "Luzia Ebnöther", "Mirjam Ott"], set())
        [('Mirjam Ott', 21, 24)]
        >>> _last_word_matches("how many seasons has ott been the skip?", ["Mirjam Ott", "Hans Ott"], set())
        []
        >>> _last_word_matches("what did paul ott win?", ["Mirjam Ott", "Luzia Ebnöther"], set())
        []
    """
    by_last: dict[str, set[str]] = {}
    for cell in cells:
        words = cell.split()
        if words:
            by_last.setdefault(words[-1].lower().strip(",;:."), set()).add(cell.strip())
    out = []
    for last, same in by_last.items():
        cell = next(iter(same))
        words = cell.split()
        if (len(same) != 1 or not 2 <= len(words) <= 3 or not all(w[:1].isupper() for w in words) or cell in whole
                or len(last) < 3 or not last.isalpha() or last in _STOP):
            continue
        m = re.search(rf"(?<!\w){re.escape(last)}(?!\w)", question, re.IGNORECASE)
        before = _WORD.findall(question[: m.start()].lower())[-1:] if m is not None else []
        if m is not None and not (before and before[0] not in _STOP and before[0] != words[-2].lower()):
            out.append((cell, m.start(), m.end()))
    return out


def _one_edit(a: str, b: str) -> bool:
    """Whether two different words of 4 letters or more are one edit apart: a letter changed, added, dropped, or two
    neighbours swapped ("egil" for ``Egli``, "dabi" for ``Dani``).

    Example:
        >>> _one_edit("egil", "egli"), _one_edit("dabi", "dani"), _one_edit("sordo", "sord"), _one_edit("paul", "mirjam")
        (True, True, True, False)
    """
    if a == b or min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1 :]


def _misspelt_matches(question: str, cells: list[str], whole: set[str]) -> list[tuple[str, int, int]]:
    """The names of two to four words the question writes with one word misspelt by one letter ("andy egil" for
    ``Andy Egli``, "dabi sordo's" for ``Dani Sordo``), the others as the cell writes them; only a name no other cell
    of the column also nears, with its span.

    Example:
        >>> _misspelt_matches("who is the next player listed after andy egil?", ["Andy Egli", "Alain Geiger"], set())
        [('Andy Egli', 36, 45)]
        >>> _misspelt_matches("who was dabi sordo's co-driver?", ["Dani Sordo", "Marc Marti"], set())
        [('Dani Sordo', 8, 18)]
        >>> _misspelt_matches("who was dabi sordo's co-driver?", ["Dani Sordo", "Davi Sordo"], set())  # which one?
        []
    """
    tokens = [(m.start(), m.end(), m.group().lower()) for m in re.finditer(r"[^\W_]+", fold(question))]
    written = {t[2] for t in tokens}
    found: dict[tuple[int, int], list[str]] = {}
    for cell in cells:
        words = [w.lower() for w in re.findall(r"[^\W_]+", fold(cell_core(cell)))]
        if cell in whole or not 2 <= len(words) <= 4 or not all(w.isalpha() for w in words) or not written.intersection(words):
            continue  # all words but one must be written as the cell writes them: a cell with none is no match
        for i in range(len(tokens) - len(words) + 1):
            span = tokens[i : i + len(words)]
            exact = sum(t[2] == w for t, w in zip(span, words))
            if exact == len(words) - 1 and all(t[2] == w or _one_edit(t[2], w) for t, w in zip(span, words)):
                found.setdefault((span[0][0], span[-1][1]), []).append(cell)
    return [(names[0], start, end) for (start, end), names in found.items() if len(set(names)) == 1]


#: The endings of a people's or a language's name made from a place's ("chinese", "italian", "kenyans", "swedish").
_DEMONYM = re.compile(r"\b(?P<stem>[a-z]{4,}?)(?:ese|ians?|ans?|ish|is?)\b", re.IGNORECASE)


def _demonym_matches(question: str, cells: list[str]) -> list[tuple[str, int, int]]:
    """The one-word cells a question names by their people ("which chinese athlete": ``China``; "how many hungarians":
    ``Hungary (HUN)``): the word less its ending starts the cell's name, which is at most 3 letters longer; none when
    a cell is the word itself (``Italian``).

    Example:
        >>> _demonym_matches("which chinese athlete had the fastest time?", ["Kenya", "China", "Chinatown"])
        [('China', 6, 13)]
        >>> _demonym_matches("how many hungarians won?", ["Hungary (HUN)", "Kenya (KEN)"]), _demonym_matches("an italian", ["Italian", "Italy"])
        ([('Hungary (HUN)', 9, 19)], [])
    """
    out = []
    words = {c.strip().lower() for c in cells}
    for m in _DEMONYM.finditer(question):
        word, stem = m.group().lower(), m.group("stem").lower()
        if word in words or word.rstrip("s") in words:
            continue
        for cell in cells:
            names = [n for n in cell_names(cell) if len(n.split()) == 1 and n[:1].isupper()]
            if any(n.lower().startswith(stem) and len(n) - len(stem) <= 3 for n in names):
                out.append((cell, m.start(), m.end()))
    return out


def _first_word_matches(question: str, cells: list[str], whole: set[str]) -> list[tuple[str, int, int]]:
    """The cells the question names by their first word alone ("atlanta" for ``Atlanta Falcons``), with its span.

    Only a first word of 4 letters or more that no other cell of the column
    starts with, of a cell of two words or more the question does not write whole,
    and not followed in the question by another word than the cell's second.

    Example:
        >>> _first_word_matches("how many draft picks did atlanta have?", ["Atlanta Falcons", "Houston Texans", "Atlanta"], set())
        []
        >>> _first_word_matches("how many draft picks did atlanta have?", ["Atlanta Falcons", "Houston Texans"], set())
        [('Atlanta Falcons', 25, 32)]
        >>> _first_word_matches("last opponent for manchester united?", ["Manchester City", "Everton"], set())
        []
    """
    by_first: dict[str, set[str]] = {}
    for cell in cells:
        words = cell.split()
        if words:
            by_first.setdefault(words[0].lower().rstrip(",;:"), set()).add(cell.strip())  # "Ostrava, Czech Republic"
    out = []
    for first, same in by_first.items():
        cell = next(iter(same))
        if len(same) != 1 or len(cell.split()) < 2 or cell in whole or len(first) < 4 or not first.isalpha() or first in _STOP:
            continue
        m = re.search(rf"(?<!\w){re.escape(first)}(?!\w)", question, re.IGNORECASE)
        following = _WORD.findall(question[m.end() :].lower())[:1] if m is not None else []
        second = _WORD.findall(cell.lower())[1:2]
        if m is not None and not (following and following[0] not in _STOP and following != second):
            out.append((cell, m.start(), m.end()))  # "manchester united" does not name Manchester City
    return out


def _value_candidates(
    question: str, g: Grounding, col: Column, cells: list[str], mention: tuple[int, int, float] | None,
    compared: set[tuple[int, int]], bonus: float,
) -> list[ConditionCandidate]:
    """``column = cell`` for each number of the question the column holds, and each date at its precision (a year also in a numeric column).

    Example:
        >>> col = Table.from_rows(["Year completed"], [["1931"], ["1922"]]).columns[0]
        >>> q = "how many bridges were built in 1931?"
        >>> [(c.op, c.value) for c in _value_candidates(q, ground(q), col, ["1931", "1922"], None, set(), 0.0)]
        [('=', '1931')]
    """
    by_number = {parse_number(c): c for c in cells} if col.is_numeric else {}
    by_date = {}
    for c in cells:
        d = parse_date(c) if not col.is_numeric else None
        if d is not None:
            by_date[(d.first, d.last)] = c
    out = []
    years = {(v.start, v.end) for v in g.values if v.kind == "date" and v.value.precision == "year"}
    numbers = {(v.start, v.end) for v in g.values if v.kind in ("number", "quantity")}
    for v in g.values:
        near = _near(question, mention, v.start, v.end)
        if v.kind in ("number", "quantity") and (v.start, v.end) not in compared and v.value in by_number:
            base = 2.5 if (v.start, v.end) in years else 1.5  # "built in 1931": a year is a stronger value than a bare number
            out.append(ConditionCandidate(col.index, "=", by_number[v.value], v.start, v.end, base + 2 * near + bonus))
        elif v.kind == "date" and v.value.precision == "year" and (v.start, v.end) not in numbers and float(v.value.first.year) in by_number:
            out.append(ConditionCandidate(col.index, "=", by_number[float(v.value.first.year)], v.start, v.end, 2.5 + 2 * near + bonus))  # "built in 1931", a Year column
        elif v.kind == "date" and (v.value.first, v.value.last) in by_date:
            out.append(ConditionCandidate(col.index, "=", by_date[(v.value.first, v.value.last)], v.start, v.end, 3.0 + 2 * near))
    return out


def _number_of(v: Any) -> float | None:
    if v.kind in ("number", "quantity"):
        return float(v.value)
    return float(v.value.first.year) if v.kind == "date" else None


def _comparison_candidates(
    table: Table, question: str, g: Grounding, mentions: Mapping[int, tuple[int, int, float]],
    cells: list[tuple[Column, list[str]]] | None = None,
) -> list[ConditionCandidate]:
    """``column op number`` on the numeric columns for each comparison (``between a and b``: ``>= a`` and ``<= b``;
    negated, "did not make more than 60": ``<= 60``); a year placed in time ("before 1978") only on a column of years
    (its header or its cells).

    Example:
        >>> t = Table.from_rows(["Driver", "Laps"], [["Ann", "61"], ["Bo", "58"]])
        >>> q = "how many drivers did not make more than 60 laps?"
        >>> [(c.op, c.value) for c in _comparison_candidates(t, q, table_ground(q), header_mentions(t, q))]
        [('<=', '60')]
    """
    values = {col.index: vs for col, vs in (cells if cells is not None else _cells(table))}
    out = []
    cues = [c for c, _ in g.comparisons()]
    for cue, v in g.comparisons():
        low = _number_of(v)
        if low is None or any(cue.end <= c.start and c.end <= v.start for c in cues):
            continue  # "from england scored above 15 points": 15 is compared by "above", the cue right before it
        if _CLOCK.match(question, v.start) or (duration_seconds(question, v) is not None and any(
                not c.is_numeric and timed_cells(values.get(c.index, [])) for c in table.columns)):
            continue  # "at least 4:32", "over 4 minutes" on a column of times: its seconds compare (shapes), not a number
        op = compared_op(question, cue)
        bounds: list[tuple[str, float, int]] = [(op, low, v.end)]
        if cue.op == "between":
            high = next((w for w in g.values if w.start >= v.end and _number_of(w) is not None
                         and re.fullmatch(r"\s*(?:and|to|-|–)\s*", question[v.end : w.start])), None)
            if high is None:
                continue
            bounds = [(">=", low, v.end), ("<=", float(_number_of(high) or 0.0), high.end)]
        for col in table.columns:
            if not col.is_numeric:
                continue
            near = max(_near(question, mentions.get(col.index), cue.start, v.end), 0.0)
            digits = re.match(r"[\d,.]*\d", question[v.start : v.end])
            if near == 0 and _counts_another_thing(question, v.start + digits.end() if digits else v.end, col):
                continue  # "more than 3 candidates" is not a condition on Votes
            if _in_time(cue, low) and not _years_column(col, values.get(col.index, [])):
                continue  # "before 1978 with a US billboard of 35": a time, not a chart position
            for op, number, end in bounds:
                out.append(ConditionCandidate(col.index, op, format_number(number), cue.start, end, 2.0 + 2.5 * near))
    return out


def compared_op(question: str, cue: Cue) -> str:
    """A comparison cue's operator, negated when a negation comes right before it.

    Example:
        >>> q = "how many songs did not last more than 3 minutes?"
        >>> [compared_op(q, c) for c, _ in table_ground(q).comparisons()]
        ['<=']
    """
    if cue.op in _NEGATION_OF and _NOT_BEFORE.search(question[max(0, cue.start - 25) : cue.start]):
        return _NEGATION_OF[cue.op]  # "did not have at least 15,000": fewer than 15,000
    return cue.op


#: A time written in a question: ``4:32``, ``1:30``, ``1:02:03``, ``1:59.8``.
_CLOCK = re.compile(r"\d+:[0-5]\d(?::[0-5]\d)?(?:\.\d+)?(?![\d:])")
#: The seconds of a time unit (the unit written right after a number: "five minutes", "90 secs", "2 hours").
_TIME_UNITS = {"second": 1, "sec": 1, "s": 1, "minute": 60, "min": 60, "m": 60, "hour": 3600, "hr": 3600, "h": 3600}
_MORE_UNIT = re.compile(r"\s*(?:and\s+|,\s*)?(\d+(?:\.\d+)?)\s*-?\s*(second|sec|minute|min)s?\b\.?", re.IGNORECASE)
_UNIT_AFTER = re.compile(r"\s*-?\s*(second|sec|minute|min|hour|hr)s?\b\.?", re.IGNORECASE)


def duration_seconds(question: str, value: Any, hours: bool = True) -> float | None:
    """The seconds of a duration a grounded value writes in the question ("five minutes", "90 seconds", "2 hours",
    ``4:32``), else None (a number without a time unit, a date). Without ``hours`` (the cells compared write none),
    ``5:56:21`` is read as ``5:56.21``.

    Example:
        >>> q = "songs over five minutes, under 90 seconds, at least 4:32, below 2 hours, after 1998"
        >>> [duration_seconds(q, v) for _, v in table_ground(q).comparisons()]
        [300.0, 90.0, 272.0, 7200.0, None]
        >>> q = "under 2 hours 10 minutes, over three minutes and 30 seconds"
        >>> [duration_seconds(q, v) for _, v in table_ground(q).comparisons()]
        [7800.0, 210.0]
        >>> q = "a time below 5:56:21"
        >>> [(duration_seconds(q, v), duration_seconds(q, v, hours=False)) for _, v in table_ground(q).comparisons()]
        [(21381.0, 356.21)]
    """
    clock = _CLOCK.match(question, value.start)
    if clock is not None:
        written = clock.group()
        return parse_duration(written if hours or written.count(":") < 2 else ".".join(written.rsplit(":", 1)))
    number = value.value if isinstance(value.value, (int, float)) and not isinstance(value.value, bool) else None
    if number is None or value.kind not in ("number", "quantity"):
        return None
    unit = (getattr(value, "unit", "") or "").lower().rstrip(".")
    factor = _TIME_UNITS.get(unit[:-1] if unit.endswith("s") and unit[:-1] in _TIME_UNITS else unit)
    end = value.end
    if factor is None and not unit:
        after = _UNIT_AFTER.match(question, value.end)
        factor, end = (_TIME_UNITS[after.group(1).lower()], after.end()) if after else (None, end)
    if factor is None:
        return None
    seconds = float(number) * factor
    while (more := _MORE_UNIT.match(question, end)) is not None and _TIME_UNITS[more.group(2).lower()] < factor:
        factor, end = _TIME_UNITS[more.group(2).lower()], more.end()  # "2 hours 10 minutes", "3 minutes and 30 seconds"
        seconds += float(more.group(1)) * factor
    return seconds


def timed_cells(values: list[str], share: float = 0.6) -> bool:
    """Whether most of a column's cells are times (``1:59.8``, ``1:02:03``): durations a part (``seconds``) compares.

    Example:
        >>> timed_cells(["4:25", "3:02", "5:23"]), timed_cells(["4:25", "Rio", "12"])
        (True, False)
    """
    return bool(values) and sum(parse_duration(v) is not None for v in values) >= share * len(values)


#: A comparison's operator negated: "not more than 60" is ``<=`` 60.
_NEGATION_OF = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
#: A negation right before a comparison: "did not have at least", "didn't make more than", "never scored over".
_NOT_BEFORE = re.compile(r"(?:\bnot|n't|\bnever)(?:\s+\w+){0,2}\s+$", re.IGNORECASE)

#: Comparison cues that place a value in time ("before 1978", "since 2001").
_TIME_CUES = frozenset(["before", "after", "since", "until", "till", "prior to", "earlier than", "later than", "from"])


def _in_time(cue: Any, value: float) -> bool:
    """Whether a comparison places a year in time: a cue of time before a number that is a year (1000–2199)."""
    return cue.text.lower() in _TIME_CUES and float(value).is_integer() and 1000 <= value <= 2199


def _years_column(col: Column, cells: list[str]) -> bool:
    """Whether a column holds years: its header names years or seasons (``Year``, ``Season``, ``Year built``), or most
    of its numbers are years (1000–2199).

    Example:
        >>> t = Table.from_rows(["Year", "US Billboard", "Founded"], [["1977", "35", "1921"], ["1978", "4", "1930"]])
        >>> [_years_column(c, vs) for c, vs in _cells(t)]
        [True, False, True]
    """
    if set(_WORD.findall(col.header.lower())) & {"year", "years", "season", "seasons"}:
        return True
    numbers = [n for n in (parse_number(c) for c in cells) if n is not None]
    return bool(numbers) and sum(1000 <= n <= 2199 for n in numbers) >= 0.6 * len(numbers)


def _counts_another_thing(question: str, end: int, col: Column) -> bool:
    """Whether the word right after a compared number is a noun this column's header does not hold ("3 candidates", "18 meters").

    Example:
        >>> col = Table.from_rows(["Votes"], [["10"]]).columns[0]
        >>> _counts_another_thing("more than 3 candidates", 11, col), _counts_another_thing("more than 3 votes", 11, col)
        (True, False)
        >>> _counts_another_thing("a score over 70?", 15, col)
        False
    """
    after = re.match(r"\s*([a-z]+)\b", question[end:].lower())
    if after is None or after.group(1) in _STOP or after.group(1) in _LINK or after.group(1) in _COMPARING:
        return False
    return _stem(after.group(1)) not in set(_stems(col.header)) | {_stem(w) for w in _WORD.findall(col.header.lower())}


def _outside_cells(candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """Without the numbers and dates written inside a longer cell of the question (``1996`` in ``1996-97``)."""
    cells = [c for c in candidates if c.op == "="]
    return [
        c for c in candidates
        if not any(o.start <= c.start and c.end <= o.end and (o.end - o.start) > (c.end - c.start) and o.op == "="
                   and (c.op == "=" and c.value != o.value) for o in cells)
    ]


def _best_per_span(candidates: list[ConditionCandidate]) -> list[ConditionCandidate]:
    """Strongest first; of candidates whose spans overlap, the weaker ones lose 2 (they stay listed)."""
    ranked = sorted(candidates, key=lambda c: (-c.score, c.start, c.column))
    out: list[ConditionCandidate] = []
    seen: set[tuple[int, str, str]] = set()
    for c in ranked:
        key = (c.column, c.op, c.value.lower())
        if key in seen:
            continue
        seen.add(key)
        if any(o.start < c.end and c.start < o.end for o in out):
            c = ConditionCandidate(c.column, c.op, c.value, c.start, c.end, c.score - 2.0)
        out.append(c)
    return sorted(out, key=lambda c: (-c.score, c.start, c.column))


def _after(question: str, cue_end: int, start: int, allowed: frozenset[str]) -> bool:
    """Whether only ``allowed`` words stand between a cue's end and ``start``."""
    return cue_end <= start and set(_WORD.findall(question[cue_end:start].lower())) <= allowed


#: Header words that name who a row is about: the column a *who* question asks for when it names none.
PERSON_HEADERS = frozenset([
    "name", "player", "athlete", "driver", "rider", "coach", "finalist", "contestant", "candidate", "artist",
    "winner", "nation", "country", "team", "club", "person", "member", "manager", "actor", "actress",
    "character", "director", "author", "composer", "singer", "skater", "swimmer", "cyclist", "runner",
    "jockey", "pilot", "captain", "owner", "president", "governor", "mayor", "leader", "holder", "recipient",
    "nominee", "champion", "performer", "writer", "producer", "competitor", "entrant", "representative",
    "incumbent", "senator", "delegate", "chairman", "rank holder", "skier", "boxer", "wrestler", "musician", "opponent",
])


def who_column(table: Table, question: str, mentions: Mapping[int, tuple[int, int, float]]) -> int | None:
    """The column a *who* question asks for when it names none right after *who*, or None.

    "who was the only medalist not from ethiopia?" asks for the row's person:
    the first text column whose header is a person word (:data:`PERSON_HEADERS`:
    ``Name``, ``Athlete``, ``Nation`` ...). "who was the opponent" names its
    column (``Opponent``), so it has no *who* column; a question without *who* neither.

    Example:
        >>> t = Table.from_rows(["Rank", "Name", "Nationality"], [["1", "Sule Utura", "Ethiopia"]])
        >>> who_column(t, "who was the only medalist not from ethiopia?", {})
        1
        >>> who_column(t, "who was the nationality of rank 1?", header_mentions(t, "who was the nationality of rank 1?"))
    """
    who = re.search(r"\bwho\b", question, re.IGNORECASE)
    if who is None or any(_after(question, who.end(), m[0], frozenset(["the", "is", "was", "are", "were"])) for m in mentions.values()
                          if m[2] > VERB_STRENGTH):
        return None
    for col in table.columns:
        if not col.is_numeric and set(_stems(col.header)) & PERSON_HEADERS:
            return col.index
    return None


def _asked_column(question: str, mentions: Mapping[int, tuple[int, int, float]], g: Grounding, table: Table | None = None) -> int | None:
    """The column the question's *which/what* names right after it ("What school did ..."), or None.

    A cue word that is also a header ("What is the average Total", header ``Average``) is the cue, not the column asked.
    Without one, a *who* question asks for its person column (:func:`who_column`, when ``table`` is given).
    """
    wh = re.search(r"\b(?:which|what)\b", question, re.IGNORECASE)
    if wh is None and table is not None and re.match(r"\s*when\b", question, re.IGNORECASE):
        return _when_column(table)
    if wh is None and table is not None and re.match(r"\s*where\b", question, re.IGNORECASE):
        return _where_column(table)
    if wh is None:
        who = re.match(r"\s*(?:who|whom)\b", question, re.IGNORECASE)
        if who is not None:  # "who is the presenter listed before ...": the column named right after who
            cues = [(c.start, c.end) for c in g.cues]
            named = sorted((m[0], i) for i, m in mentions.items()
                           if _after(question, who.end(), m[0], frozenset(["the", "is", "was", "are", "were"]))
                           and not any(s <= m[0] < e for s, e in cues) and m[2] > VERB_STRENGTH)  # "who was picked": a verb
            if named:
                return named[0][1]
        return who_column(table, question, mentions) if table is not None else None
    cues = [(c.start, c.end) for c in g.cues]
    named = sorted((m[0], i) for i, m in mentions.items()
                   if _after(question, wh.end(), m[0], frozenset(["the", "is", "was", "are", "were"]))
                   and not any(s <= m[0] < e for s, e in cues))
    return named[0][1] if named else None


#: Header words of the column a *where* question asks for.
_WHERE_HEADERS = ("venue", "location", "place", "city", "site", "stadium", "ground", "town", "host", "arena", "circuit", "track",
                  "country", "locality", "municipality")


def _where_column(table: Table) -> int | None:
    """The column a *where* question asks for: the first text column whose header says venue, location, city ... (in
    that order of preference).

    Example:
        >>> _where_column(Table.from_rows(["Year", "Competition", "Venue"], [["2001", "Cup", "Paris"]]))
        2
        >>> _where_column(Table.from_rows(["Year", "Competition"], [["2001", "Cup"]])) is None
        True
    """
    for word in _WHERE_HEADERS:
        found = next((c.index for c in table.columns if not c.is_numeric and word in _WORD.findall(c.header.lower())), None)
        if found is not None:
            return found
    return None


def _when_column(table: Table) -> int | None:
    """The column a *when* question asks for: the first whose header says date, else year or season.

    Example:
        >>> _when_column(Table.from_rows(["#", "Date", "Venue"], [["1.", "1997-03-25", "Paris"]]))
        1
        >>> _when_column(Table.from_rows(["#", "Venue"], [["1.", "Paris"]])) is None
        True
    """
    for words in ({"date", "dates"}, {"year", "years", "season"}):
        found = next((c.index for c in table.columns if set(_WORD.findall(c.header.lower())) & words), None)
        if found is not None:
            return found
    return None


def _column_text(table: Table, index: int) -> str:
    header = table.columns[index].header
    same = [c for c in table.columns if c.header.strip().lower() == header.strip().lower()]
    return f"#{index}" if len(same) > 1 or not header.strip() else header


#: Superlatives a table question orders its rows by, besides the shared order cues: the direction of each as the
#: columns tables give them (heights, depths, weights; times, where the fastest is the smallest).
TABLE_SUPERLATIVES: dict[str, str] = {
    "tallest": "max", "deepest": "max", "heaviest": "max", "widest": "max", "lightest": "min", "fastest": "min",
    "quickest": "min", "slowest": "max", "narrowest": "min",
}
_SUPERLATIVE_RE = re.compile(r"\b(" + "|".join(TABLE_SUPERLATIVES) + r")\b", re.IGNORECASE)


def table_ground(question: str, grounding: Grounding | None = None) -> Grounding:
    """The question's grounding (:func:`pyql.environment.grounding.ground`) with the superlatives a table orders its
    rows by (:data:`TABLE_SUPERLATIVES`) as order cues.

    Example:
        >>> [(c.text, c.op) for c in table_ground("who was the fastest swimmer?").cue("order")]
        [('fastest', 'min')]
    """
    g = grounding or ground(question)
    extra = [Cue("order", m.group(), m.start(), m.end(), TABLE_SUPERLATIVES[m.group().lower()]) for m in _SUPERLATIVE_RE.finditer(question)]
    if not extra:
        return g
    return _replace(g, cues=tuple(sorted([*g.cues, *extra], key=lambda c: c.start)))


# The names the choose list and the question shapes read (the underscored ones are the module's own spelling).
stem, stems, table_cells, text_matches, best_per_span, column_text = _stem, _stems, _cells, _text_matches, _best_per_span, _column_text
asked_column, words_between = _asked_column, _after
