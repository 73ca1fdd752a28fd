//! The `toolctl` command line: argument parsing, output (tables, JSON, colours, progress) and
//! exit codes, over the library crate `toolctl_lib`, which holds every operation.

// Tests read and write files with std (clippy.toml sends the crate's own file access through
// the library's readers and writers).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod cli;
