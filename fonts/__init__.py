"""The bundled faces, installed as the package ``nanoframes.fonts`` (see docs/packaging.md).

This file only makes the directory a package, so an editable install maps it
into ``nanoframes`` just as a wheel does. It draws nothing and is not part of
the toolchain's ``modules`` digest.
"""
