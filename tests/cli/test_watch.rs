//! The index watcher (README "The index watcher"): with `toolctl index watch` running, the change
//! check compares only the paths the watcher saw change, and every answer stays what a full
//! check gives. Each hand change here is followed at once by a command (no sleep): the watcher's
//! cookie must make it see the change before it answers. The oracle for "what a full check
//! gives" is a copy of the catalog, listed with no watcher and a fresh index.

use crate::common::{TestEnv, copy_tree, read_json, write_file};
use crate::test_index::{found, status};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Start the catalog's watcher in the background; its pid.
#[track_caller]
fn start(env: &TestEnv) -> u32 {
    start_lagging(env, 0)
}

/// Start a watcher that waits `lag_ms` before it handles each batch of events.
#[track_caller]
fn start_lagging(env: &TestEnv, lag_ms: u64) -> u32 {
    let mut command = env.command(&["--json", "index", "watch", "--detach"]);
    command.env("TOOLCTL_WATCH_TEST_LAG_MS", lag_ms.to_string());
    let started = crate::common::Run::of(command, None).success().json();
    let pid = started["watcher"]["pid"].as_u64().expect("a pid") as u32;
    assert!(alive(pid));
    pid
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

/// Wait up to five seconds for `done`.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Stops the watcher when a test ends, passed or failed (it would also exit on its own once the
/// temporary catalog is gone).
struct Stop<'a>(&'a TestEnv);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        let _ = self.0.run(&["index", "watch", "--stop"]);
    }
}

/// A watcher stopped with SIGSTOP (alive, answering nothing) until dropped, passed or failed.
struct Paused(u32);

impl Paused {
    fn new(pid: u32) -> Self {
        assert!(signal(pid, "-STOP"));
        Self(pid)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal(self.0, "-CONT");
    }
}

