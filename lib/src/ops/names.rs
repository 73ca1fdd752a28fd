//! Exported-name collisions a write would bring. `validate` reports two tool slugs that want
//! the same exported name (`météo` and `meteo`, `weather` and a Cyrillic `wеather`) as an
//! error (rule `name-collision`), so a write that would make such a pair is refused with the
//! same verdict: what toolctl writes, `validate` accepts. Collisions the catalog already had
//! (hand edits, `git pull`) do not stop writes that add no new one.

use crate::catalog::error::{Error, Hint, Result};
use crate::catalog::names::{self, Collision, Key, MAX_NAME};
use crate::catalog::{BundleEntry, Catalog};
use serde_json::json;
use std::collections::BTreeSet;

impl Catalog {
    /// The tool slugs of live bundles (soft-deleted ones left out, as `validate` and the
    /// exported names leave them out), the built-in bundle included: each bundle's slug with
    /// its tools' slugs.
    fn live_slugs<'b>(&self, bundles: &'b [BundleEntry]) -> Vec<(&'b str, Vec<String>)> {
        let mut live: Vec<(&str, Vec<String>)> = bundles
            .iter()
            .filter(|b| !b.is_deleted())
            .map(|b| (b.bundle.slug.as_str(), self.tool_slugs(b)))
            .collect();
        // Two bundles of one slug (written by hand) hold one set of tool slugs, as the name
        // map reads them: each (bundle, slug) once.
        live.sort_by(|a, b| a.0.cmp(b.0));
        let mut merged: Vec<(&str, Vec<String>)> = Vec::with_capacity(live.len());
        for (bundle, slugs) in live {
            match merged.last_mut() {
                Some((last, known)) if *last == bundle => {
                    known.extend(slugs);
                    known.sort();
                    known.dedup();
                }
                _ => merged.push((bundle, slugs)),
            }
        }
        merged
    }

    /// Refuse (`CONFLICT`) new tool slugs for bundle `bundle_slug` that would collide, before
    /// a command that writes several tools (`mcp import`) writes the first: nothing is
    /// half-written. Each write checks again under the lock.
    pub fn refuse_colliding_tools(&self, bundle_slug: &str, slugs: &[&str]) -> Result<()> {
        let added: Vec<Key> = slugs
            .iter()
            .map(|s| (bundle_slug.to_owned(), (*s).to_owned()))
            .collect();
        self.refuse_added_collisions(&self.bundles()?.items, IMPORT_HINT, &added)
    }

    /// Which of the new tool slugs `slugs` of bundle `bundle_slug` (in order) to leave out so
    /// that the others add no exported-name collision (`mcp import`, which imports the rest).
    /// A slug whose name a catalog tool wants is left out; of new slugs that want one name
    /// among themselves, the first keeps it. Each comes with the collision, in `tool put`'s
    /// words, and the tools it collides with (`bundle/slug`).
    pub fn colliding_new_tools(
        &self,
        bundle_slug: &str,
        slugs: &[&str],
    ) -> Result<Vec<(String, String, Vec<String>)>> {
        let bundles = self.bundles()?.items;
        let live = self.live_slugs(&bundles);
        let mut added: Vec<Key> = slugs
            .iter()
            .map(|s| (bundle_slug.to_owned(), (*s).to_owned()))
            .collect();
        let mut out = Vec::new();
        loop {
            let keys = live
                .iter()
                .flat_map(|(bundle, slugs)| slugs.iter().map(|slug| (*bundle, slug.as_str())));
            let Some((wanted, keys)) = names::new_collision_adding(keys, &added) else {
                break;
            };
            let mut ours: Vec<Key> = keys.iter().filter(|k| added.contains(k)).cloned().collect();
            ours.sort_by_key(|k| added.iter().position(|a| a == k));
            if ours.len() == keys.len() && ours.len() > 1 {
                ours.remove(0);
            }
            if ours.is_empty() {
                // Not one of the new slugs' own names: the write refuses it whole.
                break;
            }
            let message = collision_error((wanted, keys.clone()), "").to_string();
            for key in ours {
                added.retain(|a| a != &key);
                let others = keys
                    .iter()
                    .filter(|k| **k != key)
                    .map(|(b, s)| format!("{b}/{s}"))
                    .collect();
                out.push((key.1, message.clone(), others));
            }
        }
        Ok(out)
    }

    /// Refuse (`CONFLICT`, with `hint`) a write that adds the tool slugs `added` (keys the
    /// catalog has already are fine) when they would make tool slugs collide that did not
    /// collide before. Only the names the added slugs can change are compared
    /// ([`names::new_collision_adding`]).
    pub(crate) fn refuse_added_collisions(
        &self,
        bundles: &[BundleEntry],
        hint: &str,
        added: &[Key],
    ) -> Result<()> {
        let live = self.live_slugs(bundles);
        let keys = live
            .iter()
            .flat_map(|(bundle, slugs)| slugs.iter().map(|slug| (*bundle, slug.as_str())));
        match names::new_collision_adding(keys, added) {
            None => Ok(()),
            Some(found) => Err(collision_error(found, hint)),
        }
    }

    /// Refuse (`CONFLICT`, with `hint`) a write that `change` describes, as the live keys it
    /// adds and removes, when it would make tool slugs collide that did not collide before
    /// (a bundle's new slug renames its tools). A write that only adds keys:
    /// [`refuse_added_collisions`](Self::refuse_added_collisions).
    pub(crate) fn refuse_new_collisions(
        &self,
        bundles: &[BundleEntry],
        hint: &str,
        change: impl FnOnce(&mut BTreeSet<Key>),
    ) -> Result<()> {
        let before: BTreeSet<Key> = self
            .live_slugs(bundles)
            .into_iter()
            .flat_map(|(bundle, slugs)| slugs.into_iter().map(|slug| (bundle.to_owned(), slug)))
            .collect();
        let mut after = before.clone();
        change(&mut after);
        match names::new_collision(&before, &after) {
            None => Ok(()),
            Some(found) => Err(collision_error(found, hint)),
        }
    }
}

/// The error of a collision a write would bring.
fn collision_error((wanted, keys): Collision, hint: &str) -> Error {
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
    Error::Conflict {
        message,
        details: json!({ "exportedName": wanted, "tools": refs }),
        hint: Some(hint),
    }
}

/// The hint when the write names the slug that collides (`tool put`, `bundle put`).
pub(crate) const SLUG_HINT: &str = "choose a slug whose exported name no other tool wants";
/// The hint when the colliding slugs are already written (restore, `import --update`).
pub(crate) const RENAME_HINT: &str =
    "nothing was changed; delete one of the tools first, or put it anew under another slug";
/// The hint for an import.
pub(crate) const IMPORT_HINT: &str = "nothing was written; one of the two tools must go under another slug (a catalog's tool: put it anew and delete the old one)";
