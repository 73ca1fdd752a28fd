//! The JSON shapes of bundles and tools, shared by every command and route that prints them.

use super::{BundleEntry, ToolEntry};
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

/// A tool as lists print it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolView {
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
    pub kind: &'static str,
    pub tags: Vec<String>,
    pub is_enabled: bool,
    pub bundle_enabled: bool,
    pub is_built_in: bool,
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    pub status: String,
    pub created_at: String,
    pub modified_at: String,
    pub path: Option<PathBuf>,
}

impl ToolView {
    pub fn new(entry: &ToolEntry) -> Self {
        let tool = &entry.tool;
        Self {
            reference: entry.reference(),
            tool_id: tool.tool_id.to_string(),
            bundle_id: tool.bundle_id.to_string(),
            bundle: entry.bundle_slug.clone(),
            slug: tool.slug.clone(),
            version: tool.version.clone(),
            display_name: tool.display_name.clone(),
            description: tool.description.clone(),
            kind: tool.kind.label(),
            tags: tool.tags.clone(),
            is_enabled: entry.is_enabled,
            bundle_enabled: entry.bundle_enabled && !entry.bundle_deleted,
            is_built_in: entry.is_builtin(),
            available: entry.unavailable.is_none(),
            unavailable_reason: entry.unavailable.clone(),
            status: entry.status(),
            created_at: tool.created_at.to_string(),
            modified_at: tool.modified_at.to_string(),
            path: entry.path.clone(),
        }
    }

    /// The view with the stored document beside it (for `tool get`).
    pub fn with_document(entry: &ToolEntry) -> Value {
        let mut value = serde_json::to_value(Self::new(entry)).unwrap_or_default();
        value["document"] = entry.doc.clone();
        value
    }
}

/// A bundle as lists print it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleView {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<usize>,
    pub path: Option<PathBuf>,
}

impl BundleView {
    pub fn new(entry: &BundleEntry, tool_count: Option<usize>) -> Self {
        let b = &entry.bundle;
        Self {
            bundle_id: b.bundle_id.to_string(),
            slug: b.slug.clone(),
            display_name: b.display_name.clone(),
            description: b.description.clone(),
            is_enabled: entry.is_enabled,
            is_built_in: entry.is_builtin(),
            soft_deleted_at: b.soft_deleted_at.map(|t| t.to_string()),
            created_at: b.created_at.to_string(),
            modified_at: b.modified_at.to_string(),
            tool_count,
            path: entry.file(),
        }
    }

    /// The view with the stored document beside it (for `bundle get`).
    pub fn with_document(entry: &BundleEntry, tool_count: usize) -> Value {
        let mut value =
            serde_json::to_value(Self::new(entry, Some(tool_count))).unwrap_or_default();
        value["document"] = entry.doc.clone();
        value
    }

    /// One word for tables.
    pub fn status(entry: &BundleEntry) -> &'static str {
        if entry.is_deleted() {
            "deleted"
        } else if entry.is_enabled {
            "enabled"
        } else {
            "disabled"
        }
    }
}
