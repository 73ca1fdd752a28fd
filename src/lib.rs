//! The `toolctl` command line: argument parsing, output (tables, JSON, colours, progress) and
//! exit codes, over the library crate `toolctl_lib`, which holds every operation.

pub mod cli;
