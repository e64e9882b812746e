"""Per-question subgraphs (``--kb subgraphs:FILE``): each question runs on its own small in-memory store.

KBQA papers that do without a Freebase server publish, for every question,
the subgraph it is answered on. Two shapes are read, from a JSON Lines file
(one question a line; a JSON list works too, read whole):

* **triples** (RoG's ``rmanluo/RoG-webqsp`` and ``RoG-cwq``, exported with
  ``datasets``' ``to_json``): ``{"id", "question", "answer", "q_entity",
  "a_entity", "graph": [[head, relation, tail], ...]}``, entities by their
  name (or their Freebase id when they have none: the unnamed CVT nodes);
* **indexed** (NSM's ``*_simple.json``, after GraftNet):
  ``{"id", "question", "answers", "entities": [i, ...], "subgraph":
  {"entities": [i, ...], "tuples": [[h, r, t], ...]}}``, integers into
  NSM's ``entities.txt`` and ``relations.txt`` (one id a line, the line
  number is the integer), which must lie beside the file. GraftNet's own
  form, ``{"kb_id" | "rel_id", "text"}`` objects in place of the integers,
  is read too.

StructGPT's KG files (numpy arrays and pickled vocabularies) are not read:
a pickle is code, not data.

Terms become IRIs of the profile the KB is opened with (:func:`entity_iri`,
:func:`relation_iri`): a Freebase id (``m.0gxnnwq``) or relation
(``people.person.sibling_s``) its ``ns:`` IRI under the freebase profile; any
other text a node ``sg:<local>`` (``sg:Justin_Bieber``; the local name as
:func:`pyql.kb.metaqa.entity_local` makes it) labelled with the text by the
profile's label predicates (``type.object.name`` for Freebase), so that
observations show names; a relation that is no name of the profile
``sgr:<local>``. A tail that reads as a year, a date or a number is a typed
literal, as Freebase stores it. In the indexed shape no entity has a name:
each is labelled with its id (GraftNet's objects with their text), so that
it is not taken for an unnamed node (a CVT), which the triples shape keeps
for its ids without a name.

The file is scanned once (:func:`read_subgraphs`; every record is checked,
then its graph dropped): the index keeps each question's byte range, so a
question's KB reads its one line again (:meth:`SubgraphFile.graph`), and a
file of any size is never held in memory. ``subgraphs:FILE#ID`` opens the
KB of one question; ``subgraphs:FILE`` names the whole file
(:class:`SubgraphSet`), which answers no query itself: ``pyql eval`` opens
each question's own by its id.

Example:
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "rog.jsonl")
    >>> rec = {"id": "q1", "question": "who is justin bieber's brother?", "answer": ["Jaxon Bieber"],
    ...        "q_entity": ["Justin Bieber"], "graph": [["Justin Bieber", "people.person.sibling_s", "m.0gxnnwc"],
    ...        ["m.0gxnnwc", "people.sibling_relationship.sibling", "Jaxon Bieber"]]}
    >>> _ = open(p, "w").write(json.dumps(rec) + "\\n")
    >>> kb = open_subgraphs(p + "#q1")
    >>> entity_id("Justin Bieber"), kb.relations("sg:Justin_Bieber").forward
    ('sg:Justin_Bieber', ('people.person.sibling_s',))
    >>> len(open_subgraphs(p)), open_subgraphs(p).shape
    (1, 'triples')
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from pyql.errors import EngineError, KBError
from pyql.builder.escape import XSD
from pyql.kb.base import KB
from pyql.kb.metaqa import entity_local
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.builder.profiles import Profile, get_profile, profile_of_id
from pyql.builder.terms import Term

__all__ = [
    "ENTITY_NS",
    "RELATION_NS",
    "SubgraphFile",
    "SubgraphSet",
    "entity_id",
    "entity_iri",
    "open_subgraphs",
    "read_subgraphs",
    "relation_iri",
    "subgraph_profile",
]

#: Namespace of the entities a subgraph names by text (prefix ``sg:``).
ENTITY_NS = "http://pyql.org/subgraph/entity/"
#: Namespace of the relations that are no name of the profile (prefix ``sgr:``).
RELATION_NS = "http://pyql.org/subgraph/relation/"

_YEAR = re.compile(r"-?\d{4}\Z")
_YEAR_MONTH = re.compile(r"-?\d{4}-\d{2}\Z")
_DATE = re.compile(r"-?\d{4}-\d{2}-\d{2}\Z")
_DATE_TIME = re.compile(r"-?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?\Z")
_INTEGER = re.compile(r"[+-]?\d+\Z")
_DECIMAL = re.compile(r"[+-]?(\d+\.\d*|\.\d+)\Z")
_LITERALS = ((_YEAR, "gYear"), (_YEAR_MONTH, "gYearMonth"), (_DATE, "date"), (_DATE_TIME, "dateTime"),
             (_INTEGER, "integer"), (_DECIMAL, "decimal"))
#: The fields that hold a record's graph, by shape.
_SHAPES = {"graph": "triples", "subgraph": "indexed"}


def entity_iri(text: str, profile: str | Profile = "freebase") -> str:
    """The IRI of an entity a subgraph names: a profile's id (``m.0gxnnwq``) its IRI, an IRI itself, else ``sg:<local>``.

    Example:
        >>> entity_iri("m.0gxnnwq"), entity_iri("Jaxon Bieber")
        ('http://rdf.freebase.com/ns/m.0gxnnwq', 'http://pyql.org/subgraph/entity/Jaxon_Bieber')
        >>> entity_iri("m.0gxnnwq", "generic")
        'http://pyql.org/subgraph/entity/m-2e-0gxnnwq'
    """
    chosen = get_profile(profile)
    if text.startswith(("http://", "https://")) and " " not in text:
        return text
    if profile_of_id(text) == chosen.name:
        expanded = chosen.expand_name(text)
        if expanded is not None:
            return expanded
    return ENTITY_NS + entity_local(text)


def entity_id(text: str, profile: str | Profile = "freebase") -> str:
    """How an action writes the entity a subgraph names (the id a data set item links a question entity to).

    Example:
        >>> entity_id("Justin Bieber"), entity_id("m.06w2sn5"), entity_id("Grégoire Colin")
        ('sg:Justin_Bieber', 'm.06w2sn5', 'sg:Gr-e9-goire_Colin')
    """
    return subgraph_profile(profile).shorten(entity_iri(text, profile))


def relation_iri(text: str, profile: str | Profile = "freebase") -> str:
    """The IRI of a relation: the profile's name for it (``ns:people.person.sibling_s``), else ``sgr:<local>``.

    The local name keeps ASCII letters, digits and ``_``; any other character is ``-<hex code>-``.

    Example:
        >>> relation_iri("people.person.sibling_s"), relation_iri("directed_by")
        ('http://rdf.freebase.com/ns/people.person.sibling_s', 'http://pyql.org/subgraph/relation/directed_by')
    """
    chosen = get_profile(profile)
    if text.startswith(("http://", "https://")) and " " not in text:
        return text
    expanded = chosen.expand_name(text, "relation")
    if expanded is not None:
        return expanded
    local = "".join(ch if (ch.isascii() and (ch.isalnum() or ch == "_")) else f"-{ord(ch):x}-" for ch in text.strip())
    return RELATION_NS + ("_" + local if local.startswith("-") else local)


def subgraph_profile(profile: str | Profile = "freebase") -> Profile:
    """The profile of a subgraph KB: ``profile`` with the ``sg:``/``sgr:`` prefixes, its label predicates out of relation lists.

    It depends on nothing but ``profile`` (a replay, which reads no file, gives its KB the same).

    Example:
        >>> p = subgraph_profile("freebase")
        >>> p.prefixes["sg"], p.is_hidden("http://rdf.freebase.com/ns/type.object.name")
        ('http://pyql.org/subgraph/entity/', True)
    """
    base = get_profile(profile)
    if base.prefixes.get("sg") == ENTITY_NS and base.prefixes.get("sgr") == RELATION_NS:
        return base
    hidden = tuple(dict.fromkeys((*base.hidden_relation_prefixes, *base.label_predicates)))
    return base.with_prefixes({"sg": ENTITY_NS, "sgr": RELATION_NS}).with_(hidden_relation_prefixes=hidden)


# ---------------------------------------------------------------------------
# The file and its index


@dataclass
class SubgraphFile:
    """A scanned subgraph file: its shape, each question's byte range (or graph), NSM's vocabularies.

    Attributes:
        path: the file.
        shape: ``triples`` (RoG) or ``indexed`` (NSM, GraftNet).
        spans: question id → (offset, length) of its line (JSON Lines).
        graphs: question id → its graph (a JSON list, read whole).
        entities, relations: NSM's vocabularies (line number → id), for integer terms.
    """

    path: Path
    shape: str
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    graphs: dict[str, list[Any]] = field(default_factory=dict)
    entities: list[str] | None = None
    relations: list[str] | None = None

    def ids(self) -> list[str]:
        """The question ids, in file order."""
        return list(self.spans or self.graphs)

    def __contains__(self, question: object) -> bool:
        return question in self.spans or question in self.graphs

    def graph(self, question: str) -> list[tuple[Any, Any, Any]]:
        """The triples of one question, as the file writes them (its line read again).

        Raises:
            KBError: no subgraph for that id (the message names a few that are there).
        """
        if question not in self:
            ids = self.ids()
            some = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise KBError(f"{self.path} has no subgraph for question {question!r} (it holds {len(ids)}: {some})")
        if question in self.graphs:
            return [tuple(t) for t in self.graphs[question]]  # type: ignore[misc]
        offset, length = self.spans[question]
        with self.path.open("rb") as handle:
            handle.seek(offset)
            record = json.loads(handle.read(length))
        return [tuple(t) for t in _graph_field(record, self.shape)]  # type: ignore[misc]

    def term(self, value: Any, kind: str) -> tuple[str, str | None]:
        """A term of a triple as ``(id, label)``: an integer through the vocabulary, a GraftNet object by its id and text."""
        if isinstance(value, Mapping):
            ident = value.get("kb_id", value.get("rel_id", value.get("text")))
            text = value.get("text")
            value = ident
            label = str(text) if text not in (None, "") and str(text) != str(ident) else None
        else:
            label = None
        if isinstance(value, int) and not isinstance(value, bool):
            vocab = self.entities if kind == "entity" else self.relations
            assert vocab is not None  # read_subgraphs checked the range
            return vocab[value], label
        return str(value), label


_CACHE: dict[tuple[str, int, int], SubgraphFile] = {}
_CACHE_LOCK = threading.Lock()


def read_subgraphs(path: str | Path) -> SubgraphFile:
    """Scan a subgraph file once (kept for the process, per path, size and modification time).

    Raises:
        KBError: a missing, empty, gzipped or Parquet file; a line that is
            not JSON (a cut-off last line said so); a record of another shape
            (naming its keys and the shapes read), without an id or a graph,
            or whose id repeats; a triple that is not three terms; NSM's
            integers without ``entities.txt``/``relations.txt`` beside the
            file, or out of their range.

    Example:
        >>> read_subgraphs("/nonexistent/rog.jsonl")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: no subgraph file at /nonexistent/rog.jsonl (subgraphs:FILE takes RoG's or NSM's JSON Lines)
    """
    file = Path(path)
    try:
        stat = file.stat()
    except OSError:
        raise KBError(f"no subgraph file at {file} (subgraphs:FILE takes RoG's or NSM's JSON Lines)") from None
    if file.is_dir():
        raise KBError(f"{file} is a directory; subgraphs:FILE takes the JSON Lines file of the questions' subgraphs")
    key = (str(file.resolve()), stat.st_size, stat.st_mtime_ns)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = _scan(file)
        return _CACHE[key]


def _scan(file: Path) -> SubgraphFile:
    """Read every record once: the shape, the ids and their byte ranges, each graph checked."""
    with file.open("rb") as handle:
        head = handle.read(4)
    _refuse_binary(file, head)
    found: SubgraphFile | None = None
    for where, offset, length, record in _records(file):
        shape = _shape_of(record, where)
        if found is None:
            found = SubgraphFile(file, shape)
        elif shape != found.shape:
            raise KBError(f"{where}: a {shape} record after {found.shape} ones; a subgraph file holds one shape")
        question = _id_of(record, where)
        if question in found:
            raise KBError(f"{where}: the id {question!r} repeats; each question has one subgraph")
        _check_graph(found, _graph_field(record, shape), where)
        if offset < 0:
            found.graphs[question] = _graph_field(record, shape)
        else:
            found.spans[question] = (offset, length)
    if found is None:
        raise KBError(f"the subgraph file {file} holds no record")
    return found


def _refuse_binary(file: Path, head: bytes) -> None:
    if head.startswith(b"\x1f\x8b"):
        raise KBError(f"{file} is gzipped: decompress it first (gunzip -k {file}); subgraphs:FILE reads its lines by offset")
    if head == b"PAR1":
        raise KBError(
            f"{file} is a Parquet file (RoG's files on the Hugging Face hub): write it as JSON Lines first, "
            "e.g. datasets.load_dataset('rmanluo/RoG-webqsp', split='test').to_json('rog-webqsp-test.jsonl')"
        )


def _records(file: Path) -> Iterator[tuple[str, int, int, Any]]:
    """``(where, offset, length, record)`` of each record; offset -1 for a JSON list (read whole)."""
    with file.open("rb") as handle:
        first = handle.read(1 << 16).lstrip()
    if first.startswith(b"["):
        try:
            data = json.loads(file.read_bytes())
        except (ValueError, UnicodeDecodeError) as exc:
            raise KBError(f"{file} starts like a JSON list but is not valid JSON ({exc}); is it cut short?") from None
        for index, record in enumerate(data):
            yield f"{file}, record {index}", -1, 0, record
        return
    with file.open("rb") as handle:
        offset = 0
        for number, raw in enumerate(handle, 1):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                cut = " (the last line, without its newline: the file is cut short)" if not raw.endswith(b"\n") else ""
                raise KBError(f"{file}, line {number} is not JSON{cut}: {exc}; subgraphs:FILE takes JSON Lines, one question a line") from None
            yield f"{file}, line {number}", start, len(raw), record


def _shape_of(record: Any, where: str) -> str:
    if not isinstance(record, Mapping):
        raise KBError(f"{where}: a subgraph record is a JSON object, got {type(record).__name__}")
    for name, shape in _SHAPES.items():
        if name in record:
            return shape
    keys = ", ".join(map(str, list(record)[:8])) or "none"
    raise KBError(
        f"{where}: no subgraph in this record (keys: {keys}); subgraphs:FILE reads RoG's records "
        '(id, question, "graph": [[head, relation, tail], ...]) and NSM\'s '
        '(id, question, "subgraph": {"entities": [...], "tuples": [[h, r, t], ...]})'
    )


def _id_of(record: Mapping[str, Any], where: str) -> str:
    for name in ("id", "ID", "qid"):
        if record.get(name) not in (None, ""):
            return str(record[name])
    raise KBError(f"{where}: the record has no id; a subgraph is matched to its question by id")


def _graph_field(record: Mapping[str, Any], shape: str) -> Any:
    if shape == "triples":
        return record.get("graph")
    sub = record.get("subgraph")
    return sub.get("tuples") if isinstance(sub, Mapping) else None


def _check_graph(found: SubgraphFile, graph: Any, where: str) -> None:
    """Each triple three terms: texts (or GraftNet objects), integers only with NSM's vocabularies and within them."""
    if not isinstance(graph, list):
        what = '"graph": [[head, relation, tail], ...]' if found.shape == "triples" else '"subgraph": {"tuples": [[h, r, t], ...]}'
        raise KBError(f"{where}: the record's graph is missing or not a list; expected {what}")
    for n, triple in enumerate(graph):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise KBError(f"{where}, triple {n}: expected [head, relation, tail], got {json.dumps(triple)[:80]}")
        for value, kind in zip(triple, ("entity", "relation", "entity")):
            if isinstance(value, bool) or not isinstance(value, (str, int, Mapping)):
                raise KBError(f"{where}, triple {n}: a term is a text, an integer or a {{kb_id, text}} object, got {value!r:.40}")
            if isinstance(value, int):
                if found.entities is None:  # NSM's integers: its vocabularies, read once
                    found.entities, found.relations = _vocabularies(found.path)
                vocab = found.entities if kind == "entity" else found.relations
                if vocab is None or not 0 <= value < len(vocab):
                    size = "no vocabulary" if vocab is None else f"{len(vocab)} lines"
                    raise KBError(f"{where}, triple {n}: the {kind} index {value} is not in NSM's {kind} vocabulary ({size})")


