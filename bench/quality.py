#!/usr/bin/env python3
"""Benchmark how well `pick` and `search` find the right tools, on public data (NESTFUL and
BFCL's development split).

    python3 bench/quality.py                    # every data set alone, and with 10,000 distractors
    python3 bench/quality.py --no-alone --methods bm25,bm25-relevance   # the default pick and relevance alone
    python3 bench/quality.py --embed            # also --scorer embed and hybrid (MiniLM, bench/embed_server.py)
    python3 bench/quality.py --sample 100 --distractors 1000   # a quick look

Run on demand (not in CI; Python 3.11+). It builds the release binary and `gen-catalog`,
downloads NESTFUL and BFCL once into the cache (bench/nestful.py and bench/bfcl.py say what
they hold and how a request is labelled), and ranks every request against two kinds of
catalog, for each of the two sources:

- **alone**: each NESTFUL data set in a catalog of its own (its one bundle and the built-in
  tools); BFCL's functions in one (its six categories share them);
- **+10k**: the union of the source's data sets' tools plus `--distractors` generated tools
  (`gen-catalog --seed 42`), so the figure is about finding a needle at scale.

BFCL's `live_*` categories are held out: bench/bfcl.py never reads them.

Methods, each asked for its 10 best:
- `toolctl pick --scorer keyword`, `--scorer bm25` (the default), `toolctl search`, and with
  `--embed` `--scorer embed` and `--scorer hybrid`: one process per request (the release
  binary; pick with `--allow-unsafe --max 10 --min-score 0.000001`, so every tool search sees
  is a candidate and only tools that score count; search with `--page-size 10`, every version
  an item as it shows them). The index is built first, and an index watcher is started for
  each catalog and stopped after (`--walk`: none; TOOLCTL_WATCH=never either way, so no
  command starts one by itself). The first request of each method is run once unmeasured
  (for embed, that embeds the whole catalog into toolctl's cache).
- Ablations and the steps that are off by default, each run only when `--methods` names it:
  `bm25-relevance` and `bm25-no-helpers` (both `pick --no-helpers`: relevance alone, without
  the helper tools its first picks' required arguments name), `bm25-coverage` (`pick
  --coverage`: a sentence's picks chosen to cover its words), `bm25-siblings` (`pick
  --siblings`: its first picks lift their siblings, tools of their bundle whose names begin
  with the same word), `bm25-all-steps` (both: the default before the stage rule); with
  `--embed`, `hybrid-coverage` (`pick --scorer hybrid --coverage`).
- `rrf` (with `--embed`): the `bm25` and `embed` rankings (each read 100 deep) fused in this
  process by weighted reciprocal rank fusion (k 60, 0.4 lexical / 0.6 semantic), to compare
  with `hybrid`, which fuses min-max normalised scores with the same weights.
- Reference baselines over the same tools, in this process: `overlap`, the number of distinct
  query words found in the tool's text, and `rank_bm25`, Okapi BM25 (the `rank_bm25` package,
  defaults: k1 1.5, b 0.75, epsilon 0.25) over the same words. A tool's text: its name,
  description, and its arguments' names and descriptions (nested ones too); words are runs of
  letters and digits, lower-cased, identifiers split at `_ - .` and camelCase, toolctl's stop
  words left out; no stemming. Ties keep registration order (`createdAt`), as pick does.
  They need `rank_bm25`: the script makes a venv for it in the cache the first time.

Scores (a NESTFUL request has 1 to 7 relevant tools, most 2 to 4; a BFCL one 1 to 4, most 1):
- **R@k**: relevant tools among the first k over min(k, relevant tools), averaged over
  requests (so R@1 is "the first is relevant", and a request with 3 tools is found whole at
  R@5 when all 3 are in the first 5);
- **MRR@10**: 1 / position of the first relevant tool (0 when none is in the first 10);
- **hit@5**: 1 when any relevant tool is among the first 5 (lenient where R@5 is harsh);
- **ms**: median whole-process wall time per request (toolctl methods only).
The markdown table goes to stdout and `--out` (default target/bench-quality/quality.md), the
per-query ranks to the JSON beside it, with the command that made them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl  # noqa: E402
import catalog as bench  # noqa: E402  (release build, gen-catalog, TOOLCTL_WATCH=never)
import nestful  # noqa: E402

VENV = nestful.CACHE / "venv"
VENV_PACKAGES = ["rank_bm25==0.2.2", "snowballstemmer==3.1.1", "numpy", "scipy"]  # scipy: the prototypes
EMBED_MODEL = "all-MiniLM-L6-v2"
TOOLCTL_METHODS = ["keyword", "bm25", "fused", "search"]
# The data sets, by their module (each has NAMES, load and write_bundles), in table order.
SOURCES = {"NESTFUL": nestful, "BFCL": bfcl}
SOURCE_OF = {name: label for label, module in SOURCES.items() for name in module.NAMES}
ALL_DATASETS = [name for module in SOURCES.values() for name in module.NAMES]
# The default pick with some of its steps turned off, by the flags that do it (not run unless
# named in --methods).
ABLATIONS = {"bm25-relevance": ["--no-helpers"], "bm25-no-helpers": ["--no-helpers"],
             "bm25-coverage": ["--coverage"],
             "bm25-siblings": ["--siblings"], "bm25-all-steps": ["--coverage", "--siblings"],
             "hybrid-coverage": ["--coverage"],
             "fused-relevance": ["--no-helpers"], "fused-coverage": ["--coverage"],
             "fused-siblings": ["--siblings"],
             **{f"fused-w{w}": ["--lexical-weight", w] for w in ("0.2", "0.3", "0.5", "0.6", "0.7", "0.8")}}
EMBED_METHODS = ["embed", "hybrid"]
# Derived from the `bm25` and `embed` rankings (each read 100 deep), fused in this process.
FUSED_METHODS = ["rrf"]
FUSION_DEPTH = 100
RRF_K = 60
BASELINES = ["overlap", "rank_bm25"]
DEPTH = 10
KS = (1, 5, 10)


def ensure_venv() -> None:
    """Run inside VENV (with rank_bm25), making it first if need be."""
    try:
        import rank_bm25  # noqa: F401  (the test is the import)
        return
    except ImportError:
        pass
    python = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        sys.exit(f"error: {VENV} lacks rank_bm25; delete it and run again")
    if not python.exists() or subprocess.run([str(python), "-c", "import rank_bm25"],
                                             capture_output=True).returncode != 0:
        print(f"making {VENV} ({', '.join(VENV_PACKAGES)})", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *VENV_PACKAGES], check=True)
    os.execv(str(python), [str(python), *sys.argv])


# --- the tools of a catalog, as the baselines read them ---------------------------------

STOP_WORDS = {
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from",
    "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "me", "might", "my", "no", "not", "of", "on", "or", "our",
    "please", "she", "should", "so", "some", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "too", "us", "very", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your",
}  # toolctl's (src/index/text.rs, STOP_WORDS)


def words(text: str) -> list[str]:
    """Runs of letters and digits, lower-cased, camelCase split (`getHTTPResponse` → get http
    response); `_` `-` `.` separate words."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return re.findall(r"[^\W_]+", text.lower())


