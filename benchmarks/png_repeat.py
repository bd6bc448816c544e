"""Do PNG bytes repeat from process to process? Counts, per deflate level.

Each of ``--processes`` fresh processes (two at a time) draws the same 20
frames of the demo film at 960x540, Sub-filters them as ``frames/png.py`` does
and deflates them with ISA-L at each level asked for, then prints the SHA-256
of every result. A process "differs" at a level when any of its 20 streams is
not the one most processes produced. Every stream is checked to inflate to the
same rows: what varies is never the pixels.

Why it exists: ISA-L's level 1 gave a different (valid) stream for a few
frames in about one process in a hundred on this project's machine, and
repeated it within that process; level 0 did not
(docs/decisions/0008-png-encoder-isal-level-0.md). The rate is too low for a unit test to see,
so the evidence for the encoder's level is this script.

Usage: python benchmarks/png_repeat.py [--processes 200] [--levels 0 1]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from render_speed import build_film

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import hashlib, sys, zlib
from pathlib import Path
from isal import isal_zlib
from nanoframes.frames.film import Film
from nanoframes.frames.png import sub_filtered
film = Film.open(Path(sys.argv[1]))
rows = [sub_filtered(film.raster(film.document(i)).copy()) for i in range(40, 120, 4)]
for level in map(int, sys.argv[2:]):
    streams = [isal_zlib.compress(r, level) for r in rows]
    assert all(zlib.decompress(s) == r.tobytes() for s, r in zip(streams, rows))
    print(level, " ".join(hashlib.sha256(s).hexdigest()[:12] for s in streams))
"""


def one_process(film: Path, levels: list[int]) -> dict[int, list[str]]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(film), *map(str, levels)],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return {int(line.split()[0]): line.split()[1:] for line in out.splitlines()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=200)
    ap.add_argument("--levels", type=int, nargs="+", default=[0, 1])
    args = ap.parse_args()
    try:
        import isal  # noqa: F401
    except ImportError:
        print("isal is not installed: nanoframes deflates with zlib, which repeats itself")
        return 0
    with tempfile.TemporaryDirectory(prefix="nf-png-repeat-") as raw:
        film = build_film(Path(raw))
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: one_process(film, args.levels),
                                    range(args.processes)))
    print(f"{args.processes} processes, 20 frames each (960x540 demo)")
    for level in args.levels:
        runs = [r[level] for r in results]
        usual = [collections.Counter(frame).most_common(1)[0][0] for frame in zip(*runs)]
        differing = [r for r in runs if r != usual]
        frames = sum(a != b for r in differing for a, b in zip(r, usual))
        print(f"  ISA-L level {level}: {len(differing)} of {len(runs)} processes deflated "
              f"some frame differently ({frames} of {20 * len(runs)} streams)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
