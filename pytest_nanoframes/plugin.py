"""pytest hooks for nanoframes (placeholder until the plugin issue lands)."""
