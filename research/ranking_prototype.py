#!/usr/bin/env python3
"""Ranking research for issue 18: lexical rankings (and their fusion with embeddings) tried on
NESTFUL, tuned by cross-validation, as a reference for the Rust implementation.

    python3 research/ranking_prototype.py                    # baselines, ablation, CV figures of the best recipe
    python3 research/ranking_prototype.py --embed            # also fusion with MiniLM (bench/embed_server.py)
    python3 research/ranking_prototype.py --quick            # fewer tuning rounds

Everything is in this process (numpy, scipy; the venv of bench/quality.py), over the same
catalogs bench/quality.py builds: each NESTFUL data set's tools plus 10,000 tools of
`gen-catalog --seed 42` and the built-ins ("+10k"), every request of every data set ranked
against all of them, scored as bench/quality.py scores (R@1/5/10 over min(k, relevant), MRR@10).

**How tuning generalises.** Parameters are never chosen on the queries they are scored on:
- *leave one data set out* (LODO): tune on three data sets, score the fourth; the four
  held-out scores, one per data set, are the figure (this is the closest to "a different
  benchmark", which is what the held-out check is);
- *5-fold over requests* (stratified by data set, seed 7): tune on 4/5, score the other 1/5.
The objective while tuning is the mean over data sets (each counts the same, whatever its
number of requests) of (R@1 + R@5 + MRR@10) / 3, maximised by coordinate ascent over a
small grid per parameter (a few rounds); the final parameters are then tuned on all queries.

**The recipe space** (see `Recipe`): fields (name words, description, argument names,
argument descriptions, enum values, tags), each with a weight and its own length
normalisation b (BM25F: a term's frequency is the weighted sum of its per-field frequencies,
each divided by 1 − b_f + b_f·len_f/avglen_f, then saturated once with k1); English Snowball
stemming (rust-stemmers' algorithm); word bigrams; stop words with chat phrasing; pure numbers
dropped from the query; repeated query words counted once.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import subprocess
import sys
import time
import unicodedata
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path

# The other notebooks here, and bench/'s modules (catalog, nestful, quality, embed_server).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog as bench  # noqa: E402
import nestful  # noqa: E402
import quality  # noqa: E402

# --- text analysis ----------------------------------------------------------------------

# toolctl's stop words (src/index/text.rs) ...
TOOLCTL_STOP = set(quality.STOP_WORDS)
# ... and the usual English function words it lacks, plus chat phrasing: words that say how
# a person asks, never what for. Pronouns, auxiliaries, politeness, "want/need/like" of
# "I want", "I need", "I'd like", "help" of "help me", "know" of "let me know".
ENGLISH_STOP = TOOLCTL_STOP | {
    "again", "against", "am", "below", "between", "both", "down", "during", "each", "few",
    "further", "herself", "himself", "itself", "more", "most", "myself", "nor", "once", "only",
    "other", "ours", "ourselves", "out", "over", "own", "same", "such", "theirs", "themselves",
    "through", "under", "until", "up", "yours", "yourself", "yourselves", "being", "hers",
    "s", "t", "d", "ll", "m", "re", "ve", "don", "shall", "must", "may", "etc", "via",
}
CHAT_STOP = ENGLISH_STOP | {
    "please", "kindly", "thanks", "thank", "hi", "hello", "hey", "want", "wants", "wanted",
    "need", "needs", "like", "help", "let", "know", "tell", "wondering", "possible", "able",
    "could", "would", "can", "also", "then", "next", "finally", "first", "now", "afterwards",
    "after", "before", "later", "ok", "okay", "sure", "lets",
}

STEMMERS: dict[str, object] = {}


def stemmer(name: str):
    if name not in STEMMERS:
        import snowballstemmer

        STEMMERS[name] = snowballstemmer.stemmer(name)
    return STEMMERS[name]


_STEM_CACHE: dict[tuple[str, str], str] = {}


def stem(word: str, algorithm: str) -> str:
    key = (algorithm, word)
    out = _STEM_CACHE.get(key)
    if out is None:
        out = _STEM_CACHE[key] = stemmer(algorithm).stemWord(word)
    return out


@dataclass(frozen=True)
class Analysis:
    """How text becomes terms (the same for tools and queries, bar the query-only steps)."""
    stem: str | None = "english"  # Snowball algorithm, or None
    stop: str = "chat"  # "toolctl" | "english" | "chat": the query's stop words
    drop_numbers: bool = True  # pure numbers out of the query
    bigrams: bool = True  # adjacent content words as extra terms
    qtf: str = "once"  # "once": a repeated query word counts once; "raw": as often as typed
    # Bigrams skip the stop words between two content words ("weather for city" → "weather
    # city"), or ("adjacent") only pair words that are next to each other in the text, as an
    # FTS5 phrase query "a b" would match.
    bigram_mode: str = "skip"

    def stop_words(self) -> set[str]:
        return {"toolctl": TOOLCTL_STOP, "english": ENGLISH_STOP, "chat": CHAT_STOP}[self.stop]

    def doc_terms(self, text: str) -> tuple[list[str], list[str]]:
        """(unigrams, bigrams) of a tool's field: every word counts in its length; bigrams of
        adjacent words that are not stop words."""
        raw = quality.words(text)
        stops = self.stop_words()
        uni = [stem(w, self.stem) if self.stem else w for w in raw]
        bi: list[str] = []
        if self.bigrams and self.bigram_mode == "skip":
            content = [u for w, u in zip(raw, uni) if w not in stops]
            bi = [f"{a} {b}" for a, b in zip(content, content[1:])]
        elif self.bigrams:
            bi = [f"{uni[i]} {uni[i + 1]}" for i in range(len(raw) - 1)
                  if raw[i] not in stops and raw[i + 1] not in stops]
        return uni, bi

    def query_terms(self, text: str) -> tuple[list[str], list[str]]:
        raw = quality.words(text)
        stops = self.stop_words()
        # A lone letter ("s" of "what's") says nothing, as toolctl's keyword scorer knows.
        kept = [w for w in raw if w not in stops and not (self.drop_numbers and w.isdigit())
                and (len(w) > 1 or w.isdigit())]
        uni = [stem(w, self.stem) if self.stem else w for w in kept]
        if self.bigrams and self.bigram_mode == "adjacent":
            bi = [f"{stem(raw[i], self.stem) if self.stem else raw[i]} "
                  f"{stem(raw[i + 1], self.stem) if self.stem else raw[i + 1]}"
                  for i in range(len(raw) - 1) if raw[i] not in stops and raw[i + 1] not in stops]
        else:
            bi = [f"{a} {b}" for a, b in zip(uni, uni[1:])] if self.bigrams else []
        if self.qtf == "once":
            uni, bi = list(dict.fromkeys(uni)), list(dict.fromkeys(bi))
        return uni, bi


# "out": what a tool returns (index format 7); it weighs only where a Params says so and never
# counts in a word's document frequency, as in toolctl's index.
FIELDS = ["name", "desc", "argn", "argd", "enum", "tags", "out"]


def field_texts(doc: quality.Doc) -> dict[str, str]:
    name = quality.words(doc.slug)
    display = [w for w in quality.words(doc.display) if w not in name]
    return {
        "name": " ".join(name + display),
        "desc": doc.description,
        "argn": " ".join(doc.arg_names),
        "argd": " ".join(doc.arg_descriptions),
        "enum": " ".join(doc.enum_values),
        "tags": " ".join(doc.tags),
        "out": " ".join(doc.output),
    }


# --- the corpus -------------------------------------------------------------------------

@dataclass
class Corpus:
    docs: list[quality.Doc]
    requests: list[nestful.Request]
    relevant: list[list[int]]  # doc indexes of each request's relevant tools
    datasets: list[str]

    def subset(self, doc_filter) -> "Corpus":
        keep = [i for i, d in enumerate(self.docs) if doc_filter(d)]
        where = {old: new for new, old in enumerate(keep)}
        return Corpus([self.docs[i] for i in keep], self.requests,
                      [[where[i] for i in rel if i in where] for rel in self.relevant],
                      self.datasets)


def load_corpus(distractors: int) -> Corpus:
    """NESTFUL's tools, `distractors` tools of gen-catalog (seed 42) and the built-ins, in
    registration order; cached as JSON in the bench cache."""
    data = nestful.load()
    cache = nestful.CACHE / f"corpus-v7-{distractors}.json"
    if cache.is_file():
        docs = [quality.Doc(**d) for d in json.loads(cache.read_text())]
    else:
        bench.build()
        work = nestful.CACHE / f"catalog-{distractors}"
        if work.exists():
            subprocess.run(["rm", "-rf", str(work)], check=True)
        if distractors > 0:
            subprocess.run([str(bench.GEN_CATALOG), "--tools", str(distractors), "--out", str(work),
                            "--seed", str(bench.SEED)], check=True, capture_output=True)
        refs = nestful.write_bundles(work, data.tools)
        docs = quality.catalog_docs(work, refs)
        subprocess.run(["rm", "-rf", str(work)], check=True)
        cache.write_text(json.dumps([d.__dict__ for d in docs]))
    where = {d.key: i for i, d in enumerate(docs)}
    relevant = [[where[k] for k in r.relevant_keys] for r in data.requests]
    return Corpus(docs, data.requests, relevant, nestful.NAMES)


# --- BM25F, vectorised ------------------------------------------------------------------

@dataclass
class Params:
    k1: float = 1.2
    weights: dict = field(default_factory=lambda: {f: 1.0 for f in FIELDS})
    b: dict = field(default_factory=lambda: {f: 0.75 for f in FIELDS})
    bigram: float = 0.0  # weight of a bigram term against a unigram

    def key(self) -> tuple:
        return (self.k1, tuple(sorted(self.weights.items())), tuple(sorted(self.b.items())), self.bigram)


class Index:
    """Per-field term frequencies of every doc (sparse), lengths, document frequencies, and
    every request's terms, for one Analysis."""

    def __init__(self, corpus: Corpus, analysis: Analysis, single_field: bool = False):
        import numpy as np
        from scipy import sparse

        self.np, self.sparse = np, sparse
        self.corpus, self.analysis = corpus, analysis
        self.fields = ["all"] if single_field else FIELDS
        vocab: dict[str, int] = {}
        rows: dict[str, tuple[list, list, list]] = {f: ([], [], []) for f in self.fields}
        lengths = {f: np.zeros(len(corpus.docs)) for f in self.fields}
        self.is_bigram: list[bool] = []
        for i, doc in enumerate(corpus.docs):
            texts = field_texts(doc)
            if single_field:
                texts = {"all": quality.Doc.baseline_text(doc) + " " + doc.display + " "
                         + " ".join(doc.tags) + " " + " ".join(doc.enum_values)}
            for f in self.fields:
                uni, bi = analysis.doc_terms(texts[f])
                lengths[f][i] = len(uni)
                counts: dict[int, int] = {}
                for t in uni + bi:
                    if t not in vocab:
                        vocab[t] = len(vocab)
                        self.is_bigram.append(" " in t)
                    counts[vocab[t]] = counts.get(vocab[t], 0) + 1
                r, c, v = rows[f]
                for j, n in counts.items():
                    r.append(i)
                    c.append(j)
                    v.append(n)
        self.vocab = vocab
        n_docs, n_terms = len(corpus.docs), len(vocab)
        self.tf = {f: sparse.csr_matrix((rows[f][2], (rows[f][0], rows[f][1])),
                                        shape=(n_docs, n_terms), dtype=np.float64)
                   for f in self.fields}
        self.lengths = lengths
        self.avg = {f: max(lengths[f].mean(), 1e-9) for f in self.fields}
        present = sum((self.tf[f] > 0).astype(np.float64) for f in self.fields if f != "out")
        df = np.asarray((present > 0).sum(axis=0)).ravel()
        self.df = df
        self.idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5))
        # Queries: unigram and bigram term ids (unknown terms dropped: they match nothing).
        self.q_uni, self.q_bi, self.q_len, self.q_terms_all = [], [], [], []
        for r in corpus.requests:
            uni, bi = analysis.query_terms(r.query)
            self.q_uni.append([vocab[t] for t in uni if t in vocab])
            self.q_bi.append([vocab[t] for t in bi if t in vocab])
            self.q_len.append(len(uni))
            self.q_terms_all.append(uni)
        self.order_penalty = np.arange(n_docs) * 1e-12  # ties: registration order

    def query_matrix(self, rows: list[int], bigram: float):
        """Queries × terms: idf per occurrence (bigrams × `bigram`)."""
        sparse = self.sparse
        r, c, v = [], [], []
        for qi, q in enumerate(rows):
            for t in self.q_uni[q]:
                r.append(qi)
                c.append(t)
                v.append(self.idf[t])
            if bigram > 0:
                for t in self.q_bi[q]:
                    r.append(qi)
                    c.append(t)
                    v.append(self.idf[t] * bigram)
        return sparse.csr_matrix((v, (r, c)), shape=(len(rows), len(self.vocab)))

    def saturated(self, p: Params):
        """Docs × terms: the BM25F term weight tf~/(k1 + tf~)."""
        total = None
        for f in self.fields:
            w = p.weights.get(f, 1.0) if f != "all" else 1.0
            if w == 0:
                continue
            b = p.b.get(f, 0.75) if f != "all" else p.b.get("all", 0.75)
            # (a field of length 0 holds no term: its norm is never used)
            norm = 1.0 / self.np.maximum(1 - b + b * self.lengths[f] / self.avg[f], 1e-9)
            part = self.sparse.diags(norm * w) @ self.tf[f]
            total = part if total is None else total + part
        total = total.tocsr()
        total.data = total.data / (p.k1 + total.data)
        return total

    def scores(self, p: Params, rows: list[int], dense: bool = False):
        """Queries × docs (CSR; dense with `dense`)."""
        sat = self.saturated(p)
        q = self.query_matrix(rows, p.bigram)
        s = (q @ sat.T).tocsr()
        return s.toarray() if dense else s

    def max_scores(self, p: Params, rows: list[int]):
        """Each query's score if every term were fully saturated: the absolute scale."""
        return self.np.asarray(self.query_matrix(rows, p.bigram).sum(axis=1)).ravel()


