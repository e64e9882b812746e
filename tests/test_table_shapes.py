"""The choose list's question shapes (pyql_sql/shapes.py): what a question asks beyond a condition and an answer.

Each shape is checked on a small table of its own: the plan the question
grounds, and the answer reached by always taking the first listed step (the
path the bundled model follows), with the conditions a plan replaces left
out of the list. The tables are written here; no benchmark question is.
"""

from __future__ import annotations

import pytest

from pyql_sql import Table
from pyql_sql.environment import TableEnvironment
from pyql_sql.next_steps import table_next_steps
from pyql_sql.shapes import cue_hints, plan_actions, question_plans

LAKES = Table.from_rows(["Name", "Depth", "Area (km²)"], [["Lake Tuz", "1 m", "1,500"], ["Lake Palas Tuzla", "3 m", "20"], ["Lake Van", "451 m", "3,755"]])
MEDALS = Table.from_rows(["Rank", "Nation", "Gold", "Silver", "Total"],
                         [["1", "Brazil", "45", "33", "114"], ["2", "South Korea", "8", "6", "22"], ["3", "North Korea", "2", "3", "12"]])
DRAFT = Table.from_rows(["Pick", "Player", "Team"], [["1", "Ann Lee", "Knicks"], ["2", "Hank Stein", "Hawks"], ["3", "Bo Li", "Nets"]])
WINNERS = Table.from_rows(["Year", "Winner", "Date"],
                          [["2001", "Ajax", "May 3, 2001"], ["2002", "PSV", "June 9, 2002"], ["2003", "Ajax", "January 2, 2003"],
                           ["2004", "Ajax", "June 1, 2004"], ["2005", "Feyenoord", "January 30, 2005"]])
SWIMMERS = Table.from_rows(["Rank", "Name", "Nationality", "Time"],
                           [["1", "Ann Lee", "Kenya", "2:01.5"], ["2", "Bo Li", "China", "1:59.8"], ["3", "Cy Ott", "Kenya", "2:03.0"]])
CARS = Table.from_rows(["Driver", "Speed (km/h)"], [["Ann Lee", "201.5"], ["Bo Li", "230.1"], ["Cy Ott", "199.0"]])
RACE = Table.from_rows(["Rank", "Athlete", "Nationality"],
                       [["1", "Moses Tanui", "Kenya"], ["48", "Daniel Böltz", "Switzerland"], ["60", "Urs Kolb", "Switzerland"]])
SINGLES = Table.from_rows(["Single", "Released", "Label"],
                          [["A", "March 3, 1999", "Epic"], ["B", "June 1, 1997", "Sony"], ["C", "May 5, 2001", "Epic"]])
SUMMITS = Table.from_rows(["Rank", "Summit", "Height (m)"], [["1", "Piz Alto", "4,102"], ["2", "Monte Lungo", "3,950"], ["3", "Cima Bassa", "3,200"]])
PEOPLE = Table.from_rows(["Name", "Born", "Club"], [["Ann Lee", "1990", "Ajax"], ["Bo Li", "1984", "PSV"], ["Cy Ott", "1995", "Ajax"]])

ALBUMS = Table.from_rows(["Title", "Length", "Tracks"], [["Topeka", "4:25", "10"], ["Memphis", "4:25", "12"], ["Austin", "3:50", "12"]])


def first_choices(table: Table, question: str, limit: int = 8) -> tuple[list[str], list[str]]:
    """Always take the first listed step until execute(): the steps taken and the answers."""
    env = TableEnvironment(table, question=question)
    taken: list[str] = []
    for _ in range(limit):
        steps = table_next_steps(env)
        if not steps:
            break
        taken.append(steps[0].action)
        env.step(steps[0].action)
        if env.done:
            break
    return taken, [a["value"] for a in env.final_json()["answers"]]


