"""ThorVG's Lottie player through nanoframes' own binding: each hazard measured on
ThorVG 1.0.4 is reproduced here with a small generated file, then shown designed
out (docs/limits.md, "Lottie"; docs/decisions/0106). Everything draws for real."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import lottie_gen as g
import pytest

from nanoframes.engine import lottie as L
from nanoframes.engine import raster, site
from nanoframes.errors import NanoframesError
from nanoframes.lottie import draw_frame, lottie_from_bytes

ROOT = Path(__file__).resolve().parents[1]
COUNTER = "if (typeof n === 'undefined') { n = 0; } n = n + 1; $bm_rt = [20 + 10 * n, 50, 0];"
RANDOM = "$bm_rt = [random() * 200, 50, 0];"


def _digest(view) -> str:
    return hashlib.sha256(view.tobytes()).hexdigest()


def _doc(code: str | None = None, **kw) -> bytes:
    doc = g.animation(**kw)
    if code is not None:
        g.with_expression(doc, code)
    return lottie_from_bytes(g.dumps(doc), "t.json").document


@pytest.fixture()
def player():
    p = L.get_player()
    yield p
    p.close()


def _draw(player, doc: bytes, frame: float, seed=b"s", **load) -> str:
    player.load(doc, hashlib.sha256(doc).hexdigest() + repr(load), **load)
    return _digest(player.draw(frame, 200, 100, seed))


def _run(script: str, timeout=60, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=timeout)


def _draw_picture(lib, rast, pic) -> None:
    """ThorVG's own calls, none of the player's defences: ``pic`` drawn at 200x100 on
    ``rast``'s canvas, read from ``rast._buf``."""
    rast._target(200, 100)
    lib.tvg_picture_set_size(pic, 200.0, 100.0)
    lib.tvg_canvas_add(rast._canvas, pic)
    lib.tvg_canvas_update(rast._canvas)
    lib.tvg_canvas_draw(rast._canvas, True)
    lib.tvg_canvas_sync(rast._canvas)
    lib.tvg_canvas_remove(rast._canvas, None)


def test_frames_draw_and_move(player):
    doc = _doc()
    frames = [_draw(player, doc, f) for f in (0, 30, 59)]
    assert len(set(frames)) == 3
    view = player.draw(0, 200, 100, b"s")
    assert view.shape == (100, 200, 4) and view[:, :, 3].max() == 255
    assert view[50, 20].tolist() == [255, 0, 0, 255]  # the red box around (20, 50), straight


def test_forward_and_reverse_give_one_film(player):
    doc = _doc()
    forward = [_draw(player, doc, f) for f in range(8)]
    player.close()
    backward = [_draw(player, doc, f) for f in reversed(range(8))][::-1]
    assert forward == backward


def test_a_slot_keeps_its_frame_while_the_other_slot_draws(player):
    """The digest pipeline hashes slot 0 while the next frame draws to slot 1: the
    frame in slot 0 must not move, and a slot's frame is the canvas's frame."""
    doc = _doc()
    player.load(doc, "k")
    first = player.draw(0, 200, 100, b"s", slot=0)
    held = _digest(first)
    second = player.draw(30, 200, 100, b"s", slot=1)
    assert _digest(first) == held != _digest(second)
    assert held == _digest(player.draw(0, 200, 100, b"s"))  # the canvas's own frame 0
    assert not first.flags.writeable


def test_random_is_reseeded_per_frame(player, monkeypatch):
    doc = _doc(RANDOM)
    rand = L._libc().rand
    # the hazard: random() is libc rand(), process-global: unseeded, it moves
    monkeypatch.setattr(L, "reseed", lambda seed: None)
    first = _draw(player, doc, 3)
    rand()
    assert _draw(player, doc, 3) != first
    monkeypatch.undo()
    # designed out: the frame's seed decides it, whatever came before
    seeded = _draw(player, doc, 3)
    rand(), rand()
    assert _draw(player, doc, 3) == seeded
    assert _draw(player, doc, 3, seed=b"another film") != seeded


def test_javascript_globals_persist_within_one_animation(player):
    doc = _doc(COUNTER)
    # measured: one animation keeps its globals from frame to frame
    kept = [_draw(player, doc, 3, expressions=False) for _ in range(3)]
    assert len(set(kept)) == 3
    # designed out: an expression film loads a fresh animation for every frame
    assert L._EXPRESSION in doc
    drawn = {_draw(player, doc, f) for f in (3, 7, 3, 0, 3)}
    assert len(drawn) == 1  # the counter is the same at every frame: 1


