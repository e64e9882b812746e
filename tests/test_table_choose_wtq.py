"""The table choose list's rules for WikiTableQuestions-style questions (pyql_sql/next_steps.py).

Each rule was read off WTQ training questions; each case is a question and a
small table with the first step the list must offer, and a near miss where
the rule must stay silent.
"""

from __future__ import annotations

import pytest

from pyql_sql.environment import TableEnvironment
from pyql_sql.next_steps import table_next_steps
from pyql_sql.question_match import condition_candidates
from pyql_sql.table import Table

MEDALS = Table.from_rows(
    ["Rank", "Name", "Nationality", "Time"],
    [["1", "Sule Utura", "Ethiopia", "15:38"], ["2", "Emebet Mengistu", "Ethiopia", "15:40"], ["3", "Pauline Korikwiang", "Kenya", "15:41"]],
)
NATIONS = Table.from_rows(
    ["Rank", "Nation", "Gold", "Silver", "Bronze", "Total"],
    [["1", "Russia", "8", "12", "10", "30"], ["2", "China", "7", "4", "2", "13"], ["3", "Belarus", "1", "2", "3", "6"]],
)
STANDINGS = Table.from_rows(
    ["Place", "Team", "Played", "Won", "Lost"],
    [["1", "C.D. Águila", "18", "12", "2"], ["2", "C.D. FAS", "18", "10", "3"], ["3", "Vista Hermosa", "18", "7", "6"]],
)
BRIDGES = Table.from_rows(
    ["Bridge name", "Location", "Year completed"],
    [["Old Youngs Bay Bridge", "Astoria", "1921"], ["Rogue River Bridge", "Gold Beach", "1931"], ["Cape Creek Bridge", "Florence", "1931"]],
)
DRAFT = Table.from_rows(
    ["Rnd.", "Pick #", "NFL team", "Player"],
    [["1", "1", "Houston Texans", "David Carr"], ["1", "8", "Atlanta Falcons", "T. J. Duckett"], ["2", "40", "Atlanta Falcons", "Will Overstreet"],
     ["2", "41", "Manchester City", "X"]],
)
PARTIES = Table.from_rows(["Party", "Candidates", "Votes"], [["UUP", "3", "100"], ["SDLP", "5", "90"], ["DUP", "2", "80"]])
PARTY_NAMES = Table.from_rows(["Party", "Candidate(s)", "Votes"], [["UUP", "Peter Weir", "100"], ["SDLP", "Alan Smith", "90"]])
RACE = Table.from_rows(
    ["Rank", "Athlete", "Nationality"], [["1", "Moses Tanui", "Kenya"], ["48", "Daniel Böltz", "Switzerland"], ["60", "Paul Yego", "Kenya"]]
)


def first_step(table: Table, question: str) -> str:
    return table_next_steps(TableEnvironment(table, question=question))[0].action


def steps(table: Table, question: str) -> list[str]:
    return [s.action for s in table_next_steps(TableEnvironment(table, question=question))]


@pytest.mark.parametrize(
    "table, question, expected",
    [
        # who → the person column, when who names none
        (MEDALS, "who was the only medalist not from ethiopia?", "add_condition(Nationality, !=, Ethiopia)"),
        (RACE, "who was the only contestant from switzerland to place in the top 50?", "add_condition(Nationality, =, Switzerland)"),
        # a negation before a cell: != (not, other than, except, n't)
        (MEDALS, "how many runners were not from ethiopia?", "add_condition(Nationality, !=, Ethiopia)"),
        (MEDALS, "name a runner other than those from kenya", "add_condition(Nationality, !=, Kenya)"),
        (MEDALS, "how many runners weren't from kenya?", "add_condition(Nationality, !=, Kenya)"),
        # a year of the question in a numeric year column
        (BRIDGES, "how many bridges were built in 1931?", "add_condition(Year completed, =, 1931)"),
        # a cell named by its first word alone
        (DRAFT, "how many draft picks did atlanta have?", "add_condition(NFL team, =, Atlanta Falcons)"),
        # a comparison whose number counts the column's own thing
        (PARTIES, "how many parties had more than 3 candidates?", "add_condition(Candidates, >, 3)"),
    ],
)
def test_first_condition(table: Table, question: str, expected: str) -> None:
    assert first_step(table, question) == expected


