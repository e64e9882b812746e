"""Logical-form exact match (GrailQA's EM) joins the metrics of runs whose items have a gold S-expression."""

from __future__ import annotations

import json
from pathlib import Path

from agent.evaluation.metrics import aggregate, logical_form_match, record_scores
from agent.evaluation.smoke import smoke_run
from pyql.interchange.sexpr import read_sexpr
from pyql.builder.profiles import FREEBASE

ROOT = Path(__file__).resolve().parents[1]
GRAILQA = ROOT / "tests" / "data" / "grailqa" / "grailqa_v1.0_dev.json"


def test_the_chain_of_a_gold_form_matches_it_and_a_changed_chain_does_not() -> None:
    for record in json.loads(GRAILQA.read_text()):
        form = record["s_expression"]
        chain = read_sexpr(form, {}, FREEBASE).actions()
        assert logical_form_match(chain, form)
        # the same chain with its class constraints left out is another logical form
        assert not logical_form_match([a for a in chain if not a.startswith("add_type_constrain")], form)


def test_a_chain_that_cannot_be_written_is_no_match() -> None:
    assert not logical_form_match(["add_fact(?x, a.b.c, ?y)", "add_filter(?x, !=, ?y)", "set_answer(?x)"], "(JOIN a.b.c m.0a)")
    assert not logical_form_match(["add_fact(?x, a.b.c"], "(JOIN a.b.c m.0a)")


def test_a_grailqa_run_records_the_gold_form_and_scores_it(tmp_path: Path) -> None:
    """The smoke run replays GrailQA's graph-query chains: right answers, but without the class
    constraints the S-expressions have, so their logical forms differ (EM 0 of 4, the tied superlative
    included now that its chain keeps ties)."""
    outcome = smoke_run("grailqa", tmp_path)
    assert outcome.records and all(r["gold_form"].startswith("(") and r["chain"] for r in outcome.records)
    assert all(r["metrics"]["f1"] == 1.0 for r in outcome.records)
    assert [record_scores(r)["lf_em"] for r in outcome.records] == [0.0, 0.0, 0.0, 0.0]
    metrics = aggregate(outcome.records)
    assert (metrics.lf_em, metrics.lf_questions) == (0.0, 4)
    assert any(name.startswith("logical-form EM (4 questions") for name, _ in metrics.rows())
    # the same records with the gold forms' own chains match
    fixed = []
    for record in outcome.records:
        fixed.append({**record, "chain": read_sexpr(record["gold_form"], {}, FREEBASE).actions()})
    assert aggregate(fixed).lf_em == 1.0


def test_runs_without_gold_forms_show_no_logical_form_row() -> None:
    metrics = aggregate([{"answers": [], "gold": ["m.1"], "done": True, "steps": []}])
    assert metrics.lf_em is None and not any("logical-form" in name for name, _ in metrics.rows())
