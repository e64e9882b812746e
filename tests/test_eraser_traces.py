"""Whole traces under ERASER: the paper's examples and the 37 demo questions.

* the Appendix D example, replayed on the demo KB, fires nothing and
  answers Tropical Storm Dolly;
* a correct action chain for each demo question (``benchmarks/bench_eraser.py``)
  fires nothing, reaches the gold answer, and costs exactly the KB queries
  it costs without an analyzer;
* the malformed actions of the Appendix G traces fire the matching rules;
* a rule switched off by id does not fire.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

from correction import Eraser, UnknownRuleError, eraser_for
from pyql.kb import KB
from pyql.environment.sparql import SparqlEnvironment

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    name = "_bench_eraser"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "bench_eraser.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def kb():
    return KB.open("demo")


def _answers(env):
    return sorted(str(a["value"]) for a in env.final_json()["answers"])


def _same(got, gold):
    def norm(v):
        try:
            return repr(float(v))
        except ValueError:
            return {"yes": "true", "no": "false"}.get(v, v)

    return sorted(map(norm, got)) == sorted(map(norm, gold))


def test_appendix_d_example_fires_nothing(kb):
    entities, actions = _bench().APPENDIX_D
    assert actions == [
        "get_relation(m.0crbvqz)",
        "add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)",
        "get_relation(?category)",
        "add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)",
        "get_relation(?cyclone)",
        "add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)",
        "add_max(?time)",
        "set_answer(?cyclone)",
        "execute()",
    ]
    eraser = Eraser()
    env = SparqlEnvironment(kb, question="which was the most recently formed cyclone that is in the same "
                            "category as tropical storm rachel?", entities=entities, analyzer=eraser)
    records = env.run(actions)
    assert [r.error for r in records] == [None] * len(actions)
    assert eraser.stats.total == 0 and eraser.stats.steps == len(actions)
    assert env.done
    assert env.final_json()["answers"] == [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]


def test_demo_question_chains_fire_nothing_and_answer(kb):
    bench = _bench()
    questions = bench.questions()
    assert sorted(bench.CHAINS) == sorted(questions)  # a chain for each of the 37 questions
    raw_kb = KB.open("demo")
    # What kinds of values a relation holds is asked once per KB (KB.value_kind): share that cache,
    # so both KBs send the same queries for the same steps.
    raw_kb._value_kinds = kb._value_kinds
    for qid, item in sorted(questions.items()):
        eraser = Eraser()
        env = SparqlEnvironment(kb, question=item["question"], entities=item["entities"], analyzer=eraser)
        raw = SparqlEnvironment(raw_kb, question=item["question"], entities=item["entities"])
        SparqlEnvironment(raw_kb, entities=item["entities"]).run(bench.CHAINS[qid])  # fills the shared kinds cache
        q0, r0 = kb.stats.queries, raw_kb.stats.queries
        for line in bench.CHAINS[qid]:
            record = env.step(line)
            assert record.ok, f"{qid}: {line} fired {record.error}: {record.observation}"
            raw.step(line)
        assert env.done, qid
        assert _same(_answers(env), item["answers"]), (qid, _answers(env), item["answers"])
        # the analyzer adds no KB query to a correct episode
        assert kb.stats.queries - q0 == raw_kb.stats.queries - r0, qid
        assert eraser.stats.total == 0 and not eraser.stats.kb_queries


def _gold_items():
    return [item for _, item in sorted(_bench().questions().items()) if item.get("actions")]


@pytest.mark.parametrize("item", _gold_items(), ids=[i["id"] for i in _gold_items()])
def test_gold_action_chains_of_the_question_file_fire_nothing(kb, item):
    """The ``actions`` stored in pyql/data/demo_questions.jsonl are correct ERASER traces."""
    env = SparqlEnvironment(kb, question=item["question"], entities=item["entities"], analyzer=Eraser())
    for line in item["actions"]:
        record = env.step(line)
        assert record.ok, f"{item['id']}: {line} fired {record.error}: {record.observation}"
    assert env.done and _same(_answers(env), item["answers"])


def test_entity_less_questions_may_start_from_two_new_variables(kb):
    """With no linked entity and an empty query, the first fact cannot connect to anything."""
    env = SparqlEnvironment(kb, question="which cyclones had highest winds above 200 km/h?", entities={},
                            analyzer=Eraser())
    assert env.step("add_fact(?cyclone, meteorology.tropical_cyclone.highest_winds, ?winds)").ok
    assert env.step("add_filter(?winds, >, 200)").ok  # its variable exists: not filter_before_get_relation
    # a second pair of new variables is disconnected from the query: an error again
    assert env.step("add_fact(?storm, meteorology.tropical_cyclone.formed, ?formed)").error == "fact_two_new_variables"
    linked = SparqlEnvironment(kb, entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=Eraser())
    first = linked.step("add_fact(?cyclone, meteorology.tropical_cyclone.highest_winds, ?winds)")
    assert first.error == "fact_two_new_variables" and "get_relation(m.0crbvqz)" in first.guideline


# -- Appendix G ----------------------------------------------------------------


def test_appendix_g_grailqa_trace(kb):
    """GrailQA: filter before get_relation, relation as operator, set_answer("yes")."""
    env = SparqlEnvironment(kb, question="is angular frequency be defined by 1.0 radians per second?",
                            entities={"1.0": "1.0"}, analyzer=Eraser())
    first = env.step(
        "Thought 1: we need to constrain the angular frequency.\nAction 1: add_filter(?angular_frequency, =, 1.0)"
    )
    assert first.error == "filter_before_get_relation"
    assert "get_relation(1.0)" in first.guideline and first.guideline.endswith("Thought 2 and Action 2.")
    third = env.step(
        "add_filter(?angular_frequency, measurement_unit.angular_velocity_unit.frequency_in_radians_per_second, 1.0)"
    )
    assert third.error == "filter_bad_operator"
    assert "You used measurement_unit.angular_velocity_unit.frequency_in_radians_per_second as the operator" in third.guideline
    assert "[>, <, >=, <=, =, !=]" in third.guideline
    yes = env.step('set_answer("yes")')
    assert yes.error == "answer_not_variable"
    assert yes.guideline.startswith('"yes" is invalid in set_answer')


def test_appendix_g_graphq_trace(kb):
    """GraphQ: prose instead of an action, get_relation of a variable nothing created."""
    env = SparqlEnvironment(kb, question="find all the streams available on live365.",
                            entities={"live365": "m.04rtjj"}, analyzer=Eraser())
    env.step("get_relation(m.04rtjj)")  # not in the demo KB: get_relation_empty
    env.step("add_fact(m.04rtjj, broadcast.broadcast_on, ?stream)")
    prose = env.step(
        "Thought 3: Based on the relations provided, none of them fit.\n"
        "Action 3: Since we couldn't find a suitable relation to directly represent the concept of "
        '"streams available on live365", we need to use a different approach to solve this question.'
    )
    assert prose.error == "no_action"
    assert "Please re-generate only Thought 4 and Action 4." in prose.guideline
    stream = env.step("get_relation(?stream)")
    assert stream.error == "unbound_variable"
    assert "You cannot query for the relations of ?stream" in stream.guideline
    assert "get_relation(m.04rtjj)" in stream.guideline
    assert stream.guideline.endswith("Please re-generate only Thought 5 and Action 5.")


def test_appendix_g_webqsp_trace(kb):
    """WebQSP: get_relation('UnName_Entity') after a variable held unnamed nodes."""
    env = SparqlEnvironment(kb, question="how much damage did hurricane sandy cause?",
                            entities={"Hurricane Sandy": "m.0n9cgl4"}, analyzer=Eraser())
    assert env.step("get_relation(m.0n9cgl4)").ok
    assert env.step("add_fact(m.0n9cgl4, meteorology.tropical_cyclone.damages, ?place)").ok
    unnamed = env.step("get_relation('UnName_Entity')")
    assert unnamed.error == "unnamed_node_argument"
    assert "'UnName_Entity' is an unnamed node, which is invalid in get_relation" in unnamed.guideline
    assert "?place" in unnamed.guideline and "m.0n9cgl4" in unnamed.guideline
    assert env.step("get_relation(?place)").ok


def test_figure_2_wrong_arity_and_relation_as_argument(kb):
    env = SparqlEnvironment(kb, entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=Eraser())
    arity = env.step("add_fact(?x, ?y)")
    assert arity.error == "wrong_arity"
    assert arity.guideline.startswith("add_fact(head, relation, tail) should have 3 parameters. You have 2 parameters")
    rel = env.step("get_relation(measurement_unit.inverse_temperature_unit.measurement_system)")
    assert rel.error == "relation_as_argument"
    assert "Never try to get a relation from a relation" in rel.guideline


# -- switching rules off ---------------------------------------------------------


def test_disabling_a_rule_stops_it_firing(kb):
    on = SparqlEnvironment(kb, entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=Eraser())
    assert on.step("get_relation(?stream)").error == "unbound_variable"
    eraser = Eraser(disabled={"unbound_variable"})
    off = SparqlEnvironment(kb, entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=eraser)
    record = off.step("get_relation(?stream)")
    assert record.error == "query_error"  # the builder's own refusal, through the fallback
    assert "unbound_variable" not in eraser.stats.counts


def test_disabling_an_empty_result_rule_keeps_the_step(kb):
    eraser = Eraser(disabled={"filter_empty", "empty_result"})
    env = SparqlEnvironment(kb, entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=eraser)
    for line in _bench().APPENDIX_D[1][:6]:
        assert env.step(line).ok
    record = env.step("add_filter(?time, >, 2020-01-01)")
    assert record.ok and record.empty  # an analyzer decides: nothing fired, so the step is kept


def test_unknown_rule_id_is_an_actionable_error():
    with pytest.raises(UnknownRuleError, match="registered rules: .*unlinked_entity"):
        Eraser(disabled={"filter_emtpy"})


# -- the CLI ---------------------------------------------------------------------------


def test_pyql_run_json_error_is_the_rule_id(tmp_path):
    from pyql.cli import main

    actions = tmp_path / "actions.txt"
    actions.write_text("get_relation(?stream)\nget_relation(m.0crbvqz)\nadd_fact(m.0crbvqz, ?relation, ?c)\n")
    out = io.StringIO()
    status = main(
        ["run", "--kb", "demo", "--entities", '{"Tropical Storm Rachel": "m.0crbvqz"}', "--actions", str(actions), "--json"],
        out=out,
    )
    assert status == 4  # steps failed (issue 25)
    steps = [json.loads(line) for line in out.getvalue().splitlines()][:3]
    assert [s["error"] for s in steps] == ["unbound_variable", None, "fact_relation_variable"]
    # pyql run has no thoughts to re-generate: its guidelines ask to correct the action
    assert steps[0]["observation"].endswith("Correct this action and run it again.")


def test_eraser_for_modes():
    assert isinstance(eraser_for("eraser"), Eraser)
    assert eraser_for("raw") is None and eraser_for("none") is None
