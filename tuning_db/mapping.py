"""Row <-> record conversion: the only place where ORM rows and the plain records meet.

Rows may have been edited by hand: a value that makes no valid record is reported as a
:class:`sssp.errors.StoreError` naming the table, the row and the value, never as a bare
``ValueError`` from deep inside a record's validation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from sssp.classes import GraphClass
from sssp.config import LaunchConfig
from sssp.errors import StoreError

from .models import BestConfig, Device, GraphClassRow, KernelVersion, TuningRun
from .records import BestRecord, DeviceRecord, KernelVersionRecord, RunKey, RunRecord, RunStatus


@contextmanager
def _row(table: str, row_id: int) -> Iterator[None]:
    try:
        yield
    except (ValueError, TypeError, KeyError) as err:
        # ConfigError, UnknownClassError and json.JSONDecodeError are ValueErrors too.
        raise StoreError(f"{table} row {row_id} holds an invalid value: {err}") from err


def device_record(row: Device) -> DeviceRecord:
    return DeviceRecord(
        name=row.name,
        uuid=row.uuid,
        compute_capability=row.compute_capability,
        sm_count=row.sm_count,
        driver_version=row.driver_version,
        cuda_version=row.cuda_version,
    )


def kernel_version_record(row: KernelVersion) -> KernelVersionRecord:
    return KernelVersionRecord(digest=row.digest, compile_options=row.compile_options)


def class_record(row: GraphClassRow) -> GraphClass:
    with _row(GraphClassRow.__tablename__, row.id):
        return GraphClass(row.size, row.degree, row.diameter)


def run_record(row: TuningRun) -> RunRecord:
    with _row(TuningRun.__tablename__, row.id):
        key = RunKey(
            device=device_record(row.device),
            kernel_version=kernel_version_record(row.kernel_version),
            graph_class=class_record(row.graph_class),
            algorithm=row.algorithm,
            variant=row.variant,
            kernel=row.kernel,
            strategy=row.strategy,
            instance=row.instance,
            replay=row.replay,
        )
        return RunRecord(
            id=row.id,
            key=key,
            status=RunStatus(row.status),
            budget=row.budget,
            seed=row.seed,
            started_at=row.started_at,
            finished_at=row.finished_at,
            wall_seconds=row.wall_seconds,
        )


def launch(relax: str, min_: str, update: str, options: dict | None = None) -> LaunchConfig:
    """A stored configuration: the three kernels' labels and the structural options (loop
    mechanism, ...). Records without options describe the paper's loop (``loop="legacy"``)."""
    return LaunchConfig.from_parts({"relax": relax, "min": min_, "update": update}, options)


def options_json(options: object) -> str:
    return json.dumps(dict(options), sort_keys=True)  # type: ignore[call-overload]


def parse_options(text: str) -> dict[str, str | int | float]:
    value = json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError(f"options {text!r} is not a JSON object")
    return value


def configs(
    config: tuple[str, str, str], tuned: tuple[str, str, str], options: dict
) -> tuple[LaunchConfig, LaunchConfig]:
    """(configuration in effect, the search's picks) from their relax/min/update labels and the
    record's options. The unprefixed options describe the first; a search that kept the default
    stores its own structural picks under ``tuned.``-prefixed keys, otherwise they are the same."""
    own = {k: v for k, v in options.items() if not k.startswith("tuned.")}
    picks = {k.removeprefix("tuned."): v for k, v in options.items() if k.startswith("tuned.")}
    return launch(*config, own), launch(*tuned, picks or own)


def best_record(row: BestConfig) -> BestRecord:
    with _row(BestConfig.__tablename__, row.id):
        options = parse_options(row.options)
        config, tuned = configs(
            (row.relax_label, row.min_label, row.update_label),
            (row.tuned_relax_label, row.tuned_min_label, row.tuned_update_label),
            options,
        )
        return BestRecord(
            device=device_record(row.device),
            kernel_version=kernel_version_record(row.kernel_version),
            graph_class=class_record(row.graph_class),
            algorithm=row.algorithm,
            variant=row.variant,
            config=config,
            tuned_config=tuned,
            tuned_median_ms=row.tuned_median_ms,
            default_median_ms=row.default_median_ms,
            speedup=row.speedup,
            n_sources=row.n_sources,
            kept_default=row.kept_default,
            replay=row.replay,
            run_id=row.run_id,
            updated_at=row.updated_at,
            options=options,
            chosen_algorithm=row.chosen_algorithm,
            delta_scale=row.delta_scale,
        )


def fill_best(row: BestConfig, best: BestRecord, run_id: int | None) -> None:
    row.relax_label = best.config.relax.label
    row.min_label = best.config.min.label
    row.update_label = best.config.update.label
    row.tuned_relax_label = best.tuned_config.relax.label
    row.tuned_min_label = best.tuned_config.min.label
    row.tuned_update_label = best.tuned_config.update.label
    row.tuned_median_ms = float(best.tuned_median_ms)
    row.default_median_ms = float(best.default_median_ms)
    row.speedup = float(best.speedup)
    row.n_sources = int(best.n_sources)
    row.kept_default = bool(best.kept_default)
    row.replay = bool(best.replay)
    row.options = options_json(best.options)
    row.chosen_algorithm = best.chosen_algorithm
    row.delta_scale = best.delta_scale
    row.run_id = run_id
    row.updated_at = best.updated_at