@pytest.mark.parametrize(
    "table, question, steps, answers",
    [
        (LAKES, "which is deeper, lake tuz or lake palas tuzla?",
         ["compare_rows(Depth, Name, Lake Tuz, Lake Palas Tuzla, DESC)", "execute()"], ["Lake Palas Tuzla"]),
        (MEDALS, "who had the higher rank, brazil or north korea?",
         ["compare_rows(Rank, Nation, Brazil, North Korea, ASC)", "execute()"], ["Brazil"]),  # a rank's higher is its smaller number
        (MEDALS, "south korea has how many more medals than north korea?",
         ["set_calculation(Total, -, Nation, South Korea, North Korea)", "execute()"], ["10"]),
        (MEDALS, "what is the difference in gold between north korea and brazil?",
         ["set_calculation(Gold, -, Nation, Brazil, North Korea)", "execute()"], ["43"]),  # the larger first
        # "did A or B ...": a choice between two rows, not a yes/no question
        (LAKES, "was lake tuz or lake palas tuzla deeper?",
         ["compare_rows(Depth, Name, Lake Tuz, Lake Palas Tuzla, DESC)", "execute()"], ["Lake Palas Tuzla"]),
        # "was X in A or B?": the options' column of the row the other conditions keep, the options not conditions
        (SINGLES, "was single c released on epic or sony?", ["add_condition(Single, =, C)", "set_answer(Label)", "execute()"], ["Epic"]),
        (DRAFT, "was bo li picked by the hawks, knicks, or nets?", ["add_condition(Player, =, Bo Li)", "set_answer(Team)", "execute()"], ["Nets"]),
        # ordered by the number a text cell writes: the cell answers, the number only when a number is asked
        (LAKES, "what is the biggest depth?", ["add_part(Depth, number)", "add_order(Depth number, DESC)", "set_answer(Depth)", "execute()"],
         ["451 m"]),
        (LAKES, "the lake with the least depth", ["add_part(Depth, number)", "add_order(Depth number, ASC)", "set_answer(Name)", "execute()"],
         ["Lake Tuz"]),
        # "the same <column> as <row>": that row's value read off the table, the row itself left out
        (ALBUMS, "which other album has the same length as topeka?",
         ["add_condition(Length, =, 4:25)", "add_condition(Title, !=, Topeka)", "set_answer(Title)", "execute()"], ["Memphis"]),
        (ALBUMS, "which album has the same number of tracks as memphis?",
         ["add_condition(Tracks, =, 12)", "add_condition(Title, !=, Memphis)", "set_answer(Title)", "execute()"], ["Austin"]),
        # "first place" / "last place" written by no cell: the numbered rank column
        (MEDALS, "which nation took first place?", ["add_condition(Rank, =, 1)", "set_answer(Nation)", "execute()"], ["Brazil"]),
        (MEDALS, "which nation came in last place?", ["add_row(-1)", "set_answer(Nation)", "execute()"], ["North Korea"]),
        # "<comparative> than <row>": that row's value read off the table, the rows beyond it
        (MEDALS, "how many nations won more gold than north korea?", ["add_condition(Gold, >, 2)", "set_answer(Nation, COUNT)", "execute()"],
         ["2"]),
        # "A or B more" counting rows: the groups' counts compared
        (WINNERS, "who won more titles, psv or ajax?", ["add_group(Winner)", "compare_rows(Count, Winner, PSV, Ajax, DESC)", "execute()"],
         ["Ajax"]),
        (WINNERS, "did ajax win more or less than psv?",
         ["add_group(Winner)", "compare_rows(Count, Winner, Ajax, PSV, DESC, more, less)", "execute()"], ["more"]),
        (DRAFT, "what team comes before hank stein?", ["add_adjacent(Player, Hank Stein, before)", "set_answer(Team)", "execute()"], ["Knicks"]),
        (DRAFT, "who was picked after hank stein?", ["add_adjacent(Player, Hank Stein, after)", "set_answer(Player)", "execute()"], ["Bo Li"]),
        (WINNERS, "which team won the most titles?",
         ["add_group(Winner)", "add_order(Count, DESC)", "set_answer(Winner)", "execute()"], ["Ajax"]),
        (WINNERS, "how many different teams have won?", ["set_answer(Winner, COUNT DISTINCT)", "execute()"], ["3"]),
        (WINNERS, "how many finals were played in january?",
         ["add_part(Date, month)", "add_condition(Date month, =, January)", "set_answer(Year, COUNT)", "execute()"], ["2"]),
        (WINNERS, "which month had the most finals?",
         ["add_part(Date, month)", "add_group(Date month)", "add_order(Count, DESC)", "set_answer(Date month)", "execute()"], ["June"]),
        (SINGLES, "which single had the earliest released date?",
         ["add_part(Released, date)", "add_order(Released date, ASC)", "set_answer(Single)", "execute()"], ["B"]),
        (SINGLES, "what was the last single on the epic label?",
         ["add_condition(Label, =, Epic)", "add_row(-1)", "set_answer(Single)", "execute()"], ["C"]),
        (SINGLES, "what year was the first single released on the epic label?",  # the first by its date, then its year
         ["add_condition(Label, =, Epic)", "add_part(Released, date)", "add_order(Released date, ASC)", "add_part(Released, year)",
          "set_answer(Released year)", "execute()"], ["1999"]),
        # two answer words: the word saying the row asked about (the first, or the one after "compared to") is larger
        (MEDALS, "did south korea win more or less gold than north korea?",
         ["compare_rows(Gold, Nation, South Korea, North Korea, DESC, more, less)", "execute()"], ["more"]),
        (MEDALS, "compared to brazil, north korea won more or fewer silver medals?",
         ["compare_rows(Silver, Nation, North Korea, Brazil, DESC, more, fewer)", "execute()"], ["fewer"]),
        (MEDALS, "was brazil below or above the silver count of south korea?",
         ["compare_rows(Silver, Nation, Brazil, South Korea, DESC, above, below)", "execute()"], ["above"]),
        # a rank's "above" is its smaller number; a height's is its larger
        (MEDALS, "did north korea finish above or below south korea?",
         ["compare_rows(Rank, Nation, North Korea, South Korea, DESC, below, above)", "execute()"], ["below"]),
        (SUMMITS, "is the top of cima bassa higher or lower than piz alto?",
         ["compare_rows(Height (m), Summit, Cima Bassa, Piz Alto, DESC, higher, lower)", "execute()"], ["lower"]),
        # before/after on a column of numbers that orders the rows; a birth year's "older" is its smaller number
        (DRAFT, "was bo li picked before or after ann lee?",
         ["compare_rows(Pick, Player, Bo Li, Ann Lee, DESC, after, before)", "execute()"], ["after"]),
        (PEOPLE, "is bo li older or younger than cy ott?",
         ["compare_rows(Born, Name, Bo Li, Cy Ott, DESC, younger, older)", "execute()"], ["older"]),
    ],
)
def test_the_first_listed_steps_answer_each_shape(table: Table, question: str, steps: list[str], answers: list[str]) -> None:
    assert first_choices(table, question) == (steps, answers)