def top_k(scores, penalty, k: int = 10):
    """Doc indexes of the k best of each row (score > 0), best first; ties by doc order.
    `scores` is a dense array (changed in place) or a scipy CSR matrix."""
    import numpy as np

    if hasattr(scores, "indptr"):
        scores = scores.tocsr()
        out = []
        for qi in range(scores.shape[0]):
            lo, hi = scores.indptr[qi], scores.indptr[qi + 1]
            d = scores.data[lo:hi]
            idx = scores.indices[lo:hi]
            keep = d > 0
            d, idx = d[keep], idx[keep]
            key = d - penalty[idx]
            if len(key) > k:
                part = np.argpartition(-key, k)[:k]
                d, idx, key = d[part], idx[part], key[part]
            out.append([int(i) for i in idx[np.argsort(-key, kind="stable")]])
        return out
    positive = scores > 0
    scores -= penalty
    kk = min(k, scores.shape[1] - 1)
    part = np.argpartition(-scores, kk, axis=1)[:, :k]
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    part = np.take_along_axis(part, order, axis=1)
    ok = np.take_along_axis(positive, part, axis=1)
    return [[int(d) for d, good in zip(row, oks) if good] for row, oks in zip(part, ok)]


# --- evaluation -------------------------------------------------------------------------

def evaluate(corpus: Corpus, rows: list[int], tops: list[list[int]]) -> dict:
    """Per data set and mean of data sets: r1, r5, r10, mrr10."""
    per: dict[str, list[dict]] = {}
    for q, top in zip(rows, tops):
        rel = corpus.relevant[q]
        keys = [str(i) for i in rel]
        found = quality.ranks([str(i) for i in top], keys)
        per.setdefault(corpus.requests[q].dataset, []).append(quality.query_scores(found))
    out = {}
    for d, scores in per.items():
        out[d] = {k: sum(s[k] for s in scores) / len(scores) for k in scores[0]}
        out[d]["n"] = len(scores)
    sets = [d for d in corpus.datasets if d in out]
    out["mean"] = {k: sum(out[d][k] for d in sets) / len(sets) for k in ("r1", "r5", "r10", "mrr10")}
    return out


