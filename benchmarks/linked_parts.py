"""What naming the rasterizer's shared libraries costs, as ratios measured in one run.

Each figure is the best of ``--repeat`` fresh interpreters (the toolchain is
computed once per process, so a fresh process is where it is paid):

1. ``linked``: engine/linked.py's parts for libthorvg (ELF reading, dlopen/dlinfo
   resolution, hashing every library file once);
2. ``fixed``: the four fixed toolchain parts as before (thorvg-python's version,
   libthorvg's bytes, nanoframes' version, the modules digest);
3. ``check``: a whole matching ``digest --check`` of one composition
   (default examples/spinner-loop.nf.svg), interpreter start included.

Printed: each time, and linked/fixed and linked/check. No test asserts them.
Usage: python benchmarks/linked_parts.py [--repeat 5] [COMPOSITION]
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

LINKED = """
import time
from nanoframes.engine.library import library_path
path = library_path()
t = time.perf_counter()
from nanoframes.engine.linked import linked_parts
linked_parts(path)
print(time.perf_counter() - t)
"""
FIXED = """
import time
t = time.perf_counter()
from importlib.metadata import version
from nanoframes import __version__
from nanoframes.determinism.identity import modules_digest
from nanoframes.engine.library import library_sha256
version("thorvg-python"); library_sha256(); modules_digest()
print(time.perf_counter() - t)
"""


def _child(code: str) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    return float(out.split()[-1])


def _check(project: Path) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": str(project / "cache")}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--check"], cwd=project,
                   check=True, timeout=300, capture_output=True, env=env)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("composition", nargs="?", default=ROOT / "examples/spinner-loop.nf.svg")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "examples").mkdir()
        (project / "pyproject.toml").write_text("[tool.nanoframes]\n")
        shutil.copy(args.composition, project / "examples")
        env = {**os.environ, "XDG_CACHE_HOME": str(project / "cache")}
        subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--record"], cwd=project,
                       check=True, timeout=300, capture_output=True, env=env)
        linked = min(_child(LINKED) for _ in range(args.repeat))
        fixed = min(_child(FIXED) for _ in range(args.repeat))
        check = min(_check(project) for _ in range(args.repeat))
    load = os.getloadavg()[0]
    print(f"linked parts {linked * 1e3:.1f} ms, fixed parts {fixed * 1e3:.1f} ms, "
          f"matching check {check * 1e3:.0f} ms (best of {args.repeat}; load {load:.1f})")
    print(f"linked/fixed = {linked / fixed:.2f}, linked/check = {linked / check:.3f}")


if __name__ == "__main__":
    main()
