#!/usr/bin/env python3
"""Benchmark toolctl search and the index on large generated catalogs.

Run on demand from anywhere in the repository (not in CI; Python 3.11+, stdlib only; the
`sqlite3` shell for the floor, e.g. `apt-get install -y sqlite3`, else the floor is skipped):

    python3 bench/search.py                          # 1,000, 10,000 and 100,000 tools
    python3 bench/search.py --sizes 1000,10000       # fewer sizes
    python3 bench/search.py --rounds 5 --keep        # more samples; keep the catalogs

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42, the whole-process timer
and the peak-RSS method explained there) and prints, for each size:

- index rebuild: `toolctl index rebuild`, whole process (3 runs, 1 at 100,000 tools or more);
- edit → search: a person edits the description of one tool.json in place (same inode, new
  size and mtime), then one `search` runs: its time, and the extra over the same search run
  just before the edit (EDITS rounds, a different file each round);
- search: the QUERIES below (words of the generator's vocabulary: single words, several words,
  name prefixes, typos, plain-language questions), each run --rounds times after a warm-up
  round, whole process, `search QUERY --json --page-size 10`; median and p95 of all samples,
  and of the typo queries alone (they scan the vocabulary);
- sqlite3 floor: the same queries through the `sqlite3` shell on the same index, one process
  each: `SELECT rowid FROM tool_fts WHERE tool_fts MATCH '"w1"* OR "w2"*' ORDER BY bm25(...)
  LIMIT 50` (the widest of the expressions toolctl runs for a query, without its change check,
  tiers and typo scan): the cost of a bare process and one FTS5 query;
- tool list --page-size 50 --json: median and p95 of --runs runs;
- peak RSS of search (largest of RSS_RUNS runs, on the costliest queries) and index size on disk
  (.toolctl/index.sqlite plus its -wal);
- stat floor: one `os.stat` of every tool.json and slug folder (what toolctl's change check
  must do on every command without a watcher), best of 3, single-threaded: what this
  machine's filesystem charges before toolctl does anything, to read the search figures
  against.

The search, edit and list figures are taken twice: walking (`TOOLCTL_WATCH=never`, no watcher:
every command stats every entry) and with the index watcher (`toolctl index watch --detach`,
stopped afterwards; docs/search.md, "The index watcher").

The catalogs are in the page cache (just written), so the figures are warm-cache figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402  (bench/catalog.py: build, spawn, timers, RSS method)

EDITS = 5
# How commands learn what changed: the walk, or the index watcher.
MODES = {
    "walk": "walking (no watcher: every command stats every entry)",
    "watcher": "with the index watcher (toolctl index watch --detach)",
}
SQLITE3 = shutil.which("sqlite3")
BM25 = "bm25(tool_fts, 10.0, 5.0, 2.0, 3.0, 1.0)"

# (kind, query). Words come from bench/tools/gen_catalog.rs (domains, nouns, verbs, tags, sentences).
QUERIES: list[tuple[str, str]] = [
    *(("word", w) for w in [
        "invoice", "refunds", "subscription", "contacts", "opportunity", "employee",
        "timesheets", "ticket", "escalation", "warehouse", "shipment", "meeting", "reminder",
        "campaign", "newsletter", "dashboard", "cohort", "deployment", "incident", "pipeline",
        "bucket", "snapshot", "permission", "webhook", "parcel", "itinerary", "contract",
        "enrollment", "prescription", "tenant", "forecast", "geocode", "compliance",
    ]),
    *(("words", w) for w in [
        "list invoices", "create ticket", "delete user", "search contacts by owner",
        "export reports", "approve leave request", "sync shipments", "cancel flight",
        "archive campaign", "update lease status", "get payment history", "send notification",
        "count open incidents", "import products", "api key", "hotel booking",
    ]),
    *(("prefix", w) for w in ["inv", "dep", "get-inv", "list-sh", "wea"]),
    *(("typo", w) for w in [
        "invoce", "shipmnet", "delte user", "warehose", "apointment", "subscribtion",
        "newsleter", "deploymnet", "prescripton", "conract",
    ]),
    *(("natural", w) for w in [
        "how many tickets are still open",
        "show me last month's invoices for a customer",
        "which deployments failed today",
        "book a hotel for my trip to Oslo",
    ]),
]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[math.ceil(q * len(ordered)) - 1]


def stats(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), percentile(samples, 0.95)


def fts_expression(query: str) -> str:
    """The query's words as an FTS5 OR of quoted prefixes (what toolctl's widest tier runs)."""
    words = [w.lower() for w in re.findall(r"[^\W_]+", query)]
    return " OR ".join(f'"{w}"*' if len(w) >= 2 else f'"{w}"' for w in dict.fromkeys(words))


def sqlite_sql(query: str) -> str:
    expression = fts_expression(query).replace("'", "''")
    return (
        f"SELECT rowid FROM tool_fts WHERE tool_fts MATCH '{expression}' "
        f"ORDER BY {BM25} LIMIT 50;"
    )


def edit_description(path: Path, round_: int) -> None:
    """Change one tool's description in place, as a person with an editor would."""
    doc = json.loads(path.read_text())
    doc["description"] = f"{doc.get('description', '')} Edited by hand ({round_})."
    with path.open("r+") as f:  # same inode: the file is rewritten, not replaced
        f.seek(0)
        f.write(json.dumps(doc, indent=2) + "\n")
        f.truncate()


