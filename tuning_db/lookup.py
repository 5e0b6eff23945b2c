"""The look-up behind ``solve(tuned=True)``: never fails a solve because of the database."""

from __future__ import annotations

import logging
import warnings

from sssp.errors import StoreError

from .records import BestRecord

logger = logging.getLogger(__name__)


def tuned_records(url: str | None, device_name: str) -> list[BestRecord]:
    """The stored best configurations of ``device_name`` in the database at ``url`` (the
    default database when ``None``).

    A database that cannot be used (missing, unreachable, damaged, of another schema) gives
    ``[]`` and a warning naming it, so the caller falls back to the default configuration. A
    read-only database is read as usual; a look-up never creates a named database file.
    """
    from .store import Store

    try:
        with Store(url, create=False) as store:
            return store.all_best(device_name=device_name)
    except StoreError as err:
        msg = f"tuned configuration unavailable, using the default: {err}"
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return []
