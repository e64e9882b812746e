"""AgentBench's knowledge-graph functions as the ``agentbench`` action set (issue 23, item 4).

On the bundled demo KB and on a tiny Freebase-style KB built here with the
entities and relations of gold trajectories of ``tests/data/agentbench/kg_dev.json``.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib

from pyql.environment.actions import openai_tools, render_docs
from pyql.environment.agentbench_actions import AgentBenchActions
from pyql.environment.agentbench import AgentBenchEnvironment
from pyql.cli import build_parser, main
from pyql.interchange import convert
from pyql.kb import KB
from tests.fault_servers import FakeLLMServer, Reply, chat_body

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "agentbench" / "kg_dev.json"
RACHEL = {"Tropical Storm Rachel": "m.0crbvqz"}
CATEGORY = "meteorology.tropical_cyclone.category"
CYCLONES = "meteorology.tropical_cyclone_category.tropical_cyclones"
FATALITIES = "meteorology.tropical_cyclone.direct_fatalities"
NS = "http://rdf.freebase.com/ns/"

#: AgentBench's own parameter names (TOOLS_PARAM_ORDER of src/server/tasks/knowledgegraph/const.py).
TOOLS_PARAM_ORDER = {
    "get_relations": ["variable"],
    "get_neighbors": ["variable", "relation"],
    "intersection": ["variable1", "variable2"],
    "get_attributes": ["variable"],
    "argmax": ["variable", "attribute"],
    "argmin": ["variable", "attribute"],
    "count": ["variable"],
}


def dev_item(qid: str) -> dict[str, Any]:
    return next(item for item in json.loads(DEV.read_text(encoding="utf-8")) if item["qid"] == qid)


def camera_kb(tmp_path: Path) -> Path:
    """The entities and relations of the gold trajectory of 4300861012000_grailqa, with ranges, and distractors."""
    def t(s: str, p: str, o: str) -> str:
        return f"<{NS}{s}> <{NS}{p}> <{NS}{o}> .\n"

    def name(s: str, text: str) -> str:
        return f'<{NS}{s}> <{NS}type.object.name> "{text}"@en .\n'

    text = "".join([
        t("m.02r8js", "digicams.camera_color_filter_array_type.cameras", "m.cam1"),
        t("m.02r8js", "digicams.camera_color_filter_array_type.cameras", "m.cam2"),
        t("m.0h27q91", "digicams.camera_iso.cameras", "m.cam1"),
        t("m.0h27q91", "digicams.camera_iso.cameras", "m.cam3"),
        t("m.cam1", "digicams.digital_camera.sensor_type", "m.02x3xhq"),
        t("m.cam2", "digicams.digital_camera.sensor_type", "m.0ccd"),
        t("m.cam3", "digicams.digital_camera.sensor_type", "m.0cmos"),
        t("digicams.camera_color_filter_array_type.cameras", "type.property.expected_type", "digicams.digital_camera"),
        t("digicams.camera_iso.cameras", "type.property.expected_type", "digicams.digital_camera"),
        t("digicams.digital_camera.sensor_type", "type.property.expected_type", "digicams.camera_sensor_type"),
        name("m.02r8js", "Bayer"), name("m.0h27q91", "5000"), name("m.cam1", "Camera One"),
        name("m.cam2", "Camera Two"), name("m.cam3", "Camera Three"), name("m.02x3xhq", "Live MOS"),
        name("m.0ccd", "CCD"), name("m.0cmos", "CMOS"),
    ])
    path = tmp_path / "cameras.nt"
    path.write_text(text, encoding="utf-8")
    return path


def demo_env(**options: Any) -> AgentBenchEnvironment:
    return AgentBenchEnvironment(KB.open("demo"), entities=RACHEL, **options)


# -- each function on the demo KB ------------------------------------------------


def test_each_function_makes_the_next_variable_and_runs_its_chain() -> None:
    env = demo_env()
    relations = env.step("Action: get_relations(Tropical Storm Rachel)")
    assert relations.ok and CATEGORY in relations.observation and not env.variables
    made = env.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    assert made.ok and made.observation.startswith("variable #0") and "Tropical storm (SSHS)" in made.observation
    assert env.step("get_relations(#0)").observation == f"[{CYCLONES}]"
    cyclones = env.step(f"get_neighbors(#0, {CYCLONES})")
    assert "'Tropical Storm Allison' (m.01r2yb)" in cyclones.observation and "(m.0crbvqz)" in cyclones.observation
    attributes = env.step("get_attributes(#1)").observation
    assert FATALITIES in attributes and CATEGORY not in attributes  # numbers and dates only
    most = env.step(f"argmax(#1, {FATALITIES})")
    assert most.ok and "?v2 is ['Tropical Storm Allison' (m.01r2yb)]" in most.observation
    least = env.step("argmin(#1, meteorology.tropical_cyclone.lowest_pressure)")
    assert least.ok and least.observation.startswith("variable #3")
    counted = env.step("count(#1)")
    assert counted.observation == "variable #4, which is a number. The value of variable ?v4 is [5]"
    both = env.step("intersection(#1, #2)")
    assert both.ok and "?v5 is ['Tropical Storm Allison' (m.01r2yb)]" in both.observation
    assert [v.index for v in env.variables] == [0, 1, 2, 3, 4, 5]
    assert env.variables[4].form == f"(COUNT (JOIN (R {CYCLONES}) (JOIN (R {CATEGORY}) m.0crbvqz)))"
    final = env.step("Thought: #4 counts them.\nFinal Answer: #4")
    assert final.ok and env.done and final.observation == "The answer is [5]"
    assert env.final_json()["answers"] == [{"value": "5", "label": None}]


def test_an_argmax_used_again_stays_a_sub_query() -> None:
    env = demo_env()
    for line in (f"get_neighbors(Tropical Storm Rachel, {CATEGORY})", f"get_neighbors(#0, {CYCLONES})",
                 f"argmax(#1, {FATALITIES})", "get_relations(#2)", "get_neighbors(#2, meteorology.tropical_cyclone.affected_areas)"):
        record = env.step(line)
        assert record.ok, record.observation
    # The top cyclone's areas, all of them: the argmax's LIMIT 1 applies inside its sub-query only.
    assert "LIMIT 1" in env.variables[3].query.sparql() and "SELECT ?v3" not in env.variables[3].query.sparql()
    areas = {v.short for v in env.kb.execute(env.variables[3].query).answers()}
    assert areas == {"m.04ly1", "m.07b_l"}


def test_the_chain_of_a_variable_answers_as_the_sexpr_reader_does() -> None:
    env = demo_env()
    for line in (f"get_neighbors(m.0crbvqz, {CATEGORY})", f"get_neighbors(#0, {CYCLONES})", f"argmax(#1, {FATALITIES})"):
        env.step(line)
    via_sexpr = convert(env.variables[2].form, "sexpr", "sparql")
    assert {r for r in env.kb.select(via_sexpr) for r in r.values()} >= {v.term for v in env.kb.execute(env.variables[2].query).answers()}


# -- preconditions ---------------------------------------------------------------------


def test_get_neighbors_needs_a_relation_of_the_variable() -> None:
    env = demo_env()
    record = env.step("get_neighbors(Tropical Storm Rachel, meteorology.tropical_cyclone.affected_areas)")
    assert record.error == "bad_argument" and "is not a relation of m.0crbvqz" in record.observation
    assert CATEGORY in record.observation and not env.variables


def test_variables_must_exist_and_be_sets() -> None:
    env = demo_env()
    missing = env.step("get_relations(#3)")
    assert missing.error == "bad_argument" and "#3 does not exist (variables made so far: none yet)" in missing.observation
    env.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    env.step("count(#0)")
    for line in ("count(#1)", "intersection(#0, #1)", "get_attributes(#1)", "get_neighbors(#1, a.b.c)"):
        record = env.step(line)
        assert record.error == "bad_argument" and "#1 is a number" in record.observation, line
    assert env.step("intersection(#0, Tropical Storm Rachel)").error == "bad_argument"
    assert env.step("intersection(#0, #0, #0)").error == "wrong_arity"
    unknown = env.step("get_relations(Hurricane Nobody)")
    assert unknown.error == "bad_argument" and "Tropical Storm Rachel" in unknown.observation


def test_argmax_needs_an_attribute_of_the_variable() -> None:
    env = demo_env()
    env.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    env.step(f"get_neighbors(#0, {CYCLONES})")
    record = env.step(f"argmax(#1, {CATEGORY})")
    assert record.error == "bad_argument" and "attribute must be an attribute of the variable" in record.observation
    assert FATALITIES in record.observation and len(env.variables) == 2


def test_intersection_needs_two_variables_of_the_same_type(tmp_path: Path) -> None:
    env = AgentBenchEnvironment(KB.open(str(camera_kb(tmp_path))), entities={"bayer": "m.02r8js"})
    env.step("get_neighbors(bayer, digicams.camera_color_filter_array_type.cameras)")
    env.step("get_neighbors(#0, digicams.digital_camera.sensor_type)")
    record = env.step("intersection(#0, #1)")
    assert record.error == "bad_argument"
    assert "#0 are instances of digicams.digital_camera, #1 of digicams.camera_sensor_type" in record.observation
    assert env.step("intersection(#0, #0)").ok


def test_hallucinated_functions_are_refused_with_the_vocabulary() -> None:
    env = demo_env()
    env.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    invented = env.step("Action: get_entities_of_type(film.film)")
    assert invented.error == "invalid_action"
    for name in TOOLS_PARAM_ORDER:
        assert f"{name}()" in invented.observation
    assert "union()" not in invented.observation  # not offered, as AgentBench's prompt does not offer it
    assert len(env.variables) == 1


def test_union_runs_as_agentbenchs_api_runs_it() -> None:
    """AgentBench's task calls any function of its api.py, union among them: #2 is the members of either set."""
    env = demo_env()
    env.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    env.step("get_neighbors(#0, meteorology.tropical_cyclone_category.tropical_cyclones)")
    union = env.step("union(#0, #1)")
    assert union.ok and union.observation.startswith("variable #2")
    assert env.variables[2].form == f"(OR {env.variables[0].form} {env.variables[1].form})"
    assert env.variables[2].query.actions()[0].startswith("add_union(?v2, query(")
    assert env.step("count(#2)").ok and env.step("Final Answer: #3").observation == "The answer is [6]"
    other = demo_env()
    other.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    other.step("count(#0)")
    refused = other.step("union(#0, #1)")
    assert refused.error == "bad_argument" and "#1 is a number" in refused.observation and len(other.variables) == 2


