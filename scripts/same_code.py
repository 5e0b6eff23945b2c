"""Whether two source trees compile engine 2 to the same code, for every build the runtime can
ask for (``kernels.engine_params()``): each build's PTX from ``nvcc --ptx`` with the project's
options, compared with the names of internal-linkage symbols masked (nvcc gives them a hash that
changes from one compile to the next). Same PTX and same options give the same machine code, so
the measurements stored for one tree's kernel digest hold for the other's.

    python scripts/same_code.py OLD_TREE NEW_TREE      # e.g. a `git worktree` of the last commit
    python scripts/same_code.py OLD_TREE NEW_TREE --rekey tuning_db/data/h200-engine2.json
    python scripts/same_code.py OLD_TREE NEW_TREE --preprocessed   # minutes, not tens of them

Prints one line per differing build and a summary; exits 1 when any build of the old tree
differs (builds only the new tree has are listed as new). With ``--rekey`` and every build the
same, the tuning exports named move their records from the old tree's engine digest to the new
one's (each file is replaced whole, or left as it was). Needs
nvcc, no GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import hashlib, json, re, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import kernels

STAGE = sys.argv[2]

def ptx(params):
    text = kernels.source(params.source_file)
    with tempfile.TemporaryDirectory(prefix="same-code-") as tmp:
        src = Path(tmp) / params.source_file
        src.write_text(text, encoding="utf-8")
        out = Path(tmp) / "k.out"
        stage = "--ptx" if STAGE == "ptx" else "-E"
        opts = [*kernels.NVCC_OPTIONS, f"-arch={kernels.DEFAULT_ARCH}", stage, *params.nvcc_flags()]
        subprocess.run(["nvcc", *opts, "-o", str(out), str(src)], check=True, capture_output=True)
        if STAGE == "ptx":
            code = re.sub(rb"(_INTERNAL_|_GLOBAL__N__)[0-9a-f]{8}_", rb"\\1", out.read_bytes())
        else:  # the token stream: no line markers, no blank lines
            lines = out.read_bytes().splitlines()
            code = b"\\n".join(x for x in lines if x.strip() and not x.startswith(b"#"))
    return str(params.key), hashlib.sha256(code).hexdigest()

with ThreadPoolExecutor(max_workers=int(sys.argv[1])) as pool:
    got = dict(pool.map(ptx, kernels.engine_params()))
print(json.dumps({"digest": kernels.digest(kernels.ENGINE_SOURCE_FILE), "ptx": got}))
"""


def builds(tree: Path, jobs: int, stage: str = "ptx") -> dict:
    """``{"digest": ..., "ptx": {build key: sha256 of its masked PTX}}`` of the tree's kernels
    (``stage="preprocessed"``: of the preprocessed source's lines, line markers left out)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(jobs), stage],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"same_code: compiling {tree} failed: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="a source tree (the kernels package at its top)")
    parser.add_argument("new", type=Path, help="another source tree")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--rekey", type=Path, nargs="+", default=[], help="tuning exports (JSON) to move"
    )
    parser.add_argument(
        "--preprocessed",
        action="store_true",
        help="compare the preprocessed sources instead (seconds a build, not tens): the same "
        "text under the same options compiles to the same code",
    )
    args = parser.parse_args(argv)
    stage = "preprocessed" if args.preprocessed else "ptx"
    old, new = builds(args.old, args.jobs, stage), builds(args.new, args.jobs, stage)
    # Every build of the old tree must compile the same in the new one (the measurements stored
    # are of those builds); builds only the new tree has are new kernels, with nothing stored.
    differ = sorted(k for k in old["ptx"] if old["ptx"][k] != new["ptx"].get(k))
    added = sorted(new["ptx"].keys() - old["ptx"].keys())
    for key in differ:
        print(f"differs: {key}")
    print(
        f"engine 2 {old['digest']} -> {new['digest']}: {len(old['ptx']) - len(differ)} of "
        f"{len(old['ptx'])} builds "
        + ("compile to the same PTX" if stage == "ptx" else "preprocess to the same text")
        + ("" if not differ else f", {len(differ)} differ")
        + (f"; {len(added)} new builds ({', '.join(added)})" if added else "")
    )
    if differ:
        return 1
    for path in args.rekey:
        moved = rekey(path, old["digest"], new["digest"])
        print(f"{path}: {moved} records moved to kernels {new['digest']}")
    return 0


def rekey(path: Path, old: str, new: str) -> int:
    """Move the records of ``path`` (a tuning export) from engine digest ``old`` to ``new``;
    returns how many kernel versions and best records named ``old``."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    moved = 0
    for rec in [
        *doc.get("kernel_versions", []),
        *(b["kernel_version"] for b in doc.get("best", [])),
    ]:
        if rec.get("digest") == old:
            rec["digest"] = new
            moved += 1
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return moved


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("same_code: interrupted", file=sys.stderr)
        sys.exit(130)