def disk_mib(catalog: Path) -> float:
    index = catalog / ".toolctl" / "index.sqlite"
    files = [index, index.with_name("index.sqlite-wal")]
    return sum(f.stat().st_size for f in files if f.exists()) / 2**20


def stat_floor(catalog: Path) -> tuple[int, float]:
    """What the change check's stats cost on this machine, before any of toolctl's own work:
    one stat of every tool.json and slug folder, best of 3, single thread. Returns the number
    of stats and the time in ms."""
    checked = [
        *(catalog / "bundles").glob("*/tools/*/*/tool.json"),
        *(catalog / "bundles").glob("*/tools/*"),
    ]
    floor_s = []
    for _ in range(3):
        started = time.perf_counter()
        for path in checked:
            os.stat(path)
        floor_s.append(time.perf_counter() - started)
    return len(checked), min(floor_s) * 1000


def bench_size(size: int, rounds: int, runs: int, work: Path) -> dict:
    catalog = work / f"catalog-{size}"
    stderr_file = work / "stderr.txt"
    started = time.perf_counter()
    subprocess.run(
        [str(bench.GEN_CATALOG), "--tools", str(size), "--out", str(catalog),
         "--seed", str(bench.SEED)],
        check=True,
    )
    out: dict = {"size": size, "generated_s": time.perf_counter() - started}
    base = [str(bench.TOOLCTL), "--catalog", str(catalog)]

    out["stat_count"], out["stat_ms"] = stat_floor(catalog)

    # Full index build, whole process.
    build_runs = 3 if size < 100_000 else 1
    out["rebuild_s"] = [
        bench.run_timed([*base, "index", "rebuild"], stderr_file) / 1000 for _ in range(build_runs)
    ]
    out["index_mib"] = disk_mib(catalog)

    def search_argv(query: str) -> list[str]:
        return [*base, "search", query, "--json", "--page-size", "10"]

    tools = sorted((catalog / "bundles").glob("*/tools/*/*/tool.json"))
    out["modes"] = {}
    for mode in MODES:
        with bench.watcher(base) if mode == "watcher" else contextlib.nullcontext():
            out["modes"][mode] = bench_mode(search_argv, tools, mode, rounds, runs, base,
                                            stderr_file)
    out["index_mib_after"] = disk_mib(catalog)

    # Peak RSS of search, on the costliest kinds of query.
    rss_queries = ["delte user", "subscribtion", "search contacts by owner",
                   "how many tickets are still open", "inv"]
    out["search_rss_kb"] = max(
        bench.run_rss(search_argv(q), stderr_file) for q in rss_queries[: bench.RSS_RUNS]
    )

    # The floor: the same queries through the sqlite3 shell on the same index.
    if SQLITE3:
        index = catalog / ".toolctl" / "index.sqlite"

        def sqlite_argv(query: str) -> list[str]:
            return [SQLITE3, str(index), sqlite_sql(query)]

        for _, q in QUERIES:
            bench.run_timed(sqlite_argv(q), stderr_file)
        out["sqlite"] = [
            bench.run_timed(sqlite_argv(q), stderr_file) for _ in range(rounds) for _, q in QUERIES
        ]
    return out


