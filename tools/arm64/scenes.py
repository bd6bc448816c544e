"""Are the scenes the same on Linux arm64? Every example's every frame baked (not
drawn) here and under emulated arm64, each document hashed (its scene digest,
frames/scenes.py), the two compared (docs/determinism.md, "Diagnosing a
mismatch between machines").

    python tools/arm64/scenes.py          # from the project's virtual environment

Exit status 0 when every scene is byte-identical, 1 when any differs (each
named), 3 when arm64 cannot be had here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BAKE = r"""
import hashlib, json, platform, sys
from pathlib import Path
from nanoframes.frames.film import Film
root = Path(sys.argv[1])
scenes = {}
for path in sorted((root / "examples").rglob("*.nf.svg")):
    film = Film.open(path, root)
    scenes[path.relative_to(root).as_posix()] = [
        hashlib.sha256(film.document(i)).hexdigest() for i in range(film.comp.frame_count)]
print(json.dumps({"machine": platform.machine(), "scenes": scenes}))
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bake.py"
        script.write_text(BAKE)
        here = subprocess.run([sys.executable, str(script), str(REPO)], check=True,
                              capture_output=True, text=True, timeout=1800)
        there = subprocess.run([str(REPO / "tools" / "arm64" / "run"), "python", str(script),
                                str(REPO)], capture_output=True, text=True, timeout=3600)
    if there.returncode == 3:
        print(there.stderr.strip().splitlines()[-1])
        return 3
    if there.returncode != 0:
        print(there.stderr, file=sys.stderr)
        return there.returncode
    a, b = json.loads(here.stdout), json.loads(there.stdout)
    total = differ = 0
    for key, digests in a["scenes"].items():
        other = b["scenes"].get(key, [])
        moved = [i for i, (x, y) in enumerate(zip(digests, other)) if x != y]
        moved += list(range(len(other), len(digests)))
        total += len(digests)
        differ += len(moved)
        if moved:
            print(f"{key}: {len(moved)} of {len(digests)} scenes differ: {moved[:10]}")
    print(f"{a['machine']} against {b['machine']}: {total - differ} of {total} scenes "
          f"byte-identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