def test_a_superlative_naming_no_column_orders_by_the_column_it_measures() -> None:
    # "fastest" with no header after it: a Time column's smallest, a Speed column's largest
    assert plan_actions(question_plans(SWIMMERS, "who was the fastest swimmer?")) == [["add_order(Time, ASC)", "set_answer(Name)"]]
    assert plan_actions(question_plans(CARS, "who was the fastest driver?")) == [["add_order(Speed (km/h), DESC)", "set_answer(Driver)"]]
    assert first_choices(CARS, "who was the fastest driver?")[1] == ["Bo Li"]
    # "the fastest time" names its column: not the measured plan (the name is not asked)
    assert ["add_order(Time, ASC)", "set_answer(Name)"] not in plan_actions(question_plans(SWIMMERS, "what was the fastest time?"))


RANKED = Table.from_rows(["Rank", "Country", "Town/Village", "Island"],
                        [["31", "Gabon", "Akrar", "Suduroy"], ["32", "Gambia", "Argir", "Streymoy"], ["33", "Georgia", "Eidi", "Eysturoy"]])


@pytest.mark.parametrize(
    ("question", "steps", "answers"),
    [
        # the anchor named before a neighbour word that ends the question
        ("gabon is ranked 31, what country is ranked next?", ["add_adjacent(Country, Gabon, after)", "set_answer(Country)", "execute()"],
         ["Gambia"]),
        # the anchor's own header between the neighbour word and the cell
        ("which island is listed before the town/village of argir?",
         ["add_adjacent(Town/Village, Argir, before)", "set_answer(Island)", "execute()"], ["Suduroy"]),
        # "next to": the cell beside it, in its own row
        ("what island is next to the town/village argir?", ["add_condition(Town/Village, =, Argir)", "set_answer(Island)", "execute()"],
         ["Streymoy"]),
    ],
)
def test_a_neighbour_word_finds_its_anchor_before_it_or_past_its_header(question: str, steps: list[str], answers: list[str]) -> None:
    assert first_choices(RANKED, question) == (steps, answers)