def objective(ev: dict) -> float:
    m = ev["mean"]
    return (m["r1"] + m["r5"] + m["mrr10"]) / 3


class Evaluator:
    """Scores a Params on some queries of one Index (memoised); `score` gives queries × docs
    (BM25F by default)."""

    def __init__(self, index: Index, score=None):
        self.index = index
        self.score = score or index.scores
        self.memo: dict = {}

    def tops(self, p: Params, rows: list[int]):
        return top_k(self.score(p, rows), self.index.order_penalty)

    def run(self, p: Params, rows: list[int]) -> dict:
        key = (p.key(), tuple(rows))
        if key not in self.memo:
            self.memo[key] = evaluate(self.index.corpus, rows, self.tops(p, rows))
        return self.memo[key]


GRID = {
    "k1": [0.5, 0.9, 1.2, 1.6, 2.2],
    "w": [0.0, 0.5, 1.0, 2.0, 3.0, 5.0],
    "b": [0.0, 0.5, 0.75, 1.0],
    "bigram": [0.0, 0.25, 0.5, 1.0],
}


def tune(ev: Evaluator, start: Params, rows: list[int], space: list[str], rounds: int) -> Params:
    """Coordinate ascent over `space` ("k1", "bigram", "w:<field>", "b:<field>")."""
    best = start
    best_score = objective(ev.run(best, rows))
    for _ in range(rounds):
        improved = False
        for name in space:
            kind, _, f = name.partition(":")
            for value in GRID[kind]:
                cand = replace(best, weights=dict(best.weights), b=dict(best.b))
                if kind == "k1":
                    cand.k1 = value
                elif kind == "bigram":
                    cand.bigram = value
                elif kind == "w":
                    cand.weights[f] = value
                else:
                    cand.b[f] = value
                if kind == "w" and f == "name" and value == 0:
                    continue
                score = objective(ev.run(cand, rows))
                if score > best_score + 1e-9:
                    best, best_score, improved = cand, score, True
        if not improved:
            break
    return best


def folds(corpus: Corpus, scheme: str) -> list[tuple[list[int], list[int]]]:
    """(train rows, test rows) of each fold."""
    n = len(corpus.requests)
    if scheme == "lodo":
        return [([q for q in range(n) if corpus.requests[q].dataset != d],
                 [q for q in range(n) if corpus.requests[q].dataset == d]) for d in corpus.datasets]
    rng = random.Random(7)
    k = 5
    assign = [0] * n
    for d in corpus.datasets:
        qs = [q for q in range(n) if corpus.requests[q].dataset == d]
        rng.shuffle(qs)
        for i, q in enumerate(qs):
            assign[q] = i % k
    return [([q for q in range(n) if assign[q] != f], [q for q in range(n) if assign[q] == f])
            for f in range(k)]


def cross_validate(ev: Evaluator, start: Params, space: list[str], scheme: str,
                   rounds: int) -> tuple[dict, list[Params]]:
    """Held-out figures (every request scored by the parameters tuned without it)."""
    corpus = ev.index.corpus
    tops: dict[int, list[int]] = {}
    chosen = []
    for train, test in folds(corpus, scheme):
        p = tune(ev, start, train, space, rounds) if space else start
        chosen.append(p)
        for q, top in zip(test, ev.tops(p, test)):
            tops[q] = top
    rows = sorted(tops)
    return evaluate(corpus, rows, [tops[q] for q in rows]), chosen


# --- reference scorers ------------------------------------------------------------------

def keyword_scores(index: Index, p: Params, rows: list[int], use_idf: bool, toolctl_norm: bool):
    """The keyword scorer: Σ over query words of weight(t) × (weight of the best field that
    holds t), over Σ weight(t), so 0..1. weight(t) = idf(t) with `use_idf`, else 1 (toolctl
    today, which also divides by all query words, `toolctl_norm`, found or not). Unigrams; a
    word counts once."""
    import numpy as np

    best = None
    for f in index.fields:
        w = p.weights.get(f, 0.0)
        if w <= 0:
            continue
        m = (index.tf[f] > 0).astype(np.float64) * w
        best = m if best is None else best.maximum(m)
    q = index.query_matrix(rows, 0.0)
    if not use_idf:
        q.data[:] = 1.0
    s = (q @ best.T).toarray()
    if toolctl_norm:
        norm = np.array([max(len(index.q_terms_all[r]), 1) for r in rows], dtype=np.float64)
    else:
        norm = np.maximum(np.asarray(q.sum(axis=1)).ravel(), 1e-12)
    return s / norm[:, None]


# --- embeddings -------------------------------------------------------------------------

def embed_texts(texts: list[str], url: str) -> "object":
    """Unit vectors of `texts` from the embed server (which caches them on disk by text)."""
    import numpy as np

    out = []
    for start in range(0, len(texts), 128):
        body = json.dumps({"input": texts[start:start + 128], "model": quality.EMBED_MODEL}).encode()
        req = urllib.request.Request(url + "/embeddings", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=3600) as resp:
            data = json.loads(resp.read())["data"]
        out += [np.asarray(item["embedding"], dtype=np.float32) for item in data]
        print(f"  embedded {len(out)}/{len(texts)}", file=sys.stderr, end="\r")
    return np.stack(out)


def index_text(text: str) -> str:
    """toolctl's index_text (src/index/text.rs): the text, plus the camelCase words of each
    word that has a camelCase boundary."""
    out = text
    for word in re.split(r"[^\w]|_", text):
        split = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", word)
        if split != word:
            out += " " + split
    return out


def embed_text_toolctl(doc: quality.Doc) -> str:
    """What toolctl embeds today (src/pick/mod.rs `candidate`): the index's name column (slug
    and display name, camelCase split), description and tags columns, space-joined."""
    name = f"{index_text(doc.slug)} {index_text(doc.display)}"
    return " ".join(t for t in [name, doc.description, index_text(" ".join(doc.tags))] if t)


def embed_text_today(doc: quality.Doc) -> str:
    """What toolctl embeds since commit 0803ac3 (src/pick/mod.rs `embedding_text`): the name's
    words (the slug's, then the display name's the slug lacks), the description, then "Tags:",
    "Arguments:" (names as words) and "Values:" (accepted values as words), each ended by a
    period. Byte for byte toolctl's text for 8,312 of the benchmark's 8,314 tools (two
    built-ins differ), so the vectors `bench/quality.py --embed` cached are read, not made
    again."""
    def words(text: str) -> list[str]:
        out = []
        for word in re.split(r"[^\w]|_", text):
            split = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", word)
            for part in split.split():
                out.append("".join(c for c in unicodedata.normalize("NFD", part)
                                   if not unicodedata.category(c).startswith("M")).lower())
        return out

    name = words(doc.slug)
    own = len(name)
    name += [w for w in words(doc.display) if w not in name[:own]]
    parts = [("", " ".join(name)), ("", doc.description),
             ("Tags: ", " ".join(words(" ".join(doc.tags)))),
             ("Arguments: ", " ".join(" ".join(words(n)) for n in doc.arg_names)),
             ("Values: ", " ".join(" ".join(words(v)) for v in doc.enum_values))]
    out = []
    for label, text in parts:
        text = text.strip()
        if text:
            out.append(f"{label}{text}{'' if text.endswith(('.', '!', '?')) else '.'}")
    return " ".join(out)


