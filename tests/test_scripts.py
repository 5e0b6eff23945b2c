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
