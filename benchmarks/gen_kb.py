"""Generate a synthetic Freebase-like knowledge base as N-Triples.

Usage::

    python benchmarks/gen_kb.py --triples 1000000 --out /tmp/kb_1e6.nt --seed 0 --meta

The output imitates the shape of a Freebase dump, so that benchmarks of
step-by-step query building meet realistic data:

* topics are mids ``m.0...`` in ``http://rdf.freebase.com/ns/`` (CVT mids are
  two characters longer than topic mids, so the two never collide);
* a dozen domains (people, location, film, music, book, organization,
  sports, education, government, meteorology, ...) with types and relations
  named like Freebase's ``domain.type.property``;
* most triples (about 60%) link two nodes; the object of such an edge is
  drawn with a power-law bias, so in-degrees are skewed (Zipf-like): a few
  hubs (popular countries, languages, genres, ...) get a large share, most
  topics get few. Many relations also store their Freebase reverse
  (``location.location.containedby`` / ``location.location.contains``), so
  hubs have large out-degrees too;
* about 15-20% of the nodes are unnamed CVTs (mediator nodes such as
  ``people.marriage`` or ``government.government_position_held``) linking two
  to four topics or literals;
* literals are ``xsd:integer``, ``xsd:float``, ``xsd:decimal``, ``xsd:date``,
  ``xsd:gYear`` and strings (plain or ``@en``); names are
  ``type.object.name`` with ``@en`` (a few also in another language, a few
  with characters that N-Triples must escape); about 3% of topics have no
  name;
* ``type.object.type``, ``kg.object_profile.prominent_type`` and
  ``common.topic.notable_types`` triples as in Freebase.

The file has exactly ``--triples`` lines, each a distinct triple, so a store
that loads it holds exactly that many triples. Edges only point to topics
written earlier in the file, so every topic that is an object is also
described (has a type and, mostly, a name); early topics become the hubs.
The output depends only on the arguments (same seed, same file, whatever
PYTHONHASHSEED). Lines are written as they are made; memory grows with the
number of topics only (a few hundred MB at 10^8 triples). 10^6 triples take
about 5 seconds.

``--meta`` writes ``<out>.meta.json`` (or the given path) with counts, the
schema (every relation with its subject type and object type or literal
datatype) and sample topics of high, medium and low degree with the relations
they have, so a benchmark can pick realistic query steps. The degree of a
sample counts the relation triples it is subject or object of (its type and
name triples are not counted). A short version is printed to stdout in any
case.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

FB = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"

# Freebase mids use these 32 letters: digits, consonants and _.
MID_ALPHABET = "0123456789bcdfghjklmnpqrstvwxyz_"
TOPIC_BASE = 32**5  # topic mids: m.0 + 6 letters
CVT_BASE = 32**7  # CVT mids:   m.0 + 8 letters


def encode_mid(number: int) -> str:
    """The mid of a node number.

    >>> encode_mid(32**5), encode_mid(32**5 + 31)
    ('m.0100000', 'm.010000_')
    """
    letters = []
    while number:
        number, digit = divmod(number, 32)
        letters.append(MID_ALPHABET[digit])
    return "m.0" + "".join(reversed(letters))


# --------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------


@dataclass
class Rel:
    """A relation of a type: ``name`` from the subject to an object.

    ``obj`` is ``"ent:<type>"`` (a topic of that type), ``"lit:<kind>"`` (a
    literal) or ``"cvt:<kind>"`` (a new CVT). ``p`` is the chance the subject
    has the relation at all; if it has, it has 1 to ``most`` values (fewer
    values are likelier). ``skew`` is the power-law exponent used to pick
    topic objects: higher means hubs get a larger share. ``reverse`` names the
    Freebase reverse relation, stored too when given.
    """

    name: str
    obj: str
    p: float = 1.0
    most: int = 1
    skew: float = 2.0
    reverse: str | None = None


@dataclass
class TopicType:
    name: str
    weight: float  # share of topics
    minimum: int  # at least this many topics of the type
    names: str  # name style
    also: tuple[str, ...] = ()  # further type.object.type values
    rels: list[Rel] = field(default_factory=list)
    maximum: int | None = None


@dataclass
class CvtType:
    name: str
    fields: list[Rel]


TOPIC_TYPES: list[TopicType] = [
    TopicType(
        "people.person", 0.30, 10, "person", (),
        [
            Rel("people.person.gender", "ent:people.gender", 0.9, 1, 1.0),
            Rel("people.person.date_of_birth", "lit:date", 0.7),
            Rel("people.person.place_of_birth", "ent:location.citytown", 0.6, 1, 2.5, "location.location.people_born_here"),
            Rel("people.person.nationality", "ent:location.country", 0.8, 2, 3.0),
            Rel("people.person.profession", "ent:people.profession", 0.7, 3, 2.5),
            Rel("people.person.languages", "ent:language.human_language", 0.4, 2, 3.0),
            Rel("people.person.height_meters", "lit:height", 0.2),
            Rel("people.person.spouse_s", "cvt:people.marriage", 0.05),
            Rel("people.person.parents", "ent:people.person", 0.25, 2, 1.0, "people.person.children"),
            Rel("people.person.religion", "ent:religion.religion", 0.2, 1, 2.0),
            Rel("people.person.education", "cvt:education.education", 0.05),
            Rel("people.person.employment_history", "cvt:business.employment_tenure", 0.04),
        ],
    ),
    TopicType(
        "location.citytown", 0.11, 10, "place", ("location.location",),
        [
            Rel("location.location.containedby", "ent:location.administrative_division", 0.95, 1, 1.5, "location.location.contains"),
            Rel("location.location.area", "lit:area", 0.4),
            Rel("location.citytown.postal_codes", "lit:postcode", 0.2, 3),
            Rel("location.statistical_region.population", "cvt:measurement_unit.dated_integer", 0.1, 2),
            Rel("location.location.time_zones", "ent:time.time_zone", 0.8, 1, 1.5, "time.time_zone.locations_in_this_time_zone"),
        ],
    ),
    TopicType(
        "location.administrative_division", 0.01, 10, "region", ("location.location",),
        [
            Rel("location.location.containedby", "ent:location.country", 1.0, 1, 2.0, "location.location.contains"),
            Rel("location.administrative_division.capital", "ent:location.citytown", 0.5, 1, 1.0),
            Rel("location.statistical_region.population", "cvt:measurement_unit.dated_integer", 0.4, 3),
            Rel("government.governmental_jurisdiction.governing_officials", "cvt:government.government_position_held", 0.5, 4),
        ],
    ),
    TopicType(
        "location.country", 0.003, 20, "country", ("location.location",), [
            Rel("location.country.capital", "ent:location.citytown", 0.9, 1, 1.0),
            Rel("location.country.languages_spoken", "ent:language.human_language", 0.9, 4, 2.0, "language.human_language.countries_spoken_in"),
            Rel("location.country.official_language", "ent:language.human_language", 0.7, 1, 2.0),
            Rel("location.country.currency_used", "ent:finance.currency", 0.8, 1, 1.5, "finance.currency.countries_used"),
            Rel("location.statistical_region.population", "cvt:measurement_unit.dated_integer", 0.9, 4),
            Rel("government.governmental_jurisdiction.governing_officials", "cvt:government.government_position_held", 0.8, 5),
        ],
        maximum=300,
    ),
    TopicType(
        "film.film", 0.09, 10, "title", (),
        [
            Rel("film.film.directed_by", "ent:people.person", 0.9, 2, 3.0, "film.director.film"),
            Rel("film.film.starring", "cvt:film.performance", 0.25, 2),
            Rel("film.film.produced_by", "ent:people.person", 0.5, 2, 2.5, "film.producer.film"),
            Rel("film.film.written_by", "ent:people.person", 0.5, 2, 2.5, "film.writer.film"),
            Rel("film.film.initial_release_date", "lit:date", 0.8),
            Rel("film.film.genre", "ent:film.film_genre", 0.95, 3, 2.0, "film.film_genre.films_in_this_genre"),
            Rel("film.film.country", "ent:location.country", 0.8, 1, 3.5),
            Rel("film.film.language", "ent:language.human_language", 0.6, 1, 4.0),
            Rel("film.film.estimated_budget", "cvt:measurement_unit.dated_money_value", 0.05),
            Rel("film.film.runtime", "cvt:film.film_cut", 0.1),
        ],
    ),
    TopicType(
        "music.album", 0.08, 10, "title", (),
        [
            Rel("music.album.artist", "ent:people.person", 0.95, 1, 3.0, "music.artist.album"),
            Rel("music.album.release_date", "lit:date_or_year", 0.8),
            Rel("music.album.genre", "ent:music.genre", 0.8, 3, 2.0, "music.genre.albums"),
            Rel("music.album.featured_artists", "ent:people.person", 0.3, 2, 2.5, "music.featured_artist.albums"),
            Rel("music.album.track_count", "lit:count", 0.4),
        ],
    ),
    TopicType(
        "book.book", 0.06, 10, "title", ("book.written_work",),
        [
            Rel("book.written_work.author", "ent:people.person", 0.95, 2, 3.0, "book.author.works_written"),
            Rel("book.written_work.date_of_first_publication", "lit:date_or_year", 0.7),
            Rel("book.written_work.subjects", "ent:location.citytown", 0.3, 2, 3.0),
            Rel("book.written_work.original_language", "ent:language.human_language", 0.6, 1, 4.0),
        ],
    ),
    TopicType(
        "organization.organization", 0.05, 10, "org", (),
        [
            Rel("organization.organization.founders", "ent:people.person", 0.5, 3, 2.5, "organization.organization_founder.organizations_founded"),
            Rel("organization.organization.date_founded", "lit:date_or_year", 0.7),
            Rel("organization.organization.place_founded", "ent:location.citytown", 0.3, 1, 2.5),
            Rel("organization.organization.headquarters", "cvt:location.mailing_address", 0.25),
            Rel("organization.organization.industry", "ent:business.industry", 0.7, 2, 2.0, "business.industry.companies"),
        ],
    ),
    TopicType(
        "sports.sports_team", 0.015, 10, "team", (),
        [
            Rel("sports.sports_team.location", "ent:location.citytown", 0.9, 1, 2.0, "sports.sports_team_location.teams"),
            Rel("sports.sports_team.sport", "ent:sports.sport", 1.0, 1, 2.0, "sports.sport.teams"),
            Rel("sports.sports_team.founded", "lit:year", 0.7),
            Rel("sports.sports_team.roster", "cvt:sports.sports_team_roster", 0.5, 3),
        ],
    ),
    TopicType(
        "education.university", 0.01, 10, "university", ("education.educational_institution",),
        [
            Rel("location.location.containedby", "ent:location.citytown", 0.9, 1, 1.5, "location.location.contains"),
            Rel("organization.organization.date_founded", "lit:year", 0.8),
            Rel("education.educational_institution.number_of_students", "lit:count", 0.3),
        ],
    ),
    TopicType(
        "meteorology.tropical_cyclone", 0.01, 10, "cyclone", (),
        [
            Rel("meteorology.tropical_cyclone.category", "ent:meteorology.tropical_cyclone_category", 1.0, 1, 1.0, "meteorology.tropical_cyclone_category.tropical_cyclones"),
            Rel("meteorology.tropical_cyclone.formed", "lit:date", 0.9),
            Rel("meteorology.tropical_cyclone.highest_winds", "lit:wind", 0.9),
            Rel("meteorology.tropical_cyclone.direct_fatalities", "lit:count", 0.5),
            Rel("meteorology.tropical_cyclone.affected_areas", "ent:location.administrative_division", 0.8, 4, 2.0, "meteorology.cyclone_affected_area.cyclones"),
            Rel("meteorology.tropical_cyclone.damages", "cvt:measurement_unit.dated_money_value", 0.5),
        ],
    ),
    # small "enumeration" types: every topic of these is a hub
    TopicType("language.human_language", 0.002, 10, "language", (), [], maximum=400),
    TopicType("film.film_genre", 0.001, 10, "genre", (), [], maximum=150),
    TopicType("music.genre", 0.001, 10, "genre", (), [], maximum=300),
    TopicType("people.profession", 0.002, 10, "profession", (), [], maximum=500),
    TopicType("finance.currency", 0.0005, 5, "currency", (), [], maximum=150),
    TopicType("sports.sport", 0.0003, 5, "sport", (), [], maximum=60),
    TopicType("religion.religion", 0.0003, 5, "religion", (), [], maximum=50),
    TopicType("time.time_zone", 0.0003, 5, "timezone", (), [], maximum=40),
    TopicType("business.industry", 0.001, 10, "industry", (), [], maximum=300),
    TopicType("government.government_office_category", 0.0003, 5, "office", (), [], maximum=40),
    TopicType("meteorology.tropical_cyclone_category", 0.0, 7, "category", (), [], maximum=7),
    TopicType("people.gender", 0.0, 2, "gender", (), [], maximum=2),
]

CVT_TYPES: dict[str, CvtType] = {
    c.name: c
    for c in [
        CvtType("people.marriage", [
            Rel("people.marriage.spouse", "ent:people.person", 1.0, 1, 1.2),
            Rel("people.marriage.from", "lit:date", 0.8),
            Rel("people.marriage.to", "lit:date", 0.3),
        ]),
        CvtType("education.education", [
            Rel("education.education.institution", "ent:education.university", 1.0, 1, 2.5, "education.educational_institution.students_graduates"),
            Rel("education.education.degree", "lit:degree", 0.6),
            Rel("education.education.end_date", "lit:year", 0.6),
        ]),
        CvtType("business.employment_tenure", [
            Rel("business.employment_tenure.company", "ent:organization.organization", 1.0, 1, 2.5, "business.employer.employees"),
            Rel("business.employment_tenure.title", "lit:job", 0.7),
            Rel("business.employment_tenure.from", "lit:date", 0.7),
            Rel("business.employment_tenure.to", "lit:date", 0.4),
        ]),
        CvtType("measurement_unit.dated_integer", [
            Rel("measurement_unit.dated_integer.number", "lit:population"),
            Rel("measurement_unit.dated_integer.year", "lit:year"),
        ]),
        CvtType("government.government_position_held", [
            Rel("government.government_position_held.office_holder", "ent:people.person", 1.0, 1, 1.5, "government.politician.government_positions_held"),
            Rel("government.government_position_held.basic_title", "ent:government.government_office_category", 1.0, 1, 1.5),
            Rel("government.government_position_held.from", "lit:date", 0.9),
            Rel("government.government_position_held.to", "lit:date", 0.7),
        ]),
        CvtType("film.performance", [
            Rel("film.performance.actor", "ent:people.person", 1.0, 1, 2.5, "film.actor.film"),
            Rel("film.performance.character", "lit:character", 0.7),
        ]),
        CvtType("film.film_cut", [
            Rel("film.film_cut.runtime", "lit:runtime"),
            Rel("film.film_cut.film_release_region", "ent:location.country", 0.5, 1, 3.0),
        ]),
        CvtType("measurement_unit.dated_money_value", [
            Rel("measurement_unit.dated_money_value.amount", "lit:money"),
            Rel("measurement_unit.dated_money_value.currency", "ent:finance.currency", 1.0, 1, 4.0),
            Rel("measurement_unit.dated_money_value.valid_date", "lit:year", 0.5),
        ]),
        CvtType("location.mailing_address", [
            Rel("location.mailing_address.citytown", "ent:location.citytown", 1.0, 1, 2.0),
            Rel("location.mailing_address.postal_code", "lit:postcode", 0.7),
            Rel("location.mailing_address.street_address", "lit:street", 0.6),
        ]),
        CvtType("sports.sports_team_roster", [
            Rel("sports.sports_team_roster.player", "ent:people.person", 1.0, 1, 1.5, "sports.pro_athlete.teams"),
            Rel("sports.sports_team_roster.from", "lit:year", 0.9),
            Rel("sports.sports_team_roster.to", "lit:year", 0.6),
            Rel("sports.sports_team_roster.number", "lit:jersey", 0.5),
        ]),
    ]
}

# --------------------------------------------------------------------------
# Names and literals
# --------------------------------------------------------------------------

SYLLABLES = (
    "al ba ber bo ca cor da del do el en fa fer ga gar ha hen i is ja jo ka kel "
    "la lan le li lo ma mar mi mo na nel no o or pa per ra ren ri ro sa sel si "
    "so ta ter ti to u va ver vi wa wen ya zo"
).split()
TITLE_WORDS = (
    "night day river storm silent golden last first lost broken hidden city "
    "road dream fire winter summer heart star shadow garden song letter house "
    "light dark wild blue red empire machine ocean island mountain journey"
).split()
PLACE_SUFFIXES = ["", "", "", " City", "ville", "burg", " Springs", "ton", " Falls", "field"]
REGION_SUFFIXES = [" Province", " State", " County", " Region", ""]
ORG_SUFFIXES = [" Inc.", " Corporation", " Group", " Ltd", " Foundation", " Records", " Studios"]
FIXED_NAMES = {
    "people.gender": ["Male", "Female"],
    "meteorology.tropical_cyclone_category": [
        "Tropical depression (SSHS)", "Tropical storm (SSHS)", "Category 1 hurricane (SSHS)",
        "Category 2 hurricane (SSHS)", "Category 3 hurricane (SSHS)", "Category 4 hurricane (SSHS)",
        "Category 5 hurricane (SSHS)",
    ],
}
OTHER_LANGUAGES = ["es", "fr", "de", "pt", "it"]
ACCENTED = str.maketrans("aeiou", "áéíóú")


def escape_string(text: str) -> str:
    """N-Triples string escaping."""
    if "\\" in text or '"' in text or "\n" in text or "\r" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return text


class Writer:
    """Counts and buffers N-Triples lines; stops the run at the budget."""

    class Full(Exception):
        pass

    def __init__(self, handle, budget: int):
        self.handle = handle
        self.budget = budget
        self.count = 0
        self.buffer: list[str] = []

    def line(self, text: str) -> None:
        if self.count >= self.budget:
            raise Writer.Full
        self.buffer.append(text)
        self.count += 1
        if len(self.buffer) >= 20000:
            self.flush()

    def flush(self) -> None:
        self.handle.write("".join(self.buffer))
        self.buffer.clear()


# --------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------


class Generator:
    """Writes topics one after another until the triple budget is spent.

    The type of the n-th topic slot comes from a shuffled pattern of about
    1000 slots, each type having a share of slots proportional to its weight,
    after a preamble that creates the ``minimum`` topics of every type first
    (so hubs such as genders, countries and languages exist from the start);
    a type that reached its ``maximum`` skips its slots. Edges only point to
    topics already written, so no object is left undescribed; the k-th topic
    of a type is picked with probability falling as a power of k, so early
    topics become hubs.
    """

    PATTERN_LENGTH = 1000
    IRI_CACHE_LIMIT = 2_000_000

    def __init__(self, triples: int, seed: int):
        self.target = triples
        self.rng = random.Random(seed)
        self.types = {t.name: t for t in TOPIC_TYPES}
        self.iri_cache: list[str] = []
        self.by_type: dict[str, array] = {name: array("q") for name in self.types}
        self.topic_count = 0
        self.cvt_count = 0
        self.kinds = Counter()  # composition of the output
        self.relation_counts = Counter()
        self.samples: dict[int, dict] = {}
        self.names: dict[int, str] = {}
        self.p: dict[str, str] = {}  # predicate IRIs, bracketed
        self.sample_ranks = {0, 1, 2, 3} | {m * 10**e for e in range(1, 10) for m in (1, 3)}
        self.preamble = [t.name for t in TOPIC_TYPES for _ in range(t.minimum)]
        total = sum(t.weight for t in TOPIC_TYPES)
        pattern = [
            t.name
            for t in TOPIC_TYPES
            for _ in range(max(1, round(self.PATTERN_LENGTH * t.weight / total)) if t.weight else 0)
        ]
        self.rng.shuffle(pattern)
        self.pattern = pattern

    # -- IRIs ---------------------------------------------------------------

    def pred(self, name: str) -> str:
        iri = self.p.get(name)
        if iri is None:
            iri = self.p[name] = f"<{FB}{name}>"
        return iri

    def topic_iri(self, index: int) -> str:
        if index < len(self.iri_cache):
            return self.iri_cache[index]
        return f"<{FB}{encode_mid(TOPIC_BASE + index)}>"

    def new_topic(self, type_name: str) -> tuple[int, int, str]:
        index = self.topic_count
        self.topic_count += 1
        iri = f"<{FB}{encode_mid(TOPIC_BASE + index)}>"
        if index < self.IRI_CACHE_LIMIT:
            self.iri_cache.append(iri)
        ranks = self.by_type[type_name]
        rank = len(ranks)
        ranks.append(index)
        return index, rank, iri

    def new_cvt_iri(self) -> str:
        self.cvt_count += 1
        return f"<{FB}{encode_mid(CVT_BASE + self.cvt_count)}>"

    def pick(self, type_name: str, skew: float) -> int | None:
        """A topic of ``type_name`` written so far; early ones likeliest."""
        ranks = self.by_type[type_name]
        if not ranks:
            return None
        return ranks[int(len(ranks) * self.rng.random() ** (1.0 + skew))]

    # -- values --------------------------------------------------------------

    def make_name(self, style: str, type_name: str, rank: int) -> str:
        rng = self.rng
        fixed = FIXED_NAMES.get(type_name)
        if fixed:
            return fixed[rank % len(fixed)]

        def word(n: int) -> str:
            return "".join(rng.choice(SYLLABLES) for _ in range(n)).capitalize()

        if style == "person":
            first, last = word(rng.randint(1, 2)), word(rng.randint(2, 3))
            if rng.random() < 0.03:
                last = "O'" + last
            if rng.random() < 0.2:
                return f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {last}"
            return f"{first} {last}"
        if style == "place":
            return word(rng.randint(2, 3)) + rng.choice(PLACE_SUFFIXES)
        if style == "region":
            return word(rng.randint(2, 3)) + rng.choice(REGION_SUFFIXES)
        if style == "country":
            return word(rng.randint(2, 3)) + rng.choice(["", "", "ia", "land", "stan", " Republic"])
        if style == "title":
            words = [rng.choice(TITLE_WORDS) for _ in range(rng.randint(1, 4))]
            title = " ".join(w.capitalize() for w in words)
            r = rng.random()
            if r < 0.02:
                return f'The "{title}" Affair'
            if r < 0.03:
                return f"{title} \\ {word(2)}"
            return ("The " if r < 0.3 else "") + title
        if style == "org":
            return word(rng.randint(2, 3)) + rng.choice(ORG_SUFFIXES)
        if style == "team":
            return f"{word(2)} {rng.choice(TITLE_WORDS).capitalize()}s"
        if style == "university":
            return f"University of {word(2)}"
        if style == "cyclone":
            return f"{rng.choice(['Hurricane', 'Tropical Storm', 'Typhoon', 'Cyclone'])} {word(2)}"
        if style == "timezone":
            return f"UTC{'+' if rank % 2 else '-'}{rank // 2:02d}:00 {word(2)} Time"
        if style == "religion":
            return word(2) + rng.choice(["ism", " Church", " faith"])
        if style == "industry":
            return f"{rng.choice(TITLE_WORDS).capitalize()} {rng.choice(['manufacturing', 'services', 'retail', 'media', 'software', 'mining'])}"
        if style == "language":
            return word(2) + rng.choice([" Language", "ese", "ish", "ic"])
        if style == "currency":
            return f"{word(2)} {rng.choice(['dollar', 'peso', 'franc', 'krone', 'dinar'])}"
        if style == "office":
            return rng.choice(["Governor", "Mayor", "President", "Prime Minister", "Senator", "Minister"]) + (
                "" if rank < 6 else f" of {word(2)}"
            )
        return word(2) + (" " + word(2) if rng.random() < 0.5 else "")

    def literal(self, kind: str) -> str:
        rng = self.rng
        if kind == "date" or (kind == "date_or_year" and rng.random() < 0.6):
            return f'"{rng.randint(1800, 2024):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"^^<{XSD}date>'
        if kind in ("year", "date_or_year"):
            return f'"{rng.randint(1800, 2024)}"^^<{XSD}gYear>'
        if kind == "height":
            return f'"{rng.uniform(1.45, 2.15):.2f}"^^<{XSD}float>'
        if kind == "area":
            return f'"{rng.lognormvariate(4, 2):.1f}"^^<{XSD}float>'
        if kind == "wind":
            return f'"{rng.uniform(60, 350):.1f}"^^<{XSD}float>'
        if kind == "runtime":
            return f'"{rng.uniform(70, 200):.1f}"^^<{XSD}float>'
        if kind == "count":
            return f'"{int(rng.lognormvariate(3, 1.5))}"^^<{XSD}integer>'
        if kind == "population":
            return f'"{int(rng.lognormvariate(10, 2.5))}"^^<{XSD}integer>'
        if kind == "jersey":
            return f'"{rng.randint(0, 99)}"^^<{XSD}integer>'
        if kind == "money":
            return f'"{int(rng.lognormvariate(16, 2.5))}"^^<{XSD}decimal>'
        if kind == "postcode":
            return f'"{rng.randint(10000, 99999)}"'
        if kind == "street":
            return f'"{rng.randint(1, 999)} {rng.choice(TITLE_WORDS).capitalize()} Street"@en'
        if kind == "degree":
            return f'"{rng.choice(["Bachelor of Arts", "Bachelor of Science", "Master of Arts", "PhD", "Juris Doctor"])}"@en'
        if kind == "job":
            return f'"{rng.choice(["Chief Executive Officer", "Engineer", "Director", "Editor", "Founder", "Analyst"])}"@en'
        if kind == "character":
            return f'"{"".join(rng.choice(SYLLABLES) for _ in range(2)).capitalize()}"@en'
        raise ValueError(kind)

    def how_many(self, rel: Rel) -> int:
        if self.rng.random() >= rel.p:
            return 0
        n = 1
        while n < rel.most and self.rng.random() < 0.45:
            n += 1
        return n

    # -- output ---------------------------------------------------------------

    def note(self, index: int, direction: str, relation: str) -> None:
        sample = self.samples.get(index)
        if sample is not None:
            sample[direction][relation] += 1

    def emit_relation(self, out: Writer, subject: str, subject_index: int | None, rel: Rel, owner: int) -> None:
        """Write the values of ``rel`` for one subject (topic or CVT).

        ``subject_index`` is the topic number of the subject (None for a
        CVT); ``owner`` is the topic the subject belongs to, never its own
        object (no self-loops, no one married to themselves).
        """
        count = self.how_many(rel)
        if not count:
            return
        kind, _, target = rel.obj.partition(":")
        p = self.pred(rel.name)
        if kind == "ent":
            chosen: list[int] = []
            for _ in range(count):
                obj = self.pick(target, rel.skew)
                if obj is None or obj == owner or obj in chosen:
                    continue  # no self-loops, no duplicate triples
                chosen.append(obj)
                obj_iri = self.topic_iri(obj)
                out.line(f"{subject} {p} {obj_iri} .\n")
                self.kinds["edge"] += 1
                self.relation_counts[rel.name] += 1
                if subject_index is not None:
                    self.note(subject_index, "out", rel.name)
                self.note(obj, "in", rel.name)
                if rel.reverse:
                    out.line(f"{obj_iri} {self.pred(rel.reverse)} {subject} .\n")
                    self.kinds["edge"] += 1
                    self.relation_counts[rel.reverse] += 1
                    self.note(obj, "out", rel.reverse)
                    if subject_index is not None:
                        self.note(subject_index, "in", rel.reverse)
        elif kind == "lit":
            seen = set()
            for _ in range(count):
                value = self.literal(target)
                if value in seen:
                    continue
                seen.add(value)
                out.line(f"{subject} {p} {value} .\n")
                self.kinds["literal"] += 1
                self.relation_counts[rel.name] += 1
                if subject_index is not None:
                    self.note(subject_index, "out", rel.name)
        else:  # a CVT
            cvt_type = CVT_TYPES[target]
            for _ in range(count):
                # The CVT first, then the link to it: if the budget runs out
                # in between, the file holds an unlinked CVT, not a link to
                # an undescribed node.
                cvt = self.new_cvt_iri()
                out.line(f"{cvt} {self.pred('type.object.type')} {self.pred(target)} .\n")
                self.kinds["type"] += 1
                for field_rel in cvt_type.fields:
                    self.emit_relation(out, cvt, None, field_rel, owner)
                out.line(f"{subject} {p} {cvt} .\n")
                self.kinds["edge"] += 1
                self.relation_counts[rel.name] += 1
                if subject_index is not None:
                    self.note(subject_index, "out", rel.name)

    def emit_topic(self, out: Writer, type_name: str) -> None:
        index, rank, s = self.new_topic(type_name)
        if rank in self.sample_ranks:
            self.samples[index] = {"type": type_name, "rank": rank, "in": Counter(), "out": Counter()}
        topic_type = self.types[type_name]
        rng = self.rng
        type_pred = self.pred("type.object.type")
        out.line(f"{s} {type_pred} {self.pred(type_name)} .\n")
        self.kinds["type"] += 1
        for extra in topic_type.also:
            out.line(f"{s} {type_pred} {self.pred(extra)} .\n")
            self.kinds["type"] += 1
        if rng.random() < 0.3:
            out.line(f"{s} {self.pred('kg.object_profile.prominent_type')} {self.pred(type_name)} .\n")
            self.kinds["type"] += 1
        if rng.random() < 0.15:
            out.line(f"{s} {self.pred('common.topic.notable_types')} {self.pred(type_name)} .\n")
            self.kinds["type"] += 1
        if type_name in FIXED_NAMES or rng.random() < 0.97:
            name = self.make_name(topic_type.names, type_name, rank)
            if index in self.samples:
                self.names[index] = name
            name_pred = self.pred("type.object.name")
            out.line(f'{s} {name_pred} "{escape_string(name)}"@en .\n')
            self.kinds["name"] += 1
            if rng.random() < 0.05:
                other = name.translate(ACCENTED) if rng.random() < 0.5 else name
                out.line(f'{s} {name_pred} "{escape_string(other)}"@{rng.choice(OTHER_LANGUAGES)} .\n')
                self.kinds["name"] += 1
        for rel in topic_type.rels:
            self.emit_relation(out, s, index, rel, index)

    def run(self, handle) -> Writer:
        out = Writer(handle, self.target)
        slot = 0
        try:
            while True:
                if slot < len(self.preamble):
                    type_name = self.preamble[slot]
                else:
                    type_name = self.pattern[(slot - len(self.preamble)) % len(self.pattern)]
                slot += 1
                maximum = self.types[type_name].maximum
                if maximum is not None and len(self.by_type[type_name]) >= maximum:
                    continue
                self.emit_topic(out, type_name)
        except Writer.Full:
            pass
        out.flush()
        return out

    # -- metadata ---------------------------------------------------------------

    def metadata(self, out_path: Path, seed: int, seconds: float) -> dict:
        samples = []
        for index, sample in self.samples.items():
            degree = sum(sample["in"].values()) + sum(sample["out"].values())
            if degree == 0 and index not in self.names:
                continue  # never written
            samples.append(
                {
                    "mid": encode_mid(TOPIC_BASE + index),
                    "name": self.names.get(index),
                    "type": sample["type"],
                    "degree": degree,
                    "out_relations": dict(sample["out"].most_common()),
                    "in_relations": dict(sample["in"].most_common()),
                }
            )
        samples.sort(key=lambda s: (-s["degree"], s["mid"]))
        with_edges = [s for s in samples if s["degree"] > 0]
        high = with_edges[:8]
        rest = with_edges[8:]
        low = [s for s in reversed(rest) if s["name"]][:8]
        low_mids = {s["mid"] for s in low}
        middle = [s for s in rest if s["mid"] not in low_mids]
        if middle:
            centre = len(middle) // 2
            medium = middle[max(0, centre - 4) : centre + 4]
        else:
            medium = []
        schema = []
        for t in TOPIC_TYPES:
            for rel in t.rels:
                schema.append({"relation": rel.name, "subject_type": t.name, "object": rel.obj, "reverse": rel.reverse})
        for c in CVT_TYPES.values():
            for rel in c.fields:
                schema.append({"relation": rel.name, "subject_type": c.name, "object": rel.obj, "reverse": rel.reverse, "cvt": True})
        total = sum(self.kinds.values())
        return {
            "file": str(out_path),
            "format": "N-Triples",
            "seed": seed,
            "triples": total,
            "topics": self.topic_count,
            "cvts": self.cvt_count,
            "seconds": round(seconds, 2),
            "composition": {k: round(v / total, 3) for k, v in sorted(self.kinds.items())} if total else {},
            "topic_types": {name: len(ranks) for name, ranks in self.by_type.items()},
            "relation_counts": dict(self.relation_counts.most_common()),
            "schema": schema,
            "samples": {"high": high, "medium": medium, "low": low},
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=float, required=True, help="number of triples to write (1e6 is fine)")
    parser.add_argument("--out", type=Path, required=True, help="output N-Triples file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--meta", nargs="?", const="", default=None, metavar="PATH",
        help="also write metadata as JSON (default path: <out>.meta.json)",
    )
    args = parser.parse_args(argv)
    triples = int(args.triples)
    if triples < 1:
        parser.error("--triples must be at least 1")

    started = time.perf_counter()
    generator = Generator(triples, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="\n") as handle:
        writer = generator.run(handle)
    seconds = time.perf_counter() - started
    meta = generator.metadata(args.out, args.seed, seconds)

    meta_path = None
    if args.meta is not None:
        meta_path = Path(args.meta) if args.meta else args.out.with_name(args.out.name + ".meta.json")
        meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    print(f"wrote {writer.count} triples ({meta['topics']} topics, {meta['cvts']} CVTs) to {args.out} in {seconds:.1f}s")
    print("composition: " + ", ".join(f"{k} {v:.0%}" for k, v in meta["composition"].items()))
    for level in ("high", "medium", "low"):
        print(f"{level}-degree samples:")
        for s in meta["samples"][level][:5]:
            rels = sorted(set(s["out_relations"]) | {"^" + r for r in s["in_relations"]})
            shown = ", ".join(rels[:6]) + (", ..." if len(rels) > 6 else "")
            print(f"  {s['mid']}  degree {s['degree']:<8} {s['type']:<32} {shown}")
    if meta_path is not None:
        print(f"metadata: {meta_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
