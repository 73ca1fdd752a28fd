//! The tools a model can be shown: one version per tool slug of a live bundle, each with its
//! exported name. `export` and `pick` both start here, from the index's rows, so they agree on
//! which version stands for a slug (SPEC §2: the enabled version with the newest `createdAt`,
//! as `invoke bundle/slug` means) and on every name. `pick` and `attach`, which show a few tools,
//! read only those from the index ([`DefaultTool::named`]), by the same rules.

use crate::catalog::default_version_key;
use crate::catalog::names::{self, NameMap};
use crate::index::{self, Index, ToolRow};
use std::collections::HashMap;

/// One tool slug of a bundle, at the version that stands for it.
#[derive(Debug, Clone)]
pub struct DefaultTool {
    pub row: ToolRow,
    /// The exported name.
    pub name: String,
}

impl DefaultTool {
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

    /// The members of `rows` (versions that stand for their slugs), with their exported names.
    pub fn named(index: &Index, rows: Vec<ToolRow>) -> index::Result<Vec<Self>> {
        let keys: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.bundle_slug.as_str(), r.slug.as_str()))
            .collect();
        let names = names_of(index, &keys)?;
        Ok(rows
            .into_iter()
            .zip(names)
            .map(|(row, name)| Self { row, name })
            .collect())
    }
}

/// The exported names of the tool slugs `keys` (bundle slug, tool slug) of live bundles, as
/// the whole catalog's [`NameMap`] gives them, from the tools near them in the index: the
/// slugs and names they could collide with ([`NameMap::local_name`]). Only when one of them
/// does collide is the whole map built.
pub fn names_of(index: &Index, keys: &[(&str, &str)]) -> index::Result<Vec<String>> {
    let slugs: Vec<&str> = keys.iter().map(|(_, slug)| *slug).collect();
    let mut bundles_per_slug = index.bundles_per_slug(&slugs)?;
    let shared =
        |counts: &HashMap<String, usize>, slug: &str| counts.get(slug).is_some_and(|n| *n > 1);
    let wanted: Vec<String> = keys
        .iter()
        .map(|(bundle, slug)| names::wanted(bundle, slug, shared(&bundles_per_slug, slug)))
        .collect();
    let near = index.slugs_near_names(&wanted)?;
    let unknown: Vec<&str> = near
        .iter()
        .map(|(_, slug)| slug.as_str())
        .filter(|slug| !bundles_per_slug.contains_key(*slug))
        .collect();
    bundles_per_slug.extend(index.bundles_per_slug(&unknown)?);
    let local: Option<Vec<String>> = keys
        .iter()
        .map(|key| {
            NameMap::local_name(
                *key,
                near.iter().map(|(b, s)| (b.as_str(), s.as_str())),
                |slug| shared(&bundles_per_slug, slug),
            )
        })
        .collect();
    if let Some(names) = local {
        return Ok(names);
    }
    let all = index.all_slugs()?;
    let map = NameMap::build(all.iter().map(|(b, s)| (b.as_str(), s.as_str())));
    Ok(keys
        .iter()
        .map(|(bundle, slug)| map.name(bundle, slug).unwrap_or(slug).to_owned())
        .collect())
}

/// The live catalog as providers see it.
#[derive(Debug, Clone, Default)]
pub struct DefaultTools {
    pub names: NameMap,
    /// In registration order (`createdAt`, then toolID).
    pub members: Vec<DefaultTool>,
}

impl DefaultTools {
    /// Read the default tools from the index; `with_text` also reads each tool's words.
    pub fn read(index: &Index, with_text: bool) -> index::Result<Self> {
        Ok(Self::from_rows(index.tool_rows(with_text)?))
    }

    /// The default tools of the bundles in the folders `bundle_dirs` alone (in registration
    /// order), named as in the whole catalog: only those bundles' rows are read, and the
    /// names of the tools near theirs ([`names_of`]).
    pub fn read_in(index: &Index, bundle_dirs: &[String]) -> index::Result<Vec<DefaultTool>> {
        let rows = defaults(index.tool_rows_in(bundle_dirs, false)?);
        DefaultTool::named(index, rows)
    }

