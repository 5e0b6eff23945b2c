"""The figures and tables of ``paper_results.ipynb``, from recorded files only.

Every function takes the recorded data of one GPU (:func:`load`) and the paper's values
(``benchmarks/paper/``) and returns a matplotlib figure or a Markdown table. Nothing is measured
here. Where a file or a row is missing the panel says "not measured" instead of drawing; every
title carries the device and date of the recording it shows.
"""

from __future__ import annotations

import csv
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from tqdm import TqdmWarning

# Optuna (through tuning_db) imports tqdm.auto, which warns in a Jupyter kernel without
# ipywidgets that it cannot draw widget progress bars. This module draws no progress bar.
warnings.filterwarnings("ignore", message="IProgress not found", category=TqdmWarning)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import claims  # noqa: E402
import recorded  # noqa: E402
from recorded import as_float, time_ms  # noqa: E402

PAPER_TABLE1 = ROOT / "benchmarks" / "paper" / "paper_table1.csv"
SIZES = ("24k", "49k", "98k")
COLORS = {"24k": "tab:blue", "49k": "tab:orange", "98k": "tab:green"}
SOLVERS = (  # (label, algorithm, variant, backend, config)
    ("GPU Crauser, default", "crauser", "successors", "gpu", "default"),
    ("GPU Crauser, tuned", "crauser", "successors", "gpu", "tuned"),
    ("GPU Martín, default", "martin", "successors", "gpu", "default"),
    ("CPU Crauser", "crauser", "successors", "cpu", ""),
    ("Boost Dijkstra", "boost-dijkstra", "", "cpu", ""),
)
NOT_MEASURED = "not measured"


def load(gpu: str = "h200", results: Path = recorded.RESULTS) -> claims.Data:
    return claims.load_data(gpu, results)


def paper_values() -> dict[str, claims.PaperValue]:
    return claims.read_paper_values()


def _select(
    rec: recorded.Recorded | None,
    algorithm: str,
    variant: str,
    backend: str,
    config: str,
) -> dict[str, Mapping[str, str]]:
    if rec is None:
        return {}
    eq = dict(algorithm=algorithm, variant=variant, backend=backend)
    if backend == "gpu":
        eq["config"] = config
    return {r["graph"]: r for r in rec.select(**eq)}


def _empty(ax: Axes, why: str) -> None:
    ax.text(
        0.5,
        0.5,
        f"{NOT_MEASURED}\n{why}",
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=10,
        color="0.35",
        wrap=True,
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _label(rec: recorded.Recorded | None) -> str:
    return rec.label if rec is not None else NOT_MEASURED


def _degree(graph: str) -> int:
    return int(graph.rsplit("deg", 1)[1])


def _log_ratio_axis(axis, unit: str = "×") -> None:
    """Ticks at 1, 2, 5 per decade, labelled as numbers (``2×``), on a log axis: matplotlib's
    default labels only powers of ten, so a range within one decade shows one label ("1.0")."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}{unit}"))
    axis.set_minor_formatter(NullFormatter())


# -- experiment 1 -------------------------------------------------------------------------------
def exp1_times(d: claims.Data) -> Figure:
    """Time per source against the Martín graph's size, one line per solver and variant."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    rec = d.exp1
    for ax, variant in zip(axes, ("successors", "predecessors"), strict=True):
        drawn = False
        for label, algo, backend, config, style in (
            ("GPU Crauser, default", "crauser", "gpu", "default", "-o"),
            ("GPU Crauser, tuned", "crauser", "gpu", "tuned", "--o"),
            ("GPU Martín, default", "martin", "gpu", "default", "-s"),
            ("GPU Martín, tuned", "martin", "gpu", "tuned", "--s"),
            ("CPU Crauser", "crauser", "cpu", "", "-^"),
            ("CPU Martín", "martin", "cpu", "", "-v"),
        ):
            rows = sorted(
                _select(rec, algo, variant, backend, config).values(), key=lambda r: float(r["n"])
            )
            pts = [(float(r["n"]) / 2**20, time_ms(r)) for r in rows if time_ms(r) is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), style, label=label)
                drawn = True
        if drawn:
            ax.set_yscale("log")
            ax.set_xlabel("nodes (millions, 2^20)")
            ax.set_ylabel("mean time per source (ms)")
            ax.legend(fontsize=8)
        else:
            _empty(ax, "no experiment-1 file (benchmarks/results/<gpu>/exp1_martin.csv)")
        ax.set_title(f"{variant}")
    fig.suptitle(
        f"Experiment 1, Martín graphs (in-degree 7, weights 1..10) — {_label(rec)}", fontsize=10
    )
    fig.tight_layout()
    return fig


