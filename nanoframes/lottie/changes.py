"""Why a Lottie film moved, in words: what differs between two documents, named by
layer and property path (``layer "Box" (ind 1): ks.p.k[1].s: [180,50,0] -> [170,50,0]``)."""

from __future__ import annotations

from .jsontext import Number, canonical, parse

MAX_LINES = 12
_SHOWN = 60


def _shown(value) -> str:
    if isinstance(value, str) and not isinstance(value, Number) and value.startswith("data:"):
        import hashlib

        return f"<inline image {hashlib.sha256(value.encode()).hexdigest()[:12]}>"
    if value is _MISSING:
        return "(absent)"
    text = canonical(value).decode("utf-8", "replace")
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


_MISSING = object()


def _layer_label(layer, where: str) -> str:
    name = layer.get("nm") if isinstance(layer, dict) else None
    ind = layer.get("ind") if isinstance(layer, dict) else None
    label = f"layer {name!r}" if isinstance(name, str) else "a layer"
    if ind is not None:
        label += f" (ind {ind})"
    return label + where


def _diff(old, new, path: list[str], label: str, out: list[str], limit: int) -> None:
    stack = [(old, new, path, label)]
    while stack and len(out) <= limit:
        a, b, p, lab = stack.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            keys = list(a) + [k for k in b if k not in a]
            for key in reversed(keys):
                stack.append((a.get(key, _MISSING), b.get(key, _MISSING), p + [key], lab))
            continue
        if isinstance(a, list) and isinstance(b, list):
            is_layers = p and p[-1] == "layers"
            for i in reversed(range(max(len(a), len(b)))):
                x = a[i] if i < len(a) else _MISSING
                y = b[i] if i < len(b) else _MISSING
                if is_layers:
                    where = "" if not lab else f" in {lab}"
                    stack.append((x, y, [], _layer_label(y if x is _MISSING else x, where)))
                else:
                    stack.append((x, y, p[:-1] + [f"{p[-1]}[{i}]"] if p else [f"[{i}]"], lab))
            continue
        if type(a) is type(b) and a == b:
            continue
        where = ".".join(p) or "(whole)"
        out.append(f"{lab or 'the animation'}: {where}: {_shown(a)} -> {_shown(b)}")


def describe_changes(old: bytes, new: bytes, limit: int = MAX_LINES) -> list[str]:
    """What differs between two Lottie documents (``LottieSource.document``s), at most
    ``limit`` lines (the last says how many more were left out)."""
    a, b = parse(old, "<old>"), parse(new, "<new>")
    out: list[str] = []
    _diff(a, b, [], "", out, 10 ** 6)
    if len(out) > limit:
        rest = len(out) - (limit - 1)
        out = out[:limit - 1] + [f"... and {rest} more difference{'s' if rest > 1 else ''}"]
    return out