def _vocabularies(file: Path) -> tuple[list[str], list[str]]:
    """NSM's ``entities.txt`` and ``relations.txt`` beside ``file``: one id a line, its line number its integer."""
    out = []
    for name in ("entities.txt", "relations.txt"):
        vocab = file.parent / name
        try:
            out.append([line.strip() for line in vocab.read_text(encoding="utf-8").splitlines()])
        except FileNotFoundError:
            raise KBError(
                f"{file} holds NSM's indexed subgraphs (integers into its vocabularies): NSM's entities.txt and "
                f"relations.txt must lie beside it; not found: {vocab}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise KBError(f"cannot read NSM's vocabulary {vocab}: {exc}") from None
    return out[0], out[1]


# ---------------------------------------------------------------------------
# The KBs


def subgraph_store(found: SubgraphFile, question: str, profile: str | Profile = "freebase") -> ox.Store:
    """An in-memory store of one question's subgraph: its triples, a label per entity it names (indexed shape: every entity).

    Example:
        >>> from importlib import resources
        >>> import pyql, os
        >>> root = os.path.join(os.path.dirname(os.path.dirname(pyql.__file__)), "tests", "data", "subgraphs")
        >>> len(subgraph_store(read_subgraphs(os.path.join(root, "rog.jsonl")), "WebQTest-12")) > 0
        True
    """
    chosen = subgraph_profile(profile)
    labels = [ox.NamedNode(p) for p in chosen.label_predicates]
    quads: list[ox.Quad] = []
    labelled: set[str] = set()
    for head, relation, tail in found.graph(question):
        h, h_label = found.term(head, "entity")
        r, _ = found.term(relation, "relation")
        t, t_label = found.term(tail, "entity")
        named = found.shape == "triples"
        subject = _entity_node(h, h_label if h_label or named else h, chosen, labels, quads, labelled)
        obj = _literal(t) if not isinstance(tail, Mapping) and named else None
        if obj is None:
            obj = _entity_node(t, t_label if t_label or named else t, chosen, labels, quads, labelled)
        quads.append(ox.Quad(subject, ox.NamedNode(relation_iri(r, chosen)), obj))
    store = ox.Store()
    store.bulk_extend(quads)
    return store


def _entity_node(text: str, label: str | None, profile: Profile, labels: list[ox.NamedNode],
                 quads: list[ox.Quad], labelled: set[str]) -> ox.NamedNode:
    """The node of an entity; a name (a text that is no id) or a GraftNet text labels it, once."""
    iri = entity_iri(text, profile)
    name = label if label is not None else (text if iri.startswith(ENTITY_NS) else None)
    node = ox.NamedNode(iri)
    if name and iri not in labelled:
        labelled.add(iri)
        quads.extend(ox.Quad(node, p, ox.Literal(name)) for p in labels)
    return node


def _literal(text: str) -> ox.Literal | None:
    """A tail that reads as a year, a date or a number, as Freebase types it; None for any other text."""
    for pattern, datatype in _LITERALS:
        if pattern.match(text):
            return ox.Literal(text, datatype=ox.NamedNode(XSD + datatype))
    return None


class SubgraphSet(KB):
    """The questions' subgraphs of one file (``subgraphs:FILE``); :meth:`question` is one question's KB.

    It answers no query itself (which question's graph would it be?):
    a query raises an :class:`~pyql.errors.EngineError` that says so.

    Example:
        >>> import os, pyql
        >>> root = os.path.join(os.path.dirname(os.path.dirname(pyql.__file__)), "tests", "data", "subgraphs")
        >>> s = SubgraphSet(os.path.join(root, "rog.jsonl"))
        >>> s.question("WebQTest-12").name, s.select("SELECT * WHERE { ?s ?p ?o }")
        Traceback (most recent call last):
        ...
        pyql.errors.EngineError: ...holds one subgraph per question: pyql eval opens each question's own; to query one, open subgraphs:...#ID (e.g. subgraphs:...#WebQTest-12)
    """

    name = "subgraphs"

    def __init__(self, path: str | Path, profile: str | Profile = "freebase", **options: Any) -> None:
        super().__init__(profile, **options)
        self.file = read_subgraphs(path)
        self.shape = self.file.shape
        self.options = options

    def __len__(self) -> int:
        return len(self.file.ids())

    def ids(self) -> list[str]:
        """The question ids the file holds, in file order."""
        return self.file.ids()

    def question(self, question: str) -> OxigraphKB:
        """The KB of one question: its subgraph in a fresh in-memory store.

        Raises:
            KBError: the file has no subgraph for that id.
        """
        store = subgraph_store(self.file, question, self.profile)
        return OxigraphKB(store, subgraph_profile(self.profile), **self.options)

    def _refuse(self) -> EngineError:  # noqa: D102
        ids = self.ids()
        return EngineError(
            f"subgraphs:{self.file.path} holds one subgraph per question: pyql eval opens each question's own; "
            f"to query one, open subgraphs:{self.file.path}#ID (e.g. subgraphs:{self.file.path}#{ids[0]})"
        )

    def _select(self, sparql: str) -> list[dict[str, Term]]:
        raise self._refuse()

    def _ask(self, sparql: str) -> bool:
        raise self._refuse()


def split_spec(rest: str) -> tuple[str, str | None]:
    """``FILE#ID`` → (FILE, ID); ``FILE`` → (FILE, None). A ``#`` that is part of an existing file's name stays in it.

    Example:
        >>> split_spec("data/rog.jsonl#WebQTest-12"), split_spec("data/rog.jsonl")
        (('data/rog.jsonl', 'WebQTest-12'), ('data/rog.jsonl', None))
    """
    if "#" not in rest or Path(rest).is_file():
        return rest, None
    file, _, question = rest.rpartition("#")
    return file, question


def open_subgraphs(rest: str, profile: str | Profile = "freebase", **options: Any) -> KB:
    """Open ``subgraphs:FILE`` (the whole file, :class:`SubgraphSet`) or ``subgraphs:FILE#ID`` (one question's KB).

    Raises:
        KBError: a bad file (:func:`read_subgraphs`) or an id it has no subgraph for.

    Example:
        >>> open_subgraphs("")
        Traceback (most recent call last):
        ...
        pyql.errors.KBError: subgraphs:FILE names the file of the questions' subgraphs (RoG's or NSM's JSON Lines), e.g. subgraphs:rog-webqsp-test.jsonl
    """
    file, question = split_spec(rest)
    if not file:
        raise KBError(
            "subgraphs:FILE names the file of the questions' subgraphs (RoG's or NSM's JSON Lines), "
            "e.g. subgraphs:rog-webqsp-test.jsonl"
        )
    whole = SubgraphSet(file, profile, **options)
    return whole if question is None else whole.question(question)
