//! `exec` in a cgroup of its own: where cgroup v2 is writable, the call's
//! program runs in `toolctl-exec-<owner>-<UUID>` from its start, so even a process that left
//! the session with `setsid`, cleared its environment and lost its parent is killed at the
//! end, and the cgroup is removed — when the call ends, when toolctl is stopped by SIGTERM,
//! and (for a toolctl killed with SIGKILL) by the next call once that toolctl is gone, never
//! while it lives (an old toolctl's `toolctl-exec-<UUID>` by its age). Where cgroups are
//! unavailable, or `TOOLCTL_EXEC_CGROUP=off`, the tests check the documented fallback instead.

#![cfg(target_os = "linux")]

use crate::common::{Run, TestEnv};
use crate::test_trust_invoke::assert_gone;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A program that double-forks a `setsid` child which clears its environment (`env -i`), so
/// it has neither the call's process group, nor its tag, nor a parent of the call; the child
/// writes its process id to `escapee.pid` and sleeps.
const ESCAPEE: &str = "(setsid env -i sh -c 'echo $$ > escapee.pid; exec sleep 60' &); \
     while [ ! -s escapee.pid ]; do sleep 0.01; done; sleep 60";

/// The folder of this test process's cgroup v2 cgroup (toolctl, started by the test, is in
/// the same), when cgroup v2 is mounted and a child cgroup can be made there — as toolctl
/// would; `None` where it cannot (then toolctl falls back).
pub(crate) fn cgroups() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = own
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?
        .to_owned();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let point = mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        (fs.split_whitespace().next()? == "cgroup2")
            .then(|| mount.split_whitespace().nth(4).map(str::to_owned))?
    })?;
    let base = Path::new(&point).join(own.trim_start_matches('/'));
    let probe = base.join(format!("toolctl-test-probe-{}", fastrand::u64(..)));
    std::fs::create_dir(&probe).ok()?;
    std::fs::remove_dir(&probe).ok()?;
    Some(base)
}

/// `exec` enabled on a fresh catalog.
fn exec_env() -> TestEnv {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    env
}

/// `invoke exec` with `args` and the extra environment `vars`: the value.
fn exec(env: &TestEnv, args: &Value, vars: &[(&str, &str)]) -> Value {
    let mut cmd = env.command(&["--json", "invoke", "exec", "--args", &args.to_string()]);
    cmd.envs(vars.iter().copied());
    let run = Run::of(cmd, None);
    run.success();
    run.json()["value"].clone()
}

/// The cgroup v2 path the program of a call saw as its own (`0::` of `/proc/self/cgroup`).
fn program_cgroup(env: &TestEnv, vars: &[(&str, &str)]) -> String {
    let out = exec(env, &json!({ "argv": ["cat", "/proc/self/cgroup"] }), vars);
    let stdout = out["stdout"].as_str().unwrap_or_default();
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .unwrap_or_else(|| panic!("no cgroup v2 line in {out}"))
        .to_owned()
}

/// This test process's own cgroup v2 path.
pub(crate) fn own_cgroup() -> String {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    own.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .unwrap()
        .to_owned()
}

/// The process id written to `file` in the working folder.
fn pid_in(env: &TestEnv, file: &str) -> u32 {
    std::fs::read_to_string(env.work().join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The process `pid` runs (is neither gone nor a zombie).
pub(crate) fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.contains(") Z ") && !stat.contains(") X "))
}

