"""Reasoning paths as real planners write them (issue 13, part A).

Sources of the samples:

* Readi runs (GPT-3.5 / GPT-4, Cheng et al., 2024): the initial plans that
  failed in the issue's survey of public runs (apostrophes such as
  ``Bachelor's degree -> ...`` and ``Jenny's Father -> ...``, commas such as
  ``Libya, Libya, Libya -> ...``) and the edit replies, which label the
  path ``Refined Path:`` after echoing the ``Initial Path:`` they were given.
* Reasoning on Graphs (RoG, Luo et al., ICLR 2024): relation-only beams,
  ``<PATH> r1 <SEP> r2 </PATH>``, the format its planner is trained on and
  that ``src/qa_prediction/gen_rule_path.py`` of RManLuo/reasoning-on-graphs
  reads (``PATH_RE = r"<PATH>(.*)<\\/PATH>"``, relations split on ``<SEP>``).
* Graph-constrained reasoning (RManLuo/graph-constrained-reasoning, issue
  16): paths printed after a markdown ``# Reasoning Path:`` heading.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.methods.reasoning_path import (
    PathSpec,
    PathSyntaxError,
    clean_text,
    parse_paths,
    parse_relation_paths,
    render_paths,
)


def _pairs(text: str, topics: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
    return [(p.start, p.relations) for p in parse_paths(text, topics)]


# -- names the old grammar could not hold ------------------------------------------------

@pytest.mark.parametrize(
    "text,expected",
    [
        (
            'Path: {"Bachelor\'s degree": [Bachelor\'s degree -> education.educational_degree.people_with_this_degree '
            "-> education.education.institution]}",
            [("Bachelor's degree", ("education.educational_degree.people_with_this_degree", "education.education.institution"))],
        ),
        (
            "Path: Jenny's Father -> film.film.starring -> film.performance.actor",
            [("Jenny's Father", ("film.film.starring", "film.performance.actor"))],
        ),
        (
            "Path: Libya, Libya, Libya -> music.composition.composer -> people.person.nationality",
            [("Libya, Libya, Libya", ("music.composition.composer", "people.person.nationality"))],
        ),
        (  # commas in a name inside the paper's dict form, and in its key
            'Path: {"Libya, Libya, Libya": [Libya, Libya, Libya -> music.composition.composer], '
            '"Muammar Gaddafi": [Muammar Gaddafi -> people.person.children]}',
            [("Libya, Libya, Libya", ("music.composition.composer",)), ("Muammar Gaddafi", ("people.person.children",))],
        ),
        (  # a comma after a relation ends the path: two paths on one line
            "Path: Jenny's Father -> film.film.starring, Libya, Libya -> location.country.capital",
            [("Jenny's Father", ("film.film.starring",)), ("Libya, Libya", ("location.country.capital",))],
        ),
        (  # an apostrophe in a natural-language relation
            "Path: Jenny's Father -> father's occupation",
            [("Jenny's Father", ("father's occupation",))],
        ),
        (
            "Path: Star Wars: Episode IV – A New Hope -> film.film.directed_by",
            [("Star Wars: Episode IV – A New Hope", ("film.film.directed_by",))],
        ),
    ],
)
def test_names_with_apostrophes_and_commas(text: str, expected: list) -> None:
    assert _pairs(text) == expected


# -- labels --------------------------------------------------------------------------------

EDIT_REPLY = """Goal: The path starts from Taste cannot be controlled by law and should reach the cause of death of its author.
Initial Path: {"Taste cannot be controlled by law": [Taste cannot be controlled by law -> people.person.quotations -> people.cause_of_death]}
Thought: The quotation's author is reached with media_common.quotation.author; the cause of death is a relation of the person.
Refined Path: {"Taste cannot be controlled by law": [Taste cannot be controlled by law -> media_common.quotation.author -> people.deceased_person.cause_of_death]}"""


@pytest.mark.parametrize(
    "text,expected",
    [
        (EDIT_REPLY, [("Taste cannot be controlled by law", ("media_common.quotation.author", "people.deceased_person.cause_of_death"))]),
        ("Refined Path: Jamaica -> location.country.languages_spoken", [("Jamaica", ("location.country.languages_spoken",))]),
        ("Initial Path: Jamaica -> location.country.languages_spoken", [("Jamaica", ("location.country.languages_spoken",))]),
        ("**Refined Path:** Jamaica -> location.country.official_language", [("Jamaica", ("location.country.official_language",))]),
        ("Thought: fix it.\nRefined Path:\nJamaica -> location.country.currency_used", [("Jamaica", ("location.country.currency_used",))]),
        (  # graph-constrained reasoning's heading
            "# Reasoning Path:\nJamaica -> location.country.languages_spoken\n# Answer:\nJamaican English",
            [("Jamaica", ("location.country.languages_spoken",))],
        ),
        (  # a JSON dictionary of path strings
            'Refined Path: {"France": ["France -> location.location.adjoin"], "Nijmegen": ["Nijmegen -> serve_airport -> contain"]}',
            [("France", ("location.location.adjoin",)), ("Nijmegen", ("serve_airport", "contain"))],
        ),
    ],
)
def test_labels_real_planners_use(text: str, expected: list) -> None:
    assert _pairs(text) == expected


# -- relation-only beams (RoG) ----------------------------------------------------------

ROG_BEAMS = (
    "<PATH> people.person.nationality <SEP> location.country.capital </PATH>\n"
    "<PATH> people.person.place_of_birth <SEP> location.location.containedby </PATH>\n"
    "<PATH> </PATH>"
)


def test_relation_only_beams_are_read_best_first() -> None:
    assert parse_relation_paths(ROG_BEAMS) == (
        ("people.person.nationality", "location.country.capital"),
        ("people.person.place_of_birth", "location.location.containedby"),
    )


def test_relation_only_beams_start_at_the_topic_entity() -> None:
    assert _pairs(ROG_BEAMS, ("Justin Bieber",)) == [("Justin Bieber", ("people.person.nationality", "location.country.capital"))]
    both = parse_paths(ROG_BEAMS, ["m.06w2sn5", "Canada"], beams=2)
    assert [p.start for p in both] == ["m.06w2sn5", "Canada", "m.06w2sn5", "Canada"]
    assert both[2].relations == ("people.person.place_of_birth", "location.location.containedby")


def test_relation_only_beams_without_topic_say_what_to_pass() -> None:
    with pytest.raises(PathSyntaxError, match="topics="):
        parse_paths(ROG_BEAMS)


# -- text that is not clean Unicode --------------------------------------------------------

@pytest.mark.parametrize(
    "reply",
    [
        "Path: Jamaica\ud800 -> location.country.languages_spoken",
        b"Path: Jamaica\xff\xfe -> location.country.languages_spoken",
        "Refined Path: \udcff\udcfe",
        b"\xc3",
        "Path: " + "\ud83d" * 50 + " -> r",
    ],
)
def test_undecodable_replies_never_crash(reply: str | bytes) -> None:
    try:
        paths = parse_paths(reply)
    except PathSyntaxError as exc:
        str(exc).encode("utf-8")  # the message itself is printable
        return
    for p in paths:
        for part in (p.start, *p.relations):
            part.encode("utf-8")  # no lone surrogate survives
    assert paths[0].start.startswith("Jamaica\ufffd") or "\ufffd" in paths[0].start


def test_clean_text_replaces_lone_surrogates_and_bad_bytes() -> None:
    assert clean_text("a\ud800b") == "a\ufffdb"
    assert clean_text(b"a\xffb") == "a\ufffdb"
    assert clean_text("\ud83d\ude00") == "\U0001F600", "a surrogate pair is joined, not replaced"


# -- round trips ----------------------------------------------------------------------------


RELATIONS = st.from_regex(r"\^?[a-z][a-z_]{0,8}(\.[a-z][a-z_]{0,8}){2}", fullmatch=True)


@settings(max_examples=400, deadline=None)
@given(st.text(min_size=1, max_size=40), st.lists(RELATIONS, min_size=1, max_size=3))
def test_any_entity_name_renders_and_parses_back(name: str, relations: list[str]) -> None:
    path = PathSpec(name, tuple(relations))
    assert parse_paths("Path: " + path.render()) == (path,)
    assert parse_paths("Thought: edit.\nRefined Path: " + path.render()) == (path,)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=20), st.lists(RELATIONS, min_size=1, max_size=3)), min_size=1, max_size=3))
def test_several_paths_render_and_parse_back(items: list[tuple[str, list[str]]]) -> None:
    paths = tuple(PathSpec(name, tuple(rels)) for name, rels in items)
    assert parse_paths("Final Path:\n" + render_paths(paths)) == paths
