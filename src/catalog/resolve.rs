//! Finding bundles and tools by the names users type.
//!
//! A bundle is named by slug or bundleID. A tool is named `[bundle/]slug[@version]` (bundle by
//! slug or ID) or by its toolID. Without `@version` the newest enabled version (by
//! `createdAt`) is meant, or the newest version when none is enabled. Commands that change or
//! remove one version ask for [`Pick::Exact`]: when a slug has several versions they must be
//! told which, rather than have toolctl guess. A name that matches tools in several bundles is
//! an error listing them.

use super::error::{Error, Result, Violation};
use super::{BundleEntry, Catalog, Problem, ToolEntry};
use uuid::Uuid;

/// How to choose among several versions when the reference names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The newest enabled version, else the newest.
    Default,
    /// Exactly one version must match; several is an error listing them.
    Exact,
}

/// A parsed tool reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRef {
    pub bundle: Option<String>,
    pub slug: String,
    pub version: Option<String>,
    /// The whole reference parses as a UUID: it may be a toolID.
    pub id: Option<Uuid>,
}

impl ToolRef {
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |message: &str| {
            Error::invalid(
                "tool reference",
                vec![Violation::new(
                    "",
                    format!("'{text}' {message}; write [bundle/]slug[@version] or a toolID"),
                )],
            )
        };
        let (bundle, rest) = match text.split_once('/') {
            Some((bundle, rest)) => (Some(bundle), rest),
            None => (None, text),
        };
        let (slug, version) = match rest.split_once('@') {
            Some((slug, version)) => (slug, Some(version)),
            None => (rest, None),
        };
        if bundle == Some("") {
            return Err(bad("has an empty bundle name"));
        }
        if slug.is_empty() {
            return Err(bad("has no tool slug"));
        }
        if version == Some("") {
            return Err(bad("has an empty version after '@'"));
        }
        let id = match (bundle, version) {
            (None, None) => Uuid::try_parse(slug).ok(),
            _ => None,
        };
        Ok(Self {
            bundle: bundle.map(str::to_owned),
            slug: slug.to_owned(),
            version: version.map(str::to_owned),
            id,
        })
    }
}

/// The bundle named `name` (slug or ID) among `bundles`.
pub(super) fn match_bundle<'a>(bundles: &'a [BundleEntry], name: &str) -> Result<&'a BundleEntry> {
    let by_id = Uuid::try_parse(name).ok();
    bundles
        .iter()
        .find(|b| b.bundle.slug == name || Some(b.bundle.bundle_id) == by_id)
        .ok_or_else(|| Error::NotFound {
            what: "bundle",
            name: name.to_owned(),
            hint: Some(
                "see the bundles with `toolctl bundle list --include-disabled --include-deleted`"
                    .to_owned(),
            ),
        })
}

impl Catalog {
    /// The bundle named `name` (slug or ID), soft-deleted ones included.
    pub fn find_bundle(&self, name: &str) -> Result<BundleEntry> {
        let scan = self.bundles()?;
        match_bundle(&scan.items, name).cloned()
    }

    /// The bundle `name` names, reading no other bundle when the name says which folder it
    /// is: the built-in bundle (its slug is reserved), or a bundleID (the folder's name).
    /// A slug needs every `bundle.json` read.
    fn named_bundle(&self, name: &str) -> Result<BundleEntry> {
        let builtin = self.builtin_bundle();
        if name == super::builtin::SLUG || name == builtin.bundle.bundle_id.to_string() {
            return Ok(builtin);
        }
        if let Ok(id) = Uuid::try_parse(name)
            && let Ok(Some(bundle)) =
                self.load_bundle(&self.bundles_dir().join(id.to_string()), &id.to_string())
        {
            return Ok(bundle);
        }
        self.find_bundle(name)
    }