def embed_text_rich(doc: quality.Doc) -> str:
    """Name in words, description, argument names and descriptions, enum values."""
    parts = [" ".join(quality.words(doc.slug)) + ".", doc.description]
    if doc.arg_names:
        parts.append("Arguments: " + ", ".join(" ".join(quality.words(n)) for n in doc.arg_names) + ".")
    parts += doc.arg_descriptions
    if doc.enum_values:
        parts.append("Values: " + ", ".join(doc.enum_values) + ".")
    return " ".join(p for p in parts if p)


def minmax(s):
    import numpy as np

    lo = s.min(axis=1, keepdims=True)
    hi = s.max(axis=1, keepdims=True)
    return (s - lo) / np.maximum(hi - lo, 1e-12)


def rrf(s, k: int = 60):
    import numpy as np

    order = np.argsort(-s, axis=1)
    ranks = np.empty_like(order)
    rows = np.arange(s.shape[0])[:, None]
    ranks[rows, order] = np.arange(s.shape[1])[None, :]
    return 1.0 / (k + 1 + ranks)


# --- the report ---------------------------------------------------------------------------

def fmt(ev: dict, datasets: list[str]) -> str:
    cells = [f"{ev[d]['r5']:.3f}" for d in datasets if d in ev]
    m = ev["mean"]
    return (" | ".join(cells) + f" | {m['r1']:.3f} | {m['r5']:.3f} | {m['r10']:.3f} | {m['mrr10']:.3f}")


def header(datasets: list[str]) -> str:
    cols = " | ".join(f"R@5 {d}" for d in datasets)
    return (f"| variant | {cols} | R@1 mean | R@5 mean | R@10 mean | MRR@10 mean |\n"
            "|---|" + "---:|" * (len(datasets) + 4))


