#!/usr/bin/env python3
"""Benchmark the index's change check (sync) and its integrity check on a large catalog.

Run on demand from anywhere in the repository (not in CI; Python 3.11+, stdlib only):

    python3 bench/sync.py                            # 100,000 tools, 3 runs each
    python3 bench/sync.py --tools 10000 --runs 5
    python3 bench/sync.py --binary other=/path/to/toolctl   # compare another build
    python3 bench/sync.py --variant x=SOME_VAR=1              # same binary, one variable set
    python3 bench/sync.py --no-build --target /path/to/target

It builds the release binary and the `gen-catalog` example (unless --no-build), generates a
catalog (`bench/tools/gen_catalog.rs`, seed 42) in a temporary folder, and times, per binary or
variant, with TOOLCTL_WATCH=never (no watcher ever answers for the catalog):

    cold       `index rebuild`: the index deleted and built from every file (all read, parsed,
               checked with `Tool::check`, indexed)
    warm       `tool list --page-size 1` with the index up to date: the change check stats
               every file and folder the index knows and finds nothing to do
    integrity  the same after deleting `.toolctl/index.sqlite.stamp`: the index is then
               checked whole with `PRAGMA integrity_check` first (see src/index/verify.rs)

For each it prints the median wall time and the median CPU time (user + system of toolctl,
from os.wait4: steadier than wall time on a shared machine). The catalog's files are in the
page cache (just written), so "cold" means no index, not a cold disk.

The manual's figures (docs/search.md) without `Tool::check` and src/index/sync.rs's rayon figures came from one
build with two temporary switches read by --variant (TOOLCTL_BENCH_NO_CHECK skipped the check
in `Catalog::tool_from_text`; TOOLCTL_BENCH_RAYON compared each chunk's batches with rayon's
`par_iter_mut`), not kept in the code: to measure such a change again, build it and pass it
as --binary.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 42


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run argv to its end; its wall time and CPU time (user + system) in seconds."""
    started = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(argv, env=env, stdout=null, stderr=subprocess.PIPE)
        err = child.stderr.read() if child.stderr else b""
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed ({status}): {err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target", type=Path,
                        default=Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")))
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--binary", action="append", default=[], metavar="LABEL=PATH",
                        help="another toolctl to time (repeatable)")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL=VAR=VALUE",
                        help="the built toolctl with one more environment variable (repeatable)")
    parser.add_argument("--only", default="cold,warm,integrity",
                        help="which measures, comma-separated")
    args = parser.parse_args()

    release = args.target / "release"
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-p", "toolctl", "-p", "toolctl-bench",
                        "--bin", "toolctl", "--bin", "gen-catalog"], cwd=ROOT, check=True)
    toolctl = release / "toolctl"
    base_env = {**os.environ, "TOOLCTL_WATCH": "never"}
    base_env.pop("CI", None)
    variants: list[tuple[str, str, dict[str, str]]] = [("built", str(toolctl), base_env)]
    for spec in args.binary:
        label, path = spec.split("=", 1)
        variants.append((label, path, base_env))
    for spec in args.variant:
        label, var, value = spec.split("=", 2)
        variants.append((label, str(toolctl), {**base_env, var: value}))
    measures = args.only.split(",")

    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-sync-"))
    try:
        catalog = work / "catalog"
        started = time.perf_counter()
        subprocess.run([str(release / "gen-catalog"), "--tools", str(args.tools),
                        "--out", str(catalog), "--seed", str(SEED)], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"{args.tools} tools generated in {time.perf_counter() - started:.1f} s; "
              f"{args.runs} runs each, median; {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}")
        stamp = catalog / ".toolctl" / "index.sqlite.stamp"
        print(f"{'variant':<10} {'measure':<10} {'wall s':>8} {'cpu s':>8}")
        for label, binary, env in variants:
            base = [binary, "--catalog", str(catalog), "--json"]
            commands = {
                "cold": (["index", "rebuild"], lambda: None),
                "warm": (["tool", "list", "--page-size", "1"], lambda: None),
                "integrity": (["tool", "list", "--page-size", "1"],
                              lambda: stamp.unlink(missing_ok=True)),
            }
            # An index built by this binary, as it left it.
            run([*base, "index", "rebuild"], env)
            for name in measures:
                argv, before = commands[name]
                walls, cpus = [], []
                for _ in range(args.runs):
                    before()
                    wall, cpu = run([*base, *argv], env)
                    walls.append(wall)
                    cpus.append(cpu)
                print(f"{label:<10} {name:<10} {statistics.median(walls):>8.2f} "
                      f"{statistics.median(cpus):>8.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
