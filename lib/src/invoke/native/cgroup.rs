//! `exec`'s and stdio MCP servers' own cgroups: where a cgroup v2 hierarchy is writable, each
//! `exec` call's program, and each stdio MCP server toolctl starts ([`crate::invoke::mcp`]),
//! runs in a cgroup made for it, from its first instruction, so its end kills everything it
//! started — whatever it did to leave its process group, session or environment behind.
//!
//! - **Where.** The cgroup v2 mount (from `/proc/self/mountinfo`) and toolctl's own cgroup
//!   (the `0::` line of `/proc/self/cgroup`); the call's cgroup is a child of it,
//!   `toolctl-exec-<owner>-<UUIDv7>` for an `exec` call, `toolctl-mcp-<owner>-<UUIDv7>` for a
//!   server (the owner: this toolctl's PID namespace, PID and start time). When it cannot be
//!   made (no cgroup v2, no permission, read-only), or [`OFF_VARIABLE`] says `off`, the
//!   program runs as before: its own process group, swept with its tag
//!   ([`super::exec::kill_tree`]).
//! - **From the start.** A program cannot be moved into a cgroup between fork and exec
//!   without unsafe code (which this crate forbids), and moving it after the spawn leaves a
//!   moment in which it may fork outside. So toolctl starts itself as a launcher
//!   ([`launcher`], `/proc/self/exe` with [`LAUNCHER_ARG`]): the launcher writes `0` to the
//!   cgroup's `cgroup.procs`, moving itself there, then execs the program (same process id,
//!   process group, working folder, environment, stdout and stderr). A launcher that cannot
//!   join the cgroup runs the program anyway: the fallback.
//! - **Its standard input, and a failed exec.** The launcher's standard input is a Unix
//!   socket to toolctl ([`Handoff`]), not the program's: toolctl puts the program's standard
//!   input on it beforehand (`SCM_RIGHTS`: a server's end of the MCP channel; nothing for
//!   `exec`, which gets `/dev/null`), and the launcher answers on it — nothing, then the end
//!   of the stream once its exec closed its (close-on-exec) copy, or `E` and the exec's error
//!   number. So a missing program is the same error as without a cgroup, for a server too,
//!   whose standard input is the MCP channel; and nothing but the three standard descriptors
//!   is handed down (any other needs unsafe code between fork and exec).
//! - **The end.** `cgroup.kill` (Linux 5.14), else SIGKILL to every process of `cgroup.procs`
//!   until it is empty; then a wait (bounded) for `cgroup.events` to say `populated 0`, and
//!   `rmdir` (of the cgroups below it first: a toolctl running in it, as an `exec` program or
//!   a server, makes its own there). A cgroup is removed when its call or server ends (`toolctl invoke`'s call over,
//!   a batch over, `mcp serve` ending, a server started again after it died or let a call time
//!   out), on error paths too ([`Cgroup`]'s `Drop`), and when toolctl is stopped by SIGINT,
//!   SIGTERM or SIGHUP (a thread started with the first cgroup removes them all, then the
//!   signal takes its course — or, for `mcp serve`, which stops on SIGINT and SIGTERM itself,
//!   lets it stop, [`signals_handled_elsewhere`]).
//! - **Leftovers.** A toolctl killed with SIGKILL leaves its cgroups, with whatever runs in
//!   them; the next toolctl that makes a cgroup (for a call or a server) in the same place
//!   removes them, by one rule for both kinds ([`remove_leftovers`]): once the toolctl named
//!   in it is gone — no process with its PID, or one that started at another time. So a call
//!   or a server is never taken for a leftover while its toolctl lives, however long it runs
//!   (`mcp serve` runs for hours), and a dead toolctl's cgroups go at the next call, not after
//!   the longest a call may last. One named by a toolctl of another PID namespace, where the
//!   PID means nothing, is left to a toolctl there. An `exec` cgroup named the old way
//!   (`toolctl-exec-<UUIDv7>`, by a toolctl from before the owner was in the name) goes by its
//!   age, as that toolctl swept it: once older than its longest call plus a minute, or empty
//!   and older than a minute.
//!
//! Only the toolctl binary can be its own launcher ([`launcher`] marks it so); a program that
//! uses this crate as a library gets the fallback.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// `TOOLCTL_EXEC_CGROUP=off` (or `0`, `no`, `false`): neither `exec` nor a stdio MCP server
/// ever uses a cgroup.
pub const OFF_VARIABLE: &str = "TOOLCTL_EXEC_CGROUP";

