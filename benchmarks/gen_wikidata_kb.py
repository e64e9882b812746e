"""Generate a synthetic Wikidata-shaped knowledge base as N-Triples.

Usage::

    python benchmarks/gen_wikidata_kb.py --statements 1000000 --out /tmp/wd_1e6.nt.gz --seed 0

The output follows Wikidata's RDF statement model (the dump format of
https://www.mediawiki.org/wiki/Wikibase/Indexing/RDF_Dump_Format, as in
``pyql/data/wikidata_demo.ttl``), so that benchmarks of numeric query steps
meet realistic data:

* items ``wd:Q...`` with an English ``rdfs:label``; every statement is a node
  ``wds:Q...-N`` reached by ``p:P..``, with ``wikibase:rank``, its simple
  value ``ps:P..`` and, for quantities, a full value ``psv:P..`` ->
  ``wdv:...`` (``wikibase:quantityAmount`` as ``xsd:decimal``,
  ``wikibase:quantityUnit``); truthy ``wdt:P..`` triples for best-rank
  statements only (several values of one property: the latest preferred);
* qualifiers: point in time ``pq:P585`` on populations (one statement per
  census year), start and end time ``pq:P580``/``pq:P582`` on positions held,
  ``xsd:dateTime`` values ``"...T00:00:00Z"``; events have ``wdt:P580`` and
  ``wdt:P582`` of their own;
* units are items with their conversion to SI unit (``P2370``): elevations
  and heights come in metres or feet, areas in square kilometres or hectares,
  so only MarkQA's ``unit=True`` path (``wikibase:quantityUnit/p:P2370/
  psv:P2370/wikibase:quantityAmount``) compares them;
* classes in ``wdt:P31``/``wdt:P279`` chains (big city -> city -> human
  settlement, skyscraper -> building -> architectural structure, ...);
* links to earlier items are drawn with a power-law bias, so a few hubs
  (the first countries, the first cities) get most of the in-degree.

The file has exactly ``--statements`` statement nodes (each with its
triples: about 7.5 triples per statement); 10^6 statements take about 25 s
of CPU and 40 MB gzip-compressed. The output depends only on the
arguments (same seed, same file). An output name ending in ``.gz`` is
gzip-compressed. Lines are written as they are made; memory is small.
Like ``benchmarks/gen_kb.py`` (Freebase-shaped), a short summary goes to
stdout.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

WD = "http://www.wikidata.org/entity/"
WDS = "http://www.wikidata.org/entity/statement/"
WDV = "http://www.wikidata.org/value/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PSV = "http://www.wikidata.org/prop/statement/value/"
PQ = "http://www.wikidata.org/prop/qualifier/"
WIKIBASE = "http://wikiba.se/ontology#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
FIRST_QID = 100_000_000  # generated items: Q100000000 and up, far from the fixed ones

# (QID, label, superclass or None): Wikidata's own QIDs.
CLASSES = [
    ("Q486972", "human settlement", None), ("Q515", "city", "Q486972"), ("Q1549591", "big city", "Q515"),
    ("Q6256", "country", None), ("Q271669", "landform", None), ("Q8502", "mountain", "Q271669"),
    ("Q811979", "architectural structure", None), ("Q41176", "building", "Q811979"),
    ("Q11303", "skyscraper", "Q41176"), ("Q5", "human", None), ("Q1656682", "event", None),
    ("Q4164871", "position", None), ("Q47574", "unit of measurement", None),
]
# (QID, label, conversion factor, SI unit)
UNITS = [
    ("Q11573", "metre", "1", "Q11573"), ("Q828224", "kilometre", "1000", "Q11573"),
    ("Q3710", "foot", "0.3048", "Q11573"), ("Q25343", "square metre", "1", "Q25343"),
    ("Q712226", "square kilometre", "1000000", "Q25343"), ("Q35852", "hectare", "10000", "Q25343"),
]
CENSUS_YEARS = (2001, 2011, 2021)


@dataclass
class Statement:
    """One statement: property, simple value (an N-Triples term), unit if a quantity, qualifiers."""

    prop: str
    value: str
    unit: str | None = None
    qualifiers: list[tuple[str, str]] = field(default_factory=list)
    preferred: bool = False


def decimal(amount: str) -> str:
    """An ``xsd:decimal`` literal in N-Triples.

    >>> decimal("1.5")
    '"1.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'
    """
    return f'"{amount}"^^<{XSD}decimal>'


def date_time(year: int, month: int = 1, day: int = 1) -> str:
    """An ``xsd:dateTime`` literal at midnight UTC, as Wikidata writes dates.

    >>> date_time(2011, 5, 9)
    '"2011-05-09T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    """
    return f'"{year:04d}-{month:02d}-{day:02d}T00:00:00Z"^^<{XSD}dateTime>'


def item(qid: str) -> str:
    """The IRI of an item in N-Triples.

    >>> item("Q64")
    '<http://www.wikidata.org/entity/Q64>'
    """
    return f"<{WD}{qid}>"


