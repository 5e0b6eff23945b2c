"""What the parts of :class:`tuning_db.Store` (runs, trials, best configurations) take from the
store, declared once for the type checker: :class:`~tuning_db.store.Store` defines each of them.

Declared under ``TYPE_CHECKING`` only, so that a part that is used without the store fails with
an ``AttributeError`` instead of running a stub.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import contextlib
    from collections.abc import Callable

    import optuna
    from sqlalchemy.engine import URL
    from sqlalchemy.orm import Session

    from sssp.classes import GraphClass

    from .models import Device, GraphClassRow, KernelVersion
    from .records import DeviceRecord, KernelVersionRecord, RunRecord

_T = TypeVar("_T")


class StoreBase:
    """The base of the store's parts: the store's state and plumbing that they use."""

    if TYPE_CHECKING:
        read_only: bool
        _url: URL
        _where: str

        @property
        def storage(self) -> optuna.storages.RDBStorage: ...

        def _transact(self, work: Callable[[Session], _T], *, retries: int = 1) -> _T: ...

        def _optuna(self) -> contextlib.AbstractContextManager[None]: ...

        @staticmethod
        def _device_row(session: Session, rec: DeviceRecord, *, update: bool) -> Device: ...

        @staticmethod
        def _kernel_version_row(session: Session, rec: KernelVersionRecord) -> KernelVersion: ...

        @staticmethod
        def _class_row(session: Session, gc: GraphClass) -> GraphClassRow: ...

        # Of the other parts: runs (tuning_db.runs) and trials (tuning_db.trials).
        def run(self, run_id: int) -> RunRecord: ...

        def reclaim_run(self, run: RunRecord) -> int: ...
