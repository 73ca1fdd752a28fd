//! `impl.auth`, `maxCallsPerMinute`, `maxRequestBytes` and SSE streams, against
//! `tests/fixtures/auth_server.py`: a Python server on 127.0.0.1 that checks bearer tokens,
//! recomputes HMAC signatures with Python's own `hmac`, plays an OAuth2 token endpoint
//! (counting token requests, expiring tokens, refusing a token once) and streams events.

use super::*;
use crate::common::read_json;
use crate::common::serve_client::ServeClient;
use crate::test_mcp_tools::served_name;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The Python API and a catalog whose `allowedHosts` holds it, with a bundle `h`.
struct Api {
    env: TestEnv,
    child: Child,
    port: u16,
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Api {
    /// Start the server with these environment variables (its settings).
    fn start(vars: &[(&str, &str)]) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/auth_server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .envs(vars.iter().copied())
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the test server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().expect("the server prints its port");
        let env = TestEnv::new();
        env.edit_config(|config| {
            config["allowedHosts"] = json!([format!("127.0.0.1:{port}")]);
        });
        env.bundle("h");
        Self { env, child, port }
    }

    fn url(&self, rest: &str) -> String {
        format!("http://127.0.0.1:{}{rest}", self.port)
    }

    /// Put `h/<slug>@v1` with this `impl` and these top-level fields.
    fn tool(&self, slug: &str, imp: Value, extra: Value) {
        self.env.put_tool("h", &http_doc(slug, imp, extra));
    }

