"""Build the hostile-composition project (issue 6): the committed corpus plus the big cases.

The small cases live in ``tests/hostile/*.hostile`` (not ``*.nf.svg``, so that
``pytest --nf-check`` over the repository never collects them). Cases too big to
commit (100,000 elements, 10,000-deep nesting, a 9 MB file, a PNG declaring
100000x100000 pixels...) and cases that need a file system layout (symlinks out
of the project, absolute paths to a file outside it) are generated here.

``tests/hostile/README.md`` is the single list of cases and the error code each
must give; :func:`expected` reads it.

    python tests/hostile_gen.py DIR     # build the project in DIR/project to poke at
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

CORPUS = Path(__file__).parent / "hostile"
SUFFIX = ".hostile"

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
HEAD = f'<svg {NS} data-width="64" data-height="48" data-fps="10" data-duration="1">\n'
END = "</svg>\n"
SCRIPT = '<script type="application/nanoframes+json">'


# --- README: the list of cases ----------------------------------------------------------

_ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`\s*\|\s*`([a-z*-]+)`\s*\|(.*)\|\s*$")


def expected() -> dict[str, str]:
    """case name -> error code, from the README's tables (``*`` = any code, see notes)."""
    out: dict[str, str] = {}
    for line in (CORPUS / "README.md").read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            if m.group(1) in out:
                raise ValueError(f"README lists {m.group(1)!r} twice")
            out[m.group(1)] = m.group(2)
    return out


def known_bugs() -> dict[str, str]:
    """case name -> the reason it is expected to fail today (README rows marked **bug**)."""
    out = {}
    for line in (CORPUS / "README.md").read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m and "**bug**" in m.group(3):
            reason = m.group(3).split("**bug**", 1)[1].replace("*(generated)*", "")
            out[m.group(1)] = reason.strip(" :")
    return out


# --- small valid images ---------------------------------------------------------------------

