//! The index answers as the files do.

use super::Index;
use crate::catalog::error::Result;
use crate::catalog::{
    BundleEntry, BundleFilter, Catalog, Page, Scan, TOOL_FILE, TOOLS_DIR, ToolEntry, ToolFilter,
    builtin, list_dir_names, page,
};
use std::path::Path;
use uuid::Uuid;

/// One page of `tool list` read from the files: the oracle the index's list is checked
/// against.
fn files_list_tools(
    catalog: &Catalog,
    filter: &ToolFilter,
    size: usize,
    token: Option<&str>,
) -> Result<Page<ToolEntry>> {
    let size = page::check_size(size)?;
    let fingerprint = page::fingerprint(filter);
    let after = token.map(|t| page::decode(t, &fingerprint)).transpose()?;
    let Scan {
        items: bundles,
        mut problems,
    } = catalog.bundles()?;
    let wanted = select_bundles(&bundles, &filter.bundles)?;
    let mut tools = Vec::new();
    for bundle in bundles.iter().filter(|b| {
        wanted
            .as_ref()
            .is_none_or(|w| w.contains(&b.bundle.bundle_id))
    }) {
        if bundle.is_deleted() && !filter.include_deleted {
            continue;
        }
        tools.extend(
            catalog
                .bundle_tools(bundle, &mut problems)
                .into_iter()
                .filter(|t| filter.include_disabled || (t.is_enabled && t.bundle_enabled))
                .filter(|t| filter.tags.iter().all(|tag| t.tool.tags.contains(tag))),
        );
    }
    tools.sort_by(|a, b| a.order().cmp(&b.order()));
    let (items, next_page_token) =
        page::paginate(tools, sort_key, size, after.as_deref(), &fingerprint);
    Ok(Page {
        items,
        next_page_token,
        problems,
    })
}

/// One page of `bundle list` read from the files (the oracle), with each bundle's number of tools.
fn files_list_bundles(
    catalog: &Catalog,
    filter: &BundleFilter,
    size: usize,
    token: Option<&str>,
) -> Result<Page<(BundleEntry, usize)>> {
    let size = page::check_size(size)?;
    let fingerprint = page::fingerprint(filter);
    let after = token.map(|t| page::decode(t, &fingerprint)).transpose()?;
    let Scan {
        items: bundles,
        problems,
    } = catalog.bundles()?;
    let wanted = select_bundles(&bundles, &filter.bundles)?;
    let mut rows: Vec<(BundleEntry, usize)> = bundles
        .into_iter()
        .filter(|b| {
            wanted
                .as_ref()
                .is_none_or(|w| w.contains(&b.bundle.bundle_id))
        })
        .filter(|b| filter.include_deleted || !b.is_deleted())
        .filter(|b| filter.include_disabled || b.is_enabled)
        .map(|b| {
            let count = count_tools(catalog, &b);
            (b, count)
        })
        .collect();
    let key = |row: &(BundleEntry, usize)| vec![row.0.bundle.slug.clone()];
    rows.sort_by_key(key);
    let (items, next_page_token) = page::paginate(rows, key, size, after.as_deref(), &fingerprint);
    Ok(Page {
        items,
        next_page_token,
        problems,
    })
}

/// How many tool versions a bundle holds (counted from folders, without reading files).
fn count_tools(catalog: &Catalog, bundle: &BundleEntry) -> usize {
    match &bundle.dir {
        None => builtin::tools().len(),
        Some(dir) => catalog
            .tool_slugs(bundle)
            .iter()
            .map(|slug| {
                let slug_dir = dir.join(TOOLS_DIR).join(slug);
                list_dir_names(&slug_dir)
                    .iter()
                    .filter(|v| slug_dir.join(v).join(TOOL_FILE).is_file())
                    .count()
            })
            .sum(),
    }
}