    /// What the server received, but `/requests` itself, on paths starting with `prefix`.
    fn requests(&self, prefix: &str) -> Vec<Value> {
        // toolctl's own client: reqwest is built without a crypto provider of its own.
        let client =
            toolctl_lib::base::http::client(reqwest::redirect::Policy::none(), None).unwrap();
        let text = client
            .get(self.url("/requests"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        let all: Vec<Value> = serde_json::from_str(&text).unwrap();
        all.into_iter()
            .filter(|r| r["path"].as_str().unwrap().starts_with(prefix))
            .collect()
    }

    fn command(&self, tool: &str, args: &Value, secrets: &[(&str, &str)]) -> Command {
        let mut cmd = self.env.command(&[
            "--json",
            "invoke",
            &format!("h/{tool}"),
            "--args",
            &args.to_string(),
        ]);
        for (name, value) in secrets {
            cmd.env(format!("TOOLCTL_SECRET_{name}"), value);
        }
        cmd
    }

    fn run(&self, tool: &str, args: &Value, secrets: &[(&str, &str)]) -> Run {
        Run::of(self.command(tool, args, secrets), None)
    }

    #[track_caller]
    fn value(&self, tool: &str, args: &Value, secrets: &[(&str, &str)]) -> Value {
        let run = self.run(tool, args, secrets);
        run.success();
        run.json()["value"].clone()
    }

    /// `n` runs of the tool at once (each its own process).
    fn parallel(&self, n: usize, tool: &str, secrets: &[(&str, &str)]) -> Vec<Run> {
        let children: Vec<_> = (0..n)
            .map(|_| {
                let mut cmd = self.command(tool, &json!({}), secrets);
                cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
                (format!("{cmd:?}"), cmd.spawn().unwrap())
            })
            .collect();
        children
            .into_iter()
            .map(|(name, child)| Run::from_output(name, child.wait_with_output().unwrap()))
            .collect()
    }
}

/// Where `secret` stands as a whole token in `text` (no letter or digit next to it): the
/// places a redactor must have cleaned. A longer secret counts anywhere.
fn standing(text: &str, secret: &str) -> usize {
    let whole = secret.chars().count() < 8;
    text.match_indices(secret)
        .filter(|(at, _)| {
            !whole
                || !(text[..*at]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
                    || text[at + secret.len()..]
                        .chars()
                        .next()
                        .is_some_and(char::is_alphanumeric))
        })
        .count()
}

const TOKEN40: &str = "tk40-aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ";

// --- bearer, basic, header, query -------------------------------------------------------------

#[test]
fn bearer_auth_sends_the_declared_secret_and_an_undeclared_one_is_refused_at_put() {
    let api = Api::start(&[("BEARER", TOKEN40)]);
    let imp = json!({ "urlTemplate": api.url("/bearer"), "auth": { "type": "bearer", "secret": "API_TOKEN" } });
    let refused = api
        .env
        .try_put_tool("h", &http_doc("b", imp.clone(), json!({ "secrets": [] })));
    refused.failure(3);
    assert!(
        refused.stdout.contains("/impl/auth/secret") && refused.stdout.contains("API_TOKEN"),
        "{refused}"
    );

    api.tool("b", imp, json!({ "secrets": ["API_TOKEN"] }));
    assert_eq!(
        api.value("b", &json!({}), &[("API_TOKEN", TOKEN40)]),
        json!({ "ok": true })
    );
    // A wrong token: the server's 401 echoes it, redacted.
    let wrong = "wrong-token-value-0123456789";
    let run = api.run("b", &json!({}), &[("API_TOKEN", wrong)]);
    let err = error_doc(&run, 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(
        err.error.details["body"]
            .as_str()
            .unwrap()
            .contains("Bearer [redacted]"),
        "{run}"
    );
    assert!(!run.stdout.contains(wrong), "{run}");
    // No secret set: a clear error, nothing sent.
    let before = api.requests("/bearer").len();
    let err = error_doc(&api.run("b", &json!({}), &[]), 3);
    assert!(err.error.message.contains("API_TOKEN"), "{err:?}");
    assert_eq!(api.requests("/bearer").len(), before);
}

#[test]
fn basic_header_and_query_auth_put_the_secret_where_they_say_and_never_print_it() {
    use base64::Engine;
    let api = Api::start(&[]);
    let url = api.url("/echo?x=1");
    api.tool(
        "basic",
        json!({ "urlTemplate": url, "auth": { "type": "basic", "userSecret": "USER", "passwordSecret": "PASS" } }),
        json!({ "secrets": ["USER", "PASS"] }),
    );
    api.tool(
        "header",
        json!({ "urlTemplate": url, "auth": { "type": "header", "name": "X-Api-Key", "secret": "KEY" } }),
        json!({ "secrets": ["KEY"] }),
    );
    api.tool(
        "query",
        json!({ "urlTemplate": url, "auth": { "type": "query", "name": "api key", "secret": "KEY" } }),
        json!({ "secrets": ["KEY"] }),
    );
    let secrets = [
        ("USER", "someone"),
        ("PASS", TOKEN40),
        ("KEY", "k/y+z 40-chars-long-key-0123456789abcdef"),
    ];
    for tool in ["basic", "header", "query"] {
        let run = api.run(tool, &json!({}), &secrets);
        run.success();
        for (_, secret) in &secrets[1..] {
            assert!(!run.stdout.contains(secret), "{run}");
        }
        assert!(run.stdout.contains("[redacted]"), "{run}");
    }
    let sent = api.requests("/echo");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("someone:{TOKEN40}"));
    assert_eq!(
        sent[0]["headers"]["authorization"],
        format!("Basic {basic}")
    );
    assert_eq!(sent[1]["headers"]["x-api-key"], secrets[2].1);
    assert_eq!(
        sent[2]["path"],
        format!("/echo?x=1&api%20key={}", http_encoded(secrets[2].1))
    );
}

/// Basic auth's user name is not left in sight as the base64 of `user:` (the token's first
/// characters) whatever its length, and the whole header comes back redacted.
#[test]
fn basic_auth_echoed_shows_no_base64_of_the_user_name() {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD_NO_PAD;
    let api = Api::start(&[]);
    api.tool(
        "basic",
        json!({ "urlTemplate": api.url("/echo"), "auth": { "type": "basic", "userSecret": "U", "passwordSecret": "P" } }),
        json!({ "secrets": ["U", "P"] }),
    );
    for user in ["alice_user", "alice_user_13", "alice_user_name", "bob"] {
        let password = "correct-horse-battery";
        let run = api.run("basic", &json!({}), &[("U", user), ("P", password)]);
        run.success();
        let value = &run.json()["value"];
        assert_eq!(
            value["headers"]["authorization"], "Basic [redacted]",
            "{run}"
        );
        // The characters the user name's bytes alone decide.
        let encoded = STANDARD_NO_PAD.encode(user);
        let own = &encoded[..user.len() * 8 / 6];
        for secret in [user, own, password] {
            assert!(!run.stdout.contains(secret), "{secret}: {run}");
        }
    }
    let sent = api.requests("/echo");
    let token =
        base64::engine::general_purpose::STANDARD.encode("alice_user:correct-horse-battery");
    assert_eq!(
        sent[0]["headers"]["authorization"],
        format!("Basic {token}")
    );
}

/// Basic auth with an API key as the user and an empty password (`curl -u sk_test_…:`): the
/// password may be set and empty there, where any other empty secret counts as not set.
#[test]
fn basic_auth_takes_an_empty_password_and_no_other_empty_secret() {
    use base64::Engine;
    let api = Api::start(&[]);
    api.tool(
        "basic",
        json!({ "urlTemplate": api.url("/echo"), "auth": { "type": "basic", "userSecret": "U", "passwordSecret": "P" } }),
        json!({ "secrets": ["U", "P"] }),
    );
    let run = api.run("basic", &json!({}), &[("U", "sk_test_abcdefgh"), ("P", "")]);
    run.success();
    assert_eq!(
        run.json()["value"]["headers"]["authorization"],
        "Basic [redacted]",
        "{run}"
    );
    let token = base64::engine::general_purpose::STANDARD.encode("sk_test_abcdefgh:");
    assert_eq!(
        api.requests("/echo")[0]["headers"]["authorization"],
        format!("Basic {token}")
    );
    // An empty user is still refused, as is a password not set at all.
    for vars in [
        [("U", ""), ("P", "pw")],
        [("U", "sk_test_abcdefgh"), ("X", "")],
    ] {
        let err = error_doc(&api.run("basic", &json!({}), &vars), 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{vars:?}: {err:?}");
    }
    assert_eq!(api.requests("/echo").len(), 1);
}

/// A secret the server answers as a JSON number (`{"v": 40961234, "f": 40961234.0}`) is
/// redacted as a string is, in `invoke`, `invoke --json` and `invoke --batch`.
#[test]
fn a_secret_that_comes_back_as_a_number_is_redacted() {
    let api = Api::start(&[]);
    api.tool(
        "num",
        json!({ "urlTemplate": api.url("/num?v=${PIN}") }),
        json!({ "secrets": ["PIN"] }),
    );
    let pin = [("PIN", "40961234")];
    let value = api.value("num", &json!({}), &pin);
    assert_eq!(value, json!({ "v": "[redacted]", "f": "[redacted]" }));
    let mut plain = api.env.command(&["invoke", "h/num"]);
    plain.env("TOOLCTL_SECRET_PIN", pin[0].1);
    let run = Run::of(plain, None);
    run.success();
    assert!(run.stdout.contains("[redacted]"), "{run}");
    assert!(!run.stdout.contains("4096"), "{run}");

    let batch = json!({ "calls": [{ "call_id": "a", "name": "h/num", "arguments": {} }] });
    let mut cmd = api.env.command(&["--json", "invoke", "--batch", "-"]);
    cmd.env("TOOLCTL_SECRET_PIN", pin[0].1);
    let run = Run::of(cmd, Some(&batch.to_string()));
    run.success();
    assert!(!run.stdout.contains("4096"), "{run}");
    assert!(run.stdout.contains("[redacted]"), "{run}");
    // A short PIN leaves numbers alone: 4096 is as likely a count or a size as the PIN, and
    // a number turned into a string would fail the output's schema check.
    let value = api.value("num", &json!({}), &[("PIN", "4096")]);
    assert_eq!(value["v"], json!(4096));
    assert_eq!(value["f"].as_f64(), Some(4096.0));
}

/// Regression: the output schema was checked on the redacted value, so an output holding a
/// secret where the schema wants an integer or a pattern failed `OUTPUT_INVALID` on
/// `"[redacted]"`. The schema checks what the tool returned; then the value is redacted.
#[test]
fn the_output_schema_checks_the_value_before_its_secrets_are_redacted() {
    let api = Api::start(&[]);
    let output = |v: Value, query: Value| json!({ "outputSchema": { "type": "object", "properties": { "v": v, "query": query } } });
    let with = |extra: Value| {
        let mut fields = json!({ "secrets": ["PIN"] });
        fields
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        fields
    };
    api.tool(
        "num",
        json!({ "urlTemplate": api.url("/num?v=${PIN}") }),
        with(output(json!({ "type": "integer" }), json!({}))),
    );
    api.tool(
        "echo",
        json!({ "urlTemplate": api.url("/echo?k=${PIN}") }),
        with(output(
            json!({}),
            json!({ "type": "string", "pattern": "^k=40961234$" }),
        )),
    );
    let pin = [("PIN", "40961234")];
    // `invoke --json`, `invoke` and `invoke --batch`: passes its schema, printed redacted.
    assert_eq!(api.value("num", &json!({}), &pin)["v"], "[redacted]");
    assert_eq!(api.value("echo", &json!({}), &pin)["query"], "k=[redacted]");
    let mut plain = api.env.command(&["invoke", "h/num"]);
    plain.env("TOOLCTL_SECRET_PIN", pin[0].1);
    let run = Run::of(plain, None);
    run.success();
    assert!(
        run.stdout.contains("[redacted]") && !run.stdout.contains("4096"),
        "{run}"
    );
    let batch = json!({ "calls": [
        { "call_id": "a", "name": "h/num", "arguments": {} },
        { "call_id": "b", "name": "h/echo", "arguments": {} },
    ] });
    let mut cmd = api.env.command(&["--json", "invoke", "--batch", "-"]);
    cmd.env("TOOLCTL_SECRET_PIN", pin[0].1);
    let run = Run::of(cmd, Some(&batch.to_string()));
    run.success();
    assert!(!run.stdout.contains("4096"), "{run}");
    let results = run.json()["results"].clone();
    assert_eq!(results[0]["value"]["v"], "[redacted]", "{run}");
    assert_eq!(results[1]["value"]["query"], "k=[redacted]", "{run}");
    // `mcp serve`: the same order.
    let mut client = ServeClient::start(&api.env, &[("TOOLCTL_SECRET_PIN", pin[0].1)]);
    let num = client.call(&served_name(&api.env, "h", "num"), json!({}));
    assert_eq!(num["structuredContent"]["v"], "[redacted]", "{num}");
    let echo = client.call(&served_name(&api.env, "h", "echo"), json!({}));
    assert_eq!(echo["structuredContent"]["query"], "k=[redacted]", "{echo}");
}

/// An output holding a secret that breaks its schema fails `OUTPUT_INVALID`, and no part of
/// the failure (message, `details.errors`, `details.value`; stdout, stderr, `--json`,
/// `--batch`) holds the secret.
#[test]
fn an_output_that_breaks_its_schema_fails_without_its_secret() {
    let api = Api::start(&[]);
    let secret_fields = |output: Value| json!({ "secrets": ["PIN"], "outputSchema": output });
    api.tool(
        "num",
        json!({ "urlTemplate": api.url("/num?v=${PIN}") }),
        secret_fields(json!({ "type": "object", "properties": { "v": { "type": "integer", "maximum": 100 } } })),
    );
    api.tool(
        "echo",
        json!({ "urlTemplate": api.url("/echo?k=${PIN}") }),
        secret_fields(json!({ "type": "object", "properties": { "query": { "type": "string", "pattern": "^x=" } } })),
    );
    let pin = [("PIN", "40961234")];
    for tool in ["num", "echo"] {
        let run = api.run(tool, &json!({}), &pin);
        run.failure(7);
        let doc = run.json();
        assert_eq!(doc["error"]["code"], "OUTPUT_INVALID", "{run}");
        let errors = doc["error"]["details"]["errors"].as_array().unwrap();
        assert!(!errors.is_empty(), "{run}");
        assert!(doc["error"]["details"]["value"].is_object(), "{run}");
        assert!(
            !run.stdout.contains("4096") && !run.stderr.contains("4096"),
            "{tool}: {run}"
        );
        assert!(run.stdout.contains("[redacted]"), "{tool}: {run}");

        let mut plain = api.env.command(&["invoke", &format!("h/{tool}")]);
        plain.env("TOOLCTL_SECRET_PIN", pin[0].1);
        let run = Run::of(plain, None);
        run.failure(7);
        assert!(
            run.stderr.contains("OUTPUT_INVALID") || run.stderr.contains("output"),
            "{run}"
        );
        assert!(
            !run.stdout.contains("4096") && !run.stderr.contains("4096"),
            "{tool}: {run}"
        );

        let batch =
            json!({ "calls": [{ "call_id": "a", "name": format!("h/{tool}"), "arguments": {} }] });
        let mut cmd = api.env.command(&["--json", "invoke", "--batch", "-"]);
        cmd.env("TOOLCTL_SECRET_PIN", pin[0].1);
        let run = Run::of(cmd, Some(&batch.to_string()));
        assert!(run.stdout.contains("OUTPUT_INVALID"), "{run}");
        assert!(
            !run.stdout.contains("4096") && !run.stderr.contains("4096"),
            "{tool}: {run}"
        );

        let mut client = ServeClient::start(&api.env, &[("TOOLCTL_SECRET_PIN", pin[0].1)]);
        let result = client.call(&served_name(&api.env, "h", tool), json!({}));
        assert_eq!(result["isError"], true, "{result}");
        // (No structuredContent: an error's would not match the tool's outputSchema.)
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("OUTPUT_INVALID: ") && text.contains("[redacted]"),
            "{result}"
        );
        assert!(!result.to_string().contains("4096"), "{tool}: {result}");
        client.stdin = None;
        client.rest();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut client.serve.stderr.take().unwrap(), &mut stderr)
            .unwrap();
        assert!(!stderr.contains("4096"), "{tool}: {stderr}");
    }
}

// --- HMAC ---------------------------------------------------------------------------------------

const HMAC_KEY: &str = "whsec_0123456789abcdefghijklmnopqrstuv";

#[test]
fn hmac_signatures_are_the_ones_python_recomputes_from_what_arrived() {
    let api = Api::start(&[("HMAC_KEY", HMAC_KEY)]);
    let body = json!({ "note": "${note}", "n": 1 });
    let properties = json!({ "type": "object", "properties": { "note": { "type": "string" } } });
    api.tool(
        "github",
        json!({ "method": "POST", "urlTemplate": api.url("/hmac/github"), "bodyTemplate": body,
                "auth": { "type": "hmac", "secret": "HOOK", "header": "X-Hub-Signature-256", "value": "sha256=${signature}" } }),
        json!({ "secrets": ["HOOK"], "argSchema": properties }),
    );
    api.tool(
        "stripe",
        json!({ "method": "POST", "urlTemplate": api.url("/hmac/stripe"), "bodyTemplate": body,
                "auth": { "type": "hmac", "secret": "HOOK", "header": "Stripe-Signature",
                          "sign": "${timestamp}.${body}", "value": "t=${timestamp},v1=${signature}" } }),
        json!({ "secrets": ["HOOK"], "argSchema": properties }),
    );
    api.tool(
        "full",
        json!({ "method": "PUT", "urlTemplate": api.url("/hmac/full?q=${note}"), "bodyTemplate": body,
                "auth": { "type": "hmac", "secret": "HOOK", "header": "X-Sig", "algorithm": "sha512", "encoding": "base64",
                          "sign": "${method}\n${path}\n${query}\n${timestamp}\n${nonce}\n${body}",
                          "timestampHeader": "X-Ts", "nonceHeader": "X-Nonce" } }),
        json!({ "secrets": ["HOOK"], "argSchema": properties }),
    );
    let args = json!({ "note": "é \"quoted\" & more" });
    for tool in ["github", "stripe", "full"] {
        let run = api.run(tool, &args, &[("HOOK", HMAC_KEY)]);
        run.success();
        let value = &run.json()["value"];
        assert_eq!(value["valid"], true, "{tool}: {run}");
        assert!(!run.stdout.contains(HMAC_KEY), "{run}");
        // The server echoes the signature: redacted like a secret.
        if tool != "full" {
            assert!(
                value["got"].as_str().unwrap().contains("[redacted]"),
                "{run}"
            );
        } else {
            assert_eq!(value["nonce"], 32);
        }
    }
    // A wrong key: the server says so (the signature is checked, not merely present).
    assert_eq!(
        api.value("github", &args, &[("HOOK", "another-key")])["valid"],
        false
    );
}

#[test]
fn the_manuals_hmac_vectors_are_what_python_computes() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/invoke.md"))
            .unwrap();
    let mut vectors = Vec::new();
    let mut current: Vec<(String, String)> = Vec::new();
    for line in page.lines().map(str::trim) {
        if let Some((field, value)) = line.split_once(':')
            && ["key", "timestamp", "body", "header"].contains(&field)
        {
            current.push((field.to_owned(), value.trim().to_owned()));
            if field == "header" {
                vectors.push(std::mem::take(&mut current));
            }
        }
    }
    assert_eq!(vectors.len(), 2, "two recipes, each with a vector");
    for vector in vectors {
        let get = |name: &str| {
            vector
                .iter()
                .find(|(f, _)| f == name)
                .map(|(_, v)| v.clone())
        };
        let (key, body, header) = (
            get("key").unwrap(),
            get("body").unwrap(),
            get("header").unwrap(),
        );
        let script = match get("timestamp") {
            None => "import hmac,hashlib,sys; print('X-Hub-Signature-256: sha256=' + hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())".to_owned(),
            Some(t) => format!("import hmac,hashlib,sys; print('Stripe-Signature: t={t},v1=' + hmac.new(sys.argv[1].encode(), ('{t}.' + sys.argv[2]).encode(), hashlib.sha256).hexdigest())"),
        };
        let out = Command::new("python3")
            .args(["-c", &script, &key, &body])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), header);
    }
}