    /// The tool named by `reference`; problems met on the way are returned beside it.
    pub fn resolve_tool(&self, reference: &str, pick: Pick) -> Result<(ToolEntry, Vec<Problem>)> {
        let parsed = ToolRef::parse(reference)?;
        let mut problems = Vec::new();
        if let Some(id) = parsed.id
            && let Some(found) = self.find_tool_by_id(id, &mut problems)?
        {
            return Ok((found, problems));
        }
        let searched: Vec<BundleEntry> = match &parsed.bundle {
            Some(name) => vec![self.named_bundle(name)?],
            None => {
                let mut bundles = self.bundles()?.items;
                bundles.retain(|b| !b.is_deleted());
                bundles
            }
        };
        let mut candidates: Vec<ToolEntry> = searched
            .iter()
            .flat_map(|b| self.tool_versions(b, &parsed.slug, &mut problems))
            .filter(|t| parsed.version.as_ref().is_none_or(|v| &t.tool.version == v))
            .collect();
        let mut in_bundles: Vec<&str> = candidates.iter().map(|t| t.bundle_slug.as_str()).collect();
        in_bundles.dedup();
        if in_bundles.len() > 1 {
            let mut names: Vec<String> = in_bundles
                .iter()
                .map(|b| format!("{b}/{}", parsed.slug))
                .collect();
            names.dedup();
            return Err(Error::Ambiguous {
                what: "tool",
                name: reference.to_owned(),
                candidates: names,
                hint: "name the bundle too: bundle/slug[@version]".to_owned(),
            });
        }
        if candidates.len() > 1 && pick == Pick::Exact {
            return Err(Error::Ambiguous {
                what: "tool version",
                name: reference.to_owned(),
                candidates: candidates.iter().map(ToolEntry::reference).collect(),
                hint: "add @version to say which one".to_owned(),
            });
        }
        // Newest enabled version first, then newest; ties broken by toolID (time-ordered).
        candidates.sort_by_key(|t| (t.is_enabled, t.tool.created_at, t.tool.tool_id));
        match candidates.pop() {
            Some(found) => Ok((found, problems)),
            // Not found, but a file where it would be could not be read: say so.
            None if !problems.is_empty() => Err(Error::Unreadable {
                what: "tool",
                name: reference.to_owned(),
                problems,
            }),
            None => match self.exported_name(&parsed) {
                // An exported provider name (`weather__search`) stands for a bundle's slug.
                Some(reference) => self.resolve_tool(&reference, pick),
                None => Err(Error::NotFound {
                    what: "tool",
                    name: reference.to_owned(),
                    hint: Some(
                        "see the tools with `toolctl tool list --include-disabled`".to_owned(),
                    ),
                }),
            },
        }
    }

    /// `bundle/slug` for a bare name that is a tool's exported provider name
    /// (see [`crate::provider::names`]), when it is one.
    fn exported_name(&self, parsed: &ToolRef) -> Option<String> {
        if parsed.bundle.is_some() || parsed.version.is_some() {
            return None;
        }
        let name = &parsed.slug;
        // A catalog not on disk holds only the built-ins, whose slugs are their names; and a
        // lookup must not leave an index behind in a catalog a refused write did not create.
        if !self.exists() || !crate::provider::names::is_valid(name) {
            return None;
        }
        let lineup = crate::index::Index::read(self, &mut |_, _| {}, |index| {
            crate::provider::lineup::Lineup::read(index, false)
        })
        .ok()?;
        let (bundle, slug) = lineup.names.resolve(name)?;
        // A bare slug that is its own exported name was not found above: no loop.
        (slug != name.as_str()).then(|| format!("{bundle}/{slug}"))
    }

    /// The tool with this toolID, if any (IDs are not in folder names).
    pub fn find_tool_by_id(
        &self,
        id: Uuid,
        problems: &mut Vec<Problem>,
    ) -> Result<Option<ToolEntry>> {
        // The index (brought up to date first) knows every toolID; the file it names is read
        // and checked. Only when the index cannot answer are all files read.
        let id_text = id.to_string();
        if let Ok(found) = crate::index::Index::read(self, &mut |_, _| {}, |index| {
            index.path_of_tool_id(&id_text)
        }) {
            match found.map(|path| self.tool_at(&path)) {
                None => return Ok(None),
                Some(Ok(Some(entry))) if entry.tool.tool_id == id => return Ok(Some(entry)),
                Some(_) => {}
            }
        }
        let bundles = self.bundles()?.items;
        for bundle in &bundles {
            if let Some(found) = self
                .bundle_tools(bundle, problems)
                .into_iter()
                .find(|t| t.tool.tool_id == id)
            {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse() {
        let r = ToolRef::parse("weather/forecast@v2").unwrap();
        assert_eq!(r.bundle.as_deref(), Some("weather"));
        assert_eq!(r.slug, "forecast");
        assert_eq!(r.version.as_deref(), Some("v2"));
        assert_eq!(r.id, None);
        let r = ToolRef::parse("forecast").unwrap();
        assert_eq!((r.bundle, r.version), (None, None));
        let r = ToolRef::parse("0190a000-0000-7000-8000-000000000001").unwrap();
        assert!(r.id.is_some());
        for bad in ["", "/x", "b/", "x@", "b/@v"] {
            assert!(ToolRef::parse(bad).is_err(), "{bad}");
        }
    }
}
