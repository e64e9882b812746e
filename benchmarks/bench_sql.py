"""Benchmark pyql_sql: per-step cost (compile + execute) on a generated 10^5-row table.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_sql.py [--rows 100000] [--repeat 5] [--scaling 10000]

Prints a markdown table: for each step, the median time to compile the query
(sqlglot expression -> SQLite text with ``?`` parameters) and to execute it
(sealed in-memory SQLite, 5 s timeout), plus ``get_column`` on a
high-cardinality column (every value distinct) and a low-cardinality one.
The steps beyond WikiSQL's (a row's place, its neighbour, a part of a date
written as text, a calculation, a group, COUNT DISTINCT, two rows compared, their counts, words inside cells, durations)
are timed too; ``--scaling N`` also runs every step on an N-row table and
prints each step's time per row at both sizes: a step that costs one scan of
the table keeps its time per row (the ratio near 1). Takes about a minute.
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
from pyql_sql.summary_rows import find_summary_row as find_summary

HEADER = ["Id", "Player name", "City", "Score (pts)", "Year", "Attendance", "Date", "Result", "Time"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]


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
                f"{rng.choice(_MONTHS)} {rng.randint(1, 28)}, {rng.randint(1950, 2020)}",
                f"{rng.randint(0, 6)}\u2013{rng.randint(0, 6)}",
                f"{rng.randint(2, 6)}:{rng.randint(0, 59):02d}",
            ]
        )
    return rows


def _steps(n: int) -> list[tuple[str, Callable[[TableQuery], TableQuery]]]:
    """The steps timed: WikiSQL's, then the steps beyond them (a row's place, parts, calculations, groups)."""
    middle, last = f"Player {n // 2:06d}", f"Player {n - 10:06d}"
    return [
        ("set_answer(Player name) — all rows", lambda q: q.set_answer("Player name")),
        ("text = (case-insensitive)", lambda q: q.add_condition("city", "=", "CITY 7").set_answer("Player name")),
        ("numeric-as-text > ('1,000' → 1000)", lambda q: q.add_condition("Score (pts)", ">", "200,000").set_answer("Player name")),
        ("text column = number (COALESCE)", lambda q: q.add_condition("Attendance", "=", 12345).set_answer("Player name")),
        ("3 conditions AND-ed", lambda q: q.add_condition("City", "=", "City 7").add_condition("Year", ">=", 2000).add_condition("Score (pts)", "<", 100_000).set_answer("Player name")),
        ("set_answer(Score, MAX)", lambda q: q.set_answer("Score (pts)", "MAX")),
        ("set_answer(Score, AVG) + condition", lambda q: q.add_condition("Year", "<", 1980).set_answer("Score (pts)", "AVG")),
        ("set_answer(Player name, COUNT) + text =", lambda q: q.add_condition("City", "=", "city 3").set_answer("Player name", "COUNT")),
        ("add_row(n/2) — the middle row", lambda q: q.add_row(n // 2).set_answer("Player name")),
        ("text = + add_row(last)", lambda q: q.add_condition("City", "=", "City 7").add_row("last").set_answer("Player name")),
        ("add_order(Score, DESC) + add_row(2)", lambda q: q.add_order("Score (pts)", "DESC").add_row(2).set_answer("Player name")),
        ("add_adjacent(Player name, middle, before)", lambda q: q.add_adjacent("Player name", middle, "before").set_answer("City")),
        ("add_part(Date, year) + year = 2004, COUNT", lambda q: q.add_part("Date", "year").add_condition("Date year", "=", 2004).set_answer("Id", "COUNT")),
        ("add_part(Date, month) + month = June, COUNT", lambda q: q.add_part("Date", "month").add_condition("Date month", "=", "June").set_answer("Id", "COUNT")),
        ("add_part(Date, date) + add_order(ASC)", lambda q: q.add_part("Date", "date").add_order("Date date", "ASC").set_answer("Player name")),
        ("add_part(Result) ×2 + add_calculation + order", lambda q: q.add_part("Result", "before").add_part("Result", "after")
         .add_calculation("Result before", "-", "Result after").add_order("Result before - Result after", "DESC").set_answer("Player name")),
        ("add_group(City) + add_order(Count, DESC)", lambda q: q.add_group("City").add_order("Count", "DESC").set_answer("City")),
        ("add_group(City) + SUM(Score) per group", lambda q: q.add_group("City").set_answer("Score (pts)", "SUM")),
        ("set_answer(City, COUNT DISTINCT)", lambda q: q.set_answer("City", "COUNT DISTINCT")),
        ("set_calculation(Score, -, Player name, a, b)", lambda q: q.set_calculation("Score (pts)", "-", "Player name", middle, last)),
        ("compare_rows(Score, Player name, a, b)", lambda q: q.compare_rows("Score (pts)", "Player name", middle, last, "DESC")),
        ("compare_rows(..., more, less)", lambda q: q.compare_rows("Score (pts)", "Player name", middle, last, "DESC", ("more", "less"))),
        ("add_group(City) + compare_rows(Count, City, a, b)", lambda q: q.add_group("City").compare_rows("Count", "City", "City 3", "City 7", "DESC")),
        ("text contains words, COUNT", lambda q: q.add_condition("City", "contains", "7").set_answer("Id", "COUNT")),
        ("add_part(Time, seconds) + > 300, COUNT", lambda q: q.add_part("Time", "seconds").add_condition("Time seconds", ">", 300).set_answer("Id", "COUNT")),
        ("text = \"\" (empty cells), COUNT", lambda q: q.add_condition("Attendance", "=", "").set_answer("Id", "COUNT")),
        ("text != (empty cells kept), COUNT", lambda q: q.add_condition("City", "!=", "Total").set_answer("Id", "COUNT")),
    ]


def _timings(n: int, repeat: int) -> tuple[Table, Executor, list[tuple[str, float, float, int]], float, float]:
    """Load an n-row table and time every step: (table, executor, (step, compile ms, execute ms, answers), generate s, load s)."""
    t0 = time.perf_counter()
    rows = make_rows(n)
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    table = Table.from_rows(HEADER, rows, name="bench")
    load_s = time.perf_counter() - t0
    ex = Executor(table, timeout=5.0)
    results = []
    for name, build in _steps(n):
        q = build(table.query())
        compile_ms = median_ms(lambda: q.sql_with_params(), repeat)
        sql, params = q.sql_with_params()
        exec_ms = median_ms(lambda: ex.execute_sql(sql, params), repeat)
        results.append((name, compile_ms, exec_ms, len(ex.execute(q))))
    return table, ex, results, gen_s, load_s


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
    ap.add_argument("--scaling", type=int, default=0, help="also time every step on a table of this many rows")
    args = ap.parse_args(argv)

    table, ex, results, gen_s, load_s = _timings(args.rows, args.repeat)
    base = table.query()

    obs = []
    for name, column in [
        ("get_column(Player name) — 10^5 distinct", "Player name"),
        ("get_column(City) — 50 distinct", "City"),
        ("get_column(Attendance) — numeric text", "Attendance"),
    ]:
        ms = median_ms(lambda: ex.get_column(column, limit=20), args.repeat)
        cv = ex.get_column(column, limit=20)
        obs.append((name, ms, cv.distinct_count))
    obs.append(("summary row found (the last row, its label's rows; once a table)", median_ms(lambda: find_summary(table), args.repeat), 0))
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
    if args.scaling:
        _print_scaling(args.scaling, args.rows, results, args.repeat)
    return 0


def _print_scaling(small: int, large: int, at_large: list[tuple[str, float, float, int]], repeat: int) -> None:
    """Each step's execution time per row at two table sizes: near 1 when it costs one scan (or less)."""
    _, _, at_small, _, _ = _timings(small, repeat)
    print()
    print(f"| step | µs per row at {small} rows | µs per row at {large} rows | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for (name, _, e_small, _), (_, _, e_large, _) in zip(at_small, at_large):
        a, b = 1000 * e_small / small, 1000 * e_large / large
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a if a else float('nan'):.2f} |")


if __name__ == "__main__":
    sys.exit(main())
