"""The figures of the HTML report, drawn with matplotlib as self-contained SVG.

:func:`speedup_heatmap`
    The tuned configuration's end-to-end speedup over the default, by graph size (rows) and
    degree class (columns), one panel per engine, algorithm and diameter class.
:func:`baseline_dotplot`
    The GPU's speedup over Boost's Dijkstra and over the GAP suite's Δ-stepping, one row per
    graph, from a file of benchmark times (:func:`read_baselines`).

Like :mod:`tuner.report`, every function is pure: records or rows in, a :class:`Figure` out.
matplotlib is imported when a figure is drawn, through its object API (no pyplot, so no global
state and no display is touched).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from sssp.classes import DEGREE_CLASSES, SIZE_LABELS
from sssp.errors import TuningError
from tuning_db.records import BestRecord

#: The speedup heat map's colour map (the cell labels' contrast rule below is written for it).
CMAP = "viridis"

__all__ = ["Baseline", "Figure", "baseline_dotplot", "read_baselines", "speedup_heatmap"]


@dataclass(frozen=True)
class Figure:
    """A drawn figure: what the HTML report embeds.

    Attributes
    ----------
    title : str
        The caption's first line.
    svg : str
        A complete SVG document (embedded as a ``data:`` URI, so its ids never clash with
        another figure's).
    alt : str
        The text alternative: what the figure shows, in words.
    notes : tuple of str
        Caption lines after the title: where the numbers come from.
    """

    title: str
    svg: str
    alt: str
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if "<svg" not in self.svg:
            raise TuningError("a report figure must be an SVG document")


# -- drawing helpers ------------------------------------------------------------------------------
def _svg(fig: Any) -> str:
    """The figure as SVG text: fonts kept as text (small, searchable), ids salted per drawing so
    that the same figure always gives the same bytes."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "sssp-tune"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def _times(value: float, _pos: Any = None) -> str:
    return f"{value:g}×"


# -- the speedup heatmap ------------------------------------------------------------------------------
def _panels(
    records: Iterable[BestRecord],
) -> dict[tuple[str, str, str, str], dict[tuple[str, str], BestRecord]]:
    """(device, engine, algorithm/variant, diameter) -> {(size, degree): newest record}."""
    from .report import is_engine2

    panels: dict[tuple[str, str, str, str], dict[tuple[str, str], BestRecord]] = {}
    for r in records:
        key = (
            r.device.name,
            "engine 2" if is_engine2(r) else "paper kernels",
            f"{r.algorithm}/{r.variant}",
            r.graph_class.diameter,
        )
        cells = panels.setdefault(key, {})
        cell = (r.graph_class.size, r.graph_class.degree)
        if cell not in cells or r.updated_at > cells[cell].updated_at:
            cells[cell] = r
    order = {"paper kernels": 0, "engine 2": 1}
    return dict(
        sorted(
            panels.items(),
            key=lambda kv: (kv[0][0], order[kv[0][1]], kv[0][2], kv[0][3] != "lowdiam"),
        )
    )


def speedup_heatmap(records: Sequence[BestRecord], *, results: str = "recorded") -> Figure:
    """The end-to-end speedup (default / tuned median time) of every stored class, as a heatmap
    per (GPU, engine, algorithm, diameter class): sizes down, degree classes across, the value
    written in each cell, ``*`` where the default was kept, one log colour scale for all panels.

    Parameters
    ----------
    records : sequence of BestRecord
    results : {"recorded", "measured", "replayed"}
        What the records are (see :func:`tuner.report.about`); replayed records are named in
        their panel's title whatever this says.

    Raises
    ------
    TuningError
        No records.
    """
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import NullFormatter

    from .report import KEPT_DEFAULT_MARK, REPLAY_LABEL, RESULTS

    panels = _panels(records)
    if not panels:
        raise TuningError("no tuning results to draw: tune a graph class first")
    values = [r.speedup for cells in panels.values() for r in cells.values()]
    lo, hi = min(min(values), 0.9), max(max(values), 1.2)
    norm = LogNorm(vmin=lo, vmax=hi)
    ncols = min(len(panels), 2)
    nrows = math.ceil(len(panels) / ncols)
    shapes = []
    for cells in panels.values():
        sizes = sorted({s for s, _ in cells}, key=lambda s: SIZE_LABELS[s])
        degrees = sorted({d for _, d in cells}, key=lambda d: DEGREE_CLASSES[d])
        shapes.append((sizes, degrees))
    height = sum(
        0.8 + 0.42 * max(len(s) for s, _ in shapes[i : i + ncols])
        for i in range(0, len(shapes), ncols)
    )
    fig = MplFigure(figsize=(5.2 * ncols + 1.2, height + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, ((device, engine, algorithm, diameter), cells), (sizes, degrees) in zip(
        axes, panels.items(), shapes, strict=False
    ):
        grid = [
            [cells[(s, d)].speedup if (s, d) in cells else math.nan for d in degrees] for s in sizes
        ]
        ax.imshow(grid, norm=norm, cmap=CMAP, aspect="auto")
        for i, s in enumerate(sizes):
            for j, d in enumerate(degrees):
                rec = cells.get((s, d))
                if rec is None:
                    ax.text(j, i, "—", ha="center", va="center", color="0.4", fontsize=9)
                    continue
                # Light text on the dark (low) end of viridis, dark text on the light end.
                dark = norm(rec.speedup) < 0.6
                label = f"{rec.speedup:.2f}×" + (KEPT_DEFAULT_MARK if rec.kept_default else "")
                ax.text(
                    j,
                    i,
                    label,
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if dark else "black",
                )
        ax.set_xticks(range(len(degrees)), degrees)
        ax.set_yticks(range(len(sizes)), sizes)
        ax.tick_params(length=0)
        ax.set_xlabel("mean out-degree class")
        ax.set_ylabel("graph size (nodes)")
        replayed = any(r.replay for r in cells.values())
        where = "high diameter (roads, meshes)" if diameter == "highdiam" else "low diameter"
        ax.set_title(
            f"{engine}, {algorithm}, {where}\n{device}" + (f" {REPLAY_LABEL}" if replayed else ""),
            fontsize=9,
        )
        for spine in ax.spines.values():
            spine.set_visible(False)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    # Every panel shares the norm and the colour map, so one mappable of them draws the bar.
    bar = fig.colorbar(
        ScalarMappable(norm=norm, cmap=CMAP), ax=list(axes[: len(panels)]), shrink=0.8
    )
    bar.set_label("speedup: default / tuned median time (×, log scale)")
    bar.set_ticks([t for t in (0.5, 1, 2, 5, 10, 20, 50, 100, 200) if lo <= t <= hi])
    bar.ax.yaxis.set_major_formatter(_times)
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    kept = any(r.kept_default for cells in panels.values() for r in cells.values())
    notes = [f"results: {RESULTS[results].format(database='')}"]
    if kept:
        notes.append(
            f"{KEPT_DEFAULT_MARK} the default was kept: the tuned picks did not win end to end"
        )
    alt = (
        "Heatmaps of the tuned configuration's speedup over the default by graph size and degree "
        "class: "
        + "; ".join(
            f"{engine} {algorithm} {diameter} on {device}: "
            + ", ".join(
                f"{s}/{d} {r.speedup:.2f}x"
                for (s, d), r in sorted(
                    cells.items(), key=lambda kv: (SIZE_LABELS[kv[0][0]], DEGREE_CLASSES[kv[0][1]])
                )
            )
            for (device, engine, algorithm, diameter), cells in panels.items()
        )
    )
    return Figure(
        "End-to-end speedup of the tuned configuration over the default, by graph size and degree",
        _svg(fig),
        alt,
        tuple(notes),
    )


# -- baselines: the GPU against Boost and GAP ---------------------------------------------------
@dataclass(frozen=True)
class Baseline:
    """One graph's benchmark times: the GPU solver's, Boost's Dijkstra's and the GAP suite's
    Δ-stepping's (ms; a missing baseline is None)."""

    graph: str
    gpu_ms: float
    boost_ms: float | None
    gap_ms: float | None

    @property
    def vs_boost(self) -> float | None:
        return None if self.boost_ms is None else self.boost_ms / self.gpu_ms

    @property
    def vs_gap(self) -> float | None:
        return None if self.gap_ms is None else self.gap_ms / self.gpu_ms


def read_baselines(text: str, source: str = "<baselines>") -> list[Baseline]:
    """Benchmark times from CSV text with the columns ``graph``, ``gpu_ms`` and at least one of
    ``boost_ms`` and ``gap_ms`` (other columns are ignored), as ``benchmarks/bench_sssp.py``
    writes them (``benchmarks/results/h200/sssp_vs_boost.csv``).

    Raises
    ------
    TuningError
        A missing column, or a time that is not a positive number, naming ``source`` and the line.
    """
    reader = csv.DictReader(io.StringIO(text))
    columns = set(reader.fieldnames or ())
    missing = [c for c in ("graph", "gpu_ms") if c not in columns]
    if missing or not columns & {"boost_ms", "gap_ms"}:
        need = missing or ["boost_ms or gap_ms"]
        raise TuningError(
            f"{source}: baseline times need the column(s) {', '.join(need)}; "
            f"the header has {', '.join(sorted(columns)) or 'nothing'}"
        )

    @overload
    def number(row: dict[str, str], column: str, line: int, required: Literal[True]) -> float: ...
    @overload
    def number(
        row: dict[str, str], column: str, line: int, required: Literal[False]
    ) -> float | None: ...
    def number(row: dict[str, str], column: str, line: int, required: bool) -> float | None:
        cell = (row.get(column) or "").strip()
        if not cell and not required:
            return None
        try:
            value = float(cell)
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise TuningError(f"{source}:{line}: {column} {cell!r} is not a positive time in ms")
        return value

    rows = []
    for line, row in enumerate(reader, start=2):
        rows.append(
            Baseline(
                row["graph"],
                number(row, "gpu_ms", line, True),
                number(row, "boost_ms", line, False),
                number(row, "gap_ms", line, False),
            )
        )
    if not rows:
        raise TuningError(f"{source}: no baseline times (only a header)")
    return rows


def baseline_dotplot(rows: Sequence[Baseline], *, source: str) -> Figure:
    """A dot plot of the GPU's speedup over Boost's Dijkstra and over GAP's Δ-stepping (baseline
    time / GPU time), one row per graph, sorted by the speedup over Boost, on a log axis with a
    line at 1× (right of it the GPU is faster).

    Parameters
    ----------
    rows : sequence of Baseline
    source : str
        Where the times come from (a file name), named in the caption: they are recorded
        benchmark results, not measured by the report.
    """
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not rows:
        raise TuningError(f"{source}: no baseline times to draw")
    ordered = sorted(rows, key=lambda b: b.vs_boost if b.vs_boost is not None else b.vs_gap or 0.0)
    fig = MplFigure(figsize=(7.5, 1.3 + 0.24 * len(ordered)), layout="constrained")
    ax = fig.subplots()
    ys = range(len(ordered))
    for attr, label, marker, colour in (
        ("vs_boost", "Boost's Dijkstra time / GPU time", "o", "tab:blue"),
        ("vs_gap", "GAP Δ-stepping time / GPU time", "D", "tab:orange"),
    ):
        pts = [
            (getattr(b, attr), y)
            for b, y in zip(ordered, ys, strict=True)
            if getattr(b, attr) is not None
        ]
        if pts:
            xs, ys_at = zip(*pts, strict=True)
            ax.scatter(
                xs,
                ys_at,
                marker=marker,
                s=28,
                color=colour,
                label=label,
                zorder=3,
                facecolor=colour if marker == "o" else "none",
            )
    for y in ys:
        ax.axhline(y, color="0.92", lw=0.8, zorder=0)
    ax.axvline(1, color="k", lw=0.9, zorder=1)
    ax.set_yticks(list(ys), [b.graph for b in ordered], fontsize=8)
    ax.set_ylim(-0.7, len(ordered) - 0.3)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(_times))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(
        "speedup of the GPU (baseline time / GPU time, log scale; right of 1×: the GPU is faster)"
    )
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False, fontsize=8)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    alt = "Dot plot of the GPU's speedup per graph: " + "; ".join(
        f"{b.graph}: {b.vs_boost:.3g}x over Boost"
        + (f", {b.vs_gap:.3g}x over GAP" if b.vs_gap else "")
        if b.vs_boost is not None
        else f"{b.graph}: {b.vs_gap:.3g}x over GAP"
        for b in ordered
    )
    faster = sum(1 for b in ordered if (b.vs_boost or 0) > 1)
    notes = (
        f"recorded benchmark times from {source}, not measured by this command",
        f"the GPU is faster than Boost on {faster} of {len(ordered)} graphs",
    )
    return Figure(
        "The GPU solver against Boost's Dijkstra and GAP's Δ-stepping, per graph",
        _svg(fig),
        alt,
        notes,
    )
