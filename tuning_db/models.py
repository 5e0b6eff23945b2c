"""SQLAlchemy 2 typed models of the tuning database.

This is the only module that defines ORM models; only the store's modules import it: the rest of
the project sees the plain records of :mod:`tuning_db.records`.

The trials themselves are not here: they live in Optuna studies (Optuna's own tables, through its
RDB storage) in the same database. Every table name here starts with ``sssp_`` so the two share a
file or a PostgreSQL schema; Optuna keeps its Alembic revision in ``alembic_version``, ours is in
:data:`VERSION_TABLE`. Schema changes go through the migrations in ``tuning_db/migrations``.

Timestamps are stored and returned as timezone-aware UTC (:class:`UTCDateTime`), on SQLite too,
where the column itself has no time zone.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

VERSION_TABLE = "sssp_alembic_version"
"""Our Alembic version table (Optuna's is ``alembic_version``)."""

LEGACY_SCHEMA_TABLE = "sssp_schema"
"""Where databases of schema 1 (trials in the project's own tables) kept their version."""


def utcnow() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timestamp that goes in as any aware datetime and comes out as aware UTC.

    Naive datetimes are taken to be UTC already (that is what the project writes everywhere).
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value
        # SQLite would keep the wall-clock digits and drop the offset: store UTC digits.
        return value.astimezone(dt.UTC).replace(tzinfo=None)

    def process_result_value(
        self, value: dt.datetime | None, dialect: Dialect
    ) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)


class Base(DeclarativeBase):
    """Declarative base of every tuning-database table."""


class Device(Base):
    """A GPU, identified by its UUID (two H200s of one host are two devices)."""

    __tablename__ = "sssp_devices"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    uuid: Mapped[str] = mapped_column(String(100), unique=True)
    compute_capability: Mapped[str] = mapped_column(String(16))
    sm_count: Mapped[int] = mapped_column(Integer)
    driver_version: Mapped[str] = mapped_column(String(64))
    cuda_version: Mapped[str] = mapped_column(String(64))


class KernelVersion(Base):
    """The exact kernel sources (digest) together with the compile options of every config."""

    __tablename__ = "sssp_kernel_versions"
    __table_args__ = (UniqueConstraint("digest", "compile_options"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(128), index=True)
    compile_options: Mapped[str] = mapped_column(String(1000), default="")


class GraphClassRow(Base):
    """A (size, degree, diameter) graph class such as ``49k``/``deg200``/``lowdiam``."""

    __tablename__ = "sssp_graph_classes"
    __table_args__ = (
        UniqueConstraint("size", "degree", "diameter", name="uq_sssp_graph_classes_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    size: Mapped[str] = mapped_column(String(16))
    degree: Mapped[str] = mapped_column(String(16))
    diameter: Mapped[str] = mapped_column(String(16), default="lowdiam", server_default="lowdiam")


class TuningRun(Base):
    """One tuning session of one (device, kernel version, graph class, algorithm, variant).

    Its trials are the Optuna studies named by :func:`tuning_db.studies.study_name`, one per
    kernel.
    """

    __tablename__ = "sssp_tuning_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    device_id: Mapped[int] = mapped_column(ForeignKey("sssp_devices.id"), index=True)
    kernel_version_id: Mapped[int] = mapped_column(ForeignKey("sssp_kernel_versions.id"))
    graph_class_id: Mapped[int] = mapped_column(ForeignKey("sssp_graph_classes.id"))
    algorithm: Mapped[str] = mapped_column(String(32))
    variant: Mapped[str] = mapped_column(String(32))
    kernel: Mapped[str] = mapped_column(String(16))
    strategy: Mapped[str] = mapped_column(String(64))
    instance: Mapped[str] = mapped_column(String(500), default="")
    replay: Mapped[bool] = mapped_column(Boolean, default=False)
    budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    seed: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), index=True)
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    wall_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    owner: Mapped[str] = mapped_column(String(200), default="")
    """``host:pid`` of the worker that holds the run while it is ``running``."""
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """Renewed by the worker holding the run; a stale one lets another worker take it over."""

    device: Mapped[Device] = relationship(lazy="joined")
    kernel_version: Mapped[KernelVersion] = relationship(lazy="joined")
    graph_class: Mapped[GraphClassRow] = relationship(lazy="joined")


class TrialSlot(Base):
    """A configuration's place in a run: one row per (run, kernel, configuration) stored in the
    run's Optuna study, written in its own transaction just before the trial.

    Optuna's tables have no key that a configuration could be unique in, so this table holds the
    unique key: a second measurement of a configuration in one run (two processes that both
    believe they hold the run) fails on it instead of becoming a second trial. Trials stored
    before revision 0003 have no slot; the search skips them by their Optuna record.
    """

    __tablename__ = "sssp_trial_slots"
    __table_args__ = (
        UniqueConstraint("run_id", "kernel", "config", name="uq_sssp_trial_slots_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("sssp_tuning_runs.id", ondelete="CASCADE"))
    kernel: Mapped[str] = mapped_column(String(16))
    config: Mapped[str] = mapped_column(String(32))
    """The configuration's label (``KernelConfig.label``)."""
    owner: Mapped[str] = mapped_column(String(200), default="")
    """``host:pid`` of the process that measured it (empty for imported trials)."""
    stored_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class BestConfig(Base):
    """The configuration ``solve(tuned=True)`` uses, with the end-to-end check behind it."""

    __tablename__ = "sssp_best_configs"
    __table_args__ = (
        UniqueConstraint(
            "device_id", "kernel_version_id", "graph_class_id", "algorithm", "variant"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    device_id: Mapped[int] = mapped_column(ForeignKey("sssp_devices.id"), index=True)
    kernel_version_id: Mapped[int] = mapped_column(ForeignKey("sssp_kernel_versions.id"))
    graph_class_id: Mapped[int] = mapped_column(ForeignKey("sssp_graph_classes.id"))
    algorithm: Mapped[str] = mapped_column(String(32))
    variant: Mapped[str] = mapped_column(String(32))
    relax_label: Mapped[str] = mapped_column(String(32))
    min_label: Mapped[str] = mapped_column(String(32))
    update_label: Mapped[str] = mapped_column(String(32))
    tuned_relax_label: Mapped[str] = mapped_column(String(32))
    tuned_min_label: Mapped[str] = mapped_column(String(32))
    tuned_update_label: Mapped[str] = mapped_column(String(32))
    tuned_median_ms: Mapped[float] = mapped_column(Float)
    default_median_ms: Mapped[float] = mapped_column(Float)
    speedup: Mapped[float] = mapped_column(Float)
    n_sources: Mapped[int] = mapped_column(Integer)
    kept_default: Mapped[bool] = mapped_column(Boolean)
    replay: Mapped[bool] = mapped_column(Boolean, default=False)
    options: Mapped[str] = mapped_column(Text, default="{}")
    """JSON object of the structural choices (loop mechanism, mapping, delta, ...)."""
    chosen_algorithm: Mapped[str] = mapped_column(String(32))
    """The algorithm that runs (``algorithm`` is the search's, ``"auto"`` included)."""
    delta_scale: Mapped[float | None] = mapped_column(Float, nullable=True)
    """Near-far's Δ as a multiple of its default rule; NULL for the other algorithms."""
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("sssp_tuning_runs.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    device: Mapped[Device] = relationship(lazy="joined")
    kernel_version: Mapped[KernelVersion] = relationship(lazy="joined")
    graph_class: Mapped[GraphClassRow] = relationship(lazy="joined")
