"""Whether two source trees compile engine 2 to the same code, for every build the runtime can
ask for (``kernels.engine_params()``): each build's PTX from ``nvcc --ptx`` with the project's
options, compared with the names of internal-linkage symbols masked (nvcc gives them a hash that
changes from one compile to the next). Same PTX and same options give the same machine code, so
the measurements stored for one tree's kernel digest hold for the other's. Where a build differs,
each kernel entry is compared too (its own PTX and that of every function it calls), so a change
confined to Crauser's kernels leaves near-far's measurements standing, and the other way round.

    python scripts/same_code.py OLD_TREE NEW_TREE      # e.g. a `git worktree` of the last commit
    python scripts/same_code.py OLD_TREE NEW_TREE --rekey tuning_db/data/h200-engine2.json
    python scripts/same_code.py OLD_TREE NEW_TREE --rekey FILE --carry-changed
    python scripts/same_code.py OLD_TREE NEW_TREE --preprocessed   # minutes, not tens of them

Prints one line per differing build (with its differing entries) and a summary; exits 1 when any
build of the old tree differs (builds only the new tree has are listed as new). With ``--rekey``
the tuning exports named move to the new tree's engine digest the records whose kernels (engine
2's Crauser/Martín kernels, or near-far's) compile the same in every build; with
``--carry-changed`` the records of changed kernels move too, each labelled with the digest it was
measured on (``options["measured_on_kernels"]``; the tuned look-up names it in its detail), for
a change that cannot move a tuning decision, until they are tuned again. Each file is replaced
whole, or left as it was. Needs nvcc, no GPU.
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
HEAD = re.compile(rb"^(?:\\.visible |\\.weak |\\.extern )?\\.(entry|func)\\s+(?:\\([^)]*\\)\\s*)?([A-Za-z_$][\\w$]*)", re.M)
CALL = re.compile(rb"\\bcall(?:\\.uni)?\\s+(?:\\([^)]*\\),\\s*)?([A-Za-z_$][\\w$]*)")

def entries(code):
    # {entry: sha256 of its text and of every function it calls, transitively}
    heads = list(HEAD.finditer(code))
    blocks = {}
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(code)
        blocks[m.group(2)] = (m.group(1), code[m.start():end])
    out = {}
    for name, (kind, _) in blocks.items():
        if kind != b"entry":
            continue
        seen, todo = set(), [name]
        while todo:
            f = todo.pop()
            if f in seen or f not in blocks:
                continue
            seen.add(f)
            todo.extend(CALL.findall(blocks[f][1]))
        h = hashlib.sha256(code[:heads[0].start()])  # the module's declarations and globals
        for f in sorted(seen):
            h.update(blocks[f][1])
        out[name.decode()] = h.hexdigest()
    return out

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
            per_entry = entries(code)
        else:  # the token stream: no line markers, no blank lines
            lines = out.read_bytes().splitlines()
            code = b"\\n".join(x for x in lines if x.strip() and not x.startswith(b"#"))
            per_entry = {}
    return str(params.key), hashlib.sha256(code).hexdigest(), per_entry

def names(*specs):
    return sorted({n for spec in specs for n in spec.cuda_names.values()})

try:  # the families are read from the new tree; an older one may lack some of these names
    families = {
        "crauser": names(*kernels.ENGINE_KERNELS.values()),
        "near-far": names(
            *kernels.NEARFAR_KERNELS.values(), *kernels.CLUSTER_KERNELS.values(),
            kernels.CLUSTER_BATCH_KERNEL,
        ),
    }
except AttributeError:
    families = {}
with ThreadPoolExecutor(max_workers=int(sys.argv[1])) as pool:
    got = list(pool.map(ptx, kernels.engine_params()))
print(json.dumps({
    "digest": kernels.digest(kernels.ENGINE_SOURCE_FILE),
    "ptx": {k: h for k, h, _ in got},
    "entries": {k: e for k, _, e in got},
    "families": families,
}))
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
        "--carry-changed",
        action="store_true",
        help="with --rekey: move the records of changed kernels too, labelled with the digest "
        "they were measured on",
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
    changed: set[str] = set()  # kernel entries that differ in some build
    for key in differ:
        entries = differing_entries(old["entries"].get(key, {}), new["entries"].get(key, {}))
        changed.update(entries)
        print(f"differs: {key}" + (f" ({', '.join(entries)})" if entries else ""))
    print(
        f"engine 2 {old['digest']} -> {new['digest']}: {len(old['ptx']) - len(differ)} of "
        f"{len(old['ptx'])} builds "
        + ("compile to the same PTX" if stage == "ptx" else "preprocess to the same text")
        + ("" if not differ else f", {len(differ)} differ")
        + (f"; {len(added)} new builds ({', '.join(added)})" if added else "")
    )
    if not differ:
        same = set(new["families"])
    elif stage == "ptx":
        same = {f for f, names in new["families"].items() if not changed & set(names)}
    else:  # preprocessed text says nothing about single kernels
        same = set()
    if differ:
        print(f"kernels compiled the same in every build: {', '.join(sorted(same)) or 'none'}")
    for path in args.rekey:
        moved, kept = rekey(path, old["digest"], new["digest"], same, args.carry_changed)
        print(
            f"{path}: {moved} records moved to kernels {new['digest']}"
            + (f", {kept} left on {old['digest']} (their kernels changed)" if kept else "")
        )
    return 1 if differ else 0


def differing_entries(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The kernel entries of one build whose code (with what they call) differs, or that only
    one tree has."""
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def family(chosen_algorithm: str) -> str:
    """The kernels a record's measurements ran: near-far's, or engine 2's Crauser/Martín ones."""
    return "near-far" if chosen_algorithm == "near-far" else "crauser"


MEASURED_ON = "measured_on_kernels"
"""The option naming the digest a carried record was measured on (``--carry-changed``)."""


def rekey(
    path: Path,
    old: str,
    new: str,
    same: set[str] | None = None,
    carry_changed: bool = False,
) -> tuple[int, int]:
    """Move the best records of ``path`` (a tuning export) from engine digest ``old`` to ``new``:
    those whose kernels (:func:`family`) are in ``same`` (``None``: all), and with
    ``carry_changed`` the others too, labelled ``options[MEASURED_ON] = old`` (unless an earlier
    carry labelled them: they were measured on that digest, not ``old``). Returns (moved,
    left on ``old``); the old kernel version stays listed while a record still names it."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    moved = kept = 0
    for best in doc.get("best", []):
        if best["kernel_version"].get("digest") != old:
            continue
        kin = same is None or family(best.get("chosen_algorithm") or "crauser") in same
        if not (kin or carry_changed):
            kept += 1
            continue
        best["kernel_version"] = {**best["kernel_version"], "digest": new}
        if not kin:  # a record carried before keeps the digest it was measured on
            best["options"] = {MEASURED_ON: old, **best.get("options", {})}
        moved += 1
    versions = doc.get("kernel_versions", [])
    for v in [v for v in versions if v.get("digest") == old]:
        renamed = {**v, "digest": new}
        if renamed not in versions:
            versions.append(renamed)
        if not kept:
            versions.remove(v)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return moved, kept


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("same_code", main)
