//! The stat workers: the stored stamps read a chunk at a time on the main thread and
//! compared with the files' on worker threads, a batch at a time; only what moved comes back.

use super::*;

/// Rows of the index read at a time (one query each) during a check.
pub(super) const CHUNK: usize = 4096;

/// Rows whose stamps a worker compares at a time.
pub(super) const BATCH: usize = 256;

/// Batches read ahead of the workers at most.
pub(super) const QUEUE: usize = 8;

/// Rows of the index whose stamps are compared with the files' (on a worker).
#[derive(Default)]
pub(super) struct Batch {
    pub(super) rows: Vec<Row>,
    /// The rows' paths, stamps and hashes back to back.
    pub(super) text: String,
    /// The rows whose stamps moved (see [`moved`]), with their stamps now.
    pub(super) moved: Vec<(usize, String)>,
    /// Whether the rows are folders to list again when their stamps moved (on the worker,
    /// after the stamp is taken: a change after the listing moves the stamp again).
    pub(super) list: bool,
    /// With `list`: the sub-folders of each moved row's folder, in `moved`'s order.
    pub(super) listings: Vec<HashSet<String>>,
}

/// A row of a [`Batch`]: its id and where its parts end in the text.
pub(super) struct Row {
    pub(super) id: i64,
    pub(super) start: usize,
    pub(super) path: usize,
    pub(super) stamp: usize,
    pub(super) hash: Option<usize>,
}

impl Batch {
    pub(super) fn push(&mut self, id: i64, path: &[&str], stamp: &str, hash: Option<&str>) {
        let start = self.text.len();
        path.iter().for_each(|part| self.text.push_str(part));
        let path = self.text.len();
        self.text.push_str(stamp);
        let stamp = self.text.len();
        let hash = hash.map(|hash| {
            self.text.push_str(hash);
            self.text.len()
        });
        self.rows.push(Row {
            id,
            start,
            path,
            stamp,
            hash,
        });
    }

    pub(super) fn path(&self, i: usize) -> &str {
        &self.text[self.rows[i].start..self.rows[i].path]
    }

    pub(super) fn stamp(&self, i: usize) -> &str {
        &self.text[self.rows[i].path..self.rows[i].stamp]
    }

    pub(super) fn hash(&self, i: usize) -> Option<&str> {
        let row = &self.rows[i];
        row.hash.map(|end| &self.text[row.stamp..end])
    }

    /// Stat every row's path and note the rows whose stamps moved (see [`moved`]).
    pub(super) fn compare(&mut self, stamper: &StampReader) {
        for i in 0..self.rows.len() {
            let (old, facts) = (self.stamp(i), stamper.facts(self.path(i)));
            if is_racy(old) || !stamp_is(facts, stamper.racy_from, old) {
                let mut now = String::new();
                write_stamp(facts, stamper.racy_from, &mut now);
                self.moved.push((i, now));
                if self.list {
                    self.listings
                        .push(subdirs(&stamper.root.join(self.path(i))));
                }
            }
        }
    }

    pub(super) fn clear(&mut self) {
        self.rows.clear();
        self.text.clear();
        self.moved.clear();
        self.listings.clear();
    }
}