    /// The default tools of `rows` (in registration order).
    pub fn from_rows(rows: Vec<ToolRow>) -> Self {
        let names = NameMap::build(
            rows.iter()
                .map(|r| (r.bundle_slug.as_str(), r.slug.as_str())),
        );
        let members = defaults(rows)
            .into_iter()
            .map(|row| DefaultTool {
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

/// The rows of `rows` (in registration order) that stand for their slugs, in the same order.
fn defaults(rows: Vec<ToolRow>) -> Vec<ToolRow> {
    // The version that stands for each slug ([`default_version_key`]; no two rows have
    // equal keys: their paths differ).
    let mut best: HashMap<(&str, &str), usize> = HashMap::new();
    fn key(r: &ToolRow) -> (bool, i64, &str, std::cmp::Reverse<&str>) {
        default_version_key(r.is_enabled, r.created_ns, &r.tool_id, &r.path)
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
    chosen.into_iter().filter_map(|i| rows[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::ops::BundleInput;
    use serde_json::json;
    use std::collections::HashSet;

    fn bundle(catalog: &mut Catalog, slug: &str) {
        let input = BundleInput::Fields {
            id: None,
            slug: slug.to_owned(),
            display_name: None,
            description: None,
            enabled: true,
        };
        catalog.put_bundle(input).unwrap();
    }

    /// Version `version` of `slug` in `bundle`, created `second` seconds into 2026.
    fn tool(catalog: &mut Catalog, bundle: &str, slug: &str, version: &str, second: u32) {
        let doc = json!({
            "slug": slug, "version": version, "type": "native", "impl": { "func": "now" },
            "argSchema": { "type": "object" }, "safe": second.is_multiple_of(2),
            "createdAt": format!("2026-01-01T00:00:{second:02}Z"),
        });
        match catalog.put_tool(doc.clone(), "inline", Some(bundle)) {
            Ok(_) => {}
            // A slug whose exported name another tool wants (`validate`'s name-collision),
            // which put refuses: it comes as `git pull` brings it, put under a stand-in slug
            // and moved by hand.
            Err(crate::catalog::Error::Conflict { .. }) => {
                let mut stand_in = doc;
                stand_in["slug"] = json!("stand-in");
                let entry = catalog.put_tool(stand_in, "inline", Some(bundle)).unwrap();
                let path = entry.path.unwrap();
                let stand_in_dir = path.parent().unwrap().parent().unwrap();
                let dir = stand_in_dir.parent().unwrap().join(slug).join(version);
                let mut moved: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                moved["slug"] = json!(slug);
                std::fs::create_dir_all(&dir).unwrap();
                crate::catalog::store::write_json(&dir.join(crate::catalog::TOOL_FILE), &moved)
                    .unwrap();
                std::fs::remove_dir_all(stand_in_dir).unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// A copy of `bundle/slug@version` as version `copy`: another file with the same toolID and
    /// `createdAt`, as a person copying a version folder makes one.
    fn copy_tool(catalog: &Catalog, bundle: &str, slug: &str, version: &str, copy: &str) {
        let reference = format!("{bundle}/{slug}@{version}");
        let (entry, _) = catalog
            .resolve_tool(&reference, VersionChoice::Exact)
            .unwrap();
        let path = entry.path.unwrap();
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        doc["version"] = json!(copy);
        let dir = path.parent().unwrap().parent().unwrap().join(copy);
        std::fs::create_dir_all(&dir).unwrap();
        crate::catalog::store::write_json(&dir.join(crate::catalog::TOOL_FILE), &doc).unwrap();
    }

    /// Versions, disabled tools and bundles, a soft-deleted bundle, a slug in two bundles and
    /// names that collide: what the default tools's rules are about.
    fn catalog() -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        Catalog::init(dir.path()).unwrap();
        let mut catalog = Catalog::open(dir.path()).unwrap();
        for slug in ["alpha", "beta", "gamma", "delta"] {
            bundle(&mut catalog, slug);
        }
        tool(&mut catalog, "alpha", "forecast", "v1", 1);
        tool(&mut catalog, "alpha", "forecast", "v2", 4);
        tool(&mut catalog, "alpha", "forecast", "v3", 9);
        catalog
            .set_tool_enabled("alpha/forecast@v3", false)
            .unwrap();
        tool(&mut catalog, "alpha", "search", "v1", 2);
        tool(&mut catalog, "alpha", "météo", "v1", 3);
        tool(&mut catalog, "beta", "search", "v1", 6);
        tool(&mut catalog, "beta", "meteo", "v1", 8);
        tool(&mut catalog, "beta", "only-beta", "v1", 5);
        catalog
            .set_tool_enabled("beta/only-beta@v1", false)
            .unwrap();
        tool(&mut catalog, "gamma", "gamma-tool", "v1", 10);
        catalog.set_bundle_enabled("gamma", false).unwrap();
        tool(&mut catalog, "delta", "forecast", "v1", 12);
        catalog.delete_bundle("delta").unwrap();
        (dir, catalog)
    }

    #[test]
    fn the_index_read_a_few_tools_at_a_time_agrees_with_the_whole_lineup() {
        let (_dir, catalog) = catalog();
        let (index, _) = Index::open(&catalog, &mut |_, _| {}).unwrap();
        let lineup = DefaultTools::read(&index, false).unwrap();
        let all: Vec<i64> = index
            .tool_rows(false)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        let members: HashSet<i64> = lineup.members.iter().map(|m| m.row.id).collect();
        assert_eq!(index.default_among(&all).unwrap(), members);

        for member in &lineup.members {
            let row = &member.row;
            let standing = index
                .default_version_of(&row.bundle_slug, &row.slug)
                .unwrap();
            assert_eq!(
                standing.map(|r| r.id),
                Some(row.id),
                "{}",
                member.reference()
            );
            let standing = index
                .default_version_in_folder(&row.bundle_dir, &row.slug)
                .unwrap();
            assert_eq!(
                standing.map(|r| r.id),
                Some(row.id),
                "{}",
                member.reference()
            );
            let key = (row.bundle_slug.as_str(), row.slug.as_str());
            assert_eq!(names_of(&index, &[key]).unwrap(), [member.name.as_str()]);
        }
        let rows = index.rows_by_id(&all, false).unwrap();
        let named: Vec<(i64, String)> = DefaultTool::named(&index, rows)
            .unwrap()
            .into_iter()
            .filter(|m| members.contains(&m.row.id))
            .map(|m| (m.row.id, m.name))
            .collect();
        let expected: Vec<(i64, String)> = lineup
            .members
            .iter()
            .map(|m| (m.row.id, m.name.clone()))
            .collect();
        let sorted = |mut v: Vec<(i64, String)>| {
            v.sort();
            v
        };
        assert_eq!(sorted(named), sorted(expected));
        assert!(
            lineup.members.iter().any(|m| m.name == "alpha__search")
                && lineup.members.iter().any(|m| m.name.starts_with("meteo_")),
            "the catalog has names of every rule"
        );

        for allow_unsafe in [false, true] {
            let usable: Vec<i64> = lineup
                .members
                .iter()
                .filter(|m| m.is_usable() && (allow_unsafe || m.row.safe))
                .map(|m| m.row.id)
                .collect();
            let first = index
                .first_usable(usable.len() + 1, allow_unsafe, &HashSet::new())
                .unwrap();
            assert_eq!(first.iter().map(|r| r.id).collect::<Vec<_>>(), usable);
            assert_eq!(index.count_usable(allow_unsafe).unwrap(), usable.len());
        }
    }

    use crate::catalog::VersionChoice;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// The rule "which version stands for a slug" is one Rust function
        /// ([`default_version_key`]) and its SQL mirror (`IS_DEFAULT_VERSION`): on generated
        /// catalogs — versions enabled or not, equal `createdAt`s, copies of a file (same
        /// toolID and `createdAt`) whose path sorts before or after the original's, a slug in
        /// several bundles, disabled bundles — the SQL, the default tools and resolving
        /// `bundle/slug` all name the same file.
        #[test]
        fn the_sql_and_the_rust_rule_agree_on_generated_catalogs(
            tools in prop::collection::vec(
                (0..3usize, 0..3usize, any::<bool>(), 0..4u32, prop::option::of(any::<bool>())),
                1..10,
            ),
            disabled_bundle in prop::option::of(0..3usize),
        ) {
            let dir = tempfile::tempdir().unwrap();
            Catalog::init(dir.path()).unwrap();
            let mut catalog = Catalog::open(dir.path()).unwrap();
            let bundles = ["alpha", "beta", "gamma"];
            for slug in bundles {
                bundle(&mut catalog, slug);
            }
            for (i, (b, slug, enabled, second, copy)) in tools.iter().enumerate() {
                let slug = format!("tool-{slug}");
                tool(&mut catalog, bundles[*b], &slug, &format!("v{i}"), *second);
                if !enabled {
                    let reference = format!("{}/{slug}@v{i}", bundles[*b]);
                    catalog.set_tool_enabled(&reference, false).unwrap();
                }
                // A copy whose path sorts after the original's (`z…`) or before it (`a…`).
                if let Some(after) = copy {
                    let name = format!("{}v{i}", if *after { "z" } else { "a" });
                    copy_tool(&catalog, bundles[*b], &slug, &format!("v{i}"), &name);
                }
            }
            if let Some(b) = disabled_bundle {
                catalog.set_bundle_enabled(bundles[b], false).unwrap();
            }
            let (index, _) = Index::open(&catalog, &mut |_, _| {}).unwrap();
            let defaults = DefaultTools::read(&index, false).unwrap();
            let all: Vec<i64> = index.tool_rows(false).unwrap().iter().map(|r| r.id).collect();
            let members: HashSet<i64> = defaults.members.iter().map(|m| m.row.id).collect();
            prop_assert_eq!(index.default_among(&all).unwrap(), members);
            let slugs: HashSet<(usize, usize)> = tools.iter().map(|t| (t.0, t.1)).collect();
            prop_assert_eq!(
                index.tool_rows(false).unwrap().iter().filter(|r| bundles.contains(&r.bundle_slug.as_str())).count(),
                tools.len() + tools.iter().filter(|t| t.4.is_some()).count(),
                "every copy is indexed"
            );
            let ours = defaults.members.iter().filter(|m| bundles.contains(&m.row.bundle_slug.as_str()));
            prop_assert_eq!(ours.count(), slugs.len());
            for member in &defaults.members {
                let row = &member.row;
                let sql = index.default_version_of(&row.bundle_slug, &row.slug).unwrap();
                prop_assert_eq!(sql.map(|r| r.id), Some(row.id));
                let reference = format!("{}/{}", row.bundle_slug, row.slug);
                let (resolved, _) = catalog
                    .resolve_tool(&reference, VersionChoice::Default)
                    .unwrap();
                prop_assert_eq!(resolved.catalog_path(catalog.root()), row.path.clone());
            }
        }
    }
}
