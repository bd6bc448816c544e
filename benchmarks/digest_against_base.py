"""``nanoframes digest --all`` of this checkout against another one (a base commit),
side by side in one run: the two commands alternate, each in its own tree with
its own examples, so a load change on the machine hits both alike.

Usage:
    git archive BASE | tar -x -C /tmp/base
    python benchmarks/digest_against_base.py /tmp/base [--repeat 5] [--jobs 2]

Prints each side's best and median wall time and the ratio this / base (1.0:
the same speed). No test asserts timings.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def timed(tree: Path, jobs: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--all", "-j", str(jobs)],
                   cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL, timeout=900)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path, help="a checkout of the base commit")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    sides = {"base": args.base.resolve(), "this": HERE}
    for tree in sides.values():  # warm the page cache and any first-run work
        timed(tree, args.jobs)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.repeat):
        for name, tree in sides.items():
            times[name].append(timed(tree, args.jobs))
    for name, ts in times.items():
        print(f"{name}: best {min(ts):.2f} s, median {statistics.median(ts):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in ts)})")
    print(f"ratio this/base: best {min(times['this']) / min(times['base']):.3f}, median "
          f"{statistics.median(times['this']) / statistics.median(times['base']):.3f}; "
          f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
