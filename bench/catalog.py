#!/usr/bin/env python3
"""Benchmark toolctl's catalog commands on large generated catalogs.

Run on demand from anywhere in the repository (not in CI; Python 3.11+, stdlib only):

    python3 bench/catalog.py                        # one catalog of 10,000 tools, 50 runs each
    python3 bench/catalog.py --sizes 1000,10000     # several catalog sizes
    python3 bench/catalog.py --runs 100 --keep      # more runs; keep the catalogs afterwards
    python3 bench/catalog.py --build-time           # also time a clean release build (slow)

It builds the release binary and the `gen-catalog` example, generates a catalog of each size
into a temporary folder (`bench/tools/gen_catalog.rs`, seed 42), then runs each command below
--runs times (after a few warm-up runs) and reports the whole-process wall time (median and
95th percentile, in ms) and the peak resident memory of toolctl (ru_maxrss from os.wait4):

    tool put --bundle B FILE        a different new tool every run (bench-put-<i>), no conflicts
    tool get BUNDLE/SLUG@VERSION    a different existing tool every run
    tool list --page-size 50 --json
    bundle list --json

Every call passes --catalog DIR. The catalogs live in the page cache (they were just written),
so the figures are warm-cache figures.

Why memory is measured on separate runs: on Linux, exec() folds the RSS of the process image
it replaces into ru_maxrss, and a child spawned by this script starts as a copy (or, with
posix_spawn, a vfork) of the Python interpreter, so its ru_maxrss never reads below Python's
own RSS (13 MB at start, far more once a 10,000-tool listing is loaded). So timing runs spawn
toolctl directly (no extra process in the wall time), and RSS_RUNS more runs per command are
started through `sh -c 'toolctl … &'`: sh forks toolctl from its own small image and exits,
toolctl is re-parented to this script (a child subreaper, via prctl), and os.wait4 on it
reports toolctl's own peak (the method's floor, shown with the results, is about 1 MB).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# The cargo profile benchmarks build and run: `release` (what users install), or another one
# named by TOOLCTL_BENCH_PROFILE, such as `quick-release` (no cross-crate LTO, incremental: a
# library change rebuilds in about a minute instead of four; CONTRIBUTING.md, "Build times").
PROFILE = os.environ.get("TOOLCTL_BENCH_PROFILE", "release")
PROFILE_DIR = TARGET / PROFILE
TOOLCTL = PROFILE_DIR / "toolctl"
GEN_CATALOG = PROFILE_DIR / "gen-catalog"
WARMUP = 3
RSS_RUNS = 5
SEED = 42
PR_SET_CHILD_SUBREAPER = 36

# No command starts an index watcher by itself during a benchmark (docs/search.md, "The index
# watcher"): figures are taken walking, and with a watcher only inside `watcher()`.
os.environ["TOOLCTL_WATCH"] = "never"


@dataclass
class Result:
    size: int
    command: str
    times_ms: list[float]
    max_rss_kb: int

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def p95(self) -> float:
        # Nearest-rank percentile: the smallest sample at or above 95% of the samples.
        ordered = sorted(self.times_ms)
        return ordered[math.ceil(0.95 * len(ordered)) - 1]


def become_subreaper() -> None:
    """Adopt orphaned grandchildren (see the module doc: how run_rss measures memory)."""
    if sys.platform != "linux":
        sys.exit("error: this benchmark uses Linux APIs (prctl, /proc semantics of ru_maxrss)")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"error: prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def cargo(*args: str) -> float:
    """Run cargo in the repository; return how long it took in seconds. `--release` builds
    the benchmark profile ([`PROFILE`])."""
    started = time.perf_counter()
    words = [w for a in args for w in (["--profile", PROFILE] if a == "--release" else [a])]
    subprocess.run(["cargo", *words], cwd=ROOT, check=True)
    return time.perf_counter() - started


def build(*programs: str) -> float:
    """Build toolctl and the benchmarks' programs (`gen-catalog`, and `programs` of
    bench/tools/) in the benchmark profile; return how long it took in seconds."""
    bins = [w for name in ("gen-catalog", *programs) for w in ("--bin", name)]
    return cargo("build", "--release", "-p", "toolctl", "-p", "toolctl-bench",
                 "--bin", "toolctl", *bins)


def toolctl_json(catalog: Path, *args: str) -> dict:
    """Run toolctl with --json and return its parsed output."""
    out = subprocess.run(
        [str(TOOLCTL), "--catalog", str(catalog), "--json", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def list_all(catalog: Path, *args: str) -> list[dict]:
    """Every item of a toolctl list command, following nextPageToken."""
    items, token = [], None
    while True:
        page = toolctl_json(
            catalog, *args, "--page-size", "1000", *(["--page-token", token] if token else [])
        )
        items.extend(page["items"])
        token = page.get("nextPageToken")
        if not token:
            return items


def spawn(argv: list[str], stderr_file: Path) -> int:
    """Start argv with stdin and stdout on /dev/null and stderr into stderr_file."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(stderr_file), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)


