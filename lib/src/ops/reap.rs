//! `bundle reap`: remove soft-deleted bundles once their grace period is over, for cron.
//!
//! A bundle is removed only when it was soft-deleted longer ago than the grace period and its
//! folder holds nothing but `bundle.json`, empty folders, temporary files left by killed
//! writers and the files operating systems leave in folders ([`is_os_junk`]). A bundle that
//! still holds tools
//! (or any other file) is reported, never removed: nothing a user kept is lost. Removal first
//! renames the folder to a hidden name (atomic; lists skip hidden folders) and then deletes
//! it, so a crash half-way leaves no half-bundle visible; the next reap finishes the job.
//! A bundle an I/O error leaves in place (a folder that cannot be read or moved) is reported
//! as failed and the others are still reaped. It runs under the catalog lock, so two reaps at once are safe: the second finds nothing.

use crate::catalog::error::{Error, Result};
use crate::catalog::{BUNDLE_FILE, BundleEntry, Catalog, store};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

const REAPING_PREFIX: &str = ".reaping-";

/// One bundle `reap` looked at.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReapOutcome {
    #[serde(rename = "bundleID")]
    pub bundle_id: Uuid,
    pub slug: String,
    pub soft_deleted_at: String,
    /// Why it was kept (absent when it was reaped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_because: Option<String>,
    /// Why it could not be looked at or removed (only in [`ReapReport::failed`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `reap` did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReapReport {
    pub dry_run: bool,
    pub older_than_secs: u64,
    pub reaped: Vec<ReapOutcome>,
    pub kept: Vec<ReapOutcome>,
    /// Bundles an I/O error left in place (the others are still reaped: one unreadable or
    /// immovable folder does not stop a cron job from removing the rest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<ReapOutcome>,
}

impl ReapReport {
    pub fn is_empty(&self) -> bool {
        self.reaped.is_empty() && self.kept.is_empty() && self.failed.is_empty()
    }
}

impl Catalog {
    /// Remove bundles soft-deleted more than `older_than` ago (the configured grace period
    /// when `None`) whose folders are empty; report the others. `progress` is called with
    /// (done, total) as bundles are handled.
    pub fn reap(
        &mut self,
        older_than: Option<Duration>,
        dry_run: bool,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<ReapReport> {
        if !self.exists() {
            let older_than = older_than.unwrap_or(self.config().grace_period);
            return Ok(ReapReport {
                dry_run,
                older_than_secs: older_than.as_secs(),
                ..ReapReport::default()
            });
        }
        self.locked(|catalog| {
            // The grace period is read under the lock, like everything a write depends on.
            let older_than = older_than.unwrap_or(catalog.config().grace_period);
            let mut report = ReapReport {
                dry_run,
                older_than_secs: older_than.as_secs(),
                ..ReapReport::default()
            };
            finish_interrupted_reaps(&catalog.bundles_dir());
            let now = jiff::Timestamp::now();
            let due: Vec<BundleEntry> = catalog
                .bundles()?
                .items
                .into_iter()
                .filter(|b| {
                    b.bundle.soft_deleted_at.is_some_and(|at| {
                        now.duration_since(at).as_secs_f64() >= older_than.as_secs_f64()
                    })
                })
                .collect();
            for (done, bundle) in due.iter().enumerate() {
                progress(done, due.len());
                let Some(dir) = &bundle.dir else { continue };
                let mut outcome = ReapOutcome {
                    bundle_id: bundle.bundle.bundle_id,
                    slug: bundle.bundle.slug.clone(),
                    soft_deleted_at: bundle
                        .bundle
                        .soft_deleted_at
                        .map(|t| t.to_string())
                        .unwrap_or_default(),
                    kept_because: None,
                    error: None,
                };
                let removed = why_not_empty(dir).and_then(|why| match why {
                    Some(reason) => Ok(Some(reason)),
                    None if dry_run => Ok(None),
                    None => remove_bundle_dir(dir, bundle.bundle.bundle_id).map(|()| None),
                });
                match removed {
                    Ok(Some(reason)) => {
                        outcome.kept_because = Some(reason);
                        report.kept.push(outcome);
                    }
                    Ok(None) => report.reaped.push(outcome),
                    Err(error) => {
                        outcome.error = Some(error.to_string());
                        report.failed.push(outcome);
                    }
                }
            }
            progress(due.len(), due.len());
            Ok(report)
        })
    }
}

/// Why a bundle folder cannot be removed: it holds tools or other files.
fn why_not_empty(dir: &Path) -> Result<Option<String>> {
    let mut tools = 0usize;
    let mut others = Vec::new();
    count_files(dir, dir, &mut tools, &mut others)?;
    Ok(match (tools, others.as_slice()) {
        (0, []) => None,
        (0, [one]) => Some(format!("it holds the file {one}")),
        (0, many) => Some(format!("it holds {} other files", many.len())),
        (1, _) => Some("it still holds 1 tool".to_owned()),
        (n, _) => Some(format!("it still holds {n} tools")),
    })
}

fn count_files(root: &Path, dir: &Path, tools: &mut usize, others: &mut Vec<String>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("cannot read", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot read", dir, e))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| Error::io("cannot read", &path, e))?;
        if kind.is_dir() {
            count_files(root, &path, tools, others)?;
        } else if path.file_name().is_some_and(|n| n == "tool.json") {
            *tools += 1;
        } else if entry
            .file_name()
            .to_string_lossy()
            .starts_with(store::TEMP_PREFIX)
        {
            // Left by a writer killed mid-write: garbage, removed with the folder.
        } else if is_os_junk(&entry.file_name().to_string_lossy()) {
            // Removed with the folder too.
        } else if path != root.join(BUNDLE_FILE) {
            others.push(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
        }
    }
    Ok(())
}

/// A file an operating system leaves in folders on its own, which nobody keeps on purpose:
/// macOS's `.DS_Store` and AppleDouble `._*` files (on shares and synced folders), Windows'
/// `Thumbs.db` and `desktop.ini`. A catalog on a folder synced from a Mac gets them in every
/// bundle folder someone looked at; were they kept files, such a bundle could never be
/// reaped.
fn is_os_junk(name: &str) -> bool {
    name == ".DS_Store"
        || name.starts_with("._")
        || name.eq_ignore_ascii_case("Thumbs.db")
        || name.eq_ignore_ascii_case("desktop.ini")
}

fn remove_bundle_dir(dir: &Path, id: Uuid) -> Result<()> {
    let Some(parent) = dir.parent() else {
        return Ok(());
    };
    let hidden = parent.join(format!("{REAPING_PREFIX}{id}"));
    // The one step whose failure leaves the bundle in place.
    store::rename(dir, &hidden)?;
    // Out of the catalog now: what is left of it is removed here, or by the next reap.
    let _ = store::remove_dir_all(&hidden);
    let _ = store::sync_dir(parent);
    Ok(())
}

/// Remove what an interrupted reap had already hidden.
fn finish_interrupted_reaps(bundles_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(bundles_dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(REAPING_PREFIX)
        {
            let _ = store::remove_dir_all(&entry.path());
        }
    }
}
