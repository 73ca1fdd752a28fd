//! The index watcher: a file watcher per catalog that lets the change check skip the walk.
//!
//! Without it, every command stats each tool file and slug folder before it answers (the
//! change check in `sync.rs`): at 10,000 tools that is ~19,000 stats, 35 ms on two cores, and
//! at 100,000 tools over half a second — more than the rest of a search. The watcher is git's
//! fsmonitor-daemon (or watchman) design, on Linux's inotify:
//!
//! - One process per catalog (`toolctl index watch`) watches the folders the index looks at:
//!   `bundles/`, each bundle folder, its `tools/`, each slug folder and each version folder
//!   (hidden folders and anything deeper are never read by the index, so never watched). It
//!   keeps, for every path that had an event, the number of the last event: a sequence that
//!   only grows within an *epoch* (a random ID for one unbroken stretch of watching).
//! - The index stores a token `<epoch>:<seq>` with the state it was brought to. A command
//!   sends its token over the watcher's socket (`.toolctl/watch/sock`) and gets back the paths
//!   changed since, or "full" when the watcher cannot vouch for the whole stretch (another
//!   epoch: it restarted, its queue overflowed, or the index was never checked while it
//!   watched). The change check then compares the stamps of just those paths' rows; "full", an
//!   error or no answer at all means the ordinary walk. A wrong or missing answer is never
//!   trusted, so the watcher can make a command faster but never its answer wrong.
//! - Before answering, the watcher creates a cookie file in `.toolctl/watch/` and waits until
//!   its own event comes back: inotify queues the events of one instance in order, so every
//!   change made before the question was asked has then been seen (watchman's cookies).
//! - A folder created or moved in is watched before the next event is handled, and its whole
//!   subtree is then checked by stamps (what happened in it before the watch was added is
//!   found that way).
//!
//! Lifecycle: `toolctl index watch` runs it in the foreground, `--detach` in the background,
//! `--stop` stops it. The command line starts watchers (`cli::watcher`); this module only says
//! whether one may run ([`why_not`], [`mode`]) and talks to a running one. With `index.watch` (or `$TOOLCTL_WATCH`) at `auto`, the default, a
//! command run at a terminal (stdin and stderr) whose check had to stat at least
//! [`AUTO_MIN_ENTRIES`] entries starts one in the background and says so, on a local
//! filesystem only (inotify never hears of changes made by another
//! machine on NFS, SMB or 9p) and not in CI (`$CI` set: a job's few commands end before a
//! watcher pays off); `always` starts one on any catalog, `never` never. It exits after
//! `index.watchIdle` of `toolctl.json` (30 minutes) without a question, when its socket or
//! `bundles/` goes away, or when asked.
//! Elsewhere than Linux there is no watcher and every command walks.

use crate::catalog::config::WatchMode as Mode;
use crate::catalog::{Catalog, STATE_DIR};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The watcher's folder inside `.toolctl/`: its socket, lock and cookie files.
pub const WATCH_DIR: &str = "watch";

/// A check that stats at least this many entries (≈ 5 ms of stats here) starts a watcher in
/// `auto` mode.
pub const AUTO_MIN_ENTRIES: usize = 2_000;

/// The environment variable that overrides `index.watch` of `toolctl.json`.
pub const MODE_VAR: &str = "TOOLCTL_WATCH";

/// The watch mode of a catalog: `$TOOLCTL_WATCH`, else `index.watch` of `toolctl.json`. A bad
/// value of the variable is refused up front (see [`check_env`]).
pub fn mode(catalog: &Catalog) -> Mode {
    std::env::var(MODE_VAR)
        .ok()
        .and_then(|v| Mode::parse(&v).ok())
        .unwrap_or(catalog.config().index.watch)
}

/// Refuse a bad `$TOOLCTL_WATCH` with a message naming it.
pub fn check_env() -> Result<(), String> {
    match std::env::var(MODE_VAR) {
        Ok(value) => Mode::parse(&value)
            .map(drop)
            .map_err(|m| format!("${MODE_VAR}: {m}")),
        Err(_) => Ok(()),
    }
}

