"""Evaluation data sets: one item format for every source, detected from the file's content.

Every loader yields items (plain dicts)::

    {"id": str, "question": str, "entities": {name: id}, "answers": [gold ...],
     "actions": [gold action lines] or None, "table": table JSON or None,
     "source": format name, "kind": question kind or None}

Formats (:func:`detect_format` looks at the first record, not the file name):

``pyql``
    our JSON Lines (``pyql/data/demo_questions.jsonl``): ``question``,
    ``entities``, ``answers`` (values or ``{"value", "label"}``), optional
    ``id``, ``actions``, ``kind`` and ``table`` (``{"header", "rows"}`` or a
    dbbench ``{"table_name", "table_info"}``) for a table question.
``webqsp``
    WebQSP processed JSON (``WebQSP_test_processed.json``): a list of
    ``{"qid", "question", "entity_linking", "answer", ...}`` (JSON Lines of such
    records work too).
``webqsp-raw``
    the original WebQSP JSON ``{"Questions": [{"QuestionId", "ProcessedQuestion",
    "Parses": [{"TopicEntityMid", "TopicEntityName", "Answers": [...]}]}]}``:
    the first parse gives the entity and the answers.
``dbbench``
    AgentBench dbbench / WikiSQL-style table items (``wikisql_dbbench/dev.jsonl``):
    ``{"description", "label", "table": {"table_name", "table_info"}, "sql"}``.
    Only SELECT items are loaded (INSERT/UPDATE items have no answer to
    compare); ids are ``<file stem>-<line number>`` (0-based), stable across runs.

Example:
    >>> from importlib import resources
    >>> path = resources.files("pyql") / "data" / "demo_questions.jsonl"
    >>> items = load_dataset(path)
    >>> items.format, len(items), items[0]["id"], items[0]["entities"]
    ('pyql', 37, 'q01', {'Tropical Storm Rachel': 'm.0crbvqz'})
"""

from __future__ import annotations

import csv
import itertools
import json
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.errors import DatasetError  # noqa: F401 (defined in agent/errors.py)
from pyql.kb import metaqa
from pyql.lines import split_lines
from pyql_sql import Executor, SQLError, Table
from pyql_sql.table import wikisql_table_name
from pyql_sql.wikisql import query_from_wikisql

__all__ = [
    "FORMATS",
    "Dataset",
    "DatasetError",
    "detect_format",
    "graph_query_actions",
    "graph_query_entities",
    "iter_items",
    "load_dataset",
    "load_linking",
    "metaqa_actions",
    "metaqa_relation",
    "read_wtq_table",
    "sparql_actions",
]

#: The formats :func:`detect_format` recognizes.
FORMATS: tuple[str, ...] = (
    "pyql", "webqsp", "webqsp-raw", "dbbench", "grailqa", "graphq", "cwq", "metaqa", "wikisql", "wtq",
)

_KNOWN = (
    "known formats: pyql JSON Lines (question, entities, answers[, id, actions, table]), "
    "WebQSP processed JSON (qid, question, entity_linking, answer), the original WebQSP JSON "
    '({"Questions": [...]}), dbbench table items (description, label, table), GrailQA/GraphQ JSON '
    "(qid, question, answer, graph_query/s_expression[, level]), ComplexWebQuestions JSON (ID, question, answers), "
    "WikiSQL questions (table_id, question, sql), MetaQA text ('question with [entity]<TAB>answer|answer') "
    "and WikiTableQuestions TSV (id, utterance, context, targetValue; or its tagged/data/*.tagged)"
)


@dataclass
class Dataset(Sequence[dict[str, Any]]):
    """The items of a data set file.

    Attributes:
        path: the file.
        format: one of :data:`FORMATS`.
        items: the items, in file order.
        skipped: records left out (dbbench items that are not SELECT queries).
        unlinked: items the entity-linking file has no entry for (they have no entities).
        notes: what the loader could not do as the dataset's own tools do (e.g. WTQ without its tagged files).
    """

    path: Path
    format: str
    items: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    unlinked: int = 0
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        return self.items[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.items)


# ---------------------------------------------------------------------------
# Reading records


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"data set file not found: {path}") from None
    except IsADirectoryError:
        raise DatasetError(f"{path} is a directory; give the data set file itself") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read the data set {path}: {exc}") from None