// --- OAuth2 client credentials ------------------------------------------------------------------

const CLIENT_ID: &str = "client-id-1";
const CLIENT_SECRET: &str = "cs-Zx9/+=&?0123456789abcdefghijklmnopqrs";

fn oauth_api(extra: &[(&str, &str)]) -> Api {
    let mut vars = vec![
        ("CLIENT_ID", CLIENT_ID),
        ("CLIENT_SECRET", CLIENT_SECRET),
        ("SCOPE", "read write"),
    ];
    vars.extend_from_slice(extra);
    let api = Api::start(&vars);
    api.tool(
        "api",
        json!({ "urlTemplate": api.url("/api"),
                "auth": { "type": "oauth2-client-credentials", "tokenUrl": api.url("/token"),
                          "clientIdSecret": "CID", "clientSecretSecret": "CSECRET", "scopes": ["read", "write"] } }),
        json!({ "secrets": ["CID", "CSECRET"] }),
    );
    api
}

const OAUTH_SECRETS: [(&str, &str); 2] = [("CID", CLIENT_ID), ("CSECRET", CLIENT_SECRET)];

#[test]
fn twenty_parallel_calls_make_one_token_request_and_the_token_file_is_private() {
    let api = oauth_api(&[("TOKEN_DELAY", "0.5")]);
    let runs = api.parallel(20, "api", &OAUTH_SECRETS);
    for run in &runs {
        run.success();
        assert_eq!(run.json()["value"], json!({ "token": 1 }), "{run}");
    }
    assert_eq!(api.requests("/token").len(), 1);
    assert_eq!(api.requests("/api").len(), 20);

    let dir = api.env.catalog().join(".toolctl/oauth2");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("tok-1-"), "{text}");
    assert!(!text.contains(CLIENT_SECRET) && !text.contains(CLIENT_ID));
    // Never in the catalog's own files, never in what was printed.
    let token = read_json(&files[0])["accessToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(files_holding(&api.env.catalog().join("bundles"), &token).is_empty());
    assert!(files_holding(&api.env.catalog().join("bundles"), CLIENT_SECRET).is_empty());
    for run in &runs {
        assert!(!run.stdout.contains(&token) && !run.stderr.contains(&token));
    }
}

