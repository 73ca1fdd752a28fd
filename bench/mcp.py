#!/usr/bin/env python3
"""Benchmark `toolctl mcp serve` on a large generated catalog.

Run on demand from anywhere in the repository (not in CI; Python 3.11+, stdlib only):

    python3 bench/mcp.py                     # 10,000 tools
    python3 bench/mcp.py --sizes 1000,10000 --calls 500

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42) and speaks JSON-RPC to
the server over stdio itself (the 2025-11-25 handshake: `initialize`, `initialized`), so the
figures are the server's, not a client library's. For each size it prints:

- startup → first tools/list: from spawning `toolctl mcp serve` to the answer of its first
  `tools/list` (the initialize round trip included), median and p95 of --runs sessions, for
  `--mode all` (first page of 100 tools) with the list kept in `.toolctl/` by an earlier
  start (the usual case), `--mode all` without it (the first start after a catalog change:
  the kept list is deleted before each run), and `--mode search` (the two tools);
- tools/call `now`: the round trip of --calls calls through one session (median, p95), beside
  the whole process of `toolctl invoke builtin/now` (median): the server saves the process
  start, the catalog open and the index check every call pays in `invoke`; and the round trip
  of `ping` through the same session, which is what serving adds to a call (JSON-RPC over the
  pipes, the SDK's dispatch, the hop to a blocking thread): the call's overhead over the work
  `invoke` does;
- search_tools: the round trip of a `search_tools` call in search mode (median, p95);
- memory: the server's peak RSS (VmHWM) at the end of a `--mode all` session that listed every
  page and made the calls.

The catalogs are in the page cache (just written): warm-cache figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as common  # noqa: E402  (bench/catalog.py: build, generate, TOOLCTL)


class Session:
    """One `toolctl mcp serve` process, spoken to over its stdin/stdout."""

    def __init__(self, catalog: Path, *args: str) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [str(common.TOOLCTL), "--catalog", str(catalog), "mcp", "serve", "--quiet", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.next_id = 0

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    sys.exit(f"error: {method}: {answer['error']}")
                return answer["result"]

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def peak_rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def ms(seconds: float) -> float:
    return seconds * 1000


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(0.95 * len(ordered) + 0.5) - 1)]


def row(name: str, samples: list[float], target: str = "") -> None:
    print(
        f"  {name:<44} median {statistics.median(samples):8.2f} ms   p95 {p95(samples):8.2f} ms"
        f"   {target}"
    )


def kept_lists(catalog: Path) -> list[Path]:
    return sorted((catalog / ".toolctl").glob("mcp-tools-*.jsonl"))


def first_list(catalog: Path, mode: str, runs: int, kept: bool = True) -> list[float]:
    samples = []
    for _ in range(runs):
        if not kept:
            for path in kept_lists(catalog):
                path.unlink()
        session = Session(catalog, "--mode", mode)
        try:
            session.initialize()
            session.request("tools/list")
            samples.append(ms(time.perf_counter() - session.started))
        finally:
            session.close()
    return samples


def keep_list(catalog: Path) -> None:
    """Start `--mode all` once and give it the time of its first change check, so that the
    list it made is kept (a list made while the index was being written is kept only then)."""
    session = Session(catalog, "--mode", "all")
    try:
        session.initialize()
        session.request("tools/list")
        deadline = time.monotonic() + 30
        while not kept_lists(catalog) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        session.close()
    if not kept_lists(catalog):
        sys.exit("error: mcp serve kept no list in .toolctl/")


def bench_size(size: int, runs: int, calls: int, work: Path) -> None:
    catalog = work / f"cat{size}"
    common.generate(size, catalog)
    # The first command builds the index; every figure below is of a built index.
    subprocess.run(
        [str(common.TOOLCTL), "--catalog", str(catalog), "index", "rebuild"],
        check=True,
        capture_output=True,
    )
    print(f"\n{size:,} tools")
    keep_list(catalog)
    row(
        "startup → first tools/list, --mode all",
        first_list(catalog, "all", runs),
        "(target ≤ 150; list kept)",
    )
    row(
        "  the same, no list kept (after a change)",
        first_list(catalog, "all", max(3, runs // 4), kept=False),
    )
    keep_list(catalog)
    row(
        "startup → first tools/list, --mode search",
        first_list(catalog, "search", runs),
        "(target ≤ 50)",
    )

    session = Session(catalog, "--mode", "all")
    session.initialize()
    cursor, pages = None, 0
    while True:
        page = session.request("tools/list", {"cursor": cursor} if cursor else {})
        pages += 1
        cursor = page.get("nextCursor")
        if not cursor:
            break
    round_trips = []
    for _ in range(calls):
        started = time.perf_counter()
        result = session.request("tools/call", {"name": "now", "arguments": {}})
        round_trips.append(ms(time.perf_counter() - started))
        if result.get("isError"):
            sys.exit(f"error: now failed: {result}")
    pings = []
    for _ in range(calls):
        started = time.perf_counter()
        session.request("ping")
        pings.append(ms(time.perf_counter() - started))
    rss = session.peak_rss_kb()
    session.close()
    row("tools/call now, round trip through serve", round_trips)
    row("ping, round trip (serving's part of a call)", pings, "(target ≤ 2)")
    invokes = []
    for _ in range(min(calls, 50)):
        started = time.perf_counter()
        subprocess.run(
            [str(common.TOOLCTL), "--catalog", str(catalog), "invoke", "builtin/now"],
            check=True,
            capture_output=True,
        )
        invokes.append(ms(time.perf_counter() - started))
    row("toolctl invoke builtin/now, whole process", invokes)

    session = Session(catalog, "--mode", "search")
    session.initialize()
    searches = []
    for query in ["weather forecast", "create issue", "send email", "read file"] * max(1, runs // 4):
        started = time.perf_counter()
        session.request(
            "tools/call", {"name": "search_tools", "arguments": {"query": query, "max": 5}}
        )
        searches.append(ms(time.perf_counter() - started))
    session.close()
    row("search_tools (max 5), round trip", searches)
    print(f"  {'peak RSS of serve (all pages listed, calls made)':<44} {rss / 1024:8.1f} MiB"
          f"   ({pages} pages)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated catalog sizes")
    parser.add_argument("--runs", type=int, default=20, help="sessions per startup figure")
    parser.add_argument("--calls", type=int, default=200, help="tools/call round trips")
    parser.add_argument("--keep", action="store_true", help="keep the generated catalogs")
    parser.add_argument(
        "--no-build", action="store_true", help="use the release binaries as they are"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not args.no_build:
        common.build()
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-mcp-"))
    try:
        for size in sizes:
            bench_size(size, args.runs, args.calls, work)
    finally:
        if args.keep:
            print(f"catalogs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ["TOOLCTL_WATCH"] = "never"
    main()
