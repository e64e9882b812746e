"""Which value of a change question goes to which column: header mentions, enumerations, list items, cell shapes.

A question that asks for an INSERT or UPDATE names values (grounded by
:func:`pyql.environment.grounding.ground`) and, mostly, the columns they go to. This
module finds the columns and pairs them with the values; the change steps
(:mod:`pyql_sql.mutation_steps`) build ``insert_row`` / ``update_rows`` from
the pairs.

Header mentions (:func:`column_mentions`) are every place the question names
a column, not just the best one (a header listed first and given its value
later is named twice). Words match when they agree after a light
normalisation: plural and verb endings, doubled letters and a few irregular
forms (``losses`` names ``Loses``, ``winning years`` names ``Year(s) won``,
``matches`` names ``Match``), abbreviations spelt out (``No.``/``#`` is
"number"). A header's words in order, the whole header, or all of its words
within a short window (any order) make a mention; a run of some of its words
is a weaker, partial one. Mentions inside a quoted value (not the header
itself) or inside the table's own name are no mentions; a partial mention
inside a longer mention of another column, or one that names two columns
equally, is dropped (ambiguous).

Pairs (:func:`pair_values`), strongest rule first, each column and each value
once:

1. an enumeration: headers listed, then as many values listed (``the values
   for Round, Pick and Player, which are '33', '336' and 'John Smith'``),
   paired in order; lists of different lengths pair nothing (ambiguous);
2. a list item (text between commas, semicolons, "and"/"or", full stops)
   holding exactly one free column mention and one free value (``total score
   '290'``, ``7 matches played``, ``against a total score of 1305``);
3. a value next to a column's mention, only linking words between (``club
   'FK Trakai'``, ``5 wins``), closest first;
4. ``... to 'USDA'``: the value goes to the last free column named before;
5. a value no column is named for goes to the column whose cells it
   resembles (a year, a number, a decimal, a score like ``3-1``, a date, an
   existing cell), only when every possible assignment of the left values
   agrees on it.

For a new row, :func:`last_pair` adds one more: when one column and one value
are left, the value is that column's (``Add David Lee to the table with the
Original chapter being Kappa Xi``: Name).

Example:
    >>> from pyql_sql.table import Table
    >>> t = Table.from_rows(["Round", "Pick", "Player"], [["1", "11", "Walt Schlinkman"]], name="Picks")
    >>> q = "Insert into 'Picks' the values for Round, Pick and Player, which are '33', '336' and 'John Smith'."
    >>> [(t.headers[c], v.text) for c, v in pair_values(t, q)]
    [('Round', "'33'"), ('Pick', "'336'"), ('Player', "'John Smith'")]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from grammars.vocabulary import ORDINALS
from pyql.environment.grounding import Grounded, Grounding, ground, parse_date

from .table import Table
from .value_lists import listed_pairs

__all__ = ["Mention", "cell_shape", "column_cells", "column_mentions", "absent_pairs", "enumeration_pairs", "head_pair", "last_pair", "pair_values", "question_values", "word_norm"]

_TOKEN = re.compile(r"[a-z0-9]+|#")
_STOP = frozenset("a an the of in on at to for by with from as is are was were and or its their".split())
_IRREGULAR = {"won": "win", "winning": "win", "drawn": "draw", "lost": "lose", "losing": "lose", "made": "make", "born": "bear", "held": "hold", "ran": "run", "scored": "score"}
_SPELT = {"no": "number", "num": "number", "nr": "number", "#": "number", "pos": "position", "pts": "point", "pt": "point",
          "yr": "year", "yrs": "year", "avg": "average", "pct": "percentage", "att": "attendance", "pop": "population"}
#: words between a column's name and its value ("club 'FK Trakai'", "Episode # as 'S4'", "the opponent name is ...")
_CONNECT = frozenset(["of", "as", "is", "to", "be", "the", "with", "an", "a", "for", "column", "value", "values", "at", "was",
                      "being", "set", "equal", "its", "and", "=", ":", "name", "named", "called", "listed", "are", "were"])
_SEPARATOR = re.compile(r"^[\s,'\"`]*(?:\b(?:and|or)\b)?[\s,'\"`]*$", re.I)
_BREAK = re.compile(r"[,;:]|[.!?](?=\s|$)|\b(?:and|or)\b", re.I)


def word_norm(word: str) -> str:
    """A word as header matching compares it: lower case, no plural or verb ending, doubled letters once.

    Example:
        >>> [word_norm(w) for w in ("losses", "Loses", "winning", "won", "years", "matches", "scored", "Score")]
        ['los', 'los', 'win', 'win', 'year', 'match', 'scor', 'scor']
    """
    w = word.lower()
    w = _IRREGULAR.get(w, w)
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and (w.endswith(("ches", "shes")) or (w.endswith("es") and w[-3] in "sxz")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    w = re.sub(r"(.)\1", r"\1", w)
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of each word, ``(s)`` after a word dropped (``Year(s)`` is "year")."""
    text = re.sub(r"(?<=\w)\(s\)", "   ", text.lower())
    return [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


def _ending(word: str) -> str:
    """A regular verb ending the word has (``recorded`` → ``ed``), which a noun header's word lacks."""
    w = word.lower()
    if w in _IRREGULAR:
        return ""
    return "ed" if len(w) > 4 and w.endswith("ed") else "ing" if len(w) > 5 and w.endswith("ing") else ""


def _header_words(header: str) -> list[set[str]]:
    """Each word of a header as the forms that name it: its normal form (with its verb ending) and its spelt-out abbreviation."""
    out = []
    for _, _, w in _tokens(header):
        forms = {_form(w)}
        if w in _SPELT:
            forms.add(_form(_SPELT[w]))
        out.append(forms)
    return out


def _form(word: str) -> str:
    """The normal form and the verb ending: ``recorded`` does not name ``Record``, ``played`` names ``Played``."""
    return f"{word_norm(word)}/{_ending(word)}"


@dataclass(frozen=True)
class Mention:
    """Where the question names a column.

    Attributes:
        column: the column's index.
        start: where the naming words start in the question.
        end: where they end.
        strength: 3 plus its words for the whole header (or all its words close together),
            else the number of its non-stop words matched.
    """

    column: int
    start: int
    end: int
    strength: float

    @property
    def whole(self) -> bool:
        """Whether the whole header is named."""
        return self.strength >= 3


def _runs(words: list[tuple[int, int, str]], header: list[set[str]], column: int, stop: list[bool]) -> list[Mention]:
    """Runs of question words naming consecutive header words, in order."""
    found: list[Mention] = []
    for i in range(len(words)):
        for k in range(len(header)):
            n = 0
            while i + n < len(words) and k + n < len(header) and _form(words[i + n][2]) in header[k + n]:
                n += 1
            content = sum(1 for j in range(k, k + n) if not stop[j])
            if n and content:
                strength = 3.0 + content if n == len(header) else float(content)
                found.append(Mention(column, words[i][0], words[i + n - 1][1], strength))
    return found


def _window(question: str, words: list[tuple[int, int, str]], header: list[set[str]], column: int, stop: list[bool]) -> list[Mention]:
    """All of a header's content words within a short window, any order (``winning years`` for ``Year(s) won``)."""
    needed = [h for h, s in zip(header, stop) if not s]
    if len(needed) < 2:
        return []
    out = []
    for i in range(len(words)):
        norms = [_form(w[2]) for w in words[i : i + len(header) + 1]]
        hit = [j for j, n in enumerate(norms) if any(n in h for h in needed)]
        if hit and hit[0] == 0 and all(any(n in h for n in norms) for h in needed):
            start, end = words[i][0], words[i + hit[-1]][1]
            if not re.search(r"[\d,;:.!?'\"`]", question[start:end]):  # one phrase, no value inside
                out.append(Mention(column, start, end, 3.0 + len(needed)))
    return out


def column_mentions(table: Table, question: str, *, hidden: Sequence[tuple[int, int]] = ()) -> list[Mention]:
    """Every place the question names a column, ambiguous and hidden ones dropped (see the module's docstring).

    ``hidden``: spans where nothing is a mention (quoted values, the table's name).

    Example:
        >>> t = Table.from_rows(["Loses", "Year(s) won", "Goals scored", "Goals conceded"], [["1", "2", "3", "4"]])
        >>> [(t.headers[m.column], m.strength) for m in column_mentions(t, "7 losses, winning years 1990, goals 5")]
        [('Loses', 4.0), ('Year(s) won', 5.0)]
    """
    words = _tokens(question)
    found: list[Mention] = []
    for col in table.columns:
        header = _header_words(col.header)
        if not header:
            continue
        raw = [w for _, _, w in _tokens(col.header)]
        stop = [w in _STOP and len(raw) > 1 for w in raw]
        found += _runs(words, header, col.index, stop) + _window(question, words, header, col.index, stop)
    found += _work_mentions(table, question, words, found)
    found = [m for m in found if not any(s <= m.start and m.end <= e and (s, e) != (m.start, m.end) for s, e in hidden)]
    found = [m for m in found if m.whole or not any(s < m.end and m.start < e for s, e in hidden)]  # "in 'Toronto" of a quoted name
    return _unambiguous(found, question)


#: Words that name a work by its kind ("the film 'Up'", "the song 'Luz'", "titled 'Up'"): a Title column's mention.
_WORKS = frozenset(["film", "movie", "show", "series", "song", "album", "book", "play", "episode", "single", "novel", "titled"])


def _work_mentions(table: Table, question: str, words: list[tuple[int, int, str]], found: list[Mention]) -> list[Mention]:
    """Mentions of the table's Title column by the kind of work it lists ("the movie 'Despicable Me 3'"), when no
    header is that word.

    Example:
        >>> t = Table.from_rows(["Year", "Title", "Role"], [["2010", "Up", "Carl"]])
        >>> [(t.headers[m.column], m.strength) for m in column_mentions(t, "The movie 'Up 2' released in 2017")]
        [('Title', 4.0)]
    """
    titles = [c.index for c in table.columns if [w for _, _, w in _tokens(c.header)] == ["title"]]
    if len(titles) != 1:
        return []
    named = {(m.start, m.end) for m in found}
    out = []
    for i, (s, e, w) in enumerate(words):
        following = words[i + 1][2] if i + 1 < len(words) else ""
        if w in _WORKS and (s, e) not in named and following not in _WORKS | {"called", "named"}:  # "film titled 'Up'": one mention
            out.append(Mention(titles[0], s, e, 4.0))
    return out


#: Nouns a header may be that also name a row or a cell in general ("the February record", "the city name").
_GENERIC = frozenset(["record", "records", "entry", "value", "field", "data", "name", "number"])


def _unambiguous(found: list[Mention], question: str = "") -> list[Mention]:
    """One mention per span and column; partial ones inside longer mentions of another column, or naming two columns, out."""
    best: dict[tuple[int, int, int], Mention] = {}
    for m in found:
        key = (m.column, m.start, m.end)
        if key not in best or m.strength > best[key].strength:
            best[key] = m
    ms = list(best.values())
    out = []
    for m in ms:
        inside = any(o.column != m.column and o.start <= m.start and m.end <= o.end and (o.end - o.start > m.end - m.start or o.strength > m.strength) for o in ms)
        same_col_longer = any(o is not m and o.column == m.column and o.start <= m.start and m.end <= o.end and o.strength >= m.strength for o in ms)
        twin = not m.whole and any(o.column != m.column and (o.start, o.end) == (m.start, m.end) and o.strength >= m.strength for o in ms)
        trailing = any(o.column != m.column and o.whole and 0 <= m.start - o.end <= 1 for o in ms) and (
            not m.whole or question[m.start : m.end].lower() in _GENERIC)  # "city name": City's; "the February record": February's
        if not (inside or same_col_longer or twin or trailing):
            out.append(m)
    return sorted(out, key=lambda m: (m.start, m.column))


def _name_spans(table: Table, question: str) -> list[tuple[int, int]]:
    """Where the question writes the table's name (two or more of its words in order, or all of it)."""
    name = [word_norm(w) for _, _, w in _tokens(table.name)]
    words = _tokens(question)
    spans = []
    for i in range(len(words)):
        for k in range(len(name)):
            n = 0
            while i + n < len(words) and k + n < len(name) and word_norm(words[i + n][2]) == name[k + n]:
                n += 1
            content = sum(1 for j in range(n) if words[i + j][2] not in _STOP)
            if content >= 2 or (n and n == len(name)):
                spans.append((words[i][0], words[i + n - 1][1]))
    return spans


def _text(v: Grounded) -> str:
    return str(v.value) if v.kind == "quoted" else v.text


def _one_sentence(v: Grounded) -> Grounded:
    """A capitalised span cut at a full stop inside it (``Hedlund. The`` is ``Hedlund``), not at a title's
    abbreviation (``Sen. Ralph Owen Brewster``, ``Dr. No``).

    Example:
        >>> [_one_sentence(Grounded("span", t, 0, len(t), t)).text for t in ("Hedlund. The", "Sen. Ralph Owen Brewster")]
        ['Hedlund', 'Sen. Ralph Owen Brewster']
    """
    cuts = re.finditer(r"[.!?]\s", v.text) if v.kind == "span" else iter(())
    cut = next((c for c in cuts if not (c.group()[0] == "." and re.search(r"(?:^|\s)[A-Z][a-z]{0,2}$", v.text[: c.start()]))), None)
    if cut is None or cut.start() == 0:
        return v
    text = v.text[: cut.start()]
    return replace(v, text=text, end=v.start + len(text), value=text if isinstance(v.value, str) else v.value)


def _whole_names(question: str, values: list[Grounded]) -> list[Grounded]:
    """Capitalised spans made whole: a title's abbreviation joined to the name after it (``Sen. Ralph Owen
    Brewster``), and a parenthesized detail right after a name kept with it (``Frieda (voice)``).

    Example:
        >>> from pyql.environment.grounding import ground
        >>> q = "It features Sen. Ralph Owen Brewster and Frieda (voice)."
        >>> [v.text for v in _whole_names(q, [v for v in ground(q).values])]
        ['Sen. Ralph Owen Brewster', 'Frieda (voice)']
    """
    out: list[Grounded] = []
    for v in values:
        last = out[-1] if out else None
        if (last is not None and v.kind == "span" and last.kind == "span" and re.fullmatch(r"[A-Z][a-z]{0,3}", last.text)
                and question[last.end : v.start] == ". "):
            text = question[last.start : v.end]
            out[-1] = Grounded("span", text, last.start, v.end, text)
            continue
        out.append(v)
    for i, v in enumerate(out):
        detail = re.match(r" \([^()]{1,30}\)", question[v.end :]) if v.kind == "span" else None
        if detail is not None and not any(o.start < v.end + detail.end() and v.end < o.end for o in out):
            text = question[v.start : v.end + detail.end()]
            out[i] = Grounded("span", text, v.start, v.end + detail.end(), text)
    return out


def question_values(table: Table, question: str, g: Grounding | None = None) -> tuple[list[Grounded], list[Mention]]:
    """The values a change question gives, and its column mentions.

    One value per span (a quoted string over what it holds, a number over a
    date); not the table's name or a header, not a span the column mentions
    mostly cover (``Round`` of "Round of 16"), not the count of ``5 columns``;
    a quantity whose unit is a column's name is its number (``29 goals scored``).

    Example:
        >>> t = Table.from_rows(["Rank", "Gold"], [["1", "2"]], name="Olympic Medals")
        >>> vs, ms = question_values(t, "Insert into 'Olympic Medals' with 2 columns 'Rank' and 'Gold': Rank '7', Gold '0'.")
        >>> [v.text for v in vs], len(ms)
        (["'7'", "'0'"], 4)
        >>> t = Table.from_rows(["Song", "Place"], [["Luz", "5th"]])
        >>> [v.text for v in question_values(t, "The song 'Porto' won 1st place.")[0]]
        ["'Porto'", '1st']
        >>> t = Table.from_rows(["Team", "Stadium"], [["Celtic", "Celtic Park"], ["Hearts", "Tynecastle Stadium"]])
        >>> [v.text for v in question_values(t, "The Rangers team's home stadium is the Ibrox Stadium.")[0]]
        ['Rangers', 'Ibrox Stadium']
    """
    g = g or ground(question)
    names = {table.name.strip().lower(), *(h.strip().lower() for h in table.headers)}
    rank = {"quoted": 0, "number": 1, "quantity": 1, "date": 2, "span": 3}
    hidden = _name_spans(table, question)
    values: list[Grounded] = []
    for v in sorted((_one_sentence(v) for v in g.values), key=lambda v: (v.start, rank.get(v.kind, 4))):
        if _text(v).strip().lower() in names or any(o.start <= v.start and v.end <= o.end for o in values):
            continue
        if any(s <= v.start and v.end <= e for s, e in hidden) or re.match(r"\s*(columns?|rows?|fields?)\b", question[v.end :], re.I):
            continue
        values.append(v)
    values = _whole_names(question, values)
    quoted = [(v.start, v.end) for v in values if v.kind == "quoted"]
    mentions = column_mentions(table, question, hidden=hidden + quoted)
    for m in re.finditer(r"\b\d+(?:st|nd|rd|th)(?=\s+(?P<next>\w))", question, re.IGNORECASE):
        if any(o.start < m.end() and m.start() < o.end for o in values):
            continue
        if any(x.whole and x.start == m.start("next") for x in mentions):  # "won 1st place": the Place column's value
            values.append(Grounded("span", m.group(), m.start(), m.end(), m.group()))
    values.sort(key=lambda v: v.start)
    kept = []
    cells: list[list[str]] | None = None
    for v in values:
        number = re.match(r"[+-]?\d[\d,.]*", v.text) if v.kind == "quantity" else None
        if number and any(m.start < v.end and v.start + number.end() <= m.start for m in mentions):  # "29 goals scored"
            v = replace(v, kind="number", text=number.group().rstrip(",."), end=v.start + len(number.group().rstrip(",.")), unit="")
        inside = [m for m in mentions if m.start < v.end and v.start < m.end]
        covered = sum(max(0, min(m.end, v.end) - max(m.start, v.start)) for m in inside)
        if v.kind == "quoted" or covered * 2 < len(v.text.strip()):
            kept.append(v)
        elif v.kind == "span" and len(v.text.split()) >= 2 and all(v.start <= m.start and m.end <= v.end for m in inside):
            cells = column_cells(table) if cells is None else cells  # "the Ibrox Stadium": a name the Stadium column's cells end with
            if all(any(re.search(rf"\b{re.escape(question[m.start:m.end])}\b", c, re.I) for c in cells[m.column]) for m in inside):
                kept.append(v)
    return kept, mentions


def _items(question: str, values: Sequence[Grounded], mentions: Sequence[Mention]) -> list[tuple[int, object]]:
    """Mentions and values in question order: (position, Mention or Grounded)."""
    return sorted([(m.start, m) for m in mentions] + [(v.start, v) for v in values], key=lambda x: x[0])


def _end(x: object) -> int:
    return x.end  # type: ignore[attr-defined, no-any-return]


def enumeration_pairs(
    question: str, values: Sequence[Grounded], mentions: Sequence[Mention]
) -> tuple[list[tuple[int, Grounded]], set[int], set[tuple[int, int]]]:
    """Headers listed, then values listed: paired in order when the lists are as long.

    A list of headers is two or more mentions with only commas and "and"/"or"
    between, none with a value of its own next to it (``2 draws and against
    1305`` is no list); the values follow within six words, or anywhere in the
    sentence when *respectively* ends them.

    Returns the pairs, and the columns and value spans of lists of different
    lengths, and of values listed with no list of columns right before them
    and no column named next to any of them (``in 1997, 2001 and 2005``):
    ambiguous, nothing else is to pair them.

    Example:
        >>> from pyql_sql.table import Table
        >>> t = Table.from_rows(["Round", "Pick", "Player"], [["1", "11", "Walt"]])
        >>> q = "the values for Round, Pick, and Player are '33', '336'"
        >>> vs, ms = question_values(t, q)
        >>> enumeration_pairs(q, vs, ms)[0], sorted(enumeration_pairs(q, vs, ms)[1])
        ([], [0, 1, 2])
    """
    items = _items(question, values, mentions)
    runs: list[list[object]] = []
    for _, x in items:
        last = runs[-1][-1] if runs else None
        if last is not None and type(last) is type(x) and _SEPARATOR.match(question[_end(last) : x.start]):  # type: ignore[attr-defined]
            runs[-1].append(x)
        else:
            runs.append([x])
    pairs: list[tuple[int, Grounded]] = []
    blocked_cols: set[int] = set()
    blocked_values: set[tuple[int, int]] = set()
    for i, vals in enumerate(runs):
        if not isinstance(vals[0], Grounded):
            continue
        heads = runs[i - 1] if i and isinstance(runs[i - 1][0], Mention) else []
        between = question[_end(heads[-1]) : vals[0].start] if heads else ""
        others = [v for v in values if all(v is not w for w in vals)]
        listed = len(heads) >= 2 and not _adjacent_pairs(question, others, heads)  # type: ignore[arg-type]  # not "2 draws and against"
        respectively = re.match(r"\s*,?\s*respectively\b", question[_end(vals[-1]) :], re.IGNORECASE)  # type: ignore[arg-type]
        if listed and not re.search(r"[.;!?](\s|$)", between) and (len(_TOKEN.findall(between.lower())) <= 6 or respectively):
            if len(heads) == len(vals):
                pairs += [(m.column, v) for m, v in zip(heads, vals)]  # type: ignore[attr-defined,misc]
            else:
                blocked_cols |= {m.column for m in heads}  # type: ignore[attr-defined]
                blocked_values |= {(v.start, v.end) for v in vals}  # type: ignore[attr-defined]
        elif len(vals) >= 2 and not _adjacent_pairs(question, vals, mentions):  # type: ignore[arg-type]
            blocked_values |= {(v.start, v.end) for v in vals}  # type: ignore[attr-defined]  # listed, no column by them
    return pairs, blocked_cols, blocked_values


def _segments(question: str, protected: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """List items: the text between commas, semicolons, colons, "and"/"or" and full stops outside values and names."""
    shield = list(protected)
    cuts = [0]
    for m in _BREAK.finditer(question):
        if not any(s < m.start() < e for s, e in shield):
            cuts += [m.start(), m.end()]
    cuts.append(len(question))
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]


def _segment_pairs(
    question: str, values: Sequence[Grounded], mentions: Sequence[Mention], protected: Sequence[tuple[int, int]]
) -> list[tuple[float, int, Grounded]]:
    """A list item naming exactly one column and holding exactly one value: the pair (score: their distance)."""
    out = []
    for s, e in _segments(question, protected):
        ms = [m for m in mentions if s <= m.start and m.end <= e]
        vs = [v for v in values if s <= v.start and v.end <= e]
        if len({m.column for m in ms}) == 1 and len(vs) == 1:
            m = min(ms, key=lambda m: abs(m.start - vs[0].start))
            out.append((abs(m.start - vs[0].start) / 1000, m.column, vs[0]))
    return out


def _gap(question: str, start: int, end: int) -> int | None:
    """Words between two spans when they are all linking words (None otherwise, or when there are more than four)."""
    between = question[start:end]
    if re.search(r"[,;.!?]\s", between + " "):  # a clause ends between them
        return None
    words = re.findall(r"[\w#'=:]+", between.replace("'", " "))
    if len(words) > 4 or any(w.lower() not in _CONNECT for w in words):
        return None
    return len(words)


def _possessive(question: str, v: Grounded) -> bool:
    """Whether a value is written as an owner (``Anthony Davis's``, ``the Jamboree's``).

    Example:
        >>> from pyql.environment.grounding import ground
        >>> q = "Anthony Davis's height is 2.11"
        >>> [_possessive(q, v) for v in ground(q).values]
        [True, False]
    """
    return bool(re.match(r"['’]s\b", question[v.end : v.end + 3])) or bool(re.search(r"['’]s$", v.text))


def _adjacent_pairs(question: str, values: Sequence[Grounded], mentions: Sequence[Mention]) -> list[tuple[float, int, Grounded]]:
    """A value right after a column's mention, or right before it, only linking words between (score: the gap)."""
    out = []
    for v in values:
        for m in mentions:
            after = _gap(question, m.end, v.start) if v.start >= m.end else None
            before = (_gap(question, v.end, m.start) if v.end <= m.start and m.whole and not _possessive(question, v) else None)
            # "5 wins", not "Tiger Woods won", nor "Anthony Davis's height" (whose height)
            best = min((x for x in (after, None if before is None else before + 0.5) if x is not None), default=None)
            if best is not None:
                out.append((best - m.strength / 10, m.column, v))
    return out


def _set_to(question: str, mentions: Sequence[Mention], used: set[int], values: Sequence[Grounded]) -> list[tuple[int, Grounded]]:
    """``change the source ... to 'USDA'``: a value right after "to" goes to the last free column named before it."""
    out = []
    for v in values:
        if not re.search(r"\bto\s*$", question[: v.start]):
            continue
        before = [(m.end, m.column) for m in mentions if m.end <= v.start and m.column not in used]
        if before:
            col = max(before)[1]
            out.append((col, v))
            used.add(col)
    return out


def cell_shape(text: object) -> str:
    """The form of a cell or value: ``year``, ``int``, ``signed``, ``decimal``, ``score``, ``date``, ``pair``, ``text``, ``empty``.

    Example:
        >>> [cell_shape(c) for c in ("1990", "12,000", "+2", "7.400", "3-1", "8 March 2007", "Beijing, China", "Rio", "")]
        ['year', 'int', 'signed', 'decimal', 'score', 'date', 'pair', 'text', 'empty']
    """
    t = "" if text is None else str(text).strip()
    if not t:
        return "empty"
    if re.fullmatch(r"\d{4}", t) and 1000 <= int(t) <= 2199:
        return "year"
    if re.fullmatch(r"\d{1,3}(,\d{3})+|\d+", t):
        return "int"
    if re.fullmatch(r"[+-]\d+(\.\d+)?", t):
        return "signed"
    if re.fullmatch(r"\d*\.\d+", t):
        return "decimal"
    if re.fullmatch(r"\d+\s*[-–]\s*\d+(\s*[-–]\s*\d+)*", t):
        return "score"
    date = parse_date(t) if re.search(r"\d", t) and re.search(r"[A-Za-z]", t) else None
    if date is not None and date.precision in ("day", "month"):
        return "date"
    if re.fullmatch(r"[^,\d]+,\s*[^,\d]+", t):
        return "pair"
    return "text"


def column_cells(table: Table) -> list[list[str]]:
    """Each column's cells as the table shows them (None as ''), in the table's order.

    Example:
        >>> column_cells(Table.from_rows(["a", "b"], [["x", ""], ["y", "2"]]))
        [['x', 'y'], ['', '2']]
    """
    select = exp.select(*(exp.column(c.text_sql, quoted=True) for c in table.columns)).from_(exp.table_(table.sql_name, quoted=True))
    rows = table.connection.execute(select.order_by(exp.column("rowid")).sql(dialect="sqlite")).fetchall()
    return [["" if r[i] is None else str(r[i]) for r in rows] for i in range(len(table.columns))]


def _dominant(cells: Sequence[str]) -> str | None:
    """The shape of at least 70 % of a column's non-empty cells, if any."""
    shapes = [cell_shape(c) for c in cells if c.strip()]
    if not shapes:
        return None
    top = max(set(shapes), key=shapes.count)
    return top if shapes.count(top) >= 0.7 * len(shapes) else None


def _fits(value: str, cells: Sequence[str]) -> bool:
    """A value is an existing cell of the column, or has the form of (nearly) all its cells (text never counts)."""
    v = value.strip().lower()
    if any(v == c.strip().lower() for c in cells):
        return True
    shape = cell_shape(value)
    return shape not in ("text", "empty") and _dominant(cells) == shape


def _matchings(options: dict[int, list[int]], limit: int = 2000) -> list[dict[int, int]]:
    """The largest assignments of values (keys) to distinct columns among their options (at most ``limit``)."""
    keys = list(options)
    best: list[dict[int, int]] = []
    size = 0

    def walk(i: int, taken: dict[int, int]) -> None:
        nonlocal size, best
        if len(best) >= limit:
            return
        if i == len(keys):
            if len(taken) > size:
                size, best = len(taken), [dict(taken)]
            elif len(taken) == size and taken:
                best.append(dict(taken))
            return
        for col in options[keys[i]]:
            if col not in taken.values():
                taken[keys[i]] = col
                walk(i + 1, taken)
                del taken[keys[i]]
        walk(i + 1, taken)

    walk(0, {})
    return best


def resemblance_pairs(table: Table, values: Sequence[Grounded], columns: Iterable[int]) -> list[tuple[int, Grounded]]:
    """Values placed by the cells they resemble: the pairs every largest consistent assignment agrees on.

    Example:
        >>> from pyql.environment.grounding import ground
        >>> t = Table.from_rows(["Year", "Venue", "Partner"], [["1987", "Beijing, China", "Chung So-young"]])
        >>> vs = [v for v in ground("in 1990 at Birmingham, England").values if v.kind != "number"]
        >>> [(t.headers[c], v.text) for c, v in resemblance_pairs(t, vs, [0, 1, 2])]
        [('Year', '1990'), ('Venue', 'Birmingham, England')]
        >>> resemblance_pairs(Table.from_rows(["Won", "Lost"], [["1", "2"]]), ground("3").values, [0, 1])
        []
    """
    if len(values) > 8:
        return []
    cells = column_cells(table)
    free = list(columns)
    options = {i: [c for c in free if _fits(_text(v), cells[c])] for i, v in enumerate(values)}
    options = {i: cs for i, cs in options.items() if cs}
    found = _matchings(options)
    if not found:
        return []
    agreed = set(found[0].items()).intersection(*(m.items() for m in found[1:]))
    return sorted(((c, values[i]) for i, c in agreed), key=lambda p: p[1].start)


def value_text(v: Grounded, column_cells_: Sequence[str]) -> str:
    """The text to store: the value as written; a quantity's number alone when the column's cells carry no unit.

    Example:
        >>> from pyql.environment.grounding import ground
        >>> value_text(ground("82 goals").values[0], ["147", "210"])
        '82'
    """
    text = _text(v)
    if v.kind == "quantity" and v.unit.isalpha() and not any(v.unit.lower() in c.lower() for c in column_cells_):
        number = re.match(r"[+-]?[\d,.]*\d", text.strip())
        if number:
            return number.group()
    return text


def pair_values(
    table: Table,
    question: str,
    g: Grounding | None = None,
    *,
    skip: Sequence[tuple[int, int]] = (),
    exclude: Iterable[int] = (),
    resemble: bool = True,
) -> list[tuple[int, Grounded]]:
    """(column index, value) pairs of a change question, by the rules of the module's docstring, in question order.

    Args:
        table: the table.
        question: the question.
        g: its grounding, if made.
        skip: spans whose values are not to be assigned (an update's condition values).
        exclude: columns not to be assigned (an update's condition columns).
        resemble: whether rule 5 (cell shapes) places the values no column is named for.
    """
    values, mentions = question_values(table, question, g)
    values = [v for v in values if not any(s < v.end and v.start < e for s, e in skip)]
    gone = set(exclude)
    listed = [(c, v) for c, v in listed_pairs(table, question) if c not in gone and not any(s < v.end and v.start < e for s, e in skip)]
    if listed:  # the row written out as a list: its pairs first, the rest of the question for the other columns
        gone |= {c for c, _ in listed}
        values = [v for v in values if not any(o.start < v.end and v.start < o.end for _, o in listed)]
    mentions = [m for m in mentions if m.column not in gone]
    pairs, blocked_cols, blocked_values = enumeration_pairs(question, values, mentions)
    pairs = [*listed, *pairs]
    protected = [(v.start, v.end) for v in values] + [(m.start, m.end) for m in mentions] + _name_spans(table, question)
    ranked = sorted(_segment_pairs(question, values, mentions, protected), key=lambda s: s[0])
    ranked += sorted(_adjacent_pairs(question, values, mentions), key=lambda s: s[0])
    used_cols = gone | blocked_cols | {c for c, _ in pairs}
    used_spans = blocked_values | {(v.start, v.end) for _, v in pairs}
    for _, col, v in ranked:
        if col not in used_cols and (v.start, v.end) not in used_spans:
            pairs.append((col, v))
            used_cols.add(col)
            used_spans.add((v.start, v.end))
    free = [v for v in values if (v.start, v.end) not in used_spans]
    pairs += _set_to(question, mentions, used_cols, free)
    used_spans |= {(v.start, v.end) for _, v in pairs}
    free = [v for v in free if (v.start, v.end) not in used_spans]
    rest = [c.index for c in table.columns if c.index not in used_cols]
    pairs += resemblance_pairs(table, free, rest) if resemble and free and rest else []
    quoted = [v for v in free if v.kind == "quoted" and (v.start, v.end) not in {(o.start, o.end) for _, o in pairs}]
    rest = [c for c in rest if c not in {c for c, _ in pairs}]
    if resemble and listed and len(quoted) == 1 and len(rest) == 1:  # "Insert 'Jane Smith' ... 'Theo' for School, ...": the one left
        pairs.append((rest[0], quoted[0]))
    return sorted(pairs, key=lambda p: p[1].start)


def last_pair(table: Table, question: str, pairs: Sequence[tuple[int, Grounded]], g: Grounding | None = None) -> tuple[int, Grounded] | None:
    """The pair a new row still lacks: exactly one column not given and exactly one value of the question left.

    A row the question describes gives every column; once the others are paired, the value left is
    the one column left's (a name the question writes first, with no column named next to it).

    Example:
        >>> t = Table.from_rows(["Name", "Original chapter"], [["Ann Lee", "Alpha"]], name="Legislators")
        >>> q = "Add David Lee to the legislators table with the Original chapter being Kappa Xi."
        >>> pairs = pair_values(t, q)
        >>> [(t.headers[c], v.text) for c, v in pairs], [(t.headers[c], v.text) for c, v in [last_pair(t, q, pairs)]]
        ([('Original chapter', 'Kappa Xi')], [('Name', 'David Lee')])
        >>> last_pair(t, "Add David Lee and Bo Li to the table with the Original chapter being Kappa Xi.", pairs) is None
        True
        >>> q = "Add 2015 EuroBasket to the table with the Original chapter being Kappa Xi."
        >>> last_pair(t, q, pair_values(t, q))[1].text
        '2015 EuroBasket'
    """
    given = {c for c, _ in pairs}
    missing = [c.index for c in table.columns if c.index not in given]
    if len(missing) != 1:
        return None
    values, _ = question_values(table, question, g)
    left = [v for v in values if not any(o.start < v.end and v.start < o.end for _, o in pairs)]
    if len(left) == 2 and re.fullmatch(r" ", question[left[0].end : left[1].start]):  # "2015 EuroBasket": one name
        text = question[left[0].start : left[1].end]
        left = [Grounded("span", text, left[0].start, left[1].end, text)]
    if not left:
        ordinal = _ordinal_value(question, column_cells(table)[missing[0]])
        left = [ordinal] if ordinal is not None else []
    return (missing[0], left[0]) if len(left) == 1 else None


#: The ordinal words of a place (``first`` ... ``tenth``): the row positions of :data:`grammars.vocabulary.ORDINALS` counted from the first.
_ORDINAL_WORDS = {word: n for word, n in ORDINALS.items() if n > 0}


def _ordinal_value(question: str, cells: Sequence[str]) -> Grounded | None:
    """The one ordinal word of a question ("placed second") written as a column of places writes it (``2nd``), when
    most of the column's cells are places (``1st``, ``3rd``).

    Example:
        >>> _ordinal_value("they placed second in the 400m", ["1st", "3rd", "5th"]).text
        '2nd'
        >>> _ordinal_value("they placed second", ["Gold", "Silver"]) is None
        True
    """
    filled = [c.strip() for c in cells if c.strip()]
    if not filled or sum(bool(re.fullmatch(r"\d+(?:st|nd|rd|th)", c)) for c in filled) < 0.7 * len(filled):
        return None
    found = [m for m in re.finditer(r"\b(" + "|".join(_ORDINAL_WORDS) + r")\b", question, re.IGNORECASE)]
    if len(found) != 1:
        return None
    n = _ORDINAL_WORDS[found[0].group(1).lower()]
    text = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    return Grounded("span", text, found[0].start(), found[0].end(), text)


def head_pair(table: Table, question: str, pairs: Sequence[tuple[int, Grounded]], g: Grounding | None = None) -> tuple[int, Grounded] | None:
    """"Insert 'Lambeau Field' into sports_venues ...": the value right after the verb, before *into*, names the new
    row: the table's first column, when no value is given for it and it is a column of text.

    Example:
        >>> t = Table.from_rows(["Venue", "Sports", "Capacity"], [["Wembley Stadium", "Football (soccer)", "90,000"], ["Eden Park", "Rugby", "50,000"]],
        ...                   name="sports_venues")
        >>> q = "Insert 'Lambeau Field' into sports_venues for American Football with a capacity of 81,441."
        >>> [(t.headers[c], v.text) for c, v in [head_pair(t, q, pair_values(t, q))]]
        [('Venue', "'Lambeau Field'")]
    """
    first = table.columns[0]
    if first.is_numeric or any(c == first.index for c, _ in pairs):
        return None
    m = re.match(r"\s*(?:please\s+)?(?:insert|add)\s+(?:the\s+|a\s+)?", question, re.IGNORECASE)
    if m is None:
        return None
    values, _ = question_values(table, question, g)
    head = next((v for v in values if v.start == m.end() and v.kind in ("quoted", "span")), None)
    if head is None or not re.match(r"\s+(?:into|to|in)\b", question[head.end :], re.IGNORECASE):
        return None
    if any(o.start < head.end and head.start < o.end for _, o in pairs):
        return None
    return first.index, head


def absent_pairs(table: Table, question: str, pairs: Sequence[tuple[int, Grounded]], g: Grounding | None = None) -> list[tuple[int, Grounded]]:
    """A new row's columns the question says it has none of ("with no additional notes"): the mark the column's
    cells write for none (``-``, ``—``, an empty cell; the most frequent cell without a letter or digit, if two or
    more cells write it).

    Example:
        >>> t = Table.from_rows(["Title", "Notes"], [["Up", "-"], ["Cars", "-"], ["Jaws", "Voice"]])
        >>> [(t.headers[c], v.value) for c, v in absent_pairs(t, "The movie 'Brave' had no additional notes.", [])]
        [('Notes', '-')]
    """
    given = {c for c, _ in pairs}
    _, mentions = question_values(table, question, g)
    cells = column_cells(table)
    out: list[tuple[int, Grounded]] = []
    for m in mentions:
        if m.column in given or m.column in {c for c, _ in out} or not m.whole:
            continue
        if not re.search(r"\bno\s+(?:[a-z]+\s+)?$", question[: m.start], re.IGNORECASE):
            continue
        marks = [c.strip() for c in cells[m.column] if not re.search(r"\w", c)]
        if marks:
            mark = max(set(marks), key=marks.count)
            if marks.count(mark) >= 2:
                out.append((m.column, Grounded("quoted", mark, m.start, m.start, mark)))
    return out
