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

/// Regression: a `toolctl.json` toolctl refuses could not be repaired with `toolctl config`,
/// which refused the catalog like every other command.
#[test]
fn an_invalid_config_is_shown_and_repaired_one_problem_at_a_time() {
    let env = TestEnv::new();
    env.edit_config(|c| {
        c["allowedHosts"] = json!(["*", "ok.example"]);
        c["reap"]["gracePeriod"] = json!("soon");
    });
    let file = env.catalog().join("toolctl.json");
    let read = || std::fs::read(&file).unwrap();

    // Every other command refuses the catalog, naming each problem and its fix.
    let refused = env.run(&["tool", "list"]);
    refused
        .failure(3)
        .stderr_has("2 problems")
        .stderr_has("caused by: /allowedHosts: allowedHosts entry '*' would allow every host")
        .stderr_has("caused by: /reap/gracePeriod: 'soon' is not a duration")
        .stderr_has("hint: fix it with `toolctl config remove allowedHosts '*'`")
        .stderr_has("hint: fix it with `toolctl config set reap.gracePeriod VALUE`, or `toolctl config remove reap.gracePeriod` for the default");
    let doc = env.json_error(&["bundle", "list"], 3);
    assert_eq!(doc.error.code, "VALIDATION_ERROR");
    assert!(
        doc.error
            .hint
            .as_deref()
            .unwrap()
            .ends_with("`toolctl config remove reap.gracePeriod` for the default"),
        "{:?}",
        doc.error.hint
    );

    // `config get` shows what the file holds, and says on stderr what is wrong with it.
    let got = env.run(&["config", "get", "allowedHosts"]);
    got.success()
        .stderr_has("warning: toolctl.json has 2 problems; other commands refuse the catalog until it is fixed:")
        .stderr_has("/reap/gracePeriod: 'soon' is not a duration");
    assert_eq!(got.stdout, "[\n  \"*\",\n  \"ok.example\"\n]\n");
    assert_eq!(env.json(&["config", "get"]), env.config());

    // An edit that adds a problem is refused, naming it, and writes nothing; one that
    // replaces a problem with another is a new problem too.
    let before = read();
    let added = env.json_error(&["config", "add", "allowedHosts", "a*b.example"], 3);
    assert_eq!(added.error.details["problems"].as_array().unwrap().len(), 1);
    assert_eq!(
        added.error.details["problems"][0]["pointer"],
        "/allowedHosts"
    );
    assert!(
        added.error.details["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("'a*b.example' is not a host name"),
        "{added:?}"
    );
    env.run(&["config", "set", "reap.gracePeriod", "never"])
        .failure(3)
        .stderr_has("/reap/gracePeriod: 'never' is not a duration");
    env.run(&["config", "set", "attach.maxTotalTools", "-1"])
        .failure(3)
        .stderr_has("/attach/maxTotalTools");
    assert_eq!(read(), before, "a refused edit writes nothing");

    // An edit that leaves the problems as they were is written (and says what is left).
    env.run(&["config", "add", "allowedHosts", "b.example"])
        .success()
        .stderr_has("Added b.example to allowedHosts")
        .stderr_has("toolctl.json still has 2 problems");
    // Fix one problem, then the other.
    env.run(&["config", "remove", "allowedHosts", "*"])
        .success()
        .stderr_has("Removed * from allowedHosts")
        .stderr_has("toolctl.json still has a problem")
        .stderr_has("fix it with `toolctl config set reap.gracePeriod VALUE`");
    env.run(&["tool", "list"])
        .failure(3)
        .stderr_has("/reap/gracePeriod");
    let fixed = env.run(&["config", "set", "reap.gracePeriod", "2d"]);
    fixed.success();
    assert!(!fixed.stderr.contains("problem"), "{}", fixed.stderr);
    assert_eq!(
        env.config()["allowedHosts"],
        json!(["ok.example", "b.example"])
    );
    assert_eq!(env.config()["reap"]["gracePeriod"], "2d");
    env.run(&["tool", "list"]).success();
}

/// Problems serde would report one at a time (it stops at the first) are fixed one at a time.
#[test]
fn two_values_of_the_wrong_type_are_fixed_one_at_a_time() {
    let env = TestEnv::new();
    env.edit_config(|c| {
        c["attach"] = json!({ "maxTotalTools": "x", "minMcpTools": "y" });
    });
    env.run(&["search", "x"])
        .failure(3)
        .stderr_has("toolctl config set attach.");
    env.run(&["config", "set", "attach.maxTotalTools", "5"])
        .success()
        .stderr_has("still has a problem")
        .stderr_has("/attach/minMcpTools");
    env.run(&["config", "set", "attach.minMcpTools", "1"])
        .success();
    env.run(&["tool", "list"]).success();
}

/// A place no config key names (the document's root) and a file that is not JSON: the hint
/// is to edit the file.
#[test]
fn what_no_config_command_can_fix_is_edited_by_hand() {
    let env = TestEnv::new();
    let file = env.catalog().join("toolctl.json");
    std::fs::write(&file, "{\"allowedHosts\": [\n").unwrap();
    for args in [
        &["tool", "list"][..],
        &["config", "get"],
        &["config", "set", "reap.gracePeriod", "1d"],
    ] {
        env.run(args)
            .failure(3)
            .stderr_has("toolctl.json: EOF while parsing a list at line 2 column 1")
            .stderr_has("hint: edit ")
            .stderr_has(
                "toolctl.json by hand: it is not JSON, so no `toolctl config` command can read it",
            );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"allowedHosts\": [\n"
    );

    // A document that is not an object: no key names its root.
    std::fs::write(&file, "[]").unwrap();
    for args in [&["tool", "list"][..], &["config", "get"]] {
        env.run(args)
            .failure(3)
            .stderr_has("toolctl.json: the document must be a JSON object")
            .stderr_has(
                "hint: fix it by editing toolctl.json: no `toolctl config` key names that place",
            );
    }
    // A group key of the wrong type: set the group (or remove it).
    std::fs::write(
        &file,
        r#"{"schemaVersion": "1", "allowedHosts": [], "reap": 5}"#,
    )
    .unwrap();
    env.run(&["tool", "list"])
        .failure(3)
        .stderr_has("/reap")
        .stderr_has("hint: fix it with `toolctl config set reap VALUE`");
}

/// A config key with a dot in one of its names (an MCP server called `files.v2`) is named by
/// its pointer in the fix a refusal suggests: dotted, it would name another key.
/// The suggested command works, and the problem is said in words, not serde's.
#[test]
fn a_fix_for_a_key_with_a_dot_names_it_by_its_pointer() {
    let env = TestEnv::new();
    env.edit_config(|c| c["mcpServers"] = json!({ "files.v2": { "command": 5 } }));
    let run = env.run(&["tool", "list"]);
    run.failure(3)
        .stderr_has("/mcpServers/files.v2/command: expected a program (a string) or the program and its arguments (an array of strings)")
        .stderr_has("fix it with `toolctl config set /mcpServers/files.v2/command VALUE`, or `toolctl config remove /mcpServers/files.v2` to drop the server");
    env.run(&["config", "set", "/mcpServers/files.v2/command", "npx"])
        .success();
    assert_eq!(env.config()["mcpServers"]["files.v2"]["command"], "npx");
    env.run(&["tool", "list"]).success();
}

/// Regression: `config set` wrote MCP server entries `validate` then failed on
/// (a host allowedHosts does not list, an undeclared `${SECRET}`, neither command nor url, a
/// name with a dot), so the catalog's CI broke after a command that said it succeeded. Now
/// `config` refuses each with validate's words at its pointer and writes nothing; a good entry
/// is taken; `mcp import` of a broken entry written by hand is VALIDATION_ERROR, not
/// TOOL_DISABLED; and the hint for a server's missing `command` is to set it or drop the
/// server (it has no default to fall back on).
#[test]
fn config_refuses_an_mcp_server_entry_validate_would_report() {
    let env = TestEnv::new();
    let file = env.catalog().join("toolctl.json");
    let before = std::fs::read(&file).unwrap();
    for (key, entry, pointer, words) in [
        (
            "/mcpServers/r",
            r#"{"url":"https://evil.example/mcp"}"#,
            "/mcpServers/r/url",
            "MCP server 'r' host 'evil.example' of url is not in allowedHosts",
        ),
        (
            "/mcpServers/s",
            r#"{"command":["srv"],"env":{"T":"${TOK}"}}"#,
            "/mcpServers/s/env/T",
            "${TOK} is not a secret of this server",
        ),
        (
            "/mcpServers/ok",
            "{}",
            "/mcpServers/ok",
            "MCP server 'ok' has neither command (stdio) nor url",
        ),
        (
            "/mcpServers/a.b",
            r#"{"command":["echo"]}"#,
            "/mcpServers/a.b",
            "server name: the slug 'a.b' has a dot",
        ),
    ] {
        let refused = env.json_error(&["config", "set", key, entry], 3);
        assert_eq!(refused.error.code, "VALIDATION_ERROR");
        let problems = refused.error.details["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{key}: {problems:?}");
        assert_eq!(problems[0]["pointer"], pointer, "{key}");
        assert!(
            problems[0]["message"].as_str().unwrap().contains(words),
            "{key}: {problems:?}"
        );
        assert_eq!(
            std::fs::read(&file).unwrap(),
            before,
            "{key}: nothing written"
        );
    }
    env.run(&[
        "config",
        "set",
        "/mcpServers/fine",
        r#"{"command":["echo"]}"#,
    ])
    .success();
    env.run(&["validate"]).success();

    // Written by hand, a broken entry is validate's error, config's problem, and import's.
    env.edit_config(|c| c["mcpServers"]["ok"] = json!({}));
    let validated = env.run(&["validate"]);
    validated.failure(3);
    assert!(
        validated
            .stdout
            .contains("error[mcp]: MCP server 'ok' has neither command (stdio) nor url"),
        "{}",
        validated.stdout
    );
    env.run(&["config", "get"])
        .success()
        .stderr_has("warning: toolctl.json has a problem:")
        .stderr_has("fix it with `toolctl config set mcpServers.ok VALUE`, or `toolctl config remove mcpServers.ok` to drop the server");
    let import = env.json_error(&["mcp", "import", "ok"], 3);
    assert_eq!(import.error.code, "VALIDATION_ERROR");
    assert_eq!(
        import.error.details["problems"][0]["pointer"],
        "/mcpServers/ok"
    );
    // Other commands still work: a broken server makes only its own tools unavailable.
    env.run(&["tool", "list"]).success();
    env.run(&["config", "remove", "mcpServers.ok"]).success();
    env.run(&["validate"]).success();
}

/// Regression: removing `*` from `["*", "a.example", 5]` moves the bad `5` from
/// `/allowedHosts/2` to `/allowedHosts/1`; the edit counted it as a new problem and refused
/// the very fix the refusal's hint gave.
#[test]
fn a_problem_the_edit_only_moves_in_its_list_is_not_new() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["*", "a.example", 5]));
    env.run(&["tool", "list"])
        .failure(3)
        .stderr_has("hint: fix it with `toolctl config remove allowedHosts '*'`");
    env.run(&["config", "remove", "allowedHosts", "*"])
        .success()
        .stderr_has("still has a problem")
        .stderr_has("/allowedHosts/1: 5 is not of type \"string\"")
        .stderr_has("fix it with `toolctl config set allowedHosts VALUE`");
    assert_eq!(env.config()["allowedHosts"], json!(["a.example", 5]));
    // A problem of another item is still new, and so is a second copy of the same one
    // (`[5, 5, 5, …]` is refused: the one 5 the file had excuses only one of them).
    env.run(&["config", "add", "allowedHosts", "a*b.example"])
        .failure(3)
        .stderr_has("'a*b.example' is not a host name");
    env.run(&["config", "set", "allowedHosts", r#"[5, 5, "a.example"]"#])
        .failure(3)
        .stderr_has("/allowedHosts/1: 5 is not of type");
    assert_eq!(env.config()["allowedHosts"], json!(["a.example", 5]));
}

/// Regression: a command refused for toolctl.json named serde's first problem
/// only (loading stops there), so the user fixed two and met a third; it now lists every
/// problem `config get` and `validate` list, each with its fix.
#[test]
fn a_refused_command_names_every_problem_of_the_config() {
    let env = TestEnv::new();
    env.edit_config(|c| {
        c["allowedHosts"] = json!([5]);
        c["mcpServers"] = json!({ "s": { "command": 42 } });
        c["reap"]["gracePeriod"] = json!("1y");
    });
    let refused = env.json_error(&["tool", "list"], 3);
    let pointers: Vec<&str> = refused.error.details["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pointer"].as_str().unwrap())
        .collect();
    for pointer in [
        "/allowedHosts/0",
        "/mcpServers/s/command",
        "/reap/gracePeriod",
    ] {
        assert!(pointers.contains(&pointer), "{pointer} in {pointers:?}");
    }
    assert_eq!(pointers.len(), 3, "{pointers:?}");
    env.run(&["tool", "list"])
        .failure(3)
        .stderr_has("3 problems")
        .stderr_has("/mcpServers/s/command: expected a program (a string) or the program and its arguments")
        .stderr_has("hint: fix it with `toolctl config set mcpServers.s.command VALUE`, or `toolctl config remove mcpServers.s` to drop the server");
    let validated = env.run(&["validate"]);
    validated.failure(3);
    assert!(
        validated.stdout.contains("3 errors")
            && validated
                .stdout
                .contains("expected a program (a string) or the program and its arguments"),
        "{}",
        validated.stdout
    );
}

