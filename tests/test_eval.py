"""Metrics, data set loaders, the eval runner (traces, resume, concurrency) and ``pyql ask``/``eval``.

Every LLM here is scripted: :class:`GoldLLM` replays each question's gold
actions, chosen from the prompt (so it is deterministic under concurrency),
and a tiny OpenAI-compatible HTTP server on 127.0.0.1 serves the same
replies to the real command line in a subprocess.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import pytest

from agent.errors import LLMError
from agent.evaluation.datasets import DatasetError, detect_format, load_dataset
from agent.evaluation.metrics import (
    MetricsError,
    aggregate,
    cost_usd,
    denotation_match,
    hit_at_1,
    invalid_action_rate,
    load_prices,
    normalize_answer,
    precision_recall_f1,
    score_question,
)
from agent.evaluation.runner import (
    EvalError,
    KBProvider,
    LockedKB,
    RunSettings,
    environment_for,
    latest_records,
    read_run,
    run_eval,
    run_question,
    summary_path,
)
from agent.llm.config import LLMConfig
from agent.llm.replies import LLMReply
from agent.llm.scripted import ScriptedLLM
from pyql.cli import main
from tests.shared_data import needs_shared, shared_path

ROOT = Path(__file__).resolve().parents[1]
DEMO = Path(str(resources.files("pyql") / "data" / "demo_questions.jsonl"))
WEBQSP = shared_path("webqsp")
DBBENCH = shared_path("dbbench")
COMPLETION = LLMConfig(mode="completion")


def demo_items(n: int = 3) -> list[dict[str, Any]]:
    return load_dataset(DEMO, limit=n).items


# ---------------------------------------------------------------------------
# A deterministic LLM that follows the gold actions


class GoldLLM:
    """Replies with the gold action of the step the prompt asks for, for the question in the prompt.

    Thread-safe; counts calls per question. ``interrupt_on`` raises
    KeyboardInterrupt (a Ctrl-C) on the first call for that question;
    ``block`` (an Event) makes calls for ``interrupt_on`` wait for it instead.
    """

    def __init__(self, items: list[dict[str, Any]], *, mode: str = "completion", interrupt_on: str | None = None) -> None:
        self.by_question = {item["question"]: item for item in items}
        self.config = LLMConfig(mode=mode)
        self.model = "gold-replay"
        self.interrupt_on = interrupt_on
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def reply_text(self, prompt: Any) -> tuple[str, str]:
        if isinstance(prompt, str):
            question = re.findall(r"^Question: (.*)$", prompt, re.M)[-1].strip()
            step = int(re.search(r"Thought (\d+):\s*$", prompt).group(1))
            thought = " Following the gold query."
        else:
            user = next(m["content"] for m in prompt if m["role"] == "user")
            question = re.search(r"Question:\s*(.*)", user).group(1).strip()
            step = 1 + sum(1 for m in prompt if m["role"] == "assistant")
            thought = "Thought: following the gold query."
        item = self.by_question[question]
        actions = item["actions"]
        action = actions[min(step, len(actions)) - 1]
        return item["id"], f"{thought}\nAction {step}: {action}"

    def complete(self, prompt: Any, *, stop: Any = None, tools: Any = None, grammar: Any = None) -> LLMReply:
        qid, text = self.reply_text(prompt)
        with self._lock:
            self.calls[qid] = self.calls.get(qid, 0) + 1
        if qid == self.interrupt_on:
            raise KeyboardInterrupt
        size = len(prompt) if isinstance(prompt, str) else sum(len(m["content"]) for m in prompt)
        return LLMReply(text=text, usage_in=size // 4, usage_out=len(text) // 4, model=self.model, finish_reason="stop")

    @property
    def total(self) -> int:
        return sum(self.calls.values())


# ---------------------------------------------------------------------------
# metrics


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("68700000000.0", "68700000000"),
        ("68700000000", "68700000000"),
        (94, "94"),
        ("94.0", "94"),
        ("1,174", "1174"),
        ("0.5", "0.5"),
        ("Yes", "true"),
        ("true", "true"),
        (True, "true"),
        ("no", "false"),
        ("FALSE", "false"),
        (" Jamaica  English ", "jamaica english"),
        ("http://rdf.freebase.com/ns/m.0crbvqz", "m.0crbvqz"),
        ("<http://www.wikidata.org/entity/Q42>", "q42"),
        ('"1900"^^xsd:gYear', "1900"),
        ("2005-08-23T00:00:00", "2005-08-23"),
        ("2005-08-23", "2005-08-23"),
        (None, ""),
    ],
)
def test_normalize_answer(value: Any, key: str) -> None:
    assert normalize_answer(value) == key


R = {"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}
J1 = {"value": "m.04ygk0", "label": "Jamaican Creole English Language"}
J2 = {"value": "m.01428y", "label": "Jamaican English"}


@pytest.mark.parametrize(
    ("predicted", "gold", "f1", "hit1"),
    [
        ([R], ["m.05f4r3k"], 1.0, 1.0),  # id matches
        ([J1, J2], ["m.01428y", "m.04ygk0"], 1.0, 1.0),  # order does not matter for F1
        ([J1], ["m.01428y", "m.04ygk0"], 2 / 3, 1.0),  # recall 1/2
        ([{"value": "m.x", "label": "X"}, J1], ["m.04ygk0"], 2 / 3, 0.0),  # right answer second: Hit@1 0
        ([{"value": "68700000000.0", "label": None}], ["68700000000"], 1.0, 1.0),  # numbers by value
        ([{"value": "94", "label": None}], ["94.0"], 1.0, 1.0),
        ([{"value": "yes", "label": None}], ["true"], 1.0, 1.0),  # yes == true
        ([{"value": "no", "label": None}], ["true"], 0.0, 0.0),
        ([{"value": "m.03_r3", "label": "Jamaica"}], ["jamaica"], 1.0, 1.0),  # gold given as a label
        ([{"value": "m.03_r3", "label": "Jamaica"}], [{"value": "m.03_r3", "label": "Jamaica"}], 1.0, 1.0),
        ([], ["m.1"], 0.0, 0.0),
        ([R], [], 0.0, 0.0),
        ([], [], 1.0, 1.0),  # nothing to find, nothing found
        ([R, R], ["m.05f4r3k"], 1.0, 1.0),  # duplicates count once
    ],
)
def test_f1_and_hit1(predicted: list[Any], gold: list[Any], f1: float, hit1: float) -> None:
    assert precision_recall_f1(predicted, gold)[2] == pytest.approx(f1)
    assert hit_at_1(predicted, gold) == hit1
    scores = score_question(predicted, gold)
    assert scores["f1"] == pytest.approx(f1, abs=1e-6) and scores["hit1"] == hit1


@pytest.mark.parametrize(
    ("predicted", "label", "ok"),
    [
        (["1"], ["1.0"], True),
        ([{"value": "32502", "label": None}], ["32502.0"], True),
        ([], ["none"], True),
        (["1–0", "2–0"], ["2–0", "1–0"], True),
        (["1–0"], ["1–0", "2–0"], False),
        (["K255AZ"], ["k255az"], True),
    ],
)
def test_denotation(predicted: list[Any], label: list[Any], ok: bool) -> None:
    assert denotation_match(predicted, label) is ok
    assert ("denotation" in score_question(predicted, label, table=True)) is True


def test_cost_and_price_table(tmp_path: Path) -> None:
    assert cost_usd("gpt-4o-mini", 2_000_000, 1_000_000) == pytest.approx(0.9)
    assert cost_usd("gpt-4o-mini-2024-07-18", 1_000_000, 0) == pytest.approx(0.15)
    assert cost_usd("my-local-model", 10**6, 10**6) == 0.0
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-local-model": [1.0, 3.0]}))
    assert cost_usd("my-local-model", 10**6, 10**6, load_prices(prices)) == pytest.approx(4.0)
    prices.write_text(json.dumps({"m": "cheap"}))
    with pytest.raises(MetricsError, match=r"USD per 1M input tokens"):
        load_prices(prices)


def test_invalid_action_rate_and_aggregate() -> None:
    records = [
        {"answers": [R], "gold": ["m.05f4r3k"], "done": True, "llm_calls": 4, "tokens_in": 400, "tokens_out": 40,
         "kb_queries": 6, "seconds": 3.0, "model": "gpt-4o-mini", "rules": {"wrong_arity": 1},
         "steps": [{"error": None}, {"error": "wrong_arity"}, {"error": None}, {"error": None}]},
        {"answers": [], "gold": ["m.1"], "done": False, "forced": True, "llm_calls": 2, "tokens_in": 200, "tokens_out": 20,
         "kb_queries": 2, "seconds": 1.0, "model": "gpt-4o-mini", "rules": {},
         "steps": [{"error": "no_action"}, {"error": "empty_result"}, {"error": None}, {"error": None}]},
    ]
    assert invalid_action_rate(records) == 2 / 8
    m = aggregate(records)
    assert (m.questions, m.f1, m.hit1, m.success_rate, m.forced) == (2, 0.5, 0.5, 0.5, 1)
    assert (m.steps, m.llm_calls, m.tokens_in, m.tokens_out, m.qpq, m.tpq) == (4, 3, 300, 30, 4, 2)
    assert m.cost_usd == pytest.approx((600 * 0.15 + 60 * 0.60) / 1e6)
    assert m.rules == {"wrong_arity": 1}
    table = m.table()
    assert "| answer F1 | 0.500 |" in table and "| KB queries per question (QPQ) | 4.00 |" in table


# ---------------------------------------------------------------------------
# data sets


def test_demo_questions_load() -> None:
    ds = load_dataset(DEMO)
    assert ds.format == "pyql" and len(ds) == 37 and ds.skipped == 0
    q = ds[0]
    assert q["id"] == "q01" and q["entities"] == {"Tropical Storm Rachel": "m.0crbvqz"}
    assert q["answers"] == ["m.05f4r3k"] and q["actions"][-1] == "execute()" and q["table"] is None


@needs_shared("webqsp")
def test_webqsp_processed_loads() -> None:
    ds = load_dataset(WEBQSP)
    assert ds.format == "webqsp" and len(ds) == 1639
    first = ds[0]
    assert first["id"] == "WebQTest-0" and first["question"] == "what does jamaican people speak"
    assert first["entities"] == {"Jamaica": "m.03_r3"} and set(first["answers"]) == {"m.04ygk0", "m.01428y"}
    assert len({item["id"] for item in ds}) == 1639


@needs_shared("dbbench")
def test_dbbench_select_items_load_and_make_table_environments() -> None:
    ds = load_dataset(DBBENCH)
    assert ds.format == "dbbench" and len(ds) == 34 and ds.skipped == 0  # INSERT/UPDATE items are scored by the table's state
    assert all(item["table"] and item["entities"] == {} for item in ds)
    changes = [item for item in ds if item["kind"] in ("INSERT", "UPDATE")]
    assert len(changes) == 20 and all(item["answers"][0].startswith("table-state:") for item in changes)
    second = ds[1]
    assert second["id"] == "dev-1" and second["answers"] == ["1.0"] and second["kind"] == "counting"
    env = environment_for(second, None, RunSettings())
    assert env.side == "sql" and env.question == second["question"]
    assert "Opponent" in env.table.headers


def test_unknown_and_malformed_data_sets(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps({"text": "what?", "sql": "x"}) + "\n")
    with pytest.raises(DatasetError, match=r"unknown data set format \(first record has keys: text, sql\); known formats"):
        load_dataset(odd)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"question": "a?", "answers": []}) + "\n{not json\n")
    with pytest.raises(DatasetError, match=r"line 2: not a JSON object"):
        load_dataset(broken)
    twice = tmp_path / "twice.jsonl"
    twice.write_text("\n".join(json.dumps({"id": "x", "question": "q?", "answers": []}) for _ in range(2)))
    with pytest.raises(DatasetError, match="ids must be unique"):
        load_dataset(twice)
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(tmp_path / "missing.json")
    assert detect_format({"Questions": []}) == "webqsp-raw"


def test_original_webqsp_format(tmp_path: Path) -> None:
    raw = {"Questions": [{"QuestionId": "WebQTest-9", "ProcessedQuestion": "what does jamaican people speak",
                          "Parses": [{"TopicEntityMid": "m.03_r3", "TopicEntityName": "Jamaica",
                                      "Answers": [{"AnswerArgument": "m.01428y", "EntityName": "Jamaican English"}]}]}]}
    path = tmp_path / "WebQSP.test.json"
    path.write_text(json.dumps(raw))
    (item,) = load_dataset(path)
    assert item["id"] == "WebQTest-9" and item["entities"] == {"Jamaica": "m.03_r3"}
    assert item["answers"] == [{"value": "m.01428y", "label": "Jamaican English"}]


# ---------------------------------------------------------------------------
# the runner

STEP_FIELDS = {"step", "prompt_sha256", "reply", "action", "ok", "error", "observation", "rule",
               "llm_seconds", "kb_queries", "kb_seconds", "tokens_in", "tokens_out", "attempts"}
RECORD_FIELDS = {"id", "question", "entities", "gold", "answers", "steps", "done", "query", "llm_calls",
                 "tokens_in", "tokens_out", "kb_queries", "seconds", "rules", "error", "metrics", "cost_usd",
                 "template_version", "model", "method", "feedback"}


def test_eval_writes_a_trace_line_per_question(tmp_path: Path) -> None:
    items = demo_items(3)
    llm = GoldLLM(items)
    out = tmp_path / "run.jsonl"
    outcome = run_eval(items, out, llm, RunSettings(kb="demo"), progress=None)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in lines] == ["q01", "q02", "q03"]
    for record, item in zip(lines, items):
        assert RECORD_FIELDS <= set(record)
        assert record["gold"] == item["answers"] and record["metrics"]["f1"] == 1.0
        assert [s["action"] for s in record["steps"]] == item["actions"]
        assert all(STEP_FIELDS <= set(s) and re.fullmatch(r"[0-9a-f]{64}", s["prompt_sha256"]) for s in record["steps"])
        assert record["kb_queries"] == sum(s["kb_queries"] for s in record["steps"]) > 0
        assert record["llm_calls"] == len(item["actions"]) and record["tokens_in"] > 0
        assert record["template_version"] == "queryagent-1" and record["model"] == "gold-replay"
    assert outcome.metrics.f1 == 1.0 and outcome.metrics.hit1 == 1.0 and outcome.new == 3
    summary = json.loads(summary_path(out).read_text())
    assert summary["metrics"]["questions"] == 3 and summary["metrics"]["f1"] == 1.0
    assert summary["settings"]["feedback"] == "eraser" and "| answer F1 | 1.000 |" in summary["table"]


def test_full_prompts_in_the_trace(tmp_path: Path) -> None:
    items = demo_items(1)
    out = tmp_path / "run.jsonl"
    run_eval(items, out, GoldLLM(items), RunSettings(kb="demo", trace_prompts="full"), progress=None)
    step = json.loads(out.read_text())["steps"][0]
    assert step["prompt"].rstrip().endswith("Thought 1:") and "Question: what category is tropical storm rachel?" in step["prompt"]


def test_resume_after_a_crash_does_not_redo_finished_questions(tmp_path: Path) -> None:
    items = demo_items(3)
    out = tmp_path / "run.jsonl"
    crashing = GoldLLM(items, interrupt_on="q02")  # Ctrl-C during the second question
    first = run_eval(items, out, crashing, RunSettings(kb="demo"), progress=None)
    assert first.interrupted and first.new == 1
    kept = out.read_text()
    assert [json.loads(line)["id"] for line in kept.splitlines()] == ["q01"]
    with out.open("a") as f:  # and a line cut short by a crash while writing
        f.write('{"id": "q02", "question": "which was the most rec')
    with pytest.raises(EvalError, match="already exists: give --resume"):
        run_eval(items, out, GoldLLM(items), RunSettings(kb="demo"), progress=None)

    again = GoldLLM(items)
    second = run_eval(items, out, again, RunSettings(kb="demo"), resume=True, progress=None)
    assert not second.interrupted and (second.new, second.skipped) == (2, 1)
    assert set(again.calls) == {"q02", "q03"}  # q01 was not asked again
    assert again.total == len(items[1]["actions"]) + len(items[2]["actions"])
    lines = out.read_text().splitlines()
    assert lines[0] == kept.rstrip("\n")  # the finished line is untouched
    assert [json.loads(line)["id"] for line in lines] == ["q01", "q02", "q03"]
    assert second.metrics.questions == 3 and second.metrics.f1 == 1.0

    third = GoldLLM(items)
    done = run_eval(items, out, third, RunSettings(kb="demo"), resume=True, progress=None)
    assert third.total == 0 and done.skipped == 3 and done.new == 0


def test_a_corrupt_line_in_the_middle_is_reported(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    out.write_text('{"id": "q01"}\n{oops\n{"id": "q02"}\n')
    with pytest.raises(EvalError, match=r"line 2 is not a run record"):
        read_run(out)


def test_concurrency_gives_the_same_results(tmp_path: Path) -> None:
    items = demo_items(5)  # gold actions that ERASER lets through (later demo questions skip get_relation)
    one = run_eval(items, tmp_path / "one.jsonl", GoldLLM(items), RunSettings(kb="demo"), progress=None)
    two_llm = GoldLLM(items)
    two = run_eval(items, tmp_path / "two.jsonl", two_llm, RunSettings(kb="demo"), concurrency=2, progress=None)

    def view(records: list[dict[str, Any]]) -> dict[str, Any]:
        return {r["id"]: (r["answers"], r["metrics"], r["kb_queries"], [s["observation"] for s in r["steps"]]) for r in records}

    assert view(one.records) == view(two.records)
    assert len(two.records) == 5 and two.metrics.f1 == one.metrics.f1 == 1.0
    assert two.metrics.qpq == one.metrics.qpq  # per-question KB counts are not mixed up by the shared KB


def test_shared_kb_counts_queries_per_question() -> None:
    provider = KBProvider("demo")
    a, b = provider.get(), provider.get()
    assert isinstance(a, LockedKB)
    a.select("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
    a.select("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
    assert (a.stats.queries, b.stats.queries) == (2, 0)


def test_ablation_flags_reach_the_environment() -> None:
    """``--advice block`` / ``--no-escalation`` (issue 11's ablation): the settings build environments that use them."""
    from agent.cli import _agent_arguments, _settings

    parser = __import__("argparse").ArgumentParser()
    _agent_arguments(parser)
    item = {"id": "x", "question": "q", "entities": {"Rachel": "m.0crbvqz"}}
    default = environment_for(item, KBProvider("demo").get(), _settings(parser.parse_args(["--kb", "demo"])))
    assert (default.run_advice, default.escalate) == (True, True)
    settings = _settings(parser.parse_args(["--kb", "demo", "--advice", "block", "--no-escalation"]))
    assert (settings.run_advice, settings.escalate) == (False, False)
    env = environment_for(item, KBProvider("demo").get(), settings)
    assert (env.run_advice, env.escalate) == (False, False)
    assert env.step("add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)").error == "fact_before_get_relation"


def test_summary_table_shows_eraser_triggers(tmp_path: Path) -> None:
    items = demo_items(1)
    llm = ScriptedLLM(
        [
            " Look.\nAction 1: get_relation(m.0crbvqz)",
            " Add.\nAction 2: add_fact(m.0crbvqz, ?x)",  # wrong arity: a guideline
            " Again.\nAction 3: add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?c)",
            " Done.\nAction 4: execute()",
        ],
        config=COMPLETION,
    )
    out = tmp_path / "run.jsonl"
    outcome = run_eval(items, out, llm, RunSettings(kb="demo"), progress=None)
    assert outcome.metrics.rules == {"wrong_arity": 1} and outcome.metrics.f1 == 1.0
    assert outcome.metrics.invalid_action_rate == 0.25
    text = outcome.summary["table"]
    assert "| invalid-action rate (of steps) | 0.250 |" in text
    assert "Table 9 view" in text and "| `wrong_arity` | error | 1 | 100.0% | Python |" in text
    assert "Table 8 view" in text and "| Python |" in text


def test_llm_failures_stop_the_run_and_are_redone_on_resume(tmp_path: Path) -> None:
    items = demo_items(5)
    out = tmp_path / "run.jsonl"
    dead = ScriptedLLM([LLMError("unauthorized", status=401)] * 10, config=COMPLETION)
    outcome = run_eval(items, out, dead, RunSettings(kb="demo"), progress=None, max_llm_failures=2)
    assert outcome.aborted and "2 questions in a row failed to run" in outcome.aborted
    assert [r["id"] for r in outcome.records] == ["q01", "q02"]
    assert all(r["error"].startswith("llm_error") for r in outcome.records)
    assert all(r["status"] == "failed_to_run" and r["metrics"] == {} for r in outcome.records)
    assert outcome.failed == ["q01", "q02"] and outcome.metrics.questions == 0 and outcome.metrics.failed_to_run == 2
    healed = GoldLLM(items)
    again = run_eval(items, out, healed, RunSettings(kb="demo"), resume=True, progress=None)
    assert set(healed.calls) == {"q01", "q02", "q03", "q04", "q05"} and again.metrics.errors == 0
    assert len(read_run(out)) == 7 and len(latest_records(read_run(out))) == 5  # the last line of an id wins


def test_progress_bar_and_bad_settings(tmp_path: Path) -> None:
    items = demo_items(2)
    stream = io.StringIO()
    run_eval(items, tmp_path / "run.jsonl", GoldLLM(items), RunSettings(kb="demo"), progress=stream)
    assert stream.getvalue().splitlines()[-1].startswith("[" + "#" * 30 + "] 2/2 F1 1.00")
    with pytest.raises(EvalError, match="give --kb"):
        run_eval(items, tmp_path / "other.jsonl", GoldLLM(items), RunSettings(), progress=None)
    with pytest.raises(EvalError, match="concurrency"):
        run_eval(items, tmp_path / "other.jsonl", GoldLLM(items), RunSettings(kb="demo"), concurrency=0, progress=None)


TABLE_REPLIES = [
    " The opponents.\nAction 1: get_column(Opponent)",
    " Athlone Town.\nAction 2: add_condition(Opponent, =, Athlone Town)",
    " Count the games.\nAction 3: set_answer(Game, COUNT)",
    " Done.\nAction 4: execute()",
]


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    """A one-shot example file (the bundled table example may not exist yet)."""
    path = tmp_path / "example.txt"
    path.write_text("Question: how many rows are there?\nThought 1: count them.\nAction 1: execute()\n")
    return path


@needs_shared("dbbench")
def test_eval_on_table_items_scores_denotation(tmp_path: Path, example: Path) -> None:
    item = load_dataset(DBBENCH)[1]
    out = tmp_path / "tables.jsonl"
    outcome = run_eval([item], out, ScriptedLLM(TABLE_REPLIES, config=COMPLETION), RunSettings(example=str(example)), progress=None)
    record = outcome.records[0]
    assert record["table"] == "Game Schedule" and record["answers"] == [{"value": "1", "label": None}]
    assert record["metrics"]["denotation"] == 1.0 and record["kb_queries"] > 0 and "COUNT" in record["query"]
    assert outcome.metrics.denotation == 1.0 and outcome.metrics.table_questions == 1
    assert "| denotation accuracy (1 table questions) | 1.000 |" in outcome.metrics.table()


@needs_shared("dbbench")
def test_ask_on_a_table_prints_the_json_contract(tmp_path: Path, example: Path) -> None:
    from agent.cli import ask_command
    from pyql.cli import build_parser

    item_file = tmp_path / "item.json"
    raw = next(json.loads(line) for i, line in enumerate(DBBENCH.read_text().splitlines()) if i == 1)
    item_file.write_text(json.dumps(raw))
    args = build_parser().parse_args(["ask", raw["description"], "--table-json", str(item_file), "--json", "--example", str(example)])
    out = io.StringIO()
    assert ask_command(args, out, llm=ScriptedLLM(TABLE_REPLIES, config=COMPLETION)) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [s["action"] for s in lines[:-1]] == [r.split("Action ", 1)[1].split(": ", 1)[1] for r in TABLE_REPLIES]
    assert lines[-1]["answers"] == [{"value": "1", "label": None}] and lines[-1]["steps"] == 4 and lines[-1]["kb_queries"] > 0


def test_readi_method_runs_through_the_same_runner() -> None:
    item = load_dataset(DEMO, limit=3)[2]
    llm = ScriptedLLM(['One entity.\nPath: {"Jamaica": [Jamaica -> location.country.languages_spoken]}',
                       "The answers are {Jamaican English} and {Jamaican Creole English Language}."], config=COMPLETION)
    record = run_question(item, llm, RunSettings(kb="demo", method="readi"), KBProvider("demo").get())
    assert record["method"] == "readi" and record["error"] is None and record["metrics"]["f1"] == 1.0
    assert record["llm_calls"] == 2 and record["kb_queries"] > 0


def test_eval_and_trace_commands_in_process(tmp_path: Path) -> None:
    from agent.cli import eval_command  # registers ask/eval/trace
    from pyql.cli import build_parser

    items = demo_items(2)
    out = tmp_path / "run.jsonl"
    args = build_parser().parse_args(["eval", str(DEMO), "--kb", "demo", "--out", str(out), "--limit", "2"])
    stdout, progress = io.StringIO(), io.StringIO()
    assert eval_command(args, stdout, llm=GoldLLM(items), progress=progress) == 0
    assert "| answer F1 | 1.000 |" in stdout.getvalue() and "2 answered now" in progress.getvalue()
    text = io.StringIO()
    assert main(["trace", str(out)], out=text) == 0 and "| questions | 2 |" in text.getvalue()
    bad = io.StringIO()
    assert main(["eval", str(DEMO), "--kb", "demo", "--out", str(out)], out=bad) == 2
    assert "already exists: give --resume" in bad.getvalue()
    assert main(["eval", str(DEMO), "--out", str(tmp_path / "x.jsonl"), "--concurrency", "0"], out=bad) == 2


# ---------------------------------------------------------------------------
# The real command line against a fake OpenAI-compatible server


class _FakeOpenAI(http.server.BaseHTTPRequestHandler):
    llm: GoldLLM
    hold: threading.Event | None = None
    hold_question: str | None = None

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "test"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        chat = self.path.endswith("/chat/completions")
        prompt = body["messages"] if chat else body["prompt"]
        qid, text = self.llm.reply_text(prompt)
        if qid == self.hold_question and self.hold is not None:
            self.hold.wait(30)  # keeps the question running until the test lets go
        with self.llm._lock:
            self.llm.calls[qid] = self.llm.calls.get(qid, 0) + 1
        choice = {"index": 0, "finish_reason": "stop", "logprobs": None}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        self._send(200, {"id": "x", "object": "chat.completion" if chat else "text_completion", "created": 0,
                         "model": "fake-model", "choices": [choice], "usage": usage})


@contextmanager
def fake_server(llm: GoldLLM, hold_question: str | None = None) -> Iterator[tuple[str, threading.Event]]:
    hold = threading.Event()
    handler = type("Handler", (_FakeOpenAI,), {"llm": llm, "hold": hold, "hold_question": hold_question})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", hold
    finally:
        hold.set()
        server.shutdown()
        server.server_close()


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def pyql(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pyql.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env=cli_env())


@pytest.mark.cli
def test_ask_json_through_a_real_http_server(tmp_path: Path) -> None:
    items = demo_items(2)
    q = items[1]
    llm = GoldLLM(items, mode="chat")
    with fake_server(llm) as (url, _):
        result = pyql("ask", q["question"], "--kb", "demo", "--entities", json.dumps(q["entities"]), "--json",
                      "--base-url", url, "--model", "fake-model", "--out", str(tmp_path / "ask.jsonl"))
        transcript = pyql("ask", q["question"], "--kb", "oxigraph:demo", "--entities", json.dumps(q["entities"]),
                          "--base-url", url, "--model", "fake-model", "--llm-mode", "completion")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    steps, last = lines[:-1], lines[-1]
    assert [s["action"] for s in steps] == q["actions"]
    assert all(set(s) == {"step", "action", "ok", "error", "observation"} and s["ok"] for s in steps)
    assert list(last) == ["answers", "steps", "llm_calls", "tokens_in", "tokens_out", "kb_queries", "seconds", "status", "error"]
    assert (last["status"], last["error"]) == ("finished", None)
    assert last["answers"] == [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]
    assert (last["steps"], last["llm_calls"], last["tokens_in"], last["tokens_out"]) == (9, 9, 900, 90)
    assert last["kb_queries"] > 0 and isinstance(last["seconds"], float)
    record = json.loads((tmp_path / "ask.jsonl").read_text())
    assert record["model"] == "fake-model" and record["question"] == q["question"]

    assert transcript.returncode == 0, transcript.stderr
    text = transcript.stdout
    assert "Thought 1: Following the gold query." in text and "Action 1: get_relation(m.0crbvqz)" in text
    assert "Observation 9 (ok):" in text and "Answers: m.0107j2dw (Tropical Storm Dolly)" in text
    assert "SPARQL:" in text and "[9 steps, 9 LLM calls" in text


@pytest.mark.cli
def test_ask_and_eval_usage_errors() -> None:
    result = pyql("ask", "what?", "--base-url", "http://127.0.0.1:9/v1")
    assert result.returncode == 2 and result.stderr.strip().startswith("pyql ask: give --kb")
    result = pyql("ask", "what?", "--kb", "demo", "--max-relations", "0")
    assert result.returncode == 2 and "--max-relations" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = pyql("eval", str(ROOT / "README.md"), "--kb", "demo", "--out", "/tmp/never.jsonl")
    assert result.returncode == 2 and "pyql: " in result.stderr


def test_ask_without_an_llm_says_how_to_configure_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent.llm.local

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(agent.llm.local, "local_available", lambda: False)  # as on a machine without pyql[local]
    err = io.StringIO()
    assert main(["ask", "what category is tropical storm rachel?", "--kb", "demo"], out=err) == 2
    message = err.getvalue().strip()
    assert len(message.splitlines()) == 1
    assert "no LLM is configured" in message and "--base-url" in message and "OPENAI_BASE_URL" in message
    assert "pip install 'pyql[local]'" in message


@pytest.mark.cli
def test_eval_cli_ctrl_c_then_resume(tmp_path: Path) -> None:
    """The real command: Ctrl-C (SIGINT) during the second question, then --resume finishes the run."""
    items = demo_items(3)
    out = tmp_path / "run.jsonl"
    data = tmp_path / "three.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items))
    llm = GoldLLM(items, mode="chat")
    common = [str(data), "--kb", "demo", "--out", str(out), "--model", "fake-model"]
    with fake_server(llm, hold_question="q02") as (url, hold):
        proc = subprocess.Popen([sys.executable, "-m", "pyql.cli", "eval", *common, "--base-url", url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=cli_env())
        deadline = time.monotonic() + 60
        while llm.calls.get("q01", 0) < len(items[0]["actions"]) or not out.exists() or not out.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.3)  # q02's first request is now held by the server
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert "interrupted" in stderr and "--resume" in stderr
        assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["q01"]
        hold.set()
        before = dict(llm.calls)
        llm.calls.clear()
        result = subprocess.run([sys.executable, "-m", "pyql.cli", "eval", *common, "--base-url", url, "--resume",
                                 "--concurrency", "2"], capture_output=True, text=True, cwd=ROOT, env=cli_env(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert before["q01"] == len(items[0]["actions"]) and "q01" not in llm.calls
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()][0] == "q01"
    assert sorted(json.loads(line)["id"] for line in out.read_text().splitlines()) == ["q01", "q02", "q03"]
    assert "| answer F1 | 1.000 |" in result.stdout and "| questions | 3 |" in result.stdout
    assert summary_path(out).is_file()


class _PickByText:
    """Answers a choice prompt with the number of the first listed step that contains the next wanted text."""

    def __init__(self, wanted: list[str]) -> None:
        self.wanted, self.config = list(wanted), COMPLETION

    def complete(self, prompt: Any, *, stop: Any = None, tools: Any = None, grammar: Any = None) -> LLMReply:
        listing = prompt.rsplit("Choices ", 1)[1]
        want = self.wanted.pop(0)
        number = next(line.split(".", 1)[0] for line in listing.splitlines()[1:] if want in line)
        return LLMReply(number, usage_in=100, usage_out=1)


def test_ask_and_eval_with_the_choose_action_mode(tmp_path: Path) -> None:
    from agent.cli import ask_command, eval_command
    from pyql.cli import build_parser

    args = build_parser().parse_args(["ask", "what category is tropical storm rachel?", "--kb", "demo", "--json",
                                      "--entities", '{"Tropical Storm Rachel": "m.0crbvqz"}', "--action-mode", "choose"])
    out = io.StringIO()
    llm = _PickByText(["meteorology.tropical_cyclone.category, ?category)", "set_answer(?category)", "execute()"])
    assert ask_command(args, out, llm=llm) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["action"] == "get_relation(m.0crbvqz)"  # the environment's own look
    assert lines[-1]["answers"] == [{"value": "m.05f4r3k", "label": "Tropical storm (SSHS)"}]
    assert lines[-1]["llm_calls"] == 3 and lines[-1]["tokens_in"] == 300
    table = tmp_path / "t.jsonl"
    table.write_text(json.dumps({"question": "how many?", "table": {"header": ["a"], "rows": [["1"]]}, "answers": ["1"]}) + "\n")
    args = build_parser().parse_args(["eval", str(table), "--out", str(tmp_path / "r.jsonl"), "--action-mode", "choose"])
    assert eval_command(args, io.StringIO(), llm=_PickByText(["set_answer(a, COUNT)", "execute()"])) == 0  # tables too
    row = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])
    # one column: set_answer(a, COUNT) is the only listed step, then execute() after it: neither is a choice
    assert [a["value"] for a in row["answers"]] == ["1"] and row["llm_calls"] == 0
    assert [s["without_call"].split(" (")[0] for s in row["steps"]] == ["the only listed step", "the answer is set"]