/// The watcher's folder of a catalog.
pub fn dir(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join(WATCH_DIR)
}

fn socket(root: &Path) -> PathBuf {
    dir(root).join("sock")
}

/// A question to the watcher, one JSON line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Request {
    /// What changed since this token.
    Since {
        token: String,
    },
    Status,
    Stop,
}

/// The watcher's answer to "what changed since this token" ([`changes_since`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    /// The token to store with the state the index is brought to.
    pub token: String,
    /// The paths (relative to the catalog) changed since the token asked about; `None`: the
    /// watcher cannot say, check everything.
    pub paths: Option<Vec<String>>,
}

/// What `index status` shows of a running watcher.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub pid: u32,
    /// Folders watched.
    pub folders: usize,
    pub epoch: String,
    /// Events seen in this epoch.
    pub events: u64,
    pub started_at: String,
}

/// How long a command waits for the watcher's answer before walking instead.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// Ask the catalog's watcher something; `None` when none answers (not running, stale socket,
/// no answer in time, not Linux).
fn ask<T: for<'de> Deserialize<'de>>(root: &Path, request: &Request) -> Option<T> {
    #[cfg(unix)]
    {
        use std::io::{BufRead, BufReader, Write};
        let mut stream = std::os::unix::net::UnixStream::connect(socket(root)).ok()?;
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).ok()?;
        stream.set_write_timeout(Some(ANSWER_TIMEOUT)).ok()?;
        let mut line = serde_json::to_string(request).ok()?;
        line.push('\n');
        stream.write_all(line.as_bytes()).ok()?;
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).ok()?;
        serde_json::from_str(&answer).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = (root, request);
        None
    }
}

/// What changed since `token` (`""`: never asked), if a watcher answers.
pub fn changes_since(root: &Path, token: &str) -> Option<Answer> {
    ask(
        root,
        &Request::Since {
            token: token.to_owned(),
        },
    )
}

/// The running watcher's status, if one answers.
pub fn status(root: &Path) -> Option<Status> {
    ask(root, &Request::Status)
}

/// Ask the running watcher to stop; whether one was running. Returns once it has gone.
pub fn stop(root: &Path) -> bool {
    #[derive(Deserialize)]
    struct Stopping {}
    if ask::<Stopping>(root, &Request::Stop).is_none() {
        return false;
    }
    wait_for(|| status(root).is_none());
    true
}

/// Poll `done` for up to five seconds.
fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

/// Where a watcher that could not start says why (so commands stop starting one for a while).
pub fn failure_file(root: &Path) -> PathBuf {
    dir(root).join("failed")
}

/// Why the last watcher could not start, if it could not.
pub fn last_failure(root: &Path) -> Option<String> {
    crate::base::capped::read_text(&failure_file(root), Some(root)).ok()
}

/// After a failed start, commands do not start another for this long.
pub const RETRY_AFTER: Duration = Duration::from_secs(3600);

/// The kernel's limit of inotify watches per user, when it can be read.
pub fn watch_limit() -> Option<usize> {
    crate::base::capped::read_kernel_file("/proc/sys/fs/inotify/max_user_watches")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// What to tell the user when a catalog's `folders` need more inotify watches (one a folder)
/// than the system's `limit` allows, with the line that raises it and how to keep it; `None`
/// when they fit. The limit suggested leaves a quarter more for the catalog's growth and
/// other programs' watches, rounded up to a multiple of 65,536.
pub fn too_few_watches(folders: usize, limit: usize) -> Option<String> {
    if folders < limit {
        return None;
    }
    let step = 65_536;
    let wanted = (folders + folders / 4).div_ceil(step) * step;
    Some(format!(
        "this catalog's {folders} folders need as many inotify watches and this system allows \
         {limit}: raise the limit with `sudo sysctl fs.inotify.max_user_watches={wanted}` (to \
         keep it after a restart: `echo fs.inotify.max_user_watches={wanted} | sudo tee \
         /etc/sysctl.d/90-toolctl.conf`); until then every command checks the files itself"
    ))
}

/// Why no watcher can run on this catalog, if so.
pub fn why_not(root: &Path) -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err(
            "the index watcher needs Linux (inotify); every command checks the files \
                    itself here"
                .to_owned(),
        );
    }
    let socket = socket(root);
    // sockaddr_un holds 108 bytes with the final NUL.
    if socket.as_os_str().len() > 107 {
        return Err(format!(
            "the watcher's socket path {} is longer than the 107 bytes a Unix socket allows",
            socket.display()
        ));
    }
    if !root.join(crate::catalog::BUNDLES_DIR).is_dir() {
        return Err(format!(
            "{} has no bundles/ folder to watch",
            root.display()
        ));
    }
    Ok(())
}