class Report(list):
    """The report's lines, written to `path` as they come (a long run keeps what it found)."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")

    def append(self, line: str) -> None:
        super().append(line)
        with self.path.open("a") as f:
            f.write(line + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--distractors", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2, help="coordinate-ascent rounds (final recipe)")
    parser.add_argument("--ablation-rounds", type=int, default=1, help="coordinate-ascent rounds (ablation)")
    parser.add_argument("--quick", action="store_true", help="1 round, LODO only")
    parser.add_argument("--embed", action="store_true", help="fusion with MiniLM embeddings")
    parser.add_argument("--only", default="", help="comma-separated sections to run")
    parser.add_argument("--fixed", action="store_true",
                        help="the final recipe's parameters are the textbook ones (not tuned on all)")
    parser.add_argument("--out", type=Path, default=bench.ROOT / "target" / "bench-quality" / "prototype.md")
    args = parser.parse_args()
    quality.ensure_venv()
    rounds = 1 if args.quick else args.rounds
    started = time.time()
    corpus = load_corpus(args.distractors)
    print(f"{len(corpus.docs)} tools, {len(corpus.requests)} requests", file=sys.stderr)
    report: list[str] = Report(args.out)
    sections = set(filter(None, args.only.split(","))) or {"fixed", "ablation", "keyword", "diagnose", "fusion", "final", "calibration", "classify", "fixture"}
    run_sections(corpus, args, rounds, sections, report)
    report.append(f"\n(took {time.time() - started:.0f} s; `python3 research/ranking_prototype.py "
                  f"{' '.join(sys.argv[1:])}`)")
    print("\n".join(report))


PLAIN = Analysis(stem=None, stop="toolctl", drop_numbers=False, bigrams=False, qtf="raw")
FULL = Analysis()
ALL_FIELDS = ["name", "desc", "argn", "argd", "enum", "tags"]


def bm25f_space(fields: list[str], bigrams: bool) -> list[str]:
    space = ["k1"] + [f"w:{f}" for f in fields if f != "name"] + [f"b:{f}" for f in fields]
    return space + (["bigram"] if bigrams else [])


def start_params(fields: list[str], bigrams: bool) -> Params:
    p = Params(k1=1.2, weights={f: (1.0 if f in fields else 0.0) for f in FIELDS},
               b={f: 0.75 for f in FIELDS}, bigram=0.5 if bigrams else 0.0)
    return p


@dataclass
class Variant:
    label: str
    analysis: Analysis
    single: bool  # one field (the baseline text) instead of BM25F
    fields: list[str]
    tuned: bool = True


def variants() -> list[Variant]:
    """The cumulative ablation: each line adds one step to the one above."""
    base = ["name", "desc", "argn", "argd", "tags"]
    return [
        Variant("BM25, one field, k1 1.2 b 0.75 (untuned)", PLAIN, True, [], tuned=False),
        Variant("+ k1, b tuned", PLAIN, True, []),
        Variant("+ Snowball English stemming", replace(PLAIN, stem="english"), True, []),
        Variant("+ BM25F: name, description, arg names, arg descriptions, tags",
                replace(PLAIN, stem="english"), False, base),
        Variant("+ enum values field", replace(PLAIN, stem="english"), False, base + ["enum"]),
        Variant("+ stop words: English + chat phrasing",
                replace(PLAIN, stem="english", stop="chat"), False, base + ["enum"]),
        Variant("+ pure numbers dropped from the query",
                replace(PLAIN, stem="english", stop="chat", drop_numbers=True), False, base + ["enum"]),
        Variant("+ repeated query words count once",
                replace(PLAIN, stem="english", stop="chat", drop_numbers=True, qtf="once"), False,
                base + ["enum"]),
        Variant("+ word bigrams (= full recipe)", FULL, False, base + ["enum"]),
    ]


def leave_one_out() -> list[Variant]:
    full = ["name", "desc", "argn", "argd", "enum", "tags"]
    return [
        Variant("full recipe", FULL, False, full),
        Variant("  without stemming", replace(FULL, stem=None), False, full),
        Variant("  without BM25F (one field)", FULL, True, []),
        Variant("  without the enum field", FULL, False, [f for f in full if f != "enum"]),
        Variant("  without argument fields", FULL, False, ["name", "desc", "enum", "tags"]),
        Variant("  with toolctl's stop words only", replace(FULL, stop="toolctl"), False, full),
        Variant("  keeping numbers", replace(FULL, drop_numbers=False), False, full),
        Variant("  repeated words counted", replace(FULL, qtf="raw"), False, full),
        Variant("  without bigrams", replace(FULL, bigrams=False), False, full),
        Variant("  bigrams of adjacent words only (an FTS5 phrase)", replace(FULL, bigram_mode="adjacent"), False, full),
        Variant("  Porter stemming (FTS5's) instead of Snowball", replace(FULL, stem="porter"), False, full),
    ]


INDEXES: dict = {}


def index_for(corpus: Corpus, analysis: Analysis, single: bool) -> Index:
    key = (id(corpus), analysis, single)
    if key not in INDEXES:
        INDEXES[key] = Evaluator(Index(corpus, analysis, single))
    return INDEXES[key]


def run_variant(corpus: Corpus, v: Variant, scheme: str, rounds: int) -> tuple[dict, list[Params]]:
    ev = index_for(corpus, v.analysis, v.single)
    if v.single:
        start = Params(k1=1.2, weights={"all": 1.0}, b={"all": 0.75})
        space = ["k1", "b:all"] + (["bigram"] if v.analysis.bigrams else [])
        if v.analysis.bigrams:
            start.bigram = 0.5
    else:
        start = start_params(v.fields, v.analysis.bigrams)
        space = bm25f_space(v.fields, v.analysis.bigrams)
    if not v.tuned:
        space = []
    return cross_validate(ev, start, space, scheme, rounds)


def params_text(p: Params) -> str:
    w = ", ".join(f"{f} {p.weights[f]:g}/b {p.b.get(f, 0.75):g}" for f in p.weights if p.weights[f] > 0)
    return f"k1 {p.k1:g}; {w}; bigram {p.bigram:g}"


def run_sections(corpus, args, rounds, sections, report):
    datasets = corpus.datasets
    report.append(f"# Ranking prototype: NESTFUL + {args.distractors} distractors "
                  f"({len(corpus.docs)} tools, {len(corpus.requests)} requests)\n")
    if "ablation" in sections:
        for scheme in ["lodo"]:
            report.append(f"\n## Ablation, cumulative ({scheme}: figures on held-out queries)\n")
            report.append(header(datasets))
            for v in variants():
                t = time.time()
                ev, chosen = run_variant(corpus, v, scheme, args.ablation_rounds)
                report.append(f"| {v.label} | {fmt(ev, datasets)} |")
                print(f"{scheme} {v.label}: {ev['mean']} ({time.time() - t:.0f} s); "
                      f"{[params_text(p) for p in chosen]}", file=sys.stderr)
            report.append(f"\n## Ablation, one step left out of the full recipe ({scheme})\n")
            report.append(header(datasets))
            for v in leave_one_out():
                t = time.time()
                ev, chosen = run_variant(corpus, v, scheme, args.ablation_rounds)
                report.append(f"| {v.label} | {fmt(ev, datasets)} |")
                print(f"{scheme} {v.label}: {ev['mean']} ({time.time() - t:.0f} s)", file=sys.stderr)
    if "fixed" in sections:
        fixed_section(corpus, report)
    if "keyword" in sections:
        keyword_section(corpus, report, rounds)
    if "diagnose" in sections:
        diagnose_section(corpus, report)
    final = None
    if sections & {"final", "fusion", "calibration", "classify"}:
        v = Variant("full recipe", FULL, False, ALL_FIELDS)
        ev = index_for(corpus, v.analysis, v.single)
        rows = list(range(len(corpus.requests)))
        final = start_params(ALL_FIELDS, True)
        if not args.fixed:
            final = tune(ev, final, rows, bm25f_space(ALL_FIELDS, True), rounds)
    if "final" in sections:
        final_section(corpus, final, report, rounds)
    if "fusion" in sections and args.embed:
        fusion_section(corpus, final, report, rounds)
    if "calibration" in sections:
        calibration_section(corpus, final, report)
    if "classify" in sections:
        classify_section(corpus, final, report)
    if "fixture" in sections:
        fixture_section(report)


def fixed_section(corpus: Corpus, report: list[str]) -> None:
    """Every step with textbook parameters chosen before looking (k1 1.2, b 0.75 everywhere,
    every field weight 1, bigrams 0.5): nothing tuned, so nothing to overfit."""
    datasets = corpus.datasets
    rows = list(range(len(corpus.requests)))
    report.append("\n## Ablation with fixed textbook parameters (nothing tuned: k1 1.2, b 0.75, "
                  "field weights 1, bigram weight 0.5)\n")
    report.append(header(datasets))
    for group in (variants(), leave_one_out()):
        for v in group:
            ev = index_for(corpus, v.analysis, v.single)
            if v.single:
                p = Params(k1=1.2, weights={"all": 1.0}, b={"all": 0.75}, bigram=0.5 if v.analysis.bigrams else 0.0)
            else:
                p = start_params(v.fields, v.analysis.bigrams)
            report.append(f"| {v.label.replace('+ k1, b tuned', '(k1, b as above)')} | {fmt(ev.run(p, rows), datasets)} |")
        report.append("| | |")
    # The two choices every CV fold of `--only final` made, on top of the textbook parameters.
    ev = index_for(corpus, FULL, False)
    for label, changes in (("full recipe + argd b 0", {"b": {"argd": 0.0}}),
                           ("full recipe + enum weight 2", {"weights": {"enum": 2.0}}),
                           ("RECOMMENDED: full recipe + argd b 0 + enum weight 2",
                            {"b": {"argd": 0.0}, "weights": {"enum": 2.0}})):
        report.append(f"| {label} | {fmt(ev.run(recommended(changes), rows), datasets)} |")


def recommended(changes: dict | None = None) -> Params:
    """The textbook parameters with `changes` ({"b": {field: v}, "weights": {field: v}});
    without: the recommended recipe (argd b 0, enum weight 2, output weight 0.3)."""
    if changes is None:
        changes = {"b": {"argd": 0.0}, "weights": {"enum": 2.0, "out": 0.3}}
    p = start_params(ALL_FIELDS, True)
    p.b.update(changes.get("b", {}))
    p.weights.update(changes.get("weights", {}))
    return p


KEYWORD_GRID = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def keyword_section(corpus: Corpus, report: list[str], rounds: int) -> None:
    """toolctl's keyword scorer, emulated; the plain overlap; and keyword with IDF."""
    datasets = corpus.datasets
    report.append("\n## The keyword scorer (LODO held-out where tuned)\n")
    report.append(header(datasets))
    all_rows = list(range(len(corpus.requests)))
    # The plain overlap of bench/quality.py, as the reference (rank_bm25 is in its table:
    # pure Python over 8,000 tools takes minutes).
    for label, cls in (("overlap (bench/quality.py)", quality.Overlap),):
        scorer = cls(corpus.docs)
        import numpy as np
        scores = np.array([scorer.scores(r.query) for r in corpus.requests])
        tops = top_k(scores, np.arange(len(corpus.docs)) * 1e-12)
        report.append(f"| {label} | {fmt(evaluate(corpus, all_rows, tops), datasets)} |")
    toolctl = Analysis(stem="porter", stop="toolctl", drop_numbers=False, bigrams=False, qtf="once")
    cases = [
        ("toolctl keyword today (emulated: name 1, tags 0.8, desc 0.6; no IDF)", toolctl,
         {"name": 1.0, "tags": 0.8, "desc": 0.6}, False, True, []),
        ("+ IDF (same fields and weights)", toolctl, {"name": 1.0, "tags": 0.8, "desc": 0.6}, True,
         False, []),
        ("+ argument names, descriptions, enum values (weights tuned)", toolctl,
         {"name": 1.0, "tags": 0.8, "desc": 0.6, "argn": 0.6, "argd": 0.4, "enum": 0.6}, True, False,
         ["w:tags", "w:desc", "w:argn", "w:argd", "w:enum"]),
        ("+ the full recipe's analysis (Snowball, chat stop words, numbers out)", replace(FULL, bigrams=False),
         {"name": 1.0, "tags": 0.8, "desc": 0.6, "argn": 0.6, "argd": 0.4, "enum": 0.6}, True, False,
         ["w:tags", "w:desc", "w:argn", "w:argd", "w:enum"]),
        # Not tuned: today's weights, the argument fields at the description's 0.6.
        ("IDF, Porter, toolctl's stop words; argument fields and enum at 0.6 (untuned)", toolctl,
         {"name": 1.0, "tags": 0.8, "desc": 0.6, "argn": 0.6, "argd": 0.6, "enum": 0.6}, True, False, []),
        ("IDF, the recipe's analysis; argument fields and enum at 0.6 (untuned)", replace(FULL, bigrams=False),
         {"name": 1.0, "tags": 0.8, "desc": 0.6, "argn": 0.6, "argd": 0.6, "enum": 0.6}, True, False, []),
    ]
    saved = dict(GRID)
    GRID["w"] = KEYWORD_GRID
    try:
        for label, analysis, weights, use_idf, norm, space in cases:
            index = index_for(corpus, analysis, False).index
            ev = Evaluator(index, lambda p, rows, i=index, u=use_idf, n=norm: keyword_scores(i, p, rows, u, n))
            start = Params(weights={f: weights.get(f, 0.0) for f in FIELDS})
            result, chosen = cross_validate(ev, start, space, "lodo", rounds)
            report.append(f"| {label} | {fmt(result, datasets)} |")
            if space:
                final = tune(ev, start, all_rows, space, rounds)
                report.append(f"|   weights tuned on all: {params_text(final).split(';')[1]} | |")
    finally:
        GRID.update(saved)


