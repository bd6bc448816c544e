"""Frame text (docs/text.md): ``data-frame-text`` templates and their fields.

A template is a :meth:`str.format` string over the fields ``frame frames
second time fps duration``. It is checked once, when the composition is read:
unknown fields, attribute access, indexing, nested fields in a format spec, a
width or precision over ``model.limits.MAX_FORMAT_NUMBER`` and a spec that does
not suit the field's type are errors with code ``frame-text``.
"""

from __future__ import annotations

import math
import string
from fractions import Fraction
from pathlib import Path

from ..errors import NanoframesError
from ..model.limits import frame_text_chars

FRAME_FIELDS = ("frame", "frames", "second", "time", "fps", "duration")



def check_template(template: str, file: Path | str | None, line: int | None) -> None:
    """Refuse a frame-text template that could do more than format the known fields."""
    def fail(message: str) -> NanoframesError:
        return NanoframesError("frame-text", f"data-frame-text={template!r}: {message}",
                               file, line)

    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise fail(str(exc)) from None
    for _literal, name, spec, _conversion in parsed:
        if name is None:
            continue
        if "." in name or "[" in name:
            raise fail(f"{{{name}}}: attribute access and indexing are not allowed")
        if name not in FRAME_FIELDS:
            raise fail(f"unknown field {{{name}}}; the fields are {', '.join(FRAME_FIELDS)}")
        if spec and "{" in spec:
            raise fail(f"{{{name}:{spec}}}: nested fields in a format spec are not allowed")
    frame_text_chars(template, file, line)  # widths and precisions bounded, before formatting
    try:  # a spec that does not suit the field's type (e.g. {second:d}) fails here, once
        format_frame_text(template, {k: (0 if k in ("frame", "frames") else 0.0)
                                     for k in FRAME_FIELDS})
    except (ValueError, TypeError) as exc:
        raise fail(str(exc)) from None


def format_frame_text(template: str, values: dict[str, float | int]) -> str:
    return string.Formatter().vformat(template, (), values)


def frame_values(t: float, fps: Fraction, frames: int, duration: Fraction) -> dict:
    """The fields of a frame-text template at time ``t``."""
    # Frame i is at t = i/fps exactly as a fraction; the float t may land a hair
    # under it, hence the small tolerance before flooring.
    frame = math.floor(Fraction(t) * fps + Fraction(1, 10**6))
    frame = min(max(frame, 0), frames - 1)
    return {"frame": frame, "frames": frames, "second": t, "time": t, "fps": float(fps),
            "duration": float(duration)}
