"""The ``markqa`` format: MarkQA JSON (``mark_train.json``, ``mark_dev.json``, ``mark_test.json``), scored as MarkQA scores answers.

Records (a JSON list), as MarkQA publishes them (Huang et al., EMNLP 2023,
``cdhx/MarkQA``): ``ID``, ``question`` and ``comp_level`` (the
generalisation level: ``iid``, ``compositional`` or ``zero-shot``) in
every file; the train and dev files add ``sparql`` (its text without PREFIX
lines), ``PyQL`` (MarkQA's program, one statement a line, ``print(x.sparql)``
at the end or not) and ``answer`` (a list of values). The linked copies
MarkQA's baselines read also carry ``gold_entity_label_map`` (QID → label).

An item's kind is its ``comp_level`` (the ``--by comp_level`` categories,
in MarkQA's order); its ``groups`` add ``composition``: ``composition`` when
the ID names a composed question (``...-entities(1)-hops(2)``), else
``no_composition``, as MarkQA's ``run_eval.py`` splits them. Entities: the
``gold_entity_label_map`` (label → QID) when given, else the QIDs the gold
program or SPARQL names. The gold action chain is the ``PyQL`` program
imported by :func:`pyql.interchange.markqa.program_to_query` (parsed, never
executed) and written as action lines, when they build the same query
again; the load notes the programs that do not import. A record without
``answer`` (MarkQA's test file) has no gold: it runs, unscored.

Answers are scored by :func:`markqa_answer_match`, this format's
denotation hook (MarkQA's ``mrak_evaluate_valid_result``).

Example:
    >>> is_markqa({"ID": "123_all_4", "question": "q", "comp_level": "iid"}), is_markqa({"ID": "x", "question": "q"})
    (True, False)
    >>> markqa_answer_match([{"value": "4.41806711", "label": None}], ["4.4180671114970286"])
    True
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.registry import Source, dataset_format
from pyql.errors import PyQLError
from pyql.interchange.actions import read_actions
from pyql.interchange.markqa import program_to_query
from pyql.builder.profiles import WIKIDATA

__all__ = ["COMP_LEVELS", "is_markqa", "load_markqa", "markqa_answer_match", "markqa_gold_actions", "markqa_value"]

#: MarkQA's generalisation levels, in the order its evaluation lists them.
COMP_LEVELS: tuple[str, ...] = ("iid", "compositional", "zero-shot")

#: MarkQA's absolute tolerance between two numeric answers (``epsilon = 1e-5``).
EPSILON = 1e-5

_ENTITY_IRI = ("http://www.wikidata.org/entity/", "https://www.wikidata.org/entity/", "wd:")
_TYPED = re.compile(r'^"(.*)"(?:\^\^\S+|@[A-Za-z-]+)$', re.DOTALL)
_UTC = re.compile(r"^(\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.0+)?(?:Z|[+-]00:00)$")
_TRUE = frozenset({"true", "yes"})
_FALSE = frozenset({"false", "no"})
_QID = re.compile(r"\bQ[1-9]\d*\b")
_NO_ACTION_FORM = "no action lines build the same query"


def is_markqa(record: Mapping[str, Any]) -> bool:
    """A MarkQA record: ``ID``, ``question`` and ``comp_level``.

    Example:
        >>> is_markqa({"ID": "WebQTrn-1_x", "question": "q", "sparql": "SELECT ..."})
        False
    """
    return "ID" in record and "question" in record and "comp_level" in record


# ---------------------------------------------------------------------------
# MarkQA's answer accuracy


def markqa_value(value: Any) -> str:
    """One answer as MarkQA's executor writes it (a SPARQL JSON ``value``), whoever wrote it.

    Only the spelling of one value is made the same, never two values:
    a ``{"value", "label"}`` answer counts by its value; a Wikidata entity
    IRI or ``wd:Q64`` is its QID; a typed literal (``"5"^^xsd:integer``) its
    lexical form; a UTC ``dateTime`` ends in ``Z`` (``+00:00`` and ``.000``
    dropped, as rdflib and Virtuoso write it); a yes/no answer is ``TRUE`` or
    ``FALSE`` (the strings MarkQA's ``add_compare`` binds; pyql's ASK answers
    ``yes``/``no``, JSON has ``true``/``false``). Numbers stay as written.

    Example:
        >>> [markqa_value(v) for v in ["http://www.wikidata.org/entity/Q64", {"value": "wd:Q64", "label": "Berlin"}, True, "no"]]
        ['Q64', 'Q64', 'TRUE', 'FALSE']
        >>> markqa_value('"2021-12-31T00:00:00+00:00"^^xsd:dateTime'), markqa_value(366227), markqa_value("2.50")
        ('2021-12-31T00:00:00Z', '366227', '2.50')
    """
    if isinstance(value, Mapping):
        value = value.get("value")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    text = "" if value is None else str(value)
    typed = _TYPED.match(text)
    if typed:
        text = typed.group(1)
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    for prefix in _ENTITY_IRI:
        if text.startswith(prefix) and _QID.fullmatch(text[len(prefix):]):
            return text[len(prefix):]
    utc = _UTC.match(text)
    if utc:
        return utc.group(1) + "Z"
    low = text.strip().lower()
    if low in _TRUE:
        return "TRUE"
    if low in _FALSE:
        return "FALSE"
    return text


def _number(text: str) -> float | None:
    """MarkQA's ``is_numeric``: ``int(s)``, else ``float(s)``; a value that is not finite is not a number here."""
    try:
        number = float(int(text))
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return None
    except OverflowError:  # an integer too large for a float
        return None
    return number if math.isfinite(number) else None


