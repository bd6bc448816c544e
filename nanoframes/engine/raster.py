"""The ThorVG binding: rendered document bytes -> straight RGBA pixels.

A direct ctypes binding to the libthorvg file that thorvg-python ships, with
argtypes fixed once. The wrapper's classes are not used for rendering: they
create a new ctypes array type per distinct data length and canvas size, and
ctypes caches those forever (see docs/thorvg.md, "Memory").

One ``Rasterizer`` per process (``get_rasterizer``). The engine is initialised
once per process and never terminated. Parallelism is processes started with
``spawn``/``forkserver``: a child forked after ThorVG was used can hang.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import operator
import os
import re
import threading
from ctypes import POINTER, c_bool, c_char_p, c_float, c_int, c_uint32, c_void_p
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NanoframesError
from . import site
from .library import (  # noqa: F401  (re-exported: callers import them here)
    LIBRARY_ENV,
    library_path,
    library_sha256,
    thorvg_python_version,
)

if TYPE_CHECKING:  # imported where a frame is drawn: text measuring imports this module
    import numpy as np

MAX_SIDE = 16384

_SUCCESS = 0
_INSUFFICIENT_CONDITION = 2
_RESULTS = {
    1: "INVALID_ARGUMENT",
    2: "INSUFFICIENT_CONDITION",
    3: "FAILED_ALLOCATION",
    4: "MEMORY_CORRUPTION",
    5: "NOT_SUPPORTED",
}
_ENGINE_OPTION_DEFAULT = 1  # no smart (partial) rendering: every frame drawn whole
_ABGR8888S = 2  # little-endian bytes R,G,B,A, straight (unpremultiplied) alpha
_XML_SPACE = re.compile("[ \t\n\r]+")  # only XML whitespace: NBSP and em space are kept
_PX_TO_PT = 0.75  # the Text API sizes in pt; the SVG loader converts px the same way

# name -> (argtypes, restype); checked against `nm -D` and the ThorVG 1.0 C API.
_SIGNATURES: dict[str, tuple[list[type], type | None]] = {
    "tvg_engine_init": ([c_uint32], c_int),
    "tvg_swcanvas_create": ([c_int], c_void_p),
    "tvg_swcanvas_set_target": ([c_void_p, c_void_p, c_uint32, c_uint32, c_uint32, c_int], c_int),
    "tvg_canvas_add": ([c_void_p, c_void_p], c_int),
    "tvg_canvas_remove": ([c_void_p, c_void_p], c_int),
    "tvg_canvas_update": ([c_void_p], c_int),
    "tvg_canvas_draw": ([c_void_p, c_bool], c_int),
    "tvg_canvas_sync": ([c_void_p], c_int),
    "tvg_picture_new": ([], c_void_p),
    "tvg_picture_load_data": ([c_void_p, c_char_p, c_uint32, c_char_p, c_char_p, c_bool], c_int),
    "tvg_picture_set_size": ([c_void_p, c_float, c_float], c_int),
    "tvg_paint_rel": ([c_void_p], c_int),
    "tvg_paint_get_aabb": ([c_void_p] + [POINTER(c_float)] * 4, c_int),
    "tvg_font_load_data": ([c_char_p, c_char_p, c_uint32, c_char_p, c_bool], c_int),
    "tvg_text_new": ([], c_void_p),
    "tvg_text_set_font": ([c_void_p, c_char_p], c_int),
    "tvg_text_set_size": ([c_void_p, c_float], c_int),
    "tvg_text_set_text": ([c_void_p, c_char_p], c_int),
}


REQUIRED_MAJOR = 1  # the C API this binding is written against (ThorVG 1.x)


def _which_build(path: Path) -> str:
    if os.environ.get(LIBRARY_ENV, "").strip():
        return f"{path} (from {LIBRARY_ENV})"
    return f"{path} (thorvg-python {thorvg_python_version()})"


def _engine_version(lib: ctypes.CDLL, path: Path) -> str:
    """ThorVG's own answer to its version query; anything but 1.x is one clear error."""
    try:
        query = lib.tvg_engine_version
    except AttributeError:
        raise NanoframesError(
            "thorvg-invalid", f"{_which_build(path)} does not answer ThorVG's version query "
            f"(tvg_engine_version): not a ThorVG {REQUIRED_MAJOR}.x library") from None
    query.argtypes = [POINTER(c_uint32)] * 3 + [POINTER(c_char_p)]
    query.restype = c_int
    major, minor, micro, text = c_uint32(), c_uint32(), c_uint32(), c_char_p()
    if query(major, minor, micro, text) != _SUCCESS:
        raise NanoframesError("thorvg-invalid",
                              f"{_which_build(path)}: ThorVG's version query failed")
    found = f"{major.value}.{minor.value}.{micro.value}"
    if major.value != REQUIRED_MAJOR:
        raise NanoframesError(
            "thorvg-invalid", f"{_which_build(path)} is ThorVG {found}; nanoframes needs "
            f"ThorVG {REQUIRED_MAJOR}.x (thorvg-python {PINNED_THORVG_PYTHON})")
    return found


