#!/usr/bin/env python3
"""What `pick` does after its BM25F ranking, tried on NESTFUL and chosen by leaving each data
set out: helper tools, coverage and sibling tools (issue 18), as a reference for the Rust code
(src/pick/helpers.rs, cover.rs, siblings.rs).

    python3 research/rerank_prototype.py            # the steps alone and together, and the LODO figure

Everything runs in this process over the catalog research/ranking_prototype.py builds (NESTFUL's
tools, 10,000 tools of `gen-catalog --seed 42` and the built-ins), every request ranked by the
recommended BM25F recipe (what toolctl's index does; within ~0.01 of `bench/quality.py`'s
figures) and read 40 deep:

- **helpers**: each of the first 3 picks brings up to 2 tools of its own data set that its
  required arguments' descriptions name (the tool's slug words, or those after a prefix shared
  with the namer, at least 2; a name inside a longer one at the same place does not count),
  right after it, and each helper brings its own the same way;
- **coverage** (α, λ): the first picks chosen one at a time from the 40 best for
  `(1 − λ) · Σ_t share(d, t) · left(t) + λ · relevance(d)`, `left(t)` falling by
  `α · share(c, t) / max_d share(d, t)` for each chosen `c`;
- **siblings** (β, anchors): the first `anchors` picks whose slug's first word is not a verb
  lift the tools of their bundle with the same first word that match the request at all, to
  `min(anchor − ε, own + β · anchor)` on pick's 0..1 scores.

Parameters are chosen on three data sets by (R@1 + R@5 + MRR@10) / 3 averaged over them and
scored on the fourth (leave one data set out); the figure is the mean of the four held-out
scores.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

# The other notebooks here, and bench/'s modules (catalog, nestful, quality, embed_server).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import nestful  # noqa: E402
import quality  # noqa: E402
import ranking_prototype as rp  # noqa: E402

POOL = 40
# First words that say what a tool does, not whose it is (src/pick/siblings.rs has the list).
VERBS = set("""get search find list create update delete fetch retrieve check calculate
generate send book make set add remove show lookup convert read write post put patch query run
start stop validate translate analyze play reserve buy order track compare estimate schedule
cancel""".split())


def helper_links(corpus: rp.Corpus, longest_only: bool = False) -> dict[int, list[int]]:
    """Doc index → the doc indexes its required arguments name (toolctl's rule)."""
    data = nestful.load()
    where = {d.key: i for i, d in enumerate(corpus.docs)}
    by_set: dict[str, list[nestful.Tool]] = {}
    for t in data.tools:
        by_set.setdefault(t.dataset, []).append(t)
    links: dict[int, list[int]] = {}
    for tools in by_set.values():
        for t in tools:
            schema = t.arg_schema or {}
            props = schema.get("properties") or {}
            text = [quality.words(props.get(a, {}).get("description", ""))
                    for a in schema.get("required") or []]
            own = quality.words(t.slug)
            # Each place a tool is named: (argument, start, end, tool).
            spans = []
            for o in tools:
                if o is t:
                    continue
                w = quality.words(o.slug)
                shared = sum(1 for _ in itertools.takewhile(lambda p: p[0] == p[1], zip(w, own)))
                phrases = [w[len(w) - n:] for n in range(len(w), 1, -1)
                           if n == len(w) or len(w) - n <= shared]
                for a, words in enumerate(text):
                    for i in range(len(words)):
                        p = next((p for p in phrases if words[i:i + len(p)] == p), None)
                        if p:
                            spans.append((a, i, i + len(p), where[o.key]))
            if not spans:
                continue
            if longest_only:
                top = max(e - s for _, s, e, _ in spans)
                named = [d for _, s, e, d in spans if e - s == top]
            else:
                # A name inside a longer name at the same place does not count.
                named = [d for a, s, e, d in spans
                         if not any(a2 == a and s2 <= s and e <= e2 and e2 - s2 > e - s
                                    for a2, s2, e2, _ in spans)]
            links[where[t.key]] = list(dict.fromkeys(named))
    return links


class Reranker:
    def __init__(self, corpus: rp.Corpus, params: rp.Params | None = None,
                 index: rp.Index | None = None):
        """`params`: the BM25F parameters (the recommended recipe, toolctl's, by default);
        `index`: one already built over `corpus` (building one takes a few seconds)."""
        import numpy as np

        self.np, self.corpus = np, corpus
        self.index = index or rp.Index(corpus, rp.Analysis())
        p = params or rp.recommended()
        self.rows = list(range(len(corpus.requests)))
        self.sat = self.index.saturated(p).tocsr()
        self.q = self.index.query_matrix(self.rows, p.bigram).tocsr()
        raw = (self.q @ self.sat.T).tocsr()
        self.cands = rp.top_k(raw, self.index.order_penalty, POOL)
        # pick's 0..1 score: 1 − e^(−2 · bm25 / Σ idf of the query's words).
        self.score = []
        for q in self.rows:
            scale = sum(self.index.idf[t] for t in self.index.q_uni[q]) or 1.0
            self.score.append({d: 1 - np.exp(-2 * raw[q, d] / scale) for d in self.cands[q]})
        self.raw = raw
        self.links = helper_links(corpus)
        self.bundle = [d.key.split("/")[0] for d in corpus.docs]
        first = [(quality.words(d.slug) or [""])[0] for d in corpus.docs]
        self.first = first
        groups: dict[tuple[str, str], list[int]] = {}
        for i, (b, w) in enumerate(zip(self.bundle, first)):
            if w and w not in VERBS:
                groups.setdefault((b, w), []).append(i)
        self.siblings = {i: [j for j in g if j != i] for g in groups.values() if len(g) > 1 for i in g}
        self.scale = [sum(self.index.idf[t] for t in self.index.q_uni[q]) or 1.0 for q in self.rows]

    def own(self, q: int, d: int) -> float:
        r = self.raw[q, d]
        return float(1 - self.np.exp(-2 * r / self.scale[q])) if r > 0 else 0.0

    def covered(self, q: int, alpha: float, lam: float) -> list[int]:
        top = self.cands[q]
        if alpha == 0 or not top:
            return list(top)
        np = self.np
        terms = self.q[q].indices
        share = self.sat[top][:, terms].toarray() * self.q[q].data
        best = share.max(0).clip(1e-12)
        relevance = share.sum(1)
        left = np.ones(len(terms))
        open_, chosen = list(range(len(top))), []
        while open_ and len(chosen) < 10:
            gains = [(1 - lam) * (share[i] * left).sum() + lam * relevance[i] for i in open_]
            j = open_.pop(int(np.argmax(gains)))
            chosen.append(j)
            left *= 1 - alpha * share[j] / best
        return [top[j] for j in chosen + open_]

    def rank(self, q: int, alpha: float, lam: float, beta: float, anchors: int,
             helpers: bool, rho: float = 0.0) -> list[int]:
        """`rho`: a sibling is lifted only when its own score is at least `rho` × its anchor's
        (0, toolctl's: whenever it matches the request at all)."""
        order = self.covered(q, alpha, lam)
        slots = sorted((self.score[q][d] for d in order), reverse=True)
        key = dict(zip(order, slots))  # a moved pick takes its place's score
        if beta:
            for a in order[:anchors]:
                for s in self.siblings.get(a, []):
                    own = self.own(q, s)
                    if own > 0 and own >= rho * key[a]:
                        key[s] = max(key.get(s, 0.0), min(key[a] - 1e-9, own + beta * key[a]))
        place = {d: i for i, d in enumerate(order)}
        order = sorted(key, key=lambda d: (-key[d], place.get(d, 10**6)))
        out = order[:10]
        if not helpers:
            return out
        # As src/pick/helpers.rs: the first 3 picks, then each helper as it comes, bring up to 2
        # helpers right after them (after the ones they already brought), each tool once.
        queue, seen, brought_by = list(out[:3]), set(out[:3]), {}
        while queue:
            c = queue.pop(0)
            if c not in out or out.index(c) >= 10:
                continue
            for h in sorted(self.links.get(c, []), key=lambda h: place.get(h, 10**6))[:2]:
                at = out.index(c)
                if h in out and out.index(h) < at:
                    continue
                if h in out:
                    out.remove(h)
                at = out.index(c) + 1
                while at < len(out) and brought_by.get(out[at]) == c:
                    at += 1
                out.insert(at, h)
                brought_by[h] = c
                if h not in seen:
                    seen.add(h)
                    queue.append(h)
        return out[:10]

    def evaluate(self, *args) -> dict:
        return rp.evaluate(self.corpus, self.rows, [self.rank(q, *args) for q in self.rows])


def main() -> None:
    quality.ensure_venv()
    corpus = rp.load_corpus(10_000)
    r = Reranker(corpus)
    sets = corpus.datasets
    head = "| steps (α, λ, β, anchors) | " + " | ".join(sets) + " | mean R@5 | R@1 | MRR@10 |"
    lines = [head, "|---|" + "---:|" * (len(sets) + 3)]

    def row(label: str, ev: dict) -> None:
        lines.append(f"| {label} | " + " | ".join(f"{ev[d]['r5']:.3f}" for d in sets)
                     + f" | {ev['mean']['r5']:.3f} | {ev['mean']['r1']:.3f} | {ev['mean']['mrr10']:.3f} |")

    for label, args in (("BM25F alone", (0, 0, 0, 0, False)),
                        ("helpers", (0, 0, 0, 0, True)),
                        ("helpers, coverage (0.8, 0.3)", (0.8, 0.3, 0, 0, True)),
                        ("helpers, siblings (0.4, 2)", (0, 0, 0.4, 2, True)),
                        ("helpers, coverage, siblings (0.8, 0.3, 0.4, 2)", (0.8, 0.3, 0.4, 2, True))):
        row(label, r.evaluate(*args))
    grid = [(a, lam, b, n, True) for a in (0, 0.5, 0.8) for lam in (0.3, 0.5)
            for b in (0, 0.2, 0.4, 0.6) for n in (2, 3) if a or lam == 0.3]
    results = {g: r.evaluate(*g) for g in grid}
    held = {}
    for d in sets:
        train = [x for x in sets if x != d]
        g = max(grid, key=lambda g: sum(sum(results[g][x][k] for k in ("r1", "r5", "mrr10"))
                                         for x in train))
        held[d] = (g, results[g][d]["r5"])
    lines.append("\nLeave one data set out (chosen on the other three → held-out R@5): "
                 + "; ".join(f"{d}: α {g[0]}, λ {g[1]}, β {g[2]}, anchors {g[3]} → {v:.3f}"
                             for d, (g, v) in held.items())
                 + f"; mean **{sum(v for _, v in held.values()) / len(held):.3f}**")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