/// A folder where the token's lock file goes is named, with what to do.
#[test]
fn a_folder_in_place_of_the_token_lock_is_named_with_its_fix() {
    let api = oauth_api(&[]);
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 1 })
    );
    let dir = api.env.catalog().join(".toolctl/oauth2");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::remove_file(&path).unwrap();
        if path.extension().is_some_and(|e| e == "lock") {
            std::fs::create_dir(&path).unwrap();
        }
    }
    let run = api.run("api", &json!({}), &OAUTH_SECRETS);
    assert_ne!(run.code(), 0, "{run}");
    let error = &run.json()["error"];
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(".lock"), "{run}");
    assert!(
        message.contains("a folder is where toolctl keeps this lock file"),
        "{run}"
    );
    assert!(error["hint"].as_str().unwrap().contains("oauth2"), "{run}");
}

/// A token answer the call cannot use (a token that would split a header, an empty one, a
/// life that is no number of seconds) is an upstream error and is not kept: the next call
/// fetches a good one, never a bad one for its lifetime.
#[test]
fn a_token_the_call_cannot_use_is_refused_and_not_cached() {
    for bad in [
        json!({ "access_token": "tok\r\nX-Injected: 1" }),
        json!({ "access_token": "" }),
        json!({ "access_token": "two words" }),
        json!({ "access_token": 7 }),
        json!({ "expires_in": "inf" }),
        json!({ "expires_in": "soon" }),
        json!({ "expires_in": -5 }),
    ] {
        let bad_text = bad.to_string();
        let api = oauth_api(&[("TOKEN_BAD", &bad_text)]);
        let run = api.run("api", &json!({}), &OAUTH_SECRETS);
        run.failure(7);
        let error = &run.json()["error"];
        assert_eq!(error["code"], "UPSTREAM_ERROR", "{bad}: {run}");
        assert!(
            error["message"].as_str().unwrap().contains("OAuth2 token"),
            "{bad}: {run}"
        );
        assert!(!run.stdout.contains("X-Injected"), "{run}");
        // Nothing kept, and the API was not called with it.
        let dir = api.env.catalog().join(".toolctl/oauth2");
        let kept: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| {
                d.map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json"))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(kept, Vec::<std::path::PathBuf>::new(), "{bad}");
        assert_eq!(api.requests("/api").len(), 0, "{bad}");
        // The next call fetches a good token.
        assert_eq!(
            api.value("api", &json!({}), &OAUTH_SECRETS),
            json!({ "token": 2 }),
            "{bad}"
        );
    }
}

/// A token cache file that cannot be used (over 4 MiB, a FIFO, a link to `/dev/zero`) is a
/// miss: a new token is fetched and replaces it, at once, never read for ever.
#[test]
fn a_token_cache_file_too_large_or_not_a_regular_file_is_replaced_by_a_new_token() {
    let api = oauth_api(&[]);
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 1 })
    );
    let dir = api.env.catalog().join(".toolctl/oauth2");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let good = std::fs::read_to_string(&file).unwrap();
    let spoil: [(&str, &dyn Fn()); 3] = [
        ("5 MiB", &|| {
            // The good token, padded past the limit: read whole it would be used.
            let mut doc: Value = serde_json::from_str(&good).unwrap();
            doc["pad"] = json!("x".repeat(5 << 20));
            write_file(&file, &doc.to_string());
        }),
        ("a FIFO", &|| crate::common::mkfifo(&file)),
        ("a link to /dev/zero", &|| {
            std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        }),
    ];
    for (n, (what, spoil)) in spoil.iter().enumerate() {
        std::fs::remove_file(&file).unwrap();
        spoil();
        let started = std::time::Instant::now();
        assert_eq!(
            api.value("api", &json!({}), &OAUTH_SECRETS),
            json!({ "token": n + 2 }),
            "{what}"
        );
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        assert!(
            std::fs::symlink_metadata(&file).unwrap().is_file(),
            "{what}"
        );
        assert!(
            std::fs::read_to_string(&file)
                .unwrap()
                .contains(&format!("tok-{}-", n + 2)),
            "{what}"
        );
    }
    assert_eq!(api.requests("/token").len(), 4);
}

