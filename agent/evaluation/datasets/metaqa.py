"""The ``metaqa`` format: MetaQA questions (``N-hop/vanilla/qa_*.txt``), one ``question with [entity]<TAB>answer|answer`` a line.

The bracketed entity is linked to ``mq:<name>`` of the MetaQA KB
(``--kb metaqa:kb.txt --profile generic``; the KB side, entity and
relation ids included, is :mod:`pyql.kb.metaqa`); the kind is the line's
question type from ``qa_*_qtype.txt`` (next to ``vanilla/``, or beside the
file), which also gives the gold chain (:func:`metaqa_actions`); ids are
``N-hop-<stem>-<line>``, and the hop names the run's benchmark
(``metaqa-3hop``). A MetaQA ``kb.txt`` or ``qa_*_qtype.txt`` given as the
data set says what to give instead.

Example:
    >>> is_metaqa_line("what movies did [Joe Thomas] appear in\\tThe Inbetweeners Movie")
    True
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.errors import DatasetError
from agent.evaluation.datasets.reading import read_text
from agent.evaluation.datasets.registry import Source, dataset_format
from pyql.kb import metaqa
from pyql.lines import split_lines

__all__ = ["is_metaqa_line", "load_metaqa", "metaqa_actions", "metaqa_benchmark", "metaqa_misfile", "metaqa_relation"]

_METAQA_LINE = re.compile(r"^[^\t]*\[[^\]\t]+\][^\t]*\t")
_QTYPE_LINE = re.compile(r"^[a-z]+(_to_[a-z]+)+$")
_BRACKET = re.compile(r"\[([^\]]+)\]")
_HOP = re.compile(r"^([123])-?hop", re.IGNORECASE)

_SMOKE = {
    "metaqa-1hop": {"data": "metaqa/1-hop/vanilla/qa_test.txt", "kb": "metaqa:metaqa/kb.txt", "profile": "generic"},
    "metaqa-2hop": {"data": "metaqa/2-hop/vanilla/qa_test.txt", "kb": "metaqa-items", "profile": "generic"},
    "metaqa-3hop": {"data": "metaqa/3-hop/vanilla/qa_test.txt", "kb": "metaqa-items", "profile": "generic"},
}

# MetaQA question types name the hops: actor_to_movie_to_director.
_METAQA_RELATIONS = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "tag": "has_tags",
    "tags": "has_tags",
    "year": "release_year",
    "language": "in_language",
    "genre": "has_genre",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}


def metaqa_relation(a: str, b: str) -> str | None:
    """The MetaQA ``kb.txt`` relation of one hop ``a_to_b`` of a question type (one end is a movie), or None.

    Example:
        >>> metaqa_relation("actor", "movie"), metaqa_relation("movie", "language"), metaqa_relation("actor", "year")
        ('starred_actors', 'in_language', None)
    """
    if b == "movie":
        return _METAQA_RELATIONS.get(a)
    if a == "movie":
        return _METAQA_RELATIONS.get(b)
    return None


def metaqa_actions(qtype: str | None, entity: str) -> list[str] | None:
    """The gold action chain of a MetaQA question from its type (``qa_*_qtype.txt``).

    Each ``a_to_b`` hop is one fact between a movie and the other node; when
    the last node has the type of the first (``movie_to_director_to_movie``)
    the topic entity is filtered out, as MetaQA's answers leave it out.

    Example:
        >>> metaqa_actions("actor_to_movie", "Joe Thomas")
        ['get_relation(mq:Joe_Thomas)', 'add_fact(?x1, mqr:starred_actors, mq:Joe_Thomas)', 'set_answer(?x1)', 'execute()']
        >>> metaqa_actions("movie_to_unknown", "Kismet") is None
        True
    """
    if not qtype:
        return None
    kinds = qtype.strip().split("_to_")
    if len(kinds) < 2:
        return None
    current = metaqa.entity_id(entity)
    lines: list[str] = []
    for n, (a, b) in enumerate(itertools.pairwise(kinds), 1):
        var = f"?x{n}"
        lines.append(f"get_relation({current})")
        if b == "movie" and a in _METAQA_RELATIONS:
            lines.append(f"add_fact({var}, {metaqa.relation_id(_METAQA_RELATIONS[a])}, {current})")
        elif a == "movie" and b in _METAQA_RELATIONS:
            lines.append(f"add_fact({current}, {metaqa.relation_id(_METAQA_RELATIONS[b])}, {var})")
        else:
            return None
        current = var
    if kinds[0] == kinds[-1]:
        lines.append(f"add_filter({current}, !=, {metaqa.entity_id(entity)})")
    return lines + [f"set_answer({current})", "execute()"]


def is_metaqa_line(line: str) -> bool:
    """A MetaQA question line: a bracketed entity before the tab.

    Example:
        >>> is_metaqa_line("Kismet|directed_by|William Dieterle")
        False
    """
    return bool(_METAQA_LINE.match(line))


def metaqa_misfile(line: str, file: Path) -> str | None:
    """What to give instead when a data set's first line shows MetaQA's question types or its ``kb.txt``.

    Example:
        >>> metaqa_misfile("Kismet|directed_by|William Dieterle", Path("kb.txt"))
        "kb.txt looks like MetaQA's kb.txt, a KB and not questions: give it as --kb metaqa:kb.txt"
    """
    if _QTYPE_LINE.match(line.strip()):
        return (
            f"{file} is a MetaQA question-type file; give the questions (e.g. 3-hop/vanilla/qa_test.txt): "
            "the types are read from qa_*_qtype.txt next to them"
        )
    if line.count("|") == 2 and "\t" not in line:
        return f"{file} looks like MetaQA's kb.txt, a KB and not questions: give it as --kb metaqa:{file}"
    return None


def metaqa_benchmark(records: Sequence[Mapping[str, Any]]) -> str:
    """The benchmark of a MetaQA run: its records carry their hop in the id (``3-hop-qa_test-0``).

    Example:
        >>> metaqa_benchmark([{"id": "3-hop-qa_test-0"}]), metaqa_benchmark([{"id": "qa_test-0"}])
        ('metaqa-3hop', 'metaqa')
    """
    hops = Counter(m.group(1) for r in records if (m := _HOP.match(str(r.get("id", "")))))
    return f"metaqa-{hops.most_common(1)[0][0]}hop" if hops else "metaqa"


def _metaqa_prefix(file: Path) -> str | None:
    for folder in (file.parent, file.parent.parent):
        if re.fullmatch(r"\d-hop", folder.name):
            return folder.name
    match = re.search(r"(\d)-?hop", file.stem)
    return f"{match.group(1)}-hop" if match else None


def _metaqa_qtypes(file: Path, count: int) -> list[str | None]:
    name = f"{file.stem}_qtype.txt"
    for candidate in (file.with_name(name), file.parent.parent / name):
        if candidate.is_file():
            lines = [line.strip() for line in split_lines(read_text(candidate)) if line.strip()]
            if len(lines) != count:
                raise DatasetError(f"{candidate} has {len(lines)} question types for the {count} questions of {file}; they must match line by line")
            return list(lines)
    return [None] * count


@dataset_format(
    "metaqa",
    shape="text",
    priority=20,
    detect=is_metaqa_line,
    known="MetaQA text ('question with [entity]<TAB>answer|answer')",
    gold="the answers after the tab, split at |",
    benchmark=metaqa_benchmark,
    misfile=metaqa_misfile,
    smoke=_SMOKE,
)
def load_metaqa(source: Source) -> Iterator[dict[str, Any]]:
    """The items of a MetaQA questions file (see the module docstring).

    Raises:
        DatasetError: a line without ``[entity]`` and a tab, or a types file of another length.

    Example:
        >>> src = Source(Path("qa_test.txt"), "what movies did [Joe Thomas] appear in\\tThe Inbetweeners Movie\\n", "metaqa")
        >>> [(i["id"], i["entities"], i["answers"]) for i in load_metaqa(src)]
        [('qa_test-0', {'Joe Thomas': 'mq:Joe_Thomas'}, ['The Inbetweeners Movie'])]
    """
    file = source.file
    lines = [line for line in split_lines(source.text) if line.strip()]
    qtypes = _metaqa_qtypes(file, len(lines))
    prefix = _metaqa_prefix(file)
    for index, line in enumerate(lines):
        question, sep, answers = line.partition("\t")
        found = _BRACKET.search(question)
        if not sep or not found:
            raise DatasetError(f"{file}, question {index + 1}: expected 'question with [entity]<TAB>answer|answer' (MetaQA format), got {line[:80]!r}")
        entity = found.group(1).strip()
        yield {
            "id": f"{prefix}-{file.stem}-{index}" if prefix else f"{file.stem}-{index}",
            "question": question.strip(),
            "entities": {entity: metaqa.entity_id(entity)},
            "answers": [a.strip() for a in answers.split("|") if a.strip()],
            "actions": metaqa_actions(qtypes[index], entity),
            "table": None,
            "source": "metaqa",
            "kind": qtypes[index],
        }
