"""Trial slots: the unique key (run, kernel, configuration) of a stored measurement.

Optuna's tables cannot hold that key, so a second measurement of one configuration in one run
was only unlikely (the search skipped what it had read), not impossible. The new table
``sssp_trial_slots`` holds one row per configuration a run stores, written just before its
trial; two processes that both believe they hold a run cannot both store a configuration.
Trials stored before this revision have no slot; the search still skips them by their Optuna
record, as before.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sssp_trial_slots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("sssp_tuning_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("kernel", sa.String(16), nullable=False),
        sa.Column("config", sa.String(32), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "kernel", "config", name="uq_sssp_trial_slots_key"),
    )


def downgrade() -> None:  # pragma: no cover - the project never downgrades
    op.drop_table("sssp_trial_slots")
