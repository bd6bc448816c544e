"""nanoframes: animated SVG compositions rendered with ThorVG, frame by frame,
with a determinism system that tells an intended edit from a renderer that drifted."""

__version__ = "0.1.0"
