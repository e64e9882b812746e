"""Benchmark pyql_sql: per-step cost (compile + execute) on a generated 10^5-row table.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_sql.py [--rows 100000] [--repeat 5]

Prints a markdown table: for each step, the median time to compile the query
(sqlglot expression -> SQLite text with ``?`` parameters) and to execute it
(sealed in-memory SQLite, 5 s timeout), plus ``get_column`` on a
high-cardinality column (every value distinct) and a low-cardinality one.
Takes well under a minute.
"""

from __future__ import annotations

import argparse
import platform
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import sqlglot

from pyql_sql import Executor, Table, TableQuery

HEADER = ["Id", "Player name", "City", "Score (pts)", "Year", "Attendance"]


def make_rows(n: int, seed: int = 7) -> list[list[Any]]:
    """Rows with numeric columns written as text ('12,345'), a unique text column, a 50-value one."""
    rng = random.Random(seed)
    cities = [f"City {i}" for i in range(50)]
    rows = []
    for i in range(n):
        attendance = "—" if rng.random() < 0.05 else f"{rng.randint(1_000, 99_999):,}"
        rows.append(
            [
                str(i),
                f"Player {i:06d}",
                rng.choice(cities),
                f"{rng.randint(0, 250_000):,}",
                str(rng.randint(1950, 2020)),
                attendance,
            ]
        )
    return rows


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    rows = make_rows(args.rows)
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    table = Table.from_rows(HEADER, rows, name="bench")
    load_s = time.perf_counter() - t0
    ex = Executor(table, timeout=5.0)
    base = table.query()

    steps: list[tuple[str, Callable[[TableQuery], TableQuery]]] = [
        ("set_answer(Player name) — all rows", lambda q: q.set_answer("Player name")),
        ("text = (case-insensitive)", lambda q: q.add_condition("city", "=", "CITY 7").set_answer("Player name")),
        ("numeric-as-text > ('1,000' → 1000)", lambda q: q.add_condition("Score (pts)", ">", "200,000").set_answer("Player name")),
        ("text column = number (COALESCE)", lambda q: q.add_condition("Attendance", "=", 12345).set_answer("Player name")),
        ("3 conditions AND-ed", lambda q: q.add_condition("City", "=", "City 7").add_condition("Year", ">=", 2000).add_condition("Score (pts)", "<", 100_000).set_answer("Player name")),
        ("set_answer(Score, MAX)", lambda q: q.set_answer("Score (pts)", "MAX")),
        ("set_answer(Score, AVG) + condition", lambda q: q.add_condition("Year", "<", 1980).set_answer("Score (pts)", "AVG")),
        ("set_answer(Player name, COUNT) + text =", lambda q: q.add_condition("City", "=", "city 3").set_answer("Player name", "COUNT")),
    ]

    results = []
    for name, build in steps:
        q = build(base)
        compile_ms = median_ms(lambda: q.sql_with_params(), args.repeat)
        sql, params = q.sql_with_params()
        exec_ms = median_ms(lambda: ex.execute_sql(sql, params), args.repeat)
        n = len(ex.execute(q))
        results.append((name, compile_ms, exec_ms, n))

    obs = []
    for name, column in [
        ("get_column(Player name) — 10^5 distinct", "Player name"),
        ("get_column(City) — 50 distinct", "City"),
        ("get_column(Attendance) — numeric text", "Attendance"),
    ]:
        ms = median_ms(lambda: ex.get_column(column, limit=20), args.repeat)
        cv = ex.get_column(column, limit=20)
        obs.append((name, ms, cv.distinct_count))
    within = base.add_condition("City", "=", "City 7")
    obs.append(
        (
            "get_column(Player name) within City = City 7",
            median_ms(lambda: ex.get_column("Player name", query=within), args.repeat),
            ex.get_column("Player name", query=within).distinct_count,
        )
    )

    print(f"command: PYTHONPATH=. python benchmarks/bench_sql.py --rows {args.rows} --repeat {args.repeat}")
    print(
        f"python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, sqlglot {sqlglot.__version__}, "
        f"{platform.machine()}; generate {gen_s:.2f} s, load into SQLite {load_s:.2f} s "
        f"({table.row_count} rows, {len(HEADER)} columns); median of {args.repeat}\n"
    )
    print("| step | compile (ms) | execute (ms) | total (ms) | answers |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, c, e, n in results:
        print(f"| {name} | {c:.2f} | {e:.1f} | {c + e:.1f} | {n} |")
    print()
    print("| observation | time (ms) | distinct values |")
    print("| --- | ---: | ---: |")
    for name, ms, d in obs:
        print(f"| {name} | {ms:.1f} | {d} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
