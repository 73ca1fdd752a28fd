//! `tool put` refuses what a call could not use: no setting in a place toolctl does not read it,
//! no header a request cannot carry, no list whose emptiness or repeats mean nothing. Each rule
//! holds the same in `validate` and for a hand-edited file (listed unavailable).

use crate::common::{TestEnv, tool_doc_with};
use serde_json::{Value, json};

/// The problems `tool put` gives for `doc` in bundle `b` (it must refuse it, exit 3), as
/// `(pointer, message)`.
fn refused(env: &TestEnv, doc: &Value) -> Vec<(String, String)> {
    let run = env.try_put_tool("b", doc);
    run.failure(3);
    let err = run.json();
    assert_eq!(err["error"]["code"], "VALIDATION_ERROR", "{run}");
    err["error"]["details"]["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems listed: {run}"))
        .iter()
        .map(|p| {
            (
                p["pointer"].as_str().unwrap_or_default().to_owned(),
                p["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The message of the problem at `pointer`, panicking with all of them when there is none.
fn at<'a>(problems: &'a [(String, String)], pointer: &str) -> &'a str {
    problems
        .iter()
        .find(|(p, _)| p == pointer)
        .map(|(_, m)| m.as_str())
        .unwrap_or_else(|| panic!("no problem at {pointer}: {problems:?}"))
}

/// The error pointers of `validate --json` on the catalog.
fn validate_errors(env: &TestEnv) -> Vec<(String, String)> {
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["pointer"].as_str().unwrap_or_default().to_owned(),
                f["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn http_tool(slug: &str, imp: Value) -> Value {
    tool_doc_with(slug, "v1", json!({ "type": "http", "impl": imp }))
}

/// A tool of each type whose `impl` holds `extra` besides what it needs.
fn with_impl_fields(extra: &Value) -> Vec<Value> {
    let mut impls = vec![
        ("native", json!({ "func": "now" })),
        (
            "http",
            json!({ "method": "GET", "urlTemplate": "https://api.example.com/now" }),
        ),
        ("mcp", json!({ "server": "srv", "tool": "now" })),
    ];
    for (_, imp) in &mut impls {
        for (key, value) in extra.as_object().unwrap() {
            imp[key] = value.clone();
        }
    }
    impls
        .into_iter()
        .map(|(kind, imp)| {
            tool_doc_with(
                &format!("{kind}-tool"),
                "v1",
                json!({ "type": kind, "impl": imp }),
            )
        })
        .collect()
}

fn env_with_server() -> TestEnv {
    let env = TestEnv::new();
    env.edit_config(|c| {
        c["allowedHosts"] = json!(["api.example.com"]);
        c["mcpServers"] = json!({ "srv": { "command": "true" } });
    });
    env.bundle("b");
    env
}

#[test]
fn a_top_level_setting_written_inside_impl_is_refused_with_where_it_goes() {
    let env = env_with_server();
    let misplaced = json!({
        "maxCallsPerMinute": 1,
        "maxRetries": 2,
        "maxResponseBytes": 10,
        "maxRequestBytes": 10,
        "secrets": ["TK"],
    });
    for doc in with_impl_fields(&misplaced) {
        let problems = refused(&env, &doc);
        for field in misplaced.as_object().unwrap().keys() {
            let message = at(&problems, &format!("/impl/{field}"));
            assert!(
                message.contains(&format!("top-level \"{field}\"")),
                "{doc}: {message}"
            );
        }
    }
    assert!(env.refs(&["--bundle", "b"]).is_empty());
}

#[test]
fn a_misspelt_or_unknown_impl_field_is_refused_with_a_suggestion() {
    let env = env_with_server();
    for doc in with_impl_fields(&json!({ "timeoutMS": 5, "flavour": "x" })) {
        let problems = refused(&env, &doc);
        let typo = at(&problems, "/impl/timeoutMS");
        let kind = doc["type"].as_str().unwrap();
        if kind == "native" {
            // A native tool's impl has no timeout: nothing to suggest but its fields.
            assert!(typo.contains("func"), "{typo}");
        } else {
            assert!(
                typo.contains("did you mean \"timeoutMs\""),
                "{kind}: {typo}"
            );
        }
        let unknown = at(&problems, "/impl/flavour");
        assert!(unknown.contains("not a field of impl"), "{unknown}");
    }
    // The same document written by hand: validate reports it, the tool is unavailable, the
    // call refused before anything runs.
    let docs = with_impl_fields(&json!({ "maxCallsPerMinute": 1 }));
    for doc in &docs {
        env.put_tool_by_hand("b", doc);
    }
    let errors = validate_errors(&env);
    assert_eq!(
        errors
            .iter()
            .filter(|(p, _)| p == "/impl/maxCallsPerMinute")
            .count(),
        docs.len(),
        "{errors:?}"
    );
    let list = env.json(&["tool", "list", "--bundle", "b"]);
    for item in list["items"].as_array().unwrap() {
        assert!(
            item["status"].as_str().unwrap().starts_with("unavailable"),
            "{item:#}"
        );
    }
    let run = env.run(&["--json", "invoke", "b/native-tool@v1"]);
    assert_ne!(run.code(), 0, "{run}");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maxCallsPerMinute"),
        "{run}"
    );
}

#[test]
fn the_fields_impl_reads_are_still_taken() {
    let env = env_with_server();
    env.put_tool(
        "b",
        &http_tool(
            "full",
            json!({
                "method": "POST",
                "urlTemplate": "https://api.example.com/x",
                "headers": { "Content-Type": "application/json" },
                "bodyTemplate": { "a": 1 },
                "successCodes": [200, 201],
                "timeoutMs": 1000,
                "responseEncoding": "json",
                "extractExpr": "$.a",
                "errorMode": "fail",
            }),
        ),
    );
    env.put_tool(
        "b",
        &tool_doc_with(
            "mcp-full",
            "v1",
            json!({ "type": "mcp", "impl": { "server": "srv", "tool": "t", "timeoutMs": 5 } }),
        ),
    );
    env.put_tool(
        "b",
        &tool_doc_with(
            "go",
            "v1",
            json!({ "type": "go", "impl": { "goFunc": "now" } }),
        ),
    );
}

#[test]
fn a_header_name_a_request_cannot_carry_is_refused() {
    let env = env_with_server();
    for name in ["Bad Header:", "", "X-${TK}", "Line\nBreak", "é"] {
        let mut headers = serde_json::Map::new();
        headers.insert(name.to_owned(), json!("v"));
        let doc = tool_doc_with(
            "h",
            "v1",
            json!({
                "type": "http",
                "secrets": ["TK"],
                "impl": { "method": "GET", "urlTemplate": "https://api.example.com/x", "headers": headers },
            }),
        );
        let problems = refused(&env, &doc);
        let pointer = format!("/impl/headers/{name}");
        let message = at(&problems, &pointer);
        assert!(message.contains("not a header name"), "{name:?}: {message}");
    }
    // A placeholder in a name is named as such: a secret goes in the value.
    let doc = http_tool(
        "h",
        json!({ "method": "GET", "urlTemplate": "https://api.example.com/x", "headers": { "X-${OTHER_KEY}": "v" } }),
    );
    let problems = refused(&env, &doc);
    let message = at(&problems, "/impl/headers/X-${OTHER_KEY}");
    assert!(message.contains("placeholder"), "{message}");

    // The same rule for an MCP server's headers in toolctl.json.
    env.edit_config(|c| {
        c["mcpServers"] = json!({ "remote": { "url": "https://api.example.com/mcp", "headers": { "Bad Header:": "v" } } });
    });
    let errors = validate_errors(&env);
    let (_, message) = errors
        .iter()
        .find(|(p, _)| p == "/mcpServers/remote/headers/Bad Header:")
        .unwrap_or_else(|| panic!("{errors:?}"));
    assert!(message.contains("not a header name"), "{message}");
}

#[test]
fn lists_whose_repeats_or_emptiness_mean_nothing_are_refused() {
    let env = env_with_server();
    let doc = tool_doc_with(
        "dup",
        "v1",
        json!({
            "type": "http",
            "secrets": ["TK", "TK"],
            "impl": { "method": "GET", "urlTemplate": "https://api.example.com/x?k=${TK}", "successCodes": [] },
        }),
    );
    let problems = refused(&env, &doc);
    assert!(
        at(&problems, "/secrets/1").contains("twice"),
        "{problems:?}"
    );
    assert!(
        at(&problems, "/impl/successCodes").contains("empty"),
        "{problems:?}"
    );
    // An MCP server's secrets too.
    env.edit_config(|c| {
        c["mcpServers"] = json!({ "srv": { "command": "true", "secrets": ["K", "K"] } });
    });
    let errors = validate_errors(&env);
    assert!(
        at(&errors, "/mcpServers/srv/secrets/1").contains("twice"),
        "{errors:?}"
    );
}

#[test]
fn an_allowed_host_that_is_not_a_host_name_is_refused() {
    let env = TestEnv::new();
    for entry in ["x..y", ".example.com", "*.a..b", "a.-b.com"] {
        env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com", entry]));
        let errors = validate_errors(&env);
        // Each refused entry is a problem of its own, naming it.
        let (_, message) = errors
            .iter()
            .find(|(p, _)| p == "/allowedHosts")
            .unwrap_or_else(|| panic!("{entry}: {errors:?}"));
        assert!(message.contains(&format!("'{entry}'")), "{message}");
        assert!(!message.contains("api.example.com"), "{message}");
    }
}

#[test]
fn a_wildcard_of_a_public_suffix_is_refused_and_allows_nothing() {
    let env = TestEnv::new();
    env.bundle("b");
    for (entry, suffix) in [
        ("*.co.uk", "co.uk"),
        ("*.github.io", "github.io"),
        ("*.com.au", "com.au"),
    ] {
        let host = format!("shop.{suffix}");
        env.edit_config(|c| c["allowedHosts"] = json!([]));
        let slug = format!("shop-{}", suffix.replace('.', "-"));
        env.put_tool_by_hand(
            "b",
            &http_tool(
                &slug,
                json!({ "method": "GET", "urlTemplate": format!("https://{host}/x") }),
            ),
        );
        env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com", entry]));
        let errors = validate_errors(&env);
        let message = at(&errors, "/allowedHosts");
        assert!(message.contains(&format!("'{entry}'")), "{message}");
        assert!(
            message.contains(&format!("'{suffix}', a public suffix")),
            "{message}"
        );
        // A call under it is refused before any request, naming the entry.
        let call = env.run(&["--json", "invoke", &format!("b/{slug}")]);
        call.failure(3);
        let error = call.json();
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("'{entry}'")) && m.contains("public suffix")),
            "{call}"
        );
    }
    // A domain of one's own under a public suffix is a wildcard like any other.
    env.edit_config(|c| c["allowedHosts"] = json!(["*.example.co.uk"]));
    env.put_tool(
        "b",
        &http_tool(
            "own",
            json!({ "method": "GET", "urlTemplate": "https://api.example.co.uk/x" }),
        ),
    );
}
