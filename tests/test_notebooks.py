"""notebooks/: every notebook executes (reading recorded files only), and every figure draws the
recorded rows it is given, one line per graph family, with units and the recording's label."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "notebooks"))

# Imported, not skipped when missing: the dev extra installs the notebooks extra, and CI must fail
# rather than skip if it cannot execute the notebooks.
import matplotlib  # noqa: E402
import nbclient  # noqa: E402
import nbformat  # noqa: E402

matplotlib.use("Agg")

import paper_figures as pf  # noqa: E402
import recorded  # noqa: E402

META = {"device": "NVIDIA Fixture GPU", "date": "2026-11-30T12:00:00+00:00", "status": "complete"}


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ has no .ipynb"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError if any cell raises
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    # Nothing on stderr (a reader sees it in red): no warning of a library, no log line.
    stderr = [
        o["text"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream" and o.get("name") == "stderr"
    ]
    assert not stderr, stderr
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert images, "no figure was drawn"


def _row(experiment, graph, family, n, m, algorithm, variant, backend, config, ms, **extra):
    return dict(
        experiment=experiment,
        graph=graph,
        family=family,
        origin="fixture",
        n=n,
        m=m,
        algorithm=algorithm,
        variant=variant,
        backend=backend,
        config=config,
        config_source=config,
        sources=3,
        mean_ms=ms,
        median_ms=ms,
        status="ok",
        **extra,
    )


def fixture_results(root: Path) -> Path:
    """A results folder with recorded-looking rows for every figure (values made up, for drawing)."""
    exp1, exp2 = [], []
    for k in (1, 2, 4):
        n, g = k * 2**20, f"martin-{k}M"
        for variant in ("successors", "predecessors"):
            for algo, it in (("crauser", 20), ("martin", 80)):
                for config in ("default", "tuned"):
                    exp1.append(
                        _row(
                            1,
                            g,
                            "martin",
                            n,
                            7 * n,
                            algo,
                            variant,
                            "gpu",
                            config,
                            k * it / 10,
                            iterations=it,
                            relax_active_share=0.04,
                            mem_mb=k * 60,
                        )
                    )
                exp1.append(
                    _row(
                        1,
                        g,
                        "martin",
                        n,
                        7 * n,
                        algo,
                        variant,
                        "cpu",
                        "",
                        k * it * 10,
                        iterations=it,
                    )
                )
    for size, n in (("24k", 24576), ("49k", 49152), ("98k", 98304)):
        for d in (2, 20, 200, 2000):
            g, m = f"random-{size}-deg{d}", n * d
            for algo, config, ms in (
                ("crauser", "default", 2.0),
                ("crauser", "tuned", 1.5),
                ("martin", "default", 3.0),
            ):
                exp2.append(
                    _row(
                        2,
                        g,
                        f"random-{size}",
                        n,
                        m,
                        algo,
                        "successors",
                        "gpu",
                        config,
                        ms,
                        iterations=10,
                        relax_active_share=0.05,
                        mem_mb=m * 8e-6,
                    )
                )
            exp2.append(
                _row(2, g, f"random-{size}", n, m, "crauser", "successors", "cpu", "", m * 1e-5)
            )
            exp2.append(
                _row(
                    2,
                    g,
                    f"random-{size}",
                    n,
                    m,
                    "boost-dijkstra",
                    "",
                    "cpu",
                    "",
                    m * 8e-6,
                    mem_mb=m * 2e-5,
                )
            )
    for g, fam, n, m in (
        ("fe_body", "walshaw", 45087, 327468),
        ("kronecker-logn16", "kronecker", 65536, 6_000_000),
    ):
        for algo, config in (("crauser", "default"), ("crauser", "tuned"), ("martin", "default")):
            exp2.append(
                _row(
                    2,
                    g,
                    fam,
                    n,
                    m,
                    algo,
                    "successors",
                    "gpu",
                    config,
                    5.0,
                    iterations=100,
                    mem_mb=m * 8e-6,
                )
            )
        exp2.append(_row(2, g, fam, n, m, "crauser", "successors", "cpu", "", 20.0))
        exp2.append(_row(2, g, fam, n, m, "boost-dijkstra", "", "cpu", "", 4.0, mem_mb=m * 2e-5))
    for name, rows in ((recorded.EXP1_FILE, exp1), (recorded.EXP2_FILE, exp2)):
        w = recorded.ResultsWriter(root / "fixturegpu" / name, dict(META))
        for r in rows:
            w.add(r)
        w.flush()
    return root


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return pf.load("fixturegpu", fixture_results(tmp_path_factory.mktemp("results")))


def _check_axes(fig, *, label="NVIDIA Fixture GPU, 2026-11-30"):
    titles = [fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]
    assert any(label in t for t in titles), titles
    for ax in fig.axes:
        if ax.lines or ax.collections:
            assert "(" in ax.get_ylabel(), f"no unit on {ax.get_ylabel()!r}"
            if ax.get_xscale() == "log":
                assert "(" in ax.get_xlabel(), f"no unit on {ax.get_xlabel()!r}"


def test_exp1_figures_draw_every_solver(data):
    paper = pf.paper_values()
    fig = pf.exp1_times(data)
    _check_axes(fig)
    succ = fig.axes[0]
    assert len(succ.lines) == 6 and succ.get_yscale() == "log"
    assert list(succ.lines[0].get_xdata()) == [1.0, 2.0, 4.0]
    fig = pf.exp1_ratios(data, paper)
    _check_axes(fig)
    ratio = {ln.get_label(): ln.get_ydata() for ln in fig.axes[0].lines}
    assert list(ratio["GPU Martín / GPU Crauser (successors)"]) == pytest.approx([4.0, 4.0, 4.0])
    assert list(fig.axes[1].lines[0].get_ydata()) == pytest.approx([96.0] * 3)


def test_exp2_lines_never_join_two_sizes(data):
    fig = pf.exp2_random_times(data)
    _check_axes(fig)
    for ax, size in zip(fig.axes, ("24k", "49k", "98k"), strict=True):
        assert ax.get_title() == f"random {size} nodes"
        assert len(ax.lines) == 5  # GPU Crauser default/tuned, GPU Martín, CPU Crauser, Boost
        for line in ax.lines:
            assert list(line.get_xdata()) == [2, 20, 200, 2000]
    fig = pf.exp2_other_times(data)
    _check_axes(fig)
    ax = fig.axes[0]
    assert not ax.lines  # points only: unrelated real graphs are never joined


def test_tuned_boost_and_memory_figures(data):
    paper = pf.paper_values()
    fig = pf.tuned_vs_default(data, paper)
    bars = fig.axes[0].patches
    assert len(bars) == 12 and bars[0].get_height() == pytest.approx(2.0 / 1.5)
    fig = pf.gpu_vs_boost(data, paper)
    _check_axes(fig)
    lines = [ln for ln in fig.axes[0].lines if ln.get_label().endswith("recorded")]
    assert len(lines) == 3
    fig = pf.memory(data, paper)
    _check_axes(fig)
    assert fig.axes[0].get_xscale() == "log"


def test_missing_files_show_not_measured(tmp_path):
    empty = pf.load("nothing", tmp_path)  # legacy files are read from the real results folder only
    fig = pf.exp1_times(empty)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts and all(t.startswith("not measured") for t in texts)
    table = pf.table1_side_by_side([])
    assert "192-A" in table and "No recorded tuning results" in table


def test_other_graphs_use_one_style_per_solver_and_keep_the_legend_off_the_data(data):
    import numpy as np
    from matplotlib.collections import PathCollection

    fig = pf.exp2_other_times(data)
    ax = fig.axes[0]
    points = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    styles = {
        (tuple(np.round(c.get_facecolor()[0], 3)), c.get_paths()[0].vertices.tobytes())
        for c in points
    }
    assert len(styles) == len(points) <= len(pf.SOLVER_STYLE)  # one colour x marker per solver
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.y0 >= ax.get_window_extent().y1 - 1  # above the axes, not over the dots
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "fe_body (0.33M arcs)" in labels and "kronecker-logn16 (6M arcs)" in labels


def test_log_axes_label_more_than_one_tick():
    """Exp 2 (B)'s right panel, on the recorded tuning results (speedups 1-7x: one decade)."""
    fig = pf.tuned_vs_default(pf.load("h200"), pf.paper_values())
    fig.canvas.draw()
    ax = fig.axes[1]
    assert ax.get_yscale() == "log"
    lo, hi = ax.get_ylim()
    shown = [
        t.get_text()
        for t in ax.get_yticklabels()
        if t.get_text() and lo <= t.get_position()[1] <= hi
    ]
    assert len(shown) >= 2 and all(t.endswith("×") for t in shown), shown


def test_table1_footnotes_are_separate_paragraphs():
    import importlib.resources as resources

    from tuning_db import Store

    with Store("sqlite://", seed=False) as store:
        store.import_json(resources.files("tuning_db") / "data" / "h200.json", trials=False)
        best = store.all_best()
    text = pf.table1_side_by_side(best)
    foot = text.split("\n\n", 1)[1]
    paragraphs = foot.split("\n\n")
    assert len(paragraphs) >= 3 and all("\n" not in p for p in paragraphs)
    assert not any(p.startswith(("* ", "- ", "+ ")) for p in paragraphs)  # no accidental bullet
    assert any(p.startswith("\\* tuned configuration") for p in paragraphs)