def check_status(argv: list[str], status: int, stderr_file: Path) -> None:
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(
            f"error: {' '.join(argv)} exited with {code}:\n{stderr_file.read_text(errors='replace')}"
        )


def run_timed(argv: list[str], stderr_file: Path) -> float:
    """Run argv; return its wall time in ms."""
    started = time.perf_counter()
    pid = spawn(argv, stderr_file)
    _, status, _ = os.wait4(pid, 0)
    elapsed_ms = (time.perf_counter() - started) * 1000
    check_status(argv, status, stderr_file)
    return elapsed_ms


def run_rss(argv: list[str], stderr_file: Path) -> int:
    """Run argv as a grandchild forked by sh (see the module doc); return its ru_maxrss in KiB."""
    pid_file = stderr_file.with_name("rss-pid.txt")
    script = 'pid_file=$1; shift; "$@" & echo $! > "$pid_file"'
    shell = spawn(["/bin/sh", "-c", script, "sh", str(pid_file), *argv], stderr_file)
    os.waitpid(shell, 0)
    # sh has exited; its background child is now ours (we are a subreaper). Waited for by pid:
    # an index watcher stopped earlier is ours too, and may be waiting to be reaped.
    _, status, usage = os.wait4(int(pid_file.read_text()), 0)
    check_status(argv, status, stderr_file)
    return usage.ru_maxrss


def measure(size: int, name: str, argvs: list[list[str]], scratch: Path) -> Result:
    """Run WARMUP argvs unmeasured, then time the next ones, then measure memory on RSS_RUNS."""
    stderr_file = scratch / "stderr.txt"
    warmup, timed, rss = argvs[:WARMUP], argvs[WARMUP:-RSS_RUNS], argvs[-RSS_RUNS:]
    for argv in warmup:
        run_timed(argv, stderr_file)
    times = [run_timed(argv, stderr_file) for argv in timed]
    peak = max(run_rss(argv, stderr_file) for argv in rss)
    return Result(size, name, times, peak)


def generate(size: int, out: Path) -> list[str]:
    """Generate a catalog of `size` tools in `out` (seed SEED) and return the base argv of
    `toolctl --catalog out --json`."""
    subprocess.run(
        [str(GEN_CATALOG), "--tools", str(size), "--out", str(out), "--seed", str(SEED)],
        check=True,
    )
    return [str(TOOLCTL), "--catalog", str(out), "--json"]


@contextlib.contextmanager
def watcher(base: list[str]):
    """Run the catalog's index watcher (`index watch --detach`) for the block."""
    subprocess.run([*base, "index", "watch", "--detach"], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([*base, "index", "watch", "--stop"], capture_output=True)


def print_tables(size: int, title: str, commands: dict[str, list[list[str]]], rounds: int,
                 scratch: Path, base: list[str]) -> None:
    """print_table walking (every command stats every entry), then with the index watcher."""
    print_table(size, f"{title}, walking (no watcher)", commands, rounds, scratch)
    with watcher(base):
        print_table(size, f"{title}, with the index watcher", commands, rounds, scratch)


def print_table(size: int, title: str, commands: dict[str, list[list[str]]], rounds: int,
                scratch: Path) -> None:
    """Measure each command (a list of argvs: every one --rounds times, a lone one at least
    5 times) and print median, p95 and peak RSS."""
    print()
    print(f"{size} tools, {title}")
    print(f"  {'command':<40} {'median ms':>9} {'p95 ms':>8} {'peak RSS MiB':>12} {'runs':>5}")
    for name, argvs in commands.items():
        timed = argvs * (rounds if len(argvs) > 1 else max(rounds, 5))
        all_argvs = (argvs * WARMUP)[:WARMUP] + timed + (argvs * RSS_RUNS)[:RSS_RUNS]
        r = measure(size, name, all_argvs, scratch)
        print(f"  {name:<40} {r.median:>9.1f} {r.p95:>8.1f} {r.max_rss_kb / 1024:>12.1f} "
              f"{len(r.times_ms):>5}")


def put_file(path: Path, index: int) -> None:
    """Write a new native tool named bench-put-<index>."""
    doc = {
        "schemaVersion": "1",
        "slug": f"bench-put-{index}",
        "version": "v1",
        "displayName": f"Benchmark tool {index}",
        "description": "Read a benchmark note from the workspace; written by bench/catalog.py.",
        "type": "native",
        "isEnabled": True,
        "tags": ["bench"],
        "argSchema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Workspace-relative path."}},
            "required": ["path"],
        },
        "impl": {"func": "readfile"},
    }
    path.write_text(json.dumps(doc, indent=2) + "\n")


