"""The ThorVG binding: one engine per process, canvases, fonts and text bounds.

Everything that touches libthorvg goes through ``raster``; nothing above this
layer calls ThorVG directly.
"""