@pytest.mark.parametrize(
    "table, question, absent",
    [
        (MEDALS, "who was the only medalist from ethiopia?", "!="),  # no negation: an equality
        (MEDALS, "which nationality is noted for runners?", "!="),  # "not" inside "noted" is no negation
        (DRAFT, "how many picks did houston have before manchester united?", "Manchester City"),  # "manchester united" is another team
        (PARTY_NAMES, "how many parties had more than 3 candidates?", "Votes, >"),  # "3 candidates" is no condition on Votes
        (RACE, "who placed in the top 50?", "MAX"),  # "top 50" is a number of rows, not a superlative
    ],
)
def test_rule_stays_silent(table: Table, question: str, absent: str) -> None:
    assert not any(absent in s for s in steps(table, question))


def test_a_cell_written_whole_is_listed_once() -> None:
    listed = steps(DRAFT, "how many picks did atlanta falcons have?")
    assert listed[0] == "add_condition(NFL team, =, Atlanta Falcons)"
    assert sum("Atlanta Falcons" in s for s in listed) == 1


@pytest.mark.parametrize(
    "table, question, expected",
    [
        (MEDALS, "who finished third?", "set_answer(Name)"),  # who → the person column
        (RACE, "who was the fastest from kenya?", "set_answer(Athlete)"),
        (NATIONS, "how many total medals did belarus win?", "set_answer(Total)"),  # the cell's own number, not COUNT
        (NATIONS, "how many gold medals did china win?", "set_answer(Gold)"),
        (NATIONS, "how many nations won silver?", "set_answer(Nation, COUNT)"),  # counting nations stays a COUNT
        (STANDINGS, "which team had the most wins?", "add_order(Won, DESC)"),  # "wins" names Won
        (STANDINGS, "who had the fewest losses?", "add_order(Lost, ASC)"),  # who + argmax: the person column
    ],
)
def test_first_step_without_conditions(table: Table, question: str, expected: str) -> None:
    listed = steps(table, question)
    first = next(s for s in listed if not s.startswith("add_condition"))
    assert first == expected


def test_who_names_its_own_column() -> None:
    """"who was the opponent" names Opponent: the person column gets no bonus."""
    t = Table.from_rows(["Player", "Opponent", "Year"], [["A", "Bristol City", "1999"], ["B", "Everton", "2000"]])
    assert first_step(t, "who was the opponent in 1999?") == "add_condition(Year, =, 1999)"
    assert steps(t, "who was the opponent in 1999?")[1] == "set_answer(Opponent)"


SINGLES = Table.from_rows(["Year", "Single", "Chart"], [["1998", "Alpha", "3"], ["2001", "Beta", "1"], ["2004", "Gamma", "7"]])
FINALISTS = Table.from_rows(["Finalist", "Age"], [["Laura", "26"], ["Belinda", "28"], ["Meliz", "21"]])


@pytest.mark.parametrize(
    "table, question, expected",
    [
        (SINGLES, "what was the last single released?", ["add_row(-1)", "set_answer(Single)"]),  # the table's own order
        (SINGLES, "what was the first single?", ["add_row(1)", "set_answer(Single)"]),
    ],
)
def test_first_and_last_are_rows_in_table_order(table: Table, question: str, expected: list[str]) -> None:
    env = TableEnvironment(table, question=question)
    listed = [s.action for s in table_next_steps(env)]
    assert listed[:2] == expected
    env.step(listed[0])
    env.step(expected[1])
    assert env.step("execute()").observation == f"The answer is ['{'Gamma' if '-1' in listed[0] else 'Alpha'}']"
    finalists = [s.action for s in table_next_steps(TableEnvironment(FINALISTS, question="the first person eliminated was who?"))]
    assert finalists[:2] == ["add_row(1)", "set_answer(Finalist)"]  # no column rises down the table: the first row still is one