def test_no_javascript_state_between_films(player):
    writer = _doc("shared = 1; $bm_rt = value;")
    reader = _doc("$bm_rt = (typeof shared === 'undefined') ? [20, 50, 0] : [150, 50, 0];")
    alone = _draw(player, reader, 2)
    _draw(player, writer, 2)
    # the hazard: with the writer's animation alive, ThorVG's one JavaScript engine
    # is shared, and the reader sees the writer's global
    lib = L._lib()
    anim = ctypes.c_void_p(lib.tvg_lottie_animation_new())
    try:
        pic = lib.tvg_animation_get_picture(anim)
        assert lib.tvg_picture_load_data(pic, reader, len(reader), b"lottie+json", None,
                                         True) == 0
        assert lib.tvg_animation_set_frame(anim, 2.0) == 0
        rast = raster.get_rasterizer()
        _draw_picture(lib, rast, pic)
        shared = _digest(rast._buf.view("uint8").reshape(100, 200, 4))
    finally:
        lib.tvg_animation_del(anim)
    assert shared != alone
    # designed out: one animation alive at a time, so the next film starts clean
    assert _draw(player, reader, 2) == alone


def test_the_pose_built_while_loading_is_never_drawn(player):
    doc = _doc(RANDOM)
    lib = L._lib()
    poses = set()
    for state in (b"one", b"two"):  # the random state when the file happens to load
        L.reseed(state)
        player.load(doc, state.decode(), expressions=False)
        # the hazard: ThorVG ignores set_frame(0) right after loading (it is within
        # 0.0009 of the frame it built while loading) and keeps the load's pose
        assert lib.tvg_animation_set_frame(player._anim, 0.0) == raster._INSUFFICIENT_CONDITION
        rast = player._raster
        _draw_picture(lib, rast, ctypes.c_void_p(lib.tvg_animation_get_picture(player._anim)))
        poses.add(_digest(rast._buf))
    assert len(poses) == 2
    # designed out: a request ThorVG would ignore goes by another frame first
    drawn = set()
    for state in (b"one", b"two"):
        L.reseed(state)
        player.close()
        drawn.add(_draw(player, doc, 0))
        drawn.add(_draw(player, doc, 0))  # the same frame again: also rebuilt
    assert len(drawn) == 1


def test_thorvg_ignores_requests_within_0_0009(player):
    doc = _doc()
    player.load(doc, "fine")
    lib = L._lib()
    assert lib.tvg_animation_set_frame(player._anim, 5.0) == 0
    assert lib.tvg_animation_set_frame(player._anim, 5.0005) == raster._INSUFFICIENT_CONDITION
    assert lib.tvg_animation_set_frame(player._anim, 5.002) == 0
    assert _draw(player, doc, 5) == _draw(player, doc, 5)


def test_null_easing_reads_uninitialised_memory_unless_dropped():
    script = """
        import hashlib, json, os, sys, lottie_gen as g
        from nanoframes.engine import lottie as L
        from nanoframes.lottie import lottie_from_bytes
        doc = g.animation()
        for key in doc["layers"][0]["ks"]["p"]["k"]:
            key["i"] = key["o"] = None
        raw = json.dumps(doc).encode()
        data = raw if sys.argv[1] == "raw" else lottie_from_bytes(raw, "t.json").document
        heap = [bytearray(os.urandom(64)) for _ in range(int(sys.argv[2]))]
        p = L.get_player()
        p.load(data, "k")
        print(hashlib.sha256(p.draw(15, 200, 100, b"s").tobytes()).hexdigest())
    """
    def drawn(kind: str, allocations: int) -> str:
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(script), kind,
                              str(allocations)], cwd=ROOT, capture_output=True, text=True,
                             timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    # designed out: the handles are dropped, so the keyframes ease linearly, always
    drops = {drawn("read", n) for n in (0, 1, 50)}
    assert len(drops) == 1
    # the hazard: the file as written draws a point ThorVG never set, which varies
    # from process to process (measured: 3 different frames in 12 processes, the
    # linear one in 8); 20 processes all drawing the linear one is a 1-in-3,000 event
    assert any(drawn("raw", n) not in drops for n in range(20))


def test_thorvg_opens_any_path_nanoframes_never_hands_it_one(tmp_path, player):
    (tmp_path / "red.png").write_bytes(g.png(rgba=(255, 0, 0, 255)))
    doc = g.animation(layers=[g.image_layer("img")], assets=[
        g.image_asset("img", str(tmp_path / "red.png"), folder="")])
    raw = json.dumps(doc).encode()
    player.load(raw, "raw")
    # the hazard: ThorVG reads an absolute path (from outside any project) and draws it
    assert player.draw(0, 200, 100, b"s")[5, 5].tolist() == [255, 0, 0, 255]
    with pytest.raises(NanoframesError) as info:
        lottie_from_bytes(raw, "t.json", tmp_path / "project")
    assert info.value.code == "image-outside"


