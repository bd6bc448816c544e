"""What the OpenType Sanitizer costs a command, side by side in one run (best of
``--repeat``, wall clock):

1. one OTS run on a face (``sanitize.face_problem``, cold: a child process);
2. the same call again (cached per face file version: what every later
   resolution in the process pays);
3. a bare interpreter start (``python -c pass``), for scale;
4. ``nanoframes render`` of a one-text composition whose family is a project
   face (so OTS runs once) beside the same composition in the bundled family
   (no OTS run): the cost at start-up of a command.

Usage: python benchmarks/face_sanitize.py [--repeat 5]
"""

from __future__ import annotations

import argparse
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


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
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
            sanitize.face_problem(face)

        ots_cold = best(args.repeat, cold)
        ots_warm = best(args.repeat, lambda: sanitize.face_problem(face))
        bare = best(args.repeat, lambda: subprocess.run([sys.executable, "-c", "pass"],
                                                        check=True))
        renders = {}
        for name, family in (("project", damaged_faces.FAMILY), ("bundled", "Noto Sans")):
            comp = root / f"{name}.nf.svg"
            comp.write_text(f'{HEAD}<text x="1" y="20" font-family="{family}">Hi</text></svg>')
            argv = [sys.executable, "-m", "nanoframes", "render", str(comp), "--frame", "0",
                    "-o", str(root / f"{name}.png")]
            renders[name] = best(args.repeat, lambda argv=argv: subprocess.run(
                argv, cwd=root, check=True, capture_output=True, env=os.environ))
    print(f"OTS on one face, cold:        {ots_cold * 1000:7.1f} ms")
    print(f"OTS on one face, cached:      {ots_warm * 1000:7.3f} ms")
    print(f"python -c pass:               {bare * 1000:7.1f} ms  "
          f"(OTS cold / interpreter start = {ots_cold / bare:.2f})")
    print(f"render, project face (OTS):   {renders['project'] * 1000:7.1f} ms")
    print(f"render, bundled face (none):  {renders['bundled'] * 1000:7.1f} ms  "
          f"(ratio {renders['project'] / renders['bundled']:.3f})")


if __name__ == "__main__":
    main()
