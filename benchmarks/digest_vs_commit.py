"""``nanoframes digest --all`` here against another checkout of nanoframes, side by
side in one run, as ratios.

    git archive 0a1d8c8 | tar -x -C /tmp/base
    python benchmarks/digest_vs_commit.py /tmp/base [--repeat 5] [--jobs 2]

Both trees run with this interpreter and its installed dependencies; the other
tree's package is put first on ``PYTHONPATH``. Each round runs the two one after
the other (alternating which goes first), so load on a shared machine falls on
both alike; the best of the rounds is compared. Two figures:

1. ``digest --all -j N`` as a command, in each tree's own directory (its own
   examples and ledger);
2. in-process, per tree: every example parsed and every frame's document baked
   (no raster), best of 3: the part of the work this change touches.

No test asserts these; on a busy machine read the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

_BAKE = r"""
import time, sys
from pathlib import Path
from nanoframes.bake.baker import Baker
from nanoframes.model.composition import parse
paths = sorted(Path("examples").rglob("*.nf.svg"))
best = float("inf")
for _ in range(3):
    start = time.perf_counter()
    for p in paths:
        comp = parse(p)
        baker = Baker(comp)
        for i in range(comp.frame_count):
            baker.document(i)
    best = min(best, time.perf_counter() - start)
print(best)
"""


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _digest(tree: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--all", "-j", str(jobs)],
                   cwd=tree, env=_env(tree), check=True, capture_output=True, timeout=1800)
    return time.perf_counter() - start


def _bake(tree: Path) -> float:
    out = subprocess.run([sys.executable, "-c", _BAKE], cwd=tree, env=_env(tree), check=True,
                         capture_output=True, text=True, timeout=1800)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    trees = {"this": HERE, "base": args.base.resolve()}
    for label, measure in (("digest --all", lambda t: _digest(t, args.jobs)),
                           ("parse + bake", _bake)):
        best = {name: float("inf") for name in trees}
        for round_ in range(args.repeat):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                best[name] = min(best[name], measure(trees[name]))
        print(f"{label:<14} this {best['this']:.3f} s  base {best['base']:.3f} s  "
              f"ratio this/base {best['this'] / best['base']:.3f}  "
              f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