@pytest.mark.parametrize(
    "table, question",
    [
        (SINGLES, "what was the last year?"),  # a header follows: the largest year, MAX
        (SINGLES, "which single finished in last place on the chart?"),  # "last place" is a rank
        (FINALISTS, "the first person eliminated was who?"),  # no column rises down the table: nothing to order by
    ],
)
def test_no_row_order_offered(table: Table, question: str) -> None:
    assert not any(s.action.startswith("add_order") for s in table_next_steps(TableEnvironment(table, question=question)))


GAMES = Table.from_rows(
    ["Date", "Opponent", "Attendance"], [["June 24", "Ajax", "6,662"], ["June 28", "PSV", "7,001"], ["July 2", "Ajax", "5,100"]]
)
TOWNS = Table.from_rows(["Location", "Region", "Population", "Elevation (ft)"],
                        [["Santa Maria", "Lima", "14853", "410"], ["Acari", "Arequipa", "4445", "2690"]])
ARENAS = Table.from_rows(["Stadium", "Home city", "Capacity"], [["Holon City Arena", "Holon", "2,850"], ["Nokia Arena", "Tel Aviv", "11,000"]])
ELECTION = Table.from_rows(["Party", "Votes", "Seats"], [["Labor", "166,106", "15"], ["Liberal", "119,106", "20"], ["Independent", "36,271", "4"],
                                                       ["Other", "5,238", "0"], ["Liberal", "WIN", "20"]])


@pytest.mark.parametrize(
    "table, question, expected",
    [
        # "how many <noun>" where the noun (or "people" and its verb) measures a column: the rows' own number
        (GAMES, "how many people attended the game on june 24?", ["add_condition(Date, =, June 24)", "set_answer(Attendance)"]),
        (TOWNS, "how many people live in santa maria?", ["add_condition(Location, =, Santa Maria)", "set_answer(Population)"]),
        (TOWNS, "how many feet above sea level is santa maria?", ["add_condition(Location, =, Santa Maria)", "set_answer(Elevation (ft))"]),
        (ARENAS, "how many people does the holon city arena in holon seat?", ["add_condition(Stadium, =, Holon City Arena)", "set_answer(Capacity)"]),
        # a column of numbers with one word among them is still its own number
        (ELECTION, "how many votes did the independent party have?", ["add_condition(Party, =, Independent)", "set_answer(Votes)"]),
        # near misses: people counted as rows, a comparison after the noun
        (GAMES, "how many people were born in june?", None),
        (GAMES, "how many people attended more than 6,000 times?", None),
    ],
)
def test_how_many_measures_a_column(table: Table, question: str, expected: list[str] | None) -> None:
    listed = steps(table, question)
    answers = [s for s in listed if s.startswith("set_answer")]
    if expected is None:
        assert not answers[0].startswith("set_answer(Attendance)") or answers[0].endswith("COUNT)"), answers
    else:
        assert listed[0] == expected[0] and answers[0] == expected[1], listed


LAPS = Table.from_rows(["Driver", "Laps", "Attendance"], [["Ann", "61", "16,000"], ["Bo", "58", "14,000"], ["Cy", "60", "9,000"]])


@pytest.mark.parametrize(
    "question, expected",
    [
        ("how many drivers did not make more than 60 laps?", "add_condition(Laps, <=, 60)"),
        ("how many games did not have at least 15,000 in attendance?", "add_condition(Attendance, <, 15000)"),
        ("how many drivers made more than 60 laps?", "add_condition(Laps, >, 60)"),  # no negation: the comparison as written
        ("how many drivers not named ann made more than 59 laps?", "add_condition(Laps, >, 59)"),  # a negation far before it
        ("how many drivers made no fewer than 60 laps?", "add_condition(Laps, >=, 60)"),  # "no ... than", one cue
        ("how many games had no higher than 14,000 in attendance?", "add_condition(Attendance, <=, 14000)"),
    ],
)
def test_a_negated_comparison_is_its_opposite(question: str, expected: str) -> None:
    assert expected in steps(LAPS, question)


