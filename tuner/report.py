"""Table-1-style reports of stored tuning results, in Markdown, CSV, LaTeX and HTML.

Every function here is pure: it takes a list of :class:`tuning_db.records.BestRecord` (as the
store returns them) and returns the rendered text; nothing reads the database or prints.

:func:`table1`
    The paper's Table 1: rows are graph size × kernel (``24k relax``, ``24k min``, ...), columns
    are degree class × GPU (``deg2 H200``, ``deg20 H200``, ...), cells are the tuned per-kernel
    picks in the paper's notation (``192-A``: 192 threads per block, augmented L1).
:func:`speedup_table`
    Per class and GPU: default and tuned end-to-end median times, the speedup and whether the
    default was kept.
:func:`show_table`
    A flat listing of every record: what ``solve(tuned=True)`` runs and what the search picked.

Each builds one intermediate :class:`Table` (title, header, rows, notes) and renders it with
:func:`render`, so the four formats always agree on content.

:func:`long_table`
    The tidy export: one row per stored record (keyed by GPU, kernel version, full graph class,
    algorithm and variant), numbers as numbers, with the device, the measurement time and the
    results' provenance as columns. It is what ``tune report --format
    csv`` writes; ``pandas.read_csv`` reads it as is.

Every report says where its numbers come from: :func:`about` gives the lines (device, date of
the measurements, recorded or measured now, when the report was made) that :func:`render` adds
after the last table. Markdown, LaTeX and HTML are complete documents (HTML with its UTF-8
charset declared); CSV is exactly one table, without comment lines.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import html
import io
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sssp.classes import DEGREE_CLASSES, PAPER_DEGREES, PAPER_SIZES, SIZE_LABELS
from sssp.config import KERNELS, LaunchConfig
from sssp.errors import TuningError
from tuning_db.records import (
    MEASURED_ON,
    BestRecord,
    device_name_matches,
    is_engine2,
    short_device_name,
)

if TYPE_CHECKING:
    from .figures import Figure

log = logging.getLogger(__name__)

__all__ = [
    "FORMATS",
    "KEPT_DEFAULT_MARK",
    "KEPT_DEFAULT_NOTE",
    "LONG_HEADER",
    "LONG_KEY",
    "MISSING",
    "REPLAY_LABEL",
    "RESULTS",
    "Table",
    "about",
    "latex_escape",
    "long_table",
    "long_table_data",
    "render",
    "select",
    "short_device_name",
    "show_table",
    "speedup_table",
    "speedup_table_data",
    "table1",
    "table1_data",
]

FORMATS = ("md", "csv", "latex", "html")
MISSING = "—"
KEPT_DEFAULT_MARK = "*"
KEPT_DEFAULT_NOTE = (
    "tuned configuration did not beat the default end to end; solve(tuned=True) runs the default"
)
REPLAY_LABEL = "(replayed from recorded measurements)"
TIMES = "×"

RESULTS = {
    "recorded": "recorded, read from the tuning database{database}; not measured by this command",
    "measured": "measured now, by this command",
    "replayed": "replayed now from recorded Kernel Tuner measurements (no GPU was timed)",
}
"""What :func:`about` says about the results, by the ``results`` argument (``{database}``: the
database's URL, where known)."""


@dataclass(frozen=True)
class Table:
    """A rendered-format-independent table: plain strings only, escaped at render time.

    Attributes
    ----------
    title : str
        One line: Markdown's line above the table, CSV's leading ``#`` comment, the LaTeX and
        HTML caption.
    header : tuple of str
    rows : tuple of tuple of str
        Each as long as ``header``.
    notes : tuple of str
        Footnotes, shown after the table (before it in CSV, as ``#`` comments).
    """

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.header):
                raise ValueError(
                    f"row {i} has {len(row)} cells but the header has {len(self.header)}"
                )


# -- helpers ------------------------------------------------------------------------------------
def _device_headers(names: Iterable[str]) -> dict[str, str]:
    """Short names for column headers; full names where two GPUs would share a short one."""
    names = sorted(set(names))
    shorts = {n: short_device_name(n) for n in names}
    counts: dict[str, int] = {}
    for s in shorts.values():
        counts[s] = counts.get(s, 0) + 1
    return {n: (s if counts[s] == 1 else n) for n, s in shorts.items()}


def _size_key(size: str) -> int:
    return SIZE_LABELS.get(size, 0)


def _degree_key(degree: str) -> int:
    return DEGREE_CLASSES.get(degree, 0)