def test_successive_films_never_show_an_earlier_image(player):
    # ThorVG can serve a file it loaded before from its cache; inline images of the
    # same size, one film after another, each draw their own pixels
    colours = [(255, 0, 0, 255), (0, 0, 255, 255), (0, 255, 0, 255)] * 3
    for rgba in colours:
        doc = g.animation(layers=[g.image_layer("img")], assets=[g.image_asset(
            "img", g.data_uri(g.png(rgba=rgba)), folder="", embedded=1)])
        view = draw_frame(lottie_from_bytes(g.dumps(doc), "t.json"), 0, player=player)
        assert view[5, 5].tolist() == list(rgba)


def test_player_reads_what_the_reader_read(player):
    doc = g.animation(ip=5, op=65.5, fr=25, markers=[("a", 10, 20)])
    source = lottie_from_bytes(g.dumps(doc), "t.json")
    player.load(source.document, "info")
    total, duration, w, h = player.info()
    assert (w, h) == (source.width, source.height) and total == pytest.approx(60.5)
    assert source.frame_count == 61 and duration * source.fps == pytest.approx(total)
    assert player.markers() == {"a": (10.0, 30.0)}  # absolute frames, as written
    assert source.markers["a"] == (5, 25)  # film frames: relative to ip


def test_film_frames_count_from_ip(player):
    doc = g.animation(ip=10, op=70, layers=[g.shape_layer(
        position=g.keyed((10, [20, 50, 0]), (40, [170, 50, 0])), op=70)])
    source = lottie_from_bytes(g.dumps(doc), "t.json")
    ink = []
    for index in (0, 30):  # the keyframes' times, 10 and 40, less ip
        row = draw_frame(source, index, player=player)[50, :, 3]
        ink.append((int(row.nonzero()[0].min()), int(row.nonzero()[0].max())))
    assert ink == [(0, 39), (150, 189)]  # the 40 px box centred on x = 20, then 170


def test_a_marker_film_draws_the_frames_of_the_whole_film(player):
    doc = g.dumps(g.animation(markers=[("middle", 20, 10)]))
    whole = lottie_from_bytes(doc, "t.json")
    middle = lottie_from_bytes(doc, "t.json", marker="middle")
    assert middle.frame_count == 10 and hash(middle) != hash(whole)
    part = [_digest(draw_frame(middle, i, player=player)) for i in range(10)]
    assert part == [_digest(draw_frame(whole, 20 + i, player=player)) for i in range(10)]
    assert middle.scene(0) == whole.scene(20)


def test_text_and_images_draw(tmp_path, player):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(g.png(rgba=(0, 0, 255, 255)))
    doc = g.animation(layers=[g.text_layer("Hello"), g.image_layer("img", ind=2)],
                      assets=[g.image_asset("img", "a.png")], fonts=g.font_list("Body"))
    source = lottie_from_bytes(g.dumps(doc), "t.json", tmp_path)
    view = draw_frame(source, 0, player=player)
    assert view[2:14, 2:14].tolist() == [[[0, 0, 255, 255]] * 12] * 12  # the image
    text = view[25:65, 5:120]
    assert (text[:, :, 3] > 0).sum() > 100  # the face registered for the text draws ink


