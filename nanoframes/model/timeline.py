"""The timeline: parse the embedded JSON, and say what each property is at time t.

docs/compositions.md, "The timeline". Parsing rejects only what makes the timeline unreadable (bad
JSON, wrong shape, a keyframe without a time, an unreadable selector, a
non-finite number); unknown properties and easing names are kept for lint to
report. Evaluation is plain double arithmetic with no tolerances, so a value at
t is the same bits on every machine.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

from ..errors import NanoframesError
from .color import RGBA, lerp, lerp_color, parse_color
from .easing import ease, linear, parse_ease
from .numbers import clamp01, fmt, is_number  # noqa: F401 - re-exported
from .transform import (  # noqa: F401 - re-exported for callers of the timeline API
    TransformParts,
    _lerp_transform,
    needs_auto_center,
    parse_transform,
    transform_to_svg,
)

ANIMATABLE: frozenset[str] = frozenset(
    {
        "opacity", "fill-opacity", "stroke-opacity",
        "transform",
        "fill", "stroke",
        "stroke-width", "stroke-dashoffset",
        "x", "y", "width", "height", "cx", "cy", "r", "rx", "ry", "x1", "y1", "x2", "y2",
    }
)
COLOR_PROPERTIES: frozenset[str] = frozenset({"fill", "stroke"})


# --- selectors ---------------------------------------------------------------

# Liberal on purpose for ids and classes (authors use digits, non-ASCII), but no
# character that would mean something else in CSS (. # , > : [ * whitespace).
# Letters, digits, "_", "-" and every code point from U+00A0, written as the
# complement of what is excluded: the same set, compiled in microseconds rather
# than the ~10 ms a range up to U+10FFFF costs at import.
_NAME = r"[^\x00-,./:-@\[-^`{-\x9f]+"
_SELECTOR_ITEM = re.compile(rf"#({_NAME})|\.({_NAME})|([A-Za-z_][A-Za-z0-9_\-]*)")


@dataclass(frozen=True)
class Selector:
    """``#id``, ``.class``, a tag name, or a comma-separated list (any matches)."""

    parts: tuple[tuple[str, str], ...]

    def matches(self, element: Any) -> bool:
        tag = getattr(element, "tag", None)
        if not isinstance(tag, str):  # comments and processing instructions
            return False
        for kind, name in self.parts:
            if kind == "id":
                if element.get("id") == name:
                    return True
            elif kind == "class":
                if name in (element.get("class") or "").split():
                    return True
            elif tag.rpartition("}")[2] == name:  # tag, namespace-insensitive
                return True
        return False

    def __str__(self) -> str:
        prefix = {"id": "#", "class": ".", "tag": ""}
        return ", ".join(prefix[kind] + name for kind, name in self.parts)


def parse_selector(text: str) -> Selector:
    parts: list[tuple[str, str]] = []
    for item in text.split(","):
        m = _SELECTOR_ITEM.fullmatch(item.strip())
        if m is None:
            shown = item.strip() or "(empty)"
            raise ValueError(
                f"cannot read selector {text!r} at {shown!r}: "
                "use #id, .class, a tag name, or a comma-separated list of those"
            )
        id_, class_, tag = m.groups()
        if id_ is not None:
            parts.append(("id", id_))
        elif class_ is not None:
            parts.append(("class", class_))
        else:
            parts.append(("tag", tag))
    return Selector(tuple(parts))


# --- the parsed model -----------------------------------------------------------


@dataclass(frozen=True)
class Keyframe:
    """One keyframe. ``values`` holds every key but ``t`` and ``ease``, with
    JSON-native values (lists and dicts as parsed; treat them as read-only)."""

    t: float
    values: Mapping[str, Any]
    ease: str | None


@dataclass(frozen=True)
class Animation:
    index: int
    target: str
    selector: Selector
    keyframes: tuple[Keyframe, ...]

    def properties(self) -> tuple[str, ...]:
        """Every property some keyframe sets, in first-seen order."""
        seen: dict[str, None] = {}
        for kf in self.keyframes:
            seen.update(dict.fromkeys(kf.values))
        return tuple(seen)

    @cached_property
    def tracks(self) -> tuple[Track, ...]:
        """One pre-parsed track per animatable property (built once, used per frame)."""
        return tuple(Track.build(self.keyframes, prop) for prop in self.properties()
                     if prop in ANIMATABLE)


class _NonFinite:
    """Stands in for NaN/Infinity/overflowing numbers until we know where they are."""

    def __init__(self, token: str) -> None:
        self.token = token


def _parse_float(token: str) -> float | _NonFinite:
    value = float(token)
    return value if math.isfinite(value) else _NonFinite(token)


