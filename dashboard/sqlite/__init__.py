"""The SQLite database backend of the embedded mode: Django's, with a private database file (see base)."""
