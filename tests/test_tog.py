"""The ``tog`` strategy (Think-on-Graph) through ``pyql eval`` and ``pyql ask``.

The LLM is :class:`ToGOracle`, a scripted LLM that answers ToG's prompts as
a model that knows each demo question's gold query would: it names the
gold relations (and one more, scored low), scores the neighbours that are
gold answers 1, says ``{Yes}`` once a gold answer's label is in the
triplets, and answers with those labels; in the choose mode it answers
with the numbers of those. It runs in process, and behind the loopback
fake server of ``tests/fault_servers.py`` for the subprocess runs (the
requests' temperatures and seeds, recording and replay). What is tested is
the search: its calls, its tree of steps, what it prunes and why, its
budget, its bounds on a hub, its answers mapped back to entities; the
bundled model's own answers are the llm-marked tests' at the end.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agent.evaluation.datasets import load_dataset
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply, messages_to_text
from agent.llm.scripted import ScriptedLLM
from agent.methods.config import AgentConfig
from agent.methods.strategies import registry
from agent.methods.strategies.tog import NEIGHBOURS_READ, solve_tog
from pyql.cli import build_parser, main
from pyql.environment.sparql import SparqlEnvironment
from pyql.kb import KB
from tests.fault_servers import FakeLLMServer, Reply, chat_body, refused_port
from tests.test_agent_local import local_server  # noqa: F401 (the module's server of the bundled model)

ROOT = Path(__file__).resolve().parents[1]
DEMO = Path(str(resources.files("pyql") / "data" / "demo_questions.jsonl"))
WIKIDATA = Path(str(resources.files("pyql") / "data" / "wikidata_questions.jsonl"))

#: Run ``pyql.cli`` with every outgoing connection and every subprocess refused (a replay needs neither).
GUARD = r"""
import socket, subprocess, sys
def refuse(*args, **kwargs):
    raise RuntimeError("NETWORK OR PROCESS USED DURING A REPLAY")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
