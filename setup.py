"""The one thing pyproject.toml cannot say: the top-level ``fonts/`` directory
is installed as the package ``nanoframes.fonts`` (package data: the bundled
faces and their licence). Everything else is configured in pyproject.toml.
See docs/packaging.md.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["nanoframes", "nanoframes.*",
                                "pytest_nanoframes", "pytest_nanoframes.*"]),
        "nanoframes.fonts",
    ],
    package_dir={"nanoframes.fonts": "fonts"},
)
