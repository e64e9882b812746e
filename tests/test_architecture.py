"""The house stays in shape: no import cycles, no import of a higher floor, one vocabulary.

Every module of the five packages is parsed with ``ast``. Every import
counts (at module level, inside functions, under ``if TYPE_CHECKING:``):
an import inside a function is no way out of a cycle. ``from pkg import x``
counts as an import of ``pkg.x`` when that is a module, else of ``pkg``
(its ``__init__``). Doctests in docstrings are text, not imports.

Floors, lowest first: grammars, pyql, pyql_sql, correction, agent, and the
CLI wiring on top (``agent.cli``, loaded through the ``pyql.commands``
entry point; nothing imports it). Inside ``agent`` the rooms have floors
too: its base modules (errors, run-file JSON, faults), then ``agent.llm``,
``agent.methods``, ``agent.evaluation``. Inside ``pyql`` too: its base
modules (errors, echo, lines, the action parser, the recording store), then
``pyql.builder``, ``pyql.kb``, ``pyql.environment``, ``pyql.interchange``, and
the command's modules on top (``pyql.cli``, ``pyql.demo``, ``pyql.api_docs``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("grammars", "pyql", "pyql_sql", "correction", "agent")
CLI_WIRING = {"agent.cli"}
FLOOR = {name: i for i, name in enumerate(PACKAGES)}


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for file in (ROOT / package).rglob("*.py"):
            parts = file.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = file
    return out


MODULES = _modules()


def _imports(name: str, file: Path) -> set[str]:
    tree = ast.parse(file.read_text(encoding="utf-8"))
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            found.update(a.value for a in node.args[:1] if isinstance(a, ast.Constant))
    targets = set()
    for module in found:
        parts = module.split(".")
        while parts and ".".join(parts) not in MODULES:
            parts.pop()
        if parts and ".".join(parts) != name:
            targets.add(".".join(parts))
    return targets


GRAPH = {name: _imports(name, file) for name, file in MODULES.items()}


#: The rooms of ``agent``, lowest first; a module not in a room is on the room floor 0.
AGENT_ROOMS = ("agent.llm", "agent.methods", "agent.evaluation")


#: The rooms of ``pyql``, lowest first; a module not in a room is on the room floor 0 (the base), but the command's.
PYQL_ROOMS = ("pyql.builder", "pyql.kb", "pyql.environment", "pyql.interchange")
#: The modules of the ``pyql`` command and the package's own facade (``from pyql import Query``), above every room.
PYQL_TOP = {"pyql", "pyql.cli", "pyql.demo", "pyql.api_docs"}


def _room_floor(module: str, rooms: tuple[str, ...]) -> float:
    for i, room in enumerate(rooms, start=1):
        if module == room or module.startswith(room + "."):
            return i / (len(rooms) + 2)
    return 0.0


def _floor(module: str) -> float:
    if module in CLI_WIRING:
        return len(PACKAGES)
    floor: float = FLOOR[module.split(".")[0]]
    if floor == FLOOR["agent"]:
        floor += _room_floor(module, AGENT_ROOMS)
    if floor == FLOOR["pyql"]:
        floor += (len(PYQL_ROOMS) + 1) / (len(PYQL_ROOMS) + 2) if module in PYQL_TOP else _room_floor(module, PYQL_ROOMS)
    return floor


def test_the_graph_sees_the_packages() -> None:
    assert {"pyql.environment", "pyql.environment.kernel", "pyql_sql.environment", "agent.cli", "grammars.vocabulary"} <= set(GRAPH)
    assert {"agent.llm.client", "agent.methods.query_agent", "agent.evaluation.runner"} <= set(GRAPH)


def test_agent_modules_live_in_rooms() -> None:
    """Only the base (errors, JSON lines, faults) and the CLI wiring sit at agent's root."""
    loose = sorted(m for m in GRAPH if m.startswith("agent.") and m.count(".") == 1 and not m.startswith(AGENT_ROOMS))
    assert loose == ["agent.cli", "agent.errors", "agent.faults", "agent.jsonlines"]


def test_pyql_modules_live_in_rooms() -> None:
    """Only the base (errors, echo, lines, interrupts, the action parser, the recording store, the registries' module
    loading) and the command's modules sit at pyql's root."""
    loose = sorted(m for m in GRAPH if m.startswith("pyql.") and m.count(".") == 1 and not m.startswith(PYQL_ROOMS))
    assert loose == ["pyql.action_parser", "pyql.api_docs", "pyql.autoload", "pyql.cli", "pyql.demo", "pyql.echo", "pyql.errors",
                     "pyql.interrupts", "pyql.lines", "pyql.recording_store"]


