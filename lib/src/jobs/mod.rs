//! Jobs: tool calls that run in the background, kept in `.toolctl/jobs.db` (SQLite, as the
//! other state databases) so that a caller can ask about them later, from another process.
//!
//! A job is one call: `queued` → `running` → `succeeded` | `failed` | `cancelled`. Its result
//! is what a batch answers for the call (`{"ok": true, "output": …}` or `{"ok": false,
//! "error": …}`, an output longer than 12,000 bytes truncated and an error message cut as
//! [`crate::invoke::batch`] does), with the times it was queued, started and finished.
//!
//! A running job names the process that runs it. A job found `running` whose process is gone
//! (killed, or the machine restarted) is marked `failed` with the reason when a store is
//! opened for work ([`Store::recover`]): never silently lost, never left running forever.
//! Finished jobs older than `serve.jobRetention` are removed by [`Store::prune`].

pub mod enqueue;
pub mod runner;
pub mod worker;

use crate::base::state_db;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The file under `.toolctl/` that holds the jobs.
pub const JOBS_DB: &str = "jobs.db";

/// How long an operation waits for another process's write.
const BUSY: Duration = Duration::from_secs(5);

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The status named `text`.
    pub fn parse_name(text: &str) -> Option<Self> {
        Some(match text {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "succeeded" => Self::Succeeded,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }

    /// Whether the job is over (nothing will change it again).
    pub fn is_final(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }
}

/// One job, as `GET /v1/jobs/{id}` and `toolctl job get` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub id: String,
    pub status: Status,
    /// The queue it waits in.
    pub queue: String,
    /// The call: its `call_id`, the tool it runs (`bundle/slug@version`), its arguments as
    /// sent.
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    /// RFC 3339 UTC times.
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The call's answer once it is over: `{"ok": true, "output"}` or `{"ok": false, "error"}`.
    pub result: Option<Value>,
    /// The folder its file tools work in (none: the worker's).
    #[serde(skip)]
    pub workspace: Option<PathBuf>,
}

/// A call to be queued as a job.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub queue: String,
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    /// The folder its file tools work in (none: the worker's).
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the job store {}: {source}", .path.display())]
    Db {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("no job has the id '{0}'")]
    NotFound(String),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("job {id} is already {}: only a queued or running job can be cancelled", .status.as_str())]
    Finished { id: String, status: Status },
}

pub type Result<T> = std::result::Result<T, Error>;

/// What a cancel did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// The job had not started: it never will.
    Queued,
    /// The job was running: its process was asked to stop it.
    Running,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    queue TEXT NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    result TEXT,
    worker_pid INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL,
    workspace TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, queue, seq);
";