/// The first argument that makes toolctl a launcher (see the module's documentation).
pub const LAUNCHER_ARG: &str = "__toolctl-exec-launcher";

/// The name of every cgroup an `exec` call makes, before its owner and UUID
/// (`toolctl-exec-<PID namespace>-<PID>-<start time>-<UUIDv7>`; before the owner was in the
/// name, `toolctl-exec-<UUIDv7>`).
pub const PREFIX: &str = "toolctl-exec-";

/// The name of every cgroup a stdio MCP server runs in, before its owner and UUID
/// (`toolctl-mcp-<PID namespace>-<PID>-<start time>-<UUIDv7>`).
pub const SERVER_PREFIX: &str = "toolctl-mcp-";

/// `statfs`'s type of a cgroup v2 file system.
const CGROUP2_MAGIC: i128 = 0x6367_7270;

/// The longest an `exec` call could last in the toolctls that named its cgroup
/// `toolctl-exec-<UUIDv7>` (their `timeout_ms` at most): such a leftover goes by its age.
const OLD_LONGEST_CALL: Duration = Duration::from_secs(600);

/// How long the processes of a killed cgroup may take to be gone before `rmdir` is tried
/// anyway.
const DRAIN: Duration = Duration::from_secs(2);

/// This process is the toolctl binary, which can be its own launcher.
static CAN_LAUNCH: AtomicBool = AtomicBool::new(false);

/// The cgroups of the calls and servers under way, removed if toolctl is stopped by a signal.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Signals another part of toolctl handles (`mcp serve` stops on SIGINT and SIGTERM): after
/// removing the cgroups the watcher leaves those to it instead of ending the process.
static HANDLED_ELSEWHERE: AtomicBool = AtomicBool::new(false);

/// Set by the signal watcher before it kills the cgroups under way: a program that ended now
/// was stopped with toolctl, it did not finish.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// toolctl got SIGINT, SIGTERM or SIGHUP and killed the cgroups of the calls under way.
pub(crate) fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// To be called first by toolctl's `main`: when toolctl was started as a launcher, run the
/// program and return the exit code of a failed exec (a launcher that execs never returns);
/// else `None`, and the binary is marked as able to launch.
pub fn launcher() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    args.next();
    if args.next().is_none_or(|first| first != LAUNCHER_ARG) {
        CAN_LAUNCH.store(true, Ordering::Relaxed);
        return None;
    }
    Some(launch(args))
}

/// The launcher: `LAUNCHER_ARG CGROUP_PROCS PROGRAM ARGS…`, its standard input a Unix socket
/// to toolctl ([`Handoff`]). Takes the program's standard input from the socket (or
/// `/dev/null`), joins the cgroup and execs the program; if the exec fails, writes `E` and
/// the error number on the socket and exits 127.
fn launch(mut args: std::env::ArgsOs) -> ExitCode {
    use std::os::unix::process::CommandExt;
    // The socket, kept on a descriptor closed by a successful exec: toolctl reads its end.
    let Ok(socket) = rustix::io::fcntl_dupfd_cloexec(std::io::stdin(), 3) else {
        return ExitCode::from(127);
    };
    let given = received(&socket);
    let mut report = std::fs::File::from(socket);
    let error = match (args.next(), args.next()) {
        (Some(procs), Some(program)) => {
            // Best effort: a launcher that cannot join runs the program uncontained.
            let _ = join(Path::new(&procs));
            let stdin = match given {
                Ok(Some(stdin)) => Ok(stdin),
                Ok(None) => open_null().map(OwnedFd::from),
                Err(e) => Err(e),
            };
            // Replacing standard input also closes the socket's copy there.
            match stdin.and_then(|stdin| rustix::stdio::dup2_stdin(&stdin).map_err(Into::into)) {
                Ok(()) => Command::new(program).args(args).exec(),
                Err(e) => e,
            }
        }
        _ => std::io::Error::from(std::io::ErrorKind::InvalidInput),
    };
    let mut message = vec![b'E'];
    message.extend(error.raw_os_error().unwrap_or(22).to_le_bytes());
    let _ = report.write_all(&message);
    ExitCode::from(127)
}

