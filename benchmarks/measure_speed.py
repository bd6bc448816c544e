"""Cost of one text measurement: ThorVG's bounds query, no rasterizing.

Measures N distinct strings (so nothing is served from a cache) at varied
sizes with every bundled face through ``Measurer.ink``, the path layout uses,
and prints µs per measurement. For scale it also times the rasterizer's bare
``text_bounds`` and one probe render of the same text (what measuring by
rendering would cost). Exits 1 unless a measurement costs at most 100 µs.

    python benchmarks/measure_speed.py [--count N]
"""

from __future__ import annotations

import argparse
import sys
import time

from nanoframes.engine.raster import get_rasterizer
from nanoframes.text.fonts import FontBook
from nanoframes.text.measure import Measurer

LIMIT_US = 100.0
WORDS = "quick brown fox jumps over the lazy dog while frames render text".split()


def strings(count: int) -> list[str]:
    """Distinct, realistic strings: a few words and a counter."""
    return [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} {i}" for i in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    count = parser.parse_args().count
    faces = FontBook(host_dirs=()).faces
    measurer = Measurer()
    for face in faces:  # registration is a one-off per face, not part of a measurement
        measurer.register(face)
    texts = strings(count)
    sizes = [12 + (i % 9) * 6.5 for i in range(count)]

    start = time.perf_counter()
    for i, (text, size) in enumerate(zip(texts, sizes)):
        measurer.ink(faces[i % len(faces)], size, text)
    per = (time.perf_counter() - start) / count * 1e6

    rast = get_rasterizer()
    start = time.perf_counter()
    for i, (text, size) in enumerate(zip(texts, sizes)):
        rast.text_bounds(faces[i % len(faces)].name, size, text)
    bare = (time.perf_counter() - start) / count * 1e6

    # The query builds every glyph's outline, so its cost grows with the length.
    longs = [f"{text} {text} {text}" for text in texts[:2000]]
    start = time.perf_counter()
    for text in longs:
        measurer.ink(faces[0], 24, text)
    long_per = (time.perf_counter() - start) / len(longs) * 1e6
    long_chars = sum(map(len, longs)) / len(longs)

    probes = 200
    start = time.perf_counter()
    for i in range(probes):
        doc = (f'<svg xmlns="http://www.w3.org/2000/svg" width="640" height="120" '
               f'viewBox="0 0 640 120"><text x="0" y="80" font-family="{faces[0].name}" '
               f'font-size="{sizes[i]}">{texts[i]}</text></svg>').encode()
        rast.render(doc, 640, 120)
    probe = (time.perf_counter() - start) / probes * 1e6

    chars = sum(map(len, texts)) / count
    print(f"{count} measurements of ~{chars:.0f}-character strings over {len(faces)} faces")
    print(f"Measurer.ink:        {per:8.1f} µs per measurement")
    print(f"bare text_bounds:    {bare:8.1f} µs")
    print(f"{long_chars:.0f}-character lines: {long_per:8.1f} µs")
    print(f"probe render 640x120:{probe:8.1f} µs ({probe / per:.0f}x a measurement)")
    ok = per <= LIMIT_US
    print("OK" if ok else f"FAIL: over {LIMIT_US:g} µs per measurement")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
