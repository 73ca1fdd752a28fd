//! Real processes racing on one catalog: `<slug, version>` uniqueness is global,
//! no writer loses another's write, and a lock that cannot be had in time is `LOCK_TIMEOUT`.

use crate::common::{Run, TestEnv, find_prefixed, read_json, tool_doc, tool_doc_with};
use serde_json::json;
use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How racing writers are lined up at the start.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// The test holds the catalog lock while they start, so they pile up on it, then lets go.
    Queued,
    /// Each reads its document from stdin; the test writes all the documents at once once
    /// every process has had time to start and block on its read. This lines them up without
    /// relying on the lock under test.
    Gate,
}

/// Run `toolctl --json ARGS` (which reads a document from stdin, `-`) once per document, all
/// at once.
fn race(env: &TestEnv, args: &[&str], docs: &[serde_json::Value], start: Start) -> Vec<Run> {
    let mut args_json = vec!["--json"];
    args_json.extend_from_slice(args);
    let lock = matches!(start, Start::Queued).then(|| env.hold_lock());
    let mut children: Vec<Child> = docs
        .iter()
        .map(|_| {
            env.command(&args_json)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    if matches!(start, Start::Gate) {
        // The processes must be past start-up and waiting on stdin for the gate to line them
        // up; were one late, the race would only be milder, never a false failure.
        std::thread::sleep(Duration::from_millis(200));
    }
    let texts: Vec<Vec<u8>> = docs.iter().map(|d| d.to_string().into_bytes()).collect();
    let stdins: Vec<_> = children
        .iter_mut()
        .map(|c| c.stdin.take().unwrap())
        .collect();
    for (mut stdin, text) in stdins.into_iter().zip(&texts) {
        stdin.write_all(text).unwrap();
        // Dropped here: EOF releases the process.
    }
    drop(lock);
    children
        .into_iter()
        .map(|child| Run::from_output("racing writer", child.wait_with_output().unwrap()))
        .collect()
}

#[test]
fn racing_puts_of_one_version_give_one_winner() {
    // The gated round twice: without the queue, how the racers interleave varies.
    for start in [Start::Queued, Start::Gate, Start::Gate] {
        one_winner(start);
    }
}

fn one_winner(start: Start) {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    // Realistic documents that take a writer a moment: each carries its own toolID (so the
    // catalog is searched for it) and a sizeable payload. Without a lock that moment is when
    // a second writer slips in.
    let payload = "x".repeat(256 * 1024);
    let docs: Vec<_> = (0..10)
        .map(|i| {
            tool_doc_with(
                "contested",
                "v1",
                json!({
                    "toolID": uuid::Uuid::now_v7().to_string(),
                    "description": format!("written by racer {i}"),
                    "x-racer": i,
                    "x-payload": payload,
                }),
            )
        })
        .collect();
    let runs = race(&env, &["tool", "put", "--bundle", "w", "-"], &docs, start);

    let winners: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].status == Some(0))
        .collect();
    assert_eq!(winners.len(), 1, "exactly one success: {runs:#?}");
    for (i, run) in runs.iter().enumerate() {
        if i != winners[0] {
            run.failure(5);
            assert_eq!(run.json()["error"]["code"], "CONFLICT", "{run}");
        }
    }
    let file = env.tool_file(&bundle_id, "contested", "v1");
    let stored = read_json(&file);
    let winner = winners[0];
    assert_eq!(stored["description"], format!("written by racer {winner}"));
    assert_eq!(stored["x-racer"], winner);
    assert_eq!(
        runs[winner].json()["document"],
        stored,
        "the file is the winner's"
    );
    assert!(find_prefixed(env.catalog(), ".toolctl-tmp").is_empty());
    assert_eq!(env.refs(&["--bundle", "w"]), ["w/contested@v1"]);
}

#[test]
fn racing_puts_of_different_tools_all_land() {
    for start in [Start::Queued, Start::Gate] {
        all_land(start);
    }
}

fn all_land(start: Start) {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let docs: Vec<_> = (0..8)
        .map(|i| tool_doc(&format!("t{i}"), "v1"))
        .chain((0..4).map(|i| tool_doc("shared", &format!("v{i}"))))
        .collect();
    let runs = race(&env, &["tool", "put", "--bundle", "w", "-"], &docs, start);
    for run in &runs {
        run.success();
    }
    let refs = env.refs(&["--bundle", "w"]);
    assert_eq!(refs.len(), 12, "{refs:?}");
    for i in 0..8 {
        let doc = read_json(&env.tool_file(&bundle_id, &format!("t{i}"), "v1"));
        assert_eq!(doc["slug"], format!("t{i}"));
    }
    // Every toolID is distinct.
    let mut ids: Vec<_> = env
        .tool_list(&["--bundle", "w"])
        .items
        .into_iter()
        .map(|t| t.tool_id)
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 12);
}