/// The descriptor toolctl passed on `socket` for the program's standard input (`None`: it
/// passed none, `/dev/null`); an error when it said it passed one that did not come.
fn received(socket: &OwnedFd) -> std::io::Result<Option<OwnedFd>> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, recvmsg};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let mut data = [std::io::IoSliceMut::new(&mut byte)];
    recvmsg(socket, &mut data, &mut control, RecvFlags::CMSG_CLOEXEC)?;
    let fd = control.drain().find_map(|message| match message {
        RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
        _ => None,
    });
    match (byte, fd) {
        ([PASSED], None) => Err(std::io::Error::from_raw_os_error(9)),
        (_, fd) => Ok(fd),
    }
}

/// The byte toolctl sends the launcher with the program's standard input; [`NOT_PASSED`]
/// when there is none.
const PASSED: u8 = b'F';
const NOT_PASSED: u8 = b'-';

/// toolctl's end of the launcher's standard input, a Unix socket: the program's standard
/// input goes to the launcher on it (`SCM_RIGHTS`), and the launcher answers on it — nothing,
/// then the end of the stream when its exec closes its copy (the program runs), or `E` and an
/// error number (the program could not be run). So the program's standard input can be
/// anything (`/dev/null` for `exec`, the MCP channel for a server) while a failed exec is still
/// the error it gave, and no descriptor beyond the three standard ones has to be handed down
/// (which needs unsafe code between fork and exec).
#[derive(Debug)]
pub(crate) struct Handoff {
    socket: std::os::unix::net::UnixStream,
}

impl Handoff {
    /// The channel, with `stdin` (`None`: `/dev/null`) for the program already on its way;
    /// the descriptor returned is the launcher's standard input.
    pub(crate) fn new(stdin: Option<OwnedFd>) -> std::io::Result<(Self, OwnedFd)> {
        use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags, sendmsg};
        use std::os::fd::AsFd;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        let passed = stdin.as_ref().map(|fd| [fd.as_fd()]);
        if let Some(passed) = &passed {
            control.push(SendAncillaryMessage::ScmRights(passed));
        }
        let byte = [if passed.is_some() { PASSED } else { NOT_PASSED }];
        sendmsg(
            &ours,
            &[std::io::IoSlice::new(&byte)],
            &mut control,
            SendFlags::empty(),
        )?;
        Ok((Self { socket: ours }, theirs.into()))
    }

    /// Wait until the launcher has run the program (`Ok`) or failed to (the exec's error).
    /// The launcher's standard input must be closed here first (the command that held it
    /// dropped), else the end is never seen.
    pub(crate) fn wait(mut self) -> std::io::Result<()> {
        let mut report = Vec::new();
        let _ = self.socket.read_to_end(&mut report);
        outcome(&report)
    }

    /// [`Handoff::wait`] on a tokio runtime.
    pub(crate) async fn wait_async(self) -> std::io::Result<()> {
        use tokio::io::AsyncReadExt;
        self.socket.set_nonblocking(true)?;
        let mut socket = tokio::net::UnixStream::from_std(self.socket)?;
        let mut report = Vec::new();
        let _ = socket.read_to_end(&mut report).await;
        outcome(&report)
    }
}

/// What the launcher said: nothing (the program runs) or `E` and the exec's error number.
fn outcome(report: &[u8]) -> std::io::Result<()> {
    match report.split_first() {
        Some((b'E', errno)) => {
            let errno = <[u8; 4]>::try_from(errno).map_or(22, i32::from_le_bytes);
            Err(std::io::Error::from_raw_os_error(errno))
        }
        _ => Ok(()),
    }
}