def _record_sort_key(r: BestRecord) -> tuple:
    return (
        r.device.name,
        _size_key(r.graph_class.size),
        _degree_key(r.graph_class.degree),
        r.graph_class.diameter != "lowdiam",
        is_engine2(r),
        r.algorithm,
        r.variant,
        r.kernel_version.digest,
    )


def select(
    records: Iterable[BestRecord],
    *,
    device_name: str | None = None,
    algorithm: str | None = None,
    variant: str | None = None,
) -> list[BestRecord]:
    """Records matching the filters. ``device_name`` matches the full or short GPU name, any
    case."""
    records = list(records)
    for r in records:
        if not isinstance(r, BestRecord):
            raise TuningError(f"a report takes BestRecord values, got {type(r).__name__}")
    out = records
    if device_name is not None:
        out = [r for r in out if device_name_matches(r.device.name, device_name)]
        if not out and records:
            known = ", ".join(sorted({r.device.name for r in records}))
            raise TuningError(
                f"no tuning results for device {device_name!r}: known devices are {known}"
            )
    if algorithm is not None:
        out = [r for r in out if r.algorithm == algorithm]
    if variant is not None:
        out = [r for r in out if r.variant == variant]
    return out


def engine_label(r: BestRecord) -> str:
    return f"engine 2 ({r.tuned_config.loop})" if is_engine2(r) else "paper kernels"


def _newest(
    records: Iterable[BestRecord], key: Callable[[BestRecord], tuple]
) -> dict[tuple, BestRecord]:
    """One record per key: the most recently updated, since the store may hold several (other
    kernel versions, other GPUs of the same model, other algorithm variants)."""
    out: dict[tuple, BestRecord] = {}
    for r in records:
        k = key(r)
        old = out.get(k)
        if old is None or r.updated_at > old.updated_at:
            if old is not None:
                log.debug("several results for %s; showing the newest (%s)", k, r.updated_at)
            out[k] = r
    return out


def _title(base: str, records: Sequence[BestRecord]) -> str:
    return f"{base} {REPLAY_LABEL}" if any(r.replay for r in records) else base


def _speedup(value: float) -> str:
    # One format everywhere: two decimals ("1.00×", never "1×" beside "1.89×").
    return f"{value:.2f}{TIMES}"


def _ms(value: float) -> str:
    return f"{value:.3f}"


def _check_fmt(fmt: str) -> None:
    if fmt not in FORMATS:
        raise TuningError(f"unknown report format {fmt!r}: expected one of {', '.join(FORMATS)}")


def _when(t: dt.datetime) -> str:
    """A UTC time to the minute, as every report writes it."""
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC)
    return t.strftime("%Y-%m-%d %H:%M UTC")


# -- where the numbers come from ----------------------------------------------------------------
def about(
    records: Iterable[BestRecord],
    *,
    results: str = "recorded",
    database: str | None = None,
    now: dt.datetime | None = None,
) -> tuple[str, ...]:
    """The provenance lines every report ends with: devices (with driver and CUDA versions),
    when the results were stored (for recorded results, when they were measured), whether they
    are recorded or measured now, and when the report was made.

    Parameters
    ----------
    records : iterable of BestRecord
        The records the report shows.
    results : {"recorded", "measured", "replayed"}
        ``"recorded"`` for results read from a database (``tune report``, ``tune show``);
        ``"measured"`` or ``"replayed"`` for the summary of the tuning that just ran.
    database : str, optional
        The database's URL (password hidden), named with recorded results.
    now : datetime, optional
        The report's time (default: the current UTC time).
    """
    if results not in RESULTS:
        raise TuningError(f"unknown results kind {results!r}: expected one of {', '.join(RESULTS)}")
    records = list(records)
    devices = sorted(
        {(r.device.name, r.device.driver_version, r.device.cuda_version) for r in records}
    )
    lines = ["device: " + "; ".join(f"{n} (driver {d}, CUDA {c})" for n, d, c in devices)]
    if records:
        first = min(r.updated_at for r in records)
        last = max(r.updated_at for r in records)
        span = _when(first) if _when(first) == _when(last) else f"{_when(first)} to {_when(last)}"
        lines.append(f"stored: {span}")
    lines.append("results: " + RESULTS[results].format(database=f" {database}" if database else ""))
    if any(r.replay for r in records) and results != "replayed":
        lines.append(f"results marked replay are {REPLAY_LABEL[1:-1]}")
    carried = sorted({r.measured_on for r in records if r.measured_on})
    if carried:
        lines.append(
            f"results with {MEASURED_ON}= were measured on older kernels ({', '.join(carried)}) "
            "and carried to these without re-measuring"
        )
    lines.append(f"report made: {_when(now or dt.datetime.now(dt.UTC))}")
    return tuple(lines)


