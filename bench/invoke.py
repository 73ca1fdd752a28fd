#!/usr/bin/env python3
"""Benchmark `toolctl invoke` (run on demand, not in CI; Python 3.11+, stdlib only).

    python3 bench/invoke.py                    # a 10,000-tool catalog, 50 runs each
    python3 bench/invoke.py --size 1000 --runs 100

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42, the whole-process timer
and the peak-RSS method explained there) and prints:

- whole-process `invoke` of native built-ins on a catalog of --size tools: `builtin/now`,
  `builtin/readfile` of a small file, and `now` named by its slug alone (which looks in every
  bundle): median and p95 of --runs runs, peak RSS;
- a batch of 20 HTTP calls to a local server (127.0.0.1, started here) that waits 200 ms
  before each answer: whole-process wall time of `invoke --batch` (the calls run at once, so
  the floor is about 200 ms plus one process);
- argument validation throughput in-process: `bench/tools/validate_throughput.rs` (validations
  per second of a typical and a nested schema, and schema compiles per second).

Invoking one tool reads the config, the bundle files and that tool's versions; it does not
read the other tools or use the search index.
"""

from __future__ import annotations

import argparse
import http.server
import json
import threading
import time
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402  (bench/catalog.py: build, spawn, timers, RSS method)


class SlowHandler(http.server.BaseHTTPRequestHandler):
    """Answers every GET with a small JSON document after 200 ms."""

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        time.sleep(0.2)
        body = b'{"temp": 5}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet
        pass


def bench_batch(catalog: Path, work: Path, runs: int) -> list[float]:
    """Whole-process time of a 20-call batch against the slow server."""
    # A listen backlog for every call at once (the default, 5, drops connections that then
    # wait a second to retry).
    http.server.ThreadingHTTPServer.request_queue_size = 64
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        config_path = catalog / "toolctl.json"
        config = json.loads(config_path.read_text())
        config["allowedHosts"] = [f"127.0.0.1:{port}"]
        config_path.write_text(json.dumps(config, indent=2))
        base = [str(bench.TOOLCTL), "--catalog", str(catalog), "--json"]
        subprocess.run([*base, "bundle", "put", "--slug", "bench-http"], check=True,
                       capture_output=True)
        tool = work / "slow.json"
        tool.write_text(json.dumps({
            "slug": "slow", "version": "v1", "type": "http",
            "description": "a local server that answers after 200 ms",
            "argSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "impl": {"method": "GET", "urlTemplate": f"http://127.0.0.1:{port}/t?n=${{n}}"},
        }))
        subprocess.run([*base, "tool", "put", "--bundle", "bench-http", str(tool)], check=True,
                       capture_output=True)
        calls = work / "batch.json"
        calls.write_text(json.dumps({"calls": [
            {"call_id": f"c{i}", "name": "bench-http/slow", "arguments": {"n": i}}
            for i in range(20)
        ]}))
        argv = [*base, "invoke", "--batch", str(calls)]
        stderr_file = work / "stderr.txt"
        for _ in range(bench.WARMUP):
            bench.run_timed(argv, stderr_file)
        return [bench.run_timed(argv, stderr_file) for _ in range(runs)]
    finally:
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="tools in the catalog")
    parser.add_argument("--runs", type=int, default=50, help="timed runs per command")
    args = parser.parse_args()
    bench.become_subreaper()

    bench.build("validate-throughput")
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-invoke-"))
    try:
        catalog = work / "catalog"
        base = bench.generate(args.size, catalog)
        workspace = work / "workspace"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("hello from the workspace\n" * 40)
        commands = {
            "invoke builtin/now": [*base, "invoke", "builtin/now"],
            "invoke builtin/readfile (1 KB)": [
                *base, "invoke", "builtin/readfile", "--workspace", str(workspace),
                "--args", '{"path":"notes.txt"}',
            ],
            "invoke now (slug only)": [*base, "invoke", "now"],
        }
        n = bench.WARMUP + args.runs + bench.RSS_RUNS
        results = [
            bench.measure(args.size, name, [argv] * n, work) for name, argv in commands.items()
        ]
        print()
        print(f"toolctl invoke, {args.size} tools, whole process, {args.runs} runs "
              f"after {bench.WARMUP} warm-up runs")
        print(f"  {'command':<34} {'median ms':>9} {'p95 ms':>8} {'peak RSS MiB':>12}")
        for r in results:
            print(f"  {r.command:<34} {r.median:>9.1f} {r.p95:>8.1f} {r.max_rss_kb / 1024:>12.1f}")
        batch = bench_batch(catalog, work, max(5, args.runs // 5))
        result = bench.Result(args.size, "batch", batch, 0)
        print(f"  {'invoke --batch: 20 HTTP calls, 200 ms each':<34} {result.median:>9.1f} "
              f"{result.p95:>8.1f} {'':>12}   ({len(batch)} runs)")
        print()
        print("argument validation in-process (bench/tools/validate_throughput.rs):")
        out = subprocess.run(
            [str(bench.PROFILE_DIR / "validate-throughput")],
            check=True, capture_output=True, text=True,
        )
        print("  " + out.stdout.strip().replace("\n", "\n  "))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
