"""The ERASER registry, templates, statistics and docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from correction import (
    Eraser,
    EraserError,
    Registry,
    Rule,
    RuleError,
    TriggerStats,
    UnknownRuleError,
    markdown_table,
    registry,
    rule,
)
from correction.guidelines import TEMPLATE_DIR, Renderer, TemplateError, renderer
from correction.registry import ENVIRONMENTS
from correction.stats import StatsError
from pyql.environment.actions import ActionSet, StepResult, action
from pyql.environment import Environment
from pyql.kb import KB
from pyql.environment.sparql import SparqlEnvironment
from tests.demo import DemoEnv

ROOT = Path(__file__).resolve().parent.parent

REQUIRED = {
    "invalid_action",
    "no_action",
    "multiple_actions",
    "wrong_arity",
    "unlinked_entity",
    "unbound_variable",
    "relation_as_argument",
    "fact_before_get_relation",
    "fact_two_new_variables",
    "fact_empty_known_relation",
    "fact_empty_unknown_relation",
    "get_relation_empty",
    "filter_before_get_relation",
    "filter_bad_operator",
    "filter_bad_operand",
    "filter_empty",
    "answer_not_variable",
    "answer_unnamed_node",
    "engine_error",
}


def test_required_ids_are_registered():
    assert REQUIRED <= set(registry.ids)
    assert len(registry.ordered("sparql")) >= 33


def test_checking_order_interpreter_then_memory_then_kb():
    for side in ("sparql", "sql"):
        envs = [r.env for r in registry.ordered(side)]
        assert envs == sorted(envs, key=ENVIRONMENTS.index)
        for env in ENVIRONMENTS:
            group = [r for r in registry.ordered(side) if r.env == env]
            flags = [r.fallback for r in group]
            assert flags == sorted(flags), f"fallbacks come last among the {env} rules"


def test_every_rule_is_documented_and_has_its_template():
    templates = {p.name for p in TEMPLATE_DIR.glob("*.j2") if not p.name.startswith("_")}
    for r in registry:
        assert r.doc and r.suggests, r.id
        assert r.template in templates, r.id
        assert re.fullmatch(r"(KB|Python|RM)(\+(KB|Python|RM))*", r.feedback_type), r.id
    orphans = templates - {r.template for r in registry}
    assert not orphans, f"templates without a rule: {orphans}"


def test_templates_are_strict():
    with pytest.raises(TemplateError, match="undefined"):
        Renderer().render("unlinked_entity.j2", step=1, next_step=2)
    with pytest.raises(TemplateError, match="no guideline template"):
        Renderer().render("nope.j2")


def test_templates_end_with_the_regenerate_instruction():
    """Error guidelines end with the paper's instruction; advice is a note on a step that ran."""
    advice = {r.template for r in registry if r.kind == "advice"}
    for path in TEMPLATE_DIR.glob("*.j2"):
        if path.name.startswith("_"):
            continue
        ends = path.read_text().rstrip().endswith('{% include "_regenerate.j2" %}')
        assert ends == (path.name not in advice), path.name


def test_every_rule_declares_its_kind():
    """Every registered rule says whether the step cannot be right (error) or skipped a look (advice)."""
    kinds = {r.id: r.kind for r in registry}
    assert set(kinds.values()) == {"error", "advice"}
    assert kinds["fact_before_get_relation"] == "advice"
    for error in ("wrong_arity", "unlinked_entity", "unbound_variable", "answer_not_variable", "fact_empty_unknown_relation",
                  "filter_before_get_relation", "sql_condition_before_get_column", "sql_unknown_column"):
        assert kinds[error] == "error", error
    # advice rules only look before a step runs and only at what an environment can look up itself
    assert all(r.phase == "before" and r.env == "memory" for r in registry if r.kind == "advice")
    with pytest.raises(TypeError, match="kind"):
        rule("no_kind", env="memory", phase="before", doc="d", suggests="s", into=Registry())
    with pytest.raises(RuleError, match="kind must be one of error, advice"):
        Rule("bad_kind", "memory", "before", lambda r, e: None, kind="hint")