# -- the reports --------------------------------------------------------------------------------
def table1_data(
    records: Iterable[BestRecord],
    *,
    device_name: str | None = None,
    algorithm: str | None = None,
    variant: str | None = None,
) -> Table:
    """The content of :func:`table1`, before rendering: the paper's kernels only (engine 2's
    searched configurations are in :func:`engine_table_data`)."""
    selected = [
        r
        for r in select(records, device_name=device_name, algorithm=algorithm, variant=variant)
        if not is_engine2(r)
    ]
    if not selected:
        raise TuningError(
            "no tuning results of the paper's kernels to report: tune run a graph class first"
        )
    cells = _newest(selected, lambda r: (r.device.name, r.graph_class.size, r.graph_class.degree))
    devices = _device_headers(r.device.name for r in selected)
    sizes = sorted(set(PAPER_SIZES) | {r.graph_class.size for r in selected}, key=_size_key)
    degrees = sorted(set(PAPER_DEGREES) | {r.graph_class.degree for r in selected}, key=_degree_key)
    columns = [(deg, dev) for deg in degrees for dev in devices]
    header = ("size", "kernel", *(f"{deg} {devices[dev]}" for deg, dev in columns))
    rows = []
    kept_shown = False
    for size in sizes:
        for kernel in KERNELS:
            row = [size, kernel]
            for deg, dev in columns:
                rec = cells.get((dev, size, deg))
                if rec is None:
                    row.append(MISSING)
                    continue
                label = rec.tuned_config.kernel(kernel).label
                if rec.kept_default:
                    label += KEPT_DEFAULT_MARK
                    kept_shown = True
                row.append(label)
            rows.append(tuple(row))
    notes = [f"{MISSING}: not tuned"] if any(MISSING in r for r in rows) else []
    if kept_shown:
        notes.insert(0, f"{KEPT_DEFAULT_MARK} {KEPT_DEFAULT_NOTE}")
    combos = sorted({f"{r.algorithm}/{r.variant}" for r in cells.values()})
    # No "Table 1:" in the title: LaTeX numbers captions itself ("Table 1: Table 1: ...").
    base = (
        "Tuned configuration (threads per block-L1 state) of each kernel per graph class and "
        f"GPU, as in the paper's Table 1, {', '.join(combos)}"
    )
    return Table(_title(base, list(cells.values())), header, tuple(rows), tuple(notes))


def table1(
    records: Iterable[BestRecord],
    *,
    fmt: str = "md",
    device_name: str | None = None,
    algorithm: str | None = None,
    variant: str | None = None,
    results: str = "recorded",
    database: str | None = None,
) -> str:
    """The paper's Table 1 from stored best configurations.

    Parameters
    ----------
    records : iterable of BestRecord
    fmt : {"md", "csv", "latex", "html"}
    device_name : str, optional
        Only this GPU (full name such as ``"NVIDIA H200"`` or short name ``"H200"``, any case).
    algorithm, variant : str, optional
        Only records of this algorithm / variant. Where several records fall into one cell, the
        most recently updated is shown.
    results, database : str
        Provenance, see :func:`about`.

    Returns
    -------
    str
        Rows: size × kernel (sizes in numeric order, the paper's three always present); columns:
        degree class (deg2, deg20, deg200, deg1000) × GPU (sorted by name). Cells: the search's
        per-kernel pick (``record.tuned_config``) as ``"192-A"``, marked ``*`` when the default
        was kept because the picks did not win end to end; ``—`` where nothing was tuned. The
        title says "(replayed from recorded measurements)" when any shown record was replayed.
        A complete document, ending with the :func:`about` lines (except CSV: the grid alone).

    Raises
    ------
    TuningError
        No records (after filtering), a device that matches none, or an unknown format.
    """
    _check_fmt(fmt)
    selected = select(records, device_name=device_name, algorithm=algorithm, variant=variant)
    table = table1_data(selected)
    shown = [r for r in selected if not is_engine2(r)]
    return render(table, fmt, about=about(shown, results=results, database=database))


