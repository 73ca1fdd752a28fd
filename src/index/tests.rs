//! The index answers as the files do.

use super::Index;
use crate::catalog::{BundleFilter, Catalog, ToolFilter};
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == crate::catalog::STATE_DIR {
            // An index left by someone who ran toolctl on the fixture.
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn fixture() -> (tempfile::TempDir, Catalog) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalog"),
        dir.path(),
    );
    let catalog = Catalog::open(dir.path()).unwrap();
    (dir, catalog)
}

fn open(catalog: &Catalog) -> Index {
    Index::open(catalog, &mut |_, _| {}).unwrap().0
}

/// Walk every page of both implementations and compare references and tokens.
fn assert_same_tool_pages(catalog: &Catalog, index: &Index, filter: &ToolFilter, size: usize) {
    let (mut files_token, mut index_token) = (None::<String>, None::<String>);
    loop {
        let from_files = catalog
            .list_tools(filter, size, files_token.as_deref())
            .unwrap();
        let from_index = index
            .list_tools(catalog, filter, size, index_token.as_deref())
            .unwrap();
        let refs = |page: &crate::catalog::Page<crate::catalog::ToolEntry>| {
            page.items
                .iter()
                .map(|t| (t.reference(), t.status()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            refs(&from_index),
            refs(&from_files),
            "{filter:?} size {size}"
        );
        assert_eq!(
            from_index.next_page_token, from_files.next_page_token,
            "{filter:?}"
        );
        if from_files.next_page_token.is_none() {
            break;
        }
        // Tokens are interchangeable: continue each walk with the other's token.
        files_token = from_index.next_page_token;
        index_token = from_files.next_page_token;
    }
}

fn assert_same_bundle_pages(catalog: &Catalog, index: &Index, filter: &BundleFilter, size: usize) {
    let mut token = None::<String>;
    loop {
        let from_files = catalog
            .list_bundles(filter, size, token.as_deref())
            .unwrap();
        let from_index = index
            .list_bundles(catalog, filter, size, token.as_deref())
            .unwrap();
        let rows = |page: &crate::catalog::Page<(crate::catalog::BundleEntry, usize)>| {
            page.items
                .iter()
                .map(|(b, n)| (b.bundle.slug.clone(), *n))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            rows(&from_index),
            rows(&from_files),
            "{filter:?} size {size}"
        );
        assert_eq!(from_index.next_page_token, from_files.next_page_token);
        token = from_files.next_page_token;
        if token.is_none() {
            break;
        }
    }
}

fn tool_filters() -> Vec<ToolFilter> {
    let mut filters = vec![ToolFilter::default()];
    filters.push(ToolFilter {
        include_disabled: true,
        ..ToolFilter::default()
    });
    filters.push(ToolFilter {
        include_disabled: true,
        include_deleted: true,
        ..ToolFilter::default()
    });
    filters.push(ToolFilter {
        bundles: vec!["weather".into(), "builtin".into()],
        ..ToolFilter::default()
    });
    filters.push(ToolFilter {
        tags: vec!["weather".into()],
        include_disabled: true,
        ..ToolFilter::default()
    });
    filters.push(ToolFilter {
        bundles: vec!["finance".into()],
        include_disabled: true,
        ..ToolFilter::default()
    });
    filters
}

#[test]
fn lists_from_the_index_equal_lists_from_the_files() {
    let (_dir, mut catalog) = fixture();
    let check = |catalog: &Catalog| {
        let index = open(catalog);
        for filter in tool_filters() {
            for size in [4, 50] {
                assert_same_tool_pages(catalog, &index, &filter, size);
            }
        }
        for include_disabled in [false, true] {
            for include_deleted in [false, true] {
                let filter = BundleFilter {
                    bundles: vec![],
                    include_disabled,
                    include_deleted,
                };
                for size in [2, 50] {
                    assert_same_bundle_pages(catalog, &index, &filter, size);
                }
            }
        }
    };
    check(&catalog);
    // After changes through toolctl and behind its back.
    catalog
        .set_tool_enabled("weather/forecast@v1", false)
        .unwrap();
    catalog.delete_bundle("calendar").unwrap();
    catalog.set_tool_enabled("builtin/exec", true).unwrap();
    let (github, _) = catalog
        .resolve_tool("github/get-repo", crate::catalog::VersionChoice::Exact)
        .unwrap();
    std::fs::remove_dir_all(github.path.unwrap().parent().unwrap()).unwrap();
    let catalog = Catalog::open(catalog.root()).unwrap();
    check(&catalog);
}

/// A full build leaves the lookup indexes out while it writes (see `LOOKUP_INDEXES`): once it
/// is done, the index holds what a check into an index made beforehand writes, indexes and all.
#[test]
fn a_full_build_writes_what_a_check_does() {
    let (_dir, catalog) = fixture();
    let built = open(&catalog);
    let elsewhere = tempfile::tempdir().unwrap();
    let mut checked = Index::open_file(&elsewhere.path().join("index.sqlite")).unwrap();
    assert!(!checked.building);
    checked.sync(&catalog, &mut |_, _| {}).unwrap();

    let rows = |index: &Index, sql: &str| -> Vec<Vec<Option<String>>> {
        let mut statement = index.conn.prepare(sql).unwrap();
        let columns = statement.column_count();
        statement
            .query_map([], |row| {
                (0..columns)
                    .map(|i| {
                        Ok(match row.get_ref(i)? {
                            rusqlite::types::ValueRef::Null => None,
                            value => Some(format!("{value:?}")),
                        })
                    })
                    .collect()
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    for sql in [
        // Stamps left out: they are racy or not by when the file was stamped.
        "SELECT path, bundle_dir, slug_dir, problem, tool_id, version, tags, is_enabled,
                unavailable, modified_ns, created_ns, safe, bare_name, qualified_name
         FROM tool ORDER BY path",
        "SELECT t.path, f.name, f.tags, f.args, f.description, f.bundle
         FROM tool t JOIN tool_fts f ON f.rowid = t.id ORDER BY t.path",
        "SELECT dir, bundle_id, slug, is_enabled, is_deleted, problem FROM bundle ORDER BY dir",
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name",
    ] {
        let (from_build, from_check) = (rows(&built, sql), rows(&checked, sql));
        assert!(from_build.len() > 5, "{sql}");
        assert_eq!(from_build, from_check, "{sql}");
    }
    for (name, _) in super::LOOKUP_INDEXES {
        let sql =
            format!("SELECT name FROM sqlite_master WHERE type = 'index' AND name = '{name}'");
        assert_eq!(rows(&built, &sql).len(), 1, "{name}");
    }
}