def test_user_audience_has_no_thoughts_to_regenerate(demo_env: DemoEnv):
    """`pyql run` has no LLM: its guidelines do not ask to re-generate a Thought."""
    env = demo_env(entities={"Rachel": "m.0crbvqz"}, analyzer=Eraser(audience="user"))
    record = env.step("get_relation(?stream)")
    assert record.error == "unbound_variable"
    assert "Thought" not in record.guideline
    assert record.guideline.endswith("Correct this action and run it again.")
    with pytest.raises(EraserError, match="audience"):
        Eraser(audience="robot")


def test_shared_rules_are_generic():
    shared = {r.id for r in registry if r.sides == frozenset({"sparql", "sql"})}
    assert {"invalid_action", "wrong_arity", "no_action", "multiple_actions", "syntax_error"} <= shared


def test_kb_query_budgets_are_declared():
    budgets = {r.id: r.kb_queries for r in registry}
    # Memory rules send nothing, except the bounded ASKs that complete a relation
    # list capped on a hub before a relation is called misdirected or unknown,
    # and, in pyql run only, one ASK per unlinked id whether it is in the KB.
    asking = {"fact_wrong_direction": 1, "time_constraint_unknown_relation": 2, "unlinked_entity": 2}
    assert {r.id: r.kb_queries for r in registry if r.env != "kb" and r.kb_queries} == asking
    assert budgets["fact_empty_unknown_relation"] == budgets["fact_empty_known_relation"] == 1
    assert all(r.kb_queries <= 1 for r in registry if r.id not in asking)


def test_registry_errors():
    reg = Registry()

    @rule("one", kind="error", env="memory", phase="before", doc="d", suggests="s", into=reg)
    def one(record, env):
        return None

    with pytest.raises(RuleError, match="already registered"):
        reg.register(Rule("one", "memory", "before", one, kind="error"))
    with pytest.raises(RuleError, match="env must be one of"):
        Rule("two", "python", "before", one, kind="error")
    with pytest.raises(RuleError, match="phase must be one of"):
        Rule("two", "memory", "during", one, kind="error")
    with pytest.raises(UnknownRuleError, match="registered rules: one"):
        reg.get("two")


def test_eraser_configuration_errors():
    with pytest.raises(UnknownRuleError) as info:
        Eraser(disabled={"nope"})
    assert "nope" in str(info.value) and "unlinked_entity" in str(info.value)
    with pytest.raises(EraserError, match="max_choices"):
        Eraser(max_choices=0)


def test_choices_are_capped(demo_kb: KB):
    entities = {f"E{i}": mid for i, mid in enumerate(["m.0crbvqz", "m.0dkl7", "m.0n9cgl4", "m.03_r3", "m.04ly1"])}
    env = SparqlEnvironment(demo_kb, entities=entities, analyzer=Eraser(max_choices=2))
    record = env.step("get_relation(m.0nonexistent)")
    assert record.error == "unlinked_entity"
    assert "get_relation(m.0crbvqz), get_relation(m.0dkl7) and 3 more" in record.guideline
    assert renderer(2).render_string("{{ xs | choices }}", xs="abcd") == "a, b and 2 more"


def test_docs_table_is_current():
    text = (ROOT / "docs" / "eraser.md").read_text(encoding="utf-8")
    table = markdown_table(side="sparql")
    assert table in text, "docs/eraser.md is out of date: paste correction.markdown_table(side='sparql') into it"
    assert len(re.findall(r"^\| \d+ \| `", table, re.M)) == len(registry.ordered("sparql"))


# -- statistics -------------------------------------------------------------------


