"""What scene digests cost (issue 34, item 7), against the commit before them, side by side.

    python benchmarks/scene_cost.py [--base b0f4c89] [--repeat 3] [--jobs 2]

The base commit is unpacked (``git archive``) into a temporary folder; both
trees run with this interpreter and its installed dependencies, each tree's
package first on ``PYTHONPATH``, each in a scratch project of its own (this
checkout's examples and configuration). Each round runs the two one after the
other (alternating which goes first), so load on a shared machine falls on
both alike; the best of the rounds is compared. Two figures:

1. ``digest --all --record -j N`` into an empty store and ledger: recording,
   which now also keeps every distinct scene (compressed, images as blobs);
2. ``digest --all --check -j N`` that matches: the path that must cost what it
   did (its only scene work is the hash of each document, taken anyway for
   de-duplication, and a look in the store for each distinct scene);
3. the same check into an empty store: a check keeps what it draws for pending
   readings (decision 0065), frames and now scenes, so this is where keeping
   scenes could show on a check.

Then, in this process and in CPU time (less at the mercy of the load than wall
time), what keeping scenes adds to a recording: every example's distinct scenes
packed and written into an empty store, against drawing and hashing those films
(``Film.digests``, de-duplicated, one thread). And the store's size: the frames
and the scenes kept. No test asserts these; on a busy machine read the ratio,
not the seconds.
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

HERE = Path(__file__).resolve().parents[1]


def _unpack(commit: str, target: Path) -> Path:
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(HERE), "archive", commit], check=True,
                             capture_output=True, timeout=300).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True, timeout=300)
    return target


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    shutil.copytree(HERE / "examples", root / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    shutil.copy2(HERE / "pyproject.toml", root / "pyproject.toml")
    (root / "tests").mkdir()
    return root


def _run(tree: Path, project: Path, jobs: int, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOFRAMES_")}
    env["PYTHONPATH"] = str(tree)
    env["XDG_CACHE_HOME"] = str(project / ".cache")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--all", "-j", str(jobs),
                    *args], cwd=project, env=env, check=True, capture_output=True,
                   timeout=1800)
    return time.perf_counter() - start


def _record(tree: Path, project: Path, jobs: int) -> float:
    shutil.rmtree(project / ".nanoframes", ignore_errors=True)
    (project / "tests" / "digests.json").unlink(missing_ok=True)
    return _run(tree, project, jobs, "--record")


def _size(folder: Path, pattern: str) -> tuple[int, int]:
    files = [p for p in folder.glob(pattern) if p.is_file()] if folder.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def _in_process() -> tuple[float, float, int]:
    """(CPU s to keep every distinct scene, CPU s to draw and hash the films, scenes)."""
    sys.path.insert(0, str(HERE))
    from nanoframes.frames import scenes
    from nanoframes.frames.film import Film
    from nanoframes.frames.store import Store

    paths = sorted((HERE / "examples").rglob("*.nf.svg"))
    documents: dict[str, bytes] = {}
    drawing = 0.0
    for path in paths:
        film = Film.open(path, HERE)
        film.draw_thread = False  # one thread: its CPU time is this process's
        start = time.process_time()
        film.digests()
        drawing += time.process_time() - start
        for i in range(film.comp.frame_count):
            doc = film.document(i)
            documents.setdefault(scenes.scene_digest(doc), doc)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp), warn=None)
        start = time.process_time()
        for digest, doc in documents.items():
            scenes.keep(store, digest, doc)
        keeping = time.process_time() - start
    return keeping, drawing, len(documents)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="b0f4c89")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="scene-cost-") as tmp:
        tmp_path = Path(tmp)
        trees = {"scenes": HERE, "base": _unpack(args.base, tmp_path / "base-tree")}
        projects = {name: _project(tmp_path / f"project-{name}") for name in trees}
        def empty_store_check(tree: Path, project: Path, jobs: int) -> float:
            shutil.rmtree(project / ".nanoframes" / "store", ignore_errors=True)
            return _run(tree, project, jobs, "--check")

        figures = (("digest --all --record", _record),
                   ("digest --all --check (match)",
                    lambda t, p, j: _run(t, p, j, "--check")),
                   ("  the same, empty store", empty_store_check))
        for label, measure in figures:
            best = {name: float("inf") for name in trees}
            for round_ in range(args.repeat):
                order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
                for name in order:
                    best[name] = min(best[name], measure(trees[name], projects[name], args.jobs))
            print(f"{label:<30} scenes {best['scenes']:.2f} s  base {best['base']:.2f} s  "
                  f"ratio {best['scenes'] / best['base']:.3f}  "
                  f"(-j {args.jobs}, best of {args.repeat}, load {os.getloadavg()[0]:.1f})")
        keeping, drawing, count = _in_process()
        print(f"in-process CPU: keeping {count} scenes {keeping:.2f} s, drawing and hashing "
              f"the films {drawing:.2f} s: ratio {keeping / drawing:.3f}")
        _record(trees["scenes"], projects["scenes"], args.jobs)  # what recording keeps
        store = projects["scenes"] / ".nanoframes" / "store"
        frames = _size(store, "*/*.png")
        scenes = _size(store / "inputs" / "scene", "*.z")
        blobs = _size(store / "inputs" / "blob", "*.z")
        print(f"store: {frames[0]} frames {frames[1]:,} bytes; {scenes[0]} scenes "
              f"{scenes[1]:,} bytes; {blobs[0]} blobs {blobs[1]:,} bytes")


if __name__ == "__main__":
    main()
