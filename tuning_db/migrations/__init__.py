"""Alembic migrations of the project's own tables (version table ``sssp_alembic_version``)."""
