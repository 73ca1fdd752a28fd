//! The integration tests of toolctl: the real binary, run on a fresh temporary catalog per test.
//!
//! One test binary (`autotests = false`) keeps link time down on a 2-core machine; each area of
//! the command line has its own module. [`common::TestEnv`] runs the binary with a cleared
//! environment whose HOME and XDG folders live inside the test's temporary folder, so no test
//! can touch (or be influenced by) the machine's own catalog.

// Helpers outside `#[test]` functions unwrap too: a failed helper is a failed test. The tests
// hold the catalog lock with std's `File::lock` and write hand-edited files with `fs::write`
// on purpose, to play "another process" and "a person with an editor".
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod common;
mod test_archive;
mod test_attach;
mod test_builtin;
mod test_bundle;
mod test_bundle_put_agrees;
mod test_byte_order_mark;
mod test_catalog_layout;
mod test_completions;
mod test_config;
mod test_crash;
mod test_edges;
mod test_exec_cgroup;
mod test_export;
mod test_hand_edits;
mod test_help;
mod test_index;
mod test_init;
mod test_invoke;
mod test_invoke_batch;
mod test_invoke_http;
mod test_invoke_providers;
mod test_json_shapes;
mod test_layers;
mod test_list;
mod test_mcp;
mod test_mcp_cache;
mod test_mcp_cgroup;
mod test_mcp_http;
mod test_mcp_serve_calls;
mod test_mcp_serve_http;
mod test_mcp_tools;
mod test_name_collisions;
mod test_names;
mod test_numbers;
mod test_output;
mod test_pick;
mod test_promises;
mod test_races;
mod test_readme;
mod test_reap;
mod test_search;
mod test_search_quality;
mod test_serve;
mod test_snapshots;
mod test_symlink_writes;
mod test_tool;
mod test_tool_put_rules;
mod test_trust_catalog;
mod test_trust_invoke;
mod test_validate;
mod test_validate_agents;
mod test_validate_ci;
mod test_validate_put;
#[cfg(target_os = "linux")]
mod test_watch;
