"""What the parts of :class:`tuning_db.Store` (runs, trials, best configurations) take from the
store, declared once for the type checker: :class:`~tuning_db.store.Store` defines each of them.

Declared under ``TYPE_CHECKING`` only, so that a part that is used without the store fails with
an ``AttributeError`` instead of running a stub.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    import optuna
    from sqlalchemy.orm import Session

    from .records import RunRecord

_T = TypeVar("_T")


class StoreBase:
    """The base of the store's parts: the store's state and plumbing that they use."""

    if TYPE_CHECKING:
        read_only: bool
        where: str
        backend: str

        @property
        def storage(self) -> optuna.storages.RDBStorage: ...

        def transact(self, work: Callable[[Session], _T], *, retries: int = 1) -> _T: ...

        # Of the other parts: runs (tuning_db.runs) and trials (tuning_db.trials).
        def run(self, run_id: int) -> RunRecord: ...

        def reclaim_run(self, run: RunRecord) -> int: ...
