"""The composition model: a parsed ``*.nf.svg`` and everything time does to it.

Parsing and limits (``composition``), the keyframe timeline (``timeline``,
``easing``, ``transform``), colours, numbers and geometry. Pure Python over
lxml; nothing here draws.
"""
