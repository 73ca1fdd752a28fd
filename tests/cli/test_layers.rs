//! The shape of the library: each folder under `lib/src/` is a layer that may use only the
//! layers [`LAYERS`] lists under it, so no two folders reach each other in a circle. The
//! command line (`src/cli/`) is the top layer and a crate of its own: that the library uses
//! none of it, nor of its terminal crates, is the crate boundary's to enforce.
//!
//! The check reads every `lib/src/**/*.rs` and `src/**/*.rs` file, resolves each `crate::…` and `super::…` path to
//! the top-level folder it names, and fails on a path into a layer that is not allowed —
//! naming the file, the line and the path. Test modules (`tests.rs` files and a trailing
//! `#[cfg(test)] mod tests { … }`) may build fixtures with any layer and are not read.
//! `docs/ARCHITECTURE.md` explains the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer and the layers it may use. The order is bottom-up; `cli` may use everything.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("catalog", &["base"]),
    ("schema", &["base"]),
    ("index", &["catalog", "base"]),
    ("invoke", &["catalog", "schema", "base"]),
    ("provider", &["index", "catalog", "schema", "base"]),
    ("pick", &["index", "catalog", "base"]),
    ("attach", &["pick", "index", "catalog", "base"]),
    (
        "mcp",
        &["pick", "provider", "invoke", "index", "catalog", "base"],
    ),
    (
        "validate",
        &["provider", "attach", "catalog", "schema", "base"],
    ),
    ("ops", &["mcp", "validate", "index", "catalog", "base"]),
    ("jobs", &["invoke", "catalog", "base"]),
    // `toolctl serve`: the HTTP contracts, over mcp's connection guard; the catalog routes
    // write as the commands do (ops).
    (
        "serve",
        &[
            "jobs", "ops", "mcp", "attach", "provider", "invoke", "index", "catalog", "base",
            "pick",
        ],
    ),
    // What the fuzz targets (`fuzz/`) drive: the library as a command would, used by nothing.
    (
        "fuzzing",
        &[
            "ops", "validate", "provider", "invoke", "index", "catalog", "base",
        ],
    ),
    (
        "cli",
        &[
            "serve", "jobs", "ops", "validate", "mcp", "attach", "pick", "provider", "invoke",
            "index", "schema", "catalog", "base",
        ],
    ),
];

/// Files at the root of `lib/src/` and `src/` that are not a layer.
const ROOT_FILES: &[&str] = &["lib.rs", "main.rs"];

/// Command modules (`src/cli/cmd/*.rs`) use each other's code only through `cli/shared.rs`.
const COMMANDS_DIR: &str = "cli/cmd";

/// One path from a file into another module.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Use {
    file: String,
    line: usize,
    /// The path as absolute segments from the crate root (`["catalog", "model", "Tool"]`).
    path: Vec<String>,
}