def label(text: str) -> str:
    """An English label, escaped for N-Triples.

    >>> label('Mount "X"')
    '"Mount \\\\"X\\\\""@en'
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"@en'


def statement_triples(qid: str, number: int, st: Statement, best: bool = False) -> Iterator[str]:
    """The N-Triples lines of one statement of ``qid`` (the truthy one apart).

    Args:
        qid: the subject item.
        number: the statement's number within the item (names its node).
        st: the statement.
        best: whether it has the best rank of its property (``a wikibase:BestRank``).

    Yields:
        Lines, each one triple with its final `` .``.

    >>> lines = list(statement_triples("Q1", 0, Statement("P2044", decimal("10"), "Q3710")))
    >>> len(lines), lines[0].split()[1]
    (7, '<http://www.wikidata.org/prop/P2044>')
    """
    node = f"<{WDS}{qid}-{number}>"
    yield f"{item(qid)} <{P}{st.prop}> {node} ."
    yield f"{node} <{RDF_TYPE}> <{WIKIBASE}Statement> ."
    if best:
        yield f"{node} <{RDF_TYPE}> <{WIKIBASE}BestRank> ."
    rank = "PreferredRank" if st.preferred else "NormalRank"
    yield f"{node} <{WIKIBASE}rank> <{WIKIBASE}{rank}> ."
    yield f"{node} <{PS}{st.prop}> {st.value} ."
    if st.unit is not None:
        value_node = f"<{WDV}{qid}-{number}>"
        yield f"{node} <{PSV}{st.prop}> {value_node} ."
        yield f"{value_node} <{WIKIBASE}quantityAmount> {st.value} ."
        yield f"{value_node} <{WIKIBASE}quantityUnit> {item(st.unit)} ."
    for prop, value in st.qualifiers:
        yield f"{node} <{PQ}{prop}> {value} ."


def mark_best(statements: list[Statement]) -> list[Statement]:
    """The best-rank statements (those that get a truthy triple).

    A property with a preferred statement keeps only those; otherwise all.

    >>> s = [Statement("P1082", "1"), Statement("P1082", "2", preferred=True), Statement("P31", "x")]
    >>> [b.value for b in mark_best(s)]
    ['2', 'x']
    """
    preferred = {s.prop for s in statements if s.preferred}
    return [s for s in statements if s.preferred or s.prop not in preferred]


class Generator:
    """Items one by one, each with its statements, until the budget is spent.

    >>> lines = []
    >>> Generator(seed=1, budget=40).run(lines.append)
    40
    >>> sum(1 for line in lines if line.endswith(f"<{WIKIBASE}Statement> ."))
    40
    """

    def __init__(self, seed: int, budget: int) -> None:
        self.rng = random.Random(seed)
        self.budget = budget
        self.next_qid = FIRST_QID
        self.pools: dict[str, list[str]] = {"country": [], "city": [], "position": []}
        self.kinds = [("city", 0.35), ("human", 0.3), ("mountain", 0.1), ("building", 0.15), ("event", 0.1)]

    def pick(self, pool: str, skew: float = 2.5) -> str:
        """An earlier item of ``pool``, hubs (the first ones) much likelier."""
        items = self.pools[pool]
        return items[int(len(items) * self.rng.random() ** skew)]

    def run(self, emit: object) -> int:
        """Write every line through ``emit``; return the number of statements."""
        written = 0
        for qid, name, statements in self.items():
            statements = statements[: self.budget - written]
            for line in self.item_lines(qid, name, statements):
                emit(line)  # type: ignore[operator]
            written += len(statements)
            if written >= self.budget:
                break
        return written

    def item_lines(self, qid: str, name: str, statements: list[Statement]) -> Iterator[str]:
        """Label, truthy triples and statements of one item."""
        yield f"{item(qid)} <{RDFS_LABEL}> {label(name)} ."
        best = mark_best(statements)
        for st in best:
            yield f"{item(qid)} <{WDT}{st.prop}> {st.value} ."
        for number, st in enumerate(statements):
            yield from statement_triples(qid, number, st, any(st is b for b in best))

    def items(self) -> Iterator[tuple[str, str, list[Statement]]]:
        """The fixed classes and units, a few countries and positions, then a random mix."""
        for qid, name, parent in CLASSES:
            yield qid, name, [Statement("P279", item(parent))] if parent else []
        for qid, name, factor, si in UNITS:
            yield qid, name, [Statement("P31", item("Q47574")), Statement("P2370", decimal(factor), si)]
        yield "Q199", "1", [Statement("P31", item("Q47574"))]  # the unit of counts: no conversion
        for n in range(20):
            yield self.new("country", f"Country {n}", [Statement("P31", item("Q6256"))])
        for n in range(5):
            yield self.new("position", f"Mayor of Country {n}", [Statement("P31", item("Q4164871"))])
        for n in range(3):
            yield self.city(n)
        count = 0
        while True:
            count += 1
            kind = self.rng.choices([k for k, _ in self.kinds], [w for _, w in self.kinds])[0]
            yield getattr(self, kind)(count)

    def new(self, pool: str | None, name: str, statements: list[Statement]) -> tuple[str, str, list[Statement]]:
        """A fresh QID, remembered in ``pool`` for later links."""
        qid = f"Q{self.next_qid}"
        self.next_qid += 1
        if pool is not None:
            self.pools[pool].append(qid)
        return qid, name, statements

    def city(self, n: int) -> tuple[str, str, list[Statement]]:
        """A (big) city: country, populations at census years, area in km2 or ha."""
        rng = self.rng
        population = int(1000 * 10 ** (rng.random() * 3.5))
        statements = [
            Statement("P31", item("Q1549591" if population > 100_000 else "Q515")),
            Statement("P17", item(self.pick("country"))),
        ]
        for k, year in enumerate(CENSUS_YEARS):
            amount = int(population * (0.9 + 0.05 * k + 0.02 * rng.random()))
            statements.append(Statement("P1082", decimal(str(amount)), "Q199", [("P585", date_time(year, 5, 9))],
                                        preferred=k == len(CENSUS_YEARS) - 1))
        area = round(10 + rng.random() * 800, 2)
        in_hectares = rng.random() < 0.1
        statements.append(Statement("P2046", decimal(f"{area * 100:.0f}" if in_hectares else f"{area}"),
                                    "Q35852" if in_hectares else "Q712226"))
        return self.new("city", f"City {n}", statements)

    def human(self, n: int) -> tuple[str, str, list[Statement]]:
        """A person: citizenship, place of birth, sometimes a position held with start and end."""
        rng = self.rng
        statements = [Statement("P31", item("Q5")), Statement("P27", item(self.pick("country", 3.0))),
                      Statement("P19", item(self.pick("city")))]
        if rng.random() < 0.3:
            start = 1950 + rng.randrange(70)
            quals = [("P580", date_time(start, 1 + rng.randrange(12), 1 + rng.randrange(28))),
                     ("P582", date_time(start + 1 + rng.randrange(8), 1 + rng.randrange(12), 1 + rng.randrange(28)))]
            statements.append(Statement("P39", item(self.pick("position", 1.0)), None, quals))
        return self.new(None, f"Person {n}", statements)

    def mountain(self, n: int) -> tuple[str, str, list[Statement]]:
        """A mountain: country and elevation, in metres or (a quarter of them) in feet."""
        metres = round(200 + self.rng.random() ** 2 * 8600, 1)
        in_feet = self.rng.random() < 0.25
        value = decimal(f"{metres / 0.3048:.0f}" if in_feet else f"{metres}")
        statements = [Statement("P31", item("Q8502")), Statement("P17", item(self.pick("country"))),
                      Statement("P2044", value, "Q3710" if in_feet else "Q11573")]
        return self.new(None, f"Mount {n}", statements)

    def building(self, n: int) -> tuple[str, str, list[Statement]]:
        """A building or skyscraper in a city, its height in metres or feet."""
        metres = round(5 + self.rng.random() ** 3 * 800, 1)
        in_feet = self.rng.random() < 0.3
        value = decimal(f"{metres / 0.3048:.0f}" if in_feet else f"{metres}")
        statements = [Statement("P31", item("Q11303" if metres > 150 else "Q41176")),
                      Statement("P131", item(self.pick("city"))),
                      Statement("P2048", value, "Q3710" if in_feet else "Q11573")]
        return self.new(None, f"Building {n}", statements)

    def event(self, n: int) -> tuple[str, str, list[Statement]]:
        """An event in a city, with start and end time and a number of participants."""
        rng = self.rng
        year = 1950 + rng.randrange(75)
        start = date_time(year, 1 + rng.randrange(12), 1 + rng.randrange(20))
        end = date_time(year + rng.randrange(2), 1 + rng.randrange(12), 1 + rng.randrange(28))
        statements = [Statement("P31", item("Q1656682")), Statement("P276", item(self.pick("city"))),
                      Statement("P580", start), Statement("P582", end),
                      Statement("P1132", decimal(str(rng.randrange(10, 20000))), "Q199")]
        return self.new(None, f"Event {n}", statements)


def open_output(path: Path) -> IO[str]:
    """The output file, gzip-compressed if its name ends in ``.gz``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open_output(Path(d) / "x.nt.gz") as f:
    ...         _ = f.write("a")
    ...     gzip.decompress((Path(d) / "x.nt.gz").read_bytes())
    b'a'
    """
    if path.suffix == ".gz":
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=6)  # type: ignore[return-value]
    return path.open("w", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Write the KB and print a summary.

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
    parser.add_argument("--statements", type=float, default=1e6, help="number of statements (default 1e6)")
    parser.add_argument("--out", type=Path, required=True, help="output N-Triples file (.gz: compressed)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lines = 0
    with open_output(args.out) as handle:
        def emit(line: str) -> None:
            nonlocal lines
            handle.write(line + "\n")
            lines += 1
        written = Generator(args.seed, int(args.statements)).run(emit)
    print(f"{args.out}: {written} statements, {lines} triples, {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