def argument_fields(schema, depth: int = 0) -> tuple[list[str], list[str], list[str]]:
    """(names, descriptions, enum values) of a JSON Schema's properties, nested ones too (as
    toolctl's index reads them, to depth 3)."""
    names: list[str] = []
    descriptions: list[str] = []
    values: list[str] = []
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return names, descriptions, values
    for name, spec in schema["properties"].items():
        names.append(name)
        if not isinstance(spec, dict):
            continue
        if isinstance(spec.get("description"), str):
            descriptions.append(spec["description"])
        for source in (spec, spec.get("items") if isinstance(spec.get("items"), dict) else {}):
            if isinstance(source.get("enum"), list):
                values.extend(str(v) for v in source["enum"] if v is not None)
        if depth < 3:
            for sub in (spec, spec.get("items")):
                n, d, v = argument_fields(sub, depth + 1)
                names += n
                descriptions += d
                values += v
    return names, descriptions, values


@dataclass
class Doc:
    key: str  # `dataset/name` for a NESTFUL tool, `bundle/slug` for any other
    slug: str
    display: str
    description: str
    tags: list[str]
    arg_names: list[str]
    arg_descriptions: list[str]
    enum_values: list[str]
    created: str
    output: list[str] = field(default_factory=list)  # outputSchema's names, then descriptions

    def baseline_text(self) -> str:
        """Name, description, argument names and descriptions (the issue's baseline text)."""
        return " ".join([self.slug, self.description, *self.arg_names, *self.arg_descriptions])


