"""Build a seeded slice of WikiTableQuestions (its unseen-table test set, or its training set), out of the repository (CC BY-SA 4.0, not committed).

The table agent's grounding and ranking were designed on ``tests/data``'s
WikiSQL and WTQ fixtures and on dbbench dev, so those figures are in-sample.
This script samples a fixed random slice (seeded) of WTQ's
``data/pristine-unseen-tables.tsv`` (tables never seen in WTQ's training
data), leaving out the fixture's questions, and writes it in WTQ's own layout
(``data/``, ``tagged/data/``, ``csv/``) so ``pyql eval`` and
``benchmarks/bench_table_agent.py`` read it as they read the fixture. Nobody
reads its questions while designing: it is run once, at the end.

Get WikiTableQuestions first (a clone, or a bare git directory), then::

    git clone https://github.com/ppasupat/WikiTableQuestions /tmp/WikiTableQuestions
    python benchmarks/wtq_heldout.py /tmp/WikiTableQuestions /tmp/wtq-heldout --size 40 --seed 22
    python benchmarks/bench_table_agent.py /tmp/wtq-heldout/data/pristine-unseen-tables.tsv
    python benchmarks/wtq_heldout.py /tmp/WikiTableQuestions /tmp/wtq-dev --split training --size 60 --seed 7
    python benchmarks/bench_table_agent.py /tmp/wtq-dev/data/training.tsv -v
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: The files sliced: split name → (questions, their tagged answers).
SPLITS = {
    "pristine-unseen-tables": ("data/pristine-unseen-tables.tsv", "tagged/data/pristine-unseen-tables.tagged"),
    "training": ("data/training.tsv", "tagged/data/training.tagged"),
}
#: The fixtures' questions (tests/data/wtq/data/*.tsv): read while designing, never sampled.
FIXTURE_IDS = frozenset(["nu-1", "nu-66", "nu-914", "nu-1475", "nt-64", "nt-112", "nt-153"])


def read(repo: Path, path: str, *, optional: bool = False) -> str | None:
    """A file of a WTQ checkout, or of a bare git directory (its HEAD); None when ``optional`` and absent."""
    if (repo / path).is_file():
        return (repo / path).read_text(encoding="utf-8")
    done = subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], capture_output=True, check=False)
    if done.returncode != 0:
        if optional:
            return None
        raise SystemExit(f"{path} is neither in {repo} nor in its git HEAD: give a WikiTableQuestions checkout")
    return done.stdout.decode("utf-8")


def sample(lines: list[str], size: int, seed: int) -> list[str]:
    """``size`` data lines drawn with ``seed`` from the questions not in the fixture, in file order."""
    pool = [line for line in lines if line.split("\t", 1)[0] not in FIXTURE_IDS]
    picked = set(random.Random(seed).sample(range(len(pool)), min(size, len(pool))))
    return [line for i, line in enumerate(pool) if i in picked]


def main(argv: Sequence[str] | None = None) -> int:
    """Write the slice and print how many questions and tables it has."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path, help="a WikiTableQuestions checkout or bare git directory")
    parser.add_argument("out", type=Path, help="where to write the slice (outside the repository)")
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--split", choices=sorted(SPLITS), default="pristine-unseen-tables",
                        help="the WTQ file sliced: the unseen-table test set (held-out) or the training set (dev)")
    parser.add_argument("--exclude", type=Path, nargs="+", default=[],
                        help="data files of other slices whose questions this one leaves out (after sampling)")
    parser.add_argument("--first", type=int, default=None, help="keep the first N questions left (after --exclude)")
    args = parser.parse_args(argv)
    data, tagged_path = SPLITS[args.split]
    header, *lines = (read(args.repo, data) or "").splitlines()
    excluded = {line.split("\t", 1)[0] for path in args.exclude for line in path.read_text(encoding="utf-8").splitlines()[1:]}
    chosen = [line for line in sample(lines, args.size, args.seed) if line.split("\t", 1)[0] not in excluded][: args.first]
    ids = {line.split("\t", 1)[0] for line in chosen}
    (args.out / "data").mkdir(parents=True, exist_ok=True)
    (args.out / data).write_text("\n".join([header, *chosen]) + "\n", encoding="utf-8")
    tagged_text = read(args.repo, tagged_path, optional=True)
    if tagged_text is None:  # a mirror may lack the large tagged file: the raw targetValue is scored then
        print(f"note: {tagged_path} is absent; answers are scored against data's targetValue")
    else:
        tag_header, *tagged = tagged_text.splitlines()
        (args.out / tagged_path).parent.mkdir(parents=True, exist_ok=True)
        (args.out / tagged_path).write_text("\n".join([tag_header, *(t for t in tagged if t.split("\t", 1)[0] in ids)]) + "\n", encoding="utf-8")
    tables = sorted({line.split("\t")[2] for line in chosen})
    for table in tables:
        (args.out / table).parent.mkdir(parents=True, exist_ok=True)
        (args.out / table).write_text(read(args.repo, table) or "", encoding="utf-8")
    print(f"{len(chosen)} questions on {len(tables)} tables in {args.out} (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