# -- observing like AgentBench -----------------------------------------------------------


def test_type_only_observation_names_the_range_and_runs_nothing(tmp_path: Path) -> None:
    env = AgentBenchEnvironment(KB.open(str(camera_kb(tmp_path))), entities={"bayer": "m.02r8js"}, observe="type")
    env.step("get_relations(bayer)")
    made = env.step("get_neighbors(bayer, digicams.camera_color_filter_array_type.cameras)")
    assert made.observation == "variable #0, which are instances of digicams.digital_camera"
    again = env.step("get_neighbors(bayer, digicams.camera_color_filter_array_type.cameras)")
    assert again.observation.startswith("variable #1, which are") and again.kb_queries == 0  # the range is cached
    assert env.step("count(#0)").observation == "variable #2, which is a number"
    assert env.step("Final Answer: #2").observation == "The answer is [2]"


def test_a_kb_without_ranges_says_the_type_is_not_given() -> None:
    env = demo_env(observe="type")
    made = env.step(f"get_neighbors(Tropical Storm Rachel, {CATEGORY})")
    assert made.observation == "variable #0, whose type the KB does not give"
    with pytest.raises(Exception, match="unknown observe mode"):
        demo_env(observe="values")


# -- docs and tool schemas ------------------------------------------------------------------


