"""The pytest plugin against the sweep it wraps, on a corpus of 100+ films.

The corpus: the bundled examples copied ``--copies`` times (default 9, 126
compositions) into a temporary project, each copy with one colour changed in
every composition, so every film is distinct. It is recorded once with
``nanoframes digest --all --record -j 2``, then checked, each command in a
fresh process, wall clock:

1. ``pytest --nf-check -n 2`` against ``nanoframes digest --all --check -j 2``
2. ``pytest --nf-check`` (serial) against ``nanoframes digest --all --check -j 1``

Target: both ratios at most 1.1. Every run must pass (exit 0): a benchmark of
a failing check would measure the wrong thing. Each ratio is printed twice:
the best run of each command against each other, and the median over the
repeats of the ratio within one repeat (the two commands run back to back, in
alternating order). On a shared machine whose speed drifts by a third within
minutes, the second is the steadier figure.

Beside each ratio, the ratio of CPU time: every process each command started,
counted by ``perf stat`` where it is installed (without it, only the processes
the command waited for, which leaves out pytest's drawing workers). On two
CPUs that both commands keep busy, the CPU ratio is what the wall ratio tends to.

pytest is timed twice: with only the plugins the check uses (xdist's and
nanoframes's, ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``), which is what the ratios
are about, and with every plugin installed here, which is what this
environment pays. Other plugins cost what they cost in any pytest session: in
this project's dev environment hypothesis's plugin imports hypothesis (about
0.3 s) at the end of every pytest process, the controller's and each worker's.

Bytecode first: where ``PYTHONDONTWRITEBYTECODE`` is set (this project's
machines set it) no process writes bytecode, so every pytest process would
rewrite the asserts of every installed plugin's modules from source (115
modules here, hypothesis's 73 of them: about 1 s of CPU per process, three
processes under ``-n 2``) and every process would compile nanoframes from
source; an installed environment has both cached. Both are written once before
timing (``--no-bytecode`` skips it, to see what such a machine pays).

Usage: python benchmarks/plugin_speed.py [--copies 9] [--repeat 3] [--jobs 2] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
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


# pytest with only the plugins the check uses (the ratios' subject)
ONLY_OURS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
OUR_PLUGINS = ["-p", "xdist.plugin", "-p", "pytest_nanoframes.plugin"]
# CPU time of every process a command starts: drawing workers are the children of a
# forkserver nobody waits for, so only perf (counting inherited tasks) sees them all.
PERF = shutil.which("perf")


def timed(args: list[str], cwd: Path, env: dict[str, str] | None = None
          ) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and every process it started; with
    no ``perf`` here, only of the processes it waited for)."""
    with tempfile.NamedTemporaryFile(suffix=".perf") as counted:
        command = [PERF, "stat", "-x,", "-e", "task-clock", "-o", counted.name, "--", *args] \
            if PERF else args
        cpu, start = _children_cpu(), time.perf_counter()
        proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})})
        took = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        if PERF:
            for line in Path(counted.name).read_text().splitlines():
                if "task-clock" in line:
                    return took, float(line.split(",")[0]) / 1000
        return took, _children_cpu() - cpu


def write_bytecode() -> None:
    """The package's bytecode and pytest's rewritten plugin modules, written once
    (as the suite's conftest.py does where PYTHONDONTWRITEBYTECODE is set)."""
    import compileall

    for package in ("nanoframes", "pytest_nanoframes"):
        compileall.compile_dir(ROOT / package, quiet=2, legacy=False, workers=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as empty:
        subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                        "no:cacheprovider", "--rootdir", empty, empty], cwd=empty, env=env,
                       capture_output=True, timeout=300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-bytecode", action="store_true",
                    help="do not write bytecode first (what a PYTHONDONTWRITEBYTECODE "
                         "machine pays)")
    args = ap.parse_args()
    if not args.no_bytecode:
        write_bytecode()
    print(f"PYTHONDONTWRITEBYTECODE {'set' if sys.dont_write_bytecode else 'unset'}; "
          f"bytecode {'not ' if args.no_bytecode else ''}written first")
    nf = [sys.executable, "-m", "nanoframes"]
    pytest = [sys.executable, "-m", "pytest", "-q", "--nf-check"]
    with tempfile.TemporaryDirectory(prefix="nf-plugin-speed-") as raw:
        tmp = Path(raw)
        count = build_corpus(tmp, args.copies)
        timed([*nf, "digest", "--all", "--record", "-j", str(args.jobs)], tmp)
        j = str(args.jobs)
        # Two groups, each a sweep and the pytest runs measured against it. In each
        # repeat a group runs back to back, in the opposite order to the repeat
        # before, so a slow patch of the shared machine falls on both sides.
        groups = {
            f"-j {j}": {  # name: (command, extra environment)
                f"digest --all --check -j {j}": ([*nf, "digest", "--all", "--check", "-j", j],
                                                  None),
                f"pytest --nf-check -n {j}": ([*pytest, *OUR_PLUGINS, "-n", j], ONLY_OURS),
                "  the same, every plugin": ([*pytest, "-n", j], None),
            },
            "-j 1": {
                "digest --all --check -j 1": ([*nf, "digest", "--all", "--check", "-j", "1"],
                                              None),
                "pytest --nf-check (serial)": ([*pytest, "-p", "pytest_nanoframes.plugin"],
                                               ONLY_OURS),
                "  the same, every plugin": ([*pytest, "-p", "no:xdist"], None),
            },
        }
        walls: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        for n in range(args.repeat):
            for group, runs in groups.items():
                order = list(runs.items()) if n % 2 == 0 else list(runs.items())[::-1]
                for name, (command, env) in order:
                    wall, used = timed(command, tmp, env)
                    walls.setdefault((group, name), []).append(wall)
                    cpus.setdefault((group, name), []).append(used)
                    print(f"  ({name.strip()}: {wall:.2f} s, {used:.2f} s CPU)", flush=True)
        print(f"corpus: {count} compositions; {args.repeat} repeats; "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print("  against the sweep: best of each / median of each repeat's ratio "
              "(target <= 1.1)")
        for group, runs in groups.items():
            base, *others = runs
            sweep = walls[group, base]
            print(f"  {base:<34}{min(sweep):7.2f} s")
            for name in others:
                own = walls[group, name]
                per_repeat = sorted(a / b for a, b in zip(own, sweep))
                cpu_ratio = min(cpus[group, name]) / min(cpus[group, base])
                print(f"  {name:<34}{min(own):7.2f} s   {min(own) / min(sweep):.2f} / "
                      f"{statistics.median(per_repeat):.2f} (CPU time {cpu_ratio:.2f}"
                      f"{'' if PERF else ', waited-for processes only: no perf here'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
