#!/usr/bin/env python3
"""Benchmark `toolctl validate` (run on demand, not in CI; Python 3.11+, stdlib).

    python3 bench/validate.py                    # 1,000- and 10,000-tool catalogs
    python3 bench/validate.py --sizes 10000 --rounds 10

It reuses bench/catalog.py (release build, `gen-catalog` with seed 42, the whole-process timer
and the peak-RSS method explained there). For each size it prints, whole process, median and
p95 over --rounds runs and the peak RSS of:

    validate                                     the whole catalog
    validate --provider openai --provider gemini the whole catalog, plus both providers' views
    validate FILE                                one tool.json (what an editor hook runs)

Every run must exit 0: the generated catalogs are valid, which this checks too.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--rounds", type=int, default=10, help="timed runs of each command")
    args = parser.parse_args()
    bench.become_subreaper()
    bench.build()
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-validate-"))
    try:
        for size in args.sizes:
            catalog = work / f"catalog-{size}"
            base = bench.generate(size, catalog)
            one = next(catalog.glob("bundles/*/tools/*/*/tool.json"))
            commands = {
                "validate": [[*base, "validate"]],
                "validate --provider openai,gemini": [
                    [*base, "validate", "--provider", "openai", "--provider", "gemini"]
                ],
                "validate FILE (one tool.json)": [[*base, "validate", str(one)]],
            }
            files = sum(1 for _ in catalog.glob("bundles/*/tools/*/*/tool.json"))
            bench.print_table(size, f"{files} tool files, whole process, warm cache", commands,
                              args.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
