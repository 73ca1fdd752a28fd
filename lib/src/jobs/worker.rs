//! The background worker `invoke --batch --async` starts from the shell: one process per
//! catalog at a time (it holds `.toolctl/jobs-worker.lock`), running the jobs queued from the
//! shell (those that name their workspace; a server runs its own) and exiting once none are
//! left.
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