subprocess.Popen.__init__ = refuse
from pyql.cli import main
sys.exit(main(sys.argv[1:]))
"""


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def pyql(*args: str, guard: bool = False, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", GUARD, *args] if guard else [sys.executable, "-m", "pyql.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=cli_env())


def records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip())}


# ---------------------------------------------------------------------------
# An LLM that knows the gold queries


class ToGOracle:
    """Answers ToG's prompts (written or numbered) as a model that knows the gold relations and answers would.

    Args:
        items: data set items (their ``question``, ``actions`` and gold ``answers``).
        kb: the KB, for the gold answers' labels.
    """

    def __init__(self, items: list[dict[str, Any]], kb: Any, *, mode: str = "chat") -> None:
        self.config = LLMConfig(mode=mode)
        self.model = "tog-oracle"
        self.by_question: dict[str, tuple[set[str], set[str]]] = {}
        for item in items:
            relations = {a.split(", ")[1] for a in item.get("actions") or [] if a.startswith("add_fact(")}
            golds = [str(g) for g in item["answers"]]
            labels = {v for k, v in kb.labels([g for g in golds if re.fullmatch(r"[mgQ][.0-9a-z_]*", g)]).items() if v}
            self.by_question[item["question"].strip().lower()] = (relations, labels | set(golds))
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def gold(self, prompt: str) -> tuple[set[str], set[str]]:
        asked = re.findall(r"^(?:Q|Question): (.*)$", prompt, re.M)[-1].strip().lower()
        return self.by_question.get(asked, (set(), set()))

    def reply(self, prompt: str) -> str:
        relations, answers = self.gold(prompt)
        tail = prompt[prompt.rindex("\nQ") :] if "\nQ" in prompt else prompt
        if tail.rstrip().endswith(("Most useful relation:", "Most useful entity:", "Answer:")):
            return self.number(tail, relations, answers)
        if "Topic Entity:" in tail:
            listed = [r.split(" [")[0] for r in tail.split("Relations: ", 1)[1].split("\nA:")[0].strip().split("; ")]
            picked = [r for r in listed if r in relations] or listed[:1]
            other = next((r for r in listed if r not in picked), None)
            lines = [f"{i}. {{{r} (Score: {0.9 / len(picked):.2f})}}: it leads to the answer." for i, r in enumerate(picked, 1)]
            return "\n".join(lines + ([f"{len(lines) + 1}. {{{other} (Score: 0.1)}}: maybe."] if other else []))
        if tail.rstrip().endswith("Score:"):
            entities = tail.split("Entities: ", 1)[1].split("\nScore:")[0].split("; ")
            hits = [e in answers for e in entities]
            scores = [1.0 / sum(hits) if h else 0.0 for h in hits] if any(hits) else [1.0 / len(entities)] * len(entities)
            return ", ".join(f"{s:.2f}" for s in scores) + "\nThe gold ones score."
        found = sorted(a for a in answers if a in tail.split("Knowledge Triplets:", 1)[-1])
        if "{Yes} or {No}" in prompt:
            return "{Yes}. So the answer is " + " and ".join(f"{{{a}}}" for a in found) + "." if found else "{No}. Not yet."
        return "So the answer is " + (" and ".join(f"{{{a}}}" for a in found) or "{nobody knows}") + "."

    def number(self, tail: str, relations: set[str], answers: set[str]) -> str:
        listed = re.findall(r"^(\d+)\. (.*)$", tail, re.M)
        for number, text in listed:
            if text.split(" [")[0] in relations or text in answers:
                return f" {number}"
        further = [n for n, text in listed if text.startswith("none of these yet")]
        return f" {further[0] if further else listed[0][0]}"

    def complete(self, prompt: Any, **kwargs: Any) -> LLMReply:
        text = messages_to_text(prompt)
        sampling = kwargs.pop("sampling", None)  # kept flat: temperature and seed beside stop and grammar
        kwargs.update(sampling.fields() if sampling is not None else {})
        with self.lock:
            self.calls.append((text, kwargs))
        reply = self.reply(text)
        return LLMReply(reply, usage_in=len(text.split()), usage_out=len(reply.split()), model=self.model)


def demo_items(n: int | None = None, path: Path = DEMO) -> list[dict[str, Any]]:
    return load_dataset(path, limit=n).items


def serve(oracle: ToGOracle) -> FakeLLMServer:
    """The oracle behind the loopback fake server (OpenAI's chat endpoint)."""

    def respond(request: dict[str, Any]) -> Reply:
        if request["method"] == "GET":
            return Reply(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        body = json.loads(request["body"])
        return Reply(200, chat_body(oracle.complete(body["messages"]).text, model="fake-model"))

    return FakeLLMServer(respond)


def run_eval(tmp_path: Path, llm: Any, *flags: str, data: Path = DEMO, kb: str = "demo", name: str = "run") -> dict[str, dict[str, Any]]:
    out = tmp_path / f"{name}.jsonl"
    args = build_parser().parse_args(["eval", str(data), "--kb", kb, "--out", str(out), "--method", "tog", *flags])
    assert args.func(args, io.StringIO(), llm=llm, progress=io.StringIO()) == 0
    return records(out)


# ---------------------------------------------------------------------------
# pyql eval, in process


def test_eval_answers_demo_questions_with_entities_and_a_tree_of_steps(tmp_path: Path) -> None:
    items = demo_items(5)
    oracle = ToGOracle(items, KB.open("demo"))
    found = run_eval(tmp_path, oracle, "--limit", "5")
    assert [r["method"] for r in found.values()] == ["tog"] * 5
    one_hop = found["q01"]
    assert one_hop["answers"] == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]
    assert one_hop["metrics"]["hit1"] == 1.0
    assert one_hop["chain"] == ["add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)", "set_answer(?category)"]
    assert sorted(a["value"] for a in found["q03"]["answers"]) == ["m.01428y", "m.04ygk0"]
    damage = found["q05"]  # a CVT between the storm and the amount: two hops, the answer a literal
    assert [a["value"] for a in damage["answers"]] == ["68700000000.0"] and damage["metrics"]["hit1"] == 1.0
    assert damage["chain"][-1] == "set_answer(?amount)" and len(damage["chain"]) == 3
    for record in found.values():
        steps = record["steps"]
        assert steps[0]["action"].startswith("get_relation(") and steps[0]["parent"] is None
        assert all(s["parent"] is None or s["parent"] < i for i, s in enumerate(steps, 1))
        assert record["llm_calls"] == sum(1 for s in steps if s["prompt_sha256"])
        assert record["kb_queries"] == sum(s["kb_queries"] for s in steps) > 0
        assert record["extra"]["tog"]["decisions"] == "written" and record["status"] == "finished"


def test_pruned_branches_say_why(demo_kb: KB) -> None:
    from agent.llm.scripted import ScriptedLLM

    question = "which areas did hurricane sandy affect?"
    env = SparqlEnvironment(demo_kb, question=question, entities={"Hurricane Sandy": "m.0n9cgl4"})
    llm = ScriptedLLM([
        "1. {meteorology.tropical_cyclone.affected_areas (Score: 0.6)}: areas.\n2. {meteorology.tropical_cyclone.category (Score: 0.4)}: no.",
        "0.5, 0.5, 0.0, 0.0\nCuba and Jamaica.",  # the four areas, listed by name
        "{Yes}. The answer is {Cuba}.",
    ])
    result = solve_tog(llm, env, question, AgentConfig(feedback="raw"), width=2)
    steps = {s.action: s for s in result.steps}
    assert steps["get_relation(m.0n9cgl4)"].observation.endswith(
        "kept meteorology.tropical_cyclone.affected_areas (0.6), meteorology.tropical_cyclone.category (0.4)")
    pruned = {s.observation.split(":")[0]: s.pruned for s in result.steps if s.action.count("?") == 0 and s.action.startswith("add_fact(")}
    assert pruned == {
        "'Cuba' (m.0d04z6)": None,
        "'Jamaica' (m.03_r3)": "outside the beam (width 2: score 0.3, the last kept 0.3)",
        "'New York' (m.059rby)": "scored 0 by the entity pruning",
        "'United States of America' (m.09c7w0)": "scored 0 by the entity pruning",
        "'Category 3 hurricane (SSHS)' (m.05f4r2q)": None,
    }
    category = steps["add_fact(m.0n9cgl4, meteorology.tropical_cyclone.category, ?category)"]
    assert category.without_call == "the only neighbour" and not category.prompt_sha256
    assert result.answers == [{"value": "m.0d04z6", "label": "Cuba"}] and result.llm_calls == 3
    reasoning = steps["reasoning"]
    assert result.steps[reasoning.parent - 1].observation.startswith("'Category 3 hurricane (SSHS)'")  # under the best kept path


def test_a_reasoning_no_goes_one_hop_deeper_and_stops_at_the_depth_limit(tmp_path: Path) -> None:
    items = demo_items(5)
    oracle = ToGOracle(items, KB.open("demo"))
    found = run_eval(tmp_path, oracle, "--limit", "5", "--depth", "1")
    damage = found["q05"]  # the amount is two hops away: one hop is not enough, the answer comes from what was found
    assert damage["extra"]["tog"]["ended"] == "the depth limit (1)"
    assert [s["action"] for s in damage["steps"]][-2:] == ["reasoning", "answer"]
    assert damage["metrics"]["hit1"] == 0.0


def test_bm25_pruning_asks_the_llm_only_to_reason(tmp_path: Path) -> None:
    items = demo_items(3)
    oracle = ToGOracle(items, KB.open("demo"))
    found = run_eval(tmp_path, oracle, "--limit", "3", "--prune-tools", "bm25")
    assert found["q01"]["settings"]["options"] == {"prune_tools": "bm25"}
    for record in found.values():
        asked = [s["action"] for s in record["steps"] if s["prompt_sha256"]]
        assert set(asked) <= {"reasoning", "answer"} and record["llm_calls"] == len(asked)
    assert found["q01"]["answers"][0]["value"] == "m.05f4r3k"


def test_choose_mode_asks_numbered_choices_constrained_by_a_grammar_on_a_local_server(demo_kb: KB) -> None:
    item = demo_items(1)[0]
    oracle = ToGOracle([item], demo_kb, mode="completion")
    oracle.config = LLMConfig(mode="completion", base_url="http://127.0.0.1:9/v1")  # loopback: GBNF is sent
    env = SparqlEnvironment(demo_kb, question=item["question"], entities=item["entities"])
    result = solve_tog(oracle, env, item["question"], AgentConfig(action_mode="choose", feedback="raw"))
    assert result.answers == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]
    assert result.extra["tog"]["decisions"] == "choice"
    for text, kwargs in oracle.calls:
        n = len(re.findall(r"^\d+\. ", text.rsplit("\nQuestion:", 1)[-1], re.M))
        assert kwargs["grammar"] == 'root ::= " "? (' + " | ".join(f'"{i}"' for i in range(1, n + 1)) + ")\n"
        assert kwargs["stop"] == ["\n"]
    relations = [k for t, k in oracle.calls if t.rstrip().endswith("Most useful relation:")]
    assert relations and all(k["temperature"] == 0.4 and isinstance(k["seed"], int) for k in relations)


