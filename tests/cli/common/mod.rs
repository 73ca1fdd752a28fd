//! The test environment every test runs in: a temporary folder holding a catalog, a HOME and
//! XDG folders, and helpers that run the real `toolctl` binary inside it.
//!
//! The binary runs with a cleared environment (only PATH, HOME, XDG_DATA_HOME,
//! XDG_CONFIG_HOME, COLUMNS and NO_COLOR are set), in a working folder that is not inside the
//! catalog, so results never depend on the machine running the tests. The `--json` shapes are
//! pinned by the `deny_unknown_fields` structs at the end of this file: a field added, renamed
//! or dropped fails every test that reads one.

pub mod letta;
pub mod mcp_clients;
pub mod sdk_models;
pub mod serve_client;
pub mod served;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The toolctl binary cargo built for these tests.
pub fn bin() -> &'static Path {
    assert_cmd::cargo::cargo_bin!("toolctl")
}

/// A minimal valid native tool document.
pub fn tool_doc(slug: &str, version: &str) -> Value {
    json!({
        "slug": slug,
        "version": version,
        "type": "native",
        "impl": { "func": "now" },
        "argSchema": { "type": "object", "properties": {} }
    })
}

/// [`tool_doc`] with more fields set (or replaced).
pub fn tool_doc_with(slug: &str, version: &str, extra: Value) -> Value {
    let mut doc = tool_doc(slug, version);
    let fields = doc.as_object_mut().unwrap();
    for (key, value) in extra.as_object().expect("extra fields must be an object") {
        fields.insert(key.clone(), value.clone());
    }
    doc
}

/// A fresh temporary world: a catalog folder, HOME, XDG folders and a working folder.
#[derive(Debug)]
pub struct TestEnv {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    catalog: PathBuf,
    /// `run` passes `--catalog` (else the catalog is the implicit default, in XDG_DATA_HOME).
    explicit: bool,
    inputs: AtomicUsize,
}

impl TestEnv {
    /// Hold the catalog's write lock (`.toolctl/lock`, std's advisory lock) as another
    /// toolctl would, until the file is dropped.
    pub fn hold_lock(&self) -> std::fs::File {
        let path = self.catalog().join(".toolctl/lock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        file.lock().unwrap();
        file
    }

    /// An environment with an initialised catalog (`toolctl init`).
    pub fn new() -> Self {
        let env = Self::uninit();
        env.run(&["init"]).success();
        env
    }

    /// An environment whose catalog is a copy of `fixtures/catalog`.
    pub fn fixture() -> Self {
        let env = Self::uninit();
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalog"),
            env.catalog(),
        );
        env
    }

