//! The tools a model can be shown: one version per tool slug of a live bundle, each with its
//! exported name. `export` and `pick` both start here, from the index's rows, so they agree on
//! which version stands for a slug (SPEC §2: the enabled version with the newest `createdAt`,
//! as `invoke bundle/slug` means) and on every name.

use super::names::NameMap;
use crate::index::{self, Index, ToolRow};
use std::collections::HashMap;

/// One tool slug of a bundle, at the version that stands for it.
#[derive(Debug, Clone)]
pub struct Member {
    pub row: ToolRow,
    /// The exported name.
    pub name: String,
}

impl Member {
    /// `bundle/slug@version`.
    pub fn reference(&self) -> String {
        format!(
            "{}/{}@{}",
            self.row.bundle_slug, self.row.slug, self.row.version
        )
    }

    /// Enabled, in an enabled bundle, and usable by this binary.
    pub fn is_usable(&self) -> bool {
        self.row.is_enabled && self.row.bundle_enabled && self.row.unavailable.is_none()
    }
}

/// The live catalog as providers see it.
#[derive(Debug, Clone, Default)]
pub struct Lineup {
    pub names: NameMap,
    /// In registration order (`createdAt`, then toolID).
    pub members: Vec<Member>,
}

impl Lineup {
    /// Read the lineup from the index; `with_text` also reads each tool's words.
    pub fn read(index: &Index, with_text: bool) -> index::Result<Self> {
        Ok(Self::from_rows(index.tool_rows(with_text)?))
    }

    /// The lineup of `rows` (in registration order).
    pub fn from_rows(rows: Vec<ToolRow>) -> Self {
        let names = NameMap::build(
            rows.iter()
                .map(|r| (r.bundle_slug.as_str(), r.slug.as_str())),
        );
        // The version that stands for each slug: newest enabled, else newest (ties: toolID).
        let mut best: HashMap<(&str, &str), usize> = HashMap::new();
        fn key(r: &ToolRow) -> (bool, i64, &str) {
            (r.is_enabled, r.created_ns, &r.tool_id)
        }
        for (i, row) in rows.iter().enumerate() {
            let slot = best
                .entry((row.bundle_slug.as_str(), row.slug.as_str()))
                .or_insert(i);
            if key(row) > key(&rows[*slot]) {
                *slot = i;
            }
        }
        let mut chosen: Vec<usize> = best.into_values().collect();
        chosen.sort_unstable();
        let mut rows: Vec<Option<ToolRow>> = rows.into_iter().map(Some).collect();
        let members = chosen
            .into_iter()
            .filter_map(|i| rows[i].take())
            .map(|row| Member {
                name: names
                    .name(&row.bundle_slug, &row.slug)
                    .unwrap_or(&row.slug)
                    .to_owned(),
                row,
            })
            .collect();
        Self { names, members }
    }
}