/// The jobs of one catalog.
pub struct Store {
    path: PathBuf,
    conn: Mutex<rusqlite::Connection>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

fn now() -> String {
    crate::base::time::now().to_string()
}

impl Store {
    /// The store of the catalog whose state folder is `state_dir` (made when missing).
    pub fn open(state_dir: &Path) -> Result<Self> {
        let path = state_dir.join(JOBS_DB);
        let db = |source| Error::Db {
            path: path.clone(),
            source,
        };
        let _ = std::fs::create_dir_all(state_dir);
        let conn = state_db::open(&path, true, BUSY, "NORMAL").map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        // A store made before jobs knew their workspace.
        let has_workspace = conn
            .prepare("SELECT 1 FROM pragma_table_info('jobs') WHERE name = 'workspace'")
            .and_then(|mut statement| statement.exists([]))
            .map_err(db)?;
        if !has_workspace {
            conn.execute_batch("ALTER TABLE jobs ADD COLUMN workspace TEXT")
                .map_err(db)?;
        }
        Ok(Self {
            path,
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut conn = runner::locked(&self.conn);
        work(&mut conn).map_err(|source| Error::Db {
            path: self.path.clone(),
            source,
        })
    }

    /// Queue `calls` as jobs, in one transaction (all of them or none), in order. The
    /// transaction takes the write lock before it reads the last `seq`: a read transaction
    /// that another worker's write overtakes could not be upgraded (SQLite answers "database
    /// is locked" at once, without waiting).
    pub fn create(&self, calls: &[NewJob]) -> Result<Vec<Job>> {
        let created = now();
        self.with(|conn| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let seq: i64 =
                tx.query_row("SELECT COALESCE(MAX(seq), 0) FROM jobs", [], |r| r.get(0))?;
            let mut jobs = Vec::with_capacity(calls.len());
            for (n, call) in calls.iter().enumerate() {
                let id = uuid::Uuid::new_v4().to_string();
                tx.execute(
                    "INSERT INTO jobs (id, status, queue, call_id, name, arguments, created_at, seq, workspace)
                     VALUES (?1, 'queued', ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    rusqlite::params![
                        id,
                        call.queue,
                        call.call_id,
                        call.name,
                        call.arguments.to_string(),
                        created,
                        seq + 1 + n as i64,
                        call.workspace.as_ref().map(|w| w.to_string_lossy().into_owned()),
                    ],
                )?;
                jobs.push(Job {
                    id,
                    status: Status::Queued,
                    queue: call.queue.clone(),
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    created_at: created.clone(),
                    started_at: None,
                    finished_at: None,
                    result: None,
                    workspace: call.workspace.clone(),
                });
            }
            tx.commit()?;
            Ok(jobs)
        })
    }

    /// Mark `id` running in this process; `false` when it is no longer queued (cancelled, or
    /// another worker took it).
    pub fn start(&self, id: &str) -> Result<bool> {
        let pid = std::process::id();
        self.with(|conn| {
            let changed = conn.execute(
                "UPDATE jobs SET status = 'running', started_at = ?2, worker_pid = ?3
                 WHERE id = ?1 AND status = 'queued'",
                rusqlite::params![id, now(), pid],
            )?;
            Ok(changed == 1)
        })
    }

    /// Record the end of running job `id`: `result` is the call's answer. A job whose cancel
    /// was asked for while it ran ends `cancelled`, with the result it had.
    pub fn finish(&self, id: &str, result: &Value) -> Result<Status> {
        let ok = result.get("ok").and_then(Value::as_bool) == Some(true);
        self.with(|conn| {
            let cancel: bool = conn
                .query_row(
                    "SELECT cancel_requested FROM jobs WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .unwrap_or(false);
            let status = match (cancel, ok) {
                (true, _) => Status::Cancelled,
                (false, true) => Status::Succeeded,
                (false, false) => Status::Failed,
            };
            conn.execute(
                "UPDATE jobs SET status = ?2, finished_at = ?3, result = ?4
                 WHERE id = ?1 AND status = 'running'",
                rusqlite::params![id, status.as_str(), now(), result.to_string()],
            )?;
            Ok(status)
        })
    }

    /// Cancel `id`: a queued job never starts; a running one is asked to stop (its worker
    /// sees [`Store::cancel_requested`]). A finished job cannot be cancelled.
    pub fn cancel(&self, id: &str) -> Result<Cancelled> {
        let job = self.get(id)?;
        let reason = serde_json::json!({
            "ok": false,
            "error": { "code": "CANCELLED", "message": "the job was cancelled before it started" },
        });
        self.with(|conn| {
            let queued = conn.execute(
                "UPDATE jobs SET status = 'cancelled', finished_at = ?2, result = ?3
                 WHERE id = ?1 AND status = 'queued'",
                rusqlite::params![id, now(), reason.to_string()],
            )?;
            if queued == 1 {
                return Ok(Some(Cancelled::Queued));
            }
            let running = conn.execute(
                "UPDATE jobs SET cancel_requested = 1 WHERE id = ?1 AND status = 'running'",
                [id],
            )?;
            Ok((running == 1).then_some(Cancelled::Running))
        })?
        .ok_or_else(|| Error::Finished {
            id: id.to_owned(),
            status: self.get(id).map_or(job.status, |j| j.status),
        })
    }

    /// Whether a cancel of `id` was asked for.
    pub fn cancel_requested(&self, id: &str) -> Result<bool> {
        self.with(|conn| {
            conn.query_row(
                "SELECT cancel_requested FROM jobs WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
        })
    }

    /// The job `id`.
    pub fn get(&self, id: &str) -> Result<Job> {
        self.with(|conn| {
            use rusqlite::OptionalExtension;
            conn.query_row(
                &format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1"),
                [id],
                job,
            )
            .optional()
        })?
        .ok_or_else(|| Error::NotFound(id.to_owned()))
    }

    /// The newest `limit` jobs, newest first, of `status` when given.
    pub fn list(&self, status: Option<Status>, limit: usize) -> Result<Vec<Job>> {
        self.with(|conn| {
            let mut statement = conn.prepare(&format!(
                "SELECT {COLUMNS} FROM jobs WHERE ?1 IS NULL OR status = ?1 ORDER BY seq DESC LIMIT ?2"
            ))?;
            let rows = statement.query_map(
                rusqlite::params![status.map(Status::as_str), limit as i64],
                job,
            )?;
            rows.collect()
        })
    }

    /// The queued jobs, oldest first.
    pub fn queued(&self) -> Result<Vec<Job>> {
        self.with(|conn| {
            let mut statement = conn.prepare(&format!(
                "SELECT {COLUMNS} FROM jobs WHERE status = 'queued' ORDER BY seq"
            ))?;
            let rows = statement.query_map([], job)?;
            rows.collect()
        })
    }

    /// Mark `failed` every running job whose process is gone; returns their ids.
    pub fn recover(&self) -> Result<Vec<String>> {
        let running: Vec<(String, Option<u32>)> = self.with(|conn| {
            let mut statement =
                conn.prepare("SELECT id, worker_pid FROM jobs WHERE status = 'running'")?;
            let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })?;
        let mut lost = Vec::new();
        for (id, pid) in running {
            if pid.is_some_and(process_alive) {
                continue;
            }
            let result = serde_json::json!({
                "ok": false,
                "error": {
                    "code": "WORKER_LOST",
                    "message": format!(
                        "the process running this job (pid {}) stopped before the job finished; it may have run in part",
                        pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
                    ),
                },
            });
            let changed = self.with(|conn| {
                conn.execute(
                    "UPDATE jobs SET status = 'failed', finished_at = ?2, result = ?3
                     WHERE id = ?1 AND status = 'running'",
                    rusqlite::params![id, now(), result.to_string()],
                )
            })?;
            if changed == 1 {
                lost.push(id);
            }
        }
        Ok(lost)
    }

    /// Remove the jobs that finished more than `age` ago; returns how many.
    pub fn prune(&self, age: Duration) -> Result<usize> {
        let cutoff = crate::base::time::now()
            .checked_sub(jiff::SignedDuration::try_from(age).unwrap_or(jiff::SignedDuration::MAX))
            .unwrap_or(jiff::Timestamp::MIN)
            .to_string();
        self.with(|conn| {
            conn.execute(
                "DELETE FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?1",
                [cutoff],
            )
        })
    }
}

const COLUMNS: &str = "id, status, queue, call_id, name, arguments, created_at, started_at, finished_at, result, workspace";

fn job(row: &rusqlite::Row) -> rusqlite::Result<Job> {
    let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
    Ok(Job {
        id: row.get(0)?,
        status: Status::parse_name(&row.get::<_, String>(1)?).unwrap_or(Status::Failed),
        queue: row.get(2)?,
        call_id: row.get(3)?,
        name: row.get(4)?,
        arguments: json(row.get(5)?).unwrap_or(Value::Null),
        created_at: row.get(6)?,
        started_at: row.get(7)?,
        finished_at: row.get(8)?,
        result: json(row.get(9)?),
        workspace: row.get::<_, Option<String>>(10)?.map(PathBuf::from),
    })
}

/// Whether process `pid` still runs (on Unix, signal 0 reaches it and, on Linux, it is not a
/// zombie: a killed worker whose parent has not reaped it yet runs nothing; elsewhere
/// assumed).
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        if pid == std::process::id() {
            return true;
        }
        #[cfg(target_os = "linux")]
        if let Ok(stat) =
            crate::base::capped::read_text(Path::new(&format!("/proc/{pid}/stat")), None)
            && stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
        {
            return false;
        }
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        match rustix::process::test_kill_process(pid) {
            Ok(()) => true,
            // It exists, but is another user's.
            Err(e) => e == rustix::io::Errno::PERM,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str) -> NewJob {
        NewJob {
            queue: "default".into(),
            call_id: format!("c-{name}"),
            name: name.into(),
            arguments: json!({ "a": 1 }),
            workspace: None,
        }
    }

    #[test]
    fn a_job_goes_from_queued_to_running_to_succeeded_and_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let jobs = store.create(&[call("now"), call("echo")]).unwrap();
        assert_eq!(store.queued().unwrap().len(), 2);
        assert!(store.start(&jobs[0].id).unwrap());
        assert!(!store.start(&jobs[0].id).unwrap(), "taken twice");
        let status = store
            .finish(&jobs[0].id, &json!({ "ok": true, "output": 1 }))
            .unwrap();
        assert_eq!(status, Status::Succeeded);
        let read = store.get(&jobs[0].id).unwrap();
        assert_eq!(read.status, Status::Succeeded);
        assert_eq!(read.result, Some(json!({ "ok": true, "output": 1 })));
        assert_eq!(read.arguments, json!({ "a": 1 }));
        assert!(read.started_at.is_some() && read.finished_at.is_some());
        let newest = store.list(None, 10).unwrap();
        assert_eq!(newest[0].id, jobs[1].id);
        assert_eq!(store.list(Some(Status::Succeeded), 10).unwrap().len(), 1);
    }

    #[test]
    fn jobs_are_queued_while_another_worker_holds_the_write_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let other = Store::open(dir.path()).unwrap();
        let (locked, wait) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            other
                .with(|conn| {
                    let tx =
                        conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    tx.execute("UPDATE jobs SET queue = queue", [])?;
                    locked.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(300));
                    tx.commit()
                })
                .unwrap();
        });
        wait.recv().unwrap();
        let jobs = store.create(&[call("a"), call("b")]).unwrap();
        holder.join().unwrap();
        assert_eq!(store.queued().unwrap().len(), jobs.len());
    }

    #[test]
    fn a_queued_job_cancelled_never_starts_and_a_finished_one_cannot_be_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let jobs = store.create(&[call("a"), call("b")]).unwrap();
        assert_eq!(store.cancel(&jobs[0].id).unwrap(), Cancelled::Queued);
        assert!(!store.start(&jobs[0].id).unwrap());
        assert!(store.start(&jobs[1].id).unwrap());
        assert_eq!(store.cancel(&jobs[1].id).unwrap(), Cancelled::Running);
        assert!(store.cancel_requested(&jobs[1].id).unwrap());
        let status = store.finish(&jobs[1].id, &json!({ "ok": true })).unwrap();
        assert_eq!(status, Status::Cancelled);
        assert!(matches!(
            store.cancel(&jobs[1].id),
            Err(Error::Finished {
                status: Status::Cancelled,
                ..
            })
        ));
        assert!(matches!(store.get("nope"), Err(Error::NotFound(_))));
    }

    #[test]
    fn a_running_job_whose_process_is_gone_is_marked_failed_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let jobs = store.create(&[call("a"), call("b")]).unwrap();
        assert!(store.start(&jobs[0].id).unwrap());
        assert!(store.start(&jobs[1].id).unwrap());
        // The first as if a process long gone had taken it.
        store
            .with(|conn| {
                conn.execute(
                    "UPDATE jobs SET worker_pid = ?2 WHERE id = ?1",
                    rusqlite::params![jobs[0].id, i32::MAX],
                )
            })
            .unwrap();
        assert_eq!(store.recover().unwrap(), vec![jobs[0].id.clone()]);
        let lost = store.get(&jobs[0].id).unwrap();
        assert_eq!(lost.status, Status::Failed);
        assert_eq!(lost.result.unwrap()["error"]["code"], "WORKER_LOST");
        assert_eq!(store.get(&jobs[1].id).unwrap().status, Status::Running);
    }

    #[test]
    fn prune_removes_only_jobs_finished_before_the_age() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let jobs = store.create(&[call("a"), call("b"), call("c")]).unwrap();
        for job in &jobs[..2] {
            store.start(&job.id).unwrap();
            store.finish(&job.id, &json!({ "ok": true })).unwrap();
        }
        store
            .with(|conn| {
                conn.execute(
                    "UPDATE jobs SET finished_at = '2020-01-01T00:00:00Z' WHERE id = ?1",
                    [&jobs[0].id],
                )
            })
            .unwrap();
        assert_eq!(store.prune(Duration::from_secs(3600)).unwrap(), 1);
        assert!(store.get(&jobs[0].id).is_err());
        assert!(store.get(&jobs[1].id).is_ok());
        assert!(
            store.get(&jobs[2].id).is_ok(),
            "a queued job is never pruned"
        );
    }
}