def final_section(corpus: Corpus, final: Params, report: list[str], rounds: int) -> None:
    datasets = corpus.datasets
    v = Variant("full recipe", FULL, False, ALL_FIELDS)
    report.append("\n## The full recipe\n")
    report.append(f"Parameters tuned on all {len(corpus.requests)} requests: {params_text(final)}\n")
    report.append(header(datasets))
    for scheme in ("lodo", "kfold"):
        ev, chosen = run_variant(corpus, v, scheme, rounds)
        report.append(f"| full recipe, {scheme} held-out | {fmt(ev, datasets)} |")
        for i, p in enumerate(chosen):
            print(f"  {scheme} fold {i}: {params_text(p)}", file=sys.stderr)
        report.append(f"|   ({scheme} folds chose: " + " ‖ ".join(params_text(p) for p in chosen) + ") | |")
    evr = index_for(corpus, v.analysis, v.single)
    rows = list(range(len(corpus.requests)))
    report.append(f"| full recipe, tuned on all (in-sample) | {fmt(evr.run(final, rows), datasets)} |")
    # Each data set alone (its tools and the built-ins), with the parameters tuned on all.
    # Each data set alone (its tools and the built-ins), with the parameters tuned on all.
    cells = []
    for d in datasets:
        sub = corpus.subset(lambda doc, d=d: doc.key.startswith(d + "/") or doc.key.startswith("builtin/"))
        sub_rows = [q for q in rows if corpus.requests[q].dataset == d]
        ev = Evaluator(Index(sub, FULL))
        cells.append((d, ev.run(final, sub_rows)[d]))
    report.append("\nEach data set alone (its tools and the 3 built-ins), parameters tuned on all:\n")
    report.append("| data set | R@1 | R@5 | R@10 | MRR@10 |\n|---|---:|---:|---:|---:|")
    for d, c in cells:
        report.append(f"| {d} | {c['r1']:.3f} | {c['r5']:.3f} | {c['r10']:.3f} | {c['mrr10']:.3f} |")


def fusion_section(corpus: Corpus, final: Params, report: list[str], rounds: int) -> None:
    """Embeddings alone, and fused with the best lexical ranking (CV over the fusion weight)."""
    import numpy as np

    datasets = corpus.datasets
    with quality.embed_server(threads=2) as url:
        vec_tool = embed_texts([embed_text_toolctl(d) for d in corpus.docs], url)
        vec_rich = embed_texts([embed_text_rich(d) for d in corpus.docs], url)
        vec_q = embed_texts([r.query for r in corpus.requests], url)
    rows = list(range(len(corpus.requests)))
    cos_tool = vec_q @ vec_tool.T
    cos_rich = vec_q @ vec_rich.T
    penalty = np.arange(len(corpus.docs)) * 1e-12
    report.append("\n## Embeddings (all-MiniLM-L6-v2) and fusion\n")
    report.append(header(datasets))
    report.append(f"| embed, toolctl's text (name column, description, tags) | "
                  f"{fmt(evaluate(corpus, rows, top_k(cos_tool.copy(), penalty)), datasets)} |")
    report.append(f"| embed, rich text (name words, description, args, enum values) | "
                  f"{fmt(evaluate(corpus, rows, top_k(cos_rich.copy(), penalty)), datasets)} |")
    # Today's hybrid: 0.4 × keyword + 0.6 × max(cos, 0) on raw scores.
    toolctl = Analysis(stem="porter", stop="toolctl", drop_numbers=False, bigrams=False, qtf="once")
    kidx = index_for(corpus, toolctl, False).index
    kw = keyword_scores(kidx, Params(weights={"name": 1.0, "tags": 0.8, "desc": 0.6}), rows, False, True)
    hybrid_today = 0.4 * kw + 0.6 * np.maximum(cos_tool, 0)
    report.append(f"| hybrid today (0.4 keyword + 0.6 cosine, raw; emulated) | "
                  f"{fmt(evaluate(corpus, rows, top_k(hybrid_today, penalty)), datasets)} |")
    # The lexical side: the full recipe with textbook parameters (what generalised best,
    # see the ablation); only the fusion weight is chosen, by LODO over the data sets.
    lex_ev = index_for(corpus, FULL, False)
    lex = lex_ev.index.scores(start_params(ALL_FIELDS, True), rows, dense=True)
    report.append(f"| BM25F full recipe, textbook parameters (lexical side) | "
                  f"{fmt(evaluate(corpus, rows, top_k(lex.copy(), penalty)), datasets)} |")
    for cos, text in ((cos_rich, "rich text"), (cos_tool, "toolctl's text")):
        for kind in ("minmax", "rrf"):
            fused_of = fuse_fn(kind, lex, cos)
            held = {}
            chosen = []
            for train, test in folds(corpus, "lodo"):
                best = max(FUSION_GRID, key=lambda a: objective(evaluate(corpus, train, top_k(fused_of(a)[train], penalty))))
                chosen.append(best)
                for q, top in zip(test, top_k(fused_of(best)[test], penalty)):
                    held[q] = top
            ev = evaluate(corpus, rows, [held[q] for q in rows])
            label = (f"BM25F ⊕ embed ({text}), min-max, lexical weight by LODO {chosen}" if kind == "minmax"
                     else f"BM25F ⊕ embed ({text}), RRF k=60, lexical weight by LODO {chosen}")
            report.append(f"| {label} | {fmt(ev, datasets)} |")
        for kind in ("minmax", "rrf"):
            fused_of = fuse_fn(kind, lex, cos)
            cells = " ".join(f"{a:g}: {evaluate(corpus, rows, top_k(fused_of(a), penalty))['mean']['r5']:.3f}"
                             for a in FUSION_GRID)
            report.append(f"|   {kind}, {text}, R@5 mean by lexical weight: {cells} | |")


FUSION_GRID = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0]


def fuse_fn(kind: str, lex, cos):
    if kind == "minmax":
        a_lex, a_cos = minmax(lex), minmax(cos)
        return lambda a: a * a_lex + (1 - a) * a_cos
    r_lex, r_cos = rrf(lex), rrf(cos)
    return lambda a: a * r_lex + (1 - a) * r_cos