def test_shortest_and_longest_naming_no_column_order_by_the_length() -> None:
    songs = Table.from_rows(["#", "Title", "Length"], [["1", "Mimpi", "4:30"], ["2", "Bintang", ""], ["3", "Aku", "3:39"], ["4", "Kita", "10:02"]])
    assert first_choices(songs, "what song is the shortest?") == (["add_order(Length, ASC)", "set_answer(Title)", "execute()"], ["Aku"])
    assert first_choices(songs, "which song is the longest?")[1] == ["Kita"]  # by the duration, not the text "4:30" > "10:02"


def test_the_fastest_time_orders_the_times_as_durations() -> None:
    laps = Table.from_rows(["Driver", "Time"], [["Ann Lee", "10:02.1"], ["Bo Li", "9:59.8"], ["Cy Ott", "1:01:03"]])
    assert first_choices(laps, "what was the fastest time?") == (["add_order(Time, ASC)", "set_answer(Time)", "execute()"], ["9:59.8"])
    assert first_choices(laps, "who had the slowest time?")[1] == ["Cy Ott"]  # not by the minutes, its first number


def test_top_n_is_a_rank_condition_after_the_grounded_ones() -> None:
    question = "who was the only contestant from switzerland to place in the top 50?"
    listed = [s.action for s in table_next_steps(TableEnvironment(RACE, question=question))]
    assert listed[0] == "add_condition(Nationality, =, Switzerland)"
    assert "add_condition(Rank, <=, 50)" in listed
    taken, answers = first_choices(RACE, question)
    assert taken[:2] == ["add_condition(Nationality, =, Switzerland)", "add_condition(Rank, <=, 50)"] and answers == ["Daniel Böltz"]
    assert ["add_condition(Rank, <=, 10)"] in plan_actions(question_plans(RACE, "how many athletes finished in the top ten?"))
    assert not any("<=" in a for p in plan_actions(question_plans(RACE, "who finished first?")) for a in p)


def test_a_plan_replaces_the_conditions_it_reads() -> None:
    env = TableEnvironment(LAKES, question="which is deeper, lake tuz or lake palas tuzla?")
    listed = [s.action for s in table_next_steps(env)]
    assert listed[0].startswith("compare_rows(") and not any(a.startswith("add_condition(Name") for a in listed)
    # a yes/no question asks which, not what: no neighbour; offering two words, its answer is one of them
    assert plan_actions(question_plans(DRAFT, "was ann lee picked before or after hank stein?")) == [
        ["compare_rows(Pick, Player, Ann Lee, Hank Stein, DESC, after, before)"]]
    assert plan_actions(question_plans(DRAFT, "is hank stein listed before bo li?")) == []


def test_two_answer_words_need_two_rows_and_a_column_of_numbers() -> None:
    env = TableEnvironment(MEDALS, question="did south korea win more or less gold than north korea?")
    listed = [s.action for s in table_next_steps(env)]
    assert listed[0].startswith("compare_rows(") and not any(a.startswith("add_condition(Nation") for a in listed)
    # the table's own order is not a column to compare ("listed above or below")
    assert plan_actions(question_plans(DRAFT, "is bo li listed above or below ann lee?")) == []
    # a name on several rows names a group, not one row to compare: their numbers of rows are compared
    assert plan_actions(question_plans(WINNERS, "did ajax win more or less than psv?")) == [
        ["add_group(Winner)", "compare_rows(Count, Winner, Ajax, PSV, DESC, more, less)"]]
    # before/after of a column that is not numbers (dates written as text) is not a comparison of numbers
    assert plan_actions(question_plans(SINGLES, "was a released before or after b?")) == []
    # two words that are not opposites offer no answer
    assert plan_actions(question_plans(MEDALS, "did south korea win more or after north korea?")) == []
    # equal values: no word is listed (neither is true)
    tied = Table.from_rows(["Nation", "Gold"], [["Peru", "2"], ["Chile", "2"], ["Cuba", "5"]])
    assert plan_actions(question_plans(tied, "did peru win more or less gold than chile?")) == [
        ["compare_rows(Gold, Nation, Peru, Chile, DESC, more, less)"]]
    assert not any(s.action.startswith("compare_rows(") for s in table_next_steps(TableEnvironment(tied, question="did peru win more or less gold than chile?")))


def test_the_prompts_show_the_cues() -> None:
    assert cue_hints("what team comes before hank stein?") == "'before' (the row before or after another: add_adjacent)"
    assert cue_hints("was a picked before or after b?") == "'before or after' (one of two words: compare_rows with if_first, if_second)"
    assert "COUNT DISTINCT" in cue_hints("how many different teams?") and cue_hints("who won?") == ""


