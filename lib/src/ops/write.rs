//! Every change to a catalog: init, put, enable/disable, delete, restore.
//!
//! Each operation takes the catalog write lock, then reads what it checks, so a check and the
//! write that depends on it are one atomic step across processes. Files are written through
//! [`store`](crate::catalog::store) (atomic rename), and only the raw document is edited, so nothing a
//! user wrote is dropped. `modifiedAt` moves on structural changes only, never on
//! enable/disable.

use super::names::{RENAME_HINT, SLUG_HINT};
use crate::catalog::config::{CONFIG_FILE, Config};
use crate::catalog::error::{Error, GivenBundle, Hint, Result, Violation};
use crate::catalog::lock;
use crate::catalog::model::{self, Bundle, Tool};
use crate::catalog::rules::{self, NameKind};
use crate::catalog::{
    BUNDLE_FILE, BUNDLES_DIR, BundleEntry, Catalog, STATE_DIR, TOOL_FILE, TOOLS_DIR, ToolEntry,
    VersionChoice, builtin, list_dir_names, store,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// What `init` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InitReport {
    pub root: PathBuf,
    /// `false` when the folder already was a catalog (nothing was overwritten).
    pub created: bool,
}

/// Whether a toggle changed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    Changed,
    Unchanged,
}

/// The input of `bundle put`.
#[derive(Debug, Clone)]
pub enum BundleInput {
    /// A whole `bundle.json` document: creates, or replaces the bundle with its `bundleID`.
    Document { doc: Value, source_name: String },
    /// Fields from flags: creates, or (with `id`) replaces these fields of an existing bundle,
    /// keeping its other fields.
    Fields {
        id: Option<Uuid>,
        slug: String,
        display_name: Option<String>,
        description: Option<String>,
        enabled: bool,
    },
}

pub(crate) use crate::catalog::fill::{
    fill_bundle_fields, fill_for_put, new_id, stamp_created, timestamp,
};

fn uuid_v7(value: &Value, pointer: &str, source_name: &str) -> Result<Uuid> {
    let bad = |message: String| Error::invalid(source_name, vec![Violation::new(pointer, message)]);
    let text = value
        .as_str()
        .ok_or_else(|| bad("must be a UUID string".to_owned()))?;
    let id = Uuid::try_parse(text).map_err(|e| bad(format!("'{text}' is not a UUID: {e}")))?;
    if id.get_version_num() != 7 {
        return Err(bad(format!(
            "'{text}' is a version {} UUID; IDs are UUIDv7 (leave the field out to have one made)",
            id.get_version_num()
        )));
    }
    Ok(id)
}

/// Remove a tool file, then its version and slug folders when that leaves them empty.
fn remove_tool_file(path: &Path) -> Result<()> {
    store::remove_file(path)?;
    if let Some(version_dir) = path.parent()
        && store::remove_dir_if_empty(version_dir)?
        && let Some(slug_dir) = version_dir.parent()
    {
        store::remove_dir_if_empty(slug_dir)?;
    }
    Ok(())
}

/// Write `.toolctl/.gitignore` and `toolctl.json` into `root` if they are missing, the config
/// last: it is what makes a folder a catalog, so it is written only once the rest is there.
fn ensure_catalog_files(root: &Path) -> Result<bool> {
    store::create_state_dir(&root.join(STATE_DIR))?;
    let config = root.join(CONFIG_FILE);
    let created = !config.is_file();
    if created {
        store::write_json(&config, &Config::initial_doc())?;
    }
    Ok(created)
}

impl Catalog {
    /// Make `root` a catalog (`toolctl.json`, `.toolctl/.gitignore`, `bundles/`). An existing
    /// catalog is left as it is.
    ///
    /// `toolctl.json` is written last, so an init that fails (a file where `.toolctl` or
    /// `bundles` goes) leaves no half-made catalog; the folders it made are removed when
    /// still empty.
    pub fn init(root: &Path) -> Result<InitReport> {
        store::confine(root);
        let state = root.join(STATE_DIR);
        let made: Vec<PathBuf> = [root.to_owned(), root.join(BUNDLES_DIR), state.clone()]
            .into_iter()
            .filter(|dir| !dir.exists())
            .collect();
        let created = store::ensure_dir(root)
            .and_then(|()| store::ensure_dir(&root.join(BUNDLES_DIR)))
            .and_then(|()| ensure_catalog_files(root));
        let created = match created {
            Ok(created) => created,
            Err(e) => {
                if made.contains(&state) {
                    // The state folder this init made holds only the `.gitignore` it wrote.
                    let _ = store::remove_file(&state.join(".gitignore"));
                }
                for dir in made.iter().rev() {
                    let _ = std::fs::remove_dir(dir); // Only when empty.
                }
                return Err(e);
            }
        };
        Ok(InitReport {
            root: root.to_owned(),
            created,
        })
    }

