"""ThorVG's Lottie player, bound directly (ctypes) on the library ``raster`` draws with.

Only documents :mod:`nanoframes.lottie` built are handed over: canonical JSON with
every image inlined, checked against the limits first. What the player itself
designs out (docs/limits.md, "Lottie"; docs/decisions/0106):

- **Engine threads are 0.** ThorVG disables expressions when it runs scheduler
  threads, so the thread count would be a pixel input. ``NANOFRAMES_THORVG_THREADS``
  > 0 refuses every Lottie film (``lottie-threads``), whatever the process drew
  before: the outcome is the configuration's, not the first film's (decision 0120).
- **One animation alive at a time**, freed before the next loads: ThorVG's
  JavaScript engine lives exactly as long as some animation does, so a fresh
  animation is a fresh JavaScript engine (no globals shared between films).
- **Expression films load a fresh animation for every frame**: JavaScript globals
  an expression writes persist from frame to frame within one animation, so a
  frame would depend on the frames drawn before it.
- **libc's random state is reseeded before every frame** from the film's seed
  (``srand``): ``random()`` in an expression is libc ``rand()``, process-global.
- **Never the pose built while loading, never an ignored request**: ThorVG ignores
  ``set_frame`` within 0.0009 of its current frame (and after loading its current
  frame is the one built during the load, with the random state and JavaScript
  state of that moment). Such a request first goes to a neighbouring frame, then
  to the one asked for, so the pose is always built by the request. An expression
  film (fresh animation per frame) takes that same path for every frame, so every
  frame's expressions have run the same number of times.
- **A per-frame time limit**: a watchdog thread aborts the process when one frame
  (load included) takes longer than ``$NANOFRAMES_LOTTIE_FRAME_SECONDS`` (default
  30); its crash record names the overrun, reported as ``render-timeout``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import signal
import sys
import threading
import time
from ctypes import POINTER, c_bool, c_char_p, c_float, c_int, c_uint32, c_void_p
from functools import lru_cache
from typing import TYPE_CHECKING

from ..errors import NanoframesError
from . import raster, site

if TYPE_CHECKING:
    import numpy as np

LIMIT_ENV = "NANOFRAMES_LOTTIE_FRAME_SECONDS"
DEFAULT_FRAME_SECONDS = 30.0
_MIME = b"lottie+json"
_IGNORED_WITHIN = 0.0009  # LottieLoader::frame: a request this close to the current frame
_EXPRESSION = b'"x":"'  # in canonical JSON: exactly a key "x" holding a string (an expression)

_SIGNATURES: dict[str, tuple[list[type], type | None]] = {
    "tvg_lottie_animation_new": ([], c_void_p),
    "tvg_animation_get_picture": ([c_void_p], c_void_p),
    "tvg_animation_set_frame": ([c_void_p, c_float], c_int),
    "tvg_animation_get_frame": ([c_void_p, POINTER(c_float)], c_int),
    "tvg_animation_get_total_frame": ([c_void_p, POINTER(c_float)], c_int),
    "tvg_animation_get_duration": ([c_void_p, POINTER(c_float)], c_int),
    "tvg_animation_del": ([c_void_p], c_int),
    "tvg_lottie_animation_set_marker": ([c_void_p, c_char_p], c_int),
    "tvg_lottie_animation_get_markers_cnt": ([c_void_p, POINTER(c_uint32)], c_int),
    "tvg_lottie_animation_get_marker_info": (
        [c_void_p, c_uint32, POINTER(c_char_p), POINTER(c_float), POINTER(c_float)], c_int),
    "tvg_picture_load_data": ([c_void_p, c_char_p, c_uint32, c_char_p, c_char_p, c_bool], c_int),
    "tvg_picture_get_size": ([c_void_p, POINTER(c_float), POINTER(c_float)], c_int),
}


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    lib = raster._lib()  # the same CDLL object (and library file) the rasterizer draws with
    missing = [name for name in _SIGNATURES if not hasattr(lib, name)]
    if missing:
        raise NanoframesError("thorvg-invalid", f"{raster.library_path()} has no Lottie player "
                              f"({', '.join(missing[:3])}); Lottie films need ThorVG 1.0.x "
                              "built with its Lottie loader")
    for name, (argtypes, restype) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    return lib


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    """The C library ThorVG's ``rand()`` comes from (the process's one libc)."""
    if sys.platform.startswith("linux"):
        return ctypes.CDLL("libc.so.6")
    return ctypes.CDLL(ctypes.util.find_library("c"))


def seed_value(seed: bytes) -> int:
    """The ``srand`` argument for a frame's seed bytes (32 bits of their SHA-256)."""
    return int.from_bytes(hashlib.sha256(seed).digest()[:4], "big")