#[test]
fn a_token_is_renewed_before_it_expires_and_reused_until_then() {
    let api = oauth_api(&[("TOKEN_TTL", "1.5")]);
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 1 })
    );
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 1 })
    );
    assert_eq!(api.requests("/token").len(), 1);
    // Renewed a tenth of its life early: at 1.35 s it is no longer used.
    std::thread::sleep(Duration::from_millis(1400));
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 2 })
    );
    assert_eq!(api.requests("/token").len(), 2);
    let sent = api.requests("/token");
    let basic = sent[0]["headers"]["authorization"].as_str().unwrap();
    assert!(basic.starts_with("Basic "), "{basic}");
    assert_eq!(
        sent[0]["body"],
        "grant_type=client_credentials&scope=read%20write"
    );
}

#[test]
fn a_401_to_a_token_renews_it_once() {
    let api = oauth_api(&[("REJECT", "first")]);
    // Token 1 is refused (and revoked): token 2 is fetched and the request sent again.
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 2 })
    );
    assert_eq!(api.requests("/token").len(), 2);
    assert_eq!(api.requests("/api").len(), 2);
    // The cached token 2 is reused.
    assert_eq!(
        api.value("api", &json!({}), &OAUTH_SECRETS),
        json!({ "token": 2 })
    );
    assert_eq!(api.requests("/token").len(), 2);
    // Wrong client credentials: the token endpoint's refusal, redacted.
    let run = api.run(
        "api",
        &json!({}),
        &[
            ("CID", "someone-else"),
            ("CSECRET", "not-the-secret-at-all"),
        ],
    );
    let err = error_doc(&run, 7);
    assert!(
        err.error
            .message
            .contains("token endpoint answered HTTP 401"),
        "{run}"
    );
    assert!(!run.stdout.contains("not-the-secret-at-all"), "{run}");

    // A server that refuses every token: one renewal, not a loop.
    let api = oauth_api(&[("REJECT", "always")]);
    let run = api.run("api", &json!({}), &OAUTH_SECRETS);
    let err = error_doc(&run, 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR", "{run}");
    assert_eq!(err.error.details["status"], 401);
    assert_eq!(api.requests("/token").len(), 2);
    assert_eq!(api.requests("/api").len(), 2);
}