    /// Run `op` as one write: take the catalog lock, re-read `toolctl.json` under it (another
    /// writer may have changed it while this one waited), run `op`, and make sure the
    /// catalog's own files exist once something was written. A write that fails on a catalog
    /// this call created leaves nothing behind.
    pub(crate) fn write<T>(
        &mut self,
        op: impl FnOnce(&Self) -> Result<T>,
        touched: impl FnOnce(&T) -> Option<String>,
    ) -> Result<T> {
        self.write_with(Config::load, op, touched)
    }

    /// [`write`](Self::write), reading `toolctl.json` under the lock with `load` (`config`'s
    /// edits read it as it is, to repair it).
    pub(crate) fn write_with<T>(
        &mut self,
        load: fn(&Path) -> Result<Config>,
        op: impl FnOnce(&Self) -> Result<T>,
        touched: impl FnOnce(&T) -> Option<String>,
    ) -> Result<T> {
        let existed = self.root.is_dir();
        store::ensure_dir(&self.root)?;
        let guard = lock::acquire(&self.lock_path(), self.lock_timeout)?;
        let result = load(&self.root).and_then(|config| {
            self.config = config;
            refuse_not_a_folder(&self.bundles_dir())?;
            op(self)
        });
        match &result {
            Ok(value) => {
                ensure_catalog_files(&self.root)?;
                // Keep the search index in step within this locked operation. If this fails,
                // nothing is lost: the next read's change check sees the new stamps.
                if let Some(dir) = touched(value)
                    && let Some(mut index) = crate::index::Index::open_existing(self)
                {
                    let _ = index.refresh_bundle(self, &dir);
                }
            }
            Err(_) if !existed => remove_if_pristine(&self.root),
            Err(_) => {}
        }
        drop(guard);
        result
    }

    /// Create a tool from a `tool.json` document. `bundle` (slug or ID) says where, else the
    /// document's `bundleID`. `toolID` and `bundleID` are filled in when absent; `createdAt` and
    /// `modifiedAt` are always set to now. An existing `<slug, version>` in the bundle is a conflict and stays as it
    /// was, byte for byte.
    pub fn put_tool(
        &mut self,
        doc: Value,
        source_name: &str,
        bundle: Option<&str>,
    ) -> Result<ToolEntry> {
        self.write(
            |c| c.put_tool_checked(doc, source_name, bundle, true),
            tool_dir_of,
        )
    }

    /// Create several tools in `bundle` (slug or ID) under one lock (`mcp import`): each as
    /// [`put_tool`](Self::put_tool) does, but the new slugs are checked for name collisions
    /// once, all together, and the index is refreshed once, so a server of thousands of tools
    /// costs one pass over the catalog, not one per tool. A failure stops at its tool: those
    /// before it stay, each whole, and the same import run again finishes the rest.
    pub fn put_tools(
        &mut self,
        docs: Vec<(Value, String)>,
        bundle: &str,
    ) -> Result<Vec<ToolEntry>> {
        self.write(
            |c| {
                let target = c.find_bundle(bundle)?;
                let slugs: Vec<&str> = docs
                    .iter()
                    .filter_map(|(doc, _)| doc.get("slug").and_then(Value::as_str))
                    .collect();
                c.refuse_colliding_tools(&target.bundle.slug, &slugs)?;
                // Case twins among the bundle's slug folders and the batch, from one listing
                // (`mcp import` plans slugs clear of them, but outside the lock), not a listing
                // of the bundle's tools per tool. Versions: each tool's own write.
                if let Some(dir) = &target.dir {
                    let mut seen = FoldedNames::listing(dir.join(TOOLS_DIR), "slug");
                    for slug in &slugs {
                        seen.add(slug)?;
                    }
                }
                docs.into_iter()
                    .map(|(doc, source_name)| {
                        c.put_tool_checked(doc, &source_name, Some(bundle), false)
                    })
                    .collect()
            },
            |entries: &Vec<ToolEntry>| entries.first().and_then(tool_dir_of),
        )
    }

    /// Enable or disable a tool (built-ins: in `toolctl.json`). Only `isEnabled` changes.
    pub fn set_tool_enabled(
        &mut self,
        reference: &str,
        enabled: bool,
    ) -> Result<(ToolEntry, Toggle)> {
        self.write(
            |c| c.set_tool_enabled_locked(reference, enabled),
            |(entry, _)| tool_dir_of(entry),
        )
    }