def test_numbered_answers_leave_out_the_topic_entity_when_the_paths_name_others(demo_kb: KB) -> None:
    """A question seldom asks for the entity it names: the choice lists the paths' entities and "look further"."""
    env = SparqlEnvironment(demo_kb, entities={"Tropical Storm Rachel": "m.0crbvqz"})
    llm = ScriptedLLM(["3"] * 30, config=LLMConfig(mode="completion"))
    result = solve_tog(llm, env, "what category is tropical storm rachel?", AgentConfig(action_mode="choose", feedback="raw"))
    answering = [p.rsplit("\nQuestion:", 1)[-1] for p in llm.prompts if p.rstrip().endswith("Answer:")]
    assert answering
    for prompt in answering:
        options = re.findall(r"^\d+\. (.+)$", prompt, re.M)
        assert "Tropical Storm Rachel" not in options and len(options) >= 2
    assert all(a["value"] != "m.0crbvqz" for a in result.answers)


def test_paths_that_name_only_the_topic_go_one_step_further_without_asking() -> None:
    """A marriage is an unnamed node: at depth 1 the paths name nothing but the question's own entity, so the search
    looks one step further without a reasoning call (it was asked, and the model's ``1`` answered the topic)."""
    from tests.turtle_engines import oxigraph_kb

    ns = "http://rdf.freebase.com/ns/"
    kb = oxigraph_kb(
        f"@prefix ns: <{ns}> .\n"
        'ns:m.niall ns:type.object.name "Niall Ferguson"@en ; ns:people.person.spouse_s ns:m.cvt .\n'
        'ns:m.cvt ns:people.marriage.spouse ns:m.ayaan .\n'
        'ns:m.ayaan ns:type.object.name "Ayaan Hirsi Ali"@en .\n'
    )
    env = SparqlEnvironment(kb, entities={"Niall Ferguson": "m.niall"})
    llm = ScriptedLLM(["1"] * 30, config=LLMConfig(mode="completion"))
    result = solve_tog(llm, env, "who is niall ferguson's wife?", AgentConfig(action_mode="choose", feedback="raw"))
    assert [a["label"] for a in result.answers] == ["Ayaan Hirsi Ali"]
    further = [t for t in result.steps if t.action == "reasoning" and "one step further" in (t.observation or "")]
    assert further and further[0].without_call and "question's own" in further[0].without_call