def test_a_number_written_as_a_word_before_a_column_of_numbers_is_its_value() -> None:
    medals = Table.from_rows(["Nation", "Gold", "Bronze"], [["Peru", "1", "0"], ["Chile", "0", "2"], ["Cuba", "2", "0"]])
    assert first_choices(medals, "how many nations earned no bronze medals?") == (
        ["add_condition(Bronze, =, 0)", "set_answer(Nation, COUNT)", "execute()"], ["2"])
    race = Table.from_rows(["Pos", "Driver", "Points"], [["1", "Ann Lee", "9"], ["2", "Bo Li", "1"], ["3", "Cy Ott", "–"]])
    assert first_choices(race, "who is the only driver to get one point in the race?") == (
        ["add_condition(Points, =, 1)", "set_answer(Driver)", "execute()"], ["Bo Li"])


def test_the_most_of_a_noun_no_column_names_orders_by_the_total() -> None:
    medals = Table.from_rows(["Rank", "Nation", "Gold", "Silver", "Total"],
                             [["1", "Peru", "3", "1", "4"], ["2", "Chile", "1", "5", "6"], ["3", "Cuba", "1", "0", "1"]])
    assert first_choices(medals, "what country won the most medals?") == (["add_order(Total, DESC)", "set_answer(Nation)", "execute()"], ["Chile"])
    assert ["add_order(Total, DESC)", "set_answer(Nation)"] not in plan_actions(question_plans(medals, "which nation won the most gold medals?"))


def test_an_argmax_orders_by_the_strongest_header_named_after_the_cue() -> None:
    firms = Table.from_rows(["#", "Employer", "# of Employees"], [["1", "Medline", "1,200"], ["2", "Washburn", "300"], ["3", "Abbott", "900"]])
    taken, answers = first_choices(firms, "which employer had the least number of employees?")
    assert taken[0] == "add_order(# of Employees, ASC)" and answers == ["Washburn"]  # not '#', which "number" names too


def test_a_name_written_after_at_or_vs_in_its_cells_is_the_part_after_the_first_space() -> None:
    season = Table.from_rows(["Week", "Opponent", "Result"],
                             [["1", "at Edmonton Eskimos", "W"], ["2", "vs. BC Lions", "L"], ["3", "vs. Edmonton Eskimos", "W"], ["4", "at BC Lions", "W"]])
    assert first_choices(season, "how many times was the opponent the edmonton eskimos?") == (
        ['add_part(Opponent, after, " ")', "add_condition(Opponent after, =, Edmonton Eskimos)", "set_answer(Opponent, COUNT)", "execute()"], ["2"])


def test_a_name_several_cells_write_before_a_parenthesis_is_the_part_before_it() -> None:
    finals = Table.from_rows(["Year", "Winner", "Runner-up"],
                             [["2005", "Russia (40 pts)", "Sweden (35 pts)"], ["2006", "Poland (38 pts)", "Sweden (31 pts)"],
                              ["2007", "Russia (39 pts)", "Denmark (30 pts)"], ["2009", "Russia (39 pts)", "Sweden (30 pts)"]])
    assert first_choices(finals, "how many times was sweden the runner up?") == (
        ['add_part(Runner-up, before, "(")', "add_condition(Runner-up before, =, Sweden)", "set_answer(Runner-up, COUNT)", "execute()"], ["3"])
    # one cell of that name: the plain condition on it
    assert first_choices(finals, "which year was denmark the runner up?")[0][0] == 'add_condition(Runner-up, =, "Denmark (30 pts)")'


def test_a_people_names_its_country_and_which_asks_for_the_row_of_the_fastest_time() -> None:
    walk = Table.from_rows(["Rank", "Athlete", "Nationality", "Time"],
                           [["1", "Ann Lee", "Kenya", "1:19:50"], ["2", "Wang Zhen", "China", "1:19:56"], ["3", "Li Bo", "China", "1:20:01"]])
    assert first_choices(walk, "which chinese athlete had the fastest time?") == (
        ["add_condition(Nationality, =, China)", "add_order(Time, ASC)", "set_answer(Athlete)", "execute()"], ["Wang Zhen"])
    assert first_choices(walk, "how many kenyans finished?")[1] == ["1"]


