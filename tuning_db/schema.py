"""Schema versions of the project's tables, through Alembic (our version table is
``sssp_alembic_version``, so Optuna's ``alembic_version`` in the same database is left alone)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from sqlalchemy import inspect

from .models import LEGACY_SCHEMA_TABLE as SCHEMA_V1_TABLE
from .models import VERSION_TABLE

UPGRADE_COMMAND = "tune upgrade --db URL"

# Optuna's own tables: a database that holds only these is not "foreign", so studies and tuning
# results share one file (our tables are all prefixed ``sssp_``).
OPTUNA_TABLES = frozenset(
    {
        "alembic_version",
        "studies",
        "study_directions",
        "study_system_attributes",
        "study_user_attributes",
        "trial_heartbeats",
        "trial_intermediate_values",
        "trial_params",
        "trial_system_attributes",
        "trial_user_attributes",
        "trial_values",
        "trials",
        "version_info",
    }
)


def _config(connection: Any) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("tuning_db") / "migrations"))
    cfg.attributes["connection"] = connection
    return cfg


@cache
def head_revision() -> str:
    """The revision this code writes."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config(None)).get_current_head()
    if head is None:  # pragma: no cover - the package ships its migrations
        raise RuntimeError("tuning_db ships no migrations")
    return head


def known_revisions() -> frozenset[str]:
    from alembic.script import ScriptDirectory

    return frozenset(
        s.revision for s in ScriptDirectory.from_config(_config(None)).walk_revisions()
    )


def tables(connection: Any) -> set[str]:
    return set(inspect(connection).get_table_names())


def current_revision(connection: Any) -> str | None:
    """Our revision of the database (``None`` when it has no version table)."""
    from alembic.runtime.migration import MigrationContext

    ctx = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return ctx.get_current_revision()


def upgrade(connection: Any) -> None:
    """Bring the project's tables to :func:`head_revision` (creating them in a new database)."""
    from alembic import command

    command.upgrade(_config(connection), "head")


class Outdated(str):
    """The reason returned for a database that :func:`upgrade` brings up to date."""


class SchemaV1(Outdated):
    """The reason returned for a database of schema 1 (see :mod:`tuning_db.schema_v1`)."""


Legacy = SchemaV1  # the former name, still used by tuning_db.store


def check(connection: Any, where: str) -> str | None:
    """The reason the project's tables cannot be used as they are, or ``None``.

    Returns ``"new"`` for a database that has none of our tables (and no foreign ones), and an
    :class:`Outdated` reason for one at an older revision.
    """
    names = tables(connection)
    if VERSION_TABLE in names:
        rev = current_revision(connection)
        if rev == head_revision():
            return None
        if rev in known_revisions():
            return Outdated(
                f"{where} holds schema revision {rev}; this code needs {head_revision()}: "
                f"upgrade it with `{UPGRADE_COMMAND}`"
            )
        return (
            f"{where} holds schema revision {rev!r}, unknown to this code (written by a newer "
            "sssp-tune?): open it with that release"
        )
    if SCHEMA_V1_TABLE in names:
        return SchemaV1(
            f"{where} was written by schema 1 of sssp-tune (trials in its own tables): convert "
            f"it with `{UPGRADE_COMMAND}` (its trials move to Optuna studies)"
        )
    foreign = sorted(n for n in names - OPTUNA_TABLES if not n.startswith("sssp_"))
    if foreign or any(n.startswith("sssp_") for n in names):
        shown = ", ".join(sorted(names - OPTUNA_TABLES)[:5])
        return (
            f"{where} belongs to another application (tables {shown}; no {VERSION_TABLE} "
            "table): point --db or $SSSP_TUNING_DB at a new file"
        )
    return "new"