#[test]
fn a_token_url_whose_host_is_not_allowed_is_refused_by_put_validate_and_invoke() {
    let api = oauth_api(&[]);
    let doc = http_doc(
        "elsewhere",
        json!({ "urlTemplate": api.url("/api"),
                "auth": { "type": "oauth2-client-credentials", "tokenUrl": "https://auth.example.com/token",
                          "clientIdSecret": "CID", "clientSecretSecret": "CSECRET" } }),
        json!({ "secrets": ["CID", "CSECRET"] }),
    );
    // `tool put` refuses it as it refuses a urlTemplate's host (one set of rules with
    // validate), naming the pointer.
    let put = api
        .env
        .run_stdin(&["tool", "put", "--bundle", "h", "-"], &doc.to_string());
    put.failure(3).stderr_has(
        "/impl/auth/tokenUrl: host 'auth.example.com' of auth.tokenUrl is not in allowedHosts",
    );
    // Allowed when it was put, and no longer (a config edit, a `git pull`).
    api.env
        .run(&["config", "add", "allowedHosts", "auth.example.com"])
        .success();
    api.env.put_tool("h", &doc);
    api.env
        .run(&["config", "remove", "allowedHosts", "auth.example.com"])
        .success();
    let run = api.env.run(&["--json", "validate"]);
    run.failure(3);
    assert!(
        run.stdout.contains("/impl/auth/tokenUrl") && run.stdout.contains("auth.example.com"),
        "{run}"
    );
    let err = error_doc(&api.run("elsewhere", &json!({}), &OAUTH_SECRETS), 6);
    assert_eq!(err.error.code, "HOST_NOT_ALLOWED", "{err:?}");
    assert!(api.requests("/").is_empty());
}

// --- limits -------------------------------------------------------------------------------------

#[test]
fn twenty_parallel_calls_send_no_more_than_max_calls_per_minute() {
    let api = Api::start(&[]);
    api.env
        .edit_config(|c| c["http"] = json!({ "rateLimitWindow": "60s" }));
    api.tool(
        "limited",
        json!({ "urlTemplate": api.url("/limited"), "timeoutMs": 4000 }),
        json!({ "maxCallsPerMinute": 5 }),
    );
    let runs = api.parallel(20, "limited", &[]);
    let ok = runs.iter().filter(|r| r.code() == 0).count();
    assert_eq!(ok, 5);
    for run in runs.iter().filter(|r| r.code() != 0) {
        let err = error_doc(run, 7);
        assert_eq!(err.error.code, "RATE_LIMITED", "{run}");
        assert_eq!(err.error.details["maxCallsPerMinute"], 5);
    }
    assert_eq!(api.requests("/limited").len(), 5);

    // A batch counts the same slots: none is left.
    let batch = json!({ "calls": [
        { "call_id": "a", "name": "h/limited", "arguments": {} },
        { "call_id": "b", "name": "h/limited", "arguments": {} },
    ], "wait_ms": 1000 });
    let run = api
        .env
        .run_stdin(&["--json", "invoke", "--batch", "-"], &batch.to_string());
    run.success();
    let doc = run.json();
    for result in doc["results"].as_array().unwrap() {
        assert_eq!(result["error"]["code"], "RATE_LIMITED", "{run}");
    }
    assert_eq!(api.requests("/limited").len(), 5);
}

/// A catalog whose `.toolctl/` cannot be written (here a file in its place, as a read-only
/// mount reads) still counts calls, in the user's cache folder, and still keeps its token.
#[test]
fn a_catalog_without_writable_state_still_limits_calls_and_keeps_tokens() {
    let api = oauth_api(&[]);
    api.env
        .edit_config(|c| c["http"] = json!({ "rateLimitWindow": "60s" }));
    api.tool(
        "limited",
        json!({ "urlTemplate": api.url("/limited"), "timeoutMs": 1000 }),
        json!({ "maxCallsPerMinute": 2 }),
    );
    let state = api.env.catalog().join(".toolctl");
    std::fs::remove_dir_all(&state).unwrap();
    write_file(&state, "not a folder");
    let codes: Vec<i32> = (0..3)
        .map(|_| api.run("limited", &json!({}), &[]).code())
        .collect();
    assert_eq!(
        codes,
        [0, 0, 7],
        "two calls in the window, the third refused"
    );
    assert_eq!(api.requests("/limited").len(), 2);
    // The token is fetched once and kept for the next call.
    for _ in 0..2 {
        assert_eq!(
            api.value("api", &json!({}), &OAUTH_SECRETS),
            json!({ "token": 1 })
        );
    }
    assert_eq!(api.requests("/token").len(), 1);
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "not a folder");
}

/// A damaged `limits.sqlite` is made again, with one warning, and the limit holds from there.
#[test]
fn a_damaged_call_count_file_is_made_again_with_a_warning() {
    let api = Api::start(&[]);
    api.tool(
        "limited",
        json!({ "urlTemplate": api.url("/limited"), "timeoutMs": 1000 }),
        json!({ "maxCallsPerMinute": 1 }),
    );
    let file = api.env.catalog().join(".toolctl/limits.sqlite");
    write_file(&file, &"garbage, not SQLite ".repeat(100));
    let run = api.run("limited", &json!({}), &[]);
    run.success();
    assert_eq!(
        run.stderr
            .matches("limits.sqlite could not be used")
            .count(),
        1,
        "{run}"
    );
    assert!(run.stderr.contains("made again"), "{run}");
    // Made again: the next call is counted against it, and warns of nothing.
    let run = api.run("limited", &json!({}), &[]);
    assert_eq!(run.code(), 7, "{run}");
    assert!(!run.stderr.contains("could not be used"), "{run}");
    assert_eq!(api.requests("/limited").len(), 1);
}

