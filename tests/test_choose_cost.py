"""Choose mode's cost: candidate steps checked in batched KB queries, with the verdicts of one trial each (issue 22, item 5).

The batch (:class:`pyql.environment.batch_trials.StepChecker`) must say of every
candidate what its trial says (runs or fails), on every state of the gold
chains of the 37 demo questions and of the Wikidata demo's MarkQA programs,
on the embedded engine and on a real Virtuoso; a step it keeps must run; and
an enumeration costs a bounded number of KB queries, not one per candidate.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agent.methods.choose import _seen_values, auto_look, enumerate_choices
from correction import Eraser
from pyql.environment.batch_trials import BATCHED_ACTIONS, StepChecker, dry_run, trial
from pyql.errors import PyQLError
from pyql.kb import KB, demo_kb_path, probes
from pyql.environment.next_steps import next_steps
from pyql.kb.observation import BoundedRows, Observation
from pyql.environment.sparql import SparqlEnvironment

ROOT = Path(__file__).resolve().parent.parent
DEMO = [json.loads(line) for line in (ROOT / "pyql" / "data" / "demo_questions.jsonl").read_text().splitlines() if line.strip()]
WIKIDATA = [json.loads(line) for line in (ROOT / "pyql" / "data" / "wikidata_questions.jsonl").read_text().splitlines() if line.strip()]
DEMO_GRAPH = "http://pyql.test/choose-cost"


def _markqa() -> ModuleType:
    spec = importlib.util.spec_from_file_location("markqa_choose", ROOT / "benchmarks" / "markqa_choose.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mismatches(env: SparqlEnvironment) -> list[tuple[str, bool, bool]]:
    """Every candidate of this state whose batch verdict differs from its trial's: (action, batch, trial)."""
    candidates = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look"]
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(candidates)
    out = []
    for action in candidates:
        batched = checker.verdict(action) is not None
        tried = trial(env, action).ok
        if batched != tried:
            out.append((action, batched, tried))
    return out


def _walk_demo(kb: Any, question: dict) -> tuple[int, list[tuple[str, bool, bool]]]:
    """The states of one demo question's gold chain: how many, and the mismatches found on them."""
    env = SparqlEnvironment(kb, question["question"], entities=question["entities"], analyzer=Eraser())
    states, wrong = 0, []
    for line in question["actions"]:
        if not line.startswith("get_relation"):
            states += 1
            wrong += _mismatches(env)
        record = env.step(line)
        assert record.ok, (question["id"], line, record.observation)
    return states, wrong


@pytest.fixture(scope="module")
def demo() -> KB:
    return KB.open("oxigraph:demo")


@pytest.mark.parametrize("question", DEMO, ids=[q["id"] for q in DEMO])
def test_batch_verdicts_equal_trials_on_demo_gold_chains(demo: KB, question: dict) -> None:
    states, wrong = _walk_demo(demo, question)
    assert states >= 1
    assert not wrong, wrong


@pytest.mark.parametrize("item", WIKIDATA, ids=[q["id"] for q in WIKIDATA])
def test_batch_verdicts_equal_trials_on_wikidata_programs(item: dict) -> None:
    """MarkQA's quantity and arithmetic steps stay on their trials; the rest is batched, with the same verdicts."""
    markqa = _markqa()
    kb = KB.open(str(ROOT / "pyql" / "data" / "wikidata_demo.ttl"), profile="wikidata")
    try:
        gold = markqa.program_to_query(item["markqa"], kb.profile)
    except PyQLError:
        pytest.skip("a program the action language cannot read (benchmarks/markqa_choose.py lists them)")
    env = SparqlEnvironment(kb, item["question"], entities=item.get("entities") or {}, analyzer=Eraser())
    for step in gold.steps:
        auto_look(env)
        assert not _mismatches(env)
        try:
            line = markqa.step_action(step, kb.profile)
        except (ValueError, IndexError):
            return
        if not env.step(line).ok:
            return


