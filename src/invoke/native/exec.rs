//! `exec`: run a program, without a shell, in the workspace.
//!
//! The built-in `exec` tool is disabled unless the catalog's policy enables it
//! (`toolctl.json`: `builtin.tools.exec.isEnabled`), so this only runs when someone chose so.
//! It runs `argv` directly (no shell: no globbing, no `;`), in `cwd` inside the workspace,
//! with stdin closed and an environment reduced to [`PASSED_ENV`] (secrets such as
//! `TOOLCTL_SECRET_*` never reach the program). It is killed, with every process it started
//! (its own process group), after `timeout_ms`; stdout and stderr keep their first
//! [`OUTPUT_CAP`] bytes each.

use super::Args;
use super::workspace::Workspace;
use crate::base::error_code::ErrorCode;
use crate::invoke::{Failure, Options};
use serde_json::{Value, json};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Environment variables a program gets from toolctl's own environment.
const PASSED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// Bytes of stdout and of stderr kept.
const OUTPUT_CAP: usize = 64 * 1024;

const TIMEOUT_DEFAULT_MS: u64 = 10_000;
const TIMEOUT_MAX_MS: u64 = 600_000;

pub fn exec(args: &Args, options: &Options) -> Result<Value, Failure> {
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

    let mut command = Command::new(program);
    command
        .args(rest)
        .current_dir(&cwd)
        .env_clear()
        .envs(
            PASSED_ENV
                .iter()
                .filter_map(|name| Some((*name, std::env::var_os(name)?))),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::NotFound
        } else {
            ErrorCode::Internal
        };
        Failure::new(code, format!("cannot run '{program}': {e}"))
    })?;
    let group = rustix::process::Pid::from_child(&child);
    let stdout = child.stdout.take().map(capture);
    let stderr = child.stderr.take().map(capture);

    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                return Err(Failure::new(
                    ErrorCode::Internal,
                    format!("lost track of '{program}': {e}"),
                ));
            }
        }
    };
    // Whatever the program started and left behind goes with it (it would hold the pipes).
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    // A process that left the group (`setsid`) may keep the pipes open forever: the output is
    // what arrived by the deadline (or shortly after the program ended).
    let deadline = (started + timeout).max(Instant::now() + PIPE_GRACE);
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
