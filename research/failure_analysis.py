#!/usr/bin/env python3
"""Why the default `pick` misses: every request whose first pick is not one of its tools,
with what the first pick and the request's own tools matched (issue 18, docs/QUALITY.md).

    python3 bench/quality.py --no-alone --methods bm25 --keep     # writes the per-query ranks
    python3 research/failure_analysis.py                              # reads them
    python3 research/failure_analysis.py --cfb 100 --seed 12 --show   # every case printed

Reads `target/bench-quality/quality.json` (the `bm25` rows of the `+10k` catalog) and the
tools of `research/ranking_prototype.py`'s corpus (the same 8,314 tools). For each request whose
first pick is not relevant (all of glaive, sgd and executable; a random `--cfb` of cfb's) it
shows (`--show`) what the first pick and each of the request's tools matched (words
Snowball-stemmed, toolctl's stop words and chat phrasing left out, as the prototype reads
them), with a bucket proposed from the words alone:

- **helper**: no relevant tool has a name word in the request, and those ranked below first
  are named, in a required argument's description, by another of its tools;
- **other words**: no relevant tool has a name word in the request;
- **distractor** / **other data set** / **same data set**: where the first pick comes from.

Those are a first sort only. `READ` is the reading of each case by hand (commit ef1b6e9's
ranks, `--cfb 100 --seed 12`), one bucket of `BUCKETS` each; the table printed counts it
(docs/QUALITY.md, "Where the default pick still misses", says what each bucket holds). Last,
a count of every relevant tool outside the first 5: named by its request (a word of its
name in it) or not, a helper (another of the request's tools names it) or not.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

# The other notebooks here, and bench/'s modules (catalog, nestful, quality, embed_server).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402
import nestful  # noqa: E402
import quality  # noqa: E402
import ranking_prototype as rp  # noqa: E402
import rerank_prototype  # noqa: E402


# The reading, case by case, of the 154 requests the default `pick` at commit ef1b6e9 misses
# at R@1 (`--cfb 100 --seed 12`): request → bucket. The buckets (docs/QUALITY.md, "Where the
# default pick still misses"):
BUCKETS = {
    "O": "another data set's tool for the same job won",
    "N": "a tool for another step or job won on the request's side words",
    "L": "the label looks wrong or arbitrary (the first pick does what is asked)",
    "D": "a generated distractor won",
    "W": "the request says the job in other words than its tool",
    "H": "the tool is a helper the request never mentions",
    "X": "other",
}
READ = {
    "glaive": {21: "L", 39: "L", 50: "L", 57: "W", 59: "N", 74: "O", 78: "L", 85: "L", 91: "O",
               92: "L", 101: "O", 102: "N", 131: "N", 136: "L", 152: "L"},
    "sgd": {17: "X", 28: "O", 39: "L", 40: "N", 44: "W"},
    "executable": {0: "D", 1: "O", 2: "N", 9: "D", 10: "W", 11: "D", 12: "D", 13: "O", 15: "D",
                   16: "D", 18: "W", 19: "D", 23: "X", 27: "D", 33: "N", 34: "N", 38: "D", 43: "O",
                   44: "O", 46: "O", 48: "O", 49: "O", 52: "L", 53: "O", 55: "O", 56: "O", 66: "N",
                   68: "N", 69: "O", 70: "N", 75: "N", 76: "N", 77: "L", 84: "W"},
    "cfb": {
        **dict.fromkeys([692, 698, 732, 736], "N"),  # Flights.ReserveRoundtripFlights on "trip"
        **dict.fromkeys([902, 903, 906, 908, 916, 917, 919, 929, 952], "O"),  # round-trip flights
        **dict.fromkeys([330, 331, 333, 339, 557, 558, 627, 628, 760, 761, 764, 765], "N"),
        **dict.fromkeys([271, 277], "L"),  # "stops in Winnipeg and Calgary": Search_Flights_Multi_Stops
        **dict.fromkeys([682, 683, 684, 687, 820, 821, 824, 826, 828], "N"),
        **dict.fromkeys([881, 884, 891, 930, 931, 932, 970, 971, 973], "L"),  # Search_Flights
        **dict.fromkeys([240, 242, 243], "W"),  # "air tickets"
        **dict.fromkeys([380, 385, 496], "O"), 663: "N",
        701: "W", 768: "N", **dict.fromkeys([776, 779, 810, 813], "L"),  # Get_Availability
        **dict.fromkeys([106, 108, 135, 136], "L"),  # "the vehicle and the supplier": Vehicle_Supplier_Details
        **dict.fromkeys([161, 165, 222, 228], "N"),  # Vehicle_Details on "details"
        310: "N", 317: "N", 946: "L", 948: "L",  # Get_Min_Price
        **dict.fromkeys([850, 851, 852, 854], "W"),  # "fly" (flight)
        **dict.fromkeys([81, 87, 183], "O"),  # RentalCars.GetCarsAvailable
        **dict.fromkeys([150, 195, 199], "N"),  # Get_Popular_Attraction_Near_By on "popular", "near"
        **dict.fromkeys([421, 428, 429], "L"),  # Get_Attraction_Details for "detailed information"
        **dict.fromkeys([501, 502, 503], "N"),  # Get_Min_Price_Multi_Stops on "cheapest", "day"
        152: "N", 158: "N",  # Real-Time_Product_Search_Search on "top-rated" (its enum values)
        340: "L", 342: "L",  # Search_Attractions for "a nearby attraction"
        **dict.fromkeys([393, 399, 345, 711, 717], "D"),
        614: "O", 673: "O", 267: "O", 396: "O", 638: "L",
    },
}


def terms_of(analysis: rp.Analysis, doc: quality.Doc) -> dict[str, set[str]]:
    """The stemmed words of each field of a tool."""
    return {f: set(analysis.doc_terms(t)[0]) for f, t in rp.field_texts(doc).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=Path,
                        default=bench.ROOT / "target" / "bench-quality" / "quality.json")
    parser.add_argument("--method", default="bm25")
    parser.add_argument("--cfb", type=int, default=100, help="how many of cfb's misses (random)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--show", action="store_true", help="print every case")
    args = parser.parse_args()
    quality.ensure_venv()

    doc = json.loads(args.ranks.read_text())
    rows = [r for r in doc["queries"] if r["method"] == args.method and r["catalog"] == "+10k"]
    corpus = rp.load_corpus(10_000)
    docs = {d.key: d for d in corpus.docs}
    where = {d.key: i for i, d in enumerate(corpus.docs)}
    links = rerank_prototype.helper_links(corpus)
    needs = {corpus.docs[a].key: {corpus.docs[b].key for b in bs} for a, bs in links.items()}
    analysis = rp.Analysis()
    cache: dict[str, dict[str, set[str]]] = {}

    def fields(key: str) -> dict[str, set[str]]:
        if key not in cache:
            cache[key] = terms_of(analysis, docs[key]) if key in docs else {}
        return cache[key]

    misses = [r for r in rows if not r["top"] or r["top"][0] not in r["relevant"]]
    cfb = [r for r in misses if r["dataset"] == "cfb"]
    random.Random(args.seed).shuffle(cfb)
    chosen = [r for r in misses if r["dataset"] != "cfb"] + sorted(cfb[:args.cfb], key=lambda r: r["index"])
    proposed: Counter = Counter()
    read: dict[str, Counter] = {}
    unread = 0
    for r in chosen:
        q = set(analysis.query_terms(r["query"])[0])
        named = [k for k in r["relevant"] if fields(k).get("name", set()) & q]
        missed = [k for k in r["relevant"] if r["ranks"].get(k) is None or r["ranks"][k] > 1]
        top = r["top"][0] if r["top"] else None
        origin = ("none" if top is None else
                  "same data set" if top.split("/")[0] == r["dataset"] else
                  "other data set" if top.split("/")[0] in nestful.NAMES else "distractor")
        helper = [k for k in missed if k not in named
                  and any(k in needs.get(n, ()) for n in r["relevant"])]
        if not named and helper and len(helper) == len(missed):
            bucket = "helper"
        elif not named:
            bucket = "other words"
        else:
            bucket = origin
        proposed[bucket] += 1
        mine = READ.get(r["dataset"], {}).get(r["index"])
        unread += mine is None
        read.setdefault(r["dataset"], Counter())[mine or "?"] += 1
        if args.show:
            print(f"\n[{r['dataset']} {r['index']}] {bucket} / read: {BUCKETS.get(mine or '', '?')}: "
                  f"{r['query']}")
            print(f"  query terms: {' '.join(sorted(q))}")
            for k in r["relevant"]:
                f = fields(k)
                hit = sorted(set().union(*f.values()) & q) if f else []
                print(f"  relevant {k} @{r['ranks'].get(k)}: name {' '.join(sorted(f.get('name', [])))}"
                      f" | matches {' '.join(hit)}")
            if top:
                f = fields(top)
                hit = {n: sorted(v & q) for n, v in f.items() if v & q}
                print(f"  first {top} ({origin}): {hit}")
    print(f"\n{len(chosen)} requests whose first pick is not relevant "
          f"(of {len(misses)} such; cfb: {min(args.cfb, len(cfb))} of {len(cfb)} at random)")
    print("proposed from the words: " + ", ".join(f"{b} {n}" for b, n in proposed.most_common()))
    if unread:
        print(f"warning: {unread} of them are not in READ (other ranks than commit ef1b6e9's?)")
    sets = [d for d in nestful.NAMES if d in read]
    print("\n| why the first pick is not relevant | " + " | ".join(sets) + " | all |")
    print("|---|" + "---:|" * (len(sets) + 1))
    for code, text in BUCKETS.items():
        n = [read[d][code] for d in sets]
        print(f"| {text} | " + " | ".join(map(str, n)) + f" | {sum(n)} |")
    print("| requests read | " + " | ".join(str(sum(read[d].values())) for d in sets)
          + f" | {len(chosen)} |")

    # What capped R@5 misses: each relevant tool outside the first 5, named by the request (a
    # word of its name in it) or not, a helper (another of the request's tools names it) or not.
    lost: dict[str, Counter] = {}
    for r in rows:
        q = set(analysis.query_terms(r["query"])[0])
        for k in r["relevant"]:
            if (r["ranks"].get(k) or 99) <= 5:
                continue
            kind = ("named" if fields(k).get("name", set()) & q else "not named") + (
                ", a helper" if any(k in needs.get(n, ()) for n in r["relevant"] if n != k) else "")
            lost.setdefault(r["dataset"], Counter())[kind] += 1
    kinds = ["named", "named, a helper", "not named", "not named, a helper"]
    print("\n| relevant tools outside the first 5 | " + " | ".join(kinds) + " |")
    print("|---|" + "---:|" * len(kinds))
    for d in nestful.NAMES:
        if d in lost:
            print(f"| {d} | " + " | ".join(str(lost[d][k]) for k in kinds) + " |")

if __name__ == "__main__":
    main()