#[test]
fn racing_bundle_puts_keep_slugs_unique() {
    for start in [Start::Queued, Start::Gate] {
        let env = TestEnv::new();
        let docs: Vec<_> = (0..8)
            .map(|i| json!({ "slug": "same", "description": format!("racer {i}") }))
            .collect();
        let runs = race(&env, &["bundle", "put", "--file", "-"], &docs, start);
        let winners: Vec<_> = runs.iter().filter(|r| r.status == Some(0)).collect();
        assert_eq!(winners.len(), 1, "{start:?}: {runs:#?}");
        for run in &runs {
            if run.status != Some(0) {
                run.failure(5);
            }
        }
        let list = env.bundle_list(&[]);
        assert_eq!(list.items.len(), 2, "{start:?}: {:?}", list.items);
        assert_eq!(
            list.items[1].description,
            winners[0].json()["description"].as_str().unwrap()
        );
    }
}

#[test]
fn a_held_lock_times_out_with_exit_8() {
    let env = TestEnv::new();
    env.bundle("w");
    let input = env.input(&tool_doc("x", "v1"));
    let lock = env.hold_lock();

    let started = Instant::now();
    let run = env.run(&[
        "--lock-timeout",
        "200ms",
        "tool",
        "put",
        "--bundle",
        "w",
        &input,
    ]);
    let waited = started.elapsed();
    run.failure(8)
        .stderr_has("error: could not lock the catalog within 200 ms");
    assert!(
        waited >= Duration::from_millis(200),
        "gave up after {waited:?}"
    );
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");

    let err = env.json_error(
        &[
            "--lock-timeout",
            "200ms",
            "bundle",
            "put",
            "--slug",
            "other",
        ],
        8,
    );
    assert_eq!(err.error.code, "LOCK_TIMEOUT");
    assert!(err.error.hint.is_some());
    env.run(&["--lock-timeout", "0s", "tool", "disable", "builtin/now"])
        .failure(8);
    let before = env.config();
    env.run(&[
        "--lock-timeout",
        "0s",
        "config",
        "add",
        "allowedHosts",
        "a.example",
    ])
    .failure(8);
    assert_eq!(env.config(), before, "a config change waits for the lock");
    env.run(&[
        "--lock-timeout",
        "100ms",
        "bundle",
        "reap",
        "--older-than",
        "0s",
    ])
    .failure(8);

    // Readers take no lock.
    env.run(&["tool", "list"]).success();
    env.run(&["tool", "get", "builtin/now"]).success();

    // Nothing was written while locked out; once free, the same put works.
    assert!(env.refs(&["--bundle", "w"]).is_empty());
    drop(lock);
    env.run(&[
        "--lock-timeout",
        "200ms",
        "tool",
        "put",
        "--bundle",
        "w",
        &input,
    ])
    .success();
}

#[test]
fn a_writer_waits_for_the_lock_within_its_timeout() {
    let env = TestEnv::new();
    env.bundle("w");
    let input = env.input(&tool_doc("x", "v1"));
    let lock = env.hold_lock();
    let child = env
        .command(&[
            "--lock-timeout",
            "20s",
            "tool",
            "put",
            "--bundle",
            "w",
            &input,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(lock);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(env.refs(&["--bundle", "w"]), ["w/x@v1"]);
}

#[test]
fn bad_lock_timeout_is_a_usage_error() {
    let env = TestEnv::new();
    env.run(&["--lock-timeout", "soon", "tool", "list"])
        .failure(2)
        .stderr_has("soon");
}

#[test]
fn racing_builtin_toggles_lose_no_flag() {
    // Every built-in flag lives in the one toolctl.json: writers that each change a
    // different flag at once must all be in the file afterwards.
    let env = TestEnv::new();
    let lock = env.hold_lock();
    let children: Vec<Child> = [
        ("disable", "builtin/readfile"),
        ("disable", "builtin/file-search"),
        ("disable", "builtin/now"),
        ("enable", "builtin/exec"),
    ]
    .iter()
    .map(|(action, tool)| {
        env.command(&["tool", action, tool])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    })
    .collect();
    drop(lock);
    for child in children {
        assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    }
    let tools = &env.config()["builtin"]["tools"];
    assert_eq!(tools["readfile"]["isEnabled"], false);
    assert_eq!(tools["file-search"]["isEnabled"], false);
    assert_eq!(tools["now"]["isEnabled"], false);
    assert_eq!(tools["exec"]["isEnabled"], true);
    assert_eq!(env.refs(&[]), ["builtin/exec@v1"]);
}

#[test]
fn a_toggle_waiting_for_the_lock_acts_on_the_latest_flags() {
    // Writer B starts while writer A (played by the test, under the lock) turns builtin/now
    // off. When B gets the lock it must see A's write: its "enable" really enables, rather
    // than deciding from what toolctl.json said before it waited ("already enabled").
    let env = TestEnv::new();
    let lock = env.hold_lock();
    let child = env
        .command(&["tool", "enable", "builtin/now"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Give B time to start and queue on the lock (it never fails because of this pause; it
    // could at worst start so late that it reads A's write anyway).
    std::thread::sleep(Duration::from_millis(200));
    env.edit_config(|c| c["builtin"]["tools"]["now"] = json!({ "isEnabled": false }));
    drop(lock);
    let run = Run::from_output("tool enable builtin/now", child.wait_with_output().unwrap());
    run.success();
    assert_eq!(
        env.config()["builtin"]["tools"]["now"]["isEnabled"],
        true,
        "B's enable was lost\n{run}"
    );
    assert!(env.refs(&[]).contains(&"builtin/now@v1".to_owned()));
}
