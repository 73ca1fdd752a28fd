//! The native functions compiled into this binary, by the name a `tool.json` gives in
//! `impl.func` (or `impl.goFunc` for catalogs written to the original Go spec).
//!
//! A tool naming a function that is not here is listed as unavailable, with this module's
//! reason, and its file is left alone.

/// Names of the native functions this binary has. The built-in tools use them; a user's
/// native tool may name one of them too (for example to offer `readfile` under another
/// description).
pub const FUNCTIONS: &[&str] = &["readfile", "file-search", "now", "exec"];

/// Whether this binary has the native function `name`.
pub fn has(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}
