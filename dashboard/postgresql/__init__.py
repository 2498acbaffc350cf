"""The PostgreSQL database backend: Django's, with a cheaper health check of persistent connections (see base)."""