def speedup_table_data(records: Iterable[BestRecord], *, device_name: str | None = None) -> Table:
    """The content of :func:`speedup_table`, before rendering."""
    selected = select(records, device_name=device_name, algorithm=None, variant=None)
    if not selected:
        raise TuningError("no tuning results to report: tune a graph class first")
    chosen = _newest(
        selected, lambda r: (r.device.name, r.graph_class, r.algorithm, r.variant, is_engine2(r))
    )
    ordered = sorted(
        chosen.values(),
        key=lambda r: (
            is_engine2(r),
            _size_key(r.graph_class.size),
            _degree_key(r.graph_class.degree),
            r.device.name,
            r.algorithm,
            r.variant,
        ),
    )
    header = (
        "class",
        "device",
        "engine",
        "algorithm",
        "default ms",
        "tuned ms",
        "speedup",
        "sources",
        "kept default",
        "replay",
    )
    rows = tuple(
        (
            str(r.graph_class),
            r.device.name,
            engine_label(r),
            f"{r.algorithm}/{r.variant}",
            _ms(r.default_median_ms),
            _ms(r.tuned_median_ms),
            _speedup(r.speedup),
            str(r.n_sources),
            "yes" if r.kept_default else "no",
            "replay" if r.replay else "",
        )
        for r in ordered
    )
    base = "End-to-end median solve time, default vs tuned launch configuration"
    return Table(_title(base, ordered), header, rows)


def engine_table_data(records: Iterable[BestRecord], *, device_name: str | None = None) -> Table:
    """Engine 2's searched configuration per class and GPU, beside Table 1: the structural
    choice (loop mechanism, blocks per SM, block-local limit) and the launch settings."""
    selected = [r for r in select(records, device_name=device_name) if is_engine2(r)]
    chosen = _newest(selected, lambda r: (r.device.name, r.graph_class, r.algorithm, r.variant))
    ordered = sorted(
        chosen.values(),
        key=lambda r: (
            _size_key(r.graph_class.size),
            _degree_key(r.graph_class.degree),
            r.device.name,
        ),
    )
    header = (
        "class",
        "device",
        "algorithm",
        "chosen",
        "loop",
        "relax",
        "settle",
        "blocks/SM",
        "local limit",
        "default ms",
        "tuned ms",
        "speedup",
        "kept default",
    )
    rows = tuple(
        (
            str(r.graph_class),
            r.device.name,
            f"{r.algorithm}/{r.variant}",
            _chosen(r),
            *_loop_cells(r.tuned_config),
            _ms(r.default_median_ms),
            _ms(r.tuned_median_ms),
            _speedup(r.speedup),
            "yes" if r.kept_default else "no",
        )
        for r in ordered
    )
    base = (
        "Engine 2: searched loop mechanism and launch settings per graph class, scored end to end"
    )
    return Table(_title(base, ordered), header, rows)


def _loop_cells(c: LaunchConfig) -> tuple[str, str, str, str, str]:
    """(loop, relax, settle, blocks per SM, block-local limit) of an engine-2 configuration. The
    last two belong to the persistent loop only ("-" elsewhere); the cluster loop shows its
    size ("cluster x16": at least 16 blocks; "cluster": the fewest that hold the graph) and
    "fused" when its blocks run local rounds on bands of the graph; the phast loop its core
    table ("phast core<=1024": the distances of the top levels of up to 1 024 nodes)."""
    loop = f"cluster x{c.cluster}" if c.loop == "cluster" and c.cluster else c.loop
    if c.loop == "cluster" and c.fuse:
        loop += " fused"
    if c.core:
        loop += f" core<={c.core}"
    persistent = c.loop == "persistent"
    return (
        loop,
        c.relax.label,
        c.update.label,
        str(c.blocks_per_sm or "max") if persistent else MISSING,
        str(c.local_limit) if persistent else MISSING,
    )


def _chosen(r: BestRecord) -> str:
    """The algorithm an "auto" (or near-far) search picked, with near-far's Δ scale; "-" for a
    record of one phase-synchronous algorithm."""
    opts = r.options
    algo = opts.get("tuned.algorithm", opts.get("algorithm"))
    if algo is None:
        return "-"
    scale = opts.get("tuned.delta_scale", opts.get("delta_scale"))
    return (
        f"{algo} (delta x{float(scale):g})"
        if algo == "near-far" and scale is not None
        else str(algo)
    )


def speedup_table(
    records: Iterable[BestRecord],
    *,
    fmt: str = "md",
    device_name: str | None = None,
    results: str = "recorded",
    database: str | None = None,
) -> str:
    """Default vs tuned end-to-end times per graph class and GPU.

    Parameters
    ----------
    records : iterable of BestRecord
    fmt : {"md", "csv", "latex", "html"}
    device_name : str, optional
        Only this GPU (full or short name).
    results, database : str
        Provenance, see :func:`about`.

    Returns
    -------
    str
        One row per class × GPU × algorithm/variant: default and tuned median ms, the speedup
        (default / tuned, two decimals and ``×``), number of sources, whether the default was
        kept, and "replay" for records built from recorded measurements.
    """
    _check_fmt(fmt)
    selected = select(records, device_name=device_name, algorithm=None, variant=None)
    return render(
        speedup_table_data(selected), fmt, about=about(selected, results=results, database=database)
    )