def _same(gold: str, predicted: str) -> bool:
    g, p = _number(gold), _number(predicted)
    if g is not None and p is not None:
        return abs(g - p) <= EPSILON
    return gold == predicted


def markqa_answer_match(predicted: Sequence[Any], gold: Sequence[Any]) -> bool:
    """MarkQA's answer accuracy for one question (its ``mrak_evaluate_valid_result``).

    Source rule (``cdhx/MarkQA``, ``baselines/evaluation/
    eval_topk_prediction_final.py``): the gold and the predicted answers are
    each made a set and sorted; the two must have as many values; then,
    element by element in that order, two values that both parse as numbers
    (``int(s)`` or ``float(s)``) are equal when they differ by at most
    ``1e-5`` (absolute; no relative tolerance, no rounding), any other pair
    must be equal as strings (case and spaces count). A query without
    answers is never right (MarkQA counts it as not executable: its answer
    is ``UNEXECUTABLE``).

    Here both sides are first written as MarkQA's executor writes values
    (:func:`markqa_value`), so they are strings and sort as strings (as
    MarkQA's predictions always do). Kept from the source: the pairing by
    string order, so ``["5", "10"]`` against ``["5.0", "9.999999"]`` pairs
    ``"10"`` with ``"5.0"`` and fails, although each value has a match.
    Not kept: MarkQA counts ``NaN`` equal to every number and a JSON
    ``true`` equal to ``1``; here ``NaN``/``inf`` compare as strings and
    booleans as ``TRUE``/``FALSE``.

    Example:
        >>> markqa_answer_match(["366227.0"], ["366227"]), markqa_answer_match(["1641487.53"], ["1641488"])
        (True, False)
        >>> markqa_answer_match([{"value": "yes", "label": None}], ["TRUE"]), markqa_answer_match([], [])
        (True, False)
        >>> markqa_answer_match(["Q64", "Q1055", "Q64"], ["http://www.wikidata.org/entity/Q1055", "http://www.wikidata.org/entity/Q64"])
        True
    """
    predicted_set = sorted({markqa_value(a) for a in predicted})
    gold_set = sorted({markqa_value(a) for a in gold})
    if not predicted_set or len(predicted_set) != len(gold_set):
        return False
    return all(_same(g, p) for g, p in zip(gold_set, predicted_set))


# ---------------------------------------------------------------------------
# Loading


def markqa_gold_actions(program: str) -> tuple[list[str] | None, str | None]:
    """The action lines of a MarkQA program, or None and why not.

    The program is imported by :func:`pyql.interchange.markqa.program_to_query`
    (parsed, never executed); its action lines are the gold chain only when
    read back they build the same SPARQL (some steps, e.g. a sub-query, have
    no action form).

    Example:
        >>> markqa_gold_actions("a = PyQL()\\na.add_fact('Q64', 'P17', 'country', 'wdt')\\nprint(a.sparql)")
        (['add_fact(wd:Q64, wdt:P17, ?country)', 'execute()'], None)
        >>> markqa_gold_actions("a = PyQL()\\na.add_fact('Q64', 'P17')")[1]
        'MarkQA program, line 2, column 1: add_fact() takes 4 arguments (the method add_fact(s, p, o, p_prefix)), got 2: o, p_prefix missing'
        >>> markqa_gold_actions("a = PyQL()\\na.add_quantity('Q64', 'P1082', 'pop', 2021)")[0]
        ['add_quantity(wd:Q64, P1082, ?pop, 2021)', 'execute()']
    """
    try:
        query = program_to_query(program, WIKIDATA)
    except PyQLError as exc:
        return None, " ".join(str(exc).split())
    lines = query.actions()
    try:
        same = read_actions("\n".join(lines), {}, WIKIDATA).sparql() == query.sparql()
    except PyQLError:
        same = False
    if not same:
        return None, _NO_ACTION_FORM
    return [*lines, "execute()"], None


