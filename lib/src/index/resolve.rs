//! Resolving a tool reference (`[bundle/]slug[@version]`, a toolID, or an exported provider
//! name) to one tool file, with the index's help: it knows every toolID and every exported
//! name, so neither needs the whole catalog read. The rules of the reference itself are in
//! [`catalog::resolve`](crate::catalog::resolve).

use super::Index;
use super::default_tools::DefaultTools;
use crate::catalog::error::{Error, Result};
use crate::catalog::{
    BundleEntry, Catalog, Problem, ToolEntry, ToolRef, VersionChoice, default_version_key, names,
};
use uuid::Uuid;

impl Catalog {
    /// The tool named by `reference`; problems met on the way are returned beside it.
    pub fn resolve_tool(
        &self,
        reference: &str,
        choice: VersionChoice,
    ) -> Result<(ToolEntry, Vec<Problem>)> {
        let parsed = ToolRef::parse(reference)?;
        let mut problems = Vec::new();
        if let Some(id) = parsed.id
            && let Some(found) = self.find_tool_by_id(id, &mut problems)?
        {
            return Ok((found, problems));
        }
        let searched: Vec<BundleEntry> = match &parsed.bundle {
            Some(name) => vec![self.bundle_by_name(name)?],
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
        if candidates.len() > 1 && choice == VersionChoice::Exact {
            return Err(Error::Ambiguous {
                what: "tool version",
                name: reference.to_owned(),
                candidates: candidates.iter().map(ToolEntry::reference).collect(),
                hint: "add @version to say which one".to_owned(),
            });
        }
        candidates.sort_by_cached_key(|t| {
            default_version_key(
                t.is_enabled,
                t.tool.created_at,
                t.tool.tool_id,
                t.catalog_path(self.root()),
            )
        });
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
                Some(reference) => self.resolve_tool(&reference, choice),
                None => Err(Error::NotFound {
                    what: "tool",
                    name: reference.to_owned(),
                    // The command line adds where to see them.
                    hint: None,
                }),
            },
        }
    }

    /// The bundle `name` names (slug or ID), soft-deleted ones included. A slug is looked up
    /// with the index's help ([`Index::bundle_dirs_named`]: only the bundle.json files changed
    /// since they were indexed are read) when that finds one bundle; otherwise, and for the
    /// built-in bundle and bundleIDs, as [`Catalog::named_bundle`] finds it.
    fn bundle_by_name(&self, name: &str) -> Result<BundleEntry> {
        let by_slug = name != crate::catalog::builtin::SLUG && Uuid::try_parse(name).is_err();
        if by_slug
            && let Some(index) = Index::open_unchecked(self)
            && let Some(dirs) = index.bundle_dirs_named(self, name)
            && let [dir] = dirs.as_slice()
            && let Ok(Some(bundle)) = self.load_bundle(&self.bundles_dir().join(dir), dir)
            && bundle.bundle.slug == name
        {
            return Ok(bundle);
        }
        self.named_bundle(name)
    }

    /// `bundle/slug` for a bare name that is a tool's exported provider name
    /// (see [`crate::catalog::names`]), when it is one.
    fn exported_name(&self, parsed: &ToolRef) -> Option<String> {
        if parsed.bundle.is_some() || parsed.version.is_some() {
            return None;
        }
        let name = &parsed.slug;
        // A catalog not on disk holds only the built-ins, whose slugs are their names; and a
        // lookup must not leave an index behind in a catalog a refused write did not create.
        if !self.exists() || !names::is_valid(name) {
            return None;
        }
        let lineup = Index::read(self, &mut |_, _| {}, |index| {
            DefaultTools::read(index, false)
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
        if let Ok(found) = Index::read(self, &mut |_, _| {}, |index| {
            index.path_of_tool_id(&id_text)
        }) {
            match found.map(|path| self.tool_at(&path)) {
                None => return Ok(None),
                Some(Ok(Some(entry))) if entry.tool.tool_id == id => return Ok(Some(entry)),
                Some(_) => {}
            }
        }
        self.find_tool_by_id_in_files(id, problems)
    }

    /// [`Self::find_tool_by_id`] without the index: every file is read, and of copies of one
    /// tool (a bundle or version folder copied by hand) the first path in byte order is the
    /// one found, as the index's `path_of_tool_id` answers, whatever order the folders are
    /// listed in.
    pub(crate) fn find_tool_by_id_in_files(
        &self,
        id: Uuid,
        problems: &mut Vec<Problem>,
    ) -> Result<Option<ToolEntry>> {
        let bundles = self.bundles()?.items;
        Ok(bundles
            .iter()
            .flat_map(|bundle| self.bundle_tools(bundle, problems))
            .filter(|t| t.tool.tool_id == id)
            // Byte order of the paths, as SQL's `ORDER BY path` (a `Path` compares by parts).
            .min_by(|a, b| {
                let (a, b) = (a.path.as_deref(), b.path.as_deref());
                a.map(std::path::Path::as_os_str)
                    .cmp(&b.map(std::path::Path::as_os_str))
            }))
    }
}