def test_a_year_part_compared_no_later_than_is_at_most_that_year() -> None:
    listed = Table.from_rows(["Name", "Date listed"], [["A", "March 2, 2009"], ["B", "May 1, 2010"], ["C", "June 4, 2012"]])
    env = TableEnvironment(listed, question="how many were listed no later than 2010?")
    assert table_next_steps(env)[0].action == "add_part(Date listed, year)"
    env.step("add_part(Date listed, year)")
    assert table_next_steps(env)[0].action == "add_condition(Date listed year, <=, 2010)"


# -- a name the question writes that cells hold inside them: contains ---------------------------------------------
SCHEDULE = Table.from_rows(
    ["Game", "Opponent", "Venue", "Notes"],
    [["1", "Atlanta Braves", "Ostrava, Czech Republic", "directed by the coach"],
     ["2", "@ Atlanta Braves", "Brno", "rain delay"], ["3", "New York Mets", "Ostrava, CZE", "directed by the coach"],
     ["4", "@ Florida Marlins", "Praha", "Tour of Japan"], ["5", "Japan", "Brno", "Japan Cup"]],
)
SPEED_SKATING = Table.from_rows(
    ["Distance", "Gold", "Silver"],
    [["500 m", "Hiroyasu Shimizu\n Japan", "Jeremy Wotherspoon\n Canada"], ["1000 m", "Jan Bos\n Netherlands", "Joji Kato\n Japan"],
     ["1500 m", "Joji Kato\n Japan", "Jan Bos\n Netherlands"], ["5000 m", "Bob de Jong\n Netherlands", "Lee Kyou-hyuk\n South Korea"]],
)
LAKES = Table.from_rows(["Name", "Depth"], [["Lake Garda", "346"], ["Lake Como", "425"], ["Lake Iseo", "251"], ["Lago Maggiore", "372"]])


@pytest.mark.parametrize(
    "table, question, expected",
    [
        (SCHEDULE, "how many times did the braves appear on the schedule?", "add_condition(Opponent, contains, Braves)"),
        (SCHEDULE, "how many matches were held in ostrava?", "add_condition(Venue, contains, Ostrava)"),
        (SPEED_SKATING, "how many skaters from japan took gold?", "add_condition(Gold, contains, Japan)"),
        (SPEED_SKATING, "how many silver medals went to south korea?", "add_condition(Silver, contains, South Korea)"),  # one cell: two words
        # a cell written whole that others write after a marker (@ Atlanta Braves): the games there too
        (SCHEDULE, "which games were played against the atlanta braves?", "add_condition(Opponent, contains, Atlanta Braves)"),
    ],
)
def test_a_name_inside_cells_is_a_contains_condition(table: Table, question: str, expected: str) -> None:
    assert first_step(table, question) == expected


def test_a_name_written_with_a_marker_or_a_footnote_is_counted_in_every_form() -> None:
    games = Table.from_rows(["#", "Opponent", "Finish"], [["1", "Braves", "1st"], ["2", "@ Braves", "1st*"], ["3", "Mets", "2nd"],
                                                         ["4", "at Braves", "3rd"], ["5", "Phillies", "1st"]])
    for question, count in [("how many times were the braves listed as the opponents?", 3), ("how many times was the finish 1st?", 3)]:
        env = TableEnvironment(games, question=question)
        while not env.done:
            assert env.step(table_next_steps(env)[0].action).ok
        assert [str(a["value"]) for a in env.final_result().answers] == [str(count)], question


def test_a_contains_condition_keeps_the_rows_that_hold_the_name() -> None:
    env = TableEnvironment(SPEED_SKATING, question="how many skaters from japan took gold?")
    assert env.step(first_step(SPEED_SKATING, "how many skaters from japan took gold?")).ok
    assert env.step("set_answer(Gold, COUNT)").ok and env.step("execute()").observation == "The answer is [2]"


