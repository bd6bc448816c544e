"""Frames: baked documents drawn into RGBA, hashed, and written out.

``film`` draws a composition's frames (de-duplicated, pipelined, in worker
processes), ``workers`` owns those processes, ``digest`` hashes frames and
films, ``output`` writes PNGs and MP4s.
"""
