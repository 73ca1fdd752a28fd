#!/usr/bin/env python3
"""Benchmark `toolctl pick` and `toolctl export` (run on demand, not in CI; Python 3.11+, stdlib).

    python3 bench/pick.py                       # a 10,000-tool catalog, every query 3 times
    python3 bench/pick.py --size 1000 --rounds 5

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42, the whole-process timer
and the peak-RSS method explained there) and the queries of bench/search.py, and prints, whole
process, median and p95 over all samples (each query --rounds times after a warm-up round):

- `pick QUERY --json` with the keyword scorer (the default) and with `--scorer bm25`;
- `export --provider openai --bundle B` of one generated bundle, and `export --provider mcp`
  of the whole catalog (--force: past OpenAI's 128 tools is refused otherwise);
- the stat floor of bench/search.py (without a watcher, every command's change check stats
  each tool.json and slug folder first), to read the pick figures against.

Each table is taken twice: walking (no watcher) and with the index watcher (`toolctl index
watch --detach`; docs/search.md, "The index watcher").
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402
import search  # noqa: E402  (its QUERIES and stat floor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="tools in the catalog")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each query")
    args = parser.parse_args()
    bench.become_subreaper()
    bench.build()
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-pick-"))
    try:
        catalog = work / "catalog"
        base = bench.generate(args.size, catalog)
        subprocess.run([*base, "index", "rebuild"], check=True, capture_output=True)
        bundle = bench.toolctl_json(catalog, "bundle", "list", "--page-size", "2")["items"][-1]
        queries = [q for _, q in search.QUERIES]
        commands = {
            "pick (keyword)": [[*base, "pick", q] for q in queries],
            "pick --scorer bm25": [[*base, "pick", q, "--scorer", "bm25"] for q in queries],
            f"export openai --bundle {bundle['slug']}":
                [[*base, "export", "--provider", "openai", "--bundle", bundle["slug"]]],
            "export mcp, whole catalog": [[*base, "export", "--provider", "mcp"]],
        }
        bench.print_tables(args.size, "whole process, warm cache", commands, args.rounds, work, base)
        count, floor_ms = search.stat_floor(catalog)
        print(f"  {'stat floor: ' + str(count) + ' stats, 1 thread':<40} {floor_ms:>9.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
