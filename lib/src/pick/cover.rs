//! Coverage: the first picks share out the words of a request that asks for several things.
//!
//! "Find flights to Boston and a taxi from the airport to the Hyatt" needs a flight tool and
//! a taxi tool. Ranked by relevance alone, the five flight tools that match "flights",
//! "airport" and "Boston" all come before the taxi tool, which matches "taxi" alone. So the
//! first picks are chosen one at a time from the [`POOL`] most relevant candidates, each for
//! what it adds to those already chosen (explicit coverage of the query's terms, as in
//! xQuAD-style diversification of search results):
//!
//! ```text
//! gain(d)  = (1 − λ) · Σ_t share(d, t) · left(t)  +  λ · relevance(d)
//! left(t) ← left(t) · (1 − α · share(c, t) / max_d share(d, t))     after choosing c
//! ```
//!
//! where `share(d, t)` is what term `t` (a word of the request, or a pair of adjacent words)
//! adds to `d`'s BM25F relevance ([`crate::index::Shares`]), so `relevance(d)` is their sum,
//! and `left(t)`, 1 at first, is how much of term `t` is still to be covered: a term the
//! chosen tools hold as well as the best candidate holds it counts `1 − α` as much for the
//! next choice. λ keeps relevance itself in the gain, so a tool that adds only a rare word
//! does not jump ahead of one that matches the request well. α 0.8 was chosen in every fold
//! of leaving out each NESTFUL data set in turn, tuning on the other three and scoring the
//! one left out, λ 0.3 or 0.5 (`bench/rerank_prototype.py`, in Python). Measured with
//! `python3 bench/quality.py --no-alone --methods bm25,bm25-no-coverage` (NESTFUL with
//! 10,000 distractors), `pick`'s mean capped Recall@5 rose from 0.727 to 0.732: glaive
//! 0.870 → 0.904 and cfb 0.602 → 0.619, whose requests ask for several things, while
//! executable (0.501 → 0.475) and sgd (0.935 → 0.928) lose a little where a second tool for
//! the same thing was the right one. Only sentences are covered: a short name-like query
//! asks for one thing.
//!
//! `hybrid` is covered too ([`Relevance::Fused`]): its 40 best by the fused score are the
//! pool, `share(d, t)` are BM25F's shares as for `bm25` (the embeddings say nothing of a
//! request's words), and `relevance(d)` is the fused score scaled so the pool's best fused
//! score weighs what its best BM25F relevance does ([`scaled_keys`]), with λ 0.5. In
//! `bench/hybrid_cover_prototype.py` (all of NESTFUL with 10,000 distractors, MiniLM) this
//! raised hybrid's mean capped R@5 from 0.734 to 0.773 (glaive 0.823 → 0.922, cfb 0.650 →
//! 0.700, executable 0.545 → 0.557, sgd 0.917 → 0.913).
//!
//! The scores still fall down the list: a pick coverage moved takes the score of the place
//! it takes (the place's score by relevance), as a helper takes its consumer's; its reason
//! says so, and `--debug` gives its place by relevance and its own score
//! (`coverage: {relevanceRank, ownScore}`).

/// How many of the most relevant candidates the picks are chosen from.
pub const POOL: usize = 40;
/// How much of a term a chosen tool covers, at most (α).
pub const ALPHA: f64 = 0.8;
/// The share of a tool's relevance itself in its gain (λ).
pub const LAMBDA: f64 = 0.3;

/// What a candidate's relevance is in its gain, and how much of the gain it is (λ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    /// `bm25`'s: the candidate's BM25F relevance, the sum of its term shares; λ [`LAMBDA`].
    Lexical,
    /// `hybrid`'s: its ranking key (the fused score), scaled by [`scaled_keys`] onto the
    /// shares' scale; λ [`FUSED_LAMBDA`].
    Fused,
}