#[test]
fn calls_over_the_limit_wait_for_a_slot_and_no_window_holds_more_than_the_limit() {
    let api = Api::start(&[]);
    // A catalog-wide default, a short window.
    api.env
        .edit_config(|c| c["http"] = json!({ "rateLimitWindow": "2s", "maxCallsPerMinute": 4 }));
    api.tool(
        "limited",
        json!({ "urlTemplate": api.url("/limited"), "timeoutMs": 15000 }),
        json!({}),
    );
    let started = Instant::now();
    let runs = api.parallel(12, "limited", &[]);
    for run in &runs {
        run.success();
    }
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let mut times: Vec<f64> = api
        .requests("/limited")
        .iter()
        .map(|r| r["at"].as_f64().unwrap())
        .collect();
    times.sort_by(f64::total_cmp);
    assert_eq!(times.len(), 12);
    for window in times.windows(5) {
        // Arrival times, seen from the server: some slack for the way there from a process
        // that got its slot (12 processes on a loaded 2-core machine).
        assert!(window[4] - window[0] >= 1.6, "{times:?}");
    }
}

#[test]
fn max_request_bytes_refuses_a_large_request_before_sending_and_a_large_batch_is_refused() {
    let api = Api::start(&[]);
    let properties = json!({ "type": "object", "properties": { "text": { "type": "string" } } });
    api.tool(
        "small",
        json!({ "method": "POST", "urlTemplate": api.url("/echo"), "bodyTemplate": { "text": "${text}" } }),
        json!({ "maxRequestBytes": 400, "argSchema": properties }),
    );
    assert!(
        api.value("small", &json!({ "text": "short" }), &[])
            .is_object()
    );
    let err = error_doc(
        &api.run("small", &json!({ "text": "x".repeat(500) }), &[]),
        3,
    );
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert!(
        err.error.message.contains("maxRequestBytes (400)"),
        "{err:?}"
    );
    assert_eq!(api.requests("/echo").len(), 1);

    // The 1 MiB default, and toolctl.json's default for every tool.
    let big = "x".repeat(1024 * 1024);
    api.tool(
        "default",
        json!({ "method": "POST", "urlTemplate": api.url("/echo"), "bodyTemplate": { "text": "${text}" } }),
        json!({ "argSchema": properties }),
    );
    let args_file = api.env.work().join("big.json");
    write_file(&args_file, &json!({ "text": big }).to_string());
    let run = api.env.run(&[
        "--json",
        "invoke",
        "h/default",
        "--args-file",
        args_file.to_str().unwrap(),
    ]);
    assert_eq!(error_doc(&run, 3).error.code, "VALIDATION_ERROR");
    api.env
        .edit_config(|c| c["http"] = json!({ "maxRequestBytes": 200 }));
    let err = error_doc(
        &api.run("default", &json!({ "text": "y".repeat(300) }), &[]),
        3,
    );
    assert!(
        err.error.message.contains("maxRequestBytes (200)"),
        "{err:?}"
    );
    assert_eq!(api.requests("/echo").len(), 1);

    // A batch document over 1 MiB.
    let calls: Vec<Value> = (0..2)
        .map(|i| json!({ "call_id": format!("c{i}"), "name": "h/small", "arguments": { "text": "z".repeat(600 * 1024) } }))
        .collect();
    let run = api.env.run_stdin(
        &["--json", "invoke", "--batch", "-"],
        &json!({ "calls": calls }).to_string(),
    );
    let err = error_doc(&run, 3);
    assert!(err.error.message.contains("1 MiB"), "{run}");
    assert_eq!(api.requests("/echo").len(), 1);
}

// --- SSE ------------------------------------------------------------------------------------------

#[test]
fn an_event_stream_is_read_until_it_ends_or_a_terminal_event() {
    let api = Api::start(&[]);
    api.tool(
        "plain",
        json!({ "urlTemplate": api.url("/sse/plain"), "responseEncoding": "sse" }),
        json!({}),
    );
    assert_eq!(api.value("plain", &json!({}), &[]), json!("ab\ncd"));
    // A slow stream that stays open after its [DONE]: the terminal event ends the call.
    api.tool(
        "slow",
        json!({ "urlTemplate": api.url("/sse/slow"), "responseEncoding": "sse", "sseTerminal": "[DONE]",
                "extractExpr": "$.text", "timeoutMs": 8000 }),
        json!({}),
    );
    let started = Instant::now();
    assert_eq!(
        api.value("slow", &json!({}), &[]),
        json!("part0 part1 part2 part3 part4 ")
    );
    assert!(started.elapsed() < Duration::from_secs(6));
}

