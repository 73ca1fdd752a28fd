//! Stdio MCP servers in a cgroup of their own, as `exec`'s programs are (test_exec_cgroup.rs):
//! where cgroup v2 is writable, a server runs in `toolctl-mcp-<owner>-<UUID>` from its start, so
//! when it is ended — the call of `toolctl invoke` over, the batch over, `mcp serve` ending on
//! its client's leaving or on SIGTERM — a grandchild that did `setsid`, cleared its environment
//! and lost its parent dies with it, and the cgroup is removed. A long-lived server's cgroup is
//! never taken for a leftover while its toolctl lives; one whose toolctl is gone is. With
//! `TOOLCTL_EXEC_CGROUP=off` (or no cgroups) the documented fallback holds, and a program that
//! cannot be run is the same error either way.

#![cfg(target_os = "linux")]

use crate::common::serve_client::ServeClient as Client;
use crate::common::{TestEnv, mcp_clients};
use crate::test_exec_cgroup::{
    cgroups, kill, own_cgroup, owner_of_self, remove_cgroup, running, start_of, with_a_sleeper,
};
use crate::test_mcp_tools::{any_object, declare, fixture_server, mcp_tool, served_name};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server's wrapper: writes its cgroup (`0::` of `/proc/self/cgroup`) to `$1/cgroup.txt`,
/// leaves behind a grandchild that double-forks, `setsid`s and clears its environment (so it
/// has neither the server's process group, nor its tag, nor a parent of the server) and writes
/// its process id to `$1/escapee.pid`, then execs the fixture server (the rest of its
/// arguments).
const WRAPPER: &str = r#"marks="$1"; shift
rm -f "$marks/escapee.pid"
cat /proc/self/cgroup > "$marks/cgroup.txt"
(setsid env -i sh -c 'echo $$ > "$0/escapee.pid"; exec sleep 300' "$marks" </dev/null >/dev/null 2>&1 &)
while [ ! -s "$marks/escapee.pid" ]; do sleep 0.01; done
exec "$@""#;

/// A catalog whose server `fx` (the fixture server behind [`WRAPPER`], with its lifecycle
/// tools) leaves an escapee, with its `echo`, `die` and `slow` tools as `mcp/echo`, `mcp/die`
/// and `mcp/slow`; the marks go to the returned folder.
fn escaping_env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    env.bundle("mcp");
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    declare(
        &env,
        json!({ "fx": { "command": [
            "sh", "-c", WRAPPER, "wrapper", marks,
            mcp_clients::python(), fixture_server(), "stdio",
        ], "env": { "LIFECYCLE": "1" } } }),
    );
    mcp_tool(&env, "echo", "fx", "echo", any_object());
    mcp_tool(&env, "die", "fx", "die", any_object());
    mcp_tool(&env, "slow", "fx", "slow", any_object());
    (env, marks)
}

/// `invoke mcp/echo` with the extra environment `vars`; it must succeed.
fn echo(env: &TestEnv, vars: &[(&str, &str)]) {
    let output = env
        .command(&["--json", "invoke", "mcp/echo", "--args", r#"{"text":"hi"}"#])
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!("not JSON: {}", String::from_utf8_lossy(&output.stderr));
    });
    assert_eq!(doc["value"], "hi", "{doc}");
}