/// The IDs of the bundles named (by slug or ID); `None` when no bundle is named.
fn select_bundles(bundles: &[BundleEntry], names: &[String]) -> Result<Option<Vec<Uuid>>> {
    if names.is_empty() {
        return Ok(None);
    }
    names
        .iter()
        .map(|name| crate::catalog::match_bundle(bundles, name).map(|b| b.bundle.bundle_id))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The sort key of tool lists, as page tokens carry it.
fn sort_key(tool: &ToolEntry) -> Vec<String> {
    vec![
        tool.bundle_slug.clone(),
        tool.tool.slug.clone(),
        tool.tool.version.clone(),
    ]
}

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
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalog"),
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
        let from_files = files_list_tools(catalog, filter, size, files_token.as_deref()).unwrap();
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
        let from_files = files_list_bundles(catalog, filter, size, token.as_deref()).unwrap();
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
        "SELECT t.path, f.name, f.tags, f.args, f.arg_text, f.arg_values, f.description, f.bundle
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

#[test]
fn copies_of_a_tool_are_found_by_id_at_the_first_path_with_or_without_the_index() {
    let (dir, catalog) = fixture();
    let bundles = catalog.bundles().unwrap().items;
    let bundle = bundles.iter().find(|b| !b.is_builtin()).unwrap();
    let tool = catalog.bundle_tools(bundle, &mut Vec::new()).remove(0);
    let from = bundle.dir.clone().unwrap();
    // Copies of the bundle made by hand, each given a new bundleID (its folder's name) but
    // keeping the tools' toolIDs; as many as it takes for the folder listed first not to be
    // the first in path order (the listing order is the file system's).
    let bundles_dir = dir.path().join("bundles");
    let first_listed = || {
        let entry = std::fs::read_dir(&bundles_dir).unwrap().next().unwrap();
        entry.unwrap().file_name().into_string().unwrap()
    };
    let mut ids = Vec::new();
    for n in 1..=32 {
        let id = format!("00000000-0000-7000-8000-{n:012}");
        let to = bundles_dir.join(&id);
        copy_dir(&from, &to);
        let mut files = vec![to.join(crate::catalog::BUNDLE_FILE)];
        files.extend(
            catalog
                .bundle_tools(bundle, &mut Vec::new())
                .iter()
                .map(|t| to.join(t.path.as_deref().unwrap().strip_prefix(&from).unwrap())),
        );
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let text = text.replace(&bundle.bundle.bundle_id.to_string(), &id);
            crate::catalog::store::write_atomic(&file, text.as_bytes()).unwrap();
        }
        ids.push(id);
        if ids.len() > 1 && first_listed() != ids[0] {
            break;
        }
    }
    assert_ne!(first_listed(), ids[0], "the listing is in path order here");
    let catalog = Catalog::open(dir.path()).unwrap();
    let relative = |entry: &ToolEntry| {
        let path = entry.path.as_deref().unwrap();
        path.strip_prefix(dir.path())
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let first = tool.path.as_deref().unwrap();
    let first = first.strip_prefix(&from).unwrap().to_string_lossy();
    let expected = format!("bundles/{}/{first}", ids[0]);
    let mut problems = Vec::new();
    let from_files = catalog
        .find_tool_by_id_in_files(tool.tool.tool_id, &mut problems)
        .unwrap()
        .unwrap();
    assert_eq!(problems, []);
    assert_eq!(relative(&from_files), expected);
    let with_index = catalog
        .find_tool_by_id(tool.tool.tool_id, &mut Vec::new())
        .unwrap()
        .unwrap();
    assert_eq!(relative(&with_index), expected);
}

#[test]
fn a_sentences_term_shares_add_up_to_each_tools_relevance() {
    let (_dir, catalog) = fixture();
    let index = open(&catalog);
    let words: Vec<String> = ["weather", "forecast", "for", "oslo", "tomorrow"]
        .iter()
        .map(|w| (*w).to_owned())
        .collect();
    let terms = index.index_terms(&words).unwrap();
    let relevance = index.relevance(&terms).unwrap();
    let shares = &relevance.shares;
    // Each word, then each pair of adjacent words.
    assert_eq!(shares.len(), 2 * terms.len() - 1);
    assert!(relevance.scores.len() > 1);
    for (id, score) in &relevance.scores {
        let each = shares.of(*id);
        assert_eq!(each.len(), shares.len());
        let sum: f64 = each.iter().sum();
        assert!((sum - score).abs() < 1e-9, "row {id}: {sum} vs {score}");
        assert!(each.iter().all(|s| *s >= 0.0));
    }
    // A tool that holds none of the words has no share.
    assert!(shares.of(i64::MAX).iter().all(|s| *s == 0.0));
}

/// Set the mtime of every bundle.json of `catalog` an hour back, as a catalog checked out a
/// while ago has them: their stamps are then not racy.
fn age_bundle_files(catalog: &Catalog) {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(catalog.bundles_dir()).unwrap() {
        let file = entry.unwrap().path().join(crate::catalog::BUNDLE_FILE);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }
}

#[test]
fn bundles_are_found_by_slug_from_the_index_and_the_bundle_files_changed_since() {
    let (_dir, catalog) = fixture();
    age_bundle_files(&catalog);
    let index = open(&catalog);
    let weather = index
        .bundle_dirs_named(&catalog, "weather")
        .expect("every bundle.json readable");
    assert_eq!(weather.len(), 1);
    assert_eq!(
        index.bundle_dirs_named(&catalog, "no-such-bundle"),
        Some(vec![])
    );
    // By bundleID and folder name too.
    assert_eq!(
        index.bundle_dirs_named(&catalog, &weather[0]),
        Some(weather.clone())
    );

    // A bundle.json written since is read again: its new slug counts, not the indexed one.
    let file = catalog
        .bundles_dir()
        .join(&weather[0])
        .join(crate::catalog::BUNDLE_FILE);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("\"weather\"", "\"forecast\"")).unwrap();
    assert_eq!(index.bundle_dirs_named(&catalog, "weather"), Some(vec![]));
    assert_eq!(
        index.bundle_dirs_named(&catalog, "forecast"),
        Some(weather.clone())
    );
    std::fs::write(&file, &text).unwrap();
    assert_eq!(
        index.bundle_dirs_named(&catalog, "weather"),
        Some(weather.clone())
    );

    // A folder the index has not seen is read too: an empty one is no bundle; one whose
    // bundle.json cannot be read leaves the answer to a read of every bundle.
    let new = catalog.bundles_dir().join(Uuid::now_v7().to_string());
    std::fs::create_dir(&new).unwrap();
    assert_eq!(
        index.bundle_dirs_named(&catalog, "weather"),
        Some(weather.clone())
    );
    std::fs::write(new.join(crate::catalog::BUNDLE_FILE), "not json").unwrap();
    assert_eq!(index.bundle_dirs_named(&catalog, "weather"), None);
}