    /// Remove a tool version for good (its file and empty folders). Built-ins cannot be
    /// removed. Tools of disabled or deleted bundles can, so such bundles can be emptied.
    pub fn delete_tool(&mut self, reference: &str) -> Result<ToolEntry> {
        self.write(|c| c.delete_tool_locked(reference), tool_dir_of)
    }

    /// Create or replace a bundle. Returns it and whether it was created.
    pub fn put_bundle(&mut self, input: BundleInput) -> Result<(BundleEntry, bool)> {
        self.write(
            |c| c.put_bundle_locked(input),
            |(entry, _)| bundle_dir_of(entry),
        )
    }

    /// Enable or disable a bundle (the built-in one: in `toolctl.json`).
    pub fn set_bundle_enabled(
        &mut self,
        name: &str,
        enabled: bool,
    ) -> Result<(BundleEntry, Toggle)> {
        self.write(
            |c| c.set_bundle_enabled_locked(name, enabled),
            |(entry, _)| bundle_dir_of(entry),
        )
    }

    /// [`put_tool`](Self::put_tool) under the lock; `collisions`: check the new slug's name
    /// against the catalog's (a caller that checked a batch's at once says `false`).
    fn put_tool_checked(
        &self,
        mut doc: Value,
        source_name: &str,
        bundle: Option<&str>,
        collisions: bool,
    ) -> Result<ToolEntry> {
        let Some(fields) = doc.as_object_mut() else {
            return Err(Error::invalid(
                source_name,
                vec![Violation::new("", "a tool must be a JSON object")],
            ));
        };
        if fields.get("isBuiltIn").and_then(Value::as_bool) == Some(true) {
            return Err(Error::invalid(
                source_name,
                vec![Violation::new(
                    "/isBuiltIn",
                    "isBuiltIn: true is reserved for tools compiled into toolctl",
                )],
            ));
        }
        let target = self.bundle_for_put(fields.get("bundleID"), source_name, bundle)?;
        if target.is_builtin() {
            return Err(Error::forbidden(
                "the built-in bundle is read-only: tools cannot be added to it",
                Some(Hint::UseOwnBundle),
            ));
        }
        check_bundle_writable(&target, "add a tool to")?;
        if let Some(dir) = &target.dir {
            refuse_not_a_folder(&dir.join(TOOLS_DIR))?;
        }
        let given_id = match fields.get("toolID") {
            Some(id) => Some(uuid_v7(id, "/toolID", source_name)?),
            None => None,
        };
        fill_for_put(fields, target.bundle.bundle_id, crate::base::time::now());

        let tool: Tool = model::typed(&doc, source_name)?;
        let mut violations = tool.check(&doc);
        violations.extend(tool.host_violations(&self.config().hosts));
        violations.extend(tool.exec_violation(self.config().exec_allowed()));
        // What `validate` reports of a tool against this build and catalog, put refuses.
        violations.extend(tool.function_violation());
        violations.extend(tool.server_violation(&self.config().mcp_servers));
        let file = store::JsonFile::new(&doc);
        violations.extend(file.oversized());
        if !violations.is_empty() {
            return Err(Error::invalid(source_name, violations));
        }
        let dir = self.tool_dir(&target, &tool.slug, &tool.version);
        let path = dir.join(TOOL_FILE);
        if path.is_file() {
            let existing = crate::base::capped::read_text(&path, Some(&self.root))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok());
            return Err(Error::Conflict {
                message: format!(
                    "tool {}/{}@{} already exists",
                    target.bundle.slug, tool.slug, tool.version
                ),
                details: json!({
                    "path": path,
                    "toolID": existing.as_ref().and_then(|d| d.get("toolID")).cloned(),
                }),
                hint: Some(
                    "a version never changes once written: put it under a new version".into(),
                ),
            });
        }
        if let Some(id) = given_id
            && let Some(other) = self.find_tool_by_id(id, &mut Vec::new())?
        {
            return Err(Error::Conflict {
                message: format!("toolID {id} is already used by {}", other.reference()),
                details: json!({ "toolID": id, "usedBy": other.reference() }),
                hint: Some("leave toolID out of the file to have a new one made".into()),
            });
        }
        // A new version of a slug the bundle has adds no name, so nothing new can collide:
        // the checks of the slug (a name map of the whole catalog, twice; its folder's
        // neighbours) are for a new slug only, and `put_tools` makes them once for its batch.
        let slug_dir = dir.parent().unwrap_or(&dir);
        let new_slug = !slug_dir.is_dir();
        if collisions && new_slug {
            refuse_case_twins(&tools_dir_of(slug_dir), [(&*tool.slug, &*tool.version)])?;
            self.refuse_added_collisions(
                &self.bundles()?.items,
                SLUG_HINT,
                &[(target.bundle.slug.clone(), tool.slug.clone())],
            )?;
        } else {
            FoldedNames::listing(slug_dir.to_owned(), "version").add(&tool.version)?;
        }
        file.write(&path)?;
        Ok(ToolEntry {
            is_enabled: tool.is_enabled,
            unavailable: tool.unavailable_reason(self.config()),
            tool,
            doc,
            path: Some(path),
            bundle_slug: target.bundle.slug.clone(),
            bundle_enabled: target.is_enabled,
            bundle_deleted: false,
        })
    }

    /// Write the JSON Schemas of the catalog's files into `schemas/` (where new tools'
    /// `"$schema"` points), unless they are there already as this toolctl has them.
    pub fn write_schemas(&self) -> Result<()> {
        let dir = self.root.join(crate::catalog::skeleton::SCHEMAS_DIR);
        store::ensure_dir(&dir)?;
        for kind in crate::catalog::schemas::Kind::ALL {
            let path = dir.join(kind.file_name());
            // A FIFO, a link out of the catalog or an endless file there is replaced unread.
            let kept = crate::base::capped::read_text(&path, Some(&self.root)).ok();
            if kept.as_deref() != Some(kind.text()) {
                store::write_atomic(&path, kind.text().as_bytes())?;
            }
        }
        Ok(())
    }

    fn tool_dir(&self, bundle: &BundleEntry, slug: &str, version: &str) -> PathBuf {
        let base = bundle
            .dir
            .clone()
            .unwrap_or_else(|| self.bundles_dir().join(bundle.bundle.bundle_id.to_string()));
        base.join(TOOLS_DIR).join(slug).join(version)
    }

    /// The bundle a new tool goes into: from the flag, else the document's `bundleID`; both
    /// given must agree.
    fn bundle_for_put(
        &self,
        doc_id: Option<&Value>,
        source_name: &str,
        flag: Option<&str>,
    ) -> Result<BundleEntry> {
        let doc_id = doc_id
            .map(|v| {
                v.as_str()
                    .and_then(|s| Uuid::try_parse(s).ok())
                    .ok_or_else(|| {
                        Error::invalid(
                            source_name,
                            vec![Violation::new("/bundleID", "bundleID must be a UUID")],
                        )
                    })
            })
            .transpose()?;
        match (flag, doc_id) {
            (Some(name), doc_id) => {
                let bundle = self.find_bundle(name)?;
                if let Some(id) = doc_id
                    && id != bundle.bundle.bundle_id
                {
                    return Err(Error::ToolBundle {
                        source_name: source_name.to_owned(),
                        given: Some(GivenBundle {
                            in_file: id,
                            name: name.to_owned(),
                            id: bundle.bundle.bundle_id,
                        }),
                    });
                }
                Ok(bundle)
            }
            (None, Some(id)) => self.find_bundle(&id.to_string()),
            (None, None) => Err(Error::ToolBundle {
                source_name: source_name.to_owned(),
                given: None,
            }),
        }
    }

    fn set_tool_enabled_locked(
        &self,
        reference: &str,
        enabled: bool,
    ) -> Result<(ToolEntry, Toggle)> {
        let (mut entry, _) = self.resolve_tool(reference, VersionChoice::Exact)?;
        if entry.bundle_deleted {
            return Err(Error::forbidden(
                format!(
                    "bundle '{}' is deleted; its tools cannot change",
                    entry.bundle_slug
                ),
                Some(Hint::RestoreBundle(entry.bundle_slug.as_str().into())),
            ));
        }
        if !entry.bundle_enabled {
            return Err(Error::forbidden(
                format!(
                    "bundle '{}' is disabled; its tools cannot change",
                    entry.bundle_slug
                ),
                Some(Hint::EnableBundle(entry.bundle_slug.as_str().into())),
            ));
        }
        if entry.is_enabled == enabled {
            return Ok((entry, Toggle::Unchanged));
        }
        match &entry.path {
            None => {
                let doc = self
                    .config
                    .with_builtin_flag(Some(&entry.tool.slug), enabled);
                store::write_json(&self.root.join(CONFIG_FILE), &doc)?;
            }
            Some(path) => {
                let mut doc = read_doc(path)?;
                if let Some(fields) = doc.as_object_mut() {
                    fields.insert("isEnabled".into(), enabled.into());
                }
                store::write_json(path, &doc)?;
                entry.doc = doc;
            }
        }
        entry.is_enabled = enabled;
        entry.tool.is_enabled = enabled;
        Ok((entry, Toggle::Changed))
    }

    fn delete_tool_locked(&self, reference: &str) -> Result<ToolEntry> {
        let (entry, _) = self.resolve_tool(reference, VersionChoice::Exact)?;
        let Some(path) = &entry.path else {
            return Err(Error::forbidden(
                format!("{} is built in and cannot be deleted", entry.reference()),
                Some(Hint::DisableTool(entry.reference().into())),
            ));
        };
        remove_tool_file(path)?;
        Ok(entry)
    }

    fn put_bundle_locked(&self, input: BundleInput) -> Result<(BundleEntry, bool)> {
        let bundles = self.bundles()?.items;
        let (mut doc, source_name, merge) = match input {
            BundleInput::Document { doc, source_name } => (doc, source_name, false),
            BundleInput::Fields {
                id,
                slug,
                display_name,
                description,
                enabled,
            } => {
                let mut doc = json!({ "slug": slug });
                if let Some(id) = id {
                    doc["bundleID"] = id.to_string().into();
                }
                if let Some(name) = display_name {
                    doc["displayName"] = name.into();
                }
                if let Some(text) = description {
                    doc["description"] = text.into();
                }
                doc["isEnabled"] = enabled.into();
                (doc, "command line".to_owned(), true)
            }
        };
        let Some(fields) = doc.as_object_mut() else {
            return Err(Error::invalid(
                &source_name,
                vec![Violation::new("", "a bundle must be a JSON object")],
            ));
        };
        if fields.get("isBuiltIn").and_then(Value::as_bool) == Some(true) {
            return Err(Error::invalid(
                &source_name,
                vec![Violation::new(
                    "/isBuiltIn",
                    "isBuiltIn: true is reserved for the bundle compiled into toolctl",
                )],
            ));
        }
        let id = match fields.get("bundleID") {
            Some(value) => uuid_v7(value, "/bundleID", &source_name)?,
            None => new_id(),
        };
        if id == builtin::bundle_id() {
            return Err(Error::forbidden("the built-in bundle is read-only", None));
        }
        let slug = match fields.get("slug").and_then(Value::as_str) {
            Some(slug) => slug.to_owned(),
            None => {
                return Err(Error::invalid(
                    &source_name,
                    vec![Violation::new(
                        "/slug",
                        "required field 'slug' is missing or not a string",
                    )],
                ));
            }
        };
        let mut violations = Vec::new();
        rules::check_name_at(NameKind::Slug, &slug, "/slug", &mut violations);
        if !violations.is_empty() {
            return Err(Error::invalid(&source_name, violations));
        }
        if let Some(other) = bundles
            .iter()
            .find(|b| b.bundle.slug == slug && b.bundle.bundle_id != id)
        {
            let hint = if other.is_builtin() {
                "the slug 'builtin' belongs to the built-in bundle; choose another".into()
            } else if other.is_deleted() {
                Hint::RestoreOrReapBundle(other.bundle.bundle_id.to_string().into())
            } else {
                Hint::ReplaceBundle(other.bundle.bundle_id.to_string().into())
            };
            return Err(Error::Conflict {
                message: format!(
                    "bundle slug '{slug}' is already used by bundle {}",
                    other.bundle.bundle_id
                ),
                details: json!({ "slug": slug, "bundleID": other.bundle.bundle_id }),
                hint: Some(hint),
            });
        }
        let existing = bundles.iter().find(|b| b.bundle.bundle_id == id);
        if let Some(existing) = existing
            && existing.is_deleted()
        {
            return Err(Error::forbidden(
                format!(
                    "bundle '{}' is deleted and cannot be replaced",
                    existing.bundle.slug
                ),
                Some(Hint::RestoreBundle(id.to_string().into())),
            ));
        }
        let now = crate::base::time::now();
        let mut doc = match (existing, merge) {
            (Some(existing), true) => {
                let mut merged = existing.doc.clone();
                if let (Some(target), Some(source)) = (merged.as_object_mut(), doc.as_object()) {
                    for (key, value) in source {
                        target.insert(key.clone(), value.clone());
                    }
                }
                merged
            }
            _ => doc,
        };
        let fields = doc
            .as_object_mut()
            .ok_or_else(|| Error::invalid(&source_name, vec![]))?;
        fill_bundle_fields(fields, id);
        fields.insert("isBuiltIn".into(), false.into());
        match existing {
            Some(existing) => {
                fields.insert("createdAt".into(), timestamp(existing.bundle.created_at));
                let structural = ["slug", "displayName", "description"]
                    .iter()
                    .any(|k| fields.get(*k) != existing.doc.get(*k));
                let modified = if structural {
                    now
                } else {
                    existing.bundle.modified_at
                };
                fields.insert("modifiedAt".into(), timestamp(modified));
                fields.shift_remove("softDeletedAt");
            }
            None => stamp_created(fields, now),
        }
        let bundle: Bundle = model::typed(&doc, &source_name)?;
        // The rules readers hold a bundle.json to (its format version, IDs): what put writes
        // is read back and passes `validate`.
        let mut violations = bundle.check(&doc);
        let file = store::JsonFile::new(&doc);
        violations.extend(file.oversized());
        if !violations.is_empty() {
            return Err(Error::invalid(&source_name, violations));
        }
        if bundle.created_at > bundle.modified_at {
            return Err(Error::invalid(
                &source_name,
                vec![Violation::new(
                    "/modifiedAt",
                    "modifiedAt is before createdAt",
                )],
            ));
        }
        if let Some(existing) = existing
            && existing.bundle.slug != bundle.slug
        {
            // A new slug renames the bundle's tools where their names carry it.
            let tools = self.tool_slugs(existing);
            self.refuse_new_collisions(&bundles, SLUG_HINT, |keys| {
                keys.retain(|(b, _)| *b != existing.bundle.slug);
                keys.extend(tools.into_iter().map(|s| (bundle.slug.clone(), s)));
            })?;
        }
        match existing.and_then(|e| e.dir.clone()) {
            Some(dir) => file.write(&dir.join(BUNDLE_FILE))?,
            None => {
                // A new bundle's folder appears whole, with its bundle.json, or not at all.
                store::create_dir_atomic(
                    &self.bundles_dir().join(id.to_string()),
                    super::archive::STAGING_PREFIX,
                    |staging| file.write(&staging.join(BUNDLE_FILE)),
                )?;
            }
        }
        let dir = existing
            .and_then(|e| e.dir.clone())
            .unwrap_or_else(|| self.bundles_dir().join(id.to_string()));
        let entry = BundleEntry {
            is_enabled: bundle.is_enabled,
            bundle,
            doc,
            dir: Some(dir),
        };
        Ok((entry, existing.is_none()))
    }

    fn set_bundle_enabled_locked(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<(BundleEntry, Toggle)> {
        let mut entry = self.find_bundle(name)?;
        if entry.is_deleted() {
            return Err(Error::forbidden(
                format!("bundle '{}' is deleted", entry.bundle.slug),
                Some(Hint::RestoreBundle(
                    entry.bundle.bundle_id.to_string().into(),
                )),
            ));
        }
        if entry.is_enabled == enabled {
            return Ok((entry, Toggle::Unchanged));
        }
        match entry.file() {
            None => {
                store::write_json(
                    &self.root.join(CONFIG_FILE),
                    &self.config.with_builtin_flag(None, enabled),
                )?;
            }
            Some(path) => {
                let mut doc = read_doc(&path)?;
                if let Some(fields) = doc.as_object_mut() {
                    fields.insert("isEnabled".into(), enabled.into());
                }
                store::write_json(&path, &doc)?;
                entry.doc = doc;
            }
        }
        entry.is_enabled = enabled;
        entry.bundle.is_enabled = enabled;
        Ok((entry, Toggle::Changed))
    }

    /// Soft-delete a bundle: mark `softDeletedAt`; `reap` removes it later once empty.
    /// Deleting a deleted bundle keeps the first timestamp (the grace period does not restart).
    pub fn delete_bundle(&mut self, name: &str) -> Result<(BundleEntry, Toggle)> {
        self.write(
            |c| c.mark_deleted(name, true),
            |(entry, _)| bundle_dir_of(entry),
        )
    }

    /// Soft-delete a bundle and remove its tools for good, in one locked write, so `reap` can
    /// remove the bundle once its grace period is over. Files that cannot be read as tools are
    /// left (and returned as problems): reap keeps the bundle and says why. Running it again
    /// finishes an interrupted run.
    pub fn delete_bundle_with_tools(
        &mut self,
        name: &str,
    ) -> Result<(
        BundleEntry,
        Toggle,
        Vec<ToolEntry>,
        Vec<crate::catalog::Problem>,
    )> {
        self.write(
            |c| {
                let (entry, toggle) = c.mark_deleted(name, true)?;
                let mut problems = Vec::new();
                let tools = c.bundle_tools(&entry, &mut problems);
                for tool in &tools {
                    if let Some(path) = &tool.path {
                        remove_tool_file(path)?;
                    }
                }
                Ok((entry, toggle, tools, problems))
            },
            |(entry, ..)| bundle_dir_of(entry),
        )
    }

    /// Undo a soft delete.
    pub fn restore_bundle(&mut self, name: &str) -> Result<(BundleEntry, Toggle)> {
        self.write(
            |c| c.mark_deleted(name, false),
            |(entry, _)| bundle_dir_of(entry),
        )
    }

    fn mark_deleted(&self, name: &str, deleted: bool) -> Result<(BundleEntry, Toggle)> {
        let mut entry = self.find_bundle(name)?;
        let Some(path) = entry.file() else {
            return Err(Error::forbidden(
                "the built-in bundle cannot be deleted",
                Some(Hint::DisableBuiltinBundle),
            ));
        };
        if entry.is_deleted() == deleted {
            return Ok((entry, Toggle::Unchanged));
        }
        if !deleted {
            // Its tools come back under their exported names.
            let tools: Vec<_> = self
                .tool_slugs(&entry)
                .into_iter()
                .map(|s| (entry.bundle.slug.clone(), s))
                .collect();
            self.refuse_added_collisions(&self.bundles()?.items, RENAME_HINT, &tools)?;
        }
        let mut doc = read_doc(&path)?;
        let when = crate::base::time::now();
        if let Some(fields) = doc.as_object_mut() {
            if deleted {
                fields.insert("softDeletedAt".into(), timestamp(when));
            } else {
                fields.shift_remove("softDeletedAt");
            }
        }
        store::write_json(&path, &doc)?;
        entry.bundle.soft_deleted_at = deleted.then_some(when);
        entry.doc = doc;
        Ok((entry, Toggle::Changed))
    }

    /// Run `op` under the catalog lock (for operations defined in other modules).
    /// Removed bundles change `bundles/`, which the next change check lists again.
    pub(crate) fn locked<T>(&mut self, op: impl FnOnce(&Self) -> Result<T>) -> Result<T> {
        self.write(op, |_| None)
    }
}