def test_first_relation_model_needs_the_local_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--first-relation model`` without llama-cpp-python: a usage error that says what to install, before any question."""
    import agent.cli
    from pyql.cli import UsageError, build_parser

    args = build_parser().parse_args(["ask", "q?", "--kb", "demo", "--action-mode", "choose", "--first-relation", "model"])
    monkeypatch.setattr(agent.cli, "missing_local_packages", lambda: ["llama_cpp"])
    with pytest.raises(UsageError, match=r"--first-relation model .*pip install.*missing: llama_cpp"):
        agent.cli._settings(args)
    monkeypatch.setattr(agent.cli, "missing_local_packages", lambda: [])
    assert agent.cli._settings(args).agent_config().first_relation == "model"
    # the default: the model for the bundled model in choose mode (when it can score), else the ranking
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL", "PYQL_LLM_MODE"):
        monkeypatch.delenv(name, raising=False)
    assert agent.cli._settings(build_parser().parse_args(["ask", "q?", "--kb", "demo"])).first_relation == "model"
    remote = ["ask", "q?", "--kb", "demo", "--base-url", "https://api.example.com/v1", "--model", "gpt-4o-mini"]
    assert agent.cli._settings(build_parser().parse_args([*remote, "--action-mode", "choose"])).first_relation == "ranked"
    text = build_parser().parse_args(["ask", "q?", "--kb", "demo", "--action-mode", "text"])
    assert agent.cli._settings(text).first_relation == "ranked"
    monkeypatch.setattr(agent.cli, "missing_local_packages", lambda: ["llama_cpp"])
    assert agent.cli._settings(build_parser().parse_args(["ask", "q?", "--kb", "demo"])).first_relation == "ranked"
    # previews: off for the bundled model (it does not read them), on for another, as asked when asked
    assert agent.cli._settings(build_parser().parse_args(["ask", "q?", "--kb", "demo"])).agent_config().choice_preview is False
    assert agent.cli._settings(build_parser().parse_args([*remote, "--action-mode", "choose"])).choice_preview is True
    asked = build_parser().parse_args(["ask", "q?", "--kb", "demo", "--choice-preview", "yes"])
    assert agent.cli._settings(asked).agent_config().choice_preview is True


def test_default_action_mode_is_choose_for_the_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.cli import _action_mode
    from pyql.cli import build_parser

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYQL_MODEL", "PYQL_LLM_MODE"):
        monkeypatch.delenv(name, raising=False)

    def mode(*flags: str, llm: Any = None) -> str:
        return _action_mode(build_parser().parse_args(["ask", "q?", "--kb", "demo", *flags]), llm)

    assert mode() == "choose"  # nothing configured: the local model
    assert mode("--base-url", "http://127.0.0.1:8000/v1", "--model", "gemma-3-270m") == "choose"
    assert mode("--base-url", "https://api.example.com/v1", "--model", "gpt-4o-mini") == "text"
    assert mode("--action-mode", "grammar") == "grammar"
    assert _action_mode(build_parser().parse_args(["ask", "q?", "--table-json", "t.json"])) == "choose"  # tables too
    assert _action_mode(build_parser().parse_args(["ask", "q?", "--table-json", "t.json", "--base-url",
                                                   "https://api.example.com/v1", "--model", "gpt-4o-mini"])) == "text"
    assert mode(llm=ScriptedLLM([])) == "text"
