"""Makes the project root importable for the test suite."""

try:  # the Django tests need the project's environment (make test); the core tests run without it
    import django  # noqa: F401
    import pytest_django  # noqa: F401
except ImportError:
    collect_ignore = ["tests/dashboard"]
