"""The composition model: a parsed ``*.nf.svg`` and everything time does to it.

The SVG vocabulary and the one attribute-number reader (``svg``), parsing
(``composition``) under hard limits (``limits``), presence windows
(``presence``), the keyframe timeline (``timeline``, ``easing``,
``transform``), colours, numbers and geometry. Pure Python over lxml; nothing
here draws.
"""
