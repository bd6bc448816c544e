"""What the face check costs and refuses, side by side in one run.

Without ``--corpus`` (best of ``--repeat``, wall clock):

1. the check of one face, cold (its drawn copy, ThorVG's reads walked, OTS on the
   copy in a child process) beside the old check (OTS on the whole file);
2. the same check again (cached per face file version);
3. a bare interpreter start (``python -c pass``), for scale;
4. ``nanoframes render`` of a one-text composition whose family is a project face
   (checked once) beside the same composition in the bundled family (not checked).

With ``--corpus DIR`` (e.g. the faces of Debian font packages, unpacked with
``dpkg-deb -x``): every face file under DIR, judged by the old rule (single-face
TrueType files only, OTS on the whole file) and the new one (every face, a
collection's included; CFF faces named as a format), with how many each accepts
and refuses and why, and the mean cost per face of each. ``--pixels`` also draws a
sample of each accepted single-face file's characters twice, from the whole file
and from its drawn copy, and counts the faces whose pixels differ (expected: 0).

Usage: python benchmarks/face_sanitize.py [--repeat 5] [--corpus DIR [--pixels]]
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

HEAD = ('<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="48" '
        'data-fps="10" data-duration="0.1">')
SAMPLE = "AVATAR Hamburgefonstiv 0123 ÀÉü 한국어 漢字かな ўЖ"


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def old_check(path: Path) -> str | None:
    import ots

    proc = subprocess.run([ots.OTS_SANITIZE, str(path)], capture_output=True, timeout=60)
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.decode("utf-8", "replace").splitlines()
             if line.startswith("ERROR")]
    return lines[0] if lines else "refused"


def single(repeat: int) -> None:
    import damaged_faces

    from nanoframes.text import sanitize

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text('[project]\nname = "b"\n'
                                             '[tool.nanoframes]\nfont-dirs = ["fonts"]\n')
        (root / "fonts").mkdir()
        face = root / "fonts" / "face.ttf"
        face.write_bytes(bytes(damaged_faces.renamed(damaged_faces.SOURCE.read_bytes())))

        def cold() -> None:
            sanitize._problem.cache_clear()
            sanitize._copy_problem.cache_clear()
            sanitize.face_problem(face)

        check_cold = best(repeat, cold)
        whole = best(repeat, lambda: old_check(face))
        check_warm = best(repeat, lambda: sanitize.face_problem(face))
        bare = best(repeat, lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
        renders = {}
        for name, family in (("project", damaged_faces.FAMILY), ("bundled", "Noto Sans")):
            comp = root / f"{name}.nf.svg"
            comp.write_text(f'{HEAD}<text x="1" y="20" font-family="{family}">Hi</text></svg>')
            argv = [sys.executable, "-m", "nanoframes", "render", str(comp), "--frame", "0",
                    "-o", str(root / f"{name}.png")]
            renders[name] = best(repeat, lambda argv=argv: subprocess.run(
                argv, cwd=root, check=True, capture_output=True, env=os.environ))
    print(f"check of one face, cold:      {check_cold * 1000:7.1f} ms")
    print(f"old check (OTS, whole file):  {whole * 1000:7.1f} ms  "
          f"(new / old = {check_cold / whole:.2f})")
    print(f"check of one face, cached:    {check_warm * 1000:7.3f} ms")
    print(f"python -c pass:               {bare * 1000:7.1f} ms  "
          f"(check cold / interpreter start = {check_cold / bare:.2f})")
    print(f"render, project face (check): {renders['project'] * 1000:7.1f} ms")
    print(f"render, bundled face (none):  {renders['bundled'] * 1000:7.1f} ms  "
          f"(ratio {renders['project'] / renders['bundled']:.3f})")


def corpus(directory: Path, pixels: bool) -> None:
    from nanoframes.text.faces import face_meta, face_metas, is_collection
    from nanoframes.text.sanitize import face_problem

    files = sorted(p for p in directory.rglob("*") if p.is_file() and not p.is_symlink()
                   and p.suffix.lower() in (".ttf", ".otf", ".ttc", ".otc"))
    before: collections.Counter = collections.Counter()
    after: collections.Counter = collections.Counter()
    why_before: collections.Counter = collections.Counter()
    why_after: collections.Counter = collections.Counter()
    cost = {"old": [0.0, 0], "new": [0.0, 0]}
    accepted = []
    for path in files:
        if is_collection(path) or face_meta(path) is None:
            before["not a candidate (CFF or collection)"] += 1
        else:
            start = time.perf_counter()
            problem = old_check(path)
            cost["old"][0] += time.perf_counter() - start
            cost["old"][1] += 1
            before["refused" if problem else "accepted"] += 1
            if problem:
                why_before[f"{path.name}: {problem[:70]}"] += 1
        for index, meta in face_metas(path):
            if meta.outlines != "glyf":
                after["CFF: face-format"] += 1
                continue
            start = time.perf_counter()
            problem = face_problem(path, index)
            cost["new"][0] += time.perf_counter() - start
            cost["new"][1] += 1
            after["refused" if problem else "accepted"] += 1
            if problem:
                why_after[f"{path.name}#{index}: {problem[:70]}"] += 1
            elif not is_collection(path):
                accepted.append((path, index))
    print(f"{len(files)} face files under {directory}")
    print(f"before (OTS on the whole file): {dict(before)}")
    for line in sorted(why_before):
        print(f"  refused: {line}")
    print(f"after (drawn copy checked):     {dict(after)}")
    for line in sorted(why_after):
        print(f"  refused: {line}")
    old_ms = 1000 * cost["old"][0] / max(1, cost["old"][1])
    new_ms = 1000 * cost["new"][0] / max(1, cost["new"][1])
    print(f"mean cost per face: old {old_ms:.1f} ms, new {new_ms:.1f} ms "
          f"(new / old = {new_ms / old_ms:.2f})")
    if pixels:
        same, differ = draw_both(accepted)
        print(f"pixels, whole file vs drawn copy: {same} faces identical, {differ} differ")


def draw_both(faces: list[tuple[Path, int]]) -> tuple[int, int]:
    from xml.sax.saxutils import escape

    import numpy as np

    from nanoframes.engine.raster import get_rasterizer
    from nanoframes.text.drawn import drawn_copy
    from nanoframes.text.sfnt import read_face

    rast = get_rasterizer()
    same = differ = 0
    for k, (path, index) in enumerate(faces):
        with path.open("rb") as fh:
            cmap = read_face(fh, index).char_map()
        text = "".join(c for c in SAMPLE if c == " " or cmap.has_glyph(ord(c)))
        if len(text.replace(" ", "")) < 6:  # a script face: some of its own characters
            text = "".join(chr(cp) for cp in range(0x21, 0x30000)
                           if not 0xD800 <= cp < 0xE000 and cmap.has_glyph(cp))[:400:16]
        data = path.read_bytes()
        drawn = []
        for name, blob in ((f"whole{k}", data), (f"copy{k}", drawn_copy(data, index))):
            rast.register_font(name, blob)
            svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="900" height="60"><text '
                   f'x="4" y="44" font-size="32" font-family="{name}">{escape(text)}</text>'
                   "</svg>")
            drawn.append(np.array(rast.render(svg.encode(), 900, 60)))
        if drawn[0][..., 3].any() and np.array_equal(*drawn):
            same += 1
        else:
            differ += 1
            print(f"  differs (or draws nothing): {path}")
    return same, differ


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--pixels", action="store_true")
    args = parser.parse_args()
    if args.corpus is not None:
        corpus(args.corpus, args.pixels)
    else:
        single(args.repeat)


if __name__ == "__main__":
    main()
