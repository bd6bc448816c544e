"""Memory stays flat across many distinct documents through nanoframes.engine.raster.

Renders 5,000 documents of distinct byte lengths at 320x180 (and measures as
many distinct strings with text_bounds), printing RSS at start, after a
200-frame warm-up, and at the end. Exits 1 if RSS grows more than 20 MB after
warm-up. With --compare (default on) it runs thorvg-python's own classes over
the same documents in a subprocess, to show the leak the binding avoids: the
wrapper makes a new ctypes array type per distinct length, cached forever.

    python benchmarks/raster_memory.py [--frames N] [--no-compare]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

W, H = 320, 180
WARMUP = 200
LIMIT_MB = 20.0
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
FACE = "BenchDejaVu"


def rss_mb() -> float:
    """Current resident set size (Linux); peak RSS elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def document(i: int) -> bytes:
    """Frame i: its own byte length (the pad) and its own digits and text."""
    pad = "p" * i  # distinct length per frame: the wrapper's ctypes-type leak trigger
    words = "frame " + "x" * (i % 40)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}"><g id="{pad}">'
        f'<rect x="{i % 97 * 1.37:.3f}" y="20" width="{50 + i % 113}" height="80" '
        f'fill="#{i * 7919 % 0xFFFFFF:06x}" fill-opacity="0.{i % 9 + 1}"/>'
        f'<circle cx="{160 + i % 31}" cy="90" r="{10 + i % 57}.{i % 10}" fill="teal"/>'
        f'<text x="10" y="160" font-family="{FACE}" font-size="{14 + i % 20}">{words}</text>'
        "</g></svg>"
    ).encode()


def run_ours(frames: int) -> bool:
    from nanoframes.engine.raster import get_rasterizer

    r = get_rasterizer()
    if FONT.is_file():
        r.register_font(FACE, FONT.read_bytes())
    start = rss_mb()
    warm = start
    t0 = time.perf_counter()
    checksum = 0
    for i in range(frames):
        px = r.render(document(i), W, H)
        checksum ^= int(px[90, 160, 3])
        if FONT.is_file():
            r.text_bounds(FACE, 10 + i % 50, "measure " + "w" * (i % 60) + str(i))
        if i + 1 == WARMUP:
            warm = rss_mb()
    elapsed = time.perf_counter() - t0
    end = rss_mb()
    growth = end - warm
    ok = growth <= LIMIT_MB
    print(f"raster: {frames} frames of distinct length at {W}x{H} in {elapsed:.1f} s")
    print(f"  RSS start {start:.1f} MB, after warm-up ({WARMUP}) {warm:.1f} MB, end {end:.1f} MB")
    print(f"RSS growth after warm-up: {growth:.1f} MB (limit {LIMIT_MB:.0f} MB): ", end="")
    print("OK" if ok else "FAIL")
    return ok


def run_wrapper(frames: int) -> None:
    """The same documents through thorvg-python's classes (for comparison only)."""
    from thorvg_python import Engine, Picture, SwCanvas
    from thorvg_python.base import Colorspace

    engine = Engine(threads=0)  # held for the process; never used as a context manager
    canvas = SwCanvas(engine)
    canvas.set_target(W, H, cs=Colorspace.ABGR8888S)
    start = rss_mb()
    warm = start
    for i in range(frames):
        pic = Picture(engine)
        pic.load_data(document(i), "svg", None, True)
        pic.set_size(W, H)
        canvas.add(pic)
        canvas.update()
        canvas.draw(True)
        canvas.sync()
        canvas.remove()
        if i + 1 == WARMUP:
            warm = rss_mb()
    end = rss_mb()
    print(f"thorvg-python wrapper: {frames} frames, RSS start {start:.1f} MB, ", end="")
    print(f"after warm-up {warm:.1f} MB, end {end:.1f} MB, growth {end - warm:.1f} MB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=5000)
    ap.add_argument("--compare-frames", type=int, default=5000)
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--wrapper", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.wrapper:
        run_wrapper(args.frames)
        return 0
    ok = run_ours(args.frames)
    if not args.no_compare:
        # its own process, so its leak cannot inflate our numbers or vice versa
        cmd = [sys.executable, __file__, "--wrapper", "--frames", str(args.compare_frames)]
        subprocess.run(cmd, check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
