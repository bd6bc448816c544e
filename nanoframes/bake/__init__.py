"""Baking: a composition at one frame becomes one static SVG document.

``baker`` resolves the clock (presence, fades, timeline values, text layout),
``media`` embeds images, ``nested`` inlines child compositions.
"""