/// Move this process into the cgroup whose `cgroup.procs` is `procs` — only a cgroup v2 one
/// named as toolctl names them, so the launcher writes nowhere else.
fn join(procs: &Path) -> std::io::Result<()> {
    let named = procs.file_name().is_some_and(|name| name == "cgroup.procs")
        && procs
            .parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with(PREFIX) || name.starts_with(SERVER_PREFIX));
    if !named {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    let mut file = std::fs::OpenOptions::new().write(true).open(procs)?;
    if i128::from(rustix::fs::fstatfs(&file)?.f_type) != CGROUP2_MAGIC {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    file.write_all(b"0")
}

/// The cgroup of one `exec` call or one stdio MCP server: killed and removed when dropped.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// A new cgroup for an `exec` call, or `None` where there can be none (then the call
    /// falls back to its process group and tag). Named after this process, as a server's is;
    /// leftovers beside it are removed first ([`remove_leftovers`]).
    pub(crate) fn create() -> Option<Self> {
        Self::make(PREFIX)
    }

    /// A new cgroup for a stdio MCP server, or `None` where there can be none; as
    /// [`Cgroup::create`].
    pub(crate) fn for_server() -> Option<Self> {
        Self::make(SERVER_PREFIX)
    }

    /// A cgroup `<prefix><owner>-<UUIDv7>` in this process's cgroup, the owner this process
    /// (PID namespace, PID, start time), watched for signals; the leftovers beside it removed
    /// first.
    fn make(prefix: &str) -> Option<Self> {
        let base = base()?;
        let owner = Owner::of_self()?;
        remove_leftovers(&base, &owner);
        let dir = base.join(format!("{prefix}{owner}-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir(&dir).ok()?;
        if let Ok(mut live) = LIVE.lock() {
            live.push(dir.clone());
        }
        watch_signals();
        Some(Self { dir })
    }

    /// A command that runs `program` with `args` in this cgroup, through the launcher. Set
    /// everything on it but its standard input, which is the launcher's ([`Handoff`]).
    pub(crate) fn command(&self, program: &str, args: &[String]) -> Command {
        let mut command = Command::new("/proc/self/exe");
        command
            .arg(LAUNCHER_ARG)
            .arg(self.dir.join("cgroup.procs"))
            .arg(program)
            .args(args);
        command
    }

    /// Start a command made by [`Cgroup::command`]: the program's standard input is
    /// `/dev/null`, and a program that cannot be run is the error its exec gave.
    pub(crate) fn spawn(&self, mut command: Command) -> std::io::Result<Child> {
        let (handoff, stdin) = Handoff::new(None)?;
        command.stdin(stdin);
        let spawned = command.spawn();
        // The command holds the launcher's end of the socket: this end sees the launcher's
        // exec only once that copy is gone too.
        drop(command);
        let mut child = spawned?;
        if let Err(e) = handoff.wait() {
            let _ = child.wait();
            return Err(e);
        }
        Ok(child)
    }

    /// Kill every process in the cgroup and wait (a bounded time) until it is empty.
    pub(crate) fn kill(&self) {
        kill(&self.dir);
    }

    /// Kill every process in the cgroup and remove it now (dropping it does too).
    pub(crate) fn remove(&self) {
        remove(&self.dir);
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|dir| dir != &self.dir);
        }
    }
}

/// Where this process's cgroups go (its own cgroup), when it can launch and cgroups are not
/// switched off.
fn base() -> Option<PathBuf> {
    if !CAN_LAUNCH.load(Ordering::Relaxed) || switched_off() {
        return None;
    }
    own_cgroup()
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.remove();
    }
}

/// `exec` and MCP servers use no cgroup: [`OFF_VARIABLE`] says so.
fn switched_off() -> bool {
    std::env::var(OFF_VARIABLE).is_ok_and(|value| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "no" | "false"
        )
    })
}

/// The folder of this process's cgroup v2 cgroup, if there is a cgroup v2 mount.
pub fn own_cgroup() -> Option<PathBuf> {
    let cgroups = crate::base::capped::read_kernel_file("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mountinfo = crate::base::capped::read_kernel_file("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        // `id parent major:minor root mountpoint options… - type source superoptions`
        let (mount, after) = line.split_once(" - ")?;
        if after.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let mut fields = mount.split_whitespace().skip(3);
        let root = unescape(fields.next()?);
        let point = unescape(fields.next()?);
        let inside = Path::new(own).strip_prefix(&root).ok()?;
        Some(Path::new(&point).join(inside))
    })
}

