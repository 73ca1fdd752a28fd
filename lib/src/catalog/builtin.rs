//! The built-in bundle: compiled into the binary, read-only, served through the same commands
//! as any other bundle. Its documents are the JSON files beside this module, in the very format
//! of `bundle.json`/`tool.json`; only their enabled flags can change, and those live in
//! `toolctl.json`.

use super::model::{self, Bundle, Tool};
use serde_json::Value;
use std::sync::LazyLock;
use uuid::Uuid;

/// Names of the native functions this binary has (run by `invoke::native`). The built-in
/// tools use them; a user's native tool may name one of them too (for example to offer
/// `readfile` under another description).
pub const FUNCTIONS: &[&str] = &["readfile", "file-search", "now", "exec"];

/// The native function that runs a command: allowed only by the catalog's policy
/// ([`Config::exec_allowed`](super::config::Config::exec_allowed)), whichever tool names it.
pub const EXEC: &str = "exec";

/// Whether this binary has the native function `name`.
pub fn has_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

/// The built-in bundle's slug: `builtin/readfile`.
pub const SLUG: &str = "builtin";

const BUNDLE_JSON: &str = include_str!("builtin/bundle.json");
const TOOL_JSON: &[&str] = &[
    include_str!("builtin/readfile.json"),
    include_str!("builtin/file-search.json"),
    include_str!("builtin/now.json"),
    include_str!("builtin/exec.json"),
];

/// A parsed built-in document.
#[derive(Debug)]
pub struct Builtin<T> {
    pub view: T,
    pub doc: Value,
}

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Builtin<T> {
    // These are compiled in and checked by the tests below: a failure is a build defect.
    #[allow(clippy::expect_used)]
    let doc: Value = serde_json::from_str(text).expect("built-in document is valid JSON");
    #[allow(clippy::expect_used)]
    let view = model::typed(&doc, "built-in").expect("built-in document matches the model");
    Builtin { view, doc }
}

static BUNDLE: LazyLock<Builtin<Bundle>> = LazyLock::new(|| parse(BUNDLE_JSON));
static TOOLS: LazyLock<Vec<Builtin<Tool>>> =
    LazyLock::new(|| TOOL_JSON.iter().map(|text| parse(text)).collect());

/// The built-in bundle.
pub fn bundle() -> &'static Builtin<Bundle> {
    &BUNDLE
}

/// The built-in tools, in registration order.
pub fn tools() -> &'static [Builtin<Tool>] {
    &TOOLS
}

/// The built-in bundle's ID.
pub fn bundle_id() -> Uuid {
    BUNDLE.view.bundle_id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::config::Config;

    #[test]
    fn builtin_documents_are_valid_tools() {
        assert_eq!(bundle().view.slug, SLUG);
        assert!(bundle().view.is_built_in);
        let slugs: Vec<_> = tools().iter().map(|t| t.view.slug.as_str()).collect();
        assert_eq!(slugs, ["readfile", "file-search", "now", "exec"]);
        let config =
            Config::from_doc(Config::initial_doc(), std::path::Path::new("toolctl.json")).unwrap();
        for tool in tools() {
            assert_eq!(tool.view.bundle_id, bundle_id());
            assert!(tool.view.is_built_in);
            assert_eq!(tool.view.check(&tool.doc), vec![], "{}", tool.view.slug);
            assert_eq!(tool.view.unavailable_reason(&config), None);
            assert_eq!(tool.view.tool_id.get_version_num(), 7);
        }
    }
}
