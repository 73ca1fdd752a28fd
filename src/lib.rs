//! toolctl keeps a catalog of LLM tools as plain JSON files and does everything an agent builder
//! needs with it: list, search, pick, export, attach and invoke.
//!
//! The library holds every operation; `cli` is a thin layer that parses arguments and prints
//! what the operations return. Nothing outside `cli` prints or knows about terminals.

pub mod attach;
pub mod base;
pub mod catalog;
pub mod cli;
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
pub mod invoke;
pub mod mcp;
pub mod ops;
pub mod pick;
pub mod provider;
pub mod schema;
pub mod validate;
