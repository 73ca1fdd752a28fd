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
