"""What can be tuned, per kernel: the search spaces of :mod:`tuning_db.space`.

The definition lives in the tuning database's package, which rebuilds stored trials' Optuna
distributions from it and may not import the tuner (layers point down); the tuner reads it
under this name.
"""

from tuning_db.space import (
    ALL_BLOCKS,
    PAPER_BLOCKS,
    SCOPES,
    Param,
    configs,
    from_config,
    params,
    size,
    to_config,
    tune_params,
)

__all__ = [
    "ALL_BLOCKS",
    "PAPER_BLOCKS",
    "SCOPES",
    "Param",
    "configs",
    "from_config",
    "params",
    "size",
    "to_config",
    "tune_params",
]
