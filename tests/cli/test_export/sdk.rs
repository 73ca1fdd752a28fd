//! Exports judged by the providers' own SDKs (`common/sdk_models.py`): every entry of every
//! provider's list must validate against that SDK's typed tool model, with no key it lacks.

use super::*;
use crate::common::sdk_models;

/// The SDK kind judging each provider's export (MCP's is judged by the MCP SDK in test_mcp).
const JUDGED: [(&str, &str); 5] = [
    ("openai", "openai-tools"),
    ("openai-responses", "openai-responses-tools"),
    ("anthropic", "anthropic-tools"),
    ("gemini", "gemini-tools"),
    ("ollama", "ollama-tools"),
];

#[test]
fn anthropic_keeps_a_tools_strict_and_every_export_passes_its_sdk() {
    let env = TestEnv::fixture();
    env.bundle("b");
    let strict = tool_doc_with(
        "strict-weather",
        "v1",
        json!({ "description": "Weather, strictly.", "strict": true, "argSchema": weather_schema_strict() }),
    );
    env.put_tool("b", &strict);
    let anthropic = export(
        &env,
        &[
            "--provider",
            "anthropic",
            "--lenient",
            "--tool",
            "b/strict-weather",
        ],
    );
    assert_eq!(anthropic[0]["strict"], true, "{anthropic:#}");
    let mut judged = Vec::new();
    for (provider, kind) in JUDGED {
        let list = export(&env, &["--provider", provider]);
        if provider == "anthropic" {
            // Only the tool that asks for it is strict.
            let strict: Vec<&str> = names_of(provider, &list)
                .into_iter()
                .filter(|name| entry_named(provider, &list, name).get("strict").is_some())
                .collect();
            assert_eq!(strict, ["strict-weather"], "{list:#}");
        }
        judged.push((kind, list));
    }
    let problems = sdk_models::problems(&judged);
    assert!(problems.is_empty(), "{problems:#?}");
}