def test_a_surname_alone_names_the_one_person_of_that_name() -> None:
    curling = Table.from_rows(["Season", "Skip", "Third"],
                              [["2001–02", "Mirjam Ott", "Binia Beeli"], ["2002–03", "Luzia Ebnöther", "Carmen Küng"], ["2003–04", "Mirjam Ott", "Carmen Küng"]])
    assert first_choices(curling, "how many seasons has ott been the skip?") == (
        ["add_condition(Skip, =, Mirjam Ott)", "set_answer(Season, COUNT)", "execute()"], ["2"])


def test_a_title_the_cells_write_in_quotes_is_named_without_them() -> None:
    songs = Table.from_rows(["Title", "Year"], [['"Cheat on You"', "2008"], ['"Dance Bailalo"', "2009"], ['"The Return" (Part 1)', "2010"]])
    assert first_choices(songs, "what year is next to the title cheat on you?") == (
        ['add_condition(Title, =, \'"Cheat on You"\')', "set_answer(Year)", "execute()"], ["2008"])
    assert first_choices(songs, "what year was the return released?")[1] == ["2010"]


def test_a_number_after_a_comparison_is_compared_not_a_cell_and_the_nearest_cue_compares_it() -> None:
    scorers = Table.from_rows(["Player", "Nation", "Points"],
                              [["Ann Lee", "England", "15"], ["Bo Li", "England", "22"], ["Cy Ott", "Wales", "30"], ["Di Fox", "England", "16"]])
    assert first_choices(scorers, "how many scorers from england scored above 15 points?") == (
        ["add_condition(Nation, =, England)", "add_condition(Points, >, 15)", "set_answer(Points, COUNT)", "execute()"], ["2"])


def test_holding_the_most_orders_by_the_capacity() -> None:
    stadiums = Table.from_rows(["#", "Stadium", "Capacity", "City"],
                               [["1", "Wembley Stadium", "90,000", "London"], ["2", "AT&T Stadium", "80,000", "Arlington"], ["3", "Millennium Stadium", "74,500", "Cardiff"]])
    assert first_choices(stadiums, "which stadium holds the most people?") == (["add_order(Capacity, DESC)", "set_answer(Stadium)", "execute()"], ["Wembley Stadium"])
    assert first_choices(stadiums, "which stadium can seat the fewest fans?")[1] == ["Millennium Stadium"]


def test_a_year_placed_in_time_compares_a_column_of_years() -> None:
    charts = Table.from_rows(["Year", "US Billboard", "US Cash Box", "Title"],
                             [["1972", "86", "90", "A"], ["1977", "35", "18", "B"], ["1979", "35", "20", "C"]])
    assert first_choices(charts, "What is the US cash box before 1978 with a US billboard of 35?") == (
        ["add_condition(US Billboard, =, 35)", "add_condition(Year, <, 1978)", "set_answer(US Cash Box)", "execute()"], ["18"])


def test_a_number_of_what_no_column_names_is_the_total() -> None:
    medals = Table.from_rows(["Rank", "Nation", "Gold", "Silver", "Total"],
                             [["1", "Peru", "3", "1", "4"], ["2", "Chile", "1", "2", "3"], ["3", "Cuba", "1", "0", "1"], ["4", "Fiji", "0", "1", "1"]])
    assert first_choices(medals, "which nation was the only one to receive 3 medals?") == (
        ["add_condition(Total, =, 3)", "set_answer(Nation)", "execute()"], ["Chile"])
    assert first_choices(medals, "what number of nations received 1 medal?")[1] == ["2"]


def test_which_month_had_the_most_groups_the_rows_by_month() -> None:
    shows = Table.from_rows(["Episode", "Performer", "Air Date"],
                            [["1", "Ann", "3 February 2010"], ["2", "Bo", "10 February 2010"], ["3", "Cy", "2 March 2010"],
                             ["4", "Di", "9 June 2010"], ["5", "Ed", "16 March 2010"], ["6", "Fay", "23 February 2010"]])
    assert first_choices(shows, "which month had the most air dates?") == (
        ["add_part(Air Date, month)", "add_group(Air Date month)", "add_order(Count, DESC)", "set_answer(Air Date month)", "execute()"], ["February"])
    # a column numbering the rows is counted, not measured
    assert first_choices(shows, "which month has the least number of episodes?")[1] == ["June"]