/// The bundle folder (its ID) a tool lives in; `None` for built-ins, whose flags every change
/// check reads from `toolctl.json`.
fn tool_dir_of(entry: &ToolEntry) -> Option<String> {
    entry
        .path
        .as_ref()
        .map(|_| entry.tool.bundle_id.to_string())
}

fn bundle_dir_of(entry: &BundleEntry) -> Option<String> {
    entry
        .dir
        .as_ref()
        .map(|_| entry.bundle.bundle_id.to_string())
}

/// Remove a catalog folder this process created for a write that then failed, if it still
/// holds nothing but the lock and its `.gitignore` (a refused command must not leave a catalog behind).
fn remove_if_pristine(root: &Path) {
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut state = names(&root.join(STATE_DIR));
    state.sort();
    if names(root) == [STATE_DIR] && (state == ["lock"] || state == [".gitignore", "lock"]) {
        let _ = store::remove_dir_all(root);
    }
}

/// Refuse (`VALIDATION_ERROR`) a write into the catalog while `path`, a folder it needs, is
/// something else (a file git checked out for a symlink): nothing could be written there, and
/// what is there is not toolctl's to replace.
fn refuse_not_a_folder(path: &Path) -> Result<()> {
    match crate::catalog::not_a_folder(path) {
        None => Ok(()),
        Some(problem) => Err(Error::Config {
            message: format!(
                "{}: {}; nothing was written",
                problem.path.display(),
                problem.message
            ),
            hint: Some(
                "make it the folder it stands for again (for a symlink git checked out as a file: git config core.symlinks true, then check it out again)"
                    .into(),
            ),
        }),
    }
}