def _options_text(options: Mapping[str, Any]) -> str:
    """A record's options for reading: ``key=value`` pairs, measured times to 4 significant
    digits (the CSV export keeps them whole)."""
    return " ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(options.items())
    )


def show_table_data(records: Iterable[BestRecord], *, device_name: str | None = None) -> Table:
    """The content of :func:`show_table`, before rendering: one row per record with the
    configuration in effect, the search's picks and the structural options."""
    selected = sorted(
        select(records, device_name=device_name, algorithm=None, variant=None), key=_record_sort_key
    )
    header = (
        "device",
        "class",
        "algorithm",
        "relax",
        "min",
        "update",
        "tuned picks",
        "speedup",
        "replay",
        "updated",
        "options",
    )
    rows = tuple(
        (
            r.device.name,
            str(r.graph_class),
            f"{r.algorithm}/{r.variant}",
            r.config.relax.label,
            r.config.min.label,
            r.config.update.label,
            " ".join(r.tuned_config.kernel(k).label for k in KERNELS),
            _speedup(r.speedup),
            "replay" if r.replay else "",
            r.updated_at.isoformat(sep=" ", timespec="seconds"),
            _options_text(r.options),
        )
        for r in selected
    )
    return Table(_title("Stored best configurations", selected), header, rows)


def show_table(
    records: Iterable[BestRecord],
    fmt: str = "md",
    *,
    device_name: str | None = None,
    results: str = "recorded",
    database: str | None = None,
) -> str:
    """A flat listing of stored best configurations.

    Parameters
    ----------
    records : iterable of BestRecord
    fmt : {"md", "csv", "latex", "html"}
    device_name : str, optional
        Only this GPU (full or short name).
    results, database : str
        Provenance, see :func:`about`.

    Returns
    -------
    str
        One row per record (sorted by device, class, algorithm): device, class, algorithm/variant,
        the relax/min/update configurations in effect (``record.config``: what
        ``solve(tuned=True)`` runs), the search's picks (``record.tuned_config``), speedup,
        replay flag and update time (UTC, to the second). CSV gives :func:`long_table` instead,
        which holds all of this as numbers.
    """
    _check_fmt(fmt)
    if fmt == "csv":
        return long_table(records, device_name=device_name, results=results)
    selected = select(records, device_name=device_name, algorithm=None, variant=None)
    return render(
        show_table_data(selected), fmt, about=about(selected, results=results, database=database)
    )


LONG_KEY = (
    "device_uuid",
    "kernel_digest",
    "compile_options",
    "size",
    "degree",
    "diameter",
    "algorithm",
    "variant",
)
"""The columns that identify a row of :func:`long_table`: the tuning database's own key of a
stored record (GPU, kernel version, graph class, algorithm and variant). No two rows share it."""

LONG_HEADER = (
    "device",
    "device_uuid",
    "driver",
    "cuda",
    "kernel_digest",
    "compile_options",
    "size",
    "degree",
    "diameter",
    "algorithm",
    "variant",
    "engine",
    "relax",
    "min",
    "update",
    "tuned_relax",
    "tuned_min",
    "tuned_update",
    "default_ms",
    "tuned_ms",
    "speedup",
    "sources",
    "kept_default",
    "replay",
    "measured_at",
    "results",
    "options",
)
"""Columns of :func:`long_table`, one row per stored record. ``relax``/``min``/``update`` are the
kernels' configurations that ``solve(tuned=True)`` runs, ``tuned_*`` the search's picks; times
and speedup are the record's end-to-end check, once per row, so sums and means over rows count
each record once."""


