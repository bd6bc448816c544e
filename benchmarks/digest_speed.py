"""How fast ``nanoframes digest`` is, as ratios measured in one run.

1. Overhead: nanoframes' own single-process digest of each composition
   (de-duplication off: parse, identity, bake, raster, hash) against the bare
   ThorVG raster time of the very same documents (baked beforehand, outside the
   timer). Target: ratio <= 1.3.
2. Sweep: ``nanoframes digest --all`` as a command, with de-duplication and
   ``-j 2``, against single-process without de-duplication. Target: >= 2.5x.

Usage: python benchmarks/digest_speed.py [PATH ...] [--jobs 2] [--repeat 3] [--clock cpu]
       [--check-only]
0. A matching check against the raster floor (issue 45): ``check_one`` of each
   composition in one process, as ``digest --check -j 1`` judges it
   (de-duplication and the pipeline on, the ledger read once), against ThorVG
   alone drawing the distinct documents the check draws (baked beforehand,
   outside the timer). Target: ratio <= 1.15. Both clocks are printed (the
   pipeline draws on other threads of the same process, so CPU time counts them).
3. Ceiling: the least time any schedule of ``-j N`` could take here (the
   interpreter and imports, plus each distinct document baked, rasterized and
   hashed once, spread perfectly over the CPUs; parsing, identities and held
   frames free), and so the largest speed-up this machine allows against the
   single-process figure.

Timings are best-of-N; no test asserts them. The overhead ratio can use CPU time
of this process (``--clock cpu``, ThorVG runs single-threaded here) so that a
busy machine does not distort it; the sweep is wall clock by nature, so the
load average is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from nanoframes.config import find_project_root, load_config
from nanoframes.determinism.reading import composition_identity, read_film
from nanoframes.determinism.sweep import collect
from nanoframes.engine.raster import get_rasterizer
from nanoframes.frames.digest import frame_digest
from nanoframes.frames.film import Film
from nanoframes.text.fonts import face_bytes

CLOCK = time.perf_counter


def _best(fn, repeat: int, clock=None) -> float:
    clock = clock or CLOCK
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def overhead(paths: list[Path], root: Path, repeat: int) -> float:
    """Prints the overhead table; returns the work that no schedule can avoid:
    baking, rasterizing and hashing each distinct document of each film once."""
    print(f"{'composition':<44}{'frames':>7}{'unique':>7}{'bare s':>9}{'nf s':>9}{'ratio':>7}")
    total_bare = total_nf = unavoidable = 0.0
    frames = 0
    for path in paths:
        film = Film.open(path, root, dedup=False)
        comp = film.comp
        rast = get_rasterizer()
        for face in film.baker.faces():
            rast.register_font(face.name, face_bytes(face))
        docs = [film.document(i) for i in range(comp.frame_count)]
        read_film(path, dedup=False)  # warm: font book, faces, ThorVG's first use

        def bare(docs=docs, w=comp.width, h=comp.height, render=rast.render) -> None:
            for doc in docs:
                render(doc, w, h)

        t_bare = _best(bare, repeat)
        t_nf = _best(lambda path=path: read_film(path, dedup=False), repeat)
        shown_first: dict[bytes, int] = {}  # each distinct document -> its first frame
        for i, doc in enumerate(docs):
            shown_first.setdefault(doc, i)
        first = tuple(shown_first.values())

        def distinct(film=film, first=first, w=comp.width, h=comp.height,
                     render=rast.render) -> None:
            for i in first:
                frame_digest(render(film.document(i), w, h))

        unavoidable += _best(distinct, repeat)
        total_bare += t_bare
        total_nf += t_nf
        frames += comp.frame_count
        key = path.relative_to(root).as_posix()
        print(f"{key:<44}{comp.frame_count:>7}{len(set(docs)):>7}{t_bare:>9.3f}{t_nf:>9.3f}"
              f"{t_nf / t_bare:>7.2f}")
    print(f"{'all':<44}{frames:>7}{'':>7}{total_bare:>9.3f}{total_nf:>9.3f}"
          f"{total_nf / total_bare:>7.2f}")
    print(f"bare ThorVG: {frames / total_bare:.0f} frames/s; nanoframes single-process, "
          f"no de-duplication: {frames / total_nf:.0f} frames/s")
    print(f"overhead ratio (target <= 1.3): {total_nf / total_bare:.2f}")
    breakdown(paths, root)
    return unavoidable


def matching_check(paths: list[Path], root: Path, repeat: int) -> None:
    """Prints ``check_one`` of each composition against ThorVG alone drawing the
    distinct documents that check draws, on both clocks."""
    from nanoframes.determinism.ledger import read_ledger
    from nanoframes.determinism.reading import check_one

    config = load_config(root)
    ledger = read_ledger(config.ledger_path)
    clocks = {"wall": time.perf_counter, "cpu": time.process_time}
    totals = {(k, c): 0.0 for k in ("bare", "check") for c in clocks}
    print(f"{'a matching check, one process':<44}{'unique':>7}{'bare s':>9}{'check s':>9}"
          f"{'ratio':>7}{'(cpu)':>7}")
    for path in paths:
        film = Film.open(path, root)
        comp = film.comp
        rast = get_rasterizer()
        for face in film.baker.faces():
            rast.register_font(face.name, face_bytes(face))
        docs = list(dict.fromkeys(film.document(i) for i in range(comp.frame_count)))
        check_one(path, config=config, ledger=ledger)  # warm

        def bare(docs=docs, w=comp.width, h=comp.height, render=rast.render) -> None:
            for doc in docs:
                render(doc, w, h)

        row = {}
        for name, clock in clocks.items():
            row["bare", name] = _best(bare, repeat, clock)
            row["check", name] = _best(lambda path=path: check_one(
                path, config=config, ledger=ledger), repeat, clock)
            for k in ("bare", "check"):
                totals[k, name] += row[k, name]
        key = path.relative_to(root).as_posix()
        print(f"{key:<44}{len(docs):>7}{row['bare', 'wall']:>9.3f}{row['check', 'wall']:>9.3f}"
              f"{row['check', 'wall'] / row['bare', 'wall']:>7.2f}"
              f"{row['check', 'cpu'] / row['bare', 'cpu']:>7.2f}")
    wall = totals["check", "wall"] / totals["bare", "wall"]
    cpu = totals["check", "cpu"] / totals["bare", "cpu"]
    print(f"{'all':<51}{totals['bare', 'wall']:>9.3f}{totals['check', 'wall']:>9.3f}"
          f"{wall:>7.2f}{cpu:>7.2f}")
    print(f"a matching check against the raster floor (target <= 1.15): {wall:.2f} wall, "
          f"{cpu:.2f} CPU time; load average {os.getloadavg()[0]:.1f}\n")


def breakdown(paths: list[Path], root: Path) -> None:
    """Where nanoframes' time goes, phase by phase (one pass, same clock)."""
    phases = dict.fromkeys(("open+identity", "bake", "raster", "hash"), 0.0)
    for path in paths:
        t = CLOCK()
        film = Film.open(path, root, dedup=False)
        composition_identity(film.comp, film.baker)
        film._prepare()  # registers faces
        phases["open+identity"] += CLOCK() - t
        for i in range(film.comp.frame_count):
            t0 = CLOCK()
            doc = film.document(i)
            t1 = CLOCK()
            frame = film.raster(doc)
            t2 = CLOCK()
            frame_digest(frame)
            t3 = CLOCK()
            phases["bake"] += t1 - t0
            phases["raster"] += t2 - t1
            phases["hash"] += t3 - t2
    total = sum(phases.values())
    print("where the time goes: " + ", ".join(
        f"{k} {v:.3f} s ({100 * v / total:.0f}%)" for k, v in phases.items()) + "\n")