/// Read rows of the index with `sql` (parameters: the last rowid read, [`CHUNK`], then
/// `only`), a chunk at a time; `push` copies a row into a batch and gives its rowid. The
/// batches' stamps are compared on the pool while the next rows are read; `handle` gets each
/// batch once compared (in any order), between queries, so rows are never written while a
/// query reads them. It must write only the rows of the batch it gets. Gives the number of
/// rows compared.
pub(super) fn scan(
    tx: &Transaction,
    pool: &mut Pool,
    sql: &str,
    only: &[&str],
    list: bool,
    push: impl Fn(&rusqlite::Row, &mut Batch) -> rusqlite::Result<i64>,
    mut handle: impl FnMut(&Batch) -> Result<(), SyncError>,
) -> Result<usize, SyncError> {
    let mut after = i64::MIN;
    let mut total = 0;
    loop {
        let mut read = 0;
        {
            let mut statement = tx.prepare_cached(sql)?;
            let (from, chunk) = (after, CHUNK as i64);
            let mut values: Vec<&dyn rusqlite::ToSql> = vec![&from, &chunk];
            values.extend(only.iter().map(|v| v as &dyn rusqlite::ToSql));
            let mut rows = statement.query(values.as_slice())?;
            let mut batch = pool.batch();
            batch.list = list;
            while let Some(row) = rows.next()? {
                after = push(row, &mut batch)?;
                read += 1;
                if batch.rows.len() == BATCH {
                    let mut next = pool.batch();
                    next.list = list;
                    pool.submit(std::mem::replace(&mut batch, next));
                }
            }
            pool.submit(batch);
        }
        total += read;
        while let Some(batch) = pool.next(false) {
            handle(&batch)?;
            pool.recycle(batch);
        }
        if read < CHUNK {
            break;
        }
    }
    while let Some(batch) = pool.next(true) {
        handle(&batch)?;
        pool.recycle(batch);
    }
    Ok(total)
}

/// Stat workers that live for a whole check, and the main thread with them. The main thread
/// reads rows and hands them over a batch at a time; the workers stat and compare while it reads
/// on. When they are behind (the queue is full), the main thread compares the batch itself, and
/// it takes queued batches itself while it waits for them: so there is one worker fewer than
/// cores, and every core stays busy without more threads than cores. A few rows (less than a
/// batch, before any worker started) are compared on the main thread alone. Only the main
/// thread writes to the index.
///
/// Not rayon (a dependency, used elsewhere): this is a pipeline, not a data-parallel loop. The
/// rows arrive a chunk at a time from a SQLite cursor on the main thread, which must go on
/// reading and must be the only one to write; the pool starts no thread at all for a catalog
/// smaller than one batch (most commands on small catalogs), applies back-pressure (a full
/// queue makes the main thread compare the batch itself), and reuses batches. A `par_iter`
/// needs the rows up front (one more copy of every stamp, the read no longer overlapped with
/// the stats) and rayon's global pool keeps a thread per core alive for the process.
/// Measured against a rayon version (each chunk's batches compared with `par_iter_mut`, the
/// rest unchanged) with `python3 bench/sync.py` at 100,000 tools (release, 2 cores, load 2.6,
/// median of 3): a rebuild 11.4 s with these threads, 11.35 s with rayon but 12.4 s of CPU
/// against 11.2; a change check that finds nothing 0.39 s against 0.45 s. No gain to pay
/// for the change.
pub(super) struct Pool<'scope, 'env> {
    pub(super) scope: &'scope std::thread::Scope<'scope, 'env>,
    pub(super) stamper: &'env StampReader<'env>,
    pub(super) jobs: Option<mpsc::SyncSender<Batch>>,
    pub(super) queue: Option<Arc<Mutex<mpsc::Receiver<Batch>>>>,
    pub(super) done: Option<mpsc::Receiver<Batch>>,
    /// Batches handed to the workers and not yet taken back.
    pub(super) in_flight: usize,
    /// Batches compared on this thread.
    pub(super) here: Vec<Batch>,
    /// Batches to use again.
    pub(super) spare: Vec<Batch>,
}

impl<'scope, 'env> Pool<'scope, 'env> {
    pub(super) fn new(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        stamper: &'env StampReader<'env>,
    ) -> Self {
        Self {
            scope,
            stamper,
            jobs: None,
            queue: None,
            done: None,
            in_flight: 0,
            here: Vec::new(),
            spare: Vec::new(),
        }
    }

    pub(super) fn batch(&mut self) -> Batch {
        self.spare.pop().unwrap_or_default()
    }

    pub(super) fn recycle(&mut self, mut batch: Batch) {
        batch.clear();
        self.spare.push(batch);
    }