def bench_size(size: int, runs: int, work: Path) -> tuple[list[Result], float]:
    catalog = work / f"catalog-{size}"
    started = time.perf_counter()
    subprocess.run(
        [str(GEN_CATALOG), "--tools", str(size), "--out", str(catalog), "--seed", str(SEED)],
        check=True,
    )
    generated_s = time.perf_counter() - started
    total = WARMUP + runs + RSS_RUNS
    base = [str(TOOLCTL), "--catalog", str(catalog)]
    rng = random.Random(SEED)

    # A bundle to put into: an enabled one of the user's (the built-in bundle is read-only).
    bundles = list_all(catalog, "bundle", "list")
    target = next(b["slug"] for b in bundles if not b["isBuiltIn"])

    # Existing tools to get: a random sample of the enabled tools of all bundles.
    refs = [t["ref"] for t in list_all(catalog, "tool", "list") if not t["isBuiltIn"]]
    picked = [rng.choice(refs) for _ in range(total)]

    put_dir = work / f"put-{size}"
    put_dir.mkdir()
    put_files = []
    for i in range(total):
        path = put_dir / f"bench-put-{i}.json"
        put_file(path, i)
        put_files.append(path)

    results = [
        measure(
            size,
            "tool put --bundle B FILE",
            [[*base, "tool", "put", "--bundle", target, str(f)] for f in put_files],
            work,
        ),
        measure(size, "tool get B/SLUG@VERSION", [[*base, "tool", "get", r] for r in picked], work),
        measure(
            size,
            "tool list --page-size 50 --json",
            [[*base, "tool", "list", "--page-size", "50", "--json"]] * total,
            work,
        ),
        measure(size, "bundle list --json", [[*base, "bundle", "list", "--json"]] * total, work),
    ]
    return results, generated_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="10000",
        help="comma-separated catalog sizes in tools (default: 10000)",
    )
    parser.add_argument(
        "--runs", type=int, default=50, help="measured runs per command (default: 50)"
    )
    parser.add_argument(
        "--build-time",
        action="store_true",
        help="also time a clean release build (runs cargo clean --release first)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the generated catalogs and print where"
    )
    args = parser.parse_args()
    become_subreaper()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.runs < 1 or not sizes or min(sizes) < 1:
        parser.error("--runs and every size must be at least 1")

    build_s = None
    if args.build_time:
        cargo("clean", "--release")
        build_s = cargo("build", "--release", "--bin", "toolctl")
    build()

    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-"))
    floor_kb = run_rss(["/bin/true"], work / "stderr.txt")
    try:
        results: list[Result] = []
        generated: dict[int, float] = {}
        for size in sizes:
            size_results, generated[size] = bench_size(size, args.runs, work)
            results.extend(size_results)
    finally:
        if args.keep:
            print(f"catalogs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(
        f"toolctl benchmark: {args.runs} timed runs per command after {WARMUP} warm-up runs; "
        f"peak RSS is the largest of {RSS_RUNS} more runs (floor of the method, /bin/true: "
        f"{floor_kb / 1024:.1f} MiB)"
    )
    if build_s is not None:
        print(f"clean release build (cargo build --release --bin toolctl): {build_s:.1f} s")
    for size in sizes:
        print(f"catalog of {size} tools generated in {generated[size]:.2f} s")
    print()
    header = f"{'tools':>7}  {'command':<32}  {'median ms':>9}  {'p95 ms':>8}  {'peak RSS MiB':>12}"
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.size:>7}  {r.command:<32}  {r.median:>9.1f}  {r.p95:>8.1f}  "
            f"{r.max_rss_kb / 1024:>12.1f}"
        )


if __name__ == "__main__":
    main()
