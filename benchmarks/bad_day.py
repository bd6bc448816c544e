"""A bad day: every film regresses at once, for one cause. What the second opinion
costs the check then, as ratios measured side by side in one run.

N small generated films (160×90, 24 frames, turning dashed arcs: ThorVG's
``sinf``/``cosf`` on every frame; each film's colours and speeds its own, so
each is its own source) are recorded with a preloaded library that nudges
libm one ulp switched off (tests/switched_nudge.py), then checked with it
switched on: the same file, so the same toolchain, and every film reads
``regression``, ``same scene, different pixels``, for one cause.

Each round runs, interleaved, ``digest --all --check -j 2`` with the second
opinion on (the default: 3 re-renders) and with ``--no-second-opinion``; the
figure is the median of the per-round ratios, with their range. Two sizes are
measured (default 24 and 100 films), and the 1,000-film figure is projected
from them: each mode's time as a straight line through its two sizes. With
``--callgrind`` nothing is timed: the instruction counts are no use here (the
re-renders are other processes).

Usage: python benchmarks/bad_day.py [--films 24 100] [--repeat 3] [--project 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def project(root: Path, films: int) -> None:
    from test_opinion_budget import film  # one generator, the tests' and this one

    (root / "examples").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
    for n in range(films):
        (root / "examples" / f"f{n:04d}.nf.svg").write_text(film(n))


def timed(root: Path, env: dict, *flags: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--all", "--check",
                           "-j", "2", *flags], cwd=root, env=env, capture_output=True,
                          text=True, timeout=3600)
    took = time.perf_counter() - start
    if done.returncode != 1:
        raise SystemExit(f"expected exit 1 (regressions), got {done.returncode}: "
                         f"{done.stderr[-2000:]}")
    return took, done.stdout


def main() -> int:
    import switched_nudge

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--films", type=int, nargs="+", default=[24, 100])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--project", type=int, default=1000)
    args = parser.parse_args()
    if switched_nudge.compiler() is None or not sys.platform.startswith("linux"):
        print("needs Linux and a C compiler (the preloaded nudge)", file=sys.stderr)
        return 2
    print(f"a bad day: every film regresses (one cause), -j 2, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; median of {args.repeat} interleaved rounds")
    means: dict[int, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        library = switched_nudge.build(Path(tmp))
        env = {k: v for k, v in os.environ.items()
               if k not in ("EXCUSED_COMPOSITIONS", "NF_NUDGE_WHEN", "NF_CRASH_WHEN")}
        env.update(LD_PRELOAD=str(library), XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        for count in args.films:
            root = Path(tmp) / f"p{count}"
            project(root, count)
            subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--all", "--record",
                            "-j", "2"], cwd=root, env=env, check=True, capture_output=True,
                           timeout=3600)
            nudged = dict(env, NF_NUDGE_WHEN="always")
            on, off, ratios = [], [], []
            out = ""
            for _ in range(args.repeat):
                t_off, _ = timed(root, nudged, "--no-second-opinion")
                t_on, out = timed(root, nudged)
                on.append(t_on)
                off.append(t_off)
                ratios.append(t_on / t_off)
            regressed = out.count("REGRESSION ")
            opinions = [line for line in out.splitlines() if line.startswith("opinions: ")]
            redrawn = out.count("opinion: reproducible: ") + out.count("opinion: unstable: ")
            means[count] = (statistics.median(on), statistics.median(off))
            print(f"\n{count} films, {regressed} regressions, {redrawn} redrawn, "
                  f"{len(opinions)} cause line(s); load {os.getloadavg()[0]:.1f}")
            print(f"  opinion on   {statistics.median(on):7.2f} s  "
                  f"({min(on):.2f}–{max(on):.2f})")
            print(f"  opinion off  {statistics.median(off):7.2f} s  "
                  f"({min(off):.2f}–{max(off):.2f})")
            ratio = statistics.median(ratios)
            print(f"  on / off     {ratio:7.2f}x  ({min(ratios):.2f}–{max(ratios):.2f}); target "
                  f"<= 2x: {'held' if ratio <= 2 else 'MISSED'}")
            for line in opinions:
                print(f"  {line[:160]}{'…' if len(line) > 160 else ''}")
    if len(means) >= 2:
        (a, (on_a, off_a)), (b, (on_b, off_b)) = sorted(means.items())[:1] + \
            sorted(means.items())[-1:]
        n = args.project

        def line(t_a: float, t_b: float) -> float:
            return t_a + (t_b - t_a) * (n - a) / (b - a)

        p_on, p_off = line(on_a, on_b), line(off_a, off_b)
        print(f"\nprojected to {n} films (straight lines through {a} and {b}): on {p_on:.1f} s, "
              f"off {p_off:.1f} s, {p_on / p_off:.2f}x; target <= 2x: "
              f"{'held' if p_on / p_off <= 2 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
