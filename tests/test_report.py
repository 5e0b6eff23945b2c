"""Reports are pure functions of BestRecord values: tested without a GPU or a database."""

from __future__ import annotations

import base64
import csv
import dataclasses
import datetime as dt
import io
import re
import shutil
import subprocess

import pytest

from sssp.classes import DEGREE_CLASSES, SIZE_LABELS, GraphClass, paper_classes
from sssp.config import KernelConfig, LaunchConfig
from sssp.errors import TuningError
from tuner import report
from tuning_db.records import BestRecord, DeviceRecord, KernelVersionRecord

pytestmark = pytest.mark.timeout(60)

H200 = DeviceRecord("NVIDIA H200", "GPU-x", "9.0", 132, "580", "13.0")
A100 = DeviceRecord("NVIDIA A100-SXM4-80GB", "GPU-y", "8.0", 108, "580", "13.0")
KV = KernelVersionRecord("abc")
BLOCKS = (64, 128, 192, 256, 384, 512, 768, 1024)
L1S = ("N", "A", "S")


def picks(cls: GraphClass) -> LaunchConfig:
    """Distinct, predictable picks per class: relax/min/update differ, and so do classes."""
    i = list(SIZE_LABELS).index(cls.size) * 4 + list(DEGREE_CLASSES).index(cls.degree)
    return LaunchConfig(
        relax=KernelConfig(BLOCKS[i % 8], L1S[i % 3]),
        min=KernelConfig(BLOCKS[(i + 1) % 8], L1S[(i + 1) % 3]),
        update=KernelConfig(BLOCKS[(i + 2) % 8], L1S[(i + 2) % 3]),
        loop="legacy",  # the paper's kernels, whose per-kernel picks Table 1 shows
    )


def make(
    cls: GraphClass,
    *,
    device: DeviceRecord = H200,
    kept_default: bool = False,
    replay: bool = False,
    speedup: float = 1.2345,
    updated_at: dt.datetime | None = None,
) -> BestRecord:
    tuned = picks(cls)
    return BestRecord(
        device=device,
        kernel_version=KV,
        graph_class=cls,
        algorithm="crauser",
        variant="successors",
        config=LaunchConfig.paper() if kept_default else tuned,
        tuned_config=tuned,
        tuned_median_ms=10.0,
        default_median_ms=10.0 * speedup,
        speedup=speedup,
        n_sources=100,
        kept_default=kept_default,
        replay=replay,
        updated_at=updated_at or dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    )