@pytest.mark.parametrize("first", ["composition", "lottie"])
def test_a_face_is_the_same_bytes_for_a_composition_and_a_lottie_film(tmp_path, first):
    """A composition's <text> and a Lottie text layer that resolve to one face register
    it under one name: ThorVG must be handed the same (checked) bytes for both, in
    either order, in one process (it keeps the first; a second set is a conflict)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "t.json").write_bytes(g.dumps(g.animation(
        layers=[g.text_layer("Hello")], fonts=g.font_list("Noto Sans"))))
    (tmp_path / "c.nf.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="32">'
        '<text x="2" y="20" font-family="Noto Sans" font-size="16">Hi</text></svg>')
    order = ["c.nf.svg", "t.json"] if first == "composition" else ["t.json", "c.nf.svg"]
    done = _run(f"""
        from pathlib import Path
        from nanoframes.frames.film import Film
        root = Path({str(tmp_path)!r})
        for name in {order!r}:
            film = Film.open(root / name, root)
            print(name, len(list(film.digests())))
    """, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "font-conflict" not in done.stderr


def test_threads_are_pinned_for_lottie():
    script = """
        import hashlib, lottie_gen as g
        from nanoframes.engine import lottie as L, raster
        from nanoframes.lottie import lottie_from_bytes
        doc = g.with_expression(g.animation(), "$bm_rt = [150, 50, 0];")
        data = lottie_from_bytes(g.dumps(doc), "t.json").document
        {setup}
        p.load(data, "k")
        view = p.draw(0, 200, 100, b"s")
        print(raster._engine_threads, hashlib.sha256(view.tobytes()).hexdigest())
    """
    player_first = _run(script.format(setup="p = L.get_player()"), NANOFRAMES_THORVG_THREADS="0")
    assert player_first.returncode == 0, player_first.stderr
    # the hazard: an engine started with threads draws expressions as if they were not there
    bypass = "raster.get_rasterizer(); p = L.LottiePlayer.__new__(L.LottiePlayer); " \
             "p.__init__ = None\n        " + "\n        ".join([
                 "p._lib = L._lib(); p._raster = raster.Rasterizer(); p._anim = None",
                 "p._document = b''; p._key = None; p._fresh_per_frame = True",
                 "p._watchdog = L._Watchdog()"])
    threaded = _run(script.format(setup=bypass), NANOFRAMES_THORVG_THREADS="2")
    assert threaded.returncode == 0, threaded.stderr
    threads, pinned = player_first.stdout.split()
    assert threads == "0" and threaded.stdout.split() == ["2", threaded.stdout.split()[1]]
    assert threaded.stdout.split()[1] != pinned
    # designed out: a thread count > 0 refuses Lottie, whatever started the engine
    for setup in ("raster.get_rasterizer(); p = L.get_player()", "p = L.get_player()"):
        refused = _run(script.format(setup=setup), NANOFRAMES_THORVG_THREADS="2")
        assert refused.returncode == 1 and "lottie-threads" in refused.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="faulthandler records")
@pytest.mark.parametrize("hostile", ["parents", "precomp"])
def test_what_thorvg_crashes_on_is_refused_before(tmp_path, hostile):
    if hostile == "parents":
        doc = g.animation(layers=[g.shape_layer(ind=1, parent=2), g.shape_layer(ind=2, parent=1)])
    else:
        doc = g.animation(layers=[g.precomp_layer("me")],
                          assets=[{"id": "me", "layers": [g.precomp_layer("me")]}])
    data = json.dumps(doc, separators=(",", ":"))
    raw = _run(f"""
        from nanoframes.engine import lottie as L
        p = L.get_player()
        p.load({data!r}.encode(), "k")
        p.draw(1, 200, 100, b"s")
    """)
    assert raw.returncode == -signal.SIGSEGV  # ThorVG itself dies of it
    with pytest.raises(NanoframesError) as info:
        lottie_from_bytes(data.encode(), "t.json")
    assert info.value.code == "lottie-cycle"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="faulthandler records")
def test_a_crash_that_slips_through_is_render_crashed(tmp_path):
    out = _run(f"""
        import lottie_gen as g
        from nanoframes.engine import site
        from nanoframes.lottie import draw_frame, lottie_from_bytes
        site.open_record({str(tmp_path)!r})
        source = lottie_from_bytes(g.dumps(g.animation()), "boom.json")
        for i in range(5):
            draw_frame(source, i)
    """, NANOFRAMES_DEBUG_CRASH="draw:boom.json:3:segv")
    assert out.returncode == -signal.SIGSEGV
    crash = site.find_crash(tmp_path)
    assert crash.code == "render-crashed" and crash.frame == 3
    assert crash.line() == "ThorVG crashed (SIGSEGV) while drawing frame 3"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="faulthandler records")
def test_an_expression_that_never_ends_is_render_timeout(tmp_path):
    out = _run(f"""
        import lottie_gen as g
        from nanoframes.engine import site
        from nanoframes.lottie import draw_frame, lottie_from_bytes
        site.open_record({str(tmp_path)!r})
        doc = g.with_expression(g.animation(), "var t = time; while (t < 1e9 || true) {{}}")
        source = lottie_from_bytes(g.dumps(doc), "loop.json")
        draw_frame(source, 2)
    """, timeout=60, NANOFRAMES_LOTTIE_FRAME_SECONDS="1")
    assert out.returncode == -signal.SIGABRT
    assert "error[render-timeout]: one Lottie frame took more than 1 s" in out.stderr
    crash = site.find_crash(tmp_path)
    assert crash.code == "render-timeout" and crash.frame == 2
    assert "per-frame time limit" in crash.line()
    # the command's guard reports the record with the code the crash carries
    from nanoframes.cli.guard import _crash_line

    assert _crash_line(str(tmp_path / str(crash.pid)), signal.SIGABRT) == (
        "loop.json: error[render-timeout]: drawing frame 2 ran past the per-frame time "
        "limit (an expression that does not end?); the process was stopped")


def test_frame_limit_setting_is_checked(monkeypatch):
    monkeypatch.setenv(L.LIMIT_ENV, "0")
    with pytest.raises(NanoframesError) as info:
        L.frame_seconds()
    assert info.value.code == "config-invalid"
    monkeypatch.setenv(L.LIMIT_ENV, "2.5")
    assert L.frame_seconds() == 2.5
