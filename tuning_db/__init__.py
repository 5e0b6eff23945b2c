"""The tuning database: what the tuner learned, per device, kernel version and graph class.

Open it with :class:`Store` (or :func:`open_store`); everything goes in and comes out as the
plain records below, never as SQLAlchemy objects. Trials are Optuna trials in named studies of
the same database (:mod:`tuning_db.studies`).
"""

from .connection import ENV_VAR, as_url, default_path, default_url
from .lookup import tuned_records
from .records import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    RunRecord,
    RunStatus,
    TrialRecord,
    TrialStatus,
)
from .store import Store, open_store

__all__ = [
    "ENV_VAR",
    "BestRecord",
    "DeviceRecord",
    "KernelVersionRecord",
    "RunKey",
    "RunRecord",
    "RunStatus",
    "Store",
    "TrialRecord",
    "TrialStatus",
    "as_url",
    "default_path",
    "default_url",
    "open_store",
    "tuned_records",
]