def png(width: int, height: int, pixels: bytes | None = None) -> bytes:
    """A PNG (RGBA, 8 bit). Without ``pixels`` only a header declaring the size (and an
    empty IDAT): enough to claim any size without holding it."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    idat = zlib.compress(pixels) if pixels is not None else zlib.compress(b"")
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


def small_png(width: int = 4, height: int = 4, seed: int = 0) -> bytes:
    rnd = random.Random(seed)
    rows = b"".join(b"\x00" + bytes(rnd.randrange(256) for _ in range(width * 4))
                    for _ in range(height))
    return png(width, height, rows)


def blank_png(side: int) -> bytes:
    """A real, decodable PNG of ``side`` x ``side`` transparent pixels, compressed as
    it is made (a few hundred KB for 8192, never the decoded size in memory)."""
    comp = zlib.compressobj(9)
    row = b"\x00" * (side * 4 + 1)
    idat = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    head = png(side, side)
    at = head.index(b"IDAT") - 4
    body = b"IDAT" + idat
    chunk = struct.pack(">I", len(idat)) + body + struct.pack(">I", zlib.crc32(body))
    return head[:at] + chunk + png(1, 1)[-12:]  # IHDR, the real IDAT, IEND


def jpeg_header(width: int, height: int) -> bytes:
    """SOI, a baseline SOF0 declaring ``width`` x ``height``, EOI: no image data."""
    sof = struct.pack(">BBHBHHBBBB", 0xFF, 0xC0, 11, 8, height, width, 1, 1, 0x11, 0)
    return b"\xff\xd8" + sof + b"\xff\xd9"


# --- generated cases -----------------------------------------------------------------------

def _deep(n: int) -> str:
    return HEAD + "<g>" * n + "</g>" * n + "\n" + END


def _elements(n: int) -> str:
    return HEAD + '<rect width="1" height="1"/>\n' * n + END


def _attributes(n: int) -> str:
    return HEAD + "<rect " + " ".join(f'a{i}="1"' for i in range(n)) + "/>\n" + END


def _file_too_large() -> str:
    return HEAD + "<!--" + " " * (9 * 1024 * 1024) + "-->\n" + END


def _text(n: int) -> str:
    return HEAD + '<text x="1" y="20">' + "A B " * (n // 4) + "</text>\n" + END


def _use_chain(n: int) -> str:
    # Each <use> references the next: resolving the first recurses n deep.
    uses = "".join(f'<use id="u{i}" href="#u{i + 1}"/>\n' for i in range(n))
    return HEAD + uses + f'<rect id="u{n}" width="2" height="2"/>\n' + END


def _selector_bomb(elements: int, animations: int) -> str:
    anims = ",".join('{"target":"rect","keyframes":[{"t":0,"x":1}]}' for _ in range(animations))
    return (HEAD + '<rect width="1" height="1"/>' * elements + "\n" + SCRIPT
            + '{"animations":[' + anims + "]}</script>\n" + END)


def _keyframe_bomb(elements: int, keyframes: int) -> str:
    kfs = ",".join(f'{{"t":{i / keyframes},"x":{i % 7}}}' for i in range(keyframes))
    return (HEAD + '<rect width="1" height="1"/>' * elements + "\n" + SCRIPT
            + '{"animations":[{"target":"rect","keyframes":[' + kfs + "]}]}</script>\n" + END)


def _deep_json(n: int) -> str:
    return (HEAD + '<rect id="r"/>' + SCRIPT + '{"animations":[{"target":"#r","keyframes":'
            '[{"t":0,"x":' + "[" * n + "]" * n + "}]}]}</script>\n" + END)


def _image(href: str) -> str:
    return HEAD + f'<image href="{href}" width="10" height="10"/>\n' + END


def _many_images(n: int) -> str:
    return HEAD + '<image href="assets/noise.png" width="4" height="4"/>\n' * n + END


def _curves(count: int, chars: int) -> str:
    text = "".join(f'<text font-size="2" data-curve-circle="32,24,20">{"A" * chars}</text>\n'
                   for _ in range(count))
    return HEAD + text + END


def _frame_text_fields(fields: int) -> str:
    return HEAD + '<text x="1" y="20" data-frame-text="' + "{frame:>60}" * fields + '">x</text>\n' \
        + END


def _nested_fanout(fan: int) -> str:
    return HEAD + '<image href="assets/fan1.nf.svg" width="64" height="48"/>\n' * fan + END


GENERATED: dict[str, Callable[[Path], str | bytes]] = {
    "deep-10000": lambda root: _deep(10_000),
    "elements-100000": lambda root: _elements(100_000),
    "attributes-100000": lambda root: _attributes(100_000),
    "file-9mb": lambda root: _file_too_large(),
    "text-1mb": lambda root: _text(1_000_000),
    "use-chain-15000": lambda root: _use_chain(15_000),
    "timeline-selector-bomb": lambda root: _selector_bomb(19_000, 200),
    "timeline-keyframe-bomb": lambda root: _keyframe_bomb(2_000, 100_000),
    "timeline-json-1m-deep": lambda root: _deep_json(1_000_000),
    "image-absolute-outside": lambda root: _image((root.parent / "outside" / "secret.png")
                                                  .as_posix()),
    "image-file-url-outside": lambda root: _image((root.parent / "outside" / "secret.png")
                                                  .as_uri()),
    "image-symlink-out": lambda root: _image("assets/link-out.png"),
    "image-symlink-dir-out": lambda root: _image("assets/dir-out/secret.png"),
    "image-symlink-loop": lambda root: _image("assets/loop.png"),
    "image-png-100000x100000": lambda root: _image("assets/huge.png"),
    "image-png-0x0": lambda root: _image("assets/zero.png"),
    "image-jpeg-65535x65535": lambda root: _image("assets/huge.jpg"),
    "images-embedded-1gb": lambda root: _many_images(12_000),
    "images-decoded-6gb": lambda root: HEAD + '<image href="assets/blank-8192.png" width="4" '
                                              'height="4"/>\n' * 24 + END,
    "curve-text-80x1000": lambda root: _curves(80, 1000),
    "frame-text-fields": lambda root: _frame_text_fields(1_200),
    "nested-chain-10": lambda root: _image("assets/chain1.nf.svg"),
    "nested-fanout": lambda root: _nested_fanout(40),
    "clip-not-a-video": lambda root: _image("assets/not-a-video.mp4"),
    "clip-truncated": lambda root: _image("assets/truncated.mp4"),
    "clip-4112x16": lambda root: _image("assets/wide.mp4"),
    "clip-3601-frames": lambda root: _image("assets/long.webm"),
}


def _clip(path: Path, width: int, height: int, frames: int, codec: str = "libx264") -> None:
    """A small real video (PyAV): grey frames, one pixel row changing per frame."""
    import av
    import numpy as np

    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(codec, rate=24)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        if codec == "libx264":
            stream.options = {"preset": "ultrafast"}
        for n in range(frames):
            img = np.full((height, width, 3), 128, np.uint8)
            img[n % height] = 255
            frame = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv420p")
            frame.pts = n
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _assets(root: Path) -> None:
    assets = root / "assets"
    assets.mkdir()
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (root / "ok.png").write_bytes(small_png())
    (outside / "secret.png").write_bytes(small_png(seed=1))
    (outside / "child.nf.svg").write_text(HEAD + '<rect width="4" height="4"/>\n' + END)
    (assets / "not-an-image.png").write_text("this is not an image\n")
    (assets / "truncated.png").write_bytes(small_png(32, 32)[:60])
    (assets / "huge.png").write_bytes(png(100_000, 100_000))
    (assets / "zero.png").write_bytes(png(0, 0))
    (assets / "huge.jpg").write_bytes(jpeg_header(65_535, 65_535))
    (assets / "link-out.png").symlink_to(outside / "secret.png")
    (assets / "dir-out").symlink_to(outside, target_is_directory=True)
    (assets / "loop.png").symlink_to("loop.png")
    # Video clips: not a video, cut short, too wide, too many frames.
    (assets / "not-a-video.mp4").write_text("this is not a video\n")
    _clip(assets / "ok.mp4", 64, 48, 48)
    data = (assets / "ok.mp4").read_bytes()
    (assets / "truncated.mp4").write_bytes(data[:len(data) // 2])
    _clip(assets / "wide.mp4", 4112, 16, 1)
    _clip(assets / "long.webm", 16, 16, 3601, codec="libvpx")
    # 8192x8192 declared and decodable in ~260 KB: 256 MiB decoded per reference.
    (assets / "blank-8192.png").write_bytes(blank_png(8192))
    # ~100 KB of noise: 12,000 references embed 1.6 GB of base64 in one document.
    (assets / "noise.png").write_bytes(small_png(160, 160, seed=2))
    # A chain of nested compositions deeper than nested.MAX_NESTING.
    for i in range(1, 11):
        (assets / f"chain{i}.nf.svg").write_text(
            _image(f"chain{i + 1}.nf.svg") if i < 10 else HEAD + "<rect/>\n" + END)
    # A nested fan-out: 40 x 40 x 40 x 40 instances of a 4-level tree.
    for i in range(1, 4):
        (assets / f"fan{i}.nf.svg").write_text(
            HEAD + f'<image href="fan{i + 1}.nf.svg" width="64" height="48"/>\n' * 40 + END)
    (assets / "fan4.nf.svg").write_text(HEAD + '<rect width="4" height="4"/>\n' * 40 + END)


def build(root: Path) -> dict[str, Path]:
    """Write the hostile project into ``root`` (created; its parent gets ``outside/``).

    Returns case name -> composition path, for every case the README lists.
    """
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "hostile"\n')
    _assets(root)
    paths: dict[str, Path] = {}
    for src in sorted(CORPUS.glob(f"*{SUFFIX}")):
        dest = root / (src.name.removesuffix(SUFFIX) + ".nf.svg")
        shutil.copyfile(src, dest)
        paths[src.name.removesuffix(SUFFIX)] = dest
    for name, make in GENERATED.items():
        data = make(root)
        dest = root / f"{name}.nf.svg"
        dest.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        paths[name] = dest
    listed = expected()
    if set(listed) != set(paths):
        unlisted, no_file = sorted(set(paths) - set(listed)), sorted(set(listed) - set(paths))
        raise ValueError(f"README and corpus disagree: unlisted {unlisted}, no file {no_file}")
    return paths


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile-project") / "project"
    built = build(target)
    print(f"{len(built)} cases in {target}")