/// Set the mtime of every tool.json of `catalog` to `ago` before now.
fn date_tool_files(catalog: &Catalog, ago: std::time::Duration) {
    fn walk(dir: &Path, then: std::time::SystemTime) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, then);
            } else if path
                .file_name()
                .is_some_and(|n| n == crate::catalog::TOOL_FILE)
            {
                let file = std::fs::File::options().write(true).open(&path).unwrap();
                file.set_modified(then).unwrap();
            }
        }
    }
    walk(&catalog.bundles_dir(), std::time::SystemTime::now() - ago);
}

#[test]
fn tool_files_touched_with_the_same_bytes_are_not_parsed_again() {
    let (_dir, catalog) = fixture();
    date_tool_files(&catalog, std::time::Duration::from_secs(7200));
    let (_, built) = Index::open(&catalog, &mut |_, _| {}).unwrap();
    assert!(built.read > 5, "{built:?}");

    // Every file touched (a checkout, `touch`): read and hashed, none parsed.
    date_tool_files(&catalog, std::time::Duration::from_secs(3600));
    let (_, touched) = Index::open(&catalog, &mut |_, _| {}).unwrap();
    assert_eq!(touched.read, 0, "{touched:?}");
    assert!(touched.checked >= built.read, "{touched:?}");

    // One file changed, the others touched again: that one is read.
    let (index, _) = Index::open(&catalog, &mut |_, _| {}).unwrap();
    let path: String = index
        .conn
        .query_row(
            "SELECT path FROM tool WHERE path NOT LIKE 'builtin:%' AND problem IS NULL LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(index);
    let file = catalog.root().join(&path);
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    doc["description"] = serde_json::json!("Changed by hand, same file otherwise.");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    date_tool_files(&catalog, std::time::Duration::from_secs(1800));
    let (index, changed) = Index::open(&catalog, &mut |_, _| {}).unwrap();
    assert_eq!(changed.read, 1, "{changed:?}");
    let description: String = index
        .conn
        .query_row(
            "SELECT f.description FROM tool t JOIN tool_fts f ON f.rowid = t.id WHERE t.path = ?1",
            [&path],
            |r| r.get(0),
        )
        .unwrap();
    assert!(description.contains("Changed by hand"), "{description}");
}

#[test]
fn the_folder_count_is_the_folders_a_watcher_watches() {
    let (_dir, catalog) = fixture();
    let index = open(&catalog);
    // bundles/ (depth 0), a bundle (1), its tools/ (2), a slug (3), a version (4).
    fn folders(dir: &Path, depth: usize) -> usize {
        let below: usize = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir() && depth < 4)
            .filter(|p| {
                depth != 1
                    || p.file_name()
                        .is_some_and(|n| n == crate::catalog::TOOLS_DIR)
            })
            .map(|p| folders(&p, depth + 1))
            .sum();
        1 + below
    }
    assert_eq!(
        index.folder_count(),
        Some(folders(&catalog.bundles_dir(), 0))
    );
}