def calibration_section(corpus: Corpus, final: Params, report: list[str]) -> None:
    """An absolute 0..1 score: BM25F over the query's most it could score (every query term
    saturated in the tool: Σ idf·qweight), and how it separates right tools from wrong."""
    import numpy as np

    rows = list(range(len(corpus.requests)))
    ev = index_for(corpus, FULL, False)
    index = ev.index
    scores = index.scores(final, rows, dense=True)
    full = index.max_scores(final, rows)
    absolute = scores / np.maximum(full, 1e-12)[:, None] * (1.0)  # tf~/(k1+tf~) < 1
    pos_best, neg_best, top1_right, top1_wrong = [], [], [], []
    for q in rows:
        rel = corpus.relevant[q]
        pos_best.append(max(absolute[q, rel]))
        order = np.argsort(-scores[q])[:1]
        (top1_right if order[0] in rel else top1_wrong).append(absolute[q, order[0]])
    # Negatives: each request against the catalog without its own data set's tools.
    for d in corpus.datasets:
        sub = corpus.subset(lambda doc, d=d: not doc.key.startswith(d + "/"))
        sub_ev = Evaluator(Index(sub, FULL))
        q_rows = [q for q in rows if corpus.requests[q].dataset == d]
        s = sub_ev.index.scores(final, q_rows, dense=True)
        m = sub_ev.index.max_scores(final, q_rows)
        neg_best.extend((s.max(axis=1) / np.maximum(m, 1e-12)).tolist())
    pct = lambda xs, p: float(np.percentile(xs, p)) if xs else float("nan")
    report.append("\n## An absolute score for attach's min_score\n")
    report.append("score = BM25F(tool, query) / Σ over the query's terms of idf × query weight "
                  "(the BM25F a tool would get if every query term saturated it), in 0..1.\n")
    report.append("| population | n | p10 | p25 | p50 | p75 | p90 |\n|---|---:|---:|---:|---:|---:|---:|")
    for label, xs in (("best-scored relevant tool of each request", pos_best),
                      ("top-1 when it is relevant", top1_right),
                      ("top-1 when it is not relevant", top1_wrong),
                      ("top-1 with no relevant tool in the catalog (own data set removed)", neg_best)):
        report.append(f"| {label} | {len(xs)} | " + " | ".join(f"{pct(xs, p):.3f}" for p in (10, 25, 50, 75, 90)) + " |")
    report.append("\n| threshold | requests whose best relevant tool passes | requests with no right tool that attach nothing |\n|---:|---:|---:|")
    for t in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4):
        report.append(f"| {t:.2f} | {np.mean(np.array(pos_best) >= t):.3f} | {np.mean(np.array(neg_best) < t):.3f} |")
    # Normalised by the tool instead: the idf mass of the tool's own terms the query holds.
    report.append("\nNormalised by the tool: coverage = Σ idf of the tool's distinct terms (in the "
                  "fields named) that the query holds / Σ idf of all of them. Negatives as above "
                  "(top-1 by BM25F in the catalog without the request's data set).\n")
    report.append("| coverage of | AUC (right vs nothing-right) | threshold rejecting 90% of nothing-right | right tools passing it | median right | median nothing-right |\n|---|---:|---:|---:|---:|---:|")
    groups = {"name": ["name"], "name + description": ["name", "desc"],
              "name + description + argument names": ["name", "desc", "argn"], "every field": FIELDS}

    def coverage(ix: Index, q_rows: list[int], fields: list[str]):
        present = sum((ix.tf[f] > 0).astype(np.float64) for f in fields)
        present = (present > 0).astype(np.float64).tocsr()
        q = ix.query_matrix(q_rows, 0.0)
        q.data[:] = 1.0
        q = q.multiply(ix.idf[None, :]).tocsr()
        return (q @ present.T).toarray() / np.maximum(present @ ix.idf, 1e-12)[None, :]

    pos = {g: [] for g in groups}
    neg = {g: [] for g in groups}
    for g, fields in groups.items():
        cov = coverage(index, rows, fields)
        pos[g] = [cov[q, corpus.relevant[q]].max() for q in rows]
    for d in corpus.datasets:
        sub = corpus.subset(lambda doc, d=d: not doc.key.startswith(d + "/"))
        sub_index = Index(sub, FULL)
        q_rows = [q for q in rows if corpus.requests[q].dataset == d]
        top = np.argmax(sub_index.scores(final, q_rows, dense=True), axis=1)
        for g, fields in groups.items():
            cov = coverage(sub_index, q_rows, fields)
            neg[g].extend(cov[np.arange(len(q_rows)), top].tolist())
    for g in groups:
        p, n = np.array(pos[g]), np.array(neg[g])
        t = float(np.percentile(n, 90))
        auc = float(np.mean(p[:, None] > n[None, :]))
        report.append(f"| {g} | {auc:.3f} | {t:.3f} | {np.mean(p >= t):.3f} | {np.median(p):.3f} | {np.median(n):.3f} |")


# --- name-like or sentence ----------------------------------------------------------------

def name_like(query: str, max_words: int = 3) -> bool:
    """A query that reads like (part of) a tool's name: one word ("now"), or at most
    `max_words` words none of which is a stop word or chat word; no question mark. Anything
    else is a sentence."""
    ws = quality.words(query)
    if "?" in query or not ws:
        return False
    return len(ws) == 1 or (len(ws) <= max_words and not any(w in CHAT_STOP for w in ws))


def classify_section(corpus: Corpus, final: Params, report: list[str]) -> None:
    """On fixtures/queries.json (names, typos, tags, questions, over fixtures/catalog): toolctl's
    search (tiers first) against the recipe's BM25F (relevance first, no typo correction),
    and the rule that sends name-like queries to the tiers and sentences to relevance."""
    import shutil
    import tempfile

    fixture = json.loads((bench.ROOT / "fixtures" / "queries.json").read_text())
    queries = [q for q in fixture["queries"] if not q.get("includeDisabled")]
    work = Path(tempfile.mkdtemp(prefix="toolctl-proto-"))
    try:
        catalog = work / "catalog"
        shutil.copytree(bench.ROOT / "fixtures" / "catalog", catalog)
        base = [str(bench.TOOLCTL), "--catalog", str(catalog), "--json"]
        docs = quality.catalog_docs(catalog, {})
        tiers_tops = []
        for q in queries:
            _, out = quality.run_capture(quality.method_argv(base, "search", q["query"], None), work)
            tiers_tops.append([ref.split("@", 1)[0] for ref, _ in quality.result_items("search", out)])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    where = {d.key: i for i, d in enumerate(docs)}
    kinds = sorted({q["kind"] for q in queries})
    requests = [nestful.Request(q["kind"], i, q["query"], q["relevant"]) for i, q in enumerate(queries)]
    fx = Corpus(docs, requests, [[where[k] for k in q["relevant"] if k in where] for q in queries], kinds)
    ev = Evaluator(Index(fx, FULL))
    rows = list(range(len(queries)))
    relevance = ev.tops(final, rows)
    tiers = [[where[k] for k in top if k in where] for top in tiers_tops]
    rule3 = [t if name_like(q["query"]) else r for q, t, r in zip(queries, tiers, relevance)]
    rule2 = [t if name_like(q["query"], 2) else r for q, t, r in zip(queries, tiers, relevance)]
    report.append("\n## Name-like or sentence (fixtures/queries.json over fixtures/catalog)\n")
    report.append(f"name_like(q): one word, or at most 3 words (runs of letters and digits) none of "
                  f"which is a stop or chat word; no '?'. NESTFUL requests classified name-like: "
                  f"{sum(name_like(r.query) for r in corpus.requests)} of {len(corpus.requests)}; "
                  f"fixture queries name-like per kind: "
                  + ", ".join(f"{k} {sum(name_like(q['query']) for q in queries if q['kind'] == k)}/"
                              f"{sum(1 for q in queries if q['kind'] == k)}" for k in kinds) + "\n")
    report.append("| ranking | " + " | ".join(f"MRR {k}" for k in kinds) + " | R@1 all | R@5 all | MRR all |")
    report.append("|---|" + "---:|" * (len(kinds) + 3))
    for label, tops in (("tiers first (toolctl search today)", tiers),
                        ("relevance first (recipe BM25F, no typos)", relevance),
                        ("rule: name-like (≤3 words) → tiers, else relevance", rule3),
                        ("rule: name-like (≤2 words) → tiers, else relevance", rule2)):
        e = evaluate(fx, rows, tops)
        pooled = [quality.query_scores(quality.ranks([str(i) for i in t], [str(i) for i in fx.relevant[q]]))
                  for q, t in zip(rows, tops)]
        mean = lambda k: sum(p[k] for p in pooled) / len(pooled)
        report.append(f"| {label} | " + " | ".join(f"{e[k]['mrr10']:.3f}" for k in kinds)
                      + f" | {mean('r1'):.3f} | {mean('r5'):.3f} | {mean('mrr10'):.3f} |")


