"""Best configurations name what runs: ``chosen_algorithm`` and near-far's ``delta_scale``.

A record of ``tune engine --algorithm auto`` is keyed by the algorithm ``"auto"``; what the
search chose was kept only inside the JSON ``options`` (``"algorithm"``, ``"delta_scale"``).
The two become typed columns, filled from the options of every stored row: an ``"auto"`` row
without an ``"algorithm"`` option runs Crauser OUT (what the look-up ran for it), any other row
its own algorithm; near-far rows take their ``"delta_scale"`` option (1 when absent), the others
NULL. The options keep their keys, which older code reads.

Revision ID: 0004
Revises: 0003
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TABLE = "sssp_best_configs"


def _choice(algorithm: str, options_text: str | None) -> tuple[str, float | None]:
    try:
        options = json.loads(options_text or "{}")
    except ValueError:
        options = {}
    if not isinstance(options, dict):
        options = {}
    chosen = str(options.get("algorithm", "crauser")) if algorithm == "auto" else algorithm
    scale = float(options.get("delta_scale", 1)) if chosen == "near-far" else None
    return chosen, scale


def upgrade() -> None:
    bind = op.get_bind()
    # Added nullable, filled, then made NOT NULL: SQLite cannot add a NOT NULL column without
    # a default, and no default is right for every row.
    with op.batch_alter_table(TABLE) as batch:
        batch.add_column(sa.Column("chosen_algorithm", sa.String(32), nullable=True))
        batch.add_column(sa.Column("delta_scale", sa.Float, nullable=True))
    table = sa.table(
        TABLE,
        sa.column("id", sa.Integer),
        sa.column("algorithm", sa.String),
        sa.column("options", sa.Text),
        sa.column("chosen_algorithm", sa.String),
        sa.column("delta_scale", sa.Float),
    )
    rows = bind.execute(sa.select(table.c.id, table.c.algorithm, table.c.options)).all()
    for row_id, algorithm, options_text in rows:
        chosen, scale = _choice(algorithm, options_text)
        bind.execute(
            table.update()
            .where(table.c.id == row_id)
            .values(chosen_algorithm=chosen, delta_scale=scale)
        )
    with op.batch_alter_table(TABLE) as batch:
        batch.alter_column("chosen_algorithm", existing_type=sa.String(32), nullable=False)


def downgrade() -> None:  # pragma: no cover - the project never downgrades
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("delta_scale")
        batch.drop_column("chosen_algorithm")