#[test]
fn the_vectors_pack_gives_what_the_rows_give_and_goes_stale_with_a_change() {
    let (_dir, catalog) = fixture();
    date_tool_files(&catalog, std::time::Duration::from_secs(7200));
    let packs = |index: &Index| -> i64 {
        index
            .conn
            .query_row("SELECT count(*) FROM vector_pack", [], |r| r.get(0))
            .unwrap()
    };
    let parts = ["what will the weather be in Oslo tomorrow", "weather"];
    let index = open(&catalog);
    assert_eq!(packs(&index), 0, "no pack before a search needs one");
    let from_rows = index.similarity(&parts).unwrap().unwrap();
    assert_eq!(packs(&index), 1, "the first search packs the vectors");
    let from_pack = index.similarity(&parts).unwrap().unwrap();
    assert_eq!(from_rows, from_pack);
    assert!(from_rows.len() > 20, "{from_rows:?}");
    drop(index);

    // A changed tool empties the pack; the next search packs the new vectors.
    let index = open(&catalog);
    let path: String = index
        .conn
        .query_row(
            "SELECT path FROM tool WHERE path LIKE '%forecast%' AND problem IS NULL LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(index);
    let file = catalog.root().join(&path);
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    doc["description"] = serde_json::json!("Count the invoices of a customer.");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    date_tool_files(&catalog, std::time::Duration::from_secs(1800));
    let index = open(&catalog);
    assert_eq!(packs(&index), 0, "a changed vector empties the pack");
    let after = index.similarity(&parts).unwrap().unwrap();
    assert_ne!(after, from_rows, "the changed tool's vector is read");
    assert_eq!(after, index.similarity(&parts).unwrap().unwrap());
    // A pack whose halves disagree is not trusted: the rows are read again.
    index
        .conn
        .execute("UPDATE vector_pack SET rows = x'0102'", [])
        .unwrap();
    assert_eq!(index.similarity(&parts).unwrap().unwrap(), after);
}
