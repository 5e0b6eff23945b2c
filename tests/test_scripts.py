"""The shell scripts: private temporary folders, never fixed /tmp paths."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.sh")), ids=lambda p: p.name)
def test_no_fixed_tmp_paths(script):
    for number, line in enumerate(script.read_text().splitlines(), 1):
        if "/tmp" in line and not line.lstrip().startswith("#"):
            # Only as mktemp's fallback folder: ${TMPDIR:-/tmp}/name.XXXXXX
            assert re.search(r"mktemp -d \"\$\{TMPDIR:-/tmp\}/[\w.-]+\.XXXXXX\"", line), (
                f"{script.name}:{number}: {line.strip()}"
            )


def test_gpu_host_site_folder_is_private_and_removed(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # A stand-in python3 that records where pip was told to install, and that folder's mode, then
    # fails as a broken wheel would (so the script stops after the install step).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "log"
    fake = bin_dir / "python3"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        "while [[ $# -gt 0 ]]; do [[ $1 == --target ]] && target=$2; shift; done\n"
        f'echo "$target $(stat -c %a "$target")" > {log}\n'
        "exit 1\n"
    )
    fake.chmod(0o755)
    env = {**os.environ, "TMPDIR": str(tmp), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("SSSP_SITE", None)
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "gpu_host.sh"), str(wheels), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=100,
    )
    assert proc.returncode == 3, proc.stderr
    target, mode = log.read_text().split()
    assert Path(target).parent == tmp and Path(target).name.startswith("sssp-site.")
    assert mode == "700"  # private
    assert list(tmp.iterdir()) == []  # removed on exit


def _same_code():
    import importlib.util

    spec = importlib.util.spec_from_file_location("same_code", SCRIPTS / "same_code.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rekey_moves_only_the_old_digest_and_keeps_a_valid_export(tmp_path):
    """``scripts/same_code.py --rekey``: the records of the old engine digest move to the new one,
    others stay, and the file is still an export the tuning database reads."""
    import json

    from tuning_db import export

    name = "h200-engine2.json"  # the H200's engine records (both families, carried records)
    text = dict(export.shipped_exports())[name]
    doc = json.loads(text)
    old = doc["best"][0]["kernel_version"]["digest"]
    doc["best"][-1]["kernel_version"] = {**doc["best"][-1]["kernel_version"], "digest": "0" * 16}
    doc["kernel_versions"].append({**doc["kernel_versions"][0], "digest": "0" * 16})
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    moved, kept = _same_code().rekey(path, old, "f" * 16)

    assert (moved, kept) == (len(doc["best"]) - 1, 0)  # all but the last record
    after = json.loads(path.read_text(encoding="utf-8"))
    # Versions other than the old one (a run's, say) stay listed as they were.
    others = {v["digest"] for v in doc["kernel_versions"]} - {old}
    assert {v["digest"] for v in after["kernel_versions"]} == {"f" * 16} | others
    assert [b["kernel_version"]["digest"] for b in after["best"]] == ["f" * 16] * (
        len(doc["best"]) - 1
    ) + ["0" * 16]
    parsed = export.parse_text(path.read_text(encoding="utf-8"), str(path))
    assert len(parsed.bests) == len(doc["best"])
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def test_rekey_by_kernels_moves_the_unchanged_and_labels_the_carried(tmp_path):
    """Where only Crauser's kernels changed, near-far's records move as they are; Crauser's stay
    on the old digest, or with ``carry_changed`` move labelled with the digest they were
    measured on, which the record, the tuned look-up's detail and the reports name."""
    import json

    from tuner import report
    from tuning_db import export
    from tuning_db.records import MEASURED_ON

    script = _same_code()
    assert script.MEASURED_ON == MEASURED_ON
    name = "h200-engine2.json"  # the H200's engine records (both families, carried records)
    text = dict(export.shipped_exports())[name]
    doc = json.loads(text)
    for b in doc["best"]:  # as measured: no record carried yet
        b["options"].pop(MEASURED_ON, None)
    text = json.dumps(doc)
    old = doc["best"][0]["kernel_version"]["digest"]
    others = {v["digest"] for v in doc["kernel_versions"]} - {old}  # a run's, say: left alone
    families = [script.family(b["chosen_algorithm"]) for b in doc["best"]]
    assert {"near-far", "crauser"} <= set(families)  # the shipped file holds both
    path = tmp_path / name

    path.write_text(text, encoding="utf-8")
    moved, kept = script.rekey(path, old, "f" * 16, {"near-far"})
    assert (moved, kept) == (families.count("near-far"), families.count("crauser"))
    after = json.loads(path.read_text(encoding="utf-8"))
    assert {v["digest"] for v in after["kernel_versions"]} == {old, "f" * 16} | others
    for b, fam in zip(after["best"], families, strict=True):
        assert b["kernel_version"]["digest"] == ("f" * 16 if fam == "near-far" else old)
        assert MEASURED_ON not in b["options"]

    path.write_text(text, encoding="utf-8")
    assert script.rekey(path, old, "f" * 16, {"near-far"}, carry_changed=True) == (
        len(families),
        0,
    )
    after = json.loads(path.read_text(encoding="utf-8"))
    assert {v["digest"] for v in after["kernel_versions"]} == {"f" * 16} | others
    parsed = export.parse_text(path.read_text(encoding="utf-8"), str(path)).bests
    assert [r.measured_on for r in parsed] == [
        None if fam == "near-far" else old for fam in families
    ]
    lines = report.about(parsed)
    assert any(old in line and "without re-measuring" in line for line in lines)
    measured = [r for r in parsed if r.measured_on is None]
    assert measured and not any("re-measuring" in line for line in report.about(measured))
    # Carried again: a record keeps the digest it was measured on, the others get the last one.
    assert script.rekey(path, "f" * 16, "e" * 16, set(), carry_changed=True) == (len(families), 0)
    parsed = export.parse_text(path.read_text(encoding="utf-8"), str(path)).bests
    assert [r.measured_on for r in parsed] == [
        "f" * 16 if fam == "near-far" else old for fam in families
    ]
