//! toolctl keeps a catalog of LLM tools as plain JSON files and does everything an agent builder
//! needs with it: list, search, pick, export, attach and invoke.
//!
//! This crate holds every operation; the `toolctl` crate is a thin command line over it that
//! parses arguments and prints what the operations return. Nothing here prints or knows about
//! terminals: the command-line crates (clap, comfy-table, indicatif, anstream) are not among
//! its dependencies.

// Tests read what they wrote with std (clippy.toml sends the crate's own reads through
// base::capped).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod attach;
pub mod base;
pub mod catalog;
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
pub mod invoke;
pub mod jobs;
pub mod mcp;
pub mod ops;
pub mod pick;
pub mod provider;
pub mod schema;
pub mod serve;
pub mod validate;