def _parse_int(token: str) -> int | _NonFinite:
    # An int too large for a double (or for int() itself) cannot be interpolated.
    try:
        value = int(token)
        float(value)
    except (ValueError, OverflowError):
        return _NonFinite(token[:20] + ("..." if len(token) > 20 else ""))
    return value


def _find_non_finite(data: Any) -> tuple[str, str] | None:
    """The first non-finite number in document order, with its path."""
    # Iterative: the JSON may nest as deep as the parser allowed.
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _NonFinite):
            return path or "(top)", node.token
        if isinstance(node, dict):
            items = [(f"{path}.{k}" if path else str(k), v) for k, v in node.items()]
        elif isinstance(node, list):
            items = [(f"{path}[{i}]", v) for i, v in enumerate(node)]
        else:
            continue
        stack.extend(reversed(items))
    return None


def parse_timeline(
    text: str, *, file: str | None = None, line: int | None = None
) -> tuple[Animation, ...]:
    """Parse ``{"animations": [...]}`` into animations in file order.

    ``line`` is the file line on which ``text`` begins; a JSON syntax error is
    reported on the file line it falls on, other errors on ``line``.
    """

    def fail(code: str, message: str, at: int | None = line) -> NanoframesError:
        return NanoframesError(code, message, file, at)

    try:
        data = json.loads(
            text,
            parse_constant=_NonFinite,  # NaN, Infinity, -Infinity
            parse_float=_parse_float,  # 1e999
            parse_int=_parse_int,
        )
    except RecursionError:
        raise fail("timeline-json", "timeline JSON nests too deeply") from None
    except json.JSONDecodeError as e:
        at = line + e.lineno - 1 if line is not None else None
        raise fail(
            "timeline-json",
            f"timeline JSON does not parse: {e.msg} "
            f"(timeline line {e.lineno}, column {e.colno})",
            at,
        ) from None

    found = _find_non_finite(data)
    if found is not None:
        path, token = found
        raise fail(
            "timeline-number",
            f"timeline value at {path} is {token}: only finite numbers are allowed",
        )

    if not isinstance(data, dict) or not isinstance(data.get("animations"), list):
        raise fail("timeline-shape", 'the timeline must be an object {"animations": [...]}')

    animations: list[Animation] = []
    for index, raw in enumerate(data["animations"]):
        where = f"animations[{index}]"
        if not isinstance(raw, dict):
            raise fail("timeline-shape", f"{where} must be an object with target and keyframes")
        target = raw.get("target")
        if not isinstance(target, str):
            raise fail("timeline-shape", f'{where} needs a "target" selector string')
        where = f"{where} (target {target!r})"
        keyframes_raw = raw.get("keyframes")
        if not isinstance(keyframes_raw, list):
            raise fail("timeline-shape", f'{where} needs a "keyframes" list')
        try:
            selector = parse_selector(target)
        except ValueError as e:
            raise fail("selector-invalid", f"{where}: {e}") from None

        keyframes: list[Keyframe] = []
        for k, kf in enumerate(keyframes_raw):
            if not isinstance(kf, dict):
                raise fail("timeline-shape", f"{where} keyframes[{k}] must be an object")
            t = kf.get("t")
            if not is_number(t):
                raise fail("keyframe-no-t", f'{where} keyframes[{k}] needs a numeric "t" (seconds)')
            ease_name = kf.get("ease")
            if ease_name is not None and not isinstance(ease_name, str):
                # Kept as its JSON text so lint can name it; the render uses linear.
                ease_name = json.dumps(ease_name, sort_keys=True)
            values = {key: v for key, v in kf.items() if key not in ("t", "ease")}
            for prop, value in values.items():
                bad = _not_xml(value) if prop in ANIMATABLE else None
                if bad is not None:  # it would be set as an attribute: XML cannot hold it
                    raise fail("timeline-string", f"{where} keyframes[{k}]: {prop} holds "
                               f"U+{ord(bad):04X}, a character an SVG attribute cannot hold")
            keyframes.append(Keyframe(float(t), MappingProxyType(values), ease_name))
        keyframes.sort(key=lambda kf: kf.t)  # stable: equal times keep file order
        animations.append(Animation(index, target, selector, tuple(keyframes)))
    return tuple(animations)


# XML 1.0's characters (tab, newline, carriage return, U+0020-U+D7FF,
# U+E000-U+FFFD, U+10000 up): anything else in an attribute is refused by lxml
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _not_xml(value: Any) -> str | None:
    """The first character of a string value that XML cannot hold (None: none)."""
    match = _NOT_XML.search(value) if isinstance(value, str) else None
    return match.group() if match else None


# --- values at t -------------------------------------------------------------


def _settle(prop: str, v: Any) -> Any:
    """A held value in the form an interpolated one would have."""
    if prop in COLOR_PROPERTIES:
        rgba = parse_color(v) if isinstance(v, str) else None
        return rgba if rgba is not None else v
    if is_number(v):
        return float(v)
    return v