/// The watcher's lock file: held by the running watcher for its life.
fn lock_file(root: &Path) -> PathBuf {
    dir(root).join("lock")
}

/// Make the watcher's folder (`.toolctl/watch`), or say why no watcher can run on this
/// catalog: [`why_not`], or a folder or lock that cannot be made there or would be written
/// through a symlink out of the catalog. The watcher does this before it starts, and so does
/// whoever starts one in the background: a watcher that cannot make its folder cannot leave
/// its reason in it ([`failure_file`]) either, so the one who started it must find it first.
pub fn prepare(root: &Path) -> Result<(), String> {
    why_not(root)?;
    crate::catalog::store::create_state_dir(&dir(root)).map_err(|e| with_causes(&e))?;
    crate::catalog::store::refuse_link_out(&lock_file(root)).map_err(|e| with_causes(&e))
}

/// `error` and what caused it, on one line (`cannot create folder …/watch: File exists (os
/// error 17)`): the watcher's reasons are one line, and "cannot create folder" alone does not
/// say why.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    for cause in crate::base::causes(error) {
        let said = cause.to_string();
        if !out.contains(&said) {
            out.push_str(": ");
            out.push_str(&said);
        }
    }
    out
}

/// Whether the catalog is on a local filesystem whose changes inotify sees (not NFS, SMB,
/// FUSE, 9p, …): the filesystems in common use as a root or home folder.
pub fn is_local(root: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        const LOCAL: [u64; 10] = [
            0xEF53,      // ext2/3/4
            0x5846_5342, // xfs
            0x9123_683E, // btrfs
            0x0102_1994, // tmpfs
            0x794C_7630, // overlayfs
            0xF2F5_2010, // f2fs
            0x2FC1_2FC2, // zfs
            0xCA45_1A4E, // bcachefs
            0x3153_464A, // jfs
            0x5265_4973, // reiserfs
        ];
        rustix::fs::statfs(root).is_ok_and(|s| LOCAL.contains(&(s.f_type as u64)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        false
    }
}

/// Why a watcher did not run, or stopped on a failure.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Another watcher holds the catalog's watch lock (the catalog's folder).
    #[error("another watcher already watches {}", .0.display())]
    AlreadyWatched(PathBuf),
    #[error("{0}")]
    Failed(String),
}

#[cfg(target_os = "linux")]
pub use daemon::run;

/// Run the watcher in the foreground (`toolctl index watch`).
#[cfg(not(target_os = "linux"))]
pub fn run(root: &Path, _idle: Duration, _ready: impl FnOnce(&Status)) -> Result<(), RunError> {
    why_not(root).map_err(RunError::Failed)
}

#[cfg(target_os = "linux")]
mod daemon {
    use super::{
        Answer, Request, RunError, Status, dir, failure_file, lock_file, prepare, socket,
        too_few_watches, watch_limit,
    };
    use crate::catalog::BUNDLES_DIR;
    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
    use rustix::io::Errno;
    use std::collections::{HashMap, HashSet};
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    /// What is watched on each folder: everything that changes a stamp or a listing.
    const MASK: WatchMask = WatchMask::CREATE
        .union(WatchMask::DELETE)
        .union(WatchMask::MOVED_FROM)
        .union(WatchMask::MOVED_TO)
        .union(WatchMask::MODIFY)
        .union(WatchMask::CLOSE_WRITE)
        .union(WatchMask::ATTRIB)
        .union(WatchMask::DELETE_SELF)
        .union(WatchMask::MOVE_SELF)
        .union(WatchMask::ONLYDIR)
        .union(WatchMask::EXCL_UNLINK);

