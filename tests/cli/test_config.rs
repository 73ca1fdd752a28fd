//! `toolctl config`: one key of toolctl.json at a time, checked against the config schema.

use crate::common::TestEnv;
use serde_json::json;

#[test]
fn hosts_are_added_and_removed_and_the_rest_of_the_file_kept() {
    let env = TestEnv::new();
    env.run(&["config", "add", "allowedHosts", "api.example.com"])
        .success()
        .stderr_has("Added api.example.com to allowedHosts");
    env.run(&["config", "add", "allowedHosts", "*.internal.example"])
        .success();
    // Adding what is there changes nothing and says so.
    let again = env.json(&["config", "add", "allowedHosts", "api.example.com"]);
    assert_eq!(
        again,
        json!({ "key": "allowedHosts", "pointer": "/allowedHosts",
                "value": ["api.example.com", "*.internal.example"], "changed": false })
    );
    assert_eq!(
        env.config()["allowedHosts"],
        json!(["api.example.com", "*.internal.example"])
    );
    let got = env.run(&["config", "get", "allowedHosts"]);
    got.success();
    assert_eq!(
        got.stdout,
        "[\n  \"api.example.com\",\n  \"*.internal.example\"\n]\n"
    );
    env.run(&["config", "remove", "allowedHosts", "api.example.com"])
        .success()
        .stderr_has("Removed api.example.com from allowedHosts");
    assert_eq!(env.config()["allowedHosts"], json!(["*.internal.example"]));
    // The rest of the file is as init wrote it, key order included.
    let text = std::fs::read_to_string(env.catalog().join("toolctl.json")).unwrap();
    let keys: Vec<&str> = ["schemaVersion", "allowedHosts", "builtin", "reap"]
        .into_iter()
        .filter(|k| text.contains(&format!("\"{k}\"")))
        .collect();
    assert_eq!(keys.len(), 4, "{text}");
    assert!(text.find("\"schemaVersion\"") < text.find("\"allowedHosts\""));
    assert!(text.find("\"builtin\"") < text.find("\"reap\""));
}

#[test]
fn values_take_the_type_the_schema_gives_the_key() {
    let env = TestEnv::new();
    // A string key takes the text as it is; other keys take JSON.
    env.run(&["config", "set", "reap.gracePeriod", "7d"])
        .success();
    env.run(&["config", "set", "/attach/maxTotalTools", "20"])
        .success();
    env.run(&["config", "set", "builtin.tools.exec.isEnabled", "true"])
        .success();
    env.run(&["config", "set", "pick.llm.baseUrl", "http://127.0.0.1:9/v1"])
        .success();
    let config = env.config();
    assert_eq!(config["reap"]["gracePeriod"], "7d");
    assert_eq!(config["attach"]["maxTotalTools"], 20);
    assert_eq!(config["builtin"]["tools"]["exec"]["isEnabled"], true);
    assert_eq!(config["pick"]["llm"]["baseUrl"], "http://127.0.0.1:9/v1");
    // The flag reached the catalog: exec is enabled now.
    let exec = env.json(&["tool", "get", "builtin/exec"]);
    assert_eq!(exec["isEnabled"], true);

    let got = env.run(&["config", "get", "reap.gracePeriod"]);
    assert_eq!(got.success().stdout, "7d\n");
    assert_eq!(
        env.json(&["config", "get", "attach.maxTotalTools"]),
        json!(20)
    );
    assert_eq!(env.json(&["config", "get"]), env.config());

    env.run(&["config", "remove", "attach.maxTotalTools"])
        .success()
        .stderr_has("Removed attach.maxTotalTools");
    assert_eq!(env.config()["attach"], json!({}));
}

#[test]
fn bad_keys_and_values_are_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    let before = std::fs::read(env.catalog().join("toolctl.json")).unwrap();
    let unchanged = || {
        assert_eq!(
            std::fs::read(env.catalog().join("toolctl.json")).unwrap(),
            before
        );
    };

    let typo = env.json_error(&["config", "add", "alowedHosts", "a.example"], 4);
    assert_eq!(typo.error.code, "NOT_FOUND");
    assert!(typo.error.message.contains("config key 'alowedHosts'"));
    assert!(
        typo.error
            .hint
            .as_deref()
            .unwrap()
            .contains("did you mean 'allowedHosts'?")
    );
    unchanged();

    let wrong_type = env.json_error(&["config", "set", "attach.maxTotalTools", "many"], 3);
    assert_eq!(wrong_type.error.code, "VALIDATION_ERROR");
    assert_eq!(
        wrong_type.error.details["problems"][0],
        json!({ "pointer": "/attach/maxTotalTools", "message": "'many' is not an integer" })
    );
    unchanged();

    // The schema's own rules (a minimum) and toolctl's (a duration, a host).
    let below = env.json_error(&["config", "set", "attach.maxTotalTools", "-1"], 3);
    assert_eq!(
        below.error.details["problems"][0]["pointer"],
        "/attach/maxTotalTools"
    );
    let duration = env.json_error(&["config", "set", "reap.gracePeriod", "soon"], 3);
    assert_eq!(
        duration.error.details["problems"][0]["pointer"],
        "/reap/gracePeriod"
    );
    let host = env.json_error(&["config", "add", "allowedHosts", "not a host/x"], 3);
    assert_eq!(
        host.error.details["problems"][0]["pointer"],
        "/allowedHosts"
    );
    // `*` allows nothing (there is no entry for every host), so it is refused, not kept.
    env.run(&["config", "add", "allowedHosts", "*"])
        .failure(3)
        .stderr_has("allowedHosts entry '*' would allow every host");
    env.run(&["config", "add", "allowedHosts", "a*b.example"])
        .failure(3)
        .stderr_has("is not a host name");
    unchanged();

    // A key that is a value, not a list; a key below a value; a pointer in the wrong form.
    env.run(&["config", "add", "reap.gracePeriod", "1d"])
        .failure(3)
        .stderr_has("not a list");
    env.run(&["config", "set", "reap.gracePeriod.x", "1"])
        .failure(4)
        .stderr_has("reap.gracePeriod is a value, not a group of keys");
    env.run(&["config", "get", "reap..x"]).failure(3);
    env.run(&["config", "get", "pick.llm.timeoutMs"])
        .failure(4)
        .stderr_has("is not set in toolctl.json");
    unchanged();
}
