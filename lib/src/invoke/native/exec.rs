//! `exec`: run a program, without a shell, in the workspace.
//!
//! The built-in `exec` tool is disabled unless the catalog's policy enables it
//! (`toolctl.json`: `builtin.tools.exec.isEnabled`), so this only runs when someone chose so.
//! It runs `argv` directly (no shell: no globbing, no `;`), in `cwd` inside the workspace,
//! with stdin closed and an environment reduced to [`PASSED_ENV`] (secrets such as
//! `TOOLCTL_SECRET_*` never reach the program). It is killed, with every process it started
//! (its own cgroup where there can be one, [`super::cgroup`], then [`kill_tree`]), after
//! `timeout_ms`, or at once when the call is cancelled ([`Options::cancel`]); when it ends by itself, whatever it left running goes
//! too, and its output is what arrived by then (plus [`PIPE_GRACE`]), even if a leftover kept
//! the pipes open. stdout and stderr keep their first [`OUTPUT_CAP`] bytes each.

use super::Args;
use super::cgroup::Cgroup;
use super::workspace::Workspace;
use crate::base::error_code::ErrorCode;
use crate::invoke::{Failure, Options};
use serde_json::{Value, json};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Environment variables a program gets from toolctl's own environment.
pub(crate) const PASSED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// Bytes of stdout and of stderr kept.
const OUTPUT_CAP: usize = 64 * 1024;

const TIMEOUT_DEFAULT_MS: u64 = 10_000;
const TIMEOUT_MAX_MS: u64 = 600_000;

pub(super) fn exec(args: &Args, options: &Options) -> Result<Value, Failure> {
    let root = options.workspace.as_path();
    let argv = args.strings("argv")?;
    let Some((program, rest)) = argv.split_first() else {
        return Err(Failure::new(
            ErrorCode::ValidationError,
            "argument 'argv' is empty: it needs at least the program",
        ));
    };
    // timeout_ms, or what is left of a batch's wait_ms.
    let timeout = options.bounded(Duration::from_millis(args.integer(
        "timeout_ms",
        TIMEOUT_DEFAULT_MS,
        1,
        TIMEOUT_MAX_MS,
    )?));
    let cwd_given = args.string("cwd")?.unwrap_or("");
    let workspace = Workspace::open(root)?;
    let cwd = workspace.real_dir(&Workspace::relative(cwd_given), cwd_given)?;

    let tag = format!("{:016x}", fastrand::u64(..));
    // Its own cgroup where there can be one, else its process group and tag (see `cgroup`).
    let cgroup = Cgroup::create();
    let mut command = match &cgroup {
        Some(cgroup) => cgroup.command(program, rest),
        None => {
            let mut command = Command::new(program);
            command.args(rest).stdin(Stdio::null());
            command
        }
    };
    command
        .current_dir(&cwd)
        .env_clear()
        .envs(
            PASSED_ENV
                .iter()
                .filter_map(|name| Some((*name, std::env::var_os(name)?))),
        )
        .env(TAG_VARIABLE, &tag)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let spawned = match &cgroup {
        Some(cgroup) => cgroup.spawn(command),
        None => command.spawn(),
    };
    let mut child = spawned.map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::NotFound
        } else {
            ErrorCode::Internal
        };
        Failure::new(code, format!("cannot run '{program}': {e}"))
    })?;
    let group = rustix::process::Pid::from_child(&child);
    // Everything the call started: its cgroup's processes, then its group and tag (which
    // also catches a process that moved itself out of the cgroup but kept the tag).
    let sweep = || {
        if let Some(cgroup) = &cgroup {
            cgroup.kill();
        }
        kill_tree(group, &tag);
    };
    let stdout = child.stdout.take().map(capture);
    let stderr = child.stderr.take().map(capture);

    let stopped = || {
        Failure::new(
            ErrorCode::Timeout,
            format!("'{program}' was stopped: the call was cancelled"),
        )
        .ran()
    };
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            // Killed with its cgroup because toolctl is stopping: stopped, not finished.
            Ok(Some(_)) if super::cgroup::stopping() => {
                sweep();
                return Err(stopped());
            }
            Ok(Some(status)) => break Some(status),
            // Nobody waits for the value any more (`mcp serve`'s client cancelled the call,
            // left, or the server is stopping): the program goes now, with what it started.
            Ok(None) if options.cancelled() => {
                sweep();
                let _ = child.wait();
                return Err(stopped());
            }
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                sweep();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                sweep();
                return Err(Failure::new(
                    ErrorCode::Internal,
                    format!("lost track of '{program}': {e}"),
                ));
            }
        }
    };
    // Whatever the program started and left behind goes with it (it would hold the pipes).
    sweep();
    // The output is what arrived by now, and for a moment more: a process that escaped the
    // sweep (see `kill_tree`) may keep the pipes open for ever.
    let deadline = Instant::now() + PIPE_GRACE;
    let (stdout, out_cut) = stdout.map_or((String::new(), false), |c| c.finish(deadline));
    let (stderr, err_cut) = stderr.map_or((String::new(), false), |c| c.finish(deadline));
    Ok(json!({
        "exit_code": status.and_then(|s| s.code()),
        "stdout": stdout,
        "stderr": stderr,
        "timed_out": timed_out,
        "truncated": out_cut || err_cut,
    }))
}