def test_trigger_stats_per_run_and_merged(demo_kb: KB):
    runs = []
    for lines in (
        ["get_relation(?stream)", "foo()", "get_relation(?x)"],
        ["add_fact(?a, ?b)", "get_relation(m.0crbvqz)"],
    ):
        eraser = Eraser()
        env = SparqlEnvironment(demo_kb, entities={"Tropical Storm Rachel": "m.0crbvqz"}, analyzer=eraser)
        env.run(lines)
        runs.append(eraser.stats)
    assert runs[0].counts == {"unbound_variable": 2, "invalid_action": 1}
    total = TriggerStats.combine(runs)
    assert total.counts == {"unbound_variable": 2, "invalid_action": 1, "wrong_arity": 1}
    assert total.steps == 5 and total.total == 4
    assert runs[0] + runs[1] == total
    table = total.table()
    assert table.splitlines()[2] == "| `unbound_variable` | error | 2 | 50.0% | RM |"
    assert "| `invalid_action` | error | 1 | 25.0% | Python |" in table
    plain = total.table(fmt="plain")
    assert plain.splitlines()[0].split() == ["rule", "kind", "triggers", "share", "type"]
    envs = total.table(view="environments")
    assert "| Python |" in envs and "| RM |" in envs and envs.splitlines()[-1].startswith("| total |")
    assert total.to_dict()["counts"]["unbound_variable"] == 2
    with pytest.raises(StatsError, match="markdown, plain"):
        total.table(fmt="html")
    with pytest.raises(StatsError, match="rules, environments"):
        total.table(view="all")


# -- the SQL side: shared rules are generic over the action set ----------------------------


class TableActions(ActionSet):
    """A stand-in for the SQL twin's action set."""

    @action("interact", column="text")
    def get_column(self, env, column):
        """Get the values of a column.

        Example: get_column(Player)
        """
        return StepResult(result=[column], observation=column)

    @action("construct", column="text", op="operator", value="text")
    def add_condition(self, env, column, op, value):
        """Add a condition column op value.

        Example: add_condition(Player, =, Smith)
        """
        return StepResult(observation="ok")

    @action("terminate")
    def execute(self, env):
        """Run the query."""
        return StepResult(observation="done", done=True)


class TableEnvironment(Environment):
    side = "sql"

    def __init__(self, analyzer):
        super().__init__(TableActions(), analyzer=analyzer)

    def empty_query(self):
        return None

    def convert(self, param_kind, arg, action, name, position):
        return arg.value


def _shared_registry() -> Registry:
    reg = Registry()
    for shared in registry:
        if shared.sides == frozenset({"sparql", "sql"}):
            reg.register(shared)
    return reg


def test_shared_rules_run_on_the_sql_side():
    eraser = Eraser(registry=_shared_registry())
    env = TableEnvironment(eraser)
    bad = env.step("get_relation(Player)")
    assert bad.error == "invalid_action"
    assert "add_condition(), execute(), get_column()" in bad.guideline  # env.actions.names
    arity = env.step("add_condition(Player, =)")
    assert arity.error == "wrong_arity"
    assert arity.guideline.startswith("add_condition(column, op, value) should have 3 parameters. You have 2")
    assert env.step("get_column(Player)").ok  # no SPARQL rule runs here
    assert all("sql" in r.sides for r in Eraser().rules("sql", "before"))
    assert not any(r.sides == frozenset({"sparql"}) for r in Eraser().rules("sql", "after"))


def test_a_new_side_can_register_its_own_rules():
    reg = _shared_registry()

    @rule("demo_unknown_column", kind="error", env="memory", phase="before", sides=("sql",), actions=("get_column",),
          doc="the column does not exist", suggests="the columns", into=reg, template="unbound_variable.j2")
    def unknown_column(record, env):
        if record.args.get("column") != "Player":
            return {"var": record.args.get("column"), "is_get_relation": False, "choices": [], "variables": ["Player"]}
        return None

    env = TableEnvironment(Eraser(registry=reg))
    record = env.step("get_column(Score)")
    assert record.error == "demo_unknown_column"
    assert record.guideline.endswith("Please re-generate only Thought 2 and Action 2.")
    assert [r.id for r in reg.ordered("sql")][-1] == "empty_result"  # fallbacks stay last
