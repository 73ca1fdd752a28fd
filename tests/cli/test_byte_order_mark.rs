//! A file saved with a UTF-8 byte order mark (Windows Notepad does so) is not JSON (RFC 8259
//! §8.1): `validate`, `tool put` and every reader say so in those words, at line 1 column 1,
//! rather than serde_json's bare "expected value".

use crate::common::{TestEnv, tool_doc};

const SAID: &str = "starts with a byte order mark (U+FEFF)";

fn with_bom(text: &str) -> String {
    format!("\u{feff}{text}")
}

#[test]
fn a_byte_order_mark_is_named_by_validate_put_and_readers() {
    let env = TestEnv::new();
    env.bundle("b");
    let put = env.put_tool("b", &tool_doc("hello", "v1"));
    let file = env.tool_file(put["bundleID"].as_str().unwrap(), "hello", "v1");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, with_bom(&text)).unwrap();

    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let report = run.json();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report}");
    assert_eq!(findings[0]["rule"], "parse", "{report}");
    assert_eq!(
        (&findings[0]["line"], &findings[0]["column"]),
        (&1.into(), &1.into())
    );
    assert!(
        findings[0]["message"].as_str().unwrap().contains(SAID),
        "{report}"
    );
    env.run(&["validate"]).failure(3).stdout_has(SAID);

    // Readers skip it with the reason; `tool get` names it.
    env.run(&["tool", "list"]).success().stderr_has(SAID);
    env.run(&["tool", "get", "b/hello"])
        .failure(3)
        .stderr_has(SAID);

    // On standard input, as `validate -` and `tool put -` read it.
    let doc = with_bom(&tool_doc("other", "v1").to_string());
    env.run_stdin(&["validate", "-"], &doc)
        .failure(3)
        .stdout_has(SAID);
    let run = env.run_stdin(&["--json", "tool", "put", "-", "--bundle", "b"], &doc);
    run.failure(3);
    let error = run.json();
    assert!(
        error["error"]["message"].as_str().unwrap().contains(SAID),
        "{error}"
    );
    assert_eq!(error["error"]["details"]["line"], 1, "{error}");
    assert!(
        !env.tool_file(put["bundleID"].as_str().unwrap(), "other", "v1")
            .exists()
    );
}