def test_exploration_calls_sample_with_seeds_and_reasoning_is_greedy(demo_kb: KB) -> None:
    items = demo_items(5)
    oracle = ToGOracle(items, demo_kb)
    item = items[4]
    env = SparqlEnvironment(demo_kb, question=item["question"], entities=item["entities"])
    solve_tog(oracle, env, item["question"], AgentConfig(feedback="raw"))
    kinds = [("reasoning" if "{Yes} or {No}" in t else "answer" if "Give the answer between braces" in t else "explore", k)
             for t, k in oracle.calls]
    explore = [k for kind, k in kinds if kind == "explore"]
    assert explore and all(k["temperature"] == 0.4 for k in explore)
    assert len({k["seed"] for k in explore}) == len(explore)  # each call its own seed
    assert all(k["temperature"] == 0.0 and "seed" not in k for kind, k in kinds if kind != "explore")
    again = ToGOracle(items, demo_kb)
    solve_tog(again, SparqlEnvironment(demo_kb, question=item["question"], entities=item["entities"]), item["question"], AgentConfig(feedback="raw"))
    assert [k.get("seed") for _, k in again.calls] == [k.get("seed") for _, k in oracle.calls]  # the same seeds again


def test_a_vote_of_tog_gives_each_sample_its_own_seeds(demo_kb: KB) -> None:
    """``vote --vote-of tog``: ToG seeds its own calls, so vote hands each sample a ``--seed`` of its own; without it
    every sample would send the same requests and the vote would count one answer k times."""
    from agent.methods.strategies.vote import solve_vote

    items = demo_items(5)
    item = items[4]
    oracle = ToGOracle(items, demo_kb)
    env = SparqlEnvironment(demo_kb, question=item["question"], entities=item["entities"])
    solve_vote(oracle, env, item["question"], AgentConfig(feedback="raw"), vote_of="tog", samples=2)
    seeds = [k["seed"] for _, k in oracle.calls if k.get("temperature") == 0.4]  # the pruning calls: ToG's own seeds
    assert seeds and len(seeds) % 2 == 0
    first, second = seeds[: len(seeds) // 2], seeds[len(seeds) // 2 :]
    assert first != second and not set(first) & set(second)  # the two samples asked different requests
    alone = ToGOracle(items, demo_kb)
    solve_tog(alone, SparqlEnvironment(demo_kb, question=item["question"], entities=item["entities"]), item["question"],
              AgentConfig(feedback="raw"))
    assert [k["seed"] for _, k in alone.calls if k.get("temperature") == 0.4] == first  # sample 0 has --seed 0: ToG alone


# ---------------------------------------------------------------------------
# The budget


def test_the_budget_running_out_answers_with_what_was_found(tmp_path: Path) -> None:
    items = demo_items(5)
    oracle = ToGOracle(items, KB.open("demo"))
    found = run_eval(tmp_path, oracle, "--limit", "5", "--max-llm-calls", "1")
    for record in found.values():
        assert record["stopped"] == "budget" and record["llm_calls"] <= 1 and record["status"] == "finished"
        budget = record["extra"]["budget"]
        assert budget["max_llm_calls"] == 1 and budget["llm_calls"] == record["llm_calls"]
        assert budget["ran_out"].startswith(f"LLM calls: all {record['llm_calls']} of --max-llm-calls 1 used before the ")
        last = record["steps"][-1]
        assert last["action"] == "answer" and last["without_call"] == "the LLM call budget ran out"
    # q01: the relation call kept the category, its one neighbour needs no call: the answer is the best found
    assert found["q01"]["answers"][0]["value"] == "m.05f4r3k"
    enough = run_eval(tmp_path, ToGOracle(items, KB.open("demo")), "--limit", "1", name="enough")["q01"]
    assert enough["stopped"] is None and "budget" not in enough["extra"]


def test_options_out_of_range_and_tables_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", str(DEMO), "--kb", "demo", "--out", str(tmp_path / "r.jsonl"), "--method", "tog"]
    assert main([*base, "--width", "0"]) == 2
    assert "--width must be a whole number from 1 to 10, got '0'" in capsys.readouterr().err
    assert main([*base, "--prune-tools", "sentencebert"]) == 2
    assert "--prune-tools must be one of auto, llm, bm25, model, got 'sentencebert'" in capsys.readouterr().err
    assert main([*base, "--max-llm-calls", "0"]) == 2
    assert re.search(r"--max-llm-calls must be a whole number from 1 to 100+, got '?0'?$", capsys.readouterr().err.strip())
    table = tmp_path / "t.json"
    table.write_text(json.dumps({"header": ["Game", "Opponent"], "rows": [["6", "Athlone Town"]]}))
    assert main(["ask", "which game?", "--table-json", str(table), "--method", "tog"]) == 2
    said = capsys.readouterr().err
    assert "--method tog applies to a KB (--kb), not to a table (--db, --table-json, a data set of tables)" in said
    wikisql = ROOT / "tests" / "data" / "wikisql" / "dev.jsonl"
    assert main(["eval", str(wikisql), "--out", str(tmp_path / "w.jsonl"), "--method", "tog", "--limit", "1"]) == 2
    assert "--method tog applies to a KB (--kb), not to a table" in capsys.readouterr().err
    agentbench = ["ask", "what?", "--kb", "demo", "--entities", "{}", "--action-set", "agentbench", "--method", "tog"]
    assert main(agentbench) == 2
    assert "not to AgentBench's actions on a KB (--action-set agentbench)" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists() and not (tmp_path / "w.jsonl").exists()


def test_the_help_lists_its_options_and_the_docs_its_section() -> None:
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["eval"].format_help().split())  # type: ignore[union-attr]
    assert "tog: Think-on-Graph" in help_text
    for flag in ("--width", "--depth", "--num-retain-entity", "--prune-tools", "--temperature-exploration",
                 "--temperature-reasoning", "--remove-unnecessary-rel", "--max-llm-calls"):
        assert flag in help_text
    docs = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")
    assert "### `tog`: Think-on-Graph" in docs and registry.markdown_table() in docs