def sweep(paths: list[Path], root: Path, jobs: int, repeat: int, frames: int,
          everything: bool, unavoidable: float) -> None:
    targets = ["--all"] if everything else [str(p) for p in paths]

    def command(*args: str) -> float:
        cmd = [sys.executable, "-m", "nanoframes", "digest", *targets, *args]

        def run() -> None:
            subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)

        return _best(run, repeat, time.perf_counter)

    slow = command("-j", "1", "--no-dedup")
    fast = command("-j", str(jobs))
    one = command("-j", "1")
    print(f"digest, 1 process, no de-duplication: {slow:.3f} s ({frames / slow:.0f} frames/s)")
    print(f"digest, 1 process, de-duplication:    {one:.3f} s ({frames / one:.0f} frames/s)")
    print(f"digest, -j {jobs}, de-duplication:       {fast:.3f} s ({frames / fast:.0f} frames/s)")
    print(f"speed-up (target >= 2.5): {slow / fast:.2f}x")
    # The best any schedule could do here: the interpreter and imports (what
    # `nanoframes --version` costs), plus baking, rasterizing and hashing every
    # distinct document once, spread perfectly over the CPUs the workers can use;
    # parsing, identities and held frames for free.
    start = _best(lambda: subprocess.run([sys.executable, "-m", "nanoframes", "--version"],
                                         check=True, stdout=subprocess.DEVNULL), repeat)
    cpus = min(jobs, os.cpu_count() or 1)
    best = start + unavoidable / cpus
    print(f"ceiling: start-up {start:.3f} s + each distinct document baked, rasterized and "
          f"hashed once {unavoidable:.3f} s / {cpus} CPUs = {best:.3f} s at the very least "
          f"for -j {jobs}, so at most {slow / best:.2f}x on this machine")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall clock: a busy "
          "machine distorts this ratio)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="clock for the overhead ratio (default wall)")
    ap.add_argument("--no-sweep", action="store_true", help="measure the overhead ratio only")
    ap.add_argument("--check-only", action="store_true",
                    help="only a matching check against the raster floor (and the breakdown)")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    config = load_config(find_project_root(args.paths[0] if args.paths else None))
    paths = collect(args.paths, config)
    if not paths:
        print("no compositions found", file=sys.stderr)
        return 2
    frames = sum(Film.open(p, config.root).comp.frame_count for p in paths)
    print(f"{len(paths)} compositions, {frames} frames; overhead clock: {args.clock}\n")
    matching_check(paths, config.root, args.repeat)
    if args.check_only:
        breakdown(paths, config.root)
        return 0
    unavoidable = overhead(paths, config.root, args.repeat)
    if not args.no_sweep:
        sweep(paths, config.root, args.jobs, args.repeat, frames, not args.paths, unavoidable)
    return 0


if __name__ == "__main__":
    sys.exit(main())
