"""The tuning database: what the tuner learned, per device, kernel version and graph class.

Open it with :class:`Store` (or :func:`open_store`); everything goes in and comes out as the
plain records below, never as SQLAlchemy objects.
"""

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
from .store import ENV_VAR, SCHEMA_VERSION, Store, default_path, default_url, open_store

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "BestRecord",
    "DeviceRecord",
    "KernelVersionRecord",
    "RunKey",
    "RunRecord",
    "RunStatus",
    "Store",
    "TrialRecord",
    "TrialStatus",
    "default_path",
    "default_url",
    "open_store",
]
