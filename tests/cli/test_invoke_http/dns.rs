//! A host name in `allowedHosts` whose DNS answer is this machine or its link (DNS rebinding, a
//! hijacked record, the cloud metadata service at 169.254.169.254) is not connected to, unless
//! the address itself is listed too. The names resolve through the system resolver from a
//! hosts file of the test's own, bound over `/etc/hosts` in a mount namespace that only the
//! toolctl under test sees (`unshare --user --map-root-user --mount`): the real `/etc/hosts`
//! is never touched, and toolctl is the binary users run.

use super::*;
use std::process::Command;

/// `cmd` run in a user and mount namespace of its own where `/etc/hosts` is `hosts`.
fn with_hosts(cmd: &Command, hosts: &Path) -> Command {
    let mut wrapped = Command::new("unshare");
    wrapped.args([
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        r#"mount --bind "$0" /etc/hosts && exec "$@""#,
    ]);
    wrapped
        .arg(hosts)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    wrapped.env_clear();
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            wrapped.env(key, value);
        }
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped.stdin(std::process::Stdio::null());
    wrapped
}

/// The hosts file of the tests, in `env`'s folder: `rebound.test` is 127.0.0.1,
/// `rebound6.test` ::1, `metadata.test` 169.254.169.254. Checked to work through
/// [`with_hosts`].
fn hosts_file(env: &TestEnv) -> std::path::PathBuf {
    let hosts = env.root().join("hosts");
    write_file(
        &hosts,
        "127.0.0.1 localhost\n127.0.0.1 rebound.test\n::1 rebound6.test\n169.254.169.254 metadata.test\n",
    );
    let mut probe = Command::new("getent");
    probe.args(["hosts", "rebound.test"]);
    let probe = Run::of(with_hosts(&probe, &hosts), None);
    assert!(
        probe.code() == 0 && probe.stdout.starts_with("127.0.0.1"),
        "this test needs unprivileged user and mount namespaces (unshare -rm) to resolve a \
         name to 127.0.0.1 without touching /etc/hosts: {probe}"
    );
    hosts
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_name_that_resolves_to_this_machine_or_its_link_is_not_called() {
    let w = World::new().await;
    let port = w.port;
    w.get("/ping", ok_json(json!("pong"))).await;
    let hosts = hosts_file(&w.env);
    let names = ["rebound.test", "rebound6.test", "metadata.test"];
    w.env.edit_config(|config| {
        config["allowedHosts"] = json!(names.map(|n| format!("{n}:{port}")));
    });
    for name in names {
        w.tool_with(
            name.split('.').next().unwrap(),
            json!({ "urlTemplate": format!("http://{name}:{port}/ping") }),
            json!({ "maxRetries": 10 }),
        );
    }
    let call = |tool: &str| Run::of(with_hosts(&w.command(tool, &json!({})), &hosts), None);

    for (tool, name, address, kind, entry) in [
        (
            "rebound",
            "rebound.test",
            "127.0.0.1",
            "a loopback address",
            "127.0.0.1",
        ),
        (
            "rebound6",
            "rebound6.test",
            "::1",
            "a loopback address",
            "[::1]",
        ),
        (
            "metadata",
            "metadata.test",
            "169.254.169.254",
            "a link-local address",
            "169.254.169.254",
        ),
    ] {
        let started = Instant::now();
        let err = error_doc(&call(tool), 7);
        assert_eq!(err.error.code, "HOST_NOT_ALLOWED", "{tool}: {err:?}");
        let message = &err.error.message;
        assert!(
            message.starts_with(&format!("host '{name}' resolves to {address}, {kind}")),
            "{message}"
        );
        assert!(
            message.ends_with(&format!(
                "add '{entry}' (the address without a port) to allowedHosts of toolctl.json"
            )),
            "{message}"
        );
        assert_eq!(
            err.error.details,
            json!({ "host": name, "address": address }),
            "{tool}"
        );
        // Refused at once, not retried as a connection error.
        assert!(started.elapsed() < Duration::from_secs(5), "{tool}");
    }
    assert!(w.requests().await.is_empty());

    // The address listed with a port allows only URLs that name it: the resolver does not see
    // the port, so such an entry must not let every allowed name reach every port here.
    w.env.edit_config(|config| {
        config["allowedHosts"]
            .as_array_mut()
            .unwrap()
            .push(json!(format!("127.0.0.1:{port}")));
    });
    assert_eq!(
        error_doc(&call("rebound"), 7).error.code,
        "HOST_NOT_ALLOWED"
    );
    assert!(w.requests().await.is_empty());
    // Listed without a port, it allows it by name too.
    w.env.edit_config(|config| {
        config["allowedHosts"]
            .as_array_mut()
            .unwrap()
            .push(json!("127.0.0.1"));
    });
    let run = call("rebound");
    run.success();
    assert_eq!(run.json()["value"], "pong", "{run}");
    let requests = w.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers.get("host").unwrap(),
        &format!("rebound.test:{port}")
    );
    // The others stay refused: only 127.0.0.1 was listed.
    assert_eq!(
        error_doc(&call("rebound6"), 7).error.code,
        "HOST_NOT_ALLOWED"
    );
}

/// The same for a Streamable HTTP MCP server: its host name may not lead to this machine.
#[test]
fn an_mcp_server_whose_host_name_resolves_to_loopback_is_not_called() {
    use crate::test_mcp_tools::{any_object, declare, mcp_tool};
    let env = TestEnv::new();
    let hosts = hosts_file(&env);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    env.bundle("mcp");
    declare(
        &env,
        json!({ "web": { "url": format!("http://rebound.test:{port}/mcp") } }),
    );
    env.edit_config(|config| config["allowedHosts"] = json!([format!("rebound.test:{port}")]));
    mcp_tool(&env, "echo", "web", "echo", any_object());
    let command = env.command(&["--json", "invoke", "mcp/echo", "--args", "{}"]);
    let err = error_doc(&Run::of(with_hosts(&command, &hosts), None), 7);
    assert_eq!(err.error.code, "HOST_NOT_ALLOWED", "{err:?}");
    assert!(
        err.error.message.starts_with(
            "MCP server 'web': host 'rebound.test' resolves to 127.0.0.1, a loopback address"
        ),
        "{err:?}"
    );
    assert!(
        err.error
            .message
            .contains("add '127.0.0.1' (the address without a port) to allowedHosts"),
        "{err:?}"
    );
    // Nothing connected to the port.
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err());
}