def bench_mode(search_argv, tools: list[Path], mode: str, rounds: int, runs: int,
               base: list[str], stderr_file: Path) -> dict:
    """Searches, edit → search and tool list, walking or with a watcher."""
    out: dict = {}
    # Warm-up round (page cache, the first command's WAL checkpoint, the watcher's first
    # check), then the timed rounds.
    for _, q in QUERIES:
        bench.run_timed(search_argv(q), stderr_file)
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        for kind, q in QUERIES:
            samples.setdefault(kind, []).append(bench.run_timed(search_argv(q), stderr_file))
    out["search"] = [t for ts in samples.values() for t in ts]
    out["search_by_kind"] = samples

    # Edit one tool.json by hand, then time the next search (a different file each round).
    step = max(1, len(tools) // EDITS)
    offset = 1 if mode == "watcher" else 0
    query = "invoice"
    before, after = [], []
    for i in range(EDITS):
        before.append(bench.run_timed(search_argv(query), stderr_file))
        edit_description(tools[(i * step + offset) % len(tools)], i)
        after.append(bench.run_timed(search_argv(query), stderr_file))
    out["edit_after"] = after
    out["edit_extra"] = [a - b for a, b in zip(after, before)]

    # tool list.
    list_argv = [*base, "tool", "list", "--page-size", "50", "--json"]
    for _ in range(bench.WARMUP):
        bench.run_timed(list_argv, stderr_file)
    out["list"] = [bench.run_timed(list_argv, stderr_file) for _ in range(runs)]
    return out


def report(results: list[dict], rounds: int, runs: int, floor_kb: int) -> None:
    n = len(QUERIES)
    print()
    print(
        f"toolctl search benchmark: {n} queries x {rounds} rounds after a warm-up round "
        f"(whole process, ms); tool list: {runs} runs; peak RSS: largest of {bench.RSS_RUNS} "
        f"runs (floor of the method, /bin/true: {floor_kb / 1024:.1f} MiB)"
    )
    if not SQLITE3:
        print("note: no sqlite3 shell on PATH (apt-get install -y sqlite3): floor skipped")
    for r in results:
        print()
        builds = ", ".join(f"{s:.2f}" for s in r["rebuild_s"])
        print(f"== {r['size']} tools (generated in {r['generated_s']:.1f} s)")
        print(f"  index rebuild (whole process)      {builds} s")
        print(f"  index on disk (sqlite + wal)       {r['index_mib']:.1f} MiB "
              f"({r['index_mib_after']:.1f} MiB after the edits)")
        print(f"  search peak RSS                    {r['search_rss_kb'] / 1024:.1f} MiB")
        cores = os.cpu_count() or 1
        print(f"  stat floor (change check)          {r['stat_ms']:.1f} ms for {r['stat_count']} "
              f"stats ({r['stat_ms'] * 1000 / r['stat_count']:.2f} us each; "
              f"{r['stat_ms'] / cores:.1f} ms over {cores} cores)")
        header = f"  {'measurement':<36} {'median ms':>9} {'p95 ms':>8} {'samples':>7}"
        print(header)
        print("  " + "-" * (len(header) - 2))

        def row(label: str, samples: list[float]) -> None:
            med, p95 = stats(samples)
            print(f"  {label:<36} {med:>9.1f} {p95:>8.1f} {len(samples):>7}")

        if "sqlite" in r:
            row("sqlite3 shell, same FTS query (floor)", r["sqlite"])
        for mode, m in r["modes"].items():
            print(f"  -- {MODES[mode]}")
            row("search (all queries)", m["search"])
            for kind, samples in m["search_by_kind"].items():
                row(f"  search: {kind}", samples)
            row("search after a hand edit", m["edit_after"])
            row("  extra over the search before it", m["edit_extra"])
            row("tool list --page-size 50 --json", m["list"])
            if "sqlite" in r:
                ratio = statistics.median(m["search"]) / statistics.median(r["sqlite"])
                print(f"  search median / sqlite3 floor median: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated catalog sizes in tools (default: 1000,10000,100000)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="timed rounds over all the queries (default: 3)")
    parser.add_argument("--runs", type=int, default=50,
                        help="timed runs of tool list (default: 50)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the generated catalogs and print where")
    args = parser.parse_args()
    bench.become_subreaper()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.rounds < 1 or args.runs < 1 or not sizes or min(sizes) < EDITS:
        parser.error(f"--rounds and --runs must be at least 1, every size at least {EDITS}")
    if not SQLITE3:
        print("note: no sqlite3 shell on PATH: the floor is skipped", file=sys.stderr)

    bench.build()
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-search-"))
    floor_kb = bench.run_rss(["/bin/true"], work / "stderr.txt")
    results = []
    try:
        for size in sizes:
            results.append(bench_size(size, args.rounds, args.runs, work))
            # One size's figures as soon as they are known (100,000 tools take minutes).
            report(results[-1:], args.rounds, args.runs, floor_kb)
            if not args.keep:
                shutil.rmtree(work / f"catalog-{size}", ignore_errors=True)
    finally:
        if args.keep:
            print(f"catalogs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if len(results) > 1:
        print("\n# all sizes")
        report(results, args.rounds, args.runs, floor_kb)


if __name__ == "__main__":
    main()
