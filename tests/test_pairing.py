"""Pairing a change question's values with the table's columns: each rule, its negatives, and the enumeration parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyql_sql import Table
from pyql_sql.mutation_steps import mutation_next_steps
from pyql_sql.pairing import (
    cell_shape,
    column_mentions,
    enumeration_pairs,
    pair_values,
    question_values,
    word_norm,
)
from pyql_sql.writable_environment import WritableTableEnvironment

DRAFT = Table.from_rows(
    ["Round", "Pick", "Player", "Position", "School/Club Team"],
    [["1", "11", "Walt Schlinkman", "Fullback", "Texas Tech"], ["3", "27", "Clyde Goodnight", "End", "Tulsa"]],
    name="Football Draft Picks",
)
STANDINGS = Table.from_rows(
    ["Club", "Wins", "Loses", "Goals scored", "Goals conceded"],
    [["FSK Anyksciai", "12", "5", "37", "23"], ["Vidzgiris Alytus", "11", "5", "47", "19"]],
    name="Football Standings",
)
GOLF = Table.from_rows(
    ["Player", "Country", "Year(s) won", "Total", "To par"],
    [["Ben Curtis", "United States", "2003", "145", "+5"], ["Tiger Woods", "United States", "2000 , 2005", "145", "+5"]],
    name="Golf Tournament Winners",
)
BADMINTON = Table.from_rows(
    ["Year", "Venue", "Partner"],
    [["1987", "Beijing, China", "Chung So-young"], ["1985", "Calgary, Canada", "Yoo Sang-hee"]],
    name="Badminton Achievements",
)
GAMES = Table.from_rows(
    ["Game", "Opponent", "Record"], [["1", "Tampa Bay", "1-0-0"], ["2", "Chicago", "2-0-0"]], name="Games"
)
PLAYERS = Table.from_rows(["Player", "Height", "Current Club"], [["Ann Lee", "2.01", "Hawks"], ["Bo Li", "1.95", "Nets"]], name="Basketball Players")
AIRPORTS = Table.from_rows(["Rank", "Airport name", "City"], [["1", "Schiphol", "Amsterdam"], ["2", "Zaventem", "Brussels"], ["3", "Montréal Trudeau", "Montréal"]],
                           name="Airport Passengers")
SEES = Table.from_rows(["Jurisdiction", "Latin name"], [["Berat", "Beratensis"], ["Durrës", "Dyrrachium"]], name="Jurisdictions")
SCORES = Table.from_rows(["Nation", "T Score", "Total"], [["France", "7.1", "22.1"], ["Peru", "7.0", "21.0"]], name="Nation Scores")
CONTEST = Table.from_rows(["Draw", "Artist", "Song", "Points", "Place"], [["1", "Gonzaga", "Tema", "102", "5th"]], name="Music Contest")
STATS = Table.from_rows(["Tournament", "Games played", "Points per game"], [["2013 EuroBasket", "6", "11.2"]], name="Tournament Stats")
FILMS = Table.from_rows(["Year", "Title", "Role", "Notes"], [["2010", "Up", "Carl", "-"], ["2012", "Brave", "Merida", "-"], ["2015", "Inside Out", "Joy", "Voice"]],
                        name="Filmography")
COUNTIES = Table.from_rows(["County or City", "NUTS 3 Region", "Population"],
                           [["County Kildare", "Mid-East Region", "186,335"], ["County Laois", "Midlands Region", "67,059"]], name="Irish Counties")
MONTHS = Table.from_rows(["Game", "February", "Opponent", "Record"], [["61", "3", "Ajax", "30-31"], ["62", "5", "PSV", "31-31"]], name="Game Records")
SPORTS_VENUES = Table.from_rows(["Venue", "Sports", "Capacity"], [["Wembley Stadium", "Football (soccer)", "90,000"], ["Eden Park", "Rugby", "50,000"]],
                                name="sports_venues")
RESULTS = Table.from_rows(["Year", "Competition", "Position", "Event"],
                          [["1997", "World Championships", "1st", "400m"], ["1998", "Commonwealth Games", "3rd", "4x400m relay"]], name="Results")
VENUES = Table.from_rows(
    ["Team", "Location", "Stadium"], [["Celtic", "Glasgow", "Celtic Park"], ["Hearts", "Edinburgh", "Tynecastle Stadium"]], name="Team Stadiums"
)


def _steps(table: Table, question: str) -> list[str]:
    """The change steps listed first, following a listed condition to the update."""
    env = WritableTableEnvironment(table, question=question)
    steps = [s.action for s in mutation_next_steps(env)]
    if steps and steps[0].startswith("add_condition"):
        env.step(steps[0])
        steps = [steps[0]] + [s.action for s in mutation_next_steps(env)]
    return steps


CASES = [
    # (1) enumerations: columns listed, then as many values
    (DRAFT, ("Insert into the 'Football Draft Picks' table the values for Round, Pick, Player, Position, and School/Club Team, "
             "which are '33', '336', 'John Smith', 'Quarterback', and 'USC', respectively."),
     ["insert_row(Round = 33; Pick = 336; Player = John Smith; Position = Quarterback; School/Club Team = USC)"]),
    (DRAFT, "Add a row: Round, Pick, Player, Position and School/Club Team are 2, 19, 'Al Hoag', 'End' and 'Rice'.",
     ["insert_row(Round = 2; Pick = 19; Player = Al Hoag; Position = End; School/Club Team = Rice)"]),
    # "with H1 'v1', H2 'v2'", "H1 of v1", a column named twice (listed, then given its value)
    (STANDINGS, "Insert a new record with club 'FK Trakai', wins 9, loses of 7, goals scored 29 and goals conceded 24.",
     ["insert_row(Club = FK Trakai; Wins = 9; Loses = 7; Goals scored = 29; Goals conceded = 24)"]),
    (STANDINGS, ("Insert into table with columns 'Club', 'Wins', 'Loses', 'Goals scored' and 'Goals conceded'. The value for "
                 "column 'Club' is 'Kauno', for 'Wins' is '3', for 'Loses' is '1', for 'Goals scored' is '8' and for 'Goals conceded' is '9'."),
     ["insert_row(Club = Kauno; Wins = 3; Loses = 1; Goals scored = 8; Goals conceded = 9)"]),
    # (2) a header worded differently: losses ~ Loses, winning years ~ Year(s) won; a list item with free words
    (STANDINGS, "Insert a new record: club 'FK Trakai', 9 wins, 7 losses, 29 goals scored and 24 goals conceded.",
     ["insert_row(Club = FK Trakai; Wins = 9; Loses = 7; Goals scored = 29; Goals conceded = 24)"]),
    (GOLF, ("Insert the winner with the player name 'Bernhard Langer', country 'Germany', winning years '1985, 1993', "
            "total score '290' and 'To par' score of '+2'."),
     ["insert_row(Player = Bernhard Langer; Country = Germany; Year(s) won = 1985, 1993; Total = 290; To par = +2)"]),
    # (3) values with no column named, placed by the cells they resemble
    (BADMINTON, "Record the achievement in 1990 at Birmingham, England with partner 'Jalani Sidek'.",
     ["insert_row(Year = 1990; Venue = Birmingham, England; Partner = Jalani Sidek)"]),
    # "insert ... where Round is '4', ...": the values of a new row, not the rows of an update
    (DRAFT, ("For the 'Football Draft Picks' table, insert a record with values for Round, Pick, Player, Position and School/Club Team, "
             "where Round is '4', Pick is '40', Player is 'Al Hoag', Position is 'End', and School/Club Team is 'Rice'."),
     ["insert_row(Round = 4; Pick = 40; Player = Al Hoag; Position = End; School/Club Team = Rice)"]),
    # the columns' list starts at "values", not at an earlier "data"
    (STANDINGS, "Insert data on the Football Standings table with values for Club, Wins, Loses, Goals scored and Goals conceded including Kauno, 3, 1, 8, and 9.",
     ["insert_row(Club = Kauno; Wins = 3; Loses = 1; Goals scored = 8; Goals conceded = 9)"]),
    # as many quoted values as columns, listed after "the values": in column order
    (GAMES, "The game was recorded by inserting the values '3', 'Boston', and '3-0-0'.", ["insert_row(Game = 3; Opponent = Boston; Record = 3-0-0)"]),
    # one column and one value left: the value is the column's
    (GAMES, "Add Boston to the games table with the Game being 3 and the Record being '3-0-0'.", ["insert_row(Game = 3; Record = 3-0-0; Opponent = Boston)"]),
    # "won 1st place": an ordinal right before a column's name is its value; "2015 EuroBasket", the one value left, is one name
    (CONTEST, "The song 'Porto Sentido' by Rui Veloso won 1st place with 145 points in Draw 10, and was inserted.",
     ["insert_row(Song = Porto Sentido; Place = 1st; Points = 145; Draw = 10; Artist = Rui Veloso)"]),
    (STATS, "Insert 2015 EuroBasket statistics into the stats table with 8 games played and 9.1 points per game.",
     ["insert_row(Games played = 8; Points per game = 9.1; Tournament = 2015 EuroBasket)"]),
    # a work's kind names the Title column ("the movie 'X'"); "no additional notes" is the column's mark for none;
    # a name keeps its title's abbreviation and its parenthesized detail
    (FILMS, "The movie 'Despicable Me 3' released in 2017 featured Frieda (voice) and had no additional notes.",
     ["insert_row(Title = Despicable Me 3; Year = 2017; Notes = -; Role = Frieda (voice))"]),
    (FILMS, "The movie 'The Aviator' released in 2004 features Sen. Ralph Owen Brewster played by the actor, with no additional notes.",
     ["insert_row(Title = The Aviator; Year = 2004; Notes = -; Role = Sen. Ralph Owen Brewster)"]),
    # "Insert 'X' into ...": X names the new row (the first column); then the one value left is the one column left's
    (SPORTS_VENUES, "Insert 'Lambeau Field' into sports_venues for American Football with a capacity of 81,441.",
     ["insert_row(Capacity = 81,441; Venue = Lambeau Field; Sports = American Football)"]),
    # "placed second": the one place left, written as the column writes places
    (RESULTS, "In 1999 the athlete competed in the World Championships, where they placed second in the 400m event.",
     ["insert_row(Year = 1999; Competition = World Championships; Event = 400m; Position = 2nd)"]),
    # "updated with the following data" naming every column: a whole new row
    (GAMES, "The Games table should be updated with the following data: Game: 3, Opponent: Boston, Record: 3-0-0.",
     ["insert_row(Game = 3; Opponent = Boston; Record = 3-0-0)"]),
    # a name ending with a header's word the column's cells end with too ("the Ibrox Stadium") is a value
    (VENUES, "The Rangers team's home stadium is the Ibrox Stadium, which is located in Glasgow.",
     ["insert_row(Team = Rangers; Stadium = Ibrox Stadium; Location = Glasgow)"]),
    # updates: the rows by a cell, the new values by their columns
    # an owner ("Ann Lee's height") picks the row; a value after "<column> ... to" is that column's
    (PLAYERS, "Ann Lee's height is updated to 2.11 and she now plays for the Nets.",
     ["add_condition(Player, =, Ann Lee)", "update_rows(Height = 2.11; Current Club = Nets)"]),
    # "city name": the City column (not a second column, Airport name, named by "name")
    (AIRPORTS, "Change the city name to 'Haarlem' for the airport with rank 2.", ["add_condition(Rank, =, 2)", "update_rows(City = Haarlem)"]),
    # the row's value 'Berat' is a word of its own, not the start of the new value 'Beratënsis'
    (SEES, "Change the Latin name field to 'Beratënsis' for 'Berat' in the Jurisdictions table.",
     ["add_condition(Jurisdiction, =, Berat)", "update_rows(Latin name = Beratënsis)"]),
    # "T Score is now 7.500", "Total is 22.700 in the ... Table": the values alone
    (SCORES, "France's T Score is now 7.500 and Total is 22.700 in the Nation Scores Table.",
     ["add_condition(Nation, =, France)", "update_rows(T Score = 7.500; Total = 22.700)"]),
    # "where Notes are set to '-' ... Notes to 'Video'": the rows by the old value, the column set again
    (FILMS, "In the Filmography, update the record where Notes are set to 'Voice' and change the Year to '2016', Title to 'Zootopia', Role to 'Judy', and Notes to 'Lead'.",
     ["add_condition(Notes, =, Voice)", "update_rows(Year = 2016; Title = Zootopia; Role = Judy; Notes = Lead)"]),
    # columns listed, then their values far after, closed by "respectively"
    (FILMS, "Change the year and role of the film titled 'Brave' in the Filmography to '2013' and 'Elinor' respectively.",
     ["add_condition(Title, =, Brave)", "update_rows(Year = 2013; Role = Elinor)"]),
    # a cell written without its accent ("Montreal" for "Montréal")
    (AIRPORTS, "Change the rank of Montreal Trudeau to 19.", ["add_condition(Airport name, =, Montréal Trudeau)", "update_rows(Rank = 19)"]),
    # "the February record": the February column, "record" names the row
    (MONTHS, "Change the February record of Game 62 to 30.", ["add_condition(Game, =, 62)", "update_rows(February = 30)"]),
    # "Update the <value> ... for <row>": the row is named after "for", though both are cells
    (COUNTIES, "Update the Midlands Region in the 'Irish Counties' table for County Kildare.",
     ["add_condition(County or City, =, County Kildare)", "update_rows(NUTS 3 Region = Midlands Region)"]),
    # "from 'A' to 'B'": A picks the rows, B is the column's new value
    (DRAFT, "Modify the player in the draft table from 'Walt Schlinkman' to 'Walter Schlinkman'.",
     ["add_condition(Player, =, Walt Schlinkman)", "update_rows(Player = Walter Schlinkman)"]),
    (STANDINGS, "Update the results of the club Vidzgiris Alytus with 13 wins, 2 loses and goals conceded a total of 20.",
     ["add_condition(Club, =, Vidzgiris Alytus)", "update_rows(Wins = 13; Loses = 2; Goals conceded = 20)"]),
]

NEGATIVES = [
    # lists of different lengths: no pairing, so no insert (also one value for two columns)
    (DRAFT, "Insert the values for Round and Pick, which are '33', and Player 'Al', Position 'End', School/Club Team 'Rice'."),
    (DRAFT, "Insert the values for Round, Pick, Player, Position, and School/Club Team, which are '33', '336', 'John Smith'."),
    # "goals" names two columns equally, and both are free: either value may go to either
    (STANDINGS, "Insert club 'FK Trakai' with wins 9, loses 7, goals 5 and goals 24."),
    # two values left for the one column left
    (GAMES, "Add Boston and Detroit to the games table with the Game being 3 and the Record being '3-0-0'."),
    # a row missing a column the table always fills
    (STANDINGS, "Insert club 'FK Trakai' with wins 9."),
    # two numbers and two numeric columns with no name next to them: no assignment is forced
    (Table.from_rows(["Team", "Won", "Lost"], [["A", "1", "2"]], name="T"), "Insert team 'B' with 3 and 4."),
]


@pytest.mark.parametrize(("table", "question", "expected"), CASES)
def test_question_gives_the_change_step(table: Table, question: str, expected: list[str]) -> None:
    assert _steps(table, question)[: len(expected)] == expected


@pytest.mark.parametrize(("table", "question"), NEGATIVES)
def test_ambiguous_pairings_give_no_insert(table: Table, question: str) -> None:
    assert not any(s.startswith("insert_row") for s in _steps(table, question))


def test_a_verb_form_does_not_name_a_noun_header() -> None:
    q = "The game against San Jose was recorded with a loss."
    assert [m.column for m in column_mentions(GAMES, q)] == [0]  # "game" names Game; "recorded" names no Record
    assert all(c != 2 for c, _ in pair_values(GAMES, q))


def test_values_listed_with_no_column_are_left_alone() -> None:
    q = "Tiger Woods won in 1997, 2001, 2002, and 2005, with a total score of 270."
    assert [(GOLF.headers[c], v.text) for c, v in pair_values(GOLF, q, skip=[(0, 11)])] == [("Total", "270")]


def test_table_name_and_column_count_are_no_values() -> None:
    q = "Insert into table 'Golf Tournament Winners' with 5 columns: the Golf Tournament winner 'Ann'."
    values, _ = question_values(GOLF, q)
    assert [v.text for v in values] == ["'Ann'"]


def test_word_norm_and_cell_shape() -> None:
    assert word_norm("losses") == word_norm("Loses") and word_norm("won") == word_norm("winning")
    assert word_norm("march") != word_norm("match")
    assert [cell_shape(x) for x in ("2-1", "+3", "1,174", "April 4, 2001")] == ["score", "signed", "int", "date"]


def test_quantity_stores_the_number_when_cells_have_no_unit() -> None:
    t = Table.from_rows(["Season", "Against"], [["2000-01", "147"], ["2010-11", "150"]], name="S")
    assert _steps(t, "The 2010-11 season was updated with 82 goals against.") == [
        "add_condition(Season, =, 2010-11)", "update_rows(Against = 82)"]


def test_a_value_with_quotes_of_its_own_keeps_them() -> None:
    t = Table.from_rows(["Episode", "Title"], [["1", '"Rose"']], name="E")
    steps = _steps(t, "Insert a new row with Episode as '2' and Title as '\"Dalek\"'.")
    assert steps == ["insert_row(Episode = 2; Title = '\"Dalek\"')"]
    env = WritableTableEnvironment(t, question="x")
    env.step(steps[0])
    assert env.state is not None and ("2", '"Dalek"') in env.state.rows()


# -- the enumeration parser ---------------------------------------------------------------
# Deliberate exclusions: headers are distinct single nouns with distinct normal forms (two headers
# that normalise alike are one column to the parser), and values are quoted words that are no header
# (a quoted header is a mention, not a value).
NOUNS = ["Round", "Pick", "Player", "Position", "Team", "Venue", "Coach", "Height", "Weight", "Colour"]
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


def _joined(items: list[str], comma_and: bool) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + (", and " if comma_and else " and ") + items[-1]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_enumeration_pairs_in_order_when_the_lists_match(data: st.DataObject) -> None:
    n = data.draw(st.integers(2, 6))
    m = data.draw(st.sampled_from([n, n, n - 1, n + 1]))
    heads = data.draw(st.lists(st.sampled_from(NOUNS), min_size=n, max_size=n, unique=True))
    values = data.draw(st.lists(WORDS.filter(lambda w: w.capitalize() not in NOUNS), min_size=m, max_size=m, unique=True))
    link = data.draw(st.sampled_from([", which are ", " are ", ": "]))
    table = Table.from_rows(heads, [["x"] * n], name="T")
    q = f"Insert the values for {_joined(heads, data.draw(st.booleans()))}{link}{_joined([repr(v) for v in values], data.draw(st.booleans()))}."
    vs, ms = question_values(table, q)
    pairs, blocked_cols, blocked_values = enumeration_pairs(q, vs, ms)
    if m == n:
        assert [(table.headers[c], v.value) for c, v in pairs] == list(zip(heads, values))
    else:
        assert pairs == [] and blocked_cols == set(range(n)) and len(blocked_values) == m
        assert not any(s.startswith("insert_row") for s in _steps(table, q))


def test_a_value_the_kept_rows_hold_narrows_them_before_the_update() -> None:
    # "in 2009" names rows (some kept rows hold it); "to '2.40 m'" is the new value, never a condition
    results = Table.from_rows(["Year", "Competition", "Notes"],
                              [["2007", "Worlds", "2.30 m"], ["2009", "Worlds", "2.35 m"], ["2009", "Europeans", "2.31 m"]], name="Results")
    env = WritableTableEnvironment(results, question="Change the Notes of the Worlds in 2009 to '2.40 m'.")
    taken = []
    for _ in range(4):
        steps = mutation_next_steps(env)
        if not steps:
            break
        taken.append(steps[0].action)
        env.step(steps[0].action)
        if steps[0].action.startswith("update_rows"):
            break
    assert taken[-1] == "update_rows(Notes = 2.40 m)"
    assert sorted(taken[:-1]) == ["add_condition(Competition, =, Worlds)", "add_condition(Year, =, 2009)"]
