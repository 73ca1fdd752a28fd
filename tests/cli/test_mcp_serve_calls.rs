//! `mcp serve` (stdio) and the end of a call: an `exec` program still running when its client
//! closes standard input, or cancels the call (`notifications/cancelled`), is killed with what
//! it started, at once — not at its `timeout_ms`, and never left running after the server —
//! with or without a cgroup. And a first `mcp serve` of a fresh catalog, whose index was never
//! built, announces no change of the tool list.

#![cfg(target_os = "linux")]

use crate::common::TestEnv;
use crate::common::serve_client::ServeClient as Client;
use crate::test_exec_cgroup::{kill, running};
use crate::test_mcp_tools::served_name;
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `exec` enabled on a fresh catalog.
fn exec_env() -> TestEnv {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    env
}

/// Start `tools/call` `id` of `exec` running `sh -c 'echo $$ >sleeper.pid; exec sleep 300'`
/// (20 s `timeout_ms`) in the workspace, and return the sleeper's process id once written.
fn start_sleeper(env: &TestEnv, client: &mut Client, id: u64) -> u32 {
    let pidfile: PathBuf = env.work().join("sleeper.pid");
    let _ = std::fs::remove_file(&pidfile);
    let exec = served_name(env, "builtin", "exec");
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": exec, "arguments": {
            "argv": ["sh", "-c", "echo $$ >sleeper.pid.tmp; mv sleeper.pid.tmp sleeper.pid; exec sleep 300"],
            "timeout_ms": 20000}}}));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(&pidfile)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the exec call did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The sleeper: killed when the test ends if it still runs, so no test leaves it behind.
struct Sleeper(u32);

impl Drop for Sleeper {
    fn drop(&mut self) {
        if running(self.0) {
            kill(self.0);
        }
    }
}

/// `pid` is gone within `within`.
#[track_caller]
fn assert_gone_within(pid: u32, within: Duration, when: &str) {
    let deadline = Instant::now() + within;
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "the exec program {pid} still runs {within:?} after {when}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Closing stdin during an `exec` call: the program goes within a few seconds (its
/// `timeout_ms` is 20 s, and it would sleep 300), and the server ends.
fn closing_stdin_kills_a_running_exec(vars: &[(&str, &str)]) {
    let env = exec_env();
    let mut client = Client::start(&env, vars);
    let sleeper = Sleeper(start_sleeper(&env, &mut client, 1));
    std::thread::sleep(Duration::from_millis(300));
    assert!(running(sleeper.0), "the program ran before stdin closed");
    client.stdin = None;
    assert_gone_within(sleeper.0, Duration::from_secs(3), "stdin closed");
    client.rest();
    let status = client.serve.wait().unwrap();
    assert!(status.success(), "mcp serve ended with {status}");
    // And after the server, still gone (nothing started it again).
    assert!(!running(sleeper.0));
}

#[test]
fn mcp_serve_kills_a_running_exec_when_its_client_closes_stdin() {
    closing_stdin_kills_a_running_exec(&[]);
}

#[test]
fn mcp_serve_kills_a_running_exec_when_its_client_closes_stdin_without_cgroups() {
    closing_stdin_kills_a_running_exec(&[("TOOLCTL_EXEC_CGROUP", "off")]);
}

#[test]
fn mcp_serve_kills_an_exec_call_its_client_cancels_and_serves_on() {
    let env = exec_env();
    let mut client = Client::start(&env, &[]);
    let sleeper = Sleeper(start_sleeper(&env, &mut client, 1));
    std::thread::sleep(Duration::from_millis(300));
    assert!(running(sleeper.0), "the program ran before the cancel");
    client.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "the user stopped it"}}),
    );
    assert_gone_within(sleeper.0, Duration::from_secs(3), "the call was cancelled");
    // The server serves on: another call answers, and the cancelled one never does.
    let exec = served_name(&env, "builtin", "exec");
    client.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": exec, "arguments": {"argv": ["echo", "still here"]}}}),
    );
    let answer = client.answer(2);
    assert_eq!(
        answer["result"]["structuredContent"]["stdout"], "still here\n",
        "{answer}"
    );
    client.stdin = None;
    let rest = client.rest();
    assert!(
        rest.iter().all(|m| m["id"] != 1),
        "the cancelled call was answered: {rest:?}"
    );
    assert!(client.serve.wait().unwrap().success());
}

#[test]
fn the_first_mcp_serve_of_a_fresh_catalog_announces_no_change() {
    // `init` alone: the index was never built.
    let env = TestEnv::new();
    let mut client = Client::start(&env, &[]);
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let listed = client.answer(1);
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
    // Past the first change checks (once a second, the first right after this answer).
    std::thread::sleep(Duration::from_millis(2500));
    client.stdin = None;
    let rest = client.rest();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut client.serve.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(client.serve.wait().unwrap().success(), "{stderr}");
    assert!(
        rest.iter()
            .all(|m| m["method"] != "notifications/tools/list_changed"),
        "a change was announced: {rest:?}\n{stderr}"
    );
    assert!(!stderr.contains("catalog changed"), "{stderr}");
}
