"""Run MarkQA's reference PyQL on the Wikidata demo questions; write the fixture.

Usage::

    python benchmarks/markqa_reference.py --markqa-repo /path/to/MarkQA

``--markqa-repo`` is a checkout of https://github.com/cdhx/MarkQA, or a bare
git directory of it (then the files are read with ``git show HEAD:PATH``).
MarkQA is not part of pyql and nothing of it is copied into this project: the
script reads its ``baselines/utils/PyQL_parser.py`` (the fuller of its two
copies: it has ``unit=``, ``avg`` and ``to_decimal``, and the top-level
``PyQL_parser.py`` of commit 888a16d does not even compile, an indentation
error in ``add_quantity_with_qualifier``) at run time.

For every line of ``pyql/data/wikidata_questions.jsonl`` it runs the program
in the ``markqa`` field through the reference's own entry point,
``generate_sparql_by_functions``, which ``exec``\\ s the program. That is
acceptable here and only here: this is an offline script run by hand on
programs written for pyql, it is how the reference itself works, and no
package module ever executes a MarkQA program (pyql parses them).

The SPARQL it prints is run on ``pyql/data/wikidata_demo.ttl`` with pyoxigraph,
after the PREFIX lines that Wikidata's query service predefines
(:data:`PREFIXES`), and ``tests/data/markqa/reference_sparql.jsonl`` gets one
line per question: ``{"id", "sparql", "rows"}``, where ``sparql`` is the
reference's text verbatim (without the PREFIX lines) and ``rows`` the result
rows, each ``{variable: value}`` with IRIs in full and literals as their
lexical form (as SPARQL JSON results give them), sorted. The commit of the
reference that produced the file is printed; write it in
``tests/data/markqa/README.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pyoxigraph

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "pyql" / "data" / "wikidata_questions.jsonl"
KB_PATH = ROOT / "pyql" / "data" / "wikidata_demo.ttl"
OUT = ROOT / "tests" / "data" / "markqa" / "reference_sparql.jsonl"
PARSER = "baselines/utils/PyQL_parser.py"

PREFIXES = """\
PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX psv: <http://www.wikidata.org/prop/statement/value/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


def read_repo_file(repo: Path, path: str) -> str:
    """The text of ``path`` in a MarkQA checkout or bare git directory.

    Args:
        repo: a checkout (the file is read from the work tree) or a git
            directory (the file is read from ``HEAD`` with ``git show``).
        path: the file's path inside the repository.

    Returns:
        The file's text, with Windows line ends made Unix ones.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "x.py").write_text("a = 1\\r\\n")
    ...     read_repo_file(Path(d), "x.py")
    'a = 1\\n'
    """
    work_tree_file = repo / path
    if work_tree_file.is_file():
        text = work_tree_file.read_text(encoding="utf-8")
    else:
        text = subprocess.run(
            ["git", "--git-dir", str(_git_dir(repo)), "show", f"HEAD:{path}"],
            check=True, capture_output=True, text=True,
        ).stdout
    return text.replace("\r\n", "\n")


