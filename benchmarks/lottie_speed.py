"""How fast a Lottie film is checked, against ThorVG alone drawing the same frames.

For each film: nanoframes' single-process reading (``read_film``, de-duplication
off: open and check the file, resolve and inline its images, the identity, the
player's per-frame defences, hash every frame) against ThorVG alone: the same
document (the one nanoframes hands over, made beforehand, outside the timer)
loaded once into one animation, and each frame set and drawn on one canvas, with
nothing else. The "player" column is nanoframes' drawing alone (the scenes and
``Film.raster``: the player's reseeding, time limit and crash record; no hashing,
no opening), to tell the drawing's overhead from the check's. The "serial" column
is the check with the digest pipeline off (one thread draws and hashes in turn),
to tell what overlapping the hashing with the drawing gives. Target: ratio <=
1.3. Both are timed in one run, best of N, on the same clock (``--clock cpu``:
this process's CPU time, so a busy machine does not distort the ratio; ThorVG
runs with 0 threads for Lottie).

Usage: python benchmarks/lottie_speed.py [PATH ...] [--repeat 5] [--clock cpu|wall]

Without paths: the Lottie examples (examples/lottie/) and a 512x512 film of 60
frames with 24 animated layers written to a temporary directory (ThorVG's own
drawing dominates there, as in the films a team ships).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from ctypes import c_float, c_void_p
from pathlib import Path

from digest_speed import _best  # benchmarks/ is this script's folder: one timer for both

from nanoframes.config import find_project_root, load_config
from nanoframes.determinism.reading import read_film
from nanoframes.determinism.sweep import collect
from nanoframes.engine import lottie as player_module
from nanoframes.engine import raster
from nanoframes.frames import workers
from nanoframes.frames.film import Film

ROOT = Path(__file__).resolve().parent.parent


def _serial(path: Path):
    """``read_film`` with the digest pipeline off (no spare thread for it)."""
    spare = workers.spare_threads
    workers.spare_threads = lambda n: False
    try:
        return read_film(path, dedup=False)
    finally:
        workers.spare_threads = spare




def bare_drawer(document: bytes, width: int, height: int, frames: list[float]):
    """ThorVG alone: one animation of ``document``, each frame set and drawn."""
    lib = player_module._lib()
    raster._engine(threads=0)
    canvas = raster.Rasterizer()
    anim = c_void_p(lib.tvg_lottie_animation_new())
    pic = c_void_p(lib.tvg_animation_get_picture(anim))
    raster._check(lib.tvg_picture_load_data(pic, document, len(document), b"lottie+json",
                                            None, True), "load_data")
    w, h = canvas._target(width, height)
    lib.tvg_picture_set_size(pic, float(w), float(h))

    def draw() -> None:
        for frame in frames:
            lib.tvg_animation_set_frame(anim, c_float(frame))
            lib.tvg_canvas_add(canvas._canvas, pic)
            lib.tvg_canvas_update(canvas._canvas)
            lib.tvg_canvas_draw(canvas._canvas, True)
            lib.tvg_canvas_sync(canvas._canvas)
            lib.tvg_canvas_remove(canvas._canvas, None)

    def close() -> None:
        lib.tvg_animation_del(anim)

    return draw, close


def heavy_film(directory: Path) -> Path:
    """512x512, 60 frames: 24 layers of rounded squares and circles, each turning,
    moving and fading on its own keyframes."""
    def static(v):
        return {"a": 0, "k": v}

    def keyed(a, b, op):
        return {"a": 1, "k": [{"t": 0, "s": a, "o": {"x": [0.4], "y": [0]},
                               "i": {"x": [0.6], "y": [1]}}, {"t": op - 1, "s": b}]}

    op, layers = 60, []
    for n in range(24):
        x, y = 40 + (n % 6) * 86, 60 + (n // 6) * 120
        shape = ({"ty": "rc", "d": 1, "s": static([60, 60]), "p": static([0, 0]),
                  "r": static(12)} if n % 2 else
                 {"ty": "el", "d": 1, "s": static([64, 64]), "p": static([0, 0])})
        rgb = [round((n * 37 % 100) / 100, 2), round((n * 59 % 100) / 100, 2), 0.8, 1]
        layers.append({
            "ddd": 0, "ind": n + 1, "ty": 4, "nm": f"Layer {n + 1}", "sr": 1, "ao": 0,
            "ks": {"p": keyed([x, y, 0], [x + 30, y + 40, 0], op), "a": static([0, 0, 0]),
                   "s": keyed([60, 60, 100], [130, 130, 100], op),
                   "r": keyed([0], [90 + n * 15], op), "o": keyed([100], [35], op)},
            "shapes": [{"ty": "gr", "it": [shape, {"ty": "fl", "c": static(rgb),
                                                   "o": static(100), "r": 1},
                                           {"ty": "st", "c": static([0.1, 0.1, 0.2, 1]),
                                            "o": static(100), "w": static(3), "lc": 2,
                                            "lj": 2},
                                           {"ty": "tr", "p": static([0, 0]),
                                            "a": static([0, 0]), "s": static([100, 100]),
                                            "r": static(0), "o": static(100)}]}],
            "ip": 0, "op": op, "st": 0, "bm": 0})
    doc = {"v": "5.7.4", "fr": 30, "ip": 0, "op": op, "w": 512, "h": 512, "nm": "Heavy",
           "ddd": 0, "assets": [], "layers": layers}
    (directory / "pyproject.toml").write_text("[tool.nanoframes]\n")
    path = directory / "heavy.json"
    path.write_text(json.dumps(doc))
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    scratch = tempfile.TemporaryDirectory()
    if args.paths:
        paths = [p.absolute() for p in args.paths]
    else:
        config = load_config(ROOT)
        paths = [p for p in collect([ROOT / "examples" / "lottie"], config)
                 if "#" not in p.name] + [heavy_film(Path(scratch.name))]
    print(f"{'film':<36}{'frames':>7}{'size':>10}{'bare s':>9}{'player s':>9}"
          f"{'serial s':>9}{'nf s':>9}{'ratio':>7}")
    total_bare = total_nf = total_player = total_serial = 0.0
    count = 0
    for path in paths:
        root = find_project_root(path.parent)
        film = Film.open(path, root, dedup=False)
        source = film.source
        frames = [source.frame_number(i) for i in range(source.frame_count)]
        read_film(path, dedup=False)  # warm: the player, the font book, ThorVG's first use
        draw, close = bare_drawer(source.lottie.document, film.width, film.height, frames)
        try:
            t_bare = _best(draw, args.repeat, clock)
        finally:
            close()
        t_nf = _best(lambda path=path: read_film(path, dedup=False), args.repeat, clock)
        t_serial = _best(lambda path=path: _serial(path), args.repeat, clock)
        total_serial += t_serial
        n = len(frames)
        t_player = _best(lambda film=film, n=n: [film.raster(film.document(i))
                                                 for i in range(n)], args.repeat, clock)
        total_player += t_player
        total_bare += t_bare
        total_nf += t_nf
        count += len(frames)
        name = path.name if path.parent != ROOT / "examples" / "lottie" else \
            path.relative_to(ROOT).as_posix()
        print(f"{name:<36}{len(frames):>7}{f'{film.width}x{film.height}':>10}"
              f"{t_bare:>9.3f}{t_player:>9.3f}{t_serial:>9.3f}{t_nf:>9.3f}"
              f"{t_nf / t_bare:>7.2f}")
    print(f"{'all':<36}{count:>7}{'':>10}{total_bare:>9.3f}{total_player:>9.3f}"
          f"{total_serial:>9.3f}{total_nf:>9.3f}{total_nf / total_bare:>7.2f}")
    print(f"ThorVG alone: {count / total_bare:.0f} frames/s; a nanoframes check: "
          f"{count / total_nf:.0f} frames/s ({args.clock} clock, best of {args.repeat})")
    print(f"nanoframes' drawing alone (scenes and the player's defences, no hashing) against "
          f"ThorVG alone: {total_player / total_bare:.2f}")
    print(f"the check with the pipeline off (serial) against ThorVG alone: "
          f"{total_serial / total_bare:.2f}")
    print(f"Lottie check against ThorVG alone (target <= 1.3): {total_nf / total_bare:.2f}")
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
