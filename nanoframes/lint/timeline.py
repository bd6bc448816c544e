"""Checks on the timeline JSON: eases, targets, properties, value shapes, keyframe times."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator
from typing import Any

from ..model.color import parse_color
from ..model.composition import Composition
from ..model.easing import is_known_ease
from ..model.presence import presence_of
from ..model.svg import SVG_NS, TIMELINE_TYPE
from ..model.timeline import ANIMATABLE, COLOR_PROPERTIES, Animation, is_number, parse_transform
from .findings import ERROR, WARNING, Finding, finding

TRANSFORM_KEYS = ("translate", "rotate", "scale", "center")
NUMBER_PROPERTIES = ANIMATABLE - COLOR_PROPERTIES - {"transform"}
# Paint keywords a colour property may hold (they cannot interpolate, they hold).
PAINT_KEYWORDS = frozenset(("none", "transparent", "currentcolor"))


def check(comp: Composition) -> Iterator[Finding]:
    scripts = _script_of_animation(comp)
    for anim in comp.animations:
        script = scripts.get(anim.index)
        where = f"animations[{anim.index}] (target {anim.target!r})"
        yield from _targets(comp, anim, script, where)
        yield from _eases(anim, script, where)
        yield from _properties(anim, script, where)
        yield from _presence(comp, anim)


def _script_of_animation(comp: Composition) -> dict[int, Any]:
    """Animation index -> the <script> it was written in (several scripts are allowed)."""
    from ..model.timeline import parse_timeline

    out: dict[int, Any] = {}
    n = 0
    for script in comp.root.iter(f"{{{SVG_NS}}}script", "script"):
        if (script.get("type") or "").strip() == TIMELINE_TYPE:
            for _ in parse_timeline(script.text or ""):
                out[n] = script
                n += 1
    return out


def _targets(comp: Composition, anim: Animation, script, where: str) -> Iterator[Finding]:
    els = comp.elements
    if not any(anim.selector.matches(el) for el in els):
        yield finding(ERROR, "target-unmatched", script, None,
                      f"{where} matches no element, so it animates nothing")
        return
    if len(anim.selector.parts) > 1:
        from ..model.timeline import Selector

        for part in anim.selector.parts:
            one = Selector((part,))
            if not any(one.matches(el) for el in els):
                yield finding(WARNING, "target-part-unmatched", script, None,
                              f"{where}: {one} matches no element")


def _eases(anim: Animation, script, where: str) -> Iterator[Finding]:
    for k, kf in enumerate(anim.keyframes):
        if kf.ease is not None and not is_known_ease(kf.ease):
            yield finding(ERROR, "unknown-ease", script, kf.t,
                          f"{where}: unknown ease {kf.ease!r} (it renders linear); "
                          "see docs/compositions.md (Easing) for the names and "
                          "cubic-bezier(x1, y1, x2, y2)")
        if k == 0 and kf.ease is not None:
            yield finding(WARNING, "ease-on-first-keyframe", script, kf.t,
                          f"{where}: ease {kf.ease!r} on the first keyframe shapes nothing "
                          "(an ease shapes the segment that arrives at its keyframe)")


def _shape(prop: str, value: Any) -> str:
    """A name for the kind of value, for comparing keyframes."""
    if is_number(value):
        return "a number"
    if isinstance(value, str):
        if prop in COLOR_PROPERTIES and value.strip().lower() in PAINT_KEYWORDS:
            return f"the keyword {value.strip()!r}"
        return "a colour" if parse_color(value) is not None else "a string"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _valid(prop: str, value: Any) -> str | None:
    """Why ``value`` cannot be drawn for ``prop``, or None when it can."""
    if prop in NUMBER_PROPERTIES:
        ok = is_number(value) and math.isfinite(float(value))
        return None if ok else f"{prop} needs a number, got {_json(value)}"
    if prop in COLOR_PROPERTIES:
        if isinstance(value, str) and (parse_color(value) is not None
                                       or value.strip().lower() in PAINT_KEYWORDS):
            return None
        return f"{prop} needs a colour (#rgb, #rrggbb, #rrggbbaa or a keyword), got {_json(value)}"
    if prop == "transform" and parse_transform(value) is None:
        return (f"transform needs an object like {{\"translate\": [x, y], \"rotate\": deg, "
                f"\"scale\": s, \"center\": \"auto\"}}, got {_json(value)}")
    return None


def _properties(anim: Animation, script, where: str) -> Iterator[Finding]:
    unknown: dict[str, float] = {}
    shapes: dict[str, tuple[str, float]] = {}
    for kf in anim.keyframes:
        for prop, value in kf.values.items():
            if prop not in ANIMATABLE:
                unknown.setdefault(prop, kf.t)
                continue
            why = _valid(prop, value)
            if why:
                yield finding(ERROR, "value-invalid", script, kf.t, f"{where}: {why}")
            if prop == "transform" and isinstance(value, dict):
                for key in value:
                    if key not in TRANSFORM_KEYS:
                        unknown.setdefault(f"transform.{key}", kf.t)
            shape = _shape(prop, value)
            first = shapes.setdefault(prop, (shape, kf.t))
            if first[0] != shape:
                yield finding(WARNING, "value-shape-mismatch", script, kf.t,
                              f"{where}: {prop} is {first[0]} at t={first[1]:g}s but {shape} "
                              f"at t={kf.t:g}s; the earlier value holds instead of moving")
                shapes[prop] = (shape, kf.t)
    for prop, t in unknown.items():
        if prop.startswith("transform."):
            key = prop.split(".", 1)[1]
            hint = difflib.get_close_matches(key, TRANSFORM_KEYS, 1)
            msg = (f"{where}: transform key {key!r} is not one of "
                   f"{', '.join(TRANSFORM_KEYS)}; it is ignored")
        else:
            hint = difflib.get_close_matches(prop, sorted(ANIMATABLE), 1)
            msg = f"{where}: {prop!r} is not an animatable property; it is ignored"
        if hint:
            msg += f" (did you mean {hint[0]!r}?)"
        yield finding(ERROR, "unknown-property", script, t, msg)


def window(comp: Composition, el) -> tuple[float, float]:
    """When ``el`` can be drawn: its own and its ancestors' presence, within the film."""
    start, end = 0.0, float(comp.duration)
    node = el
    while node is not None:
        p = presence_of(node, comp.path) if node is not comp.root else None
        if p is not None:
            start, end = max(start, p.start), min(end, p.end)
        node = node.getparent()
    return start, end


def _presence(comp: Composition, anim: Animation) -> Iterator[Finding]:
    for el in comp.elements:
        if not anim.selector.matches(el):
            continue
        start, end = window(comp, el)
        outside = [kf.t for kf in anim.keyframes if kf.t < start or kf.t > end]
        if not outside:
            continue
        times = ", ".join(f"{t:g}" for t in sorted(set(outside)))
        yield finding(WARNING, "keyframe-outside-presence", el, outside[0],
                      f"animations[{anim.index}] has keyframes at {times} s, outside the "
                      f"element's window {start:g}–{end:g} s: they shape values it never shows")