/// λ for `hybrid`, whose relevance (the fused score) holds what the embeddings see and the
/// term shares do not: at the first choice, where `left` is 1 everywhere, the gain weighs
/// BM25F relevance and the fused score alike, so the embeddings still count (with `bm25`'s
/// 0.3 the first pick is nearly BM25F's best). In `bench/hybrid_cover_prototype.py` (all of
/// NESTFUL, 10,000 distractors, helper tools) hybrid's mean capped R@5 is 0.734 without
/// coverage, 0.762 / 0.773 / 0.765 with λ 0.3 / 0.5 / 0.7 (α 0.8); λ chosen by leaving
/// each data set out wanders (0.4–0.8, held-out mean 0.753): the plateau is flat, and 0.5 is
/// its middle.
pub const FUSED_LAMBDA: f64 = 0.5;

impl Relevance {
    fn lambda(self) -> f64 {
        match self {
            Self::Lexical => LAMBDA,
            Self::Fused => FUSED_LAMBDA,
        }
    }
}

/// `hybrid`'s relevance in the gain: the candidates' ranking `keys` (fused scores, min-max
/// normalised per query, so on no scale of their own) times the best BM25F relevance among
/// them (the largest sum of `shares`) over the best key. The most relevant candidate by the
/// fused score then weighs in the gain what the most relevant by BM25F does, and the others
/// in proportion to their fused score. All 0 when no candidate holds a term or none scores.
pub fn scaled_keys(keys: &[f64], shares: &[Vec<f64>]) -> Vec<f64> {
    let top_lexical = lexical(shares).into_iter().fold(0.0, f64::max);
    let top_key = keys.iter().copied().fold(0.0, f64::max);
    keys.iter()
        .map(|k| {
            if top_key > 0.0 {
                k.max(0.0) / top_key * top_lexical
            } else {
                0.0
            }
        })
        .collect()
}

/// The order in which to pick `n` of the candidates whose term shares are `shares` (in
/// relevance order, each with one share per term), with `bm25`'s relevance: see [`order_by`].
pub fn order(shares: &[Vec<f64>], n: usize) -> Vec<usize> {
    order_by(shares, &lexical(shares), LAMBDA, n)
}

/// Each candidate's BM25F relevance: the sum of its term shares.
fn lexical(shares: &[Vec<f64>]) -> Vec<f64> {
    shares.iter().map(|s| s.iter().sum()).collect()
}

/// The order in which to pick `n` of the candidates whose term shares are `shares` and whose
/// relevance is `relevance` (in relevance order, each with one share per term): indexes into
/// `shares`, chosen one at a time for their gain with λ `lambda` (see the module comment);
/// of equal gains, the more relevant first.
pub fn order_by(shares: &[Vec<f64>], relevance: &[f64], lambda: f64, n: usize) -> Vec<usize> {
    let terms = shares.iter().map(Vec::len).max().unwrap_or(0);
    let share = |d: usize, t: usize| shares[d].get(t).copied().unwrap_or(0.0);
    let best: Vec<f64> = (0..terms)
        .map(|t| (0..shares.len()).map(|d| share(d, t)).fold(0.0, f64::max))
        .collect();
    let mut left = vec![1.0; terms];
    let mut chosen = Vec::with_capacity(n.min(shares.len()));
    let mut open: Vec<usize> = (0..shares.len()).collect();
    while chosen.len() < n && !open.is_empty() {
        let gain = |d: usize| {
            let covered: f64 = (0..terms).map(|t| share(d, t) * left[t]).sum();
            (1.0 - lambda) * covered + lambda * relevance.get(d).copied().unwrap_or(0.0)
        };
        let mut at = 0;
        let mut top = gain(open[0]);
        for (i, d) in open.iter().enumerate().skip(1) {
            let g = gain(*d);
            if g > top {
                (at, top) = (i, g);
            }
        }
        let c = open.remove(at);
        for (t, l) in left.iter_mut().enumerate() {
            if best[t] > 0.0 {
                *l *= 1.0 - ALPHA * share(c, t) / best[t];
            }
        }
        chosen.push(c);
    }
    chosen
}

/// A pick of a covered ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed<R> {
    pub row: R,
    /// The key of its place: the key the ranking by relevance had there.
    pub key: f64,
    /// Its place by relevance (from 1), when coverage moved it.
    pub moved_from: Option<usize>,
}

