"""Lottie JSON in, a tree with numbers as written out, and its canonical bytes.

Python's ``json`` keeps the last of two equal keys where ThorVG draws both
(``"shapes"`` twice draws both lists), so a duplicate key is refused. Numbers
stay the text they were written as (``Number``, a ``str``), so the canonical
bytes change only where the document does: no float round trip decides an
identity. The canonical projection is the document without insignificant
whitespace, keys in written order (ThorVG's parser reads in order), strings
re-escaped one way (UTF-8, ``json``'s escapes): the same animation written two
ways gives the same bytes.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring as _string  # json.dumps(s, ensure_ascii=False)
from pathlib import Path

from ..errors import NanoframesError

MAX_JSON_DEPTH = 128  # Bodymovin nests about 12 deep; json recursion ends near 1,000


class Number(str):
    """A JSON number as written (``"0.50"`` stays ``0.50``); ``float(n)`` reads it."""

    __slots__ = ()


class _Duplicate(Exception):
    pass


class _NonFinite(Exception):
    pass


def _pairs(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _number(text: str) -> Number:
    if not math.isfinite(float(text)):
        raise _NonFinite(text)
    return Number(text)


def _constant(text: str):
    raise _NonFinite(text)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_number, parse_int=_number,
                            parse_constant=_constant)


def parse(data: bytes, file: Path | str) -> object:
    """``data`` (UTF-8 JSON) as dicts, lists, str, ``Number``, bool and None."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NanoframesError("lottie-invalid", f"not UTF-8 text (byte {exc.start})",
                              file) from None
    try:
        tree = _DECODER.decode(text)
    except _Duplicate as exc:
        raise NanoframesError("lottie-invalid", f"key {str(exc)[:60]!r} appears twice in one "
                              "object (ThorVG would draw both, other readers one)",
                              file) from None
    except _NonFinite as exc:
        raise NanoframesError("lottie-invalid", f"the number {str(exc)[:40]} is not finite",
                              file) from None
    except json.JSONDecodeError as exc:
        raise NanoframesError("lottie-invalid", f"not valid JSON: {exc.msg}", file,
                              exc.lineno, exc.colno) from None
    except RecursionError:
        raise NanoframesError("lottie-too-deep", f"JSON nests deeper than {MAX_JSON_DEPTH} "
                              "levels", file) from None
    _check_depth(tree, file)
    return tree


def _check_depth(tree: object, file: Path | str) -> None:
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise NanoframesError("lottie-too-deep", f"JSON nests deeper than {MAX_JSON_DEPTH} "
                                  "levels", file)
        if isinstance(node, dict):
            for key, value in node.items():
                _check_text(key, file)
                if isinstance(value, (dict, list)):
                    stack.append((value, depth + 1))
                elif isinstance(value, str) and not isinstance(value, Number):
                    _check_text(value, file)
        elif isinstance(node, list):
            for value in node:
                if isinstance(value, (dict, list)):
                    stack.append((value, depth + 1))
                elif isinstance(value, str) and not isinstance(value, Number):
                    _check_text(value, file)
        elif isinstance(node, str) and not isinstance(node, Number):
            _check_text(node, file)


def _check_text(text: str, file: Path | str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NanoframesError("lottie-invalid", "a string holds an unpaired surrogate "
                              "(\\ud800-\\udfff escape): not text", file) from None
    if "\0" in text:
        raise NanoframesError("lottie-invalid", "a string holds a NUL character (\\u0000): "
                              "ThorVG would read it cut short", file)


def canonical(tree: object) -> bytes:
    """The canonical bytes of ``tree`` (as ``parse`` gives it, or built of the same types).
    Recursive: ``parse`` refuses trees deeper than ``MAX_JSON_DEPTH``."""
    out: list[str] = []
    _emit(tree, out.append)
    return "".join(out).encode("utf-8")


def _emit(node: object, put) -> None:
    if isinstance(node, Number):
        put(str.__str__(node))
    elif isinstance(node, str):
        put(_string(node))
    elif isinstance(node, dict):
        put("{")
        first = True
        for key, value in node.items():
            put(_string(key) + ":" if first else "," + _string(key) + ":")
            first = False
            _emit(value, put)
        put("}")
    elif isinstance(node, list):
        put("[")
        for i, value in enumerate(node):
            if i:
                put(",")
            _emit(value, put)
        put("]")
    elif node is True:
        put("true")
    elif node is False:
        put("false")
    elif node is None:
        put("null")
    elif isinstance(node, (int, float)):  # built by nanoframes, never parsed
        put(repr(int(node)) if isinstance(node, float) and node.is_integer() else repr(node))
    else:  # pragma: no cover - parse gives no other type
        raise TypeError(type(node).__name__)


def number(value: object) -> float | None:
    """A JSON number's value (``Number`` or a Python number), else None."""
    if isinstance(value, Number):
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None
