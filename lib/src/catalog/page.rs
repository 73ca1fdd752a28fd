//! Opaque page tokens for lists.
//!
//! Lists are ordered by a key (bundle slug, tool slug, version for tools; slug for bundles)
//! and a token carries the last key of the page it follows ("keyset" paging). So paging is
//! stable while the catalog changes: an item added or removed elsewhere never shifts a page.
//! A token also carries a fingerprint of the filters it was made for, so reusing it with
//! other filters is an error rather than a silently wrong page.

use super::error::{Error, Result, Violation};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Default and largest page sizes.
pub const DEFAULT_PAGE_SIZE: usize = 50;
pub const MAX_PAGE_SIZE: usize = 1000;

#[derive(Serialize, Deserialize)]
struct Token {
    /// The sort key of the last item of the previous page.
    after: Vec<String>,
    /// Fingerprint of the filters.
    f: String,
}

/// A fingerprint of filters (any serialisable description of them).
pub fn fingerprint<T: Serialize>(filters: &T) -> String {
    let bytes = serde_json::to_vec(filters).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    hex::encode(&digest[..6])
}

pub fn encode(after: &[String], fingerprint: &str) -> String {
    let token = Token {
        after: after.to_vec(),
        f: fingerprint.to_owned(),
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).unwrap_or_default())
}

/// The inputs a page request's errors name as their source; an interface says them in its own
/// words (the CLI as `--page-size` and `--page-token`).
pub const SIZE_INPUT: &str = "page size";
pub const TOKEN_INPUT: &str = "page token";

/// The error of a token toolctl did not make (or that was edited).
pub fn forged() -> Error {
    bad_token("not a page token from toolctl")
}

/// The error of a search page token whose earlier pages no longer hold the same hits: the
/// catalog changed, so the page it asks for would repeat or skip hits.
pub fn reordered() -> Error {
    bad_token(
        "the catalog changed since this page token was made, and the hits before its page are no longer the same; search again without a token",
    )
}

fn bad_token(message: &str) -> Error {
    Error::invalid(TOKEN_INPUT, vec![Violation::new("", message)])
}

/// Decode a token made by [`encode`] for the same filters.
pub fn decode(token: &str, fingerprint: &str) -> Result<Vec<String>> {
    let bad = bad_token;
    let bytes = URL_SAFE_NO_PAD.decode(token.trim()).map_err(|_| forged())?;
    let token: Token = serde_json::from_slice(&bytes).map_err(|_| forged())?;
    if token.f != fingerprint {
        return Err(bad(
            "this page token was made for other filters; repeat the same filters, or start without a token",
        ));
    }
    Ok(token.after)
}

/// Check a requested page size.
pub fn check_size(size: usize) -> Result<usize> {
    if (1..=MAX_PAGE_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(Error::invalid(
            SIZE_INPUT,
            vec![Violation::new(
                "",
                format!("{size} is out of range; a page holds 1 to {MAX_PAGE_SIZE} items"),
            )],
        ))
    }
}

/// Cut one page out of `items`, already sorted by `key`: those after the token's key, at most
/// `size`, and the token of the next page if more follow.
pub fn paginate<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> Vec<String>,
    size: usize,
    after: Option<&[String]>,
    fingerprint: &str,
) -> (Vec<T>, Option<String>) {
    let mut rest: Vec<T> = match after {
        None => items,
        Some(after) => items
            .into_iter()
            .filter(|i| key(i).as_slice() > after)
            .collect(),
    };
    let next = if rest.len() > size {
        rest.truncate(size);
        rest.last().map(|last| encode(&key(last), fingerprint))
    } else {
        None
    };
    (rest, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_check_filters() {
        let token = encode(&["a".into(), "b".into()], "f1");
        assert_eq!(decode(&token, "f1").unwrap(), ["a", "b"]);
        assert!(decode(&token, "f2").is_err());
        assert!(decode("!!", "f1").is_err());
    }

    #[test]
    fn paging_walks_every_item_once() {
        let items: Vec<String> = (0..7).map(|i| format!("{i}")).collect();
        let key = |s: &String| vec![s.clone()];
        let (p1, t1) = paginate(items.clone(), key, 3, None, "f");
        let a1 = decode(&t1.unwrap(), "f").unwrap();
        let (p2, t2) = paginate(items.clone(), key, 3, Some(&a1), "f");
        let a2 = decode(&t2.unwrap(), "f").unwrap();
        let (p3, t3) = paginate(items, key, 3, Some(&a2), "f");
        assert_eq!([p1, p2, p3].concat(), ["0", "1", "2", "3", "4", "5", "6"]);
        assert!(t3.is_none());
    }
}