/// The library's sources and the command line's; module paths start at each one.
fn src_dirs() -> [PathBuf; 2] {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [root.join("lib/src"), root.join("src")]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file (`index/sync.rs` → `["index", "sync"]`, `index/mod.rs` →
/// `["index"]`).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The text without comments and without a trailing test module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for line in text.lines() {
        let mut line = line.to_owned();
        if in_block {
            match line.find("*/") {
                Some(end) => {
                    line = line[end + 2..].to_owned();
                    in_block = false;
                }
                None => {
                    out.push('\n');
                    continue;
                }
            }
        }
        if let Some(start) = line.find("/*") {
            in_block = !line[start..].contains("*/");
            line.truncate(start);
        }
        if let Some(start) = line.find("//") {
            line.truncate(start);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The paths of a `use` tree starting after a prefix (`{a::b, c}` → `[[a, b], [c]]`).
fn expand_tree(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand_into(&tree, &mut Vec::new(), &mut out);
    out
}

fn expand_into(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&inner[start..i], prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < inner.len() {
            expand_into(&inner[start..], prefix, out);
        }
        return;
    }
    match tree.split_once("::") {
        Some((head, rest)) => {
            prefix.push(head.to_owned());
            expand_into(rest, prefix, out);
            prefix.pop();
        }
        None => {
            let mut path = prefix.clone();
            if !tree.is_empty() && tree != "self" {
                path.push(tree.split(" as ").next().unwrap_or(tree).to_owned());
            }
            out.push(path);
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `crate::…` and `super::…` path in `code`, made absolute from `module`.
fn uses_in(rel: &str, code: &str) -> Vec<Use> {
    let module = module_of(rel);
    let mut out = Vec::new();
    for (index, line) in code.lines().enumerate() {
        let mut rest = line;
        let mut offset = 0;
        while let Some(found) = ["crate::", "super::"]
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, *p)))
            .min()
        {
            let (at, prefix) = found;
            let before = line[..offset + at].chars().next_back();
            let start = at + prefix.len();
            rest = &rest[start..];
            offset += start;
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            // The base module: `crate` is the root, each `super` one level up.
            let mut base = if prefix == "crate::" {
                Vec::new()
            } else {
                let mut base = module.clone();
                base.pop();
                while let Some(more) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = more;
                    offset += "super::".len();
                }
                base
            };
            // The tree: up to the end of an identifier path or a balanced `{…}`.
            let mut end = 0;
            let mut depth = 0;
            let full = line[offset..].to_owned();
            let full = if full.starts_with('{') {
                // A group may span lines: take the rest of the file's statement.
                let whole: String = code.lines().skip(index).collect::<Vec<_>>().join(" ");
                let from = whole.find(&line[offset..]).map_or(0, |p| p);
                whole[from..].to_owned()
            } else {
                full
            };
            for (i, c) in full.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    c if depth == 0 && !(is_ident(c) || c == ':') => break,
                    _ => {}
                }
                end = i + c.len_utf8();
                if depth == 0 && c == '}' {
                    break;
                }
            }
            for mut path in expand_tree(&full[..end]) {
                if path.first().is_some_and(|p| p == "self") {
                    path.remove(0);
                }
                let mut absolute = base.clone();
                absolute.append(&mut path);
                if absolute.is_empty() {
                    continue;
                }
                out.push(Use {
                    file: rel.to_owned(),
                    line: index + 1,
                    path: absolute,
                });
            }
            base.clear();
        }
    }
    out
}

/// Every file of `src/` but test files: its path relative to `src/` and its code
/// ([`code_of`]).
fn code_files() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for src in src_dirs() {
        let mut found = Vec::new();
        rust_files(&src, &mut found);
        files.extend(found.into_iter().map(|file| {
            let rel = file
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, file)
        }));
    }
    files.sort();
    files
        .into_iter()
        .filter(|(rel, _)| !rel.ends_with("/tests.rs"))
        .map(|(rel, file)| (rel, code_of(&std::fs::read_to_string(file).unwrap())))
        .collect()
}

fn all_uses() -> Vec<Use> {
    code_files()
        .iter()
        .flat_map(|(rel, code)| uses_in(rel, code))
        .collect()
}

/// The layer a file belongs to (its top-level folder), `None` for the root files.
fn layer_of(rel: &str) -> Option<&str> {
    rel.split_once('/').map(|(top, _)| top)
}

