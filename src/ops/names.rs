//! Exported-name collisions a write would bring. `validate` reports two tool slugs that want
//! the same exported name (`météo` and `meteo`, `weather` and a Cyrillic `wеather`) as an
//! error (rule `name-collision`), so a write that would make such a pair is refused with the
//! same verdict: what toolctl writes, `validate` accepts. Collisions the catalog already had
//! (hand edits, `git pull`) do not stop writes that add no new one.

use crate::catalog::error::{Error, Hint, Result};
use crate::catalog::names::{Key, MAX_NAME, NameMap};
use crate::catalog::{BundleEntry, Catalog};
use serde_json::json;
use std::collections::BTreeSet;

impl Catalog {
    /// The tool slugs of live bundles (soft-deleted ones left out, as `validate` and the
    /// exported names leave them out), the built-in bundle included.
    fn live_keys(&self, bundles: &[BundleEntry]) -> BTreeSet<Key> {
        bundles
            .iter()
            .filter(|b| !b.is_deleted())
            .flat_map(|b| {
                self.tool_slugs(b)
                    .into_iter()
                    .map(|slug| (b.bundle.slug.clone(), slug))
            })
            .collect()
    }

    /// Refuse (`CONFLICT`) new tool slugs for bundle `bundle_slug` that would collide, before
    /// a command that writes several tools (`mcp import`) writes the first: nothing is
    /// half-written. Each write checks again under the lock.
    pub fn refuse_colliding_tools(&self, bundle_slug: &str, slugs: &[&str]) -> Result<()> {
        self.refuse_new_collisions(&self.bundles()?.items, IMPORT_HINT, |keys| {
            keys.extend(
                slugs
                    .iter()
                    .map(|s| (bundle_slug.to_owned(), (*s).to_owned())),
            );
        })
    }

    /// Refuse (`CONFLICT`, with `hint`) a write that `change` describes, as the live keys it
    /// adds and removes, when it would make tool slugs collide that did not collide before.
    pub(crate) fn refuse_new_collisions(
        &self,
        bundles: &[BundleEntry],
        hint: &str,
        change: impl FnOnce(&mut BTreeSet<Key>),
    ) -> Result<()> {
        let before = self.live_keys(bundles);
        let mut after = before.clone();
        change(&mut after);
        let colliding = |keys: &BTreeSet<Key>| {
            NameMap::build(keys.iter().map(|(b, s)| (b.as_str(), s.as_str())))
                .collisions()
                .to_vec()
        };
        let old: BTreeSet<Key> = colliding(&before)
            .into_iter()
            .flat_map(|(_, keys)| keys)
            .collect();
        let Some((wanted, keys)) = colliding(&after)
            .into_iter()
            .find(|(_, keys)| keys.iter().any(|k| !old.contains(k)))
        else {
            return Ok(());
        };
        let refs: Vec<String> = keys.iter().map(|(b, s)| format!("{b}/{s}")).collect();
        // Tools of one slug in several bundles are exported as `<bundle>__<slug>`: when those
        // names meet, the bundle slugs are what came out the same (transliterated, cut to 64),
        // and another tool slug is not the way out.
        let shared_slug = match keys.as_slice() {
            [(_, first), rest @ ..] if !rest.is_empty() && rest.iter().all(|(_, s)| s == first) => {
                Some(first)
            }
            _ => None,
        };
        let (message, hint) = if refs.len() == 1 {
            (
                format!(
                    "the exported name '{wanted}' of {} would be another tool's slug (validate's rule name-collision)",
                    refs[0]
                ),
                hint.into(),
            )
        } else if let Some(slug) = shared_slug {
            let bundles: Vec<String> = keys.iter().map(|(b, _)| format!("'{b}'")).collect();
            let message = format!(
                "{} would all want the exported name '{wanted}': a tool slug that several \
                    bundles have is exported as `<bundle slug>__{slug}`, and the bundle slugs {} \
                    come out the same in it (in ASCII, cut to {MAX_NAME} characters) (validate's \
                    rule name-collision)",
                refs.join(" and "),
                bundles.join(" and "),
            );
            // A tool slug is no way out when the write names one (`tool put`): it is not the
            // cause. Restores and imports keep theirs ("nothing was changed; …") first.
            let first = (hint != SLUG_HINT).then(|| hint.into());
            (message, Hint::RenameBundle { first })
        } else {
            (
                format!(
                    "{} would all want the exported name '{wanted}' (validate's rule name-collision)",
                    refs.join(" and ")
                ),
                hint.into(),
            )
        };
        Err(Error::Conflict {
            message,
            details: json!({ "exportedName": wanted, "tools": refs }),
            hint: Some(hint),
        })
    }
}

/// The hint when the write names the slug that collides (`tool put`, `bundle put`).
pub(crate) const SLUG_HINT: &str = "choose a slug whose exported name no other tool wants";
/// The hint when the colliding slugs are already written (restore, `import --update`).
pub(crate) const RENAME_HINT: &str =
    "nothing was changed; delete one of the tools first, or put it anew under another slug";
/// The hint for an import.
pub(crate) const IMPORT_HINT: &str = "nothing was written; one of the two tools must go under another slug (a catalog's tool: put it anew and delete the old one)";