def test_the_old_module_names_still_import() -> None:
    """A module that moved into a room is still importable by its old name, as the same module object."""
    import importlib

    from pyql import MOVED_MODULES

    for old, new in MOVED_MODULES.items():
        assert new in GRAPH, new
        assert importlib.import_module(old) is importlib.import_module(new)
        assert old not in GRAPH, f"{old} is a file again; drop it from MOVED_MODULES"


def test_no_module_uses_an_old_name() -> None:
    """Code and tests import the rooms' names; the old names are for users' code only."""
    from pyql import MOVED_MODULES

    pattern = re.compile(r"\b(" + "|".join(re.escape(o) for o in MOVED_MODULES) + r")\b(?!\.)")
    files = [*MODULES.values(), *(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    users = sorted(
        f"{f.relative_to(ROOT)}:{n}" for f in files if f.name != "test_architecture.py"
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and "MOVED_MODULES" not in line and not f.as_posix().endswith("pyql/__init__.py")
    )
    assert users == []


def test_the_rooms_have_floors() -> None:
    assert _floor("agent.faults") < _floor("agent.llm.client") < _floor("agent.methods.readi") < _floor(
        "agent.evaluation.runner"
    ) < _floor("agent.cli")
    assert "pyql.environment" in GRAPH["pyql.environment.sparql"]


def test_no_module_imports_a_higher_floor() -> None:
    upward = sorted(
        f"{a} -> {b}" for a, targets in GRAPH.items() for b in targets if _floor(b) > _floor(a)
    )
    assert upward == []


def test_nothing_imports_the_cli_wiring() -> None:
    assert sorted(a for a, targets in GRAPH.items() if targets & CLI_WIRING) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


# ---------------------------------------------------------------------------
# One vocabulary


def test_operators_agree_everywhere() -> None:
    from agent.llm.gbnf import _COMMON, _KIND_PATTERNS
    from grammars import load_grammar
    from grammars.vocabulary import (
        COMPARISON_OPERATORS,
        OPERATOR_ALIASES,
        WRITTEN_OPERATORS,
        canonical_operator,
    )
    from pyql.action_parser import parse_action
    from pyql.environment.actions import render_docs
    from pyql.environment.sparql_actions import SparqlActions
    from pyql.builder.steps import normalize_operator
    from pyql_sql.actions import TableActions
    from pyql_sql.query import normalize_operator as sql_operator

    assert set(WRITTEN_OPERATORS) == set(COMPARISON_OPERATORS) | set(OPERATOR_ALIASES)
    lark_terminal = re.search(r"^OPERATOR\.2: /(.*)/$", load_grammar("action"), re.M)
    gbnf_rule = re.search(r"^operator ::= (.*)$", _COMMON, re.M)
    assert lark_terminal and gbnf_rule
    for op in WRITTEN_OPERATORS:
        meant = canonical_operator(op)
        assert re.fullmatch(lark_terminal.group(1), op)
        assert f'"{op}"' in gbnf_rule.group(1).split(" | ")
        assert re.fullmatch(_KIND_PATTERNS["operator"], op)
        assert parse_action(f"add_filter(?x, {op}, 3)").args[1].kind == "operator"
        assert normalize_operator(op) == meant == sql_operator(op)
    for not_an_operator in ("=!", "~", "LIKE", "=<>"):
        assert not re.fullmatch(lark_terminal.group(1), not_an_operator)
        assert canonical_operator(not_an_operator) is None
    listed = ", ".join(COMPARISON_OPERATORS)
    for actions in (SparqlActions(), TableActions()):
        assert listed in render_docs(actions, "prompt")


def test_other_vocabularies_have_one_source() -> None:
    from grammars.vocabulary import (
        AGGREGATIONS,
        FEEDBACK_MODES,
        SPARQL_END_ACTIONS,
        SPARQL_LOOK_ACTIONS,
        TABLE_ACTION_ORDER,
        TABLE_AGGREGATIONS,
    )
    from pyql.builder.kind import action_order, sparql_action_order
    from pyql.cli import build_parser
    from pyql.builder.profiles import FREEBASE, PROFILES, WIKIDATA
    from pyql.environment.sparql_actions import SPARQL_ACTION_ORDER, SPARQL_ALL_ACTIONS, SparqlActions
    from pyql.builder.steps import AGGREGATES
    from pyql_sql.actions import TableActions
    from pyql_sql.query import AGGREGATIONS as SQL_AGGREGATIONS

    assert AGGREGATES == AGGREGATIONS and SQL_AGGREGATIONS == TABLE_AGGREGATIONS == (*AGGREGATIONS, "COUNT DISTINCT")
    assert SparqlActions().names == SPARQL_ACTION_ORDER and TableActions().names == TABLE_ACTION_ORDER
    # the SPARQL order: the look, the step kinds' actions in their declared groups and places, the end
    assert SPARQL_ACTION_ORDER == (*SPARQL_LOOK_ACTIONS, *action_order(("default",)), *SPARQL_END_ACTIONS) == FREEBASE.action_names
    assert SPARQL_ALL_ACTIONS == sparql_action_order() == WIKIDATA.action_names == SparqlActions(SPARQL_ALL_ACTIONS).names
    parser = build_parser()
    for command in ("run", "ask", "eval"):
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        choices = {a.dest: a.choices for a in sub._actions}
        assert tuple(choices["feedback"]) == FEEDBACK_MODES
        assert tuple(choices["profile"]) == tuple(PROFILES)


def _probe_actions(kind: str) -> object:
    """An action set with ``probe(x)`` of one parameter kind, and ``add_fact`` for a sub-query to hold."""
    from pyql.environment.actions import ActionSet, action

    class Probe(ActionSet):
        @action("construct", x=kind)
        def probe(self, env: object, x: object) -> None:
            """Probe a kind.

            Args:
                x: the argument.

            Example: probe(x)
            """

        @action("construct", head="node", relation="relation", tail="node")
        def add_fact(self, env: object, head: object, relation: object, tail: object) -> None:
            """A fact.

            Example: add_fact(?x, a.b.c, ?y)
            """

    return Probe()


def _side_converters() -> dict[str, object]:
    """Each side's argument converter, ``(kind, arg) -> value``, on a small KB, table and AgentBench episode."""
    from pyql.builder.profiles import FREEBASE, WIKIDATA
    from pyql.environment.agentbench import AgentBenchEnvironment
    from pyql.environment.sparql_actions import convert_argument
    from pyql.kb import KB
    from pyql_sql.actions import convert_argument as table_argument
    from pyql_sql.table import Table
    from grammars.parameter_kinds import PARAMETER_KINDS

    table = Table.from_rows(["Name", "Lyrics theme/style"], [["Smith", "Romance"]])
    bench = AgentBenchEnvironment(KB.open("demo"), entities={"Rachel": "m.0crbvqz"})
    assert bench.step("get_neighbors(Rachel, meteorology.tropical_cyclone.category)").ok  # makes #0
    return {
        "sparql": lambda k, a: convert_argument(WIKIDATA if PARAMETER_KINDS[k].markqa else FREEBASE, k, a, "probe", "x", 0),
        "sql": lambda k, a: table_argument(table, k, a, "probe", "x", 0),
        "agentbench": lambda k, a: bench.actions.convert(bench, k, a, "probe", "x", 0),
    }


def test_parameter_kinds_agree_everywhere() -> None:
    """One table of parameter kinds; the GBNF grammar, the JSON schema, the tool schemas, the action parser,
    every side's converter and the docs cover every kind and agree with it."""
    from agent.llm.gbnf import _KIND_PATTERNS, _KIND_RULE, action_gbnf, action_json_schema, gbnf_to_regex
    from grammars.parameter_kinds import PARAMETER_KINDS, SIDES, kinds_of_side
    from pyql.action_parser import ARG_KINDS, parse_action
    from pyql.api_docs import parameter_kinds_table
    from pyql.environment.actions import openai_tools, render_docs

    converters = _side_converters()
    docs = (ROOT / "docs" / "core.md").read_text(encoding="utf-8")
    assert parameter_kinds_table() in docs
    for name, kind in PARAMETER_KINDS.items():
        assert kind.sides and set(kind.sides) <= set(SIDES) and set(kind.reads) <= set(ARG_KINDS), name
        assert f"| `{name}` | {kind.description.replace('|', chr(92) + '|')} |" in parameter_kinds_table()
        actions = _probe_actions(name)
        line = f"probe({kind.example})"
        # GBNF: the kind's rule, and its example written in it
        assert _KIND_RULE[name] == kind.gbnf
        grammar = action_gbnf(actions, resume="action")
        assert f'"probe(" {kind.gbnf} ")"' in grammar, name
        assert gbnf_to_regex(grammar).fullmatch(line), (name, line)
        # the JSON schema of one step and the tool schemas
        options = action_json_schema(actions)["properties"]["action"]["anyOf"]
        probe = next(o for o in options if o["properties"]["name"]["const"] == "probe")["properties"]["args"]["prefixItems"][0]
        assert probe.get("pattern") == kind.pattern == _KIND_PATTERNS.get(name) and probe["type"] == kind.json_type
        if kind.pattern:
            assert re.fullmatch(kind.pattern, kind.example), name
        tool = next(t for t in openai_tools(actions) if t["function"]["name"] == "probe")["function"]["parameters"]["properties"]["x"]
        assert tool["type"] == kind.json_type and tool.get("enum", []) == list(kind.enum)
        assert f"| `x` | {name} |" in render_docs(actions, "markdown")
        # the action parser reads the example as one argument of a kind the table names, and every side converts it
        (arg,) = parse_action(line).args
        assert arg.kind in kind.reads, (name, arg.kind)
        for side in kind.sides:
            assert converters[side](name, arg) is not None, (side, name)
    for side in SIDES:
        assert kinds_of_side(side), side


def test_every_action_set_uses_kinds_its_side_reads() -> None:
    from grammars.parameter_kinds import PARAMETER_KINDS
    from pyql.environment.agentbench_actions import AgentBenchActions
    from pyql.environment.sparql_actions import SPARQL_ALL_ACTIONS, SparqlActions
    from pyql_sql.actions import TableActions
    from pyql_sql.writable_environment import MutationActions

    for side, actions in (
        ("sparql", SparqlActions(SPARQL_ALL_ACTIONS)),
        ("sql", TableActions()),
        ("sql", MutationActions()),
        ("agentbench", AgentBenchActions()),
    ):
        for spec in actions.specs():
            for p in spec.params:
                assert side in PARAMETER_KINDS[p.kind].sides, (side, spec.name, p.name, p.kind)


def test_markqa_kinds_have_one_source() -> None:
    """MarkQA's kinds (the issue: gbnf's lacked ``whole``) are the table's, in the action set and in the state grammar."""
    from agent.llm.gbnf import _MARKQA_KINDS, StateVocabulary, gbnf_to_regex, state_gbnf
    from grammars.parameter_kinds import PARAMETER_KINDS
    from pyql.environment.sparql_actions import MARKQA_KINDS, SPARQL_ALL_ACTIONS, SparqlActions

    assert set(MARKQA_KINDS) == set(_MARKQA_KINDS) == {n for n, k in PARAMETER_KINDS.items() if k.markqa} >= {"whole"}
    state = StateVocabulary(["m.0c"], ["?t", "?c"], {"m.0c": (["a.b.c"], [])})
    grammar = state_gbnf(SparqlActions(SPARQL_ALL_ACTIONS), state, resume="action")
    matcher = gbnf_to_regex(grammar)
    assert matcher.fullmatch("add_max(?t, ?c, 2, none)") and matcher.fullmatch("add_max(?t, ?c, 0, 3, true)")
    assert not matcher.fullmatch("add_max(?t, *, two)") and not matcher.fullmatch("add_max(?t, *, 0, ?c)")


@pytest.mark.parametrize(
    "pattern",
    [r'[\[(]"eraser", "raw", "none"', r'[\[(]"freebase", "wikidata", "generic"'],
)
def test_no_vocabulary_is_written_out_again(pattern: str) -> None:
    copies = [str(f.relative_to(ROOT)) for f in MODULES.values() if re.search(pattern, f.read_text(encoding="utf-8"))]
    assert copies in ([], ["grammars/vocabulary.py"])


# ---------------------------------------------------------------------------
# The map stays true


def test_nothing_imports_the_benchmarks() -> None:
    """benchmarks/ is the floor above the CLI wiring: it may import anything, nothing imports it."""
    assert sorted(a for a, targets in GRAPH.items() for b in targets if b.split(".")[0] == "benchmarks") == []
    for file in (ROOT / "benchmarks").glob("*.py"):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tests":
                pytest.fail(f"{file.name} imports tests ({node.module}); a benchmark stands on the packages only")


def test_the_map_names_every_module() -> None:
    """docs/architecture.md names every module of the packages and every benchmark script."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    files = [f for package in PACKAGES for f in (ROOT / package).rglob("*.py") if f.name != "__init__.py"]
    files += list((ROOT / "benchmarks").glob("*.py"))
    missing = []
    for file in files:
        rel = file.relative_to(ROOT).as_posix()
        short = rel.split("/", 1)[1] if rel.count("/") > 1 else rel
        if rel not in text and f"`{short}`" not in text and f"`{file.name}`" not in text:
            missing.append(rel)
    assert missing == [], f"docs/architecture.md does not name: {missing}"