def csv_grid(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def md_rows(text: str) -> list[list[str]]:
    """Data rows of the Markdown table (header and separator dropped), cells unescaped."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert re.fullmatch(r"\|(---\|)+", lines[1])
    return [
        [c.strip().replace("\\*", "*") for c in re.split(r"(?<!\\)\|", ln)[1:-1]]
        for ln in lines[2:]
    ]


@pytest.fixture
def full() -> list[BestRecord]:
    return [make(c) for c in paper_classes()]


@pytest.mark.parametrize("fmt", report.FORMATS)
@pytest.mark.parametrize("fn", [report.table1, report.speedup_table, report.show_table])
def test_every_format_renders(full, fn, fmt):
    text = fn(full, fmt=fmt)
    assert text.endswith("\n") and len(text.splitlines()) > 3


def test_unknown_format_and_empty_input_are_domain_errors(full):
    with pytest.raises(TuningError, match="'xlsx'"):
        report.table1(full, fmt="xlsx")
    with pytest.raises(TuningError, match="no tuning results"):
        report.table1([])
    with pytest.raises(TuningError, match="'V100'.*NVIDIA H200"):
        report.table1(full, device_name="V100")


def test_md_table1_shape_and_cells(full):
    text = report.table1(full, fmt="md")
    header = [c.strip() for c in text.splitlines()[2].split("|")[1:-1]]
    assert header == ["size", "kernel", "deg2 H200", "deg20 H200", "deg200 H200", "deg1000 H200"]
    rows = md_rows(text)
    assert len(rows) == 9
    assert [r[:2] for r in rows] == [
        [s, k] for s in ("24k", "49k", "98k") for k in ("relax", "min", "update")
    ]
    by_class = {(c.size, c.degree): picks(c) for c in paper_classes()}
    for row in rows:
        size, kernel = row[:2]
        for deg, cell in zip(("deg2", "deg20", "deg200", "deg1000"), row[2:], strict=True):
            assert cell == by_class[size, deg].kernel(kernel).label
    assert report.MISSING not in text
    assert report.KEPT_DEFAULT_NOTE not in text
    assert report.REPLAY_LABEL not in text


def test_sizes_sort_numerically_and_missing_cells_show_dash():
    recs = [
        make(GraphClass("98k", "deg2")),
        make(GraphClass("196k", "deg20")),
        make(GraphClass("24k", "deg1000")),
    ]
    grid = csv_grid(report.table1(recs, fmt="csv"))
    assert [r[0] for r in grid[1:]] == ["24k"] * 3 + ["49k"] * 3 + ["98k"] * 3 + ["196k"] * 3
    assert grid[1][5] == picks(GraphClass("24k", "deg1000")).relax.label
    assert grid[1][2:5] == [report.MISSING] * 3
    assert all(c == report.MISSING for r in grid[4:7] for c in r[2:])  # 49k: nothing tuned


def test_missing_class_shows_dash(full):
    dropped = GraphClass("49k", "deg200")
    rows = md_rows(report.table1([r for r in full if r.graph_class != dropped], fmt="md"))
    for row in rows:
        missing = [i for i, c in enumerate(row) if c == report.MISSING]
        assert missing == ([4] if row[0] == "49k" else [])


def test_kept_default_marker_and_footnote(full):
    cls = GraphClass("24k", "deg20")
    recs = [make(c, kept_default=c == cls) for c in paper_classes()]
    for fmt in ("md", "latex", "html"):  # CSV is the bare grid; its tidy form has kept_default
        assert report.KEPT_DEFAULT_NOTE in report.table1(recs, fmt=fmt)
    grid = csv_grid(report.table1(recs, fmt="csv"))
    # the cell shows the search's pick (not the default that runs), marked
    assert grid[1][3] == picks(cls).relax.label + report.KEPT_DEFAULT_MARK
    assert grid[1][2] == picks(GraphClass("24k", "deg2")).relax.label
    marked = [c for r in grid[1:] for c in r[2:] if c.endswith(report.KEPT_DEFAULT_MARK)]
    assert len(marked) == 3
    assert "192-A\\*" not in report.table1(full, fmt="md")  # md escapes the marker
    md = report.table1(recs, fmt="md")
    assert picks(cls).min.label + "\\*" in md


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_replay_label_iff_a_record_is_replayed(full, fmt):
    if fmt == "csv":
        # CSV is the bare grid (one table per file): the replay flag is a column of the long table.
        recs = [make(c, replay=i == 5) for i, c in enumerate(paper_classes())]
        rows = list(csv.DictReader(io.StringIO(report.long_table(recs))))
        assert {r["results"] for r in rows} == {"recorded", "replayed"}
        assert [r["replay"] for r in rows].count("True") == 1  # one row per record
        return
    assert report.REPLAY_LABEL not in report.table1(full, fmt=fmt)
    recs = [make(c, replay=i == 5) for i, c in enumerate(paper_classes())]
    text = report.table1(recs, fmt=fmt)
    assert report.REPLAY_LABEL in text
    if fmt == "md":
        assert report.REPLAY_LABEL in text.splitlines()[0]
    elif fmt == "csv":
        pytest.fail("CSV has no title")
    elif fmt == "latex":
        assert re.search(r"\\caption\{[^}]*" + re.escape(report.REPLAY_LABEL), text)
    else:
        assert re.search(r"<caption>[^<]*" + re.escape(report.REPLAY_LABEL), text)
    assert report.REPLAY_LABEL in report.speedup_table(recs, fmt=fmt)
    assert report.REPLAY_LABEL not in report.speedup_table(full, fmt=fmt)


def test_html_escapes_device_names():
    evil = DeviceRecord("Evil <GPU> & co", "GPU-z", "9.0", 1, "1", "1")
    recs = [make(c, device=evil) for c in paper_classes()[:2]]
    for fn in (report.table1, report.speedup_table, report.show_table):
        text = fn(recs, fmt="html")
        assert "<GPU>" not in text
        assert "Evil &lt;GPU&gt; &amp; co" in text
        assert text.count("<tr>") == text.count("</tr>")


def test_latex_escapes_specials():
    odd = DeviceRecord("GPU_1 50% R&D", "GPU-z", "9.0", 1, "1", "1")
    text = report.show_table([make(GraphClass("24k", "deg2"), device=odd)], fmt="latex")
    assert r"GPU\_1 50\% R\&D" in text
    assert "\\begin{longtable}" in text and "\\hline" in text and "\\end{document}" in text
    body = [ln for ln in text.splitlines() if ln.endswith(r"\\") and " & " in ln]
    assert body and all(ln.count(" & ") == 10 for ln in body)  # 11 columns, no stray unescaped "&"


def test_csv_grid(full):
    grid = csv_grid(report.table1(full, fmt="csv"))
    assert grid[0] == ["size", "kernel", "deg2 H200", "deg20 H200", "deg200 H200", "deg1000 H200"]
    expected = [
        [
            s,
            k,
            *(
                picks(GraphClass(s, d)).kernel(k).label
                for d in ("deg2", "deg20", "deg200", "deg1000")
            ),
        ]
        for s in ("24k", "49k", "98k")
        for k in ("relax", "min", "update")
    ]
    assert grid[1:] == expected


def test_two_devices_give_eight_columns(full):
    both = full + [make(c, device=A100) for c in paper_classes()]
    grid = csv_grid(report.table1(both, fmt="csv"))
    assert len(grid[0]) == 2 + 8
    # degree class outer, devices sorted by name inner
    assert grid[0][2:4] == ["deg2 A100-SXM4-80GB", "deg2 H200"]
    assert grid[0][-1] == "deg1000 H200"
    assert all(len(r) == 10 for r in grid)
    only = csv_grid(report.table1(both, fmt="csv", device_name="h200"))
    assert len(only[0]) == 6 and only == csv_grid(report.table1(full, fmt="csv"))
    assert len(md_rows(report.table1(both, fmt="md"))[0]) == 10


def test_newest_record_wins_a_cell():
    cls = GraphClass("24k", "deg2")
    old = make(cls, updated_at=dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
    new_cfg = dataclasses.replace(LaunchConfig.uniform(1024, "S"), loop="legacy")
    new = BestRecord(
        **{
            **old.__dict__,
            "tuned_config": new_cfg,
            "updated_at": dt.datetime(2026, 6, 1, tzinfo=dt.UTC),
        }
    )
    for recs in ([old, new], [new, old]):
        grid = csv_grid(report.table1(recs, fmt="csv"))
        assert grid[1][2] == "1024-S"


def test_speedup_table_rows(full):
    recs = list(full)
    recs[0] = make(paper_classes()[0], kept_default=True, speedup=0.98765, replay=True)
    grid = csv_grid(report.speedup_table(recs, fmt="csv"))
    assert grid[0] == [
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
    ]
    assert len(grid) == 13
    assert grid[1] == [
        "24k/deg2",
        "NVIDIA H200",
        "paper kernels",
        "crauser/successors",
        "9.877",
        "10.000",
        "0.99×",
        "100",
        "yes",
        "replay",
    ]
    assert grid[2][6:] == ["1.23×", "100", "no", ""]
    assert "1.23×" in report.speedup_table(recs, fmt="md")
    assert r"1.23$\times$" in report.speedup_table(recs, fmt="latex")


def test_show_table_lists_config_in_effect_and_picks():
    cls = GraphClass("49k", "deg200")
    rec = make(cls, kept_default=True)
    t = report.show_table_data([rec])
    grid = [list(t.header), *map(list, t.rows)]
    assert grid[0][:7] == ["device", "class", "algorithm", "relax", "min", "update", "tuned picks"]
    row = grid[1]
    assert row[:6] == ["NVIDIA H200", "49k/deg200", "crauser/successors", "256-N", "256-N", "256-N"]
    p = picks(cls)
    assert row[6] == f"{p.relax.label} {p.min.label} {p.update.label}"
    assert row[9] == "2026-01-02 03:04:05+00:00"


# -- exports a reader can open ------------------------------------------------------------------
def test_html_is_a_complete_utf8_document(full):
    from html.parser import HTMLParser

    text = report.render(
        [report.table1_data(full), report.speedup_table_data(full)],
        "html",
        about=report.about(full),
    )
    assert text.startswith("<!DOCTYPE html>\n") and text.rstrip().endswith("</html>")
    assert '<meta charset="utf-8">' in text.split("</head>")[0]
    assert text.count("<table>") == 2 and "<title>" in text

    class Balance(HTMLParser):
        """Counts open elements; void elements (meta, br) never close."""

        def __init__(self):
            super().__init__()
            self.stack: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag not in ("meta", "br", "img"):
                self.stack.append(tag)

        def handle_endtag(self, tag):
            assert self.stack.pop() == tag

    parser = Balance()
    parser.feed(text)
    assert parser.stack == []
    # the × of the speedups survives a round trip through UTF-8 bytes
    assert "1.23×" in text.encode("utf-8").decode("utf-8")


def test_latex_caption_has_no_table_number(full):
    text = report.table1(full, fmt="latex")
    caption = re.search(r"\\caption\{(.*)\}", text).group(1)
    assert not caption.lower().startswith("table")  # LaTeX writes "Table 1:" itself
    assert "Table 1" in caption  # but says which of the paper's tables it is


@pytest.mark.parametrize("speedup", [1.0, 1.8912, 0.98765, 12.0])
def test_speedups_have_one_format(speedup):
    recs = [make(c, speedup=speedup) for c in paper_classes()[:2]]
    for fmt in ("md", "html"):
        for fn in (report.speedup_table, report.show_table):
            cells = re.findall(r"\d+(?:\.\d+)?×", fn(recs, fmt=fmt))
            assert cells and all(re.fullmatch(r"\d+\.\d\d×", c) for c in cells), cells
    assert f"{speedup:.2f}×" in report.speedup_table(recs)


@pytest.mark.parametrize("fmt", ["md", "latex", "html"])
@pytest.mark.parametrize("fn", [report.table1, report.speedup_table, report.show_table])
def test_every_report_names_device_date_and_provenance(full, fn, fmt):
    text = fn(full, fmt=fmt)
    assert "NVIDIA H200" in text and "driver 580" in text
    assert "2026-01-02 03:04 UTC" in text  # when the records were measured
    assert "recorded" in text and "not measured by this command" in text
    assert "report made: " in text
    measured = fn(full, fmt=fmt, results="measured")
    assert "measured now" in measured and "not measured by this command" not in measured


def test_about_spans_the_measurement_dates_and_names_the_database():
    recs = [
        make(GraphClass("24k", "deg2"), updated_at=dt.datetime(2025, 5, 6, 7, 8, tzinfo=dt.UTC)),
        make(GraphClass("49k", "deg2"), updated_at=dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)),
    ]
    lines = report.about(
        recs, database="sqlite:///x.sqlite", now=dt.datetime(2026, 2, 3, 4, 5, tzinfo=dt.UTC)
    )
    assert lines == (
        "device: NVIDIA H200 (driver 580, CUDA 13.0)",
        "stored: 2025-05-06 07:08 UTC to 2026-01-02 03:04 UTC",
        "results: recorded, read from the tuning database sqlite:///x.sqlite; "
        "not measured by this command",
        "report made: 2026-02-03 04:05 UTC",
    )
    with pytest.raises(TuningError, match="'guessed'"):
        report.about(recs, results="guessed")


def test_long_table_is_tidy_for_pandas(full):
    pd = pytest.importorskip("pandas")
    recs = list(full)
    recs[1] = make(paper_classes()[1], kept_default=True, replay=True, speedup=0.98765)
    df = pd.read_csv(io.StringIO(report.long_table(recs)))
    assert list(df.columns) == list(report.LONG_HEADER)
    assert len(df) == 12  # one row per record
    assert df["speedup"].dtype == float and df["default_ms"].dtype == float
    assert df["kept_default"].dtype == bool and df["sources"].dtype == "int64"
    row = df[(df["size"] == "24k") & (df["degree"] == "deg20")].iloc[0]
    assert row["speedup"] == pytest.approx(0.98765) and row["kept_default"]
    assert row["results"] == "replayed" and row["min"] == "256-N" and row["diameter"] == "lowdiam"
    assert row["tuned_min"] == picks(paper_classes()[1]).min.label
    assert pd.to_datetime(df["measured_at"]).dt.tz is not None
    assert set(df["device"]) == {"NVIDIA H200"}


def test_csv_is_one_table():
    recs = [make(c) for c in paper_classes()[:2]]
    with pytest.raises(TuningError, match="one table per file"):
        report.render([report.table1_data(recs), report.speedup_table_data(recs)], "csv")


def test_show_table_lists_options():
    import dataclasses

    rec = dataclasses.replace(
        make(GraphClass("49k", "deg200")), options={"loop": "persistent", "delta": 64}
    )
    grid = csv_grid(report.show_table([rec], fmt="csv"))
    assert grid[0][-1] == "options" and grid[1][-1] == "delta=64 loop=persistent"


def test_engine2_records_get_their_own_table():
    """Engine 2's searched configurations stay out of Table 1 and appear with their loop."""
    import dataclasses

    paper = make(GraphClass("49k", "deg2"))
    searched = LaunchConfig(
        KernelConfig(1024, "A", 32), loop="graph", blocks_per_sm=1, local_limit=0
    )
    engine = dataclasses.replace(
        make(GraphClass("49k", "deg200")),
        config=searched,
        tuned_config=searched,
        options=searched.options(),
    )
    t1 = report.table1_data([paper, engine])
    assert all(
        row[3] == report.MISSING for row in t1.rows
    )  # the deg200 column holds no engine pick
    et = report.engine_table_data([paper, engine])
    assert len(et.rows) == 1 and et.rows[0][:6] == (
        "49k/deg200",
        "NVIDIA H200",
        "crauser/successors",
        "-",
        "graph",
        "1024-A/x32",
    )
    assert et.rows[0][7:9] == (
        report.MISSING,
        report.MISSING,
    )  # blocks/SM and local limit: persistent only
    engines = {row[2] for row in report.speedup_table_data([paper, engine]).rows}
    assert engines == {"paper kernels", "engine 2 (graph)"}
    cluster = LaunchConfig(
        KernelConfig(1024, "N", 8),
        KernelConfig(1024),
        KernelConfig(1024),
        loop="cluster",
        cluster=16,
    )
    nf = dataclasses.replace(
        make(GraphClass("98k", "deg2")),
        config=cluster,
        tuned_config=cluster,
        options={**cluster.options(), "algorithm": "near-far", "delta_scale": 1.0},
    )
    (row,) = report.engine_table_data([nf]).rows
    assert row[4:9] == ("cluster x16", "1024-N/x8", "1024-N", report.MISSING, report.MISSING)
    fused = dataclasses.replace(cluster, fuse=True)
    nf = dataclasses.replace(
        nf, config=fused, tuned_config=fused, options={**nf.options, **fused.options()}
    )
    (row,) = report.engine_table_data([nf]).rows
    assert row[4] == "cluster x16 fused"
    phast = LaunchConfig(KernelConfig(1024, "N", 4), loop="phast", local_limit=2048, core=1024)
    nf = dataclasses.replace(
        nf, config=phast, tuned_config=phast, options={**phast.options(), "algorithm": "near-far"}
    )
    (row,) = report.engine_table_data([nf]).rows
    assert row[4] == "phast core<=1024" and row[7:9] == (report.MISSING, report.MISSING)


# -- reports a reader opens: tidy CSV, a LaTeX document that compiles, HTML with figures ----------
def engine2(
    cls: GraphClass,
    *,
    loop: str = "persistent",
    algorithm: str = "auto",
    speedup: float = 3.0,
    replay: bool = False,
) -> BestRecord:
    cfg = LaunchConfig(KernelConfig(1024, "N", 32), loop=loop, blocks_per_sm=1, local_limit=0)
    return dataclasses.replace(
        make(cls, speedup=speedup, replay=replay),
        algorithm=algorithm,
        config=cfg,
        tuned_config=cfg,
        options=cfg.options(),
        kernel_version=KernelVersionRecord("def"),
    )


@pytest.fixture
def mixed() -> list[BestRecord]:
    """The paper kernels' 12 classes, engine 2 on the same classes, and engine 2 on the
    high-diameter classes of the same sizes and degrees (keys that differ by diameter only)."""
    return (
        [make(c) for c in paper_classes()]
        + [engine2(c) for c in paper_classes()]
        + [
            engine2(GraphClass(size, deg, "highdiam"), loop="cluster", speedup=10.0)
            for size in ("24k", "49k", "98k")
            for deg in ("deg2", "deg20")
        ]
    )


def test_csv_has_the_full_class_key_and_one_row_per_record(mixed):
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(io.StringIO(report.long_table(mixed)))
    assert len(df) == len(mixed)  # one row per record: no figure is repeated per kernel
    assert not df.duplicated(list(report.LONG_KEY)).any()
    assert {"size", "degree", "diameter", "kernel_digest"} <= set(report.LONG_KEY)
    assert set(df["diameter"]) == {"lowdiam", "highdiam"}
    both = df[(df["size"] == "24k") & (df["degree"] == "deg2") & (df["kernel_digest"] == "def")]
    assert sorted(both["diameter"]) == ["highdiam", "lowdiam"]
    # Sums over rows count each record once.
    assert df["default_ms"].sum() == pytest.approx(sum(r.default_median_ms for r in mixed))
    assert set(df["engine"]) == {"paper kernels", "engine 2 (persistent)", "engine 2 (cluster)"}
    assert {"relax", "min", "update", "tuned_relax", "tuned_min", "tuned_update"} <= set(df.columns)


def test_latex_is_a_complete_document(mixed):
    text = report.render(
        [
            report.table1_data(mixed),
            report.engine_table_data(mixed),
            report.speedup_table_data(mixed),
        ],
        "latex",
        about=report.about(mixed),
    )
    body = text[text.index(r"\begin{document}") :]
    assert r"\documentclass" in text.split(r"\begin{document}")[0]
    assert body.rstrip().endswith(r"\end{document}") and body.count(r"\begin{longtable}") == 3
    assert "report made:" in body  # the provenance is inside the document
    # Numbers right-aligned: the speedup table's ms and speedup columns are 'r' columns.
    spec = re.findall(r"\\begin\{longtable\}\{([^}]*(?:\}[^}]*)*?)\}\n\\caption\{End-to-end", text)
    assert spec and "rrr" in spec[0]


def _compile(tex: str, tmp_path) -> str:
    """pdflatex twice (longtable), the second run's log."""
    path = tmp_path / "report.tex"
    path.write_text(tex, encoding="utf-8")
    for _ in range(2):
        proc = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", path.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout[-3000:]
    return (tmp_path / "report.log").read_text(errors="replace")


@pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex is not installed (.ci/run installs Debian's texlive-latex-base)",
)
@pytest.mark.parametrize("what", ["report", "show", "table1"])
def test_latex_compiles_and_fits_the_page(what, tmp_path):
    """The shipped results, rendered as `tune report`, `tune show` and `table1` do: pdflatex
    accepts the document and no table is wider than the page."""
    import importlib.resources as resources

    from tuning_db import Store

    with Store("sqlite://", seed=False) as store:
        for name in ("h200.json", "h200-engine2.json"):
            store.import_json(resources.files("tuning_db") / "data" / name, trials=False)
        recs = store.all_best()
    if what == "report":
        tables = [
            report.table1_data(recs),
            report.engine_table_data(recs),
            report.speedup_table_data(recs),
        ]
        tex = report.render(tables, "latex", about=report.about(recs))
    elif what == "show":
        tex = report.show_table(recs, "latex")
    else:
        tex = report.table1(recs, fmt="latex")
    log = _compile(tex, tmp_path)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    assert "Rerun" not in log and "Output written on report.pdf" in log


def test_html_has_the_heatmap_and_the_dot_plot(mixed):
    from xml.etree import ElementTree

    from tuner import figures

    baselines = figures.read_baselines(
        "graph,n,gpu_ms,boost_ms,gap_ms\nrandom-24k-deg2,24576,0.2,2.5,0.3\nt60k,60005,2.0,7.0,1.2\n",
        "bench.csv",
    )
    figs = [figures.speedup_heatmap(mixed), figures.baseline_dotplot(baselines, source="bench.csv")]
    text = report.render(
        [report.speedup_table_data(mixed)], "html", about=report.about(mixed), figures=figs
    )
    uris = re.findall(
        r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]+)">', text
    )
    assert len(uris) == 2
    heat, dots = (base64.b64decode(u).decode("utf-8") for u, _ in uris)
    for svg in (heat, dots):
        ElementTree.fromstring(svg.encode())  # well-formed SVG
    assert "1.23×" in heat and "10.00×" in heat and "3.00×" in heat  # every panel's cells, labelled
    assert "high diameter" in heat and "engine 2" in heat and "paper kernels" in heat
    assert "t60k" in dots and "random-24k-deg2" in dots and "Boost" in dots
    assert "12.5x over Boost" in uris[1][1]  # the alt text says what the figure shows
    assert "recorded benchmark times from bench.csv" in text  # provenance in the caption


