"""KB profiles: how a knowledge base names things.

A profile knows the namespaces of a KB, how people write its entities and
relations (Freebase ``m.0crbvqz`` / ``meteorology.tropical_cyclone.category``,
Wikidata ``wd:Q42`` / ``wdt:P31``), where labels come from, which nodes are
unnamed relationship nodes (Freebase CVTs, Wikidata statements, blank nodes)
and which relations are hidden from relation lists.

Example:
    >>> FREEBASE.expand_name("m.0crbvqz", "entity")
    'http://rdf.freebase.com/ns/m.0crbvqz'
    >>> FREEBASE.shorten("http://rdf.freebase.com/ns/meteorology.tropical_cyclone.category")
    'meteorology.tropical_cyclone.category'
    >>> FREEBASE.is_hidden("http://rdf.freebase.com/ns/kg.object_profile.prominent_type")
    True

Which profile a KB needs can be read from it: :func:`profile_of_iris` counts
the namespaces of a sample of its IRIs (the probe is
:func:`pyql.kb.probes.profile_sample_query`), :func:`profile_of_id` reads the
shape of a linked entity's id, and :func:`infer_profile` puts both together
(a conflict between them is a :class:`~pyql.errors.UsageError`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Iterable, Mapping

from pyql.builder.kind import sparql_action_order
from pyql.builder import escape
from pyql.errors import TermError, UsageError

__all__ = [
    "Profile",
    "FREEBASE",
    "WIKIDATA",
    "GENERIC",
    "get_profile",
    "PROFILES",
    "profile_of_iris",
    "profile_of_id",
    "fitting_profiles",
    "infer_profile",
]

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
FB = "http://rdf.freebase.com/ns/"
_FREEBASE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+\Z")
_WD_ENTITY_RE = re.compile(r"[QL][0-9]+\Z")
_WD_PROPERTY_RE = re.compile(r"P[0-9]+\Z")
_FB_ID_RE = re.compile(r"[mg]\.[0-9A-Za-z_]+\Z")
WD = "http://www.wikidata.org/"
#: The namespaces that tell a KB's profile (its entities and relations live there).
PROFILE_NAMESPACES: tuple[tuple[str, str], ...] = ((WD, "wikidata"), (FB, "freebase"))


@dataclass(frozen=True)
class Profile:
    """Naming rules of one kind of KB. Use :meth:`with_` to derive a variant.

    Attributes:
        name: "freebase", "wikidata", "generic" or your own.
        prefixes: prefix → namespace, emitted as PREFIX lines in every query.
        label_predicates: IRIs whose values are an entity's label.
        label_lang: preferred label language (labels without a tag are also taken).
        type_predicate: IRI linking an entity to its type (add_type_constrain).
        hidden_relation_prefixes: relation IRIs starting with one of these are
            left out of relation lists.
        unnamed_prefixes: IRIs starting with one of these are unnamed nodes even
            when labelled (Wikidata statements).
        unlabelled_is_unnamed: an IRI without label is an unnamed node (Freebase CVTs).
        bare_names: "freebase", "wikidata" or None: which bare names parse.
        subclass_predicate: IRI of the subclass relation, when types form a
            hierarchy that add_type_constrain follows (Wikidata: P31/P279*).
        statement_model: the KB stores Wikidata's full statements
            (``p:``/``ps:``/``psv:``/``pq:``, quantities with units and time
            qualifiers), so MarkQA's numeric actions apply: its environments
            offer them (:attr:`action_names`), and the agent's docs, grammars,
            tool schemas and choose mode follow.
        date_comparison: how a variable compares with a date literal
            (``add_filter``, ``add_compare``, ``add_time_constrain``):
            ``"text"``, as ISO text at the coarser of the two precisions
            (Freebase mixes ``xsd:date``, ``gYear``, ``gYearMonth`` and
            ``dateTime`` on one relation; a year before 1000 or BCE orders
            wrongly as text), or ``"value"``, as dates: the year as a number
            (years before 1000, BCE years and years past 9999 in order), then
            the month and day, at the literal's precision (a ``gYear`` its
            year, a ``gYearMonth`` its month, a date or midnight ``dateTime``
            its day), on every engine alike (Wikidata's times are
            ``xsd:dateTime``, BCE years among them, which rdflib and Virtuoso
            cannot compare as typed values). See
            :func:`pyql.builder.kinds.comparison.comparison_text`.

    Example:
        >>> GENERIC.with_prefixes({"ex": "http://example.org/"}).prefixes["ex"]
        'http://example.org/'
    """

    name: str
    prefixes: Mapping[str, str]
    label_predicates: tuple[str, ...]
    type_predicate: str
    label_lang: str = "en"
    hidden_relation_prefixes: tuple[str, ...] = ()
    unnamed_prefixes: tuple[str, ...] = ()
    unlabelled_is_unnamed: bool = False
    bare_names: str | None = None
    subclass_predicate: str | None = None
    statement_model: bool = False
    date_comparison: str = "text"
    _sorted_namespaces: tuple[tuple[str, str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.date_comparison not in ("text", "value"):
            raise UsageError(f"date_comparison of a profile is 'text' or 'value', not {self.date_comparison!r}")
        for prefix, namespace in self.prefixes.items():
            escape.prefixed_name(prefix, "x")
            escape.iri(namespace)
        object.__setattr__(self, "prefixes", MappingProxyType(dict(self.prefixes)))
        ordered = sorted(((ns, p) for p, ns in self.prefixes.items()), key=lambda item: -len(item[0]))
        object.__setattr__(self, "_sorted_namespaces", tuple(ordered))
        escape.language_tag(self.label_lang)

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.prefixes.items()), self.label_predicates, self.type_predicate, self.label_lang))

    def with_(self, **changes: object) -> Profile:
        """A copy with some fields changed.

        Example:
            >>> FREEBASE.with_(hidden_relation_prefixes=()).hidden_relation_prefixes
            ()
        """
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def action_names(self) -> tuple[str, ...]:
        """The SPARQL actions an environment on a KB of this profile offers by default.

        QueryAgent's set (the ``default`` group of the step kinds' actions,
        :func:`pyql.builder.kind.sparql_action_order`); with
        :attr:`statement_model`, every SPARQL action (MarkQA's numeric ones
        too). Derive a profile with ``with_(statement_model=...)`` to choose
        the other set.

        Example:
            >>> "add_quantity" in WIKIDATA.action_names, "add_quantity" in FREEBASE.action_names
            (True, False)
            >>> "add_bind" in WIKIDATA.with_(statement_model=False).action_names
            False
        """
        return sparql_action_order() if self.statement_model else sparql_action_order(("default",))

    def with_prefixes(self, prefixes: Mapping[str, str]) -> Profile:
        """A copy with more prefixes declared.

        Example:
            >>> "ex" in FREEBASE.with_prefixes({"ex": "http://example.org/"}).prefixes
            True
        """
        return replace(self, prefixes={**self.prefixes, **prefixes})

    @property
    def prefix_list(self) -> str:
        """The declared prefixes as text, for error messages."""
        return ", ".join(p + ":" for p in self.prefixes)

    @property
    def name_examples(self) -> str:
        """Examples of bare names this profile reads, for error messages."""
        if self.bare_names == "freebase":
            return "m.0crbvqz, g.11b6_z1, meteorology.tropical_cyclone.category"
        if self.bare_names == "wikidata":
            return "Q42, P31"
        return "none in the generic profile"

    def expand_name(self, text: str, role: str = "any") -> str | None:
        """The IRI of a bare name, or None when ``text`` is not one.

        Example:
            >>> WIKIDATA.expand_name("Q42"), WIKIDATA.expand_name("P31", "relation")
            ('http://www.wikidata.org/entity/Q42', 'http://www.wikidata.org/prop/direct/P31')
        """
        if self.bare_names == "freebase" and _FREEBASE_NAME_RE.match(text):
            return self.prefixes["ns"] + text
        if self.bare_names == "wikidata":
            if _WD_ENTITY_RE.match(text):
                return self.prefixes["wd"] + text
            if _WD_PROPERTY_RE.match(text):
                return self.prefixes["wdt" if role == "relation" else "wd"] + text
        return None

    def shorten(self, iri: str) -> str:
        """The shortest name that :func:`pyql.builder.terms.parse_term` reads back as ``iri``.

        Example:
            >>> GENERIC.shorten("http://www.w3.org/2000/01/rdf-schema#label")
            'rdfs:label'
            >>> GENERIC.shorten("http://example.org/a b")
            '<http://example.org/a b>'
        """
        if self.bare_names == "freebase" and iri.startswith(self.prefixes["ns"]):
            local = iri[len(self.prefixes["ns"]) :]
            if _FREEBASE_NAME_RE.match(local):
                return local
        for namespace, prefix in self._sorted_namespaces:
            if iri.startswith(namespace):
                local = iri[len(namespace) :]
                if escape.is_safe_local_name(local) or (local and re.fullmatch(r"[A-Za-z0-9_.-]+", local)):
                    if not local.endswith("."):
                        return f"{prefix}:{local}"
        return f"<{iri}>"

    def is_hidden(self, relation_iri: str) -> bool:
        """Whether a relation is left out of relation lists."""
        return relation_iri.startswith(self.hidden_relation_prefixes)

    def prefix_lines(self) -> str:
        """The PREFIX declarations every query of this profile starts with.

        Example:
            >>> print(GENERIC.prefix_lines().splitlines()[0])
            PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
        """
        return "".join(f"PREFIX {p}: {escape.iri(ns)}\n" for p, ns in self.prefixes.items())

    def sparql_iri(self, iri: str) -> str:
        """An IRI as query text: ``prefix:local`` when every engine reads it alike, else ``<iri>``.

        Example:
            >>> FREEBASE.sparql_iri("http://www.w3.org/2001/XMLSchema#gYear")
            'xsd:gYear'
            >>> FREEBASE.sparql_iri("http://rdf.freebase.com/ns/m.0crbvqz")
            '<http://rdf.freebase.com/ns/m.0crbvqz>'
        """
        for namespace, prefix in self._sorted_namespaces:
            if iri.startswith(namespace):
                local = iri[len(namespace) :]
                if escape.is_safe_local_name(local):
                    return escape.prefixed_name(prefix, local)
        return escape.iri(iri)


_COMMON = {"rdf": RDF, "rdfs": RDFS, "xsd": escape.XSD}

FREEBASE = Profile(
    name="freebase",
    prefixes={"ns": FB, **_COMMON},
    label_predicates=(FB + "type.object.name",),
    type_predicate=FB + "type.object.type",
    hidden_relation_prefixes=(FB + "type.", FB + "common.", FB + "freebase.", FB + "kg."),
    unlabelled_is_unnamed=True,
    bare_names="freebase",
)

WIKIDATA = Profile(
    name="wikidata",
    prefixes={
        "wd": "http://www.wikidata.org/entity/",
        "wdt": "http://www.wikidata.org/prop/direct/",
        "p": "http://www.wikidata.org/prop/",
        "ps": "http://www.wikidata.org/prop/statement/",
        "pq": "http://www.wikidata.org/prop/qualifier/",
        "psv": "http://www.wikidata.org/prop/statement/value/",
        "pqv": "http://www.wikidata.org/prop/qualifier/value/",
        "wikibase": "http://wikiba.se/ontology#",
        "wds": "http://www.wikidata.org/entity/statement/",
        "schema": "http://schema.org/",
        **_COMMON,
    },
    label_predicates=(RDFS + "label",),
    type_predicate="http://www.wikidata.org/prop/direct/P31",
    hidden_relation_prefixes=("http://schema.org/", "http://wikiba.se/ontology#"),
    unnamed_prefixes=("http://www.wikidata.org/entity/statement/",),
    bare_names="wikidata",
    subclass_predicate="http://www.wikidata.org/prop/direct/P279",
    statement_model=True,
    date_comparison="value",
)

GENERIC = Profile(
    name="generic",
    prefixes={**_COMMON, "owl": "http://www.w3.org/2002/07/owl#"},
    label_predicates=(RDFS + "label",),
    type_predicate=RDF + "type",
)

PROFILES: Mapping[str, Profile] = MappingProxyType({p.name: p for p in (FREEBASE, WIKIDATA, GENERIC)})


def get_profile(profile: str | Profile) -> Profile:
    """A profile by name (or the profile itself).

    Raises:
        TermError: for an unknown name, listing the known ones.

    Example:
        >>> get_profile("freebase").name
        'freebase'
        >>> get_profile("dbpedia")
        Traceback (most recent call last):
        ...
        pyql.errors.TermError: unknown KB profile 'dbpedia'; choose one of freebase, wikidata, generic, or pass a Profile
    """
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except (KeyError, TypeError):
        raise TermError(
            f"unknown KB profile {profile!r}; choose one of {', '.join(PROFILES)}, or pass a Profile"
        ) from None


def profile_of_iris(iris: Iterable[str]) -> str:
    """The profile whose namespaces most of ``iris`` (a sample of a KB's subjects and relations) use.

    ``http://www.wikidata.org/`` (``wd:``, ``wdt:``, ``p:``, ``ps:`` ...) is
    Wikidata's, ``http://rdf.freebase.com/ns/`` Freebase's; a sample with
    neither is ``generic``.

    Example:
        >>> profile_of_iris(["http://www.wikidata.org/prop/direct/P31", "http://www.w3.org/2000/01/rdf-schema#label"])
        'wikidata'
        >>> profile_of_iris(["http://rdf.freebase.com/ns/type.object.name"]), profile_of_iris(["http://example.org/p"])
        ('freebase', 'generic')
    """
    counts = Counter(name for iri in iris for namespace, name in PROFILE_NAMESPACES if iri.startswith(namespace))
    return counts.most_common(1)[0][0] if counts else GENERIC.name


def profile_of_id(text: str) -> str | None:
    """The profile a linked entity's id belongs to by its shape, or None when it does not tell.

    ``Q42``, ``P31``, ``wd:Q42`` and Wikidata IRIs are Wikidata's; ``m.0crbvqz``,
    ``g.11b6_z1``, ``ns:m.0crbvqz`` and Freebase IRIs are Freebase's.

    Example:
        >>> profile_of_id("Q64"), profile_of_id("<http://rdf.freebase.com/ns/m.0crbvqz>"), profile_of_id("mq:Tom")
        ('wikidata', 'freebase', None)
    """
    text = text.strip().strip("<>")
    for namespace, name in PROFILE_NAMESPACES:
        if text.startswith(namespace):
            return name
    prefix, _, local = text.rpartition(":")
    if prefix in ("wd", "wdt") or (not prefix and (_WD_ENTITY_RE.match(local) or _WD_PROPERTY_RE.match(local))):
        return WIKIDATA.name
    if prefix in ("", "ns") and _FB_ID_RE.match(local):
        return FREEBASE.name
    return None


def fitting_profiles(text: str, profile: Profile) -> list[str]:
    """The other built-in profiles ``text`` is a name of (a bare name they read, or an id of their shape).

    For error messages: a ``Q…`` id on the Freebase profile says it is Wikidata's.

    Example:
        >>> fitting_profiles("Q64", FREEBASE), fitting_profiles("m.0crbvqz", WIKIDATA), fitting_profiles("Q64", WIKIDATA)
        (['wikidata'], ['freebase'], [])
        >>> fitting_profiles("wd:Q64", FREEBASE), fitting_profiles("Hurricane Katrina", FREEBASE)
        (['wikidata'], [])
    """
    text = text.strip()
    by_shape = profile_of_id(text)
    return [
        p.name for p in PROFILES.values()
        if p.name != profile.name and (p.expand_name(text) is not None or p.name == by_shape)
    ]


def infer_profile(from_kb: str | None, ids: Iterable[str]) -> str:
    """The profile of a KB, from what a sample of it says (``from_kb``) and the ids of its linked entities.

    ``from_kb`` is :func:`profile_of_iris` of the KB's sample (None when the
    KB could not be asked). A Freebase or Wikidata sample decides; a generic
    one, or none, lets the ids decide (:func:`profile_of_id`); with no id
    that tells either, a generic sample gives ``generic`` and no sample
    ``freebase`` (the default of a KB opened without a profile).

    Raises:
        UsageError: the ids fit two profiles, or the KB's sample and the ids disagree (naming both).

    Example:
        >>> infer_profile("wikidata", ["Q64"]), infer_profile("generic", ["m.0crbvqz"]), infer_profile(None, [])
        ('wikidata', 'freebase', 'freebase')
        >>> infer_profile("freebase", ["Q64"])
        Traceback (most recent call last):
        ...
        pyql.errors.UsageError: the KB's IRIs are freebase's (http://rdf.freebase.com/ns/...) but the linked entities are wikidata ids (Q64): give --profile freebase or --profile wikidata, or link entities of this KB
    """
    fits: dict[str, str] = {}
    for text in ids:
        name = profile_of_id(str(text))
        if name is not None:
            fits.setdefault(name, str(text))
    if len(fits) > 1:
        mixed = " and ".join(f"{name} ids ({example})" for name, example in fits.items())
        raise UsageError(f"the linked entities mix {mixed}: link entities of one KB, or give --profile")
    from_ids = next(iter(fits), None)
    if from_kb in (FREEBASE.name, WIKIDATA.name):
        if from_ids is not None and from_ids != from_kb:
            namespace = dict((name, ns) for ns, name in PROFILE_NAMESPACES)[from_kb]
            raise UsageError(
                f"the KB's IRIs are {from_kb}'s ({namespace}...) but the linked entities are {from_ids} ids "
                f"({fits[from_ids]}): give --profile {from_kb} or --profile {from_ids}, or link entities of this KB"
            )
        return from_kb
    return from_ids or from_kb or FREEBASE.name
