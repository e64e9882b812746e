"""On-disk Oxigraph stores: ``pyql kb load FILE... --store DIR``, then ``--kb oxigraph:DIR``.

Also: the embedded default (``KB.open`` of a file is pyoxigraph, ``rdflib:FILE``
is rdflib, both answer alike) and the load progress on standard error.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest

import pyql.kb.store as store_module
from pyql.cli import main as pyql_main
from pyql.errors import KBError
from pyql.kb import KB, demo_kb_path
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.kb.progress import LOG_MIN_BYTES, LoadProgress
from pyql.kb.rdflib_backend import RdflibKB
from pyql.kb.store import MANIFEST, load_store, open_store, store_state
from pyql.environment.sparql import SparqlEnvironment

ROOT = Path(__file__).resolve().parents[1]
FB = "http://rdf.freebase.com/ns/"
RACHEL = '{"Tropical Storm Rachel": "m.0crbvqz"}'
ACTIONS = """get_relation(m.0crbvqz)
add_fact(m.0crbvqz, meteorology.tropical_cyclone.category, ?category)
add_fact(?cyclone, meteorology.tropical_cyclone.category, ?category)
add_fact(?cyclone, meteorology.tropical_cyclone.formed, ?time)
add_max(?time)
set_answer(?cyclone)
execute()
"""


def pyql(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pyql.cli", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)


def _triples(path: Path, subjects: range, relation: str = "a.b.c") -> Path:
    """An N-Triples file: m.0s{i} --relation--> m.0o{i}, with dotted Freebase names."""
    path.write_text("".join(f"<{FB}m.0s{i}> <{FB}{relation}> <{FB}m.0o{i}> .\n" for i in subjects), encoding="utf-8")
    return path


@pytest.mark.cli
def test_kb_load_then_run_answers_a_demo_question(tmp_path: Path) -> None:
    store = tmp_path / "store"
    loaded = pyql("kb", "load", str(demo_kb_path()), "--store", str(store), "--count", "--json")
    assert loaded.returncode == 0, loaded.stderr
    summary = json.loads(loaded.stdout)
    assert summary["loaded"] == [str(demo_kb_path())] and summary["triples"] == len(KB.open("demo"))
    assert loaded.stderr == "", "a small file loads without progress lines"
    result = pyql("run", "--kb", f"oxigraph:{store}", "--entities", RACHEL, "--actions", "-", "--json", stdin=ACTIONS)
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["answers"] == [{"value": "m.0107j2dw", "label": "Tropical Storm Dolly"}]


def test_store_opens_read_only_and_answers_like_the_file(tmp_path: Path) -> None:
    load_store([demo_kb_path()], tmp_path / "s", progress=False)
    on_disk = KB.open(f"oxigraph:{tmp_path / 's'}")
    assert isinstance(on_disk, OxigraphKB)
    with pytest.raises(RuntimeError):  # read-only: nothing can be written by a reader
        on_disk.store.bulk_load(input=b"<http://a> <http://b> <http://c> .", format=ox.RdfFormat.N_TRIPLES)
    second = KB.open(f"oxigraph:{tmp_path / 's'}")  # several readers at once
    assert on_disk.relations("m.0crbvqz") == KB.open("demo").relations("m.0crbvqz") == second.relations("m.0crbvqz")


def test_interrupted_load_is_refused_then_resumed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _triples(tmp_path / "first.nt", range(50))
    second = _triples(tmp_path / "second.nt", range(50, 100), "x.y.z")
    store = tmp_path / "store"
    real = store_module.load_file

    def interrupted(target, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path).name == "second.nt":
            target.bulk_load(input=b"".join(Path(path).read_bytes().splitlines(keepends=True)[:10]),
                             format=ox.RdfFormat.N_TRIPLES)  # part of the file is in, as after Ctrl-C
            raise KeyboardInterrupt
        return real(target, path, *args, **kwargs)

    monkeypatch.setattr(store_module, "load_file", interrupted)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert pyql_main(["kb", "load", str(first), str(second), "--store", str(store), "--no-progress"]) == 130
    assert "interrupted" in err.getvalue() and "run the same command again to resume" in err.getvalue()
    state = store_state(store)
    assert state is not None and state["loading"]["path"] == str(second.resolve())
    assert [f["path"] for f in state["files"]] == [str(first.resolve())]
    with pytest.raises(KBError, match="incomplete: loading .*second.nt was interrupted"):
        KB.open(f"oxigraph:{store}")

    monkeypatch.setattr(store_module, "load_file", real)
    messages: list[str] = []
    report = load_store([first, second], store, progress=False, count=True, log=messages.append)
    assert report.skipped == [str(first)] and report.loaded == [str(second)] and report.resumed == str(second)
    assert report.triples == 100, "the 10 triples loaded before the interruption are not duplicated"
    assert any("interrupted; loading it again" in m for m in messages)
    kb = KB.open(f"oxigraph:{store}")
    assert kb.relations("m.0s99").forward == ("x.y.z",)
    assert store_state(store)["loading"] is None

    again = load_store([first, second], store, progress=False)
    assert again.loaded == [] and again.skipped == [str(first), str(second)]
    fresh = load_store([first], store, fresh=True, progress=False, count=True)
    assert fresh.loaded == [str(first)] and fresh.triples == 50


@pytest.mark.cli
def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    good = _triples(tmp_path / "kb.nt", range(3))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("mine")
    (tmp_path / "afile").write_text("x")
    (tmp_path / "empty.nt").write_text("")
    cases = [
        (["kb", "load", str(tmp_path / "missing.nt"), "--store", str(tmp_path / "s1")], "no such RDF file"),
        (["kb", "load", str(tmp_path / "empty.nt"), "--store", str(tmp_path / "s1")], "is empty"),
        (["kb", "load", str(tmp_path / "notes" / "a.txt"), "--store", str(tmp_path / "s1")], "cannot tell the RDF format"),
        (["kb", "load", str(good), "--store", str(tmp_path / "notes")], "is not an Oxigraph store"),
        (["kb", "load", str(good), "--store", str(tmp_path / "afile")], "is a file, not a store directory"),
        (["kb", "load", str(good)], "--store"),
        (["run", "--kb", f"oxigraph:{tmp_path / 'nostore'}", "--actions", "-"], "no Oxigraph store at"),
        (["run", "--kb", f"oxigraph:{tmp_path / 'notes'}", "--actions", "-"], "is not an Oxigraph store"),
    ]
    for args, message in cases:
        result = pyql(*args, stdin="")
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "s1").exists(), "a refused load creates no store"
    assert (tmp_path / "notes" / "a.txt").read_text() == "mine"


def test_a_parse_error_names_the_file_and_leaves_the_store_marked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text(f'<{FB}m.0a> <{FB}a.b.c> "unterminated .\n')
    with pytest.raises(KBError, match="cannot load .*bad.nt") as info:
        load_store([bad], tmp_path / "s", progress=False)
    assert "\n" not in str(info.value)
    with pytest.raises(KBError, match="failed .*fix the file"):
        open_store(tmp_path / "s")


@pytest.mark.cli
def test_a_store_in_use_is_refused(tmp_path: Path) -> None:
    good = _triples(tmp_path / "kb.nt", range(3))
    load_store([good], tmp_path / "s", progress=False)
    other = _triples(tmp_path / "more.nt", range(3, 6))
    holder = subprocess.Popen(  # another process holds the store open for writing
        [sys.executable, "-c", "import sys, pyoxigraph as ox; s = ox.Store(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
         str(tmp_path / "s")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        result = pyql("kb", "load", str(other), "--store", str(tmp_path / "s"))
        assert result.returncode == 2 and "in use by another process" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert load_store([other], tmp_path / "s", progress=False, count=True).triples == 6


def test_gzipped_files_load_into_a_store(tmp_path: Path) -> None:
    path = tmp_path / "kb.nt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(f"<{FB}m.0a> <{FB}a.b.c> <{FB}m.0b> .\n")
    load_store([path], tmp_path / "s", progress=False)
    assert KB.open(f"oxigraph:{tmp_path / 's'}").relations("m.0a").forward == ("a.b.c",)
    assert (tmp_path / "s" / MANIFEST).is_file()


# -- the embedded default ------------------------------------------------------------


def test_files_open_on_oxigraph_and_rdflib_by_name(tmp_path: Path) -> None:
    path = _triples(tmp_path / "kb.nt", range(5), "people.person.a.b")  # a local name with several dots
    default, by_name = KB.open(str(path)), KB.open(f"rdflib:{path}")
    assert isinstance(default, OxigraphKB) and isinstance(by_name, RdflibKB)
    for kb in (default, by_name):
        env = SparqlEnvironment(kb, entities={"s": "m.0s1"})
        assert env.step("get_relation(m.0s1)").ok
        record = env.step("add_fact(m.0s1, people.person.a.b, ?o)")
        assert record.ok and "m.0o1" in record.observation


def test_json_ld_still_opens_by_default(tmp_path: Path) -> None:
    path = tmp_path / "kb.jsonld"  # rdflib read it before pyoxigraph became the default
    path.write_text(json.dumps({"@id": f"{FB}m.0a", f"{FB}a.b.c": {"@id": f"{FB}m.0b"}}))
    assert KB.open(str(path)).relations("m.0a").forward == KB.open(f"rdflib:{path}").relations("m.0a").forward == ("a.b.c",)


def test_pyql_demo_runs_on_the_default(tmp_path: Path) -> None:
    out = io.StringIO()
    assert pyql_main(["demo", "--no-sparql"], out=out) == 0
    assert "Tropical Storm Dolly" in out.getvalue()


def test_large_file_progress_goes_to_stderr_only() -> None:
    err = io.StringIO()
    report = LoadProgress("kb.nt", LOG_MIN_BYTES, stream=err)  # not a terminal, at the size threshold
    assert report.enabled
    reader = report.wrap(io.BytesIO(b"x" * LOG_MIN_BYTES))
    while reader.read(LOG_MIN_BYTES // 7):
        pass
    report.finish(triples=5)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("pyql: loading kb.nt (100.0 MB)")
    percents = [int(line.split(": ")[-1].split("%")[0]) for line in lines[1:-1]]
    assert percents == sorted(set(percents)) and 1 <= len(percents) <= 9 and percents[-1] == 90  # one line per 10% step reached
    assert all("kb.nt" in line for line in lines)
    assert lines[-1].startswith("pyql: loaded kb.nt (100.0 MB, 5 triples) in ")
    small = io.StringIO()
    LoadProgress("kb.nt", LOG_MIN_BYTES - 1, stream=small).finish()
    assert small.getvalue() == ""


def test_progress_is_shown_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    path = _triples(tmp_path / "kb.nt", range(3))
    OxigraphKB(path, progress=True)
    assert "\r" in err.getvalue() and "loaded " in err.getvalue() and "3 triples" in err.getvalue()
