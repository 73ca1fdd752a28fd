//! A stdio server's process: started with no shell, in a cgroup of its own where `exec` would
//! have one, in its own process group and with a reduced environment; ended with everything
//! it started; and what it said last on stderr, for the failure of a call it did not answer.

use super::lines::{Lines, Unreadable};
use super::{
    Answer, CLOSE_GRACE, Call, Request, STDERR_TAIL, Trouble, ask, client_config, rmcp_words,
};
use crate::base::error_code::ErrorCode;
use crate::invoke::Failure;
use crate::invoke::native::cgroup::{Cgroup, Handoff};
use crate::invoke::native::exec::{PASSED_ENV, TAG_VARIABLE, kill_tree};
use rmcp::model::ClientConfig;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use rustix::process::Pid;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use tokio::net::unix::pipe;
use tokio::process::ChildStdout;

/// How a stdio server is started.
pub(super) struct Launch<'a> {
    pub(super) argv: &'a [String],
    pub(super) env: Vec<(String, String)>,
    pub(super) cwd: Option<&'a Path>,
}

/// A started stdio server: its cgroup (where it has one), its process group, and the end of
/// what it wrote on stderr.
pub(super) struct Process {
    child: tokio::process::Child,
    pub(super) group: Option<Pid>,
    tag: String,
    cgroup: Option<Arc<Cgroup>>,
    tail: Arc<std::sync::Mutex<Vec<u8>>>,
    /// Why a line it wrote on stdout could not be read as JSON, once one could not.
    unreadable: Unreadable,
}