    /// The fixture catalog with `docs/examples/weather-report.json` copied into its `weather`
    /// bundle by hand: a legacy `go` tool whose function toolctl lacks, listed as unavailable.
    pub fn fixture_with_legacy_tool() -> Self {
        let env = Self::fixture();
        let dir = env
            .catalog()
            .join("bundles/018e2cbd-7e80-7dc2-87bd-2676e9d1e07b/tools/weather-report/v1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/weather-report.json"),
            dir.join("tool.json"),
        )
        .unwrap();
        env
    }

    /// An environment whose catalog folder does not exist yet.
    pub fn uninit() -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("toolctl-test-")
            .tempdir()
            .unwrap();
        // Canonical, so paths toolctl prints compare equal to ours.
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["home", "xdg-config", "work", "inputs"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        Self {
            catalog: root.join("catalog"),
            explicit: true,
            root,
            _tmp: tmp,
            inputs: AtomicUsize::new(0),
        }
    }

    /// An environment whose commands name no catalog: they use the implicit default
    /// (`$XDG_DATA_HOME/toolctl`), which does not exist yet. (A catalog named explicitly must
    /// exist: `CATALOG_NOT_FOUND`.)
    pub fn uninit_default() -> Self {
        let mut env = Self::uninit();
        env.catalog = env.xdg_data().join("toolctl");
        env.explicit = false;
        env
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The catalog `run` passes with `--catalog`.
    pub fn catalog(&self) -> &Path {
        &self.catalog
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// `$XDG_DATA_HOME` (not created: toolctl creates it on the first write).
    pub fn xdg_data(&self) -> PathBuf {
        self.root.join("xdg-data")
    }

    /// The working folder commands run in (outside the catalog).
    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    /// A toolctl command with the test environment but no `--catalog`.
    pub fn bare_command(&self) -> Command {
        let mut cmd = Command::new(bin());
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("XDG_DATA_HOME", self.xdg_data())
            .env("XDG_CONFIG_HOME", self.root.join("xdg-config"))
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            // No test starts an index watcher unless it means to (test_watch.rs).
            .env("TOOLCTL_WATCH", "never")
            .current_dir(self.work())
            .stdin(Stdio::null());
        cmd
    }

    /// A toolctl command on this environment's catalog, with `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.bare_command();
        if self.explicit {
            cmd.arg("--catalog").arg(&self.catalog);
        }
        cmd.args(args);
        cmd
    }

    /// Run `toolctl --catalog <catalog> ARGS`.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::of(self.command(args), None)
    }

    /// Run with `stdin` on standard input.
    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        Run::of(self.command(args), Some(stdin))
    }

    /// Run with `--json` added; the command must succeed. Returns the parsed stdout.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).success().json()
    }

    /// Run with `--json` and expect the error document with this exit code.
    #[track_caller]
    pub fn json_error(&self, args: &[&str], code: i32) -> ErrorDoc {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = self.run(&all);
        run.failure(code);
        assert_eq!(run.stderr, "", "--json errors go to stdout only");
        let doc: ErrorDoc = run.parse();
        assert!(!doc.ok);
        doc
    }

    /// Create a bundle; returns its bundleID.
    #[track_caller]
    pub fn bundle(&self, slug: &str) -> String {
        let put = self.json(&["bundle", "put", "--slug", slug]);
        put["bundleID"].as_str().unwrap().to_owned()
    }

    /// Write a document to a fresh file under `inputs/` and return its path.
    pub fn input(&self, doc: &Value) -> String {
        let n = self.inputs.fetch_add(1, Ordering::Relaxed);
        let path = self.root.join("inputs").join(format!("{n}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
        path.to_str().unwrap().to_owned()
    }

    /// `tool put --bundle BUNDLE <file>`, whatever the outcome.
    pub fn try_put_tool(&self, bundle: &str, doc: &Value) -> Run {
        let file = self.input(doc);
        self.run(&["--json", "tool", "put", "--bundle", bundle, &file])
    }

    /// `tool put` that must succeed; returns the printed document (view plus `document`).
    #[track_caller]
    pub fn put_tool(&self, bundle: &str, doc: &Value) -> Value {
        self.try_put_tool(bundle, doc).success().json()
    }

    /// `tool put` that must succeed, then the document's `createdAt`/`modifiedAt` written
    /// into the stored file by hand (`tool put` always stamps a new tool with now): for tests
    /// that need a registration order. Returns what `tool put` printed.
    #[track_caller]
    pub fn put_tool_dated(&self, bundle: &str, doc: &Value) -> Value {
        let mut undated = doc.clone();
        let fields = undated.as_object_mut().unwrap();
        let dates: Vec<(String, Value)> = ["createdAt", "modifiedAt"]
            .iter()
            .filter_map(|k| fields.shift_remove(*k).map(|v| ((*k).to_owned(), v)))
            .collect();
        let put = self.put_tool(bundle, &undated);
        let file = self.tool_file(
            put["bundleID"].as_str().unwrap(),
            put["slug"].as_str().unwrap(),
            put["version"].as_str().unwrap(),
        );
        let mut stored = read_json(&file);
        for (key, value) in dates {
            stored[key] = value;
        }
        std::fs::write(&file, serde_json::to_vec_pretty(&stored).unwrap()).unwrap();
        put
    }

    /// A tool that `tool put` refuses, brought in as a person with an editor would: a valid
    /// `slug@version` is put, then `doc`'s fields are written over it in the stored file.
    /// Returns the file.
    #[track_caller]
    pub fn put_tool_by_hand(&self, bundle: &str, doc: &Value) -> PathBuf {
        let slug = doc["slug"].as_str().unwrap();
        let version = doc["version"].as_str().unwrap();
        let put = self.put_tool(bundle, &tool_doc(slug, version));
        let file = self.tool_file(put["bundleID"].as_str().unwrap(), slug, version);
        let mut stored = read_json(&file);
        for (key, value) in doc.as_object().unwrap() {
            stored[key] = value.clone();
        }
        std::fs::write(&file, serde_json::to_vec_pretty(&stored).unwrap()).unwrap();
        file
    }

    /// A tool whose exported name another tool wants (`validate`'s rule `name-collision`),
    /// which `tool put` refuses, brought in as `git pull` would: put under a stand-in slug,
    /// then its folder and `slug` moved by hand. Returns the file.
    #[track_caller]
    pub fn put_tool_pulled(&self, bundle: &str, doc: &Value) -> PathBuf {
        let slug = doc["slug"].as_str().unwrap();
        let version = doc["version"].as_str().unwrap();
        let stand_in = format!("stand-in-{}", self.inputs.fetch_add(1, Ordering::Relaxed));
        let mut renamed = doc.clone();
        renamed["slug"] = stand_in.as_str().into();
        let put = self.put_tool(bundle, &renamed);
        let id = put["bundleID"].as_str().unwrap();
        let from = self.tool_file(id, &stand_in, version);
        let to = self.tool_file(id, slug, version);
        let mut stored = read_json(&from);
        stored["slug"] = slug.into();
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(&to, serde_json::to_vec_pretty(&stored).unwrap()).unwrap();
        std::fs::remove_dir_all(
            self.catalog
                .join("bundles")
                .join(id)
                .join("tools")
                .join(&stand_in),
        )
        .unwrap();
        to
    }

    /// Where a tool's file lives.
    pub fn tool_file(&self, bundle_id: &str, slug: &str, version: &str) -> PathBuf {
        self.catalog
            .join("bundles")
            .join(bundle_id)
            .join("tools")
            .join(slug)
            .join(version)
            .join("tool.json")
    }

    /// A bundle's folder.
    pub fn bundle_dir(&self, bundle_id: &str) -> PathBuf {
        self.catalog.join("bundles").join(bundle_id)
    }

    /// `tool list --json EXTRA…`, pinned.
    #[track_caller]
    pub fn tool_list(&self, extra: &[&str]) -> ToolList {
        let mut args = vec!["--json", "tool", "list"];
        args.extend_from_slice(extra);
        self.run(&args).success().parse()
    }

    /// The `ref`s of `tool list EXTRA…` (one page of up to 1000).
    #[track_caller]
    pub fn refs(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec!["--page-size", "1000"];
        args.extend_from_slice(extra);
        let list = self.tool_list(&args);
        assert_eq!(list.next_page_token, None);
        list.items.into_iter().map(|t| t.reference).collect()
    }

    /// `bundle list --json EXTRA…`, pinned.
    #[track_caller]
    pub fn bundle_list(&self, extra: &[&str]) -> BundleList {
        let mut args = vec!["--json", "bundle", "list"];
        args.extend_from_slice(extra);
        self.run(&args).success().parse()
    }

    /// Read and parse the catalog's `toolctl.json`.
    pub fn config(&self) -> Value {
        read_json(&self.catalog.join("toolctl.json"))
    }

    /// Change `toolctl.json` as a person would, with an editor.
    pub fn edit_config(&self, edit: impl FnOnce(&mut Value)) {
        let mut config = self.config();
        edit(&mut config);
        std::fs::write(
            self.catalog.join("toolctl.json"),
            serde_json::to_vec_pretty(&config).unwrap(),
        )
        .unwrap();
    }

    /// Replace the temporary folder's path with `[TMP]` and UUIDs with `[UUID]`.
    pub fn normalize(&self, text: &str) -> String {
        let text = text.replace(self.root.to_str().unwrap(), "[TMP]");
        replace_uuids(&text)
    }
}

/// Parse a JSON file.
#[track_caller]
/// Copy a folder tree, leaving out `.toolctl` (derived state a developer's run may have left).
/// A symlink is copied as a symlink to the same target (a relative one stays inside the copy).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).unwrap();
            std::os::unix::fs::symlink(link, &target).unwrap();
        } else if kind.is_dir() {
            if entry.file_name() != ".toolctl" {
                copy_tree(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Make a FIFO at `path` (`mkfifo`): a file no one writes to, which a reader that waits would
/// wait on forever.
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Write a file, creating its folders.
pub fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `dir` whose name is `name`, recursively (hidden folders included).
pub fn find_files(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == name) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every file name under `dir` starting with `prefix`, recursively.
pub fn find_prefixed(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            {
                found.push(path.clone());
            }
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found
}

/// Whether `text` is a version 7 UUID.
#[track_caller]
pub fn assert_uuid_v7(text: &str) {
    let id = uuid::Uuid::try_parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(id.get_version_num(), 7, "{text} is not a UUIDv7");
}

/// Parse an RFC 3339 timestamp.
#[track_caller]
pub fn timestamp(text: &str) -> jiff::Timestamp {
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} is not RFC 3339: {e}"))
}

/// A document as compact text, keys in their stored order (serde_json's `Value` equality
/// ignores key order, this does not).
pub fn ordered(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// The keys of an object, in order.
pub fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

fn replace_uuids(text: &str) -> String {
    const SHAPE: [usize; 5] = [8, 4, 4, 4, 12];
    let bytes = text.as_bytes();
    let is_uuid_at = |start: usize| {
        let mut i = start;
        for (n, len) in SHAPE.iter().enumerate() {
            if n > 0 {
                if bytes.get(i) != Some(&b'-') {
                    return false;
                }
                i += 1;
            }
            for _ in 0..*len {
                if !bytes
                    .get(i)
                    .is_some_and(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
                {
                    return false;
                }
                i += 1;
            }
        }
        true
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text.is_char_boundary(i) && is_uuid_at(i) {
            out.push_str("[UUID]");
            i += 36;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The outcome of one toolctl run.
#[derive(Debug)]
pub struct Run {
    /// The exit code; `None` when a signal ended the process.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    command: String,
}

impl Run {
    /// Run `cmd` to the end (killed after a minute, so a hung toolctl fails the test).
    pub fn of(cmd: Command, stdin: Option<&str>) -> Self {
        let command = format!(
            "toolctl {}",
            cmd.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut cmd = assert_cmd::Command::from_std(cmd);
        cmd.timeout(Duration::from_secs(60));
        if let Some(stdin) = stdin {
            cmd.write_stdin(stdin.as_bytes().to_vec());
        }
        Self::from_output(command, cmd.output().unwrap())
    }

    /// The outcome of a process the test spawned itself; `command` labels it in reports.
    pub fn from_output(command: impl Into<String>, output: std::process::Output) -> Self {
        Self {
            status: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
            command: command.into(),
        }
    }

    /// The exit code (the process must have exited, not been killed).
    #[track_caller]
    pub fn code(&self) -> i32 {
        self.status
            .unwrap_or_else(|| panic!("{} was killed by a signal\n{self}", self.command))
    }

    /// Assert exit 0.
    #[track_caller]
    pub fn success(&self) -> &Self {
        assert_eq!(self.status, Some(0), "expected success\n{self}");
        self
    }

    /// Assert this exit code.
    #[track_caller]
    pub fn failure(&self, code: i32) -> &Self {
        assert_eq!(self.status, Some(code), "expected exit {code}\n{self}");
        self
    }

    /// Assert stdout holds `needle`.
    #[track_caller]
    pub fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{self}"
        );
        self
    }

    /// Assert stderr holds `needle`.
    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{self}"
        );
        self
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{self}"))
    }

    /// stdout parsed into a pinned shape.
    #[track_caller]
    pub fn parse<T: DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout does not have the pinned shape: {e}\n{self}"))
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ {}\nexit: {:?}\n--- stdout\n{}--- stderr\n{}---",
            self.command, self.status, self.stdout, self.stderr
        )
    }
}

/// Split a printed tool (`tool get`/`put`/`enable`… output) into its pinned view and the
/// fields beside it (`document`, `changed`, `deleted`).
#[track_caller]
pub fn tool_view(mut value: Value, beside: &[&str]) -> (ToolItem, Value) {
    let fields = value.as_object_mut().unwrap();
    let mut extra = serde_json::Map::new();
    for key in beside {
        let v = fields
            .shift_remove(*key)
            .unwrap_or_else(|| panic!("no {key:?} in the output"));
        extra.insert((*key).to_owned(), v);
    }
    let view = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("tool view does not have the pinned shape: {e}\n{value:#}"));
    (view, Value::Object(extra))
}

/// Same as [`tool_view`] for a printed bundle.
#[track_caller]
pub fn bundle_view(mut value: Value, beside: &[&str]) -> (BundleItem, Value) {
    let fields = value.as_object_mut().unwrap();
    let mut extra = serde_json::Map::new();
    for key in beside {
        let v = fields
            .shift_remove(*key)
            .unwrap_or_else(|| panic!("no {key:?} in the output"));
        extra.insert((*key).to_owned(), v);
    }
    let view = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("bundle view does not have the pinned shape: {e}\n{value:#}"));
    (view, Value::Object(extra))
}