def test_docs_and_tool_schemas_use_agentbench_parameter_names() -> None:
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in openai_tools(AgentBenchActions())}
    for name, params in TOOLS_PARAM_ORDER.items():
        assert list(tools[name]["properties"]) == params and tools[name]["required"] == params
    assert "final_answer" in tools and "union" not in tools
    prompt = render_docs(AgentBenchActions(), "prompt")
    assert "get_neighbors(variable, relation)" in prompt and "Final Answer: #3" in prompt
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pyql.action_sets"]
    assert entry["agentbench"] == "pyql.environment.agentbench_actions:AgentBenchActions"


# -- pyql run --action-set agentbench: a gold trajectory replayed --------------------------------


def run_cli(argv: list[str], stdin: str) -> tuple[int, str, str]:
    out, err, old_in, old_err = io.StringIO(), io.StringIO(), sys.stdin, sys.stderr
    sys.stdin, sys.stderr = io.StringIO(stdin), err
    try:
        code = main(argv, out=out)
    finally:
        sys.stdin, sys.stderr = old_in, old_err
    return code, out.getvalue(), err.getvalue()


def test_a_gold_trajectory_replays_through_pyql_run(tmp_path: Path) -> None:
    item = dev_item("4300861012000_grailqa")
    lines = [f"Action: {a}" for a in item["actions"]] + [f"Final Answer: #{sum('(' in a and not a.startswith(('get_relations', 'get_attributes')) for a in item['actions']) - 1}"]
    trajectory = "Thought: start.\n" + "\n".join(lines) + "\nObservation: not an action\n"
    code, out, err = run_cli(["run", "--kb", str(camera_kb(tmp_path)), "--profile", "freebase", "--action-set", "agentbench",
                              "--entities", json.dumps(item["entities"]), "--actions", "-", "--json"], trajectory)
    assert code == 0, (out, err)
    steps = [json.loads(line) for line in out.splitlines()]
    assert all(s["ok"] for s in steps[:-1]) and len(steps) == len(lines) + 1
    gold = {a["answer_argument"] for a in item["answer"]}
    assert {a["value"] for a in steps[-1]["answers"]} == gold == {"m.02x3xhq"}
    assert steps[-1]["complete"] is True