def catalog_docs(catalog: Path, refs: dict[str, str]) -> list[Doc]:
    """The tools pick would rank in `catalog`: for each slug of each enabled, live bundle, its
    enabled version with the newest createdAt; built-ins too. In registration order."""
    docs: list[Doc] = []
    for bundle_file in sorted((catalog / "bundles").glob("*/bundle.json")):
        bundle = json.loads(bundle_file.read_text())
        if not bundle.get("isEnabled") or bundle.get("softDeletedAt"):
            continue
        for slug_dir in sorted((bundle_file.parent / "tools").iterdir()):
            versions = [json.loads(p.read_text()) for p in slug_dir.glob("*/tool.json")]
            versions = [v for v in versions if v.get("isEnabled")]
            if not versions:
                continue
            tool = max(versions, key=lambda v: v["createdAt"])
            ref = f"{bundle['slug']}/{tool['slug']}@{tool['version']}"
            docs.append(make_doc(refs.get(ref, f"{bundle['slug']}/{tool['slug']}"), tool))
    for name in ("readfile", "file-search", "now"):
        tool = bench.toolctl_json(catalog, "tool", "get", f"builtin/{name}")
        docs.append(make_doc(f"builtin/{name}", tool.get("tool", tool)))
    docs.sort(key=lambda d: d.created)
    return docs


def make_doc(key: str, tool: dict) -> Doc:
    names, descriptions, values = argument_fields(tool.get("argSchema"))
    out_names, out_descriptions, _ = argument_fields(tool.get("outputSchema"))
    return Doc(key, tool.get("slug", ""), tool.get("displayName", ""), tool.get("description", ""),
               list(tool.get("tags") or []), names, descriptions, values,
               tool.get("createdAt", ""), out_names + out_descriptions)


# --- the baselines ----------------------------------------------------------------------

def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOP_WORDS]


class Overlap:
    """The number of distinct query words found in a tool's text."""

    def __init__(self, docs: list[Doc]):
        self.sets = [set(content_words(d.baseline_text())) for d in docs]

    def scores(self, query: str) -> list[float]:
        q = set(content_words(query))
        return [float(len(q & s)) for s in self.sets]


class RankBM25:
    """Okapi BM25 of the rank_bm25 package, defaults, over the same words."""

    def __init__(self, docs: list[Doc]):
        from rank_bm25 import BM25Okapi

        self.bm25 = BM25Okapi([content_words(d.baseline_text()) or ["\x00"] for d in docs])

    def scores(self, query: str) -> list[float]:
        return [float(s) for s in self.bm25.get_scores(content_words(query))]


def top_keys(scores: list[float], docs: list[Doc], depth: int = DEPTH) -> list[str]:
    """The keys of the `depth` best-scoring docs with a score above 0; ties in doc order."""
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    return [docs[i].key for i in order[:depth]]


# --- scoring ----------------------------------------------------------------------------

