//! `mcp import`'s writes: what [`mcp::import::prepare`](crate::mcp::import::prepare) planned,
//! put into the catalog by the writes `tool put` and `bundle put` use (this layer is above the
//! library's `mcp`, which lists and plans without writing).

use super::BundleInput;
use crate::catalog::Catalog;
use crate::catalog::error::Result;
use crate::mcp::import::Prepared;

impl Catalog {
    /// Write `prepared`: its bundle when it is new and a tool is to be written (with
    /// `description`), then its new and changed tools. Refused whole first when a new slug
    /// still collides (the catalog may have changed since the plan), so nothing is
    /// half-written; nothing is written when no tool is new or changed.
    pub fn write_import(&mut self, prepared: &Prepared, description: String) -> Result<()> {
        let (server, slug) = (prepared.server.as_str(), prepared.bundle.as_str());
        let new_slugs: Vec<&str> = prepared.writes().map(|p| p.slug.as_str()).collect();
        if new_slugs.is_empty() {
            return Ok(());
        }
        self.refuse_colliding_tools(slug, &new_slugs)?;
        if !prepared.bundle_exists {
            self.put_bundle(BundleInput::Fields {
                id: None,
                slug: slug.to_owned(),
                display_name: Some(format!("MCP server {server}")),
                description: Some(description),
                enabled: true,
            })?;
        }
        self.put_tools(prepared.documents(), slug)?;
        Ok(())
    }
}
