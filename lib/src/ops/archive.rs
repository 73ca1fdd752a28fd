//! Bundles as ZIP archives: `bundle export` writes one, `bundle import` reads one.
//!
//! An archive holds one bundle folder, paths relative to it: `bundle.json` and
//! `tools/<slug>/<version>/tool.json`, nothing else. Export copies the files' bytes as they are
//! on disk, sorted, with fixed timestamps and modes, so an unchanged bundle always gives the
//! same archive, byte for byte.
//!
//! Archives come from other people, so reading one assumes hostile input. The central
//! directory is checked first, without decompressing anything: entry names (no absolute path,
//! `..`, backslash, drive letter, NUL or symlink; only the bundle layout), no name twice, and
//! the declared sizes and compression ratios against the limits below. Declared sizes can lie,
//! so no entry is ever read past [`MAX_ENTRY_BYTES`]. Then the documents are checked as a
//! whole ([`check_archive`], every problem at once), then conflicts with the catalog, under
//! the write lock. Only then is anything written: into a hidden staging folder that one rename
//! turns into the bundle, so a reader sees all of the bundle or none of it, and a killed import
//! leaves at most a hidden folder that every reader skips and the next import removes.
//!
//! One file, its tests in `archive/tests.rs`: the checks of hostile input (names, sizes,
//! ratios, documents, conflicts) and the staged write are one procedure read top to bottom,
//! and export and import share the layout rules, which a split would copy.

use super::write::{new_id, refuse_case_twins, timestamp};
use crate::base::same_json::same_json;
use crate::catalog::error::{Error, Hint, Result, Violation};
use crate::catalog::model::{self, Bundle, Tool};
use crate::catalog::rules::{self, NameKind};
use crate::catalog::{
    BUNDLE_FILE, BundleEntry, Catalog, Scan, TOOL_FILE, TOOLS_DIR, builtin, store,
};
use crate::validate::{self, Place, Severity};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use uuid::Uuid;
use zip::read::Config as ZipConfig;
use zip::unstable::read::ZipIterable;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, System, ZipReadOptions, ZipWriter};

/// The most entries (files and folders) an archive may list. A bundle holds tens of tool
/// versions, rarely hundreds; the cap bounds the work a central directory can ask for.
pub const MAX_ENTRIES: usize = 20_000;

/// The largest file an archive may hold, uncompressed (4 MiB): the largest catalog file read.
/// A `tool.json` is a few KiB; the biggest argument schemas reach a few hundred.
pub const MAX_ENTRY_BYTES: u64 = crate::base::capped::MAX_FILE_BYTES;

/// The most all the files of an archive may hold together, uncompressed (256 MiB).
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// The largest compression ratio (uncompressed : compressed) allowed for an entry above
/// [`RATIO_FLOOR_BYTES`]. JSON compresses 5–20:1; a zip bomb compresses 1000:1 and more.
pub const MAX_RATIO: u64 = 200;

/// Entries up to this size (1 MiB) may have any compression ratio: small repetitive JSON
/// compresses very well, and a small entry cannot hurt.
pub const RATIO_FLOOR_BYTES: u64 = 1024 * 1024;

/// The source an import's errors name for the slug asked for (`ImportOptions::slug`); the CLI
/// calls it `--slug`.
pub const SLUG_INPUT: &str = "new slug";

/// The largest archive file read (288 MiB): [`MAX_TOTAL_BYTES`] of content plus room for the
/// headers of [`MAX_ENTRIES`] entries. It also bounds what is read from standard input.
pub const MAX_ARCHIVE_BYTES: u64 = MAX_TOTAL_BYTES + 32 * 1024 * 1024;

/// How staging folders under `bundles/` start. Hidden, so every reader skips them; under the
/// catalog lock, one that exists is a leftover of a killed import.
pub const STAGING_PREFIX: &str = ".import-";

/// One file of an archive: its path inside the archive and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// An archive read into memory: its entries passed the name and size checks, their content
/// is not checked yet.
#[derive(Debug, Clone)]
pub struct Archive {
    /// Where it came from, for messages (`<stdin>` for standard input).
    pub source_name: String,
    /// Its files in name order (folder entries are dropped).
    pub files: Vec<ArchiveFile>,
}

/// One thing wrong with an archive: the entry (empty for the archive as a whole), the JSON
/// pointer inside it (empty for the whole entry) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArchiveProblem {
    pub entry: String,
    pub pointer: String,
    pub message: String,
}

impl ArchiveProblem {
    fn new(entry: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            entry: printable(entry),
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// A problem of the archive as a whole.
    fn whole(message: impl Into<String>) -> Self {
        Self::new("", "", message)
    }

    /// The problem as a [`Violation`]: the pointer is `entry#pointer`, the URI-fragment form
    /// of a JSON pointer into the entry (RFC 6901 §6), or just the entry.
    pub fn to_violation(&self) -> Violation {
        let at = match (self.entry.is_empty(), self.pointer.is_empty()) {
            (true, _) => self.pointer.clone(),
            (false, true) => self.entry.clone(),
            (false, false) => format!("{}#{}", self.entry, self.pointer),
        };
        Violation::new(at, self.message.clone())
    }
}

/// The error for an archive (or a bundle folder) with problems.
fn invalid(source_name: &str, problems: &[ArchiveProblem]) -> Error {
    Error::invalid(
        source_name,
        problems.iter().map(ArchiveProblem::to_violation).collect(),
    )
}

/// An entry name fit for a message: control characters escaped, nothing else changed.
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// What an entry is in the bundle layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    /// `tools/`, `tools/<slug>/` or `tools/<slug>/<version>/`: accepted, never read.
    Folder,
    /// `bundle.json` or `tools/<slug>/<version>/tool.json`.
    File,
}