/// SIGKILL to `pid` (a process a test let escape, on purpose, so it leaves nothing behind).
pub(crate) fn kill(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

#[test]
fn exec_runs_in_a_cgroup_of_its_own_which_is_removed_after_the_call() {
    let env = exec_env();
    let seen = program_cgroup(&env, &[]);
    match cgroups() {
        Some(base) => {
            let name = seen.rsplit('/').next().unwrap();
            assert!(
                name.starts_with("toolctl-exec-") && seen.starts_with(&own_cgroup()),
                "{seen}"
            );
            assert!(
                !base.join(name).exists(),
                "{name} is left behind in {}",
                base.display()
            );
        }
        // The fallback: the program runs in toolctl's own cgroup, as everything else.
        None => assert_eq!(seen, own_cgroup()),
    }
}

#[test]
fn exec_timeout_kills_a_double_forked_setsid_child_that_cleared_its_environment() {
    let env = exec_env();
    let out = exec(
        &env,
        &json!({ "argv": ["sh", "-c", ESCAPEE], "timeout_ms": 700 }),
        &[],
    );
    assert_eq!(out["timed_out"], true, "{out}");
    if cgroups().is_some() {
        assert_gone(&env, "escapee.pid");
    } else {
        // The documented fallback (README, "exec"): such a process escapes the sweep.
        let pid = pid_in(&env, "escapee.pid");
        let escaped = running(pid);
        kill(pid);
        assert!(
            escaped,
            "without cgroups the README says this process escapes"
        );
    }
}

#[test]
fn exec_with_cgroups_off_falls_back_to_its_process_group_and_tag() {
    let env = exec_env();
    let off = [("TOOLCTL_EXEC_CGROUP", "off")];
    assert_eq!(program_cgroup(&env, &off), own_cgroup());
    // A process that left the group with setsid but kept the tag is killed…
    let out = exec(
        &env,
        &json!({ "argv": ["sh", "-c", "setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' & while [ ! -s daemon.pid ]; do sleep 0.01; done; sleep 60"], "timeout_ms": 700 }),
        &off,
    );
    assert_eq!(out["timed_out"], true, "{out}");
    assert_gone(&env, "daemon.pid");
    // …and so is one that left the group and cleared its environment while its parent lives
    // (the group is read before it is killed, so the parent still names it)…
    let out = exec(
        &env,
        &json!({ "argv": ["sh", "-c", "setsid env -i sh -c 'echo $$ > clean.pid; exec sleep 60' & while [ ! -s clean.pid ]; do sleep 0.01; done; sleep 60"], "timeout_ms": 700 }),
        &off,
    );
    assert_eq!(out["timed_out"], true, "{out}");
    assert_gone(&env, "clean.pid");
    // …one that also cleared its environment after its parent exited escapes, as the README
    // says (if the fallback ever catches it, say so there and here).
    let out = exec(
        &env,
        &json!({ "argv": ["sh", "-c", ESCAPEE], "timeout_ms": 700 }),
        &off,
    );
    assert_eq!(out["timed_out"], true, "{out}");
    let pid = pid_in(&env, "escapee.pid");
    let escaped = running(pid);
    kill(pid);
    assert!(escaped, "the fallback was expected to let {pid} escape");
}

#[test]
fn exec_cgroup_is_killed_and_removed_when_toolctl_is_stopped_by_sigterm() {
    let Some(base) = cgroups() else {
        // Without cgroups there is nothing to remove; the fallback is tested above.
        return;
    };
    let env = exec_env();
    let args = json!({ "argv": ["sh", "-c", "cat /proc/self/cgroup > cgroup.txt; echo $$ > program.pid; sleep 60"], "timeout_ms": 60000 });
    let mut toolctl = env
        .command(&["--json", "invoke", "exec", "--args", &args.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !env.work().join("program.pid").exists()
        || std::fs::read_to_string(env.work().join("program.pid"))
            .unwrap_or_default()
            .is_empty()
    {
        assert!(Instant::now() < deadline, "the program did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let seen = std::fs::read_to_string(env.work().join("cgroup.txt")).unwrap();
    let name = seen
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .and_then(|path| path.rsplit('/').next())
        .unwrap()
        .to_owned();
    assert!(name.starts_with("toolctl-exec-"), "{seen}");
    assert!(base.join(&name).is_dir());
    let _ = Command::new("kill")
        .args(["-TERM", &toolctl.id().to_string()])
        .status();
    let status = toolctl.wait().unwrap();
    assert!(!status.success(), "{status:?}");
    let left = base.join(&name);
    if left.exists() {
        // Leave nothing behind, then fail.
        let _ = std::fs::write(left.join("cgroup.kill"), "1");
        std::thread::sleep(Duration::from_millis(200));
        let _ = std::fs::remove_dir(&left);
        panic!("{name} was left behind");
    }
    assert_gone(&env, "program.pid");
}

/// The leftover's process `sleeper` ends within `within` (killed by a toolctl's sweep).
fn ends_within(sleeper: &mut Child, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if sleeper.try_wait().unwrap().is_some() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A UUIDv7 made a day before the test ran (or any time long ago).
fn day_old_uuid() -> uuid::Uuid {
    uuid::Uuid::new_v7(uuid::Timestamp::from_unix(
        uuid::NoContext,
        1_700_000_000,
        0,
    ))
}

#[test]
fn exec_sweeps_a_leftover_whose_toolctl_is_gone_never_one_whose_toolctl_lives() {
    let Some(base) = cgroups() else {
        // Without cgroups no call leaves one; the fallback is tested above.
        return;
    };
    let (namespace, start) = owner_of_self();
    let me = std::process::id();
    // As a toolctl killed with SIGKILL a moment ago leaves them, a call's and a server's: made
    // just now (no age would tell them from a call under way), their owner's PID now another
    // process's (or none's), which started at another time. One rule sweeps both.
    let orphans: Vec<PathBuf> = ["exec", "mcp"]
        .iter()
        .map(|kind| {
            base.join(format!(
                "toolctl-{kind}-{namespace}-{me}-{}-{}",
                start + 1,
                uuid::Uuid::now_v7()
            ))
        })
        .collect();
    // The call of a toolctl that still runs (this test, as far as the name says), made long
    // before: older than any call can last, and still not a leftover.
    let owned = base.join(format!(
        "toolctl-exec-{namespace}-{me}-{start}-{}",
        day_old_uuid()
    ));
    let mut orphaned: Vec<Child> = orphans.iter().map(|dir| with_a_sleeper(dir)).collect();
    let mut kept = with_a_sleeper(&owned);
    let env = exec_env();
    exec(&env, &json!({ "argv": ["true"] }), &[]);
    let ended: Vec<bool> = orphaned
        .iter_mut()
        .map(|sleeper| ends_within(sleeper, Duration::from_secs(5)))
        .collect();
    let left: Vec<bool> = orphans.iter().map(|dir| dir.exists()).collect();
    let owned_lives = kept.try_wait().unwrap().is_none() && owned.is_dir();
    for (dir, child) in orphans
        .iter()
        .zip(&mut orphaned)
        .chain([(&owned, &mut kept)])
    {
        remove_cgroup(dir);
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(ended, [true, true], "the orphans' processes were killed");
    assert_eq!(left, [false, false], "the orphans are left: {orphans:?}");
    assert!(owned_lives, "a live toolctl's exec cgroup was swept");
}

#[test]
fn exec_still_sweeps_an_old_toolctls_leftover_by_its_age() {
    let Some(base) = cgroups() else {
        // Without cgroups no call leaves one; the fallback is tested above.
        return;
    };
    // As a toolctl from before the owner was in the name, killed during a call a day ago,
    // left it: `toolctl-exec-<UUIDv7>`, with its program still running.
    let left = base.join(format!("toolctl-exec-{}", day_old_uuid()));
    let mut sleeper = with_a_sleeper(&left);
    let env = exec_env();
    exec(&env, &json!({ "argv": ["true"] }), &[]);
    let ended = ends_within(&mut sleeper, Duration::from_secs(3));
    if !ended {
        remove_cgroup(&left);
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        panic!("the leftover's process was not killed");
    }
    assert!(!left.exists(), "{} is still there", left.display());
}

/// When process `pid` started (field 22 of its `/proc/PID/stat`).
pub(crate) fn start_of(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.get(stat.rfind(')')? + 1..)?;
    after.split_whitespace().nth(19).map(str::to_owned)
}

/// This test process's PID namespace (the inode of `/proc/self/ns/pid`) and start time (field
/// 22 of `/proc/self/stat`), as toolctl names the cgroups of
/// its calls and servers after their owner.
pub(crate) fn owner_of_self() -> (u64, u64) {
    let link = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let namespace = link
        .to_str()
        .and_then(|l| l.strip_prefix("pid:["))
        .and_then(|l| l.strip_suffix(']'))
        .unwrap()
        .parse()
        .unwrap();
    let start = start_of(std::process::id()).unwrap().parse().unwrap();
    (namespace, start)
}

/// Make the cgroup `dir` with a `sleep` in it (again until the sleep is in: another test's
/// toolctl may remove an empty leftover at once, as it should).
pub(crate) fn with_a_sleeper(dir: &Path) -> Child {
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let joined = (0..50).any(|_| {
        let _ = std::fs::create_dir(dir);
        std::fs::write(dir.join("cgroup.procs"), sleeper.id().to_string()).is_ok()
    });
    if !joined {
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        let _ = std::fs::remove_dir(dir);
        panic!("could not put a sleeper in {}", dir.display());
    }
    sleeper
}

/// Kill what runs in the cgroup `dir` and remove it.
pub(crate) fn remove_cgroup(dir: &Path) {
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    for _ in 0..100 {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
