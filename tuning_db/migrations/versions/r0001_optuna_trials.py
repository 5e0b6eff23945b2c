"""The project's tables beside Optuna's: trials live in Optuna studies.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sssp_devices",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, index=True),
        sa.Column("uuid", sa.String(100), nullable=False, unique=True),
        sa.Column("compute_capability", sa.String(16), nullable=False),
        sa.Column("sm_count", sa.Integer, nullable=False),
        sa.Column("driver_version", sa.String(64), nullable=False),
        sa.Column("cuda_version", sa.String(64), nullable=False),
    )
    op.create_table(
        "sssp_kernel_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("digest", sa.String(128), nullable=False, index=True),
        sa.Column("compile_options", sa.String(1000), nullable=False),
        sa.UniqueConstraint("digest", "compile_options"),
    )
    op.create_table(
        "sssp_graph_classes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("size", sa.String(16), nullable=False),
        sa.Column("degree", sa.String(16), nullable=False),
        sa.UniqueConstraint("size", "degree"),
    )
    op.create_table(
        "sssp_tuning_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "device_id", sa.Integer, sa.ForeignKey("sssp_devices.id"), nullable=False, index=True
        ),
        sa.Column(
            "kernel_version_id",
            sa.Integer,
            sa.ForeignKey("sssp_kernel_versions.id"),
            nullable=False,
        ),
        sa.Column(
            "graph_class_id", sa.Integer, sa.ForeignKey("sssp_graph_classes.id"), nullable=False
        ),
        sa.Column("algorithm", sa.String(32), nullable=False),
        sa.Column("variant", sa.String(32), nullable=False),
        sa.Column("kernel", sa.String(16), nullable=False),
        sa.Column("strategy", sa.String(64), nullable=False),
        sa.Column("instance", sa.String(500), nullable=False),
        sa.Column("replay", sa.Boolean, nullable=False),
        sa.Column("budget", sa.Integer, nullable=True),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("wall_seconds", sa.Float, nullable=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "sssp_best_configs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "device_id", sa.Integer, sa.ForeignKey("sssp_devices.id"), nullable=False, index=True
        ),
        sa.Column(
            "kernel_version_id",
            sa.Integer,
            sa.ForeignKey("sssp_kernel_versions.id"),
            nullable=False,
        ),
        sa.Column(
            "graph_class_id", sa.Integer, sa.ForeignKey("sssp_graph_classes.id"), nullable=False
        ),
        sa.Column("algorithm", sa.String(32), nullable=False),
        sa.Column("variant", sa.String(32), nullable=False),
        *(
            sa.Column(f"{prefix}{k}_label", sa.String(32), nullable=False)
            for prefix in ("", "tuned_")
            for k in ("relax", "min", "update")
        ),
        sa.Column("tuned_median_ms", sa.Float, nullable=False),
        sa.Column("default_median_ms", sa.Float, nullable=False),
        sa.Column("speedup", sa.Float, nullable=False),
        sa.Column("n_sources", sa.Integer, nullable=False),
        sa.Column("kept_default", sa.Boolean, nullable=False),
        sa.Column("replay", sa.Boolean, nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("sssp_tuning_runs.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint(
            "device_id", "kernel_version_id", "graph_class_id", "algorithm", "variant"
        ),
    )


def downgrade() -> None:
    for table in (
        "sssp_best_configs",
        "sssp_tuning_runs",
        "sssp_graph_classes",
        "sssp_kernel_versions",
        "sssp_devices",
    ):
        op.drop_table(table)
