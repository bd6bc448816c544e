"""What containing a crash in ThorVG costs (decision record 0030), side by side.

Each pair runs back to back, alternating which goes first, ``--repeat`` times;
the median of the per-repeat ratio is printed (guarded / unguarded):

1. ``nanoframes digest --check examples``: the command's guard (a fork before
   anything is imported, cli/guard.py) against ``NANOFRAMES_GUARDED=0``;
2. ``nanoframes render examples/countdown.nf.svg -o DIR``, cold frame cache
   (a fresh cache each run) and warm (the same cache again), guarded and not;
3. the plugin's path: ``check_one`` on every example drawn in a worker process
   (``State.drawing_pool``: the pool started, then one task per item) against
   ``check_one`` drawing in the process itself, each in a fresh interpreter.

Usage: python benchmarks/crash_guard.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = shutil.which("nanoframes", path=str(Path(sys.executable).parent)) or "nanoframes"
PLUGIN = """
import sys, time
from pathlib import Path
from nanoframes.config import find_project_root, load_config
from nanoframes.determinism.reading import check_one
t0 = time.perf_counter()
config = load_config(find_project_root(Path('examples')))
pool = None
if sys.argv[1] == 'worker':
    from nanoframes.frames.workers import worker_pool
    pool = worker_pool(1, config.root)
for path in sorted(Path('examples').rglob('*.nf.svg')):
    verdict, _ = check_one(path, config=config, pool=pool)
    assert verdict.kind.value != 'error', verdict.line()
if pool is not None:
    pool.shutdown()
print(time.perf_counter() - t0)
"""


def _timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    out = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    if out.returncode not in (0, 1):
        raise SystemExit(f"{args}: exit {out.returncode}\n{out.stderr}")
    return float(out.stdout) if args[:2] == [sys.executable, "-c"] else took


def _pair(name: str, a, b, repeat: int) -> None:
    ratios, times = [], ([], [])
    for n in range(repeat):
        order = (0, 1) if n % 2 == 0 else (1, 0)
        got = {}
        for which in order:
            got[which] = (a, b)[which]()
        times[0].append(got[0])
        times[1].append(got[1])
        ratios.append(got[0] / got[1])
    print(f"{name:<34} {statistics.median(times[0]):7.3f} s  {statistics.median(times[1]):7.3f} s"
          f"  ratio {statistics.median(ratios):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    base = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    bare = dict(base, NANOFRAMES_GUARDED="0")
    work = Path(tempfile.mkdtemp(prefix="nf-guard-"))
    try:
        print(f"{'':<34} {'guarded':>9}  {'unguarded':>9}  (medians; ratio: guarded/unguarded)")
        check = [EXE, "digest", "--check", "examples"]
        _pair("digest --check examples", lambda: _timed(check, base),
              lambda: _timed(check, bare), repeat)
        film = "examples/countdown.nf.svg"
        runs = iter(range(10 ** 6))

        def cold(env):
            n = next(runs)
            return _timed([EXE, "render", film, "-o", str(work / f"o{n}")],
                          dict(env, NANOFRAMES_CACHE_DIR=str(work / f"c{n}")))

        def warm(env):
            n = next(runs)
            return _timed([EXE, "render", film, "-o", str(work / f"o{n}")],
                          dict(env, NANOFRAMES_CACHE_DIR=str(work / "warm")))

        warm(base)  # fill the warm cache once
        _pair("render -o DIR, cold frame cache", lambda: cold(base), lambda: cold(bare), repeat)
        _pair("render -o DIR, warm frame cache", lambda: warm(base), lambda: warm(bare), repeat)
        _pair("plugin items: worker / in-process",
              lambda: _timed([sys.executable, "-c", PLUGIN, "worker"], base),
              lambda: _timed([sys.executable, "-c", PLUGIN, "here"], base), repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