/// A field of `mountinfo`, where space, tab, newline and backslash are written `\ooo`.
fn unescape(field: &str) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|_| bytes[i] == b'\\')
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match octal {
            Some(byte) => {
                out.push(byte);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    OsString::from_vec(out)
}

/// Kill every process in the cgroup `dir`, then wait until it is empty (at most [`DRAIN`]).
fn kill(dir: &Path) {
    if write(&dir.join("cgroup.kill"), b"1").is_err() {
        // Before Linux 5.14: one by one, until no more appear.
        for _ in 0..200 {
            let pids =
                crate::base::capped::read_kernel_file(dir.join("cgroup.procs")).unwrap_or_default();
            let mut any = false;
            for pid in pids
                .lines()
                .filter_map(|line| line.trim().parse::<i32>().ok())
            {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    any = true;
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            if !any {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let deadline = Instant::now() + DRAIN;
    while populated(dir) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Kill the cgroup `dir` and remove it (gone already is fine).
fn remove(dir: &Path) {
    kill(dir);
    remove_dirs(dir);
}

/// Remove the killed cgroup `dir`: the cgroups below it first (those a toolctl running in it
/// made for its own calls and servers, killed with it), as `rmdir` refuses a cgroup that has
/// any.
fn remove_dirs(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.filter_map(Result::ok) {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                remove_dirs(&entry.path());
            }
        }
    }
    for _ in 0..100 {
        match std::fs::remove_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => return,
        }
    }
}

/// `cgroup.events` says a process is still in `dir` (or below).
fn populated(dir: &Path) -> bool {
    crate::base::capped::read_kernel_file(dir.join("cgroup.events"))
        .is_ok_and(|events| events.lines().any(|line| line.trim() == "populated 1"))
}

/// Write `bytes` to the existing file `path` (a cgroup file: never created).
fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(bytes)
}

/// The toolctl process that owns a call's or a server's cgroup:
/// `<PID namespace>-<PID>-<start time>` (the start in clock ticks after boot, field 22 of
/// `/proc/PID/stat`, so a PID used again by another process is not taken for the owner).
#[derive(Debug, PartialEq, Eq)]
struct Owner {
    namespace: u64,
    pid: u32,
    start: u64,
}

impl Owner {
    fn of_self() -> Option<Self> {
        let pid = std::process::id();
        Some(Self {
            namespace: pid_namespace()?,
            pid,
            start: start_time(pid)?,
        })
    }

    /// The owner named in `name`, a cgroup's: `<prefix><owner>-<UUID>` ([`PREFIX`] or
    /// [`SERVER_PREFIX`]), nothing else — not an `exec` cgroup named the old way, whose UUID
    /// may begin with digits.
    fn parse(name: &str) -> Option<Self> {
        let rest = name
            .strip_prefix(PREFIX)
            .or_else(|| name.strip_prefix(SERVER_PREFIX))?;
        let mut fields = rest.splitn(4, '-');
        let owner = Self {
            namespace: fields.next()?.parse().ok()?,
            pid: fields.next()?.parse().ok()?,
            start: fields.next()?.parse().ok()?,
        };
        uuid::Uuid::try_parse(fields.next()?).ok()?;
        Some(owner)
    }

    /// The process still runs (a process with its PID started when it did).
    fn alive(&self) -> bool {
        start_time(self.pid) == Some(self.start)
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.namespace, self.pid, self.start)
    }
}

/// The inode of this process's PID namespace (`/proc/self/ns/pid` is `pid:[INODE]`).
fn pid_namespace() -> Option<u64> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    link.to_str()?
        .strip_prefix("pid:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// When process `pid` started, in clock ticks after boot (field 22 of `/proc/PID/stat`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = crate::base::capped::read_kernel_file(format!("/proc/{pid}/stat")).ok()?;
    // `pid (name) state …`: the name may hold spaces and parentheses; field 22 is the 20th
    // after it.
    stat.get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// When an `exec` cgroup named the old way, `toolctl-exec-<UUIDv7>`, was made (its UUID's
/// time).
fn made_the_old_way(name: &str) -> Option<std::time::SystemTime> {
    let (seconds, nanos) = uuid::Uuid::try_parse(name.strip_prefix(PREFIX)?)
        .ok()?
        .get_timestamp()?
        .to_unix();
    Some(std::time::UNIX_EPOCH + Duration::new(seconds, nanos))
}

/// Remove, once, the cgroups in `base` that toolctls killed with SIGKILL left behind, with
/// whatever still runs in them: a call's or a server's once the toolctl named in it (of this
/// PID namespace, `me`'s) is gone; an `exec` cgroup named the old way once it is older than
/// [`OLD_LONGEST_CALL`] plus a minute, or empty and older than a minute (a call's cgroup holds
/// its program a moment after it is made). Those of a toolctl in another PID namespace (whose
/// PIDs mean nothing here) are left to a toolctl of that namespace.
fn remove_leftovers(base: &Path, me: &Owner) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(base) else {
            return;
        };
        let now = std::time::SystemTime::now();
        let minute = Duration::from_secs(60);
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let dir = entry.path();
            let left = match (Owner::parse(name), made_the_old_way(name)) {
                (Some(owner), _) => owner.namespace == me.namespace && !owner.alive(),
                (None, Some(made)) => {
                    let age = now.duration_since(made).unwrap_or_default();
                    age > OLD_LONGEST_CALL + minute || (age > minute && !populated(&dir))
                }
                (None, None) => false,
            };
            if left {
                remove(&dir);
            }
        }
    });
}