    pub(super) fn submit(&mut self, mut batch: Batch) {
        if batch.rows.is_empty() {
            return self.recycle(batch);
        }
        if self.jobs.is_none() && batch.rows.len() == BATCH {
            self.start();
        }
        if let Some(jobs) = &self.jobs {
            match jobs.try_send(batch) {
                Ok(()) => {
                    self.in_flight += 1;
                    return;
                }
                // Full: the workers are behind. Disconnected: no worker left (one panicked;
                // the scope reports it).
                Err(mpsc::TrySendError::Full(back) | mpsc::TrySendError::Disconnected(back)) => {
                    batch = back;
                }
            }
        }
        self.compare_here(batch);
    }

    pub(super) fn compare_here(&mut self, mut batch: Batch) {
        batch.compare(self.stamper);
        self.here.push(batch);
    }

    /// Start the workers: one per core but one (up to 7); none on a single core.
    pub(super) fn start(&mut self) {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        if threads < 2 {
            return;
        }
        let (jobs, queue) = mpsc::sync_channel::<Batch>(QUEUE);
        let (done_tx, done) = mpsc::channel();
        let queue = Arc::new(Mutex::new(queue));
        for _ in 1..threads {
            let (queue, done_tx, stamper) = (Arc::clone(&queue), done_tx.clone(), self.stamper);
            self.scope.spawn(move || {
                // One worker at a time waits for the next batch.
                while let Ok(Ok(mut batch)) = queue.lock().map(|q| q.recv()) {
                    batch.compare(stamper);
                    if done_tx.send(batch).is_err() {
                        break;
                    }
                }
            });
        }
        self.jobs = Some(jobs);
        self.queue = Some(queue);
        self.done = Some(done);
    }

    /// A compared batch; with `wait`, waits for one while any is in flight, comparing queued
    /// batches meanwhile.
    pub(super) fn next(&mut self, wait: bool) -> Option<Batch> {
        if let Some(batch) = self.here.pop() {
            return Some(batch);
        }
        if self.in_flight == 0 {
            return None;
        }
        if wait {
            // A worker waiting for work holds the lock: then nothing is queued.
            let queued = self
                .queue
                .as_ref()
                .and_then(|queue| queue.try_lock().ok()?.try_recv().ok());
            if let Some(batch) = queued {
                self.in_flight -= 1;
                self.compare_here(batch);
                return self.here.pop();
            }
        }
        let done = self.done.as_ref()?;
        let batch = if wait {
            // An error: no worker left (one panicked; the scope reports it).
            done.recv().ok()
        } else {
            done.try_recv().ok()
        };
        match batch {
            Some(_) => self.in_flight -= 1,
            None if wait => self.in_flight = 0,
            None => {}
        }
        batch
    }
}

/// A slug folder changed: versions were added or removed (`present` now); make the rows match.
pub(super) fn list_versions(
    tx: &Transaction,
    present: &HashSet<String>,
    dir: &str,
    slug: &str,
    slug_path: &str,
    slug_stamp: &str,
    report: &mut SyncReport,
) -> rusqlite::Result<()> {
    let known: Vec<String> = tx
        .prepare_cached("SELECT path FROM tool WHERE bundle_dir = ?1 AND slug_dir = ?2")?
        .query_map([dir, slug], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let wanted: HashSet<String> = present
        .iter()
        .map(|version| format!("{slug_path}/{version}/{TOOL_FILE}"))
        .collect();
    for path in known.iter().filter(|p| !wanted.contains(*p)) {
        report.removed += delete_tools_where(tx, "path = ?1", &[path])?;
    }
    for path in wanted.iter().filter(|p| !known.contains(*p)) {
        execute_cached(
            tx,
            "INSERT INTO tool (path, bundle_dir, slug_dir) VALUES (?1, ?2, ?3)",
            params![path, dir, slug],
        )?;
    }
    execute_cached(
        tx,
        "UPDATE slug_dir SET stamp = ?3 WHERE bundle_dir = ?1 AND slug = ?2",
        [dir, slug, slug_stamp],
    )?;
    Ok(())
}
