"""Make the short video clip the examples use (drawn procedurally, encoded with PyAV).

    python examples/assets/make_clip.py

Writes ``orbit.mp4`` next to this script: 96x64 pixels, 24 frames at 12 fps
(2 s), H.264 yuv420p, a bright dot orbiting over a slowly shifting gradient.
The encoder runs single-threaded with bit-exact flags, so the same PyAV build
makes the same bytes; the committed file is what the examples draw.
"""
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

HERE = Path(__file__).resolve().parent
W, H, FPS, FRAMES = 96, 64, 12, 24


def frame(n: int) -> np.ndarray:
    y, x = np.mgrid[0:H, 0:W]
    phase = n / FRAMES
    img = np.zeros((H, W, 3), np.uint8)
    img[..., 0] = (40 + 80 * x / W + 60 * phase).astype(np.uint8)
    img[..., 1] = (30 + 90 * y / H).astype(np.uint8)
    img[..., 2] = (140 - 60 * phase + 40 * x / W).astype(np.uint8)
    angle = 2 * np.pi * phase
    cx, cy = W / 2 + 28 * np.cos(angle), H / 2 + 18 * np.sin(angle)
    dot = (x - cx) ** 2 + (y - cy) ** 2 <= 49
    img[dot] = (255, 230, 120)
    return img


def main() -> None:
    out = HERE / "orbit.mp4"
    with av.open(str(out), mode="w", format="mp4",
                 options={"fflags": "+bitexact", "movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        stream.codec_context.time_base = Fraction(1, FPS)
        stream.codec_context.thread_count = 1
        stream.codec_context.flags |= av.codec.context.Flags.bitexact
        stream.options = {"crf": "30", "preset": "medium",
                          "x264-params": "threads=1:lookahead-threads=1:cpu-independent=1"}
        for n in range(FRAMES):
            vf = av.VideoFrame.from_ndarray(frame(n), format="rgb24").reformat(format="yuv420p")
            vf.pts = n
            for packet in stream.encode(vf):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