#[test]
fn a_never_ending_stream_stops_at_the_timeout_or_the_size_cap() {
    let api = Api::start(&[]);
    // toolctl.json's defaults; a tool's own field wins.
    api.env
        .edit_config(|c| c["http"] = json!({ "timeoutMs": 800, "maxResponseBytes": 300 }));
    api.tool(
        "forever",
        json!({ "urlTemplate": api.url("/sse/forever"), "responseEncoding": "sse" }),
        json!({ "maxResponseBytes": 1_000_000 }),
    );
    let started = Instant::now();
    let err = error_doc(&api.run("forever", &json!({}), &[]), 7);
    assert_eq!(err.error.code, "TIMEOUT", "{err:?}");
    assert!(err.error.message.contains("800 ms"), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    api.tool(
        "capped",
        json!({ "urlTemplate": api.url("/sse/forever"), "responseEncoding": "sse", "timeoutMs": 8000 }),
        json!({}),
    );
    let err = error_doc(&api.run("capped", &json!({}), &[]), 7);
    assert_eq!(err.error.code, "UPSTREAM_ERROR");
    assert!(
        err.error.message.contains("maxResponseBytes (300"),
        "{err:?}"
    );
}

#[test]
fn invoke_stream_prints_each_event_as_it_comes() {
    let api = Api::start(&[]);
    api.tool(
        "slow",
        json!({ "urlTemplate": api.url("/sse/slow"), "responseEncoding": "sse", "sseTerminal": "[DONE]", "timeoutMs": 8000 }),
        json!({}),
    );
    let mut cmd = api.env.command(&["--json", "invoke", "h/slow", "--stream"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    // The first event arrived while the stream was still running.
    assert!(child.try_wait().unwrap().is_none());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait_with_output().unwrap();
    let context = format!(
        "{first}\n{}\n{}",
        rest.join("\n"),
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(status.status.success(), "{context}");
    let first: Value = serde_json::from_str(&first).expect(&context);
    assert_eq!(
        first,
        json!({ "event": "delta", "data": "{\"text\": \"part0 \"}" })
    );
    // Then four more events and the result document: JSON Lines, one document a line.
    assert_eq!(rest.len(), 5, "{context}");
    for line in &rest[..4] {
        let event: Value = serde_json::from_str(line).expect(&context);
        assert_eq!(event["event"], "delta");
    }
    let result: Value = serde_json::from_str(&rest[4]).expect(&context);
    assert_eq!(result["ok"], true);
    assert_eq!(
        result["value"].as_str().unwrap().matches("part").count(),
        5,
        "{context}"
    );
}

// --- secrets of every length --------------------------------------------------------------------

#[test]
fn secrets_of_1_3_and_40_characters_never_show_in_outputs_or_state_files() {
    for secret in ["Q", "zQx", TOKEN40] {
        let api = Api::start(&[
            ("CLIENT_ID", "the-client"),
            ("CLIENT_SECRET", secret),
            ("SCOPE", ""),
        ]);
        api.tool(
            "bearer",
            json!({ "urlTemplate": api.url("/echo"), "auth": { "type": "bearer", "secret": "S" } }),
            json!({ "secrets": ["S"], "maxCallsPerMinute": 100 }),
        );
        api.tool(
            "oauth",
            json!({ "urlTemplate": api.url("/api"),
                    "auth": { "type": "oauth2-client-credentials", "tokenUrl": api.url("/token"),
                              "clientIdSecret": "CID", "clientSecretSecret": "S" } }),
            json!({ "secrets": ["CID", "S"] }),
        );
        let secrets = [("S", secret), ("CID", "the-client")];
        let mut runs = vec![
            api.run("bearer", &json!({}), &secrets),
            api.run("oauth", &json!({}), &secrets),
        ];
        let mut human = api.env.command(&["invoke", "h/bearer"]);
        human.env("TOOLCTL_SECRET_S", secret);
        runs.push(Run::of(human, None));
        // A refused call: the token endpoint echoes the client's credentials.
        runs.push(api.run("oauth", &json!({}), &[("S", secret), ("CID", "wrong")]));
        for run in &runs {
            assert_eq!(standing(&run.stdout, secret), 0, "{secret}: {run}");
            assert_eq!(standing(&run.stderr, secret), 0, "{secret}: {run}");
        }
        assert!(runs[0].stdout.contains("[redacted]"), "{}", runs[0]);
        let state = api.env.catalog().join(".toolctl");
        let mut stack = vec![state];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if secret.len() > 1 || path.extension().is_some_and(|e| e == "json") {
                    // A database's binary pages may hold any single byte next to non-letters.
                    let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                    assert_eq!(standing(&text, secret), 0, "{secret} in {}", path.display());
                }
            }
        }
    }
}

// --- tool new --auth ----------------------------------------------------------------------------

#[test]
fn tool_new_auth_writes_skeletons_that_validate_and_run() {
    let api = Api::start(&[("CLIENT_ID", CLIENT_ID), ("CLIENT_SECRET", CLIENT_SECRET)]);
    for kind in ["bearer", "hmac", "oauth2"] {
        let slug = format!("with-{kind}");
        let run = api.env.run(&[
            "tool",
            "new",
            "h",
            &slug,
            "--url",
            &api.url("/api"),
            "--auth",
            kind,
        ]);
        run.success();
        let doc = read_json(Path::new(run.stdout.trim()));
        let auth = &doc["impl"]["auth"];
        let declared: Vec<&str> = doc["secrets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        for field in ["secret", "clientIdSecret", "clientSecretSecret"] {
            if let Some(name) = auth[field].as_str() {
                assert!(declared.contains(&name), "{kind}: {doc}");
            }
        }
    }
    let run = api.env.run(&["validate", "--strict"]);
    run.success();
    // The OAuth2 skeleton's token URL is on the tool's own (allowed) host.
    let run = api.env.run(&["tool", "enable", "h/with-oauth2"]);
    run.success();
    let mut cmd = api.env.command(&[
        "--json",
        "invoke",
        "h/with-oauth2",
        "--args",
        r#"{"query":"x"}"#,
    ]);
    cmd.env("TOOLCTL_SECRET_CLIENT_ID", CLIENT_ID)
        .env("TOOLCTL_SECRET_CLIENT_SECRET", CLIENT_SECRET);
    let run = Run::of(cmd, None);
    // The skeleton's scopes are not the server's: the token endpoint refuses, having been asked.
    let err = error_doc(&run, 7);
    assert!(err.error.message.contains("token endpoint"), "{run}");
    assert_eq!(api.requests("/oauth/token").len(), 1);

    let refused = api.env.run(&[
        "tool", "new", "h", "n", "--type", "native", "--auth", "bearer",
    ]);
    refused.failure(3);
}

/// `invoke --stream` shows a server's events as all human output is shown: its control
/// characters visible, none reaching the terminal (ESC, BEL and a C1 control included).
#[test]
fn invoke_stream_shows_control_characters_visibly() {
    let api = Api::start(&[]);
    api.tool(
        "esc",
        json!({ "urlTemplate": api.url("/sse/escapes"), "responseEncoding": "sse", "timeoutMs": 8000 }),
        json!({}),
    );
    let out = api
        .env
        .command(&["invoke", "h/esc", "--stream"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.starts_with("hi\\u001b]0;OWNED\\u0007\\u001b[2J\\u009b31m\n"),
        "{stdout}"
    );
    assert!(
        !stdout.contains(|c: char| c.is_control() && c != '\n'),
        "{stdout:?}"
    );
}
