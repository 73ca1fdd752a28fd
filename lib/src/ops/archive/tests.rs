//! Tests of [`archive`](super).

use super::*;

#[test]
fn entry_names_outside_the_layout_are_refused() {
    for (name, expected) in [
        ("../../etc/passwd", "'..' component"),
        ("tools/../bundle.json", "'..' component"),
        ("/etc/passwd", "absolute path"),
        ("tools\\a\\v1\\tool.json", "backslash"),
        ("C:/bundle.json", "drive letter"),
        ("c:bundle.json", "drive letter"),
        ("bundle.json\0", "NUL"),
        ("tools//v1/tool.json", "empty or '.' component"),
        ("./bundle.json", "empty or '.' component"),
        ("README.md", "not part of a bundle"),
        ("tools/a/v1/other.json", "not part of a bundle"),
        ("tools/a/tool.json", "not part of a bundle"),
        ("tools/a_b/v1/tool.json", "underscore"),
        ("tools/a/.v1/tool.json", "starts with '.'"),
        ("bundle.json/", "not part of a bundle"),
        ("", "empty name"),
    ] {
        let error = entry_kind(name).expect_err(name);
        assert!(error.contains(expected), "{name:?}: {error}");
    }
    for (name, kind) in [
        ("bundle.json", EntryKind::File),
        ("tools/météo/v1.2/tool.json", EntryKind::File),
        ("tools/", EntryKind::Folder),
        ("tools/a/", EntryKind::Folder),
        ("tools/a/v1/", EntryKind::Folder),
    ] {
        assert_eq!(entry_kind(name), Ok(kind), "{name}");
    }
}

#[test]
fn problems_name_entry_and_pointer() {
    let v = ArchiveProblem::new("tools/a/v1/tool.json", "/slug", "bad").to_violation();
    assert_eq!(v.pointer, "tools/a/v1/tool.json#/slug");
    let v = ArchiveProblem::new("a\0b", "", "bad").to_violation();
    assert_eq!(v.pointer, "a\\u{0}b");
    let v = ArchiveProblem::whole("too big").to_violation();
    assert_eq!(v.pointer, "");
}

#[test]
fn sizes_read_well() {
    assert_eq!(size_text(812), "812 bytes");
    assert_eq!(size_text(4 * 1024 * 1024), "4 MiB");
    assert_eq!(size_text(1536), "1.5 KiB");
    assert_eq!(size_text(1 << 30), "1 GiB");
}