# ---------------------------------------------------------------------------
# A hub: each step stays bounded


def test_a_hub_of_a_hundred_thousand_neighbours_keeps_each_step_bounded(tmp_path: Path) -> None:
    fb = "http://rdf.freebase.com/ns/"
    lines = [f'<{fb}m.0hub> <{fb}type.object.name> "The Hub"@en .']
    lines += [f"<{fb}m.0hub> <{fb}test.hub.member> <{fb}m.0n{i}> ." for i in range(100_000)]
    lines += [f'<{fb}m.0n{i}> <{fb}type.object.name> "Member {i}"@en .' for i in range(0, 100_000, 1000)]
    path = tmp_path / "hub.nt"
    path.write_text("\n".join(lines) + "\n")
    kb = KB.open(str(path))
    sizes: list[int] = []
    select = kb.select

    def counted(text: str) -> Any:
        rows = select(text)
        sizes.append(len(rows))
        return rows

    kb.select = counted  # type: ignore[method-assign]
    question = "which members does the hub have?"
    env = SparqlEnvironment(kb, question=question, entities={"The Hub": "m.0hub"})
    llm = ToGOracle([], kb)
    started = time.perf_counter()
    result = solve_tog(llm, env, question, AgentConfig(feedback="raw"), prune_tools="bm25", depth=1)
    assert time.perf_counter() - started < 60
    explored = next(s for s in result.steps if (s.action or "").startswith("add_fact(m.0hub, test.hub.member, ?"))
    assert explored.observation.startswith(f"more than {NEIGHBOURS_READ} values (the first {NEIGHBOURS_READ} read); 5 sampled at random")
    assert explored.kb_queries == 1
    assert max(sizes) <= NEIGHBOURS_READ + 1 and result.kb_queries == len(sizes) <= 4
    neighbours = [s for s in result.steps if s.parent == result.steps.index(explored) + 1]
    assert len(neighbours) == 5 and sum(1 for s in neighbours if s.pruned is None) == 3  # width 3 of the 5 sampled


