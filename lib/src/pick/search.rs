//! `search` for a sentence, its hits ordered as `pick` orders its picks.
//!
//! The index ranks a sentence by BM25F relevance alone ([`crate::index`]). `pick` then takes
//! the steps that run by default ([`HELPERS_BY_DEFAULT`] and its siblings): today only the
//! tools the first picks' required arguments name ([`helpers`](super::helpers)); coverage
//! ([`cover`]) and sibling tools ([`siblings`](super::siblings)) run when the constants say
//! so. `search` takes the same steps over its own hits (what its filters let through:
//! `--bundle`, `--tag`, `--include-disabled`, `--include-deleted`):
//!
//! 1. its first [`cover::POOL`] hits by relevance (covering the sentence's words between them
//!    when coverage runs);
//! 2. the first three bring their helpers right after them ([`Related`]; lifting their
//!    siblings first when that step runs) — only tools that pass the search's filters (one
//!    left out takes no helper's place: the next one named does), and only the versions that
//!    stand for their slug, as `pick` adds them;
//! 3. then the rest of the relevance order, without the tools already shown.
//!
//! That order is the same for every page of one query (it depends on the query, its filters
//! and the catalog alone), and a page is a stretch of it by position, so page 2 continues
//! page 1 and `--all` ([`search_all`], the order computed once) is the pages joined.
//!
//! **Scores** are search's BM25F relevance and never rise down the list: a hit coverage moved
//! shows the score of the place it takes (the relevance of the hit that was there), a helper
//! its consumer's score, and a sibling the relevance that its lifted key stands for
//! ([`siblings::key`](super::siblings::key) on `pick`'s 0..1 scale, mapped back by the inverse
//! of [`relevance_score`]): between its own and its anchor's. Their `why` says so, as `pick`'s
//! reasons do. A tool the steps lifted whose key falls below later hits of the relevance order
//! is merged among them by its key. A name-like query keeps its tiers, untouched.

use super::fused::{FUSED_LEXICAL_WEIGHT, Fused};
use super::{
    COVERAGE_BY_DEFAULT, HELPERS_BY_DEFAULT, Matches, Related, SIBLINGS_BY_DEFAULT, Verdicts,
    cover, cover_ranked, helper_reason, relevance_score, sibling_reason,
};
use crate::catalog::view::ToolView;
use crate::catalog::{Catalog, Problem, ToolEntry};
use crate::index::{self, Hit, Index, Registration, SearchRequest, SearchResults, Tiers};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// [`Index::search`], a sentence's hits ordered as the module comment says.
pub fn search(
    catalog: &Catalog,
    index: &Index,
    request: &SearchRequest,
    page_size: usize,
    page_token: Option<&str>,
) -> index::Result<SearchResults> {
    index.search_by(request, page_size, page_token, |index, tiers, wanted| {
        order(catalog, index, tiers, wanted)
    })
}

/// [`search`] without pages (`--all`): every hit from `page_token` on, the order computed
/// once ([`Index::search_all_by`]) — the same hits as the pages from there on joined.
pub fn search_all(
    catalog: &Catalog,
    index: &Index,
    request: &SearchRequest,
    page_token: Option<&str>,
) -> index::Result<SearchResults> {
    index.search_all_by(request, page_token, |index, tiers, wanted| {
        order(catalog, index, tiers, wanted)
    })
}

/// A hit of a page as it is shown: its place in the whole result, the tool as its file says
/// now, and why it matched.
#[derive(Debug)]
pub struct Found {
    pub rank: usize,
    pub entry: ToolEntry,
    pub hit: Hit,
}

impl Found {
    /// The shape `search --json` and `GET /tools/tools/search` print an item in.
    pub fn to_json(&self) -> Value {
        let mut item = serde_json::to_value(ToolView::new(&self.entry)).unwrap_or_default();
        item["rank"] = self.rank.into();
        item["score"] = json!((self.hit.score * 1000.0).round() / 1000.0);
        item["tier"] = json!(self.hit.tier);
        item["why"] = self.hit.why.clone().into();
        item
    }
}