/// Send `kill`'s signal `name` to `pid` (a watcher this test started).
fn signal(pid: u32, name: &str) -> bool {
    std::process::Command::new("kill")
        .args([name, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// The tools and bundles as a command shows them, with the catalog's path left out.
fn snapshot(env: &TestEnv) -> String {
    let tools = env.json(&["tool", "list", "--include-disabled", "--page-size", "1000"]);
    let bundles = env.json(&["bundle", "list", "--include-disabled"]);
    let text = serde_json::to_string_pretty(&(tools, bundles)).unwrap();
    text.replace(env.catalog().to_str().unwrap(), "[CATALOG]")
}

/// What a full check of the same files gives: a copy without `.toolctl`, listed afresh.
fn truth(env: &TestEnv) -> String {
    let copy = TestEnv::uninit();
    copy_tree(env.catalog(), copy.catalog());
    snapshot(&copy)
}

/// The `v1` tool file of the fixture catalog's tool `slug`.
fn tool_file(env: &TestEnv, slug: &str) -> PathBuf {
    let bundles = env.catalog().join("bundles");
    std::fs::read_dir(&bundles)
        .unwrap()
        .flatten()
        .map(|bundle| bundle.path().join("tools").join(slug).join("v1/tool.json"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no tool {slug}@v1 in the fixture catalog"))
}

/// Set a tool file's description in place (same inode, as many editors write).
fn describe_in_place(path: &Path, description: &str) {
    let mut doc = read_json(path);
    doc["description"] = description.into();
    write_file(path, &serde_json::to_string_pretty(&doc).unwrap());
}

#[test]
fn a_watched_catalog_checks_only_what_changed() {
    let env = TestEnv::fixture();
    let pid = start(&env);
    let _stop = Stop(&env);

    // The first check under a watcher still walks (the index has no token yet); the next one
    // compares nothing.
    let first = status(&env);
    assert!(first.last_sync.watcher);
    assert!(first.last_sync.checked > 20, "{:?}", first.last_sync);
    let quiet = status(&env);
    assert!(quiet.last_sync.watcher);
    assert_eq!(quiet.last_sync.checked, 0, "{:?}", quiet.last_sync);
    let watcher = quiet.watcher.expect("index status shows the watcher");
    assert_eq!(watcher.pid, pid);
    assert!(
        watcher.folders > 20,
        "bundles/, bundles, tools/, slugs and versions"
    );

    // A hand edit: one file compared, one read, and the search finds it.
    describe_in_place(
        &tool_file(&env, "forecast"),
        "Forecast for zanzibar weather",
    );
    assert_eq!(found(&env, "zanzibar"), ["weather/forecast@v1"]);
    describe_in_place(
        &tool_file(&env, "forecast"),
        "Forecast for quixotic weather",
    );
    let edited = status(&env);
    assert!(edited.last_sync.watcher);
    assert_eq!(
        (edited.last_sync.checked, edited.last_sync.read),
        (1, 1),
        "{:?}",
        edited.last_sync
    );
    assert!(edited.watcher.unwrap().events > watcher.events);
    assert_eq!(found(&env, "quixotic"), ["weather/forecast@v1"]);
    assert!(found(&env, "zanzibar").is_empty());
    assert_eq!(snapshot(&env), truth(&env));
}

/// A hand change, and what it is.
type Change<'a> = (&'static str, Box<dyn Fn() + 'a>);

#[test]
fn every_kind_of_hand_change_is_seen_through_the_watcher() {
    let env = TestEnv::fixture();
    start(&env);
    let _stop = Stop(&env);
    env.run(&["tool", "list"]).success();
    let forecast = tool_file(&env, "forecast");
    let weather_bundle = forecast.ancestors().nth(4).unwrap().to_owned();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();

    let changes: Vec<Change> = vec![
        (
            "a tool file edited in place",
            Box::new(|| describe_in_place(&forecast, "edited in place")),
        ),
        (
            "a tool file replaced by a rename",
            Box::new(|| {
                let mut doc = read_json(&forecast);
                doc["description"] = "replaced by a rename".into();
                let temp = forecast.with_file_name(".tool.json.tmp");
                write_file(&temp, &serde_json::to_string(&doc).unwrap());
                std::fs::rename(&temp, &forecast).unwrap();
            }),
        ),
        (
            "a new version folder",
            Box::new(|| {
                let mut doc = read_json(&forecast);
                doc["version"] = "v9".into();
                doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
                doc["createdAt"] = "2030-01-01T00:00:00Z".into();
                let v9 = forecast.parent().unwrap().with_file_name("v9");
                std::fs::create_dir(&v9).unwrap();
                write_file(&v9.join("tool.json"), &serde_json::to_string(&doc).unwrap());
            }),
        ),
        (
            "a file broken by hand",
            Box::new(|| write_file(&tool_file(&env, "air-quality"), "{ \"slug\": ")),
        ),
        (
            "a slug folder removed",
            Box::new(|| {
                let slug = tool_file(&env, "weather-alerts");
                std::fs::remove_dir_all(slug.ancestors().nth(2).unwrap()).unwrap();
            }),
        ),
        (
            "bundle.json edited (the bundle disabled)",
            Box::new(|| {
                let path = weather_bundle.join("bundle.json");
                let mut doc = read_json(&path);
                doc["isEnabled"] = false.into();
                write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());
            }),
        ),
        (
            "a bundle moved out of the catalog",
            Box::new(|| std::fs::rename(&weather_bundle, outside.join("b")).unwrap()),
        ),
        (
            "a bundle moved back in",
            Box::new(|| std::fs::rename(outside.join("b"), &weather_bundle).unwrap()),
        ),
        (
            "a file edited in a folder that was moved in",
            Box::new(|| describe_in_place(&forecast, "edited after the move")),
        ),
        (
            "a version folder renamed",
            Box::new(|| {
                let v9 = forecast.parent().unwrap().with_file_name("v9");
                std::fs::rename(&v9, v9.with_file_name("v10")).unwrap();
            }),
        ),
        (
            "allowedHosts changed in toolctl.json",
            Box::new(|| env.edit_config(|c| c["allowedHosts"] = serde_json::json!([]))),
        ),
    ];
    for (what, change) in changes {
        change();
        let seen = snapshot(&env);
        assert!(
            status(&env).last_sync.watcher,
            "{what}: the watcher answered"
        );
        assert_eq!(seen, truth(&env), "{what}");
    }
}

#[test]
fn a_change_made_just_before_a_command_is_never_missed() {
    let env = TestEnv::fixture();
    // Behind on its events by more than a command takes: only the cookie keeps answers right.
    start_lagging(&env, 150);
    let _stop = Stop(&env);
    let forecast = tool_file(&env, "forecast");
    let slug_dir = forecast.ancestors().nth(2).unwrap().to_owned();
    for round in 0..6 {
        // An edit, then at once a search for it.
        let word = format!("zq{round}word");
        describe_in_place(&forecast, &format!("forecast {word}"));
        assert_eq!(found(&env, &word), ["weather/forecast@v1"], "round {round}");

        // A new version folder written at once, then edited in place: the watch on the new
        // folder must be there before the command after the first write answers.
        let version = format!("v{}", round + 10);
        let mut doc = read_json(&forecast);
        doc["version"] = version.clone().into();
        doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
        let file = slug_dir.join(&version).join("tool.json");
        std::fs::create_dir(file.parent().unwrap()).unwrap();
        write_file(&file, &serde_json::to_string(&doc).unwrap());
        let reference = format!("weather/forecast@{version}");
        assert!(env.refs(&[]).contains(&reference), "round {round}");
        let word = format!("zq{round}new");
        describe_in_place(&file, &format!("forecast {word}"));
        assert_eq!(found(&env, &word), [reference], "round {round}");
    }
}

#[test]
fn commands_stay_right_when_the_watcher_dies() {
    let env = TestEnv::fixture();
    let pid = start(&env);
    let _stop = Stop(&env);
    env.run(&["tool", "list"]).success();
    let epoch = status(&env).watcher.unwrap().epoch;
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(eventually(|| !alive(pid)));

    // Its socket is left behind; nobody answers on it: the check walks.
    describe_in_place(
        &tool_file(&env, "forecast"),
        "after the watcher died xylophone",
    );
    assert_eq!(found(&env, "xylophone"), ["weather/forecast@v1"]);
    let check = status(&env);
    assert!(!check.last_sync.watcher);
    assert!(check.watcher.is_none());

    // A new one starts in its place, in a new epoch: the first check walks again.
    let again = start(&env);
    assert_ne!(again, pid);
    let fresh = status(&env);
    assert_ne!(fresh.watcher.unwrap().epoch, epoch);
    assert!(fresh.last_sync.checked > 20, "{:?}", fresh.last_sync);
    describe_in_place(&tool_file(&env, "forecast"), "with the new watcher marimba");
    assert_eq!(found(&env, "marimba"), ["weather/forecast@v1"]);
    assert_eq!(snapshot(&env), truth(&env));
}

#[test]
fn one_watcher_per_catalog_and_stop_stops_it() {
    let env = TestEnv::fixture();
    let pid = start(&env);
    // --detach again: the same watcher.
    assert_eq!(start(&env), pid);
    // A second one in the foreground is refused.
    env.run(&["index", "watch"])
        .failure(3)
        .stderr_has("another watcher already watches");

    env.run(&["index", "watch", "--stop"])
        .success()
        .stdout_has("Stopped the watcher");
    assert!(eventually(|| !alive(pid)));
    env.run(&["index", "watch", "--stop"])
        .success()
        .stdout_has("No watcher was running");
    assert!(status(&env).watcher.is_none());
}

#[test]
fn the_watcher_exits_when_its_catalog_is_deleted() {
    let env = TestEnv::fixture();
    let pid = start(&env);
    std::fs::remove_dir_all(env.catalog()).unwrap();
    assert!(
        eventually(|| !alive(pid)),
        "the watcher outlived its catalog"
    );
}

#[test]
fn a_command_starts_a_watcher_when_the_mode_says_so() {
    let env = TestEnv::fixture();
    let _stop = Stop(&env);
    // auto (the tests' catalogs are far below the size that starts one) and never: none.
    for mode in ["auto", "never"] {
        let mut search = env.command(&["search", "weather"]);
        search.env("TOOLCTL_WATCH", mode);
        assert!(search.status().unwrap().success());
        std::thread::sleep(Duration::from_millis(300));
        assert!(status(&env).watcher.is_none(), "{mode}");
    }

    // index.watch in toolctl.json, overridden by $TOOLCTL_WATCH.
    env.edit_config(|c| c["index"] = serde_json::json!({ "watch": "always" }));
    env.run(&["search", "weather"]).success();
    std::thread::sleep(Duration::from_millis(300));
    assert!(status(&env).watcher.is_none(), "$TOOLCTL_WATCH=never wins");

    let mut search = env.command(&["search", "weather"]);
    search.env_remove("TOOLCTL_WATCH");
    assert!(search.status().unwrap().success());
    assert!(eventually(|| status(&env).watcher.is_some()));
    env.run(&["search", "weather"]).success();
    assert!(status(&env).last_sync.watcher);
}

#[test]
fn a_bad_watch_mode_is_refused() {
    let env = TestEnv::fixture();
    let mut search = env.command(&["--json", "search", "weather"]);
    search.env("TOOLCTL_WATCH", "sometimes");
    let run = crate::common::Run::of(search, None);
    run.failure(3)
        .stdout_has("$TOOLCTL_WATCH")
        .stdout_has("auto, always or never");

    env.edit_config(|c| c["index"] = serde_json::json!({ "watch": "sometimes" }));
    env.run(&["search", "weather"])
        .failure(3)
        .stderr_has("toolctl.json")
        .stderr_has("/index/watch");
    let report = env.run(&["--json", "validate"]);
    report.failure(3);
    let findings: Value = report.json();
    assert!(findings.to_string().contains("/index/watch"), "{findings}");
}

#[test]
fn the_watcher_exits_after_index_watch_idle_without_a_command() {
    let env = TestEnv::fixture();
    let _stop = Stop(&env);
    // Idle for 3 s: room for a slow command on a busy machine between two questions.
    env.edit_config(|c| c["index"] = serde_json::json!({ "watchIdle": "3s" }));
    let pid = start(&env);
    // Each command asks the watcher what changed, so a watcher in use stays.
    let asking = Instant::now();
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(500));
        env.run(&["search", "weather"]).success();
    }
    assert!(
        asking.elapsed() > Duration::from_secs(4),
        "longer than its idle time"
    );
    assert!(alive(pid), "a watcher asked every half second exited");
    assert!(status(&env).last_sync.watcher);
    // Then three seconds without a question.
    let idle = Instant::now();
    while alive(pid) && idle.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the idle watcher stays");
    assert!(
        idle.elapsed() >= Duration::from_secs(2),
        "it left before its idle time"
    );

    env.edit_config(|c| c["index"] = serde_json::json!({ "watchIdle": "soon" }));
    env.run(&["index", "watch", "--detach"])
        .failure(3)
        .stderr_has("/index/watchIdle")
        .stderr_has("not a duration");
}

#[test]
fn a_watcher_that_cannot_start_says_why_and_is_not_retried_at_once() {
    let env = TestEnv::fixture();
    let _stop = Stop(&env);
    // A folder where the socket goes: the watcher cannot listen.
    let socket = env.catalog().join(".toolctl/watch/sock");
    std::fs::create_dir_all(&socket).unwrap();
    env.run(&["index", "watch", "--detach"])
        .failure(3)
        .stderr_has("cannot listen on")
        .stderr_has(socket.to_str().unwrap());
    let failed = env.catalog().join(".toolctl/watch/failed");
    assert!(
        std::fs::read_to_string(&failed)
            .unwrap()
            .contains("cannot listen on")
    );

    // Commands do not start one again right away, even when always asked to.
    std::fs::remove_dir(&socket).unwrap();
    let mut search = env.command(&["search", "weather"]);
    search.env("TOOLCTL_WATCH", "always");
    assert!(search.status().unwrap().success());
    std::thread::sleep(Duration::from_millis(300));
    assert!(status(&env).watcher.is_none());

    // By hand it starts, and clears the failure.
    start(&env);
    assert!(!failed.exists());
}

#[test]
fn auto_mode_starts_a_watcher_on_a_big_catalog_only_at_a_terminal_and_not_in_ci() {
    let env = TestEnv::fixture();
    let _stop = Stop(&env);
    // 1,000 tools written by hand: their check compares over 2,000 entries (a tool file and a
    // slug folder each), the size from which auto mode starts a watcher.
    let bundle_id = env.bundle("big");
    let template = read_json(&tool_file(&env, "current-time"));
    for i in 0..1000 {
        let mut doc = template.clone();
        doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
        doc["bundleID"] = bundle_id.clone().into();
        doc["slug"] = format!("tool-{i}").into();
        doc["description"] = format!("generated tool zq{i}x").into();
        let path = env.tool_file(&bundle_id, &format!("tool-{i}"), "v1");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        write_file(&path, &doc.to_string());
    }
    // At a terminal: run under `script`, which gives the command a pseudo-terminal for stdin
    // and stderr, as a person's shell would.
    let run = |ci: bool, terminal: bool, words: &[&str]| -> String {
        let line = format!(
            "{} --catalog {} {}",
            crate::common::bin().display(),
            env.catalog().display(),
            words.join(" ")
        );
        let mut search = if terminal {
            // The test environment, as every command has it.
            let base = env.bare_command();
            let mut cmd = std::process::Command::new("script");
            cmd.env_clear()
                .envs(
                    base.get_envs()
                        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
                )
                .current_dir(env.work())
                .args(["-qec", &line, "/dev/null"]);
            cmd
        } else {
            env.command(words)
        };
        search.env("TOOLCTL_WATCH", "auto");
        if ci {
            search.env("CI", "true");
        }
        let out = search.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let auto = |ci: bool, terminal: bool| run(ci, terminal, &["search", "generated"]);
    // `index rebuild` reads every file because it is asked to: it starts none, even at a
    // terminal.
    let said = run(false, true, &["index", "rebuild"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(status(&env).watcher.is_none(), "{said}");
    assert!(!said.contains("Started an index watcher"), "{said}");
    // In CI (even at a terminal) and from a script (no terminal): none.
    for (ci, terminal) in [(true, true), (false, false)] {
        let said = auto(ci, terminal);
        std::thread::sleep(Duration::from_millis(300));
        let walked = status(&env);
        assert!(
            walked.watcher.is_none(),
            "no watcher (CI {ci}, terminal {terminal})"
        );
        assert!(walked.last_sync.checked > 2000, "{:?}", walked.last_sync);
        assert!(!said.contains("watcher"), "{said}");
    }

    // A person at a terminal: one starts, and the command says so, with how to stop it.
    let said = auto(false, true);
    assert!(said.contains("Started an index watcher"), "{said}");
    assert!(said.contains("TOOLCTL_WATCH=never"), "{said}");
    assert!(eventually(|| status(&env).watcher.is_some()));
    assert_eq!(found(&env, "zq999x"), ["big/tool-999@v1"]);
    assert!(status(&env).last_sync.watcher);

    // Regression: the stop command was printed without the --catalog the search was given,
    // and run as printed it stopped nothing. Run it as printed, from another folder.
    let stop = said
        .split("Stop it: ")
        .nth(1)
        .and_then(|rest| rest.split(". Turn this off").next())
        .unwrap_or_else(|| panic!("no stop command: {said}"));
    let words: Vec<&str> = stop.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"toolctl"), "{stop}");
    assert!(stop.contains("--catalog"), "{stop}");
    let mut cmd = env.bare_command();
    cmd.args(&words[1..]).current_dir(env.root());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{stop}: {out:?}");
    assert!(
        eventually(|| status(&env).watcher.is_none()),
        "`{stop}` left the watcher running"
    );
}

/// README "Never a wrong answer": more than 1,000 scattered changes (which the watcher does not
/// list path by path: the usual full check), and a bundle whose folder is a symlink, edited
/// through its real path, still answer as a full check of the files does.
#[test]
fn many_scattered_changes_and_a_symlinked_bundle_never_give_a_wrong_answer() {
    let env = TestEnv::fixture();
    let bundle_id = env.bundle("big");
    let template = read_json(&tool_file(&env, "current-time"));
    let count = 1100;
    for i in 0..count {
        let mut doc = template.clone();
        doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
        doc["bundleID"] = bundle_id.clone().into();
        doc["slug"] = format!("tool-{i}").into();
        doc["description"] = format!("generated tool {i}").into();
        write_file(
            &env.tool_file(&bundle_id, &format!("tool-{i}"), "v1"),
            &doc.to_string(),
        );
    }
    // A bundle kept elsewhere in the catalog, linked in under bundles/.
    let linked_id = env.bundle("linked");
    let real = env.catalog().join("shared").join(&linked_id);
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::rename(env.bundle_dir(&linked_id), &real).unwrap();
    let relative = Path::new("../shared").join(&linked_id);
    std::os::unix::fs::symlink(relative, env.bundle_dir(&linked_id)).unwrap();
    env.put_tool("linked", &crate::common::tool_doc("via-link", "v1"));

    start(&env);
    let _stop = Stop(&env);
    env.run(&["tool", "list"]).success();

    // 1,050 tool files edited in place, then at once a search.
    for i in (0..count).filter(|i| i % 22 != 0) {
        let path = env.tool_file(&bundle_id, &format!("tool-{i}"), "v1");
        describe_in_place(&path, &format!("edited zebrafinch {i}"));
    }
    let hits = env.json(&["search", "zebrafinch", "--all"]);
    assert_eq!(hits["items"].as_array().unwrap().len(), 1050, "{hits}");

    // The linked bundle's tool edited through the real path, and one added there.
    let via = real.join("tools/via-link/v1/tool.json");
    describe_in_place(&via, "reached through the real path kingfisher");
    assert_eq!(found(&env, "kingfisher"), ["linked/via-link@v1"]);
    let mut added = read_json(&via);
    added["slug"] = "added-there".into();
    added["toolID"] = uuid::Uuid::now_v7().to_string().into();
    added["description"] = "added beside the link heron".into();
    write_file(
        &real.join("tools/added-there/v1/tool.json"),
        &added.to_string(),
    );
    assert_eq!(found(&env, "heron"), ["linked/added-there@v1"]);
    assert_eq!(snapshot(&env), truth(&env));
}

/// README "Never a wrong answer": "no answer within 2 s … means the usual full check". A
/// watcher that is alive but answers nothing (stopped with SIGSTOP) costs a command about 2 s,
/// never a wrong answer.
#[test]
fn a_watcher_that_does_not_answer_costs_2_seconds_never_a_wrong_answer() {
    let env = TestEnv::fixture();
    let pid = start(&env);
    let _stop = Stop(&env);
    env.run(&["tool", "list"]).success();
    let _paused = Paused::new(pid);
    describe_in_place(&tool_file(&env, "forecast"), "while it slept ocelot");
    let started = Instant::now();
    assert_eq!(found(&env, "ocelot"), ["weather/forecast@v1"]);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1_900) && took < Duration::from_secs(10),
        "took {took:?}"
    );
    assert!(alive(pid));
}

/// README "Never a wrong answer": a queue overflow means the usual full check. While the
/// watcher is stopped (SIGSTOP), 18,000 files (hidden, so no reader lists them) created in a
/// watched folder overflow the kernel's event queue (16,384 by default); let go, the watcher
/// starts a new epoch, and the edit made among them is found.
#[test]
fn an_event_queue_overflow_starts_a_new_epoch_and_never_gives_a_wrong_answer() {
    let queue: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    let env = TestEnv::fixture();
    let pid = start(&env);
    let _stop = Stop(&env);
    env.run(&["tool", "list"]).success();
    let epoch = status(&env).watcher.unwrap().epoch;
    let paused = Paused::new(pid);
    let forecast = tool_file(&env, "forecast");
    let folder = forecast.parent().unwrap().to_owned();
    // Two events each (create, close after write): past the queue's length.
    for i in 0..queue / 2 + 1_000 {
        std::fs::File::create(folder.join(format!(".junk-{i}"))).unwrap();
    }
    describe_in_place(&forecast, "edited in the flood pangolin");
    drop(paused);
    assert_eq!(found(&env, "pangolin"), ["weather/forecast@v1"]);
    assert!(
        eventually(|| status(&env).watcher.is_some_and(|w| w.epoch != epoch)),
        "the overflow did not start a new epoch"
    );
    assert_eq!(snapshot(&env), truth(&env));
}

/// The watcher's cookie files are made anew: a symlink a clone put in their place
/// (`.toolctl/watch/cookie-0` → a file outside) is removed, never followed, so the file it
/// points at is left as it was (never truncated), and commands still
/// answer right.
#[test]
fn the_watchers_cookies_never_follow_a_symlink() {
    let env = TestEnv::fixture();
    env.run(&["search", "weather"]).success();
    let watch = env.catalog().join(".toolctl").join("watch");
    std::fs::create_dir_all(&watch).unwrap();
    let victims: Vec<PathBuf> = (0..4)
        .map(|n| {
            let victim = env.work().join(format!("victim-{n}"));
            std::fs::write(&victim, "keep these bytes").unwrap();
            std::os::unix::fs::symlink(&victim, watch.join(format!("cookie-{n}"))).unwrap();
            victim
        })
        .collect();
    let pid = start(&env);
    for _ in 0..3 {
        assert_eq!(snapshot(&env), truth(&env));
    }
    env.run(&["index", "watch", "--stop"]).success();
    assert!(eventually(|| !alive(pid)));
    for victim in &victims {
        assert_eq!(
            std::fs::read_to_string(victim).unwrap(),
            "keep these bytes",
            "{victim:?}"
        );
    }
}

/// A `.toolctl/watch` that is a symlink out of the catalog: the watcher refuses to write
/// there, so it cannot leave its reason there either, and `--detach`, waiting for one, would
/// say only "the watcher stopped before it answered". So `--detach` fails as the foreground
/// does, same code and words, before it starts one; a command in `always` mode starts none and says
/// nothing of one; nothing is written outside.
#[test]
fn a_watch_folder_linked_out_of_the_catalog_is_named_and_never_started() {
    let env = TestEnv::fixture();
    let _stop = Stop(&env);
    env.run(&["search", "weather"]).success();
    let away = env.work().join("outside_watch");
    std::fs::create_dir_all(&away).unwrap();
    std::os::unix::fs::symlink(&away, env.catalog().join(".toolctl/watch")).unwrap();

    let foreground = env.run(&["--json", "index", "watch"]);
    foreground
        .failure(3)
        .stdout_has("'.toolctl/watch' in the catalog is a symlink to ");
    let detached = env.run(&["--json", "index", "watch", "--detach"]);
    detached.failure(3);
    assert_eq!(detached.stdout, foreground.stdout, "{detached}");
    env.run(&["index", "watch", "--detach"])
        .failure(3)
        .stderr_has("'.toolctl/watch' in the catalog is a symlink to ")
        .stderr_has("outside it");

    let mut search = env.command(&["search", "weather"]);
    search.env("TOOLCTL_WATCH", "always");
    let run = crate::common::Run::of(search, None);
    run.success();
    assert!(!run.stderr.contains("Started an index watcher"), "{run}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(status(&env).watcher.is_none());
    assert_eq!(std::fs::read_dir(&away).unwrap().count(), 0);
}

/// `--detach` gives the reason of the watcher it started, never an older one: a lock it cannot
/// take (a folder in its place) is left in the failure file like any later failure, and a
/// watcher that stops without a reason (another one holds the lock, here one that does not
/// answer) is not given the reason an earlier watcher left.
#[test]
fn detach_gives_the_reason_of_the_watcher_it_started() {
    let env = TestEnv::fixture();
    let _stop = Stop(&env);
    env.run(&["search", "weather"]).success();
    let watch = env.catalog().join(".toolctl/watch");
    let failed = watch.join("failed");
    let lock = watch.join("lock");
    std::fs::create_dir_all(&lock).unwrap();
    std::fs::write(&failed, "an older reason").unwrap();
    let run = env.run(&["index", "watch", "--detach"]);
    run.failure(3)
        .stderr_has(lock.to_str().unwrap())
        // And what is wrong there, with the fix.
        .stderr_has("a folder is where toolctl keeps this lock file; remove it");
    assert!(!run.stderr.contains("an older reason"), "{run}");
    // A file where the watch folder goes: the folder cannot be made, and why.
    std::fs::remove_dir_all(&watch).unwrap();
    std::fs::write(&watch, "").unwrap();
    env.run(&["index", "watch", "--detach"])
        .failure(3)
        .stderr_has("cannot create folder")
        .stderr_has("File exists");
    std::fs::remove_file(&watch).unwrap();

    let pid = start(&env);
    let _paused = Paused::new(pid);
    std::fs::write(&failed, "an older reason").unwrap();
    let run = env.run(&["index", "watch", "--detach"]);
    run.failure(3)
        .stderr_has("the watcher stopped before it answered");
    assert!(!run.stderr.contains("an older reason"), "{run}");
}