@pytest.mark.parametrize(
    "table, question, absent",
    [
        (SCHEDULE, "who was the opponent in the japan game?", "contains, Japan"),  # the cell Japan, written whole, leads
        (LAKES, "what is the deepest lake?", "contains"),  # a word most cells hold names no row
        (SCHEDULE, "which game was directed by the coach?", "contains, directed"),  # a common word of the notes, no name
        (SCHEDULE, "how many games were not against the braves?", "contains"),  # a negation: the rows without it
        (SCHEDULE, "how many games against new york giants?", "contains, New York"),  # a part of another name (New York Mets)
        (SCHEDULE, "which games were played against the new york mets?", "contains"),  # a cell written whole, and only so: =
    ],
)
def test_contains_stays_silent(table: Table, question: str, absent: str) -> None:
    assert not any(absent in s for s in steps(table, question)), steps(table, question)


@pytest.mark.parametrize("question", ["who was the opponent in the japan game?", "how many games did japan play?"])
def test_a_cell_written_whole_wins_over_a_name_inside_other_cells(question: str) -> None:
    """The Opponent cell Japan leads; Notes' "Tour of Japan", "Japan Cup" (a contains) come after it, if at all."""
    listed = steps(SCHEDULE, question)
    assert listed[0] == "add_condition(Opponent, =, Japan)", listed
    (cell, *rest) = condition_candidates(SCHEDULE, question)
    assert (cell.op, cell.value) == ("=", "Japan") and all(c.score < cell.score for c in rest)
    assert ("contains", "Japan") in {(c.op, c.value) for c in rest}


SEASON = Table.from_rows(["Date", "Opponent", "Attendance"],
                         [["September 10, 2005", "Michigan", "111,386"], ["September 17, 2005", "Michigan State", "80,795"],
                          ["October 1, 2005", "Purdue", "65,000"]])


def test_a_day_of_a_month_without_a_year_is_the_cell_of_that_day() -> None:
    listed = steps(SEASON, "what is the attendance for september 17th?")
    assert listed[0] == 'add_condition(Date, =, "September 17, 2005")' and "add_row(17)" not in listed, listed
    assert not any(s.startswith("add_part(Date, month)") for s in listed)  # the month alone is not the condition
    # a month alone still is
    assert steps(SEASON, "how many games were played in september?")[0] == "add_part(Date, month)"


def test_more_people_compares_the_attendance() -> None:
    assert steps(SEASON, "which game was attended by more people, september 10 or october 1?")[0] == (
        'compare_rows(Attendance, Date, "September 10, 2005", "October 1, 2005", DESC)')


CAREER = Table.from_rows(["Year", "Competition", "Venue", "Position"],
                         [["2001", "World Championships", "Edmonton, Canada", "5th"], ["2003", "Universiade", "Daegu, South Korea", "2nd"]])
SHOWS = Table.from_rows(["Year", "Area", "Presenter"], [["2001", "North", "Ann Lee"], ["2002", "South", "Chris Jackson"]])


def test_where_asks_for_the_place_and_who_for_the_column_it_names() -> None:
    # where: the Venue, above the competition the question asks it of
    assert steps(CAREER, "where was the last competition held?")[:2] == ["add_row(-1)", "set_answer(Venue)"]
    # who is the <header>: that column, not the first text column
    assert [s for s in steps(SHOWS, "who is the presenter listed before chris jackson?") if s.startswith("set_answer")][0] == "set_answer(Presenter)"


TRACKS = Table.from_rows(["#", "Title", "Songwriters", "Notes"],
                         [["1", "Intro", "", "Live"], ["2", "Rain", "Ann Lee", ""], ["3", "Sun", "", ""], ["4", "Wind", "Bo Li", "Demo"]])


