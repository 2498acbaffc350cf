"""Scheduler profiles: editor, versions, dry runs and live apply."""