def test_every_offered_step_runs(demo: KB) -> None:
    """Along q05's chain (an argmax after two hops), each listed step runs when it is taken."""
    question = next(q for q in DEMO if q["id"] == "q05")
    env = SparqlEnvironment(demo, question["question"], entities=question["entities"], analyzer=Eraser())
    offered = 0
    for line in question["actions"]:
        auto_look(env)
        for step in enumerate_choices(env, limit=12):
            before = len(env.history)
            record = trial(env, step.action)
            assert record.ok, (step.action, record.observation)
            assert len(env.history) == before
            offered += 1
        env.step(line)
        if env.done:
            break
    assert offered >= 10


def test_one_enumeration_is_a_few_queries_not_one_per_candidate(demo: KB) -> None:
    env = _q05_after_first_hop(demo)
    before = demo.stats.queries
    batched = [s.action for s in next_steps(env, limit=36)]
    batch_queries = demo.stats.queries - before
    before = demo.stats.queries
    tried = [s.action for s in next_steps(env, limit=36, batch=False)]
    trial_queries = demo.stats.queries - before
    assert batched == tried  # the same list, in the same order
    assert len(batched) >= 10
    assert batch_queries <= 3 < trial_queries, (batch_queries, trial_queries)


def test_dry_run_sends_nothing_and_leaves_the_episode(demo: KB) -> None:
    env = SparqlEnvironment(demo, "what category is tropical storm rachel?", entities={"Rachel": "m.0crbvqz"}, analyzer=Eraser())
    env.step("get_relation(m.0crbvqz)")
    before, history = demo.stats.queries, len(env.history)
    record, query = dry_run(env, "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)")
    assert record.ok and query is not None and [str(v) for v in query.variables] == ["?c"]
    assert demo.stats.queries == before and len(env.history) == history and not env.query.steps
    record, query = dry_run(env, "add_filter(?nope, >, 3)")  # ERASER stops it before it runs: no query to check
    assert not record.ok and query is None


def test_batch_queries_are_bounded_per_candidate() -> None:
    from pyql.builder.query import Query

    base = Query("freebase").add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w")
    text, observed = probes.candidates_query([base, base.add_max("?w"), base.add_compare("?w", ">", 100)], rows=4)
    assert text.count("} LIMIT 4") == 2 and text.count("LIMIT 1\n") >= 1
    assert [len(v) for v in observed] == [2, 2, 0]
    with pytest.raises(PyQLError, match="at least one query"):
        probes.candidates_query([])