PINNED_THORVG_PYTHON = "1.1.3"  # the pin in pyproject.toml: the build the ledger expects


@lru_cache(maxsize=1)
def engine_version() -> str:
    """The ThorVG version of the library drawn with (after the checks of ``_lib``)."""
    return _engine_version(_lib(), library_path())


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    # Our own CDLL object over the library: the wrapper rewrites the argtypes of
    # its function objects per call, ours stay fixed. Loading checks the build
    # first, so a wrong one is one line, never an AttributeError mid-render.
    path = library_path()
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise NanoframesError("thorvg-invalid",
                              f"{_which_build(path)} cannot be loaded: {exc}") from None
    found = _engine_version(lib, path)
    missing = [name for name in _SIGNATURES if not hasattr(lib, name)]
    if missing:
        raise NanoframesError(
            "thorvg-invalid", f"{_which_build(path)} is ThorVG {found} without "
            f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}; nanoframes needs "
            f"the API of thorvg-python {PINNED_THORVG_PYTHON} (ThorVG 1.0.x)")
    for name, (argtypes, restype) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    return lib


# ThorVG's loader and font registry only lock when it runs its own scheduler
# threads (docs/thorvg.md). nanoframes may draw on one thread while it measures text on
# another, so every call into the library holds this lock: calls never overlap.
_LOCK = threading.RLock()


def _serialized(doing: str):
    """Hold ``_LOCK`` for the call, and name its site in this process's crash record
    first (``site.py``), so a crash inside ThorVG is reported where it happened."""
    def wrap(method):
        @functools.wraps(method)
        def call(*args, **kwargs):
            with _LOCK:
                if site.entering(doing):
                    _crash_for_testing()
                try:
                    return method(*args, **kwargs)
                finally:
                    site.left()
        return call
    return wrap


def _crash_for_testing() -> None:
    """The testing aid of ``site.DEBUG_ENV``: a real crash, inside the library
    (ThorVG dereferences a canvas pointer that points nowhere), or an abort."""
    if site.debug_signal() == "abort":
        ctypes.CDLL(None).abort()
    _lib().tvg_canvas_update(c_void_p(16))


_engine_pid: int | None = None
_engine_threads = 0
# registered face name -> sha256 of its bytes; process-global, like ThorVG's registry
_fonts: dict[str, str] = {}


def _threads() -> int:
    raw = os.environ.get("NANOFRAMES_THORVG_THREADS", "0").strip() or "0"
    try:
        threads = int(raw)
    except ValueError:
        threads = -1
    if threads < 0:
        raise NanoframesError(
            "config-invalid", f"NANOFRAMES_THORVG_THREADS must be an integer >= 0, got {raw!r}"
        )
    return threads


def _engine(threads: int | None = None) -> ctypes.CDLL:
    """The library with the engine initialised in this process (once; never terminated),
    with ``threads`` (default ``$NANOFRAMES_THORVG_THREADS``) where this call initialises it."""
    global _engine_pid, _engine_threads
    lib = _lib()
    if _engine_pid != os.getpid():
        site.open_record()  # where a crash in this process is reported from
        threads = _threads() if threads is None else threads
        _check(lib.tvg_engine_init(threads), "tvg_engine_init")
        _engine_pid, _engine_threads = os.getpid(), threads
    return lib


def _check(result: int, what: str) -> None:
    if result != _SUCCESS:
        name = _RESULTS.get(result, f"UNKNOWN({result})")
        raise NanoframesError("render-failed", f"ThorVG {what} returned {name}")


