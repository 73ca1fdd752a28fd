//! Finding bundles by the names users type, and the parts of a tool reference.
//!
//! Resolving a tool reference to one file is `index::resolve` (it asks the index for toolIDs
//! and exported names). A bundle is named by slug or bundleID. A tool is named `[bundle/]slug[@version]` (bundle by
//! slug or ID) or by its toolID. Without `@version` the newest enabled version (by
//! `createdAt`) is meant, or the newest version when none is enabled. Commands that change or
//! remove one version ask for [`VersionChoice::Exact`]: when a slug has several versions they must be
//! told which, rather than have toolctl guess. A name that matches tools in several bundles is
//! an error listing them.

use super::error::{Error, Hint, Result, Violation};
use super::{BundleEntry, Catalog};
use uuid::Uuid;

/// How to choose among several versions when the reference names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionChoice {
    /// The newest enabled version, else the newest.
    Default,
    /// Exactly one version must match; several is an error listing them.
    Exact,
}

/// The one rule of [`VersionChoice::Default`], "which version stands for a slug": of a slug's
/// versions, the one with the greatest key — the newest enabled version, else the newest
/// (`createdAt`), ties broken by toolID (time-ordered), then by the file's path relative to the
/// catalog ([`ToolEntry::catalog_path`](super::ToolEntry::catalog_path): the first in byte
/// order wins, as SQLite's `BINARY` collation orders it). The path settles copies of one file
/// (same toolID and `createdAt`) the same way whatever order they were read or indexed in, and
/// it is the order `index::path_of_tool_id` takes the first copy of a toolID in. Resolving a
/// reference (`index::resolve`) and the default tools of export and pick
/// (`index::default_tools`) sort by it; the SQL of `index::default_version`
/// (`IS_DEFAULT_VERSION`) says the same, and a test there holds them together on generated
/// catalogs.
pub fn default_version_key<T: Ord, I: Ord, P: Ord>(
    is_enabled: bool,
    created: T,
    tool_id: I,
    path: P,
) -> (bool, T, I, std::cmp::Reverse<P>) {
    (is_enabled, created, tool_id, std::cmp::Reverse(path))
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
pub(crate) fn match_bundle<'a>(bundles: &'a [BundleEntry], name: &str) -> Result<&'a BundleEntry> {
    let by_id = Uuid::try_parse(name).ok();
    bundles
        .iter()
        .find(|b| b.bundle.slug == name || Some(b.bundle.bundle_id) == by_id)
        .ok_or_else(|| Error::NotFound {
            what: "bundle",
            name: name.to_owned(),
            // The command line adds where to see them.
            hint: None,
        })
}

/// The hint of a bundle not found while `count` bundle folders cannot be read, the first at
/// `path` for `why`: the bundle asked for may be one of them.
pub fn unreadable_bundle_hint(path: &std::path::Path, why: &str, count: usize) -> Hint {
    let more = match count {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Hint::Text(
        format!(
            "it may be a bundle toolctl cannot read: {}: {why}{more}",
            path.display()
        )
        .into(),
    )
}

impl Catalog {
    /// The bundle named `name` (slug or ID), soft-deleted ones included.
    pub fn find_bundle(&self, name: &str) -> Result<BundleEntry> {
        let scan = self.bundles()?;
        match match_bundle(&scan.items, name) {
            Ok(bundle) => Ok(bundle.clone()),
            // A bundle whose bundle.json cannot be read (a FIFO, a link out, not JSON) may be
            // the one asked for: say so, rather than only that there is none.
            Err(Error::NotFound { what, name, .. }) if !scan.problems.is_empty() => {
                let first = &scan.problems[0];
                Err(Error::NotFound {
                    what,
                    name,
                    hint: Some(unreadable_bundle_hint(
                        &first.path,
                        &first.message,
                        scan.problems.len(),
                    )),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// The bundle `name` names, reading no other bundle when the name says which folder it
    /// is: the built-in bundle (its slug is reserved), or a bundleID (the folder's name).
    /// A slug needs every `bundle.json` read.
    pub(crate) fn named_bundle(&self, name: &str) -> Result<BundleEntry> {
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