/// The tools of a page of hits, read from their files (the file is the truth). Without
/// `include_disabled` every hit is a tool the index lists as usable now; one that is no longer
/// there is left out, one that cannot be read is left out and added to `problems`.
pub fn found(
    catalog: &Catalog,
    results: &SearchResults,
    include_disabled: bool,
    problems: &mut Vec<Problem>,
) -> Vec<Found> {
    let mut reader = if include_disabled {
        catalog.tool_reader()
    } else {
        catalog.tool_reader().of_usable()
    };
    let mut found = Vec::new();
    for (i, hit) in results.hits.iter().enumerate() {
        match reader.tool_at(&hit.path) {
            Ok(Some(entry)) => found.push(Found {
                rank: results.offset + i + 1,
                entry,
                hit: hit.clone(),
            }),
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    found
}

/// The first `wanted` hits of `tiers` in the order of the module comment.
pub fn order(
    catalog: &Catalog,
    index: &Index,
    tiers: Tiers,
    wanted: usize,
) -> index::Result<Vec<Hit>> {
    let Some(scale) = tiers.relevance_scale() else {
        return index.best_hits(&tiers, wanted);
    };
    let (query, filters) = (tiers.query().to_owned(), tiers.filters());
    let mut matches = match Fused::new(index, tiers, &query, FUSED_LEXICAL_WEIGHT)? {
        Ok(fused) => Matches::new(Verdicts::Fused(Box::new(fused))),
        Err(tiers) => Matches::of_tiers(Some(tiers)),
    };
    // A hit's score: its fused score (pick's 0..1 scale, its ranking key), or without the
    // model its BM25F relevance (whose key is `relevance_score`).
    let fused = matches!(matches.verdicts, Verdicts::Fused(_));
    let key = |score: f64| {
        if fused {
            score
        } else {
            relevance_score(score, scale)
        }
    };
    let score_of_key = |key: f64| {
        if fused { key } else { relevance_of(key, scale) }
    };
    let mut read = wanted.max(cover::POOL) + cover::POOL;
    let mut relevant = matches.best_hits(index, read)?;
    let pool = &relevant[..relevant.len().min(cover::POOL)];
    let pool_ids: Vec<i64> = pool.iter().map(|h| h.id).collect();
    let registered: HashMap<i64, Registration> = index
        .registrations(&pool_ids)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
    let mut ranked: Vec<(Registration, f64)> = pool
        .iter()
        .filter_map(|h| registered.get(&h.id).map(|r| (r.clone(), key(h.score))))
        .collect();
    let moved = match matches.shares().filter(|_| COVERAGE_BY_DEFAULT) {
        Some(shares) => cover_ranked(shares, matches.cover_relevance(), &mut ranked, cover::POOL),
        None => HashMap::new(),
    };
    let mut added = Related {
        siblings: SIBLINGS_BY_DEFAULT,
        helpers: HELPERS_BY_DEFAULT,
        // Search shows unsafe tools too.
        allow_unsafe: true,
        min_key: 0.0,
        within: Some(&filters),
    }
    .add(catalog, index, &mut matches, &mut ranked, usize::MAX)?;

    // The hits of the tools the steps added (all of which the search's filters let through).
    let mut hits: HashMap<i64, Hit> = pool.iter().map(|h| (h.id, h.clone())).collect();
    let new: Vec<i64> = ranked
        .iter()
        .map(|(r, _)| r.id)
        .filter(|id| !hits.contains_key(id))
        .collect();
    if let Some(tiers) = matches.tiers() {
        for mut hit in index.sentence_hits(tiers, &new)? {
            if fused {
                hit.score = matches.score(hit.id);
            }
            hits.insert(hit.id, hit);
        }
    }
    ranked.retain(|(r, _)| hits.contains_key(&r.id));
    added.needs.retain(|id, _| hits.contains_key(id));
    added.kin.retain(|id, _| hits.contains_key(id));

    // Anchors and consumers by slug, as the whys name them.
    let namers: Vec<i64> = added
        .kin
        .values()
        .map(|k| k.anchor)
        .chain(added.needs.values().map(|n| n.consumer))
        .collect();
    let slugs: HashMap<i64, String> = index
        .rows_by_id(&namers, false)?
        .into_iter()
        .map(|row| (row.id, row.slug))
        .collect();
    let slug = |id: &i64| slugs.get(id).map_or("a hit", String::as_str);

    // The head: each hit with its key, its score as shown and its why.
    let mut head: Vec<(f64, Hit)> = Vec::with_capacity(ranked.len());
    let mut shown: HashMap<i64, f64> = HashMap::new();
    for (registration, k) in &ranked {
        let Some(mut hit) = hits.get(&registration.id).cloned() else {
            continue;
        };
        if let Some(need) = added.needs.get(&hit.id) {
            hit.score = shown.get(&need.consumer).copied().unwrap_or(hit.score);
            hit.why = helper_reason(slug(&need.consumer), need);
        } else if let Some(kin) = added.kin.get(&hit.id) {
            let own = hit.score;
            let anchor = shown.get(&kin.anchor).copied().unwrap_or(f64::INFINITY);
            hit.score = score_of_key(kin.key).max(own).min(anchor);
            hit.why = sibling_reason(slug(&kin.anchor), kin, own);
        } else if let Some(m) = moved.get(&hit.id) {
            hit.score = pool.get(m.place - 1).map_or(hit.score, |h| h.score);
            hit.why = cover::reason(&hit.why, m.rank, m.is_up());
        }
        shown.insert(hit.id, hit.score);
        head.push((*k, hit));
    }

    // The rest of the relevance order, merged with the head by key.
    let taken: HashSet<i64> = head.iter().map(|(_, h)| h.id).collect();
    if relevant.len() == read && read < wanted + taken.len() {
        read = wanted + taken.len();
        relevant = matches.best_hits(index, read)?;
    }
    let mut rest = relevant
        .into_iter()
        .filter(|h| !taken.contains(&h.id))
        .peekable();
    let mut head = head.into_iter().peekable();
    let mut order: Vec<Hit> = Vec::with_capacity(wanted);
    while order.len() < wanted {
        let from_head = match (head.peek(), rest.peek()) {
            (Some((k, _)), Some(h)) => *k >= key(h.score),
            (found, _) => found.is_some(),
        };
        let next = if from_head {
            head.next().map(|(_, h)| h)
        } else {
            rest.next()
        };
        let Some(mut hit) = next else {
            break;
        };
        // A sibling's score is computed back from its key: rounding must not lift it above
        // the hit before it.
        if let Some(before) = order.last() {
            hit.score = hit.score.min(before.score);
        }
        order.push(hit);
    }
    Ok(order)
}

/// The BM25F relevance whose [`relevance_score`] is `score` (its inverse), for a query whose
/// scale is `scale`.
pub fn relevance_of(score: f64, scale: f64) -> f64 {
    if score <= 0.0 || scale <= 0.0 {
        return 0.0;
    }
    -scale / 2.0 * (-score.min(1.0)).ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevance_of_undoes_relevance_score() {
        for (relevance, scale) in [(0.5, 4.0), (3.0, 4.0), (7.25, 12.5), (20.0, 9.0)] {
            let back = relevance_of(relevance_score(relevance, scale), scale);
            assert!(
                (back - relevance).abs() < 1e-9,
                "{relevance} {scale}: {back}"
            );
        }
        assert_eq!(relevance_of(0.0, 4.0), 0.0);
        assert_eq!(relevance_of(0.5, 0.0), 0.0);
        // A higher score stands for a higher relevance.
        assert!(relevance_of(0.6, 4.0) > relevance_of(0.5, 4.0));
    }
}