/// A tool as `tool list --json` prints it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolItem {
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(rename = "toolID")]
    pub tool_id: String,
    #[serde(rename = "bundleID")]
    pub bundle_id: String,
    pub bundle: String,
    pub slug: String,
    pub version: String,
    pub display_name: String,
    pub description: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub tags: Vec<String>,
    pub is_enabled: bool,
    pub bundle_enabled: bool,
    pub is_built_in: bool,
    pub available: bool,
    #[serde(default)]
    pub unavailable_reason: Option<String>,
    pub status: String,
    pub created_at: String,
    pub modified_at: String,
    pub path: Option<PathBuf>,
}

/// A file a list could not use.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProblemItem {
    pub path: PathBuf,
    pub message: String,
}

/// `tool list --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolList {
    pub items: Vec<ToolItem>,
    pub next_page_token: Option<String>,
    pub problems: Vec<ProblemItem>,
}

/// A bundle as `bundle list --json` prints it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BundleItem {
    #[serde(rename = "bundleID")]
    pub bundle_id: String,
    pub slug: String,
    pub display_name: String,
    pub description: String,
    pub is_enabled: bool,
    pub is_built_in: bool,
    pub soft_deleted_at: Option<String>,
    pub created_at: String,
    pub modified_at: String,
    #[serde(default)]
    pub tool_count: Option<usize>,
    pub path: Option<PathBuf>,
}