def _read_records(path: Path, text: str | None = None) -> tuple[list[Any], bool]:
    """The records of a JSON or JSON Lines file, and whether it was JSON Lines."""
    if text is None:
        text = _read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise DatasetError(f"the data set {path} is empty")
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path} starts like a JSON list but is not valid JSON: {exc}") from None
        return list(data), False
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, Mapping) and "Questions" in data:
        return [data], False
    records = []
    for number, line in enumerate(split_lines(text), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {number}: not a JSON object ({exc.msg}); expected JSON Lines, one item per line") from None
    return records, True


def detect_format(record: Any) -> str | None:
    """The format of one record (see the module docstring), or None.

    Example:
        >>> detect_format({"qid": "WebQTest-0", "question": "q", "entity_linking": {}, "answer": []})
        'webqsp'
        >>> detect_format({"description": "How many?", "label": ["1"], "table": {"table_info": {}}})
        'dbbench'
        >>> detect_format({"question": "q", "answers": []}), detect_format({"text": "?"})
        ('pyql', None)
        >>> detect_format({"qid": 1, "question": "q", "answer": [], "s_expression": "(AND ...)", "level": "zero-shot"})
        'grailqa'
        >>> detect_format({"ID": "WebQTrn-1_x", "question": "q", "answers": []}), detect_format(
        ...     {"table_id": "1-1000181-1", "question": "q", "sql": {"sel": 0, "agg": 0, "conds": []}})
        ('cwq', 'wikisql')
    """
    if not isinstance(record, Mapping):
        return None
    if "Questions" in record and isinstance(record["Questions"], list):
        return "webqsp-raw"
    if _is_grail_like(record):
        return "grailqa" if "level" in record else "graphq"
    if "qid" in record and "question" in record and ("answer" in record or "entity_linking" in record):
        return "webqsp"
    if _is_cwq(record):
        return "cwq"
    if _is_wikisql(record):
        return "wikisql"
    if "description" in record and "table" in record and "label" in record:
        return "dbbench"
    if "question" in record and any(k in record for k in ("answers", "answer", "gold", "entities", "table")):
        return "pyql"
    return None


def _entities(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise DatasetError(f"{where}: entities must map names to ids, e.g. {{\"Jamaica\": \"m.03_r3\"}}, got {value!r:.80}")
    return dict(value)


def _answers(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, int, float, Mapping)):
        return [value]
    if not isinstance(value, list):
        raise DatasetError(f"{where}: answers must be a list of values or {{\"value\", \"label\"}} objects, got {type(value).__name__}")
    return list(value)


def _pyql_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    actions = rec.get("actions")
    if actions is not None and not (isinstance(actions, list) and all(isinstance(a, str) for a in actions)):
        raise DatasetError(f"{where}: actions must be a list of action lines")
    table = rec.get("table")
    if table is not None and not isinstance(table, Mapping):
        raise DatasetError(f'{where}: table must be an object ({{"header", "rows"}} or a dbbench table)')
    answers = rec["answers"] if "answers" in rec else rec.get("answer", rec.get("gold"))
    return {
        "id": str(rec.get("id", rec.get("qid", f"{stem}-{index}"))),
        "question": str(rec["question"]),
        "entities": _entities(rec.get("entities", rec.get("entity_linking")), where),
        "answers": _answers(answers, where),
        "actions": actions,
        "table": dict(table) if table is not None else None,
        "source": "pyql",
        "kind": rec.get("kind"),
    }


def _webqsp_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    sparql = rec.get("sparql_query")
    item = {
        "id": str(rec.get("qid", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": _entities(rec.get("entity_linking"), where),
        "answers": _answers(rec.get("answer"), where),
        "actions": sparql_actions(sparql) if isinstance(sparql, str) else None,
        "table": None,
        "source": "webqsp",
        "kind": None,
    }
    if isinstance(sparql, str):
        item["gold_query"] = {"sparql": sparql}
    return item


def _webqsp_raw_items(rec: Mapping[str, Any], stem: str) -> Iterator[dict[str, Any]]:
    for index, q in enumerate(rec["Questions"]):
        parses = q.get("Parses") or [{}]
        parse = parses[0]
        entities = {}
        if parse.get("TopicEntityMid"):
            entities[str(parse.get("TopicEntityName") or parse["TopicEntityMid"])] = str(parse["TopicEntityMid"])
        answers = [
            {"value": a.get("AnswerArgument"), "label": a.get("EntityName")} if a.get("EntityName") else a.get("AnswerArgument")
            for a in parse.get("Answers") or []
        ]
        yield {
            "id": str(q.get("QuestionId", f"{stem}-{index}")),
            "question": str(q.get("ProcessedQuestion") or q.get("RawQuestion") or ""),
            "entities": entities,
            "answers": answers,
            "actions": None,
            "table": None,
            "source": "webqsp-raw",
            "kind": None,
        }


def _is_select(rec: Mapping[str, Any]) -> bool:
    sql = rec.get("sql")
    query = sql.get("query") if isinstance(sql, Mapping) else sql
    if isinstance(query, str) and query.strip():
        return query.lstrip().upper().startswith("SELECT")
    kinds = rec.get("type") or []
    return not any(str(k).upper() in ("INSERT", "UPDATE", "DELETE") for k in kinds)


def _dbbench_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    table = rec.get("table")
    if not isinstance(table, Mapping) or "table_info" not in table:
        raise DatasetError(f'{where}: a dbbench item needs "table": {{"table_name", "table_info": {{"columns", "rows"}}}}')
    kinds = rec.get("type") or []
    return {
        "id": str(rec.get("id", f"{stem}-{index}")),
        "question": str(rec["description"]),
        "entities": {},
        "answers": _answers(rec.get("label"), where),
        "actions": None,
        "table": dict(table),
        "source": "dbbench",
        "kind": str(kinds[0]) if kinds else None,
    }


# ---------------------------------------------------------------------------
# Entity linking from a separate file (GrailQA, GraphQ, WebQSP ...)

_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")
_FB_KEY_ESCAPE = re.compile(r"\$([0-9A-Fa-f]{4})")


def _fb_unescape(text: str) -> str:
    """Undo Freebase key escapes in a mention (``st$002e paul`` → ``st. paul``)."""
    return _FB_KEY_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _is_id(text: str) -> bool:
    return bool(_MID.match(text)) or "^^" in text


def _mention_links(entities: Mapping[str, Any], file: Path, qid: str) -> dict[str, str]:
    """GrailQA's later ``*_el.json`` entry: ``{mid: {"mention", "start", "end", "friendly_name"}}`` → ``{mention: mid}``.

    A mention linked to several mids keeps the first (as QueryAgent does with its lists).
    """
    links: dict[str, str] = {}
    for mid, info in entities.items():
        if not isinstance(info, Mapping) or not str(info.get("mention") or "").strip():
            raise DatasetError(f'{file}: {qid!r} → {mid!r} must be {{"mention", "start", "end", "friendly_name"}}, got {info!r:.60}')
        links.setdefault(_fb_unescape(str(info["mention"])).strip(), str(mid).strip())
    return links


def load_linking(path: str | Path) -> dict[str, dict[str, str]]:
    """Entity-linking results from a JSON file: question id → ``{mention: entity id}``.

    Four shapes are read (each question's entry decides): the Pangu/TIARA
    results QueryAgent uses for GrailQA and GraphQ (``grail_pangu_tiara.json``,
    ``graphq_test.json``: ``{qid: {mention: [id, ...]}}``, the first id is
    taken, as QueryAgent does), GrailQA's own linking results in their first
    form (``entity_linking/*_el.json``: ``{qid: {mid: mention}}``) and their
    current one (``entity_linking_results/*_el.json``: ``{qid: {"question",
    "entities": {mid: {"mention", "start", "end", "friendly_name"}}}}``, the
    mention as written in the question), and a plain ``{qid: {mention: id}}``. Ids may be mids or
    typed literals (``1000.0^^http://www.w3.org/2001/XMLSchema#float``).
    Mentions are stripped and Freebase key escapes (``$002e``) undone.

    Raises:
        DatasetError: unreadable file, or not a JSON object of objects.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "el.json")
        >>> _ = open(p, "w").write(json.dumps({"1": {"the medium": ["m.03hk0m", "m.0x"]}, "2": {"m.060nc": "st$002e paul"}}))
        >>> load_linking(p)
        {'1': {'the medium': 'm.03hk0m'}, '2': {'st. paul': 'm.060nc'}}
    """
    file = Path(str(path))
    text = _read_text(file)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"the entity-linking file {file} is not JSON ({exc.msg}); expected {{qid: {{mention: [ids]}}}}") from None
    if not isinstance(data, Mapping):
        raise DatasetError(f"the entity-linking file {file} must be a JSON object {{qid: {{mention: [ids]}}}}, got a {type(data).__name__}")
    out: dict[str, dict[str, str]] = {}
    for qid, entry in data.items():
        if not isinstance(entry, Mapping):
            raise DatasetError(f"{file}: the entry of {qid!r} must be an object {{mention: [ids]}} or {{mid: mention}}, got {entry!r:.60}")
        links: dict[str, str] = {}
        if isinstance(entry.get("entities"), Mapping):
            out[str(qid)] = _mention_links(entry["entities"], file, str(qid))
            continue
        for key, value in entry.items():
            if isinstance(value, list):
                ids = [str(v) for v in value if str(v).strip()]
                if ids:
                    links[_fb_unescape(str(key)).strip()] = ids[0].strip()
            elif isinstance(value, str) and _is_id(str(key)) and not _is_id(value):
                links[_fb_unescape(value).strip()] = str(key).strip()
            elif isinstance(value, str):
                links[_fb_unescape(str(key)).strip()] = value.strip()
            else:
                raise DatasetError(f"{file}: {qid!r} → {key!r} must be a list of ids or one id/mention, got {value!r:.60}")
        out[str(qid)] = links
    return out


# ---------------------------------------------------------------------------
# Gold action chains (for replaying a gold query through an agent)


def _chain_actions(facts: Sequence[tuple[str, str, str]], answer: str) -> list[str] | None:
    """Action lines that build ``facts`` from the linked entities outwards, then answer.

    Each fact is added once one of its ends is an entity or an already
    bound variable, after a ``get_relation`` on that end (so every step is
    one an agent could take); None when the facts are not connected.
    """
    pending = list(facts)
    bound: set[str] = set()
    looked: set[str] = set()
    lines: list[str] = []
    while pending:
        for fact in pending:
            head, relation, tail = fact
            known = [t for t in (head, tail) if not t.startswith("?") or t in bound]
            if known:
                anchor = known[0]
                if anchor not in looked:
                    lines.append(f"get_relation({anchor})")
                    looked.add(anchor)
                lines.append(f"add_fact({head}, {relation}, {tail})")
                bound.update(t for t in (head, tail) if t.startswith("?"))
                pending.remove(fact)
                break
        else:
            return None
    if answer not in bound:
        return None
    return lines + [f"set_answer({answer})", "execute()"]


#: GrailQA/GraphQ node functions on a literal node that PyQL expresses: superlatives and comparisons.
_ARG_FUNCTIONS = {"argmax": "add_max", "argmin": "add_min"}
_COMPARISONS = (">", ">=", "<", "<=")


def graph_query_actions(graph_query: Any, function: str | None = "none", answer_count: int | None = None) -> list[str] | None:
    """The gold action chain of a GrailQA/GraphQ ``graph_query``.

    Class nodes become variables ``?x<nid>``, entity nodes their ids; the
    question node is the answer. A literal node with a function is a
    variable too: ``argmax``/``argmin`` become ``add_max``/``add_min`` on it,
    a comparison (``>``, ``>=``, ``<``, ``<=``) an ``add_filter`` against the
    literal's value. None for what the action language cannot replay exactly:
    counting, a literal without a function, and a superlative with more than
    one answer (``answer_count``): GrailQA's ARGMAX keeps ties, ``add_max``
    keeps one row.

    Example:
        >>> gq = {"nodes": [{"nid": 0, "node_type": "class", "question_node": 1},
        ...                 {"nid": 1, "node_type": "entity", "id": "m.03qcvdj", "question_node": 0}],
        ...       "edges": [{"start": 0, "end": 1, "relation": "rail.rail_network.railways"}]}
        >>> graph_query_actions(gq)
        ['get_relation(m.03qcvdj)', 'add_fact(?x0, rail.rail_network.railways, m.03qcvdj)', 'set_answer(?x0)', 'execute()']
        >>> gq["nodes"].append({"nid": 2, "node_type": "literal", "id": "1.5^^http://www.w3.org/2001/XMLSchema#float", "function": ">="})
        >>> gq["edges"].append({"start": 0, "end": 2, "relation": "rail.rail_network.length"})
        >>> graph_query_actions(gq, ">=")[-3:]
        ['add_filter(?x2, >=, 1.5)', 'set_answer(?x0)', 'execute()']
    """
    if function not in (None, "none", *_ARG_FUNCTIONS, *_COMPARISONS) or not isinstance(graph_query, Mapping):
        return None
    nodes = {n.get("nid"): n for n in graph_query.get("nodes") or [] if isinstance(n, Mapping)}
    terms: dict[Any, str] = {}
    extra: list[str] = []
    answer = None
    for nid, node in nodes.items():
        node_function = node.get("function") or "none"
        if node.get("node_type") == "entity" and node_function == "none":
            terms[nid] = str(node.get("id"))
        elif node.get("node_type") == "class" and node_function == "none":
            terms[nid] = f"?x{nid}"
        elif node.get("node_type") == "literal" and node_function in _ARG_FUNCTIONS:
            if answer_count is not None and answer_count > 1:
                return None
            terms[nid] = f"?x{nid}"
            extra.append(f"{_ARG_FUNCTIONS[node_function]}(?x{nid})")
        elif node.get("node_type") == "literal" and node_function in _COMPARISONS:
            terms[nid] = f"?x{nid}"
            extra.append(f"add_filter(?x{nid}, {node_function}, {str(node.get('id')).partition('^^')[0]})")
        else:
            return None
        if node.get("question_node") == 1:
            answer = terms[nid]
    facts = []
    for edge in graph_query.get("edges") or []:
        if edge.get("start") not in terms or edge.get("end") not in terms:
            return None
        facts.append((terms[edge["start"]], str(edge.get("relation")), terms[edge["end"]]))
    if answer is None or not facts:
        return None
    chain = _chain_actions(facts, answer)
    return None if chain is None else chain[:-2] + extra + chain[-2:]


_TRIPLE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s*\.$")
_NS_FILTER_OK = re.compile(r"^FILTER\s*\(\s*\?\w+\s*!=\s*(\?\w+|ns:[mg]\.[0-9a-z_]+)\s*\)$|^FILTER\s*\(!isLiteral", re.IGNORECASE)


def _ns_term(text: str) -> str:
    return text.removeprefix("ns:")


def sparql_actions(sparql: str, answer: str = "?x") -> list[str] | None:
    """The gold action chain of a WebQSP/CWQ-style SPARQL query (``ns:`` triple patterns, one a line).

    Only plain conjunctive queries are translated: a query with ORDER BY,
    LIMIT or a FILTER other than ``?a != ?b``, ``?a != ns:m.x`` and the
    language filter gives None.

    Example:
        >>> q = "PREFIX ns: <http://rdf.freebase.com/ns/>\\nSELECT DISTINCT ?x\\nWHERE {\\nFILTER (?x != ?c)\\n" \\
        ...     "?c ns:education.educational_institution.sports_teams ns:m.03d0l76 . \\n?c ns:organization.organization.headquarters ?x .\\n}"
        >>> sparql_actions(q)[:3]
        ['get_relation(m.03d0l76)', 'add_fact(?c, education.educational_institution.sports_teams, m.03d0l76)', 'get_relation(?c)']
    """
    if re.search(r"\b(ORDER\s+BY|LIMIT|OFFSET|GROUP\s+BY)\b", sparql, re.IGNORECASE):
        return None
    facts = []
    for raw in split_lines(sparql):
        line = raw.strip()
        if line.upper().startswith("FILTER"):
            if not _NS_FILTER_OK.match(line):
                return None
            continue
        match = _TRIPLE.match(line)
        if match:
            facts.append(tuple(_ns_term(t) for t in match.groups()))
    return _chain_actions(facts, answer) if facts else None  # type: ignore[arg-type]


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


# ---------------------------------------------------------------------------
# GrailQA and GraphQ (GrailQA-style JSON), ComplexWebQuestions


def _is_grail_like(record: Mapping[str, Any]) -> bool:
    return "qid" in record and "question" in record and ("graph_query" in record or "s_expression" in record)


def graph_query_entities(graph_query: Any) -> dict[str, str]:
    """The gold entities of a ``graph_query``: friendly name → id of its entity nodes.

    Example:
        >>> graph_query_entities({"nodes": [{"node_type": "entity", "id": "m.0pm2fgf", "friendly_name": "The Telephone / The Medium"},
        ...                                 {"node_type": "class", "id": "opera.opera_designer_gig"}]})
        {'The Telephone / The Medium': 'm.0pm2fgf'}
    """
    if not isinstance(graph_query, Mapping):
        return {}
    return {
        str(n.get("friendly_name") or n.get("id")).strip(): str(n.get("id"))
        for n in graph_query.get("nodes") or []
        if isinstance(n, Mapping) and n.get("node_type") == "entity" and n.get("id")
    }


def _grail_answer(answer: Any, where: str) -> Any:
    if isinstance(answer, Mapping):
        value = answer.get("answer_argument")
        if value in (None, ""):
            raise DatasetError(f"{where}: an answer needs answer_argument (GrailQA format), got {dict(answer)!r:.80}")
        label = answer.get("entity_name")
        return {"value": str(value), "label": str(label)} if label else str(value)
    return str(answer)


def _grail_item(rec: Mapping[str, Any], index: int, stem: str, fmt: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    raw = rec.get("answer")
    if raw is not None and not isinstance(raw, list):
        raise DatasetError(f"{where}: answer must be a list of {{answer_type, answer_argument, entity_name}}, got {type(raw).__name__}")
    graph_query = rec.get("graph_query")
    return {
        "id": str(rec.get("qid", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": graph_query_entities(graph_query),
        "answers": [_grail_answer(a, where) for a in raw or []],
        "actions": graph_query_actions(graph_query, rec.get("function", "none"), len(raw or [])),
        "table": None,
        "source": fmt,
        "kind": str(rec["level"]) if fmt == "grailqa" and rec.get("level") else None,
        "gold_query": {k: rec[k] for k in ("s_expression", "sparql_query", "graph_query") if k in rec},
    }


def _is_cwq(record: Mapping[str, Any]) -> bool:
    return "ID" in record and "question" in record and any(
        k in record for k in ("answers", "compositionality_type", "webqsp_ID", "sparql")
    )


def _cwq_item(rec: Mapping[str, Any], index: int, stem: str) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    answers = []
    for a in rec.get("answers") or []:
        if not isinstance(a, Mapping) or not (a.get("answer_id") or a.get("answer")):
            raise DatasetError(f"{where}: a CWQ answer is {{answer, answer_id, aliases}}, got {a!r:.80}")
        answers.append({"value": str(a.get("answer_id") or a.get("answer")), "label": a.get("answer"), "aliases": list(a.get("aliases") or [])})
    if not answers and isinstance(rec.get("answer"), (str, list)):  # ToG's copy of the test set: the answer's name
        answers = [str(a) for a in ([rec["answer"]] if isinstance(rec["answer"], str) else rec["answer"])]
    sparql = str(rec.get("sparql") or "")
    topic = rec.get("topic_entity")
    if isinstance(topic, Mapping):
        entities = {str(name): str(mid) for mid, name in topic.items()}
    else:
        mids = re.findall(r"ns:([mg]\.[0-9a-z_]+)", sparql)
        entities = {mid: mid for mid in dict.fromkeys(mids)}
    return {
        "id": str(rec.get("ID", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": entities,
        "answers": answers,
        "actions": sparql_actions(sparql) if sparql else None,
        "table": None,
        "source": "cwq",
        "kind": str(rec["compositionality_type"]) if rec.get("compositionality_type") else None,
        "gold_query": {"sparql": sparql} if sparql else {},
    }


# ---------------------------------------------------------------------------
# WikiSQL in its original form: questions (*.jsonl) + tables (*.tables.jsonl or *.db)


def _is_wikisql(record: Mapping[str, Any]) -> bool:
    sql = record.get("sql")
    return "table_id" in record and "question" in record and isinstance(sql, Mapping) and "sel" in sql


class _WikiSQLTables:
    """The tables of a WikiSQL split: ``<split>.tables.jsonl`` beside the questions, else ``<split>.db``."""

    def __init__(self, questions: Path, wanted: set[str]) -> None:
        base = questions.name[: -len(".jsonl")] if questions.name.endswith(".jsonl") else questions.stem
        self.jsonl = questions.with_name(base + ".tables.jsonl")
        self.db = questions.with_name(base + ".db")
        self.records: dict[str, Mapping[str, Any]] = {}
        self._tables: dict[str, Any] = {}
        if self.jsonl.is_file():
            with self.jsonl.open(encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DatasetError(f"{self.jsonl}, line {number}: not JSON ({exc.msg})") from None
                    if isinstance(rec, Mapping) and rec.get("id") in wanted:
                        self.records[str(rec["id"])] = rec
        elif not self.db.is_file():
            raise DatasetError(
                f"{questions} is WikiSQL (table_id, question, sql) but its tables are missing: put {self.jsonl.name} "
                f"or {self.db.name} (from WikiSQL's data.tar.bz2) next to it"
            )

    def table(self, table_id: str) -> tuple[Any, dict[str, Any]]:
        """The pyql_sql Table of an id and its JSON for the item."""
        if table_id in self._tables:
            return self._tables[table_id]
        try:
            if self.records:
                rec = self.records.get(table_id)
                if rec is None:
                    raise DatasetError(f"no table {table_id!r} in {self.jsonl}")
                table = Table.from_wikisql_record(rec)
                data = {"header": list(rec["header"]), "rows": [list(r) for r in rec["rows"]], "types": rec.get("types"), "name": table_id}
            else:
                table = Table.from_wikisql_db(self.db, table_id)
                conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
                try:
                    rows = conn.execute(f'SELECT * FROM "{wikisql_table_name(table_id)}"').fetchall()
                finally:
                    conn.close()
                data = {"header": list(table.headers), "rows": [list(r) for r in rows], "types": list(table.types), "name": table_id}
        except SQLError as exc:
            raise DatasetError(f"the WikiSQL table {table_id!r} does not load: {exc}") from None
        self._tables[table_id] = (table, data)
        return table, data


def _wikisql_item(rec: Mapping[str, Any], index: int, stem: str, tables: _WikiSQLTables) -> dict[str, Any]:
    where = f"{stem}, item {index}"
    table, data = tables.table(str(rec["table_id"]))
    try:
        query = query_from_wikisql(table, rec["sql"])
        gold = [a.value for a in Executor(table).execute(query)]
    except SQLError as exc:
        raise DatasetError(f"{where}: the gold query does not run on table {rec['table_id']}: {exc}") from None
    return {
        "id": str(rec.get("id", f"{stem}-{index}")),
        "question": str(rec["question"]),
        "entities": {},
        "answers": gold,
        "actions": list(query.actions()) + ["execute()"],
        "table": data,
        "source": "wikisql",
        "kind": None,
        "gold_query": {"sql": dict(rec["sql"])},
    }


# ---------------------------------------------------------------------------
# Text formats: MetaQA questions, WikiTableQuestions examples

_METAQA_LINE = re.compile(r"^[^\t]*\[[^\]\t]+\][^\t]*\t")
_QTYPE_LINE = re.compile(r"^[a-z]+(_to_[a-z]+)+$")
_BRACKET = re.compile(r"\[([^\]]+)\]")
_WTQ_HEADER = "id\tutterance\tcontext\ttargetValue"


def _text_format(text: str, file: Path) -> str | None:
    """``metaqa`` or ``wtq`` for those text formats, None for JSON; errors for MetaQA's other files."""
    first = next((line for line in split_lines(text) if line.strip()), "")
    if first.lstrip().startswith(("[", "{")):
        return None
    if first.rstrip("\r") == _WTQ_HEADER or first.startswith(_WTQ_HEADER + "\t"):
        return "wtq"
    if _METAQA_LINE.match(first):
        return "metaqa"
    if _QTYPE_LINE.match(first.strip()):
        raise DatasetError(
            f"{file} is a MetaQA question-type file; give the questions (e.g. 3-hop/vanilla/qa_test.txt): "
            "the types are read from qa_*_qtype.txt next to them"
        )
    if first.count("|") == 2 and "\t" not in first:
        raise DatasetError(f"{file} looks like MetaQA's kb.txt, a KB and not questions: give it as --kb metaqa:{file}")
    return None


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
            lines = [line.strip() for line in split_lines(_read_text(candidate)) if line.strip()]
            if len(lines) != count:
                raise DatasetError(f"{candidate} has {len(lines)} question types for the {count} questions of {file}; they must match line by line")
            return list(lines)
    return [None] * count


def _metaqa_items(text: str, file: Path) -> Iterator[dict[str, Any]]:
    lines = [line for line in split_lines(text) if line.strip()]
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


def _tsv_unescape(text: str) -> str:
    """WTQ's TSV escapes: ``\\n`` newline, ``\\p`` pipe, ``\\\\`` backslash."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "p": "|", "\\": "\\"}.get(m.group(1), m.group(0)), text)


def read_wtq_table(path: str | Path) -> dict[str, Any]:
    """A WikiTableQuestions table (``csv/xxx-csv/yyy.csv``) as ``{"header", "rows", "name"}``.

    WTQ's CSV escapes quotes and backslashes with a backslash (not by
    doubling) and writes a newline inside a cell as ``\\n``; short rows are
    padded with empty cells.

    Raises:
        DatasetError: a missing or empty file.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "0.csv")
        >>> _ = open(p, "w").write('"Year","Note"\\n"2004","a \\\\"b\\\\"\\\\\\\\nc"\\n')
        >>> read_wtq_table(p)["rows"]
        [['2004', 'a "b"\\nc']]
    """
    file = Path(str(path))
    try:
        with file.open(encoding="utf-8", newline="") as f:
            rows = [row for row in csv.reader(f, escapechar="\\", doublequote=False) if row]
    except FileNotFoundError:
        raise DatasetError(f"WTQ table not found: {file} (keep WTQ's layout: data/ and csv/ side by side)") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"cannot read the WTQ table {file}: {exc}") from None
    if not rows:
        raise DatasetError(f"the WTQ table {file} is empty; it needs a header row")
    rows = [[cell.replace("\\n", "\n") for cell in row] for row in rows]
    width = len(rows[0])
    body = [row + [""] * (width - len(row)) if len(row) < width else row[:width] for row in rows[1:]]
    return {"header": rows[0], "rows": body, "name": str(file)}


def _wtq_rows(text: str, file: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of a WTQ TSV (``data/*.tsv`` or ``tagged/data/*.tagged``) by its header's column names."""
    lines = split_lines(text)
    header = lines[0].rstrip("\r").split("\t")
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != len(header):
            raise DatasetError(
                f"{file}, line {number}: expected {len(header)} tab-separated fields ({', '.join(header)}), got {len(fields)}"
            )
        yield number, dict(zip(header, fields))


def _wtq_canon(file: Path, root: Path, text: str) -> tuple[dict[str, list[str]], str | None]:
    """WTQ's CoreNLP canonical gold values (``targetCanon``) by example id, and a note when there are none.

    They are read from the file itself when it is a ``.tagged`` file, else, as
    the official evaluator does, from every ``tagged/data/*.tagged`` file of
    the WTQ folder (``training.tagged`` covers ``training-before300.tsv`` and
    the random splits).
    """
    if "\ttargetCanon" in text.split("\n", 1)[0]:
        sources = [(file, text)]
    else:
        folder = root / "tagged" / "data"
        tagged = sorted(folder.glob("*.tagged")) if folder.is_dir() else []
        if not tagged:
            return {}, (
                f"{file}: no {folder}/*.tagged (WTQ's CoreNLP-tagged copy): gold values are compared by their raw "
                "targetValue, not the canonical numbers and dates WTQ's official evaluator uses"
            )
        sources = [(t, _read_text(t)) for t in tagged]
    canon = {}
    for path, tagged_text in sources:
        for _, row in _wtq_rows(tagged_text, path):
            if "targetCanon" not in row:
                raise DatasetError(f"{path} has no targetCanon column; it is not one of WTQ's tagged/data/*.tagged files")
            canon[row["id"]] = [_tsv_unescape(v) for v in row["targetCanon"].split("|")]
    return canon, None


def _wtq_items(text: str, file: Path, counts: dict[str, Any]) -> Iterator[dict[str, Any]]:
    root = file.parent.parent if file.parent.name == "data" else file.parent
    if file.parent.name == "data" and file.parent.parent.name == "tagged":
        root = file.parent.parent.parent  # WTQ/tagged/data/x.tagged: the csv/ folder is WTQ/csv
    canon, note = _wtq_canon(file, root, text)
    if note:
        counts.setdefault("notes", []).append(note)
    raw = 0
    tables: dict[str, dict[str, Any]] = {}
    for number, row in _wtq_rows(text, file):
        missing = [k for k in ("id", "utterance", "context", "targetValue") if k not in row]
        if missing:
            raise DatasetError(f"{file}, line {number}: no {', '.join(missing)} column (WTQ: id, utterance, context, targetValue)")
        context = row["context"]
        if context not in tables:
            table = read_wtq_table(root / context)
            table["name"] = context
            tables[context] = table
        originals = [_tsv_unescape(v) for v in row["targetValue"].split("|")]
        canons = canon.get(row["id"])
        if canons is not None and len(canons) == len(originals):
            answers: list[Any] = [{"value": o, "canon": c} for o, c in zip(originals, canons)]
        else:
            answers = originals
            raw += 1
        yield {
            "id": row["id"],
            "question": _tsv_unescape(row["utterance"]),
            "entities": {},
            "answers": answers,
            "actions": None,
            "table": tables[context],
            "source": "wtq",
            "kind": None,
        }
    if raw and canon:
        counts.setdefault("notes", []).append(
            f"{file}: {raw} examples have no targetCanon in the tagged files: their gold values are compared by the raw targetValue"
        )


def _records_items(file: Path, text: str, counts: dict[str, Any]) -> Iterator[dict[str, Any]]:
    records, _ = _read_records(file, text)
    stem = file.stem.replace("_processed", "")
    if not records:
        return
    fmt = detect_format(records[0])
    if fmt is None:
        first = records[0]
        keys = ", ".join(map(str, first)) if isinstance(first, Mapping) else type(first).__name__
        raise DatasetError(f"{file}: unknown data set format (first record has keys: {keys}); {_KNOWN}")
    counts["format"] = fmt
    tables = _WikiSQLTables(file, {str(r.get("table_id")) for r in records if isinstance(r, Mapping)}) if fmt == "wikisql" else None
    for index, rec in enumerate(records):
        kind = detect_format(rec)
        if kind != fmt and {kind, fmt} != {"grailqa", "graphq"}:
            raise DatasetError(f"{file}, item {index}: not a {fmt} record like the first one (keys: {', '.join(map(str, rec)) if isinstance(rec, Mapping) else type(rec).__name__})")
        if fmt == "webqsp-raw":
            yield from _webqsp_raw_items(rec, stem)
        elif fmt == "webqsp":
            yield _webqsp_item(rec, index, stem)
        elif fmt in ("grailqa", "graphq"):
            yield _grail_item(rec, index, stem, fmt)
        elif fmt == "cwq":
            yield _cwq_item(rec, index, stem)
        elif fmt == "wikisql":
            assert tables is not None
            yield _wikisql_item(rec, index, stem, tables)
        elif fmt == "dbbench":
            if not _is_select(rec):
                counts["skipped"] += 1
                continue
            yield _dbbench_item(rec, index, stem)
        else:
            yield _pyql_item(rec, index, stem)


def iter_items(
    path: str | Path, *, counts: dict[str, Any] | None = None, linking: str | Path | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the items of a data set file (any format of :data:`FORMATS`).

    Args:
        path: the file.
        counts: if given, ``counts["format"]``, ``counts["skipped"]`` and
            ``counts["unlinked"]`` are filled in.
        linking: an entity-linking file (:func:`load_linking`); when given,
            each item's entities are the ones linked for its id (none when the
            file has no entry for it) instead of the data set's own.

    Raises:
        DatasetError: unreadable file, unknown format (the message lists the
            known ones and the keys found), or a malformed item.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "mine.jsonl")
        >>> _ = open(p, "w").write(json.dumps({"text": "what?"}) + "\\n")
        >>> next(iter_items(p))
        Traceback (most recent call last):
        ...
        agent.errors.DatasetError: ...mine.jsonl: unknown data set format (first record has keys: text); known formats: ...
    """
    file = Path(str(path))
    links = load_linking(linking) if linking is not None else None
    text = _read_text(file)
    counts = counts if counts is not None else {}
    counts.setdefault("skipped", 0)
    counts.setdefault("unlinked", 0)
    fmt = _text_format(text, file)
    if fmt == "metaqa":
        counts["format"] = fmt
        items: Iterator[dict[str, Any]] = _metaqa_items(text, file)
    elif fmt == "wtq":
        counts["format"] = fmt
        items = _wtq_items(text, file, counts)
    else:
        items = _records_items(file, text, counts)
    for item in items:
        if links is not None:
            if item["id"] in links:
                item["entities"] = dict(links[item["id"]])
            else:
                item["entities"] = {}
                counts["unlinked"] += 1
        yield item


def load_dataset(path: str | Path, *, limit: int | None = None, linking: str | Path | None = None) -> Dataset:
    """Load a whole data set (see :func:`iter_items`); ids must be unique.

    Args:
        path: the file.
        limit: keep only the first ``limit`` items.
        linking: an entity-linking file for the items' entities (:func:`load_linking`).

    Raises:
        DatasetError: as :func:`iter_items`, or a repeated id.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "tables.jsonl")
        >>> table = {"table_name": "T", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"]]}}
        >>> rows = [{"description": "How many?", "label": ["1"], "table": table, "sql": {"query": "SELECT COUNT(a) FROM T"}},
        ...         {"description": "Add a row.", "label": ["INSERT ..."], "table": table, "type": ["INSERT"]}]
        >>> _ = open(p, "w").write("\\n".join(json.dumps(r) for r in rows))
        >>> ds = load_dataset(p)
        >>> ds.format, [item["id"] for item in ds], ds.skipped
        ('dbbench', ['tables-0'], 1)
    """
    if limit is not None and limit < 0:
        raise DatasetError(f"limit must be >= 0, got {limit}")
    counts: dict[str, Any] = {}
    items: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for item in iter_items(path, counts=counts, linking=linking):
        if limit is not None and len(items) >= limit:
            break
        if item["id"] in seen:
            raise DatasetError(
                f"{path}: the id {item['id']!r} is used by items {seen[item['id']]} and {len(items)}; ids must be unique "
                "(a run is resumed by id)"
            )
        seen[item["id"]] = len(items)
        items.append(item)
    return Dataset(
        Path(str(path)),
        str(counts.get("format", "pyql")),
        items,
        int(counts.get("skipped", 0)),
        int(counts.get("unlinked", 0)),
        list(counts.get("notes") or []),
    )