/// Where an entry name fits in the bundle layout, or why it does not.
fn entry_kind(name: &str) -> Result<EntryKind, String> {
    if name.is_empty() {
        return Err("the entry has an empty name".to_owned());
    }
    if name.contains('\0') {
        return Err("the entry name holds a NUL character".to_owned());
    }
    if name.contains('\\') {
        return Err("the entry name holds a backslash; archive paths use '/'".to_owned());
    }
    if name.starts_with('/') {
        return Err("the entry name is an absolute path".to_owned());
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("the entry name starts with a drive letter".to_owned());
    }
    let (path, folder) = match name.strip_suffix('/') {
        Some(path) => (path, true),
        None => (name, false),
    };
    let parts: Vec<&str> = path.split('/').collect();
    if parts.contains(&"..") {
        return Err("the entry name has a '..' component".to_owned());
    }
    if parts.iter().any(|p| p.is_empty() || *p == ".") {
        return Err("the entry name has an empty or '.' component".to_owned());
    }
    let outside = |why: &str| {
        format!(
            "the entry is not part of a bundle{why}: an archive holds only bundle.json and tools/<slug>/<version>/tool.json"
        )
    };
    let names = |slug: &str, version: Option<&str>| -> Result<(), String> {
        rules::check_name(NameKind::Slug, slug).map_err(|m| outside(&format!(" ({m})")))?;
        if let Some(version) = version {
            rules::check_name(NameKind::Version, version)
                .map_err(|m| outside(&format!(" ({m})")))?;
        }
        Ok(())
    };
    match (folder, parts.as_slice()) {
        (false, [BUNDLE_FILE]) => Ok(EntryKind::File),
        (false, [TOOLS_DIR, slug, version, TOOL_FILE]) => {
            names(slug, Some(version)).map(|()| EntryKind::File)
        }
        (true, [TOOLS_DIR]) => Ok(EntryKind::Folder),
        (true, [TOOLS_DIR, slug]) => names(slug, None).map(|()| EntryKind::Folder),
        (true, [TOOLS_DIR, slug, version]) => {
            names(slug, Some(version)).map(|()| EntryKind::Folder)
        }
        _ => Err(outside("")),
    }
}