/// How long output may still arrive after the program ended (or was killed) when its pipes
/// stay open.
const PIPE_GRACE: Duration = Duration::from_millis(200);

/// The variable every process of one call inherits, holding a tag of that call.
pub(crate) const TAG_VARIABLE: &str = "TOOLCTL_EXEC_TAG";

/// Kill the program `group` (its process id, leader of its own process group) and every
/// process it started.
///
/// A process group is not enough: a process that calls `setsid` (a daemon) leaves it, and
/// one whose parent exited is adopted by init, losing its link to the tree. So, besides the
/// group, every process of ours found under `/proc` goes when its environment holds this
/// call's [`TAG_VARIABLE`] (inherited through `setsid`, double forks and adoption) or when
/// its parent is one that goes (a child that cleared its environment, while its parent
/// lives; the group is stopped and read before anything in it is killed, so such a parent
/// still lives when it is looked at). The sweep is repeated until it finds nothing, since a
/// process may fork while it runs. What remains possible: a process that clears its
/// environment *and* whose parent had already exited before the kill is no longer
/// recognisable, and keeps running (its pipes are let go after
/// [`PIPE_GRACE`]). Where cgroup v2 is writable the call's cgroup closes that gap
/// ([`super::cgroup`]); this sweep still runs after it, for a process that moved itself out.
pub(crate) fn kill_tree(group: rustix::process::Pid, tag: &str) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    // Stop the group first and look before anything dies: a child that left the group and
    // cleared its environment is known only by its parent, and only while that parent lives
    // (killed first, it would be adopted by init and lost).
    let _ = kill_process_group(group, Signal::STOP);
    let group_id = u32::try_from(group.as_raw_pid()).unwrap_or_default();
    let marker = format!("{TAG_VARIABLE}={tag}");
    let me = std::process::id();
    for round in 0..8 {
        let processes = processes();
        let mut doomed: std::collections::HashSet<u32> = processes
            .iter()
            .filter(|p| p.pid != me && (p.group == group_id || p.tagged(&marker)))
            .map(|p| p.pid)
            .collect();
        // Their descendants too, by parent id, until no more join.
        loop {
            let before = doomed.len();
            for p in &processes {
                if p.pid != me && doomed.contains(&p.parent) {
                    doomed.insert(p.pid);
                }
            }
            if doomed.len() == before {
                break;
            }
        }
        let mut killed = false;
        for p in processes
            .iter()
            .filter(|p| p.alive && doomed.contains(&p.pid))
        {
            if let Some(pid) = i32::try_from(p.pid).ok().and_then(Pid::from_raw) {
                killed |= kill_process(pid, Signal::KILL).is_ok();
            }
        }
        if round == 0 {
            // Where there is no `/proc` to read, the group at least.
            killed |= kill_process_group(group, Signal::KILL).is_ok();
        }
        if !killed {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// One process under `/proc`.
struct Process {
    pid: u32,
    parent: u32,
    /// Its process group.
    group: u32,
    /// Still running (not a zombie waiting to be reaped).
    alive: bool,
}

impl Process {
    /// Its environment holds `marker` (readable for our own processes only).
    fn tagged(&self, marker: &str) -> bool {
        self.alive
            && crate::base::capped::read_kernel_bytes(format!("/proc/{}/environ", self.pid))
                .is_ok_and(|environ| {
                    environ
                        .split(|b| *b == 0)
                        .any(|entry| entry == marker.as_bytes())
                })
    }
}

/// The processes of the machine (none where there is no `/proc`).
fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = crate::base::capped::read_kernel_file(format!("/proc/{pid}/stat")).ok()?;
            // `pid (name) state ppid …`: the name may hold spaces and parentheses.
            let mut after = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
            let state = after.next()?;
            let parent = after.next()?.parse().ok()?;
            let group = after.next()?.parse().ok()?;
            Some(Process {
                pid,
                parent,
                group,
                alive: state != "Z" && state != "X",
            })
        })
        .collect()
}

/// A pipe read to its end on a thread, keeping the first [`OUTPUT_CAP`] bytes (the rest is
/// read and dropped, so the program never blocks on a full pipe).
struct Captured {
    kept: std::sync::Arc<std::sync::Mutex<(Vec<u8>, bool)>>,
    done: std::sync::mpsc::Receiver<()>,
}

fn capture(mut pipe: impl Read + Send + 'static) -> Captured {
    let kept = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), false)));
    let (tell, done) = std::sync::mpsc::channel();
    let shared = std::sync::Arc::clone(&kept);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 8192];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let Ok(mut kept) = shared.lock() else { break };
                    let room = OUTPUT_CAP - kept.0.len();
                    kept.0.extend_from_slice(&buffer[..n.min(room)]);
                    kept.1 |= n > room;
                }
            }
        }
        let _ = tell.send(());
    });
    Captured { kept, done }
}

impl Captured {
    /// The output, waiting for the pipe's end until `deadline`; the flag says it was cut (by
    /// the cap, or because the pipe was still open at the deadline).
    fn finish(self, deadline: Instant) -> (String, bool) {
        let ended = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok();
        let (bytes, cut) = self
            .kept
            .lock()
            .map(|kept| kept.clone())
            .unwrap_or_default();
        (String::from_utf8_lossy(&bytes).into_owned(), cut || !ended)
    }
}