/// What breaks the rules among `uses`, one line each.
fn violations(uses: &[Use]) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut out = Vec::new();
    for u in uses {
        let Some(from) = layer_of(&u.file) else {
            assert!(
                ROOT_FILES.contains(&u.file.as_str()),
                "{} is not in a layer",
                u.file
            );
            continue;
        };
        let to = u.path[0].as_str();
        let Some(may) = allowed.get(from) else {
            out.push(format!("{}: folder '{from}' is not in LAYERS", u.file));
            continue;
        };
        if to != from && allowed.contains_key(to) && !may.contains(&to) {
            out.push(format!(
                "{}:{}: {from} uses {} ({to} is not below {from})",
                u.file,
                u.line,
                u.path.join("::")
            ));
        }
        // One command module using another.
        if let Some(cmd) = u.file.strip_prefix(&format!("{COMMANDS_DIR}/"))
            && cmd != "mod.rs"
            && u.path.len() > 2
            && u.path[..2] == ["cli", "cmd"]
            && format!("{}.rs", u.path[2]) != cmd
            && allowed.contains_key("cli")
        {
            out.push(format!(
                "{}:{}: command module uses another command ({}); share it through cli/shared.rs",
                u.file,
                u.line,
                u.path.join("::")
            ));
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn no_layer_uses_a_layer_above_it() {
    let uses = all_uses();
    assert!(
        uses.len() > 300,
        "the reader found only {} paths: is it broken?",
        uses.len()
    );
    let problems = violations(&uses);
    assert!(
        problems.is_empty(),
        "imports against the layering:\n{}",
        problems.join("\n")
    );
}

/// Calls only some layers may make: `(what, the layers that may)`. The process ends in `main`
/// (through the CLI's exit code), and only `invoke` (tools that run programs) and `cli`
/// (index watchers) start processes.
const RESTRICTED: &[(&str, &[&str])] =
    &[("process::exit", &[]), ("Command::new", &["invoke", "cli"])];

#[test]
fn only_the_allowed_layers_exit_or_start_processes() {
    let mut found = Vec::new();
    for (rel, code) in code_files() {
        let Some(layer) = layer_of(&rel) else {
            continue;
        };
        for (index, line) in code.lines().enumerate() {
            for (call, layers) in RESTRICTED {
                if line.contains(call) && !layers.contains(&layer) {
                    found.push(format!("{rel}:{}: {call} in {layer}", index + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "calls outside their layers:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_folder_of_src_is_a_layer() {
    let names: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    for src in src_dirs() {
        for entry in std::fs::read_dir(&src).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                assert!(
                    names.contains(name.as_str()),
                    "{} is not in LAYERS",
                    path.display()
                );
            } else {
                assert!(
                    ROOT_FILES.contains(&name.as_str()),
                    "{} belongs in a layer folder",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_layer_table_has_no_circle() {
    // Each layer may use only layers listed before it: the order is a topological one.
    for (i, (name, uses)) in LAYERS.iter().enumerate() {
        for used in *uses {
            let at = LAYERS.iter().position(|(n, _)| n == used);
            assert!(
                at.is_some_and(|at| at < i),
                "{name} may use {used}, which is not a layer listed below it"
            );
        }
    }
}

#[test]
fn the_reader_sees_upward_paths_in_every_form() {
    // The forms found in the code, each into a layer above `catalog`.
    let code = "use crate::index::Index;\n\
                use crate::{base::time, ops::write::{self, Toggle}};\n\
                let x = crate::pick::Scorer::Bm25;\n\
                use super::super::super::provider::Provider;\n\
                // use crate::cli::run; (a comment)\n";
    let uses = uses_in("catalog/model/deep.rs", &code_of(code));
    let found: Vec<String> = violations(&uses);
    assert_eq!(
        found,
        [
            "catalog/model/deep.rs:1: catalog uses index::Index (index is not below catalog)",
            "catalog/model/deep.rs:2: catalog uses ops::write (ops is not below catalog)",
            "catalog/model/deep.rs:2: catalog uses ops::write::Toggle (ops is not below catalog)",
            "catalog/model/deep.rs:3: catalog uses pick::Scorer::Bm25 (pick is not below catalog)",
            "catalog/model/deep.rs:4: catalog uses provider::Provider (provider is not below catalog)",
        ]
    );
    let cmd = uses_in("cli/cmd/attach.rs", "use super::pick::PickArgs;\n");
    assert_eq!(
        violations(&cmd),
        [
            "cli/cmd/attach.rs:1: command module uses another command (cli::cmd::pick::PickArgs); share it through cli/shared.rs"
        ]
    );
}

/// The command line's words: its commands (`bundle`, `tool`, …) and its long flags (`--slug`,
/// …), read from its clap definition.
fn cli_words() -> (BTreeSet<String>, BTreeSet<String>) {
    use clap::CommandFactory;
    fn walk(command: &clap::Command, flags: &mut BTreeSet<String>) {
        for arg in command.get_arguments() {
            if let Some(long) = arg.get_long() {
                flags.insert(format!("--{long}"));
            }
        }
        for sub in command.get_subcommands() {
            walk(sub, flags);
        }
    }
    let root = toolctl::cli::Cli::command();
    let commands = root
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .filter(|name| name != "help")
        .collect();
    let mut flags = BTreeSet::new();
    walk(&root, &mut flags);
    flags.remove("--help");
    flags.remove("--version");
    (commands, flags)
}

/// `(file, word)` for each `toolctl <command>` and each long flag that a line of `code` names.
fn cli_words_in(
    rel: &str,
    code: &str,
    commands: &BTreeSet<String>,
    flags: &BTreeSet<String>,
) -> Vec<(String, String)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let ends_word = |line: &str, at: usize| !line[at..].starts_with(is_word);
    let mut out = Vec::new();
    for line in code.lines() {
        for command in commands {
            let needle = format!("toolctl {command}");
            if line
                .match_indices(&needle)
                .any(|(at, _)| ends_word(line, at + needle.len()))
            {
                out.push((rel.to_owned(), needle));
            }
        }
        for flag in flags {
            if line
                .match_indices(flag.as_str())
                .any(|(at, _)| ends_word(line, at + flag.len()) && !line[..at].ends_with(is_word))
            {
                out.push((rel.to_owned(), flag.clone()));
            }
        }
    }
    out
}

#[test]
fn no_layer_below_cli_names_a_command_or_a_flag() {
    let (commands, flags) = cli_words();
    assert!(
        commands.contains("bundle") && flags.contains("--slug") && flags.contains("--catalog"),
        "the command line's words were not read: {commands:?} {flags:?}"
    );
    let mut found: Vec<(String, String)> = code_files()
        .iter()
        .filter(|(rel, _)| layer_of(rel).is_some_and(|layer| layer != "cli"))
        .flat_map(|(rel, code)| cli_words_in(rel, code, &commands, &flags))
        .collect();
    found.sort();
    found.dedup();
    let named: Vec<String> = found
        .iter()
        .map(|(file, word)| format!("{file}: {word}"))
        .collect();
    assert!(
        named.is_empty(),
        "messages below cli name the command line's words; give them a structured error the CLI words:\n{}",
        named.join("\n")
    );
}

#[test]
fn the_cli_word_reader_finds_commands_and_flags_only_as_words() {
    let commands: BTreeSet<String> = ["bundle".to_owned()].into();
    let flags: BTreeSet<String> = ["--slug".to_owned()].into();
    let code = "hint(\"toolctl bundle restore x\")\n\
                hint(\"this toolctl bundles nothing, add --slug NEW\")\n\
                hint(\"--slugs and x--slug are not it\")\n";
    assert_eq!(
        cli_words_in("ops/x.rs", code, &commands, &flags),
        [
            ("ops/x.rs".to_owned(), "toolctl bundle".to_owned()),
            ("ops/x.rs".to_owned(), "--slug".to_owned()),
        ]
    );
}

/// Comments state the rule as it is now: no pointer to an issue, a review or a source document
/// outside the repository (history goes in commit messages).
#[test]
fn no_comment_cites_an_issue_or_a_document_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cites = regex::Regex::new(r"(?i)\bissue #?\d+\b|\bthe seed\b|\bseeds/|\bseed's\b").unwrap();
    let mut files = Vec::new();
    for dir in ["lib/src", "src", "tests", "bench/tools", "fuzz"] {
        let dir = root.join(dir);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
    }
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let comment = line.trim_start();
            // A fuzzer's seed corpora (`fuzz/seeds/`) are the repository's own.
            let comment = comment
                .replace("fuzz/seeds/", "")
                .replace("seed corpora", "")
                .replace("seed tests", "");
            if comment.starts_with("//") && cites.is_match(&comment) {
                found.push(format!("{rel}:{}: {}", n + 1, comment));
            }
        }
    }
    assert!(
        found.is_empty(),
        "comments that cite issues or outside documents; state the rule instead:\n{}",
        found.join("\n")
    );
}

/// Every Rust file under `tests/cli/` is a module of the test binary: a file no `mod` names is
/// never compiled, and its tests never run.
#[test]
fn every_test_file_is_a_module_of_the_test_binary() {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let mut files = Vec::new();
    rust_files(&cli, &mut files);
    let mut forgotten = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&cli).unwrap();
        if rel == Path::new("main.rs") {
            continue;
        }
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let folder = file.parent().unwrap();
        // `x/mod.rs` is named by its folder in the folder above; `x/y.rs` by `x.rs` or
        // `x/mod.rs`; `y.rs` at the top by `main.rs`.
        let (name, parents) = if stem == "mod" {
            let name = folder.file_name().unwrap().to_string_lossy().into_owned();
            let up = folder.parent().unwrap();
            (
                name,
                vec![if up == cli {
                    cli.join("main.rs")
                } else {
                    up.with_extension("rs")
                }],
            )
        } else if folder == cli {
            (stem, vec![cli.join("main.rs")])
        } else {
            (
                stem,
                vec![folder.with_extension("rs"), folder.join("mod.rs")],
            )
        };
        let declared =
            regex::Regex::new(&format!(r"(?m)^\s*(pub(\([a-z]+\))? )?mod {name};")).unwrap();
        if !parents
            .iter()
            .any(|p| std::fs::read_to_string(p).is_ok_and(|text| declared.is_match(&text)))
        {
            forgotten.push(rel.display().to_string());
        }
    }
    assert!(
        forgotten.is_empty(),
        "test files no `mod` names (they never run): {forgotten:?}"
    );
}