/// A size for messages: `4 MiB`, `1.5 GiB`, `812 bytes`.
fn size_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            let value = bytes as f64 / size as f64;
            return if bytes.is_multiple_of(size) {
                format!("{} {unit}", bytes / size)
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// Read an archive file (see [`read_archive`]); a file above [`MAX_ARCHIVE_BYTES`] is refused
/// without being read.
pub fn read_archive_file(
    path: &Path,
    source_name: &str,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Archive> {
    let (file, len) = crate::base::capped::open_regular(path)
        .map_err(|e| crate::catalog::Error::unreadable(path, e))?;
    if len > MAX_ARCHIVE_BYTES {
        return Err(invalid(
            source_name,
            &[ArchiveProblem::whole(format!(
                "the archive is {}; at most {} are read",
                size_text(len),
                size_text(MAX_ARCHIVE_BYTES)
            ))],
        ));
    }
    read_archive(std::io::BufReader::new(file), source_name, progress)
}

/// Read an archive from a stream (standard input), at most [`MAX_ARCHIVE_BYTES`], then as
/// [`read_archive`] does. A zip's directory is at its end, so the stream is kept whole first:
/// in an unnamed temporary file, not in memory (an endless stream costs disk up to the cap,
/// never 288 MiB of memory).
pub fn read_archive_stream(
    stream: impl Read,
    source_name: &str,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Archive> {
    use std::io::{Seek, SeekFrom};
    let failed = |e| Error::io("cannot read", source_name, e);
    let mut spool = tempfile::tempfile().map_err(failed)?;
    let kept =
        std::io::copy(&mut stream.take(MAX_ARCHIVE_BYTES + 1), &mut spool).map_err(failed)?;
    if kept > MAX_ARCHIVE_BYTES {
        return Err(invalid(
            source_name,
            &[ArchiveProblem::whole(format!(
                "the archive is larger than {}",
                size_text(MAX_ARCHIVE_BYTES)
            ))],
        ));
    }
    spool.seek(SeekFrom::Start(0)).map_err(failed)?;
    read_archive(std::io::BufReader::new(spool), source_name, progress)
}

/// Read the files of an archive, hostile input in mind.
///
/// First the central directory alone, nothing decompressed: at most [`MAX_ENTRIES`] entries;
/// every name safe and in the bundle layout; no symlink, no encryption, stored or deflated
/// only; no name twice; declared sizes within [`MAX_ENTRY_BYTES`] and [`MAX_TOTAL_BYTES`];
/// no compression ratio above [`MAX_RATIO`] (past [`RATIO_FLOOR_BYTES`]). Every entry that
/// breaks a rule is reported, not only the first. Then the files are read, never more than
/// [`MAX_ENTRY_BYTES`] of any (declared sizes can lie), and each must hold exactly the size it
/// declares and match its CRC. `progress` gets (files read, files).
pub fn read_archive<R: Read + Seek>(
    reader: R,
    source_name: &str,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Archive> {
    let refuse = |problems: Vec<ArchiveProblem>| invalid(source_name, &problems);
    let unreadable = |e: zip::result::ZipError| {
        refuse(vec![ArchiveProblem::whole(format!(
            "not a ZIP archive toolctl can read: {e}"
        ))])
    };
    let mut zip = ZipIterable::try_new(reader, ZipConfig::default())
        .map_err(unreadable)?
        .enforce_header_consistency(true);
    if zip.len() > MAX_ENTRIES {
        return Err(refuse(vec![ArchiveProblem::whole(format!(
            "the archive lists {} entries; at most {MAX_ENTRIES} are allowed",
            zip.len()
        ))]));
    }

    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    let mut wanted = Vec::new();
    let mut declared_total: u64 = 0;
    for (number, entry) in zip.files().map_err(unreadable)?.enumerate() {
        let entry = entry.map_err(|e| {
            refuse(vec![ArchiveProblem::whole(format!(
                "entry {} of the central directory cannot be read: {e}",
                number + 1
            ))])
        })?;
        let Ok(name) = std::str::from_utf8(entry.name_raw()).map(str::to_owned) else {
            let lossy = String::from_utf8_lossy(entry.name_raw()).into_owned();
            problems.push(ArchiveProblem::new(
                &lossy,
                "",
                "the entry name is not UTF-8",
            ));
            continue;
        };
        let mut problem = |message: String| problems.push(ArchiveProblem::new(&name, "", message));
        if !seen.insert(name.clone()) {
            problem("the entry appears twice in the archive".to_owned());
            continue;
        }
        let kind = if entry.is_symlink() {
            Err("the entry is a symbolic link".to_owned())
        } else {
            entry_kind(&name)
        };
        let is_file = kind == Ok(EntryKind::File);
        let size = entry.size();
        let packed = entry.compressed_size();
        let mut fine = true;
        let mut refuse_entry = |message: String| {
            fine = false;
            problem(message);
        };
        match kind {
            Err(message) => refuse_entry(message),
            Ok(_) if entry.encrypted() => refuse_entry("the entry is encrypted".to_owned()),
            Ok(_) => {}
        }
        if !matches!(
            entry.compression(),
            CompressionMethod::Stored | CompressionMethod::Deflated
        ) {
            refuse_entry(format!(
                "the entry uses compression method {}; toolctl reads stored and deflated entries",
                entry.compression()
            ));
        }
        if size > MAX_ENTRY_BYTES {
            refuse_entry(format!(
                "the entry declares {} uncompressed; at most {} per file are allowed",
                size_text(size),
                size_text(MAX_ENTRY_BYTES)
            ));
        } else if size > RATIO_FLOOR_BYTES && size / packed.max(1) > MAX_RATIO {
            refuse_entry(format!(
                "the entry would expand {}:1 ({} to {}); above {MAX_RATIO}:1 it is taken for a zip bomb",
                size / packed.max(1),
                size_text(packed),
                size_text(size)
            ));
        }
        if fine {
            // Entries refused on their own do not count again in the total.
            declared_total = declared_total.saturating_add(size);
            if is_file {
                wanted.push((name, entry));
            }
        }
    }
    if declared_total > MAX_TOTAL_BYTES {
        problems.push(ArchiveProblem::whole(format!(
            "the entries declare {} uncompressed in all; at most {} are allowed",
            size_text(declared_total),
            size_text(MAX_TOTAL_BYTES)
        )));
    }
    if !problems.is_empty() {
        return Err(refuse(problems));
    }

    wanted.sort_by(|a, b| a.0.cmp(&b.0));
    let count = wanted.len();
    let reader = zip.files().map_err(unreadable)?.reader_mut();
    let mut files = Vec::with_capacity(count);
    let mut read_total: u64 = 0;
    for (done, (name, entry)) in wanted.into_iter().enumerate() {
        progress(done, count);
        let declared = entry.size();
        let mut bytes = Vec::with_capacity(declared.min(MAX_ENTRY_BYTES) as usize);
        let read = entry
            .with_reader(&mut *reader, ZipReadOptions::new())
            .map_err(std::io::Error::other)
            .and_then(|file| file.take(MAX_ENTRY_BYTES + 1).read_to_end(&mut bytes));
        let len = bytes.len() as u64;
        let message = match read {
            Err(e) => Some(format!("the entry cannot be read: {e}")),
            Ok(_) if len > MAX_ENTRY_BYTES => Some(format!(
                "the entry holds more than {} (it declares {})",
                size_text(MAX_ENTRY_BYTES),
                size_text(declared)
            )),
            Ok(_) if len != declared => Some(format!(
                "the entry holds {len} bytes but declares {declared}"
            )),
            Ok(_) => None,
        };
        if let Some(message) = message {
            problems.push(ArchiveProblem::new(&name, "", message));
            continue;
        }
        read_total += len;
        if read_total > MAX_TOTAL_BYTES {
            problems.push(ArchiveProblem::whole(format!(
                "the entries hold more than {} in all",
                size_text(MAX_TOTAL_BYTES)
            )));
            break;
        }
        files.push(ArchiveFile { name, bytes });
    }
    progress(count, count);
    if !problems.is_empty() {
        return Err(refuse(problems));
    }
    Ok(Archive {
        source_name: source_name.to_owned(),
        files,
    })
}

/// The `(slug, version)` of a `tools/<slug>/<version>/tool.json` path.
fn tool_path(name: &str) -> Option<(&str, &str)> {
    match name.split('/').collect::<Vec<_>>().as_slice() {
        [TOOLS_DIR, slug, version, TOOL_FILE] => Some((slug, version)),
        _ => None,
    }
}

/// Add the problems of a document error (parse error, or violations with pointers).
fn push_error(problems: &mut Vec<ArchiveProblem>, entry: &str, error: &Error) {
    match error.violations() {
        [] => problems.push(ArchiveProblem::new(entry, "", error.reason())),
        violations => problems.extend(
            violations
                .iter()
                .map(|v| ArchiveProblem::new(entry, v.pointer.clone(), v.message.clone())),
        ),
    }
}

/// Parse a file of an archive as a JSON object document.
fn parse_entry(file: &ArchiveFile) -> Result<Value> {
    let text = std::str::from_utf8(&file.bytes).map_err(|e| {
        Error::invalid(
            file.name.clone(),
            vec![Violation::new("", format!("the file is not UTF-8: {e}"))],
        )
    })?;
    model::parse_doc(text, Path::new(&file.name))
}

/// Check the files of an archive as one bundle, as the catalog would read them, and return
/// every problem found (empty: the archive is a valid bundle), each with its file and JSON
/// pointer, in entry order.
///
/// What only an archive can get wrong is checked here: `bundle.json` is missing, a file is
/// outside the bundle layout, the bundle is the built-in one, a file does not parse (with the
/// store's line and column). Everything else is `validate`'s rules over the entries as they
/// would lie in `bundles/<bundleID>/` ([`validate::check_documents`]): the files' schemas,
/// names, IDs, folders, timestamps, argument schemas, placeholders, and duplicates and
/// exported-name collisions among them. Rules that depend on where a file is used are left
/// out: a tool whose host this catalog does not allow, or whose native function this build
/// lacks, is imported and listed as unavailable, as a copied file is.
///
/// Without `names`, exported-name collisions among the tools are left to the caller: an
/// import checks them with the catalog's tools, under its lock, as `tool put` does (one
/// `CONFLICT` for both).
pub(crate) fn check_archive(files: &[ArchiveFile], names: bool) -> Vec<ArchiveProblem> {
    let mut problems = Vec::new();
    let mut bundle_id = None;
    match files.iter().find(|f| f.name == BUNDLE_FILE) {
        None => problems.push(ArchiveProblem::new(
            BUNDLE_FILE,
            "",
            "the archive has no bundle.json",
        )),
        Some(file) => {
            if let Ok(doc) = parse_entry(file) {
                bundle_id = doc
                    .get("bundleID")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let builtin_id = builtin::bundle_id().to_string();
                if bundle_id.as_deref() == Some(builtin_id.as_str())
                    || doc.get("slug").and_then(Value::as_str) == Some(builtin::SLUG)
                    || doc.get("isBuiltIn") == Some(&Value::Bool(true))
                {
                    problems.push(ArchiveProblem::new(
                        BUNDLE_FILE,
                        "",
                        "the archive holds the built-in bundle (slug 'builtin', isBuiltIn: true or its bundleID), which is compiled into toolctl",
                    ));
                }
            }
        }
    }
    for file in files {
        if file.name != BUNDLE_FILE && tool_path(&file.name).is_none() {
            problems.push(ArchiveProblem::new(
                &file.name,
                "",
                "the file is not part of a bundle: only bundle.json and tools/<slug>/<version>/tool.json are",
            ));
        } else if let Err(e) = parse_entry(file) {
            push_error(&mut problems, &file.name, &e);
        }
    }
    validate_entries(files, bundle_id.as_deref(), names, &mut problems);
    problems.sort_by(|a, b| a.entry.cmp(&b.entry));
    problems
}

/// The errors `validate` finds in the entries, where the checks above have not said so
/// already.
fn validate_entries(
    files: &[ArchiveFile],
    bundle_id: Option<&str>,
    names: bool,
    problems: &mut Vec<ArchiveProblem>,
) {
    let dir = bundle_id.unwrap_or_default();
    let documents: Vec<(PathBuf, Place, &str)> = files
        .iter()
        .filter_map(|file| {
            let place = if file.name == BUNDLE_FILE {
                Place::Bundle {
                    dir: dir.to_owned(),
                }
            } else {
                let (slug, version) = tool_path(&file.name)?;
                Place::Tool {
                    dir: dir.to_owned(),
                    slug: slug.to_owned(),
                    version: version.to_owned(),
                }
            };
            let text = std::str::from_utf8(&file.bytes).ok()?;
            Some((PathBuf::from(&file.name), place, text))
        })
        .collect();
    for finding in validate::check_documents(&documents) {
        let entry = printable(&finding.file.display().to_string());
        let pointer = finding.pointer.unwrap_or_default();
        let said = problems
            .iter()
            .any(|p| p.entry == entry && (p.pointer == pointer || p.pointer.is_empty()));
        // Without a bundleID to compare with, a tool's cannot be wrong.
        let no_folder = bundle_id.is_none() && finding.rule == "folder" && pointer == "/bundleID";
        if finding.severity == Severity::Error
            && !said
            && !no_folder
            && !matches!(finding.rule, "parse" | "native")
            && (names || finding.rule != "name-collision")
        {
            problems.push(ArchiveProblem::new(&entry, pointer, finding.message));
        }
    }
}

/// A bundle written as a ZIP archive, in memory.
#[derive(Debug)]
pub struct ExportedBundle {
    pub bundle: BundleEntry,
    /// The archive.
    pub bytes: Vec<u8>,
    /// How many tool versions it holds.
    pub tools: usize,
    /// Files in the bundle folder that are not part of a bundle, left out of the archive.
    pub left_out: Vec<PathBuf>,
}

/// What `bundle import` may change.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Import a copy: a new bundleID and new toolIDs.
    pub as_new: bool,
    /// Give the bundle this slug.
    pub slug: Option<String>,
    /// The catalog may hold the bundle already: add the tool versions it lacks, take identical
    /// ones as they are, and refuse one whose content differs (a version never changes).
    pub update: bool,
}

/// What `bundle import` did.
#[derive(Debug)]
pub struct ImportReport {
    /// The bundle as the catalog now reads it.
    pub bundle: BundleEntry,
    /// How many tool versions were imported.
    pub tools: usize,
    pub as_new: bool,
    /// With `update`: the versions added (`slug@version`), in archive order. Without it, every
    /// version.
    pub added: Vec<String>,
    /// With `update`: the versions the catalog already held, identical.
    pub unchanged: Vec<String>,
}

/// The files an import writes, decided before the lock is taken.
#[derive(Debug)]
struct Plan {
    bundle_id: Uuid,
    slug: String,
    /// `bundle.json` first, then the tools, as paths in the bundle folder with their bytes.
    files: Vec<ArchiveFile>,
    /// `(entry, toolID)` of each tool.
    tool_ids: Vec<(String, Uuid)>,
}

impl Plan {
    /// The `(slug, version)` folders of the tools the plan writes.
    fn tool_folders(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().filter_map(|file| tool_path(&file.name))
    }
}

impl Catalog {
    /// Write bundle `name` (slug or ID) as a ZIP archive: `bundle.json` and every
    /// `tools/<slug>/<version>/tool.json` (disabled versions too), bytes as on disk, sorted,
    /// with fixed timestamps, so the same bundle always gives the same bytes. The built-in
    /// bundle cannot be exported. A file that would not import (does not parse, breaks a rule,
    /// is too big) refuses the export, named with its problem; nothing is silently dropped.
    pub fn export_bundle(&self, name: &str) -> Result<ExportedBundle> {
        let bundle = self.find_bundle(name)?;
        let Some(dir) = bundle.dir.clone() else {
            return Err(Error::forbidden(
                "the built-in bundle cannot be exported: its tools are compiled into every toolctl",
                Some(Hint::ExportBuiltin),
            ));
        };
        let (files, left_out) = bundle_files(&dir)?;
        let mut problems = Vec::new();
        let mut total: u64 = 0;
        for file in &files {
            let size = file.bytes.len() as u64;
            total += size;
            if let Err(message) = entry_kind(&file.name) {
                problems.push(ArchiveProblem::new(&file.name, "", message));
            } else if size > MAX_ENTRY_BYTES {
                problems.push(ArchiveProblem::new(
                    &file.name,
                    "",
                    format!(
                        "the file is {}; an archive holds files of at most {}",
                        size_text(size),
                        size_text(MAX_ENTRY_BYTES)
                    ),
                ));
            }
        }
        if total > MAX_TOTAL_BYTES {
            problems.push(ArchiveProblem::whole(format!(
                "the bundle's files hold {}; an archive holds at most {}",
                size_text(total),
                size_text(MAX_TOTAL_BYTES)
            )));
        }
        if files.len() > MAX_ENTRIES {
            problems.push(ArchiveProblem::whole(format!(
                "the bundle has {} files; an archive holds at most {MAX_ENTRIES}",
                files.len()
            )));
        }
        problems.extend(check_archive(&files, true));
        if !problems.is_empty() {
            return Err(invalid(&dir.display().to_string(), &problems));
        }
        let bytes =
            zip_files(&files).map_err(|e| Error::io("cannot build the archive of", &dir, e))?;
        Ok(ExportedBundle {
            tools: files.len() - 1,
            bundle,
            bytes,
            left_out,
        })
    }

    /// Import the bundle an archive holds (see [`read_archive`]), all or nothing.
    ///
    /// The content is checked first ([`check_archive`]); then, under the catalog lock,
    /// conflicts: the bundleID already in the catalog, the slug used by a bundle, a toolID used
    /// by any tool. Each is reported (`CONFLICT`) and nothing is overwritten. Two slug or
    /// version folders of the archive that differ only by case are refused too (`CONFLICT`,
    /// as `tool put` refuses them), and with `update` one beside a folder of the bundle. With
    /// `as_new`, the bundle gets a new bundleID, its tools new toolIDs, and its `createdAt` and
    /// `modifiedAt` are now (the tools keep theirs, so "newest version" stays right); `slug`
    /// renames it. Only the raw documents are edited; files nothing changed are written byte
    /// for byte as in the archive. The files go into a hidden staging folder, each written
    /// atomically, which one rename turns into `bundles/<bundleID>`. `progress` gets (files
    /// written, files).
    pub fn import_bundle(
        &mut self,
        archive: &Archive,
        options: &ImportOptions,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<ImportReport> {
        let problems = check_archive(&archive.files, false);
        if !problems.is_empty() {
            return Err(invalid(&archive.source_name, &problems));
        }
        let plan = plan_import(archive, options)?;
        let as_new = options.as_new;
        let update = options.update;
        self.write(
            |catalog| {
                if update {
                    catalog.update_locked(&plan, &mut progress)
                } else {
                    catalog.import_locked(&plan, as_new, &mut progress)
                }
            },
            |report| Some(report.bundle.bundle.bundle_id.to_string()),
        )
    }

    /// `import --update`: add the archive's tool versions the catalog's copy of the bundle
    /// lacks. The bundle's own `bundle.json` and the versions it holds stay as they are; a
    /// version whose content differs from the archive's (its `isEnabled` aside, which is the
    /// catalog's own switch) is a conflict, and so is a new version whose toolID is taken.
    /// Everything is checked before anything is written; each file is written atomically, so
    /// an interrupted update is finished by running it again. A bundle the catalog lacks is
    /// imported whole.
    fn update_locked(
        &self,
        plan: &Plan,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<ImportReport> {
        let Scan { items: bundles, .. } = self.bundles()?;
        let Some(local) = bundles
            .iter()
            .find(|b| b.bundle.bundle_id == plan.bundle_id)
            .cloned()
        else {
            return self.import_locked(plan, false, progress);
        };
        if local.is_deleted() {
            return Err(Error::forbidden(
                format!(
                    "bundle '{}' is deleted; its tools cannot change",
                    local.bundle.slug
                ),
                Some(Hint::RestoreBundle(
                    local.bundle.bundle_id.to_string().into(),
                )),
            ));
        }
        let dir = self.bundles_dir().join(plan.bundle_id.to_string());
        // Before any file is read: on a case-insensitive file system `tools/Weather/v1` would
        // read (and then write) the catalog's `tools/weather/v1`.
        refuse_case_twins(&dir.join(TOOLS_DIR), plan.tool_folders())?;
        let Scan { items: tools, .. } = self.all_tools()?;
        let used: HashMap<Uuid, String> = tools
            .iter()
            .map(|t| (t.tool.tool_id, t.reference()))
            .collect();
        let without_switch = |mut doc: Value| {
            if let Some(fields) = doc.as_object_mut() {
                fields.shift_remove("isEnabled");
            }
            doc
        };
        let (mut added, mut unchanged, mut conflicts) = (Vec::new(), Vec::new(), Vec::new());
        let mut writes = Vec::new();
        for (file, (entry, tool_id)) in plan.files.iter().skip(1).zip(&plan.tool_ids) {
            let version = version_of(entry);
            let target = dir.join(&file.name);
            match crate::base::capped::read_bytes(&target, Some(&self.root)) {
                Ok(bytes) => {
                    let ours = model::parse_doc(&String::from_utf8_lossy(&bytes), &target)?;
                    if same_json(&without_switch(ours), &without_switch(parse_entry(file)?)) {
                        unchanged.push(version);
                    } else {
                        conflicts.push(json!({
                            "kind": "content",
                            "entry": entry,
                            "message": format!("{version} differs from the catalog's {}/{version}: a version's content never changes", local.bundle.slug),
                        }));
                    }
                }
                Err(crate::base::capped::ReadError::Missing) => {
                    if let Some(reference) = used.get(tool_id) {
                        conflicts.push(json!({
                            "kind": "toolID",
                            "value": tool_id,
                            "entry": entry,
                            "usedBy": reference,
                            "message": format!("toolID {tool_id} of {entry} is already used by {reference}"),
                        }));
                    } else {
                        added.push(version);
                        writes.push((target, file));
                    }
                }
                Err(e) => return Err(crate::catalog::Error::unreadable(&target, e)),
            }
        }
        if !conflicts.is_empty() {
            let message = match conflicts.as_slice() {
                [one] => format!(
                    "cannot update bundle '{}': {}",
                    local.bundle.slug,
                    one["message"].as_str().unwrap_or_default()
                ),
                many => format!(
                    "cannot update bundle '{}': {} conflicts with the catalog",
                    local.bundle.slug,
                    many.len()
                ),
            };
            return Err(Error::Conflict {
                message,
                details: json!({ "bundleID": plan.bundle_id, "slug": local.bundle.slug, "conflicts": conflicts }),
                hint: Some(
                            "nothing was written; a changed tool needs a new version (or import the archive as a copy with new IDs)".into(),
                        ),
            });
        }
        let new_slugs: Vec<(String, String)> = writes
            .iter()
            .filter_map(|(_, file)| tool_path(&file.name))
            .map(|(slug, _)| (local.bundle.slug.clone(), slug.to_owned()))
            .collect();
        self.refuse_added_collisions(&bundles, super::names::RENAME_HINT, &new_slugs)?;
        let count = writes.len();
        for (done, (target, file)) in writes.into_iter().enumerate() {
            progress(done, count);
            if let Some(parent) = target.parent() {
                store::ensure_dir(parent)?;
            }
            store::write_atomic(&target, &file.bytes)?;
        }
        progress(count, count);
        Ok(ImportReport {
            bundle: local,
            tools: added.len(),
            as_new: false,
            added,
            unchanged,
        })
    }

    fn import_locked(
        &self,
        plan: &Plan,
        as_new: bool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<ImportReport> {
        let bundles_dir = self.bundles_dir();
        remove_leftover_staging(&bundles_dir);
        self.check_import_conflicts(plan)?;
        // A new bundle folder: only the archive's own folders can differ only by case.
        refuse_case_twins(
            &bundles_dir.join(plan.bundle_id.to_string()).join(TOOLS_DIR),
            plan.tool_folders(),
        )?;
        // A soft-deleted bundle's tools have no exported names until it is restored.
        let deleted = plan.files.first().is_some_and(|file| {
            serde_json::from_slice::<Value>(&file.bytes)
                .is_ok_and(|doc| doc.get("softDeletedAt").is_some_and(|at| !at.is_null()))
        });
        if !deleted {
            let slugs: Vec<(String, String)> = plan
                .tool_folders()
                .map(|(slug, _)| (plan.slug.clone(), slug.to_owned()))
                .collect();
            self.refuse_added_collisions(
                &self.bundles()?.items,
                super::names::IMPORT_HINT,
                &slugs,
            )?;
        }
        store::ensure_dir(&bundles_dir)?;
        let id = plan.bundle_id.to_string();
        let target = bundles_dir.join(&id);
        store::create_dir_atomic(&target, STAGING_PREFIX, |staging| {
            let count = plan.files.len();
            for (done, file) in plan.files.iter().enumerate() {
                progress(done, count);
                store::write_atomic(&staging.join(&file.name), &file.bytes)?;
            }
            progress(count, count);
            Ok(())
        })?;
        let bundle = self
            .load_bundle(&target, &id)
            .map_err(|problem| Error::Unreadable {
                what: "bundle",
                name: id.clone(),
                problems: vec![problem],
            })?
            .ok_or_else(|| Error::NotFound {
                what: "bundle",
                name: id.clone(),
                hint: None,
            })?;
        Ok(ImportReport {
            bundle,
            tools: plan.tool_ids.len(),
            as_new,
            added: plan.tool_ids.iter().map(|(e, _)| version_of(e)).collect(),
            unchanged: Vec::new(),
        })
    }

    /// Every way the planned bundle collides with the catalog, as one `CONFLICT`.
    fn check_import_conflicts(&self, plan: &Plan) -> Result<()> {
        let Scan { items: bundles, .. } = self.bundles()?;
        let id = plan.bundle_id;
        let mut conflicts = Vec::new();
        let mut ids_taken = false;
        if let Some(other) = bundles.iter().find(|b| b.bundle.bundle_id == id) {
            ids_taken = true;
            conflicts.push(json!({
                "kind": "bundleID",
                "value": id,
                "usedBy": other.bundle.slug,
                "message": format!("bundleID {id} is already in the catalog: bundle {}", other.bundle.slug),
            }));
        } else if self.bundles_dir().join(id.to_string()).exists() {
            ids_taken = true;
            conflicts.push(json!({
                "kind": "bundleID",
                "value": id,
                "usedBy": format!("bundles/{id}"),
                "message": format!("the folder bundles/{id} already exists (its bundle.json cannot be read)"),
            }));
        }
        let slug_taken = bundles.iter().find(|b| b.bundle.slug == plan.slug);
        if let Some(other) = slug_taken {
            conflicts.push(json!({
                "kind": "slug",
                "value": plan.slug,
                "usedBy": other.bundle.bundle_id,
                "message": format!("bundle slug '{}' is already used by bundle {}", plan.slug, other.bundle.bundle_id),
            }));
        }
        let Scan { items: tools, .. } = self.all_tools()?;
        let used: HashMap<Uuid, String> = tools
            .iter()
            .map(|t| (t.tool.tool_id, t.reference()))
            .collect();
        for (entry, tool_id) in &plan.tool_ids {
            if let Some(reference) = used.get(tool_id) {
                ids_taken = true;
                conflicts.push(json!({
                    "kind": "toolID",
                    "value": tool_id,
                    "entry": entry,
                    "usedBy": reference,
                    "message": format!("toolID {tool_id} of {entry} is already used by {reference}"),
                }));
            }
        }
        if conflicts.is_empty() {
            return Ok(());
        }
        let message = match conflicts.as_slice() {
            [one] => format!(
                "cannot import bundle '{}': {}",
                plan.slug,
                one["message"].as_str().unwrap_or_default()
            ),
            many => format!(
                "cannot import bundle '{}': {} conflicts with the catalog",
                plan.slug,
                many.len()
            ),
        };
        let hint = Hint::ImportAs {
            new_ids: ids_taken,
            new_slug: !ids_taken || slug_taken.is_some(),
        };
        Err(Error::Conflict {
            message,
            details: json!({ "bundleID": id, "slug": plan.slug, "conflicts": conflicts }),
            hint: Some(hint),
        })
    }
}

/// `slug@version` of an archive entry `tools/<slug>/<version>/tool.json`.
fn version_of(entry: &str) -> String {
    let mut parts = entry.split('/').skip(1);
    match (parts.next(), parts.next()) {
        (Some(slug), Some(version)) => format!("{slug}@{version}"),
        _ => entry.to_owned(),
    }
}

/// Decide the files an import writes: the archive's bytes, or, where `--as-new` or `--slug`
/// change a document, the edited raw document (unknown fields and key order kept).
fn plan_import(archive: &Archive, options: &ImportOptions) -> Result<Plan> {
    let source = &archive.source_name;
    let now = crate::base::time::now();
    let bundle_file = archive
        .files
        .iter()
        .find(|f| f.name == BUNDLE_FILE)
        .ok_or_else(|| invalid(source, &[ArchiveProblem::new(BUNDLE_FILE, "", "missing")]))?;
    let mut doc = parse_entry(bundle_file)?;
    let bundle: Bundle = model::typed(&doc, BUNDLE_FILE)?;
    let bundle_id = if options.as_new {
        new_id()
    } else {
        bundle.bundle_id
    };
    let mut slug = bundle.slug.clone();
    let mut edits: Vec<(&str, Value)> = Vec::new();
    if options.as_new {
        edits.push(("bundleID", bundle_id.to_string().into()));
        edits.push(("createdAt", timestamp(now)));
        edits.push(("modifiedAt", timestamp(now)));
    }
    if let Some(new_slug) = &options.slug {
        let mut violations = Vec::new();
        rules::check_name_at(NameKind::Slug, new_slug, "", &mut violations);
        if new_slug == builtin::SLUG {
            violations.push(Violation::new(
                "",
                "the slug 'builtin' belongs to the built-in bundle",
            ));
        }
        if !violations.is_empty() {
            return Err(Error::invalid(SLUG_INPUT, violations));
        }
        if *new_slug != slug {
            slug = new_slug.clone();
            edits.push(("slug", slug.clone().into()));
            // A new slug is a structural change.
            edits.push(("modifiedAt", timestamp(now)));
        }
    }
    let bundle_bytes = if edits.is_empty() {
        bundle_file.bytes.clone()
    } else {
        if let Some(fields) = doc.as_object_mut() {
            for (key, value) in edits {
                // An existing key keeps its place (preserve_order).
                fields.insert(key.to_owned(), value);
            }
        }
        store::to_pretty_json(&doc)
    };
    let mut files = vec![ArchiveFile {
        name: BUNDLE_FILE.to_owned(),
        bytes: bundle_bytes,
    }];
    let mut tool_ids = Vec::new();
    for file in archive.files.iter().filter(|f| f.name != BUNDLE_FILE) {
        let mut doc = parse_entry(file)?;
        let tool: Tool = model::typed(&doc, &file.name)?;
        if !options.as_new {
            tool_ids.push((file.name.clone(), tool.tool_id));
            files.push(file.clone());
            continue;
        }
        let tool_id = new_id();
        if let Some(fields) = doc.as_object_mut() {
            fields.insert("toolID".to_owned(), tool_id.to_string().into());
            fields.insert("bundleID".to_owned(), bundle_id.to_string().into());
        }
        tool_ids.push((file.name.clone(), tool_id));
        files.push(ArchiveFile {
            name: file.name.clone(),
            bytes: store::to_pretty_json(&doc),
        });
    }
    Ok(Plan {
        bundle_id,
        slug,
        files,
        tool_ids,
    })
}

/// Remove staging folders of imports that were killed (called under the catalog lock, when no
/// import can be running). Best effort: a leftover is hidden and harms nothing.
fn remove_leftover_staging(bundles_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(bundles_dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGING_PREFIX)
        {
            let _ = store::remove_dir_all(&entry.path());
        }
    }
}

/// The files of a bundle folder that belong in its archive (`bundle.json` and every
/// `tools/<slug>/<version>/tool.json`, in name order), and the visible files that do not
/// belong to a bundle. Hidden files and folders (temporary files of killed writers) are
/// skipped, as every reader skips them; a version folder without a `tool.json` too.
fn bundle_files(dir: &Path) -> Result<(Vec<ArchiveFile>, Vec<PathBuf>)> {
    // The bundle folder is `<catalog>/bundles/<id>`: symlinks must stay in the catalog.
    let root = dir.ancestors().nth(2);
    let read = |path: &Path| {
        crate::base::capped::read_bytes(path, root)
            .map_err(|e| crate::catalog::Error::unreadable(path, e))
    };
    let mut files = vec![ArchiveFile {
        name: BUNDLE_FILE.to_owned(),
        bytes: read(&dir.join(BUNDLE_FILE))?,
    }];
    let mut left_out = Vec::new();
    for (name, path, is_dir) in visible_entries(dir)? {
        if name == BUNDLE_FILE && !is_dir {
            continue;
        }
        if name != TOOLS_DIR || !is_dir {
            left_out.push(path);
            continue;
        }
        for (slug, slug_path, is_dir) in visible_entries(&path)? {
            if !is_dir {
                left_out.push(slug_path);
                continue;
            }
            for (version, version_path, is_dir) in visible_entries(&slug_path)? {
                if !is_dir {
                    left_out.push(version_path);
                    continue;
                }
                for (file, file_path, _) in visible_entries(&version_path)? {
                    if file == TOOL_FILE {
                        files.push(ArchiveFile {
                            name: format!("{TOOLS_DIR}/{slug}/{version}/{TOOL_FILE}"),
                            bytes: read(&file_path)?,
                        });
                    } else {
                        left_out.push(file_path);
                    }
                }
            }
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    left_out.sort();
    Ok((files, left_out))
}

/// The visible entries of a folder: (name, path, is a folder), in name order.
fn visible_entries(dir: &Path) -> Result<Vec<(String, PathBuf, bool)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("cannot read", dir, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot read", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Follows symlinks, as the readers do.
        out.push((name, path.clone(), path.is_dir()));
    }
    out.sort();
    Ok(out)
}

/// Zip files deterministically: in the given order, deflated at a fixed level, with a fixed
/// timestamp (1980-01-01, the format's first), mode 0644 and no extra fields.
fn zip_files(files: &[ArchiveFile]) -> std::io::Result<Vec<u8>> {
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644)
        .system(System::Unix);
    let mut writer = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for file in files {
        writer
            .start_file(file.name.as_str(), options)
            .map_err(std::io::Error::other)?;
        writer.write_all(&file.bytes)?;
    }
    Ok(writer.finish().map_err(std::io::Error::other)?.into_inner())
}

/// Write an exported archive to `path` atomically. An existing file is a `CONFLICT` unless
/// `force`; a missing folder is an error.
pub fn write_archive_file(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    // Unlike catalog files, an output file's folder is never created on the way.
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(Error::io(
            "cannot write",
            path,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    if force {
        return store::write_atomic(path, bytes);
    }
    if store::create_atomic(path, bytes)? {
        return Ok(());
    }
    Err(Error::Conflict {
        message: format!("{} already exists", path.display()),
        details: json!({ "path": path }),
        hint: Some(Hint::Overwrite),
    })
}

#[cfg(test)]
mod tests;
