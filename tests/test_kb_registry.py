"""The registry of KB backends: one test per spec form, the matching order, and every list made from it.

Every form registered in :mod:`pyql.kb.opening` has a test below (a test
checks that none is left without one); every place that lists the forms
(``KB.open``'s docstring, the ``--kb`` help, ``KB_HINT``, the error for a
spec that names nothing, the usage errors of ``ask``/``eval``, docs/core.md)
names each of them.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from pyql.errors import KBError
from pyql.kb import KB, demo_kb_path, kb_backends
from pyql.kb.endpoint_backend import EndpointKB
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.kb.rdflib_backend import RdflibKB
from pyql.kb.registry import MATCH_ORDER, KBBackend, KBRegistry, kb_backend
from pyql.kb.store import load_store

ROOT = Path(__file__).resolve().parent.parent
TRIPLE = "<http://rdf.freebase.com/ns/m.0a> <http://rdf.freebase.com/ns/a.b.c> <http://rdf.freebase.com/ns/m.0b> .\n"
STORM = "m.0crbvqz"  # an entity of the demo KB


# -- one test per registered form ---------------------------------------------


def _demo(tmp_path: Path) -> None:
    kb = KB.open("demo")
    assert isinstance(kb, OxigraphKB) and len(kb) > 0 and kb.relations(STORM).forward


def _wikidata_demo(tmp_path: Path) -> None:
    kb = KB.open("wikidata-demo")  # the wikidata profile: Q64 is Berlin, not a Freebase name
    assert isinstance(kb, OxigraphKB) and kb.profile.name == "wikidata" and kb.relations("Q64").forward


def _file(tmp_path: Path) -> None:
    plain = tmp_path / "kb.nt"
    plain.write_text(TRIPLE)
    packed = tmp_path / "kb.nt.gz"
    packed.write_bytes(gzip.compress(TRIPLE.encode()))
    for path in (plain, packed):
        kb = KB.open(str(path))
        assert isinstance(kb, OxigraphKB) and len(kb) == 1
    assert isinstance(KB.open(plain), OxigraphKB), "a Path is a spec too"


def _oxigraph(tmp_path: Path) -> None:
    nt = tmp_path / "kb.nt"
    nt.write_text(TRIPLE)
    load_store([nt], tmp_path / "store", progress=False)
    on_disk = KB.open(f"oxigraph:{tmp_path / 'store'}")
    assert isinstance(on_disk, OxigraphKB) and len(on_disk) == 1
    assert len(KB.open(f"oxigraph:{nt}")) == 1, "oxigraph:FILE is FILE"
    assert len(KB.open("oxigraph:")) == 0 and len(KB.open("oxigraph::memory:")) == 0
    assert KB.open("oxigraph:demo").relations(STORM) == KB.open("demo").relations(STORM)
    with pytest.raises(KBError, match="no Oxigraph store at"):
        KB.open(f"oxigraph:{tmp_path / 'nothing'}")


def _rdflib(tmp_path: Path) -> None:
    assert isinstance(KB.open("rdflib:demo"), RdflibKB)
    nt = tmp_path / "kb.nt"
    nt.write_text(TRIPLE)
    kb = KB.open(f"rdflib:{nt}")
    assert isinstance(kb, RdflibKB) and len(kb) == 1


def _metaqa(tmp_path: Path) -> None:
    kb_txt = tmp_path / "kb.txt"
    kb_txt.write_text("Kismet|directed_by|William Dieterle\n", encoding="utf-8")
    kb = KB.open(f"metaqa:{kb_txt}", "generic")
    assert isinstance(kb, OxigraphKB) and kb.relations("mq:Kismet").forward == ("mqr:directed_by",)
    with pytest.raises(KBError, match="generic profile"):
        KB.open(f"metaqa:{kb_txt}")


def _endpoint(tmp_path: Path) -> None:
    kb = KB.open("http://127.0.0.1:9/sparql", timeout=0.5, default_graph="http://g")
    assert isinstance(kb, EndpointKB) and kb.url == "http://127.0.0.1:9/sparql" and kb.timeout == 0.5
    assert kb.default_graph == "http://g"
    assert isinstance(KB.open("https://example.org/sparql"), EndpointKB)


def _graph(tmp_path: Path) -> None:
    graph = rdflib.Graph().parse(str(demo_kb_path()), format="turtle")
    kb = KB.open(graph)
    assert isinstance(kb, RdflibKB) and kb.graph is graph


def _store(tmp_path: Path) -> None:
    store = ox.Store()
    kb = KB.open(store)
    assert isinstance(kb, OxigraphKB) and kb.store is store


def _subgraphs(tmp_path: Path) -> None:
    rog = Path(__file__).resolve().parent / "data" / "subgraphs" / "rog.jsonl"
    kb = KB.open(f"subgraphs:{rog}#WebQTest-100")
    assert isinstance(kb, OxigraphKB) and kb.has_entity("sg:Grand_Bahama") and not kb.has_entity("sg:Justin_Bieber")
    assert type(KB.open(f"subgraphs:{rog}")).__name__ == "SubgraphSet"


FORM_TESTS: dict[str, Callable[[Path], None]] = {
    "demo": _demo,
    "wikidata-demo": _wikidata_demo,
    "FILE": _file,
    "oxigraph:DIR": _oxigraph,
    "rdflib:FILE": _rdflib,
    "metaqa:PATH/kb.txt": _metaqa,
    "subgraphs:FILE": _subgraphs,
    "http(s)://…/sparql": _endpoint,
    "rdflib.Graph": _graph,
    "pyoxigraph.Store": _store,
}


def test_every_registered_form_has_a_test() -> None:
    assert [e.form for e in kb_backends.entries()] == list(FORM_TESTS)


@pytest.mark.parametrize("form", list(FORM_TESTS))
def test_each_form_opens_its_backend(form: str, tmp_path: Path) -> None:
    entry = next(e for e in kb_backends.entries() if e.form == form)
    assert entry.description and "\n" not in entry.description and "(" not in entry.description
    assert entry.example
    FORM_TESTS[form](tmp_path)


@pytest.mark.parametrize("entry", kb_backends.spec_forms(), ids=lambda e: e.form)
def test_each_example_names_its_own_form(entry: KBBackend) -> None:
    assert kb_backends.backend_for(entry.example) is entry


# -- matching order -----------------------------------------------------------


def test_matching_is_objects_then_prefixes_then_names_then_files(tmp_path: Path) -> None:
    assert MATCH_ORDER == ("object", "prefix", "name", "fallback")
    assert kb_backends.backend_for("rdflib:demo").form == "rdflib:FILE", "a prefix before the name demo"
    assert kb_backends.backend_for("oxigraph:demo").form == "oxigraph:DIR"
    assert kb_backends.backend_for("demo").form == "demo"
    assert kb_backends.backend_for("demo.ttl").form == "FILE"
    assert kb_backends.backend_for("no-such-scheme:x").form == "FILE"
    assert kb_backends.backend_for(42) is None
    (tmp_path / "demo").write_text(TRIPLE)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert len(KB.open("demo")) > 1, "demo is the bundled KB even beside a file named demo"
        with pytest.raises(KBError, match="cannot tell the RDF format of demo"):
            KB.open("./demo")  # the file: no suffix
    finally:
        os.chdir(here)
    listed = [line for line in KB.open.__doc__.splitlines() if line.strip().startswith("* ``")]
    kinds = [next(e.match for e in kb_backends.entries() if f"``{e.form}``" in line) for line in listed]
    assert kinds == sorted(kinds, key=MATCH_ORDER.index), "KB.open's docstring lists the forms in matching order"


def test_registration_refuses_clashes() -> None:
    reg = KBRegistry()

    def opener(argument: object, profile: object, **options: object) -> object:
        return argument

    kb_backend("x:A", description="x", example="x:a", prefix="x:", into=reg)(opener)
    with pytest.raises(KBError, match="overlaps"):
        kb_backend("xy:A", description="x", example="x:yb", prefix="x:y", into=reg)(opener)
    with pytest.raises(KBError, match="registered twice"):
        kb_backend("x:A", description="x", example="x:a", prefix="z:", into=reg)(lambda *a, **k: None)
    kb_backend("FILE", description="f", example="f", fallback=True, into=reg)(opener)
    with pytest.raises(KBError, match="one is allowed"):
        kb_backend("OTHER", description="f", example="f", fallback=True, into=reg)(opener)
    with pytest.raises(KBError, match="exactly one of"):
        kb_backend("both", description="b", example="b", prefix="b:", name="b")
    with pytest.raises(KBError, match="exactly one of"):
        kb_backend("none", description="n", example="n")
    assert reg.open("x:b", "freebase") == "b" and reg.open("plain", "freebase") == "plain"


def test_a_module_run_again_replaces_its_entries() -> None:
    before = kb_backends.entries()
    entry = before[0]
    kb_backends.register(entry)
    assert kb_backends.entries()[-1] is entry and len(kb_backends.entries()) == len(before)
    kb_backends._entries[:] = before  # the original order back


# -- every list of the forms is made from the registry -----------------------


def test_unknown_specs_give_one_error_naming_every_form() -> None:
    for spec in ("nowhere.ttl", "no-such-scheme:x", "rdflib:nowhere.ttl"):
        with pytest.raises(KBError) as caught:
            KB.open(spec)
        message = str(caught.value)
        assert message.startswith("no such RDF file: ") and "\n" not in message
        for entry in kb_backends.spec_forms():
            assert entry.phrase in message, (spec, entry.form)
    with pytest.raises(KBError, match=r"^a KB spec is a string \(or an rdflib Graph or a pyoxigraph Store\), got int$"):
        KB.open(42)  # type: ignore[arg-type]


def test_kb_open_docstring_lists_every_form() -> None:
    doc = KB.open.__doc__ or ""
    for entry in kb_backends.entries():
        assert f"* ``{entry.form}``: {entry.description} (e.g. ``{entry.example}``)" in doc
    assert "(the spec forms of pyql.kb.registry)" not in doc


def test_cli_help_and_hints_name_every_form() -> None:
    from agent.cli import _KB_HELP
    from agent.evaluation.environments import KB_HINT

    for entry in kb_backends.spec_forms():
        assert f"{entry.form} ({entry.description})" in _KB_HELP, entry.form
        assert entry.phrase in KB_HINT, entry.form
    assert [e.match for e in kb_backends.spec_forms()] and not any(e.match == "object" for e in kb_backends.spec_forms())


def test_usage_errors_without_a_kb_name_every_form(tmp_path: Path) -> None:
    from agent.evaluation.runner import RunSettings, run_eval
    from pyql.cli import main
    from pyql.errors import PyQLError

    data = tmp_path / "data.json"
    data.write_text('[{"id": "q1", "question": "what?", "answers": ["x"]}]')
    texts = []
    for argv in (["ask", "what?"], ["eval", str(data), "--out", str(tmp_path / "run.jsonl")], ["run", "--actions", os.devnull]):
        err = io.StringIO()
        assert main(argv, out=err) == 2
        texts.append(err.getvalue())
    with pytest.raises(PyQLError) as caught:
        run_eval([{"id": "q1", "question": "what?", "answers": ["x"]}], tmp_path / "r.jsonl", None, RunSettings(), progress=None)
    texts.append(str(caught.value))
    for text in texts:
        assert "give --kb" in text
        for entry in kb_backends.spec_forms():
            assert entry.phrase in text, (text, entry.form)


def test_endpoint_options_follow_the_registry() -> None:
    from agent.evaluation.environments import kb_options
    from pyql.cli import UsageError

    assert kb_options(argparse.Namespace(kb="https://example.org/sparql", kb_timeout=2, default_graph="http://g")) == {
        "timeout": 2,
        "default_graph": "http://g",
    }
    with pytest.raises(UsageError) as caught:
        kb_options(argparse.Namespace(kb="oxigraph:/data/store", kb_timeout=2, default_graph=None))
    assert str(caught.value) == "--kb-timeout apply to a SPARQL endpoint (--kb http(s)://…/sparql), not to --kb oxigraph:/data/store"
    takers = [e.form for e in kb_backends.entries() if "timeout" in e.options]
    assert takers == ["http(s)://…/sparql"]


def test_docs_core_names_every_form() -> None:
    text = (ROOT / "docs" / "core.md").read_text(encoding="utf-8")
    section = text[text.index("## Knowledge bases") :]
    for entry in kb_backends.entries():
        assert f"`{entry.form}`" in section or f"`{entry.example}`" in section, entry.form


def test_one_line_has_one_definition() -> None:
    import pyql.echo
    import pyql.kb.oxigraph_backend
    import pyql.kb.rdflib_backend
    import pyql.kb.store

    assert pyql.kb.oxigraph_backend.one_line is pyql.echo.one_line
    assert pyql.kb.rdflib_backend.one_line is pyql.echo.one_line
    assert pyql.kb.store.one_line is pyql.echo.one_line
