"""Start-up costs, side by side in one run (best of ``--repeat``, wall clock):

1. ``nanoframes --version`` against a bare ``python -c pass`` (target <= 3x).
2. ``nanoframes digest --all --check`` on the examples: how long after the
   process is launched the first composition starts to be parsed (target
   <= 0.15 s), beside the whole sweep. The command runs in a fresh interpreter
   whose ``nanoframes.model.composition.parse`` is wrapped to print the wall
   clock time of its first call (the wrapper imports that module first, which
   the command does before any parse anyway).

The package's bytecode is compiled first, as installing a wheel does: with
``PYTHONDONTWRITEBYTECODE`` set (some CI images set it) an editable checkout
would otherwise compile every module from source on every launch, which is
not what a user's installed copy does.

Usage: python benchmarks/startup.py [--repeat 5] [--jobs 1]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FIRST_PARSE = """
import sys, time
import nanoframes.model.composition as composition
parse = composition.parse
def first(*args, **kwargs):
    if not getattr(first, "seen", False):
        first.seen = True
        sys.stderr.write(f"FIRST-PARSE {time.time()!r} {time.process_time()!r}\\n")
    return parse(*args, **kwargs)
composition.parse = first
from nanoframes.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], **kw) -> tuple[float, float, float, str]:
    """(launch wall time, seconds it ran, CPU seconds it used, stderr)."""
    launched, cpu = time.time(), _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, **kw)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{args} failed: {proc.stderr}")
    return launched, took, _children_cpu() - cpu, proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    compileall.compile_dir(ROOT / "nanoframes", quiet=1)
    command = shutil.which("nanoframes") or "nanoframes"
    inf = float("inf")
    bare, version, bare_cpu, version_cpu = inf, inf, inf, inf
    for _ in range(args.repeat):
        _, took, cpu, _ = timed([sys.executable, "-c", "pass"])
        bare, bare_cpu = min(bare, took), min(bare_cpu, cpu)
        _, took, cpu, _ = timed([command, "--version"])
        version, version_cpu = min(version, took), min(version_cpu, cpu)
    before = before_cpu = sweep = inf
    for _ in range(args.repeat):
        launched, took, _, err = timed(
            [sys.executable, "-c", FIRST_PARSE, "digest", "--all", "--check",
             "-j", str(args.jobs)], cwd=ROOT)
        wall, cpu = next((float(line.split()[1]), float(line.split()[2]))
                         for line in err.splitlines() if line.startswith("FIRST-PARSE "))
        before, before_cpu, sweep = min(before, wall - launched), min(before_cpu, cpu), \
            min(sweep, took)
    print(f"best of {args.repeat}; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs; wall clock (CPU time of the process)")
    print(f"  python -c pass            {bare * 1000:7.1f} ms ({bare_cpu * 1000:.1f} ms)")
    print(f"  nanoframes --version      {version * 1000:7.1f} ms ({version_cpu * 1000:.1f} ms)")
    print(f"--version: {version / bare:.2f}x a bare interpreter, CPU {version_cpu / bare_cpu:.2f}x "
          "(target <= 3x)")
    print(f"digest --all --check -j {args.jobs}: first parse after {before:.3f} s "
          f"({before_cpu:.3f} s CPU) of a {sweep:.2f} s sweep (target <= 0.15 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