/// The first `n` of `ranked` (best first by relevance, each with its key; `shares` gives
/// each one's term shares) in the order of [`order`]. Each takes the key of the place it
/// takes, so the keys still never rise down the list.
pub fn place<R: Clone>(ranked: &[(R, f64)], shares: &[Vec<f64>], n: usize) -> Vec<Placed<R>> {
    place_by(ranked, shares, Relevance::Lexical, n)
}

/// [`place`], with `relevance`'s relevance and λ in the gain ([`order_by`]).
pub fn place_by<R: Clone>(
    ranked: &[(R, f64)],
    shares: &[Vec<f64>],
    relevance: Relevance,
    n: usize,
) -> Vec<Placed<R>> {
    let values = match relevance {
        Relevance::Lexical => lexical(shares),
        Relevance::Fused => {
            let keys: Vec<f64> = ranked.iter().map(|(_, k)| *k).collect();
            scaled_keys(&keys, shares)
        }
    };
    order_by(shares, &values, relevance.lambda(), n)
        .into_iter()
        .enumerate()
        .map(|(place, at)| Placed {
            row: ranked[at].0.clone(),
            key: ranked[place].1,
            moved_from: (place != at).then_some(at + 1),
        })
        .collect()
}

/// The reason of a pick coverage moved from `rank` (by relevance, from 1): `reason` and
/// why it stands where it does, before more relevant tools (`up`) or after one that covers
/// more of the task.
pub fn reason(reason: &str, rank: usize, up: bool) -> String {
    if up {
        format!(
            "{reason}; placed before more relevant tools (relevance rank {rank}) for words of the task the picks above do not hold"
        )
    } else {
        format!(
            "{reason}; placed after a less relevant tool that holds other words of the task (relevance rank {rank})"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_for_another_part_of_the_request_comes_before_a_second_tool_for_the_first() {
        // Terms: flight, airport, taxi. Three flight tools match more than the taxi tool.
        let shares = [
            vec![3.0, 2.0, 0.0],
            vec![2.8, 2.0, 0.0],
            vec![2.5, 1.8, 0.0],
            vec![0.0, 0.5, 2.6],
        ];
        assert_eq!(order(&shares, 2), [0, 3]);
        assert_eq!(order(&shares, 4), [0, 3, 1, 2]);
        // By relevance alone the taxi tool would be last.
        let relevance: Vec<f64> = shares.iter().map(|s| s.iter().sum()).collect();
        assert!(relevance[3] < relevance[2]);
    }

    #[test]
    fn relevance_still_counts_a_rare_word_alone_does_not_jump_ahead() {
        // The second tool matches the request nearly as well as the first; the third holds
        // only a word the first lacks, and little of it.
        let shares = [
            vec![3.0, 3.0, 0.0],
            vec![2.9, 2.9, 0.0],
            vec![0.0, 0.0, 0.4],
        ];
        assert_eq!(order(&shares, 3), [0, 1, 2]);
    }

    #[test]
    fn one_part_requests_keep_the_relevance_order() {
        let shares = [vec![2.0, 1.0], vec![1.5, 1.0], vec![1.0, 0.5]];
        assert_eq!(order(&shares, 3), [0, 1, 2]);
        // Equal tools: the more relevant first, which is the earlier one.
        let same = [vec![1.0, 1.0], vec![1.0, 1.0]];
        assert_eq!(order(&same, 2), [0, 1]);
    }

    #[test]
    fn fused_keys_are_scaled_so_the_best_weighs_what_the_best_bm25f_relevance_does() {
        // BM25F relevance (the sums): 5, 4, 1 and 0; fused keys 1, 0.5, 0.8 and 0.2.
        let shares = [
            vec![3.0, 2.0, 0.0],
            vec![2.0, 2.0, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![0.0, 0.0, 0.0],
        ];
        let scaled = scaled_keys(&[1.0, 0.5, 0.8, 0.2], &shares);
        for (got, want) in scaled.iter().zip([5.0, 2.5, 4.0, 1.0]) {
            assert!((got - want).abs() < 1e-12, "{scaled:?}");
        }
        // Keys on another scale give the same: only their ratios count.
        assert_eq!(scaled_keys(&[0.5, 0.25, 0.4, 0.1], &shares), scaled);
        // No key above 0, or no term held: nothing to weigh.
        assert_eq!(scaled_keys(&[0.0, 0.0], &shares[..2]), [0.0, 0.0]);
        assert_eq!(
            scaled_keys(&[1.0, 0.5], &[vec![0.0], vec![0.0]]),
            [0.0, 0.0]
        );
        assert!(scaled_keys(&[], &[]).is_empty());
    }

    #[test]
    fn with_the_fused_relevance_a_tool_the_embeddings_rank_high_keeps_its_place() {
        // Ranked by the fused score: the second tool holds the request's words less than the
        // third (BM25F 2 against 4.5) but the embeddings put it well ahead (0.9 against 0.3).
        let ranked = [("a", 1.0), ("b", 0.9), ("c", 0.3)];
        let shares = [vec![3.0, 2.0], vec![1.0, 1.0], vec![2.5, 2.0]];
        let by = |relevance| {
            place_by(&ranked, &shares, relevance, 3)
                .into_iter()
                .map(|p| p.row)
                .collect::<Vec<_>>()
        };
        assert_eq!(by(Relevance::Fused), ["a", "b", "c"]);
        // With BM25F's relevance the embeddings would not count.
        assert_eq!(by(Relevance::Lexical), ["a", "c", "b"]);
    }

    /// Each placed tool's name, key and place by relevance when it moved.
    fn placed(placed: Vec<Placed<&str>>) -> Vec<(&str, f64, Option<usize>)> {
        placed
            .into_iter()
            .map(|p| (p.row, p.key, p.moved_from))
            .collect()
    }

    #[test]
    fn with_the_fused_relevance_a_tool_for_another_part_of_the_request_still_moves_up() {
        // Three flight tools by the fused score, then the taxi tool, a little below.
        let ranked = [("a", 1.0), ("b", 0.95), ("c", 0.8), ("taxi", 0.52)];
        let shares = [
            vec![3.0, 2.0, 0.0],
            vec![2.8, 2.0, 0.0],
            vec![2.5, 1.8, 0.0],
            vec![0.0, 0.0, 2.6],
        ];
        assert_eq!(
            placed(place_by(&ranked, &shares, Relevance::Fused, 3)),
            [("a", 1.0, None), ("b", 0.95, None), ("taxi", 0.8, Some(4))]
        );
    }

    #[test]
    fn a_moved_pick_takes_the_key_of_its_place() {
        let ranked = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("taxi", 0.4)];
        let shares = [
            vec![3.0, 2.0, 0.0],
            vec![2.8, 2.0, 0.0],
            vec![2.5, 1.8, 0.0],
            vec![0.0, 0.5, 2.6],
        ];
        assert_eq!(
            placed(place(&ranked, &shares, 3)),
            [
                ("a", 0.9, None),
                ("taxi", 0.8, Some(4)),
                ("b", 0.7, Some(2))
            ]
        );
    }

    #[test]
    fn a_moved_picks_reason_says_which_way_it_moved() {
        assert_eq!(
            reason("relevant", 4, true),
            "relevant; placed before more relevant tools (relevance rank 4) for words of the task the picks above do not hold"
        );
        assert_eq!(
            reason("relevant", 2, false),
            "relevant; placed after a less relevant tool that holds other words of the task (relevance rank 2)"
        );
    }

    #[test]
    fn it_picks_at_most_n_and_at_most_what_there_is() {
        let shares = [vec![1.0], vec![0.5]];
        assert_eq!(order(&shares, 1), [0]);
        assert_eq!(order(&shares, 5), [0, 1]);
        assert!(order(&[], 3).is_empty());
        assert_eq!(order(&[vec![], vec![]], 2), [0, 1]);
    }
}