def _text_field(rec: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = rec.get(key)
    if value is None and not required:
        return None
    if key not in rec:
        raise DatasetError(f"{where}: {key} is missing; a MarkQA record needs ID, question and comp_level")
    if isinstance(value, int) and not isinstance(value, bool) and key == "ID":
        return str(value)
    if not isinstance(value, str) or (required and not value.strip()):
        got = "an empty string" if isinstance(value, str) else type(value).__name__
        raise DatasetError(f"{where}: {key} must be a non-empty string, got {got}")
    return value


def _answers(rec: Mapping[str, Any], where: str) -> list[Any] | None:
    """The gold answers: MarkQA's ``answer`` list of values; None when the record has none (the test file)."""
    if "answer" not in rec or rec["answer"] is None:
        return None
    raw = rec["answer"]
    if not isinstance(raw, list):
        raise DatasetError(f"{where}: answer must be a list of values (strings or numbers), got {type(raw).__name__}")
    for n, value in enumerate(raw):
        if not isinstance(value, (str, int, float)):
            got = "null" if value is None else type(value).__name__
            raise DatasetError(f"{where}: answer[{n}] must be a string, number or boolean (a value MarkQA's executor returns), got {got}")
    return list(raw)


def _entities(rec: Mapping[str, Any], program: str, sparql: str, where: str) -> dict[str, str]:
    linked = rec.get("gold_entity_label_map")
    if linked is not None:
        if not isinstance(linked, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in linked.items()):
            raise DatasetError(f"{where}: gold_entity_label_map must map QIDs to labels, e.g. {{\"Q64\": \"Berlin\"}}, got {linked!r:.80}")
        return {label: qid for qid, label in linked.items()}
    qids = _QID.findall(program) + re.findall(r"wd:(Q[1-9]\d*)\b", sparql)
    return {qid: qid for qid in dict.fromkeys(qids)}


def _markqa_item(rec: Any, index: int, source: Source) -> dict[str, Any]:
    where = f"{source.file}, item {index}"
    if not isinstance(rec, Mapping):
        raise DatasetError(f"{where}: not a JSON object (a MarkQA record is {{ID, question, comp_level, ...}}), got {type(rec).__name__}")
    qid = _text_field(rec, "ID", where)
    where = f"{where} (ID {qid})"
    question = _text_field(rec, "question", where)
    level = _text_field(rec, "comp_level", where)
    sparql = _text_field(rec, "sparql", where, required=False) or ""
    program = _text_field(rec, "PyQL", where, required=False) or ""
    actions, why = markqa_gold_actions(program) if program.strip() else (None, None)
    if why is not None:
        source.counts.setdefault("markqa_no_chain", []).append((qid, why))
    return {
        "id": str(qid),
        "question": str(question),
        "entities": _entities(rec, program, sparql, where),
        "answers": _answers(rec, where),
        "actions": actions,
        "table": None,
        "source": "markqa",
        "kind": level,
        "groups": {"comp_level": level, "composition": "composition" if "entities" in str(qid) else "no_composition"},
        "gold_query": {k: v for k, v in (("sparql", sparql), ("PyQL", program)) if v},
    }


def _note_programs(source: Source, total: int) -> None:
    """Note the PyQL programs that give no gold action chain: those that do not import, those without an action form."""
    missing = source.counts.pop("markqa_no_chain", [])
    broken = [(qid, why) for qid, why in missing if why != _NO_ACTION_FORM]
    if broken:
        qid, why = broken[0]
        source.note(f"{len(broken)} of {total} PyQL programs do not import (first: ID {qid}: {why})")
    unmapped = len(missing) - len(broken)
    if unmapped:
        source.note(f"{unmapped} of {total} PyQL programs import, but {_NO_ACTION_FORM}: those items have no gold action chain")


@dataset_format(
    "markqa",
    shape="records",
    priority=35,  # before cwq: a MarkQA record has ID, question and sparql too
    detect=is_markqa,
    known="MarkQA JSON (ID, question, comp_level[, sparql, PyQL, answer])",
    gold="answer[] (values as MarkQA's executor writes them), scored by MarkQA's rule (markqa_answer_match)",
    denotation=markqa_answer_match,
    category="comp_level",
    category_order=COMP_LEVELS,
    groups=("comp_level", "composition"),
)
def load_markqa(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a MarkQA file; ids are the IDs, the kind the comp_level (see the module docstring).

    Raises:
        DatasetError: a record that is not an object, or a field missing or
            of the wrong type (the message names the item, its ID and the field).

    Example:
        >>> from pathlib import Path
        >>> rec = {"ID": "1_all_2", "question": "How much larger is Berlin than Munich?", "comp_level": "iid",
        ...        "PyQL": "a = PyQL()\\na.add_fact('Q64', 'P17', 'country', 'wdt')", "answer": ["Q183"]}
        >>> [(i["kind"], i["entities"], i["actions"][0]) for i in load_markqa(Source(Path("t.json"), "", "markqa", [rec]))]
        [('iid', {'Q64': 'Q64'}, 'add_fact(wd:Q64, wdt:P17, ?country)')]
    """
    items = [_markqa_item(rec, index, source) for index, rec in enumerate(source.records)]
    _note_programs(source, len(items))
    unscored = sum(1 for item in items if item["answers"] is None)
    if unscored:
        source.note(f"{unscored} of {len(items)} items have no answer (MarkQA's test file publishes none): they are answered, not scored; "
                    "denotation accuracy leaves them out, answer F1 and Hit@1 count them as 0")
    others = Counter(item["kind"] for item in items if item["kind"] not in COMP_LEVELS)
    if others:
        listed = ", ".join(f"{name} ({n})" for name, n in others.most_common())
        source.note(f"comp_level values other than MarkQA's {', '.join(COMP_LEVELS)}: {listed}")
    yield from items