def _interpolate(prop: str, a: Any, b: Any, p: float) -> Any:
    """a -> b at eased progress p; values of different shapes hold a."""
    if prop in COLOR_PROPERTIES:
        ca: RGBA | None = parse_color(a) if isinstance(a, str) else None
        cb: RGBA | None = parse_color(b) if isinstance(b, str) else None
        if ca is None or cb is None:
            return _settle(prop, a)
        return lerp_color(ca, cb, p)
    if prop == "transform":
        ta, tb = parse_transform(a), parse_transform(b)
        if ta is None or tb is None:
            return a
        return _lerp_transform(ta, tb, p).to_value()
    if is_number(a) and is_number(b):
        return lerp(float(a), float(b), p)
    return _settle(prop, a)


@dataclass(frozen=True)
class Track:
    """The keyframes of one property, parsed once: times, held values, parsed
    values (RGBA, TransformParts or float) and each keyframe's arriving ease.
    ``at(t)`` gives exactly what :func:`value_at` gives, without re-parsing (a
    transform comes back as :class:`TransformParts` rather than its JSON shape)."""

    prop: str
    times: tuple[float, ...]
    raw: tuple[Any, ...]
    held: tuple[Any, ...]
    parsed: tuple[Any, ...]
    curves: tuple[Callable[[float], float], ...]

    @classmethod
    def build(cls, keyframes: Sequence[Keyframe], prop: str) -> Track:
        frames = [kf for kf in keyframes if prop in kf.values]
        raw = tuple(kf.values[prop] for kf in frames)
        parsed = tuple(_parse_value(prop, v) for v in raw)
        held = tuple(_settle(prop, v) for v in raw)
        if prop == "transform":  # bake takes TransformParts as they are: no re-parsing
            held = tuple(h if p is None else p for h, p in zip(held, parsed))
        return cls(
            prop=prop,
            times=tuple(kf.t for kf in frames),
            raw=raw,
            held=held,
            parsed=parsed,
            curves=tuple(parse_ease(kf.ease) or linear for kf in frames),
        )

    def at(self, t: float) -> Any | None:
        if not self.times:
            return None
        i = bisect_right(self.times, t)
        if i == 0:
            return self.held[0]
        if i == len(self.times):
            return self.held[-1]
        t0, t1 = self.times[i - 1], self.times[i]
        p = self.curves[i]((t - t0) / (t1 - t0))  # the arriving keyframe's ease
        a, b = self.parsed[i - 1], self.parsed[i]
        if a is None or b is None or type(a) is not type(b):
            return self.held[i - 1]  # different shapes hold the earlier value
        if self.prop in COLOR_PROPERTIES:
            return lerp_color(a, b, p)
        if self.prop == "transform":
            return _lerp_transform(a, b, p)
        return lerp(a, b, p)


def _parse_value(prop: str, v: Any) -> Any:
    """The interpolable form of a keyframe value, or None when it cannot interpolate."""
    if prop in COLOR_PROPERTIES:
        return parse_color(v) if isinstance(v, str) else None
    if prop == "transform":
        return parse_transform(v)
    return float(v) if is_number(v) else None


def value_at(anim_keyframes: Sequence[Keyframe], prop: str, t: float) -> Any | None:
    """``prop`` at time ``t`` from the keyframes that carry it (None if none do).

    Colours come back as RGBA (or the raw value when unparseable, e.g. 'none'),
    numbers as float, transforms as a contract-shaped object.
    """
    frames = [kf for kf in anim_keyframes if prop in kf.values]
    if not frames:
        return None
    # The segment k0 -> k1 with k0.t <= t < k1.t; at a keyframe's exact time its
    # own value shows, and of equal-time keyframes the last one in order does.
    i = bisect_right([kf.t for kf in frames], t)
    if i == 0:
        return _settle(prop, frames[0].values[prop])
    if i == len(frames):
        return _settle(prop, frames[-1].values[prop])
    k0, k1 = frames[i - 1], frames[i]
    p = ease(k1.ease, (t - k0.t) / (k1.t - k0.t))  # the arriving keyframe's ease
    return _interpolate(prop, k0.values[prop], k1.values[prop], p)


def values_for(animations: Sequence[Animation], element: Any, t: float,
               matched: bool = False) -> dict[str, Any]:
    """Every animatable property the timeline sets on ``element`` at ``t``.

    Later animations override earlier ones property by property. Properties
    outside ANIMATABLE are left out: lint reports them, and the render must not
    write arbitrary attributes (an animated ``href`` would escape the sandbox).
    """
    out: dict[str, Any] = {}
    for anim in animations:
        if not matched and not anim.selector.matches(element):
            continue
        for track in anim.tracks:
            out[track.prop] = track.at(t)
    return out