/// Tell the cgroup watcher that SIGINT and SIGTERM are handled elsewhere (`mcp serve` stops
/// on them): it removes the cgroups of the calls under way and lets the process go on.
pub fn signals_handled_elsewhere() {
    HANDLED_ELSEWHERE.store(true, Ordering::Relaxed);
}

/// Start, once, the thread that removes the cgroups under way when toolctl gets SIGINT,
/// SIGTERM or SIGHUP, then lets the signal end the process as it would have.
fn watch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("exec-cgroups".into())
            .spawn(move || {
                for signal in signals.forever() {
                    STOPPING.store(true, Ordering::SeqCst);
                    let dirs = LIVE.lock().map(|live| live.clone()).unwrap_or_default();
                    for dir in &dirs {
                        remove(dir);
                    }
                    let elsewhere = HANDLED_ELSEWHERE.load(Ordering::Relaxed) && signal != SIGHUP;
                    if !elsewhere {
                        let _ = signal_hook::low_level::emulate_default_handler(signal);
                    }
                }
            });
    });
}

/// `/dev/null`, for a program that gets no standard input.
#[allow(
    clippy::disallowed_methods,
    reason = "a device toolctl opens by name, never a user's file"
)]
fn open_null() -> std::io::Result<std::fs::File> {
    std::fs::File::open("/dev/null")
}

#[cfg(test)]
mod tests {
    use super::{Owner, PREFIX, SERVER_PREFIX, made_the_old_way, unescape};

    #[test]
    fn a_calls_and_a_servers_cgroup_name_their_owner() {
        let me = Owner::of_self().unwrap();
        assert!(me.alive());
        for prefix in [SERVER_PREFIX, PREFIX] {
            let name = format!("{prefix}{me}-{}", uuid::Uuid::now_v7());
            assert_eq!(Owner::parse(&name).as_ref(), Some(&me), "{name}");
        }
        // Another start time: the PID was used again, the owner is gone.
        let me = Owner::of_self().unwrap();
        let other = Owner::parse(&format!(
            "{SERVER_PREFIX}{}-{}-{}-{}",
            me.namespace,
            me.pid,
            me.start + 1,
            uuid::Uuid::now_v7()
        ))
        .unwrap();
        assert!(!other.alive());
        // An `exec` cgroup named the old way, even one whose UUID begins with digits, names
        // no owner, and is known by its age; nor do names toolctl does not make.
        for old in [
            "toolctl-exec-0190d0a6-5b7e-7000-8000-000000000000",
            "toolctl-exec-01900000-1234-7000-8000-000000000000",
        ] {
            assert_eq!(Owner::parse(old), None, "{old}");
            assert!(made_the_old_way(old).is_some(), "{old}");
        }
        for other in [
            "toolctl-mcp-x-1-2-0190d0a6-5b7e-7000-8000-000000000000",
            "toolctl-mcp-1-2-3-y",
            "toolctl-mcp-1-2-3",
            "toolctl-test-probe-12",
        ] {
            assert_eq!(Owner::parse(other), None, "{other}");
            assert_eq!(made_the_old_way(other), None, "{other}");
        }
        assert_eq!(
            made_the_old_way(&format!("{PREFIX}{me}-{}", uuid::Uuid::now_v7())),
            None
        );
    }

    #[test]
    fn mountinfo_fields_are_unescaped() {
        assert_eq!(unescape("/sys/fs/cgroup"), "/sys/fs/cgroup");
        assert_eq!(unescape("/mnt/my\\040cgroups"), "/mnt/my cgroups");
        assert_eq!(unescape("/a\\134b\\011c"), "/a\\b\tc");
        // Not an escape: left as it is.
        assert_eq!(unescape("/x\\9y\\"), "/x\\9y\\");
    }
}
