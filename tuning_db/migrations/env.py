"""Alembic environment: run on the connection the store hands over (never from a config file)."""

from alembic import context

from tuning_db.models import VERSION_TABLE, Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,  # Optuna's own revision lives in ``alembic_version``
    render_as_batch=True,  # SQLite alters tables by copying them
)
with context.begin_transaction():
    context.run_migrations()