/// `bundle list --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BundleList {
    pub items: Vec<BundleItem>,
    pub next_page_token: Option<String>,
    pub problems: Vec<ProblemItem>,
}

/// `{"ok":false,"error":{…}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorDoc {
    pub ok: bool,
    pub error: ErrorBody,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    pub details: Value,
    #[serde(default)]
    pub hint: Option<String>,
}

/// `bundle reap --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReapReport {
    pub dry_run: bool,
    pub older_than_secs: u64,
    pub reaped: Vec<ReapOutcome>,
    pub kept: Vec<ReapOutcome>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReapOutcome {
    #[serde(rename = "bundleID")]
    pub bundle_id: String,
    pub slug: String,
    pub soft_deleted_at: String,
    #[serde(default)]
    pub kept_because: Option<String>,
}

#[derive(Debug, Clone, Copy, Default)]
/// Recall@1/@3/@5 and MRR of a labelled query set (search and pick quality tests).
pub struct Metrics {
    pub queries: usize,
    pub at1: f64,
    pub at3: f64,
    pub at5: f64,
    pub mrr: f64,
}

impl Metrics {
    /// The figures of 1-based positions of the first relevant pick (`None`: not in the top 10).
    pub fn of(positions: impl IntoIterator<Item = Option<usize>>) -> Self {
        let mut m = Self::default();
        for position in positions {
            m.queries += 1;
            if let Some(p) = position {
                m.at1 += f64::from(u8::from(p <= 1));
                m.at3 += f64::from(u8::from(p <= 3));
                m.at5 += f64::from(u8::from(p <= 5));
                m.mrr += 1.0 / p as f64;
            }
        }
        let n = m.queries.max(1) as f64;
        m.at1 /= n;
        m.at3 /= n;
        m.at5 /= n;
        m.mrr /= n;
        m
    }

    pub fn row(&self, label: &str) -> String {
        format!(
            "{label:<9} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            self.queries, self.at1, self.at3, self.at5, self.mrr
        )
    }
}