def test_an_engine_that_rejects_the_batch_falls_back_to_trials(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    from pyql.errors import EngineError

    env = SparqlEnvironment(demo, "what category is tropical storm rachel?", entities={"Rachel": "m.0crbvqz"}, analyzer=Eraser())
    env.step("get_relation(m.0crbvqz)")
    expected = [s.action for s in next_steps(env, limit=12)]
    real = demo.select

    def picky(sparql: str) -> list:
        if probes.CANDIDATE_VAR in sparql:
            raise EngineError("the engine rejected the query: too long")
        return real(sparql)

    monkeypatch.setattr(demo, "select", picky)
    assert [s.action for s in next_steps(env, limit=12)] == expected


def test_batched_actions_are_known_actions() -> None:
    from pyql.environment.sparql_actions import SparqlActions

    assert BATCHED_ACTIONS <= set(SparqlActions().names)


@pytest.mark.slow
@pytest.mark.virtuoso
def test_batch_verdicts_equal_trials_on_virtuoso(virtuoso_server: Any) -> None:
    """The batched UNION runs on Virtuoso 7 and agrees with the trials there, on every demo gold chain."""
    from pyql.kb.endpoint_backend import EndpointKB

    virtuoso_server.load_turtle(demo_kb_path(), DEMO_GRAPH)
    kb = EndpointKB(virtuoso_server.endpoint, default_graph=DEMO_GRAPH, timeout=60)
    wrong = []
    for question in DEMO:
        wrong += [(question["id"], *w) for w in _walk_demo(kb, question)[1]]
    assert not wrong, wrong


def _look_mismatches(kb: Any, question: dict) -> tuple[int, list[tuple[str, str]]]:
    """On every state of a gold chain, each variable's relations read from the values the observation showed
    (what ``auto_look`` does) against those read with the query: how many were read so, and the differences."""
    env = SparqlEnvironment(kb, question["question"], entities=question["entities"], analyzer=Eraser())
    used, wrong = 0, []
    for line in question["actions"]:
        for var in env.query.variables if env.query.steps else ():
            values = _seen_values(env, str(var))
            if values is None:
                continue
            used += 1
            seen = kb.relations(var, env.query, reuse=BoundedRows(env.query.scope.block, (var,), tuple({var.name: v} for v in values)))
            read = kb.relations(var, env.query)
            if (set(seen.forward), set(seen.backward), seen.truncated) != (set(read.forward), set(read.backward), read.truncated):
                wrong.append((question["id"], f"{line}: {var}: {seen} != {read}"))
        env.step(line)
    return used, wrong


def test_looks_from_the_observation_equal_the_looks_through_the_query(demo: KB) -> None:
    """``auto_look`` reads a variable's relations from the values its observation showed, not through the query again."""
    results = [_look_mismatches(demo, question) for question in DEMO]
    assert sum(used for used, _ in results) >= 37
    assert not [w for _, wrong in results for w in wrong]


@pytest.mark.virtuoso
def test_looks_from_the_observation_equal_the_looks_through_the_query_on_virtuoso(virtuoso_server: Any) -> None:
    from pyql.kb.endpoint_backend import EndpointKB

    virtuoso_server.load_turtle(demo_kb_path(), DEMO_GRAPH)
    kb = EndpointKB(virtuoso_server.endpoint, default_graph=DEMO_GRAPH, timeout=60)
    assert not [w for question in DEMO for w in _look_mismatches(kb, question)[1]]


def _q05_after_first_hop(demo: KB) -> SparqlEnvironment:
    question = next(q for q in DEMO if q["id"] == "q05")
    env = SparqlEnvironment(demo, question["question"], entities=question["entities"], analyzer=Eraser())
    auto_look(env)
    env.step(next(line for line in question["actions"] if line.startswith("add_fact")))
    auto_look(env)
    return env


def test_facts_to_a_fresh_variable_are_checked_in_one_values_pattern(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """The facts that only add a relation are grouped (no probe of their own), and their verdicts are the trials'."""
    from pyql.environment.batch_trials import fact_extension

    env = _q05_after_first_hop(demo)
    facts = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind == "fact"]
    grouped = [a for a in facts if fact_extension(env.query, dry_run(env, a)[1]) is not None]
    assert len(grouped) >= 4
    sent: list[str] = []
    real = demo.select
    monkeypatch.setattr(demo, "select", lambda text: (sent.append(text), real(text))[1])
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(grouped)
    batches = [t for t in sent if probes.CANDIDATE_VAR in t]
    assert len(batches) == 1 and "VALUES (?__candidate ?__r)" in batches[0]
    assert batches[0].count(f"LIMIT {probes.CANDIDATE_ROWS}") == 0  # no probe per fact
    monkeypatch.setattr(demo, "select", real)
    for action in grouped:
        assert (checker.verdict(action) is not None) == trial(env, action).ok, action


def test_answers_and_counts_are_decided_from_the_observation_without_a_query(demo: KB) -> None:
    """set_answer and add_count need no check query: the current observation's exact counts and values decide them."""
    env = _q05_after_first_hop(demo)
    variables = [str(v) for v in env.query.variables]
    steps = [f"set_answer({v})" for v in variables] + [f"add_count({v}, ?number)" for v in variables]
    checker = StepChecker(env, variables)
    before = demo.stats.queries
    checker.check(steps)
    assert demo.stats.queries == before
    assert all(a in checker._verdicts for a in steps if a.startswith("add_count"))
    for action in steps:
        tried = trial(env, action)
        assert (checker.verdict(action) is not None) == tried.ok, action
        if action.startswith("add_count"):
            assert checker.verdict(action).preview == f"?number = {tried.result.variables[0].values[0].display()}"


def test_a_cut_window_leaves_empty_facts_to_their_trials(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the facts' rows were cut, a fact without rows is not declared empty: its trial decides."""
    import pyql.environment.batch_trials as batch_trials

    env = _q05_after_first_hop(demo)
    facts = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind == "fact"]
    monkeypatch.setattr(batch_trials, "FACT_ROWS", 0)  # every group's rows count as cut
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(facts)
    undecided = [a for a in facts if a not in checker._verdicts]
    assert undecided
    for action in facts:
        assert (checker.verdict(action) is not None) == trial(env, action).ok, action


def test_trial_switches_describe_quantities_off_on_a_table_too() -> None:
    from pyql_sql import Table
    from pyql_sql.environment import TableEnvironment

    env = TableEnvironment(Table.from_rows(["Game", "Opponent"], [["6", "Athlone Town"]]), question="which game?")
    assert env.describe_quantities is True
    assert trial(env, "add_condition(Opponent, =, Athlone Town)").ok
    assert env.describe_quantities is True and not env.history


def _sent_batches(demo: KB, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The check queries the KB is sent from now on (its other queries run as they did)."""
    sent: list[str] = []
    real = demo.select
    monkeypatch.setattr(demo, "select", lambda text: (sent.append(text), real(text))[1])
    return sent


def _demo_after(demo: KB, qid: str, steps: int) -> SparqlEnvironment:
    question = next(q for q in DEMO if q["id"] == qid)
    env = SparqlEnvironment(demo, question["question"], entities=question["entities"], analyzer=Eraser())
    for line in question["actions"][:steps]:
        auto_look(env)
        assert env.step(line).ok, line
    auto_look(env)
    return env


@pytest.mark.parametrize("qid, steps", [("q04", 6), ("q19", 6)])
def test_filters_type_constraints_and_answers_share_the_facts_window(demo: KB, monkeypatch: pytest.MonkeyPatch, qid: str, steps: int) -> None:
    """Type constraints, filters and a set_answer on another variable are pattern extensions: checked in the facts'
    window (no probe of their own, the current query's pattern not repeated), with the trials' verdicts."""
    from pyql.environment.batch_trials import PatternExtension, pattern_extension

    env = _demo_after(demo, qid, steps)  # q04 after its office-holder fact; q19 after set_answer(?cyclone)
    if qid == "q04":
        seen = next(r.result for r in reversed(env.history) if isinstance(r.result, Observation)).get("?governor")
        made = [f"add_filter(?governor, !=, {seen.values[0].short or seen.values[0].display()})"]
    else:
        made = ["set_answer(?pressure)"]
    candidates = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look"] + made
    extending = [a for a in candidates if isinstance(pattern_extension(env.query, dry_run(env, a)[1] or env.query), PatternExtension)]
    assert made[0] in extending and (qid != "q04" or "add_type_constrain" in {a.split("(")[0] for a in extending}), extending
    sent = _sent_batches(demo, monkeypatch)
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(extending)
    batches = [t for t in sent if probes.CANDIDATE_VAR in t]
    assert len(batches) == 1 and f"SELECT (0 AS ?{probes.CANDIDATE_VAR})" not in batches[0]  # no probe of their own
    core_line = next(line.strip() for line in env.query.scope.block.pattern(env.query.profile).splitlines() if line.endswith(" ."))
    assert core_line not in batches[0]  # every row was seen: the window is a VALUES block, the query is not compiled
    undecided = [a for a in extending if a not in checker._verdicts]
    assert not undecided, undecided
    monkeypatch.undo()
    for action in extending:
        assert (checker.verdict(action) is not None) == trial(env, action).ok, action


def test_an_argmax_whose_row_the_observation_shows_needs_no_query(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """add_max/add_min over numbers (or dates of one type) all seen: decided from the observation, the trial's row."""
    question = next(q for q in DEMO if q["id"] == "q19")
    env = SparqlEnvironment(demo, question["question"], entities=question["entities"], analyzer=Eraser())
    for line in question["actions"]:
        if line.startswith(("add_max", "add_min")):
            break
        env.step(line)
    variable = line[line.index("(") + 1 : -1]
    steps = [f"add_max({variable})", f"add_min({variable})"]
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    sent = _sent_batches(demo, monkeypatch)
    checker.check(steps)
    assert not [t for t in sent if probes.CANDIDATE_VAR in t]  # no check query (ERASER's rules may read the KB)
    monkeypatch.undo()
    for action in steps:
        tried = trial(env, action)
        assert tried.ok and checker.verdict(action) is not None
        values = {f"{v.variable} = {v.values[0].label or v.values[0].display()}" for v in tried.result.variables}
        assert set(checker.verdict(action).preview.split("; ")) == values, (action, checker.verdict(action).preview, values)


def test_an_argmax_with_ties_or_unseen_values_is_left_to_the_batch() -> None:
    """The observation decides an argmax only when it shows every row and one extreme: ties and cut lists are not."""
    from pyql.environment.batch_trials import _extreme_row
    from pyql.kb.observation import Observation, Value, VariableValues
    from pyql.builder.query import Query
    from pyql.builder.terms import XSD, IRI, Literal, Variable

    base = Query("freebase").add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w")
    n = lambda k: Value(Literal(str(k), XSD + "integer"))  # noqa: E731
    c = VariableValues(Variable("c"), (Value(IRI("http://x/a")),), 1)
    tied = Observation((c, VariableValues(Variable("w"), (n(5), n(5)), 2)))
    cut = Observation((c, VariableValues(Variable("w"), (n(5), n(9)), 3)))
    words = Observation((c, VariableValues(Variable("w"), (Value(Literal("x")), n(9)), 2)))
    for seen in (tied, cut, words):
        assert _extreme_row(seen, "add_max(?w)", base, base.add_max("?w")) is None
    assert _extreme_row(cut, "add_max(?w)", base, base.add_max("?w", ties=True)) is None


def test_a_checked_listing_keeps_the_argmax_rows_for_set_answer_and_execute(demo: KB) -> None:
    """Checks dry-run and try steps on the environment: the argmax's rows stay, so the set_answer and the execute()
    after it read them instead of querying again (as in text mode)."""
    env = _demo_after(demo, "q06", 2)  # after add_max(?winds)
    rows = env.bounded_rows
    assert rows is not None
    candidates = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look"]
    StepChecker(env, [str(v) for v in env.query.variables]).check(candidates)
    assert trial(env, "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)").ok
    assert env.bounded_rows is rows
    before = demo.stats.queries
    assert env.step("set_answer(?cyclone)").ok and env.step("execute()").ok
    assert demo.stats.queries == before
    assert [getattr(a, "short", None) for a in env.answers()] == ["m.012c7hkm"]


def test_steps_inside_an_argmax_are_checked_over_its_row(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an argmax, the facts and type constraints added inside it are checked over its row (a probe that
    repeats the argmax only for a step that row does not extend), a sum and an average over its one row need
    no query; every verdict is the trial's."""
    env = _demo_after(demo, "q06", 2)
    candidates = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look"]
    inside = [a for a in candidates if a.startswith(("add_fact(?", "add_type_constrain"))]
    totals = [a for a in candidates if a.startswith(("add_sum", "add_avg"))]
    assert len(inside) >= 3 and totals, candidates
    sent = _sent_batches(demo, monkeypatch)
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(candidates)
    batches = [t for t in sent if probes.CANDIDATE_VAR in t]
    assert not [t for t in batches if "SUM(" in t or "AVG(" in t]
    assert sum(t.count("ORDER BY") for t in batches) < len(inside), batches
    monkeypatch.undo()
    for action in candidates:
        assert (checker.verdict(action) is not None) == trial(env, action).ok, action


def test_sums_and_averages_over_rows_all_seen_need_no_query(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """add_sum/add_avg where the observation shows every row of the current query (every variable): computed, no
    query, and the number is the trial's (on the demo's gold chains)."""
    decided = 0
    for question in DEMO:
        env = SparqlEnvironment(demo, question["question"], entities=question["entities"], analyzer=Eraser())
        for line in question["actions"]:
            totals = [s.action for s in next_steps(env, verify=False, limit=400) if s.action.startswith(("add_sum", "add_avg"))]
            checker = StepChecker(env, [str(v) for v in env.query.variables])
            sent = _sent_batches(demo, monkeypatch)
            left = checker._from_observation([(a, dry_run(env, a)[1]) for a in totals])
            monkeypatch.undo()
            assert not [t for t in sent if probes.CANDIDATE_VAR in t]
            for action in {a for a in totals} - {a for a, _ in left}:
                tried = trial(env, action)
                assert tried.ok and checker.verdict(action) is not None, action
                number = float(tried.result.variables[0].values[0].term.lexical)
                assert float(checker.verdict(action).preview.split(" = ")[1]) == pytest.approx(number), action
                decided += 1
            env.step(line)
    assert decided >= 3


def test_facts_from_an_entity_are_checked_once_an_episode(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fact from one of the question's entities gives the same values in every state where the query has rows:
    the listing after the first step decides it from the first check (no branch for it), as its trial would."""
    env = _demo_after(demo, "q02", 0)
    first = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look"]
    StepChecker(env, []).check(first)
    assert env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)").ok
    auto_look(env)
    again = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look" and s.action.startswith("add_fact(m.0crbvqz")]
    assert len(again) >= 3
    sent = _sent_batches(demo, monkeypatch)
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(again)
    assert not [t for t in sent if "<http://rdf.freebase.com/ns/m.0crbvqz> ?__r ?__n" in t]
    monkeypatch.undo()
    for action in again:
        assert (checker.verdict(action) is not None) == trial(env, action).ok, action


def test_after_a_count_the_listing_reads_its_one_row(demo: KB, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a count without groups (one row, which the observation shows): set_answer, execute(), a sum and an
    average of it are decided with no query, and a fact from an entity joins that row (checked once an episode)."""
    question = next(q for q in DEMO if q["id"] == "q20")
    env = SparqlEnvironment(demo, question["question"], entities=question["entities"], analyzer=Eraser())
    for line in question["actions"]:
        if line.startswith("execute"):
            break
        auto_look(env)
        StepChecker(env, [str(v) for v in env.query.variables]).check(s.action for s in next_steps(env, verify=False, limit=400))
        assert env.step(line).ok, line
    assert env.query.scope.block.one_row
    candidates = [s.action for s in next_steps(env, verify=False, limit=400) if s.kind != "look"]
    from_row = [a for a in candidates if a.startswith(("set_answer", "execute", "add_sum", "add_avg"))]
    entity_facts = [a for a in candidates if a.startswith("add_fact(m.")]
    assert len(from_row) >= 3 and entity_facts, candidates
    sent = _sent_batches(demo, monkeypatch)
    checker = StepChecker(env, [str(v) for v in env.query.variables])
    checker.check(from_row + entity_facts)
    monkeypatch.undo()
    assert not [t for t in sent if probes.CANDIDATE_VAR in t], sent
    for action in from_row + entity_facts:
        assert (checker.verdict(action) is not None) == trial(env, action).ok, action