def exp1_ratios(d: claims.Data, paper: Mapping[str, claims.PaperValue]) -> Figure:
    """Crauser over Martín (GPU) and GPU over CPU Crauser against size, with the paper's maxima,
    and the share of idle relax threads with the paper's."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    rec = d.exp1
    any_ratio = False
    for variant, style in (("successors", "-"), ("predecessors", "--")):
        for label, num, den in (
            (
                "GPU Martín / GPU Crauser",
                ("martin", "gpu", "default"),
                ("crauser", "gpu", "default"),
            ),
            ("CPU Crauser / GPU Crauser", ("crauser", "cpu", ""), ("crauser", "gpu", "default")),
        ):
            a, b = _select(rec, num[0], variant, *num[1:]), _select(rec, den[0], variant, *den[1:])
            pts = sorted(
                (float(a[g]["n"]) / 2**20, time_ms(a[g]) / time_ms(b[g]))
                for g in set(a) & set(b)
                if time_ms(a[g]) and time_ms(b[g])
            )
            if pts:
                ax1.plot(*zip(*pts, strict=True), style + "o", label=f"{label} ({variant})")
                any_ratio = True
    if any_ratio:
        for key, color in (("crauser_vs_martin", "tab:blue"), ("gpu_vs_cpu_crauser", "tab:orange")):
            pv = paper[key]
            ax1.axhline(
                pv.value, color=color, ls=":", lw=1, label=f"paper: {pv.quantity}, {pv.text}"
            )
        ax1.set_yscale("log")
        ax1.set_xlabel("nodes (millions, 2^20)")
        ax1.set_ylabel("speedup (×)")
        ax1.legend(fontsize=7)
    else:
        _empty(ax1, "no experiment-1 file")
    ax1.set_title("speedups")
    pts = sorted(
        (float(r["n"]) / 2**20, 100 * (1 - float(r["relax_active_share"])))
        for r in _select(rec, "crauser", "successors", "gpu", "default").values()
        if as_float(r["relax_active_share"]) is not None
    )
    if pts:
        ax2.plot(*zip(*pts, strict=True), "-o", label="GPU Crauser, successors (recorded)")
        ax2.axhline(
            paper["idle_relax_threads"].value,
            color="k",
            ls=":",
            lw=1,
            label=f"paper: {paper['idle_relax_threads'].text}",
        )
        ax2.set_xlabel("nodes (millions, 2^20)")
        ax2.set_ylabel("relax threads with no work (%)")
        ax2.legend(fontsize=8)
    else:
        _empty(ax2, "no experiment-1 GPU run")
    ax2.set_title("idle ('dummy') relax threads")
    fig.suptitle(f"Experiment 1 — {_label(rec)}", fontsize=10)
    fig.tight_layout()
    return fig


# -- experiment 2 -------------------------------------------------------------------------------
def exp2_random_times(d: claims.Data) -> Figure:
    """(A) time per source against mean degree for each random size: one line per solver, never
    across sizes."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    rec = d.exp2
    for ax, size in zip(axes, SIZES, strict=True):
        drawn = False
        for label, algo, variant, backend, config in SOLVERS:
            rows = [
                r
                for g, r in _select(rec, algo, variant, backend, config).items()
                if r["family"] == f"random-{size}" and time_ms(r) is not None
            ]
            pts = sorted((_degree(r["graph"]), time_ms(r)) for r in rows)
            if pts:
                ax.plot(*zip(*pts, strict=True), "-o", ms=4, label=label)
                drawn = True
        if drawn:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("mean out-degree (edges per node)")
            ax.set_ylabel("time per source (ms)")
        else:
            _empty(ax, f"no random-{size} rows")
        ax.set_title(f"random {size} nodes")
    if any(ax.get_legend_handles_labels()[0] for ax in axes):
        axes[-1].legend(fontsize=8)
    fig.suptitle(f"Experiment 2 (A), random classes — {_label(rec)}", fontsize=10)
    fig.tight_layout()
    return fig


