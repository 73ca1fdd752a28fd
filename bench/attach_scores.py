#!/usr/bin/env python3
"""Which absolute scores right and unrelated tools get, for `attach`'s `min_score` (run on
demand, not in CI; Python 3.11+, stdlib).

    python3 bench/attach_scores.py                  # every data set, 60 requests each
    python3 bench/attach_scores.py --sample 0 --scorer bm25

`attach` compares `min_score` (0–100, default 35) with a tool's absolute score, the same scale
for every request (`pick --debug`'s `absolute` for `fused` and `hybrid`, the score itself for
`bm25`). This prints, for the requests of NESTFUL's and BFCL's development splits
(bench/quality.py's loaders):

- *right*: the best absolute score among each request's own tools, in its data set's catalog
  with 10,000 generated distractors (the request's tools found in the first 10);
- *nothing right*: the best absolute score of each request against a catalog of the 10,000
  distractors and the other source's tools (NESTFUL's requests against BFCL's functions and the
  reverse): a request with no right tool, which should attach nothing;

as percentiles, and for each threshold the share of right tools that pass it and of
nothing-right requests that attach nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402
import quality  # noqa: E402

THRESHOLDS = [0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50]


def absolute_scores(base: list[str], query: str, scorer: str) -> list[tuple[str, float, float]]:
    """(ref, absolute score, cosine) of the first 10 picks of `query`, best first (the cosine
    is 0 for a scorer without one)."""
    argv = [*base, "pick", query, "--scorer", scorer, "--allow-unsafe", "--max", "10",
            "--min-score", "0", "--no-helpers", "--debug"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    found = []
    for item in json.loads(out)["items"]:
        details = item.get("provenance", {}).get("details", {})
        semantic = (details.get("subScores") or {}).get("semantic") or 0.0
        found.append((item["ref"], float(details.get("absolute", item["score"])), float(semantic)))
    return found


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=60, help="requests per data set; 0: all")
    parser.add_argument("--scorer", default="fused")
    args = parser.parse_args()
    bench.become_subreaper()
    bench.build()
    data = {source: module.load() for source, module in quality.SOURCES.items()}
    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-attach-scores-"))
    try:
        right: list[float] = []
        nothing: list[float] = []
        # The cosines of the same tools.
        right_cos: list[float] = []
        nothing_cos: list[float] = []
        for source, module in quality.SOURCES.items():
            other = next(s for s in quality.SOURCES if s != source)
            own, foreign = work / f"own-{source}", work / f"foreign-{source}"
            for path in (own, foreign):
                subprocess.run([str(bench.GEN_CATALOG), "--tools", "10000", "--out", str(path),
                                "--seed", str(bench.SEED)], check=True, capture_output=True)
            refs = module.write_bundles(own, data[source].tools)
            quality.SOURCES[other].write_bundles(foreign, data[other].tools)
            requests = data[source].requests
            by_set: dict[str, list] = {}
            for r in requests:
                by_set.setdefault(r.dataset, []).append(r)
            chosen = []
            for reqs in by_set.values():
                n = len(reqs) if args.sample <= 0 else min(args.sample, len(reqs))
                step = len(reqs) / n
                chosen += [reqs[int(i * step)] for i in range(n)]
            for path, sink in ((own, right), (foreign, nothing)):
                base = [str(bench.TOOLCTL), "--catalog", str(path), "--json"]
                subprocess.run([*base, "index", "rebuild"], check=True, capture_output=True)
                for r in chosen:
                    found = absolute_scores(base, r.query, args.scorer)
                    if sink is nothing:
                        sink.append(found[0][1] if found else 0.0)
                        nothing_cos.append(max((c for _, _, c in found), default=0.0))
                        continue
                    mine = [(s, c) for ref, s, c in found
                            if quality.key_of(ref, refs) in r.relevant_keys]
                    if mine:
                        sink.append(max(s for s, _ in mine))
                        right_cos.extend(c for _, c in mine)
            print(f"{source}: {len(chosen)} requests", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"absolute scores, `pick --scorer {args.scorer}` (attach's min_score / 100)\n")
    print("| population | n | p10 | p25 | p50 | p75 | p90 |\n|---|---:|---:|---:|---:|---:|---:|")
    for label, xs in (("best right tool (own catalog, in the first 10)", right),
                      ("best tool, nothing right in the catalog", nothing),
                      ("cosine of each right tool in the first 10", right_cos),
                      ("best cosine of the first 10, nothing right", nothing_cos)):
        cells = " | ".join(f"{percentile(xs, p):.3f}" for p in (10, 25, 50, 75, 90))
        print(f"| {label} | {len(xs)} | {cells} |")
    print("\n| min_score | right tools that pass | nothing-right requests that attach nothing |")
    print("|---:|---:|---:|")
    for t in THRESHOLDS:
        passing = sum(x >= t for x in right) / max(1, len(right))
        rejected = sum(x < t for x in nothing) / max(1, len(nothing))
        print(f"| {t * 100:.0f} | {passing:.3f} | {rejected:.3f} |")


if __name__ == "__main__":
    main()