def test_html_numbers_right_aligned_and_cells_never_wrap(mixed):
    text = report.render([report.speedup_table_data(mixed)], "html", about=report.about(mixed))
    style = re.search(r"<style>(.*)</style>", text).group(1)
    assert re.search(r"th,td\{[^}]*white-space:nowrap", style)
    assert re.search(r"\.num\{[^}]*text-align:right", style)
    header = re.search(r"<thead>\s*<tr>(.*?)</tr>", text, re.S).group(1)
    cells = re.findall(r"<th( class=\"num\")?>([^<]*)</th>", header)
    numeric = {name for cls, name in cells if cls}
    assert numeric == {"default ms", "tuned ms", "speedup", "sources"}
    row = re.search(r"<tbody>\s*<tr>(.*?)</tr>", text, re.S).group(1)
    assert re.search(r'<td class="num">\d+\.\d\d\d</td>', row) and re.search(r"<td>\d+k/deg", row)


def test_figures_label_replayed_and_recorded_data():
    from tuner import figures

    recs = [make(c, replay=c.degree == "deg2") for c in paper_classes()]
    fig = figures.speedup_heatmap(recs)
    assert report.REPLAY_LABEL in fig.svg
    assert any("recorded" in n for n in fig.notes)
    assert (
        report.REPLAY_LABEL not in figures.speedup_heatmap([make(c) for c in paper_classes()]).svg
    )


def test_bad_baselines_name_the_file_and_line():
    from tuner import figures

    with pytest.raises(TuningError, match=r"b\.csv: .*gpu_ms"):
        figures.read_baselines("graph,boost_ms\ng,1\n", "b.csv")
    with pytest.raises(TuningError, match=r"b\.csv:3: boost_ms 'fast'"):
        figures.read_baselines("graph,gpu_ms,boost_ms\ng,1,2\nh,1,fast\n", "b.csv")
    with pytest.raises(TuningError, match="only a header"):
        figures.read_baselines("graph,gpu_ms,gap_ms\n", "b.csv")