/// The folder names of one folder (a bundle's `tools`, a slug folder) by their case-folded
/// form, to refuse (`CONFLICT`) a slug or version folder whose name differs only by case from
/// one beside it (`Weather` beside `weather`): both cannot be checked out on a case-insensitive
/// file system (macOS, Windows), and there a write would land in the other tool's folder.
/// `validate` warns of pairs made by hand (rule `case-collision`).
struct FoldedNames {
    dir: PathBuf,
    /// `slug` or `version`.
    what: &'static str,
    /// By case-folded name: each name, and whether it is a folder there (not one added).
    names: BTreeMap<String, BTreeMap<String, bool>>,
}

impl FoldedNames {
    /// The visible folders of `dir`, each a `what` folder.
    fn listing(dir: PathBuf, what: &'static str) -> Self {
        let mut names = Self {
            names: BTreeMap::new(),
            dir,
            what,
        };
        for name in list_dir_names(&names.dir) {
            names.insert(name, true);
        }
        names
    }

    fn insert(&mut self, name: String, there: bool) {
        self.names
            .entry(rules::case_folded(&name))
            .or_default()
            .insert(name, there);
    }

    /// Add `name`, a folder a write makes or writes into; refused when a folder there (or one
    /// added before) differs from it only by case.
    fn add(&mut self, name: &str) -> Result<()> {
        let folded = rules::case_folded(name);
        if let Some((other, there)) = self
            .names
            .get(&folded)
            .and_then(|same| same.iter().find(|(other, _)| *other != name))
        {
            return Err(match there {
                true => case_twin(&self.dir, name, other, self.what),
                false => written_together(&self.dir, name, other, self.what),
            });
        }
        self.insert(name.to_owned(), false);
        Ok(())
    }
}

