"""Makes the project root importable for the test suite."""
