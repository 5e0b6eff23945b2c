"""Graph classes gain a third key, the diameter class (``lowdiam`` or ``highdiam``).

Every class stored before is a low-diameter one: the tuning classes were the paper's random
graphs, and a class was keyed by size and degree only. The unique key (size, degree) becomes
(size, degree, diameter).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TABLE = "sssp_graph_classes"
NEW_KEY = "uq_sssp_graph_classes_key"
# Revision 0001 left the (size, degree) constraint unnamed; SQLite's copy-and-move needs a name
# to drop it by, which this convention gives it while the table is reflected.
NAMING = {"uq": "uq_%(table_name)s_%(column_0_N_name)s"}
OLD_KEY_SQLITE = "uq_sssp_graph_classes_size_degree"


def _old_key_name(bind: sa.engine.Connection) -> str:
    for uc in sa.inspect(bind).get_unique_constraints(TABLE):
        # A constraint without a name cannot be dropped by name: it is not one to replace.
        if sorted(uc["column_names"]) == ["degree", "size"] and uc["name"] is not None:
            return uc["name"]
    raise RuntimeError(f"{TABLE} has no unique (size, degree) constraint to replace")


def upgrade() -> None:
    bind = op.get_bind()
    column = sa.Column("diameter", sa.String(16), nullable=False, server_default="lowdiam")
    if bind.dialect.name == "sqlite":
        # SQLite alters a table by copying it (Store.upgrade runs this with foreign keys off and
        # checks every reference before the commit).
        with op.batch_alter_table(TABLE, recreate="always", naming_convention=NAMING) as batch:
            batch.add_column(column)
            batch.drop_constraint(OLD_KEY_SQLITE, type_="unique")
            batch.create_unique_constraint(NEW_KEY, ["size", "degree", "diameter"])
    else:
        old = _old_key_name(bind)
        op.add_column(TABLE, column)
        op.drop_constraint(old, TABLE, type_="unique")
        op.create_unique_constraint(NEW_KEY, TABLE, ["size", "degree", "diameter"])


def downgrade() -> None:  # pragma: no cover - the project never downgrades
    raise NotImplementedError(
        "revision 0002 is not reversible: high-diameter classes have no place in 0001"
    )