def long_table_data(
    records: Iterable[BestRecord], *, device_name: str | None = None, results: str = "recorded"
) -> Table:
    """The content of :func:`long_table`: one row per stored record."""
    if results not in RESULTS:
        raise TuningError(f"unknown results kind {results!r}: expected one of {', '.join(RESULTS)}")
    selected = select(records, device_name=device_name, algorithm=None, variant=None)
    if not selected:
        raise TuningError("no tuning results to report: tune a graph class first")
    # One row per key: a list that holds a record twice (two exports of one database) shows the
    # newest, as every other table does.
    chosen = _newest(
        selected,
        lambda r: (
            r.device.uuid,
            r.kernel_version.digest,
            r.kernel_version.compile_options,
            r.graph_class,
            r.algorithm,
            r.variant,
        ),
    )
    rows = tuple(
        (
            r.device.name,
            r.device.uuid,
            r.device.driver_version,
            r.device.cuda_version,
            r.kernel_version.digest,
            r.kernel_version.compile_options,
            r.graph_class.size,
            r.graph_class.degree,
            r.graph_class.diameter,
            r.algorithm,
            r.variant,
            engine_label(r),
            *(r.config.kernel(k).label for k in KERNELS),
            *(r.tuned_config.kernel(k).label for k in KERNELS),
            repr(float(r.default_median_ms)),
            repr(float(r.tuned_median_ms)),
            repr(float(r.speedup)),
            str(r.n_sources),
            str(bool(r.kept_default)),
            str(bool(r.replay)),
            r.updated_at.astimezone(dt.UTC).isoformat(timespec="seconds"),
            "replayed" if r.replay and results == "recorded" else results,
            " ".join(f"{k}={v}" for k, v in sorted(r.options.items())),
        )
        for r in sorted(chosen.values(), key=_record_sort_key)
    )
    return Table("Stored tuning results, one row per record", LONG_HEADER, rows)


def long_table(
    records: Iterable[BestRecord], *, device_name: str | None = None, results: str = "recorded"
) -> str:
    """Every record as one tidy CSV table (``pandas.read_csv`` reads it as is).

    Returns
    -------
    str
        The columns :data:`LONG_HEADER`, one row per record, keyed by :data:`LONG_KEY`: the
        device (name, UUID, driver, CUDA), the kernel version (source digest and compile
        options), the class (size, degree and diameter class), the algorithm and variant, the
        engine (``paper kernels`` or ``engine 2 (LOOP)``), the relax/min/update configurations in
        effect and the search's picks, the end-to-end ``default_ms``, ``tuned_ms`` and ``speedup``
        (full precision), sources, ``kept_default`` and ``replay`` (True/False), ``measured_at``
        (ISO 8601, UTC), ``results`` (recorded, replayed or measured: see :data:`RESULTS`) and
        the structural options (``loop=cluster cluster=16 ...``).
    """
    return render(long_table_data(records, device_name=device_name, results=results), "csv")


# -- renderers ----------------------------------------------------------------------------------
def render(
    tables: Table | Sequence[Table],
    fmt: str,
    *,
    about: Sequence[str] = (),
    figures: Sequence[Figure] = (),
    notes: Sequence[str] = (),
) -> str:
    """Render one or several :class:`Table` values as a complete ``"md"``, ``"csv"``,
    ``"latex"`` or ``"html"`` document.

    ``about`` lines (see :func:`about`) end the document: as notes of the last table in
    Markdown and LaTeX, as a paragraph in HTML. CSV takes exactly one table and writes its header
    and rows only (put provenance into columns, as :func:`long_table` does). ``figures``
    (:mod:`tuner.figures`) and ``notes`` (paragraphs) open the HTML document; the other formats
    have no place for them and leave them out.

    The LaTeX document needs two ``pdflatex`` runs, as every ``longtable`` does, for its columns
    to line up across pages.
    """
    _check_fmt(fmt)
    tables = [tables] if isinstance(tables, Table) else list(tables)
    if not tables:
        raise TuningError("nothing to render: no tables")
    if fmt == "csv":
        if len(tables) != 1:
            raise TuningError(f"CSV holds one table per file, got {len(tables)}")
        return _render_csv(tables[0])
    if fmt == "html":
        return _html_document(tables, about, figures, notes)
    last = tables[-1]
    tables[-1] = Table(last.title, last.header, last.rows, (*last.notes, *about))
    if fmt == "latex":
        return _latex_document(tables)
    return "\n".join(_render_md(t) for t in tables)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?" + TIMES + "?")


def _numeric_columns(t: Table) -> set[int]:
    """Columns whose cells are all numbers (``9.181``, ``1.89×``, ``20``) or missing: the
    renderers right-align them."""
    out = set()
    for i in range(len(t.header)):
        cells = [row[i] for row in t.rows if row[i] not in (MISSING, "-", "")]
        if cells and all(_NUMBER.fullmatch(c) for c in cells):
            out.add(i)
    return out


def _md_cell(text: str) -> str:
    # Escape what Markdown would read as table structure or emphasis ("192-A*" must not start
    # an italic run).
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def _render_md(t: Table) -> str:
    lines = [_md_cell(t.title), ""]
    lines.append("| " + " | ".join(_md_cell(h) for h in t.header) + " |")
    lines.append("|" + "|".join("---" for _ in t.header) + "|")
    lines.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.rows)
    if t.notes:
        lines.append("")
        lines.extend(_md_cell(n) + "  " for n in t.notes)
    return "\n".join(lines).rstrip() + "\n"