    /// Paths remembered at most before the watcher starts a new epoch (commands then walk once).
    const MAX_CHANGED: usize = 200_000;

    /// Milliseconds the watcher waits before it handles each batch of events: for tests, to
    /// show that a question's cookie makes up for a watcher behind on its events.
    const LAG_VAR: &str = "TOOLCTL_WATCH_TEST_LAG_MS";

    /// The longest question read (a token is ~60 bytes).
    const MAX_QUESTION: u64 = 4096;

    /// How long a question waits for its cookie before the answer is "full".
    const COOKIE_TIMEOUT: Duration = Duration::from_secs(1);

    /// What the event thread and the question threads share.
    struct State {
        epoch: String,
        seq: u64,
        /// Each path with an event in this epoch, and the number of its last event.
        changed: HashMap<String, u64>,
        /// Cookies whose events arrived, not yet taken by their question.
        cookies: HashSet<u64>,
        /// Cookies below this number are answered "full" (a reset may have lost their events).
        cookie_floor: u64,
        folders: usize,
        last_question: Instant,
        /// Two paths lead to one watched folder (a symlink): events cannot be placed.
        ambiguous: bool,
    }

    impl State {
        fn new_epoch(&mut self) {
            self.epoch = uuid::Uuid::now_v7().to_string();
            self.seq = 0;
            self.changed.clear();
            self.ambiguous = false;
        }

        fn token(&self) -> String {
            format!("{}:{}", self.epoch, self.seq)
        }

        fn answer(&self, token: &str) -> Answer {
            let since = token
                .split_once(':')
                .filter(|(epoch, _)| *epoch == self.epoch && !self.ambiguous)
                .and_then(|(_, seq)| seq.parse::<u64>().ok())
                .filter(|seq| *seq <= self.seq);
            Answer {
                token: self.token(),
                paths: since.map(|since| {
                    let mut paths: Vec<String> = self
                        .changed
                        .iter()
                        .filter(|(_, seq)| **seq > since)
                        .map(|(path, _)| path.clone())
                        .collect();
                    paths.sort();
                    paths
                }),
            }
        }
    }

    struct Shared {
        state: Mutex<State>,
        cookie_seen: Condvar,
        next_cookie: AtomicU64,
        started_at: String,
        /// Told once the watcher must end: the main thread then returns from [`run`].
        stop: std::sync::mpsc::Sender<()>,
    }

