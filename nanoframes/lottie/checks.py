"""The limits on a Lottie animation, checked on the parsed tree before ThorVG sees it
(docs/limits.md, "Lottie"). Each refusal is one line with a stable code.

What ThorVG 1.0.4 was measured to crash or hang on is refused here: layers that
parent each other (SIGSEGV), a precomposition that contains itself (SIGSEGV), a
repeater with 10^6 copies (hangs), keyframes whose easing is ``null`` (reads
uninitialised memory; ``null`` handles are dropped, any other malformed handle is
refused). The rest bound the work a document can ask for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ..errors import NanoframesError
from ..model.limits import MAX_DURATION, MAX_FPS, MAX_FRAMES, MAX_PIXELS, MAX_SIDE, MAX_TEXT_CHARS
from .jsontext import Number, number

MAX_LAYERS = 10_000            # layer objects written in the file (root and precomps)
MAX_LAYER_INSTANCES = 100_000  # layers drawn, each precomposition counted where it is used
MAX_REPEATER_COPIES = 1_000    # one repeater's copies (ThorVG hangs on 10^6)
MAX_NESTED_COPIES = 100_000    # copies of repeaters inside repeaters, multiplied
MAX_DRAWN_COPIES = 1_000_000  # layers drawn, each times its repeaters, precomps expanded
MAX_EXPRESSION_CHARS = 100_000  # all expressions together


@dataclass(frozen=True)
class Timing:
    fps: float
    ip: float
    op: float
    frame_count: int


def _decimal(value: object) -> Decimal | None:
    if isinstance(value, Number):
        try:
            return Decimal(str.__str__(value))
        except InvalidOperation:  # pragma: no cover - json numbers are decimals
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(repr(value))
    return None


def is_lottie_tree(tree: object) -> bool:
    """A Bodymovin animation: an object with a canvas, a frame rate, a range and layers."""
    return isinstance(tree, dict) and isinstance(tree.get("layers"), list) and all(
        number(tree.get(k)) is not None for k in ("w", "h", "fr", "ip", "op"))


def check_canvas(tree: dict, file: Path) -> tuple[int, int]:
    sizes = []
    for key in ("w", "h"):
        value = _decimal(tree[key])
        if value is None or value != value.to_integral_value() or value < 1:
            raise NanoframesError("lottie-canvas", f"canvas {key}={str(tree[key])[:20]} is not a "
                                  "whole number of pixels >= 1", file)
        sizes.append(int(value))
    w, h = sizes
    if w > MAX_SIDE or h > MAX_SIDE or w * h > MAX_PIXELS:
        raise NanoframesError("canvas-too-large", f"canvas {w}x{h} exceeds the limits "
                              f"({MAX_SIDE} px a side, {MAX_PIXELS} pixels)", file)
    return w, h


def check_timing(tree: dict, file: Path) -> Timing:
    """Frame rate and range. Frames are integers from ``ip``: film frame ``i`` is
    ThorVG frame ``i`` (relative to ``ip``), for every ``i`` with ``ip + i < op``, so
    a fractional ``op - ip`` is rounded up (``ceil``): the last frame starts before
    ``op``, as in ThorVG's own ``[0, op - ip)``. An excess over a whole number below
    ``SLACK`` (a thousandth of a frame) is exporter rounding, not a frame: After
    Effects at 29.97 fps writes ``op`` 301.000012 for 301 frames, and ThorVG, reading
    float32, counts 301."""
    fr, ip, op = (_decimal(tree[k]) for k in ("fr", "ip", "op"))
    if fr is None or not 0 < fr <= MAX_FPS:
        raise NanoframesError("lottie-range", f"frame rate fr={str(tree['fr'])[:20]} is not in "
                              f"(0, {MAX_FPS}]", file)
    if ip is None or op is None or not op > ip:
        raise NanoframesError("lottie-range", f"the range ip={str(tree['ip'])[:20]} .. "
                              f"op={str(tree['op'])[:20]} is empty or negative", file)
    count = frames_below(op - ip)
    if count < 1:
        raise NanoframesError("lottie-range", f"the range ip={str(tree['ip'])[:20]} .. "
                              f"op={str(tree['op'])[:20]} holds no whole frame", file)
    if count > MAX_FRAMES:
        raise NanoframesError("lottie-range", f"{count} frames exceed the limit of "
                              f"{MAX_FRAMES}", file)
    if count / fr > MAX_DURATION:
        raise NanoframesError("lottie-range", f"{float(count / fr):g} s exceeds the limit of "
                              f"{MAX_DURATION} s", file)
    return Timing(float(fr), float(ip), float(op), count)


SLACK = Decimal("0.001")


def frames_below(span) -> int:
    """How many whole frames 0, 1, 2... lie below ``span`` (``SLACK`` forgiven)."""
    return math.ceil(Decimal(str(span)) - SLACK)


def _layer_lists(tree: dict) -> list[tuple[str | None, list]]:
    """(asset id or None for the root, layers) of every composition in the file."""
    found: list[tuple[str | None, list]] = [(None, tree["layers"])]
    for asset in tree.get("assets") or []:
        if isinstance(asset, dict) and isinstance(asset.get("layers"), list):
            found.append((str(asset.get("id")), asset["layers"]))
    return found


def _where(comp: str | None) -> str:
    return "the main composition" if comp is None else f"precomposition {comp[:40]!r}"


def check_parenting(comp: str | None, layers: list, file: Path) -> None:
    parents: dict[str, str] = {}
    for layer in layers:
        if not isinstance(layer, dict):
            raise NanoframesError("lottie-invalid", f"a layer of {_where(comp)} is not an "
                                  "object", file)
        ind, parent = layer.get("ind"), layer.get("parent")
        if ind is not None and parent is not None:
            parents[str(ind)] = str(parent)
    for start in parents:
        seen = {start}
        node = parents.get(start)
        while node is not None:
            if node in seen:
                raise NanoframesError("lottie-cycle", f"layers of {_where(comp)} parent each "
                                      f"other (layer {start[:20]} leads back to itself)", file)
            seen.add(node)
            node = parents.get(node)


def check_types(tree: dict, file: Path) -> None:
    """The top-level lists and objects the reader walks have their types."""
    expected = {"layers": list, "assets": list, "markers": list, "chars": list, "fonts": dict}
    for key, kind in expected.items():
        if key in tree and not isinstance(tree[key], kind):
            what = "a list" if kind is list else "an object"
            raise NanoframesError("lottie-invalid", f"{key!r} is not {what}", file)
    if "fonts" in tree and not isinstance(tree["fonts"].get("list", []), list):
        raise NanoframesError("lottie-invalid", "'fonts.list' is not a list", file)
    for key in ("assets", "markers", "chars"):
        if any(not isinstance(item, dict) for item in tree.get(key, [])):
            raise NanoframesError("lottie-invalid", f"an item of {key!r} is not an object", file)
    for asset in tree.get("assets", []):
        if "layers" in asset and not isinstance(asset["layers"], list):
            raise NanoframesError("lottie-invalid", f"precomposition "
                                  f"{str(asset.get('id'))[:40]!r}: 'layers' is not a list", file)


def check_structure(tree: dict, file: Path) -> None:
    """Layer counts, parenting and precomposition cycles, repeaters, easing, text size."""
    check_types(tree, file)
    lists = _layer_lists(tree)
    written = sum(len(layers) for _, layers in lists)
    if written > MAX_LAYERS:
        raise NanoframesError("lottie-too-large", f"{written} layers exceed the limit of "
                              f"{MAX_LAYERS}", file)
    uses: dict[str | None, list[str]] = {}
    for comp, layers in lists:
        check_parenting(comp, layers, file)
        uses[comp] = [str(layer["refId"]) for layer in layers
                      if isinstance(layer, dict) and layer.get("refId") is not None]
    counts = {comp: len(layers) for comp, layers in lists}
    sizes: dict[str | None, int] = {}
    for comp, _ in lists:
        _instances(comp, uses, counts, sizes, file)
    if sizes[None] > MAX_LAYER_INSTANCES:
        raise NanoframesError("lottie-too-large", f"precompositions expand to {sizes[None]} "
                              f"layers; the limit is {MAX_LAYER_INSTANCES}", file)
    _walk(tree, file)  # repeaters within one layer first: their own limits
    copies = {comp: sum(_layer_copies(layer) for layer in layers) for comp, layers in lists}
    drawn: dict[str | None, int] = {}
    for comp, _ in lists:
        _instances(comp, uses, copies, drawn, file)
    if drawn[None] > MAX_DRAWN_COPIES:
        raise NanoframesError("lottie-too-large", f"repeaters and precompositions draw "
                              f"{drawn[None]} copies of layers; the limit is "
                              f"{MAX_DRAWN_COPIES}", file)


def _instances(start: str | None, uses: dict, counts: dict, sizes: dict, file: Path) -> int:
    """Layers drawn for composition ``start`` (precompositions expanded where used),
    iteratively; a precomposition reached from itself is ``lottie-cycle``."""
    on_path: set = set()
    stack: list = [(start, False)]
    while stack:
        comp, done = stack.pop()
        if done:
            on_path.discard(comp)
            total = counts[comp] + sum(sizes[ref] for ref in uses[comp] if ref in uses)
            sizes[comp] = min(total, 10 ** 15)  # past every limit, and stays a small number
            continue
        if comp in sizes:
            continue
        on_path.add(comp)
        stack.append((comp, True))
        for ref in uses[comp]:
            if ref in on_path:
                raise NanoframesError("lottie-cycle", f"{_where(ref)} contains itself "
                                      "(through its layers' precompositions)", file)
            if ref in uses and ref not in sizes:
                stack.append((ref, False))
    return sizes[start]


def _walk(tree: dict, file: Path) -> None:
    """Everything found by walking the whole tree: repeaters, keyframe easing,
    expression and text sizes."""
    expression_chars = text_chars = 0
    stack: list = [(tree, 1)]
    while stack:
        node, copies = stack.pop()
        if isinstance(node, list):
            stack.extend((v, copies) for v in node if isinstance(v, (dict, list)))
            continue
        if not isinstance(node, dict):
            continue
        if node.get("ty") == "rp":
            most = _most(node.get("c"))
            if most > MAX_REPEATER_COPIES:
                raise NanoframesError("lottie-too-large", f"a repeater asks for {most:g} copies;"
                                      f" the limit is {MAX_REPEATER_COPIES}", file)
        keys = node.get("k")
        if isinstance(keys, list):  # an animated property's keyframes
            for key in keys:
                if isinstance(key, dict) and number(key.get("t")) is not None:
                    _easing(key, file)
        code = node.get("x")
        if isinstance(code, str) and not isinstance(code, Number):
            expression_chars += len(code)
            if expression_chars > MAX_EXPRESSION_CHARS:
                raise NanoframesError("lottie-too-large", "expressions hold more than "
                                      f"{MAX_EXPRESSION_CHARS} characters", file)
        text = node.get("t")
        if isinstance(text, str) and not isinstance(text, Number) and "f" in node:
            text_chars += len(text)
            if text_chars > MAX_TEXT_CHARS:
                raise NanoframesError("lottie-too-large", f"text layers hold more than "
                                      f"{MAX_TEXT_CHARS} characters", file)
        # a repeater copies the shapes beside it in its group (and what they hold)
        repeats = [_most(item.get("c")) for item in node.get("it", node.get("shapes", []))
                   if isinstance(item, dict) and item.get("ty") == "rp"] \
            if isinstance(node.get("it", node.get("shapes")), list) else []
        inner = copies
        for most in repeats:
            inner *= max(1, math.ceil(min(most, MAX_REPEATER_COPIES)))
        if inner > MAX_NESTED_COPIES:
            raise NanoframesError("lottie-too-large", f"nested repeaters make {inner} copies; "
                                  f"the limit is {MAX_NESTED_COPIES}", file)
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                stack.append((value, inner if key in ("it", "shapes") else copies))


def _easing(key: dict, file: Path) -> None:
    """A keyframe's easing handles: ``"i": null`` / ``"o": null`` (written by some
    exporters) are dropped, so the keyframe eases linearly, as with no handles; any
    other handle that is not an object with ``x`` and ``y`` is refused. ThorVG reads
    such a handle as a point it never initialises (the pixels vary run to run)."""
    for name in ("i", "o"):
        if name not in key:
            continue
        handle = key[name]
        if handle is None:
            del key[name]
        elif not isinstance(handle, dict) or "x" not in handle or "y" not in handle:
            raise NanoframesError("lottie-keyframe", f"a keyframe at t={str(key['t'])[:20]} has"
                                  f" an easing handle \"{name}\" without x and y (ThorVG would "
                                  "read uninitialised memory)", file)


def _layer_copies(layer: object) -> int:
    """How many times a layer's most repeated shape is drawn (1 without repeaters):
    the product of the repeaters on the way down its groups, at its largest."""
    shapes = layer.get("shapes") if isinstance(layer, dict) else None
    most = 1
    stack = [(shapes, 1)]
    while stack:
        items, copies = stack.pop()
        if not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, dict) and item.get("ty") == "rp":
                copies *= max(1, math.ceil(min(_most(item.get("c")), MAX_REPEATER_COPIES)))
        most = max(most, min(copies, MAX_DRAWN_COPIES + 1))
        stack.extend((item.get("it"), copies) for item in items
                     if isinstance(item, dict) and item.get("ty") == "gr")
    return most


def _most(prop: object) -> float:
    """The largest number an animatable property takes (its static value or any key's)."""
    if not isinstance(prop, dict):
        return 0.0
    values: list[float] = []
    stack = [prop.get("k")]
    while stack:
        item = stack.pop()
        value = number(item)
        if value is not None:
            values.append(value)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.get(k) for k in ("s", "e") if k in item)
    return max(values, default=0.0)
