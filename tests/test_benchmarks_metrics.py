"""Metrics as the papers define them: EM, Hit@1 with CWQ aliases, WTQ denotation, per-category and paper-layout tables."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from agent.evaluation.datasets import load_dataset
from agent.evaluation.runner import Progress
from agent.evaluation.metrics import (
    BENCHMARKS,
    PAPER_RESULTS,
    CategoryProgress,
    MetricsError,
    aggregate,
    benchmark_of,
    by_category,
    category_table,
    exact_match,
    hit_at_1,
    paper_table,
    record_scores,
    summary_markdown,
    summary_markdown_path,
    write_summary_markdown,
    wtq_denotation_match,
    wtq_normalize,
    wtq_value,
)

DATA = Path(__file__).resolve().parent / "data"


def _record(item: dict, answers: list, **extra: object) -> dict:
    return {"id": item["id"], "source": item["source"], "kind": item["kind"], "gold": item["answers"],
            "answers": answers, "table": "t" if item.get("table") else None, **extra}


def test_cwq_hit1_counts_an_alias_and_not_a_wrong_answer() -> None:
    gold = load_dataset(DATA / "cwq" / "ComplexWebQuestions_sample.json")[0]["answers"]
    assert hit_at_1([{"value": "m.0x", "label": "The District"}], gold) == 1.0
    assert hit_at_1(["washington d.c."], gold) == 1.0
    assert hit_at_1([{"value": "m.0x", "label": "Maryland"}, "The District"], gold) == 0.0  # only the first counts


def test_wtq_denotation_reads_canonical_gold_values_as_the_official_evaluator() -> None:
    items = {i["id"]: i for i in load_dataset(DATA / "wtq" / "data" / "pristine-unseen-tables.tsv")}
    season, date, month, number = items["nu-1475"], items["nu-66"], items["nu-914"], items["nu-1"]

    def denotation(item: dict, answers: list, gold: list | None = None) -> float:
        record = _record(item, answers)
        if gold is not None:
            record["gold"] = gold
        return record_scores(record)["denotation"]

    assert denotation(season, ["2"]) == 1.0  # "Season 2" has the canonical value 2
    assert denotation(season, ["2"], gold=["Season 2"]) == 0.0  # the raw targetValue alone is a string
    assert denotation(season, ["Season 2"]) == 1.0
    assert denotation(date, ["2010-12-06"]) == denotation(date, ["December 6, 2010"]) == 1.0
    assert denotation(date, ["2010-12-07"]) == 0.0
    assert denotation(month, ["october"]) == 1.0 and denotation(month, ["10"]) == 0.0  # a month is a date, not a number
    assert denotation(number, ["100000"]) == denotation(number, ["100,000"]) == 1.0
    assert denotation(number, ["100000", "100000.0"]) == 1.0  # one value, as in the evaluator's set of values
    assert denotation(number, ["100000", "100,000.0"]) == 0.0  # "100,000.0" is no number: two values


def test_per_type_table_for_cwq() -> None:
    items = load_dataset(DATA / "cwq" / "cwq_tog.json").items
    records = [_record(i, [i["answers"][0]] if n % 2 == 0 else ["wrong"]) for n, i in enumerate(items)]
    groups = by_category(records, "type")
    assert {k: g.hit1 for k, g in groups.items()} == {"composition": 1.0, "conjunction": 0.0, "comparative": 1.0, "superlative": 0.0}
    assert records[0]["gold"] == ["Belmont University"] and hit_at_1(["belmont university"], records[0]["gold"]) == 1.0


def test_exact_match_is_set_equality() -> None:
    gold = load_dataset(DATA / "metaqa" / "1-hop" / "vanilla" / "qa_test.txt")[1]["answers"]
    assert exact_match(["The Inbetweeners 2", "the inbetweeners movie"], gold) == 1.0
    assert exact_match(["The Inbetweeners 2"], gold) == 0.0
    assert exact_match(["The Inbetweeners 2", "The Inbetweeners Movie", "Kismet"], gold) == 0.0


@pytest.mark.parametrize(
    ("predicted", "gold", "ok"),
    [
        (["22"], ["22"], True),
        (["22.0"], ["22"], True),  # numbers by value
        (["21"], ["22"], False),
        (["Lake Palas Tuzla"], ["lake palas tuzla"], True),  # case
        (["Málaga CF"], ["Malaga CF"], True),  # accents
        (["1–0"], ["1-0"], True),  # dash variants
        (["Abu al-Duhur Military Airbase [1]"], ["Abu al-Duhur Military Airbase"], True),  # citation
        (["Barack Obama (politician)"], ["Barack Obama"], True),  # parenthesized detail
        (["2009-11-xx"], ["2009-11-xx"], True),
        (["2009-11-xx"], ["2009-12-xx"], False),
        (["1994-xx-xx"], ["1994"], True),  # a year-only date is the number
        (["Morocco", "France"], ["France", "Morocco"], True),  # order does not matter
        (["Morocco", "France"], ["Morocco", "France", "Spain"], False),  # the count must match
        ([], ["10"], False),
    ],
)
def test_wtq_denotation(predicted: list, gold: list, ok: bool) -> None:
    assert wtq_denotation_match(predicted, gold) is ok


def test_wtq_values() -> None:
    assert wtq_value("3:02.57") == ("string", "3:02.57")
    assert wtq_value({"value": 5.0, "label": None}) == ("number", 5.0)
    assert wtq_normalize('"The Sound Of Trees"') == "the sound of trees"


def test_a_wtq_record_is_scored_with_wtq_rules_and_wikisql_with_its_own() -> None:
    wtq = load_dataset(DATA / "wtq" / "data" / "training-before300.tsv")[2]
    assert record_scores(_record(wtq, [{"value": "10.0", "label": None}]))["denotation"] == 1.0
    wikisql = load_dataset(DATA / "wikisql" / "dev.jsonl")[1]
    assert record_scores(_record(wikisql, [{"value": "1", "label": None}]))["denotation"] == 1.0
    assert record_scores(_record(wikisql, [{"value": "2", "label": None}]))["denotation"] == 0.0


def test_per_level_table_for_grailqa() -> None:
    items = {i["kind"]: i for i in load_dataset(DATA / "grailqa" / "grailqa_v1.0_dev.json").items}  # one item per level
    iid, zero, comp = items["i.i.d."], items["zero-shot"], items["compositional"]
    records = [
        _record(iid, [iid["answers"][0]], seconds=10.0, kb_queries=4),
        _record(zero, [], seconds=20.0, kb_queries=8),
        _record(comp, [comp["answers"][0]], seconds=30.0, kb_queries=6),  # one of its two answers
    ]
    groups = by_category(records, "level")
    assert list(groups) == ["i.i.d.", "compositional", "zero-shot"]  # the paper's order, not alphabetical
    assert (groups["i.i.d."].f1, groups["zero-shot"].f1) == (1.0, 0.0)
    assert groups["compositional"].f1 == pytest.approx(2 / 3) and groups["compositional"].em == 0.0
    table = category_table(records, "level").splitlines()
    assert table[2] == "| i.i.d. | 1 | 100.0 | 100.0 | 100.0 | - | 10.00 | 4.00 |"
    assert table[-1].startswith("| overall | 3 | 55.6 |")


def test_category_errors_and_missing_kinds() -> None:
    with pytest.raises(MetricsError, match="use one of comp_level, composition, level, type"):
        category_table([], "hop")
    assert list(by_category([{"answers": [], "gold": []}], "type")) == ["(none)"]


def test_benchmark_of_records() -> None:
    assert benchmark_of([{"source": "metaqa", "id": "1-hop-qa_test-0"}]) == "metaqa-1hop"
    assert benchmark_of([{"source": "metaqa", "id": "qa_test-0"}]) == "metaqa"
    assert benchmark_of([{"source": "webqsp", "id": "WebQTest-0"}]) == "webqsp"
    assert benchmark_of([{"source": "dbbench", "id": "dev-0"}]) == "wikisql"
    assert benchmark_of([]) is None


def test_every_paper_row_names_a_known_benchmark_and_metric() -> None:
    for bench, _, _, values in PAPER_RESULTS:
        assert bench in BENCHMARKS
        assert set(values) <= set(BENCHMARKS[bench][1]) | {"tpq", "qpq", "cpq"}


def test_paper_table_puts_the_run_under_the_papers_rows() -> None:
    items = load_dataset(DATA / "grailqa" / "grailqa_v1.0_dev.json").items
    records = [_record(i, i["answers"], seconds=2.0, kb_queries=5, cost_usd=0.01) for i in items]
    lines = paper_table(records, "grailqa", run_label="this run: queryagent, gpt-4o-mini").splitlines()
    assert lines[0] == "| GrailQA (dev) | reported in | F1 | EM | TPQ | QPQ | CPQ |"
    assert "| QueryAgent, gpt-3.5-turbo | QueryAgent Tables 2, 4 | 60.5 |  | 16.6 s | 5.2 | $ 0.019 |" in lines
    assert lines[-1] == "| this run: queryagent, gpt-4o-mini | pyql | 100.0 | 100.0 | 2.0 s | 5.0 | $ 0.010 |"
    with pytest.raises(MetricsError, match="unknown benchmark"):
        paper_table(records, "freebaseqa")


def test_summary_markdown_has_paper_layout_categories_and_all_metrics(tmp_path: Path) -> None:
    items = load_dataset(DATA / "metaqa" / "1-hop" / "vanilla" / "qa_test.txt").items
    records = [_record(i, i["answers"][:1]) for i in items]
    text = summary_markdown(records, dataset="qa_test.txt", model="gpt-4o-mini", method="readi")
    assert "## MetaQA 1-hop (test), as in the papers' tables" in text
    assert "| Readi, gpt-3.5-turbo | Readi Table 1 | 98.4 |" in text
    assert "| this run: readi, gpt-4o-mini | pyql | 100.0 |" in text  # Hit@1: the first answer is right
    assert "## Per type" in text and "| actor_to_movie | 5 |" in text
    assert "| answer EM |" in text
    path = write_summary_markdown(tmp_path / "run.summary.json", records)
    assert path == summary_markdown_path(tmp_path / "run.summary.json") == tmp_path / "run.summary.md"
    assert path.read_text().startswith("# Run summary")


def test_aggregate_reports_em() -> None:
    m = aggregate([{"answers": ["a"], "gold": ["a"]}, {"answers": ["a", "b"], "gold": ["a"]}])
    assert (m.em, m.to_dict()["em"]) == (0.5, 0.5)
    assert ("answer EM", "0.500") in m.rows()


def test_category_progress_text() -> None:
    p = CategoryProgress(limit=2)
    for kind, f1 in [("i.i.d.", 1.0), ("zero-shot", 0.0), ("zero-shot", 1.0), ("compositional", 1.0), ("compositional", 1.0)]:
        p.update({"kind": kind, "metrics": {"f1": f1}})
    p.update({"kind": None, "metrics": {"f1": 1.0}})
    p.update({"kind": "tbl", "metrics": {"f1": 0.0, "denotation": 1.0}})
    assert p.text() == "compositional 1.00 (2) | zero-shot 0.50 (2) | other 1.00 (3)"  # i.i.d., tbl, and no kind


def test_the_progress_line_accounts_for_every_question() -> None:
    kinds = ["one-hop"] * 8 + ["time-constraint"] * 6 + ["argmax"] * 3 + ["two-hop"] * 3 + ["count"] * 2 + [
        "comparison", "superlative", "union", "filter", None] + ["one-hop"] * 2
    stream = io.StringIO()
    bar = Progress(len(kinds) + 1, stream, every=1)
    for number, kind in enumerate(kinds):
        bar.update({"id": f"q{number}", "kind": kind, "metrics": {"f1": float(number % 2)}})
    bar.update({"id": "failed", "kind": "one-hop", "status": "failed_to_run", "metrics": {}})
    line = stream.getvalue().splitlines()[-1]
    assert line.startswith(f"[{'#' * 30}] {len(kinds) + 1}/{len(kinds) + 1} ")
    counts = [int(n) for n in re.findall(r"\((\d+)\)", line.split(" [", 1)[1])]
    assert sum(counts) == len(kinds) + 1 == bar.categories.counted
    assert "| other " in line and line.endswith("| not scored (1)] failed")