def test_a_column_of_measures_rising_down_the_table_is_still_measured() -> None:
    route = Table.from_rows(["Location", "km"], [["Kelsterbach", "3.1"], ["Kelsterbach", "4.5"], ["Sachsenhausen", "9.8"]])
    assert first_choices(route, "which location has the most km?") == (["add_order(km, DESC)", "set_answer(Location)", "execute()"], ["Sachsenhausen"])


def test_a_counts_own_number_over_several_rows_is_their_sum() -> None:
    career = Table.from_rows(["Season", "Team", "Poles"], [["1990", "Ajax", "1"], ["1991", "PSV", "9"], ["1992", "PSV", "2"]])
    assert first_choices(career, "what is the number of poles that daly has won in his career?") == (
        ["set_answer(Poles, SUM)", "execute()"], ["12"])
    assert first_choices(career, "how many poles did he win in 1991?")[1] == ["9"]  # one row: its number


def test_a_short_name_of_a_row_is_a_condition() -> None:
    pageant = Table.from_rows(["State", "Swimsuit", "Interview"],
                              [["Iowa", "9.267", "9.651"], ["Ohio", "9.226", "9.309"], ["Texas", "9.221", "9.600"], ["Utah", "9.010", "9.487"], ["Maine", "8.9", "9.1"]])
    assert first_choices(pageant, "how many points did iowa score in the swimsuit round?") == (
        ["add_condition(State, =, Iowa)", "set_answer(Swimsuit)", "execute()"], ["9.267"])


def test_in_the_top_n_on_a_rank_column_with_a_few_non_numbers() -> None:
    race = Table.from_rows(["Rank", "Athlete", "Nationality"],
                           [["1", "Moses Tanui", "Kenya"], ["2", "Ann Lee", "Chile"], ["48", "Daniel Böltz", "Switzerland"], ["60", "Urs Kolb", "Switzerland"],
                            ["61", "Bo Li", "Chile"], ["DNF", "Joe Fox", "Kenya"]])
    assert first_choices(race, "who was the only contestant from switzerland to place in the top 50?") == (
        ["add_condition(Nationality, =, Switzerland)", "add_condition(Rank, <=, 50)", "set_answer(Athlete)", "execute()"], ["Daniel Böltz"])


def test_the_total_amount_of_times_counts_rows() -> None:
    chart = Table.from_rows(["Date", "Country", "Song"], [["March 11", "Italy", "A"], ["May 13", "Spain", "B"], ["May 30", "Italy", "C"]])
    assert first_choices(chart, "what are the total amount of times italy appears on this chart?")[1] == ["2"]


def test_a_which_question_naming_no_column_answers_a_column_of_names_not_of_numbers() -> None:
    shows = Table.from_rows(["#", "Show", "Opening date"], [["1.", "Cats", "May 11, 1982"], ["2.", "Lightnin'", "August 26, 1918"], ["3.", "Evita", "June 21, 1978"]])
    assert first_choices(shows, "which show had the earliest opening date?")[1] == ["Lightnin'"]


def test_a_when_question_asks_for_the_date_column() -> None:
    games = Table.from_rows(["#", "Date", "Venue", "Competition"],
                            [["1.", "1995-08-06", "Paris", "Friendly"], ["2.", "1997-03-25", "Barcelona", "World Cup qualifier"], ["3.", "1997-06-22", "Oslo", "World Cup qualifier"]])
    assert first_choices(games, "when did they play in barcelona?") == (["add_condition(Venue, =, Barcelona)", "set_answer(Date)", "execute()"], ["1997-03-25"])


@pytest.mark.parametrize("question", [
    "was single c released on epic?",  # no options: a yes/no question
    "were epic or sony the labels?",  # the options are the question's only cells: nothing names the row
    "was single c released on epic or sony more recently?",  # a comparative: a comparison, not a choice
])
def test_no_choice_without_options_and_a_row(question: str) -> None:
    assert "choice" not in [p.shape for p in question_plans(SINGLES, question)]


def test_a_comparison_than_a_row_reads_the_row_s_value() -> None:
    taken, answers = first_choices(LAKES, "how many lakes have an area greater than lake palas tuzla?")
    assert taken[0] == "add_condition(Area (km²), >, 20)" and answers == ["2"]
    assert "than" not in [p.shape for p in question_plans(LAKES, "how many lakes have an area greater than 20?")]  # a number: a plain condition


