#!/usr/bin/env python3
"""Benchmark `toolctl attach` (run on demand, not in CI; Python 3.11+, stdlib).

    python3 bench/attach.py                      # a 10,000-tool catalog, every query 3 times
    python3 bench/attach.py --size 1000 --rounds 5

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42, the whole-process timer
and the peak-RSS method explained there) and the queries of bench/search.py. The agent holds 30
tools (27 external, the 3 built-in ones) and keeps holding 30: MAX_TOTAL_TOOLS=30,
MAX_MCP_TOOLS=27 and MIN_MCP_TOOLS=27, so every run attaches its matches, trims back to the
limits and rewrites the agent file — the worst case of a steady agent. Prints, whole process,
median and p95 over all samples (each query --rounds times after a warm-up round) of
`attach AGENT --query Q --json` (bm25, the default scorer without an embeddings endpoint), of
`attach AGENT` without a query, and of `agent show AGENT`, with the stat floor of
bench/search.py to read them against; walking (no watcher), then with the index watcher
(`toolctl index watch --detach`; docs/search.md, "The index watcher").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402
import search  # noqa: E402  (its QUERIES and stat floor)

AGENT = "agent-0190b000-0000-7000-8000-00000000a9e7"


def seed_agent(catalog: Path) -> None:
    """Give the agent 27 external tools of the catalog and the 3 built-in ones."""
    tools = bench.list_all(catalog, "tool", "list")
    external = [t for t in tools if t["bundle"] != "builtin"][:27]
    core = [t for t in tools if t["bundle"] == "builtin"]
    # Names as they stand now; the first run corrects any that export gives another name.
    entries = [{
        "toolID": t["toolID"], "ref": t["ref"], "name": t["slug"],
        "kind": "core" if t["bundle"] == "builtin" else "external",
        "attachedAt": "2026-01-01T00:00:00Z", "matchScore": None,
    } for t in external + core]
    doc = {"schemaVersion": "1", "agentID": AGENT, "createdAt": "2026-01-01T00:00:00Z",
           "modifiedAt": "2026-01-01T00:00:00Z", "tools": entries}
    (catalog / "agents").mkdir(exist_ok=True)
    (catalog / "agents" / f"{AGENT}.json").write_text(json.dumps(doc, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="tools in the catalog")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each query")
    args = parser.parse_args()
    bench.become_subreaper()
    bench.build()
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-attach-"))
    try:
        catalog = work / "catalog"
        base = bench.generate(args.size, catalog)
        subprocess.run([*base, "index", "rebuild"], check=True, capture_output=True)
        seed_agent(catalog)
        os.environ.update(MAX_TOTAL_TOOLS="30", MAX_MCP_TOOLS="27", MIN_MCP_TOOLS="27")
        queries = [q for _, q in search.QUERIES]
        commands = {
            "attach --query Q (bm25)": [[*base, "attach", AGENT, "--query", q] for q in queries],
            "attach (no query: limits only)": [[*base, "attach", AGENT]],
            "agent show": [[*base, "agent", "show", AGENT]],
        }
        bench.print_tables(args.size, "agent holding 30 tools, whole process, warm cache", commands, args.rounds, work, base)
        held = json.loads((catalog / "agents" / f"{AGENT}.json").read_text())["tools"]
        print(f"  the agent holds {len(held)} tools after the runs")
        count, floor_ms = search.stat_floor(catalog)
        print(f"  {'stat floor: ' + str(count) + ' stats, 1 thread':<40} {floor_ms:>9.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