/// Refuse (`CONFLICT`) a write of the tool folders `new` (`(slug, version)`, names that passed
/// the slug and version rules) into the bundle folder `tools` (its `tools`) when a slug or a
/// version differs only by case from a folder beside it: one that is there, or another of
/// `new` (an archive holding `Weather` and `weather`). Lists `tools` once, and the folders of
/// the slugs `new` writes into.
pub(crate) fn refuse_case_twins<'a>(
    tools: &Path,
    new: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<()> {
    let mut slugs = FoldedNames::listing(tools.to_owned(), "slug");
    let mut versions: BTreeMap<&str, FoldedNames> = BTreeMap::new();
    for (slug, version) in new {
        slugs.add(slug)?;
        versions
            .entry(slug)
            .or_insert_with(|| FoldedNames::listing(tools.join(slug), "version"))
            .add(version)?;
    }
    Ok(())
}

/// The error of a folder `name` in `parent` whose name differs only by case from `other`'s.
fn case_twin(parent: &Path, name: &str, other: &str, what: &str) -> Error {
    Error::Conflict {
        message: format!(
            "the {what} '{name}' differs only by case from the {what} folder '{other}' beside it: on a case-insensitive file system (macOS, Windows) the two are one folder (validate's rule case-collision)"
        ),
        details: json!({ "path": parent.join(other), what: name }),
        hint: Some(format!("choose a {what} that differs from '{other}' in more than case").into()),
    }
}

