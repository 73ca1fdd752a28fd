//! The README's examples are executed: every `console` block in README.md runs, in order,
//! against one fresh catalog configured with docs/examples/toolctl.json.

#[test]
fn readme_examples_run() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let temp = tempfile::tempdir().unwrap();
    let catalog = temp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::copy(
        root.join("docs/examples/toolctl.json"),
        catalog.join("toolctl.json"),
    )
    .unwrap();
    trycmd::TestCases::new()
        .env("TOOLCTL_CATALOG", catalog.display().to_string())
        .env(
            "XDG_DATA_HOME",
            temp.path().join("data").display().to_string(),
        )
        .env(
            "XDG_CONFIG_HOME",
            temp.path().join("config").display().to_string(),
        )
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .case(root.join("README.md"));
}

/// The README stands alone in a clone: every link is a file or folder of the repository (or a
/// heading of the README), and it sends no one to documents the repository does not hold.
#[test]
fn readme_links_only_to_files_in_the_repository() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("README.md")).unwrap();
    let links = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut checked = 0;
    for link in links.captures_iter(&text) {
        let target = &link[1];
        if target.starts_with('#') {
            continue;
        }
        assert!(
            !target.contains("://"),
            "README links outside the repository: {target}"
        );
        let path = target.split('#').next().unwrap();
        assert!(
            root.join(path).exists(),
            "README links to a missing file: {target}"
        );
        checked += 1;
    }
    assert!(checked >= 3, "the link reader found {checked} links");
    for outside in [
        "SPEC",
        "seeds/",
        "the seed",
        "catalog-spec.md",
        "agent-tools-api.md",
        "attach-contract.md",
        "llm-tool-selection.md",
        "tool-definition-and-pick.md",
        "PROVIDERS.md",
    ] {
        assert!(
            !text.contains(outside),
            "README refers to {outside}, not in the repository"
        );
    }
}
