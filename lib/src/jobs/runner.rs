//! Running jobs: a bounded pool of worker threads per queue, each taking the oldest job
//! queued there, running its call as `invoke` does (argument and output checks, host policy,
//! secrets, usage counts) and recording its end. Every change of a job's status is told on a
//! channel that waiters (a sync batch, an event stream) listen to.

use super::{Cancelled, Job, Status, Store};
use crate::base::error_code::ErrorCode;
use crate::catalog::{Catalog, VersionChoice};
use crate::invoke::{self, Cancel, Failure, Options, batch};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};

/// How often a running job's store entry is read for a cancel from another process.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Queues that get workers of their own; the jobs of any queue named after these share one
/// more pool, so however many queue names callers use, at most `(MAX_QUEUES + 1) × workers`
/// threads run jobs.
pub const MAX_QUEUES: usize = 32;

/// The pool of the queues past [`MAX_QUEUES`] (no queue may be named so).
const OVERFLOW: &str = "*";

/// A job's new status.
#[derive(Debug, Clone)]
pub struct Change {
    pub id: String,
    pub status: Status,
}

/// The workers of one process.
pub struct Runner {
    store: Arc<Store>,
    root: PathBuf,
    workspace: PathBuf,
    /// Workers per queue.
    workers: usize,
    queues: Mutex<HashMap<String, mpsc::Sender<String>>>,
    /// Running jobs' cancel flags.
    running: Mutex<HashMap<String, Cancel>>,
    changes: tokio::sync::broadcast::Sender<Change>,
    /// Set by [`Runner::stop`]: no job starts any more.
    stopping: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("root", &self.root)
            .field("workers", &self.workers)
            .finish()
    }
}

/// A job's answer as a batch reports it: `{"ok": true, "output"}` (truncated past 12,000
/// bytes) or `{"ok": false, "error"}` (its message cut as long).
pub fn answer(outcome: &Result<Value, Failure>) -> Value {
    match outcome {
        Ok(value) => json!({ "ok": true, "output": batch::truncate(value) }),
        Err(failure) => json!({ "ok": false, "error": batch::error(failure) }),
    }
}

