#!/usr/bin/env python3
"""Load check of `toolctl serve`: many clients at once on the agent-tools routes.

Run on demand from anywhere in the repository (not in CI; Python 3.11+, stdlib only):

    python3 bench/serve.py                               # 200 clients, 30 s a route, 100 tools
    python3 bench/serve.py --clients 50 --seconds 10     # a quicker look
    python3 bench/serve.py --tools 1000                  # a larger registry

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42), starts `toolctl serve`
on 127.0.0.1 (a free port, no keys: loopback) over a generated catalog of --tools tools, and for
each route below keeps --clients clients busy for --seconds: each client holds one keep-alive
HTTP/1.1 connection and sends its next request as soon as the answer to the last one arrived.

    GET  /v1/agent-tools                 the registry, in OpenAI's shape
    POST /v1/agent-tools/invoke-batch    one sync call of the native tool `now` (a job each)

For each route it prints requests per second, latency p50 / p99 / max (ms, from sending a
request to its last byte), errors (a status other than 200, a body whose `ok` is not true, a
dropped connection: the target is 0), and the server's memory: its resident set when the
route's run ends and its peak (VmHWM) so far. The clients run in this one Python process
(asyncio), on the same machine: with 2 cores they take CPU the server could have used, so the
throughput is a floor, and the client's own CPU share is printed beside it.

The server and everything it started are stopped at the end, on an error too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as common  # noqa: E402  (bench/catalog.py: build, generate, TOOLCTL)

BATCH = json.dumps(
    {"calls": [{"call_id": "c1", "name": "now", "arguments": {}}], "mode": "sync", "wait_ms": 15000}
).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request_bytes(method: str, path: str, port: int, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n"
    if method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 answer: its status and body (by Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    return status, b""


async def client(port: int, request: bytes, until: float, latencies: list[float],
                 errors: list[str]) -> None:
    reader = writer = None
    while time.perf_counter() < until:
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = time.perf_counter()
            writer.write(request)
            await writer.drain()
            status, body = await read_answer(reader)
            latencies.append(time.perf_counter() - started)
            if status != 200:
                errors.append(f"HTTP {status}: {body[:200]!r}")
            elif json.loads(body).get("ok") is not True:
                errors.append(f"not ok: {body[:200]!r}")
            elif b'"results"' in body and json.loads(body)["results"][0].get("ok") is not True:
                errors.append(f"call failed: {body[:200]!r}")
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            errors.append(f"{type(e).__name__}: {e}")
            if writer is not None:
                writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()


async def load(port: int, request: bytes, clients: int, seconds: float) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(*(client(port, request, until, latencies, errors) for _ in range(clients)))
    return latencies, errors, time.perf_counter() - started


def memory_kb(pid: int) -> tuple[int, int]:
    """The server's resident set and its peak (VmRSS, VmHWM), in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def wait_listening(port: int, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"error: toolctl serve exited with {server.returncode}:\n{log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    sys.exit(f"error: toolctl serve did not listen within 30 s:\n{log.read_text()}")


def stop(server: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (the server and what it started), then SIGKILL
    past 10 s."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
    server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--tools", type=int, default=100, help="tools of the generated catalog")
    parser.add_argument("--workers", type=int, default=4, help="serve.workers: jobs at once")
    parser.add_argument("--no-build", action="store_true", help="use the binary as built")
    parser.add_argument("--keep", action="store_true", help="keep the catalog afterwards")
    args = parser.parse_args()
    if not args.no_build:
        common.build()
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-serve-"))
    server = None
    try:
        catalog = work / "catalog"
        common.generate(args.tools, catalog)
        config_path = catalog / "toolctl.json"
        config = json.loads(config_path.read_text()) if config_path.exists() else {}
        config["serve"] = {"workers": args.workers}
        config_path.write_text(json.dumps(config, indent=2))
        port = free_port()
        log = work / "serve.log"
        connections = str(max(256, args.clients + 16))
        server = subprocess.Popen(
            [str(common.TOOLCTL), "--catalog", str(catalog), "serve",
             "--listen", f"127.0.0.1:{port}", "--max-connections", connections],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log.open("w"),
            cwd=work, start_new_session=True,
        )
        wait_listening(port, server, log)
        routes = [
            ("GET /v1/agent-tools", request_bytes("GET", "/v1/agent-tools", port)),
            ("POST /v1/agent-tools/invoke-batch (now, sync)",
             request_bytes("POST", "/v1/agent-tools/invoke-batch", port, BATCH)),
        ]
        print(f"toolctl serve, {args.tools} generated tools, serve.workers {args.workers}, "
              f"{args.clients} clients, {args.seconds:g} s a route, {os.cpu_count()} cores")
        print(f"{'route':48} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
              f"{'errors':>7} {'RSS MiB':>8} {'peak MiB':>9} {'client CPU':>10}")
        failed = False
        for name, request in routes:
            cpu = time.process_time()
            latencies, errors, elapsed = asyncio.run(load(port, request, args.clients, args.seconds))
            client_cpu = (time.process_time() - cpu) / elapsed
            rss, peak = memory_kb(server.pid)
            ms = [s * 1000 for s in latencies]
            print(f"{name:48} {len(ms) / elapsed:8.0f} {statistics.median(ms):8.1f} "
                  f"{percentile(ms, 99):8.1f} {max(ms):8.1f} {len(errors):7d} "
                  f"{rss / 1024:8.1f} {peak / 1024:9.1f} {client_cpu:9.0%}")
            for error in sorted(set(errors))[:5]:
                print(f"    {errors.count(error)}× {error}")
            failed |= bool(errors)
        if server.poll() is not None:
            sys.exit(f"error: the server stopped during the run:\n{log.read_text()}")
        if failed:
            sys.exit("error: some requests failed (the target is none)")
    finally:
        if server is not None:
            stop(server)
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