def test_what_was_the_year_of_asks_for_the_year_of_a_date() -> None:
    plans = plan_actions(question_plans(SINGLES, "what was the year of the last single?"))
    assert ["add_part(Released, year)", "set_answer(Released year)"] in plans


SONGS = Table.from_rows(["#", "Song", "Length"],
                        [["1", "Rain", "5:23"], ["2", "Dust", "3:02"], ["3", "Salt", "4:41"], ["4", "Ash", "6:05"], ["5", "Iron", "2:58"]])
HEATS = Table.from_rows(["Rank", "Skater", "Country", "Time"],
                        [["1", "Ann Lee", "Canada", "1:28.40"], ["2", "Bo Li", "China", "1:29.95"], ["3", "Cy Ott", "Canada", "1:31.02"]])
ECLIPSES = Table.from_rows(["Member", "Time (UTC)", "Duration (min:sec)"],
                           [["1", "14:55:43", ""], ["2", "21:42:07", "3m 37s"], ["3", "4:22:21", "4m 16s"], ["4", "9:02:11", "4m 36s"]])
MARATHON = Table.from_rows(["Rank", "Runner", "Time"], [["1", "Ann Lee", "2:08:11"], ["2", "Bo Li", "2:11:40"], ["3", "Cy Ott", "2:16:02"]])


@pytest.mark.parametrize(
    "table, question, plan, answers",
    [
        (SONGS, "how many songs were over five minutes?", ["add_part(Length, seconds)", "add_condition(Length seconds, >, 300)"], ["2"]),
        (SONGS, "how many songs last for more than three minutes?", ["add_part(Length, seconds)", "add_condition(Length seconds, >, 180)"],
         ["4"]),  # "last" is a verb of duration here, no order
        (SONGS, "how many songs did not last longer than 3 minutes?", ["add_part(Length, seconds)", "add_condition(Length seconds, <=, 180)"],
         ["1"]),
        (SONGS, "which song was at least 4:41 long?", ["add_part(Length, seconds)", "add_condition(Length seconds, >=, 281)"],
         ["Rain", "Salt", "Ash"]),  # 4:41 is a time, not the number 4 on #
        (HEATS, "how many canadian skaters finished at less than 1:30?", ["add_part(Time, seconds)", "add_condition(Time seconds, <, 90)"],
         ["1"]),
        (ECLIPSES, "how many eclipses lasted longer than 4 minutes?",  # the duration, not the time of day; "4m 16s" is a time
         ["add_part(Duration (min:sec), seconds)", "add_condition(Duration (min:sec) seconds, >, 240)"], ["2"]),
        (MARATHON, "how many runners finished in under 2 hours 10 minutes?", ["add_part(Time, seconds)", "add_condition(Time seconds, <, 7800)"],
         ["1"]),
        (MARATHON, "how many runners finished under 2:12:00?", ["add_part(Time, seconds)", "add_condition(Time seconds, <, 7920)"], ["2"]),
    ],
)
def test_a_duration_compared_with_a_column_of_times_compares_its_seconds(
    table: Table, question: str, plan: list[str], answers: list[str] | None,
) -> None:
    plans = [p for p in plan_actions(question_plans(table, question)) if any("seconds" in a for a in p)]
    assert plans == ([plan] if plan else [])
    if answers is not None:
        steps, got = first_choices(table, question)
        assert steps[: len(plan)] == plan and got == answers, steps


def test_counts_of_two_values_compare_and_a_tie_has_no_answer() -> None:
    venues = Table.from_rows(["Venue", "Year"], [["Lyon", "2001"], ["Paris", "2001"], ["lyon", "2002"], ["Paris", "2002"], ["Rome", "2003"]])
    grouped = venues.query().add_group("Venue")
    run = venues.executor().execute
    assert [a.value for a in run(grouped.compare_rows("Count", "Venue", "Rome", "Paris", "DESC"))] == ["Paris"]
    assert [a.value for a in run(grouped.compare_rows("Count", "Venue", "Rome", "Paris", "DESC", ("more", "less")))] == ["less"]
    assert list(run(grouped.compare_rows("Count", "Venue", "Paris", "Lyon", "DESC"))) == []  # 2 and 2 (case aside): a tie
    assert list(run(grouped.compare_rows("Count", "Venue", "Paris", "Oslo", "DESC"))) == []  # a value no row holds
    # "more goals" measures a column: no count comparison
    assert "count_compare" not in [p.shape for p in question_plans(LAKES, "which has more depth, lake tuz or lake van?")]
