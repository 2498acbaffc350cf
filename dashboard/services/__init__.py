"""Plain-Python services behind the views, tasks and consumers (no request objects here)."""