def fixture_section(report: list[str]) -> None:
    """The recommended recipe (and keyword with IDF) on tests/fixtures/nestful-glaive, the
    quality test's fixture, for floors once the Rust ranking lands."""
    import numpy as np

    root = bench.ROOT / "tests" / "fixtures" / "nestful-glaive"
    doc = json.loads((root / "queries.json").read_text())
    docs = quality.catalog_docs(root / "catalog", {})
    where = {d.key: i for i, d in enumerate(docs)}
    requests = [nestful.Request("glaive", i, q["query"], q["relevant"]) for i, q in enumerate(doc["queries"])]
    fx = Corpus(docs, requests, [[where[k] for k in q["relevant"]] for q in doc["queries"]], ["glaive"])
    rows = list(range(len(requests)))
    report.append(f"\n## tests/fixtures/nestful-glaive ({len(docs)} candidate tools, {len(rows)} requests)\n")
    report.append("| ranking | R@1 | R@3 | R@5 | R@10 | MRR@10 |\n|---|---:|---:|---:|---:|---:|")
    bm = Evaluator(Index(fx, FULL))
    kw_index = Index(fx, replace(FULL, bigrams=False))
    kw = keyword_scores(kw_index, Params(weights={"name": 1.0, "tags": 0.8, "desc": 0.6, "argn": 0.6,
                                                  "argd": 0.6, "enum": 0.6}), rows, True, False)
    for label, tops in (("BM25F, recommended recipe", bm.tops(recommended(), rows)),
                        ("keyword with IDF (untuned weights)", top_k(kw, np.arange(len(docs)) * 1e-12))):
        found = [quality.ranks([str(i) for i in t], [str(i) for i in fx.relevant[q]]) for q, t in zip(rows, tops)]
        per = [quality.query_scores(f) for f in found]
        r3 = sum(sum(1 for p in f.values() if p and p <= 3) / min(3, len(f)) for f in found) / len(found)
        mean = lambda k: sum(p[k] for p in per) / len(per)
        report.append(f"| {label} | {mean('r1'):.3f} | {r3:.3f} | {mean('r5'):.3f} | {mean('r10'):.3f} | {mean('mrr10'):.3f} |")


# --- why search and pick --scorer bm25 lose: toolctl's FTS5 ranking, emulated ------------

FTS_COLUMNS = {"name": 10.0, "tags": 5.0, "args": 2.0, "desc": 3.0, "bundle": 1.0}


class Fts5:
    """toolctl's search over one corpus, emulated: FTS5's porter tokenizer (Porter stems,
    unicode61 words), its bm25() with column weights name 10, tags 5, args 2, description 3,
    bundle 1 (k1 1.2, b 0.75 over the whole row's length, idf ln((N−n+0.5)/(n+0.5)) floored
    at 1e-6), query tokens matched as whole stems or as prefixes (`"tok"*`, 2+ characters),
    and the tiers. No typo correction (it only fires for a word that matches nothing, not
    even as a prefix, which is rare in these requests)."""

    def __init__(self, corpus: Corpus):
        import numpy as np
        from scipy import sparse

        self.np = np
        self.corpus = corpus
        cols = list(FTS_COLUMNS)
        vocab: dict[str, int] = {}
        data = {c: ([], [], []) for c in cols}
        self.length = np.zeros(len(corpus.docs))
        for i, d in enumerate(corpus.docs):
            fields = {
                "name": quality.words(d.slug) + quality.words(d.display),
                "tags": quality.words(" ".join(d.tags)),
                "args": quality.words(" ".join(d.arg_names + d.arg_descriptions)),
                "desc": quality.words(d.description),
                "bundle": quality.words(d.key.split("/")[0]) if "/" in d.key else [],
            }
            for c, ws in fields.items():
                counts: dict[int, int] = {}
                for w in ws:
                    t = stem(w, "porter")
                    j = vocab.setdefault(t, len(vocab))
                    counts[j] = counts.get(j, 0) + 1
                for j, n in counts.items():
                    data[c][0].append(i)
                    data[c][1].append(j)
                    data[c][2].append(n)
                self.length[i] += len(ws)
        shape = (len(corpus.docs), len(vocab))
        tf = {c: sparse.csc_matrix((data[c][2], (data[c][0], data[c][1])), shape=shape, dtype=float)
              for c in cols}
        self.weighted = sum(tf[c] * FTS_COLUMNS[c] for c in cols).tocsc()
        self.name = tf["name"]
        self.vocab = vocab
        self.sorted_vocab = sorted(vocab)
        self.n = len(corpus.docs)
        self.k = 1.2 * (0.25 + 0.75 * self.length / self.length.mean())

    def expand(self, token: str, prefix: bool) -> list[int]:
        """Term ids a query token matches: its stem, and with `prefix` every term starting
        with it (FTS5 matches a prefix against the stems in the index)."""
        import bisect

        out = set()
        s = stem(token, "porter")
        if s in self.vocab:
            out.add(self.vocab[s])
        if prefix and len(token) >= 2:
            lo = bisect.bisect_left(self.sorted_vocab, token)
            for t in self.sorted_vocab[lo:]:
                if not t.startswith(token):
                    break
                out.add(self.vocab[t])
        return sorted(out)

    def rank(self, query: str, tiers: bool, prefix: bool, k: int = 10) -> list[int]:
        np = self.np
        tokens = list(dict.fromkeys(quality.words(query)))[:32]
        if not tokens:
            return []
        content = [t for t in tokens if t not in TOOLCTL_STOP] or tokens

        def phrase(terms: list[int], name_only: bool = False):
            m = self.name if name_only else self.weighted
            if not terms:
                return np.zeros(self.n)
            return np.asarray(m[:, terms].sum(axis=1)).ravel()

        whole = {t: phrase(self.expand(t, False)) for t in tokens}
        pref = {t: phrase(self.expand(t, prefix)) for t in tokens}
        pref_name = {t: phrase(self.expand(t, prefix), True) for t in tokens}

        def bm25(fs: list) -> "object":
            score = np.zeros(self.n)
            for f in fs:
                n = int((f > 0).sum())
                idf = max(math.log((self.n - n + 0.5) / (n + 0.5)), 1e-6)
                score += idf * f * 2.2 / (f + self.k)
            return score

        plan = []
        if tiers:
            plan.append(([pref_name[t] for t in tokens], "all", [pref[t] for t in tokens]))
            plan.append(([whole[t] for t in tokens], "all", [whole[t] for t in tokens]))
            plan.append(([pref[t] for t in tokens], "all", [pref[t] for t in tokens]))
        if len(tokens) > 1 or not tiers:
            plan.append(([pref[t] for t in content], "any", [pref[t] for t in content]))
        taken = np.zeros(self.n, dtype=bool)
        out: list[int] = []
        for members, mode, scored in plan:
            hit = np.stack([f > 0 for f in members])
            hit = hit.all(axis=0) if mode == "all" else hit.any(axis=0)
            hit &= ~taken
            if not hit.any():
                continue
            score = bm25(scored)
            idx = np.nonzero(hit)[0]
            # Best bm25 first; ties: the most recently registered here (search uses modifiedAt).
            idx = idx[np.lexsort((-idx, -score[idx]))]
            for i in idx[: k - len(out)]:
                out.append(int(i))
            taken[idx] = True
            if len(out) >= k:
                break
        return out


def diagnose_section(corpus: Corpus, report: list[str]) -> None:
    """What costs toolctl's search its place: tiers, prefix matching, the formula."""
    datasets = corpus.datasets
    fts = Fts5(corpus)
    rows = list(range(len(corpus.requests)))
    report.append("\n## Why search / pick --scorer bm25 lose (toolctl's FTS5 ranking, emulated)\n")
    report.append(header(datasets))
    for label, tiers, prefix in (
            ("emulated search today (tiers, prefix matches, FTS5 bm25)", True, True),
            ("  without tiers (relevance only, prefix matches)", False, True),
            ("  without tiers, whole words only (no prefix matches)", False, False),
            ("  tiers, whole words only", True, False)):
        t = time.time()
        tops = [fts.rank(r.query, tiers, prefix) for r in corpus.requests]
        report.append(f"| {label} | {fmt(evaluate(corpus, rows, tops), datasets)} |")
        print(f"diagnose {label}: {time.time() - t:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
