//! The background worker `invoke --batch --async` starts from the shell: one process per
//! catalog at a time (it holds `.toolctl/jobs-worker.lock`), running the jobs queued from the
//! shell (those that name their workspace; a server runs its own) and exiting once none are
//! left. A running server holds the same lock and runs those jobs too ([`Follower`]): the
//! shell then starts no worker ([`held`]).
//!
//! No job is left behind by a worker that is about to exit while another process queues one:
//! the worker lets the lock go, then looks at the queue once more, and takes the lock back
//! (or leaves the jobs to the worker that took it) when it finds any. A process that queues
//! jobs starts a worker after it queued them; that worker exits at once when another one holds
//! the lock, and the other one sees the jobs on its last look.

use super::Store;
use super::runner::Runner;
use crate::catalog::lock::{self, LockGuard};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The lock file under `.toolctl/` held by the running worker.
pub const LOCK_FILE: &str = "jobs-worker.lock";

/// How often the worker looks at its jobs and the queue.
const TICK: Duration = Duration::from_millis(50);

/// Run the jobs queued from the shell until none are left, `workers` at a time per queue, file
/// tools working in `workspace` unless a job names its own. Returns how many jobs it ran;
/// none when another worker holds the lock.
pub fn drain(root: &Path, workspace: PathBuf, workers: usize) -> super::Result<usize> {
    let state = crate::catalog::state::dir(root);
    let store = Arc::new(Store::open(&state)?);
    let lock_path = state.join(LOCK_FILE);
    let runner = Runner::new(Arc::clone(&store), root.to_path_buf(), workspace, workers);
    let mut submitted = HashSet::new();
    let mut ran = 0;
    loop {
        let Some(lock) = take(&lock_path)? else {
            return Ok(ran);
        };
        store.recover()?;
        loop {
            let fresh: Vec<_> = from_shell(&store)?
                .into_iter()
                .filter(|job| !submitted.contains(&job.id))
                .collect();
            for job in &fresh {
                submitted.insert(job.id.clone());
                runner.submit(job);
                ran += 1;
            }
            let open = submitted
                .iter()
                .filter(|id| store.get(id).is_ok_and(|job| !job.status.is_final()))
                .count();
            if open == 0 && fresh.is_empty() {
                break;
            }
            std::thread::sleep(TICK);
        }
        drop(lock);
        if from_shell(&store)?.is_empty() {
            return Ok(ran);
        }
    }
}

/// Some process of this catalog (a worker or a server) holds the worker lock in `state`, and
/// runs the jobs the shell queues.
pub fn held(state: &Path) -> super::Result<bool> {
    Ok(take(&state.join(LOCK_FILE))?.is_none())
}

/// A server's thread running the jobs the shell queues, while the server runs: it holds the
/// worker lock (or waits for the worker that holds it to exit) and gives each new job to the
/// server's runner.
#[derive(Debug)]
pub struct Follower {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Follower {
    /// Start following the shell's jobs in `state` on `runner`; the lock is taken before this
    /// returns when no worker holds it.
    pub fn start(runner: Arc<Runner>, state: &Path) -> super::Result<Self> {
        let lock_path = state.join(LOCK_FILE);
        let first = take(&lock_path)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("jobs-follower".into())
            .spawn(move || follow(&runner, &lock_path, first, &stopped))
            .map_err(|e| super::Error::Io {
                path: state.to_path_buf(),
                source: e,
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

/// Dropping the follower stops it taking jobs and lets the lock go.
impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn follow(runner: &Arc<Runner>, lock_path: &Path, mut lock: Option<LockGuard>, stop: &AtomicBool) {
    let mut submitted = HashSet::new();
    while !stop.load(Ordering::SeqCst) {
        if lock.is_none() {
            lock = take(lock_path).ok().flatten();
        }
        if lock.is_some() {
            // A job a failed read misses is seen at the next tick.
            if let Ok(queued) = from_shell(runner.store()) {
                submitted.retain(|id| queued.iter().any(|job| &job.id == id));
                for job in queued {
                    if submitted.insert(job.id.clone()) {
                        runner.submit(&job);
                    }
                }
            }
        }
        std::thread::sleep(TICK);
    }
}

/// The queued jobs a shell queued (they name the workspace their call works in).
fn from_shell(store: &Store) -> super::Result<Vec<super::Job>> {
    let mut queued = store.queued()?;
    queued.retain(|job| job.workspace.is_some());
    Ok(queued)
}

/// The worker lock, unless another process holds it.
fn take(path: &Path) -> super::Result<Option<LockGuard>> {
    match lock::acquire(path, Duration::ZERO) {
        Ok(guard) => Ok(Some(guard)),
        Err(crate::catalog::Error::LockTimeout { .. }) => Ok(None),
        Err(e) => Err(super::Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}