def _families(rec: recorded.Recorded | None) -> list[str]:
    if rec is None:
        return []
    return sorted({r["family"] for r in rec.rows if not r["family"].startswith("random")})


def _auto(rec: recorded.Recorded | None) -> dict[str, dict]:
    """Experiment 2's rows of what ``solve(tuned=True)`` ran (``algorithm=auto:<what ran>``)."""
    if rec is None:
        return {}
    return {
        r["graph"]: r
        for r in rec.rows
        if r["algorithm"].startswith("auto:") and r["status"] == "ok" and r["backend"] == "gpu"
    }


# One colour and marker per solver, the same in every panel (five combinations, nothing else).
SOLVER_STYLE = {
    "GPU Crauser, default": ("tab:blue", "o"),
    "GPU Crauser, tuned": ("tab:cyan", "s"),
    "GPU Martín, default": ("tab:red", "^"),
    "CPU Crauser": ("tab:green", "v"),
    "Boost Dijkstra": ("k", "D"),
}


def exp2_other_times(d: claims.Data) -> Figure:
    """(A) real, Kronecker and social graphs: a dot plot, one row per graph (grouped by family,
    by edge count within it), one dot per solver; no line joins unrelated graphs, and the legend
    sits above the data."""
    rec = d.exp2
    families = _families(rec)
    solvers = [
        (label, _select(rec, algo, variant, backend, config))
        for label, algo, variant, backend, config in SOLVERS
    ]
    graphs: dict[str, Mapping[str, str]] = {}
    for _, rows in solvers:
        for g, r in rows.items():
            if r["family"] in families and time_ms(r) is not None:
                graphs.setdefault(g, r)
    order = sorted(
        graphs, key=lambda g: (families.index(graphs[g]["family"]), float(graphs[g]["m"]), g)
    )
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.24 * max(len(order), 4)))
    if not order:
        _empty(ax, "no real, Kronecker or social graph rows")
        ax.set_title(f"Experiment 2 (A), real/Kronecker/social graphs — {_label(rec)}", fontsize=10)
        fig.tight_layout()
        return fig
    row = {g: i for i, g in enumerate(order)}
    boundaries = [
        i - 0.5
        for i in range(1, len(order))
        if graphs[order[i - 1]]["family"] != graphs[order[i]]["family"]
    ]
    ax.hlines(boundaries, 0, 1, transform=ax.get_yaxis_transform(), color="0.6", lw=0.8, zorder=1)
    for label, rows in solvers:
        pts = [(time_ms(r), row[g]) for g, r in rows.items() if g in row and time_ms(r) is not None]
        if pts:
            colour, marker = SOLVER_STYLE[label]
            ax.scatter(
                *zip(*pts, strict=True), color=colour, marker=marker, s=24, label=label, zorder=3
            )
    ax.set_yticks(
        range(len(order)),
        [f"{g} ({float(graphs[g]['m']) / 1e6:.2g}M arcs)" for g in order],
        fontsize=7,
    )
    ax.set_ylim(len(order) - 0.4, -0.6)  # first family on top
    ax.yaxis.grid(True, color="0.93", lw=0.7)
    ax.set_axisbelow(True)
    for i, g in enumerate(order):
        if i == 0 or graphs[order[i - 1]]["family"] != graphs[g]["family"]:
            ax.annotate(
                graphs[g]["family"],
                xy=(1.01, i - 0.4),
                xycoords=("axes fraction", "data"),
                fontsize=8,
                va="top",
                color="0.3",
            )
    ax.set_xscale("log")
    _log_ratio_axis(ax.xaxis, unit="")
    ax.set_xlabel("time per source (ms)")
    ax.set_ylabel("graph (arcs), by family")
    ax.legend(
        fontsize=8,
        ncol=len(SOLVER_STYLE),
        loc="lower left",
        bbox_to_anchor=(0.0, 1.0),
        frameon=False,
        handletextpad=0.2,
        columnspacing=1.0,
    )
    ax.set_title(
        f"Experiment 2 (A), real/Kronecker/social graphs — {_label(rec)}", fontsize=10, pad=24
    )
    fig.tight_layout()
    return fig


