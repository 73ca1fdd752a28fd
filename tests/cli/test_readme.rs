//! The docs are executed and stand alone in a clone: every `console` block of README.md and of
//! each page of the manual (the book in docs/) runs with trycmd, each file in order against a
//! fresh catalog configured with docs/examples/toolctl.json; every link of the docs leads to a
//! file of the repository (and, with `#`, to a heading of it); SUMMARY.md lists every page of
//! the book and no other.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The folder of the book's pages: `src` of docs/book.toml, relative to docs/.
fn book_source() -> PathBuf {
    let docs = root().join("docs");
    let config = std::fs::read_to_string(docs.join("book.toml")).unwrap();
    let src = config
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "src").then(|| value.trim().trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| "src".to_owned());
    normal(&docs.join(src))
}

/// The text of a Markdown file without its fenced code blocks, which hold no links or headings.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if !fence {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The anchors of a Markdown file's headings, as GitHub and mdBook make them: lower case,
/// letters, digits, `-` and `_` kept, spaces made `-`, the rest dropped; a repeated heading gets
/// `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in prose(text).lines() {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                c if c.is_whitespace() => Some('-'),
                _ => None,
            })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        out.insert(anchor);
    }
    out
}

/// The link targets of a Markdown file (`[text](target)`), outside code.
fn links(text: &str) -> Vec<String> {
    let code = regex::Regex::new(r"`[^`\n]*`").unwrap();
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let prose = prose(text);
    // A link's text may be code (`[`docs/`](docs/)`): drop code spans but keep the brackets.
    let text = code.replace_all(&prose, "x");
    link.captures_iter(&text).map(|c| c[1].to_owned()).collect()
}

/// The pages of the book: every `.md` file under its source folder.
fn book_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&book_source(), &mut out);
    out
}

/// Every Markdown file a reader of the repository is sent to: the README, CONTRIBUTING,
/// CHANGELOG, the research notes and the book.
fn doc_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        .iter()
        .map(|f| root().join(f))
        .collect();
    files.push(root().join("research/README.md"));
    files.extend(book_pages());
    files
}

/// `path` with `.` and `..` worked out, without touching the filesystem.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Runs every `console` block of `file`, in order, against a fresh catalog.
fn run_examples(file: &Path) {
    let temp = tempfile::tempdir().unwrap();
    let catalog = temp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::copy(
        root().join("docs/examples/toolctl.json"),
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
        .case(file)
        .run();
}

#[test]
fn readme_examples_run() {
    run_examples(&root().join("README.md"));
}

/// Each page on a fresh catalog of its own: a page that needs a bundle or a tool makes it.
#[test]
fn book_examples_run() {
    let mut ran = 0;
    for page in book_pages() {
        if std::fs::read_to_string(&page)
            .unwrap()
            .contains("```console")
        {
            run_examples(&page);
            ran += 1;
        }
    }
    assert!(ran >= 5, "the book has {ran} pages with examples");
}

/// Every link of the docs is a file or folder of the repository (or a heading: `#anchor`, or
/// `page.md#anchor`), and none sends a reader outside the repository.
#[test]
fn doc_links_lead_to_files_and_headings_of_the_repository() {
    let root_dir = normal(root());
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let here = file.parent().unwrap();
        for target in links(&text) {
            let name = relative(&file);
            if target.contains("://") || target.starts_with("mailto:") {
                broken.push(format!("{name}: links outside the repository: {target}"));
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                normal(&here.join(path))
            };
            if !linked.starts_with(&root_dir) {
                broken.push(format!("{name}: links out of the repository: {target}"));
            } else if !linked.exists() {
                broken.push(format!("{name}: links to a missing file: {target}"));
            } else if let Some(anchor) = anchor {
                let headings = anchors(&std::fs::read_to_string(&linked).unwrap_or_default());
                if !headings.contains(anchor) {
                    broken.push(format!(
                        "{name}: links to a heading {} does not have: {target}",
                        relative(&linked)
                    ));
                }
            }
            checked += 1;
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(checked >= 50, "the link reader found {checked} links");
}

/// SUMMARY.md lists every page of the book, each once, and only pages that exist.
#[test]
fn summary_lists_every_page_of_the_book() {
    let source = book_source();
    let summary = std::fs::read_to_string(source.join("SUMMARY.md")).unwrap();
    let mut listed = BTreeSet::new();
    for target in links(&summary) {
        let page = normal(&source.join(&target));
        assert!(page.exists(), "SUMMARY.md lists a missing page: {target}");
        assert!(listed.insert(page), "SUMMARY.md lists {target} twice");
    }
    let pages: BTreeSet<PathBuf> = book_pages()
        .into_iter()
        .map(|p| normal(&p))
        .filter(|p| !p.ends_with("SUMMARY.md"))
        .collect();
    let unlisted: Vec<String> = pages.difference(&listed).map(|p| relative(p)).collect();
    assert!(
        unlisted.is_empty(),
        "pages of the book SUMMARY.md does not list: {unlisted:?}"
    );
    let outside: Vec<String> = listed.difference(&pages).map(|p| relative(p)).collect();
    assert!(
        outside.is_empty(),
        "SUMMARY.md lists files outside the book's pages: {outside:?}"
    );
}

/// The docs state the rules as they are: they send no one to documents the repository does not
/// hold, and name no issue (history is in the commit messages and CHANGELOG.md).
#[test]
fn docs_refer_to_nothing_outside_the_repository() {
    let issue = regex::Regex::new(r"(?i)\bissue \d+").unwrap();
    let spec = regex::Regex::new(r"\bSPEC\b").unwrap();
    for file in doc_files() {
        let name = relative(&file);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !spec.is_match(&text),
            "{name} refers to SPEC, not in the repository"
        );
        for outside in [
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
                "{name} refers to {outside}, not in the repository"
            );
        }
        // docs/QUALITY.md records the benchmark's history, figure by figure with its commit.
        if name != "docs/QUALITY.md" {
            assert!(
                issue.find(&text).is_none(),
                "{name} names an issue: {:?}",
                issue.find(&text).map(|m| m.as_str())
            );
        }
    }
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let made = anchors(
        "# `--json` output\n## MCP servers' tools in the catalog\n```\n# not a heading\n```\n## Usage\n## Usage\n",
    );
    let expected: BTreeSet<String> = [
        "--json-output",
        "mcp-servers-tools-in-the-catalog",
        "usage",
        "usage-1",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(made, expected);
}