# ---------------------------------------------------------------------------
# The Wikidata demo


def test_wikidata_relations_are_shown_with_their_properties_labels(tmp_path: Path) -> None:
    items = demo_items(2, WIKIDATA)
    oracle = ToGOracle(items, KB.open("wikidata-demo", profile="wikidata"))
    found = run_eval(tmp_path, oracle, "--limit", "2", data=WIKIDATA, kb="wikidata-demo")
    relation_prompts = [t for t, _ in oracle.calls if "Topic Entity:" in t]
    assert relation_prompts and all("wdt:P1082 [population]" in t for t in relation_prompts[:1])
    assert not any(re.search(r"\brdfs:label\b|\brdf:type\b", t.split("Relations: ")[-1]) for t in relation_prompts)
    for record in found.values():
        assert record["status"] == "finished" and record["steps"][0]["action"].startswith("get_relation(")


# ---------------------------------------------------------------------------
# Through a real HTTP server: requests, recording, replay


@pytest.mark.cli
def test_through_the_loopback_server_recorded_and_replayed_byte_for_byte(tmp_path: Path) -> None:
    items = demo_items(4)
    oracle = ToGOracle(items, KB.open("demo"))
    with serve(oracle) as server:
        live = pyql("eval", str(DEMO), "--limit", "4", "--kb", "demo", "--method", "tog", "--base-url", server.url,
                    "--model", "fake-model", "--out", str(tmp_path / "live.jsonl"), "--record", str(tmp_path / "rec"))
        bodies = [json.loads(p["body"]) for p in server.posts]
    assert live.returncode == 0, live.stderr
    explore = [b for b in bodies if "{Yes} or {No}" not in b["messages"][-1]["content"]
               and "Give the answer between braces" not in b["messages"][-1]["content"]]
    assert explore and all(b["temperature"] == 0.4 and isinstance(b["seed"], int) for b in explore)
    assert all(b["temperature"] == 0.0 and "seed" not in b for b in bodies if b not in explore)
    dead = f"http://127.0.0.1:{refused_port()}/v1"
    replay = pyql("eval", str(DEMO), "--limit", "4", "--kb", "demo", "--method", "tog", "--base-url", dead,
                  "--model", "fake-model", "--out", str(tmp_path / "replay.jsonl"), "--replay", str(tmp_path / "rec"), guard=True)
    assert replay.returncode == 0, replay.stderr
    assert "NETWORK OR PROCESS" not in replay.stderr and "misses" not in replay.stderr
    first, again = records(tmp_path / "live.jsonl"), records(tmp_path / "replay.jsonl")
    assert sorted(first) == sorted(again) == ["q01", "q02", "q03", "q04"]
    for qid in first:
        assert _stable(again[qid]) == _stable(first[qid]), qid