/// `mutex`'s value; a worker that panicked holding it left nothing half-done that matters here.
pub(super) fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Runner {
    pub fn new(store: Arc<Store>, root: PathBuf, workspace: PathBuf, workers: usize) -> Arc<Self> {
        Arc::new(Self {
            store,
            root,
            workspace,
            workers: workers.max(1),
            queues: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            changes: tokio::sync::broadcast::channel(1024).0,
            stopping: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Hear every status change from now on.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    fn tell(&self, id: &str, status: Status) {
        let _ = self.changes.send(Change {
            id: id.to_owned(),
            status,
        });
    }

    /// Queue `job` on its queue's workers (started with the queue's first job).
    pub fn submit(self: &Arc<Self>, job: &Job) {
        let mut queues = locked(&self.queues);
        let pool = if queues.contains_key(&job.queue) || queues.len() < MAX_QUEUES {
            job.queue.as_str()
        } else {
            OVERFLOW
        };
        let sender = queues.entry(pool.to_owned()).or_insert_with(|| {
            let (sender, receiver) = mpsc::channel::<String>();
            let receiver = Arc::new(Mutex::new(receiver));
            for n in 0..self.workers {
                let (runner, receiver) = (Arc::clone(self), Arc::clone(&receiver));
                let _ = std::thread::Builder::new()
                    .name(format!("job-{pool}-{n}"))
                    .spawn(move || {
                        loop {
                            let next = locked(&receiver).recv();
                            let Ok(id) = next else { break };
                            runner.run(&id);
                        }
                    });
            }
            sender
        });
        let _ = sender.send(job.id.clone());
    }

    /// Cancel `id`: a queued job never starts, a running one is told to stop.
    pub fn cancel(&self, id: &str) -> super::Result<Cancelled> {
        let cancelled = self.store.cancel(id)?;
        match cancelled {
            Cancelled::Queued => self.tell(id, Status::Cancelled),
            Cancelled::Running => {
                if let Some(cancel) = locked(&self.running).get(id) {
                    cancel.cancel();
                }
            }
        }
        Ok(cancelled)
    }

    /// Tell every running job to stop (the server is stopping), and wait up to `grace` for
    /// them to record how they ended. A job still running after it is marked failed by the
    /// next [`Store::recover`].
    pub fn stop(&self, grace: std::time::Duration) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for cancel in locked(&self.running).values() {
            cancel.cancel();
        }
        let deadline = std::time::Instant::now() + grace;
        while !locked(&self.running).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Run job `id` when it is still queued.
    fn run(&self, id: &str) {
        if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        match self.store.start(id) {
            Ok(true) => {}
            _ => return,
        }
        self.tell(id, Status::Running);
        let cancel = Cancel::new();
        {
            let mut running = locked(&self.running);
            running.insert(id.to_owned(), cancel.clone());
            // [`Runner::stop`] sets `stopping` before it cancels what it finds here: a job
            // that started meanwhile is cancelled by one of the two.
            if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
                cancel.cancel();
            }
        }
        // A cancel asked for by another process (`toolctl job cancel`) is seen in the store.
        let (done, finished) = mpsc::channel::<()>();
        let watcher = {
            let (store, id, cancel) = (Arc::clone(&self.store), id.to_owned(), cancel.clone());
            std::thread::spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(CANCEL_POLL)
                {
                    if store.cancel_requested(&id).unwrap_or(false) {
                        cancel.cancel();
                        return;
                    }
                }
            })
        };
        let outcome = match self.store.get(id) {
            Ok(job) => self.call(&job, cancel),
            Err(e) => Err(Failure::new(ErrorCode::Internal, e.to_string())),
        };
        drop(done);
        let _ = watcher.join();
        locked(&self.running).remove(id);
        let status = self
            .store
            .finish(id, &answer(&outcome))
            .unwrap_or(Status::Failed);
        self.tell(id, status);
    }

    fn call(&self, job: &Job, cancel: Cancel) -> Result<Value, Failure> {
        let catalog = Catalog::open(&self.root)
            .map_err(|e| Failure::new(ErrorCode::Internal, e.to_string()))?;
        let entry = catalog
            .resolve_tool(&job.name, VersionChoice::Default)
            .map(|(entry, _)| entry)
            .map_err(|e| batch::not_resolved(&job.name, e))?;
        let workspace = job
            .workspace
            .clone()
            .unwrap_or_else(|| self.workspace.clone());
        let options = Options {
            cancel: Some(cancel),
            ..Options::new(&catalog, workspace)
        };
        invoke::call_and_record(&catalog, &entry, job.arguments.clone(), &options)
            .map(|success| success.value)
    }
}

/// Queue `jobs` that were left queued (by a server that stopped) on `runner`.
pub fn resume(runner: &Arc<Runner>) -> super::Result<usize> {
    let queued = runner.store.queued()?;
    for job in &queued {
        runner.submit(job);
    }
    Ok(queued.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::NewJob;

    #[test]
    fn queues_past_the_cap_share_one_pool_and_every_job_runs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("catalog");
        std::fs::create_dir_all(&root).unwrap();
        let store = Arc::new(Store::open(&dir.path().join("state")).unwrap());
        let calls: Vec<NewJob> = (0..MAX_QUEUES + 8)
            .map(|n| NewJob {
                queue: format!("q{n}"),
                call_id: format!("c{n}"),
                name: "now".into(),
                arguments: json!({}),
                workspace: None,
            })
            .collect();
        let jobs = store.create(&calls).unwrap();
        let runner = Runner::new(Arc::clone(&store), root, dir.path().to_path_buf(), 1);
        for job in &jobs {
            runner.submit(job);
        }
        assert_eq!(locked(&runner.queues).len(), MAX_QUEUES + 1);
        assert!(locked(&runner.queues).contains_key(OVERFLOW));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !jobs
            .iter()
            .all(|job| store.get(&job.id).unwrap().status.is_final())
        {
            assert!(std::time::Instant::now() < deadline, "jobs left unrun");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
