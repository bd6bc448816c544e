"""One screen on a failed ``==`` between verdicts or films (``pytest_assertrepr_compare``).

``assert nanoframes.judge(comp, key=k) == "match"`` shows the verdict line and
what moved; ``assert nanoframes.film_digest(a) == nanoframes.film_digest(b)``
names the frames that differ and gives the pixel numbers of the first.
"""

from __future__ import annotations

from typing import Any

from pytest_nanoframes.session import RECORD_HINT

MAX_LINES = 20


def explain(left: Any, right: Any) -> list[str] | None:
    from nanoframes.api import FilmDigest, Verdict

    if isinstance(left, Verdict) or isinstance(right, Verdict):
        return _verdicts(left, right)[:MAX_LINES]
    if isinstance(left, FilmDigest) or isinstance(right, FilmDigest):
        return _films(left, right)[:MAX_LINES]
    return None


def _verdicts(left: Any, right: Any) -> list[str]:
    from nanoframes.api import Verdict

    if isinstance(left, Verdict) and isinstance(right, Verdict):
        lines = ["two verdicts differ:", f"  {left.line(RECORD_HINT)}",
                 f"  {right.line(RECORD_HINT)}"]
        for name in ("kind", "reasons", "differing_frames", "digest", "excused", "error"):
            a, b = getattr(left, name), getattr(right, name)
            if a != b:
                lines.append(f"  {name}: {_short(a)} != {_short(b)}")
        return lines
    verdict, other = (left, right) if isinstance(left, Verdict) else (right, left)
    lines = [f"the verdict is {verdict.kind.value}, not {_short(other)}:",
             f"  {verdict.line(RECORD_HINT)}"]
    if verdict.kind.value == "regression":
        lines.append("  every recorded input is identical (source, media, fonts, toolchain): "
                     "the same inputs drew different pixels")
    elif verdict.kind.value == "changed":
        lines.append(f"  what moved: {', '.join(verdict.reasons)}")
    if isinstance(other, str) and other not in {k.value for k in type(verdict.kind)}:
        lines.append("  (compare with a kind: verdict.kind == nanoframes.Kind.MATCH)")
    return lines


def _films(left: Any, right: Any) -> list[str]:
    from nanoframes.api import FilmDigest, render_frame
    from pytest_nanoframes.compare import frame_difference

    if not (isinstance(left, FilmDigest) and isinstance(right, FilmDigest)):
        return ["film digests differ:", f"  {left}", f"  {right}"]
    differing = left.differing_frames(right)
    na, nb = len(left.frame_digests), len(right.frame_digests)
    lines = [f"films differ: {len(differing)} of {max(na, nb)} frames"]
    if na != nb:
        lines.append(f"  lengths: {na} vs {nb} frames")
    listed = ", ".join(str(i) for i in differing[:10]) + (", …" if len(differing) > 10 else "")
    lines.append(f"  frames: {listed}")
    first = differing[0] if differing else None
    if (first is not None and first < min(na, nb) and left.composition is not None
            and right.composition is not None):
        diff = frame_difference(render_frame(left.composition, first),
                                render_frame(right.composition, first), first)
        if diff is not None:
            lines.append(f"  {diff.text()}")
    lines.append(f"  left  {left}")
    lines.append(f"  right {right}")
    return lines


def _short(value: Any) -> str:
    text = getattr(value, "value", value)  # a Kind reads as its name
    text = repr(text) if not isinstance(text, str) else text
    return text if len(text) <= 80 else text[:77] + "..."