@pytest.mark.parametrize("question, expected", [
    ("how many tracks have no songwriters?", 'add_condition(Songwriters, =, "")'),
    ("how many tracks do not have notes?", 'add_condition(Notes, =, "")'),
])
def test_a_column_the_rows_lack_is_its_empty_cells(question: str, expected: str) -> None:
    listed = steps(TRACKS, question)
    assert listed[0] == expected, listed
    env = TableEnvironment(TRACKS, question=question)
    assert env.step(listed[0]).ok  # the empty value reads back


def test_a_column_the_rows_have_is_no_empty_condition() -> None:
    assert not any('""' in s for s in steps(TRACKS, "how many tracks have notes?"))


ROSTER = Table.from_rows(["Player", "Pos.", "Place"], [["Ann", "QB", "1st"], ["Bo", "WR", "3rd"], ["Cy", "QB", "1st"], ["Di", "OT", "12th"]])


@pytest.mark.parametrize("question, expected", [
    ("how many players are qbs?", "add_condition(Pos., =, QB)"),  # the plural of an abbreviation
    ("how many times did they finish 1st?", "add_condition(Place, =, 1st)"),  # a place written as a cell
])
def test_short_cells_written_as_values(question: str, expected: str) -> None:
    assert steps(ROSTER, question)[0] == expected


def test_a_word_inside_a_month_name_is_no_month() -> None:
    # the month words are a set: "ember" (inside "september") is a word cells may hold, not a month
    styles = Table.from_rows(["Name", "Style"], [["A", "Gothic Ember"], ["B", "Roman Ember"], ["C", "Dome"], ["D", "Tower"], ["E", "Spire"]])
    assert steps(styles, "how many buildings were ember style?")[0] == "add_condition(Style, contains, Ember)"
    assert steps(SEASON, "what is the attendance for september 17th?")[0] == 'add_condition(Date, =, "September 17, 2005")'


# -- names as questions write them: a letter wrong, a footnote sign before the cell -------------------------------------
DRIVERS = Table.from_rows(["Pos.", "Driver", "Co-driver"], [["1.", "Sébastien Loeb", "Daniel Elena"], ["2.", "Dani Sordo", "Marc Marti"],
                                                            ["3.", "^ Mikko Hirvonen", "Jarmo Lehtinen"]])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("who was dabi sordo's co-driver?", "add_condition(Driver, =, Dani Sordo)"),  # one letter wrong, the other word right
        ("who was sebastien leob's co-driver?", "add_condition(Driver, =, Sébastien Loeb)"),  # two letters swapped
        ("who was mikko hirvonen's co-driver?", "add_condition(Driver, =, ^ Mikko Hirvonen)"),  # a sign before the name
    ],
)
def test_a_name_written_with_a_letter_wrong_or_without_its_sign_is_the_cell(question: str, expected: str) -> None:
    assert first_step(DRIVERS, question) == expected


def test_a_name_with_every_word_wrong_is_no_cell() -> None:
    assert not any(s.startswith("add_condition(Driver") for s in steps(DRIVERS, "who was dabi sorda's co-driver?"))


# -- a one-word header named by its verb ----------------------------------------------------------------------------------
FILMS = Table.from_rows(["#", "Film", "Gross", "Pick"], [["1", "Frozen", "$2,441,278", "3."], ["2", "Noah", "$3,017,410", "17."],
                                                        ["3", "Ronin", "$1,193,153", "21."]])


def test_a_header_named_by_its_verb_is_ordered_by() -> None:
    env = TableEnvironment(FILMS, question="which film was the highest grossing?")
    while not env.done:
        assert env.step(table_next_steps(env)[0].action).ok
    assert [a["value"] for a in env.final_result().answers] == ["Noah"]


def test_a_verb_after_who_is_what_the_person_did_not_the_column_asked() -> None:
    people = Table.from_rows(["Round", "Pick", "Player"], [["1", "3.", "Rick Hampton"], ["1", "17.", "Ron Chipperfield"]])
    assert "set_answer(Player)" in steps(people, "who was picked first in the draft?")[:2]
