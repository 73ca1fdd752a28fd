//! Operations that change the catalog or move it in and out: every write (with the index kept
//! in step under the write lock), reaping soft-deleted bundles, bundle archives (export and
//! import, checked like `validate` checks files) and an MCP server's tools brought in.
//!
//! They sit above `index` and `validate` because a write refreshes the index and an import
//! checks its documents; the reading side of the catalog below knows nothing of them.

pub mod archive;
pub mod config;
mod mcp_import;
mod names;
pub mod reap;
pub mod write;

#[cfg(test)]
mod tests;

pub use reap::{ReapOutcome, ReapReport};
pub use write::{BundleInput, InitReport, Toggle};