/// The name of the cgroup the server ran in, as it wrote it, and the escapee's process id.
fn read_marks(marks: &Path) -> (String, u32) {
    let seen = std::fs::read_to_string(marks.join("cgroup.txt")).unwrap();
    let path = seen
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .unwrap_or_else(|| panic!("no cgroup v2 line in {seen}"))
        .to_owned();
    let pid = std::fs::read_to_string(marks.join("escapee.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (path, pid)
}

/// An escapee (not a child of the test): killed when the test ends, whatever happened, so
/// that no test leaves a process behind — if it is still the same process (its start time).
struct Doomed {
    pid: u32,
    start: Option<String>,
}

impl Doomed {
    fn new(pid: u32) -> Self {
        Self {
            pid,
            start: start_of(pid),
        }
    }
}

impl Drop for Doomed {
    fn drop(&mut self) {
        if self.start.is_some() && start_of(self.pid) == self.start && running(self.pid) {
            kill(self.pid);
        }
    }
}

/// `mcp serve`, killed if the test fails before it ended.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The escapee `pid` is gone within a few seconds.
#[track_caller]
fn assert_dies(pid: u32, when: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "the escapee {pid} outlived {when}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The server ran in a cgroup of its own (where cgroups can be made), which is gone now, and
/// its escapee died with it; where cgroups cannot be made, the escapee got away (killed here).
#[track_caller]
fn assert_contained(marks_dir: &Path, when: &str) {
    let (path, pid) = read_marks(marks_dir);
    let _escapee = Doomed::new(pid);
    match cgroups() {
        Some(base) => {
            let name = path.rsplit('/').next().unwrap();
            assert!(
                name.starts_with("toolctl-mcp-") && path.starts_with(&own_cgroup()),
                "the server ran in {path}"
            );
            assert_dies(pid, when);
            let deadline = Instant::now() + Duration::from_secs(5);
            while base.join(name).exists() {
                assert!(Instant::now() < deadline, "{name} is left after {when}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        None => {
            // The documented fallback: such a process escapes (README, "MCP servers' tools").
            assert_eq!(path, own_cgroup());
            assert!(
                running(pid),
                "without cgroups the README says {pid} escapes"
            );
        }
    }
}

#[test]
fn invoke_ends_a_stdio_servers_cgroup_with_a_grandchild_that_left_its_session_and_environment() {
    let (env, marks) = escaping_env();
    echo(&env, &[]);
    assert_contained(&marks, "the call");
}

#[test]
fn a_servers_cgroup_is_removed_with_the_cgroups_made_below_it() {
    let Some(base) = cgroups() else {
        // Without cgroups there is nothing below to remove; the fallback is tested below.
        return;
    };
    // As a toolctl running as the server makes cgroups for its own calls below its own: the
    // wrapper puts its escapee in a cgroup `nested` below the server's.
    let script = format!(
        "{}\n{}",
        r#"base="$1"; above="$2"; shift 2
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
nested="$base${own#"$above"}/nested"
mkdir "$nested""#,
        WRAPPER.replace(
            "exec \"$@\"",
            "cat \"$marks/escapee.pid\" > \"$nested/cgroup.procs\"
cat /proc/$(cat \"$marks/escapee.pid\")/cgroup > \"$marks/moved.txt\"
exec \"$@\"",
        )
    );
    let env = TestEnv::new();
    env.bundle("mcp");
    let marks = env.root().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let own = own_cgroup();
    declare(
        &env,
        json!({ "fx": { "command": [
            "sh", "-c", script, "nest", base, own.trim_end_matches('/'), marks,
            mcp_clients::python(), fixture_server(), "stdio",
        ] } }),
    );
    mcp_tool(&env, "echo", "fx", "echo", any_object());
    echo(&env, &[]);
    let (path, pid) = read_marks(&marks);
    let _escapee = Doomed::new(pid);
    let moved = std::fs::read_to_string(marks.join("moved.txt")).unwrap();
    assert!(
        moved.contains(&format!("{path}/nested")),
        "the escapee ran below the server's cgroup ({path}): {moved}"
    );
    assert_contained(&marks, "the call");
    assert!(!base.join(path.rsplit('/').next().unwrap()).exists());
}

#[test]
fn invoke_stopped_by_sigterm_during_a_call_removes_its_servers_cgroup() {
    let (env, marks) = escaping_env();
    let mut toolctl = Serve(
        env.command(&[
            "--json",
            "invoke",
            "mcp/slow",
            "--args",
            r#"{"seconds":60}"#,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::fs::read_to_string(marks.join("escapee.pid")).map_or(true, |p| p.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The call is under way once the server answers; a moment for it to be asked.
    std::thread::sleep(Duration::from_millis(1500));
    let _ = Command::new("kill")
        .args(["-TERM", &toolctl.0.id().to_string()])
        .status();
    let status = toolctl.0.wait().unwrap();
    assert!(!status.success(), "{status:?}");
    if let Some(base) = cgroups() {
        // Removed before toolctl ended, not by the next toolctl's sweep.
        let (path, pid) = read_marks(&marks);
        let _escapee = Doomed::new(pid);
        let name = path.rsplit('/').next().unwrap();
        assert!(!base.join(name).exists(), "{name} outlived toolctl");
    }
    assert_contained(&marks, "toolctl stopped by SIGTERM");
}

#[test]
fn a_batch_ends_its_stdio_servers_cgroup_when_it_is_over() {
    let (env, marks) = escaping_env();
    let calls: Vec<Value> = (0..3)
        .map(|i| json!({ "call_id": format!("{i}"), "name": "mcp/echo", "arguments": { "text": "hi" } }))
        .collect();
    let run = env.run_stdin(
        &["--json", "invoke", "--batch", "-"],
        &json!({ "calls": calls }).to_string(),
    );
    run.success();
    assert_eq!(run.stdout.matches("\"hi\"").count(), 3, "{}", run.stdout);
    assert_contained(&marks, "the batch");
}

#[test]
fn with_cgroups_off_a_stdio_server_falls_back_to_its_process_group_and_tag() {
    let (env, marks) = escaping_env();
    echo(&env, &[("TOOLCTL_EXEC_CGROUP", "off")]);
    let (path, pid) = read_marks(&marks);
    let _escapee = Doomed::new(pid);
    assert_eq!(path, own_cgroup(), "no cgroup of its own");
    // What the README says the fallback lets escape (if it ever catches it, say so there).
    assert!(
        running(pid),
        "the fallback was expected to let {pid} escape"
    );
}

/// `mcp serve --mode all` on `env`'s catalog, initialized, with one call of `mcp/echo` made
/// (so its server runs).
fn serve_with_a_server(env: &TestEnv) -> Client {
    let mut command = env.command(&["mcp", "serve", "--mode", "all", "--quiet"]);
    command.stderr(Stdio::null());
    let mut client = Client::spawn(command);
    let echo = served_name(env, "mcp", "echo");
    let answer = client.call(&echo, json!({ "text": "hi" }));
    assert_eq!(answer["content"][0]["text"], "hi", "{answer}");
    client
}

/// Wait (at most 15 s) for `serve` to end.
fn ends(client: &mut Client, how: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while client.serve.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "mcp serve did not end {how}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn mcp_serve_keeps_its_servers_cgroup_while_it_runs_and_ends_it_when_its_client_leaves() {
    let (env, marks) = escaping_env();
    let mut client = serve_with_a_server(&env);
    let (path, pid) = read_marks(&marks);
    let _escapee = Doomed::new(pid);
    if let Some(base) = cgroups() {
        let name = path.rsplit('/').next().unwrap();
        // Another toolctl starting a server sweeps leftovers beside it: a live `mcp serve`'s
        // server is none, however long it has run.
        let (other, _) = escaping_env();
        echo(&other, &[]);
        assert!(
            base.join(name).is_dir(),
            "{name} was swept while serve runs"
        );
        assert!(running(pid), "the server's escapee runs between calls");
    }
    client.stdin = None;
    ends(&mut client, "when its client left");
    assert_contained(&marks, "mcp serve");
}

#[test]
fn mcp_serve_ends_its_servers_cgroup_on_sigterm() {
    let (env, marks) = escaping_env();
    let mut client = serve_with_a_server(&env);
    // SIGTERM, with standard input still open.
    let _ = Command::new("kill")
        .args(["-TERM", &client.serve.id().to_string()])
        .status();
    ends(&mut client, "on SIGTERM");
    assert_contained(&marks, "mcp serve stopped by SIGTERM");
}

#[test]
fn mcp_serve_ends_a_dead_servers_cgroup_and_gives_the_next_server_a_new_one() {
    let (env, marks) = escaping_env();
    let mut client = serve_with_a_server(&env);
    let (first, pid) = read_marks(&marks);
    let _first = Doomed::new(pid);
    // The server exits without answering: the call fails and the server is ended, its
    // escapee with it, while serve goes on.
    let died = client.call(&served_name(&env, "mcp", "die"), json!({}));
    assert_eq!(died["isError"], true, "{died}");
    assert_contained(&marks, "its server's death");
    let echo = client.call(
        &served_name(&env, "mcp", "echo"),
        json!({ "text": "again" }),
    );
    assert_eq!(echo["content"][0]["text"], "again", "{echo}");
    let (second, pid) = read_marks(&marks);
    let _second = Doomed::new(pid);
    if cgroups().is_some() {
        assert_ne!(
            first, second,
            "a server started again gets a cgroup of its own"
        );
    }
    assert!(running(pid), "the new server's escapee runs between calls");
    client.stdin = None;
    ends(&mut client, "when its client left");
    assert_contained(&marks, "mcp serve");
}

/// The message of `invoke mcp/x` on a server `command` that cannot be run, with `vars`.
fn cannot_start(command: Value, vars: &[(&str, &str)]) -> String {
    let env = TestEnv::new();
    env.bundle("mcp");
    declare(&env, json!({ "bad": { "command": command } }));
    mcp_tool(&env, "x", "bad", "add", any_object());
    let output = env
        .command(&["--json", "invoke", "mcp/x", "--args", "{}"])
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(7));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "UPSTREAM_ERROR", "{doc}");
    doc["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn a_server_that_cannot_be_run_is_the_same_error_with_or_without_a_cgroup() {
    let folder = tempfile::tempdir().unwrap();
    let unrunnable = folder.path().join("not-executable");
    std::fs::write(&unrunnable, "#!/bin/sh\n").unwrap();
    let cases = [
        (json!(["/no/such/program"]), "No such file or directory"),
        (
            json!(["no-such-program-on-the-path-anywhere"]),
            "No such file or directory",
        ),
        (json!([unrunnable]), "Permission denied"),
    ];
    for (command, said) in cases {
        let program = command[0].as_str().unwrap();
        let contained = cannot_start(command.clone(), &[]);
        let plain = cannot_start(command.clone(), &[("TOOLCTL_EXEC_CGROUP", "off")]);
        assert_eq!(contained, plain);
        assert!(
            contained.starts_with(&format!(
                "MCP server 'bad' did not start: cannot run '{program}': {said}"
            )),
            "{contained}"
        );
    }
}

#[test]
fn a_servers_cgroup_is_swept_once_its_toolctl_is_gone_never_while_it_lives() {
    let Some(base) = cgroups() else {
        // Without cgroups no server leaves one; the fallback is tested above.
        return;
    };
    let (namespace, start) = owner_of_self();
    let me = std::process::id();
    let uuid = uuid::Uuid::now_v7();
    // As a toolctl killed with SIGKILL leaves it: its owner's PID now runs another process (or
    // none), which started at another time.
    let orphan = base.join(format!("toolctl-mcp-{namespace}-{me}-{}-{uuid}", start + 1));
    // The cgroup of a server whose toolctl (this test, as far as the name says) still runs.
    let owned = base.join(format!("toolctl-mcp-{namespace}-{me}-{start}-{uuid}"));
    let mut orphaned = with_a_sleeper(&orphan);
    let mut kept = with_a_sleeper(&owned);
    let (env, marks) = escaping_env();
    echo(&env, &[]);
    let deadline = Instant::now() + Duration::from_secs(5);
    let orphan_ended = loop {
        if orphaned.try_wait().unwrap().is_some() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let owned_lives = kept.try_wait().unwrap().is_none() && owned.is_dir();
    let orphan_left = orphan.exists();
    for (dir, child) in [(&orphan, &mut orphaned), (&owned, &mut kept)] {
        remove_cgroup(dir);
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(orphan_ended, "the orphan's process was not killed");
    assert!(!orphan_left, "{} is still there", orphan.display());
    assert!(owned_lives, "a live toolctl's server cgroup was swept");
    assert_contained(&marks, "the call");
}
