//! The loader threads: the tool files that moved, read and parsed a batch at a time while
//! the main thread writes what the batch before held.

use super::*;

/// A tool file to read.
pub(super) struct Pending {
    pub(super) id: i64,
    pub(super) dir: String,
    pub(super) slug: String,
    pub(super) version: String,
    /// Its stamp now.
    pub(super) now: String,
    /// The SHA-256 of the text indexed (none when the row must be read again whatever its
    /// text: its bundle or the hosts changed): the text is compared before it is parsed again.
    pub(super) hash: Option<String>,
}

/// What became of a pending tool file.
pub(super) enum Loaded {
    /// No tool: the file is gone, or its bundle is (its row says why).
    Gone,
    /// The same text as indexed.
    Same,
    /// Read again; with the text's hash.
    Read(Box<Result<Option<Record>, Problem>>, Option<String>),
}

/// How many tool files are read (on loader threads) before their rows are written.
pub(super) const LOAD_BATCH: usize = 1024;

/// Reads changed tool files on loader threads, a batch at a time, while the main thread writes
/// what the batch before held: the parse of one batch overlaps the writes of the last.
pub(super) struct Loader<'scope, 'env> {
    pub(super) scope: &'scope std::thread::Scope<'scope, 'env>,
    pub(super) catalog: &'env Catalog,
    /// Each bundle's `bundle.json` as read once, by folder (`None`: no usable bundle).
    pub(super) bundles: HashMap<String, Option<Arc<BundleEntry>>>,
    /// Tool files waiting for a batch to fill.
    pub(super) pending: Vec<Pending>,
    /// The batch being read, a part per thread.
    pub(super) reading: Vec<std::thread::ScopedJoinHandle<'scope, Vec<(Pending, Loaded)>>>,
    /// Tool files in `reading`.
    pub(super) in_reading: usize,
}

impl<'scope, 'env> Loader<'scope, 'env> {
    pub(super) fn new(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        catalog: &'env Catalog,
    ) -> Self {
        Self {
            scope,
            catalog,
            bundles: HashMap::new(),
            pending: Vec::new(),
            reading: Vec::new(),
            in_reading: 0,
        }
    }

    /// Tool files taken and not yet written.
    pub(super) fn unwritten(&self) -> usize {
        self.pending.len() + self.in_reading
    }

    pub(super) fn push(
        &mut self,
        tx: &Transaction,
        pending: Pending,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        self.pending.push(pending);
        if self.pending.len() >= LOAD_BATCH {
            self.flush(tx, report)?;
        }
        Ok(())
    }

    /// Start reading the pending files, then write the batch read before.
    pub(super) fn flush(
        &mut self,
        tx: &Transaction,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        let before = std::mem::take(&mut self.reading);
        self.start();
        self.write(tx, before, report)
    }

    /// Read and write everything taken.
    pub(super) fn finish(
        mut self,
        tx: &Transaction,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        self.flush(tx, report)?;
        let last = std::mem::take(&mut self.reading);
        self.write(tx, last, report)
    }

    pub(super) fn start(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.in_reading = pending.len();
        if pending.is_empty() {
            return;
        }
        let mut needed = HashMap::new();
        for p in &pending {
            if !self.bundles.contains_key(&p.dir) {
                let loaded = self
                    .catalog
                    .load_bundle(&self.catalog.bundles_dir().join(&p.dir), &p.dir)
                    .ok()
                    .flatten()
                    .map(Arc::new);
                self.bundles.insert(p.dir.clone(), loaded);
            }
            if let Some(Some(bundle)) = self.bundles.get(&p.dir) {
                needed
                    .entry(p.dir.clone())
                    .or_insert_with(|| Arc::clone(bundle));
            }
        }
        let needed = Arc::new(needed);
        // The main thread writes meanwhile: one core fewer for reading.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(2, 8)
            - 1;
        let part = pending.len().div_ceil(threads);
        let mut pending = pending.into_iter();
        loop {
            let files: Vec<Pending> = pending.by_ref().take(part).collect();
            if files.is_empty() {
                break;
            }
            let (catalog, bundles) = (self.catalog, Arc::clone(&needed));
            self.reading.push(self.scope.spawn(move || {
                files
                    .into_iter()
                    .map(|p| {
                        let loaded = load(catalog, &bundles, &p);
                        (p, loaded)
                    })
                    .collect()
            }));
        }
    }

    pub(super) fn write(
        &self,
        tx: &Transaction,
        reading: Vec<std::thread::ScopedJoinHandle<'scope, Vec<(Pending, Loaded)>>>,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        for part in reading {
            let loaded = part
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (p, loaded) in loaded {
                let (id, now) = (p.id, p.now.as_str());
                match loaded {
                    Loaded::Gone => clear_tool(tx, id, now, None, None)?,
                    Loaded::Same => {
                        execute_cached(
                            tx,
                            "UPDATE tool SET stamp = ?2 WHERE id = ?1 AND stamp != ?2",
                            params![id, now],
                        )?;
                    }
                    Loaded::Read(result, hash) => {
                        report.read += 1;
                        let hash = hash.as_deref();
                        match *result {
                            Ok(Some(record)) => put_tool(tx, id, &record, now, hash)?,
                            Ok(None) => clear_tool(tx, id, now, None, hash)?,
                            Err(problem) => clear_tool(tx, id, now, Some(&problem.message), hash)?,
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Read one changed tool file (on a loader thread).
pub(super) fn load(
    catalog: &Catalog,
    bundles: &HashMap<String, Arc<BundleEntry>>,
    p: &Pending,
) -> Loaded {
    let Some(bundle) = bundles.get(&p.dir) else {
        return Loaded::Gone;
    };
    if p.now.is_empty() {
        return Loaded::Gone;
    }
    let path = catalog
        .bundles_dir()
        .join(&p.dir)
        .join(TOOLS_DIR)
        .join(&p.slug)
        .join(&p.version)
        .join(TOOL_FILE);
    let text = match read_tool_text(&path, catalog.root()) {
        Ok(Some(text)) => text,
        Ok(None) => return Loaded::Read(Box::new(Ok(None)), None),
        Err(problem) => return Loaded::Read(Box::new(Err(problem)), None),
    };
    // The same text as indexed (a file touched, checked out again, or written with the same
    // bytes): nothing to parse.
    let hash = content_hash(&text);
    if p.hash.as_ref() == Some(&hash) {
        return Loaded::Same;
    }
    let record = catalog
        .tool_from_text(bundle, &p.slug, &p.version, &path, &text, false)
        .map(|entry| Some(Record::new(&entry)));
    Loaded::Read(Box::new(record), Some(hash))
}