class Rasterizer:
    """Document bytes -> pixels, with one reused canvas and buffer. Not thread-safe."""

    @_serialized("start")
    def __init__(self) -> None:
        self._lib = _engine()
        self.threads = _engine_threads  # fixed by the first engine init in this process
        canvas = self._lib.tvg_swcanvas_create(_ENGINE_OPTION_DEFAULT)
        if not canvas:
            raise NanoframesError("render-failed", "ThorVG could not create a software canvas")
        self._canvas = c_void_p(canvas)
        import numpy as np

        self._buf = np.zeros((0, 0), dtype=np.uint32)

    def _target(self, width: int, height: int) -> tuple[int, int]:
        try:
            width, height = operator.index(width), operator.index(height)
        except TypeError:
            raise NanoframesError(
                "render-failed", f"canvas size must be integers, got {width!r}x{height!r}"
            ) from None
        if width < 1 or height < 1:
            raise NanoframesError("render-failed", f"canvas {width}x{height} is empty")
        if width > MAX_SIDE or height > MAX_SIDE:
            raise NanoframesError(
                "canvas-too-large",
                f"canvas {width}x{height} exceeds the {MAX_SIDE} px limit per side",
            )
        if self._buf.shape == (height, width):
            return width, height
        import numpy as np

        buf = np.zeros((height, width), dtype=np.uint32)
        _check(
            self._lib.tvg_swcanvas_set_target(
                self._canvas, buf.ctypes.data, width, width, height, _ABGR8888S
            ),
            "tvg_swcanvas_set_target",
        )
        self._buf = buf  # ThorVG now points into buf: keep it alive here
        return width, height

    @_serialized("draw")
    def render(self, svg: bytes, width: int, height: int) -> np.ndarray:
        """Render ``svg`` scaled to ``width`` x ``height``.

        Returns a read-only ``(height, width, 4)`` uint8 view, straight
        (unpremultiplied) R,G,B,A on a transparent background. The view is of
        an internal buffer that the next render of the same size overwrites:
        copy it (``.copy()``/``.tobytes()``) to keep it.
        """
        width, height = self._target(width, height)
        lib, canvas = self._lib, self._canvas
        pic = c_void_p(lib.tvg_picture_new())
        # copy=True: without it ThorVG caches loads by data address and can
        # show the previous document (docs/thorvg.md, "How a frame is drawn").
        res = lib.tvg_picture_load_data(pic, svg, len(svg), b"svg", None, True)
        if res != _SUCCESS:
            lib.tvg_paint_rel(pic)
            _check(res, "load_data (not a renderable SVG document)")
        res = lib.tvg_picture_set_size(pic, float(width), float(height))
        if res == _SUCCESS:
            res = lib.tvg_canvas_add(canvas, pic)  # on success the canvas owns pic
        if res != _SUCCESS:
            lib.tvg_paint_rel(pic)
            _check(res, "picture_set_size/canvas_add")
        try:
            _check(lib.tvg_canvas_update(canvas), "canvas_update")
            _check(lib.tvg_canvas_draw(canvas, True), "canvas_draw")
        finally:
            # never leave a draw unsynced or a picture on the canvas
            lib.tvg_canvas_sync(canvas)
            lib.tvg_canvas_remove(canvas, None)
        view = self._buf.view("uint8").reshape(height, width, 4)
        view.flags.writeable = False
        return view

    @_serialized("font")
    def register_font(self, name: str, data: bytes) -> None:
        """Register ``data`` (a TrueType face) under ``name`` for <text font-family="name">.

        Fonts are process-global in ThorVG. Registering a name again with the
        same bytes is a no-op; with different bytes it raises, because ThorVG
        would silently keep drawing the first face.
        """
        digest = hashlib.sha256(data).hexdigest()
        known = _fonts.get(name)
        if known == digest:
            return
        if known is not None:
            raise NanoframesError(
                "font-conflict", f"face name {name!r} is already registered with other bytes"
            )
        if not name or not data:
            raise NanoframesError("font-invalid", "a face needs a name and bytes")
        res = self._lib.tvg_font_load_data(name.encode(), data, len(data), b"ttf", True)
        if res != _SUCCESS:
            raise NanoframesError("font-invalid", f"ThorVG refused face {name!r} (result {res})")
        _fonts[name] = digest

    @_serialized("measure")
    def text_bounds(
        self, face_name: str, size_px: float, text: str
    ) -> tuple[float, float, float, float]:
        """Ink box ``(x, y, w, h)`` of ``text`` as ``<text x="0" y="0">`` draws it (SVG units).

        Measured on a Text paint (no rasterizing) with the registered face at
        ``size_px``. Two loader behaviours are reproduced so the box matches the
        rendered ink: the loader places the Text paint at ``y - font-size`` (the
        box is shifted likewise, so it is relative to the ``<text>`` anchor; note
        ThorVG's baseline is at ``ascender - 1em`` from the anchor, not at 0), and
        it collapses runs of XML whitespace to one space and trims the ends.
        ``text`` is taken raw, as ThorVG reads it (it decodes no entities).
        Text with no ink (empty, only spaces) gives ``(0, 0, 0, 0)``.
        """
        if face_name not in _fonts:
            raise NanoframesError("font-unknown", f"face {face_name!r} is not registered")
        lib = self._lib
        paint = c_void_p(lib.tvg_text_new())
        box = (c_float(), c_float(), c_float(), c_float())
        try:
            _check(lib.tvg_text_set_font(paint, face_name.encode()), "text_set_font")
            _check(lib.tvg_text_set_size(paint, size_px * _PX_TO_PT), "text_set_size")
            utf8 = _XML_SPACE.sub(" ", text).strip(" ").encode()
            _check(lib.tvg_text_set_text(paint, utf8), "text_set_text")
            res = lib.tvg_paint_get_aabb(paint, *map(ctypes.byref, box))
        finally:
            lib.tvg_paint_rel(paint)
        if res == _INSUFFICIENT_CONDITION:  # what ThorVG answers for text without glyph outlines
            return (0.0, 0.0, 0.0, 0.0)
        _check(res, "paint_get_aabb")
        x, y, w, h = (v.value for v in box)
        return (x, y - size_px, w, h)


_instances: dict[int, tuple[int, Rasterizer]] = {}


def get_rasterizer(slot: int = 0) -> Rasterizer:
    """This process's rasterizer (a fresh one after a fork). ``slot`` 1 is a second
    canvas with its own buffer, so one frame can be hashed while the next draws."""
    pid = os.getpid()
    held = _instances.get(slot)
    if held is None or held[0] != pid:
        held = _instances[slot] = (pid, Rasterizer())
    return held[1]
