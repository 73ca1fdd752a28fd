//! Starting index watchers (`toolctl index watch` in the background): after a command whose
//! index check had to walk the catalog, and for `index watch --detach`. The library never
//! starts a process for this; it notes the walk ([`CheckNote`](toolctl_lib::catalog::CheckNote)) and
//! says whether a watcher may run ([`watch::prepare`]).

use std::path::Path;
use std::time::Duration;
use toolctl_lib::catalog::Catalog;
use toolctl_lib::catalog::config::WatchMode as Mode;
use toolctl_lib::index::watch::{
    AUTO_MIN_ENTRIES, RETRY_AFTER, Status, failure_file, is_local, last_failure, mode, prepare,
    status, too_few_watches, watch_limit,
};

/// Start `program index watch` for the catalog in the background, in its own process group
/// (a Ctrl-C in the terminal does not stop it) and with no terminal output.
fn spawn(program: &Path, root: &Path) -> std::io::Result<std::process::Child> {
    use std::process::{Command, Stdio};
    let mut command = Command::new(program);
    // An absolute root, and the catalog as the working folder: the watcher holds no other
    // folder busy.
    let root = std::path::absolute(root)?;
    command
        .arg("--catalog")
        .arg(&root)
        .args(["--quiet", "index", "watch"])
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn()
}

/// How long `index watch --detach` waits for a new watcher to answer: watching a 100,000-tool
/// catalog (~190,000 folders) takes the kernel tens of seconds.
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// Start a watcher in the background and wait until it answers.
pub fn detach(program: &Path, root: &Path) -> Result<Status, String> {
    if let Some(running) = status(root) {
        return Ok(running);
    }
    // What the watcher checks first, checked here: a watcher that fails it (a
    // `.toolctl/watch` linking out of the catalog) cannot leave its reason in that folder.
    prepare(root)?;
    // A reason left by an earlier watcher is not this one's.
    let _ = toolctl_lib::catalog::store::remove_file(&failure_file(root));
    let mut child =
        spawn(program, root).map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    let started = std::time::Instant::now();
    loop {
        if let Some(running) = status(root) {
            // Not waited for: it outlives this command.
            return Ok(running);
        }
        if let Ok(Some(_)) = child.try_wait() {
            return Err(last_failure(root)
                .unwrap_or_else(|| "the watcher stopped before it answered".to_owned()));
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(format!(
                "the watcher did not answer within {} s",
                START_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What [`maybe_start`] did.
#[derive(Debug)]
pub enum Started {
    /// Nothing: no watcher is wanted, or one failed lately.
    No,
    /// A watcher, with its process ID, for the CLI to say so.
    Watcher(u32),
    /// None, because the catalog needs more inotify watches than the system allows: what to
    /// tell the user (once an hour: the reason is left as the last failure).
    TooFewWatches(String),
}

/// After a check that no watcher answered: start one in the background if the mode says so.
/// In `auto` mode only for a person at a terminal (`interactive`: stdin and stderr are
/// terminals), never for a script, cron job or CI run, whose process would outlive its use
/// unseen.
pub fn maybe_start(catalog: &Catalog, entries_checked: usize, interactive: bool) -> Started {
    match start_if_wanted(catalog, entries_checked, interactive) {
        Err(advice) => Started::TooFewWatches(advice),
        Ok(Some(pid)) => Started::Watcher(pid),
        Ok(None) => Started::No,
    }
}

fn start_if_wanted(
    catalog: &Catalog,
    entries_checked: usize,
    interactive: bool,
) -> Result<Option<u32>, String> {
    let root = catalog.root();
    let wanted = match mode(catalog) {
        Mode::Never => false,
        Mode::Always => true,
        Mode::Auto => {
            interactive
                && entries_checked >= AUTO_MIN_ENTRIES
                && std::env::var_os("CI").is_none()
                && is_local(root)
        }
    };
    if !wanted {
        return Ok(None);
    }
    let failed_lately = || {
        std::fs::metadata(failure_file(root))
            .and_then(|m| m.modified())
            .is_ok_and(|at| at.elapsed().is_ok_and(|age| age < RETRY_AFTER))
    };
    // `prepare`, not just `why_not`: a watcher that cannot make its folder fails without
    // leaving the failure file that keeps commands from starting one again and again.
    if failed_lately() || prepare(root).is_err() {
        return Ok(None);
    }
    // Each folder checked is about one watch: a catalog past the limit cannot be watched.
    if let Some(advice) = watch_limit().and_then(|limit| too_few_watches(entries_checked, limit)) {
        let _ = toolctl_lib::catalog::store::write_atomic(&failure_file(root), advice.as_bytes());
        return Err(advice);
    }
    // A failure to start costs nothing but speed: the next command walks again. Not waited
    // for: it outlives this command.
    let Ok(program) = std::env::current_exe() else {
        return Ok(None);
    };
    Ok(spawn(&program, root).ok().map(|child| child.id()))
}

/// Why a watcher of `catalog` cannot start here, if the system's inotify limit cannot hold
/// its folders (as its index counts them, without a check: no walk before the watcher's
/// own): said before starting one, with how to raise it. Without an index toolctl trusts,
/// the watcher's own failure says it.
pub fn refuse_too_few_watches(catalog: &Catalog) -> Result<(), String> {
    let root = catalog.root();
    let (Some(limit), None) = (watch_limit(), status(root)) else {
        return Ok(());
    };
    let folders = toolctl_lib::index::Index::open_unchecked(catalog).and_then(|i| i.folder_count());
    match folders.and_then(|folders| too_few_watches(folders, limit)) {
        Some(advice) => Err(format!("cannot watch {}: {advice}", root.display())),
        None => Ok(()),
    }
}