def _render_csv(t: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(t.header)
    writer.writerows(t.rows)
    return buf.getvalue()


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "—": "---",
    TIMES: r"$\times$",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (and spell ``—``/``×`` in ASCII LaTeX)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


# Page geometry of the LaTeX document (A4, 1.5 cm margins) and Computer Modern's character
# widths in pt per font size: digit, lowercase (in words, 0.9 of the alphabet's mean), uppercase
# and wide signs, space, other punctuation; measured with pdflatex's \settowidth. The estimate
# (3% over) picks the orientation, the font size and which column wraps; the tests compile the
# reports with pdflatex and look for overfull boxes.
_LATEX_WIDTH_PT = {"portrait": 512.0, "landscape": 759.0}
_LATEX_SIZES = ("small", "footnotesize", "scriptsize")
_LATEX_CHAR_PT = {
    "small": (4.94, 4.2, 6.75, 3.08, 4.0),
    "footnotesize": (4.54, 3.86, 6.2, 2.83, 3.68),
    "scriptsize": (4.26, 3.62, 5.76, 2.69, 3.48),
}
_LATEX_COLSEP_PT = 4.0


def _latex_text_pt(text: str, size: str) -> float:
    digit, lower, upper, space, other = _LATEX_CHAR_PT[size]
    return 1.03 * sum(
        digit
        if c.isdigit()
        else lower
        if c.islower()
        else space
        if c == " "
        else upper
        if c.isupper() or c in (TIMES, MISSING, "_")
        else other
        for c in text
    )


def _latex_column_widths(t: Table, size: str) -> list[float]:
    return [
        max(_latex_text_pt(c, size) for c in (h, *(r[i] for r in t.rows))) + 2 * _LATEX_COLSEP_PT
        for i, h in enumerate(t.header)
    ]


def _latex_layout(t: Table, width: float) -> tuple[str, str, int | None]:
    """(font size command, column spec, the wrapped column or None) of a table that fits
    ``width`` points: the largest size at which it fits, else the smallest with its widest text
    column wrapped."""
    numeric = _numeric_columns(t)
    for size in _LATEX_SIZES:
        if sum(_latex_column_widths(t, size)) <= width:
            spec = "".join("r" if i in numeric else "l" for i in range(len(t.header)))
            return size, spec, None
    size = _LATEX_SIZES[-1]
    widths = _latex_column_widths(t, size)
    wrap = max((i for i in range(len(widths)) if i not in numeric), key=lambda i: widths[i])
    room = width - (sum(widths) - widths[wrap]) - 2 * _LATEX_COLSEP_PT
    spec = "".join(
        (
            rf">{{\raggedright\arraybackslash}}p{{{max(room, 60.0):.0f}pt}}"
            if i == wrap
            else "r"
            if i in numeric
            else "l"
        )
        for i in range(len(t.header))
    )
    return size, spec, wrap


def _latex_breakable(text: str) -> str:
    """Escaped ``text`` that may also break after ``=`` and ``_``: a wrapped column's long
    words (``many.default_wall_ms_per_source=0.01662``) are wider than the column."""
    return latex_escape(text).replace("=", r"=\allowbreak{}").replace(r"\_", r"\_\allowbreak{}")


def _render_latex(t: Table, width: float = _LATEX_WIDTH_PT["landscape"]) -> str:
    """One table as a ``longtable`` (it breaks across pages, its header repeated), numbers
    right-aligned, at the size that fits ``width``; the notes follow it."""
    size, spec, wrap = _latex_layout(t, width)
    header = " & ".join(latex_escape(h) for h in t.header) + r" \\"
    lines = [
        rf"\begin{{{size}}}",
        r"\setlength{\tabcolsep}{" + f"{_LATEX_COLSEP_PT:g}pt" + "}",
        r"\begin{longtable}{" + spec + "}",
        rf"\caption{{{latex_escape(t.title)}}}\\",
        r"\hline",
        header,
        r"\hline",
        r"\endfirsthead",
        r"\hline",
        header,
        r"\hline",
        r"\endhead",
        r"\hline",
        r"\endfoot",
    ]
    lines.extend(
        " & ".join(_latex_breakable(c) if i == wrap else latex_escape(c) for i, c in enumerate(row))
        + r" \\"
        for row in t.rows
    )
    lines.append(r"\end{longtable}")
    lines.append(rf"\end{{{size}}}")
    for note in t.notes:
        lines.append(rf"\noindent{{\footnotesize {latex_escape(note)}}}\par")
    return "\n".join(lines) + "\n"


def _latex_document(tables: Sequence[Table]) -> str:
    """A complete LaTeX document (``pdflatex`` compiles it with the base distribution's
    packages): landscape when a table needs the width, one ``longtable`` per table."""
    wide = any(
        sum(_latex_column_widths(t, _LATEX_SIZES[0])) > _LATEX_WIDTH_PT["portrait"] for t in tables
    )
    orientation = "landscape" if wide else "portrait"
    width = _LATEX_WIDTH_PT[orientation]
    parts = [
        "% Compile twice (pdflatex, then pdflatex again): longtable lines up its columns on the second run.",
        r"\documentclass[a4paper,10pt]{article}",
        r"\usepackage[utf8]{inputenc}",
        rf"\usepackage[{orientation},margin=1.5cm]{{geometry}}",
        r"\usepackage{array,longtable}",
        r"\setlength{\parindent}{0pt}",
        r"\setlength{\LTcapwidth}{\textwidth}",
        r"\pagestyle{empty}",
        r"\begin{document}",
        *(_render_latex(t, width) for t in tables),
        r"\end{document}",
    ]
    return "\n".join(parts) + "\n"


def _render_html(t: Table) -> str:
    """A table; numeric columns right-aligned in tabular figures, no cell wrapped (a wide table
    scrolls sideways in its box instead)."""
    e = html.escape
    numeric = _numeric_columns(t)

    def cls(i: int) -> str:
        return ' class="num"' if i in numeric else ""

    lines = ['<div class="table">', "<table>", f"  <caption>{e(t.title)}</caption>", "  <thead>"]
    lines.append(
        "    <tr>" + "".join(f"<th{cls(i)}>{e(h)}</th>" for i, h in enumerate(t.header)) + "</tr>"
    )
    lines.append("  </thead>")
    lines.append("  <tbody>")
    lines.extend(
        "    <tr>" + "".join(f"<td{cls(i)}>{e(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in t.rows
    )
    lines.append("  </tbody>")
    if t.notes:
        lines.append("  <tfoot>")
        lines.extend(f'    <tr><td colspan="{len(t.header)}">{e(n)}</td></tr>' for n in t.notes)
        lines.append("  </tfoot>")
    lines.append("</table>")
    lines.append("</div>")
    return "\n".join(lines) + "\n"


def _render_html_figure(f: Figure) -> str:
    """A figure as an ``<img>`` of its SVG in a ``data:`` URI: self-contained, and the SVG's
    ids cannot collide with another figure's."""
    e = html.escape
    uri = "data:image/svg+xml;base64," + base64.b64encode(f.svg.encode("utf-8")).decode("ascii")
    caption = e(f.title) + "".join(f"<br>\n<small>{e(n)}</small>" for n in f.notes)
    return f'<figure>\n<img src="{uri}" alt="{e(f.alt)}">\n<figcaption>{caption}</figcaption>\n</figure>'


_HTML_STYLE = (
    "body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse;margin:0}"
    "div.table{overflow-x:auto;margin:1em 0}"
    "caption{font-weight:bold;text-align:left;padding-bottom:.3em}"
    "th,td{border:1px solid #bbb;padding:2px 6px;white-space:nowrap;text-align:left}"
    "th{background:#f2f2f2}.num{text-align:right;font-variant-numeric:tabular-nums}"
    "tbody tr:nth-child(even){background:#fafafa}"
    "tfoot td{font-size:smaller;border:none;white-space:normal}"
    "figure{margin:1.5em 0}figure img{max-width:100%;height:auto}"
    "figcaption{font-weight:bold}figcaption small{font-weight:normal}"
    "p.about{font-size:smaller;color:#444}"
)


def _html_document(
    tables: Sequence[Table],
    about_lines: Sequence[str],
    figures: Sequence[Figure] = (),
    notes: Sequence[str] = (),
) -> str:
    """A complete HTML5 document in UTF-8 (declared, so "×" and "—" survive any browser): the
    figures first, then the tables, then where the numbers come from."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{e(tables[0].title)}</title>",
        f"<style>{_HTML_STYLE}</style>",
        "</head>",
        "<body>",
        *(_render_html_figure(f) for f in figures),
        *(f'<p class="note">{e(n)}</p>' for n in notes),
        *(_render_html(t).rstrip("\n") for t in tables),
    ]
    if about_lines:
        parts.append('<p class="about">' + "<br>\n".join(e(line) for line in about_lines) + "</p>")
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"