_TIMES = {"seconds", "llm_seconds", "kb_seconds", "model_seconds", "finished_at", "started_at", "recording", "latency"}


def _stable(record: dict[str, Any]) -> str:
    """A record without what a replay cannot repeat (times, the recording's mode): its JSON text."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _TIMES}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(record), sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------------------
# The bundled model


@pytest.mark.llm
def test_the_bundled_model_answers_a_demo_question_by_numbered_choices(local_server: Any, tmp_path: Path) -> None:  # noqa: F811
    """Each decision of the 270M base model is a GBNF-constrained number; the search runs to an answer on the KB."""
    from agent.llm.client import OpenAILLM

    llm = OpenAILLM(local_server.config(max_tokens=8))
    found = run_eval(tmp_path, llm, "--limit", "1", "--action-mode", "choose")["q01"]
    assert found["status"] == "finished" and found["extra"]["tog"]["decisions"] == "choice"
    assert found["extra"]["tog"]["prune_tools"] == "model"  # auto: the bundled model prunes by its PMI, not by asking
    assert 1 <= found["llm_calls"] <= 60 and found["llm_calls"] == sum(1 for s in found["steps"] if s["prompt_sha256"])
    assert all(re.fullmatch(r" ?\d+", s["reply"]) for s in found["steps"] if s["prompt_sha256"])
    assert found["answers"] and found["answers"][0]["value"].startswith("m.")  # an entity the search met, with its label
    assert found["answers"][0]["label"]


@pytest.mark.llm
def test_the_bundled_models_scores_prune_without_asking(local_server: Any, tmp_path: Path) -> None:
    """``--prune-tools model``: the model's PMI prunes relations and entities in process; only the reasoning asks the server."""
    from agent.llm.client import OpenAILLM

    llm = OpenAILLM(local_server.config(max_tokens=8))
    found = run_eval(tmp_path, llm, "--limit", "1", "--action-mode", "choose", "--prune-tools", "model")["q01"]
    asked = {s["action"] for s in found["steps"] if s["prompt_sha256"]}
    assert asked <= {"reasoning", "answer"} and found["status"] == "finished"
    first = found["steps"][0]
    assert first["scoring_requests"] > 0 and first["llm_seconds"] > 0 and not first["prompt_sha256"]  # scored in process
    # a backward hop is scored by what it reaches: the category that lists the storm, far above the rest
    assert "kept meteorology.tropical_cyclone_category.tropical_cyclones (backward)" in found["steps"][0]["observation"]
    assert any(s["observation"].startswith("'Tropical storm (SSHS)' (m.05f4r3k): score") for s in found["steps"])
