"""What keeping reference frames costs: ``digest --all --record`` with the store on
against the same command with ``--no-store``, side by side in one run.

Each round records the examples into a fresh ledger, once with an empty store
(every distinct frame encoded and written) and once with ``--no-store``; the
order alternates between rounds and the best of each is kept. Target: store on
costs at most 1.5x store off. Also prints, for the PNG encoder, what Pillow's
zlib levels cost on the examples' distinct frames (time and bytes), against
the encoder the store and ``render`` share (``frames/png.py``).

Usage: python benchmarks/store_speed.py [--jobs N] [--repeat 2] [--levels]
Timings are wall clock (the load average is printed beside them); no test
asserts them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _project(base: Path) -> Path:
    project = base / "proj"
    shutil.copytree(ROOT / "examples", project / "examples")
    (project / "pyproject.toml").write_text("[tool.nanoframes]\n")
    return project


def _record(project: Path, jobs: int, store: bool) -> float:
    ledger = project / "tests" / "digests.json"
    ledger.unlink(missing_ok=True)
    shutil.rmtree(project / ".nanoframes", ignore_errors=True)
    cmd = [sys.executable, "-m", "nanoframes", "digest", "--all", "--record", "-j", str(jobs)]
    if not store:
        cmd.append("--no-store")
    start = time.perf_counter()
    subprocess.run(cmd, cwd=project, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _levels(project: Path) -> None:
    import io

    from PIL import Image

    from nanoframes.frames.store import Store, encode_png

    frames = [Store(project / ".nanoframes" / "store").read_entry(p)
              for p in Store(project / ".nanoframes" / "store").entries()]
    print(f"PNG levels over {len(frames)} distinct frames:")
    for level in (1, 6):
        start = time.perf_counter()
        size = 0
        for rgba in frames:
            out = io.BytesIO()
            Image.fromarray(rgba, "RGBA").save(out, format="PNG", compress_level=level)
            size += out.tell()
        took = time.perf_counter() - start
        print(f"  Pillow level {level}: {took:6.2f} s  {size / 1e6:7.1f} MB")
    start = time.perf_counter()
    size = sum(len(encode_png(rgba)) for rgba in frames)
    took = time.perf_counter() - start
    from nanoframes.frames import png

    print(f"  frames.png.encode_png (Sub filter, {png.ENCODER} level {png.LEVEL}): "
          f"{took:6.2f} s  {size / 1e6:7.1f} MB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--levels", action="store_true", help="also compare PNG zlib levels")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = _project(Path(tmp))
        on, off = [], []
        for n in range(args.repeat):
            order = (True, False) if n % 2 == 0 else (False, True)
            for store in order:
                (on if store else off).append(_record(project, args.jobs, store))
        entries = sum(1 for _ in (project / ".nanoframes" / "store").rglob("*.png")) \
            if (project / ".nanoframes").exists() else 0
        if not entries:  # the last run was --no-store: fill the store once more
            _record(project, args.jobs, True)
        print(f"digest --all --record -j {args.jobs} (best of {args.repeat}; "
              f"load {os.getloadavg()[0]:.2f}):")
        print(f"  store off: {min(off):6.2f} s")
        print(f"  store on:  {min(on):6.2f} s   ratio {min(on) / min(off):.2f}x (target <= 1.5x)")
        if args.levels:
            _levels(project)
    return 0


if __name__ == "__main__":
    sys.exit(main())