def ranks(top: list[str], relevant: list[str]) -> dict[str, int | None]:
    """1-based position of each relevant key in `top`, None when absent."""
    position = {}
    for i, key in enumerate(top):
        position.setdefault(key, i + 1)
    return {key: position.get(key) for key in relevant}


def query_scores(found: dict[str, int | None]) -> dict[str, float]:
    positions = [p for p in found.values() if p is not None]
    out = {f"r{k}": sum(1 for p in positions if p <= k) / min(k, len(found)) for k in KS}
    out["mrr10"] = 1 / min(positions) if positions else 0.0
    out["hit5"] = 1.0 if any(p <= 5 for p in positions) else 0.0
    return out


def summarise(rows: list[dict]) -> dict[str, float]:
    """Mean of each figure over the rows' queries."""
    per = [query_scores(r["ranks"]) for r in rows]
    return {name: sum(p[name] for p in per) / len(per) for name in per[0]} if per else {}


# --- running toolctl --------------------------------------------------------------------

def run_capture(argv: list[str], scratch: Path) -> tuple[float, str]:
    """Run argv with stdout to a file; return (wall ms, stdout)."""
    out, err = scratch / "stdout.txt", scratch / "stderr.txt"
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(out), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, str(err), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    started = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    _, status, _ = os.wait4(pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    bench.check_status(argv, status, err)
    return elapsed, out.read_text()


def method_argv(base: list[str], method: str, query: str, embed_url: str | None,
                depth: int = DEPTH) -> list[str]:
    if method == "search":
        return [*base, "search", query, "--page-size", str(depth)]
    scorer = method.split("-", 1)[0]
    argv = [*base, "pick", query, "--scorer", scorer, "--allow-unsafe", "--max", str(depth),
            "--min-score", "0.000001"]
    if method in ABLATIONS:
        argv += ABLATIONS[method]
    if scorer in EMBED_METHODS:
        argv += ["--embed-url", embed_url or "", "--embed-model", EMBED_MODEL]
    return argv


def result_items(method: str, stdout: str) -> list[tuple[str, str | None, float]]:
    """(ref, search tier, score) of each result."""
    doc = json.loads(stdout)
    items = doc["items"]  # search and pick both print {items, …}
    return [(item["ref"], item.get("tier"), float(item.get("score") or 0.0)) for item in items]


def fused(lexical: list[tuple[str, float]], semantic: list[tuple[str, float]],
          weight: float = 0.4) -> list[str]:
    """The first DEPTH keys of two rankings (key, score) fused by weighted reciprocal rank
    fusion: `weight / (k + lexical rank) + (1 − weight) / (k + semantic rank)`, k 60, a tool
    missing from a list (each is FUSION_DEPTH deep) ranked just after it. `hybrid`'s own
    fusion (min-max normalised scores, 0.4 / 0.6) is what it is compared with."""
    keys = list(dict.fromkeys([k for k, _ in lexical] + [k for k, _ in semantic]))
    rank_l = {k: i + 1 for i, (k, _) in enumerate(lexical)}
    rank_s = {k: i + 1 for i, (k, _) in enumerate(semantic)}
    miss = FUSION_DEPTH + 1
    score = {k: weight / (RRF_K + rank_l.get(k, miss)) + (1 - weight) / (RRF_K + rank_s.get(k, miss))
             for k in keys}
    order = sorted(range(len(keys)), key=lambda i: (-score[keys[i]], i))
    return [keys[i] for i in order[:DEPTH]]


def key_of(ref: str, refs: dict[str, str]) -> str:
    """The scoring key of a toolctl ref: `dataset/name` for NESTFUL tools, else `bundle/slug`."""
    return refs.get(ref) or ref.split("@", 1)[0]


@contextlib.contextmanager
def watcher(base: list[str], enabled: bool):
    if not enabled:
        yield
        return
    subprocess.run([*base, "index", "watch", "--detach"], check=True, capture_output=True)
    try:
        yield
    finally:
        stop = subprocess.run([*base, "index", "watch", "--stop"], capture_output=True, text=True)
        if stop.returncode != 0:
            print(f"warning: index watch --stop: {stop.stderr.strip()}", file=sys.stderr)


@contextlib.contextmanager
def embed_server(threads: int = 1):
    """bench/embed_server.py on a free port, for the block; yields its base URL."""
    script = Path(__file__).resolve().parent / "embed_server.py"
    server = subprocess.Popen([sys.executable, str(script), "--port", "0", "--threads", str(threads)],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        if not line.startswith("ready "):
            sys.exit("error: bench/embed_server.py did not start (see its errors above)")
        yield line.split()[1]
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# --- the benchmark ----------------------------------------------------------------------

@dataclass
class Catalog:
    label: str  # "NESTFUL alone", "BFCL +10k", …
    path: Path
    refs: dict[str, str]  # toolctl ref → data set key
    datasets: list[str]
    tools: int = 0
    docs: list[Doc] = field(default_factory=list)


def build_catalogs(data: dict[str, nestful.Data], datasets: list[str], distractors: int,
                   work: Path, alone: bool) -> list[Catalog]:
    """For each source (NESTFUL, BFCL) of `datasets`, by `data[source]`: its catalogs alone
    (a NESTFUL data set each; BFCL's functions, which all its categories share, once) and its
    union with `distractors` generated tools."""
    catalogs: list[Catalog] = []
    for source, module in SOURCES.items():
        mine = [d for d in datasets if SOURCE_OF[d] == source]
        if not mine:
            continue
        tools = [t for t in data[source].tools if module is bfcl or t.dataset in mine]
        if alone:
            groups = [[d] for d in mine] if module is nestful else [mine]
            for group in groups:
                path = work / f"alone-{source}-{group[0]}"
                refs = module.write_bundles(path, [t for t in tools if module is bfcl
                                                   or t.dataset == group[0]])
                catalogs.append(Catalog(f"{source} alone", path, refs, group))
        if distractors >= 0:
            path = work / f"union-{source}"
            if distractors > 0:
                subprocess.run([str(bench.GEN_CATALOG), "--tools", str(distractors), "--out",
                                str(path), "--seed", str(bench.SEED)], check=True,
                               capture_output=True)
            refs = module.write_bundles(path, tools)
            size = f"+{distractors // 1000}k" if distractors >= 1000 else f"+{distractors}"
            catalogs.append(Catalog(f"{source} {size}", path, refs, mine))
    for c in catalogs:
        base = [str(bench.TOOLCTL), "--catalog", str(c.path), "--json"]
        subprocess.run([*base, "index", "rebuild"], check=True, capture_output=True)
        c.docs = catalog_docs(c.path, c.refs)
        c.tools = len(c.docs)
    return catalogs


def run(args, requests_all: list, catalogs: list[Catalog], embed_url: str | None,
        scratch: Path) -> list[dict]:
    methods = [m for m in args.methods
               if m in TOOLCTL_METHODS + list(ABLATIONS) + EMBED_METHODS + BASELINES + FUSED_METHODS]
    # The fused methods read `bm25` and `embed` deeper, so those run first.
    fusing = embed_url is not None and any(m in FUSED_METHODS for m in methods)
    methods.sort(key=lambda m: m in FUSED_METHODS)
    rows: list[dict] = []
    for c in catalogs:
        deep: dict[tuple[str, int], dict[str, list[tuple[str, float]]]] = {}
        requests = [r for r in requests_all if r.dataset in c.datasets]
        base = [str(bench.TOOLCTL), "--catalog", str(c.path), "--json"]
        print(f"{c.label} {','.join(c.datasets)}: {c.tools} tools, {len(requests)} requests",
              file=sys.stderr)
        with watcher(base, not args.walk):
            for method in methods:
                started = time.perf_counter()
                if method in BASELINES:
                    scorer = Overlap(c.docs) if method == "overlap" else RankBM25(c.docs)
                    for r in requests:
                        top = top_keys(scorer.scores(r.query), c.docs)
                        rows.append(row(c, method, r, top, None))
                elif method in FUSED_METHODS:
                    for r in requests:
                        lists = deep.get((r.dataset, r.index))
                        if lists and "bm25" in lists and "embed" in lists:
                            top = fused(lists["bm25"], lists["embed"])
                            rows.append(row(c, method, r, top, None))
                else:
                    if method.split("-", 1)[0] in EMBED_METHODS and not embed_url:
                        continue
                    depth = FUSION_DEPTH if fusing and method in ("bm25", "embed") else DEPTH
                    run_capture(method_argv(base, method, requests[0].query, embed_url, depth), scratch)
                    for r in requests:
                        ms, out = run_capture(method_argv(base, method, r.query, embed_url, depth),
                                              scratch)
                        items = result_items(method, out)
                        if depth > DEPTH:
                            deep.setdefault((r.dataset, r.index), {})[method] = [
                                (key_of(ref, c.refs), score) for ref, _, score in items]
                            items = items[:DEPTH]
                        top = [key_of(ref, c.refs) for ref, _, _ in items]
                        rows.append(row(c, method, r, top, ms))
                        if method == "search":
                            rows[-1]["tiers"] = [tier for _, tier, _ in items]
                print(f"  {method}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return rows


def row(c: Catalog, method: str, r, top: list[str], ms: float | None) -> dict:
    return {"catalog": c.label, "method": method, "dataset": r.dataset, "index": r.index,
            "query": r.query, "relevant": r.relevant_keys, "top": top,
            "ranks": ranks(top, r.relevant_keys), "ms": ms}


def table(rows: list[dict], catalogs: list[Catalog], methods: list[str]) -> str:
    """The markdown table: a line per catalog, data set and method, and the mean of the data
    sets (each counts the same, whatever its number of requests)."""
    lines = ["| catalog | data set | method | R@1 | R@5 | R@10 | MRR@10 | hit@5 | ms/query |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for c in catalogs:
        sets = c.datasets + (["mean"] if len(c.datasets) > 1 else [])
        for dataset in sets:
            for method in methods:
                if dataset == "mean":
                    parts = [summarise([x for x in rows if x["catalog"] == c.label
                                        and x["method"] == method and x["dataset"] == d])
                             for d in c.datasets]
                    parts = [p for p in parts if p]
                    if not parts:
                        continue
                    s = {k: sum(p[k] for p in parts) / len(parts) for k in parts[0]}
                    times = [x["ms"] for x in rows if x["catalog"] == c.label
                             and x["method"] == method and x["ms"] is not None]
                    n = sum(1 for x in rows if x["catalog"] == c.label and x["method"] == method)
                else:
                    sel = [x for x in rows if x["catalog"] == c.label and x["method"] == method
                           and x["dataset"] == dataset]
                    if not sel:
                        continue
                    s = summarise(sel)
                    times = [x["ms"] for x in sel if x["ms"] is not None]
                    n = len(sel)
                label = f"mean of {len(c.datasets)}" if dataset == "mean" else f"{dataset} ({n})"
                ms = f"{statistics.median(times):.1f}" if times else "—"
                name = {"overlap": "overlap (Python)", "rank_bm25": "rank_bm25 (Python)",
                        "search": "`search`",
                        **{m: f"`pick --scorer {m.split('-', 1)[0]} {' '.join(flags)}`"
                           for m, flags in ABLATIONS.items()},
                        "rrf": "bm25 ⊕ embed by RRF (k 60, 0.4 / 0.6; Python)"}.get(
                            method, f"`pick --scorer {method}`")
                lines.append(f"| {c.label} ({c.tools} tools) | {label} | {name} | {s['r1']:.3f} | "
                             f"{s['r5']:.3f} | {s['r10']:.3f} | {s['mrr10']:.3f} | {s['hit5']:.3f} | {ms} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(ALL_DATASETS),
                        help=f"comma-separated, of {', '.join(ALL_DATASETS)} (NESTFUL's, then "
                             "BFCL's categories)")
    parser.add_argument("--distractors", type=int, default=10_000,
                        help="generated tools beside the union of the data sets (-1: no union catalog)")
    parser.add_argument("--no-alone", action="store_true", help="skip the one-data-set catalogs")
    parser.add_argument("--methods", default=",".join(TOOLCTL_METHODS + EMBED_METHODS + BASELINES),
                        help="comma-separated: keyword, bm25, search, embed, hybrid, overlap, "
                             "rank_bm25, and with --embed rrf (bm25 and embed fused here by "
                             "reciprocal rank, from their first 100; needs bm25 and embed too)")
    parser.add_argument("--embed", action="store_true",
                        help="start bench/embed_server.py (MiniLM) and measure embed and hybrid")
    parser.add_argument("--sample", type=int, default=0,
                        help="at most this many requests per data set (evenly spread); 0: all")
    parser.add_argument("--walk", action="store_true", help="no index watcher (every command walks)")
    parser.add_argument("--out", type=Path, default=bench.ROOT / "target" / "bench-quality" / "quality.md",
                        help="the markdown table; the per-query JSON goes beside it (.json)")
    parser.add_argument("--keep", action="store_true", help="keep the catalogs and say where")
    args = parser.parse_args()
    ensure_venv()
    # SIGTERM, and SIGINT even when started in the background (where it is ignored), unwind
    # through the `finally` blocks: watchers stopped, the embed server stopped, files removed.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, _frame: sys.exit(128 + number))
    command = "python3 bench/quality.py " + shlex.join(sys.argv[1:])
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = [d for d in datasets if d not in ALL_DATASETS]
    if unknown:
        parser.error(f"unknown data sets {unknown}; of {ALL_DATASETS}")

    bench.build()
    data = {source: module.load([d for d in datasets if SOURCE_OF[d] == source])
            for source, module in SOURCES.items() if any(SOURCE_OF[d] == source for d in datasets)}
    requests = [r for d in data.values() for r in d.requests]
    if args.sample > 0:
        picked = []
        for d in datasets:
            reqs = [r for r in requests if r.dataset == d]
            step = max(1, len(reqs) / args.sample)
            picked += [reqs[int(i * step)] for i in range(min(args.sample, len(reqs)))]
        requests = picked

    work = Path(tempfile.mkdtemp(prefix="toolctl-bench-quality-"))
    scratch = work / "scratch"
    scratch.mkdir()
    try:
        catalogs = build_catalogs(data, datasets, args.distractors, work, not args.no_alone)
        with (embed_server() if args.embed else contextlib.nullcontext()) as embed_url:
            rows = run(args, requests, catalogs, embed_url, scratch)
    finally:
        if args.keep:
            print(f"catalogs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    methods = [m for m in args.methods if m not in EMBED_METHODS + FUSED_METHODS or args.embed]
    text = table(rows, catalogs, methods)
    version = subprocess.run(["git", "-C", str(bench.ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
    header = (f"Pick quality, toolctl {version}; R@k = relevant tools in the first k over "
              f"min(k, relevant); made with `{command}`")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(header + "\n\n" + text + "\n")
    args.out.with_suffix(".json").write_text(json.dumps({
        "command": command, "toolctl": version,
        "catalogs": [{"label": c.label, "datasets": c.datasets, "tools": c.tools} for c in catalogs],
        "queries": rows,
    }, indent=1) + "\n")
    print(header)
    print()
    print(text)
    print(f"\n(table: {args.out}; per-query ranks: {args.out.with_suffix('.json')})")


if __name__ == "__main__":
    main()
