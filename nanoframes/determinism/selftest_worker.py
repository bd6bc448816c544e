"""One self-test worker: a fresh process that renders the frames a job names and
prints their digests (``python -m nanoframes.determinism.selftest_worker --worker``,
a JSON job on stdin, one line starting with :data:`MARK` on stdout).

The process applies its environment's locale to all categories first, so the
variation's ``LC_ALL`` is in effect. A job may name a ``setup`` callable
(``"module:function"``) that the worker calls before rendering; the test suite
uses it to install a deliberately order-dependent render hook and show that the
self-test catches it. Nothing in nanoframes uses it otherwise. A job may carry
``texts`` beside ``paths``: a composition built from text (``nanoframes.load``)
travels as its bytes (base64), as the drawing workers' tasks do, since it has no
file to parse (the second opinion, :mod:`.second_opinion`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MARK = "NFSELFTEST "  # the line of stdout that carries the result


def work(spec: Mapping[str, Any]) -> dict[str, Any]:
    import locale
    import time

    try:
        locale.setlocale(locale.LC_ALL, "")
        in_effect = locale.setlocale(locale.LC_ALL)
    except locale.Error as exc:
        in_effect = f"unavailable ({exc})"
    setup = spec.get("setup")
    if setup:
        import importlib

        module, _, func = setup.partition(":")
        getattr(importlib.import_module(module), func or "setup")()
    from ..errors import NanoframesError
    from ..frames.parallel import film_digests, worker_pool
    from .reading import source_identity

    root = Path(spec["root"])
    dedup = bool(spec["dedup"])
    jobs = int(spec.get("jobs", 1))
    used = {int(n) for n, _ in spec["segments"]}
    films: list[Any] = [None] * len(spec["paths"])
    info: list[dict[str, Any] | None] = [None] * len(spec["paths"])
    texts = spec.get("texts") or [None] * len(spec["paths"])
    for n in sorted(used):
        try:
            films[n] = _film(spec["paths"][n], texts[n], root, dedup)
            films[n].draw_thread &= bool(spec.get("pipeline", True))
            ident = source_identity(films[n].source).as_dict()
            info[n] = {"identity": ident}
        except NanoframesError as exc:
            info[n] = {"error": str(exc)}
    pool = worker_pool(jobs) if jobs > 1 else None
    segments: list[list[str]] = []
    try:
        for n, indices in spec["segments"]:
            film = films[int(n)]
            if film is None:
                segments.append([])
                continue
            indices = [int(i) for i in indices]
            try:
                if pool is not None:  # in the order asked for
                    segments.append(film_digests(film, indices, jobs=jobs, pool=pool))
                else:
                    segments.append(film.digests(indices))
            except NanoframesError as exc:
                info[int(n)] = {"error": str(exc)}
                segments.append([])
    finally:
        if pool is not None:
            pool.shutdown()
    return {"films": info, "segments": segments, "pid": os.getpid(), "locale": in_effect,
            "tz": list(time.tzname)}


def _film(path: str, text: str | None, root: Path, dedup: bool):
    from ..frames.film import Film

    if text is None:
        return Film.open(path, root, dedup=dedup)
    import base64

    from ..frames.source import from_bytes

    return Film(from_bytes(base64.b64decode(text), Path(path), root), dedup=dedup)


def main(argv: Sequence[str]) -> int:
    if list(argv) != ["--worker"]:
        print(f"usage: python -m {__name__} --worker < job.json", file=sys.stderr)
        return 2
    out = work(json.loads(sys.stdin.read()))
    sys.stdout.write(MARK + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