def test_pyql_run_reports_refused_steps_and_flags(tmp_path: Path) -> None:
    code, out, err = run_cli(["run", "--kb", "demo", "--action-set", "agentbench", "--actions", "-"],
                             "get_entities_of_type(film.film)\n")
    assert code == 4 and "error: invalid_action" in out and "get_neighbors()" in out
    code, out, _ = run_cli(["run", "--kb", "demo", "--observe", "type", "--actions", "-"], "execute()\n")
    assert code == 2 and "--observe applies to --action-set agentbench" in out
    assert build_parser().parse_args(["ask", "q", "--kb", "demo", "--action-set", "agentbench"]).action_set == "agentbench"


# -- an agent episode with a scripted loopback LLM ----------------------------------------------------


def ask(server: FakeLLMServer, mode: str, *extra: str) -> tuple[int, str]:
    args = build_parser().parse_args([
        "ask", "which cyclone of rachel's category had the most direct fatalities?", "--kb", "demo",
        "--entities", json.dumps(RACHEL), "--action-set", "agentbench", "--base-url", server.url, "--model", "fake",
        "--action-mode", mode, "--json", *extra,
    ])
    out = io.StringIO()
    return args.func(args, out), out.getvalue()


def tool_reply(name: str, arguments: dict[str, str], content: str = "") -> Reply:
    body = chat_body(content)
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    body["choices"][0]["message"]["tool_calls"] = [call]
    body["choices"][0]["finish_reason"] = "tool_calls"
    return Reply(200, body)


def test_agent_episode_in_text_mode() -> None:
    replies = [
        "Thought 1: the category first.\nAction 1: get_neighbors(Tropical Storm Rachel, meteorology.tropical_cyclone.category)",
        f"Thought 2: its cyclones.\nAction 2: get_neighbors(#0, {CYCLONES})",
        "Thought 3: a made-up function.\nAction 3: get_entities_of_type(meteorology.tropical_cyclone)",
        f"Thought 4: the deadliest.\nAction 4: argmax(#1, {FATALITIES})",
        "Thought 5: #2 answers.\nFinal Answer: #2",
    ]
    with FakeLLMServer([Reply(200, chat_body(r)) for r in replies]) as server:
        code, out = ask(server, "text")
        prompt = json.dumps(server.posts[0]["json"] if "json" in server.posts[0] else server.posts[0]["body"].decode())
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0, out
    assert [s["error"] for s in lines[:-1]] == [None, None, "invalid_action", None, None]
    assert lines[-1]["answers"] == [{"value": "m.01r2yb", "label": "Tropical Storm Allison"}]
    assert "get_neighbors(variable, relation)" in prompt and "Final Answer: #id" in prompt


def test_agent_episode_in_tools_mode() -> None:
    plan = [
        tool_reply("get_relations", {"variable": "Tropical Storm Rachel"}),
        tool_reply("get_neighbors", {"variable": "Tropical Storm Rachel", "relation": CATEGORY}),
        tool_reply("get_neighbors", {"relation": CYCLONES, "variable": "#0"}),
        tool_reply("count", {"variable": "#1"}),
        Reply(200, chat_body("Thought: #2 is the number. Final Answer: #2")),
    ]
    with FakeLLMServer(plan) as server:
        code, out = ask(server, "tools")
        sent = server.posts[0]["body"].decode()
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0, out
    assert [s["ok"] for s in lines[:-1]] == [True] * 5
    assert lines[-1]["answers"] == [{"value": "5", "label": None}]
    tools = {t["function"]["name"]: t for t in json.loads(sent)["tools"]}
    assert list(tools["intersection"]["function"]["parameters"]["properties"]) == ["variable1", "variable2"]