def tuned_vs_default(d: claims.Data, paper: Mapping[str, claims.PaperValue]) -> Figure:
    """(B) default / tuned time per class: from experiment 2 and from the tuning database's own
    end-to-end checks, beside the paper's best (up to 23% saved, i.e. 1.3×)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    pv = paper["tuned_vs_default"]
    paper_speedup = 1 / (1 - pv.value / 100)
    df = _select(d.exp2, "crauser", "successors", "gpu", "default")
    tu = _select(d.exp2, "crauser", "successors", "gpu", "tuned")
    graphs = sorted(
        (g for g in set(df) & set(tu) if g.startswith("random-")),
        key=lambda g: (recorded.as_float(df[g]["n"]), _degree(g)),
    )
    if graphs:
        ax1.bar(
            graphs,
            [time_ms(df[g]) / time_ms(tu[g]) for g in graphs],
            color=[COLORS.get(df[g]["family"].split("-")[1], "0.5") for g in graphs],
        )
        ax1.tick_params(axis="x", rotation=60, labelsize=7)
        ax1.set_ylabel("default / tuned time (×)")
        ax1.axhline(1, color="k", lw=0.8)
        ax1.axhline(
            paper_speedup, color="r", ls=":", label=f"paper: {pv.text} saved = {paper_speedup:.2f}×"
        )
        ax1.legend(fontsize=8)
    else:
        _empty(ax1, "no experiment-2 run with both default and tuned GPU Crauser")
    ax1.set_title(f"experiment-2 runs\n{_label(d.exp2)}", fontsize=8)
    best = sorted(
        (b for b in d.best if not b.replay),
        key=lambda b: (b.graph_class.nodes, b.graph_class.mean_degree),
    )
    if best:
        ax2.bar(
            [str(b.graph_class) for b in best],
            [b.speedup for b in best],
            color=[
                "0.6" if b.kept_default else COLORS.get(b.graph_class.size, "tab:blue")
                for b in best
            ],
        )
        ax2.tick_params(axis="x", rotation=60, labelsize=7)
        ax2.set_yscale("log")
        _log_ratio_axis(ax2.yaxis)
        ax2.axhline(1, color="k", lw=0.8)
        ax2.axhline(paper_speedup, color="r", ls=":", label=f"paper: {paper_speedup:.2f}×")
        ax2.set_ylabel("default / tuned median time (×)")
        ax2.legend(fontsize=8)
    else:
        _empty(ax2, "no recorded tuning results")
    ax2.set_title(
        f"tuning end-to-end checks (grey: default kept)\n{d.tuning_label or NOT_MEASURED}",
        fontsize=8,
    )
    fig.suptitle(
        "Experiment 2 (B): tuned against the default configuration (256 threads, L1 normal)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


_PAPER_BOOST = (  # (claim key, size, degree, sign): sign -1 where Boost wins
    ("boost_wins_24k_deg2", "24k", 2, -1),
    ("gpu_wins_24k_deg200", "24k", 200, 1),
    ("gpu_wins_49k_deg20", "49k", 20, 1),
    ("gpu_wins_98k_deg10", "98k", 10, 1),
    ("gpu_wins_24k_deg2000", "24k", 2000, 1),
    ("gpu_wins_49k_deg2000", "49k", 2000, 1),
    ("gpu_wins_98k_deg2000", "98k", 2000, 1),
)


def gpu_vs_boost(d: claims.Data, paper: Mapping[str, claims.PaperValue]) -> Figure:
    """(D) Boost time / GPU time: random classes by degree (one line per size) with the paper's
    published points, and the other graphs by family with the paper's bounds."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
    gpu = {
        **_select(d.exp2, "crauser", "successors", "gpu", "default"),
        **_select(d.exp2, "crauser", "successors", "gpu", "tuned"),
    }
    which = (
        "tuned"
        if _select(d.exp2, "crauser", "successors", "gpu", "tuned")
        else "default configuration"
    )
    boost = _select(d.exp2, "boost-dijkstra", "", "cpu", "")
    common = {g for g in set(gpu) & set(boost) if time_ms(gpu[g]) and time_ms(boost[g])}
    ratio = {g: time_ms(boost[g]) / time_ms(gpu[g]) for g in common}
    # The last column: what solve(tuned=True) runs, the algorithm the tuner picked per class.
    auto = _auto(d.exp2)
    auto_ratio = {
        g: time_ms(boost[g]) / time_ms(auto[g])
        for g in set(auto) & set(boost)
        if time_ms(auto[g]) and time_ms(boost[g])
    }
    drawn = False
    for size in SIZES:
        pts = sorted((_degree(g), ratio[g]) for g in ratio if gpu[g]["family"] == f"random-{size}")
        if pts:
            ax1.plot(
                *zip(*pts, strict=True),
                "-o",
                color=COLORS[size],
                label=f"{size}, Crauser, recorded",
            )
            drawn = True
        pts = sorted(
            (_degree(g), auto_ratio[g]) for g in auto_ratio if auto[g]["family"] == f"random-{size}"
        )
        if pts:
            ax1.plot(
                *zip(*pts, strict=True),
                "--x",
                color=COLORS[size],
                label=f"{size}, tuner's pick, recorded",
            )
    labelled: set[str] = set()
    for key, size, deg, sign in _PAPER_BOOST:
        v = paper[key].value
        ax1.scatter(
            [deg],
            [v if sign > 0 else 1 / v],
            marker="*",
            s=110,
            facecolor="none",
            edgecolor=COLORS[size],
            label=None if size in labelled else f"{size}, paper (2015)",
        )
        labelled.add(size)
    ax1.axhline(1, color="k", lw=0.8)
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("mean out-degree (edges per node)")
    ax1.set_ylabel("Boost time / GPU time (×; < 1: Boost faster)")
    ax1.legend(fontsize=6.5, ncol=2, loc="lower right")
    ax1.set_title(
        "random classes" + ("" if drawn else f" ({NOT_MEASURED}: only the paper's points)"),
        fontsize=9,
    )
    fams = [f for f in _families(d.exp2) if any(gpu[g]["family"] == f for g in ratio)]
    if fams:
        for i, fam in enumerate(fams):
            ys = sorted(ratio[g] for g in ratio if gpu[g]["family"] == fam)
            ax2.scatter(
                [i - 0.12] * len(ys),
                ys,
                s=18,
                color="tab:blue",
                label="GPU Crauser" if i == 0 else None,
            )
            ys = sorted(auto_ratio[g] for g in auto_ratio if auto[g]["family"] == fam)
            ax2.scatter(
                [i + 0.12] * len(ys),
                ys,
                s=22,
                marker="x",
                color="tab:orange",
                label="tuner's pick (solve(tuned=True))" if i == 0 else None,
            )
        ax2.set_xticks(range(len(fams)), fams, rotation=30, fontsize=8)
        ax2.set_yscale("log")
    else:
        _empty(ax2, "no real, Kronecker or social graph with Boost and GPU times")
    ax2.axhline(
        1 / paper["boost_wins_walshaw"].value,
        color="tab:red",
        ls=":",
        label=f"paper: Boost up to {paper['boost_wins_walshaw'].value:g}× faster on walshaw",
    )
    ax2.axhline(
        paper["gpu_wins_social_kron"].value,
        color="tab:purple",
        ls=":",
        label=f"paper: GPU up to {paper['gpu_wins_social_kron'].value:g}× faster on social/kronecker",
    )
    ax2.axhline(1, color="k", lw=0.8)
    ax2.set_ylabel("Boost time / GPU time (×)")
    ax2.legend(fontsize=7, loc="lower left")
    ax2.set_title("real, Kronecker and social graphs (one point per graph)", fontsize=9)
    fig.suptitle(
        f"Experiment 2 (D): GPU Crauser ({which}) and the tuner's pick against Boost's Dijkstra"
        f" — {_label(d.exp2)}",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def memory(d: claims.Data, paper: Mapping[str, claims.PaperValue]) -> Figure:
    """(D) memory of Boost (resident set) and of the GPU solver against the edge count."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    gpu = _select(d.exp2, "crauser", "successors", "gpu", "default")
    boost = _select(d.exp2, "boost-dijkstra", "", "cpu", "")
    drawn = False
    for rows, label, color in (
        (gpu, "GPU solver (device memory)", "tab:blue"),
        (boost, "Boost (resident set after building the graph)", "k"),
    ):
        pts = sorted(
            (float(r["m"]), as_float(r["mem_mb"])) for r in rows.values() if as_float(r["mem_mb"])
        )
        if pts:
            ax.scatter(*zip(*pts, strict=True), s=16, color=color, label=label)
            drawn = True
    if drawn:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("edges (arcs)")
        ax.set_ylabel("memory (MiB)")
        ax.legend(fontsize=8)
    else:
        _empty(ax, "no memory recorded")
    pv = paper["memory_vs_boost"]
    ax.set_title(
        f"Experiment 2 (D), memory; paper: Boost needs {pv.text} — {_label(d.exp2)}", fontsize=9
    )
    fig.tight_layout()
    return fig


# -- Table 1 and the claims ----------------------------------------------------------------------
def paper_table1() -> list[dict[str, str]]:
    lines = [ln for ln in PAPER_TABLE1.read_text().splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def table1_side_by_side(best: Sequence) -> str:
    """Markdown: the paper's Table 1 layout (size × kernel rows; degree × GPU columns) with the
    recorded tuned picks of each GPU in the database beside the paper's Fermi (F) and Kepler (K)."""
    from tuner import report

    paper = {(r["size"], r["kernel"]): r for r in paper_table1()}
    ours: dict[tuple[str, str], dict[str, str]] = {}
    devices: list[str] = []
    notes: tuple[str, ...] = ()
    if best:
        t = report.table1_data(best)
        notes = t.notes
        for row in t.rows:
            ours[(row[0], row[1])] = dict(zip(t.header[2:], row[2:], strict=True))
        devices = sorted({h.split(" ", 1)[1] for h in t.header[2:]})
    degrees = (("deg2", "deg2"), ("deg20", "deg20"), ("deg200", "deg200"), (">=deg1000", "deg1000"))
    header = ["size", "kernel"]
    for paper_deg, deg in degrees:
        header += [f"{paper_deg} F", f"{paper_deg} K"] + [f"{deg} {dev}" for dev in devices]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for size, kernel in paper:
        cells = [size, kernel]
        for paper_deg, deg in degrees:
            cells += [
                paper[(size, kernel)][f"{paper_deg} F"],
                paper[(size, kernel)][f"{paper_deg} K"],
            ]
            cells += [
                ours.get((size, kernel), {}).get(f"{deg} {dev}", report.MISSING) for dev in devices
            ]
        lines.append("| " + " | ".join(cells) + " |")
    foot = [
        "F = GTX 480 (Fermi), K = GTX 680 (Kepler): the paper's Table 1 (PAPER.md). "
        + (
            f"{', '.join(devices)}: recorded tuning results, {d_label(best)}."
            if devices
            else "No recorded tuning results: " + NOT_MEASURED + "."
        )
    ]
    foot += list(notes)
    foot.append(
        "The H200 cells are the per-kernel picks of the tuner (block size-L1 state; S = "
        "max-shared carveout, `/xK` = K threads per node in relax); L1 'A'/'N' on Hopper is a "
        "carveout preference, not Fermi/Kepler's fixed split."
    )
    # One paragraph per footnote (a blank line between): lines that follow each other would join
    # into one, and a note starting with "*" would become a bullet.
    paragraphs = [_md_escape_marker(n) for n in foot]
    return "\n".join(lines) + "\n\n" + "\n\n".join(paragraphs)


def _md_escape_marker(text: str) -> str:
    """A paragraph that starts with a list marker (``*``, ``-``, ``+``) shown as text."""
    return "\\" + text if text[:1] and text[:1] in "*-+" else text


def d_label(best: Sequence) -> str:
    dates = sorted(b.updated_at.date().isoformat() for b in best)
    return f"{dates[-1]}" if dates else "date not recorded"


def claims_markdown(d: claims.Data) -> str:
    rows = claims.build(d)
    cols = claims.COLUMNS
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(r[c].replace("|", "/") for c in cols) + " |")
    return "\n".join(lines)