def repo_commit(repo: Path) -> str:
    """The commit a MarkQA checkout or git directory is at.

    Args:
        repo: a checkout or a git directory.

    Returns:
        The full hash of ``HEAD``.

    >>> len(repo_commit(ROOT)) == 40 or not (ROOT / ".git").exists()
    True
    """
    return subprocess.run(
        ["git", "--git-dir", str(_git_dir(repo)), "rev-parse", "HEAD"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()


def _git_dir(repo: Path) -> Path:
    """``repo/.git`` for a checkout, ``repo`` itself for a git directory."""
    return repo / ".git" if (repo / ".git").exists() else repo


def load_reference(source: str, filename: str = PARSER) -> dict[str, object]:
    """Run the reference parser's source and return its namespace.

    Args:
        source: the text of MarkQA's ``PyQL_parser.py``.
        filename: its name, for tracebacks.

    Returns:
        The module namespace: ``PyQL``, ``generate_sparql_by_functions``, ...

    >>> ns = load_reference("def generate_sparql_by_functions(f):\\n    return f\\n")
    >>> ns["generate_sparql_by_functions"]("x")
    'x'
    """
    namespace: dict[str, object] = {"__name__": "markqa_pyql_parser"}
    exec(compile(source, filename, "exec"), namespace)  # the reference, offline only (see above)
    return namespace


def reference_sparql(reference: dict[str, object], program: str) -> str:
    """The SPARQL the reference prints for a MarkQA program.

    Args:
        reference: the namespace from :func:`load_reference`.
        program: a MarkQA program ending in ``print(x.sparql)``.

    Returns:
        The printed SPARQL, verbatim (no PREFIX lines).

    >>> ns = load_reference("def generate_sparql_by_functions(f):\\n    return f.upper()\\n")
    >>> reference_sparql(ns, "print(a.sparql)")
    'PRINT(A.SPARQL)'
    """
    generate = reference["generate_sparql_by_functions"]
    return str(generate(program))  # type: ignore[operator]


def term_value(term: object) -> str:
    """A result term as SPARQL JSON results give its value.

    Args:
        term: a pyoxigraph term (``NamedNode``, ``Literal`` or ``BlankNode``).

    Returns:
        The IRI, the literal's lexical form, or the blank node's id.

    >>> term_value(pyoxigraph.NamedNode("http://www.wikidata.org/entity/Q64"))
    'http://www.wikidata.org/entity/Q64'
    >>> term_value(pyoxigraph.Literal("3.5", datatype=pyoxigraph.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")))
    '3.5'
    """
    return str(term.value)  # type: ignore[attr-defined]


def oxigraph_rows(store: pyoxigraph.Store, sparql: str) -> list[dict[str, str]]:
    """Run reference SPARQL (PREFIX lines added) and return its rows, sorted.

    Args:
        store: the loaded KB.
        sparql: the reference's query text.

    Returns:
        One ``{variable: value}`` per solution (unbound variables left out),
        sorted by their JSON text.

    >>> store = pyoxigraph.Store()
    >>> oxigraph_rows(store, "SELECT (1 + 1 AS ?two) {}")
    [{'two': '2'}]
    """
    solutions = store.query(PREFIXES + sparql)
    names = [v.value for v in solutions.variables]  # type: ignore[union-attr]
    rows = []
    for solution in solutions:  # type: ignore[union-attr]
        row = {name: term_value(solution[name]) for name in names if solution[name] is not None}
        rows.append(row)
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def load_kb(path: Path = KB_PATH) -> pyoxigraph.Store:
    """The demo KB in an in-memory pyoxigraph store.

    Args:
        path: a Turtle file.

    Returns:
        The store.

    >>> len(load_kb()) > 500
    True
    """
    store = pyoxigraph.Store()
    store.load(path=str(path), format=pyoxigraph.RdfFormat.TURTLE)
    return store


def reference_lines(questions: Path, reference: dict[str, object], store: pyoxigraph.Store) -> list[dict[str, object]]:
    """One fixture line per question: its id, the reference SPARQL, the rows.

    Args:
        questions: a questions file (JSON lines with ``id`` and ``markqa``).
        reference: the namespace from :func:`load_reference`.
        store: the KB.

    Returns:
        The fixture lines, in the order of the questions.

    >>> ns = load_reference("def generate_sparql_by_functions(f):\\n    return 'SELECT (2 AS ?x) {}'\\n")
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d) / "q.jsonl"
    ...     _ = f.write_text('{"id": "w01", "markqa": "print(a.sparql)"}\\n')
    ...     reference_lines(f, ns, pyoxigraph.Store())
    [{'id': 'w01', 'sparql': 'SELECT (2 AS ?x) {}', 'rows': [{'x': '2'}]}]
    """
    lines = []
    for text in questions.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        question = json.loads(text)
        sparql = reference_sparql(reference, question["markqa"])
        lines.append({"id": question["id"], "sparql": sparql, "rows": oxigraph_rows(store, sparql)})
    return lines


def main(argv: list[str] | None = None) -> int:
    """Write the fixture; print the reference's commit and a summary.

    Args:
        argv: command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status.

    >>> main(["--help"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    SystemExit: 0
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markqa-repo", type=Path, required=True, help="a checkout or git directory of cdhx/MarkQA")
    parser.add_argument("--parser", default=PARSER, help=f"the reference inside it (default {PARSER})")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--kb", type=Path, default=KB_PATH)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    reference = load_reference(read_repo_file(args.markqa_repo, args.parser), args.parser)
    lines = reference_lines(args.questions, reference, load_kb(args.kb))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    empty = [line["id"] for line in lines if not line["rows"]]
    print(f"reference: cdhx/MarkQA {repo_commit(args.markqa_repo)} {args.parser}")
    print(f"wrote {len(lines)} lines to {args.out}" + (f"; no rows for {', '.join(empty)}" if empty else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