impl Process {
    /// Start the program (no shell, its own cgroup where there can be one, its own process
    /// group, a reduced environment).
    async fn spawn(
        call: &Call<'_>,
        launch: &Launch<'_>,
    ) -> Result<(Self, Lines<ChildStdout>, pipe::Sender), Failure> {
        use std::process::Stdio;
        use tokio::io::AsyncReadExt;
        let name = call.name;
        let (program, rest) = match launch.argv.split_first() {
            Some((program, rest)) => (program.as_str(), rest),
            None => ("", &[][..]),
        };
        let cannot_run = |e: std::io::Error| {
            let place = launch
                .cwd
                .map(|cwd| format!(" in {}", cwd.display()))
                .unwrap_or_default();
            Failure::new(
                ErrorCode::UpstreamError,
                format!("MCP server '{name}' did not start: cannot run '{program}'{place}: {e}"),
            )
            .with_details(json!({ "server": name }))
            .ran()
        };
        let tag = format!("{:016x}", fastrand::u64(..));
        // The server's standard input: a pipe of ours, handed to the launcher when there is
        // a cgroup (its own standard input tells toolctl whether the exec worked).
        let (reader, writer) = std::io::pipe().map_err(cannot_run)?;
        let stdin = pipe::Sender::from_owned_fd(writer.into()).map_err(cannot_run)?;
        let cgroup = Cgroup::for_server();
        let (mut command, handoff) = match &cgroup {
            Some(cgroup) => {
                let (handoff, launcher_stdin) =
                    Handoff::new(Some(reader.into())).map_err(cannot_run)?;
                let mut command = tokio::process::Command::from(cgroup.command(program, rest));
                command.stdin(launcher_stdin);
                (command, Some(handoff))
            }
            None => {
                let mut command = tokio::process::Command::new(program);
                command.args(rest).stdin(reader);
                (command, None)
            }
        };
        command
            .env_clear()
            .envs(
                PASSED_ENV
                    .iter()
                    .filter_map(|name| Some((*name, std::env::var_os(name)?))),
            )
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .env(TAG_VARIABLE, &tag)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = launch.cwd {
            command.current_dir(cwd);
        }
        let spawned = command.spawn();
        // The command holds the launcher's end of the handoff: its exec is seen once that
        // copy is gone too.
        drop(command);
        let mut child = spawned.map_err(cannot_run)?;
        if let Some(handoff) = handoff
            && let Err(e) = handoff.wait_async().await
        {
            let _ = child.wait().await;
            return Err(cannot_run(e));
        }
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        let Some(stdout) = child.stdout.take() else {
            return Err(Failure::new(
                ErrorCode::Internal,
                format!("MCP server '{name}': no pipes to the started program"),
            ));
        };
        // The end of its stderr, for the message of a failure.
        let tail = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        if let Some(mut stderr) = child.stderr.take() {
            let tail = Arc::clone(&tail);
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut kept) = tail.lock() {
                        kept.extend_from_slice(&buffer[..n]);
                        let over = kept.len().saturating_sub(4 * STDERR_TAIL);
                        kept.drain(..over);
                    }
                }
            });
        }
        let unreadable = Unreadable::default();
        let stdout = Lines::new(stdout, Arc::clone(&unreadable));
        let process = Self {
            child,
            group,
            tag,
            cgroup: cgroup.map(Arc::new),
            tail,
            unreadable,
        };
        Ok((process, stdout, stdin))
    }

    /// What it wrote on stderr lately.
    async fn stderr(&self) -> String {
        // Let the stderr reader take what the program wrote last.
        tokio::task::yield_now().await;
        self.tail
            .lock()
            .map(|kept| String::from_utf8_lossy(&kept).into_owned())
            .unwrap_or_default()
    }

    /// A server that ends by itself (its stdin closed) goes quietly for [`CLOSE_GRACE`];
    /// then it, and whatever it started, is killed. Its exit status, when it ended by itself.
    pub(super) async fn end(&mut self) -> Option<std::process::ExitStatus> {
        let exited = tokio::time::timeout(CLOSE_GRACE, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        self.reaper().kill();
        let _ = self.child.wait().await;
        exited
    }

    /// What kills it and whatever it started, also from elsewhere
    /// ([`Sessions::close`](super::Sessions::close)).
    pub(super) fn reaper(&self) -> Reaper {
        Reaper {
            cgroup: self.cgroup.clone(),
            group: self.group,
            tag: self.tag.clone(),
        }
    }

    /// Whether it still runs.
    pub(super) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// What kills a started server and everything it started: its cgroup's processes, then its
/// process group and whatever carries its tag (which also catches a process that moved
/// itself out of the cgroup but kept the tag).
pub(super) struct Reaper {
    pub(super) cgroup: Option<Arc<Cgroup>>,
    group: Option<Pid>,
    tag: String,
}

impl Reaper {
    pub(super) fn kill(&self) {
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        if let Some(group) = self.group {
            kill_tree(group, &self.tag);
        }
    }
}

/// The failure of a server that gave no answer: `trouble` (`None`: the time ran out), with the
/// end of its stderr and how it exited, after it is ended.
pub(super) async fn ended(
    call: &Call<'_>,
    process: &mut Process,
    trouble: Option<Trouble>,
    started: bool,
) -> Failure {
    let exited = process.end().await;
    let unreadable = process.unreadable.lock().ok().and_then(|e| e.clone());
    let trouble = match unreadable {
        Some(e) => Some(Trouble::Request(format!(
            "its answer could not be read as JSON ({e})"
        ))),
        None => trouble,
    };
    let failure = call.failure(trouble, started, &process.stderr().await);
    match exited {
        Some(status) if !status.success() => {
            let message = format!("{} (it exited: {status})", failure.message());
            Failure::new(failure.code, call.redactor.text(&message))
                .with_details(json!({ "server": call.name }))
                .ran()
        }
        _ => failure,
    }
}

/// Start a stdio server and make the handshake, by `deadline`.
pub(super) async fn connect(
    call: &Call<'_>,
    launch: &Launch<'_>,
    deadline: tokio::time::Instant,
) -> Result<(Process, RunningService<RoleClient, ClientConfig>), Failure> {
    let (mut process, stdout, stdin) = Process::spawn(call, launch).await?;
    match tokio::time::timeout_at(deadline, client_config().serve((stdout, stdin))).await {
        Ok(Ok(client)) => Ok((process, client)),
        Ok(Err(e)) => Err(ended(
            call,
            &mut process,
            Some(Trouble::Start(rmcp_words(&e))),
            false,
        )
        .await),
        Err(_) => Err(ended(call, &mut process, None, false).await),
    }
}

/// One call of a stdio server started for it alone, and ended after it.
pub(super) async fn stdio(
    call: &Call<'_>,
    launch: &Launch<'_>,
    request: Request,
) -> Result<Answer, Failure> {
    let deadline = tokio::time::Instant::now() + call.timeout;
    let (mut process, client) = connect(call, launch, deadline).await?;
    let outcome =
        tokio::time::timeout_at(deadline, ask(client.peer(), request, process.group)).await;
    let _ = tokio::time::timeout(CLOSE_GRACE, client.cancel()).await;
    match outcome {
        Ok(Ok(answer)) => {
            process.end().await;
            Ok(answer)
        }
        Ok(Err(trouble)) => Err(ended(call, &mut process, Some(trouble), true).await),
        Err(_) => Err(ended(call, &mut process, None, true).await),
    }
}