/// The error of two folders `name` and `other` of one write (an archive, an import) whose
/// names differ only by case.
fn written_together(parent: &Path, name: &str, other: &str, what: &str) -> Error {
    Error::Conflict {
        message: format!(
            "the {what} '{name}' differs only by case from the {what} '{other}' written with it: on a case-insensitive file system (macOS, Windows) the two would be one folder (validate's rule case-collision)"
        ),
        details: json!({ "path": parent.join(other), what: name }),
        hint: Some(
            format!("keep one of '{name}' and '{other}', or rename one in more than case").into(),
        ),
    }
}

/// The `tools` folder a slug folder is in.
fn tools_dir_of(slug_dir: &Path) -> PathBuf {
    slug_dir.parent().unwrap_or(slug_dir).to_owned()
}

/// A bundle that new or changed tools may not go into: disabled or soft-deleted.
fn check_bundle_writable(bundle: &BundleEntry, action: &str) -> Result<()> {
    if bundle.is_deleted() {
        return Err(Error::forbidden(
            format!(
                "bundle '{}' is deleted: cannot {action} it",
                bundle.bundle.slug
            ),
            Some(Hint::RestoreBundle(bundle.bundle.slug.as_str().into())),
        ));
    }
    if !bundle.is_enabled {
        return Err(Error::forbidden(
            format!(
                "bundle '{}' is disabled: cannot {action} it",
                bundle.bundle.slug
            ),
            Some(Hint::EnableBundle(bundle.bundle.slug.as_str().into())),
        ));
    }
    Ok(())
}

/// Read a document for rewriting; it must parse (a broken file is never overwritten blindly).
fn read_doc(path: &Path) -> Result<Value> {
    let text = crate::base::capped::read_text(path, None)
        .map_err(|e| crate::catalog::Error::unreadable(path, e))?;
    model::parse_doc(&text, path)
}
