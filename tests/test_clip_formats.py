"""Every common clip pixel format decodes to straight RGBA by exact integer code
(issue 33, item 5). Each clip is written here with PyAV: lossless codecs (PNG,
QTRLE, FFV1) are checked byte for byte against an independent per-pixel
reference of the documented arithmetic; lossy ones (ProRes, VP9 with alpha,
HEVC Main 10) against FFmpeg's own conversion of the same decoded frame, within
rounding. A test skips only where PyAV's build lacks the encoder."""

from __future__ import annotations

import base64
import io
import shutil
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image as PILImage

from nanoframes.bake.clips import _decode
from nanoframes.bake.pixels import MATRICES, PACKED, PLANAR
from nanoframes.frames.film import Film

W, H, N = 16, 16, 2  # frame size and count of every test clip
SVG = 'xmlns="http://www.w3.org/2000/svg"'
CONTAINERS = {".mov": "mov", ".mkv": "matroska", ".webm": "webm", ".mp4": "mp4"}


def needs_encoder(name: str) -> None:
    try:
        av.codec.Codec(name, "w")
    except Exception:  # UnknownCodecError: this PyAV build has no such encoder
        pytest.skip(f"PyAV's build has no {name} encoder")


def samples(fmt: str, k: int) -> list[np.ndarray]:
    """Plane arrays of test frame ``k`` in ``fmt``: ramps that cover the range,
    clipping included, different per frame."""
    if fmt in PACKED:
        size = PACKED[fmt][0]
        x = np.arange(W)[None, :, None]
        y = np.arange(H)[:, None, None]
        c = np.arange(size)[None, None, :]
        return [((x * 17 + y * 29 + c * 61 + k * 7) % 256).astype(np.uint8)]
    sx, sy, _, bits, alpha = PLANAR[fmt]
    top = (1 << bits) - 1
    x, y = np.arange(W)[None, :], np.arange(H)[:, None]
    cx, cy = np.arange(-(-W // sx))[None, :], np.arange(-(-H // sy))[:, None]
    dtype = np.uint16 if bits > 8 else np.uint8
    planes = [(x * top // (W - 1) + k * 3) % (top + 1) * np.ones_like(y),
              (cx * 37 + cy * 53 + k * 11) * (top + 1) // 256 % (top + 1),
              (cx * 71 + cy * 19 + k * 5) * (top + 1) // 256 % (top + 1)]
    if alpha:
        planes.append(y * top // (H - 1) * np.ones_like(x))
    return [p.astype(dtype) for p in planes]


def frame_of(fmt: str, planes: list[np.ndarray]) -> av.VideoFrame:
    frame = av.VideoFrame(W, H, fmt)
    for plane, data in zip(frame.planes, planes):
        rows = data.reshape(data.shape[0], -1)
        width = rows.shape[1] * rows.itemsize
        buf = np.zeros((plane.buffer_size // plane.line_size, plane.line_size), np.uint8)
        buf[:rows.shape[0], :width] = rows.view(np.uint8).reshape(rows.shape[0], width)
        plane.update(buf.tobytes())
    return frame


def gentle(fmt: str, k: int) -> list[np.ndarray]:
    """Planes of colours well inside the RGB cube (nothing clips), chroma in smooth
    ramps (so nearest and interpolated chroma agree closely)."""
    planes = samples(fmt, k)
    top = (1 << PLANAR[fmt][3]) - 1
    y = planes[0].astype(int) * (top // 2) // top + (top + 1) // 4
    ch, cw = planes[1].shape
    ramp_x = np.arange(cw)[None, :] * (top // 4) // max(1, cw - 1) * np.ones((ch, 1), int)
    ramp_y = np.arange(ch)[:, None] * (top // 4) // max(1, ch - 1) * np.ones((1, cw), int)
    u, v = ramp_x + (top + 1) * 3 // 8 + k, ramp_y + (top + 1) * 3 // 8
    return [p.astype(planes[0].dtype) for p in (y, u, v)] + planes[3:]


def write_clip(path: Path, codec: str, fmt: str, options: dict | None = None,
               make=samples) -> list:
    """A clip of N frames in ``fmt``; returns the planes written per frame."""
    needs_encoder(codec)
    written = []
    with av.open(str(path), "w", format=CONTAINERS[path.suffix]) as out:
        stream = out.add_stream(codec, rate=12, options=options or {})
        stream.width, stream.height, stream.pix_fmt = W, H, fmt
        for k in range(N):
            planes = make(fmt, k)
            frame = frame_of(fmt, planes)
            frame.pts = k
            written.append(planes)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return written


def reference(fmt: str, planes: list[np.ndarray]) -> np.ndarray:
    """The documented arithmetic, one pixel at a time in Python integers."""
    out = np.zeros((H, W, 4), np.uint8)
    if fmt in PACKED:
        _, r, g, b, a = PACKED[fmt]
        px = planes[0]
        for j in range(H):
            for i in range(W):
                out[j, i] = (px[j, i, r], px[j, i, g], px[j, i, b],
                             255 if a is None else px[j, i, a])
        return out
    sx, sy, full, bits, alpha = PLANAR[fmt]
    gain, vr, ug, vg, ub, off = MATRICES[("bt601", full)]
    e = bits - 8
    top = (1 << bits) - 1
    for j in range(H):
        for i in range(W):
            yy = int(planes[0][j, i])
            u = int(planes[1][j // sy, i // sx]) - (128 << e)
            v = int(planes[2][j // sy, i // sx]) - (128 << e)
            c = (yy - (off << e)) * gain + (1 << (7 + e))

            def cl(n: int) -> int:
                return max(0, min(255, n >> (8 + e)))
            a = 255 if not alpha else (int(planes[3][j, i]) * 255 + top // 2) // top
            out[j, i] = (cl(c + vr * v), cl(c - ug * u - vg * v), cl(c + ub * u), a)
    return out


def decoded_rgba(path: Path) -> tuple[list[str], list[np.ndarray]]:
    """The formats the decoder gave, and each frame as the film gets it (its PNG)."""
    with av.open(str(path)) as container:
        formats = [f.format.name for f in container.decode(video=0)]
    st = path.stat()
    found = _decode(path.resolve(), st.st_mtime_ns, st.st_size)
    assert not isinstance(found, tuple), found
    frames = []
    for uri in found.uris:
        png = base64.b64decode(uri.split(",", 1)[1])
        frames.append(np.asarray(PILImage.open(io.BytesIO(png)).convert("RGBA")))
    return formats, frames


LOSSLESS = [  # (pixel format, encoder, file suffix)
    ("rgb24", "png", ".mov"),  # PNG-in-MOV
    ("rgba", "png", ".mov"),
    ("argb", "qtrle", ".mov"),  # QuickTime Animation
    ("bgra", "ffv1", ".mkv"),
    ("bgr0", "ffv1", ".mkv"),
    ("yuv420p10le", "ffv1", ".mkv"),
    ("yuv422p10le", "ffv1", ".mkv"),
    ("yuv444p10le", "ffv1", ".mkv"),
    ("yuv444p12le", "ffv1", ".mkv"),
    ("yuv420p12le", "ffv1", ".mkv"),
    ("yuva420p", "ffv1", ".mkv"),
    ("yuva444p10le", "ffv1", ".mkv"),
    ("yuva444p12le", "ffv1", ".mkv"),
    ("yuv420p", "ffv1", ".mkv"),  # the 8-bit path, unchanged
]


@pytest.mark.parametrize(("fmt", "codec", "suffix"), LOSSLESS,
                         ids=[f"{f}-{c}" for f, c, _ in LOSSLESS])
def test_lossless_clip_decodes_to_the_exact_reference(tmp_path: Path, fmt: str, codec: str,
                                                      suffix: str) -> None:
    path = tmp_path / f"clip{suffix}"
    written = write_clip(path, codec, fmt)
    formats, frames = decoded_rgba(path)
    assert formats == [fmt] * N  # the decoder hands back the format written
    if fmt in PLANAR:
        with av.open(str(path)) as container:
            ranges = {f.color_range for f in container.decode(video=0)}
        assert ranges <= {0, 1}  # unspecified or limited: the reference's assumption
    for planes, got in zip(written, frames):
        expected = reference(fmt, planes)
        assert np.array_equal(got, expected)
    if PLANAR.get(fmt, (0, 0, 0, 0, False))[4] or PACKED.get(fmt, (0, 0, 0, 0, None))[4]:
        assert len(np.unique(frames[0][..., 3])) > 2  # alpha varies: it was kept


def test_ten_bit_agrees_with_ffmpeg_within_rounding(tmp_path: Path) -> None:
    """The coefficients are the right ones: FFmpeg's scaler on the same frame."""
    path = tmp_path / "clip.mkv"
    write_clip(path, "ffv1", "yuv444p10le", make=gentle)
    with av.open(str(path)) as container:
        frame = next(container.decode(video=0))
        theirs = frame.to_ndarray(format="rgb24").astype(int)
    ours = decoded_rgba(path)[1][0][..., :3].astype(int)
    inside = ((theirs > 4) & (theirs < 251)).all(axis=2)  # no channel clipped
    assert inside.sum() > W * H // 2
    assert np.abs(ours - theirs)[inside].max() <= 2


LOSSY = [  # (pixel format written, encoder, suffix, format the decoder gives, options)
    ("yuv422p10le", "prores_ks", ".mov", {"yuv422p10le"}, {}),  # ProRes 422
    ("yuva444p10le", "prores_ks", ".mov", {"yuva444p10le", "yuva444p12le"},
     {"profile": "4444"}),  # ProRes 4444 with alpha
    ("yuva420p", "libvpx-vp9", ".webm", {"yuva420p"}, {"lossless": "1"}),  # VP9 alpha
    ("yuv420p10le", "libx265", ".mkv", {"yuv420p10le"}, {}),
]


@pytest.mark.parametrize(("fmt", "codec", "suffix", "gives", "options"), LOSSY,
                         ids=[f"{f}-{c}" for f, c, *_ in LOSSY])
def test_lossy_clip_matches_ffmpeg_and_keeps_alpha(tmp_path: Path, fmt: str, codec: str,
                                                   suffix: str, gives: set,
                                                   options: dict) -> None:
    path = tmp_path / f"clip{suffix}"
    written = write_clip(path, codec, fmt, options, make=gentle)
    formats, frames = decoded_rgba(path)
    assert len(frames) == N
    if codec == "libvpx-vp9":  # the built-in decoder drops alpha; ours goes via libvpx
        assert set(formats) == {"yuv420p"}
        ctx = av.CodecContext.create("libvpx-vp9", "r")
        with av.open(str(path)) as container:
            decoded = [f for p in container.demux(video=0) for f in ctx.decode(p)]
    else:
        assert set(formats) <= gives
        with av.open(str(path)) as container:
            decoded = list(container.decode(video=0))
    assert {f.format.name for f in decoded} <= gives
    for frame, got, planes in zip(decoded, frames, written):
        theirs = frame.to_ndarray(format="rgba").astype(int)
        diff = np.abs(got[..., :3].astype(int) - theirs[..., :3])
        if PLANAR[fmt][:2] == (1, 1):
            assert diff.max() <= 3
        else:  # FFmpeg interpolates subsampled chroma; ours repeats it (nearest)
            assert diff.mean() < 3
        if "yuva" in fmt:  # the alpha written comes back (lossy: within a few levels)
            top = (1 << PLANAR[fmt][3]) - 1
            authored = (planes[3].astype(int) * 255 + top // 2) // top
            assert np.abs(got[..., 3].astype(int) - authored).max() <= 3
            assert got[..., 3].min() < 80 and got[..., 3].max() > 175


def test_decoding_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "clip.mkv"
    write_clip(path, "ffv1", "yuva420p")
    first = _decode.__wrapped__(path.resolve(), 0, path.stat().st_size)
    again = _decode.__wrapped__(path.resolve(), 1, path.stat().st_size)
    assert first.uris == again.uris and first.times[0] == Fraction(0)


def test_a_clip_with_alpha_draws_over_what_is_under_it(tmp_path: Path) -> None:
    """Straight alpha reaches the frame: the clip blends over a blue rectangle."""
    (tmp_path / "pyproject.toml").write_text("")
    src = tmp_path / "src.mov"
    written = write_clip(src, "qtrle", "argb")
    shutil.copyfile(src, tmp_path / "overlay.mov")
    comp = tmp_path / "v.nf.svg"
    comp.write_text(f'<svg {SVG} data-width="{W}" data-height="{H}" data-fps="12" '
                    f'data-duration="1"><rect width="{W}" height="{H}" fill="#0000ff"/>'
                    f'<image href="overlay.mov" width="{W}" height="{H}"/></svg>')
    film = Film.open(comp)
    drawn = film.raster(film.document(0)).astype(int)
    clip = reference("argb", written[0]).astype(int)
    a = clip[..., 3:4] / 255
    under = np.array([0, 0, 255])
    expected = clip[..., :3] * a + under * (1 - a)
    assert (drawn[..., 3] == 255).all()
    assert np.abs(drawn[..., :3] - expected).max() <= 2
    assert len(np.unique(clip[..., 3])) > 8  # the blend was tested over many alphas


def test_an_unsupported_format_is_one_line_naming_the_accepted_ones(tmp_path: Path) -> None:
    from nanoframes.errors import NanoframesError

    (tmp_path / "pyproject.toml").write_text("")
    needs_encoder("ffv1")
    path = tmp_path / "grey.mkv"
    with av.open(str(path), "w", format="matroska") as out:
        stream = out.add_stream("ffv1", rate=12)
        stream.width, stream.height, stream.pix_fmt = W, H, "gray"
        frame = av.VideoFrame.from_ndarray(np.full((H, W), 128, np.uint8), format="gray")
        for packet in [*stream.encode(frame), *stream.encode()]:
            out.mux(packet)
    comp = tmp_path / "v.nf.svg"
    comp.write_text(f'<svg {SVG} data-width="{W}" data-height="{H}" data-fps="12" '
                    f'data-duration="1"><image href="grey.mkv"/></svg>')
    with pytest.raises(NanoframesError) as err:
        Film.open(comp)
    assert err.value.code == "clip-invalid"
    message = err.value.message
    assert "\n" not in message and "gray" in message and "rgba" in message and "yuva" in message
