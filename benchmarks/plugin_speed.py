"""The pytest plugin against the sweep it wraps, on a corpus of 100+ films.

The corpus: the bundled examples copied ``--copies`` times (default 9, 108
compositions) into a temporary project, each copy with one colour changed in
every composition, so every film is distinct. It is recorded once with
``nanoframes digest --all --record -j 2``, then checked four ways, each in a
fresh process, wall clock, best of ``--repeat``:

1. ``pytest --nf-check -n 2`` against ``nanoframes digest --all --check -j 2``
2. ``pytest --nf-check`` (serial) against ``nanoframes digest --all --check -j 1``

Target: both ratios at most 1.1. Every run must pass (exit 0): a benchmark of
a failing check would measure the wrong thing.

Usage: python benchmarks/plugin_speed.py [--copies 9] [--repeat 1] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLOUR = re.compile(r'fill="#([0-9a-fA-F]{6})"')

PYPROJECT = """\
[tool.nanoframes]

[tool.pytest.ini_options]
testpaths = ["examples", "tests"]
addopts = "-p no:cacheprovider"
"""


def build_corpus(tmp: Path, copies: int) -> int:
    """``tmp/examples/copyK/...``: the examples, one colour moved per composition."""
    (tmp / "pyproject.toml").write_text(PYPROJECT)
    (tmp / "tests").mkdir()
    count = 0
    for k in range(copies):
        dest = tmp / "examples" / f"copy{k}"
        shutil.copytree(ROOT / "examples", dest,
                        ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        for path in dest.rglob("*.nf.svg"):
            text = path.read_text(encoding="utf-8")
            # the first solid fill, nudged by k: a different film, the same work
            moved = COLOUR.sub(lambda m, k=k: f'fill="#{(int(m[1], 16) + k + 1) % 0x1000000:06x}"',
                               text, count=1)
            path.write_text(moved, encoding="utf-8")
            count += 1
    return count


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and every process it started)."""
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return took, _children_cpu() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    nf = [sys.executable, "-m", "nanoframes"]
    pytest = [sys.executable, "-m", "pytest", "-q", "--nf-check"]
    with tempfile.TemporaryDirectory(prefix="nf-plugin-speed-") as raw:
        tmp = Path(raw)
        count = build_corpus(tmp, args.copies)
        timed([*nf, "digest", "--all", "--record", "-j", str(args.jobs)], tmp)
        runs = {
            "pytest -n": [*pytest, "-n", str(args.jobs)],
            "digest -j": [*nf, "digest", "--all", "--check", "-j", str(args.jobs)],
            "pytest": [*pytest, "-p", "no:xdist"],
            "digest -j 1": [*nf, "digest", "--all", "--check", "-j", "1"],
        }
        best = {name: float("inf") for name in runs}
        cpu = dict(best)
        for _ in range(args.repeat):
            for name, command in runs.items():
                wall, used = timed(command, tmp)
                best[name], cpu[name] = min(best[name], wall), min(cpu[name], used)
                print(f"  ({name}: {wall:.2f} s, {used:.2f} s CPU)", flush=True)
        j = args.jobs
        print(f"corpus: {count} compositions; best of {args.repeat}; "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"  pytest --nf-check -n {j}              {best['pytest -n']:7.2f} s")
        print(f"  digest --all --check -j {j}           {best['digest -j']:7.2f} s")
        print(f"  pytest --nf-check (serial)         {best['pytest']:7.2f} s")
        print(f"  digest --all --check -j 1           {best['digest -j 1']:7.2f} s")
        print(f"-n {j} / -j {j}: {best['pytest -n'] / best['digest -j']:.2f} "
              f"(CPU time {cpu['pytest -n'] / cpu['digest -j']:.2f}; target <= 1.1)")
        print(f"serial / -j 1: {best['pytest'] / best['digest -j 1']:.2f} "
              f"(CPU time {cpu['pytest'] / cpu['digest -j 1']:.2f}; target <= 1.1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
