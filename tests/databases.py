"""Databases for the storage tests: SQLite in memory, SQLite files, and PostgreSQL.

PostgreSQL comes from ``$SSSP_TEST_POSTGRES_URL`` (``.ci/run`` starts a server with
``scripts/ci-postgres.sh`` and sets it). Without it the PostgreSQL cases are skipped with that
reason, except in CI (``CI=true``), where they fail: CI must never skip them silently. Each test
gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_ENV = "SSSP_TEST_POSTGRES_URL"
KINDS = ("memory", "file", "postgresql")


def postgres_base() -> str:
    url = os.environ.get(PG_ENV, "").strip()
    if not url:
        reason = f"no PostgreSQL server: ${PG_ENV} is not set (scripts/ci-postgres.sh starts one)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests")
        pytest.skip(reason)
    return url


@contextmanager
def fresh_postgres() -> Iterator[str]:
    """The URL of an empty schema of the test server (dropped on exit)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(postgres_base())
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {name}"))
    try:
        yield base.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
            hide_password=False
        )
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {name} CASCADE"))
        admin.dispose()


@contextmanager
def database(kind: str, tmp_path) -> Iterator[str]:
    """A URL of an empty database of ``kind`` (one of :data:`KINDS`)."""
    if kind == "memory":
        yield "sqlite://"
    elif kind == "file":
        yield f"sqlite:///{tmp_path / 'tuning.sqlite'}"
    else:
        with fresh_postgres() as url:
            yield url