    impl Shared {
        fn lock(&self) -> MutexGuard<'_, State> {
            // A panicking thread ends the process (see `run`); the state is never half-written.
            self.state.lock().unwrap_or_else(|e| e.into_inner())
        }
    }

    /// The watched folders of one inotify instance.
    struct Tree {
        root: PathBuf,
        inotify: Inotify,
        watches: Watches,
        /// Watch descriptor → folder, relative to the catalog (`bundles/…`).
        folders: HashMap<WatchDescriptor, String>,
        cookie_wd: WatchDescriptor,
        ambiguous: bool,
    }

    /// What the event thread must do after a batch of events.
    enum Next {
        Go,
        /// Events were lost: watch afresh in a new epoch.
        Reset,
        /// `bundles/` itself went away.
        Gone,
    }

    impl Tree {
        fn new(root: &Path) -> std::io::Result<Self> {
            let inotify = Inotify::init()?;
            let mut watches = inotify.watches();
            let cookie_wd = watches.add(dir(root), WatchMask::CREATE | WatchMask::ONLYDIR)?;
            let mut tree = Self {
                root: root.to_owned(),
                inotify,
                watches,
                folders: HashMap::new(),
                cookie_wd,
                ambiguous: false,
            };
            tree.watch(BUNDLES_DIR)?;
            Ok(tree)
        }

        /// Watch a folder and the folders under it that the index reads.
        fn watch(&mut self, folder: &str) -> std::io::Result<()> {
            let path = self.root.join(folder);
            let wd = match self.watches.add(&path, MASK) {
                Ok(wd) => wd,
                // Gone again, or not a folder: its parent's events tell.
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) =>
                {
                    return Ok(());
                }
                Err(e) if e.raw_os_error() == Some(Errno::NOSPC.raw_os_error()) => {
                    let watched = self.folders.len();
                    let advice = watch_limit()
                        .and_then(|limit| too_few_watches(limit.max(watched), limit))
                        .map_or_else(String::new, |advice| format!(": {advice}"));
                    return Err(std::io::Error::other(format!(
                        "no inotify watches left after {watched} folders (other programs hold \
                         some of fs.inotify.max_user_watches){advice}"
                    )));
                }
                Err(e) => return Err(e),
            };
            if let Some(before) = self.folders.insert(wd, folder.to_owned())
                && before != folder
            {
                self.ambiguous = true;
            }
            if depth(folder) >= 4 {
                return Ok(());
            }
            let Ok(entries) = std::fs::read_dir(&path) else {
                return Ok(());
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let child = format!("{folder}/{name}");
                // As the index lists folders: symlinks to folders count.
                if is_watched(&child) && entry.path().is_dir() {
                    self.watch(&child)?;
                }
            }
            Ok(())
        }

        /// Stop watching a folder moved away, and the folders under it.
        fn unwatch(&mut self, folder: &str) {
            let under = format!("{folder}/");
            let gone: Vec<WatchDescriptor> = self
                .folders
                .iter()
                .filter(|(_, f)| *f == folder || f.starts_with(&under))
                .map(|(wd, _)| wd.clone())
                .collect();
            for wd in gone {
                self.folders.remove(&wd);
                // Already gone with its folder: nothing to do.
                let _ = self.watches.remove(wd);
            }
        }

        /// Read the next batch of events (blocking) and record them.
        fn handle(
            &mut self,
            shared: &Shared,
            buffer: &mut [u8],
            lag: Duration,
        ) -> std::io::Result<Next> {
            let events: Vec<_> = self
                .inotify
                .read_events_blocking(buffer)?
                .map(|e| e.to_owned())
                .collect();
            std::thread::sleep(lag);
            let mut state = shared.lock();
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    return Ok(Next::Reset);
                }
                let name = event.name.as_ref().map(|n| n.to_string_lossy());
                if event.wd == self.cookie_wd {
                    if let Some(n) = name.as_ref().and_then(|n| n.strip_prefix("cookie-"))
                        && let Ok(n) = n.parse()
                    {
                        state.cookies.insert(n);
                    }
                    continue;
                }
                if event.mask.contains(EventMask::IGNORED) {
                    self.folders.remove(&event.wd);
                    continue;
                }
                let Some(folder) = self.folders.get(&event.wd).cloned() else {
                    // A folder unwatched since: its parent's event covers it.
                    continue;
                };
                if event
                    .mask
                    .intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF)
                {
                    if folder == BUNDLES_DIR {
                        return Ok(Next::Gone);
                    }
                    // The parent folder's event names it.
                    continue;
                }
                let path = match &name {
                    Some(name) => format!("{folder}/{name}"),
                    None => folder,
                };
                if event.mask.contains(EventMask::ISDIR) {
                    if event.mask.contains(EventMask::MOVED_FROM) {
                        self.unwatch(&path);
                    }
                    if event
                        .mask
                        .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                        && is_watched(&path)
                    {
                        self.watch(&path)?;
                    }
                }
                state.seq += 1;
                let seq = state.seq;
                state.changed.insert(path, seq);
            }
            state.folders = self.folders.len();
            state.ambiguous |= self.ambiguous;
            if state.changed.len() > MAX_CHANGED {
                state.new_epoch();
            }
            shared.cookie_seen.notify_all();
            Ok(Next::Go)
        }
    }

    /// Folders below `bundles/` in a path (`bundles/B/tools/S/V`: 4).
    fn depth(folder: &str) -> usize {
        folder.matches('/').count()
    }

    /// Whether the index reads this folder (so it is watched): not hidden, and
    /// `bundles/B`, `bundles/B/tools`, `…/tools/S` or `…/tools/S/V`.
    fn is_watched(folder: &str) -> bool {
        let name = folder.rsplit('/').next().unwrap_or(folder);
        let depth = depth(folder);
        !name.starts_with('.') && depth <= 4 && (depth != 2 || name == crate::catalog::TOOLS_DIR)
    }

    /// Run the watcher until it is stopped, `idle` without a question or its catalog goes away.
    /// `ready` is called once it answers questions. Why it could not start is also left in
    /// `.toolctl/watch/failed`, for `--detach` to tell and for commands not to start another
    /// at once: once [`prepare`] has made that folder (before, the reason has nowhere to go,
    /// so whoever starts a watcher in the background runs `prepare` first). Another watcher
    /// holding the lock is no failure of this catalog's and is not left there.
    pub fn run(root: &Path, idle: Duration, ready: impl FnOnce(&Status)) -> Result<(), RunError> {
        prepare(root).map_err(RunError::Failed)?;
        let failed = failure_file(root);
        let leave = |message: &String| {
            let _ = crate::catalog::store::write_atomic(&failed, message.as_bytes());
        };
        // One watcher per catalog: the lock is held for the process's life.
        let _lock = match crate::catalog::lock::acquire(&lock_file(root), Duration::ZERO) {
            Ok(lock) => lock,
            Err(crate::catalog::Error::LockTimeout { .. }) => {
                return Err(RunError::AlreadyWatched(root.to_owned()));
            }
            Err(e) => {
                let message = super::with_causes(&e);
                leave(&message);
                return Err(RunError::Failed(message));
            }
        };
        let _ = std::fs::remove_file(&failed);
        watch(root, idle, ready)
            .inspect_err(leave)
            .map_err(RunError::Failed)
    }

    /// Watch and answer, once the lock is held.
    fn watch(root: &Path, idle_after: Duration, ready: impl FnOnce(&Status)) -> Result<(), String> {
        let socket_path = socket(root);
        // Left by a watcher that died: nobody listens on it (we hold the lock).
        let _ = std::fs::remove_file(&socket_path);

        let (stop_tx, stop_rx) = std::sync::mpsc::channel();
        let mut tree =
            Tree::new(root).map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                epoch: String::new(),
                seq: 0,
                changed: HashMap::new(),
                cookies: HashSet::new(),
                cookie_floor: 0,
                folders: tree.folders.len(),
                last_question: Instant::now(),
                ambiguous: tree.ambiguous,
            }),
            cookie_seen: Condvar::new(),
            next_cookie: AtomicU64::new(0),
            started_at: jiff::Timestamp::now().to_string(),
            stop: stop_tx,
        });
        shared.lock().new_epoch();
        let listener = UnixListener::bind(&socket_path)
            .map_err(|e| format!("cannot listen on {}: {e}", socket_path.display()))?;
        let socket_ino = inode(&socket_path);

        // Any thread that fails ends the watcher: a watcher that is not sure answers nothing.
        let events = Arc::clone(&shared);
        let events_root = root.to_owned();
        // For tests: a watcher slow to handle its events (the cookie must make up for it).
        let lag = std::env::var(LAG_VAR)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::ZERO, Duration::from_millis);
        std::thread::spawn(move || {
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                match tree.handle(&events, &mut buffer, lag) {
                    Ok(Next::Go) => {}
                    Ok(Next::Reset) => match Tree::new(&events_root) {
                        Ok(fresh) => {
                            tree = fresh;
                            let mut state = events.lock();
                            state.new_epoch();
                            state.cookie_floor = events.next_cookie.load(Ordering::SeqCst);
                            state.folders = tree.folders.len();
                            state.ambiguous = tree.ambiguous;
                            events.cookie_seen.notify_all();
                        }
                        Err(_) => stop(&events),
                    },
                    Ok(Next::Gone) | Err(_) => stop(&events),
                }
            }
        });
        let health = Arc::clone(&shared);
        let health_root = root.to_owned();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let idle = health.lock().last_question.elapsed() > idle_after;
                let moved = inode(&socket(&health_root)) != socket_ino;
                if idle || moved || !health_root.join(BUNDLES_DIR).is_dir() {
                    stop(&health);
                }
            }
        });

        ready(&status_of(&shared));
        let answering = Arc::clone(&shared);
        let answer_root = root.to_owned();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&answering);
                let root = answer_root.clone();
                std::thread::spawn(move || serve(stream, &shared, &root));
            }
        });
        // Until a thread says the watcher must end; then the socket goes with it. The other
        // threads end with the process.
        let _ = stop_rx.recv();
        let _ = std::fs::remove_file(socket(root));
        Ok(())
    }

    fn inode(path: &Path) -> Option<u64> {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).ok()?).into()
    }

    /// End the watcher: [`watch`] returns (taking the socket with it) and so does the
    /// command; this thread waits for that.
    fn stop(shared: &Shared) -> ! {
        let _ = shared.stop.send(());
        loop {
            std::thread::park();
        }
    }

    fn status_of(shared: &Shared) -> Status {
        let state = shared.lock();
        Status {
            pid: std::process::id(),
            folders: state.folders,
            epoch: state.epoch.clone(),
            events: state.seq,
            started_at: shared.started_at.clone(),
        }
    }

    /// Answer one question.
    fn serve(stream: UnixStream, shared: &Shared, root: &Path) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut line = String::new();
        let Ok(mut writer) = stream.try_clone() else {
            return;
        };
        // A question is one short line: a peer that sends more is cut off, not buffered.
        if BufReader::new(stream.take(MAX_QUESTION))
            .read_line(&mut line)
            .is_err()
        {
            return;
        }
        let Ok(request) = serde_json::from_str::<Request>(&line) else {
            return;
        };
        shared.lock().last_question = Instant::now();
        let reply = match request {
            Request::Since { token } => serde_json::to_string(&since(shared, root, &token)),
            Request::Status => serde_json::to_string(&status_of(shared)),
            Request::Stop => {
                let _ = writer.write_all(b"{}\n");
                stop(shared);
            }
        };
        if let Ok(mut reply) = reply {
            reply.push('\n');
            let _ = writer.write_all(reply.as_bytes());
        }
    }

    /// The paths changed since `token`, once every event before the question has been seen.
    fn since(shared: &Shared, root: &Path, token: &str) -> Answer {
        let n = shared.next_cookie.fetch_add(1, Ordering::SeqCst);
        let cookie = dir(root).join(format!("cookie-{n}"));
        let full = |state: &State| Answer {
            token: state.token(),
            paths: None,
        };
        // Made anew, never opened through what is there: a symlink in its place (a clone
        // can hold one) is removed, not followed, and a `watch` folder that leads out of the
        // catalog is not written into.
        let _ = std::fs::remove_file(&cookie);
        let made = crate::catalog::store::refuse_link_out(&cookie).is_ok()
            && std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&cookie)
                .is_ok();
        if !made {
            return full(&shared.lock());
        }
        let started = Instant::now();
        let mut state = shared.lock();
        let answer = loop {
            if state.cookies.remove(&n) {
                break state.answer(token);
            }
            let waited = started.elapsed();
            if n < state.cookie_floor || waited >= COOKIE_TIMEOUT {
                break full(&state);
            }
            state = shared
                .cookie_seen
                .wait_timeout(state, COOKIE_TIMEOUT - waited)
                .map_or_else(|e| e.into_inner().0, |(s, _)| s);
        };
        drop(state);
        let _ = std::fs::remove_file(&cookie);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::too_few_watches;

    #[test]
    fn a_catalog_over_the_watch_limit_is_told_the_line_that_raises_it() {
        assert_eq!(too_few_watches(188_223, 192_530), None);
        let advice = too_few_watches(188_223, 128_000).unwrap();
        // A quarter more (235,278), rounded up to a multiple of 65,536.
        assert!(
            advice.contains("`sudo sysctl fs.inotify.max_user_watches=262144`"),
            "{advice}"
        );
        assert!(advice.contains("/etc/sysctl.d/90-toolctl.conf"), "{advice}");
        assert!(advice.contains("188223 folders") && advice.contains("allows 128000"));
        let big = too_few_watches(1_880_000, 1_048_576).unwrap();
        assert!(big.contains("max_user_watches=2359296`"), "{big}");
    }
}