/// Regression: a toolctl.json that is a symlink out of the catalog was met with
/// "fix it by editing toolctl.json", which cannot help: the link is what is refused.
#[cfg(unix)]
#[test]
fn a_config_that_is_a_symlink_out_is_to_be_made_a_file() {
    let env = TestEnv::new();
    let file = env.catalog().join("toolctl.json");
    let outside = env.root().join("elsewhere.json");
    std::fs::rename(&file, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    for args in [&["tool", "list"][..], &["config", "get"]] {
        let run = env.run(args);
        run.failure(3).stderr_has("outside the catalog").stderr_has(
            "hint: make toolctl.json the file itself, not a symlink to one outside the catalog",
        );
        assert!(!run.stderr.contains("by editing"), "{}", run.stderr);
    }

    // A link inside the catalog is read and written as the file it stands for: its problems
    // get their usual fixes, not the link's "make it a file".
    let inside = env.catalog().join("conf");
    std::fs::create_dir(&inside).unwrap();
    std::fs::rename(&outside, inside.join("toolctl.json")).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("conf/toolctl.json", &file).unwrap();
    env.run(&["tool", "list"]).success();
    env.edit_config(|c| c["reap"]["gracePeriod"] = json!("forever"));
    let run = env.run(&["tool", "list"]);
    run.failure(3)
        .stderr_has("hint: fix it with `toolctl config set reap.gracePeriod VALUE`");
    assert!(!run.stderr.contains("symlink"), "{}", run.stderr);
    env.run(&["config", "set", "reap.gracePeriod", "2d"])
        .success();
    env.run(&["tool", "list"]).success();
}

/// The MCP server rules `config` holds: taking a host out of
/// allowedHosts is allowed though a server uses it (the policy's own edit: the server is then
/// off-limits, as an HTTP tool on that host is); an entry the schema alone refuses is
/// refused by `mcp import` as `validate` reports it; a server's `timeoutMs: 0` is one problem,
/// not two; and each hint works as printed (a bad name: remove and declare again; a bad
/// item of `secrets`: remove that item; a server named "": edit the file).
#[test]
fn mcp_server_problems_are_fixed_as_their_hints_say() {
    let env = TestEnv::new();
    env.edit_config(|c| {
        c["allowedHosts"] = json!(["api.w.example"]);
        c["mcpServers"] = json!({
            "u": { "url": "https://api.w.example/mcp" },
        });
    });
    env.run(&["validate"]).success();
    env.run(&["config", "remove", "allowedHosts", "api.w.example"])
        .success()
        .stderr_has("still has a problem")
        .stderr_has(
            "/mcpServers/u/url: MCP server 'u' host 'api.w.example' of url is not in allowedHosts",
        );
    assert_eq!(env.config()["allowedHosts"], json!([]));
    // A new server on a host not allowed is still refused.
    env.run(&[
        "config",
        "set",
        "mcpServers.v",
        r#"{"url":"https://other.example/mcp"}"#,
    ])
    .failure(3)
    .stderr_has("host 'other.example' of url is not in allowedHosts");

    env.edit_config(|c| {
        c["mcpServers"] = json!({
            "files.v2": { "command": "echo" },
            "x": { "command": "echo", "env": { "K": "${OK}" }, "secrets": ["OK", "bad name"] },
            "r": { "command": "echo", "timeoutMs": 0 },
        });
    });
    let got = env.run(&["config", "get"]);
    got.success()
        .stderr_has("toolctl.json has 3 problems")
        .stderr_has("fix it with `toolctl config remove /mcpServers/files.v2`, then declare the server again under a name of letters, digits and '-'")
        .stderr_has("fix it with `toolctl config remove mcpServers.x.secrets 'bad name'`")
        .stderr_has("/mcpServers/r/timeoutMs: timeoutMs must be more than 0");
    assert!(
        !got.stderr.contains("less than the minimum"),
        "{}",
        got.stderr
    );
    let import = env.json_error(&["mcp", "import", "x"], 3);
    assert_eq!(
        import.error.details["problems"][0]["pointer"],
        "/mcpServers/x/secrets/1"
    );
    env.run(&["config", "remove", "mcpServers.x.secrets", "bad name"])
        .success();
    env.run(&["config", "remove", "/mcpServers/files.v2"])
        .success();
    env.run(&["config", "remove", "mcpServers.r.timeoutMs"])
        .success();
    env.run(&["validate"]).success();

    env.edit_config(|c| c["mcpServers"][""] = json!({ "command": "echo" }));
    env.run(&["config", "get"])
        .success()
        .stderr_has("fix it by editing toolctl.json");
}

/// Regression: a `toolctl.json` of a schemaVersion this toolctl does not read was
/// a `validate` error, yet every other command read the catalog without a word. It is refused
/// as a tool or bundle file of that version is, never misread.
#[test]
fn a_config_of_another_schema_version_is_refused_not_misread() {
    let env = TestEnv::new();
    env.edit_config(|c| c["schemaVersion"] = json!("2"));
    let refused = env.json_error(&["tool", "list"], 3);
    assert_eq!(
        refused.error.details["problems"][0]["pointer"],
        "/schemaVersion"
    );
    let validated = env.run(&["validate"]);
    validated.failure(3);
    assert!(
        validated
            .stdout
            .contains("schemaVersion \"2\" is not one this toolctl reads (\"1\")"),
        "{}",
        validated.stdout
    );
    env.run(&["config", "set", "schemaVersion", "1"]).success();
    env.run(&["tool", "list"]).success();
}
