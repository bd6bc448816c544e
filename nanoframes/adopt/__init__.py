"""Adopting nanoframes in a project: ``nanoframes init`` (project.py) and the CI
workflow it writes (workflow.py, docs/ci.md)."""