def reseed(seed: bytes) -> None:
    """libc's random state, set from ``seed``: what ``random()`` in an expression draws."""
    fn = _libc().srand
    fn.argtypes, fn.restype = [ctypes.c_uint], None
    fn(seed_value(seed))


def frame_seconds() -> float:
    raw = os.environ.get(LIMIT_ENV, "").strip()
    if not raw:
        return DEFAULT_FRAME_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise NanoframesError("config-invalid", f"{LIMIT_ENV} must be a number of seconds in "
                              f"(0, 3600], got {raw[:40]!r}")
    return value


class _Watchdog:
    """Aborts this process when one frame's ThorVG work runs past its limit.

    A call into ThorVG cannot be interrupted (an expression's ``while(true){}``
    never returns to Python), but ctypes releases the GIL for it, so this thread
    still runs: it marks the crash record (``site.overran``), says one line on
    stderr, and raises SIGABRT, which the command's crash guard reports."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._limit = 0.0
        # when this thread's own wait ends (None: until notified): a frame armed while
        # a wait ends before its deadline needs no wake-up (no thread switch per frame)
        self._wake: float | None = None
        self._thread = threading.Thread(target=self._run, name="nanoframes-lottie-watchdog",
                                        daemon=True)
        self._thread.start()

    def arm(self, limit: float) -> None:
        with self._cond:
            self._limit = limit
            self._deadline = time.monotonic() + limit
            if self._wake is None or self._wake > self._deadline:
                self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._wake = None
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._wake = self._deadline
                    self._cond.wait(left)
                    continue
                site.overran()
                os.write(2, f"nanoframes: error[render-timeout]: one Lottie frame took more "
                            f"than {self._limit:g} s ({LIMIT_ENV})\n".encode())
                os.kill(os.getpid(), signal.SIGABRT)
                self._deadline = None


class LottiePlayer:
    """One animation at a time on its own canvas. One per process (``get_player``)."""

    def __init__(self) -> None:
        # decided from configuration, never from which film started the engine first
        # (docs/decisions/0120): a thread count > 0 refuses every Lottie film, so a
        # Lottie film starts the engine only with the 0 threads compositions get too
        configured = raster._threads()
        if configured != 0:
            raise NanoframesError(
                "lottie-threads", f"NANOFRAMES_THORVG_THREADS is {configured}; Lottie films "
                "are drawn with 0 engine threads, since ThorVG disables expressions with "
                "threads (set it to 0 to draw Lottie films)")
        with raster._LOCK:
            raster._engine()
            if raster._engine_threads != 0:  # an engine started with threads on purpose
                raise NanoframesError(
                    "lottie-threads", f"this process's ThorVG engine runs "
                    f"{raster._engine_threads} threads (NANOFRAMES_THORVG_THREADS); Lottie "
                    "films are drawn with 0, since ThorVG disables expressions with threads")
            self._lib = _lib()
            self._raster = raster.Rasterizer()  # a canvas and buffer of its own
        self._anim: c_void_p | None = None
        self._document = b""
        self._key: str | None = None
        self._fresh_per_frame = False
        self._watchdog = _Watchdog()
        import numpy as np

        # the two buffers a frame drawn for the digest pipeline is copied into (draw)
        self._slots = [np.empty((0, 0, 4), dtype=np.uint8) for _ in range(2)]

    # -- animation lifetime ---------------------------------------------------------

    def _free(self) -> None:
        if self._anim is not None:
            self._lib.tvg_animation_del(self._anim)
            self._anim = None

    def _open(self) -> None:
        """A fresh animation of the loaded document (the previous one freed first)."""
        self._free()
        lib = self._lib
        anim = lib.tvg_lottie_animation_new()
        if not anim:
            raise NanoframesError("render-failed", "ThorVG could not create a Lottie animation")
        self._anim = c_void_p(anim)
        pic = lib.tvg_animation_get_picture(self._anim)
        doc = self._document
        # copy=True: ThorVG keeps its own copy; no resource path: every image is inline
        res = lib.tvg_picture_load_data(pic, doc, len(doc), _MIME, None, True)
        if res != raster._SUCCESS:
            self._free()
            raster._check(res, "load_data (not a Lottie document ThorVG draws)")

    def load(self, source_document: bytes, key: str, *, expressions: bool | None = None) -> None:
        """Make ``source_document`` (a ``LottieSource.document``) the animation drawn.
        ``key`` names it (its identity): loading the same key again keeps the animation.
        ``expressions`` (default: found in the document) loads a fresh animation for
        every frame."""
        if key == self._key and self._anim is not None and source_document == self._document:
            return
        self._free()
        self._key = None
        self._document = bytes(source_document)
        self._fresh_per_frame = _EXPRESSION in self._document if expressions is None \
            else bool(expressions)
        self._guarded("start", self._open)
        self._key = key

    def register_face(self, name: str, data: bytes) -> None:
        """Register a face for text layers (process-global, as for compositions;
        the same name with other bytes is ``font-conflict``)."""
        self._raster.register_font(name, data)

    def close(self) -> None:
        """Free the animation (and with it ThorVG's JavaScript engine)."""
        with raster._LOCK:
            self._free()
        self._key = None

    # -- what ThorVG reads --------------------------------------------------------

    def info(self) -> tuple[float, float, float, float]:
        """(total frames, duration in seconds, width, height) as ThorVG reads them."""
        self._need()
        total, duration, w, h = c_float(), c_float(), c_float(), c_float()
        with raster._LOCK:
            lib = self._lib
            raster._check(lib.tvg_animation_get_total_frame(self._anim, total), "total_frame")
            raster._check(lib.tvg_animation_get_duration(self._anim, duration), "duration")
            pic = lib.tvg_animation_get_picture(self._anim)
            raster._check(lib.tvg_picture_get_size(pic, w, h), "picture_get_size")
        return total.value, duration.value, w.value, h.value

    def markers(self) -> dict[str, tuple[float, float]]:
        """Marker name -> (begin, end) frame as ThorVG reads them."""
        self._need()
        found: dict[str, tuple[float, float]] = {}
        count = c_uint32()
        with raster._LOCK:
            lib = self._lib
            raster._check(lib.tvg_lottie_animation_get_markers_cnt(self._anim, count),
                          "markers_cnt")
            for i in range(count.value):
                name, begin, end = c_char_p(), c_float(), c_float()
                raster._check(lib.tvg_lottie_animation_get_marker_info(
                    self._anim, i, name, begin, end), "marker_info")
                found[(name.value or b"").decode(errors="replace")] = (begin.value, end.value)
        return found

    def _need(self) -> None:
        if self._anim is None:
            raise NanoframesError("render-failed", "no Lottie document is loaded")

    # -- drawing ------------------------------------------------------------------

    def _guarded(self, doing: str, work, *args):
        limit = frame_seconds()
        with raster._LOCK:
            if site.entering(doing):
                raster._crash_for_testing()
            self._watchdog.arm(limit)
            try:
                return work(*args)
            finally:
                self._watchdog.disarm()
                site.left()

    def _set_frame(self, frame_number: float, total: float, detour: bool) -> None:
        """Build ``frame_number``'s pose. ThorVG ignores a request within 0.0009 of its
        current frame (after loading: the pose built while loading); such a request,
        and every request where ``detour`` is set, first goes to a neighbouring frame."""
        lib, anim = self._lib, self._anim
        res = raster._INSUFFICIENT_CONDITION if detour \
            else lib.tvg_animation_set_frame(anim, frame_number)
        if res == raster._INSUFFICIENT_CONDITION:
            other = frame_number + 1.0 if frame_number + 1.0 < total else frame_number - 1.0
            if other < 0:  # a one-frame film: half a frame on, still inside it
                other = frame_number + 0.5
            raster._check(lib.tvg_animation_set_frame(anim, other), "set_frame (detour)")
            res = lib.tvg_animation_set_frame(anim, frame_number)
        raster._check(res, f"set_frame({frame_number:g})")

    def _draw(self, frame_number: float, width: int, height: int, seed: bytes):
        if self._fresh_per_frame:
            self._open()
        lib = self._lib
        total = c_float()
        raster._check(lib.tvg_animation_get_total_frame(self._anim, total), "total_frame")
        if not 0 <= frame_number < max(total.value, 1.0):
            raise NanoframesError("render-failed", f"frame {frame_number:g} is outside the "
                                  f"animation's {total.value:g} frames")
        reseed(seed)  # before the frame is built: expressions run in set_frame
        # an expression film's fresh animation takes the same steps for every frame
        self._set_frame(float(frame_number), total.value, self._fresh_per_frame)
        rast = self._raster
        width, height = rast._target(width, height)
        canvas = rast._canvas
        pic = c_void_p(lib.tvg_animation_get_picture(self._anim))
        raster._check(lib.tvg_picture_set_size(pic, float(width), float(height)),
                      "picture_set_size")
        raster._check(lib.tvg_canvas_add(canvas, pic), "canvas_add")
        try:
            raster._check(lib.tvg_canvas_update(canvas), "canvas_update")
            raster._check(lib.tvg_canvas_draw(canvas, True), "canvas_draw")
        finally:
            lib.tvg_canvas_sync(canvas)
            lib.tvg_canvas_remove(canvas, None)  # the animation keeps the picture
        view = rast._buf.view("uint8").reshape(height, width, 4)
        view.flags.writeable = False
        return view

    def draw(self, frame_number: float, width: int, height: int, seed: bytes,
             slot: int | None = None) -> np.ndarray:
        """Draw ``frame_number`` (ThorVG's, relative to ``ip``) of the loaded animation at
        ``width`` x ``height``, with libc's random state reseeded from ``seed``.

        A read-only ``(height, width, 4)`` uint8 view, straight R,G,B,A (as
        ``Rasterizer.render``), of a buffer the next draw of that size overwrites.
        With ``slot`` (0 or 1) the frame is copied out of the canvas into that slot's
        buffer, which only the next draw to the same slot overwrites: the digest
        pipeline hashes one slot while the next frame draws (decision 0121). The
        canvas itself is the same either way, so the pixels are too."""
        self._need()
        view = self._guarded("draw", self._draw, frame_number, width, height, seed)
        if slot is None:
            return view
        import numpy as np

        out = self._slots[slot]
        if out.shape != view.shape:
            out = self._slots[slot] = np.empty(view.shape, dtype=np.uint8)
        np.copyto(out, view)
        kept = out.view()
        kept.flags.writeable = False
        return kept


_players: dict[int, LottiePlayer] = {}


def get_player() -> LottiePlayer:
    """This process's Lottie player (a fresh one after a fork)."""
    pid = os.getpid()
    player = _players.get(pid)
    if player is None:
        _players.clear()
        player = _players[pid] = LottiePlayer()
    return player
